//! The GPU backend's tests: each kernel against its CPU counterpart, the
//! device Newton against the CPU solver, and whole runs with the device
//! stages against the CPU's. Without an adapter a test says so and
//! passes, unless `FERROFEM_GPU_TESTS=required` (CI, which installs
//! Mesa's lavapipe) makes a missing adapter a failure.

use std::sync::Arc;

use ferrofem::scene::Scene;
use ferrofem::World;
use ferrofem_gpu::Gpu;

#[path = "../../../ferrofem/tests/common/mod.rs"]
mod common;
mod kernels;
mod newton;
mod runs;

/// The device, or `None` (test not run) where none is required. A run
/// without one says so on the terminal, past the test harness's capture,
/// so that passing tests are not mistaken for GPU tests that ran.
fn gpu() -> Option<Arc<Gpu>> {
    match Gpu::shared() {
        Ok(g) => Some(g),
        Err(e) if std::env::var("FERROFEM_GPU_TESTS").as_deref() == Ok("required") => panic!("{e}"),
        Err(e) => {
            static SAID: std::sync::Once = std::sync::Once::new();
            SAID.call_once(|| {
                use std::io::Write;
                let line = format!(
                    "\nGPU TESTS NOT RUN: {e}. They pass without checking anything; install a Vulkan \
                     driver (Mesa's lavapipe: mesa-vulkan-drivers) or set FERROFEM_GPU_TESTS=required \
                     to make this a failure.\n"
                );
                let _ = std::io::stderr().write_all(line.as_bytes());
            });
            None
        }
    }
}

/// The twisting bar at 14×7×7 cells (960 vertices, its scene's has
/// 26×13×13) and the hanging cloth at 20×20 (441, against 40×40): lavapipe
/// runs the device's kernels on the CPU, a frame of the scenes' own sizes
/// in seconds. Other scenes are left as they are, and so are these two in
/// `full_size_runs_agree_with_the_cpu_after_30_frames`.
fn lavapipe_sized(s: &mut Scene) {
    use ferrofem::scene::MeshSpec;
    let mesh = &mut s.spec.bodies[0].mesh;
    match (s.spec.simulation.name.as_deref(), mesh) {
        (Some("twisting-bar-lg"), MeshSpec::Box { cells, .. }) => *cells = [14, 7, 7],
        (Some("hanging-cloth"), MeshSpec::Sheet { cells, .. }) => *cells = [20, 20],
        _ => {}
    }
}

/// A built-in scene by name, edited by `edit`, built on the GPU backend.
fn builtin_on(name: &str, edit: impl FnOnce(&mut Scene)) -> World {
    let mut s = Scene::from_file(&common::scenes_dir().join(format!("{name}.toml"))).unwrap();
    edit(&mut s);
    s.build_on(ferrofem_gpu::backend()).unwrap()
}
