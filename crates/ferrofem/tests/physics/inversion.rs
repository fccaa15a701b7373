//! Inversion (issue #55): soft bodies thrown at the floor, the squeezing
//! ball, a cube crushed to a tenth of its volume, and the scenes that once
//! turned tets inside out.

use crate::common;
use ferrofem::collision::penetration::{deepest, inverted_elements, Penetrated};
use ferrofem::element::Constitutive;
use ferrofem::integrator::PreconditionerKind;
use ferrofem::obstacle::Shape;
use ferrofem::scene::{BodySpec, MeshSpec, ObstacleSpec, SceneBuilder};
use ferrofem::stats::Stage;
use ferrofem::World;

/// `drop.toml`'s material, damping, contact and solver settings (E = 5e4,
/// ν = 0.4, h = 0.01 s), with `mesh` thrown straight down at `speed` from
/// 2 cm above the floor.
fn thrown(mesh: MeshSpec, half_height: f64, model: Constitutive, speed: f64) -> World {
    let body = BodySpec::new("soft", mesh, 5e4, 0.4, 1000.0)
        .constitutive(model)
        .at([0.0, 0.0, half_height + 0.02])
        .damping(0.5, 0.005)
        .velocity([0.3, 0.0, -speed]);
    SceneBuilder::new(0.01)
        .pcg(50, 1e-8)
        .implicit_euler(|s| s.preconditioner = PreconditionerKind::Ldlt)
        .contact(|c| c.alarm_distance = 0.02)
        .constraint_solver(|s| s.tolerance = Some(1e-8))
        .body(body)
        .obstacle(ObstacleSpec::new("floor", Shape::HalfSpace).friction(0.3))
        .world()
        .unwrap()
}

/// Thrown at 20 and 50 m/s (0.2 and 0.5 m a step against 0.1 m bodies),
/// a soft ball and a soft cube, co-rotational and stable Neo-Hookean: no
/// vertex, interior ones included, is ever more than 2 mm under the floor,
/// and 0.1 s after impact no tet is inverted. (Before interior vertices
/// had contacts, the ball at 20 m/s pushed one 57 mm under the floor and
/// inverted 846 tets.)
#[test]
fn soft_bodies_thrown_at_the_floor_neither_sink_nor_stay_inverted() {
    common::one_worker(|| {
        let shapes = [(MeshSpec::Ball { radius: 0.1, resolution: 8 }, 0.1), (MeshSpec::cube(0.2, 6), 0.1)];
        for (mesh, half) in shapes {
            for model in [Constitutive::Corotational, Constitutive::StableNeoHookean] {
                for speed in [20.0, 50.0] {
                    let mut w = thrown(mesh.clone(), half, model, speed);
                    let label = format!("{mesh:?} {} at {speed} m/s", model.name());
                    let mut impact = None;
                    for step in 1..=30 {
                        let s = w.step().unwrap_or_else(|e| panic!("{label}: {e}"));
                        assert!(
                            s.max_penetration <= 2e-3,
                            "{label}: step {step}: {:e} m under",
                            s.max_penetration
                        );
                        if s.total_normal_force > 0.0 && impact.is_none() {
                            impact = Some(step);
                        }
                        if impact.is_some_and(|i| step >= i + 10) {
                            assert_eq!(s.inverted_elements, 0, "{label}: step {step}, impact at {impact:?}");
                        }
                    }
                    assert!(impact.is_some_and(|i| i <= 2), "{label}: impact at {impact:?}");
                }
            }
        }
    })
}

/// The squeezing ball (Neo-Hookean, local-global) at the size of zeng2025
/// Table 3's 7.1k row (resolution 18: 6,859 vertices, as `bench
/// lg-contact` runs it) through its rollers, its full length (200 steps):
/// no tet inverted and no vertex more than 2 mm inside a roller at any step.
#[test]
fn the_squeezing_ball_passes_its_rollers_without_inverting() {
    common::one_worker(|| {
        let mut w = common::builtin("squeezing-ball", |s| {
            s.spec.bodies[0].mesh = MeshSpec::Ball { radius: 0.1, resolution: 18 };
        });
        for step in 1..=200 {
            let s = w.step().unwrap();
            assert!(s.inverted_elements == 0 && s.max_penetration <= 2e-3, "step {step}: {s:?}");
        }
    })
}

/// The volume of body 0's tets at its current positions.
fn volume(w: &World) -> f64 {
    let x = &w.state.bodies[0].positions;
    let p = |i: usize| nalgebra::Vector3::new(x[3 * i], x[3 * i + 1], x[3 * i + 2]);
    let tets = &w.model.bodies[0].tets;
    tets.iter()
        .map(|t| {
            (p(t.vertices[1]) - p(t.vertices[0]))
                .dot(&(p(t.vertices[2]) - p(t.vertices[0])).cross(&(p(t.vertices[3]) - p(t.vertices[0]))))
                / 6.0
        })
        .sum()
}

