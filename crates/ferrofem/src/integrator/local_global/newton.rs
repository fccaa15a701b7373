//! The ground truth for measuring the local-global error (zeng2025 Fig. 9):
//! a Newton solve of the same implicit-Euler energy (eq. 1). Newton–CG
//! with exact gradients, Hessian–vector products by central differences
//! of the gradient, the constant global matrix `A/h²` as preconditioner,
//! Steihaug truncation at negative curvature and an Armijo line search.
//! Meant for small meshes (tests, benchmarks), not for simulation.

use super::energy::{energy, energy_gradient, StepTarget};
use crate::body::Body;
use ferrofem_linalg::vector::{dot, norm};
use ferrofem_linalg::Ldlt;

/// How a reference solve ended.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NewtonReport {
    /// Newton iterations.
    pub iterations: usize,
    /// `ε(q*)` (J).
    pub energy: f64,
    /// `‖∇ε(q*)‖ / ‖∇ε(q⁰)‖`.
    pub rel_gradient: f64,
}

/// `z = h² A⁻¹ r` with the scalar factor of `A_s`, per axis.
fn precondition(f: &Ldlt, h: f64, r: &[f64], z: &mut [f64]) {
    f.solve_interleaved::<3>(r, z);
    z.iter_mut().for_each(|v| *v *= h * h);
}

/// Minimizes `ε` from `x` (in place) until `‖∇ε‖ ≤ rel_tol ‖∇ε(x⁰)‖`.
pub fn newton_reference(
    body: &Body,
    factor: &Ldlt,
    x: &mut [f64],
    at: StepTarget,
    rel_tol: f64,
    max_iterations: usize,
) -> NewtonReport {
    let n = x.len();
    let mut g = vec![0.0; n];
    let mut e = energy_gradient(body, x, at, &mut g).unwrap_or(f64::INFINITY);
    let g0 = norm(&g).max(f64::MIN_POSITIVE);
    let (mut gp, mut gm, mut xt) = (vec![0.0; n], vec![0.0; n], vec![0.0; n]);
    let (mut step, mut r, mut z, mut d, mut hd) =
        (vec![0.0; n], vec![0.0; n], vec![0.0; n], vec![0.0; n], vec![0.0; n]);
    let mut it = 0;
    while it < max_iterations && norm(&g) > rel_tol * g0 {
        it += 1;
        // Steihaug–PCG on ∇²ε s = −∇ε.
        step.iter_mut().for_each(|v| *v = 0.0);
        r.iter_mut().zip(&g).for_each(|(r, g)| *r = -g);
        precondition(factor, at.h, &r, &mut z);
        d.copy_from_slice(&z);
        let gnorm = norm(&g);
        let eta = (gnorm / g0).sqrt().min(0.5) * gnorm;
        let mut rz = dot(&r, &z);
        for k in 0..200 {
            let scale = x.iter().fold(1.0f64, |m, v| m.max(v.abs()));
            let dmax = d.iter().fold(0.0f64, |m, v| m.max(v.abs())).max(f64::MIN_POSITIVE);
            let eps = 1e-7 * scale / dmax;
            for (s, t) in [(1.0, &mut gp), (-1.0, &mut gm)] {
                xt.iter_mut().zip(x.iter()).zip(&d).for_each(|((o, x), d)| *o = x + s * eps * d);
                if energy_gradient(body, &xt, at, t).is_none() {
                    t.iter_mut().for_each(|v| *v = f64::NAN);
                }
            }
            hd.iter_mut().zip(gp.iter().zip(&gm)).for_each(|(h, (p, m))| *h = (p - m) / (2.0 * eps));
            let dhd = dot(&d, &hd);
            if dhd.is_nan() || dhd <= 0.0 {
                if k == 0 {
                    step.copy_from_slice(&d);
                }
                break;
            }
            let alpha = rz / dhd;
            step.iter_mut().zip(&d).for_each(|(s, d)| *s += alpha * d);
            r.iter_mut().zip(&hd).for_each(|(r, h)| *r -= alpha * h);
            if norm(&r) <= eta {
                break;
            }
            precondition(factor, at.h, &r, &mut z);
            let rz_new = dot(&r, &z);
            let beta = rz_new / rz;
            rz = rz_new;
            d.iter_mut().zip(&z).for_each(|(d, z)| *d = z + beta * *d);
        }
        // Armijo backtracking on ε.
        let slope = dot(&g, &step);
        let mut t = 1.0;
        let mut moved = false;
        for _ in 0..50 {
            xt.iter_mut().zip(x.iter()).zip(&step).for_each(|((o, x), s)| *o = x + t * s);
            if let Some(et) = energy(body, &xt, at) {
                if et <= e + 1e-4 * t * slope.min(0.0) {
                    moved = et < e || t == 1.0;
                    x.copy_from_slice(&xt);
                    break;
                }
            }
            t *= 0.5;
        }
        e = energy_gradient(body, x, at, &mut g).unwrap_or(f64::INFINITY);
        if !moved {
            break;
        }
    }
    NewtonReport { iterations: it, energy: e, rel_gradient: norm(&g) / g0 }
}
