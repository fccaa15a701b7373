//! The world: model, state and workspace, and the time step as a sequence
//! of named stages.

use std::time::Instant;

use ferrofem_linalg::vector::all_finite;

use crate::body::BodyModel;
use crate::collision::{detect_contacts, ContactSettings};
use crate::integrator::implicit_euler::assemble::{assemble, StepInputs};
use crate::integrator::implicit_euler::constraints::{build_delassus, solve_constraints};
use crate::integrator::implicit_euler::correct::correct;
use crate::integrator::implicit_euler::factorize::Refactorizer;
use crate::integrator::implicit_euler::free_motion::free_motion;
use crate::integrator::implicit_euler::integrate::integrate;
use crate::integrator::implicit_euler::BodyWorkspace;
use crate::integrator::Refresh;
use crate::integrator::{ImplicitEulerSettings, PreconditionerKind};
use crate::obstacle::Obstacle;
use crate::stats::{BodyStepStats, Stage, StageTimes, StepStats};
use crate::SimError;

/// What the scene defines; read-only during a run.
#[derive(Debug, Clone)]
pub struct Model {
    /// Deformable bodies.
    pub bodies: Vec<BodyModel>,
    /// Gravity (m/s²).
    pub gravity: [f64; 3],
    /// Time step h (s).
    pub time_step: f64,
    /// Integrator settings.
    pub integrator: ImplicitEulerSettings,
    /// Rigid obstacles.
    pub obstacles: Vec<Obstacle>,
    /// Contact detection and solver settings.
    pub contact: ContactSettings,
}

/// Positions and velocities of one body, flat (DOF `3·vertex + axis`).
#[derive(Debug, Clone, PartialEq)]
pub struct BodyState {
    /// Positions q (m).
    pub positions: Vec<f64>,
    /// Velocities v (m/s).
    pub velocities: Vec<f64>,
}

impl BodyState {
    /// Kinetic energy `½ vᵀ M v` (J).
    pub fn kinetic_energy(&self, body: &BodyModel) -> f64 {
        self.velocities
            .chunks_exact(3)
            .zip(&body.mass)
            .map(|(v, m)| 0.5 * m * (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]))
            .sum()
    }

    /// Linear momentum `Σ mᵢ vᵢ` (kg·m/s).
    pub fn momentum(&self, body: &BodyModel) -> [f64; 3] {
        let mut p = [0.0; 3];
        for (v, m) in self.velocities.chunks_exact(3).zip(&body.mass) {
            (0..3).for_each(|d| p[d] += m * v[d]);
        }
        p
    }

    /// Centre of mass (m).
    pub fn center_of_mass(&self, body: &BodyModel) -> [f64; 3] {
        let mut c = [0.0; 3];
        for (x, m) in self.positions.chunks_exact(3).zip(&body.mass) {
            (0..3).for_each(|d| c[d] += m * x[d]);
        }
        c.map(|x| x / body.total_mass())
    }
}

/// The simulation state: time and per-body positions and velocities.
#[derive(Debug, Clone, PartialEq)]
pub struct State {
    /// Simulated time (s).
    pub time: f64,
    /// Steps taken.
    pub step: usize,
    /// Per-body state, in model order.
    pub bodies: Vec<BodyState>,
}

/// Model, state and workspace of a simulation.
#[derive(Debug)]
pub struct World {
    /// What the scene defines.
    pub model: Model,
    /// Positions, velocities, time.
    pub state: State,
    workspace: Vec<BodyWorkspace>,
}

impl World {
    /// A world at rest in the bodies' rest configuration.
    pub fn new(model: Model) -> World {
        let bodies = model
            .bodies
            .iter()
            .map(|b| BodyState { positions: b.rest_positions(), velocities: vec![0.0; b.dofs()] })
            .collect();
        let workspace = model.bodies.iter().map(BodyWorkspace::new).collect();
        World { model, state: State { time: 0.0, step: 0, bodies }, workspace }
    }

    /// Per-body workspace (matrices and scratch of the last step).
    pub fn workspace(&self, body: usize) -> &BodyWorkspace {
        &self.workspace[body]
    }

