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
/// centre's speed `ω r` within 2 % every 10 steps over its first 0.6 s
/// (0.45 m/s), without penetration or inverted tets.
#[test]
fn cylinder_rolls_down_the_slope_without_slipping() {
    let mut w = common::builtin("rolling-cylinder", |_| {});
    let radius = 0.05;
    for step in 1..=(0.6 / w.model.time_step).round() as usize {
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
            println!("step {step}: v {speed:.4} m/s, ω r {:.4} m/s, slip {slip:.2e}", omega.abs() * radius);
            assert!(slip < 0.02, "step {step}: v {speed} m/s against ω r {} m/s", omega.abs() * radius);
        }
    }
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
                        * b.mass.iter().enumerate().map(|(i, m)| m * st.velocities[3 * i + d]).sum::<f64>()
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
            assert!((lhs - rhs).abs() < 1e-6 * total * 9.81, "step {step}, axis {d}: {lhs} against {rhs}");
        }
    }
    assert!(most > 500, "the pile formed only {most} contacts");
}

/// The vertical contact force on body `b`'s bottom face: the forces on its
/// vertices within 1 mm of its lowest one, summed.
fn bottom_face_reaction(w: &ferrofem::World, b: usize) -> f64 {
    let x = &w.state.bodies[b].positions;
    let lowest = x.iter().skip(2).step_by(3).copied().fold(f64::INFINITY, f64::min);
    let forces = &w.constraints().problem.bodies[b].forces;
    (0..x.len() / 3).filter(|&i| x[3 * i + 2] < lowest + 1e-3).map(|i| forces[3 * i + 2]).sum()
}

/// zeng2022 Fig. 18, bottom (`hetero-stack`): five pads, alternately 10×
/// stiffer, on the floor. Once the stack has settled (from step 8), each
/// pad's bottom face carries the weight of that pad and those above it
/// within 1 % (the floor the whole stack's): W couples every interface's
/// forces with the pads above and below it. No pad sinks into another.
#[test]
fn each_interface_of_the_heterogeneous_stack_carries_the_weight_above() {
    let mut w = common::builtin("hetero-stack", |_| {});
    let weights: Vec<f64> = w.model.bodies.iter().map(|b| b.total_mass() * 9.81).collect();
    for step in 1..=15 {
        let s = w.step().unwrap();
        assert!(s.max_penetration < 1e-6, "step {step}: {}", s.max_penetration);
        for b in (0..weights.len()).filter(|_| step >= 8) {
            let above: f64 = weights[b..].iter().sum();
            let carried = bottom_face_reaction(&w, b);
            assert!(
                (carried - above).abs() < 0.01 * above,
                "step {step}, pad {b}: {carried} N against {above} N"
            );
        }
    }
}
