//! Sparse LDLᵀ of a symmetric positive definite matrix: ordering, symbolic
//! analysis once per pattern, numeric factorization per matrix (faer's
//! supernodal LDLᵀ), with the factor exposed as a unit-lower CSC `L`, a
//! diagonal `D`, the permutation and the elimination tree, so that
//! triangular solves can visit only what they must (zeng2022 §3.4, §4.2).

pub mod etree;
mod isodof;
mod isodof_cache;
mod isodof_cost;
mod isodof_values;
mod layout;
mod narrow;
pub mod ordering;
mod panel_kernels;
mod rounded;
mod solve;
mod solve_plan;
mod sparse_inverse;
mod supernodal_solve;
mod values;

use std::sync::Arc;
use std::time::Instant;

use faer::dyn_stack::{MemBuffer, MemStack};
use faer::perm::PermRef;
use faer::sparse::linalg::cholesky::{
    factorize_symbolic_cholesky, CholeskySymbolicParams, LdltRef, SymbolicCholesky, SymbolicCholeskyRaw,
    SymmetricOrdering,
};
use faer::sparse::linalg::{SupernodalThreshold, SymbolicSupernodalParams};
use faer::sparse::{SparseColMatRef, SymbolicSparseColMatRef};
use faer::{Par, Side};

pub use isodof::IsodofColumns;
pub use isodof_cache::{IsodofCache, IsodofReuse};
pub use isodof_cost::{reach as isodof_reach, IsodofCost, Span as IsodofSpan};
pub use isodof_values::SlotValues;
pub use layout::SupernodeLayout;
pub use ordering::Ordering;
pub use solve::{PathScratch, SparseColumn};
pub use solve_plan::SolvePlan;
pub use sparse_inverse::{SparseInverse, SparseInverseScratch};

use crate::{CsrMatrix, CsrPattern, LinalgError};

/// Everything that depends only on the sparsity pattern: permutation, faer's
/// supernodal structure, the CSC pattern of `L` and the elimination tree.
#[derive(Debug)]
pub struct LdltSymbolic {
    n: usize,
    /// New index `k` ↦ old index `perm[k]` (`P A Pᵀ` has `(P A Pᵀ)ₖₗ = A_{perm[k], perm[l]}`).
    pub perm: Vec<usize>,
    /// Old index ↦ new index.
    pub perm_inv: Vec<usize>,
    col_ptr: Vec<usize>,
    row_idx: Vec<usize>,
    faer: SymbolicCholesky<usize>,
    /// Column starts of `L`'s strictly lower part (CSC, permuted numbering).
    pub l_col_ptr: Vec<usize>,
    /// Row indices of `L`'s strictly lower part, sorted per column: made on
    /// first use ([`Self::l_row_idx`]), since only the column-wise readers
    /// need them (4 bytes per entry of `L`: 0.7 GB for the 60k drop's
    /// factor, which the supernodal sweeps and the isodof builders never read).
    l_row_idx: std::sync::OnceLock<Vec<u32>>,
    /// Where `D_cc` lies in the supernodal values; column `c` of `L`
    /// below the diagonal follows it contiguously (its rows are those of
    /// `l_row_idx`), so `L` is read in place, never copied.
    d_src: Vec<usize>,
    /// Elimination tree of the stored factor: parent of each column, or [`etree::NONE`].
    pub parent: Vec<usize>,
    /// A postorder of the elimination tree.
    pub postorder: Vec<usize>,
    /// The supernodes of the stored factor.
    pub supernodes: SupernodeLayout,
    /// How one-vector solves split the supernodal tree between threads.
    pub solve_plan: SolvePlan,
    /// Milliseconds spent computing the ordering.
    pub ordering_ms: f64,
    ordering: Ordering,
    /// Milliseconds spent in the symbolic analysis (after ordering).
    pub symbolic_ms: f64,
}

