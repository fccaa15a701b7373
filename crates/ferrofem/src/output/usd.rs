//! A run as one USD stage in text form (`.usda`), which Blender, Houdini,
//! Omniverse and `usdview` open: per body a `Mesh` of its surface with
//! time-sampled `points`, a per-vertex colour of a chosen field
//! (`primvars:displayColor`) and the field itself (`primvars:<field>`);
//! per obstacle a prim of its shape (`Sphere`, `Cube`, `Cylinder`,
//! `Capsule`, or a `Mesh`) with a time-sampled pose; per needle a linear
//! `BasisCurves` from its back to its tip, time-sampled. Time codes are step
//! numbers, `timeCodesPerSecond` is `1/h`: playback runs in real time.
//!
//! Frames are gathered in memory (surface points in `f32`) and the stage
//! written by [`UsdWriter::finish`].

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use nalgebra::{UnitQuaternion, Vector3};

use crate::fields::viridis;
use crate::obstacle::{Geometry, Shape};
use crate::{SimError, World};

/// The field that colours the bodies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UsdField {
    /// `|x − x₀|` (m).
    Displacement,
    /// `|v|` (m/s).
    Speed,
    /// The contact force's magnitude on each vertex (N).
    ContactForce,
}

impl UsdField {
    /// Every field, by name.
    pub const ALL: [(&'static str, UsdField); 3] = [
        ("displacement", UsdField::Displacement),
        ("speed", UsdField::Speed),
        ("contact_force", UsdField::ContactForce),
    ];

    /// The field named `name` (`displacement`, `speed`, `contact_force`).
    pub fn named(name: &str) -> Result<UsdField, SimError> {
        let found = Self::ALL.iter().find(|(n, _)| *n == name).map(|(_, f)| *f);
        found.ok_or_else(|| {
            let names: Vec<&str> = Self::ALL.iter().map(|(n, _)| *n).collect();
            SimError::Input(format!("field {name:?}: not one of {}", names.join(", ")))
        })
    }

    /// The field's name, as a primvar.
    pub fn name(self) -> &'static str {
        Self::ALL.iter().find(|(_, f)| *f == self).map_or("", |(n, _)| n)
    }

    /// The field at the volume vertices `vertices` of body `b`.
    fn values(self, world: &World, b: usize, vertices: &[usize]) -> Vec<f32> {
        let s = &world.state.bodies[b];
        let norm =
            |a: &[f64], v: usize| (a[3 * v].powi(2) + a[3 * v + 1].powi(2) + a[3 * v + 2].powi(2)).sqrt();
        let of = |a: &[f64]| vertices.iter().map(|&v| norm(a, v) as f32).collect();
        match self {
            UsdField::Displacement => {
                let rest = world.model.bodies[b].rest_positions();
                let d: Vec<f64> = s.positions.iter().zip(&rest).map(|(x, x0)| x - x0).collect();
                of(&d)
            }
            UsdField::Speed => of(&s.velocities),
            UsdField::ContactForce => {
                let f = &world.constraints().problem.bodies[b].forces;
                match f.len() == s.positions.len() {
                    true => of(f),
                    false => vec![0.0; vertices.len()],
                }
            }
        }
    }
}

/// One frame: its time code, per body its surface points and field values,
/// per obstacle its pose (translation, rotation as `(w, x, y, z)`), per
/// needle its back and tip.
#[derive(Debug)]
struct Frame {
    code: usize,
    points: Vec<Vec<[f32; 3]>>,
    values: Vec<Vec<f32>>,
    poses: Vec<([f64; 3], [f32; 4])>,
    needles: Vec<[[f32; 3]; 2]>,
}

/// Width (m) of a needle's curve in the stage.
const NEEDLE_WIDTH: f64 = 1e-3;

/// Gathers a run's frames and writes them as one `.usda` stage.
#[derive(Debug)]
pub struct UsdWriter {
    path: PathBuf,
    field: UsdField,
    frames: Vec<Frame>,
}

