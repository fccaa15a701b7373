//! Time integrators: linearized implicit Euler solved by early-terminated
//! PCG (zeng2022 §3.1, dahl2019), and local-global hyperelasticity with the
//! sparse inverse (zeng2025 §3.3, §4).

pub mod implicit_euler;
pub mod local_global;
mod settings;

pub use implicit_euler::ImplicitEuler;
pub use local_global::LocalGlobal;
pub use settings::{ImplicitEulerSettings, InitialGuess, PreconditionerKind, PreconditionerWarp, Refresh};

use crate::collision::penetration::inverted_elements;
use crate::collision::Contacts;
use crate::constraint_stack::ConstraintSpace;
use crate::stats::{BodyStepStats, StageTimes};
use crate::{Model, SimError, State};

/// The integrator of a world, owning its workspace.
#[derive(Debug)]
pub enum Integrator {
    /// Linearized implicit Euler with constraint-based contact (zeng2022).
    ImplicitEuler(ImplicitEuler),
    /// Local-global hyperelasticity (zeng2025).
    LocalGlobal(LocalGlobal),
}

impl Integrator {
    /// The integrator's name in scene files.
    pub fn name(&self) -> &'static str {
        match self {
            Integrator::ImplicitEuler(_) => "implicit-euler",
            Integrator::LocalGlobal(_) => "local-global",
        }
    }

    /// The integrator's own step, after contact detection;
    /// `observe(body, iteration, q)` sees the iterates of an iterative
    /// integrator (local-global: the start and each global step).
    pub fn step(
        &mut self,
        model: &Model,
        state: &mut State,
        contacts: &Contacts,
        constraints: &mut ConstraintSpace,
        times: &mut StageTimes,
        observe: impl FnMut(usize, usize, &[f64]) + Send,
    ) -> Result<(), SimError> {
        match self {
            Integrator::ImplicitEuler(ie) => ie.step(model, state, contacts, constraints, times),
            // On a thread of rayon's pool (handed over once, unless the
            // caller is a worker already): the step's hundreds of parallel
            // loops (per element, per supernode level, per product with
            // `W`) then split among the workers instead of each waking the
            // pool from outside and putting the caller to sleep until it is
            // done, a wake-up pair per loop that cost up to a third of a
            // small scene's step. Nothing in it waits on another thread;
            // implicit Euler's synchronous refactorization does, and stays
            // outside.
            Integrator::LocalGlobal(lg) => {
                rayon::scope(|_| lg.step(model, state, contacts, constraints, times, observe))
            }
        }
    }

    /// The integrator's figures of body `b` after the step, its elastic
    /// energy and inverted tets among them.
    pub fn body_stats(&self, model: &Model, state: &State, b: usize) -> BodyStepStats {
        match self {
            Integrator::ImplicitEuler(ie) => BodyStepStats {
                inverted_elements: inverted_elements(&model.bodies[b], &state.bodies[b].positions),
                ..ie.body_stats(b, state.step)
            },
            Integrator::LocalGlobal(lg) => lg.body_stats(b, &model.bodies[b], &state.bodies[b].positions),
        }
    }

    /// Local-global iterations of the last step (0 for implicit Euler).
    pub fn iterations(&self) -> usize {
        match self {
            Integrator::ImplicitEuler(_) => 0,
            Integrator::LocalGlobal(lg) => lg.last_iterations().0,
        }
    }
}
