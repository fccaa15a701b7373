//! Dense vector primitives with 256-bit fused multiply-adds where the
//! processor has AVX2 and FMA (detected at run time), plain Rust elsewhere:
//! the inner loops of the supernodal solves, of projected Gauss-Seidel and
//! of the factored Delassus product. Each primitive sums in a fixed order,
//! so its result depends only on its inputs (and on which of the two
//! builds runs); a 512-bit build, where the processor has AVX-512, keeps
//! the 256-bit build's sums bit for bit.
//!
//! The stored operand (a matrix column) may be `f64`, `f32`, [`Bf16`] or
//! `i8` ([`Stored`]): a matrix kept in single precision halves its bytes,
//! in bfloat16 quarters them, in 8-bit integers (a factor's columns scaled
//! by a power of two each, [`crate::ldlt::Precision::Int8`]) eighths them;
//! each is widened to double in registers, so products and sums stay in
//! double.

mod symmetric;

pub use symmetric::dot_axpy4x3;

/// Columns the four-column primitives combine.
pub const COLUMNS: usize = 4;

/// A row of four interleaved right-hand sides (three axes padded to one
/// 256-bit register).
pub type Row4 = [f64; 4];

/// Partial sums of a dot product: independent chains (the portable build's
/// the compiler maps to SIMD lanes; the fused builds' two 256-bit
/// registers, or one 512-bit one). Entry `i` of a sum goes to chain `i mod LANES`.
pub const LANES: usize = 8;

/// Whether the AVX2 + FMA primitives can run here.
#[cfg(target_arch = "x86_64")]
pub(crate) fn fused() -> bool {
    is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma")
}

/// A bfloat16 number: the top 16 bits of an `f32` (8 exponent bits, 8
/// significant bits: relative rounding error ≤ 2⁻⁸), for a matrix read
/// where a quarter of `f64`'s bytes matters more than its digits (a
/// preconditioner's factor). Widening is a shift, so the fused primitives
/// load four values with one integer widening (the `half` crate's `bf16`
/// widens to `f64` through a branching software routine).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
#[repr(transparent)]
pub struct Bf16(pub u16);

impl Bf16 {
    /// `v` rounded to the nearest bfloat16 (via `f32`, ties to even).
    pub fn from_f64(v: f64) -> Bf16 {
        let b = (v as f32).to_bits();
        if (v as f32).is_nan() {
            return Bf16((b >> 16) as u16 | 0x0040);
        }
        Bf16((b.wrapping_add(0x7FFF + ((b >> 16) & 1)) >> 16) as u16)
    }
}

impl From<Bf16> for f64 {
    #[inline(always)]
    fn from(v: Bf16) -> f64 {
        f64::from(f32::from_bits(u32::from(v.0) << 16))
    }
}

/// The precision a matrix is stored in: `f64`, or `f32`, [`Bf16`] or `i8`
/// widened on load (`i8` exactly: its integers are the scaled values).
/// Vectors (`y`, `g`, `b`) and all arithmetic are `f64`.
pub trait Stored: Copy + Send + Sync + Into<f64> + 'static {
    /// `y ← y + a x`.
    fn axpy(a: f64, x: &[Self], y: &mut [f64]);
    /// `y ← y + Σₖ aₖ cₖ` for four columns `cₖ` as long as `y`.
    fn axpy4(c: [&[Self]; COLUMNS], a: [f64; COLUMNS], y: &mut [f64]);
    /// `aᵀ b`.
    fn dot(a: &[Self], b: &[f64]) -> f64;
    /// `cₖᵀ g` for four columns `cₖ` as long as `g`, reading `g` once.
    fn dot4(c: [&[Self]; COLUMNS], g: &[f64]) -> [f64; COLUMNS];
    /// [`Self::dot4`] of longer columns whose first entries (a multiple
    /// of [`LANES`] of them) were summed elsewhere: `lanes[k][j]` is the
    /// chain [`Self::lane_axpy`] formed over those entries of column `k`
    /// whose index is `j` modulo [`LANES`]; `c` and `g` are the rest. The
    /// result is [`Self::dot4`] of the whole columns, bit for bit.
    fn dot4_from(c: [&[Self]; COLUMNS], g: &[f64], lanes: &[[f64; LANES]; COLUMNS]) -> [f64; COLUMNS];
    /// `y ← y + a x` as one step of each entry's chain in [`Self::dot4`]'s
    /// lanes (a fused multiply-add where the fused build runs): entry `i`
    /// of `y` a lane of a [`Self::dot4_from`] of its own.
    fn lane_axpy(a: f64, x: &[Self], y: &mut [f64]);
    /// `rowsᵢ ← rowsᵢ − Σₖ cₖ[i] xₖ` for four columns `cₖ` as long as
    /// `rows`, rows of four right-hand sides.
    fn sub_rows4(c: [&[Self]; COLUMNS], x: [Row4; COLUMNS], rows: &mut [Row4]);
    /// `Σᵢ cₖ[i] vᵢ` for four columns `cₖ` as long as `v`, rows of four
    /// right-hand sides, reading `v` once.
    fn rows_dot4(c: [&[Self]; COLUMNS], v: &[Row4]) -> [Row4; COLUMNS];
}

