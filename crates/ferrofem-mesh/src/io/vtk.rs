//! VTK through `vtkio`: legacy `.vtk` and XML `.vtu` unstructured grids
//! (legacy POLYDATA surfaces are read too), and per-frame `.vtu` output with
//! point data.

use std::path::Path;

use vtkio::model::{
    Attribute, Attributes, ByteOrder, CellType, Cells, DataSet, IOBuffer, Piece, PolyDataPiece,
    UnstructuredGridPiece, Version, VertexNumbers, Vtk,
};

use super::{Elements, Format};
use crate::MeshError;

/// A named per-vertex field written as VTK point data: `components` values
/// per vertex (1 for scalars, 3 for vectors), vertex-major.
#[derive(Debug, Clone, Copy)]
pub struct PointField<'a> {
    /// Name shown in ParaView.
    pub name: &'a str,
    /// Values per vertex.
    pub components: u32,
    /// `components × vertices` values.
    pub values: &'a [f64],
}

pub(super) fn parse(bytes: &[u8], format: Format, path: &Path) -> Result<Elements, MeshError> {
    let perr = |m: String| MeshError::parse(path, 0, m);
    // vtkio is third-party: contain a panic on hostile input as a parse error.
    let parsed = std::panic::catch_unwind(|| match format {
        Format::Vtu => Vtk::parse_xml(std::io::BufReader::new(bytes)),
        _ => Vtk::parse_legacy_be(bytes),
    })
    .map_err(|_| perr("VTK reader failed on malformed input".into()))?;
    let vtk = parsed.map_err(|e| perr(format!("VTK: {e}")))?;
    let mut out = Elements::default();
    match vtk.data {
        DataSet::UnstructuredGrid { pieces, .. } => {
            for piece in pieces {
                let Piece::Inline(p) = piece else {
                    return Err(perr("pieces stored in other files are not supported".into()));
                };
                add_grid(&mut out, *p, path)?;
            }
        }
        DataSet::PolyData { pieces, .. } => {
            for piece in pieces {
                let Piece::Inline(p) = piece else {
                    return Err(perr("pieces stored in other files are not supported".into()));
                };
                add_poly(&mut out, *p, path)?;
            }
        }
        _ => return Err(perr("expected an UNSTRUCTURED_GRID or POLYDATA dataset".into())),
    }
    Ok(out)
}

fn points(buf: IOBuffer, path: &Path) -> Result<Vec<[f64; 3]>, MeshError> {
    let v: Vec<f64> =
        buf.cast_into().ok_or_else(|| MeshError::parse(path, 0, "VTK: unreadable point coordinates"))?;
    if !v.len().is_multiple_of(3) {
        return Err(MeshError::parse(path, 0, "VTK: point array length is not a multiple of 3"));
    }
    Ok(v.chunks_exact(3).map(|c| [c[0], c[1], c[2]]).collect())
}

/// Cells as vertex lists, from either topology representation, without panics.
fn cell_lists(v: VertexNumbers, path: &Path) -> Result<Vec<Vec<usize>>, MeshError> {
    let bad = || MeshError::parse(path, 0, "VTK: inconsistent cell connectivity");
    let mut cells = Vec::new();
    match v {
        VertexNumbers::Legacy { num_cells, vertices } => {
            let mut i = 0;
            for _ in 0..num_cells {
                let n = *vertices.get(i).ok_or_else(bad)? as usize;
                let c = vertices.get(i + 1..i + 1 + n).ok_or_else(bad)?;
                cells.push(c.iter().map(|&x| x as usize).collect());
                i += 1 + n;
            }
        }
        VertexNumbers::XML { connectivity, offsets } => {
            let mut start = 0usize;
            for off in offsets {
                let end = off as usize;
                let c = connectivity.get(start..end).ok_or_else(bad)?;
                cells.push(c.iter().map(|&x| x as usize).collect());
                start = end;
            }
        }
    }
    Ok(cells)
}

fn add_grid(out: &mut Elements, p: UnstructuredGridPiece, path: &Path) -> Result<(), MeshError> {
    let base = out.vertices.len();
    out.vertices.extend(points(p.points, path)?);
    let cells = cell_lists(p.cells.cell_verts, path)?;
    if cells.len() != p.cells.types.len() {
        return Err(MeshError::parse(path, 0, "VTK: cell and cell-type counts differ"));
    }
    for (c, t) in cells.iter().zip(&p.cells.types) {
        match (t, c.len()) {
            (CellType::Tetra, 4) => out.tets.push([c[0], c[1], c[2], c[3]].map(|i| base + i)),
            (CellType::Triangle, 3) => out.triangles.push([c[0], c[1], c[2]].map(|i| base + i)),
            (CellType::Tetra | CellType::Triangle, n) => {
                return Err(MeshError::parse(path, 0, format!("VTK: {t:?} cell with {n} vertices")))
            }
            _ => {}
        }
    }
    Ok(())
}

