// The local step of a body's tets (zeng2025 eq. 5), one tet per
// invocation: F = Σₐ xₐ gₐᵀ (+ the dual u for co-rotational), the rotation
// of F by the polar iteration warm-started from the tet's last rotation
// (Newton steps on the polar rotation, then Jacobi sweeps: dahl2019 §3.3),
// and the target p − u the global step pulls F towards: ARAP's rotation,
// or co-rotational's proximal projection p = (k F + c R)/a with its dual
// update u ← u + F − p; Neo-Hookean's and stable Neo-Hookean's projections
// in `neo_hookean.wgsl` and `stable_neo_hookean.wgsl`, appended to this file. The arithmetic is the CPU's one-element routine
// (`element::lanes`: `polar`, `rotation_newton`, `cayley_step`,
// `rotation_jacobi`; `tet_lanes`: `corotational_lanes`), step for step.
// Where the CPU would take an SVD (an unconverged co-rotational polar
// iteration, a warm start that is not a rotation), this kernel keeps the
// iteration's rotation and counts the tet in `fallbacks`.
//
// 3×3 matrices are arrays of 9, column-major: (i, j) at i + 3 j.

struct Params {
    tets: u32,
    // Invocations along x of the dispatch grid.
    stride: u32,
    // 0: ARAP, 1: co-rotational, 2: Neo-Hookean (`neo_hookean.wgsl`),
    // 3: stable Neo-Hookean (`stable_neo_hookean.wgsl`).
    model: u32,
    // ARAP's Jacobi sweeps at most.
    arap_sweeps: u32,
}

@group(0) @binding(0) var<uniform> prm: Params;
@group(0) @binding(1) var<storage, read> vertices: array<u32>;
// Per tet: g₀ g₁ g₂ g₃ (3 each), μ, λ, k.
@group(0) @binding(2) var<storage, read> coef: array<f64>;
@group(0) @binding(3) var<storage, read> x: array<f64>;
@group(0) @binding(4) var<storage, read_write> rotations: array<f64>;
@group(0) @binding(5) var<storage, read_write> duals: array<f64>;
@group(0) @binding(6) var<storage, read_write> targets: array<f64>;
@group(0) @binding(7) var<storage, read_write> fallbacks: array<atomic<u32>>;

alias M3 = array<f64, 9>;

// `POLAR_SWEEPS`, `POLAR_NEWTON_STEPS`, `POLAR_TOLERANCE` of `element::lanes`.
const POLAR_SWEEPS: u32 = 8u;
const NEWTON_STEPS: u32 = 3u;
const TOLERANCE: f64 = f64(1e-12);
const MIN_POSITIVE: f64 = f64(2.2250738585072014e-308);

fn identity() -> M3 {
    var m: M3;
    m[0] = f64(1.0);
    m[4] = f64(1.0);
    m[8] = f64(1.0);
    return m;
}

// Aᵀ B, sums over k = 0, 1, 2 in order.
fn mul_tn(a_in: M3, b_in: M3) -> M3 {
    var a = a_in;
    var b = b_in;
    var c: M3;
    for (var j = 0u; j < 3u; j++) {
        for (var i = 0u; i < 3u; i++) {
            c[i + 3u * j] = a[3u * i] * b[3u * j] + a[1u + 3u * i] * b[1u + 3u * j] + a[2u + 3u * i] * b[2u + 3u * j];
        }
    }
    return c;
}

// A B, sums over k = 0, 1, 2 in order.
fn mul_nn(a_in: M3, b_in: M3) -> M3 {
    var a = a_in;
    var b = b_in;
    var c: M3;
    for (var j = 0u; j < 3u; j++) {
        for (var i = 0u; i < 3u; i++) {
            c[i + 3u * j] = a[i] * b[3u * j] + a[i + 3u] * b[1u + 3u * j] + a[i + 6u] * b[2u + 3u * j];
        }
    }
    return c;
}

// Frobenius norm, entries in storage order.
fn norm(a_in: M3) -> f64 {
    var a = a_in;
    var sum = f64(0.0);
    for (var e = 0u; e < 9u; e++) {
        sum += a[e] * a[e];
    }
    return sqrt(sum);
}

// ‖S − Sᵀ‖², entries in storage order.
fn skew_squared(s_in: M3) -> f64 {
    var s = s_in;
    var sum = f64(0.0);
    for (var j = 0u; j < 3u; j++) {
        for (var i = 0u; i < 3u; i++) {
            let d = s[i + 3u * j] - s[j + 3u * i];
            sum += d * d;
        }
    }
    return sum;
}

// Whether ‖RᵀR − I‖ ≤ 1e-6: a usable warm start.
fn orthonormal(r: M3) -> bool {
    var g = mul_tn(r, r);
    g[0] -= f64(1.0);
    g[4] -= f64(1.0);
    g[8] -= f64(1.0);
    return norm(g) <= f64(1e-6);
}

