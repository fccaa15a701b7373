//! The *Delassus operator* part of the constraint stack: the world's `W`
//! of the step in whichever form its builders left it (zeng2022 eq. 12;
//! zeng2025 §5).

use super::FactoredDelassus;

/// `W = h² H A⁻¹ Hᵀ` of the step: assembled, factored, or partly unbuilt.
#[derive(Debug, Default)]
pub struct Delassus {
    /// The assembled part, row-major, `3g × 3g` (empty when every body is
    /// unbuilt or `W` is factored).
    pub assembled: Vec<f64>,
    /// `W` in factored form (local-global's non-smooth Newton), when
    /// `build_delassus_factored` built it this step.
    pub factored: FactoredDelassus,
    /// Bodies whose part of `W` is applied unbuilt.
    pub unbuilt: Vec<usize>,
    /// `assembled` rounded to f32 (PGS's `delassus_precision = "single"`,
    /// the non-smooth Newton's inner solves), made on first use after `W`
    /// changes: whatever writes `assembled` empties it.
    pub(crate) single: Vec<f32>,
}
