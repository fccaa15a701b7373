//! Stage `integrate`: `v ← v + Δv`, `x ← x + h v`; kinematic vertices are
//! placed exactly on their targets so that they never drift.

use super::BodyWorkspace;
use crate::body::Body;
use crate::state::BodyState;

/// Runs the stage for one body.
pub fn integrate(body: &Body, state: &mut BodyState, ws: &BodyWorkspace, h: f64, t_next: f64) {
    for j in 0..state.velocities.len() {
        state.velocities[j] += ws.dv[j];
        state.positions[j] += h * state.velocities[j];
    }
    for (i, k) in body.kinematic.iter().enumerate() {
        if let Some(k) = k {
            let p = k.target(body.rest_vertex(i), t_next);
            state.positions[3 * i..3 * i + 3].copy_from_slice(p.as_slice());
        }
    }
}
