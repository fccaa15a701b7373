//! The built-in scenes, embedded so that the binary can list and run them
//! from any folder.

use std::path::PathBuf;

use super::Scene;
use crate::SimError;

/// (name, file content).
pub const SCENES: [(&str, &str); 28] = [
    ("cantilever", include_str!("../../../../scenes/cantilever.toml")),
    ("twisting-bar", include_str!("../../../../scenes/twisting-bar.toml")),
    ("heterogeneous-beam", include_str!("../../../../scenes/heterogeneous-beam.toml")),
    ("drop", include_str!("../../../../scenes/drop.toml")),
    ("slope", include_str!("../../../../scenes/slope.toml")),
    ("stack", include_str!("../../../../scenes/stack.toml")),
    ("torus-pass", include_str!("../../../../scenes/torus-pass.toml")),
    ("multi-body", include_str!("../../../../scenes/multi-body.toml")),
    ("needle", include_str!("../../../../scenes/needle.toml")),
    ("needle-insertion", include_str!("../../../../scenes/needle-insertion.toml")),
    ("blade", include_str!("../../../../scenes/blade.toml")),
    ("twisting-bar-lg", include_str!("../../../../scenes/twisting-bar-lg.toml")),
    ("cloth-extension", include_str!("../../../../scenes/cloth-extension.toml")),
    ("hanging-cloth", include_str!("../../../../scenes/hanging-cloth.toml")),
    ("stick-slide", include_str!("../../../../scenes/stick-slide.toml")),
    ("drop-lg", include_str!("../../../../scenes/drop-lg.toml")),
    ("squeezing-ball", include_str!("../../../../scenes/squeezing-ball.toml")),
    ("cloth-on-knives", include_str!("../../../../scenes/cloth-on-knives.toml")),
    ("cloth-on-blade", include_str!("../../../../scenes/cloth-on-blade.toml")),
    ("sharp-corner", include_str!("../../../../scenes/sharp-corner.toml")),
    ("grasp-rotate", include_str!("../../../../scenes/grasp-rotate.toml")),
    ("sliding-indenter", include_str!("../../../../scenes/sliding-indenter.toml")),
    ("pad-on-sphere", include_str!("../../../../scenes/pad-on-sphere.toml")),
    ("rolling-cylinder", include_str!("../../../../scenes/rolling-cylinder.toml")),
    ("ten-tori", include_str!("../../../../scenes/ten-tori.toml")),
    ("hetero-stack", include_str!("../../../../scenes/hetero-stack.toml")),
    ("stack-256", include_str!("../../../../scenes/stack-256.toml")),
    ("stack-4096", include_str!("../../../../scenes/stack-4096.toml")),
];

/// Each scene's name and the first comment line of its file.
pub fn list() -> impl Iterator<Item = (&'static str, String)> {
    SCENES.iter().map(|(name, text)| (*name, first_sentence(text)))
}

/// The first sentence of a scene file's leading comment, whole even when
/// it runs over several lines (after any editor directive, `#:schema …`).
pub fn first_sentence(text: &str) -> String {
    let comment: Vec<&str> = text
        .lines()
        .skip_while(|l| l.starts_with("#:"))
        .map_while(|l| l.strip_prefix('#'))
        .map(str::trim)
        .take_while(|l| !l.is_empty())
        .collect();
    let joined = comment.join(" ");
    // A sentence ends at ". " before a capital, not after an abbreviation.
    let abbreviation = |before: &str| {
        let word = before.rsplit(' ').next().unwrap_or("");
        ["Fig", "Figs", "Eq", "eq", "e.g", "i.e", "cf", "al", "vs", "No"].contains(&word)
    };
    let end = joined.match_indices(". ").map(|(i, _)| i).find(|&i| {
        let next = joined[i + 2..].chars().next();
        next.is_some_and(char::is_uppercase) && !abbreviation(&joined[..i])
    });
    match end {
        Some(end) => joined[..=end].to_string(),
        None => joined,
    }
}

/// A scene from a path, or from a built-in name when no such file exists.
/// Neither: an error that names the closest built-in scene and the command
/// that lists them all.
pub fn load(arg: &str) -> Result<Scene, SimError> {
    let path = PathBuf::from(arg);
    if !path.exists() {
        let name = arg.trim_start_matches("scenes/").trim_end_matches(".toml");
        if let Some((n, text)) = SCENES.iter().find(|(n, _)| *n == name) {
            return Scene::from_toml(text, PathBuf::from("."), &format!("scenes/{n}.toml"));
        }
        let hint =
            closest_name(name).map(|n| format!("did you mean the built-in `{n}`? ")).unwrap_or_default();
        return Err(SimError::Io {
            path: arg.to_string(),
            source: std::io::Error::new(
                std::io::ErrorKind::NotFound,
                format!("no such scene file or built-in scene ({hint}`ferrofem scenes` lists them)"),
            ),
        });
    }
    Scene::from_file(&path)
}

/// The built-in name nearest to `name` by edit distance, if near enough
/// (at most a third of its letters differ).
fn closest_name(name: &str) -> Option<&'static str> {
    SCENES
        .iter()
        .map(|(n, _)| (edit_distance(name, n), *n))
        .min()
        .filter(|&(d, n)| 3 * d <= n.len().max(name.len()))
        .map(|(_, n)| n)
}

/// Edit distance between two strings by characters, counting a swap of
/// two neighbours as one edit (optimal string alignment).
fn edit_distance(a: &str, b: &str) -> usize {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    (0..=a.len()).for_each(|i| d[i][0] = i);
    (0..=b.len()).for_each(|j| d[0][j] = j);
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            d[i][j] = (d[i - 1][j - 1] + cost).min(d[i - 1][j] + 1).min(d[i][j - 1] + 1);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                d[i][j] = d[i][j].min(d[i - 2][j - 2] + 1);
            }
        }
    }
    d[a.len()][b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn misspelt_names_are_matched_by_edit_distance() {
        assert_eq!(edit_distance("dorp", "drop"), 1);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(closest_name("dorp"), Some("drop"));
        assert_eq!(closest_name("twisting-bar-l"), Some("twisting-bar-lg"));
        assert_eq!(closest_name("zzzzzzzz"), None);
    }

    /// Every built-in scene is listed with a whole first sentence.
    #[test]
    fn descriptions_are_whole_first_sentences() {
        for (name, about) in list() {
            assert!(about.ends_with('.') && about.len() > 20, "{name}: {about:?}");
            assert!(!about.ends_with("Fig.") && !about.ends_with("e.g."), "{name}: {about:?}");
        }
        let text = "# The bar of zeng2025 Fig. 9, twisted. More here.\n[simulation]";
        assert_eq!(first_sentence(text), "The bar of zeng2025 Fig. 9, twisted.");
    }
}
