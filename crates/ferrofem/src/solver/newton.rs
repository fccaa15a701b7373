//! Non-smooth Newton in constraint space (zeng2025 §5.2–5.4, after Macklin
//! et al. 2019): the Signorini–Coulomb conditions of `δ = δ_free + W λ`
//! (`W` = h² H A⁻¹ Hᵀ, assembled once per step) become root-finding on NCP
//! functions `Φ(λ) = φ(δ(λ), λ) = 0` (eq. 12–14, 46–57); each Newton step
//! solves `(Ω W + E) Δλ = −Φ` by a few conjugate-residual iterations.
//!
//! `Ω` (the non-smooth indicators, eq. 24–25) only scales the rows of the
//! constant `W`, so `W` is never rebuilt inside the iterations (eq. 26).
//! The exact Jacobian `Ω W + E` is not symmetric; with `D = Ω^{1/2}` it is
//! `D (D W D + E) D⁻¹`, so CR runs on the symmetric `D W D + E` for
//! `y = D⁻¹ Δλ` (rows with `ω = 0` are solved directly: `Δλ = −Φ / E`).
//! zeng2025's `Ω W Ωᵀ + E` drops one `Ω`; this keeps the Newton direction
//! exact at the same cost. The complementarity scale `r` (eq. 28) is
//! `W_jj` from the system inverse, or `h² [H M⁻¹ Hᵀ]_jj` (Macklin's).
//!
//! Friction is Macklin's fixed-point form, position-level here (`δₜ` is
//! the tangential slip over the step, `h` times the sliding velocity, so
//! the same `r` applies to all rows): with `λₙ > 0`, stick
//! `Φₜ = δₜ` when `‖δₜ‖ ≤ r (μλₙ − ‖λₜ‖)`, else slip `Φₜ = δₜ + e λₜ` with
//! `e = (‖δₜ‖ − r(μλₙ − ‖λₜ‖)) / (μλₙ)` held fixed in the step; with
//! `λₙ ≤ 0`, `Φₜ = r λₜ`. Its roots are exactly the Coulomb law (stick,
//! or `‖λₜ‖ = μλₙ` against the slip). After each step λ is projected on
//! the cone (`λₙ ≥ 0`, `‖λₜ‖ ≤ μλₙ`), which leaves the roots unchanged.

use ferrofem_linalg::ConjugateResidual;
use serde::{Deserialize, Serialize};

mod products;

pub use products::{delassus_times, round_to_single, DelassusPair, NewtonDelassus};

use crate::constraint::ConstraintGroup;

/// The NCP function of the normal rows (zeng2025 eq. 13–14).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Complementarity {
    /// `φ(a, b) = a + b − √(a² + b²)` (eq. 14, 52–54): smooth away from the origin.
    #[default]
    FischerBurmeister,
    /// `φ(a, b) = min(a, b)` (eq. 13, 46–48).
    MinMap,
}

/// Where the complementarity scale `r` comes from (zeng2025 §5.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum ComplementarityScale {
    /// `r_j = [h² H A⁻¹ Hᵀ]_jj`, the diagonal of `W` (eq. 28).
    #[default]
    SystemInverse,
    /// `r_j = h² [H M⁻¹ Hᵀ]_jj` (Macklin et al. 2019): blind to stiffness.
    MassInverse,
}

/// How many Newton steps each local-global iteration takes (zeng2025
/// Algorithm 4 takes one per iteration).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum NewtonSchedule {
    /// One step in each iteration but the final one, which takes up to
    /// `newton_iterations`: the early iterates are not the step's answer,
    /// the final one's gaps and slips are.
    #[default]
    Final,
    /// Up to `newton_iterations` in every iteration.
    Every,
}

impl NewtonSchedule {
    /// The Newton settings of local-global iteration `k` of `iterations`
    /// (`None`: the count is not fixed, a tolerance ends the iterations,
    /// so every iteration may be the final one).
    ///
    /// The iteration that may be the final one also takes extra steps
    /// ([`NewtonSettings::extension`]) while its contact and attachment
    /// rows miss their laws by more than a tenth of `alarm_distance`: its
    /// gaps are the step's, and the step is refused past that distance.
    pub fn at(
        self,
        settings: NewtonSettings,
        k: usize,
        iterations: Option<usize>,
        alarm_distance: f64,
    ) -> NewtonSettings {
        match (self, iterations) {
            (NewtonSchedule::Final, Some(n)) if k + 1 < n => NewtonSettings { iterations: 1, ..settings },
            (NewtonSchedule::Every, Some(n)) if k + 1 < n => settings,
            _ => NewtonSettings {
                extension: Some(Extension {
                    iterations: EXTENSION_FACTOR * settings.iterations.max(1),
                    residual: EXTENSION_SHARE * alarm_distance,
                }),
                ..settings
            },
        }
    }
}

