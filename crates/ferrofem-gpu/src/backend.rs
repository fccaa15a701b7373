//! The simulator's device seam ([`ferrofem::device::Backend`]) on the
//! process's [`Gpu`]: each resident object the simulator asks for is one
//! of this crate's kernels' owners.

use std::sync::Arc;

use ferrofem::device::{self as seam, DeviceError, GroupLaw, NewtonParams, Offset, RhsMap};
use ferrofem::solver::NewtonSolve;
use ferrofem_linalg::{Ldlt, SparseInverse};

use crate::{DeviceFactor, DeviceNewton, GlobalStep, Gpu};

/// The GPU backend: the process's shared device, created on first use
/// (no adapter is looked for before a world asks for `device = "gpu"`).
#[derive(Debug, Clone, Copy, Default)]
pub struct GpuBackend;

/// The GPU backend as a world holds it.
pub fn backend() -> seam::SharedBackend {
    Arc::new(GpuBackend)
}

impl seam::Backend for GpuBackend {
    fn adapter(&self) -> Result<String, DeviceError> {
        Gpu::shared().map(|g| g.adapter())
    }

    fn global_step(
        &self,
        inverse: &SparseInverse,
        map: &RhsMap,
    ) -> Result<Box<dyn seam::DeviceGlobalStep>, DeviceError> {
        Ok(Box::new(GlobalStep::new(Gpu::shared()?, inverse, map)?))
    }

    fn factor(&self, factor: &Ldlt) -> Result<Box<dyn seam::DeviceFactor>, DeviceError> {
        Ok(Box::new(DeviceFactor::new(Gpu::shared()?, factor)?))
    }

    fn newton(&self) -> Result<Box<dyn seam::DeviceNewton>, DeviceError> {
        Ok(Box::new(DeviceNewton::new(Gpu::shared()?)?))
    }
}

impl seam::DeviceGlobalStep for GlobalStep {
    fn solve_projected(
        &mut self,
        c: Option<&[f64]>,
        projections: &[&[f64]; 3],
        q: &mut [f64],
    ) -> Result<(), DeviceError> {
        GlobalStep::solve_projected(self, c, projections, q)
    }

    fn solve(&mut self, b: &[f64], q: &mut [f64]) -> Result<(), DeviceError> {
        GlobalStep::solve(self, b, q)
    }

    fn spmv_bytes(&self) -> usize {
        GlobalStep::spmv_bytes(self)
    }
}

impl seam::DeviceFactor for DeviceFactor {
    fn delassus(&mut self, dofs: &[usize]) -> Result<Vec<f64>, DeviceError> {
        DeviceFactor::delassus(self, dofs)
    }

    fn delassus_reuse(&mut self, dofs: &[usize]) -> Result<(Vec<f64>, usize), DeviceError> {
        DeviceFactor::delassus_reuse(self, dofs)
    }
}

impl seam::DeviceNewton for DeviceNewton {
    fn load(&mut self, w: &[f64]) -> Result<(), DeviceError> {
        DeviceNewton::load(self, w)
    }

    fn solve(
        &mut self,
        params: &NewtonParams,
        offset: Offset,
        laws: &[GroupLaw],
        r: &[f64],
        lambda: &mut [f64],
        delta: &mut [f64],
    ) -> Result<NewtonSolve, DeviceError> {
        DeviceNewton::solve(self, params, offset, laws, r, lambda, delta)
    }
}
