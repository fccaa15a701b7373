//! Procedural meshes with a resolution parameter. Volumes are structured
//! hexahedral grids split into six tets each (Kuhn/Freudenthal split, which
//! is conforming under translation and under mirroring across mid-planes),
//! mapped onto the target shape. Every generator returns a validated,
//! positively oriented mesh centred at the origin.

use crate::{MeshError, TetMesh, TriMesh};

/// Box `[−lx/2, lx/2] × [−ly/2, ly/2] × [−lz/2, lz/2]` with `cells` hexahedra
/// along each axis (a beam when one extent dominates).
pub fn box_mesh(size: [f64; 3], cells: [usize; 3]) -> Result<TetMesh, MeshError> {
    positive("size", &size)?;
    let grid = KuhnGrid::new(cells, false)?;
    grid.mesh(|p| [0, 1, 2].map(|d| size[d] * (p[d] - 0.5)))
}

/// Ball of `radius` with `resolution` cells across its diameter: a cube grid
/// `c ∈ [−1, 1]³` blended from the cube at the centre to the sphere at the
/// surface, `p = (1 − t) c + t · t s(c / t)` with `t = ‖c‖∞` and `s` the
/// cube-to-sphere map `s(u)ᵢ = uᵢ √(1 − u_j²/2 − u_k²/2 + u_j² u_k²/3)`,
/// each cell split along the diagonal that points away from the centre.
/// Every tet's quality (`6√2·V/ℓ_rms³`) is above 0.48 up to 26 cells
/// across; the radial projection `c ↦ c ‖c‖∞ / ‖c‖₂` of one `+x+y+z`
/// split made slivers of 0.003 at 16 cells, which a touch turned over.
pub fn ball(radius: f64, resolution: usize) -> Result<TetMesh, MeshError> {
    positive("radius", &[radius])?;
    let grid = KuhnGrid { mirrored: [true; 3], ..KuhnGrid::new([resolution; 3], false)? };
    grid.mesh(|p| {
        let c = p.map(|x| 2.0 * x - 1.0);
        let t = c.iter().fold(0.0f64, |m, x| m.max(x.abs()));
        if t == 0.0 {
            return [0.0; 3];
        }
        let u = c.map(|x| x / t);
        let sphere = |i: usize| {
            let (a, b) = (u[(i + 1) % 3].powi(2), u[(i + 2) % 3].powi(2));
            u[i] * (1.0 - a / 2.0 - b / 2.0 + a * b / 3.0).sqrt()
        };
        [0, 1, 2].map(|i| radius * ((1.0 - t) * c[i] + t * t * sphere(i)))
    })
}

/// Cells across each ball's surface in [`balls`]: fine enough that the
/// winding numbers see spheres, not polyhedra, at the resolutions a
/// union is filled at.
const BALL_SURFACE_CELLS: usize = 24;

/// The union of balls `[x, y, z, radius]` (m) filled with tets by isosurface
/// stuffing, `resolution` cells along the union's longest side: a snowman,
/// a dumbbell. Where balls overlap, the winding number of their surfaces is
/// above one, so the overlap is inside and their hidden faces cut nothing.
pub fn balls(balls: &[[f64; 4]], resolution: usize) -> Result<TetMesh, MeshError> {
    if balls.is_empty() {
        return Err(MeshError::Generator("a union of balls needs at least one ball".into()));
    }
    let mut surface = TriMesh { vertices: Vec::new(), triangles: Vec::new() };
    for &[x, y, z, r] in balls {
        positive("radius", &[r])?;
        if ![x, y, z].iter().all(|c| c.is_finite()) {
            return Err(MeshError::Generator(format!("a ball's centre must be finite, got {:?}", [x, y, z])));
        }
        let sphere = ball(r, BALL_SURFACE_CELLS)?.boundary().mesh;
        let offset = surface.vertices.len();
        surface.vertices.extend(sphere.vertices.iter().map(|p| [p[0] + x, p[1] + y, p[2] + z]));
        surface.triangles.extend(sphere.triangles.iter().map(|t| t.map(|i| i + offset)));
    }
    crate::stuffing::tetrahedralize(&surface, crate::stuffing::Fineness::Resolution(resolution))
}

