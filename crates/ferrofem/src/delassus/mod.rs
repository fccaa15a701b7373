//! The Delassus operator `W = H A⁻¹ Hᵀ` (zeng2022 eq. 12), built per body
//! from its LDLᵀ factor by one of several methods that all give the same
//! matrix: [`dense`] (Algorithm 1), [`isodof`] (Algorithm 3), [`isodof_reuse`]
//! (§5) — or left unbuilt ([`MixedDelassus`], Algorithm 2). `auto` picks the
//! cheapest for the step with the flop model of [`predict`].

mod apart;
mod blocks;
mod buffers;
mod dense;
mod device;
mod factored;
pub use device::DeviceDelassus;
mod isodof;
mod kronecker;
mod method;
mod operator;
mod record;
mod unbuilt;

use std::sync::Arc;

use ferrofem_linalg::ldlt::{IsodofCache, IsodofColumns, IsodofCost, IsodofReuse};
use ferrofem_linalg::{CsrMatrix, Ldlt, SparseInverse};
use rayon::prelude::*;

use crate::constraint::Compliance;
use crate::device::DeviceError;

pub use apart::{worth_keeping_apart, ApartDelassus, APART_SHARE};
pub use blocks::{DelassusBlock, DelassusBlocks};
pub use buffers::DelassusBuffers;
pub use dense::dense;
pub use factored::FactoredDelassus;
pub use isodof::{expand, isodof, isodof_reuse, isodofs, SlotMatrix};
pub use kronecker::{isovertices, kronecker_isodof, kronecker_isodof_reuse, kronecker_sparse_inverse};
pub use method::DelassusMethod;
pub use operator::Delassus;
pub use record::{DelassusCosts, DelassusRecord};
pub use unbuilt::{MixedDelassus, UnbuiltBody};

/// One body's Delassus workspace: the buffers, the isodof cache (kept
/// while the factor is unchanged) and how `W_b` was obtained this step.
#[derive(Debug, Default)]
pub struct DelassusWorkspace {
    /// Isodof solves kept while the factor is unchanged (`isodof-reuse`).
    pub cache: IsodofCache,
    /// Buffers of the builds, reused from step to step.
    pub buffers: DelassusBuffers,
    /// How `W_b` was obtained this step (`None`: no row touched the body).
    pub record: Option<DelassusRecord>,
    /// `W̄` built on the GPU (`[simulation] device = "gpu"`).
    device: Option<DeviceDelassus>,
    /// The factor handed over to (set by the integrator for the step's
    /// first build; `None` outside a handover).
    pub successor: Option<Successor>,
    /// The successor's isodof columns, solved a share per step.
    next: IsodofCache,
}

/// A factor the constraints move to in `steps_left` steps (implicit
/// Euler's `refresh.handover`): each build solves a share of its isodof
/// columns ahead, `⌈missing / steps_left⌉`, so that none is missing when it
/// takes over; the build that first sees it as the compliance's factor
/// adopts them as its cache.
#[derive(Debug, Clone)]
pub struct Successor {
    /// The new factor.
    pub factor: Arc<Ldlt>,
    /// Builds (steps) before it takes over, at least 1.
    pub steps_left: usize,
}

impl DelassusWorkspace {
    /// Builds `W̄` on `backend`'s device from now on (implicit Euler under
    /// `[simulation] device = "gpu"`): `isodof` becomes the device's
    /// isodof build (recorded as `isodof-gpu`), `auto` and `isodof-reuse`
    /// its cached build (`isodof-reuse-gpu`); `dense` and `unbuilt` stay on
    /// the CPU as named.
    pub fn on_device(&mut self, backend: crate::device::SharedBackend) {
        self.device = Some(DeviceDelassus::new(backend));
    }

