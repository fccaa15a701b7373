use std::path::Path;

use proptest::prelude::*;

use super::*;
use crate::generate;

fn sample() -> Elements {
    let m = generate::box_mesh([1.0, 0.5, 0.25], [2, 1, 1]).unwrap();
    let b = m.boundary();
    let triangles = b.mesh.triangles.iter().map(|t| t.map(|i| b.volume_vertex[i])).collect();
    Elements { vertices: m.vertices, tets: m.tets, triangles, ..Default::default() }
}

fn round_trip(format: Format, msh_v2: bool) -> Elements {
    let bytes = encode_elements(&sample(), format, msh_v2).unwrap();
    parse_elements(&bytes, format, Path::new("mem")).unwrap()
}

#[test]
fn volume_formats_round_trip_exactly() {
    for (format, v2) in
        [(Format::Msh, true), (Format::Msh, false), (Format::Vtu, false), (Format::Vtk, false)]
    {
        assert_eq!(round_trip(format, v2), sample(), "{format:?} v2={v2}");
    }
}

#[test]
fn surface_formats_round_trip() {
    let s = sample();
    let area =
        |e: &Elements| TriMesh { vertices: e.vertices.clone(), triangles: e.triangles.clone() }.total_area();
    // tobj renumbers vertices by first use and both go through f32: compare
    // the surfaces, not the numbering.
    for format in [Format::Obj, Format::Stl] {
        let r = round_trip(format, false);
        assert_eq!(r.triangles.len(), s.triangles.len(), "{format:?}");
        assert!((area(&r) - area(&s)).abs() < 1e-5, "{format:?}");
        assert!(r.tets.is_empty());
    }
}

#[test]
fn msh_with_sparse_tags_and_other_elements() {
    let text = "$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$PhysicalNames\n1\n3 1 \"v\"\n$EndPhysicalNames\n\
$Nodes\n4\n10 0 0 0\n20 1 0 0\n30 0 1 0\n40 0 0 1\n$EndNodes\n$Elements\n2\n1 15 2 0 1 10\n2 4 2 1 1 10 20 30 40\n$EndElements\n";
    let e = parse_elements(text.as_bytes(), Format::Msh, Path::new("m.msh")).unwrap();
    assert_eq!(e.tets, vec![[0, 1, 2, 3]]);
}

#[test]
fn malformed_inputs_are_errors() {
    let good = String::from_utf8(encode_elements(&sample(), Format::Msh, true).unwrap()).unwrap();
    let n = sample().vertices.len();
    let cases = [
        ("truncated", good[..good.len() / 2].to_string()),
        ("wrong count", good.replace(&format!("$Nodes\n{n}\n"), &format!("$Nodes\n{}\n", n + 1))),
        ("NaN", good.replacen("\n1 ", "\n1 NaN ", 1)),
        ("bad index", good.replace(" 2 1 1 1 ", " 2 1 1 999 ")),
    ];
    for (what, c) in &cases {
        assert_ne!(c, &good, "{what}: corruption did not apply");
        let r = parse_elements(c.as_bytes(), Format::Msh, Path::new("bad.msh"));
        assert!(r.is_err(), "{what} accepted");
    }
    let nan = "$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$Nodes\n1\n1 NaN 0 0\n$EndNodes\n";
    let err = parse_elements(nan.as_bytes(), Format::Msh, Path::new("n.msh")).unwrap_err();
    assert!(err.to_string().contains("non-finite"), "{err}");
}

