//! What a device stage can fail with.

/// A device's failure, returned by the stage that met it; the message
/// names the adapter or the missing feature.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DeviceError {
    /// `device = "gpu"` in a world built without a backend.
    #[error("device = \"gpu\" needs a GPU backend, and this world was built without one (a program passes `ferrofem_gpu::backend()` to `Scene::build_on`)")]
    NoBackend,
    /// No adapter at all, or none matching the adapter the user named.
    #[error("no GPU adapter: {0}")]
    NoAdapter(String),
    /// The adapter lacks a feature the backend needs.
    #[error("GPU adapter {adapter} lacks the feature {feature} (f64 in shaders); ferrofem's GPU backend computes in f64")]
    MissingFeature {
        /// Adapter name.
        adapter: String,
        /// The backend's feature name.
        feature: &'static str,
    },
    /// The device could not be created, reported an error, or was lost.
    #[error("GPU device: {0}")]
    Device(String),
    /// Sizes that do not match what was uploaded.
    #[error("GPU backend input: {0}")]
    Input(String),
}
