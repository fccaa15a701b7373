//! Records the commit the benchmarks were built from (`FERROFEM_BUILD`), so
//! that every figure `bench papers` writes names its build.

use std::path::Path;
use std::process::Command;

fn main() {
    let git = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.git");
    // Rebuilt when the checkout moves (HEAD, the branch it names: a commit),
    // its tree is staged (the index) or any source of the workspace's crates
    // changes (a directory is scanned whole), so the name is never a stale
    // one: a binary built from edited sources says `+dirty`.
    println!("cargo:rerun-if-changed={}", Path::new(env!("CARGO_MANIFEST_DIR")).join("..").display());
    let head = std::fs::read_to_string(git.join("HEAD")).unwrap_or_default();
    let branch = head.strip_prefix("ref: ").map(|r| r.trim().to_string());
    for f in ["HEAD", "index", "packed-refs"].into_iter().map(String::from).chain(branch) {
        if git.join(&f).exists() {
            println!("cargo:rerun-if-changed={}", git.join(f).display());
        }
    }
    // The commit's name, and `+dirty` when tracked files differ from it.
    // `status` without optional locks compares contents where the index's
    // file times are stale and leaves the index as it is (`describe --dirty`
    // rewrote it, which made the next build run this script again).
    let run_git = |args: &[&str]| {
        Command::new("git")
            .args(args)
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .output()
            .ok()
            .filter(|o| o.status.success())
            .and_then(|o| String::from_utf8(o.stdout).ok())
    };
    let name = run_git(&["describe", "--always", "--abbrev=7"])
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty());
    let dirty = run_git(&["--no-optional-locks", "status", "--porcelain", "--untracked-files=no"])
        .is_some_and(|s| !s.trim().is_empty());
    let describe = name.map(|n| if dirty { format!("{n}+dirty") } else { n });
    println!("cargo:rustc-env=FERROFEM_BUILD={}", describe.as_deref().unwrap_or("unknown"));
}
