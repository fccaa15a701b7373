//! Prescribed motion of vertices: fixed, constant velocity, or rotation about
//! an axis (to twist a bar). Targets are exact functions of time, so
//! prescribed vertices never drift.

use nalgebra::{Rotation3, Unit, Vector3};
use serde::{Deserialize, Serialize};

/// How a prescribed vertex moves, as a function of time from its rest position.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
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
}

/// A vertex's kinematic condition.
#[derive(Debug, Clone, Copy, PartialEq)]
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
}
