//! The local-global integrator and its step (zeng2025
//! Algorithm 2–4): `predict` → `assemble_constraints` → `build_delassus`
//! → k × { `local_step` → `global_step` → `solve_constraints` → `correct` }
//! → `integrate`, each a named stage; one body's workspace and its per-body
//! stages are in `workspace.rs`; the frames that run whole on the
//! device in `step/resident.rs`.

mod resident;

use super::anderson::Anderson;
use super::constrained::{self, add_constraint_forces};
use super::energy::elastic_energy;
use super::energy::StepTarget;
use super::global::{pinned_global_matrix, GlobalSolver, GlobalStepMethod};
use super::lbfgs::Lbfgs;
use super::local::{assemble_rhs, constant_rhs, local_step, Projections};
use super::terms::Pin;
use super::workspace::{
    folded_correction, forward_half, global_step, pins, predict, state_weights, Rotations, Workspace,
};
use super::{Acceleration, LocalGlobalSettings};
use crate::body::Body;
use crate::collision::Contacts;
use crate::constraint::Compliance;
use crate::constraint_stack::device::{device_rows, DeviceConstraintSolver};
use crate::constraint_stack::{
    build_delassus, build_delassus_factored, keep_warm_start, ConstraintSpace, WForms,
};
use crate::device::DeviceError;
use crate::solver::{ConstraintSolve, ConstraintSolver};
use crate::stats::{BodyStepStats, Stage, StageTimes};
use crate::{Device, Model, SimError, State};

/// The local-global integrator (zeng2025 §3.3–4): its settings and one
/// workspace per body.
#[derive(Debug)]
pub struct LocalGlobal {
    /// Iterations and global-step method.
    pub settings: LocalGlobalSettings,
    bodies: Vec<Workspace>,
    /// Each body's compliance (`A⁻¹` by its sparse inverse or factor).
    compliances: Vec<Option<Compliance>>,
    /// `λᵏ` of the iteration (scratch of the correction).
    previous_impulses: Vec<f64>,
    /// Iterations of the last step and the relative residual it reached
    /// (`NaN` when neither acceleration nor a tolerance asked for it).
    last: (usize, f64),
    /// Whether the scene named `lbfgs` itself (not through `auto`): `auto`
    /// runs plain iterations on a step that gains constraints between
    /// steps (a grab), explicit L-BFGS refuses them.
    explicit_lbfgs: bool,
    /// The GPU adapter the global steps run on (`device = "gpu"`).
    device_adapter: Option<String>,
    /// The non-smooth Newton solve on the GPU (`device = "gpu"`), made
    /// by the first step with constraints.
    constraint_device: Option<DeviceConstraintSolver>,
    /// Whether the last step ran as resident frames on the device.
    resident: bool,
    /// The rows of this step's constrained iterations when they run as
    /// one frame on the device (decided before `W`, which then goes to
    /// that frame), and whether the device builds its `W`.
    frame_rows: Option<Box<crate::device::DeviceRows>>,
    device_delassus: bool,
}

/// Why constraints cannot run on a Jacobi global step.
const NEEDS_COMPLETE_GLOBAL_STEP: &str =
    "contact and attachments need a complete global step: local_global.global_step = \"sparse-inverse\" or \"triangular\"";