/// Cylinder along z of `radius` and `length`, with `resolution` cells across
/// its diameter and `length_cells` along its axis.
pub fn cylinder(
    radius: f64,
    length: f64,
    resolution: usize,
    length_cells: usize,
) -> Result<TetMesh, MeshError> {
    positive("radius and length", &[radius, length])?;
    let grid = KuhnGrid {
        mirrored: [true, true, false],
        ..KuhnGrid::new([resolution, resolution, length_cells], false)?
    };
    grid.mesh(|p| {
        let [x, y] = disk(2.0 * p[0] - 1.0, 2.0 * p[1] - 1.0);
        [radius * x, radius * y, length * (p[2] - 0.5)]
    })
}

/// Torus around the z axis with ring radius `major` and tube radius `minor`;
/// `resolution` cells across the tube and `ring_cells` around the ring.
pub fn torus(major: f64, minor: f64, resolution: usize, ring_cells: usize) -> Result<TetMesh, MeshError> {
    positive("radii", &[major, minor])?;
    if minor >= major {
        return Err(MeshError::Generator(format!(
            "torus tube radius {minor} must be smaller than ring radius {major}"
        )));
    }
    if ring_cells < 3 {
        return Err(MeshError::Generator("torus needs at least 3 ring cells".into()));
    }
    let grid = KuhnGrid {
        mirrored: [true, true, false],
        ..KuhnGrid::new([resolution, resolution, ring_cells], true)?
    };
    grid.mesh(|p| {
        let [u, w] = disk(2.0 * p[0] - 1.0, 2.0 * p[1] - 1.0);
        let phi = 2.0 * std::f64::consts::PI * p[2];
        let rho = major + minor * u;
        [rho * phi.cos(), rho * phi.sin(), minor * w]
    })
}

/// Rectangular cloth sheet in the plane z = 0, `cells` quads along x and y,
/// each split into two triangles, normals along +z.
pub fn sheet(size: [f64; 2], cells: [usize; 2]) -> Result<TriMesh, MeshError> {
    positive("size", &size)?;
    let [nx, ny] = cells;
    if nx == 0 || ny == 0 {
        return Err(MeshError::Generator("sheet needs at least one cell per axis".into()));
    }
    check_total(nx.saturating_mul(ny), 2)?;
    let id = |i: usize, j: usize| j * (nx + 1) + i;
    let mut vertices = Vec::with_capacity((nx + 1) * (ny + 1));
    for j in 0..=ny {
        for i in 0..=nx {
            let x = size[0] * (i as f64 / nx as f64 - 0.5);
            let y = size[1] * (j as f64 / ny as f64 - 0.5);
            vertices.push([x, y, 0.0]);
        }
    }
    let mut triangles = Vec::with_capacity(2 * nx * ny);
    for j in 0..ny {
        for i in 0..nx {
            triangles.push([id(i, j), id(i + 1, j), id(i + 1, j + 1)]);
            triangles.push([id(i, j), id(i + 1, j + 1), id(i, j + 1)]);
        }
    }
    TriMesh::new(vertices, triangles)
}

/// Most elements a generator makes (tets or triangles): 50 million, about
/// 4 GB with their vertices, far beyond what a real-time step handles.
pub const MAX_ELEMENTS: usize = 50_000_000;

/// Refuses `cells` grid cells of `per_cell` elements each beyond [`MAX_ELEMENTS`],
/// before anything is allocated.
fn check_total(cells: usize, per_cell: usize) -> Result<(), MeshError> {
    match cells.checked_mul(per_cell) {
        Some(n) if n <= MAX_ELEMENTS => Ok(()),
        _ => Err(MeshError::Generator(format!(
            "{cells} cells make {} elements, more than the limit of {MAX_ELEMENTS}",
            cells.saturating_mul(per_cell)
        ))),
    }
}

fn positive(what: &str, values: &[f64]) -> Result<(), MeshError> {
    if values.iter().all(|v| v.is_finite() && *v > 0.0) {
        Ok(())
    } else {
        Err(MeshError::Generator(format!("{what} must be finite and positive, got {values:?}")))
    }
}

