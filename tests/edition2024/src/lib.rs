//! The kernel compile-fail cases (`tests/ui/kernel`, through the link `tests/ui/kernel` in
//! this crate) built as an edition-2024 crate with no lints set. The workspace's own suite
//! (`tests/compiletest.rs`) builds them as edition 2021, also without the workspace's lints
//! (trybuild does not carry them): together they show that a `#[kernel]` body is safe code
//! whatever the edition, and that no lint of sluice's own hides a hole.