fn add_poly(out: &mut Elements, p: PolyDataPiece, path: &Path) -> Result<(), MeshError> {
    let base = out.vertices.len();
    out.vertices.extend(points(p.points, path)?);
    if let Some(polys) = p.polys {
        for c in cell_lists(polys, path)? {
            for k in 1..c.len().saturating_sub(1) {
                out.triangles.push([c[0], c[k], c[k + 1]].map(|i| base + i));
            }
        }
    }
    Ok(())
}

fn point_attributes(fields: &[PointField]) -> Vec<Attribute> {
    fields
        .iter()
        .map(|f| {
            let a = if f.components == 3 {
                Attribute::vectors(f.name)
            } else {
                Attribute::generic(f.name, f.components)
            };
            a.with_data(f.values.to_vec())
        })
        .collect()
}

fn grid(vertices: &[[f64; 3]], tets: &[[usize; 4]], triangles: &[[usize; 3]], fields: &[PointField]) -> Vtk {
    let mut connectivity = Vec::with_capacity(4 * tets.len() + 3 * triangles.len());
    let mut offsets = Vec::with_capacity(tets.len() + triangles.len());
    let mut types = Vec::with_capacity(offsets.capacity());
    for t in tets {
        connectivity.extend(t.iter().map(|&i| i as u64));
        offsets.push(connectivity.len() as u64);
        types.push(CellType::Tetra);
    }
    for t in triangles {
        connectivity.extend(t.iter().map(|&i| i as u64));
        offsets.push(connectivity.len() as u64);
        types.push(CellType::Triangle);
    }
    let point = point_attributes(fields);
    let piece = UnstructuredGridPiece {
        points: IOBuffer::F64(vertices.iter().flatten().copied().collect()),
        cells: Cells { cell_verts: VertexNumbers::XML { connectivity, offsets }, types },
        data: Attributes { point, cell: Vec::new() },
    };
    Vtk {
        version: Version::new((1, 0)),
        title: String::from("ferrofem"),
        byte_order: ByteOrder::LittleEndian,
        data: DataSet::inline(piece),
        file_path: None,
    }
}

pub(super) fn encode(e: &Elements, format: Format) -> Result<Vec<u8>, MeshError> {
    let mut vtk = grid(&e.vertices, &e.tets, &e.triangles, &[]);
    let mut out = Vec::new();
    let res = if format == Format::Vtu {
        vtk.write_xml(&mut out)
    } else {
        vtk.version = Version::new((4, 2));
        vtk.byte_order = ByteOrder::BigEndian;
        let mut s = String::new();
        let r = vtk.write_legacy_ascii(&mut s);
        out = s.into_bytes();
        r
    };
    res.map_err(|err| MeshError::parse("<vtk>", 0, format!("VTK writer: {err}")))?;
    Ok(out)
}

/// Writes one simulation frame as a `.vtu`: current vertex positions, the
/// tets and triangles, and per-vertex fields (velocity, forces, …).
pub fn write_vtu_frame(
    path: &Path,
    vertices: &[[f64; 3]],
    tets: &[[usize; 4]],
    triangles: &[[usize; 3]],
    fields: &[PointField],
) -> Result<(), MeshError> {
    for f in fields {
        if f.values.len() != f.components as usize * vertices.len() {
            return Err(MeshError::parse(path, 0, format!("field {} has the wrong length", f.name)));
        }
    }
    let file = std::fs::File::create(path).map_err(|e| MeshError::io(path, e))?;
    grid(vertices, tets, triangles, fields)
        .write_xml(std::io::BufWriter::new(file))
        .map_err(|e| MeshError::parse(path, 0, format!("VTK writer: {e}")))
}

/// Writes points as a `.vtp` polydata (one vertex cell per point) with
/// per-point fields, e.g. contact points with their normals and forces.
pub fn write_vtp_points(path: &Path, points: &[[f64; 3]], fields: &[PointField]) -> Result<(), MeshError> {
    for f in fields {
        if f.values.len() != f.components as usize * points.len() {
            return Err(MeshError::parse(path, 0, format!("field {} has the wrong length", f.name)));
        }
    }
    let n = points.len() as u64;
    let piece = PolyDataPiece {
        points: IOBuffer::F64(points.iter().flatten().copied().collect()),
        verts: Some(VertexNumbers::XML { connectivity: (0..n).collect(), offsets: (1..=n).collect() }),
        lines: None,
        polys: None,
        strips: None,
        data: Attributes { point: point_attributes(fields), cell: Vec::new() },
    };
    let vtk = Vtk {
        version: Version::new((1, 0)),
        title: String::from("ferrofem contacts"),
        byte_order: ByteOrder::LittleEndian,
        data: DataSet::inline(piece),
        file_path: None,
    };
    let file = std::fs::File::create(path).map_err(|e| MeshError::io(path, e))?;
    vtk.write_xml(std::io::BufWriter::new(file))
        .map_err(|e| MeshError::parse(path, 0, format!("VTK writer: {e}")))
}
