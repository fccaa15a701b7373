//! `W = Σ_b h² H_b (W̄_b ⊗ I₃) H_bᵀ` applied without forming it, for the
//! non-smooth Newton under local-global (zeng2025 eq. 26–27): `A = A_s ⊗ I₃`
//! does not couple axes, so a product is `y = H_bᵀ v` by vertex and axis,
//! `z = W̄_b y` for the three axes, `W v = Σ_b H_b z`. It reads the
//! `m × m` `W̄_b` of the `m` vertices the rows touch, where the assembled
//! `W` is `c × c` with `c ≈ 3m` rows (one vertex per contact): nine times
//! fewer entries per product, and no expansion of `W̄` into `W` per step.

use ferrofem_linalg::simd::dot4x3;
use ferrofem_linalg::CsrMatrix;
use rayon::prelude::*;

/// One body's part: its rows `H_b` over slots (the vertices it touches,
/// in `W̄_b`'s order) and `h² W̄_b`.
#[derive(Debug, Clone, Default)]
struct Part {
    /// The row of `W` of each of the body's rows.
    rows: Vec<usize>,
    /// `H_b` by row: (slot, axis, value), CSR.
    row_ptr: Vec<usize>,
    entries: Vec<(u32, u8, f64)>,
    /// Slots `m`.
    m: usize,
    /// `h² W̄_b`, `m × m`, symmetric (row `i` at `[i m, (i + 1) m)`).
    wbar: Vec<f64>,
}

/// `W` in factored form, `c × c`: the bodies' parts, and the 3×3 diagonal
/// blocks of `W` (the complementarity scale and the Newton system's
/// diagonal read them).
#[derive(Debug, Clone, Default)]
pub struct FactoredDelassus {
    c: usize,
    parts: Vec<Part>,
    used: usize,
    blocks: Vec<[f64; 9]>,
    /// Scratch: `y = H_bᵀ v` (axis-major, `3 m`) and `z = W̄_b y` (slot-major).
    y: Vec<f64>,
    z: Vec<f64>,
}

impl FactoredDelassus {
    /// Empties it for a problem of `c` rows: [`Self::is_built`] is false
    /// until the first part is added.
    pub fn reset(&mut self, c: usize) {
        self.c = c;
        self.used = 0;
        self.blocks.clear();
        self.blocks.resize(c / 3, [0.0; 9]);
    }

    /// Whether it holds a `W` (a part was added since the last reset).
    pub fn is_built(&self) -> bool {
        self.used > 0
    }

    /// Rows (and columns) of `W`.
    pub fn size(&self) -> usize {
        self.c
    }

    /// Adds body `b`'s part `h² H_b (W̄_b ⊗ I₃) H_bᵀ`: `h_b` its rows over
    /// its DOFs (`3 · vertex + axis`), `rows` their rows of `W`, `order`
    /// the vertex of each slot of `wbar` (`m × m`, symmetric), `scale` h².
    pub fn add_part(&mut self, h_b: &CsrMatrix, rows: &[usize], order: &[usize], wbar: &[f64], scale: f64) {
        let m = order.len();
        assert_eq!(wbar.len(), m * m, "W̄ must be m × m");
        if self.used == self.parts.len() {
            self.parts.push(Part::default());
        }
        let part = &mut self.parts[self.used];
        self.used += 1;
        let mut slot_of = std::collections::HashMap::with_capacity(m);
        order.iter().enumerate().for_each(|(s, &v)| {
            slot_of.insert(v, s as u32);
        });
        part.rows.clear();
        part.rows.extend_from_slice(rows);
        part.row_ptr.clear();
        part.entries.clear();
        part.row_ptr.push(0);
        let hp = &h_b.pattern;
        for r in 0..hp.nrows {
            for p in hp.row_ptr[r]..hp.row_ptr[r + 1] {
                let d = hp.col_idx[p] as usize;
                part.entries.push((slot_of[&(d / 3)], (d % 3) as u8, h_b.values[p]));
            }
            part.row_ptr.push(part.entries.len());
        }
        part.m = m;
        part.wbar.clear();
        part.wbar.extend(wbar.iter().map(|w| scale * w));
        add_blocks(part, &mut self.blocks);
    }

