//! `ferrofem bench local-global`: the local-global integrator against the
//! paper (zeng2025 §7): memory of `S` (Tables 1–2), per-iteration local and
//! global milliseconds and frame time (Table 3), relative error against a
//! Newton reference (Fig. 9), and the global step's bandwidth against a
//! copy measured in the same run.

use std::path::PathBuf;
use std::time::Instant;

use clap::Args;

use ferrofem::integrator::local_global::energy::{energy, StepTarget};
use ferrofem::integrator::local_global::global::factorize;
use ferrofem::integrator::local_global::newton::newton_reference;
use ferrofem::scene::Scene;
use ferrofem::State;
use ferrofem_linalg::Ordering;

use crate::bandwidth::copy_bandwidth_gbs;
use crate::factor::raptor_cases;
use crate::lg_cases::{bar, build, lg, record, storing_s, time_frames, BAR_5K};
use crate::records::write_json;
pub use crate::records::{LocalGlobalRecord, PaperFigures};
use crate::scenes::template;
use crate::BenchError;
use ferrofem::element::{Bending, BendingModel, Constitutive};
use ferrofem::scene::MeshSpec;
use ferrofem::Device;

/// Arguments of `bench local-global`.
#[derive(Debug, Args)]
pub struct LocalGlobalArgs {
    /// The 5.3k-vertex twisting bar only, every global method, under a minute.
    #[arg(long)]
    pub quick: bool,
    /// Write the records as JSON.
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Folder for the PNG plot (lg-fig9.png).
    #[arg(long)]
    pub plots: Option<PathBuf>,
    /// Folder of external meshes (raptor); skipped when absent.
    #[arg(long, default_value = "../shared/meshes")]
    pub meshes: PathBuf,
    /// Timed frames per case (medians are reported).
    #[arg(long, default_value_t = 10)]
    pub frames: usize,
    /// Only zeng2025 Table 3's contact rows (with `--quick`: the smallest of each scene),
    /// under the non-smooth Newton and PGS.
    #[arg(long)]
    pub contact: bool,
    /// `gpu`: zeng2025 Table 3's twisting bars and cloth with the global
    /// step on the GPU, each beside the same case on the CPU in one run
    /// (with `--quick`: the 5.3k bar and the 100² cloth); with `--contact`,
    /// the contact scenes' Newton rows on the CPU and on the GPU.
    #[arg(long, value_parser = ["cpu", "gpu"])]
    pub device: Option<String>,
}

/// zeng2025 Table 1's stretched cloth (`benchmarks/scenes/lg-cloth.toml`).
pub(crate) fn cloth(
    cells: usize,
    model: Constitutive,
    bending: Option<BendingModel>,
) -> Result<Scene, BenchError> {
    let mut scene = template("lg-cloth")?;
    let body = &mut scene.spec.bodies[0];
    body.mesh = MeshSpec::Sheet { size: [1.0, 1.0], cells: [cells, cells] };
    body.constitutive = Some(model);
    body.bending = bending.map(|model| Bending { model, stiffness: 1e-4 });
    Ok(scene)
}

/// A Neo-Hookean body of a mesh file (`benchmarks/scenes/lg-mesh.toml`).
pub(crate) fn file_mesh(mesh: MeshSpec) -> Result<Scene, BenchError> {
    let mut scene = template("lg-mesh")?;
    scene.spec.bodies[0].mesh = mesh;
    Ok(scene)
}

/// A frame of the twisted bar (Fig. 9 a) and its Newton solution's energy.
struct TwistedFrame {
    state: State,
    reference: f64,
}

/// Twists the bar for `lead` frames with a converged integrator, then
/// solves the next frame by Newton (the ground truth `q*`).
fn twisted_frame(cells: [usize; 3], young: f64, lead: usize) -> Result<TwistedFrame, BenchError> {
    let mut w = build(bar(cells, young, "sparse-inverse", 10))?;
    for _ in 0..lead {
        w.step()?;
    }
    let state = w.state.clone();
    let mut last = Vec::new();
    w.step_observed(|_, _, q| last = q.to_vec())?;
    let predicted = lg(&w).predicted(0).to_vec();
    let pins = lg(&w).pins(0).to_vec();
    let at = StepTarget { predicted: &predicted, h: w.model.time_step, t_next: w.state.time, pins: &pins };
    let factor = factorize(&lg(&w).global_solver(0).matrix, Ordering::Auto)
        .map_err(|e| BenchError::Other(format!("Newton reference: {e}")))?;
    let report = newton_reference(&w.model.bodies[0], &factor, &mut last, at, 1e-10, 60);
    Ok(TwistedFrame { state, reference: report.energy })
}

