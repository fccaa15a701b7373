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
//! With three scatterers or more, the solver stops reading most of the
//! prefix too: the scatterers also add each resolved β's row, beyond a
//! window of [`LOWER_WINDOW`] entries, into *lane sums* of the groups
//! after it, the chains [`Stored::dot4`] would form over those entries
//! ([`Stored::lane_axpy`]); the solver finishes α's sum over the window from
//! them ([`Stored::dot4_from`]), bit for bit the sum it would have formed.
//!
//! Every sum is formed in a fixed order whichever thread forms it: the
//! upper sums by groups in increasing order, each by one [`Stored::axpy4`]
//! (whose every entry is the same chain of fused multiply-adds wherever a
//! range starts). When no other thread takes a range's scattering (one
//! worker, or a busy pool), the solver does it itself at the end of each
//! sweep, so results do not depend on the thread count.

use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use ferrofem_linalg::simd::{Stored, COLUMNS, LANES};
use ferrofem_linalg::spin::Backoff;
use nalgebra::{Matrix3, Vector3};

use super::{group_update, Pgs, PgsSolve};
use crate::constraint::ConstraintGroup;

/// Groups below which the sweep stays on one thread (the hand-over costs more).
const PARALLEL_GROUPS: usize = 48;

/// Upper sums a scatterer's range holds, at least: a shorter range costs
/// its thread more in polling than it saves the others.
const SCATTER_ROWS: usize = 96;

/// Most scatterers (on a pool of more threads the rest stay free): on 16
/// cores, PGS at 20k vertices took 19.3 ms with seven against 24.2 with
/// fifteen (medians of three), whose polling of the solver's counter cost
/// it more than their ranges saved.
const SCATTERERS: usize = 7;

/// Scatterers from which the lower sums are formed in lanes: with fewer,
/// a scatterer reading whole rows is slower than the solver reading the
/// prefix.
const LANE_SCATTERERS: usize = 3;

/// Entries before a group's rows that the solver sums itself when the lower
/// sums are formed in lanes (about: the window starts on a multiple of
/// [`LANES`]), so that it rarely waits for a scatterer.
const LOWER_WINDOW: usize = 96;

/// Checks of a range's progress before the solver scatters into it itself.
const PATIENCE: usize = 256;

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
    /// The lower sums' lanes, `lanes[j c + e]` the chain of lane `j` of
    /// entry `e` (when the scatterers form them).
    lanes: Option<Shared<'a>>,
    finished: AtomicBool,
}

