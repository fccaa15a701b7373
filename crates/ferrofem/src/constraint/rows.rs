//! Each body's rows of `H` (compact `H_b`, c_b × n_b) and what the
//! constraint forces do to it: `Hᵀ λ` and the correction `A⁻¹ Hᵀ λ`
//! (zeng2022 eq. 17).

use std::sync::Arc;

use ferrofem_linalg::{CsrMatrix, Ldlt, Precision};

use super::jacobian::{clear_rows, path_terms, push_path, push_point};
use super::{Compliance, ConstraintJacobian, Group};
use crate::delassus::DelassusWorkspace;

/// One body's share of the constraint problem, reused from step to step.
#[derive(Debug)]
pub struct BodyRows {
    /// Compact `H_b`: the rows of the world's groups that touch this body.
    pub jacobian: CsrMatrix,
    /// World row index of each row of `jacobian`.
    pub rows: Vec<usize>,
    /// `H_b G`, the rows in the frame of a warped factor
    /// ([`Compliance::factor_frame`], written by `build_delassus`).
    pub factor_rows: CsrMatrix,
    /// `H_bᵀ λ` per DOF (N), zero when no constraint acts on the body.
    pub forces: Vec<f64>,
    /// Buffers, isodof cache and record of this body's Delassus build.
    pub delassus: DelassusWorkspace,
    /// This body's rows of λ (scratch of the correction).
    lambda: Vec<f64>,
    /// `D^{-1/2} L⁻¹ P Hᵀλ` from the cached isodof columns (scratch of the
    /// correction), and its three axes for a scalar factor.
    forward: Vec<[f64; 1]>,
    forward3: Vec<[f64; 3]>,
}

impl BodyRows {
    /// Empty rows for a body of `dofs` DOFs.
    pub fn new(dofs: usize) -> Self {
        BodyRows {
            jacobian: ConstraintJacobian::new(dofs).to_csr(),
            rows: Vec::new(),
            factor_rows: ConstraintJacobian::new(dofs).to_csr(),
            forces: vec![0.0; dofs],
            delassus: DelassusWorkspace::default(),
            lambda: Vec::new(),
            forward: Vec::new(),
            forward3: Vec::new(),
        }
    }

    /// Collects `H_b` from the points of body `b` in `groups`; clears the
    /// forces and the last Delassus record.
    pub fn assemble(&mut self, b: usize, groups: &[Group]) {
        self.collect(b, groups);
        self.forces.iter_mut().for_each(|f| *f = 0.0);
        self.delassus.record = None;
    }

    /// Collects `H_b` from the points of body `b` in `groups`, along each
    /// group's frame (again after a re-linearization).
    pub fn collect(&mut self, b: usize, groups: &[Group]) {
        clear_rows(&mut self.jacobian);
        self.rows.clear();
        for (k, g) in groups.iter().enumerate() {
            for (_, pts) in g.parts().iter().filter(|(body, _)| *body == b) {
                match g.path() {
                    [] => push_point(&mut self.jacobian, pts, g.frame),
                    path => push_path(&mut self.jacobian, path_terms(path, &|v| v)),
                }
                self.rows.extend([3 * k, 3 * k + 1, 3 * k + 2]);
            }
        }
    }

    /// Whether any constraint row touches the body.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// Stores `H_bᵀ λ_b` in `forces` (N per DOF), `λ_b` this body's rows
    /// of the world's `impulses`.
    pub fn set_forces(&mut self, impulses: &[f64]) {
        self.lambda.clear();
        self.lambda.extend(self.rows.iter().map(|&r| impulses[r]));
        transpose_times(&self.jacobian, &self.lambda, &mut self.forces);
    }

