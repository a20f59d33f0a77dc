//! `cargo sluice new` as a user runs it, the README's commands as written: a project in a
//! temporary folder outside the workspace, made without `--path` (a `cargo-sluice` built
//! from this checkout depends on this checkout), no `SLUICE_*` variable set, built,
//! CPU-tested, run (it says when there is no GPU) and checked with ptxas. Then the errors a
//! user meets in it: the toolchain missing (the message names `cargo sluice setup`), a
//! kernel crate that uses `std`; and `cargo sluice new` given a path, as `cargo new` is.
//!
//! Needs the kernel toolchain (`cargo xtask setup`; CI runs it first). Several minutes on
//! a fresh machine (the project builds its own dependencies and `core` for the GPU once);
//! the project's `target/` is kept between runs.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn checkout() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("cargo-sluice is inside the checkout").to_path_buf()
}

/// A command with the environment of a fresh shell: no variable of the cargo running this
/// test (CARGO_MANIFEST_DIR would make the builder think it is in sluice's workspace), no
/// SLUICE_* variable.
fn user_command(program: impl AsRef<std::ffi::OsStr>, dir: &Path) -> Command {
    let mut cmd = Command::new(program);
    cmd.env_clear().current_dir(dir);
    for (k, v) in sluice_builder::toolchain::scrubbed_env() {
        let key = k.to_string_lossy();
        if !key.starts_with("SLUICE_") && !key.starts_with("CUDA_") {
            cmd.env(k, v);
        }
    }
    cmd
}

fn cargo(dir: &Path) -> Command {
    user_command(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()), dir)
}

fn cargo_sluice(dir: &Path) -> Command {
    let mut cmd = user_command(env!("CARGO_BIN_EXE_cargo-sluice"), dir);
    cmd.arg("sluice"); // as `cargo sluice …` runs it
    cmd
}

fn run(cmd: &mut Command, what: &str) -> String {
    let out = output(cmd);
    let text = text(&out);
    assert!(out.status.success(), "`{what}` failed ({}):\n{text}", out.status);
    text
}

fn output(cmd: &mut Command) -> Output {
    cmd.output().unwrap_or_else(|e| panic!("could not start {cmd:?}: {e}"))
}

fn text(out: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
}

/// `<tmp>/sluice-new-<hash of this checkout>`: outside the workspace, one per checkout.
fn base_dir() -> PathBuf {
    let key = checkout()
        .to_string_lossy()
        .bytes()
        .fold(0xcbf29ce484222325u64, |h, b| (h ^ b as u64).wrapping_mul(0x100000001b3));
    std::env::temp_dir().join(format!("sluice-new-{:08x}", key as u32))
}

