//! The local-global integrator's workspace and its step (zeng2025
//! Algorithm 2): `predict` → k × { `local_step` → `global_step` } →
//! `integrate`.

use nalgebra::Vector3;

use super::energy::elastic_energy;
use super::global::{pinned_global_matrix, GlobalSolver, GlobalStepMethod};
use super::local::{assemble_rhs, local_step, Projections};
use super::terms::Pin;
use super::{Chebyshev, LocalGlobalSettings};
use crate::body::Body;
use crate::error::guard;
use crate::stats::{BodyStepStats, Stage, StageTimes};
use crate::{Model, SimError, State};

/// Per-body workspace: pins, the global solver and the iteration's buffers.
/// The projections carry over from step to step as a cache: their last
/// value warm-starts ARAP's rotation extraction.
#[derive(Debug)]
struct Workspace {
    pins: Vec<Pin>,
    global: GlobalSolver,
    projections: Projections,
    predicted: Vec<f64>,
    rhs: Vec<f64>,
    x: Vec<f64>,
    next: Vec<f64>,
    previous: Vec<f64>,
}

/// The local-global integrator (zeng2025 §3.3–4): its settings and one
/// workspace per body.
#[derive(Debug)]
pub struct LocalGlobal {
    /// Iterations and global-step method.
    pub settings: LocalGlobalSettings,
    bodies: Vec<Workspace>,
}

/// Pins of a body's kinematic vertices; their weights are set with the
/// global matrix.
fn pins(body: &Body) -> Vec<Pin> {
    let pin = |(v, k): (usize, &Option<_>)| {
        k.map(|motion| Pin { vertex: v, weight: 0.0, motion, rest: body.rest_vertex(v) })
    };
    body.kinematic.iter().enumerate().filter_map(pin).collect()
}

impl LocalGlobal {
    /// Sets pin weights, assembles and factorizes each body's `A_s` (and
    /// builds `S` for the sparse-inverse method): the precomputation of
    /// zeng2025 Algorithm 2.
    pub fn new(model: &Model, settings: LocalGlobalSettings) -> Result<LocalGlobal, SimError> {
        let (h, s) = (model.time_step, settings);
        let mut bodies = Vec::with_capacity(model.bodies.len());
        for body in &model.bodies {
            let mut pins = pins(body);
            let matrix = pinned_global_matrix(body, &mut pins, h, s.pin_weight);
            let global = GlobalSolver::new(matrix, s.global_step, s.ordering).map_err(|e| {
                SimError::Body { body: body.name.clone(), message: format!("global matrix: {e}") }
            })?;
            let n = body.dofs();
            bodies.push(Workspace {
                pins,
                global,
                projections: Projections::new(body),
                predicted: vec![0.0; n],
                rhs: vec![0.0; n],
                x: vec![0.0; n],
                next: vec![0.0; n],
                previous: vec![0.0; n],
            });
        }
        Ok(LocalGlobal { settings, bodies })
    }

    /// The global solver of a body (its `A_s`, factor and sparse inverse).
    pub fn global_solver(&self, body: usize) -> &GlobalSolver {
        &self.bodies[body].global
    }

    /// The positional pins of a body, with their weights (N/m).
    pub fn pins(&self, body: usize) -> &[Pin] {
        &self.bodies[body].pins
    }

    /// The prediction `q̃` of the last step of a body.
    pub fn predicted(&self, body: usize) -> &[f64] {
        &self.bodies[body].predicted
    }

    /// One step of every body, calling `observe(body, iteration, q)` after
    /// every global step (iteration 1…k) and once with the starting iterate
    /// (iteration 0: `q̃` with pins on their targets).
    pub fn step(
        &mut self,
        model: &Model,
        state: &mut State,
        times: &mut StageTimes,
        mut observe: impl FnMut(usize, usize, &[f64]),
    ) -> Result<(), SimError> {
        let step = state.step + 1;
        let (h, g, settings) = (model.time_step, model.gravity, self.settings);
        let t_next = state.time + h;
        for (b, body) in model.bodies.iter().enumerate() {
            let (s, w) = (&mut state.bodies[b], &mut self.bodies[b]);
            predict(w, &s.positions, &s.velocities, h, g, t_next);
            observe(b, 0, &w.x);
            let mut omega = 1.0;
            for k in 0..settings.iterations {
                times.time(Stage::LocalStep, || {
                    local_step(body, &w.x, &mut w.projections);
                    assemble_rhs(body, &w.pins, &w.projections, &w.predicted, h, t_next, &mut w.rhs);
                });
                times.time(Stage::GlobalStep, || global_step(w, settings, k, &mut omega));
                guard(step, body, Stage::GlobalStep, "positions", &w.x)?;
                observe(b, k + 1, &w.x);
            }
            times.time(Stage::Integrate, || {
                for ((v, q), x) in s.velocities.iter_mut().zip(&mut s.positions).zip(&w.x) {
                    *v = (x - *q) / h;
                    *q = *x;
                }
            });
        }
        Ok(())
    }

    /// A body's figures after the step: its elastic and bending energy at the end positions.
    pub fn body_stats(&self, body: &Body, positions: &[f64]) -> BodyStepStats {
        BodyStepStats { elastic_energy: elastic_energy(body, positions), ..Default::default() }
    }
}

/// `q̃ = q + h v + h² g`; the iterate starts from `q̃` with pinned vertices
/// on their targets (the iterations then spend nothing on the pins' stiff
/// springs), and the ADMM duals start at zero.
fn predict(w: &mut Workspace, q: &[f64], v: &[f64], h: f64, g: [f64; 3], t_next: f64) {
    for (i, p) in w.predicted.iter_mut().enumerate() {
        *p = q[i] + h * v[i] + h * h * g[i % 3];
    }
    w.x.copy_from_slice(&w.predicted);
    for p in &w.pins {
        let t: Vector3<f64> = p.target(t_next);
        (0..3).for_each(|d| w.x[3 * p.vertex + d] = t[d]);
    }
    w.projections.reset_duals();
}

/// Stage `global_step`: `q = A⁻¹ b` (zeng2025 eq. 6–8), or one Jacobi
/// iteration, Chebyshev-accelerated when asked (Wang 2015).
fn global_step(w: &mut Workspace, settings: LocalGlobalSettings, k: usize, omega: &mut f64) {
    if settings.global_step != GlobalStepMethod::Jacobi {
        return w.global.solve(&w.rhs, &mut w.x);
    }
    w.global.jacobi(&w.rhs, &w.x, &mut w.next);
    if let Some(c) = settings.chebyshev {
        *omega = chebyshev_omega(c, k, *omega);
        for ((n, x), p) in w.next.iter_mut().zip(&w.x).zip(&w.previous) {
            let p = if k == 0 { *x } else { *p };
            *n = *omega * (c.gamma * (*n - x) + x - p) + p;
        }
    }
    w.previous.copy_from_slice(&w.x);
    std::mem::swap(&mut w.x, &mut w.next);
}

/// Wang 2015 eq. 12: ω₁ = 1 until the delay, then `2/(2 − ρ²)`, then
/// `4/(4 − ρ² ω)`.
fn chebyshev_omega(c: Chebyshev, k: usize, omega: f64) -> f64 {
    let r2 = c.rho * c.rho;
    match k.cmp(&c.delay) {
        std::cmp::Ordering::Less => 1.0,
        std::cmp::Ordering::Equal => 2.0 / (2.0 - r2),
        std::cmp::Ordering::Greater => 4.0 / (4.0 - r2 * omega),
    }
}
