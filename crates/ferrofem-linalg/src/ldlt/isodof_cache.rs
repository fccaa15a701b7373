//! The isodof columns kept while the factor is unchanged, and `W̄` over
//! their slots (zeng2022 §5: the reuse of eq. 29–30).

use std::collections::HashMap;
use std::ops::Range;
use std::sync::Arc;

use faer::prelude::ReborrowMut;
use faer::MatMut;
use rayon::prelude::*;

use super::isodof::{split_columns, IsodofColumns};
use super::isodof_values::{each_precision, SlotValues, Values};
use super::Ldlt;

/// `W̄` of the DOFs touched since the factor last changed (zeng2022 §5):
/// the columns come in generations, one per step that met new DOFs; each
/// step solves only the new ones and extends the cached `W̄` with the
/// new–new and new–old blocks (eq. 29–30). A new factor empties it. Growth
/// past [`bound`] evicts the DOFs not in use: their columns and their rows
/// and columns of `W̄` are compacted away in place, the rest kept as they
/// are (no solve). The storage of dropped columns and of `W̄` is kept for
/// the next generations. For a factor kept in single precision only, the
/// columns and `W̄` are kept in single (`isodof_values`).
#[derive(Debug, Default, Clone)]
pub struct IsodofCache {
    factor: Option<Arc<Ldlt>>,
    generations: Vec<IsodofColumns>,
    /// DOF ↦ slot of `wbar`.
    slot: HashMap<usize, usize>,
    /// `W̄` over the slots, column-major with leading dimension `capacity`
    /// (the `len × len` top-left part is in use).
    wbar: Values,
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

/// Slots the cache may hold for `in_use` DOFs before it evicts: a quarter
/// more, and a few (a contact set drifting by a few DOFs a step evicts
/// every few dozen steps, each eviction a pass over the stored columns).
fn bound(in_use: usize) -> usize {
    in_use + in_use / 4 + 96
}

/// Most entries of double storage kept for the next generation once a
/// generation is rounded to single (128 MB: a step's new columns at 60k
/// vertices are a few MB, a rebuild of every column hundreds).
const SPARE_MAX: usize = 1 << 24;

impl IsodofCache {
    /// Whether the cached columns were solved with factor `f`.
    fn holds(&self, f: &Arc<Ldlt>) -> bool {
        self.factor.as_ref().is_some_and(|g| Arc::ptr_eq(g, f))
    }

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
        let largest = (0..self.generations.len()).max_by_key(|&i| self.generations[i].storage_capacity());
        if let Some(i) = largest.filter(|&i| self.generations[i].storage_capacity() > self.spare.capacity()) {
            self.spare = self.generations.swap_remove(i).into_storage();
        }
        self.generations.clear();
        self.slot.clear();
        self.factor = None;
    }

    /// The DOFs of `dofs` a call with factor `f` would solve (sorted): those
    /// not cached, or all of them when the factor changed.
    pub fn fresh(&self, f: &Arc<Ldlt>, dofs: &[usize]) -> Vec<usize> {
        let valid = self.holds(f);
        let mut fresh: Vec<usize> =
            dofs.iter().copied().filter(|d| !valid || !self.slot.contains_key(d)).collect();
        fresh.sort_unstable();
        fresh.dedup();
        fresh
    }

    /// Makes `W̄` hold every DOF of `dofs` for factor `f`, solving only the
    /// DOFs not cached (after evicting those not in `dofs` when the cache
    /// would outgrow its bound).
    pub fn update(&mut self, f: &Arc<Ldlt>, dofs: &[usize]) -> IsodofReuse {
        let mut fresh = self.fresh(f, dofs);
        if fresh.len() == dofs.len() {
            self.clear();
            self.factor = Some(f.clone());
            if self.wbar.is_single() != f.double_released() {
                (self.wbar, self.capacity) = (Values::empty(f.double_released()), 0);
            }
        } else if self.slot.len() + fresh.len() > bound(dofs.len()) {
            self.evict(dofs);
            fresh = self.fresh(f, dofs);
        }
        // Room for as many slots as the cache may hold, so that `W̄` is not
        // reallocated (and its memory touched anew) as generations come.
        self.reserve(bound(dofs.len()));
        if !fresh.is_empty() {
            self.extend(f, &fresh);
        }
        IsodofReuse { isodofs: dofs.len(), reused: dofs.len() - fresh.len() }
    }

