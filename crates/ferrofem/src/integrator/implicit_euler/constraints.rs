//! Stages `build_delassus` and `solve_constraints` over the whole world
//! (zeng2022 eq. 12–16): constraint groups from obstacle contacts,
//! attachments and body–body contacts; `W = h² Σ_b H_b A_b⁻¹ H_bᵀ`; the
//! free gaps `δ_free` (eq. 14); projected Gauss-Seidel.

use std::collections::HashMap;

use std::sync::Arc;

use ferrofem_linalg::ldlt::IsodofReuse;
use ferrofem_linalg::{CsrMatrix, Ldlt};
use nalgebra::Vector3;

use super::BodyWorkspace;
use crate::collision::{ContactSettings, PairContact};
use crate::constraint::ConstraintJacobian;
use crate::delassus::{self, DelassusMethod, MixedDelassus, UnbuiltBody};
use crate::solver::{AssembledDelassus, ConstraintGroup, DelassusOperator, Pgs, PgsSolve};
use crate::stats::DelassusRecord;
use crate::world::BodyState;
use crate::Model;

/// Rows of an attachment: the world axes.
const AXES: [[f64; 3]; 3] = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]];

/// Warm-start key: (body, vertex, what it touches).
type Key = (usize, usize, Partner);

/// What the constrained vertex is held against.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Partner {
    /// An obstacle.
    Obstacle(usize),
    /// A vertex of a mesh obstacle (the key's vertex is the obstacle's).
    ObstacleVertex(usize),
    /// Its attachment target.
    Target,
    /// A triangle of another body.
    Body(usize),
}

/// One group of three constraint rows in world numbering.
#[derive(Debug, Clone, PartialEq)]
pub struct Group {
    /// Contact or attachment law.
    pub law: ConstraintGroup,
    /// Row directions (normal, t1, t2; or x, y, z).
    pub frame: [[f64; 3]; 3],
    /// `δ` per row at the start of the step, before the free motion (m).
    pub offset: [f64; 3],
    /// Points the group acts on: (body, [(vertex, weight)]), weights negative on the far side.
    pub parts: Vec<(usize, Vec<(usize, f64)>)>,
    /// Displacement of an obstacle's material point over the step (m).
    pub obstacle_shift: [f64; 3],
    /// Warm-start key.
    pub key: Key,
}

/// The world's constraint problem of the current step.
#[derive(Debug, Default)]
pub struct ConstraintSpace {
    /// Groups: per body its obstacle contacts and attachments, then body–body contacts.
    pub groups: Vec<Group>,
    /// The assembled part of `h² H A⁻¹ Hᵀ`, row-major, `3g × 3g` (empty when every body is unbuilt).
    pub delassus: Vec<f64>,
    /// Bodies whose part of `W` is applied unbuilt.
    pub unbuilt: Vec<usize>,
    /// `δ_free` per row (m).
    pub free_gaps: Vec<f64>,
    /// λ per row (N).
    pub impulses: Vec<f64>,
    /// Last step's λ by key.
    pub warm_start: HashMap<Key, [f64; 3]>,
    /// Outcome of the last PGS solve.
    pub pgs: PgsSolve,
    /// Largest violation after PGS (m): an attachment's distance to its
    /// target or a contact's penetration at the end of the step.
    pub violation: f64,
}

impl ConstraintSpace {
    /// Contact groups (obstacle and body–body), each counted once.
    pub fn contact_count(&self) -> usize {
        self.groups.iter().filter(|g| matches!(g.law, ConstraintGroup::Contact { .. })).count()
    }

    /// Contact groups acting on body `b`.
    pub fn contacts_of(&self, b: usize) -> usize {
        self.groups.iter().filter(|g| is_contact_on(g, b)).count()
    }

    /// Sum of the normal forces of the contacts acting on body `b` (N).
    pub fn normal_force_on(&self, b: usize) -> f64 {
        let lam = |k: usize| self.impulses.get(3 * k).copied().unwrap_or(0.0);
        self.groups.iter().enumerate().filter(|(_, g)| is_contact_on(g, b)).map(|(k, _)| lam(k)).sum()
    }

    /// Sum of normal forces over contact groups, each counted once (N).
    pub fn total_normal_force(&self) -> f64 {
        self.groups
            .iter()
            .enumerate()
            .filter(|(_, g)| matches!(g.law, ConstraintGroup::Contact { .. }))
            .map(|(k, _)| self.impulses.get(3 * k).copied().unwrap_or(0.0))
            .sum()
    }
}

fn is_contact_on(g: &Group, b: usize) -> bool {
    matches!(g.law, ConstraintGroup::Contact { .. }) && g.parts.iter().any(|(body, _)| *body == b)
}

