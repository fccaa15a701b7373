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
//! [`IsodofCache`] keeps the columns while the factor is unchanged and only
//! solves the DOFs it has not seen (§5, eq. 26–30).

use std::collections::HashMap;
use std::sync::Arc;

use faer::linalg::matmul::matmul;
use faer::linalg::matmul::triangular::{self, BlockStructure};
use faer::linalg::triangular_solve::solve_unit_lower_triangular_in_place;
use faer::prelude::{Reborrow, ReborrowMut};
use faer::{Accum, MatMut, MatRef, Par};

use super::etree::NONE;
use super::{Ldlt, LdltSymbolic};

/// Work above which a supernode's kernels run on all threads.
const PARALLEL_FLOPS: f64 = 2e6;

/// `S̄ = L⁻¹ P Īᵀ` for a set of DOFs, stored per supernode of their reach.
#[derive(Debug, Clone)]
pub struct IsodofColumns {
    /// The DOFs (original numbering), in the internal order of the columns.
    dofs: Vec<usize>,
    blocks: Vec<Block>,
    /// Block of each supernode of the reach.
    block_of: HashMap<usize, usize>,
}

/// The dense rows of one supernode for the columns `lo..lo + cols`.
#[derive(Debug, Clone)]
struct Block {
    sn: usize,
    lo: usize,
    cols: usize,
    /// `width × cols`, column-major.
    values: Vec<f64>,
}

/// Flop counts of building `W̄` for a set of DOFs (the cost model of `auto`).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct IsodofCost {
    /// Triangular solves and updates, `Σ_s w_s² k_s + 2 w_s q_s k_s`.
    pub solve_flops: f64,
    /// `W̄ = S̄ᵀ D⁻¹ S̄` (lower half), `Σ_s w_s k_s (k_s + 1)`.
    pub gram_flops: f64,
    /// Stored entries of `S̄`, `Σ_s w_s k_s`.
    pub entries: f64,
}

/// DOFs sorted by (postorder rank of their supernode, permuted index), and
/// for every supernode of the reach the range of columns that cross it.
fn reach(s: &LdltSymbolic, dofs: &[usize]) -> (Vec<usize>, Vec<(usize, usize, usize)>) {
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
    let mut ranges: Vec<(usize, usize, usize)> = range.into_iter().map(|(t, (lo, hi))| (t, lo, hi)).collect();
    ranges.sort_unstable();
    (sorted, ranges)
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
        let (_, ranges) = reach(s, dofs);
        let sn = &s.supernodes;
        ranges.iter().fold(IsodofCost::default(), |c, &(t, lo, hi)| {
            let (w, q, k) = (sn.width(t) as f64, sn.pattern(t).len() as f64, (hi - lo) as f64);
            IsodofCost {
                solve_flops: c.solve_flops + w * w * k + 2.0 * w * q * k,
                gram_flops: c.gram_flops + w * k * (k + 1.0),
                entries: c.entries + w * k,
            }
        })
    }
}

