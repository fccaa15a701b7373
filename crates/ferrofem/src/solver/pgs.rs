//! Projected Gauss-Seidel over constraint groups (zeng2022 eq. 16): for
//! each group α, `d_α = δ_free,α + Σ_{β≠α} W_αβ λ_β` with the newest λ, then
//! the group's local law; stop when the relative change of λ falls under a
//! tolerance or after `max_iterations` sweeps. Warm-started from the λ given.

use ferrofem_linalg::simd::Stored;
use ferrofem_linalg::Precision;
use nalgebra::{Matrix3, Vector3};
use serde::{Deserialize, Serialize};

use super::coulomb::resolve_contact;

mod pipelined;

use crate::constraint::ConstraintGroup;

/// When PGS stops.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct PgsSettings {
    /// Upper bound on sweeps.
    pub max_iterations: usize,
    /// Stop when `‖λ⁽ⁱ⁾ − λ⁽ⁱ⁻¹⁾‖∞ ≤ tolerance · ‖λ⁽ⁱ⁾‖∞`.
    pub tolerance: f64,
    /// The precision the sweeps read an assembled `W`'s rows in: `single`
    /// reads an f32 copy (half the bytes of every sweep; the diagonal
    /// blocks, λ and all arithmetic stay f64), `bfloat16` a bfloat16 copy
    /// (a quarter: quicker where the f32 copy outgrows the last-level
    /// cache, the forces within a few times 2⁻⁹ of double precision's).
    pub precision: Precision,
}

impl Default for PgsSettings {
    fn default() -> Self {
        PgsSettings { max_iterations: 200, tolerance: 1e-8, precision: Precision::Double }
    }
}

impl PgsSettings {
    /// Sweeps at most `max_iterations`, to `tolerance`, reading `W` in double precision.
    pub fn new(max_iterations: usize, tolerance: f64) -> Self {
        PgsSettings { max_iterations, tolerance, ..Default::default() }
    }
}

/// What a PGS solve did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct PgsSolve {
    /// Sweeps performed.
    pub iterations: usize,
    /// Final relative change of λ.
    pub error: f64,
    /// Whether the sweeps ended by meeting the tolerance (else by the cap).
    pub converged: bool,
}

impl PgsSolve {
    /// The figures after sweep `iterations`, whose largest change of an
    /// impulse was `change` beside a largest impulse `size`.
    pub fn after(iterations: usize, change: f64, size: f64, tolerance: f64) -> Self {
        let error = if size > 0.0 { change / size } else { change };
        PgsSolve { iterations, error, converged: error <= tolerance }
    }
}

/// Projected Gauss-Seidel on a dense Delassus operator.
#[derive(Debug, Clone, Copy, Default)]
pub struct Pgs {
    /// Stopping rule.
    pub settings: PgsSettings,
}

/// The Delassus operator as PGS uses it: its diagonal 3×3 blocks and its
/// row blocks times λ. An assembled `W` answers from memory; an unbuilt one
/// (zeng2022 §3.5) applies `H A⁻¹ Hᵀ` through the factor and is told when
/// λ changes.
pub trait DelassusOperator {
    /// Number of rows.
    fn rows(&self) -> usize;
    /// `W_αα` of the group whose rows start at `r0`.
    fn diagonal_block(&self, r0: usize) -> Matrix3<f64>;
    /// `(W λ)` on rows `r0..r0 + 3`.
    fn rows_times(&self, r0: usize, lambda: &[f64]) -> Vector3<f64>;
    /// λ on rows `r0..r0 + 3` changed by `delta`.
    fn changed(&mut self, _r0: usize, _delta: &Vector3<f64>) {}
}

/// An assembled `W`, row-major `c × c`.
#[derive(Debug, Clone, Copy)]
pub struct AssembledDelassus<'a>(pub &'a [f64]);