impl UsdWriter {
    /// A writer of `path` (checked writable now) colouring bodies by `field`.
    pub fn new(path: &Path, field: UsdField) -> Result<UsdWriter, SimError> {
        let io = |source| SimError::Io { path: path.display().to_string(), source };
        std::fs::write(path, "").map_err(io)?;
        Ok(UsdWriter { path: path.to_path_buf(), field, frames: Vec::new() })
    }

    /// Adds the world's current state as a frame at time code `step`.
    pub fn push(&mut self, world: &World) {
        let model = &world.model;
        let mut frame = Frame {
            code: world.state.step,
            points: Vec::new(),
            values: Vec::new(),
            poses: Vec::new(),
            needles: Vec::new(),
        };
        for (b, body) in model.bodies.iter().enumerate() {
            let x = &world.state.bodies[b].positions;
            let surface = &body.surface.volume_vertex;
            frame.points.push(surface.iter().map(|&v| [0, 1, 2].map(|k| x[3 * v + k] as f32)).collect());
            frame.values.push(self.field.values(world, b, surface));
        }
        for o in &model.obstacles {
            let (r, c) = o.pose(world.state.time);
            let q = UnitQuaternion::from_rotation_matrix(&r);
            frame.poses.push(([c.x, c.y, c.z], [q.w as f32, q.i as f32, q.j as f32, q.k as f32]));
        }
        for n in &model.needles {
            frame.needles.push(n.segment(world.state.time).map(|p| [p.x as f32, p.y as f32, p.z as f32]));
        }
        self.frames.push(frame);
    }

    /// The stage's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Frames gathered so far.
    pub fn frames(&self) -> usize {
        self.frames.len()
    }

    /// Writes the stage (the frames gathered so far) to the writer's path.
    pub fn finish(&self, world: &World) -> Result<(), SimError> {
        let text = self.stage(world);
        std::fs::write(&self.path, text)
            .map_err(|source| SimError::Io { path: self.path.display().to_string(), source })
    }

    /// The stage's text.
    fn stage(&self, world: &World) -> String {
        let model = &world.model;
        let (first, last) = match (self.frames.first(), self.frames.last()) {
            (Some(a), Some(b)) => (a.code, b.code),
            _ => (0, 0),
        };
        let mut s = String::new();
        let _ = write!(
            s,
            "#usda 1.0\n(\n    defaultPrim = \"World\"\n    doc = \"ferrofem run; bodies coloured by {}\"\n    \
             metersPerUnit = 1\n    upAxis = \"Z\"\n    startTimeCode = {first}\n    endTimeCode = {last}\n    \
             timeCodesPerSecond = {tps}\n    framesPerSecond = {tps}\n)\n\ndef Xform \"World\"\n{{\n",
            self.field.name(),
            tps = 1.0 / model.time_step
        );
        let top = self.frames.iter().flat_map(|f| f.values.iter().flatten()).fold(0.0f32, |m, &v| m.max(v));
        for (b, body) in model.bodies.iter().enumerate() {
            self.body_mesh(
                &mut s,
                b,
                &body.name,
                &body.surface.mesh.triangles,
                &body.surface.volume_vertex,
                top,
            );
        }
        for (o, obstacle) in model.obstacles.iter().enumerate() {
            self.obstacle_prim(&mut s, o, &obstacle.name, &obstacle.geometry);
        }
        for (n, needle) in model.needles.iter().enumerate() {
            let _ = writeln!(s, "    def BasisCurves \"needle_{}\"\n    {{", prim_name(&needle.name));
            let _ =
                writeln!(s, "        uniform token type = \"linear\"\n        int[] curveVertexCounts = [2]");
            let _ = writeln!(s, "        float[] widths = [{NEEDLE_WIDTH}] (\n            interpolation = \"constant\"\n        )");
            samples(&mut s, "point3f[] points", &self.frames, |s, f| {
                write_array(s, f.needles[n].iter().copied())
            });
            s.push_str("    }\n");
        }
        s.push_str("}\n");
        s
    }

