//! zeng2022 (isodof): Table 1 (the whole step on the raptor, W by each
//! method), Table 2 (assembled W against the unbuilt scheme) and Table 3
//! (W by reuse in the application scenes).

use std::path::Path;

use ferrofem::delassus::DelassusMethod;
use ferrofem::integrator::Refresh;
use ferrofem::scene::{builtin, MeshSpec, Scene};
use ferrofem::stats::{median_p90, Stage, StepStats};

use super::row::{thousands, PaperRow, Table};
use super::PapersArgs;
use crate::delassus::{self, DelassusArgs, DelassusBenchRecord};
use crate::lg_contact::median;
use crate::BenchError;

const HARDWARE: &str = "Ryzen 9 5950X (16 cores) + GeForce RTX 3080";

fn table(table: &'static str) -> Table {
    Table { paper: "zeng2022", table, hardware: HARDWARE }
}

/// Tables 1–3 (`quick`: Table 1's W, Table 2's limited contact, Table 3's smallest scene).
pub(crate) fn rows(a: &PapersArgs) -> Result<Vec<PaperRow>, BenchError> {
    let mut rows = table1(a)?;
    rows.extend(table2(a)?);
    rows.extend(table3(a)?);
    Ok(rows)
}

fn delassus_records(a: &PapersArgs, only: &str) -> Result<Vec<DelassusBenchRecord>, BenchError> {
    delassus::records(&DelassusArgs {
        quick: false,
        json: None,
        plots: None,
        meshes: a.meshes.clone(),
        repeats: if a.quick { 1 } else { 3 },
        peers: false,
        only: Some(only.into()),
        device: None,
    })
}

fn size(r: &DelassusBenchRecord) -> String {
    format!("{}: {} DOFs, {} constraints", r.case, thousands(r.dofs), thousands(r.constraints))
}

/// Table 1: W by [CAK*14] (dense), isodof and reuse on the raptor of 59k
/// DOFs with 2,250 constraints; with the whole step of the reuse row from
/// `benchmarks/scenes/raptor-60k.toml` (not in `--quick`).
fn table1(a: &PapersArgs) -> Result<Vec<PaperRow>, BenchError> {
    let t = table("Table 1");
    let paper_size = "raptor: 59,529 DOFs, 2,250 constraints";
    let (records, pardiso) = delassus::table1_paper_case(&a.meshes, if a.quick { 1 } else { 3 }, !a.quick)?;
    let raptor = records.iter().any(|r| r.case.starts_with("raptor"));
    let case = |r: &&DelassusBenchRecord| r.case.starts_with("raptor") == raptor;
    let mut rows = Vec::new();
    for (row, method, paper) in
        [("[CAK*14]", "dense", 554.15), ("isodof", "isodof", 13.53), ("reuse isodof", "isodof-reuse", 6.56)]
    {
        let ours = records.iter().filter(case).find(|r| r.method == method);
        let mut r = t.row(row, "Build W (ms)", Some(paper), paper_size);
        if let Some(o) = ours {
            r = r.ours(o.build_ms, size(o));
        }
        if !raptor {
            r = r.note("the raptor mesh is absent: a ball of the same DOFs");
        }
        rows.push(r);
    }
    let our_size = records.iter().find(case).map(size).unwrap_or_default();
    rows.extend(pardiso_rows(&t, paper_size, &our_size, pardiso.as_ref(), a.quick));
    let stages = [
        ("Free motion (ms)", 42.45, Some(Stage::FreeMotion)),
        ("Build W (ms), in the step", 6.56, Some(Stage::BuildDelassus)),
        ("GS (ms)", 46.58, Some(Stage::SolveConstraints)),
        ("Corr. (ms)", 3.82, Some(Stage::Correct)),
        ("Step (ms)", 125.63, None),
    ];
    let steps = if a.quick { None } else { raptor_steps(a)? };
    for (quantity, paper, stage) in stages {
        let mut r = t.row("reuse isodof, whole step", quantity, Some(paper), paper_size);
        match &steps {
            Some((steps, size)) => {
                let v = median(steps, |s| stage.map_or(s.step_ms, |st| s.stage_ms.get(st)));
                r = r.ours(v, size.clone()).note(
                    "implicit Euler, PCG cut at 10 iterations as the paper's, preconditioned by an LDLᵀ \
                     refreshed every 10 steps in the background; the paper's Trans. (26.22 ms, W copied \
                     from its GPU) has no counterpart",
                );
            }
            None => r = r.note("whole step not run in `--quick` (or the raptor mesh is absent)"),
        }
        rows.push(r);
    }
    Ok(rows)
}

