//! A closed surface made into a tetrahedral mesh by isosurface stuffing
//! (Labelle & Shewchuk 2007): a body-centred cubic lattice over the
//! surface's box ([`lattice`]), each lattice vertex inside or outside by
//! winding numbers ([`winding`]) at its distance from the surface, lattice
//! vertices near a cut point warped onto the surface (§3, the paper's α),
//! and each lattice tet cut to its inside part ([`stencil`]). The boundary
//! lies on the surface's piecewise-linear interpolation at the lattice's
//! edges: within about a cell of it.

mod lattice;
mod stencil;
mod winding;

use std::collections::HashMap;

use parry3d_f64::math::Vector;
use parry3d_f64::query::PointQuery;
use parry3d_f64::shape::TriMesh as ParryMesh;
use rayon::prelude::*;

use crate::{Aabb, MeshError, TetMesh, TriMesh};
use lattice::Lattice;
use stencil::{stuff, Cuts};
pub use winding::generalized_winding_number;

/// How fine a tetrahedralization is.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Fineness {
    /// The lattice's cube edge (the surface's units); tets have edges of
    /// 0.87 to 1 cell.
    Cell(f64),
    /// Cells along the surface's longest bounding-box side.
    Resolution(usize),
}

/// The most lattice cubes a tetrahedralization may use (about 12 tets per
/// cube inside the surface).
pub const MAX_CUBES: usize = 16_000_000;

fn refuse(message: String) -> MeshError {
    MeshError::Tetrahedralize(message)
}

/// The tetrahedral mesh of the solid `surface` encloses at `fineness`:
/// every tet positively oriented. Refused: an empty or flat surface, a
/// lattice over [`MAX_CUBES`], a surface whose winding numbers cannot tell
/// inside from outside (open), or one that encloses no lattice vertex.
pub fn tetrahedralize(surface: &TriMesh, fineness: Fineness) -> Result<TetMesh, MeshError> {
    let lattice = lattice_over(surface, fineness)?;
    let sides = winding::sides(&lattice, surface);
    let inside = sides.inside.iter().filter(|&&i| i).count();
    if sides.uncertain > inside / 20 + 8 {
        return Err(refuse(format!(
            "the surface is open: at {} of the {} lattice vertices near it ({} inside in all) its winding number \
             is between ¼ and ¾, so inside and outside cannot be told apart; close its holes",
            sides.uncertain, sides.disputed, inside
        )));
    }
    if inside == 0 {
        return Err(refuse(format!(
            "the surface encloses no lattice vertex at a cell of {:e}: it is open or thinner than a cell",
            lattice.h
        )));
    }
    let signed = signed_distances(&lattice, surface, &sides.inside)?;
    let mut cuts = Warped::new(&lattice, signed);
    let mut tets = Vec::new();
    for t in lattice.tets() {
        if t.iter().all(|&v| cuts.sign(v) == 0) {
            // All four on the surface: kept when its centroid is inside.
            let c = centroid(t.map(|v| cuts.positions[v]));
            if generalized_winding_number(surface, c).abs() >= 0.5 {
                tets.push(t);
            }
        } else {
            stuff(t, &mut cuts, &mut tets);
        }
    }
    let mut mesh = TetMesh { vertices: cuts.positions, tets };
    orient(&mut mesh, lattice.h);
    mesh.remove_unused_vertices();
    Ok(mesh)
}

/// The lattice over `surface`'s box with two cells of margin (so that
/// cube corners fall on the faces of a box surface whose sides the cell divides).
fn lattice_over(surface: &TriMesh, fineness: Fineness) -> Result<Lattice, MeshError> {
    if surface.triangles.is_empty() {
        return Err(refuse("the surface has no triangle".into()));
    }
    if let Some(v) = surface.vertices.iter().flatten().find(|x| !x.is_finite()) {
        return Err(refuse(format!("the surface has a non-finite coordinate {v}")));
    }
    let Aabb { min, max } = Aabb::of_points(&surface.vertices).ok_or_else(|| refuse("no vertex".into()))?;
    let side = [0, 1, 2].map(|d| max[d] - min[d]);
    let longest = side.iter().cloned().fold(0.0, f64::max);
    if side.iter().any(|&s| s <= 1e-9 * longest) || surface.total_area() == 0.0 {
        return Err(refuse(format!("the surface is flat or degenerate (box sides {side:?})")));
    }
    let h = match fineness {
        Fineness::Cell(h) if h.is_finite() && h > 0.0 => h,
        Fineness::Resolution(n) if n > 0 => longest / n as f64,
        other => {
            return Err(refuse(format!("{other:?}: the cell must be a positive length, the resolution ≥ 1")))
        }
    };
    let n = side.map(|s| (s / h - 1e-9).ceil().max(1.0) + 4.0);
    let cubes = n.iter().product::<f64>();
    if cubes > MAX_CUBES as f64 {
        return Err(refuse(format!(
            "a cell of {h:e} over a box of {side:?} makes a lattice of {cubes:.3e} cubes (about {:.1e} tets), \
             more than the {MAX_CUBES} allowed: give a larger cell",
            12.0 * cubes
        )));
    }
    Ok(Lattice { origin: min.map(|m| m - 2.0 * h), h, n: n.map(|n| n as usize) })
}

