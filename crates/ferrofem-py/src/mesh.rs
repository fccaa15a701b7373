//! `ferrofem.TetMesh`: tetrahedral meshes from NumPy arrays, files and
//! generators, validated as the library validates them.

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};

use ferrofem_mesh::{generate, io, TetMesh as Mesh, ValidationOptions};
use numpy::PyArray2;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use crate::convert::{rows3, rows_of};

/// A tetrahedral mesh: vertices (m) and tets (four vertex indices each,
/// positively oriented). Built from arrays, read from a file
/// (`read_mesh`) or generated (`TetMesh.box`, `TetMesh.ball`, …); every
/// route validates it (indices in range, finite coordinates, no inverted
/// or degenerate tet).
#[pyclass(name = "TetMesh", module = "ferrofem", frozen)]
pub struct TetMesh {
    pub(crate) mesh: Mesh,
}

fn mesh_error(e: ferrofem_mesh::MeshError) -> PyErr {
    PyValueError::new_err(e.to_string())
}

#[pymethods]
impl TetMesh {
    /// A mesh from an `(n, 3)` array of vertices and an `(m, 4)` array of tets.
    #[new]
    fn new(vertices: &Bound<'_, PyAny>, tets: &Bound<'_, PyAny>) -> PyResult<TetMesh> {
        let vertices = rows_of::<f64, 3>(vertices, "vertices")?;
        let raw = rows_of::<i64, 4>(tets, "tets")?;
        let mut elements = Vec::with_capacity(raw.len());
        for (e, t) in raw.iter().enumerate() {
            if let Some(&bad) = t.iter().find(|&&i| i < 0) {
                return Err(PyValueError::new_err(format!("tets: tet {e} has the negative index {bad}")));
            }
            elements.push(t.map(|i| i as usize));
        }
        Ok(TetMesh { mesh: Mesh::new(vertices, elements).map_err(mesh_error)? })
    }

    /// A box of `size` (m), centred at the origin, split into `cells`
    /// hexahedra per axis, six tets each.
    #[staticmethod]
    #[pyo3(name = "box", signature = (size, cells))]
    fn box_mesh(size: [f64; 3], cells: [usize; 3]) -> PyResult<TetMesh> {
        Ok(TetMesh { mesh: generate::box_mesh(size, cells).map_err(mesh_error)? })
    }

    /// A ball of `radius` (m) centred at the origin; `resolution` cells
    /// across its diameter.
    #[staticmethod]
    #[pyo3(signature = (radius, resolution))]
    fn ball(radius: f64, resolution: usize) -> PyResult<TetMesh> {
        Ok(TetMesh { mesh: generate::ball(radius, resolution).map_err(mesh_error)? })
    }

    /// A closed cylinder along z, centred at the origin.
    #[staticmethod]
    #[pyo3(signature = (radius, length, resolution, length_cells))]
    fn cylinder(radius: f64, length: f64, resolution: usize, length_cells: usize) -> PyResult<TetMesh> {
        Ok(TetMesh {
            mesh: generate::cylinder(radius, length, resolution, length_cells).map_err(mesh_error)?,
        })
    }

    /// A torus around z, centred at the origin.
    #[staticmethod]
    #[pyo3(signature = (major_radius, minor_radius, resolution, ring_cells))]
    fn torus(
        major_radius: f64,
        minor_radius: f64,
        resolution: usize,
        ring_cells: usize,
    ) -> PyResult<TetMesh> {
        let mesh = generate::torus(major_radius, minor_radius, resolution, ring_cells).map_err(mesh_error)?;
        Ok(TetMesh { mesh })
    }

    /// Vertices, `(n, 3)` float64 (m): a copy.
    #[getter]
    fn vertices<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray2<f64>> {
        rows3(py, self.mesh.vertices.as_flattened().to_vec())
    }

    /// Tets, `(m, 4)` int64: a copy.
    #[getter]
    fn tets<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray2<i64>> {
        let flat: Vec<i64> = self.mesh.tets.as_flattened().iter().map(|&i| i as i64).collect();
        let a = numpy::ndarray::Array2::from_shape_vec((self.mesh.tets.len(), 4), flat).expect("4 per tet");
        numpy::IntoPyArray::into_pyarray(a, py)
    }

    /// The boundary triangles, `(k, 3)` int64, outward-oriented.
    #[getter]
    fn boundary_triangles<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray2<i64>> {
        let b = self.mesh.boundary();
        let flat: Vec<i64> =
            b.mesh.triangles.as_flattened().iter().map(|&i| b.volume_vertex[i] as i64).collect();
        let a = numpy::ndarray::Array2::from_shape_vec((flat.len() / 3, 3), flat).expect("3 per triangle");
        numpy::IntoPyArray::into_pyarray(a, py)
    }

