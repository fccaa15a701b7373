//! The Neo-Hookean membranes' local step, [`LANES`] triangles at a time,
//! one per SIMD lane (zeng2025 eq. 5), in the widest build the processor
//! runs: `FᵀF` (2×2) diagonalized in closed form, `σ*` by
//! [`neo_hookean_prox`] in lanes, and `p = F V diag(σ*/s) Vᵀ` without the
//! singular vectors `U` (well defined where `s₁ ≈ s₂` leaves `V`
//! arbitrary). A lane with `s₂² < 10⁻⁴ s₁²` (where `1/s` would amplify
//! rounding) or whose prox did not converge takes the one-element
//! projection ([`local_projection`]).

use nalgebra::Matrix3x2;

use super::hyperelastic::{local_projection, neo_hookean_prox};
use super::lanes::{dispatch, lanewise, LANES};
use super::{Constitutive, TriElement};

/// `F` of `L` triangles (lanes past `tris.len()` repeat the last), column
/// `j` of lane `l` at `[j][i][l]`.
type Columns<const L: usize> = [[[f64; L]; 3]; 2];

/// Where `s₂² < SMALLEST · s₁²` a lane takes the one-element projection.
const SMALLEST: f64 = 1e-4;

/// `p = argmin ψ(p) + k/2 ‖p − G‖²` of Neo-Hookean membranes in lanes:
/// `GᵀG = V diag(s²) Vᵀ`, `v₁ ∝ (c, λ₁ − a)` or `(λ₁ − b, c)` (the longer),
/// `v₂` its quarter turn, `s₂² = det(GᵀG) / s₁²`; `p = G M` with
/// `M = V diag(σ*/s) Vᵀ`.
#[inline(always)]
fn neo_hookean_membranes<const L: usize>(
    lame: &[super::Lame; L],
    k: &[f64; L],
    g: &Columns<L>,
) -> (Columns<L>, [bool; L]) {
    let dot = |x: &[[f64; L]; 3], y: &[[f64; L]; 3]| {
        lanewise::<f64, L>(|l| x[0][l] * y[0][l] + x[1][l] * y[1][l] + x[2][l] * y[2][l])
    };
    let (a, c, b) = (dot(&g[0], &g[0]), dot(&g[0], &g[1]), dot(&g[1], &g[1]));
    let (mut s, mut v, mut usable) = ([[0.0; L]; 2], [[0.0; L]; 2], [false; L]);
    for l in 0..L {
        let half = (a[l] - b[l]) / 2.0;
        let top = (a[l] + b[l]) / 2.0 + (half * half + c[l] * c[l]).sqrt();
        let bottom = if top > 0.0 { (a[l] * b[l] - c[l] * c[l]) / top } else { 0.0 };
        let (p, q) = ((c[l], top - a[l]), (top - b[l], c[l]));
        let w = if p.0 * p.0 + p.1 * p.1 >= q.0 * q.0 + q.1 * q.1 { p } else { q };
        let norm = (w.0 * w.0 + w.1 * w.1).sqrt();
        (v[0][l], v[1][l]) = if norm > 0.0 { (w.0 / norm, w.1 / norm) } else { (1.0, 0.0) };
        usable[l] = bottom >= SMALLEST * top && top > 0.0;
        (s[0][l], s[1][l]) = (top.sqrt(), bottom.max(0.0).sqrt());
        if !usable[l] {
            (s[0][l], s[1][l]) = (1.0, 1.0);
        }
    }
    let (sigma, _, converged) = neo_hookean_prox::<2, L>(lame, k, &s);
    let mut p = [[[0.0; L]; 3]; 2];
    for l in 0..L {
        let (h1, h2) = (sigma[0][l] / s[0][l], sigma[1][l] / s[1][l]);
        let (x, y) = (v[0][l], v[1][l]);
        let (m00, m01, m11) = (h1 * x * x + h2 * y * y, (h1 - h2) * x * y, h1 * y * y + h2 * x * x);
        for i in 0..3 {
            p[0][i][l] = g[0][i][l] * m00 + g[1][i][l] * m01;
            p[1][i][l] = g[0][i][l] * m01 + g[1][i][l] * m11;
        }
    }
    (p, lanewise(|l| usable[l] && converged[l]))
}

