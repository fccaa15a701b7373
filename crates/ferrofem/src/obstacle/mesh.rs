//! Triangle-mesh obstacles: a closed, outward-oriented surface in parry's
//! `TriMesh` with its BVH; signed distances from angle-weighted
//! pseudo-normals (Bærentzen & Aanæs 2005).

use nalgebra::Vector3;
use parry3d_f64::math::Vector;
use parry3d_f64::query::PointQueryWithLocation;
use parry3d_f64::shape::{TriMesh as ParryMesh, TriMeshFlags};

use ferrofem_mesh::TriMesh;

/// A rigid closed surface in its local frame.
#[derive(Clone)]
pub struct MeshGeometry {
    mesh: ParryMesh,
    /// The sharp edges ([`SHARP_EDGE_COS`]): vertices and their two
    /// faces' outward normals.
    sharp_edges: Vec<SharpEdge>,
}

/// An edge is sharp where its two faces' normals are more than 30° apart
/// (their dot product under this): the edges that edge–edge contacts
/// meet; the flat and gently curved ones between facets of a smooth
/// surface are left to its vertices and faces.
pub const SHARP_EDGE_COS: f64 = 0.866_025_403_784_438_6;

/// A sharp edge: its vertices and its two faces' outward normals.
pub type SharpEdge = ([usize; 2], [Vector3<f64>; 2]);

/// The sharp edges of an oriented closed surface, each once (`a < b`),
/// in order of their first triangle.
fn sharp_edges(mesh: &ParryMesh) -> Vec<SharpEdge> {
    let normal = |t: usize| from_parry(mesh.triangle(t as u32).normal().unwrap_or(Vector::Z));
    let mut faces: std::collections::HashMap<(u32, u32), usize> = std::collections::HashMap::new();
    for (t, tri) in mesh.indices().iter().enumerate() {
        for k in 0..3 {
            faces.insert((tri[k], tri[(k + 1) % 3]), t);
        }
    }
    let mut out = Vec::new();
    for (t, tri) in mesh.indices().iter().enumerate() {
        for k in 0..3 {
            let (a, b) = (tri[k], tri[(k + 1) % 3]);
            let Some(&twin) = faces.get(&(b, a)).filter(|_| a < b) else { continue };
            let (n1, n2) = (normal(t), normal(twin));
            if n1.dot(&n2) < SHARP_EDGE_COS {
                out.push(([a as usize, b as usize], [n1, n2]));
            }
        }
    }
    out
}

impl std::fmt::Debug for MeshGeometry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MeshGeometry")
            .field("vertices", &self.mesh.vertices().len())
            .field("triangles", &self.mesh.indices().len())
            .finish()
    }
}

fn from_parry(v: Vector) -> Vector3<f64> {
    Vector3::new(v.x, v.y, v.z)
}

/// Six times the signed volume enclosed by a surface (positive when its
/// triangles are counter-clockwise seen from outside).
fn signed_volume6(mesh: &TriMesh) -> f64 {
    let p = |i: usize| Vector3::from(mesh.vertices[i]);
    mesh.triangles.iter().map(|t| p(t[0]).dot(&p(t[1]).cross(&p(t[2])))).sum()
}

/// A directed edge without exactly one opposite twin, if any: a closed,
/// consistently oriented 2-manifold has none.
fn unmatched_edge(triangles: &[[u32; 3]]) -> Option<(u32, u32)> {
    let mut edges: Vec<(u32, u32)> =
        triangles.iter().flat_map(|t| [(t[0], t[1]), (t[1], t[2]), (t[2], t[0])]).collect();
    edges.sort_unstable();
    if let Some(twice) = edges.windows(2).find(|w| w[0] == w[1]) {
        return Some(twice[0]);
    }
    edges.iter().copied().find(|&(a, b)| edges.binary_search(&(b, a)).is_err())
}

impl MeshGeometry {
    /// The obstacle of a closed, consistently oriented surface; a surface
    /// oriented inwards is flipped. Duplicate vertices (as in STL files) are
    /// merged.
    pub fn new(surface: &TriMesh) -> Result<Self, String> {
        let flip = signed_volume6(surface) < 0.0;
        let vertices = surface.vertices.iter().map(|p| Vector::new(p[0], p[1], p[2])).collect();
        let indices = surface
            .triangles
            .iter()
            .map(|t| {
                let t = t.map(|i| i as u32);
                if flip {
                    [t[0], t[2], t[1]]
                } else {
                    t
                }
            })
            .collect();
        let flags = TriMeshFlags::ORIENTED | TriMeshFlags::MERGE_DUPLICATE_VERTICES;
        let closed = "a mesh obstacle must be a closed surface with consistently oriented triangles";
        let mesh = ParryMesh::with_flags(vertices, indices, flags).map_err(|e| format!("{closed} ({e})"))?;
        if let Some((a, b)) = unmatched_edge(mesh.indices()) {
            return Err(format!("{closed}: edge {a}–{b} is not shared by exactly two opposite triangles"));
        }
        let sharp_edges = sharp_edges(&mesh);
        Ok(MeshGeometry { mesh, sharp_edges })
    }

