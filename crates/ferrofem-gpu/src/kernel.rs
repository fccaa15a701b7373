//! Buffers, pipelines and dispatch grids shared by the kernels.

use wgpu::util::DeviceExt;

use crate::link::Timer;
use crate::{Gpu, Link};

/// Workgroup size of every kernel.
pub(crate) const LANES: u32 = 64;

/// Most workgroups along one dimension of a dispatch.
const MAX_GROUPS: u32 = 65_535;

/// A read-only storage buffer holding `data` (one element when empty: a
/// binding cannot be empty).
pub(crate) fn storage<T: bytemuck::Pod + Default>(gpu: &Link, label: &str, data: &[T]) -> wgpu::Buffer {
    let pad = [T::default()];
    let data = if data.is_empty() { &pad[..] } else { data };
    gpu.uploaded(std::mem::size_of_val(data));
    gpu.device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: Some(label),
        contents: bytemuck::cast_slice(data),
        usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
    })
}

/// An error unless `bytes` fit in one buffer binding of the adapter.
pub(crate) fn fits(gpu: &Gpu, what: &str, bytes: usize) -> Result<(), crate::DeviceError> {
    let limit = gpu.device.limits().max_storage_buffer_binding_size as usize;
    match bytes <= limit {
        true => Ok(()),
        false => Err(crate::DeviceError::Input(format!(
            "{what} needs {:.1} MB in one buffer, above the adapter's {:.1} MB per binding",
            bytes as f64 / (1 << 20) as f64,
            limit as f64 / (1 << 20) as f64
        ))),
    }
}

/// A zeroed buffer of `len` f64 (at least one) with `usage`.
pub(crate) fn zeros(gpu: &Gpu, label: &str, len: usize, usage: wgpu::BufferUsages) -> wgpu::Buffer {
    gpu.device.create_buffer(&wgpu::BufferDescriptor {
        label: Some(label),
        size: 8 * len.max(1) as u64,
        usage,
        mapped_at_creation: false,
    })
}

/// Workgroups `(x, y)` covering `groups`, and the stride `x` a kernel
/// uses to number them (`wg.x + wg.y · x`).
pub(crate) fn grid(groups: u32) -> (u32, u32) {
    let x = groups.clamp(1, MAX_GROUPS);
    (x, groups.div_ceil(x).max(1))
}

/// A uniform `[count, stride]` for a kernel over `count` items.
pub(crate) fn dims(gpu: &Link, count: u32, stride: u32) -> wgpu::Buffer {
    uniform(gpu, &[count, stride])
}

/// A uniform buffer of `values`.
pub(crate) fn uniform(gpu: &Link, values: &[u32]) -> wgpu::Buffer {
    gpu.uploaded(4 * values.len());
    gpu.device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: Some("params"),
        contents: bytemuck::cast_slice(values),
        usage: wgpu::BufferUsages::UNIFORM,
    })
}

/// A bind group of `buffers` at bindings 0, 1, … of the pipeline's group 0.
pub(crate) fn bind(
    gpu: &Gpu,
    pipeline: &wgpu::ComputePipeline,
    buffers: &[&wgpu::Buffer],
) -> wgpu::BindGroup {
    let entries: Vec<wgpu::BindGroupEntry> = buffers
        .iter()
        .enumerate()
        .map(|(i, b)| wgpu::BindGroupEntry { binding: i as u32, resource: b.as_entire_binding() })
        .collect();
    gpu.device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: None,
        layout: &pipeline.get_bind_group_layout(0),
        entries: &entries,
    })
}

/// One dispatch: a pipeline, its bind group and its grid.
#[derive(Debug)]
pub(crate) struct Dispatch {
    pub pipeline: wgpu::ComputePipeline,
    pub group: wgpu::BindGroup,
    pub grid: (u32, u32),
}

impl Dispatch {
    /// Records the dispatch into `pass`, counted on `link`.
    pub fn record(&self, link: &Link, pass: &mut wgpu::ComputePass<'_>) {
        link.dispatched(1);
        pass.set_pipeline(&self.pipeline);
        pass.set_bind_group(0, &self.group, &[]);
        pass.dispatch_workgroups(self.grid.0, self.grid.1, 1);
    }
}

/// As [`read_back_many`], with the pass time of `timer` (when given)
/// resolved, read back in the same wait (two more values in `staging`)
/// and counted.
pub(crate) fn read_back_timed(
    gpu: &Link,
    mut encoder: wgpu::CommandEncoder,
    timer: Option<&Timer>,
    sources: &[&wgpu::Buffer],
    staging: &wgpu::Buffer,
    outs: &mut [&mut [f64]],
) -> Result<(), crate::DeviceError> {
    let Some(timer) = timer else {
        return read_back_many(gpu, encoder, sources, staging, outs);
    };
    let resolved = timer.resolve(&mut encoder);
    let mut stamps = [0.0; 2];
    let sources: Vec<&wgpu::Buffer> = sources.iter().copied().chain([resolved]).collect();
    let mut outs: Vec<&mut [f64]> = outs.iter_mut().map(|o| &mut **o).chain([&mut stamps[..]]).collect();
    read_back_many(gpu, encoder, &sources, staging, &mut outs)?;
    gpu.elapsed(stamps);
    Ok(())
}

/// Copies each of `sources` (as many f64 as its `outs` slice holds) into
/// one `staging` buffer, end to end, after the recorded work: one
/// submission and one host wait for all of them.
pub(crate) fn read_back_many(
    gpu: &Link,
    mut encoder: wgpu::CommandEncoder,
    sources: &[&wgpu::Buffer],
    staging: &wgpu::Buffer,
    outs: &mut [&mut [f64]],
) -> Result<(), crate::DeviceError> {
    let mut bytes = 0;
    for (src, out) in sources.iter().zip(outs.iter()).filter(|(_, out)| !out.is_empty()) {
        let len = 8 * out.len() as u64;
        encoder.copy_buffer_to_buffer(src, 0, staging, bytes, len);
        bytes += len;
    }
    gpu.submit(encoder);
    gpu.read(bytes as usize);
    let slice = staging.slice(..bytes.max(8));
    let (tx, rx) = std::sync::mpsc::channel();
    slice.map_async(wgpu::MapMode::Read, move |r| {
        let _ = tx.send(r);
    });
    gpu.wait()?;
    // Another thread's poll may be the one that runs the callback.
    match rx.recv_timeout(std::time::Duration::from_secs(600)) {
        Ok(Ok(())) => {}
        Ok(Err(e)) => return Err(crate::DeviceError::Device(format!("reading results back: {e}"))),
        Err(_) => {
            return Err(crate::DeviceError::Device("reading results back: the map never completed".into()))
        }
    }
    {
        let view = slice.get_mapped_range().map_err(|e| crate::DeviceError::Device(e.to_string()))?;
        let values = outs.iter_mut().flat_map(|o| o.iter_mut());
        for (o, c) in values.zip(view.chunks_exact(8)) {
            *o = f64::from_ne_bytes(c.try_into().expect("chunks of 8 bytes"));
        }
    }
    staging.unmap();
    Ok(())
}
