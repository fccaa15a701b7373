// Stable Neo-Hookean's local projection of one tet (zeng2025 eq. 5; Smith,
// de Goes & Kim 2018, eq. 14), appended to `local.wgsl` with
// `neo_hookean.wgsl` (the eigen-decomposition) and `prox.wgsl` (the damped
// Newton prox): p = F V diag(σ*/s) Vᵀ, FᵀF = V diag(s²) Vᵀ by cyclic
// Jacobi from the tet's last eigenbasis to `STABLE_EIGEN_TOLERANCE`, σ* by
// undamped Newton steps on the prox in σ from s. The arithmetic is the
// CPU's, step for step: `tet_lanes` (`gram_eigen`,
// `stable_neo_hookean_lanes`, `stable_prox_lanes`). Where the CPU takes its
// one-element projection instead (det F ≤ 0, s_min² < 1e-4 ‖FᵀF‖,
// unconverged sweeps, a Hessian that is not positive definite), this
// kernel counts the tet in `fallbacks` and takes the same projection by
// its own route: the signed values (an inverted F's smallest s negative),
// the damped Newton iteration of `prox.wgsl`, p = F where that is not
// finite, and an identity basis.

// `STABLE_EIGEN_TOLERANCE` of `tet_lanes`.
const STABLE_EIGEN_TOLERANCE: f64 = f64(1e-12);

struct StableProx {
    sigma: array<f64, 3>,
    ok: bool,
}

// `argmin ψ(σ) + k/2 ‖σ − s‖²` (`stable_prox_lanes`, one lane): at most 20
// Newton steps from s, the 3×3 solve by Cholesky, while the Hessian stays
// positive definite; a step under 1e-9 (1 + ‖σ‖) is taken and ends it.
fn stable_prox(mu: f64, lambda: f64, k: f64, s: array<f64, 3>) -> StableProx {
    let params = stable_parameters(mu, lambda, 3u);
    let m = params[0];
    let l = params[1];
    let alpha = params[2];
    var x = s;
    var done = false;
    var failed = false;
    for (var it = 0u; it < 20u; it++) {
        if done {
            break;
        }
        let x0 = x[0];
        let x1 = x[1];
        let x2 = x[2];
        let inv = f64(1.0) / (x0 * x0 + x1 * x1 + x2 * x2 + f64(1.0));
        let shear = m * (f64(1.0) - inv);
        let t = f64(2.0) * m * inv * inv;
        let dj = array<f64, 3>(x1 * x2, x0 * x2, x0 * x1);
        let vol = l * (x0 * dj[0] - alpha);
        var g: array<f64, 3>;
        for (var i = 0u; i < 3u; i++) {
            g[i] = shear * x[i] + vol * dj[i] + k * (x[i] - s[i]);
        }
        var h: array<f64, 9>;
        for (var i = 0u; i < 3u; i++) {
            for (var j = 0u; j < 3u; j++) {
                if i == j {
                    h[3u * i + j] = shear + t * x[i] * x[i] + l * dj[i] * dj[i] + k;
                } else {
                    h[3u * i + j] = t * x[i] * x[j] + l * dj[i] * dj[j] + vol * x[3u - i - j];
                }
            }
        }
        // H = C Cᵀ; C y = −g, Cᵀ d = y.
        let c00 = sqrt(h[0]);
        let c10 = h[1] / c00;
        let c20 = h[2] / c00;
        let d11 = h[4] - c10 * c10;
        let c11 = sqrt(d11);
        let c21 = (h[5] - c20 * c10) / c11;
        let d22 = h[8] - c20 * c20 - c21 * c21;
        let c22 = sqrt(d22);
        let y0 = -g[0] / c00;
        let y1 = (-g[1] - c10 * y0) / c11;
        let y2 = (-g[2] - c20 * y0 - c21 * y1) / c22;
        let e2 = y2 / c22;
        let e1 = (y1 - c21 * e2) / c11;
        let e0 = (y0 - c10 * e1 - c20 * e2) / c00;
        let step = sqrt(e0 * e0 + e1 * e1 + e2 * e2);
        let definite = h[0] > f64(0.0) && d11 > f64(0.0) && d22 > f64(0.0) && abs(step) <= MAX_F64;
        if definite {
            x = array<f64, 3>(x0 + e0, x1 + e1, x2 + e2);
        }
        let converged = step <= f64(1e-9) * (f64(1.0) + sqrt(x0 * x0 + x1 * x1 + x2 * x2));
        failed = failed || !definite;
        done = converged || !definite;
    }
    return StableProx(x, done && !failed);
}

// `stable_neo_hookean_lanes` of one tet: `gram_eigen` to the stable
// tolerance, the prox, and p = F (V diag(σ*/s) Vᵀ).
fn stable_neo_hookean_projection(f: M3, basis: M3, mu: f64, lambda: f64, k: f64) -> Projection {
    let gram = gram_eigen(f, basis, STABLE_EIGEN_TOLERANCE);
    var s = gram.s;
    var sigma: array<f64, 3>;
    var ok = false;
    if gram.usable {
        let prox = stable_prox(mu, lambda, k, s);
        sigma = prox.sigma;
        ok = prox.ok;
    }
    if !ok {
        // The CPU's one-element projection: the signed SVD's values (an
        // inverted F's smallest negative) and the damped Newton iteration.
        if gram.det < f64(0.0) {
            s[gram.smallest] = -s[gram.smallest];
        }
        sigma = prox_newton(true, mu, lambda, k, s, 3u);
    }
    var b: M3;
    for (var i = 0u; i < 3u; i++) {
        b[4u * i] = sigma[i] / s[i];
    }
    return gram_project(f, gram.v, b, ok);
}
