//! The Delassus operator of isolated DOFs on the device (zeng2022 §4,
//! eq. 23–24): `W̄ = Ī A⁻¹ Īᵀ = Zᵀ D⁻¹ Z` with `Z = L⁻¹ P Īᵀ`. The factor's
//! supernodal panels stay resident while it is unchanged; per call the
//! host uploads only the plan of the reach (its blocks, their sources and
//! levels, the columns' unit entries). The forward substitution runs in
//! supernodal form (`isodof_supernodal.wgsl`): one dispatch per level of
//! the supernodal tree within the reach, a workgroup per block and tile of
//! its columns, dense updates from the descendants' panels and a dense
//! triangular solve with its own. `Zᵀ D⁻¹ Z` is a tiled product. `Z` is
//! dense over the reach (zero where a column does not cross a block):
//! simpler than the CPU builder's blocks, with more flops in the product
//! where paths do not overlap.

mod plan;

use std::collections::HashMap;
use std::sync::Arc;

use ferrofem_linalg::{Ldlt, LdltSymbolic};

use crate::kernel::{bind, fits, grid, read_back_timed, storage, uniform, zeros, Dispatch};
use crate::link::Timer;
use crate::Link;
use ferrofem::device::DeviceError;
use plan::{Plan, Shape};

/// A factor `A = Pᵀ L D Lᵀ P` resident on the device: its supernodal panels.
#[derive(Debug)]
pub struct DeviceFactor {
    gpu: Link,
    /// The device time of each build, where the adapter has timestamps.
    timer: Option<Timer>,
    symbolic: Arc<LdltSymbolic>,
    d: Vec<f64>,
    /// The supernodes' columns, pattern and panel starts, patterns.
    shape: wgpu::Buffer,
    /// Offsets into `shape` of the pattern starts, panel starts, patterns.
    offsets: [u32; 3],
    panels: wgpu::Buffer,
    solve: wgpu::ComputePipeline,
    gram: wgpu::ComputePipeline,
    cross: wgpu::ComputePipeline,
    /// Bytes uploaded for the factor.
    pub upload_bytes: usize,
    cache: Cache,
}

/// Slots the cache may hold beyond twice the DOFs asked for (the CPU
/// cache evicts in place past a quarter more; this one starts over).
const CACHE_SLACK: usize = 96;

/// Isolated-DOF columns solved together on the device: `Z` over their
/// reach, column-major.
#[derive(Debug)]
struct Generation {
    dofs: Vec<usize>,
    /// Rows of `L` in the reach, increasing: the row of each slot of `Z`.
    members: Vec<u32>,
    z: wgpu::Buffer,
}

/// The device's isodof cache: the generations of columns solved with the
/// resident factor, and `W̄` over their slots (host, column-major, leading
/// dimension `capacity`).
#[derive(Debug, Default)]
struct Cache {
    generations: Vec<Generation>,
    slot: HashMap<usize, usize>,
    wbar: Vec<f64>,
    capacity: usize,
}

impl Cache {
    /// Adds a generation: its Gram block `gram` (`m × m`) and its blocks
    /// against the older generations `cross` (`m × old`), mirrored.
    fn extend(&mut self, gen: Generation, gram: &[f64], cross: &[f64], bound: usize) {
        let (old, m) = (self.slot.len(), gen.dofs.len());
        self.reserve(bound.max(old + m));
        let cap = self.capacity;
        for b in 0..m {
            for a in 0..m {
                self.wbar[(old + b) * cap + old + a] = gram[b * m + a];
            }
        }
        for b in 0..old {
            for a in 0..m {
                let x = cross[b * m + a];
                self.wbar[b * cap + old + a] = x;
                self.wbar[(old + a) * cap + b] = x;
            }
        }
        for (i, &d) in gen.dofs.iter().enumerate() {
            self.slot.insert(d, old + i);
        }
        self.generations.push(gen);
    }

    /// Grows `wbar` to at least `slots` slots, keeping its values.
    fn reserve(&mut self, slots: usize) {
        if slots <= self.capacity {
            return;
        }
        let mut grown = vec![0.0; slots * slots];
        let used = self.slot.len();
        for j in 0..used {
            grown[j * slots..j * slots + used]
                .copy_from_slice(&self.wbar[j * self.capacity..j * self.capacity + used]);
        }
        (self.wbar, self.capacity) = (grown, slots);
    }
}

/// The `at × at` submatrix of the column-major `w` (leading dimension
/// `ld`), column-major.
fn gather(w: &[f64], ld: usize, at: &[usize]) -> Vec<f64> {
    at.iter().flat_map(|&j| at.iter().map(move |&i| w[j * ld + i])).collect()
}

