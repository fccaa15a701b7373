use std::collections::HashMap;

use crate::check::{check_finite, check_indices};

use crate::{cross, dot, sub, Aabb, MeshError, TriMesh};

/// A linear tetrahedral mesh: vertex positions and 4-vertex elements.
///
/// A tet `[a, b, c, d]` is positively oriented when
/// `det[b−a, c−a, d−a] > 0`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TetMesh {
    /// Vertex positions.
    pub vertices: Vec<[f64; 3]>,
    /// Elements as vertex indices.
    pub tets: Vec<[usize; 4]>,
}

/// How strict [`TetMesh::validate`] is.
#[derive(Debug, Clone, Copy)]
pub struct ValidationOptions {
    /// Flip tets with negative volume instead of rejecting them.
    pub reorient_inverted: bool,
    /// Volumes at or below `min_relative_volume × max volume` are degenerate.
    pub min_relative_volume: f64,
}

impl Default for ValidationOptions {
    fn default() -> Self {
        ValidationOptions { reorient_inverted: false, min_relative_volume: 1e-12 }
    }
}

/// The triangles used by exactly one tet, outward-oriented, with the map
/// between surface vertices and volume vertices.
#[derive(Debug, Clone)]
pub struct BoundarySurface {
    /// The surface with its own compact vertex numbering.
    pub mesh: TriMesh,
    /// `volume_vertex[i]` is the volume vertex of surface vertex `i`.
    pub volume_vertex: Vec<usize>,
}

/// Quality (`6√2·V/ℓ_rms³`) below which a tet counts as a sliver in
/// [`QualityReport::slivers`]: a regular tet has 1, the generated meshes
/// have at least 0.14.
pub const SLIVER_QUALITY: f64 = 0.05;

/// Shape statistics of a tet mesh.
#[derive(Debug, Clone, Copy, serde::Serialize)]
pub struct QualityReport {
    /// Number of vertices.
    pub vertices: usize,
    /// Number of tetrahedra.
    pub tets: usize,
    /// Smallest signed volume.
    pub min_volume: f64,
    /// Largest signed volume.
    pub max_volume: f64,
    /// Sum of signed volumes.
    pub total_volume: f64,
    /// Tets with negative volume.
    pub inverted: usize,
    /// Smallest quality `6√2·V/ℓ_rms³` (1 for a regular tet, 0 for a flat one).
    pub min_quality: f64,
    /// Mean quality.
    pub mean_quality: f64,
    /// Tets of quality below [`SLIVER_QUALITY`] (inverted ones not counted):
    /// nearly flat, they turn over under small motions.
    pub slivers: usize,
    /// Shortest edge.
    pub min_edge: f64,
    /// Longest edge.
    pub max_edge: f64,
    /// Mean edge length over the tets' six edges each (an edge shared by
    /// several tets counts once per tet).
    pub mean_edge: f64,
    /// Boundary triangles.
    pub boundary_triangles: usize,
    /// Vertices used by no tet.
    pub unused_vertices: usize,
}

const TET_EDGES: [(usize, usize); 6] = [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)];
/// Faces of tet `[a,b,c,d]`, each oriented with its normal pointing outwards
/// for a positively oriented tet.
pub(crate) const TET_FACES: [[usize; 3]; 4] = [[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]];

impl TetMesh {
    /// Builds a mesh and validates it with default options.
    pub fn new(vertices: Vec<[f64; 3]>, tets: Vec<[usize; 4]>) -> Result<Self, MeshError> {
        let mut mesh = TetMesh { vertices, tets };
        mesh.validate(ValidationOptions::default())?;
        Ok(mesh)
    }

    /// Signed volume `det[b−a, c−a, d−a] / 6` of tet `e`.
    pub fn signed_volume(&self, e: usize) -> f64 {
        let [a, b, c, d] = self.tets[e].map(|i| self.vertices[i]);
        dot(&sub(&b, &a), &cross(&sub(&c, &a), &sub(&d, &a))) / 6.0
    }

