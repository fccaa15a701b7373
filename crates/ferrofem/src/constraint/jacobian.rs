//! Constraint Jacobians (zeng2022 §3.2): `H` maps a body's DOFs to
//! constraint rows, grouped by contact as (normal, t1, t2).

use ferrofem_linalg::{CsrMatrix, CsrPattern};

/// `H` of one body: `c × n`, built row group by row group.
#[derive(Debug, Clone, Default)]
pub struct ConstraintJacobian {
    dofs: usize,
    rows: Vec<Vec<(u32, f64)>>,
}

impl ConstraintJacobian {
    /// An empty Jacobian for a body with `dofs` DOFs.
    pub fn new(dofs: usize) -> Self {
        ConstraintJacobian { dofs, rows: Vec::new() }
    }

    /// Adds the three rows of a point `p = Σ wᵢ xᵢ` (a vertex, or a
    /// barycentric point of a triangle) along the directions of `frame`
    /// (normal, t1, t2): row `d` is `Σᵢ wᵢ frame[d]ᵀ` on vertex `i`'s DOFs.
    pub fn push_point(&mut self, weights: &[(usize, f64)], frame: [[f64; 3]; 3]) {
        for dir in frame {
            let mut row: Vec<(u32, f64)> = weights
                .iter()
                .flat_map(|&(v, w)| (0..3).map(move |k| ((3 * v + k) as u32, w * dir[k])))
                .filter(|(_, x)| *x != 0.0)
                .collect();
            row.sort_by_key(|e| e.0);
            row.dedup_by(|a, b| {
                let same = a.0 == b.0;
                if same {
                    b.1 += a.1;
                }
                same
            });
            self.rows.push(row);
        }
    }

    /// Number of rows `c`.
    pub fn nrows(&self) -> usize {
        self.rows.len()
    }

    /// `H` as a CSR matrix.
    pub fn to_csr(&self) -> CsrMatrix {
        let pattern = CsrPattern::from_rows(
            self.dofs,
            self.rows.iter().map(|r| r.iter().map(|e| e.0).collect()).collect(),
        );
        let values = self.rows.iter().flat_map(|r| r.iter().map(|e| e.1)).collect();
        CsrMatrix { pattern, values }
    }
}
