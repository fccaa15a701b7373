//! The tet kernels of the local step and of implicit Euler's co-rotational
//! assembly, several elements at a time, one element per SIMD lane
//! (zeng2025 eq. 5; dahl2019 §3.3), on the lane algebra of
//! [`super::lanes`], in the widest build the processor runs (AVX-512,
//! AVX2 or the baseline).

use nalgebra::{Matrix3, Vector3};

use super::hyperelastic::neo_hookean_prox;
use super::lanes::*;
use super::{Constitutive, Lame, TetElement};

/// Neo-Hookean's local projection of `L` gradients,
/// `p = U diag(σ*) Vᵀ = F V diag(σ*/s) Vᵀ` (`F = U diag(s) Vᵀ`), without a
/// polar decomposition: `FᵀF = V diag(s²) Vᵀ` by cyclic Jacobi on
/// `V₀ᵀ FᵀF V₀` from the tet's last eigenbasis `V₀` (`basis`), and
/// `σ* =` [`neo_hookean_prox`] of `s`, all in lanes. The sweeps stop at
/// [`EIGEN_TOLERANCE`]; the projection adds the first-order response to
/// what is left of the off-diagonal, so its error is second order. A lane
/// with `det F ≤ 0`, with `s_min² < 1e-4 ‖FᵀF‖` (where `1/s` would amplify
/// rounding), or that the sweeps or the prox leave unconverged takes the
/// one-element projection (signed SVD, damped Newton). `basis` ← `V`.
#[inline(always)]
fn neo_hookean_lanes<const L: usize>(
    lame: &[Lame; L],
    k: &[f64; L],
    f: &Lanes<L>,
    basis: &mut [Matrix3<f64>; L],
) -> [Matrix3<f64>; L] {
    let gram = gram_eigen(f, basis, EIGEN_TOLERANCE);
    let (a, s) = (&gram.a, &gram.s);
    let (sigma, c, prox) = neo_hookean_prox::<3, L>(lame, k, s);
    // B = diag(σᵢ/sᵢ) plus the first-order response of V diag(h(s²)) Vᵀ,
    // h(s²) = σ(s)/s, to A's off-diagonal rest: A_ij (hᵢ − hⱼ)/(sᵢ² − sⱼ²)
    // = A_ij σⱼ (k σᵢ sⱼ − a σᵢ σⱼ + c) / ((a σᵢ σⱼ − c) sᵢ sⱼ (sᵢ + sⱼ)),
    // a = μ + k, from subtracting the stationarity conditions.
    let mut b = [[0.0; L]; 9];
    for i in 0..3 {
        for l in 0..L {
            b[at(i, i)][l] = sigma[i][l] / s[i][l];
        }
    }
    for (i, j) in [(0, 1), (0, 2), (1, 2)] {
        for l in 0..L {
            let (si, sj, ti, tj, al) = (s[i][l], s[j][l], sigma[i][l], sigma[j][l], lame[l].mu + k[l]);
            let response =
                tj * (k[l] * ti * sj - al * ti * tj + c[l]) / ((al * ti * tj - c[l]) * si * sj * (si + sj));
            b[at(i, j)][l] = a[at(i, j)][l] * response;
            b[at(j, i)][l] = b[at(i, j)][l];
        }
    }
    let ok = lanewise(|l| gram.usable[l] && prox[l]);
    gram.project(f, &b, &ok, basis, |l| {
        super::hyperelastic::local_projection(
            Constitutive::NeoHookean,
            lame[l],
            k[l],
            &unpack(f, l),
            &Matrix3::identity(),
        )
    })
}

/// `FᵀF = V diag(s²) Vᵀ` of `L` gradients by cyclic Jacobi on `V₀ᵀ FᵀF V₀`
/// from the tets' last eigenbases `V₀`, to relative off-diagonal
/// `tolerance`: what the Neo-Hookean local steps project in.
struct GramEigen<const L: usize> {
    /// `VᵀFᵀF V`, diagonal to `tolerance`.
    a: Lanes<L>,
    /// The eigenbasis `V`.
    v: Lanes<L>,
    /// Singular values `sᵢ = √Aᵢᵢ`.
    s: [[f64; L]; 3],
    /// Lanes where the sweeps converged, `det F > 0` and `s_min² ≥ 1e-4 ‖FᵀF‖`
    /// (where `1/s` would amplify rounding, or an inverted `F`, the
    /// one-element projection is taken).
    usable: [bool; L],
}