    /// The cached columns, generation by generation, when they were
    /// solved with factor `f`.
    pub fn columns(&self, f: &Arc<Ldlt>) -> Option<&[IsodofColumns]> {
        self.holds(f).then_some(self.generations.as_slice())
    }

    /// The slot of `dof` in [`Self::wbar`], if cached.
    pub fn slot(&self, dof: usize) -> Option<usize> {
        self.slot.get(&dof).copied()
    }

    /// `W̄` over the slots and its leading dimension: `W̄[i, j]` (slots) is
    /// at `values[j · ld + i]`; in single precision for a factor kept in
    /// single only.
    pub fn wbar(&self) -> (SlotValues<'_>, usize) {
        (self.wbar.as_slot_values(), self.capacity)
    }

    /// `W̄` for `dofs` (distinct, in that order; `m × m`, column-major) with
    /// factor `f`, solving only the DOFs not cached.
    pub fn delassus(&mut self, f: &Arc<Ldlt>, dofs: &[usize]) -> (Vec<f64>, IsodofReuse) {
        let reuse = self.update(f, dofs);
        let slots: Vec<usize> = dofs.iter().map(|d| self.slot[d]).collect();
        let (wbar, ld) = self.wbar();
        let out = slots.iter().flat_map(|&j| slots.iter().map(move |&i| wbar.get(j * ld + i))).collect();
        (out, reuse)
    }

    /// `z = Z u` (see [`IsodofColumns::add_forward`]) for the right-hand
    /// sides `b` (interleaved `K` per DOF) from the cached columns, when the cache holds
    /// factor `f` and every DOF where `b ≠ 0`; else `false` (and `z` is
    /// left as it was). With [`Ldlt::solve_from_forward`], `A⁻¹ b` for half
    /// a solve: the correction of a step whose `W` was built from this cache.
    pub fn forward<const K: usize>(&self, f: &Arc<Ldlt>, b: &[f64], z: &mut Vec<[f64; K]>) -> bool {
        let valid = self.holds(f);
        let b = b.as_chunks::<K>().0;
        let missing = |(d, x): (usize, &[f64; K])| x.iter().any(|&v| v != 0.0) && !self.slot.contains_key(&d);
        if !valid || b.iter().enumerate().any(missing) {
            return false;
        }
        z.clear();
        z.resize(f.symbolic().n(), [0.0; K]);
        for g in &self.generations {
            g.add_forward(f, |d| b[d], z);
        }
        true
    }

    /// Evicts now every DOF not in `in_use` (see [`Self::update`]) when the
    /// cache holds factor `f`: for a cache that will only serve a few more
    /// steps (the previous factor's, during a handover), so that it does
    /// not hold its slack beside its successor.
    pub fn trim(&mut self, f: &Arc<Ldlt>, in_use: &[usize]) {
        let valid = self.holds(f);
        let cached_in_use = in_use.iter().filter(|d| self.slot.contains_key(d)).count();
        if valid && cached_in_use < self.slot.len() {
            self.evict(in_use);
        }
    }

    /// Drops the columns of the DOFs not in `in_use`, and their rows and
    /// columns of `W̄`: moved forward in place (`W̄`'s kept entries only
    /// move to lower addresses, in increasing order, so none is overwritten
    /// before it is read), or into a `W̄` sized to the bound of `in_use`
    /// when the present one is over a quarter larger (its memory given
    /// back: a contact set that shrank after an impact).
    fn evict(&mut self, in_use: &[usize]) {
        let in_use: std::collections::HashSet<usize> = in_use.iter().copied().collect();
        let (mut kept, mut start) = (Vec::new(), 0);
        for g in &mut self.generations {
            let len = g.len();
            kept.extend(g.retain(|d| in_use.contains(&d)).into_iter().map(|i| start + i));
            start += len;
        }
        self.generations.retain(|g| !g.is_empty());
        let (old, target) = (self.capacity, bound(in_use.len()));
        if old > target + target / 4 {
            self.relay(target, &kept);
        } else {
            each_precision!(&mut self.wbar, w => {
                for (j, &jo) in kept.iter().enumerate() {
                    kept.iter().enumerate().for_each(|(i, &io)| w[j * old + i] = w[jo * old + io]);
                }
            });
        }
        self.slot = self.generations.iter().flat_map(|g| g.dofs()).copied().zip(0..).collect();
    }

