//! The [`Builder`]: one kernel crate to one PTX file through a nested cargo, and the
//! helpers around it (the bitcode linker it installs, the target folders it picks).

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::arch::{Arch, TARGET};
use crate::error::{self, BuildError, Tool};
use crate::ptx;
use crate::range_checks;
use crate::toolchain::{self, Locations, Toolchain};

/// The features a kernel crate gets from the builder (`-Zcrate-attr=feature(..)`):
/// `abi_ptx` for `#[kernel]`'s `extern "ptx-kernel"` entries, `asm_experimental_arch`
/// for inline PTX, `stdarch_nvptx` for `core::arch::nvptx`. Declaring them again in the
/// crate is allowed.
///
/// ```
/// assert!(sluice_builder::KERNEL_FEATURES.contains(&"abi_ptx"));
/// ```
pub const KERNEL_FEATURES: &[&str] = &["abi_ptx", "asm_experimental_arch", "stdarch_nvptx"];

/// The source of `sluice-llbc`, compiled on first use (see `src/bin/sluice-llbc.rs`).
const LLBC_SOURCE: &str = include_str!("bin/sluice-llbc.rs");

/// Optimisation profile of the kernel build.
///
/// ```
/// assert_eq!(sluice_builder::Profile::default(), sluice_builder::Profile::Release);
/// ```
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
///
/// ```no_run
/// let out = sluice_builder::Builder::new("kernels").build()?;
/// println!("{} ({}) for {}: {:?}", out.ptx.display(), out.lib_name, out.arch, out.kernels);
/// # Ok::<(), sluice_builder::BuildError>(())
/// ```
#[derive(Debug, Clone)]
pub struct PtxOutput {
    /// The PTX file.
    pub ptx: PathBuf,
    /// The kernel entries (`.entry` names) in file order.
    pub kernels: Vec<String>,
    /// The source files the kernel crate was built from (from cargo's dep-info), for
    /// `cargo:rerun-if-changed`; where the [range-check pass](crate::range_checks) could not
    /// be used, also what decides whether it can ([`range_checks::watch_when_unavailable`]),
    /// so that a build script runs again once it can.
    pub sources: Vec<PathBuf>,
    /// The architecture it was built for.
    pub arch: Arch,
    /// Whether libdevice was linked in.
    pub libdevice: Option<PathBuf>,
    /// The kernel crate's package name (`my-kernels`).
    pub package: String,
    /// The kernel crate's library name (`my_kernels`): the name host code uses for it.
    pub lib_name: String,
    /// The compiler's warnings about the kernel crate's device build, one line each
    /// (`unused variable: `x` (kernels/src/lib.rs:12:9)`). Kernel bodies are compiled for
    /// the device only, so these are the only warnings about them; [`embed`](fn@crate::embed) passes them
    /// on to cargo.
    pub warnings: Vec<String>,
    /// What the build had to do without, one line each: the [range-check
    /// pass](crate::range_checks) when it cannot be built here (why, and the fix). The
    /// kernels are correct either way; [`embed`](fn@crate::embed) and `cargo sluice build`
    /// print these.
    pub notes: Vec<String>,
    /// Whether the [range-check pass](crate::range_checks) ran over the kernels (if not, a
    /// note says why).
    pub range_checks: bool,
}

/// Builds one kernel crate to PTX. Every option has a default; a build script needs
/// none of them ([`embed`](fn@crate::embed)):
///
/// ```no_run
/// use sluice_builder::{Arch, Builder, Profile};
/// let out = Builder::new("kernels")
///     .arch(Arch::SM_80)                 // default sm_90
///     .profile(Profile::Release)         // the default
///     .panic_messages(false)             // the default: panics are a `trap`
///     .copy_to("target/ptx/kernels.ptx") // also copy the PTX here
///     .verbose(true)                     // show the nested cargo's progress
///     .build()?;
/// assert!(out.ptx.ends_with("kernels.ptx"));
/// # Ok::<(), sluice_builder::BuildError>(())
/// ```
#[derive(Debug, Clone)]
pub struct Builder {
    pub(crate) crate_dir: PathBuf,
    arch: Arch,
    specific: Option<Arch>,
    profile: Profile,
    target_dir: Option<PathBuf>,
    tools_dir: Option<PathBuf>,
    copy_to: Option<PathBuf>,
    quiet: bool,
    panic_messages: bool,
    crate_attrs: bool,
    no_std_deps: Vec<String>,
}

