//! The unbuilt scheme (zeng2022 §3.5, Algorithm 2, eq. 21–22): `W` is never
//! formed. Per body it keeps `u_b = A_b⁻¹ H_bᵀ λ_b`, so a row block of
//! `W λ` is `h² H_b u_b`; when PGS changes a group's λ by `Δ`, one solve
//! `u_b += A_b⁻¹ H_b,αᵀ Δ` keeps `u_b` exact (Gauss-Seidel, not Jacobi).
//! The diagonal blocks come from the isodof method on the group's own rows.

use ferrofem_linalg::{CsrMatrix, CsrPattern, Ldlt};
use nalgebra::{Matrix3, Vector3};

use super::isodof::isodof;
use super::DelassusBlocks;
use crate::solver::DelassusOperator;

/// One body's share of an unbuilt `W`.
#[derive(Debug)]
pub struct UnbuiltBody<'a> {
    factor: &'a Ldlt,
    jacobian: &'a CsrMatrix,
    /// World row of each row of `jacobian`.
    rows: &'a [usize],
    u: Vec<f64>,
}

impl<'a> UnbuiltBody<'a> {
    /// A body's factor, compact `H_b` and world rows.
    pub fn new(factor: &'a Ldlt, jacobian: &'a CsrMatrix, rows: &'a [usize]) -> Self {
        UnbuiltBody { factor, jacobian, rows, u: vec![0.0; factor.symbolic().n()] }
    }

    /// `x = A⁻¹ Σᵢ cᵢ H_{rᵢ}ᵀ` for local rows `rᵢ`.
    fn solve_rows(&self, coefficients: impl Iterator<Item = (usize, f64)>) -> Vec<f64> {
        let (hp, mut x) = (&self.jacobian.pattern, vec![0.0; self.u.len()]);
        for (r, c) in coefficients {
            for p in hp.row_ptr[r]..hp.row_ptr[r + 1] {
                x[hp.col_idx[p] as usize] += c * self.jacobian.values[p];
            }
        }
        self.factor.solve_in_place(&mut x, 1);
        x
    }

    fn row_dot(&self, r: usize) -> f64 {
        let hp = &self.jacobian.pattern;
        (hp.row_ptr[r]..hp.row_ptr[r + 1])
            .map(|p| self.jacobian.values[p] * self.u[hp.col_idx[p] as usize])
            .sum()
    }

    /// `W_αα` contribution of the group whose first local row is `r`.
    fn diagonal_block(&self, r: usize) -> Matrix3<f64> {
        let hp = &self.jacobian.pattern;
        let rows = (r..r + 3).map(|i| hp.col_idx[hp.row_ptr[i]..hp.row_ptr[i + 1]].to_vec()).collect();
        let sub = CsrMatrix {
            pattern: CsrPattern::from_rows(hp.ncols, rows),
            values: self.jacobian.values[hp.row_ptr[r]..hp.row_ptr[r + 3]].to_vec(),
        };
        Matrix3::from_row_slice(isodof(self.factor, &sub, &mut Default::default(), 1.0).0)
    }
}

/// `W = h² Σ_b H_b A_b⁻¹ H_bᵀ` applied without being formed, plus an
/// optional assembled part from bodies whose `W_b` was built.
#[derive(Debug)]
pub struct MixedDelassus<'a> {
    assembled: Option<&'a DelassusBlocks>,
    bodies: Vec<UnbuiltBody<'a>>,
    /// Per world row: (body, local row) of its unbuilt owners.
    owners: Vec<Vec<(usize, usize)>>,
    h2: f64,
}

impl<'a> MixedDelassus<'a> {
    /// `assembled` is the built part (by blocks) if any; `bodies`
    /// are the unbuilt ones; `lambda` is the warm start.
    pub fn new(
        c: usize,
        assembled: Option<&'a DelassusBlocks>,
        mut bodies: Vec<UnbuiltBody<'a>>,
        h: f64,
        lambda: &[f64],
    ) -> Self {
        let mut owners = vec![Vec::new(); c];
        for (b, body) in bodies.iter_mut().enumerate() {
            body.rows.iter().enumerate().for_each(|(local, &r)| owners[r].push((b, local)));
            body.u = body.solve_rows(body.rows.iter().enumerate().map(|(local, &r)| (local, lambda[r])));
        }
        MixedDelassus { assembled, bodies, owners, h2: h * h }
    }
}

impl DelassusOperator for MixedDelassus<'_> {
    fn rows(&self) -> usize {
        self.owners.len()
    }

    fn diagonal_block(&self, r0: usize) -> Matrix3<f64> {
        let built = self.assembled.map_or(Matrix3::zeros(), |w| w.diagonal_block(r0));
        self.owners[r0]
            .iter()
            .fold(built, |acc, &(b, local)| acc + self.h2 * self.bodies[b].diagonal_block(local))
    }

    fn rows_times(&self, r0: usize, lambda: &[f64]) -> Vector3<f64> {
        let built = self.assembled.map_or(Vector3::zeros(), |w| w.rows_times(r0, lambda));
        Vector3::from_fn(|i, _| {
            built[i]
                + self.owners[r0 + i]
                    .iter()
                    .map(|&(b, local)| self.h2 * self.bodies[b].row_dot(local))
                    .sum::<f64>()
        })
    }

    fn changed(&mut self, r0: usize, delta: &Vector3<f64>) {
        for k in 0..self.owners[r0].len() {
            let (b, local) = self.owners[r0][k];
            let body = &self.bodies[b];
            let du = body.solve_rows((0..3).map(|i| (local + i, delta[i])));
            self.bodies[b].u.iter_mut().zip(&du).for_each(|(u, d)| *u += d);
        }
    }
}
