//! Isolated DOFs (zeng2022 §4–5): `W̄ = Ī A⁻¹ Īᵀ = S̄ᵀ D⁻¹ S̄` with
//! `S̄ = L⁻¹ P Īᵀ`, whose column for DOF `d` is nonzero only on the
//! elimination-tree path from `P d` to the root (eq. 23–25, Fig. 4).
//!
//! The columns are solved together, supernode by supernode over the union
//! of their paths (the *reach*). Ordering the DOFs by the postorder of
//! their supernodes makes the columns that cross a supernode — those that
//! start in its subtree — one contiguous range, so each supernode holds a
//! dense `w × k` block: the shared top separators are solved and multiplied
//! with BLAS-3 kernels, the lower parts of the paths stay small and sparse.
//! A block keeps only the rows from the first one any of its columns
//! reaches, and an update whose rows form a few runs in its targets is
//! multiplied straight into them.
//! [`IsodofCache`] keeps the columns while the factor is unchanged and only
//! solves the DOFs it has not seen (§5, eq. 26–30).

use std::collections::HashMap;
use std::sync::Arc;

use faer::linalg::matmul::matmul;
use faer::linalg::matmul::triangular::{self, BlockStructure};
use faer::linalg::triangular_solve::solve_unit_lower_triangular_in_place;
use faer::prelude::{Reborrow, ReborrowMut};
use faer::{Accum, MatMut, MatRef, Par};
use rayon::prelude::*;

use super::etree::NONE;
use super::{Ldlt, LdltSymbolic};

/// Work above which a supernode's kernels run on all threads.
const PARALLEL_FLOPS: f64 = 2e6;

/// `S̄ = L⁻¹ P Īᵀ` for a set of DOFs, stored per supernode of their reach
/// and scaled by `D^{-1/2}` (`Z = D^{-1/2} S̄`, so `W̄ = Zᵀ Z`; `D > 0`
/// since `A` is positive definite).
#[derive(Debug, Clone)]
pub struct IsodofColumns {
    /// The DOFs (original numbering), in the internal order of the columns.
    dofs: Vec<usize>,
    blocks: Vec<Block>,
    /// Block of each supernode of the reach.
    block_of: HashMap<usize, usize>,
    /// Every block's values, one after another.
    values: Vec<f64>,
}

/// The rows `rho..width` of one supernode for the columns `lo..lo + cols`
/// (`rows × cols` column-major at `values[offset..]`, `rows = width − rho`);
/// the rows above `rho` are zero in every column (see [`Span`]).
#[derive(Debug, Clone)]
struct Block {
    sn: usize,
    lo: usize,
    cols: usize,
    rho: usize,
    rows: usize,
    offset: usize,
}

impl Block {
    fn range(&self) -> std::ops::Range<usize> {
        self.offset..self.offset + self.rows * self.cols
    }
}

/// A supernode of the reach: the columns `lo..hi` cross it, and its rows
/// before `rho` are structurally zero in all of them. A column of `S̄`
/// enters a supernode either at its own DOF or through the rows its
/// descendants' updates reach, so `rho` is the least of those rows; at a
/// ball's top separator it cuts a quarter of the rows (and ≈ 18% of the
/// flops of a bottom contact patch).
#[derive(Debug, Clone, Copy)]
struct Span {
    sn: usize,
    lo: usize,
    hi: usize,
    rho: usize,
}

/// Flop counts of building `W̄` for a set of DOFs (the cost model of
/// `auto`), with `r_s = w_s − rho_s` the rows a supernode's block keeps.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct IsodofCost {
    /// Triangular solves and updates, `Σ_s r_s² k_s + 2 r_s q_s k_s`.
    pub solve_flops: f64,
    /// `W̄ = S̄ᵀ D⁻¹ S̄` (lower half), `Σ_s r_s k_s (k_s + 1)`.
    pub gram_flops: f64,
    /// Stored entries of `S̄`, `Σ_s r_s k_s`.
    pub entries: f64,
}

