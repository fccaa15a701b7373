//! The rest elements both integrators share (zeng2025 eq. 5; zeng2022
//! §3.1): a linear simplex of dimension `D` with `N = D + 1` vertices, its
//! shape-function gradients, rest measure and Lamé parameters. Implicit
//! Euler evaluates tets co-rotationally ([`super::corotational`]); the
//! local-global integrator projects them ([`Element::local_step`]).

use nalgebra::{Matrix2, Matrix3, SMatrix, SVector, Vector3};

use super::hyperelastic::{local_projection, Gradient};
use super::{Constitutive, Lame};

/// An elastic element of dimension `D` with `N = D + 1` vertices (a tet:
/// `D = 3`; a membrane triangle: `D = 2`): `F = Σₐ xₐ gₐᵀ`.
#[derive(Debug, Clone, PartialEq)]
pub struct Element<const D: usize, const N: usize> {
    /// Vertex indices.
    pub vertices: [usize; N],
    /// Gradients `gₐ` of the linear shape functions in the rest frame.
    pub grads: [SVector<f64, D>; N],
    /// Rest volume (tets) or area × thickness (triangles), m³.
    pub measure: f64,
    /// Lamé parameters.
    pub lame: Lame,
    /// ADMM/PD weight `w = k · measure` (N·m).
    pub weight: f64,
}

/// A tetrahedron.
pub type TetElement = Element<3, 4>;
/// A membrane triangle.
pub type TriElement = Element<2, 3>;

impl<const D: usize, const N: usize> Element<D, N>
where
    SMatrix<f64, 3, D>: Gradient<D>,
{
    /// `F = Σₐ xₐ gₐᵀ` from flat positions (DOF `3·vertex + axis`).
    #[inline(always)]
    pub fn gradient(&self, x: &[f64]) -> SMatrix<f64, 3, D> {
        let mut f = SMatrix::<f64, 3, D>::zeros();
        for (&v, g) in self.vertices.iter().zip(&self.grads) {
            f += Vector3::new(x[3 * v], x[3 * v + 1], x[3 * v + 2]) * g.transpose();
        }
        f
    }

    /// The local step: `p = prox(F + u)` (eq. 5, ADMM-PD form), written to
    /// `target` as the value `p − u` the global step pulls `F` towards
    /// (its previous value warm-starts ARAP's rotation), updating the
    /// scaled dual `u ← u + F − p` when the model uses one.
    pub fn local_step(
        &self,
        model: Constitutive,
        x: &[f64],
        dual: &mut SMatrix<f64, 3, D>,
        target: &mut SMatrix<f64, 3, D>,
    ) {
        let f = self.gradient(x);
        let k = self.weight / self.measure;
        if !model.uses_dual() {
            *target = local_projection(model, self.lame, k, &f, target);
            return;
        }
        let p = local_projection(model, self.lame, k, &(f + *dual), target);
        *dual += f - p;
        *target = p - *dual;
    }
}

impl TetElement {
    /// A tet from rest positions; `None` when its rest volume is not positive.
    pub fn tet(rest: &[[f64; 3]], vertices: [usize; 4], model: Constitutive, lame: Lame) -> Option<Self> {
        let p = vertices.map(|v| Vector3::from(rest[v]));
        let dm = Matrix3::from_columns(&[p[1] - p[0], p[2] - p[0], p[3] - p[0]]);
        let volume = dm.determinant() / 6.0;
        let inv = dm.try_inverse().filter(|_| volume > 0.0)?;
        // Rows of Dm⁻¹ are g₁…g₃; g₀ = −(g₁ + g₂ + g₃).
        let g: [SVector<f64, 3>; 3] = [0, 1, 2].map(|r| inv.row(r).transpose());
        let grads = [-(g[0] + g[1] + g[2]), g[0], g[1], g[2]];
        Some(Element { vertices, grads, measure: volume, lame, weight: model.penalty(lame) * volume })
    }
}

impl TriElement {
    /// A membrane triangle of `thickness` from rest positions, measured in
    /// its own plane; `None` when its area is not positive.
    pub fn triangle(
        rest: &[[f64; 3]],
        vertices: [usize; 3],
        thickness: f64,
        model: Constitutive,
        lame: Lame,
    ) -> Option<Self> {
        let p = vertices.map(|v| Vector3::from(rest[v]));
        let (e1, e2) = (p[1] - p[0], p[2] - p[0]);
        let t1 = e1.try_normalize(0.0)?;
        let t2 = (e2 - t1 * e2.dot(&t1)).try_normalize(0.0)?;
        let dm = Matrix2::new(e1.norm(), e2.dot(&t1), 0.0, e2.dot(&t2));
        let area = 0.5 * dm.determinant();
        let inv = dm.try_inverse().filter(|_| area > 0.0)?;
        let g: [SVector<f64, 2>; 2] = [0, 1].map(|r| inv.row(r).transpose());
        let grads = [-(g[0] + g[1]), g[0], g[1]];
        let measure = area * thickness;
        Some(Element { vertices, grads, measure, lame, weight: model.penalty(lame) * measure })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn element_gradients_reproduce_the_deformation() {
        let rest = [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 2.0, 0.0], [0.0, 0.0, 0.5]];
        let lame = Lame { lambda: 1.0, mu: 1.0 };
        let tet = TetElement::tet(&rest, [0, 1, 2, 3], Constitutive::Arap, lame).unwrap();
        let f = Matrix3::new(1.1, 0.2, 0.0, 0.0, 0.9, 0.3, 0.1, 0.0, 1.2);
        let x: Vec<f64> = rest.iter().flat_map(|p| (f * Vector3::from(*p)).data.0[0]).collect();
        assert!((tet.gradient(&x) - f).norm() < 1e-12);
        assert!((tet.measure - 1.0 / 6.0).abs() < 1e-15);
        assert!(TetElement::tet(&rest, [0, 2, 1, 3], Constitutive::Arap, lame).is_none(), "inverted");
        let tri = TriElement::triangle(&rest, [0, 1, 2], 0.01, Constitutive::Arap, lame).unwrap();
        let flat: Vec<f64> = rest.iter().flatten().copied().collect();
        let ft = tri.gradient(&flat);
        assert!((ft.transpose() * ft - Matrix2::identity()).norm() < 1e-12, "rest membrane F has FᵀF = I");
    }
}
