//! Right-hand sides through the supernodal factor, `P A Pᵀ = L D Lᵀ`:
//! `L y = P b`, `z = D⁻¹ y`, `Lᵀ x = z`, `b ← Pᵀ x`, supernode by supernode,
//! the independent subtrees of the supernodal elimination tree in parallel
//! (zeng2022 §3.1: the preconditioner application of every PCG iteration,
//! and the corrective motion of eq. 17).
//!
//! A one-vector solve reads the whole factor and does two flops per entry
//! per sweep, so its floor is bytes moved; the kernels stream each panel
//! column once, contiguous, and the two cores share the subtrees.

use super::panel_kernels::{self, Scaled};
use super::rounded::Rounded;
use super::solve_plan::{Step, Subtree, Top};
use super::{Ldlt, Precision};
use crate::simd::Stored;
use crate::split::SharedColumns;

/// A factor's values as the sweeps read them: stored values and, for an
/// 8-bit copy, the scales of its panels' blocks of rows ([`Scaled`]) and
/// where each supernode's start.
#[derive(Debug)]
struct FactorValues<'a, P> {
    values: &'a [P],
    scales: &'a [f32],
    scale_ptr: &'a [usize],
}

impl<P> Clone for FactorValues<'_, P> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<P> Copy for FactorValues<'_, P> {}

impl<'a, P> FactorValues<'a, P> {
    /// Values without scales.
    fn unscaled(values: &'a [P]) -> Self {
        FactorValues { values, scales: &[], scale_ptr: &[] }
    }
}

/// Runs `$body` with `$v` bound to the values of factor `$f` in
/// `$precision` (as [`Ldlt::available`] resolves it): a [`FactorValues`]
/// view of its `f64`, `f32`, bfloat16 or 8-bit values.
macro_rules! with_values {
    ($f:expr, $precision:expr, $caller:expr, |$v:ident| $body:expr) => {
        match $f.available($precision) {
            Precision::Double => {
                let $v = FactorValues::unscaled($f.supernodal.get());
                $body
            }
            Precision::Single => {
                let $v = FactorValues::unscaled($f.single_values($caller));
                $body
            }
            p => match &*$f.rounded_values(p, $caller) {
                Rounded::Bfloat16(values) => {
                    let $v = FactorValues::unscaled(&values[..]);
                    $body
                }
                Rounded::Int8 { values, scales, scale_ptr } => {
                    let $v =
                        FactorValues { values: &values[..], scales: &scales[..], scale_ptr: &scale_ptr[..] };
                    $body
                }
            },
        }
    };
}

impl Ldlt {
    /// Solves `A x = b` in place for one right-hand side by the supernodal
    /// sweeps of [`SolvePlan`].
    pub fn solve_one(&self, b: &mut [f64]) {
        self.solve_one_in(b, Precision::Double);
    }

    /// [`Self::solve_one`] reading the factor in `precision`: in
    /// [`Precision::Single`], the `f32` copy kept by
    /// [`Self::keep_single_precision`] (half the bytes), in
    /// [`Precision::Bfloat16`] or [`Precision::Int8`] the copy kept by
    /// [`Self::keep_rounded`] (a quarter, an eighth); `b`, the sweeps'
    /// vectors and all arithmetic stay `f64`, so the result is the exact
    /// solve with the rounded factor (an 8-bit one's backward sweep sums
    /// each column by blocks of rows).
    ///
    /// # Panics
    /// If the copy `precision` names is not kept.
    pub fn solve_one_in(&self, b: &mut [f64], precision: Precision) {
        let s = &**self.symbolic();
        assert_eq!(b.len(), s.n(), "right-hand side length");
        let mut y: Vec<[f64; 1]> = s.perm.iter().map(|&o| [b[o]]).collect();
        self.solve_permuted_in(&mut y, precision);
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
        self.solve_from_forward_in(z, x, Precision::Double);
    }

