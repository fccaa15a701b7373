//! `ferrofem bench local-global`: the local-global integrator against the
//! paper (zeng2025 §7): memory of `S` (Tables 1–2), per-iteration local and
//! global milliseconds and frame time (Table 3), relative error against a
//! Newton reference (Fig. 9), and the global step's bandwidth against a
//! copy measured in the same run.

use std::path::PathBuf;
use std::time::Instant;

use clap::Args;
use serde::Serialize;

use ferrofem::integrator::local_global::energy::{energy, StepTarget};
use ferrofem::integrator::local_global::global::factorize;
use ferrofem::integrator::local_global::newton::newton_reference;
use ferrofem::integrator::LocalGlobal;
use ferrofem::scene::Scene;
use ferrofem::stats::{median_p90, Stage};
use ferrofem::{State, World};
use ferrofem_linalg::Ordering;

use crate::bandwidth::copy_bandwidth_gbs;
use crate::factor::raptor_cases;
use crate::scenes::template;
use crate::sysinfo::Context;
use crate::{write_json, BenchError};
use ferrofem::element::{Bending, BendingModel, Constitutive};
use ferrofem::integrator::local_global::{Chebyshev, GlobalStepMethod};
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
    /// on the GPU, the bytes its two CSR products read, over the whole step with transfers).
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
    /// Machine and build context.
    pub context: Context,
}

impl PaperFigures {
    /// A Table 3 row: memory, local, global and frame milliseconds.
    fn table3(s_mb: f64, local: f64, global: f64, frame: f64) -> Self {
        PaperFigures { s_mb, local_ms: Some(local), global_ms: Some(global), frame_ms: Some(frame) }
    }

    /// A Table 1–2 entry: memory only.
    fn memory(s_mb: f64) -> Self {
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

/// zeng2025's twisting bar (`benchmarks/scenes/lg-bar.toml`) with `cells`,
/// Young's modulus, a global-step method (`jacobi-chebyshev`: Jacobi with
/// Chebyshev acceleration, ρ = 0.9992, γ = 0.9) and iterations per frame.
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
        _ => GlobalStepMethod::SparseInverse,
    };
    if method == "jacobi-chebyshev" {
        s.local_global.chebyshev = Some(Chebyshev { rho: 0.9992, gamma: 0.9, ..Default::default() });
    }
    s.bodies[0].mesh = MeshSpec::Box { size: [2.0, 1.0, 1.0], cells };
    s.bodies[0].material.young = young;
    Ok(scene)
}

/// zeng2025 Table 1's stretched cloth (`benchmarks/scenes/lg-cloth.toml`).
fn cloth(cells: usize, model: Constitutive, bending: Option<BendingModel>) -> Result<Scene, BenchError> {
    let mut scene = template("lg-cloth")?;
    let body = &mut scene.spec.bodies[0];
    body.mesh = MeshSpec::Sheet { size: [1.0, 1.0], cells: [cells, cells] };
    body.constitutive = Some(model);
    body.bending = bending.map(|model| Bending { model, stiffness: 1e-4 });
    Ok(scene)
}

/// A Neo-Hookean body of a mesh file (`benchmarks/scenes/lg-mesh.toml`).
fn file_mesh(mesh: MeshSpec) -> Result<Scene, BenchError> {
    let mut scene = template("lg-mesh")?;
    scene.spec.bodies[0].mesh = mesh;
    Ok(scene)
}

pub(crate) fn build(scene: Result<Scene, BenchError>) -> Result<World, BenchError> {
    let scene = scene?;
    let w = scene.build()?;
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
    for _ in 0..frames.max(1) {
        let s = w.step()?;
        local.push(s.stage_ms.get(Stage::LocalStep) / k);
        global.push(s.stage_ms.get(Stage::GlobalStep) / k);
        frame.push(s.step_ms);
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
    if let Some(bytes) = g.device_bytes().or(cpu.map(|b| b + vectors)) {
        r.global_gbs = Some(bytes as f64 / (r.global_ms * 1e-3) / 1e9);
    }
    Ok(())
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

pub(crate) const BAR_5K: [usize; 3] = [26, 13, 13];
const BARS: [([usize; 3], f64, f64, f64, f64); 3] = [
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
            let w = build(cloth(cells, Constitutive::Arap, bending))?;
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
        let w = build(file_mesh(mesh))?;
        out.push(record("table1-2", &name, &w, copy_gbs));
    }
    Ok(())
}

fn table3(a: &LocalGlobalArgs, copy_gbs: f64, out: &mut Vec<LocalGlobalRecord>) -> Result<(), BenchError> {
    for (cells, s_mb, local, global, frame) in BARS {
        let mut w = build(bar(cells, 1e9, "sparse-inverse", 5))?;
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
    for (cells, model, local, global, frame) in cloth_rows {
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
        "{:<16} {:>7} {:<6} {:>9} {:>9} {:>9} {:>8}  adapter",
        "scene", "verts", "device", "local ms", "glob ms", "frame ms", "GB/s"
    );
    for r in records {
        println!(
            "{:<16} {:>7} {:<6} {:>9.2} {:>9.2} {:>9.2} {:>8.1}  {}",
            r.scene,
            r.vertices,
            r.device,
            r.local_ms,
            r.global_ms,
            r.frame_ms,
            r.global_gbs.unwrap_or(f64::NAN),
            r.adapter.as_deref().unwrap_or("-"),
        );
    }
}

/// Runs the experiments and writes the records.
pub fn bench_local_global(a: LocalGlobalArgs) -> Result<(), BenchError> {
    if a.contact {
        let records = crate::lg_contact::contact_rows(a.quick, a.frames, a.device.as_deref() == Some("gpu"))?;
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
        table3(&a, copy_gbs, &mut records)?;
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
