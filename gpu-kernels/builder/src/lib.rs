//! `sluice-builder`: compiles a `#![no_std]` Rust kernel crate to PTX.
//!
//! This is the role `cuda_builder` plays in Rust-CUDA, for rustc's own LLVM
//! NVPTX backend (`nvptx64-nvidia-cuda`): a build script or a developer
//! command calls
//!
//! ```no_run
//! # fn main() -> Result<(), sluice_builder::BuildError> {
//! use sluice_builder::{Arch, Builder};
//! let out = Builder::new("gpu-kernels").arch(Arch::SM_90).build()?;
//! println!("{} ({} kernels)", out.ptx.display(), out.kernels.len());
//! # Ok(()) }
//! ```
//!
//! and gets one PTX file and the names of its kernel entries. Under the hood:
//!
//! 1. the toolchain is found ([`toolchain`]: Debian's `rustc-web` route or
//!    rustup's nightly route), or a [`BuildError`] names the missing piece and
//!    the command that installs it;
//! 2. a nested `cargo rustc --crate-type cdylib --target nvptx64-nvidia-cuda
//!    -Zbuild-std=core` builds the kernel crate in its own target folder (sharing
//!    the outer one would deadlock on cargo's lock), with the outer build's
//!    environment scrubbed ([`toolchain::scrubbed_env`]);
//! 3. rustc hands the bitcode to `sluice-llbc` (`-C linker=`), which links it
//!    with libdevice, optimises it and lowers it to PTX with `llc`;
//! 4. the PTX is checked for unresolved libdevice calls and its `.entry`
//!    names are listed.
//!
//! [`check_ptx`] assembles PTX with `ptxas` and returns each kernel's
//! resource report (registers, shared memory, stack, spills).

#![warn(missing_docs)]

mod arch;
mod error;
pub mod ptx;
pub mod toolchain;

use std::path::{Path, PathBuf};
use std::process::Command;

pub use arch::Arch;
pub use error::{BuildError, Tool};
pub use ptx::{check_ptx, KernelResources};
use toolchain::{Locations, Toolchain};

/// The rustc target every kernel crate is compiled for.
pub const TARGET: &str = "nvptx64-nvidia-cuda";

/// The source of `sluice-llbc`, compiled on first use (see `src/bin/sluice-llbc.rs`).
const LLBC_SOURCE: &str = include_str!("bin/sluice-llbc.rs");

/// Optimisation profile of the kernel build.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Profile {
    /// `--release`: what every benchmark and test uses.
    #[default]
    Release,
    /// The dev profile: kernel crate built without optimisation (the link still
    /// optimises lightly so that no call is left unresolved).
    Debug,
}

/// What a build produced.
#[derive(Debug, Clone)]
pub struct PtxOutput {
    /// The PTX file.
    pub ptx: PathBuf,
    /// The kernel entries (`.entry` names) in file order.
    pub kernels: Vec<String>,
    /// The source files the kernel crate was built from (from cargo's dep-info),
    /// for `cargo:rerun-if-changed`.
    pub sources: Vec<PathBuf>,
    /// The architecture it was built for.
    pub arch: Arch,
    /// Whether libdevice was linked in.
    pub libdevice: Option<PathBuf>,
}

/// Builds one kernel crate to PTX. See the crate docs for an example.
#[derive(Debug, Clone)]
pub struct Builder {
    crate_dir: PathBuf,
    arch: Arch,
    profile: Profile,
    target_dir: Option<PathBuf>,
    tools_dir: Option<PathBuf>,
    copy_to: Option<PathBuf>,
    quiet: bool,
}

impl Builder {
    /// A builder for the kernel crate in `crate_dir` (the folder holding its `Cargo.toml`).
    pub fn new(crate_dir: impl Into<PathBuf>) -> Builder {
        Builder {
            crate_dir: crate_dir.into(),
            arch: Arch::default(),
            profile: Profile::default(),
            target_dir: None,
            tools_dir: None,
            copy_to: None,
            quiet: true,
        }
    }

    /// The GPU architecture (default `sm_90`).
    pub fn arch(mut self, arch: Arch) -> Self {
        self.arch = arch;
        self
    }

    /// Release (default) or debug.
    pub fn profile(mut self, profile: Profile) -> Self {
        self.profile = profile;
        self
    }

