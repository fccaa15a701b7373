//! Linear tetrahedron with co-rotational linear elasticity (Müller & Gross
//! 2004; zeng2022 §3.1): the linear law is evaluated in the element's
//! rotated frame, `f = −R K (Rᵀx − X)`, and the tangent is `R K Rᵀ`.

use nalgebra::{Matrix3, Vector3};

use super::polar::{rotation, PolarMethod};
use super::rest::TetElement;

/// A tet evaluated at the current positions (its rotation is kept beside
/// it, in the state: what the row gather reads stays 200 bytes a tet).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct TetEval {
    /// Rotated gradients `hₐ = R gₐ`, from which every stiffness block follows.
    pub rotated_grads: [Vector3<f64>; 4],
    /// Elastic forces on the four vertices (N).
    pub forces: [Vector3<f64>; 4],
    /// Co-rotated elastic energy (J).
    pub energy: f64,
}

impl TetElement {
    /// Deformation gradient `F = Σₐ xₐ gₐᵀ`.
    pub fn deformation_gradient(&self, x: &[Vector3<f64>; 4]) -> Matrix3<f64> {
        (0..4).fold(Matrix3::zeros(), |f, a| f + x[a] * self.grads[a].transpose())
    }

    /// Rotation `R`, forces and energy at positions `x`: with `ε = sym(RᵀF − I)`
    /// and `σ = λ tr(ε) I + 2μ ε`, `fₐ = −V R σ gₐ`, `E = V (λ/2 tr²ε + μ ε:ε)`.
    pub fn evaluate(
        &self,
        x: &[Vector3<f64>; 4],
        previous_rotation: &Matrix3<f64>,
        method: PolarMethod,
    ) -> (Matrix3<f64>, TetEval) {
        let f = self.deformation_gradient(x);
        let r = rotation(&f, previous_rotation, method);
        (r, self.evaluate_at(&f, r))
    }

    /// [`Self::evaluate`] given the deformation gradient `F` and its
    /// rotation `R` (from the polar iteration run elsewhere, e.g. in lanes).
    #[inline]
    pub fn evaluate_at(&self, f: &Matrix3<f64>, r: Matrix3<f64>) -> TetEval {
        let (eps, sigma) = self.co_rotated_stress(f, &r);
        let tr = eps.trace();
        let rs = r * sigma;
        TetEval {
            rotated_grads: self.grads.map(|ga| r * ga),
            forces: self.grads.map(|ga| -self.measure * (rs * ga)),
            energy: self.measure * (0.5 * self.lame.lambda * tr * tr + self.lame.mu * eps.norm_squared()),
        }
    }

    /// The co-rotated strain `ε = sym(RᵀF − I)` and stress
    /// `σ = λ tr(ε) I + 2μ ε` (Pa) of deformation gradient `F` with rotation `R`.
    pub fn co_rotated_stress(&self, f: &Matrix3<f64>, r: &Matrix3<f64>) -> (Matrix3<f64>, Matrix3<f64>) {
        let g = r.transpose() * f - Matrix3::identity();
        let eps = 0.5 * (g + g.transpose());
        let sigma = Matrix3::from_diagonal_element(self.lame.lambda * eps.trace()) + 2.0 * self.lame.mu * eps;
        (eps, sigma)
    }

    /// `R Kₑ Rᵀ u` for nodal vectors `u` without forming `Kₑ`: with
    /// `G = Σ_b u_b h_bᵀ`, `ε = sym(G)`, `σ = λ tr(ε) I + 2μ ε`, row `a` is `V σ hₐ`.
    pub fn stiffness_times(&self, h: &[Vector3<f64>; 4], u: &[Vector3<f64>; 4]) -> [Vector3<f64>; 4] {
        let g = (0..4).fold(Matrix3::zeros(), |g, b| g + u[b] * h[b].transpose());
        let eps = 0.5 * (g + g.transpose());
        let sigma = Matrix3::from_diagonal_element(self.lame.lambda * eps.trace()) + 2.0 * self.lame.mu * eps;
        h.map(|ha| self.measure * (sigma * ha))
    }

