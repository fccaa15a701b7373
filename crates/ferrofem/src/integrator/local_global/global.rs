//! The global step: `A q = b` with the constant `A = M + h² Σ wᵢ GᵢᵀGᵢ`
//! (zeng2025 eq. 6), `A = A_s ⊗ I₃`. Complete solutions by the sparse
//! inverse (`q = Pᵀ Sᵀ D⁻¹ S P b`, eq. 7–8) or by triangular solves with
//! the factor; the incomplete baseline is one Jacobi iteration (Wang 2015).

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::local::Projections;
use super::terms::Pin;
use crate::body::Body;
use crate::constraint::{BodyRows, Compliance};
use crate::device::{
    Backend, ContactFrame, ContactFrameOutcome, DeviceError, DeviceGlobalStep, DeviceRows, FrameState,
};
use crate::element::Element;
use ferrofem_linalg::{
    CsrMatrix, CsrPattern, Ldlt, LdltSymbolic, LinalgError, Ordering, Precision, SparseInverse,
    SparseInverseScratch,
};

/// How the global step solves `A q = b`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum GlobalStepMethod {
    /// The cheaper complete solve for each body, by the bytes a step reads:
    /// `triangular` where `S` would hold more than twice the factor's
    /// entries (on a CPU the sweeps read `L` at about half the rate the
    /// products read `S`), else `sparse-inverse`; `sparse-inverse` on the
    /// GPU and wherever `W` is read from `S` (`delassus =
    /// "sparse-inverse"`), `triangular` in single precision.
    #[default]
    Auto,
    /// Two sparse matrix–vector products with `S = L⁻¹` (zeng2025 eq. 8).
    SparseInverse,
    /// Forward and backward substitution with the LDLᵀ factor.
    Triangular,
    /// One Jacobi iteration per global step, optionally
    /// Chebyshev-accelerated (the incomplete baseline of Wang 2015).
    Jacobi,
}

/// The ratio `nnz(S) / nnz(L)` (diagonals included) above which `auto`
/// takes the triangular sweeps: measured on the 5.3k twisting bar,
/// `S` 4.0× the factor's entries, the sweeps took 1.9 ms against the
/// products' 4.1 (`docs/benchmarks.md`).
pub const SWEEPS_FROM_S_OVER_L: f64 = 2.0;

/// Whether what runs reads `S`: the GPU's global step, or `W` read from it.
pub fn reads_s(device: crate::Device, delassus: crate::delassus::DelassusMethod) -> bool {
    device == crate::Device::Gpu || delassus == crate::delassus::DelassusMethod::SparseInverse
}

/// Why single precision and a stored `S` exclude each other.
pub const SINGLE_WITHOUT_S: &str = "\"single\" keeps the factor in f32 only, and S (which the GPU and \
     delassus = \"sparse-inverse\" read) is built from the double factor: use precision = \"double\"";

