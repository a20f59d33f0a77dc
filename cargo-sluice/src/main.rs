//! `cargo sluice`: sluice for your own projects.
//!
//! Install it once (`cargo install --locked --path cargo-sluice` in a sluice checkout, or
//! `cargo install cargo-sluice` from crates.io), then:
//!
//! | command | what it does |
//! | --- | --- |
//! | `cargo sluice setup` | finds or installs the kernel toolchain at its pinned versions; ptxas and libdevice go into one per-user folder (`~/.cache/sluice`), shared by every project |
//! | `cargo sluice new <path> [--name <name>] [--path <checkout> \| --git <url>]` | a working project: a kernel crate (`saxpy`, a tiled shared-memory sum), a host program that runs them and checks them against a CPU reference, a CPU test; then `setup`. It depends on the sluice this `cargo-sluice` was installed from |
//! | `cargo sluice build [--arch sm_XX]... [--kernels <dir>]...` | the PTX of the project's kernel crates, and their entries |
//! | `cargo sluice check [--arch sm_XX]... [--allow-spills] [--all-functions]` | build, then `ptxas`: registers, shared memory, stack and spills of every kernel (and, when asked, of the device functions they call); fails on a spill, or where `ptxas` serialized warpgroup MMAs (check a Hopper kernel crate with `--arch sm_90 --arch sm_90a`) |
//! | `cargo sluice doctor` | what was found where, at which version against its pin, what is missing, the command that installs it |
//!
//! Every command answers `--help`. The same code as sluice's own `cargo xtask` (through
//! `sluice_builder::setup` and the [`Builder`]).

#![forbid(unsafe_code)]

mod template;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};
use sluice_builder::setup::Setup;
use sluice_builder::toolchain::{self, Frontend, Locations};
use sluice_builder::{
    check_ptx, deny_spills, deny_wgmma_serialization, Arch, BuildError, Builder, FunctionKind, FunctionResources,
    Profile,
};

/// `cargo sluice …` runs this program as `cargo-sluice sluice …`: clap's usual shape for a
/// cargo subcommand.
#[derive(Parser)]
#[command(name = "cargo", bin_name = "cargo", styles = clap::builder::styling::Styles::plain())]
enum CargoCli {
    /// CUDA kernels in Rust: set up the kernel toolchain, start a project, build and check
    /// its kernels.
    #[command(version, propagate_version = true)]
    Sluice(Cli),
}

#[derive(Args)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Find or install the kernel toolchain at its pinned versions (ptxas and libdevice into
    /// the per-user tools folder, ~/.cache/sluice).
    Setup,
    /// Create a project: a kernel crate, a host program that runs and checks it, a CPU
    /// test; then run setup.
    New(NewArgs),
    /// Compile the project's kernel crates to PTX and list their kernels.
    Build(BuildArgs),
    /// Build, then assemble with ptxas: the registers, shared memory, stack and spills of
    /// every kernel; fails on a register spill unless allowed.
    Check(CheckArgs),
    /// What was found where, its version against the pin, what is missing and the command
    /// that installs it; and the kernel crates of the project here.
    Doctor,
}

#[derive(Args)]
struct NewArgs {
    /// The project's folder (created; must not exist or be empty). Its last component names
    /// the package, as with `cargo new`.
    path: PathBuf,
    /// The package name, instead of the folder's name.
    #[arg(long)]
    name: Option<String>,
    /// Depend on this sluice checkout (default: the sluice this cargo-sluice was installed
    /// from).
    #[arg(long = "path", value_name = "SLUICE_CHECKOUT", conflicts_with = "git")]
    path_to_sluice: Option<PathBuf>,
    /// Depend on sluice from this git repository.
    #[arg(long)]
    git: Option<String>,
    /// With --git: this branch.
    #[arg(long, requires = "git", conflicts_with = "rev")]
    branch: Option<String>,
    /// With --git: this commit.
    #[arg(long, requires = "git")]
    rev: Option<String>,
    /// Do not run setup afterwards.
    #[arg(long)]
    no_setup: bool,
}

