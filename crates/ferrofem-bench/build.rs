//! Records the commit the benchmarks were built from (`FERROFEM_BUILD`), so
//! that every figure `bench papers` writes names its build.

use std::path::Path;
use std::process::Command;

fn main() {
    let git = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.git");
    // Rebuilt when the checkout moves (HEAD, the branch it names: a commit)
    // or its tree is staged (the index), so the name is never a stale one.
    let head = std::fs::read_to_string(git.join("HEAD")).unwrap_or_default();
    let branch = head.strip_prefix("ref: ").map(|r| r.trim().to_string());
    for f in ["HEAD", "index", "packed-refs"].into_iter().map(String::from).chain(branch) {
        if git.join(&f).exists() {
            println!("cargo:rerun-if-changed={}", git.join(f).display());
        }
    }
    let describe = Command::new("git")
        .args(["describe", "--always", "--dirty=+dirty", "--abbrev=7"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .ok()
        .filter(|o| o.status.success())
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty());
    println!("cargo:rustc-env=FERROFEM_BUILD={}", describe.as_deref().unwrap_or("unknown"));
}
