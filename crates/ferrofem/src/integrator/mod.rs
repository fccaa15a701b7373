//! Time integrators: linearized implicit Euler solved by early-terminated
//! PCG (zeng2022 §3.1, dahl2019), and local-global hyperelasticity with the
//! sparse inverse (zeng2025 §3.3, §4).

pub mod implicit_euler;
pub mod local_global;

use serde::{Deserialize, Serialize};

use ferrofem_linalg::{Ordering, Precision};

pub use implicit_euler::ImplicitEuler;
pub use local_global::LocalGlobal;

use crate::collision::Contacts;
use crate::constraint::ConstraintSpace;
use crate::element::PolarMethod;
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

    /// The integrator's figures of body `b` after the step.
    pub fn body_stats(&self, model: &Model, state: &State, b: usize) -> BodyStepStats {
        match self {
            Integrator::ImplicitEuler(ie) => ie.body_stats(b, state.step),
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

/// Starting point of the free-motion PCG, named after the velocity
/// `v(t+h)` it assumes (dahl2019 §3.2); the solver's unknown is
/// `Δv = v(t+h) − v(t)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum InitialGuess {
    /// `v(t+h) = 0`, i.e. `Δv = −v(t)`: stable but over-damped when stopped early.
    Zero,
    /// `v(t+h) = v(t)`, i.e. `Δv = 0`.
    #[default]
    #[serde(alias = "previous-velocity")]
    PreviousVelocity,
    /// `v(t+h) = v(t) + h M⁻¹ f`: a forward-Euler step.
    Explicit,
}

/// Preconditioner of the free-motion PCG.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PreconditionerKind {
    /// No preconditioning.
    Identity,
    /// The lumped mass matrix.
    Mass,
    /// `diag(A)`.
    #[default]
    Jacobi,
    /// A sparse LDLᵀ factorization of a recent `A`, refreshed every
    /// `refresh.every` steps, possibly in the background (zeng2022 §3.4).
    Ldlt,
}

/// When the LDLᵀ preconditioner is refactorized (zeng2022 §3.4, after
/// Courtecuisse et al. 2010).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Refresh {
    /// Start a new factorization every this many steps (≥ 1).
    pub every: usize,
    /// Factorize a snapshot of `A` on a background thread while stepping on
    /// with the newest finished factor; `false`: factorize synchronously
    /// (deterministic, reproducible).
    pub asynchronous: bool,
    /// With `asynchronous`: the factor of the snapshot taken at step `s` is
    /// used from step `s + every` exactly, the main loop waiting for it if
    /// it is late, so runs are bitwise reproducible. `false`: the newest
    /// finished factor is used as soon as it lands (never waits).
    pub deterministic: bool,
}

impl Default for Refresh {
    fn default() -> Self {
        Refresh { every: 1, asynchronous: false, deterministic: false }
    }
}

/// Settings of the linearized implicit Euler integrator.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ImplicitEulerSettings {
    /// PCG starting point.
    pub initial_guess: InitialGuess,
    /// PCG preconditioner.
    pub preconditioner: PreconditionerKind,
    /// Stop PCG after this many iterations (early termination).
    pub max_iterations: Option<usize>,
    /// Stop PCG when `‖b − AΔv‖ ≤ rel_tolerance ‖b‖`.
    pub rel_tolerance: Option<f64>,
    /// How element rotations are extracted.
    pub polar: PolarMethod,
    /// Fill-reducing ordering of the LDLᵀ preconditioner.
    pub ordering: Ordering,
    /// Refresh policy of the LDLᵀ preconditioner.
    pub refresh: Refresh,
    /// Precision the LDLᵀ preconditioner's factor is read in by PCG:
    /// `single` keeps an `f32` copy (half the bytes per application; the
    /// iterates, residuals and tolerance stay `f64`), `bfloat16` a bfloat16
    /// copy beside it (a quarter of the bytes; PCG's tolerance is reached
    /// as before, in a few more iterations when it is tight). The Delassus
    /// operator uses the `f64` factor; the correction does too, except
    /// under `warp`, where its backward sweep reads the `f32` copy (an old
    /// factor stands in for the current `A`; the rounding is ≈ 1e-7 of the
    /// compliance).
    pub preconditioner_precision: Precision,
    /// Warp an outdated LDLᵀ factor by the body's rotation since its
    /// matrix was assembled, `A⁻¹ ≈ G A_s⁻¹ Gᵀ`, in PCG, the Delassus
    /// operator and the correction ([`crate::constraint::Warp`]).
    pub warp: bool,
}

impl Default for ImplicitEulerSettings {
    fn default() -> Self {
        ImplicitEulerSettings {
            initial_guess: InitialGuess::PreviousVelocity,
            preconditioner: PreconditionerKind::Jacobi,
            max_iterations: Some(100),
            rel_tolerance: Some(1e-6),
            polar: PolarMethod::default(),
            ordering: Ordering::Auto,
            refresh: Refresh::default(),
            preconditioner_precision: Precision::Double,
            warp: false,
        }
    }
}

impl ImplicitEulerSettings {
    /// PCG stopping rule.
    pub fn pcg(&self) -> ferrofem_linalg::PcgSettings {
        ferrofem_linalg::PcgSettings {
            max_iterations: self.max_iterations,
            rel_tolerance: self.rel_tolerance,
        }
    }
}
