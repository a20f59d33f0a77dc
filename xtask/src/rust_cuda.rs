//! `cargo xtask port-rust-cuda <Rust-CUDA checkout>`: applies the porting guide's diff
//! (docs/porting-rust-cuda.md) to every kernel crate of Rust-CUDA's examples and compile
//! tests, then builds each one as a user would: the kernel crate to PTX, assembled by ptxas,
//! and a host program made by the guide (`build.rs` with `sluice_builder::embed`, the
//! kernel crate as a dependency, `sluice::include_kernels!`), built with cargo. Prints one
//! row per crate and the counts, and writes them to `target/rust-cuda-ports/report.md`
//! (the ported crates and their builds are in `$TMPDIR/sluice-rust-cuda-ports`).
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
    /// A `// only-compute_XX` that names no architecture sluice builds for (`compute_101f`).
    unsupported_arch: Option<String>,
}

/// What happened to one case.
struct Row {
    id: String,
    arch: Arch,
    expect_fail: bool,
    unsupported_arch: Option<String>,
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
    // Outside sluice's target folder: a build script's nested kernel build goes under the
    // outermost cargo target folder above it (see `sluice_builder::target_root_of`), and the
    // ports must find the kernels built in step 1 under their own.
    let out = std::env::temp_dir().join("sluice-rust-cuda-ports");
    let report_copy = super::target_dir().join("rust-cuda-ports");
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
    let crates_dir = out.join("crates");
    let _ = std::fs::remove_dir_all(&crates_dir);
    let mut rows = Vec::new();
    let mut seed: Option<PathBuf> = None;
    // 1. Each crate ported and built to PTX (ptxas); a whole crate of the examples is also
    //    built with its host package at once (its own workspace, as the guide's project).
    let mut batch = Vec::new(); // the compile tests' projects, built for the host together
    let dir_name = |case: &Case| case.id.replace('/', "__").trim_end_matches(".rs").replace('.', "_");
    // The compile tests' projects form one workspace (written first: their kernel crates'
    // nested builds look for it).
    let members: Vec<String> = cases
        .iter()
        .filter(|c| !c.source.is_dir())
        .flat_map(|c| [format!("{:?}", dir_name(c)), format!("\"{}/kernels\"", dir_name(c))])
        .collect();
    std::fs::create_dir_all(&crates_dir).map_err(|e| e.to_string())?;
    let manifest = format!("[workspace]\nresolver = \"2\"\nmembers = [{}]\n", members.join(", "));
    std::fs::write(crates_dir.join("Cargo.toml"), manifest).map_err(|e| e.to_string())?;
    let _ = std::fs::copy(root.join("Cargo.lock"), crates_dir.join("Cargo.lock"));
    // Every project first: the workspace needs all its members.
    let mut ported = Vec::new();
    for case in &cases {
        let dir_name = dir_name(case);
        ported.push(port(case, &root, &crates_dir.join(&dir_name), case.source.is_dir(), &dir_name));
    }
    for (case, port) in cases.iter().zip(ported) {
        let started = Instant::now();
        let dir_name = dir_name(case);
        let dir = crates_dir.join(&dir_name);
        let whole_crate = case.source.is_dir();
        if let Err(e) = port {
            println!("{:<58} could not be ported: {e}", case.id);
            let row = Row {
                id: case.id.clone(),
                arch: case.arch,
                expect_fail: case.expect_fail,
                unsupported_arch: case.unsupported_arch.clone(),
                ptx: Err(e.clone()),
                host: Err(e),
            };
            rows.push(row);
            continue;
        }
        let kernels = dir.join("kernels");
        let builder = Builder::new(&kernels).arch(case.arch);
        // `core` for this architecture is built once: later crates start from a copy (hard
        // links) of the first nested folder's standard library.
        let nested = builder.nested_target_dir();
        if let Some(seed) = seed.as_ref().filter(|_| !nested.exists() && case.arch == Arch::default()) {
            seed_from(seed, &nested);
        }
        let ptx = builder.build_with(&tc).map_err(|e| first_error(&e.to_string())).and_then(|built| {
            // CUDA 13's ptxas has no sm_70 (Volta left CUDA 13): PTX for sm_70 is assembled
            // for sm_75, the oldest it knows (a newer GPU runs an older target's PTX).
            let check =
                if case.arch.compute_capability() < (7, 5) { "sm_75".parse().unwrap_or(case.arch) } else { case.arch };
            let report = check_ptx(&ptxas, &built.ptx, check).map_err(|e| first_error(&e.to_string()))?;
            Ok(report.iter().filter(|r| r.kind == sluice_builder::FunctionKind::Entry).count())
        });
        // The seed: a compile test's folder (they all have the same dependencies; an
        // example's glam, of other features, would be rebuilt in every copy anyway).
        if ptx.is_ok() && case.arch == Arch::default() && seed.is_none() && !whole_crate {
            seed = Some(nested.clone());
        }
        let host = if whole_crate {
            host_build(&dir)
        } else {
            batch.push((rows.len(), dir_name));
            Err("not built yet".into())
        };
        println!(
            "{:<58} {:<7} ptx: {:<28} ({:.0} s)",
            case.id,
            case.arch.to_string(),
            match &ptx {
                Ok(n) => format!("ok, {n} kernels"),
                Err(_) => "FAILED".into(),
            },
            started.elapsed().as_secs_f64()
        );
        rows.push(Row {
            id: case.id.clone(),
            arch: case.arch,
            expect_fail: case.expect_fail,
            unsupported_arch: case.unsupported_arch.clone(),
            ptx,
            host,
        });
    }
    // 2. The compile tests' host packages, in one workspace: one resolution, one cargo run
    //    (`--keep-going`), every failure read from its log and given to its crate.
    if !batch.is_empty() {
        let started = Instant::now();
        let log = cargo_build_log(&crates_dir);
        println!("host packages of the compile tests built in {:.0} s", started.elapsed().as_secs_f64());
        std::fs::write(out.join("hosts.log"), &log).map_err(|e| e.to_string())?;
        for (row, dir_name) in &batch {
            rows[*row].host = failure_of(&log, dir_name).map_or(Ok(()), Err);
        }
    }
    let report = report(&rows);
    std::fs::write(out.join("report.md"), &report).map_err(|e| e.to_string())?;
    let _ = std::fs::create_dir_all(&report_copy);
    let _ = std::fs::write(report_copy.join("report.md"), &report);
    println!("\n{report}\n(also in {})", report_copy.join("report.md").display());
    Ok(())
}

