//! A body's surface triangles in parry's bounding-volume hierarchy, built
//! once and refitted to the deformed positions each step (zeng2022 §3.2).

use nalgebra::Vector3;
use parry3d_f64::bounding_volume::Aabb;
use parry3d_f64::math::Vector;
use parry3d_f64::partitioning::{Bvh, BvhBuildStrategy, BvhWorkspace};

use super::geometry::{closest_on_triangle, point};
use ferrofem_mesh::BoundarySurface;

/// Relative distance (of the search radius) under which two triangles tie.
const TIE: f64 = 1e-9;

/// The closest surface point found for a query point.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SurfaceHit {
    /// Triangle vertices (volume numbering).
    pub triangle: [usize; 3],
    /// Barycentric weights of the closest point.
    pub weights: [f64; 3],
    /// The closest point `Σ wᵢ xᵢ` (m).
    pub point: Vector3<f64>,
    /// Distance from the query point (m).
    pub distance: f64,
}

impl SurfaceHit {
    /// The triangle's outward unit normal at positions `x`.
    pub fn normal(&self, x: &[f64]) -> Vector3<f64> {
        let [a, b, c] = self.triangle.map(|i| point(x, i));
        (b - a).cross(&(c - a)).normalize()
    }

    /// The normal facing a point `p`, for a triangle of a membrane (whose
    /// two sides are both outside); a solid's outward normal otherwise.
    pub fn facing_normal(&self, x: &[f64], p: &Vector3<f64>, two_sided: bool) -> Vector3<f64> {
        let n = self.normal(x);
        if two_sided && n.dot(&(p - self.point)) < 0.0 {
            -n
        } else {
            n
        }
    }
}

/// Surface triangles of one body (volume numbering) and their BVH, whose
/// leaf boxes are the triangles' bounding boxes grown by a margin.
pub struct SurfaceTree {
    triangles: Vec<[usize; 3]>,
    bvh: Bvh,
    workspace: BvhWorkspace,
    margin: f64,
}

impl std::fmt::Debug for SurfaceTree {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SurfaceTree")
            .field("triangles", &self.triangles.len())
            .field("margin", &self.margin)
            .finish()
    }
}

fn to_parry(p: &Vector3<f64>) -> Vector {
    Vector::new(p.x, p.y, p.z)
}

impl SurfaceTree {
    /// Builds the hierarchy of surface `s` at positions `x`, leaf boxes grown by `margin`.
    pub fn new(s: &BoundarySurface, x: &[f64], margin: f64) -> Self {
        let triangles: Vec<[usize; 3]> =
            s.mesh.triangles.iter().map(|t| t.map(|i| s.volume_vertex[i])).collect();
        let leaves: Vec<Aabb> = triangles.iter().map(|t| leaf_box(t, x, margin)).collect();
        let bvh = Bvh::from_leaves(BvhBuildStrategy::Binned, &leaves);
        SurfaceTree { triangles, bvh, workspace: BvhWorkspace::default(), margin }
    }

    /// Refits every leaf to positions `x`, grown by a new `margin` (the
    /// tree's topology is kept).
    pub fn refit(&mut self, x: &[f64], margin: f64) {
        self.margin = margin;
        for (k, t) in self.triangles.iter().enumerate() {
            self.bvh.insert_or_update_partially(leaf_box(t, x, self.margin), k as u32, 0.0);
        }
        self.bvh.refit(&mut self.workspace);
    }

    /// The margin the leaf boxes are grown by (m).
    pub fn margin(&self) -> f64 {
        self.margin
    }

    /// Surface triangles (volume numbering).
    pub fn triangles(&self) -> &[[usize; 3]] {
        &self.triangles
    }

