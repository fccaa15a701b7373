//! From a validated scene to a [`World`].

use std::sync::Arc;

use super::spec::{BodySpec, BoxSpec, MeshSpec, ObstacleSpec};
use super::Scene;
use crate::body::{BodyModel, Kinematic};
use crate::integrator::local_global::{LocalGlobalBody, LocalGlobalModel, LocalGlobalWorld, Shape};
use crate::obstacle::{Geometry, MeshGeometry, Obstacle};
use crate::{Model, SimError, World};
use ferrofem_mesh::{generate, io, Aabb, MeshError, TetMesh, TriMesh, ValidationOptions};

pub(super) fn world(scene: &Scene) -> Result<World, SimError> {
    let spec = &scene.spec;
    let bodies =
        spec.bodies.iter().enumerate().map(|(i, b)| body(scene, b, i)).collect::<Result<Vec<_>, _>>()?;
    let obstacles = spec
        .obstacles
        .iter()
        .enumerate()
        .map(|(i, o)| obstacle(scene, o, i))
        .collect::<Result<Vec<_>, _>>()?;
    let model = Model {
        bodies,
        gravity: spec.simulation.gravity,
        time_step: spec.simulation.time_step,
        integrator: spec.implicit_euler,
        obstacles,
        contact: spec.contact,
    };
    let mut world = World::new(model);
    for (b, s) in spec.bodies.iter().zip(&mut world.state.bodies) {
        s.velocities.chunks_exact_mut(3).for_each(|v| v.copy_from_slice(&b.initial_velocity));
    }
    Ok(world)
}

fn obstacle(scene: &Scene, spec: &ObstacleSpec, index: usize) -> Result<Obstacle, SimError> {
    let geometry = match (&spec.shape, &spec.mesh) {
        (Some(shape), _) => Geometry::Analytic(*shape),
        (None, Some(mesh)) => {
            let err = |m: String| scene_err(scene, format!("obstacle[{index}].mesh"), m);
            let mut surface = obstacle_surface(scene, mesh).map_err(|e| err(e.to_string()))?;
            let scale = spec.transform.scale;
            surface.vertices.iter_mut().flatten().for_each(|x| *x *= scale);
            Geometry::Mesh(Arc::new(MeshGeometry::new(&surface).map_err(err)?))
        }
        (None, None) => unreachable!("validated: a shape or a mesh"),
    };
    Ok(Obstacle {
        name: spec.name.clone(),
        geometry,
        rotation: spec.transform.rotation(),
        translation: spec.transform.translation.into(),
        friction: spec.friction,
        motion: spec.motion.clone(),
    })
}

/// A mesh obstacle's surface: a generated solid's boundary, a file's
/// triangles, or a volume file's boundary.
fn obstacle_surface(scene: &Scene, mesh: &MeshSpec) -> Result<TriMesh, MeshError> {
    let MeshSpec::File { path } = mesh else {
        return Ok(volume_mesh(scene, mesh, false)?.boundary().mesh);
    };
    let path = scene.base_dir.join(path);
    let e = io::read_elements(&path)?;
    if e.tets.is_empty() {
        return io::read_tri_mesh(&path);
    }
    let mut m = TetMesh { vertices: e.vertices, tets: e.tets };
    m.remove_unused_vertices();
    m.validate(ValidationOptions { reorient_inverted: true, ..Default::default() })?;
    Ok(m.boundary().mesh)
}

fn scene_err(scene: &Scene, key: String, message: String) -> SimError {
    SimError::Scene { file: scene.label.clone(), key, message }
}

