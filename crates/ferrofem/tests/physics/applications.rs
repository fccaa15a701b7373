//! The application scenes of the papers (zeng2022 §6.2), each with a
//! physics check of its own over its full length.

use crate::common;

/// zeng2022 Fig. 17 (`pad-on-sphere`): the pad drapes over the sphere and
/// comes to rest on it, centred, without penetration or inverted tets; at
/// rest it touches the sphere with the paper's 1,200–1,300 constraints
/// (contacts × 3, within 10 %), the top of its centre less than half a
/// pad's thickness below where it was on the sphere's top (the hanging
/// sides' tension presses it on), and the contacts' normal forces carry its
/// weight (their sum at least what Coulomb's law allows, weight / √(1 + μ²)).
#[test]
fn pad_drapes_over_the_sphere_and_rests_on_it() {
    common::one_worker(|| {
        let mut w = common::builtin("pad-on-sphere", |_| {});
        let steps = w.model.time_step.recip().round() as usize * 6 / 5;
        let (radius, thickness) = (0.1, 0.02);
        let mut last = None;
        for step in 0..steps {
            let s = w.step().unwrap();
            assert_eq!(s.inverted_elements, 0, "step {step}");
            assert!(s.max_penetration < 1e-6, "step {step}: {}", s.max_penetration);
            if step + 20 >= steps {
                assert!(s.kinetic_energy < 1e-3, "step {step}: not at rest, {} J", s.kinetic_energy);
            }
            last = Some(s);
        }
        let s = last.unwrap();
        let body = &w.model.bodies[0];
        let x = &w.state.bodies[0].positions;
        let n = body.vertex_count();
        let centre: Vec<f64> = (0..3).map(|d| (0..n).map(|i| x[3 * i + d]).sum::<f64>() / n as f64).collect();
        assert!(centre[0].abs() < 1e-3 && centre[1].abs() < 1e-3, "centre {centre:?}");
        let rest = body.rest_vertices();
        let top = (0..n)
            .filter(|&i| rest[i][2] > rest.iter().map(|r| r[2]).fold(f64::MIN, f64::max) - 1e-9)
            .min_by(|&a, &b| (rest[a][0].hypot(rest[a][1])).total_cmp(&rest[b][0].hypot(rest[b][1])))
            .unwrap();
        let squeeze = radius + thickness - x[3 * top + 2];
        assert!((0.0..0.5 * thickness).contains(&squeeze), "top at {}", x[3 * top + 2]);
        assert!((360..=480).contains(&s.contacts), "{} contacts", s.contacts);
        // Vertically, Σ λₙ cos θ + friction = weight with |friction| ≤ μ λₙ:
        // the normal forces carry at least weight / √(1 + μ²).
        let (weight, mu) = (body.total_mass() * 9.81, 0.3_f64);
        let least = weight / (1.0 + mu * mu).sqrt();
        assert!(
            s.total_normal_force > 0.99 * least,
            "normal forces {} N, weight {weight} N",
            s.total_normal_force
        );
    })
}

/// Centre-of-mass velocity and angular velocity about the x axis of body
/// 0 (`L_x / I_xx` about the centre of mass, lumped masses).
fn centre_velocity_and_spin(w: &ferrofem::World) -> ([f64; 3], f64) {
    let (body, s) = (&w.model.bodies[0], &w.state.bodies[0]);
    let m = &body.mass;
    let total: f64 = m.iter().sum();
    let mean = |v: &[f64]| -> [f64; 3] {
        std::array::from_fn(|d| m.iter().enumerate().map(|(i, mi)| mi * v[3 * i + d]).sum::<f64>() / total)
    };
    let (c, vc) = (mean(&s.positions), mean(&s.velocities));
    let (mut l, mut inertia) = (0.0, 0.0);
    for (i, mi) in m.iter().enumerate() {
        let (y, z) = (s.positions[3 * i + 1] - c[1], s.positions[3 * i + 2] - c[2]);
        let (vy, vz) = (s.velocities[3 * i + 1] - vc[1], s.velocities[3 * i + 2] - vc[2]);
        l += mi * (y * vz - z * vy);
        inertia += mi * (y * y + z * z);
    }
    (vc, l / inertia)
}

