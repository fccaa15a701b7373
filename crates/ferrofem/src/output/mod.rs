//! Frames a user can open in ParaView: per body, one `.vtu` per frame with
//! point data (velocity, displacement, contact force in N) and a `.pvd`
//! series; the contact points; the needles; the posed surfaces of mesh
//! obstacles; and
//! `obstacles.jsonl`, every obstacle's shape and its pose per frame (what
//! a replay draws the analytic ones from). Or the run as one USD stage
//! ([`UsdWriter`]).

mod usd;

pub use usd::{UsdField, UsdWriter};

use std::io::Write;
use std::path::{Path, PathBuf};

use ferrofem_mesh::io::{write_vtp_lines, write_vtp_points, write_vtu_frame, PointField, PvdSeries};

use crate::obstacle::Geometry;
use crate::{SimError, World};

/// Writes frames of every body of a world into a folder.
#[derive(Debug)]
pub struct FrameWriter {
    dir: PathBuf,
    series: Vec<PvdSeries>,
    contacts: Option<PvdSeries>,
    /// `needles.pvd` (absent without needles).
    needles: Option<PvdSeries>,
    /// Mesh obstacles (index into the model's obstacles) and their series.
    obstacles: Vec<(usize, PvdSeries)>,
    frame: usize,
    displacement: Vec<f64>,
    /// `obstacles.jsonl` (absent without obstacles): shapes, then a pose line per frame.
    poses: Option<std::fs::File>,
}

/// The first line of `obstacles.jsonl`: each obstacle's name and shape
/// (as a scene file writes it; `null` for a mesh, whose own series holds
/// its posed surface).
#[derive(serde::Serialize)]
struct ObstacleShapes<'a> {
    obstacles: Vec<(&'a str, Option<crate::obstacle::Shape>)>,
}

/// A frame's line of `obstacles.jsonl`: the time and each obstacle's pose
/// `[x, y, z, qx, qy, qz, qw]` (origin and unit quaternion).
#[derive(serde::Serialize)]
struct ObstaclePoses {
    time: f64,
    poses: Vec<[f64; 7]>,
}

impl FrameWriter {
    /// Creates `dir` and one `<body>.pvd` series per body (plus
    /// `contacts.pvd` where the scene can have constraint rows,
    /// `needles.pvd` where it has needles, and one `<obstacle>.pvd` per
    /// mesh obstacle).
    pub fn new(dir: &Path, world: &World) -> Result<FrameWriter, SimError> {
        std::fs::create_dir_all(dir)
            .map_err(|source| SimError::Io { path: dir.display().to_string(), source })?;
        let model = &world.model;
        let series =
            model.bodies.iter().map(|b| PvdSeries::new(dir.join(format!("{}.pvd", b.name)))).collect();
        // Only a scene that can have constraint rows has contact points.
        let contacts = model.constrained().then(|| PvdSeries::new(dir.join("contacts.pvd")));
        let needles = (!model.needles.is_empty()).then(|| PvdSeries::new(dir.join("needles.pvd")));
        let obstacles = model
            .obstacles
            .iter()
            .enumerate()
            .filter(|(_, o)| matches!(o.geometry, Geometry::Mesh(_)))
            .map(|(i, o)| (i, PvdSeries::new(dir.join(format!("obstacle-{}.pvd", o.name)))))
            .collect();
        let poses = (!model.obstacles.is_empty()).then(|| shapes_file(dir, world)).transpose()?;
        Ok(FrameWriter {
            dir: dir.to_path_buf(),
            series,
            contacts,
            needles,
            obstacles,
            frame: 0,
            displacement: Vec::new(),
            poses,
        })
    }

    /// Writes the current state as the next frame: per body a `.vtu` with
    /// `velocity`, `displacement` and `contact_force`, the contact points
    /// and the mesh obstacles. A frame is whole or absent: when a file
    /// cannot be written, the frame's files written so far are removed and
    /// no series names it.
    pub fn write(&mut self, world: &World) -> Result<(), SimError> {
        let mut written = Vec::new();
        let result = self.write_files(world, &mut written);
        match result {
            Ok(()) => {
                let t = world.state.time;
                let series =
                    self.series.iter_mut().chain(self.contacts.as_mut()).chain(self.needles.as_mut());
                let all = series.chain(self.obstacles.iter_mut().map(|(_, s)| s));
                for (s, file) in all.zip(&written) {
                    s.push(t, file)?;
                }
                if let Some(f) = self.poses.as_mut() {
                    append_poses(f, &self.dir, world)?;
                }
                self.frame += 1;
                Ok(())
            }
            Err(e) => {
                written.iter().for_each(|f| drop(std::fs::remove_file(self.dir.join(f))));
                Err(e)
            }
        }
    }

    /// The frame's files, in the order of the series (bodies, contacts,
    /// needles, mesh obstacles), their names pushed to `written` as they land.
    fn write_files(&mut self, world: &World, written: &mut Vec<String>) -> Result<(), SimError> {
        let state = &world.state;
        for (b, (body, s)) in world.model.bodies.iter().zip(&state.bodies).enumerate() {
            let file = format!("{}_{:05}.vtu", body.name, self.frame);
            let points: Vec<[f64; 3]> = s.positions.chunks_exact(3).map(|p| [p[0], p[1], p[2]]).collect();
            let (rest, tets, triangles) = body.mesh_view();
            self.displacement.clear();
            self.displacement.extend(s.positions.iter().zip(rest.iter().flatten()).map(|(x, x0)| x - x0));
            let mut fields = vec![
                PointField { name: "velocity", components: 3, values: &s.velocities },
                PointField { name: "displacement", components: 3, values: &self.displacement },
            ];
            let forces = &world.constraints().problem.bodies[b].forces;
            fields.push(PointField { name: "contact_force", components: 3, values: forces });
            write_vtu_frame(&self.dir.join(&file), &points, tets, triangles, &fields)?;
            written.push(file);
        }
        if self.contacts.is_some() {
            written.push(self.write_contacts(world)?);
        }
        if self.needles.is_some() {
            written.push(self.write_needles(world)?);
        }
        self.write_obstacles(world, written)
    }

