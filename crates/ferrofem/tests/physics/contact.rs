//! Frictional contact against rigid obstacles (zeng2022 §3.2–3.3).

use crate::common;
mod control;
mod corrective;
mod local_global;

use ferrofem::body::Motion;
use ferrofem::collision::{ContactSettings, OnViolation};
use ferrofem::integrator::{PreconditionerKind, Refresh};
use ferrofem::obstacle::Shape;
use ferrofem::scene::{BodySpec, MeshSpec, ObstacleSpec, Preset, Scene, SceneBuilder};
use ferrofem::solver::{ComplementarityScale, ConstraintSolver, NewtonSettings};
use ferrofem::stats::StepStats;
use ferrofem::World;
use ferrofem_linalg::Precision;

/// A 0.2 m damped soft cube of 4³ hexahedra (E = 0.1 MPa) standing on
/// z = 0 among `obstacles`.
fn block_scene(obstacles: Vec<ObstacleSpec>) -> World {
    block_scene_with(4, 1e5, |b| b, obstacles)
}

/// A 0.2 m damped soft cube of `cells`³ hexahedra and Young's modulus
/// `young`, standing on z = 0, changed by `edit`, among `obstacles`.
fn block_scene_with(
    cells: usize,
    young: f64,
    edit: impl FnOnce(BodySpec) -> BodySpec,
    obstacles: Vec<ObstacleSpec>,
) -> World {
    let block = BodySpec::new("block", MeshSpec::cube(0.2, cells), young, 0.3, 1000.0).at([0.0, 0.0, 0.1]);
    let scene = SceneBuilder::new(0.01)
        .pcg(500, 1e-10)
        .pgs(500, 1e-10)
        .contact(|c| c.alarm_distance = 0.01)
        .body(edit(block.damping(2.0, 0.01)));
    obstacles.into_iter().fold(scene, SceneBuilder::obstacle).world().unwrap()
}

/// A half-space floor at z = 0 with friction 0.5.
fn floor() -> ObstacleSpec {
    ObstacleSpec::new("floor", Shape::HalfSpace).friction(0.5)
}

/// The world's contacts carry `weight` within 1 % and let nothing in by more than 1 µm.
fn assert_carries(s: &StepStats, weight: f64, step: usize) {
    assert!(s.max_penetration < 1e-6, "step {step}: penetration {}", s.max_penetration);
    let rel = (s.total_normal_force - weight).abs() / weight;
    assert!(rel < 0.01, "step {step}: normal force {} vs weight {weight}", s.total_normal_force);
}

#[test]
fn block_resting_on_a_plane_carries_its_weight() {
    common::one_worker(|| {
        let mut w = block_scene(vec![floor()]);
        let body = w.model.bodies[0].clone();
        let weight = body.total_mass() * 9.81;
        let mut last = None;
        let mut c_settled = [0.0; 3];
        for step in 1..=500 {
            let s = w.step().unwrap();
            if step == 100 {
                c_settled = w.state.bodies[0].center_of_mass(&body);
            }
            if step >= 100 {
                assert_carries(&s, weight, step);
            }
            last = Some(s);
        }
        let c = w.state.bodies[0].center_of_mass(&body);
        let drift = (0..3).map(|d| (c[d] - c_settled[d]).abs()).fold(0.0, f64::max);
        assert!(drift < 1e-6, "drift {drift:e} over 400 steps");
        let s = last.unwrap();
        assert!(s.contacts >= 25, "contacts {}", s.contacts);
    })
}

/// The tests' tight tolerances on PCG and PGS.
fn tight(scene: SceneBuilder) -> SceneBuilder {
    scene.pcg(2000, 1e-12).pgs(1000, 1e-12)
}

/// The real-time preset with its background refresh made deterministic
/// (a test must not depend on when a thread finishes).
fn real_time(scene: SceneBuilder) -> SceneBuilder {
    let refresh = Refresh { every: 1, asynchronous: true, deterministic: true, handover: 0 };
    scene.preset(Preset::RealTime).implicit_euler(|s| s.refresh = refresh)
}

/// A stiff block on a 10° slope with friction μ; returns the downhill
/// centre-of-mass velocity at 0.5 s and 1.5 s, and the centre's
/// displacement between 0.5 s and 2.5 s.
fn slope(mu: f64) -> (f64, f64, f64) {
    slope_with(mu, tight)
}