/// zeng2022 Fig. 14 (`rolling-cylinder`): with μ above the rolling
/// threshold the cylinder rolls down the slope without slipping, its
/// centre's speed `ω r` within 2 % every 10 steps over its first 0.4 s
/// (0.38 m/s), without penetration or inverted tets.
#[test]
fn cylinder_rolls_down_the_slope_without_slipping() {
    common::one_worker(|| {
        let mut w = common::builtin("rolling-cylinder", |_| {});
        let radius = 0.05;
        for step in 1..=(0.4 / w.model.time_step).round() as usize {
            let s = w.step().unwrap();
            assert_eq!(s.inverted_elements, 0, "step {step}");
            assert!(s.max_penetration < 1e-6, "step {step}: {}", s.max_penetration);
            if step % 10 == 0 {
                let (vc, omega) = centre_velocity_and_spin(&w);
                let speed = vc.iter().map(|v| v * v).sum::<f64>().sqrt();
                // Downhill is −y (and down); rolling there, the contact point
                // (below the centre) is at rest: v_y + ω r = 0, so ω > 0 about x.
                assert!(vc[1] < 0.0 && omega > 0.0, "step {step}: v {vc:?}, ω {omega}");
                let slip = (speed - omega.abs() * radius).abs() / speed;
                println!(
                    "step {step}: v {speed:.4} m/s, ω r {:.4} m/s, slip {slip:.2e}",
                    omega.abs() * radius
                );
                assert!(slip < 0.02, "step {step}: v {speed} m/s against ω r {} m/s", omega.abs() * radius);
            }
        }
    })
}

/// zeng2022 Fig. 13 (`ten-tori`): while the tori fall onto the pillars,
/// the floor and each other, the pile's momentum changes by gravity, mass
/// damping and the obstacles' contact forces alone: the torus–torus forces
/// (a vertex's λ against its triangle's corners) cancel in pairs. Per
/// step and axis, `Σ m (v⁺ − v)/h + α Σ m v⁺ = M g + Σ Hᵀλ` to 1e-6 of the
/// weight (elastic and stiffness-damping forces sum to zero on each body),
/// with no tet inverted; over the first quarter second, through the first
/// impacts (several hundred contacts; the full length runs in the ignored
/// sweep).
#[test]
fn the_pile_of_tori_exchanges_momentum_only_with_the_obstacles() {
    common::one_worker(|| {
        let mut w = common::builtin("ten-tori", |_| {});
        let h = w.model.time_step;
        let g = w.model.gravity;
        let total: f64 = w.model.bodies.iter().map(|b| b.total_mass()).sum();
        let momentum = |w: &ferrofem::World| -> [f64; 3] {
            std::array::from_fn(|d| {
                let per_body = w.model.bodies.iter().zip(&w.state.bodies);
                per_body
                    .map(|(b, s)| {
                        b.mass.iter().enumerate().map(|(i, m)| m * s.velocities[3 * i + d]).sum::<f64>()
                    })
                    .sum()
            })
        };
        let mut most = 0;
        for step in 1..=25 {
            let before = momentum(&w);
            let s = w.step().unwrap();
            assert_eq!(s.inverted_elements, 0, "step {step}");
            most = most.max(s.contacts);
            let after = momentum(&w);
            let damping: [f64; 3] = std::array::from_fn(|d| {
                let per_body = w.model.bodies.iter().zip(&w.state.bodies);
                per_body
                    .map(|(b, st)| {
                        b.damping.mass
                            * b.mass
                                .iter()
                                .enumerate()
                                .map(|(i, m)| m * st.velocities[3 * i + d])
                                .sum::<f64>()
                    })
                    .sum()
            });
            let contact: [f64; 3] = std::array::from_fn(|d| {
                w.constraints()
                    .problem
                    .bodies
                    .iter()
                    .map(|r| r.forces.iter().skip(d).step_by(3).sum::<f64>())
                    .sum()
            });
            for d in 0..3 {
                let lhs = (after[d] - before[d]) / h + damping[d];
                let rhs = total * g[d] + contact[d];
                assert!(
                    (lhs - rhs).abs() < 1e-6 * total * 9.81,
                    "step {step}, axis {d}: {lhs} against {rhs}"
                );
            }
        }
        assert!(most > 500, "the pile formed only {most} contacts");
    })
}

