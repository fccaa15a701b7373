//! Stable Neo-Hookean (Smith, de Goes & Kim 2018, eq. 14) in the signed
//! singular values σ of `F`, for solids (`D` = 3) and membranes (`D` = 2):
//!
//! `ψ = μ'/2 (I_C − D) + λ'/2 (J − α)² − μ'/2 ln((I_C + 1)/(D + 1)) − c₀`,
//! `I_C = Σσᵢ²`, `J = Πσᵢ`,
//!
//! defined and smooth for every `J`, inverted elements included (its
//! volume term pushes `J` back through zero, where the classic
//! Neo-Hookean's `ln J` is infinite). The rest-stability shift
//! `α = 1 + D μ' / ((D + 1) λ')` makes `P(I) = 0` with the `ln(I_C + 1)`
//! term that keeps a collapsed element from sitting at a stationary point
//! (their §3.4–3.5), and the constant `c₀` makes `ψ(I) = 0`. The parameters
//! are their §3.4 re-parametrization, in `D` dimensions, so the model
//! linearizes to the linear elasticity of the user's `(λ, μ)`:
//! `μ' = (D + 1)/D μ`, `λ' = λ + (1 − 2/(D (D + 1))) μ` (3D: `4/3 μ` and
//! `λ + 5/6 μ`), whence `α = 1 + μ/λ'`.

use nalgebra::{Matrix3, SMatrix, SVector};

use super::lame::Lame;

/// `(μ', λ', α)` of the model for the linear Lamé pair `lame` in `D` dimensions.
pub fn parameters<const D: usize>(lame: Lame) -> (f64, f64, f64) {
    let d = D as f64;
    let mu = (d + 1.0) / d * lame.mu;
    let lambda = lame.lambda + (1.0 - 2.0 / (d * (d + 1.0))) * lame.mu;
    (mu, lambda, 1.0 + lame.mu / lambda)
}

/// `ψ` of `(μ', λ', α)` in `d` dimensions from the invariants `I_C`, `J`.
fn density((mu, lambda, alpha): (f64, f64, f64), d: f64, ic: f64, j: f64) -> f64 {
    let rest = 0.5 * lambda * (1.0 - alpha).powi(2);
    0.5 * mu * (ic - d) + 0.5 * lambda * (j - alpha).powi(2) - 0.5 * mu * ((ic + 1.0) / (d + 1.0)).ln() - rest
}

/// `(ψ, ∇ψ, ∇²ψ)` in signed singular values σ (finite for every σ).
pub fn energy<const D: usize>(lame: Lame, s: &SVector<f64, D>) -> (f64, SVector<f64, D>, SMatrix<f64, D, D>) {
    let (mu, lambda, alpha) = parameters::<D>(lame);
    let d = D as f64;
    let (ic, j) = (s.norm_squared(), s.product());
    // ∂J/∂σᵢ = Π_{k≠i} σₖ and ∂²J/∂σᵢ∂σⱼ = Π_{k≠i,j} σₖ (i ≠ j), by products, not division.
    let dj = SVector::<f64, D>::from_fn(|i, _| (0..D).filter(|&k| k != i).map(|k| s[k]).product());
    let d2j = SMatrix::<f64, D, D>::from_fn(|i, k| match i == k {
        true => 0.0,
        false => (0..D).filter(|&m| m != i && m != k).map(|m| s[m]).product(),
    });
    let psi = density((mu, lambda, alpha), d, ic, j);
    let shear = mu * (1.0 - 1.0 / (ic + 1.0));
    let grad = s * shear + dj * (lambda * (j - alpha));
    let hess = SMatrix::<f64, D, D>::identity() * shear
        + s * s.transpose() * (2.0 * mu / ((ic + 1.0) * (ic + 1.0)))
        + dj * dj.transpose() * lambda
        + d2j * (lambda * (j - alpha));
    (psi, grad, hess)
}