impl DelassusOperator for AssembledDelassus<'_> {
    fn rows(&self) -> usize {
        (self.0.len() as f64).sqrt().round() as usize
    }

    fn diagonal_block(&self, r0: usize) -> Matrix3<f64> {
        let c = self.rows();
        Matrix3::from_fn(|i, j| self.0[(r0 + i) * c + r0 + j])
    }

    fn rows_times(&self, r0: usize, lambda: &[f64]) -> Vector3<f64> {
        group_rows_times(self.0, self.rows(), r0, lambda)
    }
}

/// `W` by blocks of coupled groups: a group's rows read from its block.
impl DelassusOperator for crate::delassus::DelassusBlocks {
    fn rows(&self) -> usize {
        self.world_rows()
    }

    fn diagonal_block(&self, r0: usize) -> Matrix3<f64> {
        Matrix3::from_fn(|i, j| self.entry(r0 + i, r0 + j))
    }

    fn rows_times(&self, r0: usize, lambda: &[f64]) -> Vector3<f64> {
        Vector3::from(self.group_times(r0, lambda))
    }
}

/// `(W λ)` on rows `r0..r0 + 3` of a row-major `c × c` `W` stored in `P`:
/// the group's three rows in one pass over λ (the fourth column of the
/// four-column product repeats the third).
fn group_rows_times<P: Stored>(w: &[P], c: usize, r0: usize, lambda: &[f64]) -> Vector3<f64> {
    let row = |i: usize| &w[(r0 + i) * c..(r0 + i + 1) * c];
    let d = P::dot4([row(0), row(1), row(2), row(2)], lambda);
    Vector3::new(d[0], d[1], d[2])
}

/// What PGS keeps from solve to solve, so that a steady state allocates
/// nothing once it has grown.
#[derive(Debug, Clone, Default)]
pub struct PgsScratch {
    /// Diagonal blocks `(r0, W_αα)` of the groups.
    blocks: Vec<(usize, Matrix3<f64>)>,
    /// The pipelined sweep's two buffers of upper sums and its lanes of lower sums.
    sums: Vec<f64>,
}

impl PgsScratch {
    /// The diagonal blocks' buffer, for [`Pgs::solve_in`].
    pub fn blocks(&mut self) -> &mut Vec<(usize, Matrix3<f64>)> {
        &mut self.blocks
    }
}

/// A group's λ from its local problem `δ = d + W_αα λ` under its law.
fn group_update(law: &ConstraintGroup, waa: &Matrix3<f64>, d: &Vector3<f64>) -> Vector3<f64> {
    match law {
        ConstraintGroup::Contact { mu } => resolve_contact(waa, d, *mu).0,
        ConstraintGroup::Attachment => waa.cholesky().map_or(Vector3::zeros(), |ch| ch.solve(&(-d))),
        ConstraintGroup::Shaft { bound } => resolve_shaft(waa, d, *bound),
        ConstraintGroup::Cable if waa[(0, 0)] > 0.0 => Vector3::new(-d.x / waa[(0, 0)], 0.0, 0.0),
        ConstraintGroup::Cable => Vector3::zeros(),
    }
}

/// A shaft point's λ: the attachment's where its friction stays within
/// `bound`; otherwise the friction at `±bound` against the slip and the two
/// rows across the shaft closed with it held.
fn resolve_shaft(waa: &Matrix3<f64>, d: &Vector3<f64>, bound: f64) -> Vector3<f64> {
    let Some(ch) = waa.cholesky() else { return Vector3::zeros() };
    let mut lambda = ch.solve(&(-d));
    if lambda.x.abs() <= bound {
        return lambda;
    }
    lambda.x = bound.copysign(lambda.x);
    let across = nalgebra::Matrix2::new(waa[(1, 1)], waa[(1, 2)], waa[(2, 1)], waa[(2, 2)]);
    let rhs = -nalgebra::Vector2::new(d.y + waa[(1, 0)] * lambda.x, d.z + waa[(2, 0)] * lambda.x);
    let l = across.cholesky().map_or(nalgebra::Vector2::zeros(), |c| c.solve(&rhs));
    Vector3::new(lambda.x, l.x, l.y)
}

