//! The stats file of a run as it goes (`--stats PATH`, docs/stats.md):
//! JSON Lines, a header, one line per step, the summary last; written
//! through whatever is at `PATH` (a file, a link's target, a device, a
//! pipe; `-` is standard output), never replacing it, and flushed at the
//! first step and then at least every second.

use std::fs::OpenOptions;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde::Serialize;

use ferrofem::scene::Scene;
use ferrofem::stats::{StepStats, Summary};
use ferrofem::World;
use ferrofem_bench::sysinfo::Context;

use crate::report::{bodies, StatsEnd, StatsHeader};
use crate::CliError;

/// Format version of the stats file.
pub const FORMAT: u32 = 2;

/// An open stats file.
pub struct StatsStream {
    out: BufWriter<Box<dyn Write>>,
    path: PathBuf,
    flushed: Option<Instant>,
}

impl StatsStream {
    /// Opens `path` for writing (created or truncated; `-`: standard
    /// output), before the scene is built, so a bad path fails at once.
    pub fn open(path: &Path) -> Result<StatsStream, CliError> {
        let out: Box<dyn Write> = match path.as_os_str() == "-" {
            true => Box::new(std::io::stdout()),
            false => Box::new(
                OpenOptions::new()
                    .write(true)
                    .create(true)
                    .truncate(true)
                    .open(path)
                    .map_err(|e| fail(path, e))?,
            ),
        };
        Ok(StatsStream { out: BufWriter::new(out), path: path.to_path_buf(), flushed: None })
    }

    /// The header line: scene, step, bodies, GPU adapter.
    pub fn header(
        &mut self,
        scene: &Scene,
        sim: &World,
        gpu_adapter: Option<String>,
    ) -> Result<(), CliError> {
        let header = StatsHeader {
            format: FORMAT,
            scene: scene.name(),
            time_step: sim.model.time_step,
            bodies: bodies(sim),
            gpu_adapter,
        };
        self.line(&header)
    }

    /// A step's line; flushed at the first step and a second after the last flush.
    pub fn step(&mut self, s: &StepStats) -> Result<(), CliError> {
        self.line(s)?;
        if self.flushed.is_none_or(|t| t.elapsed() >= Duration::from_secs(1)) {
            self.flush()?;
        }
        Ok(())
    }

    /// The last line (summary, machine, error), flushed.
    pub fn finish(&mut self, summary: Summary, error: Option<String>) -> Result<(), CliError> {
        self.line(&StatsEnd { summary, context: Context::now(), error })?;
        self.flush()
    }

    fn line(&mut self, value: &impl Serialize) -> Result<(), CliError> {
        let text = serde_json::to_string(value).map_err(|e| CliError::Other(e.to_string()))?;
        writeln!(self.out, "{text}").map_err(|e| fail(&self.path, e))
    }

    fn flush(&mut self) -> Result<(), CliError> {
        self.flushed = Some(Instant::now());
        self.out.flush().map_err(|e| fail(&self.path, e))
    }
}

/// A stats file that could not be opened or written, named with its option.
fn fail(path: &Path, e: std::io::Error) -> CliError {
    CliError::Other(format!("--stats {}: {e}", path.display()))
}
