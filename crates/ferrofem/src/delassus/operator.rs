//! The *Delassus operator* part of the constraint stack: the world's `W`
//! of the step in whichever form its builders left it (zeng2022 eq. 12;
//! zeng2025 §5).

use super::{DelassusBlocks, FactoredDelassus};

/// `W = h² H A⁻¹ Hᵀ` of the step: assembled, factored, or partly unbuilt.
#[derive(Debug, Default)]
pub struct Delassus {
    /// The assembled part, by blocks of coupled groups (empty when every
    /// body is unbuilt or `W` is factored).
    pub assembled: DelassusBlocks,
    /// `W` in factored form (local-global's non-smooth Newton), when
    /// `build_delassus_factored` built it this step.
    pub factored: FactoredDelassus,
    /// Bodies whose part of `W` is applied unbuilt.
    pub unbuilt: Vec<usize>,
    /// Bodies whose `W_b` is built but kept apart, not assembled (PGS
    /// reads them body by body: [`super::ApartDelassus`]); then every
    /// body with rows is listed and `assembled` holds nothing.
    pub apart: Vec<usize>,
}
