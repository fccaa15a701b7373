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
//! multiplied straight into them. The columns are independent, so the
//! solve and the product `Zᵀ Z` run as a few ranges of columns side by side,
//! each with sequential kernels (the same ranges whatever the thread count).
//! [`IsodofCache`] keeps the columns while the factor is unchanged and only
//! solves the DOFs it has not seen (§5, eq. 26–30).

use std::collections::HashMap;
use std::ops::Range;

use faer::linalg::matmul::matmul;
use faer::linalg::matmul::triangular::{self, BlockStructure};
use faer::linalg::triangular_solve::solve_unit_lower_triangular_in_place;
use faer::prelude::{Reborrow, ReborrowMut};
use faer::{Accum, MatMut, MatRef, Par};
use rayon::prelude::*;

use super::isodof_cost::reach;
use super::isodof_values::{AddProducts, ColumnScalar, Values};
use super::narrow::{add_narrow, NARROW};
use super::Ldlt;
use crate::split::{balanced_parts, SharedColumns};

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
    values: Values,
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

    /// The columns of `W̄` (or of the build) the block holds.
    fn columns(&self) -> Range<usize> {
        self.lo..self.lo + self.cols
    }

    /// Those of its columns that lie in `range` (empty when none do).
    fn columns_in(&self, range: &Range<usize>) -> Range<usize> {
        range.start.max(self.lo)..range.end.min(self.lo + self.cols)
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
        for (i, &d) in dofs.iter().enumerate() {
            let p = s.perm_inv[d];
            let b = &blocks[block_of[&(sn.of_column[p] as usize)]];
            storage[b.offset + (i - b.lo) * b.rows + p - sn.begin[b.sn] - b.rho] = 1.0;
        }
        let mut cols = IsodofColumns { dofs, blocks, block_of, values: Values::Double(storage) };
        cols.solve_in_parts(f);
        cols
    }

    /// The solve of [`Self::new_in`], the columns split into up to
    /// [`PARTS`] ranges of about equal work: the columns of `S̄` are
    /// independent, so each range goes through every block of the reach
    /// (restricted to its columns) as a task of its own, with sequential
    /// kernels. The many small blocks low in the tree then run side by
    /// side, and no range waits for another.
    fn solve_in_parts(&mut self, f: &Ldlt) {
        let sn = &f.symbolic().supernodes;
        let targets: Vec<Vec<Target>> = (0..self.blocks.len()).map(|bi| self.targets(sn, bi)).collect();
        // Work per column, `Σ r² + 2 r q` over the blocks it crosses.
        let mut cost = vec![0.0; self.len()];
        for b in &self.blocks {
            let (r, q) = (b.rows as f64, sn.pattern(b.sn).len() as f64);
            cost[b.columns()].iter_mut().for_each(|c| *c += r * r + 2.0 * r * q);
        }
        let ranges = solve_parts(cost.into_iter());
        let d_inv_sqrt: Vec<f64> = f.d.iter().map(|d| d.sqrt().recip()).collect();
        let blocks = &self.blocks;
        let values = self.values.double_mut().expect("isodof columns are solved in double");
        let pieces = split_by_columns(values, blocks, &ranges);
        pieces.into_par_iter().zip(&ranges).for_each(|(mut pieces, range)| {
            let mut scratch = SCRATCH.take();
            for bi in 0..blocks.len() {
                let piece = Piece { blocks, bi, first: range.start };
                piece.solve(f, &targets[bi], &mut pieces, &d_inv_sqrt, &mut scratch);
            }
            SCRATCH.set(scratch);
        });
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

    /// Rounds the values to single precision (the columns of a factor kept
    /// in single only carry no more digits), halving their storage; the
    /// products and sweeps below then read `f32` and accumulate as before.
    /// Gives the double storage back (empty if already single), for
    /// [`Self::new_in`] to reuse.
    pub fn round_to_single(&mut self) -> Vec<f64> {
        self.values.round_to_single()
    }

    /// Keeps only the columns of the DOFs `keep` accepts, in their order,
    /// moving each block's kept columns forward in place and giving the
    /// tail of the storage back: the cache's eviction, linear in the
    /// stored entries rather than a new solve. Returns the indices the
    /// kept columns had.
    pub(super) fn retain(&mut self, keep: impl Fn(usize) -> bool) -> Vec<usize> {
        let kept: Vec<usize> = (0..self.dofs.len()).filter(|&i| keep(self.dofs[i])).collect();
        // `before[i]`: kept columns among `0..i`.
        let mut before = vec![0; self.dofs.len() + 1];
        kept.iter().for_each(|&i| before[i + 1] = 1);
        (0..self.dofs.len()).for_each(|i| before[i + 1] += before[i]);
        let (mut blocks, mut moves, mut offset) = (Vec::new(), Vec::new(), 0);
        for b in &self.blocks {
            let lo = before[b.lo];
            let cols = before[b.lo + b.cols] - lo;
            if cols == 0 {
                continue;
            }
            for j in b.columns().filter(|&j| before[j + 1] > before[j]) {
                moves.push((b.offset + (j - b.lo) * b.rows, offset + (before[j] - lo) * b.rows, b.rows));
            }
            blocks.push(Block { lo, cols, offset, ..b.clone() });
            offset += b.rows * cols;
        }
        self.values.compact(&moves, offset);
        self.block_of = blocks.iter().enumerate().map(|(i, b)| (b.sn, i)).collect();
        self.blocks = blocks;
        self.dofs = kept.iter().map(|&i| self.dofs[i]).collect();
        kept
    }

    /// Whether the values are stored in single precision.
    pub fn is_single(&self) -> bool {
        self.values.is_single()
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

    /// `z += Z u = D^{-1/2} L⁻¹ P Īᵀ u` in the factor's numbering for `K`
    /// right-hand sides at once (`A ⊗ I_K`), `u` given per DOF by
    /// `u(dof)`: the forward half of `A⁻¹ Īᵀ u` from the stored columns,
    /// `nnz(S̄)` multiply-adds per side instead of a forward sweep over `L`
    /// ([`Ldlt::solve_from_forward`] finishes it). Columns with `u = 0`
    /// are skipped.
    pub fn add_forward<const K: usize>(&self, f: &Ldlt, u: impl Fn(usize) -> [f64; K], z: &mut [[f64; K]]) {
        let sn = &f.symbolic().supernodes;
        let u: Vec<[f64; K]> = self.dofs.iter().map(|&d| u(d)).collect();
        if u.iter().all(|x| x.iter().all(|&v| v == 0.0)) {
            return;
        }
        match &self.values {
            Values::Double(v) => self.add_forward_of(v, sn, &u, z),
            Values::Single(v) => self.add_forward_of(v, sn, &u, z),
        }
    }

    /// [`Self::add_forward`] from the values in their precision, the
    /// blocks in up to [`PARTS`] ranges of about equal work side by side:
    /// each block writes the rows of its own supernode alone, its columns
    /// in order, so every entry of `z` sums as one thread would.
    fn add_forward_of<T: ColumnScalar, const K: usize>(
        &self,
        values: &[T],
        sn: &super::SupernodeLayout,
        u: &[[f64; K]],
        z: &mut [[f64; K]],
    ) {
        let ranges = parts(self.blocks.iter().map(|b| (b.rows * b.cols) as f64), |m| PARTS.min(m).max(1));
        let out = SharedColumns::new(z);
        crate::team::for_each_part(ranges.len(), |p| {
            for b in &self.blocks[ranges[p].clone()] {
                // SAFETY: a block's rows are those of its supernode from
                // `rho` on; the blocks are of distinct supernodes, and each
                // block belongs to one part.
                let rows = unsafe { out.column(sn.begin[b.sn] + b.rho, b.rows) };
                for (j, uj) in u[b.columns()].iter().enumerate().filter(|(_, x)| x.iter().any(|&v| v != 0.0))
                {
                    let col = &values[b.offset + j * b.rows..b.offset + (j + 1) * b.rows];
                    rows.iter_mut()
                        .zip(col)
                        .for_each(|(r, &c)| (0..K).for_each(|k| r[k] += c.into() * uj[k]));
                }
            }
        });
    }

    /// `x_d = (Zᵀ z)_d` for every DOF `d` with a column, given to
    /// `out(d, x_d)`: the values at these DOFs of `x = Pᵀ L⁻ᵀ D^{-1/2} z`
    /// ([`Ldlt::solve_from_forward`]) without the backward sweep, `nnz(S̄)`
    /// multiply-adds per side; with `z` from [`Ldlt::forward_interleaved3`],
    /// `A⁻¹ b` at the DOFs (the transpose of [`Self::add_forward`]).
    pub fn gather<const K: usize>(&self, f: &Ldlt, z: &[[f64; K]], mut out: impl FnMut(usize, [f64; K])) {
        let sn = &f.symbolic().supernodes;
        let acc = match &self.values {
            Values::Double(v) => self.gather_of(v, sn, z),
            Values::Single(v) => self.gather_of(v, sn, z),
        };
        self.dofs.iter().zip(&acc).for_each(|(&d, a)| out(d, *a));
    }

    /// `Zᵀ z` per column ([`Self::gather`]) from the values in their
    /// precision, the columns in up to [`PARTS`] ranges of about equal work
    /// side by side (each column sums over its blocks in order, as one
    /// thread would).
    fn gather_of<T: ColumnScalar, const K: usize>(
        &self,
        values: &[T],
        sn: &super::SupernodeLayout,
        z: &[[f64; K]],
    ) -> Vec<[f64; K]> {
        let mut acc = vec![[0.0; K]; self.dofs.len()];
        let mut cost = vec![0.0; self.len()];
        for b in &self.blocks {
            cost[b.columns()].iter_mut().for_each(|c| *c += b.rows as f64);
        }
        let ranges = column_parts(cost.into_iter());
        let out = SharedColumns::new(&mut acc);
        crate::team::for_each_part(ranges.len(), |p| {
            let range = &ranges[p];
            // SAFETY: the ranges are disjoint and part `p` alone writes its own.
            let acc = unsafe { out.column(range.start, range.len()) };
            for b in &self.blocks {
                let columns = b.columns_in(range);
                let first = sn.begin[b.sn] + b.rho;
                let rows = &z[first..first + b.rows];
                for j in columns {
                    let col = &values[b.offset + (j - b.lo) * b.rows..b.offset + (j - b.lo + 1) * b.rows];
                    let a = &mut acc[j - range.start];
                    rows.iter().zip(col).for_each(|(r, &c)| (0..K).for_each(|k| a[k] += c.into() * r[k]));
                }
            }
        });
        acc
    }

    /// `z = Z u` (see [`Self::add_forward`]) for the right-hand sides `b`,
    /// interleaved `K` per DOF (`b[K·d + k]`), when every DOF where `b ≠ 0`
    /// has a column here; else `false`. `f` must be the factor the columns
    /// were solved with.
    pub fn forward<const K: usize>(&self, f: &Ldlt, b: &[f64], z: &mut Vec<[f64; K]>) -> bool {
        let b = b.as_chunks::<K>().0;
        let nonzero = |d: usize| b[d].iter().any(|&x| x != 0.0);
        let covered = self.dofs.iter().filter(|&&d| nonzero(d)).count();
        if covered != (0..b.len()).filter(|&d| nonzero(d)).count() {
            return false;
        }
        z.clear();
        z.resize(f.symbolic().n(), [0.0; K]);
        self.add_forward(f, |d| b[d], z);
        true
    }

    /// Gives the storage back, for [`Self::new_in`] to reuse (none for
    /// values rounded to single).
    pub fn into_storage(self) -> Vec<f64> {
        match self.values {
            Values::Double(v) => v,
            Values::Single(_) => Vec::new(),
        }
    }

    /// Capacity of the double storage [`Self::into_storage`] would give back.
    pub(super) fn storage_capacity(&self) -> usize {
        match &self.values {
            Values::Double(v) => v.capacity(),
            Values::Single(_) => 0,
        }
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
    /// `Z_sᵀ Z_s` into the diagonal block of its column range. The columns
    /// of `dst` are split into ranges of about equal work, done side by side.
    pub(super) fn add_lower_gram(&self, dst: MatMut<'_, f64>) {
        match &self.values {
            Values::Double(v) => self.add_lower_gram_of(v, dst),
            Values::Single(v) => self.add_lower_gram_of(v, dst),
        }
    }

    /// [`Self::add_lower_gram`] into a single-precision `W̄`, for columns
    /// rounded to single ([`Self::round_to_single`]).
    pub(super) fn add_lower_gram_single(&self, dst: MatMut<'_, f32>) {
        match &self.values {
            Values::Single(v) => self.add_lower_gram_of(v, dst),
            Values::Double(_) => self.rounded().add_lower_gram_single(dst),
        }
    }

    /// [`Self::add_lower_gram`] in the values' precision `T` (a range
    /// accumulated in `T` and added into `dst` once).
    fn add_lower_gram_of<T: ColumnScalar, D: AddProducts<T> + Send>(&self, values: &[T], dst: MatMut<'_, D>) {
        // Work per column `j` of the lower half, `Σ r (hi − j)`.
        let mut cost = vec![0.0; self.len()];
        for b in &self.blocks {
            let hi = b.columns().end;
            cost[b.columns()].iter_mut().zip(b.lo..).for_each(|(c, j)| *c += (b.rows * (hi - j)) as f64);
        }
        let ranges = column_parts(cost.into_iter());
        split_columns(dst, &ranges).into_par_iter().zip(&ranges).for_each(|(cols, range)| {
            D::accumulate(cols, |mut cols| {
                for b in &self.blocks {
                    let (Range { start: j0, end: j1 }, hi) = (b.columns_in(range), b.columns().end);
                    if j0 >= j1 {
                        continue;
                    }
                    let z = T::block(&values[b.range()], b.rows, b.cols);
                    let zj = z.subcols(j0 - b.lo, j1 - j0);
                    let mut out = cols.rb_mut().subcols_mut(j0 - range.start, j1 - j0);
                    triangular::matmul(
                        out.rb_mut().subrows_mut(j0, j1 - j0),
                        BlockStructure::TriangularLower,
                        Accum::Add,
                        zj.transpose(),
                        BlockStructure::Rectangular,
                        zj,
                        BlockStructure::Rectangular,
                        T::ONE,
                        Par::Seq,
                    );
                    let below = z.subcols(j1 - b.lo, hi - j1);
                    matmul(out.subrows_mut(j1, hi - j1), Accum::Add, below.transpose(), zj, T::ONE, Par::Seq);
                }
            })
        });
    }

    /// `dst += S̄ᵀ D⁻¹ S̄_other = Zᵀ Z_other` (eq. 30b), `dst` being
    /// `m × m_other`: the products of the blocks of the supernodes both
    /// reaches share.
    /// Columns in different precisions are multiplied in single (the
    /// double ones rounded for the product).
    pub fn add_cross(&self, other: &IsodofColumns, dst: MatMut<'_, f64>) {
        match (&self.values, &other.values) {
            (Values::Double(a), Values::Double(b)) => self.add_cross_of(a, other, b, dst),
            (Values::Single(a), Values::Single(b)) => self.add_cross_of(a, other, b, dst),
            (Values::Double(_), _) => self.rounded().add_cross(other, dst),
            (_, Values::Double(_)) => self.add_cross(&other.rounded(), dst),
        }
    }

    /// [`Self::add_cross`] into a single-precision `W̄`, accumulated in
    /// single (double columns rounded for the product).
    pub(super) fn add_cross_single(&self, other: &IsodofColumns, dst: MatMut<'_, f32>) {
        match (&self.values, &other.values) {
            (Values::Single(a), Values::Single(b)) => self.add_cross_of(a, other, b, dst),
            (Values::Double(_), _) => self.rounded().add_cross_single(other, dst),
            (_, Values::Double(_)) => self.add_cross_single(&other.rounded(), dst),
        }
    }

    /// A copy rounded to single precision.
    fn rounded(&self) -> IsodofColumns {
        let mut copy = self.clone();
        copy.round_to_single();
        copy
    }

    /// [`Self::add_cross`] in one precision (a single range accumulated in
    /// `f32` and added into `dst` once).
    fn add_cross_of<T: ColumnScalar, D: AddProducts<T> + Send>(
        &self,
        values: &[T],
        other: &IsodofColumns,
        other_values: &[T],
        dst: MatMut<'_, D>,
    ) {
        let shared: Vec<(&Block, &Block)> = other
            .blocks
            .iter()
            .filter_map(|b| self.block_of.get(&b.sn).map(|&ai| (&self.blocks[ai], b)))
            .collect();
        // Work per column `j` of `dst`, `Σ r k` over the shared blocks.
        let mut cost = vec![0.0; other.len()];
        for (a, b) in &shared {
            cost[b.columns()].iter_mut().for_each(|c| *c += (a.rows * a.cols) as f64);
        }
        let ranges = column_parts(cost.into_iter());
        split_columns(dst, &ranges).into_par_iter().zip(&ranges).for_each(|(cols, range)| {
            D::accumulate(cols, |mut cols| {
                for (a, b) in &shared {
                    let Range { start: j0, end: j1 } = b.columns_in(range);
                    if j0 >= j1 {
                        continue;
                    }
                    // Both are zero above the larger `rho`.
                    let r0 = a.rho.max(b.rho);
                    let rows = a.rows + a.rho - r0;
                    let za = T::block(&values[a.range()], a.rows, a.cols).subrows(r0 - a.rho, rows);
                    let zb = T::block(&other_values[b.range()], b.rows, b.cols);
                    let zb = zb.subrows(r0 - b.rho, rows).subcols(j0 - b.lo, j1 - j0);
                    let out = cols.rb_mut().submatrix_mut(a.lo, j0 - range.start, a.cols, j1 - j0);
                    matmul(out, Accum::Add, za.transpose(), zb, T::ONE, Par::Seq);
                }
            })
        });
    }

    /// `S̄ᵀ D⁻¹ S̄_other` as a new `m × m_other` column-major matrix.
    pub fn cross(&self, other: &IsodofColumns) -> Vec<f64> {
        let (m, mo) = (self.len(), other.len());
        let mut out = vec![0.0; m * mo];
        self.add_cross(other, MatMut::from_column_major_slice_mut(&mut out, m, mo));
        out
    }
}

/// Block `bi` restricted to one range of columns, the range starting at
/// column `first`: its values and those of every block are the pieces
/// [`split_by_columns`] made for that range.
struct Piece<'a> {
    blocks: &'a [Block],
    bi: usize,
    first: usize,
}

impl Piece<'_> {
    /// First column of block `b`'s piece.
    fn start(&self, b: &Block) -> usize {
        self.first.max(b.lo)
    }

    /// The columns `j0..j0 + cols` of this piece in target `t`, whose piece
    /// is in `after` (the pieces after this block's), and its rows.
    fn target<'p>(
        &self,
        after: &'p mut [&mut [f64]],
        t: &Target,
        j0: usize,
        cols: usize,
    ) -> (&'p mut [f64], usize) {
        let tb = &self.blocks[t.block];
        let start = (self.start(&self.blocks[self.bi]) - self.start(tb) + j0) * tb.rows;
        (&mut after[t.block - self.bi - 1][start..start + cols * tb.rows], tb.rows)
    }

    /// The step of [`IsodofColumns::new_in`] for this piece, whose children
    /// are done: `X_s ← L_ss⁻¹ X_s` on the rows from `rho` on (the rows
    /// above are zero, so only the trailing triangle of `L_ss` acts), then
    /// `X_t −= L_ts X_s` into the targets, then `X_s ← D_s^{-1/2} X_s`.
    /// `scratch`: the update panel and, for a factor kept in single
    /// precision only, a few columns of `L` widened to double.
    fn solve(
        &self,
        f: &Ldlt,
        targets: &[Target],
        pieces: &mut [&mut [f64]],
        d_inv_sqrt: &[f64],
        scratch: &mut [Vec<f64>; 2],
    ) {
        let sn = &f.symbolic().supernodes;
        let blk = &self.blocks[self.bi];
        let (w, r0, r, q) = (sn.width(blk.sn), blk.rho, blk.rows, sn.pattern(blk.sn).len());
        debug_assert_eq!(r, w - r0, "a block runs from its rho to its supernode's end");
        let (head, tail) = pieces.split_at_mut(self.bi + 1);
        let x = &mut *head[self.bi];
        let k = x.len() / r;
        if k == 0 {
            return;
        }
        let [update, widened] = scratch;
        if f.double_released() {
            // The panel read once in `f32`: multiplied in registers for a
            // few columns, else widened a few columns at a time.
            update.clear();
            update.resize(q * k, 0.0);
            if k <= NARROW {
                solve_block_narrow(f, blk.sn, r0, x, update, k, widened);
            } else {
                let mut xm = MatMut::from_column_major_slice_mut(x, r, k);
                let ym = MatMut::from_column_major_slice_mut(update, q, k);
                solve_block_single(f, blk.sn, r0, xm.rb_mut(), ym, widened);
            }
            for t in targets {
                let (dst, ld) = self.target(tail, t, 0, k);
                subtract_rows(dst, ld, &t.rows, &update[t.p0..], q);
            }
            self.scale(f, d_inv_sqrt, x);
            return;
        }
        let panel = f.panel(blk.sn).subcols(r0, r);
        let mut xm = MatMut::from_column_major_slice_mut(x, r, k);
        solve_unit_lower_triangular_in_place(panel.submatrix(r0, 0, r, r), xm.rb_mut(), Par::Seq);
        let lower = panel.submatrix(w, 0, q, r);
        if Target::go_direct(targets) {
            // `X_t[run, :] −= L_run,s X_s` straight into the targets.
            for t in targets {
                let (dst, ld) = self.target(tail, t, 0, k);
                for (i, len) in t.run_starts() {
                    let view =
                        MatMut::from_column_major_slice_with_stride_mut(&mut dst[t.rows[i]..], len, k, ld);
                    matmul(view, Accum::Add, lower.subrows(t.p0 + i, len), xm.rb(), -1.0, Par::Seq);
                }
            }
        } else {
            // `Y = L_{pattern,s} X_s` a panel of columns at a time,
            // scattered into the targets while it is still in cache.
            for j0 in (0..k).step_by(UPDATE_PANEL) {
                let cols = UPDATE_PANEL.min(k - j0);
                update.resize(q * cols, 0.0);
                let y = MatMut::from_column_major_slice_mut(update, q, cols);
                matmul(y, Accum::Replace, lower, xm.rb().subcols(j0, cols), 1.0, Par::Seq);
                for t in targets {
                    let (dst, ld) = self.target(tail, t, j0, cols);
                    subtract_rows(dst, ld, &t.rows, &update[t.p0..], q);
                }
            }
        }
        self.scale(f, d_inv_sqrt, x);
    }

    /// `X_s ← D_s^{-1/2} X_s`.
    fn scale(&self, f: &Ldlt, d_inv_sqrt: &[f64], x: &mut [f64]) {
        let sn = &f.symbolic().supernodes;
        let blk = &self.blocks[self.bi];
        let scale = &d_inv_sqrt[sn.begin[blk.sn] + blk.rho..sn.begin[blk.sn + 1]];
        for col in x.chunks_exact_mut(blk.rows) {
            col.iter_mut().zip(scale).for_each(|(v, d)| *v *= d);
        }
    }
}

