//! Right-hand sides through the supernodal factor, `P A Pᵀ = L D Lᵀ`:
//! `L y = P b`, `z = D⁻¹ y`, `Lᵀ x = z`, `b ← Pᵀ x`, supernode by supernode,
//! the independent subtrees of the supernodal elimination tree in parallel
//! (zeng2022 §3.1: the preconditioner application of every PCG iteration,
//! and the corrective motion of eq. 17).
//!
//! A one-vector solve reads the whole factor and does two flops per entry
//! per sweep, so its floor is bytes moved; the kernels stream each panel
//! column once, contiguous, and the two cores share the subtrees.

use std::ops::Range;

use rayon::prelude::*;

use super::{panel_kernels, Ldlt, Precision, SupernodeLayout};
use crate::simd::Stored;

/// How a solve is split: disjoint subtrees of the supernodal tree, each a
/// contiguous range of supernodes and of columns, solved in parallel, and the
/// remaining supernodes (their common ancestors, the large top separators)
/// by levels: the supernodes of a level are not ancestors of one another
/// and are solved in parallel; a level of one supernode is shared by blocks
/// of its columns. Depends on the pattern only, so results do not depend on
/// the thread count.
#[derive(Debug, Clone, Default)]
pub struct SolvePlan {
    tasks: Vec<Subtree>,
    /// The remaining supernodes by height above the subtrees, lowest first.
    levels: Vec<Vec<usize>>,
}

#[derive(Debug, Clone)]
struct Subtree {
    supernodes: Range<usize>,
    columns: Range<usize>,
    /// Root supernode: every row outside the subtree that it updates is in the root's pattern.
    root: usize,
    /// For each pattern row of the subtree's supernodes outside the subtree,
    /// in supernode and pattern order: its position in the root's pattern
    /// (where the forward sweep keeps its update until the merge).
    slots: Vec<u32>,
}

impl Subtree {
    /// The subtree of supernodes `first..=root`, with its slots.
    fn new(sn: &SupernodeLayout, first: usize, root: usize) -> Subtree {
        let columns = sn.begin[first]..sn.begin[root + 1];
        let outside = sn.pattern(root);
        let slots = (first..=root)
            .flat_map(|s| sn.pattern(s).iter().filter(|&&r| r as usize >= columns.end))
            .map(|r| {
                outside.binary_search(r).expect("a subtree's outside rows are in its root's pattern") as u32
            })
            .collect();
        Subtree { supernodes: first..root + 1, columns, root, slots }
    }
}

/// Subtrees are split until none holds more than this share of the factor.
const SUBTREE_SHARE: f64 = 1.0 / 16.0;

impl SolvePlan {
    /// Splits the supernodal tree of `sn`, whose panel of supernode `s` holds
    /// `(width + pattern) · width` values: starting from the roots, the
    /// heaviest subtree is replaced by its children until every subtree is
    /// light. A subtree whose supernodes are not a contiguous index range
    /// (never the case for a postordered factor) leaves no subtrees: every
    /// supernode then goes by levels.
    pub fn new(sn: &SupernodeLayout) -> SolvePlan {
        let m = sn.len();
        // Entries read per supernode, summed below into subtree weights.
        let mut weight: Vec<f64> = (0..m)
            .map(|s| {
                let (w, q) = (sn.width(s), sn.pattern(s).len());
                (w * (w - 1) / 2 + w * q) as f64
            })
            .collect();
        let mut children = vec![Vec::new(); m];
        let (mut size, mut roots) = (vec![1usize; m], Vec::new());
        for s in 0..m {
            match sn.parent[s] {
                p if p < m => {
                    children[p].push(s);
                    weight[p] += weight[s];
                    size[p] += size[s];
                }
                _ => roots.push(s),
            }
        }
        let total: f64 = roots.iter().map(|&r| weight[r]).sum();
        let (mut tasks, mut top) = (roots, Vec::new());
        while let Some((i, _)) = tasks
            .iter()
            .enumerate()
            .filter(|&(_, &t)| weight[t] > SUBTREE_SHARE * total && !children[t].is_empty())
            .max_by(|a, b| weight[*a.1].total_cmp(&weight[*b.1]))
        {
            let t = tasks.swap_remove(i);
            top.push(t);
            tasks.extend_from_slice(&children[t]);
        }
        top.sort_unstable();
        tasks.sort_unstable();
        let contiguous = tasks.iter().all(|&t| (t + 1 - size[t]..=t).all(|s| reaches(sn, s, t)));
        if !contiguous || tasks.len() < 2 {
            return SolvePlan { tasks: Vec::new(), levels: levels(sn, &(0..m).collect::<Vec<_>>()) };
        }
        let levels = levels(sn, &top);
        let tasks = tasks.into_iter().map(|t| Subtree::new(sn, t + 1 - size[t], t)).collect();
        SolvePlan { tasks, levels }
    }

