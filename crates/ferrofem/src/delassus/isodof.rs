//! The isodof method (zeng2022 Algorithm 3, §4): `H = Ĥ Ī` (eq. 23), where
//! `Ī` selects the DOFs the rows touch and `Ĥ` keeps `H`'s values with
//! compressed column indices; `W̄ = Ī A⁻¹ Īᵀ` from single-nonzero solves
//! along the elimination tree, then `W = Ĥ W̄ Ĥᵀ` (eq. 24–25). With an
//! [`IsodofCache`] only the DOFs not seen since the last factorization are
//! solved (§5, eq. 26–30).

use std::collections::HashMap;
use std::sync::Arc;

use ferrofem_linalg::ldlt::{IsodofCache, IsodofColumns, IsodofReuse};
use ferrofem_linalg::{CsrMatrix, Ldlt};
use rayon::prelude::*;

use super::dense::symmetrize;

/// `Ī`: the DOFs `H` touches, sorted.
pub fn isodofs(h: &CsrMatrix) -> Vec<usize> {
    let mut d: Vec<usize> = h.pattern.col_idx.iter().map(|&c| c as usize).collect();
    d.sort_unstable();
    d.dedup();
    d
}

/// `W` row-major (`c × c`) by the isodof method, solving every isodof.
pub fn isodof(f: &Ldlt, h: &CsrMatrix) -> (Vec<f64>, IsodofReuse) {
    let cols = IsodofColumns::new(f, &isodofs(h));
    let w = expand(h, cols.dofs(), &cols.delassus(f));
    (w, IsodofReuse { isodofs: cols.len(), reused: 0 })
}

/// `W` row-major by the isodof method, reusing the columns `cache` holds for factor `f`.
pub fn isodof_reuse(cache: &mut IsodofCache, f: &Arc<Ldlt>, h: &CsrMatrix) -> (Vec<f64>, IsodofReuse) {
    let dofs = isodofs(h);
    let (wbar, reuse) = cache.delassus(f, &dofs);
    (expand(h, &dofs, &wbar), reuse)
}

/// `W = Ĥ W̄ Ĥᵀ` (eq. 25): `T = Ĥ W̄` row by row, then `W = T Ĥᵀ`.
/// `wbar` is `m × m` symmetric over the DOFs `order`.
pub fn expand(h: &CsrMatrix, order: &[usize], wbar: &[f64]) -> Vec<f64> {
    let (c, m) = (h.nrows(), order.len());
    let pos: HashMap<usize, usize> = order.iter().enumerate().map(|(i, &d)| (d, i)).collect();
    let hp = &h.pattern;
    let compressed: Vec<usize> = hp.col_idx.iter().map(|&d| pos[&(d as usize)]).collect();
    let row = |r: usize| (hp.row_ptr[r]..hp.row_ptr[r + 1]).map(|p| (compressed[p], h.values[p]));
    let mut t = vec![0.0; c * m];
    t.par_chunks_mut(m.max(1)).enumerate().for_each(|(r, tr)| {
        for (j, v) in row(r) {
            tr.iter_mut().zip(&wbar[j * m..(j + 1) * m]).for_each(|(x, w)| *x += v * w);
        }
    });
    let mut w = vec![0.0; c * c];
    w.par_chunks_mut(c.max(1)).enumerate().for_each(|(r, wr)| {
        let tr = &t[r * m..(r + 1) * m];
        for (q, out) in wr.iter_mut().enumerate() {
            *out = row(q).map(|(j, v)| v * tr[j]).sum();
        }
    });
    symmetrize(&mut w, c);
    w
}