/// The precision a factor is read in by a solve.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Precision {
    /// The factor as computed.
    #[default]
    Double,
    /// Its copy rounded to `f32` (half the bytes; vectors and arithmetic in `f64`).
    Single,
    /// Its copy rounded to bfloat16 ([`Bf16`]: a quarter of the bytes, 8
    /// significant bits; vectors and arithmetic in `f64`): for a
    /// preconditioner only.
    ///
    /// [`Bf16`]: crate::simd::Bf16
    Bfloat16,
    /// Its copy in 8-bit integers, each block of 128 rows of a column of
    /// `L` times its own power-of-two scale (about an eighth of the bytes;
    /// an entry within half its scale, 2⁻⁸ of its block's largest; vectors
    /// and arithmetic in `f64`): for a preconditioner only.
    Int8,
}

impl Precision {
    /// Whether this is the precision of a copy fit for a preconditioner
    /// only ([`Self::Bfloat16`], [`Self::Int8`]).
    pub fn preconditioner_only(self) -> bool {
        matches!(self, Precision::Bfloat16 | Precision::Int8)
    }
}

/// How the symbolic analysis treats supernodes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Supernodes {
    /// faer's default relaxed amalgamation: faster, `L` stores a few explicit zeros.
    #[default]
    Relaxed,
    /// Fundamental supernodes only: `L`'s stored pattern is exactly its structure.
    Fundamental,
}

impl LdltSymbolic {
    /// Orders and analyses a symmetric pattern; `block` is the number of
    /// DOFs per graph vertex used by nested dissection (3 for FEM).
    pub fn analyze(p: &CsrPattern, ordering: Ordering, block: usize) -> Result<Self, LinalgError> {
        Self::analyze_with(p, ordering, block, Supernodes::Relaxed)
    }

    /// As [`Self::analyze`], choosing the supernode amalgamation.
    pub fn analyze_with(
        p: &CsrPattern,
        ordering: Ordering,
        block: usize,
        supernodes: Supernodes,
    ) -> Result<Self, LinalgError> {
        if ordering == Ordering::Auto {
            let nd = Self::analyze_with(p, Ordering::NestedDissection, block, supernodes)?;
            let amd = Self::analyze_with(p, Ordering::Amd, block, supernodes)?;
            let spent = nd.ordering_ms + nd.symbolic_ms + amd.ordering_ms + amd.symbolic_ms;
            let mut best = if nd.factor_flops() <= amd.factor_flops() { nd } else { amd };
            best.symbolic_ms = spent - best.ordering_ms;
            return Ok(best);
        }
        let n = p.nrows;
        if p.ncols != n || block == 0 || !n.is_multiple_of(block) {
            return Err(LinalgError::Dimension(format!("{n}×{} pattern with block {block}", p.ncols)));
        }
        let col_ptr = p.row_ptr.clone();
        let row_idx: Vec<usize> = p.col_idx.iter().map(|&c| c as usize).collect();
        let t = Instant::now();
        let custom = match ordering {
            Ordering::NestedDissection => {
                let (xadj, adj) = ordering::block_graph(p, block);
                let fwd = ordering::expand_blocks(&ordering::nested_dissection(&xadj, &adj)?, block);
                Some(postordered(p, fwd))
            }
            Ordering::Amd | Ordering::Auto => None,
        };
        let ordering_ms = t.elapsed().as_secs_f64() * 1e3;
        let t = Instant::now();
        let a = SymbolicSparseColMatRef::new_checked(n, n, &col_ptr, None, &row_idx);
        let faer = faer_symbolic(a, custom.as_ref(), supernodes)?;
        let ordering_ms = ordering_ms + if custom.is_none() { t.elapsed().as_secs_f64() * 1e3 } else { 0.0 };
        let (perm, perm_inv) = match faer.perm() {
            Some(pr) => {
                let (f, i) = pr.arrays();
                (f.to_vec(), i.to_vec())
            }
            None => ((0..n).collect(), (0..n).collect()),
        };
        let mut s = LdltSymbolic {
            n,
            perm,
            perm_inv,
            col_ptr,
            row_idx,
            faer,
            l_col_ptr: Vec::new(),
            l_row_idx: std::sync::OnceLock::new(),
            d_src: Vec::new(),
            parent: Vec::new(),
            postorder: Vec::new(),
            supernodes: SupernodeLayout::default(),
            solve_plan: SolvePlan::default(),
            ordering_ms,
            ordering,
            symbolic_ms: 0.0,
        };
        s.extract_l_pattern()?;
        s.parent = s.column_parents();
        s.postorder = etree::postorder(&s.parent);
        s.solve_plan = SolvePlan::new(&s.supernodes);
        s.symbolic_ms = t.elapsed().as_secs_f64() * 1e3;
        Ok(s)
    }

