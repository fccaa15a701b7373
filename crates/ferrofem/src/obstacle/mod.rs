//! Rigid obstacles: analytic shapes or closed triangle meshes, with a pose,
//! a friction coefficient and a kinematic motion. Queries are signed
//! distances with outward normals.

mod mesh;

pub use mesh::{MeshGeometry, SharpEdge, SHARP_EDGE_COS};

use std::sync::Arc;

use nalgebra::{Rotation3, Unit, Vector3};
use serde::{Deserialize, Serialize};

use crate::body::keyframe_offset;

/// A sharp edge at a time: its two ends and its two faces' outward
/// normals, in the world.
pub type EdgeAt = ([Vector3<f64>; 2], [Vector3<f64>; 2]);

/// An analytic shape in its local frame (centred at the origin).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum Shape {
    /// The half-space `z ≤ 0` of the local frame (its boundary is the plane `z = 0`).
    HalfSpace,
    /// A ball.
    Sphere {
        /// Radius (m).
        radius: f64,
    },
    /// A box.
    Box {
        /// Edge lengths along the local axes (m).
        size: [f64; 3],
    },
    /// A closed cylinder along the local z axis.
    Cylinder {
        /// Radius (m).
        radius: f64,
        /// Length along z (m).
        length: f64,
    },
    /// A torus around the local z axis.
    Torus {
        /// Ring radius (m).
        major_radius: f64,
        /// Tube radius (m).
        minor_radius: f64,
    },
    /// A capsule along the local z axis.
    Capsule {
        /// Radius (m).
        radius: f64,
        /// Length of the axis segment between the hemisphere centres (m).
        length: f64,
    },
}

/// Kinematic motion of an obstacle: translation at constant velocity, or
/// along a keyframed path (piecewise linear, clamped at its ends), plus
/// rotation at constant angular velocity about its own origin or a pivot
/// (which the translation carries along).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct ObstacleMotion {
    /// Linear velocity (m/s); ignored when `path` is given.
    pub velocity: [f64; 3],
    /// Angular velocity (rad/s, world axes).
    pub angular_velocity: [f64; 3],
    /// Keyframes `[t, dx, dy, dz]`: offsets (m) of the origin from its
    /// initial position at increasing times (s).
    pub path: Vec<[f64; 4]>,
    /// The point the rotation turns about, at t = 0 (m, world); `None`:
    /// the obstacle's origin. Two jaws turning about one pivot grasp and
    /// twist what they hold.
    pub pivot: Option<[f64; 3]>,
}

impl ObstacleMotion {
    /// Offset of the origin and its velocity at time `t`.
    pub fn offset(&self, t: f64) -> (Vector3<f64>, Vector3<f64>) {
        let v = Vector3::from(self.velocity);
        keyframe_offset(&self.path, t).unwrap_or((v * t, v))
    }
}

/// What an obstacle is, in its local frame.
#[derive(Debug, Clone)]
pub enum Geometry {
    /// An analytic shape.
    Analytic(Shape),
    /// A closed triangle mesh; its vertices also meet the bodies' surface
    /// triangles (so a sharp or thin obstacle cannot slip between vertices).
    Mesh(Arc<MeshGeometry>),
}

/// A rigid obstacle.
#[derive(Debug, Clone)]
pub struct Obstacle {
    /// Name used in messages.
    pub name: String,
    /// Shape in the local frame.
    pub geometry: Geometry,
    /// Rotation at t = 0.
    pub rotation: Rotation3<f64>,
    /// Position of the local origin at t = 0 (m).
    pub translation: Vector3<f64>,
    /// Coulomb friction coefficient against soft bodies.
    pub friction: f64,
    /// Kinematic motion.
    pub motion: ObstacleMotion,
    /// A pose set between steps by a controller, which overrides `motion`
    /// from the time it was set (see [`Obstacle::steer`]).
    pub steering: Option<Steering>,
}

