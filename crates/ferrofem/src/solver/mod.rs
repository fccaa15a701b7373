//! Constraint solvers in constraint space (zeng2022 §3.3): the per-contact
//! Signorini–Coulomb resolution and projected Gauss-Seidel over contacts.
//!
//! Conventions (docs/architecture.md): the local problem of a group is
//! `δ = d + W λ`; a gap `δₙ ≥ 0` means separated; `λₙ ≥ 0` pushes apart;
//! friction obeys `‖λₜ‖ ≤ μ λₙ` and opposes the tangential motion `δₜ`.

pub mod coulomb;
pub mod pgs;

pub use coulomb::{resolve_contact, ContactState};
pub use pgs::{AssembledDelassus, ConstraintGroup, DelassusOperator, Pgs, PgsSettings, PgsSolve};