    /// Dimension.
    pub fn n(&self) -> usize {
        self.n
    }

    /// Stored entries of `L` below the diagonal.
    pub fn nnz_l(&self) -> usize {
        self.l_col_ptr[self.n]
    }

    /// Entries of the sparse inverse `S = L⁻¹` ([`crate::SparseInverse`]),
    /// diagonal included, without building it: column `j` holds `j` and its
    /// etree ancestors (zeng2025 Theorem 1), so this is the sum of the path
    /// lengths, one pass from the roots down (a parent's index exceeds its
    /// child's).
    pub fn nnz_inverse(&self) -> usize {
        let mut depth = vec![0usize; self.n];
        for j in (0..self.n).rev() {
            depth[j] = 1 + self.parent.get(j).and_then(|&p| depth.get(p)).copied().unwrap_or(0);
        }
        depth.iter().sum()
    }

    /// The elimination tree of the stored factor: column `c`'s parent is
    /// its first row below the diagonal (`c + 1` inside its supernode,
    /// then the first row of the supernode's pattern).
    fn column_parents(&self) -> Vec<usize> {
        let sn = &self.supernodes;
        (0..self.n)
            .map(|c| {
                let s = sn.of_column[c] as usize;
                match c + 1 < sn.begin[s + 1] {
                    true => c + 1,
                    false => sn.pattern(s).first().map_or(etree::NONE, |&r| r as usize),
                }
            })
            .collect()
    }

    /// The ordering that was used (`Auto` resolves to one of the others).
    pub fn ordering(&self) -> Ordering {
        self.ordering
    }

    /// Row indices of `L`'s strictly lower part, sorted per column
    /// (column `c`'s at `l_col_ptr[c]..l_col_ptr[c + 1]`): rows `c+1..c1`
    /// of its supernode `[c0, c1)`, then the supernode's pattern. Made on
    /// the first call.
    pub fn l_row_idx(&self) -> &[u32] {
        self.l_row_idx.get_or_init(|| {
            let sn = &self.supernodes;
            let mut idx = Vec::with_capacity(self.l_col_ptr[self.n]);
            for s in 0..sn.begin.len() - 1 {
                let (c0, c1) = (sn.begin[s], sn.begin[s + 1]);
                for c in c0..c1 {
                    idx.extend((c + 1..c1).map(|r| r as u32));
                    idx.extend_from_slice(sn.pattern(s));
                }
            }
            idx
        })
    }

    /// Flop estimate of a numeric factorization, `Σⱼ nnz(L:,j)²`.
    pub fn factor_flops(&self) -> f64 {
        self.l_col_ptr.windows(2).map(|w| ((w[1] - w[0]) as f64).powi(2)).sum()
    }

