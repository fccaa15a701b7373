//! Helpers shared by the integration tests: scene builders and comparisons.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use ferrofem::integrator::implicit_euler::BodyWorkspace;
use ferrofem::integrator::{ImplicitEulerSettings, LocalGlobal};
use ferrofem::scene::Scene;
use ferrofem::World;

/// Runs `test` on a pool of its own with `workers` threads (rayon's
/// `install`): its parallel loops run there, not on the global pool that
/// the tests running beside it share.
pub fn workers<R: Send>(workers: usize, test: impl FnOnce() -> R + Send) -> R {
    rayon::ThreadPoolBuilder::new().num_threads(workers).build().expect("a test's pool").install(test)
}

/// Runs `test` on one worker of its own: the integration tests run side
/// by side, one per core, each of them serial. Two tests on a shared pool
/// of two workers ran the physics binary in 201 s (377 s of CPU) on two
/// cores, one worker each in 118 s (235 s of CPU): a test's parallel loops
/// gained it 15 % (the serial sum 229 against 268 s) for 30 % more CPU.
/// Their parallel paths are run by the tests that give a world more
/// workers and check that the results do not depend on them.
pub fn one_worker<R: Send>(test: impl FnOnce() -> R + Send) -> R {
    workers(1, test)
}

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
