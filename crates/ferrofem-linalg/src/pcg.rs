//! Preconditioned conjugate gradients with early termination (dahl2019 §3):
//! stop after `max_iterations` and/or when `‖b − A x‖ ≤ tol ‖b‖`.

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
}

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
        let n = b.len();
        for v in [&mut self.r, &mut self.z, &mut self.p, &mut self.ap] {
            v.resize(n, 0.0);
        }
        let b_norm = norm(b);
        a.mul_vec(x, &mut self.r);
        self.r.iter_mut().zip(b).for_each(|(r, b)| *r = b - *r);
        let rel = |r: &[f64]| if b_norm > 0.0 { norm(r) / b_norm } else { norm(r) };
        let max_it = settings.max_iterations.unwrap_or(10 * n.max(1));
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
        let mut rz = dot(&self.r, &self.z);
        while res.iterations < max_it {
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
            if res.iterations == max_it {
                // Cut here (early termination): the next direction would
                // cost a preconditioner application and never be used.
                break;
            }
            precond.apply(&self.r, &mut self.z);
            let rz_new = dot(&self.r, &self.z);
            xpby(&self.z, rz_new / rz, &mut self.p);
            rz = rz_new;
        }
        Ok(res)
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

    #[test]
    fn converges_to_dense_solution() {
        let n = 200;
        let a = laplacian(n, 0.01);
        let x_true: Vec<f64> = (0..n).map(|i| (i as f64 * 0.1).cos()).collect();
        let mut b = vec![0.0; n];
        a.mul_vec(&x_true, &mut b);
        let mut x = vec![0.0; n];
        let mut jac = DiagonalPreconditioner::default();
        jac.set(a.diagonal().into_iter());
        let s = PcgSettings { max_iterations: None, rel_tolerance: Some(1e-12) };
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
        let s = PcgSettings { max_iterations: Some(3), rel_tolerance: None };
        let counting = Counting::default();
        let out = Pcg::default().solve(&a, &b, &mut x, &counting, s).unwrap();
        assert_eq!(out.iterations, 3);
        assert!(!out.converged && out.rel_residual.is_finite());
        // k iterations apply the preconditioner k times: none is wasted on
        // a direction the cut never takes.
        assert_eq!(counting.0.into_inner(), 3);
        // And the iterate is the same as with an uncut solve's first three.
        let s4 = PcgSettings { max_iterations: Some(4), rel_tolerance: None };
        let mut x4 = vec![0.0; 100];
        Pcg::default().solve(&a, &b, &mut x4, &IdentityPreconditioner, s4).unwrap();
        Pcg::default().solve(&a, &b, &mut y, &IdentityPreconditioner, s).unwrap();
        assert_eq!(x, y);
        assert_ne!(x, x4);
    }

    #[test]
    fn indefinite_matrix_is_reported() {
        let mut a = laplacian(10, 0.0);
        a.values.iter_mut().for_each(|v| *v = -*v);
        let mut x = vec![0.0; 10];
        let s = PcgSettings { max_iterations: Some(5), rel_tolerance: Some(1e-8) };
        let err = Pcg::default().solve(&a, &[1.0; 10], &mut x, &IdentityPreconditioner, s).unwrap_err();
        assert!(matches!(err, KrylovError::NotPositiveDefinite { iteration: 1, .. }));
    }
}