/// Asks the processor to bring the first `PREFETCH_BYTES` of `data` into
/// cache ahead of use (a hint: no effect on results, none off x86-64).
pub fn prefetch<T>(data: &[T]) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        let bytes = std::mem::size_of_val(data).min(PREFETCH_BYTES);
        let base = data.as_ptr().cast::<i8>();
        for offset in (0..bytes).step_by(64) {
            // SAFETY: a prefetch never faults; the address is inside `data`.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(base.add(offset)) };
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = data;
}

/// The most of a slice [`prefetch`] asks for.
pub const PREFETCH_BYTES: usize = 16 << 10;

/// Picks the AVX2 + FMA build of a primitive where the processor has them.
macro_rules! dispatch {
    ($name:ident::<$t:ty>($($arg:expr),*)) => {{
        #[cfg(target_arch = "x86_64")]
        if fused() {
            // SAFETY: the processor has AVX2 and FMA (checked just above).
            return unsafe { avx::$name::<$t>($($arg),*) };
        }
        portable::$name::<$t>($($arg),*)
    }};
}

/// [`dispatch`], taking the 512-bit build first where the processor has
/// AVX-512 (the narrow stored types, whose widening bounds the 256-bit build).
macro_rules! dispatch_wide {
    ($name:ident::<$t:ty>($($arg:expr),*)) => {{
        #[cfg(target_arch = "x86_64")]
        if wide::enabled() {
            // SAFETY: the processor has AVX-512F, AVX2 and FMA (checked just above).
            return unsafe { wide::$name::<$t>($($arg),*) };
        }
        dispatch!($name::<$t>($($arg),*))
    }};
}

macro_rules! stored {
    ($t:ty, $four:ident) => {
        impl Stored for $t {
            fn axpy(a: f64, x: &[$t], y: &mut [f64]) {
                dispatch!(axpy::<$t>(a, x, y))
            }
            fn axpy4(c: [&[$t]; COLUMNS], a: [f64; COLUMNS], y: &mut [f64]) {
                $four!(axpy4::<$t>(c, a, y))
            }
            fn dot(a: &[$t], b: &[f64]) -> f64 {
                dispatch!(dot::<$t>(a, b))
            }
            fn dot4(c: [&[$t]; COLUMNS], g: &[f64]) -> [f64; COLUMNS] {
                $four!(dot4_from::<$t>(c, g, &[[0.0; LANES]; COLUMNS]))
            }
            fn dot4_from(c: [&[$t]; COLUMNS], g: &[f64], lanes: &[[f64; LANES]; COLUMNS]) -> [f64; COLUMNS] {
                $four!(dot4_from::<$t>(c, g, lanes))
            }
            fn lane_axpy(a: f64, x: &[$t], y: &mut [f64]) {
                dispatch!(axpy::<$t>(a, x, y))
            }
            fn sub_rows4(c: [&[$t]; COLUMNS], x: [Row4; COLUMNS], rows: &mut [Row4]) {
                dispatch!(sub_rows4::<$t>(c, x, rows))
            }
            fn rows_dot4(c: [&[$t]; COLUMNS], v: &[Row4]) -> [Row4; COLUMNS] {
                dispatch!(rows_dot4::<$t>(c, v))
            }
        }
    };
}
stored!(f64, dispatch);
stored!(f32, dispatch_wide);
stored!(Bf16, dispatch_wide);
stored!(i8, dispatch_wide);

/// `y ← y + a x`.
pub fn axpy(a: f64, x: &[f64], y: &mut [f64]) {
    f64::axpy(a, x, y)
}

/// `y ← y + Σₖ aₖ cₖ` for four columns `cₖ` as long as `y`.
pub fn axpy4(c: [&[f64]; COLUMNS], a: [f64; COLUMNS], y: &mut [f64]) {
    f64::axpy4(c, a, y)
}

