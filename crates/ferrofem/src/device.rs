//! Where the local-global global step runs: `[simulation] device`.
//! The GPU backend (`ferrofem-gpu`, feature `gpu`, on by default) keeps
//! each body's sparse inverse and right-hand-side map resident; the local
//! step and the constraint solve stay on the CPU (what runs where:
//! `docs/gpu.md`).

use serde::{Deserialize, Serialize};

/// The device of the global step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Device {
    /// Every stage on the CPU threads.
    #[default]
    Cpu,
    /// The global step (right-hand-side assembly and `Sᵀ D⁻¹ S` products)
    /// on the GPU, in f64.
    Gpu,
}

impl Device {
    /// The name used in scene files and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Device::Cpu => "cpu",
            Device::Gpu => "gpu",
        }
    }
}

/// The GPU adapter this process computes on (name, driver, backend), or
/// why there is none: no adapter, one without f64 shaders, or a build
/// without the `gpu` feature.
pub fn gpu_adapter() -> Result<String, String> {
    #[cfg(feature = "gpu")]
    return ferrofem_gpu::Gpu::shared().map(|g| g.adapter()).map_err(|e| e.to_string());
    #[cfg(not(feature = "gpu"))]
    Err(NOT_BUILT.into())
}

/// Why `device = "gpu"` fails in a build without the backend.
#[cfg(not(feature = "gpu"))]
pub(crate) const NOT_BUILT: &str = "this build of ferrofem has no GPU backend (cargo feature `gpu`)";