/// A move set between steps: from the pose `(R₀, c₀)` at `start` to
/// `(R₁, c₁)` at `start + duration` at constant linear velocity `v` and
/// angular velocity `ω` (`R₁ = exp(ω × duration) R₀`), then held still.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Steering {
    start: f64,
    duration: f64,
    rotation: Rotation3<f64>,
    translation: Vector3<f64>,
    velocity: Vector3<f64>,
    angular_velocity: Vector3<f64>,
}

impl Steering {
    /// Time into the move at `t`, clamped to `[0, duration]`.
    fn elapsed(&self, t: f64) -> f64 {
        (t - self.start).clamp(0.0, self.duration)
    }

    /// Pose at `t`: `(exp(ω τ) R₀, c₀ + v τ)` with `τ` the time into the move.
    fn pose(&self, t: f64) -> (Rotation3<f64>, Vector3<f64>) {
        let tau = self.elapsed(t);
        (Rotation3::new(self.angular_velocity * tau) * self.rotation, self.translation + self.velocity * tau)
    }

    /// Velocity `v + ω × (p − c(t))` of the material point at `p` while
    /// moving (zero once the move is over).
    fn velocity_at(&self, p: &Vector3<f64>, t: f64) -> Vector3<f64> {
        if t >= self.start + self.duration {
            return Vector3::zeros();
        }
        self.velocity + self.angular_velocity.cross(&(p - self.pose(t).1))
    }
}

impl Obstacle {
    /// Moves the obstacle from its pose at `now` to `(rotation,
    /// translation)` over `[now, now + duration]` at constant linear and
    /// angular velocity, and holds it there afterwards: what a controller
    /// sets between steps (`duration` the time step). Contacts see the
    /// move's velocity, so a body is pushed, not teleported through.
    pub fn steer(&mut self, now: f64, duration: f64, rotation: Rotation3<f64>, translation: Vector3<f64>) {
        let (r0, c0) = self.pose(now);
        self.steering = Some(Steering {
            start: now,
            duration,
            rotation: r0,
            translation: c0,
            velocity: (translation - c0) / duration,
            angular_velocity: (rotation * r0.inverse()).scaled_axis() / duration,
        });
    }

    /// Pose `(R(t), c(t))` at time `t`.
    pub fn pose(&self, t: f64) -> (Rotation3<f64>, Vector3<f64>) {
        if let Some(s) = &self.steering {
            return s.pose(t);
        }
        let w = Vector3::from(self.motion.angular_velocity);
        let spin = match Unit::try_new(w, 1e-300) {
            Some(axis) => Rotation3::from_axis_angle(&axis, w.norm() * t),
            None => Rotation3::identity(),
        };
        let pivot = self.pivot();
        (spin * self.rotation, pivot + self.motion.offset(t).0 + spin * (self.translation - pivot))
    }

    /// The pivot at t = 0 (the origin when the motion names none).
    fn pivot(&self) -> Vector3<f64> {
        self.motion.pivot.map_or(self.translation, Vector3::from)
    }

    /// Velocity of the obstacle's material point at world position `p` (m/s).
    pub fn velocity_at(&self, p: &Vector3<f64>, t: f64) -> Vector3<f64> {
        if let Some(s) = &self.steering {
            return s.velocity_at(p, t);
        }
        let (offset, v) = self.motion.offset(t);
        v + Vector3::from(self.motion.angular_velocity).cross(&(p - (self.pivot() + offset)))
    }

    /// Where the obstacle's material point at `p` at time `from` is at
    /// time `to` (m): `c(to) + R(to) R(from)ᵀ (p − c(from))`.
    pub fn carry(&self, p: &Vector3<f64>, from: f64, to: f64) -> Vector3<f64> {
        let ((r0, c0), (r1, c1)) = (self.pose(from), self.pose(to));
        c1 + r1 * (r0.inverse() * (p - c0))
    }

