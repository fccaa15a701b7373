//! The model: what the scene defines, read-only during a run.

use crate::body::Body;
use crate::collision::ContactSettings;
use crate::obstacle::{Geometry, Obstacle};
use crate::solver::ConstraintSolverSettings;

/// What the scene defines; read-only during a run. The integrator and its
/// settings live beside it in the [`crate::World`].
#[derive(Debug, Clone)]
pub struct Model {
    /// Deformable bodies (solids and membranes).
    pub bodies: Vec<Body>,
    /// Gravity (m/s²).
    pub gravity: [f64; 3],
    /// Time step h (s).
    pub time_step: f64,
    /// Rigid obstacles.
    pub obstacles: Vec<Obstacle>,
    /// Needles inserted into the bodies.
    pub needles: Vec<crate::needle::Needle>,
    /// Cables through the bodies.
    pub cables: Vec<crate::cable::Cable>,
    /// Contact detection: distances and friction between bodies.
    pub contact: ContactSettings,
    /// Constraint solving: solver, stopping rule, Delassus method.
    pub constraint_solver: ConstraintSolverSettings,
    /// Where the stages that have a GPU path run (`[simulation] device`):
    /// local-global's global step, implicit Euler's `W̄`.
    pub device: crate::Device,
    /// The backend the device stages run on under `device = "gpu"`
    /// (`None`: none given; such a world refuses `device = "gpu"`).
    pub backend: Option<crate::device::SharedBackend>,
}

impl Model {
    /// A model of `bodies` under `gravity` with time step `h`, no obstacle
    /// and default contact settings.
    pub fn new(bodies: Vec<Body>, gravity: [f64; 3], h: f64) -> Model {
        Model {
            bodies,
            gravity,
            time_step: h,
            obstacles: Vec::new(),
            needles: Vec::new(),
            cables: Vec::new(),
            contact: ContactSettings::default(),
            constraint_solver: ConstraintSolverSettings::default(),
            device: crate::Device::Cpu,
            backend: None,
        }
    }

    /// The backend of `device = "gpu"`, or why there is none.
    pub fn gpu(&self) -> Result<&dyn crate::device::Backend, crate::device::DeviceError> {
        self.backend.as_deref().ok_or(crate::device::DeviceError::NoBackend)
    }

    /// Whether the scene can have constraint rows: obstacles, other
    /// bodies, attachments, needles, cables or self-collision.
    pub fn constrained(&self) -> bool {
        !self.obstacles.is_empty()
            || !self.needles.is_empty()
            || !self.cables.is_empty()
            || self.bodies.len() > 1
            || self.bodies.iter().any(|b| !b.attachments.is_empty() || b.self_collision)
    }

    /// Whether body `b` carries constraint rows besides contacts: its
    /// attachments, a needle or a cable (its factor then serves `W`).
    pub fn holds(&self, b: usize) -> bool {
        !self.bodies[b].attachments.is_empty()
            || self.needles.iter().any(|n| n.body == b)
            || self.cables.iter().any(|c| c.body == b)
    }

    /// Whether contact detection needs the bodies' surface triangles: other
    /// bodies, self-collision, or mesh obstacles' vertices meet them.
    pub fn meets_triangles(&self) -> bool {
        self.bodies.len() > 1
            || self.bodies.iter().any(|b| b.self_collision)
            || self.obstacles.iter().any(|o| matches!(o.geometry, Geometry::Mesh(_)))
    }
}
