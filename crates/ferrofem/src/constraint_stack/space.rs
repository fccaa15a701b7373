//! The constraint stack's state for one step ([`ConstraintSpace`]): the
//! problem (groups, rows `H_b`, gaps, impulses), the Delassus operator, the
//! solvers' workspace and the outcome of the solve.

use crate::collision::Contacts;
use crate::constraint::proximity;
use crate::constraint::{gather_groups, BodyRows, Group};
use crate::solver::{ConstraintGroup, ConstraintSolve};
use crate::state::BodyState;
use crate::Model;

/// The world's constraint problem of the current step.
#[derive(Debug, Default)]
pub struct ConstraintSpace {
    /// Groups: per body its obstacle contacts and attachments, then body–body contacts.
    pub groups: Vec<Group>,
    /// Per body: its rows `H_b`, forces and Delassus workspace.
    pub bodies: Vec<BodyRows>,
    /// The assembled part of `h² H A⁻¹ Hᵀ`, row-major, `3g × 3g` (empty when every body is unbuilt
    /// or `W` is factored).
    pub delassus: Vec<f64>,
    /// `W` in factored form (local-global's non-smooth Newton), when
    /// [`super::build_delassus_factored`] built it this step.
    pub factored: crate::delassus::FactoredDelassus,
    /// Bodies whose part of `W` is applied unbuilt.
    pub unbuilt: Vec<usize>,
    /// `δ_free` per row (m).
    pub free_gaps: Vec<f64>,
    /// λ per row (N).
    pub impulses: Vec<f64>,
    /// Outcome of the last constraint solve.
    pub solve: ConstraintSolve,
    /// Largest violation after the solve (m): an attachment's distance to
    /// its target or a contact's penetration at the end of the step.
    pub violation: f64,
    /// The law of each group (scratch of the solve).
    pub(crate) laws: Vec<ConstraintGroup>,
    /// Scratch of PGS (diagonal blocks, upper sums).
    pub(crate) pgs: crate::solver::PgsScratch,
    /// Complementarity scale `r` per row (scratch of the non-smooth Newton).
    pub(crate) scale: Vec<f64>,
    /// Scratch of the non-smooth Newton.
    pub(crate) newton: crate::solver::NewtonScratch,
    /// A vector of `W λ` (scratch).
    pub(crate) scratch: Vec<f64>,
    /// `W` rounded to f32 (PGS's `delassus_precision = "single"`, the
    /// non-smooth Newton's inner solves), made on first use after `W`
    /// changes: whatever writes `delassus` empties it.
    pub(crate) delassus_single: Vec<f32>,
    /// What the recursive corrective motion did this step (`None`: explicit resolution).
    pub corrective: Option<crate::solver::corrective::CorrectiveRecord>,
    /// Scratch of the recursive corrective motion.
    pub(crate) corrective_scratch: crate::solver::corrective::CorrectiveScratch,
    /// Penetration plus separation at contacts that carry force at the end
    /// of the step, measured with the contact geometry there (m).
    pub end_violation: f64,
}

impl ConstraintSpace {
    /// An empty problem for the model's bodies.
    pub fn new(model: &Model) -> Self {
        #[allow(unused_mut)]
        let mut bodies: Vec<BodyRows> = model.bodies.iter().map(|b| BodyRows::new(b.dofs())).collect();
        #[cfg(feature = "gpu")]
        if model.device == crate::Device::Gpu {
            bodies.iter_mut().for_each(|b| b.delassus.on_device());
        }
        ConstraintSpace { bodies, ..Default::default() }
    }

    /// The first error a body's device build of `W̄` gave this step.
    pub fn take_device_error(&mut self) -> Option<String> {
        self.bodies.iter_mut().find_map(|b| b.delassus.take_device_error())
    }

    /// Stage `assemble_constraints`: the groups of the step's contacts and
    /// attachments at time `t` (start of the step), then each body's rows
    /// `H_b`.
    pub fn assemble(&mut self, model: &Model, contacts: &Contacts, states: &[BodyState], t: f64) {
        gather_groups(model, contacts, states, t, &mut self.groups);
        for (b, rows) in self.bodies.iter_mut().enumerate() {
            rows.assemble(b, &self.groups);
        }
        self.impulses.clear();
        self.violation = 0.0;
        self.corrective = None;
        self.end_violation = 0.0;
    }

    /// Measures [`Self::end_violation`] at the bodies' end-of-step
    /// positions, `t` being the step's start time.
    pub fn measure_end_violation(&mut self, model: &Model, states: &[BodyState], t: f64) {
        let scratch = &mut self.corrective_scratch.proximity;
        let x = |b: usize| states[b].positions.as_slice();
        self.end_violation = proximity::end_violation(&self.groups, &self.impulses, model, x, t, scratch);
    }

    /// Contact groups (obstacle and body–body), each counted once.
    pub fn contact_count(&self) -> usize {
        self.groups.iter().filter(|g| g.is_contact()).count()
    }

    /// Contact groups acting on body `b`.
    pub fn contacts_of(&self, b: usize) -> usize {
        self.groups.iter().filter(|g| g.is_contact_on(b)).count()
    }

    /// Sum of the normal forces of the contacts acting on body `b` (N).
    pub fn normal_force_on(&self, b: usize) -> f64 {
        self.normal_forces(|g| g.is_contact_on(b))
    }

    /// Sum of normal forces over contact groups, each counted once (N).
    pub fn total_normal_force(&self) -> f64 {
        self.normal_forces(Group::is_contact)
    }

    fn normal_forces(&self, keep: impl Fn(&Group) -> bool) -> f64 {
        let lam = |k: usize| self.impulses.get(3 * k).copied().unwrap_or(0.0);
        self.groups.iter().enumerate().filter(|(_, g)| keep(g)).map(|(k, _)| lam(k)).sum()
    }
}
