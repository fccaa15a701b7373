//! The tets' shares of a per-vertex sum, made several tets at a time and
//! summed where they are made instead of stored and gathered: the global
//! step's right-hand side `w (p − u) gₐ` (zeng2025 eq. 6) and the step
//! energy's gradient `|T| P gₐ` (eq. 1).
//!
//! The local step runs in chunks of consecutive tets side by side (about
//! [`CHUNKS_PER_THREAD`] per thread of the pool, of at least 8 batches of
//! [`LANES`] tets). A vertex belongs to the chunk of its first tet, which sums the
//! vertex's shares of its own tets in order as it goes (in cache, nothing
//! stored per tet); the shares of the vertex's tets in later chunks (the
//! *tail*) are stored one by one and added after, in order. Every vertex
//! therefore sums its shares from zero in the order of its tets, whatever
//! the chunks and threads: bitwise the sum of a gather over all shares
//! (from a start value per vertex: zero, or the gradient's inertia term).
//! On a mesh numbered layer by layer, about half the shares of a chunk
//! smaller than a layer are in tails; the rest never leave the cache.

use nalgebra::Vector3;

use crate::element::lanes::LANES;

/// Chunks per thread: enough to balance the threads; fewer, longer chunks
/// store fewer tails (a chunk owns the vertices it touches first, and on a
/// mesh numbered layer by layer about half of a thin chunk's are not).
/// The sums' bits never depend on the chunks.
const CHUNKS_PER_THREAD: usize = 8;

/// Fewest batches of [`LANES`] tets per chunk.
const MIN_BATCHES: usize = 8;

/// Marks a slot in a chunk's tail (else it is a chunk's owned sum).
const TAIL: u32 = 1 << 31;
/// Marks the first share of an owned sum, which starts it (`start + share`,
/// the gather's first addition: no zeroing pass).
const FIRST: u32 = 1 << 30;

/// Where each share goes, and the chunks' sums and tails.
#[derive(Debug, Clone, Default)]
pub(super) struct TetShares {
    /// Per tet and vertex: the index of its owned sum in its chunk (`FIRST |`
    /// for the sum's first share), or `TAIL |` its index in the chunk's tail.
    slots: Vec<[u32; 4]>,
    /// Tets per chunk (a multiple of [`LANES`]: a batch never straddles two).
    chunk: usize,
    /// Owned sums per chunk (every chunk's region this long).
    owned_stride: usize,
    /// Tail entries per chunk (every chunk's region this long).
    tail_stride: usize,
    /// The owned sums, chunk after chunk.
    owned: Vec<Vector3<f64>>,
    /// The tails, chunk after chunk, each in its tets' order.
    tail: Vec<Vector3<f64>>,
    /// Per vertex: its owned sum in `owned` (`u32::MAX`: in no tet).
    vertex_owned: Vec<u32>,
    /// Per vertex: its tail entries in `tail`, in tet order (CSR).
    vertex_tail_ptr: Vec<u32>,
    vertex_tail: Vec<u32>,
}

/// One chunk's view while the local step runs.
pub(super) struct ChunkShares<'a> {
    slots: &'a [[u32; 4]],
    owned: &'a mut [Vector3<f64>],
    tail: &'a mut [Vector3<f64>],
}

impl ChunkShares<'_> {
    /// Adds the shares of the chunk's tets `first..first + shares.len()`
    /// (counted in the chunk), whose vertices are `vertices`: into their
    /// owned sums (the first from `start(vertex)`), or their tail entries.
    pub(super) fn add(
        &mut self,
        first: usize,
        vertices: impl Iterator<Item = [usize; 4]>,
        shares: &[[Vector3<f64>; 4]],
        start: impl Fn(usize) -> Vector3<f64>,
    ) {
        for ((slots, tet), vs) in self.slots[first..first + shares.len()].iter().zip(shares).zip(vertices) {
            for ((&s, share), v) in slots.iter().zip(tet).zip(vs) {
                match s & (TAIL | FIRST) {
                    0 => self.owned[s as usize] += share,
                    FIRST => self.owned[(s & !FIRST) as usize] = start(v) + share,
                    _ => self.tail[(s & !TAIL) as usize] = *share,
                }
            }
        }
    }
}

impl TetShares {
    /// The slots of the tets of `n` vertices, given by their vertices.
    pub(super) fn new(n: usize, tets: impl ExactSizeIterator<Item = [usize; 4]>) -> TetShares {
        let chunks = CHUNKS_PER_THREAD * rayon::current_num_threads();
        let chunk = LANES * tets.len().div_ceil(chunks * LANES).max(MIN_BATCHES);
        let chunks = tets.len().div_ceil(chunk);
        let mut owner = vec![u32::MAX; n];
        let mut vertex_owned = vec![u32::MAX; n];
        let (mut owned_count, mut tail_count) = (vec![0u32; chunks], vec![0u32; chunks]);
        let mut tails: Vec<(u32, u32, u32)> = Vec::new();
        let mut slots = vec![[0u32; 4]; tets.len()];
        for (e, tet) in tets.enumerate() {
            let c = e / chunk;
            for (slot, v) in slots[e].iter_mut().zip(tet) {
                if owner[v] == u32::MAX {
                    (owner[v], vertex_owned[v]) = (c as u32, owned_count[c]);
                    owned_count[c] += 1;
                    *slot = FIRST | vertex_owned[v];
                    continue;
                }
                *slot = match owner[v] as usize == c {
                    true => vertex_owned[v],
                    false => {
                        tails.push((v as u32, c as u32, tail_count[c]));
                        tail_count[c] += 1;
                        TAIL | (tail_count[c] - 1)
                    }
                };
            }
        }
        // At least one entry each, so that every chunk has its regions.
        let owned_stride = owned_count.iter().max().copied().unwrap_or(0).max(1) as usize;
        let tail_stride = tail_count.iter().max().copied().unwrap_or(0).max(1) as usize;
        for (v, o) in vertex_owned.iter_mut().enumerate() {
            if *o != u32::MAX {
                *o += owner[v] * owned_stride as u32;
            }
        }
        let mut vertex_tail_ptr = vec![0u32; n + 1];
        tails.iter().for_each(|&(v, _, _)| vertex_tail_ptr[v as usize + 1] += 1);
        (0..n).for_each(|v| vertex_tail_ptr[v + 1] += vertex_tail_ptr[v]);
        let mut fill = vertex_tail_ptr.clone();
        let mut vertex_tail = vec![0u32; tails.len()];
        for &(v, c, i) in &tails {
            vertex_tail[fill[v as usize] as usize] = c * tail_stride as u32 + i;
            fill[v as usize] += 1;
        }
        TetShares {
            slots,
            chunk,
            owned_stride,
            tail_stride,
            owned: vec![Vector3::zeros(); chunks * owned_stride],
            tail: vec![Vector3::zeros(); chunks * tail_stride],
            vertex_owned,
            vertex_tail_ptr,
            vertex_tail,
        }
    }

