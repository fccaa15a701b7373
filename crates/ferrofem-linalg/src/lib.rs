//! Sparse linear algebra for ferrofem: a compressed-sparse-row matrix whose
//! pattern is fixed once ([`CsrMatrix`]), deterministic parallel vector
//! kernels ([`vector`]), and preconditioned conjugate gradients ([`pcg`]).
//!
//! Results never depend on the number of threads: reductions are done over
//! fixed-size blocks whose partial sums are added in a fixed order.
#![warn(missing_docs)]

pub mod bandwidth;
mod csr;
pub mod pcg;
pub mod vector;

pub use csr::{CsrMatrix, CsrPattern};
pub use pcg::{
    DiagonalPreconditioner, IdentityPreconditioner, KrylovError, Pcg, PcgSettings, PcgSolve, Preconditioner,
};
