//! What a Delassus build did (read by the stats): how one body's `W_b` was
//! obtained, and what the `auto` model predicted for each method.

use serde::Serialize;

use super::method::DelassusMethod;

/// How a body's `W_b` was obtained in one step.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct DelassusRecord {
    /// The method used (`auto` resolved).
    pub method: &'static str,
    /// Constraint rows touching the body.
    pub rows: usize,
    /// DOFs those rows touch (isodofs).
    pub isodofs: usize,
    /// Isodofs whose solves were reused from earlier steps.
    pub reused_isodofs: usize,
    /// `reused_isodofs / isodofs` (0 when none).
    pub reuse_fraction: f64,
    /// Isodof columns solved this step for the factor being handed over
    /// to (implicit Euler's `refresh.handover`; 0 outside a handover).
    pub solved_ahead: usize,
    /// The cost model's predictions (ms), when `auto` chose.
    pub predicted: Option<DelassusCosts>,
}

/// Predicted milliseconds of each method for one body's step (the `auto` model).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct DelassusCosts {
    /// `4 nnz(L) c + 2 c nnz(H)` flops.
    pub dense_ms: f64,
    /// Path solves and `S̄ᵀD⁻¹S̄` over the reach, plus `Ĥ W̄ Ĥᵀ`.
    pub isodof_ms: f64,
    /// As isodof for the DOFs not cached, plus the new–old products.
    pub reuse_ms: f64,
    /// Expected sweeps × groups full solves, plus the diagonal blocks.
    pub unbuilt_ms: f64,
    /// Local-global with `S` stored: the touched columns gathered densely
    /// over their reach and `Zᵀ Z` (`None` where `S` is not stored).
    pub sparse_inverse_ms: Option<f64>,
}

impl DelassusCosts {
    /// The cheapest method (`unbuilt` only when not `assembled`); reuse
    /// wins ties with isodof (it keeps the cache warm).
    pub fn cheapest(&self, assembled: bool) -> DelassusMethod {
        let unbuilt = if assembled { f64::INFINITY } else { self.unbuilt_ms };
        [
            (self.reuse_ms, DelassusMethod::IsodofReuse),
            (self.isodof_ms, DelassusMethod::Isodof),
            (self.dense_ms, DelassusMethod::Dense),
            (unbuilt, DelassusMethod::Unbuilt),
            (self.sparse_inverse_ms.unwrap_or(f64::INFINITY), DelassusMethod::SparseInverse),
        ]
        .into_iter()
        .fold((f64::INFINITY, DelassusMethod::IsodofReuse), |best, x| if x.0 < best.0 { x } else { best })
        .1
    }
}
