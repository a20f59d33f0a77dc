//! `cargo xtask port-rust-cuda <Rust-CUDA checkout>`: applies the porting guide's diff
//! (docs/porting-rust-cuda.md) to every kernel crate of Rust-CUDA's examples and compile
//! tests, then builds each one as a user would: the kernel crate to PTX, assembled by ptxas,
//! and a host program made by the guide (`build.rs` with `sluice_builder::embed`, the
//! kernel crate as a dependency, `sluice::include_kernels!`), built with cargo. Prints one
//! row per crate and the counts, and writes them to `target/rust-cuda-ports/report.md`.
//!
//! Nothing of Rust-CUDA is committed: the checkout is an argument (a clone of
//! github.com/Rust-GPU/Rust-CUDA), the ported copies live under `target/`.
//!
//! The crates:
//! * `examples/cuda/*/kernels` (gemm, path_tracer, sha2_crates_io, vecadd) and the OptiX
//!   examples' device crates (`crates/optix/examples/**/Cargo.toml` with a `cuda_std`
//!   dependency): copied whole, their `cuda_std` dependency line replaced;
//! * each file of `tests/compiletests/ui` (a compile test is one file that Rust-CUDA's
//!   harness builds as a `cdylib` against `cuda_std`): made a crate of its own. A test's
//!   `// only-compute_XX` header picks the architecture (`sm_XX`); `// build-fail` tests
//!   are expected to fail (Rust-CUDA's harness expects an error too) and are reported as such.
//!
//! What the guide's diff does to a crate, mechanically:
//! * `cuda_std = …` → `cuda_std = { package = "sluice-cuda-std", path = "…" }`;
//! * crate attributes meant for `rustc_codegen_nvvm` (`register_attr`, `register_tool`,
//!   `nvvm_internal`) go; `#![no_std]` and `#![feature(…)]` are gated on the device build
//!   (`#![cfg_attr(target_arch = "nvptx64", …)]`), as the guide shows;
//! * the host: `<package> = { path = "kernels" }` with the kernel crate's own package
//!   name, and `sluice::include_kernels!(<its library name>)`.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use sluice_builder::toolchain::{self, Locations, Toolchain};
use sluice_builder::{check_ptx, Arch, Builder};

/// One Rust-CUDA kernel crate to port.
struct Case {
    /// `examples/cuda/vecadd/kernels`, `compiletests/ui/warp/warp_shuffle.rs`.
    id: String,
    /// A crate folder, or one compile-test file.
    source: PathBuf,
    arch: Arch,
    /// `// build-fail`: Rust-CUDA's own harness expects this one to fail.
    expect_fail: bool,
}

/// What happened to one case.
struct Row {
    id: String,
    arch: Arch,
    expect_fail: bool,
    ptx: std::result::Result<usize, String>,
    host: std::result::Result<(), String>,
}

pub fn run(args: &[String]) -> Result<(), String> {
    let checkout = match args {
        [dir] => PathBuf::from(dir),
        [dir, filter] => {
            return run_filtered(Path::new(dir), Some(filter));
        }
        _ => return Err("usage: cargo xtask port-rust-cuda <Rust-CUDA checkout> [filter]".into()),
    };
    run_filtered(&checkout, None)
}

