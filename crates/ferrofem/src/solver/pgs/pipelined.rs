//! Projected Gauss–Seidel on an assembled `W`, its sweeps shared by the
//! pool's threads in Gauss–Seidel's own order.
//!
//! Group α's local problem needs `d_α = δ_free,α + Σ_{β<α} W_αβ λ_β⁽ᵏ⁾ +
//! Σ_{β>α} W_αβ λ_β⁽ᵏ⁻¹⁾` (zeng2022 eq. 16). The solver thread forms the
//! first sum from the prefix of α's three rows (the newest λ) and resolves
//! α; the second sum, the *upper sums* `u`, only involves the previous
//! sweep's λ, so the other threads accumulate it for the next sweep while
//! this one runs: as soon as group β is resolved they add `W_βα λ_β` (β's
//! row prefix; `W` is symmetric) to `u_α` for every α < β, each scatterer
//! its own range of α. The solver reads the lower triangle of `W` once per
//! sweep, and the scatterers read it once between them, where a sweep of
//! full rows reads all of it on one thread.
//!
//! Every sum is formed in a fixed order whichever thread forms it: the
//! upper sums by groups in increasing order, each by one [`Stored::axpy4`]
//! (whose every entry is the same chain of fused multiply-adds wherever a
//! range starts). When no other thread takes a range's scattering (one
//! worker, or a busy pool), the solver does it itself at the end of each
//! sweep, so results do not depend on the thread count.

use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use ferrofem_linalg::simd::Stored;
use ferrofem_linalg::spin::Backoff;
use nalgebra::{Matrix3, Vector3};

use super::{group_update, Pgs, PgsSolve};
use crate::constraint::ConstraintGroup;

/// Groups below which the sweep stays on one thread (the hand-over costs more).
const PARALLEL_GROUPS: usize = 48;

/// Upper sums a scatterer's range holds, at least: a shorter range costs
/// its thread more in polling than it saves the others.
const SCATTER_ROWS: usize = 96;

/// Most scatterers (on a pool of more threads the rest stay free).
const SCATTERERS: usize = 15;

/// A slice two threads share; who may touch which entry when is ordered by
/// [`Pipeline`]'s counters.
struct Shared<'a>(&'a [UnsafeCell<f64>]);

// SAFETY: every access goes through the protocol of `Pipeline`: an entry is
// written by one thread at a time, and read by another only after a
// release/acquire pair on a counter that follows the write.
unsafe impl Sync for Shared<'_> {}

impl<'a> Shared<'a> {
    fn new(v: &'a mut [f64]) -> Self {
        let len = v.len();
        // SAFETY: `UnsafeCell<f64>` has the layout of `f64`; the borrow is exclusive for `'a`.
        Shared(unsafe { std::slice::from_raw_parts(v.as_mut_ptr().cast::<UnsafeCell<f64>>(), len) })
    }

    /// # Safety
    /// No thread writes `range` while the slice lives.
    unsafe fn read(&self, range: std::ops::Range<usize>) -> &[f64] {
        let s = &self.0[range];
        // SAFETY: as documented; the cells are plain `f64`s.
        unsafe { std::slice::from_raw_parts(s.as_ptr().cast::<f64>(), s.len()) }
    }

    /// # Safety
    /// No other thread reads or writes `range` while the slice lives.
    #[allow(clippy::mut_from_ref)]
    unsafe fn write(&self, range: std::ops::Range<usize>) -> &mut [f64] {
        let s = &self.0[range];
        // SAFETY: as documented.
        unsafe { std::slice::from_raw_parts_mut(UnsafeCell::raw_get(s.as_ptr()), s.len()) }
    }
}

/// A counter on its own cache line (the solver publishes, the scatterer polls).
#[repr(align(64))]
#[derive(Default)]
struct Counter(AtomicUsize);

/// The state the threads share. Scatter item `t` is group `t mod G` of
/// sweep `t / G` (sweep 0 is the warm start); it adds that group's row
/// prefix times its λ to the upper sums of the next sweep,
/// `sums[(t / G) mod 2]`, each [`Range`] its part of them.
struct Pipeline<'a, P> {
    rows: &'a [P],
    c: usize,
    groups: usize,
    lambda: Shared<'a>,
    sums: [Shared<'a>; 2],
    /// Items whose λ is final: `sweep · G + groups resolved in it`.
    resolved: Counter,
    /// The upper sums cut among the scatterers.
    ranges: &'a [Range],
    finished: AtomicBool,
}

/// One scatterer's share of the upper sums, `u[start..end]`.
struct Range {
    start: usize,
    end: usize,
    /// Items scattered into it so far (written under `busy`).
    scattered: Counter,
    /// Held by whichever thread is scattering into it.
    busy: AtomicBool,
}

