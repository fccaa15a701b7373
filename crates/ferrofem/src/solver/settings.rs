//! `[constraint_solver]`: which solver runs in constraint space, its
//! stopping rule, and how the Delassus operator is obtained.

use serde::{Deserialize, Serialize};

use super::newton::{Complementarity, ComplementarityScale, NewtonSchedule, NewtonSettings};
use super::PgsSettings;
use crate::delassus::DelassusMethod;

/// The constraint solver and its settings.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ConstraintSolver {
    /// Projected Gauss-Seidel (zeng2022 eq. 16).
    Pgs(PgsSettings),
    /// Non-smooth Newton with conjugate residuals (zeng2025 §5.2–5.4).
    NonSmoothNewton(NewtonSettings),
}

impl Default for ConstraintSolver {
    fn default() -> Self {
        ConstraintSolver::Pgs(PgsSettings::default())
    }
}

/// `[constraint_solver]` settings.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[serde(try_from = "SolverSpec")]
pub struct ConstraintSolverSettings {
    /// Which solver, with its stopping rule; `None`: the integrator's own
    /// (PGS under implicit Euler, non-smooth Newton under local-global).
    pub solver: Option<ConstraintSolver>,
    /// How the Delassus operator `W` is obtained.
    pub delassus: DelassusMethod,
    /// A tolerance given without a method, for the integrator's own solver.
    pub tolerance: Option<f64>,
    /// Newton steps per local-global iteration, when the scene names it
    /// (local-global only; `None`: [`NewtonSchedule::Final`]).
    pub newton_schedule: Option<NewtonSchedule>,
}

impl ConstraintSolverSettings {
    /// PGS with the given stopping rule, `W` by `auto`.
    pub fn pgs(max_iterations: usize, tolerance: f64) -> Self {
        ConstraintSolverSettings {
            solver: Some(ConstraintSolver::Pgs(PgsSettings::new(max_iterations, tolerance))),
            delassus: DelassusMethod::default(),
            tolerance: None,
            newton_schedule: None,
        }
    }

    /// The solver that runs: the one named, else the integrator's own.
    pub fn solver(&self, local_global: bool) -> ConstraintSolver {
        match (self.solver, local_global) {
            (Some(s), _) => s,
            (None, false) => {
                let d = PgsSettings::default();
                ConstraintSolver::Pgs(PgsSettings { tolerance: self.tolerance.unwrap_or(d.tolerance), ..d })
            }
            (None, true) => {
                let d = NewtonSettings::default();
                ConstraintSolver::NonSmoothNewton(NewtonSettings {
                    tolerance: self.tolerance.unwrap_or(d.tolerance),
                    ..d
                })
            }
        }
    }
}

/// The solvers a scene can name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
enum SolverKind {
    Pgs,
    NonSmoothNewton,
}

/// A scene file's `[constraint_solver]` has the schema of its form ([`SolverSpec`]).
impl schemars::JsonSchema for ConstraintSolverSettings {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "ConstraintSolverSettings".into()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        SolverSpec::json_schema(generator)
    }
}

/// The scene file's form of [`ConstraintSolverSettings`].
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct SolverSpec {
    /// `pgs` (zeng2022 eq. 16) or `non-smooth-newton` (zeng2025 §5); default: PGS under implicit Euler, the non-smooth Newton under local-global.
    method: Option<SolverKind>,
    /// PGS: sweeps at most (≥ 1).
    #[schemars(extend("default" = 200), range(min = 1))]
    max_iterations: Option<usize>,
    /// PGS: the precision the sweeps read an assembled W's off-diagonal blocks in (`double`, `single` or `bfloat16`; the diagonal blocks and all sums stay in double).
    #[schemars(extend("default" = "double", "enum" = ["double", "single", "bfloat16"]))]
    delassus_precision: Option<ferrofem_linalg::Precision>,
    /// Stop when the relative change of λ (max norm) falls under this.
    #[schemars(extend("default" = 1e-8), range(min = 0.0))]
    tolerance: Option<f64>,
    /// Non-smooth Newton: NCP function of the normal rows.
    #[schemars(extend("default" = "fischer-burmeister"))]
    complementarity: Option<Complementarity>,
    /// Non-smooth Newton: complementarity scale, `system-inverse` (r = W_jj, eq. 28) or `mass-inverse`.
    #[schemars(extend("default" = "system-inverse"))]
    preconditioner: Option<ComplementarityScale>,
    /// Non-smooth Newton: steps per solve (≥ 1).
    #[schemars(extend("default" = 5), range(min = 1))]
    newton_iterations: Option<usize>,
    /// Non-smooth Newton under local-global: `final` (one step per iteration, up to `newton_iterations` in the last) or `every`.
    #[schemars(extend("default" = "final"))]
    newton_schedule: Option<NewtonSchedule>,
    /// Non-smooth Newton: conjugate-residual iterations per Newton step (≥ 1).
    #[schemars(extend("default" = 10), range(min = 1))]
    cr_iterations: Option<usize>,
    /// Non-smooth Newton: stop when every NCP function is under this (m).
    #[schemars(extend("default" = 1e-10), range(min = 0.0))]
    ncp_tolerance: Option<f64>,
    /// How W = H A⁻¹ Hᵀ is obtained.
    #[serde(default)]
    delassus: DelassusMethod,
}