    /// Reads the supernodes: column `c` of supernode `[c0, c1)` has rows
    /// `c+1..c1` of the dense diagonal block, then the supernode's pattern.
    fn extract_l_pattern(&mut self) -> Result<(), LinalgError> {
        let SymbolicCholeskyRaw::Supernodal(sn) = self.faer.raw() else {
            return Err(LinalgError::Factorization("expected a supernodal analysis".into()));
        };
        let (begin, end) = (sn.supernode_begin(), sn.supernode_end());
        let (rptr, vptr, rows) = (sn.col_ptr_for_row_idx(), sn.col_ptr_for_val(), sn.row_idx());
        self.l_col_ptr = vec![0; self.n + 1];
        self.d_src = vec![0; self.n];
        let layout = &mut self.supernodes;
        layout.begin = begin.to_vec();
        layout.begin.push(self.n);
        layout.pattern_ptr = rptr[..=sn.n_supernodes()].to_vec();
        layout.pattern = rows[..rptr[sn.n_supernodes()]].iter().map(|&r| r as u32).collect();
        layout.value_ptr = vptr[..sn.n_supernodes()].to_vec();
        layout.of_column = vec![0; self.n];
        for s in 0..sn.n_supernodes() {
            let (c0, c1) = (begin[s], end[s]);
            layout.of_column[c0..c1].iter_mut().for_each(|x| *x = s as u32);
            let q = rptr[s + 1] - rptr[s];
            let nrows = (c1 - c0) + q;
            for c in c0..c1 {
                let k = c - c0;
                self.d_src[c] = vptr[s] + k * nrows + k;
                self.l_col_ptr[c + 1] = self.l_col_ptr[c] + (c1 - c - 1) + q;
            }
        }
        let layout = &mut self.supernodes;
        layout.parent = (0..sn.n_supernodes())
            .map(|s| {
                layout.pattern(s).first().map_or(etree::NONE, |&r| layout.of_column[r as usize] as usize)
            })
            .collect();
        let order = etree::postorder(&layout.parent);
        layout.postorder_rank = vec![0; order.len()];
        order.iter().enumerate().for_each(|(rank, &s)| layout.postorder_rank[s] = rank as u32);
        Ok(())
    }
}

/// Composes `fwd` with a postorder of the elimination tree of `P A Pᵀ`.
/// METIS's ordering is not postordered; faer finds supernodes only among
/// consecutive columns, so without this the nested-dissection factor
/// fragments into many small supernodes.
fn postordered(p: &CsrPattern, fwd: Vec<usize>) -> (Vec<usize>, Vec<usize>) {
    let inverse = |f: &[usize]| {
        let mut inv = vec![0; f.len()];
        f.iter().enumerate().for_each(|(k, &o)| inv[o] = k);
        inv
    };
    let inv = inverse(&fwd);
    let parent = etree::from_matrix(&p.row_ptr, &p.col_idx, &fwd, &inv);
    let post: Vec<usize> = etree::postorder(&parent).into_iter().map(|k| fwd[k]).collect();
    let post_inv = inverse(&post);
    (post, post_inv)
}

/// A numeric LDLᵀ factorization `P A Pᵀ = L D Lᵀ`.
#[derive(Debug, Clone)]
pub struct Ldlt {
    symbolic: Arc<LdltSymbolic>,
    supernodal: values::DoubleValues,
    /// `supernodal` rounded to `f32`, when kept ([`Self::keep_single_precision`]).
    single: Option<Vec<f32>>,
    /// `supernodal` rounded for a preconditioner (bfloat16 or 8-bit), when
    /// kept ([`Self::keep_rounded`], [`Self::round_copy`], which also takes
    /// it from the factor it replaces through a shared reference).
    rounded: values::ReleasableCopy<rounded::Rounded>,
    /// Whether `supernodal` was released after rounding
    /// ([`Self::release_double`]): the single-precision copy is then the
    /// finest one.
    released: bool,
    /// The diagonal `D`.
    pub d: Vec<f64>,
    /// Milliseconds the numeric factorization took.
    pub numeric_ms: f64,
}

