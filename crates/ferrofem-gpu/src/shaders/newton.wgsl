// Non-smooth Newton in constraint space (zeng2025 §5.2–5.4), the
// device's half: the NCP functions and their generalized Jacobian per
// group of three rows, the Newton direction by conjugate residuals on
// `D W̃ D + E` (ferrofem's `solver::newton`, line by line), and the line
// search's trials. All vectors of length `c` live in `v`, one after
// another; the scalars the iterations share (CR's α, β, its stop flag,
// the line search's step and merits, the solve's stop) stay in `s` on the
// device, so a whole solve is one submission: three control kernels make
// `solver::newton`'s decisions, and every kernel after a stop does
// nothing (`idle`).
//
// Three kinds of entry point: per row of `W` (a workgroup of 64 lanes per
// row, a fixed reduction tree), per group or per row (one invocation
// each), and reductions over all rows (a single workgroup).

struct Params {
    // Rows c = 3 × groups.
    rows: u32,
    groups: u32,
    // Workgroups along x of a per-row-of-W grid.
    row_stride: u32,
    // Invocations along x of a per-item grid.
    item_stride: u32,
    // 1: Fischer–Burmeister, 0: min-map.
    fischer: u32,
}

@group(0) @binding(0) var<uniform> prm: Params;
@group(0) @binding(1) var<storage, read> w: array<f64>;
@group(0) @binding(2) var<storage, read> w32: array<f32>;
@group(0) @binding(3) var<storage, read_write> v: array<f64>;
@group(0) @binding(4) var<storage, read_write> s: array<f64>;

// Vectors of `v` (the first two are read back together).
const LAMBDA: u32 = 0u;
const DELTA: u32 = 1u;
const FREE: u32 = 2u;
const PHI: u32 = 3u;
const OMEGA: u32 = 4u;
const E: u32 = 5u;
const D: u32 = 6u;
const Y: u32 = 7u;
const DLAMBDA: u32 = 8u;
const TMP: u32 = 9u;
const SCALED: u32 = 10u;
const INV_DIAG: u32 = 11u;
const R: u32 = 12u;
const P: u32 = 13u;
const AR: u32 = 14u;
const AP: u32 = 15u;
const MAP: u32 = 16u;
// Per group: [unused, cos, sin] of the slip frame.
const ROT: u32 = 17u;
const BASE: u32 = 18u;
// Complementarity scale r per row.
const SCALE: u32 = 19u;
// Per group at its first row: μ, negative for an attachment.
const MU: u32 = 20u;

// Scalars of `s`.
const RAR: u32 = 0u;
const ALPHA: u32 = 1u;
const BETA: u32 = 2u;
const STOP: u32 = 3u;
const LINEAR: u32 = 4u;
const STEP: u32 = 5u;
const MERIT: u32 = 6u;
const PHI_MAX: u32 = 7u;
const CHANGE: u32 = 8u;
const SIZE: u32 = 9u;
// The solve's control (`newton_begin`, `line_search`, `newton_end`): it has
// stopped; the line search has accepted this step's trial; the step's
// start merit and the last trial's; Newton steps taken; converged; the
// last step's relative change; the tolerances and `GROWTH` (from the host).
const DONE: u32 = 10u;
const ACCEPTED: u32 = 11u;
const START: u32 = 12u;
const LAST: u32 = 13u;
const ITERATIONS: u32 = 14u;
const CONVERGED: u32 = 15u;
const ERROR: u32 = 16u;
const NCP_TOLERANCE: u32 = 17u;
const TOLERANCE: u32 = 18u;
const GROWTH: u32 = 19u;

// `solver::newton`'s OMEGA_ZERO and REGULARIZATION.
const OMEGA_ZERO: f64 = 1e-12;
const REGULARIZATION: f64 = 1e-4;

fn at(k: u32, i: u32) -> u32 {
    return k * prm.rows + i;
}

fn item(id: vec3<u32>) -> u32 {
    return id.x + id.y * prm.item_stride;
}

var<workgroup> part: array<f64, 64>;
var<workgroup> gate: u32;