    /// The closest point to `p` among the triangles within the margin plus
    /// `extra` (the query point's own reach), skipping those for which
    /// `skip` holds. Ties within round-off keep the lowest triangle index,
    /// so the choice does not flip with the last bits.
    pub fn closest(
        &self,
        x: &[f64],
        p: &Vector3<f64>,
        extra: f64,
        skip: impl Fn(&[usize; 3]) -> bool,
    ) -> Option<SurfaceHit> {
        let radius = self.margin + extra;
        let mut best: Option<SurfaceHit> = None;
        for t in self.triangles_near(&p.add_scalar(-extra), &p.add_scalar(extra)) {
            if skip(t) {
                continue;
            }
            let [a, b, c] = t.map(|i| point(x, i));
            let w = closest_on_triangle(p, &a, &b, &c);
            let q = a * w[0] + b * w[1] + c * w[2];
            let distance = (p - q).norm();
            if distance < radius && best.is_none_or(|h| distance < h.distance - TIE * radius) {
                best = Some(SurfaceHit { triangle: *t, weights: w, point: q, distance });
            }
        }
        best
    }

    /// The triangles whose leaf boxes (grown by the margin) meet the box
    /// `lo..hi`, in index order.
    pub fn triangles_near(&self, lo: &Vector3<f64>, hi: &Vector3<f64>) -> impl Iterator<Item = &[usize; 3]> {
        let mut leaves: Vec<u32> = self.bvh.intersect_aabb(&Aabb::new(to_parry(lo), to_parry(hi))).collect();
        leaves.sort_unstable();
        leaves.into_iter().map(|k| &self.triangles[k as usize])
    }
}

fn leaf_box(t: &[usize; 3], x: &[f64], margin: f64) -> Aabb {
    let p = t.map(|i| point(x, i));
    let lo = p[0].inf(&p[1]).inf(&p[2]).add_scalar(-margin);
    let hi = p[0].sup(&p[1]).sup(&p[2]).add_scalar(margin);
    Aabb::new(to_parry(&lo), to_parry(&hi))
}

#[cfg(test)]
mod tests {
    use super::*;
    use ferrofem_mesh::generate;

    fn brute_force(tree: &SurfaceTree, x: &[f64], p: &Vector3<f64>) -> Option<(usize, f64)> {
        tree.triangles()
            .iter()
            .enumerate()
            .map(|(k, t)| {
                let [a, b, c] = t.map(|i| point(x, i));
                let w = closest_on_triangle(p, &a, &b, &c);
                (k, (p - (a * w[0] + b * w[1] + c * w[2])).norm())
            })
            .filter(|&(_, d)| d < tree.margin())
            .min_by(|a, b| a.1.total_cmp(&b.1))
    }

    /// The tree's answer equals a brute-force search over every triangle,
    /// before and after a deformation that the refit must follow.
    #[test]
    fn closest_matches_brute_force_after_refit() {
        let mesh = generate::ball(0.1, 6).unwrap();
        let mut x: Vec<f64> = mesh.vertices.iter().flatten().copied().collect();
        let mut tree = SurfaceTree::new(&mesh.boundary(), &x, 0.02);
        let probes: Vec<Vector3<f64>> = (0..400)
            .map(|k| {
                let f = k as f64;
                Vector3::new((f * 0.37).sin(), (f * 0.73).cos(), (f * 0.11).sin()) * 0.13
            })
            .collect();
        for round in 0..2 {
            let mut found = 0;
            for p in &probes {
                let hit = tree.closest(&x, p, 0.0, |_| false);
                let reference = brute_force(&tree, &x, p);
                assert_eq!(hit.is_some(), reference.is_some(), "round {round}, probe {p:?}");
                if let (Some(h), Some((_, d))) = (hit, reference) {
                    assert!((h.distance - d).abs() < 1e-12, "{} vs {d}", h.distance);
                    found += 1;
                }
            }
            assert!(found > 20, "only {found} probes near the surface");
            // Squash the ball along z and shift it: the refitted tree must follow.
            x.chunks_exact_mut(3).for_each(|v| {
                v[2] = 0.5 * v[2] + 0.03;
                v[0] += 0.01;
            });
            tree.refit(&x, 0.02);
        }
    }
}