    /// Solves a new generation and extends `W̄` (eq. 29): the new rows of
    /// its lower triangle (new–new, new–old), then their mirror image.
    fn extend(&mut self, f: &Ldlt, fresh: &[usize]) {
        let mut gen = IsodofColumns::new_in(f, fresh, std::mem::take(&mut self.spare));
        let (old, m) = (self.slot.len(), gen.len());
        let cap = self.capacity;
        each_precision!(&mut self.wbar, w => {
            for j in 0..old + m {
                w[j * cap + old..j * cap + old + m].fill(0.0);
            }
        });
        // The columns of a factor kept in single only are kept in single,
        // and `W̄` with them; the double storage of a step's few new
        // columns is kept for the next, a rebuild's is not.
        if self.wbar.is_single() {
            let storage = gen.round_to_single();
            if storage.len() <= SPARE_MAX {
                self.spare = storage;
            }
        }
        // The new–old blocks, one per old generation, side by side (a
        // generation of a few columns is a single task of its own).
        let mut start = 0;
        let ranges: Vec<Range<usize>> = self
            .generations
            .iter()
            .map(|g| {
                start += g.len();
                start - g.len()..start
            })
            .collect();
        let generations = &self.generations;
        match &mut self.wbar {
            Values::Double(w) => {
                let mut all = MatMut::from_column_major_slice_mut(w, cap, cap);
                gen.add_lower_gram(all.rb_mut().submatrix_mut(old, old, m, m));
                let cross = split_columns(all.submatrix_mut(old, 0, m, old), &ranges);
                cross.into_par_iter().zip(generations).for_each(|(dst, g)| gen.add_cross(g, dst));
            }
            Values::Single(w) => {
                let mut all = MatMut::from_column_major_slice_mut(w, cap, cap);
                gen.add_lower_gram_single(all.rb_mut().submatrix_mut(old, old, m, m));
                let cross = split_columns(all.submatrix_mut(old, 0, m, old), &ranges);
                cross.into_par_iter().zip(generations).for_each(|(dst, g)| gen.add_cross_single(g, dst));
            }
        }
        each_precision!(&mut self.wbar, w => crate::dense::mirror(w, cap, old..old + m));
        for (i, &d) in gen.dofs().iter().enumerate() {
            self.slot.insert(d, old + i);
        }
        self.generations.push(gen);
    }

    /// Grows `wbar` to hold at least `slots` slots, keeping its values: by
    /// a quarter of its capacity at least, so that a contact set growing
    /// step by step (an impact) moves `W̄` a few times, not at every step
    /// (each move faults the new matrix in and copies the old). Pages never
    /// written cost no memory where transparent huge pages are not forced,
    /// so the room ahead is cheap; a quarter bounds it where they are.
    fn reserve(&mut self, slots: usize) {
        if slots <= self.capacity {
            return;
        }
        let kept: Vec<usize> = (0..self.slot.len()).collect();
        self.relay(slots.max(self.capacity + self.capacity / 4), &kept);
    }

    /// Moves `W̄` into a new matrix of capacity `cap`, slot `j` taking the
    /// values of old slot `kept[j]`.
    fn relay(&mut self, cap: usize, kept: &[usize]) {
        let old = self.capacity;
        let in_order = kept.iter().enumerate().all(|(i, &k)| i == k);
        each_precision!(&mut self.wbar, w => {
            let mut moved = vec![0.0; cap * cap];
            for (j, &jo) in kept.iter().enumerate() {
                let dst = &mut moved[j * cap..j * cap + kept.len()];
                match in_order {
                    true => dst.copy_from_slice(&w[jo * old..jo * old + kept.len()]),
                    false => dst.iter_mut().zip(kept).for_each(|(x, &io)| *x = w[jo * old + io]),
                }
            }
            *w = moved;
        });
        self.capacity = cap;
    }
}
