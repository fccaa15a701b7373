//! `W` stored by blocks of coupled groups: `W = h² Σ_b H_b A_b⁻¹ H_bᵀ` is
//! zero between two groups unless a chain of body–body contacts joins
//! their bodies, so the groups split into blocks (the components of the
//! bodies' contact graph) and `W` is kept as one dense matrix per block:
//! its storage grows with `Σ_k c_k²`, not `(Σ_k c_k)²`, and each block is
//! a constraint problem of its own (zeng2022 eq. 12 and §3.3).

use ferrofem_linalg::simd::{Bf16, Stored};
use rayon::prelude::*;

/// One block: its groups (ascending world indices) and `W` over their rows
/// (three per group), row-major; `values` is empty while no body of the
/// block has been built.
#[derive(Debug, Clone, Default)]
pub struct DelassusBlock {
    /// The block's groups, ascending.
    pub groups: Vec<usize>,
    /// `W` over the block's rows, row-major `3m × 3m` (empty: unbuilt).
    pub values: Vec<f64>,
    /// `values` rounded to f32, made on first use after `values` changes.
    pub(crate) single: Vec<f32>,
    /// `values` rounded to bfloat16, likewise.
    pub(crate) bfloat16: Vec<Bf16>,
}

impl DelassusBlock {
    /// Rows of the block (three per group).
    pub fn rows(&self) -> usize {
        3 * self.groups.len()
    }

    /// Forgets the rounded copies (after `values` changed).
    fn drop_copies(&mut self) {
        self.single.clear();
        self.bfloat16.clear();
    }

    /// The block's world rows, in order.
    pub fn world_rows(&self) -> impl Iterator<Item = usize> + '_ {
        self.groups.iter().flat_map(|&g| [3 * g, 3 * g + 1, 3 * g + 2])
    }
}

/// `W` by blocks of coupled groups ([`DelassusBlock`]), with each group's
/// block and place in it.
#[derive(Debug, Clone, Default)]
pub struct DelassusBlocks {
    blocks: Vec<DelassusBlock>,
    /// Per group: (block, index among the block's groups).
    of_group: Vec<(usize, usize)>,
    /// Per body: its block (`usize::MAX` when no group touches it).
    of_body: Vec<usize>,
    /// The storage [`Self::clear`] took from the blocks, lengths kept, for
    /// [`Self::add_body`] to reuse: a block's next `W`, or a body's next
    /// `W_b`, lands in memory already touched (no page faults, and no
    /// zeroing where every entry is written).
    spare: Vec<Vec<f64>>,
}

impl DelassusBlocks {
    /// Splits the groups into blocks of coupled groups over `bodies`
    /// bodies, `groups` giving the two bodies each group acts on (the same
    /// twice for one): two groups share a block when their bodies are
    /// joined by a chain of groups (union–find); blocks are ordered by
    /// their first group. Every block is left unbuilt.
    pub fn partition(&mut self, groups: impl Iterator<Item = (usize, usize)> + Clone, bodies: usize) {
        let mut parent: Vec<usize> = (0..bodies).collect();
        fn root(parent: &mut [usize], mut b: usize) -> usize {
            while parent[b] != b {
                parent[b] = parent[parent[b]];
                b = parent[b];
            }
            b
        }
        for (a, b) in groups.clone() {
            let (r0, r1) = (root(&mut parent, a), root(&mut parent, b));
            parent[r1.max(r0)] = r1.min(r0);
        }
        self.of_body.clear();
        self.of_body.resize(bodies, usize::MAX);
        let mut count = 0;
        self.of_group.clear();
        for (k, (a, _)) in groups.enumerate() {
            let r = root(&mut parent, a);
            if self.of_body[r] == usize::MAX {
                self.of_body[r] = count;
                count += 1;
                if self.blocks.len() < count {
                    self.blocks.push(DelassusBlock::default());
                }
                self.blocks[count - 1].groups.clear();
            }
            let block = &mut self.blocks[self.of_body[r]];
            self.of_group.push((self.of_body[r], block.groups.len()));
            block.groups.push(k);
        }
        self.blocks.truncate(count);
        for b in 0..bodies {
            self.of_body[b] = self.of_body[root(&mut parent, b)];
        }
        self.clear();
    }

    /// One block holding every one of `groups` groups in order, with `W`
    /// (row-major `3g × 3g`) to be written into the returned buffer: for a
    /// `W` that couples every group (the recursive corrective motion's).
    pub fn whole_mut(&mut self, groups: usize) -> &mut Vec<f64> {
        self.blocks.truncate(1);
        if self.blocks.is_empty() {
            self.blocks.push(DelassusBlock::default());
        }
        self.of_group.clear();
        self.of_group.extend((0..groups).map(|k| (0, k)));
        self.of_body.iter_mut().for_each(|b| *b = 0);
        if self.blocks[0].values.is_empty() {
            self.blocks[0].values = self.take_spare();
        }
        let block = &mut self.blocks[0];
        block.groups.clear();
        block.groups.extend(0..groups);
        block.drop_copies();
        &mut block.values
    }

