//! `ferrofem run`.

use std::path::{Path, PathBuf};
use std::time::Instant;

use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};

use ferrofem::output::FrameWriter;
use ferrofem::scene::Scene;
use ferrofem::stats::{StepStats, Summary};
use ferrofem::World;

use crate::report::{bodies, sliver_warnings, stage_table, StatsFile};
use crate::CliError;
use ferrofem::scene::builtin;
use ferrofem_bench::sysinfo::Context;
use ferrofem_bench::write_json;

/// Arguments of `ferrofem run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// Scene file, or the name of a built-in scene (see `ferrofem scenes`).
    pub scene: String,
    /// Number of steps (default: the scene's `simulation.steps`).
    #[arg(long)]
    pub steps: Option<usize>,
    /// Output folder for `.vtu` frames and `.pvd` series (default: `out/<scene>`).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Write no frames.
    #[arg(long, conflicts_with = "out")]
    pub no_output: bool,
    /// Write per-step statistics as JSON (docs/stats.md).
    #[arg(long)]
    pub stats: Option<PathBuf>,
    /// Where the local-global global step runs (default: the scene's
    /// `simulation.device`); see docs/gpu.md.
    #[arg(long, value_parser = ["cpu", "gpu"])]
    pub device: Option<String>,
}

/// The GPU adapter a world computes on, when its scene asked for one.
fn gpu_adapter(sim: &World) -> Option<String> {
    let backend = sim.model.backend.as_ref().filter(|_| sim.model.device == ferrofem::Device::Gpu)?;
    backend.adapter().ok()
}

/// The device a `--device` value names.
pub fn parse_device(name: &str) -> ferrofem::Device {
    match name {
        "gpu" => ferrofem::Device::Gpu,
        _ => ferrofem::Device::Cpu,
    }
}

/// Runs a scene to the end or to the first error. The stats path and the
/// output folder are checked before the scene is built; the stats file is
/// rewritten every few seconds and once more at the end, so a run that
/// fails at step N (a blow-up, a frame that cannot be written) keeps the
/// records of steps 1…N−1.
pub fn run(args: RunArgs) -> Result<(), CliError> {
    let mut scene = builtin::load(&args.scene)?;
    if let Some(note) =
        args.device.as_deref().map(|d| scene.set_device(parse_device(d))).transpose()?.flatten()
    {
        eprintln!("{note}");
    }
    let out_dir = (!args.no_output)
        .then(|| args.out.clone().unwrap_or_else(|| PathBuf::from("out").join(scene.name())));
    if let Some(path) = &args.stats {
        check_writable(path)?;
    }
    let mut sim = scene.build_on(ferrofem_gpu::backend())?;
    let mut writer = out_dir.map(|dir| FrameWriter::new(&dir, &sim)).transpose()?;
    let steps = args.steps.unwrap_or(scene.spec.simulation.steps);
    let every = scene.spec.simulation.output_every;
    announce(&scene, &sim, steps);
    let mut stats = args.stats.as_ref().map(|path| StatsStream::new(path));
    let mut records: Vec<StepStats> = Vec::new();
    let mut error = writer.as_mut().and_then(|w| w.write(&sim).err());
    let bar = progress_bar(steps);
    for _ in 0..steps {
        if error.is_some() {
            break;
        }
        match sim.step() {
            Ok(s) => {
                bar.set_message(progress_message(&s));
                if let Some(v) =
                    s.violation.as_ref().filter(|_| records.iter().all(|r| r.violation.is_none()))
                {
                    bar.suspend(|| eprintln!("warning: step {}: {v}", s.step));
                }
                records.push(s);
            }
            Err(e) => error = Some(e),
        }
        if let (Some(w), None) = (writer.as_mut(), &error) {
            if sim.state.step % every == 0 {
                error = w.write(&sim).err();
            }
        }
        if let Some(stream) = stats.as_mut() {
            stream.every_few_seconds(&scene, &sim, &records)?;
        }
        bar.inc(1);
    }
    bar.finish_and_clear();
    if let Some(stream) = stats.as_mut() {
        stream.write(&scene, &sim, &records, error.as_ref().map(|e| e.to_string()))?;
    }
    report(&records, writer.as_ref());
    match error {
        Some(e) => Err(e.into()),
        None => Ok(()),
    }
}