/// [`slope`] with the solver settings `solver` makes.
fn slope_with(mu: f64, solver: fn(SceneBuilder) -> SceneBuilder) -> (f64, f64, f64) {
    let theta = 10f64.to_radians();
    let (s, c) = theta.sin_cos();
    let block =
        BodySpec::new("block", MeshSpec::Box { size: [0.2, 0.2, 0.1], cells: [4, 4, 2] }, 1e7, 0.3, 1000.0)
            .rotated([10.0, 0.0, 0.0])
            .at([0.0, -0.05 * s, 0.05 * c])
            .damping(0.0, 0.001);
    let slope = ObstacleSpec::new("slope", Shape::HalfSpace).rotated([10.0, 0.0, 0.0]).friction(mu);
    let scene = SceneBuilder::new(0.01).contact(|c| c.alarm_distance = 0.005).body(block).obstacle(slope);
    let mut w = solver(scene).world().unwrap();
    let body = w.model.bodies[0].clone();
    let m = body.total_mass();
    // Downhill along the plane: (0, −cos θ, −sin θ).
    let down = [0.0, -c, -s];
    let along = |w: &World| {
        let p = w.state.bodies[0].momentum(&body);
        (p[0] * down[0] + p[1] * down[1] + p[2] * down[2]) / m
    };
    let (mut v05, mut v15, mut x05) = (0.0, 0.0, [0.0; 3]);
    for step in 1..=250 {
        w.step().unwrap();
        if step == 50 {
            v05 = along(&w);
            x05 = w.state.bodies[0].center_of_mass(&body);
        }
        if step == 150 {
            v15 = along(&w);
        }
    }
    let x25 = w.state.bodies[0].center_of_mass(&body);
    let moved = (0..3).map(|d| (x25[d] - x05[d]).powi(2)).sum::<f64>().sqrt();
    (v05, v15, moved)
}

#[test]
fn block_on_slope_sticks_above_tan_theta() {
    common::one_worker(|| {
        let mu = 10f64.to_radians().tan() + 0.02;
        let (_, _, moved) = slope(mu);
        assert!(moved < 1e-4, "moved {moved:e} m in 2 s");
    })
}

#[test]
fn block_on_slope_slides_below_tan_theta_with_coulomb_acceleration() {
    common::one_worker(|| {
        let theta = 10f64.to_radians();
        let mu = theta.tan() - 0.02;
        let (v05, v15, _) = slope(mu);
        let a = v15 - v05;
        let expected = 9.81 * (theta.sin() - mu * theta.cos());
        assert!((a / expected - 1.0).abs() < 0.05, "a = {a}, expected {expected}");
    })
}

/// The real-time preset (`[simulation] preset = "real-time"`: 2 PCG
/// iterations, PGS to 1e-5 in 50 sweeps) keeps the slope's stick/slide
/// threshold within ±0.02 of tan θ: it sticks at tan θ + 0.02 and slides
/// at tan θ − 0.02 with the Coulomb acceleration within 10 %.
#[test]
fn real_time_preset_keeps_the_slope_threshold() {
    common::one_worker(|| {
        let theta = 10f64.to_radians();
        let (_, _, moved) = slope_with(theta.tan() + 0.02, real_time);
        assert!(moved < 1e-3, "moved {moved:e} m in 2 s above the threshold");
        let mu = theta.tan() - 0.02;
        let (v05, v15, _) = slope_with(mu, real_time);
        let expected = 9.81 * (theta.sin() - mu * theta.cos());
        println!(
            "real-time slope: stuck block moved {moved:.2e} m; sliding a = {:.4} vs {expected:.4}",
            v15 - v05
        );
        assert!(((v15 - v05) / expected - 1.0).abs() < 0.1, "a = {}, expected {expected}", v15 - v05);
    })
}

/// The real-time preset carries a resting block's weight within 2 % (the
/// soft cube of [`block_scene`], no solver keys of its own), and so does
/// it with PGS reading `W` in bfloat16 (`delassus_precision`).
#[test]
fn real_time_preset_carries_the_resting_weight() {
    common::one_worker(|| {
        for precision in [Precision::Single, Precision::Bfloat16] {
            let block = BodySpec::new("block", MeshSpec::cube(0.2, 4), 1e5, 0.3, 1000.0).at([0.0, 0.0, 0.1]);
            let scene = SceneBuilder::new(0.01).contact(|c| c.alarm_distance = 0.01);
            let scene = real_time(scene).body(block.damping(2.0, 0.01)).obstacle(floor());
            let scene = scene.constraint_solver(|c| match &mut c.solver {
                Some(ConstraintSolver::Pgs(p)) => p.precision = precision,
                _ => panic!("the preset's PGS"),
            });
            let mut w = scene.world().unwrap();
            let weight = w.model.bodies[0].total_mass() * 9.81;
            for step in 1..=300 {
                let s = w.step().unwrap();
                if step >= 100 {
                    let rel = (s.total_normal_force - weight).abs() / weight;
                    let force = s.total_normal_force;
                    assert!(
                        rel < 0.02,
                        "{precision:?}, step {step}: normal force {force} vs weight {weight}"
                    );
                    assert!(
                        s.max_penetration < 1e-4,
                        "{precision:?}, step {step}: penetration {}",
                        s.max_penetration
                    );
                }
            }
        }
    })
}