fn run_filtered(checkout: &Path, filter: Option<&String>) -> Result<(), String> {
    if !checkout.join("crates/cuda_std/Cargo.toml").is_file() {
        return Err(format!("{} is not a Rust-CUDA checkout (no crates/cuda_std)", checkout.display()));
    }
    let root = super::root();
    let out = super::target_dir().join("rust-cuda-ports");
    let shared_target = out.join("target");
    std::fs::create_dir_all(&shared_target).map_err(|e| e.to_string())?;
    // One target folder for every port: the host dependencies (sluice, its dependencies)
    // build once. The builder's nested kernel builds go under it too, one per crate, as in
    // a build script (`<target>/sluice-kernels/<crate>-<hash>/<arch>`).
    // (xtask runs one thread: setting the variable races with nothing.)
    std::env::set_var("CARGO_TARGET_DIR", &shared_target);
    let tc = Toolchain::discover(&Locations::default()).map_err(|e| e.to_string())?;
    let ptxas = toolchain::find_ptxas(&Locations::default()).map_err(|e| e.to_string())?;
    let cases: Vec<Case> =
        cases(checkout)?.into_iter().filter(|c| filter.is_none_or(|f| c.id.contains(f.as_str()))).collect();
    println!("porting {} Rust-CUDA kernel crates into {}", cases.len(), out.display());
    let mut rows = Vec::new();
    let mut seed: Option<PathBuf> = None;
    for case in &cases {
        let started = Instant::now();
        let dir = out.join("crates").join(case.id.replace('/', "__").trim_end_matches(".rs"));
        let _ = std::fs::remove_dir_all(&dir);
        if let Err(e) = port(case, &root, &dir) {
            println!("{:<58} could not be ported: {e}", case.id);
            rows.push(Row {
                id: case.id.clone(),
                arch: case.arch,
                expect_fail: case.expect_fail,
                ptx: Err(e.clone()),
                host: Err(e),
            });
            continue;
        }
        let kernels = dir.join("kernels");
        let builder = Builder::new(&kernels).arch(case.arch);
        // `core` for this architecture is built once: later crates start from a copy (hard
        // links) of the first nested folder's standard library.
        let nested = builder.nested_target_dir();
        if let Some(seed) = seed.as_ref().filter(|_| !nested.exists()) {
            seed_from(seed, &nested);
        }
        let ptx = builder.build_with(&tc).map_err(|e| first_error(&e.to_string())).and_then(|built| {
            let report = check_ptx(&ptxas, &built.ptx, case.arch).map_err(|e| first_error(&e.to_string()))?;
            Ok(report.iter().filter(|r| r.kind == sluice_builder::FunctionKind::Entry).count())
        });
        if ptx.is_ok() && case.arch == Arch::default() && seed.is_none() {
            seed = Some(nested.clone());
        }
        let host = host_build(&dir);
        println!(
            "{:<58} {:<7} ptx: {:<28} host: {} ({:.0} s)",
            case.id,
            case.arch.to_string(),
            match &ptx {
                Ok(n) => format!("ok, {n} kernels"),
                Err(_) => "FAILED".into(),
            },
            if host.is_ok() { "ok" } else { "FAILED" },
            started.elapsed().as_secs_f64()
        );
        rows.push(Row { id: case.id.clone(), arch: case.arch, expect_fail: case.expect_fail, ptx, host });
    }
    let report = report(&rows);
    std::fs::write(out.join("report.md"), &report).map_err(|e| e.to_string())?;
    println!("\n{report}\n(also in {})", out.join("report.md").display());
    Ok(())
}

/// Every kernel crate of the checkout, in a fixed order.
fn cases(checkout: &Path) -> Result<Vec<Case>, String> {
    let mut out = Vec::new();
    let mut crates: Vec<PathBuf> = super::walk(&checkout.join("examples"))
        .into_iter()
        .chain(super::walk(&checkout.join("crates/optix/examples")))
        .filter(|p| p.file_name().is_some_and(|n| n == "Cargo.toml"))
        .filter(|p| std::fs::read_to_string(p).is_ok_and(|t| t.lines().any(|l| l.trim_start().starts_with("cuda_std"))))
        .filter_map(|p| p.parent().map(Path::to_path_buf))
        // A kernel crate is a library (`examples/cuda/gemm/Cargo.toml`, its host program,
        // names cuda_std too).
        .filter(|d| d.join("src/lib.rs").is_file())
        .collect();
    crates.sort();
    for dir in crates {
        let id = dir.strip_prefix(checkout).unwrap_or(&dir).to_string_lossy().into_owned();
        out.push(Case { id, source: dir, arch: Arch::default(), expect_fail: false });
    }
    let ui = checkout.join("tests/compiletests/ui");
    let mut tests: Vec<PathBuf> =
        super::walk(&ui).into_iter().filter(|p| p.extension().is_some_and(|e| e == "rs")).collect();
    tests.sort();
    for file in tests {
        let text = std::fs::read_to_string(&file).map_err(|e| e.to_string())?;
        let header: Vec<&str> = text.lines().take_while(|l| l.starts_with("//") || l.trim().is_empty()).collect();
        let arch = header
            .iter()
            .find_map(|l| l.trim_start_matches("//").trim().strip_prefix("only-compute_"))
            .map(|cc| format!("sm_{cc}").parse().unwrap_or(Arch::default()))
            .unwrap_or_default();
        let expect_fail = header.iter().any(|l| l.contains("build-fail"));
        let id = format!("compiletests/{}", file.strip_prefix(&ui).unwrap_or(&file).display());
        out.push(Case { id, source: file, arch, expect_fail });
    }
    Ok(out)
}

