//! The local-global global step on the device (zeng2025 eq. 6–8):
//! `q = A⁻¹ b = Pᵀ Sᵀ D⁻¹ S P b` as two SpMVs by the resident sparse
//! inverse, for the three axes in one pass each, after the right-hand
//! side `b = c + Σ h² w Gᵀ p` is assembled from the local step's
//! projections. Per iteration the host uploads the projections (and the
//! constant part `c` when it changed) and reads `q` back; or, given the
//! body's elastic terms, a whole frame without constraints runs here: the local
//! step too (`local.wgsl`), every iteration in one submission, `q` read
//! back once; and, given the step's constraint rows and `W`, a whole
//! frame with contact too (`contact.rs`).

mod contact;
mod delassus;

use ferrofem_linalg::SparseInverse;

use crate::kernel::{bind, dims, fits, grid, read_back_timed, storage, uniform, zeros, Dispatch, LANES};
use crate::link::Timer;
use crate::{DeviceNewton, Link};
use delassus::Columns;
use ferrofem::device::{DeviceError, DeviceTerms, RhsMap};
use ferrofem::element::Constitutive;

/// The tets' local step: `local.wgsl` with the Neo-Hookean and stable
/// Neo-Hookean projections and their prox.
const LOCAL_WGSL: &str = concat!(
    include_str!("shaders/local.wgsl"),
    include_str!("shaders/neo_hookean.wgsl"),
    include_str!("shaders/stable_neo_hookean.wgsl"),
    include_str!("shaders/prox.wgsl")
);

/// The membranes' local step: `membrane.wgsl` with Neo-Hookean's prox.
const MEMBRANE_WGSL: &str = concat!(include_str!("shaders/membrane.wgsl"), include_str!("shaders/prox.wgsl"));

/// `S` of [`SparseInverse`] twice as CSR on the device: its rows (for
/// `S P b`, columns already mapped through `P`) and its columns (rows of
/// `Sᵀ`, writing through `Pᵀ`).
#[derive(Debug)]
pub struct GlobalStep {
    gpu: Link,
    n: usize,
    /// `b`'s constant part and the projections (uploaded).
    constant: wgpu::Buffer,
    projections: wgpu::Buffer,
    projection_len: usize,
    /// `b` (assembled or uploaded) and `q`.
    rhs: wgpu::Buffer,
    solution: wgpu::Buffer,
    staging: wgpu::Buffer,
    assemble: Dispatch,
    forward: Dispatch,
    backward: Dispatch,
    /// Bytes the two SpMVs read per solve (values, indices, vectors).
    bytes: usize,
    /// The body's local step, when its terms were given.
    local: Option<LocalStep>,
    /// The device time of each submission, where the adapter has timestamps.
    timer: Option<Timer>,
    /// The constraint solve of frames with contact, made by the first.
    newton: Option<DeviceNewton>,
    /// `S` by columns (the `Sᵀ` SpMV's, and `W`'s build from them).
    columns: Columns,
}

/// The local step of a body's terms on the device (`local.wgsl` for tets,
/// `membrane.wgsl`, `bending.wgsl`) and the state it keeps per term: each
/// tet's last rotation, the ADMM duals.
#[derive(Debug)]
struct LocalStep {
    tets: usize,
    rotations: wgpu::Buffer,
    duals: [wgpu::Buffer; 2],
    fallbacks: wgpu::Buffer,
    /// `q`, the rotations and the fallback count, read back together.
    staging: wgpu::Buffer,
    /// One dispatch per kind of term present.
    project: Vec<Dispatch>,
}