/// The diagonal blocks `(r0, W_αα)` of the groups, in `blocks`.
fn diagonal_blocks(
    w: &impl DelassusOperator,
    groups: &[ConstraintGroup],
    blocks: &mut Vec<(usize, Matrix3<f64>)>,
) {
    blocks.clear();
    blocks.extend(groups.iter().scan(0, |r, g| {
        let r0 = *r;
        *r += g.rows();
        Some((r0, w.diagonal_block(r0)))
    }));
}

impl Pgs {
    /// Solves `δ = δ_free + W λ` under the groups' laws; `w` is `c×c`
    /// row-major, `lambda` holds the warm start and receives the result.
    pub fn solve(&self, w: &[f64], free: &[f64], groups: &[ConstraintGroup], lambda: &mut [f64]) -> PgsSolve {
        assert_eq!(w.len(), free.len() * free.len(), "W must be c×c");
        self.solve_assembled(w, w, free, groups, lambda, &mut PgsScratch::default())
    }

    /// As [`Self::solve`] on an assembled, symmetric `W` (`double`, row-major
    /// `c × c`) whose off-diagonal rows the sweeps read from `rows` (`W`
    /// itself or its `f32` copy), with its buffers in `scratch`:
    /// the sweeps of [`Self::solve_in`] in the same order, their upper sums
    /// formed by a second thread when the pool has one (results do not
    /// depend on the thread count).
    pub fn solve_assembled<P: Stored>(
        &self,
        rows: &[P],
        double: &[f64],
        free: &[f64],
        groups: &[ConstraintGroup],
        lambda: &mut [f64],
        scratch: &mut PgsScratch,
    ) -> PgsSolve {
        diagonal_blocks(&AssembledDelassus(double), groups, &mut scratch.blocks);
        pipelined::solve(self, rows, free, groups, &scratch.blocks, &mut scratch.sums, lambda)
    }

    /// As [`Self::solve`], for any form of `W`.
    pub fn solve_with(
        &self,
        w: &mut impl DelassusOperator,
        free: &[f64],
        groups: &[ConstraintGroup],
        lambda: &mut [f64],
    ) -> PgsSolve {
        self.solve_in(w, free, groups, lambda, &mut Vec::new())
    }

