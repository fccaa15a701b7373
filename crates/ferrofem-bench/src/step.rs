//! `ferrofem bench …`: headless runs that write JSON records
//! (docs/benchmarks.md). Every record carries threads, CPU time and load.

use std::path::PathBuf;
use std::time::Instant;

use clap::Args;
use serde::Serialize;

use ferrofem::scene::{builtin, MeshSpec, Scene};
use ferrofem::stats::{median_p90, Stage, StageTimes, Summary};

use crate::accuracy::{accuracy, Accuracy};
use crate::bandwidth::copy_bandwidth_gbs;
use crate::records::write_json;
use crate::sysinfo::{cpu_time_s, Context};
use crate::BenchError;

/// Arguments of `bench step`.
#[derive(Debug, Args)]
pub struct StepArgs {
    /// Scene file or built-in name (default: a generated beam of ≈20k
    /// vertices, 10 Jacobi-PCG iterations per step).
    pub scene: Option<String>,
    /// Steps to time (after 2 warm-up steps).
    #[arg(long)]
    pub steps: Option<usize>,
    /// Small case (≈2.5k-vertex beam) that finishes in seconds.
    #[arg(long)]
    pub quick: bool,
    /// Write the records as JSON.
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Also run the scene beside its tight-tolerance reference and report
    /// the position error, penetration and energy drift after `--reference-time`.
    #[arg(long)]
    pub reference: bool,
    /// Simulated seconds of the `--reference` comparison.
    #[arg(long, default_value_t = 1.0, allow_negative_numbers = true)]
    pub reference_time: f64,
}

/// One `bench step` record.
#[derive(Debug, Serialize)]
pub struct StepRecord {
    /// Scene name.
    pub scene: String,
    /// Vertices over all bodies.
    pub vertices: usize,
    /// Degrees of freedom over all bodies.
    pub dofs: usize,
    /// Tetrahedra over all bodies.
    pub tets: usize,
    /// Timed steps.
    pub steps: usize,
    /// Median step time (ms).
    pub step_ms_median: f64,
    /// 90th-percentile step time (ms).
    pub step_ms_p90: f64,
    /// Median per stage (ms).
    pub stage_ms_median: StageTimes,
    /// Median PCG iterations per step.
    pub cg_iterations_median: f64,
    /// Median contacts per step.
    pub contacts: f64,
    /// Median PGS sweeps per step.
    pub pgs_iterations_median: f64,
    /// Stored entries of the first body's system matrix.
    pub nnz: usize,
    /// Median time of one SpMV with that matrix (ms).
    pub spmv_ms_median: f64,
    /// Bytes one SpMV streams at least (values, indices, vectors).
    pub spmv_bytes: usize,
    /// Achieved SpMV bandwidth (GB/s).
    pub spmv_gbs: f64,
    /// Copy bandwidth measured in the same run (GB/s, read + write).
    pub copy_gbs: f64,
    /// `spmv_gbs / copy_gbs`.
    pub spmv_fraction_of_copy: f64,
    /// With `--reference`: the error this scene's settings cost against tight tolerances.
    pub accuracy: Option<Accuracy>,
    /// Machine context.
    pub context: Context,
}

/// `bench step`'s default case: the beam of `benchmarks/scenes/bench-beam.toml`
/// with `cells` cubic cells of 5 cm, clamped at its -x end.
fn beam_scene(cells: [usize; 3]) -> Result<Scene, BenchError> {
    let mut scene = crate::scenes::template("bench-beam")?;
    let size = cells.map(|c| c as f64 * 0.05);
    let spec = &mut scene.spec;
    spec.simulation.name = Some(format!("bench-beam-{}", (cells[0] + 1) * (cells[1] + 1) * (cells[2] + 1)));
    spec.bodies[0].mesh = MeshSpec::Box { size, cells };
    if let Some(b) = spec.bodies[0].fixed[0].bbox.as_mut() {
        b.max[0] = -size[0] / 2.0 + 1e-6;
    }
    Ok(scene)
}

