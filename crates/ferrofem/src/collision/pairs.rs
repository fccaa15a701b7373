//! Deformable–deformable proximity: every surface vertex of one body
//! against the surface triangles of another, both ways (zeng2022 §3.2).
//! Candidates come from the other body's [`SurfaceTree`].

use rayon::prelude::*;

use super::geometry::{point, tangents};
use super::reach::Reach;
use super::settings::ContactSettings;
use super::tree::SurfaceTree;
use crate::body::Body;

/// A vertex of body `a` near a triangle of body `b`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PairContact {
    /// Body owning the vertex.
    pub a: usize,
    /// The vertex (volume numbering of body `a`).
    pub vertex: usize,
    /// Body owning the triangle.
    pub b: usize,
    /// Triangle vertices (volume numbering of body `b`).
    pub triangle: [usize; 3],
    /// Barycentric weights of the closest point on the triangle.
    pub weights: [f64; 3],
    /// Rows: the triangle's outward normal, then two tangents.
    pub frame: [[f64; 3]; 3],
    /// Signed gap along the normal (m).
    pub gap: f64,
}

/// Vertex–triangle contacts between every ordered pair of distinct bodies,
/// and within a body whose `self_collision` is on (triangles touching the
/// vertex excluded), at the given positions, sorted by (a, vertex, b).
/// `trees[b]` holds body `b`'s surface at `positions[b]`, its margin the
/// alarm distance plus body `b`'s reach; a vertex searches that far plus
/// its own reach.
pub fn detect_pair_contacts(
    bodies: &[Body],
    positions: &[&[f64]],
    reach: &[Reach],
    trees: &[SurfaceTree],
    settings: &ContactSettings,
) -> Vec<PairContact> {
    let mut out = Vec::new();
    for b in 0..bodies.len() {
        let xb = positions[b];
        for a in (0..bodies.len()).filter(|&a| a != b || bodies[b].self_collision) {
            let body_a = &bodies[a];
            let found: Vec<PairContact> = body_a
                .surface
                .volume_vertex
                .par_iter()
                .filter(|&&v| !body_a.is_kinematic[v] && body_a.contact_point[v])
                .filter_map(|&v| {
                    let p = point(positions[a], v);
                    let hit = trees[b].closest(xb, &p, reach[a].at(v), |t| a == b && t.contains(&v))?;
                    let n = hit.facing_normal(xb, &p, bodies[b].is_membrane());
                    let (t1, t2) = tangents(&n);
                    Some(PairContact {
                        a,
                        vertex: v,
                        b,
                        triangle: hit.triangle,
                        weights: hit.weights,
                        frame: [n.into(), t1.into(), t2.into()],
                        gap: (p - hit.point).dot(&n) - settings.contact_distance,
                    })
                })
                .collect();
            out.extend(found);
        }
    }
    out.sort_by_key(|c| (c.a, c.vertex, c.b));
    out
}
