//! Cables (zeng2025 §7, Fig. 11): a polyline through a body's material
//! points whose length one bilateral row holds to a target.

use crate::common;

/// A 10 cm cube hangs from a cable: from a pull point 5 cm above its top's
/// centre, down to the point 1 cm under it and across to a second point
/// 3 cm away (an interior kink, whose row direction is `u₁ − u₀`). The cable is pulled in
/// by 2 cm over half a second, then held. In every step its length matches
/// the target to the linearization's second order (1e-4 of the rest
/// length); over the last 0.2 s its tension carries the cube's weight
/// within 1 % (the kink's pair of forces is internal), under both
/// integrators (local-global without damping: 0.4 %).
#[test]
fn a_hanging_cube_rides_its_cable_and_the_tension_carries_its_weight() {
    common::one_worker(|| {
        for (integrator, damping) in [("implicit_euler", "damping = { mass = 4.0 }"), ("local_global", "")] {
            let mut w = common::world(&format!(
                r#"
            [simulation]
            name = "cable"
            time_step = 0.01
            steps = 150
            integrator = "{integrator}"
            gravity = [0.0, 0.0, -9.81]

            [[body]]
            name = "cube"
            mesh = {{ box = {{ size = [0.1, 0.1, 0.1], cells = [4, 4, 4] }} }}
            material = {{ young = 1e5, poisson = 0.3, density = 1000.0 }}
            {damping}

            [[cable]]
            name = "cable"
            body = "cube"
            pull_point = [0.0, 0.0, 0.1]
            points = [[0.0, 0.0, 0.04], [0.03, 0.0, 0.04]]
            displacement = [[0.0, 0.0], [0.5, 0.02]]
            "#
            ));
            let weight = w.model.bodies[0].total_mass() * 9.81;
            let rest = w.model.cables[0].rest_length;
            assert!((rest - 0.09).abs() < 1e-12, "{rest}");
            let mut tensions = Vec::new();
            for step in 0..150 {
                let s = w.step().unwrap_or_else(|e| panic!("{integrator}: {e}"));
                let c = &s.cables[0];
                // Second order in the step's motion: 4e-6 m in the first step.
                assert!((c.length - c.target).abs() < 1e-4 * rest, "{integrator} step {step}: {c:?}");
                if step >= 130 {
                    tensions.push(c.tension);
                }
            }
            let (lo, hi) = tensions.iter().fold((f64::MAX, f64::MIN), |(a, b), &t| (a.min(t), b.max(t)));
            assert!(
                (lo - weight).abs() < 0.01 * weight && (hi - weight).abs() < 0.01 * weight,
                "{integrator}: tension {lo}..{hi} N, weight {weight} N"
            );
        }
    })
}

/// A cable point outside its body, a pull point on its first point,
/// keyframes out of order and a cable under `device = "gpu"` are refused,
/// each naming its key.
#[test]
fn a_cable_off_its_body_or_out_of_order_is_refused_by_name() {
    common::one_worker(|| {
        let scene = |cable: &str| {
            let text = format!(
                r#"
            [simulation]
            name = "cable"
            time_step = 0.01
            steps = 1

            [[body]]
            name = "cube"
            mesh = {{ box = {{ size = [0.1, 0.1, 0.1], cells = [2, 2, 2] }} }}
            material = {{ young = 1e5, poisson = 0.3, density = 1000.0 }}

            [[cable]]
            name = "cable"
            body = "cube"
            {cable}
            "#
            );
            let built = ferrofem::scene::Scene::from_toml(&text, ".".into(), "test")
                .and_then(|s| s.build().map(|_| ()));
            built.expect_err("refused").to_string()
        };
        let e = scene("points = [[0.0, 0.0, 0.0], [0.0, 0.0, 0.2]]\ndisplacement = [[0.0, 0.0]]");
        assert!(e.contains("cable[0].points[1]") && e.contains("outside body \"cube\""), "{e}");
        let e =
            scene("pull_point = [0.0, 0.0, 0.0]\npoints = [[0.0, 0.0, 0.0]]\ndisplacement = [[0.0, 0.0]]");
        assert!(e.contains("cable[0].points") && e.contains("zero length"), "{e}");
        let e =
            scene("points = [[0.0, 0.0, 0.0], [0.0, 0.0, 0.01]]\ndisplacement = [[0.5, 0.0], [0.5, 0.01]]");
        assert!(e.contains("cable[0].displacement") && e.contains("increase"), "{e}");
        let gpu = ferrofem::scene::Scene::from_toml(
            "[simulation]\nname = \"c\"\ntime_step = 0.01\nsteps = 1\ndevice = \"gpu\"\n\
         [[body]]\nname = \"cube\"\nmesh = { box = { size = [0.1, 0.1, 0.1], cells = [2, 2, 2] } }\n\
         material = { young = 1e5, poisson = 0.3, density = 1000.0 }\n\
         [[cable]]\nname = \"c\"\nbody = \"cube\"\npoints = [[0.0, 0.0, 0.0], [0.0, 0.0, 0.01]]\n\
         displacement = [[0.0, 0.0]]\n",
            ".".into(),
            "test",
        );
        let e = gpu.expect_err("refused before any device is looked for").to_string();
        assert!(e.contains("simulation.device") && e.contains("a cable is solved by the CPU"), "{e}");
    })
}
