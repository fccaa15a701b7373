//! Copy bandwidth of this machine, the floor against which memory-bound
//! kernels (SpMV) are judged.

use rayon::prelude::*;
use std::time::Instant;

/// Median bandwidth in GB/s of a parallel `dst ← src` copy of `bytes` bytes
/// over `repeats` runs, counting bytes read plus bytes written.
pub fn copy_bandwidth_gbs(bytes: usize, repeats: usize) -> f64 {
    let n = (bytes / 8).max(1);
    let src: Vec<f64> = (0..n).map(|i| i as f64).collect();
    let mut dst = vec![0.0f64; n];
    let mut rates: Vec<f64> = (0..repeats.max(1))
        .map(|_| {
            let t = Instant::now();
            dst.par_chunks_mut(1 << 16).zip(src.par_chunks(1 << 16)).for_each(|(d, s)| d.copy_from_slice(s));
            let s = t.elapsed().as_secs_f64();
            std::hint::black_box(&dst);
            (16 * n) as f64 / s / 1e9
        })
        .collect();
    rates.sort_by(f64::total_cmp);
    rates[rates.len() / 2]
}
