// The Neo-Hookean models' prox in singular-value space (zeng2025 eq. 5 in
// σ), `argmin ψ(σ) + k/2 ‖σ − s‖²` over the first `d` values (3 for a tet,
// 2 for a membrane triangle), appended to the tets' and the membranes'
// local-step kernels: Neo-Hookean's by its reduction to one scalar, and
// for either model the damped Newton iteration in σ. The arithmetic is
// the CPU's, step for step: `hyperelastic` (`neo_hookean_prox`,
// `prox_roots`, `ln_lanes`, `prox_newton`), `stable_neo_hookean::energy`.

// `NEO_HOOKEAN_PROX_STEPS`, `PROX_HALVINGS`.
const PROX_STEPS: u32 = 30u;
const PROX_HALVINGS: f64 = f64(4.0);
const LN_2: f64 = f64(0.6931471805599453);
const SQRT_2: f64 = f64(1.4142135623730951);
const MAX_F64: f64 = f64(1.7976931348623157e308);
const SMALLEST_NORMAL: f64 = f64(2.2250738585072014e-308);

// `ln x` as `ln_lanes` forms it: x = 2ᵉ m with m ∈ [√½, √2), ln m = 2
// atanh z, z = (m − 1)/(m + 1), by its series to z²¹; m and e found by
// exact scalings by powers of two (the CPU reads them from the bits).
// `valid` is false unless x is positive, finite and normal.
struct Log {
    value: f64,
    valid: bool,
}

fn ln(x: f64) -> Log {
    if !(x >= SMALLEST_NORMAL && x <= MAX_F64) {
        return Log(f64(0.0), false);
    }
    var m = x;
    var e = f64(0.0);
    for (var i = 0u; i < 16u && m >= f64(18446744073709551616.0); i++) {
        m *= f64(5.421010862427522e-20);
        e += f64(64.0);
    }
    for (var i = 0u; i < 16u && m < f64(5.421010862427522e-20); i++) {
        m *= f64(18446744073709551616.0);
        e -= f64(64.0);
    }
    for (var i = 0u; i < 70u && m >= f64(2.0); i++) {
        m *= f64(0.5);
        e += f64(1.0);
    }
    for (var i = 0u; i < 70u && m < f64(1.0); i++) {
        m *= f64(2.0);
        e -= f64(1.0);
    }
    if m > SQRT_2 {
        m *= f64(0.5);
        e += f64(1.0);
    }
    let z = (m - f64(1.0)) / (m + f64(1.0));
    let z2 = z * z;
    var p = f64(1.0) / f64(21.0);
    for (var n = 9; n >= 0; n--) {
        p = p * z2 + f64(1.0) / f64(2 * n + 1);
    }
    return Log(e * LN_2 + f64(2.0) * z * p, true);
}

struct Roots {
    sigma: array<f64, 3>,
    num: f64,
    den: f64,
}

// σᵢ(c) = (k sᵢ + √Dᵢ)/2a, Dᵢ = k² sᵢ² − 4 a c (−2c/(√Dᵢ − k sᵢ) where
// sᵢ < 0), and −d ln J/dc = Σ 1/(σᵢ √Dᵢ) as a fraction (`prox_roots`).
fn prox_roots(k: f64, a: f64, half_inv_a: f64, s: array<f64, 3>, d: u32, c: f64) -> Roots {
    var sigma: array<f64, 3>;
    var num = f64(0.0);
    var den = f64(1.0);
    for (var i = 0u; i < d; i++) {
        let ks = k * s[i];
        let root = sqrt(max(ks * ks - f64(4.0) * a * c, f64(0.0)));
        sigma[i] = (ks + root) * half_inv_a;
        if s[i] < f64(0.0) {
            sigma[i] = f64(-2.0) * c / (root - k * s[i]);
        }
        let x = sigma[i] * root;
        let n = num * x + den;
        den = den * x;
        num = n;
    }
    return Roots(sigma, num, den);
}

struct Prox {
    sigma: array<f64, 3>,
    c: f64,
    converged: bool,
}

