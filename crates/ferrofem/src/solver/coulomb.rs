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

/// Slip branch by a local fixed point: `λₙ` from `δₙ = 0` given `λₜ`, then
/// the exact tangential slip for that `λₙ` ([`disc_slip`]); one pass when
/// `W` does not couple normal and tangents.
fn slip(w: &Matrix3<f64>, d: &Vector3<f64>, mu: f64) -> Vector3<f64> {
    let wtt = Matrix2::new(w[(1, 1)], w[(1, 2)], w[(2, 1)], w[(2, 2)]);
    let wtn = Vector2::new(w[(1, 0)], w[(2, 0)]);
    let wnt = Vector2::new(w[(0, 1)], w[(0, 2)]);
    let dt = Vector2::new(d.y, d.z);
    let mut lt = Vector2::zeros();
    let mut ln = 0.0;
    for _ in 0..SLIP_ITERATIONS {
        ln = (-(d.x + wnt.dot(&lt)) / w[(0, 0)]).max(0.0);
        let next = disc_slip(&wtt, &(dt + wtn * ln), mu * ln);
        let converged = (next - lt).norm() <= 1e-14 * (1.0 + next.norm());
        lt = next;
        if converged {
            break;
        }
    }
    Vector3::new(ln, lt.x, lt.y)
}

/// `λₜ` minimizing `½λᵀWλ + bᵀλ` over the disc `‖λ‖ ≤ r` (maximal
/// dissipation): inside, `λ = −W⁻¹b` (stick); on the rim,
/// `λ = −(W + σI)⁻¹ b` with `σ ≥ 0` such that `‖λ‖ = r`, so the sliding
/// `δₜ = b + Wλ = −σλ` is exactly opposite to the friction force, for any
/// SPD `W` (not only isotropic ones). `σ` by bisection on `‖λ(σ)‖ = r`.
pub fn disc_slip(w: &Matrix2<f64>, b: &Vector2<f64>, r: f64) -> Vector2<f64> {
    let solve = |sigma: f64| (w + Matrix2::identity() * sigma).try_inverse().map(|inv| -(inv * b));
    if let Some(l) = solve(0.0) {
        if l.norm() <= r {
            return l;
        }
    }
    if r <= 0.0 {
        return Vector2::zeros();
    }
    let (mut lo, mut hi) = (0.0, b.norm() / r);
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if mid <= lo || mid >= hi {
            break;
        }
        match solve(mid) {
            Some(l) if l.norm() > r => lo = mid,
            _ => hi = mid,
        }
    }
    solve(hi).map_or(Vector2::zeros(), |l| l * (r / l.norm().max(f64::MIN_POSITIVE)))
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
}