/// Collects the step's groups at time `t` (start of the step); obstacle
/// shifts use the obstacles' velocity at `t`.
pub fn gather_groups(
    model: &Model,
    ws: &[BodyWorkspace],
    pairs: &[PairContact],
    t: f64,
    states: &[BodyState],
) -> Vec<Group> {
    let (bodies, obstacles, settings, h) = (&model.bodies, &model.obstacles, &model.contact, model.time_step);
    let mut groups = Vec::new();
    for (b, body) in bodies.iter().enumerate() {
        let x = &states[b].positions;
        for c in &ws[b].contacts {
            let obstacle = &obstacles[c.obstacle];
            let (at, key) = match c.obstacle_vertex {
                None => (c.point.position(x), (b, c.point.first_vertex(), Partner::Obstacle(c.obstacle))),
                Some(k) => (obstacle.vertex_at(k, t), (b, k, Partner::ObstacleVertex(c.obstacle))),
            };
            let shift = h * obstacle.velocity_at(&at, t);
            groups.push(Group {
                law: ConstraintGroup::Contact { mu: c.mu },
                frame: c.frame,
                offset: [c.gap, 0.0, 0.0],
                parts: vec![(b, c.point.weights())],
                obstacle_shift: c.frame.map(|d| shift.dot(&Vector3::from(d))),
                key,
            });
        }
        for &(v, target) in &body.attachments {
            let goal = target.target(Vector3::from(body.mesh.vertices[v]), t + h);
            groups.push(Group {
                law: ConstraintGroup::Attachment,
                frame: AXES,
                offset: [0, 1, 2].map(|d| x[3 * v + d] - goal[d]),
                parts: vec![(b, vec![(v, 1.0)])],
                obstacle_shift: [0.0; 3],
                key: (b, v, Partner::Target),
            });
        }
    }
    for c in pairs {
        let far = (0..3).map(|k| (c.triangle[k], -c.weights[k])).collect();
        groups.push(Group {
            law: ConstraintGroup::Contact { mu: settings.body_friction },
            frame: c.frame,
            offset: [c.gap, 0.0, 0.0],
            parts: vec![(c.a, vec![(c.vertex, 1.0)]), (c.b, far)],
            obstacle_shift: [0.0; 3],
            key: (c.a, c.vertex, Partner::Body(c.b)),
        });
    }
    groups
}

/// Stage `build_delassus`: per body, the compact `H_b` of the rows that
/// touch it (kept in `ws[b]`) and `W += h² H_b A_b⁻¹ H_bᵀ` by the body's
/// method (`auto`: the cheapest predicted for the step); bodies left
/// unbuilt are applied through their factor by PGS.
pub fn build_delassus(
    space: &mut ConstraintSpace,
    ws: &mut [BodyWorkspace],
    factors: &[Option<Arc<Ldlt>>],
    h: f64,
    method: DelassusMethod,
) {
    let c = 3 * space.groups.len();
    space.delassus.clear();
    space.unbuilt.clear();
    let expected_sweeps = space.pgs.iterations.max(10) as f64;
    for (b, w) in ws.iter_mut().enumerate() {
        w.delassus = None;
        let mut jac = ConstraintJacobian::new(w.dv.len());
        w.constraint_rows.clear();
        for (k, g) in space.groups.iter().enumerate() {
            for (body, pts) in &g.parts {
                if *body == b {
                    jac.push_point(pts, g.frame);
                    w.constraint_rows.extend([3 * k, 3 * k + 1, 3 * k + 2]);
                }
            }
        }
        w.jacobian = jac.to_csr();
        if w.constraint_rows.is_empty() {
            continue;
        }
        let f = factors[b].as_ref().expect("bodies with constraints are factorized");
        let predicted = (method == DelassusMethod::Auto)
            .then(|| delassus::predict(f, &w.jacobian, &w.isodof_cache, expected_sweeps));
        let chosen = predicted.map_or(method, |p| p.cheapest());
        let buf = &mut w.delassus_buffers;
        let (wb, reuse) = match chosen {
            DelassusMethod::Dense | DelassusMethod::Auto => {
                (delassus::dense(f, &w.jacobian, buf), Default::default())
            }
            DelassusMethod::Isodof => delassus::isodof(f, &w.jacobian, buf),
            DelassusMethod::IsodofReuse => delassus::isodof_reuse(&mut w.isodof_cache, f, &w.jacobian, buf),
            DelassusMethod::Unbuilt => {
                space.unbuilt.push(b);
                (&[][..], IsodofReuse { isodofs: delassus::isodofs(&w.jacobian).len(), reused: 0 })
            }
        };
        w.delassus = Some(DelassusRecord {
            method: chosen.name(),
            rows: w.constraint_rows.len(),
            isodofs: reuse.isodofs,
            reused_isodofs: reuse.reused,
            reuse_fraction: if reuse.isodofs > 0 { reuse.reused as f64 / reuse.isodofs as f64 } else { 0.0 },
            predicted,
        });
        if wb.is_empty() {
            continue;
        }
        if space.delassus.is_empty() {
            space.delassus.resize(c * c, 0.0);
        }
        let r = &w.constraint_rows;
        for (i, &gi) in r.iter().enumerate() {
            for (j, &gj) in r.iter().enumerate() {
                space.delassus[gi * c + gj] += h * h * wb[i * r.len() + j];
            }
        }
    }
}

