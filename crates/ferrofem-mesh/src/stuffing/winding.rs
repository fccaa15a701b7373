//! Inside or outside, for every lattice vertex: the winding number of the
//! surface around it, counted exactly along lattice columns (a ray along
//! an axis crosses the surface; each crossing beyond the vertex adds the
//! sign of the triangle's normal on that axis) for each of the three axes.
//! Where the axes disagree (a hole, a flipped or missing triangle nearby)
//! the generalized winding number (Jacobson et al. 2013: the solid angles
//! of all triangles, summed) decides, `|w| ≥ ½` inside.

use std::f64::consts::PI;

use super::lattice::Lattice;
use crate::TriMesh;

/// The side of every lattice vertex.
#[derive(Debug, Clone)]
pub struct Sides {
    /// Per lattice vertex: inside the surface.
    pub inside: Vec<bool>,
    /// Vertices whose generalized winding number is between ¼ and ¾:
    /// neither clearly inside nor clearly outside.
    pub uncertain: usize,
    /// Vertices where the three axes' counts disagreed.
    pub disputed: usize,
}

/// The sides of `lattice`'s vertices with respect to `surface`.
pub fn sides(lattice: &Lattice, surface: &TriMesh) -> Sides {
    let mut counts = vec![[0i32; 3]; lattice.vertex_count()];
    for axis in 0..3 {
        for centres in [false, true] {
            column_windings(lattice, surface, axis, centres, &mut counts);
        }
    }
    let (mut uncertain, mut disputed) = (0, 0);
    let inside = counts
        .iter()
        .enumerate()
        .map(|(v, w)| match w.iter().filter(|w| **w != 0).count() {
            3 => true,
            0 => false,
            _ => {
                disputed += 1;
                let g = generalized_winding_number(surface, lattice.position(v)).abs();
                uncertain += usize::from((0.25..=0.75).contains(&g));
                g >= 0.5
            }
        })
        .collect();
    Sides { inside, uncertain, disputed }
}

/// Adds to `counts[v][axis]` the winding number of the surface about
/// every corner (or centre) vertex `v`, counted along its column parallel
/// to `axis`. The columns sit a hair off the lattice so that none passes
/// exactly through a triangle's edge.
fn column_windings(
    lattice: &Lattice,
    surface: &TriMesh,
    axis: usize,
    centres: bool,
    counts: &mut [[i32; 3]],
) {
    let (b, c) = ((axis + 1) % 3, (axis + 2) % 3);
    let h = lattice.h;
    let offset = if centres { 0.5 } else { 0.0 };
    let m = lattice.n.map(|n| if centres { n } else { n + 1 });
    let hair = [0.0, 1.0e-7 * std::f64::consts::SQRT_2, 1.0e-7 * 3f64.sqrt()].map(|x| x * h);
    let column_at =
        |d: usize, i: usize| lattice.origin[d] + (i as f64 + offset) * h + hair[if d == b { 1 } else { 2 }];
    // (column, coordinate along the axis, sign of the normal's axis component)
    let mut crossings: Vec<(usize, f64, i32)> = Vec::new();
    for t in &surface.triangles {
        let p = t.map(|v| surface.vertices[v]);
        // The columns over the triangle's box, one more each side: the
        // exact test below decides (a column a hair off a lattice line
        // whose triangle edge lies on it must not be rounded away).
        let range = |d: usize, n: usize| {
            let lo = p.iter().map(|q| q[d]).fold(f64::INFINITY, f64::min);
            let hi = p.iter().map(|q| q[d]).fold(f64::NEG_INFINITY, f64::max);
            let first = ((lo - lattice.origin[d]) / h - offset).floor().max(0.0) as usize;
            let last = (((hi - lattice.origin[d]) / h - offset).ceil() + 1.0).clamp(0.0, n as f64) as usize;
            first..last.max(first)
        };
        let cross = |u: [f64; 2], v: [f64; 2]| u[0] * v[1] - u[1] * v[0];
        let e1 = [p[1][b] - p[0][b], p[1][c] - p[0][c]];
        let e2 = [p[2][b] - p[0][b], p[2][c] - p[0][c]];
        let area = cross(e1, e2);
        if area == 0.0 {
            continue;
        }
        for ic in range(c, m[c]) {
            for ib in range(b, m[b]) {
                let q = [column_at(b, ib) - p[0][b], column_at(c, ic) - p[0][c]];
                let (l1, l2) = (cross(q, e2) / area, cross(e1, q) / area);
                if l1 < 0.0 || l2 < 0.0 || l1 + l2 > 1.0 {
                    continue;
                }
                let along = (1.0 - l1 - l2) * p[0][axis] + l1 * p[1][axis] + l2 * p[2][axis];
                crossings.push((ib + m[b] * ic, along, area.signum() as i32));
            }
        }
    }
    crossings.sort_unstable_by(|x, y| x.0.cmp(&y.0).then(y.1.total_cmp(&x.1)));
    let mut at = 0;
    for column in 0..m[b] * m[c] {
        let (ib, ic) = (column % m[b], column / m[b]);
        let mut winding = 0;
        for ia in (0..m[axis]).rev() {
            let x = lattice.origin[axis] + (ia as f64 + offset) * h;
            while at < crossings.len() && crossings[at].0 == column && crossings[at].1 > x {
                winding += crossings[at].2;
                at += 1;
            }
            let mut ijk = [0; 3];
            (ijk[axis], ijk[b], ijk[c]) = (ia, ib, ic);
            let v = if centres { lattice.centre(ijk) } else { lattice.corner(ijk) };
            counts[v][axis] = winding;
        }
        while at < crossings.len() && crossings[at].0 == column {
            at += 1;
        }
    }
}

/// The generalized winding number of `surface` about `p`: the solid angles
/// its triangles subtend (Van Oosterom & Strackee), over 4π.
pub fn generalized_winding_number(surface: &TriMesh, p: [f64; 3]) -> f64 {
    let sub = |a: [f64; 3]| [a[0] - p[0], a[1] - p[1], a[2] - p[2]];
    let dot = |a: [f64; 3], b: [f64; 3]| a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
    let norm = |a: [f64; 3]| dot(a, a).sqrt();
    let total: f64 = surface
        .triangles
        .iter()
        .map(|t| {
            let [a, b, c] = t.map(|v| sub(surface.vertices[v]));
            let bc = [b[1] * c[2] - b[2] * c[1], b[2] * c[0] - b[0] * c[2], b[0] * c[1] - b[1] * c[0]];
            let (la, lb, lc) = (norm(a), norm(b), norm(c));
            let below = la * lb * lc + dot(a, b) * lc + dot(b, c) * la + dot(c, a) * lb;
            2.0 * dot(a, bc).atan2(below)
        })
        .sum();
    total / (4.0 * PI)
}
