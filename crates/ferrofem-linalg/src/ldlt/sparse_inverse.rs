//! The sparse inverse `S = L⁻¹` of zeng2025 §4 (Theorem 1: column `j`'s
//! pattern is `j` and its etree ancestors), so that
//! `A⁻¹ b = Pᵀ Sᵀ D⁻¹ S P b` is two sparse matrix-vector products.

use rayon::prelude::*;

use super::etree::path_len;
use super::{Ldlt, PathScratch};

/// `S = L⁻¹` in CSC (permuted numbering), with `D` and `P` to apply `A⁻¹`.
#[derive(Debug, Clone)]
pub struct SparseInverse {
    /// Column starts.
    pub col_ptr: Vec<usize>,
    /// Rows: the etree path of each column.
    pub row_idx: Vec<u32>,
    /// Values.
    pub values: Vec<f64>,
    inv_d: Vec<f64>,
    perm: Vec<usize>,
}

/// Columns per parallel task when building or applying `S`.
const CHUNK: usize = 512;

impl SparseInverse {
    /// Builds `S` column by column with single-nonzero solves, in parallel.
    pub fn new(f: &Ldlt) -> SparseInverse {
        let s = &**f.symbolic();
        let n = s.n();
        let mut col_ptr = vec![0usize; n + 1];
        for j in 0..n {
            col_ptr[j + 1] = col_ptr[j] + path_len(&s.parent, j);
        }
        let nnz = col_ptr[n];
        let mut row_idx = vec![0u32; nnz];
        let mut values = vec![0.0; nnz];
        let mut tasks = Vec::new();
        let (mut r_rest, mut v_rest) = (&mut row_idx[..], &mut values[..]);
        for c0 in (0..n).step_by(CHUNK) {
            let c1 = (c0 + CHUNK).min(n);
            let len = col_ptr[c1] - col_ptr[c0];
            let (r, rr) = std::mem::take(&mut r_rest).split_at_mut(len);
            let (v, vr) = std::mem::take(&mut v_rest).split_at_mut(len);
            tasks.push((c0, c1, r, v));
            (r_rest, v_rest) = (rr, vr);
        }
        tasks.into_par_iter().for_each_init(PathScratch::default, |scratch, (c0, c1, r, v)| {
            let mut at = 0;
            for j in c0..c1 {
                let col = f.solve_unit_lower_single(j, scratch);
                let len = col.rows.len();
                r[at..at + len].copy_from_slice(&col.rows);
                v[at..at + len].copy_from_slice(&col.values);
                at += len;
            }
        });
        SparseInverse {
            col_ptr,
            row_idx,
            values,
            inv_d: f.d.iter().map(|d| 1.0 / d).collect(),
            perm: s.perm.clone(),
        }
    }

    /// Bytes held by `S` (values, rows, column pointers).
    pub fn bytes(&self) -> usize {
        8 * self.values.len() + 4 * self.row_idx.len() + 8 * self.col_ptr.len()
    }

    /// Stored entries.
    pub fn nnz(&self) -> usize {
        self.values.len()
    }

    /// `x = A⁻¹ b = Pᵀ Sᵀ D⁻¹ S P b`: `S y` as per-chunk scatters summed in a
    /// fixed order, `Sᵀ z` as a parallel gather per column.
    pub fn apply(&self, b: &[f64], x: &mut [f64]) {
        let n = self.perm.len();
        let pb: Vec<f64> = self.perm.iter().map(|&o| b[o]).collect();
        let partial: Vec<Vec<f64>> = (0..n.div_ceil(CHUNK * 8).max(1))
            .into_par_iter()
            .map(|t| {
                let mut y = vec![0.0; n];
                for j in (t * CHUNK * 8)..((t + 1) * CHUNK * 8).min(n) {
                    for p in self.col_ptr[j]..self.col_ptr[j + 1] {
                        y[self.row_idx[p] as usize] += self.values[p] * pb[j];
                    }
                }
                y
            })
            .collect();
        let z: Vec<f64> = (0..n).map(|i| partial.iter().map(|y| y[i]).sum::<f64>() * self.inv_d[i]).collect();
        let w: Vec<f64> = (0..n)
            .into_par_iter()
            .map(|j| {
                (self.col_ptr[j]..self.col_ptr[j + 1])
                    .map(|p| self.values[p] * z[self.row_idx[p] as usize])
                    .sum()
            })
            .collect();
        for (k, &o) in self.perm.iter().enumerate() {
            x[o] = w[k];
        }
    }
}
