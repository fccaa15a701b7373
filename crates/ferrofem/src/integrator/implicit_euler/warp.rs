//! The warped preconditioner (Courtecuisse et al. 2010, whose asynchronous
//! LDLᵀ preconditioner zeng2022 §3.4 builds on; SOFA's `WarpPreconditioner`):
//! a factor of `A_s`, the system matrix of step `s`, preconditions a later
//! step as `Q A_s⁻¹ Qᵀ`, where `Q = blockdiag(Q_v)` holds each vertex's turn
//! since step `s`. The co-rotational `A = (1 + hα) M + (hβ + h²) Σ Rₑ Kₑ Rₑᵀ`
//! changes only through the rotations `Rₑ` (`A = Q A_s Qᵀ` exactly when every
//! tet turned by the same `Q`), so a rolling or turning body keeps a
//! preconditioner that turns with it.
//!
//! `Q_v = polar(Σ_{e ∋ v} Rₑ R_{e,s}ᵀ)`: the turns of the tets around `v`,
//! averaged, so that one tet that flips does not turn its vertices.

use nalgebra::{Matrix3, Vector3};

use crate::body::Body;
use crate::element::{polar, PolarMethod};

/// `Q`: one rotation per vertex, from the factor's step to this one.
#[derive(Debug, Clone, Default)]
pub struct Warp {
    /// `Q_v`, per vertex.
    pub rotations: Vec<Matrix3<f64>>,
}

impl Warp {
    /// `Q` from the tets' co-rotational rotations now (`now`) and at step
    /// `s` (`then`); a vertex in no tet keeps the identity.
    pub fn since(body: &Body, now: &[Matrix3<f64>], then: &[Matrix3<f64>], method: PolarMethod) -> Warp {
        let mut q = vec![Matrix3::zeros(); body.vertex_count()];
        for ((t, r), r0) in body.tets.iter().zip(now).zip(then) {
            let turn = r * r0.transpose();
            t.vertices.iter().for_each(|&v| q[v] += turn);
        }
        for m in q.iter_mut() {
            *m = if *m == Matrix3::zeros() {
                Matrix3::identity()
            } else {
                polar::rotation(m, &Matrix3::identity(), method)
            };
        }
        Warp { rotations: q }
    }

    /// `x ← Qᵀ x` (`x` a flat vector, `3·vertex + axis`).
    pub fn unrotate(&self, x: &mut [f64]) {
        self.apply(x, |q, v| q.tr_mul(&v));
    }

    /// `x ← Q x`.
    pub fn rotate(&self, x: &mut [f64]) {
        self.apply(x, |q, v| q * v);
    }

    fn apply(&self, x: &mut [f64], f: impl Fn(&Matrix3<f64>, Vector3<f64>) -> Vector3<f64>) {
        for (q, xv) in self.rotations.iter().zip(x.chunks_exact_mut(3)) {
            xv.copy_from_slice(f(q, Vector3::from_column_slice(xv)).as_slice());
        }
    }
}