/// `aᵀ b`.
pub fn dot(a: &[f64], b: &[f64]) -> f64 {
    f64::dot(a, b)
}

/// `aᵀ b` with `a` in single precision, products and sums in double
/// (a matrix kept in f32 to halve its bytes, applied to f64 vectors).
pub fn dot_mixed(a: &[f32], b: &[f64]) -> f64 {
    f32::dot(a, b)
}

/// `cₖᵀ g` for four columns `cₖ` as long as `g`, reading `g` once.
pub fn dot4(c: [&[f64]; COLUMNS], g: &[f64]) -> [f64; COLUMNS] {
    f64::dot4(c, g)
}

/// `cₖᵀ gₐ` for four columns `cₖ` and three vectors `gₐ` as long as the
/// columns' reads: `out[a] = dot4(c, gₐ)`, bit for bit. Where the
/// processor has AVX-512, one pass reads each column once for the three
/// vectors, a 512-bit register holding the two 256-bit partial sums that
/// [`dot4`] keeps (the same products, added in the same order).
pub fn dot4x3(c: [&[f64]; COLUMNS], g: [&[f64]; 3]) -> [[f64; COLUMNS]; 3] {
    #[cfg(target_arch = "x86_64")]
    if wide::enabled() {
        // SAFETY: the processor has AVX-512F, AVX2 and FMA (checked just above).
        return unsafe { wide::dot4x3(c, g) };
    }
    g.map(|g| dot4(c, g))
}

/// The primitives in plain Rust: the reference, and the build for other processors.
mod portable {
    use super::{Row4, COLUMNS, LANES};

    pub(super) fn sub_rows4<T: Into<f64> + Copy>(c: [&[T]; COLUMNS], x: [Row4; COLUMNS], rows: &mut [Row4]) {
        for (i, row) in rows.iter_mut().enumerate() {
            for k in 0..4 {
                row[k] -= c[0][i].into() * x[0][k]
                    + c[1][i].into() * x[1][k]
                    + c[2][i].into() * x[2][k]
                    + c[3][i].into() * x[3][k];
            }
        }
    }

    pub(super) fn rows_dot4<T: Into<f64> + Copy>(c: [&[T]; COLUMNS], v: &[Row4]) -> [Row4; COLUMNS] {
        let mut acc = [[0.0; 4]; COLUMNS];
        for (i, vi) in v.iter().enumerate() {
            for q in 0..COLUMNS {
                (0..4).for_each(|k| acc[q][k] += c[q][i].into() * vi[k]);
            }
        }
        acc
    }

    pub(super) fn axpy<T: Into<f64> + Copy>(a: f64, x: &[T], y: &mut [f64]) {
        y.iter_mut().zip(x).for_each(|(yi, &xi)| *yi += a * xi.into());
    }

    pub(super) fn axpy4<T: Into<f64> + Copy>(c: [&[T]; COLUMNS], a: [f64; COLUMNS], y: &mut [f64]) {
        for (i, yi) in y.iter_mut().enumerate() {
            *yi +=
                a[0] * c[0][i].into() + a[1] * c[1][i].into() + a[2] * c[2][i].into() + a[3] * c[3][i].into();
        }
    }

    pub(super) fn dot<T: Into<f64> + Copy>(a: &[T], b: &[f64]) -> f64 {
        dot_from(a, b, [0.0; LANES])
    }

    /// [`dot`] with its chains started at `acc`.
    fn dot_from<T: Into<f64> + Copy>(a: &[T], b: &[f64], mut acc: [f64; LANES]) -> f64 {
        let ((ac, at), (bc, bt)) = (a.as_chunks::<LANES>(), b.as_chunks::<LANES>());
        for (p, q) in ac.iter().zip(bc) {
            for k in 0..LANES {
                acc[k] += p[k].into() * q[k];
            }
        }
        acc.iter().sum::<f64>() + at.iter().zip(bt).map(|(&p, q)| p.into() * q).sum::<f64>()
    }

    pub(super) fn dot4_from<T: Into<f64> + Copy>(
        c: [&[T]; COLUMNS],
        g: &[f64],
        lanes: &[[f64; LANES]; COLUMNS],
    ) -> [f64; COLUMNS] {
        std::array::from_fn(|k| dot_from(&c[k][..g.len()], g, lanes[k]))
    }
}

/// The primitives with 256-bit fused multiply-adds: the columns stream
/// through four-lane registers, two independent accumulators per column.
#[cfg(target_arch = "x86_64")]
mod avx {
    use std::arch::x86_64::*;

