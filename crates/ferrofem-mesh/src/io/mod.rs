//! Readers and writers. The format follows the file extension:
//! `.msh` (gmsh 2.2/4.1 ASCII), `.vtk` (legacy VTK), `.vtu` (VTK XML),
//! `.obj`, `.stl`. Simulation output is a `.vtu` per frame gathered by a
//! `.pvd` series ([`PvdSeries`]) that ParaView opens as one time series.

mod msh;
mod obj;
mod pvd;
mod stl;
mod vtk;

use std::path::Path;

pub use pvd::PvdSeries;
pub use vtk::{write_vtp_lines, write_vtp_points, write_vtu_frame, PointField};

use crate::{MeshError, TetMesh, TriMesh, ValidationOptions};

/// Raw content of a mesh file: vertices plus whatever tets and triangles it holds.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Elements {
    /// Vertex positions.
    pub vertices: Vec<[f64; 3]>,
    /// Tetrahedra.
    pub tets: Vec<[usize; 4]>,
    /// Triangles.
    pub triangles: Vec<[usize; 3]>,
    /// Second-order (10-node) tets and (6-node) triangles among them, read
    /// by their corner vertices.
    pub second_order: usize,
    /// What the reader skipped or reduced, one line each, e.g. `12 elements
    /// of gmsh type 5 skipped`.
    pub notes: Vec<String>,
    /// Per-vertex fields the file holds (VTK point data), in file order.
    pub point_data: Vec<PointData>,
}

/// A per-vertex field read from a file: `components` values per vertex,
/// vertex-major.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PointData {
    /// Its name in the file.
    pub name: String,
    /// Values per vertex.
    pub components: usize,
    /// `components × vertices` values.
    pub values: Vec<f64>,
}

impl Elements {
    /// The point field `name`, if the file holds it.
    pub fn field(&self, name: &str) -> Option<&PointData> {
        self.point_data.iter().find(|f| f.name == name)
    }
}

/// Counts of element kinds a reader met but does not keep, by kind name;
/// turned into [`Elements::notes`] once the file is read.
#[derive(Debug, Default)]
pub(crate) struct Skipped(std::collections::BTreeMap<String, usize>);

impl Skipped {
    pub(crate) fn add(&mut self, kind: String) {
        *self.0.entry(kind).or_default() += 1;
    }

    fn notes(self) -> impl Iterator<Item = String> {
        self.0.into_iter().map(|(kind, n)| format!("{n} elements of {kind} skipped"))
    }
}

impl Elements {
    /// Records the skipped kinds and the second-order elements read by corners.
    pub(crate) fn note(&mut self, skipped: Skipped) {
        self.notes.extend(skipped.notes());
        if self.second_order > 0 {
            self.notes.push(format!(
                "{} second-order elements read by their corner vertices (mid-edge nodes unused)",
                self.second_order
            ));
        }
    }
}

impl Elements {
    /// (gmsh element type, element lists): 4 for tets, 2 for triangles.
    fn element_lists(&self) -> Vec<(u8, Vec<Vec<usize>>)> {
        vec![
            (4, self.tets.iter().map(|t| t.to_vec()).collect()),
            (2, self.triangles.iter().map(|t| t.to_vec()).collect()),
        ]
    }
}

/// Mesh file formats, chosen by extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// gmsh ASCII (reads 2.2 and 4.1, writes 4.1 unless asked otherwise).
    Msh,
    /// Legacy VTK unstructured grid.
    Vtk,
    /// VTK XML unstructured grid.
    Vtu,
    /// Wavefront OBJ surface.
    Obj,
    /// STL surface (ASCII or binary).
    Stl,
}

impl Format {
    /// The format named by `path`'s extension.
    pub fn of(path: &Path) -> Result<Format, MeshError> {
        let ext = path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase);
        match ext.as_deref() {
            Some("msh") => Ok(Format::Msh),
            Some("vtk") => Ok(Format::Vtk),
            Some("vtu") => Ok(Format::Vtu),
            Some("obj") => Ok(Format::Obj),
            Some("stl") => Ok(Format::Stl),
            _ => Err(MeshError::UnsupportedFormat(path.to_path_buf())),
        }
    }
}

/// Reads every vertex, tet and triangle of a mesh file.
pub fn read_elements(path: &Path) -> Result<Elements, MeshError> {
    let format = Format::of(path)?;
    let bytes = std::fs::read(path).map_err(|e| MeshError::io(path, e))?;
    parse_elements(&bytes, format, path)
}

/// Parses in-memory file content (`path` only labels error messages).
pub fn parse_elements(bytes: &[u8], format: Format, path: &Path) -> Result<Elements, MeshError> {
    let text = || std::str::from_utf8(bytes).map_err(|_| MeshError::parse(path, 0, "file is not UTF-8 text"));
    let elements = match format {
        Format::Msh => msh::parse(text()?, path)?,
        Format::Vtk | Format::Vtu => vtk::parse(bytes, format, path)?,
        Format::Obj => obj::parse(text()?, path)?,
        Format::Stl => stl::parse(bytes, path)?,
    };
    check_elements(&elements, path)?;
    Ok(elements)
}

