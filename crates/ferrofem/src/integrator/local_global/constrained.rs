//! The constrained global step (zeng2025 §5.1–5.3, Algorithm 3–4): the
//! constraint forces enter every global step through Lagrange multipliers,
//! `q = A⁻¹(b + h² Hᵀ λ)` (eq. 23b), with `λ` from the complementarity
//! problem of that iteration solved on `W = h² H A⁻¹ Hᵀ`, built once per
//! step. `A` stays constant: no refactorization, whatever the contacts.
//!
//! In constraint space an iteration reads: `δ(q) = offset + H (q − q_t) −
//! obstacle shift` per row (the gap for normal rows and attachments, the
//! slip over the step for friction rows, zeng2025 eq. 40); with `q` the
//! global step's result under the current `λᵏ`, the problem is
//! `δ = δ_free + W λ` with `δ_free = δ(q) − W λᵏ`, solved from `λᵏ` by the
//! world's constraint solver (non-smooth Newton or PGS); then the
//! correction `q += h² A⁻¹ Hᵀ (λᵏ⁺¹ − λᵏ)` (stage `correct`).

use super::global::GlobalSolver;
use crate::constraint::Compliance;
use crate::constraint_stack::device::DeviceConstraintSolver;
use crate::constraint_stack::{solve_in_space, ConstraintSpace};
use crate::device::DeviceError;
use crate::solver::{row_gaps, ConstraintSolve, ConstraintSolver, NewtonSettings};
use crate::Model;

/// `δ(q)` per row in `space.problem.free_gaps` for the iterates `x` of the bodies
/// against their start-of-step positions `x0` (eq. 40).
pub fn gaps(space: &mut ConstraintSpace, x: &[&[f64]], x0: &[&[f64]]) {
    row_gaps(&space.problem.groups, 1.0, |b, j| x[b][j] - x0[b][j], &mut space.problem.free_gaps);
}

/// `δ_free = δ(q) − W λᵏ` per row (`λᵏ` in `space.problem.impulses`); a
/// non-smooth Newton solve (`newton`) starts from `δ(q)`, the gaps at `λᵏ`.
pub fn free_gaps(space: &mut ConstraintSpace, x: &[&[f64]], x0: &[&[f64]], newton: bool) {
    gaps(space, x, x0);
    if newton {
        space.workspace.newton.start_at(&space.problem.free_gaps);
    }
    let mut w_lambda = std::mem::take(&mut space.workspace.scratch);
    w_lambda.resize(space.problem.free_gaps.len(), 0.0);
    match space.delassus.factored.is_built() {
        true => space.delassus.factored.times(&space.problem.impulses, &mut w_lambda),
        false => space.delassus.assembled.times(&space.problem.impulses, &mut w_lambda),
    }
    space.problem.free_gaps.iter_mut().zip(&w_lambda).for_each(|(f, wl)| *f -= wl);
    space.workspace.scratch = w_lambda;
}

/// Stage `solve_constraints` of one iteration: λ from `δ = δ_free + W λ`,
/// warm-started from `λᵏ`, whose value is kept in `previous`.
pub fn solve(
    space: &mut ConstraintSpace,
    compliances: &[Option<Compliance>],
    model: &Model,
    solver: ConstraintSolver,
    previous: &mut Vec<f64>,
    total: &mut ConstraintSolve,
) {
    previous.clear();
    previous.extend_from_slice(&space.problem.impulses);
    solve_in_space(space, compliances, model, solver);
    add_solve(total, space.outcome.solve);
}

/// Stage `solve_constraints` of one iteration on the GPU (non-smooth
/// Newton): λ from `δ = δ_free + W λ` with `space.problem.free_gaps` holding
/// `δ(q)` ([`gaps`]); `δ_free` is formed on the device.
pub fn solve_on_device(
    space: &mut ConstraintSpace,
    device: &mut DeviceConstraintSolver,
    model: &Model,
    settings: &NewtonSettings,
    previous: &mut Vec<f64>,
    total: &mut ConstraintSolve,
) -> Result<(), DeviceError> {
    previous.clear();
    previous.extend_from_slice(&space.problem.impulses);
    device.solve(space, model, settings)?;
    add_solve(total, space.outcome.solve);
    Ok(())
}

/// Adds an iteration's solve to the step's figures.
pub fn add_solve(total: &mut ConstraintSolve, s: ConstraintSolve) {
    total.method = s.method;
    total.iterations += s.iterations;
    total.linear_iterations += s.linear_iterations;
    (total.error, total.residual, total.converged) = (s.error, s.residual, s.converged);
}

/// Stage `correct` for body `b`: `x += h² A⁻¹ H_bᵀ Δλ` with
/// `Δλ = λᵏ⁺¹ − λᵏ`, `A⁻¹` applied by the body's global solver;
/// `[delta, out]` is scratch.
pub fn correct(
    space: &mut ConstraintSpace,
    b: usize,
    global: &mut GlobalSolver,
    previous: &[f64],
    h: f64,
    x: &mut [f64],
    [delta, out]: &mut [Vec<f64>; 2],
) -> Result<(), DeviceError> {
    delta.clear();
    delta.extend(space.problem.impulses.iter().zip(previous).map(|(l, p)| l - p));
    global.correction(&mut space.problem.bodies[b], delta, out)?;
    x.iter_mut().zip(out.iter()).for_each(|(x, c)| *x += h * h * c);
    Ok(())
}

/// Sets body `b`'s `forces` to `H_bᵀ λ` (N per DOF).
pub fn constraint_forces(space: &mut ConstraintSpace, b: usize) {
    space.problem.bodies[b].set_forces(&space.problem.impulses);
}

/// `b += h² H_bᵀ λ` for body `b` (eq. 23b's right-hand side), leaving
/// `H_bᵀ λ` in the body's `forces`.
pub fn add_constraint_forces(space: &mut ConstraintSpace, b: usize, h: f64, rhs: &mut [f64]) {
    constraint_forces(space, b);
    rhs.iter_mut().zip(&space.problem.bodies[b].forces).for_each(|(r, f)| *r += h * h * f);
}
