//! ferrofem's benchmarks: the cases, timing and JSON records behind
//! `ferrofem bench …` and `docs/benchmarks.md` (zeng2022's and zeng2025's
//! tables and figures, side by side with peers). Every record carries the
//! machine context (threads, CPU time, load). The CLI only wires
//! [`BenchCommand`] to [`bench()`].
#![warn(missing_docs)]

pub mod accuracy;
pub mod bandwidth;
pub mod corrective;
pub mod delassus;
pub mod early_termination;
mod error;
pub mod factor;
pub mod lg_acceleration;
mod lg_cases;
pub mod lg_contact;
pub mod local_global;
pub mod papers;
mod peers;
mod plot;
pub mod records;
pub mod scale;
pub mod scenes;
pub mod step;
pub mod sysinfo;

use clap::Subcommand;

pub use error::BenchError;
pub use records::write_json;
use step::StepArgs;

/// Benchmarks.
#[derive(Debug, Subcommand)]
pub enum BenchCommand {
    /// Time steps of a scene: per-stage medians, SpMV bandwidth against copy bandwidth.
    Step(StepArgs),
    /// The sparse direct engine on FEM matrices (orderings, LDLᵀ, solves, sparse inverse).
    Factor(factor::FactorArgs),
    /// The Delassus operator: dense, isodof, isodof-reuse and unbuilt side by side (zeng2022 §6).
    Delassus(delassus::DelassusArgs),
    /// dahl2019 Figs. 3–4 and Table 1: PCG cut at k iterations, per initial guess and preconditioner.
    EarlyTermination(early_termination::EarlyTerminationArgs),
    /// The local-global integrator: S memory, per-iteration times, convergence against Newton (zeng2025 §7).
    LocalGlobal(local_global::LocalGlobalArgs),
    /// zeng-implicit Table 1: recursive corrective motion, standard against fast update of W.
    Corrective(corrective::CorrectiveArgs),
    /// How a step grows with the mesh: the drop, the twisting bar and the raptor at 5k–60k
    /// vertices, per-stage medians, peak memory and the fitted exponent.
    Scale(scale::ScaleArgs),
    /// Every table of the four papers at the papers' sizes, beside the papers' figures
    /// (`--markdown docs/papers.md`).
    Papers(papers::PapersArgs),
}

/// Runs a benchmark.
pub fn bench(cmd: BenchCommand) -> Result<(), BenchError> {
    match cmd {
        BenchCommand::Step(a) => step::bench_step(a),
        BenchCommand::Factor(a) => factor::bench_factor(a),
        BenchCommand::Delassus(a) => delassus::bench_delassus(a),
        BenchCommand::LocalGlobal(a) => local_global::bench_local_global(a),
        BenchCommand::EarlyTermination(a) => early_termination::bench_early_termination(a),
        BenchCommand::Corrective(a) => corrective::bench_corrective(a),
        BenchCommand::Scale(a) => scale::bench_scale(a),
        BenchCommand::Papers(a) => papers::bench_papers(a),
    }
}
