//! The isodof build of `W̄` on the GPU (`[simulation] device = "gpu"`
//! under implicit Euler): the factor is uploaded when it changes (each
//! asynchronous refactorization lands a new one), `W̄ = Ī A⁻¹ Īᵀ` is built
//! on the device — every isolated DOF anew, or through the device's
//! isodof cache (zeng2022 §5), which keeps the columns while the factor
//! is unchanged — and `W = Ĥ W̄ Ĥᵀ` (zeng2022 eq. 25) on the host as in
//! [`super::isodof`].

use std::collections::HashMap;
use std::sync::Arc;

use ferrofem_linalg::ldlt::IsodofReuse;
use ferrofem_linalg::{CsrMatrix, Ldlt};

use super::buffers::DelassusBuffers;
use super::isodof::{expand, isodofs, SlotMatrix};
use crate::device::{DeviceError, DeviceFactor, SharedBackend};

/// A body's factor on the world's backend, uploaded when it changes.
#[derive(Debug)]
pub struct DeviceDelassus {
    backend: SharedBackend,
    factor: Option<(Arc<Ldlt>, Box<dyn DeviceFactor>)>,
}

impl DeviceDelassus {
    /// Builds on `backend` from now on; nothing is uploaded yet.
    pub fn new(backend: SharedBackend) -> Self {
        DeviceDelassus { backend, factor: None }
    }

    /// The backend's counters so far (`docs/gpu.md`, "Counters").
    pub fn counters(&self) -> crate::device::DeviceCounters {
        self.backend.counters()
    }

    /// `scale · W` row-major (`c × c`, in `buf`) with `W̄` from the
    /// device. `reuse`: through the device's isodof cache.
    pub fn isodof<'b>(
        &mut self,
        f: &Arc<Ldlt>,
        h: &CsrMatrix,
        buf: &'b mut DelassusBuffers,
        reuse: bool,
        scale: f64,
    ) -> Result<(&'b [f64], IsodofReuse), DeviceError> {
        let dofs = isodofs(h);
        let (wbar, reused) = self.wbar(f, &dofs, reuse)?;
        buf.wbar = wbar;
        let pos: HashMap<usize, usize> = dofs.iter().enumerate().map(|(i, &d)| (d, i)).collect();
        let m = dofs.len();
        let wbar = SlotMatrix { values: &buf.wbar, ld: m, len: m };
        expand(h, |d| pos[&d], &wbar, scale, &mut buf.w);
        Ok((&buf.w, IsodofReuse { isodofs: dofs.len(), reused }))
    }

    /// `W̄` for `dofs` and the DOFs reused, uploading `f` first when it is
    /// not the resident one (which also empties the cache).
    fn wbar(&mut self, f: &Arc<Ldlt>, dofs: &[usize], reuse: bool) -> Result<(Vec<f64>, usize), DeviceError> {
        if !self.factor.as_ref().is_some_and(|(g, _)| Arc::ptr_eq(f, g)) {
            self.factor = None;
            self.factor = Some((f.clone(), self.backend.factor(f)?));
        }
        let (_, device) = self.factor.as_mut().expect("uploaded above");
        match reuse {
            true => device.delassus_reuse(dofs),
            false => device.delassus(dofs).map(|w| (w, 0)),
        }
    }
}
