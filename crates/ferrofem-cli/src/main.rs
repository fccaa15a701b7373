//! `ferrofem`: run scenes, benchmark, inspect and convert meshes.

mod mesh_cmd;
mod render;
mod report;
mod run;
mod stats_stream;
mod view;

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
    /// Print the JSON Schema of scene files (for editors; docs/scene-format.md).
    Schema,
    /// A picture (PNG) or clip (GIF, MP4) of a scene or of a run's output folder.
    Render(render::RenderArgs),
    /// Watch a scene live in the browser, grab bodies with the mouse, or replay an output folder.
    View(view::ViewArgs),
    /// Inspect or convert meshes.
    #[command(subcommand)]
    Mesh(mesh_cmd::MeshCommand),
    /// Benchmarks that write JSON records (see docs/benchmarks.md).
    #[command(subcommand)]
    Bench(ferrofem_bench::BenchCommand),
}

fn main() -> ExitCode {
    end_quietly_on_broken_pipe();
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
            for (name, about) in ferrofem::scene::builtin::list() {
                println!("{name:<20} {:<32} {about}", format!("scenes/{name}.toml"));
            }
            Ok(())
        }
        Command::Schema => {
            println!("{:#}", ferrofem::scene::schema());
            Ok(())
        }
        Command::Render(args) => render::render(args),
        Command::View(args) => view::view(args),
        Command::Mesh(cmd) => mesh_cmd::mesh(cmd),
        Command::Bench(cmd) => ferrofem_bench::bench(cmd).map_err(CliError::from),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Output piped into a reader that stops early (`ferrofem scenes | head -1`)
/// ends the program as it ends `cat`: by the default `SIGPIPE` action, exit
/// status 141 in a shell, no message. Rust ignores `SIGPIPE` by default, so
/// that every `println!` after the reader left would panic instead.
fn end_quietly_on_broken_pipe() {
    #[cfg(unix)]
    // SAFETY: restoring a signal's default action at start-up, before any
    // thread exists, touches no memory of this program.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
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
    /// From a benchmark.
    #[error(transparent)]
    Bench(#[from] ferrofem_bench::BenchError),
    /// Anything else, already worded.
    #[error("{0}")]
    Other(String),
}
