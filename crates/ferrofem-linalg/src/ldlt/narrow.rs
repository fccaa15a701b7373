//! `Y += L A` for a chunk of columns of a panel kept in `f32` and a few
//! right-hand sides: the isodof solve's update for a step's handful of new
//! columns ([`super::isodof`]). Each entry of `L` is read once, widened in
//! a register and multiplied into every side; a product on a widened copy
//! writes and re-reads the chunk in double, and its kernels are built for
//! many sides. Each `Y[i, j]` gets `Σ_c L[i, c] A[c, j]`, summed in the
//! order of `c` with fused multiply-adds from zero, then added: the same
//! bits in the 512-bit, 256-bit and portable builds.

/// Most right-hand sides [`add_narrow`] takes.
pub(super) const NARROW: usize = 16;

/// `out[j·ld_out + i] += Σ_c l[c·ld + i] · a[c·k + j]` for `i < n`,
/// `j < k ≤ NARROW`, `c < a.len() / k`: `l` holds the chunk's columns from
/// its first row (stride `ld`), `a` its `cw × k` sides row by row.
pub(super) fn add_narrow(
    l: &[f32],
    ld: usize,
    n: usize,
    a: &[f64],
    k: usize,
    out: &mut [f64],
    ld_out: usize,
) {
    assert!((1..=NARROW).contains(&k) && a.len().is_multiple_of(k), "add_narrow: {k} sides");
    let cw = a.len() / k;
    assert!(cw == 0 || l.len() >= (cw - 1) * ld + n, "add_narrow: the chunk's columns");
    assert!(out.len() >= (k - 1) * ld_out + n, "add_narrow: the sides' rows");
    macro_rules! sides {
        ($($k:literal),*) => {
            match k {
                $($k => run::<$k>(l, ld, n, a, out, ld_out),)*
                _ => unreachable!(),
            }
        };
    }
    sides!(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16)
}

/// The operands of [`add_narrow`], its lengths asserted.
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
struct Chunk<'a> {
    l: &'a [f32],
    ld: usize,
    n: usize,
    a: &'a [f64],
    out: &'a mut [f64],
    ld_out: usize,
}

