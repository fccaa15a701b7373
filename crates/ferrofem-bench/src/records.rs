//! The JSON records of the benchmarks (one type per experiment), written
//! by [`write_json`] and read by the figures (`plot`).

use std::path::Path;

use ferrofem::stats::StageTimes;
use serde::{Deserialize, Serialize};

use crate::sysinfo::Context;
use crate::BenchError;

/// One `bench local-global` record.
#[derive(Debug, Clone, Serialize)]
pub struct LocalGlobalRecord {
    /// `quick`, `table1-2`, `table3` or `fig9`.
    pub experiment: &'static str,
    /// Scene or mesh.
    pub scene: String,
    /// Vertices.
    pub vertices: usize,
    /// Elements (tets or triangles).
    pub elements: usize,
    /// `arap`, `corotational` or `neo-hookean`.
    pub constitutive: &'static str,
    /// Young's modulus (Pa).
    pub young: f64,
    /// `sparse-inverse`, `triangular`, `jacobi` or `jacobi-chebyshev`.
    pub global_method: String,
    /// Local-global iterations per frame.
    pub iterations: usize,
    /// Median local step per iteration (ms).
    pub local_ms: f64,
    /// Median global step per iteration (ms).
    pub global_ms: f64,
    /// Median frame (ms).
    pub frame_ms: f64,
    /// Bytes of our `S` (of the scalar `A_s`; values, runs, column pointers).
    pub s_bytes: usize,
    /// Bytes of the values of `S` of the 3n×3n matrix `A_s ⊗ I₃`, as the paper stores it:
    /// the axes do not couple, so it is three copies of ours (`3 nnz` values).
    pub s_bytes_3n: usize,
    /// Bytes of a dense `A⁻¹` (3n × 3n doubles).
    pub dense_inverse_bytes: usize,
    /// Relative error after `iterations` iterations (Fig. 9 definition), when measured.
    pub rel_error: Option<f64>,
    /// Relative error after each iteration (Fig. 9).
    pub errors: Vec<f64>,
    /// `[local_global] acceleration` of the row (`none`, `anderson`, `lbfgs`).
    pub acceleration: &'static str,
    /// Iterations until the Fig. 9 error first falls to 1e-3 (acceleration rows).
    pub iterations_to_1e3: Option<usize>,
    /// Frame time per iteration (ms; acceleration rows).
    pub iteration_ms: Option<f64>,
    /// Global step bandwidth: bytes of `S` (sparse inverse) or of the factor
    /// (triangular) streamed twice plus the vectors, per `global_ms` (GB/s;
    /// on the GPU, the bytes its two CSR products read, over the whole step with transfers;
    /// in a resident frame, those of all its iterations over the device's own time of the
    /// frame, local steps included, from its timestamps: `null` without them).
    pub global_gbs: Option<f64>,
    /// Copy bandwidth measured in the same run (GB/s).
    pub copy_gbs: f64,
    /// The paper's figure for this row (zeng2025 Tables 1–3), when it has one.
    pub paper: Option<PaperFigures>,
    /// Where the global step ran: `cpu` or `gpu`.
    pub device: &'static str,
    /// The GPU adapter of a `gpu` row (a CPU adapter such as lavapipe
    /// makes it a correctness run, not a speed).
    pub adapter: Option<String>,
    /// On the device: the counters of one frame, each the largest over
    /// the timed frames (`docs/gpu.md`, "Counters"); `null` on the CPU.
    pub device_counters: Option<ferrofem::device::DeviceCounters>,
    /// Machine and build context.
    pub context: Context,
}

impl PaperFigures {
    /// A Table 3 row: memory, local, global and frame milliseconds.
    pub(crate) fn table3(s_mb: f64, local: f64, global: f64, frame: f64) -> Self {
        PaperFigures { s_mb, local_ms: Some(local), global_ms: Some(global), frame_ms: Some(frame) }
    }

    /// A Table 1–2 entry: memory only.
    pub(crate) fn memory(s_mb: f64) -> Self {
        PaperFigures { s_mb, local_ms: None, global_ms: None, frame_ms: None }
    }
}

/// The paper's numbers for a row (RTX 4090 GPU + 24-core CPU).
#[derive(Debug, Clone, Copy, Serialize)]
pub struct PaperFigures {
    /// Memory of S (MB).
    pub s_mb: f64,
    /// Local step per iteration (ms).
    pub local_ms: Option<f64>,
    /// Global step per iteration (ms).
    pub global_ms: Option<f64>,
    /// Frame (ms).
    pub frame_ms: Option<f64>,
}

