//! The constraint-space solve of the local-global contact path on the
//! device (zeng2025 §5.2–5.4): non-smooth Newton on `δ = δ_free + W λ`,
//! each direction by conjugate residuals on `D W̃ D + E` with the Jacobi
//! preconditioner of the complementarity scale, then a backtracking line
//! search on `‖Φ‖²`. It is ferrofem's `solver::newton` step for step (same
//! NCP functions, regularization, single-precision `W` in the inner
//! solves), so the two agree to rounding.
//!
//! `W` (f64 and its f32 copy) is uploaded once per time step; per solve
//! the host uploads `λ⁰`, the gaps, the laws and `r`, and the whole solve
//! is one submission: the scalars CR and the line search decide on stay
//! on the device, and `λ`, `δ` and the solve's figures come back in one
//! host wait.

use std::collections::HashMap;

use crate::kernel::{fits, grid, read_back_timed, zeros, LANES};
use crate::link::Timer;
use crate::Link;
use ferrofem::device::{DeviceError, GroupLaw, NewtonParams, Offset};
use ferrofem::solver::newton::{GROWTH, LINE_SEARCH_HALVINGS};
use ferrofem::solver::NewtonSolve;

/// Vectors of `newton.wgsl`'s `v`.
const VECTORS: usize = 21;
/// Scalars of its `s` (read back with `λ` and `δ`).
pub(crate) const SCALARS: usize = 20;
const LINEAR: usize = 4;
const PHI_MAX: usize = 7;
const ITERATIONS: usize = 14;
const CONVERGED: usize = 15;
const ERROR: usize = 16;
/// Settings the control kernels read: the tolerances and `GROWTH`.
const NCP_TOLERANCE: usize = 17;
const TOLERANCE: usize = 18;
const GROWTH_AT: usize = 19;
const LAMBDA: usize = 0;
const FREE: usize = 2;
const SCALE: usize = 19;
const MU: usize = 20;

/// How a kernel of `newton.wgsl` is dispatched.
#[derive(Debug, Clone, Copy)]
enum Shape {
    /// A workgroup per row of `W`.
    Rows,
    /// An invocation per group of three rows.
    Groups,
    /// An invocation per row.
    Items,
    /// One workgroup.
    Reduce,
}

