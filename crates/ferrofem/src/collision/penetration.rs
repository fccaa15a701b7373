//! The step's honest penetration figure: every free vertex of a body
//! (surface and interior) against every obstacle at the end of the step,
//! vertices against the other bodies' triangles at the pairs detection
//! found, and the elements the step inverted. Unlike the constraint
//! residual, this sees what no contact was made for (a vertex that
//! tunnelled, an interior vertex pushed through a collapsed surface).

use nalgebra::Vector3;
use rayon::prelude::*;
use serde::Serialize;

use super::geometry::{point, BodyPoint};
use super::pairs::PairContact;
use crate::body::Body;
use crate::obstacle::Obstacle;

/// What a vertex penetrates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Penetrated {
    /// An obstacle, by index.
    Obstacle(usize),
    /// Another body (or the same one, under self-collision), by index.
    Body(usize),
}

/// The deepest penetration of one body's vertices.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Penetration {
    /// Depth (m, > 0).
    pub depth: f64,
    /// The vertex (volume numbering).
    pub vertex: usize,
    /// What it is inside.
    pub into: Penetrated,
}

impl Penetration {
    /// The deeper of two.
    fn deeper(a: Option<Penetration>, b: Option<Penetration>) -> Option<Penetration> {
        match (a, b) {
            (Some(x), Some(y)) => Some(if y.depth > x.depth { y } else { x }),
            (x, y) => x.or(y),
        }
    }
}

/// Deepest penetration of `body`'s free (non-kinematic) vertices at
/// `positions` into the obstacles at time `t`, and of its vertices in
/// `pairs` into the other bodies' triangles (`all` holds every body's
/// positions). Depth counts from each surface itself, not from the contact
/// distance.
pub fn deepest(
    b: usize,
    body: &Body,
    all: &[&[f64]],
    obstacles: &[Obstacle],
    pairs: &[PairContact],
    t: f64,
) -> Option<Penetration> {
    let x = all[b];
    let into_obstacles = (0..body.vertex_count())
        .into_par_iter()
        .filter(|&v| !body.is_kinematic[v])
        .filter_map(|v| {
            let p = point(x, v);
            obstacles
                .iter()
                .enumerate()
                .filter_map(|(o, obs)| {
                    let depth = obs.penetration(&p, t)?;
                    Some(Penetration { depth, vertex: v, into: Penetrated::Obstacle(o) })
                })
                .max_by(|a, c| a.depth.total_cmp(&c.depth))
        })
        .max_by(|a, c| a.depth.total_cmp(&c.depth).then(c.vertex.cmp(&a.vertex)));
    let into_bodies = pairs
        .iter()
        .filter(|c| c.a == b)
        .filter_map(|c| {
            let q = BodyPoint::Triangle { vertices: c.triangle, weights: c.weights }.position(all[c.b]);
            let depth = -(point(x, c.vertex) - q).dot(&Vector3::from(c.frame[0]));
            (depth > 0.0).then_some(Penetration { depth, vertex: c.vertex, into: Penetrated::Body(c.b) })
        })
        .max_by(|a, c| a.depth.total_cmp(&c.depth));
    Penetration::deeper(into_obstacles, into_bodies)
}

/// Tets of `body` whose signed volume at `positions` is not positive.
pub fn inverted_elements(body: &Body, positions: &[f64]) -> usize {
    let (_, tets, _) = body.mesh_view();
    tets.par_iter()
        .filter(|t| {
            let [a, b, c, d] = t.map(|i| point(positions, i));
            (b - a).cross(&(c - a)).dot(&(d - a)) <= 0.0
        })
        .count()
}
