//! The world: one model, one state, the integrator-neutral constraint
//! stack and the integrator, and the time step as a short sequence of
//! named stages: detect contacts → the integrator's step → stats.

use std::time::Instant;

use crate::collision::{detect_contacts, penetration, Contacts, OnViolation, Penetrated, SurfaceTree};
use crate::constraint_stack::ConstraintSpace;
use crate::integrator::{ImplicitEuler, Integrator, LocalGlobal};
use crate::solver::SolverMethod;
use crate::state::{BodyState, State};
use crate::stats::{BodyStepStats, CableStepStats, NeedleStepStats, Stage, StageTimes, StepStats};
use crate::{Model, SimError};

/// Model, state, constraint stack and integrator of a simulation.
#[derive(Debug)]
pub struct World {
    /// What the scene defines.
    pub model: Model,
    /// Positions, velocities, time and warm starts.
    pub state: State,
    /// The integrator and its workspace.
    pub integrator: Integrator,
    /// Per-body surface BVHs, refitted each step; empty when nothing meets
    /// the bodies' triangles (one body, no self-collision, no mesh obstacle).
    surface_trees: Vec<SurfaceTree>,
    contacts: Contacts,
    constraints: ConstraintSpace,
}

impl World {
    /// A world at rest in the bodies' rest configuration, advanced by
    /// `integrator` (built for this model by [`World::with_implicit_euler`] or
    /// [`World::with_local_global`]).
    pub fn new(model: Model, integrator: Integrator) -> World {
        let bodies = model.bodies.iter().map(BodyState::at_rest).collect();
        let needles = vec![Default::default(); model.needles.len()];
        World {
            constraints: ConstraintSpace::new(&model),
            model,
            state: State { bodies, needles, ..Default::default() },
            integrator,
            surface_trees: Vec::new(),
            contacts: Contacts::default(),
        }
    }

    /// A world advanced by linearized implicit Euler (zeng2022).
    pub fn with_implicit_euler(
        model: Model,
        settings: crate::integrator::ImplicitEulerSettings,
    ) -> Result<World, SimError> {
        let ie = ImplicitEuler::new(&model, settings)?;
        Ok(World::new(model, Integrator::ImplicitEuler(ie)))
    }

    /// A world advanced by the local-global integrator (zeng2025): each
    /// body's constant global matrix is assembled and factorized here.
    pub fn with_local_global(
        model: Model,
        settings: crate::integrator::local_global::LocalGlobalSettings,
    ) -> Result<World, SimError> {
        let lg = LocalGlobal::new(&model, settings)?;
        Ok(World::new(model, Integrator::LocalGlobal(lg)))
    }

    /// Advances one time step: `detect_contacts` for all bodies, then the
    /// integrator's step (its stages in [`crate::integrator`]), then stats.
    pub fn step(&mut self) -> Result<StepStats, SimError> {
        self.step_observed(|_, _, _| ())
    }

    /// As [`Self::step`], calling `observe(body, iteration, q)` with the
    /// iterates of an iterative integrator: under local-global once with
    /// the starting iterate (iteration 0: `q̃` with pins on their targets)
    /// and after every global step (1…k), to measure convergence.
    pub fn step_observed(
        &mut self,
        observe: impl FnMut(usize, usize, &[f64]) + Send,
    ) -> Result<StepStats, SimError> {
        let start = Instant::now();
        let counted = self.device_counters();
        let mut times = StageTimes::default();
        let (model, state) = (&self.model, &mut self.state);
        let (trees, contacts) = (&mut self.surface_trees, &mut self.contacts);
        times.time(Stage::DetectContacts, || {
            detect_contacts(model, &state.bodies, trees, state.time, contacts)
        });
        let space = &mut self.constraints;
        self.integrator.step(model, state, &self.contacts, space, &mut times, observe)?;
        if !space.problem.groups.is_empty() {
            space.measure_end_violation(model, &state.bodies, state.time);
        }
        advance_needles(model, state, space);
        state.time += model.time_step;
        state.step += 1;
        let figures = Instant::now();
        let mut stats = self.step_stats(times);
        stats.stage_ms.0[Stage::Figures as usize] = figures.elapsed().as_secs_f64() * 1e3;
        stats.step_ms = start.elapsed().as_secs_f64() * 1e3;
        stats.device = counted.map(|before| self.device_stats(before));
        self.guard_energies(&stats)?;
        match (&stats.violation, self.model.contact.on_violation) {
            (Some(cause), OnViolation::Stop) => {
                Err(SimError::Violation { step: stats.step, cause: cause.clone() })
            }
            _ => Ok(stats),
        }
    }

