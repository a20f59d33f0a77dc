//! `cargo xtask`: sluice's developer commands (matklad's cargo-xtask pattern).
//!
//! | command | what it does |
//! | --- | --- |
//! | `setup` | finds or installs the kernel toolchain and `ptxas`, idempotently |
//! | `build-ptx [--arch sm_XX] [--release\|--debug]` | compiles `gpu-kernels` to `target/ptx/gpu-kernels.ptx` |
//! | `check-ptx [--arch sm_XX]... [--allow-spills]` | assembles the PTX with `ptxas`, prints every function's resources (kernels and device functions), fails on a spill or on serialized warpgroup MMAs |
//! | `test` | the README's test command: `setup`, then `cargo test --workspace` |
//! | `ci` | exactly what `.ci/run` runs after setup: `cargo fmt --check`, `check-ptx` for sm_90, sm_90a and sm_80, `cargo clippy -D warnings`, `cargo package` of every published crate, `cargo test --workspace` |
//! | `bless` | regenerates the compile-fail `.stderr` files (`TRYBUILD=overwrite`) |
//! | `bundle` | builds every test and bench binary into `bundle/` with `bundle/run.sh`, for a GPU machine without Rust |
//! | `demo [lanes]` | the README's main command: `setup`, then the seed example (`examples/seed_columns.rs`) |
//! | `ptx-snapshot DIR`, `ptx-diff BEFORE AFTER` | the PTX of every kernel module (sluice's, `ports`', `cuda-std`'s test kernels, the template's) for sm_90 and sm_80; the diff of two snapshots, blind only to hashed names and assertion sites ([`ptx_diff`]) |
//! | `port-rust-cuda <checkout> [filter]` | the porting guide's diff applied to each of Rust-CUDA's example and compile-test kernel crates, each built to PTX (ptxas) and with its host program: a table and the counts ([`rust_cuda`]) |
//! | `bench [kernels\|all]` | on a GPU machine: every benchmark (kernels vs nvcc, the seed workload, launch overhead; `kernels` and `all` run the same set); elsewhere: says how to bundle them |

#![forbid(unsafe_code)]

mod rust_cuda;

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::time::Instant;

use sluice_builder::setup::Setup;
use sluice_builder::toolchain::{self, Frontend, Locations};
use sluice_builder::{
    check_ptx, deny_spills, deny_wgmma_serialization, Arch, BuildError, Builder, FunctionKind, Profile,
};

mod ptx_diff;

const USAGE: &str = "usage: cargo xtask <command>

commands:
  setup                               find or install the kernel toolchain and ptxas
  build-ptx [--arch sm_XX] [--release|--debug]
                                      compile gpu-kernels to target/ptx/gpu-kernels.ptx
  check-ptx [--arch sm_XX]... [--allow-spills]
                                      assemble the PTX with ptxas (default sm_90), print every
                                      function's resources, fail on a spill unless allowed
  ptx-snapshot DIR                    build the PTX of every kernel module (sm_90, sm_80) into DIR
  ptx-diff BEFORE AFTER               compare two snapshots, blind only to hashed names and
                                      assertion sites; fails on any other difference
  test                                setup, then run the test suite (cargo test --workspace)
  ci                                  fmt --check, check-ptx sm_90 sm_90a sm_80, clippy -D warnings,
                                      package, test: what .ci/run runs after setup
  bless                               regenerate the compile-fail .stderr files
  bundle                              build test and bench binaries into bundle/ for a GPU machine
  demo [lanes]                        setup, then run the seed example on the GPU
  sanitize                            compute-sanitizer (memcheck, racecheck, synccheck, initcheck)
                                      over the GPU tests and the demo (GPU machine), one table
  soak                                the fault, recovery, soak and host-thread tests (GPU machine),
                                      one table
  port-rust-cuda <Rust-CUDA checkout> [filter]
                                      apply docs/porting-rust-cuda.md's diff to every kernel crate
                                      of Rust-CUDA's examples and compile tests, build each to PTX
                                      (ptxas) and its host program; a table and the counts
  bench [all|kernels|seed|graph|launch|ports|multi]
                                      run the benchmarks (GPU machine) or explain how";