/// Columns of `L` a block of a single-precision factor widens to double
/// at a time (a few hundred kB: they stay in cache for the products).
const WIDEN_COLUMNS: usize = 32;

/// `X ← L_ss⁻¹ X` and `Y += L_bs X` for the block of supernode `s` from
/// its column `r0` on, in a factor kept in single precision
/// ([`Ldlt::release_double`]): `WIDEN_COLUMNS` columns of the panel at a
/// time are widened into `buf` (the panel is read once, 4 bytes an
/// entry), then a triangular solve on their rows of `X`, the product
/// that updates the rows of `X` below them and the one that adds to `Y`.
fn solve_block_single(
    f: &Ldlt,
    s: usize,
    r0: usize,
    mut x: MatMut<'_, f64>,
    mut y: MatMut<'_, f64>,
    buf: &mut Vec<f64>,
) {
    let sn = &f.symbolic().supernodes;
    let (w, q) = (sn.width(s), sn.pattern(s).len());
    let (rows, r) = (w + q, w - r0);
    let panel = f.panel_values(f.single_values("isodof"), s);
    for c0 in (0..r).step_by(WIDEN_COLUMNS) {
        let cw = WIDEN_COLUMNS.min(r - c0);
        let (top, h) = (r0 + c0, rows - r0 - c0);
        buf.clear();
        for j in top..top + cw {
            buf.extend(panel[j * rows + top..(j + 1) * rows].iter().map(|&v| f64::from(v)));
        }
        let l = MatRef::from_column_major_slice(buf, h, cw);
        let (upper, mut below) = x.rb_mut().split_at_row_mut(c0 + cw);
        let mut xc = upper.subrows_mut(c0, cw);
        solve_unit_lower_triangular_in_place(l.submatrix(0, 0, cw, cw), xc.rb_mut(), Par::Seq);
        let rest = r - c0 - cw;
        matmul(below.rb_mut(), Accum::Add, l.submatrix(cw, 0, rest, cw), xc.rb(), -1.0, Par::Seq);
        matmul(y.rb_mut(), Accum::Add, l.submatrix(cw + rest, 0, q, cw), xc.rb(), 1.0, Par::Seq);
    }
}

