//! The local step of tets several elements at a time, one element per SIMD
//! lane (zeng2025 eq. 5; dahl2019 §3.3): the rotation of `F` from the
//! tet's last one, converged by Newton steps on the polar decomposition
//! (quadratic, one or two steps from a warm start) with the Jacobi polar
//! iteration behind them (bounded sweeps for ARAP's `polar_sweeps`, and
//! for the lanes Newton refuses). Neo-Hookean, which needs `σ`, takes no
//! rotation: `FᵀF = V diag(σ²) Vᵀ` by cyclic Jacobi from the tet's last
//! eigenbasis, its proximal `σ*` by a scalar Newton iteration, and
//! `p = F V diag(σ*/σ) Vᵀ`, all in lanes.
//!
//! Each lane runs exactly the arithmetic of the one-element routine
//! (`closest_rotation`, the same code on one lane;
//! [`super::polar::rotation_jacobi`] for implicit Euler's rotations); a
//! lane that has converged is given identity rotations, so its result is
//! bitwise the scalar one. The lanes' square roots and divisions, a
//! latency-bound chain in one element, overlap across elements.

use nalgebra::{Matrix3, Vector3};

use super::hyperelastic::{neo_hookean_prox, signed_svd3};
use super::{Constitutive, Lame, TetElement};

/// Elements per batch of the vectorized local step.
pub const LANES: usize = 16;

/// `L` 3×3 matrices, entry `(i, j)` of lane `l` at `[i + 3 j][l]`
/// (column-major, as nalgebra stores them).
pub type Lanes<const L: usize> = [[f64; L]; 9];

/// `[g(0), …, g(L − 1)]` by a plain loop, which inlines into the lane
/// kernels' wider build (`std::array::from_fn` and `map` may stay calls).
#[inline(always)]
pub(super) fn lanewise<T: Copy + Default, const L: usize>(mut g: impl FnMut(usize) -> T) -> [T; L] {
    let mut out = [T::default(); L];
    for (l, o) in out.iter_mut().enumerate() {
        *o = g(l);
    }
    out
}

/// Column-major index of entry `(i, j)`.
const fn at(i: usize, j: usize) -> usize {
    i + 3 * j
}

/// The lanes of `L` matrices.
#[inline(always)]
pub fn pack<const L: usize>(m: &[Matrix3<f64>; L]) -> Lanes<L> {
    let mut a = [[0.0; L]; 9];
    for (l, m) in m.iter().enumerate() {
        for k in 0..9 {
            a[k][l] = m[k];
        }
    }
    a
}

/// Lane `l` as a matrix.
#[inline(always)]
pub fn unpack<const L: usize>(a: &Lanes<L>, l: usize) -> Matrix3<f64> {
    Matrix3::from_fn(|i, j| a[at(i, j)][l])
}

/// `Aᵀ B` per lane, sums over `k = 0, 1, 2` in order.
#[inline(always)]
fn mul_tn<const L: usize>(a: &Lanes<L>, b: &Lanes<L>) -> Lanes<L> {
    let mut c = [[0.0; L]; 9];
    for i in 0..3 {
        for j in 0..3 {
            for l in 0..L {
                c[at(i, j)][l] = a[at(0, i)][l] * b[at(0, j)][l]
                    + a[at(1, i)][l] * b[at(1, j)][l]
                    + a[at(2, i)][l] * b[at(2, j)][l];
            }
        }
    }
    c
}

/// Frobenius norm per lane, entries summed in storage order.
#[inline(always)]
fn norm<const L: usize>(a: &Lanes<L>) -> [f64; L] {
    lanewise(|l| {
        let mut sum = 0.0;
        for e in a {
            sum += e[l] * e[l];
        }
        sum.sqrt()
    })
}

/// `‖S − Sᵀ‖²` per lane, entries in storage order.
#[inline(always)]
fn skew_squared<const L: usize>(s: &Lanes<L>) -> [f64; L] {
    lanewise(|l| {
        let mut sum = 0.0;
        for j in 0..3 {
            for i in 0..3 {
                let d = s[at(i, j)][l] - s[at(j, i)][l];
                sum += d * d;
            }
        }
        sum
    })
}

