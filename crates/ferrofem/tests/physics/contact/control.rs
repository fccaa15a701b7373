//! Control between steps (`World::attach`, `set_prescribed`,
//! `set_obstacle_pose`, `set_velocities`): grabs hold a body's weight,
//! placed vertices land on their targets, steered obstacles push at their
//! velocity, and bad input is refused by name.

use crate::common;
use ferrofem::obstacle::Shape;
use ferrofem::scene::{BodySpec, MeshSpec, ObstacleSpec, SceneBuilder};
use ferrofem::World;
use nalgebra::{Rotation3, Vector3};

/// A soft cube of 0.1 m, free under gravity, advanced by implicit Euler
/// or (`local_global`) by 20 local-global iterations a step.
fn hanging_cube(local_global: bool) -> World {
    let cube = BodySpec::new("cube", MeshSpec::cube(0.1, 3), 2e5, 0.3, 1000.0);
    let scene = SceneBuilder::new(0.01);
    // Local-global has no Rayleigh damping; implicit Euler's own numerical
    // dissipation settles it.
    let scene = match local_global {
        true => scene.local_global_settings(|s| s.iterations = 20).body(cube),
        false => scene.body(cube.damping(4.0, 0.005)),
    };
    scene.world().unwrap()
}

/// The top vertex nearest the cube's top-face centre.
fn top_centre(w: &World) -> usize {
    let x = &w.state.bodies[0].positions;
    (0..x.len() / 3)
        .min_by(|&a, &b| {
            let d = |v: usize| (x[3 * v] - 0.0).hypot(x[3 * v + 1]) - x[3 * v + 2];
            d(a).total_cmp(&d(b))
        })
        .unwrap()
}

/// A body grabbed at one vertex and held still hangs from it: averaged
/// over the last second of a damped 3 s hang, the grab's force equals the
/// body's weight within 2 %, under both integrators.
#[test]
fn grab_holds_the_weight() {
    common::one_worker(|| {
        for local_global in [false, true] {
            let integrator = if local_global { "local-global" } else { "implicit-euler" };
            let mut w = hanging_cube(local_global);
            let v = top_centre(&w);
            let x = &w.state.bodies[0].positions;
            let target = [x[3 * v], x[3 * v + 1], x[3 * v + 2]];
            w.attach(0, v, target).unwrap();
            let weight = w.model.bodies[0].total_mass() * 9.81;
            let (mut sum, mut n) = (0.0, 0);
            for step in 0..300 {
                w.step().unwrap();
                if step >= 200 {
                    let forces = w.attachment_forces(0);
                    assert_eq!(forces.len(), 1);
                    sum += forces[0].1[2];
                    n += 1;
                }
            }
            let mean = sum / n as f64;
            assert!(
                (mean - weight).abs() < 0.02 * weight,
                "{integrator}: grab force {mean} N, weight {weight} N"
            );
            let held = &w.state.bodies[0].positions[3 * v..3 * v + 3];
            assert!(
                (0..3).all(|d| (held[d] - target[d]).abs() < 1e-6),
                "{integrator}: grabbed vertex at {held:?}"
            );
            // Released, the body falls freely: its centre drops by g t²/2.
            assert!(w.detach(0, v).unwrap());
            let before = w.state.bodies[0].center_of_mass(&w.model.bodies[0])[2];
            for _ in 0..10 {
                w.step().unwrap();
            }
            assert!(w.attachment_forces(0).is_empty() && w.constraints().problem.groups.is_empty());
            let drop = before - w.state.bodies[0].center_of_mass(&w.model.bodies[0])[2];
            assert!(drop > 0.02, "{integrator}: released body dropped only {drop} m in 0.1 s");
        }
    })
}

/// A grab that moves drags the grabbed vertex onto each new target at the
/// end of the step.
#[test]
fn moving_grab_follows_its_target() {
    common::one_worker(|| {
        let mut w = hanging_cube(false);
        let v = top_centre(&w);
        let start = Vector3::from_column_slice(&w.state.bodies[0].positions[3 * v..3 * v + 3]);
        for k in 1..=20 {
            let target = start + Vector3::new(0.002 * k as f64, 0.0, 0.001 * k as f64);
            w.attach(0, v, target.into()).unwrap();
            w.step().unwrap();
            let x = Vector3::from_column_slice(&w.state.bodies[0].positions[3 * v..3 * v + 3]);
            assert!((x - target).norm() < 1e-6, "step {k}: {x} vs {target}");
        }
    })
}

