use super::*;

#[test]
fn dot4x3_is_three_dot4s_bit_for_bit() {
    for n in [0, 1, 7, 8, 9, 17, 100, 257] {
        let col = |s: f64| {
            (0..n).map(|i| ((i as f64 + s) * 0.37).sin() * 1e3f64.powf(s.cos())).collect::<Vec<f64>>()
        };
        let c = [col(0.0), col(1.0), col(2.0), col(3.0)];
        let g = [col(4.0), col(5.0), col(6.0)];
        let cols = c.each_ref().map(|v| &v[..]);
        let out = dot4x3(cols, g.each_ref().map(|v| &v[..]));
        for a in 0..3 {
            let want = dot4(cols, &g[a]);
            assert!(out[a].iter().zip(want).all(|(p, q)| p.to_bits() == q.to_bits()), "n = {n}, axis {a}");
        }
    }
}

/// Four columns of `n` values over several magnitudes, rounded by `round`
/// to the stored type, and a vector as long.
fn columns_and_vector<T>(n: usize, round: &impl Fn(f64) -> T) -> ([Vec<T>; COLUMNS], Vec<f64>) {
    let col = |s: f64| (0..n).map(|i| round(((i as f64 + s) * 0.37).sin() * 1e3f64.powf(s.cos()))).collect();
    let g = (0..n).map(|i| (i as f64 * 0.91).cos() - 0.2).collect();
    ([col(0.0), col(1.0), col(2.0), col(3.0)], g)
}

/// The 512-bit builds of the narrow types' four-column primitives give the
/// 256-bit builds' bits (where the processor has AVX-512; else nothing to compare).
#[cfg(target_arch = "x86_64")]
#[test]
fn wide_narrow_primitives_are_the_256_bit_ones_bit_for_bit() {
    fn check<T: wide::Load8>(round: impl Fn(f64) -> T, name: &str) {
        for n in [0, 1, 3, 4, 7, 8, 9, 12, 15, 16, 17, 100, 257] {
            let (c, g) = columns_and_vector(n, &round);
            let cols = c.each_ref().map(|v| &v[..]);
            let a = [0.5, -1.25, 2.0e-3, 7.0];
            let zero = [[0.0; LANES]; COLUMNS];
            // SAFETY: each build runs only where the processor has its features.
            let (wide_dot, narrow_dot) =
                unsafe { (wide::dot4_from(cols, &g, &zero), avx::dot4_from(cols, &g, &zero)) };
            assert!(
                wide_dot.iter().zip(narrow_dot).all(|(p, q)| p.to_bits() == q.to_bits()),
                "dot4 {name}, n = {n}"
            );
            let (mut y, mut z) = (g.clone(), g.clone());
            // SAFETY: as above.
            unsafe { (wide::axpy4(cols, a, &mut y), avx::axpy4(cols, a, &mut z)) };
            assert!(y.iter().zip(&z).all(|(p, q)| p.to_bits() == q.to_bits()), "axpy4 {name}, n = {n}");
        }
    }
    if wide::enabled() {
        check(|v| v as f32, "f32");
        check(Bf16::from_f64, "bf16");
        check(|v| (v / 8.0).round() as i8, "i8");
    }
}