#[derive(Args)]
struct BuildArgs {
    /// GPU architecture (repeatable; default: $SLUICE_ARCH, else sm_90, and sm_90a too for a kernel crate that gates kernels with `target_feature = "sm_90a"`).
    #[arg(long, value_name = "sm_XX")]
    arch: Vec<Arch>,
    /// The folder of a kernel crate (repeatable; default: the kernel crates of the package
    /// here, else of its workspace).
    #[arg(long, value_name = "DIR")]
    kernels: Vec<PathBuf>,
    /// Build without optimisation (the default is release).
    #[arg(long, conflicts_with = "release")]
    debug: bool,
    /// Build with optimisation (the default).
    #[arg(long)]
    release: bool,
    /// Device panics print their location and message (costs registers).
    #[arg(long)]
    panic_messages: bool,
    /// Show the nested cargo's progress.
    #[arg(long, short)]
    verbose: bool,
}

#[derive(Args)]
struct CheckArgs {
    #[command(flatten)]
    build: BuildArgs,
    /// Accept register spills instead of failing on them.
    #[arg(long)]
    allow_spills: bool,
    /// Also list the device functions the kernels call (compiler helpers, demangled).
    #[arg(long)]
    all_functions: bool,
}

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
    let mut args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    // `cargo sluice x` runs `cargo-sluice sluice x`; `cargo-sluice x` alone works too.
    if args.get(1).is_none_or(|a| a != "sluice") {
        args.insert(1, "sluice".into());
    }
    let CargoCli::Sluice(cli) = CargoCli::parse_from(args);
    let result = match cli.command {
        Command::Setup => setup(),
        Command::New(a) => new(a),
        Command::Build(a) => build(&a).map(|_| ()),
        Command::Check(a) => check(&a),
        Command::Doctor => doctor(),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure(e)) => {
            eprintln!("{e}");
            ExitCode::FAILURE
        }
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
    println!("\ncargo-sluice {}, new projects depend on: {}", env!("CARGO_PKG_VERSION"), describe_default_source());
    let set: Vec<String> = sluice_builder::ENV_VARS
        .iter()
        .filter_map(|v| std::env::var(v).ok().filter(|s| !s.is_empty()).map(|s| format!("{v}={s}")))
        .collect();
    if set.is_empty() {
        println!("no SLUICE_*/CUDA_* variable is set (none is needed)");
    } else {
        println!("set: {}", set.join(" "));
    }
    match kernel_crates_here(&current_dir()?) {
        Some((root, crates)) => {
            println!("project {}: kernel crates {:?}", root.display(), crates);
            // The pieces above can all be there while a build of this project remembers that
            // the range-check pass failed to build (then its kernels are built without it).
            let plugins = target_of(&root).join("sluice-kernels").join("sluice-llbc");
            let remembered = toolchain::Toolchain::discover(&Locations::default())
                .ok()
                .and_then(|tc| sluice_builder::range_checks::remembered_failure(&tc, &plugins));
            if let Some((marker, problem)) = remembered {
                println!(
                    "range-check pass: this project's kernel builds remember a failure, and build without the \
                     pass: {}; delete {} to try again",
                    problem.trim(),
                    marker.display()
                );
            }
        }
        None => println!("(not inside a cargo project)"),
    }
    if report.is_complete() {
        Ok(())
    } else {
        Err(Failure(format!("some pieces are missing: run `{}`", Frontend::CargoSluice.command("setup"))))
    }
}

fn describe_default_source() -> String {
    match template::Source::installed_from() {
        Ok(s) => s.to_string(),
        Err(Failure(e)) => format!("(none: {e})"),
    }
}

fn current_dir() -> Result<PathBuf> {
    std::env::current_dir().map_err(|e| Failure(format!("cargo sluice: the current folder is unreadable: {e}")))
}

// ---------------------------------------------------------------------------
// new

