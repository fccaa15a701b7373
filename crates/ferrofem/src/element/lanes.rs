//! 3×3 matrices several at a time, one per SIMD lane: their algebra and
//! the rotation of `F` from the tet's last one, converged by Newton steps
//! on the polar decomposition (quadratic, one or two steps from a warm
//! start) with the Jacobi polar iteration behind them (bounded sweeps for
//! ARAP's `polar_sweeps`, and for the lanes Newton refuses), and the
//! cyclic Jacobi eigen-decomposition of `FᵀF` from the tet's last
//! eigenbasis (Neo-Hookean). The tet kernels built on them are in
//! [`super::tet_lanes`].
//!
//! Each lane runs exactly the arithmetic of the one-element routine
//! (`closest_rotation`, the same code on one lane;
//! [`super::polar::rotation_jacobi`] for implicit Euler's rotations); a
//! lane that has converged is given identity rotations, so its result is
//! bitwise the scalar one. The lanes' square roots and divisions, a
//! latency-bound chain in one element, overlap across elements.

use nalgebra::Matrix3;

use super::polar::signed_svd3;

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
pub(super) const fn at(i: usize, j: usize) -> usize {
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
pub(super) fn mul_tn<const L: usize>(a: &Lanes<L>, b: &Lanes<L>) -> Lanes<L> {
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
pub(super) fn norm<const L: usize>(a: &Lanes<L>) -> [f64; L] {
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
pub(super) fn skew_squared<const L: usize>(s: &Lanes<L>) -> [f64; L] {
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
pub(super) fn cayley_step(s: &[f64; 9]) -> ([f64; 9], bool) {
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
pub(super) fn mul_nn<const L: usize>(a: &Lanes<L>, b: &Lanes<L>) -> Lanes<L> {
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
pub(super) fn givens_right<const L: usize>(
    a: &mut Lanes<L>,
    i: usize,
    j: usize,
    c: &[f64; L],
    sn: &[f64; L],
) {
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
pub(super) fn givens_left_t<const L: usize>(
    a: &mut Lanes<L>,
    i: usize,
    j: usize,
    c: &[f64; L],
    sn: &[f64; L],
) {
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
pub(super) fn symmetric_eigen<const L: usize>(
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
/// stresses ([`super::tet_lanes::energy_and_stress`]: L-BFGS's gradients and line search),
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

/// `det A` per lane.
#[inline(always)]
pub(super) fn determinant<const L: usize>(a: &Lanes<L>) -> [f64; L] {
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
pub(super) fn warm_basis<const L: usize>(basis: &[Matrix3<f64>; L]) -> Lanes<L> {
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
pub(super) fn polar<const L: usize>(
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
pub(super) fn orthonormal<const L: usize>(r: &Lanes<L>) -> [bool; L] {
    orthonormal_gram(&mul_tn(r, r))
}

/// [`orthonormal`] from the lanes' Gram matrices `RᵀR`.
#[inline(always)]
pub(super) fn orthonormal_gram<const L: usize>(gram: &Lanes<L>) -> [bool; L] {
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
pub(super) fn is_rotation(r: &Matrix3<f64>) -> bool {
    (r.transpose() * r - Matrix3::identity()).norm() <= 1e-6
}

/// `U Vᵀ` of the signed SVD.
pub(super) fn svd_rotation(f: &Matrix3<f64>) -> Matrix3<f64> {
    let (u, _, v) = signed_svd3(f);
    u * v.transpose()
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

pub(super) use dispatch;