// `argmin ψ(σ) + k/2 ‖σ − s‖²` by its reduction to one scalar
// (`neo_hookean_prox`, one lane): Newton's method on
// g(c) = λ ln Πσᵢ(c) − μ − c from the linearized guess, a step past c_max
// halved towards it at most PROX_HALVINGS times in a row.
fn neo_hookean_prox(mu: f64, lambda: f64, k: f64, s: array<f64, 3>, d: u32) -> Prox {
    let a = mu + k;
    let half_inv_a = f64(0.5) / (mu + k);
    var c_max = f64(0.0);
    var bounded = false;
    var j = f64(1.0);
    for (var i = 0u; i < d; i++) {
        var edge = f64(0.0);
        if s[i] > f64(0.0) {
            edge = k * k * s[i] * s[i] * (f64(0.5) * half_inv_a);
        }
        if !bounded || edge < c_max {
            c_max = edge;
        }
        bounded = true;
        j *= s[i];
    }
    let ln_j = ln(j);
    var guess = f64(0.0);
    if j > f64(0.0) {
        guess = k * ln_j.value / (f64(2.0) * mu + k + lambda * f64(d));
    }
    var c = min(lambda * guess - mu, f64(0.5) * (c_max - mu));
    var done = false;
    var failed = false;
    var halvings = f64(0.0);
    for (var step = 0u; step < PROX_STEPS && !done; step++) {
        let roots = prox_roots(k, a, half_inv_a, s, d, c);
        var jc = f64(1.0);
        for (var i = 0u; i < d; i++) {
            jc *= roots.sigma[i];
        }
        let l = ln(jc);
        if !l.valid {
            failed = true;
            break;
        }
        let g = lambda * l.value - mu - c;
        let newton = c + g * roots.den / (lambda * roots.num + roots.den);
        let inside = newton < c_max;
        var next = f64(0.5) * (c + c_max);
        var halved = halvings + f64(1.0);
        if inside {
            next = newton;
            halved = f64(0.0);
        }
        let converged = inside && abs(next - c) <= f64(1e-8) * (mu + abs(c));
        let give_up = halved > PROX_HALVINGS;
        c = next;
        halvings = halved;
        failed = failed || give_up;
        done = converged || give_up;
    }
    let roots = prox_roots(k, a, half_inv_a, s, d, c);
    var ok = done && !failed;
    for (var i = 0u; i < d; i++) {
        ok = ok && roots.sigma[i] > f64(0.0) && roots.sigma[i] <= MAX_F64;
    }
    return Prox(roots.sigma, c, ok);
}

struct Objective {
    value: f64,
    g: array<f64, 3>,
    // Row-major d × d in a 3 × 3 array.
    h: array<f64, 9>,
    finite: bool,
}

// ψ(x) + k/2 ‖x − s‖² of Neo-Hookean or (`stable`) stable Neo-Hookean.
fn objective(stable: bool, mu: f64, lambda: f64, k: f64, x: array<f64, 3>, s: array<f64, 3>, d: u32) -> Objective {
    if stable {
        return stable_objective(mu, lambda, k, x, s, d);
    }
    return neo_hookean_objective(mu, lambda, k, x, s, d);
}

// `(μ', λ', α)` of stable Neo-Hookean in `d` dimensions for the Lamé pair
// (`stable_neo_hookean::parameters`): μ' = (d + 1)/d μ,
// λ' = λ + (1 − 2/(d (d + 1))) μ, α = 1 + μ/λ'.
fn stable_parameters(mu: f64, lambda: f64, d: u32) -> array<f64, 3> {
    let n = f64(d);
    let m = (n + f64(1.0)) / n * mu;
    let l = lambda + (f64(1.0) - f64(2.0) / (n * (n + f64(1.0)))) * mu;
    return array<f64, 3>(m, l, f64(1.0) + mu / l);
}

