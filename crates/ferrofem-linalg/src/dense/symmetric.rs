//! `z = S y` for a symmetric `m × m` matrix `S` stored whole and three
//! vectors: by whole rows while `S` is small, by its upper triangle alone
//! (half the bytes, which past the caches bound the product) from
//! [`UPPER_FROM`] rows on.

use crate::simd::{dot4x3, dot_axpy4x3, COLUMNS};
use crate::split::SharedColumns;
use crate::team::{for_each_chunk_mut, for_each_part};

/// Rows from which [`symmetric_times3`] reads the upper triangle alone
/// (32 MB of `f64`). Below, the whole rows' product is the quicker: it has
/// half the multiply-adds per entry read and one parallel section, and
/// its rows stay in the caches (two threads of an Intel Xeon with 2 MB of
/// L2 a core: 0.09–0.14 against 0.28 ms at 800 rows, 0.7–0.8 against
/// 0.6–0.7 at 2,000, 4.1–4.4 against 2.6 at 4,400; `docs/benchmarks.md`).
pub const UPPER_FROM: usize = 2048;

/// Parts the rows are split into, whatever the threads (the sums' order
/// depends on the parts, so the bits do not depend on the threads).
pub const PARTS: usize = 16;

/// `z[3 i + a] = Σⱼ S[i m + j] y[a m + j]` for `i < m` and the three axes
/// `a` (`y` axis-major, `z` row-major), `S` symmetric (row `i` at
/// `[i m, (i + 1) m)`), on the threads of the team where one is held: by
/// [`whole_rows`] below [`UPPER_FROM`] rows, else by [`upper_triangle`]
/// (`scratch` its buffers). The sums' order depends on `m` alone.
pub fn symmetric_times3(s: &[f64], m: usize, y: &[f64], z: &mut [f64], scratch: &mut Vec<f64>) {
    assert!(s.len() == m * m && y.len() == 3 * m && z.len() == 3 * m, "symmetric_times3: sizes for m = {m}");
    match m {
        0 => {}
        _ if m < UPPER_FROM => whole_rows(s, m, y, z),
        _ => upper_triangle(s, m, y, z, scratch),
    }
}

/// Four rows of `S` per block, each read once for the three axes; the
/// blocks in [`PARTS`] parts.
fn whole_rows(s: &[f64], m: usize, y: &[f64], z: &mut [f64]) {
    let blocks_per_part = m.div_ceil(COLUMNS).div_ceil(PARTS).max(1);
    for_each_chunk_mut(z, 3 * COLUMNS * blocks_per_part, |part, zp| {
        for (local, zb) in zp.chunks_mut(3 * COLUMNS).enumerate() {
            let first = COLUMNS * (part * blocks_per_part + local);
            let row = |k: usize| {
                let i = (first + k).min(m - 1);
                &s[i * m..(i + 1) * m]
            };
            let sums = dot4x3([row(0), row(1), row(2), row(3)], [&y[..m], &y[m..2 * m], &y[2 * m..]]);
            for (a, sums) in sums.iter().enumerate() {
                for (k, v) in sums.iter().enumerate().take(zb.len() / 3) {
                    zb[3 * k + a] = *v;
                }
            }
        }
    });
}

/// Only `j ≥ i` rounded down to a multiple of four is read. Rows go by
/// blocks of four in [`PARTS`] parts of about equal triangles; a block
/// takes its rows' dot products over `j ≥` its first row and adds its
/// entries right of its own columns, transposed, into its part's buffer in
/// `scratch`; a row's value is then its parts' buffers summed in part
/// order.
fn upper_triangle(s: &[f64], m: usize, y: &[f64], z: &mut [f64], scratch: &mut Vec<f64>) {
    let bounds = triangle_parts(m.div_ceil(COLUMNS));
    scratch.resize(PARTS * 3 * m, 0.0);
    for_each_chunk_mut(scratch, 3 * m, |p, t| {
        for b in bounds[p]..bounds[p + 1] {
            block(s, m, y, b, t, b == bounds[p]);
        }
    });
    let (t, shared) = (&scratch[..], SharedColumns::new(z));
    let chunk = m.div_ceil(PARTS).max(64);
    for_each_part(m.div_ceil(chunk), |q| {
        let rows = q * chunk..((q + 1) * chunk).min(m);
        // SAFETY: part `q` alone writes rows `rows` of `z`, which lie in it.
        let zq = unsafe { shared.column(3 * rows.start, 3 * rows.len()) };
        // Part 0 starts at row 0; the others add from their first row on.
        for (p, t) in t.chunks_exact(3 * m).enumerate().filter(|&(p, _)| bounds[p] < bounds[p + 1]) {
            let from = rows.start.max(COLUMNS * bounds[p]);
            if from >= rows.end {
                break;
            }
            for a in 0..3 {
                let (ta, za) =
                    (&t[a * m + from..a * m + rows.end], zq[3 * (from - rows.start) + a..].iter_mut());
                match p {
                    0 => za.step_by(3).zip(ta).for_each(|(z, v)| *z = *v),
                    _ => za.step_by(3).zip(ta).for_each(|(z, v)| *z += *v),
                }
            }
        }
    });
}

