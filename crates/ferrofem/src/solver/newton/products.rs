//! What the non-smooth Newton reads of `W`: its products and diagonal
//! entries, assembled (f64 with an f32 copy) or factored.

use ferrofem_linalg::simd::dot_mixed;
use ferrofem_linalg::vector::dot_serial;
use rayon::prelude::*;

/// `W` (row-major `c × c`) with its copy rounded to single precision: the
/// conjugate-residual inner solves, a few iterations of an inexact
/// direction, read it at half the bytes; `Φ` and the line search keep the
/// f64 `W`. The copy is made once per `W`, not per solve.
#[derive(Debug, Clone, Copy)]
pub struct DelassusPair<'a> {
    /// `W`.
    pub double: &'a [f64],
    /// `W` rounded to f32.
    pub single: &'a [f32],
}

/// What the non-smooth Newton reads of `W`: products and the entries of
/// its groups' 3×3 diagonal blocks. The assembled `W` ([`DelassusPair`])
/// or its factored form under local-global
/// ([`crate::delassus::FactoredDelassus`]).
pub trait NewtonDelassus {
    /// `out = W v`.
    fn times(&mut self, v: &[f64], out: &mut [f64]);
    /// `out = W v` as the conjugate residuals read it (a rounded `W` may serve).
    fn times_inner(&mut self, v: &[f64], out: &mut [f64]) {
        self.times(v, out)
    }
    /// `out = W v` for a `v` with few nonzeros.
    fn times_sparse(&mut self, v: &[f64], out: &mut [f64]) {
        self.times(v, out)
    }
    /// `W[i, j]` for two rows of one group.
    fn block_entry(&self, i: usize, j: usize) -> f64;
}

impl NewtonDelassus for DelassusPair<'_> {
    fn times(&mut self, v: &[f64], out: &mut [f64]) {
        delassus_times(self.double, v, out)
    }
    fn times_inner(&mut self, v: &[f64], out: &mut [f64]) {
        delassus_times_f32(self.single, v, out)
    }
    fn times_sparse(&mut self, v: &[f64], out: &mut [f64]) {
        delassus_times_sparse(self.double, v, out)
    }
    fn block_entry(&self, i: usize, j: usize) -> f64 {
        self.double[i * self.double.len().isqrt() + j]
    }
}

impl NewtonDelassus for crate::delassus::FactoredDelassus {
    fn times(&mut self, v: &[f64], out: &mut [f64]) {
        crate::delassus::FactoredDelassus::times(self, v, out)
    }
    fn block_entry(&self, i: usize, j: usize) -> f64 {
        crate::delassus::FactoredDelassus::block_entry(self, i, j)
    }
}

/// `W` by blocks of coupled groups: each block's rows read from the block
/// alone, its f32 copy (made by
/// [`crate::delassus::DelassusBlocks::round_to_single`] before the solve)
/// for the conjugate residuals; one block over all rows in order reads as
/// [`DelassusPair`].
impl NewtonDelassus for crate::delassus::DelassusBlocks {
    fn times(&mut self, v: &[f64], out: &mut [f64]) {
        crate::delassus::DelassusBlocks::times(self, v, out)
    }
    fn times_inner(&mut self, v: &[f64], out: &mut [f64]) {
        self.times_single(v, out)
    }
    fn times_sparse(&mut self, v: &[f64], out: &mut [f64]) {
        match self.whole() {
            Some(w) => delassus_times_sparse(w, v, out),
            None => crate::delassus::DelassusBlocks::times(self, v, out),
        }
    }
    fn block_entry(&self, i: usize, j: usize) -> f64 {
        self.entry(i, j)
    }
}

/// `out ← W` rounded to f32 (for [`DelassusPair`]).
pub fn round_to_single(w: &[f64], out: &mut Vec<f32>) {
    out.clear();
    out.extend(w.iter().map(|&v| v as f32));
}

/// `out = W v` for a row-major `c × c` `W`.
pub fn delassus_times(w: &[f64], v: &[f64], out: &mut [f64]) {
    let c = v.len();
    out.par_iter_mut()
        .enumerate()
        .with_min_len(64)
        .for_each(|(i, o)| *o = dot_serial(&w[i * c..(i + 1) * c], v));
}

/// `out = W v` with the single-precision copy of `W`, sums in f64.
pub(super) fn delassus_times_f32(w: &[f32], v: &[f64], out: &mut [f64]) {
    let c = v.len();
    out.par_iter_mut()
        .enumerate()
        .with_min_len(64)
        .for_each(|(i, o)| *o = dot_mixed(&w[i * c..(i + 1) * c], v));
}

/// `out = W v` for a symmetric `W` and a `v` with few nonzeros: the rows
/// of `W` at those entries, summed (no work when `v = 0`).
pub(super) fn delassus_times_sparse(w: &[f64], v: &[f64], out: &mut [f64]) {
    let c = v.len();
    out.iter_mut().for_each(|o| *o = 0.0);
    for (j, &vj) in v.iter().enumerate().filter(|(_, v)| **v != 0.0) {
        ferrofem_linalg::simd::axpy(vj, &w[j * c..(j + 1) * c], out);
    }
}
