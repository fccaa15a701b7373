//! Per-contact resolution of Signorini's law and Coulomb's friction
//! (zeng2022 eq. 5–6): given the contact's 3×3 block `W` (rows normal, t1,
//! t2) and `d = δ_free + Σ_{β≠α} W_αβ λ_β`, find `λ` with
//! `0 ≤ δₙ ⟂ λₙ ≥ 0` and either stick (`δₜ = 0`, `‖λₜ‖ ≤ μλₙ`) or slip
//! (`λₜ = −μλₙ δₜ/‖δₜ‖`).

use nalgebra::{Matrix2, Matrix3, Vector2, Vector3};

/// Which branch of the contact law a resolution ended in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ContactState {
    /// `λ = 0`, `δₙ ≥ 0`.
    Separated,
    /// `δ = 0`, inside the friction cone.
    Stick,
    /// `δₙ = 0`, on the cone's surface, sliding.
    Slip,
}

/// Local iterations of the slip branch when `W` couples normal and tangents.
const SLIP_ITERATIONS: usize = 20;

/// Solves one contact's local problem; `w` must have a positive normal
/// entry and a positive definite tangential block.
pub fn resolve_contact(w: &Matrix3<f64>, d: &Vector3<f64>, mu: f64) -> (Vector3<f64>, ContactState) {
    if d.x >= 0.0 {
        return (Vector3::zeros(), ContactState::Separated);
    }
    // Stick: δ = 0.
    if let Some(lambda) = w.cholesky().map(|c| c.solve(&(-d))) {
        let lt = Vector2::new(lambda.y, lambda.z);
        if lambda.x >= 0.0 && lt.norm() <= mu * lambda.x * (1.0 + 1e-12) {
            return (lambda, ContactState::Stick);
        }
    }
    (slip(w, d, mu), ContactState::Slip)
}

/// Slip branch: `λₙ` is the root of `F(λₙ) = λₙ`, where `F` gives the
/// `λₙ` that closes `δₙ = 0` under the exact tangential slip for `λₙ`
/// ([`disc_slip`]), `F(λₙ) = max(0, −(dₙ + Wₙₜ λₜ(λₙ)) / Wₙₙ)`; found by
/// secant steps on `F(λₙ) − λₙ` from the fixed-point iterates (one
/// evaluation more when `W` does not couple normal and tangents). The
/// disc's `σ` carries from one evaluation to the next.
fn slip(w: &Matrix3<f64>, d: &Vector3<f64>, mu: f64) -> Vector3<f64> {
    let wtt = Matrix2::new(w[(1, 1)], w[(1, 2)], w[(2, 1)], w[(2, 2)]);
    let wtn = Vector2::new(w[(1, 0)], w[(2, 0)]);
    let wnt = Vector2::new(w[(0, 1)], w[(0, 2)]);
    let dt = Vector2::new(d.y, d.z);
    let mut sigma = 0.0;
    let mut f = |ln: f64| {
        let lt;
        (lt, sigma) = disc_slip_from(&wtt, &(dt + wtn * ln), mu * ln, sigma);
        ((-(d.x + wnt.dot(&lt)) / w[(0, 0)]).max(0.0), lt)
    };
    let mut x0 = (-d.x / w[(0, 0)]).max(0.0);
    let (mut f0, mut lt) = f(x0);
    let (mut x1, mut at) = (f0, x0);
    for _ in 0..SLIP_ITERATIONS {
        let f1;
        ((f1, lt), at) = (f(x1), x1);
        let (g0, g1) = (f0 - x0, f1 - x1);
        if g1.abs() <= 1e-14 * (1.0 + x1.abs()) {
            break;
        }
        let secant = x1 - g1 * (x1 - x0) / (g1 - g0);
        let next = if secant.is_finite() && secant >= 0.0 { secant } else { f1 };
        (x0, f0, x1) = (x1, f1, next);
    }
    Vector3::new(at, lt.x, lt.y)
}

/// `λₜ` minimizing `½λᵀWλ + bᵀλ` over the disc `‖λ‖ ≤ r` (maximal
/// dissipation): inside, `λ = −W⁻¹b` (stick); on the rim,
/// `λ = −(W + σI)⁻¹ b` with `σ ≥ 0` such that `‖λ‖ = r`, so the sliding
/// `δₜ = b + Wλ = −σλ` is exactly opposite to the friction force, for any
/// SPD `W` (not only isotropic ones). `σ` by Newton's method on the secular
/// equation `φ(σ) = 1/‖λ(σ)‖ − 1/r = 0` (Moré & Sorensen 1983: `φ` is
/// nearly linear in `σ`), safeguarded by bisection on its bracket
/// `[0, ‖b‖/r]`: a few 2×2 solves where bisection took fifty.
pub fn disc_slip(w: &Matrix2<f64>, b: &Vector2<f64>, r: f64) -> Vector2<f64> {
    disc_slip_from(w, b, r, 0.0).0
}

