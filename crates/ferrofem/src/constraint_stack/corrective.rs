//! Recursive corrective motion (zeng-implicit §5–6, Algorithms 2–3): the
//! constraints are linearized at the start of the step, solved, and then
//! re-linearized at the corrected positions, a few Newton iterations per
//! step, so that directions that turn within the step (a grasped body
//! twisted fast, a contact sliding over a curved surface) are met at its
//! end.
//!
//! Iteration `k` solves `δ = δ_k + W_k λ` for the step's *whole* force
//! `λ` in the directions `C_k` (a group's normal and tangents) linearized
//! at the last iterate; the iterate is then `x_k = x_free + h² A⁻¹ H_kᵀ λ`.
//! (The paper sums increments `λ_k`; each of those would be held to push,
//! `λ_k ≥ 0`, and could not take back force that an earlier linearization
//! overestimated. Solving for the whole force keeps Signorini–Coulomb exact
//! in the final directions and makes one iteration the explicit scheme.)
//!
//! Two ways to form `W_k` and `x_k`:
//! - `standard` (Algorithm 2): `W_k = h² H_k A⁻¹ H_kᵀ` by the Delassus
//!   builders and `A⁻¹ H_kᵀ λ` by the bodies' compliances, every iteration;
//! - `fast` (Algorithm 3): with `H_k = C_k H` (eq. 27) and `H` the mapping
//!   to the proximity vertices, `W_H = h² H A⁻¹ Hᵀ` once per step (eq. 28),
//!   then `W_k = C_k W_H C_kᵀ` and `x_k = x_free + W_H C_kᵀ λ` (eq. 31):
//!   products only, `A⁻¹` never applied inside the loop.

use std::collections::HashMap;
use std::time::Instant;

use nalgebra::Vector3;
use rayon::prelude::*;

use super::build::{build_delassus, WForms};
use super::solve::{keep_warm_start, solve_in_space, warm_started};
use super::space::ConstraintSpace;
use crate::constraint::proximity::{linearize, relinearize, turn, violation};
use crate::constraint::{transpose_times, Compliance, GroupKey};
use crate::delassus::{expand, DelassusMethod, SlotMatrix};
use crate::device::DeviceError;
use crate::solver::corrective::{CorrectiveRecord, CorrectiveScratch};
use crate::solver::{row_gaps, ConstraintSolver, ImplicitResolution, Update};
use crate::stage::{Stage, StageTimes};
use crate::Model;

/// The inputs of the step that the corrective motion reads.
pub struct Motion<'a, F: Fn(usize, usize) -> f64> {
    /// Start-of-step positions per body (m).
    pub start: Vec<&'a [f64]>,
    /// Free-motion velocity of (body, DOF) (m/s).
    pub v_free: F,
    /// Start time of the step (s).
    pub t: f64,
}

