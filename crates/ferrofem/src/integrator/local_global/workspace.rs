//! One body's local-global workspace and the per-body stages of an
//! iteration on it: `predict`, `global_step` (or its forward half when
//! the correction is folded in), and the fixed-point state that the
//! residual and Anderson acceleration read (zeng2025 §3.3–4).

use nalgebra::Vector3;

use super::anderson::Anderson;
use super::global::{GlobalSolver, GlobalStepMethod};
use super::lbfgs::Lbfgs;
use super::local::Projections;
use super::terms::Pin;
use super::{Chebyshev, LocalGlobalSettings};
use crate::body::Body;
use crate::constraint::BodyRows;
use crate::constraint_stack::ConstraintSpace;
use crate::device::DeviceError;
use crate::integrator::InitialGuess;

/// Per-body workspace: pins, the global solver and the iteration's buffers.
/// The projections carry over from step to step as a cache: their last
/// value warm-starts ARAP's rotation extraction.
#[derive(Debug)]
pub(super) struct Workspace {
    pub(super) pins: Vec<Pin>,
    pub(super) global: GlobalSolver,
    pub(super) projections: Projections,
    pub(super) predicted: Vec<f64>,
    pub(super) rhs: Vec<f64>,
    pub(super) x: Vec<f64>,
    pub(super) next: Vec<f64>,
    pub(super) previous: Vec<f64>,
    /// Chebyshev's ω of the step's iteration.
    pub(super) omega: f64,
    /// Scratch of the correction: Δλ and `A⁻¹ H_bᵀ Δλ`.
    pub(super) correction: [Vec<f64>; 2],
    /// The forward half `z = D^{-1/2} L⁻¹ P b` of a folded global step.
    pub(super) forward: Vec<[f64; 4]>,
    /// Whether this step's correction is folded into the global step
    /// (see [`LocalGlobal::fold`]).
    pub(super) folded: bool,
    /// The fixed-point state `s = [x; duals]` of the iteration (the duals
    /// of the ADMM models only): the evaluated iterate, its image `G(s)`,
    /// the next iterate.
    pub(super) state: [Vec<f64>; 3],
    /// `D`: energy weight of each state entry (`m/h²` per position, `w`
    /// per dual entry).
    pub(super) weights: Vec<f64>,
    /// `‖G(s⁰) − s⁰‖_D` of the step's first iteration.
    pub(super) first_residual: f64,
    /// The step's last relative residual and the iterations it took (`NaN`
    /// and 0 when the step tracks none).
    pub(super) last_residual: (f64, usize),
    pub(super) anderson: Option<Anderson>,
    pub(super) lbfgs: Option<Lbfgs>,
    /// Where the tets' newest rotations are (a device frame reads them
    /// back, so the host's are then current too).
    pub(super) rotations: Rotations,
    /// Tets the last device frame counted where the CPU takes an SVD.
    pub(super) device_fallbacks: u64,
}

/// Where a body's newest tet rotations were computed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Rotations {
    /// Nowhere yet: no local step has run (the host's first takes the SVD's).
    Cold,
    /// By a local step on the host: the device's are stale.
    Host,
    /// By a device frame, and read back: both copies are current.
    Device,
}

impl Workspace {
    /// `state[i] ← [x; duals]`.
    pub(super) fn pack(&mut self, i: usize) {
        let (x, duals) = self.state[i].split_at_mut(self.x.len());
        x.copy_from_slice(&self.x);
        if !duals.is_empty() {
            self.projections.write_duals(duals);
        }
    }

    /// `[x; duals] ← state[i]`.
    pub(super) fn unpack(&mut self, i: usize) {
        let (x, duals) = self.state[i].split_at(self.x.len());
        self.x.copy_from_slice(x);
        if !duals.is_empty() {
            self.projections.read_duals(duals);
        }
    }

    /// After an iteration (`state[0]` the evaluated iterate, `x` its
    /// image): the residual relative to the step's first, and under
    /// Anderson acceleration the next iterate in `state[2]`.
    pub(super) fn residual(&mut self, k: usize) -> f64 {
        self.pack(1);
        let [s, g, next] = &mut self.state;
        let r = match self.anderson.as_mut() {
            Some(aa) => aa.next(s, g, next).residual,
            None => weighted_distance(s, g, &self.weights),
        };
        if k == 0 {
            self.first_residual = r;
        }
        let relative = if self.first_residual > 0.0 { r / self.first_residual } else { 0.0 };
        self.last_residual = (relative, k + 1);
        relative
    }
}

/// `‖a − b‖_D`.
fn weighted_distance(a: &[f64], b: &[f64], weights: &[f64]) -> f64 {
    a.iter().zip(b).zip(weights).map(|((a, b), w)| w * (a - b) * (a - b)).sum::<f64>().sqrt()
}

/// `D` of a body's state: `m/h²` per position, the element weight per
/// dual entry (ADMM models only).
pub(super) fn state_weights(body: &Body, h: f64) -> Vec<f64> {
    let mut d: Vec<f64> = body.mass.iter().flat_map(|m| [m / (h * h); 3]).collect();
    if body.constitutive.uses_dual() {
        d.extend(body.tets.iter().flat_map(|e| [e.weight; 9]));
        d.extend(body.triangles.iter().flat_map(|e| [e.weight; 6]));
    }
    d
}

