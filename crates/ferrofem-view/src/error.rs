//! The viewer's error.

/// Everything that stops the viewer from starting.
#[derive(Debug, thiserror::Error)]
pub enum ViewError {
    /// The scene could not be built.
    #[error(transparent)]
    Sim(#[from] ferrofem::SimError),
    /// The replay folder could not be read.
    #[error("replay: {0}")]
    Replay(String),
    /// A picture or clip could not be made (`ferrofem render`).
    #[error("{0}")]
    Render(String),
    /// The server could not start (address in use, …).
    #[error("{0}")]
    Server(String),
}