fn check_elements(e: &Elements, path: &Path) -> Result<(), MeshError> {
    let n = e.vertices.len();
    let bad = e.tets.iter().flatten().chain(e.triangles.iter().flatten()).find(|&&i| i >= n);
    if let Some(&i) = bad {
        return Err(MeshError::parse(path, 0, format!("vertex index {i} out of range ({n} vertices)")));
    }
    if let Some((i, p)) = e.vertices.iter().enumerate().find(|(_, p)| p.iter().any(|x| !x.is_finite())) {
        return Err(MeshError::parse(path, 0, format!("vertex {i} has a non-finite coordinate {p:?}")));
    }
    Ok(())
}

/// Reads a tetrahedral volume mesh; unused vertices are kept (see
/// [`TetMesh::remove_unused_vertices`]) and the mesh is validated with `opts`.
/// Second-order tets are refused (read them with [`read_elements`], which
/// keeps their corners and says so in [`Elements::notes`]).
pub fn read_tet_mesh(path: &Path, opts: ValidationOptions) -> Result<TetMesh, MeshError> {
    let e = read_elements(path)?;
    if e.tets.is_empty() {
        return Err(MeshError::WrongKind {
            path: path.to_path_buf(),
            message: format!(
                "no tetrahedra ({} triangles): not a volume mesh (`ferrofem mesh tetrahedralize` makes one of a \
                 closed surface, as does `tetrahedralize = {{ cell = … }}` in a scene's `file` table)",
                e.triangles.len()
            ),
        });
    }
    if e.second_order > 0 {
        return Err(MeshError::WrongKind {
            path: path.to_path_buf(),
            message: format!(
                "{} second-order (10-node) tetrahedra: ferrofem simulates linear 4-node tets; \
                 `ferrofem mesh convert` writes a copy that keeps their corner vertices",
                e.second_order
            ),
        });
    }
    let mut mesh = TetMesh { vertices: e.vertices, tets: e.tets };
    mesh.validate(opts)?;
    Ok(mesh)
}

/// Reads a triangle surface (the triangles of any supported file).
pub fn read_tri_mesh(path: &Path) -> Result<TriMesh, MeshError> {
    let e = read_elements(path)?;
    if e.triangles.is_empty() {
        return Err(MeshError::WrongKind {
            path: path.to_path_buf(),
            message: "no triangles: not a surface mesh".into(),
        });
    }
    let mesh = TriMesh { vertices: e.vertices, triangles: e.triangles };
    mesh.validate()?;
    Ok(mesh)
}

/// Reads a closed surface: a volume mesh's boundary (inverted tets
/// turned), or else a surface file's triangles.
pub fn read_surface(path: &Path) -> Result<TriMesh, MeshError> {
    let e = read_elements(path)?;
    if e.tets.is_empty() {
        return read_tri_mesh(path);
    }
    let mut m = TetMesh { vertices: e.vertices, tets: e.tets };
    m.remove_unused_vertices();
    m.validate(ValidationOptions { reorient_inverted: true, ..Default::default() })?;
    Ok(m.boundary().mesh)
}

/// Writes vertices, tets and triangles in the format named by `path`
/// (OBJ and STL keep only triangles). `.msh` is written as gmsh 4.1.
pub fn write_elements(path: &Path, e: &Elements) -> Result<(), MeshError> {
    let bytes = encode_elements(e, Format::of(path)?, false)?;
    std::fs::write(path, bytes).map_err(|err| MeshError::io(path, err))
}

/// Encodes elements in a format; `msh_v2` picks gmsh 2.2 over 4.1.
pub fn encode_elements(e: &Elements, format: Format, msh_v2: bool) -> Result<Vec<u8>, MeshError> {
    Ok(match format {
        Format::Msh if msh_v2 => msh::write_v2(e).into_bytes(),
        Format::Msh => msh::write_v4(e).into_bytes(),
        Format::Vtk | Format::Vtu => vtk::encode(e, format)?,
        Format::Obj => obj::write(&e.vertices, &e.triangles).into_bytes(),
        Format::Stl => stl::write(&e.vertices, &e.triangles)?,
    })
}

/// Writes a tet mesh (its boundary surface for OBJ/STL).
pub fn write_tet_mesh(path: &Path, mesh: &TetMesh) -> Result<(), MeshError> {
    let triangles = match Format::of(path)? {
        Format::Obj | Format::Stl => {
            let b = mesh.boundary();
            b.mesh.triangles.iter().map(|t| t.map(|i| b.volume_vertex[i])).collect()
        }
        _ => Vec::new(),
    };
    let e = Elements {
        vertices: mesh.vertices.clone(),
        tets: mesh.tets.clone(),
        triangles,
        ..Default::default()
    };
    write_elements(path, &e)
}

/// Writes a triangle surface as OBJ (the surface-only format most tools open).
pub fn write_obj(path: &Path, mesh: &TriMesh) -> Result<(), MeshError> {
    std::fs::write(path, obj::write(&mesh.vertices, &mesh.triangles)).map_err(|e| MeshError::io(path, e))
}

#[cfg(test)]
mod tests;
