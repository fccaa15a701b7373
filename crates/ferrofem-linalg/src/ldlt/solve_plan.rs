//! How the supernodal solves are split between threads ([`SolvePlan`]):
//! disjoint subtrees of the supernodal elimination tree, then their common
//! ancestors, scheduled as one graph of steps per sweep.

use std::ops::Range;

use super::layout::SupernodeLayout;
use super::panel_kernels;
use crate::simd::COLUMNS;
use crate::split::Dag;

/// How a solve is split: disjoint subtrees of the supernodal tree, each a
/// contiguous range of supernodes and of columns, and the remaining
/// supernodes (their common ancestors, the large top separators), each one
/// step, or, for a large panel, a step per block of columns and up to
/// [`MAX_PARTS`] per block's update. The steps of each sweep form a [`Dag`]
/// that every thread of the pool runs with one hand-off per sweep. Every
/// row's arithmetic is fixed by the pattern (the updates a supernode gathers
/// are added in one order; a part's rows or columns are computed as they
/// would be whole), so results do not depend on the thread count.
#[derive(Debug, Clone, Default)]
pub struct SolvePlan {
    pub(super) tasks: Vec<Subtree>,
    /// The remaining supernodes, by height above the subtrees, then index.
    pub(super) top: Vec<Top>,
    /// Updates of the top supernodes' rows in the order they are added:
    /// `(scratch row, own row)`, `top[t].gather` of them for `t`.
    pub(super) contributions: Vec<(u32, u32)>,
    pub(super) forward: Dag,
    pub(super) forward_steps: Vec<Step>,
    pub(super) backward: Dag,
    pub(super) backward_steps: Vec<Step>,
    /// Rows of a sweep's scratch: each subtree's updates of rows outside it,
    /// then each top supernode's `[own; pattern]` rows.
    pub(super) scratch_rows: usize,
}

/// A top supernode (not in any subtree).
#[derive(Debug, Clone)]
pub(super) struct Top {
    pub(super) s: usize,
    /// Columns per block ([`panel_kernels::block_width`]), and blocks.
    pub(super) step: usize,
    pub(super) blocks: usize,
    /// First of its `w + q` rows in the scratch.
    pub(super) offset: usize,
    /// Its updates in [`SolvePlan::contributions`].
    pub(super) gather: Range<usize>,
}

/// One step of a sweep (indices into [`SolvePlan`]'s subtrees and tops).
#[derive(Debug, Clone, Copy)]
pub(super) enum Step {
    /// A subtree, supernode by supernode.
    Subtree(usize),
    /// Forward: block `block` of top `t`'s triangle (after gathering its
    /// rows, for the first block); a one-block panel also updates its rows
    /// below. Backward: the block's triangle (gathering first, and writing
    /// the solved rows back, as a one-block panel does).
    Triangle { t: usize, block: usize },
    /// The update by block `block` of top `t`: part `part` of the rows below
    /// it (forward), or of its columns (backward).
    Update { t: usize, block: usize, part: usize },
    /// Backward: top `t`'s rows read from the solution.
    Gather(usize),
}

/// Rows of a block's forward update per part, at least (and the multiple
/// its parts' bounds keep, for the row kernels' lanes).
pub(super) const PART_ROWS: usize = 8;

/// A block's update is split into at most this many parts (rows forward,
/// columns backward), so a top separator keeps up to this many threads
/// busy; on fewer threads a part is a claim of one more step.
pub(super) const MAX_PARTS: usize = 16;

#[derive(Debug, Clone)]
pub(super) struct Subtree {
    pub(super) supernodes: Range<usize>,
    pub(super) columns: Range<usize>,
    /// Root supernode: every row outside the subtree that it updates is in the root's pattern.
    pub(super) root: usize,
    /// For each pattern row of the subtree's supernodes outside the subtree,
    /// in supernode and pattern order: its position in the root's pattern
    /// (where the forward sweep keeps its update until the merge).
    pub(super) slots: Vec<u32>,
    /// First row of its outside updates in the scratch.
    pub(super) offset: usize,
}

impl Subtree {
    /// The subtree of supernodes `first..=root`, with its slots.
    pub(super) fn new(sn: &SupernodeLayout, first: usize, root: usize) -> Subtree {
        let columns = sn.begin[first]..sn.begin[root + 1];
        let outside = sn.pattern(root);
        let slots = (first..=root)
            .flat_map(|s| sn.pattern(s).iter().filter(|&&r| r as usize >= columns.end))
            .map(|r| {
                outside.binary_search(r).expect("a subtree's outside rows are in its root's pattern") as u32
            })
            .collect();
        Subtree { supernodes: first..root + 1, columns, root, slots, offset: 0 }
    }
}

/// Subtrees are split until none holds more than this share of the factor.
pub(super) const SUBTREE_SHARE: f64 = 1.0 / 16.0;