/// The final iteration's steps are extended to this many times the planned ones, at most.
const EXTENSION_FACTOR: usize = 4;

/// Share of the alarm distance that the final iteration's rows must reach
/// before extra steps stop.
const EXTENSION_SHARE: f64 = 0.1;

/// Extra Newton steps past the planned ones while the solve is far from
/// the contact laws.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Extension {
    /// Steps in all, at most.
    pub iterations: usize,
    /// Steps continue while the normal and attachment rows' `‖Φ‖∞` exceeds this (m).
    pub residual: f64,
}

/// Settings of the non-smooth Newton solver.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct NewtonSettings {
    /// NCP function of the normal rows.
    pub complementarity: Complementarity,
    /// Source of the complementarity scale `r`.
    pub preconditioner: ComplementarityScale,
    /// Newton steps per solve: per global step under local-global (the
    /// paper's one), per time step under implicit Euler.
    pub iterations: usize,
    /// Conjugate-residual iterations per Newton step.
    pub linear_iterations: usize,
    /// Stop early when `‖Δλ‖∞ ≤ tolerance · ‖λ‖∞`.
    pub tolerance: f64,
    /// Stop early when `‖Φ‖∞ ≤ ncp_tolerance` (m): the contact laws hold to
    /// this gap or slip.
    pub ncp_tolerance: f64,
    /// Extra steps past `iterations` (set per iteration by the
    /// [`NewtonSchedule`], not by scenes).
    #[serde(skip)]
    pub extension: Option<Extension>,
}

impl Default for NewtonSettings {
    fn default() -> Self {
        NewtonSettings {
            complementarity: Complementarity::FischerBurmeister,
            preconditioner: ComplementarityScale::SystemInverse,
            iterations: 5,
            linear_iterations: 10,
            tolerance: 1e-8,
            ncp_tolerance: 1e-10,
            extension: None,
        }
    }
}

/// What a Newton solve did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct NewtonSolve {
    /// Newton steps taken.
    pub iterations: usize,
    /// Conjugate-residual iterations, all steps together.
    pub linear_iterations: usize,
    /// `‖Φ‖∞` at the result (m).
    pub residual: f64,
    /// Final `‖Δλ‖∞ / ‖λ‖∞`.
    pub error: f64,
    /// Whether the steps ended by meeting `ncp_tolerance` or `tolerance`
    /// (else by the planned count: the schedules of zeng2025 §5 stop early
    /// on purpose, so this is a figure, not a failure).
    pub converged: bool,
}

/// Scratch of the solver, reused from call to call.
#[derive(Debug, Clone, Default)]
pub struct NewtonScratch {
    delta: Vec<f64>,
    phi: Vec<f64>,
    omega: Vec<f64>,
    e: Vec<f64>,
    d: Vec<f64>,
    rhs: Vec<f64>,
    y: Vec<f64>,
    dlambda: Vec<f64>,
    tmp: Vec<f64>,
    scaled: Vec<f64>,
    base: Vec<f64>,
    direction: Vec<f64>,
    rot: Vec<[f64; 2]>,
    bilateral: Vec<bool>,
    inv_diag: Vec<f64>,
    /// Whether `delta` already holds `δ` at the warm start ([`Self::start_at`]).
    start_known: bool,
    cr: ConjugateResidual,
}

impl NewtonScratch {
    /// The next solve starts where `δ = delta` at the warm-start λ (the
    /// caller formed it): its first evaluation skips a product with `W`.
    pub(crate) fn start_at(&mut self, delta: &[f64]) {
        self.delta.clear();
        self.delta.extend_from_slice(delta);
        self.start_known = true;
    }

    /// `δ = δ_free + W λ` at the last solve's result (m).
    pub fn gaps(&self) -> &[f64] {
        &self.delta
    }
}

/// Below this, a non-smooth indicator counts as zero.
const OMEGA_ZERO: f64 = 1e-12;

/// `E` of contact rows is kept at least this fraction of `W_jj` in the
/// Newton system: a Levenberg–Marquardt-like regularization of sticking
/// contacts, whose `D W D` is semi-definite when they are dependent (a
/// stiff body on many points: `W` has rank ≈ 6); it changes the direction,
/// not the roots. Attachments keep their exact one-step closure.
const REGULARIZATION: f64 = 1e-4;

