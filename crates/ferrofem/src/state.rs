//! The simulation state: everything that decides the next step. Cloning a
//! [`State`] into a world built from the same scene reproduces the run
//! bitwise, with two documented exceptions held as caches in the
//! integrators' workspaces: the LDLᵀ factor of the implicit-Euler
//! preconditioner (its age follows the refresh policy, and an asynchronous
//! refresh finishes when the machine lets it), and the local-global
//! projections that warm-start ARAP's rotations.

use std::collections::HashMap;

use nalgebra::Matrix3;

use crate::body::Body;
use crate::constraint::GroupKey;

/// Positions and velocities of one body, flat (DOF `3·vertex + axis`).
#[derive(Debug, Clone, PartialEq)]
pub struct BodyState {
    /// Positions q (m).
    pub positions: Vec<f64>,
    /// Velocities v (m/s).
    pub velocities: Vec<f64>,
    /// Each tet's co-rotation `R` at the start of the last implicit-Euler
    /// step: the warm start of the next polar decomposition (empty until
    /// the first step, and under the local-global integrator).
    pub rotations: Vec<Matrix3<f64>>,
}

impl BodyState {
    /// A body at rest in its rest configuration.
    pub fn at_rest(body: &Body) -> BodyState {
        BodyState {
            positions: body.rest_positions(),
            velocities: vec![0.0; body.dofs()],
            rotations: Vec::new(),
        }
    }

    /// Kinetic energy `½ vᵀ M v` (J).
    pub fn kinetic_energy(&self, body: &Body) -> f64 {
        self.velocities
            .chunks_exact(3)
            .zip(&body.mass)
            .map(|(v, m)| 0.5 * m * (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]))
            .sum()
    }

    /// Linear momentum `Σ mᵢ vᵢ` (kg·m/s).
    pub fn momentum(&self, body: &Body) -> [f64; 3] {
        let mut p = [0.0; 3];
        for (v, m) in self.velocities.chunks_exact(3).zip(&body.mass) {
            (0..3).for_each(|d| p[d] += m * v[d]);
        }
        p
    }

    /// Centre of mass (m).
    pub fn center_of_mass(&self, body: &Body) -> [f64; 3] {
        let mut c = [0.0; 3];
        for (x, m) in self.positions.chunks_exact(3).zip(&body.mass) {
            (0..3).for_each(|d| c[d] += m * x[d]);
        }
        c.map(|x| x / body.total_mass())
    }
}

/// The simulation state: time, per-body state and the constraint impulses
/// that warm-start the next constraint solve.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct State {
    /// Simulated time (s).
    pub time: f64,
    /// Steps taken.
    pub step: usize,
    /// Per-body state, in model order.
    pub bodies: Vec<BodyState>,
    /// Last step's λ (N) of each constraint group, by the group's key.
    pub warm_start: HashMap<GroupKey, [f64; 3]>,
    /// Each needle's puncture and points of tissue, in model order.
    pub needles: Vec<crate::needle::NeedleState>,
}
