//! Whole-body dynamics: momentum in free flight, co-rotation invariance,
//! assembled stiffness against finite differences, kinematic conditions,
//! determinism across thread counts.

use crate::common;

use ferrofem::collision::OnViolation;
use ferrofem::element::PolarMethod;
use ferrofem::integrator::{ImplicitEulerSettings, PreconditionerKind};
use ferrofem::scene::{BodySpec, MeshSpec, Preset, Scene, SceneBuilder};
use ferrofem::{SimError, World};
use nalgebra::{Rotation3, Unit, Vector3};

/// A ball of radius 0.2 m (E = 0.2 MPa) stepped by `h` under `gravity`,
/// implicit Euler's settings changed by `edit`.
fn ball(h: f64, gravity: [f64; 3], edit: impl FnOnce(&mut ImplicitEulerSettings)) -> World {
    let ball = BodySpec::new("b", MeshSpec::Ball { radius: 0.2, resolution: 6 }, 2e5, 0.35, 1100.0);
    SceneBuilder::new(h).gravity(gravity).implicit_euler(edit).body(ball).world().unwrap()
}

/// PCG's stopping rule.
fn pcg(max_iterations: usize, rel_tolerance: f64) -> impl FnOnce(&mut ImplicitEulerSettings) {
    move |s| (s.max_iterations, s.rel_tolerance) = (Some(max_iterations), Some(rel_tolerance))
}

const G: [f64; 3] = [0.0, 0.0, -9.81];

#[test]
fn free_flight_momentum_and_center_of_mass() {
    common::one_worker(|| {
        let (h, g) = (0.01, [0.3, 0.0, -9.81]);
        let mut w = ball(h, g, pcg(5000, 1e-13));
        let body = w.model.bodies[0].clone();
        let m = body.total_mass();
        // Spin plus drift: internal forces appear, and must cancel in the sum.
        let v0 = Vector3::new(0.5, -0.2, 1.0);
        let omega = Vector3::new(0.0, 3.0, 1.0);
        let c0 = w.state.bodies[0].center_of_mass(&body);
        for (i, p) in body.rest_vertices().iter().enumerate() {
            let v = v0 + omega.cross(&(Vector3::from(*p) - Vector3::from(c0)));
            w.state.bodies[0].velocities[3 * i..3 * i + 3].copy_from_slice(v.as_slice());
        }
        let p0 = w.state.bodies[0].momentum(&body);
        let n = 100;
        for _ in 0..n {
            w.step().unwrap();
        }
        let t = n as f64 * h;
        let p = w.state.bodies[0].momentum(&body);
        let c = w.state.bodies[0].center_of_mass(&body);
        for d in 0..3 {
            let expected = p0[d] + m * g[d] * t;
            assert!(
                (p[d] - expected).abs() <= 1e-9 * (m * 9.81 * t),
                "momentum axis {d}: {} vs {expected}",
                p[d]
            );
            // Implicit Euler: x_n = x0 + v0 t + g t (t + h) / 2 exactly for the centre of mass.
            let discrete = c0[d] + p0[d] / m * t + 0.5 * g[d] * t * (t + h);
            assert!((c[d] - discrete).abs() < 1e-9, "centre of mass axis {d}");
            let ballistic = c0[d] + p0[d] / m * t + 0.5 * g[d] * t * t;
            assert!((c[d] - ballistic).abs() <= 0.5 * g[d].abs() * t * h + 1e-9);
        }
        assert!(w.state.bodies[0].kinetic_energy(&body) > 0.0);
    })
}