/// Step halvings of the line search before the last trial is taken anyway.
pub const LINE_SEARCH_HALVINGS: usize = 8;

/// The most a Newton step may multiply the merit `‖Φ‖²` by. The line
/// search tests each halving against the last trial (a non-monotone
/// search: a step through a friction kink may raise the merit), but never
/// takes a step past this multiple of the step's starting merit: without
/// the bound, single-step solves (local-global's early iterations) could
/// take steps that drove contacts centimetres deep in a light body, which
/// the final solve could not recover.
pub const GROWTH: f64 = 4.0;

impl NewtonSettings {
    /// Solves `δ = free + W λ` under the groups' laws with complementarity
    /// scale `r` per row; `lambda` holds the warm start and receives the
    /// result. Each Newton step is safeguarded by a backtracking line search
    /// on `‖Φ‖²` (min-map's plain Newton cycles without it), the iterate
    /// projected on the cones. The planned steps test each halving against
    /// the last trial (non-monotone, see [`GROWTH`]); the extra steps of an
    /// [`Extension`] against the step's starting merit (monotone Armijo),
    /// and the extension ends, λ unmoved, where no halving descends:
    /// non-monotone steps can cycle (the 15.3k-vertex cloth on knives:
    /// `‖Φ‖∞` alternated between 1.9 and 2.4 mm for 20 extra steps, then
    /// the run stopped on the violation), and a step taken anyway can
    /// climb.
    pub fn solve(
        &self,
        w: &mut impl NewtonDelassus,
        free: &[f64],
        laws: &[ConstraintGroup],
        r: &[f64],
        lambda: &mut [f64],
        s: &mut NewtonScratch,
    ) -> NewtonSolve {
        let c = free.len();
        let known = std::mem::take(&mut s.start_known) && s.delta.len() == c;
        if !known {
            s.delta.clear();
            s.delta.resize(c, 0.0);
        }
        for v in [&mut s.phi, &mut s.omega, &mut s.e, &mut s.d, &mut s.rhs, &mut s.y] {
            v.clear();
            v.resize(c, 0.0);
        }
        for v in [&mut s.dlambda, &mut s.tmp] {
            v.clear();
            v.resize(c, 0.0);
        }
        s.rot.clear();
        s.rot.resize(laws.len(), [1.0, 0.0]);
        s.bilateral.clear();
        s.bilateral.extend(laws.iter().map(ConstraintGroup::is_bilateral));
        let mut out = NewtonSolve::default();
        let merit = match known {
            true => self.linearize_merit(laws, r, lambda, s),
            false => self.evaluate(w, free, laws, r, lambda, s),
        };
        out.residual = s.phi.iter().fold(0.0, |m, p| m.max(p.abs()));
        let mut merit = merit;
        let planned = self.iterations.max(1);
        let cap = self.extension.map_or(planned, |x| x.iterations.max(planned));
        for it in 1..=cap {
            if out.residual <= self.ncp_tolerance {
                out.converged = true;
                break;
            }
            if it > planned && !self.extension.is_some_and(|x| law_residual(laws, &s.phi) > x.residual) {
                break;
            }
            out.linear_iterations += self.newton_direction(w, s);
            s.base.clear();
            s.base.extend_from_slice(lambda);
            let (mut alpha, start, mut last, mut accepted) = (1.0, merit, merit, false);
            let extra = it > planned;
            for _ in 0..LINE_SEARCH_HALVINGS {
                for ((l, b), d) in lambda.iter_mut().zip(&s.base).zip(&s.dlambda) {
                    *l = b + alpha * d;
                }
                project_on_cones(laws, lambda);
                merit = self.evaluate(w, free, laws, r, lambda, s);
                let reference = if extra { start } else { last };
                if merit <= (1.0 - 1e-4 * alpha) * reference && merit <= GROWTH * start {
                    accepted = true;
                    break;
                }
                last = merit;
                alpha *= 0.5;
            }
            if extra && !accepted {
                // No halving descends: the extension ends where it was.
                lambda.copy_from_slice(&s.base);
                self.evaluate(w, free, laws, r, lambda, s);
                out.residual = s.phi.iter().fold(0.0, |m, p| m.max(p.abs()));
                break;
            }
            let change = lambda.iter().zip(&s.base).fold(0.0f64, |m, (l, b)| m.max((l - b).abs()));
            let size = lambda.iter().fold(0.0f64, |m, l| m.max(l.abs()));
            out.iterations = it;
            out.error = if size > 0.0 { change / size } else { change };
            out.residual = s.phi.iter().fold(0.0, |m, p| m.max(p.abs()));
            if out.error <= self.tolerance {
                out.converged = true;
                break;
            }
        }
        out
    }

