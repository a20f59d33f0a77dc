//! Finding the kernel toolchain: rustc + rust-src, LLVM tools, ptxas, libdevice.
//!
//! Two routes are supported, tried in this order:
//!
//! * **Debian**: `rustc-web` (a stable rustc used with `RUSTC_BOOTSTRAP=1`),
//!   `rust-web-src` (its library source) and `llvm-N` (`llvm-link`, `opt`,
//!   `llc`, the same major version as rustc's LLVM);
//! * **rustup**: `rustup toolchain install 1.96.0 --component rust-src llvm-tools`
//!   (the same release as Debian's, used with `RUSTC_BOOTSTRAP=1` as well; a `nightly`
//!   toolchain is also accepted).
//!
//! The versions setup installs are pinned in [`pins`]; the version probes
//! ([`ptxas_version`], [`nvcc_wheel_version`], [`debian_version`], and
//! [`KernelRustc::is_pinned`]) say what was found.
//!
//! `ptxas` and libdevice come from an installed CUDA toolkit (`CUDA_HOME`,
//! `CUDA_PATH`, `/usr/local/cuda`) or from PyPI's `nvidia-cuda-nvcc`, which
//! setup installs into one **per-user tools folder** ([`default_tools_dir`]:
//! `$SLUICE_TOOLS_DIR`, else `$XDG_CACHE_HOME/sluice`, else `~/.cache/sluice`),
//! shared by every project and found without any variable.
//!
//! Every piece can be pointed at explicitly with an environment variable
//! (`SLUICE_KERNEL_RUSTC`, `SLUICE_LLVM_BIN`, `SLUICE_PTXAS`,
//! `SLUICE_LIBDEVICE`); a piece that is missing is reported with the command
//! that installs it: `cargo xtask setup` inside the sluice repository,
//! `cargo sluice setup` everywhere else ([`Frontend`]).

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::arch::TARGET;
use crate::error::{BuildError, Tool};
use crate::pins;

/// Which command line a person runs the fix from: `cargo xtask` inside sluice's own
/// workspace, `cargo sluice` (crate `cargo-sluice`) in their own projects. Every builder
/// error that a setup fixes names the command of the right one.
///
/// ```
/// use sluice_builder::toolchain::Frontend;
/// assert_eq!(Frontend::CargoSluice.command("setup"), "cargo sluice setup");
/// assert_eq!(Frontend::Xtask.command("setup"), "cargo xtask setup");
/// // A folder outside any sluice checkout is a user's project:
/// assert_eq!(Frontend::for_dir(&std::env::temp_dir()), Frontend::CargoSluice);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Frontend {
    /// sluice's own workspace: `cargo xtask <command>`.
    Xtask,
    /// Anywhere else: `cargo sluice <command>` (`cargo install cargo-sluice` provides it).
    CargoSluice,
}

impl Frontend {
    /// The frontend for the package being built: `CARGO_MANIFEST_DIR` (set for build
    /// scripts and programs cargo runs), else the current folder.
    ///
    /// ```
    /// // Doctests run with CARGO_MANIFEST_DIR inside sluice's workspace.
    /// assert_eq!(sluice_builder::toolchain::Frontend::detect(), sluice_builder::toolchain::Frontend::Xtask);
    /// ```
    pub fn detect() -> Frontend {
        match env_path("CARGO_MANIFEST_DIR").or_else(|| std::env::current_dir().ok()) {
            Some(dir) => Frontend::for_dir(&dir),
            None => Frontend::CargoSluice,
        }
    }

    /// `Xtask` when `dir` is inside a sluice checkout that is being developed (one with
    /// `xtask/` and `gpu-kernels/builder/`, not a copy cargo fetched into `CARGO_HOME`),
    /// `CargoSluice` otherwise.
    ///
    /// ```
    /// use sluice_builder::toolchain::Frontend;
    /// assert_eq!(Frontend::for_dir(env!("CARGO_MANIFEST_DIR").as_ref()), Frontend::Xtask);
    /// ```
    pub fn for_dir(dir: &Path) -> Frontend {
        if sluice_workspace_root(dir).is_some() {
            Frontend::Xtask
        } else {
            Frontend::CargoSluice
        }
    }