/// The paper's direct-solver rows (Pardiso on 16 threads: its augmented
/// system factorized, the factor used for the free motion, W and the
/// correction) beside Intel MKL PARDISO on the same `A` and `H` as the W
/// rows (`pardiso`: the peer's step and its W's difference to ours; `None`
/// when it did not run). Its Gauss–Seidel is ours on the same W, so the
/// step is compared without it.
fn pardiso_rows(
    t: &Table,
    paper_size: &str,
    our_size: &str,
    pardiso: Option<&delassus::PardisoCheck>,
    quick: bool,
) -> Vec<PaperRow> {
    let quantities = [
        ("Build + Fac. (ms)", 1129.72),
        ("Build W (ms)", 57.49),
        ("Free motion (ms)", 37.7),
        ("Corr. (ms)", 26.32),
        ("Step without GS (ms)", 1308.69 - 57.46),
    ];
    let Some((p, diff)) = pardiso else {
        let why = match quick {
            true => "PARDISO runs in the full run only (`benchmarks/peers/pardiso_step.py`)",
            false => "Intel MKL PARDISO could not run here (`benchmarks/peers/pardiso_step.py` installs the `mkl` wheel)",
        };
        return quantities
            .iter()
            .map(|&(q, v)| t.row("Pardiso-16", q, Some(v), paper_size).note(why))
            .collect();
    };
    let values = [
        p.analysis_ms + p.factor_a_ms,
        (p.factor_schur_ms - p.factor_a_ms).max(0.0),
        p.free_ms,
        p.corr_ms,
        p.analysis_ms + p.factor_schur_ms + p.free_ms + p.corr_ms,
    ];
    let version = p.version.split(" Version ").nth(1).and_then(|v| v.split('-').next()).unwrap_or(&p.version);
    let note = format!(
        "Intel MKL PARDISO {version} on {} threads (the paper's on 16), on the same A and H as the W rows: \
         [A Hᵀ; H 0] factorized with the Schur complement on H's rows (W = −S, within {diff:.1e} of ours); \
         free motion and correction by its partial solves. Build + Fac. is the analysis of the augmented \
         system and the factorization of A alone (the paper's includes the assembly), Build W the \
         factorization with the Schur complement less that; the step leaves out the Gauss–Seidel, ours on \
         the same W",
        p.threads
    );
    quantities
        .iter()
        .zip(values)
        .map(|(&(q, v), ours)| {
            t.row("Pardiso-16", q, Some(v), paper_size).ours(ours, our_size).note(note.clone())
        })
        .collect()
}

/// The raptor-on-a-plane scene's timed steps and its size.
fn raptor_steps(a: &PapersArgs) -> Result<Option<(Vec<StepStats>, String)>, BenchError> {
    let Some((_, mesh)) =
        crate::factor::raptor_cases(&a.meshes).into_iter().find(|(n, _)| n.ends_with("20k"))
    else {
        return Ok(None);
    };
    let mut scene = crate::scenes::template("raptor-60k")?;
    scene.spec.bodies[0].mesh = mesh;
    // The paper's free motion: PCG cut at 10 iterations (Table 1's "10#it"); its
    // factor, refreshed every 10 steps in the background, ages as in the paper.
    scene.spec.implicit_euler.max_iterations = Some(10);
    let mut w = scene.build_on(ferrofem_gpu::backend())?;
    for _ in 0..2 {
        w.step()?;
    }
    let steps: Vec<StepStats> = (0..a.frames.clamp(1, 5)).map(|_| w.step()).collect::<Result<_, _>>()?;
    let contacts = steps.iter().map(|s| s.contacts).max().unwrap_or(0);
    let size =
        format!("raptor 20k: {} DOFs, {} contacts", thousands(w.model.bodies[0].dofs()), thousands(contacts));
    Ok(Some((steps, size)))
}

