//! A simulation of either integrator, as the CLI and the frame writer see it.

use crate::integrator::local_global::{LocalGlobalWorld, Shape};
use crate::stats::StepStats;
use crate::{SimError, State, World};

/// A world advanced by the integrator its scene names.
#[derive(Debug)]
pub enum Simulation {
    /// Linearized implicit Euler with contact (zeng2022).
    ImplicitEuler(Box<World>),
    /// Local-global hyperelasticity (zeng2025).
    LocalGlobal(LocalGlobalWorld),
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

impl Simulation {
    /// Advances one time step.
    pub fn step(&mut self) -> Result<StepStats, SimError> {
        match self {
            Simulation::ImplicitEuler(w) => w.step(),
            Simulation::LocalGlobal(w) => w.step(),
        }
    }

    /// Positions, velocities and time.
    pub fn state(&self) -> &State {
        match self {
            Simulation::ImplicitEuler(w) => &w.state,
            Simulation::LocalGlobal(w) => &w.state,
        }
    }

    /// Time step (s).
    pub fn time_step(&self) -> f64 {
        match self {
            Simulation::ImplicitEuler(w) => w.model.time_step,
            Simulation::LocalGlobal(w) => w.model.time_step,
        }
    }

    /// The integrator's name.
    pub fn integrator(&self) -> &'static str {
        match self {
            Simulation::ImplicitEuler(_) => "implicit-euler",
            Simulation::LocalGlobal(_) => "local-global",
        }
    }

    /// Per-body summaries, in scene order.
    pub fn bodies(&self) -> Vec<BodySummary> {
        match self {
            Simulation::ImplicitEuler(w) => w
                .model
                .bodies
                .iter()
                .map(|b| BodySummary {
                    name: b.name.clone(),
                    vertices: b.mesh.vertices.len(),
                    tets: b.mesh.tets.len(),
                    triangles: 0,
                    mass: b.total_mass(),
                    kinematic_vertices: b.kinematic.iter().filter(|k| k.is_some()).count(),
                })
                .collect(),
            Simulation::LocalGlobal(w) => w
                .model
                .bodies
                .iter()
                .map(|b| BodySummary {
                    name: b.name.clone(),
                    vertices: b.vertices(),
                    tets: b.tets.len(),
                    triangles: b.triangles.len(),
                    mass: b.total_mass(),
                    kinematic_vertices: b.pins.len(),
                })
                .collect(),
        }
    }

    /// Rest positions, tets and triangles of body `b`, for output.
    pub fn mesh(&self, b: usize) -> MeshView<'_> {
        match self {
            Simulation::ImplicitEuler(w) => {
                let m = &w.model.bodies[b].mesh;
                (&m.vertices, &m.tets, &[])
            }
            Simulation::LocalGlobal(w) => match &w.model.bodies[b].shape {
                Shape::Volume(m) => (&m.vertices, &m.tets, &[]),
                Shape::Shell(m, _) => (&m.vertices, &[], &m.triangles),
            },
        }
    }
}