/// `cargo build --workspace --keep-going` in `dir`: its whole log.
fn cargo_build_log(dir: &Path) -> String {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    match Command::new(cargo)
        .args(["build", "--workspace", "--keep-going", "--message-format", "short"])
        .current_dir(dir)
        .env_remove("RUSTFLAGS")
        .output()
    {
        Ok(out) => String::from_utf8_lossy(&out.stderr).into_owned(),
        Err(e) => format!("error: could not start cargo: {e}"),
    }
}

/// The first error of the project in folder `dir_name` in a workspace build's log: a
/// diagnostic in one of its files, or its build script's failure (the builder's message).
fn failure_of(log: &str, dir_name: &str) -> Option<String> {
    let prefix = format!("{dir_name}/");
    let package = format!("`{}", host_package(dir_name));
    let lines: Vec<&str> = log.lines().collect();
    for (i, l) in lines.iter().enumerate() {
        if l.starts_with(&prefix) && l.contains("error") {
            return Some(first_error(l));
        }
        if l.contains("failed to run custom build command for") && l.contains(&package) {
            let rest = lines[i + 1..].join("\n");
            let from = rest.find("sluice:").unwrap_or(0);
            return Some(first_error(&rest[from..]));
        }
    }
    None
}

/// The host package's name for a project folder (unique in the workspace).
fn host_package(dir_name: &str) -> String {
    format!("ported-{}", dir_name.replace("__", "-").replace('_', "-").to_lowercase())
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
        out.push(Case { id, source: dir, arch: Arch::default(), expect_fail: false, unsupported_arch: None });
    }
    let ui = checkout.join("tests/compiletests/ui");
    let mut tests: Vec<PathBuf> =
        super::walk(&ui).into_iter().filter(|p| p.extension().is_some_and(|e| e == "rs")).collect();
    tests.sort();
    for file in tests {
        let text = std::fs::read_to_string(&file).map_err(|e| e.to_string())?;
        let header: Vec<&str> = text.lines().take_while(|l| l.starts_with("//") || l.trim().is_empty()).collect();
        let only = header.iter().find_map(|l| l.trim_start_matches("//").trim().strip_prefix("only-compute_"));
        let (arch, unsupported_arch) = match only.map(|cc| format!("sm_{cc}").parse::<Arch>()) {
            None => (Arch::default(), None),
            Some(Ok(arch)) => (arch, None),
            // `compute_101f` (a family variant): sluice builds `sm_XY` and `sm_XYa` only.
            Some(Err(_)) => (Arch::default(), only.map(|cc| format!("compute_{cc}"))),
        };
        let expect_fail = header.iter().any(|l| l.contains("build-fail"));
        let id = format!("compiletests/{}", file.strip_prefix(&ui).unwrap_or(&file).display());
        out.push(Case { id, source: file, arch, expect_fail, unsupported_arch });
    }
    Ok(out)
}

