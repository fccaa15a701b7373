//! `bench early-termination`: dahl2019's study of conjugate gradients
//! stopped after a few iterations, on our scenes. Figs. 3–4: the kinetic
//! energy after one step whose PCG is cut at k iterations, from the same
//! converged state, per initial guess and preconditioner. Table 1: whole
//! runs cut at k iterations per step, their step time and their error
//! against the tight-tolerance reference after 1 s (`bench step
//! --reference`).

use std::path::PathBuf;

use clap::Args;

use ferrofem::integrator::{ImplicitEulerSettings, InitialGuess, PreconditionerKind, Refresh};
use ferrofem::scene::Scene;
use ferrofem::stats::{Stage, Summary};
use ferrofem::World;

use crate::records::write_json;
pub use crate::records::EarlyTerminationRecord;
use crate::sysinfo::Context;
use crate::{scenes, BenchError};

/// Arguments of `bench early-termination`.
#[derive(Debug, Args)]
pub struct EarlyTerminationArgs {
    /// Fewer iteration counts and 0.2 s runs instead of 1 s (a few minutes).
    #[arg(long)]
    pub quick: bool,
    /// Write the records as JSON.
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Folder for the PNG figures (`et-fig3-<scene>.png`, `et-fig4-<scene>.png`).
    #[arg(long)]
    pub plots: Option<PathBuf>,
}

const GUESSES: [(InitialGuess, &str); 3] = [
    (InitialGuess::Zero, "zero"),
    (InitialGuess::PreviousVelocity, "previous_velocity"),
    (InitialGuess::Explicit, "explicit"),
];

const PRECONDITIONERS: [(PreconditionerKind, &str); 4] = [
    (PreconditionerKind::Identity, "identity"),
    (PreconditionerKind::Mass, "mass"),
    (PreconditionerKind::Jacobi, "jacobi"),
    (PreconditionerKind::Ldlt, "ldlt"),
];

/// The cut step of Figs. 3–4 is this step of the scene (the bowling ball
/// hits the pin between steps 6 and 8).
const CUT_STEP: usize = 8;

/// A template with the spin's initial velocities set: `v = ω × x`, ω = 10 rad/s about z.
fn world(name: &str, resize: Resize, settings: ImplicitEulerSettings) -> Result<World, BenchError> {
    let mut scene: Scene = scenes::template(name)?;
    resize(&mut scene);
    scene.spec.implicit_euler = settings;
    let mut w = scene.build_on(ferrofem_gpu::backend())?;
    if name == "et-spin" {
        for s in &mut w.state.bodies {
            let x = s.positions.clone();
            for (v, p) in s.velocities.chunks_exact_mut(3).zip(x.chunks_exact(3)) {
                v.copy_from_slice(&[-10.0 * p[1], 10.0 * p[0], 0.0]);
            }
        }
    }
    Ok(w)
}

/// A change to a scene's meshes before it is built (another table's size),
/// or [`AS_IS`].
pub(crate) type Resize = fn(&mut Scene);

/// The scene as its file has it.
pub(crate) const AS_IS: Resize = |_| {};

/// Settings with `guess`, `preconditioner` and a cap of `iterations` (or 1e-10).
fn settings(
    guess: InitialGuess,
    preconditioner: PreconditionerKind,
    iterations: Option<usize>,
) -> ImplicitEulerSettings {
    ImplicitEulerSettings {
        initial_guess: guess,
        preconditioner,
        max_iterations: Some(iterations.unwrap_or(5_000)),
        rel_tolerance: Some(if iterations.is_some() { 0.0 } else { 1e-10 }),
        refresh: Refresh { every: 5, ..Refresh::default() },
        ..ImplicitEulerSettings::default()
    }
}

fn kinetic(w: &World) -> f64 {
    w.model.bodies.iter().zip(&w.state.bodies).map(|(b, s)| s.kinetic_energy(b)).sum()
}

fn vertices(w: &World) -> usize {
    w.model.bodies.iter().map(|b| b.vertex_count()).sum()
}

