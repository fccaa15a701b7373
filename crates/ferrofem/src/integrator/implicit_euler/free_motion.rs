//! Stage `free_motion`: solve `A Δv = b` by PCG from the chosen initial
//! guess, stopped early by iteration count and/or relative residual
//! (zeng2022 eq. 13; dahl2019 §3.2), optionally augmented by the last
//! step-to-step difference of `Δv` (`recycled_direction`).

use ferrofem_linalg::pcg::KrylovError;
use ferrofem_linalg::{IdentityPreconditioner, Preconditioner};

use super::factorize::FactorTurn;
use super::BodyWorkspace;
use crate::body::Body;
use crate::integrator::{ImplicitEulerSettings, InitialGuess, PreconditionerKind, PreconditionerWarp};
use crate::state::BodyState;

/// Runs the stage for one body; the solution is left in `ws.dv`.
pub fn free_motion(
    body: &Body,
    state: &BodyState,
    ws: &mut BodyWorkspace,
    h: f64,
    gravity: [f64; 3],
    settings: &ImplicitEulerSettings,
) -> Result<(), KrylovError> {
    initial_guess(body, state, ws, h, gravity, settings.initial_guess);
    let damping = 1.0 + h * body.damping.mass;
    let mass_diag = |j: usize| if body.is_kinematic[j / 3] { 1.0 } else { damping } * body.mass[j / 3];
    let ldlt;
    let precond: &dyn Preconditioner = match settings.preconditioner {
        PreconditionerKind::Ldlt => {
            let turn = match (ws.warp, settings.preconditioner_warp) {
                (None, _) => FactorTurn::None,
                (Some(g), PreconditionerWarp::Body) => FactorTurn::Body(g),
                (Some(_), PreconditionerWarp::Vertex) => FactorTurn::Vertex(&ws.vertex_warp),
            };
            ldlt = ws.refactorizer.as_ref().and_then(|r| r.preconditioner(turn));
            match &ldlt {
                Some(p) => p,
                None => &IdentityPreconditioner,
            }
        }
        PreconditionerKind::Identity => &IdentityPreconditioner,
        PreconditionerKind::Mass => {
            ws.preconditioner.set((0..body.dofs()).map(mass_diag));
            &ws.preconditioner
        }
        PreconditionerKind::Jacobi => {
            let a = &ws.system;
            let p = &ws.pattern;
            ws.preconditioner.set((0..body.dofs()).map(|j| {
                let (i, r) = (j / 3, j % 3);
                let d = p.degree[i] as usize;
                a.values[p.row_block_start(i) + r * 3 * d + 3 * p.diagonal_rank[i] as usize + r]
            }));
            &ws.preconditioner
        }
    };
    let mut pcg = settings.pcg();
    if settings.initial_guess == InitialGuess::PreviousChange && ws.previous_change.is_empty() {
        // The first solve has no change to start from: one iteration from
        // `v(t)` on a rounded factor leaves a residual above ‖b‖ (the 20k
        // drop's first step: 1.9 in bfloat16), two do not.
        pcg.max_iterations = pcg.max_iterations.map(|k| k.max(2));
    }
    let recycled = Some(&ws.last_difference[..]).filter(|d| settings.recycled_direction && !d.is_empty());
    ws.solve = ws.pcg.solve_augmented(&ws.system, &ws.rhs, &mut ws.dv, precond, pcg, recycled)?;
    keep_change(body, ws, settings);
    Ok(())
}

/// Keeps this step's `Δv` for the next step's guess (`previous_change`)
/// and, with `recycled_direction`, its difference from the last one
/// (zero on kinematic vertices, whose `Δv` is prescribed).
fn keep_change(body: &Body, ws: &mut BodyWorkspace, settings: &ImplicitEulerSettings) {
    if settings.recycled_direction && ws.previous_change.len() == ws.dv.len() {
        ws.last_difference.clear();
        ws.last_difference.extend(ws.dv.iter().zip(&ws.previous_change).enumerate().map(
            |(j, (now, last))| {
                if body.is_kinematic[j / 3] {
                    0.0
                } else {
                    now - last
                }
            },
        ));
    }
    if settings.initial_guess == InitialGuess::PreviousChange || settings.recycled_direction {
        ws.previous_change.clone_from(&ws.dv);
    }
}

/// dahl2019 §3.2 initial guesses and the previous step's change, written
/// for the unknown `Δv`; kinematic vertices start at their prescribed `Δv*`.
fn initial_guess(
    body: &Body,
    state: &BodyState,
    ws: &mut BodyWorkspace,
    h: f64,
    gravity: [f64; 3],
    guess: InitialGuess,
) {
    let previous = |j: usize| ws.previous_change.get(j).copied().unwrap_or(0.0);
    for (j, dv) in ws.dv.iter_mut().enumerate() {
        let i = j / 3;
        *dv = if body.is_kinematic[i] {
            ws.prescribed_dv[j]
        } else {
            match guess {
                InitialGuess::Zero => -state.velocities[j],
                InitialGuess::PreviousVelocity => 0.0,
                InitialGuess::Explicit => h * (ws.elastic_forces[j] / body.mass[i] + gravity[j % 3]),
                InitialGuess::PreviousChange => previous(j),
            }
        };
    }
}
