//! `ferrofem.Batch`: many simulations stepped at once with the GIL
//! released ([`ferrofem::batch::step_worlds`]), their states read as
//! stacked NumPy arrays, each world reachable as its `Simulation` for
//! control and per-world reset.

use std::path::PathBuf;

use ferrofem::batch::{step_worlds, BatchMode};
use ferrofem::World;
use numpy::ndarray::Array3;
use numpy::{IntoPyArray, PyArray1, PyArray3};
use pyo3::exceptions::{PyIndexError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use crate::convert::{index, to_dict, to_py};
use crate::simulation::{load_scene, Inner, Simulation};
use crate::{SimulationError, SimulationWarning};

/// Simulations stepped together: `Batch([...])` of scene names or paths,
/// scene dicts, or `Simulation` objects (each at most once).
#[pyclass(name = "Batch", module = "ferrofem", frozen)]
pub struct Batch {
    sims: Vec<Py<Simulation>>,
    mode: BatchMode,
}

/// A world of a batch from what the caller gave.
fn simulation(py: Python<'_>, item: &Bound<'_, PyAny>, k: usize) -> PyResult<Py<Simulation>> {
    let named = |e: PyErr| {
        let message = format!("world {k}: {}", e.value(py));
        match e.get_type(py).is(py.get_type::<PyValueError>()) {
            true => PyValueError::new_err(message),
            false => e,
        }
    };
    if let Ok(sim) = item.cast::<Simulation>() {
        return Ok(sim.clone().unbind());
    }
    if let Ok(dict) = item.cast::<PyDict>() {
        return Simulation::from_dict(dict, None).map_err(named).and_then(|s| Py::new(py, s));
    }
    if item.extract::<PathBuf>().is_ok() {
        return load_scene(item).map_err(named).and_then(|s| Py::new(py, s));
    }
    Err(PyValueError::new_err(format!(
        "world {k}: a scene name or path, a scene dict or a Simulation is expected, got {}",
        item.get_type().name()?
    )))
}

impl Batch {
    /// Runs `f` on every world's state, locked in order (the GIL released
    /// while a world is stepped elsewhere).
    fn with_all<R>(&self, py: Python<'_>, f: impl FnOnce(&mut [&mut Inner]) -> R) -> R {
        let refs: Vec<&Simulation> = self.sims.iter().map(|s| s.get()).collect();
        let mut guards: Vec<_> = refs.iter().map(|s| s.lock(py)).collect();
        let mut inners: Vec<&mut Inner> = guards.iter_mut().map(|g| &mut **g).collect();
        f(&mut inners)
    }

    /// A per-world `(n, 3)` field of body `body` stacked as `(N, n, 3)`;
    /// a world without that body, or with another vertex count, is a
    /// `ValueError` naming it.
    fn stacked<'py>(
        &self,
        py: Python<'py>,
        body: &Bound<'_, PyAny>,
        field: impl Fn(&Inner, usize) -> Vec<f64>,
    ) -> PyResult<Bound<'py, PyArray3<f64>>> {
        let rows = self.with_all(py, |inners| {
            let mut rows: Vec<Vec<f64>> = Vec::with_capacity(inners.len());
            for (k, inner) in inners.iter().enumerate() {
                let b = inner.body(body).map_err(|e| PyValueError::new_err(format!("world {k}: {}", e.value(py))))?;
                let values = field(inner, b);
                if let Some(first) = rows.first().filter(|f| f.len() != values.len()) {
                    return Err(PyValueError::new_err(format!(
                        "world {k}: its body has {} vertices where world 0's has {}; read it alone (batch[{k}])",
                        values.len() / 3,
                        first.len() / 3
                    )));
                }
                rows.push(values);
            }
            Ok(rows)
        })?;
        let n = rows.first().map_or(0, |r| r.len() / 3);
        let flat: Vec<f64> = rows.concat();
        Ok(Array3::from_shape_vec((rows.len(), n, 3), flat).expect("n × 3 per world").into_pyarray(py))
    }
}

#[pymethods]
impl Batch {
    /// A batch of worlds: scene names or paths, scene dicts (as
    /// `Simulation.from_dict`), or `Simulation` objects; `mode` is `auto`
    /// (one world per thread when there are at least as many worlds as
    /// threads and each is small), `worlds` or `inside` (one world after
    /// another, each on every thread). Results are bitwise those of
    /// stepping each world alone.
    #[new]
    #[pyo3(signature = (scenes, mode = "auto"))]
    fn new(py: Python<'_>, scenes: &Bound<'_, PyAny>, mode: &str) -> PyResult<Batch> {
        let mode = match mode {
            "auto" => BatchMode::Auto,
            "worlds" => BatchMode::Worlds,
            "inside" => BatchMode::Inside,
            other => {
                return Err(PyValueError::new_err(format!(
                    "mode {other:?}: expected \"auto\", \"worlds\" or \"inside\""
                )))
            }
        };
        let mut sims: Vec<Py<Simulation>> = Vec::new();
        for (k, item) in scenes.try_iter()?.enumerate() {
            let sim = simulation(py, &item?, k)?;
            if let Some(j) = sims.iter().position(|s| s.is(&sim)) {
                return Err(PyValueError::new_err(format!(
                    "world {k}: the same Simulation as world {j} (a world is stepped once per step)"
                )));
            }
            sims.push(sim);
        }
        Ok(Batch { sims, mode })
    }

