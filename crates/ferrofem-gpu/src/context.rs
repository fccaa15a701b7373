//! The device: one adapter with f64 shaders, its queue, and the errors
//! it reports (validation, out of memory, device loss) collected so that a
//! failed dispatch is an error of the step, never a panic.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use ferrofem::device::DeviceError;

/// Environment variable that picks an adapter by a part of its name
/// (e.g. `llvmpipe`, `NVIDIA`); without it the fastest kind is taken
/// (discrete, integrated, virtual, then CPU).
pub const ADAPTER_VARIABLE: &str = "FERROFEM_GPU_ADAPTER";

/// An adapter's device and queue, shared by every kernel of a process.
#[derive(Debug)]
pub struct Gpu {
    pub(crate) device: wgpu::Device,
    pub(crate) queue: wgpu::Queue,
    info: wgpu::AdapterInfo,
    /// The first error the device reported since the last check.
    error: Arc<Mutex<Option<String>>>,
    /// Compiled kernels by name: a pipeline is compiled once per device.
    pipelines: Mutex<HashMap<&'static str, wgpu::ComputePipeline>>,
}

impl Gpu {
    /// The process's device, created on first use: an adapter (Vulkan,
    /// Metal or DX12) whose shaders have f64 (`SHADER_F64`). The error
    /// names what is missing; it is kept, so later calls return it too.
    pub fn shared() -> Result<Arc<Gpu>, DeviceError> {
        static GPU: OnceLock<Result<Arc<Gpu>, DeviceError>> = OnceLock::new();
        GPU.get_or_init(|| Gpu::new().map(Arc::new)).clone()
    }

    /// A new device on the adapter [`ADAPTER_VARIABLE`] names, or the
    /// fastest with f64 shaders.
    pub fn new() -> Result<Gpu, DeviceError> {
        let instance = wgpu::Instance::new(wgpu::InstanceDescriptor {
            backends: wgpu::Backends::VULKAN | wgpu::Backends::METAL | wgpu::Backends::DX12,
            ..wgpu::InstanceDescriptor::new_without_display_handle()
        });
        let adapters = pollster::block_on(instance.enumerate_adapters(wgpu::Backends::all()));
        let adapter = choose(adapters, std::env::var(ADAPTER_VARIABLE).ok().as_deref())?;
        let info = adapter.get_info();
        if !adapter.features().contains(wgpu::Features::SHADER_F64) {
            return Err(DeviceError::MissingFeature { adapter: info.name, feature: "SHADER_F64" });
        }
        let limits = adapter.limits();
        // Timestamps where the adapter has them: the device's own time of
        // a frame or a solve (`Link::timed_pass`).
        let features = wgpu::Features::SHADER_F64 | (adapter.features() & wgpu::Features::TIMESTAMP_QUERY);
        let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
            label: Some("ferrofem"),
            required_features: features,
            required_limits: wgpu::Limits {
                max_storage_buffers_per_shader_stage: 8.min(limits.max_storage_buffers_per_shader_stage),
                max_storage_buffer_binding_size: limits.max_storage_buffer_binding_size,
                max_buffer_size: limits.max_buffer_size,
                ..wgpu::Limits::downlevel_defaults()
            },
            ..Default::default()
        }))
        .map_err(|e| DeviceError::Device(format!("{}: {e}", info.name)))?;
        let error = Arc::new(Mutex::new(None));
        let sink = error.clone();
        device.on_uncaptured_error(Arc::new(move |e: wgpu::Error| {
            sink.lock().unwrap_or_else(|p| p.into_inner()).get_or_insert(e.to_string());
        }));
        let sink = error.clone();
        device.set_device_lost_callback(move |reason, message| {
            let lost = format!("device lost ({reason:?}): {message}");
            sink.lock().unwrap_or_else(|p| p.into_inner()).get_or_insert(lost);
        });
        Ok(Gpu { device, queue, info, error, pipelines: Mutex::default() })
    }

    /// The adapter's name, driver and backend, e.g.
    /// `llvmpipe (LLVM 15.0.6, 256 bits), Mesa 22.3.6 (Vulkan)`.
    pub fn adapter(&self) -> String {
        let i = &self.info;
        format!("{}, {} {} ({:?})", i.name, i.driver, i.driver_info, i.backend)
    }

    /// Whether the device writes timestamps (`TIMESTAMP_QUERY`).
    pub fn timestamps(&self) -> bool {
        self.device.features().contains(wgpu::Features::TIMESTAMP_QUERY)
    }

    /// Whether the adapter is a CPU implementation (lavapipe, WARP): right
    /// for correctness, not a speed.
    pub fn is_software(&self) -> bool {
        self.info.device_type == wgpu::DeviceType::Cpu
    }

    /// The kernel `name` compiled from WGSL `source` (entry point `main`,
    /// layout from the shader), compiled on first use.
    pub(crate) fn pipeline(&self, name: &'static str, source: &str) -> wgpu::ComputePipeline {
        let mut cache = self.pipelines.lock().unwrap_or_else(|p| p.into_inner());
        cache.entry(name).or_insert_with(|| compile(self, name, source)).clone()
    }

    /// Waits for the queue and returns the first error the device reported.
    pub(crate) fn check(&self) -> Result<(), DeviceError> {
        let polled = self.device.poll(wgpu::PollType::wait_indefinitely());
        let reported = self.error.lock().unwrap_or_else(|p| p.into_inner()).take();
        match (reported, polled) {
            (Some(e), _) => Err(DeviceError::Device(e)),
            (None, Err(e)) => Err(DeviceError::Device(e.to_string())),
            (None, Ok(_)) => Ok(()),
        }
    }
}