// Whether a kernel has nothing to do: the solve has stopped, or the line
// search has accepted a trial (which skips the later trials; the
// direction's kernels run after `newton_begin` clears it). Uniform over
// the workgroup, so kernels with barriers may return on it.
fn idle(i: u32) -> bool {
    if i == 0u {
        gate = select(0u, 1u, s[DONE] != f64(0.0) || s[ACCEPTED] != f64(0.0));
    }
    return workgroupUniformLoad(&gate) == 1u;
}

// Σ over the workgroup of `x` (fixed tree).
fn tree_sum(i: u32, x: f64) -> f64 {
    workgroupBarrier();
    part[i] = x;
    workgroupBarrier();
    for (var h = 32u; h > 0u; h = h / 2u) {
        if i < h {
            part[i] += part[i + h];
        }
        workgroupBarrier();
    }
    return part[0];
}

// max over the workgroup of `x`.
fn tree_max(i: u32, x: f64) -> f64 {
    workgroupBarrier();
    part[i] = x;
    workgroupBarrier();
    for (var h = 32u; h > 0u; h = h / 2u) {
        if i < h {
            part[i] = max(part[i], part[i + h]);
        }
        workgroupBarrier();
    }
    return part[0];
}

// Lane i's share of (W x)[row] in f64, x the vector `k`.
fn w_dot(row: u32, k: u32, i: u32) -> f64 {
    var acc = f64(0.0);
    if row < prm.rows {
        let base = row * prm.rows;
        for (var j = i; j < prm.rows; j += 64u) {
            acc += w[base + j] * v[at(k, j)];
        }
    }
    return acc;
}

// The same with W rounded to f32, summed in f64.
fn w32_dot(row: u32, k: u32, i: u32) -> f64 {
    var acc = f64(0.0);
    if row < prm.rows {
        let base = row * prm.rows;
        for (var j = i; j < prm.rows; j += 64u) {
            acc += f64(w32[base + j]) * v[at(k, j)];
        }
    }
    return acc;
}

// δ = W λ (the free part is added by `linearize`).
@compute @workgroup_size(64)
fn delta_from_lambda(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) i: u32) {
    if idle(i) {
        return;
    }
    let row = wg.x + wg.y * prm.row_stride;
    let sum = tree_sum(i, w_dot(row, LAMBDA, i));
    if i == 0u && row < prm.rows {
        v[at(DELTA, row)] = sum;
    }
}

// TMP = W SCALED, in f64 (the direction's right-hand side).
@compute @workgroup_size(64)
fn tmp_from_scaled(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) i: u32) {
    if idle(i) {
        return;
    }
    let row = wg.x + wg.y * prm.row_stride;
    let sum = tree_sum(i, w_dot(row, SCALED, i));
    if i == 0u && row < prm.rows {
        v[at(TMP, row)] = sum;
    }
}

// TMP = W SCALED with the f32 copy of W (the CR operator).
@compute @workgroup_size(64)
fn tmp_from_scaled32(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) i: u32) {
    if idle(i) {
        return;
    }
    let row = wg.x + wg.y * prm.row_stride;
    let sum = tree_sum(i, w32_dot(row, SCALED, i));
    if i == 0u && row < prm.rows {
        v[at(TMP, row)] = sum;
    }
}

// δ_free = δ(q) − W λ from the uploaded gaps δ(q) (in FREE).
@compute @workgroup_size(64)
fn free_from_gaps(@builtin(global_invocation_id) id: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    if idle(li) {
        return;
    }
    let j = item(id);
    if j < prm.rows {
        v[at(FREE, j)] -= v[at(DELTA, j)];
    }
}

struct Row {
    phi: f64,
    omega: f64,
    e: f64,
}

fn hypot(a: f64, b: f64) -> f64 {
    return sqrt(a * a + b * b);
}

// (φₙ, ω, E) of a normal row (zeng2025 eq. 46–48 or 52–54).
fn normal(delta: f64, lambda: f64, r: f64) -> Row {
    let b = r * lambda;
    if prm.fischer == 0u {
        if delta <= b {
            return Row(delta, f64(1.0), f64(0.0));
        }
        return Row(b, f64(0.0), r);
    }
    let norm = hypot(delta, b);
    if norm == f64(0.0) {
        let g = f64(1.0) - f64(0.7071067811865476);
        return Row(f64(0.0), g, g * r);
    }
    return Row(delta + b - norm, f64(1.0) - delta / norm, (f64(1.0) - b / norm) * r);
}

