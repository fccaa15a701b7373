//! Resident frames (zeng2025 Algorithm 3–4 on the device): a step's
//! iterations as one submission and one host wait per body, without
//! constraints ([`LocalGlobal::device_frames`]) or, on a world of one
//! body, with them ([`LocalGlobal::contact_frame`]): the local step, the
//! right-hand side with `h² Hᵀ λ`, the global step, the gaps, the
//! non-smooth Newton solve and the correction all on the device.

use super::super::constrained::add_solve;
use super::super::local::constant_rhs;
use super::super::workspace::Rotations;
use super::super::Acceleration;
use super::{device_failure, iteration_solver, LocalGlobal};
use crate::constraint_stack::device::{device_laws, device_scale, params};
use crate::constraint_stack::ConstraintSpace;
use crate::delassus::DelassusRecord;
use crate::device::{ContactFrame, DeviceRows, FrameState, NewtonParams};
use crate::solver::{gaps_violation, ComplementarityScale, ConstraintSolve, ConstraintSolver};
use crate::stats::{Stage, StageTimes};
use crate::{Device, Model, SimError, State};

impl LocalGlobal {
    /// Whether this step's iterations run as resident frames on the device
    /// ([`Self::device_frames`]): every body's local step is on the device,
    /// its rotations are warm (a host step has run), and nothing needs an
    /// iterate on the host between iterations (no acceleration, no
    /// tolerance).
    pub(super) fn resident_frames(&self, iterations: usize) -> bool {
        let s = self.settings;
        let plain = s.acceleration == Acceleration::None && !s.tracks_residual() && iterations > 0;
        plain && self.bodies.iter().all(|w| w.global.has_device_frame() && w.rotations != Rotations::Cold)
    }

    /// Every body's iterations as one frame on the device (zeng2025
    /// Algorithm 3 without constraints): the constant part of `b` on the
    /// host (stage `local_step`), then the frame, which uploads it and the
    /// starting iterate, runs every local and global step and reads `q`
    /// and the rotations back once (stage `global_step`: the device's
    /// local steps are inside it, one submission). `observe` sees the
    /// last iterate only.
    pub(super) fn device_frames(
        &mut self,
        model: &Model,
        times: &mut StageTimes,
        step: usize,
        t_next: f64,
        observe: &mut impl FnMut(usize, usize, &[f64]),
    ) -> Result<(), SimError> {
        let (h, iterations) = (model.time_step, self.settings.iterations);
        self.last = (iterations, f64::NAN);
        for (b, body) in model.bodies.iter().enumerate() {
            let w = &mut self.bodies[b];
            times.time(Stage::LocalStep, || constant_rhs(body, &w.pins, &w.predicted, h, t_next, &mut w.rhs));
            let upload = w.rotations != Rotations::Device;
            let fallbacks = times
                .time(Stage::GlobalStep, || {
                    w.global.device_frame(&w.rhs, &mut w.x, &mut w.projections, upload, iterations)
                })
                .map_err(|e| device_failure(step, body, Stage::GlobalStep, e))?;
            w.rotations = Rotations::Device;
            w.device_fallbacks = fallbacks;
            body.guard(step, Stage::GlobalStep, "positions", &w.x)?;
            observe(b, iterations, &w.x);
        }
        Ok(())
    }

    /// Whether this step's constrained iterations can run as one frame on
    /// the device ([`Self::contact_frame`]), as far as the world decides
    /// it: resident frames are possible ([`Self::resident_frames`]), the
    /// world has one body, and the non-smooth Newton solve runs on the
    /// device under laws it has. The rows decide the rest
    /// ([`crate::constraint_stack::device::device_rows`]: every row the
    /// body's, once).
    pub(super) fn contact_frame_ready(&self, model: &Model, space: &ConstraintSpace) -> bool {
        let newton = matches!(model.constraint_solver.solver(true), ConstraintSolver::NonSmoothNewton(_));
        let laws = space.problem.groups.iter().all(|g| crate::device::GroupLaw::try_from(g.law).is_ok());
        model.device == Device::Gpu
            && newton
            && laws
            && model.bodies.len() == 1
            && self.resident_frames(self.settings.iterations)
    }