#[test]
fn shared_meshes_are_read_when_present() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/meshes");
    if !dir.exists() {
        eprintln!("skipping: {} is absent", dir.display());
        return;
    }
    for f in [
        "generated/raptor_tet_5k.msh",
        "generated/armadillo_tet_9k.msh",
        "generated/liver_tet_3k.msh",
        "sofa/raptorTetra_8418.vtu",
        "sofa/Armadillo_Tetra_4406.vtu",
        "sofa/liver_gmsh22.msh",
        "sofa/cylinderPDMS12724Vol.vtk",
        "softrobots/finger_ascii.vtk",
        "sofa/torus_low_res_gmsh22.msh",
    ] {
        let mut m = read_tet_mesh(&dir.join(f), crate::ValidationOptions::default())
            .unwrap_or_else(|e| panic!("{f}: {e}"));
        m.remove_unused_vertices();
        let q = m.quality();
        assert!(q.tets > 0 && q.inverted == 0 && q.min_volume > 0.0, "{f}: {q:?}");
    }
    for f in ["sofa/liver.obj", "sofa/torus.obj", "softrobots/finger.stl", "npm-bunny/bunny.obj"] {
        let s = read_tri_mesh(&dir.join(f)).unwrap_or_else(|e| panic!("{f}: {e}"));
        assert!(s.total_area() > 0.0);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]
    /// Random corruption of a valid file never panics in any reader.
    #[test]
    fn corrupted_files_never_panic(cut in 0usize..4000, pos in 0usize..4000, byte in any::<u8>(), fmt in 0usize..5) {
        let format = [Format::Msh, Format::Vtk, Format::Vtu, Format::Obj, Format::Stl][fmt];
        let mut bytes = encode_elements(&sample(), format, fmt == 0 && cut % 2 == 0).unwrap();
        if !bytes.is_empty() {
            let p = pos % bytes.len();
            bytes[p] = byte;
            bytes.truncate(cut % (bytes.len() + 1));
        }
        let _ = parse_elements(&bytes, format, Path::new("fuzz"));
    }

    /// Random tokens after a valid header never panic the gmsh reader.
    #[test]
    fn random_msh_bodies_never_panic(body in "[0-9 .\\-e\\n$A-Za-z]{0,300}") {
        let text = format!("$MeshFormat\n2.2 0 8\n$EndMeshFormat\n{body}");
        let _ = parse_elements(text.as_bytes(), Format::Msh, Path::new("fuzz.msh"));
        let text = format!("$MeshFormat\n4.1 0 8\n$EndMeshFormat\n{body}");
        let _ = parse_elements(text.as_bytes(), Format::Msh, Path::new("fuzz.msh"));
    }
}

/// The fuzz targets' seed corpus (`fuzz/corpus/<format>/`, run by
/// `cargo fuzz` on nightly) replayed on the stable toolchain: every seed,
/// and every prefix of it cut at each line, reads to a mesh or an error.
#[test]
fn fuzz_seed_corpus_replays_without_panic() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus");
    let mut seeds = 0;
    for (dir, format) in [
        ("msh", Format::Msh),
        ("vtk", Format::Vtk),
        ("vtu", Format::Vtu),
        ("obj", Format::Obj),
        ("stl", Format::Stl),
    ] {
        for entry in std::fs::read_dir(root.join(dir)).unwrap() {
            let path = entry.unwrap().path();
            let bytes = std::fs::read(&path).unwrap();
            let cuts = bytes.iter().enumerate().filter(|(_, &b)| b == b'\n').map(|(i, _)| i);
            for end in cuts.chain([bytes.len()]) {
                let _ = parse_elements(&bytes[..end], format, &path);
            }
            seeds += 1;
        }
    }
    assert!(seeds >= 12, "{seeds} seeds");
}

/// Found by the `vtk` fuzz target: `CELLS 5 929999995` in a 266-byte file
/// made vtkio reserve 3.7 GB for the connectivity.
#[test]
fn vtk_cells_size_beyond_the_file_is_refused() {
    let bytes = include_bytes!("regressions/vtk-cells-size-beyond-file.vtk");
    let e = parse_elements(bytes, Format::Vtk, Path::new("f.vtk")).unwrap_err().to_string();
    assert!(e.contains("CELLS announces 929999995"), "{e}");
}

/// Found by the `vtu` fuzz target: a piece whose `<Points>` element is cut
/// short panics inside vtkio; the reader reports a parse error.
#[test]
fn vtu_piece_without_points_is_an_error() {
    let bytes = include_bytes!("regressions/vtu-piece-without-points.vtu");
    let e = parse_elements(bytes, Format::Vtu, Path::new("f.vtu")).unwrap_err().to_string();
    assert!(e.contains("f.vtu"), "{e}");
}

/// A gmsh 4.1 file with one tet, its counts as given.
fn msh41(header_nodes: usize, block_elements: usize) -> String {
    format!(
        "$MeshFormat\n4.1 0 8\n$EndMeshFormat\n$Nodes\n1 {header_nodes} 1 4\n3 1 0 4\n1\n2\n3\n4\n\
         0 0 0\n1 0 0\n0 1 0\n0 0 1\n$EndNodes\n$Elements\n1 {block_elements} 1 1\n3 1 4 {block_elements}\n\
         1 1 2 3 4\n$EndElements\n"
    )
}