/// Stage `solve_constraints`: `δ_free = offset + Σ frame·h(v + Δv_free)·w −
/// obstacle shift` per row, then PGS warm-started by key, on the assembled
/// `W` plus the unbuilt bodies' `h² H_b A_b⁻¹ H_bᵀ`.
pub fn solve_constraints(
    space: &mut ConstraintSpace,
    states: &[BodyState],
    ws: &[BodyWorkspace],
    factors: &[Option<Arc<Ldlt>>],
    h: f64,
    settings: &ContactSettings,
) {
    space.free_gaps.clear();
    space.impulses.clear();
    for g in &space.groups {
        for (row, dir) in g.frame.iter().enumerate() {
            let mut delta = g.offset[row] - g.obstacle_shift[row];
            for (b, pts) in &g.parts {
                let (v, dv) = (&states[*b].velocities, &ws[*b].dv);
                for &(i, wgt) in pts {
                    delta += wgt * h * (0..3).map(|d| dir[d] * (v[3 * i + d] + dv[3 * i + d])).sum::<f64>();
                }
            }
            space.free_gaps.push(delta);
        }
        space.impulses.extend_from_slice(&space.warm_start.get(&g.key).copied().unwrap_or([0.0; 3]));
    }
    let laws: Vec<ConstraintGroup> = space.groups.iter().map(|g| g.law).collect();
    let pgs = Pgs { settings: settings.pgs };
    let c = space.free_gaps.len();
    space.pgs = if space.unbuilt.is_empty() {
        pgs.solve(&space.delassus, &space.free_gaps, &laws, &mut space.impulses)
    } else {
        let bodies = space
            .unbuilt
            .iter()
            .map(|&b| {
                let f = factors[b].as_deref().expect("bodies with constraints are factorized");
                UnbuiltBody::new(f, &ws[b].jacobian, &ws[b].constraint_rows)
            })
            .collect();
        let assembled = (!space.delassus.is_empty()).then_some(space.delassus.as_slice());
        let mut op = MixedDelassus::new(c, assembled, bodies, h, &space.impulses);
        let out = pgs.solve_with(&mut op, &space.free_gaps, &laws, &mut space.impulses);
        space.violation = violation(&op, &space.free_gaps, &laws, &space.impulses);
        out
    };
    if space.unbuilt.is_empty() {
        let op = AssembledDelassus(&space.delassus);
        space.violation = violation(&op, &space.free_gaps, &laws, &space.impulses);
    }
    space.warm_start = space
        .groups
        .iter()
        .enumerate()
        .map(|(k, g)| (g.key, [0, 1, 2].map(|d| space.impulses[3 * k + d])))
        .collect();
}

/// `δ = δ_free + W λ` per group: the largest attachment miss `|δ|` or
/// contact penetration `max(0, −δₙ)` (m).
fn violation(w: &impl DelassusOperator, free: &[f64], laws: &[ConstraintGroup], lambda: &[f64]) -> f64 {
    laws.iter()
        .enumerate()
        .map(|(k, law)| {
            let d = w.rows_times(3 * k, lambda) + Vector3::from_column_slice(&free[3 * k..3 * k + 3]);
            match law {
                ConstraintGroup::Attachment => d.norm(),
                ConstraintGroup::Contact { .. } => (-d[0]).max(0.0),
            }
        })
        .fold(0.0, f64::max)
}

/// The λ rows of one body's compact `H_b`.
pub fn body_impulses(space: &ConstraintSpace, w: &BodyWorkspace) -> Vec<f64> {
    w.constraint_rows.iter().map(|&r| space.impulses[r]).collect()
}

/// `Hᵀ λ` for a compact Jacobian.
pub fn transpose_times(h: &CsrMatrix, lambda: &[f64], out: &mut [f64]) {
    out.iter_mut().for_each(|f| *f = 0.0);
    for (r, l) in lambda.iter().enumerate() {
        for p in h.pattern.row_ptr[r]..h.pattern.row_ptr[r + 1] {
            out[h.pattern.col_idx[p] as usize] += h.values[p] * l;
        }
    }
}
