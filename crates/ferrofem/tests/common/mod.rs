//! Helpers shared by the integration tests: scene builders and comparisons.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use ferrofem::integrator::implicit_euler::BodyWorkspace;
use ferrofem::integrator::{ImplicitEulerSettings, LocalGlobal};
use ferrofem::scene::Scene;
use ferrofem::World;

/// The built-in scenes' folder.
pub fn scenes_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenes")
}

/// `../shared/meshes` beside the checkout, when present.
pub fn shared_meshes() -> Option<PathBuf> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/meshes");
    p.exists().then_some(p)
}

/// A world from scene text (relative paths from the current folder).
pub fn world(text: &str) -> World {
    Scene::from_toml(text, ".".into(), "test")
        .unwrap_or_else(|e| panic!("{e}"))
        .build()
        .unwrap_or_else(|e| panic!("{e}"))
}

/// A built-in scene by name, edited by `edit` before it is built.
pub fn builtin(name: &str, edit: impl FnOnce(&mut Scene)) -> World {
    let mut s = Scene::from_file(&scenes_dir().join(format!("{name}.toml"))).unwrap();
    edit(&mut s);
    s.build().unwrap()
}

/// Body `b`'s implicit-Euler workspace.
pub fn workspace(w: &World, b: usize) -> &BodyWorkspace {
    w.implicit_euler().expect("an implicit-Euler world").workspace(b)
}

/// The implicit-Euler settings, to change between steps.
pub fn settings(w: &mut World) -> &mut ImplicitEulerSettings {
    &mut w.implicit_euler_mut().expect("an implicit-Euler world").settings
}

/// The local-global integrator of a world.
pub fn local_global(w: &World) -> &LocalGlobal {
    w.local_global().expect("a local-global world")
}

#[allow(unused_imports)]
pub use ferrofem_linalg::vector::{max_diff, rel_max_diff as rel_diff};