    /// Number of subtrees solved in parallel.
    pub fn subtrees(&self) -> usize {
        self.tasks.len()
    }
}

/// The supernodes `top` (closed under taking parents, increasing) grouped
/// by height: 0 for those without a child in `top`, else one more than the
/// highest such child.
fn levels(sn: &SupernodeLayout, top: &[usize]) -> Vec<Vec<usize>> {
    let mut height = vec![0usize; sn.len()];
    let mut levels: Vec<Vec<usize>> = Vec::new();
    for &s in top {
        if levels.len() <= height[s] {
            levels.resize(height[s] + 1, Vec::new());
        }
        levels[height[s]].push(s);
        if let Some(p) = sn.parent.get(s).copied().filter(|&p| p < sn.len()) {
            height[p] = height[p].max(height[s] + 1);
        }
    }
    levels
}

/// Whether `t` is `s` or an ancestor of it (parents have larger indices).
fn reaches(sn: &SupernodeLayout, mut s: usize, t: usize) -> bool {
    while s < t {
        s = sn.parent[s];
    }
    s == t
}

impl Ldlt {
    /// Solves `A x = b` in place for one right-hand side by the supernodal
    /// sweeps of [`SolvePlan`].
    pub fn solve_one(&self, b: &mut [f64]) {
        self.solve_one_in(b, Precision::Double);
    }

    /// [`Self::solve_one`] reading the factor in `precision`: in
    /// [`Precision::Single`], the `f32` copy kept by
    /// [`Self::keep_single_precision`] (half the bytes; `b`, the sweeps'
    /// vectors and all arithmetic stay `f64`, so the result is the exact
    /// solve with the rounded factor).
    ///
    /// # Panics
    /// In single precision, if no single-precision copy is kept.
    pub fn solve_one_in(&self, b: &mut [f64], precision: Precision) {
        let s = &**self.symbolic();
        assert_eq!(b.len(), s.n(), "right-hand side length");
        let mut y: Vec<[f64; 1]> = s.perm.iter().map(|&o| [b[o]]).collect();
        match precision {
            Precision::Double => self.solve_permuted(&self.supernodal, &mut y),
            Precision::Single => {
                let single = self.single.as_deref().expect("solve_one_in: no single-precision copy kept");
                self.solve_permuted(single, &mut y)
            }
        }
        s.perm.iter().zip(&y).for_each(|(&o, v)| b[o] = v[0]);
    }

    /// The second half of `x = A⁻¹ b` when the first is known: `z = D^{1/2}
    /// D⁻¹ L⁻¹ P b` in the factor's numbering (as [`IsodofColumns`] give
    /// it for a right-hand side on their DOFs, `z = Z u`), then
    /// `x = Pᵀ L⁻ᵀ D^{-1/2} z` by the backward sweep alone: half a solve.
    /// `z` is consumed as scratch. `K` right-hand sides at once, `x`
    /// interleaved to a row as in [`Self::solve_interleaved`], `J ≤ K` of
    /// them (`x.len() = J n`: lanes past `J` are padding, as in
    /// [`Self::forward_interleaved3`]).
    ///
    /// [`IsodofColumns`]: super::IsodofColumns
    pub fn solve_from_forward<const K: usize>(&self, z: &mut [[f64; K]], x: &mut [f64]) {
        let s = &**self.symbolic();
        let j = x.len() / s.n().max(1);
        assert!(z.len() == s.n() && j <= K && x.len() == j * s.n(), "solve_from_forward: lengths");
        z.iter_mut().zip(&self.d).for_each(|(v, d)| v.iter_mut().for_each(|v| *v /= d.sqrt()));
        self.backward(&self.supernodal, z);
        s.perm.iter().zip(z.iter()).for_each(|(&o, v)| x[j * o..j * o + j].copy_from_slice(&v[..j]));
    }

