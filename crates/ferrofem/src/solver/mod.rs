//! Constraint solvers in constraint space (zeng2022 §3.3): the per-contact
//! Signorini–Coulomb resolution, projected Gauss-Seidel over contacts and
//! the non-smooth Newton method of zeng2025 §5,
//! behind one settings enum ([`ConstraintSolver`]) and one stage
//! ([`solve_constraints`]).
//!
//! Conventions (docs/architecture.md): the local problem of a group is
//! `δ = d + W λ`; a gap `δₙ ≥ 0` means separated; `λₙ ≥ 0` pushes apart;
//! friction obeys `‖λₜ‖ ≤ μ λₙ` and opposes the tangential motion `δₜ`.

pub mod corrective;
pub mod coulomb;
#[cfg(feature = "gpu")]
pub mod device;
pub mod newton;
pub mod pgs;
mod settings;

use std::collections::HashMap;

use nalgebra::Vector3;

pub use coulomb::{resolve_contact, ContactState};
pub use newton::{
    Complementarity, ComplementarityScale, NewtonSchedule, NewtonScratch, NewtonSettings, NewtonSolve,
};
pub use pgs::{AssembledDelassus, ConstraintGroup, DelassusOperator, Pgs, PgsScratch, PgsSettings, PgsSolve};

use ferrofem_linalg::Precision;
pub(crate) use settings::non_negative;
pub use settings::{ConstraintSolver, ConstraintSolverSettings, ImplicitResolution, Resolution, ResolutionKind, Update};

use serde::Serialize;

use crate::constraint::{Compliance, ConstraintSpace, Group, GroupKey};
use crate::delassus::{MixedDelassus, UnbuiltBody};
use crate::Model;

/// What the last constraint solve did: sweeps (PGS) or Newton steps, the
/// final relative change of λ, and for the non-smooth Newton its CR
/// iterations and NCP residual.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct ConstraintSolve {
    /// `pgs` or `non-smooth-newton`.
    pub method: &'static str,
    /// PGS sweeps or Newton steps.
    pub iterations: usize,
    /// Final `‖Δλ‖∞ / ‖λ‖∞`.
    pub error: f64,
    /// Conjugate-residual iterations (non-smooth Newton).
    pub linear_iterations: usize,
    /// `‖Φ‖∞` at the start of the last Newton step (m; 0 for PGS).
    pub residual: f64,
}

/// Stage `solve_constraints` (zeng2022 eq. 14–16): `δ_free = offset +
/// Σ w h frame·v_free − obstacle shift` per row, `v_free(b, dof)` being the
/// free-motion velocity, then the solver warm-started from `warm_start` by
/// key ([`solve_in_space`]); `warm_start` is replaced by this step's λ.
pub fn solve_constraints(
    space: &mut ConstraintSpace,
    warm_start: &mut HashMap<GroupKey, [f64; 3]>,
    v_free: impl Fn(usize, usize) -> f64,
    compliances: &[Option<Compliance>],
    model: &Model,
    solver: ConstraintSolver,
) {
    let h = model.time_step;
    row_gaps(&space.groups, h, v_free, &mut space.free_gaps);
    warm_started(space, warm_start);
    solve_in_space(space, compliances, model, solver);
    keep_warm_start(space, warm_start);
}

/// λ of the groups from `warm_start` by key (zero for a new group).
pub fn warm_started(space: &mut ConstraintSpace, warm_start: &HashMap<GroupKey, [f64; 3]>) {
    space.impulses.clear();
    for g in space.groups.iter() {
        space.impulses.extend_from_slice(&warm_start.get(&g.key).copied().unwrap_or([0.0; 3]));
    }
}

/// `δ` per row for the displacement `scale · u(b, dof)` of the bodies over
/// the step (zeng2022 eq. 14 with `u` the free velocity and `scale = h`;
/// zeng2025 eq. 40 with `u` the displacement): `offset + Σ w scale frame·u −
/// obstacle shift` — the gap of normal rows and attachments, the slip of
/// friction rows.
pub fn row_gaps(groups: &[Group], scale: f64, u: impl Fn(usize, usize) -> f64, out: &mut Vec<f64>) {
    out.clear();
    for g in groups {
        for (row, dir) in g.frame.iter().enumerate() {
            let mut delta = g.offset[row] - g.obstacle_shift[row];
            for (b, pts) in g.parts() {
                for &(i, wgt) in pts.iter() {
                    delta += wgt * scale * (0..3).map(|d| dir[d] * u(*b, 3 * i + d)).sum::<f64>();
                }
            }
            out.push(delta);
        }
    }
}

/// Replaces `warm_start` by the groups' λ.
pub fn keep_warm_start(space: &ConstraintSpace, warm_start: &mut HashMap<GroupKey, [f64; 3]>) {
    warm_start.clear();
    let lambda = &space.impulses;
    warm_start
        .extend(space.groups.iter().enumerate().map(|(k, g)| (g.key, [0, 1, 2].map(|d| lambda[3 * k + d]))));
}

