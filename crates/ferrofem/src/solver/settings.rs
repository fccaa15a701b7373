//! `[constraint_solver]`: which solver runs in constraint space, its
//! stopping rule, and how the Delassus operator is obtained.

use serde::{Deserialize, Serialize};

use super::PgsSettings;
use crate::delassus::DelassusMethod;

/// The constraint solver and its settings.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ConstraintSolver {
    /// Projected Gauss-Seidel (zeng2022 eq. 16).
    Pgs(PgsSettings),
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
    /// Which solver, with its stopping rule.
    pub solver: ConstraintSolver,
    /// How the Delassus operator `W` is obtained.
    pub delassus: DelassusMethod,
}

impl ConstraintSolverSettings {
    /// PGS with the given stopping rule, `W` by `auto`.
    pub fn pgs(max_iterations: usize, tolerance: f64) -> Self {
        ConstraintSolverSettings {
            solver: ConstraintSolver::Pgs(PgsSettings { max_iterations, tolerance }),
            delassus: DelassusMethod::default(),
        }
    }
}

/// The solvers a scene can name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
enum SolverKind {
    #[default]
    Pgs,
}

/// The scene file's form of [`ConstraintSolverSettings`].
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SolverSpec {
    #[serde(default)]
    method: SolverKind,
    max_iterations: Option<usize>,
    tolerance: Option<f64>,
    #[serde(default)]
    delassus: DelassusMethod,
}

impl TryFrom<SolverSpec> for ConstraintSolverSettings {
    type Error = String;

    fn try_from(s: SolverSpec) -> Result<Self, String> {
        let d = PgsSettings::default();
        let max_iterations = s.max_iterations.unwrap_or(d.max_iterations);
        let tolerance = s.tolerance.unwrap_or(d.tolerance);
        if max_iterations == 0 {
            return Err("max_iterations must be at least 1".into());
        }
        if !(tolerance.is_finite() && tolerance >= 0.0) {
            return Err(format!("tolerance = {tolerance}: must be finite and ≥ 0"));
        }
        let solver = match s.method {
            SolverKind::Pgs => ConstraintSolver::Pgs(PgsSettings { max_iterations, tolerance }),
        };
        Ok(ConstraintSolverSettings { solver, delassus: s.delassus })
    }
}