    /// The first half of [`Self::solve_interleaved`] for three axes:
    /// `z = D^{-1/2} L⁻¹ P b` in the factor's numbering, each row's axes
    /// padded to four lanes (the solve's fast layout; the fourth stays 0),
    /// for [`Self::solve_from_forward`] or [`IsodofColumns::gather`] to
    /// finish.
    ///
    /// [`IsodofColumns::gather`]: super::IsodofColumns::gather
    pub fn forward_interleaved3(&self, b: &[f64], z: &mut Vec<[f64; 4]>) {
        let s = &**self.symbolic();
        assert_eq!(b.len(), 3 * s.n(), "forward_interleaved3: expected {} values", 3 * s.n());
        z.clear();
        z.extend(s.perm.iter().map(|&o| [b[3 * o], b[3 * o + 1], b[3 * o + 2], 0.0]));
        self.forward(&self.supernodal, z);
        z.iter_mut().zip(&self.d).for_each(|(v, d)| v.iter_mut().for_each(|v| *v /= d.sqrt()));
    }

    /// `x = (A ⊗ I_K)⁻¹ b` for vectors interleaved `K` to a row (`b[i·K + c]`;
    /// a flat position vector is `K = 3`): one pass of the supernodal sweeps
    /// over the factor serves the `K` right-hand sides.
    pub fn solve_interleaved<const K: usize>(&self, b: &[f64], x: &mut [f64]) {
        let s = &**self.symbolic();
        assert!(
            b.len() == K * s.n() && x.len() == K * s.n(),
            "solve_interleaved: expected {} values",
            K * s.n()
        );
        let (b, x) = (b.as_chunks::<K>().0, x.as_chunks_mut::<K>().0);
        if K == 3 {
            // A row of three axes padded to four lanes is one 256-bit register:
            // each column's update is one vector operation (≈ 10 % faster);
            // the three axes' arithmetic is unchanged.
            let mut y: Vec<[f64; 4]> = s.perm.iter().map(|&o| [b[o][0], b[o][1], b[o][2], 0.0]).collect();
            self.solve_permuted(&self.supernodal, &mut y);
            s.perm.iter().zip(&y).for_each(|(&o, v)| x[o].copy_from_slice(&v[..K]));
            return;
        }
        let mut y: Vec<[f64; K]> = s.perm.iter().map(|&o| b[o]).collect();
        self.solve_permuted(&self.supernodal, &mut y);
        s.perm.iter().zip(&y).for_each(|(&o, v)| x[o] = *v);
    }

    /// `L D Lᵀ y = y` in the factor's numbering, with the supernodal
    /// `values` (the factor, or its single-precision copy); `D` is read in
    /// double either way.
    fn solve_permuted<P: Stored, const K: usize>(&self, values: &[P], y: &mut [[f64; K]]) {
        self.forward(values, y);
        y.iter_mut().zip(&self.d).for_each(|(v, d)| v.iter_mut().for_each(|v| *v /= d));
        self.backward(values, y);
    }

    /// `L y = y`: subtrees in parallel, each adding its updates of rows
    /// outside itself (all in its root's pattern) to a private buffer that is
    /// then merged in subtree order; then the levels of common ancestors,
    /// whose updates of shared rows are likewise added in a fixed order.
    fn forward<P: Stored, const K: usize>(&self, values: &[P], y: &mut [[f64; K]]) {
        let plan = &self.symbolic().solve_plan;
        let sn = &self.symbolic().supernodes;
        let outside: Vec<Vec<[f64; K]>> = split_by_subtree(y, &plan.tasks)
            .into_par_iter()
            .map(|(task, local)| {
                let (lo, hi) = (task.columns.start, task.columns.end);
                // The updates of rows outside the subtree, by position in the root's pattern.
                let mut above = vec![[0.0; K]; sn.pattern(task.root).len()];
                let (mut z, mut slots) = (Vec::new(), 0);
                for s in task.supernodes.clone() {
                    if s + 1 < task.supernodes.end {
                        crate::simd::prefetch(self.panel_values(values, s + 1));
                    }
                    let own = sn.begin[s] - lo..sn.begin[s + 1] - lo;
                    let first_slot = slots;
                    z.clear();
                    z.extend_from_slice(&local[own.clone()]);
                    z.extend(sn.pattern(s).iter().map(|&r| match r as usize {
                        r if r >= hi => {
                            slots += 1;
                            above[task.slots[slots - 1] as usize]
                        }
                        r => local[r - lo],
                    }));
                    panel_kernels::forward(self.panel_values(values, s), &mut z, own.len(), false);
                    local[own.clone()].copy_from_slice(&z[..own.len()]);
                    let mut slot = task.slots[first_slot..slots].iter();
                    for (&r, &v) in sn.pattern(s).iter().zip(&z[own.len()..]) {
                        match r as usize {
                            r if r >= hi => {
                                above[*slot.next().expect("one slot per outside row") as usize] = v
                            }
                            r => local[r - lo] = v,
                        }
                    }
                }
                above
            })
            .collect();
        for (task, above) in plan.tasks.iter().zip(&outside) {
            for (&r, v) in sn.pattern(task.root).iter().zip(above) {
                add_row(&mut y[r as usize], v);
            }
        }
        for level in &plan.levels {
            let parallel = level.len() == 1;
            let zs: Vec<Vec<[f64; K]>> = level
                .par_iter()
                .map(|&s| {
                    let w = sn.width(s);
                    let mut z: Vec<[f64; K]> = y[sn.begin[s]..sn.begin[s] + w].to_vec();
                    z.resize(w + sn.pattern(s).len(), [0.0; K]);
                    panel_kernels::forward(self.panel_values(values, s), &mut z, w, parallel);
                    z
                })
                .collect();
            for (&s, z) in level.iter().zip(&zs) {
                let (x, update) = z.split_at(sn.width(s));
                y[sn.begin[s]..sn.begin[s + 1]].copy_from_slice(x);
                sn.pattern(s).iter().zip(update).for_each(|(&r, v)| add_row(&mut y[r as usize], v));
            }
        }
    }

