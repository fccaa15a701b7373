//! `[[needle]]`: a rigid needle inserted into a body (zeng2022 §6.2.5):
//! its spec, checks and the model's [`Needle`] made from it.

use nalgebra::Vector3;
use serde::{Deserialize, Serialize};

use crate::needle::Needle;
use crate::obstacle::ObstacleMotion;
use crate::Invalid;

/// `[[needle]]`: a straight rigid needle moved along a path. Its tip
/// presses on the body's surface until the contact's force reaches
/// `puncture_force`; then the tissue it passes through is held on its
/// shaft, one point every `spacing`, with `friction` per length along it.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NeedleSpec {
    /// Name used in messages and stats.
    pub name: String,
    /// The solid body it is inserted into.
    pub body: String,
    /// Tip position at t = 0 (m).
    pub tip: [f64; 3],
    /// Direction of insertion, from the needle's back to its tip (normalized here).
    pub direction: [f64; 3],
    /// Length of the shaft behind the tip (m).
    pub length: f64,
    /// Translation: `velocity` or keyframed `path` (a needle does not turn).
    #[serde(default)]
    pub motion: ObstacleMotion,
    /// Normal force of the tip on the surface at which the surface gives (N).
    pub puncture_force: f64,
    /// Friction along the shaft per length of tissue it passes through (N/m).
    pub friction: f64,
    /// Distance between the points of tissue held on the shaft (m; default
    /// the body's mean tet edge at rest: points closer than the mesh's
    /// edges make the rows across the shaft nearly dependent, and PGS stalls).
    #[serde(default)]
    pub spacing: Option<f64>,
    /// Coulomb coefficient of the tip on the surface before the puncture.
    #[serde(default)]
    pub tip_friction: f64,
}

impl NeedleSpec {
    /// Value checks; `key` is `needle[i]`, `bodies` the scene's body names.
    pub(super) fn validate(&self, key: &str, bodies: &[&str]) -> Result<(), Invalid> {
        let err = |field: &str, message: String| Err(Invalid::new(format!("{key}.{field}"), message));
        if !bodies.contains(&self.body.as_str()) {
            return err("body", format!("no body is named {:?} (bodies: {})", self.body, bodies.join(", ")));
        }
        super::validate::finite(format!("{key}.tip"), &self.tip)?;
        super::validate::finite(format!("{key}.direction"), &self.direction)?;
        if Vector3::from(self.direction).norm() == 0.0 {
            return err("direction", "must not be zero".into());
        }
        let m = &self.motion;
        if m.angular_velocity != [0.0; 3] || m.pivot.is_some() {
            return err("motion", "a needle translates (velocity or path): its axis does not turn".into());
        }
        for (field, v, zero_ok) in [
            ("length", self.length, false),
            ("spacing", self.spacing.unwrap_or(1.0), false),
            ("puncture_force", self.puncture_force, true),
            ("friction", self.friction, true),
            ("tip_friction", self.tip_friction, true),
        ] {
            if !(v.is_finite() && (v > 0.0 || zero_ok && v == 0.0)) {
                let sign = if zero_ok { "non-negative" } else { "positive" };
                return err(field, format!("{v} must be finite and {sign}"));
            }
        }
        Ok(())
    }

    /// The model's needle, into body `body` (its index) whose mean tet edge
    /// at rest is `mean_edge` (the default spacing).
    pub(super) fn build(&self, body: usize, mean_edge: f64) -> Needle {
        Needle {
            name: self.name.clone(),
            body,
            tip: self.tip.into(),
            axis: Vector3::from(self.direction).normalize(),
            length: self.length,
            motion: self.motion.clone(),
            puncture_force: self.puncture_force,
            friction: self.friction,
            spacing: self.spacing.unwrap_or(mean_edge),
            tip_friction: self.tip_friction,
        }
    }
}
