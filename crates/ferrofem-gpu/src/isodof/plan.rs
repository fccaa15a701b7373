//! The host's part of a supernodal isodof build (`isodof_supernodal.wgsl`):
//! the factor's supernodes as the device keeps them, and per build the
//! blocks of the reach, their sources, their levels and the tasks of each
//! level.

use ferrofem_linalg::ldlt::{isodof_reach, IsodofSpan};
use ferrofem_linalg::{Ldlt, LdltSymbolic};

/// Columns of a task (`TILE` of the kernel).
const TILE: usize = 4;

/// Words of a block in the plan (`BLOCK` of the kernel).
const BLOCK: usize = 8;

/// Marks a supernode outside the reach.
const NONE: u32 = u32::MAX;

/// The supernodal factor as the device keeps it: `shape` holds the
/// supernodes' first columns (`ns + 1`), their patterns' starts (`ns + 1`),
/// their panels' starts (`ns`) and the patterns, at the offsets given;
/// `panels` each supernode's `(w + q) × w` panel, column-major, each
/// column `k` from row `k + 1` on: the strict lower part of `L`, packed as
/// the factor keeps it (`at` of `isodof_supernodal.wgsl`).
pub(super) struct Shape {
    pub shape: Vec<u32>,
    pub panels: Vec<f64>,
    /// Offsets into `shape` of the pattern starts, panel starts, patterns.
    pub offsets: [u32; 3],
}

impl Shape {
    /// Lays out `f`'s panels (widened from single precision where the
    /// double values were released).
    pub fn new(f: &Ldlt) -> Shape {
        let sn = &f.symbolic().supernodes;
        let ns = sn.len();
        let (mut begin, mut pattern_ptr, mut panel_ptr, mut pattern) =
            (Vec::with_capacity(ns + 1), vec![0u32], Vec::with_capacity(ns), Vec::new());
        let mut panels = Vec::new();
        let mut scratch = Vec::new();
        for s in 0..ns {
            let (w, rows) = (sn.width(s), sn.pattern(s));
            let ld = w + rows.len();
            begin.push(sn.begin[s] as u32);
            pattern.extend_from_slice(rows);
            pattern_ptr.push(pattern.len() as u32);
            panel_ptr.push(panels.len() as u32);
            for k in 0..w {
                let below = f.l_column_in(sn.begin[s] + k, &mut scratch);
                debug_assert_eq!(below.len(), ld - k - 1, "supernode {s}, column {k}");
                panels.extend_from_slice(below);
            }
        }
        begin.push(f.symbolic().n() as u32);
        let offsets = [ns + 1, 2 * ns + 2, 3 * ns + 2].map(|o| o as u32);
        let shape = [begin, pattern_ptr, panel_ptr, pattern].concat();
        Shape { shape, panels, offsets }
    }
}

/// One build's plan: the columns in the order solved, the reach's rows,
/// and the words the kernel reads (blocks, source pointers, sources,
/// tasks, unit entries) with their offsets.
pub(super) struct Plan {
    /// The DOFs in the order of `Z`'s columns (sorted, distinct).
    pub order: Vec<usize>,
    /// Row of `L` of each slot of `Z` (increasing).
    pub members: Vec<u32>,
    /// `1 / d` per slot.
    pub inv_d: Vec<f64>,
    pub words: Vec<u32>,
    /// Offsets into `words` of the source pointers, sources, tasks, unit entries.
    pub offsets: [u32; 4],
    /// Each level's tasks: (first, count).
    pub levels: Vec<(u32, u32)>,
}

