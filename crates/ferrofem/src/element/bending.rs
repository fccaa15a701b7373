//! Discrete bending energies of membranes (zeng2025 Table 1's variants):
//! linear stencils `y = Σₐ cₐ xₐ` with a weight, projected onto their rest
//! length by the local step.

use nalgebra::Vector3;
use serde::{Deserialize, Serialize};

/// Bending model of a membrane (zeng2025 Table 1's variants).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum BendingModel {
    /// Quadratic isometric bending per interior edge (Bergou et al. 2006).
    Isometric,
    /// Cotangent Laplace–Beltrami per interior vertex (Bouaziz et al. 2014).
    LaplaceBeltrami,
}

/// `bending = { model = …, stiffness = … }` of a membrane.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Bending {
    /// Which discrete bending energy.
    pub model: BendingModel,
    /// Bending stiffness k_b (N·m).
    pub stiffness: f64,
}

impl Bending {
    /// The stencils of this energy on a triangle mesh at rest.
    pub fn stencils(&self, rest: &[[f64; 3]], triangles: &[[usize; 3]]) -> Vec<Stencil> {
        match self.model {
            BendingModel::Isometric => isometric_bending(rest, triangles, self.stiffness),
            BendingModel::LaplaceBeltrami => laplace_beltrami_bending(rest, triangles, self.stiffness),
        }
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

    /// The stencil with its rest length at `rest` (the mesh's rest
    /// positions, `size` their bounding box's largest side).
    fn with_rest(
        vertices: Vec<usize>,
        coeffs: Vec<f64>,
        weight: f64,
        rest: &[[f64; 3]],
        size: f64,
    ) -> Stencil {
        let mut s = Stencil { vertices, coeffs, weight, rest_length: 0.0 };
        let r = s
            .vertices
            .iter()
            .zip(&s.coeffs)
            .map(|(&v, c)| Vector3::from(rest[v]) * *c)
            .sum::<Vector3<f64>>()
            .norm();
        // Round-off of a flat rest shape is not curvature.
        let scale: f64 = s.coeffs.iter().map(|c| c.abs()).sum::<f64>() * size;
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
    let size = bbox_size(rest);
    interior_edges(triangles)
        .into_iter()
        .map(|v| {
            let x = v.map(|i| Vector3::from(rest[i]));
            let (e0, e1, e2, e3, e4) = (x[1] - x[0], x[2] - x[0], x[3] - x[0], x[2] - x[1], x[3] - x[1]);
            let (c01, c02, c03, c04) = (cot(&e0, &e1), cot(&e0, &e2), cot(&-e0, &e3), cot(&-e0, &e4));
            let area = 0.5 * (e0.cross(&e1).norm() + e0.cross(&e2).norm());
            let s = (3.0 / area).sqrt();
            let k = [c03 + c04, c01 + c02, -c01 - c03, -c02 - c04].map(|c| c * s);
            Stencil::with_rest(v.to_vec(), k.to_vec(), stiffness, rest, size)
        })
        .collect()
}

/// Laplace–Beltrami bending (projective dynamics, Bouaziz et al. 2014):
/// per interior vertex `E = ½ k Aᵢ ‖Δxᵢ − pᵢ‖²` with the cotangent Laplacian
/// `Δxᵢ = (1/Aᵢ) Σⱼ ½(cot αᵢⱼ + cot βᵢⱼ)(xⱼ − xᵢ)`, `Aᵢ` the barycentric area,
/// `pᵢ` the current `Δxᵢ` rescaled to its rest length.
pub fn laplace_beltrami_bending(rest: &[[f64; 3]], triangles: &[[usize; 3]], stiffness: f64) -> Vec<Stencil> {
    let (n, size) = (rest.len(), bbox_size(rest));
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
            Stencil::with_rest(vertices, coeffs, stiffness * area[i], rest, size)
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
}
