//! A cable through a body (zeng2025 §7, Fig. 11; SoftRobots'
//! `CableConstraint`, Coevoet et al. 2017): a polyline through material
//! points of the body, from a pull point outside it when one is given,
//! whose length `ℓ(x)` is held to `L(t) = ℓ₀ − d(t)` by one bilateral
//! constraint row, `d(t)` how far it has been pulled in. Pulling bends a
//! soft finger towards the cable's side; letting it out straightens it.
//!
//! The row is `δ = L − ℓ(x)`, linearized at the start of the step:
//! `H = −∂ℓ/∂x`, so that `λ` is the cable's tension (N, negative when it
//! pushes). Point `pₖ`'s direction is `uₖ − uₖ₋₁`, the unit vectors of the
//! segments leaving and reaching it.

use nalgebra::Vector3;

use crate::body::keyframe_offset;
use crate::collision::Weights;
use crate::needle::MaterialPoint;

/// A cable through one body.
#[derive(Debug, Clone, PartialEq)]
pub struct Cable {
    /// Name used in messages and stats.
    pub name: String,
    /// The body it runs through (model order).
    pub body: usize,
    /// Its material points, in order along the cable.
    pub points: Vec<MaterialPoint>,
    /// Where it is pulled from at t = 0 (m), the first segment running from
    /// there to the first point; `None`: it starts at its first point.
    pub pull_point: Option<Vector3<f64>>,
    /// Keyframes `[t, dx, dy, dz]` moving the pull point (m, s).
    pub pull_path: Vec<[f64; 4]>,
    /// Length at rest `ℓ₀` (m).
    pub rest_length: f64,
    /// Keyframes `[t, d, 0, 0]`: how far the cable is pulled in (m) at
    /// increasing times (s), linear between them, held at the ends.
    pub displacement: Vec<[f64; 4]>,
}

impl Cable {
    /// The length it is held to at time `t`: `ℓ₀ − d(t)` (m).
    pub fn target(&self, t: f64) -> f64 {
        self.rest_length - keyframe_offset(&self.displacement, t).map_or(0.0, |(d, _)| d.x)
    }

    /// The pull point at time `t` (m), when it has one.
    pub fn pull_at(&self, t: f64) -> Option<Vector3<f64>> {
        let shift = keyframe_offset(&self.pull_path, t).map_or(Vector3::zeros(), |(d, _)| d);
        self.pull_point.map(|p| p + shift)
    }

    /// The polyline at positions `x` and time `t`: the pull point (if any),
    /// then the material points.
    pub fn polyline(&self, x: &[f64], t: f64) -> Vec<Vector3<f64>> {
        self.pull_at(t).into_iter().chain(self.points.iter().map(|p| p.position(x))).collect()
    }

    /// Its length `ℓ(x)` at positions `x` and time `t` (m).
    pub fn length(&self, x: &[f64], t: f64) -> f64 {
        self.polyline(x, t).windows(2).map(|s| (s[1] - s[0]).norm()).sum()
    }

    /// Row 0 of its constraint at positions `x` and time `t`: each material
    /// point's weights and direction `−∂ℓ/∂pₖ = uₖ − uₖ₋₁` (a zero-length
    /// segment has no direction), and `ℓ(x)`.
    pub fn row(&self, x: &[f64], t: f64) -> (Vec<(Weights, [f64; 3])>, f64) {
        let line = self.polyline(x, t);
        let unit = |s: &[Vector3<f64>]| (s[1] - s[0]).try_normalize(0.0).unwrap_or_else(Vector3::zeros);
        let mut u: Vec<Vector3<f64>> = vec![Vector3::zeros()];
        u.extend(line.windows(2).map(unit));
        u.push(Vector3::zeros());
        let first = line.len() - self.points.len();
        let row = self.points.iter().enumerate().map(|(k, p)| {
            let j = first + k;
            let pairs: Vec<(usize, f64)> = p.pairs.iter().copied().filter(|&(_, w)| w != 0.0).collect();
            (Weights::new(&pairs), (u[j + 1] - u[j]).into())
        });
        (row.collect(), line.windows(2).map(|s| (s[1] - s[0]).norm()).sum())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vertex(v: usize) -> MaterialPoint {
        MaterialPoint { pairs: [(v, 1.0), (0, 0.0), (0, 0.0), (0, 0.0)] }
    }

    /// A cable from a pull point through three vertices, pulled in by 1 cm
    /// over a second.
    fn cable() -> (Cable, Vec<f64>) {
        let x = vec![0.0, 0.0, -1.0, 0.3, 0.1, -2.0, 0.2, 0.5, -2.5];
        let c = Cable {
            name: "c".into(),
            body: 0,
            points: (0..3).map(vertex).collect(),
            pull_point: Some(Vector3::new(0.0, 0.0, 0.0)),
            pull_path: vec![[0.0, 0.0, 0.0, 0.0], [1.0, 0.0, 0.0, 0.5]],
            rest_length: 2.9,
            displacement: vec![[0.0, 0.0, 0.0, 0.0], [1.0, 0.01, 0.0, 0.0]],
        };
        (c, x)
    }

    #[test]
    fn the_row_is_minus_the_gradient_of_the_length() {
        let (c, x) = cable();
        let (row, length) = c.row(&x, 0.5);
        assert!((length - c.length(&x, 0.5)).abs() < 1e-15);
        for (k, (w, dir)) in row.iter().enumerate() {
            assert_eq!(w[0].0, k);
            for d in 0..3 {
                let (mut plus, mut minus) = (x.clone(), x.clone());
                plus[3 * k + d] += 1e-6;
                minus[3 * k + d] -= 1e-6;
                let slope = (c.length(&plus, 0.5) - c.length(&minus, 0.5)) / 2e-6;
                assert!((dir[d] + slope).abs() < 1e-8, "point {k} axis {d}: {} against {}", dir[d], -slope);
            }
        }
    }

    #[test]
    fn the_target_and_the_pull_point_follow_their_keyframes() {
        let (c, _) = cable();
        assert_eq!(c.target(0.25), 2.9 - 0.0025);
        assert_eq!(c.target(3.0), 2.9 - 0.01);
        assert_eq!(c.pull_at(0.5), Some(Vector3::new(0.0, 0.0, 0.25)));
    }
}
