//! From a validated scene to a [`World`].

use std::sync::Arc;

use super::spec::{BodySpec, BoxSpec, IntegratorKind, MeshSpec, ObstacleSpec};
use super::Scene;
use crate::body::{Body, BodyMaterial, Kinematic, Shape};
use crate::device::{DeviceError, SharedBackend};
use crate::obstacle::{Geometry, MeshGeometry, Obstacle};
use crate::{Device, Model, SimError, World};
use ferrofem_mesh::{generate, io, Aabb, MeshError, TetMesh, TriMesh, ValidationOptions};

pub(super) fn world(scene: &Scene, backend: Option<SharedBackend>) -> Result<World, SimError> {
    let spec = &scene.spec;
    if spec.simulation.device == Device::Gpu {
        // An adapter is looked for now, not at the first stage that needs it.
        let adapter = backend.as_deref().ok_or(DeviceError::NoBackend).and_then(|b| b.adapter());
        adapter.map_err(|e| scene_err(scene, "simulation.device".into(), e.to_string()))?;
    }
    let bodies =
        spec.bodies.iter().enumerate().map(|(i, b)| body(scene, b, i)).collect::<Result<Vec<_>, _>>()?;
    let obstacles = spec
        .obstacles
        .iter()
        .enumerate()
        .map(|(i, o)| obstacle(scene, o, i))
        .collect::<Result<Vec<_>, _>>()?;
    let solid = |name: &str, key: String, what: &str| {
        let b = spec.bodies.iter().position(|b| b.name == name).expect("validated: the body exists");
        let mesh = bodies[b].tet_mesh().ok_or_else(|| scene_err(scene, key, what.into()))?;
        Ok::<_, SimError>((b, mesh))
    };
    let needles = spec
        .needles
        .iter()
        .enumerate()
        .map(|(i, n)| {
            let (b, mesh) = solid(&n.body, format!("needle[{i}].body"), "a needle goes into a solid (tets)")?;
            Ok(n.build(b, mesh.quality().mean_edge))
        })
        .collect::<Result<Vec<_>, SimError>>()?;
    let cables = spec
        .cables
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let (b, _) = solid(&c.body, format!("cable[{i}].body"), "a cable runs through a solid (tets)")?;
            let (x, t) = (bodies[b].rest_positions(), &spec.bodies[b].transform);
            let place = |p: &[f64; 3]| {
                t.rotation() * nalgebra::Vector3::from(*p) * t.scale + nalgebra::Vector3::from(t.translation)
            };
            c.build(b, &bodies[b].tets, &x, place)
                .map_err(|(field, message)| scene_err(scene, format!("cable[{i}].{field}"), message))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let model = Model {
        bodies,
        needles,
        cables,
        gravity: spec.simulation.gravity,
        time_step: spec.simulation.time_step,
        obstacles,
        contact: spec.contact,
        constraint_solver: spec.constraint_solver,
        device: spec.simulation.device,
        backend,
    };
    let mut world = match spec.simulation.integrator {
        IntegratorKind::ImplicitEuler => World::with_implicit_euler(model, spec.implicit_euler)?,
        IntegratorKind::LocalGlobal => World::with_local_global(model, spec.local_global)?,
    };
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
        steering: None,
    })
}

/// A mesh obstacle's surface: a generated solid's boundary, a file's
/// triangles, or a volume file's boundary.
fn obstacle_surface(scene: &Scene, mesh: &MeshSpec) -> Result<TriMesh, MeshError> {
    let MeshSpec::File { path, .. } = mesh else {
        return Ok(volume_mesh(scene, mesh, false)?.boundary().mesh);
    };
    io::read_surface(&scene.base_dir.join(path)).map_err(shared_meshes_hint)
}

fn scene_err(scene: &Scene, key: String, message: String) -> SimError {
    SimError::Scene { file: scene.label.clone(), key, message }
}

