//! The serde structures of a scene file (their value checks are in
//! `validate.rs`).

use serde::{Deserialize, Serialize};

use crate::body::{Motion, Rayleigh};
use crate::collision::ContactSettings;
use crate::element::Bending;
use crate::element::Constitutive;
use crate::integrator::local_global::LocalGlobalSettings;
use crate::integrator::{
    ImplicitEulerSettings, InitialGuess, PreconditionerKind, PreconditionerWarp, Refresh,
};
use crate::material::Material;
use crate::obstacle::{ObstacleMotion, Shape};
use crate::solver::{ConstraintSolver, ConstraintSolverSettings, PgsSettings};
use ferrofem_linalg::Precision;

/// A whole scene file. (Its schema also states that the implicit contact
/// resolution belongs to implicit Euler.)
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(extend(
    "if" = { "required": ["simulation"], "properties": { "simulation": {
        "required": ["integrator"], "properties": { "integrator": { "enum": ["local_global", "local-global"] } } } } },
    "then" = { "properties": { "contact": { "properties": { "resolution": { "not": { "const": "implicit" } } } } } }
))]
pub struct SceneFile {
    /// `[simulation]`: time step, steps, gravity, output.
    pub simulation: SimulationSpec,
    /// `[implicit_euler]`: integrator settings.
    #[serde(default)]
    pub implicit_euler: ImplicitEulerSettings,
    /// `[local_global]`: settings of the local-global integrator.
    #[serde(default)]
    pub local_global: LocalGlobalSettings,
    /// `[[body]]`: deformable bodies.
    #[serde(rename = "body")]
    pub bodies: Vec<BodySpec>,
    /// `[[obstacle]]`: rigid obstacles.
    #[serde(default, rename = "obstacle")]
    pub obstacles: Vec<ObstacleSpec>,
    /// `[[needle]]`: needles inserted into the bodies.
    #[serde(default, rename = "needle")]
    pub needles: Vec<super::needle::NeedleSpec>,
    /// `[[cable]]`: cables through the bodies.
    #[serde(default, rename = "cable")]
    pub cables: Vec<super::cable::CableSpec>,
    /// `[contact]`: proximity distances and friction between bodies.
    #[serde(default)]
    pub contact: ContactSettings,
    /// `[constraint_solver]`: solver, stopping rule and Delassus method.
    #[serde(default)]
    pub constraint_solver: ConstraintSolverSettings,
    /// `[render]`: how `ferrofem render` draws the scene.
    #[serde(default)]
    pub render: super::RenderSettings,
}

/// `[[obstacle]]`: a rigid shape with a pose, friction and motion. (Its
/// schema also states that a mesh file is not tetrahedralized.)
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(extend("not" = { "required": ["mesh"], "properties": { "mesh": {
    "required": ["file"], "properties": { "file": { "required": ["tetrahedralize"] } } } } }))]
pub struct ObstacleSpec {
    /// Name used in messages.
    pub name: String,
    /// An analytic shape in its local frame (give this or `mesh`).
    #[serde(default)]
    pub shape: Option<Shape>,
    /// A closed triangle mesh (give this or `shape`): a generated solid's
    /// boundary, or a surface or volume file, scaled by `transform.scale`.
    #[serde(default)]
    pub mesh: Option<MeshSpec>,
    /// Pose (`scale` applies to a mesh only).
    #[serde(default)]
    pub transform: Transform,
    /// Coulomb friction coefficient μ ≥ 0.
    #[serde(default)]
    pub friction: f64,
    /// Kinematic motion.
    #[serde(default)]
    pub motion: ObstacleMotion,
    /// Whether the viewer (`ferrofem view`) lets the mouse move it.
    #[serde(default)]
    pub draggable: bool,
}

/// Which integrator advances the bodies.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum IntegratorKind {
    /// Linearized implicit Euler with early-terminated PCG (zeng2022 §3.1).
    #[default]
    #[serde(alias = "implicit-euler")]
    ImplicitEuler,
    /// Local-global hyperelasticity with the sparse inverse (zeng2025 §3.3, §4).
    #[serde(alias = "local-global")]
    LocalGlobal,
}

/// `[simulation]`.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SimulationSpec {
    /// Scene name (defaults to the file name).
    #[serde(default)]
    pub name: Option<String>,
    /// Time step h (s).
    pub time_step: f64,
    /// Number of steps of a run.
    pub steps: usize,
    /// Gravity (m/s²).
    #[serde(default = "default_gravity")]
    pub gravity: [f64; 3],
    /// Write a frame every this many steps.
    #[serde(default = "one")]
    pub output_every: usize,
    /// Integrator.
    #[serde(default)]
    pub integrator: IntegratorKind,
    /// Defaults for the solver keys the file leaves out ([`Preset`]).
    #[serde(default)]
    pub preset: Option<Preset>,
    /// Where the local-global global step runs ([`crate::Device`]).
    #[serde(default)]
    pub device: crate::Device,
}