    /// The full command for `sub`, e.g. `cargo sluice setup`.
    ///
    /// ```
    /// use sluice_builder::toolchain::Frontend;
    /// assert_eq!(Frontend::CargoSluice.command("doctor"), "cargo sluice doctor");
    /// ```
    pub fn command(self, sub: &str) -> String {
        match self {
            Frontend::Xtask => format!("cargo xtask {sub}"),
            Frontend::CargoSluice => format!("cargo sluice {sub}"),
        }
    }
}

/// The root of the sluice checkout holding `dir`, if `dir` is inside one that is being
/// developed (not a git or registry copy under `CARGO_HOME`).
///
/// ```
/// let here = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
/// let root = sluice_builder::toolchain::sluice_workspace_root(here).unwrap();
/// assert!(root.join("xtask").is_dir());
/// ```
pub fn sluice_workspace_root(dir: &Path) -> Option<PathBuf> {
    let dir = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
    let root = dir.ancestors().find(|d| {
        d.join("Cargo.toml").is_file()
            && d.join("xtask/Cargo.toml").is_file()
            && d.join("gpu-kernels/builder/Cargo.toml").is_file()
    })?;
    let cargo_home = env_path("CARGO_HOME").or_else(|| home_dir().map(|h| h.join(".cargo")));
    let cargo_home = cargo_home.map(|h| h.canonicalize().unwrap_or(h));
    match cargo_home {
        Some(h) if root.starts_with(&h) => None,
        _ => Some(root.to_path_buf()),
    }
}

fn home_dir() -> Option<PathBuf> {
    env_path("HOME").filter(|h| h.is_absolute())
}

/// The per-user folder where setup installs ptxas and libdevice (PyPI's
/// `nvidia-cuda-nvcc` in a Python venv, `<dir>/venv`), shared by every project:
/// `$SLUICE_TOOLS_DIR` if set, else `$XDG_CACHE_HOME/sluice`, else
/// `$HOME/.cache/sluice` (else `sluice-tools` in the system's temporary folder, where no
/// home is known).
///
/// ```
/// let dir = sluice_builder::toolchain::default_tools_dir();
/// assert!(dir.is_absolute());
/// ```
pub fn default_tools_dir() -> PathBuf {
    if let Some(dir) = env_path("SLUICE_TOOLS_DIR") {
        return dir;
    }
    if let Some(cache) = env_path("XDG_CACHE_HOME").filter(|d| d.is_absolute()) {
        return cache.join("sluice");
    }
    match home_dir() {
        Some(home) => home.join(".cache").join("sluice"),
        None => std::env::temp_dir().join("sluice-tools"),
    }
}

/// The one-line fix for a missing kernel compiler or LLVM tools, naming the setup
/// command of the detected [`Frontend`].
///
/// ```
/// assert!(sluice_builder::toolchain::setup_fix().contains("apt-get install rustc-web"));
/// ```
pub fn setup_fix() -> String {
    format!(
        "run `{}`, or install the pinned toolchain yourself: \
         `apt-get install rustc-web={v} rust-web-src={v} llvm-{m}={l}` (Debian 12 security updates) or \
         `rustup toolchain install {r} --component rust-src llvm-tools`",
        Frontend::detect().command("setup"),
        v = pins::DEBIAN_RUSTC,
        m = pins::llvm_major(),
        l = pins::DEBIAN_LLVM,
        r = pins::KERNEL_RUSTC,
    )
}

/// The one-line fix for a missing ptxas or libdevice, naming the setup command of the
/// detected [`Frontend`].
///
/// ```
/// assert!(sluice_builder::toolchain::ptxas_fix().contains("nvidia-cuda-nvcc"));
/// ```
pub fn ptxas_fix() -> String {
    format!(
        "run `{}` (it installs PyPI's nvidia-cuda-nvcc into {}), install a CUDA toolkit \
         (CUDA_HOME), or set SLUICE_PTXAS and SLUICE_LIBDEVICE",
        Frontend::detect().command("setup"),
        default_tools_dir().display()
    )
}

