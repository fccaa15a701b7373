//! `ferrofem bench local-global --contact`: zeng2025 Table 3's contact
//! rows on our built-in scenes at the paper's sizes — the Schur complement
//! (`W`, once per frame), the per-iteration local, global, constraint-solve
//! and correction times, and the frame — under the non-smooth Newton and
//! under PGS on the same `W` (the scene's global step: `auto`, settled by
//! bytes); with `--device gpu`, the Newton rows on the CPU and on the GPU
//! side by side, both with the sparse-inverse global step.

use std::path::Path;

use serde::Serialize;

use ferrofem::integrator::local_global::GlobalStepMethod;
use ferrofem::scene::{builtin, MeshSpec, Scene, Tetrahedralize};
use ferrofem::solver::{ConstraintSolver, NewtonSettings, PgsSettings};
use ferrofem::stats::{median_p90, Stage, StepStats};
use ferrofem::Device;

use crate::sysinfo::Context;
use crate::BenchError;

/// One contact row of `bench local-global` (times in ms).
#[derive(Debug, Clone, Serialize)]
pub struct ContactRecord {
    /// Always `table3-contact`.
    pub experiment: &'static str,
    /// Built-in scene.
    pub scene: String,
    /// Vertices of the body.
    pub vertices: usize,
    /// `non-smooth-newton` or `pgs`.
    pub constraint_solver: &'static str,
    /// `cpu` or `gpu` (`--device gpu`: global step, Newton solve and
    /// correction on the device).
    pub device: &'static str,
    /// The GPU adapter of a `gpu` row.
    pub adapter: Option<String>,
    /// Local-global iterations per frame.
    pub iterations: usize,
    /// The body's global step (`triangular` or `sparse-inverse`: the
    /// scene's `auto` settled by bytes on the CPU).
    pub global_step: &'static str,
    /// `W = h² H A⁻¹ Hᵀ` per frame (the paper's Schur.).
    pub schur_ms: f64,
    /// Local step per iteration.
    pub local_ms: f64,
    /// Unconstrained global solve per iteration.
    pub global_ms: f64,
    /// Constraint groups and rows per frame.
    pub assemble_ms: f64,
    /// Constraint solve per iteration (gaps, Newton or PGS).
    pub constraint_solve_ms: f64,
    /// Correction `h² A⁻¹ Hᵀ Δλ` per iteration.
    pub correction_ms: f64,
    /// Global + constraint solve + correction per iteration (the paper's Cst. Global).
    pub constrained_global_ms: f64,
    /// Median frame, contact detection included.
    pub frame_ms: f64,
    /// Most contacts in the timed frames.
    pub contacts_max: usize,
    /// The paper's row (RTX 4090 + CPU): Schur, Local, Global, Assem., Cst. Solve, Corr., Cst. Global, Frame (ms), contacts.
    pub paper: Option<[f64; 9]>,
    /// The paper's vertex count of the row (`5.1k`), when it has one.
    pub paper_vertices: Option<&'static str>,
    /// The error that stopped the run, if one did (its figures are then 0).
    pub failed: Option<String>,
    /// On the device: the counters of one frame, each the largest over
    /// the timed frames (`docs/gpu.md`, "Counters"); `null` on the CPU.
    pub device_counters: Option<ferrofem::device::DeviceCounters>,
    /// Machine and build context.
    pub context: Context,
}

/// A case: built-in scene (or, with `external`, one of `scenes/external/`
/// whose mesh path is relative to the shared meshes), its body mesh at the
/// paper's size, frames run before timing (until contact is rich), the
/// paper's row.
struct Case {
    scene: &'static str,
    external: bool,
    mesh: MeshSpec,
    lead: usize,
    paper: Option<[f64; 9]>,
    paper_vertices: Option<&'static str>,
}

impl Case {
    /// A case on a built-in scene.
    fn new(
        scene: &'static str,
        mesh: MeshSpec,
        lead: usize,
        paper: Option<[f64; 9]>,
        paper_vertices: Option<&'static str>,
    ) -> Case {
        Case { scene, external: false, mesh, lead, paper, paper_vertices }
    }
}

fn sheet(cells: usize) -> MeshSpec {
    MeshSpec::Sheet { size: [1.0, 1.0], cells: [cells, cells] }
}

fn ball(resolution: usize) -> MeshSpec {
    MeshSpec::Ball { radius: 0.1, resolution }
}