    /// Signed distance from `p` to the surface at time `t` (negative inside)
    /// and the outward unit normal there, when the distance is below `max`
    /// (for a mesh, also when it is above `−max`: deeper points are not seen).
    pub fn proximity(&self, p: &Vector3<f64>, t: f64, max: f64) -> Option<(f64, Vector3<f64>)> {
        let (r, c) = self.pose(t);
        let q = r.inverse() * (p - c);
        let (d, n) = match &self.geometry {
            Geometry::Analytic(shape) => local_distance(shape, &q),
            Geometry::Mesh(mesh) => mesh.signed_distance(&q, max)?,
        };
        (d < max).then_some((d, r * n))
    }

    /// Signed distance from `p` to the surface at time `t` (negative inside)
    /// and the outward unit normal there.
    pub fn signed_distance(&self, p: &Vector3<f64>, t: f64) -> (f64, Vector3<f64>) {
        self.proximity(p, t, f64::MAX).unwrap_or((f64::INFINITY, Vector3::z()))
    }

    /// How deep `p` lies inside the obstacle at time `t` (m, > 0), if it
    /// does: any depth, for a mesh too (points outside its bounding box are
    /// skipped without a query).
    pub fn penetration(&self, p: &Vector3<f64>, t: f64) -> Option<f64> {
        let (r, c) = self.pose(t);
        let q = r.inverse() * (p - c);
        let d = match &self.geometry {
            Geometry::Analytic(shape) => local_distance(shape, &q).0,
            Geometry::Mesh(mesh) if mesh.bounds(&q) => mesh.signed_distance(&q, f64::MAX)?.0,
            Geometry::Mesh(_) => return None,
        };
        (d < 0.0).then_some(-d)
    }

    /// World position of a mesh obstacle's vertex `k` at time `t` (the
    /// origin for an analytic shape).
    pub fn vertex_at(&self, k: usize, t: f64) -> Vector3<f64> {
        let (r, c) = self.pose(t);
        match &self.geometry {
            Geometry::Analytic(_) => c,
            Geometry::Mesh(mesh) => r * mesh.vertex(k) + c,
        }
    }

    /// A mesh obstacle's sharp edges in the world at time `t`: each one's
    /// ends and its two faces' outward normals (none for an analytic shape).
    pub fn sharp_edges_at(&self, t: f64) -> Vec<EdgeAt> {
        let Geometry::Mesh(mesh) = &self.geometry else { return Vec::new() };
        let (r, c) = self.pose(t);
        let world = |&(e, n): &SharpEdge| (e.map(|v| r * mesh.vertex(v) + c), n.map(|n| r * n));
        mesh.sharp_edges().iter().map(world).collect()
    }

    /// The ends of a mesh obstacle's sharp edge `k` in the world at time `t`
    /// (`None` for an analytic shape).
    pub fn sharp_edge_at(&self, k: usize, t: f64) -> Option<[Vector3<f64>; 2]> {
        let Geometry::Mesh(mesh) = &self.geometry else { return None };
        let (r, c) = self.pose(t);
        Some(mesh.sharp_edges()[k].0.map(|v| r * mesh.vertex(v) + c))
    }

    /// World positions of a mesh obstacle's vertices at time `t` (none for
    /// an analytic shape).
    pub fn vertices_at(&self, t: f64) -> Vec<Vector3<f64>> {
        match &self.geometry {
            Geometry::Analytic(_) => Vec::new(),
            Geometry::Mesh(mesh) => {
                let (r, c) = self.pose(t);
                mesh.vertices().map(|v| r * v + c).collect()
            }
        }
    }
}