/// Solves `δ = δ_free + W λ` under the groups' laws from the λ in
/// `space.impulses` (the warm start), on the assembled `W` plus the
/// unbuilt bodies' `h² H_b A_b⁻¹ H_bᵀ`; sets `space.solve` and
/// `space.violation`.
pub fn solve_in_space(
    space: &mut ConstraintSpace,
    compliances: &[Option<Compliance>],
    model: &Model,
    solver: ConstraintSolver,
) {
    let h = model.time_step;
    let ConstraintSpace {
        groups,
        bodies,
        delassus,
        unbuilt,
        free_gaps,
        impulses,
        solve,
        violation,
        laws,
        pgs: pgs_scratch,
        scale,
        newton,
        delassus_single: single,
        factored,
        ..
    } = space;
    laws.clear();
    laws.extend(groups.iter().map(|g| g.law));
    let pgs = match solver {
        ConstraintSolver::Pgs(p) => Pgs { settings: p },
        ConstraintSolver::NonSmoothNewton(settings) => {
            assert!(unbuilt.is_empty(), "the non-smooth Newton needs an assembled W");
            let out = if factored.is_built() {
                let diagonal = |j| factored.block_entry(j, j);
                complementarity_scale(groups, diagonal, model, settings.preconditioner, scale);
                // Every iteration's product is short: one worker is held
                // for the whole solve instead of woken for each.
                ferrofem_linalg::team::with_team(|| {
                    settings.solve(factored, free_gaps, laws, scale, impulses, newton)
                })
            } else {
                let c = free_gaps.len();
                let diagonal = |j| delassus[j * c + j];
                complementarity_scale(groups, diagonal, model, settings.preconditioner, scale);
                let mut pair = newton::DelassusPair { double: delassus, single: rounded(delassus, single) };
                settings.solve(&mut pair, free_gaps, laws, scale, impulses, newton)
            };
            *violation = laws
                .iter()
                .zip(newton.gaps().chunks_exact(3))
                .map(|(law, d)| group_violation(law, Vector3::from_column_slice(d)))
                .fold(0.0, f64::max);
            *solve = ConstraintSolve {
                method: "non-smooth-newton",
                iterations: out.iterations,
                error: out.error,
                linear_iterations: out.linear_iterations,
                residual: out.residual,
            };
            return;
        }
    };
    let pgs_solve;
    (pgs_solve, *violation) = if unbuilt.is_empty() {
        let out = match pgs.settings.precision {
            Precision::Double => {
                pgs.solve_assembled(delassus, delassus, free_gaps, laws, impulses, pgs_scratch)
            }
            Precision::Single | Precision::Bfloat16 => pgs.solve_assembled(
                rounded(delassus, single),
                delassus,
                free_gaps,
                laws,
                impulses,
                pgs_scratch,
            ),
        };
        (out, max_violation(&AssembledDelassus(delassus), free_gaps, laws, impulses))
    } else {
        let parts = unbuilt
            .iter()
            .map(|&b| {
                let c = compliances[b].as_ref().expect("unbuilt bodies have a compliance");
                let f = c.factor().expect("unbuilt bodies are factorized");
                // A warped factor works on the rows in its frame, `H G`.
                let rows = if c.warp().is_some() { &bodies[b].factor_rows } else { &bodies[b].jacobian };
                UnbuiltBody::new(f, rows, &bodies[b].rows)
            })
            .collect();
        let assembled = (!delassus.is_empty()).then_some(delassus.as_slice());
        let mut op = MixedDelassus::new(free_gaps.len(), assembled, parts, h, impulses);
        let out = pgs.solve_in(&mut op, free_gaps, laws, impulses, pgs_scratch.blocks());
        (out, max_violation(&op, free_gaps, laws, impulses))
    };
    *solve = ConstraintSolve {
        method: "pgs",
        iterations: pgs_solve.iterations,
        error: pgs_solve.error,
        ..Default::default()
    };
}

/// `W` rounded to f32, made on first use after `W` changed (whatever
/// writes `W` empties `single`).
fn rounded<'a>(delassus: &[f64], single: &'a mut Vec<f32>) -> &'a [f32] {
    if single.is_empty() {
        newton::round_to_single(delassus, single);
    }
    single
}

/// The complementarity scale `r` per row (zeng2025 §5.4): the diagonal
/// `W_jj` of `h² H A⁻¹ Hᵀ` (eq. 28), or `h² Σ w²/m` of the points'
/// vertices (Macklin et al. 2019's `h² [H M⁻¹ Hᵀ]_jj`, the same for a
/// group's three unit rows).
fn complementarity_scale(
    groups: &[Group],
    diagonal: impl Fn(usize) -> f64,
    model: &Model,
    kind: ComplementarityScale,
    r: &mut Vec<f64>,
) {
    let c = 3 * groups.len();
    r.clear();
    match kind {
        ComplementarityScale::SystemInverse => r.extend((0..c).map(diagonal)),
        ComplementarityScale::MassInverse => {
            let h2 = model.time_step * model.time_step;
            for g in groups {
                let mass = |b: usize, v: usize| model.bodies[b].mass[v];
                let s: f64 =
                    g.parts().iter().flat_map(|(b, p)| p.iter().map(|&(v, wt)| wt * wt / mass(*b, v))).sum();
                r.extend([h2 * s; 3]);
            }
        }
    }
}

/// `δ = δ_free + W λ` per group: the largest attachment miss `|δ|` or
/// contact penetration `max(0, −δₙ)` (m).
fn max_violation(w: &impl DelassusOperator, free: &[f64], laws: &[ConstraintGroup], lambda: &[f64]) -> f64 {
    laws.iter()
        .enumerate()
        .map(|(k, law)| {
            group_violation(
                law,
                w.rows_times(3 * k, lambda) + Vector3::from_column_slice(&free[3 * k..3 * k + 3]),
            )
        })
        .fold(0.0, f64::max)
}

/// A group's violation at `δ`: an attachment's miss `|δ|`, a contact's
/// penetration `max(0, −δₙ)` (m).
fn group_violation(law: &ConstraintGroup, d: Vector3<f64>) -> f64 {
    match law {
        ConstraintGroup::Attachment => d.norm(),
        ConstraintGroup::Contact { .. } => (-d[0]).max(0.0),
    }
}