/// zeng2025 Table 3's contact rows at their sizes (`quick`: the smallest of each).
fn cases(quick: bool) -> Vec<Case> {
    let mut cases = vec![
        Case::new("drop-lg", ball(16), 20, None, None),
        Case::new(
            "cloth-on-knives",
            sheet(70),
            40,
            Some([3.45, 0.47, 0.13, 0.25, 0.54, 0.18, 0.98, 14.73, 760.0]),
            Some("5.1k"),
        ),
        Case::new(
            "sharp-corner",
            sheet(70),
            40,
            Some([41.45, 0.34, 0.14, 0.87, 2.79, 0.15, 3.82, 70.77, 4570.0]),
            Some("5.1k"),
        ),
        Case::new(
            "squeezing-ball",
            ball(18),
            25,
            Some([11.60, 2.75, 0.50, 0.99, 1.39, 0.51, 2.89, 46.15, 3180.0]),
            Some("7.1k"),
        ),
    ];
    if !quick {
        cases.extend([
            Case::new(
                "cloth-on-knives",
                sheet(100),
                40,
                Some([5.37, 0.79, 0.33, 0.46, 0.52, 0.36, 1.35, 21.42, 1190.0]),
                Some("10.2k"),
            ),
            Case::new(
                "cloth-on-knives",
                sheet(123),
                40,
                Some([11.07, 1.09, 0.59, 0.80, 0.60, 0.62, 2.02, 33.02, 1780.0]),
                Some("15.3k"),
            ),
            Case::new(
                "sharp-corner",
                sheet(100),
                40,
                Some([200.08, 0.49, 0.37, 2.66, 9.13, 0.37, 12.15, 277.36, 8620.0]),
                Some("10.2k"),
            ),
            Case::new(
                "squeezing-ball",
                ball(23),
                25,
                Some([27.91, 6.09, 1.61, 2.46, 2.80, 1.67, 6.92, 102.01, 4620.0]),
                Some("14.7k"),
            ),
        ]);
        cases.extend(external_cases());
        cases.extend(grabbing_cases());
    }
    cases
}

/// Frames before the grabbing raptor's contacts peak (gripped on the floor).
const GRABBING_LEAD: usize = 45;

/// The grabbing raptor (`scenes/external/grabbing-raptor.toml`) on
/// fTetWild's raptors of the shared meshes nearest the paper's sizes.
fn grabbing_cases() -> [Case; 3] {
    let grabbed = |mesh: &str, paper, vertices| Case {
        external: true,
        ..Case::new("grabbing-raptor", MeshSpec::file(mesh), GRABBING_LEAD, Some(paper), Some(vertices))
    };
    [
        grabbed(
            "generated/raptor_tet_10k.msh",
            [2.42, 1.72, 0.23, 0.37, 0.62, 0.28, 1.27, 21.49, 140.0],
            "10.3k",
        ),
        grabbed(
            "generated/raptor_tet_14k.msh",
            [2.43, 2.63, 0.45, 0.62, 0.71, 0.51, 1.84, 29.68, 130.0],
            "15.3k",
        ),
        grabbed(
            "generated/raptor_tet_20k.msh",
            [2.62, 3.51, 0.80, 1.08, 0.63, 0.89, 2.61, 38.62, 140.0],
            "20.4k",
        ),
    ]
}

/// Isosurface-stuffing resolutions of the bunny at the wooper's 5.3k and
/// 11.8k vertices, and the frames before each pulled scene's contact peaks.
const BUNNY_5K: usize = 21;
const BUNNY_12K: usize = 28;
const BUNNY_LEAD: usize = 145;
const GINGERBREAD_LEAD: usize = 320;

