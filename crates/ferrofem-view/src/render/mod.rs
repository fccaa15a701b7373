//! Pictures and clips of a run (`ferrofem render`, docs/cli.md): what the
//! viewer's page shows (bodies coloured by a field with its legend,
//! obstacles, contact-force arrows) drawn by a z-buffered software
//! rasterizer, written as a PNG, an animated GIF or an MP4. Pure Rust but
//! the MP4's encoder (`ffmpeg`), so it runs wherever the CLI does.

mod camera;
mod clip;
mod draw;
mod encode;
mod raster;
mod shapes;
mod text;

pub use camera::fitted;
pub use clip::Clip;
pub use draw::{Look, Painter};
pub use encode::{Container, Target};
