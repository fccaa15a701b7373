//! The *solver workspace* part of the constraint stack: scratch of the
//! solvers, kept from step to step so that a warm step allocates nothing.

use super::corrective::CorrectiveScratch;
use super::{NewtonScratch, PgsScratch};
use crate::constraint::ConstraintGroup;

/// Scratch of PGS, the non-smooth Newton and the corrective motion.
#[derive(Debug, Default)]
pub struct SolverWorkspace {
    /// The law of each group.
    pub(crate) laws: Vec<ConstraintGroup>,
    /// PGS's diagonal blocks and upper sums.
    pub(crate) pgs: PgsScratch,
    /// Complementarity scale `r` per row (the non-smooth Newton's, zeng2025 eq. 28).
    pub(crate) scale: Vec<f64>,
    /// The non-smooth Newton's vectors.
    pub(crate) newton: NewtonScratch,
    /// A vector of `W λ`.
    pub(crate) scratch: Vec<f64>,
    /// The recursive corrective motion's proximity vertices and iterates.
    pub(crate) corrective: CorrectiveScratch,
}