/// Placed kinematic vertices land exactly on their targets; a free
/// vertex cannot be placed, and the message says how to hold it.
#[test]
fn placed_vertices_land_on_their_targets() {
    common::one_worker(|| {
        let bar =
            BodySpec::new("bar", MeshSpec::Box { size: [0.3, 0.05, 0.05], cells: [6, 1, 1] }, 1e6, 0.3, 1e3)
                .fixed([-0.2, -1.0, -1.0], [-0.149, 1.0, 1.0]);
        for integrator in ["implicit-euler", "local-global"] {
            let scene = SceneBuilder::new(0.01).body(bar.clone());
            let scene = if integrator == "local-global" { scene.local_global() } else { scene };
            let mut w = scene.world().unwrap();
            let held: Vec<usize> = (0..w.model.bodies[0].vertex_count())
                .filter(|&v| w.model.bodies[0].is_kinematic[v])
                .collect();
            let rest = w.model.bodies[0].rest_positions();
            let targets: Vec<[f64; 3]> =
                held.iter().map(|&v| [rest[3 * v], rest[3 * v + 1] + 0.01, rest[3 * v + 2] + 0.02]).collect();
            w.set_prescribed(0, &held, &targets).unwrap();
            for _ in 0..3 {
                w.step().unwrap();
            }
            let x = &w.state.bodies[0].positions;
            for (&v, t) in held.iter().zip(&targets) {
                // Implicit Euler places them exactly; local-global's pins hold them stiffly.
                let err = (0..3).map(|d| (x[3 * v + d] - t[d]).abs()).fold(0.0, f64::max);
                assert!(err < 1e-4, "{integrator}: vertex {v} is {err} m off its target");
            }
            let free =
                (0..w.model.bodies[0].vertex_count()).find(|&v| !w.model.bodies[0].is_kinematic[v]).unwrap();
            let e = w.set_prescribed(0, &[free], &[[0.0; 3]]).unwrap_err().to_string();
            assert!(e.contains("not kinematic") && e.contains("attachment"), "{e}");
            let e = w.set_prescribed(0, &held[..1], &[[f64::NAN, 0.0, 0.0]]).unwrap_err().to_string();
            assert!(e.contains("NaN"), "{e}");
        }
    })
}

/// An obstacle steered down onto a resting cube over one step moves at
/// the steered velocity (seen by the contact) and then holds its pose;
/// pressing 2 cm into it, it squeezes the cube without passing through it.
#[test]
fn steered_obstacle_pushes_and_holds() {
    common::one_worker(|| {
        let cube = BodySpec::new("cube", MeshSpec::cube(0.1, 3), 1e5, 0.3, 1000.0).at([0.0, 0.0, 0.05]);
        let mut w = SceneBuilder::new(0.01)
            .contact(|c| c.alarm_distance = 0.01)
            .body(cube.damping(4.0, 0.005))
            .obstacle(ObstacleSpec::new("floor", Shape::HalfSpace))
            .obstacle(ObstacleSpec::new("lid", Shape::Box { size: [0.3, 0.3, 0.02] }).at([0.0, 0.0, 0.115]))
            .world()
            .unwrap();
        let lid = w.obstacle_index("lid").unwrap();
        let h = w.model.time_step;
        for k in 1..=10 {
            let (r, c) = w.model.obstacles[lid].pose(w.state.time);
            let goal = c - Vector3::new(0.0, 0.0, 0.0025);
            w.set_obstacle_pose(lid, r, goal).unwrap();
            let v = w.model.obstacles[lid].velocity_at(&c, w.state.time);
            assert!((v - Vector3::new(0.0, 0.0, -0.0025 / h)).norm() < 1e-12, "step {k}: lid velocity {v}");
            w.step().unwrap();
            let (_, now) = w.model.obstacles[lid].pose(w.state.time);
            assert!((now - goal).norm() < 1e-15, "step {k}: lid at {now}, steered to {goal}");
        }
        for _ in 0..40 {
            w.step().unwrap();
        }
        let (_, c) = w.model.obstacles[lid].pose(w.state.time);
        assert!((c.z - 0.09).abs() < 1e-12, "the lid holds at z = {}", c.z);
        assert!(w.model.obstacles[lid].velocity_at(&c, w.state.time).norm() == 0.0);
        let top = w.state.bodies[0].positions.chunks_exact(3).map(|p| p[2]).fold(f64::MIN, f64::max);
        assert!(top < 0.08 + 1e-3, "the cube's top at {top} m passes the lid's underside (0.08 m)");
        let lid_force: f64 = w.constraint_points().forces.iter().map(|f| f[2]).filter(|f| *f < 0.0).sum();
        assert!(lid_force < -1.0, "the squeezed cube carries the lid's push ({lid_force} N)");
        let e = w.set_obstacle_pose(lid, Rotation3::identity(), Vector3::new(f64::INFINITY, 0.0, 0.0));
        assert!(e.unwrap_err().to_string().contains("inf"));
    })
}

/// Velocities set between steps are the next step's start; a wrong
/// length, a non-finite value or an unknown name is refused by name.
#[test]
fn set_velocities_and_bad_input() {
    common::one_worker(|| {
        let mut w = hanging_cube(false);
        let n = w.model.bodies[0].dofs();
        let v: Vec<f64> = (0..n).map(|j| if j % 3 == 0 { 1.5 } else { 0.0 }).collect();
        w.set_velocities(0, &v).unwrap();
        let p = w.state.bodies[0].momentum(&w.model.bodies[0]);
        assert!((p[0] - 1.5 * w.model.bodies[0].total_mass()).abs() < 1e-12);
        let e = w.set_velocities(0, &v[1..]).unwrap_err().to_string();
        assert!(e.contains("expected"), "{e}");
        let mut bad = v.clone();
        bad[7] = f64::NAN;
        assert!(w.set_velocities(0, &bad).unwrap_err().to_string().contains("value 7 is NaN"));
        assert!(w.body_index("cub").unwrap_err().to_string().contains("`cube`"));
        assert!(w.obstacle_index("lid").is_err());
        assert!(w.attach(0, 10_000, [0.0; 3]).unwrap_err().to_string().contains("does not exist"));
    })
}
