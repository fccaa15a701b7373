//! Linearized implicit Euler (zeng2022 eq. 4; Baraff & Witkin 1998):
//! `(M + hB + h²K) Δv = h (f + f_ext − B v) − h² K v`, then
//! `v ← v + Δv`, `x ← x + h v`. One stage per module.

pub mod assemble;
pub mod correct;
pub mod factorize;
pub mod free_motion;
pub mod handover;
pub mod integrate;
mod pattern;
mod step;
pub mod vertex_warp;

use ferrofem_linalg::{CsrMatrix, DiagonalPreconditioner, Pcg, PcgSolve};
use nalgebra::Matrix3;

pub use pattern::{AssemblyPattern, Incidence};
pub use step::ImplicitEuler;

use crate::body::Body;
use crate::element::TetEval;

/// Per-body matrices and scratch, reused every step.
#[derive(Debug)]
pub struct BodyWorkspace {
    /// Sparsity pattern and scatter slots of the system matrix.
    pub pattern: AssemblyPattern,
    /// Per-tet evaluation at the step's start positions (rotations, forces).
    pub evals: Vec<TetEval>,
    /// Per-tet stiffness `Kₑ` of the projected tangent (hyperelastic bodies; empty for co-rotational ones).
    pub tangents: Vec<crate::element::Stiffness>,
    /// Per-tet eigenbasis of `FᵀF` (hyperelastic bodies), the next step's warm start.
    pub eigenbases: Vec<Matrix3<f64>>,
    /// Per-tet `R Kₑ Rᵀ v` at the step's start velocities.
    pub stiffness_velocity: Vec<[nalgebra::Vector3<f64>; 4]>,
    /// `A = M + hB + h²K`, with identity-scaled rows for kinematic vertices.
    pub system: CsrMatrix,
    /// Right-hand side `b`.
    pub rhs: Vec<f64>,
    /// Elastic forces `f` per DOF (N).
    pub elastic_forces: Vec<f64>,
    /// Velocity change `Δv` (m/s), the free-motion unknown.
    pub dv: Vec<f64>,
    /// Prescribed `Δv` of kinematic vertices (zero elsewhere).
    pub prescribed_dv: Vec<f64>,
    /// Diagonal preconditioner storage.
    pub preconditioner: DiagonalPreconditioner,
    /// PCG scratch.
    pub pcg: Pcg,
    /// Outcome of the last solve.
    pub solve: PcgSolve,
    /// Elastic energy at the step's start positions (J).
    pub elastic_energy: f64,
    /// LDLᵀ preconditioner state (created on first use).
    pub refactorizer: Option<factorize::Refactorizer>,
    /// The factor's warp this step (`None` when off or the factor is current).
    pub warp: Option<crate::constraint::Warp>,
    /// The warp of the constraints' factor during a handover
    /// ([`factorize::Refactorizer::handover`]; `None` otherwise).
    pub handover_warp: Option<crate::constraint::Warp>,
    /// Scratch of the correction `A⁻¹ Hᵀ λ`.
    pub correction: Vec<f64>,
    /// The last free-motion `Δv`, kept for the `previous_change` initial
    /// guess (empty until its first solve, and for other guesses).
    pub previous_change: Vec<f64>,
    /// `Δvₙ₋₁ − Δvₙ₋₂` of the free motion, zero on kinematic vertices: PCG's
    /// recycled direction (`recycled_direction`; empty until two solves).
    pub last_difference: Vec<f64>,
    /// The per-vertex turns of an outdated factor (`preconditioner_warp =
    /// "vertex"`; in use while `warp` is set).
    pub vertex_warp: vertex_warp::VertexWarp,
}

impl BodyWorkspace {
    /// Sized for a solid `body` with its tet mesh `mesh`.
    pub fn new(body: &Body, mesh: &ferrofem_mesh::TetMesh) -> Self {
        let n = body.dofs();
        let pattern = AssemblyPattern::new(mesh);
        BodyWorkspace {
            evals: vec![TetEval::default(); body.tets.len()],
            stiffness_velocity: vec![Default::default(); body.tets.len()],
            tangents: Vec::new(),
            eigenbases: Vec::new(),
            system: CsrMatrix::zeros(pattern.csr.clone()),
            pattern,
            rhs: vec![0.0; n],
            elastic_forces: vec![0.0; n],
            dv: vec![0.0; n],
            prescribed_dv: vec![0.0; n],
            preconditioner: DiagonalPreconditioner::default(),
            pcg: Pcg::default(),
            solve: PcgSolve::default(),
            elastic_energy: 0.0,
            refactorizer: None,
            warp: None,
            handover_warp: None,
            correction: Vec::new(),
            previous_change: Vec::new(),
            last_difference: Vec::new(),
            vertex_warp: Default::default(),
        }
    }
}