/// DOFs sorted by (postorder rank of their supernode, permuted index), and
/// the supernodes of their reach in increasing order.
fn reach(s: &LdltSymbolic, dofs: &[usize]) -> (Vec<usize>, Vec<Span>) {
    let sn = &s.supernodes;
    let key = |d: usize| {
        let p = s.perm_inv[d];
        (sn.postorder_rank[sn.of_column[p] as usize], p)
    };
    let mut sorted = dofs.to_vec();
    sorted.sort_unstable_by_key(|&d| key(d));
    sorted.dedup();
    let mut range: HashMap<usize, (usize, usize)> = HashMap::new();
    for (i, &d) in sorted.iter().enumerate() {
        let mut t = sn.of_column[s.perm_inv[d]] as usize;
        while t != NONE {
            let r = range.entry(t).or_insert((i, i + 1));
            r.0 = r.0.min(i);
            r.1 = r.1.max(i + 1);
            t = sn.parent[t];
        }
    }
    let mut spans: Vec<Span> =
        range.into_iter().map(|(t, (lo, hi))| Span { sn: t, lo, hi, rho: sn.width(t) }).collect();
    spans.sort_unstable_by_key(|x| x.sn);
    let index: HashMap<usize, usize> = spans.iter().enumerate().map(|(i, x)| (x.sn, i)).collect();
    let mut lower = |row: usize| {
        let x = &mut spans[index[&(sn.of_column[row] as usize)]];
        x.rho = x.rho.min(row - sn.begin[x.sn]);
    };
    for &d in &sorted {
        lower(s.perm_inv[d]);
    }
    for &t in index.keys() {
        sn.pattern(t).iter().for_each(|&r| lower(r as usize));
    }
    (sorted, spans)
}

fn par_for(flops: f64) -> Par {
    if flops > PARALLEL_FLOPS {
        Par::rayon(0)
    } else {
        Par::Seq
    }
}

impl IsodofCost {
    /// The cost of `S̄` and `W̄` for `dofs`, from the symbolic structure alone.
    pub fn estimate(s: &LdltSymbolic, dofs: &[usize]) -> IsodofCost {
        let (_, spans) = reach(s, dofs);
        let sn = &s.supernodes;
        spans.iter().fold(IsodofCost::default(), |c, x| {
            let (r, q, k) =
                ((sn.width(x.sn) - x.rho) as f64, sn.pattern(x.sn).len() as f64, (x.hi - x.lo) as f64);
            IsodofCost {
                solve_flops: c.solve_flops + r * r * k + 2.0 * r * q * k,
                gram_flops: c.gram_flops + r * k * (k + 1.0),
                entries: c.entries + r * k,
            }
        })
    }
}

/// One target supernode of a block's update `Y = L_bs X_s`: the rows
/// `p0..p0 + rows.len()` of `Y` go to the rows `rows` of the target's block.
struct Target {
    block: usize,
    p0: usize,
    rows: Vec<usize>,
}

/// Most runs of consecutive target rows for which a block's update goes
/// straight into its targets (one product per run) instead of through a
/// buffer and a scatter. The widest update of a ball's isodofs, from the
/// second separator into the root, is a single run.
const DIRECT_RUNS: usize = 4;

impl Target {
    /// Runs of consecutive target rows: (index into `rows`, length).
    fn run_starts(&self) -> Vec<(usize, usize)> {
        let mut out: Vec<(usize, usize)> = Vec::new();
        for (i, &row) in self.rows.iter().enumerate() {
            match out.last_mut() {
                Some((start, len)) if self.rows[*start] + *len == row => *len += 1,
                _ => out.push((i, 1)),
            }
        }
        out
    }

    /// Whether an update with these targets goes straight into them: at
    /// most [`DIRECT_RUNS`] runs of consecutive rows in all.
    fn go_direct(targets: &[Target]) -> bool {
        targets.iter().map(|t| t.run_starts().len()).sum::<usize>() <= DIRECT_RUNS
    }
}

impl IsodofColumns {
    /// [`Self::new_in`] with fresh storage.
    pub fn new(f: &Ldlt, dofs: &[usize]) -> IsodofColumns {
        IsodofColumns::new_in(f, dofs, Vec::new())
    }

