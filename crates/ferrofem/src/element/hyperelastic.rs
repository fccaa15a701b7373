//! Isotropic hyperelastic energies written in the singular values σ of the
//! deformation gradient F (3×3 for tets, 3×2 for membranes), and their
//! proximal operators, the local step of the local-global integrator
//! (zeng2025 eq. 5; Overby et al. 2017 §4: for an isotropic ψ the proximal
//! point of `F = U Σ Vᵀ` is `U diag(σ*) Vᵀ`, σ* minimizing a function of
//! `D` variables).
//!
//! Energies are densities per unit rest measure (volume, or area times
//! thickness) and pure fixed-size functions returning `(ψ, ∇ψ, ∇²ψ)`.

use nalgebra::{Matrix3, Matrix3x2, SMatrix, SVector, Vector3};
use serde::{Deserialize, Serialize};

pub use super::lame::Lame;
use super::lanes::lanewise;
pub use super::polar::{signed_svd3, thin_svd32};

/// The constitutive model of a body under the local-global integrator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Constitutive {
    /// As-rigid-as-possible, `ψ = μ ‖F − R‖²`; its local step is the
    /// projection onto rotations (projective dynamics, Bouaziz et al. 2014).
    Arap,
    /// Co-rotational, `ψ = μ ‖F − R‖² + λ/2 tr(RᵀF − I)²`.
    #[default]
    Corotational,
    /// Compressible Neo-Hookean, `ψ = μ/2 (tr FᵀF − d) − μ ln J + λ/2 ln² J`.
    NeoHookean,
    /// Stable Neo-Hookean (Smith et al. 2018, [`super::stable_neo_hookean`]):
    /// Neo-Hookean's response without its `ln J`, finite and restoring for
    /// inverted elements; the model for large compression, under either
    /// integrator.
    StableNeoHookean,
}

impl Constitutive {
    /// The name used in scene files.
    pub fn name(self) -> &'static str {
        match self {
            Constitutive::Arap => "arap",
            Constitutive::Corotational => "corotational",
            Constitutive::NeoHookean => "neo-hookean",
            Constitutive::StableNeoHookean => "stable-neo-hookean",
        }
    }

    /// ADMM penalty `k` per unit rest measure (the element weight is
    /// `w = k · measure`): `2μ` for ARAP, whose energy is exactly
    /// `w/2 dist²(F, SO(d))`, and `2μ + λ` for the others, the stiffness
    /// of their stiffest (volumetric) mode.
    pub fn penalty(self, lame: Lame) -> f64 {
        match self {
            Constitutive::Arap => 2.0 * lame.mu,
            _ => 2.0 * lame.mu + lame.lambda,
        }
    }

    /// Whether the local step carries an ADMM dual variable. ARAP's is a
    /// plain projection (its energy is the squared distance it minimizes).
    pub fn uses_dual(self) -> bool {
        self != Constitutive::Arap
    }
}

/// `ψ(σ)`, `∇ψ` and `∇²ψ` in singular-value space, `D` = 3 (solids) or 2
/// (membranes). `None` where the energy is infinite (Neo-Hookean with
/// `J = Πσ ≤ 0`).
pub fn energy<const D: usize>(
    model: Constitutive,
    lame: Lame,
    s: &SVector<f64, D>,
) -> Option<(f64, SVector<f64, D>, SMatrix<f64, D, D>)> {
    let (l, mu, d) = (lame.lambda, lame.mu, D as f64);
    let ones = SVector::<f64, D>::repeat(1.0);
    match model {
        Constitutive::Arap => {
            let e = s - ones;
            Some((mu * e.norm_squared(), 2.0 * mu * e, SMatrix::identity() * 2.0 * mu))
        }
        Constitutive::Corotational => {
            let (e, tr) = (s - ones, s.sum() - d);
            let psi = mu * e.norm_squared() + 0.5 * l * tr * tr;
            let hess = SMatrix::<f64, D, D>::identity() * 2.0 * mu + SMatrix::repeat(l);
            Some((psi, 2.0 * mu * e + ones * (l * tr), hess))
        }
        Constitutive::NeoHookean => {
            let j = s.product();
            if j.is_nan() || j <= 0.0 {
                return None;
            }
            let lj = j.ln();
            let psi = 0.5 * mu * (s.norm_squared() - d) - mu * lj + 0.5 * l * lj * lj;
            let grad = s.map(|x| mu * x + (l * lj - mu) / x);
            let hess = SMatrix::<f64, D, D>::from_fn(|a, b| {
                if a == b {
                    mu + (l + mu - l * lj) / (s[a] * s[a])
                } else {
                    l / (s[a] * s[b])
                }
            });
            Some((psi, grad, hess))
        }
        Constitutive::StableNeoHookean => Some(super::stable_neo_hookean::energy(lame, s)),
    }
}

