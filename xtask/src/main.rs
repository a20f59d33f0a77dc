//! `cargo xtask`: sluice's developer commands (matklad's cargo-xtask pattern).
//!
//! | command | what it does |
//! | --- | --- |
//! | `setup` | finds or installs the kernel toolchain and `ptxas`, idempotently |
//! | `build-ptx [--arch sm_XX] [--release\|--debug]` | compiles `gpu-kernels` to `target/ptx/gpu-kernels.ptx` |
//! | `check-ptx [--arch sm_XX]...` | assembles the PTX with `ptxas`, prints each kernel's resources |
//! | `test` | the README's test command: `setup`, then `cargo test --workspace` |
//! | `ci` | exactly what `.ci/run` runs after installing |
//! | `bless` | regenerates the compile-fail `.stderr` files (`TRYBUILD=overwrite`) |
//! | `bundle` | builds every test and bench binary into `bundle/` with `bundle/run.sh`, for a GPU machine without Rust |
//! | `demo [lanes]` | the README's main command: `setup`, then the seed example (`examples/seed_columns.rs`) |
//! | `bench [kernels\|all]` | on a GPU machine: every benchmark (kernels vs nvcc, the seed workload, launch overhead; `kernels` and `all` run the same set); elsewhere: says how to bundle them |

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::time::Instant;

use sluice_builder::toolchain::{self, Locations};
use sluice_builder::{check_ptx, Arch, BuildError, Builder, Profile};

const USAGE: &str = "usage: cargo xtask <command>

commands:
  setup                               find or install the kernel toolchain and ptxas
  build-ptx [--arch sm_XX] [--release|--debug]
                                      compile gpu-kernels to target/ptx/gpu-kernels.ptx
  check-ptx [--arch sm_XX]...         assemble the PTX with ptxas (default sm_90), print resources
  test                                setup, then run the test suite (cargo test --workspace)
  ci                                  build-ptx, check-ptx sm_90 sm_80, test: what CI runs
  bless                               regenerate the compile-fail .stderr files
  bundle                              build test and bench binaries into bundle/ for a GPU machine
  demo [lanes]                        setup, then run the seed example on the GPU
  bench [kernels|all]                 run every benchmark (GPU machine) or explain how";

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
        "test" => setup(&[]).and_then(|()| cargo(&["test", "--workspace"])),
        "ci" => ci(),
        "bless" => bless(),
        "bundle" => bundle(),
        "demo" => demo(rest),
        "bench" => bench(rest),
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