    use super::{Bf16, Row4, COLUMNS, LANES};

    /// A stored type loaded four at a time into double lanes.
    pub(super) trait Load: Copy + Into<f64> {
        /// Whether the type is `f64` itself (read in place, not widened):
        /// only `f64`'s implementation sets it, which the row primitives'
        /// pointer casts rely on.
        const DOUBLE: bool = false;

        /// Four values from `p`, widened to double.
        ///
        /// # Safety
        /// `p..p + 4` is readable and the processor has AVX.
        unsafe fn load4(p: *const Self) -> __m256d;

        /// Eight values from `p`, widened: `p..p + 4` and `p + 4..p + 8`.
        ///
        /// # Safety
        /// `p..p + 8` is readable and the processor has AVX.
        #[inline(always)]
        unsafe fn load8(p: *const Self) -> [__m256d; 2] {
            // SAFETY: the caller's contract.
            unsafe { [Self::load4(p), Self::load4(p.add(4))] }
        }
    }

    impl Load for f64 {
        const DOUBLE: bool = true;

        #[inline(always)]
        unsafe fn load4(p: *const f64) -> __m256d {
            // SAFETY: the caller's contract.
            unsafe { _mm256_loadu_pd(p) }
        }
    }

    impl Load for f32 {
        #[inline(always)]
        unsafe fn load4(p: *const f32) -> __m256d {
            // SAFETY: the caller's contract.
            unsafe { _mm256_cvtps_pd(_mm_loadu_ps(p)) }
        }
    }

    impl Load for Bf16 {
        #[inline(always)]
        unsafe fn load4(p: *const Bf16) -> __m256d {
            // SAFETY: the caller's contract; `Bf16` is a transparent `u16`,
            // so four of them are 64 readable bits.
            let bits = unsafe { _mm_loadl_epi64(p.cast::<__m128i>()) };
            // Zeros interleaved below each u16: the f32 whose top half it is, widened.
            unsafe { _mm256_cvtps_pd(_mm_castsi128_ps(_mm_unpacklo_epi16(_mm_setzero_si128(), bits))) }
        }

        #[inline(always)]
        unsafe fn load8(p: *const Bf16) -> [__m256d; 2] {
            // SAFETY: the caller's contract: eight `u16`, 128 readable bits.
            let bits = unsafe { _mm_loadu_si128(p.cast::<__m128i>()) };
            let zero = _mm_setzero_si128();
            let widen = |v: __m128i| unsafe { _mm256_cvtps_pd(_mm_castsi128_ps(v)) };
            [widen(_mm_unpacklo_epi16(zero, bits)), widen(_mm_unpackhi_epi16(zero, bits))]
        }
    }

    /// `Σₖ cₖ[i] xₖ` of four columns' row `i` and four rows in registers.
    ///
    /// # Safety
    /// Row `i` of each column is readable.
    #[target_feature(enable = "avx2,fma")]
    unsafe fn combine(c: [*const f64; COLUMNS], i: usize, x: &[__m256d; COLUMNS]) -> __m256d {
        // SAFETY: the caller's contract.
        let b = |k: usize| unsafe { _mm256_broadcast_sd(&*c[k].add(i)) };
        let acc = _mm256_mul_pd(b(0), x[0]);
        _mm256_fmadd_pd(b(3), x[3], _mm256_fmadd_pd(b(2), x[2], _mm256_fmadd_pd(b(1), x[1], acc)))
    }

    impl Load for i8 {
        #[inline(always)]
        unsafe fn load4(p: *const i8) -> __m256d {
            // SAFETY: the caller's contract: four `i8`, 32 readable bits.
            let bits = unsafe { _mm_cvtsi32_si128(p.cast::<i32>().read_unaligned()) };
            _mm256_cvtepi32_pd(_mm_cvtepi8_epi32(bits))
        }
    }

    /// Rows the row primitives widen a narrow stored type for at a time:
    /// four columns of them in double are 8 kB, in the L1 cache.
    const WIDEN_ROWS: usize = 256;

    /// Four columns read in double by pieces of rows: the stored columns
    /// themselves for `f64` (one piece), else each piece of at most
    /// [`WIDEN_ROWS`] rows widened into a buffer, four values at a time
    /// (one shuffle per four values, where widening each value as the row
    /// primitives read it takes one each).
    struct Columns<T> {
        c: [*const T; COLUMNS],
        n: usize,
        buf: std::mem::MaybeUninit<[[f64; WIDEN_ROWS]; COLUMNS]>,
    }

