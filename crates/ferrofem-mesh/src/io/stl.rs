use std::path::Path;

use super::Elements;
use crate::MeshError;

/// STL (ASCII or binary) through `stl_io`; coincident corners are merged.
pub fn parse(bytes: &[u8], path: &Path) -> Result<Elements, MeshError> {
    check_binary_size(bytes, path)?;
    let mut cursor = std::io::Cursor::new(bytes);
    let mesh = stl_io::read_stl(&mut cursor).map_err(|e| {
        MeshError::parse(path, 0, format!("STL: {e} (expected ASCII `solid … facet normal … vertex x y z …` or an 80-byte header, a u32 count and 50 bytes per triangle)"))
    })?;
    let vertices = mesh.vertices.iter().map(|v| [v[0] as f64, v[1] as f64, v[2] as f64]).collect();
    let triangles = mesh.faces.iter().map(|f| f.vertices).collect();
    Ok(Elements { vertices, triangles, ..Default::default() })
}

/// A binary STL (one that does not open with `solid`) holds an 80-byte
/// header, a u32 triangle count and 50 bytes per triangle: a count the
/// size does not match is named, with what the file does hold.
fn check_binary_size(bytes: &[u8], path: &Path) -> Result<(), MeshError> {
    let ascii = bytes.iter().skip_while(|b| b.is_ascii_whitespace()).take(5).eq(b"solid".iter());
    if ascii {
        return Ok(());
    }
    let message = match bytes.get(80..84) {
        None => {
            format!("STL: {} bytes, neither ASCII (`solid …`) nor a binary STL's 84-byte header", bytes.len())
        }
        Some(c) => {
            let count = u32::from_le_bytes([c[0], c[1], c[2], c[3]]) as u64;
            let expected = 84 + 50 * count;
            if expected == bytes.len() as u64 {
                return Ok(());
            }
            let held = (bytes.len() - 84) / 50;
            format!(
                "STL: the binary header announces {count} triangles ({expected} bytes), the file has {} bytes \
                 ({held} whole triangles): truncated, or not an STL file",
                bytes.len()
            )
        }
    };
    Err(MeshError::parse(path, 0, message))
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
