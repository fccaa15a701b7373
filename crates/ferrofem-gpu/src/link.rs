//! A resident object's handle on the device: the shared [`Gpu`] and the
//! counters of the backend that made it, through which every upload,
//! submission, dispatch and host wait goes (`docs/gpu.md`, "Counters").

use std::ops::Deref;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;

use ferrofem::device::{DeviceCounters, DeviceError};

use crate::Gpu;

/// Cumulative counts of one backend's traffic with the device.
#[derive(Debug, Default)]
pub(crate) struct Counters {
    submissions: AtomicU64,
    host_waits: AtomicU64,
    dispatches: AtomicU64,
    bytes_uploaded: AtomicU64,
    bytes_read_back: AtomicU64,
    device_ns: AtomicU64,
}

impl Counters {
    /// The counts so far.
    pub(crate) fn snapshot(&self) -> DeviceCounters {
        DeviceCounters {
            submissions: self.submissions.load(Relaxed),
            host_waits: self.host_waits.load(Relaxed),
            dispatches: self.dispatches.load(Relaxed),
            bytes_uploaded: self.bytes_uploaded.load(Relaxed),
            bytes_read_back: self.bytes_read_back.load(Relaxed),
            device_ns: self.device_ns.load(Relaxed),
        }
    }
}

/// The device and the counters a resident object reports to; it
/// dereferences to the [`Gpu`]. Made from a bare `Arc<Gpu>`, it counts
/// alone; the backend gives all its objects one set of counters.
#[derive(Debug, Clone)]
pub struct Link {
    gpu: Arc<Gpu>,
    counters: Arc<Counters>,
}

impl From<Arc<Gpu>> for Link {
    fn from(gpu: Arc<Gpu>) -> Link {
        Link { gpu, counters: Arc::default() }
    }
}

impl Deref for Link {
    type Target = Gpu;

    fn deref(&self) -> &Gpu {
        &self.gpu
    }
}

impl Link {
    pub(crate) fn new(gpu: Arc<Gpu>, counters: Arc<Counters>) -> Link {
        Link { gpu, counters }
    }

    /// What this link's counters hold so far.
    pub fn counters(&self) -> DeviceCounters {
        self.counters.snapshot()
    }

    /// `data` into `buffer` at byte `offset` (an upload).
    pub(crate) fn write(&self, buffer: &wgpu::Buffer, offset: u64, data: &[u8]) {
        self.gpu.queue.write_buffer(buffer, offset, data);
        self.uploaded(data.len());
    }

    /// Counts `bytes` uploaded (a buffer created with contents).
    pub(crate) fn uploaded(&self, bytes: usize) {
        self.counters.bytes_uploaded.fetch_add(bytes as u64, Relaxed);
    }

    /// Counts `bytes` read back.
    pub(crate) fn read(&self, bytes: usize) {
        self.counters.bytes_read_back.fetch_add(bytes as u64, Relaxed);
    }

    /// Counts `n` dispatches recorded.
    pub(crate) fn dispatched(&self, n: usize) {
        self.counters.dispatches.fetch_add(n as u64, Relaxed);
    }

    /// Submits the recorded work.
    pub(crate) fn submit(&self, encoder: wgpu::CommandEncoder) {
        self.gpu.queue.submit([encoder.finish()]);
        self.counters.submissions.fetch_add(1, Relaxed);
    }

    /// A pair of timestamps for one compute pass, where the device writes
    /// them.
    pub(crate) fn timer(&self) -> Option<Timer> {
        self.gpu.timestamps().then(|| Timer {
            set: self.gpu.device.create_query_set(&wgpu::QuerySetDescriptor {
                label: Some("pass time"),
                ty: wgpu::QueryType::Timestamp,
                count: 2,
            }),
            resolved: self.gpu.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("pass time"),
                size: 16,
                usage: wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
                mapped_at_creation: false,
            }),
        })
    }

    /// A compute pass, its start and end written by `timer` when given.
    pub(crate) fn pass<'e>(
        &self,
        encoder: &'e mut wgpu::CommandEncoder,
        timer: Option<&'e Timer>,
    ) -> wgpu::ComputePass<'e> {
        let timestamp_writes = timer.map(|t| wgpu::ComputePassTimestampWrites {
            query_set: &t.set,
            beginning_of_pass_write_index: Some(0),
            end_of_pass_write_index: Some(1),
        });
        encoder.begin_compute_pass(&wgpu::ComputePassDescriptor { label: None, timestamp_writes })
    }

    /// An empty pass that writes `timer`'s start (`end = false`) or end:
    /// brackets work spread over several passes.
    pub(crate) fn mark(&self, encoder: &mut wgpu::CommandEncoder, timer: Option<&Timer>, end: bool) {
        let timestamp_writes = timer.map(|t| wgpu::ComputePassTimestampWrites {
            query_set: &t.set,
            beginning_of_pass_write_index: (!end).then_some(0),
            end_of_pass_write_index: end.then_some(1),
        });
        drop(encoder.begin_compute_pass(&wgpu::ComputePassDescriptor { label: None, timestamp_writes }));
    }

    /// Counts the device time between a timer's two timestamps, read back
    /// as the bits of two f64 (see [`Timer::resolve`]).
    pub(crate) fn elapsed(&self, stamps: [f64; 2]) {
        let [start, end] = stamps.map(f64::to_bits);
        let ns = end.saturating_sub(start) as f64 * self.gpu.queue.get_timestamp_period() as f64;
        self.counters.device_ns.fetch_add(ns as u64, Relaxed);
    }

    /// Waits for the queue (a host wait) and returns the first error the
    /// device reported.
    pub(crate) fn wait(&self) -> Result<(), DeviceError> {
        self.counters.host_waits.fetch_add(1, Relaxed);
        self.gpu.check()
    }
}

/// Two timestamps around a compute pass ([`Link::pass`]) and the buffer
/// they resolve into, read back with the pass's results.
#[derive(Debug)]
pub(crate) struct Timer {
    set: wgpu::QuerySet,
    resolved: wgpu::Buffer,
}

impl Timer {
    /// Resolves the timestamps after the pass; returns the buffer to read
    /// back (two values, whose bits are the ticks).
    pub(crate) fn resolve(&self, encoder: &mut wgpu::CommandEncoder) -> &wgpu::Buffer {
        encoder.resolve_query_set(&self.set, 0..2, &self.resolved, 0);
        &self.resolved
    }
}
