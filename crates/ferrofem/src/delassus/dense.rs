//! The dense method (zeng2022 Algorithm 1, [CAK14]).

use ferrofem_linalg::{CsrMatrix, Ldlt};
use rayon::prelude::*;

/// The dense method (zeng2022 Algorithm 1, [CAK14]): `X = A⁻¹ Hᵀ` for all
/// `c` right-hand sides at once with the supernodal factor (blocked, BLAS-3,
/// parallel), then `W = H X` by sparse rows. Returns `W` row-major (`c × c`).
/// Cost: `c · 2 nnz(L)` flops in dense kernels, plus `c · nnz(H)`.
pub fn dense(f: &Ldlt, h: &CsrMatrix) -> Vec<f64> {
    let n = f.symbolic().n();
    let c = h.nrows();
    let hp = &h.pattern;
    let mut x = vec![0.0; n * c];
    x.par_chunks_mut(n).enumerate().for_each(|(r, col)| {
        for p in hp.row_ptr[r]..hp.row_ptr[r + 1] {
            col[hp.col_idx[p] as usize] = h.values[p];
        }
    });
    f.solve_in_place(&mut x, c);
    let mut w = vec![0.0; c * c];
    w.par_chunks_mut(c).enumerate().for_each(|(r, row)| {
        for (q, out) in row.iter_mut().enumerate() {
            let col = &x[q * n..(q + 1) * n];
            *out =
                (hp.row_ptr[r]..hp.row_ptr[r + 1]).map(|p| h.values[p] * col[hp.col_idx[p] as usize]).sum();
        }
    });
    symmetrize(&mut w, c);
    w
}

/// Averages `W` with its transpose (row-major `c × c`) so PGS sees an exactly symmetric operator.
pub fn symmetrize(w: &mut [f64], c: usize) {
    for r in 0..c {
        for q in r + 1..c {
            let m = 0.5 * (w[r * c + q] + w[q * c + r]);
            w[r * c + q] = m;
            w[q * c + r] = m;
        }
    }
}
