/// Errors of the sparse direct engine.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum LinalgError {
    /// Shapes do not fit.
    #[error("dimension mismatch: {0}")]
    Dimension(String),
    /// The ordering failed.
    #[error("ordering: {0}")]
    Ordering(String),
    /// The factorization failed (e.g. a non-positive pivot).
    #[error("factorization: {0}")]
    Factorization(String),
    /// An index does not fit METIS's 32-bit integers.
    #[error("{0} does not fit a 32-bit index")]
    TooLarge(usize),
}
