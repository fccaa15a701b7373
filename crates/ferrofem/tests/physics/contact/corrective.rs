//! Implicit constraint resolution (zeng-implicit §5–6): recursive
//! corrective motion, with `W_k` rebuilt from the factor (standard) or
//! formed from `W_H` (fast).

use ferrofem::collision::{ImplicitResolution, Resolution, Update};
use ferrofem::delassus::DelassusMethod;
use ferrofem::integrator::{PreconditionerKind, Refresh};
use ferrofem::scene::{BodySpec, MeshSpec, ObstacleSpec, SceneBuilder};
use ferrofem::solver::ConstraintSolverSettings;
use ferrofem::World;

use crate::common;

/// A built-in scene with a fixed number of PGS sweeps (tolerance 0, so
/// that two runs stop at the same sweep), `W` by isodof-reuse and
/// explicit resolution; `steps` steps taken.
fn scene_after(name: &str, steps: usize) -> World {
    let mut w = common::builtin(name, |s| {
        s.spec.constraint_solver = ConstraintSolverSettings::pgs(100, 0.0);
        s.spec.constraint_solver.delassus = DelassusMethod::IsodofReuse;
        s.spec.contact.resolution = Resolution::Explicit;
    });
    for _ in 0..steps {
        w.step().unwrap();
    }
    w
}

/// `k` Newton iterations exactly (tolerances 0) with `update`.
fn implicit(k: usize, update: Update) -> Resolution {
    Resolution::Implicit(ImplicitResolution {
        newton_iterations: k,
        update,
        direction_tolerance: 0.0,
        violation_tolerance: 0.0,
    })
}

fn positions(w: &World) -> Vec<f64> {
    w.state.bodies.iter().flat_map(|b| b.positions.iter().copied()).collect()
}

fn max_diff(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| (x - y).abs()).fold(0.0, f64::max)
}

fn max_abs(a: &[f64]) -> f64 {
    a.iter().map(|x| x.abs()).fold(0.0, f64::max)
}

/// After `warmup` explicit steps, one step with `resolution`: the positions.
fn one_step(name: &str, warmup: usize, resolution: Resolution) -> (Vec<f64>, ferrofem::stats::StepStats) {
    let mut w = scene_after(name, warmup);
    w.model.contact.resolution = resolution;
    let s = w.step().unwrap();
    (positions(&w), s)
}

#[test]
fn fast_and_standard_updates_agree_after_each_newton_iteration() {
    common::one_worker(|| {
        for (name, warmup) in [("drop", 21), ("stack", 3), ("grasp-rotate", 3)] {
            let mut previous: Option<Vec<f64>> = None;
            let mut moved = 0.0f64;
            for k in 1..=3 {
                let (fast, s) = one_step(name, warmup, implicit(k, Update::Fast));
                let (standard, _) = one_step(name, warmup, implicit(k, Update::Standard));
                assert!(s.contacts > 0, "{name}: no contact to resolve");
                assert_eq!(s.corrective.unwrap().iterations, k);
                let rel = max_diff(&fast, &standard) / max_abs(&standard);
                assert!(rel < 1e-10, "{name}, iteration {k}: fast and standard differ by {rel:e}");
                if let Some(p) = &previous {
                    moved = moved.max(max_diff(p, &standard));
                }
                previous = Some(standard);
            }
            // On the twisted cube the re-linearization moves the result (the
            // comparison is not between two copies of the explicit step).
            if name == "grasp-rotate" {
                assert!(moved > 1e-5, "{name}: iterations 2–3 moved the body by only {moved:e} m");
            }
        }
    })
}

#[test]
fn one_newton_iteration_is_the_explicit_scheme() {
    common::one_worker(|| {
        let (explicit, _) = one_step("grasp-rotate", 3, Resolution::Explicit);
        for update in [Update::Standard, Update::Fast] {
            let (one, s) = one_step("grasp-rotate", 3, implicit(1, update));
            let rel = max_diff(&one, &explicit) / max_abs(&explicit);
            assert!(rel < 1e-12, "{update:?}: {rel:e}");
            let c = s.corrective.unwrap();
            assert_eq!(c.violation_before, c.violation_after);
            assert!((c.violation_after - s.end_violation).abs() < 1e-12, "{c:?} vs {}", s.end_violation);
        }
    })
}

