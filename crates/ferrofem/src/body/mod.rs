//! A deformable body's model: rest mesh, per-element rest data and
//! materials, lumped masses, damping, kinematic boundary conditions and the
//! assembly pattern of its system matrix. Nothing here changes during a run.

mod kinematics;
mod pattern;

use nalgebra::Vector3;
use serde::{Deserialize, Serialize};

pub use kinematics::{Kinematic, Motion};
pub use pattern::AssemblyPattern;

use crate::element::TetRest;
use crate::material::Material;
use crate::SimError;
use ferrofem_mesh::{BoundarySurface, TetMesh};

/// Rayleigh damping `B = α M + β K` (α in 1/s, β in s).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rayleigh {
    /// Mass-proportional coefficient α (1/s).
    #[serde(default)]
    pub mass: f64,
    /// Stiffness-proportional coefficient β (s).
    #[serde(default)]
    pub stiffness: f64,
}

/// Everything the scene defines about one deformable body.
#[derive(Debug, Clone)]
pub struct BodyModel {
    /// Name used in output files and messages.
    pub name: String,
    /// Rest mesh, in world coordinates.
    pub mesh: TetMesh,
    /// Per-tet rest data.
    pub rest: Vec<TetRest>,
    /// Per-tet material.
    pub materials: Vec<Material>,
    /// Lumped mass per vertex (kg): `Σ ρ V / 4` over incident tets.
    pub mass: Vec<f64>,
    /// Rayleigh damping.
    pub damping: Rayleigh,
    /// Kinematic condition per vertex (`None`: free).
    pub kinematic: Vec<Option<Kinematic>>,
    /// `kinematic[i].is_some()`, packed for the assembly's inner loop.
    pub is_kinematic: Vec<bool>,
    /// Bilateral attachments: vertex held on a (fixed or moving) target by
    /// constraint forces rather than by elimination (needles, cable anchors).
    pub attachments: Vec<(usize, Kinematic)>,
    /// Test this body's surface vertices against its own surface triangles.
    pub self_collision: bool,
    /// Boundary surface with its map to volume vertices.
    pub surface: BoundarySurface,
    /// Sparsity pattern and scatter slots of the system matrix.
    pub pattern: AssemblyPattern,
}

impl BodyModel {
    /// Builds a body from a validated mesh, one material per tet and per-vertex
    /// kinematic conditions.
    pub fn new(
        name: String,
        mesh: TetMesh,
        materials: Vec<Material>,
        damping: Rayleigh,
        kinematic: Vec<Option<Kinematic>>,
    ) -> Result<Self, SimError> {
        let body_err = |message: String| SimError::Body { body: name.clone(), message };
        if materials.len() != mesh.tets.len() || kinematic.len() != mesh.vertices.len() {
            return Err(body_err("material or kinematic list has the wrong length".into()));
        }
        if mesh.unused_vertex_count() > 0 {
            return Err(body_err(format!(
                "{} vertices belong to no tet (they would have no mass)",
                mesh.unused_vertex_count()
            )));
        }
        let mut rest = Vec::with_capacity(mesh.tets.len());
        let mut mass = vec![0.0; mesh.vertices.len()];
        for (e, t) in mesh.tets.iter().enumerate() {
            let x = t.map(|i| Vector3::from(mesh.vertices[i]));
            let r = TetRest::new(x, &materials[e])
                .ok_or_else(|| body_err(format!("tet {e} is degenerate or inverted")))?;
            t.iter().for_each(|&i| mass[i] += materials[e].density * r.volume / 4.0);
            rest.push(r);
        }
        let surface = mesh.boundary();
        let pattern = AssemblyPattern::new(&mesh);
        let is_kinematic = kinematic.iter().map(Option::is_some).collect();
        Ok(BodyModel {
            name,
            mesh,
            rest,
            materials,
            mass,
            damping,
            kinematic,
            is_kinematic,
            attachments: Vec::new(),
            self_collision: false,
            surface,
            pattern,
        })
    }

    /// Number of vertices.
    pub fn vertex_count(&self) -> usize {
        self.mesh.vertices.len()
    }

    /// Number of degrees of freedom (3 per vertex).
    pub fn dofs(&self) -> usize {
        3 * self.vertex_count()
    }

    /// Total mass (kg).
    pub fn total_mass(&self) -> f64 {
        self.mass.iter().sum()
    }

    /// Rest positions as a flat vector (DOF `3i + axis`).
    pub fn rest_positions(&self) -> Vec<f64> {
        self.mesh.vertices.iter().flatten().copied().collect()
    }
}