impl LocalStep {
    /// Uploads the terms; the kernels read `x` and write their targets
    /// into `projections` (tets, then triangles, then stencils, as the
    /// right-hand-side map reads them).
    fn new(
        g: &Link,
        t: &DeviceTerms,
        [x, projections]: [&wgpu::Buffer; 2],
    ) -> Result<LocalStep, DeviceError> {
        let (tets, triangles, stencils) = (t.tets(), t.triangles(), t.stencils());
        let sizes = [
            ("tet coefficients", t.tet_coefficients.len(), DeviceTerms::TET_COEFFICIENTS * tets),
            (
                "triangle coefficients",
                t.triangle_coefficients.len(),
                DeviceTerms::TRIANGLE_COEFFICIENTS * triangles,
            ),
            ("stencil rest lengths", t.stencil_rest.len(), stencils),
            ("stencil coefficients", t.stencil_coefficients.len(), t.stencil_vertices.len()),
        ];
        if let Some((what, got, want)) = sizes.into_iter().find(|&(_, got, want)| got != want) {
            return Err(DeviceError::Input(format!("{what}: {got} values, expected {want}")));
        }
        let vertices = x.size() as usize / 24;
        let indices = [&t.tet_vertices, &t.triangle_vertices, &t.stencil_vertices];
        if let Some(&v) = indices.iter().flat_map(|i| i.iter()).find(|&&v| v as usize >= vertices) {
            return Err(DeviceError::Input(format!("a term names vertex {v} of a body of {vertices}")));
        }
        let rw = wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST;
        let rotations = zeros(g, "rotations", 9 * tets, rw);
        let duals = [zeros(g, "tet duals", 9 * tets, rw), zeros(g, "triangle duals", 6 * triangles, rw)];
        let fallbacks = zeros(g, "fallbacks", 1, rw);
        let read = wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST;
        // q, the rotations, the fallback count and two timestamps.
        let staging = zeros(g, "frame staging", x.size() as usize / 8 + 9 * tets + 3, read);
        let model = match t.model {
            Constitutive::Arap => 0,
            Constitutive::Corotational => 1,
            Constitutive::NeoHookean => 2,
            Constitutive::StableNeoHookean => 3,
        };
        let mut project = Vec::new();
        let kernel = |name, source: &str, count: usize, params: [u32; 2], buffers: &[&wgpu::Buffer]| {
            let pipeline = g.pipeline(name, source);
            let groups = grid((count as u32).div_ceil(LANES));
            let params = uniform(g, &[count as u32, groups.0 * LANES, params[0], params[1]]);
            let group = bind(g, &pipeline, &[&[&params], buffers].concat());
            Dispatch { pipeline, group, grid: groups }
        };
        if tets > 0 {
            let b = [
                storage(g, "tet vertices", &t.tet_vertices),
                storage(g, "tet coefficients", &t.tet_coefficients),
            ];
            let buffers = [&b[0], &b[1], x, &rotations, &duals[0], projections, &fallbacks];
            project.push(kernel("local", LOCAL_WGSL, tets, [model, t.arap_sweeps], &buffers));
        }
        if triangles > 0 {
            let b = [
                storage(g, "triangle vertices", &t.triangle_vertices),
                storage(g, "triangle coefficients", &t.triangle_coefficients),
            ];
            let buffers = [&b[0], &b[1], x, &duals[1], projections, &fallbacks];
            project.push(kernel("membrane", MEMBRANE_WGSL, triangles, [model, 9 * tets as u32], &buffers));
        }
        if stencils > 0 {
            let b = [
                storage(g, "stencil entries", &t.stencil_ptr),
                storage(g, "stencil vertices", &t.stencil_vertices),
                storage(g, "stencil coefficients", &t.stencil_coefficients),
                storage(g, "stencil rest lengths", &t.stencil_rest),
            ];
            let base = (9 * tets + 6 * triangles) as u32;
            let buffers = [&b[0], &b[1], &b[2], &b[3], x, projections];
            project.push(kernel(
                "bending",
                include_str!("shaders/bending.wgsl"),
                stencils,
                [base, 0],
                &buffers,
            ));
        }
        Ok(LocalStep { tets, rotations, duals, fallbacks, staging, project })
    }

    /// Projections the kernels write (what the right-hand-side map must
    /// hold).
    fn projections(t: &DeviceTerms) -> usize {
        9 * t.tets() + 6 * t.triangles() + 3 * t.stencils()
    }
}

