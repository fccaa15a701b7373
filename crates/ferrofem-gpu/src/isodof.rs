//! The Delassus operator of isolated DOFs on the device (zeng2022 §4,
//! eq. 23–24): `W̄ = Ī A⁻¹ Īᵀ = Zᵀ D⁻¹ Z` with `Z = L⁻¹ P Īᵀ`. The factor's
//! rows stay resident while it is unchanged; per call the host uploads
//! only the reach (the union of the columns' etree paths), its levels and
//! the columns' start rows. Each level of the etree within the reach is
//! one dispatch over its (row, column) pairs; `Zᵀ D⁻¹ Z` is a tiled
//! product. `Z` is dense over the reach: simpler than the CPU builder's
//! supernodal blocks, with more flops where paths do not overlap.

use std::sync::Arc;

use ferrofem_linalg::Ldlt;

use crate::kernel::{bind, fits, grid, read_back, storage, uniform, zeros, Dispatch};
use crate::{Gpu, GpuError};

/// Marks a row outside the reach.
const NONE: u32 = u32::MAX;

/// Most rows of a chain (`CHAIN` of `isodof_level.wgsl`): a longer path
/// (a wide separator) is cut into pieces on successive levels, which
/// keeps each invocation's loops short (Mesa's lavapipe stops a loop
/// after 65,535 iterations, leaving the rows after it unwritten).
const CHAIN: usize = 16;

/// (chain, column) pairs per workgroup of `isodof_level.wgsl`.
const PAIRS: u32 = 8;

/// A factor `A = Pᵀ L D Lᵀ P` resident on the device: the rows of `L`.
#[derive(Debug)]
pub struct DeviceFactor {
    gpu: Arc<Gpu>,
    n: usize,
    parent: Vec<usize>,
    perm_inv: Vec<usize>,
    d: Vec<f64>,
    l_ptr: wgpu::Buffer,
    l_col: wgpu::Buffer,
    l_val: wgpu::Buffer,
    level: wgpu::ComputePipeline,
    gram: wgpu::ComputePipeline,
    /// Bytes uploaded for the factor.
    pub upload_bytes: usize,
}

/// The reach of a set of columns, cut into chains, by level.
struct Reach {
    /// Slot of each row of `L`, [`NONE`] outside the reach.
    slot: Vec<u32>,
    /// Rows of each chain in order (`rows[ptr[k]..ptr[k + 1]]`), chains
    /// ordered by level, and each level's range of chains.
    rows: Vec<u32>,
    ptr: Vec<u32>,
    levels: Vec<(u32, u32)>,
    /// `1 / d` per slot.
    inv_d: Vec<f64>,
}

impl DeviceFactor {
    /// Uploads the strictly lower part of `f`'s `L` as rows (CSR,
    /// permuted numbering).
    pub fn new(gpu: Arc<Gpu>, f: &Ldlt) -> Result<DeviceFactor, GpuError> {
        let s = f.symbolic();
        let n = s.n();
        let mut ptr = vec![0u32; n + 1];
        s.l_row_idx.iter().for_each(|&i| ptr[i as usize + 1] += 1);
        (0..n).for_each(|i| ptr[i + 1] += ptr[i]);
        let mut next = ptr.clone();
        let (mut col, mut val) = (vec![0u32; s.l_row_idx.len()], vec![0.0; s.l_row_idx.len()]);
        for j in 0..n {
            for p in s.l_col_ptr[j]..s.l_col_ptr[j + 1] {
                let i = s.l_row_idx[p] as usize;
                let k = next[i] as usize;
                (col[k], val[k]) = (j as u32, f.l_values[p]);
                next[i] += 1;
            }
        }
        let g = &*gpu;
        fits(g, "the factor's L", 8 * val.len())?;
        let factor = DeviceFactor {
            n,
            parent: s.parent.clone(),
            perm_inv: s.perm_inv.clone(),
            d: f.d.clone(),
            l_ptr: storage(g, "L rows", &ptr),
            l_col: storage(g, "L columns", &col),
            l_val: storage(g, "L values", &val),
            level: g.pipeline("isodof level", include_str!("shaders/isodof_level.wgsl")),
            gram: g.pipeline("gram", include_str!("shaders/gram.wgsl")),
            upload_bytes: 4 * ptr.len() + 12 * col.len(),
            gpu,
        };
        factor.gpu.check()?;
        Ok(factor)
    }