#[test]
fn bilateral_attachment_holds_a_hanging_body() {
    common::one_worker(|| {
        let hanging = hanging_box().damping(2.0, 0.01);
        let scene = SceneBuilder::new(0.01).pcg(500, 1e-10).pgs(500, 1e-12).body(hanging);
        let w = assert_attachments_hold(scene.world().unwrap(), 300, 0.01);
        let body = &w.model.bodies[0];
        assert_eq!(body.attachments.len(), 9);
        // The body hangs: its bottom sagged below the rest position.
        let bottom = (0..body.vertex_count()).find(|&i| body.rest_vertices()[i][2] < -0.149).unwrap();
        assert!(w.state.bodies[0].positions[3 * bottom + 2] < body.rest_vertices()[bottom][2] - 1e-4);
    })
}

/// A cube of edge `size` and `cells`³ hexahedra centred at height `z`,
/// moving up at `vz`.
pub(crate) fn cube(name: &str, size: f64, cells: usize, z: f64, young: f64, vz: f64) -> BodySpec {
    BodySpec::new(name, MeshSpec::cube(size, cells), young, 0.3, 1000.0)
        .at([0.0, 0.0, z])
        .velocity([0.0, 0.0, vz])
}

#[test]
fn two_bodies_pressed_together_conserve_momentum() {
    common::one_worker(|| {
        let scene = SceneBuilder::new(0.005)
            .gravity([0.0; 3])
            .pcg(1000, 1e-13)
            .pgs(2000, 1e-12)
            .contact(|c| (c.alarm_distance, c.body_friction) = (0.02, 0.4))
            .body(cube("low", 0.2, 3, 0.0, 1e5, 0.5))
            .body(cube("high", 0.2, 4, 0.205, 3e5, -0.5));
        assert_thrown_bodies_conserve_momentum(scene.world().unwrap());
    })
}

/// Two bodies thrown at each other (no gravity), 60 steps: the total
/// momentum stays within 1e-9 of one body's, they touch, and the low one
/// no longer moves up at 0.5 m/s.
pub(crate) fn assert_thrown_bodies_conserve_momentum(mut w: World) {
    let (a, b) = (w.model.bodies[0].clone(), w.model.bodies[1].clone());
    let total = |w: &World| {
        let (pa, pb) = (w.state.bodies[0].momentum(&a), w.state.bodies[1].momentum(&b));
        [pa[0] + pb[0], pa[1] + pb[1], pa[2] + pb[2]]
    };
    let p0 = total(&w);
    let scale = a.total_mass() * 0.5;
    let mut touched = 0;
    for _ in 0..60 {
        let s = w.step().unwrap();
        touched += usize::from(s.contacts > 0);
        let p = total(&w);
        for d in 0..3 {
            assert!((p[d] - p0[d]).abs() <= 1e-9 * scale, "momentum axis {d}: {} vs {}", p[d], p0[d]);
        }
    }
    assert!(touched > 10, "the bodies never touched");
    let vz = w.state.bodies[0].momentum(&a)[2] / a.total_mass();
    assert!(vz < 0.4, "{vz}");
}

#[test]
fn stack_of_three_carries_the_weight_above_each_interface() {
    common::one_worker(|| {
        let scene = SceneBuilder::new(0.01)
            .pcg(1000, 1e-12)
            .pgs(3000, 1e-10)
            .contact(|c| (c.alarm_distance, c.body_friction) = (0.01, 0.5))
            .body(cube("bottom", 0.3, 3, 0.15, 2e5, 0.0).damping(3.0, 0.01))
            .body(cube("middle", 0.2, 3, 0.4, 1e5, 0.0).damping(3.0, 0.01))
            .body(cube("top", 0.1, 2, 0.55, 5e4, 0.0).damping(3.0, 0.01))
            .obstacle(floor());
        let mut w = scene.world().unwrap();
        let m: Vec<f64> = w.model.bodies.iter().map(|b| b.total_mass() * 9.81).collect();
        for _ in 0..300 {
            w.step().unwrap();
        }
        let space = w.constraints();
        let mut floor = 0.0;
        let mut interface = [0.0; 2];
        for (k, g) in space.problem.groups.iter().enumerate() {
            let ln = space.problem.impulses[3 * k];
            let bodies: Vec<usize> = g.parts().iter().map(|p| p.0).collect();
            match bodies.as_slice() {
                [0] => floor += ln,
                [x, y] if x.min(y) == &0 && x.max(y) == &1 => interface[0] += ln,
                [x, y] if x.min(y) == &1 && x.max(y) == &2 => interface[1] += ln,
                other => panic!("unexpected contact between {other:?}"),
            }
        }
        let checks = [(floor, m[0] + m[1] + m[2]), (interface[0], m[1] + m[2]), (interface[1], m[2])];
        for (i, (f, expected)) in checks.iter().enumerate() {
            assert!((f / expected - 1.0).abs() < 0.02, "interface {i}: {f} N vs {expected} N");
        }
    })
}

