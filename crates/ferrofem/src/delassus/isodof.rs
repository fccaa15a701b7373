//! The isodof method (zeng2022 Algorithm 3, §4): `H = Ĥ Ī` (eq. 23), where
//! `Ī` selects the DOFs the rows touch and `Ĥ` keeps `H`'s values with
//! compressed column indices; `W̄ = Ī A⁻¹ Īᵀ` from single-nonzero solves
//! along the elimination tree, then `W = Ĥ W̄ Ĥᵀ` (eq. 24–25). With an
//! [`IsodofCache`] only the DOFs not seen since the last factorization are
//! solved (§5, eq. 26–30).

use std::collections::HashMap;
use std::sync::Arc;

use ferrofem_linalg::dense::mirror;
use ferrofem_linalg::ldlt::{IsodofCache, IsodofColumns, IsodofReuse, SlotValues};
use ferrofem_linalg::simd::Stored;
use ferrofem_linalg::{CsrMatrix, Ldlt};
use rayon::prelude::*;

use super::buffers::DelassusBuffers;

/// `Ī`: the DOFs `H` touches, sorted.
pub fn isodofs(h: &CsrMatrix) -> Vec<usize> {
    let mut d: Vec<usize> = h.pattern.col_idx.iter().map(|&c| c as usize).collect();
    d.sort_unstable();
    d.dedup();
    d
}

/// `scale · W` row-major (`c × c`, in `buf`) by the isodof method, solving
/// every isodof; the columns stay in `buf` (their storage is reused next
/// time).
pub fn isodof<'b>(
    f: &Ldlt,
    h: &CsrMatrix,
    buf: &'b mut DelassusBuffers,
    scale: f64,
) -> (&'b [f64], IsodofReuse) {
    let storage = buf.columns.take().map(IsodofColumns::into_storage).unwrap_or_default();
    let cols = IsodofColumns::new_in(f, &isodofs(h), storage);
    cols.delassus_into(&mut buf.wbar);
    let pos: HashMap<usize, usize> = cols.dofs().iter().enumerate().map(|(i, &d)| (d, i)).collect();
    let m = cols.len();
    let wbar = SlotMatrix { values: &buf.wbar, ld: m, len: m };
    expand(h, |d| pos[&d], &wbar, scale, &mut buf.w);
    buf.columns = Some(cols);
    (&buf.w, IsodofReuse { isodofs: m, reused: 0 })
}

/// `scale · W` row-major (in `buf`) by the isodof method, reusing the
/// columns `cache` holds for factor `f`.
pub fn isodof_reuse<'b>(
    cache: &mut IsodofCache,
    f: &Arc<Ldlt>,
    h: &CsrMatrix,
    buf: &'b mut DelassusBuffers,
    scale: f64,
) -> (&'b [f64], IsodofReuse) {
    let reuse = cache.update(f, &isodofs(h));
    let (values, ld) = cache.wbar();
    let slot = |d| cache.slot(d).expect("updated");
    let len = cache.len();
    match values {
        SlotValues::Double(values) => expand(h, slot, &SlotMatrix { values, ld, len }, scale, &mut buf.w),
        SlotValues::Single(values) => expand(h, slot, &SlotMatrix { values, ld, len }, scale, &mut buf.w),
    }
    (&buf.w, reuse)
}

/// A symmetric `W̄` over slots: `W̄[i, j]` at `values[j · ld + i]`, `len`
/// slots, in double or (the cache of a single-precision factor) single.
pub struct SlotMatrix<'a, P = f64> {
    /// The entries, column-major.
    pub values: &'a [P],
    /// Leading dimension.
    pub ld: usize,
    /// Slots in use.
    pub len: usize,
}

/// A precision [`expand`] reads `W̄` in.
pub trait SlotScalar: Stored {
    /// The column itself where it is in double (a row of `Ĥ` with one
    /// entry then reads it in place), else `None` (it is widened).
    fn in_place(column: &[Self]) -> Option<&[f64]>;
}

impl SlotScalar for f64 {
    fn in_place(column: &[f64]) -> Option<&[f64]> {
        Some(column)
    }
}

impl SlotScalar for f32 {
    fn in_place(_: &[f32]) -> Option<&[f64]> {
        None
    }
}

