//! A frame with constraint rows resident on the device (zeng2025
//! Algorithm 3–4 on one body): per iteration the local step, `b = c +
//! Σ h² w Gᵀ p + h² Hᵀ λ` (eq. 23b), the global step, the gaps `δ(q) = g +
//! H q` (eq. 40) written where the Newton solve reads them, the solve
//! itself (`newton.wgsl`, from the `λ` the last one left), then the
//! correction as `b += h² Hᵀ Δλ` and the global step again: `q + h² A⁻¹
//! Hᵀ Δλ`, the host path's correction to rounding; `W` itself built
//! first from the resident `S` (`delassus.rs`) unless uploaded. Every
//! iteration in one submission; `q`, the rotations, `λ`, `δ` and each
//! solve's figures read back in one host wait.

use ferrofem::device::{ContactFrame, ContactFrameOutcome, DeviceError, DeviceRows, FrameState};

use super::delassus::DelassusBuild;
use super::GlobalStep;
use crate::kernel::{bind, grid, read_back_timed, storage, uniform, zeros, Dispatch, LANES};
use crate::newton::{solve_figures, DeviceNewton, SCALARS};
use crate::Link;

/// The rows' kernels of one frame (`gaps.wgsl`, `forces.wgsl`) and the
/// `λᵏ` the correction subtracts.
struct RowKernels {
    gaps: Dispatch,
    forces: Dispatch,
    correction: Dispatch,
    previous: wgpu::Buffer,
}

impl RowKernels {
    /// Uploads `H` by rows and, scaled by `h²`, by DOFs; the kernels read
    /// `q` and write `b`, and read `λ` from and write the gaps into the
    /// solve's vectors `v` (from element `gaps_at`).
    fn new(g: &Link, rows: &DeviceRows, h: f64, [q, b, v]: [&wgpu::Buffer; 3], gaps_at: usize) -> RowKernels {
        let c = rows.rows();
        let pipeline = g.pipeline("gaps", include_str!("../shaders/gaps.wgsl"));
        let row_grid = grid((c as u32).div_ceil(LANES));
        let by_row = [
            uniform(g, &[c as u32, row_grid.0 * LANES, gaps_at as u32, 0]),
            storage(g, "row entries", &rows.row_ptr),
            storage(g, "row dofs", &rows.dofs),
            storage(g, "row coefficients", &rows.coef),
            storage(g, "gaps' constant part", &rows.gaps),
        ];
        let group = bind(g, &pipeline, &[&by_row[0], &by_row[1], &by_row[2], &by_row[3], &by_row[4], q, v]);
        let gaps = Dispatch { pipeline, group, grid: row_grid };
        let t = Transposed::new(rows, h * h);
        let pipeline = g.pipeline("forces", include_str!("../shaders/forces.wgsl"));
        let count = t.dof.len() as u32;
        let dof_grid = grid(count.div_ceil(LANES));
        let by_dof = [
            storage(g, "dof entries", &t.ptr),
            storage(g, "entry rows", &t.row),
            storage(g, "h² H by dof", &t.coef),
            storage(g, "touched dofs", &t.dof),
        ];
        let previous = zeros(g, "previous λ", c, wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST);
        let force = |mode: u32| {
            let dims = uniform(g, &[count, dof_grid.0 * LANES, mode, 0]);
            let buffers = [&dims, &by_dof[0], &by_dof[1], &by_dof[2], &by_dof[3], v, &previous, b];
            Dispatch { group: bind(g, &pipeline, &buffers), pipeline: pipeline.clone(), grid: dof_grid }
        };
        let (forces, correction) = (force(0), force(1));
        RowKernels { gaps, forces, correction, previous }
    }
}

/// `h² Hᵀ` by the DOFs the rows touch: each DOF's entries (their rows in
/// increasing order) between `ptr[i]` and `ptr[i + 1]`.
#[derive(Debug, Default, PartialEq)]
struct Transposed {
    ptr: Vec<u32>,
    row: Vec<u32>,
    coef: Vec<f64>,
    dof: Vec<u32>,
}

