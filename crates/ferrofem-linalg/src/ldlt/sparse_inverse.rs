//! The sparse inverse `S = L⁻¹` of zeng2025 §4 (Theorem 1: column `j`'s
//! pattern is `j` and its etree ancestors), so that
//! `A⁻¹ b = Pᵀ Sᵀ D⁻¹ S P b` is two sparse matrix-vector products.
//!
//! Only values are stored: column `j`'s rows are its etree path. The path
//! is kept as *runs* of consecutive rows (within a supernode the parent of
//! column `c` is `c + 1`), so `S` costs 8 bytes per entry plus 8 bytes per
//! run, and both products stream contiguous slices instead of chasing
//! parent pointers.

use faer::linalg::matmul::matmul;
use faer::{Accum, MatMut, MatRef, Par};
use rayon::prelude::*;

use super::etree::{path_len, NONE};
use super::Ldlt;
use crate::split::{balanced_parts, SharedColumns};

/// `S = L⁻¹` in CSC (permuted numbering), with `D` and `P` to apply `A⁻¹`.
#[derive(Debug, Clone)]
pub struct SparseInverse {
    /// Column starts.
    pub col_ptr: Vec<usize>,
    /// Values; column `j` holds rows `j, parent(j), …, root` in that order.
    pub values: Vec<f64>,
    parent: Vec<usize>,
    /// Column `j`'s runs are `runs[run_ptr[j]..run_ptr[j + 1]]`.
    run_ptr: Vec<usize>,
    /// `(first row, length)` of each run of consecutive rows.
    runs: Vec<(u32, u32)>,
    inv_d: Vec<f64>,
    perm: Vec<usize>,
    /// Column ranges of the fixed partition used by [`Self::apply_many`].
    parts: Vec<std::ops::Range<usize>>,
}

/// Scratch of [`SparseInverse::apply_many`]: allocated once, reused.
#[derive(Debug, Clone, Default)]
pub struct SparseInverseScratch {
    pb: Vec<f64>,
    partial: Vec<Vec<f64>>,
    z: Vec<f64>,
    w: Vec<f64>,
}