struct Cayley {
    q: M3,
    ok: bool,
}

// One Newton step of the polar rotation from S = RᵀF (`cayley_step`).
fn cayley_step(s_in: M3) -> Cayley {
    var s = s_in;
    let a0 = s[5] - s[7];
    let a1 = s[6] - s[2];
    let a2 = s[1] - s[3];
    let t = s[0] + s[4] + s[8];
    let j00 = t - s[0];
    let j11 = t - s[4];
    let j22 = t - s[8];
    let j01 = f64(-0.5) * (s[3] + s[1]);
    let j02 = f64(-0.5) * (s[6] + s[2]);
    let j12 = f64(-0.5) * (s[7] + s[5]);
    let c00 = j11 * j22 - j12 * j12;
    let c01 = j02 * j12 - j01 * j22;
    let c02 = j01 * j12 - j02 * j11;
    let c11 = j00 * j22 - j02 * j02;
    let c12 = j01 * j02 - j00 * j12;
    let c22 = j00 * j11 - j01 * j01;
    let det = j00 * c00 + j01 * c01 + j02 * c02;
    let inv = f64(1.0) / det;
    let w0 = (c00 * a0 + c01 * a1 + c02 * a2) * inv;
    let w1 = (c01 * a0 + c11 * a1 + c12 * a2) * inv;
    let w2 = (c02 * a0 + c12 * a1 + c22 * a2) * inv;
    let ww = w0 * w0 + w1 * w1 + w2 * w2;
    let ok = j00 > f64(0.0) && c22 > f64(0.0) && det > f64(0.0) && ww <= f64(1.0);
    var b = array<f64, 3>(f64(0.5) * w0, f64(0.5) * w1, f64(0.5) * w2);
    let bb = f64(0.25) * ww;
    let g = f64(2.0) / (f64(1.0) + bb);
    var q: M3;
    for (var j = 0u; j < 3u; j++) {
        for (var i = 0u; i < 3u; i++) {
            var diagonal = f64(0.0);
            if i == j {
                diagonal = f64(1.0) - g * bb;
            }
            q[i + 3u * j] = diagonal + g * b[i] * b[j];
        }
    }
    q[3] -= g * b[2];
    q[1] += g * b[2];
    q[6] += g * b[1];
    q[2] -= g * b[1];
    q[7] -= g * b[0];
    q[5] += g * b[0];
    return Cayley(q, ok);
}

struct Polar {
    r: M3,
    converged: bool,
}

// Newton's method on the polar rotation (`rotation_newton`, one lane).
fn rotation_newton(f: M3, r_in: M3) -> Polar {
    var r = r_in;
    let b = TOLERANCE * max(norm(f), MIN_POSITIVE);
    let bound = b * b;
    var going = true;
    var converged = false;
    for (var k = 0u; k <= NEWTON_STEPS; k++) {
        let s = mul_tn(r, f);
        let met = skew_squared(s) <= bound;
        converged = converged || (going && met);
        going = going && !met;
        if k == NEWTON_STEPS || !going {
            break;
        }
        let turn = cayley_step(s);
        going = going && turn.ok;
        let moved = mul_nn(r, turn.q);
        if going {
            r = moved;
        }
    }
    return Polar(r, converged);
}

// Columns i, j of A ← A G, G = [c −s; s c] (`givens_right`).
fn givens_right(a: ptr<function, M3>, i: u32, j: u32, c: f64, sn: f64) {
    for (var k = 0u; k < 3u; k++) {
        let ai = (*a)[k + 3u * i];
        let aj = (*a)[k + 3u * j];
        (*a)[k + 3u * i] = c * ai + sn * aj;
        (*a)[k + 3u * j] = -sn * ai + c * aj;
    }
}

// Rows i, j of A ← Gᵀ A (`givens_left_t`).
fn givens_left_t(a: ptr<function, M3>, i: u32, j: u32, c: f64, sn: f64) {
    for (var k = 0u; k < 3u; k++) {
        let ai = (*a)[i + 3u * k];
        let aj = (*a)[j + 3u * k];
        (*a)[i + 3u * k] = c * ai + sn * aj;
        (*a)[j + 3u * k] = -sn * ai + c * aj;
    }
}

