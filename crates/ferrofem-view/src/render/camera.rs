//! The camera of a picture: a scene's `[render] camera`, or one fitted to
//! the bodies as the viewer's page opens; view space and pixels.

use ferrofem::scene::Camera;
use nalgebra::{Matrix4, Point3, Vector3};

/// The page's opening view of a region: from the front (−y) and above,
/// 2.4 extents from its centre, 40° vertical field of view.
pub fn fitted(center: [f64; 3], extent: f64) -> Camera {
    let eye = Vector3::from(center) + Vector3::new(0.2, -2.2, 1.0) * extent;
    Camera { position: eye.into(), target: center, up: [0.0, 0.0, 1.0], fov: 40.0 }
}

/// A camera set up for `width × height` pixels.
#[derive(Debug, Clone)]
pub struct Projection {
    view: Matrix4<f64>,
    /// Pixels per unit of `x / depth`.
    focal: f64,
    center: [f64; 2],
    /// The near plane's depth: geometry closer than this is clipped.
    pub near: f64,
    /// The eye (m).
    pub eye: Vector3<f64>,
}

impl Projection {
    /// The projection of a (validated) camera.
    pub fn new(camera: &Camera, width: usize, height: usize) -> Projection {
        let (eye, target) = (Point3::from(camera.position), Point3::from(camera.target));
        Projection {
            view: Matrix4::look_at_rh(&eye, &target, &Vector3::from(camera.up)),
            focal: 0.5 * height as f64 / (0.5 * camera.fov.to_radians()).tan(),
            center: [0.5 * width as f64, 0.5 * height as f64],
            near: 1e-3 * (target - eye).norm(),
            eye: eye.coords,
        }
    }

    /// A point in view space: `(x right, y up, depth)`, depth > 0 in front of the eye.
    pub fn to_view(&self, p: [f64; 3]) -> [f64; 3] {
        let v = self.view.transform_point(&Point3::from(p));
        [v.x, v.y, -v.z]
    }

    /// Pixel coordinates (x right, y down) and `1 / depth` of a view-space
    /// point in front of the near plane.
    pub fn to_screen(&self, v: [f64; 3]) -> [f64; 3] {
        let s = self.focal / v[2];
        [self.center[0] + s * v[0], self.center[1] - s * v[1], 1.0 / v[2]]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The target lands at the picture's centre; up is up; depth is the distance.
    #[test]
    fn the_target_is_at_the_centre_and_up_is_up() {
        let c =
            Camera { position: [0.0, -2.0, 0.0], target: [0.0, 0.0, 0.0], up: [0.0, 0.0, 1.0], fov: 90.0 };
        let p = Projection::new(&c, 200, 100);
        let centre = p.to_screen(p.to_view([0.0, 0.0, 0.0]));
        assert!((centre[0] - 100.0).abs() < 1e-9 && (centre[1] - 50.0).abs() < 1e-9);
        assert!((1.0 / centre[2] - 2.0).abs() < 1e-12);
        // 90° vertically: a point 2 m up at 2 m depth sits on the top edge; +x is right.
        let top = p.to_screen(p.to_view([0.0, 0.0, 2.0]));
        assert!(top[1].abs() < 1e-9);
        assert!(p.to_screen(p.to_view([0.5, 0.0, 0.0]))[0] > 100.0);
    }
}