// A contact's friction rows (Alart–Curnier, `solver::newton::friction`):
// Φ, ω, E in the slip frame, and the frame's [cos, sin].
struct Friction {
    phi1: f64,
    phi2: f64,
    omega1: f64,
    omega2: f64,
    e1: f64,
    e2: f64,
    cos: f64,
    sin: f64,
}

fn friction(d1: f64, d2: f64, l1: f64, l2: f64, ln: f64, mu: f64, r: f64) -> Friction {
    let one = f64(1.0);
    let zero = f64(0.0);
    if ln <= zero || mu == zero {
        return Friction(r * l1, r * l2, zero, zero, r, r, one, zero);
    }
    let z1 = l1 - d1 / r;
    let z2 = l2 - d2 / r;
    let norm = hypot(z1, z2);
    let bound = mu * ln;
    if norm <= bound {
        return Friction(d1, d2, one, one, zero, zero, one, zero);
    }
    let u1 = z1 / norm;
    let u2 = z2 / norm;
    let kappa = bound / norm;
    let p1 = r * (l1 - bound * u1);
    let p2 = r * (l2 - bound * u2);
    return Friction(u1 * p1 + u2 * p2, -u2 * p1 + u1 * p2, zero, kappa, r, r * (one - kappa), u1, u2);
}

fn set_row(j: u32, row: Row) {
    v[at(PHI, j)] = row.phi;
    v[at(OMEGA, j)] = row.omega;
    v[at(E, j)] = row.e;
}

// δ += δ_free, then Φ, Ω, E and the slip frame of group k (eq. 24).
@compute @workgroup_size(64)
fn linearize(@builtin(global_invocation_id) id: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    if idle(li) {
        return;
    }
    let k = item(id);
    if k >= prm.groups {
        return;
    }
    let i = 3u * k;
    for (var t = 0u; t < 3u; t++) {
        v[at(DELTA, i + t)] += v[at(FREE, i + t)];
    }
    let mu = v[at(MU, i)];
    if mu < f64(0.0) {
        for (var t = 0u; t < 3u; t++) {
            set_row(i + t, Row(v[at(DELTA, i + t)], f64(1.0), f64(0.0)));
        }
        v[at(ROT, i + 1u)] = f64(1.0);
        v[at(ROT, i + 2u)] = f64(0.0);
        return;
    }
    set_row(i, normal(v[at(DELTA, i)], v[at(LAMBDA, i)], v[at(SCALE, i)]));
    let rt = f64(0.5) * (v[at(SCALE, i + 1u)] + v[at(SCALE, i + 2u)]);
    let f = friction(
        v[at(DELTA, i + 1u)],
        v[at(DELTA, i + 2u)],
        v[at(LAMBDA, i + 1u)],
        v[at(LAMBDA, i + 2u)],
        v[at(LAMBDA, i)],
        mu,
        rt,
    );
    set_row(i + 1u, Row(f.phi1, f.omega1, f.e1));
    set_row(i + 2u, Row(f.phi2, f.omega2, f.e2));
    v[at(ROT, i + 1u)] = f.cos;
    v[at(ROT, i + 2u)] = f.sin;
}

// Vector k's tangent pair of group i turned by Q (`back`: by Qᵀ).
fn rotate(k: u32, i: u32, back: bool) {
    let c = v[at(ROT, i + 1u)];
    var sn = v[at(ROT, i + 2u)];
    if sn == f64(0.0) && c == f64(1.0) {
        return;
    }
    if back {
        sn = -sn;
    }
    let a = v[at(k, i + 1u)];
    let b = v[at(k, i + 2u)];
    v[at(k, i + 1u)] = c * a + sn * b;
    v[at(k, i + 2u)] = -sn * a + c * b;
}