impl IsodofColumns {
    /// Solves `L S̄ = P Īᵀ` for the unit columns of `dofs` (duplicates
    /// ignored): supernodes of the reach in increasing order (children
    /// first), `X_s ← L_ss⁻¹ X_s`, then `X_t −= L_ts X_s` for the ancestors
    /// `t` that the pattern of `s` reaches.
    pub fn new(f: &Ldlt, dofs: &[usize]) -> IsodofColumns {
        let s = &**f.symbolic();
        let sn = &s.supernodes;
        let (dofs, ranges) = reach(s, dofs);
        let mut blocks: Vec<Block> = ranges
            .iter()
            .map(|&(t, lo, hi)| Block {
                sn: t,
                lo,
                cols: hi - lo,
                values: vec![0.0; sn.width(t) * (hi - lo)],
            })
            .collect();
        let block_of: HashMap<usize, usize> = blocks.iter().enumerate().map(|(i, b)| (b.sn, i)).collect();
        for (i, &d) in dofs.iter().enumerate() {
            let p = s.perm_inv[d];
            let b = &mut blocks[block_of[&(sn.of_column[p] as usize)]];
            let w = sn.width(b.sn);
            b.values[(i - b.lo) * w + p - sn.begin[b.sn]] = 1.0;
        }
        let mut update = Vec::new();
        let mut targets: Vec<(usize, usize)> = Vec::new();
        for bi in 0..blocks.len() {
            let (done, rest) = blocks.split_at_mut(bi + 1);
            let blk = &mut done[bi];
            let (w, k, pattern) = (sn.width(blk.sn), blk.cols, sn.pattern(blk.sn));
            let q = pattern.len();
            let panel = f.panel(blk.sn);
            let par = par_for((w * k * (w + 2 * q)) as f64);
            let mut x = MatMut::from_column_major_slice_mut(&mut blk.values, w, k);
            solve_unit_lower_triangular_in_place(panel.submatrix(0, 0, w, w), x.rb_mut(), par);
            if q == 0 {
                continue;
            }
            update.resize(q * k, 0.0);
            let mut y = MatMut::from_column_major_slice_mut(&mut update, q, k);
            matmul(y.rb_mut(), Accum::Replace, panel.submatrix(w, 0, q, w), x.rb(), 1.0, par);
            targets.clear();
            targets.extend(pattern.iter().map(|&r| {
                let t = sn.of_column[r as usize] as usize;
                (block_of[&t] - bi - 1, r as usize - sn.begin[t])
            }));
            for j in 0..k {
                let col = &update[j * q..(j + 1) * q];
                for (&(ti, row), &v) in targets.iter().zip(col) {
                    let tb = &mut rest[ti];
                    let wt = sn.width(tb.sn);
                    tb.values[(blk.lo + j - tb.lo) * wt + row] -= v;
                }
            }
        }
        IsodofColumns { dofs, blocks, block_of }
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
        self.blocks.iter().map(|b| b.values.len()).sum()
    }

    /// `W̄ = S̄ᵀ D⁻¹ S̄` (eq. 24), `m × m` column-major in the order of
    /// [`Self::dofs`]: per supernode of the reach, the lower half of
    /// `X_sᵀ D_s⁻¹ X_s` into the diagonal block of its column range.
    pub fn delassus(&self, f: &Ldlt) -> Vec<f64> {
        let m = self.len();
        let mut out = vec![0.0; m * m];
        let mut scaled = Vec::new();
        let mut dst = MatMut::from_column_major_slice_mut(&mut out, m, m);
        for b in &self.blocks {
            let (x, z) = self.scaled(f, b, &mut scaled);
            let par = par_for((x.nrows() * b.cols * b.cols) as f64);
            triangular::matmul(
                dst.rb_mut().submatrix_mut(b.lo, b.lo, b.cols, b.cols),
                BlockStructure::TriangularLower,
                Accum::Add,
                x.transpose(),
                BlockStructure::Rectangular,
                z,
                BlockStructure::Rectangular,
                1.0,
                par,
            );
        }
        for j in 0..m {
            for i in j + 1..m {
                out[i * m + j] = out[j * m + i];
            }
        }
        out
    }

    /// `S̄ᵀ D⁻¹ S̄_other` (eq. 30b), `m × m_other` column-major: the products
    /// of the blocks of the supernodes both reaches share.
    pub fn cross(&self, f: &Ldlt, other: &IsodofColumns) -> Vec<f64> {
        let (m, mo) = (self.len(), other.len());
        let mut out = vec![0.0; m * mo];
        let mut scaled = Vec::new();
        let mut dst = MatMut::from_column_major_slice_mut(&mut out, m, mo);
        for b in &other.blocks {
            let Some(&ai) = self.block_of.get(&b.sn) else { continue };
            let a = &self.blocks[ai];
            let (_, z) = other.scaled(f, b, &mut scaled);
            let x = MatRef::from_column_major_slice(&a.values, z.nrows(), a.cols);
            let par = par_for((z.nrows() * a.cols * b.cols) as f64);
            matmul(
                dst.rb_mut().submatrix_mut(a.lo, b.lo, a.cols, b.cols),
                Accum::Add,
                x.transpose(),
                z,
                1.0,
                par,
            );
        }
        out
    }

