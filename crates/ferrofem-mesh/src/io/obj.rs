use std::fmt::Write as _;
use std::path::Path;

use super::Elements;
use crate::MeshError;

/// OBJ surfaces through `tobj`: polygons are triangulated as fans; normals and
/// texture coordinates are ignored.
pub fn parse(text: &str, path: &Path) -> Result<Elements, MeshError> {
    let opts = tobj::LoadOptions { triangulate: true, single_index: false, ..Default::default() };
    let mut reader = std::io::BufReader::new(text.as_bytes());
    let (models, _) = tobj::load_obj_buf(&mut reader, &opts, |_| Ok((Vec::new(), Default::default())))
        .map_err(|e| MeshError::parse(path, 0, format!("OBJ: {e}")))?;
    let mut out = Elements::default();
    for m in models {
        let base = out.vertices.len();
        let p = &m.mesh.positions;
        if p.len() % 3 != 0 {
            return Err(MeshError::parse(path, 0, "OBJ: position count is not a multiple of 3"));
        }
        out.vertices.extend(p.chunks_exact(3).map(|c| [c[0] as f64, c[1] as f64, c[2] as f64]));
        let idx = &m.mesh.indices;
        if idx.len() % 3 != 0 {
            return Err(MeshError::parse(path, 0, "OBJ: face index count is not a multiple of 3"));
        }
        out.triangles.extend(idx.chunks_exact(3).map(|c| [0, 1, 2].map(|k| base + c[k] as usize)));
    }
    Ok(out)
}

/// OBJ text with `v` and `f` lines (1-based indices), full f64 precision.
pub fn write(vertices: &[[f64; 3]], triangles: &[[usize; 3]]) -> String {
    let mut s = String::from("# ferrofem\n");
    for p in vertices {
        let _ = writeln!(s, "v {:e} {:e} {:e}", p[0], p[1], p[2]);
    }
    for t in triangles {
        let _ = writeln!(s, "f {} {} {}", t[0] + 1, t[1] + 1, t[2] + 1);
    }
    s
}