/// Compiles a compute pipeline from WGSL source (entry point `main`,
/// layout taken from the shader); [`Gpu::pipeline`] keeps it.
fn compile(gpu: &Gpu, label: &str, source: &str) -> wgpu::ComputePipeline {
    let desc =
        wgpu::ShaderModuleDescriptor { label: Some(label), source: wgpu::ShaderSource::Wgsl(source.into()) };
    let module = gpu.device.create_shader_module(desc);
    gpu.device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: Some(label),
        layout: None,
        module: &module,
        entry_point: Some("main"),
        compilation_options: Default::default(),
        cache: None,
    })
}

/// The adapter named by `wanted` (a part of its name), else the fastest kind.
fn choose(adapters: Vec<wgpu::Adapter>, wanted: Option<&str>) -> Result<wgpu::Adapter, DeviceError> {
    let names: Vec<String> = adapters.iter().map(|a| a.get_info().name).collect();
    if let Some(w) = wanted {
        let w = w.to_lowercase();
        return adapters.into_iter().find(|a| a.get_info().name.to_lowercase().contains(&w)).ok_or_else(
            || DeviceError::NoAdapter(format!("{ADAPTER_VARIABLE}={w} matches none of {names:?}")),
        );
    }
    let rank = |a: &wgpu::Adapter| match a.get_info().device_type {
        wgpu::DeviceType::DiscreteGpu => 0,
        wgpu::DeviceType::IntegratedGpu => 1,
        wgpu::DeviceType::VirtualGpu => 2,
        wgpu::DeviceType::Cpu => 3,
        wgpu::DeviceType::Other => 4,
    };
    let with_f64 = |a: &wgpu::Adapter| !a.features().contains(wgpu::Features::SHADER_F64) as u8;
    adapters.into_iter().min_by_key(|a| (with_f64(a), rank(a))).ok_or_else(|| {
        DeviceError::NoAdapter(
            "no Vulkan, Metal or DX12 adapter (on Linux without a GPU, Mesa's lavapipe: mesa-vulkan-drivers)"
                .into(),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn adapters() -> Vec<wgpu::Adapter> {
        let instance = wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle());
        pollster::block_on(instance.enumerate_adapters(wgpu::Backends::all()))
    }

    #[test]
    fn no_adapter_is_an_error_that_says_what_to_install() {
        let e = choose(Vec::new(), None).unwrap_err().to_string();
        assert!(e.contains("no GPU adapter") && e.contains("mesa-vulkan-drivers"), "{e}");
    }

    #[test]
    fn an_adapter_name_that_matches_none_lists_the_adapters() {
        let found: Vec<String> = adapters().iter().map(|a| a.get_info().name).collect();
        let e = choose(adapters(), Some("no-such-adapter")).unwrap_err().to_string();
        assert!(e.contains(ADAPTER_VARIABLE) && e.contains("no-such-adapter"), "{e}");
        assert!(found.iter().all(|name| e.contains(name.as_str())), "{e} should list {found:?}");
        // A part of a real name, in any case, picks that adapter.
        if let Some(name) = found.first() {
            let part = name.split_whitespace().next().unwrap_or(name).to_uppercase();
            assert!(choose(adapters(), Some(&part)).unwrap().get_info().name.to_uppercase().contains(&part));
        }
    }

    #[test]
    fn a_missing_feature_is_named() {
        let e = DeviceError::MissingFeature { adapter: "some adapter".into(), feature: "SHADER_F64" };
        assert!(e.to_string().contains("some adapter lacks the feature SHADER_F64"), "{e}");
    }
}