/// [`solve_block_single`] for `k ≤ NARROW` columns (`x`: `r × k`, `y`:
/// `q × k`, column-major): per chunk of [`WIDEN_COLUMNS`] columns, the
/// triangle widened and solved on the chunk's rows of `X`, then the rows
/// below it and `Y` updated by [`add_narrow`] straight from the `f32`
/// panel, each entry read once for all `k` columns.
fn solve_block_narrow(
    f: &Ldlt,
    s: usize,
    r0: usize,
    x: &mut [f64],
    y: &mut [f64],
    k: usize,
    buf: &mut Vec<f64>,
) {
    let sn = &f.symbolic().supernodes;
    let (w, q) = (sn.width(s), sn.pattern(s).len());
    let (rows, r) = (w + q, w - r0);
    let panel = f.panel_values(f.single_values("isodof"), s);
    let mut sides = [0.0; WIDEN_COLUMNS * NARROW];
    for c0 in (0..r).step_by(WIDEN_COLUMNS) {
        let cw = WIDEN_COLUMNS.min(r - c0);
        let (top, rest) = (r0 + c0, r - c0 - cw);
        buf.clear();
        for j in top..top + cw {
            buf.extend(panel[j * rows + top..j * rows + top + cw].iter().map(|&v| f64::from(v)));
        }
        let l = MatRef::from_column_major_slice(buf, cw, cw);
        let xc = MatMut::from_column_major_slice_with_stride_mut(&mut x[c0..], cw, k, r);
        solve_unit_lower_triangular_in_place(l, xc, Par::Seq);
        // `X_below −= L X_c`, then `Y += L X_c`.
        let a = &mut sides[..cw * k];
        for c in 0..cw {
            (0..k).for_each(|j| a[c * k + j] = -x[j * r + c0 + c]);
        }
        let below = top * rows + top + cw;
        add_narrow(&panel[below..], rows, rest, a, k, &mut x[c0 + cw..], r);
        a.iter_mut().for_each(|v| *v = -*v);
        add_narrow(&panel[below + rest..], rows, q, a, k, y, q);
    }
}

