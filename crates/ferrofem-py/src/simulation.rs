//! `ferrofem.Simulation`: a world built from a scene, stepped with the GIL
//! released, its state read and controlled through NumPy arrays.

use std::path::PathBuf;

use ferrofem::output::FrameWriter;
use ferrofem::scene::{builtin, Scene};
use ferrofem::stats::{Stage, StepStats};
use ferrofem::World;
use nalgebra::{Matrix3, Rotation3, Vector3};
use numpy::{AllowTypeChange, PyArray1, PyArray2, PyArrayLike1, PyArrayLike2};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};

use crate::convert::{guarded, rows3, rows_of, to_dict};
use crate::mesh::MeshFiles;
use crate::scene_dict::toml_table;

/// An obstacle's pose as Python sees it: translation and rotation matrix.
type Pose<'py> = (Bound<'py, PyArray1<f64>>, Bound<'py, PyArray2<f64>>);

/// A simulation: the world a scene builds, its state, and the frames
/// written so far. Bodies and obstacles are named by their scene names
/// or their indices.
#[pyclass(name = "Simulation", module = "ferrofem")]
pub struct Simulation {
    scene: Scene,
    world: World,
    /// Series written by `write_frame`, by folder.
    writers: Vec<(PathBuf, FrameWriter)>,
    last: Option<StepStats>,
    /// Files of the `TetMesh` objects the scene dict held.
    _meshes: MeshFiles,
}

/// Builds the world of a scene, for a new simulation or a reset.
fn build(scene: &Scene) -> PyResult<World> {
    guarded(|| scene.build_on(ferrofem_gpu::backend()))
}

impl Simulation {
    fn from_scene(scene: Scene, meshes: MeshFiles) -> PyResult<Simulation> {
        let world = build(&scene)?;
        Ok(Simulation { scene, world, writers: Vec::new(), last: None, _meshes: meshes })
    }

    /// A body given by name or index.
    fn body(&self, body: &Bound<'_, PyAny>) -> PyResult<usize> {
        if let Ok(name) = body.cast::<PyString>() {
            return self.world.body_index(name.to_str()?).map_err(crate::convert::to_py);
        }
        let i: usize =
            body.extract().map_err(|_| PyValueError::new_err("a body is named by its name or index"))?;
        self.world.check_body(i).map_err(crate::convert::to_py)?;
        Ok(i)
    }

    /// An obstacle given by name or index.
    fn obstacle(&self, obstacle: &Bound<'_, PyAny>) -> PyResult<usize> {
        if let Ok(name) = obstacle.cast::<PyString>() {
            return self.world.obstacle_index(name.to_str()?).map_err(crate::convert::to_py);
        }
        obstacle.extract().map_err(|_| PyValueError::new_err("an obstacle is named by its name or index"))
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
    fn from_dict(scene: &Bound<'_, PyDict>, base_dir: Option<PathBuf>) -> PyResult<Simulation> {
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
    /// A failed step raises `SimulationError` naming the step and cause;
    /// the state is then that of the failed step.
    #[pyo3(signature = (n = 1))]
    fn step<'py>(&mut self, py: Python<'py>, n: usize) -> PyResult<Bound<'py, PyAny>> {
        if n == 0 {
            return Err(PyValueError::new_err("step(n): n must be at least 1"));
        }
        let world = &mut self.world;
        let last = py.detach(|| {
            guarded(|| {
                let mut last = None;
                for _ in 0..n {
                    last = Some(world.step()?);
                }
                Ok(last)
            })
        })?;
        self.last = last;
        to_dict(py, &self.last)
    }

    /// Rebuilds the world from the scene: time 0, bodies at rest, steered
    /// obstacles, placed vertices and attachments back as the scene made
    /// them. Frame series already started keep going.
    fn reset(&mut self) -> PyResult<()> {
        self.world = build(&self.scene)?;
        self.last = None;
        Ok(())
    }

    /// Simulated time (s).
    #[getter]
    fn time(&self) -> f64 {
        self.world.state.time
    }

    /// Steps taken.
    #[getter]
    fn step_count(&self) -> usize {
        self.world.state.step
    }

    /// Time step h (s).
    #[getter]
    fn time_step(&self) -> f64 {
        self.world.model.time_step
    }