/// One body made of two separate cubes 1 cm apart along x, thrown at each other.
fn two_part_body(self_collision: bool) -> (World, Vec<bool>) {
    let a = ferrofem_mesh::generate::box_mesh([0.1, 0.1, 0.1], [2, 2, 2]).unwrap();
    let mut mesh = a.clone();
    mesh.transform(1.0, [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]], [-0.055, 0.0, 0.0]);
    let mut b = a.clone();
    b.transform(1.0, [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]], [0.055, 0.0, 0.0]);
    let offset = mesh.vertices.len();
    mesh.vertices.extend(b.vertices);
    mesh.tets.extend(b.tets.iter().map(|t| t.map(|i| i + offset)));
    let path =
        std::env::temp_dir().join(format!("ferrofem-two-part-{}-{self_collision}.msh", std::process::id()));
    ferrofem_mesh::io::write_tet_mesh(&path, &mesh).unwrap();
    let pair = BodySpec::new("pair", MeshSpec::file(path.display().to_string()), 1e5, 0.3, 1000.0)
        .with(|b| b.self_collision = self_collision);
    let scene = SceneBuilder::new(0.005)
        .gravity([0.0; 3])
        .pcg(1000, 1e-13)
        .pgs(2000, 1e-12)
        .contact(|c| (c.alarm_distance, c.body_friction) = (0.02, 0.0))
        .body(pair);
    let mut w = scene.world().unwrap();
    std::fs::remove_file(&path).ok();
    let left: Vec<bool> = w.model.bodies[0].rest_vertices().iter().map(|p| p[0] < 0.0).collect();
    for (i, l) in left.iter().enumerate() {
        w.state.bodies[0].velocities[3 * i] = if *l { 1.0 } else { -1.0 };
    }
    (w, left)
}

#[test]
fn self_collision_keeps_parts_of_one_body_apart() {
    common::one_worker(|| {
        for enabled in [true, false] {
            let (mut w, left) = two_part_body(enabled);
            let body = w.model.bodies[0].clone();
            let mut touched = 0;
            for _ in 0..30 {
                touched += usize::from(w.step().unwrap().contacts > 0);
                let p = w.state.bodies[0].momentum(&body);
                assert!(p.iter().all(|x| x.abs() < 1e-9), "momentum {p:?}");
            }
            let x = &w.state.bodies[0].positions;
            let right_min =
                (0..left.len()).filter(|&i| !left[i]).map(|i| x[3 * i]).fold(f64::INFINITY, f64::min);
            let left_max =
                (0..left.len()).filter(|&i| left[i]).map(|i| x[3 * i]).fold(f64::NEG_INFINITY, f64::max);
            if enabled {
                assert!(
                    touched > 5 && right_min - left_max > -1e-3,
                    "parts overlap by {}",
                    left_max - right_min
                );
            } else {
                assert!(
                    touched == 0 && left_max - right_min > 0.05,
                    "without self-collision the parts pass through"
                );
            }
        }
    })
}

#[test]
fn an_attachment_driven_into_the_floor_stops_with_a_clear_error() {
    common::one_worker(|| {
        // The block rests on the floor while its bottom vertices are dragged down
        // into it at 1 m/s: the attachment and contact rows cannot both hold.
        let dragged = Some(Motion::Velocity([0.0, 0.0, -1.0]));
        let mut w = block_scene_with(
            4,
            1e5,
            |b| b.attached([-1.0, -1.0, -0.001], [1.0, 1.0, 0.001], dragged),
            vec![floor()],
        );
        let mut stopped = None;
        for step in 1..=50 {
            match w.step() {
                Ok(s) => assert!(s.constraint_violation <= 0.01, "step {step}: violation reported"),
                Err(e) => {
                    stopped = Some((step, e.to_string()));
                    break;
                }
            }
        }
        let (step, message) = stopped.expect("the run stops");
        assert!(step <= 5, "it stops at once (step {step})");
        assert!(
            message.contains(&format!("step {step}")) && message.contains("constraints are violated"),
            "{message}"
        );
    })
}

/// A floor given as a closed triangle mesh (a generated slab whose vertices
/// all lie outside the block's footprint) acts as the half-space does.
#[test]
fn block_on_a_mesh_floor_carries_its_weight() {
    common::one_worker(|| {
        let slab = MeshSpec::Box { size: [1.0, 1.0, 0.2], cells: [3, 3, 1] };
        let mut w = block_scene(vec![ObstacleSpec::mesh("slab", slab).at([0.0, 0.0, -0.1]).friction(0.5)]);
        let weight = w.model.bodies[0].total_mass() * 9.81;
        for step in 1..=150 {
            let s = w.step().unwrap();
            if step >= 100 {
                assert_carries(&s, weight, step);
                assert!(s.contacts >= 25, "contacts {}", s.contacts);
            }
        }
    })
}