/// A kernel: its entry point in `newton.wgsl` and its dispatch.
type Kernel = (&'static str, Shape);

const DELTA_FROM_LAMBDA: Kernel = ("delta_from_lambda", Shape::Rows);
const TMP_FROM_SCALED: Kernel = ("tmp_from_scaled", Shape::Rows);
const TMP_FROM_SCALED32: Kernel = ("tmp_from_scaled32", Shape::Rows);
const FREE_FROM_GAPS: Kernel = ("free_from_gaps", Shape::Items);
const LINEARIZE: Kernel = ("linearize", Shape::Groups);
const DIRECTION_SETUP: Kernel = ("direction_setup", Shape::Groups);
const DIRECTION_RHS: Kernel = ("direction_rhs", Shape::Groups);
const APPLY_PRE: Kernel = ("apply_pre", Shape::Groups);
const APPLY_POST: Kernel = ("apply_post", Shape::Groups);
const CR_BEGIN: Kernel = ("cr_begin", Shape::Reduce);
const CR_MAP: Kernel = ("cr_map", Shape::Items);
const CR_ALPHA: Kernel = ("cr_alpha", Shape::Reduce);
const CR_UPDATE: Kernel = ("cr_update", Shape::Items);
const CR_BETA: Kernel = ("cr_beta", Shape::Reduce);
const CR_DIRECTION: Kernel = ("cr_direction", Shape::Items);
const DIRECTION_FINISH: Kernel = ("direction_finish", Shape::Groups);
const TRIAL: Kernel = ("trial", Shape::Groups);
const MEASURE: Kernel = ("measure", Shape::Reduce);
const NEWTON_BEGIN: Kernel = ("newton_begin", Shape::Reduce);
const LINE_SEARCH: Kernel = ("line_search", Shape::Reduce);
const NEWTON_END: Kernel = ("newton_end", Shape::Reduce);

/// Every kernel, compiled once per solver.
const KERNELS: [Kernel; 21] = [
    DELTA_FROM_LAMBDA,
    TMP_FROM_SCALED,
    TMP_FROM_SCALED32,
    FREE_FROM_GAPS,
    LINEARIZE,
    DIRECTION_SETUP,
    DIRECTION_RHS,
    APPLY_PRE,
    APPLY_POST,
    CR_BEGIN,
    CR_MAP,
    CR_ALPHA,
    CR_UPDATE,
    CR_BETA,
    CR_DIRECTION,
    DIRECTION_FINISH,
    TRIAL,
    MEASURE,
    NEWTON_BEGIN,
    LINE_SEARCH,
    NEWTON_END,
];

/// Buffers sized for a number of rows.
#[derive(Debug)]
struct Sized {
    capacity: usize,
    w: wgpu::Buffer,
    w32: wgpu::Buffer,
    v: wgpu::Buffer,
    s: wgpu::Buffer,
    params: wgpu::Buffer,
    group: wgpu::BindGroup,
    staging: wgpu::Buffer,
}

/// The non-smooth Newton solver on the device, for one `W` at a time.
#[derive(Debug)]
pub struct DeviceNewton {
    gpu: Link,
    /// The device time of each solve, where the adapter has timestamps.
    timer: Option<Timer>,
    layout: wgpu::BindGroupLayout,
    pipelines: HashMap<&'static str, wgpu::ComputePipeline>,
    buffers: Option<Sized>,
    /// Rows of the loaded `W`.
    rows: usize,
}

impl DeviceNewton {
    /// Compiles the kernels (and waits for the device's verdict on them).
    pub fn new(gpu: impl Into<Link>) -> Result<DeviceNewton, DeviceError> {
        let newton = DeviceNewton::compile(gpu.into());
        newton.gpu.wait()?;
        Ok(newton)
    }

    /// Compiles the kernels without waiting: an error surfaces at the
    /// next host wait (a frame's read-back).
    pub(crate) fn compile(gpu: Link) -> DeviceNewton {
        let entry = |binding: u32, ty: wgpu::BufferBindingType| wgpu::BindGroupLayoutEntry {
            binding,
            visibility: wgpu::ShaderStages::COMPUTE,
            ty: wgpu::BindingType::Buffer { ty, has_dynamic_offset: false, min_binding_size: None },
            count: None,
        };
        let storage = |read_only| wgpu::BufferBindingType::Storage { read_only };
        let layout = gpu.device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("newton"),
            entries: &[
                entry(0, wgpu::BufferBindingType::Uniform),
                entry(1, storage(true)),
                entry(2, storage(true)),
                entry(3, storage(false)),
                entry(4, storage(false)),
            ],
        });
        let pipeline_layout = gpu.device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("newton"),
            bind_group_layouts: &[Some(&layout)],
            immediate_size: 0,
        });
        let source = include_str!("shaders/newton.wgsl");
        let module = gpu.device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("newton"),
            source: wgpu::ShaderSource::Wgsl(source.into()),
        });
        let pipelines = KERNELS
            .iter()
            .map(|&(e, _)| {
                let desc = wgpu::ComputePipelineDescriptor {
                    label: Some(e),
                    layout: Some(&pipeline_layout),
                    module: &module,
                    entry_point: Some(e),
                    compilation_options: Default::default(),
                    cache: None,
                };
                (e, gpu.device.create_compute_pipeline(&desc))
            })
            .collect();
        DeviceNewton { timer: gpu.timer(), gpu, layout, pipelines, buffers: None, rows: 0 }
    }

    /// Makes `w` (row-major `c × c`, `c = 3 ×` groups) the operator of the
    /// next solves: uploaded in f64 and rounded to f32.
    pub fn load(&mut self, w: &[f64]) -> Result<(), DeviceError> {
        let c = (w.len() as f64).sqrt().round() as usize;
        if c * c != w.len() {
            return Err(DeviceError::Input(format!("W of {} values is not square", w.len())));
        }
        self.reserve(c)?;
        let b = self.buffers.as_ref().expect("reserved above");
        let link = &self.gpu;
        link.write(&b.w, 0, bytemuck::cast_slice(w));
        let single: Vec<f32> = w.iter().map(|&x| x as f32).collect();
        link.write(&b.w32, 0, bytemuck::cast_slice(&single));
        Ok(())
    }

    /// Makes the next solves' `W` one of `c` rows (`c` a multiple of 3),
    /// to be written on the device ([`Self::operator`]).
    pub(crate) fn reserve(&mut self, c: usize) -> Result<(), DeviceError> {
        if !c.is_multiple_of(3) {
            return Err(DeviceError::Input(format!("W of {c} rows: not a multiple of 3")));
        }
        fits(&self.gpu, &format!("W of {c} constraint rows"), 8 * c * c)?;
        if self.buffers.as_ref().is_none_or(|b| b.capacity < c) {
            self.buffers = Some(self.allocate(room(&self.gpu, c)));
        }
        let b = self.buffers.as_ref().expect("allocated above");
        let groups = (c / 3) as u32;
        let params = [c as u32, groups, grid(c as u32).0, item_stride(c), 0, 0, 0, 0];
        self.gpu.write(&b.params, 0, bytemuck::cast_slice(&params));
        self.rows = c;
        Ok(())
    }

    /// `W` and its f32 copy as the solves read them (row-major, `c × c`).
    pub(crate) fn operator(&self) -> Option<[&wgpu::Buffer; 2]> {
        self.buffers.as_ref().map(|b| [&b.w, &b.w32])
    }

    /// Where in [`Self::vectors`] (in f64) the complementarity scale `r` is.
    pub(crate) fn scale_at(&self) -> usize {
        SCALE * self.rows
    }

    /// Solves `δ = δ_free + W λ` under `laws` with complementarity scale
    /// `r` from the warm start in `lambda`, which receives the result;
    /// `delta` receives `δ` there.
    pub fn solve(
        &mut self,
        params: &NewtonParams,
        offset: Offset,
        laws: &[GroupLaw],
        r: &[f64],
        lambda: &mut [f64],
        delta: &mut [f64],
    ) -> Result<NewtonSolve, DeviceError> {
        let c = self.rows;
        let (offset_values, gaps) = match offset {
            Offset::Free(f) => (f, false),
            Offset::Gaps(g) => (g, true),
        };
        let lens = [("r", r.len()), ("δ", delta.len()), ("offset", offset_values.len())];
        same_rows(c, laws, lambda, &lens)?;
        if c == 0 {
            return Ok(NewtonSolve { converged: true, ..Default::default() });
        }
        self.upload(params, Some(offset_values), laws, Some(r), lambda);
        let b = self.buffers.as_ref().expect("a loaded W has buffers");
        let mut encoder = self.gpu.device.create_command_encoder(&Default::default());
        {
            let mut pass = self.gpu.pass(&mut encoder, self.timer.as_ref());
            self.record(&mut pass, &self.newton_kernels(params, gaps));
        }
        let (mut both, mut scalars) = (vec![0.0; 2 * c], [0.0; SCALARS]);
        let outs: &mut [&mut [f64]] = &mut [&mut both, &mut scalars];
        read_back_timed(&self.gpu, encoder, self.timer.as_ref(), &[&b.v, &b.s], &b.staging, outs)?;
        lambda.copy_from_slice(&both[..c]);
        delta.copy_from_slice(&both[c..]);
        Ok(solve_figures(&scalars))
    }

    /// Before a frame's solves ([`crate::GlobalStep::contact_frame`]):
    /// `λ⁰`, `r` (unless the frame writes it), the laws and the settings
    /// uploaded once; each solve then starts from the `λ` the last one
    /// left, and from the gaps `δ(q)` the frame writes into
    /// [`Self::gaps_at`].
    pub(crate) fn begin_frame(
        &self,
        params: &NewtonParams,
        laws: &[GroupLaw],
        r: Option<&[f64]>,
        lambda: &[f64],
    ) -> Result<(), DeviceError> {
        let c = self.rows;
        same_rows(c, laws, lambda, &[("r", r.map_or(c, <[f64]>::len))])?;
        self.upload(params, None, laws, r, lambda);
        Ok(())
    }

    /// Records one solve of a frame into `encoder`: `λ` kept in
    /// `previous` (the correction's `λᵏ`), the solve's scalars reset, its
    /// kernels (`δ_free` from the gaps), then its scalars copied into
    /// `history` at slot `k` ([`solve_figures`] reads them).
    pub(crate) fn record_frame_solve(
        &self,
        encoder: &mut wgpu::CommandEncoder,
        params: &NewtonParams,
        previous: &wgpu::Buffer,
        history: &wgpu::Buffer,
        k: usize,
    ) {
        let b = self.buffers.as_ref().expect("a loaded W has buffers");
        encoder.copy_buffer_to_buffer(&b.v, 0, previous, 0, 8 * self.rows as u64);
        encoder.clear_buffer(&b.s, 0, Some(8 * NCP_TOLERANCE as u64));
        {
            let mut pass = self.gpu.pass(encoder, None);
            self.record(&mut pass, &self.newton_kernels(params, true));
        }
        let bytes = 8 * SCALARS as u64;
        encoder.copy_buffer_to_buffer(&b.s, 0, history, bytes * k as u64, bytes);
    }

    /// The vectors `λ, δ, δ(q), …` of the loaded `W` (`λ` and `δ` first).
    pub(crate) fn vectors(&self) -> Option<&wgpu::Buffer> {
        self.buffers.as_ref().map(|b| &b.v)
    }

    /// Where in [`Self::vectors`] (in f64) a solve from gaps reads `δ(q)`.
    pub(crate) fn gaps_at(&self) -> usize {
        FREE * self.rows
    }

    /// Rows of the loaded `W`.
    pub(crate) fn rows(&self) -> usize {
        self.rows
    }

    /// Uploads a solve's inputs: `λ⁰`, the offset and `r` (when given), each row's `μ`
    /// (`−1` on attachments) and the NCP function; the scalars reset.
    fn upload(
        &self,
        params: &NewtonParams,
        offset: Option<&[f64]>,
        laws: &[GroupLaw],
        r: Option<&[f64]>,
        lambda: &[f64],
    ) {
        let (b, c) = (self.buffers.as_ref().expect("a loaded W has buffers"), self.rows);
        let link = &self.gpu;
        let put = |k: usize, x: &[f64]| link.write(&b.v, (8 * k * c) as u64, bytemuck::cast_slice(x));
        put(LAMBDA, lambda);
        if let Some(offset) = offset {
            put(FREE, offset);
        }
        if let Some(r) = r {
            put(SCALE, r);
        }
        let mu: Vec<f64> = laws
            .iter()
            .flat_map(|l| match *l {
                GroupLaw::Contact(mu) => [mu, 0.0, 0.0],
                GroupLaw::Attachment => [-1.0, 0.0, 0.0],
            })
            .collect();
        put(MU, &mu);
        let fischer = [params.fischer_burmeister as u32];
        link.write(&b.params, 16, bytemuck::cast_slice(&fischer));
        let mut scalars = [0.0f64; SCALARS];
        scalars[NCP_TOLERANCE] = params.ncp_tolerance;
        scalars[TOLERANCE] = params.tolerance;
        scalars[GROWTH_AT] = GROWTH;
        link.write(&b.s, 0, bytemuck::cast_slice(&scalars));
    }

    /// The whole solve as one sequence of kernels (`solver::newton`'s
    /// loop): `δ` at the warm start (`δ_free` formed first from the gaps
    /// when `gaps`), then `iterations` Newton steps, each a CR direction
    /// and a backtracking line search on the merit `½‖Φ‖²` of at most
    /// `LINE_SEARCH_HALVINGS` trials. The decisions are the control
    /// kernels': `newton_begin` stops the solve once `‖Φ‖∞` meets its
    /// tolerance, `line_search` accepts a trial or halves the step,
    /// `newton_end` stops once the step's relative change meets its
    /// tolerance; every kernel after a stop, and every trial after an
    /// accepted one, does nothing.
    fn newton_kernels(&self, params: &NewtonParams, gaps: bool) -> Vec<Kernel> {
        let mut k = vec![DELTA_FROM_LAMBDA];
        if gaps {
            k.push(FREE_FROM_GAPS);
        }
        k.extend([LINEARIZE, MEASURE]);
        let direction = self.direction_kernels(params.linear_iterations);
        for _ in 0..params.iterations.max(1) {
            k.push(NEWTON_BEGIN);
            k.extend(&direction);
            for _ in 0..LINE_SEARCH_HALVINGS {
                k.extend([TRIAL, DELTA_FROM_LAMBDA, LINEARIZE, MEASURE, LINE_SEARCH]);
            }
            k.push(NEWTON_END);
        }
        k
    }

    /// One Newton direction: setup, `W̃ Δλ_Z`, the right-hand side, CR's
    /// start and `iterations` CR steps, then `Δλ`.
    fn direction_kernels(&self, iterations: usize) -> Vec<Kernel> {
        let apply = [APPLY_PRE, TMP_FROM_SCALED32, APPLY_POST];
        let mut k = vec![DIRECTION_SETUP, TMP_FROM_SCALED, DIRECTION_RHS];
        k.extend(apply);
        k.push(CR_BEGIN);
        for _ in 0..iterations {
            k.extend([CR_MAP, CR_ALPHA, CR_UPDATE]);
            k.extend(apply);
            k.extend([CR_BETA, CR_DIRECTION]);
        }
        k.push(DIRECTION_FINISH);
        k
    }

    /// Records `kernels` in order into `pass`.
    fn record(&self, pass: &mut wgpu::ComputePass<'_>, kernels: &[Kernel]) {
        let b = self.buffers.as_ref().expect("a loaded W has buffers");
        let c = self.rows as u32;
        pass.set_bind_group(0, &b.group, &[]);
        for &(entry, shape) in kernels {
            let groups = match shape {
                Shape::Rows => grid(c),
                Shape::Groups => grid((c / 3).div_ceil(LANES)),
                Shape::Items => grid(c.div_ceil(LANES)),
                Shape::Reduce => (1, 1),
            };
            pass.set_pipeline(&self.pipelines[entry]);
            pass.dispatch_workgroups(groups.0, groups.1, 1);
        }
        self.gpu.dispatched(kernels.len());
    }

    fn allocate(&self, capacity: usize) -> Sized {
        let g = &*self.gpu;
        let rw = wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST;
        let input = wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST;
        let w = zeros(g, "W", capacity * capacity, input);
        let w32 = zeros(g, "W f32", (capacity * capacity).div_ceil(2), input);
        let v = zeros(g, "newton vectors", VECTORS * capacity, rw);
        let s = zeros(g, "newton scalars", SCALARS, rw);
        let params = g.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("newton params"),
            size: 32,
            usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let staging = zeros(
            g,
            "newton staging",
            2 * capacity + SCALARS + 2,
            wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        );
        let entries: Vec<wgpu::BindGroupEntry> = [&params, &w, &w32, &v, &s]
            .iter()
            .enumerate()
            .map(|(i, b)| wgpu::BindGroupEntry { binding: i as u32, resource: b.as_entire_binding() })
            .collect();
        let group = g.device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("newton"),
            layout: &self.layout,
            entries: &entries,
        });
        Sized { capacity, w, w32, v, s, params, group, staging }
    }
}

