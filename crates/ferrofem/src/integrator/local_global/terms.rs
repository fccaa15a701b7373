//! The energy terms of the local-global integrator, each a linear map `G`
//! of the positions with a weight `w` and a local projection (zeng2025
//! eq. 5): elastic elements (`G q = F`), bending stencils and positional
//! pins. Every `G` acts on each axis alike (`G = g ⊗ I₃`), so the global
//! matrix `A = M + h² Σ w GᵀG` is `A_s ⊗ I₃` with a scalar `A_s` over
//! vertices: one factorization of size `n` serves the three axes.

use nalgebra::{Matrix2, Matrix3, SMatrix, SVector, Vector3};

use crate::body::Kinematic;
use crate::element::hyperelastic::{local_projection, Gradient};
use crate::element::{Constitutive, Lame};

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

/// A linear stencil `y = Σₐ cₐ xₐ` with weight `w`, projected onto
/// `‖y‖ = r` (r its rest value): the bending terms of cloth. With `r = 0`
/// (a flat rest shape) the term is the quadratic `w/2 ‖y‖²`.
#[derive(Debug, Clone, PartialEq)]
pub struct Stencil {
    /// Vertex indices.
    pub vertices: Vec<usize>,
    /// Coefficients `cₐ`.
    pub coeffs: Vec<f64>,
    /// Weight (N·m).
    pub weight: f64,
    /// Rest length `r = ‖Σ cₐ Xₐ‖`.
    pub rest_length: f64,
}

impl Stencil {
    /// `y = Σₐ cₐ xₐ`.
    pub fn apply(&self, x: &[f64]) -> Vector3<f64> {
        self.vertices
            .iter()
            .zip(&self.coeffs)
            .map(|(&v, c)| Vector3::new(x[3 * v], x[3 * v + 1], x[3 * v + 2]) * *c)
            .sum()
    }

    /// Local step: the closest point of the sphere `‖p‖ = r` to `y`.
    pub fn project(&self, x: &[f64]) -> Vector3<f64> {
        let y = self.apply(x);
        match y.try_normalize(0.0) {
            Some(dir) if self.rest_length > 0.0 => dir * self.rest_length,
            _ => Vector3::zeros(),
        }
    }

    fn with_rest(vertices: Vec<usize>, coeffs: Vec<f64>, weight: f64, rest: &[[f64; 3]]) -> Stencil {
        let mut s = Stencil { vertices, coeffs, weight, rest_length: 0.0 };
        let flat: Vec<f64> = rest.iter().flatten().copied().collect();
        let r = s.apply(&flat).norm();
        // Round-off of a flat rest shape is not curvature.
        let scale: f64 = s.coeffs.iter().map(|c| c.abs()).sum::<f64>() * bbox_size(rest);
        s.rest_length = if r > 1e-12 * scale { r } else { 0.0 };
        s
    }
}

fn bbox_size(points: &[[f64; 3]]) -> f64 {
    (0..3)
        .map(|d| {
            let (lo, hi) = points.iter().fold((f64::MAX, f64::MIN), |(l, h), p| (l.min(p[d]), h.max(p[d])));
            hi - lo
        })
        .fold(0.0, f64::max)
}

/// A positional constraint as a local term: `w/2 ‖x_v − t(t)‖²`, its
/// projection the target itself (zeng2025 §3.3: fixed or moving points).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Pin {
    /// Vertex index.
    pub vertex: usize,
    /// Weight (N/m).
    pub weight: f64,
    /// How the target moves from the rest position.
    pub motion: Kinematic,
    /// Rest position.
    pub rest: Vector3<f64>,
}

impl Pin {
    /// Target at time `t`.
    pub fn target(&self, t: f64) -> Vector3<f64> {
        self.motion.target(self.rest, t)
    }
}

fn cot(a: &Vector3<f64>, b: &Vector3<f64>) -> f64 {
    a.dot(b) / a.cross(b).norm().max(f64::MIN_POSITIVE)
}

/// Interior edges of a triangle mesh with their two opposite vertices:
/// `(x0, x1, x2, x3)`, the edge `x0 x1` shared by `x0 x1 x2` and `x0 x1 x3`.
fn interior_edges(triangles: &[[usize; 3]]) -> Vec<[usize; 4]> {
    let mut edges: std::collections::BTreeMap<(usize, usize), Vec<usize>> = Default::default();
    for t in triangles {
        for k in 0..3 {
            let (a, b, c) = (t[k], t[(k + 1) % 3], t[(k + 2) % 3]);
            edges.entry((a.min(b), a.max(b))).or_default().push(c);
        }
    }
    edges.into_iter().filter(|(_, o)| o.len() == 2).map(|((a, b), o)| [a, b, o[0], o[1]]).collect()
}