/// Writes the ported project into `dir`: `kernels/` (the crate after the guide's diff) and
/// the host package around it. Returns the kernel crate's package and library names.
fn port(case: &Case, sluice: &Path, dir: &Path) -> Result<(String, String), String> {
    let kernels = dir.join("kernels");
    let cuda_std = format!(
        "cuda_std = {{ package = \"sluice-cuda-std\", path = {:?} }}",
        sluice.join("gpu-kernels/cuda-std").display().to_string()
    );
    let package = if case.source.is_dir() {
        copy_dir(&case.source, &kernels)?;
        let manifest = std::fs::read_to_string(kernels.join("Cargo.toml")).map_err(|e| e.to_string())?;
        let source_dir = case.source.clone();
        let manifest: Vec<String> = manifest
            .lines()
            .map(|l| {
                if l.trim_start().starts_with("cuda_std") && l.contains('=') {
                    cuda_std.clone()
                } else {
                    // Other path dependencies stay Rust-CUDA's own crates, where they are.
                    absolutize_path_dependency(l, &source_dir)
                }
            })
            .collect();
        let mut manifest = manifest.join("\n") + "\n";
        if !manifest.contains("[workspace]") {
            manifest += "\n[workspace]\n";
        }
        std::fs::write(kernels.join("Cargo.toml"), &manifest).map_err(|e| e.to_string())?;
        package_name(&manifest).ok_or("a kernel crate without a package name")?
    } else {
        let stem = case.source.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        let package = format!("{}-kernels", stem.replace('_', "-"));
        std::fs::create_dir_all(kernels.join("src")).map_err(|e| e.to_string())?;
        let manifest = format!(
            "[package]\nname = \"{package}\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\n{cuda_std}\n\n[workspace]\n"
        );
        std::fs::write(kernels.join("Cargo.toml"), manifest).map_err(|e| e.to_string())?;
        std::fs::copy(&case.source, kernels.join("src/lib.rs")).map_err(|e| e.to_string())?;
        package
    };
    let lib_rs = kernels.join("src/lib.rs");
    let text = std::fs::read_to_string(&lib_rs).map_err(|e| e.to_string())?;
    std::fs::write(&lib_rs, crate_attributes_diff(&text)).map_err(|e| e.to_string())?;
    // The kernel crate is its own workspace above; the host is the project's root.
    let manifest = std::fs::read_to_string(kernels.join("Cargo.toml")).map_err(|e| e.to_string())?;
    std::fs::write(kernels.join("Cargo.toml"), manifest.replace("\n[workspace]\n", "\n")).map_err(|e| e.to_string())?;
    let lib = lib_name(&manifest).unwrap_or_else(|| package.replace('-', "_"));
    let host = format!(
        "[package]\nname = \"ported-host\"\nversion = \"0.1.0\"\nedition = \"2021\"\npublish = false\n\n\
         [dependencies]\nsluice = {{ path = {s:?} }}\n{package} = {{ path = \"kernels\" }}\n\n\
         [build-dependencies]\nsluice-builder = {{ path = {b:?} }}\n\n[workspace]\nmembers = [\"kernels\"]\n",
        s = sluice.display().to_string(),
        b = sluice.join("gpu-kernels/builder").display().to_string(),
    );
    std::fs::write(dir.join("Cargo.toml"), host).map_err(|e| e.to_string())?;
    std::fs::write(dir.join("build.rs"), "fn main() {\n    sluice_builder::embed(\"kernels\");\n}\n")
        .map_err(|e| e.to_string())?;
    std::fs::create_dir_all(dir.join("src")).map_err(|e| e.to_string())?;
    std::fs::write(
        dir.join("src/main.rs"),
        format!(
            "mod kernels {{\n    sluice::include_kernels!({lib});\n}}\n\nfn main() {{\n    \
             println!(\"{{:?}}\", kernels::ENTRIES);\n}}\n"
        ),
    )
    .map_err(|e| e.to_string())?;
    // The versions sluice is tested with, as `cargo sluice new --path` does.
    let _ = std::fs::copy(sluice.join("Cargo.lock"), dir.join("Cargo.lock"));
    Ok((package, lib))
}

/// The guide's crate-attribute diff: attributes for `rustc_codegen_nvvm` go, `no_std` and
/// `feature(..)` are gated on the device build.
fn crate_attributes_diff(text: &str) -> String {
    let mut out = String::new();
    for line in text.lines() {
        let t = line.trim_start();
        if t.starts_with("#![") && (t.contains("register_attr") || t.contains("nvvm_internal")) {
            continue;
        }
        if let Some(inner) = t.strip_prefix("#![").and_then(|r| r.strip_suffix(']')) {
            if inner == "no_std" || inner.starts_with("feature(") {
                out += &format!("#![cfg_attr(target_arch = \"nvptx64\", {inner})]\n");
                continue;
            }
        }
        out += line;
        out.push('\n');
    }
    out
}

