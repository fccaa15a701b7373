use super::*;

const MODELS: [Constitutive; 3] = [Constitutive::Arap, Constitutive::Corotational, Constitutive::NeoHookean];
const LAME: Lame = Lame { lambda: 3.0, mu: 1.3 };

fn check_derivatives<const D: usize>(s: SVector<f64, D>) {
    for m in MODELS {
        let (_, g, h) = energy(m, LAME, &s).unwrap();
        let eps = 1e-6;
        for a in 0..D {
            let mut sp = s;
            sp[a] += eps;
            let mut sm = s;
            sm[a] -= eps;
            let (ep, gp, _) = energy(m, LAME, &sp).unwrap();
            let (em, gm, _) = energy(m, LAME, &sm).unwrap();
            let fd = (ep - em) / (2.0 * eps);
            assert!((fd - g[a]).abs() < 1e-6 * (1.0 + g[a].abs()), "{m:?} gradient {a}: {fd} vs {}", g[a]);
            for b in 0..D {
                let fd = (gp[b] - gm[b]) / (2.0 * eps);
                assert!((fd - h[(b, a)]).abs() < 1e-5 * (1.0 + h[(b, a)].abs()), "{m:?} Hessian {b},{a}");
            }
        }
    }
}

#[test]
fn energies_match_finite_differences() {
    check_derivatives(Vector3::new(1.3, 0.8, 0.6));
    check_derivatives(SVector::<f64, 2>::new(1.4, 0.7));
}

#[test]
fn stress_matches_finite_differences_of_the_energy() {
    let f = Matrix3::new(1.1, 0.2, -0.1, 0.05, 0.9, 0.3, -0.2, 0.1, 1.2);
    for m in MODELS {
        let (_, p) = energy_and_stress(m, LAME, &f).unwrap();
        for i in 0..9 {
            let mut e = Matrix3::zeros();
            e[i] = 1e-6;
            let fd = (energy_and_stress(m, LAME, &(f + e)).unwrap().0
                - energy_and_stress(m, LAME, &(f - e)).unwrap().0)
                / 2e-6;
            assert!((fd - p[i]).abs() < 1e-6, "{m:?} entry {i}: {fd} vs {}", p[i]);
        }
    }
}

#[test]
fn rest_state_is_its_own_projection() {
    for m in MODELS {
        let p3 = local_projection(m, LAME, m.penalty(LAME), &Matrix3::identity(), &Matrix3::zeros());
        assert!((p3 - Matrix3::identity()).norm() < 1e-12, "{m:?} 3D");
        let i32 = Matrix3x2::new(1.0, 0.0, 0.0, 1.0, 0.0, 0.0);
        let p2 = local_projection(m, LAME, m.penalty(LAME), &i32, &i32);
        assert!((p2 - i32).norm() < 1e-12, "{m:?} membrane");
    }
}

#[test]
fn local_step_minimizes_and_never_raises_the_element_energy() {
    let f = Matrix3::new(1.4, 0.3, 0.0, -0.2, 0.7, 0.1, 0.1, 0.0, 0.9);
    for m in MODELS {
        let k = m.penalty(LAME);
        let p = local_projection(m, LAME, k, &f, &Matrix3::zeros());
        let psi = |x: &Matrix3<f64>| energy_and_stress(m, LAME, x).unwrap().0;
        if m == Constitutive::Arap {
            // A rotation, the closest one.
            assert!((p.transpose() * p - Matrix3::identity()).norm() < 1e-12);
            assert!(psi(&p) < 1e-20);
            continue;
        }
        let obj = |x: &Matrix3<f64>| psi(x) + 0.5 * k * (x - f).norm_squared();
        assert!(psi(&p) <= psi(&f), "{m:?}: ψ rose from {} to {}", psi(&f), psi(&p));
        for i in 0..9 {
            let mut e = Matrix3::zeros();
            e[i] = 1e-4;
            assert!(obj(&p) <= obj(&(p + e)) && obj(&p) <= obj(&(p - e)), "{m:?}: not a minimum");
        }
    }
}

