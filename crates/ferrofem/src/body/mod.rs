//! A body's model, shared by both integrators: its rest mesh (a volume of
//! tets or a membrane of triangles), rest elements with their Lamé
//! parameters, bending stencils, lumped masses, damping and kinematic
//! boundary conditions. Nothing here changes during a run.

mod contact_points;
mod kinematics;

use nalgebra::Vector3;
use serde::{Deserialize, Serialize};

pub use kinematics::{keyframe_offset, Kinematic, Motion};

use crate::element::{Bending, Constitutive, Lame, Stencil, TetElement, TriElement};
use crate::material::Material;
use crate::stage::Stage;
use crate::SimError;
use ferrofem_linalg::vector::all_finite;
use ferrofem_mesh::{BoundarySurface, TetMesh, TriMesh};

/// Rayleigh damping `B = α M + β K` (α in 1/s, β in s).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Rayleigh {
    /// Mass-proportional coefficient α (1/s).
    #[serde(default)]
    pub mass: f64,
    /// Stiffness-proportional coefficient β (s).
    #[serde(default)]
    pub stiffness: f64,
}

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

    /// The surface contact sees: a volume's boundary, or the membrane itself.
    fn surface(&self) -> BoundarySurface {
        match self {
            Shape::Volume(m) => m.boundary(),
            Shape::Shell(m, _) => {
                BoundarySurface { mesh: m.clone(), volume_vertex: (0..m.vertices.len()).collect() }
            }
        }
    }
}

/// What defines a body besides its mesh: one material per element (tets
/// or triangles), the constitutive model, damping, bending and the
/// kinematic condition of each vertex.
#[derive(Debug, Clone)]
pub struct BodyMaterial {
    /// Per-element material.
    pub materials: Vec<Material>,
    /// Constitutive model of every element.
    pub constitutive: Constitutive,
    /// Rayleigh damping.
    pub damping: Rayleigh,
    /// Bending of a membrane.
    pub bending: Option<Bending>,
    /// Kinematic condition per vertex (`None`: free).
    pub kinematic: Vec<Option<Kinematic>>,
}

/// Everything the scene defines about one deformable body.
#[derive(Debug, Clone)]
pub struct Body {
    /// Name used in output files and messages.
    pub name: String,
    /// Rest mesh, in world coordinates.
    pub shape: Shape,
    /// Constitutive model of every element.
    pub constitutive: Constitutive,
    /// Rest tetrahedra (solids).
    pub tets: Vec<TetElement>,
    /// Rest membrane triangles (cloth).
    pub triangles: Vec<TriElement>,
    /// Bending stencils (cloth).
    pub bending: Vec<Stencil>,
    /// Lumped mass per vertex (kg): `Σ ρ V / (D + 1)` over incident elements.
    pub mass: Vec<f64>,
    /// Rayleigh damping.
    pub damping: Rayleigh,
    /// Kinematic condition per vertex (`None`: free).
    pub kinematic: Vec<Option<Kinematic>>,
    /// `kinematic[i].is_some()`, packed for inner loops.
    pub is_kinematic: Vec<bool>,
    /// Bilateral attachments: vertex held on a (fixed or moving) target by
    /// constraint forces rather than by elimination (needles, cable anchors).
    pub attachments: Vec<(usize, Kinematic)>,
    /// Test this body's surface vertices against its own surface triangles.
    pub self_collision: bool,
    /// Per vertex: whether it meets obstacles and other bodies' triangles
    /// as a surface vertex (every surface vertex, unless
    /// [`Body::space_contact_points`] thinned them).
    pub contact_point: Vec<bool>,
    /// Contact surface with its map to body vertices.
    pub surface: BoundarySurface,
}

impl Body {
    /// Builds a body from a validated mesh: rest elements, masses and
    /// bending stencils. Errors name the body and the element.
    pub fn new(name: String, shape: Shape, def: BodyMaterial) -> Result<Self, SimError> {
        let err = |message: String| SimError::Body { body: name.clone(), message };
        let rest = shape.vertices();
        let elements = match &shape {
            Shape::Volume(m) => m.tets.len(),
            Shape::Shell(m, _) => m.triangles.len(),
        };
        if def.materials.len() != elements || def.kinematic.len() != rest.len() {
            return Err(err("material or kinematic list has the wrong length".into()));
        }
        let lame = |e: usize| {
            let (lambda, mu) = def.materials[e].lame();
            Lame { lambda, mu }
        };
        let mut mass = vec![0.0; rest.len()];
        let (mut tets, mut triangles, mut bending) = (Vec::new(), Vec::new(), Vec::new());
        match &shape {
            Shape::Volume(mesh) => {
                for (e, t) in mesh.tets.iter().enumerate() {
                    let el = TetElement::tet(rest, *t, def.constitutive, lame(e))
                        .ok_or_else(|| err(format!("tet {e} is degenerate or inverted")))?;
                    t.iter().for_each(|&v| mass[v] += def.materials[e].density * el.measure / 4.0);
                    tets.push(el);
                }
            }
            Shape::Shell(mesh, thickness) => {
                for (e, t) in mesh.triangles.iter().enumerate() {
                    let el = TriElement::triangle(rest, *t, *thickness, def.constitutive, lame(e))
                        .ok_or_else(|| err(format!("triangle {e} has no positive rest area")))?;
                    t.iter().for_each(|&v| mass[v] += def.materials[e].density * el.measure / 3.0);
                    triangles.push(el);
                }
                bending = def.bending.map(|b| b.stencils(rest, &mesh.triangles)).unwrap_or_default();
            }
        }
        let unused = mass.iter().filter(|m| **m <= 0.0).count();
        if unused > 0 {
            return Err(err(format!("{unused} vertices belong to no element (they would have no mass)")));
        }
        let surface = shape.surface();
        let mut contact_point = vec![false; rest.len()];
        surface.volume_vertex.iter().for_each(|&v| contact_point[v] = true);
        Ok(Body {
            name,
            shape,
            constitutive: def.constitutive,
            tets,
            triangles,
            bending,
            mass,
            damping: def.damping,
            is_kinematic: def.kinematic.iter().map(Option::is_some).collect(),
            kinematic: def.kinematic,
            attachments: Vec::new(),
            self_collision: false,
            contact_point,
            surface,
        })
    }