impl<P: Stored> Pipeline<'_, P> {
    /// The three rows of the group starting at `r0`, cut to the columns `cols` before it.
    fn prefix(&self, r0: usize, cols: std::ops::Range<usize>) -> [&[P]; 4] {
        let row = |i: usize| &self.rows[(r0 + i) * self.c + cols.start..(r0 + i) * self.c + cols.end];
        [row(0), row(1), row(2), row(2)]
    }

    /// Scatters the items `scattered..upto` into range `k` (the caller holds its `busy`).
    fn scatter_until(&self, k: usize, upto: usize) {
        let range = &self.ranges[k];
        let mut t = range.scattered.0.load(Ordering::Relaxed);
        while t < upto {
            let (sweep, g) = (t / self.groups, t % self.groups);
            let (r0, end) = (3 * g, range.end.min(3 * g));
            if range.start < end {
                // SAFETY: item t is resolved (t < `resolved`), so the solver
                // no longer writes λ of group g in this sweep and reads only
                // the other buffer of sums; only the `busy` holder of this
                // range writes its part of this one.
                let (l, sums) =
                    unsafe { (self.lambda.read(r0..r0 + 3), self.sums[sweep % 2].write(range.start..end)) };
                if l.iter().any(|&v| v != 0.0) {
                    P::axpy4(self.prefix(r0, range.start..end), [l[0], l[1], l[2], 0.0], sums);
                }
            }
            t += 1;
        }
        range.scattered.0.store(t, Ordering::Relaxed);
    }

    /// Takes every range's `busy` in turn, scatters it up to `upto`, lets go.
    fn drain(&self, upto: usize) {
        for (k, range) in self.ranges.iter().enumerate() {
            let mut backoff = Backoff::new();
            while range.busy.compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed).is_err()
            {
                backoff.snooze();
            }
            self.scatter_until(k, upto);
            range.busy.store(false, Ordering::Release);
        }
    }

    /// A scatterer: scatters resolved items into range `k` as they come,
    /// until the solve ends.
    fn scatterer(&self, k: usize) {
        let (range, mut backoff) = (&self.ranges[k], Backoff::new());
        while !self.finished.load(Ordering::Acquire) {
            let ready = self.resolved.0.load(Ordering::Acquire);
            if ready > range.scattered.0.load(Ordering::Relaxed)
                && range.busy.compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed).is_ok()
            {
                self.scatter_until(k, ready);
                range.busy.store(false, Ordering::Release);
                backoff.reset();
                continue;
            }
            backoff.snooze();
        }
    }
}

/// The upper sums `0..c` cut into up to `parts` (at most [`SCATTERERS`])
/// ranges of about equal work (entry α takes a product from each group
/// after it, `c − α` of them), bounds on multiples of eight entries; the
/// ranges in use are the first `.1`, in an array (a solve allocates
/// nothing).
fn scatter_ranges(c: usize, parts: usize) -> ([Range; SCATTERERS], usize) {
    let parts = parts.clamp(1, SCATTERERS);
    let total = c * (c + 1) / 2;
    // Entries before `a` carry `Σ_{α<a} (c − α)` of the work.
    let work_before = |a: usize| a * c - a * a.saturating_sub(1) / 2;
    let mut bounds = [c; SCATTERERS + 1];
    bounds[0] = 0;
    let (mut a, mut used) = (0, 1);
    for p in 1..parts {
        while a < c && work_before(a) < total * p / parts {
            a += 1;
        }
        let bound = a.next_multiple_of(8).min(c);
        if bound > bounds[used - 1] && bound < c {
            bounds[used] = bound;
            used += 1;
        }
    }
    bounds[used] = c;
    let ranges = std::array::from_fn(|k| Range {
        start: bounds[k.min(used)],
        end: bounds[(k + 1).min(used)],
        scattered: Counter::default(),
        busy: AtomicBool::new(false),
    });
    (ranges, used)
}