fn body(scene: &Scene, spec: &BodySpec, index: usize) -> Result<BodyModel, SimError> {
    let key = format!("body[{index}]");
    let mut mesh = tet_mesh(scene, spec)?;
    transform(&mut mesh, spec);
    let mut materials = vec![spec.material; mesh.tets.len()];
    for (r, reg) in spec.regions.iter().enumerate() {
        let k = format!("{key}.region[{r}]");
        let tets = select(&mesh, reg.bbox.as_ref(), reg.elements.as_deref(), true)
            .map_err(|m| scene_err(scene, k, m))?;
        tets.into_iter().for_each(|e| materials[e] = reg.material);
    }
    let mut kinematic = vec![None; mesh.vertices.len()];
    for (r, f) in spec.fixed.iter().enumerate() {
        let verts = select(&mesh, f.bbox.as_ref(), f.vertices.as_deref(), false)
            .map_err(|m| scene_err(scene, format!("{key}.fixed[{r}]"), m))?;
        verts.into_iter().for_each(|v| kinematic[v] = Some(Kinematic::Fixed));
    }
    for (r, p) in spec.prescribed.iter().enumerate() {
        let verts = select(&mesh, p.bbox.as_ref(), p.vertices.as_deref(), false)
            .map_err(|m| scene_err(scene, format!("{key}.prescribed[{r}]"), m))?;
        verts.into_iter().for_each(|v| kinematic[v] = Some(Kinematic::Moving(p.motion)));
    }
    let mut attachments = Vec::new();
    for (r, a) in spec.attach.iter().enumerate() {
        let verts = select(&mesh, a.bbox.as_ref(), a.vertices.as_deref(), false)
            .map_err(|m| scene_err(scene, format!("{key}.attach[{r}]"), m))?;
        let target = a.motion.map_or(Kinematic::Fixed, Kinematic::Moving);
        attachments.extend(verts.into_iter().map(|v| (v, target)));
    }
    let mut body = BodyModel::new(spec.name.clone(), mesh, materials, spec.damping, kinematic)?;
    body.attachments = attachments;
    body.self_collision = spec.self_collision;
    Ok(body)
}

/// The body's volume mesh, generated or read.
fn tet_mesh(scene: &Scene, spec: &BodySpec) -> Result<TetMesh, SimError> {
    if matches!(spec.mesh, MeshSpec::Sheet { .. }) {
        return Err(SimError::Body {
            body: spec.name.clone(),
            message: "a sheet is a membrane, not a volume mesh".into(),
        });
    }
    volume_mesh(scene, &spec.mesh, spec.reorient_inverted)
        .map_err(|source| SimError::Mesh { body: spec.name.clone(), source })
}

/// A volume mesh, generated or read (not a sheet).
fn volume_mesh(scene: &Scene, mesh: &MeshSpec, reorient_inverted: bool) -> Result<TetMesh, MeshError> {
    match mesh {
        MeshSpec::Box { size, cells } => generate::box_mesh(*size, *cells),
        MeshSpec::Ball { radius, resolution } => generate::ball(*radius, *resolution),
        MeshSpec::Cylinder { radius, length, resolution, length_cells } => {
            generate::cylinder(*radius, *length, *resolution, *length_cells)
        }
        MeshSpec::Torus { major_radius, minor_radius, resolution, ring_cells } => {
            generate::torus(*major_radius, *minor_radius, *resolution, *ring_cells)
        }
        MeshSpec::Sheet { size, .. } => Err(MeshError::WrongKind {
            path: format!("sheet {size:?}").into(),
            message: "a sheet is a membrane, not a volume mesh".into(),
        }),
        MeshSpec::File { path } => {
            let opts = ValidationOptions { reorient_inverted, ..Default::default() };
            io::read_tet_mesh(&scene.base_dir.join(path), opts).map(|mut m| {
                m.remove_unused_vertices();
                m
            })
        }
    }
}

/// A scene with `integrator = "local-global"` as a [`LocalGlobalWorld`].
pub(super) fn local_global_world(scene: &Scene) -> Result<LocalGlobalWorld, SimError> {
    let spec = &scene.spec;
    let bodies = spec
        .bodies
        .iter()
        .enumerate()
        .map(|(i, b)| local_global_body(scene, b, i))
        .collect::<Result<Vec<_>, _>>()?;
    let model = LocalGlobalModel {
        bodies,
        gravity: spec.simulation.gravity,
        time_step: spec.simulation.time_step,
        settings: spec.local_global,
    };
    let mut world = LocalGlobalWorld::new(model)?;
    for (b, s) in spec.bodies.iter().zip(&mut world.state.bodies) {
        s.velocities.chunks_exact_mut(3).for_each(|v| v.copy_from_slice(&b.initial_velocity));
    }
    Ok(world)
}