/// Contact points spaced 6 cm apart on a block of 2.5 cm cells (E = 1 MPa):
/// its bottom face meets the floor through 4–16 of its 81 vertices (the
/// Poisson-disk samples), which carry its weight as all 81 did; the face
/// between them sags into the floor by less than 2 mm (a point-supported
/// soft face: 1e5 Pa sags 8.7 mm).
#[test]
fn spaced_contact_points_carry_the_weight_with_fewer_contacts() {
    common::one_worker(|| {
        let spaced = |mut b: BodySpec| {
            b.contact_spacing = Some(0.06);
            b
        };
        let mut w = block_scene_with(8, 1e6, spaced, vec![floor()]);
        let weight = w.model.bodies[0].total_mass() * 9.81;
        let every = block_scene_with(8, 1e6, |b| b, vec![floor()]).step().unwrap().contacts;
        assert_eq!(every, 81);
        for step in 1..=150 {
            let s = w.step().unwrap();
            if step >= 100 {
                let rel = (s.total_normal_force - weight).abs() / weight;
                assert!(rel < 0.01, "step {step}: normal force {} against {weight}", s.total_normal_force);
                assert!(s.max_penetration < 2e-3, "step {step}: {}", s.max_penetration);
                assert!((4..=16).contains(&s.contacts), "{} contacts (every vertex: {every})", s.contacts);
                if step == 150 {
                    eprintln!(
                        "{} contacts, sag {} m, force {} N of {weight}",
                        s.contacts, s.max_penetration, s.total_normal_force
                    );
                }
            }
        }
    })
}

/// A coarse soft block set on a thin rigid pillar whose top lies inside
/// one bottom face, between the block's vertices: only the pillar's
/// vertices against the block's triangles can hold it, and they carry its
/// weight without letting the pillar in.
#[test]
fn coarse_block_rests_on_a_thin_pillar_between_its_vertices() {
    common::one_worker(|| {
        let pillar = MeshSpec::Box { size: [0.03, 0.03, 0.2], cells: [1, 1, 2] };
        let obstacles = vec![
            ObstacleSpec::mesh("pillar", pillar).at([0.0, 0.0, -0.1]).friction(0.5),
            ObstacleSpec::new("floor", Shape::HalfSpace).at([0.0, 0.0, -0.3]),
        ];
        let mut w = block_scene_with(3, 1e6, |b| b, obstacles);
        let body = w.model.bodies[0].clone();
        let weight = body.total_mass() * 9.81;
        for step in 1..=100 {
            let s = w.step().unwrap();
            if step >= 60 {
                assert_carries(&s, weight, step);
            }
        }
        let held = &w.contacts().obstacle[0];
        assert_eq!(held.len(), 4, "the pillar's four top corners hold the block");
        assert!(
            held.iter()
                .all(|c| matches!(c.feature, ferrofem::collision::ObstacleFeature::Vertex(_))
                    && c.obstacle == 0)
        );
        let z = w.state.bodies[0].center_of_mass(&body)[2];
        assert!(z > 0.09 && z < 0.1, "the block rests on the pillar: centre at z = {z}");
    })
}

/// A 1 cm blade (a square rod turned 45°) 60 cm long, its only vertices
/// at its ends, its top edge along y at z = 0.5 √2 cm.
const BLADE: &str = r#"[[obstacle]]
name = "blade"
mesh = { box = { size = [0.01, 0.6, 0.01], cells = [1, 1, 1] } }
transform = { rotation_deg = [0.0, 45.0, 0.0] }
friction = 0.3
"#;

/// A 40 cm cloth of 3.6 cm cells dropped centred across a 1 cm blade (a
/// square rod turned 45°) whose only vertices lie beyond the cloth's
/// sides, its top edge midway between two columns of the cloth's vertices: no vertex meets the
/// other's faces, so without edge–edge contacts the blade slices between
/// the cloth's vertices and the cloth falls past it. With `edge_edge` the
/// cloth's edges that cross the blade's top edge are held there: the cloth
/// hangs on the blade, no crossing sinks past its edge by more than a
/// millimetre, and edge contacts hold it.
#[test]
fn a_cloth_hangs_on_a_blade_between_its_vertices_by_edge_contacts() {
    common::one_worker(|| {
        let top = 0.005 * 2f64.sqrt();
        let run = |edge_edge: bool| {
            let text = format!(
                r#"
[simulation]
name = "cloth on a blade"
time_step = 0.01
steps = 60
integrator = "local-global"
[local_global]
iterations = 5
[contact]
alarm_distance = 0.01
edge_edge = {edge_edge}
[constraint_solver]
method = "non-smooth-newton"
[[body]]
name = "cloth"
mesh = {{ sheet = {{ size = [0.4, 0.4], cells = [11, 10] }} }}
transform = {{ translation = [0.0, 0.0, 0.04] }}
material = {{ young = 1.0e5, poisson = 0.4, density = 200.0 }}
thickness = 0.001
constitutive = "neo-hookean"
bending = {{ model = "isometric", stiffness = 1.0e-5 }}
{BLADE}"#
            );
            let mut w = Scene::from_toml(&text, common::scenes_dir(), "blade").unwrap().build().unwrap();
            let mut deepest = f64::NEG_INFINITY;
            for _ in 0..60 {
                w.step().unwrap();
                deepest = deepest.max(sunk_below_the_blade(&w, top));
            }
            let highest =
                w.state.bodies[0].positions.iter().skip(2).step_by(3).copied().fold(f64::MIN, f64::max);
            (w, highest, deepest)
        };
        let (_, highest, _) = run(false);
        assert!(
            highest < top - 0.5,
            "without edge contacts the cloth falls past the blade (top at z = {highest})"
        );
        let (w, highest, deepest) = run(true);
        eprintln!(
            "with edge contacts: top of the cloth {highest} m, deepest crossing {deepest} m below the blade"
        );
        assert!(
            highest > top - 0.04 && highest < top + 0.02,
            "the cloth hangs on the blade: top at z = {highest}"
        );
        assert!(deepest < 1e-3, "a crossing sank {deepest} m below the blade's edge");
        let held = &w.contacts().obstacle[0];
        assert!(!held.is_empty(), "the cloth touches the blade");
        let edge = |c: &ferrofem::collision::Contact| {
            matches!(c.feature, ferrofem::collision::ObstacleFeature::Edge(_))
        };
        assert!(held.iter().any(edge), "edge contacts hold it: {held:?}");
    })
}

