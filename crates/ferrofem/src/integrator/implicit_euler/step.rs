//! The implicit-Euler integrator's step (zeng2022 §3, dahl2019): per body
//! `assemble → factorize → free_motion`, then over the world
//! `assemble_constraints → build_delassus → solve_constraints`, then per
//! body `correct → integrate`.

use super::assemble::{assemble, StepInputs};
use super::correct::{apply, correct};
use super::factorize::factorize;
use super::free_motion::free_motion;
use super::integrate::integrate;
use super::BodyWorkspace;
use crate::collision::Contacts;
use crate::collision::{ImplicitResolution, Resolution, Update};
use crate::constraint::Compliance;
use crate::constraint_stack::{
    build_delassus, resolve_recursively, solve_constraints, ConstraintSpace, Motion, WForms,
};
use crate::device::DeviceError;
use crate::integrator::ImplicitEulerSettings;
use crate::solver::ConstraintSolver;
use crate::stats::{BodyStepStats, Stage, StageTimes};
use crate::{Model, SimError, State};
use ferrofem_linalg::Precision;

/// Linearized implicit Euler with constraint-based contact: its settings
/// and one workspace per body.
#[derive(Debug)]
pub struct ImplicitEuler {
    /// PCG, preconditioner and polar settings.
    pub settings: ImplicitEulerSettings,
    bodies: Vec<BodyWorkspace>,
    /// Each body's factor as its compliance, this step (kept to reuse its storage).
    compliances: Vec<Option<Compliance>>,
}

impl ImplicitEuler {
    /// Workspaces sized for the model's bodies; membranes are refused.
    pub fn new(model: &Model, settings: ImplicitEulerSettings) -> Result<ImplicitEuler, SimError> {
        let bodies = model
            .bodies
            .iter()
            .map(|b| match b.tet_mesh() {
                Some(mesh) => Ok(BodyWorkspace::new(b, mesh)),
                None => Err(SimError::Body {
                    body: b.name.clone(),
                    message: "a membrane needs simulation.integrator = \"local-global\"".into(),
                }),
            })
            .collect::<Result<_, _>>()?;
        Ok(ImplicitEuler { settings, bodies, compliances: Vec::new() })
    }

    /// Per-body workspace (matrices and scratch of the last step).
    pub fn workspace(&self, body: usize) -> &BodyWorkspace {
        &self.bodies[body]
    }

    /// One step of the world.
    pub fn step(
        &mut self,
        model: &Model,
        state: &mut State,
        contacts: &Contacts,
        space: &mut ConstraintSpace,
        times: &mut StageTimes,
    ) -> Result<(), SimError> {
        let step = state.step + 1;
        let (h, t) = (model.time_step, state.time);
        let inputs = StepInputs { h, t_next: t + h, gravity: model.gravity, polar: self.settings.polar };
        let settings = self.settings;
        for (b, body) in model.bodies.iter().enumerate() {
            let (s, w) = (&mut state.bodies[b], &mut self.bodies[b]);
            times.time(Stage::Assemble, || rayon::scope(|_| assemble(body, s, w, &inputs)));
            body.guard(step, Stage::Assemble, "right-hand side", &w.rhs)?;
            body.guard(step, Stage::Assemble, "system matrix", &w.system.values)?;
            let constrained = contacts.involve(b) || model.holds(b);
            times
                .time(Stage::Factorize, || factorize(w, body, &s.rotations, step, &settings, constrained))
                .map_err(|source| SimError::Factorization { step, body: body.name.clone(), source })?;
            // The stages run on a rayon worker, as the local-global step
            // does (`Integrator::step`): their parallel loops (PCG's
            // products and sweeps, the supernodal solves) split among the
            // workers instead of each waking the pool from outside. Not
            // `factorize`: its synchronous refresh waits on a background
            // thread whose factorization needs the pool.
            let solve = || rayon::scope(|_| free_motion(body, s, w, h, model.gravity, &settings));
            times.time(Stage::FreeMotion, solve).map_err(|source| SimError::Solver {
                step,
                body: body.name.clone(),
                stage: Stage::FreeMotion,
                source,
            })?;
            body.guard(step, Stage::FreeMotion, "velocity change", &w.dv)?;
        }
        times.time(Stage::AssembleConstraints, || space.assemble(model, contacts, state));
        if !space.problem.groups.is_empty() {
            rayon::scope(|_| self.resolve_constraints(model, state, space, times, step))?;
        }
        for (b, body) in model.bodies.iter().enumerate() {
            let s = &mut state.bodies[b];
            times.time(Stage::Integrate, || integrate(body, s, &self.bodies[b], h, inputs.t_next));
            body.guard(step, Stage::Integrate, "positions", &s.positions)?;
            body.guard(step, Stage::Integrate, "velocities", &s.velocities)?;
        }
        Ok(())
    }