    /// `[y_own; y_pattern]` of supernode `s`, and its own columns.
    fn gather<const K: usize>(&self, s: usize, y: &[[f64; K]]) -> (Range<usize>, Vec<[f64; K]>) {
        let sn = &self.symbolic().supernodes;
        let own = sn.begin[s]..sn.begin[s + 1];
        let z = y[own.clone()].iter().copied().chain(sn.pattern(s).iter().map(|&r| y[r as usize])).collect();
        (own, z)
    }

    /// `Lᵀ x = y`: the common ancestors first, then the subtrees in parallel,
    /// each reading the (final) rows of its ancestors from a snapshot.
    fn backward<P: Stored, const K: usize>(&self, values: &[P], y: &mut [[f64; K]]) {
        let plan = &self.symbolic().solve_plan;
        let sn = &self.symbolic().supernodes;
        for level in plan.levels.iter().rev() {
            let parallel = level.len() == 1;
            let xs: Vec<(Range<usize>, Vec<[f64; K]>)> = level
                .par_iter()
                .map(|&s| {
                    let (own, mut z) = self.gather(s, y);
                    panel_kernels::backward(self.panel_values(values, s), &mut z, own.len(), parallel);
                    z.truncate(own.len());
                    (own, z)
                })
                .collect();
            for (own, x) in xs {
                y[own].copy_from_slice(&x);
            }
        }
        if plan.tasks.is_empty() {
            return;
        }
        let snapshot = y.to_vec();
        split_by_subtree(y, &plan.tasks).into_par_iter().for_each(|(task, local)| {
            let (lo, hi) = (task.columns.start, task.columns.end);
            let mut z = Vec::new();
            for s in task.supernodes.clone().rev() {
                if s > task.supernodes.start {
                    crate::simd::prefetch(self.panel_values(values, s - 1));
                }
                let own = sn.begin[s] - lo..sn.begin[s + 1] - lo;
                z.clear();
                z.extend_from_slice(&local[own.clone()]);
                z.extend(sn.pattern(s).iter().map(|&r| {
                    let r = r as usize;
                    if r < hi {
                        local[r - lo]
                    } else {
                        snapshot[r]
                    }
                }));
                panel_kernels::backward(self.panel_values(values, s), &mut z, own.len(), false);
                local[own.clone()].copy_from_slice(&z[..own.len()]);
            }
        });
    }
}

/// `a ← a + b`, row by row.
fn add_row<const K: usize>(a: &mut [f64; K], b: &[f64; K]) {
    (0..K).for_each(|c| a[c] += b[c]);
}

/// Disjoint mutable views of `y` on each subtree's columns.
fn split_by_subtree<'a, 'p, T>(y: &'a mut [T], tasks: &'p [Subtree]) -> Vec<(&'p Subtree, &'a mut [T])> {
    let mut views = Vec::with_capacity(tasks.len());
    let (mut rest, mut offset) = (y, 0);
    for task in tasks {
        let (_, tail) = rest.split_at_mut(task.columns.start - offset);
        let (mine, tail) = tail.split_at_mut(task.columns.len());
        views.push((task, mine));
        rest = tail;
        offset = task.columns.end;
    }
    views
}
