//! `[[cable]]`: a cable through a body (zeng2025 §7, Fig. 11; SoftRobots'
//! `CableConstraint`): its spec, checks and the model's [`Cable`] made
//! from it.

use nalgebra::Vector3;
use serde::{Deserialize, Serialize};

use crate::cable::Cable;
use crate::element::TetElement;
use crate::needle::locate_in_tets;
use crate::Invalid;

/// `[[cable]]`: a cable through the material points `points` of a solid
/// body, pulled in by `displacement` over time; one bilateral constraint
/// holds its length (it pulls and pushes, as SoftRobots' cable under
/// displacement control).
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CableSpec {
    /// Name used in messages and stats.
    pub name: String,
    /// The solid body it runs through.
    pub body: String,
    /// Its points, in order, in the body's mesh coordinates (the body's
    /// `transform` places them with the mesh; SoftRobots' `cableGeometry`).
    /// Each must lie inside the body's tets at rest.
    pub points: Vec<[f64; 3]>,
    /// Where it is pulled from, in the same coordinates: the first segment
    /// runs from there to the first point (default: none, the cable starts
    /// at its first point).
    #[serde(default)]
    pub pull_point: Option<[f64; 3]>,
    /// Keyframes `[t, dx, dy, dz]` moving the pull point with the gripper
    /// (world offsets, m, at increasing times, s).
    #[serde(default)]
    pub pull_path: Vec<[f64; 4]>,
    /// Keyframes `[t, d]`: how far the cable is pulled in (m, negative: let
    /// out) at increasing times (s), linear between them, held at the ends.
    pub displacement: Vec<[f64; 2]>,
}

impl CableSpec {
    /// Value checks; `key` is `cable[i]`, `bodies` the scene's body names.
    pub(super) fn validate(&self, key: &str, bodies: &[&str]) -> Result<(), Invalid> {
        let err = |field: &str, message: String| Err(Invalid::new(format!("{key}.{field}"), message));
        if !bodies.contains(&self.body.as_str()) {
            return err("body", format!("no body is named {:?} (bodies: {})", self.body, bodies.join(", ")));
        }
        if self.points.len() + usize::from(self.pull_point.is_some()) < 2 {
            return err("points", "a cable runs through two points at least (the pull point counts)".into());
        }
        for (i, p) in self.points.iter().chain(&self.pull_point).enumerate() {
            super::validate::finite(format!("{key}.points[{i}]"), p)?;
        }
        for (field, frames) in [
            ("displacement", self.displacement.iter().map(|k| k.as_slice()).collect::<Vec<_>>()),
            ("pull_path", self.pull_path.iter().map(|k| k.as_slice()).collect()),
        ] {
            super::validate::finite(format!("{key}.{field}"), &frames.concat())?;
            if frames.windows(2).any(|w| w[1][0] <= w[0][0]) {
                return err(field, "keyframe times must increase".into());
            }
        }
        Ok(())
    }

    /// The model's cable through body `body` (its index) of rest tets
    /// `tets` at rest positions `x`, its points placed in the world by
    /// `place` (the body's transform); an error names the point outside the
    /// body or the segment of zero length.
    pub(super) fn build(
        &self,
        body: usize,
        tets: &[TetElement],
        x: &[f64],
        place: impl Fn(&[f64; 3]) -> Vector3<f64>,
    ) -> Result<Cable, (String, String)> {
        let points = self.points.iter().enumerate().map(|(i, p)| {
            locate_in_tets(tets, x, &place(p))
                .ok_or_else(|| (format!("points[{i}]"), format!("{p:?} lies outside body {:?}", self.body)))
        });
        let mut cable = Cable {
            name: self.name.clone(),
            body,
            points: points.collect::<Result<_, _>>()?,
            pull_point: self.pull_point.as_ref().map(&place),
            pull_path: self.pull_path.clone(),
            rest_length: 0.0,
            displacement: self.displacement.iter().map(|&[t, d]| [t, d, 0.0, 0.0]).collect(),
        };
        let line = cable.polyline(x, 0.0);
        if let Some(k) = line.windows(2).position(|s| (s[1] - s[0]).norm() == 0.0) {
            return Err(("points".into(), format!("segment {k} has zero length: its ends coincide")));
        }
        cable.rest_length = cable.length(x, 0.0);
        Ok(cable)
    }
}