    /// `W̄ = Ī A⁻¹ Īᵀ` for `dofs` (original numbering, distinct), `m × m`
    /// column-major in the order given (exactly symmetric).
    pub fn delassus(&self, dofs: &[usize]) -> Result<Vec<f64>, GpuError> {
        let m = dofs.len();
        if let Some(&d) = dofs.iter().find(|&&d| d >= self.n) {
            return Err(GpuError::Input(format!("isolated DOF {d} of a factor of {} DOFs", self.n)));
        }
        if m == 0 {
            return Ok(Vec::new());
        }
        let start: Vec<u32> = dofs.iter().map(|&d| self.perm_inv[d] as u32).collect();
        let reach = self.reach(&start);
        let r = reach.inv_d.len();
        fits(&self.gpu, &format!("Z of {r} reach rows × {m} columns"), 8 * r * m)?;
        let g = &*self.gpu;
        let rw = wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST;
        let z = zeros(g, "Z", r * m, rw);
        let w = zeros(g, "W", m * m, rw);
        let staging =
            zeros(g, "W staging", m * m, wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST);
        let (rows, ptr) = (storage(g, "chain rows", &reach.rows), storage(g, "chains", &reach.ptr));
        let (slot, starts) = (storage(g, "slots", &reach.slot), storage(g, "starts", &start));
        let inv_d = storage(g, "inv_d", &reach.inv_d);
        let mut encoder = g.device.create_command_encoder(&Default::default());
        for &(first, count) in &reach.levels {
            let (gx, gy) = grid((count * m as u32).div_ceil(PAIRS));
            let params = uniform(g, &[first, count, m as u32, r as u32, gx, 0, 0, 0]);
            let group = bind(
                g,
                &self.level,
                &[&params, &self.l_ptr, &self.l_col, &self.l_val, &ptr, &rows, &slot, &starts, &z],
            );
            // One pass per level: passes are ordered, so level k reads
            // what level k − 1 wrote.
            let level = Dispatch { pipeline: self.level.clone(), group, grid: (gx, gy) };
            level.record(&mut encoder.begin_compute_pass(&Default::default()));
        }
        let params = uniform(g, &[m as u32, r as u32]);
        let group = bind(g, &self.gram, &[&params, &z, &inv_d, &w]);
        let tiles = (m as u32).div_ceil(16);
        let gram = Dispatch { pipeline: self.gram.clone(), group, grid: (tiles, tiles) };
        gram.record(&mut encoder.begin_compute_pass(&Default::default()));
        let mut out = vec![0.0; m * m];
        read_back(g, encoder, &w, &staging, &mut out)?;
        for b in 0..m {
            for a in 0..b {
                out[b * m + a] = out[a * m + b];
            }
        }
        Ok(out)
    }

    /// The union of the etree paths from `start`, slots in increasing
    /// row order, cut into chains (a row continues its only child's
    /// chain, up to [`CHAIN`] rows), and levels by height of the chains (a chain's descendants
    /// in the reach all sit on lower levels).
    fn reach(&self, start: &[u32]) -> Reach {
        let mut slot = vec![NONE; self.n];
        let mut members = Vec::new();
        for &s in start {
            let mut i = s as usize;
            while i < self.n && slot[i] == NONE {
                slot[i] = 0;
                members.push(i);
                i = self.parent[i];
            }
        }
        members.sort_unstable();
        members.iter().enumerate().for_each(|(k, &i)| slot[i] = k as u32);
        let parent_slot =
            |k: usize| Some(self.parent[members[k]]).filter(|&p| p < self.n).map(|p| slot[p] as usize);
        let mut children = vec![0u32; members.len()];
        (0..members.len()).filter_map(parent_slot).for_each(|q| children[q] += 1);
        // Chains children first: a row with one child joins its chain.
        let mut chain = vec![usize::MAX; members.len()];
        let mut chains: Vec<Vec<u32>> = Vec::new();
        let mut height: Vec<u32> = Vec::new();
        for k in 0..members.len() {
            if chain[k] == usize::MAX {
                chain[k] = chains.len();
                chains.push(Vec::new());
                height.push(0);
            }
            chains[chain[k]].push(members[k] as u32);
            if let Some(q) = parent_slot(k) {
                if children[q] == 1 && chains[chain[k]].len() < CHAIN {
                    chain[q] = chain[k];
                } else {
                    let h = height[chain[k]] + 1;
                    if chain[q] == usize::MAX {
                        chain[q] = chains.len();
                        chains.push(Vec::new());
                        height.push(h);
                    } else {
                        height[chain[q]] = height[chain[q]].max(h);
                    }
                }
            }
        }
        let top = height.iter().copied().max().unwrap_or(0) as usize;
        let mut by_level: Vec<Vec<usize>> = vec![Vec::new(); top + 1];
        height.iter().enumerate().for_each(|(c, &h)| by_level[h as usize].push(c));
        let (mut rows, mut ptr, mut levels) = (Vec::with_capacity(members.len()), vec![0u32], Vec::new());
        for level in by_level {
            levels.push((ptr.len() as u32 - 1, level.len() as u32));
            for c in level {
                rows.extend(&chains[c]);
                ptr.push(rows.len() as u32);
            }
        }
        let inv_d = members.iter().map(|&i| 1.0 / self.d[i]).collect();
        Reach { slot, rows, ptr, levels, inv_d }
    }
}