impl GlobalStepMethod {
    /// The name used in scene files and benchmark records.
    pub fn name(self) -> &'static str {
        match self {
            GlobalStepMethod::Auto => "auto",
            GlobalStepMethod::SparseInverse => "sparse-inverse",
            GlobalStepMethod::Triangular => "triangular",
            GlobalStepMethod::Jacobi => "jacobi",
        }
    }

    /// Whether the method is (or may become) the sparse inverse, which
    /// stores `S`.
    pub fn may_store_s(self) -> bool {
        matches!(self, GlobalStepMethod::Auto | GlobalStepMethod::SparseInverse)
    }

    /// `auto` where what runs fixes the method: the sparse inverse on the
    /// GPU (the method it runs) or when `W` is read from `S`, the
    /// triangular sweeps in single precision (only they read the `f32`
    /// factor). Otherwise unchanged (`auto` then chooses by bytes in
    /// [`GlobalSolver::new`]). Both at once cannot be: the error says why.
    pub fn settle(self, needs_s: bool, precision: Precision) -> Result<GlobalStepMethod, &'static str> {
        let single = precision == Precision::Single;
        match self {
            GlobalStepMethod::Auto if needs_s && single => Err(SINGLE_WITHOUT_S),
            GlobalStepMethod::Auto if needs_s => Ok(GlobalStepMethod::SparseInverse),
            GlobalStepMethod::Auto if single => Ok(GlobalStepMethod::Triangular),
            m => Ok(m),
        }
    }

    /// `auto` for a factor: `triangular` when `S` would hold more than
    /// [`SWEEPS_FROM_S_OVER_L`] times the entries of `L`.
    fn by_bytes(self, f: &Ldlt) -> GlobalStepMethod {
        let s = f.symbolic();
        let l = s.nnz_l() + s.n();
        match self {
            GlobalStepMethod::Auto if s.nnz_inverse() as f64 > SWEEPS_FROM_S_OVER_L * l as f64 => {
                GlobalStepMethod::Triangular
            }
            GlobalStepMethod::Auto => GlobalStepMethod::SparseInverse,
            m => m,
        }
    }
}

/// Scalar global matrix `A_s` over vertices: `m δ + h² Σ w gₐ·g_b` from
/// elements, `h² w cₐ c_b` from stencils, `h² w` from pins.
pub fn global_matrix(body: &Body, pins: &[Pin], h: f64) -> CsrMatrix {
    let n = body.vertex_count();
    let mut rows: Vec<Vec<u32>> = (0..n).map(|i| vec![i as u32]).collect();
    let mut couple = |vs: &[usize]| {
        for &a in vs {
            rows[a].extend(vs.iter().map(|&b| b as u32));
        }
    };
    body.tets.iter().for_each(|e| couple(&e.vertices));
    body.triangles.iter().for_each(|e| couple(&e.vertices));
    body.bending.iter().for_each(|s| couple(&s.vertices));
    let mut a = CsrMatrix::zeros(CsrPattern::from_rows(n, rows));
    let h2 = h * h;
    for (i, m) in body.mass.iter().enumerate() {
        add(&mut a, i, i, *m);
    }
    add_elements(&mut a, &body.tets, h2);
    add_elements(&mut a, &body.triangles, h2);
    for s in &body.bending {
        for (a_, ca) in s.vertices.iter().zip(&s.coeffs) {
            for (b_, cb) in s.vertices.iter().zip(&s.coeffs) {
                add(&mut a, *a_, *b_, h2 * s.weight * ca * cb);
            }
        }
    }
    for p in pins {
        add(&mut a, p.vertex, p.vertex, h2 * p.weight);
    }
    a
}

fn add(a: &mut CsrMatrix, i: usize, j: usize, v: f64) {
    let k = a.pattern.find(i, j).expect("pattern holds every coupling");
    a.values[k] += v;
}

/// `h² w gₐ·g_b` of every element pair of vertices.
fn add_elements<const D: usize, const N: usize>(a: &mut CsrMatrix, elements: &[Element<D, N>], h2: f64) {
    for e in elements {
        for (i, gi) in e.vertices.iter().zip(&e.grads) {
            for (j, gj) in e.vertices.iter().zip(&e.grads) {
                add(a, *i, *j, h2 * e.weight * gi.dot(gj));
            }
        }
    }
}

/// Sets each pin's weight to `factor · A_vv / h²`, `A_vv` the vertex's
/// diagonal without pins (the pin is `factor` times stiffer than what
/// holds the vertex otherwise, whatever the mesh size or material), and
/// returns `A_s` with the pins.
pub fn pinned_global_matrix(body: &Body, pins: &mut [Pin], h: f64, factor: f64) -> CsrMatrix {
    pins.iter_mut().for_each(|p| p.weight = 0.0);
    let mut a = global_matrix(body, pins, h);
    for p in pins {
        let k = a.pattern.find(p.vertex, p.vertex).expect("diagonal is stored");
        p.weight = factor * a.values[k] / (h * h);
        a.values[k] += h * h * p.weight;
    }
    a
}

