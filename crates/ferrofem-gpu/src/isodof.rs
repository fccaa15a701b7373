//! The Delassus operator of isolated DOFs on the device (zeng2022 §4,
//! eq. 23–24): `W̄ = Ī A⁻¹ Īᵀ = Zᵀ D⁻¹ Z` with `Z = L⁻¹ P Īᵀ`. The factor's
//! rows stay resident while it is unchanged; per call the host uploads
//! only the reach (the union of the columns' etree paths), its levels and
//! the columns' start rows. Each level of the etree within the reach is
//! one dispatch over its (row, column) pairs; `Zᵀ D⁻¹ Z` is a tiled
//! product. `Z` is dense over the reach: simpler than the CPU builder's
//! supernodal blocks, with more flops where paths do not overlap.

use std::collections::HashMap;

use ferrofem_linalg::Ldlt;

use crate::kernel::{bind, fits, grid, read_back_timed, storage, uniform, zeros, Dispatch};
use crate::link::Timer;
use crate::Link;
use ferrofem::device::DeviceError;

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
    gpu: Link,
    /// The device time of each build, where the adapter has timestamps.
    timer: Option<Timer>,
    n: usize,
    parent: Vec<usize>,
    perm_inv: Vec<usize>,
    d: Vec<f64>,
    l_ptr: wgpu::Buffer,
    l_col: wgpu::Buffer,
    l_val: wgpu::Buffer,
    level: wgpu::ComputePipeline,
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

/// Mirrors the lower triangle of an `m × m` column-major matrix.
fn mirror(w: &mut [f64], m: usize) {
    for b in 0..m {
        for a in 0..b {
            w[b * m + a] = w[a * m + b];
        }
    }
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
    /// The rows of the reach, increasing (row of each slot).
    members: Vec<u32>,
}

impl DeviceFactor {
    /// Uploads the strictly lower part of `f`'s `L` as rows (CSR,
    /// permuted numbering).
    pub fn new(gpu: impl Into<Link>, f: &Ldlt) -> Result<DeviceFactor, DeviceError> {
        let s = f.symbolic();
        let n = s.n();
        let mut ptr = vec![0u32; n + 1];
        s.l_row_idx().iter().for_each(|&i| ptr[i as usize + 1] += 1);
        (0..n).for_each(|i| ptr[i + 1] += ptr[i]);
        let mut next = ptr.clone();
        let (mut col, mut val) = (vec![0u32; s.l_row_idx().len()], vec![0.0; s.l_row_idx().len()]);
        let mut widened = Vec::new();
        for j in 0..n {
            let rows = &s.l_row_idx()[s.l_col_ptr[j]..s.l_col_ptr[j + 1]];
            for (&i, &l_ij) in rows.iter().zip(f.l_column_in(j, &mut widened)) {
                let k = next[i as usize] as usize;
                (col[k], val[k]) = (j as u32, l_ij);
                next[i as usize] += 1;
            }
        }
        let gpu: Link = gpu.into();
        let g = &gpu;
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
            cross: g.pipeline("cross", include_str!("shaders/cross.wgsl")),
            cache: Cache::default(),
            upload_bytes: 4 * ptr.len() + 12 * col.len(),
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
        let (_, mut gram, _) = self.generation(dofs, &[])?;
        mirror(&mut gram, dofs.len());
        Ok(gram)
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
        let (w, cap) = (&self.cache.wbar, self.cache.capacity);
        let out = slots.iter().flat_map(|&j| slots.iter().map(move |&i| w[j * cap + i])).collect();
        Ok((out, dofs.len() - fresh.len()))
    }

    /// Solves the columns of `dofs` (one generation): `Z` over their reach,
    /// the lower triangle of its Gram block `Zᵀ D⁻¹ Z` (`m × m`) and its
    /// blocks against the `older` generations (`m × Σ mₒ`, column-major).
    fn generation(
        &self,
        dofs: &[usize],
        older: &[Generation],
    ) -> Result<(Generation, Vec<f64>, Vec<f64>), DeviceError> {
        let m = dofs.len();
        if let Some(&d) = dofs.iter().find(|&&d| d >= self.n) {
            return Err(DeviceError::Input(format!("isolated DOF {d} of a factor of {} DOFs", self.n)));
        }
        let start: Vec<u32> = dofs.iter().map(|&d| self.perm_inv[d] as u32).collect();
        let reach = self.reach(&start);
        let r = reach.inv_d.len();
        fits(&self.gpu, &format!("Z of {r} reach rows × {m} columns"), 8 * r * m)?;
        let g = &self.gpu;
        let rw = wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST;
        let z = zeros(g, "Z", r * m, rw);
        let gen = Generation { dofs: dofs.to_vec(), members: reach.members.clone(), z };
        if m == 0 {
            return Ok((gen, Vec::new(), Vec::new()));
        }
        let w = zeros(g, "W", m * m, rw);
        let (rows, ptr) = (storage(g, "chain rows", &reach.rows), storage(g, "chains", &reach.ptr));
        let (slot, starts) = (storage(g, "slots", &reach.slot), storage(g, "starts", &start));
        let inv_d = storage(g, "inv_d", &reach.inv_d);
        let mut encoder = g.device.create_command_encoder(&Default::default());
        g.mark(&mut encoder, self.timer.as_ref(), false);
        for &(first, count) in &reach.levels {
            let (gx, gy) = grid((count * m as u32).div_ceil(PAIRS));
            let params = uniform(g, &[first, count, m as u32, r as u32, gx, 0, 0, 0]);
            let group = bind(
                g,
                &self.level,
                &[&params, &self.l_ptr, &self.l_col, &self.l_val, &ptr, &rows, &slot, &starts, &gen.z],
            );
            // One pass per level: passes are ordered, so level k reads
            // what level k − 1 wrote.
            let level = Dispatch { pipeline: self.level.clone(), group, grid: (gx, gy) };
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
        let members = members.iter().map(|&i| i as u32).collect();
        Reach { slot, rows, ptr, levels, inv_d, members }
    }
}