/// The proximal point in σ-space: `argmin_σ ψ(σ) + k/2 ‖σ − s‖²` (for ARAP
/// the projection σ = 1). Co-rotational is quadratic and solved in closed
/// form; Neo-Hookean by its reduction to one scalar ([`neo_hookean_prox`]),
/// or where that hands the element on, a damped Newton iteration in σ that
/// keeps `J > 0`.
pub fn prox<const D: usize>(model: Constitutive, lame: Lame, k: f64, s: &SVector<f64, D>) -> SVector<f64, D> {
    let d = D as f64;
    match model {
        Constitutive::Arap => SVector::repeat(1.0),
        Constitutive::Corotational => {
            // ((2μ + k) I + λ 11ᵀ) σ = k s + (2μ + λ d) 1, by Sherman–Morrison.
            let a = 2.0 * lame.mu + k;
            let r = s * k + SVector::repeat(2.0 * lame.mu + lame.lambda * d);
            (r - SVector::repeat(lame.lambda * r.sum() / (a + lame.lambda * d))) / a
        }
        Constitutive::NeoHookean => {
            let (x, _, ok) = neo_hookean_prox::<D, 1>(&[lame], &[k], &std::array::from_fn(|i| [s[i]]));
            match ok[0] {
                true => SVector::from_fn(|i, _| x[i][0]),
                false => prox_newton(model, lame, k, s),
            }
        }
        Constitutive::StableNeoHookean => prox_newton(model, lame, k, s),
    }
}

/// Newton steps of [`neo_hookean_prox`] before a lane is handed to the
/// damped Newton iteration in σ (from the linearized guess, 2 to 4 steps
/// reach the tolerance).
pub const NEO_HOOKEAN_PROX_STEPS: usize = 30;

/// Consecutive halvings towards `c_max` after which [`neo_hookean_prox`]
/// hands a lane on: its root is then in the last sixteenth below `c_max`,
/// or (`g(c_max) > 0`) there is none on this root of every σᵢ.
pub const PROX_HALVINGS: f64 = 4.0;