/// Figs. 3–4: converged steps up to [`CUT_STEP`] − 1, then one step cut at
/// k iterations; its kinetic energy against the converged step's.
fn fig3(name: &str, caps: &[usize], out: &mut Vec<EarlyTerminationRecord>) -> Result<(), BenchError> {
    for (guess, guess_name) in GUESSES {
        for (kind, kind_name) in PRECONDITIONERS {
            let cut = |cap: Option<usize>| -> Result<(f64, usize), BenchError> {
                let mut w = world(name, AS_IS, settings(guess, kind, None))?;
                for _ in 1..CUT_STEP {
                    w.step()?;
                }
                if let Some(ie) = w.implicit_euler_mut() {
                    ie.settings = settings(guess, kind, cap);
                }
                w.step()?;
                Ok((kinetic(&w), vertices(&w)))
            };
            let (converged, n) = cut(None)?;
            for &k in caps {
                let result = cut(Some(k));
                out.push(EarlyTerminationRecord {
                    experiment: "fig3",
                    scene: name.into(),
                    vertices: n,
                    initial_guess: guess_name,
                    preconditioner: kind_name,
                    iterations: Some(k),
                    kinetic_energy: result.as_ref().map_or(f64::NAN, |r| r.0),
                    converged_kinetic_energy: converged,
                    steps: None,
                    step_ms_median: None,
                    solve_ms_median: None,
                    cg_iterations_mean: None,
                    position_error_max_pct: None,
                    failed: result.err().map(|e| e.to_string()),
                    context: Context::now(),
                });
            }
        }
    }
    Ok(())
}

/// Table 1: runs of `seconds` cut at each cap, Jacobi (the paper's) and,
/// with `ldlt`, LDLᵀ, every guess, each against the same run with PCG
/// converged (to 1e-10): step and solve time, position error at the end in
/// % of the body size, and the kinetic energy the cut kept or lost; the
/// scene's meshes changed by `resize` first.
pub(crate) fn table1(
    name: &str,
    resize: Resize,
    caps: &[usize],
    seconds: f64,
    ldlt: bool,
    out: &mut Vec<EarlyTerminationRecord>,
) -> Result<(), BenchError> {
    let table_preconditioners = PRECONDITIONERS
        .into_iter()
        .filter(|(k, _)| *k == PreconditionerKind::Jacobi || ldlt && *k == PreconditionerKind::Ldlt);
    for (guess, guess_name) in GUESSES {
        for (kind, kind_name) in table_preconditioners.clone() {
            let run = |cap| timed_run(name, resize, settings(guess, kind, cap), seconds);
            let (converged, converged_summary) = match run(None)? {
                (w, s, None) => (w, s),
                (_, _, Some(stop)) => return Err(BenchError::Other(format!("{name}, converged: {stop}"))),
            };
            let size = crate::accuracy::body_size(&converged);
            for cap in caps.iter().map(|&k| Some(k)).chain([None]) {
                let result = match cap {
                    Some(_) => run(cap),
                    None => run(None).map(|(w, _, stop)| (w, converged_summary.clone(), stop)),
                };
                // A run that stopped keeps the figures of the steps before the stop.
                let (summary, ran_through) = match &result {
                    Ok((w, s, None)) => (Some(s).filter(|s| s.steps > 0), Some(w)),
                    Ok((_, s, Some(_))) => (Some(s).filter(|s| s.steps > 0), None),
                    Err(_) => (None, None),
                };
                out.push(EarlyTerminationRecord {
                    experiment: "table1",
                    scene: name.into(),
                    vertices: vertices(&converged),
                    initial_guess: guess_name,
                    preconditioner: kind_name,
                    iterations: cap,
                    kinetic_energy: ran_through.map_or(f64::NAN, kinetic),
                    converged_kinetic_energy: kinetic(&converged),
                    steps: summary.map(|s| s.steps),
                    step_ms_median: summary.map(|s| s.step_ms_median),
                    solve_ms_median: summary.map(|s| s.stage_ms_median.get(Stage::FreeMotion)),
                    cg_iterations_mean: summary.map(|s| s.cg_iterations_mean),
                    position_error_max_pct: ran_through
                        .map(|w| 100.0 * crate::accuracy::position_errors(w, &converged).0 / size),
                    failed: match result {
                        Err(e) => Some(e.to_string()),
                        Ok((_, _, stop)) => stop,
                    },
                    context: Context::now(),
                });
            }
        }
    }
    Ok(())
}