/// Table 2: the overhead of building W (reuse) against the unbuilt
/// scheme's LDLᵀ solve per PGS iteration, on a ball pressed on a floor
/// with each example's DOFs and constraints.
fn table2(a: &PapersArgs) -> Result<Vec<PaperRow>, BenchError> {
    let t = table("Table 2");
    let records = delassus_records(a, "table2")?;
    let mut rows = Vec::new();
    let examples = [
        ("Pass Torus", "limited", "31,302 DOFs, 227.7 constraints", 2.19, 1.61, 16.1, 322.0),
        ("Rich Contact", "rich", "6,561 DOFs, 1,328.4 constraints", 2.03, 0.61, 6.1, 122.0),
    ];
    for (example, kind, paper_size, overhead, solve, extra10, extra200) in examples {
        if a.quick && kind == "rich" {
            continue;
        }
        let of = |m: &str| records.iter().find(|r| r.case.contains(kind) && r.method == m);
        let (reuse, solve_ms) = (of("isodof-reuse"), of("isodof").map(|r| r.solve_ms));
        let quantities = [
            ("Overhead: build W, reuse (ms)", overhead, reuse.map(|r| r.build_ms)),
            ("Solving LDLᵀ, one (ms)", solve, solve_ms),
            ("Unbuilt extra cost, 10 PGS iterations (ms)", extra10, solve_ms.map(|s| 10.0 * s)),
            ("Unbuilt extra cost, 200 PGS iterations (ms)", extra200, solve_ms.map(|s| 200.0 * s)),
        ];
        for (quantity, paper, ours) in quantities {
            let mut r = t.row(example, quantity, Some(paper), paper_size);
            if let (Some(v), Some(rec)) = (ours, reuse) {
                r = r.ours(v, size(rec));
            }
            rows.push(
                r.note("a ball pressed on a floor at the example's DOFs and constraints (`bench delassus`)"),
            );
        }
    }
    Ok(rows)
}

/// A Table 3 scene from the folder of shared meshes; `None` when absent.
type SceneFn = fn(&Path) -> Result<Option<Scene>, BenchError>;

/// One application of Table 3: the paper's figures and our scene.
struct Application {
    example: &'static str,
    dofs: &'static str,
    constraints: f64,
    step: f64,
    w: f64,
    speedup: f64,
    /// The scene, given the folder of shared meshes (`None`: a mesh is absent).
    scene: SceneFn,
    note: &'static str,
}

fn torus_pass(_: &Path) -> Result<Option<Scene>, BenchError> {
    // The ball at the paper's 31,302 DOFs (31,944), its LDLᵀ refreshed in
    // the background every 10 steps as the paper's asynchronous preconditioner.
    let mut scene = builtin::load("torus-pass")?;
    scene.spec.bodies[0].mesh = MeshSpec::Ball { radius: 0.12, resolution: 21 };
    in_background(&mut scene);
    Ok(Some(scene))
}

/// The factor refreshed in the background every 10 steps (the paper's
/// asynchronous preconditioner), so that W is reused between refreshes.
fn in_background(scene: &mut Scene) {
    scene.spec.implicit_euler.refresh = Refresh { every: 10, asynchronous: true, ..Refresh::default() };
}

fn pad_on_sphere(_: &Path) -> Result<Option<Scene>, BenchError> {
    Ok(Some(builtin::load("pad-on-sphere")?))
}

fn hetero_stack(_: &Path) -> Result<Option<Scene>, BenchError> {
    // Contact points 6 cm apart on each face: about the paper's count.
    let mut scene = builtin::load("hetero-stack")?;
    scene.spec.bodies.iter_mut().for_each(|b| b.contact_spacing = Some(0.06));
    Ok(Some(scene))
}

fn stacking(_: &Path) -> Result<Option<Scene>, BenchError> {
    // The paper's 30,240 DOFs: five boxes of 12×12×14 vertices; contact
    // points 4 cm apart (≈ the paper's 163 constraints); the factor
    // refreshed in the background every 10 steps, so that W is reused.
    let mut scene = builtin::load("stack-256")?;
    for body in &mut scene.spec.bodies {
        body.mesh = MeshSpec::Box { size: [0.1; 3], cells: [11, 11, 13] };
        body.contact_spacing = Some(0.04);
    }
    in_background(&mut scene);
    Ok(Some(scene))
}

