//! Constraint solvers in constraint space (zeng2022 §3.3): the per-contact
//! Signorini–Coulomb resolution, projected Gauss-Seidel over contacts and
//! the non-smooth Newton method of zeng2025 §5,
//! behind one settings enum ([`ConstraintSolver`]) and one stage
//! ([`crate::constraint_stack::solve_constraints`]).
//!
//! Conventions (docs/architecture.md): the local problem of a group is
//! `δ = d + W λ`; a gap `δₙ ≥ 0` means separated; `λₙ ≥ 0` pushes apart;
//! friction obeys `‖λₜ‖ ≤ μ λₙ` and opposes the tangential motion `δₜ`.

pub mod corrective;
pub mod coulomb;
mod method;
pub mod newton;
mod outcome;
pub mod pgs;
mod settings;
mod workspace;

use nalgebra::Vector3;

pub use coulomb::{resolve_contact, ContactState};
pub use newton::{
    Complementarity, ComplementarityScale, NewtonSchedule, NewtonScratch, NewtonSettings, NewtonSolve,
};
pub use pgs::{AssembledDelassus, DelassusOperator, Pgs, PgsScratch, PgsSettings, PgsSolve};

pub use method::SolverMethod;
pub use outcome::SolveOutcome;
pub(crate) use settings::non_negative;
pub use settings::{
    ConstraintSolver, ConstraintSolverSettings, ImplicitResolution, Resolution, ResolutionKind, Update,
};
pub use workspace::{BlockScratch, SolverWorkspace};

use serde::Serialize;

use crate::constraint::{ConstraintGroup, Group};
use crate::Model;

/// What the last constraint solve did: sweeps (PGS) or Newton steps, the
/// final relative change of λ, and for the non-smooth Newton its CR
/// iterations and NCP residual.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct ConstraintSolve {
    /// PGS or the non-smooth Newton.
    pub method: SolverMethod,
    /// PGS sweeps or Newton steps.
    pub iterations: usize,
    /// Final `‖Δλ‖∞ / ‖λ‖∞`.
    pub error: f64,
    /// Conjugate-residual iterations (non-smooth Newton).
    pub linear_iterations: usize,
    /// `‖Φ‖∞` at the start of the last Newton step (m; 0 for PGS).
    pub residual: f64,
    /// Whether the (last) solve met its tolerance rather than its cap.
    pub converged: bool,
}

impl From<NewtonSolve> for ConstraintSolve {
    /// A non-smooth Newton solve's figures (on the CPU or the device).
    fn from(out: NewtonSolve) -> Self {
        ConstraintSolve {
            method: SolverMethod::NonSmoothNewton,
            iterations: out.iterations,
            error: out.error,
            linear_iterations: out.linear_iterations,
            residual: out.residual,
            converged: out.converged,
        }
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
        for row in 0..3 {
            let mut delta = g.offset[row] - g.obstacle_shift[row];
            for (b, pts, dir) in g.row_points(row) {
                for &(i, wgt) in pts.iter() {
                    delta += wgt * scale * (0..3).map(|d| dir[d] * u(b, 3 * i + d)).sum::<f64>();
                }
            }
            out.push(delta);
        }
    }
}

/// The complementarity scale `r` per row (zeng2025 §5.4): the diagonal
/// `W_jj` of `h² H A⁻¹ Hᵀ` (eq. 28), or `h² Σ w²/m` of the points'
/// vertices (Macklin et al. 2019's `h² [H M⁻¹ Hᵀ]_jj`, the same for a
/// group's three unit rows).
pub(crate) fn complementarity_scale(
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
pub(crate) fn max_violation(
    w: &impl DelassusOperator,
    free: &[f64],
    laws: &[ConstraintGroup],
    lambda: &[f64],
) -> f64 {
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

/// A group's violation at `δ`: an attachment's miss `|δ|`, a shaft
/// point's distance from the shaft's line, a cable's length off its
/// target, a contact's penetration `max(0, −δₙ)` (m).
pub(crate) fn group_violation(law: &ConstraintGroup, d: Vector3<f64>) -> f64 {
    match law {
        ConstraintGroup::Attachment => d.norm(),
        ConstraintGroup::Shaft { .. } => d.y.hypot(d.z),
        ConstraintGroup::Cable => d.x.abs(),
        ConstraintGroup::Contact { .. } => (-d[0]).max(0.0),
    }
}

/// The largest [`group_violation`] over the groups at the gaps `δ` a
/// solve ended with (three rows per group).
pub(crate) fn gaps_violation(laws: &[ConstraintGroup], gaps: &[f64]) -> f64 {
    let per_group = laws.iter().zip(gaps.chunks_exact(3));
    per_group.map(|(law, d)| group_violation(law, Vector3::from_column_slice(d))).fold(0.0, f64::max)
}
