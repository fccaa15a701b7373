//! Per-vertex scalar fields a user colours a body by: displacement,
//! speed, von Mises stress and contact force, each a magnitude per vertex.

use nalgebra::{Matrix3, Vector3};
use serde::{Deserialize, Serialize};

use crate::element::polar::rotation_svd;
use crate::{Body, BodyState};

/// The viridis colour map at `t ∈ [0, 1]`, clamped (piecewise linear through five of its
/// stops, as the viewer's page colours): what a field's value is drawn in.
pub fn viridis(t: f32) -> [f32; 3] {
    const STOPS: [[f32; 3]; 5] = [
        [0.267, 0.005, 0.329],
        [0.229, 0.322, 0.546],
        [0.128, 0.567, 0.551],
        [0.369, 0.789, 0.383],
        [0.993, 0.906, 0.144],
    ];
    let x = t.clamp(0.0, 1.0) * 4.0;
    let i = (x.floor() as usize).min(3);
    let f = x - i as f32;
    [0, 1, 2].map(|k| STOPS[i][k] + f * (STOPS[i + 1][k] - STOPS[i][k]))
}

/// A per-vertex scalar field.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Field {
    /// `‖x − X‖` (m).
    #[default]
    Displacement,
    /// `‖v‖` (m/s).
    Velocity,
    /// Von Mises stress of the co-rotated linear stress, averaged over the
    /// vertex's tets by volume (Pa; zero on membranes).
    VonMises,
    /// `‖Hᵀλ‖` on the vertex in the last step (N).
    ContactForce,
}

impl Field {
    /// All fields, in menu order.
    pub const ALL: [Field; 4] = [Field::Displacement, Field::Velocity, Field::VonMises, Field::ContactForce];

    /// The field's name (as in scene and stats files).
    pub fn name(self) -> &'static str {
        match self {
            Field::Displacement => "displacement",
            Field::Velocity => "velocity",
            Field::VonMises => "von_mises",
            Field::ContactForce => "contact_force",
        }
    }

    /// Its unit.
    pub fn unit(self) -> &'static str {
        match self {
            Field::Displacement => "m",
            Field::Velocity => "m/s",
            Field::VonMises => "Pa",
            Field::ContactForce => "N",
        }
    }

    /// The field on each vertex of `body` in `state`; `contact_forces` is
    /// the body's `Hᵀλ` (flat, empty without constraints).
    pub fn values(self, body: &Body, state: &BodyState, contact_forces: &[f64], out: &mut Vec<f64>) {
        out.clear();
        let norm = |v: &[f64]| (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt();
        match self {
            Field::Displacement => out.extend(
                state
                    .positions
                    .chunks_exact(3)
                    .zip(body.rest_vertices())
                    .map(|(x, x0)| norm(&[x[0] - x0[0], x[1] - x0[1], x[2] - x0[2]])),
            ),
            Field::Velocity => out.extend(state.velocities.chunks_exact(3).map(norm)),
            Field::ContactForce if contact_forces.len() == body.dofs() => {
                out.extend(contact_forces.chunks_exact(3).map(norm))
            }
            Field::ContactForce => out.resize(body.vertex_count(), 0.0),
            Field::VonMises => von_mises(body, &state.positions, out),
        }
    }
}

/// `√(3/2 s:s)` of the deviator `s` of a stress.
pub fn von_mises_of(sigma: &Matrix3<f64>) -> f64 {
    let s = sigma - Matrix3::from_diagonal_element(sigma.trace() / 3.0);
    (1.5 * s.norm_squared()).sqrt()
}

/// Per vertex, the volume-weighted mean of its tets' von Mises stress of
/// the co-rotated linear stress `σ = λ tr(ε) I + 2μ ε`, `ε = sym(RᵀF − I)`
/// (zeng2022 §3.1), whatever the body's constitutive model (Pa).
fn von_mises(body: &Body, x: &[f64], out: &mut Vec<f64>) {
    let n = body.vertex_count();
    out.resize(n, 0.0);
    let mut volume = vec![0.0; n];
    for tet in &body.tets {
        let p = tet.vertices.map(|v| Vector3::new(x[3 * v], x[3 * v + 1], x[3 * v + 2]));
        let f = tet.deformation_gradient(&p);
        let (_, sigma) = tet.co_rotated_stress(&f, &rotation_svd(&f));
        let vm = von_mises_of(&sigma);
        for &v in &tet.vertices {
            out[v] += tet.measure * vm;
            volume[v] += tet.measure;
        }
    }
    for (o, w) in out.iter_mut().zip(&volume) {
        *o = if *w > 0.0 { *o / w } else { 0.0 };
    }
}