impl Builder {
    /// A builder for the kernel crate in `crate_dir` (the folder holding its `Cargo.toml`).
    ///
    /// Panic messages are off unless the environment variable `SLUICE_PANIC_MESSAGES` is
    /// `1` (see [`Builder::panic_messages`]).
    ///
    /// ```
    /// let b = sluice_builder::Builder::new("kernels");
    /// assert!(b.nested_target_dir().ends_with("sm_90"));
    /// ```
    pub fn new(crate_dir: impl Into<PathBuf>) -> Builder {
        Builder {
            crate_dir: crate_dir.into(),
            arch: Arch::default(),
            specific: None,
            profile: Profile::default(),
            target_dir: None,
            tools_dir: None,
            copy_to: None,
            quiet: true,
            panic_messages: std::env::var("SLUICE_PANIC_MESSAGES").is_ok_and(|v| v == "1"),
            crate_attrs: true,
            no_std_deps: Vec::new(),
        }
    }

    /// The GPU architecture (default `sm_90`).
    ///
    /// ```
    /// use sluice_builder::{Arch, Builder};
    /// assert!(Builder::new("k").arch(Arch::SM_80).nested_target_dir().ends_with("sm_80"));
    /// ```
    pub fn arch(mut self, arch: Arch) -> Self {
        self.arch = arch;
        self
    }

    /// Also builds the kernel crate for an architecture-specific target (`sm_90a`), whose
    /// kernels may use that architecture's own instructions (Hopper's warpgroup MMA, which a
    /// kernel gates with `#[cfg(target_feature = "sm_90a")]`, or the device std's
    /// `wgmma`). [`Builder::embed`] embeds both PTX texts, and the host launches the specific
    /// one on a device of that compute capability, the portable one elsewhere; a kernel only
    /// the specific build has is a typed error (`Error::KernelNeedsArch`) on other devices.
    /// [`Builder::build`] builds the [`arch`](Builder::arch) alone.
    ///
    /// ```
    /// use sluice_builder::{Arch, Builder};
    /// let b = Builder::new("kernels").specific(Arch::SM_90A);
    /// assert_eq!(b.specific_arch(), Some(Arch::SM_90A));
    /// ```
    pub fn specific(mut self, arch: Arch) -> Self {
        self.specific = Some(arch);
        self
    }

    /// The architecture-specific target [`Builder::specific`] set, if any.
    ///
    /// ```
    /// assert_eq!(sluice_builder::Builder::new("kernels").specific_arch(), None);
    /// ```
    pub fn specific_arch(&self) -> Option<Arch> {
        self.specific
    }

    /// Release (default) or debug.
    ///
    /// ```
    /// let b = sluice_builder::Builder::new("k").profile(sluice_builder::Profile::Debug);
    /// # let _ = b;
    /// ```
    pub fn profile(mut self, profile: Profile) -> Self {
        self.profile = profile;
        self
    }