/// Runs `bench step`.
pub fn bench_step(a: StepArgs) -> Result<(), BenchError> {
    if a.reference && !(a.reference_time.is_finite() && a.reference_time > 0.0) {
        return Err(BenchError::Other(format!(
            "--reference-time {} must be a finite, positive number of seconds",
            a.reference_time
        )));
    }
    let scene = match &a.scene {
        Some(s) => builtin::load(s)?,
        None => beam_scene(if a.quick { [39, 7, 7] } else { [79, 15, 15] })?,
    };
    let steps = a.steps.unwrap_or(if a.quick { 10 } else { 30 });
    let mut world = scene.build_on(ferrofem_gpu::backend())?;
    for _ in 0..2 {
        world.step()?;
    }
    let cpu0 = cpu_time_s();
    let records: Vec<_> = (0..steps).map(|_| world.step()).collect::<Result<_, _>>()?;
    let summary = Summary::of(&records);
    let a0 = crate::scenes::system_matrix(&world)?;
    let x = vec![1.0; a0.nrows()];
    let mut y = vec![0.0; a0.nrows()];
    let mut spmv: Vec<f64> = (0..30)
        .map(|_| {
            let t = Instant::now();
            a0.mul_vec(&x, &mut y);
            t.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    let (spmv_ms, _) = median_p90(&mut spmv);
    let copy_gbs = copy_bandwidth_gbs(256 << 20, 7);
    let spmv_gbs = a0.spmv_bytes() as f64 / (spmv_ms * 1e-3) / 1e9;
    let mut its: Vec<f64> = records.iter().map(|r| r.cg_iterations as f64).collect();
    let mut ctx = Context::now();
    if let (Some(c0), Some(c1)) = (cpu0, ctx.cpu_time_s) {
        ctx.cpu_time_s = Some(c1 - c0);
    }
    let rec = StepRecord {
        scene: scene.name(),
        vertices: world.model.bodies.iter().map(|b| b.vertex_count()).sum(),
        dofs: world.model.bodies.iter().map(|b| b.dofs()).sum(),
        tets: world.model.bodies.iter().map(|b| b.tets.len()).sum(),
        steps,
        step_ms_median: summary.step_ms_median,
        step_ms_p90: summary.step_ms_p90,
        stage_ms_median: summary.stage_ms_median,
        cg_iterations_median: median_p90(&mut its).0,
        contacts: median_p90(&mut records.iter().map(|r| r.contacts as f64).collect::<Vec<_>>()).0,
        pgs_iterations_median: summary.pgs_iterations_median,
        nnz: a0.pattern.nnz(),
        spmv_ms_median: spmv_ms,
        spmv_bytes: a0.spmv_bytes(),
        spmv_gbs,
        copy_gbs,
        spmv_fraction_of_copy: spmv_gbs / copy_gbs,
        accuracy: None,
        context: ctx,
    };
    print_step(&rec);
    let rec =
        StepRecord { accuracy: a.reference.then(|| accuracy(&scene, a.reference_time)).transpose()?, ..rec };
    if let Some(acc) = &rec.accuracy {
        print_accuracy(acc);
    }
    if let Some(p) = &a.json {
        write_json(p, &[&rec])?;
    }
    Ok(())
}

fn print_accuracy(a: &Accuracy) {
    println!(
        "\nagainst the reference after {:.2} s ({} steps): position error max {:.3e} m ({:.3} %), rms {:.3e} m ({:.3} %) of {:.3} m; \
         penetration {:.2e} m (reference {:.2e} m); energy drift {:+.3} %",
        a.simulated_s,
        a.steps,
        a.position_error_max_m,
        a.position_error_max_pct,
        a.position_error_rms_m,
        a.position_error_rms_pct,
        a.body_size_m,
        a.max_penetration_m,
        a.reference_max_penetration_m,
        a.energy_drift_pct
    );
}

fn print_step(r: &StepRecord) {
    println!("| scene | vertices | DOFs | step ms | assemble ms | free_motion ms | integrate ms | CG it. | SpMV ms | SpMV GB/s | copy GB/s | SpMV/copy | threads | load |");
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    let load = r.context.load_average.map(|l| format!("{:.2}", l[0])).unwrap_or_else(|| "?".into());
    println!(
        "| {} | {} | {} | {:.2} | {:.2} | {:.2} | {:.2} | {} | {:.3} | {:.2} | {:.2} | {:.0}% | {} | {} |",
        r.scene,
        r.vertices,
        r.dofs,
        r.step_ms_median,
        r.stage_ms_median.get(Stage::Assemble),
        r.stage_ms_median.get(Stage::FreeMotion),
        r.stage_ms_median.get(Stage::Integrate),
        r.cg_iterations_median,
        r.spmv_ms_median,
        r.spmv_gbs,
        r.copy_gbs,
        100.0 * r.spmv_fraction_of_copy,
        r.context.threads,
        load
    );
    println!(
        "SpMV/copy: the SpMV's bandwidth (its matrix and vectors' bytes over its time) against a \
         parallel copy's on this machine; above 100 % where the matrix or vectors stay in cache \
         between products, which a copy of the same size does not (docs/benchmarks.md)."
    );
}