#[test]
fn fused_primitives_match_the_portable_ones() {
    // 257 and 515: several pieces of the row primitives' widening, the last odd.
    for n in [0, 1, 3, 4, 7, 8, 9, 17, 100, 257, 515] {
        let col = |s: f64| (0..n).map(|i| ((i as f64 + s) * 0.37).sin()).collect::<Vec<f64>>();
        let (a, b, c, d, g) = (col(0.0), col(1.0), col(2.0), col(3.0), col(4.0));
        let close = |p: f64, q: f64| (p - q).abs() <= 1e-13 * (1.0 + q.abs());
        assert!(close(dot(&a, &g), portable::dot(&a, &g)), "dot, n = {n}");
        let a32: Vec<f32> = a.iter().map(|&v| v as f32).collect();
        assert!(close(dot_mixed(&a32, &g), portable::dot(&a32, &g)), "dot_mixed, n = {n}");
        let (fused, plain) =
            (dot4([&a, &b, &c, &d], &g), portable::dot4_from([&a, &b, &c, &d], &g, &[[0.0; LANES]; COLUMNS]));
        assert!(fused.iter().zip(plain).all(|(p, q)| close(*p, q)), "dot4, n = {n}");
        let (mut y, mut z) = (g.clone(), g.clone());
        axpy4([&a, &b, &c, &d], [0.5, -1.0, 2.0, 0.25], &mut y);
        portable::axpy4([&a, &b, &c, &d], [0.5, -1.0, 2.0, 0.25], &mut z);
        axpy(-0.3, &a, &mut y);
        portable::axpy(-0.3, &a, &mut z);
        assert!(y.iter().zip(&z).all(|(p, q)| close(*p, *q)), "axpy, n = {n}");
        // Rows of four right-hand sides.
        let rows: Vec<Row4> = (0..n).map(|i| [g[i], a[i], -b[i], 0.5 * c[i]]).collect();
        let x: [Row4; COLUMNS] =
            [[0.5, -1.0, 2.0, 0.0], [0.25, 0.1, -0.3, 1.0], [1.5, 2.0, 0.0, -1.0], [0.0, 0.7, 0.2, 0.3]];
        let (mut y, mut z) = (rows.clone(), rows.clone());
        f64::sub_rows4([&a, &b, &c, &d], x, &mut y);
        portable::sub_rows4([&a, &b, &c, &d], x, &mut z);
        assert!(y.iter().flatten().zip(z.iter().flatten()).all(|(p, q)| close(*p, *q)), "sub_rows4, n = {n}");
        let (fused, plain) =
            (f64::rows_dot4([&a, &b, &c, &d], &rows), portable::rows_dot4([&a, &b, &c, &d], &rows));
        assert!(
            fused.iter().flatten().zip(plain.iter().flatten()).all(|(p, q)| close(*p, *q)),
            "rows_dot4, n = {n}"
        );
        // Columns stored in f32 or bfloat16, widened: the same sums as
        // the f64 build on the rounded values.
        let cols = [&a[..], &b, &c, &d];
        matches_widened(|v| v as f32, cols, &g, &rows, x, "f32");
        matches_widened(Bf16::from_f64, cols, &g, &rows, x, "bf16");
        matches_widened(|v| (127.0 * v).round() as i8, cols, &g, &rows, x, "i8");
    }
}

/// The primitives on columns `cols` rounded by `round` to a stored type
/// give the f64 primitives' results on the rounded values, widened.
fn matches_widened<T: Stored>(
    round: impl Fn(f64) -> T,
    cols: [&[f64]; COLUMNS],
    g: &[f64],
    rows: &[Row4],
    x: [Row4; COLUMNS],
    name: &str,
) {
    let n = g.len();
    let close = |p: f64, q: f64| (p - q).abs() <= 1e-13 * (1.0 + q.abs());
    let stored = cols.map(|c| c.iter().map(|&v| round(v)).collect::<Vec<T>>());
    let widened = stored.each_ref().map(|c| c.iter().map(|&v| v.into()).collect::<Vec<f64>>());
    let (s, w) = (stored.each_ref().map(|c| &c[..]), widened.each_ref().map(|c| &c[..]));
    assert!(close(T::dot(s[0], g), dot(w[0], g)), "dot {name}, n = {n}");
    let (fused, plain) = (T::dot4(s, g), dot4(w, g));
    assert!(fused.iter().zip(plain).all(|(p, q)| close(*p, q)), "dot4 {name}, n = {n}");
    let (mut y, mut z) = (g.to_vec(), g.to_vec());
    T::axpy4(s, [0.5, -1.0, 2.0, 0.25], &mut y);
    axpy4(w, [0.5, -1.0, 2.0, 0.25], &mut z);
    T::axpy(-0.3, s[0], &mut y);
    axpy(-0.3, w[0], &mut z);
    assert!(y.iter().zip(&z).all(|(p, q)| close(*p, *q)), "axpy {name}, n = {n}");
    // The row primitives widen the columns exactly and sum in the f64
    // build's order: the same bits.
    let same = |p: &f64, q: &f64| p.to_bits() == q.to_bits();
    let (mut y, mut z) = (rows.to_vec(), rows.to_vec());
    T::sub_rows4(s, x, &mut y);
    f64::sub_rows4(w, x, &mut z);
    assert!(y.iter().flatten().zip(z.iter().flatten()).all(|(p, q)| same(p, q)), "sub_rows4 {name}, n = {n}");
    let (fused, plain) = (T::rows_dot4(s, rows), f64::rows_dot4(w, rows));
    assert!(
        fused.iter().flatten().zip(plain.iter().flatten()).all(|(p, q)| same(p, q)),
        "rows_dot4 {name}, n = {n}"
    );
}