    /// Checks indices, repeated vertices, finite coordinates and volumes; with
    /// `reorient_inverted`, flips negative tets (swapping their last two
    /// vertices) instead of failing. Errors name the offending element.
    pub fn validate(&mut self, opts: ValidationOptions) -> Result<(), MeshError> {
        if self.tets.is_empty() {
            return Err(MeshError::Empty);
        }
        check_finite(&self.vertices)?;
        check_indices(&self.tets, self.vertices.len())?;
        let max_vol = (0..self.tets.len()).map(|e| self.signed_volume(e).abs()).fold(0.0, f64::max);
        let min_vol = opts.min_relative_volume * max_vol;
        for e in 0..self.tets.len() {
            let v = self.signed_volume(e);
            if v < 0.0 && opts.reorient_inverted && -v > min_vol {
                self.tets[e].swap(2, 3);
            } else if v <= min_vol {
                return Err(MeshError::Degenerate { element: e, what: "signed volume", value: v });
            }
        }
        Ok(())
    }

    /// Bounding box of the vertices.
    pub fn bounding_box(&self) -> Aabb {
        Aabb::of_points(&self.vertices).unwrap_or(Aabb { min: [0.0; 3], max: [0.0; 3] })
    }

    /// Removes vertices used by no tet and renumbers the tets, keeping the
    /// used vertices in their order (a mesh without unused vertices keeps
    /// its numbering, so vertex lists written against the file still hold);
    /// returns the old index of every kept vertex.
    pub fn remove_unused_vertices(&mut self) -> Vec<usize> {
        let mut used = vec![false; self.vertices.len()];
        self.tets.iter().flatten().for_each(|&i| used[i] = true);
        let kept: Vec<usize> = (0..self.vertices.len()).filter(|&i| used[i]).collect();
        let mut new_index = vec![usize::MAX; self.vertices.len()];
        kept.iter().enumerate().for_each(|(new, &old)| new_index[old] = new);
        self.tets.iter_mut().flatten().for_each(|i| *i = new_index[*i]);
        self.vertices = kept.iter().map(|&i| self.vertices[i]).collect();
        kept
    }

    /// Number of vertices no tet uses.
    pub fn unused_vertex_count(&self) -> usize {
        let mut used = vec![false; self.vertices.len()];
        self.tets.iter().flatten().for_each(|&i| used[i] = true);
        used.iter().filter(|u| !**u).count()
    }

    /// Triangles used by exactly one tet, with outward orientation for
    /// positively oriented tets.
    pub fn boundary(&self) -> BoundarySurface {
        let mut count: HashMap<[usize; 3], (usize, [usize; 3])> = HashMap::new();
        for t in &self.tets {
            for f in TET_FACES {
                let tri = f.map(|i| t[i]);
                let mut key = tri;
                key.sort_unstable();
                count.entry(key).and_modify(|c| c.0 += 1).or_insert((1, tri));
            }
        }
        let mut faces: Vec<[usize; 3]> =
            count.into_values().filter(|(n, _)| *n == 1).map(|(_, tri)| tri).collect();
        faces.sort_unstable();
        let mut map = HashMap::new();
        let mut volume_vertex = Vec::new();
        let triangles = faces
            .iter()
            .map(|f| {
                f.map(|v| {
                    *map.entry(v).or_insert_with(|| {
                        volume_vertex.push(v);
                        volume_vertex.len() - 1
                    })
                })
            })
            .collect();
        let vertices = volume_vertex.iter().map(|&v| self.vertices[v]).collect();
        BoundarySurface { mesh: TriMesh { vertices, triangles }, volume_vertex }
    }

    /// Volume, quality and edge statistics.
    pub fn quality(&self) -> QualityReport {
        let mut r = QualityReport {
            vertices: self.vertices.len(),
            tets: self.tets.len(),
            min_volume: f64::INFINITY,
            max_volume: f64::NEG_INFINITY,
            total_volume: 0.0,
            inverted: 0,
            min_quality: f64::INFINITY,
            mean_quality: 0.0,
            slivers: 0,
            min_edge: f64::INFINITY,
            max_edge: 0.0,
            mean_edge: 0.0,
            boundary_triangles: self.boundary().mesh.triangles.len(),
            unused_vertices: self.unused_vertex_count(),
        };
        for (e, t) in self.tets.iter().enumerate() {
            let v = self.signed_volume(e);
            r.min_volume = r.min_volume.min(v);
            r.max_volume = r.max_volume.max(v);
            r.total_volume += v;
            r.inverted += usize::from(v < 0.0);
            let mut sq = 0.0;
            for (a, b) in TET_EDGES {
                let d = sub(&self.vertices[t[a]], &self.vertices[t[b]]);
                let l2 = dot(&d, &d);
                sq += l2;
                r.min_edge = r.min_edge.min(l2.sqrt());
                r.max_edge = r.max_edge.max(l2.sqrt());
                r.mean_edge += l2.sqrt() / (6 * self.tets.len()) as f64;
            }
            let l_rms = (sq / 6.0).sqrt();
            let q = 6.0 * std::f64::consts::SQRT_2 * v / l_rms.powi(3);
            r.min_quality = r.min_quality.min(q);
            r.slivers += usize::from(v >= 0.0 && q < SLIVER_QUALITY);
            r.mean_quality += q / self.tets.len() as f64;
        }
        r
    }