type Result<T = ()> = std::result::Result<T, String>;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some((cmd, rest)) = args.split_first() else {
        eprintln!("{USAGE}");
        return ExitCode::from(2);
    };
    let result = match cmd.as_str() {
        "setup" => setup(rest),
        "build-ptx" => build_ptx(rest).map(|_| ()),
        "check-ptx" => check(rest),
        "ptx-snapshot" => ptx_diff::snapshot(rest),
        "ptx-diff" => ptx_diff::diff(rest),
        "test" => setup(&[]).and_then(|()| cargo(&["test", "--workspace"])),
        "ci" => ci(),
        "bless" => bless(),
        "bundle" => bundle(),
        "demo" => demo(rest),
        "bench" => bench(rest),
        "port-rust-cuda" => rust_cuda::run(rest),
        "sanitize" => on_gpu("sanitize", "sanitize"),
        "soak" => on_gpu("soak", "soak"),
        "help" | "-h" | "--help" => {
            println!("{USAGE}");
            Ok(())
        }
        other => Err(format!("unknown command `{other}`\n\n{USAGE}")),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xtask: {e}");
            ExitCode::FAILURE
        }
    }
}

fn root() -> PathBuf {
    // xtask/ lives directly under the workspace root.
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("xtask is inside the workspace").to_path_buf()
}

fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR").map(PathBuf::from).unwrap_or_else(|| root().join("target"))
}

/// Where setup installs ptxas and libdevice: the same per-user folder the builder looks
/// in (`SLUICE_TOOLS_DIR`, else `$XDG_CACHE_HOME/sluice` or `~/.cache/sluice`).
fn locations() -> Locations {
    Locations::default()
}

fn run(cmd: &mut Command) -> Result {
    let status = cmd.status().map_err(|e| format!("could not start {:?}: {e}", cmd.get_program()))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("{:?} failed ({status})", cmd))
    }
}

fn cargo(args: &[&str]) -> Result {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    run(Command::new(cargo).args(args).current_dir(root()))
}

// ---------------------------------------------------------------------------
// setup

fn setup(args: &[String]) -> Result {
    if let Some(a) = args.first() {
        return Err(format!("setup takes no arguments (got `{a}`)"));
    }
    // The same code as `cargo sluice setup`, naming this workspace's command in its errors.
    let report = Setup::new()
        .frontend(Frontend::Xtask)
        .locations(locations())
        .install(&mut |line| println!("setup: {line}"))
        .map_err(|e| e.to_string())?;
    println!("\n{report}");
    Ok(())
}

// ---------------------------------------------------------------------------
// build-ptx, check-ptx

struct PtxArgs {
    archs: Vec<Arch>,
    profile: Profile,
    allow_spills: bool,
}

fn parse_ptx_args(args: &[String]) -> Result<PtxArgs> {
    let mut out = PtxArgs { archs: Vec::new(), profile: Profile::Release, allow_spills: false };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--arch" => {
                let v = it.next().ok_or("--arch needs a value, e.g. --arch sm_80")?;
                out.archs.push(v.parse().map_err(|e: BuildError| e.to_string())?);
            }
            "--release" => out.profile = Profile::Release,
            "--debug" => out.profile = Profile::Debug,
            "--allow-spills" => out.allow_spills = true,
            s if s.starts_with("--arch=") => {
                out.archs.push(s["--arch=".len()..].parse().map_err(|e: BuildError| e.to_string())?)
            }
            other => return Err(format!("unknown argument `{other}`\n\n{USAGE}")),
        }
    }
    if out.archs.is_empty() {
        out.archs.push(Arch::default());
    }
    Ok(out)
}

/// `target/ptx/gpu-kernels.ptx` for the default architecture, `gpu-kernels.<arch>.ptx` otherwise.
fn ptx_path(arch: Arch) -> PathBuf {
    let name = if arch == Arch::default() { "gpu-kernels.ptx".to_string() } else { format!("gpu-kernels.{arch}.ptx") };
    target_dir().join("ptx").join(name)
}