impl Ldlt {
    /// Factorizes `a` (whose pattern was analysed by `symbolic`).
    pub fn factorize(symbolic: Arc<LdltSymbolic>, a: &CsrMatrix) -> Result<Ldlt, LinalgError> {
        let mut f = Ldlt {
            supernodal: values::DoubleValues::zeros(symbolic.faer.len_val()),
            single: None,
            rounded: Default::default(),
            released: false,
            d: vec![0.0; symbolic.n],
            numeric_ms: 0.0,
            symbolic,
        };
        f.refactorize(a)?;
        Ok(f)
    }

    /// Factorizes `a` in single precision (faer's supernodal LDLᵀ on `f32`
    /// values): the factor holds its `f32` values only, and a preconditioner
    /// copy rounded from them to `rounded` when given ([`Self::keep_rounded`]),
    /// as one whose doubles were released
    /// ([`Self::release_double`]), but it never holds doubles: 4 bytes an
    /// entry while it is computed instead of 8 (the real-time 60k drop's
    /// background factorization, 1.7 GB in double beside the factor in
    /// use). Its error is single precision's through the elimination, not
    /// only the rounding of a double factor: for factors that stand in for
    /// later matrices anyway (warped, refreshed in the background).
    pub fn factorize_single(
        symbolic: Arc<LdltSymbolic>,
        a: &CsrMatrix,
        rounded: Option<Precision>,
    ) -> Result<Ldlt, LinalgError> {
        let t = Instant::now();
        let s = &*symbolic;
        s.check_values(a)?;
        let values: Vec<f32> = a.values.iter().map(|&v| v as f32).collect();
        let mut single = vec![0.0f32; s.faer.len_val()];
        numeric_ldlt(s, &values, &mut single)?;
        let d: Vec<f64> = s.d_src.iter().map(|&i| f64::from(single[i])).collect();
        positive_pivots(&d, " in single precision")?;
        let rounded = rounded.map(|p| rounded::Rounded::round(p, &single, &s.supernodes, None));
        Ok(Ldlt {
            supernodal: values::DoubleValues::default(),
            single: Some(single),
            rounded: values::ReleasableCopy::new(rounded),
            released: true,
            d,
            numeric_ms: t.elapsed().as_secs_f64() * 1e3,
            symbolic,
        })
    }

    /// Numeric factorization of new values with the same pattern, reusing storage.
    pub fn refactorize(&mut self, a: &CsrMatrix) -> Result<(), LinalgError> {
        let t = Instant::now();
        let s = &*self.symbolic;
        s.check_values(a)?;
        if self.released {
            self.supernodal = values::DoubleValues::zeros(s.faer.len_val());
        }
        numeric_ldlt(s, &a.values, self.supernodal.get_mut())?;
        for (dst, &src) in self.d.iter_mut().zip(&s.d_src) {
            *dst = self.supernodal.get()[src];
        }
        positive_pivots(&self.d, "")?;
        if let Some(p) = self.rounded_precision() {
            // Rounded into its own storage unless a clone of the factor shares it.
            let reuse = self.rounded.take();
            self.rounded.set(rounded::Rounded::round(p, self.supernodal.get(), &s.supernodes, reuse));
        }
        if self.released {
            self.round_in_place();
        } else if let Some(single) = &mut self.single {
            single.iter_mut().zip(self.supernodal.get()).for_each(|(s, &v)| *s = v as f32);
        }
        self.numeric_ms = t.elapsed().as_secs_f64() * 1e3;
        Ok(())
    }

    /// The symbolic part.
    pub fn symbolic(&self) -> &Arc<LdltSymbolic> {
        &self.symbolic
    }

    /// Column `c` of `L` below the diagonal, its rows those of
    /// `symbolic().l_row_idx()[l_col_ptr[c]..l_col_ptr[c + 1]]`: read in place
    /// from the supernodal values (no elementwise copy of `L` is kept).
    ///
    /// # Panics
    /// If the double-precision values were released ([`Self::release_double`]).
    #[inline]
    pub fn l_column(&self, c: usize) -> &[f64] {
        assert!(!self.released, "l_column: the factor keeps only its single-precision copy");
        &self.supernodal.get()[self.l_range(c)]
    }