impl<const L: usize> GramEigen<L> {
    /// `p = F (V B Vᵀ)` where `ok`, `fallback(l)` elsewhere; `basis` ← `V`
    /// (the identity where the fallback ran).
    #[inline(always)]
    fn project(
        &self,
        f: &Lanes<L>,
        b: &Lanes<L>,
        ok: &[bool; L],
        basis: &mut [Matrix3<f64>; L],
        fallback: impl Fn(usize) -> Matrix3<f64>,
    ) -> [Matrix3<f64>; L] {
        let v = &self.v;
        let vb = mul_nn(v, b);
        let mut m = [[0.0; L]; 9];
        for i in 0..3 {
            for j in 0..3 {
                for l in 0..L {
                    m[at(i, j)][l] = vb[at(i, 0)][l] * v[at(j, 0)][l]
                        + vb[at(i, 1)][l] * v[at(j, 1)][l]
                        + vb[at(i, 2)][l] * v[at(j, 2)][l];
                }
            }
        }
        let p = mul_nn(f, &m);
        std::array::from_fn(|l| match ok[l] {
            true => {
                basis[l] = unpack(v, l);
                unpack(&p, l)
            }
            false => {
                basis[l] = Matrix3::identity();
                fallback(l)
            }
        })
    }
}

/// [`GramEigen`] of `f` warm-started from `basis`.
#[inline(always)]
fn gram_eigen<const L: usize>(f: &Lanes<L>, basis: &[Matrix3<f64>; L], tolerance: f64) -> GramEigen<L> {
    let mut v = warm_basis(basis);
    let mut a = mul_tn(&v, &mul_nn(&mul_tn(f, f), &v));
    for (i, j) in [(0, 1), (0, 2), (1, 2)] {
        for l in 0..L {
            let m = 0.5 * (a[at(i, j)][l] + a[at(j, i)][l]);
            (a[at(i, j)][l], a[at(j, i)][l]) = (m, m);
        }
    }
    let eigen = symmetric_eigen(&mut a, &mut v, 8, tolerance);
    let (n, det) = (norm(&a), determinant(f));
    let mut s = [[0.0; L]; 3];
    let mut usable = lanewise(|l| eigen[l] && det[l] > 0.0);
    for (i, si) in s.iter_mut().enumerate() {
        for l in 0..L {
            let eigenvalue = a[at(i, i)][l];
            si[l] = eigenvalue.max(0.0).sqrt();
            usable[l] &= eigenvalue >= 1e-4 * n[l];
        }
    }
    GramEigen { a, v, s, usable }
}

/// Stable Neo-Hookean's local projection of `L` gradients as
/// [`neo_hookean_lanes`] makes Neo-Hookean's, `p = F V diag(σ*/s) Vᵀ`:
/// `σ*` by Newton's method on the prox in σ from `s`
/// ([`stable_prox_lanes`]), the eigen-decomposition swept to
/// [`STABLE_EIGEN_TOLERANCE`] (no response term: the error is first order
/// in that tolerance). Inverted or degenerate lanes, and those whose
/// Newton iteration fails, take the one-element projection (signed SVD,
/// damped Newton).
#[inline(always)]
fn stable_neo_hookean_lanes<const L: usize>(
    lame: &[Lame; L],
    k: &[f64; L],
    f: &Lanes<L>,
    basis: &mut [Matrix3<f64>; L],
) -> [Matrix3<f64>; L] {
    let gram = gram_eigen(f, basis, STABLE_EIGEN_TOLERANCE);
    let mut ok = gram.usable;
    let sigma = stable_prox_lanes(lame, k, &gram.s, &mut ok);
    let mut b = [[0.0; L]; 9];
    for i in 0..3 {
        for l in 0..L {
            b[at(i, i)][l] = sigma[i][l] / gram.s[i][l];
        }
    }
    gram.project(f, &b, &ok, basis, |l| {
        let model = Constitutive::StableNeoHookean;
        super::hyperelastic::local_projection(model, lame[l], k[l], &unpack(f, l), &Matrix3::identity())
    })
}