    /// The largest storage [`Self::clear`] kept (contents unspecified),
    /// or none.
    fn take_spare(&mut self) -> Vec<f64> {
        match self.spare.is_empty() {
            true => Vec::new(),
            false => self.spare.remove(0),
        }
    }

    /// Forgets every block's `W` (the partition stays).
    pub fn clear(&mut self) {
        for block in &mut self.blocks {
            if block.values.capacity() > 0 {
                self.spare.push(std::mem::take(&mut block.values));
            }
            block.drop_copies();
        }
        // The largest first; no more than the blocks and one more to reuse.
        self.spare.sort_unstable_by_key(|v| std::cmp::Reverse(v.capacity()));
        self.spare.truncate(self.blocks.len() + 1);
    }

    /// Whether no block has been built.
    pub fn is_empty(&self) -> bool {
        self.blocks.iter().all(|b| b.values.is_empty())
    }

    /// The blocks, ordered by their first group.
    pub fn blocks(&self) -> &[DelassusBlock] {
        &self.blocks
    }

    /// The blocks, mutable (their `values` and rounded copies).
    pub fn blocks_mut(&mut self) -> &mut [DelassusBlock] {
        &mut self.blocks
    }

    /// `W` row-major over every row when one block holds all groups in
    /// order (one body, or bodies all in contact): `W` itself.
    pub fn whole(&self) -> Option<&[f64]> {
        match self.blocks.as_slice() {
            [only] if only.groups.len() == self.of_group.len() && !only.values.is_empty() => {
                Some(&only.values)
            }
            _ => None,
        }
    }

    /// Entries of `W` stored, over all blocks (`Σ_k (3 m_k)²`).
    pub fn stored(&self) -> usize {
        self.blocks.iter().map(|b| b.values.len()).sum()
    }

    /// `W[rows[i], rows[j]] += W_b[i, j]` for body `b` (`W_b` row-major
    /// over `rows`, world rows of `b`'s block; a self-contact lists a row
    /// once per side). A body alone in its block, its rows the block's in
    /// order, hands `wb` over instead (the sum would be `0 + W_b`, the same
    /// bits): `wb` then holds storage of an earlier `W` (contents
    /// unspecified), for reuse.
    pub fn add_body(&mut self, b: usize, rows: &[usize], wb: &mut Vec<f64>) {
        let k = self.of_body[b];
        let n = self.blocks[k].rows();
        let local: Vec<usize> = rows.iter().map(|&r| 3 * self.of_group[r / 3].1 + r % 3).collect();
        self.blocks[k].drop_copies();
        if self.blocks[k].values.is_empty() {
            if local.len() == n && local.iter().enumerate().all(|(i, &l)| i == l) {
                self.blocks[k].values = std::mem::replace(wb, self.take_spare());
                return;
            }
            self.blocks[k].values = zeroed(n * n, self.take_spare());
        }
        add_rows(&mut self.blocks[k].values, n, &local, wb);
    }

    /// `(block, row in the block)` of world row `r`.
    pub fn locate(&self, r: usize) -> (usize, usize) {
        let (k, i) = self.of_group[r / 3];
        (k, 3 * i + r % 3)
    }

    /// `W[i, j]` for world rows `i`, `j` (zero across blocks or unbuilt).
    pub fn entry(&self, i: usize, j: usize) -> f64 {
        let ((ki, li), (kj, lj)) = (self.locate(i), self.locate(j));
        let block = &self.blocks[ki];
        match ki == kj && !block.values.is_empty() {
            true => block.values[li * block.rows() + lj],
            false => 0.0,
        }
    }

    /// World rows of the problem (three per group).
    pub fn world_rows(&self) -> usize {
        3 * self.of_group.len()
    }

    /// `out = W v` over the world's rows (rows of unbuilt blocks: 0).
    pub fn times(&self, v: &[f64], out: &mut [f64]) {
        self.times_stored(|b| b.values.as_slice(), v, out)
    }

    /// `out = W v` read from the blocks' f32 copies (made by
    /// [`Self::round_to_single`]), sums in f64.
    pub fn times_single(&self, v: &[f64], out: &mut [f64]) {
        self.times_stored(|b| b.single.as_slice(), v, out)
    }

    /// `out = W v` with each block's `W` read from `stored(block)`: one
    /// product over the rows when a block holds them all in order, else
    /// per block over its rows gathered.
    fn times_stored<P: Stored>(
        &self,
        stored: impl Fn(&DelassusBlock) -> &[P] + Sync,
        v: &[f64],
        out: &mut [f64],
    ) {
        let product = |w: &[P], v: &[f64], out: &mut [f64]| {
            let n = v.len();
            out.par_iter_mut()
                .enumerate()
                .with_min_len(64)
                .for_each(|(i, o)| *o = P::dot(&w[i * n..(i + 1) * n], v));
        };
        if self.whole().is_some() {
            return product(stored(&self.blocks[0]), v, out);
        }
        out.iter_mut().for_each(|o| *o = 0.0);
        for block in self.blocks.iter().filter(|b| !b.values.is_empty()) {
            let local: Vec<f64> = block.world_rows().map(|r| v[r]).collect();
            let mut products = vec![0.0; local.len()];
            product(stored(block), &local, &mut products);
            block.world_rows().zip(products).for_each(|(r, p)| out[r] = p);
        }
    }

