use nalgebra::{Matrix3, Rotation3, Unit, Vector3};

use super::*;
use crate::element::{Constitutive, Lame};

const LAME: Lame = Lame { lambda: 4.0e5, mu: 1.5e5 };
const MODEL: Constitutive = Constitutive::StableNeoHookean;

fn tet() -> TetElement {
    let rest = [[0.1, 0.0, 0.0], [1.0, 0.2, 0.0], [0.3, 0.9, 0.1], [0.2, 0.3, 1.1]];
    TetElement::tet(&rest, [0, 1, 2, 3], MODEL, LAME).unwrap()
}

/// Stretched, sheared and rotated gradients; the last two inverted, one
/// with two equal singular values.
fn gradients() -> Vec<Matrix3<f64>> {
    let r = Rotation3::from_axis_angle(&Unit::new_normalize(Vector3::new(0.3, -1.0, 0.5)), 0.8).into_inner();
    vec![
        Matrix3::identity(),
        r * Matrix3::new(1.3, 0.2, 0.0, 0.1, 0.8, -0.1, 0.0, 0.3, 0.9),
        r * Matrix3::new(0.3, 0.0, 0.1, 0.0, 0.2, 0.0, 0.0, 0.0, 0.25),
        r * Matrix3::from_diagonal(&Vector3::new(1.1, 0.7, -0.4)),
        r * Matrix3::from_diagonal(&Vector3::new(0.6, 0.6, -0.6)),
    ]
}

/// Positions whose deformation gradient is `f` (rest vertex 0 kept).
fn positions(t: &TetElement, f: &Matrix3<f64>) -> [Vector3<f64>; 4] {
    let rest = [[0.1, 0.0, 0.0], [1.0, 0.2, 0.0], [0.3, 0.9, 0.1], [0.2, 0.3, 1.1]].map(Vector3::from);
    let _ = t;
    rest.map(|x| f * x)
}

fn energy_at(t: &TetElement, x: &[Vector3<f64>; 4]) -> f64 {
    t.evaluate_hyperelastic(&t.deformation_gradient(x), true).0.energy
}

#[test]
fn forces_equal_finite_differences_of_the_energy() {
    let t = tet();
    for f in gradients() {
        let x = positions(&t, &f);
        let (eval, _) = t.evaluate_hyperelastic(&f, true);
        let scale = eval.forces.iter().map(|v| v.norm()).fold(LAME.mu * t.measure, f64::max);
        for a in 0..4 {
            for d in 0..3 {
                let e = 1e-6;
                let (mut xp, mut xm) = (x, x);
                xp[a][d] += e;
                xm[a][d] -= e;
                let fd = -(energy_at(&t, &xp) - energy_at(&t, &xm)) / (2.0 * e);
                assert!(
                    (fd - eval.forces[a][d]).abs() < 1e-7 * scale,
                    "{f}: f[{a}][{d}] {} vs {fd}",
                    eval.forces[a][d]
                );
            }
        }
    }
}

#[test]
fn unprojected_tangent_is_the_derivative_of_the_forces() {
    let t = tet();
    for f in gradients() {
        let x = positions(&t, &f);
        let (_, tangent) = t.evaluate_hyperelastic(&f, false);
        let scale = (LAME.lambda + 2.0 * LAME.mu)
            * t.measure
            * 10.0
            * t.grads.iter().map(|g| g.norm_squared()).sum::<f64>();
        for b in 0..4 {
            for d in 0..3 {
                let e = 1e-6;
                let (mut xp, mut xm) = (x, x);
                xp[b][d] += e;
                xm[b][d] -= e;
                let fp = t.evaluate_hyperelastic(&t.deformation_gradient(&xp), false).0.forces;
                let fm = t.evaluate_hyperelastic(&t.deformation_gradient(&xm), false).0.forces;
                for a in 0..4 {
                    let fd = -(fp[a] - fm[a]) / (2.0 * e);
                    let k = tangent.fixed_view::<3, 3>(3 * a, 3 * b).column(d).into_owned();
                    assert!((fd - k).norm() < 1e-6 * scale, "{f}: K[{a}][{b}] column {d}: {k} vs {fd}");
                }
            }
        }
    }
}

#[test]
fn projected_tangent_is_positive_semidefinite_and_exact_where_the_energy_is_convex() {
    let t = tet();
    for (n, f) in gradients().iter().enumerate() {
        let (_, projected) = t.evaluate_hyperelastic(f, true);
        let (_, exact) = t.evaluate_hyperelastic(f, false);
        let (p, e) = (projected.symmetric_eigen().eigenvalues, exact.symmetric_eigen().eigenvalues);
        assert!(p.min() > -1e-9 * p.max(), "{f}: {p}");
        if n == 0 {
            // At rest the energy is convex: nothing to clamp.
            assert!(
                e.min() > -1e-9 * e.max() && (projected - exact).norm() < 1e-12 * exact.norm(),
                "{f}: {e}"
            );
        } else if n >= 2 {
            assert!(
                e.min() < -1e-3 * e.max(),
                "compressed and inverted gradients have negative modes: {f}: {e}"
            );
        }
    }
}
