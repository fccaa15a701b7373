//! A factor's values rounded for a preconditioner only: bfloat16, or 8-bit
//! integers with a power-of-two scale per block of rows of each column
//! ([`Precision::Int8`]), made from the double or single values on every
//! thread, into the storage of the copy they replace where they can.

use rayon::prelude::*;

use super::layout::SupernodeLayout;
use super::panel_kernels::SCALE_ROWS;
use super::Precision;
use crate::simd::Bf16;

/// A factor's values rounded for a preconditioner only
/// ([`Precision::Bfloat16`], [`Precision::Int8`]).
#[derive(Debug)]
pub(super) enum Rounded {
    /// Each value rounded to bfloat16: 2 bytes an entry.
    Bfloat16(Vec<Bf16>),
    /// Each column of `L` below its diagonal as 8-bit integers, each block
    /// of [`SCALE_ROWS`] rows times its power-of-two scale ([`round_int8`]):
    /// a byte an entry and 4 bytes of scale a block (the diagonal blocks'
    /// upper halves, never read, are zeros).
    Int8 {
        /// The integers, in the supernodal layout of the values.
        values: Vec<i8>,
        /// The scales, supernode by supernode, column by column.
        scales: Vec<f32>,
        /// Where each supernode's scales start, and their count at the end.
        scale_ptr: Vec<usize>,
    },
}

impl Rounded {
    /// The precision of the copy.
    pub(super) fn precision(&self) -> Precision {
        match self {
            Rounded::Bfloat16(_) => Precision::Bfloat16,
            Rounded::Int8 { .. } => Precision::Int8,
        }
    }

    /// `source` (the supernodal values, in double or single) rounded to
    /// `precision`, into `reuse`'s storage where it is a copy of that
    /// precision and length (no memory faulted in anew), on every thread.
    ///
    /// # Panics
    /// If `precision` is not one a preconditioner copy is rounded to.
    pub(super) fn round<T: Copy + Into<f64> + Sync>(
        precision: Precision,
        source: &[T],
        layout: &SupernodeLayout,
        reuse: Option<Rounded>,
    ) -> Rounded {
        let len = source.len();
        match precision {
            Precision::Bfloat16 => {
                let mut copy = match reuse {
                    Some(Rounded::Bfloat16(v)) if v.len() == len => v,
                    _ => vec![Bf16::default(); len],
                };
                copy.par_iter_mut().zip(source.par_iter()).for_each(|(b, &v)| *b = Bf16::from_f64(v.into()));
                Rounded::Bfloat16(copy)
            }
            Precision::Int8 => {
                let scale_ptr = scale_ptr(layout);
                let count = *scale_ptr.last().unwrap_or(&0);
                let (mut values, mut scales) = match reuse {
                    Some(Rounded::Int8 { values, scales, .. })
                        if values.len() == len && scales.len() == count =>
                    {
                        (values, scales)
                    }
                    _ => (vec![0i8; len], vec![0.0; count]),
                };
                round_panels_int8(source, layout, &scale_ptr, &mut values, &mut scales);
                Rounded::Int8 { values, scales, scale_ptr }
            }
            p => panic!("a preconditioner copy is bfloat16 or int8, not {p:?}"),
        }
    }
}

/// Blocks of [`SCALE_ROWS`] rows in each column of supernode `s`'s panel.
pub(super) fn scale_blocks(layout: &SupernodeLayout, s: usize) -> usize {
    (layout.width(s) + layout.pattern(s).len()).div_ceil(SCALE_ROWS)
}

/// Where each supernode's scales start (its columns times
/// [`scale_blocks`]), and their count at the end.
fn scale_ptr(layout: &SupernodeLayout) -> Vec<usize> {
    let mut ptr = Vec::with_capacity(layout.len() + 1);
    ptr.push(0);
    for s in 0..layout.len() {
        ptr.push(ptr[s] + layout.width(s) * scale_blocks(layout, s));
    }
    ptr
}

/// Each supernode's panel of `source` rounded by [`round_panel_int8`], the
/// supernodes on every thread.
fn round_panels_int8<T: Copy + Into<f64> + Sync>(
    source: &[T],
    layout: &SupernodeLayout,
    scale_ptr: &[usize],
    values: &mut [i8],
    scales: &mut [f32],
) {
    let mut panels = Vec::with_capacity(layout.len());
    let (mut rest, mut rest_scales, mut offset) = (values, scales, 0);
    for s in 0..layout.len() {
        let (w, ld) = (layout.width(s), layout.width(s) + layout.pattern(s).len());
        let start = layout.value_ptr[s];
        let (gap, tail) = std::mem::take(&mut rest).split_at_mut(start - offset);
        gap.fill(0);
        let (panel, tail) = tail.split_at_mut(ld * w);
        offset = start + ld * w;
        let (panel_scales, scales_tail) =
            std::mem::take(&mut rest_scales).split_at_mut(scale_ptr[s + 1] - scale_ptr[s]);
        panels.push((&source[start..start + ld * w], ld, panel, panel_scales));
        (rest, rest_scales) = (tail, scales_tail);
    }
    panels
        .into_par_iter()
        .for_each(|(source, ld, panel, scales)| round_panel_int8(source, ld, panel, scales));
}

