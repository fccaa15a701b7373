use super::*;
use crate::generate;

fn boundary(m: &TetMesh) -> TriMesh {
    m.boundary().mesh
}

/// A box surface whose sides the cell divides is meshed exactly: the
/// lattice's corners fall on its faces, so its volume comes back to
/// round-off, every tet a lattice tet or half of one (quality 0.72).
#[test]
fn a_box_is_meshed_exactly() {
    let surface = boundary(&generate::box_mesh([1.0, 0.5, 0.25], [4, 2, 1]).unwrap());
    let mesh = tetrahedralize(&surface, Fineness::Cell(0.125)).unwrap();
    let q = mesh.quality();
    assert!((q.total_volume - 0.125).abs() < 1e-12, "{}", q.total_volume);
    assert_eq!(q.inverted, 0);
    assert!(q.min_quality > 0.7, "{}", q.min_quality);
}

/// A ball's surface: the volume converges to the enclosed one as the cell
/// shrinks (within 2 % at the finest), no tet inverted or of quality under
/// 0.1, and the boundary within a cell of the surface.
#[test]
fn a_ball_converges_with_good_tets() {
    let surface = boundary(&generate::ball(1.0, 16).unwrap());
    let exact = surface.enclosed_volume();
    let mut errors = Vec::new();
    for n in [6, 12, 24] {
        let mesh = tetrahedralize(&surface, Fineness::Resolution(n)).unwrap();
        let q = mesh.quality();
        assert_eq!(q.inverted, 0, "resolution {n}");
        assert!(q.min_quality >= 0.1, "resolution {n}: quality {}", q.min_quality);
        let h = 2.0 / n as f64;
        let b = boundary(&mesh);
        let far = b
            .vertices
            .iter()
            .map(|p| ((p[0].powi(2) + p[1].powi(2) + p[2].powi(2)).sqrt() - 1.0).abs())
            .fold(0.0, f64::max);
        assert!(far <= 1.0 * h, "resolution {n}: boundary {far} from the sphere, cell {h}");
        errors.push((q.total_volume - exact).abs() / exact);
    }
    assert!(errors[2] < 0.02 && errors[2] < errors[0], "{errors:?}");
}

/// A small hole (two triangles of a box's 192 gone) leaves a sensible
/// solid: the generalized winding number still tells inside from outside.
#[test]
fn a_small_hole_still_gives_the_solid() {
    let mut surface = boundary(&generate::box_mesh([1.0, 1.0, 1.0], [4, 4, 4]).unwrap());
    let top =
        surface.triangles.iter().position(|t| t.iter().all(|&v| surface.vertices[v][2] > 0.499)).unwrap();
    surface.triangles.drain(top..top + 2);
    let mesh = tetrahedralize(&surface, Fineness::Cell(0.125)).unwrap();
    // Near the hole the cut points follow the nearest remaining triangles: 0.3 % goes.
    assert!((mesh.quality().total_volume - 1.0).abs() < 0.01, "{}", mesh.quality().total_volume);
}

/// An open surface (a hemisphere), an empty surface, a flat one and a
/// cell that would make too many cubes are refused with their numbers.
#[test]
fn bad_surfaces_are_refused_with_their_numbers() {
    let mut open = boundary(&generate::ball(1.0, 8).unwrap());
    open.triangles.retain(|t| t.iter().all(|&v| open.vertices[v][2] <= 1e-9));
    match tetrahedralize(&open, Fineness::Resolution(12)) {
        Err(e) => assert!(e.to_string().contains("open"), "{e}"),
        Ok(m) => panic!("an open box gave {} tets", m.tets.len()),
    }
    let empty = TriMesh { vertices: vec![], triangles: vec![] };
    assert!(tetrahedralize(&empty, Fineness::Cell(0.1)).unwrap_err().to_string().contains("no triangle"));
    let flat =
        TriMesh { vertices: vec![[0.0; 3], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]], triangles: vec![[0, 1, 2]] };
    assert!(tetrahedralize(&flat, Fineness::Cell(0.1)).unwrap_err().to_string().contains("flat"));
    let closed = boundary(&generate::box_mesh([1.0, 1.0, 1.0], [1, 1, 1]).unwrap());
    let e = tetrahedralize(&closed, Fineness::Cell(1e-3)).unwrap_err().to_string();
    assert!(e.contains("cubes") && e.contains("larger cell"), "{e}");
    let e = tetrahedralize(&closed, Fineness::Cell(-1.0)).unwrap_err().to_string();
    assert!(e.contains("positive"), "{e}");
}

/// The shared surfaces (the bunny, the self-intersecting smooth liver, the
/// armadillo), when present: at three cells the volume converges to the
/// enclosed one (within 2 % at the finest), the boundary stays within 1.5
/// cells of the surface, no tet is inverted or of quality under 0.1.
#[test]
fn shared_surfaces_become_good_tet_meshes() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/meshes");
    for name in ["npm-bunny/bunny.obj", "sofa/liver-smooth.obj", "sofa/Armadillo_simplified.obj"] {
        let Ok(surface) = crate::io::read_tri_mesh(&dir.join(name)) else { continue };
        let exact = surface.enclosed_volume().abs();
        let distance = surface_distance(&surface);
        let mut errors = Vec::new();
        for n in [12, 24, 48] {
            let started = std::time::Instant::now();
            let mesh = tetrahedralize(&surface, Fineness::Resolution(n)).unwrap();
            let seconds = started.elapsed().as_secs_f64();
            let q = mesh.quality();
            let h = longest_side(&surface) / n as f64;
            let b = boundary(&mesh);
            let far = b.vertices.iter().map(|p| distance(*p)).fold(0.0, f64::max);
            let error = (q.total_volume - exact) / exact;
            eprintln!(
                "{name} n={n}: {} tets, quality {:.3}, volume {:+.2} %, boundary {:.2} cells, {seconds:.2} s",
                q.tets,
                q.min_quality,
                100.0 * error,
                far / h
            );
            assert_eq!(q.inverted, 0, "{name} n={n}");
            assert!(q.min_quality >= 0.1, "{name} n={n}: quality {}", q.min_quality);
            assert!(far <= 1.5 * h, "{name} n={n}: boundary {} cells from the surface", far / h);
            errors.push(error.abs());
        }
        assert!(errors[2] < 0.02 && errors[2] < errors[0], "{name}: {errors:?}");
    }
}

fn longest_side(s: &TriMesh) -> f64 {
    let b = Aabb::of_points(&s.vertices).unwrap();
    (0..3).map(|d| b.max[d] - b.min[d]).fold(0.0, f64::max)
}

/// The distance to a surface, through parry's tree.
fn surface_distance(s: &TriMesh) -> impl Fn([f64; 3]) -> f64 {
    let mesh = distance_tree(s).unwrap();
    move |p| mesh.distance_to_local_point(Vector::new(p[0], p[1], p[2]), false)
}
