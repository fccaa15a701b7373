//! The kernel of a symmetric matrix's product read from its upper
//! triangle alone: four rows of the matrix, each entry loaded once for the
//! row's dot product and for the transposed entry's update.
//!
//! The sums' order is fixed and every build keeps it with fused
//! multiply-adds (`f64::mul_add` in plain Rust), so the 512-bit, the
//! 256-bit and the portable builds give the same bits. A row's dot product
//! is its `head` columns one by one, plus the columns after them over
//! eight chains (column `head + j` to chain `j mod 8`; chain `l` added to
//! chain `l + 4`, those four as `(p₀ + p₁) + (p₂ + p₃)`, then the columns
//! past the last multiple of eight one by one); an update sums the four
//! rows in their order. The helpers are loops without closures, so that
//! inlined into a build they take its fused multiply-adds.

use super::COLUMNS;

/// Chains of the dot products.
const CHAINS: usize = 8;

/// Rows, vectors, updates: the kernel's operands.
type Operands<'a> = ([&'a [f64]; COLUMNS], [&'a [f64]; 3], [&'a mut [f64]; 3]);

/// For four rows `cₖ` (each at least as long as `y`) over the columns
/// `j < n = yₐ.len()`: returns `Σⱼ cₖ[j] yₐ[j]` (row `k`, axis `a`) and,
/// for the columns past the first `head`, sets `tₐ[j − head]` to itself
/// plus `Σₖ cₖ[j] sₐ[k]` (to `0 + …` when `assign`), reading each `cₖ[j]`
/// once for both.
pub fn dot_axpy4x3(
    (c, y, t): Operands<'_>,
    s: [[f64; COLUMNS]; 3],
    head: usize,
    assign: bool,
) -> [[f64; COLUMNS]; 3] {
    let n = y[0].len();
    assert!(
        head <= n
            && y.iter().all(|v| v.len() == n)
            && t.iter().all(|v| v.len() == n - head)
            && c.iter().all(|r| r.len() >= n),
        "dot_axpy4x3: rows, vectors and updates of unequal lengths"
    );
    #[cfg(target_arch = "x86_64")]
    {
        if super::wide::enabled() {
            // SAFETY: the processor has AVX-512F, AVX2 and FMA (checked just above); the lengths are checked.
            return unsafe { wide::dot_axpy4x3((c, y, t), s, head, assign) };
        }
        if super::fused() {
            // SAFETY: the processor has AVX2 and FMA (checked just above); the lengths are checked.
            return unsafe { avx::dot_axpy4x3((c, y, t), s, head, assign) };
        }
    }
    portable((c, y, t), s, head, assign)
}

/// The reference build: the kernel in plain Rust.
fn portable(
    (c, y, t): Operands<'_>,
    s: [[f64; COLUMNS]; 3],
    head: usize,
    assign: bool,
) -> [[f64; COLUMNS]; 3] {
    let mut acc = [[[0.0f64; CHAINS]; COLUMNS]; 3];
    let main = (y[0].len() - head) / CHAINS * CHAINS;
    for (a, ta) in t.into_iter().enumerate() {
        for (j, tj) in ta.iter_mut().enumerate() {
            let cj = [c[0][head + j], c[1][head + j], c[2][head + j], c[3][head + j]];
            if j < main {
                for k in 0..COLUMNS {
                    acc[a][k][j % CHAINS] = cj[k].mul_add(y[a][head + j], acc[a][k][j % CHAINS]);
                }
            }
            *tj = update(if assign { 0.0 } else { *tj }, cj, s[a]);
        }
    }
    dots(&acc, c, y, head, main)
}

/// The rows' dot products from their chains: the head, the chains added in
/// the fixed order, the columns past the chains.
#[inline(always)]
fn dots(
    acc: &[[[f64; CHAINS]; COLUMNS]; 3],
    c: [&[f64]; COLUMNS],
    y: [&[f64]; 3],
    head: usize,
    main: usize,
) -> [[f64; COLUMNS]; 3] {
    let mut out = [[0.0; COLUMNS]; 3];
    for a in 0..3 {
        for k in 0..COLUMNS {
            let mut first = 0.0;
            for j in 0..head {
                first = c[k][j].mul_add(y[a][j], first);
            }
            let l = &acc[a][k];
            let mut rest = (l[0] + l[4] + (l[1] + l[5])) + (l[2] + l[6] + (l[3] + l[7]));
            for j in head + main..y[a].len() {
                rest = c[k][j].mul_add(y[a][j], rest);
            }
            out[a][k] = first + rest;
        }
    }
    out
}

/// `v (+)= Σₖ cₖ sₖ` in the rows' order.
#[inline(always)]
fn update(v: f64, c: [f64; COLUMNS], s: [f64; COLUMNS]) -> f64 {
    let mut v = v;
    for k in 0..COLUMNS {
        v = c[k].mul_add(s[k], v);
    }
    v
}