impl LocalGlobal {
    /// Sets pin weights, assembles and factorizes each body's `A_s` (and
    /// builds `S` for the sparse-inverse method, `auto` settled per body by
    /// [`GlobalStepMethod::settle`] and the factor's bytes): the
    /// precomputation of zeng2025 Algorithm 2.
    pub fn new(model: &Model, settings: LocalGlobalSettings) -> Result<LocalGlobal, SimError> {
        let mut settings = settings;
        let explicit_lbfgs = settings.acceleration == Acceleration::Lbfgs;
        settings.acceleration = settings.acceleration.resolve(model.constrained());
        let needs_s = super::global::reads_s(model.device, model.constraint_solver.delassus);
        settings.global_step = settings
            .global_step
            .settle(needs_s, settings.precision)
            .map_err(|why| SimError::Input(format!("local_global.precision: {why}")))?;
        let (h, s) = (model.time_step, settings);
        let mut bodies = Vec::with_capacity(model.bodies.len());
        let mut device_adapter = None;
        for body in &model.bodies {
            let mut pins = pins(body);
            let matrix = pinned_global_matrix(body, &mut pins, h, s.pin_weight);
            let mut global =
                GlobalSolver::new(matrix, s.global_step, s.ordering, s.precision).map_err(|e| {
                    SimError::Body { body: body.name.clone(), message: format!("global matrix: {e}") }
                })?;
            let mut projections = Projections::new(body);
            if model.device == Device::Gpu {
                projections.keep_tet_targets();
                let adapter = model
                    .gpu()
                    .and_then(|backend| global.to_device(backend, body, &projections, h, s.polar_sweeps))
                    .map_err(|e| device_failure(0, body, Stage::GlobalStep, e))?;
                device_adapter.get_or_insert(adapter);
            }
            let n = body.dofs();
            let weights = state_weights(body, h);
            let state =
                std::array::from_fn(|_| vec![0.0; if s.tracks_residual() { weights.len() } else { 0 }]);
            let anderson = (s.acceleration == Acceleration::Anderson)
                .then(|| Anderson::new(s.anderson_window, weights.clone()));
            bodies.push(Workspace {
                pins,
                global,
                projections,
                predicted: vec![0.0; n],
                rhs: vec![0.0; n],
                x: vec![0.0; n],
                next: vec![0.0; n],
                previous: vec![0.0; n],
                omega: 1.0,
                correction: [Vec::new(), Vec::new()],
                forward: Vec::new(),
                folded: false,
                state,
                weights,
                first_residual: 0.0,
                last_residual: (f64::NAN, 0),
                anderson,
                rotations: Rotations::Cold,
                device_fallbacks: 0,
                lbfgs: (s.acceleration == Acceleration::Lbfgs)
                    .then(|| Lbfgs::new(s.lbfgs_window, body, s.polar_sweeps)),
            });
        }
        Ok(LocalGlobal {
            settings,
            bodies,
            compliances: Vec::new(),
            previous_impulses: Vec::new(),
            last: (0, f64::NAN),
            explicit_lbfgs,
            device_adapter,
            constraint_device: None,
            resident: false,
            frame_rows: None,
            device_delassus: false,
        })
    }

    /// The GPU adapter the global steps run on, when `device = "gpu"`.
    pub fn device_adapter(&self) -> Option<&str> {
        self.device_adapter.as_deref()
    }

    /// Whether the last step ran as resident device frames, and the tets
    /// its frames counted where the CPU takes an SVD.
    pub fn resident_frames_run(&self) -> (bool, u64) {
        let fallbacks = self.bodies.iter().map(|w| w.device_fallbacks).sum();
        (self.resident, if self.resident { fallbacks } else { 0 })
    }

    /// The global solver of a body (its `A_s`, factor and sparse inverse).
    pub fn global_solver(&self, body: usize) -> &GlobalSolver {
        &self.bodies[body].global
    }

    /// Points body `b`'s pins at the targets `kinematic` now names (a
    /// controller moved them between steps); weights and `A` stay.
    pub fn retarget(&mut self, b: usize, kinematic: &[Option<crate::body::Kinematic>]) {
        for pin in &mut self.bodies[b].pins {
            if let Some(k) = &kinematic[pin.vertex] {
                pin.motion = k.clone();
            }
        }
    }

