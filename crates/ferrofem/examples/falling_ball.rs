//! Builds a scene from a string, steps it, and prints the ball's centre of
//! mass against the ballistic trajectory.
//!
//! `cargo run --release -p ferrofem --example falling_ball`

use ferrofem::scene::Scene;

fn main() -> Result<(), ferrofem::SimError> {
    let scene = Scene::from_toml(
        r#"
[simulation]
time_step = 0.01
steps = 50

[[body]]
name = "ball"
mesh = { ball = { radius = 0.1, resolution = 8 } }
material = { young = 1e5, poisson = 0.4, density = 1000.0 }
initial_velocity = [1.0, 0.0, 2.0]
"#,
        ".".into(),
        "example",
    )?;
    let mut world = scene.build()?;
    let body = world.model.bodies[0].clone();
    let z0 = world.state.bodies[0].center_of_mass(&body)[2];
    for _ in 0..scene.spec.simulation.steps {
        let stats = world.step()?;
        if stats.step % 10 == 0 {
            let t = stats.time;
            let z = world.state.bodies[0].center_of_mass(&body)[2];
            let ballistic = z0 + 2.0 * t - 0.5 * 9.81 * t * t;
            println!(
                "t = {t:.2} s  z = {z:+.5} m  (ballistic {ballistic:+.5})  {} CG iterations, {:.2} ms",
                stats.cg_iterations, stats.step_ms
            );
        }
    }
    Ok(())
}
