//! The local-global integrator of zeng2025 (§3.3, §4): projective dynamics
//! for ARAP and ADMM-PD (Overby et al. 2017) for co-rotational and
//! Neo-Hookean solids and membranes, whose constant global matrix
//! `A = M + h² Σ wᵢ GᵢᵀGᵢ` is factorized once and applied by the sparse
//! inverse `S = L⁻¹` (two SpMV per global step), by triangular solves, or
//! approximated by one Jacobi iteration (the incomplete baseline).
//!
//! A step: `predict` (`q̃ = q + h v + h² g`) → k × { `local_step` →
//! `global_step` → `solve_constraints` → `correct` } → `integrate`
//! (`v = (q − q_t)/h`). Contacts and attachments are the constraint stack
//! shared with implicit Euler; they enter every global step through
//! Lagrange multipliers ([`constrained`], zeng2025 §5), with
//! `W = h² H A⁻¹ Hᵀ` built once per step from each body's
//! [`crate::constraint::Compliance`] (the factor of `A_s`), so `A` stays
//! constant.

pub mod anderson;
pub mod constrained;
pub mod energy;
pub mod global;
pub mod lbfgs;
pub mod local;
pub mod newton;
mod shares;
mod step;
pub mod terms;
mod workspace;

use serde::{Deserialize, Serialize};

use ferrofem_linalg::{Ordering, Precision};

use super::InitialGuess;
use crate::error::Invalid;

pub use global::GlobalStepMethod;
pub use step::LocalGlobal;

/// Chebyshev acceleration of the Jacobi baseline (Wang 2015, eq. 12):
/// `q ← ω (γ (q̂ − q) + q − q_prev) + q_prev`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct Chebyshev {
    /// Estimated spectral radius ρ of the Jacobi iteration, in (0, 1).
    pub rho: f64,
    /// Under-relaxation γ, in (0, 1].
    pub gamma: f64,
    /// Plain (under-relaxed) iterations before the acceleration starts.
    pub delay: usize,
}

impl Default for Chebyshev {
    fn default() -> Self {
        Chebyshev { rho: 0.99, gamma: 0.9, delay: 10 }
    }
}

/// How the local-global iteration is accelerated, keeping `A` constant.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Acceleration {
    /// `lbfgs` for scenes without contact or attachments, `none` with them.
    #[default]
    Auto,
    /// The plain iteration.
    None,
    /// Anderson acceleration over the last `anderson_window` iterates
    /// (Peng et al. 2018), safeguarded by the fixed-point residual.
    Anderson,
    /// L-BFGS on the step's energy with `A/h²` as the initial Hessian
    /// (Liu et al. 2017) over the last `lbfgs_window` pairs; scenes without
    /// contact or attachments.
    Lbfgs,
}

impl Acceleration {
    /// The name used in scene files and benchmark records.
    pub fn name(self) -> &'static str {
        match self {
            Acceleration::Auto => "auto",
            Acceleration::None => "none",
            Acceleration::Anderson => "anderson",
            Acceleration::Lbfgs => "lbfgs",
        }
    }

    /// What `auto` means for a scene, constrained (contact or attachments) or not.
    pub fn resolve(self, constrained: bool) -> Acceleration {
        match (self, constrained) {
            (Acceleration::Auto, false) => Acceleration::Lbfgs,
            (Acceleration::Auto, true) => Acceleration::None,
            (a, _) => a,
        }
    }
}

/// `[local_global]` settings.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct LocalGlobalSettings {
    /// Local-global iterations per time step.
    pub iterations: usize,
    /// How the global step solves `A q = b`.
    pub global_step: GlobalStepMethod,
    /// Chebyshev acceleration of the `jacobi` global step (absent: plain Jacobi).
    pub chebyshev: Option<Chebyshev>,
    /// Pin weight relative to the vertex's own diagonal of `A`
    /// (dimensionless): a pinned vertex misses its target by about
    /// `1/pin_weight` of the displacement the rest of the body imposes.
    pub pin_weight: f64,
    /// Fill-reducing ordering of `A_s`.
    pub ordering: Ordering,
    /// What the `triangular` global step's sweeps read: the factor
    /// (`double`) or its `f32` copy (`single`: half the bytes, the
    /// sweeps' floor). In single precision a plain global step corrects
    /// the iterate by the solve of its residual, `q ← x + Ã⁻¹ (b − A x)`
    /// (one step of iterative refinement, the residual in double), so the
    /// iteration's fixed point is the double one; L-BFGS reads it as its
    /// initial inverse Hessian, which leaves the minimizer alone; a folded
    /// body's forward and backward halves are the single-precision solve.
    /// The factor is then kept in `f32` only, which `W` and the correction
    /// read too (the exact computation with the rounded factor).
    pub precision: Precision,
    /// Acceleration of the iteration.
    pub acceleration: Acceleration,
    /// Iterates Anderson acceleration combines (its window `m`).
    pub anderson_window: usize,
    /// Secant pairs L-BFGS keeps.
    pub lbfgs_window: usize,
    /// The iteration's starting point: `previous_velocity` (default),
    /// `q + h v` (dahl2019 §3.2: right at rest, where a body held against
    /// gravity would otherwise start `h² g` off in its slowest mode, which
    /// a few iterations never remove); `explicit`, the prediction
    /// `q̃ = q + h v + h² g` (zeng2025's start); `zero`, `q`.
    pub initial_guess: InitialGuess,
    /// Sweeps of ARAP's polar iteration per local step, warm-started from
    /// the tet's last rotation (dahl2019 §3.3: one sweep leaves `RᵀF`
    /// "symmetric enough"; each sweep raises `tr RᵀF`, so the iteration
    /// still descends, to the same fixed point). The iteration stops before
    /// its last sweep once `‖RᵀF − FᵀR‖ ≤ 1e-12 ‖F‖`. The SVD-based models
    /// (co-rotational, Neo-Hookean), and ARAP with 8 sweeps or more,
    /// converge to that tolerance by Newton steps on the polar
    /// decomposition, Jacobi sweeps behind them.
    pub polar_sweeps: usize,
    /// Stop a step's iterations early once the fixed-point residual
    /// `‖G(s) − s‖_D` falls below this fraction of the first iteration's
    /// (absent: always `iterations`).
    pub tolerance: Option<f64>,
}

