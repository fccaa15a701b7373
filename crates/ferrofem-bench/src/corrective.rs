//! `ferrofem bench corrective`: zeng-implicit Table 1 — the recursive
//! corrective motion with the standard update of the constraint matrices
//! (Algorithm 2: `W_k` from the factor, `A⁻¹ H_kᵀ λ` every iteration) and
//! with the fast one (Algorithm 3: `W_H` once, then products), 5 Newton
//! iterations of 30 PGS sweeps each, on the `grasp-rotate` scene with a
//! bar between the jaws sized to the paper's DOFs and constraints. The
//! variants run side by side, a step of each in turn.

use std::path::PathBuf;

use clap::Args;
use serde::Serialize;

use ferrofem::collision::{ImplicitResolution, Resolution, Update};
use ferrofem::delassus::DelassusMethod;
use ferrofem::scene::{builtin, MeshSpec};
use ferrofem::solver::corrective::CorrectiveRecord;
use ferrofem::solver::{ConstraintSolver, ConstraintSolverSettings};
use ferrofem::stats::{median_p90, Stage, StepStats};
use ferrofem::World;
use ferrofem_linalg::Precision;

use crate::records::write_json;
use crate::sysinfo::Context;
use crate::BenchError;

/// `ferrofem bench corrective` arguments.
#[derive(Debug, Args)]
pub struct CorrectiveArgs {
    /// Only the smallest size.
    #[arg(long)]
    pub quick: bool,
    /// Timed steps per variant.
    #[arg(long, default_value_t = 5)]
    pub steps: usize,
    /// PGS reads `W` in single precision (`[constraint_solver] delassus_precision = "single"`).
    #[arg(long)]
    pub single: bool,
    /// Write the records as JSON.
    #[arg(long)]
    pub json: Option<PathBuf>,
}

/// Newton iterations and PGS sweeps of the paper's runs.
const NEWTON: usize = 5;
const SWEEPS: usize = 30;
/// Edge of the bar's cells (m); the jaws squeeze it by `SQUEEZE` each side.
const CELL: f64 = 0.004;
const SQUEEZE: f64 = 0.0015;

/// One (size, variant) row (times in ms, medians over the timed steps).
#[derive(Debug, Clone, Serialize)]
pub struct CorrectiveBenchRecord {
    /// Always `table1`.
    pub experiment: &'static str,
    /// DOFs of the bar.
    pub dofs: usize,
    /// Contact groups (median over the timed steps).
    pub constraints: usize,
    /// `standard` (W by isodof every iteration), `standard-reuse` (the
    /// isodof solves of the first iteration reused) or `fast`.
    pub variant: &'static str,
    /// The precision PGS read `W` in (`double` or `single`).
    pub pgs_precision: Precision,
    /// `W_H` (fast) — the paper's Build WH.
    pub build_mapping_ms: f64,
    /// `W_k` per Newton iteration (standard: from the factor).
    pub rebuild_ms: f64,
    /// PGS per Newton iteration (with `δ_free`).
    pub pgs_ms: f64,
    /// Iterate per Newton iteration (standard: `A⁻¹ H_kᵀ λ`; fast: `W_H C_kᵀ λ`).
    pub correction_ms: f64,
    /// Rebuild + PGS + correction.
    pub newton_iteration_ms: f64,
    /// The whole scheme: `W_H`, the iterations and the final correction.
    pub total_ms: f64,
    /// (Rebuild + correction) / Newton iteration.
    pub update_share: f64,
    /// The paper's row (RTX 3080): Build WH, Rebuild W, PGS, Corr., Newton ite., Total (ms).
    pub paper: [f64; 6],
    /// The paper's DOFs of the row.
    pub paper_dofs: usize,
    /// The paper's constraints of the row (mean).
    pub paper_constraints: f64,
    /// Machine and build context.
    pub context: Context,
}

/// A size: the bar's cells (x between the jaws), the paper's DOFs and
/// constraints, and its standard and fast rows.
struct Case {
    cells: [usize; 3],
    paper_dofs: usize,
    paper_constraints: f64,
    standard: [f64; 6],
    fast: [f64; 6],
}