    /// Every iteration of a step with constraints as one frame on the
    /// device (zeng2025 Algorithm 3–4; [`crate::device::DeviceGlobalStep::contact_frame`]):
    /// `b`'s constant part on the host (stage `local_step`); the laws,
    /// `r` (unless the device takes `W`'s diagonal) and each iteration's
    /// Newton settings (stage `solve_constraints`); then the frame, which
    /// uploads the rows (found with `W`'s decision, `prepare_constraints`),
    /// `c`, the iterate and `λ⁰`, builds `W` from the resident `S` (or
    /// uploads the host's where the device's bindings cannot hold its
    /// blocks) and reads `q`, the rotations, `λ`, `δ` and each solve's
    /// figures back in one host wait (stage `global_step`). `observe` sees
    /// the last iterate only.
    pub(super) fn contact_frame(
        &mut self,
        model: &Model,
        state: &State,
        space: &mut ConstraintSpace,
        times: &mut StageTimes,
        total: &mut ConstraintSolve,
        observe: &mut impl FnMut(usize, usize, &[f64]),
    ) -> Result<(), SimError> {
        let (h, iterations) = (model.time_step, self.settings.iterations);
        let (step, t_next) = (state.step + 1, state.time + h);
        let (body, w) = (&model.bodies[0], &mut self.bodies[0]);
        let fail = |stage| move |source| device_failure(step, body, stage, source);
        let solver = model.constraint_solver.solver(true);
        let ConstraintSolver::NonSmoothNewton(settings) = solver else {
            unreachable!("contact_frame_ready asks for the non-smooth Newton solver")
        };
        times.time(Stage::LocalStep, || constant_rhs(body, &w.pins, &w.predicted, h, t_next, &mut w.rhs));
        let on_device = self.device_delassus;
        let rows = self.frame_rows.take().expect("prepare_constraints found the rows");
        let mut laws = Vec::new();
        let solves = times
            .time(Stage::SolveConstraints, || {
                device_laws(space, &mut laws)?;
                // `W`'s diagonal is taken on the device where `W` is built.
                if !on_device || settings.preconditioner != ComplementarityScale::SystemInverse {
                    device_scale(space, model, &settings);
                }
                let solves: Vec<NewtonParams> = (0..iterations)
                    .map(|k| match iteration_solver(solver, model, k, Some(iterations)) {
                        ConstraintSolver::NonSmoothNewton(s) => params(&s),
                        _ => params(&settings),
                    })
                    .collect();
                Ok(solves)
            })
            .map_err(fail(Stage::SolveConstraints))?;
        let dense;
        let w_matrix = match (on_device, space.delassus.assembled.whole()) {
            (true, _) => None,
            (false, Some(whole)) => Some(whole),
            (false, None) => {
                dense = space.delassus.assembled.to_dense();
                Some(&dense[..])
            }
        };
        let scale_on_device = on_device && settings.preconditioner == ComplementarityScale::SystemInverse;
        let frame = ContactFrame {
            c: &w.rhs,
            upload_rotations: w.rotations != Rotations::Device,
            rows: &rows,
            h,
            w: w_matrix,
            laws: &laws,
            r: (!scale_on_device).then_some(&space.workspace.scale[..]),
            solves: &solves,
        };
        let mut delta = vec![0.0; rows.rows()];
        let frame_state = FrameState {
            x: &mut w.x,
            rotations: w.projections.tet_rotations_flat_mut(),
            lambda: &mut space.problem.impulses,
            delta: &mut delta,
        };
        let outcome = times
            .time(Stage::GlobalStep, || w.global.device_contact_frame(&frame, frame_state))
            .map_err(fail(Stage::GlobalStep))?;
        w.rotations = Rotations::Device;
        w.device_fallbacks = outcome.fallbacks;
        if on_device {
            space.problem.bodies[0].delassus.record = Some(device_record(&rows, outcome.delassus_vertices));
        }
        outcome.solves.into_iter().for_each(|s| add_solve(total, ConstraintSolve::from(s)));
        space.outcome.violation = gaps_violation(&space.workspace.laws, &delta);
        body.guard(step, Stage::GlobalStep, "positions", &w.x)?;
        body.guard(step, Stage::SolveConstraints, "contact forces", &space.problem.impulses)?;
        observe(0, iterations, &w.x);
        Ok(())
    }
}

/// The stats' record of a `W` built on the device from `S`.
fn device_record(rows: &DeviceRows, vertices: usize) -> DelassusRecord {
    DelassusRecord {
        method: "sparse-inverse-gpu",
        rows: rows.rows(),
        isodofs: 3 * vertices,
        reused_isodofs: 0,
        reuse_fraction: 0.0,
        solved_ahead: 0,
        predicted: None,
    }
}
