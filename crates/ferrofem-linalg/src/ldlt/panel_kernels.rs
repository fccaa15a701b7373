//! The dense kernels of a supernodal solve, on one panel (`(w + q) × w`
//! column-major: unit-lower `L_ss` on top of `L_bs`) and `z`, its `w + q`
//! rows: the supernode's own columns, then its pattern rows, each row
//! holding `K` interleaved right-hand sides (`K = 3`: the three axes of a
//! position vector, one pass over the panel for all three).
//!
//! A solve streams the panel once and is bound by its loads: four columns
//! are combined per pass over the rows ([`crate::simd`] for one right-hand
//! side), so `z` is read and written once per four columns. Large panels are cut into blocks of
//! columns whose row updates are shared between threads. A panel may be
//! stored in `f32` ([`Stored`]): half the bytes, widened on load, the
//! right-hand sides and all arithmetic in `f64`; or in 8-bit integers with
//! a scale per block of rows of each column ([`Scaled`]), the scale folded
//! into the column's multiplier (forward) or its partial sum (backward).

use std::ops::Range;

use crate::simd::{Stored, COLUMNS};

/// Rows of a column of an 8-bit panel that share one scale (counted from
/// the panel's first row): the error of an entry is half its block's
/// scale, at most 2⁻⁸ of the block's largest entry, so small entries far
/// from a column's largest keep digits. On the 20k real-time drop, PCG's
/// relative residual after its two iterations of the first step (a fresh
/// factor, where the rounding shows most): bfloat16 0.0013; one scale per
/// column 2.9 (no better than the start); blocks of 32, 128, 256 rows
/// 0.095, 0.25, 0.42, and from the second step on within 10–20 % of
/// bfloat16's, where the factor's age dominates. 128 rows keep the
/// sweep's pieces long enough that their calls cost nothing measurable
/// (blocks of 32: the application no faster than bfloat16's).
pub(super) const SCALE_ROWS: usize = 128;

/// A panel's stored values with one scale per block of [`SCALE_ROWS`] rows
/// of each column, entry `(i, j)` being `values[·] · scales[j · blocks + i /
/// SCALE_ROWS]` (no scales: each is 1): a panel kept in 8-bit integers
/// ([`super::Precision::Int8`]). Scales are powers of two, so a vector
/// entry multiplied by one rounds a product as the scaled value would.
#[derive(Debug)]
pub(super) struct Scaled<'a, P> {
    /// The stored values.
    pub values: &'a [P],
    /// The scales, column by column.
    pub scales: &'a [f32],
    /// Blocks of rows per column (0: no scales).
    pub blocks: usize,
}

impl<P> Clone for Scaled<'_, P> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<P> Copy for Scaled<'_, P> {}

impl<'a, P> Scaled<'a, P> {
    /// Values without scales.
    pub fn unscaled(values: &'a [P]) -> Self {
        Scaled { values, scales: &[], blocks: 0 }
    }

    /// The scale of row `i` of column `j`.
    #[inline(always)]
    fn scale(&self, j: usize, i: usize) -> f64 {
        match self.blocks {
            0 => 1.0,
            b => f64::from(self.scales[j * b + i / SCALE_ROWS]),
        }
    }

    /// The rows `rows` in pieces that share their scales: one piece
    /// without scales, else cut at each block's start.
    fn pieces(&self, rows: Range<usize>) -> impl Iterator<Item = Range<usize>> {
        let (scaled, mut r) = (self.blocks > 0, rows.start);
        std::iter::from_fn(move || {
            let end = if scaled { ((r / SCALE_ROWS + 1) * SCALE_ROWS).min(rows.end) } else { rows.end };
            (r < rows.end).then(|| std::mem::replace(&mut r, end)..end)
        })
    }
}

/// Panels with at least this many values are solved by blocks of columns,
/// whose row updates the solve shares between threads.
const PARALLEL_PANEL: usize = 1 << 16;

/// A blocked panel is cut into at most this many blocks of columns: each
/// block is one hand-off between threads.
const BLOCKS: usize = 4;