/// `seconds` of scene `name` (resized by `resize`) under `settings`: the
/// world, the summary of its steps and, where a step failed, why (the
/// summary then covers the steps before it, as dahl2019 times its runs
/// that go unstable).
fn timed_run(
    name: &str,
    resize: Resize,
    settings: ImplicitEulerSettings,
    seconds: f64,
) -> Result<(World, Summary, Option<String>), BenchError> {
    let mut w = world(name, resize, settings)?;
    let steps = (seconds / w.model.time_step).round() as usize;
    let mut records = Vec::with_capacity(steps);
    for _ in 0..steps {
        match w.step() {
            Ok(r) => records.push(r),
            Err(e) => return Ok((w, Summary::of(&records), Some(e.to_string()))),
        }
    }
    Ok((w, Summary::of(&records), None))
}

/// Runs the study on the bowling and spinning scenes.
pub fn bench_early_termination(a: EarlyTerminationArgs) -> Result<(), BenchError> {
    let (caps, table_caps, seconds): (&[usize], &[usize], f64) = if a.quick {
        (&[1, 2, 5, 10, 20], &[1, 5, 20], 0.2)
    } else {
        (&[1, 2, 3, 5, 7, 10, 15, 20, 30, 50], &[1, 2, 5, 10, 20], 1.0)
    };
    let mut records = Vec::new();
    for name in ["et-bowling", "et-spin"] {
        fig3(name, caps, &mut records)?;
        table1(name, AS_IS, table_caps, seconds, true, &mut records)?;
    }
    print(&records);
    if let Some(dir) = &a.plots {
        crate::plot::early_termination_figures(dir, &records)?;
    }
    if let Some(p) = &a.json {
        write_json(p, &records)?;
    }
    Ok(())
}

/// Fig. 3–4 as rows (kinetic energy per cap, relative to converged), then Table 1.
fn print(records: &[EarlyTerminationRecord]) {
    let caps = |r: &EarlyTerminationRecord| r.iterations.map_or("conv.".into(), |k| k.to_string());
    println!(
        "{:<11} {:<18} {:<9} {:>6} {:>12} {:>10}",
        "scene", "guess", "precond", "CG it", "KE (J)", "KE/conv"
    );
    for r in records.iter().filter(|r| r.experiment == "fig3") {
        println!(
            "{:<11} {:<18} {:<9} {:>6} {:>12.5e} {:>10.4} {}",
            r.scene,
            r.initial_guess,
            r.preconditioner,
            caps(r),
            r.kinetic_energy,
            r.kinetic_energy / r.converged_kinetic_energy,
            r.failed.as_deref().map_or("", |_| "failed")
        );
    }
    println!(
        "\n{:<11} {:<18} {:<9} {:>6} {:>10} {:>12} {:>10}",
        "scene", "guess", "precond", "CG it", "step ms", "pos err %", "KE/conv"
    );
    for r in records.iter().filter(|r| r.experiment == "table1") {
        println!(
            "{:<11} {:<18} {:<9} {:>6} {:>10.2} {:>12.4} {:>10.4} {}",
            r.scene,
            r.initial_guess,
            r.preconditioner,
            caps(r),
            r.step_ms_median.unwrap_or(f64::NAN),
            r.position_error_max_pct.unwrap_or(f64::NAN),
            r.kinetic_energy / r.converged_kinetic_energy,
            r.failed.as_deref().unwrap_or("")
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// dahl2019 §3.2 and Fig. 3 on the spinning slab: one Jacobi-PCG
    /// iteration from `0` loses most of the kinetic energy (artificial
    /// damping), from `v(t)` keeps it within 2 %; the LDLᵀ preconditioner
    /// comes within 2 % from either guess in one iteration.
    #[test]
    fn zero_guess_damps_and_previous_velocity_keeps_the_energy() {
        let mut records = Vec::new();
        fig3("et-spin", &[1], &mut records).unwrap();
        let ratio = |g: &str, p: &str| {
            let r = records.iter().find(|r| r.initial_guess == g && r.preconditioner == p).unwrap();
            r.kinetic_energy / r.converged_kinetic_energy
        };
        assert!(ratio("zero", "jacobi") < 0.6, "{}", ratio("zero", "jacobi"));
        assert!((ratio("previous_velocity", "jacobi") - 1.0).abs() < 0.02);
        for g in ["zero", "previous_velocity"] {
            assert!((ratio(g, "ldlt") - 1.0).abs() < 0.02, "{g}: {}", ratio(g, "ldlt"));
        }
    }
}
