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

/// Thin SVD of a 3×2 membrane gradient `F = U diag(σ) Vᵀ`, σ ≥ 0.
pub fn thin_svd32(f: &Matrix3x2<f64>) -> (SMatrix<f64, 3, 2>, SVector<f64, 2>, SMatrix<f64, 2, 2>) {
    let svd = nalgebra::SVD::new(*f, true, true);
    (svd.u.unwrap_or_default(), svd.singular_values, svd.v_t.unwrap_or_default().transpose())
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

    #[test]
    fn svd_handles_inversion() {
        let f = Matrix3::from_diagonal(&Vector3::new(1.0, 1.0, -0.5));
        let r = rotation_svd(&f);
        assert!((r.determinant() - 1.0).abs() < 1e-12);
        assert!((r.transpose() * r - Matrix3::identity()).norm() < 1e-12);
    }
}
