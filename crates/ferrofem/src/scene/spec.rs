//! The serde structures of a scene file, and their value checks.

use serde::{Deserialize, Serialize};

use crate::body::{Motion, Rayleigh};
use crate::collision::ContactSettings;
use crate::delassus::DelassusMethod;
use crate::element::Bending;
use crate::element::{Constitutive, PolarMethod};
use crate::error::Invalid;
use crate::integrator::local_global::GlobalStepMethod;
use crate::integrator::local_global::{Acceleration, LocalGlobalSettings};
use crate::integrator::{ImplicitEulerSettings, InitialGuess, PreconditionerKind, Refresh};
use crate::material::Material;
use crate::obstacle::{ObstacleMotion, Shape};
use crate::solver::{ConstraintSolver, ConstraintSolverSettings, PgsSettings};
use ferrofem_linalg::Precision;

/// A whole scene file.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
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
    /// `[contact]`: proximity distances and friction between bodies.
    #[serde(default)]
    pub contact: ContactSettings,
    /// `[constraint_solver]`: solver, stopping rule and Delassus method.
    #[serde(default)]
    pub constraint_solver: ConstraintSolverSettings,
}

/// `[[obstacle]]`: a rigid shape with a pose, friction and motion.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
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
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
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
#[derive(Debug, Clone, Serialize, Deserialize)]
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Preset {
    /// PCG from the previous velocity, preconditioned by an LDLᵀ factor
    /// refactorized in the background every `REAL_TIME_REFRESH` steps
    /// (the factor of step `s` serves from step `s + 50`, so runs are
    /// reproducible), read by PCG in bfloat16 (a quarter of the factor's
    /// bytes; the 5k drop's error after 1 s is that of `single`, 0.72 %),
    /// by the correction's backward sweep in single precision, and warped
    /// by the body's rotation since its matrix was assembled, cut at 3
    /// iterations
    /// (relative residual 1e-5); PGS to 1e-5 within 50 sweeps. dahl2019's
    /// early termination with zeng2022's preconditioner: one iteration from
    /// `v(t)` keeps the kinetic energy within 2 %, five within 0.05 %; the
    /// warp keeps the contact compliance close to the current `A` (the 5k
    /// drop within 0.72 % of its size after 1 s, where a factorization
    /// without pause gave 0.35–0.76 % at 15–20 % more time per step, its
    /// core and memory bus shared with the step).
    RealTime,
    /// PCG to 1e-8 (up to 200 iterations) with an LDLᵀ factor refreshed
    /// every step; PGS to 1e-8 within 500 sweeps.
    Accurate,
}

