//! How `W` is obtained (`[constraint_solver] delassus`).

use serde::{Deserialize, Serialize};

/// How `W` is obtained (`[constraint_solver] delassus`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, Hash, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum DelassusMethod {
    /// Dense multi-right-hand-side solves `A⁻¹ Hᵀ` (\[CAK14\]).
    Dense,
    /// Single-nonzero solves along the elimination tree for the touched DOFs.
    Isodof,
    /// As `isodof`, reusing the solves of DOFs seen since the last factorization.
    IsodofReuse,
    /// Local-global with the stored sparse inverse: the touched columns of
    /// `S` read instead of solved, `W̄ = (S Īᵀ)ᵀ D⁻¹ (S Īᵀ)` (zeng2025 eq. 27).
    SparseInverse,
    /// No `W`: PGS applies `H A⁻¹ Hᵀ` through the factor.
    Unbuilt,
    /// The cheapest of the above for the step, by [`super::predict`].
    #[default]
    Auto,
}

impl DelassusMethod {
    /// The scene-file spelling.
    pub fn name(self) -> &'static str {
        match self {
            DelassusMethod::Dense => "dense",
            DelassusMethod::Isodof => "isodof",
            DelassusMethod::IsodofReuse => "isodof-reuse",
            DelassusMethod::SparseInverse => "sparse-inverse",
            DelassusMethod::Unbuilt => "unbuilt",
            DelassusMethod::Auto => "auto",
        }
    }
}