/// Signed SVDs `F = U diag(σ) Vᵀ` of `L` gradients, `V` by the Jacobi
/// sweeps of [`gram_eigen`] warm-started from `basis` (which it updates)
/// and `U = F V diag(1/σ)`; lanes with `det F ≤ 0` or a small `σ` take
/// [`super::polar::signed_svd3`] (and an identity `basis`). `V` and `U`
/// are rotations; `σ` is in no particular order.
pub fn signed_svds<const L: usize>(
    f: &[Matrix3<f64>; L],
    basis: &mut [Matrix3<f64>; L],
) -> [(Matrix3<f64>, Vector3<f64>, Matrix3<f64>); L] {
    let gram = gram_eigen(&pack(f), basis, STABLE_EIGEN_TOLERANCE);
    std::array::from_fn(|l| match gram.usable[l] {
        true => {
            let (v, s) = (unpack(&gram.v, l), Vector3::new(gram.s[0][l], gram.s[1][l], gram.s[2][l]));
            basis[l] = v;
            (f[l] * v * Matrix3::from_diagonal(&s.map(|x| 1.0 / x)), s, v)
        }
        false => {
            basis[l] = Matrix3::identity();
            super::polar::signed_svd3(&f[l])
        }
    })
}

/// Relative off-diagonal tolerance of [`stable_neo_hookean_lanes`]'s
/// eigen-decomposition (its projection's relative error).
pub const STABLE_EIGEN_TOLERANCE: f64 = 1e-12;

/// `argmin ψ(σ) + k/2 ‖σ − s‖²` of stable Neo-Hookean, per lane, by
/// undamped Newton steps from `s` (the gradient and Hessian of
/// [`super::stable_neo_hookean::energy`], the 3×3 solve by Cholesky, all in
/// lanes) while the Hessian stays positive definite, so that the limit is
/// a minimum; a step under 1e-9 `(1 + ‖σ‖)` is taken and ends a lane (the
/// convergence is quadratic). `ok` is cleared where a Hessian is not
/// positive definite, the arithmetic fails or 20 steps do not converge.
#[inline(always)]
fn stable_prox_lanes<const L: usize>(
    lame: &[Lame; L],
    k: &[f64; L],
    s: &[[f64; L]; 3],
    ok: &mut [bool; L],
) -> [[f64; L]; 3] {
    let params: [_; L] = lanewise(|l| super::stable_neo_hookean::parameters::<3>(lame[l]));
    let (mut x, mut done, mut failed) = (*s, [false; L], [false; L]);
    for _ in 0..20 {
        if done.iter().all(|&d| d) {
            break;
        }
        for l in 0..L {
            let ((mu, lambda, alpha), kl) = (params[l], k[l]);
            let [x0, x1, x2] = [x[0][l], x[1][l], x[2][l]];
            let inv = 1.0 / (x0 * x0 + x1 * x1 + x2 * x2 + 1.0);
            let (shear, t) = (mu * (1.0 - inv), 2.0 * mu * inv * inv);
            let dj = [x1 * x2, x0 * x2, x0 * x1];
            let vol = lambda * (x0 * dj[0] - alpha);
            let xs = [x0, x1, x2];
            let g = lanewise::<f64, 3>(|i| shear * xs[i] + vol * dj[i] + kl * (xs[i] - s[i][l]));
            let h = |i: usize, j: usize| match i == j {
                true => shear + t * xs[i] * xs[i] + lambda * dj[i] * dj[i] + kl,
                false => t * xs[i] * xs[j] + lambda * dj[i] * dj[j] + vol * xs[3 - i - j],
            };
            // H = C Cᵀ; C y = −g, Cᵀ d = y.
            let c00 = h(0, 0).sqrt();
            let (c10, c20) = (h(0, 1) / c00, h(0, 2) / c00);
            let d11 = h(1, 1) - c10 * c10;
            let c11 = d11.sqrt();
            let c21 = (h(1, 2) - c20 * c10) / c11;
            let d22 = h(2, 2) - c20 * c20 - c21 * c21;
            let c22 = d22.sqrt();
            let y0 = -g[0] / c00;
            let y1 = (-g[1] - c10 * y0) / c11;
            let y2 = (-g[2] - c20 * y0 - c21 * y1) / c22;
            let d2 = y2 / c22;
            let d1 = (y1 - c21 * d2) / c11;
            let d0 = (y0 - c10 * d1 - c20 * d2) / c00;
            let step = (d0 * d0 + d1 * d1 + d2 * d2).sqrt();
            let definite = h(0, 0) > 0.0 && d11 > 0.0 && d22 > 0.0 && step.is_finite();
            let active = !done[l];
            let go = active && definite;
            x[0][l] = if go { x0 + d0 } else { x0 };
            x[1][l] = if go { x1 + d1 } else { x1 };
            x[2][l] = if go { x2 + d2 } else { x2 };
            let converged = step <= 1e-9 * (1.0 + (x0 * x0 + x1 * x1 + x2 * x2).sqrt());
            failed[l] |= active && !definite;
            done[l] |= active && (converged || !definite);
        }
    }
    for l in 0..L {
        ok[l] &= done[l] && !failed[l];
    }
    x
}