/// Columns per block of a panel of `len` values with `w` columns: `w` (one
/// block) for a small panel. Blocks are whole groups of [`COLUMNS`], so a
/// blocked forward sweep does each row's arithmetic in the same order as an
/// unblocked one (a blocked backward sweep sums the rows below a block in
/// one pass instead of one per group).
pub(super) fn block_width(len: usize, w: usize) -> usize {
    if len >= PARALLEL_PANEL {
        w.div_ceil(BLOCKS).next_multiple_of(COLUMNS)
    } else {
        w.max(1)
    }
}

/// Forward substitution on a supernode, `z = [x; y_b]` (`K` right-hand
/// sides interleaved, one row of `z` per matrix row):
/// `x ← L_ss⁻¹ x`, then `y_b ← y_b − L_bs x`.
pub(super) fn forward<P: Stored, const K: usize>(panel: Scaled<P>, z: &mut [[f64; K]], w: usize) {
    let ld = z.len();
    let (xs, below) = z.split_at_mut(w);
    triangle_lower(panel, ld, 0, xs);
    update_below(panel, ld, 0, w, xs, below);
}

/// Backward substitution on a supernode, `z = [x; g]` with `g` final:
/// `x ← L_ssᵀ⁻¹ (x − L_bsᵀ g)`.
pub(super) fn backward<P: Stored, const K: usize>(panel: Scaled<P>, z: &mut [[f64; K]], w: usize) {
    let ld = z.len();
    let (xs, below) = z.split_at_mut(w);
    update_above(panel, ld, 0, w, below, xs);
    triangle_upper(panel, ld, 0, xs);
}

/// Rows `r0..r0 + len` of panel column `j`.
fn column<'a, P>(panel: Scaled<'a, P>, ld: usize, j: usize, r0: usize, len: usize) -> &'a [P] {
    &panel.values[j * ld + r0..j * ld + r0 + len]
}

/// `a ← a − l b`, row by row.
fn sub_scaled<const K: usize>(a: &mut [f64; K], l: f64, b: &[f64; K]) {
    (0..K).for_each(|c| a[c] -= l * b[c]);
}

/// `x ← L⁻¹ x` for the unit-lower block of columns and rows `k0..k0 + x.len()`,
/// four columns at a time: their small triangle, then the rows below them.
pub(super) fn triangle_lower<P: Stored, const K: usize>(
    panel: Scaled<P>,
    ld: usize,
    k0: usize,
    x: &mut [[f64; K]],
) {
    for j0 in (0..x.len()).step_by(COLUMNS) {
        let j1 = (j0 + COLUMNS).min(x.len());
        let (head, below) = x.split_at_mut(j1);
        for j in j0..j1 {
            for i in j + 1..j1 {
                let xj = head[j];
                let l = panel.values[(k0 + j) * ld + k0 + i].into() * panel.scale(k0 + j, k0 + i);
                sub_scaled(&mut head[i], l, &xj);
            }
        }
        update_below(panel, ld, k0 + j0, k0 + j1, &head[j0..], below);
    }
}

/// `x ← L⁻ᵀ x` for the unit-lower block of columns and rows `k0..k0 + x.len()`,
/// four columns at a time from the last: the rows below them, then their small triangle.
pub(super) fn triangle_upper<P: Stored, const K: usize>(
    panel: Scaled<P>,
    ld: usize,
    k0: usize,
    x: &mut [[f64; K]],
) {
    for j0 in (0..x.len()).step_by(COLUMNS).rev() {
        let j1 = (j0 + COLUMNS).min(x.len());
        let (head, below) = x.split_at_mut(j1);
        update_above(panel, ld, k0 + j0, k0 + j1, below, &mut head[j0..]);
        for j in (j0..j1).rev() {
            for i in j + 1..j1 {
                let xi = head[i];
                let l = panel.values[(k0 + j) * ld + k0 + i].into() * panel.scale(k0 + j, k0 + i);
                sub_scaled(&mut head[j], l, &xi);
            }
        }
    }
}

