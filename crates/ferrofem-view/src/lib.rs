//! The browser viewer of ferrofem (`ferrofem view`): a simulation runs on
//! its own thread and a page served over HTTP watches it live over a
//! WebSocket, colours the bodies by a field, grabs them with the mouse, or
//! replays a folder that `ferrofem run` wrote. Documented in
//! `docs/viewer.md`. [`render`] draws the same frames into pictures and
//! clips without a browser.
//!
//! Threads: the simulation thread owns the world ([`session::Live`] or
//! [`replay::Replay`]) and publishes its latest frame on a watch channel;
//! a tokio runtime serves the page, `/api/state` and one task per
//! WebSocket, which forwards commands to the simulation thread and sends
//! the latest frame whenever the page is ready for one. A slow page thus
//! skips frames and never slows the simulation; a page that disconnects
//! leaves it running.

mod error;
pub mod frame;
mod guard;
mod options;
pub mod render;
pub mod replay;
mod scene_view;
mod server;
pub mod session;

pub use error::ViewError;
pub use options::{ServeOptions, Source};
pub use scene_view::scene_view;
pub use server::Server;
