//! Frames a user can open in ParaView: per body, one `.vtu` per frame with
//! point data (velocity, displacement, contact force in N) and a `.pvd` series.

use std::path::{Path, PathBuf};

use ferrofem_mesh::io::{write_vtu_frame, PointField, PvdSeries};

use crate::{SimError, World};

/// Writes frames of every body of a world into a folder.
#[derive(Debug)]
pub struct FrameWriter {
    dir: PathBuf,
    series: Vec<PvdSeries>,
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
        Ok(FrameWriter { dir: dir.to_path_buf(), series, frame: 0, displacement: Vec::new() })
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
        self.frame += 1;
        Ok(())
    }

    /// Frames written so far.
    pub fn frames(&self) -> usize {
        self.frame
    }

    /// The `.pvd` files, one per body.
    pub fn series_paths(&self) -> Vec<PathBuf> {
        self.series.iter().map(|s| s.path().to_path_buf()).collect()
    }
}