/// Fig. 9: relative error `(ε(qᵏ) − ε(q*)) / (ε(q⁰) − ε(q*))` after each
/// iteration of one frame, and the frame's milliseconds.
fn convergence(
    frame: &TwistedFrame,
    cells: [usize; 3],
    young: f64,
    method: &str,
    iterations: usize,
) -> Result<(Vec<f64>, f64), BenchError> {
    let mut w = build(bar(cells, young, method, iterations))?;
    w.state = frame.state.clone();
    let mut trace = Vec::new();
    let t = Instant::now();
    w.step_observed(|_, _, q| trace.push(q.to_vec()))?;
    let ms = t.elapsed().as_secs_f64() * 1e3;
    let body = &w.model.bodies[0];
    let predicted = lg(&w).predicted(0).to_vec();
    let pins = lg(&w).pins(0).to_vec();
    let at = StepTarget { predicted: &predicted, h: w.model.time_step, t_next: w.state.time, pins: &pins };
    let e = |q: &[f64]| energy(body, q, at).unwrap_or(f64::NAN);
    let e0 = e(&trace[0]);
    Ok((trace[1..].iter().map(|q| (e(q) - frame.reference) / (e0 - frame.reference)).collect(), ms))
}

/// zeng2025 Table 3's twisting bars: cells, the paper's `S` (MB), local, global and frame (ms).
pub(crate) const BARS: [([usize; 3], f64, f64, f64, f64); 3] = [
    // cells, paper S (MB), paper local, global, frame (ms)
    ([26, 13, 13], 125.02, 0.87, 0.27, 6.23),
    ([34, 17, 17], 463.03, 1.67, 0.86, 13.55),
    ([42, 21, 21], 1310.19, 2.99, 2.41, 28.55),
];

fn quick(a: &LocalGlobalArgs, copy_gbs: f64, out: &mut Vec<LocalGlobalRecord>) -> Result<(), BenchError> {
    let frame = twisted_frame(BAR_5K, 1e9, 20)?;
    for method in ["sparse-inverse", "triangular", "jacobi"] {
        let mut w = build(bar(BAR_5K, 1e9, method, 5))?;
        let mut r = record("quick", "twisting-bar-lg", &w, copy_gbs);
        r.young = 1e9;
        time_frames(&mut w, a.frames.min(5), &mut r)?;
        let (errors, _) = convergence(&frame, BAR_5K, 1e9, method, 5)?;
        r.rel_error = errors.last().copied();
        r.errors = errors;
        out.push(r);
    }
    Ok(())
}

fn memory(a: &LocalGlobalArgs, copy_gbs: f64, out: &mut Vec<LocalGlobalRecord>) -> Result<(), BenchError> {
    let cloth_sizes = [
        (70, 34.80, 62.37, 87.08),
        (100, 102.51, 183.82, 258.85),
        (122, 183.79, 342.68, 487.14),
        (141, 280.41, 523.36, 749.10),
    ];
    for (cells, none, iso, lb) in cloth_sizes {
        for (bending, paper) in
            [(None, none), (Some(BendingModel::Isometric), iso), (Some(BendingModel::LaplaceBeltrami), lb)]
        {
            let w = build(storing_s(cloth(cells, Constitutive::Arap, bending)))?;
            let name = match bending {
                None => "cloth (no bending)",
                Some(BendingModel::Isometric) => "cloth (isometric)",
                Some(BendingModel::LaplaceBeltrami) => "cloth (Laplace-Beltrami)",
            };
            let mut r = record("table1-2", name, &w, copy_gbs);
            r.paper = Some(PaperFigures::memory(paper));
            out.push(r);
        }
    }
    for (cells, s_mb, ..) in BARS {
        let w = build(bar(cells, 1e9, "sparse-inverse", 5))?;
        let mut r = record("table1-2", "bar", &w, copy_gbs);
        r.paper = Some(PaperFigures::memory(s_mb));
        out.push(r);
    }
    for (name, mesh) in raptor_cases(&a.meshes) {
        let w = build(storing_s(file_mesh(mesh)))?;
        out.push(record("table1-2", &name, &w, copy_gbs));
    }
    Ok(())
}

