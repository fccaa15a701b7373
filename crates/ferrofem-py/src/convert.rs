//! Between Python and Rust: errors, stats, arrays.

use std::panic::{catch_unwind, AssertUnwindSafe};

use ferrofem::SimError;
use numpy::ndarray::Array2;
use numpy::{AllowTypeChange, IntoPyArray, PyArray2, PyArrayLikeDyn};
use pyo3::exceptions::{PyFileNotFoundError, PyIndexError, PyOSError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyList, PyString};

use crate::SimulationError;

/// A [`SimError`] as the Python exception a user expects: `ValueError` for
/// bad input (scene, mesh, body, control values), `FileNotFoundError` or
/// `OSError` for files, [`SimulationError`] for a run that failed.
pub fn to_py(e: SimError) -> PyErr {
    let message = e.to_string();
    let missing = |source: &std::io::Error| source.kind() == std::io::ErrorKind::NotFound;
    match e {
        SimError::Mesh { source: ferrofem_mesh::MeshError::Io { ref source, .. }, .. } if missing(source) => {
            PyFileNotFoundError::new_err(message)
        }
        SimError::Scene { .. } | SimError::Mesh { .. } | SimError::Body { .. } | SimError::Input(_) => {
            PyValueError::new_err(message)
        }
        SimError::Io { ref source, .. } if missing(source) => PyFileNotFoundError::new_err(message),
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

/// An array-like of numbers (list, tuple, NumPy array of any numeric
/// dtype) as an array of `T`; anything else is a `ValueError` naming `what`.
fn array<'py, T>(value: &Bound<'py, PyAny>, what: &str) -> PyResult<PyArrayLikeDyn<'py, T, AllowTypeChange>>
where
    T: numpy::Element + pyo3::conversion::FromPyObjectOwned<'py> + 'py,
{
    value.extract().map_err(|_| {
        let kind = value.get_type().name().map_or_else(|_| "?".into(), |n| n.to_string());
        PyValueError::new_err(format!("{what}: expected an array of numbers, got {kind}"))
    })
}

/// A shape as Python writes it: `(3,)`, `(3, 3)`.
fn shape(dims: &[usize]) -> String {
    match dims {
        [n] => format!("({n},)"),
        _ => format!("({})", dims.iter().map(|d| d.to_string()).collect::<Vec<_>>().join(", ")),
    }
}

/// A `(3,)` array-like of numbers (a point, a translation, a velocity);
/// any other shape is a `ValueError` naming `what` and both shapes.
pub fn vector3(value: &Bound<'_, PyAny>, what: &str) -> PyResult<[f64; 3]> {
    let a = array::<f64>(value, what)?;
    let v = a.as_array();
    if v.shape() != [3] {
        return Err(PyValueError::new_err(format!("{what}: expected shape (3,), got {}", shape(v.shape()))));
    }
    Ok([v[[0]], v[[1]], v[[2]]])
}

/// An `(n, K)` array-like of numbers as rows of `K` values (converted to
/// `T`); any other shape is a `ValueError` naming `what` and both shapes.
pub fn rows_of<'py, T, const K: usize>(value: &Bound<'py, PyAny>, what: &str) -> PyResult<Vec<[T; K]>>
where
    T: numpy::Element + Copy + pyo3::conversion::FromPyObjectOwned<'py> + 'py,
{
    let a = array::<T>(value, what)?;
    let v = a.as_array();
    if v.ndim() != 2 || v.shape()[1] != K {
        return Err(PyValueError::new_err(format!(
            "{what}: expected shape (n, {K}), got {}",
            shape(v.shape())
        )));
    }
    Ok(v.outer_iter().map(|r| std::array::from_fn(|j| r[j])).collect())
}

/// A `(3, 3)` array-like of numbers (a rotation matrix), by rows; any
/// other shape is a `ValueError` naming `what` and both shapes.
pub fn matrix3(value: &Bound<'_, PyAny>, what: &str) -> PyResult<[[f64; 3]; 3]> {
    let a = array::<f64>(value, what)?;
    let v = a.as_array();
    if v.shape() != [3, 3] {
        return Err(PyValueError::new_err(format!(
            "{what}: expected shape (3, 3), got {}",
            shape(v.shape())
        )));
    }
    Ok(std::array::from_fn(|i| std::array::from_fn(|j| v[[i, j]])))
}

/// A 1-D array-like of integers as indices below `count`; a negative or
/// too large one is an `IndexError` naming `what` and the bound.
pub fn indices(value: &Bound<'_, PyAny>, what: &str, count: usize) -> PyResult<Vec<usize>> {
    let a = array::<i64>(value, what)?;
    let v = a.as_array();
    if v.ndim() != 1 {
        return Err(PyValueError::new_err(format!("{what}: expected shape (n,), got {}", shape(v.shape()))));
    }
    v.iter().map(|&i| index(i, what, count)).collect()
}

/// `i` as an index below `count`, else an `IndexError` naming `what`.
pub fn index(i: i64, what: &str, count: usize) -> PyResult<usize> {
    usize::try_from(i).ok().filter(|&u| u < count).ok_or_else(|| {
        PyIndexError::new_err(format!("{what} {i}: out of range (0 to {})", count.saturating_sub(1)))
    })
}