/// A kernel compiler: a rustc that can build `core` for `nvptx64-nvidia-cuda`.
///
/// ```no_run
/// let rustc = sluice_builder::toolchain::find_kernel_rustc()?;
/// println!("{} {} (LLVM {})", rustc.rustc.display(), rustc.release, rustc.llvm_major);
/// # Ok::<(), sluice_builder::BuildError>(())
/// ```
#[derive(Debug, Clone)]
pub struct KernelRustc {
    /// The `rustc` binary.
    pub rustc: PathBuf,
    /// Its sysroot (`rustc --print sysroot`).
    pub sysroot: PathBuf,
    /// Its release, e.g. `1.96.0` or `1.97.0-nightly`.
    pub release: String,
    /// The major version of the LLVM it was built with.
    pub llvm_major: u32,
    /// The whole version of that LLVM, e.g. `22.1.8`.
    pub llvm_version: String,
}

impl KernelRustc {
    /// Probes `rustc` and checks that it can build for the NVPTX target with
    /// `-Zbuild-std=core` (its library source is installed).
    ///
    /// ```
    /// let err = sluice_builder::toolchain::KernelRustc::probe("/nonexistent/rustc".as_ref()).unwrap_err();
    /// assert!(err.to_string().contains("setup"));
    /// ```
    ///
    /// # Errors
    /// [`BuildError::ToolMissing`] (no such program, or no library source),
    /// [`BuildError::ToolUnusable`] (not a rustc, or one without the NVPTX target).
    pub fn probe(rustc: &Path) -> Result<KernelRustc, BuildError> {
        let unusable = |problem: String| BuildError::ToolUnusable {
            tool: Tool::KernelRustc,
            path: rustc.to_path_buf(),
            problem,
            fix: setup_fix(),
        };
        let vv = capture(Command::new(rustc).arg("-vV").env("RUSTC_BOOTSTRAP", "1")).map_err(|e| {
            if e.kind() == std::io::ErrorKind::NotFound {
                BuildError::ToolMissing { tool: Tool::KernelRustc, looked: vec![rustc.to_path_buf()], fix: setup_fix() }
            } else {
                unusable(format!("`rustc -vV` failed: {e}"))
            }
        })?;
        let field = |name: &str| vv.lines().find_map(|l| l.strip_prefix(name)).map(|v| v.trim().to_string());
        let release = field("release:").ok_or_else(|| unusable("`rustc -vV` printed no release".into()))?;
        let llvm = field("LLVM version:").ok_or_else(|| unusable("`rustc -vV` printed no LLVM version".into()))?;
        let llvm_major = llvm
            .split('.')
            .next()
            .and_then(|m| m.parse().ok())
            .ok_or_else(|| unusable(format!("unreadable LLVM version `{llvm}`")))?;
        let sysroot = capture(Command::new(rustc).args(["--print", "sysroot"]))
            .map_err(|e| unusable(format!("`rustc --print sysroot` failed: {e}")))?;
        let sysroot = PathBuf::from(sysroot.trim());
        let targets = capture(Command::new(rustc).args(["--print", "target-list"]))
            .map_err(|e| unusable(format!("`rustc --print target-list` failed: {e}")))?;
        if !targets.lines().any(|t| t.trim() == TARGET) {
            return Err(unusable(format!("it does not know the {} target", TARGET)));
        }
        let found = KernelRustc { rustc: rustc.to_path_buf(), sysroot, release, llvm_major, llvm_version: llvm };
        let src = found.rust_src();
        if !src.join("core").join("Cargo.toml").is_file() {
            return Err(BuildError::ToolMissing {
                tool: Tool::RustSrc,
                looked: vec![src],
                fix: format!(
                    "{} (for this rustc: {})",
                    setup_fix(),
                    if found.sysroot == Path::new("/usr") {
                        "`apt-get install rust-web-src`".to_string()
                    } else {
                        format!("`rustup component add rust-src --toolchain {}`", found.toolchain_name())
                    }
                ),
            });
        }
        Ok(found)
    }

    /// Where `-Zbuild-std` looks for the library source.
    ///
    /// ```no_run
    /// let rustc = sluice_builder::toolchain::find_kernel_rustc()?;
    /// assert!(rustc.rust_src().join("core").is_dir());
    /// # Ok::<(), sluice_builder::BuildError>(())
    /// ```
    pub fn rust_src(&self) -> PathBuf {
        self.sysroot.join("lib/rustlib/src/rust/library")
    }