/// Scattered singular values: stretched, compressed, near rest and
/// inverted (one negative), for solids and membranes.
fn scattered_sigma<const D: usize>(n: usize) -> SVector<f64, D> {
    let a = n as f64;
    let mut s = SVector::<f64, D>::from_fn(|i, _| {
        let t = a * (0.37 + 0.61 * i as f64);
        (1.0 + 0.9 * t.sin() * (0.5 + 0.5 * (1.7 * t).cos())).max(0.02)
    });
    if D == 3 && n % 5 == 1 {
        s[2] *= -0.3;
    }
    s * (0.3 + 0.2 * (n % 9) as f64)
}

#[test]
fn neo_hookean_prox_reduction_is_the_damped_newton_minimum() {
    let mut fallbacks = 0;
    for n in 0..400 {
        let lame = Lame { lambda: [0.0, 3.0, 40.0, 1e4][n % 4], mu: [1.3, 0.2, 2.0][n % 3] };
        let k = Constitutive::NeoHookean.penalty(lame) * [1.0, 0.05, 20.0][n % 3];
        let s3 = scattered_sigma::<3>(n);
        let s2 = scattered_sigma::<2>(n).map(f64::abs);
        let x = prox(Constitutive::NeoHookean, lame, k, &s3);
        check_prox_minimum(lame, k, &s3, &x);
        check_prox_minimum(lame, k, &s2, &prox(Constitutive::NeoHookean, lame, k, &s2));
        // The reduction claims no minimum that is not its positive
        // root of every σᵢ, (μ + k) σᵢ² ≥ c (and hands on few lanes).
        let (_, _, ok) = neo_hookean_prox::<3, 1>(&[lame], &[k], &std::array::from_fn(|i| [s3[i]]));
        let c = lame.lambda * x.product().ln() - lame.mu;
        let reduced = x.iter().all(|&v| v > 0.0 && (lame.mu + k) * v * v >= c);
        assert!(reduced || !ok[0], "{n}: {s3:?} → {x:?}");
        fallbacks += usize::from(!ok[0]);
    }
    assert!(fallbacks < 40, "{fallbacks} of 400");
}

/// `x` is the minimum of `ψ(σ) + k/2 ‖σ − s‖²`: stationary, and equal to
/// the damped Newton iteration's point or strictly lower (that
/// iteration's gradient steps may cross two σ = 0 planes at once, into
/// another local minimum).
fn check_prox_minimum<const D: usize>(lame: Lame, k: f64, s: &SVector<f64, D>, x: &SVector<f64, D>) {
    let objective = |y: &SVector<f64, D>| {
        let (psi, g, _) = energy(Constitutive::NeoHookean, lame, y).unwrap();
        (psi + 0.5 * k * (y - s).norm_squared(), g + (y - s) * k)
    };
    let (fx, gx) = objective(x);
    assert!(gx.norm() <= 1e-9 * k * (1.0 + s.norm()), "{s:?}: gradient {gx:?} at {x:?}");
    let damped = prox_newton(Constitutive::NeoHookean, lame, k, s);
    let fd = objective(&damped).0;
    let equal = (x - damped).norm() <= 1e-10 * damped.norm();
    assert!(equal || fx < fd - 1e-12 * fd.abs(), "{s:?}: {x:?} ({fx}) vs {damped:?} ({fd})");
}