/// Isometric bending (Bergou et al. 2006; Wardetzky et al. 2007): per
/// interior edge `E = ½ k (3/(A₀+A₁)) ‖Σ Kᵢ xᵢ‖²` with the cotangent
/// weights `K = (c₀₃ + c₀₄, c₀₁ + c₀₂, −c₀₁ − c₀₃, −c₀₂ − c₀₄)`.
pub fn isometric_bending(rest: &[[f64; 3]], triangles: &[[usize; 3]], stiffness: f64) -> Vec<Stencil> {
    interior_edges(triangles)
        .into_iter()
        .map(|v| {
            let x = v.map(|i| Vector3::from(rest[i]));
            let (e0, e1, e2, e3, e4) = (x[1] - x[0], x[2] - x[0], x[3] - x[0], x[2] - x[1], x[3] - x[1]);
            let (c01, c02, c03, c04) = (cot(&e0, &e1), cot(&e0, &e2), cot(&-e0, &e3), cot(&-e0, &e4));
            let area = 0.5 * (e0.cross(&e1).norm() + e0.cross(&e2).norm());
            let s = (3.0 / area).sqrt();
            let k = [c03 + c04, c01 + c02, -c01 - c03, -c02 - c04].map(|c| c * s);
            Stencil::with_rest(v.to_vec(), k.to_vec(), stiffness, rest)
        })
        .collect()
}

/// Laplace–Beltrami bending (projective dynamics, Bouaziz et al. 2014):
/// per interior vertex `E = ½ k Aᵢ ‖Δxᵢ − pᵢ‖²` with the cotangent Laplacian
/// `Δxᵢ = (1/Aᵢ) Σⱼ ½(cot αᵢⱼ + cot βᵢⱼ)(xⱼ − xᵢ)`, `Aᵢ` the barycentric area,
/// `pᵢ` the current `Δxᵢ` rescaled to its rest length.
pub fn laplace_beltrami_bending(rest: &[[f64; 3]], triangles: &[[usize; 3]], stiffness: f64) -> Vec<Stencil> {
    let n = rest.len();
    let mut area = vec![0.0; n];
    let mut weights: Vec<std::collections::BTreeMap<usize, f64>> = vec![Default::default(); n];
    for t in triangles {
        let x = t.map(|i| Vector3::from(rest[i]));
        let a = 0.5 * (x[1] - x[0]).cross(&(x[2] - x[0])).norm();
        for k in 0..3 {
            let (i, j, o) = (t[k], t[(k + 1) % 3], x[(k + 2) % 3]);
            area[i] += a / 3.0;
            // The angle at the third vertex faces the edge i–j.
            let c = 0.5 * cot(&(Vector3::from(rest[i]) - o), &(Vector3::from(rest[j]) - o));
            *weights[i].entry(j).or_default() += c;
            *weights[j].entry(i).or_default() += c;
        }
    }
    let boundary: std::collections::HashSet<usize> = {
        let interior: std::collections::HashSet<(usize, usize)> =
            interior_edges(triangles).iter().map(|e| (e[0], e[1])).collect();
        triangles
            .iter()
            .flat_map(|t| (0..3).map(move |k| (t[k].min(t[(k + 1) % 3]), t[k].max(t[(k + 1) % 3]))))
            .filter(|e| !interior.contains(e))
            .flat_map(|(a, b)| [a, b])
            .collect()
    };
    (0..n)
        .filter(|i| !boundary.contains(i) && !weights[*i].is_empty())
        .map(|i| {
            let mut vertices = vec![i];
            let mut coeffs = vec![-weights[i].values().sum::<f64>() / area[i]];
            for (&j, &w) in &weights[i] {
                vertices.push(j);
                coeffs.push(w / area[i]);
            }
            Stencil::with_rest(vertices, coeffs, stiffness * area[i], rest)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use ferrofem_mesh::generate;

    #[test]
    fn bending_stencils_vanish_on_a_flat_sheet_and_see_a_fold() {
        let sheet = generate::sheet([1.0, 0.6], [5, 3]).unwrap();
        let iso = isometric_bending(&sheet.vertices, &sheet.triangles, 1.0);
        let lb = laplace_beltrami_bending(&sheet.vertices, &sheet.triangles, 1.0);
        assert_eq!(iso.len(), 53 - 16, "interior edges of a 5×3 sheet: all but the 16 on the border");
        assert_eq!(lb.len(), 4 * 2, "interior vertices of a 5×3 sheet");
        let flat: Vec<f64> = sheet.vertices.iter().flatten().copied().collect();
        for s in iso.iter().chain(&lb) {
            assert!(s.apply(&flat).norm() < 1e-12 && s.rest_length == 0.0);
        }
        // Translations and rotations are invisible: coefficients sum to 0.
        assert!(iso.iter().chain(&lb).all(|s| s.coeffs.iter().sum::<f64>().abs() < 1e-9));
        // Lift one interior vertex: bending energy appears.
        let mut bent = flat.clone();
        bent[3 * 8 + 2] = 0.05;
        assert!(iso.iter().map(|s| s.apply(&bent).norm()).sum::<f64>() > 1e-3);
        assert!(lb.iter().map(|s| s.apply(&bent).norm()).sum::<f64>() > 1e-3);
    }

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