/// The run's first lines: the scene's size, integrator, step and
/// threads; sliver warnings; the GPU adapter when one runs stages.
fn announce(scene: &Scene, sim: &World, steps: usize) {
    let infos = bodies(sim);
    let dofs: usize = infos.iter().map(|b| 3 * b.vertices).sum();
    eprintln!(
        "{}: {} bodies, {dofs} DOFs, {}, h = {} s, {steps} steps, {} threads",
        scene.name(),
        infos.len(),
        sim.integrator.name(),
        sim.model.time_step,
        rayon::current_num_threads()
    );
    for warning in sliver_warnings(sim) {
        eprintln!("warning: {warning}");
    }
    if let Some(adapter) = gpu_adapter(sim) {
        let stage = match sim.local_global().is_some() {
            true => "global step, Newton constraint solve and correction",
            false => "W̄ by isodof",
        };
        eprintln!("{stage} on the GPU: {adapter}");
    }
}

/// The progress bar's message after a step: its time and iterations.
fn progress_message(s: &StepStats) -> String {
    match s.local_global_iterations > 0 {
        true => format!("{:.1} ms/step, {} L-G it.", s.step_ms, s.local_global_iterations),
        false => format!("{:.1} ms/step, {} CG it.", s.step_ms, s.cg_iterations),
    }
}

/// The run's last lines: the time per stage, the violations, the files.
fn report(records: &[StepStats], writer: Option<&FrameWriter>) {
    let summary = Summary::of(records);
    eprintln!("{}", stage_table(&summary));
    if summary.violations > 0 {
        eprintln!(
            "warning: {} of {} steps penetrated deeper than [contact] max_penetration or inverted elements; first: {}",
            summary.violations,
            summary.steps,
            summary.first_violation.as_deref().unwrap_or("")
        );
    }
    if let Some(w) = writer {
        for p in w.series_paths() {
            eprintln!("wrote {} ({} frames)", p.display(), w.frames());
        }
    }
}

fn progress_bar(steps: usize) -> ProgressBar {
    ProgressBar::new(steps as u64).with_style(
        ProgressStyle::with_template("{bar:40} {pos}/{len} steps  {elapsed_precise} (eta {eta})  {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    )
}

/// Fails now, before any step, if `path` cannot be created or written; a
/// file made only to find out is removed again.
fn check_writable(path: &Path) -> Result<(), CliError> {
    let existed = path.exists();
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_err(|e| CliError::Io(path.to_path_buf(), e))?;
    if !existed {
        let _ = std::fs::remove_file(path);
    }
    Ok(())
}

/// The stats file of a run in progress: rewritten whole (to a temporary
/// file, then renamed over it) at most every few seconds and at the end.
struct StatsStream {
    path: PathBuf,
    last: Instant,
    /// Seconds between rewrites: at least 2, and 20× the last rewrite's
    /// own time, so that rewriting never costs more than 5 % of the run.
    period: f64,
}

impl StatsStream {
    fn new(path: &Path) -> StatsStream {
        StatsStream { path: path.to_path_buf(), last: Instant::now(), period: 2.0 }
    }

    fn every_few_seconds(
        &mut self,
        scene: &Scene,
        sim: &World,
        records: &[StepStats],
    ) -> Result<(), CliError> {
        if self.last.elapsed().as_secs_f64() < self.period {
            return Ok(());
        }
        self.write(scene, sim, records, Some(IN_PROGRESS.into()))
    }

    fn write(
        &mut self,
        scene: &Scene,
        sim: &World,
        records: &[StepStats],
        error: Option<String>,
    ) -> Result<(), CliError> {
        let start = Instant::now();
        let file = StatsFile {
            format: 1,
            scene: scene.name(),
            time_step: sim.model.time_step,
            bodies: bodies(sim),
            context: Context::now(),
            gpu_adapter: gpu_adapter(sim),
            steps: records,
            summary: Summary::of(records),
            error,
        };
        let partial = self.path.with_extension("json.partial");
        write_json(&partial, &file)?;
        std::fs::rename(&partial, &self.path).map_err(|e| CliError::Io(self.path.clone(), e))?;
        self.period = (20.0 * start.elapsed().as_secs_f64()).max(2.0);
        self.last = Instant::now();
        Ok(())
    }
}

/// The `error` of a stats file written while its run goes on.
const IN_PROGRESS: &str = "in progress: the run had not ended when this file was written";