/// dahl2019 §3.3 per lane: `R ← R G(θ)` with `tan θ = (S_ji − S_ij)/(S_ii +
/// S_jj)` on `S = RᵀF`, plane by plane, until `‖S − Sᵀ‖ ≤ tolerance ‖F‖`
/// (checked before each sweep), from `r` (rotations) in place. Returns
/// which lanes met the tolerance.
#[inline(always)]
pub fn rotation_jacobi<const L: usize>(
    f: &Lanes<L>,
    r: &mut Lanes<L>,
    max_sweeps: usize,
    tolerance: f64,
) -> [bool; L] {
    let mut s = mul_tn(r, f);
    let (n, mut scale) = (norm(f), [0.0; L]);
    for l in 0..L {
        scale[l] = n[l].max(f64::MIN_POSITIVE);
    }
    let skew_norm = |s: &Lanes<L>| -> [f64; L] {
        let squared = skew_squared(s);
        lanewise(|l| squared[l].sqrt())
    };
    let mut active = [true; L];
    for _ in 0..max_sweeps {
        let skew = skew_norm(&s);
        // A NaN skew keeps sweeping, as in the one-element iteration.
        let met = |l: usize| skew[l] <= tolerance * scale[l];
        for l in 0..L {
            active[l] = active[l] && !met(l);
        }
        if !active.contains(&true) {
            return [true; L];
        }
        for (i, j) in [(0, 1), (0, 2), (1, 2)] {
            let mut c = [1.0; L];
            let mut sn = [0.0; L];
            for l in 0..L {
                let (num, den) = (s[at(j, i)][l] - s[at(i, j)][l], s[at(i, i)][l] + s[at(j, j)][l]);
                let h = (num * num + den * den).sqrt();
                // Both quotients always, then a select (a blend, not a
                // masked store); a finished lane turns by the identity.
                let turn = active[l] && h != 0.0;
                let (cq, sq) = (den / h, num / h);
                c[l] = if turn { cq } else { 1.0 };
                sn[l] = if turn { sq } else { 0.0 };
            }
            givens_right(r, i, j, &c, &sn);
            givens_left_t(&mut s, i, j, &c, &sn);
        }
    }
    let skew = skew_norm(&s);
    lanewise(|l| !active[l] || skew[l] <= tolerance * scale[l])
}

/// Newton's method on the rotation of the polar decomposition per lane:
/// with `S = RᵀF`, the rotation `Q ≈ I + [ω]×` that makes `QᵀS` symmetric
/// solves, to first order, `(tr S I − sym S) ω = a(S)`, `a(S)` the axial
/// vector of `S − Sᵀ` (`cayley_step`); `R ← R Q`. Quadratic where the
/// Jacobi sweeps converge linearly (their rate is the element's strain),
/// so a warm start within a few degrees needs one or two. At most
/// `iterations` steps; a lane stops once `‖S − Sᵀ‖² ≤ (tolerance ‖F‖)²`
/// (converged), or unconverged where the step is refused. Returns which
/// lanes converged; the others are left to [`rotation_jacobi`].
#[inline(always)]
pub fn rotation_newton<const L: usize>(
    f: &Lanes<L>,
    r: &mut Lanes<L>,
    iterations: usize,
    tolerance: f64,
) -> [bool; L] {
    let n = norm(f);
    let bound: [f64; L] = lanewise(|l| {
        let b = tolerance * n[l].max(f64::MIN_POSITIVE);
        b * b
    });
    let (mut active, mut converged) = ([true; L], [false; L]);
    for k in 0..=iterations {
        let s = mul_tn(r, f);
        let skew = skew_squared(&s);
        for l in 0..L {
            let met = skew[l] <= bound[l];
            converged[l] = converged[l] || active[l] && met;
            active[l] = active[l] && !met;
        }
        if k == iterations || !active.contains(&true) {
            break;
        }
        let mut q = [[0.0; L]; 9];
        for l in 0..L {
            let mut sl = [0.0; 9];
            for (e, v) in sl.iter_mut().enumerate() {
                *v = s[e][l];
            }
            let (ql, ok) = cayley_step(&sl);
            active[l] = active[l] && ok;
            for (e, v) in ql.iter().enumerate() {
                q[e][l] = *v;
            }
        }
        let moved = mul_nn(r, &q);
        for (re, me) in r.iter_mut().zip(&moved) {
            for l in 0..L {
                re[l] = if active[l] { me[l] } else { re[l] };
            }
        }
    }
    converged
}

/// One Newton step of the polar rotation from `S = RᵀF` (column-major):
/// `J ω = a` with `J = tr S I − sym S`, `a = (S₃₂ − S₂₃, S₁₃ − S₃₁, S₂₁ −
/// S₁₂)`, solved by `J`'s adjugate, and the rotation `Q = cay(ω/2) = I +
/// 2/(1 + |b|²) ([b]× + [b]×²)`, `b = ω/2` (Cayley: orthogonal to
/// rounding, `I + [ω]×` to first order). Refused (`false`) where `J` is
/// not positive definite (`σᵢ + σⱼ ≤ 0`: not near the maximum of
/// `tr RᵀF`) or `|ω| > 1`.
#[inline(always)]
fn cayley_step(s: &[f64; 9]) -> ([f64; 9], bool) {
    let e = |i: usize, j: usize| s[at(i, j)];
    let a = [e(2, 1) - e(1, 2), e(0, 2) - e(2, 0), e(1, 0) - e(0, 1)];
    let t = e(0, 0) + e(1, 1) + e(2, 2);
    let (j00, j11, j22) = (t - e(0, 0), t - e(1, 1), t - e(2, 2));
    let (j01, j02, j12) =
        (-0.5 * (e(0, 1) + e(1, 0)), -0.5 * (e(0, 2) + e(2, 0)), -0.5 * (e(1, 2) + e(2, 1)));
    let (c00, c01, c02) = (j11 * j22 - j12 * j12, j02 * j12 - j01 * j22, j01 * j12 - j02 * j11);
    let (c11, c12, c22) = (j00 * j22 - j02 * j02, j01 * j02 - j00 * j12, j00 * j11 - j01 * j01);
    let det = j00 * c00 + j01 * c01 + j02 * c02;
    let inv = 1.0 / det;
    let w = [
        (c00 * a[0] + c01 * a[1] + c02 * a[2]) * inv,
        (c01 * a[0] + c11 * a[1] + c12 * a[2]) * inv,
        (c02 * a[0] + c12 * a[1] + c22 * a[2]) * inv,
    ];
    let ww = w[0] * w[0] + w[1] * w[1] + w[2] * w[2];
    let ok = j00 > 0.0 && c22 > 0.0 && det > 0.0 && ww <= 1.0;
    let b = [0.5 * w[0], 0.5 * w[1], 0.5 * w[2]];
    let bb = 0.25 * ww;
    let g = 2.0 / (1.0 + bb);
    let mut q = [0.0; 9];
    for i in 0..3 {
        for j in 0..3 {
            let diagonal = if i == j { 1.0 - g * bb } else { 0.0 };
            q[at(i, j)] = diagonal + g * b[i] * b[j];
        }
    }
    q[at(0, 1)] -= g * b[2];
    q[at(1, 0)] += g * b[2];
    q[at(0, 2)] += g * b[1];
    q[at(2, 0)] -= g * b[1];
    q[at(1, 2)] -= g * b[0];
    q[at(2, 1)] += g * b[0];
    (q, ok)
}