/// The updates of the columns `head + main..`, one by one.
#[inline(always)]
fn update_tail(
    (c, t): ([&[f64]; COLUMNS], [&mut [f64]; 3]),
    s: [[f64; COLUMNS]; 3],
    head: usize,
    main: usize,
    assign: bool,
) {
    for (a, ta) in t.into_iter().enumerate() {
        for j in main..ta.len() {
            let cj = [c[0][head + j], c[1][head + j], c[2][head + j], c[3][head + j]];
            ta[j] = update(if assign { 0.0 } else { ta[j] }, cj, s[a]);
        }
    }
}

/// The 512-bit build: eight chains in one register.
#[cfg(target_arch = "x86_64")]
mod wide {
    use std::arch::x86_64::*;

    use super::{dots, update_tail, Operands, CHAINS, COLUMNS};

    /// [`super::dot_axpy4x3`] with eight-lane fused multiply-adds.
    ///
    /// # Safety
    /// The processor has AVX-512F, AVX2 and FMA; the lengths are as
    /// [`super::dot_axpy4x3`] asserts.
    #[target_feature(enable = "avx512f,avx2,fma")]
    pub(super) unsafe fn dot_axpy4x3(
        (c, y, t): Operands<'_>,
        s: [[f64; COLUMNS]; 3],
        head: usize,
        assign: bool,
    ) -> [[f64; COLUMNS]; 3] {
        let main = (y[0].len() - head) / CHAINS * CHAINS;
        let (cp, yp) = (c.map(|r| r[head..].as_ptr()), y.map(|v| v[head..].as_ptr()));
        let tp = [t[0].as_mut_ptr(), t[1].as_mut_ptr(), t[2].as_mut_ptr()];
        let mut acc = [[_mm512_setzero_pd(); COLUMNS]; 3];
        let mut j = 0;
        while j < main {
            // SAFETY: j + 8 ≤ main, within every row, vector and update past the head.
            unsafe {
                let ck = [
                    _mm512_loadu_pd(cp[0].add(j)),
                    _mm512_loadu_pd(cp[1].add(j)),
                    _mm512_loadu_pd(cp[2].add(j)),
                    _mm512_loadu_pd(cp[3].add(j)),
                ];
                for a in 0..3 {
                    let ya = _mm512_loadu_pd(yp[a].add(j));
                    let mut v = if assign { _mm512_setzero_pd() } else { _mm512_loadu_pd(tp[a].add(j)) };
                    for k in 0..COLUMNS {
                        acc[a][k] = _mm512_fmadd_pd(ck[k], ya, acc[a][k]);
                        v = _mm512_fmadd_pd(ck[k], _mm512_set1_pd(s[a][k]), v);
                    }
                    _mm512_storeu_pd(tp[a].add(j), v);
                }
            }
            j += CHAINS;
        }
        let mut lanes = [[[0.0; CHAINS]; COLUMNS]; 3];
        for a in 0..3 {
            for k in 0..COLUMNS {
                // SAFETY: `lanes[a][k]` holds eight doubles.
                unsafe { _mm512_storeu_pd(lanes[a][k].as_mut_ptr(), acc[a][k]) };
            }
        }
        update_tail((c, t), s, head, main, assign);
        dots(&lanes, c, y, head, main)
    }
}

/// The 256-bit build: eight chains in two registers.
#[cfg(target_arch = "x86_64")]
mod avx {
    use std::arch::x86_64::*;

    use super::{dots, update_tail, Operands, CHAINS, COLUMNS};

