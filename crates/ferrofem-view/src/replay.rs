//! Replay of a folder written by `ferrofem run`: each body's `.pvd`
//! series, its `.vtu` frames read on demand, with the displacement from
//! the first frame, the velocity and the contact force (the frames' point
//! data) as fields, the contact forces of `contacts.pvd` as arrows, the
//! obstacles of `obstacles.jsonl` at their poses (a mesh obstacle's
//! surface from its own series) and the needles of `needles.pvd` (each a
//! segment from its back to its tip) drawn as the live viewer draws them.

use std::path::{Path, PathBuf};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::sync::Arc;
use std::time::{Duration, Instant};

use ferrofem::fields::Field;
use ferrofem_mesh::io::{parse_elements, read_elements, Elements, Format};
use ferrofem_mesh::TetMesh;
use nalgebra::{Quaternion, UnitQuaternion, Vector3};
use tokio::sync::watch;

use crate::error::ViewError;
use crate::frame::{bounds, BodyView, Figures, Frame, ObstacleView, SceneView, ShapeView};
use crate::scene_view::{analytic_view, needle_shape};
use crate::session::{pose, Command, Reply};
use ferrofem::needle::shaft_pose;
use ferrofem::obstacle::Shape;

/// One body's series: its name, topology and frames `(time, file)`.
#[derive(Debug)]
struct Series {
    name: String,
    triangles: Vec<u32>,
    frames: Vec<(f64, PathBuf)>,
    first: Vec<f64>,
}

/// A replay of a run's folder.
#[derive(Debug)]
pub struct Replay {
    dir: PathBuf,
    series: Vec<Series>,
    /// The obstacles `obstacles.jsonl` names, and their poses per frame.
    obstacles: Vec<(String, Drawn)>,
    poses: Vec<Poses>,
    /// `contacts.pvd`'s frames, if the run wrote them.
    contacts: Vec<(f64, PathBuf)>,
    /// `needles.pvd`'s frames, if the run had needles (drawn after the
    /// obstacles, posed frame by frame from their segments).
    needles: Vec<(f64, PathBuf)>,
    frame: usize,
    playing: bool,
    field: Field,
    seq: u64,
    anchor: (Instant, f64),
    error: Option<String>,
}

/// The obstacles' poses of one frame, `[x, y, z, qx, qy, qz, qw]` each.
type Poses = Vec<[f32; 7]>;

/// The first line of `obstacles.jsonl` (`ferrofem::output`).
#[derive(serde::Deserialize)]
struct ShapesLine {
    obstacles: Vec<(String, Option<Shape>)>,
}

/// A frame's line of `obstacles.jsonl`.
#[derive(serde::Deserialize)]
struct PosesLine {
    poses: Vec<[f64; 7]>,
}

/// The obstacles of `dir/obstacles.jsonl` and their poses per frame (none
/// without the file: a run without obstacles, or an older one). A mesh
/// obstacle is drawn from its own series' first frame, brought back to its
/// frame by that frame's pose; one whose series is missing is left out.
fn read_obstacles(dir: &Path) -> Result<Obstacles, ViewError> {
    let path = dir.join("obstacles.jsonl");
    let Ok(text) = std::fs::read_to_string(&path) else { return Ok(Obstacles::default()) };
    let bad = |e: serde_json::Error| ViewError::Replay(format!("{}: {e}", path.display()));
    let mut lines = text.lines();
    let shapes: ShapesLine = serde_json::from_str(lines.next().unwrap_or("")).map_err(bad)?;
    let frames: Vec<PosesLine> = lines
        .filter(|l| !l.trim().is_empty())
        .map(serde_json::from_str)
        .collect::<Result<_, _>>()
        .map_err(bad)?;
    let (mut keep, mut drawn) = (Vec::new(), Vec::new());
    for (i, (name, shape)) in shapes.obstacles.into_iter().enumerate() {
        let first = frames.first().and_then(|f| f.poses.get(i));
        let d = match shape {
            Some(s) => Some(Drawn::Analytic(s)),
            None => mesh_in_its_frame(dir, &name, first)?,
        };
        if let Some(d) = d {
            keep.push(i);
            drawn.push((name, d));
        }
    }
    let poses = frames
        .iter()
        .map(|f| keep.iter().filter_map(|&i| f.poses.get(i)).map(|q| q.map(|v| v as f32)).collect())
        .collect();
    Ok(Obstacles { shapes: drawn, poses })
}

