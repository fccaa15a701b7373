//! The implicit-Euler settings of a scene's `[implicit_euler]` table:
//! the free-motion PCG's initial guess, preconditioner and refresh
//! (dahl2019 §3.2–3.3, zeng2022 §3.1), and the co-rotational polar method.

use serde::{Deserialize, Serialize};

use ferrofem_linalg::{Ordering, Precision};

use crate::element::PolarMethod;

/// Starting point of the free-motion PCG, named after the velocity
/// `v(t+h)` it assumes (dahl2019 §3.2); the solver's unknown is
/// `Δv = v(t+h) − v(t)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema)]
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
    /// `v(t+h) = v(t) + Δv⁻`, with `Δv⁻` the previous step's free-motion
    /// solution (its velocity change before the contact correction):
    /// gravity's and the elastic forces' accelerations carried over one
    /// step, so an early-terminated PCG spends its iterations on what
    /// changed (implicit Euler only; `Δv = 0` on the first step, which
    /// takes at least two iterations).
    #[serde(alias = "previous-change")]
    PreviousChange,
}

/// How an outdated LDLᵀ factor is turned for the free-motion PCG
/// (`warp = true`; `W` and the correction always use the body's rotation).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PreconditionerWarp {
    /// One rotation `G` for the body, as `W` and the correction use it.
    #[default]
    Body,
    /// A rotation `Gᵢ` per vertex, its first tet's turn since the factor's
    /// step (stiffness warping, Müller & Gross 2004):
    /// `P⁻¹ = G_v A_s⁻¹ G_vᵀ`, `G_v = diag(Gᵢ)`. A rolling body's contact
    /// patch turns against the rest of it; a per-vertex turn follows it.
    Vertex,
}

/// Preconditioner of the free-motion PCG.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema)]
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
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
    /// With `asynchronous`: the steps over which the constraints move to a
    /// new factor. `W` and the correction keep the previous factor (warped,
    /// its isodof columns reused, zeng2022 §5) while the new factor's
    /// columns are solved a share per step; from `handover` steps after the
    /// factor came in, they use it. Less than `every`; 0: at once, every
    /// isodof solved anew in the step the factor comes in.
    pub handover: usize,
}

impl Default for Refresh {
    fn default() -> Self {
        Refresh { every: 1, asynchronous: false, deterministic: false, handover: 0 }
    }
}

/// Settings of the linearized implicit Euler integrator.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct ImplicitEulerSettings {
    /// PCG starting point.
    pub initial_guess: InitialGuess,
    /// PCG preconditioner.
    pub preconditioner: PreconditionerKind,
    /// Stop PCG after this many iterations (early termination).
    #[schemars(range(min = 1))]
    pub max_iterations: Option<usize>,
    /// Stop PCG when `‖b − AΔv‖ ≤ rel_tolerance ‖b‖`.
    pub rel_tolerance: Option<f64>,
    /// With `max_iterations`: PCG stops there only once `‖b − AΔv‖ ≤
    /// residual_ceiling ‖b‖`, and goes on otherwise, to 20 iterations in
    /// all. The real-time preset's 0.25: its one iteration leaves the
    /// drops under 0.21 (the 5k drop's median 0.013), but bodies squeezed
    /// between bodies at 0.48–0.96, where the free motion ran away.
    pub residual_ceiling: Option<f64>,
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
    /// as before, in a few more iterations when it is tight), `int8` an
    /// 8-bit copy (each block of 128 rows of a column of `L` in integers
    /// times a power-of-two scale: an eighth of the bytes, an entry within
    /// 2⁻⁸ of its block's largest; the real-time preset's). The Delassus
    /// operator uses the `f64` factor; the correction does too, except
    /// under `warp`, where its backward sweep reads the `f32` copy (an old
    /// factor stands in for the current `A`; the rounding is ≈ 1e-7 of the
    /// compliance).
    pub preconditioner_precision: Precision,
    /// Warp an outdated LDLᵀ factor by the body's rotation since its
    /// matrix was assembled, `A⁻¹ ≈ G A_s⁻¹ Gᵀ`, in PCG, the Delassus
    /// operator and the correction ([`crate::constraint::Warp`]).
    pub warp: bool,
    /// Under `warp`, whether PCG's preconditioner turns the factor per
    /// vertex or by the body's rotation ([`PreconditionerWarp`]).
    pub preconditioner_warp: PreconditionerWarp,
    /// PCG also searches along the last step-to-step difference of the
    /// free-motion `Δv`, `d = Δvₙ₋₁ − Δvₙ₋₂`: `Δv` first takes the multiple
    /// of `d` that minimizes the energy, then PCG's directions stay
    /// `A`-conjugate to `d` (deflated CG with one recycled direction, Saad
    /// et al. 2000; one more product with `A`; [`ferrofem_linalg::Pcg::solve_augmented`]).
    pub recycled_direction: bool,
}

impl Default for ImplicitEulerSettings {
    fn default() -> Self {
        ImplicitEulerSettings {
            initial_guess: InitialGuess::PreviousVelocity,
            preconditioner: PreconditionerKind::Jacobi,
            max_iterations: Some(100),
            rel_tolerance: Some(1e-6),
            residual_ceiling: None,
            polar: PolarMethod::default(),
            ordering: Ordering::Auto,
            refresh: Refresh::default(),
            preconditioner_precision: Precision::Double,
            warp: false,
            preconditioner_warp: PreconditionerWarp::Body,
            recycled_direction: false,
        }
    }
}

impl ImplicitEulerSettings {
    /// PCG stopping rule.
    pub fn pcg(&self) -> ferrofem_linalg::PcgSettings {
        ferrofem_linalg::PcgSettings {
            max_iterations: self.max_iterations,
            rel_tolerance: self.rel_tolerance,
            residual_ceiling: self.residual_ceiling,
        }
    }
}