/// Rows `4b…4b + 3` (the last block's missing rows repeat row `m − 1`):
/// their dot products over their own four columns, then over the columns
/// right of them, whose entries also go, transposed, into `t` (axis-major,
/// `3 m`; set when `first`, the part's first block, else added to). The
/// rows' own values go to `t` too: set by the part's first block, added
/// to the transposes of the blocks before them otherwise.
fn block(s: &[f64], m: usize, y: &[f64], b: usize, t: &mut [f64], first: bool) {
    let i0 = COLUMNS * b;
    let (own, right) = (i0..(i0 + COLUMNS).min(m), (i0 + COLUMNS).min(m));
    let rows: [usize; COLUMNS] = std::array::from_fn(|k| (i0 + k).min(m - 1));
    let c = rows.map(|i| &s[i * m + i0..(i + 1) * m]);
    let ya: [&[f64]; 3] = std::array::from_fn(|a| &y[a * m + i0..(a + 1) * m]);
    let sa: [[f64; COLUMNS]; 3] = std::array::from_fn(|a| rows.map(|i| y[a * m + i]));
    let (t0, rest) = t.split_at_mut(m);
    let (t1, t2) = rest.split_at_mut(m);
    let tr = [&mut t0[right..], &mut t1[right..], &mut t2[right..]];
    let dots = dot_axpy4x3((c, ya, tr), sa, right - i0, first);
    for (a, ta) in [t0, t1, t2].into_iter().enumerate() {
        for (k, i) in own.clone().enumerate() {
            ta[i] = if first { dots[a][k] } else { ta[i] + dots[a][k] };
        }
    }
}

/// [`PARTS`] + 1 bounds over `blocks` blocks of four rows such that each
/// part holds about as many upper-triangle entries (block `b` reads about
/// `blocks − b` blocks' worth).
fn triangle_parts(blocks: usize) -> [usize; PARTS + 1] {
    let total: usize = (1..=blocks).sum();
    let mut bounds = [blocks; PARTS + 1];
    let (mut b, mut done) = (0, 0);
    for (p, bound) in bounds.iter_mut().enumerate().take(PARTS) {
        while b < blocks && done * PARTS < p * total {
            done += blocks - b;
            b += 1;
        }
        *bound = b;
    }
    bounds
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A symmetric `m × m` matrix over several magnitudes.
    fn symmetric(m: usize) -> Vec<f64> {
        let mut s = vec![0.0; m * m];
        for i in 0..m {
            for j in 0..=i {
                let v = ((i * 31 + j * 17) as f64 * 0.13).sin() * 10f64.powi((i + j) as i32 % 5 - 2);
                s[i * m + j] = v;
                s[j * m + i] = v;
            }
        }
        s
    }

    /// Equal to the plain product to rounding, for sizes around the blocks
    /// and parts, with the same bits on one thread and on several.
    #[test]
    fn equals_the_plain_product_with_bits_independent_of_threads() {
        for m in [1, 2, 3, 4, 5, 7, 9, 63, 64, 65, 130, 517, 801, 1603] {
            let s = symmetric(m);
            let y: Vec<f64> = (0..3 * m).map(|k| (k as f64 * 0.71).cos() - 0.1).collect();
            let mut z = vec![f64::NAN; 3 * m];
            upper_triangle(&s, m, &y, &mut z, &mut Vec::new());
            let mut whole = vec![f64::NAN; 3 * m];
            whole_rows(&s, m, &y, &mut whole);
            for i in 0..m {
                for a in 0..3 {
                    let want: f64 = (0..m).map(|j| s[i * m + j] * y[a * m + j]).sum();
                    let scale: f64 = (0..m).map(|j| (s[i * m + j] * y[a * m + j]).abs()).sum();
                    assert!((z[3 * i + a] - want).abs() <= 1e-13 * scale, "m = {m}, row {i}, axis {a}");
                    assert!((whole[3 * i + a] - want).abs() <= 1e-13 * scale, "m = {m}, row {i}, axis {a}");
                }
            }
            let pool = rayon::ThreadPoolBuilder::new().num_threads(3).build().unwrap();
            let mut z3 = vec![0.0; 3 * m];
            pool.install(|| upper_triangle(&s, m, &y, &mut z3, &mut vec![7.0; 5]));
            assert_eq!(
                z.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
                z3.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
                "m = {m}"
            );
        }
    }

    /// Below [`UPPER_FROM`] rows the product is the whole rows', from it
    /// the upper triangle's, bit for bit.
    #[test]
    fn the_read_switches_at_its_threshold() {
        for m in [UPPER_FROM - 1, UPPER_FROM] {
            let s = symmetric(m);
            let y: Vec<f64> = (0..3 * m).map(|k| (k as f64 * 0.29).sin()).collect();
            let (mut z, mut want) = (vec![0.0; 3 * m], vec![0.0; 3 * m]);
            symmetric_times3(&s, m, &y, &mut z, &mut Vec::new());
            match m < UPPER_FROM {
                true => whole_rows(&s, m, &y, &mut want),
                false => upper_triangle(&s, m, &y, &mut want, &mut Vec::new()),
            }
            assert!(z.iter().zip(&want).all(|(p, q)| p.to_bits() == q.to_bits()), "m = {m}");
        }
    }

    /// The parts cover the blocks in order, each about a sixteenth of the triangle.
    #[test]
    fn parts_split_the_triangle_evenly() {
        for blocks in [0, 1, 5, 16, 17, 1000] {
            let b = triangle_parts(blocks);
            assert!(b[0] == 0 && b[PARTS] == blocks && b.windows(2).all(|w| w[0] <= w[1]), "{b:?}");
            if blocks >= 1000 {
                let work = |p: usize| (b[p]..b[p + 1]).map(|k| blocks - k).sum::<usize>() as f64;
                let total = (1..=blocks).sum::<usize>() as f64;
                assert!((0..PARTS).all(|p| (work(p) - total / PARTS as f64).abs() < 0.01 * total), "{b:?}");
            }
        }
    }
}
