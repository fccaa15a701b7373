//! `W` kept apart by body: `W = Σ_b P_b W_b P_bᵀ` (zeng2022 eq. 12 without
//! the sum), each `W_b = h² H_b A_b⁻¹ H_bᵀ` over its body's own rows. A
//! pile of bodies in contact is one block of coupled groups, yet a group's
//! rows couple only with the rows of the bodies it touches: PGS reads
//! `Σ_b n_b²` entries a sweep instead of the block's `n²` (`n` its rows),
//! and the block is never assembled (zeng2022 Fig. 13's pile of tori: 40 %
//! of the entries, and half of `build_delassus`).

use ferrofem_linalg::simd::Stored;
use nalgebra::{Matrix3, Vector3};

use crate::solver::DelassusOperator;

/// PGS reads a `W` kept apart when its bodies' parts hold at most this
/// share of the entries the assembled blocks would (one thread sweeps the
/// parts where two share an assembled block's rows).
pub const APART_SHARE: f64 = 0.5;

/// Whether `W` is worth keeping apart: the bodies' parts (`body_rows`,
/// rows per body) against the assembled blocks (`block_rows`, rows per
/// block of coupled groups), by the entries each stores.
pub fn worth_keeping_apart(
    body_rows: impl Iterator<Item = usize>,
    block_rows: impl Iterator<Item = usize>,
) -> bool {
    let square = |n: usize| (n * n) as f64;
    body_rows.map(square).sum::<f64>() <= APART_SHARE * block_rows.map(square).sum::<f64>()
}

/// One body's part: `W_b` over its rows and λ on those rows.
#[derive(Debug)]
struct Part<'a> {
    /// `W_b`, row-major `n × n` (already scaled by `h²`).
    w: &'a [f64],
    n: usize,
    lambda: Vec<f64>,
}

/// `W` as its bodies' parts, for PGS ([`DelassusOperator`]).
#[derive(Debug)]
pub struct ApartDelassus<'a> {
    parts: Vec<Part<'a>>,
    /// Per group: (part, first local row) of each side that touches a body
    /// (a self-contact lists its body twice).
    owners: Vec<Vec<(usize, usize)>>,
}

impl<'a> ApartDelassus<'a> {
    /// The parts `(W_b, world rows of W_b's rows)` over `c` world rows,
    /// with `lambda` the warm start. Each body's rows come three at a time,
    /// a group's in order (as [`crate::constraint::BodyRows`] lists them).
    pub fn new(c: usize, bodies: impl Iterator<Item = (&'a [f64], &'a [usize])>, lambda: &[f64]) -> Self {
        let mut owners = vec![Vec::new(); c / 3];
        let parts = bodies
            .enumerate()
            .map(|(p, (w, rows))| {
                let n = rows.len();
                assert_eq!(w.len(), n * n, "a body's W_b covers its rows");
                for (l, group) in rows.chunks_exact(3).enumerate() {
                    assert!(group[0] % 3 == 0 && group[1] == group[0] + 1 && group[2] == group[0] + 2);
                    owners[group[0] / 3].push((p, 3 * l));
                }
                Part { w, n, lambda: rows.iter().map(|&r| lambda[r]).collect() }
            })
            .collect();
        ApartDelassus { parts, owners }
    }

    fn row(&self, p: usize, l: usize) -> &[f64] {
        let part = &self.parts[p];
        &part.w[l * part.n..(l + 1) * part.n]
    }
}

