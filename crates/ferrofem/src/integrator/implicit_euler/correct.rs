//! Stage `correct` (zeng2022 eq. 17): `Δv ← Δv_free + h A⁻¹ Hᵀ λ`, with
//! the same compliance that built `W`, so the corrected motion is
//! consistent with the gaps the constraint solver computed.

use super::BodyWorkspace;
use crate::constraint::{BodyRows, Compliance};

/// Runs the stage for one body with the world's λ: `Hᵀλ` (N per DOF) is
/// kept in `rows.forces`, and `h A⁻¹ Hᵀ λ` is added to `ws.dv`.
pub fn correct(
    ws: &mut BodyWorkspace,
    rows: &mut BodyRows,
    compliance: &Compliance,
    impulses: &[f64],
    h: f64,
) {
    rows.correction(compliance, impulses, &mut ws.correction);
    apply(ws, h);
}

/// `Δv += h A⁻¹ Hᵀ λ` with `A⁻¹ Hᵀ λ` already in `ws.correction` (the
/// standard recursive corrective motion solves it in its last iteration).
pub fn apply(ws: &mut BodyWorkspace, h: f64) {
    ws.dv.iter_mut().zip(&ws.correction).for_each(|(dv, a)| *dv += h * a);
}
