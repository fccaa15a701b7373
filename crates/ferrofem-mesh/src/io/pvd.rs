use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::MeshError;

/// A ParaView `.pvd` collection: one dataset file per time value. The
/// collection file is rewritten after each frame so that a run that stops
/// early still leaves an openable series.
#[derive(Debug)]
pub struct PvdSeries {
    path: PathBuf,
    frames: Vec<(f64, String)>,
}

impl PvdSeries {
    /// A series written to `path` (e.g. `out/scene.pvd`).
    pub fn new(path: impl Into<PathBuf>) -> Self {
        PvdSeries { path: path.into(), frames: Vec::new() }
    }

    /// Registers `file` (relative to the `.pvd`'s folder) at time `t` seconds
    /// and rewrites the collection.
    pub fn push(&mut self, t: f64, file: &str) -> Result<(), MeshError> {
        self.frames.push((t, file.to_string()));
        let mut s = String::from(
            "<?xml version=\"1.0\"?>\n<VTKFile type=\"Collection\" version=\"0.1\" byte_order=\"LittleEndian\">\n  <Collection>\n",
        );
        for (t, f) in &self.frames {
            let _ = writeln!(s, "    <DataSet timestep=\"{t:e}\" group=\"\" part=\"0\" file=\"{f}\"/>");
        }
        s.push_str("  </Collection>\n</VTKFile>\n");
        std::fs::write(&self.path, s).map_err(|e| MeshError::io(&self.path, e))
    }

    /// Path of the `.pvd` file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Number of frames registered.
    pub fn len(&self) -> usize {
        self.frames.len()
    }

    /// Whether no frame was registered.
    pub fn is_empty(&self) -> bool {
        self.frames.is_empty()
    }
}