impl DelassusOperator for ApartDelassus<'_> {
    fn rows(&self) -> usize {
        3 * self.owners.len()
    }

    /// `Σ` over every pair of the group's sides on one body of `W_b`'s
    /// block between them (a self-contact's two sides couple).
    fn diagonal_block(&self, r0: usize) -> Matrix3<f64> {
        let owners = &self.owners[r0 / 3];
        let mut block = Matrix3::zeros();
        for &(p, l) in owners {
            for &(_, m) in owners.iter().filter(|(q, _)| *q == p) {
                block += Matrix3::from_fn(|i, j| self.row(p, l + i)[m + j]);
            }
        }
        block
    }

    fn rows_times(&self, r0: usize, _lambda: &[f64]) -> Vector3<f64> {
        self.owners[r0 / 3].iter().fold(Vector3::zeros(), |acc, &(p, l)| {
            let d = f64::dot4(
                [self.row(p, l), self.row(p, l + 1), self.row(p, l + 2), self.row(p, l + 2)],
                &self.parts[p].lambda,
            );
            acc + Vector3::new(d[0], d[1], d[2])
        })
    }

    fn changed(&mut self, r0: usize, delta: &Vector3<f64>) {
        for &(p, l) in &self.owners[r0 / 3] {
            let lambda = &mut self.parts[p].lambda;
            (0..3).for_each(|i| lambda[l + i] += delta[i]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::solver::AssembledDelassus;

    /// Two bodies' parts and a self-contact against the assembled `W`:
    /// the same diagonal blocks and products, λ's changes followed.
    #[test]
    fn parts_act_as_the_assembled_sum() {
        // Groups 0, 1, 2 (9 world rows): body A holds groups 0 and 1, body
        // B groups 1 and 2 and group 2 a second time (a self-contact).
        let rows_a: Vec<usize> = (0..6).collect();
        let rows_b: Vec<usize> = [3, 4, 5, 6, 7, 8, 6, 7, 8].into();
        let spd = |n: usize, seed: f64| -> Vec<f64> {
            let m: Vec<f64> = (0..n * n).map(|k| ((k as f64 + seed) * 0.37).sin()).collect();
            (0..n * n)
                .map(|k| {
                    let (i, j) = (k / n, k % n);
                    (0..n).map(|t| m[i * n + t] * m[j * n + t]).sum::<f64>() + if i == j { 1.0 } else { 0.0 }
                })
                .collect()
        };
        let (wa, wb) = (spd(6, 1.0), spd(9, 2.0));
        let mut dense = vec![0.0; 81];
        for (w, rows) in [(&wa, &rows_a), (&wb, &rows_b)] {
            let n = rows.len();
            for i in 0..n {
                for j in 0..n {
                    dense[rows[i] * 9 + rows[j]] += w[i * n + j];
                }
            }
        }
        let mut lambda: Vec<f64> = (0..9).map(|k| 0.1 * k as f64 - 0.3).collect();
        let parts = [(wa.as_slice(), rows_a.as_slice()), (wb.as_slice(), rows_b.as_slice())];
        let mut apart = ApartDelassus::new(9, parts.into_iter(), &lambda);
        let assembled = AssembledDelassus(&dense);
        assert_eq!(apart.rows(), 9);
        for step in 0..2 {
            for r0 in [0, 3, 6] {
                let (a, b) = (apart.diagonal_block(r0), assembled.diagonal_block(r0));
                assert!((a - b).norm() < 1e-12 * b.norm(), "block {r0}: {a} against {b}");
                let (a, b) = (apart.rows_times(r0, &lambda), assembled.rows_times(r0, &lambda));
                assert!((a - b).norm() < 1e-12 * b.norm(), "step {step}, rows {r0}: {a} against {b}");
            }
            let delta = Vector3::new(0.5, -0.25, 0.125);
            (0..3).for_each(|i| lambda[6 + i] += delta[i]);
            apart.changed(6, &delta);
        }
    }

    #[test]
    fn a_pile_is_kept_apart_and_a_chain_of_two_is_not() {
        // Ten bodies of 300 rows, each row on two bodies: one block of 1,500.
        assert!(worth_keeping_apart([300; 10].into_iter(), [1_500].into_iter()));
        // Two bodies sharing all their rows: the parts are twice the block.
        assert!(!worth_keeping_apart([90, 90].into_iter(), [90].into_iter()));
    }
}
