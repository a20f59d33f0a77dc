//! The first-use compile of `sluice-llbc` under concurrency: build scripts, `cargo
//! xtask`, test threads and other processes may all prepare the linker at once
//! against the same empty target folder, and every one of them must succeed.
//!
//! Before the fix, three compiles at once in one folder failed 5 times in 24 (the
//! link found no `main`); these tests run 32 such groups of four.

use std::path::{Path, PathBuf};
use std::process::Command;

use sluice_builder::install_linker;
use sluice_builder::toolchain::{Locations, Toolchain};

const AT_ONCE: usize = 4;
/// The variable that turns the ignored child test below into one racing process.
const CHILD_DIR: &str = "SLUICE_TEST_LINKER_RACE_DIR";

fn toolchain() -> Toolchain {
    // The per-user tools folder that `cargo xtask setup` installs into.
    Toolchain::discover(&Locations::default()).unwrap_or_else(|e| panic!("these tests need the kernel toolchain: {e}"))
}

fn empty_dir(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("linker-race").join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The installed linker runs (it is a whole program) and nothing else is left behind.
fn check_installed(target: &Path, exe: &Path) {
    let out = Command::new(exe).output().unwrap_or_else(|e| panic!("{} does not start: {e}", exe.display()));
    let says = String::from_utf8_lossy(&out.stderr);
    assert!(says.contains("sluice-llbc"), "{} is not sluice-llbc: {says}", exe.display());
    let left: Vec<_> = std::fs::read_dir(target.join("sluice-llbc")).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(left.len(), 1, "scratch files were left behind: {left:?}");
}

#[test]
fn threads_preparing_the_linker_at_once_all_succeed() {
    let tc = toolchain();
    for round in 0..20 {
        let target = empty_dir(&format!("threads-{round}"));
        let results: Vec<_> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..AT_ONCE).map(|_| s.spawn(|| install_linker(&tc, &target))).collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        let mut paths = Vec::new();
        for r in results {
            paths.push(r.unwrap_or_else(|e| panic!("round {round}: a concurrent linker build failed: {e}")));
        }
        assert!(paths.windows(2).all(|w| w[0] == w[1]), "{paths:?}");
        check_installed(&target, &paths[0]);
    }
}

#[test]
fn processes_preparing_the_linker_at_once_all_succeed() {
    let me = std::env::current_exe().unwrap();
    for round in 0..12 {
        let target = empty_dir(&format!("processes-{round}"));
        // Start them all first, then wait for each.
        let spawned: Vec<_> = (0..AT_ONCE)
            .map(|_| {
                Command::new(&me)
                    .args(["one_process_prepares_the_linker", "--exact", "--ignored", "--nocapture"])
                    .env(CHILD_DIR, &target)
                    .stdout(std::process::Stdio::piped())
                    .stderr(std::process::Stdio::piped())
                    .spawn()
                    .unwrap()
            })
            .collect();
        for child in spawned {
            let out = child.wait_with_output().unwrap();
            let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
            assert!(out.status.success(), "round {round}: a racing process failed:\n{text}");
            assert!(text.contains("1 passed"), "round {round}: the child test did not run:\n{text}");
        }
        let exe = std::fs::read_dir(target.join("sluice-llbc")).unwrap().next().unwrap().unwrap().path();
        check_installed(&target, &exe);
    }
}

/// One racing process of the test above; ignored when run on its own.
#[test]
#[ignore = "started by processes_preparing_the_linker_at_once_all_succeed"]
fn one_process_prepares_the_linker() {
    let target = std::env::var_os(CHILD_DIR).expect("run only by processes_preparing_the_linker_at_once_all_succeed");
    let exe = install_linker(&toolchain(), Path::new(&target)).unwrap_or_else(|e| panic!("{e}"));
    assert!(exe.is_file());
}