/// `[simulation] preset`: a set of implicit-Euler and constraint-solver
/// settings, applied to the keys a scene file leaves out (a key written in
/// the file wins). Measured in `docs/benchmarks.md` ("Early termination").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Preset {
    /// PCG from the previous step's free-motion change (`previous_change`),
    /// preconditioned by an LDLᵀ factor refactorized in the background
    /// every `REAL_TIME_REFRESH` steps (the factor of step `s` serves from
    /// step `s + 50`, so runs are reproducible; the constraints move to it
    /// over `REAL_TIME_HANDOVER` steps, so that no step rebuilds all of
    /// `W̄`: the 20k drop's longest step 0.75–0.80 s → 0.20 s), computed in
    /// single precision where its pivots allow, read by PCG in bfloat16 and
    /// by the correction's backward sweep in single precision, warped by
    /// the body's rotation since its matrix was assembled (`W` and the
    /// correction) or by each vertex's (PCG, `preconditioner_warp =
    /// "vertex"`), cut at `REAL_TIME_PCG_ITERATIONS` (1) iteration, which
    /// also searches along the last change's difference
    /// (`recycled_direction`); PGS to 1e-5 within 50 sweeps on an `f32`
    /// copy of `W` (half the bytes of each sweep). dahl2019's early
    /// termination with zeng2022's preconditioner: the one iteration leaves
    /// the 5k drop 0.63 % of its size off its reference after 1 s (two
    /// iterations on an 8-bit factor without the last two keys: 0.60 %;
    /// one: 4.8 %, the factor's age, not its rounding, as a current factor
    /// shows) and the cantilever within 0.003 % of the accurate preset's sag
    /// (the two 8-bit iterations: 6.1 %; one 8-bit iteration with the new
    /// keys: 15 %, the beam's bending does not forgive 8 bits); the first
    /// step, with no change to start from, takes two, and a step whose
    /// iteration leaves the residual above `REAL_TIME_RESIDUAL_CEILING`
    /// (0.25) of `‖b‖` goes on until it is under it (a body squeezed
    /// between bodies; the drops never reach it). The warp
    /// keeps the contact compliance close to the current `A` (a
    /// factorization without pause gave 0.35–0.76 % at 15–20 % more time per
    /// step, its core and memory bus shared with the step).
    RealTime,
    /// PCG to 1e-8 (up to 200 iterations) with an LDLᵀ factor refreshed
    /// every step; PGS to 1e-8 within 500 sweeps.
    Accurate,
}

/// Steps between the real-time preset's background refactorizations.
pub const REAL_TIME_REFRESH: usize = 50;

/// Steps over which the real-time preset's constraints move to a new
/// factor (`refresh.handover`).
pub const REAL_TIME_HANDOVER: usize = 10;

/// The real-time preset's PCG iterations per step.
pub const REAL_TIME_PCG_ITERATIONS: usize = 1;

/// The relative residual above which the real-time preset's PCG goes on
/// past its iteration (`residual_ceiling`).
pub const REAL_TIME_RESIDUAL_CEILING: f64 = 0.25;

impl Preset {
    /// Fills the keys of `[implicit_euler]` and `[constraint_solver]` that
    /// `given` (the file's own tables) does not hold.
    pub fn apply(self, spec: &mut SceneFile, given: &toml::Table) {
        let has = |table: &str, key: &str| {
            given.get(table).and_then(|t| t.as_table()).is_some_and(|t| t.contains_key(key))
        };
        let realtime = self == Preset::RealTime;
        let ie = &mut spec.implicit_euler;
        if !has("implicit_euler", "initial_guess") {
            ie.initial_guess =
                if realtime { InitialGuess::PreviousChange } else { InitialGuess::PreviousVelocity };
        }
        if !has("implicit_euler", "preconditioner") {
            ie.preconditioner = PreconditionerKind::Ldlt;
        }
        if !has("implicit_euler", "refresh") {
            ie.refresh = if realtime {
                Refresh {
                    every: REAL_TIME_REFRESH,
                    asynchronous: true,
                    deterministic: true,
                    handover: REAL_TIME_HANDOVER,
                }
            } else {
                Refresh::default()
            };
        }
        if !has("implicit_euler", "preconditioner_precision") {
            ie.preconditioner_precision = if realtime { Precision::Bfloat16 } else { Precision::Double };
        }
        if !has("implicit_euler", "warp") {
            ie.warp = realtime;
        }
        if !has("implicit_euler", "preconditioner_warp") {
            ie.preconditioner_warp =
                if realtime { PreconditionerWarp::Vertex } else { PreconditionerWarp::Body };
        }
        if !has("implicit_euler", "recycled_direction") {
            ie.recycled_direction = realtime;
        }
        if !has("implicit_euler", "max_iterations") {
            ie.max_iterations = Some(if realtime { REAL_TIME_PCG_ITERATIONS } else { 200 });
        }
        if !has("implicit_euler", "rel_tolerance") {
            ie.rel_tolerance = Some(if realtime { 1e-5 } else { 1e-8 });
        }
        if !has("implicit_euler", "residual_ceiling") {
            ie.residual_ceiling = realtime.then_some(REAL_TIME_RESIDUAL_CEILING);
        }
        let pgs_keys = ["method", "max_iterations", "tolerance"];
        if spec.simulation.integrator == IntegratorKind::ImplicitEuler
            && !pgs_keys.iter().any(|k| has("constraint_solver", k))
        {
            let (sweeps, tolerance) = if realtime { (50, 1e-5) } else { (500, 1e-8) };
            let precision = match spec.constraint_solver.solver {
                Some(ConstraintSolver::Pgs(p)) if has("constraint_solver", "delassus_precision") => {
                    p.precision
                }
                _ if realtime => Precision::Single,
                _ => Precision::Double,
            };
            let pgs = PgsSettings { precision, ..PgsSettings::new(sweeps, tolerance) };
            spec.constraint_solver.solver = Some(ConstraintSolver::Pgs(pgs));
        }
    }
}