/// [`disc_slip`] with Newton started from `guess` (the `σ` of a nearby
/// problem, as the normal–tangent iterations of a slipping contact make),
/// returning `σ` too (0 inside the disc).
pub fn disc_slip_from(w: &Matrix2<f64>, b: &Vector2<f64>, r: f64, guess: f64) -> (Vector2<f64>, f64) {
    let inverse = |sigma: f64| (w + Matrix2::identity() * sigma).try_inverse();
    if let Some(l) = inverse(0.0).map(|inv| -(inv * b)) {
        if l.norm() <= r {
            return (l, 0.0);
        }
    }
    if r <= 0.0 {
        return (Vector2::zeros(), 0.0);
    }
    let (mut lo, mut hi) = (0.0, b.norm() / r);
    let mut sigma = if guess > lo && guess < hi { guess } else { lo };
    for _ in 0..100 {
        let Some(inv) = inverse(sigma) else {
            // W + σI singular (W not SPD): step off the pole by bisection.
            (lo, sigma) = (sigma, 0.5 * (sigma + hi));
            continue;
        };
        let l = -(inv * b);
        let len = l.norm();
        let phi = 1.0 / len - 1.0 / r;
        if phi < 0.0 {
            lo = sigma;
        } else {
            hi = sigma;
        }
        // φ'(σ) = λᵀ(W + σI)⁻¹λ / ‖λ‖³.
        let slope = l.dot(&(inv * l)) / (len * len * len);
        let newton = sigma - phi / slope;
        let next = if newton > lo && newton < hi { newton } else { 0.5 * (lo + hi) };
        if phi.abs() * r <= 1e-15 || next == sigma || hi - lo <= f64::EPSILON * hi {
            break;
        }
        sigma = next;
    }
    let l = inverse(sigma).map_or(Vector2::zeros(), |inv| -(inv * b));
    (l * (r / l.norm().max(f64::MIN_POSITIVE)), sigma)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn separation_stick_and_slip_match_analytic_values() {
        let w = Matrix3::from_diagonal_element(2.0);
        let (l, s) = resolve_contact(&w, &Vector3::new(0.1, 0.3, 0.0), 0.5);
        assert_eq!((l, s), (Vector3::zeros(), ContactState::Separated));
        // Stick: λ = −d/w = (0.5, 0.1, −0.05), ‖λₜ‖ = 0.112 ≤ 0.5·0.5.
        let (l, s) = resolve_contact(&w, &Vector3::new(-1.0, -0.2, 0.1), 0.5);
        assert_eq!(s, ContactState::Stick);
        assert!((l - Vector3::new(0.5, 0.1, -0.05)).norm() < 1e-14);
        // Slip: λₙ = 0.5, λₜ = −μλₙ dₜ/‖dₜ‖ with dₜ = (3, 4): (−0.06, −0.08) for μ = 0.2.
        let (l, s) = resolve_contact(&w, &Vector3::new(-1.0, 3.0, 4.0), 0.2);
        assert_eq!(s, ContactState::Slip);
        assert!((l - Vector3::new(0.5, -0.06, -0.08)).norm() < 1e-14, "{l}");
    }

    #[test]
    fn coupled_slip_satisfies_the_contact_law() {
        // Normal–tangent coupling and an anisotropic tangential block.
        let w = Matrix3::new(2.0, 0.3, -0.1, 0.3, 1.5, 0.4, -0.1, 0.4, 0.8);
        let d = Vector3::new(-1.0, 2.0, -1.0);
        let mu = 0.3;
        let (l, s) = resolve_contact(&w, &d, mu);
        assert_eq!(s, ContactState::Slip);
        let delta = d + w * l;
        assert!(delta.x.abs() < 1e-10, "normal gap closed: {}", delta.x);
        let lt = Vector2::new(l.y, l.z);
        let dt = Vector2::new(delta.y, delta.z);
        assert!((lt.norm() - mu * l.x).abs() < 1e-10, "on the cone");
        // Friction opposes the resulting sliding: λₜ ∥ −δₜ.
        assert!((lt.normalize() + dt.normalize()).norm() < 1e-9, "{lt} vs {dt}");
    }

    /// The rim solution by plain bisection on `‖λ(σ)‖ = r`, to the last bit.
    fn disc_slip_by_bisection(w: &Matrix2<f64>, b: &Vector2<f64>, r: f64) -> Vector2<f64> {
        let solve = |sigma: f64| -((w + Matrix2::identity() * sigma).try_inverse().unwrap() * b);
        let (mut lo, mut hi) = (0.0, b.norm() / r);
        loop {
            let mid = 0.5 * (lo + hi);
            if mid <= lo || mid >= hi {
                break;
            }
            if solve(mid).norm() > r {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        let l = solve(hi);
        l * (r / l.norm())
    }

    #[test]
    fn newton_on_the_secular_equation_matches_bisection() {
        // SPD 2×2 blocks from anisotropic to nearly singular, pushes at every angle.
        let (mut worst, mut rims) = (0.0f64, 0);
        for k in 0..400 {
            let t = k as f64;
            let (a, c) = (1.0 + (t * 0.37).sin().abs() * 5.0, 1e-3 + (t * 0.11).cos().abs() * 3.0);
            let off = (t * 0.71).sin() * (a * c).sqrt() * 0.95;
            let w = Matrix2::new(a, off, off, c);
            let b = Vector2::new((t * 1.3).cos(), (t * 0.9).sin()) * (1.0 + t * 0.05);
            let r = 0.02 + 0.3 * (t * 0.23).sin().abs();
            if (w.try_inverse().unwrap() * b).norm() <= r {
                continue; // stick: no rim to find
            }
            let (fast, slow) = (disc_slip(&w, &b, r), disc_slip_by_bisection(&w, &b, r));
            rims += 1;
            worst = worst.max((fast - slow).norm() / r);
            // Started from a nearby problem's σ, above or below this one's.
            let sigma = disc_slip_from(&w, &b, r, 0.0).1;
            for guess in [0.3 * sigma, 1.7 * sigma] {
                worst = worst.max((disc_slip_from(&w, &b, r, guess).0 - slow).norm() / r);
            }
        }
        assert!(rims > 200, "only {rims} cases slip");
        assert!(worst < 1e-12, "{worst:e}");
    }
}