/// Where setup installs ptxas and libdevice: the same place the builder looks
/// (`SLUICE_TOOLS_DIR`, else `target/sluice-tools` under the workspace root).
fn locations() -> Locations {
    Builder::new(root().join("gpu-kernels")).locations()
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

fn is_root() -> bool {
    Command::new("id").arg("-u").output().map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0").unwrap_or(false)
}

fn have(program: &str) -> bool {
    Command::new(program).arg("--version").output().map(|o| o.status.success()).unwrap_or(false)
}

/// Whether apt knows a package (after an update).
fn apt_candidate(pkg: &str) -> bool {
    Command::new("apt-cache")
        .args(["policy", pkg])
        .output()
        .map(|o| {
            let s = String::from_utf8_lossy(&o.stdout);
            s.contains("Candidate:") && !s.contains("Candidate: (none)")
        })
        .unwrap_or(false)
}

fn setup(args: &[String]) -> Result {
    if let Some(a) = args.first() {
        return Err(format!("setup takes no arguments (got `{a}`)"));
    }
    let started = Instant::now();
    let mut report: Vec<(&str, String, &str)> = Vec::new();

    // 1. The kernel compiler, its library source and LLVM tools.
    let found = toolchain::find_kernel_rustc().and_then(|r| toolchain::find_llvm_bin(&r).map(|l| (r, l)));
    let (rustc, llvm) = match found {
        Ok(pair) => {
            report.push(("kernel rustc", format!("{} ({})", pair.0.rustc.display(), pair.0.release), "found"));
            pair
        }
        Err(missing) => {
            println!("setup: {missing}");
            install_kernel_toolchain()?;
            let r = toolchain::find_kernel_rustc().map_err(|e| e.to_string())?;
            let l = toolchain::find_llvm_bin(&r).map_err(|e| e.to_string())?;
            report.push(("kernel rustc", format!("{} ({})", r.rustc.display(), r.release), "installed"));
            (r, l)
        }
    };
    report.push(("rust-src", rustc.rust_src().display().to_string(), "found"));
    report.push(("llvm-link/opt/llc", llvm.display().to_string(), "found"));

    // 2. ptxas and libdevice.
    let loc = locations();
    match toolchain::find_ptxas(&loc) {
        Ok(p) => report.push(("ptxas", p.display().to_string(), "found")),
        Err(missing) => {
            println!("setup: {missing}");
            install_ptxas(&loc)?;
            let p = toolchain::find_ptxas(&loc).map_err(|e| e.to_string())?;
            report.push(("ptxas", p.display().to_string(), "installed"));
        }
    }
    let libdevice = toolchain::find_libdevice(&loc).map_err(|e| e.to_string())?;
    report.push(("libdevice", libdevice.display().to_string(), "found"));

    println!("\nsluice setup ({:.1} s):", started.elapsed().as_secs_f64());
    for (what, path, status) in &report {
        println!("  {what:<18} {status:<10} {path}");
    }
    Ok(())
}

fn apt_install(packages: &[&str]) -> Result {
    run(Command::new("apt-get")
        .args(["install", "-y", "-q", "--no-install-recommends"])
        .args(packages)
        .env("DEBIAN_FRONTEND", "noninteractive"))
}

fn install_kernel_toolchain() -> Result {
    const DEBIAN: &[&str] = &["rustc-web", "rust-web-src"];
    let apt = have("apt-get");
    if apt && is_root() {
        println!("setup: installing {} with apt-get (Debian route)", DEBIAN.join(" "));
        run(Command::new("apt-get").args(["update", "-q"]))?;
        if DEBIAN.iter().all(|p| apt_candidate(p)) {
            apt_install(DEBIAN)?;
            // LLVM's tools must be the major version this rustc was built with (its
            // bitcode is read by llvm-link): ask the installed rustc, then install that.
            let rustc = toolchain::KernelRustc::probe(Path::new("/usr/bin/rustc")).map_err(|e| e.to_string())?;
            let llvm = format!("llvm-{}", rustc.llvm_major);
            if apt_candidate(&llvm) {
                println!("setup: rustc {} uses LLVM {}: installing {llvm}", rustc.release, rustc.llvm_major);
                return apt_install(&[&llvm]);
            }
            println!("setup: apt knows no {llvm} (rustc {} needs it); trying rustup", rustc.release);
        } else {
            println!("setup: apt knows no {}; trying rustup", DEBIAN.join("/"));
        }
    }
    if have("rustup") {
        println!("setup: installing the nightly toolchain with rustup (rustup route)");
        let rustup = run(Command::new("rustup").args([
            "toolchain",
            "install",
            "nightly",
            "--profile",
            "minimal",
            "--component",
            "rust-src",
            "--component",
            "llvm-tools",
            "--component",
            "llvm-bitcode-linker",
        ]));
        if rustup.is_ok() {
            return Ok(());
        }
    }
    Err(format!(
        "could not install the kernel toolchain. Install one of:\n  \
         sudo apt-get update && sudo apt-get install {} llvm-N (N: the LLVM major of that rustc, \
         `rustc -vV`; 22 for rustc-web 1.96 on Debian 12 with security updates)\n  \
         rustup toolchain install nightly --component rust-src llvm-tools llvm-bitcode-linker\n\
         then run `cargo xtask setup` again",
        DEBIAN.join(" ")
    ))
}

fn install_ptxas(loc: &Locations) -> Result {
    let venv = loc.tools_dir.join("venv");
    let python = ["python3", "python"].into_iter().find(|p| have(p)).ok_or(
        "ptxas comes from PyPI's nvidia-cuda-nvcc, which needs python3 (apt-get install python3 python3-venv), \
         or install a CUDA toolkit / set SLUICE_PTXAS",
    )?;
    println!("setup: installing nvidia-cuda-nvcc (ptxas, libdevice) into {}", venv.display());
    if !venv.join("bin/pip").is_file() {
        std::fs::create_dir_all(&loc.tools_dir).map_err(|e| e.to_string())?;
        let make_venv = || run(Command::new(python).args(["-m", "venv", "--clear"]).arg(&venv));
        if let Err(e) = make_venv() {
            // Debian's python3 keeps `venv`'s pip bootstrap in a separate package.
            if have("apt-get") && is_root() {
                println!("setup: {e}; installing python3-venv");
                run(Command::new("apt-get").args(["update", "-q"]))?;
                apt_install(&["python3-venv"])?;
                make_venv()?;
            } else {
                return Err(format!("{e}\n(on Debian: apt-get install python3-venv, then `cargo xtask setup` again)"));
            }
        }
    }
    run(Command::new(venv.join("bin/pip")).args([
        "install",
        "--quiet",
        "--disable-pip-version-check",
        "nvidia-cuda-nvcc>=13,<14",
    ]))
}

// ---------------------------------------------------------------------------
// build-ptx, check-ptx

struct PtxArgs {
    archs: Vec<Arch>,
    profile: Profile,
}

fn parse_ptx_args(args: &[String]) -> Result<PtxArgs> {
    let mut out = PtxArgs { archs: Vec::new(), profile: Profile::Release };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--arch" => {
                let v = it.next().ok_or("--arch needs a value, e.g. --arch sm_80")?;
                out.archs.push(v.parse().map_err(|e: BuildError| e.to_string())?);
            }
            "--release" => out.profile = Profile::Release,
            "--debug" => out.profile = Profile::Debug,
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
        built.push((arch, out.ptx));
    }
    Ok(built)
}