/// zeng-implicit Table 1 (the extracted text drops the fast rows' PGS
/// column; it is the standard rows', the same solve on the same W).
fn cases(quick: bool) -> Vec<Case> {
    let all = vec![
        Case {
            cells: [38, 10, 13],
            paper_dofs: 18003,
            paper_constraints: 308.19,
            standard: [0.0, 19.89, 3.76, 0.82, 24.47, 122.39],
            fast: [19.26, 0.59, 3.76, 0.08, 4.43, 41.45],
        },
        Case {
            cells: [43, 12, 13],
            paper_dofs: 24066,
            paper_constraints: 365.97,
            standard: [0.0, 32.21, 4.84, 1.19, 38.24, 191.21],
            fast: [31.27, 0.78, 4.84, 0.07, 5.69, 59.72],
        },
        Case {
            cells: [47, 13, 14],
            paper_dofs: 30033,
            paper_constraints: 410.58,
            standard: [0.0, 45.47, 5.87, 1.47, 52.81, 264.07],
            fast: [45.16, 0.98, 5.87, 0.06, 6.91, 79.73],
        },
        Case {
            cells: [49, 14, 15],
            paper_dofs: 36069,
            paper_constraints: 482.25,
            standard: [0.0, 64.32, 7.91, 1.87, 74.10, 370.52],
            fast: [63.73, 1.29, 7.91, 0.07, 9.27, 110.10],
        },
    ];
    all.into_iter().take(if quick { 1 } else { 4 }).collect()
}

/// The variants: name, update, Delassus method.
const VARIANTS: [(&str, Update, DelassusMethod); 3] = [
    ("standard", Update::Standard, DelassusMethod::Isodof),
    ("standard-reuse", Update::Standard, DelassusMethod::IsodofReuse),
    ("fast", Update::Fast, DelassusMethod::Isodof),
];

/// `grasp-rotate` with a bar of `cells` between its jaws, run by `update`
/// with `W` by `method`.
fn world(
    cells: [usize; 3],
    update: Update,
    method: DelassusMethod,
    single: bool,
) -> Result<World, BenchError> {
    let mut scene = builtin::load("grasp-rotate")?;
    let size = cells.map(|c| c as f64 * CELL);
    scene.spec.bodies[0].mesh = MeshSpec::Box { size, cells };
    for (jaw, side) in scene.spec.obstacles.iter_mut().zip([-1.0, 1.0]) {
        jaw.shape = Some(ferrofem::obstacle::Shape::Box { size: [0.02, size[1] + 0.02, size[2] + 0.02] });
        jaw.transform.translation[0] = side * (size[0] / 2.0 + 0.01 - SQUEEZE);
    }
    let c = &mut scene.spec.contact;
    (c.alarm_distance, c.speculative) = (0.001, false);
    c.resolution = Resolution::Implicit(ImplicitResolution {
        newton_iterations: NEWTON,
        update,
        direction_tolerance: 0.0,
        violation_tolerance: 0.0,
    });
    scene.spec.constraint_solver = ConstraintSolverSettings::pgs(SWEEPS, 0.0);
    if let Some(ConstraintSolver::Pgs(p)) = &mut scene.spec.constraint_solver.solver {
        p.precision = if single { Precision::Single } else { Precision::Double };
    }
    scene.spec.constraint_solver.delassus = method;
    Ok(scene.build_on(ferrofem_gpu::backend())?)
}

fn median(steps: &[StepStats], f: impl Fn(&StepStats, &CorrectiveRecord) -> f64) -> f64 {
    let mut v: Vec<f64> = steps.iter().filter_map(|s| Some(f(s, s.corrective.as_ref()?))).collect();
    median_p90(&mut v).0
}