// dahl2019 §3.3 (`rotation_jacobi`, one lane): plane rotations of R until
// ‖S − Sᵀ‖ ≤ tolerance ‖F‖, checked before each sweep.
fn rotation_jacobi(f: M3, r_in: M3, sweeps: u32) -> Polar {
    var r = r_in;
    var s = mul_tn(r, f);
    let scale = max(norm(f), MIN_POSITIVE);
    for (var sweep = 0u; sweep < sweeps; sweep++) {
        if sqrt(skew_squared(s)) <= TOLERANCE * scale {
            return Polar(r, true);
        }
        for (var plane = 0u; plane < 3u; plane++) {
            let i = select(0u, 1u, plane == 2u);
            let j = select(1u, 2u, plane > 0u);
            let num = s[j + 3u * i] - s[i + 3u * j];
            let den = s[i + 3u * i] + s[j + 3u * j];
            let h = sqrt(num * num + den * den);
            var c = f64(1.0);
            var sn = f64(0.0);
            if h != f64(0.0) {
                c = den / h;
                sn = num / h;
            }
            givens_right(&r, i, j, c, sn);
            givens_left_t(&s, i, j, c, sn);
        }
    }
    return Polar(r, sqrt(skew_squared(s)) <= TOLERANCE * scale);
}

// The polar rotation from the warm start (`polar`, one lane): converged
// (`sweeps ≥ POLAR_SWEEPS`: Newton, then Jacobi if Newton did not
// converge) or bounded (at most `sweeps` Jacobi sweeps). A warm start that
// is not a rotation is replaced by the identity and counted.
fn polar(f: M3, warm: M3, sweeps: u32) -> Polar {
    var r = warm;
    if !orthonormal(r) {
        r = identity();
        atomicAdd(&fallbacks[0], 1u);
    }
    if sweeps >= POLAR_SWEEPS {
        let newton = rotation_newton(f, r);
        if newton.converged {
            return newton;
        }
        r = newton.r;
    }
    return rotation_jacobi(f, r, sweeps);
}

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    let t = id.x + id.y * prm.stride;
    if t >= prm.tets {
        return;
    }
    let corotational = prm.model == 1u;
    let dual = prm.model != 0u;
    // F = Σₐ xₐ gₐᵀ in the order of `Element::gradient`, plus u.
    var f: M3;
    for (var a = 0u; a < 4u; a++) {
        let v = vertices[4u * t + a];
        for (var j = 0u; j < 3u; j++) {
            let g = coef[15u * t + 3u * a + j];
            for (var i = 0u; i < 3u; i++) {
                f[i + 3u * j] += x[3u * v + i] * g;
            }
        }
    }
    var u: M3;
    if dual {
        for (var e = 0u; e < 9u; e++) {
            u[e] = duals[9u * t + e];
            f[e] += u[e];
        }
    }
    var warm: M3;
    for (var e = 0u; e < 9u; e++) {
        warm[e] = rotations[9u * t + e];
    }
    let mu = coef[15u * t + 12u];
    let lambda = coef[15u * t + 13u];
    let k = coef[15u * t + 14u];
    if prm.model >= 2u {
        var projection: Projection;
        if prm.model == 2u {
            projection = neo_hookean_projection(f, warm, mu, lambda, k);
        } else {
            projection = stable_neo_hookean_projection(f, warm, mu, lambda, k);
        }
        if projection.fallback {
            atomicAdd(&fallbacks[0], 1u);
        }
        for (var e = 0u; e < 9u; e++) {
            rotations[9u * t + e] = projection.basis[e];
        }
        update_dual(t, f, u, projection.p);
        return;
    }
    var sweeps = prm.arap_sweeps;
    if corotational {
        sweeps = POLAR_SWEEPS;
    }
    let found = polar(f, warm, sweeps);
    var r = found.r;
    if corotational && !found.converged {
        atomicAdd(&fallbacks[0], 1u);
    }
    for (var e = 0u; e < 9u; e++) {
        rotations[9u * t + e] = r[e];
    }
    if !corotational {
        for (var e = 0u; e < 9u; e++) {
            targets[9u * t + e] = r[e];
        }
        return;
    }
    // `corotational_lanes`: p = (k F + c R)/a.
    let a = f64(2.0) * mu + k;
    let g = f64(2.0) * mu + lambda * f64(3.0);
    var trace = f64(0.0);
    for (var e = 0u; e < 9u; e++) {
        trace += r[e] * f[e];
    }
    let c = (g * a - lambda * k * trace) / (a + lambda * f64(3.0));
    let inv = f64(1.0) / a;
    var p: M3;
    for (var e = 0u; e < 9u; e++) {
        p[e] = (f[e] * k + r[e] * c) * inv;
    }
    update_dual(t, f, u, p);
}

// The ADMM dual u ← u + (F − u − p) and the target p − u of tet t (F
// includes the old u), as `tet_batch` forms them.
fn update_dual(t: u32, f: M3, u: M3, p: M3) {
    for (var e = 0u; e < 9u; e++) {
        let dual = u[e] + (f[e] - u[e] - p[e]);
        duals[9u * t + e] = dual;
        targets[9u * t + e] = p[e] - dual;
    }
}
