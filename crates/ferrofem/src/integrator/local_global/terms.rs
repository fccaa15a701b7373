//! Positional pins of the local-global integrator: kinematic vertices
//! held by stiff quadratic terms whose projection is the target itself
//! (zeng2025 §3.3), so that the global matrix stays constant.

use nalgebra::Vector3;

use crate::body::Kinematic;

/// A positional constraint as a local term: `w/2 ‖x_v − t(t)‖²`, its
/// projection the target itself (zeng2025 §3.3: fixed or moving points).
#[derive(Debug, Clone, PartialEq)]
pub struct Pin {
    /// Vertex index.
    pub vertex: usize,
    /// Weight (N/m).
    pub weight: f64,
    /// How the target moves from the rest position.
    pub motion: Kinematic,
    /// Rest position.
    pub rest: Vector3<f64>,
}

impl Pin {
    /// Target at time `t`.
    pub fn target(&self, t: f64) -> Vector3<f64> {
        self.motion.target(self.rest, t)
    }
}
