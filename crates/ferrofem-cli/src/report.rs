//! The stats file and the closing per-stage table.

use serde::Serialize;

use ferrofem::stats::{Stage, StepStats, Summary};
use ferrofem::World;

use crate::sysinfo::Context;

/// Static description of one body in the stats file.
#[derive(Debug, Serialize)]
pub struct BodyInfo {
    /// Body name.
    pub name: String,
    /// Vertices.
    pub vertices: usize,
    /// Tetrahedra.
    pub tets: usize,
    /// Degrees of freedom.
    pub dofs: usize,
    /// Total mass (kg).
    pub mass: f64,
    /// Kinematic (fixed or prescribed) vertices.
    pub kinematic_vertices: usize,
}

/// The stats JSON file (docs/stats.md).
#[derive(Debug, Serialize)]
pub struct StatsFile<'a> {
    /// Format version of this file.
    pub format: u32,
    /// Scene name.
    pub scene: String,
    /// Time step (s).
    pub time_step: f64,
    /// Bodies.
    pub bodies: Vec<BodyInfo>,
    /// Machine context at the end of the run.
    pub context: Context,
    /// One record per step.
    pub steps: &'a [StepStats],
    /// Summary over the steps.
    pub summary: Summary,
    /// Why the run stopped early, if it did.
    pub error: Option<String>,
}

/// Body descriptions of a world.
pub fn bodies(world: &World) -> Vec<BodyInfo> {
    world
        .model
        .bodies
        .iter()
        .map(|b| BodyInfo {
            name: b.name.clone(),
            vertices: b.vertex_count(),
            tets: b.mesh.tets.len(),
            dofs: b.dofs(),
            mass: b.total_mass(),
            kinematic_vertices: b.kinematic.iter().filter(|k| k.is_some()).count(),
        })
        .collect()
}

/// Median / p90 milliseconds per stage, as a text table.
pub fn stage_table(s: &Summary) -> String {
    let mut out = format!("{:<14} {:>12} {:>12}\n", "stage", "median ms", "p90 ms");
    for st in Stage::ALL {
        out += &format!(
            "{:<14} {:>12.3} {:>12.3}\n",
            st.name(),
            s.stage_ms_median.get(st),
            s.stage_ms_p90.get(st)
        );
    }
    out += &format!("{:<14} {:>12.3} {:>12.3}\n", "step", s.step_ms_median, s.step_ms_p90);
    out += &format!(
        "{} steps; PCG iterations mean {:.1}, max {}; worst relative residual {:.2e}",
        s.steps, s.cg_iterations_mean, s.cg_iterations_max, s.cg_rel_residual_max
    );
    out
}
