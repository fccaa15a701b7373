//! Triangle surfaces of the obstacles' shapes in their local frames (as
//! the page's three.js geometries draw them), and smooth vertex normals.

use std::f64::consts::{PI, TAU};

use nalgebra::Vector3;

use crate::frame::ShapeView;

/// A triangle surface.
#[derive(Debug, Clone, Default)]
pub struct Surface {
    /// Vertices (m).
    pub points: Vec<Vector3<f64>>,
    /// Triangles.
    pub triangles: Vec<[u32; 3]>,
}

impl Surface {
    /// A grid of `nu × nv` cells mapped by `f(u, v)`, `u, v ∈ [0, 1]`;
    /// a wrapped direction shares its first and last rows (no seam).
    fn grid(
        &mut self,
        (nu, wrap_u): (usize, bool),
        (nv, wrap_v): (usize, bool),
        f: impl Fn(f64, f64) -> Vector3<f64>,
    ) {
        let base = self.points.len();
        let (cu, cv) = (if wrap_u { nu } else { nu + 1 }, if wrap_v { nv } else { nv + 1 });
        for j in 0..cv {
            for i in 0..cu {
                self.points.push(f(i as f64 / nu as f64, j as f64 / nv as f64));
            }
        }
        let at = |i: usize, j: usize| (base + (j % cv) * cu + i % cu) as u32;
        for j in 0..nv {
            for i in 0..nu {
                self.triangles.push([at(i, j), at(i + 1, j), at(i + 1, j + 1)]);
                self.triangles.push([at(i, j), at(i + 1, j + 1), at(i, j + 1)]);
            }
        }
    }

    /// A flat disc of radius `r` at height `z` (a cylinder's cap), wound
    /// to face +z for `z > 0` and −z otherwise.
    fn disc(&mut self, r: f64, z: f64, n: usize) {
        let centre = self.points.len() as u32;
        self.points.push(Vector3::new(0.0, 0.0, z));
        for i in 0..n {
            let a = TAU * i as f64 / n as f64;
            self.points.push(Vector3::new(r * a.cos(), r * a.sin(), z));
        }
        for i in 0..n as u32 {
            let (a, b) = (centre + 1 + i, centre + 1 + (i + 1) % n as u32);
            self.triangles.push(if z > 0.0 { [centre, a, b] } else { [centre, b, a] });
        }
    }
}

/// The cells per side of a half-space's square (drawn as a checkerboard).
pub const FLOOR_CELLS: usize = 20;

/// An obstacle's surface in its local frame; a half-space is the square
/// `z = 0` of its `size`, in [`FLOOR_CELLS`]² cells (two triangles each, in order).
pub fn surface(shape: &ShapeView) -> Surface {
    let mut s = Surface::default();
    let ring = |r: f64, a: f64| Vector3::new(r * (TAU * a).cos(), r * (TAU * a).sin(), 0.0);
    match *shape {
        ShapeView::HalfSpace { size } => s.grid((FLOOR_CELLS, false), (FLOOR_CELLS, false), |u, v| {
            Vector3::new((u - 0.5) * size, (v - 0.5) * size, 0.0)
        }),
        ShapeView::Sphere { radius } => s.grid((48, true), (24, false), |u, v| {
            let polar = PI * v;
            ring(radius * polar.sin(), u) + Vector3::new(0.0, 0.0, radius * polar.cos())
        }),
        ShapeView::Box { size } => {
            let h = Vector3::from(size) * 0.5;
            for axis in 0..3 {
                for sign in [-1.0, 1.0] {
                    let (a, b) = ((axis + 1) % 3, (axis + 2) % 3);
                    s.grid((1, false), (1, false), |u, v| {
                        // The far face swaps u and v: both wind outward.
                        let (u, v) = if sign > 0.0 { (u, v) } else { (v, u) };
                        let mut p = Vector3::zeros();
                        p[axis] = sign * h[axis];
                        p[a] = (2.0 * u - 1.0) * h[a];
                        p[b] = (2.0 * v - 1.0) * h[b];
                        p
                    });
                }
            }
        }
        ShapeView::Cylinder { radius, length } => {
            s.grid((48, true), (1, false), |u, v| {
                ring(radius, u) + Vector3::new(0.0, 0.0, (v - 0.5) * length)
            });
            s.disc(radius, 0.5 * length, 48);
            s.disc(radius, -0.5 * length, 48);
        }
        ShapeView::Capsule { radius, length } => s.grid((32, true), (25, false), |u, v| {
            // Rows 0–12 the upper hemisphere, 13–25 the lower one, the band between them the side.
            let row = (v * 25.0).round();
            let (polar, shift) = if row <= 12.0 {
                (0.5 * PI * row / 12.0, 0.5 * length)
            } else {
                (0.5 * PI * (row - 1.0) / 12.0, -0.5 * length)
            };
            ring(radius * polar.sin(), u) + Vector3::new(0.0, 0.0, radius * polar.cos() + shift)
        }),
        ShapeView::Torus { major_radius, minor_radius } => s.grid((64, true), (24, true), |u, v| {
            let tube = TAU * v;
            ring(major_radius + minor_radius * tube.cos(), u)
                + Vector3::new(0.0, 0.0, minor_radius * tube.sin())
        }),
        ShapeView::Mesh { ref vertices, ref triangles } => {
            s.points = vertices.chunks_exact(3).map(|p| Vector3::new(p[0], p[1], p[2]).cast()).collect();
            s.triangles = triangles.chunks_exact(3).map(|t| [t[0], t[1], t[2]]).collect();
        }
    }
    s
}

/// Area-weighted vertex normals of triangles over `points` (unit; zero
/// where no triangle touches a vertex).
pub fn vertex_normals(points: &[Vector3<f64>], triangles: &[[u32; 3]]) -> Vec<Vector3<f64>> {
    let mut n = vec![Vector3::zeros(); points.len()];
    for t in triangles {
        let [a, b, c] = t.map(|i| points[i as usize]);
        let face = (b - a).cross(&(c - a));
        t.iter().for_each(|&i| n[i as usize] += face);
    }
    n.iter_mut().for_each(|v| *v = v.try_normalize(0.0).unwrap_or_else(Vector3::zeros));
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each closed shape's surface encloses its analytic volume (divergence
    /// theorem over the triangles, to the tessellation's accuracy).
    #[test]
    fn closed_shapes_enclose_their_volumes() {
        let volume = |s: &Surface| {
            s.triangles
                .iter()
                .map(|t| {
                    let [a, b, c] = t.map(|i| s.points[i as usize]);
                    a.dot(&b.cross(&c)) / 6.0
                })
                .sum::<f64>()
                .abs()
        };
        let (r, l) = (0.3, 1.2);
        for (shape, exact, tolerance) in [
            (ShapeView::Box { size: [1.0, 2.0, 3.0] }, 6.0, 1e-12),
            (ShapeView::Sphere { radius: r }, 4.0 / 3.0 * PI * r.powi(3), 0.02),
            (ShapeView::Cylinder { radius: r, length: l }, PI * r * r * l, 0.01),
            (ShapeView::Capsule { radius: r, length: l }, PI * r * r * l + 4.0 / 3.0 * PI * r.powi(3), 0.02),
            (ShapeView::Torus { major_radius: 1.0, minor_radius: r }, 2.0 * PI * PI * r * r, 0.02),
        ] {
            let v = volume(&surface(&shape));
            assert!((v - exact).abs() <= tolerance * exact, "{shape:?}: {v} against {exact}");
        }
    }
}