/// The two SpMVs of `q = Pᵀ Sᵀ D⁻¹ S P b` (`spmv3.wgsl`, eight rows per
/// workgroup): `z = D⁻¹ S (P b)` by `S`'s rows, `q = Pᵀ Sᵀ z` by its
/// columns.
fn spmv_dispatches(
    g: &Link,
    s: &SparseInverse,
    columns: &Columns,
    [b, z, q]: [&wgpu::Buffer; 3],
) -> (Dispatch, Dispatch) {
    let n = s.col_ptr.len() - 1;
    let rows = row_layout(s);
    let ones = vec![1.0f64; n];
    let identity: Vec<u32> = (0..n as u32).collect();
    let perm32: Vec<u32> = s.perm().iter().map(|&p| p as u32).collect();
    let spmv = g.pipeline("spmv3", include_str!("shaders/spmv3.wgsl"));
    let groups = grid((n as u32).div_ceil(8));
    let csr = |matrix: [&wgpu::Buffer; 3], scale: &[f64], out: &[u32], x: &wgpu::Buffer, y: &wgpu::Buffer| {
        let b = [dims(g, n as u32, groups.0), storage(g, "row scale", scale), storage(g, "row output", out)];
        bind(g, &spmv, &[&b[0], matrix[0], matrix[1], matrix[2], &b[1], &b[2], x, y])
    };
    let s_rows = [storage(g, "S", &rows.ptr), storage(g, "S", &rows.cols), storage(g, "S", &rows.vals)];
    let forward = Dispatch {
        group: csr([&s_rows[0], &s_rows[1], &s_rows[2]], s.inv_d(), &identity, b, z),
        pipeline: spmv.clone(),
        grid: groups,
    };
    let s_columns = [&columns.ptr, &columns.rows, &columns.vals];
    let backward = Dispatch { group: csr(s_columns, &ones, &perm32, z, q), pipeline: spmv, grid: groups };
    (forward, backward)
}

/// The right-hand side's assembly (`rhs.wgsl`): `b = c + map(p)` into
/// the last of `[constant, projections, b]`.
fn assembly_dispatch(g: &Link, rhs: &RhsMap, [constant, projections, b_out]: [&wgpu::Buffer; 3]) -> Dispatch {
    let n = rhs.vertex_ptr.len() - 1;
    let assembly = g.pipeline("rhs", include_str!("shaders/rhs.wgsl"));
    let vgrid = grid((n as u32).div_ceil(LANES));
    let b = [
        dims(g, n as u32, vgrid.0 * LANES),
        storage(g, "vertex_ptr", &rhs.vertex_ptr),
        storage(g, "base", &rhs.base),
        storage(g, "coef", &rhs.coef),
    ];
    let group = bind(g, &assembly, &[&b[0], &b[1], &b[2], &b[3], constant, projections, b_out]);
    Dispatch { pipeline: assembly, group, grid: vgrid }
}

impl GlobalStep {
    /// Uploads `S` (both layouts), `D⁻¹`, `P` and the right-hand-side map.
    pub fn new(gpu: impl Into<Link>, s: &SparseInverse, rhs: &RhsMap) -> Result<GlobalStep, DeviceError> {
        GlobalStep::with_terms(gpu, s, rhs, None)
    }