/// `A B` per lane, sums over `k = 0, 1, 2` in order.
#[inline(always)]
fn mul_nn<const L: usize>(a: &Lanes<L>, b: &Lanes<L>) -> Lanes<L> {
    let mut c = [[0.0; L]; 9];
    for i in 0..3 {
        for j in 0..3 {
            for l in 0..L {
                c[at(i, j)][l] = a[at(i, 0)][l] * b[at(0, j)][l]
                    + a[at(i, 1)][l] * b[at(1, j)][l]
                    + a[at(i, 2)][l] * b[at(2, j)][l];
            }
        }
    }
    c
}

/// Columns `i, j` of `A` ← `A G`, `G` the plane rotation `[c −s; s c]`.
#[inline(always)]
fn givens_right<const L: usize>(a: &mut Lanes<L>, i: usize, j: usize, c: &[f64; L], sn: &[f64; L]) {
    for k in 0..3 {
        for l in 0..L {
            let (ai, aj) = (a[at(k, i)][l], a[at(k, j)][l]);
            a[at(k, i)][l] = c[l] * ai + sn[l] * aj;
            a[at(k, j)][l] = -sn[l] * ai + c[l] * aj;
        }
    }
}

/// Rows `i, j` of `A` ← `Gᵀ A`.
#[inline(always)]
fn givens_left_t<const L: usize>(a: &mut Lanes<L>, i: usize, j: usize, c: &[f64; L], sn: &[f64; L]) {
    for k in 0..3 {
        for l in 0..L {
            let (ai, aj) = (a[at(i, k)][l], a[at(j, k)][l]);
            a[at(i, k)][l] = c[l] * ai + sn[l] * aj;
            a[at(j, k)][l] = -sn[l] * ai + c[l] * aj;
        }
    }
}

/// Cyclic Jacobi on the symmetric `A` per lane (Golub & Van Loan §8.5):
/// `A ← Jᵀ A J`, `V ← V J` until the off-diagonal part is below
/// `tolerance ‖A‖`; `A`'s diagonal is then the eigenvalues, `V` (a
/// rotation) their vectors. Returns which lanes converged.
#[inline(always)]
fn symmetric_eigen<const L: usize>(
    a: &mut Lanes<L>,
    v: &mut Lanes<L>,
    max_sweeps: usize,
    tolerance: f64,
) -> [bool; L] {
    let n = norm(a);
    let scale: [f64; L] = lanewise(|l| n[l] * tolerance);
    let off = |a: &Lanes<L>| -> [f64; L] {
        lanewise(|l| {
            (2.0 * (a[at(0, 1)][l].powi(2) + a[at(0, 2)][l].powi(2) + a[at(1, 2)][l].powi(2))).sqrt()
        })
    };
    for _ in 0..max_sweeps {
        let o = off(a);
        if (0..L).all(|l| o[l] <= scale[l]) {
            break;
        }
        for (p, q) in [(0, 1), (0, 2), (1, 2)] {
            let mut c = [1.0; L];
            let mut sn = [0.0; L];
            for l in 0..L {
                let apq = a[at(p, q)][l];
                if apq != 0.0 {
                    let theta = (a[at(q, q)][l] - a[at(p, p)][l]) / (2.0 * apq);
                    let t = if theta.abs() > 1e150 {
                        0.5 / theta
                    } else {
                        theta.signum() / (theta.abs() + (theta * theta + 1.0).sqrt())
                    };
                    c[l] = 1.0 / (t * t + 1.0).sqrt();
                    sn[l] = t * c[l];
                }
            }
            // J = [c s; −s c] in plane (p, q): with G's convention, sn ← −s.
            let minus: [f64; L] = lanewise(|l| -sn[l]);
            givens_right(a, p, q, &c, &minus);
            givens_left_t(a, p, q, &c, &minus);
            givens_right(v, p, q, &c, &minus);
        }
    }
    let o = off(a);
    lanewise(|l| o[l] <= scale[l])
}