    /// Tets per chunk.
    pub(super) fn chunk(&self) -> usize {
        self.chunk
    }

    /// Each chunk's view, in chunk order (for a parallel iterator zipped
    /// with the tets' chunks of [`Self::chunk`]).
    pub(super) fn chunks(&mut self) -> impl rayon::iter::IndexedParallelIterator<Item = ChunkShares<'_>> {
        use rayon::prelude::*;
        self.slots
            .par_chunks(self.chunk)
            .zip(self.owned.par_chunks_mut(self.owned_stride))
            .zip(self.tail.par_chunks_mut(self.tail_stride))
            .map(|((slots, owned), tail)| ChunkShares { slots, owned, tail })
    }

    /// Vertex `v`'s summed shares: its owned sum (`start`, the value it
    /// began from, where `v` is in no tet), then its tail in order.
    pub(super) fn sum(&self, v: usize, start: Vector3<f64>) -> Vector3<f64> {
        let mut acc = match self.vertex_owned[v] {
            u32::MAX => start,
            o => self.owned[o as usize],
        };
        let (lo, hi) = (self.vertex_tail_ptr[v] as usize, self.vertex_tail_ptr[v + 1] as usize);
        for &t in &self.vertex_tail[lo..hi] {
            acc += self.tail[t as usize];
        }
        acc
    }

    /// The fraction of shares that go through tails.
    #[cfg(test)]
    fn tail_fraction(&self) -> f64 {
        self.vertex_tail.len() as f64 / (4 * self.slots.len()).max(1) as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rayon::prelude::*;

    /// Shares made chunk by chunk on the pool's threads sum, per vertex,
    /// to the bits of a gather that adds them to the vertex's start value in
    /// tet order; a vertex in no tet keeps its start value.
    #[test]
    fn chunked_sums_equal_a_gather_in_tet_order() {
        for resolution in [3, 12] {
            let mesh = ferrofem_mesh::generate::ball(0.1, resolution).unwrap();
            let n = mesh.vertices.len() + 1;
            // Pseudo-random shares of mixed magnitude and sign: rounding
            // depends on the order of the sums.
            let mut seed = 0x9E37_79B9_7F4A_7C15u64;
            let mut next = move || {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                (seed >> 11) as f64 / (1u64 << 53) as f64 - 0.5
            };
            // Every seventh tet's shares are −0, and on the coarse ball all
            // are: a sum from +0 drops their sign.
            let shares: Vec<[Vector3<f64>; 4]> = (0..mesh.tets.len())
                .map(|e| match e.is_multiple_of(7) || resolution == 3 {
                    true => [Vector3::repeat(-0.0); 4],
                    false => std::array::from_fn(|_| Vector3::new(next() * 1e3, next(), next() * 1e-3)),
                })
                .collect();
            // Sums from a start value per vertex (±0 on the coarse ball).
            let start = |v: usize| match resolution {
                3 => Vector3::repeat(if v.is_multiple_of(2) { 0.0 } else { -0.0 }),
                _ => Vector3::new(v as f64, -0.5, 1e-3 * v as f64),
            };
            let mut expected: Vec<Vector3<f64>> = (0..n).map(start).collect();
            for (tet, s) in mesh.tets.iter().zip(&shares) {
                tet.iter().zip(s).for_each(|(&v, s)| expected[v] += s);
            }
            let mut t = TetShares::new(n, mesh.tets.iter().copied());
            let chunk = t.chunk();
            shares.par_chunks(chunk).zip(mesh.tets.par_chunks(chunk)).zip(t.chunks()).for_each(
                |((s, tets), mut c)| {
                    for (k, (batch, vs)) in s.chunks(LANES).zip(tets.chunks(LANES)).enumerate() {
                        c.add(k * LANES, vs.iter().copied(), batch, start);
                    }
                },
            );
            for (v, e) in expected.iter().enumerate() {
                assert_eq!(t.sum(v, start(v)).map(f64::to_bits), e.map(f64::to_bits), "vertex {v} of {n}");
            }
            let tails = t.tail_fraction();
            eprintln!(
                "ball {resolution}: {} tets, {:.0} % of the shares in tails",
                mesh.tets.len(),
                100.0 * tails
            );
            assert!(mesh.tets.len() > t.chunk() || tails == 0.0);
        }
    }
}