    /// `obstacle-<name>_<frame>.vtu`: each mesh obstacle's triangles at its
    /// current pose, with the `velocity` of its material points.
    fn write_obstacles(&mut self, world: &World, written: &mut Vec<String>) -> Result<(), SimError> {
        let t = world.state.time;
        for (i, _) in &self.obstacles {
            let o = &world.model.obstacles[*i];
            let Geometry::Mesh(mesh) = &o.geometry else { continue };
            let vertices = o.vertices_at(t);
            let points: Vec<[f64; 3]> = vertices.iter().map(|p| [p.x, p.y, p.z]).collect();
            let velocity: Vec<f64> =
                vertices.iter().flat_map(|p| <[f64; 3]>::from(o.velocity_at(p, t))).collect();
            let triangles: Vec<[usize; 3]> = mesh.triangles().collect();
            let file = format!("obstacle-{}_{:05}.vtu", o.name, self.frame);
            let fields = [PointField { name: "velocity", components: 3, values: &velocity }];
            write_vtu_frame(&self.dir.join(&file), &points, &[], &triangles, &fields)?;
            written.push(file);
        }
        Ok(())
    }

    /// `contacts_<frame>.vtp`: the [`World::constraint_points`] with
    /// `normal`, `force` (N, world axes) and `kind` (0 contact, 1 attachment).
    fn write_contacts(&mut self, world: &World) -> Result<String, SimError> {
        let c = world.constraint_points();
        let kinds: Vec<f64> = c.attachment.iter().map(|&a| f64::from(u8::from(a))).collect();
        let file = format!("contacts_{:05}.vtp", self.frame);
        let fields = [
            PointField { name: "normal", components: 3, values: c.normals.as_flattened() },
            PointField { name: "force", components: 3, values: c.forces.as_flattened() },
            PointField { name: "kind", components: 1, values: &kinds },
        ];
        write_vtp_points(&self.dir.join(&file), &c.points, &fields)?;
        Ok(file)
    }

    /// `needles_<frame>.vtp`: each needle as a segment from its back to its
    /// tip, with the `force` of the tissue against it (N) and `punctured`
    /// (0 or 1) at both ends.
    fn write_needles(&mut self, world: &World) -> Result<String, SimError> {
        let (t, mut points, mut force, mut punctured) =
            (world.state.time, Vec::new(), Vec::new(), Vec::new());
        for (needle, s) in world.model.needles.iter().zip(&world.state.needles) {
            points.extend(needle.segment(t).map(|p| [p.x, p.y, p.z]));
            force.extend([s.force; 2]);
            punctured.extend([f64::from(u8::from(s.punctured)); 2]);
        }
        let segments: Vec<[usize; 2]> = (0..world.model.needles.len()).map(|k| [2 * k, 2 * k + 1]).collect();
        let file = format!("needles_{:05}.vtp", self.frame);
        let fields = [
            PointField { name: "force", components: 1, values: &force },
            PointField { name: "punctured", components: 1, values: &punctured },
        ];
        write_vtp_lines(&self.dir.join(&file), &points, &segments, &fields)?;
        Ok(file)
    }

    /// Frames written so far.
    pub fn frames(&self) -> usize {
        self.frame
    }

    /// The `.pvd` files: one per body, then the contact points, the
    /// needles, the mesh obstacles.
    pub fn series_paths(&self) -> Vec<PathBuf> {
        let obstacles = self.obstacles.iter().map(|(_, s)| s);
        self.series
            .iter()
            .chain(self.contacts.as_ref())
            .chain(self.needles.as_ref())
            .chain(obstacles)
            .map(|s| s.path().to_path_buf())
            .collect()
    }
}

/// Creates `dir/obstacles.jsonl` with its shapes line.
fn shapes_file(dir: &Path, world: &World) -> Result<std::fs::File, SimError> {
    let path = dir.join("obstacles.jsonl");
    let io = |source| SimError::Io { path: path.display().to_string(), source };
    let shapes = world.model.obstacles.iter().map(|o| {
        let shape = match &o.geometry {
            Geometry::Analytic(shape) => Some(*shape),
            Geometry::Mesh(_) => None,
        };
        (o.name.as_str(), shape)
    });
    let line = serde_json::to_string(&ObstacleShapes { obstacles: shapes.collect() }).unwrap_or_default();
    let mut file = std::fs::File::create(&path).map_err(io)?;
    writeln!(file, "{line}").map_err(io)?;
    Ok(file)
}

/// Appends the frame's obstacle poses to `obstacles.jsonl`.
fn append_poses(file: &mut std::fs::File, dir: &Path, world: &World) -> Result<(), SimError> {
    let t = world.state.time;
    let poses = world.model.obstacles.iter().map(|o| {
        let (r, c) = o.pose(t);
        let q = nalgebra::UnitQuaternion::from_rotation_matrix(&r);
        [c.x, c.y, c.z, q.i, q.j, q.k, q.w]
    });
    let line = serde_json::to_string(&ObstaclePoses { time: t, poses: poses.collect() }).unwrap_or_default();
    writeln!(file, "{line}")
        .map_err(|source| SimError::Io { path: dir.join("obstacles.jsonl").display().to_string(), source })
}
