//! Vector kernels, parallel over fixed-size blocks and deterministic.

use rayon::prelude::*;

/// Block length of the deterministic reductions.
pub const BLOCK: usize = 4096;

/// `Σ xᵢ yᵢ`, summed per block of [`BLOCK`] entries, blocks added in order.
pub fn dot(x: &[f64], y: &[f64]) -> f64 {
    debug_assert_eq!(x.len(), y.len());
    let partial: Vec<f64> =
        x.par_chunks(BLOCK).zip(y.par_chunks(BLOCK)).map(|(a, b)| dot_serial(a, b)).collect();
    partial.iter().sum()
}

/// `xᵀ y` on one thread, in a fixed order (the result does not depend on
/// the caller): [`crate::simd::dot`].
pub fn dot_serial(x: &[f64], y: &[f64]) -> f64 {
    debug_assert_eq!(x.len(), y.len());
    crate::simd::dot(x, y)
}

/// Euclidean norm.
pub fn norm(x: &[f64]) -> f64 {
    dot(x, x).sqrt()
}

/// `maxᵢ |xᵢ − yᵢ|`, the largest entrywise difference.
pub fn max_diff(x: &[f64], y: &[f64]) -> f64 {
    debug_assert_eq!(x.len(), y.len());
    x.iter().zip(y).fold(0.0f64, |m, (a, b)| m.max((a - b).abs()))
}

/// `maxᵢ |xᵢ − yᵢ| / maxᵢ |yᵢ|`: the difference of `x` from a reference
/// `y`, relative to the reference's largest entry.
pub fn rel_max_diff(x: &[f64], y: &[f64]) -> f64 {
    max_diff(x, y) / y.iter().fold(0.0f64, |m, v| m.max(v.abs()))
}

/// `y ← y + a x`.
pub fn axpy(a: f64, x: &[f64], y: &mut [f64]) {
    y.par_chunks_mut(BLOCK).zip(x.par_chunks(BLOCK)).for_each(|(yb, xb)| {
        yb.iter_mut().zip(xb).for_each(|(yi, xi)| *yi += a * xi);
    });
}

/// `y ← y + a x`, then `zᵀ y` of the new `y`, in one pass over the
/// three vectors on one thread (block by block, each block's update and
/// product while it is in cache; blocks summed in order): the pass a
/// recursion that alternates updates and products (L-BFGS's two loops)
/// needs, at a third of the separate passes' traffic.
pub fn axpy_dot(a: f64, x: &[f64], y: &mut [f64], z: &[f64]) -> f64 {
    debug_assert!(x.len() == y.len() && z.len() == y.len());
    const CHUNK: usize = 512;
    y.chunks_mut(CHUNK)
        .zip(x.chunks(CHUNK))
        .zip(z.chunks(CHUNK))
        .map(|((yb, xb), zb)| {
            crate::simd::axpy(a, xb, yb);
            crate::simd::dot(zb, yb)
        })
        .sum()
}

/// `y ← x + b y`.
pub fn xpby(x: &[f64], b: f64, y: &mut [f64]) {
    y.par_chunks_mut(BLOCK).zip(x.par_chunks(BLOCK)).for_each(|(yb, xb)| {
        yb.iter_mut().zip(xb).for_each(|(yi, xi)| *yi = xi + b * *yi);
    });
}

/// Whether every entry is finite.
pub fn all_finite(x: &[f64]) -> bool {
    x.par_chunks(BLOCK).all(|b| b.iter().all(|v| v.is_finite()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dot_is_independent_of_thread_count() {
        let x: Vec<f64> = (0..100_003).map(|i| ((i * 7919) % 1000) as f64 * 1e-3 - 0.5).collect();
        let one = rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
        let many = rayon::ThreadPoolBuilder::new().num_threads(3).build().unwrap();
        let a = one.install(|| dot(&x, &x));
        let b = many.install(|| dot(&x, &x));
        assert_eq!(a.to_bits(), b.to_bits());
        let naive: f64 = x.iter().map(|v| v * v).sum();
        assert!((a - naive).abs() < 1e-9 * naive);
    }

    #[test]
    fn fused_axpy_dot_is_the_update_then_the_product() {
        let n = 2_000;
        let x: Vec<f64> = (0..n).map(|i| (i as f64 * 0.37).sin()).collect();
        let z: Vec<f64> = (0..n).map(|i| (i as f64 * 0.11).cos()).collect();
        let mut y: Vec<f64> = (0..n).map(|i| (i as f64 * 0.05).sin() - 0.3).collect();
        let mut y_ref = y.clone();
        let d = axpy_dot(-0.7, &x, &mut y, &z);
        y_ref.iter_mut().zip(&x).for_each(|(y, x)| *y += -0.7 * x);
        let naive: f64 = z.iter().zip(&y_ref).map(|(a, b)| a * b).sum();
        assert!(max_diff(&y, &y_ref) <= 1e-15);
        assert!((d - naive).abs() <= 1e-12 * naive.abs().max(1.0), "{d} against {naive}");
    }

    #[test]
    fn serial_dot_matches_the_naive_sum_at_every_length() {
        for n in [0, 1, 7, 8, 9, 23, 1000] {
            let x: Vec<f64> = (0..n).map(|i| (i as f64 * 0.37).sin()).collect();
            let y: Vec<f64> = (0..n).map(|i| (i as f64 * 0.11).cos()).collect();
            let naive: f64 = x.iter().zip(&y).map(|(a, b)| a * b).sum();
            assert!((dot_serial(&x, &y) - naive).abs() <= 1e-13 * (1.0 + naive.abs()), "n = {n}");
        }
    }
}