/// The global step's solver, built once: `A_s`, its factor and (for the
/// sparse-inverse method) `S`.
#[derive(Debug)]
pub struct GlobalSolver {
    /// Method (`auto` settled).
    pub method: GlobalStepMethod,
    /// The scalar matrix `A_s`.
    pub matrix: CsrMatrix,
    /// `1 / diag(A_s)`.
    inv_diag: Vec<f64>,
    factor: Option<Arc<Ldlt>>,
    inverse: Option<Arc<SparseInverse>>,
    scratch: SparseInverseScratch,
    /// The residual `b − A x` of a single-precision step and its solve.
    residual: [Vec<f64>; 2],
    /// The global step on the GPU (`[simulation] device = "gpu"`).
    device: Option<Box<dyn DeviceGlobalStep>>,
}

impl GlobalSolver {
    /// Factorizes `A_s` (complete methods), kept in `f32` only when
    /// `precision` is single ([`Ldlt::release_double`]: the sweeps, `W`
    /// and the correction all read it), settles `auto` by the factor's
    /// bytes ([`Self::method`] is never `auto`) and builds `S` (sparse
    /// inverse).
    pub fn new(
        matrix: CsrMatrix,
        method: GlobalStepMethod,
        ordering: Ordering,
        precision: Precision,
    ) -> Result<Self, LinalgError> {
        let inv_diag = matrix.diagonal().iter().map(|d| 1.0 / d).collect();
        let factor = match method {
            GlobalStepMethod::Jacobi => None,
            _ => {
                let mut f = factorize(&matrix, ordering)?;
                if precision == Precision::Single {
                    f.release_double();
                }
                Some(Arc::new(f))
            }
        };
        let method = factor.as_deref().map_or(method, |f| method.by_bytes(f));
        let inverse = match method {
            GlobalStepMethod::SparseInverse => factor.as_deref().map(|f| Arc::new(SparseInverse::new(f))),
            _ => None,
        };
        Ok(GlobalSolver {
            method,
            matrix,
            inv_diag,
            factor,
            inverse,
            scratch: SparseInverseScratch::default(),
            residual: [Vec::new(), Vec::new()],
            device: None,
        })
    }

    /// The sparse inverse, when the method uses one.
    pub fn sparse_inverse(&self) -> Option<&SparseInverse> {
        self.inverse.as_deref()
    }

    /// How this body applies `A⁻¹ = A_s⁻¹ ⊗ I₃` to constraint rows: by the
    /// sparse inverse when the method keeps one, else by the factor
    /// (`None` for the Jacobi baseline, which has no complete solve).
    pub fn compliance(&self) -> Option<Compliance> {
        match (&self.inverse, &self.factor) {
            (Some(s), Some(f)) => Some(Compliance::SparseInverse(s.clone(), f.clone())),
            (_, Some(f)) => Some(Compliance::Kronecker(f.clone())),
            (_, None) => None,
        }
    }

    /// What the factor's sweeps read.
    pub fn precision(&self) -> Precision {
        match &self.factor {
            Some(f) if f.double_released() => Precision::Single,
            _ => Precision::Double,
        }
    }

    /// The LDLᵀ factor of `A_s`, when the method uses one.
    pub fn factor(&self) -> Option<&Arc<Ldlt>> {
        self.factor.as_ref()
    }

