//! `ferrofem run`.

use std::path::PathBuf;

use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};

use ferrofem::output::FrameWriter;
use ferrofem::stats::Summary;

use crate::report::{bodies, stage_table, StatsFile};
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
    /// Output folder for `.vtu` frames and `.pvd` series (default: out/<scene>).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Write no frames.
    #[arg(long, conflicts_with = "out")]
    pub no_output: bool,
    /// Write per-step statistics as JSON (docs/stats.md).
    #[arg(long)]
    pub stats: Option<PathBuf>,
}

/// Runs a scene to the end or to the first error.
pub fn run(args: RunArgs) -> Result<(), CliError> {
    let scene = builtin::load(&args.scene)?;
    let mut sim = scene.build()?;
    let steps = args.steps.unwrap_or(scene.spec.simulation.steps);
    let every = scene.spec.simulation.output_every;
    let mut writer = match (&args.out, args.no_output) {
        (_, true) => None,
        (Some(dir), _) => Some(FrameWriter::new(dir, &sim)?),
        (None, _) => Some(FrameWriter::new(&PathBuf::from("out").join(scene.name()), &sim)?),
    };
    let infos = bodies(&sim);
    let dofs: usize = infos.iter().map(|b| 3 * b.vertices).sum();
    eprintln!(
        "{}: {} bodies, {dofs} DOFs, {}, h = {} s, {steps} steps, {} threads",
        scene.name(),
        infos.len(),
        sim.integrator.name(),
        sim.model.time_step,
        rayon::current_num_threads()
    );
    if let Some(w) = writer.as_mut() {
        w.write(&sim)?;
    }
    let bar = ProgressBar::new(steps as u64).with_style(
        ProgressStyle::with_template("{bar:40} {pos}/{len} steps  {elapsed_precise} (eta {eta})  {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let mut records = Vec::with_capacity(steps);
    let mut error = None;
    for _ in 0..steps {
        match sim.step() {
            Ok(s) => {
                bar.set_message(if s.local_global_iterations > 0 {
                    format!("{:.1} ms/step, {} L-G it.", s.step_ms, s.local_global_iterations)
                } else {
                    format!("{:.1} ms/step, {} CG it.", s.step_ms, s.cg_iterations)
                });
                records.push(s);
            }
            Err(e) => {
                error = Some(e);
                break;
            }
        }
        if let Some(w) = writer.as_mut() {
            if sim.state.step % every == 0 {
                w.write(&sim)?;
            }
        }
        bar.inc(1);
    }
    bar.finish_and_clear();
    let summary = Summary::of(&records);
    if let Some(path) = &args.stats {
        let file = StatsFile {
            format: 1,
            scene: scene.name(),
            time_step: sim.model.time_step,
            bodies: bodies(&sim),
            context: Context::now(),
            steps: &records,
            summary: summary.clone(),
            error: error.as_ref().map(|e| e.to_string()),
        };
        write_json(path, &file)?;
    }
    eprintln!("{}", stage_table(&summary));
    if let Some(w) = &writer {
        for p in w.series_paths() {
            eprintln!("wrote {} ({} frames)", p.display(), w.frames());
        }
    }
    match error {
        Some(e) => Err(e.into()),
        None => Ok(()),
    }
}
