//! The large buffers of a body's Delassus builds, kept from step to step.

use std::sync::Arc;

use ferrofem_linalg::ldlt::IsodofColumns;
use ferrofem_linalg::Ldlt;

/// The large buffers of one body's Delassus builds — the solves (`A⁻¹ Hᵀ`
/// or the isodof columns), `W̄` and the result `W` — kept from
/// step to step: at thousands of constraints each is tens of megabytes,
/// and memory the process has not touched yet costs a page fault per 4 KiB.
#[derive(Debug, Clone, Default)]
pub struct DelassusBuffers {
    pub(super) solves: Vec<f64>,
    pub(super) wbar: Vec<f64>,
    pub(super) w: Vec<f64>,
    /// The last `isodof` build's columns `S̄`, and the factor they belong
    /// to when a body's build made them (for its correction).
    pub(super) columns: Option<IsodofColumns>,
    pub(super) columns_factor: Option<Arc<Ldlt>>,
}

impl DelassusBuffers {
    /// The last `W` built (row-major `c × c`; empty before the first
    /// build), unless [`super::DelassusBlocks::add_body`] took it.
    pub fn w(&self) -> &[f64] {
        &self.w
    }

    /// The last `W` built, for [`super::DelassusBlocks::add_body`] to
    /// take (handing back storage to reuse).
    pub fn w_mut(&mut self) -> &mut Vec<f64> {
        &mut self.w
    }
}