fn local_global_body(scene: &Scene, spec: &BodySpec, index: usize) -> Result<LocalGlobalBody, SimError> {
    let key = format!("body[{index}]");
    let shape = match &spec.mesh {
        MeshSpec::Sheet { size, cells } => {
            let mut m = generate::sheet(*size, *cells)
                .map_err(|source| SimError::Mesh { body: spec.name.clone(), source })?;
            let (r, t) = (spec.transform.rotation(), spec.transform);
            for v in &mut m.vertices {
                let p = r * nalgebra::Vector3::from(*v) * t.scale;
                *v = [0, 1, 2].map(|d| p[d] + t.translation[d]);
            }
            Shape::Shell(m, spec.thickness.unwrap_or(1e-3))
        }
        _ => {
            let mut m = tet_mesh(scene, spec)?;
            transform(&mut m, spec);
            Shape::Volume(m)
        }
    };
    let vertices = shape.vertices().to_vec();
    let mut kinematic = vec![None; vertices.len()];
    for (r, f) in spec.fixed.iter().enumerate() {
        let verts = select_points(&vertices, &vertices, f.bbox.as_ref(), f.vertices.as_deref(), "vertex")
            .map_err(|m| scene_err(scene, format!("{key}.fixed[{r}]"), m))?;
        verts.into_iter().for_each(|v| kinematic[v] = Some(Kinematic::Fixed));
    }
    for (r, p) in spec.prescribed.iter().enumerate() {
        let verts = select_points(&vertices, &vertices, p.bbox.as_ref(), p.vertices.as_deref(), "vertex")
            .map_err(|m| scene_err(scene, format!("{key}.prescribed[{r}]"), m))?;
        verts.into_iter().for_each(|v| kinematic[v] = Some(Kinematic::Moving(p.motion)));
    }
    LocalGlobalBody::new(
        spec.name.clone(),
        shape,
        spec.material,
        spec.constitutive.unwrap_or_default(),
        spec.bending,
        &kinematic,
    )
}

fn transform(mesh: &mut TetMesh, spec: &BodySpec) {
    let t = spec.transform;
    let r = t.rotation();
    let m = r.matrix();
    let rows = [0, 1, 2].map(|i| [m[(i, 0)], m[(i, 1)], m[(i, 2)]]);
    mesh.transform(t.scale, rows, t.translation);
}

/// Indices selected by a box (tet centroids when `tets`, else vertices) or
/// an explicit list; an empty or out-of-range selection is an error.
fn select(
    mesh: &TetMesh,
    bbox: Option<&BoxSpec>,
    list: Option<&[usize]>,
    tets: bool,
) -> Result<Vec<usize>, String> {
    if tets {
        let centroids: Vec<[f64; 3]> = mesh
            .tets
            .iter()
            .map(|t| [0, 1, 2].map(|d| t.iter().map(|&v| mesh.vertices[v][d]).sum::<f64>() / 4.0))
            .collect();
        select_points(&centroids, &mesh.vertices, bbox, list, "tet")
    } else {
        select_points(&mesh.vertices, &mesh.vertices, bbox, list, "vertex")
    }
}

/// Indices of `points` in a box, or a checked list; `vertices` give the
/// body's extent in the message of an empty selection.
fn select_points(
    points: &[[f64; 3]],
    vertices: &[[f64; 3]],
    bbox: Option<&BoxSpec>,
    list: Option<&[usize]>,
    what: &str,
) -> Result<Vec<usize>, String> {
    let count = points.len();
    let chosen: Vec<usize> = match (bbox, list) {
        (Some(b), _) => {
            let aabb = Aabb { min: b.min, max: b.max };
            (0..count).filter(|&i| aabb.contains(&points[i])).collect()
        }
        (None, Some(l)) => {
            if let Some(bad) = l.iter().find(|&&i| i >= count) {
                return Err(format!("{what} index {bad} out of range (the mesh has {count})"));
            }
            l.to_vec()
        }
        (None, None) => Vec::new(),
    };
    if chosen.is_empty() {
        let bb = Aabb::of_points(vertices).unwrap_or(Aabb { min: [0.0; 3], max: [0.0; 3] });
        return Err(format!("selects no {what} (the body spans {:?} to {:?})", bb.min, bb.max));
    }
    Ok(chosen)
}
