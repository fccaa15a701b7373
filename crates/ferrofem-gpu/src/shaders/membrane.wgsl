// The local step of a body's membrane triangles (zeng2025 eq. 5), one
// triangle per invocation: F = Σₐ xₐ gₐᵀ (3 × 2), its closest "rotation"
// R = U Vᵀ (orthonormal columns) as F (FᵀF)^(−1/2) in closed form, and the
// target p − u: ARAP's R, or co-rotational's p = (k (F + u) + c R)/a with
// the dual update u ← u + F − p (`Element::local_step`,
// `corotational_projection`), or the Neo-Hookean models' p = U diag(σ*) Vᵀ =
// (F + u) V diag(σ*/s) Vᵀ, FᵀF = V diag(s²) Vᵀ in closed form and σ* the
// prox of `prox.wgsl` (appended to this file; stable Neo-Hookean's by the
// damped Newton iteration, as on the CPU). The CPU takes R, U and V
// from a thin SVD: the two agree to rounding where σ_min² ≥ 1e-12
// ‖FᵀF‖; a flatter triangle is counted in `fallbacks` (its R is then the
// SVD's only to that order), and so is a Neo-Hookean triangle whose
// scalar prox hands on to the damped Newton iteration (`prox.wgsl`, as
// on the CPU) and a triangle whose p is not finite (p = F + u there).
//
// 3 × 2 matrices are arrays of 6, column-major: (i, j) at i + 3 j.

struct Params {
    triangles: u32,
    // Invocations along x of the dispatch grid.
    stride: u32,
    // 0: ARAP, 1: co-rotational, 2: Neo-Hookean, 3: stable Neo-Hookean.
    model: u32,
    // Index of the first triangle's target in `targets`.
    base: u32,
}

@group(0) @binding(0) var<uniform> prm: Params;
@group(0) @binding(1) var<storage, read> vertices: array<u32>;
// Per triangle: g₀ g₁ g₂ (2 each), μ, λ, k.
@group(0) @binding(2) var<storage, read> coef: array<f64>;
@group(0) @binding(3) var<storage, read> x: array<f64>;
@group(0) @binding(4) var<storage, read_write> duals: array<f64>;
@group(0) @binding(5) var<storage, read_write> targets: array<f64>;
@group(0) @binding(6) var<storage, read_write> fallbacks: array<atomic<u32>>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    let t = id.x + id.y * prm.stride;
    if t >= prm.triangles {
        return;
    }
    let corotational = prm.model == 1u;
    var f: array<f64, 6>;
    for (var a = 0u; a < 3u; a++) {
        let v = vertices[3u * t + a];
        for (var j = 0u; j < 2u; j++) {
            let g = coef[9u * t + 2u * a + j];
            for (var i = 0u; i < 3u; i++) {
                f[i + 3u * j] += x[3u * v + i] * g;
            }
        }
    }
    var u: array<f64, 6>;
    var fu = f;
    if prm.model != 0u {
        for (var e = 0u; e < 6u; e++) {
            u[e] = duals[6u * t + e];
            fu[e] += u[e];
        }
    }
    let out = prm.base + 6u * t;
    let mu = coef[9u * t + 6u];
    let lambda = coef[9u * t + 7u];
    let k = coef[9u * t + 8u];
    if prm.model >= 2u {
        let projection = neo_hookean_membrane(fu, mu, lambda, k, prm.model == 3u);
        if projection.fallback {
            atomicAdd(&fallbacks[0], 1u);
        }
        update_dual(t, out, f, u, projection.p);
        return;
    }
    // C = FᵀF; √C = (C + s I)/τ with s = √det C = σ₁σ₂ and
    // τ = √(tr C + 2s) = σ₁ + σ₂; R = F (√C)⁻¹.
    let c00 = fu[0] * fu[0] + fu[1] * fu[1] + fu[2] * fu[2];
    let c01 = fu[0] * fu[3] + fu[1] * fu[4] + fu[2] * fu[5];
    let c11 = fu[3] * fu[3] + fu[4] * fu[4] + fu[5] * fu[5];
    let det = max(c00 * c11 - c01 * c01, f64(0.0));
    let s = sqrt(det);
    let tau = sqrt(c00 + c11 + f64(2.0) * s);
    if det < f64(1e-12) * (c00 + c11) * (c00 + c11) || !(tau > f64(0.0)) {
        atomicAdd(&fallbacks[0], 1u);
    }
    // (√C)⁻¹ = adj(M)/(s τ) with M = C + s I (det M = s τ²).
    let d = f64(1.0) / (max(s, f64(1e-300)) * tau);
    let i00 = (c11 + s) * d;
    let i01 = -c01 * d;
    let i11 = (c00 + s) * d;
    var r: array<f64, 6>;
    for (var i = 0u; i < 3u; i++) {
        r[i] = fu[i] * i00 + fu[i + 3u] * i01;
        r[i + 3u] = fu[i] * i01 + fu[i + 3u] * i11;
    }
    if !corotational {
        for (var e = 0u; e < 6u; e++) {
            targets[out + e] = r[e];
        }
        return;
    }
    let a = f64(2.0) * mu + k;
    let g = f64(2.0) * mu + lambda * f64(2.0);
    var trace = f64(0.0);
    for (var e = 0u; e < 6u; e++) {
        trace += r[e] * fu[e];
    }
    let c = (g * a - lambda * k * trace) / (a + lambda * f64(2.0));
    let inv = f64(1.0) / a;
    var p: array<f64, 6>;
    for (var e = 0u; e < 6u; e++) {
        p[e] = (fu[e] * k + r[e] * c) * inv;
    }
    update_dual(t, out, f, u, p);
}

