//! Stage `detect_contacts` (zeng2022 §3.2, Fig. 2): at the start-of-step
//! positions, every surface vertex of every body closer to an obstacle than
//! its search distance becomes a contact with a normal, two tangents and a
//! gap; so does every vertex of a mesh obstacle closer to a body's surface
//! triangle (found through the body's [`SurfaceTree`]). The search distance
//! is the alarm distance plus, when `speculative` (the default), how far the
//! pair can close within the step ([`Reach`]): a fast vertex gets its
//! contact before it could tunnel, and the contact's gap keeps it inactive
//! (λ = 0) unless the step would close it.

mod pairs;
pub mod penetration;
mod tree;

pub use pairs::{closest_on_triangle, detect_pair_contacts, PairContact};
pub use penetration::{Penetrated, Penetration};
pub use tree::{SurfaceHit, SurfaceTree};

use nalgebra::Vector3;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::body::Body;
pub use crate::solver::corrective::{ImplicitResolution, Resolution, ResolutionKind, Update};
use crate::state::BodyState;
use crate::Model;

/// `[contact]`: proximity distances (m) and friction between bodies.
/// Solving is set apart, under `[constraint_solver]`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "ContactSpec")]
pub struct ContactSettings {
    /// Pairs closer than this become constraints.
    pub alarm_distance: f64,
    /// The gap counts from this distance (a skin thickness).
    pub contact_distance: f64,
    /// Coulomb coefficient between two soft bodies.
    pub body_friction: f64,
    /// Grow each vertex's search distance by how far it can move within
    /// the step (speculative contacts), so that fast impacts do not tunnel.
    pub speculative: bool,
    /// Penetration (m) beyond which a step is a violation; also a step
    /// that inverts an element. `None`: the alarm distance.
    pub max_penetration: Option<f64>,
    /// What a violation does.
    pub on_violation: OnViolation,
    /// How the constraints are linearized within a step: once at its
    /// start (`explicit`, zeng2022) or re-linearized by recursive corrective
    /// motion (`implicit`, zeng-implicit §5–6).
    pub resolution: Resolution,
}

/// What a step that penetrates deeper than `max_penetration`, or inverts
/// an element, does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OnViolation {
    /// Say so in the step's stats (and the run's warnings), and go on.
    #[default]
    Warn,
    /// Stop the run with an error naming the step, the body and the cause.
    Stop,
}

impl Default for ContactSettings {
    fn default() -> Self {
        ContactSettings {
            alarm_distance: 0.01,
            contact_distance: 0.0,
            body_friction: 0.3,
            speculative: true,
            max_penetration: None,
            on_violation: OnViolation::Warn,
            resolution: Resolution::Explicit,
        }
    }
}

impl ContactSettings {
    /// The penetration limit in force (m).
    pub fn penetration_limit(&self) -> f64 {
        self.max_penetration.unwrap_or(self.alarm_distance)
    }
}

/// The scene file's `[contact]`, with the keys that moved to
/// `[constraint_solver]` caught to say so.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ContactSpec {
    alarm_distance: Option<f64>,
    contact_distance: Option<f64>,
    body_friction: Option<f64>,
    speculative: Option<bool>,
    max_penetration: Option<f64>,
    on_violation: Option<OnViolation>,
    resolution: Option<ResolutionKind>,
    newton_iterations: Option<usize>,
    update: Option<Update>,
    direction_tolerance: Option<f64>,
    violation_tolerance: Option<f64>,
    pgs: Option<serde::de::IgnoredAny>,
    delassus: Option<serde::de::IgnoredAny>,
}

impl TryFrom<ContactSpec> for ContactSettings {
    type Error = String;