/// The cube of `grasp-rotate` after 2 s with `resolution`: the largest
/// end-of-step violation, the centroid's distance from where the jaws hold
/// it, and how far its turn lags the jaws' (rad).
fn twisted_cube(resolution: Resolution) -> (f64, f64, f64) {
    let mut w = scene_after("grasp-rotate", 0);
    w.model.contact.resolution = resolution;
    let mut worst = 0.0f64;
    for _ in 0..200 {
        worst = worst.max(w.step().unwrap().end_violation);
    }
    let x = &w.state.bodies[0].positions;
    let n = x.len() / 3;
    let centroid: [f64; 3] = std::array::from_fn(|d| (0..n).map(|i| x[3 * i + d]).sum::<f64>() / n as f64);
    let off = ((centroid[0]).powi(2) + centroid[1].powi(2) + (centroid[2] - 0.1).powi(2)).sqrt();
    // The turn of the cube: the mean angle of its vertices about the axis
    // against their rest angle, less the jaws' turn ω t (mod 2π).
    let rest = w.model.bodies[0].rest_vertices();
    let lag: f64 = (0..n)
        .filter(|&i| rest[i][0].hypot(rest[i][1]) > 0.02)
        .map(|i| {
            let turned = x[3 * i + 1].atan2(x[3 * i]) - rest[i][1].atan2(rest[i][0]);
            let d = turned - 9.42477796 * w.state.time;
            d.sin().atan2(d.cos())
        })
        .sum::<f64>()
        / (0..n).filter(|&i| rest[i][0].hypot(rest[i][1]) > 0.02).count() as f64;
    (worst, off, lag)
}

#[test]
fn implicit_resolution_holds_the_twisted_cube_on_the_jaws() {
    common::one_worker(|| {
        let (explicit, off_e, lag_e) = twisted_cube(Resolution::Explicit);
        let (implicit, off_i, lag_i) = twisted_cube(Resolution::Implicit(ImplicitResolution::default()));
        eprintln!("explicit: violation {explicit:e} m, centroid off {off_e:e} m, lag {lag_e:e} rad");
        eprintln!("implicit: violation {implicit:e} m, centroid off {off_i:e} m, lag {lag_i:e} rad");
        assert!(implicit * 10.0 < explicit, "implicit {implicit:e} m vs explicit {explicit:e} m");
        assert!(off_i < 2e-3, "the cube slipped: its centroid is {off_i:e} m from the grasp");
        assert!(lag_i.abs() < 0.02, "the cube does not turn with the jaws: lag {lag_i} rad");
    })
}

/// A soft block on a turning pillar given as a triangle mesh: the pillar's
/// top vertices hold the block's triangles (contacts whose normal is the
/// triangle's), its faces the block's vertices (the mesh's signed distance).
fn block_on_turning_pillar() -> World {
    let block = BodySpec::new("block", MeshSpec::cube(0.2, 3), 1e6, 0.3, 1000.0).at([0.0, 0.0, 0.1]);
    let pillar = ObstacleSpec::mesh("pillar", MeshSpec::Box { size: [0.03, 0.03, 0.2], cells: [1, 1, 2] })
        .at([0.0, 0.0, -0.1])
        .rotated([0.0, 0.0, 10.0])
        .friction(0.5)
        .moving([0.0, 0.3, 0.0])
        .with(|o| o.motion.angular_velocity = [0.0, 0.0, 6.0]);
    SceneBuilder::new(0.01)
        .pcg(100, 1e-10)
        .implicit_euler(|s| {
            s.preconditioner = PreconditionerKind::Ldlt;
            s.refresh = Refresh { every: 1, asynchronous: false, ..Default::default() };
        })
        .contact(|c| c.alarm_distance = 0.01)
        .pgs(100, 0.0)
        .constraint_solver(|c| c.delassus = DelassusMethod::IsodofReuse)
        .body(block.damping(2.0, 0.01))
        .obstacle(pillar)
        .world()
        .unwrap()
}

#[test]
fn mesh_obstacle_contacts_relinearize_the_same_way_in_both_updates() {
    common::one_worker(|| {
        let run = |resolution: Resolution| {
            let mut w = block_on_turning_pillar();
            for _ in 0..4 {
                w.step().unwrap();
            }
            w.model.contact.resolution = resolution;
            let s = w.step().unwrap();
            let kinds = w.contacts().obstacle[0]
                .iter()
                .map(|c| matches!(c.feature, ferrofem::collision::ObstacleFeature::Vertex(_)))
                .collect::<Vec<_>>();
            (positions(&w), s, kinds)
        };
        let (explicit, _, kinds) = run(Resolution::Explicit);
        assert!(kinds.iter().any(|&v| v), "no pillar vertex holds a block triangle");
        let (one, _, _) = run(implicit(1, Update::Fast));
        assert!(max_diff(&one, &explicit) / max_abs(&explicit) < 1e-12);
        for k in 2..=3 {
            let (fast, s, _) = run(implicit(k, Update::Fast));
            let (standard, _, _) = run(implicit(k, Update::Standard));
            let rel = max_diff(&fast, &standard) / max_abs(&standard);
            assert!(rel < 1e-10, "iteration {k}: {rel:e}");
            let c = s.corrective.unwrap();
            assert!(c.direction_change.is_finite() && c.violation_after <= c.violation_before, "{c:?}");
        }
    })
}
