//! The world: model, state and workspace, and the time step as a sequence
//! of named stages.

use std::time::Instant;

use ferrofem_linalg::vector::all_finite;

use crate::body::BodyModel;
use crate::collision::{detect_contacts, detect_pair_contacts, ContactSettings, SurfaceTree};
use crate::integrator::implicit_euler::assemble::{assemble, StepInputs};
use crate::integrator::implicit_euler::constraints::{
    body_impulses, build_delassus, gather_groups, solve_constraints, ConstraintSpace,
};
use crate::integrator::implicit_euler::correct::correct;
use crate::integrator::implicit_euler::factorize::Refactorizer;
use crate::integrator::implicit_euler::free_motion::free_motion;
use crate::integrator::implicit_euler::integrate::integrate;
use crate::integrator::implicit_euler::BodyWorkspace;
use crate::integrator::Refresh;
use crate::integrator::{ImplicitEulerSettings, PreconditionerKind};
use crate::obstacle::{Geometry, Obstacle};
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
        self.kinetic_energy_with(&body.mass)
    }

    /// Kinetic energy `½ vᵀ M v` (J) for lumped vertex masses `mass` (kg).
    pub fn kinetic_energy_with(&self, mass: &[f64]) -> f64 {
        self.velocities
            .chunks_exact(3)
            .zip(mass)
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
    /// Per-body surface BVHs, refitted each step; empty when nothing meets
    /// the bodies' triangles (one body, no self-collision, no mesh obstacle).
    surface_trees: Vec<SurfaceTree>,
    constraints: ConstraintSpace,
}

