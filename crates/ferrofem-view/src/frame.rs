//! What the page receives: once per connection a JSON description of the
//! scene (topology, obstacle shapes, limits), then binary frames of what
//! changed (positions and the chosen field per body, obstacle poses,
//! contact-force arrows) with the step's figures as JSON inside.
//!
//! A frame, little-endian: `b"FFV1"`, `u64` sequence number, `u32` length
//! and that many bytes of JSON (the [`Figures`]); `u32` body count, per
//! body `u32` vertex count `n`, `3n` `f32` positions, `n` `f32` field
//! values; `u32` obstacle count, per obstacle 3 `f32` translation and 4
//! `f32` quaternion `(x, y, z, w)`; `u32` arrow count, per arrow 3 `f32`
//! point and 3 `f32` force (N).

use serde::Serialize;

/// A body's surface, as the page draws it.
#[derive(Debug, Clone, Serialize)]
pub struct BodyView {
    /// Scene name.
    pub name: String,
    /// Vertices (all of them; the surface indexes into them).
    pub vertices: usize,
    /// Surface triangles, flat (3 per triangle), outward.
    pub triangles: Vec<u32>,
}

/// An obstacle's shape in its local frame.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ShapeView {
    /// The half-space `z ≤ 0`, drawn as a square of `size` (m).
    HalfSpace {
        /// Edge of the drawn square (m).
        size: f64,
    },
    /// A ball.
    Sphere {
        /// Radius (m).
        radius: f64,
    },
    /// A box.
    Box {
        /// Edge lengths (m).
        size: [f64; 3],
    },
    /// A closed cylinder along z.
    Cylinder {
        /// Radius (m).
        radius: f64,
        /// Length (m).
        length: f64,
    },
    /// A capsule along z.
    Capsule {
        /// Radius (m).
        radius: f64,
        /// Axis length (m).
        length: f64,
    },
    /// A torus around z.
    Torus {
        /// Ring radius (m).
        major_radius: f64,
        /// Tube radius (m).
        minor_radius: f64,
    },
    /// A triangle mesh.
    Mesh {
        /// Vertices, flat (m).
        vertices: Vec<f32>,
        /// Triangles, flat.
        triangles: Vec<u32>,
    },
}

/// An obstacle, as the page draws it.
#[derive(Debug, Clone, Serialize)]
pub struct ObstacleView {
    /// Scene name.
    pub name: String,
    /// Shape in the local frame.
    pub shape: ShapeView,
    /// Whether the mouse may move it (`draggable = true`).
    pub draggable: bool,
}

/// The scene message, sent once per connection.
#[derive(Debug, Clone, Serialize)]
pub struct SceneView {
    /// Always `"scene"`.
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// `"live"` or `"replay"`.
    pub mode: &'static str,
    /// Scene name.
    pub name: String,
    /// Bodies.
    pub bodies: Vec<BodyView>,
    /// Obstacles.
    pub obstacles: Vec<ObstacleView>,
    /// The fields the page may colour by: `(name, unit)`.
    pub fields: Vec<(&'static str, &'static str)>,
    /// The time-step slider's range `[min, max]` (s); `None`: fixed (local-global).
    pub time_step_range: Option<[f64; 2]>,
    /// The scene's time step (s).
    pub time_step: f64,
    /// Replay: the frames' times (s).
    pub times: Vec<f64>,
    /// A length that sizes arrows and the camera: the bodies' bounding-box diagonal (m).
    pub extent: f64,
    /// Centre of the bodies' bounding box (m).
    pub center: [f64; 3],
}

/// The grab, as the page shows it.
#[derive(Debug, Clone, Copy, Serialize, PartialEq)]
pub struct GrabView {
    /// Body index.
    pub body: usize,
    /// Grabbed vertex.
    pub vertex: usize,
    /// Where the mouse wants it (m).
    pub target: [f64; 3],
    /// Where the attachment pulls it this step (the target, rate-limited) (m).
    pub holding: [f64; 3],
    /// Where it is (m).
    pub position: [f64; 3],
    /// The force the grab applied on it in the last step (N).
    pub force: [f64; 3],
}