fn local_distance(shape: &Shape, q: &Vector3<f64>) -> (f64, Vector3<f64>) {
    match *shape {
        Shape::HalfSpace => (q.z, Vector3::z()),
        Shape::Sphere { radius } => radial(q, radius),
        Shape::Capsule { radius, length } => {
            let axis = Vector3::new(0.0, 0.0, q.z.clamp(-length / 2.0, length / 2.0));
            radial(&(q - axis), radius)
        }
        Shape::Torus { major_radius, minor_radius } => {
            let rho = q.xy().norm();
            let ring = if rho > 0.0 {
                Vector3::new(q.x / rho, q.y / rho, 0.0) * major_radius
            } else {
                Vector3::new(major_radius, 0.0, 0.0)
            };
            radial(&(q - ring), minor_radius)
        }
        Shape::Cylinder { radius, length } => {
            let rho = q.xy().norm();
            let radial_dir = if rho > 0.0 { Vector3::new(q.x / rho, q.y / rho, 0.0) } else { Vector3::x() };
            let axial_dir = Vector3::new(0.0, 0.0, q.z.signum());
            let (dr, dz) = (rho - radius, q.z.abs() - length / 2.0);
            if dr > 0.0 && dz > 0.0 {
                let v = radial_dir * dr + axial_dir * dz;
                (v.norm(), v.normalize())
            } else if dr > dz {
                (dr, radial_dir)
            } else {
                (dz, axial_dir)
            }
        }
        Shape::Box { size } => {
            let e = Vector3::from(size) / 2.0;
            let a = q.abs() - e;
            let outside = a.map(|x| x.max(0.0));
            if outside.norm() > 0.0 {
                let n = outside.component_mul(&q.map(f64::signum)).normalize();
                (outside.norm(), n)
            } else {
                let k = a.imax();
                let mut n = Vector3::zeros();
                n[k] = q[k].signum();
                (a[k], n)
            }
        }
    }
}