    impl<T: Load> Columns<T> {
        /// The first row of each piece.
        fn starts(&self) -> std::iter::StepBy<std::ops::Range<usize>> {
            (0..self.n).step_by(if T::DOUBLE { self.n.max(1) } else { WIDEN_ROWS })
        }

        /// The piece from row `start`: its length and its columns in double.
        ///
        /// # Safety
        /// Each column holds `n` readable rows; the processor has AVX2.
        #[inline(always)]
        unsafe fn piece(&mut self, start: usize) -> (usize, [*const f64; COLUMNS]) {
            if T::DOUBLE {
                // SAFETY: the caller's contract.
                return (self.n, self.c.map(|p| unsafe { p.add(start) }.cast::<f64>()));
            }
            let len = WIDEN_ROWS.min(self.n - start);
            let quads = len - len % 4;
            let buf = self.buf.as_mut_ptr().cast::<[f64; WIDEN_ROWS]>();
            for (k, col) in self.c.iter().enumerate() {
                // SAFETY: `buf` holds `COLUMNS` rows of `WIDEN_ROWS` values;
                // rows `start..start + len` of the column are readable.
                unsafe {
                    let out = buf.add(k).cast::<f64>();
                    for j in (0..quads).step_by(4) {
                        _mm256_storeu_pd(out.add(j), T::load4(col.add(start + j)));
                    }
                    for j in quads..len {
                        *out.add(j) = (*col.add(start + j)).into();
                    }
                }
            }
            // SAFETY: as above.
            (len, std::array::from_fn(|k| unsafe { buf.add(k).cast::<f64>() }.cast_const()))
        }
    }

    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn sub_rows4<T: Load>(c: [&[T]; COLUMNS], x: [Row4; COLUMNS], rows: &mut [Row4]) {
        let n = rows.len();
        let mut cols = Columns { c: c.map(|col| col[..n].as_ptr()), n, buf: std::mem::MaybeUninit::uninit() };
        // SAFETY: a `Row4` is four readable doubles.
        let xv = x.map(|r| unsafe { _mm256_loadu_pd(r.as_ptr()) });
        for start in cols.starts() {
            // SAFETY: each column holds `n` rows (sliced above); AVX2 is this
            // function's feature.
            let (len, c) = unsafe { cols.piece(start) };
            for (i, row) in rows[start..start + len].iter_mut().enumerate() {
                // SAFETY: each column of the piece holds its `len` rows.
                let sum = unsafe { combine(c, i, &xv) };
                let p = row.as_mut_ptr();
                // SAFETY: a `Row4` is four writable doubles.
                unsafe { _mm256_storeu_pd(p, _mm256_sub_pd(_mm256_loadu_pd(p), sum)) };
            }
        }
    }

    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn rows_dot4<T: Load>(c: [&[T]; COLUMNS], v: &[Row4]) -> [Row4; COLUMNS] {
        let n = v.len();
        let mut cols = Columns { c: c.map(|col| col[..n].as_ptr()), n, buf: std::mem::MaybeUninit::uninit() };
        // Two accumulators per column (even and odd rows): eight independent
        // chains (pieces start at even rows, so each chain keeps its rows).
        let mut acc = [[_mm256_setzero_pd(); COLUMNS]; 2];
        for start in cols.starts() {
            // SAFETY: each column holds `n` rows (sliced above); AVX2 is this
            // function's feature.
            let (len, c) = unsafe { cols.piece(start) };
            let rows = &v[start..start + len];
            // SAFETY: each column of the piece holds its `len` rows.
            let add = |a: &mut [__m256d; COLUMNS], i: usize| unsafe {
                // A `Row4` is four readable doubles.
                let r = _mm256_loadu_pd(rows[i].as_ptr());
                for k in 0..COLUMNS {
                    a[k] = _mm256_fmadd_pd(_mm256_broadcast_sd(&*c[k].add(i)), r, a[k]);
                }
            };
            // The two sets named apart, not indexed by parity: kept in registers.
            let [even, odd] = &mut acc;
            for i in (0..len - len % 2).step_by(2) {
                add(even, i);
                add(odd, i + 1);
            }
            if len % 2 == 1 {
                add(even, len - 1);
            }
        }
        let mut out = [[0.0; 4]; COLUMNS];
        for k in 0..COLUMNS {
            // SAFETY: a `Row4` is four writable doubles.
            unsafe { _mm256_storeu_pd(out[k].as_mut_ptr(), _mm256_add_pd(acc[0][k], acc[1][k])) };
        }
        out
    }