    /// Where column `c` of `L` below the diagonal lies in the supernodal values.
    fn l_range(&self, c: usize) -> std::ops::Range<usize> {
        let s = &*self.symbolic;
        let start = s.d_src[c] + 1;
        start..start + (s.l_col_ptr[c + 1] - s.l_col_ptr[c])
    }

    /// [`Self::l_column`] in double precision whatever the factor keeps: in
    /// place, or widened into `scratch` from the single-precision copy
    /// once the double values are released ([`Self::release_double`]).
    pub fn l_column_in<'a>(&'a self, c: usize, scratch: &'a mut Vec<f64>) -> &'a [f64] {
        if !self.released {
            return self.l_column(c);
        }
        let single = &self.single_values("l_column_in")[self.l_range(c)];
        scratch.clear();
        scratch.extend(single.iter().map(|&v| f64::from(v)));
        scratch
    }

    /// The panel of supernode `s`: `(w + q) × w` column-major, the strict
    /// lower part of its top `w × w` block is `L_ss` (unit diagonal implied,
    /// the stored diagonal is `D`), the `q` rows below are `L_bs`.
    ///
    /// # Panics
    /// If the double-precision values were released ([`Self::release_double`]).
    pub fn panel(&self, s: usize) -> faer::MatRef<'_, f64> {
        assert!(!self.released, "panel: the factor keeps only its single-precision copy");
        let sn = &self.symbolic.supernodes;
        let (w, q) = (sn.width(s), sn.pattern(s).len());
        faer::MatRef::from_column_major_slice(self.panel_values(self.supernodal.get(), s), w + q, w)
    }

    /// Rounds the values to single precision in place and drops the
    /// double ones, now and after every later [`Self::refactorize`] (after
    /// the bfloat16 copy, when kept, is rounded from them): the factor then
    /// takes 4 bytes per entry (6 with a bfloat16 copy) instead of 8–14,
    /// and never holds a double and a single copy at once. Every solve and
    /// the isodof builders (a few panel columns widened at a time) read
    /// the `f32` copy: the exact computation with the rounded factor, as
    /// [`Precision::Single`]. For a factor that stands in for a later
    /// matrix anyway (the real-time preset's warped, asynchronously
    /// refreshed one), whose own error is far above the rounding's.
    pub fn release_double(&mut self) {
        if !self.released {
            self.released = true;
            self.round_in_place();
        }
    }

    /// The double values rounded to the single-precision copy in their own
    /// buffer, which they leave.
    fn round_in_place(&mut self) {
        self.single = Some(std::mem::take(&mut self.supernodal).into_single());
    }

    /// Whether [`Self::release_double`] dropped the double-precision values.
    pub fn double_released(&self) -> bool {
        self.released
    }

    /// `precision`, or single where double was asked of a factor that
    /// released it.
    fn available(&self, precision: Precision) -> Precision {
        match precision {
            Precision::Double if self.released => Precision::Single,
            p => p,
        }
    }

    /// The values of [`Self::panel`], column-major, within `values` (the
    /// factor's supernodal values or their single-precision copy).
    fn panel_values<'a, P>(&self, values: &'a [P], s: usize) -> &'a [P] {
        let sn = &self.symbolic.supernodes;
        let start = sn.value_ptr[s];
        &values[start..start + (sn.width(s) + sn.pattern(s).len()) * sn.width(s)]
    }

    /// Bytes one sweep of the supernodal solve reads from the factor: the
    /// panels' values and their row patterns (a forward and a backward
    /// sweep read it twice).
    pub fn sweep_bytes(&self) -> usize {
        let sn = &self.symbolic.supernodes;
        let bytes = if self.released { 4 } else { 8 };
        bytes * self.symbolic.faer.len_val()
            + 4 * sn.pattern.len()
            + 8 * (sn.begin.len() + sn.pattern_ptr.len())
    }

    /// Keeps (`true`) or drops a single-precision copy of the factor for
    /// [`Self::solve_one_in`] with [`Precision::Single`]: a preconditioner
    /// whose applications read half the bytes. Refreshed by every
    /// [`Self::refactorize`] while kept.
    ///
    /// # Panics
    /// If asked to drop the copy of a factor that released its double values.
    pub fn keep_single_precision(&mut self, keep: bool) {
        assert!(keep || !self.released, "keep_single_precision: the copy is the factor's only values");
        if !self.released {
            self.single = keep.then(|| self.supernodal.get().iter().map(|&v| v as f32).collect());
        }
    }

    /// Keeps a copy of the factor rounded to `precision` ([`Precision::Bfloat16`]
    /// or [`Precision::Int8`]), or none, for [`Self::solve_one_in`] in that
    /// precision: a preconditioner whose applications read a quarter or an
    /// eighth of the bytes. Refreshed by every [`Self::refactorize`] while kept.
    ///
    /// # Panics
    /// If the double-precision values were released (the copy is rounded
    /// from them), or `precision` is not one for a preconditioner only.
    pub fn keep_rounded(&mut self, precision: Option<Precision>) {
        assert!(
            !(precision.is_some() && self.released),
            "keep_rounded: rounded from the released double values"
        );
        self.rounded = values::ReleasableCopy::default();
        if let Some(p) = precision {
            self.round_copy(p, None);
        }
    }

    /// The precision of the preconditioner copy kept, if any.
    pub fn rounded_precision(&self) -> Option<Precision> {
        self.rounded.get().map(|c| c.precision())
    }

    /// Makes the preconditioner copy in `precision` from the finest values
    /// kept (double, or single once released), through a shared reference
    /// and on every thread. A factor computed in the background gets it
    /// from the one it replaces, `previous`: its copy is released, and its
    /// storage (the same length: one symbolic analysis) rounded into in
    /// place, so that the two copies are never held together and no memory
    /// is faulted in anew (at 60k vertices 421 MB in bfloat16: 0.21 s
    /// rounded into fresh pages).
    ///
    /// # Panics
    /// If `precision` is not one for a preconditioner only.
    pub fn round_copy(&self, precision: Precision, previous: Option<&Ldlt>) {
        let reuse = previous.and_then(|p| p.rounded.take());
        let layout = &self.symbolic.supernodes;
        let copy = match &self.single {
            Some(single) if self.released => rounded::Rounded::round(precision, single, layout, reuse),
            _ => rounded::Rounded::round(precision, self.supernodal.get(), layout, reuse),
        };
        self.rounded.set(copy);
    }

    /// The precision of the lightest copy of the factor kept that is fit
    /// for a solve rather than a preconditioner: single when
    /// [`Self::keep_single_precision`] keeps one, double otherwise (a
    /// bfloat16 copy is never chosen).
    pub fn lightest_precision(&self) -> Precision {
        if self.single.is_some() {
            Precision::Single
        } else {
            Precision::Double
        }
    }

    /// Solves `A X = B` in place for `ncols` right-hand sides stored
    /// column-major: one by [`Self::solve_one`], several by faer's blocked solve.
    /// (A factor that released its double values solves each by
    /// [`Self::solve_one`] in single precision.)
    pub fn solve_in_place(&self, b: &mut [f64], ncols: usize) {
        if self.released {
            b.chunks_exact_mut(self.symbolic.n.max(1)).for_each(|c| self.solve_one(c));
        } else if ncols == 1 {
            self.solve_one(b);
        } else {
            self.solve_in_place_faer(b, ncols);
        }
    }

    /// Solves `A X = B` in place by faer's supernodal solve (the reference
    /// [`Self::solve_one`] is checked and benchmarked against).
    ///
    /// # Panics
    /// If the double-precision values were released.
    pub fn solve_in_place_faer(&self, b: &mut [f64], ncols: usize) {
        assert!(!self.released, "solve_in_place_faer: the factor keeps only its single-precision copy");
        let s = &*self.symbolic;
        let par = if ncols > 1 { Par::rayon(0) } else { Par::Seq };
        let mut mem = MemBuffer::new(s.faer.solve_in_place_scratch::<f64>(ncols, par));
        let rhs = faer::MatMut::from_column_major_slice_mut(b, s.n, ncols);
        LdltRef::new(&s.faer, self.supernodal.get()).solve_in_place_with_conj(
            faer::Conj::No,
            rhs,
            par,
            MemStack::new(&mut mem),
        );
    }
}

