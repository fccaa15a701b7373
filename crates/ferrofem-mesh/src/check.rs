//! Checks every mesh of the crate makes of its input: finite coordinates,
//! in-range and distinct element indices.

use crate::MeshError;

/// The first non-finite coordinate, as an error naming its vertex.
pub(crate) fn check_finite(vertices: &[[f64; 3]]) -> Result<(), MeshError> {
    for (i, p) in vertices.iter().enumerate() {
        if let Some(&value) = p.iter().find(|x| !x.is_finite()) {
            return Err(MeshError::NonFinite { vertex: i, value });
        }
    }
    Ok(())
}

/// The first element index out of range or repeated within its element.
pub(crate) fn check_indices<const N: usize>(
    elements: &[[usize; N]],
    vertices: usize,
) -> Result<(), MeshError> {
    for (e, el) in elements.iter().enumerate() {
        for (k, &i) in el.iter().enumerate() {
            if i >= vertices {
                return Err(MeshError::IndexOutOfRange { element: e, index: i, vertices });
            }
            if el[..k].contains(&i) {
                return Err(MeshError::RepeatedVertex { element: e, vertex: i });
            }
        }
    }
    Ok(())
}