    /// Vertices in the local frame (after merging duplicates).
    pub fn vertices(&self) -> impl ExactSizeIterator<Item = Vector3<f64>> + '_ {
        self.mesh.vertices().iter().map(|v| from_parry(*v))
    }

    /// Vertex `k` in the local frame.
    pub fn vertex(&self, k: usize) -> Vector3<f64> {
        from_parry(self.mesh.vertices()[k])
    }

    /// Triangles, counter-clockwise seen from outside.
    pub fn triangles(&self) -> impl ExactSizeIterator<Item = [usize; 3]> + '_ {
        self.mesh.indices().iter().map(|t| t.map(|i| i as usize))
    }

    /// The sharp edges, each with its faces' outward normals (local frame).
    pub fn sharp_edges(&self) -> &[SharpEdge] {
        &self.sharp_edges
    }

    /// Whether local point `q` lies in the surface's bounding box (a point
    /// outside it cannot be inside the obstacle).
    pub fn bounds(&self, q: &Vector3<f64>) -> bool {
        self.mesh.local_aabb().contains_local_point(Vector::new(q.x, q.y, q.z))
    }

    /// Signed distance from local point `q` to the surface (negative
    /// inside) and the outward normal there, when `|distance| < max`.
    pub fn signed_distance(&self, q: &Vector3<f64>, max: f64) -> Option<(f64, Vector3<f64>)> {
        let at = Vector::new(q.x, q.y, q.z);
        let (proj, (tri, _)) =
            self.mesh.project_local_point_and_get_location_with_max_dist(at, false, max)?;
        let offset = q - from_parry(proj.point);
        let distance = offset.norm();
        let sign = if proj.is_inside { -1.0 } else { 1.0 };
        let normal = if distance > 1e-12 * max.min(1.0) {
            offset * (sign / distance)
        } else {
            from_parry(self.mesh.triangle(tri).normal().unwrap_or(Vector::Z))
        };
        Some((sign * distance, normal))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ferrofem_mesh::generate;

    /// The boundary of a generated box is a box: distances and normals
    /// equal the analytic ones inside and outside, whichever way the input
    /// triangles turn.
    #[test]
    fn box_surface_distances() {
        let surface = generate::box_mesh([2.0, 1.0, 1.0], [4, 2, 2]).unwrap().boundary().mesh;
        let mut inverted = surface.clone();
        inverted.triangles.iter_mut().for_each(|t| t.swap(1, 2));
        for s in [surface, inverted] {
            let g = MeshGeometry::new(&s).unwrap();
            let (d, n) = g.signed_distance(&Vector3::new(0.3, 0.1, 0.8), 1.0).unwrap();
            assert!((d - 0.3).abs() < 1e-12 && (n - Vector3::z()).norm() < 1e-12, "{d} {n:?}");
            let (d, n) = g.signed_distance(&Vector3::new(0.9, 0.0, 0.1), 1.0).unwrap();
            assert!((d + 0.1).abs() < 1e-12 && (n - Vector3::x()).norm() < 1e-12, "{d} {n:?}");
            let (d, _) = g.signed_distance(&Vector3::new(1.3, 0.9, 0.0), 1.0).unwrap();
            assert!((d - 0.5).abs() < 1e-12, "corner region {d}");
            assert!(g.signed_distance(&Vector3::new(0.0, 0.0, 3.0), 1.0).is_none());
        }
    }

    /// A box's sharp edges are its twelve, whatever its faces' grid: the
    /// diagonals and the grid lines inside a face are flat; each has the
    /// normals of the two faces it joins.
    #[test]
    fn a_box_has_twelve_sharp_edges() {
        let surface = generate::box_mesh([2.0, 1.0, 1.0], [4, 2, 2]).unwrap().boundary().mesh;
        let g = MeshGeometry::new(&surface).unwrap();
        // Each of the 12 box edges is cut into 4 (the long ones) or 2 pieces.
        assert_eq!(g.sharp_edges().len(), 4 * 4 + 8 * 2);
        for ([a, b], n) in g.sharp_edges() {
            let (p, q) = (g.vertex(*a), g.vertex(*b));
            let mid = (p + q) * 0.5;
            // On two faces at once: two coordinates at their extremes.
            let at_extreme = [mid.x.abs() - 1.0, mid.y.abs() - 0.5, mid.z.abs() - 0.5]
                .iter()
                .filter(|d| d.abs() < 1e-12)
                .count();
            assert_eq!(at_extreme, 2, "{mid:?}");
            let outward = mid.map(f64::signum);
            assert!(n
                .iter()
                .all(|n| (n.norm() - 1.0).abs() < 1e-12 && (n.dot(&outward) - 1.0).abs() < 1e-12));
            assert!(n[0].dot(&n[1]).abs() < 1e-12, "the faces meet at a right angle");
        }
    }

    #[test]
    fn open_surface_is_refused() {
        let mut s = generate::box_mesh([1.0; 3], [1, 1, 1]).unwrap().boundary().mesh;
        s.triangles.pop();
        let err = MeshGeometry::new(&s).unwrap_err();
        assert!(err.contains("closed surface"), "{err}");
    }
}
