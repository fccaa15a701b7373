//! Between Python and Rust: errors, stats, arrays.

use std::panic::{catch_unwind, AssertUnwindSafe};

use ferrofem::SimError;
use numpy::ndarray::Array2;
use numpy::{AllowTypeChange, IntoPyArray, PyArray2, PyArrayLike2};
use pyo3::exceptions::{PyFileNotFoundError, PyOSError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyList, PyString};

use crate::SimulationError;

/// A [`SimError`] as the Python exception a user expects: `ValueError` for
/// bad input (scene, mesh, body, control values), `FileNotFoundError` or
/// `OSError` for files, [`SimulationError`] for a run that failed.
pub fn to_py(e: SimError) -> PyErr {
    let message = e.to_string();
    match e {
        SimError::Scene { .. } | SimError::Mesh { .. } | SimError::Body { .. } | SimError::Input(_) => {
            PyValueError::new_err(message)
        }
        SimError::Io { source, .. } if source.kind() == std::io::ErrorKind::NotFound => {
            PyFileNotFoundError::new_err(message)
        }
        SimError::Io { .. } | SimError::Output(_) => PyOSError::new_err(message),
        SimError::NonFinite { .. }
        | SimError::Solver { .. }
        | SimError::Factorization { .. }
        | SimError::Constraints { .. }
        | SimError::Device { .. }
        | SimError::Violation { .. } => SimulationError::new_err(message),
    }
}

/// Runs `f`, turning a panic into a [`SimulationError`] (a bug of
/// ferrofem's, reported as such) so that none crosses into Python.
pub fn guarded<T>(f: impl FnOnce() -> Result<T, SimError>) -> PyResult<T> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => r.map_err(to_py),
        Err(payload) => {
            let what = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".into());
            Err(SimulationError::new_err(format!("internal error in ferrofem (please report it): {what}")))
        }
    }
}

/// A JSON value (stats) as Python objects: maps as dicts, arrays as lists.
pub fn json_to_py<'py>(py: Python<'py>, v: &serde_json::Value) -> PyResult<Bound<'py, PyAny>> {
    use serde_json::Value;
    Ok(match v {
        Value::Null => py.None().into_bound(py),
        Value::Bool(b) => PyBool::new(py, *b).to_owned().into_any(),
        Value::Number(n) => match (n.as_u64(), n.as_i64()) {
            (Some(u), _) => u.into_pyobject(py)?.into_any(),
            (None, Some(i)) => i.into_pyobject(py)?.into_any(),
            _ => n.as_f64().unwrap_or(f64::NAN).into_pyobject(py)?.into_any(),
        },
        Value::String(s) => PyString::new(py, s).into_any(),
        Value::Array(items) => {
            PyList::new(py, items.iter().map(|x| json_to_py(py, x)).collect::<PyResult<Vec<_>>>()?)?
                .into_any()
        }
        Value::Object(map) => {
            let dict = PyDict::new(py);
            for (k, x) in map {
                dict.set_item(k, json_to_py(py, x)?)?;
            }
            dict.into_any()
        }
    })
}

/// Anything serializable (stats) as a Python dict.
pub fn to_dict<'py>(py: Python<'py>, value: &impl serde::Serialize) -> PyResult<Bound<'py, PyAny>> {
    let json = serde_json::to_value(value).map_err(|e| PyValueError::new_err(e.to_string()))?;
    json_to_py(py, &json)
}

/// `rows × 3` values as an `(rows, 3)` float64 array.
pub fn rows3<'py>(py: Python<'py>, flat: Vec<f64>) -> Bound<'py, PyArray2<f64>> {
    let rows = flat.len() / 3;
    Array2::from_shape_vec((rows, 3), flat).expect("3 values per row").into_pyarray(py)
}

/// An `(n, k)` array-like of numbers as rows of `K` values (converted to
/// `T`); `what` names it in errors.
pub fn rows_of<T: numpy::Element + Copy, const K: usize>(
    array: &PyArrayLike2<'_, T, AllowTypeChange>,
    what: &str,
) -> PyResult<Vec<[T; K]>> {
    let a = array.as_array();
    if a.ncols() != K {
        let shape = a.shape();
        return Err(PyValueError::new_err(format!(
            "{what}: expected shape (n, {K}), got ({}, {})",
            shape[0], shape[1]
        )));
    }
    Ok(a.rows().into_iter().map(|r| std::array::from_fn(|j| r[j])).collect())
}
