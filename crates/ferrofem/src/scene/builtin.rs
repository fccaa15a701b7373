//! The built-in scenes, embedded so that the binary can list and run them
//! from any folder.

use std::path::PathBuf;

use super::Scene;
use crate::SimError;

/// (name, file content).
pub const SCENES: [(&str, &str); 18] = [
    ("cantilever", include_str!("../../../../scenes/cantilever.toml")),
    ("twisting-bar", include_str!("../../../../scenes/twisting-bar.toml")),
    ("heterogeneous-beam", include_str!("../../../../scenes/heterogeneous-beam.toml")),
    ("drop", include_str!("../../../../scenes/drop.toml")),
    ("slope", include_str!("../../../../scenes/slope.toml")),
    ("stack", include_str!("../../../../scenes/stack.toml")),
    ("torus-pass", include_str!("../../../../scenes/torus-pass.toml")),
    ("multi-body", include_str!("../../../../scenes/multi-body.toml")),
    ("needle", include_str!("../../../../scenes/needle.toml")),
    ("blade", include_str!("../../../../scenes/blade.toml")),
    ("twisting-bar-lg", include_str!("../../../../scenes/twisting-bar-lg.toml")),
    ("cloth-extension", include_str!("../../../../scenes/cloth-extension.toml")),
    ("hanging-cloth", include_str!("../../../../scenes/hanging-cloth.toml")),
    ("stick-slide", include_str!("../../../../scenes/stick-slide.toml")),
    ("drop-lg", include_str!("../../../../scenes/drop-lg.toml")),
    ("squeezing-ball", include_str!("../../../../scenes/squeezing-ball.toml")),
    ("cloth-on-knives", include_str!("../../../../scenes/cloth-on-knives.toml")),
    ("sharp-corner", include_str!("../../../../scenes/sharp-corner.toml")),
];

/// Each scene's name and the first comment line of its file.
pub fn list() -> impl Iterator<Item = (&'static str, &'static str)> {
    SCENES
        .iter()
        .map(|(name, text)| (*name, text.lines().next().unwrap_or("").trim_start_matches('#').trim()))
}

/// A scene from a path, or from a built-in name when no such file exists.
pub fn load(arg: &str) -> Result<Scene, SimError> {
    let path = PathBuf::from(arg);
    if !path.exists() {
        let name = arg.trim_start_matches("scenes/").trim_end_matches(".toml");
        if let Some((n, text)) = SCENES.iter().find(|(n, _)| *n == name) {
            return Scene::from_toml(text, PathBuf::from("."), &format!("scenes/{n}.toml"));
        }
    }
    Scene::from_file(&path)
}
