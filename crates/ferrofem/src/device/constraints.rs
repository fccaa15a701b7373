//! The constraint rows as the device reads them: the non-smooth Newton
//! solve's settings and laws, and a frame with constraint rows resident on
//! the device (zeng2025 Algorithm 3–4 on one body), what the host hands
//! the device once per step and what comes back in the frame's one host
//! wait.

use crate::solver::NewtonSolve;

/// The step's constraint rows on one body as the device reads them:
/// `δ(q) = gaps + H q` per row (zeng2025 eq. 40, `δ` affine in `q`),
/// `H` as CSR over the world's rows.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DeviceRows {
    /// Entry ranges per row (`rows + 1` values).
    pub row_ptr: Vec<u32>,
    /// Each entry's DOF (three per vertex).
    pub dofs: Vec<u32>,
    /// Each entry's coefficient (a point's weight times a component of
    /// the row's direction).
    pub coef: Vec<f64>,
    /// `δ`'s constant part per row: the offset less the obstacle's shift
    /// and `H q_t`.
    pub gaps: Vec<f64>,
}

impl DeviceRows {
    /// Constraint rows described.
    pub fn rows(&self) -> usize {
        self.row_ptr.len().saturating_sub(1)
    }
}

/// What a frame with constraints reads: `W` (built on the device or
/// uploaded), then `iterations = solves.len()` × { local step, `b = c + Σ h² w Gᵀ p + h² Hᵀ λ` (eq. 23b), global
/// step, `δ(q)`, the non-smooth Newton solve on `W` from `λ`, the
/// correction `q += h² A⁻¹ Hᵀ Δλ` }.
#[derive(Debug, Clone, Copy)]
pub struct ContactFrame<'a> {
    /// `b`'s constant part, without the constraint forces.
    pub c: &'a [f64],
    /// Whether the host's rotations are newer than the device's.
    pub upload_rotations: bool,
    /// The rows and `δ`'s constant part.
    pub rows: &'a DeviceRows,
    /// The time step (s).
    pub h: f64,
    /// `W = h² H A⁻¹ Hᵀ`, row-major; `None`: built on the device from
    /// its resident `S` and the rows ([`super::DeviceGlobalStep::delassus`]).
    pub w: Option<&'a [f64]>,
    /// A law per group of three rows.
    pub laws: &'a [GroupLaw],
    /// The complementarity scale per row; `None`: `W`'s diagonal (the
    /// system-inverse scale), taken on the device where `W` is built.
    pub r: Option<&'a [f64]>,
    /// Each iteration's Newton settings (the step's schedule).
    pub solves: &'a [NewtonParams],
}

/// What a frame with constraints starts from and writes: the iterate, the
/// tets' rotations (9 each, column-major), `λ` (the warm start in) and
/// `δ` at the last solve.
#[derive(Debug)]
pub struct FrameState<'a> {
    /// Positions, three per vertex: the starting iterate in, `q` out.
    pub x: &'a mut [f64],
    /// The tets' rotations.
    pub rotations: &'a mut [f64],
    /// `λ`: the warm start in, the last solve's out.
    pub lambda: &'a mut [f64],
    /// `δ` at the last solve's `λ`.
    pub delta: &'a mut [f64],
}

/// What a frame with constraints did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ContactFrameOutcome {
    /// Projections the device counted where the CPU takes an SVD.
    pub fallbacks: u64,
    /// Each iteration's solve.
    pub solves: Vec<NewtonSolve>,
    /// Vertices whose columns of `S` built `W` on the device (0: `W`
    /// was uploaded).
    pub delassus_vertices: usize,
}

/// The device solver's settings (the scene's `NewtonSettings`, without
/// the choice of `r`, which the caller makes).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NewtonParams {
    /// Fischer–Burmeister (`true`) or min-map NCP function on normal rows.
    pub fischer_burmeister: bool,
    /// Newton steps at most.
    pub iterations: usize,
    /// CR iterations per Newton step.
    pub linear_iterations: usize,
    /// Stop when `‖Δλ‖∞ ≤ tolerance · ‖λ‖∞`.
    pub tolerance: f64,
    /// Stop when `‖Φ‖∞ ≤ ncp_tolerance`.
    pub ncp_tolerance: f64,
}

/// The constant part of `δ` a solve starts from.
#[derive(Debug, Clone, Copy)]
pub enum Offset<'a> {
    /// `δ_free` itself.
    Free(&'a [f64]),
    /// `δ` at the warm start `λ⁰` (`δ_free = gaps − W λ⁰`, formed on the
    /// device: the local-global iterations know `δ(q)`, not `δ_free`).
    Gaps(&'a [f64]),
}

/// A law per group of three rows: Coulomb friction with `μ ≥ 0`, or a
/// bilateral attachment.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum GroupLaw {
    /// Signorini–Coulomb contact with friction coefficient `μ`.
    Contact(f64),
    /// Three bilateral rows.
    Attachment,
}