/// The same blade under a coarse slab (40 × 40 × 2 cm, 11 × 10 × 1 cells,
/// implicit Euler): without edge–edge contacts it falls past the blade;
/// with them it rests on the blade's edge, the bottom vertices beside the
/// blade no lower than its edge (a straight edge between them crosses
/// it); under the implicit resolution (which re-finds the edge's closest
/// point at each linearization, and failed on this thin blade before only
/// the nearest edge kept a point inside) it is held, lower.
#[test]
fn a_coarse_slab_rests_on_a_blade_by_edge_contacts_under_both_resolutions() {
    common::one_worker(|| {
        let top = 0.005 * 2f64.sqrt();
        let run = |edge_edge: bool, resolution: &str| {
            let text = format!(
                r#"
[simulation]
name = "slab on a blade"
time_step = 0.01
steps = 40
[contact]
alarm_distance = 0.01
edge_edge = {edge_edge}
resolution = "{resolution}"
[[body]]
name = "slab"
mesh = {{ box = {{ size = [0.4, 0.4, 0.02], cells = [11, 10, 1] }} }}
transform = {{ translation = [0.0, 0.0, 0.03] }}
material = {{ young = 1.0e5, poisson = 0.4, density = 200.0 }}
{BLADE}"#
            );
            let mut w = Scene::from_toml(&text, common::scenes_dir(), "slab").unwrap().build().unwrap();
            (0..40).for_each(|_| {
                w.step().unwrap();
            });
            // The lowest bottom vertex within 2 cm of the blade's plane.
            let x = &w.state.bodies[0].positions;
            x.chunks(3).filter(|p| p[0].abs() < 0.02).map(|p| p[2]).fold(f64::INFINITY, f64::min)
        };
        let fallen = run(false, "explicit");
        assert!(fallen < top - 0.3, "without edge contacts the slab falls past the blade (z = {fallen})");
        let lowest = run(true, "explicit");
        assert!(
            lowest > top - 2e-3 && lowest < top + 0.02,
            "the slab rests on the blade's edge (its lowest vertex beside it at z = {lowest})"
        );
        // The implicit resolution holds it too, lower: within a step a held
        // point may turn about the edge as the slab drapes (measured 2.6 cm).
        let lowest = run(true, "implicit");
        eprintln!("slab on a blade: lowest vertex beside it {lowest} m under the implicit resolution");
        assert!(
            lowest > top - 0.04,
            "implicit: the slab is held by the blade (its lowest vertex beside it at z = {lowest})"
        );
    })
}

/// How far the cloth's edges that span the blade's top edge (the line
/// x = 0, z = `top`; edges whose ends lie less than 2 cm below it, not the
/// flaps hanging under the blade) cross it below that edge, at most (m;
/// negative: every crossing above it).
fn sunk_below_the_blade(w: &World, top: f64) -> f64 {
    let x = &w.state.bodies[0].positions;
    let (_, _, triangles) = w.model.bodies[0].mesh_view();
    let p = |i: usize| nalgebra::Vector3::new(x[3 * i], x[3 * i + 1], x[3 * i + 2]);
    let mut deepest = f64::NEG_INFINITY;
    for t in triangles {
        for k in 0..3 {
            let (a, b) = (p(t[k]), p(t[(k + 1) % 3]));
            let (da, db) = (a.x, b.x);
            if da * db < 0.0 && a.z.min(b.z) > top - 0.02 {
                let z = a.z + (b.z - a.z) * da / (da - db);
                deepest = deepest.max(top - z);
            }
        }
    }
    deepest
}