/// The vertical contact force on body `b`'s bottom face: the forces on the
/// vertices of its lowest layer at rest, summed.
fn bottom_face_reaction(w: &ferrofem::World, b: usize) -> f64 {
    let rest = w.model.bodies[b].rest_vertices();
    let lowest = rest.iter().map(|r| r[2]).fold(f64::INFINITY, f64::min);
    let forces = &w.constraints().problem.bodies[b].forces;
    (0..rest.len()).filter(|&i| rest[i][2] < lowest + 1e-9).map(|i| forces[3 * i + 2]).sum()
}

/// Steps built-in stack `name` to `steps`; from step `settled` on, each
/// box's bottom face carries the weight of that box and those above it
/// within `tolerance` (relative; the floor the whole stack's) and no box
/// sinks into another by `penetration`; prints the worst relative miss.
fn stack_carries_the_weight(name: &str, steps: usize, settled: usize, tolerance: f64, penetration: f64) {
    let mut w = common::builtin(name, |_| {});
    let weights: Vec<f64> = w.model.bodies.iter().map(|b| b.total_mass() * 9.81).collect();
    let mut worst = 0.0_f64;
    for step in 1..=steps {
        let s = w.step().unwrap();
        assert!(s.max_penetration < penetration, "{name}, step {step}: {}", s.max_penetration);
        for b in (0..weights.len()).filter(|_| step >= settled) {
            let above: f64 = weights[b..].iter().sum();
            let carried = bottom_face_reaction(&w, b);
            worst = worst.max((carried - above).abs() / above);
            assert!(
                (carried - above).abs() < tolerance * above,
                "{name}, step {step}, box {b}: {carried} N against {above} N"
            );
        }
    }
    eprintln!("{name}: worst relative miss {worst:.2e} from step {settled}");
}

/// zeng2022 Fig. 18, bottom (`hetero-stack`): five pads, alternately 10×
/// stiffer, on the floor. Once the stack has settled (from step 8), each
/// pad's bottom face carries the weight of that pad and those above it
/// within 1 % (the floor the whole stack's): W couples every interface's
/// forces with the pads above and below it. No pad sinks into another.
#[test]
fn each_interface_of_the_heterogeneous_stack_carries_the_weight_above() {
    common::one_worker(|| {
        stack_carries_the_weight("hetero-stack", 12, 8, 0.01, 1e-6);
    })
}

/// zeng2022 Fig. 18, top: five stiff boxes, each 4× (`stack-256`) or 8×
/// (`stack-4096`) heavier than the one under it, under the non-smooth
/// Newton. Once settled (from step 40), every interface carries the weight
/// above it within 1 %, the floor the whole stack's; no box sinks into
/// another by 1 mm (half the alarm distance; 0.58 mm at the first steps
/// of `stack-4096`).
#[test]
fn stacks_at_mass_ratios_256_and_4096_carry_the_weight_above() {
    common::one_worker(|| {
        stack_carries_the_weight("stack-256", 50, 40, 0.01, 1e-3);
        stack_carries_the_weight("stack-4096", 50, 40, 0.01, 1e-3);
    })
}

/// Volume-weighted mean Green strain `‖(FᵀF − I)/2‖` of body 0's tets in
/// `part`, at its current positions.
fn mean_strain(w: &ferrofem::World, part: &[bool]) -> f64 {
    let (body, x) = (&w.model.bodies[0], &w.state.bodies[0].positions);
    let (mut sum, mut volume) = (0.0, 0.0);
    for (tet, _) in body.tets.iter().zip(part).filter(|(_, &p)| p) {
        let f = tet.gradient(x);
        let e = (f.transpose() * f - nalgebra::Matrix3::identity()) * 0.5;
        sum += tet.measure * e.norm();
        volume += tet.measure;
    }
    sum / volume
}

