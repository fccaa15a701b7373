//! The stencils of isosurface stuffing (Labelle & Shewchuk 2007, §3): a
//! lattice tet whose vertices are inside (−), on the surface (0) or
//! outside (+) becomes the tets of its inside part, cut at the cut points
//! of its edges. A quadrilateral face of a cut piece is split along the
//! diagonal through its vertex of least index, and a prism as Dompierre
//! et al. (1999) split it from that vertex: both sides of a shared face
//! choose the same diagonal, so the mesh conforms.

/// What a stencil needs of the lattice: each vertex's sign and the index
/// of the cut point on an edge.
pub trait Cuts {
    /// −1 inside, 0 on the surface, +1 outside.
    fn sign(&self, v: usize) -> i8;
    /// The index of the cut point on edge `(inside, outside)`.
    fn cut(&mut self, inside: usize, outside: usize) -> usize;
}

/// The tets of lattice tet `t`'s inside part (none when it has no inside
/// vertex; a tet all on the surface is for the caller to decide).
pub fn stuff(t: [usize; 4], cuts: &mut impl Cuts, out: &mut Vec<[usize; 4]>) {
    let by = |s: i8| t.iter().copied().filter(|&v| cuts.sign(v) == s).collect::<Vec<_>>();
    let (n, z, p) = (by(-1), by(0), by(1));
    if n.is_empty() {
        return;
    }
    match (n.len(), z.len(), p.len()) {
        (_, _, 0) => out.push(t),
        (1, 0, 3) => {
            let c = p.iter().map(|&q| cuts.cut(n[0], q)).collect::<Vec<_>>();
            out.push([n[0], c[0], c[1], c[2]]);
        }
        (1, 1, 2) => {
            let (c0, c1) = (cuts.cut(n[0], p[0]), cuts.cut(n[0], p[1]));
            out.push([n[0], z[0], c0, c1]);
        }
        (1, 2, 1) => {
            let c = cuts.cut(n[0], p[0]);
            out.push([n[0], z[0], z[1], c]);
        }
        (2, 1, 1) => {
            let (c0, c1) = (cuts.cut(n[0], p[0]), cuts.cut(n[1], p[0]));
            pyramid([n[0], n[1], c1, c0], z[0], out);
        }
        (2, 0, 2) => {
            let c = [[n[0], p[0]], [n[0], p[1]], [n[1], p[0]], [n[1], p[1]]].map(|[a, b]| cuts.cut(a, b));
            prism([n[0], c[0], c[1], n[1], c[2], c[3]], out);
        }
        (3, 0, 1) => {
            let c = [n[0], n[1], n[2]].map(|a| cuts.cut(a, p[0]));
            prism([n[0], n[1], n[2], c[0], c[1], c[2]], out);
        }
        _ => unreachable!("signs of four vertices: every case with an inside and an outside vertex is above"),
    }
}

/// A pyramid over the quadrilateral `base` (a ring) with apex `a`: two
/// tets split along the base's diagonal through its least vertex.
fn pyramid(b: [usize; 4], a: usize, out: &mut Vec<[usize; 4]>) {
    if b[0].min(b[2]) < b[1].min(b[3]) {
        out.extend([[b[0], b[1], b[2], a], [b[0], b[2], b[3], a]]);
    } else {
        out.extend([[b[1], b[2], b[3], a], [b[1], b[3], b[0], a]]);
    }
}

/// A prism with triangles `(v0, v1, v2)`, `(v3, v4, v5)` and edges
/// `vi – vi+3`: three tets from its least vertex (Dompierre et al. 1999).
fn prism(v: [usize; 6], out: &mut Vec<[usize; 4]>) {
    let least = (0..6).min_by_key(|&i| v[i]).unwrap_or(0);
    // Turn the prism (a symmetry of it) so that the least vertex is v0.
    let flip = |i: usize| if least >= 3 { (i + 3) % 6 } else { i };
    let turn = |i: usize| 3 * (i / 3) + (i % 3 + least % 3) % 3;
    let w: [usize; 6] = std::array::from_fn(|i| v[flip(turn(i))]);
    if w[1].min(w[5]) < w[2].min(w[4]) {
        out.extend([[w[0], w[1], w[2], w[5]], [w[0], w[1], w[5], w[4]], [w[0], w[4], w[5], w[3]]]);
    } else {
        out.extend([[w[0], w[1], w[2], w[4]], [w[0], w[4], w[2], w[5]], [w[0], w[4], w[5], w[3]]]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every numbering of a right prism splits it into three tets that fill
    /// it: none flat, their unsigned volumes adding up to the prism's ½.
    #[test]
    fn prisms_are_filled_whatever_their_numbering() {
        let corners = [
            [0.0, 0.0, 0.0],
            [1.0, 0.0, 0.0],
            [0.0, 1.0, 0.0],
            [0.0, 0.0, 1.0],
            [1.0, 0.0, 1.0],
            [0.0, 1.0, 1.0],
        ];
        let volume = |t: &[usize; 4], at: &dyn Fn(usize) -> [f64; 3]| {
            let p = t.map(at);
            let e = |k: usize| [0, 1, 2].map(|d| p[k][d] - p[0][d]);
            let (a, b, c) = (e(1), e(2), e(3));
            (a[0] * (b[1] * c[2] - b[2] * c[1]) - a[1] * (b[0] * c[2] - b[2] * c[0])
                + a[2] * (b[0] * c[1] - b[1] * c[0]))
                .abs()
                / 6.0
        };
        for ids in [[0, 1, 2, 3, 4, 5], [5, 4, 3, 2, 1, 0], [3, 0, 4, 1, 5, 2], [2, 5, 0, 4, 1, 3]] {
            let mut out = Vec::new();
            prism(ids, &mut out);
            assert_eq!(out.len(), 3);
            let position = |id: usize| corners[ids.iter().position(|&x| x == id).unwrap()];
            assert!(out.iter().all(|t| volume(t, &position) > 0.1), "{ids:?}: a flat tet");
            let total: f64 = out.iter().map(|t| volume(t, &position)).sum();
            assert!((total - 0.5).abs() < 1e-12, "{ids:?}: {total}");
        }
    }
}
