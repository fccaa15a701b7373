//! How far a body's vertices can move within one step ([`Reach`]): the
//! speculative part of the contact search distance.

use nalgebra::Vector3;

use super::geometry::point;
use crate::state::BodyState;
use crate::Model;

/// How far each vertex of a body can move within one step (m): `h (‖vᵢ‖ +
/// h ‖g‖)` from its start-of-step velocity and gravity, or 0 everywhere
/// when contacts are not `speculative`. A pair is searched within the
/// alarm distance plus the reach of both sides; a vertex–obstacle contact
/// found so is kept when the vertex approaches the surface by enough
/// (`Reach::closes`).
#[derive(Debug, Clone, Copy)]
pub struct Reach<'a> {
    /// Start-of-step velocities; `None` when contacts are not speculative.
    velocity: Option<&'a [f64]>,
    max: f64,
    step: f64,
    fall: f64,
}

impl<'a> Reach<'a> {
    /// The reach of `body` in `state` under `model`'s time step and gravity.
    pub fn of(model: &Model, state: &'a BodyState) -> Reach<'a> {
        let step = model.time_step;
        if !model.contact.speculative {
            return Reach { velocity: None, max: 0.0, step, fall: 0.0 };
        }
        let fall = step * step * Vector3::from(model.gravity).norm();
        let fastest = state.velocities.chunks_exact(3).map(|v| point(v, 0).norm()).fold(0.0, f64::max);
        Reach { velocity: Some(&state.velocities), max: step * fastest + fall, step, fall }
    }

    /// Vertex `i`'s reach (m).
    pub fn at(&self, i: usize) -> f64 {
        self.velocity.map_or(0.0, |v| self.step * point(v, i).norm() + self.fall)
    }

    /// The largest reach over the body's vertices (m).
    pub fn max(&self) -> f64 {
        self.max
    }

    /// How far a moving obstacle's point of velocity `v` travels in the
    /// step (m); 0 when contacts are not speculative.
    pub(super) fn of_obstacle(&self, v: &Vector3<f64>) -> f64 {
        self.velocity.map_or(0.0, |_| self.step * v.norm())
    }

    /// Whether vertex `i`, at distance `d` along normal `n` from a surface
    /// moving at `v_surface`, can come within `alarm` of it in the step:
    /// `d < alarm + h max(0, −(vᵢ − v_surface)·n) + h²‖g‖`.
    pub(super) fn closes(
        &self,
        i: usize,
        d: f64,
        n: &Vector3<f64>,
        v_surface: &Vector3<f64>,
        alarm: f64,
    ) -> bool {
        let Some(velocity) = self.velocity else { return d < alarm };
        let approach = -(point(velocity, i) - v_surface).dot(n);
        d < alarm + self.step * approach.max(0.0) + self.fall
    }
}
