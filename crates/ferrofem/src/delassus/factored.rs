//! `W = Σ_b h² H_b (W̄_b ⊗ I₃) H_bᵀ` applied without forming it, for the
//! non-smooth Newton under local-global (zeng2025 eq. 26–27): `A = A_s ⊗ I₃`
//! does not couple axes, so a product is `y = H_bᵀ v` by vertex and axis,
//! `z = W̄_b y` for the three axes, `W v = Σ_b H_b z`. It reads the
//! `m × m` `W̄_b` of the `m` vertices the rows touch, where the assembled
//! `W` is `c × c` with `c ≈ 3m` rows (one vertex per contact): nine times
//! fewer entries per product, and no expansion of `W̄` into `W` per step;
//! a large `W̄` is read by its upper triangle alone.

use ferrofem_linalg::dense::symmetric_times3;
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
    /// The rows in order, a vertex contact's three rows as one item.
    items: Vec<Item>,
    /// Slots `m`.
    m: usize,
    /// `h² W̄_b`, `m × m`, symmetric (row `i` at `[i m, (i + 1) m)`).
    wbar: Vec<f64>,
}

/// A step of the products' walk over a part's rows.
#[derive(Debug, Clone, Copy)]
enum Item {
    /// Row `i` (its CSR entries).
    Row(u32),
    /// Rows `i, i + 1, i + 2`, rows `g, g + 1, g + 2` of `W`, each over
    /// the three axes of slot `s` (`h` row-major): a vertex contact's
    /// normal and tangents, applied as one 3×3 block.
    Vertex { i: u32, s: u32, h: [f64; 9] },
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
    /// Scratch of the symmetric product (its parts' transposed sums).
    t: Vec<f64>,
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
    /// `wbar` is scaled in place and kept; it is handed back holding the
    /// storage of an earlier part (contents unspecified), for reuse.
    pub fn add_part(
        &mut self,
        h_b: &CsrMatrix,
        rows: &[usize],
        order: &[usize],
        wbar: &mut Vec<f64>,
        scale: f64,
    ) {
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
        part.items.clear();
        let mut i = 0;
        while i < rows.len() {
            let item = vertex_block(part, i).unwrap_or(Item::Row(i as u32));
            i += if matches!(item, Item::Vertex { .. }) { 3 } else { 1 };
            part.items.push(item);
        }
        part.m = m;
        wbar.par_iter_mut().with_min_len(1 << 14).for_each(|w| *w *= scale);
        std::mem::swap(&mut part.wbar, wbar);
        add_blocks(part, &mut self.blocks);
    }

    /// `out = W v`.
    pub fn times(&mut self, v: &[f64], out: &mut [f64]) {
        assert!(v.len() == self.c && out.len() == self.c, "W is c × c");
        out.iter_mut().for_each(|o| *o = 0.0);
        let FactoredDelassus { parts, used, y, z, t, .. } = self;
        for part in &parts[..*used] {
            part.times_add(v, out, y, z, t);
        }
    }

    /// `W[i, j]` for two rows of one group (its 3×3 diagonal block).
    pub fn block_entry(&self, i: usize, j: usize) -> f64 {
        assert_eq!(i / 3, j / 3, "only the groups' diagonal blocks are kept");
        self.blocks[i / 3][3 * (i % 3) + j % 3]
    }
}

impl Part {
    /// `out += H_b W̄_b H_bᵀ v`, `y`, `z` scratch. A `v` that is zero on
    /// the part's rows (a Newton direction on separating contacts only)
    /// adds nothing and reads no `W̄`.
    fn times_add(&self, v: &[f64], out: &mut [f64], y: &mut Vec<f64>, z: &mut Vec<f64>, t: &mut Vec<f64>) {
        let m = self.m;
        y.clear();
        y.resize(3 * m, 0.0);
        let mut touched = false;
        for item in &self.items {
            match *item {
                Item::Row(i) => {
                    let i = i as usize;
                    let vi = v[self.rows[i]];
                    if vi != 0.0 {
                        touched = true;
                        for &(s, a, h) in &self.entries[self.row_ptr[i]..self.row_ptr[i + 1]] {
                            y[a as usize * m + s as usize] += h * vi;
                        }
                    }
                }
                Item::Vertex { i, s, h } => {
                    let g = self.rows[i as usize];
                    let vg = [v[g], v[g + 1], v[g + 2]];
                    touched |= vg.iter().any(|&x| x != 0.0);
                    // The rows' sums in their order, in registers: adding a
                    // zero row's ±0 changes no bit (`y` is never −0).
                    for a in 0..3 {
                        let ya = &mut y[a * m + s as usize];
                        *ya = *ya + h[a] * vg[0] + h[3 + a] * vg[1] + h[6 + a] * vg[2];
                    }
                }
            }
        }
        if !touched {
            return;
        }
        z.clear();
        z.resize(3 * m, 0.0);
        // By rows, or from 2,048 slots on by the upper triangle alone (half
        // the bytes: past the caches, the product's cost); on the team's
        // threads where the Newton solve holds one.
        symmetric_times3(&self.wbar, m, y, z, t);
        for item in &self.items {
            match *item {
                Item::Row(i) => {
                    let entries = &self.entries[self.row_ptr[i as usize]..self.row_ptr[i as usize + 1]];
                    out[self.rows[i as usize]] +=
                        entries.iter().map(|&(s, a, h)| h * z[3 * s as usize + a as usize]).sum::<f64>();
                }
                Item::Vertex { i, s, h } => {
                    let (g, zs) = (self.rows[i as usize], &z[3 * s as usize..3 * s as usize + 3]);
                    for r in 0..3 {
                        out[g + r] += (0..3).map(|a| h[3 * r + a] * zs[a]).sum::<f64>();
                    }
                }
            }
        }
    }
}

/// Rows `i..i + 3` of `part` as one [`Item::Vertex`], when they are rows
/// `g, g + 1, g + 2` of `W` (one group) and each reads axes 0, 1, 2 of
/// one slot, the same for the three.
fn vertex_block(part: &Part, i: usize) -> Option<Item> {
    let g = *part.rows.get(i + 2).and(part.rows.get(i))?;
    if g % 3 != 0 || part.rows[i + 1] != g + 1 || part.rows[i + 2] != g + 2 {
        return None;
    }
    let slot = part.entries.get(part.row_ptr[i])?.0;
    let mut h = [0.0; 9];
    for r in 0..3 {
        let entries = &part.entries[part.row_ptr[i + r]..part.row_ptr[i + r + 1]];
        if entries.len() != 3 || entries.iter().enumerate().any(|(a, e)| e.0 != slot || e.1 as usize != a) {
            return None;
        }
        (0..3).for_each(|a| h[3 * r + a] = entries[a].2);
    }
    Some(Item::Vertex { i: i as u32, s: slot, h })
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
