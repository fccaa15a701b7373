// Neo-Hookean's local projection of one tet (zeng2025 eq. 5), appended to
// `local.wgsl` with `prox.wgsl`: p = U diag(σ*) Vᵀ = F V diag(σ*/s) Vᵀ without a polar
// decomposition. FᵀF = V diag(s²) Vᵀ by cyclic Jacobi from the tet's last
// eigenbasis (kept where the other models keep their rotation), σ* the
// prox of s reduced to one scalar c = λ ln J − μ, and the first-order
// response to the off-diagonal the sweeps leave. The arithmetic is the
// CPU's, step for step: `element::lanes` (`warm_basis`,
// `symmetric_eigen`), `tet_lanes` (`gram_eigen`, `neo_hookean_lanes`,
// `GramEigen::project`). Where the CPU takes its one-element
// projection instead (det F ≤ 0, s_min² < 1e-4 ‖FᵀF‖, unconverged sweeps
// or prox), this kernel counts the tet in `fallbacks` and takes the same
// projection by its own route (an inverted F's smallest s negative, as
// the signed SVD has it; the damped Newton iteration where the scalar
// prox hands on, `prox.wgsl`), p = F where that is not finite, and resets
// the basis, as the CPU does.

// `EIGEN_TOLERANCE` and the sweeps of `gram_eigen`.
const EIGEN_TOLERANCE: f64 = f64(1e-8);
const EIGEN_SWEEPS: u32 = 8u;

fn determinant(a: M3) -> f64 {
    return a[0] * (a[4] * a[8] - a[7] * a[5]) - a[3] * (a[1] * a[8] - a[7] * a[2])
        + a[6] * (a[1] * a[5] - a[4] * a[2]);
}

// The last eigenbasis moved back onto the rotations by one Newton–Schulz
// step V (3I − VᵀV)/2, or the identity where it is not one (`warm_basis`).
fn warm_basis(v: M3) -> M3 {
    var half = mul_tn(v, v);
    var defect = half;
    defect[0] -= f64(1.0);
    defect[4] -= f64(1.0);
    defect[8] -= f64(1.0);
    if norm(defect) > f64(1e-6) {
        return identity();
    }
    for (var e = 0u; e < 9u; e++) {
        var diagonal = f64(0.0);
        if e % 4u == 0u {
            diagonal = f64(1.5);
        }
        half[e] = diagonal - f64(0.5) * half[e];
    }
    return mul_nn(v, half);
}

// `2 Σ_{i<j} A_ij²`, rooted: the off-diagonal part of a symmetric A.
fn off_diagonal(a: M3) -> f64 {
    return sqrt(f64(2.0) * (a[3] * a[3] + a[6] * a[6] + a[7] * a[7]));
}

// Rust's `f64::signum`: −1 for negatives and −0.
fn signum(x: f64) -> f64 {
    if x < f64(0.0) || (x == f64(0.0) && f64(1.0) / x < f64(0.0)) {
        return f64(-1.0);
    }
    return f64(1.0);
}

struct Eigen {
    a: M3,
    v: M3,
    converged: bool,
}

// Cyclic Jacobi on the symmetric A (`symmetric_eigen`): A ← Jᵀ A J,
// V ← V J until the off-diagonal part is below `tolerance ‖A‖`.
fn symmetric_eigen(a_in: M3, v_in: M3, max_sweeps: u32, tolerance: f64) -> Eigen {
    var a = a_in;
    var v = v_in;
    let scale = norm(a) * tolerance;
    for (var sweep = 0u; sweep < max_sweeps; sweep++) {
        if off_diagonal(a) <= scale {
            break;
        }
        for (var plane = 0u; plane < 3u; plane++) {
            let p = select(0u, 1u, plane == 2u);
            let q = select(1u, 2u, plane > 0u);
            let apq = a[p + 3u * q];
            var c = f64(1.0);
            var sn = f64(0.0);
            if apq != f64(0.0) {
                let theta = (a[q + 3u * q] - a[p + 3u * p]) / (f64(2.0) * apq);
                var t: f64;
                if abs(theta) > f64(1e150) {
                    t = f64(0.5) / theta;
                } else {
                    t = signum(theta) / (abs(theta) + sqrt(theta * theta + f64(1.0)));
                }
                c = f64(1.0) / sqrt(t * t + f64(1.0));
                sn = t * c;
            }
            givens_right(&a, p, q, c, -sn);
            givens_left_t(&a, p, q, c, -sn);
            givens_right(&v, p, q, c, -sn);
        }
    }
    return Eigen(a, v, off_diagonal(a) <= scale);
}

struct Projection {
    p: M3,
    basis: M3,
    // The CPU takes its one-element projection here.
    fallback: bool,
}