fn default_gravity() -> [f64; 3] {
    [0.0, 0.0, -9.81]
}

fn one() -> usize {
    1
}

/// `[[body]]`: one deformable body.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BodySpec {
    /// Name (output files are named after it).
    pub name: String,
    /// Where the mesh comes from.
    pub mesh: MeshSpec,
    /// Placement of the mesh in the world.
    #[serde(default)]
    pub transform: Transform,
    /// Default material of every element.
    pub material: Material,
    /// Constitutive model (implicit Euler: co-rotational or stable Neo-Hookean).
    #[serde(default)]
    pub constitutive: Option<Constitutive>,
    /// Thickness of a membrane (`sheet` mesh), m.
    #[serde(default)]
    pub thickness: Option<f64>,
    /// Bending of a membrane (local-global only).
    #[serde(default)]
    pub bending: Option<Bending>,
    /// Rayleigh damping.
    #[serde(default)]
    pub damping: Rayleigh,
    /// Initial velocity of every vertex (m/s).
    #[serde(default)]
    pub initial_velocity: [f64; 3],
    /// Flip inverted tets of a file mesh instead of rejecting it.
    #[serde(default)]
    pub reorient_inverted: bool,
    /// Contacts between this body's own surface parts (vertices against
    /// non-incident triangles).
    #[serde(default)]
    pub self_collision: bool,
    /// Only surface vertices at least this far apart in the rest shape (m)
    /// meet obstacles and other bodies (a coarser collision model; all of
    /// them when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contact_spacing: Option<f64>,
    /// `[[body.region]]`: other materials on parts of the body.
    #[serde(default, rename = "region")]
    pub regions: Vec<RegionSpec>,
    /// `[[body.fixed]]`: vertices held at their rest position.
    #[serde(default)]
    pub fixed: Vec<FixedSpec>,
    /// `[[body.prescribed]]`: vertices moved kinematically.
    #[serde(default)]
    pub prescribed: Vec<PrescribedSpec>,
    /// `[[body.attach]]`: vertices held on targets by bilateral constraints.
    #[serde(default)]
    pub attach: Vec<AttachSpec>,
}

/// `[[body.attach]]`: vertices in `box` or `vertices`, each held by a
/// bilateral constraint on its rest position, fixed or moved by `motion`.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AttachSpec {
    /// Select vertices by position.
    #[serde(default, rename = "box")]
    pub bbox: Option<BoxSpec>,
    /// Select vertices by index.
    #[serde(default)]
    pub vertices: Option<Vec<usize>>,
    /// Motion of the targets (absent: fixed).
    #[serde(default)]
    pub motion: Option<Motion>,
}