/// Pins of a body's kinematic vertices; their weights are set with the
/// global matrix.
pub(super) fn pins(body: &Body) -> Vec<Pin> {
    let pin = |(v, k): (usize, &Option<_>)| {
        k.clone().map(|motion| Pin { vertex: v, weight: 0.0, motion, rest: body.rest_vertex(v) })
    };
    body.kinematic.iter().enumerate().filter_map(pin).collect()
}

/// `q̃ = q + h v + h² g`; the iterate starts from `q̃` with pinned vertices
/// on their targets (the iterations then spend nothing on the pins' stiff
/// springs), and the ADMM duals start at zero.
pub(super) fn predict(
    w: &mut Workspace,
    q: &[f64],
    v: &[f64],
    h: f64,
    g: [f64; 3],
    t_next: f64,
    guess: InitialGuess,
) {
    for (i, p) in w.predicted.iter_mut().enumerate() {
        *p = q[i] + h * v[i] + h * h * g[i % 3];
    }
    match guess {
        InitialGuess::Explicit => w.x.copy_from_slice(&w.predicted),
        // `previous_change` is refused by `LocalGlobalSettings::check`.
        InitialGuess::PreviousVelocity | InitialGuess::PreviousChange => {
            w.x.iter_mut().enumerate().for_each(|(i, x)| *x = q[i] + h * v[i])
        }
        InitialGuess::Zero => w.x.copy_from_slice(q),
    }
    for p in &w.pins {
        let t: Vector3<f64> = p.target(t_next);
        (0..3).for_each(|d| w.x[3 * p.vertex + d] = t[d]);
    }
    w.projections.reset_duals();
    w.omega = 1.0;
    if let Some(aa) = w.anderson.as_mut() {
        aa.reset();
    }
}

/// Stage `global_step`: `q = A⁻¹ b` (zeng2025 eq. 6–8, with the constraint
/// forces in `b`: eq. 23b), or one Jacobi iteration, Chebyshev-accelerated
/// when asked (Wang 2015).
pub(super) fn global_step(
    w: &mut Workspace,
    settings: LocalGlobalSettings,
    k: usize,
    upload: bool,
) -> Result<(), DeviceError> {
    if w.global.on_device() {
        return w.global.solve_projected(upload.then_some(&w.rhs), &w.projections, &mut w.x);
    }
    if settings.global_step != GlobalStepMethod::Jacobi {
        return w.global.solve_from(&w.rhs, &mut w.x);
    }
    w.global.jacobi(&w.rhs, &w.x, &mut w.next);
    if let Some(c) = settings.chebyshev {
        w.omega = chebyshev_omega(c, k, w.omega);
        let omega = w.omega;
        for ((n, x), p) in w.next.iter_mut().zip(&w.x).zip(&w.previous) {
            let p = if k == 0 { *x } else { *p };
            *n = omega * (c.gamma * (*n - x) + x - p) + p;
        }
    }
    w.previous.copy_from_slice(&w.x);
    std::mem::swap(&mut w.x, &mut w.next);
    Ok(())
}

/// Stage `global_step` of a folded body ([`LocalGlobal::fold`]): the
/// forward half `z = D^{-1/2} L⁻¹ P b`, and `q = A⁻¹ b` at the rows'
/// vertices from the isodof columns (zeng2025 Algorithm 4's `J Sᵀ(S g)`).
pub(super) fn forward_half(w: &mut Workspace, rows: &BodyRows) {
    let f = w.global.factor().expect("a folded body has a factor");
    f.forward_interleaved3_in(&w.rhs, &mut w.forward, w.global.precision());
    let gathered = rows.gather(f, &w.forward, &mut w.x);
    assert!(gathered, "fold() checked the columns");
}

/// Wang 2015 eq. 12: ω₁ = 1 until the delay, then `2/(2 − ρ²)`, then
/// `4/(4 − ρ² ω)`.
pub(super) fn chebyshev_omega(c: Chebyshev, k: usize, omega: f64) -> f64 {
    let r2 = c.rho * c.rho;
    match k.cmp(&c.delay) {
        std::cmp::Ordering::Less => 1.0,
        std::cmp::Ordering::Equal => 2.0 / (2.0 - r2),
        std::cmp::Ordering::Greater => 4.0 / (4.0 - r2 * omega),
    }
}

/// Stage `correct` of a folded body: `z += h² Z H_bᵀ (λᵏ⁺¹ − λᵏ)` by the
/// isodof columns, then the backward half `q = Pᵀ L⁻ᵀ D^{-1/2} z`.
pub(super) fn folded_correction(
    w: &mut Workspace,
    space: &mut ConstraintSpace,
    b: usize,
    previous: &[f64],
    h: f64,
) {
    let f = w.global.factor().expect("a folded body has a factor").clone();
    let delta = &mut w.correction[0];
    delta.clear();
    delta.extend(space.problem.impulses.iter().zip(previous).map(|(l, p)| l - p));
    let added = space.problem.bodies[b].add_forward(&f, delta, h * h, &mut w.forward);
    assert!(added, "fold() checked the columns");
    f.solve_from_forward_in(&mut w.forward, &mut w.x, w.global.precision());
}