    /// [`Self::solve_from_forward`] with the backward sweep reading the
    /// factor in `precision` (as [`Self::solve_one_in`] does).
    ///
    /// # Panics
    /// If the copy `precision` names is not kept.
    pub fn solve_from_forward_in<const K: usize>(
        &self,
        z: &mut [[f64; K]],
        x: &mut [f64],
        precision: Precision,
    ) {
        let s = &**self.symbolic();
        let j = x.len() / s.n().max(1);
        assert!(z.len() == s.n() && j <= K && x.len() == j * s.n(), "solve_from_forward: lengths");
        z.iter_mut().zip(&self.d).for_each(|(v, d)| v.iter_mut().for_each(|v| *v /= d.sqrt()));
        with_values!(self, precision, "solve_from_forward_in", |v| self.backward(v, z));
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
        self.forward_interleaved3_in(b, z, Precision::Double);
    }

    /// [`Self::forward_interleaved3`] reading the factor in `precision`
    /// (as [`Self::solve_one_in`] does).
    ///
    /// # Panics
    /// If the copy `precision` names is not kept.
    pub fn forward_interleaved3_in(&self, b: &[f64], z: &mut Vec<[f64; 4]>, precision: Precision) {
        let s = &**self.symbolic();
        assert_eq!(b.len(), 3 * s.n(), "forward_interleaved3: expected {} values", 3 * s.n());
        z.clear();
        z.extend(s.perm.iter().map(|&o| [b[3 * o], b[3 * o + 1], b[3 * o + 2], 0.0]));
        with_values!(self, precision, "forward_interleaved3_in", |v| self.forward(v, z));
        z.iter_mut().zip(&self.d).for_each(|(v, d)| v.iter_mut().for_each(|v| *v /= d.sqrt()));
    }

    /// `x = (A ⊗ I_K)⁻¹ b` for vectors interleaved `K` to a row (`b[i·K + c]`;
    /// a flat position vector is `K = 3`): one pass of the supernodal sweeps
    /// over the factor serves the `K` right-hand sides.
    pub fn solve_interleaved<const K: usize>(&self, b: &[f64], x: &mut [f64]) {
        self.solve_interleaved_in::<K>(b, x, Precision::Double);
    }

