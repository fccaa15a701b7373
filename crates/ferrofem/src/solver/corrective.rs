//! What the recursive corrective motion (zeng-implicit §5–6) keeps and
//! reports: its scratch from step to step and its record of a step. The
//! iteration itself drives the whole constraint space
//! ([`crate::constraint_stack::resolve_recursively`]).

use nalgebra::Vector3;
use serde::Serialize;

use crate::constraint::proximity::{Linearization, Proximity};

/// What the recursive corrective motion did in a step, and the time of
/// its parts (ms) as zeng-implicit Table 1 splits them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct CorrectiveRecord {
    /// `standard` or `fast`.
    pub update: &'static str,
    /// Newton iterations (linearizations) used.
    pub iterations: usize,
    /// The largest turn of a contact normal at the last re-linearization (rad).
    pub direction_change: f64,
    /// Violation after the first iteration, the explicit scheme's (m).
    pub violation_before: f64,
    /// Violation after the last iteration (m).
    pub violation_after: f64,
    /// `W_H` (fast) or the first `W` (standard).
    pub build_ms: f64,
    /// `W_k` of the iterations: `C_k W_H C_kᵀ`, or rebuilt from the factor after the first.
    pub rebuild_ms: f64,
    /// `δ_free` and the constraint solves.
    pub solve_ms: f64,
    /// The iterates: `W_H C_kᵀ λ`, or `A⁻¹ H_kᵀ λ` per body.
    pub correction_ms: f64,
}

/// Scratch of the recursive corrective motion, kept from step to step.
#[derive(Debug, Default)]
pub struct CorrectiveScratch {
    /// The proximity vertices and their iterates.
    pub proximity: Proximity,
    /// `W_H = h² H A⁻¹ Hᵀ` on the proximity DOFs, row-major.
    pub(crate) mapping: Vec<f64>,
    /// Each group's point at the start of the step.
    pub(crate) starts: Vec<Vector3<f64>>,
    /// Each group's linearization at the iterate.
    pub(crate) linearizations: Vec<Option<Linearization>>,
    /// `Jᵀ λ`.
    pub(crate) u: Vec<f64>,
}
