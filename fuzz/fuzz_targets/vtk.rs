//! The .vtk reader on arbitrary bytes: an error or a mesh, never a panic,
//! a hang or an allocation the input's size does not justify.
#![no_main]

use ferrofem_mesh::io::{parse_elements, Format};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // The reader contains panics of the third-party VTK parser
    // (catch_unwind) and reports them as parse errors; libFuzzer's hook
    // would abort on them before they are caught. A panic that escapes
    // the reader is still a crash: libfuzzer-sys catches it and aborts.
    std::panic::set_hook(Box::new(|_| {}));
    let _ = parse_elements(data, Format::Vtk, std::path::Path::new("fuzz.vtk"));
});
