//! Rotation of the polar decomposition `F = R S` (R ∈ SO(3), S symmetric),
//! by SVD or by the Jacobi iteration of dahl2019 §3.3.

use nalgebra::{Matrix3, Matrix3x2, SMatrix, SVector, Vector3};
use serde::{Deserialize, Serialize};

/// How the rotation of `F` is extracted.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum PolarMethod {
    /// `F = U Σ Vᵀ`, `R = U diag(1, 1, det(UVᵀ)) Vᵀ`: robust for inverted elements.
    Svd,
    /// dahl2019 §3.3: 2×2 Jacobi rotations applied to `Rᵀ F` until it is
    /// symmetric, warm-started from the previous step's rotation.
    Jacobi {
        /// Upper bound on sweeps over the three coordinate planes.
        max_sweeps: usize,
        /// Stop when `‖RᵀF − FᵀR‖ ≤ tolerance · ‖F‖`.
        tolerance: f64,
    },
}

impl Default for PolarMethod {
    fn default() -> Self {
        PolarMethod::Jacobi { max_sweeps: 4, tolerance: 1e-12 }
    }
}

/// Rotation of `f`; `previous` seeds the Jacobi iteration.
pub fn rotation(f: &Matrix3<f64>, previous: &Matrix3<f64>, method: PolarMethod) -> Matrix3<f64> {
    match method {
        PolarMethod::Svd => rotation_svd(f),
        PolarMethod::Jacobi { max_sweeps, tolerance } => rotation_jacobi(f, previous, max_sweeps, tolerance),
    }
}

/// SVD route; reflections are turned into rotations by flipping the
/// direction of the smallest singular value.
pub fn rotation_svd(f: &Matrix3<f64>) -> Matrix3<f64> {
    let svd = f.svd(true, true);
    let (Some(mut u), Some(v_t)) = (svd.u, svd.v_t) else {
        return Matrix3::identity();
    };
    if (u * v_t).determinant() < 0.0 {
        let k = svd.singular_values.imin();
        u.column_mut(k).neg_mut();
    }
    u * v_t
}