/// One scatterer's share of the upper sums, `u[start..end]`.
struct Range {
    start: usize,
    end: usize,
    /// Items scattered into it so far (written under `busy`, released
    /// after the item's sums).
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
            // SAFETY: item t is resolved (t < `resolved`), so the solver no
            // longer writes λ of group g in this sweep.
            let l = unsafe { self.lambda.read(r0..r0 + 3) };
            if range.start < end && l.iter().any(|&v| v != 0.0) {
                // SAFETY: the solver reads only the other buffer of sums;
                // only the `busy` holder of this range writes its part of this one.
                let sums = unsafe { self.sums[sweep % 2].write(range.start..end) };
                P::axpy4(self.prefix(r0, range.start..end), [l[0], l[1], l[2], 0.0], sums);
            }
            if sweep > 0 {
                self.scatter_lanes(range, r0, l);
            }
            t += 1;
        }
        range.scattered.0.store(t, Ordering::Release);
    }

    /// Adds the rows `r0..r0 + 3` of a group resolved in this sweep, times
    /// its λ `l`, to the lanes of the entries in `range` whose window
    /// starts past them (none when the lanes are off). A zero λ adds
    /// nothing: a chain begun at +0 is never −0.
    fn scatter_lanes(&self, range: &Range, r0: usize, l: &[f64]) {
        let Some(lanes) = &self.lanes else { return };
        for (i, &v) in l.iter().enumerate() {
            let (col, c) = (r0 + i, self.c);
            let e0 = range.start.max(lane_start(col));
            if v != 0.0 && e0 < range.end {
                let lane = col % LANES * c;
                // SAFETY: the entries `e0..` wait for this item before the
                // solver reads their lanes, and no other item's scatter
                // into this range runs meanwhile (`busy`).
                let y = unsafe { lanes.write(lane + e0..lane + range.end) };
                P::lane_axpy(v, &self.rows[col * c + e0..col * c + range.end], y);
            }
        }
    }

    /// Waits until every range holding the entries `e` has scattered the
    /// items before `upto` (spinning, then scattering itself where a range
    /// has no thread: a busy pool).
    fn await_items(&self, e: std::ops::Range<usize>, upto: usize) {
        for (k, range) in self.ranges.iter().enumerate().filter(|(_, r)| r.start < e.end && e.start < r.end) {
            let mut patience = 0;
            while range.scattered.0.load(Ordering::Acquire) < upto {
                if patience < PATIENCE {
                    patience += 1;
                    std::hint::spin_loop();
                } else if range
                    .busy
                    .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
                    .is_ok()
                {
                    self.scatter_until(k, upto.max(range.scattered.0.load(Ordering::Relaxed)));
                    range.busy.store(false, Ordering::Release);
                }
            }
        }
    }

    /// The lower sums `Σ_{β<α} W_αβ λ_β` of the group at `r0` in sweep `k`:
    /// the prefix's [`Stored::dot4`], or with lanes its window's
    /// [`Stored::dot4_from`] the lanes its entries hold (then cleared).
    fn lower_sums(&self, k: usize, r0: usize) -> [f64; COLUMNS] {
        let from = if self.lanes.is_some() { window_start(r0) } else { 0 };
        let mut init = [[0.0; LANES]; COLUMNS];
        if let (Some(lanes), true) = (&self.lanes, from > 0) {
            self.await_items(r0..r0 + 3, k * self.groups + from.div_ceil(3));
            for (i, init) in init.iter_mut().take(3).enumerate() {
                for (j, v) in init.iter_mut().enumerate() {
                    // SAFETY: every item that adds to this entry is
                    // scattered (awaited above); the next adds after this
                    // group is published.
                    let cell = unsafe { lanes.write(j * self.c + r0 + i..j * self.c + r0 + i + 1) };
                    *v = std::mem::take(&mut cell[0]);
                }
            }
            init[3] = init[2];
        }
        // SAFETY: λ before r0 is final for this sweep and the scatterers only read λ.
        P::dot4_from(self.prefix(r0, from..r0), unsafe { self.lambda.read(from..r0) }, &init)
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

/// Where the window of entry `r0`'s group starts: the entries before it
/// come from the lanes.
fn window_start(r0: usize) -> usize {
    r0.saturating_sub(LOWER_WINDOW) / LANES * LANES
}

/// The first entry whose group's window starts past column `col` (the
/// entries from there on take `col` in their lanes): the first group `a`
/// with `window_start(3a) > col`.
fn lane_start(col: usize) -> usize {
    3 * (LOWER_WINDOW + LANES * (col / LANES + 1)).div_ceil(3)
}

/// PGS on the assembled `W` whose rows are `rows` (row-major `c × c`, in
/// `f64` or an `f32` copy) and whose diagonal blocks are `blocks` (`f64`),
/// warm-started from `lambda`, the upper sums (and the lower sums' lanes)
/// in `sums` (resized to `2c`, or `(2 + LANES) c`): sweeps as
/// [`Pgs::solve_in`] does, in the same order, with the upper sums formed by
/// the pool's other threads.
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
    let threads = rayon::current_num_threads();
    let scatterers = if g >= PARALLEL_GROUPS { (threads - 1).min(c / SCATTER_ROWS).max(1) } else { 1 };
    let (ranges, used) = scatter_ranges(c, scatterers);
    let in_lanes = threads > 1 && used >= LANE_SCATTERERS;
    sums.clear();
    sums.resize(if in_lanes { (2 + LANES) * c } else { 2 * c }, 0.0);
    let (upper, rest) = sums.split_at_mut(c);
    let (next, lanes) = rest.split_at_mut(c);
    let p = Pipeline {
        rows,
        c,
        groups: g,
        lambda: Shared::new(lambda),
        sums: [Shared::new(upper), Shared::new(next)],
        resolved: Counter(AtomicUsize::new(g)),
        ranges: &ranges[..used],
        lanes: in_lanes.then(|| Shared::new(lanes)),
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
            let lower = p.lower_sums(k, r0);
            // SAFETY: `sums[(k − 1) mod 2]` is not scattered into during
            // sweep k; λ of this group is read by the scatterers only after
            // it is published below.
            let (upper, own) = unsafe { (p.sums[(k - 1) % 2].write(r0..r0 + 3), p.lambda.write(r0..r0 + 3)) };
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
            let (ranges, parts) = (&ranges[..used], parts.min(SCATTERERS));
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