#[test]
fn rotated_rest_shape_has_zero_elastic_force() {
    common::one_worker(|| {
        for polar in [PolarMethod::Svd, PolarMethod::Jacobi { max_sweeps: 10, tolerance: 1e-14 }] {
            let mut w = ball(0.01, [0.0; 3], |s| s.polar = polar);
            let body = w.model.bodies[0].clone();
            for k in 0..5 {
                let axis = Unit::new_normalize(Vector3::new(1.0, -0.5 + k as f64, 0.3));
                let r = Rotation3::from_axis_angle(&axis, 0.7 * k as f64 + 0.4);
                let s = &mut w.state.bodies[0];
                for (i, p) in body.rest_vertices().iter().enumerate() {
                    let q = r * Vector3::from(*p) + Vector3::new(1.0, 2.0, 3.0);
                    s.positions[3 * i..3 * i + 3].copy_from_slice(q.as_slice());
                    s.velocities[3 * i..3 * i + 3].fill(0.0);
                }
                w.step().unwrap();
                let f = &common::workspace(&w, 0).elastic_forces;
                let fmax = f.iter().fold(0.0f64, |m, x| m.max(x.abs()));
                // Scale: the force of a 1% stretch on one vertex, E·ε·(mesh spacing)².
                let scale = 2e5 * 0.01 * (0.4f64 / 6.0).powi(2);
                assert!(fmax <= 1e-9 * scale, "{polar:?} rotation {k}: {fmax:e}");
            }
        }
    })
}

#[test]
fn assembled_stiffness_matches_force_differences() {
    common::one_worker(|| {
        let h = 1.0;
        let mut w = ball(h, [0.0; 3], |s| (s.polar, s.max_iterations) = (PolarMethod::Svd, Some(1)));
        let body = w.model.bodies[0].clone();
        let n = body.dofs();
        let rest = body.rest_positions();
        let r = Rotation3::from_axis_angle(&Unit::new_normalize(Vector3::new(0.3, 1.0, 0.2)), 0.9);
        let base: Vec<f64> = rest
            .chunks_exact(3)
            .enumerate()
            .flat_map(|(i, p)| {
                let q = r * Vector3::new(p[0], p[1], p[2])
                    + 1e-8 * Vector3::new((i % 7) as f64, (i % 3) as f64, (i % 5) as f64);
                [q.x, q.y, q.z]
            })
            .collect();
        let mut eval = |x: &[f64]| {
            w.state.bodies[0].positions.copy_from_slice(x);
            w.state.bodies[0].velocities.fill(0.0);
            w.step().unwrap();
            let ws = common::workspace(&w, 0);
            (ws.elastic_forces.clone(), ws.system.clone())
        };
        let (_, a) = eval(&base);
        let dir: Vec<f64> = (0..n).map(|j| ((j * 37) % 11) as f64 / 11.0 - 0.5).collect();
        let eps = 1e-7;
        let plus: Vec<f64> = base.iter().zip(&dir).map(|(x, d)| x + eps * d).collect();
        let minus: Vec<f64> = base.iter().zip(&dir).map(|(x, d)| x - eps * d).collect();
        let (fp, _) = eval(&plus);
        let (fm, _) = eval(&minus);
        // With h = 1 and no damping, A = M + K.
        let mut ad = vec![0.0; n];
        a.mul_vec(&dir, &mut ad);
        let mut err: f64 = 0.0;
        let mut scale: f64 = 0.0;
        for j in 0..n {
            let k_dir = ad[j] - body.mass[j / 3] * dir[j];
            let fd = -(fp[j] - fm[j]) / (2.0 * eps);
            err = err.max((k_dir - fd).abs());
            scale = scale.max(fd.abs());
        }
        assert!(err < 1e-4 * scale, "K·d differs from -Δf/ε: {err:e} vs {scale:e}");
    })
}

#[test]
fn prescribed_rotation_is_followed_exactly() {
    common::one_worker(|| {
        let scene = Scene::from_file(std::path::Path::new(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../scenes/twisting-bar.toml"
        )))
        .unwrap();
        let mut w = scene.build().unwrap();
        let h = w.model.time_step;
        for _ in 0..10 {
            w.step().unwrap();
        }
        let body = &w.model.bodies[0];
        let angle = 10.0 * h;
        for (i, p) in body.rest_vertices().iter().enumerate() {
            if p[0] < -0.999 {
                let q = Rotation3::from_axis_angle(&Vector3::x_axis(), angle) * Vector3::from(*p);
                let x = &w.state.bodies[0].positions[3 * i..3 * i + 3];
                assert!((Vector3::new(x[0], x[1], x[2]) - q).norm() < 1e-12);
            }
        }
        assert!(common::workspace(&w, 0).elastic_energy > 0.0);
    })
}

