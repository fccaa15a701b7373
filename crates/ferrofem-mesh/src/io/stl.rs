use std::path::Path;

use super::Elements;
use crate::MeshError;

/// STL (ASCII or binary) through `stl_io`; coincident corners are merged.
pub fn parse(bytes: &[u8], path: &Path) -> Result<Elements, MeshError> {
    let mut cursor = std::io::Cursor::new(bytes);
    let mesh = stl_io::read_stl(&mut cursor).map_err(|e| {
        MeshError::parse(path, 0, format!("STL: {e} (expected ASCII `solid … facet normal … vertex x y z …` or an 80-byte header, a u32 count and 50 bytes per triangle)"))
    })?;
    let vertices = mesh.vertices.iter().map(|v| [v[0] as f64, v[1] as f64, v[2] as f64]).collect();
    let triangles = mesh.faces.iter().map(|f| f.vertices).collect();
    Ok(Elements { vertices, triangles, ..Default::default() })
}

/// Binary STL (single precision, as the format requires).
pub fn write(vertices: &[[f64; 3]], triangles: &[[usize; 3]]) -> Result<Vec<u8>, MeshError> {
    let tris = triangles.iter().map(|t| {
        let v = t.map(|i| vertices[i].map(|x| x as f32));
        let n = crate::cross(
            &crate::sub(&vertices[t[1]], &vertices[t[0]]),
            &crate::sub(&vertices[t[2]], &vertices[t[0]]),
        );
        let len = crate::dot(&n, &n).sqrt().max(f64::MIN_POSITIVE);
        stl_io::Triangle {
            normal: stl_io::Normal::new(n.map(|x| (x / len) as f32)),
            vertices: v.map(stl_io::Vertex::new),
        }
    });
    let mut out = Vec::new();
    stl_io::write_stl(&mut out, tris).map_err(|e| MeshError::io("<stl>", e))?;
    Ok(out)
}