/// A panel (column-major, `ld` rows) rounded block by block of
/// [`SCALE_ROWS`] rows of each column, below the diagonal only (the rows
/// above and on it are zeros: the solves never read them).
pub(super) fn round_panel_int8<T: Copy + Into<f64>>(
    source: &[T],
    ld: usize,
    out: &mut [i8],
    scales: &mut [f32],
) {
    let blocks = ld.div_ceil(SCALE_ROWS);
    for (j, column) in out.chunks_exact_mut(ld.max(1)).enumerate() {
        for b in 0..blocks {
            // The block's rows below the diagonal: `lo..hi`.
            let hi = ((b + 1) * SCALE_ROWS).min(ld);
            let lo = (j + 1).clamp(b * SCALE_ROWS, hi);
            column[b * SCALE_ROWS..lo].fill(0);
            let scale = round_int8(&source[j * ld + lo..j * ld + hi], &mut column[lo..hi]);
            // A power of two in f32's range wherever the factor's entries are.
            scales[j * blocks + b] = scale as f32;
        }
    }
}

/// `values` as 8-bit integers times one power-of-two scale, returned: the
/// smallest that keeps the largest magnitude within ±127, each value
/// rounded to the nearest multiple, ties to even (error ≤ half the scale,
/// ≤ 2⁻⁸ of the largest). All zeros get the scale 1; a value that is not
/// finite gives a scale that is not, so a solve reading it fails the
/// callers' finite checks instead of quietly losing the column. Branch-free
/// passes the compiler vectorizes (no call to `round`): the 60k factor's
/// 0.2 G entries in about 0.1 s.
pub(super) fn round_int8<T: Copy + Into<f64>>(values: &[T], out: &mut [i8]) -> f64 {
    /// Adding 1.5 · 2⁵² to an `f64` below 2⁵¹ rounds it to an integer (ties
    /// to even) held in the low bits of the sum's significand, two's
    /// complement: its low byte is the value for −128..127.
    const ROUND: f64 = 6_755_399_441_055_744.0;
    // The largest magnitude, and `Σ v · 0`: NaN exactly when a `v` is
    // infinite or NaN; in eight independent lanes (one chain of `max` or
    // `+` would wait on each step's latency).
    let (mut largest, mut zero) = ([0.0f64; 8], [0.0f64; 8]);
    let (chunks, rest) = values.as_chunks::<8>();
    let mut lanes = |k: usize, v: f64| {
        largest[k] = if v.abs() > largest[k] { v.abs() } else { largest[k] };
        zero[k] += v * 0.0;
    };
    chunks.iter().for_each(|c| (0..8).for_each(|k| lanes(k, c[k].into())));
    rest.iter().for_each(|&v| lanes(0, v.into()));
    let largest = largest.into_iter().fold(0.0, f64::max);
    if zero.iter().sum::<f64>().is_nan() {
        out.fill(0);
        return f64::NAN;
    }
    if largest == 0.0 {
        out.fill(0);
        return 1.0;
    }
    let scale = power_of_two_at_least(largest / 127.0);
    let inverse = 1.0 / scale;
    // |v| / scale ≤ 127, so each rounded value fits.
    out.iter_mut().zip(values).for_each(|(o, &v)| *o = (v.into() * inverse + ROUND).to_bits() as i8);
    scale
}

/// The smallest power of two at or above `t` (`t > 0`), at least 2⁻¹⁰²²
/// so that its inverse is finite: from the bits, no `log2`.
fn power_of_two_at_least(t: f64) -> f64 {
    let bits = t.to_bits();
    let exponent = ((bits >> 52) & 0x7ff) as i32 - 1023;
    let exact = bits & ((1 << 52) - 1) == 0;
    let e = (if exact { exponent } else { exponent + 1 }).clamp(-1022, 1023);
    f64::from_bits(((e + 1023) as u64) << 52)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_int8_column_keeps_its_largest_value_within_the_range_and_errs_by_half_a_scale() {
        for largest in [1.0, 127.0, 128.0, 3.7e-9, 5.2e6] {
            let values: Vec<f64> = (0..40).map(|i| largest * ((i as f64 * 0.77).sin())).collect();
            let biggest = values.iter().fold(0.0f64, |m, v| m.max(v.abs()));
            let mut q = vec![0i8; values.len()];
            let s = round_int8(&values, &mut q);
            assert_eq!(s, 2f64.powi(s.log2() as i32), "a power of two");
            assert!(biggest / s <= 127.0 && biggest / s > 63.5, "{largest}: the smallest such scale");
            for (v, &q) in values.iter().zip(&q) {
                assert!((v - f64::from(q) * s).abs() <= 0.5 * s, "{v} → {q} × {s}");
            }
        }
        for (t, want) in [(1.0, 1.0), (1.5, 2.0), (0.3, 0.5), (4097.0, 8192.0), (1e-310, 2f64.powi(-1022))] {
            assert_eq!(power_of_two_at_least(t), want, "{t}");
        }
        let mut q = vec![1i8; 3];
        assert_eq!(round_int8(&[0.0; 3], &mut q), 1.0);
        assert_eq!(q, [0; 3]);
        assert!(round_int8(&[1.0, f64::NAN, 2.0], &mut q).is_nan());
    }
}