/// The pulled rows on the shared meshes: the gingerbread stand-in
/// (`scenes/external/pulling.toml`) and the bunny standing in for the
/// wooper (`scenes/external/pulling-bunny.toml`), at the paper's sizes.
fn external_cases() -> [Case; 4] {
    let file = |path: &str| MeshSpec::file(path);
    let bunny = |resolution| MeshSpec::File {
        path: "npm-bunny/bunny.obj".into(),
        tetrahedralize: Some(Tetrahedralize { cell: None, resolution: Some(resolution) }),
    };
    let pulled = |scene, mesh, lead, paper, vertices| Case {
        external: true,
        ..Case::new(scene, mesh, lead, Some(paper), Some(vertices))
    };
    [
        pulled(
            "pulling-bunny",
            bunny(BUNNY_5K),
            BUNNY_LEAD,
            [4.76, 1.25, 0.14, 0.26, 0.54, 0.19, 0.98, 19.95, 420.0],
            "5.3k",
        ),
        pulled(
            "pulling-bunny",
            bunny(BUNNY_12K),
            BUNNY_LEAD,
            [16.30, 3.06, 0.54, 0.77, 0.51, 0.59, 1.87, 46.20, 730.0],
            "11.8k",
        ),
        pulled(
            "pulling",
            file("generated/gingerbread_standin_tet_10k.msh"),
            GINGERBREAD_LEAD,
            [8.37, 2.77, 0.41, 0.59, 0.48, 0.45, 1.52, 34.75, 740.0],
            "11.1k",
        ),
        pulled(
            "pulling",
            file("generated/gingerbread_standin_tet_18k.msh"),
            GINGERBREAD_LEAD,
            [14.16, 5.03, 1.05, 1.30, 0.50, 1.15, 2.95, 59.76, 800.0],
            "19.5k",
        ),
    ]
}

/// The meshes of the pulled rows, the shared meshes read from `meshes`:
/// (the paper's example, its vertices, our mesh). The bunny stands in for
/// the wooper (zeng2025 Table 2–3 at its sizes).
pub(crate) fn pulled_meshes(meshes: &Path) -> Vec<(&'static str, &'static str, MeshSpec)> {
    let example = |scene| if scene == "pulling-bunny" { "wooper" } else { "gingerbread man" };
    let at = |mesh: MeshSpec| match mesh {
        MeshSpec::File { path, tetrahedralize } => {
            MeshSpec::File { path: meshes.join(path).display().to_string(), tetrahedralize }
        }
        mesh => mesh,
    };
    let rows =
        external_cases().into_iter().map(|c| (example(c.scene), c.paper_vertices.unwrap_or(""), at(c.mesh)));
    rows.collect()
}

/// The scene of a case with `solver`; `None` when it needs the shared
/// meshes and `meshes` is not their folder.
fn scene(case: &Case, solver: ConstraintSolver, meshes: &Path) -> Result<Option<Scene>, BenchError> {
    let (mut scene, mesh) = match &case.mesh {
        MeshSpec::File { path, tetrahedralize } if case.external => {
            let Some(scene) = crate::scenes::external(case.scene, meshes)? else {
                return Ok(None);
            };
            let path = meshes.join(path).display().to_string();
            (scene, MeshSpec::File { path, tetrahedralize: *tetrahedralize })
        }
        mesh => (builtin::load(case.scene)?, mesh.clone()),
    };
    scene.spec.bodies[0].mesh = mesh;
    scene.spec.constraint_solver.solver = Some(solver);
    Ok(Some(scene))
}

/// Median of a per-step figure.
pub(crate) fn median(steps: &[StepStats], f: impl Fn(&StepStats) -> f64) -> f64 {
    let mut v: Vec<f64> = steps.iter().map(f).collect();
    median_p90(&mut v).0
}

