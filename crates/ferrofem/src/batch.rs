//! Many independent worlds stepped at once ([`Batch`], [`step_worlds`]):
//! small worlds one per thread, each on a pool of its own with one thread
//! (its parallel sections run in order there, so its bits are those of
//! the same world stepped alone: no result depends on the thread count);
//! large worlds one after another, each using every thread.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};

use serde::{Deserialize, Serialize};

use crate::stats::StepStats;
use crate::{SimError, World};

/// What stepping one world of a batch gave: its last step's stats (`None`
/// for no step) or the error of the step that failed.
pub type WorldResult = Result<Option<StepStats>, SimError>;

/// How a batch spreads its worlds over the threads.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum BatchMode {
    /// `worlds` when there are at least as many worlds as threads and the
    /// largest has at most [`AUTO_WORLD_DOFS`] DOFs, else `inside`.
    #[default]
    Auto,
    /// One world per thread, each world's own work on that thread.
    Worlds,
    /// One world after another, each world's work on every thread.
    Inside,
}

/// The largest world (DOFs) that `auto` steps one per thread: above it, a
/// world's own parallel sections (its factor's sweeps, the constraint
/// solve) keep the threads busy.
pub const AUTO_WORLD_DOFS: usize = 30_000;

impl BatchMode {
    /// The mode `auto` resolves to for `worlds` on `threads` threads.
    pub fn resolve(self, worlds: &[&mut World], threads: usize) -> BatchMode {
        let largest = worlds.iter().map(|w| w.model.bodies.iter().map(|b| b.dofs()).sum::<usize>()).max();
        match self {
            BatchMode::Auto if worlds.len() >= threads && largest.unwrap_or(0) <= AUTO_WORLD_DOFS => {
                BatchMode::Worlds
            }
            BatchMode::Auto => BatchMode::Inside,
            mode => mode,
        }
    }
}

/// One single-thread pool per thread of the global pool, made on first use.
fn single_thread_pools() -> &'static [rayon::ThreadPool] {
    static POOLS: OnceLock<Vec<rayon::ThreadPool>> = OnceLock::new();
    POOLS.get_or_init(|| {
        (0..rayon::current_num_threads())
            .map(|t| {
                rayon::ThreadPoolBuilder::new()
                    .num_threads(1)
                    .thread_name(move |_| format!("ferrofem-batch-{t}"))
                    .build()
                    .expect("a one-thread pool")
            })
            .collect()
    })
}

/// Steps every world `n` times by `mode`: per world, the last step's stats
/// (`None` when `n = 0`) or the error of the step that failed (that world stops there; the others
/// go on). A world's results are bitwise those of stepping it alone.
pub fn step_worlds(worlds: &mut [&mut World], n: usize, mode: BatchMode) -> Vec<WorldResult> {
    let steps = |w: &mut World| {
        let mut last = None;
        for _ in 0..n {
            last = Some(w.step()?);
        }
        Ok(last)
    };
    match mode.resolve(worlds, rayon::current_num_threads()) {
        BatchMode::Worlds => {
            let pools = single_thread_pools();
            let count = worlds.len();
            let slots: Vec<Mutex<Option<&mut World>>> =
                worlds.iter_mut().map(|w| Mutex::new(Some(&mut **w))).collect();
            let results: Vec<Mutex<Option<WorldResult>>> = (0..count).map(|_| Mutex::new(None)).collect();
            let next = AtomicUsize::new(0);
            let work = |pool: &rayon::ThreadPool| {
                pool.install(|| loop {
                    let k = next.fetch_add(1, Ordering::Relaxed);
                    let Some(slot) = slots.get(k) else { break };
                    let world = slot.lock().expect("claimed once").take().expect("claimed once");
                    *results[k].lock().expect("written once") = Some(steps(world));
                })
            };
            let threads = pools.len().min(count);
            std::thread::scope(|s| {
                for pool in &pools[1..threads.max(1)] {
                    s.spawn(|| work(pool));
                }
                work(&pools[0]);
            });
            results.into_iter().map(|r| r.into_inner().expect("written once").expect("every world")).collect()
        }
        _ => worlds.iter_mut().map(|w| steps(w)).collect(),
    }
}

/// Worlds owned and stepped together ([`step_worlds`]).
#[derive(Debug, Default)]
pub struct Batch {
    /// The worlds, in order.
    pub worlds: Vec<World>,
    /// How they are spread over the threads.
    pub mode: BatchMode,
}

impl Batch {
    /// A batch of `worlds`, spread by `auto`.
    pub fn new(worlds: Vec<World>) -> Self {
        Batch { worlds, mode: BatchMode::Auto }
    }

    /// Steps every world `n` times: per world, the last step's stats or the
    /// error of its failed step (the others go on).
    pub fn step(&mut self, n: usize) -> Vec<WorldResult> {
        let mut worlds: Vec<&mut World> = self.worlds.iter_mut().collect();
        step_worlds(&mut worlds, n, self.mode)
    }
}
