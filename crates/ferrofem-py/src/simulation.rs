//! `ferrofem.Simulation`: a world built from a scene, stepped with the GIL
//! released, its state read and controlled through NumPy arrays. The
//! state sits behind a lock: a call from another thread while one steps
//! waits for the step (without holding the GIL) instead of failing.

use std::path::PathBuf;
use std::sync::{Mutex, MutexGuard, TryLockError};
use std::time::{Duration, Instant};

use ferrofem::output::FrameWriter;
use ferrofem::scene::{builtin, Scene};
use ferrofem::stats::{Stage, StepStats};
use ferrofem::World;
use nalgebra::{Matrix3, Rotation3, Vector3};
use numpy::{PyArray1, PyArray2};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};

use crate::convert::{guarded, index, indices, matrix3, rows3, rows_of, to_dict, vector3};
use crate::mesh::MeshFiles;
use crate::scene_dict::toml_table;
use crate::SimulationWarning;

/// An obstacle's pose as Python sees it: translation and rotation matrix.
type Pose<'py> = (Bound<'py, PyArray1<f64>>, Bound<'py, PyArray2<f64>>);

/// How often a long `step(n)` looks for Ctrl-C.
const SIGNAL_CHECK: Duration = Duration::from_millis(100);

/// A simulation: the world a scene builds, its state, and the frames
/// written so far. Bodies and obstacles are named by their scene names
/// or their indices.
#[pyclass(name = "Simulation", module = "ferrofem", frozen)]
pub struct Simulation {
    scene: Scene,
    state: Mutex<Inner>,
    /// Files of the `TetMesh` objects the scene dict held.
    _meshes: MeshFiles,
}

/// What a step changes.
pub(crate) struct Inner {
    pub(crate) world: World,
    /// Series written by `write_frame`, by folder.
    writers: Vec<(PathBuf, FrameWriter)>,
    pub(crate) last: Option<StepStats>,
}

/// Builds the world of a scene, for a new simulation or a reset.
fn build(scene: &Scene) -> PyResult<World> {
    guarded(|| scene.build_on(ferrofem_gpu::backend()))
}

impl Simulation {
    fn from_scene(scene: Scene, meshes: MeshFiles) -> PyResult<Simulation> {
        let world = build(&scene)?;
        let state = Mutex::new(Inner { world, writers: Vec::new(), last: None });
        Ok(Simulation { scene, state, _meshes: meshes })
    }

    /// The state, once no other thread steps it: the GIL is released
    /// while waiting, so the stepping thread can look for signals.
    pub(crate) fn lock(&self, py: Python<'_>) -> MutexGuard<'_, Inner> {
        loop {
            match self.state.try_lock() {
                Ok(guard) => return guard,
                Err(TryLockError::Poisoned(p)) => return p.into_inner(),
                Err(TryLockError::WouldBlock) => py.detach(|| std::thread::sleep(Duration::from_millis(1))),
            }
        }
    }
}

impl Inner {
    /// A body given by name or index.
    pub(crate) fn body(&self, body: &Bound<'_, PyAny>) -> PyResult<usize> {
        if let Ok(name) = body.cast::<PyString>() {
            return self.world.body_index(name.to_str()?).map_err(crate::convert::to_py);
        }
        let i: i64 =
            body.extract().map_err(|_| PyValueError::new_err("a body is named by its name or index"))?;
        index(i, "body", self.world.model.bodies.len())
    }

    /// An obstacle given by name or index.
    fn obstacle(&self, obstacle: &Bound<'_, PyAny>) -> PyResult<usize> {
        if let Ok(name) = obstacle.cast::<PyString>() {
            return self.world.obstacle_index(name.to_str()?).map_err(crate::convert::to_py);
        }
        let i: i64 = obstacle
            .extract()
            .map_err(|_| PyValueError::new_err("an obstacle is named by its name or index"))?;
        index(i, "obstacle", self.world.model.obstacles.len())
    }

    /// The contact force (N) on each vertex of body `b` in the last step,
    /// by row (zero before any contact).
    pub(crate) fn contact_forces(&self, b: usize) -> Vec<f64> {
        let forces = &self.world.constraints().problem.bodies[b].forces;
        let n = self.world.model.bodies[b].dofs();
        if forces.len() == n {
            forces.clone()
        } else {
            vec![0.0; n]
        }
    }

