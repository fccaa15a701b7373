use crate::check::{check_finite, check_indices};
use crate::{cross, dot, sub, Aabb, MeshError};

/// A triangle surface mesh (a boundary surface, an obstacle or a cloth).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TriMesh {
    /// Vertex positions.
    pub vertices: Vec<[f64; 3]>,
    /// Triangles as vertex indices, counter-clockwise seen from outside.
    pub triangles: Vec<[usize; 3]>,
}

impl TriMesh {
    /// Builds a surface and validates it.
    pub fn new(vertices: Vec<[f64; 3]>, triangles: Vec<[usize; 3]>) -> Result<Self, MeshError> {
        let mesh = TriMesh { vertices, triangles };
        mesh.validate()?;
        Ok(mesh)
    }

    /// Checks indices, repeated vertices, finite coordinates and zero areas.
    pub fn validate(&self) -> Result<(), MeshError> {
        if self.triangles.is_empty() {
            return Err(MeshError::Empty);
        }
        check_finite(&self.vertices)?;
        check_indices(&self.triangles, self.vertices.len())?;
        for e in 0..self.triangles.len() {
            let a = self.area(e);
            if a <= 0.0 {
                return Err(MeshError::Degenerate { element: e, what: "area", value: a });
            }
        }
        Ok(())
    }

    /// Area-weighted normal `(b−a)×(c−a)/2` of triangle `e`.
    pub fn area_normal(&self, e: usize) -> [f64; 3] {
        let [a, b, c] = self.triangles[e].map(|i| self.vertices[i]);
        cross(&sub(&b, &a), &sub(&c, &a)).map(|x| 0.5 * x)
    }

    /// Per vertex, the sum of its triangles' area-weighted normals (not
    /// normalized; zero where no triangle touches it).
    pub fn vertex_area_normals(&self) -> Vec<[f64; 3]> {
        let mut normals = vec![[0.0; 3]; self.vertices.len()];
        for (e, t) in self.triangles.iter().enumerate() {
            let n = self.area_normal(e);
            t.iter().for_each(|&i| (0..3).for_each(|d| normals[i][d] += n[d]));
        }
        normals
    }

    /// Area of triangle `e`.
    pub fn area(&self, e: usize) -> f64 {
        let n = self.area_normal(e);
        dot(&n, &n).sqrt()
    }

    /// Total surface area.
    pub fn total_area(&self) -> f64 {
        (0..self.triangles.len()).map(|e| self.area(e)).sum()
    }

    /// Volume enclosed by a closed, outward-oriented surface (divergence theorem).
    pub fn enclosed_volume(&self) -> f64 {
        self.triangles
            .iter()
            .map(|t| {
                let [a, b, c] = t.map(|i| self.vertices[i]);
                dot(&a, &cross(&b, &c)) / 6.0
            })
            .sum()
    }

    /// Bounding box of the vertices.
    pub fn bounding_box(&self) -> Aabb {
        Aabb::of_points(&self.vertices).unwrap_or(Aabb { min: [0.0; 3], max: [0.0; 3] })
    }
}

#[cfg(test)]
mod tests {
    /// On a closed cube's boundary every corner's area normals add up along
    /// its diagonal, outward, and sum to zero over the surface.
    #[test]
    fn vertex_area_normals_point_out_of_a_closed_surface() {
        let surface = crate::generate::box_mesh([1.0, 1.0, 1.0], [1, 1, 1]).unwrap().boundary().mesh;
        let normals = surface.vertex_area_normals();
        let n = surface.vertices.len() as f64;
        let centre: Vec<f64> =
            (0..3).map(|d| surface.vertices.iter().map(|p| p[d]).sum::<f64>() / n).collect();
        for (p, n) in surface.vertices.iter().zip(&normals) {
            let out: f64 = (0..3).map(|d| (p[d] - centre[d]) * n[d]).sum();
            assert!(out > 0.0, "{p:?}: {n:?}");
        }
        let sum: Vec<f64> = (0..3).map(|d| normals.iter().map(|n| n[d]).sum()).collect();
        assert!(sum.iter().all(|s| s.abs() < 1e-12), "{sum:?}");
    }
}