impl Transposed {
    fn new(rows: &DeviceRows, scale: f64) -> Transposed {
        let mut entries: Vec<(u32, u32, f64)> = (0..rows.rows())
            .flat_map(|j| {
                let range = rows.row_ptr[j] as usize..rows.row_ptr[j + 1] as usize;
                range.map(move |k| (rows.dofs[k], j as u32, scale * rows.coef[k]))
            })
            .collect();
        entries.sort_by_key(|&(dof, row, _)| (dof, row));
        let mut t = Transposed::default();
        for (i, &(dof, row, coef)) in entries.iter().enumerate() {
            if t.dof.last() != Some(&dof) {
                t.ptr.push(i as u32);
                t.dof.push(dof);
            }
            t.row.push(row);
            t.coef.push(coef);
        }
        t.ptr.push(entries.len() as u32);
        t
    }
}

/// An error unless `rows` is a well-formed CSR of `c` rows over `dofs`
/// DOFs with a constant per row.
fn check_rows(rows: &DeviceRows, c: usize, dofs: usize) -> Result<(), DeviceError> {
    let (ptr, nnz) = (&rows.row_ptr, rows.dofs.len());
    let bad = |what: String| Err(DeviceError::Input(format!("constraint rows: {what}")));
    if rows.rows() != c || rows.gaps.len() != c {
        return bad(format!("{} rows and {} gaps, W has {c}", rows.rows(), rows.gaps.len()));
    }
    if ptr.first() != Some(&0) || ptr.windows(2).any(|p| p[0] > p[1]) || ptr[c] as usize != nnz {
        return bad(format!("entry ranges are not increasing from 0 to {nnz}"));
    }
    if rows.coef.len() != nnz {
        return bad(format!("{} coefficients for {nnz} entries", rows.coef.len()));
    }
    match rows.dofs.iter().find(|&&d| d as usize >= dofs) {
        Some(d) => bad(format!("an entry names DOF {d} of a body of {dofs}")),
        None => Ok(()),
    }
}

impl GlobalStep {
    /// A frame with constraints on the device
    /// ([`ferrofem::device::DeviceGlobalStep::contact_frame`]): `W`, the
    /// rows, `c`, `x`, `λ⁰` (and the rotations when asked) uploaded, every
    /// iteration in one submission, one host wait.
    pub fn contact_frame(
        &mut self,
        f: &ContactFrame<'_>,
        state: FrameState<'_>,
    ) -> Result<ContactFrameOutcome, DeviceError> {
        let Some(local) = &self.local else {
            return Err(DeviceError::Input("a resident frame needs the body's terms on the device".into()));
        };
        let (n, c) = (self.n, f.rows.rows());
        self.check_len("constant part", f.c.len(), 3 * n)?;
        self.check_len("x", state.x.len(), 3 * n)?;
        self.check_len("rotations", state.rotations.len(), 9 * local.tets)?;
        self.check_len("δ", state.delta.len(), c)?;
        let Some(first) = f.solves.first() else {
            return Err(DeviceError::Input("a frame with constraints needs at least one iteration".into()));
        };
        let newton = self.newton.get_or_insert_with(|| DeviceNewton::compile(self.gpu.clone()));
        match f.w {
            Some(w) => newton.load(w)?,
            None => newton.reserve(c)?,
        }
        check_rows(f.rows, newton.rows(), 3 * n)?;
        if f.w.is_some() && f.r.is_none() {
            return Err(DeviceError::Input("an uploaded W needs its complementarity scale".into()));
        }
        newton.begin_frame(first, f.laws, f.r, state.lambda)?;
        let (g, newton) = (&self.gpu, self.newton.as_ref().expect("made above"));
        let v = newton.vectors().expect("a loaded W has vectors");
        let [w, w32] = newton.operator().expect("a loaded W has buffers");
        let scale_at = f.r.is_none().then(|| newton.scale_at());
        let build = match f.w {
            None => Some(DelassusBuild::new(g, &self.columns, f.rows, f.h, [w, w32, v], scale_at)?),
            Some(_) => None,
        };
        let rows = RowKernels::new(g, f.rows, f.h, [&self.solution, &self.rhs, v], newton.gaps_at());
        let iterations = f.solves.len();
        let usage = wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST;
        let history = zeros(g, "solves' figures", SCALARS * iterations, usage);
        g.write(&self.constant, 0, bytemuck::cast_slice(f.c));
        g.write(&self.solution, 0, bytemuck::cast_slice(state.x));
        if f.upload_rotations {
            g.write(&local.rotations, 0, bytemuck::cast_slice(state.rotations));
        }
        let mut encoder = g.device.create_command_encoder(&Default::default());
        g.mark(&mut encoder, self.timer.as_ref(), false);
        if let Some(build) = &build {
            build.record(g, &mut encoder);
        }
        local.duals.iter().for_each(|d| encoder.clear_buffer(d, 0, None));
        encoder.clear_buffer(&local.fallbacks, 0, None);
        let global = [&self.forward, &self.backward];
        for (k, params) in f.solves.iter().enumerate() {
            {
                let mut pass = g.pass(&mut encoder, None);
                let rhs = [&self.assemble, &rows.forces];
                let before = local.project.iter().chain(rhs).chain(global).chain([&rows.gaps]);
                before.for_each(|d| d.record(g, &mut pass));
            }
            newton.record_frame_solve(&mut encoder, params, &rows.previous, &history, k);
            let mut pass = g.pass(&mut encoder, None);
            [&rows.correction].into_iter().chain(global).for_each(|d| d.record(g, &mut pass));
        }
        g.mark(&mut encoder, self.timer.as_ref(), true);
        let len = 3 * n + 9 * local.tets + 1 + 2 * c + SCALARS * iterations + 2;
        let staging =
            zeros(g, "frame staging", len, wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST);
        let (mut count, mut both, mut figures) = ([0.0], vec![0.0; 2 * c], vec![0.0; SCALARS * iterations]);
        let sources = [&self.solution, &local.rotations, &local.fallbacks, v, &history];
        let outs: &mut [&mut [f64]] = &mut [state.x, state.rotations, &mut count, &mut both, &mut figures];
        read_back_timed(g, encoder, self.timer.as_ref(), &sources, &staging, outs)?;
        state.lambda.copy_from_slice(&both[..c]);
        state.delta.copy_from_slice(&both[c..]);
        Ok(ContactFrameOutcome {
            fallbacks: u64::from(count[0].to_bits() as u32),
            solves: figures.chunks_exact(SCALARS).map(solve_figures).collect(),
            delassus_vertices: build.map_or(0, |b| b.vertices),
        })
    }

