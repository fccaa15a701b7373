//! Stage `correct` (zeng2022 eq. 17): `Δv ← Δv_free + h A⁻¹ Hᵀ λ`, with
//! the same factor that built `W`, so the corrected motion is consistent
//! with the gaps PGS computed.

use ferrofem_linalg::Ldlt;

use super::BodyWorkspace;

/// Runs the stage for one body: stores `Hᵀλ` (N per DOF) in
/// `ws.contact_forces` and adds `h A⁻¹ Hᵀ λ` to `ws.dv`.
pub fn correct(ws: &mut BodyWorkspace, factor: &Ldlt, h: f64) {
    let hm = &ws.jacobian;
    ws.contact_forces.iter_mut().for_each(|f| *f = 0.0);
    for r in 0..hm.nrows() {
        for p in hm.pattern.row_ptr[r]..hm.pattern.row_ptr[r + 1] {
            ws.contact_forces[hm.pattern.col_idx[p] as usize] += hm.values[p] * ws.impulses[r];
        }
    }
    let mut x = ws.contact_forces.clone();
    factor.solve_in_place(&mut x, 1);
    ws.dv.iter_mut().zip(&x).for_each(|(dv, a)| *dv += h * a);
}
