//! Where the stages with a device path run (`[simulation] device`), and
//! the seam a compute backend implements ([`Backend`]). The library
//! defines the seam and never depends on a backend: a program passes one
//! when it builds the world (`ferrofem_gpu::backend()`, whose wgpu
//! kernels run local-global's global step and non-smooth Newton solve and
//! implicit Euler's `W̄` in f64; what runs where: `docs/gpu.md`).

mod backend;
mod constraints;
mod counters;
mod error;

use serde::{Deserialize, Serialize};

pub use backend::{
    Backend, DeviceFactor, DeviceGlobalStep, DeviceNewton, DeviceTerms, RhsMap, SharedBackend,
};
pub use constraints::{
    ContactFrame, ContactFrameOutcome, DeviceRows, FrameState, GroupLaw, NewtonParams, Offset,
};
pub use counters::DeviceCounters;
pub use error::DeviceError;

/// The device of the stages that have a GPU path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Device {
    /// Every stage on the CPU threads.
    #[default]
    Cpu,
    /// The stages with a device path on the world's [`Backend`], in f64.
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