    /// As [`Self::solve_with`], keeping the diagonal blocks `W_αα` in
    /// `blocks` (scratch reused from step to step: no allocation once grown).
    pub fn solve_in(
        &self,
        w: &mut impl DelassusOperator,
        free: &[f64],
        groups: &[ConstraintGroup],
        lambda: &mut [f64],
        blocks: &mut Vec<(usize, Matrix3<f64>)>,
    ) -> PgsSolve {
        assert_eq!(w.rows(), free.len(), "W must be c×c");
        let mut out = PgsSolve::default();
        diagonal_blocks(w, groups, blocks);
        for it in 1..=self.settings.max_iterations.max(1) {
            let (mut change, mut size) = (0.0f64, 0.0f64);
            for (g, &(r0, waa)) in groups.iter().zip(blocks.iter()) {
                let coupled = w.rows_times(r0, lambda);
                let d = Vector3::from_fn(|i, _| {
                    let own: f64 = (0..3).map(|j| waa[(i, j)] * lambda[r0 + j]).sum();
                    free[r0 + i] + coupled[i] - own
                });
                let new = group_update(g, &waa, &d);
                let delta = Vector3::from_fn(|i, _| new[i] - lambda[r0 + i]);
                for i in 0..3 {
                    change = change.max(delta[i].abs());
                    size = size.max(new[i].abs());
                    lambda[r0 + i] = new[i];
                }
                if delta != Vector3::zeros() {
                    w.changed(r0, &delta);
                }
            }
            out = PgsSolve::after(it, change, size, self.settings.tolerance);
            if out.converged {
                break;
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A particle of mass m resting on two planes: W = (1/m) Hᵀ-coupled.
    #[test]
    fn two_contacts_share_a_load_as_statics_says() {
        // One particle (3 DOFs, unit inverse mass) touching a floor (normal +z)
        // and a wall (normal +x); each contact's frame rows are (n, t1, t2).
        let frames = [
            [[0.0, 0.0, 1.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]],
            [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]],
        ];
        let rows: Vec<[f64; 3]> = frames.iter().flatten().copied().collect();
        let c = rows.len();
        let w: Vec<f64> = (0..c * c)
            .map(|k| {
                let (a, b) = (rows[k / c], rows[k % c]);
                a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
            })
            .collect();
        // Free motion pushes into both planes and along y: v_free = (−1, 0.5, −2).
        let v = [-1.0, 0.5, -2.0];
        let free: Vec<f64> = rows.iter().map(|r| r[0] * v[0] + r[1] * v[1] + r[2] * v[2]).collect();
        let groups = [ConstraintGroup::Contact { mu: 0.0 }, ConstraintGroup::Contact { mu: 0.0 }];
        let mut lambda = vec![0.0; c];
        let s = Pgs::default().solve(&w, &free, &groups, &mut lambda);
        // Frictionless: the floor cancels v_z, the wall v_x; v_y is untouched.
        assert!((lambda[0] - 2.0).abs() < 1e-10 && (lambda[3] - 1.0).abs() < 1e-10, "{lambda:?}");
        assert!(lambda.iter().enumerate().all(|(i, l)| i % 3 == 0 || l.abs() < 1e-12));
        assert!(s.iterations <= 3);
        // With friction μ = 1 on the floor: the y-motion 0.5 is stopped (|λ_t| = 0.5 ≤ 2).
        let groups = [ConstraintGroup::Contact { mu: 1.0 }, ConstraintGroup::Contact { mu: 0.0 }];
        let mut lambda = vec![0.0; c];
        Pgs::default().solve(&w, &free, &groups, &mut lambda);
        assert!((lambda[2] + 0.5).abs() < 1e-10 && (lambda[0] - 2.0).abs() < 1e-10, "{lambda:?}");
        // μ = 0.1 on the floor: it slips, |λ_t| = μ λ_n = 0.2 against the motion.
        let groups = [ConstraintGroup::Contact { mu: 0.1 }, ConstraintGroup::Contact { mu: 0.0 }];
        let mut lambda = vec![0.0; c];
        Pgs::default().solve(&w, &free, &groups, &mut lambda);
        assert!((lambda[2] + 0.2).abs() < 1e-10, "{lambda:?}");
        // Separation: moving away from both planes gives λ = 0.
        let away: Vec<f64> = free.iter().map(|x| -x).collect();
        let mut lambda = vec![1.0; c];
        Pgs::default().solve(&w, &away, &[ConstraintGroup::Contact { mu: 0.5 }; 2], &mut lambda);
        assert!(lambda.iter().all(|l| *l == 0.0));
    }

    #[test]
    fn attachment_closes_its_gap() {
        let w = [2.0, 0.5, 0.0, 0.5, 1.0, 0.1, 0.0, 0.1, 3.0];
        let free = [0.3, -0.2, 0.7];
        let mut lambda = [0.0; 3];
        Pgs::default().solve(&w, &free, &[ConstraintGroup::Attachment], &mut lambda);
        for i in 0..3 {
            let gap: f64 = free[i] + (0..3).map(|j| w[i * 3 + j] * lambda[j]).sum::<f64>();
            assert!(gap.abs() < 1e-12);
        }
    }

    /// The row sweep's single-precision operator, the reference the
    /// pipelined sweep replaced: an assembled `W` whose full rows are read
    /// from an f32 copy, its diagonal blocks from the f64 `double`.
    struct SingleDelassus<'a> {
        single: &'a [f32],
        double: &'a [f64],
    }

    impl DelassusOperator for SingleDelassus<'_> {
        fn rows(&self) -> usize {
            AssembledDelassus(self.double).rows()
        }

        fn diagonal_block(&self, r0: usize) -> Matrix3<f64> {
            AssembledDelassus(self.double).diagonal_block(r0)
        }

        fn rows_times(&self, r0: usize, lambda: &[f64]) -> Vector3<f64> {
            group_rows_times(self.single, self.rows(), r0, lambda)
        }
    }