    /// A block `X` and `D⁻¹ X` (in `scratch`).
    fn scaled<'a>(
        &'a self,
        f: &Ldlt,
        b: &'a Block,
        scratch: &'a mut Vec<f64>,
    ) -> (MatRef<'a, f64>, MatRef<'a, f64>) {
        let sn = &f.symbolic().supernodes;
        let (w, c0) = (sn.width(b.sn), sn.begin[b.sn]);
        scratch.clear();
        scratch.extend(
            b.values.chunks_exact(w).flat_map(|col| col.iter().zip(&f.d[c0..c0 + w]).map(|(x, d)| x / d)),
        );
        (
            MatRef::from_column_major_slice(&b.values, w, b.cols),
            MatRef::from_column_major_slice(scratch, w, b.cols),
        )
    }
}

/// `W̄` of the DOFs touched since the factor last changed (zeng2022 §5):
/// the columns come in generations, one per step that met new DOFs; each
/// step solves only the new ones and extends the cached `W̄` with the
/// new–new and old–new blocks (eq. 29–30). A new factor empties it; so does
/// growth past twice the DOFs in use (the unused ones are evicted by
/// starting over from the DOFs of the step).
#[derive(Debug, Default, Clone)]
pub struct IsodofCache {
    factor: Option<Arc<Ldlt>>,
    generations: Vec<IsodofColumns>,
    /// DOF ↦ slot of `wbar`.
    slot: HashMap<usize, usize>,
    /// `W̄` over the slots, `capacity × capacity` column-major.
    wbar: Vec<f64>,
    capacity: usize,
}

/// What one [`IsodofCache::delassus`] call did.
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

    /// Drops everything.
    pub fn clear(&mut self) {
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

    /// `W̄` for `dofs` (distinct, in that order; `m × m`, column-major) with
    /// factor `f`, solving only the DOFs not cached.
    pub fn delassus(&mut self, f: &Arc<Ldlt>, dofs: &[usize]) -> (Vec<f64>, IsodofReuse) {
        let fresh = self.fresh(f, dofs);
        if fresh.len() == dofs.len() {
            self.clear();
            self.factor = Some(f.clone());
        }
        let reused = dofs.len() - fresh.len();
        if !fresh.is_empty() {
            self.extend(f, &fresh);
        }
        let cap = self.capacity;
        let slots: Vec<usize> = dofs.iter().map(|d| self.slot[d]).collect();
        let wbar = &self.wbar;
        let out = slots.iter().flat_map(|&j| slots.iter().map(move |&i| wbar[j * cap + i])).collect();
        (out, IsodofReuse { isodofs: dofs.len(), reused })
    }

    /// Solves a new generation and extends `W̄` (eq. 29).
    fn extend(&mut self, f: &Ldlt, fresh: &[usize]) {
        let gen = IsodofColumns::new(f, fresh);
        let (old, m) = (self.slot.len(), gen.len());
        self.reserve(old + m);
        let cap = self.capacity;
        let nn = gen.delassus(f);
        for j in 0..m {
            self.wbar[(old + j) * cap + old..(old + j) * cap + old + m]
                .copy_from_slice(&nn[j * m..(j + 1) * m]);
        }
        let mut offset = 0;
        for g in &self.generations {
            let on = g.cross(f, &gen);
            let mg = g.len();
            for j in 0..m {
                for i in 0..mg {
                    let v = on[j * mg + i];
                    self.wbar[(old + j) * cap + offset + i] = v;
                    self.wbar[(offset + i) * cap + old + j] = v;
                }
            }
            offset += mg;
        }
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
        let cap = slots.next_power_of_two().max(64);
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