fn radial(v: &Vector3<f64>, radius: f64) -> (f64, Vector3<f64>) {
    let len = v.norm();
    let n = if len > 0.0 { v / len } else { Vector3::z() };
    (len - radius, n)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn obstacle(shape: Shape) -> Obstacle {
        Obstacle {
            name: "o".into(),
            geometry: Geometry::Analytic(shape),
            rotation: Rotation3::identity(),
            translation: Vector3::zeros(),
            friction: 0.0,
            motion: ObstacleMotion::default(),
            steering: None,
        }
    }

    #[test]
    fn torus_cylinder_and_keyframed_path() {
        let t = obstacle(Shape::Torus { major_radius: 2.0, minor_radius: 0.5 });
        let (d, n) = t.signed_distance(&Vector3::new(0.0, 3.0, 0.0), 0.0);
        assert!((d - 0.5).abs() < 1e-15 && (n - Vector3::y()).norm() < 1e-15);
        assert!((t.signed_distance(&Vector3::zeros(), 0.0).0 - 1.5).abs() < 1e-15);
        let c = obstacle(Shape::Cylinder { radius: 1.0, length: 2.0 });
        assert!((c.signed_distance(&Vector3::new(0.0, 0.0, 0.5), 0.0).0 + 0.5).abs() < 1e-15);
        let (d, n) = c.signed_distance(&Vector3::new(4.0, 0.0, 5.0), 0.0);
        assert!((d - 5.0).abs() < 1e-12 && (n - Vector3::new(0.6, 0.0, 0.8)).norm() < 1e-12);
        let mut m = obstacle(Shape::Sphere { radius: 1.0 });
        m.motion.path = vec![[0.0, 0.0, 0.0, 0.0], [1.0, 2.0, 0.0, 0.0], [3.0, 2.0, 4.0, 0.0]];
        let (x, v) = m.motion.offset(2.0);
        assert!(
            (x - Vector3::new(2.0, 2.0, 0.0)).norm() < 1e-15
                && (v - Vector3::new(0.0, 2.0, 0.0)).norm() < 1e-15
        );
        assert_eq!(m.motion.offset(9.0).0, Vector3::new(2.0, 4.0, 0.0));
        assert!((m.velocity_at(&Vector3::zeros(), 0.5) - Vector3::new(2.0, 0.0, 0.0)).norm() < 1e-15);
    }

    #[test]
    fn distances_and_normals() {
        let (d, n) =
            obstacle(Shape::Sphere { radius: 1.0 }).signed_distance(&Vector3::new(0.0, 3.0, 0.0), 0.0);
        assert!((d - 2.0).abs() < 1e-15 && (n - Vector3::y()).norm() < 1e-15);
        let b = obstacle(Shape::Box { size: [2.0, 4.0, 6.0] });
        let (d, n) = b.signed_distance(&Vector3::new(0.5, 0.0, 2.9), 0.0);
        assert!((d + 0.1).abs() < 1e-12 && n == Vector3::z());
        let (d, _) = b.signed_distance(&Vector3::new(4.0, 6.0, 0.0), 0.0);
        assert!((d - (9.0f64 + 16.0).sqrt()).abs() < 1e-12);
        let c = obstacle(Shape::Capsule { radius: 0.5, length: 2.0 });
        assert!((c.signed_distance(&Vector3::new(0.0, 0.0, 3.0), 0.0).0 - 1.5).abs() < 1e-15);
        let mut tilted = obstacle(Shape::HalfSpace);
        tilted.rotation = Rotation3::from_axis_angle(&Vector3::x_axis(), std::f64::consts::FRAC_PI_2);
        let (d, n) = tilted.signed_distance(&Vector3::new(0.0, -2.0, 5.0), 0.0);
        assert!((d - 2.0).abs() < 1e-12 && (n + Vector3::y()).norm() < 1e-12);
    }

    #[test]
    fn moving_obstacle_pose_and_point_velocity() {
        let mut s = obstacle(Shape::Sphere { radius: 1.0 });
        s.motion = ObstacleMotion {
            velocity: [1.0, 0.0, 0.0],
            angular_velocity: [0.0, 0.0, 2.0],
            ..Default::default()
        };
        let (d, _) = s.signed_distance(&Vector3::new(3.0, 0.0, 0.0), 1.0);
        assert!((d - 1.0).abs() < 1e-12);
        let v = s.velocity_at(&Vector3::new(2.0, 0.0, 0.0), 1.0);
        assert!((v - Vector3::new(1.0, 2.0, 0.0)).norm() < 1e-12);
        let p = Vector3::new(2.0, 0.5, 0.3);
        assert!((s.carry(&p, 1.0, 1.0) - p).norm() < 1e-15);
    }

    #[test]
    fn a_jaw_turns_about_its_pivot() {
        // A ball centred at x = 1 turning about the z axis through the origin
        // at π/2 rad/s: after 1 s it is centred at y = 1.
        let mut s = obstacle(Shape::Sphere { radius: 0.25 });
        s.translation = Vector3::new(1.0, 0.0, 0.0);
        let quarter = std::f64::consts::FRAC_PI_2;
        s.motion = ObstacleMotion {
            angular_velocity: [0.0, 0.0, quarter],
            pivot: Some([0.0; 3]),
            ..Default::default()
        };
        assert!((s.pose(1.0).1 - Vector3::new(0.0, 1.0, 0.0)).norm() < 1e-12);
        assert!(s.signed_distance(&Vector3::new(0.0, 1.25, 0.0), 1.0).0.abs() < 1e-12);
        // Its surface point nearest the pivot moves at ω × r = (0, 0.75 π/2, 0).
        let v = s.velocity_at(&Vector3::new(0.75, 0.0, 0.0), 0.0);
        assert!((v - Vector3::new(0.0, 0.75 * quarter, 0.0)).norm() < 1e-12);
        let carried = s.carry(&Vector3::new(0.75, 0.0, 0.0), 0.0, 1.0);
        assert!((carried - Vector3::new(0.0, 0.75, 0.0)).norm() < 1e-12);
    }
}
