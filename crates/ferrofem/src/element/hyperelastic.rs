//! Isotropic hyperelastic energies written in the singular values σ of the
//! deformation gradient F (3×3 for tets, 3×2 for membranes), and their
//! proximal operators, the local step of the local-global integrator
//! (zeng2025 eq. 5; Overby et al. 2017 §4: for an isotropic ψ the proximal
//! point of `F = U Σ Vᵀ` is `U diag(σ*) Vᵀ`, σ* minimizing a function of
//! `D` variables).
//!
//! Energies are densities per unit rest measure (volume, or area times
//! thickness) and pure fixed-size functions returning `(ψ, ∇ψ, ∇²ψ)`.

use nalgebra::{Matrix3, Matrix3x2, SMatrix, SVector, Vector3};
use serde::{Deserialize, Serialize};

/// The constitutive model of a body under the local-global integrator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Constitutive {
    /// As-rigid-as-possible, `ψ = μ ‖F − R‖²`; its local step is the
    /// projection onto rotations (projective dynamics, Bouaziz et al. 2014).
    Arap,
    /// Co-rotational, `ψ = μ ‖F − R‖² + λ/2 tr(RᵀF − I)²`.
    #[default]
    Corotational,
    /// Compressible Neo-Hookean, `ψ = μ/2 (tr FᵀF − d) − μ ln J + λ/2 ln² J`.
    NeoHookean,
}

impl Constitutive {
    /// The name used in scene files.
    pub fn name(self) -> &'static str {
        match self {
            Constitutive::Arap => "arap",
            Constitutive::Corotational => "corotational",
            Constitutive::NeoHookean => "neo-hookean",
        }
    }

    /// ADMM penalty `k` per unit rest measure (the element weight is
    /// `w = k · measure`): `2μ` for ARAP, whose energy is exactly
    /// `w/2 dist²(F, SO(d))`, and `2μ + λ` for the others, the stiffness
    /// of their stiffest (volumetric) mode.
    pub fn penalty(self, lame: Lame) -> f64 {
        match self {
            Constitutive::Arap => 2.0 * lame.mu,
            _ => 2.0 * lame.mu + lame.lambda,
        }
    }

    /// Whether the local step carries an ADMM dual variable. ARAP's is a
    /// plain projection (its energy is the squared distance it minimizes).
    pub fn uses_dual(self) -> bool {
        self != Constitutive::Arap
    }
}

/// Lamé parameters (Pa). Membranes use the same pair as a 2D continuum
/// (as zeng2025 and most graphics codes do), not the plane-stress
/// reduction `λ̄ = 2λμ/(λ + 2μ)`, so that `λ` governs area preservation.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Lame {
    /// First Lamé parameter λ.
    pub lambda: f64,
    /// Shear modulus μ.
    pub mu: f64,
}

/// `ψ(σ)`, `∇ψ` and `∇²ψ` in singular-value space, `D` = 3 (solids) or 2
/// (membranes). `None` where the energy is infinite (Neo-Hookean with
/// `J = Πσ ≤ 0`).
pub fn energy<const D: usize>(
    model: Constitutive,
    lame: Lame,
    s: &SVector<f64, D>,
) -> Option<(f64, SVector<f64, D>, SMatrix<f64, D, D>)> {
    let (l, mu, d) = (lame.lambda, lame.mu, D as f64);
    let ones = SVector::<f64, D>::repeat(1.0);
    match model {
        Constitutive::Arap => {
            let e = s - ones;
            Some((mu * e.norm_squared(), 2.0 * mu * e, SMatrix::identity() * 2.0 * mu))
        }
        Constitutive::Corotational => {
            let (e, tr) = (s - ones, s.sum() - d);
            let psi = mu * e.norm_squared() + 0.5 * l * tr * tr;
            let hess = SMatrix::<f64, D, D>::identity() * 2.0 * mu + SMatrix::repeat(l);
            Some((psi, 2.0 * mu * e + ones * (l * tr), hess))
        }
        Constitutive::NeoHookean => {
            let j = s.product();
            if j.is_nan() || j <= 0.0 {
                return None;
            }
            let lj = j.ln();
            let psi = 0.5 * mu * (s.norm_squared() - d) - mu * lj + 0.5 * l * lj * lj;
            let grad = s.map(|x| mu * x + (l * lj - mu) / x);
            let hess = SMatrix::<f64, D, D>::from_fn(|a, b| {
                if a == b {
                    mu + (l + mu - l * lj) / (s[a] * s[a])
                } else {
                    l / (s[a] * s[b])
                }
            });
            Some((psi, grad, hess))
        }
    }
}