fn build_ptx(args: &[String]) -> Result<Vec<(Arch, PathBuf)>> {
    let a = parse_ptx_args(args)?;
    let mut built = Vec::new();
    for arch in a.archs {
        let started = Instant::now();
        let out = Builder::new(root().join("gpu-kernels"))
            .arch(arch)
            .profile(a.profile)
            .tools_dir(locations().tools_dir)
            .copy_to(ptx_path(arch))
            .build()
            .map_err(|e| e.to_string())?;
        println!(
            "built {} for {arch} in {:.1} s{}",
            out.ptx.display(),
            started.elapsed().as_secs_f64(),
            if out.libdevice.is_some() { " (libdevice linked)" } else { "" }
        );
        for k in &out.kernels {
            println!("  .entry {k}");
        }
        for n in &out.notes {
            eprintln!("warning: {n}");
        }
        built.push((arch, out.ptx));
    }
    Ok(built)
}

fn check(args: &[String]) -> Result {
    let ptxas = toolchain::find_ptxas(&locations()).map_err(|e| e.to_string())?;
    let allow_spills = parse_ptx_args(args)?.allow_spills;
    let built = build_ptx(args)?;
    let mut rows = Vec::new();
    for (arch, ptx) in &built {
        let resources = check_ptx(&ptxas, ptx, *arch).map_err(|e| e.to_string())?;
        if !resources.iter().any(|r| r.kind == FunctionKind::Entry) {
            return Err(format!("ptxas reported no kernel in {}", ptx.display()));
        }
        rows.extend(resources.iter().cloned().map(|r| (*arch, ptx.clone(), r)));
    }
    println!("\nptxas {} accepted every kernel:", ptxas.display());
    println!(
        "  {:<8} {:<6} {:>5} {:>10} {:>11} {:>13}  function",
        "arch", "kind", "regs", "smem (B)", "stack (B)", "spills st/ld"
    );
    for (arch, _, r) in &rows {
        let (kind, regs) = match r.kind {
            FunctionKind::Entry => ("entry", r.registers.to_string()),
            _ => ("func", "-".to_string()),
        };
        println!(
            "  {:<8} {:<6} {:>5} {:>10} {:>11} {:>6}/{:<6}  {}",
            arch.to_string(),
            kind,
            regs,
            r.shared_bytes,
            r.stack_frame_bytes,
            r.spill_store_bytes,
            r.spill_load_bytes,
            r.name
        );
    }
    if !allow_spills {
        for (arch, ptx) in &built {
            let of_arch: Vec<_> =
                rows.iter().filter(|(a, p, _)| a == arch && p == ptx).map(|(_, _, r)| r.clone()).collect();
            deny_spills(ptx, *arch, &of_arch, "cargo xtask check-ptx --allow-spills").map_err(|e| e.to_string())?;
        }
    }
    for (arch, ptx) in &built {
        deny_wgmma_serialization(&ptxas, ptx, *arch).map_err(|e| e.to_string())?;
    }
    Ok(())
}

// ---------------------------------------------------------------------------
// ci, bless, demo, bench

/// What CI runs after setup (`.ci/run` calls exactly this, so the two cannot drift): the
/// cheap checks first.
fn ci() -> Result {
    step("cargo fmt --all --check");
    cargo(&["fmt", "--all", "--check"])?;
    step("check-ptx --arch sm_90 --arch sm_90a --arch sm_80");
    check(&["--arch".into(), "sm_90".into(), "--arch".into(), "sm_90a".into(), "--arch".into(), "sm_80".into()])?;
    step("cargo clippy --workspace --all-targets -- -D warnings");
    cargo(&["clippy", "--workspace", "--all-targets", "--", "-D", "warnings"])?;
    step("cargo package: every published crate, verified");
    package()?;
    step("cargo test --workspace");
    cargo(&["test", "--workspace"])
}

/// `cargo package` of every published crate, each built from its own `.crate` file, so that
/// `cargo publish --workspace` is one command that works: versions on every path dependency,
/// the metadata crates.io asks for, every file a build needs inside its package. The
/// workspace's own crates resolve to each other's packages locally (a recent cargo: 1.95 here),
/// not from crates.io. `--allow-dirty`: what is checked is the packages, not the work tree.
/// The members marked `publish = false` are left out, read from their manifests (a list kept
/// here would miss the next test crate).
///
/// The verification builds go to a target folder of their own, emptied first: cargo takes a
/// built registry package as immutable, so the local packages of an earlier run (the same
/// names and versions, older sources) would be reused in place of today's.
///
/// Cargo also unpacks each local package once into `$CARGO_HOME/registry/src/-HASH/`, the
/// hash naming the local registry's path, and reuses that copy in later runs: the
/// workspace's own copies there are removed first too.
fn package() -> Result {
    let (published, unpublished) = members()?;
    let verify = target_dir().join("package-verify");
    if verify.exists() {
        std::fs::remove_dir_all(&verify).map_err(|e| format!("emptying {}: {e}", verify.display()))?;
    }
    forget_unpacked_packages(&published)?;
    let verify = verify.to_string_lossy().into_owned();
    let mut args = vec!["package", "--workspace", "--allow-dirty", "--target-dir", verify.as_str()];
    for p in &unpublished {
        args.extend(["--exclude", p.as_str()]);
    }
    cargo(&args)
}