/// The values of every block cut into one piece per range of `ranges`
/// (which cover the columns in order): `out[range][block]` holds the
/// block's columns in that range, possibly none.
fn split_by_columns<'a>(
    values: &'a mut [f64],
    blocks: &[Block],
    ranges: &[Range<usize>],
) -> Vec<Vec<&'a mut [f64]>> {
    let mut out: Vec<Vec<&mut [f64]>> = ranges.iter().map(|_| Vec::with_capacity(blocks.len())).collect();
    let mut rest = values;
    for b in blocks {
        let (mut block, after) = rest.split_at_mut(b.rows * b.cols);
        rest = after;
        for (range, list) in ranges.iter().zip(&mut out) {
            let k = b.columns_in(range).len();
            let (piece, tail) = std::mem::take(&mut block).split_at_mut(k * b.rows);
            block = tail;
            list.push(piece);
        }
    }
    out
}

/// `dst` cut into the columns of each of `ranges` (which cover its columns
/// in order).
pub(super) fn split_columns<'a, T>(dst: MatMut<'a, T>, ranges: &[Range<usize>]) -> Vec<MatMut<'a, T>> {
    let mut out = Vec::with_capacity(ranges.len());
    let mut rest = dst;
    for range in ranges {
        let (cols, after) = rest.split_at_col_mut(range.len());
        out.push(cols);
        rest = after;
    }
    out
}