// The dual u ← u + (F − p) and the target p − u (`Element::local_step`).
fn update_dual(t: u32, out: u32, f: array<f64, 6>, u: array<f64, 6>, p: array<f64, 6>) {
    for (var e = 0u; e < 6u; e++) {
        let dual = u[e] + (f[e] - p[e]);
        duals[6u * t + e] = dual;
        targets[out + e] = p[e] - dual;
    }
}

struct Membrane {
    p: array<f64, 6>,
    fallback: bool,
}

// The Neo-Hookean models' projection of a triangle's F (+ u): FᵀF = [a b; b c] =
// V diag(s²) Vᵀ in closed form (the larger eigenvalue's vector from the
// row without cancellation, the smaller value as det/e₁), σ* by the prox
// over two values, p = F V diag(σ*/s) Vᵀ.
fn neo_hookean_membrane(fu: array<f64, 6>, mu: f64, lambda: f64, k: f64, stable: bool) -> Membrane {
    let a = fu[0] * fu[0] + fu[1] * fu[1] + fu[2] * fu[2];
    let b = fu[0] * fu[3] + fu[1] * fu[4] + fu[2] * fu[5];
    let c = fu[3] * fu[3] + fu[4] * fu[4] + fu[5] * fu[5];
    let half = f64(0.5) * (a - c);
    let r = sqrt(half * half + b * b);
    let e1 = f64(0.5) * (a + c) + r;
    let e2 = max(a * c - b * b, f64(0.0)) / e1;
    var x = f64(1.0);
    var y = f64(0.0);
    if r > f64(0.0) {
        if a >= c {
            x = half + r;
            y = b;
        } else {
            x = b;
            y = r - half;
        }
        let n = sqrt(x * x + y * y);
        x /= n;
        y /= n;
    }
    var s: array<f64, 3>;
    s[0] = sqrt(e1);
    s[1] = sqrt(e2);
    var prox: Prox;
    prox.converged = true;
    if stable {
        // Stable Neo-Hookean's prox is the damped Newton iteration on the CPU too.
        prox.sigma = prox_newton(true, mu, lambda, k, s, 2u);
    } else {
        prox = neo_hookean_prox(mu, lambda, k, s, 2u);
        if !prox.converged {
            // The CPU's damped Newton iteration.
            prox.sigma = prox_newton(false, mu, lambda, k, s, 2u);
        }
    }
    let h1 = prox.sigma[0] / s[0];
    let h2 = prox.sigma[1] / s[1];
    // V = [x −y; y x].
    let m00 = h1 * x * x + h2 * y * y;
    let m01 = (h1 - h2) * x * y;
    let m11 = h1 * y * y + h2 * x * x;
    var p: array<f64, 6>;
    var finite = true;
    for (var i = 0u; i < 3u; i++) {
        p[i] = fu[i] * m00 + fu[i + 3u] * m01;
        p[i + 3u] = fu[i] * m01 + fu[i + 3u] * m11;
        finite = finite && abs(p[i]) <= MAX_F64 && abs(p[i + 3u]) <= MAX_F64;
    }
    if !finite {
        p = fu;
    }
    return Membrane(p, !prox.converged || !finite);
}