/// Jacobi route: `R ← R G(θ)` with `tan θ = (S_ji − S_ij)/(S_ii + S_jj)` on
/// `S = RᵀF`, plane by plane, which symmetrizes `S` with positive trace.
pub fn rotation_jacobi(
    f: &Matrix3<f64>,
    start: &Matrix3<f64>,
    max_sweeps: usize,
    tolerance: f64,
) -> Matrix3<f64> {
    let mut r = *start;
    let mut s = r.transpose() * f;
    let scale = f.norm().max(f64::MIN_POSITIVE);
    for _ in 0..max_sweeps {
        if (s - s.transpose()).norm() <= tolerance * scale {
            break;
        }
        for (i, j) in [(0, 1), (0, 2), (1, 2)] {
            let (num, den) = (s[(j, i)] - s[(i, j)], s[(i, i)] + s[(j, j)]);
            let h = (num * num + den * den).sqrt();
            if h == 0.0 {
                continue;
            }
            let (c, sn) = (den / h, num / h);
            // R ← R G and S ← Gᵀ S touch only columns i, j of R and rows i, j of S.
            for k in 0..3 {
                let (ri, rj) = (r[(k, i)], r[(k, j)]);
                r[(k, i)] = c * ri + sn * rj;
                r[(k, j)] = -sn * ri + c * rj;
                let (si, sj) = (s[(i, k)], s[(j, k)]);
                s[(i, k)] = c * si + sn * sj;
                s[(j, k)] = -sn * si + c * sj;
            }
        }
    }
    r
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

/// Thin SVD of a 3×2 membrane gradient `F = U diag(σ) Vᵀ`, `σ₁ ≥ σ₂ ≥ 0`,
/// in closed form and without trigonometry: `F = Q R` by Gram–Schmidt
/// (reorthogonalized once); `v₁` the top eigenvector of the 2×2 `RᵀR`,
/// `σ₁ = ‖R v₁‖`, `u₁ = R v₁ / σ₁`, and `v₂`, `u₂` their quarter turns
/// (`det R ≥ 0`), `σ₂ = det R / σ₁` (accurate where it is small);
/// `U = Q [u₁ u₂]`. Where `σ₁ ≈ σ₂` the singular vectors are ill-defined,
/// but `U Vᵀ` is not ([`membrane_rotation`]).
pub fn thin_svd32(f: &Matrix3x2<f64>) -> (SMatrix<f64, 3, 2>, SVector<f64, 2>, SMatrix<f64, 2, 2>) {
    let (q, [r0, r1, r2]) = thin_qr(f);
    let (p, c, t) = (r0 * r0, r0 * r1, r1 * r1 + r2 * r2);
    let half = (p - t) / 2.0;
    let lambda = (p + t) / 2.0 + (half * half + c * c).sqrt();
    let (a, b) = ((c, lambda - p), (lambda - t, c));
    let v = if a.0 * a.0 + a.1 * a.1 >= b.0 * b.0 + b.1 * b.1 { a } else { b };
    let norm = (v.0 * v.0 + v.1 * v.1).sqrt();
    let v1 = if norm > 0.0 { (v.0 / norm, v.1 / norm) } else { (1.0, 0.0) };
    let rv = (r0 * v1.0 + r1 * v1.1, r2 * v1.1);
    let s1 = (rv.0 * rv.0 + rv.1 * rv.1).sqrt();
    let u1 = if s1 > 0.0 { (rv.0 / s1, rv.1 / s1) } else { v1 };
    let s2 = if s1 > 0.0 { r0 * r2 / s1 } else { 0.0 };
    let turn = |x: (f64, f64)| nalgebra::Matrix2::new(x.0, -x.1, x.1, x.0);
    (q * turn(u1), SVector::<f64, 2>::new(s1, s2), turn(v1))
}

/// The closest matrix with orthonormal columns to a 3×2 `F`, `U Vᵀ` of
/// its thin SVD: `Q Rot(a)` for `F = Q R` and `tan a = −r₁ / (r₀ + r₂)`
/// (the rotation part of `R`), without an SVD.
pub fn membrane_rotation(f: &Matrix3x2<f64>) -> Matrix3x2<f64> {
    let (q, [r0, r1, r2]) = thin_qr(f);
    let (e, h) = (r0 + r2, -r1);
    let norm = (e * e + h * h).sqrt();
    let (c, s) = if norm > 0.0 { (e / norm, h / norm) } else { (1.0, 0.0) };
    q * nalgebra::Matrix2::new(c, -s, s, c)
}

/// `F = Q R` for a 3×2 `F`: `Q` orthonormal columns, `R = [r₀ r₁; 0 r₂]`
/// (returned as `[r₀, r₁, r₂]`) with `r₀, r₂ ≥ 0`. A zero column gets a
/// unit column orthogonal to the other.
fn thin_qr(f: &Matrix3x2<f64>) -> (Matrix3x2<f64>, [f64; 3]) {
    let (f0, f1): (Vector3<f64>, Vector3<f64>) = (f.column(0).into(), f.column(1).into());
    let r0 = f0.norm();
    let q0 = match (r0 > 0.0, f1.norm() > 0.0) {
        (true, _) => f0 / r0,
        (false, true) => f1.normalize(),
        (false, false) => Vector3::x(),
    };
    let mut r1 = q0.dot(&f1);
    let mut w = f1 - q0 * r1;
    let again = q0.dot(&w);
    w -= q0 * again;
    r1 += again;
    let r2 = w.norm();
    let q1 = match r2 > 0.0 {
        true => w / r2,
        false => {
            let k = q0.iamin();
            (Vector3::ith(k, 1.0) - q0 * q0[k]).normalize()
        }
    };
    (Matrix3x2::from_columns(&[q0, q1]), [r0, r1, r2])
}

#[cfg(test)]
mod tests {
    use super::*;
    use nalgebra::{Rotation3, Vector3};

    fn random_rotation(k: u32) -> Matrix3<f64> {
        let a = k as f64;
        let axis = Vector3::new((a * 1.3).sin(), (a * 0.7).cos(), 0.3 + (a * 2.1).sin().abs());
        Rotation3::from_axis_angle(&nalgebra::Unit::new_normalize(axis), 0.4 + 0.37 * a).into_inner()
    }

    #[test]
    fn both_methods_recover_rotation_of_stretched_matrix() {
        for k in 0..50 {
            let r0 = random_rotation(k);
            let s = Matrix3::new(1.2, 0.1, 0.0, 0.1, 0.9, 0.05, 0.0, 0.05, 1.1);
            let f = r0 * s;
            let svd = rotation_svd(&f);
            let jac = rotation_jacobi(&f, &Matrix3::identity(), 20, 1e-14);
            assert!((svd - r0).norm() < 1e-12, "svd {k}");
            assert!((jac - r0).norm() < 1e-10, "jacobi {k}: {}", (jac - r0).norm());
            assert!((jac.determinant() - 1.0).abs() < 1e-12);
        }
    }

    /// The closed-form thin SVD: `F` rebuilt, orthonormal `U` and `V`,
    /// `σ` nalgebra's, for stretched, sheared, nearly rank-one, rank-one
    /// and zero gradients.
    #[test]
    fn thin_svd_rebuilds_the_gradient_with_nalgebras_values() {
        let mut cases: Vec<Matrix3x2<f64>> = (0..40)
            .map(|k| {
                let r = random_rotation(k);
                let a = k as f64;
                let s = nalgebra::Matrix2::new(
                    1.0 + 0.3 * a.sin(),
                    0.2 * (0.7 * a).cos(),
                    0.0,
                    0.8 + 0.25 * a.cos(),
                );
                r.fixed_columns::<2>(0) * s * nalgebra::Rotation2::new(0.3 * a).into_inner()
            })
            .collect();
        let c = Vector3::new(0.3, -0.4, 0.5);
        cases.extend([
            Matrix3x2::from_columns(&[c, c * 2.0 + Vector3::new(0.0, 1e-9, 0.0)]),
            Matrix3x2::from_columns(&[c, c * -1.5]),
            Matrix3x2::from_columns(&[Vector3::zeros(), c]),
            Matrix3x2::zeros(),
            Matrix3x2::new(1.0, 0.0, 0.0, 1.0, 0.0, 0.0),
        ]);
        for (i, f) in cases.iter().enumerate() {
            let (u, s, v) = thin_svd32(f);
            let scale = f.norm().max(1e-300);
            assert!(
                (u * nalgebra::Matrix2::from_diagonal(&s) * v.transpose() - f).norm()
                    <= 1e-14 * scale.max(1.0),
                "{i}: rebuilt"
            );
            assert!((u.transpose() * u - nalgebra::Matrix2::identity()).norm() < 1e-14, "{i}: UᵀU");
            assert!((v.transpose() * v - nalgebra::Matrix2::identity()).norm() < 1e-14, "{i}: VᵀV");
            let rotation = membrane_rotation(f);
            if s[1] > 1e-6 * s[0] {
                assert!((rotation - u * v.transpose()).norm() < 1e-12, "{i}: U Vᵀ");
            }
            assert!(
                (rotation.transpose() * rotation - nalgebra::Matrix2::identity()).norm() < 1e-14,
                "{i}: RᵀR"
            );
            let want = nalgebra::SVD::new(*f, false, false).singular_values;
            assert!(s[0] >= s[1] && s[1] >= 0.0, "{i}: {s:?}");
            assert!((s - want).norm() <= 1e-14 * scale.max(1.0), "{i}: σ {s:?} against {want:?}");
        }
    }

    #[test]
    fn svd_handles_inversion() {
        let f = Matrix3::from_diagonal(&Vector3::new(1.0, 1.0, -0.5));
        let r = rotation_svd(&f);
        assert!((r.determinant() - 1.0).abs() < 1e-12);
        assert!((r.transpose() * r - Matrix3::identity()).norm() < 1e-12);
    }
}