    /// Applies `x ↦ scale · R x + t` to every vertex, with `R` a row-major
    /// rotation matrix.
    pub fn transform(&mut self, scale: f64, rotation: [[f64; 3]; 3], translation: [f64; 3]) {
        for p in &mut self.vertices {
            let r = rotation.map(|row| dot(&row, p));
            *p = [0, 1, 2].map(|d| scale * r[d] + translation[d]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quality_report_counts_slivers_but_not_inverted_tets() {
        let vertices =
            vec![[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0], [0.3, 0.3, 0.01]];
        let mut mesh = TetMesh { vertices, tets: vec![[0, 1, 2, 3], [0, 1, 2, 4]] };
        let q = mesh.quality();
        assert_eq!((q.slivers, q.inverted), (1, 0), "{q:?}");
        assert!(q.min_quality < SLIVER_QUALITY && q.min_quality > 0.0);
        mesh.tets[1].swap(2, 3);
        let q = mesh.quality();
        assert_eq!((q.slivers, q.inverted), (0, 1), "{q:?}");
    }

    fn unit_tet() -> TetMesh {
        TetMesh {
            vertices: vec![[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]],
            tets: vec![[0, 1, 2, 3]],
        }
    }

    #[test]
    fn mean_edge_of_the_unit_tet_is_its_three_legs_and_three_diagonals() {
        let q = unit_tet().quality();
        assert!((q.mean_edge - (3.0 + 3.0 * std::f64::consts::SQRT_2) / 6.0).abs() < 1e-15, "{q:?}");
        assert_eq!((q.min_edge, q.max_edge), (1.0, std::f64::consts::SQRT_2));
    }

    #[test]
    fn volume_and_boundary_of_unit_tet() {
        let m = unit_tet();
        assert!((m.signed_volume(0) - 1.0 / 6.0).abs() < 1e-15);
        let b = m.boundary();
        assert_eq!(b.mesh.triangles.len(), 4);
        // Outward normals: the enclosed volume from the divergence theorem is positive.
        assert!((b.mesh.enclosed_volume() - 1.0 / 6.0).abs() < 1e-14);
    }

    #[test]
    fn validation_names_the_element() {
        let mut m = unit_tet();
        m.tets.push([0, 1, 3, 2]);
        let err = m.validate(ValidationOptions::default()).unwrap_err();
        assert!(matches!(err, MeshError::Degenerate { element: 1, .. }), "{err}");
        m.validate(ValidationOptions { reorient_inverted: true, ..Default::default() }).unwrap();
        assert!(m.signed_volume(1) > 0.0);
        m.tets.push([0, 1, 1, 2]);
        let err = m.validate(ValidationOptions::default()).unwrap_err();
        assert!(matches!(err, MeshError::RepeatedVertex { element: 2, vertex: 1 }), "{err}");
        m.tets[2] = [0, 1, 9, 2];
        let err = m.validate(ValidationOptions::default()).unwrap_err();
        assert!(matches!(err, MeshError::IndexOutOfRange { element: 2, index: 9, .. }));
        assert!(err.to_string().contains("element 2"));
    }

    #[test]
    fn unused_vertices_are_removed() {
        let mut m = unit_tet();
        m.vertices.insert(0, [5.0, 5.0, 5.0]);
        m.tets[0] = [1, 2, 3, 4];
        assert_eq!(m.unused_vertex_count(), 1);
        assert_eq!(m.remove_unused_vertices(), vec![1, 2, 3, 4]);
        assert_eq!(m, unit_tet());
        // A mesh whose tets meet its vertices out of order keeps its numbering.
        let mut m = unit_tet();
        m.tets[0] = [3, 1, 2, 0];
        let before = m.clone();
        assert_eq!(m.remove_unused_vertices(), vec![0, 1, 2, 3]);
        assert_eq!(m, before);
    }
}