/// Removes cargo's unpacked copies of the packages `names` from its local registries
/// (`$CARGO_HOME/registry/src/-HASH/NAME-VERSION`; crates.io's folder is not one of them).
fn forget_unpacked_packages(names: &[String]) -> Result {
    let home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")));
    let Some(src) = home.map(|h| h.join("registry").join("src")) else { return Ok(()) };
    let Ok(registries) = std::fs::read_dir(&src) else { return Ok(()) };
    for registry in registries.flatten() {
        if !registry.file_name().to_string_lossy().starts_with('-') {
            continue;
        }
        let Ok(packages) = std::fs::read_dir(registry.path()) else { continue };
        for package in packages.flatten() {
            let file = package.file_name().to_string_lossy().into_owned();
            let ours = names.iter().any(|n| {
                file.strip_prefix(n.as_str())
                    .and_then(|rest| rest.strip_prefix('-'))
                    .is_some_and(|v| v.starts_with(|c: char| c.is_ascii_digit()))
            });
            if ours {
                std::fs::remove_dir_all(package.path())
                    .map_err(|e| format!("removing {}: {e}", package.path().display()))?;
            }
        }
    }
    Ok(())
}

/// The workspace members' names: (published, `publish = false`).
fn members() -> Result<(Vec<String>, Vec<String>)> {
    let cargo_bin = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let out = Command::new(cargo_bin)
        .args(["metadata", "--format-version", "1", "--no-deps"])
        .current_dir(root())
        .stderr(std::process::Stdio::inherit())
        .output()
        .map_err(|e| format!("could not start cargo metadata: {e}"))?;
    if !out.status.success() {
        return Err("cargo metadata failed".into());
    }
    let json = String::from_utf8_lossy(&out.stdout);
    let (mut published, mut unpublished) = (Vec::new(), Vec::new());
    for manifest in json_strings(&json, "manifest_path") {
        let text = std::fs::read_to_string(manifest).map_err(|e| format!("reading {manifest}: {e}"))?;
        match package_table(&text) {
            Some((name, false)) => published.push(name),
            Some((name, true)) => unpublished.push(name),
            None => {}
        }
    }
    Ok((published, unpublished))
}

/// Every string value of `"key":"…"` in cargo's JSON (paths have no escaped quotes).
fn json_strings<'a>(json: &'a str, key: &str) -> Vec<&'a str> {
    let tag = format!("\"{key}\":\"");
    json.match_indices(&tag)
        .filter_map(|(at, _)| {
            let from = at + tag.len();
            json[from..].find('"').map(|end| &json[from..from + end])
        })
        .collect()
}

/// The package's name if its manifest's `[package]` table says `publish = false`.
#[cfg(test)]
fn unpublished_name(manifest: &str) -> Option<String> {
    package_table(manifest).and_then(|(name, unpublished)| unpublished.then_some(name))
}

/// The `[package]` table's name, and whether it says `publish = false`.
fn package_table(manifest: &str) -> Option<(String, bool)> {
    let mut in_package = false;
    let (mut name, mut unpublished) = (None, false);
    for line in manifest.lines().map(str::trim) {
        if line.starts_with('[') {
            in_package = line == "[package]";
            continue;
        }
        if !in_package {
            continue;
        }
        let Some((key, value)) = line.split_once('=') else { continue };
        match key.trim() {
            "name" => name = Some(value.trim().trim_matches('"').to_string()),
            "publish" => unpublished = value.trim() == "false",
            _ => {}
        }
    }
    name.map(|n| (n, unpublished))
}

