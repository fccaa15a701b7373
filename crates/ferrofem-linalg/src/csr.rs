use rayon::prelude::*;

/// The sparsity pattern of a square or rectangular CSR matrix: row `i`'s
/// columns are `col_idx[row_ptr[i]..row_ptr[i+1]]`, sorted and unique.
/// Column indices are `u32` to halve the bytes an SpMV streams.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CsrPattern {
    /// Number of rows.
    pub nrows: usize,
    /// Number of columns.
    pub ncols: usize,
    /// Row starts, `nrows + 1` entries.
    pub row_ptr: Vec<usize>,
    /// Column of every stored entry.
    pub col_idx: Vec<u32>,
}

impl CsrPattern {
    /// Builds a pattern from per-row column lists (sorted and deduplicated here).
    pub fn from_rows(ncols: usize, rows: Vec<Vec<u32>>) -> Self {
        let mut row_ptr = Vec::with_capacity(rows.len() + 1);
        row_ptr.push(0);
        let mut col_idx = Vec::new();
        for mut r in rows {
            r.sort_unstable();
            r.dedup();
            col_idx.extend_from_slice(&r);
            row_ptr.push(col_idx.len());
        }
        CsrPattern { nrows: row_ptr.len() - 1, ncols, row_ptr, col_idx }
    }

    /// Number of stored entries.
    pub fn nnz(&self) -> usize {
        self.col_idx.len()
    }

    /// Position of entry `(i, j)` in the value array, if stored.
    pub fn find(&self, i: usize, j: usize) -> Option<usize> {
        let r = self.row_ptr[i]..self.row_ptr[i + 1];
        self.col_idx[r.clone()].binary_search(&(j as u32)).ok().map(|k| r.start + k)
    }
}

/// A CSR matrix: a fixed [`CsrPattern`] plus values, so that assembly writes
/// values into precomputed slots and never reallocates.
#[derive(Debug, Clone, PartialEq)]
pub struct CsrMatrix {
    /// Sparsity pattern.
    pub pattern: CsrPattern,
    /// Values, one per pattern entry.
    pub values: Vec<f64>,
}

impl CsrMatrix {
    /// Zero matrix with the given pattern.
    pub fn zeros(pattern: CsrPattern) -> Self {
        let values = vec![0.0; pattern.nnz()];
        CsrMatrix { pattern, values }
    }

    /// Number of rows.
    pub fn nrows(&self) -> usize {
        self.pattern.nrows
    }

    /// Entry `(i, j)` (zero when not stored).
    pub fn get(&self, i: usize, j: usize) -> f64 {
        self.pattern.find(i, j).map_or(0.0, |k| self.values[k])
    }

    /// `y ← A x`, parallel over row blocks.
    pub fn mul_vec(&self, x: &[f64], y: &mut [f64]) {
        let p = &self.pattern;
        assert!(x.len() == p.ncols && y.len() == p.nrows, "dimension mismatch in mul_vec");
        y.par_chunks_mut(256).enumerate().for_each(|(blk, yb)| {
            let r0 = blk * 256;
            for (k, yi) in yb.iter_mut().enumerate() {
                let r = p.row_ptr[r0 + k]..p.row_ptr[r0 + k + 1];
                *yi =
                    p.col_idx[r.clone()].iter().zip(&self.values[r]).map(|(&j, &a)| a * x[j as usize]).sum();
            }
        });
    }

    /// `A ⊗ I_k`: each entry `a_ij` becomes `a_ij I_k` on DOFs
    /// `k·i + c, k·j + c` (a scalar vertex matrix expanded per axis).
    pub fn kron_identity(&self, k: usize) -> CsrMatrix {
        let rows = (0..k * self.nrows())
            .map(|r| {
                let i = r / k;
                let cols = &self.pattern.col_idx[self.pattern.row_ptr[i]..self.pattern.row_ptr[i + 1]];
                cols.iter().map(|&j| j * k as u32 + (r % k) as u32).collect()
            })
            .collect();
        let pattern = CsrPattern::from_rows(k * self.pattern.ncols, rows);
        let values = (0..k * self.nrows())
            .flat_map(|r| {
                self.values[self.pattern.row_ptr[r / k]..self.pattern.row_ptr[r / k + 1]].iter().copied()
            })
            .collect();
        CsrMatrix { pattern, values }
    }

    /// The diagonal (zeros where not stored).
    pub fn diagonal(&self) -> Vec<f64> {
        (0..self.nrows()).map(|i| self.get(i, i)).collect()
    }

    /// Dense row-major copy (tests and small problems).
    pub fn to_dense(&self) -> Vec<Vec<f64>> {
        let p = &self.pattern;
        let mut d = vec![vec![0.0; p.ncols]; p.nrows];
        for (i, row) in d.iter_mut().enumerate() {
            for k in p.row_ptr[i]..p.row_ptr[i + 1] {
                row[p.col_idx[k] as usize] = self.values[k];
            }
        }
        d
    }

    /// Bytes an SpMV streams at least: values, column indices, row pointers,
    /// and the input and output vectors once each.
    pub fn spmv_bytes(&self) -> usize {
        let p = &self.pattern;
        8 * p.nnz() + 4 * p.nnz() + 8 * (p.nrows + 1) + 8 * (p.ncols + p.nrows)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mul_vec_matches_dense() {
        let rows: Vec<Vec<u32>> = (0..600u32).map(|i| vec![i, (i * 7) % 600, (i + 1) % 600]).collect();
        let mut a = CsrMatrix::zeros(CsrPattern::from_rows(600, rows));
        for (k, v) in a.values.iter_mut().enumerate() {
            *v = (k % 13) as f64 - 6.0;
        }
        let x: Vec<f64> = (0..600).map(|i| (i as f64).sin()).collect();
        let mut y = vec![0.0; 600];
        a.mul_vec(&x, &mut y);
        let d = a.to_dense();
        for i in 0..600 {
            let r: f64 = d[i].iter().zip(&x).map(|(a, b)| a * b).sum();
            assert!((r - y[i]).abs() < 1e-12);
        }
        assert_eq!(a.pattern.find(5, 35), Some(a.pattern.row_ptr[5] + 2));
    }
}