/// `path = "../x"` made absolute against the crate's original folder.
fn absolutize_path_dependency(line: &str, crate_dir: &Path) -> String {
    let Some(at) = line.find("path = \"") else { return line.to_string() };
    let start = at + "path = \"".len();
    let Some(len) = line[start..].find('"') else { return line.to_string() };
    let rel = &line[start..start + len];
    let abs = crate_dir.join(rel);
    let abs = abs.canonicalize().unwrap_or(abs);
    format!("{}{}{}", &line[..start], abs.display(), &line[start + len..])
}

fn package_name(manifest: &str) -> Option<String> {
    let mut in_package = false;
    for l in manifest.lines().map(str::trim) {
        if l.starts_with('[') {
            in_package = l == "[package]";
        } else if in_package && l.starts_with("name") {
            return l.split('"').nth(1).map(str::to_string);
        }
    }
    None
}

fn lib_name(manifest: &str) -> Option<String> {
    let mut in_lib = false;
    for l in manifest.lines().map(str::trim) {
        if l.starts_with('[') {
            in_lib = l == "[lib]";
        } else if in_lib && l.starts_with("name") {
            return l.split('"').nth(1).map(str::to_string);
        }
    }
    package_name(manifest).map(|p| p.replace('-', "_"))
}

fn copy_dir(from: &Path, to: &Path) -> Result<(), String> {
    std::fs::create_dir_all(to).map_err(|e| e.to_string())?;
    for entry in std::fs::read_dir(from).map_err(|e| e.to_string())?.flatten() {
        let (src, dst) = (entry.path(), to.join(entry.file_name()));
        if src.is_dir() {
            if entry.file_name() != "target" {
                copy_dir(&src, &dst)?;
            }
        } else {
            std::fs::copy(&src, &dst).map_err(|e| e.to_string())?;
        }
    }
    Ok(())
}

/// Hard-links the standard library built in `seed` into `nested` (the nested kernel build
/// of another crate, same architecture): cargo finds `core` fresh there and builds only the
/// kernel crate.
fn seed_from(seed: &Path, nested: &Path) {
    let _ = std::fs::create_dir_all(nested);
    let _ = Command::new("cp").arg("-al").arg(format!("{}/.", seed.display())).arg(nested).status();
}

/// `cargo build` of the ported host package (its build script builds the kernels again,
/// fresh, and embeds them).
fn host_build(dir: &Path) -> std::result::Result<(), String> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let out = Command::new(cargo)
        .args(["build", "--quiet", "--message-format", "short"])
        .current_dir(dir)
        .env_remove("RUSTFLAGS")
        .output()
        .map_err(|e| e.to_string())?;
    if out.status.success() {
        Ok(())
    } else {
        Err(first_error(&String::from_utf8_lossy(&out.stderr)))
    }
}

/// The first line that says `error`, shortened (the whole log is kept by cargo and the
/// builder in their folders).
fn first_error(log: &str) -> String {
    let line = log
        .lines()
        .find(|l| l.contains("error") && !l.contains("could not compile") && !l.trim().starts_with("= "))
        .or_else(|| log.lines().find(|l| !l.trim().is_empty()))
        .unwrap_or("")
        .trim();
    let line = line.split_once("error").map_or(line, |(_, rest)| rest).trim_start_matches([':', ' ']);
    line.chars().take(160).collect()
}

fn report(rows: &[Row]) -> String {
    let mut s = String::from("| crate | arch | PTX (ptxas) | host build | note |\n| --- | --- | --- | --- | --- |\n");
    for r in rows {
        s += &format!(
            "| `{}` | {} | {} | {} | {} |\n",
            r.id,
            r.arch,
            match &r.ptx {
                Ok(n) => format!("ok ({n} kernels)"),
                Err(e) => format!("failed: {}", e.replace('|', "\\|")),
            },
            match &r.host {
                Ok(()) => "ok".to_string(),
                Err(e) => format!("failed: {}", e.replace('|', "\\|")),
            },
            if r.expect_fail { "`// build-fail`: Rust-CUDA expects a failure" } else { "" }
        );
    }
    let n = rows.len();
    let ptx = rows.iter().filter(|r| r.ptx.is_ok()).count();
    let host = rows.iter().filter(|r| r.host.is_ok()).count();
    let both = rows.iter().filter(|r| r.ptx.is_ok() && r.host.is_ok()).count();
    s += &format!(
        "\n{ptx} of {n} build to PTX that ptxas accepts; {host} of {n} build for the host (the guide's host package, \
         with the kernels embedded); {both} of {n} both.\n"
    );
    s
}