// ---- Local-global with contact (zeng2025 §5): the same constraint stack,
// solved inside the local-global iterations by non-smooth Newton or PGS.

/// A 0.1 × 0.1 × 0.3 m box (2 × 2 × 6 cells, E = 1e5, ν = 0.3) whose top
/// face (z = 0.15) is attached where it is.
pub(crate) fn hanging_box() -> BodySpec {
    BodySpec::new("hanging", MeshSpec::Box { size: [0.1, 0.1, 0.3], cells: [2, 2, 6] }, 1e5, 0.3, 1e3)
        .attached([-1.0, -1.0, 0.149], [1.0, 1.0, 0.151], None)
}

/// Runs the one-body world `w` for `steps` steps: every attached vertex
/// stays within 1e-6 m of its (fixed) target on every step, and the
/// attachments' vertical forces carry the weight within `rel`.
pub(crate) fn assert_attachments_hold(mut w: World, steps: usize, rel: f64) -> World {
    let body = w.model.bodies[0].clone();
    let weight = body.total_mass() * 9.81;
    for step in 1..=steps {
        w.step().unwrap();
        let s = &w.state.bodies[0];
        for &(v, _) in &body.attachments {
            let off = (0..3)
                .map(|d| (s.positions[3 * v + d] - body.rest_vertices()[v][d]).abs())
                .fold(0.0, f64::max);
            assert!(off < 1e-6, "step {step}: attached vertex {v} is {off:e} m off its target");
        }
    }
    // The attachments carry the weight (z rows of the attachment groups).
    let lift: f64 = w.constraints().problem.impulses.chunks(3).map(|l| l[2]).sum();
    assert!((lift - weight).abs() < rel * weight, "attachment force {lift} vs weight {weight}");
    w
}

/// A damped 0.2 m cube (E = 1 MPa) thrown down at `speed` from 5 cm above
/// a floor, with h = 0.01 s (v·h up to 0.5 m against a 1 cm alarm distance).
fn thrown_cube(speed: f64, contact: impl FnOnce(&mut ContactSettings)) -> World {
    let cube = BodySpec::new("cube", MeshSpec::cube(0.2, 4), 1e6, 0.3, 1000.0)
        .at([0.0, 0.0, 0.15])
        .damping(2.0, 0.01)
        .velocity([0.0, 0.0, -speed]);
    SceneBuilder::new(0.01)
        .pcg(50, 1e-8)
        .implicit_euler(|s| s.preconditioner = PreconditionerKind::Ldlt)
        .contact(|c| c.alarm_distance = 0.01)
        .contact(contact)
        .body(cube)
        .obstacle(ObstacleSpec::new("floor", Shape::HalfSpace).friction(0.3))
        .world()
        .unwrap()
}

/// Speculative contacts (the default): thrown at 20 and 50 m/s, no vertex,
/// interior ones included, is ever more than 1 µm under the floor, and the
/// cube comes to rest carrying its weight within 1 %. The same throw with
/// `speculative = false` tunnels, and the penetration figure says so.
#[test]
fn a_cube_thrown_at_the_floor_neither_tunnels_nor_sinks() {
    common::one_worker(|| {
        for speed in [20.0, 50.0] {
            let mut w = thrown_cube(speed, |_| ());
            let weight = w.model.bodies[0].total_mass() * 9.81;
            let mut deepest: f64 = 0.0;
            let mut last = None;
            for _ in 0..200 {
                let s = w.step().unwrap();
                assert!(s.violation.is_none() && s.inverted_elements == 0, "{:?}", s.violation);
                deepest = deepest.max(s.max_penetration);
                last = Some(s);
            }
            assert!(deepest < 1e-6, "{speed} m/s: a vertex went {deepest:e} m under the floor");
            assert_carries(&last.unwrap(), weight, 200);

            let mut tunnelling = thrown_cube(speed, |c| c.speculative = false);
            let first = tunnelling.step().unwrap();
            assert!(first.max_penetration > 0.1, "{speed} m/s: {}", first.max_penetration);
            let v = first.violation.expect("a violation is reported");
            assert!(v.contains("inside obstacle `floor`") && v.contains("vertex"), "{v}");
        }
    })
}

/// A 5 cm block whose top is dragged down at 3 m/s by an attachment onto a
/// 2 cm plate: its bottom crosses the plate's top between steps 5 and 6
/// (a depth under half the plate's thickness: the limit is set to 1 mm).
fn dragged_through_a_plate(contact: impl FnOnce(&mut ContactSettings)) -> World {
    let block =
        BodySpec::new("block", MeshSpec::Box { size: [0.1, 0.1, 0.05], cells: [4, 4, 2] }, 1e6, 0.3, 1e3)
            .at([0.0, 0.0, 0.2])
            .attached([-1.0, -1.0, 0.224], [1.0, 1.0, 0.226], Some(Motion::Velocity([0.0, 0.0, -3.0])));
    SceneBuilder::new(0.01)
        .pcg(50, 1e-8)
        .implicit_euler(|s| s.preconditioner = PreconditionerKind::Ldlt)
        .contact(|c| (c.alarm_distance, c.max_penetration) = (0.005, Some(0.001)))
        .contact(contact)
        .body(block)
        .obstacle(ObstacleSpec::new("plate", Shape::Box { size: [0.3, 0.3, 0.02] }))
        .world()
        .unwrap()
}

