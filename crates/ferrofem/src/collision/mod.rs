//! Stage `detect_contacts` (zeng2022 §3.2, Fig. 2): at the start-of-step
//! positions, every surface vertex of every body closer to an obstacle than
//! the alarm distance becomes a contact with a normal, two tangents and a gap.

mod pairs;

pub use pairs::{closest_on_triangle, detect_pair_contacts, PairContact};

use nalgebra::Vector3;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::body::BodyModel;
use crate::obstacle::Obstacle;

/// Proximity settings (m).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ContactSettings {
    /// Pairs closer than this become constraints.
    pub alarm_distance: f64,
    /// The gap counts from this distance (a skin thickness).
    pub contact_distance: f64,
    /// Coulomb coefficient between two soft bodies.
    pub body_friction: f64,
    /// Projected Gauss-Seidel settings.
    pub pgs: crate::solver::PgsSettings,
    /// How the Delassus operator is obtained.
    pub delassus: crate::delassus::DelassusMethod,
}

impl Default for ContactSettings {
    fn default() -> Self {
        ContactSettings {
            alarm_distance: 0.01,
            contact_distance: 0.0,
            body_friction: 0.3,
            pgs: Default::default(),
            delassus: Default::default(),
        }
    }
}

/// A contact between a body's vertex and an obstacle.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Contact {
    /// Body vertex.
    pub vertex: usize,
    /// Obstacle index.
    pub obstacle: usize,
    /// Frame rows: outward normal of the obstacle, then two tangents.
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

/// Contacts of one body with the obstacles at time `t`, sorted by
/// (vertex, obstacle); kinematic vertices are skipped (they are driven).
pub fn detect_contacts(
    body: &BodyModel,
    positions: &[f64],
    obstacles: &[Obstacle],
    t: f64,
    settings: &ContactSettings,
) -> Vec<Contact> {
    let mut contacts: Vec<Contact> = body
        .surface
        .volume_vertex
        .par_iter()
        .filter(|&&v| !body.is_kinematic[v])
        .flat_map_iter(|&v| {
            let p = Vector3::new(positions[3 * v], positions[3 * v + 1], positions[3 * v + 2]);
            obstacles.iter().enumerate().filter_map(move |(o, obs)| {
                let (d, n) = obs.signed_distance(&p, t);
                (d < settings.alarm_distance).then(|| {
                    let (t1, t2) = tangents(&n);
                    Contact {
                        vertex: v,
                        obstacle: o,
                        frame: [n.into(), t1.into(), t2.into()],
                        gap: d - settings.contact_distance,
                        mu: obs.friction,
                    }
                })
            })
        })
        .collect();
    contacts.sort_by_key(|c| (c.vertex, c.obstacle));
    contacts
}
