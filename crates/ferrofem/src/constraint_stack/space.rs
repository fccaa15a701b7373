//! The constraint stack's state for one step ([`ConstraintSpace`]): one of
//! each of its four parts.

use crate::collision::Contacts;
use crate::constraint::{proximity, ConstraintProblem};
use crate::delassus::Delassus;
use crate::solver::{SolveOutcome, SolverWorkspace};
use crate::state::BodyState;
use crate::Model;

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
        #[allow(unused_mut)]
        let mut problem = ConstraintProblem::new(model);
        #[cfg(feature = "gpu")]
        if model.device == crate::Device::Gpu {
            problem.bodies.iter_mut().for_each(|b| b.delassus.on_device());
        }
        ConstraintSpace { problem, ..Default::default() }
    }

    /// The first error a body's device build of `W̄` gave this step.
    pub fn take_device_error(&mut self) -> Option<String> {
        self.problem.bodies.iter_mut().find_map(|b| b.delassus.take_device_error())
    }

    /// Stage `assemble_constraints` ([`ConstraintProblem::assemble`]), the
    /// last step's outcome forgotten.
    pub fn assemble(&mut self, model: &Model, contacts: &Contacts, states: &[BodyState], t: f64) {
        self.problem.assemble(model, contacts, states, t);
        self.outcome.clear();
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