/// The proximal point in σ-space: `argmin_σ ψ(σ) + k/2 ‖σ − s‖²` (for ARAP
/// the projection σ = 1). Co-rotational is quadratic and solved in closed
/// form; Neo-Hookean by a damped Newton iteration that keeps `J > 0`.
pub fn prox<const D: usize>(model: Constitutive, lame: Lame, k: f64, s: &SVector<f64, D>) -> SVector<f64, D> {
    let d = D as f64;
    match model {
        Constitutive::Arap => SVector::repeat(1.0),
        Constitutive::Corotational => {
            // ((2μ + k) I + λ 11ᵀ) σ = k s + (2μ + λ d) 1, by Sherman–Morrison.
            let a = 2.0 * lame.mu + k;
            let r = s * k + SVector::repeat(2.0 * lame.mu + lame.lambda * d);
            (r - SVector::repeat(lame.lambda * r.sum() / (a + lame.lambda * d))) / a
        }
        Constitutive::NeoHookean => prox_newton(model, lame, k, s),
    }
}

fn prox_newton<const D: usize>(
    model: Constitutive,
    lame: Lame,
    k: f64,
    s: &SVector<f64, D>,
) -> SVector<f64, D> {
    let objective = |x: &SVector<f64, D>| {
        energy(model, lame, x).map(|(psi, g, h)| {
            (
                psi + 0.5 * k * (x - s).norm_squared(),
                g + (x - s) * k,
                h + SMatrix::<f64, D, D>::identity() * k,
            )
        })
    };
    // Start inside the domain: the clamped singular values.
    let mut x = s.map(|v| v.max(1e-2));
    let Some(mut cur) = objective(&x) else { return SVector::repeat(1.0) };
    for _ in 0..50 {
        let (f, g, h) = cur;
        let newton = h.cholesky().map(|c| c.solve(&(-g))).filter(|p| p.dot(&g) < 0.0);
        let step = newton.unwrap_or(-g / k);
        // Newton's convergence is quadratic: past a step of 1e-9, the full
        // step leaves an error at rounding, with nothing left to check.
        if newton.is_some() && step.norm() <= 1e-9 * (1.0 + x.norm()) {
            let last = x + step;
            if last.product() > 0.0 {
                x = last;
            }
            break;
        }
        let mut t = 1.0;
        let mut accepted = false;
        for _ in 0..40 {
            let trial = x + step * t;
            if let Some(next) = objective(&trial) {
                // Armijo, or (where the energy's rounding hides the
                // decrease near the minimum) no rise and a smaller gradient.
                let settling = next.0 <= f + 1e-13 * f.abs() && next.1.norm() < g.norm();
                if next.0 <= f + 1e-4 * t * step.dot(&g) || settling {
                    (x, cur, accepted) = (trial, next, true);
                    break;
                }
            }
            t *= 0.5;
        }
        if !accepted || (step * t).norm() <= 1e-14 * (1.0 + x.norm()) {
            break;
        }
    }
    x
}