    /// Whether bilateral constraints can be added between steps: the
    /// constraint path needs a complete global step and no L-BFGS
    /// (which minimizes the unconstrained energy); the reason otherwise.
    pub fn refuses_constraints(&self) -> Option<&'static str> {
        if self.explicit_lbfgs {
            return Some("local_global.acceleration = \"lbfgs\" minimizes the unconstrained step energy; use \"anderson\" or \"none\"");
        }
        self.bodies.iter().any(|w| w.global.compliance().is_none()).then_some(NEEDS_COMPLETE_GLOBAL_STEP)
    }

    /// The positional pins of a body, with their weights (N/m).
    pub fn pins(&self, body: usize) -> &[Pin] {
        &self.bodies[body].pins
    }

    /// The prediction `q̃` of the last step of a body.
    pub fn predicted(&self, body: usize) -> &[f64] {
        &self.bodies[body].predicted
    }

    /// One step of the world (zeng2025 Algorithm 3–4): `predict`, the
    /// constraint rows and `W` once, then k × { `local_step` →
    /// `global_step` → `solve_constraints` → `correct` } over all bodies,
    /// then `integrate`. Calls `observe(body, iteration, q)` after every
    /// iteration (1…k) and once with the starting iterate (0: `q̃` with
    /// pins on their targets).
    pub fn step(
        &mut self,
        model: &Model,
        state: &mut State,
        contacts: &Contacts,
        space: &mut ConstraintSpace,
        times: &mut StageTimes,
        mut observe: impl FnMut(usize, usize, &[f64]),
    ) -> Result<(), SimError> {
        let (step, t_next) = (state.step + 1, state.time + model.time_step);
        self.predict_all(model, state, &mut observe);
        times.time(Stage::AssembleConstraints, || space.assemble(model, contacts, state));
        let constrained = self.begin_constraints(model, state, space, times)?;
        let mut total = ConstraintSolve::default();
        let quasi_newton = self.settings.acceleration == Acceleration::Lbfgs && !constrained;
        if quasi_newton {
            self.quasi_newton(model, times, step, t_next, &mut observe)?;
        }
        let iterations = if quasi_newton { 0 } else { self.settings.iterations };
        let solver = model.constraint_solver.solver(true);
        if iterations > 0 {
            self.last = (iterations, f64::NAN);
        }
        self.resident = self.resident_frames(iterations) && (!constrained || self.frame_rows.is_some());
        match (self.resident, constrained) {
            (true, false) => self.device_frames(model, times, step, t_next, &mut observe)?,
            (true, true) => self.contact_frame(model, state, space, times, &mut total, &mut observe)?,
            (false, _) => {}
        }
        let iterations = if self.resident { 0 } else { iterations };
        for k in 0..iterations {
            self.local_steps(model, space, times, k, t_next);
            let at = Iteration { step, k, iterations, constrained, solver };
            self.global_steps_and_constraints(model, state, space, times, at, &mut total)?;
            self.bodies.iter().enumerate().for_each(|(b, w)| observe(b, k + 1, &w.x));
            if self.settings.tracks_residual() && self.converged(k, times) {
                break;
            }
        }
        if constrained {
            self.finish_constraints(model, state, space, total, step)?;
        }
        integrate(&self.bodies, state, model.time_step, times);
        Ok(())
    }

    /// Stage `predict` of every body: `q̃` and the starting iterate, each
    /// observed as iteration 0.
    fn predict_all(&mut self, model: &Model, state: &State, observe: &mut impl FnMut(usize, usize, &[f64])) {
        let (h, g, t_next) = (model.time_step, model.gravity, state.time + model.time_step);
        for (b, w) in self.bodies.iter_mut().enumerate() {
            let s = &state.bodies[b];
            w.last_residual = (f64::NAN, 0);
            predict(w, &s.positions, &s.velocities, h, g, t_next, self.settings.initial_guess);
            observe(b, 0, &w.x);
        }
    }

    /// Stage `local_step` of iteration `k` for every body (zeng2025 eq.
    /// 5–6): the projections and the right-hand side, plus `h² H_bᵀ λ` on
    /// a constrained body (eq. 23b).
    fn local_steps(
        &mut self,
        model: &Model,
        space: &mut ConstraintSpace,
        times: &mut StageTimes,
        k: usize,
        t: f64,
    ) {
        let (h, settings) = (model.time_step, self.settings);
        for (b, body) in model.bodies.iter().enumerate() {
            let w = &mut self.bodies[b];
            if settings.tracks_residual() {
                w.pack(0);
            }
            let constrained_body = !space.problem.bodies[b].is_empty();
            // On the GPU, `b`'s constant part changes only with the
            // constraint forces: uploaded once per step otherwise.
            let upload = k == 0 || constrained_body;
            w.rotations = Rotations::Host;
            times.time(Stage::LocalStep, || {
                local_step(body, &w.x, &mut w.projections, settings.polar_sweeps);
                match w.global.on_device() {
                    false => assemble_rhs(body, &w.pins, &w.projections, &w.predicted, h, t, &mut w.rhs),
                    true if upload => constant_rhs(body, &w.pins, &w.predicted, h, t, &mut w.rhs),
                    true => {}
                }
            });
            if constrained_body {
                add_constraint_forces(space, b, h, &mut w.rhs);
            }
        }
    }

    /// Stages `global_step` of every body, then `solve_constraints` and
    /// `correct` over the world. From the global steps to the correction
    /// every parallel section of folded bodies is short (the sweeps, the
    /// `W` products): one worker is held for them all instead of woken for
    /// each.
    fn global_steps_and_constraints(
        &mut self,
        model: &Model,
        state: &State,
        space: &mut ConstraintSpace,
        times: &mut StageTimes,
        at: Iteration,
        total: &mut ConstraintSolve,
    ) -> Result<(), SimError> {
        let Iteration { step, k, iterations, constrained, solver } = at;
        let settings = self.settings;
        let folded = self.bodies.iter().all(|w| w.folded);
        let mut rest = || -> Result<(), SimError> {
            for (b, body) in model.bodies.iter().enumerate() {
                let w = &mut self.bodies[b];
                let upload = k == 0 || !space.problem.bodies[b].is_empty();
                times
                    .time(Stage::GlobalStep, || match w.folded {
                        true => {
                            forward_half(w, &space.problem.bodies[b]);
                            Ok(())
                        }
                        false => global_step(w, settings, k, upload),
                    })
                    .map_err(|e| device_failure(step, body, Stage::GlobalStep, e))?;
                body.guard(step, Stage::GlobalStep, "positions", &w.x)?;
            }
            if constrained {
                let fixed = settings.tolerance.is_none().then_some(iterations);
                let solver = iteration_solver(solver, model, k, fixed);
                self.constrain(model, state, space, times, solver, total)?;
                let first = &model.bodies[space.problem.groups[0].parts()[0].0];
                first.guard(step, Stage::SolveConstraints, "contact forces", &space.problem.impulses)?;
            }
            Ok(())
        };
        match folded {
            true => ferrofem_linalg::team::with_team(rest),
            false => rest(),
        }
    }

    /// The iterations as L-BFGS on each body's step energy (stages
    /// `local_step`: the first gradient; `global_step`: direction, line
    /// search and the new gradient); the residual is `‖∇ε‖` relative to
    /// the first iterate's.
    fn quasi_newton(
        &mut self,
        model: &Model,
        times: &mut StageTimes,
        step: usize,
        t_next: f64,
        observe: &mut impl FnMut(usize, usize, &[f64]),
    ) -> Result<(), SimError> {
        let (h, s) = (model.time_step, self.settings);
        let mut worst = 0.0f64;
        let mut done = 0;
        for (b, body) in model.bodies.iter().enumerate() {
            let w = &mut self.bodies[b];
            let Some(q) = w.lbfgs.as_mut() else { continue };
            let at = StepTarget { predicted: &w.predicted, h, t_next, pins: &w.pins };
            times.time(Stage::LocalStep, || q.start(body, &w.x, at));
            let mut rel = 1.0;
            let mut k = 0;
            while k < s.iterations && !s.tolerance.is_some_and(|t| rel <= t) {
                rel = times
                    .time(Stage::GlobalStep, || q.iterate(body, &mut w.global, &mut w.x, at))
                    .map_err(|e| device_failure(step, body, Stage::GlobalStep, e))?;
                k += 1;
                observe(b, k, &w.x);
            }
            w.last_residual = (rel, k);
            worst = worst.max(rel);
            done = done.max(k);
        }
        self.last = (done, worst);
        Ok(())
    }

    /// After iteration `k`: each body's residual, and whether the step has
    /// met its tolerance; otherwise, under acceleration, the next iterate
    /// replaces the image (stage `accelerate`).
    fn converged(&mut self, k: usize, times: &mut StageTimes) -> bool {
        let s = self.settings;
        let residual = times
            .time(Stage::Accelerate, || self.bodies.iter_mut().map(|w| w.residual(k)).fold(0.0, f64::max));
        self.last = (k + 1, residual);
        let done = s.tolerance.is_some_and(|t| residual <= t);
        if !done && k + 1 < s.iterations && s.acceleration == Acceleration::Anderson {
            times.time(Stage::Accelerate, || self.bodies.iter_mut().for_each(|w| w.unpack(2)));
        }
        done
    }

    /// Iterations of the last step and the relative fixed-point residual
    /// `‖G(s) − s‖_D / ‖G(s⁰) − s⁰‖_D` of its last iteration (`NaN` unless
    /// acceleration or a tolerance is set).
    pub fn last_iterations(&self) -> (usize, f64) {
        self.last
    }

    /// With constraint rows this step, [`Self::prepare_constraints`];
    /// then which bodies fold their correction ([`Self::fold`]). Returns
    /// whether any row exists.
    fn begin_constraints(
        &mut self,
        model: &Model,
        state: &State,
        space: &mut ConstraintSpace,
        times: &mut StageTimes,
    ) -> Result<bool, SimError> {
        let constrained = !space.problem.groups.is_empty();
        if constrained {
            self.prepare_constraints(model, state, space, times)?;
        }
        self.fold(space);
        Ok(constrained)
    }

    /// Each body's compliance, `W` once for the step (stage
    /// `build_delassus`, zeng2025 eq. 26–27) and `λ⁰` from the last step.
    fn prepare_constraints(
        &mut self,
        model: &Model,
        state: &State,
        space: &mut ConstraintSpace,
        times: &mut StageTimes,
    ) -> Result<(), SimError> {
        self.compliances.clear();
        self.compliances.extend(self.bodies.iter().map(|w| w.global.compliance()));
        for (b, body) in model.bodies.iter().enumerate() {
            if self.compliances[b].is_none() && !space.problem.bodies[b].is_empty() {
                return Err(SimError::Body {
                    body: body.name.clone(),
                    message: NEEDS_COMPLETE_GLOBAL_STEP.into(),
                });
            }
        }
        let (h, method) = (model.time_step, model.constraint_solver.delassus);
        let compliances = &self.compliances;
        // The CPU's non-smooth Newton reads `W` in factored form; PGS and
        // the device's solve read it assembled.
        let factored = matches!(model.constraint_solver.solver(true), ConstraintSolver::NonSmoothNewton(_))
            && model.device != Device::Gpu;
        let step = state.step + 1;
        let fail = |source| SimError::Device { step, body: None, stage: Stage::BuildDelassus, source };
        let x0 = &state.bodies[0].positions;
        let ready = self.contact_frame_ready(model, space);
        self.frame_rows = ready.then(|| device_rows(space, 0, x0)).flatten().map(Box::new);
        let on_device =
            self.frame_rows.as_ref().is_some_and(|r| self.bodies[0].global.device_builds_delassus(r));
        // A resident frame builds `W` on the device from `S` where it fits.
        self.device_delassus = on_device;
        if !on_device {
            times
                .time(Stage::BuildDelassus, || {
                    match factored && build_delassus_factored(space, compliances, h, method) {
                        true => Ok(()),
                        false => build_delassus(space, compliances, h, method, WForms::Assembled),
                    }
                })
                .map_err(fail)?;
        }
        if model.device == Device::Gpu
            && matches!(model.constraint_solver.solver(true), ConstraintSolver::NonSmoothNewton(_))
            && self.frame_rows.is_none()
        {
            if self.constraint_device.is_none() {
                let backend = model.gpu().map_err(fail)?;
                self.constraint_device = Some(DeviceConstraintSolver::new(backend).map_err(fail)?);
            }
            let device = self.constraint_device.as_mut().expect("made above");
            times.time(Stage::BuildDelassus, || device.load(space)).map_err(fail)?;
        }
        space.problem.impulses.clear();
        for g in &space.problem.groups {
            space
                .problem
                .impulses
                .extend_from_slice(&state.warm_start.get(&g.key).copied().unwrap_or([0.0; 3]));
        }
        Ok(())
    }

    /// Marks the bodies whose correction folds into the global step
    /// (zeng2025 Algorithm 4): a triangular global step on the CPU, and
    /// `W` built from isodof columns of its scalar factor at every vertex
    /// the rows touch. Such a body's iteration is one solve, not two: the
    /// forward half `z` of `q = A⁻¹ b` (stage `global_step`), `q` at the
    /// rows' vertices from the columns (what the gaps read), then
    /// `z += h² Z Hᵀ Δλ` by the columns and the backward half once (stage
    /// `correct`). The same `q` as a full solve plus a corrective one, to
    /// rounding. Decided anew every step: a step without rows folds
    /// nothing.
    fn fold(&mut self, space: &ConstraintSpace) {
        for (w, rows) in self.bodies.iter_mut().zip(&space.problem.bodies) {
            let factor = w.global.factor().filter(|_| w.global.method == GlobalStepMethod::Triangular);
            w.folded = !rows.is_empty()
                && !w.global.on_device()
                && factor.is_some_and(|f| rows.delassus.columns_covering(f, &rows.vertices()).is_some());
        }
    }

    /// Stages `solve_constraints` and `correct` of one iteration, on the
    /// GPU for the non-smooth Newton solve and for bodies whose global
    /// step runs there.
    fn constrain(
        &mut self,
        model: &Model,
        state: &State,
        space: &mut ConstraintSpace,
        times: &mut StageTimes,
        solver: ConstraintSolver,
        total: &mut ConstraintSolve,
    ) -> Result<(), SimError> {
        let step = state.step + 1;
        let (compliances, previous) = (&self.compliances, &mut self.previous_impulses);
        let x: Vec<&[f64]> = self.bodies.iter().map(|w| w.x.as_slice()).collect();
        let x0: Vec<&[f64]> = state.bodies.iter().map(|s| s.positions.as_slice()).collect();
        let device = self.constraint_device.as_mut();
        times.time(Stage::SolveConstraints, || match (device, solver) {
            (Some(device), ConstraintSolver::NonSmoothNewton(settings)) => {
                constrained::gaps(space, &x, &x0);
                constrained::solve_on_device(space, device, model, &settings, previous, total).map_err(
                    |source| SimError::Device { step, body: None, stage: Stage::SolveConstraints, source },
                )
            }
            _ => {
                constrained::free_gaps(
                    space,
                    &x,
                    &x0,
                    matches!(solver, ConstraintSolver::NonSmoothNewton(_)),
                );
                constrained::solve(space, compliances, model, solver, previous, total);
                Ok::<(), SimError>(())
            }
        })?;
        let h = model.time_step;
        for (b, w) in self.bodies.iter_mut().enumerate() {
            if w.folded {
                times.time(Stage::Correct, || folded_correction(w, space, b, previous, h));
                model.bodies[b].guard(step, Stage::Correct, "positions", &w.x)?;
                continue;
            }
            if space.problem.bodies[b].is_empty() {
                continue;
            }
            times
                .time(Stage::Correct, || {
                    constrained::correct(space, b, &mut w.global, previous, h, &mut w.x, &mut w.correction)
                })
                .map_err(|e| device_failure(step, &model.bodies[b], Stage::Correct, e))?;
        }
        Ok(())
    }

    /// After the iterations: the step's forces `H_bᵀ λ`, its solve figures,
    /// the warm start of the next step, and the violation check.
    fn finish_constraints(
        &mut self,
        model: &Model,
        state: &mut State,
        space: &mut ConstraintSpace,
        total: ConstraintSolve,
        step: usize,
    ) -> Result<(), SimError> {
        space.outcome.solve = total;
        keep_warm_start(space, &mut state.warm_start);
        for b in 0..space.problem.bodies.len() {
            if !space.problem.bodies[b].is_empty() {
                constrained::constraint_forces(space, b);
            }
        }
        space.check_violation(model, step)
    }

    /// Body `b`'s figures after the step: its elastic and bending energy
    /// and its inverted tets at the end positions, in one pass (the tets'
    /// rotations warm-started from the step's last ones).
    pub fn body_stats(&self, b: usize, body: &Body, positions: &[f64]) -> BodyStepStats {
        let w = &self.bodies[b];
        let rotations = w.lbfgs.as_ref().map_or(w.projections.tet_rotations(), |q| q.rotations());
        let (residual, iterations) = w.last_residual;
        let figures = elastic_energy(body, positions, rotations);
        BodyStepStats {
            elastic_energy: figures.energy,
            inverted_elements: figures.inverted,
            local_global_iterations: iterations,
            local_global_residual: Some(residual).filter(|r| !r.is_nan()),
            ..Default::default()
        }
    }
}

