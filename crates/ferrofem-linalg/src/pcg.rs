//! Preconditioned conjugate gradients with early termination (dahl2019 §3):
//! stop after `max_iterations` and/or when `‖b − A x‖ ≤ tol ‖b‖`; optionally
//! augmented by one recycled direction `d` (augmented/deflated CG, Saad,
//! Yeung, Erhel & Guyomarc'h 2000): `x` first takes the best multiple of
//! `d`, and each iterate minimizes the energy over `x₀ + span{d, p₁…pₖ}`,
//! its search directions `A`-conjugate to `d`.

use crate::vector::{axpy, dot, norm, xpby};
use crate::CsrMatrix;

/// `z ← P⁻¹ r` for a symmetric positive definite `P ≈ A`.
pub trait Preconditioner: Sync {
    /// Applies the preconditioner's inverse.
    fn apply(&self, r: &[f64], z: &mut [f64]);
}

/// `P = I`.
#[derive(Debug, Clone, Copy, Default)]
pub struct IdentityPreconditioner;

impl Preconditioner for IdentityPreconditioner {
    fn apply(&self, r: &[f64], z: &mut [f64]) {
        z.copy_from_slice(r);
    }
}

/// `P = diag(d)`, stored as `1/d` (mass or Jacobi preconditioner).
#[derive(Debug, Clone, Default)]
pub struct DiagonalPreconditioner {
    /// Inverse of the diagonal.
    pub inverse: Vec<f64>,
}

impl DiagonalPreconditioner {
    /// Sets the diagonal to `d` (entries must be positive); reuses storage.
    pub fn set(&mut self, d: impl ExactSizeIterator<Item = f64>) {
        self.inverse.clear();
        self.inverse.extend(d.map(|x| 1.0 / x));
    }
}

impl Preconditioner for DiagonalPreconditioner {
    fn apply(&self, r: &[f64], z: &mut [f64]) {
        use rayon::prelude::*;
        z.par_iter_mut().zip(r).zip(&self.inverse).for_each(|((z, r), d)| *z = r * d);
    }
}

/// When PCG stops.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct PcgSettings {
    /// Upper bound on iterations (`None`: until the tolerance is met, at most `n`·10).
    pub max_iterations: Option<usize>,
    /// Relative residual `‖b − A x‖ / ‖b‖` at which to stop (`None`: run all iterations).
    pub rel_tolerance: Option<f64>,
    /// With `max_iterations`: the solve stops there only once its relative
    /// residual is at most this, and goes on otherwise, to
    /// [`CEILING_ITERATIONS`] in all (a guard for an early termination
    /// that suits most steps but not all).
    #[serde(default)]
    pub residual_ceiling: Option<f64>,
}

/// Most iterations a solve takes past `max_iterations` to bring its
/// residual under [`PcgSettings::residual_ceiling`] (in all, not more).
pub const CEILING_ITERATIONS: usize = 20;

/// What one solve did.
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize)]
pub struct PcgSolve {
    /// Iterations performed.
    pub iterations: usize,
    /// Final `‖b − A x‖ / ‖b‖` (0 when `b = 0`).
    pub rel_residual: f64,
    /// Whether the tolerance was met (always false without a tolerance).
    pub converged: bool,
}

/// Errors a Krylov solve reports instead of returning garbage.
#[derive(Debug, Clone, Copy, PartialEq, thiserror::Error)]
pub enum KrylovError {
    /// `pᵀ A p ≤ 0`: the matrix is not positive definite along a search direction.
    #[error("CG breakdown at iteration {iteration}: pᵀAp = {curvature:e} (matrix not positive definite)")]
    NotPositiveDefinite {
        /// Iteration at which it happened.
        iteration: usize,
        /// The curvature found.
        curvature: f64,
    },
    /// A NaN or infinity appeared.
    #[error("CG produced a non-finite value at iteration {iteration}")]
    NonFinite {
        /// Iteration at which it happened.
        iteration: usize,
    },
}

/// PCG with its scratch vectors, reused across solves (no allocation once sized).
#[derive(Debug, Clone, Default)]
pub struct Pcg {
    r: Vec<f64>,
    z: Vec<f64>,
    p: Vec<f64>,
    ap: Vec<f64>,
    ad: Vec<f64>,
}

