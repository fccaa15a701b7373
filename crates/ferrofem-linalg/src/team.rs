//! The pool's threads held for a run of short parallel sections: an
//! iterative solver whose every iteration has small parallel sections (the
//! non-smooth Newton's `W` products, tens of microseconds each; the
//! supernodal sweeps) loses more to waking sleeping rayon workers per
//! section than it gains from them.
//! [`with_team`] borrows the pool's other workers for the whole run; inside
//! it, [`for_each_part`] hands parts to those helpers, which spin between
//! them, with no wake-up. Outside a team, [`for_each_part`] is rayon's
//! parallel loop: the parts and their arithmetic are the same either way.

use std::any::Any;
use std::cell::Cell;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;

use rayon::prelude::*;

use crate::spin::{spin_until, Backoff};

/// A section's closure, as a helper calls it.
type Part<'a> = &'a (dyn Fn(usize) + Sync);

/// What the calling thread and its helpers share. A section is published
/// as a ticket `(generation, parts, next)` in one word (24, 20 and 20 bits); a part is claimed
/// by advancing `next` with a compare-and-swap, so no part of a finished
/// section can be claimed (its generation is gone), and the closure is
/// only called for a claimed part, while the caller still waits for it.
struct Shared {
    ticket: AtomicU64,
    /// The current section's closure (a pointer to a reference on the
    /// caller's stack, valid while the section runs).
    part: AtomicPtr<Part<'static>>,
    done: AtomicUsize,
    quit: AtomicBool,
    /// A panic of a helper's part, re-raised on the calling thread.
    panic: Mutex<Option<Box<dyn Any + Send>>>,
}

/// Bits of the ticket's `next` and `parts` fields.
const FIELD: u32 = 20;
const MASK: u64 = (1 << FIELD) - 1;
/// The ticket's generation field (what is left of the word).
const GENERATIONS: u64 = (1 << (64 - 2 * FIELD)) - 1;

thread_local! {
    /// The team of the section running on this thread, if any.
    static TEAM: Cell<*const Shared> = const { Cell::new(std::ptr::null()) };
}

/// Runs `body` with the pool's other workers held as helpers for the
/// [`for_each_part`] calls `body` makes on this thread (none where the pool
/// has one thread, or inside another team; fewer where some are busy
/// elsewhere: a helper joins when its worker is free). The helpers spin
/// between sections (yielding after a while), so a team should cover a run
/// of sections close together, not long serial work: rayon's own parallel
/// loops inside `body` find no free worker.
pub fn with_team<R>(body: impl FnOnce() -> R) -> R {
    if rayon::current_num_threads() < 2 || !TEAM.with(|t| t.get().is_null()) {
        return body();
    }
    let shared = Shared {
        ticket: AtomicU64::new(0),
        part: AtomicPtr::new(std::ptr::null_mut()),
        done: AtomicUsize::new(0),
        quit: AtomicBool::new(false),
        panic: Mutex::new(None),
    };
    // The helpers are spawned into the pool; `body` runs here (no `Send`
    // needed), and the scope ends once every helper has quit (or runs
    // one here, finding `quit` set, if no worker took it).
    rayon::in_place_scope(|scope| {
        let shared = &shared;
        for _ in 1..rayon::current_num_threads() {
            scope.spawn(move |_| help(shared));
        }
        // Leaves the team (and lets the helpers go) even if `body` panics.
        struct Leave<'a>(&'a Shared);
        impl Drop for Leave<'_> {
            fn drop(&mut self) {
                TEAM.with(|t| t.set(std::ptr::null()));
                self.0.quit.store(true, Ordering::Release);
            }
        }
        TEAM.with(|t| t.set(shared));
        let _leave = Leave(shared);
        body()
    })
}

/// A helper: claims and runs parts of each section until told to quit.
fn help(shared: &Shared) {
    let mut backoff = Backoff::new();
    while !shared.quit.load(Ordering::Acquire) {
        if let Some(i) = claim(shared) {
            // SAFETY: part `i` of the current section is claimed and not
            // done, so its caller is still waiting in `for_each_part` and
            // the closure it published is alive.
            let part = unsafe { *shared.part.load(Ordering::Acquire) };
            if let Err(payload) = catch_unwind(AssertUnwindSafe(|| part(i))) {
                *shared.panic.lock().unwrap_or_else(|e| e.into_inner()) = Some(payload);
            }
            shared.done.fetch_add(1, Ordering::Release);
            backoff.reset();
        } else {
            backoff.snooze();
        }
    }
}

/// Claims the next part of the current section, if one is left.
fn claim(shared: &Shared) -> Option<usize> {
    let mut ticket = shared.ticket.load(Ordering::Acquire);
    loop {
        let (parts, next) = ((ticket >> FIELD) & MASK, ticket & MASK);
        if next >= parts {
            return None;
        }
        match shared.ticket.compare_exchange_weak(ticket, ticket + 1, Ordering::AcqRel, Ordering::Acquire) {
            Ok(_) => return Some(next as usize),
            Err(now) => ticket = now,
        }
    }
}