    /// `W = J Jᵀ + 10⁻³ I` for `groups_n` contacts on 30 particles (3 DOFs
    /// each, unit mass), each contact on two particles: dense-ish coupling,
    /// as a body's `W`; free gaps pushing most contacts in, some sliding.
    fn coupled_contacts(groups_n: usize) -> (Vec<f64>, Vec<f64>) {
        let dofs = 90;
        let j: Vec<Vec<f64>> = (0..3 * groups_n)
            .map(|r| {
                let (g, d) = (r / 3, r % 3);
                let mut row = vec![0.0; dofs];
                for (p, w) in [(g % 30, 0.7), ((g * 7 + 3) % 30, 0.3)] {
                    row[3 * p + d] += w;
                    row[3 * p + (d + 1) % 3] += 0.1 * w;
                }
                row
            })
            .collect();
        let c = 3 * groups_n;
        let w: Vec<f64> = (0..c * c)
            .map(|k| {
                j[k / c].iter().zip(&j[k % c]).map(|(a, b)| a * b).sum::<f64>()
                    + if k / c == k % c { 1e-3 } else { 0.0 }
            })
            .collect();
        let free: Vec<f64> = (0..c)
            .map(|r| if r % 3 == 0 { -0.01 * (1.0 + (r % 7) as f64) } else { 0.004 * ((r % 5) as f64 - 2.0) })
            .collect();
        (w, free)
    }

    /// The largest difference of two λ relative to the largest entry of the first.
    fn relative_difference(a: &[f64], b: &[f64]) -> f64 {
        let scale = a.iter().fold(0.0f64, |m, x| m.max(x.abs()));
        a.iter().zip(b).map(|(x, y)| (x - y).abs()).fold(0.0, f64::max) / scale
    }

    #[test]
    fn pipelined_sweeps_are_the_row_sweeps() {
        // 70 groups: above the size at which the sweeps take a second thread;
        // a fixed 40 sweeps (tolerance 0), stick, slip and separation mixed.
        let (w, free) = coupled_contacts(70);
        let c = free.len();
        let groups: Vec<_> =
            (0..70).map(|g| ConstraintGroup::Contact { mu: [0.05, 0.3, 1.0][g % 3] }).collect();
        let pgs = Pgs { settings: PgsSettings::new(40, 0.0) };
        let single_w: Vec<f32> = w.iter().map(|&x| x as f32).collect();
        let warm: Vec<f64> = (0..c).map(|r| if r % 3 == 0 { 0.002 } else { 0.0 }).collect();
        let (mut rows, mut pipelined) = (warm.clone(), warm.clone());
        let a = pgs.solve_in(&mut AssembledDelassus(&w), &free, &groups, &mut rows, &mut Vec::new());
        let b = pgs.solve_assembled(&w, &w, &free, &groups, &mut pipelined, &mut PgsScratch::default());
        assert_eq!((a.iterations, b.iterations), (40, 40));
        let diff = relative_difference(&rows, &pipelined);
        assert!(diff < 1e-12, "double: {diff:e}");
        // In single precision the row sweep reads the diagonal block rounded
        // inside its full row and takes it back out in double; the pipelined
        // sweep never reads it there, so it is the nearer to the double λ.
        let double = pipelined;
        let (mut rows, mut pipelined) = (warm.clone(), warm);
        let mut op = SingleDelassus { single: &single_w, double: &w };
        pgs.solve_in(&mut op, &free, &groups, &mut rows, &mut Vec::new());
        pgs.solve_assembled(&single_w, &w, &free, &groups, &mut pipelined, &mut PgsScratch::default());
        let (by_rows, by_pipeline) =
            (relative_difference(&double, &rows), relative_difference(&double, &pipelined));
        assert!(by_pipeline < 1e-5 && by_pipeline <= by_rows, "single: {by_pipeline:e} against {by_rows:e}");
        // The contacts took every branch of their law.
        let states: Vec<_> = (0..70)
            .map(|g| {
                let r = 3 * g;
                let (n, t) = (pipelined[r], pipelined[r + 1].hypot(pipelined[r + 2]));
                if n == 0.0 {
                    0
                } else if t < 0.999 * [0.05, 0.3, 1.0][g % 3] * n {
                    1
                } else {
                    2
                }
            })
            .collect();
        assert!((0..3).all(|s| states.contains(&s)), "{states:?}");
    }

