//! Prescribed motion of vertices: fixed, constant velocity, rotation about
//! an axis (to twist a bar) or keyframes (a gripper's fingers closing, then
//! lifting). Targets are exact functions of time, so prescribed vertices
//! never drift.

use nalgebra::{Rotation3, Unit, Vector3};
use serde::{Deserialize, Serialize};

/// How a prescribed vertex moves, as a function of time from its rest position.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum Motion {
    /// Translation at constant velocity (m/s).
    Velocity([f64; 3]),
    /// Rotation about the axis through `center` along `axis`, at
    /// `angular_velocity` rad/s (right-handed).
    Rotation {
        /// Axis direction (normalized here).
        axis: [f64; 3],
        /// A point on the axis (m).
        center: [f64; 3],
        /// Angular velocity (rad/s).
        angular_velocity: f64,
    },
    /// Keyframes `[t, dx, dy, dz]`: offsets (m) from the rest position at
    /// increasing times (s), linear between them, held before the first
    /// and after the last.
    Path(Vec<[f64; 4]>),
}

/// The offset and velocity at time `t` along keyframes `[t, dx, dy, dz]`
/// (piecewise linear, clamped at the ends); `None` for no keyframes.
pub fn keyframe_offset(path: &[[f64; 4]], t: f64) -> Option<(Vector3<f64>, Vector3<f64>)> {
    let at = |k: &[f64; 4]| Vector3::new(k[1], k[2], k[3]);
    let (first, last) = (path.first()?, path.last()?);
    if t <= first[0] {
        return Some((at(first), Vector3::zeros()));
    }
    let Some(w) = path.windows(2).find(|w| t <= w[1][0]) else {
        return Some((at(last), Vector3::zeros()));
    };
    let s = (t - w[0][0]) / (w[1][0] - w[0][0]);
    let velocity = (at(&w[1]) - at(&w[0])) / (w[1][0] - w[0][0]);
    Some((at(&w[0]) * (1.0 - s) + at(&w[1]) * s, velocity))
}

/// A vertex's kinematic condition.
#[derive(Debug, Clone, PartialEq)]
pub enum Kinematic {
    /// Stays at its rest position.
    Fixed,
    /// Follows a prescribed motion.
    Moving(Motion),
    /// Held at a point (m) that a controller sets between steps
    /// ([`crate::World::set_prescribed`], [`crate::World::attach`]).
    Placed([f64; 3]),
}

impl Kinematic {
    /// Target position at time `t` of a vertex whose rest position is `rest`.
    pub fn target(&self, rest: Vector3<f64>, t: f64) -> Vector3<f64> {
        match self {
            Kinematic::Fixed => rest,
            Kinematic::Placed(p) => Vector3::from(*p),
            Kinematic::Moving(Motion::Velocity(v)) => rest + Vector3::from(*v) * t,
            Kinematic::Moving(Motion::Rotation { axis, center, angular_velocity }) => {
                let c = Vector3::from(*center);
                let r = Rotation3::from_axis_angle(
                    &Unit::new_normalize(Vector3::from(*axis)),
                    angular_velocity * t,
                );
                c + r * (rest - c)
            }
            Kinematic::Moving(Motion::Path(path)) => {
                rest + keyframe_offset(path, t).map_or(Vector3::zeros(), |o| o.0)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rotation_target_turns_about_axis() {
        let k = Kinematic::Moving(Motion::Rotation {
            axis: [0.0, 0.0, 2.0],
            center: [1.0, 0.0, 0.0],
            angular_velocity: std::f64::consts::FRAC_PI_2,
        });
        let p = k.target(Vector3::new(2.0, 0.0, 5.0), 1.0);
        assert!((p - Vector3::new(1.0, 1.0, 5.0)).norm() < 1e-15);
    }

    #[test]
    fn keyframes_interpolate_and_hold_at_their_ends() {
        let k = Kinematic::Moving(Motion::Path(vec![[0.5, 0.0, 0.0, 0.0], [1.5, 2.0, 0.0, -1.0]]));
        let rest = Vector3::new(1.0, 1.0, 1.0);
        assert_eq!(k.target(rest, 0.0), rest);
        assert!((k.target(rest, 1.0) - Vector3::new(2.0, 1.0, 0.5)).norm() < 1e-15);
        assert!((k.target(rest, 9.0) - Vector3::new(3.0, 1.0, 0.0)).norm() < 1e-15);
        let (_, v) = keyframe_offset(&[[0.5, 0.0, 0.0, 0.0], [1.5, 2.0, 0.0, -1.0]], 1.0).unwrap();
        assert_eq!(v, Vector3::new(2.0, 0.0, -1.0));
    }
}