/// Columns of a block's update computed and scattered at a time.
const UPDATE_PANEL: usize = 64;

thread_local! {
    /// Each worker's scratch of [`Piece::solve`] (the update panel, the
    /// widened columns), kept from build to build: a buffer of a few MB
    /// allocated afresh is page-faulted in on every build.
    static SCRATCH: std::cell::Cell<[Vec<f64>; 2]> = const { std::cell::Cell::new([Vec::new(), Vec::new()]) };
}

/// Most ranges the columns are split into, whatever the number of threads
/// (so that results do not depend on it; see [`column_parts`]).
const PARTS: usize = 8;

/// Fewest columns worth a range of their own.
const MIN_PART_COLUMNS: usize = 16;

/// Ranges of about equal cost covering `0..cost.len()`, `cost[j]` being
/// column `j`'s work, one per [`MIN_PART_COLUMNS`] columns up to [`PARTS`]
/// (the products `Zᵀ Z`, whose sums these ranges order).
fn column_parts(cost: impl Iterator<Item = f64>) -> Vec<Range<usize>> {
    parts(cost, |m| PARTS.min(m / MIN_PART_COLUMNS).max(1))
}

/// The ranges of the solve ([`IsodofColumns::new_in`]): as [`column_parts`]
/// but two at least (for two columns or more), and an even number of
/// them. Each range reads every panel of the reach once, so a few columns
/// are not cut finer; but a step's handful of new isodofs is a pass over
/// the top separators' panels (50 MB at 20k vertices) that one thread
/// alone reads at half the memory's rate. An odd count leaves a thread
/// idle for the last range: the 60 new isodofs of the rolling cylinder's
/// step (zeng2022 Table 3) in three ranges of 20 on two threads took two
/// ranges' time, in two ranges of 30 they take 1.5. (The count, like the
/// ranges, never depends on the thread count.)
fn solve_parts(cost: impl Iterator<Item = f64>) -> Vec<Range<usize>> {
    parts(cost, |m| {
        let count = PARTS.min(m / MIN_PART_COLUMNS).max(2.min(m)).max(1);
        if count > 2 {
            count & !1
        } else {
            count
        }
    })
}

