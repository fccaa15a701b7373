//! `W = H A⁻¹ Hᵀ` for `A = A_s ⊗ I₃` (local-global, zeng2025 eq. 27): the
//! isodof method on the scalar factor. With `Ī` the vertices the rows
//! touch, `W̄_s = Ī A_s⁻¹ Īᵀ = S̄ᵀ D⁻¹ S̄` (the columns of `S = L⁻¹` at those
//! vertices, zeng2025 Theorem 1, solved along the elimination tree as in
//! zeng2022 Algorithm 3), and since `A⁻¹` does not couple axes,
//! `W = Σ_d H⁽ᵈ⁾ W̄_s H⁽ᵈ⁾ᵀ`, `H⁽ᵈ⁾` holding `H`'s entries of axis `d` by
//! vertex. The factor is nine times smaller than the `3n × 3n` one, and
//! since `A` is constant the reuse cache (zeng2022 §5) is never invalidated:
//! a vertex once solved stays solved.

use std::collections::HashMap;
use std::sync::Arc;

use ferrofem_linalg::ldlt::{IsodofCache, IsodofColumns, IsodofReuse, SlotValues};
use ferrofem_linalg::{CsrMatrix, CsrPattern, Ldlt, SparseInverse};

use super::buffers::DelassusBuffers;
use super::isodof::{expand, SlotMatrix, SlotScalar};

/// `Ī`: the vertices `H` touches, sorted.
pub fn isovertices(h: &CsrMatrix) -> Vec<usize> {
    let mut v: Vec<usize> = h.pattern.col_idx.iter().map(|&c| c as usize / 3).collect();
    v.sort_unstable();
    v.dedup();
    v
}

/// `H⁽ᵈ⁾`: `H`'s entries on axis `d`, columns numbered by vertex.
fn axis_rows(h: &CsrMatrix, d: usize) -> CsrMatrix {
    let hp = &h.pattern;
    let mut row_ptr = Vec::with_capacity(hp.nrows + 1);
    let (mut col_idx, mut values) = (Vec::new(), Vec::new());
    row_ptr.push(0);
    for r in 0..hp.nrows {
        for p in hp.row_ptr[r]..hp.row_ptr[r + 1] {
            if hp.col_idx[p] as usize % 3 == d {
                col_idx.push(hp.col_idx[p] / 3);
                values.push(h.values[p]);
            }
        }
        row_ptr.push(col_idx.len());
    }
    let pattern = CsrPattern { nrows: hp.nrows, ncols: hp.ncols / 3, row_ptr, col_idx };
    CsrMatrix { pattern, values }
}

/// `W = s Σ_d H⁽ᵈ⁾ W̄_s H⁽ᵈ⁾ᵀ` (row-major, into `buf.w`), `W̄_s` over
/// slots; `s` multiplies the sum of the three axes.
fn expand_axes<P: SlotScalar>(
    h: &CsrMatrix,
    slot: impl Fn(usize) -> usize + Copy,
    wbar: &SlotMatrix<P>,
    s: f64,
    buf: &mut DelassusBuffers,
) {
    let mut part = std::mem::take(&mut buf.solves);
    expand(&axis_rows(h, 0), slot, wbar, 1.0, &mut buf.w);
    expand(&axis_rows(h, 1), slot, wbar, 1.0, &mut part);
    buf.w.iter_mut().zip(&part).for_each(|(w, p)| *w += p);
    expand(&axis_rows(h, 2), slot, wbar, 1.0, &mut part);
    buf.w.iter_mut().zip(&part).for_each(|(w, p)| *w = (*w + p) * s);
    buf.solves = part;
}

/// `scale · W` by the isodof method on the scalar factor `f` of `A_s`,
/// solving every touched vertex.
pub fn kronecker_isodof<'b>(
    f: &Ldlt,
    h: &CsrMatrix,
    buf: &'b mut DelassusBuffers,
    scale: f64,
) -> (&'b [f64], IsodofReuse) {
    let verts = isovertices(h);
    let cols = IsodofColumns::new(f, &verts);
    cols.delassus_into(&mut buf.wbar);
    expand_built(h, cols.dofs(), buf, scale)
}

/// The expansion of a `W̄_s` just built in `buf.wbar` (`m × m`, its slots
/// the vertices `order`).
fn expand_built<'b>(
    h: &CsrMatrix,
    order: &[usize],
    buf: &'b mut DelassusBuffers,
    scale: f64,
) -> (&'b [f64], IsodofReuse) {
    let pos: HashMap<usize, usize> = order.iter().enumerate().map(|(i, &v)| (v, i)).collect();
    let m = order.len();
    let wbar = std::mem::take(&mut buf.wbar);
    expand_axes(h, |v| pos[&v], &SlotMatrix { values: &wbar, ld: m, len: m }, scale, buf);
    buf.wbar = wbar;
    (&buf.w, IsodofReuse { isodofs: m, reused: 0 })
}

/// As [`kronecker_isodof`], solving only the vertices `cache` does not hold.
pub fn kronecker_isodof_reuse<'b>(
    cache: &mut IsodofCache,
    f: &Arc<Ldlt>,
    h: &CsrMatrix,
    buf: &'b mut DelassusBuffers,
    scale: f64,
) -> (&'b [f64], IsodofReuse) {
    let reuse = cache.update(f, &isovertices(h));
    let (values, ld) = cache.wbar();
    let (slot, len) = (|v| cache.slot(v).expect("updated"), cache.len());
    match values {
        SlotValues::Double(values) => expand_axes(h, slot, &SlotMatrix { values, ld, len }, scale, buf),
        SlotValues::Single(values) => expand_axes(h, slot, &SlotMatrix { values, ld, len }, scale, buf),
    }
    (&buf.w, reuse)
}

/// `scale · W` from the stored sparse inverse: `W̄_s = (S P Īᵀ)ᵀ D⁻¹ (S P Īᵀ)` over
/// the touched vertices (zeng2025 eq. 27), then the same expansion.
pub fn kronecker_sparse_inverse<'b>(
    s: &SparseInverse,
    h: &CsrMatrix,
    buf: &'b mut DelassusBuffers,
    scale: f64,
) -> (&'b [f64], IsodofReuse) {
    let verts = isovertices(h);
    s.gram(&verts, &mut buf.wbar);
    expand_built(h, &verts, buf, scale)
}