fn check(args: &[String]) -> Result {
    let ptxas = toolchain::find_ptxas(&locations()).map_err(|e| e.to_string())?;
    let built = build_ptx(args)?;
    let mut rows = Vec::new();
    for (arch, ptx) in &built {
        let resources = check_ptx(&ptxas, ptx, *arch).map_err(|e| e.to_string())?;
        if resources.is_empty() {
            return Err(format!("ptxas reported no kernel in {}", ptx.display()));
        }
        rows.extend(resources.into_iter().map(|r| (*arch, r)));
    }
    println!("\nptxas {} accepted every kernel:", ptxas.display());
    println!("  {:<8} {:<24} {:>5} {:>10} {:>11} {:>13}", "arch", "kernel", "regs", "smem (B)", "stack (B)", "spills (B)");
    for (arch, r) in &rows {
        println!(
            "  {:<8} {:<24} {:>5} {:>10} {:>11} {:>6}/{:<6}",
            arch.to_string(),
            r.name,
            r.registers,
            r.shared_bytes,
            r.stack_frame_bytes,
            r.spill_store_bytes,
            r.spill_load_bytes
        );
    }
    Ok(())
}

// ---------------------------------------------------------------------------
// ci, bless, demo, bench

fn ci() -> Result {
    check(&["--arch".into(), "sm_90".into(), "--arch".into(), "sm_80".into()])?;
    cargo(&["test", "--workspace"])
}

fn bless() -> Result {
    let cargo_bin = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    run(Command::new(cargo_bin).args(["test", "--test", "compiletest"]).env("TRYBUILD", "overwrite").current_dir(root()))?;
    println!("blessed: now read `git diff tests/ui` — each error must point at the misuse its case names");
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

fn bench(args: &[String]) -> Result {
    let what = args.first().map(String::as_str).unwrap_or("kernels");
    if what != "kernels" && what != "all" {
        return Err(format!("unknown benchmark set `{what}` (known: kernels, all; both run every benchmark)"));
    }
    if !gpu_present() {
        println!(
            "bench: no NVIDIA GPU here. Build the bundle with `cargo xtask bundle`, copy bundle/ to the GPU \
             machine (it needs the NVIDIA driver, nvcc and python3, not Rust) and run `bash bundle/run.sh bench`."
        );
        return Ok(());
    }
    bundle()?;
    run(Command::new("bash").arg(root().join("bundle/run.sh")).arg("bench"))
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

    let tests = cargo_executables(&["test", "--workspace", "--no-run", "--release"])?;
    for exe in &tests {
        copy_stripped(exe, &dir.join("tests"))?;
    }
    let bins = cargo_executables(&["build", "--release", "--examples", "--workspace"])?;
    for exe in &bins {
        copy_stripped(exe, &dir.join("bin"))?;
    }
    let benches = root().join("benches");
    if benches.is_dir() {
        run(Command::new("cp").arg("-r").arg(&benches).arg(dir.join("benches")))?;
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
        return Err("the bundle is over 60 MiB: too large to carry to the GPU machine".into());
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
#   bash bundle/run.sh [tests|bench|demo|all]    (default: all)
# Logs go to $OUT (or bundle/logs); a short table is printed last.
set -u
here="$(cd "$(dirname "$0")" && pwd)"
out="${OUT:-$here/logs}"
mkdir -p "$out"
what="${1:-all}"
summary=()

if [ "$what" = tests ] || [ "$what" = all ]; then
  # Only the GPU test binaries: the rest (compile-fail, tidy) need the source
  # tree and cargo, and run in CI.
  for t in "$here"/tests/gpu_* "$here"/tests/kernels_*; do
    [ -e "$t" ] || continue
    name="$(basename "$t")"
    # --include-ignored: the GPU tests are #[ignore]d on machines without a GPU.
    timeout "${SLUICE_TEST_TIMEOUT:-300}" "$t" --include-ignored --test-threads=1 --nocapture >"$out/test-${name%-*}.log" 2>&1
    rc=$?
    res="$(grep -E '^test result:' "$out/test-${name%-*}.log" | tail -n 1)"
    summary+=("$(printf '%-40s rc=%-3s %s' "$name" "$rc" "$res")")
  done
fi

if [ "$what" = demo ] || [ "$what" = all ]; then
  if [ -x "$here/bin/seed_columns" ]; then
    timeout 300 "$here/bin/seed_columns" "${SLUICE_DEMO_LANES:-8}" 2>&1 | tee "$out/demo.log"
    summary+=("$(printf '%-40s rc=%s' seed_columns "${PIPESTATUS[0]}")")
  fi
fi

if [ "$what" = bench ] || [ "$what" = all ]; then
  if [ -f "$here/benches/run.sh" ]; then
    bash "$here/benches/run.sh" "$here" 2>&1 | tee "$out/bench.log"
    summary+=("$(printf '%-40s rc=%s' bench "${PIPESTATUS[0]}")")
  fi
fi

echo
echo "== summary =="
printf '%s\n' "${summary[@]}"
"#;
