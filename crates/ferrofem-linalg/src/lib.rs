//! Sparse linear algebra for ferrofem: a compressed-sparse-row matrix whose
//! pattern is fixed once ([`CsrMatrix`]), deterministic parallel vector
//! kernels ([`vector`]) on fused multiply-add primitives ([`simd`]), preconditioned conjugate gradients ([`pcg`]) and conjugate residuals ([`cr`]), and a
//! sparse LDLᵀ with its elimination tree, single-nonzero solves and sparse
//! inverse ([`ldlt`]).
//!
//! Results never depend on the number of threads: reductions are done over
//! fixed-size blocks whose partial sums are added in a fixed order.
#![warn(missing_docs)]

pub mod cr;
mod csr;
pub mod dense;
mod error;
pub mod ldlt;
pub mod pcg;
pub mod simd;
pub mod spin;
mod split;
pub mod team;
pub mod vector;

pub use cr::{ConjugateResidual, CrSolve};
pub use csr::{CsrMatrix, CsrPattern};
pub use error::LinalgError;
pub use ldlt::{Ldlt, LdltSymbolic, Ordering, Precision, SparseInverse, SparseInverseScratch};
pub use pcg::{
    DiagonalPreconditioner, IdentityPreconditioner, KrylovError, Pcg, PcgSettings, PcgSolve, Preconditioner,
};
