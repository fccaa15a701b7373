//! Constraint Jacobians (zeng2022 §3.2): `H` maps a body's DOFs to
//! constraint rows, grouped by contact as (normal, t1, t2). Rows are
//! appended to a CSR matrix in place, so a Jacobian rebuilt every step
//! reuses its storage.

use ferrofem_linalg::{CsrMatrix, CsrPattern};

use crate::collision::Weights;

/// `H` of one body: `c × n`, built row group by row group.
#[derive(Debug, Clone)]
pub struct ConstraintJacobian {
    h: CsrMatrix,
}

impl ConstraintJacobian {
    /// An empty Jacobian for a body with `dofs` DOFs.
    pub fn new(dofs: usize) -> Self {
        ConstraintJacobian { h: CsrMatrix::zeros(CsrPattern::from_rows(dofs, Vec::new())) }
    }

    /// Adds the three rows of a point `p = Σ wᵢ xᵢ` (see `push_point`).
    pub fn push_point(&mut self, weights: &[(usize, f64)], frame: [[f64; 3]; 3]) {
        push_point(&mut self.h, weights, frame);
    }

    /// Number of rows `c`.
    pub fn nrows(&self) -> usize {
        self.h.nrows()
    }

    /// `H` as a CSR matrix.
    pub fn to_csr(&self) -> CsrMatrix {
        self.h.clone()
    }
}

/// Empties `h` (keeping its columns and its storage).
pub fn clear_rows(h: &mut CsrMatrix) {
    let p = &mut h.pattern;
    p.row_ptr.clear();
    p.row_ptr.push(0);
    p.col_idx.clear();
    p.nrows = 0;
    h.values.clear();
}

/// Appends to `h` the three rows of a point `p = Σ wᵢ xᵢ` (a vertex, or a
/// barycentric point of a triangle) along the directions of `frame`
/// (normal, t1, t2): row `d` is `Σᵢ wᵢ frame[d]ᵀ` on vertex `i`'s DOFs,
/// zeros left out, entries of one DOF summed in point order ([`push_row`]).
pub fn push_point(h: &mut CsrMatrix, weights: &[(usize, f64)], frame: [[f64; 3]; 3]) {
    for dir in frame {
        push_row(h, weights.iter().map(|&(v, w)| (v, w, dir)));
    }
}

/// Appends to `h` a cable's three rows: row 0 `Σ wᵢ dᵀ` on vertex `i`'s
/// DOFs over its points' `(vertex, weight, direction d)`, rows 1 and 2
/// empty (the [`super::ConstraintGroup::Cable`] law).
pub fn push_path(h: &mut CsrMatrix, terms: impl Iterator<Item = (usize, f64, [f64; 3])>) {
    push_row(h, terms);
    push_row(h, std::iter::empty());
    push_row(h, std::iter::empty());
}

/// A cable path's terms `(index(vertex), weight, direction)` for [`push_path`].
pub fn path_terms<'a, F: Fn(usize) -> usize>(
    path: &'a [(Weights, [f64; 3])],
    index: &'a F,
) -> impl Iterator<Item = (usize, f64, [f64; 3])> + 'a {
    path.iter().flat_map(move |(w, d)| w.iter().map(move |&(v, wt)| (index(v), wt, *d)))
}

/// Appends to `h` the row `Σ wᵢ dᵢᵀ` on vertex `i`'s DOFs over `terms`
/// `(vertex i, weight wᵢ, direction dᵢ)`: zeros left out, entries of one
/// DOF summed in term order, sorted and merged in place at the end of
/// `h`'s storage.
fn push_row(h: &mut CsrMatrix, terms: impl Iterator<Item = (usize, f64, [f64; 3])>) {
    let (p, values) = (&mut h.pattern, &mut h.values);
    let start = p.col_idx.len();
    for (v, w, dir) in terms {
        for k in 0..3 {
            let x = w * dir[k];
            if x != 0.0 {
                p.col_idx.push((3 * v + k) as u32);
                values.push(x);
            }
        }
    }
    // Stable insertion sort of the new row by column.
    for i in start + 1..p.col_idx.len() {
        let mut j = i;
        while j > start && p.col_idx[j - 1] > p.col_idx[j] {
            p.col_idx.swap(j - 1, j);
            values.swap(j - 1, j);
            j -= 1;
        }
    }
    // Merge entries of one column, the earlier first.
    let mut end = start;
    for i in start..p.col_idx.len() {
        if end > start && p.col_idx[end - 1] == p.col_idx[i] {
            values[end - 1] += values[i];
        } else {
            p.col_idx[end] = p.col_idx[i];
            values[end] = values[i];
            end += 1;
        }
    }
    p.col_idx.truncate(end);
    values.truncate(end);
    p.row_ptr.push(end);
    p.nrows += 1;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_sum_shared_dofs_and_skip_zeros() {
        let mut h = ConstraintJacobian::new(12);
        let frame = [[0.0, 0.0, 1.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]];
        h.push_point(&[(2, 0.25), (1, 0.5), (2, 0.25)], frame);
        let m = h.to_csr();
        assert_eq!(m.nrows(), 3);
        assert_eq!(m.pattern.row_ptr, vec![0, 2, 4, 6]);
        assert_eq!(m.pattern.col_idx, vec![5, 8, 3, 6, 4, 7]);
        assert_eq!(m.values, vec![0.5, 0.5, 0.5, 0.5, 0.5, 0.5]);
    }
}
