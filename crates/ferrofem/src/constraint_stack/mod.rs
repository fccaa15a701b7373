//! The constraint stack, shared by both integrators, in four parts (SOFA's
//! split, `DESIGN.md` §1): the *problem*
//! ([`crate::constraint::ConstraintProblem`]: groups, rows `H`, gaps,
//! impulses), the *Delassus operator* ([`crate::delassus::Delassus`]: `W`
//! assembled, factored or partly unbuilt, from the builders of
//! `crate::delassus`), the *solver workspace*
//! ([`crate::solver::SolverWorkspace`]: PGS, non-smooth Newton and
//! corrective-motion scratch) and the *outcome* of a solve
//! ([`crate::solver::SolveOutcome`]). [`ConstraintSpace`] holds one of each
//! for the step; this module drives them in order:
//!
//! `assemble` (groups and rows) → [`build_delassus`] → [`solve_constraints`]
//! (or [`resolve_recursively`]) → the integrator's correction →
//! `measure_end_violation`.
//!
//! The parts below know nothing of this module: it is the only place that
//! sees all four.

mod build;
mod corrective;
pub mod device;
mod solve;
mod space;

pub use build::{build_delassus, build_delassus_factored, WForms};
pub use corrective::{resolve_recursively, Motion};
pub use solve::{keep_warm_start, solve_constraints, solve_in_space, warm_started};
pub use space::ConstraintSpace;
