//! GPU backend of ferrofem: compute shaders in WGSL on wgpu (Vulkan,
//! Metal, DX12), in f64 on adapters with `SHADER_F64` (NVIDIA, AMD, Intel
//! on Vulkan; Mesa's lavapipe on a machine without a GPU, where it is a
//! correctness run, not a speed). Data stays resident between steps;
//! only what changed is uploaded. What runs where: `docs/gpu.md`.

mod context;
mod global_step;
mod isodof;
mod kernel;
mod newton;

pub use context::{Gpu, ADAPTER_VARIABLE};
pub use global_step::{GlobalStep, RhsMap};
pub use isodof::DeviceFactor;
pub use newton::{DeviceNewton, GroupLaw, NewtonOutcome, NewtonParams, Offset};

/// What went wrong on the device; the message names the adapter or the
/// missing feature.
#[derive(Debug, Clone, thiserror::Error)]
pub enum GpuError {
    /// No adapter at all, or none matching [`ADAPTER_VARIABLE`].
    #[error("no GPU adapter: {0}")]
    NoAdapter(String),
    /// The adapter lacks a feature the backend needs.
    #[error("GPU adapter {adapter} lacks the feature {feature} (f64 in shaders); ferrofem's GPU backend computes in f64")]
    MissingFeature {
        /// Adapter name.
        adapter: String,
        /// wgpu feature name.
        feature: &'static str,
    },
    /// The device could not be created, reported an error, or was lost.
    #[error("GPU device: {0}")]
    Device(String),
    /// Sizes that do not match what was uploaded.
    #[error("GPU backend input: {0}")]
    Input(String),
}
