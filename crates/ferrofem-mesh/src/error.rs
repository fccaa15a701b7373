use std::path::PathBuf;

/// Everything that can go wrong when reading, writing or validating a mesh.
#[derive(Debug, thiserror::Error)]
pub enum MeshError {
    /// The file could not be opened, read or written.
    #[error("{path}: {source}")]
    Io {
        /// File concerned.
        path: PathBuf,
        /// Underlying error.
        source: std::io::Error,
    },
    /// The file's content is not what its format requires.
    #[error("{}{}: {message}", path.display(), line_suffix(*line))]
    Parse {
        /// File concerned (may be empty for in-memory input).
        path: PathBuf,
        /// 1-based line number, 0 when unknown.
        line: usize,
        /// What was wrong.
        message: String,
    },
    /// The file extension names no format we read or write.
    #[error("{0}: unsupported mesh format (expected .msh, .vtk, .vtu, .obj or .stl)")]
    UnsupportedFormat(PathBuf),
    /// The file holds no element of the kind asked for.
    #[error("{path}: {message}")]
    WrongKind {
        /// File concerned.
        path: PathBuf,
        /// What was found instead.
        message: String,
    },
    /// An element index is out of range.
    #[error("element {element}: vertex index {index} out of range (mesh has {vertices} vertices)")]
    IndexOutOfRange {
        /// Offending element.
        element: usize,
        /// The bad index.
        index: usize,
        /// Number of vertices.
        vertices: usize,
    },
    /// An element uses one vertex twice.
    #[error("element {element}: vertex {vertex} is repeated")]
    RepeatedVertex {
        /// Offending element.
        element: usize,
        /// The repeated vertex.
        vertex: usize,
    },
    /// A tetrahedron has zero or negative volume (or a triangle zero area).
    #[error("element {element}: {what} is {value:e} (inverted or degenerate)")]
    Degenerate {
        /// Offending element.
        element: usize,
        /// "signed volume" or "area".
        what: &'static str,
        /// The measured value.
        value: f64,
    },
    /// A vertex coordinate is NaN or infinite.
    #[error("vertex {vertex}: non-finite coordinate {value}")]
    NonFinite {
        /// Offending vertex.
        vertex: usize,
        /// The bad value.
        value: f64,
    },
    /// The mesh has no element.
    #[error("mesh has no element")]
    Empty,
    /// A surface could not be tetrahedralized (open, empty, too fine a cell).
    #[error("tetrahedralize: {0}")]
    Tetrahedralize(String),
    /// A generator parameter is out of range.
    #[error("generator: {0}")]
    Generator(String),
}

/// `:line` for a known line, nothing for 0 (unknown).
fn line_suffix(line: usize) -> String {
    if line == 0 {
        String::new()
    } else {
        format!(":{line}")
    }
}

impl MeshError {
    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        MeshError::Io { path: path.into(), source }
    }

    pub(crate) fn parse(path: impl Into<PathBuf>, line: usize, message: impl Into<String>) -> Self {
        MeshError::Parse { path: path.into(), line, message: message.into() }
    }
}