    /// `out = W v`.
    pub fn times(&mut self, v: &[f64], out: &mut [f64]) {
        assert!(v.len() == self.c && out.len() == self.c, "W is c × c");
        out.iter_mut().for_each(|o| *o = 0.0);
        let FactoredDelassus { parts, used, y, z, .. } = self;
        for part in &parts[..*used] {
            part.times_add(v, out, y, z);
        }
    }

    /// `W[i, j]` for two rows of one group (its 3×3 diagonal block).
    pub fn block_entry(&self, i: usize, j: usize) -> f64 {
        assert_eq!(i / 3, j / 3, "only the groups' diagonal blocks are kept");
        self.blocks[i / 3][3 * (i % 3) + j % 3]
    }
}

impl Part {
    /// `out += H_b W̄_b H_bᵀ v`, `y`, `z` scratch.
    fn times_add(&self, v: &[f64], out: &mut [f64], y: &mut Vec<f64>, z: &mut Vec<f64>) {
        let m = self.m;
        y.clear();
        y.resize(3 * m, 0.0);
        for (i, &g) in self.rows.iter().enumerate() {
            let vi = v[g];
            if vi != 0.0 {
                for &(s, a, h) in &self.entries[self.row_ptr[i]..self.row_ptr[i + 1]] {
                    y[a as usize * m + s as usize] += h * vi;
                }
            }
        }
        z.clear();
        z.resize(3 * m, 0.0);
        let (wbar, y) = (&self.wbar, &y[..]);
        // Four rows of W̄ per task, each read once for the three axes.
        z.par_chunks_mut(12).enumerate().with_min_len(8).for_each(|(b, zb)| {
            let first = 4 * b;
            let row = |k: usize| {
                let i = (first + k).min(m - 1);
                &wbar[i * m..(i + 1) * m]
            };
            let rows = [row(0), row(1), row(2), row(3)];
            let sums = dot4x3(rows, [&y[..m], &y[m..2 * m], &y[2 * m..]]);
            for (a, sums) in sums.iter().enumerate() {
                for (k, s) in sums.iter().enumerate().take(zb.len() / 3) {
                    zb[3 * k + a] = *s;
                }
            }
        });
        for (i, &g) in self.rows.iter().enumerate() {
            let entries = &self.entries[self.row_ptr[i]..self.row_ptr[i + 1]];
            out[g] += entries.iter().map(|&(s, a, h)| h * z[3 * s as usize + a as usize]).sum::<f64>();
        }
    }
}

/// `blocks[k] += [H_b (W̄_b ⊗ I₃) H_bᵀ]` over the rows of group `k` the
/// part holds (a row listed twice, as a self-contact's two sides, counts
/// twice, as in the assembled `W`).
fn add_blocks(part: &Part, blocks: &mut [[f64; 9]]) {
    let mut by_group: Vec<(usize, usize)> = part.rows.iter().enumerate().map(|(i, &g)| (g / 3, i)).collect();
    by_group.sort_unstable();
    let m = part.m;
    let row = |i: usize| &part.entries[part.row_ptr[i]..part.row_ptr[i + 1]];
    for same in by_group.chunk_by(|a, b| a.0 == b.0) {
        let k = same[0].0;
        for &(_, i) in same {
            for &(_, j) in same {
                let mut sum = 0.0;
                for &(s, a, hi) in row(i) {
                    for &(t, b, hj) in row(j) {
                        if a == b {
                            sum += hi * hj * part.wbar[s as usize * m + t as usize];
                        }
                    }
                }
                blocks[k][3 * (part.rows[i] % 3) + part.rows[j] % 3] += sum;
            }
        }
    }
}