    /// As [`Self::new`], with the body's terms for resident frames
    /// ([`Self::frame`]), laid in the map's `p` as the host lays them.
    pub fn with_terms(
        gpu: impl Into<Link>,
        s: &SparseInverse,
        rhs: &RhsMap,
        terms: Option<&DeviceTerms>,
    ) -> Result<GlobalStep, DeviceError> {
        let gpu: Link = gpu.into();
        let n = s.col_ptr.len() - 1;
        if rhs.vertex_ptr.len() != n + 1 {
            return Err(DeviceError::Input(format!(
                "right-hand-side map has {} vertices, the sparse inverse {n}",
                rhs.vertex_ptr.len().saturating_sub(1)
            )));
        }
        fits(&gpu, "the sparse inverse S", 8 * s.values.len())?;
        let g = &gpu;
        let use_rw =
            wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST;
        let upload = wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST;
        let constant = zeros(g, "constant", 3 * n, upload);
        let projections = zeros(g, "projections", rhs.projections, upload);
        let rhs_buf = zeros(g, "rhs", 3 * n, use_rw);
        let solution = zeros(g, "solution", 3 * n, use_rw);
        let staging =
            zeros(g, "staging", 3 * n + 2, wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST);
        let columns = Columns::new(g, s);
        let z = zeros(g, "z", 3 * n, use_rw);
        let (forward, backward) = spmv_dispatches(g, s, &columns, [&rhs_buf, &z, &solution]);
        let assemble = assembly_dispatch(g, rhs, [&constant, &projections, &rhs_buf]);
        let nnz = s.values.len();
        // Per SpMV: values and indices (12 B per entry), and per row its
        // pointer, scale and output index, x read and y written (64 B).
        let bytes = 2 * (12 * nnz + 64 * n);
        if let Some(t) = terms.filter(|t| LocalStep::projections(t) != rhs.projections) {
            let terms = LocalStep::projections(t);
            return Err(DeviceError::Input(format!(
                "terms of {terms} projections, the map has {}",
                rhs.projections
            )));
        }
        let local = terms.map(|t| LocalStep::new(g, t, [&solution, &projections])).transpose()?;
        let timer = gpu.timer();
        gpu.wait()?;
        Ok(GlobalStep {
            gpu,
            n,
            constant,
            projections,
            projection_len: rhs.projections,
            rhs: rhs_buf,
            solution,
            staging,
            assemble,
            forward,
            backward,
            bytes,
            local,
            timer,
            newton: None,
            columns,
        })
    }

    /// `q = A⁻¹ b` (flat, three values per vertex) from an uploaded `b`.
    pub fn solve(&mut self, b: &[f64], q: &mut [f64]) -> Result<(), DeviceError> {
        self.check_len("b", b.len(), 3 * self.n)?;
        self.check_len("q", q.len(), 3 * self.n)?;
        self.gpu.write(&self.rhs, 0, bytemuck::cast_slice(b));
        self.run(&[&self.forward, &self.backward], q)
    }

    /// `q = A⁻¹ (c + Σ h² w Gᵀ p)` with the projections `p` given as
    /// consecutive slices (tets, triangles, bending stencils) and the
    /// constant part `c` uploaded only when given (else the last one).
    pub fn solve_projected(
        &mut self,
        c: Option<&[f64]>,
        p: &[&[f64]],
        q: &mut [f64],
    ) -> Result<(), DeviceError> {
        let len: usize = p.iter().map(|s| s.len()).sum();
        self.check_len("projections", len, self.projection_len)?;
        self.check_len("q", q.len(), 3 * self.n)?;
        if let Some(c) = c {
            self.check_len("constant part", c.len(), 3 * self.n)?;
            self.gpu.write(&self.constant, 0, bytemuck::cast_slice(c));
        }
        let mut offset = 0;
        for part in p.iter().filter(|s| !s.is_empty()) {
            self.gpu.write(&self.projections, offset, bytemuck::cast_slice(part));
            offset += 8 * part.len() as u64;
        }
        self.run(&[&self.assemble, &self.forward, &self.backward], q)
    }

    /// Bytes the two SpMVs read per solve (the measure of bandwidth).
    pub fn spmv_bytes(&self) -> usize {
        self.bytes
    }

    /// Whether [`Self::frame`] can run (the terms were given).
    pub fn has_local_step(&self) -> bool {
        self.local.is_some()
    }

    /// What this object's link has counted (all objects of a backend
    /// share one set of counters).
    pub fn counters(&self) -> ferrofem::device::DeviceCounters {
        self.gpu.counters()
    }