/// The local projection `p = argmin ψ(p) + k/2 ‖p − F‖²` (zeng2025 eq. 5)
/// of `L` tets, each lane equal (to rounding) to
/// [`super::hyperelastic::local_projection`]: for ARAP the closest
/// rotation, warm-started from `rotation` by at most `arap_sweeps` sweeps
/// of the polar iteration (bitwise the one-element iteration with that
/// bound; the SVD's rotation where `rotation` is not one); for
/// co-rotational `corotational_lanes` at the converged rotation;
/// for Neo-Hookean `neo_hookean_lanes`, with no rotation: its eigenbasis
/// of `FᵀF` takes the place of the rotation in `rotation`, as it does for
/// stable Neo-Hookean's `stable_neo_hookean_lanes`. `rotation` is updated
/// with the rotation of `F` (the Neo-Hookean models: the eigenbasis).
#[inline(always)]
pub fn local_projection<const L: usize>(
    model: Constitutive,
    lame: &[Lame; L],
    k: &[f64; L],
    f: &Lanes<L>,
    rotation: &mut [Matrix3<f64>; L],
    arap_sweeps: usize,
) -> [Matrix3<f64>; L] {
    if model == Constitutive::Arap {
        let (r, warm_ok, _) = polar(f, rotation, arap_sweeps, POLAR_TOLERANCE);
        for (l, rotation) in rotation.iter_mut().enumerate() {
            *rotation = if warm_ok[l] { unpack(&r, l) } else { svd_rotation(&unpack(f, l)) };
        }
        return *rotation;
    }
    if model == Constitutive::Corotational {
        let (mut r, _, converged) = polar(f, rotation, POLAR_SWEEPS, POLAR_TOLERANCE);
        for (l, rotation) in rotation.iter_mut().enumerate() {
            if !converged[l] {
                let fallback = svd_rotation(&unpack(f, l));
                (0..9).for_each(|e| r[e][l] = fallback[e]);
            }
            *rotation = unpack(&r, l);
        }
        let p = corotational_lanes(lame, k, f, &r);
        return std::array::from_fn(|l| unpack(&p, l));
    }
    if model == Constitutive::StableNeoHookean {
        return stable_neo_hookean_lanes(lame, k, f, rotation);
    }
    neo_hookean_lanes(lame, k, f, rotation)
}

/// [`super::hyperelastic::corotational_projection`] per lane,
/// `p = (k F + c R)/a`, with the
/// same operations in the same order (bitwise the one-element result).
#[inline(always)]
fn corotational_lanes<const L: usize>(
    lame: &[Lame; L],
    k: &[f64; L],
    f: &Lanes<L>,
    r: &Lanes<L>,
) -> Lanes<L> {
    let mut p = [[0.0; L]; 9];
    for l in 0..L {
        let (a, lambda) = (2.0 * lame[l].mu + k[l], lame[l].lambda);
        let g = 2.0 * lame[l].mu + lambda * 3.0;
        let mut t = 0.0;
        for e in 0..9 {
            t += r[e][l] * f[e][l];
        }
        let c = (g * a - lambda * k[l] * t) / (a + lambda * 3.0);
        let inv = 1.0 / a;
        for e in 0..9 {
            p[e][l] = (f[e][l] * k[l] + r[e][l] * c) * inv;
        }
    }
    p
}

