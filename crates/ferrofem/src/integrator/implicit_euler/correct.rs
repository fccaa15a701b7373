//! Stage `correct` (zeng2022 eq. 17): `Δv ← Δv_free + h A⁻¹ Hᵀ λ`, with
//! the same factor that built `W`, so the corrected motion is consistent
//! with the gaps PGS computed.

use ferrofem_linalg::Ldlt;

use super::constraints::transpose_times;
use super::BodyWorkspace;

/// Runs the stage for one body with its rows of λ: stores `Hᵀλ` (N per DOF)
/// in `ws.contact_forces` and adds `h A⁻¹ Hᵀ λ` to `ws.dv`.
pub fn correct(ws: &mut BodyWorkspace, factor: &Ldlt, lambda: &[f64], h: f64) {
    transpose_times(&ws.jacobian, lambda, &mut ws.contact_forces);
    let mut x = ws.contact_forces.clone();
    factor.solve_in_place(&mut x, 1);
    ws.dv.iter_mut().zip(&x).for_each(|(dv, a)| *dv += h * a);
}