/// Mirrors the lower triangle of an `m × m` column-major matrix.
fn mirror(w: &mut [f64], m: usize) {
    for b in 0..m {
        for a in 0..b {
            w[b * m + a] = w[a * m + b];
        }
    }
}

impl DeviceFactor {
    /// Uploads `f`'s supernodal panels (the strict lower part of `L`,
    /// permuted numbering).
    pub fn new(gpu: impl Into<Link>, f: &Ldlt) -> Result<DeviceFactor, DeviceError> {
        let layout = Shape::new(f);
        let gpu: Link = gpu.into();
        let g = &gpu;
        fits(g, "the factor's panels", 8 * layout.panels.len())?;
        let factor = DeviceFactor {
            symbolic: f.symbolic().clone(),
            d: f.d.clone(),
            shape: storage(g, "supernodes", &layout.shape),
            offsets: layout.offsets,
            panels: storage(g, "panels", &layout.panels),
            solve: g.pipeline("isodof supernodal", include_str!("shaders/isodof_supernodal.wgsl")),
            gram: g.pipeline("gram", include_str!("shaders/gram.wgsl")),
            cross: g.pipeline("cross", include_str!("shaders/cross.wgsl")),
            cache: Cache::default(),
            upload_bytes: 4 * layout.shape.len() + 8 * layout.panels.len(),
            timer: gpu.timer(),
            gpu,
        };
        // No wait here: the build's one read-back reports upload errors.
        Ok(factor)
    }

    /// `W̄ = Ī A⁻¹ Īᵀ` for `dofs` (original numbering, distinct), `m × m`
    /// column-major in the order given (exactly symmetric), every column
    /// solved anew.
    pub fn delassus(&self, dofs: &[usize]) -> Result<Vec<f64>, DeviceError> {
        let (gen, mut gram, _) = self.generation(dofs, &[])?;
        let m = gen.dofs.len();
        mirror(&mut gram, m);
        let at: HashMap<usize, usize> = gen.dofs.iter().enumerate().map(|(i, &d)| (d, i)).collect();
        let pos: Vec<usize> = dofs.iter().map(|d| at[d]).collect();
        Ok(gather(&gram, m, &pos))
    }

    /// `W̄` for `dofs` as [`Self::delassus`], from the isodof cache
    /// (zeng2022 §5, eq. 26–30): the columns of DOFs seen since the factor
    /// was uploaded stay resident, only the others are solved, and only
    /// their blocks of `W̄` (new–new, new–old) are computed. The cache is
    /// emptied when it would hold more than twice the DOFs asked for (plus
    /// slack). Returns `W̄` and how many DOFs were reused.
    pub fn delassus_reuse(&mut self, dofs: &[usize]) -> Result<(Vec<f64>, usize), DeviceError> {
        let mut fresh: Vec<usize> =
            dofs.iter().copied().filter(|d| !self.cache.slot.contains_key(d)).collect();
        fresh.sort_unstable();
        fresh.dedup();
        let bound = 2 * dofs.len() + CACHE_SLACK;
        if self.cache.slot.len() + fresh.len() > bound {
            self.cache = Cache::default();
            fresh = dofs.to_vec();
            fresh.sort_unstable();
            fresh.dedup();
        }
        if !fresh.is_empty() {
            let (gen, mut gram, cross) = self.generation(&fresh, &self.cache.generations)?;
            mirror(&mut gram, fresh.len());
            self.cache.extend(gen, &gram, &cross, bound);
        }
        let slots: Vec<usize> = dofs.iter().map(|d| self.cache.slot[d]).collect();
        Ok((gather(&self.cache.wbar, self.cache.capacity, &slots), dofs.len() - fresh.len()))
    }

