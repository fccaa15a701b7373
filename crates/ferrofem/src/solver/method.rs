//! Which constraint solver ran a step (named so in the stats and errors).

use serde::Serialize;

/// The constraint solver of a step: `pgs` or `non-smooth-newton` in the
/// stats JSON (`docs/stats.md`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum SolverMethod {
    /// Projected Gauss-Seidel (zeng2022 §3.3).
    #[default]
    Pgs,
    /// The non-smooth Newton method (zeng2025 §5).
    NonSmoothNewton,
}

impl SolverMethod {
    /// The name in the stats: `pgs`, `non-smooth-newton`.
    pub fn name(self) -> &'static str {
        match self {
            SolverMethod::Pgs => "pgs",
            SolverMethod::NonSmoothNewton => "non-smooth-newton",
        }
    }

    /// What its iterations are called in messages.
    pub fn iterations_name(self) -> &'static str {
        match self {
            SolverMethod::Pgs => "PGS sweeps",
            SolverMethod::NonSmoothNewton => "non-smooth Newton steps",
        }
    }
}

impl std::fmt::Display for SolverMethod {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_the_stats_json_strings() {
        for m in [SolverMethod::Pgs, SolverMethod::NonSmoothNewton] {
            assert_eq!(serde_json::to_value(m).unwrap(), serde_json::Value::String(m.name().into()));
        }
    }
}