fn step(what: &str) {
    println!("\n== {what} ==");
}

fn bless() -> Result {
    let cargo_bin = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    // The workspace's suite (edition 2021), then the kernel cases again as edition 2024.
    for package in ["sluice", "sluice-kernel-ui-2024"] {
        run(Command::new(&cargo_bin)
            .args(["test", "-p", package, "--test", "compiletest"])
            .env("TRYBUILD", "overwrite")
            .current_dir(root()))?;
    }
    println!(
        "blessed: now read `git diff tests/ui tests/edition2024/tests/ui` — each error must point at the misuse its \
         case names"
    );
    Ok(())
}

fn demo(args: &[String]) -> Result {
    setup(&[])?;
    let mut a = vec!["run", "--release", "--example", "seed_columns", "--"];
    a.extend(args.iter().map(String::as_str));
    cargo(&a)
}

fn gpu_present() -> bool {
    Path::new("/dev/nvidiactl").exists() || Path::new("/proc/driver/nvidia/version").exists()
}

/// Builds the bundle and runs `bash bundle/run.sh MODE` here if this machine has a GPU, or
/// says how to run it on one.
fn on_gpu(command: &str, mode: &str) -> Result {
    if !gpu_present() {
        println!(
            "{command}: no NVIDIA GPU here. Build the bundle with `cargo xtask bundle`, copy bundle/ to the GPU \
             machine (it needs the NVIDIA driver and compute-sanitizer, not Rust) and run `bash bundle/run.sh {mode}`."
        );
        return Ok(());
    }
    bundle()?;
    run(Command::new("bash").arg(root().join("bundle/run.sh")).arg(mode))
}

fn bench(args: &[String]) -> Result {
    const MODES: &[&str] = &["all", "kernels", "seed", "graph", "launch", "ports", "multi"];
    let what = args.first().map(String::as_str).unwrap_or("all");
    if !MODES.contains(&what) {
        return Err(format!("unknown benchmark set `{what}` (known: {})", MODES.join(", ")));
    }
    if !gpu_present() {
        println!(
            "bench: no NVIDIA GPU here. Build the bundle with `cargo xtask bundle`, copy bundle/ to the GPU \
             machine (it needs the NVIDIA driver, nvcc and python3, not Rust) and run `bash bundle/run.sh bench {what}`."
        );
        return Ok(());
    }
    bundle()?;
    run(Command::new("bash").arg(root().join("bundle/run.sh")).arg("bench").arg(what))
}

// ---------------------------------------------------------------------------
// bundle

/// Builds every test executable and the example/bench binaries (all release), strips
/// them and copies them with the CUDA C++ benchmark sources and `run.sh` into `bundle/`.
fn bundle() -> Result {
    let dir = root().join("bundle");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("tests")).map_err(|e| e.to_string())?;
    std::fs::create_dir_all(dir.join("bin")).map_err(|e| e.to_string())?;

    // Only what runs on the GPU machine: the GPU tests (gpu_*, kernels_smoke) and the
    // programs, not the compile-fail suite, tidy, the builder's tests or the tools.
    let file_name = |p: &PathBuf| p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let tests: Vec<PathBuf> = cargo_executables(&["test", "--workspace", "--no-run", "--release"])?
        .into_iter()
        .filter(|p| {
            let n = file_name(p);
            n.starts_with("gpu_") || n.starts_with("kernels_smoke")
        })
        .collect();
    for exe in &tests {
        copy_stripped(exe, &dir.join("tests"))?;
    }
    const TOOLS: &[&str] = &["xtask", "cargo-sluice", "sluice-llbc", "cpu_micro"];
    let bins: Vec<PathBuf> = cargo_executables(&["build", "--release", "--examples", "--bins", "--workspace"])?
        .into_iter()
        .filter(|p| !TOOLS.contains(&file_name(p).as_str()))
        .collect();
    for exe in &bins {
        copy_stripped(exe, &dir.join("bin"))?;
    }
    let benches = root().join("benches");
    if benches.is_dir() {
        run(Command::new("cp").arg("-r").arg(&benches).arg(dir.join("benches")))?;
        // The measured kernels' sources, for the bench table's `unsafe` column (join.py).
        let sources = dir.join("benches/sources");
        std::fs::create_dir_all(&sources).map_err(|e| e.to_string())?;
        for (from, to) in
            [("gpu-kernels/src/device.rs", "gpu-kernels.rs"), ("ports/kernels/src/lib.rs", "ports-kernels.rs")]
        {
            std::fs::copy(root().join(from), sources.join(to)).map_err(|e| format!("copying {from}: {e}"))?;
        }
    }
    std::fs::write(dir.join("run.sh"), RUN_SH).map_err(|e| e.to_string())?;
    let size: u64 = walk(&dir).iter().filter_map(|p| p.metadata().ok()).map(|m| m.len()).sum();
    println!(
        "bundle: {} test binaries, {} programs, {:.1} MiB in {}",
        tests.len(),
        bins.len(),
        size as f64 / (1 << 20) as f64,
        dir.display()
    );
    if size > 60 << 20 {
        // Not an error: the bundle runs as it is; only a transfer with a size limit (the
        // device machine's carry is 64 MiB) needs a part of it.
        println!(
            "note: the bundle is over 60 MiB; to carry it where transfers are limited, leave out what the run does \
             not use (bin/bench_multi, bin/seed_multi and tests/gpu_multi-* need two GPUs; bin/bench_cpu runs \
             without one)"
        );
    }
    Ok(())
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Ok(rd) = std::fs::read_dir(dir) {
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                out.extend(walk(&p));
            } else {
                out.push(p);
            }
        }
    }
    out
}