#[test]
fn bfloat16_rounds_to_nearest_with_ties_to_even() {
    // Values with 8 significant bits are kept exactly.
    for v in [0.0, -0.0, 1.0, -1.5, 3.0 * 2f64.powi(-40), 255.0 * 2f64.powi(20), 0.99609375] {
        assert_eq!(f64::from(Bf16::from_f64(v)).to_bits(), v.to_bits(), "{v}");
    }
    // Halfway between 1 and 1 + 2⁻⁷: down to the even 1; halfway between
    // 1 + 2⁻⁷ and 1 + 2⁻⁶: up to the even 1 + 2⁻⁶; just above a halfway: up.
    assert_eq!(f64::from(Bf16::from_f64(1.0 + 2f64.powi(-8))), 1.0);
    assert_eq!(f64::from(Bf16::from_f64(1.0 + 3.0 * 2f64.powi(-8))), 1.0 + 2f64.powi(-6));
    assert_eq!(f64::from(Bf16::from_f64(1.0 + 2f64.powi(-8) + 2f64.powi(-20))), 1.0 + 2f64.powi(-7));
    // Relative error at most 2⁻⁸ (8 significant bits) over many magnitudes.
    for i in 1..2000 {
        let v = (i as f64 * 0.731).sin() * 10f64.powi(i % 30 - 15);
        let r = f64::from(Bf16::from_f64(v));
        assert!((r - v).abs() <= 2f64.powi(-8) * v.abs() * (1.0 + 1e-6), "{v} -> {r}");
    }
    assert!(f64::from(Bf16::from_f64(f64::NAN)).is_nan());
}

/// A sum begun elsewhere: chains formed entry by entry with `lane_axpy`
/// over the first entries (a multiple of eight), then `dot4_from` over the
/// rest, give `dot4` of the whole columns bit for bit, in every build and
/// stored type (the pipelined PGS's lower sums, formed by other threads).
#[test]
fn a_sum_begun_in_lanes_is_dot4_bit_for_bit() {
    fn check<T: Stored>(round: impl Fn(f64) -> T, name: &str) {
        for n in [0, 1, 7, 8, 9, 16, 17, 40, 100, 257] {
            let (c, g) = columns_and_vector(n, &round);
            let cols = c.each_ref().map(|v| &v[..]);
            let whole = T::dot4(cols, &g);
            for split in (0..=n).step_by(LANES) {
                let mut lanes = [[0.0; LANES]; COLUMNS];
                for (k, lane) in lanes.iter_mut().enumerate() {
                    for j in 0..split {
                        T::lane_axpy(g[j], &c[k][j..j + 1], &mut lane[j % LANES..j % LANES + 1]);
                    }
                }
                let rest = cols.map(|v| &v[split..]);
                let begun = T::dot4_from(rest, &g[split..], &lanes);
                assert!(
                    begun.iter().zip(whole).all(|(p, q)| p.to_bits() == q.to_bits()),
                    "{name}, n = {n}, split at {split}"
                );
                // The portable build's chains, from its own axpy.
                let mut lanes = [[0.0; LANES]; COLUMNS];
                for (k, lane) in lanes.iter_mut().enumerate() {
                    for j in 0..split {
                        portable::axpy(g[j], &c[k][j..j + 1], &mut lane[j % LANES..j % LANES + 1]);
                    }
                }
                let portable_whole = portable::dot4_from(cols, &g, &[[0.0; LANES]; COLUMNS]);
                let portable_begun = portable::dot4_from(rest, &g[split..], &lanes);
                assert!(
                    portable_begun.iter().zip(portable_whole).all(|(p, q)| p.to_bits() == q.to_bits()),
                    "portable {name}, n = {n}, split at {split}"
                );
            }
        }
    }
    check(|v| v, "f64");
    check(|v| v as f32, "f32");
    check(Bf16::from_f64, "bf16");
    check(|v| (v / 8.0).round() as i8, "i8");
}