/// The kernel of [`tri_local_step`].
#[inline(always)]
fn tri_batch(tris: &[TriElement], x: &[f64], duals: &mut [Matrix3x2<f64>], targets: &mut [Matrix3x2<f64>]) {
    let n = tris.len();
    assert!(n > 0 && n <= LANES && duals.len() == n && targets.len() == n);
    let e = |l: usize| &tris[l.min(n - 1)];
    let mut f = [Matrix3x2::zeros(); LANES];
    let mut g = [[[0.0; LANES]; 3]; 2];
    for l in 0..LANES {
        f[l] = e(l).gradient(x);
        let gl = f[l] + duals[l.min(n - 1)];
        for j in 0..2 {
            for i in 0..3 {
                g[j][i][l] = gl[(i, j)];
            }
        }
    }
    let lame = lanewise(|l| e(l).lame);
    let k = lanewise(|l| e(l).weight / e(l).measure);
    let (p, ok) = neo_hookean_membranes(&lame, &k, &g);
    for l in 0..n {
        let p = match ok[l] {
            true => Matrix3x2::from_fn(|i, j| p[j][i][l]),
            false => {
                let gl = f[l] + duals[l];
                local_projection(Constitutive::NeoHookean, lame[l], k[l], &gl, &targets[l])
            }
        };
        duals[l] += f[l] - p;
        targets[l] = p - duals[l];
    }
}

dispatch!(
    /// The local step of `n ≤ LANES` Neo-Hookean membrane triangles at
    /// once ([`super::Element::local_step`]: `p = prox(F + u)`, the dual
    /// `u ← u + F − p`, the target `p − u`), one per SIMD lane, in the
    /// widest build the processor runs. Missing lanes repeat the last
    /// triangle and are discarded.
    tri_local_step, tri_batch_avx2, tri_batch_avx512 => tri_batch(
        tris: &[TriElement],
        x: &[f64],
        duals: &mut [Matrix3x2<f64>],
        targets: &mut [Matrix3x2<f64>]
    ) -> ()
);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::element::Lame;

    /// Each lane's step equals the one-element step (to rounding) for
    /// stretched, compressed and sheared triangles and a nearly collinear
    /// one (the fallback), with duals, on a partial batch.
    #[test]
    fn lanes_equal_the_one_element_step() {
        let rest = [[0.0, 0.0, 0.0], [0.01, 0.0, 0.0], [0.0, 0.012, 0.0]];
        let lame = Lame { lambda: 2.0e5, mu: 3.6e4 };
        let tris: Vec<TriElement> = (0..LANES - 3)
            .map(|_| TriElement::triangle(&rest, [0, 1, 2], 0.001, Constitutive::NeoHookean, lame).unwrap())
            .collect();
        for case in 0..tris.len() {
            let t = case as f64;
            let squash = 1.0 + 0.3 * (0.9 * t).sin();
            let mut x: Vec<f64> = vec![
                0.001 * t.cos(),
                0.0,
                0.0005 * t,
                0.01 * (1.0 + 0.4 * (0.7 * t).sin()),
                0.002 * (1.3 * t).cos(),
                0.0,
                0.003 * (0.5 * t).sin(),
                0.012 * squash,
                0.004 * t.sin(),
            ];
            if case == 5 {
                // Nearly collinear: the third vertex 1e-6 m off the first edge's midpoint.
                for i in 0..3 {
                    x[6 + i] = 0.5 * (x[i] + x[3 + i]);
                }
                x[8] += 1e-6;
            }
            let dual0: Vec<Matrix3x2<f64>> = (0..tris.len())
                .map(|l| Matrix3x2::from_fn(|i, j| 1e-3 * ((l + 3 * i + 7 * j) as f64).sin()))
                .collect();
            let (mut duals, mut targets) = (dual0.clone(), vec![Matrix3x2::zeros(); tris.len()]);
            tri_local_step(&tris, &x, &mut duals, &mut targets);
            // The lanes' own path ran (not the fallback) except on the squashed case.
            let f = tris[0].gradient(&x);
            let g = [0, 1].map(|j| [0, 1, 2].map(|i| [f[(i, j)]; 1]));
            let (_, ok) = neo_hookean_membranes(&[lame], &[tris[0].weight / tris[0].measure], &g);
            assert_eq!(ok[0], case != 5, "case {case}: lane path");
            for l in 0..tris.len() {
                let (mut u, mut target) = (dual0[l], Matrix3x2::zeros());
                tris[l].local_step(Constitutive::NeoHookean, &x, &mut u, &mut target);
                let scale = 1.0 + target.norm();
                assert!((targets[l] - target).norm() <= 1e-11 * scale, "case {case}, lane {l}: target");
                assert!((duals[l] - u).norm() <= 1e-11 * (1.0 + u.norm()), "case {case}, lane {l}: dual");
            }
        }
    }
}
