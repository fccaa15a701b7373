//! Constraint groups (zeng2022 §3.2): three rows per contact (normal, t1,
//! t2), attachment (x, y, z), needle shaft point (along, across ×2) or
//! cable (its length, two empty rows), in world numbering, gathered from
//! the step's contacts, the bodies' attachments, the needles and cables.

use nalgebra::Vector3;

use super::key::{GroupKey, Partner};
use super::ConstraintGroup;
use crate::collision::{BodyPoint, Contacts, ObstacleFeature, Weights};
use crate::{Model, State};

/// Rows of an attachment: the world axes.
const AXES: [[f64; 3]; 3] = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]];

/// One group of three constraint rows in world numbering.
#[derive(Debug, Clone, PartialEq)]
pub struct Group {
    /// Contact or attachment law.
    pub law: ConstraintGroup,
    /// Row directions (normal, t1, t2; or x, y, z).
    pub frame: [[f64; 3]; 3],
    /// `δ` per row at the start of the step, before the free motion (m).
    pub offset: [f64; 3],
    /// Points the group acts on, one or two: (body, weights), weights negative on the far side.
    parts: [(usize, Weights); 2],
    /// How many of `parts` are in use.
    part_count: usize,
    /// Displacement of an obstacle's material point over the step (m).
    pub obstacle_shift: [f64; 3],
    /// Warm-start key.
    pub key: GroupKey,
    /// A cable's row 0: its points on body `parts[0].0` (whose weights are
    /// then empty), each with the direction the row takes there; empty for
    /// the groups of points.
    path: Vec<(Weights, [f64; 3])>,
}

impl Group {
    /// A group acting on one point of one body (`part`: body, weights).
    pub fn on_body(
        law: ConstraintGroup,
        frame: [[f64; 3]; 3],
        offset: [f64; 3],
        part: (usize, Weights),
        obstacle_shift: [f64; 3],
        key: GroupKey,
    ) -> Group {
        let parts = [part, (part.0, Weights::default())];
        Group { law, frame, offset, parts, part_count: 1, obstacle_shift, key, path: Vec::new() }
    }

    /// A cable's group on body `b`: row 0 is `Σ_k dₖᵀ pₖ` over the `path`'s
    /// points `pₖ = Σ wᵢ xᵢ` and directions `dₖ`, at `offset` (m) before
    /// the free motion; rows 1 and 2 are empty.
    pub fn cable(b: usize, path: Vec<(Weights, [f64; 3])>, offset: f64, key: GroupKey) -> Group {
        let empty = (b, Weights::default());
        let (law, frame) = (ConstraintGroup::Cable, [[0.0; 3]; 3]);
        let parts = [empty, empty];
        Group {
            law,
            frame,
            offset: [offset, 0.0, 0.0],
            parts,
            part_count: 1,
            obstacle_shift: [0.0; 3],
            key,
            path,
        }
    }

    /// The points the group acts on: (body, weights) with `p = Σ wᵢ xᵢ`,
    /// weights negative on the far side of a body–body contact.
    pub fn parts(&self) -> &[(usize, Weights)] {
        &self.parts[..self.part_count]
    }

    /// A cable's points and their directions in row 0 (empty for the
    /// groups of points).
    pub fn path(&self) -> &[(Weights, [f64; 3])] {
        &self.path
    }

    /// Row `row`'s points: (body, weights, direction), the row being the
    /// sum over them of `directionᵀ Σ wᵢ xᵢ`.
    pub fn row_points(&self, row: usize) -> impl Iterator<Item = (usize, &Weights, [f64; 3])> + '_ {
        let points = self.parts().iter().map(move |(b, w)| (*b, w, self.frame[row]));
        let path = self.path.iter().filter(move |_| row == 0);
        points.chain(path.map(|(w, d)| (self.parts[0].0, w, *d)))
    }

    /// The (body, vertex) pairs the group's rows touch.
    pub fn vertices(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        let path = self.path.iter().map(|(w, _)| (self.parts[0].0, w));
        let points = self.parts().iter().map(|(b, w)| (*b, w)).chain(path);
        points.flat_map(|(b, w)| w.iter().map(move |&(v, _)| (b, v)))
    }

    /// Whether this is a contact acting on body `b`.
    pub fn is_contact_on(&self, b: usize) -> bool {
        self.is_contact() && self.parts().iter().any(|(body, _)| *body == b)
    }

    /// Whether this is a contact (obstacle or body–body).
    pub fn is_contact(&self) -> bool {
        matches!(self.law, ConstraintGroup::Contact { .. })
    }
}

/// The step's groups at the state's time `t` (start of the step): per
/// body its obstacle contacts and attachments, then body–body contacts
/// (the needles' follow, [`super::needle_groups`]). Obstacle shifts use
/// the obstacles' velocity at `t`; attachment offsets aim at the target at
/// `t + h`.
pub fn gather_groups(model: &Model, contacts: &Contacts, state: &State, groups: &mut Vec<Group>) {
    let (obstacles, h, t) = (&model.obstacles, model.time_step, state.time);
    groups.clear();
    for (b, body) in model.bodies.iter().enumerate() {
        let x = &state.bodies[b].positions;
        for c in &contacts.obstacle[b] {
            let obstacle = &obstacles[c.obstacle];
            let (at, key) = match (c.feature, c.point) {
                (ObstacleFeature::Vertex(k), _) => {
                    (obstacle.vertex_at(k, t), (b, k, Partner::ObstacleVertex(c.obstacle)))
                }
                (ObstacleFeature::Edge(k), BodyPoint::Edge { vertices: [u, v], .. }) => {
                    (c.point.position(x), (b, u, Partner::ObstacleEdge(c.obstacle, k, v)))
                }
                _ => (c.point.position(x), (b, c.point.first_vertex(), Partner::Obstacle(c.obstacle))),
            };
            let shift = h * obstacle.velocity_at(&at, t);
            groups.push(Group::on_body(
                ConstraintGroup::Contact { mu: c.mu },
                c.frame,
                [c.gap, 0.0, 0.0],
                (b, c.point.weights()),
                c.frame.map(|d| shift.dot(&Vector3::from(d))),
                key,
            ));
        }
        for &(v, ref target) in &body.attachments {
            let goal = target.target(body.rest_vertex(v), t + h);
            groups.push(Group::on_body(
                ConstraintGroup::Attachment,
                AXES,
                [0, 1, 2].map(|d| x[3 * v + d] - goal[d]),
                (b, Weights::new(&[(v, 1.0)])),
                [0.0; 3],
                (b, v, Partner::Target),
            ));
        }
    }
    for c in &contacts.pairs {
        let far = Weights::new(&[0, 1, 2].map(|k| (c.triangle[k], -c.weights[k])));
        groups.push(Group {
            law: ConstraintGroup::Contact { mu: model.contact.body_friction },
            frame: c.frame,
            offset: [c.gap, 0.0, 0.0],
            parts: [(c.a, Weights::new(&[(c.vertex, 1.0)])), (c.b, far)],
            part_count: 2,
            obstacle_shift: [0.0; 3],
            key: (c.a, c.vertex, Partner::Body(c.b)),
            path: Vec::new(),
        });
    }
}