    /// `scale · W_b`, `W_b = H_b A_b⁻¹ H_bᵀ`, by `method` (`auto`: the
    /// cheapest predicted, with `sweeps` expected solver sweeps; never
    /// `unbuilt` when `assembled`), into [`DelassusBuffers`]' `W` (row-major);
    /// an empty slice when the method leaves it unbuilt. A
    /// compliance of `A_s ⊗ I₃` (local-global) is built on its scalar
    /// factor ([`kronecker_isodof_reuse`] unless `dense` or `isodof` is
    /// named: its factor is constant, so the cache never goes stale).
    pub fn build(
        &mut self,
        compliance: &Compliance,
        h: &CsrMatrix,
        method: DelassusMethod,
        sweeps: f64,
        assembled: bool,
        scale: f64,
    ) -> Result<&[f64], DeviceError> {
        if let Some(f) = compliance.scalar_factor() {
            return Ok(self.build_kronecker(compliance, f, h, method, scale));
        }
        let ahead = match compliance.factor().filter(|_| self.device.is_none()) {
            Some(f) => self.hand_over(f, h),
            None => 0,
        };
        if let (Some(device), Some(f)) = (self.device.as_mut(), compliance.factor()) {
            if !matches!(method, DelassusMethod::Dense | DelassusMethod::Unbuilt) {
                let cached = method != DelassusMethod::Isodof;
                let (w, reuse) = device.isodof(f, h, &mut self.buffers, cached, scale)?;
                let name = if cached { "isodof-reuse-gpu" } else { "isodof-gpu" };
                self.record = Some(record_named(name, h, reuse, None));
                return Ok(w);
            }
        }
        let predicted = compliance
            .factor()
            .filter(|_| method == DelassusMethod::Auto)
            .map(|f| predict(f, h, &self.cache, sweeps));
        let chosen = match compliance.factor() {
            Some(_) => predicted.map_or(method, |p| p.cheapest(assembled)),
            None => DelassusMethod::Dense,
        };
        let chosen =
            if assembled && chosen == DelassusMethod::Unbuilt { DelassusMethod::IsodofReuse } else { chosen };
        let buf = &mut self.buffers;
        buf.columns_factor = compliance.factor().filter(|_| chosen == DelassusMethod::Isodof).cloned();
        let (w, reuse) = match (chosen, compliance.factor()) {
            (DelassusMethod::Isodof, Some(f)) => isodof(f, h, buf, scale),
            (DelassusMethod::IsodofReuse, Some(f)) => isodof_reuse(&mut self.cache, f, h, buf, scale),
            (DelassusMethod::Unbuilt, Some(_)) => {
                (&[][..], IsodofReuse { isodofs: isodofs(h).len(), reused: 0 })
            }
            _ => (dense(compliance, h, buf, scale), Default::default()),
        };
        self.record = Some(DelassusRecord { solved_ahead: ahead, ..record(chosen, h, reuse, predicted) });
        Ok(w)
    }

    /// The handover's two moves ([`Successor`]): adopt the successor's
    /// columns once `f` is theirs, and solve a share of them ahead (on the
    /// CPU; a device build keeps its own cache and rebuilds at the swap).
    /// Returns the columns solved ahead.
    fn hand_over(&mut self, f: &Arc<Ldlt>, h: &CsrMatrix) -> usize {
        if self.next.columns(f).is_some() {
            // Adopted; the old cache's memory (`W̄` over its bound of DOFs in
            // use) is given back rather than kept for the next handover.
            self.cache = std::mem::take(&mut self.next);
        }
        let Some(Successor { factor, steps_left }) = self.successor.take() else { return 0 };
        let dofs = isodofs(h);
        let valid = self.next.columns(&factor).is_some();
        if !valid {
            // The first step of the handover: the previous factor's cache
            // serves only until it ends, so it drops its slack now.
            self.cache.trim(f, &dofs);
        }
        let (mut batch, missing): (Vec<usize>, Vec<usize>) =
            dofs.iter().partition(|&&d| valid && self.next.slot(d).is_some());
        let share = missing.len().div_ceil(steps_left.max(1));
        batch.extend_from_slice(&missing[..share]);
        if share == 0 {
            return 0;
        }
        let r = self.next.update(&factor, &batch);
        r.isodofs - r.reused
    }