    /// `W` of `rows` built on the device from the resident `S`
    /// ([`ferrofem::device::DeviceGlobalStep::delassus`]), read back in
    /// one host wait.
    pub fn delassus(&mut self, rows: &DeviceRows, h: f64) -> Result<Vec<f64>, DeviceError> {
        let (g, c) = (&self.gpu, rows.rows());
        check_rows(rows, c, 3 * self.n)?;
        let usage = wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC;
        let (w, w32, v) = (
            zeros(g, "W", c * c, usage),
            zeros(g, "W f32", (c * c).div_ceil(2), usage),
            zeros(g, "v", 1, usage),
        );
        let build = DelassusBuild::new(g, &self.columns, rows, h, [&w, &w32, &v], None)?;
        let mut encoder = g.device.create_command_encoder(&Default::default());
        g.mark(&mut encoder, self.timer.as_ref(), false);
        build.record(g, &mut encoder);
        g.mark(&mut encoder, self.timer.as_ref(), true);
        let mut out = vec![0.0; c * c];
        let staging =
            zeros(g, "W staging", c * c + 2, wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST);
        read_back_timed(g, encoder, self.timer.as_ref(), &[&w], &staging, &mut [&mut out])?;
        Ok(out)
    }

    /// Why `W` of `rows` cannot be built on the device, if it cannot.
    pub fn delassus_fits(&self, rows: &DeviceRows) -> Result<(), DeviceError> {
        DelassusBuild::fits(&self.gpu, &self.columns, rows)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `h² Hᵀ` by DOF holds every entry once, each DOF's rows in order.
    #[test]
    fn transposed_rows_hold_every_entry_by_dof() {
        let rows = DeviceRows {
            row_ptr: vec![0, 2, 3, 5],
            dofs: vec![4, 1, 4, 1, 7],
            coef: vec![1.0, 2.0, 3.0, 4.0, 5.0],
            gaps: vec![0.0; 3],
        };
        let t = Transposed::new(&rows, 2.0);
        assert_eq!(t.dof, [1, 4, 7]);
        assert_eq!(t.ptr, [0, 2, 4, 5]);
        assert_eq!(t.row, [0, 2, 0, 1, 2]);
        assert_eq!(t.coef, [4.0, 8.0, 2.0, 6.0, 10.0]);
        assert_eq!(Transposed::new(&DeviceRows { row_ptr: vec![0], ..Default::default() }, 1.0).ptr, [0]);
    }
}