impl Pcg {
    /// Solves `A x = b` from the initial guess in `x` (Shewchuk 1994, B3).
    pub fn solve(
        &mut self,
        a: &CsrMatrix,
        b: &[f64],
        x: &mut [f64],
        precond: &dyn Preconditioner,
        settings: PcgSettings,
    ) -> Result<PcgSolve, KrylovError> {
        self.solve_augmented(a, b, x, precond, settings, None)
    }

    /// [`Self::solve`] augmented by `d`: `x` first moves by the multiple of
    /// `d` that minimizes `½ xᵀA x − bᵀx`, then every search direction is
    /// kept `A`-conjugate to `d` (Saad et al. 2000, deflated CG with one
    /// column), so the `k`-th iterate minimizes the energy over
    /// `x₀ + span{d, p₁…pₖ}`. One more product with `A` than [`Self::solve`];
    /// `d = None`, or a `d` with `dᵀA d ≤ 0` (zero), is plain PCG.
    pub fn solve_augmented(
        &mut self,
        a: &CsrMatrix,
        b: &[f64],
        x: &mut [f64],
        precond: &dyn Preconditioner,
        settings: PcgSettings,
        d: Option<&[f64]>,
    ) -> Result<PcgSolve, KrylovError> {
        let n = b.len();
        for v in [&mut self.r, &mut self.z, &mut self.p, &mut self.ap] {
            v.resize(n, 0.0);
        }
        let b_norm = norm(b);
        a.mul_vec(x, &mut self.r);
        self.r.iter_mut().zip(b).for_each(|(r, b)| *r = b - *r);
        let d = d.and_then(|d| self.take_recycled(a, d, x));
        let rel = |r: &[f64]| if b_norm > 0.0 { norm(r) / b_norm } else { norm(r) };
        let max_it = settings.max_iterations.unwrap_or(10 * n.max(1));
        // Past `max_it`, only while the residual is above the ceiling.
        let (ceiling, hard_it) = match settings.residual_ceiling {
            Some(c) if settings.max_iterations.is_some() => (c, max_it.max(CEILING_ITERATIONS)),
            _ => (f64::INFINITY, max_it),
        };
        let tol = settings.rel_tolerance.unwrap_or(0.0);
        let mut res = PcgSolve { iterations: 0, rel_residual: rel(&self.r), converged: false };
        if res.rel_residual <= tol && settings.rel_tolerance.is_some()
            || b_norm == 0.0 && res.rel_residual == 0.0
        {
            res.converged = settings.rel_tolerance.is_some();
            return Ok(res);
        }
        precond.apply(&self.r, &mut self.z);
        self.p.copy_from_slice(&self.z);
        self.conjugate_to(d);
        let mut rz = dot(&self.r, &self.z);
        while res.iterations < hard_it {
            res.iterations += 1;
            a.mul_vec(&self.p, &mut self.ap);
            let curvature = dot(&self.p, &self.ap);
            if !curvature.is_finite() || !rz.is_finite() {
                return Err(KrylovError::NonFinite { iteration: res.iterations });
            }
            if curvature <= 0.0 {
                return Err(KrylovError::NotPositiveDefinite { iteration: res.iterations, curvature });
            }
            let alpha = rz / curvature;
            axpy(alpha, &self.p, x);
            axpy(-alpha, &self.ap, &mut self.r);
            res.rel_residual = rel(&self.r);
            if settings.rel_tolerance.is_some() && res.rel_residual <= tol {
                res.converged = true;
                break;
            }
            if res.iterations == hard_it || res.iterations >= max_it && res.rel_residual <= ceiling {
                // Cut here (early termination): the next direction would
                // cost a preconditioner application and never be used.
                break;
            }
            precond.apply(&self.r, &mut self.z);
            let rz_new = dot(&self.r, &self.z);
            xpby(&self.z, rz_new / rz, &mut self.p);
            self.conjugate_to(d);
            rz = rz_new;
        }
        Ok(res)
    }