fn ten_tori(_: &Path) -> Result<Option<Scene>, BenchError> {
    // The factors refreshed every 10 steps in the background and warped by
    // each torus's turn (as the rolling cylinder), so that W is reused:
    // with the scene's factor of every step no isodof ever is.
    let mut scene = builtin::load("ten-tori")?;
    in_background(&mut scene);
    scene.spec.implicit_euler.warp = true;
    Ok(Some(scene))
}

fn rolling_cylinder(_: &Path) -> Result<Option<Scene>, BenchError> {
    // The cylinder at the paper's 26,082 DOFs (26,460).
    let mut scene = builtin::load("rolling-cylinder")?;
    scene.spec.bodies[0].mesh =
        MeshSpec::Cylinder { radius: 0.05, length: 0.1, resolution: 20, length_cells: 19 };
    Ok(Some(scene))
}

fn hetero_armadillo(meshes: &Path) -> Result<Option<Scene>, BenchError> {
    crate::scenes::external("hetero-armadillo", meshes)
}

fn needle_liver(meshes: &Path) -> Result<Option<Scene>, BenchError> {
    // Table 3's 12,555 DOFs: the 3k liver (8,466 DOFs) is nearer than the
    // figure's 10k (30,750); same frame, so the needle and the fixed back hold.
    let mut scene = crate::scenes::external("needle-liver", meshes)?;
    if let Some(MeshSpec::File { path, .. }) = scene.as_mut().map(|s| &mut s.spec.bodies[0].mesh) {
        *path = path.replace("liver_tet_10k.msh", "liver_tet_3k.msh");
    }
    Ok(scene)
}

fn gripper_raptor(meshes: &Path) -> Result<Option<Scene>, BenchError> {
    crate::scenes::external("gripper-raptor", meshes)
}