impl Model {
    /// Whether contact detection needs the bodies' surface triangles: other
    /// bodies, self-collision, or mesh obstacles' vertices meet them.
    pub fn meets_triangles(&self) -> bool {
        self.bodies.len() > 1
            || self.bodies.iter().any(|b| b.self_collision)
            || self.obstacles.iter().any(|o| matches!(o.geometry, Geometry::Mesh(_)))
    }
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
        World {
            model,
            state: State { time: 0.0, step: 0, bodies },
            workspace,
            surface_trees: Vec::new(),
            constraints: ConstraintSpace::default(),
        }
    }

    /// Per-body workspace (matrices and scratch of the last step).
    pub fn workspace(&self, body: usize) -> &BodyWorkspace {
        &self.workspace[body]
    }

    /// The constraint problem of the last step (groups, W, λ).
    pub fn constraints(&self) -> &ConstraintSpace {
        &self.constraints
    }

    /// Advances one time step: `detect_contacts` → per body `assemble` →
    /// `factorize` → `free_motion`; then over the world `build_delassus` →
    /// `solve_constraints` → per body `correct` → `integrate`.
    pub fn step(&mut self) -> Result<StepStats, SimError> {
        let start = Instant::now();
        let step = self.state.step + 1;
        let h = self.model.time_step;
        let t = self.state.time;
        let inputs =
            StepInputs { h, t_next: t + h, gravity: self.model.gravity, polar: self.model.integrator.polar };
        let mut times = StageTimes::default();
        let settings = self.model.integrator;
        let (model, state, ws) = (&self.model, &mut self.state, &mut self.workspace);
        let trees = &mut self.surface_trees;
        let name = |b: usize| model.bodies[b].name.clone();
        let pairs = times.time(Stage::DetectContacts, || {
            let positions: Vec<&[f64]> = state.bodies.iter().map(|s| s.positions.as_slice()).collect();
            if model.meets_triangles() {
                refit_surface_trees(trees, model, &positions);
            }
            for (b, body) in model.bodies.iter().enumerate() {
                let (tree, c) = (trees.get(b), &model.contact);
                ws[b].contacts = detect_contacts(body, positions[b], tree, &model.obstacles, t, c);
            }
            if model.bodies.len() > 1 || model.bodies.iter().any(|b| b.self_collision) {
                detect_pair_contacts(&model.bodies, &positions, trees, &model.contact)
            } else {
                Vec::new()
            }
        });
        for (b, body) in model.bodies.iter().enumerate() {
            let (s, w) = (&mut state.bodies[b], &mut ws[b]);
            let nonfinite = |stage, what| SimError::NonFinite { step, body: name(b), stage, what };
            times.time(Stage::Assemble, || assemble(body, s, w, &inputs));
            if !all_finite(&w.rhs) || !all_finite(&w.system.values) {
                return Err(nonfinite(Stage::Assemble, "system matrix or right-hand side"));
            }
            let constrained = !w.contacts.is_empty()
                || !body.attachments.is_empty()
                || pairs.iter().any(|p| p.a == b || p.b == b);
            if settings.preconditioner == PreconditionerKind::Ldlt || constrained {
                times
                    .time(Stage::Factorize, || refresh_factor(w, step, &settings, constrained))
                    .map_err(|source| SimError::Factorization { step, body: name(b), source })?;
            }
            times.time(Stage::FreeMotion, || free_motion(body, s, w, h, model.gravity, &settings)).map_err(
                |source| SimError::Solver { step, body: name(b), stage: Stage::FreeMotion, source },
            )?;
            if !all_finite(&w.dv) {
                return Err(nonfinite(Stage::FreeMotion, "velocity change"));
            }
            w.contact_forces.iter_mut().for_each(|f| *f = 0.0);
            w.constraint_rows.clear();
        }
        let space = &mut self.constraints;
        space.groups = gather_groups(model, ws, &pairs, t, &state.bodies);
        space.impulses.clear();
        if !space.groups.is_empty() {
            let factors: Vec<_> =
                ws.iter().map(|w| w.refactorizer.as_ref().and_then(|r| r.factor())).collect();
            times.time(Stage::BuildDelassus, || {
                build_delassus(space, ws, &factors, h, model.contact.delassus)
            });
            times.time(Stage::SolveConstraints, || {
                solve_constraints(space, &state.bodies, ws, &factors, h, &model.contact)
            });
            if !all_finite(&space.impulses) {
                let b = space.groups.first().map_or(0, |g| g.parts[0].0);
                return Err(SimError::NonFinite {
                    step,
                    body: name(b),
                    stage: Stage::SolveConstraints,
                    what: "contact forces",
                });
            }
            let limit = model.contact.alarm_distance.max(1e-6);
            if space.violation > limit {
                return Err(SimError::Constraints {
                    step,
                    sweeps: space.pgs.iterations,
                    violation: space.violation,
                    limit,
                });
            }
            for (b, w) in ws.iter_mut().enumerate() {
                if let Some(f) = factors[b].as_ref().filter(|_| !w.constraint_rows.is_empty()) {
                    let lambda = body_impulses(space, w);
                    times.time(Stage::Correct, || correct(w, f, &lambda, h));
                }
            }
        }
        for (b, body) in model.bodies.iter().enumerate() {
            let (s, w) = (&mut state.bodies[b], &ws[b]);
            times.time(Stage::Integrate, || integrate(body, s, w, h, inputs.t_next));
            if !all_finite(&s.positions) || !all_finite(&s.velocities) {
                return Err(SimError::NonFinite {
                    step,
                    body: name(b),
                    stage: Stage::Integrate,
                    what: "positions or velocities",
                });
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
            .enumerate()
            .map(|(i, ((b, s), w))| BodyStepStats {
                cg_iterations: w.solve.iterations,
                cg_rel_residual: w.solve.rel_residual,
                kinetic_energy: s.kinetic_energy(b),
                elastic_energy: w.elastic_energy,
                factor_age: w.refactorizer.as_ref().map(|r| r.age(self.state.step)),
                factorizations: w.refactorizer.as_ref().map_or(0, |r| r.completed),
                contacts: self.constraints.contacts_of(i),
                pgs_iterations: if w.constraint_rows.is_empty() {
                    0
                } else {
                    self.constraints.pgs.iterations
                },
                pgs_error: if w.constraint_rows.is_empty() { 0.0 } else { self.constraints.pgs.error },
                total_normal_force: self.constraints.normal_force_on(i),
                max_penetration: max_penetration(s, w, &self.model.obstacles, self.state.time),
                delassus: w.delassus,
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
            contacts: self.constraints.contact_count(),
            pgs_iterations: bodies.iter().map(|b| b.pgs_iterations).max().unwrap_or(0),
            total_normal_force: self.constraints.total_normal_force(),
            max_penetration: bodies.iter().map(|b| b.max_penetration).fold(0.0, f64::max),
            constraint_violation: if self.constraints.groups.is_empty() {
                0.0
            } else {
                self.constraints.violation
            },
            isodofs: bodies.iter().filter_map(|b| b.delassus).map(|d| d.isodofs).sum(),
            reused_isodofs: bodies.iter().filter_map(|b| b.delassus).map(|d| d.reused_isodofs).sum(),
            local_global_iterations: 0,
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

/// Builds the bodies' surface BVHs on first use (leaf margin: the alarm
/// distance), then refits them to `positions`.
fn refit_surface_trees(trees: &mut Vec<SurfaceTree>, model: &Model, positions: &[&[f64]]) {
    if trees.is_empty() {
        let margin = model.contact.alarm_distance;
        trees
            .extend(model.bodies.iter().zip(positions).map(|(b, x)| SurfaceTree::new(&b.surface, x, margin)));
    } else {
        trees.iter_mut().zip(positions).for_each(|(tree, x)| tree.refit(x));
    }
}

/// Deepest penetration of a body's contacts at time `t` (m, ≥ 0): a held
/// vertex inside its obstacle, or a mesh obstacle's vertex behind the held
/// triangle point along the contact normal.
fn max_penetration(s: &BodyState, w: &BodyWorkspace, obstacles: &[Obstacle], t: f64) -> f64 {
    w.contacts
        .iter()
        .map(|c| {
            let p = c.point.position(&s.positions);
            let obstacle = &obstacles[c.obstacle];
            let depth = match c.obstacle_vertex {
                None => -obstacle.signed_distance(&p, t).0,
                Some(k) => -nalgebra::Vector3::from(c.frame[0]).dot(&(p - obstacle.vertex_at(k, t))),
            };
            depth.max(0.0)
        })
        .fold(0.0, f64::max)
}