    /// The forward half of `A⁻¹ b` (see [`IsodofCache::forward`]) from the
    /// isodof columns this body's builds left for factor `f` — the cache's,
    /// or the last `isodof` build's — when they cover `b`'s DOFs (`K`
    /// right-hand sides interleaved: `K = 3` for `A = A_s ⊗ I₃` with `f`
    /// the scalar factor).
    pub fn forward<const K: usize>(&self, f: &Arc<Ldlt>, b: &[f64], z: &mut Vec<[f64; K]>) -> bool {
        if self.cache.forward(f, b, z) {
            return true;
        }
        let buf = &self.buffers;
        match (&buf.columns, &buf.columns_factor) {
            (Some(cols), Some(g)) if Arc::ptr_eq(f, g) => cols.forward(f, b, z),
            _ => false,
        }
    }

    /// The isodof columns this body's builds left for factor `f` — the
    /// cache's generations, or the last `isodof` build's — when they hold
    /// every DOF of `dofs` (for `A = A_s ⊗ I₃`, the scalar factor's DOFs:
    /// vertices).
    pub fn columns_covering(&self, f: &Arc<Ldlt>, dofs: &[usize]) -> Option<&[IsodofColumns]> {
        if let Some(g) = self.cache.columns(f).filter(|_| dofs.iter().all(|&d| self.cache.slot(d).is_some()))
        {
            return Some(g);
        }
        let buf = &self.buffers;
        match (&buf.columns, &buf.columns_factor) {
            (Some(cols), Some(g)) if Arc::ptr_eq(f, g) => {
                let held: std::collections::HashSet<usize> = cols.dofs().iter().copied().collect();
                dofs.iter().all(|d| held.contains(d)).then_some(std::slice::from_ref(cols))
            }
            _ => None,
        }
    }

    /// [`Self::build`] for `A = A_s ⊗ I₃` with scalar factor `f`: `auto`
    /// takes the cheaper predicted of `isodof-reuse` and, when `S` is
    /// stored, `sparse-inverse`.
    fn build_kronecker(
        &mut self,
        compliance: &Compliance,
        f: &std::sync::Arc<Ldlt>,
        h: &CsrMatrix,
        method: DelassusMethod,
        scale: f64,
    ) -> &[f64] {
        let (inverse, chosen, predicted) = self.kronecker_method(compliance, f, h, method);
        let buf = &mut self.buffers;
        let (w, reuse) = match (chosen, inverse) {
            (DelassusMethod::Dense, _) => (dense(compliance, h, buf, scale), Default::default()),
            (DelassusMethod::Isodof, _) => kronecker_isodof(f, h, buf, scale),
            (DelassusMethod::SparseInverse, Some(s)) => kronecker_sparse_inverse(s, h, buf, scale),
            _ => kronecker_isodof_reuse(&mut self.cache, f, h, buf, scale),
        };
        self.record = Some(record(chosen, h, reuse, predicted));
        w
    }
}