fn applications() -> [Application; 9] {
    let app = |example, dofs, constraints, step, w, speedup, scene, note| Application {
        example,
        dofs,
        constraints,
        step,
        w,
        speedup,
        scene,
        note,
    };
    [
        app(
            "Pass Torus", "31,302", 227.7, 109.2, 2.19, 12.89, torus_pass,
            "built-in `torus-pass`, its ball at the paper's DOFs (a generated ball, not the armadillo); \
                   the pusher and the ring touch ≈ 1,000 of its surface vertices where the paper's collision \
                   model has ≈ 76 contacts, and W's cost grows with their square; contact points 3 cm apart on \
                   the ball with the ring as a triangle mesh (so that its tube cannot pass between them) give \
                   1,509 constraints, 1.7 cm of penetration and W in 85 ms; against the analytic ring, points \
                   2–5 cm apart let the surface between them sink about an element into the ring (up to \
                   1.3 cm, past the 1 cm alarm distance, in 116–130 of the 160 steps) until the interior \
                   vertices beneath meet it, so 190–220 contacts a step remain, W in 2.3–2.8 ms",
        ),
        app(
            "Multi-torus", "3,357 × 10", 323.28, 89.81, 8.83, 3.87, ten_tori,
            "built-in `ten-tori`: ten generated tori of 960 DOFs each (the paper's have 3,357; \
                   at that size every torus surface vertex is a contact candidate and the pile's W has \
                   ≈ 9,000 rows, a quarter of a minute a step; with contact points 2 or 3 cm apart, \
                   1,269 or 805 constraints, and the tori sink 8–9 mm into each other, past their 4 mm \
                   alarm distance: the paper's 323 need a coarser collision model than a torus of \
                   4.4 cm tubes allows); the factors refreshed every 10 steps in the background and \
                   warped, so that W is reused (the scene refactorizes every step), and PGS reads \
                   each torus's W_b apart (a pile's rows couple two tori each: 40 % of the assembled \
                   block's entries, and no assembly)",
        ),
        app(
            "Rolling", "26,082", 537.99, 36.56, 5.06, 14.27, rolling_cylinder,
            "built-in `rolling-cylinder` at the paper's DOFs, h = 5 ms (the paper's step is not stated); \
                   W by reuse, measured inside: ≈ 60 of the step's ≈ 540 isodofs are new and solved \
                   through the cylinder's top separators as two ranges of 30 columns side by side \
                   (≈ 6 ms, BLAS-3 per supernode), their products with the cached columns 2.3–3.7 ms, \
                   W's expansion ≈ 1 ms; a factor refreshed every 10 steps rebuilds all of them (≈ 40 ms)",
        ),
        app(
            "Hetero-Material", "31,302", 270.96, 156.17, 2.14, 19.84, hetero_armadillo,
            "`scenes/external/hetero-armadillo.toml`: fTetWild's 8.8k-vertex armadillo of the shared \
                   meshes (the paper's has 10.4k), a 10× stiffer torso and head, an icosphere pushed into its belly",
        ),
        app(
            "Needle Insertion", "12,555", 96.84, 25.56, 3.29, 1.86, needle_liver,
            "`scenes/external/needle-liver.toml` on fTetWild's 2.8k-vertex liver of the shared meshes: \
                   the needle's tip presses the surface to its 1 N puncture, then a point of tissue every \
                   mean tet edge (1 cm) is held on the shaft (two bilateral rows across it, friction along it); constraints \
                   count the tip's contact and the shaft's points",
        ),
        app(
            "Rich Contact", "6,561", 1235.40, 24.95, 2.03, 14.98, pad_on_sphere,
            "built-in `pad-on-sphere`: the 27×27×3 pad dropped on a rigid sphere",
        ),
        app(
            "Stacking", "30,240", 163.26, 121.54, 4.00, 1.00, stacking,
            "built-in `stack-256` (five boxes, each 4× heavier than the one under it, under the \
                   non-smooth Newton) at the paper's DOFs, contact points 4 cm apart on each face, the factor \
                   refreshed every 10 steps in the background",
        ),
        app(
            "Hetero-Stacking", "2,205", 240.0, 18.86, 1.69, 1.04, hetero_stack,
            "built-in `hetero-stack` at the paper's DOFs with `contact_spacing = 0.06` on each pad \
                   (a contact point every 6 cm of a face, ≈ 220 constraints; every face vertex would make \
                   1,323 and a 349 ms step); PGS still ends most steps at its 1,000-sweep cap",
        ),
        app(
            "Catch Raptor", "30,033", 486.59, 144.76, 0.73, 64.00, gripper_raptor,
            "`scenes/external/gripper-raptor.toml`: two soft fingers of 474 DOFs (SoftRobots' \
                   CableGripper finger) driven by their bases squeeze, lift, carry and set down fTetWild's \
                   9.5k-vertex raptor of the shared meshes; PGS at its 300-sweep cap in most steps",
        ),
    ]
}

/// Table 3: per application, the step and W by reuse over the steps with
/// contact, W's share of the step, and the speed-up over [CAK*14] (dense
/// W, measured on copies of the state at up to 3 of those steps).
fn table3(a: &PapersArgs) -> Result<Vec<PaperRow>, BenchError> {
    let t = table("Table 3");
    let mut rows = Vec::new();
    for app in applications() {
        let paper_size = format!("{} DOFs, {} constraints", app.dofs, app.constraints);
        let runs = (!a.quick || app.example == "Rich Contact").then_some(app.scene);
        // A run that fails is reported in its rows' note, and the table goes on.
        let measured = runs.map(|scene| {
            scene(&a.meshes).and_then(|s| s.map(|s| run_application(s, a.frames.min(3))).transpose())
        });
        let quantities = [
            ("Time step (ms)", app.step),
            ("Build W, reuse (ms)", app.w),
            ("W share of the step (%)", 100.0 * app.w / app.step),
            ("Speed-up of reuse over [CAK*14]", app.speedup),
        ];
        for (i, (quantity, paper)) in quantities.into_iter().enumerate() {
            let mut r = t.row(app.example, quantity, Some(paper), paper_size.clone());
            r = match &measured {
                Some(Ok(Some(m))) => r.ours(m.figures[i], m.size.clone()).note(app.note),
                Some(Ok(None)) => r.note("its mesh is absent (`--meshes`)"),
                Some(Err(e)) => r.note(format!("our run stopped: {e}")),
                None => r.note("not run in `--quick`"),
            };
            rows.push(r);
        }
    }
    Ok(rows)
}

/// Our figures of a Table 3 application, in its quantities' order.
struct Measured {
    figures: [f64; 4],
    size: String,
}