/// zeng2025 Table 3 without contact: the twisting bars and the cloth
/// extension (`smallest`: the smallest bar and cloth), each with the
/// global step `auto` settles on (the record's `global_method`).
pub(crate) fn table3(
    a: &LocalGlobalArgs,
    smallest: bool,
    copy_gbs: f64,
    out: &mut Vec<LocalGlobalRecord>,
) -> Result<(), BenchError> {
    let sizes = if smallest { 1 } else { usize::MAX };
    for (cells, s_mb, local, global, frame) in BARS.into_iter().take(sizes) {
        let mut w = build(bar(cells, 1e9, "auto", 5))?;
        let mut r = record("table3", "twisting bar", &w, copy_gbs);
        r.young = 1e9;
        r.paper = Some(PaperFigures::table3(s_mb, local, global, frame));
        time_frames(&mut w, a.frames, &mut r)?;
        out.push(r);
    }
    let cloth_rows = [
        (100, Constitutive::Arap, 0.39, 0.33, 4.44),
        (100, Constitutive::Corotational, 0.87, 0.23, 6.43),
        (100, Constitutive::NeoHookean, 0.93, 0.23, 6.65),
        (141, Constitutive::Arap, 0.59, 0.58, 7.53),
        (141, Constitutive::Corotational, 1.59, 0.51, 12.11),
        (141, Constitutive::NeoHookean, 1.73, 0.52, 12.88),
    ];
    for (cells, model, local, global, frame) in cloth_rows.into_iter().take(if smallest { 3 } else { 6 }) {
        let mut w = build(cloth(cells, model, None))?;
        let mut r = record("table3", "cloth extension", &w, copy_gbs);
        r.young = 1e5;
        let s_mb = if cells == 100 { 102.51 } else { 280.41 };
        r.paper = Some(PaperFigures::table3(s_mb, local, global, frame));
        time_frames(&mut w, a.frames, &mut r)?;
        out.push(r);
    }
    Ok(())
}

fn fig9(copy_gbs: f64, out: &mut Vec<LocalGlobalRecord>) -> Result<(), BenchError> {
    for young in [1e5, 1e7, 1e9] {
        let frame = twisted_frame(BAR_5K, young, 50)?;
        for (method, iterations) in [("sparse-inverse", 30), ("jacobi", 300), ("jacobi-chebyshev", 300)] {
            let w = build(bar(BAR_5K, young, method, iterations))?;
            let mut r = record("fig9", "twisting bar", &w, copy_gbs);
            let (errors, ms) = convergence(&frame, BAR_5K, young, method, iterations)?;
            r.young = young;
            r.global_method = method.to_string();
            r.frame_ms = ms;
            r.rel_error = errors.get(9).copied();
            r.errors = errors;
            out.push(r);
        }
    }
    Ok(())
}

fn mb(bytes: usize) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}

fn print(records: &[LocalGlobalRecord]) {
    println!(
        "{:<9} {:<26} {:>7} {:>8} {:<13} {:<16} {:>9} {:>9} {:>9} {:>9} {:>10} {:>9} {:>10} {:>7}",
        "exp",
        "scene",
        "verts",
        "elems",
        "model",
        "global",
        "local ms",
        "glob ms",
        "frame ms",
        "S MB",
        "S(3n) MB",
        "paper MB",
        "rel err@k",
        "% copy"
    );
    for r in records {
        println!(
            "{:<9} {:<26} {:>7} {:>8} {:<13} {:<16} {:>9.2} {:>9.2} {:>9.2} {:>9.1} {:>10.1} {:>9} {:>10} {:>7}",
            r.experiment,
            r.scene,
            r.vertices,
            r.elements,
            r.constitutive,
            r.global_method,
            r.local_ms,
            r.global_ms,
            r.frame_ms,
            mb(r.s_bytes),
            mb(r.s_bytes_3n),
            r.paper.map_or("-".into(), |p| format!("{:.1}", p.s_mb)),
            r.rel_error.map_or("-".into(), |e| format!("{e:.2e}")),
            r.global_gbs.map_or("-".into(), |g| format!("{:.0}", 100.0 * g / r.copy_gbs)),
        );
    }
}

/// The acceleration rows: cost per iteration and iterations to 1e-3.
fn print_acceleration(records: &[LocalGlobalRecord]) {
    let rows: Vec<_> = records.iter().filter(|r| r.experiment == "acceleration").collect();
    if rows.is_empty() {
        return;
    }
    println!(
        "\n{:<14} {:<10} {:>7} {:>9} {:>10} {:>10} {:>12}",
        "scene", "accel", "verts", "ms/iter", "frame ms", "err@10", "iters→1e-3"
    );
    for r in rows {
        println!(
            "{:<14} {:<10} {:>7} {:>9.2} {:>10.2} {:>10} {:>12}",
            r.scene,
            r.acceleration,
            r.vertices,
            r.iteration_ms.unwrap_or(f64::NAN),
            r.frame_ms,
            r.rel_error.map_or("-".into(), |e| format!("{e:.2e}")),
            r.iterations_to_1e3.map_or("-".into(), |k| k.to_string()),
        );
    }
}