/// `W = s Ĥ W̄ Ĥᵀ` (eq. 25; `s` the world's h²) into `w` (row-major
/// `c × c`, exactly symmetric), `Ĥ` being `H` with DOF `d` moved to column
/// `slot(d)`: for each row `r`, `T_r = Ĥ_r W̄` as a combination of columns
/// of `W̄` (a row of `Ĥ` with one entry reads its column of `W̄` in place
/// and scales the row of `W` instead) in a buffer of the thread, then the
/// upper half `W[r, q] = Ĥ_q · T_r` with `Ĥ`'s rows padded to one width;
/// mirrored. `T` is never stored whole (at thousands of rows it is tens of
/// megabytes written and read back); `s` multiplies each row as it is
/// finished, in cache. `w` is reused and every entry written, so it is not
/// cleared first.
pub fn expand<P: SlotScalar>(
    h: &CsrMatrix,
    slot: impl Fn(usize) -> usize,
    wbar: &SlotMatrix<P>,
    s: f64,
    w: &mut Vec<f64>,
) {
    let (c, len) = (h.nrows(), wbar.len);
    let (row_ptr, values) = (&h.pattern.row_ptr, &h.values);
    let slots: Vec<usize> = h.pattern.col_idx.iter().map(|&d| slot(d as usize)).collect();
    let column = |p: usize| &wbar.values[slots[p] * wbar.ld..slots[p] * wbar.ld + len];
    let padded = PaddedRows::new(h, &slots);
    w.resize(c * c, 0.0);
    w.par_chunks_mut(c.max(1)).enumerate().for_each_init(Vec::new, |t, (r, wr)| {
        let (first, end) = (row_ptr[r], row_ptr[r + 1]);
        let in_place = (end - first == 1).then(|| P::in_place(column(first))).flatten();
        let (tr, entry) = if let Some(c) = in_place {
            (c, values[first])
        } else {
            t.resize(len, 0.0);
            if first == end {
                t.fill(0.0);
            } else {
                t.iter_mut().zip(column(first)).for_each(|(x, &y)| *x = values[first] * y.into());
                (first + 1..end).for_each(|p| P::axpy(values[p], column(p), t));
            }
            (&t[..], 1.0)
        };
        match padded.width {
            0 => wr[r..].fill(0.0),
            1 => padded.upper(1, tr, r, wr),
            3 => padded.upper(3, tr, r, wr),
            n => padded.upper(n, tr, r, wr),
        }
        if entry != 1.0 || s != 1.0 {
            wr[r..].iter_mut().for_each(|x| *x = *x * entry * s);
        }
    });
    mirror(w, c, 0..c);
}

/// `Ĥ` with every row padded to the width of the longest (zero values at
/// slot 0), so that a row of `W` is one pass over flat arrays; rows of one
/// or three entries (a contact's rows on one vertex) get unrolled loops.
struct PaddedRows {
    width: usize,
    slots: Vec<usize>,
    values: Vec<f64>,
}

impl PaddedRows {
    fn new(h: &CsrMatrix, slots: &[usize]) -> PaddedRows {
        let rp = &h.pattern.row_ptr;
        let width = (0..h.nrows()).map(|r| rp[r + 1] - rp[r]).max().unwrap_or(0);
        let mut padded =
            PaddedRows { width, slots: vec![0; h.nrows() * width], values: vec![0.0; h.nrows() * width] };
        for r in 0..h.nrows() {
            for (k, p) in (rp[r]..rp[r + 1]).enumerate() {
                padded.slots[r * width + k] = slots[p];
                padded.values[r * width + k] = h.values[p];
            }
        }
        padded
    }

    /// `out[q] = Ĥ_q · t` for `q ≥ r`. Inlined into each arm of the
    /// caller's match, so that the common widths get constant-length loops.
    #[inline(always)]
    fn upper(&self, n: usize, t: &[f64], r: usize, out: &mut [f64]) {
        let rows = self.slots[r * n..].chunks_exact(n).zip(self.values[r * n..].chunks_exact(n));
        for (o, (s, v)) in out[r..].iter_mut().zip(rows) {
            *o = s.iter().zip(v).map(|(&s, v)| v * t[s]).sum();
        }
    }
}
