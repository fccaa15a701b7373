//! A body's compliance: how `A⁻¹` is applied to the constraint rows
//! (SOFA's "constraint correction"). The Delassus builders and the
//! correction talk to this, not to a concrete solver.

use std::sync::Arc;

use ferrofem_linalg::{CsrMatrix, Ldlt, SparseInverse, SparseInverseScratch};

use super::Warp;

/// How a body applies `A⁻¹`.
#[derive(Debug, Clone)]
pub enum Compliance {
    /// The LDLᵀ factor of the `3n × 3n` system matrix (implicit Euler,
    /// zeng2022 §3.4): the isodof builders walk its elimination tree.
    Ldlt(Arc<Ldlt>),
    /// The LDLᵀ factor of an earlier `A_s`, warped by the body's rotation
    /// since: `A⁻¹ ≈ G A_s⁻¹ Gᵀ` ([`Warp`]). The Delassus builders see the
    /// factor and the rows `H G` ([`Self::factor_frame`]).
    WarpedLdlt(Arc<Ldlt>, Warp),
    /// `A = A_s ⊗ I₃` by the LDLᵀ factor of the scalar `n × n` matrix
    /// `A_s`, its three axes as right-hand sides (local-global, zeng2025 eq. 6).
    Kronecker(Arc<Ldlt>),
    /// `A = A_s ⊗ I₃` by the sparse inverse `S = L⁻¹` of `A_s`:
    /// `A⁻¹ = Pᵀ Sᵀ D⁻¹ S P` per axis (zeng2025 eq. 7–8), with the factor
    /// of `A_s` it was built from.
    SparseInverse(Arc<SparseInverse>, Arc<Ldlt>),
}

impl Compliance {
    /// The factor of the full `3n × 3n` matrix, which the isodof and
    /// unbuilt methods need.
    pub fn factor(&self) -> Option<&Arc<Ldlt>> {
        match self {
            Compliance::Ldlt(f) | Compliance::WarpedLdlt(f, _) => Some(f),
            _ => None,
        }
    }

    /// The warp of a [`Compliance::WarpedLdlt`].
    pub fn warp(&self) -> Option<&Warp> {
        match self {
            Compliance::WarpedLdlt(_, q) => Some(q),
            _ => None,
        }
    }

    /// The compliance in the frame of its factor, and the rows there:
    /// `(A_s, H G)` for a warped factor (`H G` written to `buf`), else
    /// `(self, H)`. `H A⁻¹ Hᵀ = (H G) A_s⁻¹ (H G)ᵀ`, so every Delassus
    /// builder works on the factor unchanged.
    pub fn factor_frame<'a>(
        &'a self,
        h: &'a CsrMatrix,
        buf: &'a mut CsrMatrix,
    ) -> (std::borrow::Cow<'a, Compliance>, &'a CsrMatrix) {
        match self {
            Compliance::WarpedLdlt(f, q) => {
                q.rows(h, buf);
                (std::borrow::Cow::Owned(Compliance::Ldlt(f.clone())), buf)
            }
            _ => (std::borrow::Cow::Borrowed(self), h),
        }
    }

    /// `x ← G solve(f, Gᵀ x)` for a compliance with a `3n × 3n` factor
    /// `f` (`G = I` unwarped): a solve by the factor, applied in its frame.
    /// Does nothing to `x` for the other compliances.
    pub fn in_factor_frame(&self, x: &mut [f64], solve: impl FnOnce(&Arc<Ldlt>, &mut [f64])) {
        let Some(f) = self.factor() else { return };
        if let Some(q) = self.warp() {
            q.unrotate(x);
        }
        solve(f, x);
        if let Some(q) = self.warp() {
            q.rotate(x);
        }
    }

    /// The factor of the scalar `A_s` when `A = A_s ⊗ I₃`, which the
    /// Delassus builders use instead of a `3n × 3n` one.
    pub fn scalar_factor(&self) -> Option<&Arc<Ldlt>> {
        match self {
            Compliance::Ldlt(_) | Compliance::WarpedLdlt(..) => None,
            Compliance::Kronecker(f) | Compliance::SparseInverse(_, f) => Some(f),
        }
    }

    /// `X ← A⁻¹ X` for `k` right-hand sides stored one after another, each
    /// a flat vector of the body's DOFs (`3·vertex + axis`).
    pub fn solve_in_place(&self, x: &mut [f64], k: usize) {
        let n = x.len() / k.max(1);
        let mut scratch = SparseInverseScratch::default();
        let mut b = Vec::new();
        match self {
            Compliance::Ldlt(f) => f.solve_in_place(x, k),
            Compliance::WarpedLdlt(..) => x.chunks_exact_mut(n.max(1)).for_each(|col| {
                self.in_factor_frame(col, |f, c| f.solve_in_place(c, 1));
            }),
            Compliance::Kronecker(f) => x.chunks_exact_mut(n.max(1)).for_each(|col| {
                b.clear();
                b.extend_from_slice(col);
                f.solve_interleaved::<3>(&b, col);
            }),
            Compliance::SparseInverse(s, _) => x.chunks_exact_mut(n.max(1)).for_each(|col| {
                b.clear();
                b.extend_from_slice(col);
                s.apply_many::<3>(&b, col, &mut scratch);
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ferrofem_linalg::{CsrPattern, LdltSymbolic, Ordering};

    /// A small SPD scalar matrix: a path graph's Laplacian plus a diagonal.
    fn scalar(n: usize) -> CsrMatrix {
        let rows =
            (0..n).map(|i| (i.saturating_sub(1)..(i + 2).min(n)).map(|j| j as u32).collect()).collect();
        let mut a = CsrMatrix::zeros(CsrPattern::from_rows(n, rows));
        for i in 0..n {
            for p in a.pattern.row_ptr[i]..a.pattern.row_ptr[i + 1] {
                let j = a.pattern.col_idx[p] as usize;
                a.values[p] = if i == j { 3.0 + i as f64 * 0.1 } else { -1.0 };
            }
        }
        a
    }

    fn factor(a: &CsrMatrix) -> Arc<Ldlt> {
        let s = Arc::new(LdltSymbolic::analyze(&a.pattern, Ordering::Auto, 1).unwrap());
        Arc::new(Ldlt::factorize(s, a).unwrap())
    }

    #[test]
    fn scalar_compliances_apply_the_kronecker_inverse() {
        let a = scalar(17);
        let full = Compliance::Ldlt(factor(&a.kron_identity(3)));
        let f = factor(&a);
        let others = [
            Compliance::Kronecker(f.clone()),
            Compliance::SparseInverse(Arc::new(SparseInverse::new(&f)), f.clone()),
        ];
        let b: Vec<f64> = (0..2 * 51).map(|i| ((i * 7 % 11) as f64 - 5.0) * 0.3).collect();
        let mut expected = b.clone();
        full.solve_in_place(&mut expected, 2);
        for c in &others {
            let mut x = b.clone();
            c.solve_in_place(&mut x, 2);
            let err = x.iter().zip(&expected).map(|(p, q)| (p - q).abs()).fold(0.0, f64::max);
            assert!(err < 1e-13, "{c:?}: {err:e}");
            assert!(c.factor().is_none());
        }
    }
}