// Stable Neo-Hookean's ψ(x) + k/2 ‖x − s‖², gradient and Hessian
// (`stable_neo_hookean::energy` plus the prox's term), finite for every x:
// ψ = μ'/2 (I_C − d) + λ'/2 (J − α)² − μ'/2 ln((I_C + 1)/(d + 1)) − λ'/2 (1 − α)²,
// ∂J/∂xᵢ and ∂²J/∂xᵢ∂xⱼ by products of the other values.
fn stable_objective(mu: f64, lambda: f64, k: f64, x: array<f64, 3>, s: array<f64, 3>, d: u32) -> Objective {
    var o: Objective;
    let params = stable_parameters(mu, lambda, d);
    let m = params[0];
    let l = params[1];
    let alpha = params[2];
    var j = f64(1.0);
    var ic = f64(0.0);
    var distance = f64(0.0);
    for (var i = 0u; i < d; i++) {
        j *= x[i];
        ic += x[i] * x[i];
        distance += (x[i] - s[i]) * (x[i] - s[i]);
    }
    let n = f64(d);
    let logarithm = ln((ic + f64(1.0)) / (n + f64(1.0)));
    if !logarithm.valid {
        return o;
    }
    let rest = f64(0.5) * l * (f64(1.0) - alpha) * (f64(1.0) - alpha);
    o.value = f64(0.5) * m * (ic - n) + f64(0.5) * l * (j - alpha) * (j - alpha) - f64(0.5) * m * logarithm.value - rest
        + f64(0.5) * k * distance;
    let shear = m * (f64(1.0) - f64(1.0) / (ic + f64(1.0)));
    let curvature = f64(2.0) * m / ((ic + f64(1.0)) * (ic + f64(1.0)));
    var dj: array<f64, 3>;
    for (var a = 0u; a < d; a++) {
        dj[a] = f64(1.0);
        for (var c = 0u; c < d; c++) {
            if c != a {
                dj[a] *= x[c];
            }
        }
    }
    for (var a = 0u; a < d; a++) {
        o.g[a] = x[a] * shear + dj[a] * (l * (j - alpha)) + (x[a] - s[a]) * k;
        for (var b = 0u; b < d; b++) {
            var value = x[a] * x[b] * curvature + dj[a] * dj[b] * l;
            if a == b {
                value += shear + k;
            } else {
                var d2j = f64(1.0);
                for (var c = 0u; c < d; c++) {
                    if c != a && c != b {
                        d2j *= x[c];
                    }
                }
                value += d2j * (l * (j - alpha));
            }
            o.h[3u * a + b] = value;
        }
    }
    o.finite = abs(o.value) <= MAX_F64;
    return o;
}

// Neo-Hookean's ψ(x) + k/2 ‖x − s‖², its gradient and Hessian
// (`hyperelastic::energy` plus the prox's term); not finite where J = Πx ≤ 0.
fn neo_hookean_objective(mu: f64, lambda: f64, k: f64, x: array<f64, 3>, s: array<f64, 3>, d: u32) -> Objective {
    var o: Objective;
    var j = f64(1.0);
    var squares = f64(0.0);
    var distance = f64(0.0);
    for (var i = 0u; i < d; i++) {
        j *= x[i];
        squares += x[i] * x[i];
        distance += (x[i] - s[i]) * (x[i] - s[i]);
    }
    let l = ln(j);
    if !(j > f64(0.0)) || !l.valid {
        return o;
    }
    let lj = l.value;
    o.value = f64(0.5) * mu * (squares - f64(d)) - mu * lj + f64(0.5) * lambda * lj * lj + f64(0.5) * k * distance;
    for (var a = 0u; a < d; a++) {
        o.g[a] = mu * x[a] + (lambda * lj - mu) / x[a] + (x[a] - s[a]) * k;
        for (var b = 0u; b < d; b++) {
            if a == b {
                o.h[3u * a + b] = mu + (lambda + mu - lambda * lj) / (x[a] * x[a]) + k;
            } else {
                o.h[3u * a + b] = lambda / (x[a] * x[b]);
            }
        }
    }
    o.finite = true;
    return o;
}

struct Solve {
    p: array<f64, 3>,
    definite: bool,
}