    fn toolchain_name(&self) -> String {
        self.sysroot.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| pins::KERNEL_RUSTC.into())
    }

    /// Whether this is the pinned release with the pinned LLVM major ([`pins`]): the
    /// compiler CI builds with. Another one works, but its PTX may differ.
    ///
    /// ```no_run
    /// let rustc = sluice_builder::toolchain::find_kernel_rustc()?;
    /// if !rustc.is_pinned() {
    ///     eprintln!("rustc {} is not the pinned {}", rustc.release, sluice_builder::pins::KERNEL_RUSTC);
    /// }
    /// # Ok::<(), sluice_builder::BuildError>(())
    /// ```
    pub fn is_pinned(&self) -> bool {
        self.release == pins::KERNEL_RUSTC && self.llvm_major == pins::llvm_major()
    }
}

/// The kernel toolchain as a whole.
///
/// ```no_run
/// use sluice_builder::toolchain::{Locations, Toolchain};
/// let tc = Toolchain::discover(&Locations::default())?;
/// println!("LLVM tools in {}, libdevice {:?}", tc.llvm_bin.display(), tc.libdevice);
/// # Ok::<(), sluice_builder::BuildError>(())
/// ```
#[derive(Debug, Clone)]
pub struct Toolchain {
    /// The kernel compiler.
    pub rustc: KernelRustc,
    /// The folder holding `llvm-link`, `opt` and `llc`.
    pub llvm_bin: PathBuf,
    /// The `cargo` that drives the nested build.
    pub cargo: PathBuf,
    /// NVIDIA's libdevice bitcode, when found (needed only by kernels that use
    /// libdevice math).
    pub libdevice: Option<PathBuf>,
}

/// Where to look for the pieces that setup installs itself (ptxas, libdevice).
///
/// ```
/// use sluice_builder::toolchain::{default_tools_dir, Locations};
/// assert_eq!(Locations::default().tools_dir, default_tools_dir());
/// ```
#[derive(Debug, Clone)]
pub struct Locations {
    /// The tools folder: [`default_tools_dir`] unless a caller chose another.
    pub tools_dir: PathBuf,
}

impl Default for Locations {
    fn default() -> Self {
        Locations { tools_dir: default_tools_dir() }
    }
}

impl Toolchain {
    /// Finds every piece, or says which one is missing and how to install it.
    ///
    /// ```no_run
    /// use sluice_builder::toolchain::{Locations, Toolchain};
    /// let tc = Toolchain::discover(&Locations::default())?;
    /// # Ok::<(), sluice_builder::BuildError>(())
    /// ```
    ///
    /// # Errors
    /// The first missing or unusable piece (libdevice is optional: `None` when absent).
    pub fn discover(loc: &Locations) -> Result<Toolchain, BuildError> {
        let rustc = find_kernel_rustc()?;
        let llvm_bin = find_llvm_bin(&rustc)?;
        let cargo = std::env::var_os("CARGO").map(PathBuf::from).unwrap_or_else(|| PathBuf::from("cargo"));
        let libdevice = find_libdevice(loc).ok();
        Ok(Toolchain { rustc, llvm_bin, cargo, libdevice })
    }
}