    /// `δ = free + W λ`, then `Φ`, `Ω`, `E` there; returns `‖Φ‖²`.
    fn evaluate(
        &self,
        w: &mut impl NewtonDelassus,
        free: &[f64],
        laws: &[ConstraintGroup],
        r: &[f64],
        lambda: &[f64],
        s: &mut NewtonScratch,
    ) -> f64 {
        w.times(lambda, &mut s.delta);
        s.delta.iter_mut().zip(free).for_each(|(d, f)| *d += f);
        self.linearize_merit(laws, r, lambda, s)
    }

    /// `Φ`, `Ω`, `E` at the `δ` in the scratch; returns `‖Φ‖²`.
    fn linearize_merit(
        &self,
        laws: &[ConstraintGroup],
        r: &[f64],
        lambda: &[f64],
        s: &mut NewtonScratch,
    ) -> f64 {
        self.linearize(laws, r, lambda, s);
        s.phi.iter().map(|p| p * p).sum()
    }

    /// `Φ`, `Ω` and `E` at `δ`, `λ` (eq. 24, 46–57).
    fn linearize(&self, laws: &[ConstraintGroup], r: &[f64], lambda: &[f64], s: &mut NewtonScratch) {
        for (k, law) in laws.iter().enumerate() {
            let i = 3 * k;
            match *law {
                ConstraintGroup::Attachment => {
                    for j in i..i + 3 {
                        (s.phi[j], s.omega[j], s.e[j]) = (s.delta[j], 1.0, 0.0);
                    }
                    s.rot[k] = [1.0, 0.0];
                }
                ConstraintGroup::Cable => {
                    (s.phi[i], s.omega[i], s.e[i]) = (s.delta[i], 1.0, 0.0);
                    for j in i + 1..i + 3 {
                        // The empty rows: λ = 0 (Δλ = −λ).
                        (s.phi[j], s.omega[j], s.e[j]) = (lambda[j], 0.0, 1.0);
                    }
                    s.rot[k] = [1.0, 0.0];
                }
                ConstraintGroup::Shaft { bound } => {
                    (s.phi[i], s.omega[i], s.e[i]) = shaft_friction(s.delta[i], lambda[i], bound, r[i]);
                    for j in i + 1..i + 3 {
                        (s.phi[j], s.omega[j], s.e[j]) = (s.delta[j], 1.0, 0.0);
                    }
                    s.rot[k] = [1.0, 0.0];
                }
                ConstraintGroup::Contact { mu } => {
                    (s.phi[i], s.omega[i], s.e[i]) = self.normal(s.delta[i], lambda[i], r[i]);
                    let rt = 0.5 * (r[i + 1] + r[i + 2]);
                    let f = friction(
                        [s.delta[i + 1], s.delta[i + 2]],
                        [lambda[i + 1], lambda[i + 2]],
                        lambda[i],
                        mu,
                        rt,
                    );
                    for t in 0..2 {
                        (s.phi[i + 1 + t], s.omega[i + 1 + t], s.e[i + 1 + t]) =
                            (f.phi[t], f.omega[t], f.e[t]);
                    }
                    s.rot[k] = f.rot;
                }
            }
        }
    }

    /// `(φₙ, ω, E)` of a normal row (eq. 46–48 or 52–54).
    fn normal(&self, delta: f64, lambda: f64, r: f64) -> (f64, f64, f64) {
        let b = r * lambda;
        match self.complementarity {
            Complementarity::MinMap if delta <= b => (delta, 1.0, 0.0),
            Complementarity::MinMap => (b, 0.0, r),
            Complementarity::FischerBurmeister => {
                let norm = delta.hypot(b);
                if norm == 0.0 {
                    // The kink: the generalized Jacobian along (1, 1).
                    let g = 1.0 - std::f64::consts::FRAC_1_SQRT_2;
                    return (0.0, g, g * r);
                }
                (delta + b - norm, 1.0 - delta / norm, (1.0 - b / norm) * r)
            }
        }
    }