impl SolvePlan {
    /// Splits the supernodal tree of `sn`, whose panel of supernode `s` holds
    /// `(width + pattern) · width` values: starting from the roots, the
    /// heaviest subtree is replaced by its children until every subtree is
    /// light. A subtree whose supernodes are not a contiguous index range
    /// (never the case for a postordered factor) leaves no subtrees: every
    /// supernode is then a top supernode.
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
            return SolvePlan::scheduled(sn, Vec::new(), &(0..m).collect::<Vec<_>>());
        }
        let subtrees = tasks.into_iter().map(|t| Subtree::new(sn, t + 1 - size[t], t)).collect();
        SolvePlan::scheduled(sn, subtrees, &top)
    }

    /// Number of subtrees solved in parallel.
    pub fn subtrees(&self) -> usize {
        self.tasks.len()
    }

    /// Number of top supernodes whose panels are shared by blocks.
    pub fn blocked(&self) -> usize {
        self.top.iter().filter(|t| t.blocks > 1).count()
    }

    /// The plan of `subtrees` and the supernodes `top` above them: scratch
    /// rows, the order of each top supernode's gathered updates, and the
    /// steps of both sweeps.
    pub(super) fn scheduled(sn: &SupernodeLayout, mut tasks: Vec<Subtree>, top: &[usize]) -> SolvePlan {
        let mut rows = 0;
        for task in &mut tasks {
            task.offset = rows;
            rows += sn.pattern(task.root).len();
        }
        let mut tops = Vec::with_capacity(top.len());
        for level in levels(sn, top) {
            for &s in &level {
                let (w, q) = (sn.width(s), sn.pattern(s).len());
                // A supernode alone at its height is shared by blocks; the
                // others run beside each other whole.
                let step = if level.len() == 1 { panel_kernels::block_width((w + q) * w, w) } else { w };
                tops.push(Top { s, step, blocks: w.div_ceil(step), offset: rows, gather: 0..0 });
                rows += w + q;
            }
        }
        let mut top_of = vec![usize::MAX; sn.len()];
        tops.iter().enumerate().for_each(|(t, top)| top_of[top.s] = t);
        let mut plan = SolvePlan { tasks, top: tops, scratch_rows: rows, ..SolvePlan::default() };
        plan.order_gathers(sn, &top_of);
        let parent_top = |s: usize| sn.parent.get(s).copied().filter(|&p| p < sn.len()).map(|p| top_of[p]);
        plan.forward_schedule(sn, parent_top);
        plan.backward_schedule(sn, parent_top);
        plan
    }

    /// Each top supernode adds the subtrees' updates of its rows, then those
    /// of the top supernodes below it, in the order the sweeps used to merge
    /// them (subtrees, then levels of top supernodes).
    pub(super) fn order_gathers(&mut self, sn: &SupernodeLayout, top_of: &[usize]) {
        let mut gathered: Vec<Vec<(u32, u32)>> = vec![Vec::new(); self.top.len()];
        let subtrees = self.tasks.iter().map(|task| (task.root, task.offset));
        for (s, offset) in subtrees.chain(self.top.iter().map(|u| (u.s, u.offset + sn.width(u.s)))) {
            for (k, &r) in sn.pattern(s).iter().enumerate() {
                let t = top_of[sn.of_column[r as usize] as usize];
                gathered[t].push(((offset + k) as u32, (r as usize - sn.begin[self.top[t].s]) as u32));
            }
        }
        for (top, updates) in self.top.iter_mut().zip(gathered) {
            top.gather = self.contributions.len()..self.contributions.len() + updates.len();
            self.contributions.extend(updates);
        }
    }

    /// Forward steps: the subtrees, then each top supernode after its
    /// children (its blocks in order, each block's update in parts).
    pub(super) fn forward_schedule(
        &mut self,
        sn: &SupernodeLayout,
        parent_top: impl Fn(usize) -> Option<usize>,
    ) {
        let mut children: Vec<Vec<usize>> = vec![Vec::new(); self.top.len()];
        for i in 0..self.tasks.len() {
            let step = self.forward_step(Vec::new(), Step::Subtree(i));
            if let Some(p) = parent_top(self.tasks[i].root) {
                children[p].push(step);
            }
        }
        for t in 0..self.top.len() {
            let blocks = self.top[t].blocks;
            let mut last = std::mem::take(&mut children[t]);
            for block in 0..blocks {
                let triangle = self.forward_step(last, Step::Triangle { t, block });
                let parts = if blocks == 1 { 0 } else { self.top[t].row_parts(sn, block) };
                last = (0..parts)
                    .map(|part| self.forward_step(vec![triangle], Step::Update { t, block, part }))
                    .collect();
                if parts == 0 {
                    last = vec![triangle];
                }
            }
            if let Some(p) = parent_top(self.top[t].s) {
                children[p].extend_from_slice(&last);
            }
        }
    }

    /// Backward steps: each top supernode after its parent (its blocks from
    /// the last, each block's update in parts), then the subtrees.
    pub(super) fn backward_schedule(
        &mut self,
        sn: &SupernodeLayout,
        parent_top: impl Fn(usize) -> Option<usize>,
    ) {
        let mut finish: Vec<Vec<usize>> = vec![Vec::new(); self.top.len()];
        for t in (0..self.top.len()).rev() {
            let blocks = self.top[t].blocks;
            let mut last = parent_top(self.top[t].s).map(|p| finish[p].clone()).unwrap_or_default();
            if blocks > 1 {
                last = vec![self.backward_step(last, Step::Gather(t))];
            }
            for block in (0..blocks).rev() {
                let parts = if blocks == 1 { 0 } else { self.top[t].column_parts(sn, block) };
                if parts > 0 {
                    last = (0..parts)
                        .map(|part| self.backward_step(last.clone(), Step::Update { t, block, part }))
                        .collect();
                }
                last = vec![self.backward_step(last, Step::Triangle { t, block })];
            }
            finish[t] = last;
        }
        for i in (0..self.tasks.len()).rev() {
            let deps = parent_top(self.tasks[i].root).map(|p| finish[p].clone()).unwrap_or_default();
            self.backward_step(deps, Step::Subtree(i));
        }
    }

    /// Appends a forward step after `deps`.
    pub(super) fn forward_step(&mut self, deps: Vec<usize>, step: Step) -> usize {
        self.forward_steps.push(step);
        self.forward.push(deps)
    }

    /// Appends a backward step after `deps`.
    pub(super) fn backward_step(&mut self, deps: Vec<usize>, step: Step) -> usize {
        self.backward_steps.push(step);
        self.backward.push(deps)
    }
}

