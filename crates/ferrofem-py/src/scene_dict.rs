//! A scene given as a Python dict (`Simulation.from_dict`), turned into
//! the TOML table the scene reader takes.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};

use crate::mesh::{MeshFiles, TetMesh};

/// A Python scene value (dict, list, str, int, float, bool, anything with
/// `tolist()` such as NumPy arrays and scalars, or a `TetMesh`, written
/// to a file through `files` and named as `{file = {path = …}}`) as a
/// TOML value; `key` names it in errors.
pub fn toml_value(obj: &Bound<'_, PyAny>, key: &str, files: &mut MeshFiles) -> PyResult<toml::Value> {
    if let Ok(mesh) = obj.cast::<TetMesh>() {
        let path = files.write(mesh.get())?;
        let mut file = toml::Table::new();
        file.insert("path".into(), toml::Value::String(path.to_string_lossy().into_owned()));
        let mut spec = toml::Table::new();
        spec.insert("file".into(), toml::Value::Table(file));
        return Ok(toml::Value::Table(spec));
    }
    if obj.is_instance_of::<PyBool>() {
        return Ok(toml::Value::Boolean(obj.extract()?));
    }
    if obj.is_instance_of::<PyInt>() {
        return Ok(toml::Value::Integer(obj.extract()?));
    }
    if obj.is_instance_of::<PyFloat>() {
        return Ok(toml::Value::Float(obj.extract()?));
    }
    if obj.is_instance_of::<PyString>() {
        return Ok(toml::Value::String(obj.extract()?));
    }
    if let Ok(dict) = obj.cast::<PyDict>() {
        return Ok(toml::Value::Table(toml_table(dict, key, files)?));
    }
    if obj.is_instance_of::<PyList>() || obj.is_instance_of::<PyTuple>() {
        let items =
            obj.try_iter()?.enumerate().map(|(i, item)| toml_value(&item?, &format!("{key}[{i}]"), files));
        return Ok(toml::Value::Array(items.collect::<PyResult<_>>()?));
    }
    if obj.hasattr("tolist")? {
        return toml_value(&obj.call_method0("tolist")?, key, files);
    }
    let type_name = obj.get_type().name()?;
    Err(PyValueError::new_err(format!("{key}: a {type_name} is not a scene value")))
}

/// A Python dict with string keys as a TOML table.
pub fn toml_table(dict: &Bound<'_, PyDict>, key: &str, files: &mut MeshFiles) -> PyResult<toml::Table> {
    let mut table = toml::Table::new();
    for (k, v) in dict.iter() {
        let name: String = k
            .extract()
            .map_err(|_| PyValueError::new_err(format!("{key}: scene keys are strings, not {k}")))?;
        let path = if key.is_empty() { name.clone() } else { format!("{key}.{name}") };
        table.insert(name, toml_value(&v, &path, files)?);
    }
    Ok(table)
}