/// A mesh obstacle's surface in its own frame: the first frame of
/// `obstacle-<name>.pvd`, posed at `pose` (`[x, y, z, qx, qy, qz, qw]`),
/// brought back by `Rᵀ(x − t)`; none without the series.
fn mesh_in_its_frame(dir: &Path, name: &str, pose: Option<&[f64; 7]>) -> Result<Option<Drawn>, ViewError> {
    let pvd = dir.join(format!("obstacle-{name}.pvd"));
    let Some(p) = pose.filter(|_| pvd.exists()) else { return Ok(None) };
    let Some((_, first)) = read_pvd(&pvd)?.into_iter().next() else { return Ok(None) };
    let e = read_frame(&first)?;
    let rotation = UnitQuaternion::from_quaternion(Quaternion::new(p[6], p[3], p[4], p[5]));
    let shift = Vector3::new(p[0], p[1], p[2]);
    let vertices = e
        .vertices
        .iter()
        .flat_map(|x| {
            let local = rotation.inverse() * (Vector3::from(*x) - shift);
            [local.x as f32, local.y as f32, local.z as f32]
        })
        .collect();
    let triangles = e.triangles.as_flattened().iter().map(|&i| i as u32).collect();
    Ok(Some(Drawn::Shape(ShapeView::Mesh { vertices, triangles })))
}

/// The needles' segments `[back, tip]` in a frame of `needles.pvd` (two
/// points a needle, in the scene's order).
fn read_needles(path: &Path) -> Result<Vec<[Vector3<f64>; 2]>, ViewError> {
    let e = read_frame(path)?;
    if e.vertices.len() % 2 != 0 {
        let n = e.vertices.len();
        return Err(ViewError::Replay(format!("{}: {n} points, not two a needle", path.display())));
    }
    Ok(e.vertices.chunks_exact(2).map(|p| [Vector3::from(p[0]), Vector3::from(p[1])]).collect())
}

/// An obstacle as a replay draws it.
#[derive(Debug)]
enum Drawn {
    /// An analytic shape (sized for the scene when drawn).
    Analytic(Shape),
    /// A shape drawn as given, in its own frame: a mesh obstacle's
    /// surface, a needle's shaft.
    Shape(ShapeView),
}

/// A replay's obstacles and their poses per frame.
#[derive(Default)]
struct Obstacles {
    shapes: Vec<(String, Drawn)>,
    poses: Vec<Poses>,
}

/// `(time, file)` of each `<DataSet>` of a `.pvd`, files relative to its folder.
fn read_pvd(path: &Path) -> Result<Vec<(f64, PathBuf)>, ViewError> {
    let text =
        std::fs::read_to_string(path).map_err(|e| ViewError::Replay(format!("{}: {e}", path.display())))?;
    let attr = |tag: &str, name: &str| -> Option<String> {
        let at = tag.find(&format!("{name}=\""))? + name.len() + 2;
        Some(tag[at..].split('"').next()?.to_string())
    };
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut frames = Vec::new();
    for tag in text.split("<DataSet").skip(1) {
        let bad = || ViewError::Replay(format!("{}: a DataSet without timestep and file", path.display()));
        let t: f64 = attr(tag, "timestep").and_then(|t| t.parse().ok()).ok_or_else(bad)?;
        frames.push((t, dir.join(attr(tag, "file").ok_or_else(bad)?)));
    }
    Ok(frames)
}

/// A frame file's vertices and point data (`.vtp` contact points too:
/// the VTK XML reader takes poly data).
fn read_frame(path: &Path) -> Result<Elements, ViewError> {
    let bad = |e: &dyn std::fmt::Display| ViewError::Replay(e.to_string());
    if path.extension().is_some_and(|e| e == "vtp") {
        let bytes = std::fs::read(path).map_err(|e| bad(&format!("{}: {e}", path.display())))?;
        return parse_elements(&bytes, Format::Vtu, path).map_err(|e| bad(&e));
    }
    read_elements(path).map_err(|e| bad(&e))
}

/// The magnitudes of a 3-vector point field, by vertex.
fn magnitudes(e: &Elements, name: &str, path: &Path) -> Result<Vec<f64>, ViewError> {
    let f = e.field(name).filter(|f| f.components == 3).ok_or_else(|| {
        ViewError::Replay(format!(
            "{}: no `{name}` point data (a folder from an older ferrofem?)",
            path.display()
        ))
    })?;
    Ok(f.values.chunks_exact(3).map(|v| dist(v, &[0.0; 3])).collect())
}