/// A unit cube of stable Neo-Hookean (E = 1e5, ν = 0.3) crushed to 10 % of
/// its volume (every vertex pulled to the centre by 0.1^⅓), then one of
/// its vertices flattened through the opposite face so some tets start
/// inverted, released without gravity: under both integrators (implicit
/// Euler with mass damping 4/s, local-global undamped) it returns to
/// its rest volume within 1 % with no tet inverted after 3 s.
#[test]
fn a_cube_crushed_to_a_tenth_of_its_volume_returns_to_its_rest_volume() {
    common::one_worker(|| {
        for local_global in [false, true] {
            let body = BodySpec::new("cube", MeshSpec::cube(1.0, 4), 1e5, 0.3, 1000.0)
                .constitutive(Constitutive::StableNeoHookean);
            // Local-global has no Rayleigh damping: backward Euler's own dissipation settles it.
            let body = if local_global { body } else { body.damping(4.0, 0.0) };
            let builder = SceneBuilder::new(0.01).gravity([0.0; 3]).pcg(100, 1e-10).body(body);
            let mut w = match local_global {
                true => builder.local_global().world().unwrap(),
                false => builder.world().unwrap(),
            };
            let rest = volume(&w);
            let squeeze = 0.1f64.cbrt();
            let x = &mut w.state.bodies[0].positions;
            x.iter_mut().for_each(|c| *c *= squeeze);
            // A corner vertex pushed past the centre: the tets at that corner start inside out.
            x[..3].iter_mut().for_each(|c| *c *= -0.25);
            let crushed = volume(&w);
            assert!((crushed / rest - 0.1).abs() < 0.01, "crushed to {}", crushed / rest);
            let first = w.step().unwrap();
            let inverted_at_start = first.inverted_elements;
            let label = if local_global { "local-global" } else { "implicit Euler" };
            assert!(inverted_at_start > 0, "{label}: the crushed corner is inverted after the first step");
            // Local-global counts them in its energy pass (`det F ≤ 0`): the
            // signed volumes' count; the figures are a stage of the step.
            let (body, x) = (&w.model.bodies[0], &w.state.bodies[0].positions);
            assert_eq!(inverted_at_start, inverted_elements(body, x), "{label}");
            assert!(first.stage_ms.get(Stage::Figures) > 0.0, "{label}: {:?}", first.stage_ms);
            assert!(
                first.step_ms >= first.stage_ms.total(),
                "{label}: {} < {:?}",
                first.step_ms,
                first.stage_ms
            );
            let mut last = None;
            for _ in 0..299 {
                last = Some(w.step().unwrap());
            }
            let ratio = volume(&w) / rest;
            assert!(
                (ratio - 1.0).abs() < 0.01,
                "{label}: volume {ratio} of rest (inverted at step 1: {inverted_at_start})"
            );
            assert_eq!(last.unwrap().inverted_elements, 0, "{label}");
        }
    })
}

/// Runs built-in scene `name` its full length (`[simulation] steps`), its
/// asynchronous refresh made synchronous; the first step that leaves an
/// inverted tet, with the count.
fn first_inverted_step(name: &str) -> Option<(usize, usize)> {
    let mut steps = 0;
    let mut w = common::builtin(name, |s| {
        steps = s.spec.simulation.steps;
        s.spec.implicit_euler.refresh.asynchronous = false;
    });
    (1..=steps).find_map(|step| {
        let s = w.step().unwrap_or_else(|e| panic!("{name}: {e}"));
        (s.inverted_elements > 0).then_some((step, s.inverted_elements))
    })
}

/// The built-in scenes that inverted tets (issue #55) run their full length
/// without: `needle` and `multi-body` under stable Neo-Hookean, the ARAP
/// `twisting-bar-lg` cut to the twist it survives (`twisting-bar`, 20 s,
/// is in the sweep below).
#[test]
fn the_scenes_that_inverted_run_their_full_length_without() {
    common::one_worker(|| {
        for name in ["needle", "multi-body", "twisting-bar-lg"] {
            assert_eq!(first_inverted_step(name), None, "{name}: (step, inverted tets)");
        }
    })
}

/// Every built-in scene, its full length, with no inverted tet at any step.
#[test]
#[ignore = "about 200 s on 2 cores: cargo test --release -p ferrofem --test physics -- --ignored full_length"]
fn every_builtin_scene_runs_its_full_length_without_inverting() {
    common::one_worker(|| {
        for entry in std::fs::read_dir(common::scenes_dir()).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "toml") {
                let name = path.file_stem().unwrap().to_string_lossy().into_owned();
                assert_eq!(first_inverted_step(&name), None, "{name}: (step, inverted tets)");
            }
        }
    })
}

/// A cube placed half through the floor: its deepest vertex (an
/// interior one included) is found at its true depth, and squashing
/// one tet flat counts as an inversion.
#[test]
fn deepest_vertex_and_inverted_tets() {
    common::one_worker(|| {
        let cube = BodySpec::new("cube", MeshSpec::cube(0.2, 2), 1e5, 0.3, 1000.0);
        let floor = ObstacleSpec::new("floor", Shape::HalfSpace);
        let world = SceneBuilder::new(0.01).body(cube).obstacle(floor).world().unwrap();
        let body = &world.model.bodies[0];
        let mut x = world.state.bodies[0].positions.clone();
        let p = deepest(0, body, &[&x], &world.model.obstacles, &[], 0.0).unwrap();
        assert!((p.depth - 0.1).abs() < 1e-12 && p.into == Penetrated::Obstacle(0), "{p:?}");
        assert_eq!(inverted_elements(body, &x), 0);
        x.iter_mut().skip(2).step_by(3).for_each(|z| *z += 0.5);
        assert!(deepest(0, body, &[&x], &world.model.obstacles, &[], 0.0).is_none());
        let (_, tets, _) = body.mesh_view();
        let [a, b, c, d] = tets[0];
        // Reflect d through the centroid of the opposite face: the tet turns inside out.
        for k in 0..3 {
            x[3 * d + k] = 2.0 * (x[3 * a + k] + x[3 * b + k] + x[3 * c + k]) / 3.0 - x[3 * d + k];
        }
        assert!(inverted_elements(body, &x) >= 1);
        assert!(inverted_elements(body, &x) < tets.len());
    })
}
