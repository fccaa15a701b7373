//! Meshes for ferrofem: tetrahedral volumes ([`TetMesh`]) and triangle surfaces
//! ([`TriMesh`]), with validation that names the offending element, boundary
//! extraction, quality reports, procedural generators and file formats
//! (gmsh `.msh` 2.2/4.1, VTK `.vtk`/`.vtu`, OBJ, STL, `.pvd` series), and
//! tetrahedral meshes of closed surfaces ([`stuffing`]).
//!
//! This crate knows nothing of physics: coordinates are plain `[f64; 3]`.
#![warn(missing_docs)]

mod check;
mod error;
pub mod generate;
pub mod io;
pub mod stuffing;
mod tet;
mod tri;

pub use error::MeshError;
pub use tet::{BoundarySurface, QualityReport, TetMesh, ValidationOptions, SLIVER_QUALITY};
pub use tri::TriMesh;

/// Axis-aligned bounding box `[min, max]`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Aabb {
    /// Smallest corner.
    pub min: [f64; 3],
    /// Largest corner.
    pub max: [f64; 3],
}

impl Aabb {
    /// Bounding box of a set of points; `None` when the set is empty.
    pub fn of_points(points: &[[f64; 3]]) -> Option<Aabb> {
        let first = *points.first()?;
        let mut b = Aabb { min: first, max: first };
        for p in points {
            for d in 0..3 {
                b.min[d] = b.min[d].min(p[d]);
                b.max[d] = b.max[d].max(p[d]);
            }
        }
        Some(b)
    }

    /// Edge lengths of the box.
    pub fn extent(&self) -> [f64; 3] {
        [0, 1, 2].map(|d| self.max[d] - self.min[d])
    }

    /// Whether `p` lies inside the box (boundary included).
    pub fn contains(&self, p: &[f64; 3]) -> bool {
        (0..3).all(|d| p[d] >= self.min[d] && p[d] <= self.max[d])
    }
}

pub(crate) fn sub(a: &[f64; 3], b: &[f64; 3]) -> [f64; 3] {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

pub(crate) fn cross(a: &[f64; 3], b: &[f64; 3]) -> [f64; 3] {
    [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]
}

pub(crate) fn dot(a: &[f64; 3], b: &[f64; 3]) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}