    /// Solves `L S̄ = P Īᵀ` for the unit columns of `dofs` (duplicates
    /// ignored), storing the result in `storage` (whose allocation is
    /// reused: a caller that builds every step keeps its memory warm):
    /// supernodes of the reach in increasing order (children first),
    /// `X_s ← L_ss⁻¹ X_s`, then `X_t −= L_ts X_s` for the ancestors `t`
    /// that the pattern of `s` reaches, then `X_s ← D_s^{-1/2} X_s`.
    pub fn new_in(f: &Ldlt, dofs: &[usize], mut storage: Vec<f64>) -> IsodofColumns {
        let s = &**f.symbolic();
        let sn = &s.supernodes;
        let (dofs, spans) = reach(s, dofs);
        let mut offset = 0;
        let blocks: Vec<Block> = spans
            .iter()
            .map(|x| {
                let rows = sn.width(x.sn) - x.rho;
                let b = Block { sn: x.sn, lo: x.lo, cols: x.hi - x.lo, rho: x.rho, rows, offset };
                offset += rows * b.cols;
                b
            })
            .collect();
        storage.clear();
        storage.resize(offset, 0.0);
        let block_of: HashMap<usize, usize> = blocks.iter().enumerate().map(|(i, b)| (b.sn, i)).collect();
        let mut cols = IsodofColumns { dofs, blocks, block_of, values: storage };
        for (i, &d) in cols.dofs.iter().enumerate() {
            let p = s.perm_inv[d];
            let b = &cols.blocks[cols.block_of[&(sn.of_column[p] as usize)]];
            cols.values[b.offset + (i - b.lo) * b.rows + p - sn.begin[b.sn] - b.rho] = 1.0;
        }
        let d_inv_sqrt: Vec<f64> = f.d.iter().map(|d| d.sqrt().recip()).collect();
        let mut update = Vec::new();
        for bi in 0..cols.blocks.len() {
            cols.solve_block(f, bi, &d_inv_sqrt, &mut update);
        }
        cols
    }

    /// The step of [`Self::new_in`] for block `bi`, whose children are done.
    fn solve_block(&mut self, f: &Ldlt, bi: usize, d_inv_sqrt: &[f64], update: &mut Vec<f64>) {
        let sn = &f.symbolic().supernodes;
        let blk = self.blocks[bi].clone();
        let (w, r0, r, k, q) = (sn.width(blk.sn), blk.rho, blk.rows, blk.cols, sn.pattern(blk.sn).len());
        // The block's rows and the panel's columns from `rho` on: the rows
        // above are zero, so only the trailing triangle of `L_ss` acts.
        let panel = f.panel(blk.sn).subcols(r0, r);
        let par = par_for((r * k * (r + 2 * q)) as f64);
        let targets = if q > 0 { self.targets(sn, bi) } else { Vec::new() };
        let (head, tail) = self.values.split_at_mut(blk.offset + r * k);
        let x = &mut head[blk.offset..];
        let mut xm = MatMut::from_column_major_slice_mut(x, r, k);
        solve_unit_lower_triangular_in_place(panel.submatrix(r0, 0, r, r), xm.rb_mut(), par);
        if q > 0 {
            let direct = Target::go_direct(&targets);
            if !direct {
                update.resize(q * k, 0.0);
                let y = MatMut::from_column_major_slice_mut(update, q, k);
                matmul(y, Accum::Replace, panel.submatrix(w, 0, q, r), xm.rb(), 1.0, par);
            }
            // Carve each target's columns out of the blocks after this one.
            let (mut rest, mut consumed) = (tail, blk.offset + r * k);
            for t in &targets {
                let tb = &self.blocks[t.block];
                let start = tb.offset + (blk.lo - tb.lo) * tb.rows;
                let (dst, after) = std::mem::take(&mut rest)[start - consumed..].split_at_mut(k * tb.rows);
                if direct {
                    // `X_t[run, :] −= L_run,s X_s` straight into the target.
                    for (i, len) in t.run_starts() {
                        let view = MatMut::from_column_major_slice_with_stride_mut(
                            &mut dst[t.rows[i]..],
                            len,
                            k,
                            tb.rows,
                        );
                        let l = panel.submatrix(w + t.p0 + i, 0, len, r);
                        matmul(view, Accum::Add, l, xm.rb(), -1.0, par);
                    }
                } else {
                    subtract_rows(dst, tb.rows, &t.rows, &update[t.p0..], q, !matches!(par, Par::Seq));
                }
                (rest, consumed) = (after, start + k * tb.rows);
            }
        }
        let scale = &d_inv_sqrt[sn.begin[blk.sn] + r0..sn.begin[blk.sn] + w];
        let scale_col = |col: &mut [f64]| col.iter_mut().zip(scale).for_each(|(v, d)| *v *= d);
        if matches!(par, Par::Seq) {
            x.chunks_exact_mut(r).for_each(scale_col);
        } else {
            x.par_chunks_exact_mut(r).for_each(scale_col);
        }
    }

