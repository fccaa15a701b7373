//! GPU backend of ferrofem: compute shaders in WGSL on wgpu (Vulkan,
//! Metal, DX12), in f64 on adapters with `SHADER_F64` (NVIDIA, AMD, Intel
//! on Vulkan; Mesa's lavapipe on a machine without a GPU, where it is a
//! correctness run, not a speed). Data stays resident between steps;
//! only what changed is uploaded. What runs where: `docs/gpu.md`.
//!
//! The simulator defines the seam ([`ferrofem::device::Backend`]); this
//! crate implements it ([`backend`]), and a program passes it when it
//! builds a world: `scene.build_on(ferrofem_gpu::backend())`.

mod backend;
mod context;
mod global_step;
mod isodof;
mod kernel;
mod link;
mod newton;

pub use backend::{backend, GpuBackend};
pub use context::{Gpu, ADAPTER_VARIABLE};
pub use ferrofem::device::DeviceError;
pub use global_step::GlobalStep;
pub use isodof::DeviceFactor;
pub use link::Link;
pub use newton::DeviceNewton;
