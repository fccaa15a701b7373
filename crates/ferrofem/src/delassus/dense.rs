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

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::constraint::ConstraintJacobian;
    use crate::scene::{BodySpec, MeshSpec, SceneBuilder};
    use ferrofem_linalg::{LdltSymbolic, Ordering};
    use nalgebra::DMatrix;

    #[test]
    fn dense_delassus_equals_h_ainv_ht() {
        let b = BodySpec::new("b", MeshSpec::Box { size: [0.4, 0.2, 0.2], cells: [4, 2, 2] }, 1e5, 0.3, 1e3);
        let mut w = SceneBuilder::new(0.01).body(b).world().unwrap();
        w.step().unwrap();
        let a = w.implicit_euler().unwrap().workspace(0).system.clone();
        let n = a.nrows();
        let f = ferrofem_linalg::Ldlt::factorize(
            Arc::new(LdltSymbolic::analyze(&a.pattern, Ordering::Auto, 3).unwrap()),
            &a,
        )
        .unwrap();
        let mut h = ConstraintJacobian::new(n);
        let frame = [[0.0, 0.0, 1.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]];
        h.push_point(&[(0, 1.0)], frame);
        h.push_point(&[(3, 0.2), (4, 0.3), (7, 0.5)], [[0.6, 0.0, 0.8], [0.8, 0.0, -0.6], [0.0, 1.0, 0.0]]);
        let h = h.to_csr();
        let wd = dense(&Compliance::Ldlt(Arc::new(f)), &h, &mut DelassusBuffers::default(), 1.0).to_vec();
        let ad = DMatrix::from_fn(n, n, |i, j| a.get(i, j));
        let hd = DMatrix::from_fn(h.nrows(), n, |i, j| h.get(i, j));
        let reference = &hd * ad.try_inverse().unwrap() * hd.transpose();
        let scale = reference.abs().max();
        for i in 0..6 {
            for j in 0..6 {
                assert!((wd[i * 6 + j] - reference[(i, j)]).abs() <= 1e-10 * scale, "W[{i},{j}]");
            }
        }
    }
}