// H p = −g by Cholesky (d ≤ 3); `definite` false where H is not.
fn cholesky_solve(h: array<f64, 9>, g: array<f64, 3>, d: u32) -> Solve {
    var l: array<f64, 9>;
    var out: Solve;
    for (var i = 0u; i < d; i++) {
        for (var j = 0u; j <= i; j++) {
            var sum = h[3u * i + j];
            for (var m = 0u; m < j; m++) {
                sum -= l[3u * i + m] * l[3u * j + m];
            }
            if i == j {
                if !(sum > f64(0.0)) {
                    return out;
                }
                l[3u * i + i] = sqrt(sum);
            } else {
                l[3u * i + j] = sum / l[3u * j + j];
            }
        }
    }
    var y: array<f64, 3>;
    for (var i = 0u; i < d; i++) {
        var sum = -g[i];
        for (var m = 0u; m < i; m++) {
            sum -= l[3u * i + m] * y[m];
        }
        y[i] = sum / l[3u * i + i];
    }
    for (var step = 0u; step < d; step++) {
        let i = d - 1u - step;
        var sum = y[i];
        for (var m = i + 1u; m < d; m++) {
            sum -= l[3u * m + i] * out.p[m];
        }
        out.p[i] = sum / l[3u * i + i];
    }
    out.definite = true;
    return out;
}

fn length3(x: array<f64, 3>, d: u32) -> f64 {
    var sum = f64(0.0);
    for (var i = 0u; i < d; i++) {
        sum += x[i] * x[i];
    }
    return sqrt(sum);
}

// The damped Newton iteration in σ that takes the lanes the fast prox
// hands on (`hyperelastic::prox_newton`): from s (Neo-Hookean: clamped
// inside J > 0), Newton steps (or −g/k where H is not definite) under an
// Armijo line search, until a Newton step under 1e-9 (1 + ‖x‖) is taken.
fn prox_newton(stable: bool, mu: f64, lambda: f64, k: f64, s: array<f64, 3>, d: u32) -> array<f64, 3> {
    var x: array<f64, 3>;
    for (var i = 0u; i < d; i++) {
        x[i] = select(max(s[i], f64(1e-2)), s[i], stable);
    }
    var cur = objective(stable, mu, lambda, k, x, s, d);
    if !cur.finite {
        return array<f64, 3>(f64(1.0), f64(1.0), f64(1.0));
    }
    for (var it = 0u; it < 50u; it++) {
        let solve = cholesky_solve(cur.h, cur.g, d);
        var slope = f64(0.0);
        for (var i = 0u; i < d; i++) {
            slope += solve.p[i] * cur.g[i];
        }
        let newton = solve.definite && slope < f64(0.0);
        var step: array<f64, 3>;
        for (var i = 0u; i < d; i++) {
            step[i] = select(-cur.g[i] / k, solve.p[i], newton);
        }
        if newton && length3(step, d) <= f64(1e-9) * (f64(1.0) + length3(x, d)) {
            var last = x;
            var j = f64(1.0);
            for (var i = 0u; i < d; i++) {
                last[i] += step[i];
                j *= last[i];
            }
            if stable || j > f64(0.0) {
                x = last;
            }
            break;
        }
        var along = f64(0.0);
        for (var i = 0u; i < d; i++) {
            along += step[i] * cur.g[i];
        }
        var t = f64(1.0);
        var accepted = false;
        for (var search = 0u; search < 40u; search++) {
            var trial = x;
            for (var i = 0u; i < d; i++) {
                trial[i] += step[i] * t;
            }
            let next = objective(stable, mu, lambda, k, trial, s, d);
            if next.finite {
                let settling = next.value <= cur.value + f64(1e-13) * abs(cur.value)
                    && length3(next.g, d) < length3(cur.g, d);
                if next.value <= cur.value + f64(1e-4) * t * along || settling {
                    x = trial;
                    cur = next;
                    accepted = true;
                    break;
                }
            }
            t *= f64(0.5);
        }
        if !accepted || t * length3(step, d) <= f64(1e-14) * (f64(1.0) + length3(x, d)) {
            break;
        }
    }
    return x;
}
