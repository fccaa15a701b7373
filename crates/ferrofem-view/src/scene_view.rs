//! The scene message a page receives first: bodies' surfaces, obstacles'
//! shapes, fields and the time-step range of a live scene.

use ferrofem::obstacle::{Geometry, Shape};

use crate::frame::{BodyView, ObstacleView, SceneView, ShapeView};
use crate::session::{self, Live};

/// The scene message of a live simulation: each body's surface, each
/// obstacle's shape, the fields and the time-step range.
pub fn scene_view(live: &Live) -> SceneView {
    let world = live.world();
    let bodies = world
        .model
        .bodies
        .iter()
        .map(|b| {
            let s = &b.surface;
            let triangles =
                s.mesh.triangles.as_flattened().iter().map(|&i| s.volume_vertex[i] as u32).collect();
            BodyView { name: b.name.clone(), vertices: b.vertex_count(), triangles }
        })
        .collect();
    let (extent, center) = session::extent(world);
    let obstacles = world
        .model
        .obstacles
        .iter()
        .zip(&live.scene().spec.obstacles)
        .map(|(o, spec)| ObstacleView {
            name: o.name.clone(),
            shape: shape_view(&o.geometry, extent),
            draggable: spec.draggable,
        })
        .chain(world.model.needles.iter().map(needle_view))
        .collect();
    SceneView {
        kind: "scene",
        mode: "live",
        name: live.scene().name(),
        bodies,
        obstacles,
        fields: ferrofem::fields::Field::ALL.iter().map(|f| (f.name(), f.unit())).collect(),
        time_step_range: live.time_step_range(),
        time_step: world.model.time_step,
        times: Vec::new(),
        extent,
        center,
    }
}

/// A needle as the page draws it, posed after the obstacles
/// ([`ferrofem::needle::Needle::pose`]).
fn needle_view(n: &ferrofem::needle::Needle) -> ObstacleView {
    ObstacleView { name: n.name.clone(), shape: needle_shape(n.length), draggable: false }
}

/// A needle's shaft as drawn: a thin cylinder along local z, a hundredth
/// of its `length` across (a replay's too).
pub fn needle_shape(length: f64) -> ShapeView {
    ShapeView::Cylinder { radius: 0.005 * length, length }
}

/// An obstacle's geometry as the page draws it; a half-space as a square
/// ten body extents wide.
fn shape_view(geometry: &Geometry, extent: f64) -> ShapeView {
    match geometry {
        Geometry::Analytic(shape) => analytic_view(*shape, extent),
        Geometry::Mesh(mesh) => ShapeView::Mesh {
            vertices: mesh.vertices().flat_map(|v| [v.x as f32, v.y as f32, v.z as f32]).collect(),
            triangles: mesh.triangles().flat_map(|t| t.map(|i| i as u32)).collect(),
        },
    }
}

/// An analytic shape as the page draws it (the half-space as a square ten
/// body extents wide); also what a replay draws from `obstacles.jsonl`.
pub fn analytic_view(shape: Shape, extent: f64) -> ShapeView {
    match shape {
        Shape::HalfSpace => ShapeView::HalfSpace { size: 10.0 * extent },
        Shape::Sphere { radius } => ShapeView::Sphere { radius },
        Shape::Box { size } => ShapeView::Box { size },
        Shape::Cylinder { radius, length } => ShapeView::Cylinder { radius, length },
        Shape::Capsule { radius, length } => ShapeView::Capsule { radius, length },
        Shape::Torus { major_radius, minor_radius } => ShapeView::Torus { major_radius, minor_radius },
    }
}
