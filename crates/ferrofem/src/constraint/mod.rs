//! The constraint stack, shared by both integrators (zeng2022 §3.2–3.3):
//! constraint groups from contacts, attachments, needles and cables, each body's rows `H_b`
//! and its [`Compliance`] (how `A⁻¹` is applied): the *problem* part of
//! the constraint stack ([`crate::constraint_stack`]).

mod cable;
mod compliance;
mod groups;
mod jacobian;
mod key;
mod law;
mod needle;
mod problem;
pub mod proximity;
mod rows;
mod warp;

pub use cable::{cable_groups, cable_tension};
pub use compliance::Compliance;
pub use groups::{gather_groups, Group};
pub use jacobian::ConstraintJacobian;
pub use key::{GroupKey, Partner};
pub use law::ConstraintGroup;
pub use needle::{needle_groups, needle_reaction};
pub use problem::ConstraintProblem;
pub use rows::{transpose_times, BodyRows};
pub use warp::Warp;
