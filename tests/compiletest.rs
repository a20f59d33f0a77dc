//! The compile-fail suite: each case in `tests/ui/<area>/<property>.rs` is one misuse of the
//! ownership rules (DESIGN.md, rules 1-5) or of a typed launch, and must fail to compile
//! with the error recorded next to it in `<property>.stderr`.
//!
//! Regenerate the `.stderr` files with `cargo xtask bless` (`TRYBUILD=overwrite`), then read
//! the diff: every error must point at the misuse its case names.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/*/*.rs");
}