/// Rows to allocate for a `W` of `c` rows: half as many again, so that a
/// growing contact count does not reallocate every step, as far as `W`
/// still fits in one binding of the adapter (`c` itself fits).
fn room(gpu: &Link, c: usize) -> usize {
    let limit = gpu.device.limits().max_storage_buffer_binding_size as usize / 8;
    let most = (limit as f64).sqrt() as usize / 3 * 3;
    (c + c / 2).min(most).max(c)
}

/// An error unless the laws (three rows each), `λ` and the `more` named
/// lengths all give `c` rows, `W`'s.
fn same_rows(c: usize, laws: &[GroupLaw], lambda: &[f64], more: &[(&str, usize)]) -> Result<(), DeviceError> {
    let all = [("laws", 3 * laws.len()), ("λ", lambda.len())].into_iter().chain(more.iter().copied());
    match all.into_iter().find(|&(_, len)| len != c) {
        Some((what, len)) => Err(DeviceError::Input(format!("{what}: {len} rows, W has {c}"))),
        None => Ok(()),
    }
}

/// A solve's figures from its scalars (`SCALARS` values).
pub(crate) fn solve_figures(scalars: &[f64]) -> NewtonSolve {
    NewtonSolve {
        iterations: scalars[ITERATIONS] as usize,
        linear_iterations: scalars[LINEAR] as usize,
        error: scalars[ERROR],
        residual: scalars[PHI_MAX],
        converged: scalars[CONVERGED] != 0.0,
    }
}

/// Invocations along x of a per-item grid over `c` rows.
fn item_stride(c: usize) -> u32 {
    grid((c as u32).div_ceil(LANES)).0 * LANES
}