    /// The integrator's name (`implicit-euler` or `local-global`).
    #[getter]
    fn integrator(&self) -> &'static str {
        self.world.integrator.name()
    }

    /// The scene's name.
    #[getter]
    fn name(&self) -> String {
        self.scene.name()
    }

    /// Body names, in scene order.
    #[getter]
    fn bodies(&self) -> Vec<String> {
        self.world.model.bodies.iter().map(|b| b.name.clone()).collect()
    }

    /// Obstacle names, in scene order.
    #[getter]
    fn obstacles(&self) -> Vec<String> {
        self.world.model.obstacles.iter().map(|o| o.name.clone()).collect()
    }

    /// The last step's stats (`None` before the first step).
    #[getter]
    fn last_stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_dict(py, &self.last)
    }

    /// Milliseconds per stage of the last step, by stage name.
    #[getter]
    fn stage_times<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let dict = PyDict::new(py);
        let times = self.last.as_ref().map(|s| s.stage_ms).unwrap_or_default();
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
        Ok(rows3(py, self.world.state.bodies[self.body(body)?].positions.clone()))
    }

    /// Velocities of a body's vertices, `(n, 3)` float64 (m/s): a copy.
    fn velocities<'py>(
        &self,
        py: Python<'py>,
        body: &Bound<'_, PyAny>,
    ) -> PyResult<Bound<'py, PyArray2<f64>>> {
        Ok(rows3(py, self.world.state.bodies[self.body(body)?].velocities.clone()))
    }

    /// Rest positions of a body's vertices, `(n, 3)` float64 (m).
    fn rest_positions<'py>(
        &self,
        py: Python<'py>,
        body: &Bound<'_, PyAny>,
    ) -> PyResult<Bound<'py, PyArray2<f64>>> {
        Ok(rows3(py, self.world.model.bodies[self.body(body)?].rest_positions()))
    }

    /// A body's surface triangles (vertex indices into `positions`), `(k, 3)` int64.
    fn surface<'py>(&self, py: Python<'py>, body: &Bound<'_, PyAny>) -> PyResult<Bound<'py, PyArray2<i64>>> {
        let body = &self.world.model.bodies[self.body(body)?];
        let s = &body.surface;
        let flat: Vec<i64> =
            s.mesh.triangles.as_flattened().iter().map(|&i| s.volume_vertex[i] as i64).collect();
        let a = numpy::ndarray::Array2::from_shape_vec((flat.len() / 3, 3), flat).expect("3 per triangle");
        Ok(numpy::IntoPyArray::into_pyarray(a, py))
    }

    /// A body's vertex masses, `(n,)` float64 (kg).
    fn masses<'py>(&self, py: Python<'py>, body: &Bound<'_, PyAny>) -> PyResult<Bound<'py, PyArray1<f64>>> {
        Ok(PyArray1::from_slice(py, &self.world.model.bodies[self.body(body)?].mass))
    }

    /// Sets the velocities (m/s) of a body's free vertices from an `(n, 3)`
    /// array; kinematic vertices keep following their targets.
    fn set_velocities(
        &mut self,
        body: &Bound<'_, PyAny>,
        velocities: PyArrayLike2<'_, f64, AllowTypeChange>,
    ) -> PyResult<()> {
        let b = self.body(body)?;
        let rows = rows_of::<f64, 3>(&velocities, "velocities")?;
        guarded(|| self.world.set_velocities(b, rows.as_flattened()))
    }

    /// The contact force (N) on each vertex of a body in the last step, `(n, 3)`.
    fn contact_forces<'py>(
        &self,
        py: Python<'py>,
        body: &Bound<'_, PyAny>,
    ) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let b = self.body(body)?;
        let forces = &self.world.constraints().problem.bodies[b].forces;
        let n = self.world.model.bodies[b].dofs();
        Ok(rows3(py, if forces.len() == n { forces.clone() } else { vec![0.0; n] }))
    }

    /// The last step's constraint groups (contacts and attachments), one
    /// row each: a dict of arrays `points` (m), `normals`, `forces` (N, on
    /// `body`), `body` (int) and `attachment` (bool).
    fn contacts<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let c = self.world.constraint_points();
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
        &mut self,
        obstacle: &Bound<'_, PyAny>,
        translation: [f64; 3],
        rotation: Option<PyArrayLike2<'_, f64, AllowTypeChange>>,
    ) -> PyResult<()> {
        let o = self.obstacle(obstacle)?;
        let t = self.world.state.time;
        let current =
            self.world.model.obstacles.get(o).map(|ob| ob.pose(t).0).unwrap_or_else(Rotation3::identity);
        let r = match rotation {
            None => current,
            Some(r) => rotation_of(&rows_of::<f64, 3>(&r, "rotation")?)?,
        };
        guarded(|| self.world.set_obstacle_pose(o, r, Vector3::from(translation)))
    }

    /// The pose of an obstacle now: `(translation, rotation)` as a 3-vector
    /// and a 3×3 matrix.
    fn obstacle_pose<'py>(&self, py: Python<'py>, obstacle: &Bound<'_, PyAny>) -> PyResult<Pose<'py>> {
        let o = self.obstacle(obstacle)?;
        let ob = self
            .world
            .model
            .obstacles
            .get(o)
            .ok_or_else(|| PyValueError::new_err(format!("obstacle index {o} out of range")))?;
        let (r, c) = ob.pose(self.world.state.time);
        let m = r.matrix();
        let rows: Vec<f64> = (0..3).flat_map(|i| (0..3).map(move |j| m[(i, j)])).collect();
        Ok((PyArray1::from_slice(py, c.as_slice()), rows3(py, rows)))
    }

    /// Places kinematic vertices (those the scene made `fixed` or
    /// `prescribed`): vertex `vertex_ids[i]` reaches `targets[i]` (m) at
    /// the end of the next step and stays there until placed again.
    fn set_prescribed(
        &mut self,
        body: &Bound<'_, PyAny>,
        vertex_ids: PyArrayLike1<'_, i64, AllowTypeChange>,
        targets: PyArrayLike2<'_, f64, AllowTypeChange>,
    ) -> PyResult<()> {
        let b = self.body(body)?;
        let ids = indices(&vertex_ids)?;
        let targets = rows_of::<f64, 3>(&targets, "targets")?;
        guarded(|| self.world.set_prescribed(b, &ids, &targets))
    }

    /// Attaches a vertex to a target point (m) by a bilateral constraint,
    /// reached at the end of the next step; calling it again moves the
    /// target (a grab). Works under both integrators.
    fn attach(&mut self, body: &Bound<'_, PyAny>, vertex: usize, target: [f64; 3]) -> PyResult<()> {
        let b = self.body(body)?;
        guarded(|| self.world.attach(b, vertex, target))
    }

    /// Removes a vertex's attachments; returns whether it had any.
    fn detach(&mut self, body: &Bound<'_, PyAny>, vertex: usize) -> PyResult<bool> {
        let b = self.body(body)?;
        guarded(|| self.world.detach(b, vertex))
    }

    /// The force (N) each attachment of a body applied on its vertex in
    /// the last step, as a dict `vertex -> (fx, fy, fz)`.
    fn attachment_forces(
        &self,
        body: &Bound<'_, PyAny>,
    ) -> PyResult<std::collections::BTreeMap<usize, [f64; 3]>> {
        let b = self.body(body)?;
        Ok(self.world.attachment_forces(b).into_iter().collect())
    }

    /// Writes the current state as the next frame of the ParaView series
    /// in `directory` (one `.vtu` per body plus `.pvd` series, as
    /// `ferrofem run` writes them); returns the `.pvd` paths.
    fn write_frame(&mut self, directory: PathBuf) -> PyResult<Vec<PathBuf>> {
        let world = &self.world;
        let index = match self.writers.iter().position(|(d, _)| d == &directory) {
            Some(i) => i,
            None => {
                let writer = guarded(|| FrameWriter::new(&directory, world))?;
                self.writers.push((directory, writer));
                self.writers.len() - 1
            }
        };
        let writer = &mut self.writers[index].1;
        guarded(|| writer.write(world))?;
        Ok(writer.series_paths())
    }

    fn __repr__(&self) -> String {
        let m = &self.world.model;
        format!(
            "Simulation({:?}: {} bodies, {} obstacles, {}, h = {} s, t = {} s)",
            self.scene.name(),
            m.bodies.len(),
            m.obstacles.len(),
            self.world.integrator.name(),
            m.time_step,
            self.world.state.time
        )
    }
}

/// Vertex indices from an array of integers (none negative).
fn indices(ids: &PyArrayLike1<'_, i64, AllowTypeChange>) -> PyResult<Vec<usize>> {
    ids.as_array()
        .iter()
        .map(|&i| {
            usize::try_from(i).map_err(|_| PyValueError::new_err(format!("vertex_ids: negative index {i}")))
        })
        .collect()
}

/// A rotation from a 3×3 matrix, refused unless orthonormal with
/// determinant 1 (to 1e-6).
fn rotation_of(rows: &[[f64; 3]]) -> PyResult<Rotation3<f64>> {
    let refuse =
        || PyValueError::new_err("rotation: a 3×3 rotation matrix is expected (orthonormal, determinant 1)");
    if rows.len() != 3 {
        return Err(refuse());
    }
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

/// The built-in scenes: name → the first line of its description.
#[pyfunction]
pub fn builtin_scenes() -> std::collections::BTreeMap<&'static str, &'static str> {
    builtin::list().collect()
}
