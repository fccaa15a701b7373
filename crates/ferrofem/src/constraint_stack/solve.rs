//! Stage `solve_constraints` over the whole space: the free gaps, the
//! warm start by group key, the chosen solver, and the step's λ kept for
//! the next (zeng2022 eq. 14–16; zeng2025 §5).

use std::collections::HashMap;

use ferrofem_linalg::Precision;

use super::space::ConstraintSpace;
use crate::constraint::{Compliance, ConstraintProblem, GroupKey};
use crate::delassus::Delassus;
use crate::delassus::{MixedDelassus, UnbuiltBody};
use crate::solver::{
    complementarity_scale, gaps_violation, max_violation, newton, rounded, row_gaps, AssembledDelassus,
    ConstraintSolve, ConstraintSolver, NewtonSettings, Pgs, SolveOutcome, SolverMethod, SolverWorkspace,
};
use crate::Model;

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
    row_gaps(&space.problem.groups, h, v_free, &mut space.problem.free_gaps);
    warm_started(space, warm_start);
    solve_in_space(space, compliances, model, solver);
    keep_warm_start(space, warm_start);
}

/// λ of the groups from `warm_start` by key (zero for a new group).
pub fn warm_started(space: &mut ConstraintSpace, warm_start: &HashMap<GroupKey, [f64; 3]>) {
    space.problem.impulses.clear();
    for g in space.problem.groups.iter() {
        space.problem.impulses.extend_from_slice(&warm_start.get(&g.key).copied().unwrap_or([0.0; 3]));
    }
}

/// Replaces `warm_start` by the groups' λ.
pub fn keep_warm_start(space: &ConstraintSpace, warm_start: &mut HashMap<GroupKey, [f64; 3]>) {
    warm_start.clear();
    let lambda = &space.problem.impulses;
    warm_start.extend(
        space.problem.groups.iter().enumerate().map(|(k, g)| (g.key, [0, 1, 2].map(|d| lambda[3 * k + d]))),
    );
}

/// Solves `δ = δ_free + W λ` under the groups' laws from the λ in
/// `space.problem.impulses` (the warm start), on the assembled `W` plus the
/// unbuilt bodies' `h² H_b A_b⁻¹ H_bᵀ`; sets `space.outcome.solve` and
/// `space.outcome.violation`.
pub fn solve_in_space(
    space: &mut ConstraintSpace,
    compliances: &[Option<Compliance>],
    model: &Model,
    solver: ConstraintSolver,
) {
    let (laws, groups) = (&mut space.workspace.laws, &space.problem.groups);
    laws.clear();
    laws.extend(groups.iter().map(|g| g.law));
    match solver {
        ConstraintSolver::Pgs(p) => solve_pgs(space, compliances, model, Pgs { settings: p }),
        ConstraintSolver::NonSmoothNewton(settings) => solve_newton(space, model, settings),
    }
}

/// The non-smooth Newton (zeng2025 §5.2–5.4) on `W` factored or
/// assembled, with the complementarity scale from its diagonal.
fn solve_newton(space: &mut ConstraintSpace, model: &Model, settings: NewtonSettings) {
    let ConstraintProblem { groups, free_gaps, impulses, .. } = &mut space.problem;
    let Delassus { assembled: delassus, single, unbuilt, factored } = &mut space.delassus;
    let SolverWorkspace { laws, scale, newton, .. } = &mut space.workspace;
    assert!(unbuilt.is_empty(), "the non-smooth Newton needs an assembled W");
    let out = if factored.is_built() {
        let diagonal = |j| factored.block_entry(j, j);
        complementarity_scale(groups, diagonal, model, settings.preconditioner, scale);
        // Every iteration's product is short: one worker is held for the
        // whole solve instead of woken for each.
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
    space.outcome.violation = gaps_violation(laws, newton.gaps());
    space.outcome.solve = ConstraintSolve::from(out);
}

/// Projected Gauss-Seidel (zeng2022 eq. 15–16) on the assembled `W` (in
/// f64 or its rounded copy), or on the unbuilt bodies' `h² H_b A_b⁻¹ H_bᵀ`
/// beside the assembled part.
fn solve_pgs(space: &mut ConstraintSpace, compliances: &[Option<Compliance>], model: &Model, pgs: Pgs) {
    let ConstraintProblem { bodies, free_gaps, impulses, .. } = &mut space.problem;
    let Delassus { assembled: delassus, single, unbuilt, .. } = &mut space.delassus;
    let SolverWorkspace { laws, pgs: pgs_scratch, .. } = &mut space.workspace;
    let SolveOutcome { solve, violation, .. } = &mut space.outcome;
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
        let mut op = MixedDelassus::new(free_gaps.len(), assembled, parts, model.time_step, impulses);
        let out = pgs.solve_in(&mut op, free_gaps, laws, impulses, pgs_scratch.blocks());
        (out, max_violation(&op, free_gaps, laws, impulses))
    };
    *solve = ConstraintSolve {
        method: SolverMethod::Pgs,
        iterations: pgs_solve.iterations,
        error: pgs_solve.error,
        converged: pgs_solve.converged,
        ..Default::default()
    };
}