impl Plan {
    /// The plan for `dofs` (original numbering) on the supernodes of `s`,
    /// `d` the factor's diagonal.
    pub fn new(s: &LdltSymbolic, d: &[f64], dofs: &[usize]) -> Plan {
        let sn = &s.supernodes;
        let (order, spans) = isodof_reach(s, dofs);
        let mut index = vec![NONE; sn.len()];
        spans.iter().enumerate().for_each(|(b, x)| index[x.sn] = b as u32);
        // Slots: the blocks' rows from rho on, block after block.
        let (mut slot0, mut members) = (Vec::with_capacity(spans.len()), Vec::new());
        for x in &spans {
            slot0.push(members.len() as u32);
            members.extend((sn.begin[x.sn] + x.rho..sn.begin[x.sn + 1]).map(|r| r as u32));
        }
        let inv_d = members.iter().map(|&r| 1.0 / d[r as usize]).collect();
        let (starts, start_slot) = unit_entries(s, &order, &spans, &index, &slot0);
        let mut words = Vec::with_capacity(BLOCK * spans.len());
        for (b, x) in spans.iter().enumerate() {
            words.extend([x.sn, x.lo, x.hi, x.rho].map(|v| v as u32));
            words.extend([slot0[b], starts[b].start, starts[b].end, 0]);
        }
        let sources = sources(sn, &spans, &index);
        let mut offsets = [words.len() as u32, 0, 0, 0];
        words.push(0);
        words.extend(sources.iter().scan(0u32, |ptr, list| {
            *ptr += list.len() as u32;
            Some(*ptr)
        }));
        offsets[1] = words.len() as u32;
        words.extend(sources.iter().flatten().flatten());
        offsets[2] = words.len() as u32;
        let levels = tasks(&heights(&sn.parent, &spans, &index), &spans, &mut words);
        offsets[3] = words.len() as u32;
        words.extend(start_slot);
        Plan { order, members, inv_d, words, offsets, levels }
    }
}

/// The columns that start in each block (a contiguous range of `order`)
/// and the slot of each column's unit entry.
fn unit_entries(
    s: &LdltSymbolic,
    order: &[usize],
    spans: &[IsodofSpan],
    index: &[u32],
    slot0: &[u32],
) -> (Vec<std::ops::Range<u32>>, Vec<u32>) {
    let sn = &s.supernodes;
    let mut starts = vec![0..0; spans.len()];
    let mut slot = Vec::with_capacity(order.len());
    for (c, &dof) in order.iter().enumerate() {
        let p = s.perm_inv[dof];
        let b = index[sn.of_column[p] as usize] as usize;
        slot.push(slot0[b] + (p - sn.begin[spans[b].sn] - spans[b].rho) as u32);
        let c = c as u32;
        starts[b] = if starts[b].is_empty() { c..c + 1 } else { starts[b].start..c + 1 };
    }
    (starts, slot)
}

/// Appends each level's tasks (a block and the first of its tile of
/// columns) to `words`, levels in order; returns each level's (first, count).
fn tasks(height: &[usize], spans: &[IsodofSpan], words: &mut Vec<u32>) -> Vec<(u32, u32)> {
    let top = height.iter().copied().max().map_or(0, |h| h + 1);
    let mut by_level: Vec<Vec<usize>> = vec![Vec::new(); top];
    height.iter().enumerate().for_each(|(b, &h)| by_level[h].push(b));
    let mut first = 0u32;
    let mut levels = Vec::with_capacity(top);
    for blocks in by_level {
        let before = words.len();
        for b in blocks {
            for c0 in (spans[b].lo..spans[b].hi).step_by(TILE) {
                words.extend([b as u32, c0 as u32]);
            }
        }
        let count = ((words.len() - before) / 2) as u32;
        levels.push((first, count));
        first += count;
    }
    levels
}

/// Each block's level: one more than its children's highest (leaves 0).
/// Blocks are in increasing supernode order, children before parents.
fn heights(parent: &[usize], spans: &[IsodofSpan], index: &[u32]) -> Vec<usize> {
    let mut height = vec![0; spans.len()];
    for (b, x) in spans.iter().enumerate() {
        if let Some(&p) = index.get(parent[x.sn]).filter(|&&p| p != NONE) {
            height[p as usize] = height[p as usize].max(height[b] + 1);
        }
    }
    height
}

/// Each block's sources: `(block, p0, p1)` for each descendant block whose
/// pattern positions `p0..p1` are rows of it, in increasing source order.
fn sources(
    sn: &ferrofem_linalg::ldlt::SupernodeLayout,
    spans: &[IsodofSpan],
    index: &[u32],
) -> Vec<Vec<[u32; 3]>> {
    let mut out = vec![Vec::new(); spans.len()];
    for (b, x) in spans.iter().enumerate() {
        let pattern = sn.pattern(x.sn);
        let mut p0 = 0;
        while p0 < pattern.len() {
            let t = sn.of_column[pattern[p0] as usize];
            let p1 = p0 + pattern[p0..].iter().take_while(|&&r| sn.of_column[r as usize] == t).count();
            out[index[t as usize] as usize].push([b as u32, p0 as u32, p1 as u32]);
            p0 = p1;
        }
    }
    out
}
