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

    /// Waits for the queue (a host wait) and returns the first error the
    /// device reported.
    pub(crate) fn wait(&self) -> Result<(), DeviceError> {
        self.counters.host_waits.fetch_add(1, Relaxed);
        self.gpu.check()
    }
}