    /// The targets of block `bi`'s update, in increasing block order (the
    /// pattern is sorted and each supernode owns a contiguous range of it),
    /// with rows counted from each target's `rho`.
    fn targets(&self, sn: &super::SupernodeLayout, bi: usize) -> Vec<Target> {
        let pattern = sn.pattern(self.blocks[bi].sn);
        let mut out: Vec<Target> = Vec::new();
        for (p, &row) in pattern.iter().enumerate() {
            let t = sn.of_column[row as usize] as usize;
            let block = self.block_of[&t];
            let local = row as usize - sn.begin[t] - self.blocks[block].rho;
            match out.last_mut() {
                Some(last) if last.block == block => last.rows.push(local),
                _ => out.push(Target { block, p0: p, rows: vec![local] }),
            }
        }
        out
    }

    /// The DOFs (original numbering) in the order of `W̄`'s rows and columns.
    pub fn dofs(&self) -> &[usize] {
        &self.dofs
    }

    /// Number of columns.
    pub fn len(&self) -> usize {
        self.dofs.len()
    }

    /// Whether there are no columns.
    pub fn is_empty(&self) -> bool {
        self.dofs.is_empty()
    }

    /// Stored entries of `S̄`.
    pub fn entries(&self) -> usize {
        self.values.len()
    }

    /// Zero rows left out of the blocks (`Σ rho k`) and blocks whose update
    /// goes straight into its targets: the two shortcuts, for tests.
    #[cfg(test)]
    pub(super) fn shortcuts(&self, f: &Ldlt) -> (usize, usize) {
        let trimmed = self.blocks.iter().map(|b| b.rho * b.cols).sum();
        let direct = (0..self.blocks.len())
            .filter(|&bi| {
                let targets = self.targets(&f.symbolic().supernodes, bi);
                !targets.is_empty() && Target::go_direct(&targets)
            })
            .count();
        (trimmed, direct)
    }

    /// Gives the storage back, for [`Self::new_in`] to reuse.
    pub fn into_storage(self) -> Vec<f64> {
        self.values
    }

    /// `Z_s` of a block (`rows × cols`, the rows from `rho` on).
    fn z(&self, b: &Block) -> MatRef<'_, f64> {
        MatRef::from_column_major_slice(&self.values[b.range()], b.rows, b.cols)
    }

    /// `W̄ = S̄ᵀ D⁻¹ S̄ = Zᵀ Z` (eq. 24), `m × m` column-major in the order of
    /// [`Self::dofs`], into `out` (its allocation reused).
    pub fn delassus_into(&self, out: &mut Vec<f64>) {
        let m = self.len();
        out.clear();
        out.resize(m * m, 0.0);
        self.add_lower_gram(MatMut::from_column_major_slice_mut(out, m, m));
        crate::dense::mirror(out, m, 0..m);
    }

    /// [`Self::delassus_into`] into a new matrix.
    pub fn delassus(&self) -> Vec<f64> {
        let mut out = Vec::new();
        self.delassus_into(&mut out);
        out
    }

    /// `dst += lower(Zᵀ Z)`: per supernode of the reach, the lower half of
    /// `Z_sᵀ Z_s` into the diagonal block of its column range.
    fn add_lower_gram(&self, mut dst: MatMut<'_, f64>) {
        for b in &self.blocks {
            let z = self.z(b);
            triangular::matmul(
                dst.rb_mut().submatrix_mut(b.lo, b.lo, b.cols, b.cols),
                BlockStructure::TriangularLower,
                Accum::Add,
                z.transpose(),
                BlockStructure::Rectangular,
                z,
                BlockStructure::Rectangular,
                1.0,
                par_for((z.nrows() * b.cols * b.cols) as f64),
            );
        }
    }

    /// `dst += S̄ᵀ D⁻¹ S̄_other = Zᵀ Z_other` (eq. 30b), `dst` being
    /// `m × m_other`: the products of the blocks of the supernodes both
    /// reaches share.
    pub fn add_cross(&self, other: &IsodofColumns, mut dst: MatMut<'_, f64>) {
        for b in &other.blocks {
            let Some(&ai) = self.block_of.get(&b.sn) else { continue };
            let a = &self.blocks[ai];
            // Both are zero above the larger `rho`.
            let r0 = a.rho.max(b.rho);
            let rows = a.rows + a.rho - r0;
            let (za, zb) = (self.z(a).subrows(r0 - a.rho, rows), other.z(b).subrows(r0 - b.rho, rows));
            matmul(
                dst.rb_mut().submatrix_mut(a.lo, b.lo, a.cols, b.cols),
                Accum::Add,
                za.transpose(),
                zb,
                1.0,
                par_for((rows * a.cols * b.cols) as f64),
            );
        }
    }

    /// `S̄ᵀ D⁻¹ S̄_other` as a new `m × m_other` column-major matrix.
    pub fn cross(&self, other: &IsodofColumns) -> Vec<f64> {
        let (m, mo) = (self.len(), other.len());
        let mut out = vec![0.0; m * mo];
        self.add_cross(other, MatMut::from_column_major_slice_mut(&mut out, m, mo));
        out
    }
}