/// Sweeps of the Jacobi polar iteration in the vectorized local step (as
/// in the one-element ARAP projection).
pub const POLAR_SWEEPS: usize = 8;
/// Relative skew tolerance of the polar iteration in the local step: the
/// projection's rotation to 1e-12 relative, far below what 5 local-global
/// iterations resolve.
pub const POLAR_TOLERANCE: f64 = 1e-12;
/// Relative skew tolerance of the polar iteration for energies and
/// stresses ([`energy_and_stress`]: L-BFGS's gradients and line search),
/// equal to the SVD's to 1e-12 even where `P` is small (`F ≈ R`).
pub const STRESS_POLAR_TOLERANCE: f64 = 1e-14;
/// Relative off-diagonal tolerance of the Neo-Hookean local step's
/// eigen-decomposition: its projection adds the first-order response to
/// what is left (`neo_hookean_lanes`), so the error is second order,
/// 1e-16 relative.
pub const EIGEN_TOLERANCE: f64 = 1e-8;
/// Newton steps ([`rotation_newton`]) before the Jacobi sweeps of the
/// converged polar iteration.
pub const POLAR_NEWTON_STEPS: usize = 3;

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
    let mut v = warm_basis(basis);
    let mut a = mul_tn(&v, &mul_nn(&mul_tn(f, f), &v));
    for (i, j) in [(0, 1), (0, 2), (1, 2)] {
        for l in 0..L {
            let m = 0.5 * (a[at(i, j)][l] + a[at(j, i)][l]);
            (a[at(i, j)][l], a[at(j, i)][l]) = (m, m);
        }
    }
    let eigen = symmetric_eigen(&mut a, &mut v, 8, EIGEN_TOLERANCE);
    let (n, det) = (norm(&a), determinant(f));
    let mut s = [[0.0; L]; 3];
    let mut usable = [true; L];
    for (i, si) in s.iter_mut().enumerate() {
        for l in 0..L {
            let eigenvalue = a[at(i, i)][l];
            si[l] = eigenvalue.max(0.0).sqrt();
            usable[l] &= eigenvalue >= 1e-4 * n[l];
        }
    }
    let (sigma, c, prox) = neo_hookean_prox::<3, L>(lame, k, &s);
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
    // p = F (V B Vᵀ).
    let vb = mul_nn(&v, &b);
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
    let mut out = [Matrix3::zeros(); L];
    for l in 0..L {
        if det[l] > 0.0 && usable[l] && eigen[l] && prox[l] {
            (basis[l], out[l]) = (unpack(&v, l), unpack(&p, l));
        } else {
            let fl = unpack(f, l);
            basis[l] = Matrix3::identity();
            out[l] = super::hyperelastic::local_projection(
                Constitutive::NeoHookean,
                lame[l],
                k[l],
                &fl,
                &Matrix3::identity(),
            );
        }
    }
    out
}

/// `det A` per lane.
#[inline(always)]
fn determinant<const L: usize>(a: &Lanes<L>) -> [f64; L] {
    lanewise(|l| {
        let e = |i: usize, j: usize| a[at(i, j)][l];
        e(0, 0) * (e(1, 1) * e(2, 2) - e(1, 2) * e(2, 1)) - e(0, 1) * (e(1, 0) * e(2, 2) - e(1, 2) * e(2, 0))
            + e(0, 2) * (e(1, 0) * e(2, 1) - e(1, 1) * e(2, 0))
    })
}

/// The lanes of `basis` (a tet's last eigenbasis), each moved back onto
/// the rotations by one Newton–Schulz step `V (3I − VᵀV)/2` (which keeps
/// the rounding of many warm starts from accumulating), or the identity
/// where it is not a rotation (`‖VᵀV − I‖ > 1e-6`, e.g. on first use).
#[inline(always)]
fn warm_basis<const L: usize>(basis: &[Matrix3<f64>; L]) -> Lanes<L> {
    let v = pack(basis);
    let mut half = mul_tn(&v, &v);
    let usable = orthonormal_gram(&half);
    for (e, entry) in half.iter_mut().enumerate() {
        let diagonal = if e % 4 == 0 { 1.5 } else { 0.0 };
        for x in entry.iter_mut() {
            *x = diagonal - 0.5 * *x;
        }
    }
    let mut v = mul_nn(&v, &half);
    for (e, entry) in v.iter_mut().enumerate() {
        let identity = if e % 4 == 0 { 1.0 } else { 0.0 };
        for l in 0..L {
            if !usable[l] {
                entry[l] = identity;
            }
        }
    }
    v
}

/// The polar rotation of `L` gradients from `rotation` (the identity
/// where it is not a rotation): converged (`sweeps ≥` [`POLAR_SWEEPS`]),
/// Newton's steps ([`rotation_newton`]) and then, for the lanes they left
/// unconverged, Jacobi sweeps; bounded (ARAP's `polar_sweeps`), at most
/// `sweeps` Jacobi sweeps. `R` in lanes, which lanes started warm, and
/// which met the tolerance.
#[inline(always)]
fn polar<const L: usize>(
    f: &Lanes<L>,
    rotation: &[Matrix3<f64>; L],
    sweeps: usize,
    tolerance: f64,
) -> (Lanes<L>, [bool; L], [bool; L]) {
    let mut r = pack(rotation);
    let warm = orthonormal(&r);
    for (k, entry) in r.iter_mut().enumerate() {
        let identity = if k % 4 == 0 { 1.0 } else { 0.0 };
        for l in 0..L {
            if !warm[l] {
                entry[l] = identity;
            }
        }
    }
    if sweeps >= POLAR_SWEEPS {
        let newton = rotation_newton(f, &mut r, POLAR_NEWTON_STEPS, tolerance);
        if !newton.contains(&false) {
            return (r, warm, newton);
        }
    }
    let converged = rotation_jacobi(f, &mut r, sweeps, tolerance);
    (r, warm, converged)
}

