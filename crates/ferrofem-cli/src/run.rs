//! `ferrofem run`.

use std::path::{Path, PathBuf};

use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};

use ferrofem::output::{FrameWriter, UsdField, UsdWriter};
use ferrofem::scene::Scene;
use ferrofem::stats::{StepStats, Summary, SummaryBuilder};
use ferrofem::{SimError, World};

use crate::report::{bodies, sliver_warnings, stage_table};
use crate::stats_stream::StatsStream;
use crate::CliError;
use ferrofem::scene::builtin;

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
    /// Stream per-step statistics as JSON Lines to this file, or to
    /// standard output for `-` (docs/stats.md).
    #[arg(long)]
    pub stats: Option<PathBuf>,
    /// Where the local-global global step runs (default: the scene's
    /// `simulation.device`); see docs/gpu.md.
    #[arg(long, value_parser = ["cpu", "gpu"])]
    pub device: Option<String>,
    /// Output format: ParaView frames (`vtu`: `.vtu` + `.pvd` per body) or
    /// one USD stage (`usd`: `<out>/<scene>.usda`, docs/cli.md).
    #[arg(long, default_value = "vtu", value_parser = ["vtu", "usd"])]
    pub format: String,
    /// The field that colours the bodies in USD output.
    #[arg(long, default_value = "displacement", value_parser = ["displacement", "speed", "contact_force"])]
    pub field: String,
}

/// Where the frames go: ParaView series, or a USD stage written at the end.
enum Output {
    Vtu(FrameWriter),
    Usd(UsdWriter),
}

impl Output {
    /// The writer `args` asks for, into `dir`.
    fn new(args: &RunArgs, dir: &Path, scene: &Scene, sim: &World) -> Result<Output, SimError> {
        match args.format.as_str() {
            "usd" => {
                let path = dir.join(format!("{}.usda", scene.name()));
                Ok(Output::Usd(UsdWriter::new(&path, UsdField::named(&args.field)?)?))
            }
            _ => Ok(Output::Vtu(FrameWriter::new(dir, sim)?)),
        }
    }

    /// The world's current state as the next frame.
    fn write(&mut self, sim: &World) -> Result<(), SimError> {
        match self {
            Output::Vtu(w) => w.write(sim),
            Output::Usd(w) => {
                w.push(sim);
                Ok(())
            }
        }
    }

    /// Writes what is kept for the end (the USD stage).
    fn finish(&self, sim: &World) -> Result<(), SimError> {
        match self {
            Output::Vtu(_) => Ok(()),
            Output::Usd(w) => w.finish(sim),
        }
    }