impl DelassusWorkspace {
    /// The Kronecker build `method` names (`auto`: the cheaper predicted of
    /// `isodof-reuse` and, when `S` is stored, `sparse-inverse`), with the
    /// stored `S` and the prediction.
    fn kronecker_method<'c>(
        &self,
        compliance: &'c Compliance,
        f: &Arc<Ldlt>,
        h: &CsrMatrix,
        method: DelassusMethod,
    ) -> (Option<&'c SparseInverse>, DelassusMethod, Option<DelassusCosts>) {
        let inverse = match compliance {
            Compliance::SparseInverse(s, _) => Some(s.as_ref()),
            _ => None,
        };
        let predicted =
            (method == DelassusMethod::Auto).then(|| predict_kronecker(f, h, &self.cache, inverse));
        let chosen = match (method, inverse) {
            (DelassusMethod::Dense | DelassusMethod::Isodof, _) => method,
            (DelassusMethod::SparseInverse, Some(_)) => method,
            (DelassusMethod::Auto, Some(_)) => predicted.map_or(method, |p| p.cheapest(true)),
            _ => DelassusMethod::IsodofReuse,
        };
        (inverse, chosen, predicted)
    }

    /// Adds `h² H_b (W̄_b ⊗ I₃) H_bᵀ` to `w` in factored form, `W̄_b` over
    /// the vertices `h` touches by the method [`Self::build`] would take
    /// (zeng2025 eq. 27; `rows`: the rows of `W` of `h`'s rows, `scale`:
    /// h²). `false`, adding nothing, where the compliance is not
    /// `A_s ⊗ I₃` or the method is `dense`.
    pub fn build_factored(
        &mut self,
        compliance: &Compliance,
        h: &CsrMatrix,
        rows: &[usize],
        method: DelassusMethod,
        scale: f64,
        w: &mut FactoredDelassus,
    ) -> bool {
        let Some(f) = compliance.scalar_factor() else { return false };
        let (inverse, chosen, predicted) = self.kronecker_method(compliance, f, h, method);
        if chosen == DelassusMethod::Dense {
            return false;
        }
        let verts = isovertices(h);
        let buf = &mut self.buffers;
        let (order, reuse) = match (chosen, inverse) {
            (DelassusMethod::Isodof, _) => {
                let cols = IsodofColumns::new(f, &verts);
                cols.delassus_into(&mut buf.wbar);
                (cols.dofs().to_vec(), IsodofReuse { isodofs: verts.len(), reused: 0 })
            }
            (DelassusMethod::SparseInverse, Some(s)) => {
                s.gram(&verts, &mut buf.wbar);
                let m = verts.len();
                (verts, IsodofReuse { isodofs: m, reused: 0 })
            }
            _ => {
                let reuse = self.cache.update(f, &verts);
                let (values, ld) = self.cache.wbar();
                let slots: Vec<usize> = verts.iter().map(|&v| self.cache.slot(v).expect("updated")).collect();
                let m = slots.len();
                buf.wbar.clear();
                buf.wbar.resize(m * m, 0.0);
                // The cache mirrors W̄, so row i is read along slot i's stored
                // column (contiguous) rather than across the columns.
                buf.wbar.par_chunks_mut(m.max(1)).zip(&slots).for_each(|(row, &i)| {
                    row.iter_mut().zip(&slots).for_each(|(w, &j)| *w = values.get(i * ld + j));
                });
                (verts, reuse)
            }
        };
        w.add_part(h, rows, &order, &mut buf.wbar, scale);
        self.record = Some(record(chosen, h, reuse, predicted));
        true
    }
}

/// How `W_b` was obtained.
fn record(
    chosen: DelassusMethod,
    h: &CsrMatrix,
    reuse: IsodofReuse,
    predicted: Option<DelassusCosts>,
) -> DelassusRecord {
    record_named(chosen.name(), h, reuse, predicted)
}

/// How `W_b` was obtained, by a method's record name.
pub(crate) fn record_named(
    method: &'static str,
    h: &CsrMatrix,
    reuse: IsodofReuse,
    predicted: Option<DelassusCosts>,
) -> DelassusRecord {
    DelassusRecord {
        method,
        rows: h.nrows(),
        isodofs: reuse.isodofs,
        reused_isodofs: reuse.reused,
        reuse_fraction: if reuse.isodofs > 0 { reuse.reused as f64 / reuse.isodofs as f64 } else { 0.0 },
        solved_ahead: 0,
        predicted,
    }
}

/// Rates measured by `ferrofem bench delassus` on the 2-core reference
/// machine (flop/s). The dense multi-RHS solve sweeps all of `L` with many
/// small supernodes; the isodof kernels are dominated by a few large dense
/// blocks (near the machine's matrix-product rate); a single-RHS solve and
/// the expansion `Ĥ W̄ Ĥᵀ` are memory-bound. Only their ratios matter for
/// `auto`, and those are large.
const DENSE_RATE: f64 = 1.6e10;
const ISODOF_RATE: f64 = 1.2e11;
const EXPAND_RATE: f64 = 3.0e9;
const SINGLE_RATE: f64 = 5.0e9;