fn body(scene: &Scene, spec: &BodySpec, index: usize) -> Result<Body, SimError> {
    let key = format!("body[{index}]");
    let shape = shape(scene, spec)?;
    let vertices = shape.vertices();
    let (centroids, element) = element_centroids(&shape);
    let mut materials = vec![spec.material; centroids.len()];
    for (r, reg) in spec.regions.iter().enumerate() {
        let elements =
            select_points(&centroids, vertices, reg.bbox.as_ref(), reg.elements.as_deref(), element)
                .map_err(|m| scene_err(scene, format!("{key}.region[{r}]"), m))?;
        elements.into_iter().for_each(|e| materials[e] = reg.material);
    }
    let pick = |bbox, list, what: String| {
        select_points(vertices, vertices, bbox, list, "vertex").map_err(|m| scene_err(scene, what, m))
    };
    let mut kinematic = vec![None; vertices.len()];
    for (r, f) in spec.fixed.iter().enumerate() {
        let verts = pick(f.bbox.as_ref(), f.vertices.as_deref(), format!("{key}.fixed[{r}]"))?;
        verts.into_iter().for_each(|v| kinematic[v] = Some(Kinematic::Fixed));
    }
    for (r, p) in spec.prescribed.iter().enumerate() {
        let verts = pick(p.bbox.as_ref(), p.vertices.as_deref(), format!("{key}.prescribed[{r}]"))?;
        verts.into_iter().for_each(|v| kinematic[v] = Some(Kinematic::Moving(p.motion.clone())));
    }
    let mut attachments = Vec::new();
    for (r, a) in spec.attach.iter().enumerate() {
        let verts = pick(a.bbox.as_ref(), a.vertices.as_deref(), format!("{key}.attach[{r}]"))?;
        let target = a.motion.clone().map_or(Kinematic::Fixed, Kinematic::Moving);
        attachments.extend(verts.into_iter().map(|v| (v, target.clone())));
    }
    let def = BodyMaterial {
        materials,
        constitutive: spec.constitutive.unwrap_or_default(),
        damping: spec.damping,
        bending: spec.bending,
        kinematic,
    };
    let mut body = Body::new(spec.name.clone(), shape, def)?;
    body.attachments = attachments;
    body.self_collision = spec.self_collision;
    if let Some(spacing) = spec.contact_spacing {
        body.space_contact_points(spacing);
    }
    check_mass_scale(&body, scene.spec.simulation.time_step)?;
    Ok(body)
}

/// Refuses a free solid whose mass is lost to round-off in `A = M + h²K`:
/// when `h² (λ + 2μ) L / m` (an element's stiffness, P-wave modulus times
/// its size, over the lightest vertex mass, times `h²`) exceeds 1e14, `A`
/// keeps fewer than two digits of `M`, and with no vertex held, `K`'s
/// rigid modes leave `A` singular. The message names the factor out of
/// the ordinary ([`mass_scale_cause`]).
fn check_mass_scale(body: &Body, h: f64) -> Result<(), SimError> {
    let held = body.kinematic.iter().any(Option::is_some) || !body.attachments.is_empty();
    if held || body.tets.is_empty() {
        return Ok(());
    }
    let volume: f64 = body.tets.iter().map(|t| t.measure).sum();
    let length = (volume / body.tets.len() as f64).cbrt();
    let modulus = body.tets.iter().map(|t| t.lame.lambda + 2.0 * t.lame.mu).fold(0.0, f64::max);
    let mass = body.mass.iter().copied().fold(f64::INFINITY, f64::min);
    let ratio = h * h * modulus * length / mass;
    if ratio > 1e14 {
        let density = body.mass.iter().sum::<f64>() / volume;
        return Err(SimError::Body {
            body: body.name.clone(),
            message: format!(
                "h²·(λ+2μ)·L/m = {ratio:.1e} (h = {h} s, λ+2μ up to {modulus:.1e} Pa, elements of {length:.2e} m, \
                 lightest vertex {mass:.1e} kg): the mass is lost to round-off beside the stiffness and \
                 the free body's system matrix is singular; {}",
                mass_scale_cause(density, modulus, h * (1e14 / ratio).sqrt())
            ),
        });
    }
    Ok(())
}