    /// The backend's counters when the world runs on a device.
    fn device_counters(&self) -> Option<crate::device::DeviceCounters> {
        let backend = self.model.backend.as_ref().filter(|_| self.model.device == crate::Device::Gpu)?;
        Some(backend.counters())
    }

    /// The step's device figures: the counters since `before`, and whether
    /// it ran resident frames.
    fn device_stats(&self, before: crate::device::DeviceCounters) -> crate::stats::DeviceStepStats {
        let counters = self.device_counters().unwrap_or_default().since(before);
        let (resident_frame, svd_fallbacks) =
            self.local_global().map_or((false, 0), |lg| lg.resident_frames_run());
        crate::stats::DeviceStepStats { counters, resident_frame, svd_fallbacks }
    }

    /// A body whose kinetic energy overflowed to infinity (its velocities
    /// finite but beyond any physical scale) blew up: the error names the
    /// step and the body. (The elastic energy is not guarded: a
    /// Neo-Hookean element turned inside out has an infinite one, a
    /// violation the step reports, not a blow-up.)
    fn guard_energies(&self, stats: &StepStats) -> Result<(), SimError> {
        for (body, s) in self.model.bodies.iter().zip(&stats.bodies) {
            body.guard(stats.step, Stage::Integrate, "kinetic energy", &[s.kinetic_energy])?;
        }
        Ok(())
    }

    /// The step's contacts (detected at its start).
    pub fn contacts(&self) -> &Contacts {
        &self.contacts
    }

    /// The constraint problem of the last step (groups, rows, W, λ).
    pub fn constraints(&self) -> &ConstraintSpace {
        &self.constraints
    }

    /// The implicit-Euler integrator, when it runs this world.
    pub fn implicit_euler(&self) -> Option<&ImplicitEuler> {
        match &self.integrator {
            Integrator::ImplicitEuler(ie) => Some(ie),
            Integrator::LocalGlobal(_) => None,
        }
    }

    /// The implicit-Euler integrator, mutable (to change its settings between steps).
    pub fn implicit_euler_mut(&mut self) -> Option<&mut ImplicitEuler> {
        match &mut self.integrator {
            Integrator::ImplicitEuler(ie) => Some(ie),
            Integrator::LocalGlobal(_) => None,
        }
    }

    /// The local-global integrator, when it runs this world.
    pub fn local_global(&self) -> Option<&LocalGlobal> {
        match &self.integrator {
            Integrator::LocalGlobal(lg) => Some(lg),
            Integrator::ImplicitEuler(_) => None,
        }
    }

