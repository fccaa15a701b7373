//! The stats file and the closing per-stage table.

use serde::Serialize;

use ferrofem::stats::{Stage, Summary};
use ferrofem::World;
use ferrofem_mesh::SLIVER_QUALITY;

use ferrofem_bench::sysinfo::Context;

/// Static description of one body in the stats file.
#[derive(Debug, Serialize)]
pub struct BodyInfo {
    /// Body name.
    pub name: String,
    /// Vertices.
    pub vertices: usize,
    /// Tetrahedra.
    pub tets: usize,
    /// Membrane triangles (local-global cloth).
    pub triangles: usize,
    /// Degrees of freedom.
    pub dofs: usize,
    /// Total mass (kg).
    pub mass: f64,
    /// Kinematic (fixed or prescribed) vertices.
    pub kinematic_vertices: usize,
    /// Under local-global, the global step the body runs (`auto` settled:
    /// `triangular` or `sparse-inverse`, or `jacobi`); absent under
    /// implicit Euler.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub global_step: Option<&'static str>,
}

/// The first line of a stats file (JSON Lines, docs/stats.md): what the
/// run is.
#[derive(Debug, Serialize)]
pub struct StatsHeader {
    /// Format version of the file.
    pub format: u32,
    /// Scene name.
    pub scene: String,
    /// Time step (s).
    pub time_step: f64,
    /// Bodies.
    pub bodies: Vec<BodyInfo>,
    /// The GPU adapter the device stages ran on (absent: the CPU).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gpu_adapter: Option<String>,
}

/// The last line of a stats file: the summary, the machine at the end of
/// the run and why it stopped early, if it did.
#[derive(Debug, Serialize)]
pub struct StatsEnd {
    /// Summary over the steps.
    pub summary: Summary,
    /// Machine context at the end of the run.
    pub context: Context,
    /// Why the run stopped early, if it did.
    pub error: Option<String>,
}

/// Body descriptions of a simulation.
pub fn bodies(world: &World) -> Vec<BodyInfo> {
    world
        .model
        .bodies
        .iter()
        .enumerate()
        .map(|(i, b)| (i, b.summary()))
        .map(|(i, b)| BodyInfo {
            global_step: world.local_global().map(|lg| lg.global_solver(i).method.name()),
            dofs: 3 * b.vertices,
            name: b.name,
            vertices: b.vertices,
            tets: b.tets,
            triangles: b.triangles,
            mass: b.mass,
            kinematic_vertices: b.kinematic_vertices,
        })
        .collect()
}

/// Median / p90 milliseconds per stage, as a text table.
pub fn stage_table(s: &Summary) -> String {
    let width = Stage::ALL.iter().map(|st| st.name().len()).max().unwrap_or(0);
    let mut out = format!("{:<width$} {:>12} {:>12}\n", "stage", "median ms", "p90 ms");
    for st in Stage::ALL.into_iter().filter(|st| s.stage_ms_p90.get(*st) > 0.0) {
        out += &format!(
            "{:<width$} {:>12.3} {:>12.3}\n",
            st.name(),
            s.stage_ms_median.get(st),
            s.stage_ms_p90.get(st)
        );
    }
    out += &format!("{:<width$} {:>12.3} {:>12.3}\n", "step", s.step_ms_median, s.step_ms_p90);
    out += &if s.cg_iterations_max > 0 {
        format!(
            "{} steps; PCG iterations mean {:.1}, max {}; worst relative residual {:.2e}",
            s.steps, s.cg_iterations_mean, s.cg_iterations_max, s.cg_rel_residual_max
        )
    } else {
        format!("{} steps", s.steps)
    };
    out
}

/// A warning per body whose tet mesh holds slivers (quality below
/// [`SLIVER_QUALITY`]): nearly flat tets turn over under small motions.
pub fn sliver_warnings(world: &World) -> Vec<String> {
    let meshes = world.model.bodies.iter().filter_map(|b| Some((&b.name, b.tet_mesh()?.quality())));
    meshes
        .filter(|(_, q)| q.slivers > 0)
        .map(|(name, q)| {
            format!(
                "body `{name}`: {} of {} tets are slivers (quality below {SLIVER_QUALITY}, the smallest \
                 {:.1e}); they turn over under small motions, so expect inverted elements: remesh",
                q.slivers, q.tets, q.min_quality
            )
        })
        .collect()
}