/// Recursive corrective motion over `space`'s groups (assembled by
/// `assemble_constraints`), warm-started by key from `warm_start` (which
/// receives the final λ). On return the groups hold the last directions,
/// each body's rows are collected along them, and `space.problem.impulses` holds
/// λ. Under the `standard` update `corrections[b]` holds
/// `A_b⁻¹ H_bᵀ λ` for the final λ (it is computed in the last iteration);
/// under `fast` the correction stage still has to apply it. A device
/// build's failure is returned.
#[allow(clippy::too_many_arguments)]
pub fn resolve_recursively<F: Fn(usize, usize) -> f64 + Copy>(
    space: &mut ConstraintSpace,
    warm_start: &mut HashMap<GroupKey, [f64; 3]>,
    compliances: &[Option<Compliance>],
    model: &Model,
    motion: &Motion<'_, F>,
    settings: ImplicitResolution,
    solver: ConstraintSolver,
    corrections: &mut [Vec<f64>],
    times: &mut StageTimes,
) -> Result<CorrectiveRecord, DeviceError> {
    let h = model.time_step;
    let method = model.constraint_solver.delassus;
    let mut scratch = std::mem::take(&mut space.workspace.corrective);
    scratch.proximity.gather(&space.problem.groups, |b| motion.start[b], motion.v_free, h);
    if settings.update == Update::Fast {
        scratch.proximity.assemble_body_rows(model.bodies.iter().map(|b| b.dofs()));
    }
    let p = &scratch.proximity;
    scratch.starts.clear();
    scratch.starts.extend(space.problem.groups.iter().map(|g| p.point(&p.start, g)));
    warm_started(space, warm_start);
    let mut rec = CorrectiveRecord { update: settings.update.name(), ..Default::default() };
    for k in 1..=settings.newton_iterations {
        rec.iterations = k;
        let built = match settings.update {
            Update::Standard => {
                let into = if k == 1 { &mut rec.build_ms } else { &mut rec.rebuild_ms };
                timed(times, Stage::BuildDelassus, into, || {
                    build_delassus(space, compliances, h, method, WForms::Assembled)
                })
            }
            Update::Fast => {
                let mapped = match k {
                    1 => timed(times, Stage::BuildDelassus, &mut rec.build_ms, || {
                        build_mapping(space, &mut scratch, compliances, h, method)
                    }),
                    _ => Ok(()),
                };
                timed(times, Stage::BuildDelassus, &mut rec.rebuild_ms, || rebuild(space, &mut scratch));
                mapped
            }
        };
        if let Err(e) = built {
            space.workspace.corrective = scratch;
            return Err(e);
        }
        timed(times, Stage::SolveConstraints, &mut rec.solve_ms, || {
            row_gaps(&space.problem.groups, h, motion.v_free, &mut space.problem.free_gaps);
            solve_in_space(space, compliances, model, solver);
        });
        timed(times, Stage::Correct, &mut rec.correction_ms, || {
            iterate(space, &mut scratch, compliances, settings.update, h, corrections)
        });
        let (turned, violated) = linearize_all(space, &mut scratch, model, motion.t);
        if k == 1 {
            rec.violation_before = violated;
        }
        (rec.direction_change, rec.violation_after) = (turned, violated);
        let converged = turned <= settings.direction_tolerance && violated <= settings.violation_tolerance;
        if k == settings.newton_iterations || converged {
            break;
        }
        relinearize_all(space, &scratch);
    }
    keep_warm_start(space, warm_start);
    space.workspace.corrective = scratch;
    Ok(rec)
}

/// Runs `f` as part of `stage`, adding its milliseconds to `into` too.
fn timed<T>(times: &mut StageTimes, stage: Stage, into: &mut f64, f: impl FnOnce() -> T) -> T {
    let start = Instant::now();
    let out = times.time(stage, f);
    *into += start.elapsed().as_secs_f64() * 1e3;
    out
}

/// `W_H = h² H A⁻¹ Hᵀ` (eq. 28) on the proximity DOFs: each body's block
/// by the Delassus builders (`method`, always assembled) on the rows of its
/// proximity vertices; bodies do not couple.
fn build_mapping(
    space: &mut ConstraintSpace,
    scratch: &mut CorrectiveScratch,
    compliances: &[Option<Compliance>],
    h: f64,
    method: DelassusMethod,
) -> Result<(), DeviceError> {
    let p = &scratch.proximity;
    let n = 3 * p.vertices.len();
    scratch.mapping.clear();
    scratch.mapping.resize(n * n, 0.0);
    let sweeps = space.outcome.solve.iterations.max(10) as f64;
    for (b, rows) in p.body_rows.iter().enumerate().filter(|(_, r)| r.nrows() > 0) {
        let compliance = compliances[b].as_ref().expect("bodies with constraints have a compliance");
        let body = &mut space.problem.bodies[b];
        let (compliance, rows) = compliance.factor_frame(rows, &mut body.factor_rows);
        let wb = body.delassus.build(&compliance, rows, method, sweeps, true, h * h)?;
        let first = 3 * p.vertices.partition_point(|&(c, _)| c < b);
        let m = rows.nrows();
        for i in 0..m {
            let row = &mut scratch.mapping[(first + i) * n + first..(first + i) * n + first + m];
            row.copy_from_slice(&wb[i * m..(i + 1) * m]);
        }
    }
    Ok(())
}

