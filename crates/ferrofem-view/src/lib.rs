//! The browser viewer of ferrofem (`ferrofem view`): a simulation runs on
//! its own thread and a page served over HTTP watches it live over a
//! WebSocket, colours the bodies by a field, grabs them with the mouse, or
//! replays a folder that `ferrofem run` wrote. Documented in
//! `docs/viewer.md`.
//!
//! Threads: the simulation thread owns the world ([`session::Live`] or
//! [`replay::Replay`]) and publishes its latest frame on a watch channel;
//! a tokio runtime serves the page, `/api/state` and one task per
//! WebSocket, which forwards commands to the simulation thread and sends
//! the latest frame whenever the page is ready for one. A slow page thus
//! skips frames and never slows the simulation; a page that disconnects
//! leaves it running.

pub mod frame;
pub mod replay;
mod server;
pub mod session;

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::PathBuf;

use ferrofem::obstacle::{Geometry, Shape};
use ferrofem::scene::Scene;

pub use server::Server;

use frame::{BodyView, ObstacleView, SceneView, ShapeView};
use session::Live;

/// Everything that stops the viewer from starting.
#[derive(Debug, thiserror::Error)]
pub enum ViewError {
    /// The scene could not be built.
    #[error(transparent)]
    Sim(#[from] ferrofem::SimError),
    /// The replay folder could not be read.
    #[error("replay: {0}")]
    Replay(String),
    /// The server could not start (address in use, …).
    #[error("{0}")]
    Server(String),
}

/// What the viewer shows.
#[derive(Debug)]
pub enum Source {
    /// A live simulation of a scene.
    Scene(Box<Scene>),
    /// A folder written by `ferrofem run`.
    Replay(PathBuf),
}

/// Where and how to serve.
#[derive(Debug, Clone, Copy)]
pub struct ServeOptions {
    /// Address to bind (127.0.0.1 unless given: the viewer has no authentication).
    pub host: IpAddr,
    /// Port (0: any free one).
    pub port: u16,
    /// Run no faster than real time (else as fast as the steps allow).
    pub realtime: bool,
    /// Start playing at once.
    pub play: bool,
}

impl Default for ServeOptions {
    fn default() -> Self {
        ServeOptions { host: IpAddr::V4(Ipv4Addr::LOCALHOST), port: 8080, realtime: true, play: false }
    }
}

impl ServeOptions {
    /// The address to bind.
    pub fn address(&self) -> SocketAddr {
        SocketAddr::new(self.host, self.port)
    }
}

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

/// An obstacle's geometry as the page draws it; a half-space as a square
/// ten body extents wide.
fn shape_view(geometry: &Geometry, extent: f64) -> ShapeView {
    match geometry {
        Geometry::Analytic(shape) => match *shape {
            Shape::HalfSpace => ShapeView::HalfSpace { size: 10.0 * extent },
            Shape::Sphere { radius } => ShapeView::Sphere { radius },
            Shape::Box { size } => ShapeView::Box { size },
            Shape::Cylinder { radius, length } => ShapeView::Cylinder { radius, length },
            Shape::Capsule { radius, length } => ShapeView::Capsule { radius, length },
            Shape::Torus { major_radius, minor_radius } => ShapeView::Torus { major_radius, minor_radius },
        },
        Geometry::Mesh(mesh) => ShapeView::Mesh {
            vertices: mesh.vertices().flat_map(|v| [v.x as f32, v.y as f32, v.z as f32]).collect(),
            triangles: mesh.triangles().flat_map(|t| t.map(|i| i as u32)).collect(),
        },
    }
}