/// Runs each case under both solvers (`pgs` false: the non-smooth Newton
/// only): `lead` frames, then `frames` timed.
pub fn contact_rows(
    quick: bool,
    frames: usize,
    gpu: bool,
    pgs: bool,
    meshes: &Path,
) -> Result<Vec<ContactRecord>, BenchError> {
    let newton = ("non-smooth-newton", ConstraintSolver::NonSmoothNewton(NewtonSettings::default()));
    let mut runs: Vec<(&str, ConstraintSolver, Device)> = vec![(newton.0, newton.1, Device::Cpu)];
    if gpu {
        runs.push((newton.0, newton.1, Device::Gpu));
    } else if pgs {
        runs.push(("pgs", ConstraintSolver::Pgs(PgsSettings::new(200, 1e-8)), Device::Cpu));
    }
    let mut out = Vec::new();
    for case in cases(quick) {
        for &(name, solver, device) in &runs {
            let Some(mut scene) = scene(&case, solver, meshes)? else {
                eprintln!("skipping {}: {} is absent", case.scene, meshes.display());
                continue;
            };
            if gpu {
                // Both rows on the method the GPU runs.
                scene.spec.local_global.global_step = GlobalStepMethod::SparseInverse;
                scene.set_device(device)?;
            }
            let mut w = match scene.build_on(ferrofem_gpu::backend()) {
                Err(e) if device == Device::Gpu => {
                    eprintln!("skipping {} on the GPU: {e}", case.scene);
                    continue;
                }
                built => built?,
            };
            let run = |w: &mut ferrofem::World| {
                (0..case.lead).try_for_each(|_| w.step().map(drop))?;
                (0..frames.max(1)).map(|_| w.step()).collect::<Result<Vec<_>, _>>()
            };
            // A GPU row whose `W` outgrows the adapter (lavapipe: 128 MB
            // per buffer) is reported and skipped; a CPU row that fails
            // is recorded with its error (its figures 0) and the next runs.
            let (steps, failed) = match run(&mut w) {
                Err(e) if device == Device::Gpu => {
                    eprintln!("skipping {} on the GPU: {e}", case.scene);
                    continue;
                }
                Err(e) => {
                    eprintln!("{} ({} vertices): {e}", case.scene, w.model.bodies[0].vertex_count());
                    (Vec::new(), Some(e.to_string()))
                }
                Ok(steps) => (steps, None),
            };
            let k = w.local_global().map_or(1, |lg| lg.settings.iterations) as f64;
            let per = |st: Stage| move |s: &StepStats| s.stage_ms.get(st) / k;
            let once = |st: Stage| move |s: &StepStats| s.stage_ms.get(st);
            let cst = |s: &StepStats| {
                [Stage::GlobalStep, Stage::SolveConstraints, Stage::Correct]
                    .iter()
                    .map(|&x| s.stage_ms.get(x))
                    .sum::<f64>()
                    / k
            };
            let r = ContactRecord {
                experiment: "table3-contact",
                scene: case.scene.to_string(),
                vertices: w.model.bodies[0].vertex_count(),
                constraint_solver: name,
                device: if device == Device::Gpu { "gpu" } else { "cpu" },
                adapter: w.local_global().and_then(|lg| lg.device_adapter()).map(String::from),
                iterations: k as usize,
                global_step: w.local_global().map_or("", |lg| lg.global_solver(0).method.name()),
                schur_ms: median(&steps, once(Stage::BuildDelassus)),
                local_ms: median(&steps, per(Stage::LocalStep)),
                global_ms: median(&steps, per(Stage::GlobalStep)),
                assemble_ms: median(&steps, once(Stage::AssembleConstraints)),
                constraint_solve_ms: median(&steps, per(Stage::SolveConstraints)),
                correction_ms: median(&steps, per(Stage::Correct)),
                constrained_global_ms: median(&steps, cst),
                frame_ms: median(&steps, |s| s.step_ms),
                contacts_max: steps.iter().map(|s| s.contacts).max().unwrap_or(0),
                paper: case.paper,
                paper_vertices: case.paper_vertices,
                failed,
                device_counters: steps.iter().fold(None, worst_counters),
                context: Context::now(),
            };
            println!(
                "{:<16} {:>6} {:<18} {:<3} schur {:>7.2} local {:>6.2} global {:>6.2} assem {:>5.2} solve {:>7.2} corr {:>6.2} cst {:>7.2} frame {:>8.2} contacts {:>5}{}",
                r.scene, r.vertices, r.constraint_solver, r.device, r.schur_ms, r.local_ms, r.global_ms, r.assemble_ms,
                r.constraint_solve_ms, r.correction_ms, r.constrained_global_ms, r.frame_ms, r.contacts_max,
                counters_cell(r.device_counters)
            );
            out.push(r);
        }
    }
    Ok(out)
}

/// The largest of each device counter of `worst` and `step` (`None` on
/// the CPU).
pub(crate) fn worst_counters(
    worst: Option<ferrofem::device::DeviceCounters>,
    step: &StepStats,
) -> Option<ferrofem::device::DeviceCounters> {
    match (worst, step.device.map(|d| d.counters)) {
        (Some(a), Some(b)) => Some(a.max(b)),
        (a, b) => a.or(b),
    }
}

/// A frame's device counters for a table row (empty on the CPU).
pub(crate) fn counters_cell(c: Option<ferrofem::device::DeviceCounters>) -> String {
    let mb = |b: u64| b as f64 / 1e6;
    c.map_or(String::new(), |c| {
        format!(
            "  waits {} subm {} disp {} up {:.2} MB down {:.2} MB device {:.2} ms",
            c.host_waits,
            c.submissions,
            c.dispatches,
            mb(c.bytes_uploaded),
            mb(c.bytes_read_back),
            c.device_ns as f64 / 1e6
        )
    })
}
