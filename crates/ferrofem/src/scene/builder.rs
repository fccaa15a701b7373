//! Scenes built in Rust ([`SceneBuilder`]): the scene file's structures
//! filled by typed calls, validated like a file. What tests and programs
//! use where writing TOML text would hide typos until run time.
//!
//! `examples/falling_ball.rs` builds a scene this way; the tests build
//! theirs so (`tests/physics/`).

use std::path::PathBuf;

use super::spec::{
    AttachSpec, BodySpec, BoxSpec, FixedSpec, IntegratorKind, MeshSpec, ObstacleSpec, PrescribedSpec, Preset,
    SceneFile, SimulationSpec, Transform,
};
use super::Scene;
use crate::body::{Motion, Rayleigh};
use crate::collision::ContactSettings;
use crate::element::Constitutive;
use crate::integrator::local_global::LocalGlobalSettings;
use crate::integrator::ImplicitEulerSettings;
use crate::material::Material;
use crate::obstacle::{ObstacleMotion, Shape};
use crate::solver::ConstraintSolverSettings;
use crate::{SimError, World};

/// A scene under construction: `[simulation]` with its time step, one
/// step, default gravity and implicit Euler until changed; no body yet.
#[derive(Debug, Clone)]
pub struct SceneBuilder {
    spec: SceneFile,
    base_dir: PathBuf,
}

impl SceneBuilder {
    /// A scene with time step `h` (s).
    pub fn new(h: f64) -> SceneBuilder {
        let simulation = SimulationSpec {
            name: None,
            time_step: h,
            steps: 1,
            gravity: [0.0, 0.0, -9.81],
            output_every: 1,
            integrator: IntegratorKind::ImplicitEuler,
            preset: None,
            device: crate::Device::Cpu,
        };
        let spec = SceneFile {
            simulation,
            implicit_euler: ImplicitEulerSettings::default(),
            local_global: LocalGlobalSettings::default(),
            bodies: Vec::new(),
            obstacles: Vec::new(),
            needles: Vec::new(),
            cables: Vec::new(),
            contact: ContactSettings::default(),
            constraint_solver: ConstraintSolverSettings::default(),
            render: super::RenderSettings::default(),
        };
        SceneBuilder { spec, base_dir: PathBuf::from(".") }
    }

    /// The scene's name (messages, output folder).
    pub fn name(mut self, name: &str) -> Self {
        self.spec.simulation.name = Some(name.into());
        self
    }

    /// Steps of a run (`[simulation] steps`).
    pub fn steps(mut self, steps: usize) -> Self {
        self.spec.simulation.steps = steps;
        self
    }

    /// Gravity (m/s²).
    pub fn gravity(mut self, g: [f64; 3]) -> Self {
        self.spec.simulation.gravity = g;
        self
    }

    /// The local-global integrator (zeng2025) instead of implicit Euler.
    pub fn local_global(mut self) -> Self {
        self.spec.simulation.integrator = IntegratorKind::LocalGlobal;
        self
    }

    /// The preset's settings, every one of them (a file's preset fills
    /// only the keys the file leaves out: here, settings changed after
    /// this call win).
    pub fn preset(mut self, preset: Preset) -> Self {
        self.spec.simulation.preset = Some(preset);
        preset.apply(&mut self.spec, &toml::Table::new());
        self
    }

    /// Changes `[implicit_euler]`.
    pub fn implicit_euler(mut self, edit: impl FnOnce(&mut ImplicitEulerSettings)) -> Self {
        edit(&mut self.spec.implicit_euler);
        self
    }

    /// PCG's stopping rule (`[implicit_euler] max_iterations`,
    /// `rel_tolerance`).
    pub fn pcg(self, max_iterations: usize, rel_tolerance: f64) -> Self {
        self.implicit_euler(|s| {
            (s.max_iterations, s.rel_tolerance) = (Some(max_iterations), Some(rel_tolerance))
        })
    }

    /// PGS with its stopping rule, as `[constraint_solver] max_iterations`
    /// and `tolerance` name it.
    pub fn pgs(mut self, max_iterations: usize, tolerance: f64) -> Self {
        self.spec.constraint_solver = ConstraintSolverSettings {
            tolerance: Some(tolerance),
            ..ConstraintSolverSettings::pgs(max_iterations, tolerance)
        };
        self
    }

    /// Changes `[local_global]` (and selects the local-global integrator).
    pub fn local_global_settings(mut self, edit: impl FnOnce(&mut LocalGlobalSettings)) -> Self {
        edit(&mut self.spec.local_global);
        self.local_global()
    }

    /// Changes `[contact]`.
    pub fn contact(mut self, edit: impl FnOnce(&mut ContactSettings)) -> Self {
        edit(&mut self.spec.contact);
        self
    }

    /// Changes `[constraint_solver]`.
    pub fn constraint_solver(mut self, edit: impl FnOnce(&mut ConstraintSolverSettings)) -> Self {
        edit(&mut self.spec.constraint_solver);
        self
    }

    /// Adds a body.
    pub fn body(mut self, body: BodySpec) -> Self {
        self.spec.bodies.push(body);
        self
    }

    /// Adds an obstacle.
    pub fn obstacle(mut self, obstacle: ObstacleSpec) -> Self {
        self.spec.obstacles.push(obstacle);
        self
    }

    /// Any other change to the scene's structures.
    pub fn with(mut self, edit: impl FnOnce(&mut SceneFile)) -> Self {
        edit(&mut self.spec);
        self
    }

