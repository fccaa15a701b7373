//! The simulator's device seam ([`ferrofem::device::Backend`]) on the
//! process's [`Gpu`]: each resident object the simulator asks for is one
//! of this crate's kernels' owners.

use std::sync::Arc;

use ferrofem::device::{
    self as seam, ContactFrame, ContactFrameOutcome, DeviceCounters, DeviceError, DeviceRows, DeviceTerms,
    FrameState, GroupLaw, NewtonParams, Offset, RhsMap,
};
use ferrofem::solver::NewtonSolve;
use ferrofem_linalg::{Ldlt, SparseInverse};

use crate::link::Counters;
use crate::{DeviceFactor, DeviceNewton, GlobalStep, Gpu, Link};

/// The GPU backend: the process's shared device, created on first use
/// (no adapter is looked for before a world asks for `device = "gpu"`),
/// and the counters of every object this backend makes.
#[derive(Debug, Clone, Default)]
pub struct GpuBackend {
    counters: Arc<Counters>,
}

/// A GPU backend as a world holds it, with counters of its own.
pub fn backend() -> seam::SharedBackend {
    Arc::new(GpuBackend::default())
}

impl GpuBackend {
    fn link(&self) -> Result<Link, DeviceError> {
        Ok(Link::new(Gpu::shared()?, self.counters.clone()))
    }
}

impl seam::Backend for GpuBackend {
    fn adapter(&self) -> Result<String, DeviceError> {
        Gpu::shared().map(|g| g.adapter())
    }

    fn global_step(
        &self,
        inverse: &SparseInverse,
        map: &RhsMap,
        terms: Option<&DeviceTerms>,
    ) -> Result<Box<dyn seam::DeviceGlobalStep>, DeviceError> {
        Ok(Box::new(GlobalStep::with_terms(self.link()?, inverse, map, terms)?))
    }

    fn factor(&self, factor: &Ldlt) -> Result<Box<dyn seam::DeviceFactor>, DeviceError> {
        Ok(Box::new(DeviceFactor::new(self.link()?, factor)?))
    }

    fn newton(&self) -> Result<Box<dyn seam::DeviceNewton>, DeviceError> {
        Ok(Box::new(DeviceNewton::new(self.link()?)?))
    }

    fn counters(&self) -> DeviceCounters {
        self.counters.snapshot()
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

    fn has_local_step(&self) -> bool {
        GlobalStep::has_local_step(self)
    }

    fn frame(
        &mut self,
        c: &[f64],
        x: &mut [f64],
        rotations: &mut [f64],
        upload_rotations: bool,
        iterations: usize,
    ) -> Result<u64, DeviceError> {
        GlobalStep::frame(self, c, x, rotations, upload_rotations, iterations)
    }

    fn delassus(&mut self, rows: &DeviceRows, h: f64) -> Result<Vec<f64>, DeviceError> {
        GlobalStep::delassus(self, rows, h)
    }

    fn delassus_fits(&self, rows: &DeviceRows) -> Result<(), DeviceError> {
        GlobalStep::delassus_fits(self, rows)
    }

    fn contact_frame(
        &mut self,
        frame: &ContactFrame<'_>,
        state: FrameState<'_>,
    ) -> Result<ContactFrameOutcome, DeviceError> {
        GlobalStep::contact_frame(self, frame, state)
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