fn cargo_executables(args: &[&str]) -> Result<Vec<PathBuf>> {
    let cargo_bin = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let out = Command::new(cargo_bin)
        .args(args)
        .args(["--message-format", "json-render-diagnostics"])
        .current_dir(root())
        .stderr(std::process::Stdio::inherit())
        .output()
        .map_err(|e| e.to_string())?;
    if !out.status.success() {
        return Err(format!("cargo {} failed", args.join(" ")));
    }
    let mut exes: Vec<PathBuf> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| l.contains("\"reason\":\"compiler-artifact\""))
        .filter_map(|l| {
            let at = l.find("\"executable\":\"")? + "\"executable\":\"".len();
            let end = l[at..].find('"')?;
            Some(PathBuf::from(&l[at..at + end]))
        })
        .filter(|p| !p.to_string_lossy().contains("/build/"))
        .collect();
    exes.sort();
    exes.dedup();
    Ok(exes)
}

fn copy_stripped(exe: &Path, dest_dir: &Path) -> Result {
    let name = exe.file_name().ok_or("executable without a name")?;
    let dest = dest_dir.join(name);
    std::fs::copy(exe, &dest).map_err(|e| format!("copying {}: {e}", exe.display()))?;
    // Best effort: an unstripped binary still runs.
    let _ = Command::new("strip").arg(&dest).status();
    Ok(())
}

const RUN_SH: &str = r#"#!/usr/bin/env bash
# Runs sluice's bundled test binaries and benchmarks on a GPU machine (no Rust needed).
#   bash bundle/run.sh [tests|sanitize|soak|demo|bench [MODE]|all]    (default: all)
#   tests     every GPU test on CUDA device 0 (the `on_cuda` variants and the CUDA-only
#             tests: `--ignored`; the CPU variants ran in CI);
#   sanitize  compute-sanitizer memcheck, racecheck, synccheck and initcheck over the
#             graph, hand-off, submission and device-kernel tests, the seed demo, the seed
#             benchmark's natural program (merged copies, cached graphs) and the streaming
#             example;
#   soak      the fault, recovery, soak and host-thread tests, one table (not in all:
#             `tests` runs them too);
#   demo      the seed workload (bin/seed_columns);
#   bench     benches/run.sh MODE (all, kernels, seed, graph, launch, ports, multi).
# The logs of tests, sanitize, soak and demo go to $OUT/logs-MODE.tar.gz (one file: the GPU machine
# returns at most 8); the benchmarks write their own files. A short table is printed last.
set -u
here="$(cd "$(dirname "$0")" && pwd)"
out="${OUT:-$here/logs}"
mkdir -p "$out"
what="${1:-all}"
bench_mode="${2:-all}"
logs="$(mktemp -d /tmp/sluice-logs.XXXXXX)"
summary=()
want() { [ "$what" = all ] || [ "$what" = "$1" ]; }
t0=$SECONDS

