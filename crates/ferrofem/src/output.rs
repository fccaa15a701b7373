//! Frames a user can open in ParaView: per body, one `.vtu` per frame with
//! point data (velocity, displacement, contact force in N) and a `.pvd` series.

use std::path::{Path, PathBuf};

use ferrofem_mesh::io::{write_vtp_points, write_vtu_frame, PointField, PvdSeries};

use crate::{SimError, World};

/// Writes frames of every body of a world into a folder.
#[derive(Debug)]
pub struct FrameWriter {
    dir: PathBuf,
    series: Vec<PvdSeries>,
    contacts: PvdSeries,
    frame: usize,
    displacement: Vec<f64>,
}

impl FrameWriter {
    /// Creates `dir` and one `<body>.pvd` series per body.
    pub fn new(dir: &Path, world: &World) -> Result<FrameWriter, SimError> {
        std::fs::create_dir_all(dir)
            .map_err(|source| SimError::Io { path: dir.display().to_string(), source })?;
        let series =
            world.model.bodies.iter().map(|b| PvdSeries::new(dir.join(format!("{}.pvd", b.name)))).collect();
        let contacts = PvdSeries::new(dir.join("contacts.pvd"));
        Ok(FrameWriter { dir: dir.to_path_buf(), series, contacts, frame: 0, displacement: Vec::new() })
    }

    /// Writes the current state as the next frame.
    pub fn write(&mut self, world: &World) -> Result<(), SimError> {
        for (b, (body, state)) in world.model.bodies.iter().zip(&world.state.bodies).enumerate() {
            let file = format!("{}_{:05}.vtu", body.name, self.frame);
            let points: Vec<[f64; 3]> = state.positions.chunks_exact(3).map(|p| [p[0], p[1], p[2]]).collect();
            self.displacement.clear();
            let rest = body.mesh.vertices.iter().flatten();
            self.displacement.extend(state.positions.iter().zip(rest).map(|(x, x0)| x - x0));
            let fields = [
                PointField { name: "velocity", components: 3, values: &state.velocities },
                PointField { name: "displacement", components: 3, values: &self.displacement },
                PointField {
                    name: "contact_force",
                    components: 3,
                    values: &world.workspace(b).contact_forces,
                },
            ];
            write_vtu_frame(&self.dir.join(&file), &points, &body.mesh.tets, &[], &fields)?;
            self.series[b].push(world.state.time, &file)?;
        }
        self.write_contacts(world)?;
        self.frame += 1;
        Ok(())
    }

    /// `contacts_<frame>.vtp`: one point per constraint group (at its first
    /// vertex, end-of-step position) with `normal`, `force` (N, world axes)
    /// and `kind` (0 contact, 1 attachment).
    fn write_contacts(&mut self, world: &World) -> Result<(), SimError> {
        let space = world.constraints();
        let (mut points, mut normals, mut forces, mut kinds) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for (k, g) in space.groups.iter().enumerate() {
            let (b, pts) = &g.parts[0];
            let x = &world.state.bodies[*b].positions;
            let v = pts[0].0;
            points.push([x[3 * v], x[3 * v + 1], x[3 * v + 2]]);
            normals.extend_from_slice(&g.frame[0]);
            let l = space.impulses.get(3 * k..3 * k + 3).unwrap_or(&[0.0; 3]);
            forces.extend((0..3).map(|d| (0..3).map(|r| l[r] * g.frame[r][d]).sum::<f64>()));
            kinds.push(f64::from(u8::from(matches!(g.law, crate::solver::ConstraintGroup::Attachment))));
        }
        let file = format!("contacts_{:05}.vtp", self.frame);
        let fields = [
            PointField { name: "normal", components: 3, values: &normals },
            PointField { name: "force", components: 3, values: &forces },
            PointField { name: "kind", components: 1, values: &kinds },
        ];
        write_vtp_points(&self.dir.join(&file), &points, &fields)?;
        self.contacts.push(world.state.time, &file)?;
        Ok(())
    }

    /// Frames written so far.
    pub fn frames(&self) -> usize {
        self.frame
    }

    /// The `.pvd` files: one per body, then the contact points.
    pub fn series_paths(&self) -> Vec<PathBuf> {
        self.series.iter().chain([&self.contacts]).map(|s| s.path().to_path_buf()).collect()
    }
}
