//! The simulator's integration tests, in one binary (one link instead of
//! seven): physics against analytic references, the Delassus builders
//! against the dense one, the LDLᵀ engine, both integrators, and every
//! built-in scene's trajectory hash, and the tests that need a whole world
//! or the scene format's parser (batches, output fields, scene files): kept
//! out of the library's unit tests, whose build would otherwise compile
//! the world and the parser a second time. `cargo test -p ferrofem --test
//! physics NAME` runs one; `tests/allocations.rs` is apart because it
//! installs a counting global allocator. Each test runs on a pool of its
//! own with one worker (`common::one_worker`), the tests side by side,
//! except the batches' (which spread worlds over the global pool's
//! workers) and those that give a world several workers on purpose.

#[path = "../common/mod.rs"]
mod common;

mod applications;
mod batch;
mod cable;
mod cantilever;
mod contact;
mod delassus;
mod dynamics;
mod fields;
mod inversion;
mod ldlt_preconditioner;
mod local_global;
mod scene_format;
mod scenes;