    /// Advances every world `n` steps with the GIL released. A world whose
    /// step fails stops there and the call raises `SimulationError`
    /// naming the world (`world k: ...`) after the others have stepped;
    /// they stay usable, as does the failed one's `Simulation`. A step that
    /// is a violation warns with `SimulationWarning`, naming the world.
    #[pyo3(signature = (n = 1))]
    fn step(&self, py: Python<'_>, n: usize) -> PyResult<()> {
        if n == 0 {
            return Err(PyValueError::new_err("step(n): n must be at least 1"));
        }
        let mode = self.mode;
        let results = self.with_all(py, |inners| {
            let outcome = {
                let mut worlds: Vec<&mut World> = inners.iter_mut().map(|i| &mut i.world).collect();
                py.detach(|| step_worlds(&mut worlds, n, mode))
            };
            let mut reports = Vec::new();
            for (k, (inner, result)) in inners.iter_mut().zip(outcome).enumerate() {
                match result {
                    Ok(last) => {
                        let violation = last.as_ref().and_then(|s| s.violation.clone().map(|v| (s.step, v)));
                        if let Some((step, v)) = violation {
                            reports.push((k, Ok(format!("world {k}: step {step}: {v}"))));
                        }
                        inner.last = last.or(inner.last.take());
                    }
                    Err(e) => reports.push((k, Err(format!("world {k}: {}", to_py(e).value(py))))),
                }
            }
            reports
        });
        let mut failure = None;
        for (_, report) in results {
            match report {
                Ok(warning) => {
                    let message = std::ffi::CString::new(warning).unwrap_or_default();
                    PyErr::warn(py, &py.get_type::<SimulationWarning>(), &message, 1)?;
                }
                Err(e) => failure = failure.or(Some(e)),
            }
        }
        failure.map_or(Ok(()), |e| Err(SimulationError::new_err(e)))
    }

    /// Rebuilds world `world` (default: every world) from its scene, as
    /// `Simulation.reset` does.
    #[pyo3(signature = (world = None))]
    fn reset(&self, py: Python<'_>, world: Option<i64>) -> PyResult<()> {
        match world {
            Some(k) => self.sims[index(k, "world", self.sims.len())?].get().reset(py),
            None => self.sims.iter().try_for_each(|s| s.get().reset(py)),
        }
    }

    /// Number of worlds.
    fn __len__(&self) -> usize {
        self.sims.len()
    }

    /// World `k` as its `Simulation` (control, per-world reads).
    fn __getitem__(&self, py: Python<'_>, k: i64) -> PyResult<Py<Simulation>> {
        let len = self.sims.len() as i64;
        let k = if k < 0 { k + len } else { k };
        usize::try_from(k)
            .ok()
            .and_then(|k| self.sims.get(k))
            .map(|s| s.clone_ref(py))
            .ok_or_else(|| PyIndexError::new_err(format!("world {k}: out of range (0 to {})", len - 1)))
    }

    /// The worlds' `Simulation` objects, in order.
    #[getter]
    fn simulations<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        PyList::new(py, self.sims.iter().map(|s| s.clone_ref(py)))
    }

    /// How the worlds are spread over the threads (`auto`, `worlds`, `inside`).
    #[getter]
    fn mode(&self) -> &'static str {
        match self.mode {
            BatchMode::Auto => "auto",
            BatchMode::Worlds => "worlds",
            BatchMode::Inside => "inside",
        }
    }

    /// Simulated time of each world (s), `(N,)`.
    #[getter]
    fn time<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        let t: Vec<f64> = self.with_all(py, |inners| inners.iter().map(|i| i.world.state.time).collect());
        PyArray1::from_vec(py, t)
    }

    /// The last step's stats of each world, as `Simulation.last_stats`.
    #[getter]
    fn last_stats<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyAny>>> {
        self.with_all(py, |inners| inners.iter().map(|i| to_dict(py, &i.last)).collect())
    }

    /// Positions of body `body` in every world, `(N, n, 3)` float64 (m).
    fn positions<'py>(
        &self,
        py: Python<'py>,
        body: &Bound<'_, PyAny>,
    ) -> PyResult<Bound<'py, PyArray3<f64>>> {
        self.stacked(py, body, |i, b| i.world.state.bodies[b].positions.clone())
    }

    /// Velocities of body `body` in every world, `(N, n, 3)` float64 (m/s).
    fn velocities<'py>(
        &self,
        py: Python<'py>,
        body: &Bound<'_, PyAny>,
    ) -> PyResult<Bound<'py, PyArray3<f64>>> {
        self.stacked(py, body, |i, b| i.world.state.bodies[b].velocities.clone())
    }

    /// Contact force (N) on each vertex of body `body` in the last step of
    /// every world, `(N, n, 3)`.
    fn contact_forces<'py>(
        &self,
        py: Python<'py>,
        body: &Bound<'_, PyAny>,
    ) -> PyResult<Bound<'py, PyArray3<f64>>> {
        self.stacked(py, body, |i, b| i.contact_forces(b))
    }

    fn __repr__(&self) -> String {
        format!("Batch({} worlds, mode {:?})", self.sims.len(), self.mode())
    }
}
