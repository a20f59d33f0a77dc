//! `cargo sluice`: sluice for your own projects.
//!
//! Install it once (`cargo install --path cargo-sluice` in a sluice checkout, or
//! `cargo install --git <sluice repository> cargo-sluice`), then:
//!
//! | command | what it does |
//! | --- | --- |
//! | `cargo sluice setup` | finds or installs the kernel toolchain; ptxas and libdevice go into one per-user folder (`~/.cache/sluice`), shared by every project |
//! | `cargo sluice new <name> [--path <checkout> \| --git <url>]` | a working project: a kernel crate (`saxpy`, a tiled shared-memory sum), a host program that runs them and checks them against a CPU reference, a CPU test; then `setup` |
//! | `cargo sluice build [--arch sm_XX]... [--kernels <dir>]...` | the PTX of the project's kernel crates, and their entries |
//! | `cargo sluice check [--arch sm_XX]... [--allow-spills]` | build, then `ptxas`: registers, shared memory, stack and spills of every function; fails on a spill |
//! | `cargo sluice doctor` | what was found where, what is missing, the command that installs it |
//!
//! The same code as sluice's own `cargo xtask` (through `sluice_builder::setup` and the
//! [`Builder`]).

#![forbid(unsafe_code)]

mod template;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use sluice_builder::setup::Setup;
use sluice_builder::toolchain::{self, Frontend, Locations};
use sluice_builder::{check_ptx, deny_spills, Arch, BuildError, Builder, FunctionKind, Profile};

const USAGE: &str = "usage: cargo sluice <command>

commands:
  setup                     find or install the kernel toolchain (ptxas and libdevice into
                            the per-user tools folder, ~/.cache/sluice)
  new <name> [--path <sluice checkout> | --git <url> [--branch <b>]] [--no-setup]
                            create a project: a kernel crate, a host program, a CPU test
  build [--arch sm_XX]... [--kernels <dir>]... [--debug] [--panic-messages] [--verbose]
                            compile the project's kernel crates to PTX
  check [--arch sm_XX]... [--kernels <dir>]... [--allow-spills] [--panic-messages]
                            build, then assemble with ptxas: resources of every function,
                            fails on a register spill unless allowed
  doctor                    what was found where, what is missing and how to install it
  help, --version";

/// A failure: the message, already saying what to do.
struct Failure(String);

impl From<BuildError> for Failure {
    fn from(e: BuildError) -> Self {
        Failure(e.to_string())
    }
}

impl From<String> for Failure {
    fn from(e: String) -> Self {
        Failure(e)
    }
}

type Result<T = ()> = std::result::Result<T, Failure>;

fn main() -> ExitCode {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    // `cargo sluice x` runs `cargo-sluice sluice x`.
    if args.first().is_some_and(|a| a == "sluice") {
        args.remove(0);
    }
    let Some((cmd, rest)) = args.split_first() else {
        eprintln!("{USAGE}");
        return ExitCode::from(2);
    };
    let result = match cmd.as_str() {
        "setup" => no_args("setup", rest).and_then(|()| setup()),
        "new" => new(rest),
        "build" => build(rest).map(|_| ()),
        "check" => check(rest),
        "doctor" => no_args("doctor", rest).and_then(|()| doctor()),
        "help" | "-h" | "--help" => {
            println!("{USAGE}");
            Ok(())
        }
        "-V" | "--version" => {
            println!("cargo-sluice {}", env!("CARGO_PKG_VERSION"));
            Ok(())
        }
        other => Err(Failure(format!("unknown command `{other}`\n\n{USAGE}"))),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure(e)) => {
            eprintln!("{e}");
            ExitCode::FAILURE
        }
    }
}

fn no_args(cmd: &str, rest: &[String]) -> Result {
    match rest.first() {
        Some(a) => Err(Failure(format!("`cargo sluice {cmd}` takes no arguments (got `{a}`)"))),
        None => Ok(()),
    }
}

fn setup_tool() -> Setup {
    Setup::new().frontend(Frontend::CargoSluice)
}

fn setup() -> Result {
    let report = setup_tool().install(&mut |line| println!("setup: {line}"))?;
    println!("\n{report}");
    Ok(())
}