/// `W_k = J_k W_H J_kᵀ` with `J_k = C_k Ĥ` (Algorithm 3, line 2) into
/// `space.delassus.assembled` as one block (`W_H` couples every row).
fn rebuild(space: &mut ConstraintSpace, scratch: &mut CorrectiveScratch) {
    let n = 3 * scratch.proximity.vertices.len();
    scratch.proximity.assemble_jacobian(&space.problem.groups);
    let wh = SlotMatrix { values: &scratch.mapping, ld: n, len: n };
    let w = space.delassus.assembled.whole_mut(space.problem.groups.len());
    expand(&scratch.proximity.jacobian, |d| d, &wh, 1.0, w);
    space.delassus.unbuilt.clear();
    space.delassus.apart.clear();
}

/// The iterate at the proximity vertices for the solved λ: `x_free + W_H
/// J_kᵀ λ` (fast, eq. 31), or `x_free + h² A_b⁻¹ H_bᵀ λ` per body with
/// the correction kept in `corrections[b]` (standard).
fn iterate(
    space: &mut ConstraintSpace,
    scratch: &mut CorrectiveScratch,
    compliances: &[Option<Compliance>],
    update: Update,
    h: f64,
    corrections: &mut [Vec<f64>],
) {
    let p = &mut scratch.proximity;
    let n = 3 * p.vertices.len();
    match update {
        Update::Fast => {
            scratch.u.resize(n, 0.0);
            transpose_times(&p.jacobian, &space.problem.impulses, &mut scratch.u);
            let (wh, u) = (&scratch.mapping, &scratch.u);
            p.current.par_iter_mut().zip(&p.free).enumerate().for_each(|(i, (x, free))| {
                *x = free + wh[i * n..(i + 1) * n].iter().zip(u).map(|(w, u)| w * u).sum::<f64>();
            });
        }
        Update::Standard => {
            for (b, rows) in space.problem.bodies.iter_mut().enumerate() {
                corrections[b].clear();
                if let Some(c) = compliances[b].as_ref().filter(|_| !rows.is_empty()) {
                    rows.correction(c, &space.problem.impulses, &mut corrections[b]);
                }
            }
            for (i, &(b, v)) in p.vertices.iter().enumerate() {
                for d in 0..3 {
                    let dx = corrections[b].get(3 * v + d).map_or(0.0, |c| h * h * c);
                    p.current[3 * i + d] = p.free[3 * i + d] + dx;
                }
            }
        }
    }
}

/// Each contact's linearization at the iterate; returns the largest turn
/// of a normal (rad) and the largest violation (m) there.
fn linearize_all(
    space: &ConstraintSpace,
    scratch: &mut CorrectiveScratch,
    model: &Model,
    t: f64,
) -> (f64, f64) {
    let p = &scratch.proximity;
    scratch.linearizations.clear();
    scratch.linearizations.extend(space.problem.groups.iter().map(|g| linearize(g, p, &p.current, model, t)));
    let (mut turned, mut violated) = (0.0f64, 0.0f64);
    for (k, (g, lin)) in space.problem.groups.iter().zip(&scratch.linearizations).enumerate() {
        if let Some(lin) = lin {
            turned = turned.max(turn(&g.frame, lin));
            violated = violated.max(violation(lin, space.problem.impulses[3 * k]));
        }
    }
    (turned, violated)
}

/// The groups re-linearized at the iterate (Algorithm 2–3, line 1), each
/// body's rows `H_b = C_b H` collected along the new frames, and λ turned
/// into them, `λ ← C_{k+1} C_kᵀ λ`, as the next warm start.
fn relinearize_all(space: &mut ConstraintSpace, scratch: &CorrectiveScratch) {
    let p = &scratch.proximity;
    for (k, g) in space.problem.groups.iter_mut().enumerate() {
        let Some(lin) = &scratch.linearizations[k] else { continue };
        let lambda = &mut space.problem.impulses[3 * k..3 * k + 3];
        let force: Vector3<f64> = (0..3).map(|d| Vector3::from(g.frame[d]) * lambda[d]).sum();
        relinearize(g, lin, &p.point(&p.current, g), &scratch.starts[k]);
        (0..3).for_each(|d| lambda[d] = Vector3::from(g.frame[d]).dot(&force));
    }
    for (b, rows) in space.problem.bodies.iter_mut().enumerate() {
        rows.collect(b, &space.problem.groups);
    }
}
