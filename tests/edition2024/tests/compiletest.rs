//! The kernel compile-fail cases as edition 2024 (see the crate docs). Each case must fail
//! with the message blessed by the edition-2021 suite: the same error, for the same reason.
//! Under another rustc than the one `tests/ui/RUSTC_VERSION` names, it skips, as the main
//! suite does.

use std::path::Path;
use std::process::Command;

#[test]
fn kernel_cases_fail_the_same_way_in_edition_2024() {
    let recorded = Path::new(env!("CARGO_MANIFEST_DIR")).join("../ui/RUSTC_VERSION");
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let out = Command::new(&rustc).arg("--version").output().expect("rustc runs");
    let now = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let recorded = std::fs::read_to_string(&recorded).unwrap_or_default();
    if recorded.trim() != now {
        println!("skipped: tests/ui was blessed with `{}`, this is `{now}`", recorded.trim());
        return;
    }
    trybuild::TestCases::new().compile_fail("tests/ui/kernel/*.rs");
}

/// Every kernel case of the workspace's suite is linked here (a new case needs its link:
/// `ln -s ../../../../ui/kernel/<case>.rs tests/edition2024/tests/ui/kernel/`).
#[test]
fn every_kernel_case_is_linked() {
    let names = |dir: &str| {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join(dir);
        let mut v: Vec<String> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .filter_map(|e| e.ok()?.file_name().into_string().ok())
            .filter(|n| n.ends_with(".rs"))
            .collect();
        v.sort();
        v
    };
    assert_eq!(
        names("tests/ui/kernel"),
        names("../ui/kernel"),
        "link each case of tests/ui/kernel into tests/edition2024/tests/ui/kernel, then `cargo xtask bless`"
    );
}
