//! Frictional contact against rigid obstacles (zeng2022 §3.2–3.3).

use ferrofem::scene::Scene;
use ferrofem::World;

fn block_scene(extra: &str, obstacle: &str) -> World {
    let text = format!(
        r#"
[simulation]
time_step = 0.01
steps = 1
[implicit_euler]
max_iterations = 500
rel_tolerance = 1e-10
{extra}
[contact]
alarm_distance = 0.01
pgs = {{ max_iterations = 500, tolerance = 1e-10 }}
[[body]]
name = "block"
mesh = {{ box = {{ size = [0.2, 0.2, 0.2], cells = [4, 4, 4] }} }}
transform = {{ translation = [0.0, 0.0, 0.1] }}
material = {{ young = 1e5, poisson = 0.3, density = 1000.0 }}
damping = {{ mass = 2.0, stiffness = 0.01 }}
{obstacle}
"#
    );
    Scene::from_toml(&text, ".".into(), "contact-test").unwrap().build().unwrap()
}

#[test]
fn block_resting_on_a_plane_carries_its_weight() {
    let mut w = block_scene("", "[[obstacle]]\nname = \"floor\"\nshape = \"half_space\"\nfriction = 0.5\n");
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
            assert!(s.max_penetration < 1e-6, "step {step}: penetration {}", s.max_penetration);
            let rel = (s.total_normal_force - weight).abs() / weight;
            assert!(rel < 0.01, "step {step}: normal force {} vs weight {weight}", s.total_normal_force);
        }
        last = Some(s);
    }
    let c = w.state.bodies[0].center_of_mass(&body);
    let drift = (0..3).map(|d| (c[d] - c_settled[d]).abs()).fold(0.0, f64::max);
    assert!(drift < 1e-6, "drift {drift:e} over 400 steps");
    let s = last.unwrap();
    assert!(s.contacts >= 25, "contacts {}", s.contacts);
}
