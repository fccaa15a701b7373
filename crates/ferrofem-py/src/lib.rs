//! Python bindings of ferrofem (`import ferrofem`): scenes from files,
//! built-in names or dicts; stepping with the GIL released; positions,
//! velocities and contact forces as NumPy arrays; control between steps
//! (kinematic vertices, obstacle poses, attachments); ParaView frames.
//! Documented in `docs/python.md`; `ferrofem.pyi` holds the signatures.

mod convert;
mod mesh;
mod scene_dict;
mod simulation;

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;

pyo3::create_exception!(
    ferrofem,
    SimulationError,
    PyRuntimeError,
    "A simulation step failed: it blew up (non-finite values), a solver failed, or the constraints \
     could not be met. The message names the step, the body and the stage."
);

/// Sets the number of worker threads of the solver (default: all cores).
/// It can be set once, before the first simulation is stepped.
#[pyfunction]
fn set_threads(n: usize) -> PyResult<()> {
    rayon::ThreadPoolBuilder::new()
        .num_threads(n.max(1))
        .build_global()
        .map_err(|e| PyRuntimeError::new_err(format!("cannot set up {n} threads: {e}")))
}

/// The solver's number of worker threads.
#[pyfunction]
fn threads() -> usize {
    rayon::current_num_threads()
}

/// Real-time finite-element simulation of soft bodies in frictional contact.
#[pymodule]
fn ferrofem(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("SimulationError", m.py().get_type::<SimulationError>())?;
    m.add_class::<simulation::Simulation>()?;
    m.add_class::<mesh::TetMesh>()?;
    m.add_function(wrap_pyfunction!(simulation::load_scene, m)?)?;
    m.add_function(wrap_pyfunction!(simulation::builtin_scenes, m)?)?;
    m.add_function(wrap_pyfunction!(mesh::read_mesh, m)?)?;
    m.add_function(wrap_pyfunction!(set_threads, m)?)?;
    m.add_function(wrap_pyfunction!(threads, m)?)?;
    Ok(())
}
