//! Stage `build_delassus` over the whole space: each body's `W_b` by its
//! compliance, assembled into `W` or kept factored (zeng2022 eq. 12;
//! zeng2025 §5).

use rayon::prelude::*;

use super::space::ConstraintSpace;
use crate::constraint::Compliance;
use crate::constraint::ConstraintProblem;
use crate::delassus::{Delassus, DelassusMethod};
use crate::device::DeviceError;

/// Stage `build_delassus` (zeng2022 eq. 12): `W += h² H_b A_b⁻¹ H_bᵀ` for
/// every body with rows, by the body's compliance and `method`; bodies
/// left unbuilt are listed for the solver, which applies them through
/// their factor; `assembled`: every body's part is built (the non-smooth
/// Newton needs `W` itself). A device build's failure is returned.
pub fn build_delassus(
    space: &mut ConstraintSpace,
    compliances: &[Option<Compliance>],
    h: f64,
    method: DelassusMethod,
    assembled: bool,
) -> Result<(), DeviceError> {
    let ConstraintProblem { groups, bodies, .. } = &mut space.problem;
    let Delassus { assembled: delassus, single: delassus_single, unbuilt, factored } = &mut space.delassus;
    let solve = &space.outcome.solve;
    let c = 3 * groups.len();
    delassus.clear();
    delassus_single.clear();
    factored.reset(c);
    unbuilt.clear();
    let sweeps = solve.iterations.max(10) as f64;
    for (b, body) in bodies.iter_mut().enumerate().filter(|(_, r)| !r.is_empty()) {
        let compliance = compliances[b].as_ref().expect("bodies with constraints have a compliance");
        let (compliance, rows) = compliance.factor_frame(&body.jacobian, &mut body.factor_rows);
        let wb = body.delassus.build(&compliance, rows, method, sweeps, assembled)?;
        if wb.is_empty() {
            unbuilt.push(b);
            continue;
        }
        if delassus.is_empty() {
            delassus.resize(c * c, 0.0);
        }
        add_rows(delassus, c, &body.rows, wb, h * h);
    }
    Ok(())
}

/// Stage `build_delassus` for the non-smooth Newton under local-global
/// (zeng2025 eq. 26–27): each body's `h² W̄_b` over its rows' vertices,
/// `W` kept in factored form ([`crate::delassus::FactoredDelassus`]) and never assembled.
/// `false`, with nothing built, where a body's compliance is not
/// `A_s ⊗ I₃` or `method` is `dense`: then [`build_delassus`] assembles it.
pub fn build_delassus_factored(
    space: &mut ConstraintSpace,
    compliances: &[Option<Compliance>],
    h: f64,
    method: DelassusMethod,
) -> bool {
    let ConstraintProblem { groups, bodies, .. } = &mut space.problem;
    let Delassus { assembled: delassus, single: delassus_single, unbuilt, factored } = &mut space.delassus;
    delassus.clear();
    delassus_single.clear();
    unbuilt.clear();
    factored.reset(3 * groups.len());
    for (b, body) in bodies.iter_mut().enumerate().filter(|(_, r)| !r.is_empty()) {
        let compliance = compliances[b].as_ref().expect("bodies with constraints have a compliance");
        let rows = &body.rows;
        if !body.delassus.build_factored(compliance, &body.jacobian, rows, method, h * h, factored) {
            factored.reset(3 * groups.len());
            return false;
        }
    }
    factored.is_built()
}

/// `W[rows[i], rows[j]] += s · W_b[i, j]` (`W` row-major `c × c`, `W_b`
/// row-major over `rows`): its rows side by side when `rows` are
/// distinct; in order otherwise (a self-contact lists a row once per side).
fn add_rows(w: &mut [f64], c: usize, rows: &[usize], wb: &[f64], s: f64) {
    let m = rows.len();
    let mut of_row = vec![usize::MAX; c];
    let distinct = rows.iter().enumerate().all(|(i, &g)| std::mem::replace(&mut of_row[g], i) == usize::MAX);
    if !distinct {
        for (i, &gi) in rows.iter().enumerate() {
            for (j, &gj) in rows.iter().enumerate() {
                w[gi * c + gj] += s * wb[i * m + j];
            }
        }
        return;
    }
    w.par_chunks_mut(c.max(1)).zip(&of_row).filter(|(_, &i)| i != usize::MAX).for_each(|(wr, &i)| {
        for (&gj, &x) in rows.iter().zip(&wb[i * m..(i + 1) * m]) {
            wr[gj] += s * x;
        }
    });
}