/// `rows ← rows − P[r0.., k0..k0 + x.len()] x` for the rows `r0..r0 + rows.len()`.
pub(super) fn update_below<P: Stored, const K: usize>(
    panel: Scaled<P>,
    ld: usize,
    k0: usize,
    r0: usize,
    x: &[[f64; K]],
    rows: &mut [[f64; K]],
) {
    if K == 1 {
        return update_below_one(panel, ld, k0, r0, x.as_flattened(), rows.as_flattened_mut());
    }
    for piece in panel.pieces(r0..r0 + rows.len()) {
        let rows = &mut rows[piece.start - r0..piece.end - r0];
        let col = |j| column(panel, ld, k0 + j, piece.start, piece.len());
        let scaled = |j: usize, x: &[f64; K]| x.map(|v| v * panel.scale(k0 + j, piece.start));
        let (blocks, rest) = x.as_chunks::<COLUMNS>();
        for (b, xs) in blocks.iter().enumerate() {
            let j = b * COLUMNS;
            let cs = [col(j), col(j + 1), col(j + 2), col(j + 3)];
            let xs: [[f64; K]; COLUMNS] = std::array::from_fn(|q| scaled(j + q, &xs[q]));
            if K == 4 {
                // Three axes padded to one 256-bit row: the row primitive.
                let xs = xs.map(|x| std::array::from_fn(|c| x[c]));
                P::sub_rows4(cs, xs, rows.as_flattened_mut().as_chunks_mut().0);
                continue;
            }
            for (i, row) in rows.iter_mut().enumerate() {
                for c in 0..K {
                    row[c] -= cs[0][i].into() * xs[0][c]
                        + cs[1][i].into() * xs[1][c]
                        + cs[2][i].into() * xs[2][c]
                        + cs[3][i].into() * xs[3][c];
                }
            }
        }
        let first = x.len() - rest.len();
        for (j, xj) in rest.iter().enumerate() {
            let xj = scaled(first + j, xj);
            rows.iter_mut().zip(col(first + j)).for_each(|(row, &l)| sub_scaled(row, l.into(), &xj));
        }
    }
}

/// [`update_below`] for one right-hand side, by the four-column SIMD
/// primitive: four columns at a time streamed whole, by pieces that share
/// their scales.
fn update_below_one<P: Stored>(
    panel: Scaled<P>,
    ld: usize,
    k0: usize,
    r0: usize,
    x: &[f64],
    rows: &mut [f64],
) {
    let m = rows.len();
    let col = |j| column(panel, ld, k0 + j, r0, m);
    let (blocks, rest) = x.as_chunks::<COLUMNS>();
    for (b, xs) in blocks.iter().enumerate() {
        let j = b * COLUMNS;
        let cs = [col(j), col(j + 1), col(j + 2), col(j + 3)];
        for piece in panel.pieces(r0..r0 + m) {
            let (lo, hi) = (piece.start - r0, piece.end - r0);
            let a = std::array::from_fn(|q| -xs[q] * panel.scale(k0 + j + q, piece.start));
            P::axpy4(cs.map(|c| &c[lo..hi]), a, &mut rows[lo..hi]);
        }
    }
    let first = x.len() - rest.len();
    for (j, &xj) in rest.iter().enumerate() {
        for piece in panel.pieces(r0..r0 + m) {
            let (lo, hi) = (piece.start - r0, piece.end - r0);
            let a = -xj * panel.scale(k0 + first + j, piece.start);
            P::axpy(a, &col(first + j)[lo..hi], &mut rows[lo..hi]);
        }
    }
}

/// `out ← out − P[r0.., k0..k0 + out.len()]ᵀ v` for the rows `r0..r0 + v.len()`.
pub(super) fn update_above<P: Stored, const K: usize>(
    panel: Scaled<P>,
    ld: usize,
    k0: usize,
    r0: usize,
    v: &[[f64; K]],
    out: &mut [[f64; K]],
) {
    if K == 1 {
        return update_above_one(panel, ld, k0, r0, v.as_flattened(), out.as_flattened_mut());
    }
    let n = out.len();
    if panel.blocks == 0 {
        // One piece: each column's sum subtracted as it is formed.
        let sub = |j: usize, a: [f64; K]| (0..K).for_each(|c| out[j][c] -= a[c]);
        return sums_above(panel, ld, k0, r0, v, n, sub);
    }
    let mut sums = vec![[0.0; K]; n];
    for piece in panel.pieces(r0..r0 + v.len()) {
        let add = |j: usize, a: [f64; K]| {
            let scale = panel.scale(k0 + j, piece.start);
            (0..K).for_each(|c| sums[j][c] += a[c] * scale);
        };
        sums_above(panel, ld, k0, piece.start, &v[piece.start - r0..piece.end - r0], n, add);
    }
    out.iter_mut().zip(&sums).for_each(|(o, s)| (0..K).for_each(|c| o[c] -= s[c]));
}