if want tests; then
  for t in "$here"/tests/*; do
    [ -x "$t" ] || continue
    name="$(basename "$t")"; name="${name%-*}"
    case "$name" in compiletest|tidy|linker_race|missing_tools|kernel_errors|new_project|ptx|lints) continue ;; esac
    log="$logs/test-$name.log"
    # The tests that need two GPUs fail (never pass) with fewer: skipped here, and said so.
    extra=(); note=""
    if [ "$name" = gpu_multi ] && [ "$(nvidia-smi -L 2>/dev/null | wc -l)" -lt 2 ]; then
      extra=(--skip on_two_gpus); note=" (on_two_gpus skipped: fewer than 2 GPUs)"
    fi
    timeout "${SLUICE_TEST_TIMEOUT:-300}" "$t" --ignored --test-threads=1 --nocapture ${extra[@]+"${extra[@]}"} >"$log" 2>&1
    rc=$?
    res="$(grep -E '^test result:' "$log" | tail -n 1)$note"
    # A binary without GPU tests runs none: list only those that ran something or failed.
    case "$res" in *" 0 passed; 0 failed"*) [ $rc -eq 0 ] && continue ;; esac
    summary+=("$(printf '%-28s rc=%-3s %s' "$name" "$rc" "${res#test result: }")")
  done
fi

if want sanitize; then
  cs="$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)"
  # tool, test binary (or bin/<program>), test filter: memcheck everywhere; the shared
  # memory checks (racecheck, synccheck) on the self-test (barriers, shuffles, shared
  # atomics) and the seed demo; initcheck on hand-offs and the demo.
  for job in "memcheck gpu_graph on_cuda::" "memcheck gpu_handoff on_cuda::" \
             "memcheck gpu_device_kernels on_cuda::device_selftest" "memcheck gpu_device_kernels on_cuda::transpose_is" \
             "memcheck bin/seed_columns 4 65536 256" \
             "racecheck gpu_device_kernels on_cuda::device_selftest" "racecheck gpu_device_kernels on_cuda::histogram" \
             "racecheck gpu_graph on_cuda::" "synccheck gpu_graph on_cuda::" \
             "racecheck bin/seed_columns 4 65536 256" \
             "synccheck gpu_device_kernels on_cuda::device_selftest" "synccheck bin/seed_columns 4 65536 256" \
             "initcheck gpu_handoff on_cuda::" "initcheck gpu_graph on_cuda::scalar" "initcheck bin/seed_columns 4 65536 256" \
             "memcheck gpu_submit on_cuda::" "racecheck gpu_submit on_cuda::" "initcheck gpu_submit on_cuda::" \
             "memcheck bin/bench_seed many-small-128 --reps 4 --warmup 3" \
             "memcheck bin/stream_batches --batch-mib 1 --batches 24 --slots 3 --reps 1" \
             "racecheck bin/stream_batches --batch-mib 1 --batches 24 --slots 3 --reps 1" \
             "initcheck bin/stream_batches --batch-mib 1 --batches 24 --slots 3 --reps 1" \
             "memcheck bin/gemm 300x200x136 --dtype bf16,f16,tf32,bf16_128x256 --warmup 0 --reps 1" \
             "racecheck bin/gemm 300x200x136 --dtype bf16,f16,tf32,bf16_128x256 --warmup 0 --reps 1" \
             "synccheck bin/gemm 300x200x136 --dtype bf16,tf32 --warmup 0 --reps 1" \
             "memcheck bin/gemm 300x200x136 --dtype bf16_wg,f16_wg_128x256 --warmup 0 --reps 1" \
             "racecheck bin/gemm 300x200x136 --dtype bf16_wg,f16_wg_128x256 --warmup 0 --reps 1" \
             "synccheck bin/gemm 300x200x136 --dtype bf16_wg,f16_wg_128x256 --warmup 0 --reps 1"; do
    set -- $job
    tool="$1" target="$2"; shift 2; arg="$*"
    case "$target" in
      bin/*) exe="$here/$target"; args=("$@") ;;
      *) exe="$(ls "$here"/tests/"$target"-* 2>/dev/null | head -n 1)"; args=(--ignored --test-threads=1 "$arg") ;;
    esac
    [ -n "$exe" ] && [ -x "$exe" ] || { summary+=("$(printf '%-40s missing' "$tool:$target")"); continue; }
    log="$logs/sanitize-$tool-$(basename "$target")-${arg//[^a-z_0-9]/}.log"
    # The gemm example uploads from pageable vectors: sluice asks the driver whether they are
    # pinned (cuPointerGetAttribute answers "invalid value" for unregistered memory), which
    # the tools would count as an error; the kernels' accesses are what is checked there.
    quiet=(); [ "$target" = bin/gemm ] && quiet=(--report-api-errors no)
    timeout 300 "$cs" --tool "$tool" ${quiet[@]+"${quiet[@]}"} --error-exitcode 99 "$exe" "${args[@]}" >"$log" 2>&1
    rc=$?
    errs="$(grep -Eo '(ERROR SUMMARY: [0-9]+ error|RACECHECK SUMMARY: [0-9]+ hazard)' "$log" | tail -n 1)"
    res="$(grep -E '^test result:' "$log" | tail -n 1 | grep -Eo '[0-9]+ passed; [0-9]+ failed')"
    summary+=("$(printf '%-40s rc=%-3s %s %s' "$tool:$(basename "$target") $arg" "$rc" "${errs:-no summary}" "$res")")
  done
fi

if [ "$what" = soak ]; then
  # The fault, recovery, out-of-memory, first-launch, soak and host-thread tests: one
  # process each (a fault loses the context for its whole process).
  for t in gpu_faults gpu_first_launch gpu_soak gpu_stress gpu_alloc gpu_bad_input; do
    exe="$(ls "$here"/tests/$t-* 2>/dev/null | head -n 1)"
    [ -n "$exe" ] || { summary+=("$(printf '%-28s missing' "$t")"); continue; }
    log="$logs/soak-$t.log"
    timeout 600 "$exe" --ignored --test-threads=1 --nocapture >"$log" 2>&1
    rc=$?
    res="$(grep -E '^test result:' "$log" | tail -n 1)"
    summary+=("$(printf '%-28s rc=%-3s %s' "$t" "$rc" "${res#test result: }")")
    grep -hE '^(the error|[0-9]+ (scopes|threads)|8 threads|free before|spin_then_fail on)' "$log" | head -n 6
  done
fi

if want demo; then
  if [ -x "$here/bin/seed_columns" ]; then
    timeout 300 "$here/bin/seed_columns" "${SLUICE_DEMO_LANES:-8}" >"$logs/demo.log" 2>&1
    rc=$?
    tail -n 15 "$logs/demo.log"
    summary+=("$(printf '%-28s rc=%s' seed_columns "$rc")")
  fi
fi

if [ "$what" = bench ] || [ "$what" = all ]; then
  if [ -f "$here/benches/run.sh" ]; then
    bash "$here/benches/run.sh" "$here" "$bench_mode"
    summary+=("$(printf '%-28s rc=%s' "bench $bench_mode" "$?")")
  fi
fi

if [ -n "$(ls "$logs")" ]; then
  tar -czf "$out/logs-$what.tar.gz" -C "$logs" .
fi
echo
echo "== summary ($((SECONDS - t0)) s; logs in $out) =="
printf '%s\n' "${summary[@]}"
"#;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unpublished_member_is_read_from_its_package_table() {
        let toml = "[package]\nname = \"abi-check-kernels\"\npublish = false\n\n[dependencies]\nname = \"x\"\n";
        assert_eq!(unpublished_name(toml).as_deref(), Some("abi-check-kernels"));
        assert_eq!(unpublished_name("[package]\nname = \"sluice\"\nversion = \"0.1.0\"\n"), None);
        // `publish` outside [package] says nothing about the package.
        assert_eq!(unpublished_name("[package]\nname = \"a\"\n[workspace.package]\npublish = false\n"), None);
    }

    #[test]
    fn cargo_json_strings_are_found_by_key() {
        let json =
            r#"{"packages":[{"name":"a","manifest_path":"/w/a/Cargo.toml"},{"manifest_path":"/w/b/Cargo.toml"}]}"#;
        assert_eq!(json_strings(json, "manifest_path"), ["/w/a/Cargo.toml", "/w/b/Cargo.toml"]);
    }
}