/// Driven through a thin obstacle faster than contacts are found:
/// `on_violation = "stop"` stops at the step whose penetration exceeds the
/// limit, naming body, obstacle and depth; `"warn"` (the default) reports
/// the same step in its stats and goes on (until the plate's contacts meet
/// the attachment and the conflict stops it); with speculative contacts the
/// plate is seen in time and the conflict with the attachment stops the run.
#[test]
fn a_body_dragged_through_a_thin_plate_is_reported_at_the_step_it_enters() {
    common::one_worker(|| {
        let mut stopped =
            dragged_through_a_plate(|c| (c.speculative, c.on_violation) = (false, OnViolation::Stop));
        let error = (1..=10).find_map(|_| stopped.step().err()).expect("the run stops");
        let message = error.to_string();
        assert!(message.starts_with("step 6: body `block`: vertex"), "{message}");
        assert!(message.contains("inside obstacle `plate` (limit 1.000e-3 m"), "{message}");

        let mut warned = dragged_through_a_plate(|c| c.speculative = false);
        // It goes on until the vertices inside the plate meet its contacts and
        // the attachment (the conflict error of the last test).
        let steps: Vec<StepStats> = (0..10).map_while(|_| warned.step().ok()).collect();
        assert!(steps.len() > 6, "warned steps go on ({} steps)", steps.len());
        let first = steps.iter().position(|s| s.violation.is_some()).map(|k| k + 1);
        assert_eq!(first, Some(6), "first violation");
        assert!(steps[4].max_penetration == 0.0 && steps[5].max_penetration > 0.001);

        let mut speculative = dragged_through_a_plate(|_| ());
        let error = (1..=10).find_map(|_| speculative.step().err()).expect("the conflict stops the run");
        assert!(error.to_string().contains("constraints are violated"), "{error}");
    })
}

/// The built-in drop with its PGS capped at `sweeps`, `on_violation` as given.
fn capped_drop(sweeps: usize, on_violation: &str) -> World {
    let text = std::fs::read_to_string(common::scenes_dir().join("drop.toml"))
        .unwrap()
        .replace("max_iterations = 200", &format!("max_iterations = {sweeps}"))
        .replace(
            "alarm_distance = 0.02",
            &format!("alarm_distance = 0.02\non_violation = \"{on_violation}\""),
        );
    Scene::from_toml(&text, common::scenes_dir(), "capped drop").unwrap().build().unwrap()
}

/// Convergence is a figure of every constraint solve: the drop's PGS (200
/// sweeps, tolerance 1e-8) meets its tolerance at every contact step and
/// reports it; capped at 2 sweeps, the impulses still change by their own
/// size at the first impacts, and that step is a violation naming body
/// and stage (an error under `on_violation = "stop"`), where a cap met
/// with settled impulses is the early stop the presets are tuned for.
#[test]
fn a_constraint_solve_stopped_with_unsettled_impulses_is_a_violation() {
    common::one_worker(|| {
        let mut sound = capped_drop(200, "warn");
        let steps: Vec<StepStats> = (0..60).map(|_| sound.step().unwrap()).collect();
        let contact: Vec<&StepStats> = steps.iter().filter(|s| s.contacts > 0).collect();
        assert!(contact.len() > 20, "the ball lands");
        assert!(contact.iter().all(|s| s.constraint_converged == Some(true) && s.violation.is_none()));
        assert!(steps.iter().filter(|s| s.contacts == 0).all(|s| s.constraint_converged.is_none()));

        let mut capped = capped_drop(2, "warn");
        let steps: Vec<StepStats> = (0..60).map(|_| capped.step().unwrap()).collect();
        let stalled: Vec<&StepStats> = steps.iter().filter(|s| s.violation.is_some()).collect();
        assert!(!stalled.is_empty(), "two sweeps leave an impact unsettled");
        for s in &stalled {
            let v = s.violation.as_deref().unwrap();
            assert!(
                v.starts_with("body `ball`, stage solve_constraints") && v.contains("after 2 PGS sweeps"),
                "{v}"
            );
            assert_eq!(s.constraint_converged, Some(false));
        }
        let settled = steps.iter().filter(|s| s.constraint_converged == Some(false) && s.violation.is_none());
        assert!(settled.count() > 10, "most capped solves are early stops, not violations");

        let mut stopped = capped_drop(2, "stop");
        let error = (0..60).find_map(|_| stopped.step().err()).expect("the stall stops the run");
        assert!(error.to_string().contains(&format!("step {}", stalled[0].step)), "{error}");
    })
}