/// Neo-Hookean's proximal point in σ-space, `argmin ψ(σ) + k/2 ‖σ − s‖²`,
/// for `L` elements at once (one per lane, `s[i][l]`), by its reduction to
/// one scalar. Stationarity reads `(μ + k) σᵢ + c/σᵢ = k sᵢ` with one
/// `c = λ ln J − μ` for every `i`, so
/// `σᵢ(c) = (k sᵢ + √Dᵢ) / 2(μ + k)`, `Dᵢ = k² sᵢ² − 4 (μ + k) c`
/// (the root where the objective is convex in σᵢ), and `c` is the root of
/// `g(c) = λ ln Πσᵢ(c) − μ − c` on `c < c_max` (where every `Dᵢ > 0` and
/// `σᵢ > 0`). `g` is concave and decreasing, so Newton's method, from the
/// linearized guess `ln J ≈ k ln Πs / (2μ + k + λd)`, lands above the root
/// after one step and descends onto it monotonically (quadratically: a
/// step under 1e-8 `(μ + |c|)` is taken and ends it); a step past `c_max`
/// is halved towards it, at most [`PROX_HALVINGS`] times in a row. The
/// Hessian there, `diag(μ + k − c/σᵢ²) + λ wwᵀ` (`wᵢ = 1/σᵢ`), is
/// positive definite: a minimum. Returns σ*, `c` and
/// which lanes converged (a lane whose minimum lies on the other root, or
/// whose arithmetic failed, does not).
#[inline(always)]
pub fn neo_hookean_prox<const D: usize, const L: usize>(
    lame: &[Lame; L],
    k: &[f64; L],
    s: &[[f64; L]; D],
) -> ([[f64; L]; D], [f64; L], [bool; L]) {
    let (mut c, mut c_max, mut done, mut j) = ([0.0; L], [f64::INFINITY; L], [false; L], [1.0; L]);
    let (mut halvings, mut failed) = ([0.0; L], [false; L]);
    let (a, half_inv_a) = (lanewise(|l| lame[l].mu + k[l]), lanewise(|l| 0.5 / (lame[l].mu + k[l])));
    for si in s {
        for l in 0..L {
            let edge = if si[l] > 0.0 { k[l] * k[l] * si[l] * si[l] * (0.5 * half_inv_a[l]) } else { 0.0 };
            (c_max[l], j[l]) = (c_max[l].min(edge), j[l] * si[l]);
        }
    }
    let ln_j = ln_lanes(&j);
    for l in 0..L {
        let (mu, lambda) = (lame[l].mu, lame[l].lambda);
        let guess = if j[l] > 0.0 { k[l] * ln_j[l] / (2.0 * mu + k[l] + lambda * D as f64) } else { 0.0 };
        c[l] = (lambda * guess - mu).min(0.5 * (c_max[l] - mu));
    }
    for _ in 0..NEO_HOOKEAN_PROX_STEPS {
        if done.iter().all(|&d| d) {
            break;
        }
        let (sigma, slope) = prox_roots(k, &a, &half_inv_a, s, &c);
        let mut j = [1.0; L];
        for si in &sigma {
            for l in 0..L {
                j[l] *= si[l];
            }
        }
        let ln_j = ln_lanes(&j);
        for l in 0..L {
            let (mu, lambda) = (lame[l].mu, lame[l].lambda);
            // g / g' with g' = −λ num/den − 1.
            let g = lambda * ln_j[l] - mu - c[l];
            let (num, den) = slope[l];
            let newton = c[l] + g * den / (lambda * num + den);
            let inside = newton < c_max[l];
            let next = if inside { newton } else { 0.5 * (c[l] + c_max[l]) };
            let halved = if inside { 0.0 } else { halvings[l] + 1.0 };
            let (converged, give_up) =
                (inside && (next - c[l]).abs() <= 1e-8 * (mu + c[l].abs()), halved > PROX_HALVINGS);
            let active = !done[l];
            c[l] = if active { next } else { c[l] };
            halvings[l] = if active { halved } else { halvings[l] };
            failed[l] |= active && give_up;
            done[l] |= active && (converged || give_up);
        }
    }
    let (sigma, _) = prox_roots(k, &a, &half_inv_a, s, &c);
    for si in &sigma {
        for l in 0..L {
            done[l] &= !failed[l] && si[l] > 0.0 && si[l] <= f64::MAX;
        }
    }
    (sigma, c, done)
}

/// `σᵢ(c)` of [`neo_hookean_prox`] per lane, `(k sᵢ + √Dᵢ) / 2a` with
/// `a = μ + k`, or without cancellation `−2c / (√Dᵢ − k sᵢ)` where
/// `sᵢ < 0` (an inverted element; that division only runs in a batch that
/// has one), and `−d ln J/dc = Σ 1/(σᵢ √Dᵢ)` as a fraction `(num, den)`.
#[inline(always)]
fn prox_roots<const D: usize, const L: usize>(
    k: &[f64; L],
    a: &[f64; L],
    half_inv_a: &[f64; L],
    s: &[[f64; L]; D],
    c: &[f64; L],
) -> ([[f64; L]; D], [(f64, f64); L]) {
    let (mut sigma, mut slope) = ([[0.0; L]; D], [(0.0, 1.0); L]);
    for (si, sigma_i) in s.iter().zip(sigma.iter_mut()) {
        let mut root = [0.0; L];
        for l in 0..L {
            let ks = k[l] * si[l];
            root[l] = (ks * ks - 4.0 * a[l] * c[l]).max(0.0).sqrt();
            sigma_i[l] = (ks + root[l]) * half_inv_a[l];
        }
        if si.iter().fold(false, |any, &x| any | (x < 0.0)) {
            for l in 0..L {
                let inverted = -2.0 * c[l] / (root[l] - k[l] * si[l]);
                sigma_i[l] = if si[l] < 0.0 { inverted } else { sigma_i[l] };
            }
        }
        for l in 0..L {
            // num/den + 1/x = (num x + den) / (den x), x = σᵢ √Dᵢ.
            let x = sigma_i[l] * root[l];
            let (num, den) = slope[l];
            slope[l] = (num * x + den, den * x);
        }
    }
    (sigma, slope)
}