// (Q W Qᵀ)_jj.
fn rotated_diagonal(j: u32) -> f64 {
    let i = j - j % 3u;
    let c = v[at(ROT, i + 1u)];
    let sn = v[at(ROT, i + 2u)];
    if j == i || (c == f64(1.0) && sn == f64(0.0)) {
        return w[j * prm.rows + j];
    }
    let a = w[(i + 1u) * prm.rows + i + 1u];
    let b = w[(i + 1u) * prm.rows + i + 2u];
    let d = w[(i + 2u) * prm.rows + i + 2u];
    var u1 = -sn;
    var u2 = c;
    if j == i + 1u {
        u1 = c;
        u2 = sn;
    }
    return u1 * u1 * a + f64(2.0) * u1 * u2 * b + u2 * u2 * d;
}

// Newton direction, first part: D = Ω^{1/2}, Δλ of the rows with ω = 0
// (−Φ/E), and SCALED = Qᵀ Δλ for `W̃ Δλ_Z`.
@compute @workgroup_size(64)
fn direction_setup(@builtin(global_invocation_id) id: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    if idle(li) {
        return;
    }
    let k = item(id);
    if k >= prm.groups {
        return;
    }
    let i = 3u * k;
    for (var j = i; j < i + 3u; j++) {
        let omega = v[at(OMEGA, j)];
        let zero = omega <= OMEGA_ZERO;
        v[at(D, j)] = select(sqrt(omega), f64(0.0), zero);
        v[at(DLAMBDA, j)] = select(f64(0.0), -v[at(PHI, j)] / v[at(E, j)], zero);
        v[at(SCALED, j)] = v[at(DLAMBDA, j)];
    }
    rotate(SCALED, i, true);
}

// Second part, after TMP = W SCALED: TMP ← Q TMP; the right-hand side
// D⁻¹(−Φ − Ω W̃ Δλ_Z), E kept ≥ 1e-4 W̃_jj on contact rows, the Jacobi
// preconditioner; CR starts from y = 0: R = P = M⁻¹ rhs.
@compute @workgroup_size(64)
fn direction_rhs(@builtin(global_invocation_id) id: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    if idle(li) {
        return;
    }
    let k = item(id);
    if k >= prm.groups {
        return;
    }
    let i = 3u * k;
    rotate(TMP, i, false);
    let bilateral = v[at(MU, i)] < f64(0.0);
    for (var j = i; j < i + 3u; j++) {
        let d = v[at(D, j)];
        var rhs = f64(0.0);
        if d != f64(0.0) {
            rhs = (-v[at(PHI, j)] - v[at(OMEGA, j)] * v[at(TMP, j)]) / d;
        }
        let wjj = rotated_diagonal(j);
        if !bilateral {
            v[at(E, j)] = max(v[at(E, j)], REGULARIZATION * wjj);
        }
        let diag = d * d * wjj + v[at(E, j)];
        let inv = select(f64(1.0), f64(1.0) / diag, diag > f64(0.0));
        v[at(INV_DIAG, j)] = inv;
        v[at(Y, j)] = f64(0.0);
        v[at(R, j)] = inv * rhs;
        v[at(P, j)] = v[at(R, j)];
    }
}

// CR operator, before the product: SCALED = Qᵀ (D ∘ R).
@compute @workgroup_size(64)
fn apply_pre(@builtin(global_invocation_id) id: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    if idle(li) {
        return;
    }
    let k = item(id);
    if k >= prm.groups {
        return;
    }
    let i = 3u * k;
    for (var j = i; j < i + 3u; j++) {
        v[at(SCALED, j)] = v[at(D, j)] * v[at(R, j)];
    }
    rotate(SCALED, i, true);
}

// After TMP = W₃₂ SCALED: AR = D ∘ (Q TMP) + E ∘ R.
@compute @workgroup_size(64)
fn apply_post(@builtin(global_invocation_id) id: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    if idle(li) {
        return;
    }
    let k = item(id);
    if k >= prm.groups {
        return;
    }
    let i = 3u * k;
    rotate(TMP, i, false);
    for (var j = i; j < i + 3u; j++) {
        let d = v[at(D, j)];
        let er = v[at(E, j)] * v[at(R, j)];
        v[at(AR, j)] = select(d * v[at(TMP, j)] + er, er, d == f64(0.0));
    }
}