/// The likelier cause of a lost mass: a density or a stiffness no solid
/// has (a unit slip: g/cm³ or kg/mm³ for kg/m³, MPa or GPa for Pa), else
/// the time step, with the longest one this body keeps its mass at.
fn mass_scale_cause(density: f64, modulus: f64, h_max: f64) -> String {
    if !(1.0..=1e5).contains(&density) {
        format!(
            "a density of {density:.3e} kg/m³ is far from any solid's (water: 1000): check its units (kg/m³)"
        )
    } else if modulus > 2e12 {
        format!("λ+2μ = {modulus:.1e} Pa is stiffer than any solid (diamond: about 1.1e12): check youngs_modulus's units (Pa)")
    } else {
        format!("the time step is too long for this stiffness: shorten time_step below {h_max:.2e} s")
    }
}

/// The body's mesh, generated or read, in world coordinates: a membrane
/// for a sheet, else a volume.
fn shape(scene: &Scene, spec: &BodySpec) -> Result<Shape, SimError> {
    let mesh_err = |source| SimError::Mesh { body: spec.name.clone(), source };
    let t = spec.transform;
    if let MeshSpec::Sheet { size, cells } = &spec.mesh {
        let mut m = generate::sheet(*size, *cells).map_err(mesh_err)?;
        let r = t.rotation();
        for v in &mut m.vertices {
            let p = r * nalgebra::Vector3::from(*v) * t.scale;
            *v = [0, 1, 2].map(|d| p[d] + t.translation[d]);
        }
        return Ok(Shape::Shell(m, spec.thickness.unwrap_or(1e-3)));
    }
    let mut mesh = volume_mesh(scene, &spec.mesh, spec.reorient_inverted).map_err(mesh_err)?;
    let m = t.rotation().into_inner();
    let rows = [0, 1, 2].map(|i| [m[(i, 0)], m[(i, 1)], m[(i, 2)]]);
    mesh.transform(t.scale, rows, t.translation);
    Ok(Shape::Volume(mesh))
}

/// Centroid of every element, and what the elements are called.
fn element_centroids(shape: &Shape) -> (Vec<[f64; 3]>, &'static str) {
    fn centroid<const N: usize>(x: &[[f64; 3]], e: &[usize; N]) -> [f64; 3] {
        [0, 1, 2].map(|d| e.iter().map(|&v| x[v][d]).sum::<f64>() / N as f64)
    }
    match shape {
        Shape::Volume(m) => (m.tets.iter().map(|t| centroid(&m.vertices, t)).collect(), "tet"),
        Shape::Shell(m, _) => (m.triangles.iter().map(|t| centroid(&m.vertices, t)).collect(), "triangle"),
    }
}

/// A volume mesh, generated or read (not a sheet).
fn volume_mesh(scene: &Scene, mesh: &MeshSpec, reorient_inverted: bool) -> Result<TetMesh, MeshError> {
    match mesh {
        MeshSpec::Box { size, cells } => generate::box_mesh(*size, *cells),
        MeshSpec::Ball { radius, resolution } => generate::ball(*radius, *resolution),
        MeshSpec::Balls { balls, resolution } => generate::balls(balls, *resolution),
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
        MeshSpec::File { path, tetrahedralize: Some(t) } => {
            let surface = io::read_surface(&scene.base_dir.join(path)).map_err(shared_meshes_hint)?;
            ferrofem_mesh::stuffing::tetrahedralize(&surface, t.fineness())
        }
        MeshSpec::File { path, tetrahedralize: None } => {
            let opts = ValidationOptions { reorient_inverted, ..Default::default() };
            let read = io::read_tet_mesh(&scene.base_dir.join(path), opts).map_err(shared_meshes_hint);
            read.map(|mut m| {
                m.remove_unused_vertices();
                m
            })
        }
    }
}

/// A missing mesh of the shared collection (`scenes/external/`) says where
/// the collection is expected.
fn shared_meshes_hint(e: MeshError) -> MeshError {
    match e {
        MeshError::Io { path, source }
            if source.kind() == std::io::ErrorKind::NotFound
                && path.to_string_lossy().contains("shared/meshes") =>
        {
            let hint = format!(
                "{source}; the external scenes read the shared mesh collection from ../shared/meshes beside \
                 this checkout (the built-in scenes need none)"
            );
            MeshError::Io { path, source: std::io::Error::new(std::io::ErrorKind::NotFound, hint) }
        }
        e => e,
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