/// `(ψ(F), P(F))` of `L` tets (per unit volume), each lane equal to
/// rounding to [`super::hyperelastic::energy_and_stress`] (`None`: an
/// infinite energy), without an SVD: ARAP and co-rotational from the
/// rotation alone, `ψ = μ ‖F − R‖² + λ/2 (tr RᵀF − 3)²`,
/// `P = 2μ (F − R) + λ (tr RᵀF − 3) R` (λ = 0 for ARAP), `R` by the polar
/// iteration warm-started from (and updating) `rotation`; Neo-Hookean in
/// closed form, `P = μ F + (λ ln J − μ) F⁻ᵀ`, and stable Neo-Hookean
/// ([`super::stable_neo_hookean::energy_and_stress`]). ARAP's iteration stops
/// after `arap_sweeps` sweeps from a warm start, as in
/// [`local_projection`]: the result is then the local-global energy
/// `μ ‖F − R‖²` at that `R` (at least ψ, equal once `R` has converged)
/// and its gradient at fixed `R`; co-rotational's converges.
#[inline(always)]
pub fn energy_and_stress<const L: usize>(
    model: Constitutive,
    lame: &[Lame; L],
    f: &[Matrix3<f64>; L],
    rotation: &mut [Matrix3<f64>; L],
    arap_sweeps: usize,
) -> [Option<(f64, Matrix3<f64>)>; L] {
    if model == Constitutive::NeoHookean {
        return std::array::from_fn(|l| neo_hookean(lame[l], &f[l]));
    }
    if model == Constitutive::StableNeoHookean {
        return std::array::from_fn(|l| Some(super::stable_neo_hookean::energy_and_stress(lame[l], &f[l])));
    }
    let bounded = model == Constitutive::Arap && arap_sweeps < POLAR_SWEEPS;
    let sweeps = if bounded { arap_sweeps } else { POLAR_SWEEPS };
    let (r, warm, converged) = polar(&pack(f), rotation, sweeps, STRESS_POLAR_TOLERANCE);
    std::array::from_fn(|l| {
        let usable = converged[l] || (bounded && warm[l]);
        let rl = if usable { unpack(&r, l) } else { svd_rotation(&f[l]) };
        rotation[l] = rl;
        let (mu, lambda) = (lame[l].mu, if model == Constitutive::Arap { 0.0 } else { lame[l].lambda });
        let (e, tr) = (f[l] - rl, (rl.transpose() * f[l]).trace() - 3.0);
        Some((mu * e.norm_squared() + 0.5 * lambda * tr * tr, e * (2.0 * mu) + rl * (lambda * tr)))
    })
}

/// Neo-Hookean `(ψ, P)` of `F` (`None` where `J ≤ 0`).
fn neo_hookean(lame: Lame, f: &Matrix3<f64>) -> Option<(f64, Matrix3<f64>)> {
    let j = f.determinant();
    if j.is_nan() || j <= 0.0 {
        return None;
    }
    let (lj, f_inv_t) = (j.ln(), f.try_inverse()?.transpose());
    let psi = 0.5 * lame.mu * (f.norm_squared() - 3.0) - lame.mu * lj + 0.5 * lame.lambda * lj * lj;
    Some((psi, f * lame.mu + f_inv_t * (lame.lambda * lj - lame.mu)))
}

/// The kernel of [`tet_local_step`]: `F` (plus the dual) per lane,
/// [`local_projection`], the dual update and each tet's right-hand-side
/// shares.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn tet_batch(
    tets: &[TetElement],
    model: Constitutive,
    x: &[f64],
    duals: &mut [Matrix3<f64>],
    targets: &mut [Matrix3<f64>],
    rotations: &mut [Matrix3<f64>],
    pulls: &mut [[Vector3<f64>; 4]],
    arap_sweeps: usize,
) {
    let n = tets.len();
    assert!(n > 0 && n <= LANES && duals.len() == n && targets.len() == n && rotations.len() == n);
    assert_eq!(pulls.len(), n);
    let e = |l: usize| &tets[l.min(n - 1)];
    let f = gradients(tets, x, model.uses_dual().then_some(&*duals));
    let lame = lanewise(|l| e(l).lame);
    let k = lanewise(|l| e(l).weight / e(l).measure);
    let mut r = [Matrix3::zeros(); LANES];
    for l in 0..LANES {
        r[l] = rotations[l.min(n - 1)];
    }
    let p = local_projection(model, &lame, &k, &f, &mut r, arap_sweeps);
    for l in 0..n {
        rotations[l] = r[l];
        let target = match model.uses_dual() {
            true => {
                duals[l] += unpack(&f, l) - duals[l] - p[l];
                targets[l] = p[l] - duals[l];
                targets[l]
            }
            false => p[l],
        };
        let e = &tets[l];
        for a in 0..4 {
            pulls[l][a] = target * e.grads[a] * e.weight;
        }
    }
}

