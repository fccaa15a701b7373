//! `bench local-global`'s acceleration rows (issue #17): per acceleration
//! (`none`, `anderson`, `lbfgs`), the cost of an iteration on the 5.3k
//! twisting bar, and on a bending-dominated beam the iterations a frame
//! needs to bring the Fig. 9 error to 1e-3, measured on a frame of a
//! running simulation (so that Anderson's and L-BFGS's histories are what
//! a user's run has).

use ferrofem::integrator::local_global::energy::{energy, StepTarget};
use ferrofem::integrator::local_global::global::factorize;
use ferrofem::integrator::local_global::newton::newton_reference;
use ferrofem::integrator::local_global::{Acceleration, GlobalStepMethod};
use ferrofem::integrator::Integrator;
use ferrofem::World;
use ferrofem_linalg::Ordering;

use crate::lg_cases::{bar, build, lg, record, time_frames, BAR_5K};
use crate::records::LocalGlobalRecord;
use crate::scenes::template;
use crate::BenchError;

const ACCELERATIONS: [Acceleration; 3] = [Acceleration::None, Acceleration::Anderson, Acceleration::Lbfgs];

/// Frames the beam runs before the measured one (`--quick`: fewer).
fn lead_frames(quick: bool) -> usize {
    if quick {
        10
    } else {
        30
    }
}

/// Sets a local-global world's acceleration and iterations.
fn configure(w: &mut World, acceleration: Acceleration, iterations: usize) {
    if let Integrator::LocalGlobal(lg) = &mut w.integrator {
        lg.settings.acceleration = acceleration;
        lg.settings.iterations = iterations;
    }
}

/// The Fig. 9 error after each of `iterations` iterations of `w`'s next
/// frame, against that frame's Newton solution.
fn frame_errors(w: &mut World, iterations: usize) -> Result<Vec<f64>, BenchError> {
    let acceleration = lg(w).settings.acceleration;
    configure(w, acceleration, iterations);
    let mut trace = Vec::new();
    w.step_observed(|_, _, q| trace.push(q.to_vec()))?;
    let body = &w.model.bodies[0];
    let predicted = lg(w).predicted(0).to_vec();
    let pins = lg(w).pins(0).to_vec();
    let at = StepTarget { predicted: &predicted, h: w.model.time_step, t_next: w.state.time, pins: &pins };
    let factor = factorize(&lg(w).global_solver(0).matrix, Ordering::Auto)
        .map_err(|e| BenchError::Other(format!("Newton reference: {e}")))?;
    let mut star = predicted.clone();
    let reference = newton_reference(body, &factor, &mut star, at, 1e-11, 100).energy;
    let e = |q: &[f64]| energy(body, q, at).unwrap_or(f64::NAN);
    let e0 = e(&trace[0]);
    Ok(trace[1..].iter().map(|q| (e(q) - reference) / (e0 - reference)).collect())
}

/// The acceleration rows: `twisting bar` (cost per iteration at 5
/// iterations, triangular global step) and `bending beam` (iterations to
/// 1e-3 after `lead_frames` frames at 10 iterations).
pub fn rows(
    quick: bool,
    frames: usize,
    copy_gbs: f64,
    out: &mut Vec<LocalGlobalRecord>,
) -> Result<(), BenchError> {
    for acceleration in ACCELERATIONS {
        let mut scene = bar(BAR_5K, 1e9, "triangular", 5)?;
        scene.spec.local_global.acceleration = acceleration;
        let mut w = build(Ok(scene))?;
        let mut r = record("acceleration", "twisting bar", &w, copy_gbs);
        r.young = 1e9;
        time_frames(&mut w, frames, &mut r)?;
        r.iteration_ms = Some(r.frame_ms / 5.0);
        out.push(r);
    }
    for acceleration in ACCELERATIONS {
        let mut scene = template("lg-beam")?;
        scene.spec.local_global.acceleration = acceleration;
        scene.spec.local_global.global_step = GlobalStepMethod::Triangular;
        let mut w = scene.build_on(ferrofem_gpu::backend())?;
        for _ in 0..lead_frames(quick) {
            w.step()?;
        }
        let mut r = record("acceleration", "bending beam", &w, copy_gbs);
        r.young = 1e7;
        let errors = frame_errors(&mut w, 60)?;
        r.iterations_to_1e3 = errors.iter().position(|e| e.abs() <= 1e-3).map(|k| k + 1);
        r.rel_error = errors.get(9).copied();
        r.errors = errors;
        configure(&mut w, acceleration, 10);
        time_frames(&mut w, frames, &mut r)?;
        r.iteration_ms = Some(r.frame_ms / 10.0);
        out.push(r);
    }
    Ok(())
}