    /// Frames written so far, and the files that hold them.
    fn written(&self) -> (usize, Vec<PathBuf>) {
        match self {
            Output::Vtu(w) => (w.frames(), w.series_paths()),
            Output::Usd(w) => (w.frames(), vec![w.path().to_path_buf()]),
        }
    }
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

/// Runs a scene to the end or to the first error. The stats file and the
/// output folder are checked before the scene is built; the stats are
/// streamed as the run goes (one line per step), so a run that fails at
/// step N (a blow-up, a frame that cannot be written) keeps the records of
/// steps 1…N−1, and memory does not grow with the number of steps.
pub fn run(args: RunArgs) -> Result<(), CliError> {
    let mut scene = builtin::load(&args.scene)?;
    if let Some(note) =
        args.device.as_deref().map(|d| scene.set_device(parse_device(d))).transpose()?.flatten()
    {
        eprintln!("{note}");
    }
    let out_dir = (!args.no_output)
        .then(|| args.out.clone().unwrap_or_else(|| PathBuf::from("out").join(scene.name())));
    if let Some(dir) = out_dir.as_deref() {
        if dir.exists() && !dir.is_dir() {
            return Err(CliError::Other(format!("--out {}: exists and is not a folder", dir.display())));
        }
        // Made now, so that `--stats` may name a file in it.
        std::fs::create_dir_all(dir).map_err(|e| CliError::Other(format!("--out {}: {e}", dir.display())))?;
    }
    let mut stats = args.stats.as_deref().map(StatsStream::open).transpose()?;
    let mut sim = scene.build_on(ferrofem_gpu::backend())?;
    let out = |e| out_error(out_dir.as_deref(), e);
    let mut writer =
        out_dir.as_deref().map(|dir| Output::new(&args, dir, &scene, &sim)).transpose().map_err(out)?;
    let steps = args.steps.unwrap_or(scene.spec.simulation.steps);
    let every = scene.spec.simulation.output_every;
    announce(&scene, &sim, steps);
    if let Some(stream) = stats.as_mut() {
        stream.header(&scene, &sim, gpu_adapter(&sim))?;
    }
    let mut summary = SummaryBuilder::default();
    let mut error = writer.as_mut().and_then(|w| w.write(&sim).err());
    let bar = progress_bar(steps);
    for _ in 0..steps {
        if error.is_some() {
            break;
        }
        match sim.step() {
            Ok(s) => {
                bar.set_message(progress_message(&s));
                if let Some(v) = s.violation.as_ref().filter(|_| summary.violations() == 0) {
                    bar.suspend(|| eprintln!("warning: step {}: {v}", s.step));
                }
                if let Some(stream) = stats.as_mut() {
                    stream.step(&s)?;
                }
                summary.add(&s);
            }
            Err(e) => error = Some(e),
        }
        if let (Some(w), None) = (writer.as_mut(), &error) {
            if sim.state.step % every == 0 {
                error = w.write(&sim).err();
            }
        }
        bar.inc(1);
    }
    bar.finish_and_clear();
    if let Some(Err(e)) = writer.as_ref().map(|w| w.finish(&sim)) {
        error = error.or(Some(e));
    }
    let summary = summary.summary();
    if let Some(stream) = stats.as_mut() {
        stream.finish(summary.clone(), error.as_ref().map(|e| e.to_string()))?;
    }
    report(&summary, writer.as_ref());
    match error {
        Some(e @ SimError::Output(_)) => Err(out(e)),
        Some(e) => Err(e.into()),
        None => Ok(()),
    }
}

/// A frame that could not be written, named with `--out`.
fn out_error(dir: Option<&Path>, e: SimError) -> CliError {
    let dir = dir.map_or(String::new(), |d| d.display().to_string());
    CliError::Other(format!("--out {dir}: {e}"))
}

/// The run's first lines: the scene's size, integrator (with the
/// local-global step's method), step and threads; sliver warnings; the
/// GPU adapter when one runs stages.
fn announce(scene: &Scene, sim: &World, steps: usize) {
    let infos = bodies(sim);
    let dofs: usize = infos.iter().map(|b| 3 * b.vertices).sum();
    let mut methods: Vec<&str> = infos.iter().filter_map(|b| b.global_step).collect();
    methods.dedup();
    let global = match methods.is_empty() {
        true => String::new(),
        false => format!(" (global step: {})", methods.join(", ")),
    };
    eprintln!(
        "{}: {} bodies, {dofs} DOFs, {}{global}, h = {} s, {steps} steps, {} threads",
        scene.name(),
        infos.len(),
        sim.integrator.name(),
        seconds(sim.model.time_step),
        rayon::current_num_threads()
    );
    for warning in sliver_warnings(sim) {
        eprintln!("warning: {warning}");
    }
    if let Some(adapter) = gpu_adapter(sim) {
        let stage = match sim.local_global().is_some() {
            true => "global step (frames without contact whole, with the local step), Newton constraint solve and correction",
            false => "W̄ by isodof",
        };
        eprintln!("{stage} on the GPU: {adapter}");
    }
}

/// A time in seconds as a reader wants it: `0.01`, but `1e-300`, not 300 digits.
fn seconds(t: f64) -> String {
    match t != 0.0 && !(1e-4..1e6).contains(&t.abs()) {
        true => format!("{t:e}"),
        false => format!("{t}"),
    }
}

/// The progress bar's message after a step: its time and iterations.
fn progress_message(s: &StepStats) -> String {
    match s.local_global_iterations > 0 {
        true => format!("{:.1} ms/step, {} L-G it.", s.step_ms, s.local_global_iterations),
        false => format!("{:.1} ms/step, {} CG it.", s.step_ms, s.cg_iterations),
    }
}

/// The run's last lines: the time per stage, the violations, the files
/// written (a series without a complete frame is not named).
fn report(summary: &Summary, writer: Option<&Output>) {
    eprintln!("{}", stage_table(summary));
    if summary.violations > 0 {
        eprintln!(
            "warning: {} of {} steps were violations (penetration, inverted elements or a solve that did not settle); first: {}",
            summary.violations,
            summary.steps,
            summary.first_violation.as_deref().unwrap_or("")
        );
    }
    for (n, what) in [
        (
            summary.constraint_unconverged,
            "constraint solves stopped at their iteration cap before their tolerance",
        ),
        (
            summary.local_global_unconverged,
            "local-global iterations stopped at `iterations` before their tolerance",
        ),
    ] {
        if n > 0 {
            eprintln!("{n} of {} steps: {what} (see --stats)", summary.steps);
        }
    }
    let Some((frames, paths)) = writer.map(Output::written).filter(|(n, _)| *n > 0) else { return };
    for p in paths.iter().filter(|p| p.exists()) {
        eprintln!("wrote {} ({frames} frames)", p.display());
    }
}

/// The steps' progress bar (its message: the last step's figures).
pub(crate) fn progress_bar(steps: usize) -> ProgressBar {
    ProgressBar::new(steps as u64).with_style(
        ProgressStyle::with_template("{bar:40} {pos}/{len} steps  {elapsed_precise} (eta {eta})  {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    )
}