    /// The step's figures (stage `figures`; `step_ms` is set after them,
    /// the wall time of the whole step).
    fn step_stats(&self, stage_ms: StageTimes) -> StepStats {
        let (model, state, space) = (&self.model, &self.state, &self.constraints);
        let bodies: Vec<BodyStepStats> = (0..model.bodies.len()).map(|i| self.body_stats(i)).collect();
        let violation = self.violation(&bodies);
        let newton = Some(space.outcome.solve)
            .filter(|s| !space.problem.groups.is_empty() && s.method == SolverMethod::NonSmoothNewton);
        StepStats {
            step: state.step,
            time: state.time,
            step_ms: 0.0,
            stage_ms,
            cg_iterations: bodies.iter().map(|b| b.cg_iterations).sum(),
            cg_rel_residual: bodies.iter().map(|b| b.cg_rel_residual).fold(0.0, f64::max),
            kinetic_energy: bodies.iter().map(|b| b.kinetic_energy).sum(),
            elastic_energy: bodies.iter().map(|b| b.elastic_energy).sum(),
            contacts: space.problem.contact_count(),
            pgs_iterations: bodies.iter().map(|b| b.pgs_iterations).max().unwrap_or(0),
            constraint_solver: if space.problem.groups.is_empty() {
                ""
            } else {
                space.outcome.solve.method.name()
            },
            newton_iterations: newton.map_or(0, |s| s.iterations),
            cr_iterations: newton.map_or(0, |s| s.linear_iterations),
            ncp_residual: newton.map_or(0.0, |s| s.residual),
            total_normal_force: space.problem.total_normal_force(),
            max_penetration: bodies.iter().map(|b| b.max_penetration).fold(0.0, f64::max),
            inverted_elements: bodies.iter().map(|b| b.inverted_elements).sum(),
            violation,
            constraint_violation: space.outcome.violation,
            end_violation: space.outcome.end_violation,
            corrective: space.outcome.corrective,
            isodofs: bodies.iter().filter_map(|b| b.delassus).map(|d| d.isodofs).sum(),
            reused_isodofs: bodies.iter().filter_map(|b| b.delassus).map(|d| d.reused_isodofs).sum(),
            local_global_iterations: self.integrator.iterations(),
            local_global_residual: self
                .local_global()
                .map(|lg| lg.last_iterations().1)
                .filter(|r| !r.is_nan()),
            local_global_converged: self
                .local_global()
                .and_then(|lg| lg.settings.tolerance.map(|t| lg.last_iterations().1 <= t)),
            constraint_converged: (!space.problem.groups.is_empty()).then_some(space.outcome.solve.converged),
            bodies,
            needles: model.needles.iter().zip(&state.needles).map(needle_stats).collect(),
            cables: model.cables.iter().enumerate().map(|c| cable_stats(c, state, space)).collect(),
            device: None,
        }
    }

    /// The step's violation, worded: the first body whose deepest
    /// penetration exceeds the limit, that has inverted elements, or whose
    /// free-motion solve ended no better than it started.
    fn violation(&self, bodies: &[BodyStepStats]) -> Option<String> {
        let limit = self.model.contact.penetration_limit();
        let rows = |i: usize| self.constraints.problem.bodies.get(i).is_some_and(|r| !r.is_empty());
        bodies.iter().zip(&self.model.bodies).enumerate().find_map(|(i, (b, body))| {
            let deep = b.deepest.filter(|p| p.depth > limit).map(|p| {
                let into = match p.into {
                    Penetrated::Obstacle(o) => format!("obstacle `{}`", self.model.obstacles[o].name),
                    Penetrated::Body(k) => format!("body `{}`", self.model.bodies[k].name),
                };
                format!(
                    "body `{}`: vertex {} is {:.3e} m inside {into} (limit {limit:.3e} m, [contact] max_penetration)",
                    body.name, p.vertex, p.depth
                )
            });
            let inverted = (b.inverted_elements > 0)
                .then(|| format!("body `{}`: {} inverted elements", body.name, b.inverted_elements));
            deep.or(inverted)
                .or_else(|| unconverged(&body.name, b))
                .or_else(|| stalled_local_global(&body.name, b))
                .or_else(|| rows(i).then(|| self.stalled_constraints(&body.name)).flatten())
        })
    }

    /// A constraint solve that stopped at its cap with a last relative
    /// change of λ of 1 or more (or NaN): the impulses had not begun to
    /// settle, so the step's forces are a guess. A cap met with a small
    /// change is the early stop the presets are tuned for, not a violation.
    fn stalled_constraints(&self, name: &str) -> Option<String> {
        let s = &self.constraints.outcome.solve;
        let stalled = !s.converged && s.iterations > 1 && (s.error >= 1.0 || s.error.is_nan());
        stalled.then(|| {
            format!(
                "body `{name}`, stage solve_constraints: the constraint solve stopped after {} {} with the impulses \
                 still changing by {:.3} of their size (raise its max_iterations, or shorten the time step)",
                s.iterations,
                s.method.iterations_name(),
                s.error
            )
        })
    }

