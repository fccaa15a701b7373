//! The *outcome* part of the constraint stack: what a step's constraint
//! solve achieved, as the stats and the integrators read it.

use super::corrective::CorrectiveRecord;
use super::ConstraintSolve;

/// The outcome of the step's constraint solve.
#[derive(Debug, Default)]
pub struct SolveOutcome {
    /// The solver's iterations, residual and convergence.
    pub solve: ConstraintSolve,
    /// Largest violation after the solve (m): an attachment's distance to
    /// its target or a contact's penetration at the end of the step.
    pub violation: f64,
    /// What the recursive corrective motion did this step (`None`: explicit resolution).
    pub corrective: Option<CorrectiveRecord>,
    /// Penetration plus separation at contacts that carry force at the end
    /// of the step, measured with the contact geometry there (m).
    pub end_violation: f64,
}

impl SolveOutcome {
    /// Forgets the last step's violations and corrective record; keeps its
    /// `solve`, whose iterations the `auto` Delassus model reads as the
    /// next step's expected sweeps.
    pub fn clear(&mut self) {
        *self = SolveOutcome { solve: std::mem::take(&mut self.solve), ..Default::default() };
    }
}