/// `emit(j, P[r0.., k0 + j]ᵀ v)` for the columns `j < n`, four at a time.
fn sums_above<P: Stored, const K: usize>(
    panel: Scaled<P>,
    ld: usize,
    k0: usize,
    r0: usize,
    v: &[[f64; K]],
    n: usize,
    mut emit: impl FnMut(usize, [f64; K]),
) {
    let col = |j| column(panel, ld, k0 + j, r0, v.len());
    let first = n - n % COLUMNS;
    for j in (0..first).step_by(COLUMNS) {
        let cs = [col(j), col(j + 1), col(j + 2), col(j + 3)];
        let mut acc = [[0.0; K]; COLUMNS];
        if K == 4 {
            // Three axes padded to one 256-bit row: the row primitive.
            let sums = P::rows_dot4(cs, v.as_flattened().as_chunks().0);
            acc.iter_mut().zip(&sums).for_each(|(a, s)| a.copy_from_slice(&s[..K]));
        } else {
            for (i, vi) in v.iter().enumerate() {
                for q in 0..COLUMNS {
                    (0..K).for_each(|c| acc[q][c] += cs[q][i].into() * vi[c]);
                }
            }
        }
        acc.into_iter().enumerate().for_each(|(q, a)| emit(j + q, a));
    }
    for j in first..n {
        let mut acc = [0.0; K];
        col(j).iter().zip(v).for_each(|(&l, vi)| (0..K).for_each(|c| acc[c] += l.into() * vi[c]));
        emit(j, acc);
    }
}

