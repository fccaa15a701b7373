//! Work split across threads: contiguous ranges of about equal cost, a
//! buffer that concurrent tasks write in disjoint parts, and a graph of
//! dependent steps that the pool's threads run with one hand-off.

use std::ops::Range;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

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
pub(crate) struct SharedColumns<T = f64>(*mut T);

impl<T> Clone for SharedColumns<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for SharedColumns<T> {}

// SAFETY: every use writes ranges no other task reads or writes meanwhile
// (see the `# Safety` sections below and the comments at each use).
unsafe impl<T: Send> Sync for SharedColumns<T> {}
unsafe impl<T: Send> Send for SharedColumns<T> {}

impl<T> SharedColumns<T> {
    /// Shares `buffer` (which must outlive every use of the result).
    pub(crate) fn new(buffer: &mut [T]) -> SharedColumns<T> {
        SharedColumns(buffer.as_mut_ptr())
    }

    /// # Safety
    /// `start..start + len` must lie in the buffer, and no other live
    /// reference may read or write that range.
    #[allow(clippy::mut_from_ref)]
    pub(crate) unsafe fn column(&self, start: usize, len: usize) -> &mut [T] {
        unsafe { std::slice::from_raw_parts_mut(self.0.add(start), len) }
    }

    /// # Safety
    /// `start..start + len` must lie in the buffer, and no task may write
    /// that range while the returned slice lives.
    pub(crate) unsafe fn finished(&self, start: usize, len: usize) -> &[T] {
        unsafe { std::slice::from_raw_parts(self.0.add(start), len) }
    }
}

/// Steps with dependencies, each on earlier steps only, run in their order
/// by the calling thread and the other threads of the pool, as far as
/// they are free: each thread claims the next unclaimed step, waits (spinning) until the steps
/// it depends on are done, and runs it. One hand-off per run instead of one
/// per phase; since each step runs once whoever claims it, results do not
/// depend on the thread count when no step's arithmetic does.
#[derive(Debug, Clone, Default)]
pub(crate) struct Dag {
    /// Dependencies of step `i`: `deps[ptr[i]..ptr[i + 1]]`.
    ptr: Vec<u32>,
    deps: Vec<u32>,
}

impl Dag {
    /// Appends a step that runs after `deps` (earlier steps); returns its index.
    pub(crate) fn push(&mut self, deps: impl IntoIterator<Item = usize>) -> usize {
        if self.ptr.is_empty() {
            self.ptr.push(0);
        }
        let i = self.ptr.len() - 1;
        for d in deps {
            assert!(d < i, "a step depends on earlier steps only");
            self.deps.push(d as u32);
        }
        self.ptr.push(self.deps.len() as u32);
        i
    }

    /// Number of steps.
    pub(crate) fn len(&self) -> usize {
        self.ptr.len().saturating_sub(1)
    }

    /// Runs every step once, `run(i)`, after its dependencies.
    pub(crate) fn run(&self, run: impl Fn(usize) + Sync) {
        let n = self.len();
        let next = AtomicUsize::new(0);
        let done: Vec<AtomicBool> = (0..n).map(|_| AtomicBool::new(false)).collect();
        let work = || loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            if i >= n {
                break;
            }
            for &d in &self.deps[self.ptr[i] as usize..self.ptr[i + 1] as usize] {
                wait_for(&done[d as usize]);
            }
            run(i);
            done[i].store(true, Ordering::Release);
        };
        let threads = rayon::current_num_threads();
        if threads > 1 {
            // A part per thread, each the claiming loop: a team's helpers
            // take theirs without a wake-up (rayon's loop outside a team).
            crate::team::for_each_part(threads, |_| work());
        } else {
            work();
        }
    }
}

/// Spins until `flag` is set (another thread is running that step), yielding
/// the core after a while on a machine with more threads than cores.
fn wait_for(flag: &AtomicBool) {
    crate::spin::spin_until(|| flag.load(Ordering::Acquire));
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every step runs once, after the steps it depends on, whatever the
    /// thread count: a chain, a fan-in and independent steps.
    #[test]
    fn dag_steps_run_once_after_their_dependencies() {
        let mut dag = Dag::default();
        let mut expected = Vec::new();
        for i in 0..200 {
            let deps: Vec<usize> = match i % 4 {
                0 if i > 0 => vec![i - 1],
                1 if i > 8 => vec![i - 9, i - 5, i - 2],
                _ => Vec::new(),
            };
            expected.push(deps.clone());
            assert_eq!(dag.push(deps), i);
        }
        for threads in [1, 2, 4] {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            let finished: Vec<AtomicUsize> = (0..dag.len()).map(|_| AtomicUsize::new(0)).collect();
            let clock = AtomicUsize::new(1);
            pool.install(|| {
                dag.run(|i| {
                    for &d in &expected[i] {
                        assert_ne!(finished[d].load(Ordering::Acquire), 0, "step {i} ran before step {d}");
                    }
                    std::hint::black_box((0..(i % 7) * 100).sum::<usize>());
                    let t = clock.fetch_add(1, Ordering::AcqRel);
                    assert_eq!(finished[i].swap(t, Ordering::Release), 0, "step {i} ran twice");
                })
            });
            assert!(
                finished.iter().all(|f| f.load(Ordering::Relaxed) > 0),
                "{threads} threads: every step ran"
            );
        }
    }
}
