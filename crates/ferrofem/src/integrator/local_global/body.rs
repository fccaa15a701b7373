//! A body under the local-global integrator: its mesh (tets or a membrane),
//! lumped masses and energy terms. Nothing here changes during a run.

use nalgebra::Vector3;
use serde::{Deserialize, Serialize};

use super::terms::{isometric_bending, laplace_beltrami_bending, Pin, Stencil, TetElement, TriElement};
use crate::body::Kinematic;
use crate::element::Constitutive;
use crate::material::Material;
use crate::SimError;
use ferrofem_mesh::{TetMesh, TriMesh};

/// The mesh of a body: a volume (tets) or a membrane (cloth triangles).
#[derive(Debug, Clone)]
pub enum Shape {
    /// A tetrahedral solid.
    Volume(TetMesh),
    /// A triangle membrane with a thickness (m).
    Shell(TriMesh, f64),
}

impl Shape {
    /// Rest vertex positions.
    pub fn vertices(&self) -> &[[f64; 3]] {
        match self {
            Shape::Volume(m) => &m.vertices,
            Shape::Shell(m, _) => &m.vertices,
        }
    }
}

/// Bending model of a membrane (zeng2025 Table 1's variants).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum BendingModel {
    /// Quadratic isometric bending per interior edge (Bergou et al. 2006).
    Isometric,
    /// Cotangent Laplace–Beltrami per interior vertex (Bouaziz et al. 2014).
    LaplaceBeltrami,
}

/// `bending = { model = …, stiffness = … }` of a membrane.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Bending {
    /// Which discrete bending energy.
    pub model: BendingModel,
    /// Bending stiffness k_b (N·m).
    pub stiffness: f64,
}

/// Everything the scene defines about one body of a local-global world.
#[derive(Debug, Clone)]
pub struct LocalGlobalBody {
    /// Name used in output files and messages.
    pub name: String,
    /// Rest mesh in world coordinates.
    pub shape: Shape,
    /// Constitutive model of every element.
    pub constitutive: Constitutive,
    /// Lumped mass per vertex (kg).
    pub mass: Vec<f64>,
    /// Tetrahedra (solids).
    pub tets: Vec<TetElement>,
    /// Membrane triangles (cloth).
    pub triangles: Vec<TriElement>,
    /// Bending stencils (cloth).
    pub bending: Vec<Stencil>,
    /// Positional constraints.
    pub pins: Vec<Pin>,
}

impl LocalGlobalBody {
    /// Builds a body: elements with their weights, masses, bending stencils;
    /// `kinematic` vertices become pins, their weights set by `pin_weight`
    /// (see [`super::LocalGlobalSettings::pin_weight`]) once the global matrix
    /// is known.
    pub fn new(
        name: String,
        shape: Shape,
        material: Material,
        constitutive: Constitutive,
        bending: Option<Bending>,
        kinematic: &[Option<Kinematic>],
    ) -> Result<Self, SimError> {
        let err = |message: String| SimError::Body { body: name.clone(), message };
        let (lambda, mu) = material.lame();
        let lame = crate::element::Lame { lambda, mu };
        let rest = shape.vertices();
        let mut mass = vec![0.0; rest.len()];
        let (mut tets, mut triangles, mut stencils) = (Vec::new(), Vec::new(), Vec::new());
        match &shape {
            Shape::Volume(mesh) => {
                for (e, t) in mesh.tets.iter().enumerate() {
                    let el = TetElement::tet(rest, *t, constitutive, lame)
                        .ok_or_else(|| err(format!("tet {e} has no positive rest volume")))?;
                    t.iter().for_each(|&v| mass[v] += material.density * el.measure / 4.0);
                    tets.push(el);
                }
            }
            Shape::Shell(mesh, thickness) => {
                for (e, t) in mesh.triangles.iter().enumerate() {
                    let el = TriElement::triangle(rest, *t, *thickness, constitutive, lame)
                        .ok_or_else(|| err(format!("triangle {e} has no positive rest area")))?;
                    t.iter().for_each(|&v| mass[v] += material.density * el.measure / 3.0);
                    triangles.push(el);
                }
                if let Some(b) = bending {
                    stencils = match b.model {
                        BendingModel::Isometric => isometric_bending(rest, &mesh.triangles, b.stiffness),
                        BendingModel::LaplaceBeltrami => {
                            laplace_beltrami_bending(rest, &mesh.triangles, b.stiffness)
                        }
                    };
                }
            }
        }
        if let Some(v) = mass.iter().position(|m| *m <= 0.0) {
            return Err(err(format!("vertex {v} belongs to no element (it would have no mass)")));
        }
        let pins = kinematic
            .iter()
            .enumerate()
            .filter_map(|(v, k)| {
                k.map(|motion| Pin { vertex: v, weight: 0.0, motion, rest: Vector3::from(rest[v]) })
            })
            .collect();
        Ok(LocalGlobalBody { name, shape, constitutive, mass, tets, triangles, bending: stencils, pins })
    }

    /// Number of vertices.
    pub fn vertices(&self) -> usize {
        self.mass.len()
    }

    /// Degrees of freedom (3 per vertex).
    pub fn dofs(&self) -> usize {
        3 * self.mass.len()
    }

    /// Rest positions, flat.
    pub fn rest_positions(&self) -> Vec<f64> {
        self.shape.vertices().iter().flatten().copied().collect()
    }

    /// Total mass (kg).
    pub fn total_mass(&self) -> f64 {
        self.mass.iter().sum()
    }

    /// Elements (tets or triangles).
    pub fn elements(&self) -> usize {
        self.tets.len() + self.triangles.len()
    }
}