/// [`update_above`] for one right-hand side, by the four-column SIMD
/// primitive: four columns at a time streamed whole, their sums formed by
/// pieces that share their scales.
fn update_above_one<P: Stored>(
    panel: Scaled<P>,
    ld: usize,
    k0: usize,
    r0: usize,
    v: &[f64],
    out: &mut [f64],
) {
    let m = v.len();
    if m == 0 {
        return;
    }
    let col = |j| column(panel, ld, k0 + j, r0, m);
    // Sums start at −0, which adds nothing to any value: without scales
    // (one piece, each times 1) a column's sum is its dot product's bits.
    let sum = |c: &[P], j: usize| {
        let parts = panel.pieces(r0..r0 + m).map(|p| {
            P::dot(&c[p.start - r0..p.end - r0], &v[p.start - r0..p.end - r0]) * panel.scale(k0 + j, p.start)
        });
        parts.fold(-0.0, |s, d| s + d)
    };
    let first = out.len() - out.len() % COLUMNS;
    let (blocks, rest) = out.as_chunks_mut::<COLUMNS>();
    for (b, os) in blocks.iter_mut().enumerate() {
        let j = b * COLUMNS;
        let cs = [col(j), col(j + 1), col(j + 2), col(j + 3)];
        let mut sums = [-0.0; COLUMNS];
        for piece in panel.pieces(r0..r0 + m) {
            let (lo, hi) = (piece.start - r0, piece.end - r0);
            let d = P::dot4(cs.map(|c| &c[lo..hi]), &v[lo..hi]);
            (0..COLUMNS).for_each(|q| sums[q] += d[q] * panel.scale(k0 + j + q, piece.start));
        }
        os.iter_mut().zip(sums).for_each(|(o, s)| *o -= s);
    }
    for (j, o) in rest.iter_mut().enumerate() {
        *o -= sum(col(first + j), first + j);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The sweeps by blocks of `step` columns as the solve schedules them
    /// (serially here), each block's update split in two parts.
    fn forward_blocked<P: Stored, const K: usize>(
        panel: Scaled<P>,
        z: &mut [[f64; K]],
        w: usize,
        step: usize,
    ) {
        let ld = z.len();
        for k0 in (0..w).step_by(step) {
            let k1 = (k0 + step).min(w);
            let (head, below) = z.split_at_mut(k1);
            triangle_lower(panel, ld, k0, &mut head[k0..]);
            let half = below.len() / 2;
            let (a, b) = below.split_at_mut(half);
            update_below(panel, ld, k0, k1, &head[k0..], a);
            update_below(panel, ld, k0, k1 + half, &head[k0..], b);
        }
    }

    /// [`forward_blocked`]'s backward sweep.
    fn backward_blocked<P: Stored, const K: usize>(
        panel: Scaled<P>,
        z: &mut [[f64; K]],
        w: usize,
        step: usize,
    ) {
        let ld = z.len();
        for k0 in (0..w).step_by(step).rev() {
            let k1 = (k0 + step).min(w);
            let (head, below) = z.split_at_mut(k1);
            let xs = &mut head[k0..];
            let half = (xs.len() / 2).next_multiple_of(COLUMNS).min(xs.len());
            let (a, b) = xs.split_at_mut(half);
            update_above(panel, ld, k0, k1, below, a);
            update_above(panel, ld, k0 + half, k1, below, b);
            triangle_upper(panel, ld, k0, xs);
        }
    }

    /// Both sweeps, whole or by blocks of `step` columns (`0`: whole).
    fn sweeps<P: Stored, const K: usize>(
        panel: Scaled<P>,
        z: &mut [[f64; K]],
        w: usize,
        step: usize,
        fwd: bool,
    ) {
        match (fwd, step) {
            (true, 0) => forward(panel, z, w),
            (false, 0) => backward(panel, z, w),
            (true, _) => forward_blocked(panel, z, w, step),
            (false, _) => backward_blocked(panel, z, w, step),
        }
    }

    /// Random panels, whole and by blocks, against plain loops; the blocked
    /// forward sweep equals the whole one bitwise.
    #[test]
    fn kernels_match_plain_loops_for_every_shape() {
        let shapes = [(1, 0), (3, 5), (4, 0), (7, 13), (9, 2), (16, 33), (150, 0), (210, 190), (301, 0)];
        assert!(
            shapes.iter().any(|&(w, q)| (w + q) * w >= PARALLEL_PANEL),
            "a panel the solve blocks is tested"
        );
        for (w, q) in shapes {
            let ld = w + q;
            let panel: Vec<f64> = (0..ld * w).map(|i| ((i * 37 % 101) as f64 / 101.0 - 0.5) * 0.2).collect();
            let z0: Vec<f64> = (0..ld).map(|i| (i as f64 * 0.7).sin()).collect();
            let mut y = z0.clone();
            for j in 0..w {
                for i in j + 1..ld {
                    y[i] -= panel[j * ld + i] * y[j];
                }
            }
            let mut u = z0.clone();
            for j in (0..w).rev() {
                u[j] -= (j + 1..ld).map(|i| panel[j * ld + i] * u[i]).sum::<f64>();
            }
            let close = |a: &[f64], b: &[f64]| a.iter().zip(b).all(|(p, q)| (p - q).abs() < 1e-11);
            // Three right-hand sides: z0, 2 z0 and −z0, interleaved.
            let three = |z: &[f64]| z.iter().map(|&v| [v, 2.0 * v, -v]).collect::<Vec<_>>();
            let flat = |z: &[[f64; 1]]| z.as_flattened().to_vec();
            // Three padded to four (the interleaved solve's rows): the row primitives.
            let four = |z: &[f64]| z.iter().map(|&v| [v, 2.0 * v, -v, 0.0]).collect::<Vec<_>>();
            let one = |z: &[f64]| z.iter().map(|&v| [v]).collect::<Vec<_>>();
            for (fwd, want) in [(true, &y), (false, &u)] {
                let (mut whole1, mut whole3, mut whole4) = (one(&z0), three(&z0), four(&z0));
                sweeps(Scaled::unscaled(&panel), &mut whole1, w, 0, fwd);
                sweeps(Scaled::unscaled(&panel), &mut whole3, w, 0, fwd);
                sweeps(Scaled::unscaled(&panel), &mut whole4, w, 0, fwd);
                assert!(close(&flat(&whole1), want), "forward {fwd}, w = {w}, q = {q}");
                assert!(
                    close(whole3.as_flattened(), three(want).as_flattened()),
                    "×3 forward {fwd}, w = {w}, q = {q}"
                );
                assert!(
                    close(whole4.as_flattened(), four(want).as_flattened()),
                    "×4 forward {fwd}, w = {w}, q = {q}"
                );
                for step in [COLUMNS, 2 * COLUMNS, block_width(PARALLEL_PANEL, w)] {
                    let (mut z1, mut z3, mut z4) = (one(&z0), three(&z0), four(&z0));
                    sweeps(Scaled::unscaled(&panel), &mut z1, w, step, fwd);
                    sweeps(Scaled::unscaled(&panel), &mut z3, w, step, fwd);
                    sweeps(Scaled::unscaled(&panel), &mut z4, w, step, fwd);
                    let blocked = format!("blocks of {step}, forward {fwd}, w = {w}, q = {q}");
                    if fwd {
                        // Each row takes the same groups of columns in the same order.
                        assert_eq!(
                            (z1, z3, z4),
                            (whole1.clone(), whole3.clone(), whole4.clone()),
                            "{blocked}"
                        );
                    } else {
                        // A block's columns sum the rows below it in one pass.
                        assert!(close(&flat(&z1), want), "{blocked}");
                        assert!(close(z3.as_flattened(), three(want).as_flattened()), "×3 {blocked}");
                        assert!(close(z4.as_flattened(), four(want).as_flattened()), "×4 {blocked}");
                    }
                }
            }
            // A single-precision panel: the same operations on its widened values.
            let single: Vec<f32> = panel.iter().map(|&v| v as f32).collect();
            let widened: Vec<f64> = single.iter().map(|&v| f64::from(v)).collect();
            for step in [0, COLUMNS] {
                let (mut p, mut q) = (one(&z0), one(&z0));
                for fwd in [true, false] {
                    sweeps(Scaled::unscaled(&single), &mut p, w, step, fwd);
                    sweeps(Scaled::unscaled(&widened), &mut q, w, step, fwd);
                }
                assert_eq!(p, q, "f32 panel, w = {w}, blocks of {step}");
            }
            // An 8-bit panel, a power-of-two scale per block of rows of each
            // column: the sweeps over its scaled values in double, for 1, 3
            // and 4 right-hand sides, whole and by blocks; the forward
            // sweep bitwise (each row's chain is the same), the backward one
            // summed by blocks of rows.
            let blocks = ld.div_ceil(SCALE_ROWS);
            let (mut int8, mut scales) = (vec![0i8; ld * w], vec![0.0f32; w * blocks]);
            super::super::rounded::round_panel_int8(&panel, ld, &mut int8, &mut scales);
            let scaled = Scaled { values: &int8[..], scales: &scales, blocks };
            let exact: Vec<f64> =
                (0..ld * w).map(|i| f64::from(int8[i]) * scaled.scale(i / ld, i % ld)).collect();
            assert!(exact
                .iter()
                .zip(&panel)
                .enumerate()
                .all(|(i, (e, p))| i % ld <= i / ld || (e - p).abs() <= 0.5 * scaled.scale(i / ld, i % ld)));
            for step in [0, COLUMNS, block_width(PARALLEL_PANEL, w)] {
                for fwd in [true, false] {
                    let (mut p1, mut q1) = (one(&z0), one(&z0));
                    sweeps(scaled, &mut p1, w, step, fwd);
                    sweeps(Scaled::unscaled(&exact), &mut q1, w, step, fwd);
                    let (mut p3, mut q3) = (three(&z0), three(&z0));
                    sweeps(scaled, &mut p3, w, step, fwd);
                    sweeps(Scaled::unscaled(&exact), &mut q3, w, step, fwd);
                    let (mut p4, mut q4) = (four(&z0), four(&z0));
                    sweeps(scaled, &mut p4, w, step, fwd);
                    sweeps(Scaled::unscaled(&exact), &mut q4, w, step, fwd);
                    let case = format!("int8 panel, w = {w}, q = {q}, blocks of {step}, forward {fwd}");
                    if fwd {
                        assert_eq!((p1, p3, p4), (q1, q3, q4), "{case}");
                    } else {
                        assert!(close(&flat(&p1), &flat(&q1)), "{case}");
                        assert!(close(p3.as_flattened(), q3.as_flattened()), "×3 {case}");
                        assert!(close(p4.as_flattened(), q4.as_flattened()), "×4 {case}");
                    }
                }
            }
        }
    }
}
