//! VTK through `vtkio`: legacy `.vtk` and XML `.vtu` unstructured grids
//! (legacy POLYDATA surfaces are read too), and per-frame `.vtu` output with
//! point data.

use std::path::Path;

use vtkio::model::{
    Attribute, Attributes, ByteOrder, CellType, Cells, DataSet, IOBuffer, Piece, PolyDataPiece,
    UnstructuredGridPiece, Version, VertexNumbers, Vtk,
};

use super::{Elements, Format, Skipped};
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
    check_counts(bytes, format, path)?;
    // vtkio is third-party: contain a panic on hostile input as a parse error.
    let parsed = std::panic::catch_unwind(|| match format {
        Format::Vtu => Vtk::parse_xml(std::io::BufReader::new(bytes)),
        _ => Vtk::parse_legacy_be(bytes),
    })
    .map_err(|_| perr("VTK reader failed on malformed input".into()))?;
    let vtk = parsed.map_err(|e| describe(&e.to_string(), bytes, path))?;
    let mut out = Elements::default();
    let mut skipped = Skipped::default();
    match vtk.data {
        DataSet::UnstructuredGrid { pieces, .. } => {
            for piece in pieces {
                let Piece::Inline(p) = piece else {
                    return Err(perr("pieces stored in other files are not supported".into()));
                };
                add_grid(&mut out, *p, path, &mut skipped)?;
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
    out.note(skipped);
    Ok(out)
}

/// A vtkio error in words a user can act on: the line, and what the format
/// expected there (vtkio's own messages name its internals).
fn describe(message: &str, bytes: &[u8], path: &Path) -> MeshError {
    let number_after = |key: &str| -> Option<usize> {
        let rest = &message[message.find(key)? + key.len()..];
        rest.chars().take_while(char::is_ascii_digit).collect::<String>().parse().ok()
    };
    let line_of = |byte: usize| 1 + bytes[..byte.min(bytes.len())].iter().filter(|&&b| b == b'\n').count();
    if let Some(at) = number_after("UnquotedValue(") {
        return MeshError::parse(path, line_of(at), "VTK XML: an attribute value is not in quotes");
    }
    if message.contains("DataArraySizeMismatch") {
        let (expected, actual) = (number_after("expected: "), number_after("actual: "));
        return MeshError::parse(
            path,
            0,
            format!(
                "VTK XML: a DataArray holds {} values where the piece's NumberOfPoints/NumberOfCells call for {}",
                actual.map_or("a different number of".into(), |n| n.to_string()),
                expected.map_or("another count".into(), |n| n.to_string())
            ),
        );
    }
    if message.starts_with("Parse error") {
        return legacy_layout_error(bytes, path);
    }
    let what = if message.starts_with("XML error") { "malformed XML" } else { "unreadable file" };
    MeshError::parse(path, 0, format!("VTK: {what} ({message})"))
}

/// The first line of a legacy `.vtk` that breaks its layout: version line,
/// title, `ASCII`/`BINARY`, `DATASET …`, then the data sections.
fn legacy_layout_error(bytes: &[u8], path: &Path) -> MeshError {
    let text = String::from_utf8_lossy(&bytes[..bytes.len().min(4096)]);
    let lines: Vec<&str> = text.lines().take(4).collect();
    let line = |k: usize| lines.get(k).map_or("", |l| l.trim());
    let (at, expected) = if !line(0).starts_with("# vtk DataFile Version") {
        (1, "`# vtk DataFile Version x.y`")
    } else if !matches!(line(2), "ASCII" | "BINARY") {
        (3, "`ASCII` or `BINARY`")
    } else if !line(3).starts_with("DATASET ") {
        (4, "`DATASET UNSTRUCTURED_GRID` or `DATASET POLYDATA`")
    } else {
        (0, "after the header: `POINTS n float|double` and 3n numbers, `CELLS n size` and its lists, `CELL_TYPES n` and n types")
    };
    MeshError::parse(path, at, format!("legacy VTK: expected {expected}"))
}

/// Refuses a header count that the file's size cannot hold, before vtkio
/// allocates for it. Every announced value takes at least one byte of a
/// legacy file (at least 1/32 byte of an XML one, which may be
/// compressed): `POINTS n` holds `3n` values, each count of `CELLS n size`
/// (and `POLYGONS`, `LINES`, `VERTICES`, `TRIANGLE_STRIPS`) is checked
/// alone, and any other keyword line (`CELL_TYPES n`, `POINT_DATA n`, a
/// field array's `name components tuples type`, …) by the product of its
/// counts.
/// Data types of legacy VTK arrays (the last word of a field array's line).
const LEGACY_TYPES: [&str; 11] = [
    "bit",
    "unsigned_char",
    "char",
    "unsigned_short",
    "short",
    "unsigned_int",
    "int",
    "unsigned_long",
    "long",
    "float",
    "double",
];

fn check_counts(bytes: &[u8], format: Format, path: &Path) -> Result<(), MeshError> {
    let room = (bytes.len() as u64).saturating_mul(if format == Format::Vtu { 32 } else { 1 });
    let too_big = |line_no: usize, what: &str, count: u64| {
        MeshError::parse(
            path,
            line_no + 1,
            format!("VTK: {what} announces {count}, more than a file of {} bytes can hold", bytes.len()),
        )
    };
    for (line_no, line) in bytes.split(|&b| b == b'\n').enumerate() {
        let line = String::from_utf8_lossy(line);
        if format == Format::Vtu {
            for key in ["NumberOfPoints=\"", "NumberOfCells=\"", "NumberOfComponents=\"", "NumberOfTuples=\""]
            {
                for (at, _) in line.match_indices(key) {
                    let digits: String =
                        line[at + key.len()..].chars().take_while(char::is_ascii_digit).collect();
                    let count = digits.parse::<u64>().unwrap_or(u64::MAX);
                    if count > room {
                        return Err(too_big(line_no, key.trim_end_matches(['=', '"']), count));
                    }
                }
            }
            continue;
        }
        let tokens: Vec<&str> = line.split_ascii_whitespace().collect();
        let Some(&key) = tokens.first().filter(|_| line_no != 1) else { continue };
        let counts: Vec<u64> = tokens[1..].iter().filter_map(|t| t.parse::<u64>().ok()).collect();
        let product = counts.iter().fold(1u64, |p, &c| p.saturating_mul(c.max(1)));
        let field_array = tokens.len() == 4 && LEGACY_TYPES.contains(&tokens[3]);
        let (what, count) = match key {
            "POINTS" => ("POINTS", counts.first().map_or(0, |n| n.saturating_mul(3))),
            "CELLS" | "POLYGONS" | "LINES" | "VERTICES" | "TRIANGLE_STRIPS" => {
                (key, counts.iter().copied().max().unwrap_or(0))
            }
            "CELL_TYPES"
            | "POINT_DATA"
            | "CELL_DATA"
            | "LOOKUP_TABLE"
            | "FIELD"
            | "SCALARS"
            | "COLOR_SCALARS"
            | "TEXTURE_COORDINATES" => (key, product),
            _ if field_array => ("a field array", product),
            _ => continue,
        };
        if count > room {
            let shown = if what == "POINTS" { count / 3 } else { count };
            return Err(too_big(line_no, what, shown));
        }
    }
    Ok(())
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

fn add_grid(
    out: &mut Elements,
    p: UnstructuredGridPiece,
    path: &Path,
    skipped: &mut Skipped,
) -> Result<(), MeshError> {
    let base = out.vertices.len();
    out.vertices.extend(points(p.points, path)?);
    add_point_data(out, p.data, base);
    let cells = cell_lists(p.cells.cell_verts, path)?;
    if cells.len() != p.cells.types.len() {
        return Err(MeshError::parse(path, 0, "VTK: cell and cell-type counts differ"));
    }
    for (c, t) in cells.iter().zip(&p.cells.types) {
        match (t, c.len()) {
            (CellType::Tetra, 4) | (CellType::QuadraticTetra, 10) => {
                out.tets.push([c[0], c[1], c[2], c[3]].map(|i| base + i))
            }
            (CellType::Triangle, 3) | (CellType::QuadraticTriangle, 6) => {
                out.triangles.push([c[0], c[1], c[2]].map(|i| base + i))
            }
            (
                CellType::Tetra | CellType::Triangle | CellType::QuadraticTetra | CellType::QuadraticTriangle,
                n,
            ) => return Err(MeshError::parse(path, 0, format!("VTK: {t:?} cell with {n} vertices"))),
            _ => skipped.add(format!("VTK cell type {t:?}")),
        }
        if matches!(t, CellType::QuadraticTetra | CellType::QuadraticTriangle) {
            out.second_order += 1;
        }
    }
    Ok(())
}

fn add_poly(out: &mut Elements, p: PolyDataPiece, path: &Path) -> Result<(), MeshError> {
    let base = out.vertices.len();
    out.vertices.extend(points(p.points, path)?);
    add_point_data(out, p.data, base);
    if let Some(polys) = p.polys {
        for c in cell_lists(polys, path)? {
            for k in 1..c.len().saturating_sub(1) {
                out.triangles.push([c[0], c[k], c[k + 1]].map(|i| base + i));
            }
        }
    }
    Ok(())
}

/// A piece's numeric point arrays (the first piece's only: a field
/// split over pieces is not joined).
fn add_point_data(out: &mut Elements, data: Attributes, base: usize) {
    if base > 0 {
        return;
    }
    for a in data.point {
        let Attribute::DataArray(a) = a else { continue };
        let components = a.num_comp();
        if let Some(values) =
            a.data.cast_into::<f64>().filter(|v| components > 0 && v.len() % components == 0)
        {
            out.point_data.push(super::PointData { name: a.name, components, values });
        }
    }
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
    let mut xml = Vec::new();
    grid(vertices, tets, triangles, fields)
        .write_xml(&mut xml)
        .map_err(|e| MeshError::parse(path, 0, format!("VTK writer: {e}")))?;
    write_whole(path, &xml)
}

/// Writes `bytes` to `path` (rendered in memory first, so that a failed
/// write is an I/O error in words); a file left incomplete is removed.
fn write_whole(path: &Path, bytes: &[u8]) -> Result<(), MeshError> {
    std::fs::write(path, bytes).map_err(|e| {
        let _ = std::fs::remove_file(path);
        MeshError::io(path, e)
    })
}

/// Writes points as a `.vtp` polydata (one vertex cell per point) with
/// per-point fields, e.g. contact points with their normals and forces.
pub fn write_vtp_points(path: &Path, points: &[[f64; 3]], fields: &[PointField]) -> Result<(), MeshError> {
    let n = points.len() as u64;
    let verts = VertexNumbers::XML { connectivity: (0..n).collect(), offsets: (1..=n).collect() };
    write_vtp(path, points, (Some(verts), None), fields)
}

/// Writes line segments (pairs of indices into `points`) as a `.vtp`
/// polydata with per-point fields, e.g. needles from their back to their tip.
pub fn write_vtp_lines(
    path: &Path,
    points: &[[f64; 3]],
    segments: &[[usize; 2]],
    fields: &[PointField],
) -> Result<(), MeshError> {
    if let Some(s) = segments.iter().find(|s| s.iter().any(|&i| i >= points.len())) {
        return Err(MeshError::parse(path, 0, format!("segment {s:?} names a point past {}", points.len())));
    }
    let connectivity = segments.iter().flatten().map(|&i| i as u64).collect();
    let offsets = (1..=segments.len() as u64).map(|k| 2 * k).collect();
    write_vtp(path, points, (None, Some(VertexNumbers::XML { connectivity, offsets })), fields)
}

/// A `.vtp` polydata of `points` with vertex cells and/or line cells.
fn write_vtp(
    path: &Path,
    points: &[[f64; 3]],
    (verts, lines): (Option<VertexNumbers>, Option<VertexNumbers>),
    fields: &[PointField],
) -> Result<(), MeshError> {
    for f in fields {
        if f.values.len() != f.components as usize * points.len() {
            return Err(MeshError::parse(path, 0, format!("field {} has the wrong length", f.name)));
        }
    }
    let piece = PolyDataPiece {
        points: IOBuffer::F64(points.iter().flatten().copied().collect()),
        verts,
        lines,
        polys: None,
        strips: None,
        data: Attributes { point: point_attributes(fields), cell: Vec::new() },
    };
    let vtk = Vtk {
        version: Version::new((1, 0)),
        title: String::from("ferrofem"),
        byte_order: ByteOrder::LittleEndian,
        data: DataSet::inline(piece),
        file_path: None,
    };
    let mut xml = Vec::new();
    vtk.write_xml(&mut xml).map_err(|e| MeshError::parse(path, 0, format!("VTK writer: {e}")))?;
    write_whole(path, &xml)
}