impl SolverSpec {
    /// The method named, or implied by the keys given (`None`: neither).
    fn kind(&self) -> Result<Option<SolverKind>, String> {
        let newton = [
            self.complementarity.is_some().then_some("complementarity"),
            self.preconditioner.is_some().then_some("preconditioner"),
            self.newton_iterations.is_some().then_some("newton_iterations"),
            self.newton_schedule.is_some().then_some("newton_schedule"),
            self.cr_iterations.is_some().then_some("cr_iterations"),
            self.ncp_tolerance.is_some().then_some("ncp_tolerance"),
        ];
        let newton_key = newton.iter().flatten().next();
        let pgs_key = self
            .max_iterations
            .map(|_| "max_iterations")
            .or(self.delassus_precision.map(|_| "delassus_precision"));
        match (self.method, newton_key, pgs_key) {
            (Some(SolverKind::Pgs), Some(k), _) => {
                Err(format!("`{k}` belongs to method = \"non-smooth-newton\", not \"pgs\""))
            }
            (Some(SolverKind::NonSmoothNewton), _, Some(k)) | (None, Some(_), Some(k)) => Err(format!(
                "`{k}` is PGS's; the non-smooth Newton takes `newton_iterations` and `cr_iterations`"
            )),
            (Some(k), _, _) => Ok(Some(k)),
            (None, Some(_), None) => Ok(Some(SolverKind::NonSmoothNewton)),
            (None, None, Some(_)) => Ok(Some(SolverKind::Pgs)),
            (None, None, None) => Ok(None),
        }
    }
}

/// `[contact] resolution`: how often the constraints are linearized.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ResolutionKind {
    /// Once, at the start of the step (zeng2022).
    Explicit,
    /// Again at each iterate of a recursive corrective motion.
    Implicit,
}

/// `[contact] update`: how `W_k` and the iterate are formed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Update {
    /// Algorithm 2: rebuilt from the factor, corrections solved, every iteration.
    Standard,
    /// Algorithm 3: `W_H` once per step, then products only.
    #[default]
    Fast,
}

impl Update {
    /// The scene-file spelling.
    pub fn name(self) -> &'static str {
        match self {
            Update::Standard => "standard",
            Update::Fast => "fast",
        }
    }
}

/// The settings of the implicit resolution.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ImplicitResolution {
    /// At most this many linearizations per step (1: the explicit scheme).
    pub newton_iterations: usize,
    /// How `W_k` and the iterate are formed.
    pub update: Update,
    /// Stop when no contact normal turns by more than this (rad) …
    pub direction_tolerance: f64,
    /// … and no contact violates by more than this (m): penetration, or
    /// separation where it carries force.
    pub violation_tolerance: f64,
}

impl Default for ImplicitResolution {
    fn default() -> Self {
        ImplicitResolution {
            newton_iterations: 5,
            update: Update::Fast,
            direction_tolerance: 1e-3,
            violation_tolerance: 1e-6,
        }
    }
}

/// How the constraints are linearized within a step.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Resolution {
    /// Once, at the start of the step.
    #[default]
    Explicit,
    /// By recursive corrective motion.
    Implicit(ImplicitResolution),
}

/// The first of the optional scene values `(key, value)` that is given
/// and not finite and ≥ 0, as the scene error naming it.
pub(crate) fn non_negative(values: &[(&str, Option<f64>)]) -> Result<(), String> {
    match values.iter().find_map(|(key, v)| Some((key, v.filter(|t| !(t.is_finite() && *t >= 0.0))?))) {
        Some((key, t)) => Err(format!("{key} = {t}: must be finite and ≥ 0")),
        None => Ok(()),
    }
}

impl TryFrom<SolverSpec> for ConstraintSolverSettings {
    type Error = String;

    fn try_from(s: SolverSpec) -> Result<Self, String> {
        non_negative(&[("tolerance", s.tolerance), ("ncp_tolerance", s.ncp_tolerance)])?;
        let at_least_one = |v: Option<usize>, key: &str| match v {
            Some(0) => Err(format!("{key} must be at least 1")),
            _ => Ok(()),
        };
        at_least_one(s.max_iterations, "max_iterations")?;
        at_least_one(s.newton_iterations, "newton_iterations")?;
        at_least_one(s.cr_iterations, "cr_iterations")?;
        if s.delassus_precision == Some(ferrofem_linalg::Precision::Int8) {
            return Err("delassus_precision = \"int8\" is a preconditioner factor's copy only; `W` is read \
                        in \"double\", \"single\" or \"bfloat16\""
                .into());
        }
        let solver = match s.kind()? {
            None => None,
            Some(SolverKind::Pgs) => {
                let d = PgsSettings::default();
                Some(ConstraintSolver::Pgs(PgsSettings {
                    max_iterations: s.max_iterations.unwrap_or(d.max_iterations),
                    tolerance: s.tolerance.unwrap_or(d.tolerance),
                    precision: s.delassus_precision.unwrap_or(d.precision),
                }))
            }
            Some(SolverKind::NonSmoothNewton) => {
                let d = NewtonSettings::default();
                Some(ConstraintSolver::NonSmoothNewton(NewtonSettings {
                    complementarity: s.complementarity.unwrap_or(d.complementarity),
                    preconditioner: s.preconditioner.unwrap_or(d.preconditioner),
                    iterations: s.newton_iterations.unwrap_or(d.iterations),
                    linear_iterations: s.cr_iterations.unwrap_or(d.linear_iterations),
                    tolerance: s.tolerance.unwrap_or(d.tolerance),
                    ncp_tolerance: s.ncp_tolerance.unwrap_or(d.ncp_tolerance),
                    extension: None,
                }))
            }
        };
        Ok(ConstraintSolverSettings {
            solver,
            delassus: s.delassus,
            tolerance: s.tolerance,
            newton_schedule: s.newton_schedule,
        })
    }
}
