//! The local-global benchmark cases shared by `bench local-global`'s
//! experiments (`local_global`, `lg_acceleration`): the scenes, built
//! worlds, and a row's record and frame timing.

use ferrofem::integrator::local_global::{Chebyshev, GlobalStepMethod};
use ferrofem::integrator::LocalGlobal;
use ferrofem::scene::{MeshSpec, Scene};
use ferrofem::stats::{median_p90, Stage};
use ferrofem::World;

use crate::lg_contact::worst_counters;
use crate::records::LocalGlobalRecord;
use crate::scenes::template;
use crate::sysinfo::Context;
use crate::BenchError;

/// zeng2025's twisting bar (`benchmarks/scenes/lg-bar.toml`) with `cells`,
/// Young's modulus, a global-step method (`auto`, `sparse-inverse`,
/// `triangular`, `jacobi`, or `jacobi-chebyshev`: Jacobi with Chebyshev
/// acceleration, ρ = 0.9992, γ = 0.9) and iterations per frame.
pub(crate) fn bar(
    cells: [usize; 3],
    young: f64,
    method: &str,
    iterations: usize,
) -> Result<Scene, BenchError> {
    let mut scene = template("lg-bar")?;
    let s = &mut scene.spec;
    s.local_global.iterations = iterations;
    s.local_global.global_step = match method.trim_end_matches("-chebyshev") {
        "jacobi" => GlobalStepMethod::Jacobi,
        "triangular" => GlobalStepMethod::Triangular,
        "sparse-inverse" => GlobalStepMethod::SparseInverse,
        _ => GlobalStepMethod::Auto,
    };
    if method == "jacobi-chebyshev" {
        s.local_global.chebyshev = Some(Chebyshev { rho: 0.9992, gamma: 0.9, ..Default::default() });
    }
    s.bodies[0].mesh = MeshSpec::Box { size: [2.0, 1.0, 1.0], cells };
    s.bodies[0].material.young = young;
    Ok(scene)
}

/// `scene` with the sparse-inverse global step: for the rows that measure `S`.
pub(crate) fn storing_s(scene: Result<Scene, BenchError>) -> Result<Scene, BenchError> {
    let mut scene = scene?;
    scene.spec.local_global.global_step = GlobalStepMethod::SparseInverse;
    Ok(scene)
}

pub(crate) fn build(scene: Result<Scene, BenchError>) -> Result<World, BenchError> {
    let scene = scene?;
    let w = scene.build_on(ferrofem_gpu::backend())?;
    match w.local_global() {
        Some(_) => Ok(w),
        None => Err(BenchError::Other(format!("{}: not a local-global scene", scene.label))),
    }
}

/// The local-global integrator of a world [`build`] made.
pub(crate) fn lg(w: &World) -> &LocalGlobal {
    w.local_global().expect("built as a local-global world")
}

/// A record with the static figures of a world (sizes, memory).
pub(crate) fn record(experiment: &'static str, scene: &str, w: &World, copy_gbs: f64) -> LocalGlobalRecord {
    let body = &w.model.bodies[0];
    let g = lg(w).global_solver(0);
    let n = body.vertex_count();
    let (s_bytes, nnz) = g.sparse_inverse().map_or((0, 0), |s| (s.stream_bytes(), s.nnz()));
    LocalGlobalRecord {
        experiment,
        scene: scene.to_string(),
        vertices: n,
        elements: body.elements(),
        constitutive: body.constitutive.name(),
        young: 0.0,
        global_method: g.method.name().to_string(),
        iterations: lg(w).settings.iterations,
        local_ms: 0.0,
        global_ms: 0.0,
        frame_ms: 0.0,
        s_bytes,
        s_bytes_3n: 8 * 3 * nnz,
        dense_inverse_bytes: 8 * 9 * n * n,
        rel_error: None,
        errors: Vec::new(),
        acceleration: lg(w).settings.acceleration.name(),
        iterations_to_1e3: None,
        iteration_ms: None,
        global_gbs: None,
        copy_gbs,
        paper: None,
        device: if lg(w).device_adapter().is_some() { "gpu" } else { "cpu" },
        adapter: lg(w).device_adapter().map(String::from),
        device_counters: None,
        context: Context::now(),
    }
}

/// Times `frames` frames after 2 warm-up frames: medians per iteration.
pub(crate) fn time_frames(w: &mut World, frames: usize, r: &mut LocalGlobalRecord) -> Result<(), BenchError> {
    for _ in 0..2 {
        w.step()?;
    }
    let k = lg(w).settings.iterations as f64;
    let (mut local, mut global, mut frame) = (Vec::new(), Vec::new(), Vec::new());
    let (mut resident, mut device_ms) = (false, Vec::new());
    for _ in 0..frames.max(1) {
        let s = w.step()?;
        local.push(s.stage_ms.get(Stage::LocalStep) / k);
        global.push(s.stage_ms.get(Stage::GlobalStep) / k);
        frame.push(s.step_ms);
        r.device_counters = worst_counters(r.device_counters, &s);
        resident |= s.device.is_some_and(|d| d.resident_frame);
        device_ms.extend(s.device.map(|d| d.counters.device_ns as f64 / 1e6).filter(|&t| t > 0.0));
    }
    r.local_ms = median_p90(&mut local).0;
    r.global_ms = median_p90(&mut global).0;
    r.frame_ms = median_p90(&mut frame).0;
    let g = lg(w).global_solver(0);
    // On the device: its two CSR layouts of S and the vectors; on the CPU:
    // two passes over S (sparse inverse) or over the factor (triangular),
    // plus b, x and the intermediate vectors (~6 × 3n doubles).
    let vectors = 6 * 8 * w.model.bodies[0].dofs();
    let cpu =
        g.sparse_inverse().map(|s| 2 * s.stream_bytes()).or_else(|| g.factor().map(|f| 2 * f.sweep_bytes()));
    // A resident frame's global step holds its local steps: there the
    // SpMVs' bytes of the frame over the device's own time of it (its
    // timestamps), when the adapter writes them.
    let bytes = g.device_bytes().or(cpu.map(|b| b + vectors));
    r.global_gbs = match (bytes, resident) {
        (Some(b), false) => Some(b as f64 / (r.global_ms * 1e-3) / 1e9),
        (Some(b), true) if !device_ms.is_empty() => {
            Some(k * b as f64 / (median_p90(&mut device_ms).0 * 1e-3) / 1e9)
        }
        _ => None,
    };
    Ok(())
}

pub(crate) const BAR_5K: [usize; 3] = [26, 13, 13];
