//! The one spin-then-yield back-off of the workspace's hand-made
//! synchronization (the supernodal sweeps' [`crate::split`], the
//! [`crate::team`], pipelined PGS): spin while the awaited thread is likely
//! running, then give the core away, since on a machine with more threads
//! than cores the thread waited for needs it.

/// Spins after which [`Backoff::snooze`] yields the core.
pub const SPINS_BEFORE_YIELD: u32 = 4096;

/// A waiting loop's back-off: [`Self::snooze`] once per unsuccessful check,
/// [`Self::reset`] after progress.
#[derive(Debug, Default, Clone, Copy)]
pub struct Backoff {
    spins: u32,
}

impl Backoff {
    /// A fresh back-off (it spins first).
    pub fn new() -> Self {
        Backoff { spins: 0 }
    }

    /// Waits a little: a spin-loop hint for the first
    /// [`SPINS_BEFORE_YIELD`] calls since the last reset, then a yield.
    pub fn snooze(&mut self) {
        if self.spins < SPINS_BEFORE_YIELD {
            std::hint::spin_loop();
            self.spins += 1;
        } else {
            std::thread::yield_now();
        }
    }

    /// Starts spinning again (call after the awaited thing happened).
    pub fn reset(&mut self) {
        self.spins = 0;
    }

    /// Whether the back-off has moved on to yielding.
    pub fn is_yielding(&self) -> bool {
        self.spins >= SPINS_BEFORE_YIELD
    }
}

/// Waits until `done()` with a [`Backoff`].
pub fn spin_until(done: impl Fn() -> bool) {
    let mut backoff = Backoff::new();
    while !done() {
        backoff.snooze();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, Ordering};

    #[test]
    fn backoff_spins_then_yields_and_resets() {
        let mut b = Backoff::new();
        for _ in 0..SPINS_BEFORE_YIELD {
            assert!(!b.is_yielding());
            b.snooze();
        }
        assert!(b.is_yielding());
        b.snooze();
        b.reset();
        assert!(!b.is_yielding());
    }

    #[test]
    fn spin_until_sees_another_threads_store() {
        let flag = AtomicBool::new(false);
        std::thread::scope(|s| {
            s.spawn(|| flag.store(true, Ordering::Release));
            spin_until(|| flag.load(Ordering::Acquire));
        });
        assert!(flag.load(Ordering::Acquire));
    }
}