/// A count that does not match the entries is blamed on the line that
/// announced it, not where the reader noticed: the `$Nodes` header (line
/// 5), an element block (line 18) whose section ends early; and a binary
/// STL's triangle count beside the file's size.
#[test]
fn wrong_counts_name_the_line_that_announced_them() {
    let read = |text: &str| parse_elements(text.as_bytes(), Format::Msh, Path::new("f.msh"));
    assert_eq!(read(&msh41(4, 1)).unwrap().tets.len(), 1);
    let e = read(&msh41(5, 1)).unwrap_err().to_string();
    assert!(e.contains("f.msh:5: the $Nodes header announces 5 nodes, its blocks hold 4"), "{e}");
    let e = read(&msh41(4, 3)).unwrap_err().to_string();
    assert!(
        e.contains("f.msh:18: the block announces 3 elements, its section ends at line 20 after 1"),
        "{e}"
    );

    let mut stl = vec![0u8; 184];
    stl[80..84].copy_from_slice(&4_000_000_000u32.to_le_bytes());
    let e = parse_elements(&stl, Format::Stl, Path::new("f.stl")).unwrap_err().to_string();
    assert!(
        e.contains("announces 4000000000 triangles") && e.contains("184 bytes (2 whole triangles)"),
        "{e}"
    );
    stl[80..84].copy_from_slice(&2u32.to_le_bytes());
    assert_eq!(parse_elements(&stl, Format::Stl, Path::new("f.stl")).unwrap().triangles.len(), 2);
}

/// The point data a frame writes comes back by name, with its components.
#[test]
fn frame_point_data_is_read_back() {
    let s = sample();
    let n = s.vertices.len();
    let speed: Vec<f64> = (0..n).map(|i| 0.25 * i as f64).collect();
    let velocity: Vec<f64> = (0..3 * n).map(|i| -1.5 + i as f64).collect();
    let dir = std::env::temp_dir().join(format!("ferrofem-point-data-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("frame.vtu");
    let fields = [
        PointField { name: "speed", components: 1, values: &speed },
        PointField { name: "velocity", components: 3, values: &velocity },
    ];
    write_vtu_frame(&path, &s.vertices, &s.tets, &[], &fields).unwrap();
    let e = read_elements(&path).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(e.field("speed").map(|f| (f.components, f.values.clone())), Some((1, speed)));
    assert_eq!(e.field("velocity").map(|f| (f.components, f.values.clone())), Some((3, velocity)));
    assert!(e.field("pressure").is_none());
}

/// Segments come back as line cells over the points, their point data by
/// name; a segment past the points is refused.
#[test]
fn line_segments_are_written_as_polydata_lines() {
    use vtkio::model::{DataSet, Piece, VertexNumbers};
    let points = [[0.0, 0.0, 0.0], [0.0, 0.0, 1.0], [1.0, 0.0, 0.0], [1.0, 1.0, 0.0]];
    let force = [0.5, 0.5, 2.0, 2.0];
    let dir = std::env::temp_dir().join(format!("ferrofem-lines-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("needles.vtp");
    let fields = [PointField { name: "force", components: 1, values: &force }];
    write_vtp_lines(&path, &points, &[[0, 1], [2, 3]], &fields).unwrap();
    let bad = write_vtp_lines(&dir.join("bad.vtp"), &points, &[[0, 4]], &fields);
    let vtk = vtkio::Vtk::import(&path).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(bad.unwrap_err().to_string().contains("[0, 4]"));
    let DataSet::PolyData { pieces, .. } = vtk.data else { panic!("not polydata") };
    let Piece::Inline(piece) = &pieces[0] else { panic!("not inline") };
    let Some(VertexNumbers::XML { connectivity, offsets }) = &piece.lines else { panic!("no lines") };
    assert_eq!((connectivity.as_slice(), offsets.as_slice()), (&[0, 1, 2, 3][..], &[2, 4][..]));
    assert!(piece.verts.is_none() && piece.data.point.len() == 1);
}
