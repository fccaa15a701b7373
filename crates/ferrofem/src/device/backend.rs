//! The seam between the simulator and a compute backend: what each
//! device stage asks of it, in the simulator's terms. A backend creates
//! resident objects from the simulator's matrices; every call that can
//! fail returns a [`DeviceError`] to the stage that made it.

use std::fmt::Debug;
use std::sync::Arc;

use ferrofem_linalg::{Ldlt, SparseInverse};

use crate::element::Constitutive;

use super::{
    ContactFrame, ContactFrameOutcome, DeviceCounters, DeviceError, DeviceRows, FrameState, GroupLaw,
    NewtonParams, Offset,
};
use crate::solver::NewtonSolve;

/// A compute device the world's device stages run on, chosen when the
/// world is built ([`crate::scene::Scene::build_on`], or
/// [`crate::Model::backend`]).
pub trait Backend: Send + Sync + Debug {
    /// The adapter this backend computes on (name, driver, API), or why
    /// there is none.
    fn adapter(&self) -> Result<String, DeviceError>;

    /// Local-global's global step (zeng2025 eq. 6–8) with `S` of
    /// `inverse` resident and the right-hand side assembled by `map`;
    /// with `terms`, the body's local step too, for resident frames
    /// ([`DeviceGlobalStep::frame`]).
    fn global_step(
        &self,
        inverse: &SparseInverse,
        map: &RhsMap,
        terms: Option<&DeviceTerms>,
    ) -> Result<Box<dyn DeviceGlobalStep>, DeviceError>;

    /// `factor` resident, for isodof builds of `W̄` (zeng2022 Algorithm 3).
    fn factor(&self, factor: &Ldlt) -> Result<Box<dyn DeviceFactor>, DeviceError>;

    /// The non-smooth Newton constraint solver (zeng2025 §5.2–5.4).
    fn newton(&self) -> Result<Box<dyn DeviceNewton>, DeviceError>;

    /// What every object this backend made has done on the device so far
    /// (a step's stats hold the difference over the step).
    fn counters(&self) -> DeviceCounters;
}

/// The global step on the device: `q = A⁻¹ b = Pᵀ Sᵀ D⁻¹ S P b`.
pub trait DeviceGlobalStep: Send + Sync + Debug {
    /// `q = A⁻¹ (c + h² Σ w Gᵀ p)`: the right-hand side assembled on the
    /// device from the projections (tets, triangles, stencils), `c`
    /// uploaded when given, else the last one kept.
    fn solve_projected(
        &mut self,
        c: Option<&[f64]>,
        projections: &[&[f64]; 3],
        q: &mut [f64],
    ) -> Result<(), DeviceError>;

    /// `q = A⁻¹ b` (flat positions, 3 per vertex).
    fn solve(&mut self, b: &[f64], q: &mut [f64]) -> Result<(), DeviceError>;

    /// Whether [`Self::frame`] can run: the body's terms were given.
    fn has_local_step(&self) -> bool;

    /// A frame without constraints resident on the device (zeng2025
    /// Algorithm 3): the constant part `c` and the starting iterate `x`
    /// uploaded (and `rotations`, 9 per tet column-major, when
    /// `upload_rotations`: the host's are newer), then `iterations` ×
    /// { local step, right-hand side, global step } in one submission,
    /// the duals starting at zero; `x` and `rotations` read back in one
    /// host wait. Returns how many projections the device counted where
    /// the CPU takes an SVD instead (a tet's unconverged polar iteration
    /// or a warm start that is not a rotation, a nearly flat membrane
    /// triangle), summed over the iterations.
    fn frame(
        &mut self,
        c: &[f64],
        x: &mut [f64],
        rotations: &mut [f64],
        upload_rotations: bool,
        iterations: usize,
    ) -> Result<u64, DeviceError>;

    /// `W = h² H A⁻¹ Hᵀ` of `rows` (row-major) built on the device from
    /// the resident `S` (zeng2025 §5.1), read back in one host wait.
    fn delassus(&mut self, rows: &DeviceRows, h: f64) -> Result<Vec<f64>, DeviceError>;

    /// Why `W` of `rows` cannot be built on the device (its dense blocks
    /// outgrow the adapter's bindings), if it cannot.
    fn delassus_fits(&self, rows: &DeviceRows) -> Result<(), DeviceError>;

    /// A frame with constraint rows resident on the device (zeng2025
    /// Algorithm 3–4): `W` built there (or uploaded), then every iteration's local step,
    /// right-hand side with `h² Hᵀ λ`, global step, gaps, non-smooth
    /// Newton solve and correction in one submission; `state` read back
    /// in one host wait. The duals start at zero, as in [`Self::frame`].
    fn contact_frame(
        &mut self,
        frame: &ContactFrame<'_>,
        state: FrameState<'_>,
    ) -> Result<ContactFrameOutcome, DeviceError>;

