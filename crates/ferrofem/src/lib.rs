//! ferrofem: real-time finite-element simulation of soft bodies.
//!
//! A [`World`] holds a [`Model`] (what the scene defines: meshes, rest
//! state, materials, boundary conditions), a [`State`] (positions and
//! velocities) and a workspace (matrices, solver scratch, rotations).
//! [`World::step`] advances the state by one time step as a short sequence
//! of named, timed stages; see `docs/architecture.md`.
#![warn(missing_docs)]

pub mod body;
pub mod collision;
pub mod constraint;
pub mod delassus;
pub mod element;
mod error;
pub mod integrator;
pub mod material;
pub mod obstacle;
pub mod output;
pub mod scene;
mod simulation;
pub mod solver;
pub mod stats;
mod world;

pub use error::SimError;
pub use simulation::{BodySummary, MeshView, Simulation};
pub use world::{BodyState, Model, State, World};
