//! Stage `build_delassus` over the whole space: each body's `W_b` by its
//! compliance, assembled into `W` or kept factored (zeng2022 eq. 12;
//! zeng2025 §5).

use super::space::ConstraintSpace;
use rayon::prelude::*;

use crate::constraint::{BodyRows, Compliance, ConstraintProblem};
use crate::delassus::{worth_keeping_apart, Delassus, DelassusMethod};
use crate::device::DeviceError;

/// The forms [`build_delassus`] may leave `W` in, as what reads it allows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WForms {
    /// Every body's part assembled by blocks (the non-smooth Newton and the
    /// corrective motion read `W` itself).
    Assembled,
    /// `auto` may also leave a body unbuilt (PGS on a rounded copy, which
    /// is made of assembled blocks).
    MayLeaveUnbuilt,
    /// As `MayLeaveUnbuilt`, and a pile's parts may be kept apart by body
    /// when that stores far fewer entries ([`worth_keeping_apart`]; PGS in
    /// double).
    MayKeepApart,
}

/// Stage `build_delassus` (zeng2022 eq. 12): `W += h² H_b A_b⁻¹ H_bᵀ` for
/// every body with rows, by the body's compliance and `method`, kept by
/// blocks of coupled groups ([`crate::delassus::DelassusBlocks`]; a body
/// alone in its block hands its `W_b` over without a copy); bodies
/// left unbuilt are listed for the solver, which applies them through
/// their factor, and bodies kept apart likewise, as `forms` allows. A
/// device build's failure is returned.
pub fn build_delassus(
    space: &mut ConstraintSpace,
    compliances: &[Option<Compliance>],
    h: f64,
    method: DelassusMethod,
    forms: WForms,
) -> Result<(), DeviceError> {
    let ConstraintProblem { groups, bodies, .. } = &mut space.problem;
    let Delassus { assembled: delassus, unbuilt, factored, apart: kept_apart } = &mut space.delassus;
    let solve = &space.outcome.solve;
    let pairs = groups.iter().map(|g| (g.parts()[0].0, g.parts()[g.parts().len() - 1].0));
    delassus.partition(pairs, bodies.len());
    factored.reset(3 * groups.len());
    unbuilt.clear();
    kept_apart.clear();
    let sweeps = solve.iterations.max(10) as f64;
    let assembled = forms == WForms::Assembled;
    // The bodies' parts side by side (a pile of small bodies gives each
    // build too little to split), then added in body order: the same `W`.
    let built: Vec<_> = bodies
        .par_iter_mut()
        .enumerate()
        .filter(|(_, r)| !r.is_empty())
        .map(|(b, body)| {
            let compliance = compliances[b].as_ref().expect("bodies with constraints have a compliance");
            let BodyRows { jacobian, factor_rows, delassus, .. } = body;
            let (compliance, frame) = compliance.factor_frame(jacobian, factor_rows);
            delassus.build(&compliance, frame, method, sweeps, assembled, h * h).map(|w| (b, !w.is_empty()))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let body_rows = || built.iter().map(|&(b, _)| bodies[b].rows.len());
    let block_rows = delassus.blocks().iter().map(|k| k.rows());
    if forms == WForms::MayKeepApart
        && built.iter().all(|&(_, w)| w)
        && worth_keeping_apart(body_rows(), block_rows)
    {
        kept_apart.extend(built.iter().map(|&(b, _)| b));
        return Ok(());
    }
    for built in built {
        match built {
            (b, true) => {
                let body = &mut bodies[b];
                delassus.add_body(b, &body.rows, body.delassus.buffers.w_mut());
            }
            (b, false) => unbuilt.push(b),
        }
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
    let Delassus { assembled: delassus, unbuilt, factored, apart } = &mut space.delassus;
    delassus.clear();
    unbuilt.clear();
    apart.clear();
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