    /// [`Self::solve_interleaved`] reading the factor in `precision` (as
    /// [`Self::solve_one_in`] does).
    ///
    /// # Panics
    /// If the copy `precision` names is not kept.
    pub fn solve_interleaved_in<const K: usize>(&self, b: &[f64], x: &mut [f64], precision: Precision) {
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
            self.solve_permuted_in(&mut y, precision);
            s.perm.iter().zip(&y).for_each(|(&o, v)| x[o].copy_from_slice(&v[..K]));
            return;
        }
        let mut y: Vec<[f64; K]> = s.perm.iter().map(|&o| b[o]).collect();
        self.solve_permuted_in(&mut y, precision);
        s.perm.iter().zip(&y).for_each(|(&o, v)| x[o] = *v);
    }

    /// [`Self::solve_permuted`] with the values of `precision` (double
    /// falls back to single once released).
    fn solve_permuted_in<const K: usize>(&self, y: &mut [[f64; K]], precision: Precision) {
        with_values!(self, precision, "solve_interleaved_in", |v| self.solve_permuted(v, y));
    }

    /// The kept `f32` copy of the factor (`caller` names who asked, if none is).
    pub(super) fn single_values(&self, caller: &str) -> &[f32] {
        self.single.as_deref().unwrap_or_else(|| panic!("{caller}: no single-precision copy kept"))
    }

    /// The kept preconditioner copy of the factor in `precision` (`caller`
    /// names who asked, if none is).
    fn rounded_values(&self, precision: Precision, caller: &str) -> std::sync::Arc<Rounded> {
        let copy = self.rounded.get().unwrap_or_else(|| panic!("{caller}: no {precision:?} copy kept"));
        assert_eq!(copy.precision(), precision, "{caller}: the copy kept");
        copy
    }

    /// Supernode `s`'s panel within `values`, with its columns' scales.
    fn scaled_panel<'a, P>(&self, values: FactorValues<'a, P>, s: usize) -> Scaled<'a, P> {
        let panel = self.panel_values(values.values, s);
        match values.scale_ptr {
            [] => Scaled::unscaled(panel),
            ptr => Scaled {
                values: panel,
                scales: &values.scales[ptr[s]..ptr[s + 1]],
                blocks: super::rounded::scale_blocks(&self.symbolic.supernodes, s),
            },
        }
    }

    /// `L D Lᵀ y = y` in the factor's numbering, with the supernodal
    /// `values` (the factor, or its single-precision copy); `D` is read in
    /// double either way.
    fn solve_permuted<P: Stored, const K: usize>(&self, values: FactorValues<P>, y: &mut [[f64; K]]) {
        self.forward(values, y);
        y.iter_mut().zip(&self.d).for_each(|(v, d)| v.iter_mut().for_each(|v| *v /= d));
        self.backward(values, y);
    }

    /// `L y = y`: the forward steps of the plan. A subtree keeps its updates
    /// of rows outside it in its part of the scratch; a top supernode adds
    /// the updates of its rows in the plan's order, solves its panel, and
    /// keeps its updates of the rows above it in its part of the scratch.
    fn forward<P: Stored, const K: usize>(&self, values: FactorValues<P>, y: &mut [[f64; K]]) {
        let plan = &self.symbolic().solve_plan;
        let sn = &self.symbolic().supernodes;
        let mut scratch = vec![[0.0; K]; plan.scratch_rows];
        let (ys, zs) = (SharedColumns::new(y), SharedColumns::new(&mut scratch));
        // SAFETY (every access below): a step writes only rows that are its
        // own (a subtree's columns and updates, a top supernode's rows, a
        // part of a block's rows) and reads rows that the steps it depends
        // on finished; no other step touches them meanwhile.
        plan.forward.run(|i| match plan.forward_steps[i] {
            Step::Subtree(k) => {
                let task = &plan.tasks[k];
                let local = unsafe { ys.column(task.columns.start, task.columns.len()) };
                let above = unsafe { zs.column(task.offset, sn.pattern(task.root).len()) };
                self.forward_subtree(values, task, local, above);
            }
            Step::Triangle { t, block } => {
                let top = &plan.top[t];
                let (s, w) = (top.s, sn.width(top.s));
                let z = unsafe { zs.column(top.offset, top.rows(sn)) };
                if block == 0 {
                    z[..w].copy_from_slice(unsafe { ys.finished(sn.begin[s], w) });
                    z[w..].fill([0.0; K]);
                    for &(from, to) in &plan.contributions[top.gather.clone()] {
                        add_row(&mut z[to as usize], &unsafe { zs.finished(from as usize, 1) }[0]);
                    }
                }
                let panel = self.scaled_panel(values, s);
                let (k0, k1) = top.block(sn, block);
                if top.blocks == 1 {
                    panel_kernels::forward(panel, z, w);
                } else {
                    panel_kernels::triangle_lower(panel, z.len(), k0, &mut z[k0..k1]);
                }
                if k1 == w {
                    unsafe { ys.column(sn.begin[s], w) }.copy_from_slice(&z[..w]);
                }
            }
            Step::Update { t, block, part } => {
                let top = &plan.top[t];
                let (k0, k1) = top.block(sn, block);
                let rows = top.rows_part(sn, block, part);
                let x = unsafe { zs.finished(top.offset + k0, k1 - k0) };
                let out = unsafe { zs.column(top.offset + rows.start, rows.len()) };
                panel_kernels::update_below(
                    self.scaled_panel(values, top.s),
                    top.rows(sn),
                    k0,
                    rows.start,
                    x,
                    out,
                );
            }
            Step::Gather(_) => unreachable!("the forward sweep gathers in its first triangle"),
        });
    }

    /// The forward sweep of one subtree, on its columns `local`, keeping
    /// its updates of the rows outside it in `above` (by position in its
    /// root's pattern).
    fn forward_subtree<P: Stored, const K: usize>(
        &self,
        values: FactorValues<P>,
        task: &Subtree,
        local: &mut [[f64; K]],
        above: &mut [[f64; K]],
    ) {
        let sn = &self.symbolic().supernodes;
        let (lo, hi) = (task.columns.start, task.columns.end);
        let (mut z, mut slots) = (Vec::new(), 0);
        for s in task.supernodes.clone() {
            if s + 1 < task.supernodes.end {
                crate::simd::prefetch(self.scaled_panel(values, s + 1).values);
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
            panel_kernels::forward(self.scaled_panel(values, s), &mut z, own.len());
            local[own.clone()].copy_from_slice(&z[..own.len()]);
            let mut slot = task.slots[first_slot..slots].iter();
            for (&r, &v) in sn.pattern(s).iter().zip(&z[own.len()..]) {
                match r as usize {
                    r if r >= hi => above[*slot.next().expect("one slot per outside row") as usize] = v,
                    r => local[r - lo] = v,
                }
            }
        }
    }

    /// `Lᵀ x = y`: the backward steps of the plan. A top supernode reads its
    /// pattern rows (final) into its part of the scratch and solves its
    /// panel; a subtree then reads the rows of its ancestors.
    fn backward<P: Stored, const K: usize>(&self, values: FactorValues<P>, y: &mut [[f64; K]]) {
        let plan = &self.symbolic().solve_plan;
        let sn = &self.symbolic().supernodes;
        let mut scratch = vec![[0.0; K]; plan.scratch_rows];
        let (ys, zs) = (SharedColumns::new(y), SharedColumns::new(&mut scratch));
        let gather = |top: &Top, z: &mut [[f64; K]]| {
            let w = sn.width(top.s);
            z[..w].copy_from_slice(unsafe { ys.finished(sn.begin[top.s], w) });
            for (v, &r) in z[w..].iter_mut().zip(sn.pattern(top.s)) {
                *v = unsafe { ys.finished(r as usize, 1) }[0];
            }
        };
        // SAFETY: as in the forward sweep; a step reads rows of the solution
        // only once the steps that finish them are done.
        plan.backward.run(|i| match plan.backward_steps[i] {
            Step::Subtree(k) => {
                let task = &plan.tasks[k];
                let local = unsafe { ys.column(task.columns.start, task.columns.len()) };
                self.backward_subtree(values, task, local, |r| unsafe { ys.finished(r, 1) }[0]);
            }
            Step::Gather(t) => {
                gather(&plan.top[t], unsafe { zs.column(plan.top[t].offset, plan.top[t].rows(sn)) })
            }
            Step::Triangle { t, block } => {
                let top = &plan.top[t];
                let (s, w) = (top.s, sn.width(top.s));
                let panel = self.scaled_panel(values, s);
                let z = unsafe { zs.column(top.offset, top.rows(sn)) };
                if top.blocks == 1 {
                    gather(top, z);
                    panel_kernels::backward(panel, z, w);
                } else {
                    let (k0, k1) = top.block(sn, block);
                    panel_kernels::triangle_upper(panel, z.len(), k0, &mut z[k0..k1]);
                }
                if block == 0 {
                    unsafe { ys.column(sn.begin[s], w) }.copy_from_slice(&z[..w]);
                }
            }
            Step::Update { t, block, part } => {
                let top = &plan.top[t];
                let k1 = top.block(sn, block).1;
                let columns = top.columns_part(sn, block, part);
                let below = unsafe { zs.finished(top.offset + k1, top.rows(sn) - k1) };
                let out = unsafe { zs.column(top.offset + columns.start, columns.len()) };
                let panel = self.scaled_panel(values, top.s);
                panel_kernels::update_above(panel, top.rows(sn), columns.start, k1, below, out);
            }
        });
    }

    /// The backward sweep of one subtree, on its columns `local`, reading
    /// the final rows outside it by `outside`.
    fn backward_subtree<P: Stored, const K: usize>(
        &self,
        values: FactorValues<P>,
        task: &Subtree,
        local: &mut [[f64; K]],
        outside: impl Fn(usize) -> [f64; K],
    ) {
        let sn = &self.symbolic().supernodes;
        let (lo, hi) = (task.columns.start, task.columns.end);
        let mut z = Vec::new();
        for s in task.supernodes.clone().rev() {
            if s > task.supernodes.start {
                crate::simd::prefetch(self.scaled_panel(values, s - 1).values);
            }
            let own = sn.begin[s] - lo..sn.begin[s + 1] - lo;
            z.clear();
            z.extend_from_slice(&local[own.clone()]);
            z.extend(sn.pattern(s).iter().map(|&r| match r as usize {
                r if r < hi => local[r - lo],
                r => outside(r),
            }));
            panel_kernels::backward(self.scaled_panel(values, s), &mut z, own.len());
            local[own.clone()].copy_from_slice(&z[..own.len()]);
        }
    }
}

/// `a ← a + b`, row by row.
fn add_row<const K: usize>(a: &mut [f64; K], b: &[f64; K]) {
    (0..K).for_each(|c| a[c] += b[c]);
}