/// Where a local-global iteration stands in its step.
#[derive(Debug, Clone, Copy)]
struct Iteration {
    /// The step (1-based).
    step: usize,
    /// The iteration (0-based) and how many the step may take.
    k: usize,
    iterations: usize,
    /// Whether any constraint row exists this step.
    constrained: bool,
    /// The step's constraint solver (before each iteration's schedule).
    solver: ConstraintSolver,
}

/// Stage `integrate`: `v = (q − q_t)/h`, `q_t ← q` for every body.
fn integrate(bodies: &[Workspace], state: &mut State, h: f64, times: &mut StageTimes) {
    for (w, s) in bodies.iter().zip(state.bodies.iter_mut()) {
        times.time(Stage::Integrate, || {
            for ((v, q), x) in s.velocities.iter_mut().zip(&mut s.positions).zip(&w.x) {
                *v = (x - *q) / h;
                *q = *x;
            }
        });
    }
}

/// The constraint solver of iteration `k` of `iterations` (`None`: a
/// tolerance ends them): the non-smooth Newton's steps by the scene's
/// `newton_schedule`.
fn iteration_solver(
    solver: ConstraintSolver,
    model: &Model,
    k: usize,
    iterations: Option<usize>,
) -> ConstraintSolver {
    let ConstraintSolver::NonSmoothNewton(n) = solver else { return solver };
    let schedule = model.constraint_solver.newton_schedule.unwrap_or_default();
    ConstraintSolver::NonSmoothNewton(schedule.at(n, k, iterations, model.contact.alarm_distance))
}

/// A device error of `body`'s `stage` during step `step` (0: while the
/// world is built), as the step's error.
fn device_failure(step: usize, body: &Body, stage: Stage, source: DeviceError) -> SimError {
    SimError::Device { step, body: Some(body.name.clone()), stage, source }
}