/// `scenes/external/<name>.toml` with body 0's mesh replaced by `mesh` of
/// the shared meshes (filled at `resolution` when given, a surface or a
/// volume's boundary); `None`, said on stderr, when they are absent.
fn external_with_mesh(name: &str, mesh: &str, resolution: Option<usize>) -> Option<ferrofem::scene::Scene> {
    let Some(meshes) = common::shared_meshes() else {
        eprintln!("skipping: ../shared/meshes is absent");
        return None;
    };
    let path = common::scenes_dir().join(format!("external/{name}.toml"));
    let mut scene = ferrofem::scene::Scene::from_file(&path).unwrap();
    let tetrahedralize =
        resolution.map(|r| ferrofem::scene::Tetrahedralize { cell: None, resolution: Some(r) });
    let path = meshes.join(mesh).display().to_string();
    scene.spec.bodies[0].mesh = ferrofem::scene::MeshSpec::File { path, tetrahedralize };
    Some(scene)
}

/// Runs a pulled body's scene to its end, `check` on every step; returns
/// the elastic energy's peak and the last step's figures, after checking
/// that the body has left the obstacles (no contact), was deformed (a peak
/// above `least` J) and springs back (its energy at the end below
/// `fraction` of the peak).
fn springs_back(
    scene: ferrofem::scene::Scene,
    least: f64,
    fraction: f64,
    mut check: impl FnMut(usize, &ferrofem::stats::StepStats),
) {
    let steps = scene.spec.simulation.steps;
    let mut w = scene.build().unwrap();
    let (mut peak, mut last) = (0.0_f64, None);
    for step in 0..steps {
        let s = w.step().unwrap();
        check(step, &s);
        peak = peak.max(s.elastic_energy);
        last = Some(s);
    }
    let s = last.unwrap();
    eprintln!("elastic energy {} J at the end, {peak} J at its peak", s.elastic_energy);
    assert_eq!(s.contacts, 0, "still among the obstacles");
    assert!(peak > least, "hardly deformed: {peak} J");
    assert!(s.elastic_energy < fraction * peak, "{} J against {peak} J", s.elastic_energy);
}

/// zeng2022 Fig. 15 (`scenes/external/hetero-armadillo.toml`, on SOFA's
/// 1.4k-vertex armadillo to keep the test short): the icosphere pushes into
/// the 10× stiffer torso; at rest, the soft limbs carry the load with more
/// strain than the torso by about the stiffness ratio more than they do
/// when the armadillo is of one material (the paper: "softer parts should
/// deform more obviously"), and the pushed torso resists with more force.
/// No penetration, no inverted tet, at rest at the end.
#[test]
fn the_soft_limbs_of_the_heterogeneous_armadillo_take_the_strain() {
    common::one_worker(|| {
        let scene = |hetero: bool| {
            let mut s = external_with_mesh("hetero-armadillo", "sofa/Armadillo_Tetra_4406.vtu", None)?;
            if !hetero {
                s.spec.bodies[0].regions.clear();
            }
            Some(s.build().unwrap())
        };
        let run = |w: &mut ferrofem::World| {
            let steps = w.model.time_step.recip().round() as usize * 3 / 2;
            let mut last = None;
            for step in 0..steps {
                let s = w.step().unwrap();
                assert_eq!(s.inverted_elements, 0, "step {step}");
                assert!(s.max_penetration < 1e-6, "step {step}: {}", s.max_penetration);
                last = Some(s);
            }
            let s = last.unwrap();
            assert!(s.kinetic_energy < 1e-6, "not at rest: {} J", s.kinetic_energy);
            s.total_normal_force
        };
        let (Some(mut het), Some(mut hom)) = (scene(true), scene(false)) else { return };
        let mus: Vec<f64> = het.model.bodies[0].tets.iter().map(|t| t.lame.mu).collect();
        let split =
            0.5 * (mus.iter().copied().fold(f64::MAX, f64::min) + mus.iter().copied().fold(0.0, f64::max));
        let stiff: Vec<bool> = mus.iter().map(|&mu| mu > split).collect();
        let soft: Vec<bool> = stiff.iter().map(|s| !s).collect();
        let (force_het, force_hom) = (run(&mut het), run(&mut hom));
        let ratio = |w: &ferrofem::World| mean_strain(w, &soft) / mean_strain(w, &stiff);
        let (r_het, r_hom) = (ratio(&het), ratio(&hom));
        eprintln!(
        "strain soft/stiff: {r_het} heterogeneous, {r_hom} homogeneous; force {force_het} / {force_hom} N"
    );
        assert!((5.0..20.0).contains(&(r_het / r_hom)), "{r_het} against {r_hom}");
        assert!(force_het > 1.2 * force_hom, "{force_het} N against {force_hom} N");
    })
}