fn doctor() -> Result {
    let report = setup_tool().doctor();
    println!("{report}");
    let set: Vec<String> = sluice_builder::ENV_VARS
        .iter()
        .filter_map(|v| std::env::var(v).ok().filter(|s| !s.is_empty()).map(|s| format!("{v}={s}")))
        .collect();
    if set.is_empty() {
        println!("\nno SLUICE_*/CUDA_* variable is set (none is needed)");
    } else {
        println!("\nset: {}", set.join(" "));
    }
    match project_root(&current_dir()?) {
        Some(root) => {
            let crates = kernel_crates(&root);
            println!("project {}: kernel crates {:?}", root.display(), crates);
        }
        None => println!("(not inside a cargo project)"),
    }
    if report.is_complete() {
        Ok(())
    } else {
        Err(Failure(format!("some pieces are missing: run `{}`", Frontend::CargoSluice.command("setup"))))
    }
}

fn current_dir() -> Result<PathBuf> {
    std::env::current_dir().map_err(|e| Failure(format!("cargo sluice: the current folder is unreadable: {e}")))
}

// ---------------------------------------------------------------------------
// new

fn new(args: &[String]) -> Result {
    let mut name = None;
    let mut source = template::Source::Git { url: template::DEFAULT_GIT.to_string(), branch: None };
    let mut run_setup = true;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--path" => {
                let p = it.next().ok_or("--path needs the folder of a sluice checkout".to_string())?;
                let p = Path::new(p);
                let abs = p.canonicalize().map_err(|e| Failure(format!("--path {}: {e}", p.display())))?;
                source = template::Source::Path(abs);
            }
            "--git" => {
                let url = it.next().ok_or("--git needs the URL of the sluice repository".to_string())?;
                source = template::Source::Git { url: url.clone(), branch: None };
            }
            "--branch" => {
                let b = it.next().ok_or("--branch needs a branch name".to_string())?;
                match &mut source {
                    template::Source::Git { branch, .. } => *branch = Some(b.clone()),
                    template::Source::Path(_) => return Err(Failure("--branch goes with --git, not --path".into())),
                }
            }
            "--no-setup" => run_setup = false,
            s if s.starts_with('-') => return Err(Failure(format!("unknown option `{s}`\n\n{USAGE}"))),
            s => {
                if name.replace(s.to_string()).is_some() {
                    return Err(Failure("`cargo sluice new` takes one project name".into()));
                }
            }
        }
    }
    let name = name.ok_or_else(|| Failure(format!("`cargo sluice new` needs a project name\n\n{USAGE}")))?;
    let dir = current_dir()?.join(&name);
    let project = template::Project::new(&name, source)?;
    project.write(&dir)?;
    println!("created {} (kernel crate `{}`, host program `{name}`)", dir.display(), project.kernels_package());
    if run_setup {
        println!();
        setup()?;
    }
    println!("\nnext:\n  cd {name}\n  cargo run            # builds the kernels, runs them on the GPU (or the CPU backend) and checks them");
    println!("  cargo test           # the kernel crate's CPU tests\n  cargo sluice check   # ptxas: registers, shared memory, spills");
    Ok(())
}

// ---------------------------------------------------------------------------
// build, check

struct BuildArgs {
    archs: Vec<Arch>,
    kernels: Vec<PathBuf>,
    profile: Profile,
    panic_messages: bool,
    verbose: bool,
    allow_spills: bool,
}

fn parse_build_args(args: &[String], check: bool) -> Result<BuildArgs> {
    let mut out = BuildArgs {
        archs: Vec::new(),
        kernels: Vec::new(),
        profile: Profile::Release,
        panic_messages: false,
        verbose: false,
        allow_spills: false,
    };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let (flag, inline) = match a.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f, Some(v.to_string())),
            _ => (a.as_str(), None),
        };
        let mut value = |what: &str| -> Result<String> {
            match inline.clone() {
                Some(v) => Ok(v),
                None => it.next().cloned().ok_or_else(|| Failure(format!("{flag} needs {what}"))),
            }
        };
        match flag {
            "--arch" => out.archs.push(value("an architecture, e.g. sm_80")?.parse()?),
            "--kernels" => out.kernels.push(PathBuf::from(value("the folder of a kernel crate")?)),
            "--release" => out.profile = Profile::Release,
            "--debug" => out.profile = Profile::Debug,
            "--panic-messages" => out.panic_messages = true,
            "--verbose" | "-v" => out.verbose = true,
            "--allow-spills" if check => out.allow_spills = true,
            other => return Err(Failure(format!("unknown argument `{other}`\n\n{USAGE}"))),
        }
    }
    if out.archs.is_empty() {
        let arch = match std::env::var("SLUICE_ARCH").ok().filter(|a| !a.is_empty()) {
            Some(a) => a.parse()?,
            None => Arch::default(),
        };
        out.archs.push(arch);
    }
    Ok(out)
}