// CR's start: AP = AR, rar = R·AR; stop at once when R = 0 (b = 0).
@compute @workgroup_size(64)
fn cr_begin(@builtin(local_invocation_index) i: u32) {
    if idle(i) {
        return;
    }
    var rr = f64(0.0);
    var rar = f64(0.0);
    for (var j = i; j < prm.rows; j += 64u) {
        let r = v[at(R, j)];
        rr += r * r;
        rar += r * v[at(AR, j)];
        v[at(AP, j)] = v[at(AR, j)];
    }
    let norm = tree_sum(i, rr);
    let dot = tree_sum(i, rar);
    if i == 0u {
        s[RAR] = dot;
        s[STOP] = select(f64(0.0), f64(1.0), norm == f64(0.0));
    }
}

// MAP = M⁻¹ AP.
@compute @workgroup_size(64)
fn cr_map(@builtin(global_invocation_id) id: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    if idle(li) {
        return;
    }
    let j = item(id);
    if j < prm.rows {
        v[at(MAP, j)] = v[at(INV_DIAG, j)] * v[at(AP, j)];
    }
}

// α = rar / (AP·MAP); a zero rar or a denominator that is not positive
// and finite stops CR.
@compute @workgroup_size(64)
fn cr_alpha(@builtin(local_invocation_index) i: u32) {
    if idle(i) {
        return;
    }
    var acc = f64(0.0);
    for (var j = i; j < prm.rows; j += 64u) {
        acc += v[at(AP, j)] * v[at(MAP, j)];
    }
    let denom = tree_sum(i, acc);
    if i == 0u && s[STOP] == f64(0.0) {
        let finite = denom > f64(0.0) && denom <= f64(1.7976931348623157e308);
        if s[RAR] == f64(0.0) || !finite {
            s[STOP] = f64(1.0);
        } else {
            s[ALPHA] = s[RAR] / denom;
        }
    }
}

// y += α P, R −= α MAP.
@compute @workgroup_size(64)
fn cr_update(@builtin(global_invocation_id) id: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    if idle(li) {
        return;
    }
    let j = item(id);
    if j < prm.rows && s[STOP] == f64(0.0) {
        let alpha = s[ALPHA];
        v[at(Y, j)] += alpha * v[at(P, j)];
        v[at(R, j)] -= alpha * v[at(MAP, j)];
    }
}

// β = (R·AR) / rar, rar ← R·AR; one more linear iteration.
@compute @workgroup_size(64)
fn cr_beta(@builtin(local_invocation_index) i: u32) {
    if idle(i) {
        return;
    }
    var acc = f64(0.0);
    for (var j = i; j < prm.rows; j += 64u) {
        acc += v[at(R, j)] * v[at(AR, j)];
    }
    let next = tree_sum(i, acc);
    if i == 0u && s[STOP] == f64(0.0) {
        s[BETA] = next / s[RAR];
        s[RAR] = next;
        s[LINEAR] += f64(1.0);
    }
}

// P = R + β P, AP = AR + β AP.
@compute @workgroup_size(64)
fn cr_direction(@builtin(global_invocation_id) id: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    if idle(li) {
        return;
    }
    let j = item(id);
    if j < prm.rows && s[STOP] == f64(0.0) {
        let beta = s[BETA];
        v[at(P, j)] = v[at(R, j)] + beta * v[at(P, j)];
        v[at(AP, j)] = v[at(AR, j)] + beta * v[at(AP, j)];
    }
}

// Δλ = Qᵀ (D y) on the rows with ω > 0 (the others keep −Φ/E), and the
// line search's base λ.
@compute @workgroup_size(64)
fn direction_finish(@builtin(global_invocation_id) id: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    if idle(li) {
        return;
    }
    let k = item(id);
    if k >= prm.groups {
        return;
    }
    let i = 3u * k;
    for (var j = i; j < i + 3u; j++) {
        let d = v[at(D, j)];
        if d != f64(0.0) {
            v[at(DLAMBDA, j)] = d * v[at(Y, j)];
        }
        v[at(BASE, j)] = v[at(LAMBDA, j)];
    }
    rotate(DLAMBDA, i, true);
}