    /// Bytes one solve reads (both SpMVs: `S`'s values and indices, the
    /// vectors), the measure of its bandwidth.
    fn spmv_bytes(&self) -> usize;
}

/// An LDLᵀ factor resident on the device.
pub trait DeviceFactor: Send + Sync + Debug {
    /// `W̄ = Ī A⁻¹ Īᵀ` on the isolated DOFs `dofs`, row-major.
    fn delassus(&mut self, dofs: &[usize]) -> Result<Vec<f64>, DeviceError>;

    /// As [`Self::delassus`] through the device's isodof cache (zeng2022
    /// §5), and how many of `dofs` it reused.
    fn delassus_reuse(&mut self, dofs: &[usize]) -> Result<(Vec<f64>, usize), DeviceError>;
}

/// The non-smooth Newton solve of `δ = δ_free + W λ` on the device.
pub trait DeviceNewton: Send + Sync + Debug {
    /// Uploads `W` (`c × c`, row-major) for the solves that follow.
    fn load(&mut self, w: &[f64]) -> Result<(), DeviceError>;

    /// Solves under `laws` with complementarity scale `r` from the warm
    /// start in `lambda`, which receives the result; `delta` receives `δ`.
    fn solve(
        &mut self,
        params: &NewtonParams,
        offset: Offset,
        laws: &[GroupLaw],
        r: &[f64],
        lambda: &mut [f64],
        delta: &mut [f64],
    ) -> Result<NewtonSolve, DeviceError>;
}

/// A shared backend handle, as a world holds it.
pub type SharedBackend = Arc<dyn Backend>;

/// The fixed linear map from the local step's projections to the
/// right-hand side: `b[3v + d] = c[3v + d] + Σ_k coef[k] · p[base[k] + d]`
/// over vertex `v`'s entries `vertex_ptr[v]..vertex_ptr[v + 1]`
/// (`coef = h² w gₐ` of an element's column, `p` the projections laid end
/// to end, each column of three values at `base`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RhsMap {
    /// Entry ranges per vertex (`vertices + 1` values).
    pub vertex_ptr: Vec<u32>,
    /// Index of each entry's three projection values in `p`.
    pub base: Vec<u32>,
    /// Each entry's coefficient.
    pub coef: Vec<f64>,
    /// Length of `p`.
    pub projections: usize,
}

/// A body's elastic terms whose local step (zeng2025 eq. 5) runs on the
/// device: ARAP (tets: the rotation by at most `arap_sweeps` Jacobi
/// sweeps), co-rotational (the converged rotation and the ADMM dual) or
/// Neo-Hookean (the prox in σ from the eigenbasis of `FᵀF`, and the dual),
/// tets and membrane triangles, and the membranes' bending stencils.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DeviceTerms {
    /// ARAP, co-rotational or Neo-Hookean (stable Neo-Hookean is refused);
    /// the tets' rotations the device keeps are Neo-Hookean's eigenbases.
    pub model: Constitutive,
    /// ARAP's polar sweeps at most (`local_global.polar_sweeps`).
    pub arap_sweeps: u32,
    /// Four vertices per tet.
    pub tet_vertices: Vec<u32>,
    /// Per tet [`Self::TET_COEFFICIENTS`] values: the four shape-function
    /// gradients `gₐ` (3 each), then `μ`, `λ` and `k = w / V`.
    pub tet_coefficients: Vec<f64>,
    /// Three vertices per membrane triangle.
    pub triangle_vertices: Vec<u32>,
    /// Per triangle [`Self::TRIANGLE_COEFFICIENTS`] values: the three
    /// gradients `gₐ` (2 each, in the rest plane), then `μ`, `λ`, `k`.
    pub triangle_coefficients: Vec<f64>,
    /// Entries of each bending stencil, `stencil_ptr[s]..stencil_ptr[s + 1]`
    /// (`stencils + 1` values).
    pub stencil_ptr: Vec<u32>,
    /// Each entry's vertex.
    pub stencil_vertices: Vec<u32>,
    /// Each entry's coefficient `cₐ` of `y = Σ cₐ xₐ`.
    pub stencil_coefficients: Vec<f64>,
    /// Each stencil's rest length.
    pub stencil_rest: Vec<f64>,
}

impl DeviceTerms {
    /// Values of [`Self::tet_coefficients`] per tet.
    pub const TET_COEFFICIENTS: usize = 15;
    /// Values of [`Self::triangle_coefficients`] per triangle.
    pub const TRIANGLE_COEFFICIENTS: usize = 9;

    /// Tets described.
    pub fn tets(&self) -> usize {
        self.tet_vertices.len() / 4
    }

    /// Membrane triangles described.
    pub fn triangles(&self) -> usize {
        self.triangle_vertices.len() / 3
    }

    /// Bending stencils described.
    pub fn stencils(&self) -> usize {
        self.stencil_ptr.len().saturating_sub(1)
    }
}
