//! Per-vertex output fields against analytic values.

use crate::common;
use ferrofem::fields::Field;
use ferrofem::scene::{BodySpec, MeshSpec, SceneBuilder};
use nalgebra::Vector3;

/// A bar stretched uniformly by 1 % along x with free lateral faces
/// (ν = 0) carries σ_xx = E ε: its von Mises stress is E · 0.01 in
/// every vertex; rigidly turned, the same.
#[test]
fn uniform_stretch_gives_e_times_strain() {
    common::one_worker(|| {
        let bar =
            BodySpec::new("bar", MeshSpec::Box { size: [0.3, 0.1, 0.1], cells: [3, 1, 1] }, 2e6, 0.0, 1e3);
        let w = SceneBuilder::new(0.01).body(bar).world().unwrap();
        let body = &w.model.bodies[0];
        let turn = nalgebra::Rotation3::from_euler_angles(0.3, -0.2, 1.1);
        let mut state = w.state.bodies[0].clone();
        for (x, x0) in state.positions.chunks_exact_mut(3).zip(body.rest_vertices()) {
            let p = turn * Vector3::new(1.01 * x0[0], x0[1], x0[2]);
            x.copy_from_slice(p.as_slice());
        }
        let mut out = Vec::new();
        Field::VonMises.values(body, &state, &[], &mut out);
        assert!(out.iter().all(|s| (s - 2e6 * 0.01).abs() < 1e-6 * 2e4), "{out:?}");
        Field::Displacement.values(body, &w.state.bodies[0], &[], &mut out);
        assert!(out.iter().all(|&d| d == 0.0));
        Field::ContactForce.values(body, &state, &[], &mut out);
        assert_eq!(out.len(), body.vertex_count());
    })
}
