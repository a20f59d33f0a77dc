//! The compile-fail suite: each case in `tests/ui/<area>/<property>.rs` is one misuse of the
//! ownership rules (DESIGN.md, rules 1-5) or of a typed launch, and must fail to compile
//! with the error recorded next to it in `<property>.stderr`.
//!
//! rustc's messages change between releases, so the `.stderr` files hold one compiler's
//! words: `tests/ui/RUSTC_VERSION` names it. Under another rustc the suite says so and
//! skips (the cases still fail to compile there; only the wording may differ).
//!
//! Regenerate the `.stderr` files with `cargo xtask bless` (`TRYBUILD=overwrite`, which also
//! rewrites `RUSTC_VERSION`), then read the diff: every error must point at the misuse its
//! case names.

use std::path::Path;
use std::process::Command;

/// `rustc --version` of the compiler cargo builds these cases with.
fn rustc_version() -> String {
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let out = Command::new(&rustc).arg("--version").output().expect("rustc runs");
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

#[test]
fn ui() {
    let recorded_at = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/ui/RUSTC_VERSION");
    let now = rustc_version();
    let blessing = std::env::var_os("TRYBUILD").is_some_and(|v| v == "overwrite");
    if blessing {
        std::fs::write(&recorded_at, format!("{now}\n")).expect("write tests/ui/RUSTC_VERSION");
    } else {
        let recorded = std::fs::read_to_string(&recorded_at).unwrap_or_default();
        if recorded.trim() != now {
            println!(
                "skipped: the compile-fail messages in tests/ui were recorded with `{}`, this is `{now}`; \
                 run `cargo xtask bless` under this compiler to record its messages (then read the diff)",
                recorded.trim()
            );
            return;
        }
    }
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/*/*.rs");
}