dispatch!(
    /// [`super::Element::local_step`] of `n ≤ LANES` tets at once, one per
    /// SIMD lane ([`local_projection`]), in the widest build the
    /// processor runs. `rotations` holds each tet's last rotation, which
    /// warm-starts the polar iteration (at most `arap_sweeps` sweeps of it
    /// for ARAP; for Neo-Hookean the eigenbasis of `FᵀF`, which warm-starts
    /// its eigen-decomposition). `targets` receives `p − u` of the models with a dual
    /// (ARAP's target is its rotation, left in `rotations`). `pulls`
    /// receives each tet's share of the global step's right-hand side at
    /// its vertices, `w (p − u) gₐ` (zeng2025 eq. 6), so that the gather
    /// reads 24 bytes per incidence. Missing lanes repeat the last tet and
    /// are discarded.
    tet_local_step, tet_batch_avx2, tet_batch_avx512 => tet_batch(
        tets: &[TetElement],
        model: Constitutive,
        x: &[f64],
        duals: &mut [Matrix3<f64>],
        targets: &mut [Matrix3<f64>],
        rotations: &mut [Matrix3<f64>],
        pulls: &mut [[Vector3<f64>; 4]],
        arap_sweeps: usize
    ) -> ()
);

/// The kernel of [`tet_rotations`]: `F` per lane, then the polar
/// iteration from each tet's rotation.
#[inline(always)]
fn rotation_batch(
    tets: &[TetElement],
    x: &[f64],
    rotations: &mut [Matrix3<f64>],
    gradients_out: &mut [Matrix3<f64>],
    max_sweeps: usize,
    tolerance: f64,
) {
    let n = tets.len();
    assert!(n > 0 && n <= LANES && rotations.len() == n && gradients_out.len() == n);
    let f = gradients::<LANES>(tets, x, None);
    let mut r = [[0.0; LANES]; 9];
    for (k, entry) in r.iter_mut().enumerate() {
        for (l, e) in entry.iter_mut().enumerate() {
            *e = rotations[l.min(n - 1)][k];
        }
    }
    rotation_jacobi(&f, &mut r, max_sweeps, tolerance);
    for l in 0..n {
        rotations[l] = unpack(&r, l);
        gradients_out[l] = unpack(&f, l);
    }
}

dispatch!(
    /// The deformation gradients `F = Σₐ xₐ gₐᵀ` of `n ≤ LANES` tets into
    /// `gradients`, and their rotations by the polar iteration of
    /// dahl2019 §3.3 (at most `max_sweeps` sweeps to `tolerance`) from and
    /// into `rotations`, one tet per SIMD lane: bitwise
    /// [`super::polar::rotation_jacobi`] of each tet (implicit Euler's
    /// co-rotational assembly, zeng2022 §3.1). Missing lanes repeat the
    /// last tet and are discarded.
    tet_rotations, tet_rotations_avx2, tet_rotations_avx512 => rotation_batch(
        tets: &[TetElement],
        x: &[f64],
        rotations: &mut [Matrix3<f64>],
        gradients: &mut [Matrix3<f64>],
        max_sweeps: usize,
        tolerance: f64
    ) -> ()
);

dispatch!(
    /// [`energy_and_stress`] of [`LANES`] tets.
    energy_and_stress_dispatch, energy_and_stress_avx2, energy_and_stress_avx512 => energy_and_stress(
        model: Constitutive,
        lame: &[Lame; LANES],
        f: &[Matrix3<f64>; LANES],
        rotation: &mut [Matrix3<f64>; LANES],
        arap_sweeps: usize
    ) -> [Option<(f64, Matrix3<f64>)>; LANES]
);

/// `F = Σₐ xₐ gₐᵀ` of up to `L` tets in lanes (missing lanes repeat the
/// last tet), summed in the order of [`super::Element::gradient`], plus
/// `shift` per tet when given (the ADMM dual `u`: `F + u`). Each lane's
/// sum stays in registers.
#[inline(always)]
fn gradients<const L: usize>(tets: &[TetElement], x: &[f64], shift: Option<&[Matrix3<f64>]>) -> Lanes<L> {
    let mut f = [[0.0; L]; 9];
    for l in 0..L {
        let last = l.min(tets.len() - 1);
        let e = &tets[last];
        let mut sum = [0.0; 9];
        for (&v, g) in e.vertices.iter().zip(&e.grads) {
            let xv = &x[3 * v..3 * v + 3];
            for j in 0..3 {
                for i in 0..3 {
                    sum[at(i, j)] += xv[i] * g[j];
                }
            }
        }
        if let Some(u) = shift {
            for (k, s) in sum.iter_mut().enumerate() {
                *s += u[last][k];
            }
        }
        for (k, s) in sum.iter().enumerate() {
            f[k][l] = *s;
        }
    }
    f
}

#[cfg(test)]
mod tests;