/// Table 3's bars and cloth (quick: the smallest of each) with the
/// sparse-inverse global step on the CPU and then on the GPU, side by side.
fn device_rows(
    a: &LocalGlobalArgs,
    copy_gbs: f64,
    out: &mut Vec<LocalGlobalRecord>,
) -> Result<(), BenchError> {
    let bars = if a.quick { &BARS[..1] } else { &BARS[..] };
    let mut cases: Vec<(&str, Scene, f64, PaperFigures)> = Vec::new();
    for &(cells, s_mb, local, global, frame) in bars {
        cases.push((
            "twisting bar",
            bar(cells, 1e9, "sparse-inverse", 5)?,
            1e9,
            PaperFigures::table3(s_mb, local, global, frame),
        ));
    }
    cases.push((
        "cloth extension",
        cloth(100, Constitutive::Arap, None)?,
        1e5,
        PaperFigures::table3(102.51, 0.39, 0.33, 4.44),
    ));
    for (name, scene, young, paper) in cases {
        for device in [Device::Cpu, Device::Gpu] {
            let mut scene = scene.clone();
            scene.set_device(device)?;
            // A case too large for the adapter (lavapipe: 128 MB per
            // buffer) is reported and skipped; the others still run.
            let mut w = match build(Ok(scene)) {
                Err(e) if device == Device::Gpu => {
                    eprintln!("skipping {name} on the GPU: {e}");
                    continue;
                }
                built => built?,
            };
            let mut r = record("device", name, &w, copy_gbs);
            (r.young, r.paper) = (young, Some(paper));
            time_frames(&mut w, a.frames, &mut r)?;
            out.push(r);
        }
    }
    Ok(())
}

/// The device rows: CPU and GPU milliseconds per stage, side by side.
fn print_device(records: &[LocalGlobalRecord]) {
    println!(
        "{:<16} {:>7} {:<6} {:>9} {:>9} {:>9} {:>8}  adapter (per frame: the device's counters, each the worst)",
        "scene", "verts", "device", "local ms", "glob ms", "frame ms", "GB/s"
    );
    for r in records {
        println!(
            "{:<16} {:>7} {:<6} {:>9.2} {:>9.2} {:>9.2} {:>8.1}  {}{}",
            r.scene,
            r.vertices,
            r.device,
            r.local_ms,
            r.global_ms,
            r.frame_ms,
            r.global_gbs.unwrap_or(f64::NAN),
            r.adapter.as_deref().unwrap_or("-"),
            crate::lg_contact::counters_cell(r.device_counters),
        );
    }
}

/// Runs the experiments and writes the records.
pub fn bench_local_global(a: LocalGlobalArgs) -> Result<(), BenchError> {
    if a.contact {
        let records = crate::lg_contact::contact_rows(
            a.quick,
            a.frames,
            a.device.as_deref() == Some("gpu"),
            true,
            &a.meshes,
        )?;
        if let Some(p) = &a.json {
            write_json(p, &records)?;
        }
        return Ok(());
    }
    if a.device.as_deref() == Some("gpu") {
        let copy_gbs = copy_bandwidth_gbs(256 << 20, 5);
        let mut records = Vec::new();
        device_rows(&a, copy_gbs, &mut records)?;
        print_device(&records);
        println!("copy bandwidth {copy_gbs:.1} GB/s");
        if let Some(p) = &a.json {
            write_json(p, &records)?;
        }
        return Ok(());
    }
    let copy_gbs = copy_bandwidth_gbs(256 << 20, 5);
    let mut records = Vec::new();
    if a.quick {
        quick(&a, copy_gbs, &mut records)?;
        crate::lg_acceleration::rows(true, a.frames.min(5), copy_gbs, &mut records)?;
    } else {
        quick(&a, copy_gbs, &mut records)?;
        memory(&a, copy_gbs, &mut records)?;
        table3(&a, false, copy_gbs, &mut records)?;
        fig9(copy_gbs, &mut records)?;
        crate::lg_acceleration::rows(false, a.frames, copy_gbs, &mut records)?;
    }
    print(&records);
    print_acceleration(&records);
    println!("copy bandwidth {copy_gbs:.1} GB/s");
    if let Some(dir) = &a.plots {
        crate::plot::local_global_figure(dir, &records)?;
    }
    if let Some(p) = &a.json {
        write_json(p, &records)?;
    }
    Ok(())
}