/// One built PTX file.
struct Built {
    lib_name: String,
    arch: Arch,
    ptx: PathBuf,
}

fn build(args: &[String]) -> Result<Vec<Built>> {
    build_with(&parse_build_args(args, false)?)
}

fn build_with(a: &BuildArgs) -> Result<Vec<Built>> {
    let here = current_dir()?;
    let root = project_root(&here)
        .ok_or_else(|| Failure("cargo sluice: not inside a cargo project (no Cargo.toml here or above)".into()))?;
    let crates =
        if a.kernels.is_empty() { kernel_crates(&root) } else { a.kernels.iter().map(|k| here.join(k)).collect() };
    if crates.is_empty() {
        return Err(Failure(format!(
            "cargo sluice: no kernel crate found in {} (a crate that depends on sluice-device); \
             name one with --kernels <dir>, or start a project with `cargo sluice new <name>`",
            root.display()
        )));
    }
    let target = std::env::var_os("CARGO_TARGET_DIR").map(PathBuf::from).unwrap_or_else(|| root.join("target"));
    let mut built = Vec::new();
    for krate in &crates {
        for &arch in &a.archs {
            let started = std::time::Instant::now();
            let out = Builder::new(krate)
                .arch(arch)
                .profile(a.profile)
                .panic_messages(a.panic_messages)
                .verbose(a.verbose)
                .build()?;
            let dest = target.join("ptx").join(format!("{}.{arch}.ptx", out.lib_name));
            let text = std::fs::read_to_string(&out.ptx)
                .map_err(|e| Failure(format!("cargo sluice: reading {}: {e}", out.ptx.display())))?;
            sluice_builder::write_if_changed(&dest, &text)?;
            println!(
                "built {} ({}) for {arch} in {:.1} s{}",
                dest.display(),
                out.package,
                started.elapsed().as_secs_f64(),
                if out.libdevice.is_some() { ", libdevice linked" } else { "" }
            );
            for k in &out.kernels {
                println!("  .entry {k}");
            }
            built.push(Built { lib_name: out.lib_name, arch, ptx: dest });
        }
    }
    Ok(built)
}

fn check(args: &[String]) -> Result {
    let a = parse_build_args(args, true)?;
    let ptxas = toolchain::find_ptxas(&Locations::default())?;
    let built = build_with(&a)?;
    let mut failures = Vec::new();
    for b in &built {
        let report = check_ptx(&ptxas, &b.ptx, b.arch)?;
        println!("\n{} for {} (ptxas {}):", b.lib_name, b.arch, ptxas.display());
        println!(
            "  {:<6} {:>5} {:>9} {:>10} {:>13}  function",
            "kind", "regs", "smem (B)", "stack (B)", "spills st/ld"
        );
        for f in &report {
            let (kind, regs) = match f.kind {
                FunctionKind::Entry => ("entry", f.registers.to_string()),
                _ => ("func", "-".to_string()),
            };
            println!(
                "  {kind:<6} {regs:>5} {:>9} {:>10} {:>6}/{:<6}  {}",
                f.shared_bytes, f.stack_frame_bytes, f.spill_store_bytes, f.spill_load_bytes, f.name
            );
        }
        if !a.allow_spills {
            if let Err(e) = deny_spills(&b.ptx, b.arch, &report, "cargo sluice check --allow-spills") {
                failures.push(e.to_string());
            }
        }
    }
    if failures.is_empty() {
        println!("\nptxas accepted every kernel{}", if a.allow_spills { "" } else { "; no function spills" });
        Ok(())
    } else {
        Err(Failure(failures.join("\n")))
    }
}