/// `ln x` per lane (NaN unless `x` is positive, finite and normal), to an
/// ulp or two: `x = 2ᵉ m` with `m ∈ [√½, √2)`, `ln m = 2 atanh z`,
/// `z = (m − 1)/(m + 1)`, by its series to `z²¹` (`|z| ≤ 0.172`). Plain
/// arithmetic, so it vectorizes where the library's `ln` is a call per lane.
#[inline(always)]
pub fn ln_lanes<const L: usize>(x: &[f64; L]) -> [f64; L] {
    const MANTISSA: u64 = (1 << 52) - 1;
    // 2⁵² + e as f64 from the bits of the biased exponent e.
    const MAGIC: u64 = 0x4330_0000_0000_0000;
    let mut out = [0.0; L];
    for l in 0..L {
        let bits = x[l].to_bits();
        let m = f64::from_bits((bits & MANTISSA) | (1023 << 52));
        let big = m > std::f64::consts::SQRT_2;
        let m = if big { 0.5 * m } else { m };
        let e = f64::from_bits(MAGIC | (bits >> 52)) - (4_503_599_627_370_496.0 + 1023.0);
        let e = if big { e + 1.0 } else { e };
        let z = (m - 1.0) / (m + 1.0);
        let z2 = z * z;
        let mut p = 1.0 / 21.0;
        for n in (0..10).rev() {
            p = p * z2 + 1.0 / (2 * n + 1) as f64;
        }
        let valid = x[l] >= f64::MIN_POSITIVE && x[l] <= f64::MAX;
        out[l] = if valid { e * std::f64::consts::LN_2 + 2.0 * z * p } else { f64::NAN };
    }
    out
}

/// The damped Newton iteration in σ that [`neo_hookean_prox`] hands its
/// unconverged lanes to, and stable Neo-Hookean's prox (from `s` itself:
/// its energy is finite everywhere; Neo-Hookean starts from the clamped
/// singular values, inside `J > 0`).
fn prox_newton<const D: usize>(
    model: Constitutive,
    lame: Lame,
    k: f64,
    s: &SVector<f64, D>,
) -> SVector<f64, D> {
    let objective = |x: &SVector<f64, D>| {
        energy(model, lame, x).map(|(psi, g, h)| {
            (
                psi + 0.5 * k * (x - s).norm_squared(),
                g + (x - s) * k,
                h + SMatrix::<f64, D, D>::identity() * k,
            )
        })
    };
    let positive_j = model == Constitutive::NeoHookean;
    let mut x = if positive_j { s.map(|v| v.max(1e-2)) } else { *s };
    let Some(mut cur) = objective(&x) else { return SVector::repeat(1.0) };
    for _ in 0..50 {
        let (f, g, h) = cur;
        let newton = h.cholesky().map(|c| c.solve(&(-g))).filter(|p| p.dot(&g) < 0.0);
        let step = newton.unwrap_or(-g / k);
        // Newton's convergence is quadratic: past a step of 1e-9, the full
        // step leaves an error at rounding, with nothing left to check.
        if newton.is_some() && step.norm() <= 1e-9 * (1.0 + x.norm()) {
            let last = x + step;
            if !positive_j || last.product() > 0.0 {
                x = last;
            }
            break;
        }
        let mut t = 1.0;
        let mut accepted = false;
        for _ in 0..40 {
            let trial = x + step * t;
            if let Some(next) = objective(&trial) {
                // Armijo, or (where the energy's rounding hides the
                // decrease near the minimum) no rise and a smaller gradient.
                let settling = next.0 <= f + 1e-13 * f.abs() && next.1.norm() < g.norm();
                if next.0 <= f + 1e-4 * t * step.dot(&g) || settling {
                    (x, cur, accepted) = (trial, next, true);
                    break;
                }
            }
            t *= 0.5;
        }
        if !accepted || (step * t).norm() <= 1e-14 * (1.0 + x.norm()) {
            break;
        }
    }
    x
}