    /// Advances one time step: `assemble` → `factorize` (LDLᵀ preconditioner
    /// only) → `free_motion` → `integrate`.
    pub fn step(&mut self) -> Result<StepStats, SimError> {
        let start = Instant::now();
        let step = self.state.step + 1;
        let h = self.model.time_step;
        let inputs = StepInputs {
            h,
            t_next: self.state.time + h,
            gravity: self.model.gravity,
            polar: self.model.integrator.polar,
        };
        let mut times = StageTimes::default();
        let settings = self.model.integrator;
        let (model, state, ws) = (&self.model, &mut self.state, &mut self.workspace);
        for (b, body) in model.bodies.iter().enumerate() {
            let (s, w) = (&mut state.bodies[b], &mut ws[b]);
            let nonfinite = |stage, what| SimError::NonFinite { step, body: body.name.clone(), stage, what };
            let t = inputs.t_next - h;
            w.contacts = times.time(Stage::DetectContacts, || {
                detect_contacts(body, &s.positions, &model.obstacles, t, &model.contact)
            });
            times.time(Stage::Assemble, || assemble(body, s, w, &inputs));
            if !all_finite(&w.rhs) || !all_finite(&w.system.values) {
                return Err(nonfinite(Stage::Assemble, "system matrix or right-hand side"));
            }
            let contact = !w.contacts.is_empty() || !body.attachments.is_empty();
            if settings.preconditioner == PreconditionerKind::Ldlt || contact {
                times
                    .time(Stage::Factorize, || refresh_factor(w, step, &settings, contact))
                    .map_err(|source| SimError::Factorization { step, body: body.name.clone(), source })?;
            }
            times.time(Stage::FreeMotion, || free_motion(body, s, w, h, model.gravity, &settings)).map_err(
                |source| SimError::Solver { step, body: body.name.clone(), stage: Stage::FreeMotion, source },
            )?;
            if !all_finite(&w.dv) {
                return Err(nonfinite(Stage::FreeMotion, "velocity change"));
            }
            w.impulses.clear();
            w.contact_forces.iter_mut().for_each(|f| *f = 0.0);
            if contact {
                let factor = w.refactorizer.as_ref().and_then(|r| r.factor()).expect("factorized above");
                times.time(Stage::BuildDelassus, || build_delassus(w, body, &factor, h));
                times.time(Stage::SolveConstraints, || {
                    solve_constraints(w, body, s, &model.obstacles, h, t, &model.contact)
                });
                times.time(Stage::Correct, || correct(w, &factor, h));
                if !all_finite(&w.dv) || !all_finite(&w.impulses) {
                    return Err(nonfinite(Stage::SolveConstraints, "contact forces"));
                }
            }
            times.time(Stage::Integrate, || integrate(body, s, w, h, inputs.t_next));
            if !all_finite(&s.positions) || !all_finite(&s.velocities) {
                return Err(nonfinite(Stage::Integrate, "positions or velocities"));
            }
        }
        state.time = inputs.t_next;
        state.step = step;
        Ok(self.step_stats(times, start))
    }

    fn step_stats(&self, stage_ms: StageTimes, start: Instant) -> StepStats {
        let bodies: Vec<BodyStepStats> = self
            .model
            .bodies
            .iter()
            .zip(&self.state.bodies)
            .zip(&self.workspace)
            .map(|((b, s), w)| BodyStepStats {
                cg_iterations: w.solve.iterations,
                cg_rel_residual: w.solve.rel_residual,
                kinetic_energy: s.kinetic_energy(b),
                elastic_energy: w.elastic_energy,
                factor_age: w.refactorizer.as_ref().map(|r| r.age(self.state.step)),
                factorizations: w.refactorizer.as_ref().map_or(0, |r| r.completed),
                contacts: w.contacts.len(),
                pgs_iterations: if w.impulses.is_empty() { 0 } else { w.pgs.iterations },
                pgs_error: if w.impulses.is_empty() { 0.0 } else { w.pgs.error },
                total_normal_force: w.impulses.iter().take(3 * w.contacts.len()).step_by(3).sum(),
                max_penetration: max_penetration(s, w, &self.model.obstacles, self.state.time),
            })
            .collect();
        StepStats {
            step: self.state.step,
            time: self.state.time,
            step_ms: start.elapsed().as_secs_f64() * 1e3,
            stage_ms,
            cg_iterations: bodies.iter().map(|b| b.cg_iterations).sum(),
            cg_rel_residual: bodies.iter().map(|b| b.cg_rel_residual).fold(0.0, f64::max),
            kinetic_energy: bodies.iter().map(|b| b.kinetic_energy).sum(),
            elastic_energy: bodies.iter().map(|b| b.elastic_energy).sum(),
            contacts: bodies.iter().map(|b| b.contacts).sum(),
            pgs_iterations: bodies.iter().map(|b| b.pgs_iterations).max().unwrap_or(0),
            total_normal_force: bodies.iter().map(|b| b.total_normal_force).sum(),
            max_penetration: bodies.iter().map(|b| b.max_penetration).fold(0.0, f64::max),
            bodies,
        }
    }
}

/// Stage `factorize` for one body: symbolic analysis on first use, then the
/// refresh policy of [`Refactorizer::refresh`]. Contact needs `A⁻¹` for
/// `W`: without the LDLᵀ preconditioner the factor is refreshed every step.
fn refresh_factor(
    w: &mut BodyWorkspace,
    step: usize,
    settings: &ImplicitEulerSettings,
    contact: bool,
) -> Result<(), ferrofem_linalg::LinalgError> {
    if w.refactorizer.is_none() {
        w.refactorizer = Some(Refactorizer::new(&w.system, settings.ordering)?);
    }
    let refresh = match settings.preconditioner {
        PreconditionerKind::Ldlt => settings.refresh,
        _ if contact => Refresh { every: 1, asynchronous: false },
        _ => return Ok(()),
    };
    let r = w.refactorizer.as_mut().expect("created above");
    r.refresh(step, &w.system, refresh)
}

/// Deepest penetration of a body's contact vertices into their obstacles
/// at time `t` (m, ≥ 0).
fn max_penetration(s: &BodyState, w: &BodyWorkspace, obstacles: &[Obstacle], t: f64) -> f64 {
    w.contacts
        .iter()
        .map(|c| {
            let p = nalgebra::Vector3::new(
                s.positions[3 * c.vertex],
                s.positions[3 * c.vertex + 1],
                s.positions[3 * c.vertex + 2],
            );
            (-obstacles[c.obstacle].signed_distance(&p, t).0).max(0.0)
        })
        .fold(0.0, f64::max)
}