/// Each lattice vertex's signed distance to the surface: negative inside,
/// zero within a millionth of a cell of it.
fn signed_distances(lattice: &Lattice, surface: &TriMesh, inside: &[bool]) -> Result<Vec<f64>, MeshError> {
    let mesh = distance_tree(surface)?;
    Ok((0..lattice.vertex_count())
        .into_par_iter()
        .map(|v| {
            let p = lattice.position(v);
            let d = mesh.distance_to_local_point(Vector::new(p[0], p[1], p[2]), false);
            match (d <= 1e-6 * lattice.h, inside[v]) {
                (true, _) => 0.0,
                (false, true) => -d,
                (false, false) => d,
            }
        })
        .collect())
}

/// `surface` in parry's tree, for distances to it.
fn distance_tree(surface: &TriMesh) -> Result<ParryMesh, MeshError> {
    let vertices = surface.vertices.iter().map(|p| Vector::new(p[0], p[1], p[2])).collect();
    let indices = surface.triangles.iter().map(|t| t.map(|v| v as u32)).collect();
    ParryMesh::new(vertices, indices).map_err(|e| refuse(format!("the surface: {e}")))
}

/// The lattice after the warp: positions and signed distances, and the
/// cut points made so far (new vertices after the lattice's).
struct Warped {
    positions: Vec<[f64; 3]>,
    f: Vec<f64>,
    made: HashMap<(usize, usize), usize>,
}

/// Where edge `(a, b)`'s straight line crosses zero of `f`, as a fraction from `a`.
fn crossing(fa: f64, fb: f64) -> f64 {
    fa / (fa - fb)
}

impl Warped {
    /// Warps each lattice vertex that a cut point on one of its edges lies
    /// within α of that edge's length onto the nearest such cut point.
    fn new(lattice: &Lattice, f: Vec<f64>) -> Warped {
        let positions: Vec<[f64; 3]> = (0..lattice.vertex_count()).map(|v| lattice.position(v)).collect();
        let mut nearest: Vec<Option<(f64, [f64; 3])>> = vec![None; positions.len()];
        for (a, b, kind) in lattice.edges() {
            if f[a] * f[b] >= 0.0 {
                continue;
            }
            let t = crossing(f[a], f[b]);
            let point = lerp(positions[a], positions[b], t);
            for (v, fraction) in [(a, t), (b, 1.0 - t)] {
                if fraction < kind.alpha() && nearest[v].is_none_or(|(d, _)| fraction * length(kind) < d) {
                    nearest[v] = Some((fraction * length(kind), point));
                }
            }
        }
        let mut w = Warped { positions, f, made: HashMap::new() };
        for (v, n) in nearest.into_iter().enumerate() {
            if let Some((_, point)) = n {
                w.positions[v] = point;
                w.f[v] = 0.0;
            }
        }
        w
    }
}

/// An edge kind's length in cells.
fn length(kind: lattice::EdgeKind) -> f64 {
    match kind {
        lattice::EdgeKind::Long => 1.0,
        lattice::EdgeKind::Short => 0.75f64.sqrt(),
    }
}

impl Cuts for Warped {
    fn sign(&self, v: usize) -> i8 {
        match self.f[v] {
            x if x < 0.0 => -1,
            x if x > 0.0 => 1,
            _ => 0,
        }
    }

    fn cut(&mut self, a: usize, b: usize) -> usize {
        let key = (a.min(b), a.max(b));
        if let Some(&v) = self.made.get(&key) {
            return v;
        }
        let (p, q) = (key.0, key.1);
        let point = lerp(self.positions[p], self.positions[q], crossing(self.f[p], self.f[q]));
        self.positions.push(point);
        self.f.push(0.0);
        let v = self.positions.len() - 1;
        self.made.insert(key, v);
        v
    }
}

fn lerp(a: [f64; 3], b: [f64; 3], t: f64) -> [f64; 3] {
    [0, 1, 2].map(|d| a[d] + t * (b[d] - a[d]))
}

fn centroid(p: [[f64; 3]; 4]) -> [f64; 3] {
    [0, 1, 2].map(|d| 0.25 * (p[0][d] + p[1][d] + p[2][d] + p[3][d]))
}

/// Every tet turned positive; flat ones (a millionth of a lattice tet's
/// volume) dropped.
fn orient(mesh: &mut TetMesh, h: f64) {
    let flat = 1e-6 * h.powi(3) / 12.0;
    let mut kept = Vec::with_capacity(mesh.tets.len());
    for e in 0..mesh.tets.len() {
        let v = mesh.signed_volume(e);
        let mut t = mesh.tets[e];
        if v.abs() <= flat {
            continue;
        }
        if v < 0.0 {
            t.swap(2, 3);
        }
        kept.push(t);
    }
    mesh.tets = kept;
}

#[cfg(test)]
mod tests;
