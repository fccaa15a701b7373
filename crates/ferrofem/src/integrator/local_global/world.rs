//! Model, state and workspace of a local-global simulation, and its step.

use std::time::Instant;

use ferrofem_linalg::vector::all_finite;

use super::body::LocalGlobalBody;
use super::energy::elastic_energy;
use super::global::{pinned_global_matrix, GlobalSolver, GlobalStepMethod};
use super::local::{assemble_rhs, local_step, Projections};
use super::LocalGlobalSettings;
use crate::stats::{BodyStepStats, Stage, StageTimes, StepStats};
use crate::{BodyState, SimError, State};

/// What the scene defines for a local-global simulation.
#[derive(Debug, Clone)]
pub struct LocalGlobalModel {
    /// Bodies (solids and membranes).
    pub bodies: Vec<LocalGlobalBody>,
    /// Gravity (m/s²).
    pub gravity: [f64; 3],
    /// Time step h (s).
    pub time_step: f64,
    /// Iterations and global-step method.
    pub settings: LocalGlobalSettings,
}

/// Per-body workspace: the global solver and the iteration's buffers.
#[derive(Debug)]
struct Workspace {
    global: GlobalSolver,
    projections: Projections,
    predicted: Vec<f64>,
    rhs: Vec<f64>,
    x: Vec<f64>,
    next: Vec<f64>,
    previous: Vec<f64>,
}

/// A local-global simulation.
#[derive(Debug)]
pub struct LocalGlobalWorld {
    /// What the scene defines (pin weights set from the global matrix).
    pub model: LocalGlobalModel,
    /// Positions, velocities, time.
    pub state: State,
    workspace: Vec<Workspace>,
}

impl LocalGlobalWorld {
    /// Sets pin weights, assembles and factorizes each body's `A_s` (and
    /// builds `S` for the sparse-inverse method): the precomputation of
    /// zeng2025 Algorithm 2.
    pub fn new(mut model: LocalGlobalModel) -> Result<LocalGlobalWorld, SimError> {
        let (h, s) = (model.time_step, model.settings);
        let mut workspace = Vec::with_capacity(model.bodies.len());
        for body in &mut model.bodies {
            let matrix = pinned_global_matrix(body, h, s.pin_weight);
            let global = GlobalSolver::new(matrix, s.global_step, s.ordering).map_err(|e| {
                SimError::Body { body: body.name.clone(), message: format!("global matrix: {e}") }
            })?;
            let n = body.dofs();
            workspace.push(Workspace {
                global,
                projections: Projections::new(body),
                predicted: vec![0.0; n],
                rhs: vec![0.0; n],
                x: vec![0.0; n],
                next: vec![0.0; n],
                previous: vec![0.0; n],
            });
        }
        let bodies = model
            .bodies
            .iter()
            .map(|b| BodyState { positions: b.rest_positions(), velocities: vec![0.0; b.dofs()] })
            .collect();
        Ok(LocalGlobalWorld { model, state: State { time: 0.0, step: 0, bodies }, workspace })
    }

    /// The global solver of a body (its `A_s`, factor and sparse inverse).
    pub fn global_solver(&self, body: usize) -> &GlobalSolver {
        &self.workspace[body].global
    }

    /// The prediction `q̃` of the last step of a body.
    pub fn predicted(&self, body: usize) -> &[f64] {
        &self.workspace[body].predicted
    }

    /// Advances one time step (zeng2025 Algorithm 2).
    pub fn step(&mut self) -> Result<StepStats, SimError> {
        self.step_observed(|_, _, _| ())
    }

