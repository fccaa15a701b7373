//! The body-centred cubic lattice of isosurface stuffing (Labelle &
//! Shewchuk 2007, §2): cube corners and cube centres, and its tetrahedra,
//! four around each edge between the centres of two face-adjacent cubes.

/// A BCC lattice over a box: `n` cubes of edge `h` per axis from `origin`.
#[derive(Debug, Clone)]
pub struct Lattice {
    /// The corner of cube `(0, 0, 0)`.
    pub origin: [f64; 3],
    /// Cube edge.
    pub h: f64,
    /// Cubes per axis.
    pub n: [usize; 3],
}

/// An edge's kind: its length and the warp threshold α of §3.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EdgeKind {
    /// Axis-parallel, length `h` (corner–corner or centre–centre).
    Long,
    /// Centre to cube corner, length `√3 h / 2`.
    Short,
}

impl EdgeKind {
    /// The fraction of the edge within which a cut point warps its end
    /// vertex: the paper's α values for its proven angle bounds.
    pub fn alpha(self) -> f64 {
        match self {
            EdgeKind::Long => 0.24999,
            EdgeKind::Short => 0.41189,
        }
    }
}

impl Lattice {
    /// Corner vertices `(n+1)³`, then centres `n³`.
    pub fn vertex_count(&self) -> usize {
        self.corners() + self.n.iter().product::<usize>()
    }

    fn corners(&self) -> usize {
        self.n.iter().map(|n| n + 1).product()
    }

    /// Corner `(i, j, k)`'s index.
    pub fn corner(&self, [i, j, k]: [usize; 3]) -> usize {
        i + (self.n[0] + 1) * (j + (self.n[1] + 1) * k)
    }

    /// The centre of cube `(i, j, k)`'s index.
    pub fn centre(&self, [i, j, k]: [usize; 3]) -> usize {
        self.corners() + i + self.n[0] * (j + self.n[1] * k)
    }

    /// Vertex `v`'s position.
    pub fn position(&self, v: usize) -> [f64; 3] {
        let (ijk, offset) = self.coordinates(v);
        [0, 1, 2].map(|d| self.origin[d] + (ijk[d] as f64 + offset) * self.h)
    }

    /// Vertex `v`'s integer coordinates and its offset (0 corner, ½ centre).
    pub fn coordinates(&self, v: usize) -> ([usize; 3], f64) {
        let (m, rest, offset) = match v < self.corners() {
            true => (self.n.map(|n| n + 1), v, 0.0),
            false => (self.n, v - self.corners(), 0.5),
        };
        ([rest % m[0], (rest / m[0]) % m[1], rest / (m[0] * m[1])], offset)
    }

    /// Every lattice edge `(a, b, kind)`, each once.
    pub fn edges(&self) -> Vec<(usize, usize, EdgeKind)> {
        let [nx, ny, nz] = self.n;
        let mut edges = Vec::new();
        for k in 0..=nz {
            for j in 0..=ny {
                for i in 0..=nx {
                    let c = [i, j, k];
                    for d in 0..3 {
                        if c[d] < self.n[d] {
                            let mut e = c;
                            e[d] += 1;
                            edges.push((self.corner(c), self.corner(e), EdgeKind::Long));
                        }
                        // Centre–centre along d.
                        if c.iter().zip(&self.n).all(|(x, n)| x < n) && c[d] + 1 < self.n[d] {
                            let mut e = c;
                            e[d] += 1;
                            edges.push((self.centre(c), self.centre(e), EdgeKind::Long));
                        }
                    }
                    if c.iter().zip(&self.n).all(|(x, n)| x < n) {
                        for corner in 0..8 {
                            let q = [i + (corner & 1), j + ((corner >> 1) & 1), k + (corner >> 2)];
                            edges.push((self.centre(c), self.corner(q), EdgeKind::Short));
                        }
                    }
                }
            }
        }
        edges
    }

    /// Every lattice tetrahedron: for each pair of face-adjacent cubes,
    /// the four tets of their centres' edge and the shared face's edges.
    pub fn tets(&self) -> impl Iterator<Item = [usize; 4]> + '_ {
        let [nx, ny, nz] = self.n;
        (0..nz).flat_map(move |k| (0..ny).flat_map(move |j| (0..nx).map(move |i| [i, j, k]))).flat_map(
            move |c| {
                (0..3).filter(move |&a| c[a] + 1 < self.n[a]).flat_map(move |a| {
                    let (b, d) = ((a + 1) % 3, (a + 2) % 3);
                    let mut next = c;
                    next[a] += 1;
                    let (c1, c2) = (self.centre(c), self.centre(next));
                    // The shared face's corners, in a ring.
                    let ring = [[0, 0], [1, 0], [1, 1], [0, 1]].map(|[u, v]| {
                        let mut q = next;
                        q[b] += u;
                        q[d] += v;
                        self.corner(q)
                    });
                    (0..4).map(move |m| [c1, c2, ring[m], ring[(m + 1) % 4]])
                })
            },
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The lattice's tets tile the cubes between the outer centres exactly:
    /// every tet is congruent (volume h³/12) and none overlaps (their count
    /// is four per centre–centre edge).
    #[test]
    fn lattice_tets_are_congruent_and_count_four_per_centre_edge() {
        let l = Lattice { origin: [0.0; 3], h: 0.5, n: [3, 4, 5] };
        let tets: Vec<[usize; 4]> = l.tets().collect();
        let centre_edges = 2 * 4 * 5 + 3 * 3 * 5 + 3 * 4 * 4;
        assert_eq!(tets.len(), 4 * centre_edges);
        for t in &tets {
            let p = t.map(|v| l.position(v));
            let e = |k: usize| [0, 1, 2].map(|d| p[k][d] - p[0][d]);
            let (a, b, c) = (e(1), e(2), e(3));
            let det = a[0] * (b[1] * c[2] - b[2] * c[1]) - a[1] * (b[0] * c[2] - b[2] * c[0])
                + a[2] * (b[0] * c[1] - b[1] * c[0]);
            assert!((det.abs() / 6.0 - 0.125 / 12.0).abs() < 1e-12);
        }
        let edges = l.edges();
        let long = edges.iter().filter(|e| e.2 == EdgeKind::Long).count();
        assert_eq!(long, (3 * 5 * 6 + 4 * 4 * 6 + 4 * 5 * 5) + centre_edges);
        assert_eq!(edges.len() - long, 8 * 3 * 4 * 5);
        assert_eq!(l.coordinates(l.centre([2, 3, 4])), ([2, 3, 4], 0.5));
    }
}