#[test]
fn results_do_not_depend_on_thread_count() {
    common::one_worker(|| {
        let run = |threads: usize| {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            pool.install(|| {
                let mut w = ball(0.01, G, |s| s.max_iterations = Some(20));
                w.state.bodies[0]
                    .velocities
                    .iter_mut()
                    .enumerate()
                    .for_each(|(j, v)| *v = (j % 5) as f64 * 0.1);
                for _ in 0..5 {
                    w.step().unwrap();
                }
                w.state.bodies[0].positions.clone()
            })
        };
        let (a, b) = (run(1), run(3));
        assert!(a.iter().zip(&b).all(|(x, y)| x.to_bits() == y.to_bits()));
    })
}

#[test]
fn nonfinite_state_names_step_body_and_stage() {
    common::one_worker(|| {
        let mut w = ball(0.01, G, |_| ());
        w.step().unwrap();
        w.state.bodies[0].velocities[7] = f64::NAN;
        let err = w.step().unwrap_err();
        assert!(matches!(err, SimError::NonFinite { step: 2, .. }), "{err}");
        let msg = err.to_string();
        assert!(msg.contains("step 2") && msg.contains("body b") && msg.contains("assemble"), "{msg}");
    })
}

#[test]
fn both_polar_methods_agree_on_a_bent_body() {
    common::one_worker(|| {
        let mut results = Vec::new();
        for polar in [PolarMethod::Svd, PolarMethod::Jacobi { max_sweeps: 20, tolerance: 1e-14 }] {
            let mut w = ball(0.01, G, pcg(500, 1e-12));
            common::settings(&mut w).polar = polar;
            w.state.bodies[0]
                .velocities
                .iter_mut()
                .enumerate()
                .for_each(|(j, v)| *v = ((j * 13) % 7) as f64 * 0.2);
            for _ in 0..10 {
                w.step().unwrap();
            }
            results.push(w.state.bodies[0].positions.clone());
        }
        let diff = results[0].iter().zip(&results[1]).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
        assert!(diff < 1e-9, "{diff:e}");
    })
}

/// The library API without a scene file: a body, a model and a world built
/// in code fall as implicit Euler says, `z_n = z₀ − g h² n(n+1)/2`.
#[test]
fn a_world_built_in_code_falls_as_implicit_euler_predicts() {
    common::one_worker(|| {
        use ferrofem::body::{Body, Rayleigh};
        use ferrofem::integrator::ImplicitEulerSettings;
        use ferrofem::material::Material;
        use ferrofem::Model;
        let mesh = ferrofem_mesh::generate::box_mesh([0.2, 0.1, 0.1], [4, 2, 2]).unwrap();
        let material = Material { young: 1e5, poisson: 0.3, density: 1000.0 };
        let (tets, vertices) = (mesh.tets.len(), mesh.vertices.len());
        let body =
            Body::solid("box".into(), mesh, vec![material; tets], Rayleigh::default(), vec![None; vertices])
                .unwrap();
        let (g, h) = (9.81, 0.01);
        let model = Model::new(vec![body], [0.0, 0.0, -g], h);
        let settings = ImplicitEulerSettings {
            max_iterations: Some(1000),
            rel_tolerance: Some(1e-13),
            ..Default::default()
        };
        let mut w = World::with_implicit_euler(model, settings).unwrap();
        let z0 = w.state.bodies[0].center_of_mass(&w.model.bodies[0])[2];
        for n in 1..=10 {
            w.step().unwrap();
            let z = w.state.bodies[0].center_of_mass(&w.model.bodies[0])[2];
            let expected = z0 - g * h * h * (n * (n + 1)) as f64 / 2.0;
            assert!((z - expected).abs() < 1e-9, "step {n}: {z} vs {expected}");
        }
    })
}

