//! The *problem* part of the constraint stack: the step's groups, each
//! body's rows `H_b`, the free gaps and the impulses (zeng2022 §3.2–3.3).

use super::{cable_groups, gather_groups, needle_groups, BodyRows, Group};
use crate::collision::Contacts;
use crate::{Model, State};

/// The world's constraint problem of the current step.
#[derive(Debug, Default)]
pub struct ConstraintProblem {
    /// Groups: per body its obstacle contacts and attachments, then body–body contacts.
    pub groups: Vec<Group>,
    /// Per body: its rows `H_b`, forces and Delassus workspace.
    pub bodies: Vec<BodyRows>,
    /// `δ_free` per row (m).
    pub free_gaps: Vec<f64>,
    /// λ per row (N).
    pub impulses: Vec<f64>,
}

impl ConstraintProblem {
    /// An empty problem for the model's bodies.
    pub fn new(model: &Model) -> Self {
        let bodies = model.bodies.iter().map(|b| BodyRows::new(b.dofs())).collect();
        ConstraintProblem { bodies, ..Default::default() }
    }

    /// Stage `assemble_constraints`: the groups of the step's contacts,
    /// attachments, needles and cables at the state's time (start of the step),
    /// then each body's rows `H_b`; the impulses are cleared.
    pub fn assemble(&mut self, model: &Model, contacts: &Contacts, state: &State) {
        gather_groups(model, contacts, state, &mut self.groups);
        needle_groups(model, state, &mut self.groups);
        cable_groups(model, state, &mut self.groups);
        for (b, rows) in self.bodies.iter_mut().enumerate() {
            rows.assemble(b, &self.groups);
        }
        self.impulses.clear();
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