/// [`add_narrow`] for `K` sides: the widest build the processor has, then
/// the rows it leaves one by one.
fn run<const K: usize>(l: &[f32], ld: usize, n: usize, a: &[f64], out: &mut [f64], ld_out: usize) {
    #[allow(unused_mut)]
    let mut done = 0;
    #[cfg(target_arch = "x86_64")]
    {
        let chunk = Chunk { l, ld, n, a, out: &mut *out, ld_out };
        if crate::simd::wide::enabled() {
            // SAFETY: AVX-512F checked; lengths asserted by `add_narrow`.
            done = unsafe { x86::rows8::<K>(chunk) };
        } else if crate::simd::fused() {
            // SAFETY: AVX2 and FMA checked; lengths asserted by `add_narrow`.
            done = unsafe { x86::rows4::<K>(chunk) };
        }
    }
    let cw = a.len() / K;
    for i in done..n {
        for j in 0..K {
            let s = (0..cw).fold(0.0, |s: f64, c| f64::from(l[c * ld + i]).mul_add(a[c * K + j], s));
            out[j * ld_out + i] += s;
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::*;

    /// A register of doubles: the operations of [`rows`] at one width.
    trait Lanes {
        const LANES: usize;
        type V: Copy;
        /// # Safety
        /// The processor has the width's features.
        unsafe fn zero() -> Self::V;
        /// `LANES` values from `p`, widened.
        ///
        /// # Safety
        /// As [`Lanes::zero`], and `p..p + LANES` is readable.
        unsafe fn load(p: *const f32) -> Self::V;
        /// `acc + v · a`, fused.
        ///
        /// # Safety
        /// As [`Lanes::zero`].
        unsafe fn fma(v: Self::V, a: f64, acc: Self::V) -> Self::V;
        /// `p[..LANES] += acc`.
        ///
        /// # Safety
        /// As [`Lanes::zero`], and `p..p + LANES` is writable.
        unsafe fn add_to(p: *mut f64, acc: Self::V);
    }

    struct Wide;
    struct Narrow;

    /// [`Lanes`] for one width, from its intrinsics (double register,
    /// widening load, fused multiply-add, broadcast, load, add, store).
    macro_rules! lanes {
        ($t:ty, $n:literal, $v:ty, $zero:ident, $widen:ident($load_ps:ident), $fma:ident, $set1:ident,
         $load:ident, $add:ident, $store:ident) => {
            impl Lanes for $t {
                const LANES: usize = $n;
                type V = $v;
                #[inline(always)]
                unsafe fn zero() -> $v {
                    $zero()
                }
                #[inline(always)]
                unsafe fn load(p: *const f32) -> $v {
                    // SAFETY: the caller's contract.
                    unsafe { $widen($load_ps(p)) }
                }
                #[inline(always)]
                unsafe fn fma(v: $v, a: f64, acc: $v) -> $v {
                    $fma(v, $set1(a), acc)
                }
                #[inline(always)]
                unsafe fn add_to(p: *mut f64, acc: $v) {
                    // SAFETY: the caller's contract.
                    unsafe { $store(p, $add($load(p), acc)) }
                }
            }
        };
    }

    lanes!(
        Wide,
        8,
        __m512d,
        _mm512_setzero_pd,
        _mm512_cvtps_pd(_mm256_loadu_ps),
        _mm512_fmadd_pd,
        _mm512_set1_pd,
        _mm512_loadu_pd,
        _mm512_add_pd,
        _mm512_storeu_pd
    );
    lanes!(
        Narrow,
        4,
        __m256d,
        _mm256_setzero_pd,
        _mm256_cvtps_pd(_mm_loadu_ps),
        _mm256_fmadd_pd,
        _mm256_set1_pd,
        _mm256_loadu_pd,
        _mm256_add_pd,
        _mm256_storeu_pd
    );

    /// The rows `LANES` at a time (one register per side); returns how
    /// many rows it did. Inlined into a caller with the width's features.
    ///
    /// # Safety
    /// The processor has `R`'s features; the lengths are those
    /// `add_narrow` asserts.
    #[inline(always)]
    unsafe fn rows<R: Lanes, const K: usize>(chunk: super::Chunk) -> usize {
        let super::Chunk { l, ld, n, a, out, ld_out } = chunk;
        let cw = a.len() / K;
        let (lp, op) = (l.as_ptr(), out.as_mut_ptr());
        let mut i = 0;
        while i + R::LANES <= n {
            // SAFETY: the features are the caller's; row i + LANES − 1 < n
            // of column c < cw lies in `l`, of side j < K in `out`.
            unsafe {
                let mut acc = [R::zero(); K];
                for c in 0..cw {
                    let v = R::load(lp.add(c * ld + i));
                    for (j, s) in acc.iter_mut().enumerate() {
                        *s = R::fma(v, a[c * K + j], *s);
                    }
                }
                for (j, s) in acc.iter().enumerate() {
                    R::add_to(op.add(j * ld_out + i), *s);
                }
            }
            i += R::LANES;
        }
        i
    }

    /// [`rows`] eight at a time.
    ///
    /// # Safety
    /// The processor has AVX-512F; the lengths are those `add_narrow` asserts.
    #[target_feature(enable = "avx512f")]
    pub(super) unsafe fn rows8<const K: usize>(chunk: super::Chunk) -> usize {
        // SAFETY: the caller's contract.
        unsafe { rows::<Wide, K>(chunk) }
    }

    /// [`rows`] four at a time.
    ///
    /// # Safety
    /// The processor has AVX2 and FMA; the lengths are those `add_narrow` asserts.
    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn rows4<const K: usize>(chunk: super::Chunk) -> usize {
        // SAFETY: the caller's contract.
        unsafe { rows::<Narrow, K>(chunk) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every build gives the plain loop's bits, for each count of sides,
    /// at row counts that leave remainders (the 256-bit build checked
    /// beside the one the processor picks).
    #[test]
    fn narrow_update_is_the_ordered_sum_in_every_build() {
        let (ld, cw) = (45, 7);
        let l: Vec<f32> = (0..ld * cw).map(|x| ((x * 7919) % 211) as f32 / 97.0 - 1.0).collect();
        for k in 1..=NARROW {
            let a: Vec<f64> = (0..cw * k).map(|x| ((x * 31) % 17) as f64 * 0.37 - 2.5).collect();
            for n in [0, 3, 8, 13, 40] {
                let ld_out = n + 2;
                let start: Vec<f64> = (0..k * ld_out).map(|x| x as f64 * 0.01).collect();
                let mut out = start.clone();
                add_narrow(&l, ld, n, &a, k, &mut out, ld_out);
                // The 256-bit build where the processor also has the 512-bit one.
                #[cfg(target_arch = "x86_64")]
                if crate::simd::fused() {
                    let mut narrow = start.clone();
                    // SAFETY: AVX2 and FMA checked; the lengths are `add_narrow`'s.
                    let chunk = Chunk { l: &l, ld, n, a: &a, out: &mut narrow, ld_out };
                    let n4 = match k {
                        4 => unsafe { super::x86::rows4::<4>(chunk) },
                        7 => unsafe { super::x86::rows4::<7>(chunk) },
                        _ => 0,
                    };
                    for j in 0..k {
                        for i in 0..n4 {
                            assert_eq!(
                                narrow[j * ld_out + i].to_bits(),
                                out[j * ld_out + i].to_bits(),
                                "256-bit, k {k}"
                            );
                        }
                    }
                }
                for j in 0..k {
                    for i in 0..ld_out {
                        let s =
                            (0..cw).fold(0.0, |s: f64, c| f64::from(l[c * ld + i]).mul_add(a[c * k + j], s));
                        let expected = start[j * ld_out + i] + if i < n { s } else { 0.0 };
                        assert_eq!(
                            out[j * ld_out + i].to_bits(),
                            expected.to_bits(),
                            "k {k}, n {n}, ({i}, {j})"
                        );
                    }
                }
            }
        }
    }
}
