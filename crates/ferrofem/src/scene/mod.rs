//! Scene files (TOML): the format users write, documented in
//! `docs/scene-format.md`. Unknown keys and invalid values are rejected with
//! the key path and a clear message.

mod build;
mod builder;
pub mod builtin;
mod cable;
mod needle;
mod render;
mod schema;
mod spec;
mod validate;

use std::path::{Path, PathBuf};

pub use builder::SceneBuilder;
pub use cable::CableSpec;
pub use needle::NeedleSpec;
pub use render::{Camera, RenderSettings};
pub use schema::schema;
pub use spec::{
    AttachSpec, BodySpec, BoxSpec, FixedSpec, IntegratorKind, MeshSpec, ObstacleSpec, PrescribedSpec, Preset,
    RegionSpec, SceneFile, SimulationSpec, Tetrahedralize, Transform, REAL_TIME_HANDOVER,
    REAL_TIME_PCG_ITERATIONS, REAL_TIME_REFRESH, REAL_TIME_RESIDUAL_CEILING,
};

use crate::{Invalid, SimError, World};

/// A parsed and validated scene, with the folder its relative paths start from.
#[derive(Debug, Clone)]
pub struct Scene {
    /// The file's content.
    pub spec: SceneFile,
    /// Folder relative mesh paths are resolved against.
    pub base_dir: PathBuf,
    /// Label for messages (the file path).
    pub label: String,
}

impl Scene {
    /// Reads and validates a scene file.
    pub fn from_file(path: &Path) -> Result<Scene, SimError> {
        let text = std::fs::read_to_string(path)
            .map_err(|source| SimError::Io { path: path.display().to_string(), source })?;
        let base = path.parent().map(Path::to_path_buf).unwrap_or_default();
        Scene::from_toml(&text, base, &path.display().to_string())
    }

    /// Parses and validates scene text; `label` names it in messages.
    pub fn from_toml(text: &str, base_dir: PathBuf, label: &str) -> Result<Scene, SimError> {
        let spec = parse(text, label, true)?;
        let given =
            || text.parse().map_err(|e: toml::de::Error| scene_error(label, "(file)", &e.to_string()));
        Scene::finish(spec, given, base_dir, label)
    }

    /// Validates a scene given as a table (the same schema and errors as
    /// the file, without line numbers): what a binding builds from its
    /// language's dictionaries. The table goes through its TOML text, so
    /// that one deserializer reads both (serde's code for the scene format
    /// generated once instead of twice).
    pub fn from_table(table: toml::Table, base_dir: PathBuf, label: &str) -> Result<Scene, SimError> {
        let text = toml::to_string(&table).map_err(|e| scene_error(label, "(top level)", &e.to_string()))?;
        let spec = parse(&text, label, false)?;
        Scene::finish(spec, || Ok(table), base_dir, label)
    }

    /// Applies the preset (against the keys the user `given`) and validates.
    fn finish(
        mut spec: SceneFile,
        given: impl FnOnce() -> Result<toml::Table, SimError>,
        base_dir: PathBuf,
        label: &str,
    ) -> Result<Scene, SimError> {
        if let Some(preset) = spec.simulation.preset {
            preset.apply(&mut spec, &given()?);
        }
        Scene::from_spec(spec, base_dir, label)
    }

    /// Validates a scene's structures as they are (a preset already
    /// applied): what [`SceneBuilder`] builds.
    pub fn from_spec(spec: SceneFile, base_dir: PathBuf, label: &str) -> Result<Scene, SimError> {
        spec.validate().map_err(|Invalid { key, message }| SimError::Scene {
            file: label.to_string(),
            key,
            message,
        })?;
        Ok(Scene { spec, base_dir, label: label.to_string() })
    }

    /// Runs the scene's global step on `device` (the command line's
    /// `--device`). On the GPU a local-global scene's global step becomes
    /// the sparse inverse, the method the GPU runs; the note says so when
    /// that changed the scene's choice. Refused, like the key, for
    /// implicit Euler.
    pub fn set_device(&mut self, device: crate::Device) -> Result<Option<String>, SimError> {
        use crate::integrator::local_global::GlobalStepMethod;
        let lg = &mut self.spec.local_global;
        let mut note = None;
        if device == crate::Device::Gpu
            && self.spec.simulation.integrator == IntegratorKind::LocalGlobal
            && !lg.global_step.may_store_s()
        {
            note = Some(format!(
                "device gpu: local_global.global_step \"{}\" becomes \"sparse-inverse\", the method the GPU runs",
                lg.global_step.name()
            ));
            lg.global_step = GlobalStepMethod::SparseInverse;
        }
        self.spec.simulation.device = device;
        self.spec.validate().map_err(|Invalid { key, message }| SimError::Scene {
            file: self.label.clone(),
            key,
            message,
        })?;
        Ok(note)
    }

    /// Builds the world: meshes generated or read and transformed, bodies
    /// and obstacles made, and the integrator the scene names set up. No
    /// compute backend: a scene with `device = "gpu"` is refused (see
    /// [`Self::build_on`]).
    pub fn build(&self) -> Result<World, SimError> {
        build::world(self, None)
    }

    /// As [`Self::build`], with `backend` for the stages that have a device
    /// path when the scene asks for `device = "gpu"` (its adapter is
    /// looked for here; a CPU scene never touches it).
    pub fn build_on(&self, backend: crate::device::SharedBackend) -> Result<World, SimError> {
        build::world(self, Some(backend))
    }

    /// Name of the scene (its `name` key, else the file stem).
    pub fn name(&self) -> String {
        self.spec.simulation.name.clone().unwrap_or_else(|| {
            Path::new(&self.label)
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_else(|| "scene".into())
        })
    }
}

/// A scene's structures from its TOML text; errors name the key path and,
/// with `lines`, the line.
fn parse(text: &str, label: &str, lines: bool) -> Result<SceneFile, SimError> {
    let de = toml::Deserializer::parse(text).map_err(|e| scene_error(label, "(file)", &e.to_string()))?;
    serde_path_to_error::deserialize(de).map_err(|e| {
        let key = top_level(e.path().to_string());
        let inner = e.into_inner();
        let line =
            inner.span().filter(|_| lines).map(|s| 1 + text[..s.start.min(text.len())].matches('\n').count());
        let at = line.map(|l| format!(" (line {l})")).unwrap_or_default();
        SimError::Scene { file: label.to_string(), key, message: format!("{}{at}", flat(inner.message())) }
    })
}

/// A scene error at `key`, its message on one line.
fn scene_error(label: &str, key: &str, message: &str) -> SimError {
    SimError::Scene { file: label.to_string(), key: key.to_string(), message: flat(message) }
}

/// The key path of an error, `(top level)` for the root.
fn top_level(key: String) -> String {
    if key == "." {
        "(top level)".into()
    } else {
        key
    }
}

/// A parser's message on one line, in the scene file's words: where serde
/// names a Rust type (`expected struct variant MeshSpec::File`), the form
/// the file should hold.
fn flat(s: &str) -> String {
    let line = s.split_whitespace().collect::<Vec<_>>().join(" ");
    match line.split_once("expected struct variant MeshSpec::") {
        Some((head, variant)) => {
            let form = match variant.trim() {
                "File" => "{ file = { path = \"mesh.msh\" } }",
                _ => "a table such as { box = { size = [1.0, 1.0, 1.0], cells = [4, 4, 4] } }",
            };
            format!("{head}expected a table: write mesh = {form} (docs/scene-format.md)")
        }
        None => line,
    }
}