/// `count(m)` ranges of about equal cost (each cost truncated to an
/// integer) covering the `m` columns.
fn parts(cost: impl Iterator<Item = f64>, count: impl Fn(usize) -> usize) -> Vec<Range<usize>> {
    let mut prefix = vec![0];
    for c in cost {
        prefix.push(prefix[prefix.len() - 1] + c as usize);
    }
    let m = prefix.len() - 1;
    balanced_parts(&prefix, count(m))
}

/// `X_t[rows, :] −= Y[p0.., :]` for one target of an update: `dst` holds
/// the target's `k` columns (`wt` rows each), `y` is `Y` from row `p0` on
/// (`q` rows per column).
fn subtract_rows(dst: &mut [f64], wt: usize, rows: &[usize], y: &[f64], q: usize) {
    for (j, col) in dst.chunks_exact_mut(wt).enumerate() {
        for (&r, &v) in rows.iter().zip(&y[j * q..]) {
            col[r] -= v;
        }
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

#[cfg(test)]
mod parts_tests {
    use super::{column_parts, solve_parts};

    /// How many ranges `split` makes of `m` columns of equal cost (checking
    /// that they cover `0..m` in order).
    fn counts(m: usize, split: fn(std::vec::IntoIter<f64>) -> Vec<std::ops::Range<usize>>) -> usize {
        let ranges = split(vec![1.0; m].into_iter());
        assert_eq!(ranges.first().map(|r| r.start), Some(0));
        assert_eq!(ranges.last().map(|r| r.end), Some(m));
        assert!(ranges.windows(2).all(|w| w[0].end == w[1].start));
        ranges.len()
    }

    #[test]
    fn the_solve_takes_an_even_number_of_ranges_from_two_columns_on() {
        let solve: Vec<usize> =
            [1, 2, 20, 47, 48, 60, 64, 80, 100, 127, 128, 4000].map(|m| counts(m, solve_parts)).into();
        assert_eq!(solve, [1, 2, 2, 2, 2, 2, 4, 4, 6, 6, 8, 8]);
        let products: Vec<usize> = [1, 20, 48, 60, 100, 4000].map(|m| counts(m, column_parts)).into();
        assert_eq!(products, [1, 1, 3, 3, 6, 8]);
    }
}