/// Body `b`'s centre of mass (lumped masses).
fn centre_of_mass(w: &ferrofem::World, b: usize) -> nalgebra::Vector3<f64> {
    let (m, x) = (&w.model.bodies[b].mass, &w.state.bodies[b].positions);
    let total: f64 = m.iter().sum();
    nalgebra::Vector3::from_fn(|d, _| {
        m.iter().enumerate().map(|(i, mi)| mi * x[3 * i + d]).sum::<f64>() / total
    })
}

/// zeng2022 Figs. 19–20 (`scenes/external/gripper-raptor.toml`, on SOFA's
/// 3k-vertex raptor to keep the test short): two soft fingers, driven by
/// their bases, squeeze the raptor, lift it, carry it 5 cm, set it down and
/// let go. While carried (1.5–2.5 s) it hangs off the floor and its centre
/// of mass moves with the fingers' bases within 5 mm: friction between soft
/// bodies holds its weight. Let go, it comes to rest on the floor, its
/// centre of mass 5 cm (within 1 cm) sideways from where it stood, the
/// fingers off it (it tips forward onto its snout: its centre of mass
/// moves 2.5 cm along its length, bounded here by 4 cm). No inverted tet,
/// no penetration.
#[test]
fn the_soft_gripper_picks_and_places_the_raptor() {
    common::one_worker(|| {
        let Some(scene) = external_with_mesh("gripper-raptor", "sofa/raptorTetra_8418.vtu", None) else {
            return;
        };
        let steps = scene.spec.simulation.steps;
        let mut w = scene.build().unwrap();
        let second = w.model.time_step.recip().round() as usize;
        let carrying = second * 3 / 2..=second * 5 / 2;
        let (mut start, first) = (None, centre_of_mass(&w, 0));
        let (mut drift, mut hanging, mut last) = (0.0_f64, f64::INFINITY, None);
        for step in 1..=steps {
            let s = w.step().unwrap();
            assert_eq!(s.inverted_elements, 0, "step {step}");
            assert!(s.max_penetration < 1e-5, "step {step}: {}", s.max_penetration);
            if carrying.contains(&step) {
                let (c, b) = (centre_of_mass(&w, 0), finger_bases(&w));
                let (c0, b0) = *start.get_or_insert((c, b));
                drift = drift.max(((c - c0) - (b - b0)).norm());
                hanging = hanging.min(lowest(&w));
            }
            last = Some(s);
        }
        let (c0, b0) = start.unwrap();
        let (carried, lifted) = (finger_bases(&w) - b0, c0.z - first.z);
        let placed = centre_of_mass(&w, 0) - first;
        let s = last.unwrap();
        eprintln!(
        "lifted {lifted} m, carried {carried:?}; centre of mass off by at most {drift} m, lowest point {hanging} m; placed {placed:?}, {} J",
        s.kinetic_energy
    );
        assert!(drift < 5e-3, "the raptor slipped {drift} m against the fingers");
        assert!(hanging > 0.02, "while carried, the raptor's lowest point is {hanging} m above the floor");
        assert!((placed.x - 0.05).abs() < 0.01 && placed.y.abs() < 0.04, "placed at {placed:?}");
        assert!(
            lowest(&w).abs() < 1e-3 && s.kinetic_energy < 1e-4,
            "not at rest on the floor: {} J",
            s.kinetic_energy
        );
        assert!(w.contacts().pairs.is_empty(), "the fingers still touch the raptor");
    })
}