    /// Sum of the four lanes.
    #[target_feature(enable = "avx2,fma")]
    pub(super) fn sum(v: __m256d) -> f64 {
        let pair = _mm_add_pd(_mm256_castpd256_pd128(v), _mm256_extractf128_pd::<1>(v));
        _mm_cvtsd_f64(_mm_add_sd(pair, _mm_unpackhi_pd(pair, pair)))
    }

    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn axpy<T: Load>(a: f64, x: &[T], y: &mut [f64]) {
        let n = y.len();
        assert!(x.len() >= n);
        let (av, (xp, yp)) = (_mm256_set1_pd(a), (x.as_ptr(), y.as_mut_ptr()));
        let mut i = 0;
        while i + 8 <= n {
            // SAFETY: i + 8 ≤ n ≤ both lengths.
            unsafe {
                let [x0, x1] = T::load8(xp.add(i));
                _mm256_storeu_pd(yp.add(i), _mm256_fmadd_pd(x0, av, _mm256_loadu_pd(yp.add(i))));
                _mm256_storeu_pd(yp.add(i + 4), _mm256_fmadd_pd(x1, av, _mm256_loadu_pd(yp.add(i + 4))));
            }
            i += 8;
        }
        while i + 4 <= n {
            // SAFETY: i + 4 ≤ n ≤ both lengths.
            unsafe {
                _mm256_storeu_pd(
                    yp.add(i),
                    _mm256_fmadd_pd(T::load4(xp.add(i)), av, _mm256_loadu_pd(yp.add(i))),
                )
            };
            i += 4;
        }
        for k in i..n {
            y[k] = a.mul_add(x[k].into(), y[k]);
        }
    }

    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn axpy4<T: Load>(c: [&[T]; COLUMNS], a: [f64; COLUMNS], y: &mut [f64]) {
        let n = y.len();
        assert!(c.iter().all(|col| col.len() >= n));
        let av = a.map(|v| _mm256_set1_pd(v));
        let (cp, yp) = (c.map(|col| col.as_ptr()), y.as_mut_ptr());
        let mut i = 0;
        // Eight rows per pass (each row's chain as in the four-row pass below).
        while i + 8 <= n {
            // SAFETY: i + 8 ≤ n ≤ every length.
            unsafe {
                let (mut r0, mut r1) = (_mm256_loadu_pd(yp.add(i)), _mm256_loadu_pd(yp.add(i + 4)));
                for k in 0..COLUMNS {
                    let [c0, c1] = T::load8(cp[k].add(i));
                    r0 = _mm256_fmadd_pd(c0, av[k], r0);
                    r1 = _mm256_fmadd_pd(c1, av[k], r1);
                }
                _mm256_storeu_pd(yp.add(i), r0);
                _mm256_storeu_pd(yp.add(i + 4), r1);
            }
            i += 8;
        }
        while i + 4 <= n {
            // SAFETY: i + 4 ≤ n ≤ every length.
            unsafe {
                let mut r = _mm256_loadu_pd(yp.add(i));
                for k in 0..COLUMNS {
                    r = _mm256_fmadd_pd(T::load4(cp[k].add(i)), av[k], r);
                }
                _mm256_storeu_pd(yp.add(i), r);
            }
            i += 4;
        }
        // The same fused chain as the lanes: a row's result does not depend on where it falls.
        for r in i..n {
            y[r] = (0..COLUMNS).fold(y[r], |acc, k| c[k][r].into().mul_add(a[k], acc));
        }
    }

    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn dot<T: Load>(a: &[T], b: &[f64]) -> f64 {
        let n = a.len();
        assert!(b.len() >= n);
        let (ap, bp) = (a.as_ptr(), b.as_ptr());
        let (mut s0, mut s1) = (_mm256_setzero_pd(), _mm256_setzero_pd());
        let mut i = 0;
        while i + 8 <= n {
            // SAFETY: i + 8 ≤ n ≤ both lengths.
            unsafe {
                let [a0, a1] = T::load8(ap.add(i));
                s0 = _mm256_fmadd_pd(a0, _mm256_loadu_pd(bp.add(i)), s0);
                s1 = _mm256_fmadd_pd(a1, _mm256_loadu_pd(bp.add(i + 4)), s1);
            }
            i += 8;
        }
        sum(_mm256_add_pd(s0, s1)) + (i..n).map(|k| a[k].into() * b[k]).sum::<f64>()
    }