    /// Solves the columns of `dofs` (one generation): `Z` over their reach,
    /// the lower triangle of its Gram block `Zᵀ D⁻¹ Z` (`m × m`) and its
    /// blocks against the `older` generations (`m × Σ mₒ`, column-major).
    fn generation(
        &self,
        dofs: &[usize],
        older: &[Generation],
    ) -> Result<(Generation, Vec<f64>, Vec<f64>), DeviceError> {
        let n = self.symbolic.n();
        if let Some(&d) = dofs.iter().find(|&&d| d >= n) {
            return Err(DeviceError::Input(format!("isolated DOF {d} of a factor of {n} DOFs")));
        }
        let plan = Plan::new(&self.symbolic, &self.d, dofs);
        let (m, r) = (plan.order.len(), plan.members.len());
        fits(&self.gpu, &format!("Z of {r} reach rows × {m} columns"), 8 * r * m)?;
        let g = &self.gpu;
        let rw = wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST;
        let z = zeros(g, "Z", r * m, rw);
        let gen = Generation { dofs: plan.order, members: plan.members, z };
        if m == 0 {
            return Ok((gen, Vec::new(), Vec::new()));
        }
        let w = zeros(g, "W", m * m, rw);
        let words = storage(g, "isodof plan", &plan.words);
        let inv_d = storage(g, "inv_d", &plan.inv_d);
        let mut encoder = g.device.create_command_encoder(&Default::default());
        g.mark(&mut encoder, self.timer.as_ref(), false);
        let [pattern_ptr, panel_ptr, pattern] = self.offsets;
        let [src_ptr, sources, tasks, starts] = plan.offsets;
        for &(first, count) in &plan.levels {
            let (gx, gy) = grid(count);
            let params = [
                first,
                count,
                r as u32,
                gx,
                pattern_ptr,
                panel_ptr,
                pattern,
                src_ptr,
                sources,
                tasks,
                starts,
                0,
            ];
            let group =
                bind(g, &self.solve, &[&uniform(g, &params), &self.shape, &self.panels, &words, &gen.z]);
            // One pass per level: passes are ordered, so a level reads
            // what the levels below it wrote.
            let level = Dispatch { pipeline: self.solve.clone(), group, grid: (gx, gy) };
            level.record(g, &mut encoder.begin_compute_pass(&Default::default()));
        }
        let params = uniform(g, &[m as u32, r as u32]);
        let group = bind(g, &self.gram, &[&params, &gen.z, &inv_d, &w]);
        let tiles = (m as u32).div_ceil(16);
        let gram = Dispatch { pipeline: self.gram.clone(), group, grid: (tiles, tiles) };
        gram.record(g, &mut encoder.begin_compute_pass(&Default::default()));
        let old: usize = older.iter().map(|o| o.dofs.len()).sum();
        let cross = zeros(g, "W cross", m * old, rw);
        let mut offset = 0;
        for o in older {
            let (pa, pb, d) = self.shared_rows(&gen.members, &o.members);
            let (mo, ro) = (o.dofs.len(), o.members.len());
            if !pa.is_empty() {
                let params = uniform(g, &[m as u32, mo as u32, pa.len() as u32, r as u32, ro as u32, offset]);
                let b = [storage(g, "pairs", &pa), storage(g, "pairs", &pb), storage(g, "inv_d", &d)];
                let group = bind(g, &self.cross, &[&params, &gen.z, &o.z, &b[0], &b[1], &b[2], &cross]);
                let grid = ((mo as u32).div_ceil(16), tiles);
                let block = Dispatch { pipeline: self.cross.clone(), group, grid };
                block.record(g, &mut encoder.begin_compute_pass(&Default::default()));
            } else {
                encoder.clear_buffer(&cross, 8 * (offset as u64) * m as u64, Some(8 * (m * mo) as u64));
            }
            offset += mo as u32;
        }
        // One read-back for both: the host waits once per build.
        let (mut out, mut blocks) = (vec![0.0; m * m], vec![0.0; m * old]);
        let usage = wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST;
        g.mark(&mut encoder, self.timer.as_ref(), true);
        let staging = zeros(g, "W staging", m * (m + old) + 2, usage);
        let outs: &mut [&mut [f64]] = &mut [&mut out, &mut blocks];
        read_back_timed(g, encoder, self.timer.as_ref(), &[&w, &cross], &staging, outs)?;
        Ok((gen, out, blocks))
    }

    /// The rows two reaches share, as slot pairs, and `1/d` of each.
    fn shared_rows(&self, a: &[u32], b: &[u32]) -> (Vec<u32>, Vec<u32>, Vec<f64>) {
        let (mut pa, mut pb, mut d) = (Vec::new(), Vec::new(), Vec::new());
        let (mut i, mut j) = (0, 0);
        while i < a.len() && j < b.len() {
            match a[i].cmp(&b[j]) {
                std::cmp::Ordering::Less => i += 1,
                std::cmp::Ordering::Greater => j += 1,
                std::cmp::Ordering::Equal => {
                    pa.push(i as u32);
                    pb.push(j as u32);
                    d.push(1.0 / self.d[a[i] as usize]);
                    (i, j) = (i + 1, j + 1);
                }
            }
        }
        (pa, pb, d)
    }
}
