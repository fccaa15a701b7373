//! `ferrofem mesh info|convert|tetrahedralize`.

use std::path::{Path, PathBuf};

use clap::Subcommand;
use ferrofem_mesh::io::{self, Format};

use crate::CliError;

/// Mesh subcommands.
#[derive(Debug, Subcommand)]
pub enum MeshCommand {
    /// Counts, bounding box, volume, quality and boundary of a mesh file.
    Info {
        /// Mesh file (.msh, .vtk, .vtu, .obj, .stl).
        file: PathBuf,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Convert between formats (chosen by extension).
    Convert {
        /// Input file.
        input: PathBuf,
        /// Output file.
        output: PathBuf,
        /// Write gmsh 2.2 instead of 4.1 for .msh output.
        #[arg(long)]
        msh22: bool,
    },
    /// Fill a closed surface with tets (isosurface stuffing; docs/cli.md).
    Tetrahedralize {
        /// Surface file (.obj, .stl; or a volume file, whose boundary is used).
        input: PathBuf,
        /// Output volume mesh (.msh, .vtk, .vtu).
        output: PathBuf,
        /// The lattice's cell in the surface's units.
        #[arg(long, conflicts_with = "resolution", required_unless_present = "resolution")]
        cell: Option<f64>,
        /// Cells along the surface's longest bounding-box side.
        #[arg(long)]
        resolution: Option<usize>,
    },
}

/// Runs a mesh subcommand.
pub fn mesh(cmd: MeshCommand) -> Result<(), CliError> {
    match cmd {
        MeshCommand::Info { file, json } => info(&file, json),
        MeshCommand::Convert { input, output, msh22 } => convert(&input, &output, msh22),
        MeshCommand::Tetrahedralize { input, output, cell, resolution } => {
            use ferrofem_mesh::stuffing::Fineness;
            let fineness = cell.map_or(Fineness::Resolution(resolution.unwrap_or(0)), Fineness::Cell);
            tetrahedralize(&input, &output, fineness)
        }
    }
}

/// Fills a closed surface with tets and writes them, with their quality.
fn tetrahedralize(
    input: &Path,
    output: &Path,
    fineness: ferrofem_mesh::stuffing::Fineness,
) -> Result<(), CliError> {
    if matches!(Format::of(output)?, Format::Obj | Format::Stl) {
        return Err(CliError::Other(format!(
            "{}: write a volume format (.msh, .vtk, .vtu)",
            output.display()
        )));
    }
    let surface = io::read_surface(input)?;
    let started = std::time::Instant::now();
    let mesh = ferrofem_mesh::stuffing::tetrahedralize(&surface, fineness)?;
    let seconds = started.elapsed().as_secs_f64();
    io::write_tet_mesh(output, &mesh)?;
    let q = mesh.quality();
    let enclosed = surface.enclosed_volume().abs();
    eprintln!(
        "wrote {}: {} vertices, {} tets in {seconds:.2} s; volume {:.6e} ({:+.2} % of the surface's), \
         quality min {:.3} mean {:.3}, {} inverted",
        output.display(),
        q.vertices,
        q.tets,
        q.total_volume,
        100.0 * (q.total_volume - enclosed) / enclosed,
        q.min_quality,
        q.mean_quality,
        q.inverted
    );
    Ok(())
}

/// Converts a mesh file; a volume written to a surface format (OBJ, STL)
/// becomes its boundary surface.
fn convert(input: &Path, output: &Path, msh22: bool) -> Result<(), CliError> {
    let mut e = read_noting(input)?;
    let format = Format::of(output)?;
    let surface_of_volume = matches!(format, Format::Obj | Format::Stl) && !e.tets.is_empty();
    if surface_of_volume {
        let b = ferrofem_mesh::TetMesh { vertices: e.vertices.clone(), tets: std::mem::take(&mut e.tets) }
            .boundary();
        e.triangles = b.mesh.triangles.iter().map(|t| t.map(|i| b.volume_vertex[i])).collect();
    }
    let bytes = io::encode_elements(&e, format, msh22)?;
    std::fs::write(output, bytes).map_err(|err| CliError::Io(output.to_path_buf(), err))?;
    let what = if surface_of_volume {
        format!("{} boundary triangles of the volume", e.triangles.len())
    } else {
        format!("{} tets, {} triangles", e.tets.len(), e.triangles.len())
    };
    eprintln!("wrote {}: {} vertices, {what}", output.display(), e.vertices.len());
    Ok(())
}

/// Reads a mesh file, printing what the reader skipped or reduced.
fn read_noting(file: &Path) -> Result<io::Elements, CliError> {
    let e = io::read_elements(file)?;
    for note in &e.notes {
        eprintln!("warning: {}: {note}", file.display());
    }
    Ok(e)
}

fn info(file: &Path, json: bool) -> Result<(), CliError> {
    let e = read_noting(file)?;
    let bbox = ferrofem_mesh::Aabb::of_points(&e.vertices);
    let mut out = serde_json::json!({
        "file": file.display().to_string(),
        "vertices": e.vertices.len(),
        "tets": e.tets.len(),
        "triangles": e.triangles.len(),
        "bounding_box": bbox.map(|b| [b.min, b.max]),
        "notes": e.notes,
    });
    if !e.tets.is_empty() {
        let mesh = ferrofem_mesh::TetMesh { vertices: e.vertices.clone(), tets: e.tets.clone() };
        let q = mesh.quality();
        out["quality"] = serde_json::to_value(q).map_err(|e| CliError::Other(e.to_string()))?;
        let mut checked = mesh.clone();
        out["valid"] = match checked.validate(Default::default()) {
            Ok(()) => serde_json::Value::Bool(true),
            Err(err) => serde_json::Value::String(err.to_string()),
        };
    } else if !e.triangles.is_empty() {
        let s = ferrofem_mesh::TriMesh { vertices: e.vertices, triangles: e.triangles };
        out["area"] = s.total_area().into();
        out["enclosed_volume"] = s.enclosed_volume().into();
    }
    if json {
        println!("{}", serde_json::to_string_pretty(&out).unwrap_or_default());
    } else {
        print_text(&out, "");
    }
    Ok(())
}

/// The fields as `key value` lines, nested keys dotted, values aligned.
fn print_text(v: &serde_json::Value, prefix: &str) {
    let mut lines = Vec::new();
    flatten(v, prefix, &mut lines);
    let width = lines.iter().map(|(k, _)| k.chars().count()).max().unwrap_or(0);
    for (k, x) in lines {
        println!("{k:<width$}  {x}");
    }
}

/// `v`'s leaves with their dotted keys.
fn flatten(v: &serde_json::Value, prefix: &str, out: &mut Vec<(String, String)>) {
    if let serde_json::Value::Object(m) = v {
        for (k, x) in m {
            match x {
                serde_json::Value::Object(_) => flatten(x, &format!("{prefix}{k}."), out),
                _ => out.push((format!("{prefix}{k}"), x.to_string())),
            }
        }
    }
}