    /// The nested build's target folder. Default: `sluice-kernels/<crate>-<hash>/<arch>`
    /// (one folder per kernel crate, so that two crates of the same name never read
    /// each other's PTX, and per architecture, so that switching one never rebuilds
    /// `core`) under the calling build's target folder inside a build script, else under
    /// `CARGO_TARGET_DIR` or the `target/` of the workspace holding the kernel crate. Never
    /// the outer build's own target folder: cargo locks it for the whole outer build.
    ///
    /// ```
    /// let b = sluice_builder::Builder::new("k").target_dir("/tmp/kernel-build");
    /// assert_eq!(b.nested_target_dir(), std::path::Path::new("/tmp/kernel-build"));
    /// ```
    pub fn target_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.target_dir = Some(dir.into());
        self
    }

    /// The tools folder where setup installed ptxas and libdevice (default:
    /// [`toolchain::default_tools_dir`], the same for every project).
    ///
    /// ```
    /// let b = sluice_builder::Builder::new("k").tools_dir("/opt/sluice-tools");
    /// assert_eq!(b.locations().tools_dir, std::path::Path::new("/opt/sluice-tools"));
    /// ```
    pub fn tools_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.tools_dir = Some(dir.into());
        self
    }

    /// Also copy the PTX to this path (written only when its content changed,
    /// so that downstream builds stay incremental).
    ///
    /// ```no_run
    /// let out = sluice_builder::Builder::new("k").copy_to("target/ptx/k.ptx").build()?;
    /// assert!(out.ptx.ends_with("target/ptx/k.ptx"));
    /// # Ok::<(), sluice_builder::BuildError>(())
    /// ```
    pub fn copy_to(mut self, path: impl Into<PathBuf>) -> Self {
        self.copy_to = Some(path.into());
        self
    }

    /// Show the nested cargo's progress on stderr (default: captured, shown
    /// only on failure).
    ///
    /// ```
    /// let b = sluice_builder::Builder::new("k").verbose(true);
    /// # let _ = b;
    /// ```
    pub fn verbose(mut self, verbose: bool) -> Self {
        self.quiet = !verbose;
        self
    }

    /// Panic messages on the device (default: off, or `SLUICE_PANIC_MESSAGES=1`).
    ///
    /// Off, every crate of the kernel build (`core` included) is compiled with
    /// `-Cpanic=immediate-abort`: a failed bounds check or `unwrap` is a compare and a
    /// `trap` (the launch fails, `CUDA_ERROR_LAUNCH_FAILED`), no `core::fmt` code
    /// reaches the PTX, and the kernel keeps the registers of the same code without the
    /// check. On, panics go through the panic handler (`sluice-device` prints the
    /// location and message with `vprintf`, then traps) and the build passes
    /// `--cfg sluice_panic_messages`: a debug mode, which costs registers, stack and
    /// often spills in `core::fmt`.
    ///
    /// ```
    /// let b = sluice_builder::Builder::new("k").panic_messages(true);
    /// // Its own nested folder: switching does not rebuild `core` each time.
    /// assert!(b.nested_target_dir().ends_with("sm_90-panic-messages"));
    /// ```
    pub fn panic_messages(mut self, on: bool) -> Self {
        self.panic_messages = on;
        self
    }

    /// Whether the builder gives the kernel crate `#![no_std]` and the features of
    /// [`KERNEL_FEATURES`] from the command line (default: on). `no_std` is not added
    /// when the crate's `lib.rs` declares it itself.
    ///
    /// ```
    /// let b = sluice_builder::Builder::new("k").crate_attrs(false); // the crate declares its own
    /// # let _ = b;
    /// ```
    pub fn crate_attrs(mut self, on: bool) -> Self {
        self.crate_attrs = on;
        self
    }

    /// Dependencies of the kernel crate that get `#![no_std]` from the command line in the
    /// device build: crates that use only `core` but do not declare `no_std` themselves.
    /// The kernel crate's `Cargo.toml` can list them too, and [`embed`](fn@crate::embed) reads them there:
    ///
    /// ```toml
    /// [package.metadata.sluice]
    /// no-std-dependencies = ["tiny-math"]
    /// ```
    ///
    /// (A crate that uses `std` fails either way; one with a `std` feature needs
    /// `default-features = false` instead.)
    ///
    /// ```no_run
    /// let out = sluice_builder::Builder::new("kernels").no_std_dependencies(["tiny-math"]).build()?;
    /// # Ok::<(), sluice_builder::BuildError>(())
    /// ```
    pub fn no_std_dependencies<S: Into<String>>(mut self, names: impl IntoIterator<Item = S>) -> Self {
        self.no_std_deps.extend(names.into_iter().map(Into::into));
        self
    }

    /// The local tools folder this builder uses: the builder's `tools_dir`, else
    /// [`toolchain::default_tools_dir`] (`SLUICE_TOOLS_DIR`, else the per-user cache
    /// folder). Deliberately not under any target folder: tools such as trybuild run
    /// cargo with their own, and setup installs ptxas and libdevice once per user.
    ///
    /// ```
    /// let loc = sluice_builder::Builder::new("k").locations();
    /// assert_eq!(loc.tools_dir, sluice_builder::toolchain::default_tools_dir());
    /// ```
    pub fn locations(&self) -> Locations {
        match &self.tools_dir {
            Some(dir) => Locations { tools_dir: dir.clone() },
            None => Locations::default(),
        }
    }

    /// The folder holding every nested kernel build (`…/sluice-kernels`).
    fn nested_root(&self) -> PathBuf {
        if let Some(out_dir) = build_script_out_dir() {
            // A build script: the calling build's target folder, found from OUT_DIR
            // (`<target>/[<triple>/]<profile>/build/<pkg>-<hash>/out`). Never the kernel
            // crate's own workspace: it may be a dependency's source, read-only or shared.
            return target_root_of(&out_dir).join("sluice-kernels");
        }
        let target = match std::env::var_os("CARGO_TARGET_DIR").filter(|v| !v.is_empty()) {
            // The user moved the workspace's target folder: follow them.
            Some(dir) => PathBuf::from(dir),
            None => workspace_root(&self.crate_dir).join("target"),
        };
        target.join("sluice-kernels")
    }

    /// The nested target folder: see [`Builder::target_dir`].
    ///
    /// ```
    /// let dir = sluice_builder::Builder::new("/work/app/kernels").nested_target_dir();
    /// // …/sluice-kernels/kernels-<hash>/sm_90
    /// assert!(dir.parent().unwrap().file_name().unwrap().to_str().unwrap().starts_with("kernels-"));
    /// ```
    pub fn nested_target_dir(&self) -> PathBuf {
        if let Some(dir) = &self.target_dir {
            return dir.clone();
        }
        let mode = if self.panic_messages { "-panic-messages" } else { "" };
        self.nested_root().join(crate_key(&self.crate_dir)).join(format!("{}{mode}", self.arch))
    }

    /// Finds the toolchain, builds the kernel crate and returns the PTX.
    ///
    /// ```no_run
    /// let out = sluice_builder::Builder::new("kernels").build()?;
    /// # Ok::<(), sluice_builder::BuildError>(())
    /// ```
    ///
    /// # Errors
    /// A missing or unusable tool ([`BuildError::ToolMissing`], [`BuildError::ToolUnusable`],
    /// naming the command that installs it), the kernel crate's own compile errors
    /// ([`BuildError::KernelCompile`], the whole log), [`BuildError::LibdeviceMissing`],
    /// [`BuildError::PtxArtifact`], [`BuildError::Io`].
    pub fn build(&self) -> Result<PtxOutput, BuildError> {
        let toolchain = Toolchain::discover(&self.locations())?;
        self.build_with(&toolchain)
    }

    /// As [`Builder::build`], with an already discovered toolchain.
    /// Discover once, build many:
    ///
    /// ```no_run
    /// use sluice_builder::{toolchain::{Locations, Toolchain}, Arch, Builder};
    /// let tc = Toolchain::discover(&Locations::default())?;
    /// for arch in [Arch::SM_80, Arch::SM_90] {
    ///     Builder::new("kernels").arch(arch).build_with(&tc)?;
    /// }
    /// # Ok::<(), sluice_builder::BuildError>(())
    /// ```
    ///
    /// # Errors
    /// As [`Builder::build`], less the discovery errors.
    pub fn build_with(&self, tc: &Toolchain) -> Result<PtxOutput, BuildError> {
        let target_dir = self.nested_target_dir();
        std::fs::create_dir_all(&target_dir).map_err(error::io(format!("creating {}", target_dir.display())))?;
        // One linker for every nested build under the same root (it does not depend on
        // the kernel crate or the architecture).
        let linker_dir = if self.target_dir.is_some() { target_dir.clone() } else { self.nested_root() };
        let linker = install_linker(tc, &linker_dir)?;
        let manifest = self.crate_dir.join("Cargo.toml");
        if !manifest.is_file() {
            return Err(BuildError::Io {
                what: format!("reading the kernel crate's manifest {}", manifest.display()),
                source: std::io::Error::new(std::io::ErrorKind::NotFound, "no Cargo.toml there"),
            });
        }

        let mut flags = vec![
            format!("-Ctarget-cpu={}", self.arch),
            format!("-Clinker={}", linker.display()),
            // rustc's own optimiser unrolls too, before the bitcode linker's: the same cap
            // as there (`sluice-llbc`, `--unroll-max-count`).
            "-Cllvm-args=-unroll-max-count=4".to_string(),
        ];
        // The range-check pass, built once beside the linker (`range_checks`). Without it the
        // kernels mean the same and run slower in loops that index a slice by a stride; the
        // build says so. On the command line, so that cargo relinks when it comes or goes.
        let mut notes = Vec::new();
        let mut watch = Vec::new();
        let plugin = range_checks::install(tc, &linker_dir.join("sluice-llbc"));
        let range_checks = plugin.is_ok();
        match plugin {
            Ok(plugin) => flags.push(format!("-Clink-arg=--pass-plugin={}", plugin.display())),
            Err(why) => {
                notes.push(why.to_string());
                // A build script runs again once the pass can be had (`sources`).
                watch = range_checks::watch_when_unavailable(tc, &linker_dir.join("sluice-llbc"));
            }
        }
        if (80..89).contains(&self.arch.capability_value()) {
            // PTX ISA 7.5 (LLVM picks 7.0 for sm_80, 7.1 for sm_86, 7.4 for sm_87): the device
            // std's `cp.async` with an `ignore-src` predicate needs it; drivers since CUDA 11.5
            // read it. From sm_89 on LLVM's own choice is 7.8 or newer; a `ptxNN` feature sets
            // the version exactly, so it is only added where it raises it.
            flags.push("-Ctarget-feature=+ptx75".to_string());
        }
        if let Some(libdevice) = &tc.libdevice {
            flags.push(format!("-Clink-arg={}", libdevice.display()));
        }
        if self.panic_messages {
            flags.extend(["--cfg".to_string(), "sluice_panic_messages".to_string()]);
        } else {
            // Every crate, `core` included: its panic entry points then abort in place.
            flags.extend(["-Zunstable-options".to_string(), "-Cpanic=immediate-abort".to_string()]);
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
        let mut no_std_deps = self.no_std_deps.clone();
        no_std_deps.extend(metadata_no_std_dependencies(&manifest));
        if !no_std_deps.is_empty() {
            // Per package by name: `package."*"` would reach build scripts and `core`'s own.
            let profile = if self.profile == Profile::Release { "release" } else { "dev" };
            cmd.arg("-Zprofile-rustflags");
            for dep in &no_std_deps {
                cmd.arg("--config")
                    .arg(format!("profile.{profile}.package.{dep:?}.rustflags=[\"-Zcrate-attr=no_std\"]"));
            }
        }
        // After `--`: for the kernel crate alone (RUSTFLAGS would reach `core` too).
        cmd.arg("--");
        // `#[no_mangle]`, `#[export_name]` and `#[link_section]` need `unsafe(..)` in every
        // edition, as in 2024: a hand-written `extern "ptx-kernel"` entry (or a forged
        // parameter record) must say `unsafe`, since the host launches entries safely under
        // their `#[kernel]` declarations (`#[kernel]` itself writes `#[unsafe(no_mangle)]`).
        cmd.arg("-Dunsafe_attr_outside_unsafe");
        // Rust-CUDA's `cfg(target_feature = "compute_XX")`, true as its compiler makes them
        // (rustc's NVPTX features are named `sm_XX`: without these the cfgs would be false).
        cmd.arg("-Aexplicit_builtin_cfgs_in_flags");
        for feature in self.arch.cuda_compute_features() {
            cmd.arg("--cfg").arg(format!("target_feature=\"{feature}\""));
        }
        let known: Vec<String> = Arch::all_cuda_compute_features().iter().map(|f| format!("{f:?}")).collect();
        cmd.arg("--check-cfg").arg(format!("cfg(target_feature, values({}))", known.join(", ")));
        if self.crate_attrs {
            if !declares_no_std(&self.crate_dir) {
                cmd.arg("-Zcrate-attr=no_std");
            }
            cmd.arg(format!("-Zcrate-attr=feature({})", KERNEL_FEATURES.join(", ")));
            // A crate that declares some of them itself, or uses none: both are fine.
            cmd.args(["-Aduplicate-features", "-Aunused-features"]);
        }
        let out = cmd.output().map_err(|e| {
            if e.kind() == std::io::ErrorKind::NotFound {
                BuildError::ToolMissing {
                    tool: Tool::Cargo,
                    looked: vec![tc.cargo.clone()],
                    fix: "install Rust with cargo (rustup.rs or `apt-get install cargo`)".into(),
                }
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
            let log_path = target_dir.join("sluice-build.log");
            let log_file = std::fs::write(&log_path, stderr.as_bytes()).ok().map(|()| log_path);
            let hint = compile_hint(&stderr);
            return Err(BuildError::KernelCompile { manifest, log: stderr.trim_end().to_string(), log_file, hint });
        }
        let artifacts: Vec<&str> = stdout
            .lines()
            .filter(|l| l.contains("\"reason\":\"compiler-artifact\""))
            .filter(|l| ptx::json_strings_in_filenames(l).iter().any(|f| f.ends_with(".ptx")))
            .collect();
        let ptx_files: Vec<PathBuf> = artifacts
            .iter()
            .flat_map(|l| ptx::json_strings_in_filenames(l))
            .filter(|f| f.ends_with(".ptx"))
            .map(PathBuf::from)
            .collect();
        let ([ptx_path], [artifact]) = (ptx_files.as_slice(), artifacts.as_slice()) else {
            return Err(BuildError::PtxArtifact { found: ptx_files });
        };
        let lib_name = ptx::json_string_field(artifact, "\"target\":{", "name")
            .unwrap_or_else(|| ptx_path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default());
        let package = ptx::json_string_field(artifact, "", "package_id")
            .and_then(|id| package_name(&id))
            .unwrap_or_else(|| lib_name.clone());
        let text = std::fs::read_to_string(ptx_path).map_err(error::io(format!("reading {}", ptx_path.display())))?;
        let unresolved = ptx::unresolved_libdevice_calls(&text);
        if !unresolved.is_empty() {
            return Err(BuildError::LibdeviceMissing { functions: unresolved, fix: toolchain::ptxas_fix() });
        }
        let kernels = ptx::entries(&text);
        let mut sources = ptx::dep_info_sources(&ptx_path.with_extension("d"));
        sources.extend(watch);
        let warnings = warning_lines(&stderr);
        let final_path = match &self.copy_to {
            Some(dest) => {
                write_if_changed(dest, &text)?;
                dest.clone()
            }
            None => ptx_path.clone(),
        };
        Ok(PtxOutput {
            ptx: final_path,
            kernels,
            sources,
            arch: self.arch,
            libdevice: tc.libdevice.clone(),
            package,
            lib_name,
            warnings,
            notes,
            range_checks,
        })
    }
}

/// `OUT_DIR` when running as a build script (cargo sets both variables only there).
fn build_script_out_dir() -> Option<PathBuf> {
    let out = std::env::var_os("OUT_DIR").filter(|v| !v.is_empty())?;
    std::env::var_os("CARGO_MANIFEST_DIR")?;
    Some(PathBuf::from(out))
}

/// The target folder of the build whose `OUT_DIR` is `out_dir`: its outermost ancestor
/// marked by cargo's `CACHEDIR.TAG` (so that tools building in a sub-folder of the
/// target folder, such as trybuild in `target/tests/trybuild`, share the kernel builds),
/// else the folder four levels up (`<target>/<profile>/build/<pkg>-<hash>/out`).
///
/// ```
/// # use std::path::Path;
/// let out = Path::new("/nowhere/target/debug/build/app-0123/out");
/// assert_eq!(sluice_builder::target_root_of(out), Path::new("/nowhere/target"));
/// ```
pub fn target_root_of(out_dir: &Path) -> PathBuf {
    if let Some(tagged) = out_dir.ancestors().filter(|d| d.join("CACHEDIR.TAG").is_file()).last() {
        return tagged.to_path_buf();
    }
    out_dir.ancestors().nth(4).unwrap_or(out_dir).to_path_buf()
}

/// `<folder name>-<hash of its canonical path>`: one nested target folder per kernel
/// crate, also for two crates of the same name in different places.
fn crate_key(crate_dir: &Path) -> String {
    let canonical = crate_dir.canonicalize().unwrap_or_else(|_| crate_dir.to_path_buf());
    let name = canonical.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "kernels".into());
    format!("{name}-{:08x}", toolchain::fnv1a(canonical.to_string_lossy().as_bytes()) as u32)
}

/// Whether the crate's `lib.rs` declares `#![no_std]` itself (plainly or in a
/// `cfg_attr`): then the builder does not add it again.
fn declares_no_std(crate_dir: &Path) -> bool {
    let lib = crate_dir.join("src").join("lib.rs");
    std::fs::read_to_string(lib)
        .map(|text| text.lines().any(|l| l.trim_start().starts_with("#![") && l.contains("no_std")))
        .unwrap_or(false)
}

/// `[package.metadata.sluice] no-std-dependencies = ["a", "b"]` of a kernel crate's
/// manifest (one line; the builder has no TOML parser).
fn metadata_no_std_dependencies(manifest: &Path) -> Vec<String> {
    let Ok(text) = std::fs::read_to_string(manifest) else { return Vec::new() };
    let mut in_table = false;
    for line in text.lines().map(str::trim) {
        if line.starts_with('[') {
            in_table = line == "[package.metadata.sluice]";
        } else if let Some(list) = in_table.then(|| line.strip_prefix("no-std-dependencies")).flatten() {
            let list = list.trim_start().trim_start_matches('=').trim();
            let inner = list.trim_start_matches('[').split(']').next().unwrap_or("");
            return inner
                .split(',')
                .map(|s| s.trim().trim_matches('"').to_string())
                .filter(|s| !s.is_empty())
                .collect();
        }
    }
    Vec::new()
}

/// The package name in a cargo package id: `path+file:///p/k#my-k@0.1.0` → `my-k`;
/// `path+file:///p/my-k#0.1.0` (name = folder) → `my-k`.
fn package_name(id: &str) -> Option<String> {
    let (url, frag) = id.rsplit_once('#')?;
    match frag.split_once('@') {
        Some((name, _)) => Some(name.to_string()),
        None => url.rsplit('/').next().map(str::to_string),
    }
}

/// One line per rendered warning in a cargo log: its message and where it points
/// (cargo's own "generated N warnings" summaries left out).
fn warning_lines(log: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut lines = log.lines().peekable();
    while let Some(line) = lines.next() {
        let Some(message) = line.strip_prefix("warning: ") else { continue };
        if message.contains(" generated ") && message.contains("warning") {
            continue;
        }
        let at = lines.peek().and_then(|l| l.trim_start().strip_prefix("--> ")).map(str::trim);
        out.push(match at {
            Some(at) => format!("{message} ({at})"),
            None => message.to_string(),
        });
    }
    out
}

/// A hint for the compile errors a kernel crate most often meets.
fn compile_hint(log: &str) -> Option<String> {
    if log.contains("can't find crate for `std`") {
        return Some(
            "a dependency of the kernel crate needs `std`, which does not exist on the GPU: depend on it with \
             `default-features = false` (and its `libm` feature for float math, e.g. glam or num-traits), \
             move it to `[target.'cfg(not(target_arch = \"nvptx64\"))'.dependencies]`, or, if it uses only \
             `core` without declaring `no_std`, list it in the kernel crate's Cargo.toml: \
             `[package.metadata.sluice] no-std-dependencies = [\"name\"]`"
                .into(),
        );
    }
    const STD_ONLY: &[&str] = &[
        "`std`",
        "cannot find macro `println`",
        "cannot find macro `print`",
        "cannot find macro `eprintln`",
        "cannot find macro `vec`",
        "cannot find macro `format`",
        "cannot find type `Vec`",
        "cannot find type `String`",
        "cannot find type `Box`",
        "use of undeclared type `Vec`",
        "use of undeclared type `String`",
        "use of undeclared type `Box`",
    ];
    if log.contains("error") && STD_ONLY.iter().any(|s| log.contains(s)) {
        return Some(
            "kernel crates are `no_std` on the GPU (the builder adds `#![no_std]` for the device build): \
             use `core::` instead of `std::`, no `Vec`/`String`/`println!`/`format!` in device code, and put \
             host-only code under `#[cfg(not(target_arch = \"nvptx64\"))]`"
                .into(),
        );
    }
    if log.contains("#[panic_handler]") {
        return Some(
            "a kernel crate gets its panic handler from `sluice-device`: depend on it and write kernels with \
             `#[kernel]` (which links it), or define a `#[panic_handler]` yourself"
                .into(),
        );
    }
    None
}

/// The folder of the nearest `Cargo.lock` above `crate_dir` (the workspace
/// root), or `crate_dir` itself.
///
/// ```
/// let here = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
/// assert!(sluice_builder::workspace_root(here).join("Cargo.lock").is_file());
/// ```
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
///
/// ```
/// let p = std::env::temp_dir().join(format!("sluice-doc-{}.txt", std::process::id()));
/// assert!(sluice_builder::write_if_changed(&p, "a")?);
/// assert!(!sluice_builder::write_if_changed(&p, "a")?); // unchanged: not rewritten
/// # std::fs::remove_file(&p).unwrap();
/// # Ok::<(), sluice_builder::BuildError>(())
/// ```
///
/// # Errors
/// [`BuildError::Io`] when the folder or the file cannot be written.
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
///
/// ```no_run
/// use sluice_builder::toolchain::{Locations, Toolchain};
/// let tc = Toolchain::discover(&Locations::default())?;
/// let linker = sluice_builder::install_linker(&tc, "target/sluice-kernels".as_ref())?;
/// assert!(linker.is_file());
/// # Ok::<(), sluice_builder::BuildError>(())
/// ```
///
/// # Errors
/// [`BuildError::ToolUnusable`] when the host rustc cannot compile it (no C linker, most
/// often: the message says so), [`BuildError::Io`].
pub fn install_linker(tc: &Toolchain, target_dir: &Path) -> Result<PathBuf, BuildError> {
    let hash = toolchain::fnv1a(LLBC_SOURCE.as_bytes());
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
            format!(
                "install a C linker for host programs (`apt-get install gcc libc6-dev`, or `{}`), then try again",
                toolchain::Frontend::detect().command("setup")
            )
        } else {
            toolchain::setup_fix()
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_one_line_per_warning() {
        let log = "   Compiling k v0.1.0 (/p/k)\nwarning: unused variable: `x`\n  --> src/lib.rs:3:9\n   |\n\
                   3 |     let x = 1;\n   |         ^\nwarning: `k` (lib) generated 1 warning\n    Finished\n";
        assert_eq!(warning_lines(log), ["unused variable: `x` (src/lib.rs:3:9)"]);
    }

    #[test]
    fn hints_at_no_std_for_std_only_names() {
        let log = "error[E0425]: cannot find type `Vec` in this scope\n";
        assert!(compile_hint(log).is_some_and(|h| h.contains("no_std")));
        assert!(compile_hint("error: can't find crate for `std`").is_some_and(|h| h.contains("default-features")));
        assert_eq!(compile_hint("error[E0308]: mismatched types"), None);
    }

    #[test]
    fn reads_no_std_dependencies_from_the_manifest() {
        let dir = std::env::temp_dir().join(format!("sluice-meta-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let m = dir.join("Cargo.toml");
        std::fs::write(
            &m,
            "[package]\nname = \"k\"\n\n[package.metadata.sluice]\nno-std-dependencies = [\"a\", \"b-c\"]\n",
        )
        .unwrap();
        assert_eq!(metadata_no_std_dependencies(&m), ["a", "b-c"]);
        std::fs::write(&m, "[package]\nname = \"k\"\nno-std-dependencies = [\"a\"]\n").unwrap();
        assert!(metadata_no_std_dependencies(&m).is_empty());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn reads_package_names_from_ids() {
        assert_eq!(package_name("path+file:///p/k#my-k@0.1.0").as_deref(), Some("my-k"));
        assert_eq!(package_name("path+file:///p/my-k#0.1.0").as_deref(), Some("my-k"));
    }
}
