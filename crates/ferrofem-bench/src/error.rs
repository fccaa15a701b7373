//! The benchmarks' error.

use std::path::PathBuf;

/// Errors a benchmark reports as one line.
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
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