    /// Moves the global step to `backend`'s device: `S`, `D⁻¹`, `P` and
    /// the right-hand-side map of `body` become resident (sparse-inverse
    /// method only), and the body's local step where the device has it
    /// ([`super::local::device_terms`]). Returns the adapter's description.
    pub fn to_device(
        &mut self,
        backend: &dyn Backend,
        body: &Body,
        projections: &Projections,
        h: f64,
        arap_sweeps: usize,
    ) -> Result<String, DeviceError> {
        let Some(s) = self.inverse.as_deref() else {
            return Err(DeviceError::Input(
                "the GPU runs the sparse-inverse global step: local_global.global_step = \"sparse-inverse\""
                    .into(),
            ));
        };
        let adapter = backend.adapter()?;
        let map = super::local::rhs_map(body, projections, h);
        let terms = super::local::device_terms(body, arap_sweeps);
        self.device = Some(backend.global_step(s, &map, Some(&terms))?);
        Ok(adapter)
    }

    /// Whether whole frames can run on the device (the body's local step
    /// is there too).
    pub fn has_device_frame(&self) -> bool {
        self.device.as_ref().is_some_and(|d| d.has_local_step())
    }

    /// A frame without constraints on the device
    /// ([`DeviceGlobalStep::frame`]): from the constant part `c` and the
    /// starting iterate `x`, `iterations` local-global iterations; `x`
    /// and the projections' rotations receive the result. Returns the
    /// projections the device counted where the CPU takes an SVD.
    pub fn device_frame(
        &mut self,
        c: &[f64],
        x: &mut [f64],
        projections: &mut Projections,
        upload_rotations: bool,
        iterations: usize,
    ) -> Result<u64, DeviceError> {
        let Some(d) = self.device.as_mut() else {
            return Err(DeviceError::Input("the global step is not on the device".into()));
        };
        d.frame(c, x, projections.tet_rotations_flat_mut(), upload_rotations, iterations)
    }

    /// A frame with constraint rows on the device
    /// ([`DeviceGlobalStep::contact_frame`]).
    pub fn device_contact_frame(
        &mut self,
        frame: &ContactFrame<'_>,
        state: FrameState<'_>,
    ) -> Result<ContactFrameOutcome, DeviceError> {
        let Some(d) = self.device.as_mut() else {
            return Err(DeviceError::Input("the global step is not on the device".into()));
        };
        d.contact_frame(frame, state)
    }

    /// Whether the device can build `W` of `rows` from its resident `S`
    /// ([`DeviceGlobalStep::delassus_fits`]); `false` on the CPU.
    pub fn device_builds_delassus(&self, rows: &DeviceRows) -> bool {
        self.device.as_ref().is_some_and(|d| d.delassus_fits(rows).is_ok())
    }

    /// Whether the global step runs on the GPU.
    pub fn on_device(&self) -> bool {
        self.device.is_some()
    }

    /// Bytes one device solve reads (both SpMVs: `S`'s values and
    /// indices, the vectors), the measure of its bandwidth; `None` on the
    /// CPU.
    pub fn device_bytes(&self) -> Option<usize> {
        self.device.as_ref().map(|d| d.spmv_bytes())
    }

    /// On the GPU: `q = A⁻¹ (c + h² Σ w Gᵀ p)` with the right-hand side
    /// assembled on the device from the projections, `c` uploaded when
    /// given (else the last one). Nothing on the CPU.
    pub fn solve_projected(
        &mut self,
        c: Option<&[f64]>,
        projections: &Projections,
        q: &mut [f64],
    ) -> Result<(), DeviceError> {
        match self.device.as_mut() {
            Some(d) => d.solve_projected(c, &projections.flat(), q),
            None => Ok(()),
        }
    }

    /// Complete solution `q = A⁻¹ b` (flat positions, 3 per vertex), on
    /// the device when the step runs there. The Jacobi method has no
    /// complete solution: it leaves `q` alone.
    pub fn solve(&mut self, b: &[f64], q: &mut [f64]) -> Result<(), DeviceError> {
        if let Some(d) = self.device.as_mut() {
            return d.solve(b, q);
        }
        match (&self.inverse, &self.factor) {
            (Some(s), _) => s.apply_many::<3>(b, q, &mut self.scratch),
            (None, Some(f)) => f.solve_interleaved_in::<3>(b, q, self.precision()),
            (None, None) => {}
        }
        Ok(())
    }

