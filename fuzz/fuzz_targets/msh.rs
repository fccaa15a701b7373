//! The .msh reader on arbitrary bytes: an error or a mesh, never a panic,
//! a hang or an allocation the input's size does not justify.
#![no_main]

use ferrofem_mesh::io::{parse_elements, Format};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = parse_elements(data, Format::Msh, std::path::Path::new("fuzz.msh"));
});