    /// `dot4` with each column's chains started at `lanes` (its two
    /// registers: lanes 0–3 and 4–7).
    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn dot4_from<T: Load>(
        c: [&[T]; COLUMNS],
        g: &[f64],
        lanes: &[[f64; LANES]; COLUMNS],
    ) -> [f64; COLUMNS] {
        let n = g.len();
        assert!(c.iter().all(|col| col.len() >= n));
        let (cp, gp) = (c.map(|col| col.as_ptr()), g.as_ptr());
        // SAFETY: each lane array holds eight doubles.
        let mut acc =
            lanes.map(|l| unsafe { [_mm256_loadu_pd(l.as_ptr()), _mm256_loadu_pd(l.as_ptr().add(4))] });
        let mut i = 0;
        while i + 8 <= n {
            // SAFETY: i + 8 ≤ n ≤ every length.
            unsafe {
                let (g0, g1) = (_mm256_loadu_pd(gp.add(i)), _mm256_loadu_pd(gp.add(i + 4)));
                for k in 0..COLUMNS {
                    let [c0, c1] = T::load8(cp[k].add(i));
                    acc[k][0] = _mm256_fmadd_pd(c0, g0, acc[k][0]);
                    acc[k][1] = _mm256_fmadd_pd(c1, g1, acc[k][1]);
                }
            }
            i += 8;
        }
        let mut out = [0.0; COLUMNS];
        for k in 0..COLUMNS {
            out[k] =
                sum(_mm256_add_pd(acc[k][0], acc[k][1])) + (i..n).map(|r| c[k][r].into() * g[r]).sum::<f64>();
        }
        out
    }
}

/// Primitives in 512-bit registers whose sums are those of the 256-bit
/// build: a register's halves are the 256-bit build's two accumulators.
#[cfg(target_arch = "x86_64")]
pub(crate) mod wide {
    use super::{Bf16, COLUMNS, LANES};
    use std::arch::x86_64::*;

    /// Whether these primitives can run here (AVX-512F, AVX2 and FMA).
    pub(crate) fn enabled() -> bool {
        is_x86_feature_detected!("avx512f") && super::fused()
    }

    /// A narrow stored type loaded eight at a time into one 512-bit
    /// register of doubles: one widening per eight values where the
    /// 256-bit build spends two (bfloat16: four), all on the shuffle port,
    /// which bounded a sweep over a factor read in bfloat16 below the
    /// memory's rate.
    pub(super) trait Load8: super::avx::Load {
        /// Eight values from `p`, widened to double.
        ///
        /// # Safety
        /// `p..p + 8` is readable and the processor has AVX-512F.
        unsafe fn load8_wide(p: *const Self) -> __m512d;
    }

    impl Load8 for f32 {
        #[inline(always)]
        unsafe fn load8_wide(p: *const f32) -> __m512d {
            // SAFETY: the caller's contract.
            unsafe { _mm512_cvtps_pd(_mm256_loadu_ps(p)) }
        }
    }

    impl Load8 for Bf16 {
        #[inline(always)]
        unsafe fn load8_wide(p: *const Bf16) -> __m512d {
            // SAFETY: the caller's contract: eight `u16`, 128 readable bits.
            let bits = unsafe { _mm_loadu_si128(p.cast::<__m128i>()) };
            // Each u16 moved to the top half of an f32, then widened.
            let top = _mm256_slli_epi32::<16>(_mm256_cvtepu16_epi32(bits));
            _mm512_cvtps_pd(_mm256_castsi256_ps(top))
        }
    }

    impl Load8 for i8 {
        #[inline(always)]
        unsafe fn load8_wide(p: *const i8) -> __m512d {
            // SAFETY: the caller's contract: eight `i8`, 64 readable bits.
            let bits = unsafe { _mm_loadl_epi64(p.cast::<__m128i>()) };
            _mm512_cvtepi32_pd(_mm256_cvtepi8_epi32(bits))
        }
    }