    /// Keeps as contact points only surface vertices at least `spacing`
    /// apart in the rest shape among those facing the same side (greedy
    /// Poisson-disk sampling in vertex order; every surface vertex lies
    /// within `spacing` of one kept, facing its side).
    /// The triangles still meet other bodies' and mesh obstacles' points;
    /// the other vertices may sink between the kept ones by the surface's
    /// sag over `spacing`.
    pub fn space_contact_points(&mut self, spacing: f64) {
        let surface = &self.surface;
        let normals = surface.mesh.vertex_area_normals();
        let rest = self.rest_vertices();
        let candidates: Vec<_> =
            surface.volume_vertex.iter().zip(normals).map(|(&v, n)| (v, rest[v], n)).collect();
        self.contact_point = contact_points::sample(rest.len(), &candidates, spacing);
    }

    /// A co-rotational solid with one material per tet: the implicit-Euler
    /// body of most scenes and tests.
    pub fn solid(
        name: String,
        mesh: TetMesh,
        materials: Vec<Material>,
        damping: Rayleigh,
        kinematic: Vec<Option<Kinematic>>,
    ) -> Result<Self, SimError> {
        let def = BodyMaterial {
            materials,
            constitutive: Constitutive::Corotational,
            damping,
            bending: None,
            kinematic,
        };
        Body::new(name, Shape::Volume(mesh), def)
    }

    /// Number of vertices.
    pub fn vertex_count(&self) -> usize {
        self.mass.len()
    }

    /// Number of degrees of freedom (3 per vertex).
    pub fn dofs(&self) -> usize {
        3 * self.vertex_count()
    }

    /// Total mass (kg).
    pub fn total_mass(&self) -> f64 {
        self.mass.iter().sum()
    }

    /// Rest vertex positions.
    pub fn rest_vertices(&self) -> &[[f64; 3]] {
        self.shape.vertices()
    }

    /// Rest position of vertex `i` (m).
    pub fn rest_vertex(&self, i: usize) -> Vector3<f64> {
        Vector3::from(self.shape.vertices()[i])
    }

    /// Rest positions as a flat vector (DOF `3i + axis`).
    pub fn rest_positions(&self) -> Vec<f64> {
        self.shape.vertices().iter().flatten().copied().collect()
    }

    /// Whether the body is a membrane (cloth): its surface is two-sided, so
    /// contact normals of its triangles point to the side a point is on.
    pub fn is_membrane(&self) -> bool {
        matches!(self.shape, Shape::Shell(..))
    }

    /// The tet mesh of a solid (`None` for a membrane).
    pub fn tet_mesh(&self) -> Option<&TetMesh> {
        match &self.shape {
            Shape::Volume(m) => Some(m),
            Shape::Shell(..) => None,
        }
    }

    /// Elements (tets or triangles).
    pub fn elements(&self) -> usize {
        self.tets.len() + self.triangles.len()
    }

    /// Rest positions, tets and triangles, for output.
    pub fn mesh_view(&self) -> MeshView<'_> {
        match &self.shape {
            Shape::Volume(m) => (&m.vertices, &m.tets, &[]),
            Shape::Shell(m, _) => (&m.vertices, &[], &m.triangles),
        }
    }

    /// What a user sees of the body, for reports.
    pub fn summary(&self) -> BodySummary {
        BodySummary {
            name: self.name.clone(),
            vertices: self.vertex_count(),
            tets: self.tets.len(),
            triangles: self.triangles.len(),
            mass: self.total_mass(),
            kinematic_vertices: self.kinematic.iter().filter(|k| k.is_some()).count(),
        }
    }
}

/// Rest positions, tets and triangles of a body.
pub type MeshView<'a> = (&'a [[f64; 3]], &'a [[usize; 4]], &'a [[usize; 3]]);

/// What a user sees of one body: for reports and output files.
#[derive(Debug, Clone, PartialEq)]
pub struct BodySummary {
    /// Name.
    pub name: String,
    /// Vertices.
    pub vertices: usize,
    /// Tetrahedra.
    pub tets: usize,
    /// Membrane triangles.
    pub triangles: usize,
    /// Total mass (kg).
    pub mass: f64,
    /// Fixed or prescribed vertices.
    pub kinematic_vertices: usize,
}

impl Body {
    /// The one non-finite guard of a step: an error naming the step, this
    /// body, the stage and what went non-finite when `values` holds a NaN
    /// or an infinity.
    pub(crate) fn guard(
        &self,
        step: usize,
        stage: Stage,
        what: &'static str,
        values: &[f64],
    ) -> Result<(), SimError> {
        if all_finite(values) {
            return Ok(());
        }
        Err(SimError::NonFinite { step, body: self.name.clone(), stage, what })
    }
}