#[test]
fn ln_lanes_is_the_library_ln_to_two_ulps() {
    let mut x: Vec<f64> = (0..4000).map(|i| (i as f64 * 0.173 - 340.0).exp()).collect();
    x.extend((0..4000).map(|i| 1.0 + (i as f64 - 2000.0) * 1e-9));
    x.extend([f64::MIN_POSITIVE, f64::MAX, 0.5f64.sqrt(), 2f64.sqrt(), 1.0]);
    for chunk in x.chunks_exact(8) {
        let ln = ln_lanes::<8>(chunk.try_into().unwrap());
        for (v, l) in chunk.iter().zip(ln) {
            assert!((l - v.ln()).abs() <= 4.5e-16 * v.ln().abs(), "ln {v}: {l} vs {}", v.ln());
        }
    }
    let bad = ln_lanes(&[0.0, -1.0, f64::NAN, f64::INFINITY, 1e-310, f64::NEG_INFINITY]);
    assert!(bad.iter().all(|v| v.is_nan()), "{bad:?}");
}

#[test]
fn neo_hookean_prox_lanes_are_independent() {
    const L: usize = 16;
    let lame: [Lame; L] = std::array::from_fn(|l| Lame { lambda: 1.0 + l as f64, mu: 0.5 + 0.1 * l as f64 });
    let k: [f64; L] = std::array::from_fn(|l| Constitutive::NeoHookean.penalty(lame[l]));
    let s: [SVector<f64, 3>; L] = std::array::from_fn(|l| scattered_sigma::<3>(7 * l + 3));
    let (x, _, ok) =
        neo_hookean_prox::<3, L>(&lame, &k, &std::array::from_fn(|i| std::array::from_fn(|l| s[l][i])));
    for l in 0..L {
        let (one, _, one_ok) =
            neo_hookean_prox::<3, 1>(&[lame[l]], &[k[l]], &std::array::from_fn(|i| [s[l][i]]));
        assert_eq!(ok[l], one_ok[0]);
        assert!((0..3).all(|i| x[i][l] == one[i][0]), "lane {l}");
    }
}

#[test]
fn signed_svd_of_an_inverted_gradient() {
    let f = Matrix3::new(1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, -0.5);
    let (u, s, v) = signed_svd3(&f);
    assert!(u.determinant() > 0.0 && v.determinant() > 0.0 && s.product() < 0.0);
    assert!((u * Matrix3::from_diagonal(&s) * v.transpose() - f).norm() < 1e-12);
    assert!(energy(Constitutive::NeoHookean, LAME, &s).is_none());
}

#[test]
fn corotational_closed_form_is_the_svd_prox() {
    let lame = Lame { lambda: 3.0e4, mu: 1.1e4 };
    for i in 0..40 {
        let a = i as f64;
        let mut f = Matrix3::new(
            1.1 + 0.3 * a.sin(),
            0.2 * (1.3 * a).cos(),
            0.1,
            -0.15,
            0.7 + 0.2 * (0.7 * a).sin(),
            0.3 * a.cos(),
            0.05 * a.sin(),
            0.25,
            0.9 + 0.4 * (0.3 * a).cos(),
        );
        if i % 5 == 2 {
            f.column_mut(1).neg_mut(); // inverted: one signed σ < 0
        }
        let k = lame.mu * (1.0 + 0.5 * a);
        let (u, s, v) = signed_svd3(&f);
        let svd = u * Matrix3::from_diagonal(&prox(Constitutive::Corotational, lame, k, &s)) * v.transpose();
        let closed = corotational_projection(lame, k, &f, &(u * v.transpose()));
        assert!((closed - svd).norm() <= 1e-12 * svd.norm(), "3D {i}: {}", (closed - svd).norm());
        let f2 = f.fixed_columns::<2>(0).into_owned();
        let (u2, s2, v2) = thin_svd32(&f2);
        let svd2 =
            u2 * SMatrix::from_diagonal(&prox(Constitutive::Corotational, lame, k, &s2)) * v2.transpose();
        let closed2 = corotational_projection(lame, k, &f2, &(u2 * v2.transpose()));
        assert!((closed2 - svd2).norm() <= 1e-12 * svd2.norm(), "membrane {i}");
    }
}
