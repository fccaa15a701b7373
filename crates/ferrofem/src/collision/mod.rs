//! Stage `detect_contacts` (zeng2022 §3.2, Fig. 2): at the start-of-step
//! positions, every surface vertex of every body closer to an obstacle than
//! its search distance becomes a contact with a normal, two tangents and a
//! gap; so does an interior vertex that the step would carry to the
//! obstacle at its start-of-step velocity (a fast impact, which stops the
//! surface before the interior behind it, meets the obstacle with the
//! interior too instead of driving it through the body's own surface,
//! inverting the tets between, and under the obstacle), and every vertex of
//! a mesh obstacle closer to a body's surface triangle (found through the
//! body's [`SurfaceTree`]), and, with `edge_edge`, every surface edge that
//! passes a mesh obstacle's sharp edge within the search distance
//! (`edges.rs`). The search distance
//! is the alarm distance plus, when `speculative` (the default), how far the
//! pair can close within the step ([`Reach`]): a fast vertex gets its
//! contact before it could tunnel, and the contact's gap keeps it inactive
//! (λ = 0) unless the step would close it.

mod edges;
mod geometry;
mod pairs;
pub mod penetration;
mod reach;
mod settings;
mod tree;

pub(crate) use geometry::point;
pub use geometry::{closest_between_segments, closest_on_triangle, tangents, BodyPoint, Weights};
pub use pairs::{detect_pair_contacts, PairContact};
pub use penetration::{Penetrated, Penetration};
pub use reach::Reach;
pub use settings::{ContactSettings, ImplicitResolution, OnViolation, Resolution, ResolutionKind, Update};
pub use tree::{SurfaceHit, SurfaceTree};

use nalgebra::Vector3;
use rayon::prelude::*;

use crate::body::Body;
use crate::state::BodyState;
use crate::Model;

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

/// A contact between a body and an obstacle: a body vertex against the
/// obstacle's surface, or a mesh obstacle's vertex against a body triangle.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Contact {
    /// The body point held.
    pub point: BodyPoint,
    /// Obstacle index.
    pub obstacle: usize,
    /// What of the obstacle the body point meets.
    pub feature: ObstacleFeature,
    /// Frame rows: the normal along which the body point moves away from
    /// the obstacle (the obstacle's outward normal, or minus the body
    /// triangle's), then two tangents.
    pub frame: [[f64; 3]; 3],
    /// Gap at the start of the step, `distance − contact_distance` (m).
    pub gap: f64,
    /// Coulomb coefficient.
    pub mu: f64,
}

/// What of an obstacle a contact's body point meets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ObstacleFeature {
    /// Its surface, at the closest point (an analytic shape, or a mesh's
    /// signed distance).
    Surface,
    /// Vertex `k` of a mesh obstacle (against a body triangle).
    Vertex(usize),
    /// Sharp edge `k` of a mesh obstacle (against a body edge).
    Edge(usize),
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
        feature: ObstacleFeature::Surface,
        frame: [n.into(), t1.into(), t2.into()],
        gap: distance - s.contact_distance,
        mu,
    }
}

/// Contacts of one body with `model`'s obstacles at time `t`: surface
/// vertices within the alarm distance plus their [`Reach`] and the
/// obstacle's travel, interior vertices that the step would carry to the
/// obstacle at their start-of-step velocity (no alarm distance: a body
/// resting on or pressed against an obstacle gets none), sorted by
/// (vertex, obstacle) (surface vertices only where they are contact points,
/// [`Body::space_contact_points`]), then mesh obstacles' vertices near a surface
/// triangle of `tree` (the body's surface at
/// `positions`, leaves grown by the body's reach), by (obstacle, vertex),
/// each obstacle's followed, with `edge_edge`, by its sharp edges' contacts
/// with the surface's edges (`edges.rs`). Kinematic vertices, and
/// triangles whose vertices are all kinematic, are skipped (they are
/// driven).
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
    if obstacles.is_empty() {
        return Vec::new();
    }
    let mut on_surface = vec![false; body.vertex_count()];
    body.surface.volume_vertex.iter().for_each(|&v| on_surface[v] = true);
    let on_surface = &on_surface;
    let mut contacts: Vec<Contact> = (0..on_surface.len())
        .into_par_iter()
        .filter(|&v| !body.is_kinematic[v] && (body.contact_point[v] || !on_surface[v]))
        .flat_map_iter(|v| {
            let p = point(positions, v);
            // Interior vertices: only where the step would carry them to the obstacle.
            let alarm = if on_surface[v] { alarm } else { 0.0 };
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
                found.feature = ObstacleFeature::Vertex(k);
                Some(found)
            })
            .collect();
        contacts.extend(found);
        if settings.edge_edge {
            contacts.extend(edges::edge_contacts(body, positions, reach, tree, obs, o, t, settings));
        }
    }
    contacts
}