/// The closest rotation of one `F` by the local step's converged polar
/// iteration ([`polar`] of one lane) from `warm` (the signed SVD's where
/// `warm` is not a rotation): the one-element reference of the lanes.
pub(crate) fn closest_rotation(f: &Matrix3<f64>, warm: &Matrix3<f64>) -> Matrix3<f64> {
    let (r, warm_ok, _) = polar::<1>(&pack(&[*f]), &[*warm], POLAR_SWEEPS, POLAR_TOLERANCE);
    if warm_ok[0] {
        unpack(&r, 0)
    } else {
        svd_rotation(f)
    }
}

/// Per lane, whether `R` is a rotation to 1e-6, `‖RᵀR − I‖ ≤ 1e-6` (a
/// usable warm start), as [`is_rotation`] decides it for one matrix.
#[inline(always)]
fn orthonormal<const L: usize>(r: &Lanes<L>) -> [bool; L] {
    orthonormal_gram(&mul_tn(r, r))
}

/// [`orthonormal`] from the lanes' Gram matrices `RᵀR`.
#[inline(always)]
fn orthonormal_gram<const L: usize>(gram: &Lanes<L>) -> [bool; L] {
    let mut defect = *gram;
    for k in [0, 4, 8] {
        for g in defect[k].iter_mut() {
            *g -= 1.0;
        }
    }
    let e = norm(&defect);
    lanewise(|l| e[l] <= 1e-6)
}

/// Whether `r` is a rotation to 1e-6 (a usable warm start).
#[cfg(test)]
fn is_rotation(r: &Matrix3<f64>) -> bool {
    (r.transpose() * r - Matrix3::identity()).norm() <= 1e-6
}

/// The local projection `p = argmin ψ(p) + k/2 ‖p − F‖²` (zeng2025 eq. 5)
/// of `L` tets, each lane equal (to rounding) to
/// [`super::hyperelastic::local_projection`]: for ARAP the closest
/// rotation, warm-started from `rotation` by at most `arap_sweeps` sweeps
/// of the polar iteration (bitwise the one-element iteration with that
/// bound; the SVD's rotation where `rotation` is not one); for
/// co-rotational `corotational_lanes` at the converged rotation;
/// for Neo-Hookean `neo_hookean_lanes`, with no rotation: its eigenbasis
/// of `FᵀF` takes the place of the rotation in `rotation`. `rotation` is
/// updated with the rotation of `F` (Neo-Hookean: the eigenbasis).
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
/// closed form, `P = μ F + (λ ln J − μ) F⁻ᵀ`. ARAP's iteration stops
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

/// A public function of [`LANES`] lanes that runs the AVX-512 or the AVX2
/// build of a lane kernel where the processor has it (the same arithmetic
/// in wider registers: the lanes never mix, and Rust forms no fused
/// multiply-adds, so every build gives the same bits). AVX-512 makes the
/// local step of `drop-lg` 16 % quicker than AVX2 on one thread.
macro_rules! dispatch {
    ($(#[$doc:meta])* $name:ident, $avx:ident, $avx512:ident => $kernel:ident($($arg:ident: $ty:ty),*) -> $ret:ty) => {
        $(#[$doc])*
        #[allow(clippy::too_many_arguments)]
        pub fn $name($($arg: $ty),*) -> $ret {
            #[cfg(target_arch = "x86_64")]
            if is_x86_feature_detected!("avx512f") {
                // SAFETY: the processor has AVX-512F (checked just above).
                return unsafe { $avx512($($arg),*) };
            }
            #[cfg(target_arch = "x86_64")]
            if is_x86_feature_detected!("avx2") {
                // SAFETY: the processor has AVX2 (checked just above).
                return unsafe { $avx($($arg),*) };
            }
            $kernel($($arg),*)
        }

        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = "avx2")]
        #[allow(clippy::too_many_arguments)]
        fn $avx($($arg: $ty),*) -> $ret {
            $kernel($($arg),*)
        }

        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = "avx512f")]
        #[allow(clippy::too_many_arguments)]
        fn $avx512($($arg: $ty),*) -> $ret {
            $kernel($($arg),*)
        }
    };
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