    /// `build_delassus → solve_constraints → correct` with each body's
    /// factor as its compliance; under implicit resolution the first two
    /// repeat in a recursive corrective motion (zeng-implicit §5–6).
    fn resolve_constraints(
        &mut self,
        model: &Model,
        state: &mut State,
        space: &mut ConstraintSpace,
        times: &mut StageTimes,
        step: usize,
    ) -> Result<(), SimError> {
        self.compliances.clear();
        self.compliances.extend(self.bodies.iter().map(compliance));
        for (w, rows) in self.bodies.iter().zip(&mut space.problem.bodies) {
            let r = w.refactorizer.as_ref();
            let next = r.and_then(|r| r.handover.as_ref().zip(r.factor()));
            rows.delassus.successor = next.map(|(h, f)| h.successor(&f, step));
        }
        let corrected = match model.contact.resolution {
            Resolution::Explicit => self.solve_explicitly(model, state, space, times).map(|_| false),
            Resolution::Implicit(r) => self.resolve_implicitly(model, state, space, times, r),
        }
        .map_err(|source| SimError::Device {
            step,
            body: None,
            stage: Stage::BuildDelassus,
            source,
        })?;
        let first = space.problem.groups.first().map_or(0, |g| g.parts()[0].0);
        model.bodies[first].guard(
            step,
            Stage::SolveConstraints,
            "contact forces",
            &space.problem.impulses,
        )?;
        space.check_violation(model, step)?;
        let h = model.time_step;
        for (b, w) in self.bodies.iter_mut().enumerate() {
            let rows = &mut space.problem.bodies[b];
            if let Some(c) = self.compliances[b].as_ref().filter(|_| !rows.is_empty()) {
                times.time(Stage::Correct, || match corrected {
                    true => apply(w, h),
                    false => correct(w, rows, c, &space.problem.impulses, h),
                });
            }
        }
        Ok(())
    }

    /// Explicit resolution: `build_delassus` once, then
    /// `solve_constraints` on the free motion's velocities.
    fn solve_explicitly(
        &mut self,
        model: &Model,
        state: &mut State,
        space: &mut ConstraintSpace,
        times: &mut StageTimes,
    ) -> Result<(), DeviceError> {
        let (settings, compliances, ws) = (&model.constraint_solver, &self.compliances, &self.bodies);
        let solver = settings.solver(false);
        let forms = match solver {
            ConstraintSolver::NonSmoothNewton(_) => WForms::Assembled,
            ConstraintSolver::Pgs(p) if p.precision == Precision::Double => WForms::MayKeepApart,
            ConstraintSolver::Pgs(_) => WForms::MayLeaveUnbuilt,
        };
        let h = model.time_step;
        times
            .time(Stage::BuildDelassus, || build_delassus(space, compliances, h, settings.delassus, forms))?;
        let State { bodies: states, warm_start, .. } = state;
        let v_free = |b: usize, j: usize| states[b].velocities[j] + ws[b].dv[j];
        times.time(Stage::SolveConstraints, || {
            solve_constraints(space, warm_start, v_free, compliances, model, solver)
        });
        Ok(())
    }

    /// Implicit resolution: the recursive corrective motion, its record
    /// kept in the outcome. Returns whether the corrections are applied
    /// already (the `standard` update computes them on the way).
    fn resolve_implicitly(
        &mut self,
        model: &Model,
        state: &mut State,
        space: &mut ConstraintSpace,
        times: &mut StageTimes,
        r: ImplicitResolution,
    ) -> Result<bool, DeviceError> {
        let ws = &mut self.bodies;
        let mut corrections: Vec<Vec<f64>> =
            ws.iter_mut().map(|w| std::mem::take(&mut w.correction)).collect();
        let State { bodies: states, warm_start, time, .. } = state;
        let motion = Motion {
            start: states.iter().map(|s| s.positions.as_slice()).collect(),
            v_free: |b: usize, j: usize| states[b].velocities[j] + ws[b].dv[j],
            t: *time,
        };
        let solver = model.constraint_solver.solver(false);
        let compliances = &self.compliances;
        let record = resolve_recursively(
            space,
            warm_start,
            compliances,
            model,
            &motion,
            r,
            solver,
            &mut corrections,
            times,
        );
        ws.iter_mut().zip(corrections).for_each(|(w, c)| w.correction = c);
        space.outcome.corrective = Some(record?);
        Ok(r.update == Update::Standard)
    }

    /// A body's figures of the step: PCG, elastic energy, factor.
    pub fn body_stats(&self, b: usize, step: usize) -> BodyStepStats {
        let w = &self.bodies[b];
        BodyStepStats {
            cg_iterations: w.solve.iterations,
            cg_rel_residual: w.solve.rel_residual,
            elastic_energy: w.elastic_energy,
            factor_age: w.refactorizer.as_ref().map(|r| r.age(step)),
            factorizations: w.refactorizer.as_ref().map_or(0, |r| r.completed),
            ..Default::default()
        }
    }
}

/// Body `w`'s compliance for the constraints: its factor (the previous
/// one during a handover), warped when the factor is an old one standing
/// in for the current `A`.
fn compliance(w: &BodyWorkspace) -> Option<Compliance> {
    let r = w.refactorizer.as_ref()?;
    let warp = if r.handover.is_some() { w.handover_warp } else { w.warp };
    let f = r.constraint_factor()?;
    Some(match warp {
        Some(g) => Compliance::WarpedLdlt(f, g),
        None => Compliance::Ldlt(f),
    })
}