fn capture(cmd: &mut Command) -> std::io::Result<String> {
    let out = cmd.output()?;
    if !out.status.success() {
        return Err(std::io::Error::other(String::from_utf8_lossy(&out.stderr).trim().to_string()));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

fn env_path(name: &str) -> Option<PathBuf> {
    std::env::var_os(name).filter(|v| !v.is_empty()).map(PathBuf::from)
}

/// The kernel compiler: `SLUICE_KERNEL_RUSTC`, else Debian's `/usr/bin/rustc`,
/// else rustup's toolchain of the pinned release ([`pins::KERNEL_RUSTC`]), else rustup's
/// `nightly`.
///
/// ```no_run
/// let rustc = sluice_builder::toolchain::find_kernel_rustc()?;
/// # Ok::<(), sluice_builder::BuildError>(())
/// ```
///
/// # Errors
/// As [`KernelRustc::probe`], for the first candidate.
pub fn find_kernel_rustc() -> Result<KernelRustc, BuildError> {
    if let Some(explicit) = env_path("SLUICE_KERNEL_RUSTC") {
        return KernelRustc::probe(&explicit);
    }
    let debian = PathBuf::from("/usr/bin/rustc");
    let mut looked = vec![debian.clone()];
    let mut usable = None; // a rustc that probes OK but lacks its LLVM tools
    let mut first_err = None;
    let mut consider = |path: &Path| -> Option<KernelRustc> {
        match KernelRustc::probe(path) {
            Ok(found) if find_llvm_bin(&found).is_ok() => Some(found),
            Ok(found) => {
                usable.get_or_insert(found);
                None
            }
            Err(e) => {
                first_err.get_or_insert(e);
                None
            }
        }
    };
    if debian.is_file() {
        if let Some(found) = consider(&debian) {
            return Ok(found);
        }
    }
    // Only now ask rustup, and never let it install anything: with rustup's default
    // `auto-install`, `rustup which --toolchain X` downloads a whole toolchain.
    for toolchain in [pins::KERNEL_RUSTC, "nightly"] {
        let rustup = capture(
            Command::new("rustup").args(["which", "rustc", "--toolchain", toolchain]).env("RUSTUP_AUTO_INSTALL", "0"),
        );
        if let Ok(out) = rustup {
            let rustc = PathBuf::from(out.trim());
            looked.push(rustc.clone());
            if rustc.is_file() {
                if let Some(found) = consider(&rustc) {
                    return Ok(found);
                }
            }
        }
    }
    if let Some(found) = usable {
        return Ok(found); // find_llvm_bin then names the missing LLVM tools
    }
    Err(first_err.unwrap_or(BuildError::ToolMissing { tool: Tool::KernelRustc, looked, fix: setup_fix() }))
}

/// `llvm-link`, `opt` and `llc` matching the compiler's LLVM.
///
/// ```no_run
/// use sluice_builder::toolchain::{find_kernel_rustc, find_llvm_bin};
/// let bin = find_llvm_bin(&find_kernel_rustc()?)?;
/// assert!(bin.join("llc").is_file());
/// # Ok::<(), sluice_builder::BuildError>(())
/// ```
///
/// # Errors
/// [`BuildError::ToolMissing`] naming the `llvm-N` package (or rustup component).
pub fn find_llvm_bin(rustc: &KernelRustc) -> Result<PathBuf, BuildError> {
    let has_all = |dir: &Path| ["llvm-link", "opt", "llc"].iter().all(|t| dir.join(t).is_file());
    if let Some(explicit) = env_path("SLUICE_LLVM_BIN") {
        return if has_all(&explicit) {
            Ok(explicit)
        } else {
            Err(BuildError::ToolMissing {
                tool: Tool::LlvmTools,
                looked: vec![explicit],
                fix: "SLUICE_LLVM_BIN must name a folder holding llvm-link, opt and llc".into(),
            })
        };
    }
    let host = host_triple(&rustc.rustc).unwrap_or_else(|| "x86_64-unknown-linux-gnu".into());
    let candidates = [
        PathBuf::from(format!("/usr/lib/llvm-{}/bin", rustc.llvm_major)),
        rustc.sysroot.join("lib/rustlib").join(host).join("bin"),
    ];
    candidates.iter().find(|d| has_all(d)).cloned().ok_or_else(|| BuildError::ToolMissing {
        tool: Tool::LlvmTools,
        looked: candidates.to_vec(),
        fix: format!(
            "run `{setup}`, or install LLVM {m}: `apt-get install llvm-{m}` or \
             `rustup component add llvm-tools --toolchain {t}`",
            setup = Frontend::detect().command("setup"),
            m = rustc.llvm_major,
            t = rustc.toolchain_name(),
        ),
    })
}

fn host_triple(rustc: &Path) -> Option<String> {
    let vv = capture(Command::new(rustc).arg("-vV")).ok()?;
    vv.lines().find_map(|l| l.strip_prefix("host:")).map(|h| h.trim().to_string())
}

/// ptxas's own version (`ptxas --version`: `Cuda compilation tools, release 13.5, V13.5.37`
/// → `13.5.37`), `None` when it does not run or says something else.
///
/// ```no_run
/// use sluice_builder::toolchain::{find_ptxas, ptxas_version, Locations};
/// let v = ptxas_version(&find_ptxas(&Locations::default())?);
/// assert_eq!(v.as_deref(), Some(sluice_builder::pins::nvcc_version()));
/// # Ok::<(), sluice_builder::BuildError>(())
/// ```
pub fn ptxas_version(ptxas: &Path) -> Option<String> {
    let out = capture(Command::new(ptxas).arg("--version")).ok()?;
    parse_ptxas_version(&out)
}

fn parse_ptxas_version(text: &str) -> Option<String> {
    let line = text.lines().find(|l| l.contains("release"))?;
    let v = line.rsplit(", V").next().filter(|v| v.len() < line.len())?;
    Some(v.trim().to_string())
}

/// The `nvidia-cuda-nvcc` wheel installed in the tools folder's venv (from its
/// `.dist-info` folder), `None` when there is none.
///
/// ```
/// let none = sluice_builder::toolchain::nvcc_wheel_version(std::path::Path::new("/nonexistent"));
/// assert_eq!(none, None);
/// ```
pub fn nvcc_wheel_version(tools_dir: &Path) -> Option<String> {
    for py in read_dir_sorted(&tools_dir.join("venv").join("lib")) {
        for entry in read_dir_sorted(&py.join("site-packages")) {
            let name = entry.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            if let Some(v) = name.strip_prefix("nvidia_cuda_nvcc-").and_then(|r| r.strip_suffix(".dist-info")) {
                return Some(v.to_string());
            }
        }
    }
    None
}

/// The installed version of a Debian package (`dpkg-query`), `None` when it is not
/// installed or there is no dpkg.
///
/// ```
/// assert_eq!(sluice_builder::toolchain::debian_version("no-such-package-sluice"), None);
/// ```
pub fn debian_version(package: &str) -> Option<String> {
    let v = capture(Command::new("dpkg-query").args(["-W", "-f=${Version}", package])).ok()?;
    Some(v.trim().to_string()).filter(|v| !v.is_empty())
}

/// Every `nvidia/<cuda>/bin/ptxas`-style layout under the local Python venv.
fn venv_cuda_roots(tools_dir: &Path) -> Vec<PathBuf> {
    let mut roots = Vec::new();
    let lib = tools_dir.join("venv").join("lib");
    for py in read_dir_sorted(&lib) {
        let nvidia = py.join("site-packages").join("nvidia");
        for cu in read_dir_sorted(&nvidia) {
            // Newest CUDA first (cu13 before cu12); `cuda_nvcc` is the pre-13 layout.
            roots.push(cu.clone());
        }
    }
    roots.reverse();
    roots
}

fn read_dir_sorted(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| rd.filter_map(|e| e.ok().map(|e| e.path())).filter(|p| p.is_dir()).collect())
        .unwrap_or_default();
    v.sort();
    v
}

fn cuda_roots(loc: &Locations) -> Vec<PathBuf> {
    let mut roots = venv_cuda_roots(&loc.tools_dir);
    // The per-user folder is always a candidate: a caller's own folder may be empty.
    let per_user = default_tools_dir();
    if per_user != loc.tools_dir {
        roots.extend(venv_cuda_roots(&per_user));
    }
    for var in ["CUDA_HOME", "CUDA_PATH"] {
        if let Some(p) = env_path(var) {
            roots.push(p);
        }
    }
    roots.push(PathBuf::from("/usr/local/cuda"));
    roots
}

/// `ptxas`: `SLUICE_PTXAS`, the local venv, a CUDA toolkit, then `PATH`.
///
/// ```no_run
/// use sluice_builder::toolchain::{find_ptxas, Locations};
/// let ptxas = find_ptxas(&Locations::default())?;
/// # Ok::<(), sluice_builder::BuildError>(())
/// ```
///
/// # Errors
/// [`BuildError::ToolMissing`] naming the setup command.
pub fn find_ptxas(loc: &Locations) -> Result<PathBuf, BuildError> {
    if let Some(explicit) = env_path("SLUICE_PTXAS") {
        return if explicit.is_file() {
            Ok(explicit)
        } else {
            Err(BuildError::ToolMissing { tool: Tool::Ptxas, looked: vec![explicit], fix: ptxas_fix() })
        };
    }
    let mut looked: Vec<PathBuf> = cuda_roots(loc).into_iter().map(|r| r.join("bin/ptxas")).collect();
    if let Some(path) = std::env::var_os("PATH") {
        looked.extend(std::env::split_paths(&path).map(|d| d.join("ptxas")));
    }
    if let Some(found) = looked.iter().find(|p| p.is_file()) {
        return Ok(found.clone());
    }
    let mut seen = std::collections::HashSet::new();
    looked.retain(|p| seen.insert(p.clone()));
    looked.truncate(4);
    looked.insert(0, loc.tools_dir.join("venv"));
    Err(BuildError::ToolMissing { tool: Tool::Ptxas, looked, fix: ptxas_fix() })
}

/// libdevice: `SLUICE_LIBDEVICE`, else beside a CUDA root found as for ptxas.
///
/// ```no_run
/// use sluice_builder::toolchain::{find_libdevice, Locations};
/// let bc = find_libdevice(&Locations::default())?;
/// assert!(bc.ends_with("libdevice.10.bc"));
/// # Ok::<(), sluice_builder::BuildError>(())
/// ```
///
/// # Errors
/// [`BuildError::ToolMissing`] naming the setup command.
pub fn find_libdevice(loc: &Locations) -> Result<PathBuf, BuildError> {
    if let Some(explicit) = env_path("SLUICE_LIBDEVICE") {
        return if explicit.is_file() {
            Ok(explicit)
        } else {
            Err(BuildError::ToolMissing { tool: Tool::Libdevice, looked: vec![explicit], fix: ptxas_fix() })
        };
    }
    let looked: Vec<PathBuf> = cuda_roots(loc).into_iter().map(|r| r.join("nvvm/libdevice/libdevice.10.bc")).collect();
    looked.iter().find(|p| p.is_file()).cloned().ok_or(BuildError::ToolMissing {
        tool: Tool::Libdevice,
        looked,
        fix: ptxas_fix(),
    })
}

/// Environment variables of an outer cargo or build script that must not reach
/// the nested cargo: they describe the *outer* build (its target, flags,
/// compiler wrapper, target dir, package) and would make the kernel build use
/// the host's flags, the wrong rustc, or deadlock on the outer target dir.
///
/// ```
/// let env = sluice_builder::toolchain::scrubbed_env();
/// assert!(env.iter().all(|(k, _)| k != "RUSTFLAGS" && k != "CARGO_TARGET_DIR"));
/// ```
pub fn scrubbed_env() -> Vec<(OsString, OsString)> {
    const DROP_EXACT: &[&str] = &[
        "RUSTC",
        "RUSTDOC",
        "RUSTC_WRAPPER",
        "RUSTC_WORKSPACE_WRAPPER",
        "RUSTFLAGS",
        "RUSTDOCFLAGS",
        "RUSTC_LINKER",
        "TARGET",
        "HOST",
        "OUT_DIR",
        "PROFILE",
        "OPT_LEVEL",
        "DEBUG",
        "NUM_JOBS",
        "CARGO_TARGET_DIR",
        "CARGO_BUILD_TARGET",
        "CARGO_BUILD_TARGET_DIR",
        "CARGO_ENCODED_RUSTFLAGS",
        "CARGO_BUILD_RUSTFLAGS",
        "CARGO_MANIFEST_DIR",
        "CARGO_MANIFEST_PATH",
        "CARGO_PRIMARY_PACKAGE",
        "CARGO_CRATE_NAME",
        "CARGO_BIN_NAME",
        "RUSTC_BOOTSTRAP",
        "CARGO_INCREMENTAL",
    ];
    const DROP_PREFIX: &[&str] =
        &["CARGO_PKG_", "CARGO_CFG_", "CARGO_FEATURE_", "CARGO_TARGET_", "CARGO_PROFILE_", "DEP_"];
    std::env::vars_os()
        .filter(|(k, _)| {
            let k = k.to_string_lossy();
            !DROP_EXACT.contains(&k.as_ref()) && !DROP_PREFIX.iter().any(|p| k.starts_with(p))
        })
        .collect()
}

/// FNV-1a of `bytes`: the name of a file built from a source text (the bitcode linker,
/// the range-check pass), so that another source gets another file.
pub(crate) fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf29ce484222325u64, |h, &b| (h ^ b as u64).wrapping_mul(0x100000001b3))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_ptxas_versions() {
        let text = "ptxas: NVIDIA (R) Ptx optimizing assembler\nCuda compilation tools, release 13.5, V13.5.37\n";
        assert_eq!(parse_ptxas_version(text).as_deref(), Some("13.5.37"));
        assert_eq!(parse_ptxas_version("no version here"), None);
    }
}
