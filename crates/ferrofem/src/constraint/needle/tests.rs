use super::*;
use crate::needle::tests::{cube, needle};
use crate::needle::NeedleState;
use crate::state::BodyState;

/// The cube and the needle at time `t`, the tissue moved by `shift`.
fn world(t: f64, shift: [f64; 3], needle_state: NeedleState) -> (Model, State) {
    let body = cube();
    let mut x = body.rest_positions();
    x.iter_mut().enumerate().for_each(|(i, v)| *v += shift[i % 3]);
    let mut model = Model::new(vec![body.clone()], [0.0; 3], 0.01);
    model.needles.push(needle());
    model.contact.alarm_distance = 0.005;
    let mut bodies = vec![BodyState::at_rest(&body)];
    bodies[0].positions = x;
    (model, State { time: t, bodies, needles: vec![needle_state], ..Default::default() })
}

#[test]
fn the_tip_presses_along_the_axis_then_the_shaft_holds_its_points_on_its_line() {
    let (model, state) = world(0.24, [0.0; 3], NeedleState::default());
    let mut groups = Vec::new();
    needle_groups(&model, &state, &mut groups);
    assert_eq!(groups.len(), 1, "the tip, 1 mm above the face");
    let g = &groups[0];
    assert_eq!(
        (g.law, g.frame[0], g.key.2),
        (ConstraintGroup::Contact { mu: 0.0 }, [0.0, 0.0, -1.0], Partner::NeedleTip(0))
    );
    assert!((g.offset[0] - 0.001).abs() < 1e-12 && (g.obstacle_shift[0] - 0.001).abs() < 1e-15, "{g:?}");
    // Not yet within the alarm distance: no group.
    let (model, early) = world(0.1, [0.0; 3], NeedleState::default());
    needle_groups(&model, &early, &mut groups);
    assert_eq!(groups.len(), 1);
    // Punctured with three points, the tissue pushed 0.5 mm off the line.
    let mut punctured = NeedleState::default();
    let n = needle();
    let (body, x) = (cube(), cube().rest_positions());
    let entry = n.surface_ahead(&body.surface, &x, 0.25, 0.005).unwrap().1;
    n.advance(&mut punctured, &body.tets, &x, 0.25, NeedleReaction { tip: Some((entry, 2.0)), shaft: 0.0 });
    n.advance(&mut punctured, &body.tets, &x, 0.5, NeedleReaction::default());
    let (model, state) = world(0.5, [5e-4, 0.0, 0.0], punctured);
    groups.clear();
    needle_groups(&model, &state, &mut groups);
    assert_eq!(groups.len(), 3);
    for (k, g) in groups.iter().enumerate() {
        assert_eq!((g.law, g.key), (ConstraintGroup::Shaft { bound: 1.0 }, (0, k, Partner::NeedleShaft(0))));
        assert!((g.offset[1].hypot(g.offset[2]) - 5e-4).abs() < 1e-15, "{:?}", g.offset);
        assert!((g.obstacle_shift[0] - 0.001).abs() < 1e-15, "along the shaft the needle moves 1 mm a step");
    }
    // The reaction sums the shaft's friction rows.
    let lambda = [0.3, 9.0, 9.0, 0.2, 9.0, 9.0, -0.1, 9.0, 9.0];
    let r = needle_reaction(0, &groups, &lambda);
    assert!(r.tip.is_none() && (r.shaft - 0.4).abs() < 1e-15, "{r:?}");
    assert_eq!(needle_reaction(1, &groups, &lambda), NeedleReaction::default());
}
