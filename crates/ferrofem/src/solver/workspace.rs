//! The *solver workspace* part of the constraint stack: scratch of the
//! solvers, kept from step to step so that a warm step allocates nothing.

use super::corrective::CorrectiveScratch;
use super::{NewtonScratch, PgsScratch};
use crate::constraint::ConstraintGroup;
use crate::delassus::DelassusBlock;

/// Scratch of PGS, the non-smooth Newton and the corrective motion.
#[derive(Debug, Default)]
pub struct SolverWorkspace {
    /// The law of each group.
    pub(crate) laws: Vec<ConstraintGroup>,
    /// PGS's diagonal blocks and upper sums.
    pub(crate) pgs: PgsScratch,
    /// Per block of coupled groups: its PGS problem and scratch.
    pub(crate) pgs_blocks: Vec<BlockScratch>,
    /// Complementarity scale `r` per row (the non-smooth Newton's, zeng2025 eq. 28).
    pub(crate) scale: Vec<f64>,
    /// The non-smooth Newton's vectors.
    pub(crate) newton: NewtonScratch,
    /// A vector of `W λ`.
    pub(crate) scratch: Vec<f64>,
    /// The recursive corrective motion's proximity vertices and iterates.
    pub(crate) corrective: CorrectiveScratch,
}

/// One block's PGS problem gathered from the world's rows: free gaps, laws,
/// λ (warm start in, result out) and PGS's scratch.
#[derive(Debug, Default)]
pub struct BlockScratch {
    pub(crate) free: Vec<f64>,
    pub(crate) laws: Vec<ConstraintGroup>,
    pub(crate) lambda: Vec<f64>,
    pub(crate) pgs: PgsScratch,
}

impl BlockScratch {
    /// The block's rows of the world's `free` and `lambda` and its groups' `laws`.
    pub(crate) fn gather(
        &mut self,
        block: &DelassusBlock,
        free: &[f64],
        laws: &[ConstraintGroup],
        lambda: &[f64],
    ) {
        self.free.clear();
        self.free.extend(block.world_rows().map(|r| free[r]));
        self.lambda.clear();
        self.lambda.extend(block.world_rows().map(|r| lambda[r]));
        self.laws.clear();
        self.laws.extend(block.groups.iter().map(|&g| laws[g]));
    }
}