/// The root of the cargo project holding `dir`: the nearest folder above with a
/// `Cargo.toml` declaring `[workspace]`, else the nearest with any `Cargo.toml`.
fn project_root(dir: &Path) -> Option<PathBuf> {
    let manifests: Vec<&Path> = dir.ancestors().filter(|d| d.join("Cargo.toml").is_file()).collect();
    let workspace = manifests.iter().find(|d| {
        std::fs::read_to_string(d.join("Cargo.toml")).is_ok_and(|t| t.lines().any(|l| l.trim() == "[workspace]"))
    });
    workspace.or(manifests.first()).map(|d| d.to_path_buf())
}

/// The kernel crates of a project: the crates at most two folders below `root` (and `root`
/// itself) that depend on `sluice-device`, skipping `target` and hidden folders.
fn kernel_crates(root: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![(root.to_path_buf(), 0)];
    while let Some((dir, depth)) = stack.pop() {
        if depends_on_sluice_device(&dir.join("Cargo.toml")) {
            found.push(dir.clone());
        }
        if depth == 2 {
            continue;
        }
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for e in entries.flatten() {
            let path = e.path();
            let name = e.file_name().to_string_lossy().into_owned();
            if path.is_dir() && !name.starts_with('.') && name != "target" {
                stack.push((path, depth + 1));
            }
        }
    }
    found.sort();
    found
}

/// Whether a manifest lists `sluice-device` among its dependencies, or `sluice-cuda-std`
/// (a kernel crate ported from Rust-CUDA: `cuda_std = { package = "sluice-cuda-std", .. }`).
fn depends_on_sluice_device(manifest: &Path) -> bool {
    let Ok(text) = std::fs::read_to_string(manifest) else { return false };
    let mut in_deps = false;
    for line in text.lines().map(str::trim) {
        if line.starts_with('[') {
            in_deps = line.contains("dependencies");
            if line.contains("dependencies.sluice-device") || line.contains("dependencies.sluice-cuda-std") {
                return true;
            }
            continue;
        }
        let names = |name: &str| [" ", "=", "."].iter().any(|end| line.starts_with(&format!("{name}{end}")));
        if in_deps && (names("sluice-device") || names("sluice-cuda-std") || line.contains("\"sluice-cuda-std\"")) {
            return true;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_sluice_device_dependencies_only() {
        let dir = std::env::temp_dir().join(format!("cargo-sluice-deps-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let m = dir.join("Cargo.toml");
        std::fs::write(&m, "[package]\nname = \"sluice-device\"\n").unwrap();
        assert!(!depends_on_sluice_device(&m));
        std::fs::write(&m, "[package]\nname = \"k\"\n[dependencies]\nsluice-device = { path = \"x\" }\n").unwrap();
        assert!(depends_on_sluice_device(&m));
        std::fs::write(&m, "[package]\nname = \"k\"\n[dependencies]\nsluice-device.workspace = true\n").unwrap();
        assert!(depends_on_sluice_device(&m));
        std::fs::write(&m, "[dependencies.sluice-device]\ngit = \"u\"\n").unwrap();
        assert!(depends_on_sluice_device(&m));
        // A kernel crate ported from Rust-CUDA names the compatibility crate `cuda_std`.
        let ported = "[dependencies]\ncuda_std = { package = \"sluice-cuda-std\", path = \"x\" }\n";
        std::fs::write(&m, ported).unwrap();
        assert!(depends_on_sluice_device(&m));
        std::fs::write(&m, "[dependencies]\ncuda_std = \"0.2\"\n").unwrap();
        assert!(!depends_on_sluice_device(&m));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn parses_build_arguments() {
        let args: Vec<String> =
            ["--arch", "sm_80", "--arch=sm_90", "--kernels", "k", "--allow-spills"].map(String::from).to_vec();
        let a = parse_build_args(&args, true).unwrap_or_else(|e| panic!("{}", e.0));
        assert_eq!(a.archs, [Arch::SM_80, Arch::SM_90]);
        assert_eq!(a.kernels, [PathBuf::from("k")]);
        assert!(a.allow_spills);
        assert!(parse_build_args(&["--allow-spills".to_string()], false).is_err());
        assert!(parse_build_args(&["--arch".to_string(), "sm_8".to_string()], false).is_err());
    }
}