impl Default for LocalGlobalSettings {
    fn default() -> Self {
        LocalGlobalSettings {
            iterations: 5,
            global_step: GlobalStepMethod::Auto,
            chebyshev: None,
            pin_weight: 1e4,
            ordering: Ordering::Auto,
            precision: Precision::Double,
            acceleration: Acceleration::Auto,
            anderson_window: 5,
            lbfgs_window: 20,
            polar_sweeps: 1,
            tolerance: None,
            initial_guess: InitialGuess::PreviousVelocity,
        }
    }
}

impl LocalGlobalSettings {
    /// Whether the plain or Anderson iteration measures its fixed-point
    /// residual (for Anderson or for a tolerance).
    pub fn tracks_residual(&self) -> bool {
        self.acceleration == Acceleration::Anderson || self.tolerance.is_some()
    }

    /// Value checks; the error names the key.
    pub fn check(&self) -> Result<(), Invalid> {
        let key = |k: &str| format!("local_global.{k}");
        if self.iterations == 0 {
            return Err(Invalid::new(key("iterations"), "must be at least 1".into()));
        }
        if self.initial_guess == InitialGuess::PreviousChange {
            return Err(Invalid::new(
                key("initial_guess"),
                "\"previous_change\" carries implicit Euler's free-motion Δv over a step; local-global \
                 starts from positions: use \"explicit\" (zeng2025's q̃), \"previous_velocity\" or \"zero\""
                    .into(),
            ));
        }
        if !(self.pin_weight.is_finite() && self.pin_weight > 0.0) {
            return Err(Invalid::new(
                key("pin_weight"),
                format!("{} must be finite and positive", self.pin_weight),
            ));
        }
        if self.tolerance.is_some_and(|t| !(t.is_finite() && t > 0.0)) {
            return Err(Invalid::new(key("tolerance"), "must be finite and positive".into()));
        }
        match self.precision {
            p @ (Precision::Bfloat16 | Precision::Int8) => {
                let name = if p == Precision::Int8 { "int8" } else { "bfloat16" };
                let why = "(8 significant bits) serves only a preconditioner; use \"single\" or \"double\"";
                return Err(Invalid::new(key("precision"), format!("\"{name}\" {why}")));
            }
            Precision::Single
                if !matches!(self.global_step, GlobalStepMethod::Triangular | GlobalStepMethod::Auto) =>
            {
                return Err(Invalid::new(
                    key("precision"),
                    "\"single\" is read by the factor's sweeps: needs global_step = \"triangular\" (or \"auto\")"
                        .into(),
                ))
            }
            _ => {}
        }
        if self.anderson_window == 0 {
            return Err(Invalid::new(key("anderson_window"), "must be at least 1".into()));
        }
        if self.lbfgs_window == 0 {
            return Err(Invalid::new(key("lbfgs_window"), "must be at least 1".into()));
        }
        if self.polar_sweeps == 0 {
            return Err(Invalid::new(key("polar_sweeps"), "must be at least 1".into()));
        }
        if matches!(self.acceleration, Acceleration::Anderson | Acceleration::Lbfgs)
            && self.global_step == GlobalStepMethod::Jacobi
        {
            return Err(Invalid::new(
                key("acceleration"),
                "needs a complete global step (not \"jacobi\")".into(),
            ));
        }
        if let Some(c) = self.chebyshev {
            if !(c.rho > 0.0 && c.rho < 1.0 && c.gamma > 0.0 && c.gamma <= 1.0) {
                return Err(Invalid::new(key("chebyshev"), "need 0 < rho < 1 and 0 < gamma ≤ 1".into()));
            }
            if self.global_step != GlobalStepMethod::Jacobi {
                return Err(Invalid::new(
                    key("chebyshev"),
                    "accelerates only global_step = \"jacobi\"".into(),
                ));
            }
        }
        Ok(())
    }
}
