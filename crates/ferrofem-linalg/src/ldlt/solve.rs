//! Triangular solves with a single-nonzero right-hand side (zeng2022 §4.2,
//! Fig. 4–5): `L s = e_j` is solved column-major along the path from `j` to
//! the root of the elimination tree; the result's pattern is that path.

use rayon::prelude::*;

use super::etree::NONE;
use super::Ldlt;

/// A sparse column: sorted rows (the etree path) and values.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SparseColumn {
    /// Row indices (permuted numbering), increasing.
    pub rows: Vec<u32>,
    /// Values, aligned with `rows`.
    pub values: Vec<f64>,
}

/// Reusable scratch of single-nonzero solves: a zeroed dense accumulator and
/// the output column. Steady-state solves allocate nothing.
#[derive(Debug, Clone, Default)]
pub struct PathScratch {
    work: Vec<f64>,
    /// The last solve's result.
    pub column: SparseColumn,
}

impl Ldlt {
    /// `L s = e_j` (permuted numbering) into `scratch.column`: visit `j`, its
    /// parent, … the root; at column `k`, `s_k` is final and
    /// `s_i −= L_ik s_k` for the rows `i` of column `k`, all on the path.
    pub fn solve_unit_lower_single<'s>(&self, j: usize, scratch: &'s mut PathScratch) -> &'s SparseColumn {
        let s = &**self.symbolic();
        if scratch.work.len() != s.n() {
            scratch.work = vec![0.0; s.n()];
        }
        let (work, col) = (&mut scratch.work, &mut scratch.column);
        col.rows.clear();
        col.values.clear();
        work[j] = 1.0;
        let mut k = j;
        while k != NONE {
            let sk = std::mem::take(&mut work[k]);
            let rows = &s.l_row_idx()[s.l_col_ptr[k]..s.l_col_ptr[k + 1]];
            for (&i, l_ik) in rows.iter().zip(self.l_column(k)) {
                work[i as usize] -= l_ik * sk;
            }
            col.rows.push(k as u32);
            col.values.push(sk);
            k = s.parent[k];
        }
        &scratch.column
    }

    /// Single-nonzero solves for many right-hand sides in parallel.
    pub fn solve_unit_lower_many(&self, js: &[usize]) -> Vec<SparseColumn> {
        js.par_iter()
            .map_init(PathScratch::default, |scratch, &j| self.solve_unit_lower_single(j, scratch).clone())
            .collect()
    }
}
