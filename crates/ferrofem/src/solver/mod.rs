//! Constraint solvers in constraint space (zeng2022 §3.3): the per-contact
//! Signorini–Coulomb resolution and projected Gauss-Seidel over contacts,
//! behind one settings enum ([`ConstraintSolver`]) and one stage
//! ([`solve_constraints`]).
//!
//! Conventions (docs/architecture.md): the local problem of a group is
//! `δ = d + W λ`; a gap `δₙ ≥ 0` means separated; `λₙ ≥ 0` pushes apart;
//! friction obeys `‖λₜ‖ ≤ μ λₙ` and opposes the tangential motion `δₜ`.

pub mod coulomb;
pub mod pgs;
mod settings;

use std::collections::HashMap;

use nalgebra::Vector3;

pub use coulomb::{resolve_contact, ContactState};
pub use pgs::{AssembledDelassus, ConstraintGroup, DelassusOperator, Pgs, PgsSettings, PgsSolve};
pub use settings::{ConstraintSolver, ConstraintSolverSettings};

use crate::constraint::{Compliance, ConstraintSpace, GroupKey};
use crate::delassus::{MixedDelassus, UnbuiltBody};

/// What the last constraint solve did (sweeps and final relative change of λ).
pub type ConstraintSolve = PgsSolve;

/// Stage `solve_constraints` (zeng2022 eq. 14–16): `δ_free = offset +
/// Σ w h frame·v_free − obstacle shift` per row, `v_free(b, dof)` being the
/// free-motion velocity, then the settings' solver warm-started from
/// `warm_start` by key, on the assembled `W` plus the unbuilt bodies'
/// `h² H_b A_b⁻¹ H_bᵀ`; `warm_start` is replaced by this step's λ.
pub fn solve_constraints(
    space: &mut ConstraintSpace,
    warm_start: &mut HashMap<GroupKey, [f64; 3]>,
    v_free: impl Fn(usize, usize) -> f64,
    compliances: &[Option<Compliance>],
    h: f64,
    settings: &ConstraintSolverSettings,
) {
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
        blocks,
    } = space;
    free_gaps.clear();
    impulses.clear();
    for g in groups.iter() {
        for (row, dir) in g.frame.iter().enumerate() {
            let mut delta = g.offset[row] - g.obstacle_shift[row];
            for (b, pts) in g.parts() {
                for &(i, wgt) in pts.iter() {
                    delta += wgt * h * (0..3).map(|d| dir[d] * v_free(*b, 3 * i + d)).sum::<f64>();
                }
            }
            free_gaps.push(delta);
        }
        impulses.extend_from_slice(&warm_start.get(&g.key).copied().unwrap_or([0.0; 3]));
    }
    laws.clear();
    laws.extend(groups.iter().map(|g| g.law));
    let ConstraintSolver::Pgs(pgs) = settings.solver;
    let pgs = Pgs { settings: pgs };
    (*solve, *violation) = if unbuilt.is_empty() {
        let mut w = AssembledDelassus(delassus);
        let out = pgs.solve_in(&mut w, free_gaps, laws, impulses, blocks);
        (out, max_violation(&w, free_gaps, laws, impulses))
    } else {
        let parts = unbuilt
            .iter()
            .map(|&b| {
                let f = compliances[b]
                    .as_ref()
                    .and_then(Compliance::factor)
                    .expect("unbuilt bodies are factorized");
                UnbuiltBody::new(f, &bodies[b].jacobian, &bodies[b].rows)
            })
            .collect();
        let assembled = (!delassus.is_empty()).then_some(delassus.as_slice());
        let mut op = MixedDelassus::new(free_gaps.len(), assembled, parts, h, impulses);
        let out = pgs.solve_in(&mut op, free_gaps, laws, impulses, blocks);
        (out, max_violation(&op, free_gaps, laws, impulses))
    };
    warm_start.clear();
    warm_start
        .extend(groups.iter().enumerate().map(|(k, g)| (g.key, [0, 1, 2].map(|d| impulses[3 * k + d]))));
}

/// `δ = δ_free + W λ` per group: the largest attachment miss `|δ|` or
/// contact penetration `max(0, −δₙ)` (m).
fn max_violation(w: &impl DelassusOperator, free: &[f64], laws: &[ConstraintGroup], lambda: &[f64]) -> f64 {
    laws.iter()
        .enumerate()
        .map(|(k, law)| {
            let d = w.rows_times(3 * k, lambda) + Vector3::from_column_slice(&free[3 * k..3 * k + 3]);
            match law {
                ConstraintGroup::Attachment => d.norm(),
                ConstraintGroup::Contact { .. } => (-d[0]).max(0.0),
            }
        })
        .fold(0.0, f64::max)
}