/// Steps between the real-time preset's background refactorizations.
pub const REAL_TIME_REFRESH: usize = 50;

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
            ie.initial_guess = InitialGuess::PreviousVelocity;
        }
        if !has("implicit_euler", "preconditioner") {
            ie.preconditioner = PreconditionerKind::Ldlt;
        }
        if !has("implicit_euler", "refresh") {
            ie.refresh = if realtime {
                Refresh { every: REAL_TIME_REFRESH, asynchronous: true, deterministic: true }
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
        if !has("implicit_euler", "max_iterations") {
            ie.max_iterations = Some(if realtime { 3 } else { 200 });
        }
        if !has("implicit_euler", "rel_tolerance") {
            ie.rel_tolerance = Some(if realtime { 1e-5 } else { 1e-8 });
        }
        let pgs_keys = ["method", "max_iterations", "tolerance"];
        if spec.simulation.integrator == IntegratorKind::ImplicitEuler
            && !pgs_keys.iter().any(|k| has("constraint_solver", k))
        {
            let (sweeps, tolerance) = if realtime { (50, 1e-5) } else { (500, 1e-8) };
            spec.constraint_solver.solver = Some(ConstraintSolver::Pgs(PgsSettings::new(sweeps, tolerance)));
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
#[derive(Debug, Clone, Serialize, Deserialize)]
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
    /// Constitutive model (local-global only; implicit Euler is co-rotational).
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
#[derive(Debug, Clone, Serialize, Deserialize)]
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
#[derive(Debug, Clone, Serialize, Deserialize)]
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
    /// A volume mesh file (`.msh`, `.vtk`, `.vtu`), relative to the scene file.
    File {
        /// Path.
        path: String,
    },
}

/// `x ↦ scale · Rz Ry Rx x + translation` (rotations in degrees about the
/// world axes, applied x first).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
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
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BoxSpec {
    /// Smallest corner (m).
    pub min: [f64; 3],
    /// Largest corner (m).
    pub max: [f64; 3],
}

/// `[[body.region]]`: a material on the tets whose centroid is in `box`, or
/// on the listed `elements`.
#[derive(Debug, Clone, Serialize, Deserialize)]
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
#[derive(Debug, Clone, Serialize, Deserialize)]
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
#[derive(Debug, Clone, Serialize, Deserialize)]
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

fn finite(key: String, v: &[f64]) -> Result<(), Invalid> {
    match v.iter().find(|x| !x.is_finite()) {
        Some(x) => Err(Invalid::new(key, format!("{x} is not a finite number"))),
        None => Ok(()),
    }
}

fn one_selection(key: &str, a: bool, b: bool, names: &str) -> Result<(), Invalid> {
    if a == b {
        return Err(Invalid::new(key.to_string(), format!("give exactly one of {names}")));
    }
    Ok(())
}

impl SceneFile {
    /// Value checks serde cannot express; errors carry the key path.
    pub fn validate(&self) -> Result<(), Invalid> {
        let s = &self.simulation;
        if !(s.time_step.is_finite() && s.time_step > 0.0) {
            return Err(Invalid::new(
                "simulation.time_step".into(),
                format!("{} must be finite and positive (s)", s.time_step),
            ));
        }
        finite("simulation.gravity".into(), &s.gravity)?;
        if s.output_every == 0 {
            return Err(Invalid::new("simulation.output_every".into(), "must be at least 1".into()));
        }
        let ie = &self.implicit_euler;
        if ie.max_iterations.is_none() && ie.rel_tolerance.is_none() {
            return Err(Invalid::new(
                "implicit_euler".into(),
                "give max_iterations and/or rel_tolerance".into(),
            ));
        }
        if ie.max_iterations == Some(0) {
            return Err(Invalid::new(
                "implicit_euler.max_iterations".into(),
                "must be at least 1 (0 PCG iterations would leave every body at its initial guess)".into(),
            ));
        }
        if let Some(t) = ie.rel_tolerance {
            if !(t.is_finite() && t >= 0.0) {
                return Err(Invalid::new(
                    "implicit_euler.rel_tolerance".into(),
                    format!("{t} must be finite and non-negative"),
                ));
            }
        }
        if let PolarMethod::Jacobi { max_sweeps, tolerance } = ie.polar {
            if max_sweeps == 0 || !(tolerance.is_finite() && tolerance >= 0.0) {
                return Err(Invalid::new(
                    "implicit_euler.polar.jacobi".into(),
                    "max_sweeps ≥ 1 and a finite tolerance ≥ 0".into(),
                ));
            }
        }
        if self.bodies.is_empty() {
            return Err(Invalid::new("body".into(), "the scene has no body".into()));
        }
        #[cfg(not(feature = "gpu"))]
        if s.device == crate::Device::Gpu {
            return Err(Invalid::new("simulation.device".into(), crate::device::NOT_BUILT.into()));
        }
        match s.integrator {
            IntegratorKind::LocalGlobal => self.validate_local_global()?,
            IntegratorKind::ImplicitEuler => {
                for (i, b) in self.bodies.iter().enumerate() {
                    let key = format!("body[{i}]");
                    if matches!(b.mesh, MeshSpec::Sheet { .. })
                        || b.bending.is_some()
                        || b.thickness.is_some()
                    {
                        return Err(Invalid::new(
                            key,
                            "membranes (sheet, thickness, bending) need simulation.integrator = \"local-global\""
                                .into(),
                        ));
                    }
                    if b.constitutive.is_some_and(|c| c != Constitutive::Corotational) {
                        return Err(Invalid::new(
                            format!("{key}.constitutive"),
                            "implicit Euler is co-rotational; other models need simulation.integrator = \"local-global\""
                                .into(),
                        ));
                    }
                }
            }
        }
        for (i, o) in self.obstacles.iter().enumerate() {
            o.validate(&format!("obstacle[{i}]"))?;
        }
        let cs = &self.constraint_solver;
        let local_global = s.integrator == IntegratorKind::LocalGlobal;
        let newton = matches!(cs.solver(local_global), ConstraintSolver::NonSmoothNewton(_));
        let stored_s = local_global && self.local_global.global_step == GlobalStepMethod::SparseInverse;
        if cs.delassus == DelassusMethod::SparseInverse && !stored_s {
            return Err(Invalid::new(
                "constraint_solver.delassus".into(),
                "\"sparse-inverse\" reads W from the stored S: it needs integrator = \"local-global\" with \
                 global_step = \"sparse-inverse\""
                    .into(),
            ));
        }
        if !local_global && cs.newton_schedule.is_some() {
            return Err(Invalid::new(
                "constraint_solver.newton_schedule".into(),
                "Newton steps per local-global iteration: implicit Euler solves the constraints once per step, \
                 with up to newton_iterations"
                    .into(),
            ));
        }
        if newton && cs.delassus == DelassusMethod::Unbuilt {
            return Err(Invalid::new(
                "constraint_solver.delassus".into(),
                "the non-smooth Newton needs W assembled: \"unbuilt\" goes with method = \"pgs\"".into(),
            ));
        }
        let c = &self.contact;
        if !(c.contact_distance.is_finite() && c.contact_distance >= 0.0 && c.alarm_distance.is_finite())
            || c.alarm_distance < c.contact_distance
        {
            return Err(Invalid::new(
                "contact".into(),
                "need 0 ≤ contact_distance ≤ alarm_distance, finite".into(),
            ));
        }
        let mut names = std::collections::HashSet::new();
        for (i, b) in self.bodies.iter().enumerate() {
            if !names.insert(&b.name) {
                return Err(Invalid::new(
                    format!("body[{i}].name"),
                    format!("duplicate body name {:?}", b.name),
                ));
            }
            b.validate(&format!("body[{i}]"))?;
        }
        Ok(())
    }
}

impl SceneFile {
    /// What the local-global integrator does not support yet is refused by
    /// name rather than silently ignored.
    fn validate_local_global(&self) -> Result<(), Invalid> {
        self.local_global.check()?;
        if self.simulation.device == crate::Device::Gpu
            && self.local_global.global_step != GlobalStepMethod::SparseInverse
        {
            return Err(Invalid::new(
                "local_global.global_step".into(),
                "simulation.device = \"gpu\" runs the \"sparse-inverse\" global step (two SpMVs by S)".into(),
            ));
        }
        let constrained = !self.obstacles.is_empty()
            || self.bodies.len() > 1
            || self.bodies.iter().any(|b| !b.attach.is_empty() || b.self_collision);
        if constrained && self.local_global.global_step == GlobalStepMethod::Jacobi {
            return Err(Invalid::new(
                "local_global.global_step".into(),
                "contact and attachments need a complete global step (\"sparse-inverse\" or \"triangular\"): \
                 the Jacobi baseline has no A⁻¹ to build W from"
                    .into(),
            ));
        }
        if self.contact.resolution != crate::collision::Resolution::Explicit {
            return Err(Invalid::new(
                "contact.resolution".into(),
                "\"implicit\" re-linearizes the constraints of implicit Euler's single solve; the \
                 local-global integrator solves them in every iteration already: write \"explicit\""
                    .into(),
            ));
        }
        if constrained && self.local_global.acceleration == Acceleration::Lbfgs {
            return Err(Invalid::new(
                "local_global.acceleration".into(),
                "\"lbfgs\" minimizes the unconstrained step energy: scenes with contact or attachments \
                 take \"anderson\" or \"none\""
                    .into(),
            ));
        }
        for (i, b) in self.bodies.iter().enumerate() {
            let key = format!("body[{i}]");
            if b.damping != crate::body::Rayleigh::default() {
                return Err(Invalid::new(
                    format!("{key}.damping"),
                    "not supported by the local-global integrator yet".into(),
                ));
            }
            let sheet = matches!(b.mesh, MeshSpec::Sheet { .. });
            if !sheet && (b.thickness.is_some() || b.bending.is_some()) {
                return Err(Invalid::new(key, "thickness and bending apply to a sheet mesh only".into()));
            }
            if let Some(t) = b.thickness {
                if !(t.is_finite() && t > 0.0) {
                    return Err(Invalid::new(
                        format!("{key}.thickness"),
                        format!("{t} must be finite and positive (m)"),
                    ));
                }
            }
            if let Some(bd) = b.bending {
                if !(bd.stiffness.is_finite() && bd.stiffness >= 0.0) {
                    return Err(Invalid::new(
                        format!("{key}.bending.stiffness"),
                        "must be finite and ≥ 0 (N·m)".into(),
                    ));
                }
            }
        }
        Ok(())
    }
}

impl ObstacleSpec {
    fn validate(&self, key: &str) -> Result<(), Invalid> {
        if !(self.friction.is_finite() && self.friction >= 0.0) {
            return Err(Invalid::new(
                format!("{key}.friction"),
                format!("{} must be finite and ≥ 0", self.friction),
            ));
        }
        let t = self.transform;
        match (self.shape, &self.mesh) {
            (Some(_), Some(_)) | (None, None) => {
                return Err(Invalid::new(key.into(), "give exactly one of `shape` or `mesh`".into()));
            }
            (None, Some(MeshSpec::Sheet { .. })) => {
                return Err(Invalid::new(
                    format!("{key}.mesh"),
                    "a sheet is open: a mesh obstacle must be closed".into(),
                ));
            }
            (None, Some(_)) => positive_scale(key, t.scale)?,
            (Some(shape), None) => {
                if shape_dims(shape).iter().any(|d| !(d.is_finite() && *d > 0.0)) {
                    return Err(Invalid::new(
                        format!("{key}.shape"),
                        "dimensions must be finite and positive".into(),
                    ));
                }
                if t.scale != 1.0 {
                    return Err(Invalid::new(
                        format!("{key}.transform.scale"),
                        "analytic obstacles are not scaled: give the shape's size".into(),
                    ));
                }
            }
        }
        finite(format!("{key}.transform"), &[t.rotation_deg, t.translation].concat())?;
        let m = &self.motion;
        finite(format!("{key}.motion"), &[m.velocity, m.angular_velocity].concat())?;
        finite(format!("{key}.motion.path"), &m.path.concat())?;
        finite(format!("{key}.motion.pivot"), &m.pivot.unwrap_or_default())?;
        if m.path.windows(2).any(|w| w[1][0] <= w[0][0]) {
            return Err(Invalid::new(format!("{key}.motion.path"), "keyframe times must increase".into()));
        }
        Ok(())
    }
}

/// `transform.scale` of the item at `key` must be finite and positive.
fn positive_scale(key: &str, scale: f64) -> Result<(), Invalid> {
    if scale.is_finite() && scale > 0.0 {
        Ok(())
    } else {
        Err(Invalid::new(format!("{key}.transform.scale"), format!("{scale} must be finite and positive")))
    }
}

/// Sizes of an analytic shape that must be positive.
fn shape_dims(shape: Shape) -> Vec<f64> {
    match shape {
        Shape::HalfSpace => vec![],
        Shape::Sphere { radius } => vec![radius],
        Shape::Box { size } => size.to_vec(),
        Shape::Capsule { radius, length } => vec![radius, length + radius],
        Shape::Cylinder { radius, length } => vec![radius, length],
        Shape::Torus { major_radius, minor_radius } => vec![minor_radius, major_radius - minor_radius],
    }
}

impl BodySpec {
    fn validate(&self, key: &str) -> Result<(), Invalid> {
        if self.name.is_empty() || !self.name.chars().all(|c| c.is_alphanumeric() || "-_".contains(c)) {
            return Err(Invalid::new(format!("{key}.name"), "use letters, digits, '-' and '_' only".into()));
        }
        self.material.check().map_err(|m| Invalid::new(format!("{key}.material"), m))?;
        let d = self.damping;
        if !(d.mass.is_finite() && d.mass >= 0.0 && d.stiffness.is_finite() && d.stiffness >= 0.0) {
            return Err(Invalid::new(
                format!("{key}.damping"),
                "coefficients must be finite and non-negative".into(),
            ));
        }
        let t = self.transform;
        positive_scale(key, t.scale)?;
        finite(format!("{key}.transform"), &[t.rotation_deg, t.translation].concat())?;
        finite(format!("{key}.initial_velocity"), &self.initial_velocity)?;
        for (r, reg) in self.regions.iter().enumerate() {
            let k = format!("{key}.region[{r}]");
            reg.material.check().map_err(|m| Invalid::new(format!("{k}.material"), m))?;
            one_selection(&k, reg.bbox.is_some(), reg.elements.is_some(), "`box` or `elements`")?;
        }
        for (r, f) in self.fixed.iter().enumerate() {
            one_selection(
                &format!("{key}.fixed[{r}]"),
                f.bbox.is_some(),
                f.vertices.is_some(),
                "`box` or `vertices`",
            )?;
        }
        for (r, a) in self.attach.iter().enumerate() {
            let k = format!("{key}.attach[{r}]");
            one_selection(&k, a.bbox.is_some(), a.vertices.is_some(), "`box` or `vertices`")?;
            if let Some(m) = a.motion {
                motion_ok(&m).map_err(|msg| Invalid::new(format!("{k}.motion"), msg))?;
            }
        }
        for (r, p) in self.prescribed.iter().enumerate() {
            let k = format!("{key}.prescribed[{r}]");
            one_selection(&k, p.bbox.is_some(), p.vertices.is_some(), "`box` or `vertices`")?;
            motion_ok(&p.motion).map_err(|msg| Invalid::new(format!("{k}.motion"), msg))?;
        }
        Ok(())
    }
}

fn motion_ok(m: &Motion) -> Result<(), String> {
    let ok = match *m {
        Motion::Velocity(v) => v.iter().all(|x| x.is_finite()),
        Motion::Rotation { axis, center, angular_velocity } => {
            axis.iter().chain(&center).all(|x| x.is_finite())
                && angular_velocity.is_finite()
                && axis.iter().any(|x| *x != 0.0)
        }
    };
    if ok {
        Ok(())
    } else {
        Err("values must be finite and the axis non-zero".into())
    }
}

#[cfg(test)]
mod tests {
    use crate::integrator::{InitialGuess, PreconditionerKind};
    use crate::scene::Scene;
    use crate::solver::ConstraintSolver;

    fn scene(extra: &str) -> Scene {
        let text = format!(
            "[simulation]\ntime_step = 0.01\nsteps = 1\npreset = \"real-time\"\n{extra}\n[[body]]\nname = \"b\"\n\
             mesh = {{ box = {{ size = [0.1, 0.1, 0.1], cells = [1, 1, 1] }} }}\n\
             material = {{ young = 1e5, poisson = 0.3, density = 1000.0 }}\n"
        );
        Scene::from_toml(&text, ".".into(), "t").unwrap()
    }

    /// The preset fills what the file leaves out; what the file writes wins.
    #[test]
    fn preset_fills_only_the_keys_left_out() {
        let s = scene("").spec;
        let ie = s.implicit_euler;
        assert_eq!((ie.max_iterations, ie.rel_tolerance), (Some(3), Some(1e-5)));
        assert_eq!(
            (ie.initial_guess, ie.preconditioner),
            (InitialGuess::PreviousVelocity, PreconditionerKind::Ldlt)
        );
        assert!(
            ie.refresh.asynchronous
                && ie.refresh.deterministic
                && ie.refresh.every == super::REAL_TIME_REFRESH
        );
        assert_eq!(ie.preconditioner_precision, ferrofem_linalg::Precision::Bfloat16);
        assert!(ie.warp);
        assert!(
            matches!(s.constraint_solver.solver, Some(ConstraintSolver::Pgs(p)) if p.max_iterations == 50)
        );
        let s = scene("[implicit_euler]\nmax_iterations = 7\ninitial_guess = \"zero\"\npreconditioner_precision = \"double\"\n[constraint_solver]\ntolerance = 1e-9").spec;
        assert_eq!(s.implicit_euler.preconditioner_precision, ferrofem_linalg::Precision::Double);
        assert_eq!((s.implicit_euler.max_iterations, s.implicit_euler.rel_tolerance), (Some(7), Some(1e-5)));
        assert_eq!(s.implicit_euler.initial_guess, InitialGuess::Zero);
        assert!(s.constraint_solver.solver.is_none() && s.constraint_solver.tolerance == Some(1e-9));
        let e = Scene::from_toml(
            "[simulation]\ntime_step = 0.01\nsteps = 1\npreset = \"fast\"\n",
            ".".into(),
            "t",
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("simulation.preset") && e.contains("real-time"), "{e}");
    }
}