/// A frame's figures (JSON inside the binary frame, and `/api/state`).
#[derive(Debug, Clone, Serialize, Default)]
pub struct Figures {
    /// Simulated time (s).
    pub time: f64,
    /// Steps taken (replay: the frame index).
    pub step: usize,
    /// Whether the simulation runs.
    pub playing: bool,
    /// The time step (s).
    pub time_step: f64,
    /// Wall time of the last step (ms).
    pub step_ms: f64,
    /// Milliseconds per stage of the last step.
    pub stage_ms: Vec<(&'static str, f64)>,
    /// Steps per second over the last second of wall time.
    pub steps_per_second: f64,
    /// Simulated seconds per wall second over the last second.
    pub realtime_factor: f64,
    /// Contacts of the last step.
    pub contacts: usize,
    /// The field the frame's values hold, its unit and its range over the bodies.
    pub field: (&'static str, &'static str, f64, f64),
    /// The grab, if any.
    pub grab: Option<GrabView>,
    /// Attachments in the world (scene's and the grab's).
    pub attachments: usize,
    /// Wall time the viewer spent on the frame: fields, poses, encoding (ms).
    pub publish_ms: f64,
    /// The last error of the simulation (it pauses on one), if any.
    pub error: Option<String>,
}

/// One frame's data.
#[derive(Debug, Clone, Default)]
pub struct Frame {
    /// Sequence number (increases with every new frame).
    pub seq: u64,
    /// Figures.
    pub figures: Figures,
    /// Per body: positions (flat) and field values.
    pub bodies: Vec<(Vec<f32>, Vec<f32>)>,
    /// Per obstacle: translation and quaternion `(x, y, z, w)`.
    pub poses: Vec<[f32; 7]>,
    /// Contact-force arrows: point and force.
    pub arrows: Vec<[f32; 6]>,
}

impl Frame {
    /// The binary message (module docs).
    pub fn encode(&self) -> Vec<u8> {
        let json = serde_json::to_vec(&self.figures).unwrap_or_default();
        let floats: usize = self.bodies.iter().map(|(x, f)| x.len() + f.len()).sum::<usize>()
            + 7 * self.poses.len()
            + 6 * self.arrows.len();
        let mut out = Vec::with_capacity(32 + json.len() + 4 * floats + 4 * self.bodies.len());
        out.extend_from_slice(b"FFV1");
        out.extend_from_slice(&self.seq.to_le_bytes());
        put_u32(&mut out, json.len());
        out.extend_from_slice(&json);
        put_u32(&mut out, self.bodies.len());
        for (x, f) in &self.bodies {
            put_u32(&mut out, f.len());
            put_f32s(&mut out, x);
            put_f32s(&mut out, f);
        }
        put_u32(&mut out, self.poses.len());
        self.poses.iter().for_each(|p| put_f32s(&mut out, p));
        put_u32(&mut out, self.arrows.len());
        self.arrows.iter().for_each(|a| put_f32s(&mut out, a));
        out
    }
}

/// Bounding-box diagonal (at least 1 mm) and centre of flat point sets (m).
pub fn bounds<'a>(sets: impl Iterator<Item = &'a [f64]>) -> (f64, [f64; 3]) {
    bounds_of(sets.flat_map(|s| s.chunks_exact(3)).map(|p| [p[0], p[1], p[2]]))
}

/// Bounding-box diagonal (at least 1 mm) and centre of points (m).
pub fn bounds_of(points: impl Iterator<Item = [f64; 3]>) -> (f64, [f64; 3]) {
    let mut lo = [f64::INFINITY; 3];
    let mut hi = [f64::NEG_INFINITY; 3];
    for p in points {
        (0..3).for_each(|d| {
            lo[d] = lo[d].min(p[d]);
            hi[d] = hi[d].max(p[d]);
        });
    }
    let diagonal = (0..3).map(|d| (hi[d] - lo[d]).powi(2)).sum::<f64>().sqrt();
    (diagonal.max(1e-3), [0, 1, 2].map(|d| 0.5 * (lo[d] + hi[d])))
}

fn put_u32(out: &mut Vec<u8>, n: usize) {
    out.extend_from_slice(&(n as u32).to_le_bytes());
}

fn put_f32s(out: &mut Vec<u8>, values: &[f32]) {
    values.iter().for_each(|v| out.extend_from_slice(&v.to_le_bytes()));
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The layout the page's decoder reads: header, JSON, bodies, poses, arrows.
    #[test]
    fn encoding_has_the_documented_layout() {
        let frame = Frame {
            seq: 7,
            figures: Figures { step: 3, ..Default::default() },
            bodies: vec![(vec![1.0, 2.0, 3.0], vec![0.5])],
            poses: vec![[0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0]],
            arrows: vec![],
        };
        let b = frame.encode();
        assert_eq!(&b[..4], b"FFV1");
        assert_eq!(u64::from_le_bytes(b[4..12].try_into().unwrap()), 7);
        let len = u32::from_le_bytes(b[12..16].try_into().unwrap()) as usize;
        let figures: serde_json::Value = serde_json::from_slice(&b[16..16 + len]).unwrap();
        assert_eq!(figures["step"], 3);
        let mut at = 16 + len;
        let u = |at: usize| u32::from_le_bytes(b[at..at + 4].try_into().unwrap());
        let f = |at: usize| f32::from_le_bytes(b[at..at + 4].try_into().unwrap());
        assert_eq!((u(at), u(at + 4)), (1, 1));
        at += 8;
        assert_eq!([f(at), f(at + 4), f(at + 8), f(at + 12)], [1.0, 2.0, 3.0, 0.5]);
        at += 16;
        assert_eq!(u(at), 1);
        assert_eq!(f(at + 4 + 8), 1.0);
        at += 4 + 28;
        assert_eq!(u(at), 0);
        assert_eq!(b.len(), at + 4);
    }
}
