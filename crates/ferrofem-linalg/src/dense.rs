//! Square dense matrices stored as flat slices (`n × n`, either major
//! order): symmetrization and mirroring done tile by tile, so that both
//! `a[i n + j]` and its transpose `a[j n + i]` stay in cache — a plain
//! double loop misses the cache (and the TLB) on every transposed access
//! once a row no longer fits in a page.

mod symmetric;

pub use symmetric::symmetric_times3;

use std::ops::Range;

use rayon::prelude::*;

use crate::split::SharedColumns;

/// Side of the square tiles.
const TILE: usize = 32;

/// Calls `f(i, j)` for every `i` of `rows` and `j < i`, tile by tile.
fn for_each_strict_lower(rows: Range<usize>, mut f: impl FnMut(usize, usize)) {
    for i0 in rows.clone().step_by(TILE) {
        let i1 = (i0 + TILE).min(rows.end);
        for j0 in (0..i1).step_by(TILE) {
            for i in i0..i1 {
                for j in j0..(j0 + TILE).min(i) {
                    f(i, j);
                }
            }
        }
    }
}

/// `A ← (A + Aᵀ) / 2`, so that the matrix is exactly symmetric.
pub fn symmetrize(a: &mut [f64], n: usize) {
    assert_eq!(a.len(), n * n, "symmetrize: {} entries for n = {n}", a.len());
    for_each_strict_lower(0..n, |i, j| {
        let m = 0.5 * (a[i * n + j] + a[j * n + i]);
        a[i * n + j] = m;
        a[j * n + i] = m;
    });
}

/// Copies `a[j ld + i]` onto `a[i ld + j]` for every `i` of `rows` and
/// `j < i`: those rows of the lower triangle of a column-major matrix
/// (leading dimension `ld`) onto the matching columns of its upper one.
/// `mirror(a, n, 0..n)` makes a column-major `n × n` matrix symmetric
/// from its lower triangle. Tiles of columns go in parallel.
pub fn mirror<T: Copy + Send>(a: &mut [T], ld: usize, rows: Range<usize>) {
    assert!(rows.end <= ld && a.len() >= rows.end * ld, "mirror: rows {rows:?} of a {} matrix", a.len());
    let shared = SharedColumns::new(a);
    // One task per tile of rows `i0..i1`: it alone writes their columns
    // above the diagonal (`j < i`), and every read is below the diagonal,
    // which no task writes; all indices lie in `a` (asserted).
    let tile = |i0: usize| {
        for_each_strict_lower(i0..(i0 + TILE).min(rows.end), |i, j| {
            // SAFETY: as above: entry `(j, i)` is this task's, `(i, j)` is
            // read-only for every task.
            unsafe { shared.column(i * ld + j, 1)[0] = shared.finished(j * ld + i, 1)[0] };
        });
    };
    let tiles: Vec<usize> = rows.clone().step_by(TILE).collect();
    if rows.len() * ld < PARALLEL_ENTRIES {
        tiles.into_iter().for_each(tile);
    } else {
        tiles.into_par_iter().for_each(tile);
    }
}

/// Entries (`rows × ld`) above which [`mirror`] runs on all threads.
const PARALLEL_ENTRIES: usize = 1 << 16;

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(n: usize) -> Vec<f64> {
        (0..n * n).map(|k| ((k * 7919) % 1013) as f64 * 1e-3 - 0.4).collect()
    }

    #[test]
    fn tiled_loops_match_plain_ones_across_tile_edges() {
        for n in [0, 1, 5, TILE - 1, TILE, TILE + 1, 3 * TILE + 7, 9 * TILE + 3] {
            let a = sample(n);
            let (mut s, mut m) = (a.clone(), a.clone());
            symmetrize(&mut s, n);
            mirror(&mut m, n, 0..n);
            for i in 0..n {
                for j in 0..n {
                    let avg = 0.5 * (a[i * n + j] + a[j * n + i]);
                    assert_eq!(
                        s[i * n + j],
                        if i == j { a[i * n + i] } else { avg },
                        "symmetrize ({i},{j}) n={n}"
                    );
                    let src = if i > j { a[j * n + i] } else { a[i * n + j] };
                    assert_eq!(m[i * n + j], src, "mirror ({i},{j}) n={n}");
                }
            }
        }
    }

    #[test]
    fn mirror_of_some_rows_touches_only_their_pairs() {
        // The second case is large enough to run in parallel.
        for (lo, n, ld) in [(37, 70, 75), (301, 650, 700)] {
            let a = sample(ld);
            let mut m = a.clone();
            mirror(&mut m, ld, lo..n);
            for i in 0..ld {
                for j in 0..ld {
                    let mirrored = (lo..n).contains(&j) && i < j;
                    let want = if mirrored { a[i * ld + j] } else { a[j * ld + i] };
                    assert_eq!(m[j * ld + i], want, "({i},{j}) rows {lo}..{n}");
                }
            }
        }
    }
}