/// PGS on the assembled `W` whose rows are `rows` (row-major `c × c`, in
/// `f64` or an `f32` copy) and whose diagonal blocks are `blocks` (`f64`),
/// warm-started from `lambda`, the upper sums in `sums` (resized to `2c`):
/// sweeps as [`Pgs::solve_in`] does, in the same order, with the upper sums
/// formed by the pool's other threads.
pub(super) fn solve<P: Stored>(
    pgs: &Pgs,
    rows: &[P],
    free: &[f64],
    groups: &[ConstraintGroup],
    blocks: &[(usize, Matrix3<f64>)],
    sums: &mut Vec<f64>,
    lambda: &mut [f64],
) -> PgsSolve {
    let (c, g) = (free.len(), groups.len());
    assert!(
        rows.len() == c * c && c == 3 * g && lambda.len() == c,
        "W must be c×c over groups of three rows"
    );
    sums.clear();
    sums.resize(2 * c, 0.0);
    let (upper, next) = sums.split_at_mut(c);
    let threads = rayon::current_num_threads();
    let scatterers = if g >= PARALLEL_GROUPS { (threads - 1).min(c / SCATTER_ROWS).max(1) } else { 1 };
    let (ranges, used) = scatter_ranges(c, scatterers);
    let p = Pipeline {
        rows,
        c,
        groups: g,
        lambda: Shared::new(lambda),
        sums: [Shared::new(upper), Shared::new(next)],
        resolved: Counter(AtomicUsize::new(g)),
        ranges: &ranges[..used],
        finished: AtomicBool::new(false),
    };
    let sweeps = || {
        let out = sweep_all(pgs, &p, free, groups, blocks);
        p.finished.store(true, Ordering::Release);
        out
    };
    if g < PARALLEL_GROUPS || threads < 2 {
        return sweeps();
    }
    // Part 0 sweeps, the others scatter (a part no worker takes before the
    // sweeps end finds them finished; the solver drained its range).
    let out = std::sync::Mutex::new(None);
    ferrofem_linalg::team::for_each_part(1 + p.ranges.len(), |k| match k {
        0 => *out.lock().unwrap_or_else(|e| e.into_inner()) = Some(sweeps()),
        k => p.scatterer(k - 1),
    });
    out.into_inner().unwrap_or_else(|e| e.into_inner()).expect("the sweeps ran")
}

/// The solver thread: sweep `k` first drains sweep `k − 1`'s scatter, then
/// resolves the groups in order, publishing each.
fn sweep_all<P: Stored>(
    pgs: &Pgs,
    p: &Pipeline<'_, P>,
    free: &[f64],
    groups: &[ConstraintGroup],
    blocks: &[(usize, Matrix3<f64>)],
) -> PgsSolve {
    let g = groups.len();
    let mut out = PgsSolve::default();
    for k in 1..=pgs.settings.max_iterations.max(1) {
        p.drain(k * g);
        let (mut change, mut size) = (0.0f64, 0.0f64);
        for (a, (law, &(r0, waa))) in groups.iter().zip(blocks).enumerate() {
            // SAFETY: λ before r0 is final for this sweep and the scatterer
            // only reads λ; `sums[(k − 1) mod 2]` is not scattered into
            // during sweep k; λ of this group is read by the scatterer only
            // after it is published below.
            let (lower, upper, own) = unsafe {
                (
                    P::dot4(p.prefix(r0, 0..r0), p.lambda.read(0..r0)),
                    p.sums[(k - 1) % 2].write(r0..r0 + 3),
                    p.lambda.write(r0..r0 + 3),
                )
            };
            let d = Vector3::from_fn(|i, _| free[r0 + i] + lower[i] + upper[i]);
            upper.fill(0.0);
            let new = group_update(law, &waa, &d);
            for i in 0..3 {
                change = change.max((new[i] - own[i]).abs());
                size = size.max(new[i].abs());
                own[i] = new[i];
            }
            p.resolved.0.store(k * g + a + 1, Ordering::Release);
        }
        out = PgsSolve::after(k, change, size, pgs.settings.tolerance);
        if out.converged {
            break;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The ranges cover the upper sums in order, start on multiples of
    /// eight and carry about equal work (`c − α` products for entry α).
    #[test]
    fn scatter_ranges_cover_the_sums_with_equal_work() {
        for (c, parts) in [(150, 1), (1200, 4), (2175, 15), (20, 7)] {
            let (ranges, used) = scatter_ranges(c, parts);
            let ranges = &ranges[..used];
            assert!(ranges.len() <= parts && !ranges.is_empty(), "{c}, {parts}");
            assert_eq!((ranges[0].start, ranges[ranges.len() - 1].end), (0, c));
            assert!(ranges.windows(2).all(|r| r[0].end == r[1].start && r[1].start % 8 == 0));
            let work = |r: &Range| (r.start..r.end).map(|a| c - a).sum::<usize>() as f64;
            let fair = (c * (c + 1) / 2) as f64 / parts as f64;
            if c >= 8 * parts * 8 {
                assert!(
                    ranges.iter().all(|r| (work(r) - fair).abs() <= 0.05 * fair + 8.0 * c as f64),
                    "{c}, {parts}"
                );
            }
        }
    }
}