    /// The global step `x ← A⁻¹ b` from the iterate `x`: [`Self::solve`];
    /// in single precision, one step of iterative refinement,
    /// `x ← x + Ã⁻¹ (b − A x)` with the residual in double, so that the
    /// rounding of `Ã` scales the change of the iterate rather than the
    /// iterate, and a fixed point of the iteration is one of `A` itself.
    pub fn solve_from(&mut self, b: &[f64], x: &mut [f64]) -> Result<(), DeviceError> {
        if self.precision() != Precision::Single || self.device.is_some() {
            return self.solve(b, x);
        }
        let [mut r, mut delta] = std::mem::take(&mut self.residual);
        r.resize(b.len(), 0.0);
        delta.resize(b.len(), 0.0);
        self.residual_into(b, x, &mut r);
        let result = self.solve(&r, &mut delta);
        x.iter_mut().zip(&delta).for_each(|(x, d)| *x += d);
        self.residual = [r, delta];
        result
    }

    /// `r = b − (A_s ⊗ I₃) x`.
    fn residual_into(&self, b: &[f64], x: &[f64], r: &mut [f64]) {
        use rayon::prelude::*;
        r.par_chunks_mut(3).enumerate().with_min_len(256).for_each(|(i, out)| {
            out.copy_from_slice(&self.row_residual(b, x, i));
        });
    }

    /// Vertex `i`'s three rows of `b − (A_s ⊗ I₃) x`.
    fn row_residual(&self, b: &[f64], x: &[f64], i: usize) -> [f64; 3] {
        let a = &self.matrix;
        let mut r = [b[3 * i], b[3 * i + 1], b[3 * i + 2]];
        for k in a.pattern.row_ptr[i]..a.pattern.row_ptr[i + 1] {
            let j = a.pattern.col_idx[k] as usize;
            (0..3).for_each(|d| r[d] -= a.values[k] * x[3 * j + d]);
        }
        r
    }

    /// `out = A⁻¹ H_bᵀ δλ` of the correction (zeng2025 eq. 23b; `rows`
    /// keeps `H_bᵀ δλ` in its `forces`): by the resident sparse inverse
    /// on the device, else by [`BodyRows::correction`] with this body's
    /// compliance (the forward half from the isodof columns `W` left).
    /// The one way the unfolded correction applies `A⁻¹`; a folded body's
    /// correction is the backward half of its global step instead
    /// (`LocalGlobal::fold`).
    pub fn correction(
        &mut self,
        rows: &mut BodyRows,
        delta: &[f64],
        out: &mut Vec<f64>,
    ) -> Result<(), DeviceError> {
        let Some(d) = self.device.as_mut() else {
            let compliance = self.compliance().expect("constraints refuse the Jacobi global step");
            rows.correction(&compliance, delta, out);
            return Ok(());
        };
        rows.set_forces(delta);
        out.clear();
        out.resize(rows.forces.len(), 0.0);
        d.solve(&rows.forces, out)
    }

    /// One Jacobi iteration `q_out = q + D⁻¹ (b − A q)`.
    pub fn jacobi(&self, b: &[f64], q: &[f64], q_out: &mut [f64]) {
        use rayon::prelude::*;
        q_out.par_chunks_mut(3).enumerate().with_min_len(256).for_each(|(i, out)| {
            let r = self.row_residual(b, q, i);
            (0..3).for_each(|d| out[d] = q[3 * i + d] + self.inv_diag[i] * r[d]);
        });
    }
}

/// LDLᵀ of a scalar global matrix.
pub fn factorize(a: &CsrMatrix, ordering: Ordering) -> Result<Ldlt, LinalgError> {
    Ldlt::factorize(Arc::new(LdltSymbolic::analyze(&a.pattern, ordering, 1)?), a)
}