/// Signed SVD of a 3×3 `F = U diag(σ) Vᵀ` with `U, V` rotations; an
/// inverted `F` gets a negative smallest σ (Irving et al. 2004).
pub fn signed_svd3(f: &Matrix3<f64>) -> (Matrix3<f64>, Vector3<f64>, Matrix3<f64>) {
    let svd = nalgebra::SVD::new(*f, true, true);
    let (mut u, mut s, mut vt) =
        (svd.u.unwrap_or_default(), svd.singular_values, svd.v_t.unwrap_or_default());
    // nalgebra sorts σ decreasingly; make U and V proper rotations.
    if u.determinant() < 0.0 {
        u.column_mut(2).neg_mut();
        s[2] = -s[2];
    }
    if vt.determinant() < 0.0 {
        vt.row_mut(2).neg_mut();
        s[2] = -s[2];
    }
    (u, s, vt.transpose())
}

/// Thin SVD of a 3×2 membrane gradient `F = U diag(σ) Vᵀ`, σ ≥ 0.
pub fn thin_svd32(f: &Matrix3x2<f64>) -> (SMatrix<f64, 3, 2>, SVector<f64, 2>, SMatrix<f64, 2, 2>) {
    let svd = nalgebra::SVD::new(*f, true, true);
    (svd.u.unwrap_or_default(), svd.singular_values, svd.v_t.unwrap_or_default().transpose())
}

/// Singular values, with `U` and `V`, of a 3×D deformation gradient, and
/// its closest rotation.
pub trait Gradient<const D: usize>: Sized {
    /// `(U, σ, V)`.
    fn usv(&self) -> (SMatrix<f64, 3, D>, SVector<f64, D>, SMatrix<f64, D, D>);

    /// The closest rotation (orthonormal columns) `U Vᵀ`, possibly
    /// warm-started from a nearby one.
    fn closest_rotation(&self, warm: &Self) -> Self;
}

impl Gradient<3> for Matrix3<f64> {
    fn usv(&self) -> (Matrix3<f64>, Vector3<f64>, Matrix3<f64>) {
        signed_svd3(self)
    }

    /// The converged polar iteration from `warm` (Newton steps, then
    /// dahl2019 §3.3's Jacobi sweeps; an SVD when `warm` is not a rotation,
    /// e.g. on first use).
    fn closest_rotation(&self, warm: &Self) -> Self {
        super::lanes::closest_rotation(self, warm)
    }
}

impl Gradient<2> for Matrix3x2<f64> {
    fn usv(&self) -> (SMatrix<f64, 3, 2>, SVector<f64, 2>, SMatrix<f64, 2, 2>) {
        thin_svd32(self)
    }

    fn closest_rotation(&self, _warm: &Self) -> Self {
        let (u, _, v) = thin_svd32(self);
        u * v.transpose()
    }
}

/// `ψ(F)` and the first Piola–Kirchhoff stress `P = ∂ψ/∂F = U diag(∇ψ(σ)) Vᵀ`
/// (per unit rest measure); `None` where ψ is infinite.
pub fn energy_and_stress<const D: usize>(
    model: Constitutive,
    lame: Lame,
    f: &SMatrix<f64, 3, D>,
) -> Option<(f64, SMatrix<f64, 3, D>)>
where
    SMatrix<f64, 3, D>: Gradient<D>,
{
    let (u, s, v) = f.usv();
    let (psi, g, _) = energy(model, lame, &s)?;
    Some((psi, u * SMatrix::from_diagonal(&g) * v.transpose()))
}

/// The local step of one element: `p = argmin ψ(p) + k/2 ‖p − F‖²`
/// (zeng2025 eq. 5 with ζ = ψ), `U diag(σ*) Vᵀ`; for ARAP the closest
/// rotation, warm-started from `warm` (the element's previous projection).
pub fn local_projection<const D: usize>(
    model: Constitutive,
    lame: Lame,
    k: f64,
    f: &SMatrix<f64, 3, D>,
    warm: &SMatrix<f64, 3, D>,
) -> SMatrix<f64, 3, D>
where
    SMatrix<f64, 3, D>: Gradient<D>,
{
    match model {
        Constitutive::Arap => return f.closest_rotation(warm),
        Constitutive::Corotational => return corotational_projection(lame, k, f, &f.closest_rotation(warm)),
        Constitutive::NeoHookean => {}
    }
    let (u, s, v) = f.usv();
    u * SMatrix::from_diagonal(&prox(model, lame, k, &s)) * v.transpose()
}