    fn try_from(s: ContactSpec) -> Result<Self, String> {
        if s.pgs.is_some() {
            return Err(
                "`pgs` moved: write `max_iterations` and `tolerance` under [constraint_solver]".into()
            );
        }
        if s.delassus.is_some() {
            return Err("`delassus` moved: write it under [constraint_solver]".into());
        }
        if let Some(m) = s.max_penetration.filter(|m| !(m.is_finite() && *m > 0.0)) {
            return Err(format!("max_penetration = {m} must be finite and positive (m)"));
        }
        let d = ContactSettings::default();
        let resolution = resolution(&s)?;
        Ok(ContactSettings {
            alarm_distance: s.alarm_distance.unwrap_or(d.alarm_distance),
            contact_distance: s.contact_distance.unwrap_or(d.contact_distance),
            body_friction: s.body_friction.unwrap_or(d.body_friction),
            speculative: s.speculative.unwrap_or(d.speculative),
            max_penetration: s.max_penetration,
            on_violation: s.on_violation.unwrap_or(d.on_violation),
            resolution,
        })
    }
}

/// `resolution` and the keys of the implicit one, checked: those keys
/// need `resolution = "implicit"`, and their values must be usable.
fn resolution(s: &ContactSpec) -> Result<Resolution, String> {
    let keys = [
        s.newton_iterations.map(|_| "newton_iterations"),
        s.update.map(|_| "update"),
        s.direction_tolerance.map(|_| "direction_tolerance"),
        s.violation_tolerance.map(|_| "violation_tolerance"),
    ];
    if s.resolution != Some(ResolutionKind::Implicit) {
        return match keys.iter().flatten().next() {
            Some(k) => Err(format!("`{k}` belongs to resolution = \"implicit\"")),
            None => Ok(Resolution::Explicit),
        };
    }
    if s.newton_iterations == Some(0) {
        return Err("newton_iterations must be at least 1".into());
    }
    crate::solver::non_negative(&[
        ("direction_tolerance", s.direction_tolerance),
        ("violation_tolerance", s.violation_tolerance),
    ])?;
    let d = ImplicitResolution::default();
    Ok(Resolution::Implicit(ImplicitResolution {
        newton_iterations: s.newton_iterations.unwrap_or(d.newton_iterations),
        update: s.update.unwrap_or(d.update),
        direction_tolerance: s.direction_tolerance.unwrap_or(d.direction_tolerance),
        violation_tolerance: s.violation_tolerance.unwrap_or(d.violation_tolerance),
    }))
}

/// The step's contacts: per body its obstacle contacts, then the
/// vertex–triangle contacts between bodies (and within self-colliding ones).
#[derive(Debug, Clone, Default)]
pub struct Contacts {
    /// `obstacle[b]`: body `b`'s contacts with obstacles.
    pub obstacle: Vec<Vec<Contact>>,
    /// Body–body contacts, sorted by (a, vertex, b).
    pub pairs: Vec<PairContact>,
}

impl Contacts {
    /// Whether any contact touches body `b`.
    pub fn involve(&self, b: usize) -> bool {
        self.obstacle.get(b).is_some_and(|c| !c.is_empty()) || self.pairs.iter().any(|p| p.a == b || p.b == b)
    }
}

/// Stage `detect_contacts` over the whole world at the start-of-step
/// positions and time `t`: the bodies' surface trees are built on first
/// use and refitted when anything meets their triangles, then each body's
/// obstacle contacts and the body–body pairs.
pub fn detect_contacts(
    model: &Model,
    states: &[BodyState],
    trees: &mut Vec<SurfaceTree>,
    t: f64,
    out: &mut Contacts,
) {
    let positions: Vec<&[f64]> = states.iter().map(|s| s.positions.as_slice()).collect();
    let reach: Vec<Reach> = states.iter().map(|s| Reach::of(model, s)).collect();
    if model.meets_triangles() {
        refit_surface_trees(trees, model, &positions, &reach);
    }
    out.obstacle.resize_with(model.bodies.len(), Vec::new);
    for (b, body) in model.bodies.iter().enumerate() {
        out.obstacle[b] = obstacle_contacts(body, positions[b], &reach[b], trees.get(b), model, t);
    }
    out.pairs = if model.bodies.len() > 1 || model.bodies.iter().any(|b| b.self_collision) {
        detect_pair_contacts(&model.bodies, &positions, &reach, trees, &model.contact)
    } else {
        Vec::new()
    };
}

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
    fn of_obstacle(&self, v: &Vector3<f64>) -> f64 {
        self.velocity.map_or(0.0, |_| self.step * v.norm())
    }

    /// Whether vertex `i`, at distance `d` along normal `n` from a surface
    /// moving at `v_surface`, can come within `alarm` of it in the step:
    /// `d < alarm + h max(0, −(vᵢ − v_surface)·n) + h²‖g‖`.
    fn closes(&self, i: usize, d: f64, n: &Vector3<f64>, v_surface: &Vector3<f64>, alarm: f64) -> bool {
        let Some(velocity) = self.velocity else { return d < alarm };
        let approach = -(point(velocity, i) - v_surface).dot(n);
        d < alarm + self.step * approach.max(0.0) + self.fall
    }
}