    /// Vertex `vertex` of body `b`, checked.
    fn vertex(&self, b: usize, vertex: i64) -> PyResult<usize> {
        index(vertex, "vertex", self.world.model.bodies[b].vertex_count())
    }

    /// `n` steps, looking for signals every [`SIGNAL_CHECK`]: the last
    /// step's stats, the first violation (worded) and the signal's error,
    /// if one came (the steps before it stand).
    fn steps(&mut self, n: usize) -> PyResult<(Option<StepStats>, Option<String>, Option<PyErr>)> {
        let world = &mut self.world;
        guarded(|| {
            let (mut last, mut violation, mut checked) = (None, None, Instant::now());
            for _ in 0..n {
                let s = world.step()?;
                if violation.is_none() {
                    violation = s.violation.as_ref().map(|v| format!("step {}: {v}", s.step));
                }
                last = Some(s);
                if checked.elapsed() >= SIGNAL_CHECK {
                    checked = Instant::now();
                    if let Err(e) = Python::attach(|py| py.check_signals()) {
                        return Ok((last, violation, Some(e)));
                    }
                }
            }
            Ok((last, violation, None))
        })
    }
}

#[pymethods]
impl Simulation {
    /// A simulation from a scene given as a dict, with the schema of the
    /// TOML scene files and the same errors (`ValueError` naming the key).
    /// A body's or obstacle's `mesh` may be a `TetMesh` object. Relative
    /// mesh paths start from `base_dir` (default: the current folder).
    #[staticmethod]
    #[pyo3(signature = (scene, base_dir = None))]
    pub(crate) fn from_dict(scene: &Bound<'_, PyDict>, base_dir: Option<PathBuf>) -> PyResult<Simulation> {
        let mut meshes = MeshFiles::default();
        let table = toml_table(scene, "", &mut meshes)?;
        let base = base_dir.unwrap_or_else(|| PathBuf::from("."));
        Simulation::from_scene(guarded(|| Scene::from_table(table, base, "<dict>"))?, meshes)
    }

    /// A simulation from scene text in TOML.
    #[staticmethod]
    #[pyo3(signature = (text, base_dir = None))]
    fn from_toml(text: &str, base_dir: Option<PathBuf>) -> PyResult<Simulation> {
        let base = base_dir.unwrap_or_else(|| PathBuf::from("."));
        Simulation::from_scene(guarded(|| Scene::from_toml(text, base, "<string>"))?, MeshFiles::default())
    }