/// Writes the ported project into `dir`: `kernels/` (the crate after the guide's diff) and
/// the host package around it. Returns the kernel crate's package and library names.
fn port(
    case: &Case,
    sluice: &Path,
    dir: &Path,
    own_workspace: bool,
    dir_name: &str,
) -> Result<(String, String), String> {
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
        // A test that names its crate (`#![crate_name = "unwrap_or"]`) gets that library name.
        let text = std::fs::read_to_string(&case.source).map_err(|e| e.to_string())?;
        let lib = text
            .lines()
            .find_map(|l| l.trim().strip_prefix("#![crate_name = \"")?.strip_suffix("\"]").map(str::to_string))
            .map(|name| format!("\n[lib]\nname = \"{name}\"\n"))
            .unwrap_or_default();
        let manifest = format!(
            "[package]\nname = \"{package}\"\nversion = \"0.1.0\"\nedition = \"2021\"\n{lib}\n[dependencies]\n{cuda_std}\n\n[workspace]\n"
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
    let mut host = format!(
        "[package]\nname = \"{name}\"\nversion = \"0.1.0\"\nedition = \"2021\"\npublish = false\n\n\
         [dependencies]\nsluice = {{ path = {s:?} }}\n{package} = {{ path = \"kernels\" }}\n\n\
         [build-dependencies]\nsluice-builder = {{ path = {b:?} }}\n",
        name = host_package(dir_name),
        s = sluice.display().to_string(),
        b = sluice.join("gpu-kernels/builder").display().to_string(),
    );
    if own_workspace {
        host += "\n[workspace]\nmembers = [\"kernels\"]\n";
    }
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
    if own_workspace {
        let _ = std::fs::copy(sluice.join("Cargo.lock"), dir.join("Cargo.lock"));
    }
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
            match (&r.unsupported_arch, r.expect_fail) {
                (Some(a), _) => format!("`only-{a}`: no such sluice architecture, built for {}", r.arch),
                (None, true) => "`// build-fail`: Rust-CUDA expects a failure".to_string(),
                (None, false) if r.arch.compute_capability() < (7, 5) => {
                    "ptxas 13 has no sm_70: assembled for sm_75".to_string()
                }
                (None, false) => String::new(),
            }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_crate_attribute_diff_gates_no_std_and_features_and_drops_nvvms() {
        let before = "#![cfg_attr(target_os = \"cuda\", no_std, register_attr(nvvm_internal))]\n#![no_std]\n\
                      #![feature(core_intrinsics)]\n#![allow(internal_features)]\nuse cuda_std::kernel;\n";
        let after = crate_attributes_diff(before);
        assert_eq!(
            after,
            "#![cfg_attr(target_arch = \"nvptx64\", no_std)]\n\
             #![cfg_attr(target_arch = \"nvptx64\", feature(core_intrinsics))]\n\
             #![allow(internal_features)]\nuse cuda_std::kernel;\n"
        );
    }

    #[test]
    fn a_workspace_log_gives_each_project_its_first_error() {
        let log = "   Compiling x\n\
                   a__b/kernels/src/lib.rs:4:9: error[E0255]: the name `k` is defined multiple times\n\
                   error: failed to run custom build command for `ported-c-d v0.1.0 (/p/c__d)`\n\
                   Caused by:\n  process didn't exit successfully\n  --- stderr\n\
                   sluice: the kernel crate /p/c__d/kernels/Cargo.toml did not compile for nvptx64-nvidia-cuda:\n";
        assert!(failure_of(log, "a__b").is_some_and(|e| e.contains("E0255")));
        assert!(failure_of(log, "c__d").is_some_and(|e| e.contains("did not compile")));
        assert_eq!(failure_of(log, "e__f"), None);
        assert_eq!(host_package("compiletests__lang__f32__signum"), "ported-compiletests-lang-f32-signum");
    }
}
