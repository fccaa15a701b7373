//! The constraint stack's state for one step ([`ConstraintSpace`]): one of
//! each of its four parts.

use crate::collision::Contacts;
use crate::constraint::{proximity, ConstraintProblem};
use crate::delassus::Delassus;
use crate::solver::{ConstraintSolve, SolveOutcome, SolverWorkspace};
use crate::state::BodyState;
use crate::{Model, SimError};

/// The world's constraint stack of the current step.
#[derive(Debug, Default)]
pub struct ConstraintSpace {
    /// Groups, rows `H_b`, free gaps and impulses.
    pub problem: ConstraintProblem,
    /// `W` as its builders left it.
    pub delassus: Delassus,
    /// The solvers' scratch.
    pub workspace: SolverWorkspace,
    /// What the solve achieved.
    pub outcome: SolveOutcome,
}

impl ConstraintSpace {
    /// An empty stack for the model's bodies.
    pub fn new(model: &Model) -> Self {
        let mut problem = ConstraintProblem::new(model);
        if let Some(backend) = model.backend.as_ref().filter(|_| model.device == crate::Device::Gpu) {
            problem.bodies.iter_mut().for_each(|b| b.delassus.on_device(backend.clone()));
        }
        ConstraintSpace { problem, ..Default::default() }
    }

    /// Stage `assemble_constraints` ([`ConstraintProblem::assemble`]), the
    /// last step's outcome forgotten.
    pub fn assemble(&mut self, model: &Model, contacts: &Contacts, state: &crate::State) {
        self.problem.assemble(model, contacts, state);
        self.outcome.clear();
    }

    /// The step's error when the solve ended farther from the constraints
    /// than the contact alarm distance, with the likelier cause named
    /// ([`violation_cause`]).
    pub fn check_violation(&self, model: &Model, step: usize) -> Result<(), SimError> {
        let limit = model.contact.alarm_distance.max(1e-6);
        if self.outcome.violation <= limit {
            return Ok(());
        }
        let reach = self.problem.free_gaps.iter().fold(0.0f64, |m, g| m.max(g.abs()));
        Err(SimError::Constraints {
            step,
            method: self.outcome.solve.method,
            iterations: self.outcome.solve.iterations,
            violation: self.outcome.violation,
            limit,
            cause: violation_cause(&self.outcome.solve, reach, limit, model.time_step),
        })
    }

    /// Measures the outcome's `end_violation` at the bodies' end-of-step
    /// positions, `t` being the step's start time.
    pub fn measure_end_violation(&mut self, model: &Model, states: &[BodyState], t: f64) {
        let scratch = &mut self.workspace.corrective.proximity;
        let x = |b: usize| states[b].positions.as_slice();
        let problem = &self.problem;
        self.outcome.end_violation =
            proximity::end_violation(&problem.groups, &problem.impulses, model, x, t, scratch);
    }
}

/// Why a solve ended far from its constraints, worded from what the step
/// shows: a free motion hundreds of alarm distances long (`reach`, the
/// largest `|δ_free|` of a row) is a time step too long for constraints
/// linearized at its start; a solve stopped at its cap needs more
/// iterations; one that met its tolerance and still misses has
/// constraints that cannot all hold.
fn violation_cause(solve: &ConstraintSolve, reach: f64, limit: f64, h: f64) -> String {
    let stopped = match solve.converged {
        true => "the solver met its tolerance".to_string(),
        false => format!("the solver stopped at its cap with the impulses changing by {:.1e}", solve.error),
    };
    if reach > 100.0 * limit {
        format!(
            "{stopped}; the step's free motion carries a constrained point {reach:.3e} m, {:.0}× the limit: \
             the time step (h = {h} s) is too long for constraints linearized at its start; shorten time_step",
            reach / limit
        )
    } else if solve.converged {
        format!("{stopped}: the constraints conflict, such as an attachment target inside an obstacle")
    } else {
        format!("{stopped}: raise the constraint solver's max_iterations (or conflicting constraints, such as an attachment target inside an obstacle)")
    }
}
