//! Stages `build_delassus` and `solve_constraints` for one body against
//! rigid obstacles (zeng2022 eq. 12–16): `H` from the contacts, `W = h² H
//! A⁻¹ Hᵀ`, the free gaps `δ_free` (eq. 14) and projected Gauss-Seidel.

use std::collections::HashMap;

use ferrofem_linalg::Ldlt;
use nalgebra::Vector3;

use super::BodyWorkspace;
use crate::body::BodyModel;
use crate::collision::ContactSettings;
use crate::constraint::ConstraintJacobian;
use crate::obstacle::Obstacle;
use crate::solver::{ConstraintGroup, Pgs};
use crate::world::BodyState;

/// Key of an attachment's λ in the warm-start map.
const ATTACHMENT: usize = usize::MAX;

/// Rows of an attachment: the world axes.
const AXES: [[f64; 3]; 3] = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]];

/// Stage `build_delassus`: `H` (rows n, t1, t2 per contact, then x, y, z
/// per attachment) and `W = h² H A⁻¹ Hᵀ` by the dense method.
pub fn build_delassus(ws: &mut BodyWorkspace, body: &BodyModel, factor: &Ldlt, h: f64) {
    let mut jac = ConstraintJacobian::new(body.dofs());
    for c in &ws.contacts {
        jac.push_point(&[(c.vertex, 1.0)], c.frame);
    }
    for &(v, _) in &body.attachments {
        jac.push_point(&[(v, 1.0)], AXES);
    }
    ws.jacobian = jac.to_csr();
    ws.delassus = crate::delassus::dense(factor, &ws.jacobian);
    ws.delassus.iter_mut().for_each(|w| *w *= h * h);
}

/// Stage `solve_constraints`: `δ_free` from the free motion, relative to
/// the obstacles' motion (eq. 14) or to the attachment targets at `t + h`,
/// then PGS warm-started from the last step's λ of persisting constraints.
pub fn solve_constraints(
    ws: &mut BodyWorkspace,
    body: &BodyModel,
    state: &BodyState,
    obstacles: &[Obstacle],
    h: f64,
    t: f64,
    settings: &ContactSettings,
) {
    let n_rows = 3 * (ws.contacts.len() + body.attachments.len());
    ws.free_gaps.clear();
    ws.impulses.clear();
    let mut groups = Vec::with_capacity(ws.contacts.len());
    for c in &ws.contacts {
        let i = c.vertex;
        let p = Vector3::new(state.positions[3 * i], state.positions[3 * i + 1], state.positions[3 * i + 2]);
        let v_free = Vector3::from_fn(|d, _| state.velocities[3 * i + d] + ws.dv[3 * i + d]);
        let rel = h * (v_free - obstacles[c.obstacle].velocity_at(&p, t));
        for (k, dir) in c.frame.iter().enumerate() {
            let along = rel.dot(&Vector3::from(*dir));
            ws.free_gaps.push(if k == 0 { c.gap + along } else { along });
        }
        let warm = ws.warm_start.get(&(c.vertex, c.obstacle)).copied().unwrap_or([0.0; 3]);
        ws.impulses.extend_from_slice(&warm);
        groups.push(ConstraintGroup::Contact { mu: c.mu });
    }
    for &(v, target) in &body.attachments {
        let goal = target.target(Vector3::from(body.mesh.vertices[v]), t + h);
        for d in 0..3 {
            let x_free = state.positions[3 * v + d] + h * (state.velocities[3 * v + d] + ws.dv[3 * v + d]);
            ws.free_gaps.push(x_free - goal[d]);
        }
        let warm = ws.warm_start.get(&(v, ATTACHMENT)).copied().unwrap_or([0.0; 3]);
        ws.impulses.extend_from_slice(&warm);
        groups.push(ConstraintGroup::Attachment);
    }
    debug_assert_eq!(ws.free_gaps.len(), n_rows);
    ws.pgs = Pgs { settings: settings.pgs }.solve(&ws.delassus, &ws.free_gaps, &groups, &mut ws.impulses);
    let keys = ws.contacts.iter().map(|c| (c.vertex, c.obstacle));
    let keys = keys.chain(body.attachments.iter().map(|&(v, _)| (v, ATTACHMENT)));
    ws.warm_start = keys
        .enumerate()
        .map(|(k, key)| (key, [0, 1, 2].map(|d| ws.impulses[3 * k + d])))
        .collect::<HashMap<_, _>>();
}