    /// Body `i`'s figures: the integrator's, then energy and constraints.
    fn body_stats(&self, i: usize) -> BodyStepStats {
        let (body, s, space) = (&self.model.bodies[i], &self.state.bodies[i], &self.constraints);
        let rows = space.problem.bodies.get(i).filter(|r| !r.is_empty());
        let all: Vec<&[f64]> = self.state.bodies.iter().map(|s| s.positions.as_slice()).collect();
        let (obstacles, t) = (&self.model.obstacles, self.state.time);
        let deepest = penetration::deepest(i, body, &all, obstacles, &self.contacts.pairs, t);
        BodyStepStats {
            kinetic_energy: s.kinetic_energy(body),
            contacts: space.problem.contacts_of(i),
            pgs_iterations: rows
                .filter(|_| space.outcome.solve.method == SolverMethod::Pgs)
                .map_or(0, |_| space.outcome.solve.iterations),
            pgs_error: rows.map_or(0.0, |_| space.outcome.solve.error),
            total_normal_force: space.problem.normal_force_on(i),
            max_penetration: deepest.map_or(0.0, |p| p.depth),
            deepest,
            delassus: rows.and_then(|r| r.delassus.record),
            ..self.integrator.body_stats(&self.model, &self.state, i)
        }
    }
}

/// A free-motion PCG that ended at a relative residual of 1 or more (or
/// NaN): the solve left the step worse than its initial guess, so the step
/// is not the implicit-Euler step it claims to be (zeng2022 §3.1).
fn unconverged(name: &str, b: &BodyStepStats) -> Option<String> {
    (b.cg_iterations > 0 && (b.cg_rel_residual >= 1.0 || b.cg_rel_residual.is_nan())).then(|| {
        format!(
            "body `{name}`, stage free_motion: PCG ended at relative residual {:.3} after {} iterations, \
             no better than its start (raise implicit_euler.max_iterations, or use preconditioner = \"ldlt\")",
            b.cg_rel_residual, b.cg_iterations
        )
    })
}

/// Local-global iterations that ended no better than the step's first
/// (relative fixed-point residual of 1 or more, or NaN, after two or more
/// iterations): the step is not the minimizer it claims (zeng2025 §4).
fn stalled_local_global(name: &str, b: &BodyStepStats) -> Option<String> {
    let r = b.local_global_residual?;
    (b.local_global_iterations > 1 && (r >= 1.0 || r.is_nan())).then(|| {
        format!(
            "body `{name}`, stage local_step: local-global ended at relative residual {r:.3} after {} iterations, \
             no better than its first (raise local_global.iterations, or shorten the time step)",
            b.local_global_iterations
        )
    })
}

/// After a step: each needle's force, puncture and points of tissue
/// ([`crate::needle::Needle::advance`]) at the bodies' end positions.
fn advance_needles(model: &Model, state: &mut State, space: &ConstraintSpace) {
    let (t, problem) = (state.time + model.time_step, &space.problem);
    for (n, (needle, s)) in model.needles.iter().zip(&mut state.needles).enumerate() {
        let (body, x) = (&model.bodies[needle.body], &state.bodies[needle.body].positions);
        let reaction = crate::constraint::needle_reaction(n, &problem.groups, &problem.impulses);
        needle.advance(s, &body.tets, x, t, reaction);
    }
}

/// Cable `c`'s figures at the end of the step: its length and target at
/// the state's time, its tension from the step's forces.
fn cable_stats(
    (c, cable): (usize, &crate::cable::Cable),
    state: &State,
    space: &ConstraintSpace,
) -> CableStepStats {
    let p = &space.problem;
    CableStepStats {
        name: cable.name.clone(),
        length: cable.length(&state.bodies[cable.body].positions, state.time),
        target: cable.target(state.time),
        tension: crate::constraint::cable_tension(c, &p.groups, &p.impulses),
    }
}

/// A needle's figures from its state.
fn needle_stats((needle, s): (&crate::needle::Needle, &crate::needle::NeedleState)) -> NeedleStepStats {
    NeedleStepStats {
        name: needle.name.clone(),
        force: s.force,
        tip_force: s.tip_force,
        punctured: s.punctured,
        shaft_points: s.points.len(),
    }
}
