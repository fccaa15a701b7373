//! Projected Gauss–Seidel on an assembled `W`, its sweeps shared by two
//! threads in Gauss–Seidel's own order.
//!
//! Group α's local problem needs `d_α = δ_free,α + Σ_{β<α} W_αβ λ_β⁽ᵏ⁾ +
//! Σ_{β>α} W_αβ λ_β⁽ᵏ⁻¹⁾` (zeng2022 eq. 16). The solver thread forms the
//! first sum from the prefix of α's three rows (the newest λ) and resolves
//! α; the second sum, the *upper sums* `u`, only involves the previous
//! sweep's λ, so a second thread accumulates it for the next sweep while
//! this one runs: as soon as group β is resolved it adds `W_βα λ_β` (β's row
//! prefix; `W` is symmetric) to `u_α` for every α < β. Each thread reads
//! the lower triangle of `W` once per sweep, where a sweep of full rows
//! reads all of it on one thread.
//!
//! Every sum is formed in a fixed order whichever thread forms it: the
//! upper sums by groups in increasing order, each by one [`Stored::axpy4`].
//! When no second thread takes the scattering (one worker, or a busy
//! pool), the solver does it itself at the end of each sweep, so results
//! do not depend on the thread count.

use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use ferrofem_linalg::simd::Stored;
use ferrofem_linalg::spin::Backoff;
use nalgebra::{Matrix3, Vector3};

use super::{group_update, Pgs, PgsSolve};
use crate::constraint::ConstraintGroup;

/// Groups below which the sweep stays on one thread (the hand-over costs more).
const PARALLEL_GROUPS: usize = 48;

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

/// The state the two threads share. Scatter item `t` is group `t mod G` of
/// sweep `t / G` (sweep 0 is the warm start); it adds that group's row
/// prefix times its λ to the upper sums of the next sweep,
/// `sums[(t / G) mod 2]`.
struct Pipeline<'a, P> {
    rows: &'a [P],
    c: usize,
    groups: usize,
    lambda: Shared<'a>,
    sums: [Shared<'a>; 2],
    /// Items whose λ is final: `sweep · G + groups resolved in it`.
    resolved: Counter,
    /// Items scattered so far (written under `busy`).
    scattered: Counter,
    /// Held by whichever thread is scattering.
    busy: AtomicBool,
    finished: AtomicBool,
}

impl<P: Stored> Pipeline<'_, P> {
    /// The three rows of the group starting at `r0`, cut to the columns before it.
    fn prefix(&self, r0: usize) -> [&[P]; 4] {
        let row = |i: usize| &self.rows[(r0 + i) * self.c..(r0 + i) * self.c + r0];
        [row(0), row(1), row(2), row(2)]
    }

    /// Scatters the items `scattered..upto` (the caller holds `busy`).
    fn scatter_until(&self, upto: usize) {
        let mut t = self.scattered.0.load(Ordering::Relaxed);
        while t < upto {
            let (sweep, g) = (t / self.groups, t % self.groups);
            let r0 = 3 * g;
            // SAFETY: item t is resolved (t < `resolved`), so the solver no
            // longer writes λ of group g in this sweep and reads only the
            // other buffer of sums; only the `busy` holder writes this one.
            let (l, sums) = unsafe { (self.lambda.read(r0..r0 + 3), self.sums[sweep % 2].write(0..r0)) };
            if l.iter().any(|&v| v != 0.0) {
                P::axpy4(self.prefix(r0), [l[0], l[1], l[2], 0.0], sums);
            }
            t += 1;
        }
        self.scattered.0.store(t, Ordering::Relaxed);
    }

    /// Takes `busy`, scatters up to `upto`, lets go.
    fn drain(&self, upto: usize) {
        let mut backoff = Backoff::new();
        while self.busy.compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed).is_err() {
            backoff.snooze();
        }
        self.scatter_until(upto);
        self.busy.store(false, Ordering::Release);
    }

    /// The second thread: scatters resolved items as they come, until the solve ends.
    fn scatterer(&self) {
        let mut backoff = Backoff::new();
        while !self.finished.load(Ordering::Acquire) {
            let ready = self.resolved.0.load(Ordering::Acquire);
            if ready > self.scattered.0.load(Ordering::Relaxed)
                && self.busy.compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed).is_ok()
            {
                self.scatter_until(ready);
                self.busy.store(false, Ordering::Release);
                backoff.reset();
                continue;
            }
            backoff.snooze();
        }
    }
}

/// PGS on the assembled `W` whose rows are `rows` (row-major `c × c`, in
/// `f64` or an `f32` copy) and whose diagonal blocks are `blocks` (`f64`),
/// warm-started from `lambda`, the upper sums in `sums` (resized to `2c`):
/// sweeps as [`Pgs::solve_in`] does, in the same order, with the upper sums
/// formed by a second thread.
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
    let p = Pipeline {
        rows,
        c,
        groups: g,
        lambda: Shared::new(lambda),
        sums: [Shared::new(upper), Shared::new(next)],
        resolved: Counter(AtomicUsize::new(g)),
        scattered: Counter::default(),
        busy: AtomicBool::new(false),
        finished: AtomicBool::new(false),
    };
    let sweeps = || {
        let out = sweep_all(pgs, &p, free, groups, blocks);
        p.finished.store(true, Ordering::Release);
        out
    };
    if g >= PARALLEL_GROUPS && rayon::current_num_threads() > 1 {
        rayon::join(sweeps, || p.scatterer()).0
    } else {
        sweeps()
    }
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
                    P::dot4(p.prefix(r0), p.lambda.read(0..r0)),
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