    /// Block `(a, b)` of the co-rotated stiffness `R Kₑ Rᵀ`:
    /// `V [λ hₐ h_bᵀ + μ h_b hₐᵀ + μ (hₐ·h_b) I]` with `h = R g`.
    #[inline]
    pub fn stiffness_block(&self, h: &[Vector3<f64>; 4], a: usize, b: usize) -> Matrix3<f64> {
        let (ha, hb) = (h[a], h[b]);
        let mut k = self.lame.lambda * ha * hb.transpose() + self.lame.mu * hb * ha.transpose();
        let d = self.lame.mu * ha.dot(&hb);
        k[(0, 0)] += d;
        k[(1, 1)] += d;
        k[(2, 2)] += d;
        self.measure * k
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::element::{Constitutive, Lame};
    use crate::material::Material;
    use nalgebra::{Rotation3, Unit};

    fn rest() -> ([Vector3<f64>; 4], TetElement) {
        let x = [
            Vector3::new(0.1, 0.0, 0.0),
            Vector3::new(1.0, 0.2, 0.0),
            Vector3::new(0.3, 0.9, 0.1),
            Vector3::new(0.2, 0.3, 1.1),
        ];
        let m = Material { young: 1e5, poisson: 0.35, density: 1000.0 };
        let (lambda, mu) = m.lame();
        let points = x.map(|p| [p.x, p.y, p.z]);
        (x, TetElement::tet(&points, [0, 1, 2, 3], Constitutive::Corotational, Lame { lambda, mu }).unwrap())
    }

    fn methods() -> [PolarMethod; 2] {
        [PolarMethod::Svd, PolarMethod::Jacobi { max_sweeps: 10, tolerance: 1e-14 }]
    }

    #[test]
    fn stiffness_times_matches_blocks() {
        let (x, t) = rest();
        let r =
            Rotation3::from_axis_angle(&Unit::new_normalize(Vector3::new(0.2, 1.0, -0.4)), 1.1).into_inner();
        let (_, e) = t.evaluate(&x.map(|p| r * p * 1.01), &Matrix3::identity(), PolarMethod::Svd);
        let u = [0, 1, 2, 3].map(|a| Vector3::new(a as f64, 0.5 - a as f64, (a * a) as f64));
        let fast = t.stiffness_times(&e.rotated_grads, &u);
        for a in 0..4 {
            let slow: Vector3<f64> = (0..4).map(|b| t.stiffness_block(&e.rotated_grads, a, b) * u[b]).sum();
            assert!((fast[a] - slow).norm() < 1e-12 * slow.norm().max(1.0));
        }
    }

    #[test]
    fn rigid_motion_gives_zero_force() {
        let (x, t) = rest();
        for k in 0..20 {
            let axis = Unit::new_normalize(Vector3::new(1.0, k as f64 * 0.3 - 2.0, 0.5));
            let r = Rotation3::from_axis_angle(&axis, 0.3 * k as f64 + 0.1).into_inner();
            let shift = Vector3::new(3.0, -1.0, 2.0);
            let y = x.map(|p| r * p + shift);
            for m in methods() {
                let (_, e) = t.evaluate(&y, &Matrix3::identity(), m);
                let fmax = e.forces.iter().map(|f| f.norm()).fold(0.0, f64::max);
                // Relative to the force of a 1% stretch.
                let scale = t.lame.mu * t.measure * 0.01 * t.grads[1].norm();
                assert!(fmax <= 1e-9 * scale, "{m:?} rotation {k}: {fmax:e}");
                assert!(e.energy.abs() < 1e-12 * t.lame.mu * t.measure);
            }
        }
    }

    #[test]
    fn forces_are_minus_energy_gradient_and_sum_to_zero() {
        let (x, t) = rest();
        let y = [x[0], x[1] + Vector3::new(0.05, -0.02, 0.01), x[2], x[3] * 1.02];
        let (_, e) = t.evaluate(&y, &Matrix3::identity(), PolarMethod::Svd);
        let sum: Vector3<f64> = e.forces.iter().sum();
        assert!(sum.norm() < 1e-9 * e.forces[1].norm());
        let h = 1e-7;
        for a in 0..4 {
            for d in 0..3 {
                let mut p = y;
                p[a][d] += h;
                let mut m = y;
                m[a][d] -= h;
                let ep = t.evaluate(&p, &Matrix3::identity(), PolarMethod::Svd).1.energy;
                let em = t.evaluate(&m, &Matrix3::identity(), PolarMethod::Svd).1.energy;
                let fd = -(ep - em) / (2.0 * h);
                assert!((fd - e.forces[a][d]).abs() < 1e-5 * e.forces[a].norm().max(1.0), "{a} {d}");
            }
        }
    }

    #[test]
    fn stiffness_matches_finite_differences_near_rotated_rest() {
        let (x, t) = rest();
        let r =
            Rotation3::from_axis_angle(&Unit::new_normalize(Vector3::new(1.0, 2.0, 3.0)), 0.8).into_inner();
        // A small displacement (1e-6 of the element size) from the rotated rest shape.
        let y = [0, 1, 2, 3].map(|a| r * x[a] + 1e-6 * Vector3::new(a as f64, 1.0 - a as f64, 0.5));
        for m in methods() {
            let (_, e) = t.evaluate(&y, &r, m);
            let h = 1e-7;
            let mut max_err: f64 = 0.0;
            let mut max_k: f64 = 0.0;
            for b in 0..4 {
                for d in 0..3 {
                    let (mut p, mut q) = (y, y);
                    p[b][d] += h;
                    q[b][d] -= h;
                    let fp = t.evaluate(&p, &r, m).1.forces;
                    let fq = t.evaluate(&q, &r, m).1.forces;
                    for a in 0..4 {
                        let col = -(fp[a] - fq[a]) / (2.0 * h);
                        let k = t.stiffness_block(&e.rotated_grads, a, b).column(d).into_owned();
                        max_err = max_err.max((col - k).norm());
                        max_k = max_k.max(k.norm());
                    }
                }
            }
            assert!(max_err < 1e-4 * max_k, "{m:?}: {max_err:e} vs {max_k:e}");
        }
    }
}