    /// The nested build's target folder. Default: `target/sluice-kernels/<arch>` of the
    /// workspace holding the kernel crate. Never the outer build's own target
    /// folder: cargo locks it for the whole outer build.
    pub fn target_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.target_dir = Some(dir.into());
        self
    }

    /// Where `cargo xtask setup` installs local tools (default `target/sluice-tools`).
    pub fn tools_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.tools_dir = Some(dir.into());
        self
    }

    /// Also copy the PTX to this path (written only when its content changed,
    /// so that downstream builds stay incremental).
    pub fn copy_to(mut self, path: impl Into<PathBuf>) -> Self {
        self.copy_to = Some(path.into());
        self
    }

    /// Show the nested cargo's progress on stderr (default: captured, shown
    /// only on failure).
    pub fn verbose(mut self, verbose: bool) -> Self {
        self.quiet = !verbose;
        self
    }

    fn workspace_target(&self) -> PathBuf {
        if let Some(dir) = std::env::var_os("CARGO_TARGET_DIR").filter(|_| self.target_dir.is_none()) {
            // The user moved the workspace's target folder: follow them.
            return PathBuf::from(dir);
        }
        workspace_root(&self.crate_dir).join("target")
    }

    /// The local tools folder this builder uses: the builder's `tools_dir`, else
    /// `SLUICE_TOOLS_DIR`, else `target/sluice-tools` beside the workspace's
    /// `Cargo.lock`. Deliberately not under `CARGO_TARGET_DIR`: tools such as
    /// trybuild run cargo with their own target folder, and `cargo xtask setup`
    /// installed ptxas and libdevice in one place.
    pub fn locations(&self) -> Locations {
        let tools_dir = self
            .tools_dir
            .clone()
            .or_else(|| std::env::var_os("SLUICE_TOOLS_DIR").filter(|v| !v.is_empty()).map(PathBuf::from))
            .unwrap_or_else(|| workspace_root(&self.crate_dir).join("target").join("sluice-tools"));
        Locations { tools_dir }
    }

    /// Finds the toolchain, builds the kernel crate and returns the PTX.
    pub fn build(&self) -> Result<PtxOutput, BuildError> {
        let toolchain = Toolchain::discover(&self.locations())?;
        self.build_with(&toolchain)
    }

    /// As [`Builder::build`], with an already discovered toolchain.
    pub fn build_with(&self, tc: &Toolchain) -> Result<PtxOutput, BuildError> {
        // One folder per architecture: the target CPU is a rustflag, and switching
        // it in one folder would rebuild `core` every time.
        let target_dir = self
            .target_dir
            .clone()
            .unwrap_or_else(|| self.workspace_target().join("sluice-kernels").join(self.arch.to_string()));
        std::fs::create_dir_all(&target_dir).map_err(error::io(format!("creating {}", target_dir.display())))?;
        let linker = install_linker(tc, &target_dir)?;
        let manifest = self.crate_dir.join("Cargo.toml");

        let mut flags = vec![format!("-Ctarget-cpu={}", self.arch), format!("-Clinker={}", linker.display())];
        if let Some(libdevice) = &tc.libdevice {
            flags.push(format!("-Clink-arg={}", libdevice.display()));
        }
        let mut cmd = Command::new(&tc.cargo);
        cmd.env_clear()
            .envs(toolchain::scrubbed_env())
            .env("RUSTC", &tc.rustc.rustc)
            // Debian's rustc is a stable release: this unlocks `-Zbuild-std` and the
            // kernel crate's `#![feature]`s. Harmless on nightly.
            .env("RUSTC_BOOTSTRAP", "1")
            .env("CARGO_ENCODED_RUSTFLAGS", flags.join("\x1f"))
            .env("SLUICE_LLVM_BIN", &tc.llvm_bin)
            .arg("rustc")
            .arg("--manifest-path")
            .arg(&manifest)
            .args(["--lib", "--crate-type", "cdylib", "--target", TARGET, "-Zbuild-std=core"])
            .arg("--target-dir")
            .arg(&target_dir)
            .args(["--message-format", "json-render-diagnostics"]);
        if self.profile == Profile::Release {
            cmd.arg("--release");
        }
        let out = cmd.output().map_err(|e| {
            if e.kind() == std::io::ErrorKind::NotFound {
                BuildError::ToolMissing { tool: Tool::Cargo, looked: vec![tc.cargo.clone()], fix: "install Rust with cargo (rustup.rs or `apt-get install cargo`)".into() }
            } else {
                BuildError::Io { what: format!("starting {}", tc.cargo.display()), source: e }
            }
        })?;
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        if !self.quiet {
            eprint!("{stderr}");
        }
        if !out.status.success() {
            return Err(BuildError::KernelCompile { manifest, log: tail(&stderr, 200) });
        }
        let ptx_files: Vec<PathBuf> = stdout
            .lines()
            .filter(|l| l.contains("\"reason\":\"compiler-artifact\""))
            .flat_map(ptx::json_strings_in_filenames)
            .filter(|f| f.ends_with(".ptx"))
            .map(PathBuf::from)
            .collect();
        let [ptx_path] = ptx_files.as_slice() else {
            return Err(BuildError::PtxArtifact { found: ptx_files });
        };
        let text = std::fs::read_to_string(ptx_path).map_err(error::io(format!("reading {}", ptx_path.display())))?;
        let unresolved = ptx::unresolved_libdevice_calls(&text);
        if !unresolved.is_empty() {
            return Err(BuildError::LibdeviceMissing { functions: unresolved });
        }
        let kernels = ptx::entries(&text);
        let sources = ptx::dep_info_sources(&ptx_path.with_extension("d"));
        let final_path = match &self.copy_to {
            Some(dest) => {
                write_if_changed(dest, &text)?;
                dest.clone()
            }
            None => ptx_path.clone(),
        };
        Ok(PtxOutput { ptx: final_path, kernels, sources, arch: self.arch, libdevice: tc.libdevice.clone() })
    }
}