/// `X_t[rows, :] −= Y[p0.., :]` for one target of an update: `dst` holds
/// the target's `k` columns (`wt` rows each), `y` is `Y` from row `p0` on
/// (`q` rows per column). Columns go in parallel when `parallel`.
fn subtract_rows(dst: &mut [f64], wt: usize, rows: &[usize], y: &[f64], q: usize, parallel: bool) {
    let column = |(j, col): (usize, &mut [f64])| {
        for (&r, &v) in rows.iter().zip(&y[j * q..]) {
            col[r] -= v;
        }
    };
    if parallel {
        dst.par_chunks_exact_mut(wt).enumerate().for_each(column);
    } else {
        dst.chunks_exact_mut(wt).enumerate().for_each(column);
    }
}

/// `W̄` of the DOFs touched since the factor last changed (zeng2022 §5):
/// the columns come in generations, one per step that met new DOFs; each
/// step solves only the new ones and extends the cached `W̄` with the
/// new–new and new–old blocks (eq. 29–30). A new factor empties it; so does
/// growth past twice the DOFs in use (the unused ones are evicted by
/// starting over from the DOFs of the step). The storage of dropped
/// columns and of `W̄` is kept for the next generations.
#[derive(Debug, Default, Clone)]
pub struct IsodofCache {
    factor: Option<Arc<Ldlt>>,
    generations: Vec<IsodofColumns>,
    /// DOF ↦ slot of `wbar`.
    slot: HashMap<usize, usize>,
    /// `W̄` over the slots, column-major with leading dimension `capacity`
    /// (the `len × len` top-left part is in use).
    wbar: Vec<f64>,
    capacity: usize,
    /// The largest storage of the dropped generations.
    spare: Vec<f64>,
}

/// What one [`IsodofCache::update`] call did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct IsodofReuse {
    /// DOFs asked for.
    pub isodofs: usize,
    /// Of those, found solved in the cache.
    pub reused: usize,
}

/// Slots the cache may hold beyond twice the DOFs in use.
const CACHE_SLACK: usize = 96;

impl IsodofCache {
    /// DOFs with solved columns.
    pub fn len(&self) -> usize {
        self.slot.len()
    }

    /// Whether nothing is cached.
    pub fn is_empty(&self) -> bool {
        self.slot.is_empty()
    }

    /// Drops every column (keeping the largest storage for reuse).
    pub fn clear(&mut self) {
        if let Some(g) = self.generations.iter_mut().max_by_key(|g| g.values.capacity()) {
            if g.values.capacity() > self.spare.capacity() {
                self.spare = std::mem::take(&mut g.values);
            }
        }
        self.generations.clear();
        self.slot.clear();
        self.factor = None;
    }

    /// The DOFs of `dofs` a call with factor `f` would solve (sorted): those
    /// not cached, or all of them when the factor changed or the cache
    /// would outgrow its bound.
    pub fn fresh(&self, f: &Arc<Ldlt>, dofs: &[usize]) -> Vec<usize> {
        let valid = self.factor.as_ref().is_some_and(|g| Arc::ptr_eq(g, f));
        let mut fresh: Vec<usize> =
            dofs.iter().copied().filter(|d| !valid || !self.slot.contains_key(d)).collect();
        fresh.sort_unstable();
        fresh.dedup();
        if valid && self.slot.len() + fresh.len() > 2 * dofs.len() + CACHE_SLACK {
            fresh = dofs.to_vec();
            fresh.sort_unstable();
            fresh.dedup();
        }
        fresh
    }

