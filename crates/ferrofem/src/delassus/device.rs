//! The isodof build of `W̄` on the GPU (`[simulation] device = "gpu"`
//! under implicit Euler): the factor is uploaded when it changes (each
//! asynchronous refactorization lands a new one), `W̄ = Ī A⁻¹ Īᵀ` is built
//! on the device — every isolated DOF anew, or through the device's
//! isodof cache (zeng2022 §5), which keeps the columns while the factor
//! is unchanged — and `W = Ĥ W̄ Ĥᵀ` (zeng2022 eq. 25) on the host as in
//! [`super::isodof`].

use std::collections::HashMap;
use std::sync::Arc;

use ferrofem_gpu::{DeviceFactor, Gpu};
use ferrofem_linalg::ldlt::IsodofReuse;
use ferrofem_linalg::{CsrMatrix, Ldlt};

use super::buffers::DelassusBuffers;
use super::isodof::{expand, isodofs, SlotMatrix};

/// A body's factor on the device, and the first error the device gave.
#[derive(Debug, Default)]
pub struct DeviceDelassus {
    factor: Option<(Arc<Ldlt>, DeviceFactor)>,
    /// The first device error since it was last taken.
    pub error: Option<String>,
}

impl DeviceDelassus {
    /// `W` row-major (`c × c`, in `buf`) with `W̄` from the device. A
    /// device error leaves `W` NaN and is kept in [`Self::error`].
    /// `reuse`: through the device's isodof cache.
    pub fn isodof<'b>(
        &mut self,
        f: &Arc<Ldlt>,
        h: &CsrMatrix,
        buf: &'b mut DelassusBuffers,
        reuse: bool,
    ) -> (&'b [f64], IsodofReuse) {
        let dofs = isodofs(h);
        let mut reused = 0;
        match self.wbar(f, &dofs, reuse) {
            Ok((wbar, r)) => {
                reused = r;
                buf.wbar = wbar;
                let pos: HashMap<usize, usize> = dofs.iter().enumerate().map(|(i, &d)| (d, i)).collect();
                let m = dofs.len();
                let wbar = SlotMatrix { values: &buf.wbar, ld: m, len: m };
                expand(h, |d| pos[&d], &wbar, &mut buf.t, &mut buf.w);
            }
            Err(e) => {
                self.error.get_or_insert(e);
                buf.w.clear();
                buf.w.resize(h.nrows() * h.nrows(), f64::NAN);
            }
        }
        (&buf.w, IsodofReuse { isodofs: dofs.len(), reused })
    }

    /// `W̄` for `dofs` and the DOFs reused, uploading `f` first when it is
    /// not the resident one (which also empties the cache).
    fn wbar(&mut self, f: &Arc<Ldlt>, dofs: &[usize], reuse: bool) -> Result<(Vec<f64>, usize), String> {
        if !self.factor.as_ref().is_some_and(|(g, _)| Arc::ptr_eq(f, g)) {
            self.factor = None;
            let gpu = Gpu::shared().map_err(|e| e.to_string())?;
            self.factor = Some((f.clone(), DeviceFactor::new(gpu, f).map_err(|e| e.to_string())?));
        }
        let (_, device) = self.factor.as_mut().expect("uploaded above");
        match reuse {
            true => device.delassus_reuse(dofs),
            false => device.delassus(dofs).map(|w| (w, 0)),
        }
        .map_err(|e| e.to_string())
    }
}
