//! `ferrofem`: run scenes, benchmark, inspect and convert meshes.

mod bench;
mod bench_delassus;
mod bench_factor;
mod bench_local_global;
mod builtin;
mod mesh_cmd;
mod peers;
mod plot;
mod report;
mod run;
mod sysinfo;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Real-time finite-element simulation of soft bodies.
#[derive(Debug, Parser)]
#[command(name = "ferrofem", version, about)]
struct Cli {
    /// Worker threads (default: all cores).
    #[arg(long, global = true)]
    threads: Option<usize>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run a scene file (or a built-in scene by name) and write ParaView output.
    Run(run::RunArgs),
    /// List the built-in scenes.
    Scenes,
    /// Inspect or convert meshes.
    #[command(subcommand)]
    Mesh(mesh_cmd::MeshCommand),
    /// Benchmarks that write JSON records (see docs/benchmarks.md).
    #[command(subcommand)]
    Bench(bench::BenchCommand),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    if let Some(n) = cli.threads {
        if let Err(e) = rayon::ThreadPoolBuilder::new().num_threads(n.max(1)).build_global() {
            eprintln!("error: cannot set up {n} threads: {e}");
            return ExitCode::FAILURE;
        }
    }
    let result = match cli.command {
        Command::Run(args) => run::run(args),
        Command::Scenes => {
            builtin::list();
            Ok(())
        }
        Command::Mesh(cmd) => mesh_cmd::mesh(cmd),
        Command::Bench(cmd) => bench::bench(cmd),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Errors the CLI reports as one line.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// From the simulator.
    #[error(transparent)]
    Sim(#[from] ferrofem::SimError),
    /// From mesh I/O.
    #[error(transparent)]
    Mesh(#[from] ferrofem_mesh::MeshError),
    /// Writing a file failed.
    #[error("{0}: {1}")]
    Io(PathBuf, std::io::Error),
    /// Anything else, already worded.
    #[error("{0}")]
    Other(String),
}

/// Writes JSON to a file.
pub fn write_json(path: &std::path::Path, value: &impl serde::Serialize) -> Result<(), CliError> {
    let text = serde_json::to_string_pretty(value).map_err(|e| CliError::Other(e.to_string()))?;
    std::fs::write(path, text).map_err(|e| CliError::Io(path.to_path_buf(), e))
}
