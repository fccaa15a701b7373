//! Elimination trees: the parent of column `j` is the first off-diagonal
//! row of column `j` of `L` (Liu 1990); a column's pattern lies on its path
//! to the root (zeng2022 §4.2; zeng2025 Theorem 1).

/// Marks a root in a parent array.
pub const NONE: usize = usize::MAX;

/// Parent array from the strictly-lower CSC pattern of `L` (sorted rows).
pub fn parent_from_l(n: usize, col_ptr: &[usize], row_idx: &[u32]) -> Vec<usize> {
    (0..n)
        .map(|j| {
            row_idx.get(col_ptr[j]).filter(|_| col_ptr[j] < col_ptr[j + 1]).map_or(NONE, |&r| r as usize)
        })
        .collect()
}

/// A postorder of the forest (children before parents, each subtree contiguous).
pub fn postorder(parent: &[usize]) -> Vec<usize> {
    let n = parent.len();
    let mut head = vec![NONE; n];
    let mut next = vec![NONE; n];
    for j in (0..n).rev() {
        if parent[j] != NONE {
            next[j] = head[parent[j]];
            head[parent[j]] = j;
        }
    }
    let mut order = Vec::with_capacity(n);
    let mut stack = Vec::new();
    for root in (0..n).filter(|&j| parent[j] == NONE) {
        stack.push((root, false));
        while let Some((v, expanded)) = stack.pop() {
            if expanded {
                order.push(v);
                continue;
            }
            stack.push((v, true));
            let mut c = head[v];
            let mut kids = Vec::new();
            while c != NONE {
                kids.push(c);
                c = next[c];
            }
            stack.extend(kids.into_iter().rev().map(|k| (k, false)));
        }
    }
    order
}

/// Length of the path from `j` to its root, `j` included.
pub fn path_len(parent: &[usize], mut j: usize) -> usize {
    let mut len = 1;
    while parent[j] != NONE {
        j = parent[j];
        len += 1;
    }
    len
}

/// Elimination tree of `P A Pᵀ` computed from `A`'s pattern alone (Liu's
/// algorithm with path compression), independent of any factorization.
pub fn from_matrix(row_ptr: &[usize], col_idx: &[u32], perm: &[usize], perm_inv: &[usize]) -> Vec<usize> {
    let n = perm.len();
    let mut parent = vec![NONE; n];
    let mut ancestor = vec![NONE; n];
    for k in 0..n {
        let old = perm[k];
        for &c in &col_idx[row_ptr[old]..row_ptr[old + 1]] {
            let mut i = perm_inv[c as usize];
            while i < k {
                let next = ancestor[i];
                ancestor[i] = k;
                if next == NONE {
                    parent[i] = k;
                    break;
                }
                i = next;
            }
        }
    }
    parent
}
