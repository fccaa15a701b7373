//! Fill-reducing orderings: nested dissection (METIS `NodeND`) on the graph
//! of `b×b` blocks (mesh vertices for 3-DOF FEM matrices), expanded per DOF;
//! or approximate minimum degree on the scalar matrix (faer's AMD).

use serde::{Deserialize, Serialize};

use crate::{CsrPattern, LinalgError};

/// Which fill-reducing ordering an LDLᵀ analysis uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Ordering {
    /// Nested dissection on the block graph (zeng2022 §3.4: separators on the mesh).
    #[serde(alias = "nested_dissection")]
    NestedDissection,
    /// Approximate minimum degree.
    Amd,
    /// Analyse with both and keep the one whose factorization needs fewer
    /// flops (`Σⱼ nnz(L:,j)²`): nested dissection wins on bulky meshes,
    /// AMD on thin, branchy ones (the raptor's limbs).
    #[default]
    Auto,
}

/// The graph of `block × block` blocks of a pattern (no self loops), as CSR.
pub fn block_graph(p: &CsrPattern, block: usize) -> (Vec<usize>, Vec<usize>) {
    let nv = p.nrows / block;
    let mut xadj = Vec::with_capacity(nv + 1);
    let mut adj = Vec::new();
    xadj.push(0);
    for v in 0..nv {
        let r = block * v;
        let mut last = usize::MAX;
        for &c in &p.col_idx[p.row_ptr[r]..p.row_ptr[r + 1]] {
            let w = c as usize / block;
            if w != v && w != last {
                adj.push(w);
                last = w;
            }
        }
        xadj.push(adj.len());
    }
    (xadj, adj)
}

/// METIS keeps its random generator in process-wide state (GKlib's
/// Mersenne twister, seeded per call): two orderings at once in one
/// process interleave its draws and give different, equally valid,
/// orderings — and so different round-off downstream. One call at a time
/// makes every ordering a function of its graph alone.
static METIS: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// METIS nested dissection of a graph given as CSR (symmetric, no self
/// loops); returns `perm` with new index `k` ↦ old vertex `perm[k]`.
/// Calls are serialized (METIS keeps global state), so the result depends on the
/// graph only, whatever runs beside it.
pub fn nested_dissection(xadj: &[usize], adjncy: &[usize]) -> Result<Vec<usize>, LinalgError> {
    let n = xadj.len().saturating_sub(1);
    if n == 0 {
        return Ok(Vec::new());
    }
    let to_idx = |x: usize| i32::try_from(x).map_err(|_| LinalgError::TooLarge(x));
    let mut nvtxs = to_idx(n)?;
    let mut x: Vec<i32> = xadj.iter().map(|&v| to_idx(v)).collect::<Result<_, _>>()?;
    let mut a: Vec<i32> = adjncy.iter().map(|&v| to_idx(v)).collect::<Result<_, _>>()?;
    let mut options = [0i32; metis_sys::METIS_NOPTIONS as usize];
    let mut perm = vec![0i32; n];
    let mut iperm = vec![0i32; n];
    let _one_at_a_time = METIS.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    // SAFETY: every pointer refers to a live buffer of the length METIS
    // expects (xadj n+1, adjncy xadj[n], options METIS_NOPTIONS, perm/iperm n);
    // an empty adjacency gets a valid one-element buffer.
    let status = unsafe {
        metis_sys::METIS_SetDefaultOptions(options.as_mut_ptr());
        if a.is_empty() {
            a.push(0);
        }
        metis_sys::METIS_NodeND(
            &mut nvtxs,
            x.as_mut_ptr(),
            a.as_mut_ptr(),
            std::ptr::null_mut(),
            options.as_mut_ptr(),
            perm.as_mut_ptr(),
            iperm.as_mut_ptr(),
        )
    };
    if status != metis_sys::rstatus_et_METIS_OK {
        return Err(LinalgError::Ordering(format!("METIS_NodeND returned status {status}")));
    }
    Ok(perm.into_iter().map(|p| p as usize).collect())
}

/// Expands a block permutation to scalars: new `b·k + d` ↦ old `b·perm[k] + d`.
pub fn expand_blocks(perm: &[usize], block: usize) -> Vec<usize> {
    perm.iter().flat_map(|&v| (0..block).map(move |d| block * v + d)).collect()
}

/// Whether `perm` is a permutation of `0..perm.len()`.
pub fn is_permutation(perm: &[usize]) -> bool {
    let mut seen = vec![false; perm.len()];
    perm.iter().all(|&p| p < seen.len() && !std::mem::replace(&mut seen[p], true))
}
