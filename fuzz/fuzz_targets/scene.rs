//! The scene parser and validator on arbitrary text: an error naming a key,
//! or a validated scene, never a panic. (Building the world is left out: a
//! valid scene may ask for a large mesh on purpose.)
#![no_main]

use ferrofem::scene::Scene;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = Scene::from_toml(text, ".".into(), "fuzz.toml");
    }
});