fn new(a: NewArgs) -> Result {
    let source = match (a.path_to_sluice, a.git) {
        (Some(p), _) => {
            let abs = p.canonicalize().map_err(|e| Failure(format!("--path {}: {e}", p.display())))?;
            template::Source::Path(abs)
        }
        (None, Some(url)) => template::Source::Git { url, branch: a.branch, rev: a.rev },
        (None, None) => template::Source::installed_from()?,
    };
    let dir = current_dir()?.join(&a.path);
    let name = match a.name {
        Some(n) => n,
        None => a.path.file_name().map(|n| n.to_string_lossy().into_owned()).ok_or_else(|| {
            Failure(format!("cargo sluice new: `{}` names no folder; give the project's path", a.path.display()))
        })?,
    };
    let project = template::Project::new(&name, source)?;
    project.write(&dir)?;
    println!(
        "created {} (kernel crate `{}`, host program `{name}`; sluice from {})",
        dir.display(),
        project.kernels_package(),
        project.source()
    );
    if !a.no_setup {
        println!();
        setup()?;
    }
    println!(
        "\nnext:\n  cd {}\n  cargo run            # builds the kernels, runs them on the GPU (or the CPU backend) and checks them",
        a.path.display()
    );
    println!("  cargo test           # the kernel crate's CPU tests\n  cargo sluice check   # ptxas: registers, shared memory, spills");
    Ok(())
}

// ---------------------------------------------------------------------------
// build, check

impl BuildArgs {
    fn archs(&self) -> Result<Vec<Arch>> {
        if !self.arch.is_empty() {
            return Ok(self.arch.clone());
        }
        Ok(vec![match std::env::var("SLUICE_ARCH").ok().filter(|a| !a.is_empty()) {
            Some(a) => a.parse()?,
            None => Arch::default(),
        }])
    }

    fn profile(&self) -> Profile {
        if self.debug {
            Profile::Debug
        } else {
            Profile::Release
        }
    }
}

/// One built PTX file.
struct Built {
    lib_name: String,
    arch: Arch,
    ptx: PathBuf,
}

fn build(a: &BuildArgs) -> Result<Vec<Built>> {
    let here = current_dir()?;
    let (root, crates) = if a.kernels.is_empty() {
        kernel_crates_here(&here)
            .ok_or_else(|| Failure("cargo sluice: not inside a cargo project (no Cargo.toml here or above)".into()))?
    } else {
        let root = workspace_of(&here).unwrap_or_else(|| here.clone());
        (root, a.kernels.iter().map(|k| here.join(k)).collect())
    };
    if crates.is_empty() {
        return Err(Failure(format!(
            "cargo sluice: no kernel crate found in {} (a crate whose [dependencies] name sluice-device or \
             sluice-cuda-std); name one with --kernels <dir>, or start a project with `cargo sluice new <name>`",
            root.display()
        )));
    }
    let target = target_of(&root);
    let mut built = Vec::new();
    for krate in &crates {
        let mut archs = a.archs()?;
        // Kernels gated to the sm_90a build (the Hopper gate of docs/tensor-cores.md) are in no
        // sm_90 PTX: without an explicit `--arch`, their crate is built for sm_90a too, so that
        // they are checked rather than silently absent.
        if a.arch.is_empty() && archs == [Arch::SM_90] && gates_sm_90a(krate) {
            archs.push(Arch::SM_90A);
        }
        for arch in archs {
            let started = std::time::Instant::now();
            let out = Builder::new(krate)
                .arch(arch)
                .profile(a.profile())
                .panic_messages(a.panic_messages)
                .verbose(a.verbose)
                .build()?;
            let dest = target.join("ptx").join(format!("{}.{arch}.ptx", out.lib_name));
            let text = std::fs::read_to_string(&out.ptx)
                .map_err(|e| Failure(format!("cargo sluice: reading {}: {e}", out.ptx.display())))?;
            sluice_builder::write_if_changed(&dest, &text)?;
            println!(
                "built {} ({}) for {arch} in {:.1} s{}, range-check pass {}",
                dest.display(),
                out.package,
                started.elapsed().as_secs_f64(),
                if out.libdevice.is_some() { ", libdevice linked" } else { "" },
                if out.range_checks { "used" } else { "not used (the warning below says why)" }
            );
            for k in &out.kernels {
                println!("  .entry {k}");
            }
            for n in &out.notes {
                eprintln!("warning: {n}");
            }
            built.push(Built { lib_name: out.lib_name, arch, ptx: dest });
        }
    }
    Ok(built)
}

