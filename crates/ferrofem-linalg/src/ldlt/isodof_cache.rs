//! The isodof columns kept while the factor is unchanged, and `W̄` over
//! their slots (zeng2022 §5: the reuse of eq. 29–30).

use std::collections::HashMap;
use std::ops::Range;
use std::sync::Arc;

use faer::prelude::ReborrowMut;
use faer::MatMut;
use rayon::prelude::*;

use super::isodof::{split_columns, IsodofColumns};
use super::Ldlt;

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

    /// The cached columns, generation by generation, when they were
    /// solved with factor `f`.
    pub fn columns(&self, f: &Arc<Ldlt>) -> Option<&[IsodofColumns]> {
        self.factor.as_ref().is_some_and(|g| Arc::ptr_eq(g, f)).then_some(self.generations.as_slice())
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

    /// `z = Z u` (see [`IsodofColumns::add_forward`]) for the right-hand
    /// sides `b` (interleaved `K` per DOF) from the cached columns, when the cache holds
    /// factor `f` and every DOF where `b ≠ 0`; else `false` (and `z` is
    /// left as it was). With [`Ldlt::solve_from_forward`], `A⁻¹ b` for half
    /// a solve: the correction of a step whose `W` was built from this cache.
    pub fn forward<const K: usize>(&self, f: &Arc<Ldlt>, b: &[f64], z: &mut Vec<[f64; K]>) -> bool {
        let valid = self.factor.as_ref().is_some_and(|g| Arc::ptr_eq(g, f));
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
        let cross = split_columns(all.submatrix_mut(old, 0, m, old), &ranges);
        cross.into_par_iter().zip(&self.generations).for_each(|(dst, g)| gen.add_cross(g, dst));
        crate::dense::mirror(&mut self.wbar, cap, old..old + m);
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
        let cap = slots.max(self.capacity + self.capacity / 4);
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