/// The mean of the driven vertices of bodies 1 and 2 (a gripper's fingers).
fn finger_bases(w: &ferrofem::World) -> nalgebra::Vector3<f64> {
    let mut sum = (nalgebra::Vector3::zeros(), 0.0);
    for b in 1..3 {
        let (body, x) = (&w.model.bodies[b], &w.state.bodies[b].positions);
        for i in (0..body.vertex_count()).filter(|&i| body.is_kinematic[i]) {
            sum = (sum.0 + nalgebra::Vector3::new(x[3 * i], x[3 * i + 1], x[3 * i + 2]), sum.1 + 1.0);
        }
    }
    sum.0 / sum.1
}

/// Height of body 0's lowest point (m).
fn lowest(w: &ferrofem::World) -> f64 {
    w.state.bodies[0].positions.iter().skip(2).step_by(3).copied().fold(f64::INFINITY, f64::min)
}

/// zeng2025 Figs. 2 and 11 (`scenes/external/grabbing-raptor.toml` as it
/// is, on the 9.5k-vertex raptor: about a minute, so ignored; `cargo test
/// --release -p ferrofem --test physics -- --ignored cable_driven`): two soft
/// fingers curled by their cables grab the raptor, lift it and carry it.
/// Over the last second it hangs off the floor (its lowest point 2 cm above
/// it at least) and its centre of mass moves with the fingers' bases within
/// 5 mm; every step, the cables' lengths meet their targets within 0.1 mm;
/// no inverted tet, no penetration.
#[test]
#[ignore]
fn cable_driven_fingers_grab_and_hold_the_raptor() {
    common::one_worker(|| {
        let Some(meshes) = common::shared_meshes() else {
            return eprintln!("skipping: ../shared/meshes is absent");
        };
        let path = common::scenes_dir().join("external/grabbing-raptor.toml");
        let mut scene = ferrofem::scene::Scene::from_file(&path).unwrap();
        for b in &mut scene.spec.bodies {
            if let ferrofem::scene::MeshSpec::File { path, .. } = &mut b.mesh {
                *path = meshes.join(path.trim_start_matches("../../../shared/meshes/")).display().to_string();
            }
        }
        let steps = scene.spec.simulation.steps;
        let mut w = scene.build().unwrap();
        let holding = steps - w.model.time_step.recip().round() as usize..=steps;
        let (mut start, mut drift, mut hanging) = (None, 0.0_f64, f64::INFINITY);
        for step in 1..=steps {
            let s = w.step().unwrap();
            assert_eq!(s.inverted_elements, 0, "step {step}");
            assert!(s.max_penetration < 1e-5, "step {step}: {}", s.max_penetration);
            for c in &s.cables {
                assert!((c.length - c.target).abs() < 1e-4, "step {step}: {c:?}");
            }
            if holding.contains(&step) {
                let (c, b) = (centre_of_mass(&w, 0), finger_bases(&w));
                let (c0, b0) = *start.get_or_insert((c, b));
                drift = drift.max(((c - c0) - (b - b0)).norm());
                hanging = hanging.min(lowest(&w));
            }
        }
        eprintln!("centre of mass off the fingers by at most {drift} m, lowest point {hanging} m");
        assert!(drift < 5e-3, "the raptor slipped {drift} m against the fingers");
        assert!(hanging > 0.02, "held, the raptor's lowest point is {hanging} m above the floor");
    })
}

/// zeng2025 Fig. 3 with the bunny standing in for the wooper
/// (`scenes/external/pulling-bunny.toml`, filled at a coarser resolution
/// to keep the test short): pulled by its back through a gap narrower than
/// its body, the stiff bunny (E = 1e7 Pa) squeezes through and springs
/// back: once it has left the posts, its elastic energy is below 1 % of its
/// peak between them. No inverted tet, no penetration beyond a tenth of
/// the alarm distance.
#[test]
fn the_pulled_bunny_squeezes_through_the_gap_and_springs_back() {
    common::one_worker(|| {
        let Some(scene) = external_with_mesh("pulling-bunny", "npm-bunny/bunny.obj", Some(12)) else {
            return;
        };
        springs_back(scene, 1e3, 0.01, |step, s| {
            assert_eq!(s.inverted_elements, 0, "step {step}");
            assert!(s.max_penetration < 1e-3, "step {step}: {}", s.max_penetration);
        });
    })
}

