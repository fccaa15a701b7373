use nalgebra::Vector3;

use super::*;
use crate::body::{Body, Rayleigh};
use crate::material::Material;

/// A cube of 2×2×2 cells, 5 cm a side, centred at the origin.
pub(crate) fn cube() -> Body {
    let mesh = ferrofem_mesh::generate::box_mesh([0.05; 3], [2, 2, 2]).unwrap();
    let materials = vec![Material { young: 1e4, poisson: 0.3, density: 1000.0 }; mesh.tets.len()];
    let free = vec![None; mesh.vertices.len()];
    Body::solid("cube".into(), mesh, materials, Rayleigh::default(), free).unwrap()
}

/// A needle 2.5 cm above the cube's top face, coming down at 10 cm/s.
pub(crate) fn needle() -> Needle {
    Needle {
        name: "n".into(),
        body: 0,
        tip: Vector3::new(0.001, 0.002, 0.05),
        axis: -Vector3::z(),
        length: 0.1,
        motion: ObstacleMotion { velocity: [0.0, 0.0, -0.1], ..Default::default() },
        puncture_force: 1.0,
        friction: 100.0,
        spacing: 0.01,
        tip_friction: 0.0,
    }
}

#[test]
fn the_line_enters_through_the_face_it_meets_first() {
    let body = cube();
    let x = body.rest_positions();
    let origin = Vector3::new(0.001, 0.002, 0.2);
    let (s, p) = surface_hit(&body.surface, &x, &origin, &-Vector3::z(), 1.0).unwrap();
    assert!((s - 0.175).abs() < 1e-12, "the top face at z = 0.025 is 0.175 below: {s}");
    assert!((p.position(&x) - Vector3::new(0.001, 0.002, 0.025)).norm() < 1e-12);
    // Cast the other way, the same line leaves through the top face: its
    // outward normal faces the ray, so it is not entered.
    assert!(surface_hit(&body.surface, &x, &origin, &Vector3::z(), 1.0).is_none());
}

#[test]
fn a_point_inside_is_located_by_the_weights_that_give_it_back() {
    let body = cube();
    let x = body.rest_positions();
    let q = Vector3::new(0.003, -0.011, 0.007);
    let p = locate_in_tets(&body.tets, &x, &q).unwrap();
    assert!(p.pairs.iter().all(|&(_, w)| w >= -1e-12));
    assert!((p.position(&x) - q).norm() < 1e-14);
    assert!(locate_in_tets(&body.tets, &x, &Vector3::new(0.0, 0.0, 0.03)).is_none());
}

#[test]
fn the_pose_puts_a_shaft_along_local_z_from_the_back_to_the_tip() {
    for axis in [-Vector3::z(), Vector3::z(), Vector3::new(1.0, 2.0, -0.5).normalize()] {
        let n = Needle { axis, ..needle() };
        let (r, c) = n.pose(0.3);
        let tip = r * Vector3::new(0.0, 0.0, 0.5 * n.length) + c;
        let back = r * Vector3::new(0.0, 0.0, -0.5 * n.length) + c;
        assert!((tip - n.tip_at(0.3)).norm() < 1e-15, "{axis:?}: {tip:?}");
        assert!((back - (n.tip_at(0.3) - axis * n.length)).norm() < 1e-15, "{axis:?}: {back:?}");
    }
}

#[test]
fn the_tip_punctures_at_its_force_and_then_leaves_points_behind_it() {
    let (body, n) = (cube(), needle());
    let x = body.rest_positions();
    let mut state = NeedleState::default();
    // At t = 0.25 the tip is on the top face (z = 0.025).
    let (gap, entry) = n.surface_ahead(&body.surface, &x, 0.24, 0.005).unwrap();
    assert!((gap - 0.001).abs() < 1e-12, "1 mm above at t = 0.24: {gap}");
    // Below the puncture force the surface holds.
    let pressing = |force| NeedleReaction { tip: Some((entry, force)), shaft: 0.0 };
    n.advance(&mut state, &body.tets, &x, 0.25, pressing(0.5));
    assert!(!state.punctured && state.force == 0.5 && state.points.is_empty());
    n.advance(&mut state, &body.tets, &x, 0.25, pressing(1.5));
    assert!(state.punctured && state.points.len() == 1 && state.tip_force == 1.5);
    // 2.5 cm deeper (t = 0.5: tip at z = 0): two more points, 1 cm apart, on the line.
    n.advance(&mut state, &body.tets, &x, 0.5, NeedleReaction { tip: None, shaft: 2.0 });
    assert_eq!((state.points.len(), state.force, state.tip_force), (3, 2.0, 0.0));
    let at: Vec<Vector3<f64>> = state.points.iter().map(|p| p.point.position(&x)).collect();
    assert!((at[1] - Vector3::new(0.001, 0.002, 0.015)).norm() < 1e-12, "{at:?}");
    assert!((at[2] - Vector3::new(0.001, 0.002, 0.005)).norm() < 1e-12, "{at:?}");
    assert!(state.points.iter().all(|p| p.bound == 1.0));
    assert_eq!(state.points.iter().map(|p| p.id).collect::<Vec<_>>(), [0, 1, 2]);
    // Drawn back out past every point, the needle leaves the tissue.
    let back = Needle { motion: ObstacleMotion { velocity: [0.0, 0.0, 0.1], ..Default::default() }, ..n };
    back.advance(&mut state, &body.tets, &x, 0.5, NeedleReaction::default());
    assert!(!state.punctured && state.points.is_empty());
}