impl Replay {
    /// The body series of `dir` (every `.pvd` but the contact points' and
    /// the obstacles'), with their first frames read.
    pub fn open(dir: &Path) -> Result<Replay, ViewError> {
        let mut pvds: Vec<PathBuf> = std::fs::read_dir(dir)
            .map_err(|e| ViewError::Replay(format!("{}: {e}", dir.display())))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "pvd"))
            .filter(|p| {
                let stem = p.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
                stem != "contacts" && stem != "needles" && !stem.starts_with("obstacle-")
            })
            .collect();
        pvds.sort();
        if pvds.is_empty() {
            return Err(ViewError::Replay(format!(
                "{}: no body series (.pvd) in it: give a folder written by `ferrofem run`",
                dir.display()
            )));
        }
        let mut series = Vec::new();
        for pvd in pvds {
            let frames = read_pvd(&pvd)?;
            let (_, first) =
                frames.first().ok_or_else(|| ViewError::Replay(format!("{}: no frames", pvd.display())))?;
            let e = read_elements(first).map_err(|e| ViewError::Replay(e.to_string()))?;
            let triangles = if e.tets.is_empty() {
                e.triangles.as_flattened().iter().map(|&i| i as u32).collect()
            } else {
                let mesh = TetMesh { vertices: e.vertices.clone(), tets: e.tets.clone() };
                let b = mesh.boundary();
                b.mesh.triangles.as_flattened().iter().map(|&i| b.volume_vertex[i] as u32).collect()
            };
            let name = pvd.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
            series.push(Series { name, triangles, frames, first: e.vertices.as_flattened().to_vec() });
        }
        let Obstacles { shapes: mut obstacles, poses } = read_obstacles(dir)?;
        let contacts = dir.join("contacts.pvd");
        let contacts = if contacts.exists() { read_pvd(&contacts)? } else { Vec::new() };
        let needles = dir.join("needles.pvd");
        let needles = if needles.exists() { read_pvd(&needles)? } else { Vec::new() };
        // The folder keeps no needle names: they are numbered.
        if let Some((_, first)) = needles.first() {
            let shafts = read_needles(first)?.into_iter().enumerate();
            obstacles.extend(shafts.map(|(k, [back, tip])| {
                (format!("needle {}", k + 1), Drawn::Shape(needle_shape((tip - back).norm())))
            }));
        }
        Ok(Replay {
            dir: dir.to_path_buf(),
            series,
            obstacles,
            poses,
            contacts,
            needles,
            frame: 0,
            playing: false,
            field: Field::Displacement,
            seq: 0,
            anchor: (Instant::now(), 0.0),
            error: None,
        })
    }

    /// Frames in the shortest series.
    pub fn frames(&self) -> usize {
        self.series.iter().map(|s| s.frames.len()).min().unwrap_or(0)
    }

    /// The scene message.
    pub fn scene_view(&self) -> SceneView {
        let bodies = self
            .series
            .iter()
            .map(|s| BodyView {
                name: s.name.clone(),
                vertices: s.first.len() / 3,
                triangles: s.triangles.clone(),
            })
            .collect();
        let (extent, center) = bounds(self.series.iter().map(|s| s.first.as_slice()));
        SceneView {
            kind: "scene",
            mode: "replay",
            name: self.dir.file_name().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default(),
            bodies,
            obstacles: self
                .obstacles
                .iter()
                .map(|(name, drawn)| ObstacleView {
                    name: name.clone(),
                    shape: match drawn {
                        Drawn::Analytic(shape) => analytic_view(*shape, extent),
                        Drawn::Shape(shape) => shape.clone(),
                    },
                    draggable: false,
                })
                .collect(),
            fields: REPLAY_FIELDS.iter().map(|f| (f.name(), f.unit())).collect(),
            time_step_range: None,
            time_step: 0.0,
            times: self.series[0].frames.iter().take(self.frames()).map(|(t, _)| *t).collect(),
            extent,
            center,
        }
    }

    /// Applies a command.
    pub fn apply(&mut self, command: Command) -> Result<(), String> {
        match command {
            Command::Play => {
                self.playing = true;
                self.anchor = (Instant::now(), self.time(self.frame));
            }
            Command::Pause => self.playing = false,
            Command::Step => {
                self.playing = false;
                self.frame = (self.frame + 1).min(self.frames() - 1);
            }
            Command::Reset => self.frame = 0,
            Command::Seek { frame } if frame < self.frames() => {
                self.playing = false;
                self.frame = frame;
            }
            Command::Seek { frame } => return Err(format!("seek: frame {frame} of {}", self.frames())),
            Command::Field { name } => self.field = replay_field(name).map_err(|e| e.to_string())?,
            Command::Ready => {}
            _ => return Err("a replay can only play, pause, step, seek, reset and change the field".into()),
        }
        Ok(())
    }

    fn time(&self, k: usize) -> f64 {
        self.series[0].frames[k].0
    }

    /// Frame `self.frame`, read from its files, as the page shows it.
    fn frame(&mut self) -> Result<Frame, ViewError> {
        let started = Instant::now();
        let mut frame = self.frame_of(self.frame, self.field)?;
        self.seq += 1;
        frame.seq = self.seq;
        frame.figures.playing = self.playing;
        frame.figures.error = self.error.clone();
        frame.figures.publish_ms = started.elapsed().as_secs_f64() * 1e3;
        Ok(frame)
    }

    /// Frame `k` coloured by `field` (displacement, velocity or contact
    /// force: what a run's folder holds), with the contact-force arrows.
    pub fn frame_of(&self, k: usize, field: Field) -> Result<Frame, ViewError> {
        let field = replay_field(field)?;
        let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
        let mut bodies = Vec::new();
        for s in &self.series {
            let (time, path) = &s.frames[k];
            let e = read_frame(path)?;
            let x = e.vertices.as_flattened();
            let values = match field {
                Field::Velocity if e.field("velocity").is_some() => magnitudes(&e, "velocity", path)?,
                // A folder without velocities: the difference of two frames.
                Field::Velocity if k > 0 => {
                    let before = read_frame(&s.frames[k - 1].1)?;
                    let dt = time - s.frames[k - 1].0;
                    x.chunks_exact(3).zip(before.vertices.iter()).map(|(a, b)| dist(a, b) / dt).collect()
                }
                Field::Velocity => vec![0.0; x.len() / 3],
                Field::ContactForce => magnitudes(&e, "contact_force", path)?,
                _ => x.chunks_exact(3).zip(s.first.chunks_exact(3)).map(|(a, b)| dist(a, b)).collect(),
            };
            values.iter().for_each(|&v| {
                lo = lo.min(v);
                hi = hi.max(v);
            });
            bodies.push((x.iter().map(|&v| v as f32).collect(), values.iter().map(|&v| v as f32).collect()));
        }
        let figures = Figures {
            time: self.time(k),
            step: k,
            field: (field.name(), field.unit(), lo.min(hi), hi.max(lo)),
            ..Default::default()
        };
        let mut poses = self.poses.get(k).cloned().unwrap_or_default();
        if let Some((_, path)) = self.needles.get(k) {
            poses.extend(read_needles(path)?.iter().map(|[back, tip]| pose(shaft_pose(back, tip))));
        }
        Ok(Frame { seq: 0, figures, bodies, poses, arrows: self.arrows(k)? })
    }

    /// The contact forces of frame `k` (attachments left out), none
    /// without `contacts.pvd`.
    fn arrows(&self, k: usize) -> Result<Vec<[f32; 6]>, ViewError> {
        let Some((_, path)) = self.contacts.get(k) else { return Ok(Vec::new()) };
        let e = read_frame(path)?;
        let (Some(force), kind) = (e.field("force").filter(|f| f.components == 3), e.field("kind")) else {
            return Ok(Vec::new());
        };
        let attachment = |i: usize| kind.is_some_and(|k| k.values.get(i).is_some_and(|&v| v != 0.0));
        Ok((0..e.vertices.len())
            .filter(|&i| !attachment(i))
            .map(|i| {
                let (p, f) = (e.vertices[i], &force.values[3 * i..3 * i + 3]);
                [p[0], p[1], p[2], f[0], f[1], f[2]].map(|v| v as f32)
            })
            .collect())
    }

    /// Runs until `commands` closes, publishing the frame shown; while
    /// playing, frames advance at the run's own pace.
    pub fn run(mut self, commands: Receiver<(Command, Reply)>, frames: watch::Sender<Arc<Frame>>) {
        let mut changed = true;
        loop {
            if changed {
                match self.frame() {
                    Ok(f) => {
                        frames.send_replace(Arc::new(f));
                    }
                    Err(e) => {
                        self.error = Some(e.to_string());
                        self.playing = false;
                    }
                }
            }
            changed = false;
            let wait = if self.playing { Duration::from_millis(5) } else { Duration::from_millis(200) };
            match commands.recv_timeout(wait) {
                Ok((command, reply)) => {
                    let _ = reply.send(self.apply(command));
                    changed = true;
                }
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => return,
            }
            if self.playing && self.frame + 1 < self.frames() {
                let due = self.anchor.1 + self.anchor.0.elapsed().as_secs_f64();
                if self.time(self.frame + 1) <= due {
                    self.frame += 1;
                    changed = true;
                }
            } else if self.playing {
                self.playing = false;
                changed = true;
            }
        }
    }
}

/// The fields a run's folder holds.
const REPLAY_FIELDS: [Field; 3] = [Field::Displacement, Field::Velocity, Field::ContactForce];

/// `field`, if a run's folder holds it.
fn replay_field(field: Field) -> Result<Field, ViewError> {
    match REPLAY_FIELDS.contains(&field) {
        true => Ok(field),
        false => Err(ViewError::Replay(format!(
            "field `{}` is not in a run's folder (displacement, velocity, contact_force): view or render the scene itself",
            field.name()
        ))),
    }
}

fn dist(a: &[f64], b: &[f64]) -> f64 {
    ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2) + (a[2] - b[2]).powi(2)).sqrt()
}