// A trial of the line search: λ = base + step Δλ, projected on the cone
// (λₙ ≥ 0, ‖λₜ‖ ≤ μ λₙ).
@compute @workgroup_size(64)
fn trial(@builtin(global_invocation_id) id: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    if idle(li) {
        return;
    }
    let k = item(id);
    if k >= prm.groups {
        return;
    }
    let i = 3u * k;
    let step = s[STEP];
    for (var j = i; j < i + 3u; j++) {
        v[at(LAMBDA, j)] = v[at(BASE, j)] + step * v[at(DLAMBDA, j)];
    }
    let mu = v[at(MU, i)];
    if mu < f64(0.0) {
        return;
    }
    let ln = max(v[at(LAMBDA, i)], f64(0.0));
    v[at(LAMBDA, i)] = ln;
    let l1 = v[at(LAMBDA, i + 1u)];
    let l2 = v[at(LAMBDA, i + 2u)];
    let norm = hypot(l1, l2);
    let bound = mu * ln;
    if norm > bound {
        let f = select(f64(0.0), bound / norm, norm > f64(0.0));
        v[at(LAMBDA, i + 1u)] = l1 * f;
        v[at(LAMBDA, i + 2u)] = l2 * f;
    }
}

// The merit ‖Φ‖², ‖Φ‖∞, and ‖λ − base‖∞, ‖λ‖∞ for the host.
@compute @workgroup_size(64)
fn measure(@builtin(local_invocation_index) i: u32) {
    if idle(i) {
        return;
    }
    var merit = f64(0.0);
    var phi = f64(0.0);
    var change = f64(0.0);
    var size = f64(0.0);
    for (var j = i; j < prm.rows; j += 64u) {
        let p = v[at(PHI, j)];
        merit += p * p;
        phi = max(phi, abs(p));
        let l = v[at(LAMBDA, j)];
        change = max(change, abs(l - v[at(BASE, j)]));
        size = max(size, abs(l));
    }
    let m = tree_sum(i, merit);
    let p = tree_max(i, phi);
    let c = tree_max(i, change);
    let z = tree_max(i, size);
    if i == 0u {
        s[MERIT] = m;
        s[PHI_MAX] = p;
        s[CHANGE] = c;
        s[SIZE] = z;
    }
}

// Before a Newton step: stop once ‖Φ‖∞ meets its tolerance; else the line
// search starts at step 1 from the current merit.
@compute @workgroup_size(64)
fn newton_begin(@builtin(local_invocation_index) i: u32) {
    if i != 0u || s[DONE] != f64(0.0) {
        return;
    }
    if s[PHI_MAX] <= s[NCP_TOLERANCE] {
        s[CONVERGED] = f64(1.0);
        s[DONE] = f64(1.0);
        return;
    }
    s[STEP] = f64(1.0);
    s[START] = s[MERIT];
    s[LAST] = s[MERIT];
    s[ACCEPTED] = f64(0.0);
}

// After a trial: accept it when its merit decreased enough from the last
// trial's (Armijo) and is at most GROWTH × the step's start; else halve
// the step for the next trial.
@compute @workgroup_size(64)
fn line_search(@builtin(local_invocation_index) i: u32) {
    if i != 0u || s[DONE] != f64(0.0) || s[ACCEPTED] != f64(0.0) {
        return;
    }
    let alpha = s[STEP];
    let merit = s[MERIT];
    if merit <= (f64(1.0) - f64(1e-4) * alpha) * s[LAST] && merit <= s[GROWTH] * s[START] {
        s[ACCEPTED] = f64(1.0);
    } else {
        s[LAST] = merit;
        s[STEP] = alpha * f64(0.5);
    }
}

// After the line search: the step's relative change ‖λ − base‖∞/‖λ‖∞;
// stop once it meets its tolerance.
@compute @workgroup_size(64)
fn newton_end(@builtin(local_invocation_index) i: u32) {
    if i != 0u || s[DONE] != f64(0.0) {
        return;
    }
    s[ITERATIONS] += f64(1.0);
    let e = select(s[CHANGE], s[CHANGE] / s[SIZE], s[SIZE] > f64(0.0));
    s[ERROR] = e;
    if e <= s[TOLERANCE] {
        s[CONVERGED] = f64(1.0);
        s[DONE] = f64(1.0);
    }
}
