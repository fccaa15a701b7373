//! Compliance warping (Saupin et al. 2008; the warped asynchronous
//! preconditioner of Courtecuisse et al. 2010, on which zeng2022 §3.4
//! builds): an LDLᵀ factor of `A_s`, the system matrix of step `s`, serves
//! a later step as `A⁻¹ ≈ G A_s⁻¹ Gᵀ`, `G` the body's rotation since step
//! `s` applied to every vertex. The co-rotational
//! `A = (1 + hα) M + (hβ + h²) Σ Rₑ Kₑ Rₑᵀ` changes only through the
//! rotations `Rₑ`, and `A = G A_s Gᵀ` exactly when every tet turned by `G`:
//! a rolling or turning body keeps a compliance that turns with it. One
//! rotation for the whole body keeps the rigid motions of `A_s⁻¹` rigid, so
//! the correction `G A_s⁻¹ Gᵀ Hᵀ λ` strains the body no more than
//! `A_s⁻¹ Hᵀ λ` does (a rotation per vertex did not: neighbours turned
//! differently tore the contact patch apart).

use ferrofem_linalg::CsrMatrix;
use nalgebra::{Matrix3, Vector3};
use rayon::prelude::*;

use crate::body::Body;
use crate::element::{polar, PolarMethod};

/// Tets per task of [`Warp::since`]'s sum.
const TURN_CHUNK: usize = 4096;

/// `G`: the body's rotation from the factor's step to this one.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Warp {
    /// `G`.
    pub rotation: Matrix3<f64>,
}

impl Warp {
    /// `G = polar(Σₑ |e| Rₑ R_{e,s}ᵀ)`: the volume-weighted mean turn of
    /// the tets, from their co-rotational rotations now (`now`) and at step
    /// `s` (`then`). The sum is taken over fixed chunks of tets side by side, then the
    /// chunks' sums in order: the same bits whatever the thread count.
    pub fn since(body: &Body, now: &[Matrix3<f64>], then: &[Matrix3<f64>], method: PolarMethod) -> Warp {
        let chunks =
            body.tets.par_chunks(TURN_CHUNK).zip(now.par_chunks(TURN_CHUNK)).zip(then.par_chunks(TURN_CHUNK));
        let partial: Vec<Matrix3<f64>> = chunks
            .map(|((tets, now), then)| {
                tets.iter().zip(now).zip(then).map(|((t, r), r0)| t.measure * r * r0.transpose()).sum()
            })
            .collect();
        let turn: Matrix3<f64> = partial.into_iter().sum();
        Warp { rotation: polar::rotation(&turn, &Matrix3::identity(), method) }
    }

    /// `x ← Gᵀ x` on every vertex (`x` a flat vector, `3·vertex + axis`).
    pub fn unrotate(&self, x: &mut [f64]) {
        let g = self.rotation.transpose();
        rotate_each(&g, x);
    }

    /// `x ← G x` on every vertex.
    pub fn rotate(&self, x: &mut [f64]) {
        rotate_each(&self.rotation, x);
    }

    /// `out = H G`: a row's entries on vertex `v`, `h_v`, become `Gᵀ h_v`
    /// (the rows in the frame of the factor; zeros left out as in `H`).
    pub fn rows(&self, h: &CsrMatrix, out: &mut CsrMatrix) {
        let (p, values) = (&h.pattern, &h.values);
        let (q, vals) = (&mut out.pattern, &mut out.values);
        (q.nrows, q.ncols) = (p.nrows, p.ncols);
        q.row_ptr.clear();
        q.row_ptr.push(0);
        q.col_idx.clear();
        vals.clear();
        for r in 0..p.nrows {
            let mut k = p.row_ptr[r];
            while k < p.row_ptr[r + 1] {
                let v = p.col_idx[k] as usize / 3;
                let mut hv = Vector3::zeros();
                while k < p.row_ptr[r + 1] && p.col_idx[k] as usize / 3 == v {
                    hv[p.col_idx[k] as usize % 3] = values[k];
                    k += 1;
                }
                let rotated = self.rotation.tr_mul(&hv);
                for (axis, &x) in rotated.iter().enumerate().filter(|(_, x)| **x != 0.0) {
                    q.col_idx.push((3 * v + axis) as u32);
                    vals.push(x);
                }
            }
            q.row_ptr.push(q.col_idx.len());
        }
    }
}

/// `x_v ← m x_v` for every vertex `v`.
fn rotate_each(m: &Matrix3<f64>, x: &mut [f64]) {
    for xv in x.chunks_exact_mut(3) {
        xv.copy_from_slice((m * Vector3::from_column_slice(xv)).as_slice());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::constraint::ConstraintJacobian;
    use nalgebra::{Rotation3, Unit};

    /// `(H G) y = H (G y)` on rows of a vertex and of a triangle point, and
    /// `Gᵀ G = I`.
    #[test]
    fn warped_rows_are_the_rows_times_g() {
        let axis = Unit::new_normalize(Vector3::new(1.0, 2.0, 0.5));
        let warp = Warp { rotation: *Rotation3::from_axis_angle(&axis, -1.1).matrix() };
        let mut jac = ConstraintJacobian::new(9);
        jac.push_point(&[(0, 0.25), (2, 0.75)], [[0.0, 0.0, 1.0], [1.0, 0.0, 0.0], [0.0, 0.6, 0.8]]);
        jac.push_point(&[(1, 1.0)], [[0.0, 1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]]);
        let h = jac.to_csr();
        let mut hg = h.clone();
        warp.rows(&h, &mut hg);
        let y: Vec<f64> = (0..9).map(|i| (i as f64 * 0.7).sin()).collect();
        let mut gy = y.clone();
        warp.rotate(&mut gy);
        let (mut a, mut b) = (vec![0.0; 6], vec![0.0; 6]);
        hg.mul_vec(&y, &mut a);
        h.mul_vec(&gy, &mut b);
        assert!(a.iter().zip(&b).all(|(p, q)| (p - q).abs() < 1e-15), "{a:?} vs {b:?}");
        warp.unrotate(&mut gy);
        assert!(gy.iter().zip(&y).all(|(p, q)| (p - q).abs() < 1e-15));
    }
}