    /// Makes `W̄` hold every DOF of `dofs` for factor `f`, solving only the
    /// DOFs not cached.
    pub fn update(&mut self, f: &Arc<Ldlt>, dofs: &[usize]) -> IsodofReuse {
        let fresh = self.fresh(f, dofs);
        if fresh.len() == dofs.len() {
            self.clear();
            self.factor = Some(f.clone());
        }
        // Room for as many slots as the cache may hold, so that `W̄` is not
        // reallocated (and its memory touched anew) as generations come.
        self.reserve(2 * dofs.len() + CACHE_SLACK);
        if !fresh.is_empty() {
            self.extend(f, &fresh);
        }
        IsodofReuse { isodofs: dofs.len(), reused: dofs.len() - fresh.len() }
    }

    /// The slot of `dof` in [`Self::wbar`], if cached.
    pub fn slot(&self, dof: usize) -> Option<usize> {
        self.slot.get(&dof).copied()
    }

    /// `W̄` over the slots and its leading dimension: `W̄[i, j]` (slots) is
    /// at `values[j · ld + i]`.
    pub fn wbar(&self) -> (&[f64], usize) {
        (&self.wbar, self.capacity)
    }

    /// `W̄` for `dofs` (distinct, in that order; `m × m`, column-major) with
    /// factor `f`, solving only the DOFs not cached.
    pub fn delassus(&mut self, f: &Arc<Ldlt>, dofs: &[usize]) -> (Vec<f64>, IsodofReuse) {
        let reuse = self.update(f, dofs);
        let slots: Vec<usize> = dofs.iter().map(|d| self.slot[d]).collect();
        let (wbar, ld) = self.wbar();
        let out = slots.iter().flat_map(|&j| slots.iter().map(move |&i| wbar[j * ld + i])).collect();
        (out, reuse)
    }

    /// Solves a new generation and extends `W̄` (eq. 29): the new rows of
    /// its lower triangle (new–new, new–old), then their mirror image.
    fn extend(&mut self, f: &Ldlt, fresh: &[usize]) {
        let gen = IsodofColumns::new_in(f, fresh, std::mem::take(&mut self.spare));
        let (old, m) = (self.slot.len(), gen.len());
        let cap = self.capacity;
        for j in 0..old + m {
            self.wbar[j * cap + old..j * cap + old + m].fill(0.0);
        }
        let mut all = MatMut::from_column_major_slice_mut(&mut self.wbar, cap, cap);
        gen.add_lower_gram(all.rb_mut().submatrix_mut(old, old, m, m));
        let mut offset = 0;
        for g in &self.generations {
            gen.add_cross(g, all.rb_mut().submatrix_mut(old, offset, m, g.len()));
            offset += g.len();
        }
        crate::dense::mirror(&mut self.wbar, cap, old..old + m);
        for (i, &d) in gen.dofs().iter().enumerate() {
            self.slot.insert(d, old + i);
        }
        self.generations.push(gen);
    }

    /// Grows `wbar` to hold at least `slots` slots, keeping its values.
    fn reserve(&mut self, slots: usize) {
        if slots <= self.capacity {
            return;
        }
        let cap = slots;
        let mut grown = vec![0.0; cap * cap];
        let used = self.slot.len();
        for j in 0..used {
            grown[j * cap..j * cap + used]
                .copy_from_slice(&self.wbar[j * self.capacity..j * self.capacity + used]);
        }
        self.wbar = grown;
        self.capacity = cap;
    }
}

/// Reference `W̄` for tests: dense solves `A⁻¹ e_d`.
#[cfg(test)]
pub(crate) fn reference(f: &Ldlt, dofs: &[usize]) -> faer::Mat<f64> {
    let n = f.symbolic().n();
    let m = dofs.len();
    let mut x = vec![0.0; n * m];
    for (j, &d) in dofs.iter().enumerate() {
        x[j * n + d] = 1.0;
    }
    f.solve_in_place(&mut x, m);
    faer::Mat::from_fn(m, m, |i, j| x[j * n + dofs[i]])
}
