//! The dense method (zeng2022 Algorithm 1, \[CAK14\]).

use ferrofem_linalg::dense::symmetrize;
use ferrofem_linalg::CsrMatrix;
use rayon::prelude::*;

use super::buffers::DelassusBuffers;
use crate::constraint::Compliance;

/// The dense method (zeng2022 Algorithm 1, \[CAK14\]): `X = A⁻¹ Hᵀ` for all
/// `c` right-hand sides at once by the compliance (with a supernodal
/// factor: blocked, BLAS-3, parallel), then `W = H X` by sparse rows.
/// Returns `scale · W` row-major (`c × c`, in `buf`; scaled once
/// symmetrized). Cost with a factor:
/// `c · 2 nnz(L)` flops in dense kernels, plus `c · nnz(H)`.
pub fn dense<'b>(
    compliance: &Compliance,
    h: &CsrMatrix,
    buf: &'b mut DelassusBuffers,
    scale: f64,
) -> &'b [f64] {
    let n = h.pattern.ncols;
    let c = h.nrows();
    let hp = &h.pattern;
    let x = &mut buf.solves;
    x.clear();
    x.resize(n * c, 0.0);
    x.par_chunks_mut(n).enumerate().for_each(|(r, col)| {
        for p in hp.row_ptr[r]..hp.row_ptr[r + 1] {
            col[hp.col_idx[p] as usize] = h.values[p];
        }
    });
    compliance.solve_in_place(x, c);
    let w = &mut buf.w;
    w.resize(c * c, 0.0); // every entry is written below
    w.par_chunks_mut(c).enumerate().for_each(|(r, row)| {
        for (q, out) in row.iter_mut().enumerate() {
            let col = &x[q * n..(q + 1) * n];
            *out =
                (hp.row_ptr[r]..hp.row_ptr[r + 1]).map(|p| h.values[p] * col[hp.col_idx[p] as usize]).sum();
        }
    });
    symmetrize(w, c);
    if scale != 1.0 {
        w.par_iter_mut().for_each(|x| *x *= scale);
    }
    w
}
