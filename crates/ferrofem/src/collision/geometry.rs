//! The points a contact holds and the geometry of contact frames.

use nalgebra::Vector3;

/// The point of a body a contact holds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum BodyPoint {
    /// A surface vertex.
    Vertex(usize),
    /// A point of a surface triangle (volume numbering), by barycentric weights.
    Triangle {
        /// Triangle vertices.
        vertices: [usize; 3],
        /// Weights, summing to 1.
        weights: [f64; 3],
    },
    /// A point of a surface edge (volume numbering), by its two weights
    /// (an edge–edge contact with a mesh obstacle's sharp edge).
    Edge {
        /// Edge vertices.
        vertices: [usize; 2],
        /// Weights, summing to 1.
        weights: [f64; 2],
    },
}

/// Up to four `(vertex, weight)` pairs, a point `Σ wᵢ xᵢ` of a body,
/// held without allocating (a vertex, a barycentric triangle point, or a
/// point inside a tet).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Weights {
    pairs: [(usize, f64); 4],
    len: usize,
}

impl Weights {
    /// The pairs (at most four).
    pub fn new(pairs: &[(usize, f64)]) -> Weights {
        assert!(pairs.len() <= 4, "a body point has at most four vertices");
        let mut w = Weights { len: pairs.len(), ..Default::default() };
        w.pairs[..pairs.len()].copy_from_slice(pairs);
        w
    }
}

impl Weights {
    /// `p = Σ wᵢ xᵢ` at flat positions `x`.
    pub fn position(&self, x: &[f64]) -> Vector3<f64> {
        self.iter().map(|&(v, w)| point(x, v) * w).sum()
    }
}

impl std::ops::Deref for Weights {
    type Target = [(usize, f64)];

    fn deref(&self) -> &[(usize, f64)] {
        &self.pairs[..self.len]
    }
}

impl BodyPoint {
    /// `(vertex, weight)` pairs with `p = Σ wᵢ xᵢ`.
    pub fn weights(&self) -> Weights {
        match *self {
            BodyPoint::Vertex(v) => Weights::new(&[(v, 1.0)]),
            BodyPoint::Triangle { vertices, weights } => Weights::new(&[
                (vertices[0], weights[0]),
                (vertices[1], weights[1]),
                (vertices[2], weights[2]),
            ]),
            BodyPoint::Edge { vertices, weights } => {
                Weights::new(&[(vertices[0], weights[0]), (vertices[1], weights[1])])
            }
        }
    }

    /// The vertex, or the triangle's or the edge's first vertex.
    pub fn first_vertex(&self) -> usize {
        match *self {
            BodyPoint::Vertex(v) => v,
            BodyPoint::Triangle { vertices, .. } => vertices[0],
            BodyPoint::Edge { vertices, .. } => vertices[0],
        }
    }

    /// `Σ wᵢ xᵢ` at positions `x`.
    pub fn position(&self, x: &[f64]) -> Vector3<f64> {
        self.weights().position(x)
    }
}

/// Vertex `i` of flat positions `x`.
pub(crate) fn point(x: &[f64], i: usize) -> Vector3<f64> {
    Vector3::new(x[3 * i], x[3 * i + 1], x[3 * i + 2])
}

/// Two unit tangents completing `n` into a right-handed frame.
pub fn tangents(n: &Vector3<f64>) -> (Vector3<f64>, Vector3<f64>) {
    let a = if n.x.abs() < 0.9 { Vector3::x() } else { Vector3::y() };
    let t1 = (a - n * n.dot(&a)).normalize();
    (t1, n.cross(&t1))
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

/// The closest points `p₀ + s (p₁ − p₀)` and `q₀ + t (q₁ − q₀)` of two
/// segments as `(s, t) ∈ [0, 1]²` (Ericson, Real-Time Collision Detection
/// §5.1.9; parallel segments take `s` from the first's end that the
/// clamping leaves).
pub fn closest_between_segments(
    p0: &Vector3<f64>,
    p1: &Vector3<f64>,
    q0: &Vector3<f64>,
    q1: &Vector3<f64>,
) -> (f64, f64) {
    let (d1, d2, r) = (p1 - p0, q1 - q0, p0 - q0);
    let (a, e, f) = (d1.dot(&d1), d2.dot(&d2), d2.dot(&r));
    let tiny = 1e-30;
    if a <= tiny && e <= tiny {
        return (0.0, 0.0);
    }
    if a <= tiny {
        return (0.0, (f / e).clamp(0.0, 1.0));
    }
    let c = d1.dot(&r);
    if e <= tiny {
        return ((-c / a).clamp(0.0, 1.0), 0.0);
    }
    let b = d1.dot(&d2);
    let denom = a * e - b * b;
    let mut s = if denom > 1e-14 * a * e { ((b * f - c * e) / denom).clamp(0.0, 1.0) } else { 0.0 };
    let mut t = (b * s + f) / e;
    if t < 0.0 {
        (s, t) = ((-c / a).clamp(0.0, 1.0), 0.0);
    } else if t > 1.0 {
        (s, t) = (((b - c) / a).clamp(0.0, 1.0), 1.0);
    }
    (s, t)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Segment pairs in every relative position: the parameters found give
    /// the least distance of a dense grid of parameter pairs, to within the
    /// grid's resolution.
    #[test]
    fn closest_between_segments_is_the_least_distance() {
        let point = |k: f64| Vector3::new((1.7 * k).sin(), (0.9 * k).cos(), (2.3 * k).sin());
        let mut cases: Vec<[Vector3<f64>; 4]> =
            (0..60).map(|i| [0.0, 1.0, 2.0, 3.0].map(|o| point(4.0 * i as f64 + o))).collect();
        // Parallel, collinear and crossing pairs, and a point-like segment.
        let (o, x) = (Vector3::zeros(), Vector3::x());
        cases.push([o, x, Vector3::new(0.2, 0.3, 0.0), Vector3::new(0.9, 0.3, 0.0)]);
        cases.push([o, x, Vector3::new(1.5, 0.0, 0.0), Vector3::new(2.0, 0.0, 0.0)]);
        cases.push([o, x, Vector3::new(0.5, -1.0, 0.1), Vector3::new(0.5, 1.0, 0.1)]);
        cases.push([o, o, Vector3::new(0.5, -1.0, 0.1), Vector3::new(0.5, 1.0, 0.1)]);
        let n = 400;
        for [p0, p1, q0, q1] in cases {
            let at = |s: f64, t: f64| ((p0 + (p1 - p0) * s) - (q0 + (q1 - q0) * t)).norm();
            let (s, t) = closest_between_segments(&p0, &p1, &q0, &q1);
            assert!((0.0..=1.0).contains(&s) && (0.0..=1.0).contains(&t));
            let grid = (0..=n)
                .flat_map(|i| (0..=n).map(move |j| (i as f64 / n as f64, j as f64 / n as f64)))
                .map(|(a, b)| at(a, b))
                .fold(f64::INFINITY, f64::min);
            assert!(at(s, t) <= grid + 1e-12, "{} > {grid}", at(s, t));
            assert!(at(s, t) >= grid - 2.0 * (p1 - p0).norm().max((q1 - q0).norm()) / n as f64);
        }
    }

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