    /// `(W λ)` on the rows `r0..r0 + 3` of one group (zero when its block is
    /// unbuilt): the group's three rows in one pass over λ.
    pub fn group_times(&self, r0: usize, lambda: &[f64]) -> [f64; 3] {
        let (k, l0) = self.locate(r0);
        let block = &self.blocks[k];
        let n = block.rows();
        if block.values.is_empty() {
            return [0.0; 3];
        }
        let row = |i: usize| &block.values[(l0 + i) * n..(l0 + i + 1) * n];
        let d = match self.whole().is_some() {
            true => f64::dot4([row(0), row(1), row(2), row(2)], lambda),
            false => {
                let local: Vec<f64> = block.world_rows().map(|r| lambda[r]).collect();
                f64::dot4([row(0), row(1), row(2), row(2)], &local)
            }
        };
        [d[0], d[1], d[2]]
    }

    /// Rounds every block's `W` to f32 where its copy is missing (the
    /// reduced-precision reads of PGS and the conjugate residuals).
    /// On all threads: the copy of a large `W` is a pass over tens of MB.
    pub fn round_to_single(&mut self) {
        for block in &mut self.blocks {
            round_into(&block.values, &mut block.single, |v| v as f32);
        }
    }

    /// As [`Self::round_to_single`], to bfloat16: half the bytes again for
    /// PGS's sweeps, which at 60k vertices keep a 4,600-row `W` in the
    /// last-level cache instead of streaming it from memory 50 times a step.
    pub fn round_to_bfloat16(&mut self) {
        for block in &mut self.blocks {
            round_into(&block.values, &mut block.bfloat16, Bf16::from_f64);
        }
    }

    /// `W` row-major over all `c` world rows (zero across blocks): for a
    /// consumer that needs it whole (the device's solver, tests).
    pub fn to_dense(&self) -> Vec<f64> {
        if let Some(w) = self.whole() {
            return w.to_vec();
        }
        let c = 3 * self.of_group.len();
        let mut w = vec![0.0; c * c];
        for block in self.blocks.iter().filter(|b| !b.values.is_empty()) {
            let rows: Vec<usize> = block.world_rows().collect();
            for (i, &r) in rows.iter().enumerate() {
                let src = &block.values[i * rows.len()..(i + 1) * rows.len()];
                rows.iter().zip(src).for_each(|(&q, &x)| w[r * c + q] = x);
            }
        }
        w
    }
}

/// Fewest entries per task of a pass over a block's storage
/// ([`zeroed`], [`round_into`]).
const TASK_ENTRIES: usize = 1 << 16;

/// `copy = round(values)` entry by entry where `copy` is missing (empty),
/// extended in place on all threads.
fn round_into<P: Send>(values: &[f64], copy: &mut Vec<P>, round: impl Fn(f64) -> P + Sync + Send) {
    if copy.is_empty() {
        copy.par_extend(values.par_iter().with_min_len(TASK_ENTRIES).map(|&v| round(v)));
    }
}

/// `len` zeros in `storage` (its allocation reused), written side by side.
fn zeroed(len: usize, mut storage: Vec<f64>) -> Vec<f64> {
    storage.truncate(len);
    storage.par_iter_mut().with_min_len(TASK_ENTRIES).for_each(|x| *x = 0.0);
    storage.resize(len, 0.0);
    storage
}

/// `W[rows[i], rows[j]] += W_b[i, j]` (`W` row-major `c × c`, `W_b`
/// row-major over `rows`): its rows side by side when `rows` are
/// distinct; in order otherwise (a self-contact lists a row once per side).
fn add_rows(w: &mut [f64], c: usize, rows: &[usize], wb: &[f64]) {
    let m = rows.len();
    let mut of_row = vec![usize::MAX; c];
    let distinct = rows.iter().enumerate().all(|(i, &g)| std::mem::replace(&mut of_row[g], i) == usize::MAX);
    if !distinct {
        for (i, &gi) in rows.iter().enumerate() {
            for (j, &gj) in rows.iter().enumerate() {
                w[gi * c + gj] += wb[i * m + j];
            }
        }
        return;
    }
    w.par_chunks_mut(c.max(1)).zip(&of_row).filter(|(_, &i)| i != usize::MAX).for_each(|(wr, &i)| {
        for (&gj, &x) in rows.iter().zip(&wb[i * m..(i + 1) * m]) {
            wr[gj] += x;
        }
    });
}
