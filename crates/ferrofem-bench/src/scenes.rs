//! The benchmark scenes: files under `benchmarks/scenes/`, embedded so that
//! the binary runs them from any folder; a case edits the parsed scene
//! (mesh, sizes, material, method) rather than formatting TOML.

use std::path::Path;

use ferrofem::scene::{MeshSpec, Scene};

use crate::BenchError;

/// (name, file content) of the templates the cases start from.
const TEMPLATES: [(&str, &str); 11] = [
    ("drop-5k-rt", include_str!("../../../benchmarks/scenes/drop-5k-rt.toml")),
    ("raptor-60k", include_str!("../../../benchmarks/scenes/raptor-60k.toml")),
    ("bench-beam", include_str!("../../../benchmarks/scenes/bench-beam.toml")),
    ("one-step", include_str!("../../../benchmarks/scenes/one-step.toml")),
    ("lg-bar", include_str!("../../../benchmarks/scenes/lg-bar.toml")),
    ("lg-cloth", include_str!("../../../benchmarks/scenes/lg-cloth.toml")),
    ("lg-mesh", include_str!("../../../benchmarks/scenes/lg-mesh.toml")),
    ("lg-beam", include_str!("../../../benchmarks/scenes/lg-beam.toml")),
    ("et-bowling", include_str!("../../../benchmarks/scenes/et-bowling.toml")),
    ("et-spin", include_str!("../../../benchmarks/scenes/et-spin.toml")),
    ("et-snowman", include_str!("../../../benchmarks/scenes/et-snowman.toml")),
];

/// (name, file content) of the scenes under `scenes/external/` the benches
/// run: their meshes are read from the folder given on the command line.
const EXTERNAL: [(&str, &str); 6] = [
    ("hetero-armadillo", include_str!("../../../scenes/external/hetero-armadillo.toml")),
    ("gripper-raptor", include_str!("../../../scenes/external/gripper-raptor.toml")),
    ("grabbing-raptor", include_str!("../../../scenes/external/grabbing-raptor.toml")),
    ("needle-liver", include_str!("../../../scenes/external/needle-liver.toml")),
    ("pulling", include_str!("../../../scenes/external/pulling.toml")),
    ("pulling-bunny", include_str!("../../../scenes/external/pulling-bunny.toml")),
];

/// The scene `scenes/external/<name>.toml` with its shared meshes read from
/// `meshes` (the file names them from the checkout, `../shared/meshes`);
/// `None` when that folder is absent.
pub fn external(name: &str, meshes: &Path) -> Result<Option<Scene>, BenchError> {
    let (_, text) = EXTERNAL
        .iter()
        .find(|(n, _)| *n == name)
        .ok_or_else(|| BenchError::Other(format!("no external scene {name}")))?;
    if !meshes.is_dir() {
        return Ok(None);
    }
    let text = text.replace("../../../shared/meshes/", &format!("{}/", meshes.display()));
    Ok(Some(Scene::from_toml(&text, ".".into(), &format!("scenes/external/{name}.toml"))?))
}

/// The template `benchmarks/scenes/<name>.toml`, parsed and validated.
pub fn template(name: &str) -> Result<Scene, BenchError> {
    let (_, text) = TEMPLATES
        .iter()
        .find(|(n, _)| *n == name)
        .ok_or_else(|| BenchError::Other(format!("no benchmark scene {name}")))?;
    Ok(Scene::from_toml(text, ".".into(), &format!("benchmarks/scenes/{name}.toml"))?)
}

/// A one-body world of `mesh` (Young's modulus `young`, ν = 0.4) after one
/// implicit-Euler step, so that its system matrix `A` is assembled
/// (`benchmarks/scenes/one-step.toml`).
pub fn one_step_world(mesh: &MeshSpec, young: f64) -> Result<ferrofem::World, BenchError> {
    let mut scene = template("one-step")?;
    scene.spec.bodies[0].mesh = mesh.clone();
    scene.spec.bodies[0].material.young = young;
    let mut w = scene.build_on(ferrofem_gpu::backend())?;
    w.step()?;
    Ok(w)
}

/// The system matrix of an implicit-Euler world's first body after a step.
pub(crate) fn system_matrix(world: &ferrofem::World) -> Result<&ferrofem_linalg::CsrMatrix, BenchError> {
    match world.implicit_euler() {
        Some(ie) => Ok(&ie.workspace(0).system),
        None => Err(BenchError::Other("this benchmark times implicit-Euler scenes".into())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_template_parses() {
        for (name, _) in TEMPLATES {
            template(name).unwrap_or_else(|e| panic!("{name}: {e}"));
        }
    }
}