    /// [`super::dot_axpy4x3`] with four-lane fused multiply-adds.
    ///
    /// # Safety
    /// The processor has AVX2 and FMA; the lengths are as
    /// [`super::dot_axpy4x3`] asserts.
    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn dot_axpy4x3(
        (c, y, t): Operands<'_>,
        s: [[f64; COLUMNS]; 3],
        head: usize,
        assign: bool,
    ) -> [[f64; COLUMNS]; 3] {
        let main = (y[0].len() - head) / CHAINS * CHAINS;
        let (cp, yp) = (c.map(|r| r[head..].as_ptr()), y.map(|v| v[head..].as_ptr()));
        let tp = [t[0].as_mut_ptr(), t[1].as_mut_ptr(), t[2].as_mut_ptr()];
        let mut acc = [[[_mm256_setzero_pd(); 2]; COLUMNS]; 3];
        let mut j = 0;
        while j < main {
            for (h, at) in [(0, j), (1, j + 4)] {
                // SAFETY: at + 4 ≤ j + 8 ≤ main, within every row, vector and update past the head.
                unsafe {
                    let ck = [
                        _mm256_loadu_pd(cp[0].add(at)),
                        _mm256_loadu_pd(cp[1].add(at)),
                        _mm256_loadu_pd(cp[2].add(at)),
                        _mm256_loadu_pd(cp[3].add(at)),
                    ];
                    for a in 0..3 {
                        let ya = _mm256_loadu_pd(yp[a].add(at));
                        let mut v = if assign { _mm256_setzero_pd() } else { _mm256_loadu_pd(tp[a].add(at)) };
                        for k in 0..COLUMNS {
                            acc[a][k][h] = _mm256_fmadd_pd(ck[k], ya, acc[a][k][h]);
                            v = _mm256_fmadd_pd(ck[k], _mm256_set1_pd(s[a][k]), v);
                        }
                        _mm256_storeu_pd(tp[a].add(at), v);
                    }
                }
            }
            j += CHAINS;
        }
        let mut lanes = [[[0.0; CHAINS]; COLUMNS]; 3];
        for a in 0..3 {
            for k in 0..COLUMNS {
                // SAFETY: `lanes[a][k]` holds eight doubles, two registers' worth.
                unsafe {
                    _mm256_storeu_pd(lanes[a][k].as_mut_ptr(), acc[a][k][0]);
                    _mm256_storeu_pd(lanes[a][k].as_mut_ptr().add(4), acc[a][k][1]);
                }
            }
        }
        update_tail((c, t), s, head, main, assign);
        dots(&lanes, c, y, head, main)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Rows, vectors and updates.
    type Data = ([Vec<f64>; COLUMNS], [Vec<f64>; 3], [Vec<f64>; 3]);

    /// Rows and vectors of `n` entries over several magnitudes.
    fn data(n: usize) -> Data {
        let v =
            |s: f64| (0..n).map(|i| ((i as f64 + s) * 0.37).sin() * 1e3f64.powf(s.cos())).collect::<Vec<_>>();
        ([v(0.0), v(1.0), v(2.0), v(3.0)], [v(4.0), v(5.0), v(6.0)], [v(7.0), v(8.0), v(9.0)])
    }

    fn bits(x: &[f64]) -> Vec<u64> {
        x.iter().map(|v| v.to_bits()).collect()
    }

    /// Every build the processor has gives the portable build's bits, and
    /// the results are the dot products and updates to rounding.
    #[test]
    fn every_build_gives_the_same_bits_and_the_plain_sums() {
        let s = [[0.5, -1.25, 2.0, 3.5], [1.0, 0.0, -0.75, 4.0], [-2.0, 1.5, 0.25, -0.5]];
        for (n, head) in [(0, 0), (1, 0), (1, 1), (3, 2), (4, 4), (5, 4), (8, 0), (13, 3), (64, 4), (257, 4)]
        {
            for assign in [false, true] {
                let (c, y, t0) = data(n);
                let rows = c.each_ref().map(|r| &r[..]);
                let ys = y.each_ref().map(|v| &v[..]);
                let run = |build: usize| {
                    let mut t = t0.clone().map(|v| v[head..].to_vec());
                    let ops = (rows, ys, t.each_mut().map(|v| &mut v[..]));
                    let out = match build {
                        0 => portable(ops, s, head, assign),
                        1 => dot_axpy4x3(ops, s, head, assign),
                        // SAFETY: called only where the processor has the build's features; lengths as asserted.
                        #[cfg(target_arch = "x86_64")]
                        2 => unsafe { wide::dot_axpy4x3(ops, s, head, assign) },
                        // SAFETY: as above.
                        #[cfg(target_arch = "x86_64")]
                        _ => unsafe { avx::dot_axpy4x3(ops, s, head, assign) },
                        #[cfg(not(target_arch = "x86_64"))]
                        _ => unreachable!(),
                    };
                    (out, t)
                };
                #[cfg(target_arch = "x86_64")]
                let builds = [(1, true), (2, crate::simd::wide::enabled()), (3, crate::simd::fused())];
                #[cfg(not(target_arch = "x86_64"))]
                let builds = [(1, true)];
                let (fast, t1) = run(0);
                for (build, _) in builds.into_iter().filter(|b| b.1) {
                    let (out, t) = run(build);
                    assert_eq!(bits(&out.concat()), bits(&fast.concat()), "n = {n}, build {build}");
                    assert!((0..3).all(|a| bits(&t[a]) == bits(&t1[a])), "n = {n}, build {build}");
                }
                for a in 0..3 {
                    for k in 0..COLUMNS {
                        let want: f64 = (0..n).map(|j| c[k][j] * y[a][j]).sum();
                        let scale: f64 = (0..n).map(|j| (c[k][j] * y[a][j]).abs()).sum::<f64>().max(1e-300);
                        assert!(
                            (fast[a][k] - want).abs() <= 1e-14 * scale,
                            "n = {n}: {} vs {want}",
                            fast[a][k]
                        );
                    }
                    for j in head..n {
                        let start = if assign { 0.0 } else { t0[a][j] };
                        let want = start + (0..COLUMNS).map(|k| c[k][j] * s[a][k]).sum::<f64>();
                        assert!(
                            (t1[a][j - head] - want).abs() <= 1e-12 * (1.0 + want.abs()),
                            "n = {n}, j = {j}"
                        );
                    }
                }
            }
        }
    }
}
