//! The sparse inverse `S = L⁻¹` of zeng2025 §4 (Theorem 1: column `j`'s
//! pattern is `j` and its etree ancestors), so that
//! `A⁻¹ b = Pᵀ Sᵀ D⁻¹ S P b` is two sparse matrix-vector products.
//!
//! Only values are stored: column `j`'s rows are its etree path, walked
//! from the parent array, so `S` costs 8 bytes per entry instead of 12.

use rayon::prelude::*;

use super::etree::{path_len, NONE};
use super::Ldlt;

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
    /// Builds `S` from `S L = I`: `S_{:,j} = e_j − Σ_{k ∈ L_{:,j}} L_kj S_{:,k}`.
    /// Every such `k` is an ancestor of `j`, so column `k` is a suffix of
    /// column `j` (both are etree paths) and each term is one contiguous
    /// AXPY. Columns of equal depth are independent: levels run root-first,
    /// each level in parallel.
    pub fn new(f: &Ldlt) -> SparseInverse {
        let s = &**f.symbolic();
        let n = s.n();
        let depth: Vec<usize> = (0..n).map(|j| path_len(&s.parent, j)).collect();
        let mut col_ptr = vec![0usize; n + 1];
        for j in 0..n {
            col_ptr[j + 1] = col_ptr[j] + depth[j];
        }
        let mut values = vec![0.0; col_ptr[n]];
        let mut by_depth: Vec<Vec<usize>> = vec![Vec::new(); depth.iter().copied().max().unwrap_or(0) + 1];
        (0..n).for_each(|j| by_depth[depth[j]].push(j));
        let out = SharedColumns(values.as_mut_ptr());
        for level in &by_depth {
            level.par_iter().with_min_len(16).for_each(|&j| {
                // SAFETY: column j's range is written by this task only; the
                // columns read (ancestors of j) have smaller depth and were
                // completed in earlier levels, and ranges never overlap.
                let col = unsafe { out.column(col_ptr[j], depth[j]) };
                col[0] = 1.0;
                for p in s.l_col_ptr[j]..s.l_col_ptr[j + 1] {
                    let k = s.l_row_idx[p] as usize;
                    let l_kj = f.l_values[p];
                    let src = unsafe { out.finished(col_ptr[k], depth[k]) };
                    let tail = &mut col[depth[j] - depth[k]..];
                    tail.iter_mut().zip(src.iter()).for_each(|(x, y)| *x -= l_kj * y);
                }
            });
        }
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

/// Raw access to disjoint columns of `S` while it is being built.
#[derive(Clone, Copy)]
struct SharedColumns(*mut f64);

// SAFETY: used only as described in `SparseInverse::new`: concurrent tasks
// write disjoint ranges and read ranges no task writes concurrently.
unsafe impl Sync for SharedColumns {}
unsafe impl Send for SharedColumns {}

impl SharedColumns {
    /// # Safety
    /// `start..start + len` must lie in the buffer, and no other live
    /// reference may write that range.
    #[allow(clippy::mut_from_ref)]
    unsafe fn column(&self, start: usize, len: usize) -> &mut [f64] {
        unsafe { std::slice::from_raw_parts_mut(self.0.add(start), len) }
    }

    /// # Safety
    /// `start..start + len` must lie in the buffer, and no task may write
    /// that range while the returned slice lives.
    unsafe fn finished(&self, start: usize, len: usize) -> &[f64] {
        unsafe { std::slice::from_raw_parts(self.0.add(start), len) }
    }
}
