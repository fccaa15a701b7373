//! Python bindings of ferrofem (`import ferrofem`): scenes from files,
//! built-in names or dicts; stepping with the GIL released; positions,
//! velocities and contact forces as NumPy arrays; control between steps
//! (kinematic vertices, obstacle poses, attachments); ParaView frames;
//! batches of worlds stepped at once.
//! Documented in `docs/python.md`; `python/ferrofem/__init__.pyi` holds the signatures;
//! `python/ferrofem` holds the package's Python part (`gym`).

mod batch;
mod convert;
mod mesh;
mod scene_dict;
mod simulation;

use pyo3::exceptions::{PyRuntimeError, PyUserWarning, PyValueError};
use pyo3::prelude::*;

pyo3::create_exception!(
    ferrofem,
    SimulationError,
    PyRuntimeError,
    "A simulation step failed: it blew up (non-finite values), a solver failed, or the constraints \
     could not be met. The message names the step, the body and the stage."
);

pyo3::create_exception!(
    ferrofem,
    SimulationWarning,
    PyUserWarning,
    "A step went on but is not what it should be: a penetration deeper than [contact] \
     max_penetration, inverted elements, or a solve that ended no better than it started. The \
     message names the step, the body and the stage, as the command line's warning does."
);

/// Sets the number of worker threads of the solver (default: all cores).
/// It can be set once, before the first simulation is built or stepped.
#[pyfunction]
fn set_threads(n: i64) -> PyResult<()> {
    if n < 1 {
        return Err(PyValueError::new_err(format!("set_threads({n}): at least 1 thread")));
    }
    rayon::ThreadPoolBuilder::new().num_threads(n as usize).build_global().map_err(|_| {
        PyRuntimeError::new_err(format!(
            "set_threads({n}) comes too late: the solver's pool already runs {} threads (call it \
             once, before the first simulation is built or stepped)",
            rayon::current_num_threads()
        ))
    })
}

/// The solver's number of worker threads.
#[pyfunction]
fn threads() -> usize {
    rayon::current_num_threads()
}

/// Real-time finite-element simulation of soft bodies in frictional
/// contact: the compiled part of the `ferrofem` package, re-exported by its
/// `__init__.py`.
#[pymodule]
fn _ferrofem(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("SimulationError", m.py().get_type::<SimulationError>())?;
    m.add("SimulationWarning", m.py().get_type::<SimulationWarning>())?;
    m.add_class::<simulation::Simulation>()?;
    m.add_class::<batch::Batch>()?;
    m.add_class::<mesh::TetMesh>()?;
    m.add_function(wrap_pyfunction!(simulation::load_scene, m)?)?;
    m.add_function(wrap_pyfunction!(simulation::builtin_scenes, m)?)?;
    m.add_function(wrap_pyfunction!(mesh::read_mesh, m)?)?;
    m.add_function(wrap_pyfunction!(set_threads, m)?)?;
    m.add_function(wrap_pyfunction!(threads, m)?)?;
    Ok(())
}
