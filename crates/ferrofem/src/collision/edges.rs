//! Edge–edge contacts (`[contact] edge_edge`): a mesh obstacle's sharp
//! edges against a body's surface edges that pass them within the search
//! distance, at interior points of both. A blade whose vertices lie
//! farther apart than a sheet's edges otherwise slices between the
//! sheet's vertices: its vertices meet the sheet's triangles and the
//! sheet's vertices its faces, and nothing holds the edge between.

use std::collections::HashMap;

use rayon::prelude::*;

use super::{
    closest_between_segments, contact, point, BodyPoint, Contact, ContactSettings, ObstacleFeature, Reach,
    SurfaceTree,
};
use crate::body::Body;
use crate::obstacle::Obstacle;

/// Closest points within this fraction of an edge's end are left to the
/// vertex contacts there.
const INTERIOR: f64 = 1e-6;

/// Obstacle `o`'s sharp edges ([`Obstacle::sharp_edges_at`]) against the
/// surface edges of `tree`'s triangles at `positions`, by (obstacle
/// edge, body edge): a contact holds the body edge's closest point
/// (weights `1 − s, s`) along the offset from the obstacle edge's closest
/// point, where the two lie within the search distance (the tree's margin
/// plus the obstacle's reach), inside both edges, and the offset faces out
/// of both of the edge's faces; a body point inside the obstacle, with the
/// offset into both faces and less than the alarm distance long, is a
/// penetration (the normal reversed, the gap negative), kept for the
/// nearest such edge only. Edges whose two vertices are kinematic are
/// skipped.
#[allow(clippy::too_many_arguments)]
pub(super) fn edge_contacts(
    body: &Body,
    positions: &[f64],
    reach: &Reach,
    tree: &SurfaceTree,
    obs: &Obstacle,
    o: usize,
    t: f64,
    settings: &ContactSettings,
) -> Vec<Contact> {
    let edges = obs.sharp_edges_at(t);
    if edges.is_empty() {
        return Vec::new();
    }
    let driven = |e: &[usize; 2]| e.iter().all(|&i| body.is_kinematic[i]);
    let interior = |u: f64| u > INTERIOR && u < 1.0 - INTERIOR;
    let mut found: Vec<Contact> = edges
        .par_iter()
        .enumerate()
        .flat_map_iter(|(k, &([qa, qb], faces))| {
            let extra = reach.of_obstacle(&obs.velocity_at(&((qa + qb) * 0.5), t));
            let radius = tree.margin() + extra;
            let mut near: Vec<[usize; 2]> = tree
                .triangles_near(&qa.inf(&qb).add_scalar(-extra), &qa.sup(&qb).add_scalar(extra))
                .flat_map(|tri| [0, 1, 2].map(|i| (tri[i], tri[(i + 1) % 3])))
                .map(|(u, v)| [u.min(v), u.max(v)])
                .filter(|e| !driven(e))
                .collect();
            near.sort_unstable();
            near.dedup();
            near.into_iter().filter_map(move |e| {
                let (p0, p1) = (point(positions, e[0]), point(positions, e[1]));
                let (s, r) = closest_between_segments(&p0, &p1, &qa, &qb);
                let held_at = p0 + (p1 - p0) * s;
                let offset = held_at - (qa + (qb - qa) * r);
                let distance = offset.norm();
                if !(interior(s) && interior(r) && distance < radius && distance > 1e-12 * radius) {
                    return None;
                }
                // Outside, the offset must face out of both faces (the
                // edge is the closest feature); inside, into both, and
                // less than the alarm distance deep: a penetration whose
                // normal turns back out.
                let facing = faces.map(|n| offset.dot(&n));
                let inside = obs.penetration(&held_at, t).is_some();
                let side = match inside {
                    false if facing.iter().all(|&f| f >= 0.0) => 1.0,
                    true if facing.iter().all(|&f| f <= 0.0) && distance < settings.alarm_distance => -1.0,
                    _ => return None,
                };
                let held = BodyPoint::Edge { vertices: e, weights: [1.0 - s, s] };
                let mut c =
                    contact(held, o, offset * (side / distance), side * distance, settings, obs.friction);
                c.feature = ObstacleFeature::Edge(k);
                Some(c)
            })
        })
        .collect();
    nearest_inside(&mut found, settings.contact_distance);
    found
}

/// Keeps, of a body edge's contacts from inside the obstacle (gap under
/// `−skin`, the contact distance), the one with the nearest edge (the
/// first on a tie): the edge it entered by, where a thin obstacle's
/// opposite edge would push it out the far side.
fn nearest_inside(found: &mut Vec<Contact>, skin: f64) {
    let key = |c: &Contact| match c.point {
        BodyPoint::Edge { vertices, .. } => vertices,
        _ => [usize::MAX; 2],
    };
    let mut nearest: HashMap<[usize; 2], usize> = HashMap::new();
    for (i, c) in found.iter().enumerate().filter(|(_, c)| c.gap < -skin) {
        let best = nearest.entry(key(c)).or_insert(i);
        if c.gap > found[*best].gap {
            *best = i;
        }
    }
    let mut i = 0;
    found.retain(|c| {
        i += 1;
        c.gap >= -skin || nearest[&key(c)] == i - 1
    });
}