    /// `avx::axpy4` eight rows to a register: each row's chain of fused
    /// multiply-adds is the 256-bit build's, so are the bits.
    #[target_feature(enable = "avx512f,avx2,fma")]
    pub(super) unsafe fn axpy4<T: Load8>(c: [&[T]; COLUMNS], a: [f64; COLUMNS], y: &mut [f64]) {
        let n = y.len();
        assert!(c.iter().all(|col| col.len() >= n));
        let av = [_mm512_set1_pd(a[0]), _mm512_set1_pd(a[1]), _mm512_set1_pd(a[2]), _mm512_set1_pd(a[3])];
        let (cp, yp) = ([c[0].as_ptr(), c[1].as_ptr(), c[2].as_ptr(), c[3].as_ptr()], y.as_mut_ptr());
        let mut i = 0;
        while i + 8 <= n {
            // SAFETY: i + 8 ≤ n ≤ every length.
            unsafe {
                let mut r = _mm512_loadu_pd(yp.add(i));
                for k in 0..COLUMNS {
                    r = _mm512_fmadd_pd(T::load8_wide(cp[k].add(i)), av[k], r);
                }
                _mm512_storeu_pd(yp.add(i), r);
            }
            i += 8;
        }
        let rest = [&c[0][i..], &c[1][i..], &c[2][i..], &c[3][i..]];
        // SAFETY: the processor has AVX2 and FMA (this function's features).
        unsafe { super::avx::axpy4(rest, a, &mut y[i..]) }
    }

    /// `avx::dot4_from` with each column's two 256-bit accumulators as the
    /// halves of one register: the same products, added in the same order.
    #[target_feature(enable = "avx512f,avx2,fma")]
    pub(super) unsafe fn dot4_from<T: Load8>(
        c: [&[T]; COLUMNS],
        g: &[f64],
        lanes: &[[f64; LANES]; COLUMNS],
    ) -> [f64; COLUMNS] {
        let n = g.len();
        assert!(c.iter().all(|col| col.len() >= n));
        let (cp, gp) = ([c[0].as_ptr(), c[1].as_ptr(), c[2].as_ptr(), c[3].as_ptr()], g.as_ptr());
        // SAFETY: each lane array holds eight doubles.
        let mut acc = [0, 1, 2, 3].map(|k| unsafe { _mm512_loadu_pd(lanes[k].as_ptr()) });
        let mut i = 0;
        while i + 8 <= n {
            // SAFETY: i + 8 ≤ n ≤ every length.
            unsafe {
                let gv = _mm512_loadu_pd(gp.add(i));
                for k in 0..COLUMNS {
                    acc[k] = _mm512_fmadd_pd(T::load8_wide(cp[k].add(i)), gv, acc[k]);
                }
            }
            i += 8;
        }
        let mut out = [0.0; COLUMNS];
        for k in 0..COLUMNS {
            let v = acc[k];
            let halves = _mm256_add_pd(_mm512_castpd512_pd256(v), _mm512_extractf64x4_pd::<1>(v));
            out[k] = super::avx::sum(halves)
                + c[k][i..n].iter().zip(&g[i..n]).map(|(&x, y)| x.into() * y).sum::<f64>();
        }
        out
    }

    #[target_feature(enable = "avx512f,avx2,fma")]
    pub(super) unsafe fn dot4x3(c: [&[f64]; COLUMNS], g: [&[f64]; 3]) -> [[f64; COLUMNS]; 3] {
        let n = g[0].len();
        assert!(g.iter().all(|v| v.len() == n) && c.iter().all(|col| col.len() >= n));
        let (cp, gp) = (c.map(|col| col.as_ptr()), g.map(|v| v.as_ptr()));
        let mut acc = [[_mm512_setzero_pd(); COLUMNS]; 3];
        let mut i = 0;
        while i + 8 <= n {
            // SAFETY: i + 8 ≤ n ≤ every length.
            unsafe {
                // (No closure: it would not inherit this function's features.)
                let gv = [
                    _mm512_loadu_pd(gp[0].add(i)),
                    _mm512_loadu_pd(gp[1].add(i)),
                    _mm512_loadu_pd(gp[2].add(i)),
                ];
                for k in 0..COLUMNS {
                    let ck = _mm512_loadu_pd(cp[k].add(i));
                    for a in 0..3 {
                        acc[a][k] = _mm512_fmadd_pd(ck, gv[a], acc[a][k]);
                    }
                }
            }
            i += 8;
        }
        let mut out = [[0.0; COLUMNS]; 3];
        for a in 0..3 {
            for k in 0..COLUMNS {
                let v = acc[a][k];
                let halves = _mm256_add_pd(_mm512_castpd512_pd256(v), _mm512_extractf64x4_pd::<1>(v));
                // SAFETY: the processor has AVX2 and FMA (this function's features).
                out[a][k] = super::avx::sum(halves)
                    + c[k][i..n].iter().zip(&g[a][i..n]).map(|(x, y)| x * y).sum::<f64>();
            }
        }
        out
    }
}

#[cfg(test)]
mod tests;