    /// The correction (zeng2022 eq. 17, without its factor `h`): stores
    /// `H_bᵀ λ_b` in `forces` (N per DOF) and returns `A⁻¹ H_bᵀ λ_b` in
    /// `out`, with the compliance that built `W`. When `W` came from the
    /// isodof columns `L⁻¹ P Īᵀ` of this factor (isodof or its cache; for
    /// `A = A_s ⊗ I₃`, the scalar factor's columns at the touched vertices,
    /// three axes at once), they give the forward half of the solve, and
    /// only the backward sweep runs. A warped factor (an old factor standing
    /// in for the current `A`, the real-time preset) is read in its
    /// single-precision copy when it keeps one: half the bytes, the exact
    /// solve with the rounded factor, within about 1e-7 of `W`'s compliance,
    /// far inside what the warp already approximates.
    pub fn correction(&mut self, compliance: &Compliance, impulses: &[f64], out: &mut Vec<f64>) {
        self.set_forces(impulses);
        out.clear();
        out.extend_from_slice(&self.forces);
        if let Some(f) = compliance.scalar_factor() {
            if self.delassus.forward::<3>(f, &self.forces, &mut self.forward3) {
                return f.solve_from_forward::<3>(&mut self.forward3, out);
            }
        }
        if compliance.factor().is_none() {
            return compliance.solve_in_place(out, 1);
        }
        let (delassus, forward) = (&self.delassus, &mut self.forward);
        let warped = compliance.warp().is_some();
        compliance.in_factor_frame(out, |f, x| {
            let precision = if warped { f.lightest_precision() } else { Precision::Double };
            if delassus.forward(f, x, forward) {
                f.solve_from_forward_in(forward, x, precision);
            } else {
                f.solve_one_in(x, precision);
            }
        });
    }

    /// The vertices the rows touch (sorted): for `A = A_s ⊗ I₃`, the
    /// scalar factor's DOFs of the isodof columns.
    pub fn vertices(&self) -> Vec<usize> {
        let mut v: Vec<usize> = self.jacobian.pattern.col_idx.iter().map(|&d| d as usize / 3).collect();
        v.sort_unstable();
        v.dedup();
        v
    }

    /// `x = A⁻¹ b` at the rows' vertices from the forward half `z` of
    /// the solve ([`Ldlt::forward_interleaved3`]) by the isodof columns
    /// of scalar factor `f` that built `W` (zeng2025 Algorithm 4's
    /// `J Sᵀ (S g)`): written into `x` (three per vertex) at every vertex
    /// the columns hold; `false` (and `x` untouched) without such columns.
    pub fn gather(&self, f: &Arc<Ldlt>, z: &[[f64; 4]], x: &mut [f64]) -> bool {
        let Some(columns) = self.delassus.columns_covering(f, &self.vertices()) else { return false };
        for g in columns {
            g.gather(f, z, |v, val| x[3 * v..3 * v + 3].copy_from_slice(&val[..3]));
        }
        true
    }

    /// The folded correction's forward half: `forces = H_bᵀ Δλ_b` and
    /// `z += scale · D^{-1/2} L⁻¹ P H_bᵀ Δλ_b` from the isodof columns of
    /// scalar factor `f` (three axes padded to four lanes); `false` without
    /// such columns.
    pub fn add_forward(&mut self, f: &Arc<Ldlt>, impulses: &[f64], scale: f64, z: &mut [[f64; 4]]) -> bool {
        self.set_forces(impulses);
        let Some(columns) = self.delassus.columns_covering(f, &self.vertices()) else { return false };
        let u = &self.forces;
        for g in columns {
            g.add_forward(f, |v| [scale * u[3 * v], scale * u[3 * v + 1], scale * u[3 * v + 2], 0.0], z);
        }
        true
    }
}

/// `out = Hᵀ λ` for a compact Jacobian.
pub fn transpose_times(h: &CsrMatrix, lambda: &[f64], out: &mut [f64]) {
    out.iter_mut().for_each(|f| *f = 0.0);
    for (r, l) in lambda.iter().enumerate() {
        for p in h.pattern.row_ptr[r]..h.pattern.row_ptr[r + 1] {
            out[h.pattern.col_idx[p] as usize] += h.values[p] * l;
        }
    }
}