/// `U Vᵀ` of the signed SVD.
fn svd_rotation(f: &Matrix3<f64>) -> Matrix3<f64> {
    let (u, _, v) = signed_svd3(f);
    u * v.transpose()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::element::hyperelastic::{local_projection as one, Gradient};
    use nalgebra::Rotation3;

    /// A stretched, sheared and rotated gradient, inverted for some `k`.
    fn gradient(k: usize) -> Matrix3<f64> {
        let a = k as f64;
        let axis = nalgebra::Unit::new_normalize(Vector3::new((a * 1.3).sin(), (a * 0.7).cos(), 0.4));
        let rot = Rotation3::from_axis_angle(&axis, 0.3 + 0.71 * a).into_inner();
        let mut stretch = Matrix3::new(
            1.2,
            0.1 * a.sin(),
            0.05,
            0.0,
            0.8 + 0.1 * a.cos(),
            0.2,
            0.03,
            -0.1,
            1.05 + 0.2 * (a * 0.3).sin(),
        );
        if k % 7 == 3 {
            stretch.column_mut(2).neg_mut();
        }
        rot * stretch
    }

    const LAME: Lame = Lame { lambda: 3.0e4, mu: 1.1e4 };

    #[test]
    fn lanes_equal_the_one_element_projection() {
        let models = [Constitutive::Arap, Constitutive::Corotational, Constitutive::NeoHookean];
        for model in models {
            for batch in 0..16 {
                let f: [Matrix3<f64>; LANES] = std::array::from_fn(|l| gradient(batch * LANES + l));
                // Warm starts: the SVD rotation of a nearby gradient.
                let near: [Matrix3<f64>; LANES] = std::array::from_fn(|l| gradient(batch * LANES + l) * 1.01);
                let mut rotation = near.map(|g| svd_rotation(&g));
                let (k, lame) = ([LAME.mu * 4.0; LANES], [LAME; LANES]);
                if model == Constitutive::NeoHookean {
                    // Warm eigenbases: those of another nearby gradient.
                    let nearby: [Matrix3<f64>; LANES] =
                        std::array::from_fn(|l| f[l] + gradient(batch * LANES + l + 1) * 0.01);
                    rotation = [Matrix3::identity(); LANES];
                    local_projection(model, &lame, &k, &pack(&nearby), &mut rotation, POLAR_SWEEPS);
                }
                let p = local_projection(model, &lame, &k, &pack(&f), &mut rotation, POLAR_SWEEPS);
                for l in 0..LANES {
                    let warm = svd_rotation(&near[l]);
                    let expected = one(model, LAME, k[l], &f[l], &warm);
                    let scale = f[l].norm();
                    if model == Constitutive::Arap {
                        // Bitwise the one-element Jacobi iteration.
                        assert_eq!(p[l], f[l].closest_rotation(&warm), "lane {l} of batch {batch}");
                    }
                    if model == Constitutive::Corotational {
                        // Bitwise the one-element closed form at the lane's rotation.
                        let one = crate::element::hyperelastic::corotational_projection(
                            LAME,
                            k[l],
                            &f[l],
                            &rotation[l],
                        );
                        assert_eq!(p[l], one, "lane {l} of batch {batch}");
                    }
                    assert!(
                        (p[l] - expected).norm() <= 1e-12 * scale,
                        "{model:?} {batch} {l}: {} {:?}",
                        (p[l] - expected).norm(),
                        signed_svd3(&f[l]).1
                    );
                    if model != Constitutive::NeoHookean {
                        assert!((rotation[l] - svd_rotation(&f[l])).norm() < 1e-12, "{model:?} rotation");
                    } else if f[l].determinant() > 0.0 {
                        // The eigenbasis of FᵀF, to the sweeps' tolerance.
                        let mut d = rotation[l].transpose() * f[l].transpose() * f[l] * rotation[l];
                        d.fill_diagonal(0.0);
                        assert!(d.norm() <= EIGEN_TOLERANCE * scale * scale, "eigenbasis {}", d.norm());
                    }
                }
            }
        }
    }

    /// 24 scattered points.
    fn scattered_points() -> Vec<[f64; 3]> {
        (0..24)
            .map(|i| {
                let a = i as f64;
                [a.sin(), (1.3 * a).cos(), 0.2 * (0.7 * a).sin() + 0.05 * a]
            })
            .collect()
    }

    /// 19 tets of `model` on `rest` (a full batch and a partial one), each
    /// of positive volume.
    fn scattered_tets(rest: &[[f64; 3]], model: Constitutive) -> Vec<TetElement> {
        (0..19)
            .map(|t| {
                let v = [t, t + 2, t + 3, t + 5];
                TetElement::tet(rest, v, model, LAME)
                    .or_else(|| TetElement::tet(rest, [v[1], v[0], v[2], v[3]], model, LAME))
                    .expect("a tet of positive volume")
            })
            .collect()
    }

    #[test]
    fn tet_batches_are_the_one_element_local_step() {
        // Scattered points, 19 tets: a full batch and a partial one.
        let rest = scattered_points();
        let x: Vec<f64> = rest
            .iter()
            .enumerate()
            .flat_map(|(v, r)| {
                let a = v as f64;
                let moved = gradient(1) * Vector3::from(*r);
                [
                    moved.x + 0.05 * (3.0 * a).sin(),
                    moved.y + 0.05 * (5.0 * a).cos(),
                    moved.z + 0.05 * (7.0 * a).sin(),
                ]
            })
            .collect();
        for model in [Constitutive::Arap, Constitutive::Corotational, Constitutive::NeoHookean] {
            let tets = scattered_tets(&rest, model);
            let n = tets.len();
            let start_duals: Vec<Matrix3<f64>> = (0..n).map(|e| gradient(e) * 0.01).collect();
            let (mut duals, mut targets) = (start_duals.clone(), vec![Matrix3::zeros(); n]);
            // Warm starts: the rotation of a nearby gradient.
            let warm: Vec<Matrix3<f64>> =
                (0..n).map(|e| svd_rotation(&((tets[e].gradient(&x) + start_duals[e]) * 1.01))).collect();
            let (mut rotations, mut pulls) = (warm.clone(), vec![[Vector3::zeros(); 4]; n]);
            for (k, batch) in tets.chunks(LANES).enumerate() {
                let r = k * LANES..k * LANES + batch.len();
                tet_local_step(
                    batch,
                    model,
                    &x,
                    &mut duals[r.clone()],
                    &mut targets[r.clone()],
                    &mut rotations[r.clone()],
                    &mut pulls[r],
                    POLAR_SWEEPS,
                );
            }
            for (e, tet) in tets.iter().enumerate() {
                let (mut dual, mut target) = (start_duals[e], warm[e]);
                tet.local_step(model, &x, &mut dual, &mut target);
                let scale = tet.gradient(&x).norm() + dual.norm();
                // ARAP's target is its rotation; `targets` is left alone.
                let got = if model == Constitutive::Arap { rotations[e] } else { targets[e] };
                assert!((got - target).norm() <= 1e-12 * scale, "{model:?} tet {e} target");
                assert!((duals[e] - dual).norm() <= 1e-12 * scale, "{model:?} tet {e} dual");
                for a in 0..4 {
                    assert_eq!(pulls[e][a], got * tet.grads[a] * tet.weight, "{model:?} pull");
                }
            }
        }
    }

    #[test]
    fn lane_stresses_equal_the_one_element_ones() {
        for model in [Constitutive::Arap, Constitutive::Corotational, Constitutive::NeoHookean] {
            for batch in 0..8 {
                let f: [Matrix3<f64>; LANES] = std::array::from_fn(|l| gradient(batch * LANES + l));
                let mut rotation = [Matrix3::identity(); LANES];
                let got = energy_and_stress_dispatch(model, &[LAME; LANES], &f, &mut rotation, POLAR_SWEEPS);
                for l in 0..LANES {
                    let expected = crate::element::hyperelastic::energy_and_stress(model, LAME, &f[l]);
                    match (got[l], expected) {
                        (Some((e, p)), Some((e0, p0))) => {
                            assert!((e - e0).abs() <= 1e-12 * e0.abs().max(LAME.mu), "{model:?} energy");
                            assert!((p - p0).norm() <= 1e-12 * p0.norm().max(LAME.mu), "{model:?} stress");
                        }
                        (None, None) => {}
                        other => panic!("{model:?}: {other:?}"),
                    }
                }
            }
        }
    }

    #[test]
    fn bounded_arap_sweeps_are_the_one_element_iteration_and_ascend() {
        for batch in 0..16 {
            let f: [Matrix3<f64>; LANES] = std::array::from_fn(|l| gradient(batch * LANES + l));
            let near: [Matrix3<f64>; LANES] = std::array::from_fn(|l| gradient(batch * LANES + l) * 1.01);
            let warm = near.map(|g| svd_rotation(&g));
            for sweeps in [1, 2] {
                let mut rotation = warm;
                let p = local_projection(
                    Constitutive::Arap,
                    &[LAME; LANES],
                    &[1.0; LANES],
                    &pack(&f),
                    &mut rotation,
                    sweeps,
                );
                for l in 0..LANES {
                    let one =
                        crate::element::polar::rotation_jacobi(&f[l], &warm[l], sweeps, POLAR_TOLERANCE);
                    assert_eq!(p[l], one, "lane {l} of batch {batch}, {sweeps} sweeps");
                    // Each sweep raises tr RᵀF: the local step still descends.
                    let trace = |r: &Matrix3<f64>| (r.transpose() * f[l]).trace();
                    assert!(trace(&p[l]) >= trace(&warm[l]) - 1e-14 * f[l].norm());
                    assert!((p[l].transpose() * p[l] - Matrix3::identity()).norm() < 1e-14);
                }
            }
        }
    }

    #[test]
    fn tet_rotations_are_the_one_element_polar_iteration() {
        // 19 tets (a full batch and a partial one), rotated and stretched,
        // from the identity (a cold start) and from a nearby rotation.
        let rest = scattered_points();
        let x: Vec<f64> = rest
            .iter()
            .flat_map(|r| (gradient(3) * Vector3::from(*r)).iter().copied().collect::<Vec<_>>())
            .collect();
        let tets = scattered_tets(&rest, Constitutive::Corotational);
        for (sweeps, tolerance) in [(4, 1e-12), (10, 1e-14), (1, 0.0)] {
            for start in [Matrix3::identity(), svd_rotation(&(gradient(3) * 1.01))] {
                let mut rotations = vec![start; tets.len()];
                let mut f = vec![Matrix3::zeros(); tets.len()];
                for (k, batch) in tets.chunks(LANES).enumerate() {
                    let r = k * LANES..k * LANES + batch.len();
                    tet_rotations(batch, &x, &mut rotations[r.clone()], &mut f[r], sweeps, tolerance);
                }
                for (e, t) in tets.iter().enumerate() {
                    let one =
                        crate::element::polar::rotation_jacobi(&t.gradient(&x), &start, sweeps, tolerance);
                    assert_eq!(f[e], t.gradient(&x), "tet {e}: F");
                    assert_eq!(rotations[e], one, "tet {e}, {sweeps} sweeps to {tolerance:e}");
                }
            }
        }
    }

    #[test]
    fn lane_orthonormality_is_the_one_matrix_test() {
        let m: [Matrix3<f64>; LANES] = std::array::from_fn(|l| match l % 4 {
            0 => svd_rotation(&gradient(l)),
            1 => svd_rotation(&gradient(l)) * (1.0 + 1e-9),
            2 => svd_rotation(&gradient(l)) * (1.0 + 1e-5),
            _ => Matrix3::zeros(),
        });
        let lanes = orthonormal(&pack(&m));
        for l in 0..LANES {
            assert_eq!(lanes[l], is_rotation(&m[l]), "lane {l}");
        }
    }

    #[test]
    fn a_cold_or_broken_warm_start_takes_the_svd_route() {
        let f: [Matrix3<f64>; LANES] = std::array::from_fn(gradient);
        let mut rotation = [Matrix3::zeros(); LANES];
        let p =
            local_projection(Constitutive::Arap, &[LAME; LANES], &[1.0; LANES], &pack(&f), &mut rotation, 1);
        for l in 0..LANES {
            assert!((p[l] - svd_rotation(&f[l])).norm() < 1e-12);
        }
    }

    /// A rotation by `angle` about a fixed oblique axis.
    fn turn(angle: f64) -> Matrix3<f64> {
        let axis = nalgebra::Unit::new_normalize(Vector3::new(0.3, -0.5, 0.8));
        Rotation3::from_axis_angle(&axis, angle).into_inner()
    }

    #[test]
    fn newton_polar_steps_converge_quadratically_from_a_warm_start() {
        // Gradients with det F > 0 (every 7th has a reflected stretch).
        let f: [Matrix3<f64>; LANES] = std::array::from_fn(|l| gradient(7 * (l / 3) + l % 3));
        let exact = f.map(|f| svd_rotation(&f));
        let error = |r: &Lanes<LANES>, l: usize| (unpack(r, l) - exact[l]).norm();
        for angle in [1e-2, 1e-3] {
            let warm = pack(&std::array::from_fn(|l| exact[l] * turn(angle)));
            // One step: the error falls to O(angle²) (Jacobi's sweeps fall
            // by the strain, here ~0.2, per sweep).
            let mut r = warm;
            assert_eq!(rotation_newton(&pack(&f), &mut r, 1, 0.0), [false; LANES]);
            for l in 0..LANES {
                assert!(error(&r, l) <= 2.0 * angle * angle, "lane {l}: {} at {angle}", error(&r, l));
            }
            let mut r = warm;
            let converged = rotation_newton(&pack(&f), &mut r, POLAR_NEWTON_STEPS, POLAR_TOLERANCE);
            assert_eq!(converged, [true; LANES], "{angle}");
            for l in 0..LANES {
                assert!(error(&r, l) <= 1e-12, "lane {l}: {}", error(&r, l));
                let r = unpack(&r, l);
                assert!((r.transpose() * r - Matrix3::identity()).norm() <= 1e-14);
            }
        }
    }

    #[test]
    fn refused_newton_steps_leave_the_lane_to_jacobi() {
        // Inverted gradients (J not positive definite at the warm start)
        // and warm starts a half turn away (|ω| > 1) are refused; the
        // converged polar iteration still finds the rotation of F.
        let f: [Matrix3<f64>; LANES] = std::array::from_fn(|l| match l % 2 {
            0 => gradient(l) * Matrix3::from_diagonal(&Vector3::new(1.0, 1.0, -1.0)),
            _ => gradient(l),
        });
        let exact = f.map(|f| svd_rotation(&f));
        let warm: [Matrix3<f64>; LANES] = std::array::from_fn(|l| exact[l] * turn(2.5));
        let mut r = pack(&warm);
        let newton = rotation_newton(&pack(&f), &mut r, POLAR_NEWTON_STEPS, POLAR_TOLERANCE);
        assert!(newton.iter().filter(|&&c| !c).count() >= LANES / 2, "{newton:?}");
        let (r, _, converged) = polar(&pack(&f), &warm, POLAR_SWEEPS, POLAR_TOLERANCE);
        for l in 0..LANES {
            // Jacobi from half a turn away may exhaust its sweeps on an
            // inverted F (the callers then take the SVD); otherwise it
            // reaches the maximum of tr RᵀF over rotations, the signed SVD's.
            assert!(converged[l] || l % 2 == 0, "lane {l}");
            let tr = |r: &Matrix3<f64>| (r.transpose() * f[l]).trace();
            if converged[l] {
                assert!((tr(&unpack(&r, l)) - tr(&exact[l])).abs() <= 1e-12 * f[l].norm(), "lane {l}");
            }
        }
    }

    #[test]
    fn symmetric_eigen_diagonalizes() {
        let a0 = Matrix3::new(4.0, 1.0, -0.5, 1.0, 3.0, 0.25, -0.5, 0.25, -2.0);
        let mut a = pack(&[a0; 2]);
        let mut v = pack(&[Matrix3::identity(); 2]);
        assert_eq!(symmetric_eigen(&mut a, &mut v, 8, 1e-15), [true; 2]);
        let (d, vl) = (unpack(&a, 0), unpack(&v, 0));
        let back = vl * Matrix3::from_diagonal(&d.diagonal()) * vl.transpose();
        assert!((back - a0).norm() < 1e-13 && (vl.determinant() - 1.0).abs() < 1e-13);
    }
}