// `GramEigen` of `tet_lanes`: FᵀF = V diag(s²) Vᵀ by `gram_eigen` from
// the last eigenbasis, `usable` where the sweeps converged, det F > 0 and
// s_min² ≥ 1e-4 ‖FᵀF‖; `a` the swept Vᵀ FᵀF V.
struct Gram {
    a: M3,
    v: M3,
    s: array<f64, 3>,
    smallest: u32,
    det: f64,
    usable: bool,
}

fn gram_eigen(f: M3, basis: M3, tolerance: f64) -> Gram {
    var v = warm_basis(basis);
    var a = mul_tn(v, mul_nn(mul_tn(f, f), v));
    for (var plane = 0u; plane < 3u; plane++) {
        let i = select(0u, 1u, plane == 2u);
        let j = select(1u, 2u, plane > 0u);
        let m = f64(0.5) * (a[i + 3u * j] + a[j + 3u * i]);
        a[i + 3u * j] = m;
        a[j + 3u * i] = m;
    }
    let eigen = symmetric_eigen(a, v, EIGEN_SWEEPS, tolerance);
    a = eigen.a;
    v = eigen.v;
    let n = norm(a);
    let det = determinant(f);
    var usable = eigen.converged && det > f64(0.0);
    var s: array<f64, 3>;
    var smallest = 0u;
    for (var i = 0u; i < 3u; i++) {
        let eigenvalue = a[4u * i];
        s[i] = sqrt(max(eigenvalue, f64(0.0)));
        usable = usable && eigenvalue >= f64(1e-4) * n;
        if s[i] < s[smallest] {
            smallest = i;
        }
    }
    return Gram(a, v, s, smallest, det, usable);
}

// `GramEigen::project`: p = F (V B Vᵀ) where `ok` (the basis kept), else
// that p, replaced by F where it is not finite, and the basis reset.
fn gram_project(f: M3, v: M3, b: M3, ok: bool) -> Projection {
    let vb = mul_nn(v, b);
    var m: M3;
    for (var i = 0u; i < 3u; i++) {
        for (var j = 0u; j < 3u; j++) {
            m[i + 3u * j] = vb[i] * v[j] + vb[i + 3u] * v[j + 3u] + vb[i + 6u] * v[j + 6u];
        }
    }
    var p = mul_nn(f, m);
    if ok {
        return Projection(p, v, false);
    }
    for (var e = 0u; e < 9u; e++) {
        if !(abs(p[e]) <= MAX_F64) {
            p = f;
            break;
        }
    }
    return Projection(p, identity(), true);
}

// `neo_hookean_lanes` of one tet: `gram_eigen`, the prox, B = diag(σᵢ/sᵢ)
// plus the response A_ij σⱼ (k σᵢ sⱼ − a σᵢσⱼ + c)/((a σᵢσⱼ − c) sᵢ sⱼ (sᵢ + sⱼ)),
// and p = F (V B Vᵀ).
fn neo_hookean_projection(f: M3, basis: M3, mu: f64, lambda: f64, k: f64) -> Projection {
    let gram = gram_eigen(f, basis, EIGEN_TOLERANCE);
    let a = gram.a;
    var s = gram.s;
    let det = gram.det;
    let smallest = gram.smallest;
    let usable = gram.usable;
    // An inverted F: the signed SVD's smallest value negative, as the
    // CPU's one-element projection takes it (`signed_svd3`).
    if det < f64(0.0) {
        s[smallest] = -s[smallest];
    }
    var prox = neo_hookean_prox(mu, lambda, k, s, 3u);
    let scalar = prox.converged;
    if !scalar {
        // The CPU's one-element projection: the damped Newton iteration.
        prox.sigma = prox_newton(false, mu, lambda, k, s, 3u);
        prox.c = lambda * ln(prox.sigma[0] * prox.sigma[1] * prox.sigma[2]).value - mu;
    }
    var b: M3;
    for (var i = 0u; i < 3u; i++) {
        b[4u * i] = prox.sigma[i] / s[i];
    }
    let al = mu + k;
    for (var plane = 0u; plane < 3u; plane++) {
        let i = select(0u, 1u, plane == 2u);
        let j = select(1u, 2u, plane > 0u);
        let si = s[i];
        let sj = s[j];
        let ti = prox.sigma[i];
        let tj = prox.sigma[j];
        let response = tj * (k * ti * sj - al * ti * tj + prox.c) / ((al * ti * tj - prox.c) * si * sj * (si + sj));
        b[i + 3u * j] = a[i + 3u * j] * response;
        b[j + 3u * i] = b[i + 3u * j];
    }
    return gram_project(f, gram.v, b, usable && scalar);
}
