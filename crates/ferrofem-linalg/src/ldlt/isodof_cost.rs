//! Where the isodof solves go and what they cost: the reach of a set of
//! DOFs in the supernodal tree, as spans of supernode rows, and the flops
//! of the isodof build and its reuse (zeng2022 §5, eq. 29–30).

use super::etree::NONE;
use super::LdltSymbolic;

/// A supernode of the reach: the columns `lo..hi` cross it, and its rows
/// before `rho` are structurally zero in all of them. A column of `S̄`
/// enters a supernode either at its own DOF or through the rows its
/// descendants' updates reach, so `rho` is the least of those rows; at a
/// ball's top separator it cuts a quarter of the rows (and ≈ 18% of the
/// flops of a bottom contact patch).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    /// The supernode.
    pub sn: usize,
    /// First column (of the sorted DOFs) that crosses it.
    pub lo: usize,
    /// One past the last column that crosses it.
    pub hi: usize,
    /// First of its rows (counted from its first column) any column reaches.
    pub rho: usize,
}

/// Flop counts of building `W̄` for a set of DOFs (the cost model of
/// `auto`), with `r_s = w_s − rho_s` the rows a supernode's block keeps.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct IsodofCost {
    /// Triangular solves and updates, `Σ_s r_s² k_s + 2 r_s q_s k_s`.
    pub solve_flops: f64,
    /// `W̄ = S̄ᵀ D⁻¹ S̄` (lower half), `Σ_s r_s k_s (k_s + 1)`.
    pub gram_flops: f64,
    /// Stored entries of `S̄`, `Σ_s r_s k_s`.
    pub entries: f64,
    /// Rows of the reach, `Σ_s r_s`: the height of `S̄` gathered densely.
    pub reach_rows: f64,
}

/// DOFs sorted by (postorder rank of their supernode, permuted index)
/// without duplicates, and the supernodes of their reach in increasing
/// order (children before parents): the columns that cross a supernode are
/// one contiguous range of the sorted DOFs.
pub fn reach(s: &LdltSymbolic, dofs: &[usize]) -> (Vec<usize>, Vec<Span>) {
    let sn = &s.supernodes;
    let key = |d: usize| {
        let p = s.perm_inv[d];
        (sn.postorder_rank[sn.of_column[p] as usize], p)
    };
    let mut sorted = dofs.to_vec();
    sorted.sort_unstable_by_key(|&d| key(d));
    sorted.dedup();
    // Span index of each supernode of the reach (`NONE` elsewhere); each
    // path is walked up to the first supernode already reached.
    let mut index = vec![NONE; sn.parent.len()];
    let mut spans: Vec<Span> = Vec::new();
    for (i, &d) in sorted.iter().enumerate() {
        let mut t = sn.of_column[s.perm_inv[d]] as usize;
        while t != NONE && index[t] == NONE {
            index[t] = spans.len();
            spans.push(Span { sn: t, lo: usize::MAX, hi: 0, rho: sn.width(t) });
            t = sn.parent[t];
        }
        let x = &mut spans[index[sn.of_column[s.perm_inv[d]] as usize]];
        (x.lo, x.hi) = (x.lo.min(i), x.hi.max(i + 1));
    }
    // The DOFs sorted by postorder are contiguous in every subtree: a
    // supernode's columns run from its descendants' first to their last.
    spans.sort_unstable_by_key(|x| sn.postorder_rank[x.sn]);
    spans.iter().enumerate().for_each(|(i, x)| index[x.sn] = i);
    for i in 0..spans.len() {
        let (t, lo, hi) = (sn.parent[spans[i].sn], spans[i].lo, spans[i].hi);
        if t != NONE {
            let p = &mut spans[index[t]];
            (p.lo, p.hi) = (p.lo.min(lo), p.hi.max(hi));
        }
    }
    spans.sort_unstable_by_key(|x| x.sn);
    spans.iter().enumerate().for_each(|(i, x)| index[x.sn] = i);
    let mut lower = |row: usize| {
        let x = &mut spans[index[sn.of_column[row] as usize]];
        x.rho = x.rho.min(row - sn.begin[x.sn]);
    };
    for &d in &sorted {
        lower(s.perm_inv[d]);
    }
    for t in 0..sn.parent.len() {
        if index[t] != NONE {
            sn.pattern(t).iter().for_each(|&r| lower(r as usize));
        }
    }
    (sorted, spans)
}

impl IsodofCost {
    /// The cost of `S̄` and `W̄` for `dofs`, from the symbolic structure alone.
    pub fn estimate(s: &LdltSymbolic, dofs: &[usize]) -> IsodofCost {
        let (_, spans) = reach(s, dofs);
        let sn = &s.supernodes;
        spans.iter().fold(IsodofCost::default(), |c, x| {
            let (r, q, k) =
                ((sn.width(x.sn) - x.rho) as f64, sn.pattern(x.sn).len() as f64, (x.hi - x.lo) as f64);
            IsodofCost {
                solve_flops: c.solve_flops + r * r * k + 2.0 * r * q * k,
                gram_flops: c.gram_flops + r * k * (k + 1.0),
                entries: c.entries + r * k,
                reach_rows: c.reach_rows + r,
            }
        })
    }
}