/// Co-rotational's local step in closed form, without an SVD: its
/// [`prox`] is affine in σ, `σ* = (k σ + c 1)/a` with `a = 2μ + k`,
/// `g = 2μ + λd`, `c = (g a − λ k t)/(a + λd)` and `t = Σσ = tr(RᵀF)`, so
/// `p = U diag(σ*) Vᵀ = (k F + c R)/a` for `R = U Vᵀ` the closest
/// rotation of `F` (zeng2025 eq. 5).
pub fn corotational_projection<const D: usize>(
    lame: Lame,
    k: f64,
    f: &SMatrix<f64, 3, D>,
    r: &SMatrix<f64, 3, D>,
) -> SMatrix<f64, 3, D> {
    let (d, a) = (D as f64, 2.0 * lame.mu + k);
    let g = 2.0 * lame.mu + lame.lambda * d;
    let t = r.dot(f);
    let c = (g * a - lame.lambda * k * t) / (a + lame.lambda * d);
    (f * k + r * c) * (1.0 / a)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MODELS: [Constitutive; 3] =
        [Constitutive::Arap, Constitutive::Corotational, Constitutive::NeoHookean];
    const LAME: Lame = Lame { lambda: 3.0, mu: 1.3 };

    fn check_derivatives<const D: usize>(s: SVector<f64, D>) {
        for m in MODELS {
            let (_, g, h) = energy(m, LAME, &s).unwrap();
            let eps = 1e-6;
            for a in 0..D {
                let mut sp = s;
                sp[a] += eps;
                let mut sm = s;
                sm[a] -= eps;
                let (ep, gp, _) = energy(m, LAME, &sp).unwrap();
                let (em, gm, _) = energy(m, LAME, &sm).unwrap();
                let fd = (ep - em) / (2.0 * eps);
                assert!(
                    (fd - g[a]).abs() < 1e-6 * (1.0 + g[a].abs()),
                    "{m:?} gradient {a}: {fd} vs {}",
                    g[a]
                );
                for b in 0..D {
                    let fd = (gp[b] - gm[b]) / (2.0 * eps);
                    assert!((fd - h[(b, a)]).abs() < 1e-5 * (1.0 + h[(b, a)].abs()), "{m:?} Hessian {b},{a}");
                }
            }
        }
    }

    #[test]
    fn energies_match_finite_differences() {
        check_derivatives(Vector3::new(1.3, 0.8, 0.6));
        check_derivatives(SVector::<f64, 2>::new(1.4, 0.7));
    }

    #[test]
    fn stress_matches_finite_differences_of_the_energy() {
        let f = Matrix3::new(1.1, 0.2, -0.1, 0.05, 0.9, 0.3, -0.2, 0.1, 1.2);
        for m in MODELS {
            let (_, p) = energy_and_stress(m, LAME, &f).unwrap();
            for i in 0..9 {
                let mut e = Matrix3::zeros();
                e[i] = 1e-6;
                let fd = (energy_and_stress(m, LAME, &(f + e)).unwrap().0
                    - energy_and_stress(m, LAME, &(f - e)).unwrap().0)
                    / 2e-6;
                assert!((fd - p[i]).abs() < 1e-6, "{m:?} entry {i}: {fd} vs {}", p[i]);
            }
        }
    }

    #[test]
    fn rest_state_is_its_own_projection() {
        for m in MODELS {
            let p3 = local_projection(m, LAME, m.penalty(LAME), &Matrix3::identity(), &Matrix3::zeros());
            assert!((p3 - Matrix3::identity()).norm() < 1e-12, "{m:?} 3D");
            let i32 = Matrix3x2::new(1.0, 0.0, 0.0, 1.0, 0.0, 0.0);
            let p2 = local_projection(m, LAME, m.penalty(LAME), &i32, &i32);
            assert!((p2 - i32).norm() < 1e-12, "{m:?} membrane");
        }
    }

    #[test]
    fn local_step_minimizes_and_never_raises_the_element_energy() {
        let f = Matrix3::new(1.4, 0.3, 0.0, -0.2, 0.7, 0.1, 0.1, 0.0, 0.9);
        for m in MODELS {
            let k = m.penalty(LAME);
            let p = local_projection(m, LAME, k, &f, &Matrix3::zeros());
            let psi = |x: &Matrix3<f64>| energy_and_stress(m, LAME, x).unwrap().0;
            if m == Constitutive::Arap {
                // A rotation, the closest one.
                assert!((p.transpose() * p - Matrix3::identity()).norm() < 1e-12);
                assert!(psi(&p) < 1e-20);
                continue;
            }
            let obj = |x: &Matrix3<f64>| psi(x) + 0.5 * k * (x - f).norm_squared();
            assert!(psi(&p) <= psi(&f), "{m:?}: ψ rose from {} to {}", psi(&f), psi(&p));
            for i in 0..9 {
                let mut e = Matrix3::zeros();
                e[i] = 1e-4;
                assert!(obj(&p) <= obj(&(p + e)) && obj(&p) <= obj(&(p - e)), "{m:?}: not a minimum");
            }
        }
    }

    #[test]
    fn signed_svd_of_an_inverted_gradient() {
        let f = Matrix3::new(1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, -0.5);
        let (u, s, v) = signed_svd3(&f);
        assert!(u.determinant() > 0.0 && v.determinant() > 0.0 && s.product() < 0.0);
        assert!((u * Matrix3::from_diagonal(&s) * v.transpose() - f).norm() < 1e-12);
        assert!(energy(Constitutive::NeoHookean, LAME, &s).is_none());
    }

    #[test]
    fn corotational_closed_form_is_the_svd_prox() {
        let lame = Lame { lambda: 3.0e4, mu: 1.1e4 };
        for i in 0..40 {
            let a = i as f64;
            let mut f = Matrix3::new(
                1.1 + 0.3 * a.sin(),
                0.2 * (1.3 * a).cos(),
                0.1,
                -0.15,
                0.7 + 0.2 * (0.7 * a).sin(),
                0.3 * a.cos(),
                0.05 * a.sin(),
                0.25,
                0.9 + 0.4 * (0.3 * a).cos(),
            );
            if i % 5 == 2 {
                f.column_mut(1).neg_mut(); // inverted: one signed σ < 0
            }
            let k = lame.mu * (1.0 + 0.5 * a);
            let (u, s, v) = signed_svd3(&f);
            let svd =
                u * Matrix3::from_diagonal(&prox(Constitutive::Corotational, lame, k, &s)) * v.transpose();
            let closed = corotational_projection(lame, k, &f, &(u * v.transpose()));
            assert!((closed - svd).norm() <= 1e-12 * svd.norm(), "3D {i}: {}", (closed - svd).norm());
            let f2 = f.fixed_columns::<2>(0).into_owned();
            let (u2, s2, v2) = thin_svd32(&f2);
            let svd2 =
                u2 * SMatrix::from_diagonal(&prox(Constitutive::Corotational, lame, k, &s2)) * v2.transpose();
            let closed2 = corotational_projection(lame, k, &f2, &(u2 * v2.transpose()));
            assert!((closed2 - svd2).norm() <= 1e-12 * svd2.norm(), "membrane {i}");
        }
    }
}