    /// `Δλ` from `(Ω W + E) Δλ = −Φ`, in the frame where each sliding
    /// contact's tangents are its slip direction and the one across it
    /// (`Q`, so that `Ω` and `E` are diagonal): rows with `ω = 0` directly,
    /// the others by CR on `(D W̃ D + E) y = D⁻¹(−Φ − Ω W̃ Δλ_Z)`,
    /// `W̃ = Q W Qᵀ`, `Δλ = D y`; then `Δλ ← Qᵀ Δλ`. Returns the CR iterations.
    fn newton_direction(&self, w: &mut impl NewtonDelassus, s: &mut NewtonScratch) -> usize {
        let c = s.phi.len();
        for j in 0..c {
            let zero = s.omega[j] <= OMEGA_ZERO;
            s.d[j] = if zero { 0.0 } else { s.omega[j].sqrt() };
            s.dlambda[j] = if zero { -s.phi[j] / s.e[j] } else { 0.0 };
        }
        rotated_times(w, &s.rot, &s.dlambda, &mut s.tmp, &mut s.scaled);
        s.inv_diag.clear();
        for j in 0..c {
            let dj = s.d[j];
            s.rhs[j] = if dj == 0.0 { 0.0 } else { (-s.phi[j] - s.omega[j] * s.tmp[j]) / dj };
            let wjj = rotated_diagonal(&*w, &s.rot, j);
            if !s.bilateral[j / 3] {
                s.e[j] = s.e[j].max(REGULARIZATION * wjj);
            }
            let diag = dj * dj * wjj + s.e[j];
            s.inv_diag.push(if diag > 0.0 { 1.0 / diag } else { 1.0 });
            s.y[j] = 0.0;
        }
        let NewtonScratch { d, e, rhs, y, tmp, scaled, direction: dv, inv_diag, cr, rot, .. } = s;
        dv.clear();
        dv.resize(c, 0.0);
        let apply = |v: &[f64], out: &mut [f64]| {
            dv.iter_mut().zip(v).zip(d.iter()).for_each(|((x, v), d)| *x = d * v);
            scaled.clear();
            scaled.extend_from_slice(dv);
            rotate(rot, scaled, true);
            w.times_inner(scaled, tmp);
            rotate(rot, tmp, false);
            for j in 0..c {
                out[j] = if d[j] == 0.0 { e[j] * v[j] } else { d[j] * tmp[j] + e[j] * v[j] };
            }
        };
        let solve = cr.solve(apply, inv_diag, rhs, y, self.linear_iterations, 0.0);
        for j in 0..c {
            if s.d[j] != 0.0 {
                s.dlambda[j] = s.d[j] * s.y[j];
            }
        }
        rotate(&s.rot, &mut s.dlambda, true);
        solve.iterations
    }
}

/// `‖Φ‖∞` over the normal rows of contacts and the rows of attachments:
/// how far (m) the iterate is from closing gaps, whatever its friction.
fn law_residual(laws: &[ConstraintGroup], phi: &[f64]) -> f64 {
    laws.iter().enumerate().fold(0.0, |m, (k, law)| match law {
        ConstraintGroup::Attachment => phi[3 * k..3 * k + 3].iter().fold(m, |m, p| m.max(p.abs())),
        ConstraintGroup::Shaft { .. } => phi[3 * k + 1..3 * k + 3].iter().fold(m, |m, p| m.max(p.abs())),
        ConstraintGroup::Contact { .. } | ConstraintGroup::Cable => m.max(phi[3 * k].abs()),
    })
}

/// `v ← Q v` (`back`: `v ← Qᵀ v`), `Q` turning each contact's tangent
/// pair by its `[cos, sin]`.
fn rotate(rot: &[[f64; 2]], v: &mut [f64], back: bool) {
    for (k, &[c, s]) in rot.iter().enumerate() {
        if s == 0.0 && c == 1.0 {
            continue;
        }
        let s = if back { -s } else { s };
        let (a, b) = (v[3 * k + 1], v[3 * k + 2]);
        (v[3 * k + 1], v[3 * k + 2]) = (c * a + s * b, -s * a + c * b);
    }
}

/// `out = Q W Qᵀ v` for a `v` with few nonzeros; `buf` is scratch.
fn rotated_times(
    w: &mut impl NewtonDelassus,
    rot: &[[f64; 2]],
    v: &[f64],
    out: &mut [f64],
    buf: &mut Vec<f64>,
) {
    buf.clear();
    buf.extend_from_slice(v);
    rotate(rot, buf, true);
    w.times_sparse(buf, out);
    rotate(rot, out, false);
}