    /// A body's `Mesh`: its surface triangles, time-sampled points, colour
    /// and field, and `ferrofem:volumeVertex` (each point's vertex in the
    /// body's volume mesh, as the `.vtu` numbers it).
    fn body_mesh(
        &self,
        s: &mut String,
        b: usize,
        name: &str,
        tris: &[[usize; 3]],
        volume: &[usize],
        top: f32,
    ) {
        let _ = writeln!(s, "    def Mesh \"{}\"\n    {{", prim_name(name));
        let _ = writeln!(s, "        uniform token subdivisionScheme = \"none\"");
        let _ =
            writeln!(s, "        int[] faceVertexCounts = [{}]", join(tris.iter().map(|_| "3".to_string())));
        let _ = writeln!(
            s,
            "        int[] faceVertexIndices = [{}]",
            join(tris.iter().flatten().map(|i| i.to_string()))
        );
        let _ = writeln!(
            s,
            "        int[] ferrofem:volumeVertex = [{}]",
            join(volume.iter().map(|i| i.to_string()))
        );
        samples(s, "point3f[] points", &self.frames, |s, f| write_array(s, f.points[b].iter().copied()));
        let _ = writeln!(
            s,
            "        color3f[] primvars:displayColor (\n            interpolation = \"vertex\"\n        )"
        );
        samples(s, "color3f[] primvars:displayColor", &self.frames, |s, f| {
            write_array(s, f.values[b].iter().map(|&v| viridis(if top > 0.0 { v / top } else { 0.0 })))
        });
        let field = format!("float[] primvars:{}", self.field.name());
        let _ = writeln!(s, "        {field} (\n            interpolation = \"vertex\"\n        )");
        samples(s, &field, &self.frames, |s, f| write_array(s, f.values[b].iter().map(|&v| [v])));
        s.push_str("    }\n");
    }

    /// An obstacle's prim, posed by time-sampled translate and orient.
    fn obstacle_prim(&self, s: &mut String, o: usize, name: &str, geometry: &Geometry) {
        let name = format!("obstacle_{}", prim_name(name));
        let (kind, body, scale) = match geometry {
            Geometry::Analytic(shape) => analytic(shape),
            Geometry::Mesh(mesh) => {
                let points: Vec<Vector3<f64>> = mesh.vertices().collect();
                let tris: Vec<[usize; 3]> = mesh.triangles().collect();
                ("Mesh", mesh_body(&points, &tris), None)
            }
        };
        let _ = writeln!(s, "    def {kind} \"{name}\"\n    {{");
        s.push_str(&body);
        samples(s, "double3 xformOp:translate", &self.frames, |s, f| write_tuple(s, &f.poses[o].0));
        samples(s, "quatf xformOp:orient", &self.frames, |s, f| write_tuple(s, &f.poses[o].1));
        let mut order = vec!["\"xformOp:translate\"", "\"xformOp:orient\""];
        if let Some(k) = scale {
            let _ = writeln!(s, "        float3 xformOp:scale = {}", tuple(&k));
            order.push("\"xformOp:scale\"");
        }
        let _ = writeln!(s, "        uniform token[] xformOpOrder = [{}]\n    }}", order.join(", "));
    }
}

/// `name.timeSamples = { code: value, … }` over the frames (`value` written
/// whole: an array in brackets, a vector as a tuple).
fn samples(s: &mut String, name: &str, frames: &[Frame], value: impl Fn(&mut String, &Frame)) {
    let _ = writeln!(s, "        {name}.timeSamples = {{");
    for f in frames {
        let _ = write!(s, "            {}: ", f.code);
        value(s, f);
        s.push_str(",\n");
    }
    s.push_str("        }\n");
}

/// `[(x, y, z), …]` of 3-vectors, or `[a, …]` of scalars, written into `s`.
fn write_array<T: ryu::Float, const K: usize>(s: &mut String, items: impl Iterator<Item = [T; K]>) {
    let mut buffer = ryu::Buffer::new();
    s.push('[');
    for (i, item) in items.enumerate() {
        if i > 0 {
            s.push_str(", ");
        }
        match K {
            1 => s.push_str(buffer.format(item[0])),
            _ => write_tuple(s, &item),
        }
    }
    s.push(']');
}

