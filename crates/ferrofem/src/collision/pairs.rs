//! Deformable–deformable proximity: every surface vertex of one body
//! against the surface triangles of another, both ways (zeng2022 §3.2).
//! Candidates come from the other body's [`SurfaceTree`].

use nalgebra::Vector3;
use rayon::prelude::*;

use super::{point, tangents, ContactSettings, Reach, SurfaceTree};
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

/// Closest point of triangle `abc` to `p` as barycentric weights (Ericson,
/// Real-Time Collision Detection §5.1.5).
pub fn closest_on_triangle(
    p: &Vector3<f64>,
    a: &Vector3<f64>,
    b: &Vector3<f64>,
    c: &Vector3<f64>,
) -> [f64; 3] {
    let (ab, ac, ap) = (b - a, c - a, p - a);
    let (d1, d2) = (ab.dot(&ap), ac.dot(&ap));
    if d1 <= 0.0 && d2 <= 0.0 {
        return [1.0, 0.0, 0.0];
    }
    let bp = p - b;
    let (d3, d4) = (ab.dot(&bp), ac.dot(&bp));
    if d3 >= 0.0 && d4 <= d3 {
        return [0.0, 1.0, 0.0];
    }
    let vc = d1 * d4 - d3 * d2;
    if vc <= 0.0 && d1 >= 0.0 && d3 <= 0.0 {
        let v = d1 / (d1 - d3);
        return [1.0 - v, v, 0.0];
    }
    let cp = p - c;
    let (d5, d6) = (ab.dot(&cp), ac.dot(&cp));
    if d6 >= 0.0 && d5 <= d6 {
        return [0.0, 0.0, 1.0];
    }
    let vb = d5 * d2 - d1 * d6;
    if vb <= 0.0 && d2 >= 0.0 && d6 <= 0.0 {
        let w = d2 / (d2 - d6);
        return [1.0 - w, 0.0, w];
    }
    let va = d3 * d6 - d5 * d4;
    if va <= 0.0 && (d4 - d3) >= 0.0 && (d5 - d6) >= 0.0 {
        let w = (d4 - d3) / ((d4 - d3) + (d5 - d6));
        return [0.0, 1.0 - w, w];
    }
    let denom = 1.0 / (va + vb + vc);
    let (v, w) = (vb * denom, vc * denom);
    [1.0 - v - w, v, w]
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
                .filter(|&&v| !body_a.is_kinematic[v])
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn closest_point_regions() {
        let (a, b, c) = (Vector3::zeros(), Vector3::x(), Vector3::y());
        let w = closest_on_triangle(&Vector3::new(0.2, 0.2, 1.0), &a, &b, &c);
        assert!((0..3).all(|k| (w[k] - [0.6, 0.2, 0.2][k]).abs() < 1e-15), "{w:?}");
        assert_eq!(closest_on_triangle(&Vector3::new(-1.0, -1.0, 0.0), &a, &b, &c), [1.0, 0.0, 0.0]);
        let w = closest_on_triangle(&Vector3::new(0.5, -1.0, 0.0), &a, &b, &c);
        assert!((w[0] - 0.5).abs() < 1e-15 && (w[1] - 0.5).abs() < 1e-15);
        let w = closest_on_triangle(&Vector3::new(1.0, 1.0, 0.0), &a, &b, &c);
        assert!((w[1] - 0.5).abs() < 1e-15 && (w[2] - 0.5).abs() < 1e-15);
    }
}
