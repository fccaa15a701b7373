//! Stage `solve_constraints` over the whole space: the free gaps, the
//! warm start by group key, the chosen solver, and the step's λ kept for
//! the next (zeng2022 eq. 14–16; zeng2025 §5).

use std::collections::HashMap;

use ferrofem_linalg::Precision;

use super::space::ConstraintSpace;
use crate::constraint::{Compliance, ConstraintProblem, GroupKey};
use rayon::prelude::*;

use crate::constraint::ConstraintGroup;
use crate::delassus::{ApartDelassus, Delassus, DelassusBlock, DelassusBlocks, MixedDelassus, UnbuiltBody};
use crate::solver::{
    complementarity_scale, gaps_violation, max_violation, row_gaps, AssembledDelassus, BlockScratch,
    ConstraintSolve, ConstraintSolver, NewtonSettings, Pgs, PgsScratch, PgsSolve, SolveOutcome, SolverMethod,
    SolverWorkspace,
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
/// assembled by blocks, with the complementarity scale from its diagonal.
fn solve_newton(space: &mut ConstraintSpace, model: &Model, settings: NewtonSettings) {
    let ConstraintProblem { groups, free_gaps, impulses, .. } = &mut space.problem;
    let Delassus { assembled: delassus, unbuilt, factored, .. } = &mut space.delassus;
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
        complementarity_scale(groups, |j| delassus.entry(j, j), model, settings.preconditioner, scale);
        delassus.round_to_single();
        settings.solve(delassus, free_gaps, laws, scale, impulses, newton)
    };
    space.outcome.violation = gaps_violation(laws, newton.gaps());
    space.outcome.solve = ConstraintSolve::from(out);
}

/// Projected Gauss-Seidel (zeng2022 eq. 15–16) on the assembled `W` (in
/// f64 or its rounded copy) block by block, on the bodies' parts kept
/// apart, or on the unbuilt bodies' `h² H_b A_b⁻¹ H_bᵀ` beside the
/// assembled part.
fn solve_pgs(space: &mut ConstraintSpace, compliances: &[Option<Compliance>], model: &Model, pgs: Pgs) {
    let ConstraintProblem { bodies, free_gaps, impulses, .. } = &mut space.problem;
    let Delassus { assembled: delassus, unbuilt, apart, .. } = &mut space.delassus;
    let SolverWorkspace { laws, pgs: pgs_scratch, pgs_blocks, .. } = &mut space.workspace;
    let SolveOutcome { solve, violation, .. } = &mut space.outcome;
    let pgs_solve;
    (pgs_solve, *violation) = if !apart.is_empty() {
        let parts = apart.iter().map(|&b| (bodies[b].delassus.buffers.w(), bodies[b].rows.as_slice()));
        let mut op = ApartDelassus::new(free_gaps.len(), parts, impulses);
        let out = pgs.solve_in(&mut op, free_gaps, laws, impulses, pgs_scratch.blocks());
        (out, max_violation(&op, free_gaps, laws, impulses))
    } else if unbuilt.is_empty() {
        match pgs.settings.precision {
            Precision::Double => {}
            Precision::Single => delassus.round_to_single(),
            Precision::Bfloat16 => delassus.round_to_bfloat16(),
            Precision::Int8 => unreachable!("refused by the solver's settings: W is never read in 8 bits"),
        }
        match delassus.whole() {
            Some(_) => {
                let block = &delassus.blocks()[0];
                let problem = BlockProblem { free: free_gaps, laws };
                solve_block(pgs, block, problem, impulses, pgs_scratch)
            }
            None => solve_blocks(pgs, delassus, free_gaps, laws, impulses, pgs_blocks),
        }
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
        let assembled = (!delassus.is_empty()).then_some(&*delassus);
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

/// A block's free gaps and laws, in the block's order.
struct BlockProblem<'a> {
    free: &'a [f64],
    laws: &'a [ConstraintGroup],
}

/// PGS on one block of `W` (read in the precision the settings name), and
/// the violation it ends with.
fn solve_block(
    pgs: Pgs,
    block: &DelassusBlock,
    problem: BlockProblem,
    lambda: &mut [f64],
    scratch: &mut PgsScratch,
) -> (PgsSolve, f64) {
    let BlockProblem { free, laws } = problem;
    let w = &block.values;
    let out = match pgs.settings.precision {
        Precision::Double => pgs.solve_assembled(w, w, free, laws, lambda, scratch),
        Precision::Single => pgs.solve_assembled(&block.single, w, free, laws, lambda, scratch),
        Precision::Bfloat16 => pgs.solve_assembled(&block.bfloat16, w, free, laws, lambda, scratch),
        Precision::Int8 => unreachable!("refused by the solver's settings: W is never read in 8 bits"),
    };
    (out, max_violation(&AssembledDelassus(w), free, laws, lambda))
}

/// PGS on every block of coupled groups at once, each an independent
/// problem on its own thread (`W` is zero between blocks): each block's
/// gaps, laws and warm start gathered, solved, its λ scattered back. The
/// solve's figures are the worst block's (most sweeps, largest change,
/// converged only if all are).
fn solve_blocks(
    pgs: Pgs,
    delassus: &DelassusBlocks,
    free: &[f64],
    laws: &[ConstraintGroup],
    lambda: &mut [f64],
    scratch: &mut Vec<BlockScratch>,
) -> (PgsSolve, f64) {
    let blocks = delassus.blocks();
    scratch.resize_with(blocks.len(), Default::default);
    let outs: Vec<(PgsSolve, f64)> = blocks
        .par_iter()
        .zip(scratch.par_iter_mut())
        .map(|(block, s)| {
            s.gather(block, free, laws, lambda);
            let problem = BlockProblem { free: &s.free, laws: &s.laws };
            solve_block(pgs, block, problem, &mut s.lambda, &mut s.pgs)
        })
        .collect();
    for (block, s) in blocks.iter().zip(scratch.iter()) {
        block.world_rows().zip(&s.lambda).for_each(|(r, &l)| lambda[r] = l);
    }
    let mut all = PgsSolve { converged: true, ..Default::default() };
    let mut violation = 0.0f64;
    for (out, v) in outs {
        all.iterations = all.iterations.max(out.iterations);
        all.error = all.error.max(out.error);
        all.converged &= out.converged;
        violation = violation.max(v);
    }
    (all, violation)
}
