//! What a device did, counted: the measure of a design that keeps data
//! resident (free of timers, so it is the same on every adapter,
//! lavapipe included).

use serde::{Deserialize, Serialize};

/// Traffic and synchronisation between the host and a device, cumulative
/// since the backend was made ([`super::Backend::counters`]) or, in a
/// step's stats, over that step.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct DeviceCounters {
    /// Command buffers submitted to the device's queue.
    pub submissions: u64,
    /// Times the host blocked on the device: a read-back (a mapped
    /// buffer) or a wait for the queue.
    pub host_waits: u64,
    /// Compute dispatches recorded.
    pub dispatches: u64,
    /// Bytes written from the host into device buffers (new buffers'
    /// contents included).
    pub bytes_uploaded: u64,
    /// Bytes read back from the device.
    pub bytes_read_back: u64,
    /// Nanoseconds the device itself spent in its timed passes (a
    /// resident frame, a global step, a Newton solve), from its
    /// timestamps; 0 where the adapter writes none.
    pub device_ns: u64,
}

impl DeviceCounters {
    /// What happened between `earlier` and `self` (counters only grow).
    pub fn since(self, earlier: DeviceCounters) -> DeviceCounters {
        DeviceCounters {
            submissions: self.submissions.saturating_sub(earlier.submissions),
            host_waits: self.host_waits.saturating_sub(earlier.host_waits),
            dispatches: self.dispatches.saturating_sub(earlier.dispatches),
            bytes_uploaded: self.bytes_uploaded.saturating_sub(earlier.bytes_uploaded),
            bytes_read_back: self.bytes_read_back.saturating_sub(earlier.bytes_read_back),
            device_ns: self.device_ns.saturating_sub(earlier.device_ns),
        }
    }

    /// The larger of each count (the worst of several frames).
    pub fn max(self, other: DeviceCounters) -> DeviceCounters {
        DeviceCounters {
            submissions: self.submissions.max(other.submissions),
            host_waits: self.host_waits.max(other.host_waits),
            dispatches: self.dispatches.max(other.dispatches),
            bytes_uploaded: self.bytes_uploaded.max(other.bytes_uploaded),
            bytes_read_back: self.bytes_read_back.max(other.bytes_read_back),
            device_ns: self.device_ns.max(other.device_ns),
        }
    }

    /// The sum of `self` and `other`.
    pub fn plus(self, other: DeviceCounters) -> DeviceCounters {
        DeviceCounters {
            submissions: self.submissions + other.submissions,
            host_waits: self.host_waits + other.host_waits,
            dispatches: self.dispatches + other.dispatches,
            bytes_uploaded: self.bytes_uploaded + other.bytes_uploaded,
            bytes_read_back: self.bytes_read_back + other.bytes_read_back,
            device_ns: self.device_ns + other.device_ns,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn since_and_plus_are_inverse() {
        let a = DeviceCounters {
            submissions: 3,
            host_waits: 2,
            dispatches: 40,
            bytes_uploaded: 900,
            bytes_read_back: 24,
            device_ns: 5000,
        };
        let b = DeviceCounters {
            submissions: 1,
            host_waits: 1,
            dispatches: 4,
            bytes_uploaded: 100,
            bytes_read_back: 8,
            device_ns: 700,
        };
        assert_eq!(a.plus(b).since(b), a);
        assert_eq!(b.since(a), DeviceCounters::default());
        assert_eq!(a.max(b), a);
    }
}