/// Builds the bodies' surface BVHs on first use, then refits them to
/// `positions`; leaf margins: the alarm distance plus the body's reach.
fn refit_surface_trees(trees: &mut Vec<SurfaceTree>, model: &Model, positions: &[&[f64]], reach: &[Reach]) {
    let margin = |b: usize| model.contact.alarm_distance + reach[b].max();
    if trees.is_empty() {
        trees.extend(
            model
                .bodies
                .iter()
                .zip(positions)
                .enumerate()
                .map(|(b, (body, x))| SurfaceTree::new(&body.surface, x, margin(b))),
        );
    } else {
        trees.iter_mut().zip(positions).enumerate().for_each(|(b, (tree, x))| tree.refit(x, margin(b)));
    }
}

/// The point of a body a contact holds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum BodyPoint {
    /// A surface vertex.
    Vertex(usize),
    /// A point of a surface triangle (volume numbering), by barycentric weights.
    Triangle {
        /// Triangle vertices.
        vertices: [usize; 3],
        /// Weights, summing to 1.
        weights: [f64; 3],
    },
}

/// Up to three `(vertex, weight)` pairs, a point `Σ wᵢ xᵢ` of a body,
/// held without allocating (a vertex, or a barycentric triangle point).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Weights {
    pairs: [(usize, f64); 3],
    len: usize,
}

impl Weights {
    /// The pairs (at most three).
    pub fn new(pairs: &[(usize, f64)]) -> Weights {
        assert!(pairs.len() <= 3, "a body point has at most three vertices");
        let mut w = Weights { len: pairs.len(), ..Default::default() };
        w.pairs[..pairs.len()].copy_from_slice(pairs);
        w
    }
}

impl std::ops::Deref for Weights {
    type Target = [(usize, f64)];

    fn deref(&self) -> &[(usize, f64)] {
        &self.pairs[..self.len]
    }
}

impl BodyPoint {
    /// `(vertex, weight)` pairs with `p = Σ wᵢ xᵢ`.
    pub fn weights(&self) -> Weights {
        match *self {
            BodyPoint::Vertex(v) => Weights::new(&[(v, 1.0)]),
            BodyPoint::Triangle { vertices, weights } => Weights::new(&[
                (vertices[0], weights[0]),
                (vertices[1], weights[1]),
                (vertices[2], weights[2]),
            ]),
        }
    }

    /// The vertex, or the triangle's first vertex.
    pub fn first_vertex(&self) -> usize {
        match *self {
            BodyPoint::Vertex(v) => v,
            BodyPoint::Triangle { vertices, .. } => vertices[0],
        }
    }

    /// `Σ wᵢ xᵢ` at positions `x`.
    pub fn position(&self, x: &[f64]) -> Vector3<f64> {
        self.weights().iter().map(|&(v, w)| point(x, v) * w).sum()
    }
}

/// Vertex `i` of flat positions `x`.
fn point(x: &[f64], i: usize) -> Vector3<f64> {
    Vector3::new(x[3 * i], x[3 * i + 1], x[3 * i + 2])
}