/// Singular values, with `U` and `V`, of a 3×D deformation gradient, and
/// its closest rotation.
pub trait Gradient<const D: usize>: Sized {
    /// `(U, σ, V)`.
    fn usv(&self) -> (SMatrix<f64, 3, D>, SVector<f64, D>, SMatrix<f64, D, D>);

    /// The closest rotation (orthonormal columns) `U Vᵀ`, possibly
    /// warm-started from a nearby one.
    fn closest_rotation(&self, warm: &Self) -> Self;
}

impl Gradient<3> for Matrix3<f64> {
    fn usv(&self) -> (Matrix3<f64>, Vector3<f64>, Matrix3<f64>) {
        signed_svd3(self)
    }

    /// The converged polar iteration from `warm` (Newton steps, then
    /// dahl2019 §3.3's Jacobi sweeps; an SVD when `warm` is not a rotation,
    /// e.g. on first use).
    fn closest_rotation(&self, warm: &Self) -> Self {
        super::lanes::closest_rotation(self, warm)
    }
}

impl Gradient<2> for Matrix3x2<f64> {
    fn usv(&self) -> (SMatrix<f64, 3, 2>, SVector<f64, 2>, SMatrix<f64, 2, 2>) {
        thin_svd32(self)
    }

    fn closest_rotation(&self, _warm: &Self) -> Self {
        super::polar::membrane_rotation(self)
    }
}

/// `ψ(F)` and the first Piola–Kirchhoff stress `P = ∂ψ/∂F = U diag(∇ψ(σ)) Vᵀ`
/// (per unit rest measure); `None` where ψ is infinite.
pub fn energy_and_stress<const D: usize>(
    model: Constitutive,
    lame: Lame,
    f: &SMatrix<f64, 3, D>,
) -> Option<(f64, SMatrix<f64, 3, D>)>
where
    SMatrix<f64, 3, D>: Gradient<D>,
{
    let (u, s, v) = f.usv();
    let (psi, g, _) = energy(model, lame, &s)?;
    Some((psi, u * SMatrix::from_diagonal(&g) * v.transpose()))
}

/// The local step of one element: `p = argmin ψ(p) + k/2 ‖p − F‖²`
/// (zeng2025 eq. 5 with ζ = ψ), `U diag(σ*) Vᵀ`; for ARAP the closest
/// rotation, warm-started from `warm` (the element's previous projection).
pub fn local_projection<const D: usize>(
    model: Constitutive,
    lame: Lame,
    k: f64,
    f: &SMatrix<f64, 3, D>,
    warm: &SMatrix<f64, 3, D>,
) -> SMatrix<f64, 3, D>
where
    SMatrix<f64, 3, D>: Gradient<D>,
{
    match model {
        Constitutive::Arap => return f.closest_rotation(warm),
        Constitutive::Corotational => return corotational_projection(lame, k, f, &f.closest_rotation(warm)),
        Constitutive::NeoHookean | Constitutive::StableNeoHookean => {}
    }
    let (u, s, v) = f.usv();
    u * SMatrix::from_diagonal(&prox(model, lame, k, &s)) * v.transpose()
}

/// Co-rotational's local step in closed form, without an SVD: its
/// [`prox`] is affine in σ, `σ* = (k σ + c 1)/a` with `a = 2μ + k`,
/// `g = 2μ + λd`, `c = (g a − λ k t)/(a + λd)` and `t = Σσ = tr(RᵀF)`, so
/// `p = U diag(σ*) Vᵀ = (k F + c R)/a` for `R = U Vᵀ` the closest
/// rotation of `F` (zeng2025 eq. 5).
pub fn corotational_projection<const D: usize>(
    lame: Lame,
    k: f64,
    f: &SMatrix<f64, 3, D>,
    r: &SMatrix<f64, 3, D>,
) -> SMatrix<f64, 3, D> {
    let (d, a) = (D as f64, 2.0 * lame.mu + k);
    let g = 2.0 * lame.mu + lame.lambda * d;
    let t = r.dot(f);
    let c = (g * a - lame.lambda * k * t) / (a + lame.lambda * d);
    (f * k + r * c) * (1.0 / a)
}

#[cfg(test)]
mod tests;
