//! Where a needle meets a body: the surface triangle its line enters
//! through, and the tet a point of its path lies in.

use ferrofem_mesh::BoundarySurface;
use nalgebra::{Matrix3, Vector3};

use crate::collision::point;
use crate::element::TetElement;

/// A material point of a body: `p = Σ wᵢ xᵢ` over up to four vertices (a
/// surface triangle's three, or a tet's four; unused pairs weigh 0).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct MaterialPoint {
    /// `(vertex, weight)` pairs.
    pub pairs: [(usize, f64); 4],
}

impl MaterialPoint {
    /// `p` at flat positions `x`.
    pub fn position(&self, x: &[f64]) -> Vector3<f64> {
        self.pairs.iter().map(|&(v, w)| point(x, v) * w).sum()
    }
}

/// The first triangle of `surface` (at positions `x`) that the ray
/// `origin + s·dir`, `0 ≤ s ≤ max`, enters through (its outward normal
/// against `dir`): `s` and the hit point's barycentric weights over the
/// body's vertices (Möller–Trumbore).
pub fn surface_hit(
    surface: &BoundarySurface,
    x: &[f64],
    origin: &Vector3<f64>,
    dir: &Vector3<f64>,
    max: f64,
) -> Option<(f64, MaterialPoint)> {
    let volume = |i: usize| surface.volume_vertex[i];
    let mut best: Option<(f64, MaterialPoint)> = None;
    for tri in &surface.mesh.triangles {
        let v = tri.map(volume);
        let [a, b, c] = v.map(|i| point(x, i));
        let (e1, e2) = (b - a, c - a);
        if e1.cross(&e2).dot(dir) >= 0.0 {
            continue;
        }
        let p = dir.cross(&e2);
        let det = e1.dot(&p);
        let (u0, q) = (origin - a, (origin - a).cross(&e1));
        let (u, w, s) = (u0.dot(&p) / det, dir.dot(&q) / det, e2.dot(&q) / det);
        let inside = u >= 0.0 && w >= 0.0 && u + w <= 1.0;
        if inside && (0.0..=max).contains(&s) && best.is_none_or(|(t, _)| s < t) {
            let pairs = [(v[0], 1.0 - u - w), (v[1], u), (v[2], w), (v[0], 0.0)];
            best = Some((s, MaterialPoint { pairs }));
        }
    }
    best
}

/// The tet (at positions `x`) that holds `q`, as `q`'s barycentric
/// weights over its four vertices; where several do (on shared faces),
/// the one it lies deepest in. `None` outside the body.
pub fn locate_in_tets(tets: &[TetElement], x: &[f64], q: &Vector3<f64>) -> Option<MaterialPoint> {
    let at = |i: usize| point(x, i);
    let mut best: Option<(f64, [f64; 4], [usize; 4])> = None;
    for tet in tets {
        let v = tet.vertices;
        let o = at(v[0]);
        let edges = Matrix3::from_columns(&[at(v[1]) - o, at(v[2]) - o, at(v[3]) - o]);
        let Some(l) = edges.try_inverse().map(|inv| inv * (q - o)) else { continue };
        let w = [1.0 - l.x - l.y - l.z, l.x, l.y, l.z];
        let depth = w.iter().copied().fold(f64::INFINITY, f64::min);
        if depth >= -1e-12 && best.is_none_or(|(d, _, _)| depth > d) {
            best = Some((depth, w, v));
        }
    }
    best.map(|(_, w, v)| MaterialPoint { pairs: [0, 1, 2, 3].map(|k| (v[k], w[k])) })
}