    /// The folder mesh paths are relative to (default: the current one).
    pub fn base_dir(mut self, dir: PathBuf) -> Self {
        self.base_dir = dir;
        self
    }

    /// The scene, validated as a file would be (the error names the key).
    pub fn build(self) -> Result<Scene, SimError> {
        Scene::from_spec(self.spec, self.base_dir, "<builder>")
    }

    /// The scene's structures, as a file would give them.
    pub fn spec(&self) -> &SceneFile {
        &self.spec
    }

    /// The scene's world, built without a device backend.
    pub fn world(self) -> Result<World, SimError> {
        self.build()?.build()
    }
}

impl MeshSpec {
    /// A cube of edge `size` centred at the origin, `cells` hexahedra per axis.
    pub fn cube(size: f64, cells: usize) -> MeshSpec {
        MeshSpec::Box { size: [size; 3], cells: [cells; 3] }
    }
}

impl BodySpec {
    /// A body of `mesh` in one material (Young's modulus, Poisson ratio,
    /// density), at rest where the mesh is, nothing fixed.
    pub fn new(name: &str, mesh: MeshSpec, young: f64, poisson: f64, density: f64) -> BodySpec {
        BodySpec {
            name: name.into(),
            mesh,
            transform: Transform::default(),
            material: Material { young, poisson, density },
            constitutive: None,
            thickness: None,
            bending: None,
            damping: Rayleigh::default(),
            initial_velocity: [0.0; 3],
            reorient_inverted: false,
            self_collision: false,
            contact_spacing: None,
            regions: Vec::new(),
            fixed: Vec::new(),
            prescribed: Vec::new(),
            attach: Vec::new(),
        }
    }

    /// Translated by `t` (m).
    pub fn at(mut self, t: [f64; 3]) -> Self {
        self.transform.translation = t;
        self
    }

    /// Rotated by `deg` about x, y, z (degrees, x first).
    pub fn rotated(mut self, deg: [f64; 3]) -> Self {
        self.transform.rotation_deg = deg;
        self
    }

    /// Rayleigh damping `α M + β K`.
    pub fn damping(mut self, mass: f64, stiffness: f64) -> Self {
        self.damping = Rayleigh { mass, stiffness };
        self
    }

    /// Constitutive model (`[[body]] constitutive`).
    pub fn constitutive(mut self, model: Constitutive) -> Self {
        self.constitutive = Some(model);
        self
    }

    /// Every vertex moving at `v` (m/s) at the start.
    pub fn velocity(mut self, v: [f64; 3]) -> Self {
        self.initial_velocity = v;
        self
    }

    /// Contacts between the body's own surface parts.
    pub fn self_colliding(mut self) -> Self {
        self.self_collision = true;
        self
    }

    /// Holds the vertices in the box `[min, max]` at rest.
    pub fn fixed(mut self, min: [f64; 3], max: [f64; 3]) -> Self {
        self.fixed.push(FixedSpec { bbox: Some(BoxSpec { min, max }), vertices: None });
        self
    }

    /// Moves the vertices in the box `[min, max]` by `motion`.
    pub fn prescribed(mut self, min: [f64; 3], max: [f64; 3], motion: Motion) -> Self {
        self.prescribed.push(PrescribedSpec { bbox: Some(BoxSpec { min, max }), vertices: None, motion });
        self
    }

    /// Holds the vertices in the box `[min, max]` on targets by bilateral
    /// constraints, fixed or moved by `motion`.
    pub fn attached(mut self, min: [f64; 3], max: [f64; 3], motion: Option<Motion>) -> Self {
        self.attach.push(AttachSpec { bbox: Some(BoxSpec { min, max }), vertices: None, motion });
        self
    }

    /// Any other change.
    pub fn with(mut self, edit: impl FnOnce(&mut BodySpec)) -> Self {
        edit(&mut self);
        self
    }
}

impl ObstacleSpec {
    /// A frictionless, motionless obstacle of `shape` at the origin.
    pub fn new(name: &str, shape: Shape) -> ObstacleSpec {
        ObstacleSpec {
            name: name.into(),
            shape: Some(shape),
            mesh: None,
            transform: Transform::default(),
            friction: 0.0,
            motion: ObstacleMotion::default(),
            draggable: false,
        }
    }

    /// A closed triangle mesh as the obstacle (a generated solid's
    /// boundary, or a file), frictionless and motionless at the origin.
    pub fn mesh(name: &str, mesh: MeshSpec) -> ObstacleSpec {
        ObstacleSpec { shape: None, mesh: Some(mesh), ..ObstacleSpec::new(name, Shape::HalfSpace) }
    }

    /// Rotated by `deg` about x, y, z (degrees, x first).
    pub fn rotated(mut self, deg: [f64; 3]) -> Self {
        self.transform.rotation_deg = deg;
        self
    }

    /// Coulomb friction coefficient μ.
    pub fn friction(mut self, mu: f64) -> Self {
        self.friction = mu;
        self
    }

    /// Translated by `t` (m).
    pub fn at(mut self, t: [f64; 3]) -> Self {
        self.transform.translation = t;
        self
    }

    /// Moving at `v` (m/s).
    pub fn moving(mut self, v: [f64; 3]) -> Self {
        self.motion.velocity = v;
        self
    }

    /// Any other change.
    pub fn with(mut self, edit: impl FnOnce(&mut ObstacleSpec)) -> Self {
        edit(&mut self);
        self
    }
}