/// A step's contacts and needle shaft points: the groups Table 3 counts.
fn constraint_groups(s: &StepStats) -> usize {
    s.contacts + s.needles.iter().map(|n| n.shaft_points).sum::<usize>()
}

/// Runs the scene's full length with W by reuse; at up to `probes` of its
/// steps with contact, spaced through the run, the same step from the same
/// state is taken by a second world with W dense.
fn run_application(mut scene: Scene, probes: usize) -> Result<Measured, BenchError> {
    scene.spec.constraint_solver.delassus = DelassusMethod::IsodofReuse;
    let mut w = scene.build_on(ferrofem_gpu::backend())?;
    scene.spec.constraint_solver.delassus = DelassusMethod::Dense;
    let mut dense = scene.build_on(ferrofem_gpu::backend())?;
    let total = scene.spec.simulation.steps;
    let stride = (total / probes.max(1)).max(1);
    let (mut steps, mut dense_w, mut reuse_w) = (Vec::new(), Vec::new(), Vec::new());
    for i in 0..total {
        let before = w.state.clone();
        let s = w.step()?;
        if constraint_groups(&s) > 0 {
            if i % stride == 0 || dense_w.is_empty() && i + 1 == total {
                dense.state = before;
                dense_w.push(dense.step()?.stage_ms.get(Stage::BuildDelassus));
                reuse_w.push(s.stage_ms.get(Stage::BuildDelassus));
            }
            steps.push(s);
        }
    }
    if steps.is_empty() {
        return Err(BenchError::Other(format!("{}: no step had a contact or a needle's shaft", scene.label)));
    }
    let step = median(&steps, |s| s.step_ms);
    let build = median(&steps, |s| s.stage_ms.get(Stage::BuildDelassus));
    let speedup = median_p90(&mut dense_w).0 / median_p90(&mut reuse_w).0;
    let dofs: usize = w.model.bodies.iter().map(|b| b.dofs()).sum();
    // The paper's counts are means over the run (227.7, 1,235.40, …).
    let groups = steps.iter().map(|s| constraint_groups(s) as f64).sum::<f64>() / steps.len() as f64;
    let size = format!(
        "{} DOFs, {:.1} constraints (mean; contacts and shaft points × 3)",
        thousands(dofs),
        3.0 * groups
    );
    Ok(Measured { figures: [step, build, 100.0 * build / step, speedup], size })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::peers::PardisoStep;

    /// The Pardiso rows put the peer's phases where the paper's columns
    /// are: Build + Fac. is the analysis and the factorization of `A`, W
    /// the Schur complement's share of the augmented factorization, the
    /// step their sum with both motions; without a run, the paper's
    /// figures stay with a note that says why.
    #[test]
    fn pardiso_rows_follow_the_papers_columns() {
        let t = table("Table 1");
        let step = PardisoStep {
            analysis_ms: 100.0,
            factor_schur_ms: 700.0,
            factor_a_ms: 600.0,
            free_ms: 20.0,
            corr_ms: 15.0,
            threads: 2,
            version: "Intel(R) oneAPI Math Kernel Library Version 2026.2-Product Build 1".into(),
            w_times_probe: vec![],
        };
        let rows = pardiso_rows(&t, "paper", "ours", Some(&(step, 3e-12)), false);
        let ours: Vec<_> = rows.iter().map(|r| (r.quantity.as_str(), r.ours, r.paper_value)).collect();
        assert_eq!(
            ours,
            [
                ("Build + Fac. (ms)", Some(700.0), Some(1129.72)),
                ("Build W (ms)", Some(100.0), Some(57.49)),
                ("Free motion (ms)", Some(20.0), Some(37.7)),
                ("Corr. (ms)", Some(15.0), Some(26.32)),
                ("Step without GS (ms)", Some(835.0), Some(1308.69 - 57.46)),
            ]
        );
        let note = rows[0].note.as_deref().unwrap_or_default();
        assert!(note.contains("PARDISO 2026.2 on 2 threads") && note.contains("3.0e-12"), "{note}");
        let absent = pardiso_rows(&t, "paper", "ours", None, true);
        assert!(absent.iter().all(|r| r.ours.is_none() && r.paper_value.is_some() && r.note.is_some()));
    }
}
