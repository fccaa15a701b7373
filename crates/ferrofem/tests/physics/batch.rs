//! Many worlds stepped at once (`Batch`): equal to each world stepped
//! alone, bit for bit, and a world that fails stops alone.

use ferrofem::batch::{Batch, BatchMode};
use ferrofem::obstacle::Shape;
use ferrofem::scene::{BodySpec, MeshSpec, ObstacleSpec, SceneBuilder};
use ferrofem::World;

/// A soft cube thrown at the floor at `speed` (m/s).
fn world(speed: f64) -> World {
    let cube = BodySpec::new("cube", MeshSpec::cube(0.1, 3), 1e5, 0.3, 1000.0)
        .at([0.0, 0.0, 0.06])
        .velocity([0.1, 0.0, -speed]);
    SceneBuilder::new(0.01)
        .obstacle(ObstacleSpec::new("floor", Shape::HalfSpace).friction(0.4))
        .body(cube)
        .world()
        .unwrap()
}

#[test]
fn worlds_stepped_together_equal_worlds_stepped_alone_bitwise() {
    for mode in [BatchMode::Worlds, BatchMode::Inside, BatchMode::Auto] {
        let mut batch = Batch { worlds: (0..5).map(|k| world(0.2 * k as f64)).collect(), mode };
        let results = batch.step(15);
        assert!(results.iter().all(|r| r.as_ref().is_ok_and(|s| s.as_ref().unwrap().contacts > 0)));
        for (k, together) in batch.worlds.iter().enumerate() {
            let mut alone = world(0.2 * k as f64);
            (0..15).for_each(|_| drop(alone.step().unwrap()));
            assert_eq!(together.state.bodies[0].positions, alone.state.bodies[0].positions, "{mode:?}, {k}");
            assert_eq!(
                together.state.bodies[0].velocities, alone.state.bodies[0].velocities,
                "{mode:?}, {k}"
            );
        }
    }
}

#[test]
fn a_failed_world_stops_alone() {
    let mut batch = Batch::new((0..3).map(|_| world(0.5)).collect());
    let dofs = batch.worlds[1].model.bodies[0].dofs();
    batch.worlds[1].set_velocities(0, &vec![1e300; dofs]).unwrap();
    let results = batch.step(3);
    assert!(
        results[1].is_err(),
        "world 1 blows up: {:?}",
        results[1].as_ref().map(|s| s.as_ref().map(|s| (s.step, s.kinetic_energy)))
    );
    assert!(results[0].is_ok() && results[2].is_ok());
    assert_eq!(batch.worlds.iter().map(|w| w.state.step).collect::<Vec<_>>()[0], 3);
    let refs: Vec<&mut World> = batch.worlds.iter_mut().collect();
    assert_eq!(BatchMode::Auto.resolve(&refs, 2), BatchMode::Worlds, "3 small worlds on 2 threads");
    assert_eq!(BatchMode::Auto.resolve(&refs, 8), BatchMode::Inside, "3 worlds on 8 threads");
}
