//! The sparse inverse `S = L⁻¹` of zeng2025 §4 (Theorem 1: column `j`'s
//! pattern is `j` and its etree ancestors), so that
//! `A⁻¹ b = Pᵀ Sᵀ D⁻¹ S P b` is two sparse matrix-vector products.
//!
//! Only values are stored: column `j`'s rows are its etree path, walked
//! from the parent array, so `S` costs 8 bytes per entry instead of 12.

use rayon::prelude::*;

use super::etree::{path_len, NONE};
use super::{Ldlt, PathScratch};

/// `S = L⁻¹` in CSC (permuted numbering), with `D` and `P` to apply `A⁻¹`.
#[derive(Debug, Clone)]
pub struct SparseInverse {
    /// Column starts.
    pub col_ptr: Vec<usize>,
    /// Values; column `j` holds rows `j, parent(j), …, root` in that order.
    pub values: Vec<f64>,
    parent: Vec<usize>,
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
        let mut values = vec![0.0; nnz];
        let mut tasks = Vec::new();
        let mut v_rest = &mut values[..];
        for c0 in (0..n).step_by(CHUNK) {
            let c1 = (c0 + CHUNK).min(n);
            let (v, vr) = std::mem::take(&mut v_rest).split_at_mut(col_ptr[c1] - col_ptr[c0]);
            tasks.push((c0, c1, v));
            v_rest = vr;
        }
        tasks.into_par_iter().for_each_init(PathScratch::default, |scratch, (c0, c1, v)| {
            let mut at = 0;
            for j in c0..c1 {
                let col = f.solve_unit_lower_single(j, scratch);
                v[at..at + col.values.len()].copy_from_slice(&col.values);
                at += col.values.len();
            }
        });
        let inv_d = f.d.iter().map(|d| 1.0 / d).collect();
        SparseInverse { col_ptr, values, parent: s.parent.clone(), inv_d, perm: s.perm.clone() }
    }

    /// Bytes held by `S` (values and column pointers; the parent array
    /// that gives the rows is shared with the factor).
    pub fn bytes(&self) -> usize {
        8 * self.values.len() + 8 * self.col_ptr.len()
    }

    /// Column `j` as (row, value) pairs along its etree path.
    pub fn column(&self, j: usize) -> impl Iterator<Item = (usize, f64)> + '_ {
        let mut row = j;
        self.values[self.col_ptr[j]..self.col_ptr[j + 1]].iter().map(move |&v| {
            let r = row;
            row = self.parent[row];
            debug_assert!(r != NONE);
            (r, v)
        })
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
                    for (r, v) in self.column(j) {
                        y[r] += v * pb[j];
                    }
                }
                y
            })
            .collect();
        let z: Vec<f64> = (0..n).map(|i| partial.iter().map(|y| y[i]).sum::<f64>() * self.inv_d[i]).collect();
        let w: Vec<f64> =
            (0..n).into_par_iter().map(|j| self.column(j).map(|(r, v)| v * z[r]).sum()).collect();
        for (k, &o) in self.perm.iter().enumerate() {
            x[o] = w[k];
        }
    }
}