/// zeng2025 Fig. 1 with the gingerbread stand-in (`scenes/external/pulling.toml`,
/// the 10k mesh's surface refilled coarser to keep the test short): dragged
/// by its head between two posts and two rollers that press it thinner, the
/// figure (E = 1e6 Pa, stable Neo-Hookean) comes out and springs back: once
/// past the obstacles its elastic energy is below 2 % of its peak among
/// them. Tets that invert while its arms fold past the posts are restored
/// (none from step 250 on); no penetration beyond the alarm distance.
#[test]
fn the_pulled_gingerbread_figure_passes_the_obstacles_and_springs_back() {
    common::one_worker(|| {
        let mesh = "generated/gingerbread_standin_tet_10k.msh";
        let Some(scene) = external_with_mesh("pulling", mesh, Some(20)) else { return };
        springs_back(scene, 100.0, 0.02, |step, s| {
            assert!(step < 250 || s.inverted_elements == 0, "step {step}: {} inverted", s.inverted_elements);
            assert!(s.max_penetration < 1e-2, "step {step}: {}", s.max_penetration);
        });
    })
}

/// zeng2022 Fig. 16 (`needle-insertion`): the needle's force rises while
/// its tip presses the surface in, reaches the puncture force, drops once
/// the tip is through, then grows with the tissue on its shaft: each point
/// that slides resists with its bound (`friction × spacing`), so during the
/// insertion the force never exceeds the points' bounds summed and is
/// within one bound of it (the newest point has not slipped yet) when the
/// needle stops. Held still, static friction keeps a force below that
/// sum. No tet inverts; every point stays on the shaft's line.
#[test]
fn the_needle_punctures_the_tissue_then_slides_on_its_shaft_friction() {
    common::one_worker(|| {
        let mut steps = 0;
        let mut w = common::builtin("needle-insertion", |s| steps = s.spec.simulation.steps);
        let needle = w.model.needles[0].clone();
        let bound = needle.friction * needle.spacing;
        let (mut rising, mut peak, mut punctured_at) = (0.0, 0.0, None);
        for step in 0..steps {
            let s = w.step().unwrap();
            let n = &s.needles[0];
            assert_eq!(s.inverted_elements, 0, "step {}", s.step);
            assert!(s.constraint_violation < 1e-6, "step {}: {}", s.step, s.constraint_violation);
            match punctured_at {
                None if n.punctured => {
                    assert!(n.force >= needle.puncture_force, "punctured at {} N", n.force);
                    (peak, punctured_at) = (n.force, Some(step));
                }
                None => {
                    assert!(
                        n.force >= rising - 1e-9,
                        "step {}: the tip's force fell, {} → {}",
                        s.step,
                        rising,
                        n.force
                    );
                    rising = n.force;
                }
                Some(at) => {
                    let sum = bound * n.shaft_points as f64;
                    assert!(
                        n.force <= sum * (1.0 + 1e-6),
                        "step {}: {} N over the bounds' {sum} N",
                        s.step,
                        n.force
                    );
                    if step == at + 1 {
                        assert!(n.force < 0.5 * peak, "no drop after the puncture: {} → {} N", peak, n.force);
                    }
                    if (s.time - 1.2).abs() < 1e-9 {
                        assert!(n.shaft_points >= 6, "{} points after 3 cm", n.shaft_points);
                        assert!(n.force >= sum - bound * (1.0 + 1e-6), "stopping: {} N of {sum} N", n.force);
                    }
                    if s.time > 1.25 {
                        assert!(n.force > 0.5 * sum, "held still: {} N of {sum} N", n.force);
                    }
                }
            }
        }
        assert!(punctured_at.is_some(), "the tip never punctured the surface");
    })
}
