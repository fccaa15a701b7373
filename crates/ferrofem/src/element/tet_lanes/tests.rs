//! The lane kernels against the one-element routines they must equal.

use super::*;
use crate::element::hyperelastic::{local_projection as one, Gradient};
use crate::element::polar::signed_svd3;
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
const STABLE: Constitutive = Constitutive::StableNeoHookean;

#[test]
fn lanes_equal_the_one_element_projection() {
    let models = [Constitutive::Arap, Constitutive::Corotational, Constitutive::NeoHookean, STABLE];
    for model in models {
        let eigen = matches!(model, Constitutive::NeoHookean | STABLE);
        for batch in 0..16 {
            let f: [Matrix3<f64>; LANES] = std::array::from_fn(|l| gradient(batch * LANES + l));
            // Warm starts: the SVD rotation of a nearby gradient.
            let near: [Matrix3<f64>; LANES] = std::array::from_fn(|l| gradient(batch * LANES + l) * 1.01);
            let mut rotation = near.map(|g| svd_rotation(&g));
            let (k, lame) = ([LAME.mu * 4.0; LANES], [LAME; LANES]);
            if eigen {
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
                // Stable Neo-Hookean: no response term, the error is the sweeps' tolerance.
                let tolerance = if model == STABLE { 10.0 * STABLE_EIGEN_TOLERANCE } else { 1e-12 };
                assert!(
                    (p[l] - expected).norm() <= tolerance * scale,
                    "{model:?} {batch} {l}: {} {:?}",
                    (p[l] - expected).norm(),
                    signed_svd3(&f[l]).1
                );
                if !eigen {
                    assert!((rotation[l] - svd_rotation(&f[l])).norm() < 1e-12, "{model:?} rotation");
                } else if f[l].determinant() > 0.0 {
                    // The eigenbasis of FᵀF, to the sweeps' tolerance.
                    let mut d = rotation[l].transpose() * f[l].transpose() * f[l] * rotation[l];
                    d.fill_diagonal(0.0);
                    let tolerance = if model == STABLE { STABLE_EIGEN_TOLERANCE } else { EIGEN_TOLERANCE };
                    assert!(d.norm() <= tolerance * scale * scale, "eigenbasis {}", d.norm());
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
    for model in [Constitutive::Arap, Constitutive::Corotational, Constitutive::NeoHookean, STABLE] {
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
            let tolerance = if model == STABLE { 10.0 * STABLE_EIGEN_TOLERANCE } else { 1e-12 };
            assert!((got - target).norm() <= tolerance * scale, "{model:?} tet {e} target");
            assert!((duals[e] - dual).norm() <= tolerance * scale, "{model:?} tet {e} dual");
            for a in 0..4 {
                assert_eq!(pulls[e][a], got * tet.grads[a] * tet.weight, "{model:?} pull");
            }
        }
    }
}

#[test]
fn lane_stresses_equal_the_one_element_ones() {
    for model in [Constitutive::Arap, Constitutive::Corotational, Constitutive::NeoHookean, STABLE] {
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
                let one = crate::element::polar::rotation_jacobi(&f[l], &warm[l], sweeps, POLAR_TOLERANCE);
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
                let one = crate::element::polar::rotation_jacobi(&t.gradient(&x), &start, sweeps, tolerance);
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
    let p = local_projection(Constitutive::Arap, &[LAME; LANES], &[1.0; LANES], &pack(&f), &mut rotation, 1);
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

#[test]
fn lane_signed_svds_reconstruct_with_rotations() {
    for batch in 0..8 {
        let f: [Matrix3<f64>; LANES] = std::array::from_fn(|l| gradient(batch * LANES + l));
        let mut basis = [Matrix3::identity(); LANES];
        for _ in 0..2 {
            // Cold, then warm from the bases the first call left.
            for (l, (u, s, v)) in signed_svds(&f, &mut basis).iter().enumerate() {
                let back = u * Matrix3::from_diagonal(s) * v.transpose();
                assert!((back - f[l]).norm() <= 1e-11 * f[l].norm(), "{batch} {l}: {}", (back - f[l]).norm());
                for r in [u, v] {
                    assert!(
                        (r.transpose() * r - Matrix3::identity()).norm() < 1e-11 && r.determinant() > 0.0
                    );
                }
                assert_eq!(s.product() < 0.0, f[l].determinant() < 0.0, "the sign of σ is the orientation");
            }
        }
    }
}
