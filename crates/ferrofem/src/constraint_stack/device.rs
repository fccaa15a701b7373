//! The non-smooth Newton solve on the GPU (`[simulation] device = "gpu"`
//! under local-global, zeng2025 §5.2–5.4): [`crate::solver::newton`]'s method run
//! by the world's backend ([`crate::device::DeviceNewton`]), with `W`
//! resident for the step and `δ_free = δ(q) − W λᵏ` formed on the device
//! from the gaps.

use crate::device::{Backend, DeviceError, DeviceNewton, DeviceRows, GroupLaw, NewtonParams, Offset};

use super::space::ConstraintSpace;
use crate::constraint::ConstraintGroup;
use crate::solver::newton::Complementarity;
use crate::solver::{complementarity_scale, gaps_violation, row_gaps, ConstraintSolve, NewtonSettings};
use crate::Model;

/// The device solver and its host-side scratch.
#[derive(Debug)]
pub struct DeviceConstraintSolver {
    newton: Box<dyn DeviceNewton>,
    laws: Vec<GroupLaw>,
    delta: Vec<f64>,
}

impl DeviceConstraintSolver {
    /// The backend's solver (its kernels compiled).
    pub fn new(backend: &dyn Backend) -> Result<Self, DeviceError> {
        Ok(DeviceConstraintSolver { newton: backend.newton()?, laws: Vec::new(), delta: Vec::new() })
    }

    /// Uploads the step's `W` (`space.delassus.assembled`), once per step.
    pub fn load(&mut self, space: &ConstraintSpace) -> Result<(), DeviceError> {
        match space.delassus.assembled.whole() {
            Some(w) => self.newton.load(w),
            None => self.newton.load(&space.delassus.assembled.to_dense()),
        }
    }

    /// Solves `δ = δ_free + W λ` with `space.problem.free_gaps` holding `δ(q)` at
    /// the warm start `space.problem.impulses` (which receives λ); sets
    /// `space.outcome.solve` and `space.outcome.violation` as [`super::solve_in_space`].
    pub fn solve(
        &mut self,
        space: &mut ConstraintSpace,
        model: &Model,
        settings: &NewtonSettings,
    ) -> Result<(), DeviceError> {
        device_laws(space, &mut self.laws)?;
        device_scale(space, model, settings);
        self.delta.clear();
        self.delta.resize(space.problem.impulses.len(), 0.0);
        let offset = Offset::Gaps(&space.problem.free_gaps);
        let out = self.newton.solve(
            &params(settings),
            offset,
            &self.laws,
            &space.workspace.scale,
            &mut space.problem.impulses,
            &mut self.delta,
        )?;
        space.outcome.violation = gaps_violation(&space.workspace.laws, &self.delta);
        space.outcome.solve = ConstraintSolve::from(out);
        Ok(())
    }
}

/// The step's laws as the device reads them into `laws` (and the host's
/// in `space.workspace.laws`).
pub fn device_laws(space: &mut ConstraintSpace, laws: &mut Vec<GroupLaw>) -> Result<(), DeviceError> {
    space.workspace.laws.clear();
    space.workspace.laws.extend(space.problem.groups.iter().map(|g| g.law));
    laws.clear();
    for &law in &space.workspace.laws {
        laws.push(GroupLaw::try_from(law)?);
    }
    Ok(())
}

/// The complementarity scale `r` into `space.workspace.scale`, from the
/// host's `W` (its diagonal) or the masses (zeng2025 §5.4).
pub fn device_scale(space: &mut ConstraintSpace, model: &Model, settings: &NewtonSettings) {
    let w = &space.delassus.assembled;
    complementarity_scale(
        &space.problem.groups,
        |j| w.entry(j, j),
        model,
        settings.preconditioner,
        &mut space.workspace.scale,
    );
}

/// Whether every row of the world is body `b`'s, once (one body, no
/// self-contact, no cable): what a frame on the device needs of its rows.
fn rows_of_one_body(space: &ConstraintSpace, b: usize) -> bool {
    let (rows, c) = (&space.problem.bodies[b].rows, 3 * space.problem.groups.len());
    let single = space.problem.groups.iter().all(|g| g.parts().len() == 1 && g.path().is_empty());
    single && rows.len() == c && rows.iter().enumerate().all(|(i, &r)| r == i)
}

/// Body `b`'s rows for a frame on the device ([`DeviceRows`]: `H_b` by
/// the world's rows, `δ`'s constant part against the start-of-step
/// positions `x0`), when [`rows_of_one_body`]; `None` otherwise.
pub fn device_rows(space: &ConstraintSpace, b: usize, x0: &[f64]) -> Option<DeviceRows> {
    if !rows_of_one_body(space, b) {
        return None;
    }
    let h = &space.problem.bodies[b].jacobian;
    let mut gaps = Vec::with_capacity(h.pattern.nrows);
    row_gaps(&space.problem.groups, 1.0, |_, j| -x0[j], &mut gaps);
    Some(DeviceRows {
        row_ptr: h.pattern.row_ptr.iter().map(|&p| p as u32).collect(),
        dofs: h.pattern.col_idx.clone(),
        coef: h.values.clone(),
        gaps,
    })
}

/// A group's law as the device reads it; a needle's shaft and a cable
/// have no device law (scenes with them are refused under `device = "gpu"`).
impl TryFrom<ConstraintGroup> for GroupLaw {
    type Error = DeviceError;

    fn try_from(law: ConstraintGroup) -> Result<GroupLaw, DeviceError> {
        match law {
            ConstraintGroup::Contact { mu } => Ok(GroupLaw::Contact(mu)),
            ConstraintGroup::Attachment => Ok(GroupLaw::Attachment),
            ConstraintGroup::Shaft { .. } => {
                Err(DeviceError::Input("a needle's shaft is solved on the CPU: device = \"cpu\"".into()))
            }
            ConstraintGroup::Cable => {
                Err(DeviceError::Input("a cable is solved on the CPU: device = \"cpu\"".into()))
            }
        }
    }
}

/// The device's settings from the scene's.
pub fn params(s: &NewtonSettings) -> NewtonParams {
    NewtonParams {
        fischer_burmeister: s.complementarity == Complementarity::FischerBurmeister,
        iterations: s.iterations,
        linear_iterations: s.linear_iterations,
        tolerance: s.tolerance,
        ncp_tolerance: s.ncp_tolerance,
    }
}