    /// Advances `n` steps with the GIL released (other Python threads run
    /// meanwhile) and returns the last step's stats as a dict (the fields
    /// of `docs/stats.md`, with `stage_ms`, the milliseconds per stage).
    /// Ctrl-C is seen within 100 ms and raises `KeyboardInterrupt` between
    /// steps, the simulation usable. A step that is a violation (deep
    /// penetration, inverted elements, an unconverged solve) warns with
    /// `ferrofem.SimulationWarning`. A failed step raises `SimulationError`
    /// naming the step and cause; the state is then that of the failed step.
    #[pyo3(signature = (n = 1))]
    fn step<'py>(&self, py: Python<'py>, n: usize) -> PyResult<Bound<'py, PyAny>> {
        if n == 0 {
            return Err(PyValueError::new_err("step(n): n must be at least 1"));
        }
        let mut inner = self.lock(py);
        let state = &mut *inner;
        let (last, violation, interrupted) = py.detach(|| state.steps(n))?;
        if last.is_some() {
            inner.last = last;
        }
        if let Some(v) = violation {
            let message = std::ffi::CString::new(v).unwrap_or_default();
            PyErr::warn(py, &py.get_type::<SimulationWarning>(), &message, 1)?;
        }
        if let Some(e) = interrupted {
            return Err(e);
        }
        to_dict(py, &inner.last)
    }

    /// Rebuilds the world from the scene: time 0, bodies at rest, steered
    /// obstacles, placed vertices and attachments back as the scene made
    /// them. Frame series already started keep going.
    pub(crate) fn reset(&self, py: Python<'_>) -> PyResult<()> {
        let world = build(&self.scene)?;
        let mut inner = self.lock(py);
        (inner.world, inner.last) = (world, None);
        Ok(())
    }

    /// Simulated time (s).
    #[getter]
    fn time(&self, py: Python<'_>) -> f64 {
        self.lock(py).world.state.time
    }

    /// Steps taken.
    #[getter]
    fn step_count(&self, py: Python<'_>) -> usize {
        self.lock(py).world.state.step
    }

    /// Time step h (s).
    #[getter]
    fn time_step(&self, py: Python<'_>) -> f64 {
        self.lock(py).world.model.time_step
    }

    /// The integrator's name (`implicit-euler` or `local-global`).
    #[getter]
    fn integrator(&self, py: Python<'_>) -> &'static str {
        self.lock(py).world.integrator.name()
    }

    /// The scene's name.
    #[getter]
    fn name(&self) -> String {
        self.scene.name()
    }

    /// Body names, in scene order.
    #[getter]
    fn bodies(&self, py: Python<'_>) -> Vec<String> {
        self.lock(py).world.model.bodies.iter().map(|b| b.name.clone()).collect()
    }

    /// Obstacle names, in scene order.
    #[getter]
    fn obstacles(&self, py: Python<'_>) -> Vec<String> {
        self.lock(py).world.model.obstacles.iter().map(|o| o.name.clone()).collect()
    }

    /// The last step's stats (`None` before the first step).
    #[getter]
    fn last_stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_dict(py, &self.lock(py).last)
    }

    /// Milliseconds per stage of the last step, by stage name.
    #[getter]
    fn stage_times<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let dict = PyDict::new(py);
        let times = self.lock(py).last.as_ref().map(|s| s.stage_ms).unwrap_or_default();
        for stage in Stage::ALL {
            dict.set_item(stage.name(), times.get(stage))?;
        }
        Ok(dict)
    }

    /// Positions of a body's vertices, `(n, 3)` float64 (m): a copy.
    fn positions<'py>(
        &self,
        py: Python<'py>,
        body: &Bound<'_, PyAny>,
    ) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let inner = self.lock(py);
        Ok(rows3(py, inner.world.state.bodies[inner.body(body)?].positions.clone()))
    }

    /// Velocities of a body's vertices, `(n, 3)` float64 (m/s): a copy.
    fn velocities<'py>(
        &self,
        py: Python<'py>,
        body: &Bound<'_, PyAny>,
    ) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let inner = self.lock(py);
        Ok(rows3(py, inner.world.state.bodies[inner.body(body)?].velocities.clone()))
    }

    /// Rest positions of a body's vertices, `(n, 3)` float64 (m).
    fn rest_positions<'py>(
        &self,
        py: Python<'py>,
        body: &Bound<'_, PyAny>,
    ) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let inner = self.lock(py);
        Ok(rows3(py, inner.world.model.bodies[inner.body(body)?].rest_positions()))
    }

    /// A body's surface triangles (vertex indices into `positions`), `(k, 3)` int64.
    fn surface<'py>(&self, py: Python<'py>, body: &Bound<'_, PyAny>) -> PyResult<Bound<'py, PyArray2<i64>>> {
        let inner = self.lock(py);
        let body = &inner.world.model.bodies[inner.body(body)?];
        let s = &body.surface;
        let flat: Vec<i64> =
            s.mesh.triangles.as_flattened().iter().map(|&i| s.volume_vertex[i] as i64).collect();
        let a = numpy::ndarray::Array2::from_shape_vec((flat.len() / 3, 3), flat).expect("3 per triangle");
        Ok(numpy::IntoPyArray::into_pyarray(a, py))
    }

    /// A body's vertex masses, `(n,)` float64 (kg).
    fn masses<'py>(&self, py: Python<'py>, body: &Bound<'_, PyAny>) -> PyResult<Bound<'py, PyArray1<f64>>> {
        let inner = self.lock(py);
        Ok(PyArray1::from_slice(py, &inner.world.model.bodies[inner.body(body)?].mass))
    }

    /// Sets the velocities (m/s) of a body's free vertices from an `(n, 3)`
    /// array; kinematic vertices keep following their targets.
    fn set_velocities(
        &self,
        py: Python<'_>,
        body: &Bound<'_, PyAny>,
        velocities: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        let rows = rows_of::<f64, 3>(velocities, "velocities")?;
        let mut inner = self.lock(py);
        let b = inner.body(body)?;
        guarded(|| inner.world.set_velocities(b, rows.as_flattened()))
    }

    /// The contact force (N) on each vertex of a body in the last step, `(n, 3)`.
    fn contact_forces<'py>(
        &self,
        py: Python<'py>,
        body: &Bound<'_, PyAny>,
    ) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let inner = self.lock(py);
        Ok(rows3(py, inner.contact_forces(inner.body(body)?)))
    }

    /// A body's resultants, `(3, 3)` by rows: its vertices' mean position
    /// (m) and mean velocity (m/s), and the sum of the contact forces on
    /// them in the last step (N). One call for what an environment observes.
    fn resultants<'py>(
        &self,
        py: Python<'py>,
        body: &Bound<'_, PyAny>,
    ) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let inner = self.lock(py);
        let b = inner.body(body)?;
        let state = &inner.world.state.bodies[b];
        let mean = |values: &[f64]| {
            let n = (values.len() / 3).max(1) as f64;
            let sum = values.chunks_exact(3).fold([0.0; 3], |s, v| [s[0] + v[0], s[1] + v[1], s[2] + v[2]]);
            sum.map(|x| x / n)
        };
        let forces = inner.contact_forces(b);
        let n = forces.len() as f64 / 3.0;
        let total = mean(&forces).map(|x| x * n);
        let rows = [mean(&state.positions), mean(&state.velocities), total];
        Ok(rows3(py, rows.as_flattened().to_vec()))
    }

    /// The last step's constraint groups (contacts and attachments), one
    /// row each: a dict of arrays `points` (m), `normals`, `forces` (N, on
    /// `body`), `body` (int) and `attachment` (bool).
    fn contacts<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let c = self.lock(py).world.constraint_points();
        let dict = PyDict::new(py);
        dict.set_item("points", rows3(py, c.points.as_flattened().to_vec()))?;
        dict.set_item("normals", rows3(py, c.normals.as_flattened().to_vec()))?;
        dict.set_item("forces", rows3(py, c.forces.as_flattened().to_vec()))?;
        let bodies: Vec<i64> = c.bodies.iter().map(|&b| b as i64).collect();
        dict.set_item("body", PyArray1::from_vec(py, bodies))?;
        dict.set_item("attachment", PyArray1::from_vec(py, c.attachment))?;
        Ok(dict)
    }

    /// Moves an obstacle from its current pose to `translation` (m) and
    /// `rotation` (a 3×3 rotation matrix; default: unchanged) over the next
    /// step, at constant velocity, and holds it there: bodies it meets are
    /// pushed with that velocity, not teleported through.
    #[pyo3(signature = (obstacle, translation, rotation = None))]
    fn set_obstacle_pose(
        &self,
        py: Python<'_>,
        obstacle: &Bound<'_, PyAny>,
        translation: &Bound<'_, PyAny>,
        rotation: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        let translation = vector3(translation, "translation")?;
        let rotation = rotation.map(|r| matrix3(r, "rotation").and_then(|r| rotation_of(&r))).transpose()?;
        let mut inner = self.lock(py);
        let o = inner.obstacle(obstacle)?;
        let t = inner.world.state.time;
        let r = rotation.unwrap_or_else(|| inner.world.model.obstacles[o].pose(t).0);
        guarded(|| inner.world.set_obstacle_pose(o, r, Vector3::from(translation)))
    }

    /// The pose of an obstacle now: `(translation, rotation)` as a 3-vector
    /// and a 3×3 matrix.
    fn obstacle_pose<'py>(&self, py: Python<'py>, obstacle: &Bound<'_, PyAny>) -> PyResult<Pose<'py>> {
        let inner = self.lock(py);
        let o = inner.obstacle(obstacle)?;
        let (r, c) = inner.world.model.obstacles[o].pose(inner.world.state.time);
        let m = r.matrix();
        let rows: Vec<f64> = (0..3).flat_map(|i| (0..3).map(move |j| m[(i, j)])).collect();
        Ok((PyArray1::from_slice(py, c.as_slice()), rows3(py, rows)))
    }

    /// Places kinematic vertices (those the scene made `fixed` or
    /// `prescribed`): vertex `vertex_ids[i]` reaches `targets[i]` (m) at
    /// the end of the next step and stays there until placed again.
    fn set_prescribed(
        &self,
        py: Python<'_>,
        body: &Bound<'_, PyAny>,
        vertex_ids: &Bound<'_, PyAny>,
        targets: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        let targets = rows_of::<f64, 3>(targets, "targets")?;
        let mut inner = self.lock(py);
        let b = inner.body(body)?;
        let ids = indices(vertex_ids, "vertex_ids", inner.world.model.bodies[b].vertex_count())?;
        guarded(|| inner.world.set_prescribed(b, &ids, &targets))
    }

    /// Attaches a vertex to a target point (m) by a bilateral constraint,
    /// reached at the end of the next step; calling it again moves the
    /// target (a grab). Works under both integrators.
    fn attach(
        &self,
        py: Python<'_>,
        body: &Bound<'_, PyAny>,
        vertex: i64,
        target: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        let target = vector3(target, "target")?;
        let mut inner = self.lock(py);
        let b = inner.body(body)?;
        let v = inner.vertex(b, vertex)?;
        guarded(|| inner.world.attach(b, v, target))
    }

    /// Removes a vertex's attachments; returns whether it had any.
    fn detach(&self, py: Python<'_>, body: &Bound<'_, PyAny>, vertex: i64) -> PyResult<bool> {
        let mut inner = self.lock(py);
        let b = inner.body(body)?;
        let v = inner.vertex(b, vertex)?;
        guarded(|| inner.world.detach(b, v))
    }

    /// The force (N) each attachment of a body applied on its vertex in
    /// the last step, as a dict `vertex -> (fx, fy, fz)`.
    fn attachment_forces(
        &self,
        py: Python<'_>,
        body: &Bound<'_, PyAny>,
    ) -> PyResult<std::collections::BTreeMap<usize, [f64; 3]>> {
        let inner = self.lock(py);
        let b = inner.body(body)?;
        Ok(inner.world.attachment_forces(b).into_iter().collect())
    }

    /// Writes the current state as the next frame of the ParaView series
    /// in `directory` (one `.vtu` per body plus `.pvd` series, as
    /// `ferrofem run` writes them); returns the `.pvd` paths.
    fn write_frame(&self, py: Python<'_>, directory: PathBuf) -> PyResult<Vec<PathBuf>> {
        let mut inner = self.lock(py);
        let Inner { world, writers, .. } = &mut *inner;
        let index = match writers.iter().position(|(d, _)| d == &directory) {
            Some(i) => i,
            None => {
                let writer = guarded(|| FrameWriter::new(&directory, world))?;
                writers.push((directory, writer));
                writers.len() - 1
            }
        };
        let writer = &mut writers[index].1;
        guarded(|| writer.write(world))?;
        Ok(writer.series_paths())
    }

    fn __repr__(&self, py: Python<'_>) -> String {
        let inner = self.lock(py);
        let m = &inner.world.model;
        format!(
            "Simulation({:?}: {} bodies, {} obstacles, {}, h = {} s, t = {} s)",
            self.scene.name(),
            m.bodies.len(),
            m.obstacles.len(),
            inner.world.integrator.name(),
            m.time_step,
            inner.world.state.time
        )
    }
}

