//! ferrofem: real-time finite-element simulation of soft bodies.
//!
//! A [`World`] holds one [`Model`] (what the scene defines: meshes, rest
//! elements, materials, obstacles, boundary conditions), one [`State`]
//! (positions, velocities, warm starts), the integrator-neutral constraint
//! stack and an [`integrator::Integrator`] that owns its workspace.
//! [`World::step`] advances the state by one time step as a short sequence
//! of named, timed stages; see `docs/architecture.md`.
#![warn(missing_docs)]

pub mod batch;
pub mod body;
pub mod cable;
pub mod collision;
pub mod constraint;
pub mod constraint_stack;
mod control;
pub mod delassus;
pub mod device;
pub mod element;
mod error;
pub mod fields;
pub mod integrator;
pub mod material;
mod model;
pub mod needle;
pub mod obstacle;
pub mod output;
pub mod scene;
pub mod solver;
mod stage;
mod state;
pub mod stats;
mod summary;
mod world;

pub use body::{Body, BodySummary, MeshView};
pub use control::ConstraintPoints;
pub use device::Device;
pub use error::{Invalid, SimError};
pub use model::Model;
pub use state::{BodyState, State};
pub use world::World;
