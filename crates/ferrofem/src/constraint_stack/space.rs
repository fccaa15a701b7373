//! The constraint stack's state for one step ([`ConstraintSpace`]): one of
//! each of its four parts.

use crate::collision::Contacts;
use crate::constraint::{proximity, ConstraintProblem};
use crate::delassus::Delassus;
use crate::solver::{SolveOutcome, SolverWorkspace};
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
    pub fn assemble(&mut self, model: &Model, contacts: &Contacts, states: &[BodyState], t: f64) {
        self.problem.assemble(model, contacts, states, t);
        self.outcome.clear();
    }

    /// The step's error when the solve ended farther from the constraints
    /// than the contact alarm distance (conflicting constraints, or too
    /// few iterations).
    pub fn check_violation(&self, model: &Model, step: usize) -> Result<(), SimError> {
        let limit = model.contact.alarm_distance.max(1e-6);
        if self.outcome.violation <= limit {
            return Ok(());
        }
        Err(SimError::Constraints {
            step,
            method: self.outcome.solve.method,
            iterations: self.outcome.solve.iterations,
            violation: self.outcome.violation,
            limit,
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
