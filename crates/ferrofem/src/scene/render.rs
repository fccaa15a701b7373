//! `[render]`: how `ferrofem render` draws a scene (docs/cli.md): the
//! camera, the field, contact arrows, the picture's size and the time of a
//! still. Plain data; the drawing is the viewer crate's.

use serde::{Deserialize, Serialize};

use crate::error::Invalid;
use crate::fields::Field;

/// `[render]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RenderSettings {
    /// The camera; absent: fitted to the bodies over the whole run, looking
    /// from the front and above (as the viewer's page opens).
    #[serde(default)]
    pub camera: Option<Camera>,
    /// The field that colours the bodies (the legend names it and its range).
    #[serde(default)]
    pub field: Field,
    /// Draw contact forces as arrows (length scaled to the largest force).
    #[serde(default)]
    pub arrows: bool,
    /// Picture size in pixels, `[width, height]` (16 to 8192 each).
    #[serde(default = "default_size")]
    pub size: [u32; 2],
    /// The time (s) of a still picture (`--out FILE.png`); absent: the last frame.
    #[serde(default)]
    #[schemars(range(min = 0.0))]
    pub time: Option<f64>,
}

impl Default for RenderSettings {
    fn default() -> Self {
        RenderSettings {
            camera: None,
            field: Field::default(),
            arrows: false,
            size: default_size(),
            time: None,
        }
    }
}

fn default_size() -> [u32; 2] {
    [800, 600]
}

/// `[render] camera = { position = [...], target = [...] }`: a perspective
/// camera (m, degrees).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Camera {
    /// Where the eye is (m).
    pub position: [f64; 3],
    /// The point at the picture's centre (m).
    pub target: [f64; 3],
    /// The direction that points up in the picture.
    #[serde(default = "z_up")]
    pub up: [f64; 3],
    /// Vertical field of view (degrees, 1 to 170).
    #[serde(default = "default_fov")]
    #[schemars(range(min = 1.0, max = 170.0))]
    pub fov: f64,
}

fn z_up() -> [f64; 3] {
    [0.0, 0.0, 1.0]
}

fn default_fov() -> f64 {
    40.0
}

impl RenderSettings {
    /// The checks serde cannot express, with the key's path (`render.size`, …).
    pub fn validate(&self) -> Result<(), Invalid> {
        if let Some([w, h]) = Some(self.size).filter(|s| s.iter().any(|d| !(16..=8192).contains(d))) {
            return Err(Invalid::new(
                "render.size".into(),
                format!("[{w}, {h}]: each side must be 16 to 8192 pixels"),
            ));
        }
        if let Some(t) = self.time.filter(|t| !(t.is_finite() && *t >= 0.0)) {
            return Err(Invalid::new("render.time".into(), format!("{t} must be finite and ≥ 0 (s)")));
        }
        self.camera.map_or(Ok(()), |c| c.validate())
    }
}

impl Camera {
    fn validate(&self) -> Result<(), Invalid> {
        let bad = |key: &str, why: String| Err(Invalid::new(format!("render.camera.{key}"), why));
        for (key, v) in [("position", self.position), ("target", self.target), ("up", self.up)] {
            if let Some(x) = v.iter().find(|x| !x.is_finite()) {
                return bad(key, format!("{x} is not a finite number"));
            }
        }
        if !(self.fov.is_finite() && (1.0..=170.0).contains(&self.fov)) {
            return bad("fov", format!("{} must be 1 to 170 degrees", self.fov));
        }
        let d = [0, 1, 2].map(|i| self.target[i] - self.position[i]);
        let norm = |v: [f64; 3]| v.iter().map(|x| x * x).sum::<f64>().sqrt();
        if norm(d) == 0.0 {
            return bad("target", "is the camera's position: the camera looks nowhere".into());
        }
        let u = self.up;
        let cross = [d[1] * u[2] - d[2] * u[1], d[2] * u[0] - d[0] * u[2], d[0] * u[1] - d[1] * u[0]];
        if norm(cross) <= 1e-9 * norm(d) * norm(u) {
            return bad("up", "must not be zero nor along the line of sight".into());
        }
        Ok(())
    }
}