/// Square `[−1,1]²` onto the unit disk, blended from the square at the
/// centre to the circle at the rim as the ball's grid is:
/// `p ↦ (1 − t) p + t · t s(p / t)`, `t = ‖p‖∞`,
/// `s(u) = (u_x √(1 − u_y²/2), u_y √(1 − u_x²/2))`.
fn disk(x: f64, y: f64) -> [f64; 2] {
    let t = x.abs().max(y.abs());
    if t == 0.0 {
        return [0.0, 0.0];
    }
    let (u, v) = (x / t, y / t);
    let circle = [u * (1.0 - v * v / 2.0).sqrt(), v * (1.0 - u * u / 2.0).sqrt()];
    [(1.0 - t) * x + t * t * circle[0], (1.0 - t) * y + t * t * circle[1]]
}

/// A structured grid of `n[0]×n[1]×n[2]` hexahedra in `[0,1]³`, optionally
/// periodic along its third axis.
struct KuhnGrid {
    n: [usize; 3],
    periodic_z: bool,
    /// Per axis, whether each cell's diagonal runs away from the grid's
    /// mid-plane (the split mirrored across it) instead of towards `+`.
    mirrored: [bool; 3],
}

impl KuhnGrid {
    fn new(n: [usize; 3], periodic_z: bool) -> Result<Self, MeshError> {
        if n.iter().any(|&c| c == 0 || c > 2048) {
            return Err(MeshError::Generator(format!("cell counts must be in 1..=2048, got {n:?}")));
        }
        check_total(n.iter().fold(1usize, |p, &c| p.saturating_mul(c)), 6)?;
        Ok(KuhnGrid { n, periodic_z, mirrored: [false; 3] })
    }

    fn layers(&self) -> usize {
        if self.periodic_z {
            self.n[2]
        } else {
            self.n[2] + 1
        }
    }

    fn vertex(&self, i: usize, j: usize, k: usize) -> usize {
        let k = if self.periodic_z { k % self.n[2] } else { k };
        (k * (self.n[1] + 1) + j) * (self.n[0] + 1) + i
    }

