//! Work split across threads: contiguous ranges of about equal cost, and a
//! buffer that concurrent tasks write in disjoint parts.

use std::ops::Range;

/// Splits `0..n` into `parts` contiguous ranges of about equal cost, where
/// `prefix[j]` is the summed cost of the items before `j` (`n + 1` entries).
pub(crate) fn balanced_parts(prefix: &[usize], parts: usize) -> Vec<Range<usize>> {
    let n = prefix.len() - 1;
    let total = prefix[n];
    let mut out = Vec::with_capacity(parts);
    let mut start = 0;
    for p in 1..=parts {
        let target = total * p / parts;
        let end = if p == parts { n } else { prefix.partition_point(|&c| c < target).min(n).max(start) };
        out.push(start..end);
        start = end;
    }
    out
}

/// Raw access to a buffer whose disjoint parts concurrent tasks write; each
/// user states why no two tasks touch the same entry while one writes it.
#[derive(Clone, Copy)]
pub(crate) struct SharedColumns(*mut f64);

// SAFETY: every use writes ranges no other task reads or writes meanwhile
// (see the `# Safety` sections below and the comments at each use).
unsafe impl Sync for SharedColumns {}
unsafe impl Send for SharedColumns {}

impl SharedColumns {
    /// Shares `buffer` (which must outlive every use of the result).
    pub(crate) fn new(buffer: &mut [f64]) -> SharedColumns {
        SharedColumns(buffer.as_mut_ptr())
    }

    /// # Safety
    /// `start..start + len` must lie in the buffer, and no other live
    /// reference may read or write that range.
    #[allow(clippy::mut_from_ref)]
    pub(crate) unsafe fn column(&self, start: usize, len: usize) -> &mut [f64] {
        unsafe { std::slice::from_raw_parts_mut(self.0.add(start), len) }
    }

    /// # Safety
    /// `start..start + len` must lie in the buffer, and no task may write
    /// that range while the returned slice lives.
    pub(crate) unsafe fn finished(&self, start: usize, len: usize) -> &[f64] {
        unsafe { std::slice::from_raw_parts(self.0.add(start), len) }
    }
}