/// One `bench delassus` record.
#[derive(Debug, Clone, Serialize)]
pub struct DelassusBenchRecord {
    /// `quick`, `fig9`, `fig10`, `table1` or `table2`.
    pub experiment: &'static str,
    /// Mesh of the case.
    pub case: String,
    /// `dense`, `isodof`, `isodof-reuse`, `unbuilt`, `isodof-gpu`,
    /// `isodof-reuse-gpu`, or the peers `cholmod` and `pardiso`.
    pub method: &'static str,
    /// Scalar DOFs of the body.
    pub dofs: usize,
    /// Constraint rows.
    pub constraints: usize,
    /// DOFs the rows touch.
    pub isodofs: usize,
    /// Isodofs whose solves came from the previous step (reuse only).
    pub reused_isodofs: usize,
    /// Median milliseconds to obtain `W` (unbuilt: its diagonal blocks).
    pub build_ms: f64,
    /// Dense `build_ms` over this one.
    pub speedup_vs_dense: f64,
    /// `max |W − W_dense| / max |W_dense|` (unbuilt: over `W λ` and the
    /// diagonal blocks; the peers: over `W p` for a probe `p`).
    pub max_rel_diff_vs_dense: f64,
    /// What the `auto` cost model predicted (ms).
    pub predicted_ms: f64,
    /// Unbuilt: one exact Gauss-Seidel sweep through the factor (ms).
    pub sweep_ms: Option<f64>,
    /// One LDLᵀ solve with one right-hand side (ms): the paper's per-iteration unbuilt cost.
    pub solve_ms: f64,
    /// Flops of the dense method, `4 nnz(L) c` (Gflop).
    pub dense_gflop: f64,
    /// Flops of the isodof method: path solves plus `S̄ᵀD⁻¹S̄` over the reach (Gflop).
    pub isodof_gflop: f64,
    /// Device rows: the counters of one timed build (`docs/gpu.md`,
    /// "Counters"); `null` on the CPU.
    pub device_counters: Option<ferrofem::device::DeviceCounters>,
    /// Machine context.
    pub context: Context,
}

/// One record: a (scene, guess, preconditioner, iteration cap) case.
#[derive(Debug, Clone, Serialize)]
pub struct EarlyTerminationRecord {
    /// `fig3` (one cut step from a converged state) or `table1` (whole runs).
    pub experiment: &'static str,
    /// Scene template.
    pub scene: String,
    /// Vertices over all bodies.
    pub vertices: usize,
    /// `zero`, `previous_velocity` or `explicit`.
    pub initial_guess: &'static str,
    /// `identity`, `mass`, `jacobi` or `ldlt` (factor of a matrix up to 4 steps old).
    pub preconditioner: &'static str,
    /// PCG iterations per step (`None`: to convergence, 1e-10).
    pub iterations: Option<usize>,
    /// fig3: kinetic energy after the cut step (J); table1: after 1 s.
    pub kinetic_energy: f64,
    /// The same with PCG converged (J).
    pub converged_kinetic_energy: f64,
    /// table1: steps timed (fewer than the run's when it stopped; `None`
    /// in fig3).
    pub steps: Option<usize>,
    /// table1: median step time (ms) over the compared run (over the steps
    /// before the stop, when it stopped).
    pub step_ms_median: Option<f64>,
    /// table1: median PCG solve per step (ms; the free-motion stage, dahl2019's timed column).
    pub solve_ms_median: Option<f64>,
    /// table1: mean PCG iterations per step.
    pub cg_iterations_mean: Option<f64>,
    /// table1: largest vertex distance at the end from the converged run, % of the body size.
    pub position_error_max_pct: Option<f64>,
    /// Why the case stopped (a blow-up, constraints it could not hold), if it did.
    pub failed: Option<String>,
    /// Machine context.
    pub context: Context,
}

/// Writes JSON to a file, making its folder when missing.
pub fn write_json(path: &Path, value: &impl serde::Serialize) -> Result<(), BenchError> {
    let text = serde_json::to_string_pretty(value).map_err(|e| BenchError::Other(e.to_string()))?;
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty() && !d.exists()) {
        std::fs::create_dir_all(dir).map_err(|e| BenchError::Io(dir.to_path_buf(), e))?;
    }
    std::fs::write(path, text).map_err(|e| BenchError::Io(path.to_path_buf(), e))
}

/// One case of `bench scale` at one size.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ScaleRecord {
    /// Case name.
    pub case: String,
    /// Integrator (`implicit-euler` or `local-global`).
    pub integrator: String,
    /// Vertices asked for.
    pub target: usize,
    /// Vertices of the mesh that ran.
    pub vertices: usize,
    /// Timed steps.
    pub steps: usize,
    /// Median step time (ms).
    pub step_ms_median: f64,
    /// 90th-percentile step time (ms).
    pub step_ms_p90: f64,
    /// Median per stage (ms).
    pub stage_ms_median: StageTimes,
    /// Most contacts in a timed step.
    pub contacts_max: usize,
    /// Deepest penetration seen (m).
    pub max_penetration: f64,
    /// Peak resident memory of the process that ran it (MB, `VmHWM`).
    pub peak_mb: f64,
    /// Worker threads.
    pub threads: usize,
}