/// Number of column blocks whose scatters `S y` sums in a fixed order
/// (independent of the thread count, so results are reproducible).
const PARTS: usize = 8;

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
        let out = SharedColumns::new(&mut values);
        for level in &by_depth {
            level.par_iter().with_min_len(16).for_each(|&j| {
                // SAFETY: column j's range is written by this task only; the
                // columns read (ancestors of j) have smaller depth and were
                // completed in earlier levels, and ranges never overlap.
                let col = unsafe { out.column(col_ptr[j], depth[j]) };
                col[0] = 1.0;
                let rows = &s.l_row_idx()[s.l_col_ptr[j]..s.l_col_ptr[j + 1]];
                for (&k, &l_kj) in rows.iter().zip(f.l_column(j)) {
                    let k = k as usize;
                    let src = unsafe { out.finished(col_ptr[k], depth[k]) };
                    let tail = &mut col[depth[j] - depth[k]..];
                    tail.iter_mut().zip(src.iter()).for_each(|(x, y)| *x -= l_kj * y);
                }
            });
        }
        let inv_d = f.d.iter().map(|d| 1.0 / d).collect();
        let (run_ptr, runs) = path_runs(&s.parent);
        let parts = balanced_parts(&col_ptr, PARTS);
        SparseInverse {
            col_ptr,
            values,
            parent: s.parent.clone(),
            run_ptr,
            runs,
            inv_d,
            perm: s.perm.clone(),
            parts,
        }
    }

    /// `P`: position `i` of the permuted numbering holds original index
    /// `perm()[i]`.
    pub fn perm(&self) -> &[usize] {
        &self.perm
    }

    /// `D⁻¹` (permuted numbering).
    pub fn inv_d(&self) -> &[f64] {
        &self.inv_d
    }

    /// Runs of consecutive rows of column `j`, in path order.
    pub fn runs(&self, j: usize) -> &[(u32, u32)] {
        &self.runs[self.run_ptr[j]..self.run_ptr[j + 1]]
    }

    /// Bytes one product `S y` or `Sᵀ z` streams from `S`: values, runs
    /// and column pointers.
    pub fn stream_bytes(&self) -> usize {
        8 * self.values.len() + 8 * self.runs.len() + 8 * self.col_ptr.len()
    }

    /// `X = A⁻¹ B = Pᵀ Sᵀ D⁻¹ S P B` (zeng2025 eq. 7–8) for `K` right-hand
    /// sides stored row-major (`B[i·K + c]`, so a flat `3 × vertices`
    /// position vector is `K = 3`). `S P B` is scattered per column block
    /// into private buffers summed in a fixed order; `Sᵀ Z` is a parallel
    /// gather per column. Allocates nothing once `scratch` has grown.
    pub fn apply_many<const K: usize>(&self, b: &[f64], x: &mut [f64], scratch: &mut SparseInverseScratch) {
        let n = self.perm.len();
        assert!(b.len() == n * K && x.len() == n * K, "apply_many: expected {} values", n * K);
        let sc = scratch;
        sc.pb.resize(n * K, 0.0);
        sc.z.resize(n * K, 0.0);
        sc.w.resize(n * K, 0.0);
        sc.partial.resize_with(self.parts.len(), Vec::new);
        for (i, &o) in self.perm.iter().enumerate() {
            sc.pb[i * K..i * K + K].copy_from_slice(&b[o * K..o * K + K]);
        }
        let pb = as_rows::<K>(&sc.pb);
        sc.partial.par_iter_mut().zip(&self.parts).for_each(|(y, cols)| {
            y.resize(n * K, 0.0);
            // Column j's path only reaches rows ≥ j.
            y[cols.start * K..].iter_mut().for_each(|v| *v = 0.0);
            let y = as_rows_mut::<K>(y);
            for j in cols.clone() {
                let bj = pb[j];
                let mut vals = &self.values[self.col_ptr[j]..self.col_ptr[j + 1]];
                for &(r0, len) in self.runs(j) {
                    let (head, rest) = vals.split_at(len as usize);
                    vals = rest;
                    for (yr, &s) in y[r0 as usize..(r0 + len) as usize].iter_mut().zip(head) {
                        (0..K).for_each(|c| yr[c] += s * bj[c]);
                    }
                }
            }
        });
        let (partial, parts) = (&sc.partial, &self.parts);
        as_rows_mut::<K>(&mut sc.z).par_chunks_mut(CHUNK).enumerate().for_each(|(c, zc)| {
            for (off, z) in zc.iter_mut().enumerate() {
                let row = c * CHUNK + off;
                let mut sum = [0.0; K];
                for (p, y) in parts.iter().zip(partial) {
                    if p.start <= row {
                        (0..K).for_each(|i| sum[i] += y[row * K + i]);
                    }
                }
                (0..K).for_each(|i| z[i] = sum[i] * self.inv_d[row]);
            }
        });
        let z = as_rows::<K>(&sc.z);
        as_rows_mut::<K>(&mut sc.w).par_chunks_mut(CHUNK).enumerate().for_each(|(c, wc)| {
            for (jj, wj) in wc.iter_mut().enumerate() {
                let j = c * CHUNK + jj;
                let mut acc = [0.0; K];
                let mut vals = &self.values[self.col_ptr[j]..self.col_ptr[j + 1]];
                for &(r0, len) in self.runs(j) {
                    let (head, rest) = vals.split_at(len as usize);
                    vals = rest;
                    for (zr, &s) in z[r0 as usize..(r0 + len) as usize].iter().zip(head) {
                        (0..K).for_each(|i| acc[i] += s * zr[i]);
                    }
                }
                *wj = acc;
            }
        });
        for (i, &o) in self.perm.iter().enumerate() {
            x[o * K..o * K + K].copy_from_slice(&sc.w[i * K..i * K + K]);
        }
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

    /// `W̄ = Ī A⁻¹ Īᵀ` for the indices `cols` (original numbering), read
    /// from the stored `S` (zeng2025 eq. 27 restricted to the columns the
    /// constraint rows touch): `Z = D^{-1/2} S P Īᵀ` gathered densely over
    /// the union of the columns' etree paths (Theorem 1), then `W̄ = Zᵀ Z`;
    /// `m × m` column-major into `out`. The isodof columns' matrix, read
    /// instead of solved. The product runs as fixed column ranges, each
    /// sequential, so the result does not depend on the thread count.
    pub fn gram(&self, cols: &[usize], out: &mut Vec<f64>) {
        let (n, m) = (self.perm.len(), cols.len());
        let mut position = vec![0usize; n];
        self.perm.iter().enumerate().for_each(|(j, &o)| position[o] = j);
        let mut slot = vec![u32::MAX; n];
        let mut reach = 0usize;
        for &c in cols {
            for (r, _) in self.column(position[c]) {
                if slot[r] == u32::MAX {
                    slot[r] = reach as u32;
                    reach += 1;
                }
            }
        }
        let mut z = vec![0.0; reach * m];
        z.par_chunks_mut(reach.max(1)).zip(cols.par_iter()).for_each(|(zk, &c)| {
            for (r, v) in self.column(position[c]) {
                zk[slot[r] as usize] = v * self.inv_d[r].sqrt();
            }
        });
        out.clear();
        out.resize(m * m, 0.0);
        let zm = MatRef::from_column_major_slice(&z, reach, m);
        let width = m.div_ceil(PARTS).max(1);
        out.par_chunks_mut(m * width).enumerate().for_each(|(p, dst)| {
            let cols = dst.len() / m.max(1);
            let dst = MatMut::from_column_major_slice_mut(dst, m, cols);
            let rhs = zm.subcols(p * width, cols);
            matmul(dst, Accum::Replace, zm.transpose(), rhs, 1.0, Par::Seq);
        });
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

/// A flat buffer as rows of `K` values.
fn as_rows<const K: usize>(v: &[f64]) -> &[[f64; K]] {
    assert!(K > 0 && v.len().is_multiple_of(K));
    // SAFETY: `[f64; K]` has the layout of K consecutive f64, and the
    // length is a multiple of K.
    unsafe { std::slice::from_raw_parts(v.as_ptr().cast(), v.len() / K) }
}

/// A flat mutable buffer as rows of `K` values.
fn as_rows_mut<const K: usize>(v: &mut [f64]) -> &mut [[f64; K]] {
    assert!(K > 0 && v.len().is_multiple_of(K));
    // SAFETY: as in `as_rows`, and the borrow is exclusive.
    unsafe { std::slice::from_raw_parts_mut(v.as_mut_ptr().cast(), v.len() / K) }
}

/// Each column's etree path as runs of consecutive rows.
fn path_runs(parent: &[usize]) -> (Vec<usize>, Vec<(u32, u32)>) {
    let mut run_ptr = Vec::with_capacity(parent.len() + 1);
    run_ptr.push(0);
    let mut runs = Vec::new();
    for j in 0..parent.len() {
        let (mut start, mut len, mut r) = (j, 1, j);
        while parent[r] != NONE {
            let p = parent[r];
            if p == r + 1 {
                len += 1;
            } else {
                runs.push((start as u32, len as u32));
                (start, len) = (p, 1);
            }
            r = p;
        }
        runs.push((start as u32, len as u32));
        run_ptr.push(runs.len());
    }
    (run_ptr, runs)
}