/// Whether a kernel crate's sources gate kernels to the sm_90a build
/// (`target_feature = "sm_90a"`).
fn gates_sm_90a(krate: &Path) -> bool {
    fn any_file(dir: &Path) -> bool {
        let Ok(entries) = std::fs::read_dir(dir) else { return false };
        entries.flatten().any(|e| {
            let p = e.path();
            if p.is_dir() {
                any_file(&p)
            } else {
                p.extension().is_some_and(|x| x == "rs")
                    && std::fs::read_to_string(&p).is_ok_and(|t| t.contains("target_feature = \"sm_90a\""))
            }
        })
    }
    any_file(&krate.join("src"))
}

fn check(a: &CheckArgs) -> Result {
    let ptxas = toolchain::find_ptxas(&Locations::default())?;
    let built = build(&a.build)?;
    let mut failures = Vec::new();
    for b in &built {
        let report = check_ptx(&ptxas, &b.ptx, b.arch)?;
        println!("\n{} for {} (ptxas {}):", b.lib_name, b.arch, ptxas.display());
        print!("{}", resource_table(&report, a.all_functions));
        if !a.allow_spills {
            if let Err(e) = deny_spills(&b.ptx, b.arch, &report, "cargo sluice check --allow-spills") {
                failures.push(e.to_string());
            }
        }
        if let Err(e) = deny_wgmma_serialization(&ptxas, &b.ptx, b.arch) {
            failures.push(e.to_string());
        }
    }
    if failures.is_empty() {
        println!("\nptxas accepted every kernel{}", if a.allow_spills { "" } else { "; no function spills" });
        Ok(())
    } else {
        Err(Failure(failures.join("\n")))
    }
}

/// The resource table of one PTX file: kernels first, in file order; the device functions
/// they call (compiler helpers, inlined code kept out of line) after them, demangled, only
/// with `all_functions` — otherwise one line counts them (and names any that spills).
fn resource_table(report: &[FunctionResources], all_functions: bool) -> String {
    let mut out = format!(
        "  {:<6} {:>5} {:>9} {:>10} {:>13}  function\n",
        "kind", "regs", "smem (B)", "stack (B)", "spills st/ld"
    );
    let row = |f: &FunctionResources, kind: &str, regs: String, name: String| {
        format!(
            "  {kind:<6} {regs:>5} {:>9} {:>10} {:>6}/{:<6}  {name}\n",
            f.shared_bytes, f.stack_frame_bytes, f.spill_store_bytes, f.spill_load_bytes
        )
    };
    let (kernels, helpers): (Vec<_>, Vec<_>) = report.iter().partition(|f| f.kind == FunctionKind::Entry);
    for f in &kernels {
        out += &row(f, "kernel", f.registers.to_string(), f.name.clone());
    }
    let shown: Vec<&&FunctionResources> = helpers.iter().filter(|f| all_functions || f.spills()).collect();
    for f in &shown {
        out += &row(f, "func", "-".into(), format!("{:#}", rustc_demangle::demangle(&f.name)));
    }
    let hidden = helpers.len() - shown.len();
    if hidden > 0 {
        out += &format!(
            "  (+{hidden} device function{} the kernels call, none spilling: `--all-functions` lists them)\n",
            if hidden == 1 { "" } else { "s" }
        );
    }
    out
}

/// The kernel crates that `cargo sluice build` and `check` use when run in `dir`: those of
/// the package holding `dir` (`ports/` finds `ports/kernels`), else, when that package has
/// none, those of its workspace. `None` outside any cargo project.
fn kernel_crates_here(dir: &Path) -> Option<(PathBuf, Vec<PathBuf>)> {
    let package = dir.ancestors().find(|d| d.join("Cargo.toml").is_file())?.to_path_buf();
    let crates = kernel_crates(&package);
    if !crates.is_empty() {
        return Some((package, crates));
    }
    let workspace = workspace_of(&package).unwrap_or_else(|| package.clone());
    let crates = kernel_crates(&workspace);
    Some((workspace, crates))
}