    /// As [`Self::step`], calling `observe(body, iteration, q)` after every
    /// global step (iteration 1…k) and once with the starting iterate
    /// (iteration 0: `q̃` with pins on their targets); used to measure
    /// convergence.
    pub fn step_observed(
        &mut self,
        mut observe: impl FnMut(usize, usize, &[f64]),
    ) -> Result<StepStats, SimError> {
        let start = Instant::now();
        let step = self.state.step + 1;
        let (h, g, settings) = (self.model.time_step, self.model.gravity, self.model.settings);
        let t_next = self.state.time + h;
        let mut times = StageTimes::default();
        for (b, body) in self.model.bodies.iter().enumerate() {
            let (s, w) = (&mut self.state.bodies[b], &mut self.workspace[b]);
            for (i, p) in w.predicted.iter_mut().enumerate() {
                *p = s.positions[i] + h * s.velocities[i] + h * h * g[i % 3];
            }
            // Start from q̃ with pinned vertices on their targets: the
            // iterations then spend nothing on the pins' stiff springs.
            w.x.copy_from_slice(&w.predicted);
            for p in &body.pins {
                let t = p.target(t_next);
                (0..3).for_each(|d| w.x[3 * p.vertex + d] = t[d]);
            }
            w.projections.reset_duals();
            observe(b, 0, &w.x);
            let mut omega = 1.0;
            for k in 0..settings.iterations {
                times.time(Stage::LocalStep, || {
                    local_step(body, &w.x, &mut w.projections);
                    assemble_rhs(body, &w.projections, &w.predicted, h, t_next, &mut w.rhs);
                });
                times.time(Stage::GlobalStep, || match settings.global_step {
                    GlobalStepMethod::Jacobi => {
                        w.global.jacobi(&w.rhs, &w.x, &mut w.next);
                        if let Some(c) = settings.chebyshev {
                            omega = chebyshev_omega(c, k, omega);
                            for ((n, x), p) in w.next.iter_mut().zip(&w.x).zip(&w.previous) {
                                let p = if k == 0 { *x } else { *p };
                                *n = omega * (c.gamma * (*n - x) + x - p) + p;
                            }
                        }
                        w.previous.copy_from_slice(&w.x);
                        std::mem::swap(&mut w.x, &mut w.next);
                    }
                    _ => w.global.solve(&w.rhs, &mut w.x),
                });
                if !all_finite(&w.x) {
                    return Err(SimError::NonFinite {
                        step,
                        body: body.name.clone(),
                        stage: Stage::GlobalStep,
                        what: "positions",
                    });
                }
                observe(b, k + 1, &w.x);
            }
            times.time(Stage::Integrate, || {
                for ((v, q), x) in s.velocities.iter_mut().zip(&mut s.positions).zip(&w.x) {
                    *v = (x - *q) / h;
                    *q = *x;
                }
            });
        }
        self.state.time = t_next;
        self.state.step = step;
        Ok(self.step_stats(times, start))
    }

    fn step_stats(&self, stage_ms: StageTimes, start: Instant) -> StepStats {
        let step_ms = start.elapsed().as_secs_f64() * 1e3;
        let bodies: Vec<BodyStepStats> = self
            .model
            .bodies
            .iter()
            .zip(&self.state.bodies)
            .map(|(b, s)| BodyStepStats {
                kinetic_energy: s.kinetic_energy_with(&b.mass),
                elastic_energy: elastic_energy(b, &s.positions),
                ..Default::default()
            })
            .collect();
        StepStats {
            step: self.state.step,
            time: self.state.time,
            step_ms,
            stage_ms,
            kinetic_energy: bodies.iter().map(|b| b.kinetic_energy).sum(),
            elastic_energy: bodies.iter().map(|b| b.elastic_energy).sum(),
            local_global_iterations: self.model.settings.iterations,
            bodies,
            ..Default::default()
        }
    }
}

/// Wang 2015 eq. 12: ω₁ = 1 until the delay, then `2/(2 − ρ²)`, then
/// `4/(4 − ρ² ω)`.
fn chebyshev_omega(c: super::Chebyshev, k: usize, omega: f64) -> f64 {
    let r2 = c.rho * c.rho;
    match k.cmp(&c.delay) {
        std::cmp::Ordering::Less => 1.0,
        std::cmp::Ordering::Equal => 2.0 / (2.0 - r2),
        std::cmp::Ordering::Greater => 4.0 / (4.0 - r2 * omega),
    }
}