/// `(Q W Qᵀ)_jj`.
fn rotated_diagonal(w: &impl NewtonDelassus, rot: &[[f64; 2]], j: usize) -> f64 {
    let (k, row) = (j / 3, j % 3);
    let [cs, sn] = rot[k];
    if row == 0 || (cs == 1.0 && sn == 0.0) {
        return w.block_entry(j, j);
    }
    let (i1, i2) = (3 * k + 1, 3 * k + 2);
    let (a, b, d) = (w.block_entry(i1, i1), w.block_entry(i1, i2), w.block_entry(i2, i2));
    let (u1, u2) = if row == 1 { (cs, sn) } else { (-sn, cs) };
    u1 * u1 * a + 2.0 * u1 * u2 * b + u2 * u2 * d
}

/// A contact's friction rows linearized: `Φ`, `ω` and `E` in the frame
/// turned by `rot` (`[cos, sin]` of the slip direction in the `t1, t2`
/// plane; `[1, 0]` when sticking or inactive).
struct FrictionRows {
    phi: [f64; 2],
    omega: [f64; 2],
    e: [f64; 2],
    rot: [f64; 2],
}

/// A contact's two friction rows, slip `δₜ` (m), force `λₜ`, normal force
/// `λₙ`: Alart–Curnier's `Φₜ = r (λₜ − P(λₜ − δₜ/r))`, `P` the projection on
/// the disc of radius `μλₙ`. Stick (inside): `Φₜ = δₜ`, `Ω = I`, `E = 0`.
/// Slip: with `u` the direction of `z = λₜ − δₜ/r` and `κ = μλₙ/‖z‖`, the
/// generalized Jacobian is diagonal in `(u, u⊥)`: `ω = (0, κ)`,
/// `E = r (1, 1 − κ)` (`λₙ` held in the bound). Inactive: `Φₜ = r λₜ`.
fn friction(dt: [f64; 2], lt: [f64; 2], ln: f64, mu: f64, r: f64) -> FrictionRows {
    if ln <= 0.0 || mu == 0.0 {
        return FrictionRows { phi: [r * lt[0], r * lt[1]], omega: [0.0; 2], e: [r; 2], rot: [1.0, 0.0] };
    }
    let z = [lt[0] - dt[0] / r, lt[1] - dt[1] / r];
    let (norm, bound) = (z[0].hypot(z[1]), mu * ln);
    if norm <= bound {
        return FrictionRows { phi: dt, omega: [1.0; 2], e: [0.0; 2], rot: [1.0, 0.0] };
    }
    let u = [z[0] / norm, z[1] / norm];
    let kappa = bound / norm;
    let phi = [r * (lt[0] - bound * u[0]), r * (lt[1] - bound * u[1])];
    FrictionRows {
        phi: [u[0] * phi[0] + u[1] * phi[1], -u[1] * phi[0] + u[0] * phi[1]],
        omega: [0.0, kappa],
        e: [r, r * (1.0 - kappa)],
        rot: u,
    }
}

/// The row along a needle's shaft, `|λ| ≤ b` (N) against `δ`, by its
/// natural map `φ = rλ − clamp(rλ − δ, −rb, rb)` (the one-dimensional
/// disc of [`friction`]): `(φ, ω, E)` with `φ = δ` where the tissue holds
/// to the shaft, `φ = r(λ ∓ b)` where the shaft slides.
fn shaft_friction(delta: f64, lambda: f64, bound: f64, r: f64) -> (f64, f64, f64) {
    let trial = r * lambda - delta;
    if trial.abs() <= r * bound {
        return (delta, 1.0, 0.0);
    }
    (r * (lambda - bound.copysign(trial)), 0.0, r)
}

/// `λₙ ← max(λₙ, 0)`, `λₜ` scaled into the disc `‖λₜ‖ ≤ μ λₙ`; a shaft
/// point's friction clamped to its bound.
fn project_on_cones(laws: &[ConstraintGroup], lambda: &mut [f64]) {
    for (k, law) in laws.iter().enumerate() {
        if let ConstraintGroup::Shaft { bound } = *law {
            lambda[3 * k] = lambda[3 * k].clamp(-bound, bound);
        }
        if let ConstraintGroup::Contact { mu } = *law {
            let l = &mut lambda[3 * k..3 * k + 3];
            l[0] = l[0].max(0.0);
            let (norm, bound) = (l[1].hypot(l[2]), mu * l[0]);
            if norm > bound {
                let s = if norm > 0.0 { bound / norm } else { 0.0 };
                l[1] *= s;
                l[2] *= s;
            }
        }
    }
}

#[cfg(test)]
mod tests;