/// The nearest folder at or above `dir` whose `Cargo.toml` declares `[workspace]`.
/// The target folder of the project at `root` (`CARGO_TARGET_DIR` where set).
fn target_of(root: &Path) -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace_of(root).unwrap_or_else(|| root.to_path_buf()).join("target"))
}

fn workspace_of(dir: &Path) -> Option<PathBuf> {
    dir.ancestors()
        .find(|d| {
            std::fs::read_to_string(d.join("Cargo.toml")).is_ok_and(|t| t.lines().any(|l| l.trim() == "[workspace]"))
        })
        .map(Path::to_path_buf)
}

/// The kernel crates of a project: the library crates at most two folders below `root`
/// (and `root` itself) whose `[dependencies]` name `sluice-device`, skipping `target` and
/// hidden folders.
fn kernel_crates(root: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![(root.to_path_buf(), 0)];
    while let Some((dir, depth)) = stack.pop() {
        if dir.join("src/lib.rs").is_file() && depends_on_sluice_device(&dir.join("Cargo.toml")) {
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

/// Whether a manifest's `[dependencies]` (plain or target-specific, not dev-, build- or
/// workspace dependencies) list `sluice-device`, or `sluice-cuda-std` (a kernel crate
/// ported from Rust-CUDA: `cuda_std = { package = "sluice-cuda-std", .. }`). sluice's own
/// libraries (`sluice-*` packages) are not kernel crates.
fn depends_on_sluice_device(manifest: &Path) -> bool {
    let Ok(text) = std::fs::read_to_string(manifest) else { return false };
    let mut in_deps = false;
    let mut in_package = false;
    for line in text.lines().map(str::trim) {
        if let Some(table) = line.strip_prefix('[') {
            let table = table.trim_end_matches(']');
            let last = table.rsplit('.').next().unwrap_or(table);
            in_deps = last == "dependencies" && table != "workspace.dependencies";
            in_package = table == "package";
            let named = |dep: &str| table.ends_with(&format!("dependencies.{dep}"));
            if (named("sluice-device") || named("sluice-cuda-std"))
                && !table.contains("dev-dependencies")
                && !table.contains("build-dependencies")
            {
                return true;
            }
            continue;
        }
        if in_package && line.starts_with("name") && line.contains("\"sluice-") {
            return false;
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
    use clap::CommandFactory;

    fn parse(args: &[&str]) -> std::result::Result<CargoCli, clap::Error> {
        CargoCli::try_parse_from(["cargo", "sluice"].iter().chain(args))
    }

    #[test]
    fn the_command_line_is_consistent() {
        CargoCli::command().debug_assert();
    }

    #[test]
    fn every_subcommand_answers_help() {
        for sub in ["setup", "new", "build", "check", "doctor"] {
            let err = parse(&[sub, "--help"]).err().unwrap_or_else(|| panic!("{sub} --help parsed as a command"));
            assert_eq!(err.kind(), clap::error::ErrorKind::DisplayHelp, "{sub}");
            assert!(err.to_string().contains("Usage: cargo sluice"), "{sub}:\n{err}");
        }
    }

    #[test]
    fn parses_build_arguments() {
        let Ok(CargoCli::Sluice(Cli { command: Command::Check(a) })) =
            parse(&["check", "--arch", "sm_80", "--arch=sm_90", "--kernels", "k", "--allow-spills"])
        else {
            panic!("check did not parse")
        };
        assert_eq!(a.build.arch, [Arch::SM_80, Arch::SM_90]);
        assert_eq!(a.build.kernels, [PathBuf::from("k")]);
        assert!(a.allow_spills && !a.all_functions);
        assert!(parse(&["build", "--allow-spills"]).is_err());
        assert!(parse(&["build", "--arch", "sm_8"]).is_err());
    }

    #[test]
    fn new_takes_a_path_and_a_checkout() {
        let Ok(CargoCli::Sluice(Cli { command: Command::New(a) })) =
            parse(&["new", "projects/my-app", "--path", "/s", "--no-setup"])
        else {
            panic!("new did not parse")
        };
        assert_eq!(a.path, Path::new("projects/my-app"));
        assert_eq!(a.path_to_sluice.as_deref(), Some(Path::new("/s")));
        assert!(a.no_setup);
        assert!(parse(&["new", "x", "--path", "/s", "--git", "u"]).is_err());
        assert!(parse(&["new", "x", "--branch", "b"]).is_err(), "--branch needs --git");
    }

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
        std::fs::write(&m, "[target.'cfg(unix)'.dependencies]\nsluice-device = \"0.1\"\n").unwrap();
        assert!(depends_on_sluice_device(&m));
        // A host package that tests with the device std is not a kernel crate (sluice's own
        // workspace root: building it for the GPU fails on its host dependencies).
        std::fs::write(&m, "[dependencies]\nsluice-host = \"0.1\"\n[dev-dependencies]\nsluice-device = \"0.1\"\n")
            .unwrap();
        assert!(!depends_on_sluice_device(&m));
        std::fs::write(&m, "[dev-dependencies.sluice-device]\npath = \"x\"\n").unwrap();
        assert!(!depends_on_sluice_device(&m));
        std::fs::write(&m, "[workspace.dependencies]\nsluice-device = { path = \"x\" }\n").unwrap();
        assert!(!depends_on_sluice_device(&m));
        std::fs::write(&m, "[package]\nname = \"sluice-cuda-std\"\n[dependencies]\nsluice-device = \"0.1\"\n").unwrap();
        assert!(!depends_on_sluice_device(&m), "sluice's own libraries are not kernel crates");
        // A kernel crate ported from Rust-CUDA names the compatibility crate `cuda_std`.
        let ported = "[dependencies]\ncuda_std = { package = \"sluice-cuda-std\", path = \"x\" }\n";
        std::fs::write(&m, ported).unwrap();
        assert!(depends_on_sluice_device(&m));
        std::fs::write(&m, "[dependencies]\ncuda_std = \"0.2\"\n").unwrap();
        assert!(!depends_on_sluice_device(&m));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn finds_the_kernel_crate_of_the_package_it_runs_in() {
        let checkout = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
        let (root, crates) = kernel_crates_here(&checkout.join("ports/src")).unwrap();
        assert_eq!(root, checkout.join("ports"));
        assert_eq!(crates, [checkout.join("ports/kernels")]);
        // At the workspace root: sluice's own kernel crates, never the root package itself.
        let (_, crates) = kernel_crates_here(checkout).unwrap();
        assert!(crates.contains(&checkout.join("gpu-kernels")), "{crates:?}");
        assert!(!crates.contains(&checkout.to_path_buf()), "{crates:?}");
    }

    #[test]
    fn check_lists_kernels_first_and_hides_helpers() {
        let f = |name: &str, kind, spill| FunctionResources {
            name: name.into(),
            kind,
            registers: 12,
            shared_bytes: 0,
            stack_frame_bytes: 0,
            spill_store_bytes: spill,
            spill_load_bytes: spill,
        };
        let report = [
            f("_RNvNtCscMdEKAfDEPd_4sha26sha25611compress256", FunctionKind::Function, 0),
            f("vecadd", FunctionKind::Entry, 0),
        ];
        let short = resource_table(&report, false);
        let lines: Vec<&str> = short.lines().collect();
        assert!(lines[1].contains("kernel") && lines[1].ends_with("vecadd"), "{short}");
        assert!(!short.contains("compress256") && short.contains("+1 device function"), "{short}");
        let all = resource_table(&report, true);
        assert!(all.contains("sha2::sha256::compress256") && !all.contains("_RNv"), "{all}");
        let spilling = resource_table(&[report[1].clone(), f("_RNvCs1_3foo6helper", FunctionKind::Function, 8)], false);
        assert!(spilling.contains("foo::helper"), "a spilling helper is always shown:\n{spilling}");
    }
}