/// A rotation from a 3×3 matrix, refused unless orthonormal with
/// determinant 1 (to 1e-6).
fn rotation_of(rows: &[[f64; 3]; 3]) -> PyResult<Rotation3<f64>> {
    let refuse =
        || PyValueError::new_err("rotation: a 3×3 rotation matrix is expected (orthonormal, determinant 1)");
    let m = Matrix3::from_fn(|i, j| rows[i][j]);
    let err = (m.transpose() * m - Matrix3::identity()).abs().max();
    if !m.iter().all(|x| x.is_finite()) || err > 1e-6 || m.determinant() < 0.0 {
        return Err(refuse());
    }
    Ok(Rotation3::from_matrix_unchecked(m))
}

/// Loads a scene: a TOML file's path, or the name of a built-in scene
/// (`ferrofem.builtin_scenes()` lists them).
#[pyfunction]
pub fn load_scene(scene: &Bound<'_, PyAny>) -> PyResult<Simulation> {
    let arg: PathBuf = scene.extract()?;
    let text = arg.to_string_lossy().into_owned();
    Simulation::from_scene(guarded(|| builtin::load(&text))?, MeshFiles::default())
}

/// The built-in scenes: name → the first sentence of its description.
#[pyfunction]
pub fn builtin_scenes() -> std::collections::BTreeMap<&'static str, String> {
    builtin::list().collect()
}