/// A solve that fails is a violation, not a silent step: a 4³-cell cube
/// of E = 1e11 Pa stepped by h = 10 s ends its 100 Jacobi-PCG iterations
/// no better than it started (relative residual 24.5 measured); the step says so (body, stage, residual), the run
/// goes on under `on_violation = "warn"` and stops under `"stop"`. The
/// real-time preset refuses the Jacobi preconditioner it was not tuned for.
#[test]
fn an_unconverged_solve_is_a_violation() {
    common::one_worker(|| {
        let cube = || BodySpec::new("cube", MeshSpec::cube(0.2, 4), 1e11, 0.3, 1000.0);
        let scene = || SceneBuilder::new(10.0).body(cube());
        let mut w = scene().world().unwrap();
        let s = w.step().unwrap();
        let v = s.violation.expect("the step is a violation");
        assert!(v.contains("body `cube`, stage free_motion") && v.contains("relative residual"), "{v}");
        assert!(s.cg_rel_residual >= 1.0, "{}", s.cg_rel_residual);
        let mut stopped = scene().contact(|c| c.on_violation = OnViolation::Stop).world().unwrap();
        let err = stopped.step().unwrap_err().to_string();
        assert!(err.starts_with("step 1: body `cube`, stage free_motion: PCG ended"), "{err}");
        let jacobi = |s: &mut ImplicitEulerSettings| s.preconditioner = PreconditionerKind::Jacobi;
        let err =
            SceneBuilder::new(0.01).preset(Preset::RealTime).implicit_euler(jacobi).body(cube()).build();
        let err = err.unwrap_err().to_string();
        assert!(err.contains("implicit_euler.preconditioner") && err.contains("real-time"), "{err}");
    })
}

/// The `previous_change` guess starts PCG at the last free-motion `Δv`. In
/// a stress-free fall the system and its right-hand side repeat, so from
/// the second step PCG starts within round-off of the solution (1–2
/// Jacobi iterations to 1e-10 measured, where `v(t)` takes 44), and both
/// fall alike. On a floor the guess is the free `Δv` (gravity's pull),
/// not the corrected one (≈ 0, which is `v(t)`'s guess): a settling block
/// starts near its solution too (steps 41–60: 17–24 iterations against 60).
#[test]
fn the_previous_change_starts_where_the_last_free_motion_ended() {
    common::one_worker(|| {
        use ferrofem::integrator::InitialGuess::{self, PreviousChange, PreviousVelocity};
        use ferrofem::obstacle::Shape;
        use ferrofem::scene::ObstacleSpec;
        let settings = |guess: InitialGuess| {
            move |s: &mut ImplicitEulerSettings| (s.initial_guess, s.rel_tolerance) = (guess, Some(1e-10))
        };
        let falling = |guess| ball(0.01, G, settings(guess));
        let (mut carried, mut from_v) = (falling(PreviousChange), falling(PreviousVelocity));
        for step in 1..=5 {
            let (a, b) = (carried.step().unwrap().cg_iterations, from_v.step().unwrap().cg_iterations);
            assert!(b >= 20 && (step == 1 && a == b || step > 1 && a <= 2), "step {step}: {a} against {b}");
            let (x, y) = (&carried.state.bodies[0].positions, &from_v.state.bodies[0].positions);
            let worst = x.iter().zip(y).map(|(p, q)| (p - q).abs()).fold(0.0, f64::max);
            assert!(worst < 1e-12, "step {step}: {worst:e} m apart");
        }
        let block = |guess| {
            let cube = BodySpec::new("cube", MeshSpec::cube(0.1, 3), 1e5, 0.3, 1000.0).at([0.0, 0.0, 0.05]);
            let floor = ObstacleSpec::new("floor", Shape::HalfSpace).friction(0.5);
            SceneBuilder::new(0.01)
                .implicit_euler(settings(guess))
                .body(cube)
                .obstacle(floor)
                .world()
                .unwrap()
        };
        let iterations =
            |mut w: World| (0..60).map(|_| w.step().unwrap().cg_iterations).skip(40).sum::<usize>();
        let (carried, from_v) = (iterations(block(PreviousChange)), iterations(block(PreviousVelocity)));
        assert!(2 * carried < from_v, "PCG iterations on the floor, steps 41–60: {carried} against {from_v}");
    })
}