    /// A frame without constraints on the device: `c` and `x` uploaded
    /// (`rotations` too when `upload_rotations`), the duals zeroed, then
    /// `iterations` × { local step, right-hand side, both SpMVs } in one
    /// submission; `x` and `rotations` read back in one host wait.
    /// Returns the projections counted where the CPU would take an SVD.
    pub fn frame(
        &mut self,
        c: &[f64],
        x: &mut [f64],
        rotations: &mut [f64],
        upload_rotations: bool,
        iterations: usize,
    ) -> Result<u64, DeviceError> {
        let Some(local) = &self.local else {
            return Err(DeviceError::Input("a resident frame needs the body's terms on the device".into()));
        };
        self.check_len("constant part", c.len(), 3 * self.n)?;
        self.check_len("x", x.len(), 3 * self.n)?;
        self.check_len("rotations", rotations.len(), 9 * local.tets)?;
        let g = &self.gpu;
        g.write(&self.constant, 0, bytemuck::cast_slice(c));
        g.write(&self.solution, 0, bytemuck::cast_slice(x));
        if upload_rotations {
            g.write(&local.rotations, 0, bytemuck::cast_slice(rotations));
        }
        let mut encoder = g.device.create_command_encoder(&Default::default());
        local.duals.iter().for_each(|d| encoder.clear_buffer(d, 0, None));
        encoder.clear_buffer(&local.fallbacks, 0, None);
        {
            let mut pass = g.pass(&mut encoder, self.timer.as_ref());
            for _ in 0..iterations {
                let global = [&self.assemble, &self.forward, &self.backward];
                local.project.iter().chain(global).for_each(|d| d.record(g, &mut pass));
            }
        }
        let mut count = [0.0];
        let sources = [&self.solution, &local.rotations, &local.fallbacks];
        let outs: &mut [&mut [f64]] = &mut [x, rotations, &mut count];
        read_back_timed(g, encoder, self.timer.as_ref(), &sources, &local.staging, outs)?;
        Ok(u64::from(count[0].to_bits() as u32))
    }

    fn run(&self, dispatches: &[&Dispatch], q: &mut [f64]) -> Result<(), DeviceError> {
        let (g, timer) = (&self.gpu, self.timer.as_ref());
        let mut encoder = g.device.create_command_encoder(&Default::default());
        {
            let mut pass = g.pass(&mut encoder, timer);
            dispatches.iter().for_each(|d| d.record(g, &mut pass));
        }
        read_back_timed(g, encoder, timer, &[&self.solution], &self.staging, &mut [q])
    }

    fn check_len(&self, what: &str, got: usize, want: usize) -> Result<(), DeviceError> {
        match got == want {
            true => Ok(()),
            false => Err(DeviceError::Input(format!("{what}: {got} values, expected {want}"))),
        }
    }
}

/// A CSR matrix on its way to the device.
struct Csr {
    ptr: Vec<u32>,
    cols: Vec<u32>,
    vals: Vec<f64>,
}

/// Rows of `S` (row `i`: the columns `j` whose etree path reaches `i`),
/// with `j` written as `P`'s original index so the SpMV reads `b` directly.
fn row_layout(s: &SparseInverse) -> Csr {
    let (n, perm) = (s.col_ptr.len() - 1, s.perm());
    let mut ptr = vec![0u32; n + 1];
    (0..n).flat_map(|j| s.column(j)).for_each(|(r, _)| ptr[r + 1] += 1);
    (0..n).for_each(|i| ptr[i + 1] += ptr[i]);
    let mut next = ptr.clone();
    let (mut cols, mut vals) = (vec![0u32; s.values.len()], vec![0.0; s.values.len()]);
    for j in 0..n {
        for (r, v) in s.column(j) {
            let k = next[r] as usize;
            (cols[k], vals[k]) = (perm[j] as u32, v);
            next[r] += 1;
        }
    }
    Csr { ptr, cols, vals }
}