/// `(ψ, P)` of a 3×3 `F` in closed form, without an SVD:
/// `P = μ' (1 − 1/(I_C + 1)) F + λ' (J − α) cof F`, `cof F = ∂J/∂F`
/// (Smith et al. 2018 §4.1); equal to rounding to `U diag(∇ψ(σ)) Vᵀ`.
pub fn energy_and_stress(lame: Lame, f: &Matrix3<f64>) -> (f64, Matrix3<f64>) {
    let (mu, lambda, alpha) = parameters::<3>(lame);
    let (ic, j) = (f.norm_squared(), f.determinant());
    let (c0, c1, c2) = (f.column(0), f.column(1), f.column(2));
    let cofactor = Matrix3::from_columns(&[c1.cross(&c2), c2.cross(&c0), c0.cross(&c1)]);
    let psi = density((mu, lambda, alpha), 3.0, ic, j);
    (psi, f * (mu * (1.0 - 1.0 / (ic + 1.0))) + cofactor * (lambda * (j - alpha)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use nalgebra::{Vector2, Vector3};

    const LAME: Lame = Lame { lambda: 4.0e5, mu: 1.5e5 };

    #[test]
    fn rest_is_stress_free_with_zero_energy_and_linear_moduli() {
        let (psi, g, h) = energy::<3>(LAME, &Vector3::repeat(1.0));
        assert!(psi.abs() < 1e-9 * LAME.mu && g.norm() < 1e-9 * LAME.mu, "{psi} {g}");
        // The σ-Hessian of linear elasticity, 2μ I + λ 11ᵀ.
        let linear = SMatrix::<f64, 3, 3>::identity() * (2.0 * LAME.mu) + SMatrix::repeat(LAME.lambda);
        assert!((h - linear).norm() < 1e-9 * linear.norm(), "{h} vs {linear}");
        let (_, g2, h2) = energy::<2>(LAME, &Vector2::repeat(1.0));
        let linear2 = SMatrix::<f64, 2, 2>::identity() * (2.0 * LAME.mu) + SMatrix::repeat(LAME.lambda);
        assert!(g2.norm() < 1e-9 * LAME.mu && (h2 - linear2).norm() < 1e-9 * linear2.norm());
    }

    #[test]
    fn derivatives_equal_finite_differences_inverted_included() {
        for s in [Vector3::new(1.3, 0.7, 0.9), Vector3::new(0.2, 0.5, -0.4), Vector3::new(2.0, -1.0, -0.1)] {
            let (_, g, h) = energy::<3>(LAME, &s);
            let e = 1e-6;
            for i in 0..3 {
                let step = Vector3::from_fn(|k, _| if k == i { e } else { 0.0 });
                let (pp, gp, _) = energy::<3>(LAME, &(s + step));
                let (pm, gm, _) = energy::<3>(LAME, &(s - step));
                let fd = (pp - pm) / (2.0 * e);
                assert!((fd - g[i]).abs() < 1e-7 * (1.0 + g.norm()), "{s}: ∂ψ/∂σ{i} {} vs {fd}", g[i]);
                let fd_h = (gp - gm) / (2.0 * e);
                assert!((fd_h - h.column(i)).norm() < 1e-7 * (1.0 + h.norm()), "{s}: column {i}");
            }
        }
    }

    #[test]
    fn closed_form_stress_is_the_singular_value_one() {
        let r = nalgebra::Rotation3::from_euler_angles(0.3, -0.7, 1.1).into_inner();
        for f in [
            r * Matrix3::new(1.3, 0.2, 0.0, 0.1, 0.8, -0.1, 0.0, 0.3, 0.9),
            r * Matrix3::from_diagonal(&Vector3::new(1.1, 0.7, -0.4)),
        ] {
            let (u, s, v) = super::super::polar::signed_svd3(&f);
            let (psi, g, _) = energy::<3>(LAME, &s);
            let (psi_f, p) = energy_and_stress(LAME, &f);
            let p_svd = u * Matrix3::from_diagonal(&g) * v.transpose();
            assert!((psi - psi_f).abs() < 1e-10 * LAME.mu && (p - p_svd).norm() < 1e-10 * p.norm(), "{f}");
        }
    }

    #[test]
    fn volume_term_pushes_an_inverted_element_back() {
        // σ₃ < 0: the force −∂ψ/∂σ₃ is positive, towards J > 0.
        let (_, g, _) = energy::<3>(LAME, &Vector3::new(1.0, 1.0, -0.3));
        assert!(g[2] < -LAME.lambda, "{g}");
    }
}