/// `part(i)` for every `i < parts`, each once: shared with the team's
/// helpers inside [`with_team`], by rayon elsewhere. Which thread runs a part
/// never changes what it computes.
///
/// # Panics
/// If `parts` ≥ 2²⁰, or a part panics (re-raised once every part is done).
pub fn for_each_part(parts: usize, part: impl Fn(usize) + Sync) {
    assert!((parts as u64) <= MASK, "for_each_part: {parts} parts");
    let team = TEAM.with(|t| t.get());
    if team.is_null() || parts < 2 {
        (0..parts).into_par_iter().for_each(&part);
        return;
    }
    // SAFETY: set by `with_team` on this thread, which outlives this call.
    let shared = unsafe { &*team };
    let part: Part<'_> = &part;
    // SAFETY: a helper calls it only for a claimed part of this section,
    // and this call returns only once every part is done.
    let erased: Part<'static> = unsafe { std::mem::transmute::<Part<'_>, Part<'static>>(part) };
    shared.part.store(&erased as *const Part<'static> as *mut Part<'static>, Ordering::Release);
    shared.done.store(0, Ordering::Relaxed);
    let generation = ((shared.ticket.load(Ordering::Relaxed) >> (2 * FIELD)) + 1) & GENERATIONS;
    shared.ticket.store((generation << (2 * FIELD)) | ((parts as u64) << FIELD), Ordering::Release);
    // A section inside a part runs without the helpers (they are busy here).
    TEAM.with(|t| t.set(std::ptr::null()));
    let mut failed = None;
    while let Some(i) = claim(shared) {
        if let Err(payload) = catch_unwind(AssertUnwindSafe(|| part(i))) {
            failed = Some(payload);
        }
        shared.done.fetch_add(1, Ordering::Release);
    }
    spin_until(|| shared.done.load(Ordering::Acquire) == parts);
    TEAM.with(|t| t.set(team));
    let helper = shared.panic.lock().unwrap_or_else(|e| e.into_inner()).take();
    if let Some(payload) = failed.or(helper) {
        resume_unwind(payload);
    }
}

/// `f(k, chunk)` for the `k`-th chunk of `chunk` items of `data` (the last
/// may be shorter), by [`for_each_part`].
pub fn for_each_chunk_mut<T: Send>(data: &mut [T], chunk: usize, f: impl Fn(usize, &mut [T]) + Sync) {
    assert!(chunk > 0, "for_each_chunk_mut: empty chunks");
    /// The buffer's start, shared by the parts.
    struct Base<T>(*mut T);
    // SAFETY: the parts write disjoint chunks of a buffer of `Send` items.
    unsafe impl<T: Send> Sync for Base<T> {}
    impl<T> Base<T> {
        /// Chunk `start..end` (a method: the closure then holds all of `Base`).
        ///
        /// # Safety
        /// `start..end` lies in the buffer and no one else uses it meanwhile.
        unsafe fn chunk<'a>(&self, start: usize, end: usize) -> &'a mut [T] {
            // SAFETY: as the caller states.
            unsafe { std::slice::from_raw_parts_mut(self.0.add(start), end - start) }
        }
    }
    let (n, base) = (data.len(), Base(data.as_mut_ptr()));
    for_each_part(n.div_ceil(chunk), |k| {
        let (start, end) = (k * chunk, ((k + 1) * chunk).min(n));
        // SAFETY: chunk `k` is `start..end`, within `data` and handed to
        // this part alone; `data` is borrowed mutably for the whole call.
        f(k, unsafe { base.chunk(start, end) })
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every part runs once per section, inside and outside a team, on one
    /// and on several threads, over many sections in a row.
    #[test]
    fn every_part_runs_once_per_section() {
        for threads in [1, 2, 3, 5] {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            pool.install(|| {
                let counts: Vec<AtomicUsize> = (0..37).map(|_| AtomicUsize::new(0)).collect();
                let sections = 500;
                let run = || {
                    for s in 0..sections {
                        let parts = 1 + s % counts.len();
                        for_each_part(parts, |i| {
                            std::hint::black_box((0..(i % 5) * 50).sum::<usize>());
                            counts[i].fetch_add(1, Ordering::Relaxed);
                        });
                    }
                };
                with_team(run);
                run();
                for (i, c) in counts.iter().enumerate() {
                    let expected = 2 * (0..sections).filter(|s| 1 + s % counts.len() > i).count();
                    assert_eq!(c.load(Ordering::Relaxed), expected, "{threads} threads, part {i}");
                }
            });
        }
    }

    /// Chunks cover the buffer once, in a team or not.
    #[test]
    fn chunks_cover_the_buffer() {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
        pool.install(|| {
            for n in [0, 1, 11, 12, 13, 1000] {
                let mut data = vec![0usize; n];
                let fill = |data: &mut [usize]| {
                    for_each_chunk_mut(data, 12, |k, c| {
                        c.iter_mut().enumerate().for_each(|(j, v)| *v += 12 * k + j)
                    })
                };
                with_team(|| fill(&mut data));
                fill(&mut data);
                assert!(data.iter().enumerate().all(|(i, &v)| v == 2 * i), "n = {n}");
            }
        });
    }

    /// A part's panic reaches the caller once the section is over, and the
    /// team still lets its helpers go.
    #[test]
    fn a_panicking_part_panics_the_caller() {
        for threads in [2, 4] {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            pool.install(|| {
                let caught =
                    catch_unwind(|| with_team(|| for_each_part(64, |i| assert!(i != 40, "part {i}"))));
                assert!(caught.is_err());
                // The pool is usable afterwards, with a team too.
                let sum = AtomicUsize::new(0);
                with_team(|| for_each_part(8, |i| _ = sum.fetch_add(i, Ordering::Relaxed)));
                assert_eq!(sum.load(Ordering::Relaxed), 28);
            });
        }
    }
}