    #[test]
    fn pipelined_sweeps_do_not_depend_on_the_thread_count() {
        // 400 groups: up to twelve scatterers' ranges; from three on (five
        // threads) the lower sums are formed in lanes. W's rows in double
        // and in single precision.
        let (w, free) = coupled_contacts(400);
        let single: Vec<f32> = w.iter().map(|&x| x as f32).collect();
        let groups = vec![ConstraintGroup::Contact { mu: 0.3 }; 400];
        let pgs = Pgs { settings: PgsSettings::new(60, 1e-13) };
        let run = |threads: usize, in_single: bool| {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().expect("pool");
            let mut lambda = vec![0.0; free.len()];
            let mut scratch = PgsScratch::default();
            let out = pool.install(|| match in_single {
                true => pgs.solve_assembled(&single, &w, &free, &groups, &mut lambda, &mut scratch),
                false => pgs.solve_assembled(&w, &w, &free, &groups, &mut lambda, &mut scratch),
            });
            (out, lambda)
        };
        for in_single in [false, true] {
            let one = run(1, in_single);
            for threads in [2, 3, 5, 8] {
                let many = run(threads, in_single);
                let case = format!("{threads} threads, single {in_single}");
                assert_eq!(one.0, many.0, "{case}");
                assert!(one.1.iter().zip(&many.1).all(|(a, b)| a.to_bits() == b.to_bits()), "{case}");
            }
            assert!(one.1.iter().any(|&l| l > 0.0));
        }
    }

    /// On the coupled problem solved tightly, the largest difference of λ
    /// read from `W`'s rows rounded by `round` to λ in double precision,
    /// relative to the largest λ (which must not be zero).
    fn rounded_rows_difference<P: Stored>(round: impl Fn(f64) -> P) -> f64 {
        let groups_n = 40;
        let (w, free) = coupled_contacts(groups_n);
        let c = free.len();
        let groups = vec![ConstraintGroup::Contact { mu: 0.3 }; groups_n];
        let settings = PgsSettings::new(5000, 1e-12);
        let mut double = vec![0.0; c];
        Pgs { settings }.solve(&w, &free, &groups, &mut double);
        assert!(double.iter().any(|&l| l != 0.0));
        let rounded: Vec<P> = w.iter().map(|&x| round(x)).collect();
        let mut lambda = vec![0.0; c];
        let mut scratch = PgsScratch::default();
        Pgs { settings }.solve_assembled(&rounded, &w, &free, &groups, &mut lambda, &mut scratch);
        relative_difference(&double, &lambda)
    }

    #[test]
    fn single_precision_rows_reach_the_double_precision_forces() {
        let diff = rounded_rows_difference(|x| x as f32);
        assert!(diff < 1e-5, "{diff:e}");
        assert!(diff > 0.0, "the rows were read in single precision");
    }

    #[test]
    fn bfloat16_rows_reach_the_double_precision_forces_to_their_rounding() {
        // Entries rounded to 2⁻⁹ relative move λ by a few times that
        // (7.5e-4 on this W), not by orders of magnitude.
        let diff = rounded_rows_difference(ferrofem_linalg::simd::Bf16::from_f64);
        assert!(diff < 5e-3, "{diff:e}");
        assert!(diff > 1e-5, "the rows were read in bfloat16: {diff:e}");
    }
}