    /// Total volume (m³).
    #[getter]
    fn volume(&self) -> f64 {
        (0..self.mesh.tets.len()).map(|e| self.mesh.signed_volume(e)).sum()
    }

    /// Writes the mesh (`.msh`, `.vtu`, `.vtk`, … by extension), so that a
    /// scene can name it: `{"mesh": {"file": {"path": path}}}`.
    fn write(&self, path: PathBuf) -> PyResult<()> {
        io::write_tet_mesh(&path, &self.mesh).map_err(mesh_error)
    }

    fn __len__(&self) -> usize {
        self.mesh.tets.len()
    }

    fn __repr__(&self) -> String {
        format!("TetMesh({} vertices, {} tets)", self.mesh.vertices.len(), self.mesh.tets.len())
    }

    /// The closed surface in `path` (`.obj`, `.stl`, or a volume file's
    /// boundary) filled with tets by isosurface stuffing: give `cell` (the
    /// lattice's edge, in the file's units) or `resolution` (cells along
    /// its longest side).
    #[staticmethod]
    #[pyo3(signature = (path, *, cell = None, resolution = None))]
    fn from_surface(path: PathBuf, cell: Option<f64>, resolution: Option<usize>) -> PyResult<TetMesh> {
        use ferrofem_mesh::stuffing::{tetrahedralize, Fineness};
        let fineness = match (cell, resolution) {
            (Some(h), None) => Fineness::Cell(h),
            (None, Some(n)) => Fineness::Resolution(n),
            _ => return Err(PyValueError::new_err("give exactly one of cell and resolution")),
        };
        let surface = io::read_surface(&path).map_err(file_error)?;
        Ok(TetMesh { mesh: tetrahedralize(&surface, fineness).map_err(mesh_error)? })
    }
}

/// Reads a tetrahedral mesh file (`.msh`, `.vtu`, `.vtk`, `.mesh`, …),
/// validated; with `reorient_inverted`, inverted tets are flipped instead
/// of refused.
#[pyfunction]
#[pyo3(signature = (path, reorient_inverted = false))]
pub fn read_mesh(path: PathBuf, reorient_inverted: bool) -> PyResult<TetMesh> {
    let opts = ValidationOptions { reorient_inverted, ..Default::default() };
    let mesh = io::read_tet_mesh(&path, opts).map_err(file_error)?;
    Ok(TetMesh { mesh })
}

/// A mesh file's error as Python raises it: a missing file as
/// `FileNotFoundError`, another I/O error as `OSError`.
fn file_error(e: ferrofem_mesh::MeshError) -> PyErr {
    match e {
        ferrofem_mesh::MeshError::Io { ref source, .. } if source.kind() == std::io::ErrorKind::NotFound => {
            pyo3::exceptions::PyFileNotFoundError::new_err(e.to_string())
        }
        ferrofem_mesh::MeshError::Io { .. } => pyo3::exceptions::PyOSError::new_err(e.to_string()),
        e => mesh_error(e),
    }
}

/// `TetMesh` objects placed in a scene dict (`{"mesh": mesh}`), written to
/// `.msh` files that the scene then names, so that they pass the same
/// reading and validation as any mesh file; the files live as long as the
/// simulation (a reset reads them again).
#[derive(Debug, Default)]
pub struct MeshFiles {
    dir: Option<PathBuf>,
    count: usize,
}

impl MeshFiles {
    /// Writes `mesh` to a new file and returns its path.
    pub fn write(&mut self, mesh: &TetMesh) -> PyResult<PathBuf> {
        static FOLDERS: AtomicUsize = AtomicUsize::new(0);
        if self.dir.is_none() {
            let n = FOLDERS.fetch_add(1, Ordering::Relaxed);
            let dir = std::env::temp_dir().join(format!("ferrofem-py-{}-{n}", std::process::id()));
            std::fs::create_dir_all(&dir)
                .map_err(|e| pyo3::exceptions::PyOSError::new_err(format!("{}: {e}", dir.display())))?;
            self.dir = Some(dir);
        }
        let path = self.dir.as_ref().map(|d| d.join(format!("mesh-{}.msh", self.count))).unwrap_or_default();
        self.count += 1;
        io::write_tet_mesh(&path, &mesh.mesh).map_err(mesh_error)?;
        Ok(path)
    }
}

impl Drop for MeshFiles {
    fn drop(&mut self) {
        if let Some(dir) = &self.dir {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}