/// faer's supernodal symbolic Cholesky of `a` (upper triangle) in the
/// `custom` order, else faer's AMD; `supernodes` says whether faer may
/// relax them.
fn faer_symbolic(
    a: SymbolicSparseColMatRef<'_, usize>,
    custom: Option<&(Vec<usize>, Vec<usize>)>,
    supernodes: Supernodes,
) -> Result<SymbolicCholesky<usize>, LinalgError> {
    let n = a.nrows();
    let ord = match custom {
        Some((f, i)) => SymmetricOrdering::Custom(PermRef::new_checked(f, i, n)),
        None => SymmetricOrdering::Amd,
    };
    let params = CholeskySymbolicParams {
        supernodal_flop_ratio_threshold: SupernodalThreshold::FORCE_SUPERNODAL,
        supernodal_params: SymbolicSupernodalParams {
            relax: match supernodes {
                Supernodes::Relaxed => SymbolicSupernodalParams::default().relax,
                Supernodes::Fundamental => None,
            },
        },
        ..Default::default()
    };
    factorize_symbolic_cholesky(a, Side::Upper, ord, params)
        .map_err(|e| LinalgError::Factorization(format!("symbolic analysis: {e:?}")))
}

/// `Err` naming the first pivot of `d` that is not positive and finite
/// (`precision`: how it was computed, for the message).
fn positive_pivots(d: &[f64], precision: &str) -> Result<(), LinalgError> {
    match d.iter().position(|d| !(d.is_finite() && *d > 0.0)) {
        Some(j) => Err(LinalgError::Factorization(format!(
            "pivot {j} is {}{precision} (matrix not positive definite)",
            d[j]
        ))),
        None => Ok(()),
    }
}