/// A contact between a body and an obstacle: a body vertex against the
/// obstacle's surface, or a mesh obstacle's vertex against a body triangle.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Contact {
    /// The body point held.
    pub point: BodyPoint,
    /// Obstacle index.
    pub obstacle: usize,
    /// The obstacle's vertex, for a vertex-against-triangle contact.
    pub obstacle_vertex: Option<usize>,
    /// Frame rows: the normal along which the body point moves away from
    /// the obstacle (the obstacle's outward normal, or minus the body
    /// triangle's), then two tangents.
    pub frame: [[f64; 3]; 3],
    /// Gap at the start of the step, `distance − contact_distance` (m).
    pub gap: f64,
    /// Coulomb coefficient.
    pub mu: f64,
}

/// Two unit tangents completing `n` into a right-handed frame.
pub fn tangents(n: &Vector3<f64>) -> (Vector3<f64>, Vector3<f64>) {
    let a = if n.x.abs() < 0.9 { Vector3::x() } else { Vector3::y() };
    let t1 = (a - n * n.dot(&a)).normalize();
    (t1, n.cross(&t1))
}

fn contact(
    point: BodyPoint,
    obstacle: usize,
    n: Vector3<f64>,
    distance: f64,
    s: &ContactSettings,
    mu: f64,
) -> Contact {
    let (t1, t2) = tangents(&n);
    Contact {
        point,
        obstacle,
        obstacle_vertex: None,
        frame: [n.into(), t1.into(), t2.into()],
        gap: distance - s.contact_distance,
        mu,
    }
}

/// Contacts of one body with `model`'s obstacles at time `t`: surface
/// vertices within the alarm distance plus their [`Reach`] and the
/// obstacle's travel, sorted by (vertex, obstacle), then mesh obstacles'
/// vertices near a surface triangle of `tree` (the body's surface at
/// `positions`, leaves grown by the body's reach), by (obstacle, vertex).
/// Kinematic vertices, and triangles whose vertices are all kinematic, are
/// skipped (they are driven).
pub fn obstacle_contacts(
    body: &Body,
    positions: &[f64],
    reach: &Reach,
    tree: Option<&SurfaceTree>,
    model: &Model,
    t: f64,
) -> Vec<Contact> {
    let (obstacles, settings) = (&model.obstacles, &model.contact);
    let alarm = settings.alarm_distance;
    let mut contacts: Vec<Contact> = body
        .surface
        .volume_vertex
        .par_iter()
        .filter(|&&v| !body.is_kinematic[v])
        .flat_map_iter(|&v| {
            let p = point(positions, v);
            obstacles.iter().enumerate().filter_map(move |(o, obs)| {
                let v_surface = obs.velocity_at(&p, t);
                let (d, n) = obs.proximity(&p, t, alarm + reach.at(v) + reach.of_obstacle(&v_surface))?;
                reach
                    .closes(v, d, &n, &v_surface, alarm)
                    .then(|| contact(BodyPoint::Vertex(v), o, n, d, settings, obs.friction))
            })
        })
        .collect();
    contacts.sort_by_key(|c| (c.point.first_vertex(), c.obstacle));
    let Some(tree) = tree else { return contacts };
    let driven = |t: &[usize; 3]| t.iter().all(|&i| body.is_kinematic[i]);
    for (o, obs) in obstacles.iter().enumerate() {
        let found: Vec<Contact> = obs
            .vertices_at(t)
            .par_iter()
            .enumerate()
            .filter_map(|(k, p)| {
                let hit = tree.closest(positions, p, reach.of_obstacle(&obs.velocity_at(p, t)), driven)?;
                let m = hit.facing_normal(positions, p, body.is_membrane());
                let held = BodyPoint::Triangle { vertices: hit.triangle, weights: hit.weights };
                let mut found = contact(held, o, -m, m.dot(&(p - hit.point)), settings, obs.friction);
                found.obstacle_vertex = Some(k);
                Some(found)
            })
            .collect();
        contacts.extend(found);
    }
    contacts
}