/// The prim type, body and scale of an analytic shape in its local frame
/// (ferrofem's shapes are centred, cylinders and capsules along z).
fn analytic(shape: &Shape) -> (&'static str, String, Option<[f64; 3]>) {
    match *shape {
        Shape::Sphere { radius } => ("Sphere", format!("        double radius = {radius}\n"), None),
        Shape::Box { size } => ("Cube", "        double size = 1\n".into(), Some(size)),
        Shape::Cylinder { radius, length } => (
            "Cylinder",
            format!("        double radius = {radius}\n        double height = {length}\n        uniform token axis = \"Z\"\n"),
            None,
        ),
        Shape::Capsule { radius, length } => (
            "Capsule",
            format!("        double radius = {radius}\n        double height = {length}\n        uniform token axis = \"Z\"\n"),
            None,
        ),
        Shape::Torus { major_radius, minor_radius } => ("Mesh", mesh_body_torus(major_radius, minor_radius), None),
        Shape::HalfSpace => {
            // The boundary plane z = 0 as a 20 m square (a half-space has no end).
            let h = 10.0;
            let corners = [[-h, -h, 0.0], [h, -h, 0.0], [h, h, 0.0], [-h, h, 0.0]].map(Vector3::from);
            ("Mesh", mesh_body(&corners, &[[0, 1, 2], [0, 2, 3]]), None)
        }
    }
}

/// A static triangle mesh's attributes.
fn mesh_body(points: &[Vector3<f64>], tris: &[[usize; 3]]) -> String {
    format!(
        "        uniform token subdivisionScheme = \"none\"\n        int[] faceVertexCounts = [{}]\n        \
         int[] faceVertexIndices = [{}]\n        point3f[] points = [{}]\n",
        join(tris.iter().map(|_| "3".to_string())),
        join(tris.iter().flatten().map(|i| i.to_string())),
        join(points.iter().map(|p| tuple(&[p.x as f32, p.y as f32, p.z as f32]))),
    )
}

/// A torus around z as a 32 × 16 quad grid split into triangles.
fn mesh_body_torus(major: f64, minor: f64) -> String {
    let (n, m) = (32, 16);
    let tau = std::f64::consts::TAU;
    let mut points = Vec::with_capacity(n * m);
    for i in 0..n {
        let u = tau * i as f64 / n as f64;
        for j in 0..m {
            let v = tau * j as f64 / m as f64;
            let r = major + minor * v.cos();
            points.push(Vector3::new(r * u.cos(), r * u.sin(), minor * v.sin()));
        }
    }
    let at = |i: usize, j: usize| (i % n) * m + j % m;
    let tris: Vec<[usize; 3]> = (0..n)
        .flat_map(|i| {
            (0..m).flat_map(move |j| {
                [[at(i, j), at(i + 1, j), at(i + 1, j + 1)], [at(i, j), at(i + 1, j + 1), at(i, j + 1)]]
            })
        })
        .collect();
    mesh_body(&points, &tris)
}

/// A USD identifier from a name: letters, digits and `_`, not starting with a digit.
fn prim_name(name: &str) -> String {
    let s: String = name.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '_' }).collect();
    if s.chars().next().is_none_or(|c| c.is_ascii_digit()) {
        format!("_{s}")
    } else {
        s
    }
}

/// `(a, b, c)` of numbers, each in its shortest exact form (ryu).
fn tuple<T: ryu::Float>(v: &[T]) -> String {
    let mut s = String::with_capacity(16 * v.len());
    write_tuple(&mut s, v);
    s
}

/// [`tuple`] written into `s`.
fn write_tuple<T: ryu::Float>(s: &mut String, v: &[T]) {
    let mut buffer = ryu::Buffer::new();
    s.push('(');
    for (i, &x) in v.iter().enumerate() {
        if i > 0 {
            s.push_str(", ");
        }
        s.push_str(buffer.format(x));
    }
    s.push(')');
}

/// Items joined by `, `.
fn join(items: impl Iterator<Item = String>) -> String {
    items.collect::<Vec<_>>().join(", ")
}
