//! Linearized implicit Euler (zeng2022 eq. 4; Baraff & Witkin 1998):
//! `(M + hB + h²K) Δv = h (f + f_ext − B v) − h² K v`, then
//! `v ← v + Δv`, `x ← x + h v`. One stage per module.

pub mod assemble;
pub mod constraints;
pub mod correct;
pub mod factorize;
pub mod free_motion;
pub mod integrate;

use ferrofem_linalg::{CsrMatrix, DiagonalPreconditioner, Pcg, PcgSolve};
use nalgebra::Matrix3;

use crate::body::BodyModel;
use crate::element::TetEval;

/// Per-body matrices and scratch, reused every step.
#[derive(Debug)]
pub struct BodyWorkspace {
    /// Per-tet evaluation at the step's start positions (rotations, forces).
    pub evals: Vec<TetEval>,
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
    /// Contacts detected this step.
    pub contacts: Vec<crate::collision::Contact>,
    /// Compact constraint Jacobian `H_b`: the rows of the world's groups that touch this body.
    pub jacobian: CsrMatrix,
    /// World row index of each row of `jacobian`.
    pub constraint_rows: Vec<usize>,
    /// `Hᵀ λ` per DOF (N).
    pub contact_forces: Vec<f64>,
    /// Isodof solves kept while the factor is unchanged (`isodof-reuse`).
    pub isodof_cache: ferrofem_linalg::ldlt::IsodofCache,
    /// Buffers of the Delassus builds, reused from step to step.
    pub delassus_buffers: crate::delassus::DelassusBuffers,
    /// How `W_b` was obtained this step.
    pub delassus: Option<crate::stats::DelassusRecord>,
}

impl BodyWorkspace {
    /// Sized for `body`, rotations starting at identity.
    pub fn new(body: &BodyModel) -> Self {
        let n = body.dofs();
        let identity = TetEval {
            rotation: Matrix3::identity(),
            rotated_grads: Default::default(),
            forces: Default::default(),
            energy: 0.0,
        };
        BodyWorkspace {
            evals: vec![identity; body.rest.len()],
            stiffness_velocity: vec![Default::default(); body.rest.len()],
            system: CsrMatrix::zeros(body.pattern.csr.clone()),
            rhs: vec![0.0; n],
            elastic_forces: vec![0.0; n],
            dv: vec![0.0; n],
            prescribed_dv: vec![0.0; n],
            preconditioner: DiagonalPreconditioner::default(),
            pcg: Pcg::default(),
            solve: PcgSolve::default(),
            elastic_energy: 0.0,
            refactorizer: None,
            contacts: Vec::new(),
            jacobian: CsrMatrix::zeros(ferrofem_linalg::CsrPattern::from_rows(n, Vec::new())),
            constraint_rows: Vec::new(),
            contact_forces: vec![0.0; n],
            isodof_cache: Default::default(),
            delassus_buffers: Default::default(),
            delassus: None,
        }
    }
}