/// A mesh: generated (with a resolution) or read from a file.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum MeshSpec {
    /// Box/beam centred at the origin, `cells` hexahedra per axis, 6 tets each.
    Box {
        /// Extents (m).
        size: [f64; 3],
        /// Hexahedra per axis.
        cells: [usize; 3],
    },
    /// Ball centred at the origin.
    Ball {
        /// Radius (m).
        radius: f64,
        /// Cells across the diameter.
        resolution: usize,
    },
    /// A union of balls filled with tets (isosurface stuffing): a snowman,
    /// a dumbbell.
    Balls {
        /// `[x, y, z, radius]` per ball (m).
        balls: Vec<[f64; 4]>,
        /// Cells along the union's longest side.
        resolution: usize,
    },
    /// Cylinder along z, centred at the origin.
    Cylinder {
        /// Radius (m).
        radius: f64,
        /// Length (m).
        length: f64,
        /// Cells across the diameter.
        resolution: usize,
        /// Cells along the axis.
        length_cells: usize,
    },
    /// Torus around z, centred at the origin.
    Torus {
        /// Ring radius (m).
        major_radius: f64,
        /// Tube radius (m).
        minor_radius: f64,
        /// Cells across the tube.
        resolution: usize,
        /// Cells around the ring.
        ring_cells: usize,
    },
    /// Rectangular membrane (cloth) in the plane z = 0, centred at the
    /// origin, `cells` quads split in two triangles (local-global only).
    Sheet {
        /// Extents along x and y (m).
        size: [f64; 2],
        /// Quads per axis.
        cells: [usize; 2],
    },
    /// A volume mesh file (`.msh`, `.vtk`, `.vtu`), relative to the scene
    /// file; or, with `tetrahedralize`, a closed surface (`.obj`, `.stl`, or
    /// a volume file's boundary) filled with tets by isosurface stuffing.
    File {
        /// Path.
        path: String,
        /// Fill the surface with tets at this fineness (`ferrofem mesh tetrahedralize`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        tetrahedralize: Option<Tetrahedralize>,
    },
}

impl MeshSpec {
    /// A volume mesh file.
    pub fn file(path: impl Into<String>) -> MeshSpec {
        MeshSpec::File { path: path.into(), tetrahedralize: None }
    }
}

/// `tetrahedralize = { cell = 0.004 }` or `{ resolution = 40 }`: how finely a
/// surface is filled (give one).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(extend("oneOf" = [{ "required": ["cell"] }, { "required": ["resolution"] }]))]
pub struct Tetrahedralize {
    /// The lattice's cube edge, in the file's units (before `transform.scale`).
    #[serde(default)]
    #[schemars(extend("exclusiveMinimum" = 0.0))]
    pub cell: Option<f64>,
    /// Cells along the surface's longest bounding-box side.
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub resolution: Option<usize>,
}

impl Tetrahedralize {
    /// The fineness it names (checked by the scene's validation).
    pub fn fineness(&self) -> ferrofem_mesh::stuffing::Fineness {
        use ferrofem_mesh::stuffing::Fineness;
        match (self.cell, self.resolution) {
            (Some(h), _) => Fineness::Cell(h),
            (None, n) => Fineness::Resolution(n.unwrap_or(0)),
        }
    }
}

/// `x ↦ scale · Rz Ry Rx x + translation` (rotations in degrees about the
/// world axes, applied x first).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct Transform {
    /// Uniform scale.
    pub scale: f64,
    /// Rotation angles about x, y, z (degrees).
    pub rotation_deg: [f64; 3],
    /// Translation (m).
    pub translation: [f64; 3],
}

impl Transform {
    /// `Rz Ry Rx` from `rotation_deg`.
    pub fn rotation(&self) -> nalgebra::Rotation3<f64> {
        use nalgebra::{Rotation3, Vector3};
        let [rx, ry, rz] = self.rotation_deg.map(f64::to_radians);
        Rotation3::from_axis_angle(&Vector3::z_axis(), rz)
            * Rotation3::from_axis_angle(&Vector3::y_axis(), ry)
            * Rotation3::from_axis_angle(&Vector3::x_axis(), rx)
    }
}

impl Default for Transform {
    fn default() -> Self {
        Transform { scale: 1.0, rotation_deg: [0.0; 3], translation: [0.0; 3] }
    }
}

/// An axis-aligned box in world coordinates (after the transform).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BoxSpec {
    /// Smallest corner (m).
    pub min: [f64; 3],
    /// Largest corner (m).
    pub max: [f64; 3],
}

/// `[[body.region]]`: a material on the tets whose centroid is in `box`, or
/// on the listed `elements`.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RegionSpec {
    /// Material of the region.
    pub material: Material,
    /// Select tets by centroid.
    #[serde(default, rename = "box")]
    pub bbox: Option<BoxSpec>,
    /// Select tets by index.
    #[serde(default)]
    pub elements: Option<Vec<usize>>,
}

/// `[[body.fixed]]`: vertices in `box` or listed in `vertices`.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FixedSpec {
    /// Select vertices by position.
    #[serde(default, rename = "box")]
    pub bbox: Option<BoxSpec>,
    /// Select vertices by index.
    #[serde(default)]
    pub vertices: Option<Vec<usize>>,
}

/// `[[body.prescribed]]`: vertices moved by `motion`.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PrescribedSpec {
    /// Select vertices by position.
    #[serde(default, rename = "box")]
    pub bbox: Option<BoxSpec>,
    /// Select vertices by index.
    #[serde(default)]
    pub vertices: Option<Vec<usize>>,
    /// The motion.
    pub motion: Motion,
}