impl LdltSymbolic {
    /// `Err` unless `a` has the analysed pattern's size and entries.
    fn check_values(&self, a: &CsrMatrix) -> Result<(), LinalgError> {
        match a.values.len() == self.row_idx.len() && a.nrows() == self.n {
            true => Ok(()),
            false => Err(LinalgError::Dimension("matrix does not match the analysed pattern".into())),
        }
    }
}

/// faer's supernodal numeric LDLᵀ of `a` (values in the analysed pattern,
/// upper triangle) into the supernodal values `l`, in `T`'s precision.
fn numeric_ldlt<T: faer::traits::ComplexField>(
    s: &LdltSymbolic,
    a: &[T],
    l: &mut [T],
) -> Result<(), LinalgError> {
    let a_ref =
        SparseColMatRef::new(SymbolicSparseColMatRef::new_checked(s.n, s.n, &s.col_ptr, None, &s.row_idx), a);
    let par = Par::rayon(0);
    let mut mem = MemBuffer::new(s.faer.factorize_numeric_ldlt_scratch::<T>(par, Default::default()));
    let stack = MemStack::new(&mut mem);
    s.faer
        .factorize_numeric_ldlt(l, a_ref, Side::Upper, Default::default(), par, stack, Default::default())
        .map(|_| ())
        .map_err(|e| {
            LinalgError::Factorization(format!("numeric LDLᵀ ({}): {e:?}", std::any::type_name::<T>()))
        })
}

#[cfg(test)]
mod tests;