    /// Moves `x` by the energy-minimizing multiple of `d` and updates the
    /// residual; keeps `A d` and returns `(d, dᵀA d)`, or `None` when `d`
    /// has no positive curvature (zero, or of another length).
    fn take_recycled<'d>(&mut self, a: &CsrMatrix, d: &'d [f64], x: &mut [f64]) -> Option<(&'d [f64], f64)> {
        if d.len() != x.len() {
            return None;
        }
        self.ad.resize(d.len(), 0.0);
        a.mul_vec(d, &mut self.ad);
        let curvature = dot(d, &self.ad);
        (curvature > 0.0 && curvature.is_finite()).then(|| {
            let c = dot(d, &self.r) / curvature;
            axpy(c, d, x);
            axpy(-c, &self.ad, &mut self.r);
            (d, curvature)
        })
    }

    /// `p ← p − (dᵀA z / dᵀA d) d`: the direction made `A`-conjugate to
    /// `d` (`p = z + β p_prev` with `p_prev` already conjugate).
    fn conjugate_to(&mut self, d: Option<(&[f64], f64)>) {
        if let Some((d, curvature)) = d {
            axpy(-dot(&self.ad, &self.z) / curvature, d, &mut self.p);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::CsrPattern;

    /// 1-D Laplacian plus a shift: SPD with known structure.
    fn laplacian(n: usize, shift: f64) -> CsrMatrix {
        let rows = (0..n as u32).map(|i| vec![i.saturating_sub(1), i, (i + 1).min(n as u32 - 1)]).collect();
        let mut a = CsrMatrix::zeros(CsrPattern::from_rows(n, rows));
        for i in 0..n {
            for j in [i.saturating_sub(1), i, (i + 1).min(n - 1)] {
                let k = a.pattern.find(i, j).unwrap();
                a.values[k] = if i == j { 2.0 + shift } else { -1.0 };
            }
        }
        a
    }

    /// [`laplacian`] with a known solution `xᵢ = x(i)` and its `b = A x`.
    fn manufactured(n: usize, shift: f64, x: impl Fn(f64) -> f64) -> (CsrMatrix, Vec<f64>, Vec<f64>) {
        let a = laplacian(n, shift);
        let x_true: Vec<f64> = (0..n).map(|i| x(i as f64)).collect();
        let mut b = vec![0.0; n];
        a.mul_vec(&x_true, &mut b);
        (a, x_true, b)
    }

    #[test]
    fn converges_to_dense_solution() {
        let n = 200;
        let (a, x_true, b) = manufactured(n, 0.01, |i| (i * 0.1).cos());
        let mut x = vec![0.0; n];
        let mut jac = DiagonalPreconditioner::default();
        jac.set(a.diagonal().into_iter());
        let s = PcgSettings { max_iterations: None, rel_tolerance: Some(1e-12), residual_ceiling: None };
        let out = Pcg::default().solve(&a, &b, &mut x, &jac, s).unwrap();
        assert!(out.converged && out.iterations <= n);
        let err = x.iter().zip(&x_true).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
        assert!(err < 1e-9, "err {err}");
    }

    /// The identity, counting its applications.
    #[derive(Default)]
    struct Counting(std::sync::atomic::AtomicUsize);

    impl Preconditioner for Counting {
        fn apply(&self, r: &[f64], z: &mut [f64]) {
            self.0.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            z.copy_from_slice(r);
        }
    }

    #[test]
    fn early_termination_stops_at_max_iterations() {
        let a = laplacian(100, 0.0);
        let b = vec![1.0; 100];
        let (mut x, mut y) = (vec![0.0; 100], vec![0.0; 100]);
        let s = PcgSettings { max_iterations: Some(3), rel_tolerance: None, residual_ceiling: None };
        let counting = Counting::default();
        let out = Pcg::default().solve(&a, &b, &mut x, &counting, s).unwrap();
        assert_eq!(out.iterations, 3);
        assert!(!out.converged && out.rel_residual.is_finite());
        // k iterations apply the preconditioner k times: none is wasted on
        // a direction the cut never takes.
        assert_eq!(counting.0.into_inner(), 3);
        // And the iterate is the same as with an uncut solve's first three.
        let s4 = PcgSettings { max_iterations: Some(4), rel_tolerance: None, residual_ceiling: None };
        let mut x4 = vec![0.0; 100];
        Pcg::default().solve(&a, &b, &mut x4, &IdentityPreconditioner, s4).unwrap();
        Pcg::default().solve(&a, &b, &mut y, &IdentityPreconditioner, s).unwrap();
        assert_eq!(x, y);
        assert_ne!(x, x4);
    }

    /// With a residual ceiling, a solve cut at one iteration goes on until
    /// its residual is under the ceiling (the same iterate as a plain solve
    /// cut there), and stops at [`CEILING_ITERATIONS`] when it never is.
    #[test]
    fn a_residual_ceiling_extends_the_cut_until_it_is_met() {
        let a = laplacian(200, 0.0);
        let b: Vec<f64> = (0..200).map(|i| (i as f64 * 0.3).sin()).collect();
        let plain = |k: usize| {
            let mut x = vec![0.0; 200];
            let s = PcgSettings { max_iterations: Some(k), rel_tolerance: None, residual_ceiling: None };
            let out = Pcg::default().solve(&a, &b, &mut x, &IdentityPreconditioner, s).unwrap();
            (out.rel_residual, x)
        };
        let ceiling = 0.5 * plain(4).0 + 0.5 * plain(5).0;
        let first_under = (1..=20).find(|&k| plain(k).0 <= ceiling).unwrap();
        assert!(first_under > 1, "the ceiling is not met at the cut");
        let mut x = vec![0.0; 200];
        let s = PcgSettings { max_iterations: Some(1), rel_tolerance: None, residual_ceiling: Some(ceiling) };
        let out = Pcg::default().solve(&a, &b, &mut x, &IdentityPreconditioner, s).unwrap();
        assert_eq!(out.iterations, first_under);
        assert_eq!(x, plain(first_under).1);
        // Unreachable in 20 iterations (200 unknowns, no preconditioner).
        let never = PcgSettings { residual_ceiling: Some(1e-12), ..s };
        let out = Pcg::default().solve(&a, &b, &mut vec![0.0; 200], &IdentityPreconditioner, never).unwrap();
        assert_eq!((out.iterations, out.converged), (CEILING_ITERATIONS, false));
        assert!(out.rel_residual > 1e-12);
    }

    /// One augmented iteration is the Galerkin minimizer of the energy over
    /// `x₀ + span{d, P⁻¹ r₁}` (a dense 2×2 solve), `r₁` the residual once
    /// `x₀` took the best multiple of `d`, and no higher in energy than
    /// that multiple alone.
    #[test]
    fn augmented_iteration_is_the_galerkin_minimizer() {
        let n = 60;
        let a = laplacian(n, 0.05);
        let b: Vec<f64> = (0..n).map(|i| (i as f64 * 0.37).sin() + 0.2).collect();
        let x0: Vec<f64> = (0..n).map(|i| 0.1 * (i as f64 * 0.11).cos()).collect();
        let d: Vec<f64> = (0..n).map(|i| (i as f64 * 0.05).sin()).collect();
        let mut jac = DiagonalPreconditioner::default();
        jac.set(a.diagonal().into_iter().map(|v| v * 1.3));
        let one = PcgSettings { max_iterations: Some(1), rel_tolerance: None, residual_ceiling: None };
        let mut x = x0.clone();
        Pcg::default().solve_augmented(&a, &b, &mut x, &jac, one, Some(&d)).unwrap();
        // The reference: r₀, r₁ = r₀ − c A d, z = P⁻¹ r₁, and the 2×2 normal
        // equations of the energy over x₀ + span{z, d}.
        let mut r = vec![0.0; n];
        a.mul_vec(&x0, &mut r);
        r.iter_mut().zip(&b).for_each(|(r, b)| *r = b - *r);
        let (mut az, mut ad) = (vec![0.0; n], vec![0.0; n]);
        a.mul_vec(&d, &mut ad);
        let r1: Vec<f64> = {
            let c = dot(&d, &r) / dot(&d, &ad);
            r.iter().zip(&ad).map(|(r, ad)| r - c * ad).collect()
        };
        let mut z = vec![0.0; n];
        jac.apply(&r1, &mut z);
        a.mul_vec(&z, &mut az);
        let (g11, g12, g22) = (dot(&z, &az), dot(&z, &ad), dot(&d, &ad));
        let (f1, f2) = (dot(&z, &r), dot(&d, &r));
        let det = g11 * g22 - g12 * g12;
        let (cz, cd) = ((f1 * g22 - f2 * g12) / det, (g11 * f2 - g12 * f1) / det);
        let reference: Vec<f64> = (0..n).map(|i| x0[i] + cz * z[i] + cd * d[i]).collect();
        let err = x.iter().zip(&reference).map(|(p, q)| (p - q).abs()).fold(0.0, f64::max);
        assert!(err < 1e-12, "augmented vs Galerkin: {err:e}");
        let energy = |x: &[f64]| {
            let mut ax = vec![0.0; n];
            a.mul_vec(x, &mut ax);
            0.5 * dot(x, &ax) - dot(&b, x)
        };
        let c = dot(&d, &r) / dot(&d, &ad);
        let along_d: Vec<f64> = x0.iter().zip(&d).map(|(x, d)| x + c * d).collect();
        assert!(energy(&x) < energy(&along_d) - 1e-9, "{} vs {}", energy(&x), energy(&along_d));
    }

    /// Run to convergence, the augmented solve finds the same solution;
    /// when the error lies along `d` it needs no iteration; a zero or
    /// mis-sized `d` is plain PCG, bit for bit.
    #[test]
    fn augmented_solve_converges_and_degenerates_to_plain() {
        let n = 80;
        let (a, x_true, b) = manufactured(n, 0.02, |i| (i * 0.2).sin());
        let tight = PcgSettings { max_iterations: None, rel_tolerance: Some(1e-12), residual_ceiling: None };
        let d: Vec<f64> = (0..n).map(|i| (i as f64 * 0.9).cos()).collect();
        let mut x = vec![0.0; n];
        let out =
            Pcg::default().solve_augmented(&a, &b, &mut x, &IdentityPreconditioner, tight, Some(&d)).unwrap();
        assert!(out.converged);
        let err = x.iter().zip(&x_true).map(|(p, q)| (p - q).abs()).fold(0.0, f64::max);
        assert!(err < 1e-9, "err {err:e}");
        // x₀ = x* − 0.7 d: the projection alone solves it.
        let mut x: Vec<f64> = x_true.iter().zip(&d).map(|(x, d)| x - 0.7 * d).collect();
        let out =
            Pcg::default().solve_augmented(&a, &b, &mut x, &IdentityPreconditioner, tight, Some(&d)).unwrap();
        assert_eq!(out.iterations, 0);
        assert!(x.iter().zip(&x_true).all(|(p, q)| (p - q).abs() < 1e-12));
        let three = PcgSettings { max_iterations: Some(3), rel_tolerance: None, residual_ceiling: None };
        let (mut plain, mut zero, mut short) = (vec![0.0; n], vec![0.0; n], vec![0.0; n]);
        Pcg::default().solve(&a, &b, &mut plain, &IdentityPreconditioner, three).unwrap();
        let z = vec![0.0; n];
        Pcg::default().solve_augmented(&a, &b, &mut zero, &IdentityPreconditioner, three, Some(&z)).unwrap();
        Pcg::default()
            .solve_augmented(&a, &b, &mut short, &IdentityPreconditioner, three, Some(&d[1..]))
            .unwrap();
        assert_eq!(plain, zero);
        assert_eq!(plain, short);
    }

    #[test]
    fn indefinite_matrix_is_reported() {
        let mut a = laplacian(10, 0.0);
        a.values.iter_mut().for_each(|v| *v = -*v);
        let mut x = vec![0.0; 10];
        let s = PcgSettings { max_iterations: Some(5), rel_tolerance: Some(1e-8), residual_ceiling: None };
        let err = Pcg::default().solve(&a, &[1.0; 10], &mut x, &IdentityPreconditioner, s).unwrap_err();
        assert!(matches!(err, KrylovError::NotPositiveDefinite { iteration: 1, .. }));
    }
}