/// Predicts each method's cost for `h` (compact, `c` rows, all of them in
/// groups of 3) with factor `f`, the body's cache, and `sweeps` expected PGS
/// sweeps — from counts only: `nnz(L)`, the supernodes on the isodofs'
/// paths and how many isodofs the cache already holds.
pub fn predict(f: &std::sync::Arc<Ldlt>, h: &CsrMatrix, cache: &IsodofCache, sweeps: f64) -> DelassusCosts {
    let (c, nnz_h) = (h.nrows() as f64, h.pattern.nnz() as f64);
    let nnz_l = f.symbolic().nnz_l() as f64 + f.symbolic().n() as f64;
    let dofs = isodofs(h);
    let m = dofs.len() as f64;
    let expand = 2.0 * (c * m + c * c) * nnz_h / c.max(1.0);
    let (all, reuse) = isodof_flops(f, &dofs, cache);
    let ms = |flops: f64, rate: f64| 1e3 * flops / rate;
    DelassusCosts {
        dense_ms: ms(4.0 * nnz_l * c + 2.0 * c * nnz_h, DENSE_RATE),
        isodof_ms: ms(all.solve_flops + all.gram_flops, ISODOF_RATE) + ms(expand, EXPAND_RATE),
        reuse_ms: ms(reuse, ISODOF_RATE) + ms(expand, EXPAND_RATE),
        unbuilt_ms: ms(sweeps.max(1.0) * (c / 3.0) * 4.0 * nnz_l, SINGLE_RATE)
            + ms(all.solve_flops, ISODOF_RATE),
        sparse_inverse_ms: None,
    }
}

/// The isodof cost of `indices` (DOFs, or vertices of a scalar factor)
/// with factor `f`, and the flops of the reuse build given `cache`: the
/// solves of the indices not cached, plus the new–new and new–old
/// products (zeng2022 eq. 29–30).
fn isodof_flops(f: &std::sync::Arc<Ldlt>, indices: &[usize], cache: &IsodofCache) -> (IsodofCost, f64) {
    let all = IsodofCost::estimate(f.symbolic(), indices);
    let fresh = cache.fresh(f, indices);
    if fresh.len() == indices.len() {
        return (all, all.solve_flops + all.gram_flops);
    }
    let new = IsodofCost::estimate(f.symbolic(), &fresh);
    let old: Vec<usize> = indices.iter().copied().filter(|d| fresh.binary_search(d).is_err()).collect();
    let old = IsodofCost::estimate(f.symbolic(), &old);
    (all, new.solve_flops + (all.gram_flops - old.gram_flops).max(new.gram_flops))
}

/// The `auto` model for `A = A_s ⊗ I₃` (local-global): isodof and its reuse
/// on the scalar factor `f` for the touched vertices, and, with `S` stored,
/// the dense gather of their columns of `S` over the reach and `Zᵀ Z`
/// (`2 · reach · m²` flops). The expansion is three axes of `expand`.
pub fn predict_kronecker(
    f: &std::sync::Arc<Ldlt>,
    h: &CsrMatrix,
    cache: &IsodofCache,
    inverse: Option<&ferrofem_linalg::SparseInverse>,
) -> DelassusCosts {
    let (c, verts) = (h.nrows() as f64, isovertices(h));
    let m = verts.len() as f64;
    let expand = 3.0 * 2.0 * (c * m + c * c);
    let (all, reuse) = isodof_flops(f, &verts, cache);
    let ms = |flops: f64, rate: f64| 1e3 * flops / rate;
    DelassusCosts {
        dense_ms: f64::INFINITY,
        isodof_ms: ms(all.solve_flops + all.gram_flops, ISODOF_RATE) + ms(expand, EXPAND_RATE),
        reuse_ms: ms(reuse, ISODOF_RATE) + ms(expand, EXPAND_RATE),
        unbuilt_ms: f64::INFINITY,
        sparse_inverse_ms: inverse.map(|_| {
            ms(2.0 * all.reach_rows * m * m, ISODOF_RATE)
                + ms(all.entries, EXPAND_RATE)
                + ms(expand, EXPAND_RATE)
        }),
    }
}