/// One row from a variant's timed steps.
fn row(
    case: &Case,
    variant: &'static str,
    w: &World,
    steps: &[StepStats],
    single: bool,
) -> CorrectiveBenchRecord {
    let k = NEWTON as f64;
    let fast = variant == "fast";
    // Standard has no W_H: its first W is one of its Newton iterations.
    let first = |c: &CorrectiveRecord| if fast { 0.0 } else { c.build_ms };
    let rebuild = median(steps, |_, c| (first(c) + c.rebuild_ms) / k);
    let pgs = median(steps, |_, c| c.solve_ms / k);
    let correction = median(steps, |_, c| c.correction_ms / k);
    let newton = median(steps, |_, c| (first(c) + c.rebuild_ms + c.solve_ms + c.correction_ms) / k);
    let total = median(steps, |s, c| {
        c.build_ms + c.rebuild_ms + c.solve_ms + s.stage_ms.get(Stage::Correct).max(c.correction_ms)
    });
    CorrectiveBenchRecord {
        experiment: "table1",
        dofs: w.model.bodies[0].dofs(),
        constraints: median(steps, |s, _| s.contacts as f64) as usize,
        variant,
        pgs_precision: if single { Precision::Single } else { Precision::Double },
        build_mapping_ms: if fast { median(steps, |_, c| c.build_ms) } else { 0.0 },
        rebuild_ms: rebuild,
        pgs_ms: pgs,
        correction_ms: correction,
        newton_iteration_ms: newton,
        total_ms: total,
        update_share: (rebuild + correction) / newton,
        paper: if fast { case.fast } else { case.standard },
        paper_dofs: case.paper_dofs,
        paper_constraints: case.paper_constraints,
        context: Context::now(),
    }
}

/// Runs the table: per size, the three variants a step each in turn.
pub fn bench_corrective(a: CorrectiveArgs) -> Result<(), BenchError> {
    let out = table1(&a)?;
    if let Some(path) = &a.json {
        write_json(path, &out)?;
    }
    Ok(())
}

/// The table's rows (`a.quick`: the smallest size), printed as they are measured.
pub(crate) fn table1(a: &CorrectiveArgs) -> Result<Vec<CorrectiveBenchRecord>, BenchError> {
    let mut out = Vec::new();
    println!(
        "{:>6} {:>5} {:<15} {:>8} {:>8} {:>7} {:>7} {:>8} {:>8} {:>6}   paper: dofs cst newton total",
        "dofs", "cst", "update", "W_H", "rebuild", "pgs", "corr", "newton", "total", "share"
    );
    for case in cases(a.quick) {
        let mut worlds = VARIANTS
            .iter()
            .map(|&(_, u, m)| world(case.cells, u, m, a.single))
            .collect::<Result<Vec<_>, _>>()?;
        let mut steps: Vec<Vec<StepStats>> = vec![Vec::new(); VARIANTS.len()];
        for i in 0..a.steps + 2 {
            for (w, s) in worlds.iter_mut().zip(&mut steps) {
                let stats = w.step()?;
                if i >= 2 {
                    s.push(stats);
                }
            }
        }
        let rows: Vec<_> = VARIANTS
            .iter()
            .zip(&worlds)
            .zip(&steps)
            .map(|((v, w), s)| row(&case, v.0, w, s, a.single))
            .collect();
        for r in &rows {
            println!(
                "{:>6} {:>5} {:<15} {:>8.2} {:>8.2} {:>7.2} {:>7.2} {:>8.2} {:>8.2} {:>5.1}%   {} {:.0} {:.2} {:.2}",
                r.dofs, r.constraints, r.variant, r.build_mapping_ms, r.rebuild_ms, r.pgs_ms, r.correction_ms,
                r.newton_iteration_ms, r.total_ms, 100.0 * r.update_share, case.paper_dofs,
                case.paper_constraints, r.paper[4], r.paper[5]
            );
        }
        let (std, fast) = (&rows[0], &rows[2]);
        println!(
            "       fast vs standard: {:.2}× per Newton iteration, {:.2}× whole scheme (paper {:.2}×, {:.2}×)",
            std.newton_iteration_ms / fast.newton_iteration_ms,
            std.total_ms / fast.total_ms,
            case.standard[4] / case.fast[4],
            case.standard[5] / case.fast[5]
        );
        out.extend(rows);
    }
    Ok(out)
}
