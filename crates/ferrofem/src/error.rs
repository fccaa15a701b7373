use ferrofem_linalg::pcg::KrylovError;
use ferrofem_mesh::MeshError;

use crate::solver::SolverMethod;
use crate::stage::Stage;

/// Everything that can stop a simulation, each with the context a user
/// needs to act on it.
#[derive(Debug, thiserror::Error)]
pub enum SimError {
    /// The scene file is malformed or holds an invalid value.
    #[error("scene {file}: {key}: {message}")]
    Scene {
        /// Scene file (or `<string>`).
        file: String,
        /// Key path of the offending value, e.g. `body[0].material.poisson`.
        key: String,
        /// What is wrong.
        message: String,
    },
    /// A mesh could not be read or is invalid.
    #[error("body {body}: {source}")]
    Mesh {
        /// Body whose mesh failed.
        body: String,
        /// The mesh error.
        source: MeshError,
    },
    /// A body could not be built.
    #[error("body {body}: {message}")]
    Body {
        /// Body concerned.
        body: String,
        /// What is wrong.
        message: String,
    },
    /// NaN or infinity appeared in a body's state or system.
    #[error("step {step}, body {body}, stage {stage}: non-finite {what} (the simulation blew up; try a smaller time step or stiffer solver settings)")]
    NonFinite {
        /// Step number (1-based) during which it appeared.
        step: usize,
        /// Body concerned.
        body: String,
        /// Stage that produced it.
        stage: Stage,
        /// Which quantity.
        what: &'static str,
    },
    /// The device failed during a stage (no adapter, lost, out of
    /// memory, a kernel error).
    #[error("step {step}, {}stage {stage} on the GPU: {source}", body.as_ref().map(|b| format!("body {b}, ")).unwrap_or_default())]
    Device {
        /// Step number (1-based; 0 while the world is built).
        step: usize,
        /// Body concerned, where the stage is a body's.
        body: Option<String>,
        /// Stage concerned.
        stage: Stage,
        /// The device's error.
        source: crate::device::DeviceError,
    },
    /// A linear solve failed.
    #[error("step {step}, body {body}, stage {stage}: {source}")]
    Solver {
        /// Step number (1-based).
        step: usize,
        /// Body concerned.
        body: String,
        /// Stage concerned.
        stage: Stage,
        /// The solver's error.
        source: KrylovError,
    },
    /// The preconditioner's factorization failed.
    #[error("step {step}, body {body}, stage factorize: {source}")]
    Factorization {
        /// Step number (1-based).
        step: usize,
        /// Body concerned.
        body: String,
        /// The factorization's error.
        source: ferrofem_linalg::LinalgError,
    },
    /// The constraint solver ended far from satisfying the constraints:
    /// the step is too long, the solver needs more iterations, or the
    /// constraints conflict (e.g. an attachment driven into an obstacle).
    #[error("step {step}, stage solve_constraints: the constraints are violated by {violation:.3e} m after {iterations} {} (limit {limit:.3e} m); {cause}", .method.iterations_name())]
    Constraints {
        /// Step number (1-based).
        step: usize,
        /// The solver.
        method: SolverMethod,
        /// Its iterations in the step: PGS sweeps or Newton steps.
        iterations: usize,
        /// Largest violation: attachment distance to target or contact penetration (m).
        violation: f64,
        /// The violation tolerated (the contact alarm distance).
        limit: f64,
        /// The likelier cause, in words: a time step too long, too few
        /// iterations, or conflicting constraints.
        cause: String,
    },
    /// A step penetrated deeper than `[contact] max_penetration`, or
    /// inverted elements, under `on_violation = "stop"`.
    #[error("step {step}: {cause}")]
    Violation {
        /// Step number (1-based).
        step: usize,
        /// Body, vertex, depth and what it is inside; or the inverted elements.
        cause: String,
    },
    /// A change made between steps (a controller's or a binding's call)
    /// names something that does not exist or holds an invalid value.
    #[error("{0}")]
    Input(String),
    /// Output could not be written.
    #[error("output: {0}")]
    Output(#[from] MeshError),
    /// File system error outside meshes.
    #[error("{path}: {source}")]
    Io {
        /// File concerned.
        path: String,
        /// Underlying error.
        source: std::io::Error,
    },
}

/// A scene value refused by validation: its key path (e.g.
/// `local_global.iterations`) and what is wrong with it; the scene reader
/// turns it into [`SimError::Scene`] with the file's name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invalid {
    /// Key path of the offending value.
    pub key: String,
    /// What is wrong.
    pub message: String,
}

impl Invalid {
    /// The value at `key` is wrong as `message` says.
    pub fn new(key: String, message: String) -> Self {
        Invalid { key, message }
    }
}
