//! Implicit Euler's tet for a hyperelastic model (stable Neo-Hookean):
//! forces `fₐ = −V P gₐ` and the tangent `∂²ψ/∂F²` made positive
//! semi-definite by its closed-form eigensystem (Teran et al. 2005 §5;
//! Smith et al. 2019): with `F = U diag(σ) Vᵀ` (signed, Irving et al. 2004),
//! the scaling modes `U eᵢeᵢᵀ Vᵀ` coupled by the σ-Hessian (its
//! eigenvalues clamped where it is not positive definite), and per pair `i < j` a twist `U (eᵢeⱼᵀ − eⱼeᵢᵀ) Vᵀ/√2` with
//! eigenvalue `(ψᵢ + ψⱼ)/(σᵢ + σⱼ)` and a flip `U (eᵢeⱼᵀ + eⱼeᵢᵀ) Vᵀ/√2`
//! with `(ψᵢ − ψⱼ)/(σᵢ − σⱼ)`; negative eigenvalues are clamped to zero.
//! The element stiffness is formed once per step from the modes (12×12,
//! 1.2 KB a tet), so the row gather and `Kₑ v` read blocks of it.

use nalgebra::{Matrix3, SMatrix, Vector3};

use super::hyperelastic::signed_svd3;
use super::stable_neo_hookean;
use super::{TetElement, TetEval};

/// The element stiffness `Kₑ = V W Λ Wᵀ` (12×12, vertex-major: block
/// `(a, b)` at rows `3a..`, columns `3b..`), column `k` of `W` being
/// `(Qₖ gₐ)ₐ` for the tangent's modes `Qₖ`, `Λ` the (projected)
/// σ-Hessian on the scaling modes and the pairs' eigenvalues.
pub type Stiffness = SMatrix<f64, 12, 12>;

impl TetElement {
    /// Forces, energy and stiffness (its tangent projected when `project`)
    /// of the tet at deformation gradient `f` under stable Neo-Hookean;
    /// `rotated_grads` are the rest gradients.
    pub fn evaluate_hyperelastic(&self, f: &Matrix3<f64>, project: bool) -> (TetEval, Stiffness) {
        let mut out = (TetEval::default(), Stiffness::zeros());
        self.evaluate_hyperelastic_into(f, &signed_svd3(f), project, &mut out.0, &mut out.1);
        out
    }

    /// [`Self::evaluate_hyperelastic`] given the signed SVD `usv` of `f`
    /// (which only the tangent reads: forces and energy are in closed
    /// form), written into `eval` and `stiffness`.
    pub fn evaluate_hyperelastic_into(
        &self,
        f: &Matrix3<f64>,
        usv: &(Matrix3<f64>, Vector3<f64>, Matrix3<f64>),
        project: bool,
        eval: &mut TetEval,
        stiffness: &mut Stiffness,
    ) {
        let (u, s, v) = *usv;
        let (_, g, h) = stable_neo_hookean::energy::<3>(self.lame, &s);
        // Forces and energy in closed form: exact whatever the SVD's tolerance.
        let (psi, p) = stable_neo_hookean::energy_and_stress(self.lame, f);
        // hₐ = Vᵀ gₐ: a mode U M Vᵀ maps gₐ to U M hₐ.
        let hv = self.grads.map(|ga| v.transpose() * ga);
        let mut w = SMatrix::<f64, 12, 9>::zeros();
        let mut scale = [0.0; 9];
        let mut mode = |k: usize, m: &dyn Fn(&Vector3<f64>) -> Vector3<f64>, e: f64| {
            scale[k] = if project { e.max(0.0) } else { e };
            for (a, ha) in hv.iter().enumerate() {
                w.fixed_view_mut::<3, 1>(3 * a, k).copy_from(&(u * m(ha)));
            }
        };
        // The scaling modes U eᵢeᵢᵀ Vᵀ, coupled by the σ-Hessian, projected
        // by its eigen-decomposition only where it is not positive definite.
        for k in 0..3 {
            mode(k, &|x| Vector3::from_fn(|r, _| if r == k { x[k] } else { 0.0 }), 0.0);
        }
        let scaling = match positive_definite(&h) || !project {
            true => h,
            false => {
                let eigen = h.symmetric_eigen();
                let clamped = eigen.eigenvalues.map(|e| e.max(0.0));
                eigen.eigenvectors * Matrix3::from_diagonal(&clamped) * eigen.eigenvectors.transpose()
            }
        };
        let r2 = std::f64::consts::FRAC_1_SQRT_2;
        for (n, (i, j)) in [(0, 1), (0, 2), (1, 2)].into_iter().enumerate() {
            let (mean, scale) = (0.5 * (h[(i, i)] + h[(j, j)]), s[i].abs() + s[j].abs());
            let twist = ratio(g[i] + g[j], s[i] + s[j], scale, mean + h[(i, j)]);
            let flip = ratio(g[i] - g[j], s[i] - s[j], scale, mean - h[(i, j)]);
            // (eᵢeⱼᵀ ∓ eⱼeᵢᵀ) x / √2 = (eᵢ xⱼ ∓ eⱼ xᵢ) / √2.
            let pair = |sign: f64| {
                move |x: &Vector3<f64>| {
                    Vector3::from_fn(|r, _| match r {
                        r if r == i => r2 * x[j],
                        r if r == j => sign * r2 * x[i],
                        _ => 0.0,
                    })
                }
            };
            mode(3 + 2 * n, &pair(-1.0), twist);
            mode(4 + 2 * n, &pair(1.0), flip);
        }
        // K = V (W Λ) Wᵀ, Λ = blockdiag(scaling, the pairs' eigenvalues): its upper triangle, mirrored.
        let mut wl = w;
        let scaled = w.fixed_columns::<3>(0) * scaling;
        wl.fixed_columns_mut::<3>(0).copy_from(&scaled);
        for (k, e) in scale.iter().enumerate().skip(3) {
            wl.column_mut(k).scale_mut(*e);
        }
        for r in 0..12 {
            for c in r..12 {
                let x = self.measure * wl.row(r).dot(&w.row(c));
                (stiffness[(r, c)], stiffness[(c, r)]) = (x, x);
            }
        }
        *eval = TetEval {
            rotated_grads: self.grads,
            forces: self.grads.map(|ga| -self.measure * (p * ga)),
            energy: self.measure * psi,
        };
    }
}

/// Whether a symmetric 3×3 matrix is positive definite (its leading minors).
fn positive_definite(h: &Matrix3<f64>) -> bool {
    let m2 = h[(0, 0)] * h[(1, 1)] - h[(0, 1)] * h[(1, 0)];
    h[(0, 0)] > 0.0 && m2 > 0.0 && h.determinant() > 0.0
}

/// `num/den`, or `limit` where `den` vanishes against the singular values'
/// `scale` (equal singular values, or opposite ones of an inverted
/// element): the quotient's limit there, `(ψᵢᵢ + ψⱼⱼ)/2 ± ψᵢⱼ`.
fn ratio(num: f64, den: f64, scale: f64, limit: f64) -> f64 {
    if den.abs() > 1e-7 * scale {
        num / den
    } else {
        limit
    }
}

#[cfg(test)]
mod tests;