impl Top {
    /// Its panel's rows, `w + q`.
    pub(super) fn rows(&self, sn: &SupernodeLayout) -> usize {
        sn.width(self.s) + sn.pattern(self.s).len()
    }

    /// Columns `k0..k1` of block `block`.
    pub(super) fn block(&self, sn: &SupernodeLayout, block: usize) -> (usize, usize) {
        let k0 = block * self.step;
        (k0, (k0 + self.step).min(sn.width(self.s)))
    }

    /// Forward: parts of block `block`'s update of the rows below it, each
    /// of at least [`PART_ROWS`] rows (none when no row is below).
    pub(super) fn row_parts(&self, sn: &SupernodeLayout, block: usize) -> usize {
        let below = self.rows(sn) - self.block(sn, block).1;
        if below == 0 {
            return 0;
        }
        (below / PART_ROWS).clamp(1, MAX_PARTS)
    }

    /// Forward: the rows below block `block` in part `part` of
    /// [`Self::row_parts`], bounds on multiples of [`PART_ROWS`] past the block.
    pub(super) fn rows_part(&self, sn: &SupernodeLayout, block: usize, part: usize) -> Range<usize> {
        let (ld, k1) = (self.rows(sn), self.block(sn, block).1);
        let groups = (ld - k1).div_ceil(PART_ROWS);
        let parts = self.row_parts(sn, block);
        let bound = |p: usize| (k1 + groups * p / parts * PART_ROWS).min(ld);
        bound(part)..bound(part + 1)
    }

    /// Backward: parts of block `block`'s columns, each of at least two
    /// groups of [`COLUMNS`].
    pub(super) fn column_parts(&self, sn: &SupernodeLayout, block: usize) -> usize {
        let (k0, k1) = self.block(sn, block);
        ((k1 - k0) / (2 * COLUMNS)).clamp(1, MAX_PARTS)
    }

    /// Backward: the columns of block `block` in part `part` of
    /// [`Self::column_parts`], bounds on whole groups of [`COLUMNS`].
    pub(super) fn columns_part(&self, sn: &SupernodeLayout, block: usize, part: usize) -> Range<usize> {
        let (k0, k1) = self.block(sn, block);
        let groups = (k1 - k0).div_ceil(COLUMNS);
        let parts = self.column_parts(sn, block);
        let bound = |p: usize| (k0 + groups * p / parts * COLUMNS).min(k1);
        bound(part)..bound(part + 1)
    }
}

/// The supernodes `top` (closed under taking parents, increasing) grouped
/// by height: 0 for those without a child in `top`, else one more than the
/// highest such child.
pub(super) fn levels(sn: &SupernodeLayout, top: &[usize]) -> Vec<Vec<usize>> {
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
pub(super) fn reaches(sn: &SupernodeLayout, mut s: usize, t: usize) -> bool {
    while s < t {
        s = sn.parent[s];
    }
    s == t
}