#[test]
fn a_new_project_builds_runs_its_cpu_tests_and_passes_ptxas() {
    let base = base_dir();
    let project = base.join("demo");
    assert!(!project.starts_with(checkout()), "the project must be outside the workspace");
    // Keep the project's target folder from an earlier run (its dependencies and `core`).
    let kept = base.join("target-kept");
    std::fs::create_dir_all(&base).unwrap();
    if project.join("target").is_dir() {
        let _ = std::fs::remove_dir_all(&kept);
        std::fs::rename(project.join("target"), &kept).unwrap();
    }
    let _ = std::fs::remove_dir_all(&project);

    let checkout = checkout();
    let said = run(cargo_sluice(&base).args(["new", "demo"]), "cargo sluice new demo");
    assert!(said.contains("everything the kernel build and the PTX check need is here"), "{said}");
    assert!(said.contains(&format!("sluice from the checkout {}", checkout.display())), "{said}");
    let manifest = std::fs::read_to_string(project.join("Cargo.toml")).unwrap();
    assert!(!manifest.contains("example.invalid") && manifest.contains("path = "), "{manifest}");
    let readme = std::fs::read_to_string(project.join("README.md")).unwrap();
    assert!(readme.contains(&format!("[sluice]({})", checkout.display())), "{readme}");
    if kept.is_dir() {
        std::fs::rename(&kept, project.join("target")).unwrap();
    }

    let built = run(cargo(&project).arg("build"), "cargo build");
    assert!(!built.contains("warning"), "the template builds without warnings:\n{built}");
    let generated = std::fs::read_dir(project.join("target/debug/build"))
        .unwrap()
        .flatten()
        .map(|e| e.path().join("out/sluice-kernels/demo_kernels.rs"))
        .find(|p| p.is_file())
        .expect("build.rs wrote the kernel handles");
    let handles = std::fs::read_to_string(generated).unwrap();
    assert!(
        handles.contains("krate: demo_kernels,")
            && handles.contains("entries: [saxpy = __sluice_kernel_saxpy, tiled_sum = __sluice_kernel_tiled_sum],"),
        "{handles}"
    );
    // The nested kernel build went into the project's own target folder.
    assert!(project.join("target/sluice-kernels").is_dir());

    let tested = run(cargo(&project).arg("test"), "cargo test");
    assert!(tested.contains("test tests::axpy_is_a_times_x_plus_y ... ok"), "{tested}");
    assert!(tested.contains("test tests::the_reference_sums_each_tile ... ok"), "{tested}");
    // The kernels themselves, on the CPU backend, checked (a debug build).
    assert!(tested.contains("test tests::the_kernels_match_the_reference_on_the_cpu_backend ... ok"), "{tested}");

    // A user's racing kernel fails `cargo test` on this machine (no GPU needed), the
    // message naming both accesses: the tree reduction without its barrier, where thread
    // t reads the element thread t + half writes in the same step.
    let lib = project.join("kernels/src/lib.rs");
    let original = std::fs::read_to_string(&lib).unwrap();
    let barrier = "        sync::sync_threads(); // __syncthreads(): the previous step's writes are visible\n";
    assert!(original.contains(barrier), "the template's reduction has its barrier:\n{original}");
    std::fs::write(&lib, original.replace(barrier, "")).unwrap();
    let out = output(cargo(&project).arg("test"));
    std::fs::write(&lib, &original).unwrap();
    let said = text(&out);
    assert!(!out.status.success(), "{said}");
    // The reduction's line, one up now that the barrier above it is gone (0-based index
    // of the original = 1-based line of the edited file).
    let reduction =
        original.lines().position(|l| l.contains("tile.set(t, tile.get(t) + tile.get(t + half));")).unwrap();
    let at = format!("kernels/src/lib.rs:{reduction}:");
    assert!(said.contains("kernel `tiled_sum`") && said.contains("data race on shared memory"), "{said}");
    // The shared variable's declaration and both accesses, one of them the reduction's.
    assert!(said.contains(&at) && said.matches("kernels/src/lib.rs:").count() >= 3, "({at}):\n{said}");

    let ran = run(cargo(&project).arg("run"), "cargo run");
    // The kernels ran and matched their reference: on the GPU where there is one, else on
    // the CPU backend.
    assert!(ran.contains("results match the CPU reference on"), "{ran}");

    // Run in the host package's source folder: it finds the project's kernel crate.
    let checked = run(cargo_sluice(&project.join("src")).arg("check"), "cargo sluice check");
    for want in ["kernel", "saxpy", "tiled_sum", "no function spills"] {
        assert!(checked.contains(want), "`cargo sluice check` does not mention {want}:\n{checked}");
    }
    let help = run(cargo_sluice(&project).args(["check", "--help"]), "cargo sluice check --help");
    assert!(help.contains("--all-functions") && help.contains("--allow-spills"), "{help}");
    let doctor = run(cargo_sluice(&project).arg("doctor"), "cargo sluice doctor");
    assert!(doctor.contains("kernel crates") && doctor.contains("kernels"), "{doctor}");

    // Errors a user meets. The toolchain missing: the message names `cargo sluice setup`.
    let out = output(cargo(&project).arg("build").env("SLUICE_KERNEL_RUSTC", "/nonexistent/rustc"));
    let said = text(&out);
    assert!(!out.status.success(), "{said}");
    assert!(said.contains("kernel compiler") && said.contains("run `cargo sluice setup`"), "{said}");
    assert!(!said.contains("cargo xtask"), "a user project has no `cargo xtask`:\n{said}");

    // A kernel crate that is not no_std-clean: the hint says what to do.
    let lib = project.join("kernels/src/lib.rs");
    let original = std::fs::read_to_string(&lib).unwrap();
    std::fs::write(
        &lib,
        format!("{original}\npub fn doubled(x: &[f32]) -> Vec<f32> {{ x.iter().map(|v| 2.0 * v).collect() }}\n"),
    )
    .unwrap();
    let out = output(cargo(&project).arg("build"));
    std::fs::write(&lib, original).unwrap();
    let said = text(&out);
    assert!(!out.status.success(), "{said}");
    assert!(said.contains("cannot find type `Vec`"), "{said}");
    assert!(said.contains("hint: kernel crates are `no_std` on the GPU"), "{said}");
}

#[test]
fn new_takes_a_path_and_names_the_package_after_its_last_folder() {
    let base = base_dir().join(format!("paths-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&base);
    std::fs::create_dir_all(&base).unwrap();
    let said = run(
        cargo_sluice(&base).args(["new", "projects/gpu/my-app", "--no-setup"]),
        "cargo sluice new projects/gpu/my-app",
    );
    let manifest = std::fs::read_to_string(base.join("projects/gpu/my-app/Cargo.toml")).unwrap();
    assert!(manifest.contains("name = \"my-app\""), "{said}\n{manifest}");
    assert!(base.join("projects/gpu/my-app/kernels/Cargo.toml").is_file());
    // A folder whose name is no package name: refused, and the message says how to keep it.
    let out = output(cargo_sluice(&base).args(["new", "2024-run", "--no-setup"]));
    let said = text(&out);
    assert!(!out.status.success() && said.contains("--name"), "{said}");
    run(cargo_sluice(&base).args(["new", "2024-run", "--name", "run2024", "--no-setup"]), "--name");
    assert!(std::fs::read_to_string(base.join("2024-run/Cargo.toml")).unwrap().contains("name = \"run2024\""));
    std::fs::remove_dir_all(&base).unwrap();
}