    /// Maps the grid's reference points through `map`, splits each hexahedron
    /// along its main diagonal into six tets and orients them positively.
    fn mesh(&self, map: impl Fn([f64; 3]) -> [f64; 3]) -> Result<TetMesh, MeshError> {
        let [nx, ny, nz] = self.n;
        let mut vertices = Vec::with_capacity((nx + 1) * (ny + 1) * self.layers());
        for k in 0..self.layers() {
            for j in 0..=ny {
                for i in 0..=nx {
                    vertices.push(map([i as f64 / nx as f64, j as f64 / ny as f64, k as f64 / nz as f64]));
                }
            }
        }
        const PATHS: [[usize; 3]; 6] = [[0, 1, 2], [0, 2, 1], [1, 0, 2], [1, 2, 0], [2, 0, 1], [2, 1, 0]];
        let mut tets = Vec::with_capacity(6 * nx * ny * nz);
        for k in 0..nz {
            for j in 0..ny {
                for i in 0..nx {
                    // Per axis, whether the diagonal runs towards lower indices.
                    let cell = [i, j, k];
                    let flip = [0, 1, 2].map(|a| self.mirrored[a] && 2 * cell[a] + 1 < self.n[a]);
                    let start = [0, 1, 2].map(|a| cell[a] + flip[a] as usize);
                    for path in PATHS {
                        let mut c = start;
                        let mut t = [self.vertex(c[0], c[1], c[2]); 4];
                        for (s, &axis) in path.iter().enumerate() {
                            c[axis] = if flip[axis] { c[axis] - 1 } else { c[axis] + 1 };
                            t[s + 1] = self.vertex(c[0], c[1], c[2]);
                        }
                        tets.push(t);
                    }
                }
            }
        }
        let mut mesh = TetMesh { vertices, tets };
        for e in 0..mesh.tets.len() {
            if mesh.signed_volume(e) < 0.0 {
                mesh.tets[e].swap(2, 3);
            }
        }
        mesh.validate(Default::default())?;
        Ok(mesh)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::f64::consts::PI;

    /// Two balls overlapping by half a radius fill their union: the volume
    /// of two spheres less their lens, within the stuffing's error; one
    /// connected body, no inverted tet; a union needs a ball.
    #[test]
    fn a_union_of_balls_is_one_solid_of_their_volume() {
        let (r, d) = (0.1, 0.15);
        let m = balls(&[[0.0, 0.0, 0.0, r], [0.0, 0.0, d, r]], 24).unwrap();
        let q = m.quality();
        let h = r - d / 2.0;
        let lens = 2.0 * PI * h * h * (3.0 * r - h) / 3.0;
        let exact = 2.0 * 4.0 / 3.0 * PI * r.powi(3) - lens;
        assert!((q.total_volume / exact - 1.0).abs() < 0.03, "{} against {exact}", q.total_volume);
        assert_eq!(q.inverted, 0);
        let b = m.boundary().mesh;
        assert_eq!(
            b.vertices.len() as i64 - b.triangles.len() as i64 / 2,
            2,
            "one closed surface (V − F/2 = 2)"
        );
        assert!(balls(&[], 8).is_err());
        assert!(balls(&[[0.0, 0.0, 0.0, -1.0]], 8).is_err());
    }

    #[test]
    fn box_volume_and_counts() {
        let m = box_mesh([2.0, 1.0, 0.5], [4, 2, 3]).unwrap();
        assert_eq!(m.vertices.len(), 5 * 3 * 4);
        assert_eq!(m.tets.len(), 6 * 24);
        assert!((m.quality().total_volume - 1.0).abs() < 1e-12);
        // A closed surface with outward normals encloses the same volume.
        assert!((m.boundary().mesh.enclosed_volume() - 1.0).abs() < 1e-12);
    }

    #[test]
    fn curved_meshes_have_no_slivers_at_any_resolution() {
        for resolution in [4, 8, 16, 26] {
            let q = ball(0.1, resolution).unwrap().quality().min_quality;
            assert!(q > 0.45, "ball, {resolution} cells: min quality {q}");
            let q = cylinder(0.1, 0.4, resolution, 2 * resolution).unwrap().quality().min_quality;
            assert!(q > 0.45, "cylinder, {resolution} cells: min quality {q}");
            // The torus's cells are 2.4 times longer around the ring than across.
            let q = torus(0.3, 0.1, resolution, 4 * resolution).unwrap().quality().min_quality;
            assert!(q > 0.14, "torus, {resolution} cells: min quality {q}");
        }
    }

    #[test]
    fn ball_cylinder_torus_converge_to_their_volume() {
        let q = ball(1.0, 16).unwrap().quality();
        assert!(q.inverted == 0 && (q.total_volume / (4.0 / 3.0 * PI) - 1.0).abs() < 0.03);
        let q = cylinder(0.5, 2.0, 12, 8).unwrap().quality();
        assert!((q.total_volume / (PI * 0.25 * 2.0) - 1.0).abs() < 0.03);
        let m = torus(2.0, 0.5, 8, 48).unwrap();
        let q = m.quality();
        assert_eq!(q.unused_vertices, 0);
        assert!((q.total_volume / (2.0 * PI * PI * 2.0 * 0.25) - 1.0).abs() < 0.05);
        // Genus one: the boundary's Euler characteristic V − E + F is 0.
        let s = m.boundary().mesh;
        let (v, f) = (s.vertices.len() as i64, s.triangles.len() as i64);
        assert_eq!(v - 3 * f / 2 + f, 0);
    }

    #[test]
    fn sheet_area() {
        let s = sheet([2.0, 1.0], [10, 5]).unwrap();
        assert!((s.total_area() - 2.0).abs() < 1e-12);
        assert_eq!(s.triangles.len(), 100);
    }

    #[test]
    fn bad_parameters_are_errors() {
        assert!(box_mesh([1.0, f64::NAN, 1.0], [1, 1, 1]).is_err());
        assert!(ball(1.0, 0).is_err());
        assert!(torus(1.0, 2.0, 4, 8).is_err());
    }

    /// Each axis within its cap but the total far beyond memory: refused
    /// by count before anything is allocated.
    #[test]
    fn total_element_count_is_bounded() {
        let e = box_mesh([1.0; 3], [2048, 2048, 2048]).unwrap_err().to_string();
        assert!(e.contains("more than the limit"), "{e}");
        assert!(sheet([1.0, 1.0], [usize::MAX, 2]).is_err());
        assert!(check_total(MAX_ELEMENTS / 6, 6).is_ok() && check_total(MAX_ELEMENTS / 6 + 1, 6).is_err());
    }
}