/// The folder of the nearest `Cargo.lock` above `crate_dir` (the workspace
/// root), or `crate_dir` itself.
pub fn workspace_root(crate_dir: &Path) -> PathBuf {
    let start = crate_dir.canonicalize().unwrap_or_else(|_| crate_dir.to_path_buf());
    let mut dir = start.clone();
    loop {
        if dir.join("Cargo.lock").is_file() {
            return dir;
        }
        if !dir.pop() {
            return start;
        }
    }
}

/// Writes `text` to `path` unless it already holds exactly that (keeps mtimes
/// stable so that whatever depends on the file is not rebuilt).
pub fn write_if_changed(path: &Path, text: &str) -> Result<bool, BuildError> {
    if std::fs::read_to_string(path).is_ok_and(|old| old == text) {
        return Ok(false);
    }
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(error::io(format!("creating {}", parent.display())))?;
    }
    std::fs::write(path, text).map_err(error::io(format!("writing {}", path.display())))?;
    Ok(true)
}

fn tail(s: &str, lines: usize) -> String {
    let v: Vec<&str> = s.lines().collect();
    v[v.len().saturating_sub(lines)..].join("\n")
}

/// Compiles `sluice-llbc` once per source version into `<target_dir>/sluice-llbc/`
/// and returns its path. [`Builder::build`] calls it; it is public so that tools
/// (and the concurrency tests) can prepare the linker on their own.
///
/// Safe under any concurrency: build scripts, `cargo xtask`, test threads and other
/// processes may all call it at once against the same empty folder. Each attempt
/// compiles in a scratch folder of its own (rustc names its intermediate object
/// files after the output name up to its first `.`, so two compiles in one folder
/// overwrite each other's objects and the link fails with "undefined reference to
/// `main`"), then moves the program into place with one atomic rename: a
/// concurrent caller sees either no linker or a whole one, never a half-written one.
pub fn install_linker(tc: &Toolchain, target_dir: &Path) -> Result<PathBuf, BuildError> {
    let hash = LLBC_SOURCE.bytes().fold(0xcbf29ce484222325u64, |h, b| (h ^ b as u64).wrapping_mul(0x100000001b3));
    let dir = target_dir.join("sluice-llbc");
    let exe = dir.join(format!("sluice-llbc-{hash:016x}"));
    if exe.is_file() {
        return Ok(exe);
    }
    static COUNTER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let scratch = dir.join(format!("scratch-{}-{n}", std::process::id()));
    // A folder left by a killed attempt of an earlier process with the same pid
    // would only hold stale files: start from an empty one.
    let _ = std::fs::remove_dir_all(&scratch);
    std::fs::create_dir_all(&scratch).map_err(error::io(format!("creating {}", scratch.display())))?;
    let result = compile_linker_in(tc, &scratch, &exe);
    let _ = std::fs::remove_dir_all(&scratch);
    result.map(|()| exe)
}

/// One attempt of [`install_linker`], everything inside `scratch`.
fn compile_linker_in(tc: &Toolchain, scratch: &Path, exe: &Path) -> Result<(), BuildError> {
    let src = scratch.join("sluice_llbc.rs");
    std::fs::write(&src, LLBC_SOURCE).map_err(error::io(format!("writing {}", src.display())))?;
    let built = scratch.join("sluice-llbc");
    let out = Command::new(&tc.rustc.rustc)
        .env_clear()
        .envs(toolchain::scrubbed_env())
        .args(["--edition", "2021", "-O", "--crate-name", "sluice_llbc", "-o"])
        .arg(&built)
        .arg(&src)
        .current_dir(scratch)
        .output()
        .map_err(error::io(format!("starting {}", tc.rustc.rustc.display())))?;
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        // A host program needs a C linker too; say so rather than blame the kernel toolchain.
        let fix = if stderr.contains("linker `cc` not found") || stderr.contains("linking with `cc` failed") {
            format!("install a C linker for host programs (`apt-get install gcc libc6-dev`), then try again; if one is installed: {}", toolchain::SETUP_FIX)
        } else {
            toolchain::SETUP_FIX.into()
        };
        return Err(BuildError::ToolUnusable {
            tool: Tool::KernelRustc,
            path: tc.rustc.rustc.clone(),
            problem: format!("it could not compile the host program sluice-llbc:\n{stderr}"),
            fix,
        });
    }
    // Rename is atomic and replaces a linker another attempt installed meanwhile
    // (same source, same program).
    std::fs::rename(&built, exe).map_err(error::io(format!("installing {}", exe.display())))
}
