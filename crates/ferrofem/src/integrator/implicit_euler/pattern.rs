//! The system matrix's sparsity pattern, computed once from the mesh, and
//! the scatter slots that let assembly gather each matrix row from its
//! incident elements in a fixed order (parallel over rows, deterministic).

use ferrofem_linalg::CsrPattern;
use ferrofem_mesh::TetMesh;

/// One tet seen from one of its vertices: which tet, which local corner,
/// and where each of the tet's four vertices sits in that vertex's row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Incidence {
    /// Tet index.
    pub tet: u32,
    /// Local corner `a` of the row vertex in the tet.
    pub corner: u8,
    /// For each local corner `b`, the rank of vertex `tet[b]` among the row
    /// vertex's sorted neighbours (the column block).
    pub column: [u32; 4],
}

/// Vertex-block pattern of `A` (3×3 dense blocks per neighbouring vertex
/// pair) expanded to a scalar CSR, plus per-vertex incidences.
#[derive(Debug, Clone)]
pub struct AssemblyPattern {
    /// Scalar CSR pattern: row `3i + r` holds columns `3j + c` for every
    /// neighbour `j` of vertex `i` (itself included), in sorted order.
    pub csr: CsrPattern,
    /// `incidence[incidence_ptr[i]..incidence_ptr[i+1]]` are vertex `i`'s tets.
    pub incidence_ptr: Vec<usize>,
    /// Incidences, grouped by vertex, tets in increasing order.
    pub incidence: Vec<Incidence>,
    /// Neighbour count of each vertex (block columns in its rows).
    pub degree: Vec<u32>,
    /// Rank of the diagonal block in each vertex's neighbour list.
    pub diagonal_rank: Vec<u32>,
}

impl AssemblyPattern {
    /// Builds the pattern of a tet mesh.
    pub fn new(mesh: &TetMesh) -> Self {
        let n = mesh.vertices.len();
        let mut neighbours: Vec<Vec<u32>> = vec![Vec::new(); n];
        let mut tets_of: Vec<Vec<(u32, u8)>> = vec![Vec::new(); n];
        for (e, t) in mesh.tets.iter().enumerate() {
            for (a, &i) in t.iter().enumerate() {
                neighbours[i].extend(t.iter().map(|&j| j as u32));
                tets_of[i].push((e as u32, a as u8));
            }
        }
        neighbours.iter_mut().for_each(|l| {
            l.sort_unstable();
            l.dedup();
        });
        let rank = |i: usize, j: usize| neighbours[i].binary_search(&(j as u32)).unwrap_or(0) as u32;
        let mut incidence_ptr = vec![0];
        let mut incidence = Vec::new();
        for (i, list) in tets_of.iter().enumerate() {
            for &(tet, corner) in list {
                let t = mesh.tets[tet as usize];
                incidence.push(Incidence { tet, corner, column: t.map(|j| rank(i, j)) });
            }
            incidence_ptr.push(incidence.len());
        }
        let diagonal_rank = (0..n).map(|i| rank(i, i)).collect();
        let degree = neighbours.iter().map(|l| l.len() as u32).collect();
        let rows = neighbours
            .iter()
            .flat_map(|l| {
                let cols: Vec<u32> = l.iter().flat_map(|&j| [3 * j, 3 * j + 1, 3 * j + 2]).collect();
                [cols.clone(), cols.clone(), cols]
            })
            .collect();
        AssemblyPattern {
            csr: CsrPattern::from_rows(3 * n, rows),
            incidence_ptr,
            incidence,
            degree,
            diagonal_rank,
        }
    }

    /// First value index of vertex `i`'s three rows (they are contiguous:
    /// `9 · degree(i)` values).
    pub fn row_block_start(&self, i: usize) -> usize {
        self.csr.row_ptr[3 * i]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_point_at_the_right_entries() {
        let m = ferrofem_mesh::generate::box_mesh([1.0, 1.0, 1.0], [2, 2, 1]).unwrap();
        let p = AssemblyPattern::new(&m);
        for i in 0..m.vertices.len() {
            let d = p.degree[i] as usize;
            for inc in &p.incidence[p.incidence_ptr[i]..p.incidence_ptr[i + 1]] {
                let t = m.tets[inc.tet as usize];
                assert_eq!(t[inc.corner as usize], i);
                for b in 0..4 {
                    for (r, c) in [(0, 0), (1, 2), (2, 1)] {
                        let slot = p.row_block_start(i) + r * 3 * d + 3 * inc.column[b] as usize + c;
                        assert_eq!(p.csr.find(3 * i + r, 3 * t[b] + c), Some(slot));
                    }
                }
            }
        }
    }
}
