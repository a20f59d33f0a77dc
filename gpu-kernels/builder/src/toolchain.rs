//! Finding the kernel toolchain: rustc + rust-src, LLVM tools, ptxas, libdevice.
//!
//! Two routes are supported, tried in this order:
//!
//! * **Debian**: `rustc-web` (a stable rustc used with `RUSTC_BOOTSTRAP=1`),
//!   `rust-web-src` (its library source) and `llvm-N` (`llvm-link`, `opt`,
//!   `llc`, the same major version as rustc's LLVM);
//! * **rustup**: `rustup toolchain install nightly --component rust-src
//!   llvm-tools llvm-bitcode-linker`.
//!
//! Every piece can be pointed at explicitly with an environment variable
//! (`SLUICE_KERNEL_RUSTC`, `SLUICE_LLVM_BIN`, `SLUICE_PTXAS`,
//! `SLUICE_LIBDEVICE`); a piece that is missing is reported with the command
//! that installs it.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::error::{BuildError, Tool};

/// The one-line fix for a missing kernel compiler or LLVM tools.
pub const SETUP_FIX: &str = "run `cargo xtask setup`, or install a toolchain yourself: \
     `apt-get install rustc-web rust-web-src llvm-22` (Debian 12 security updates) or \
     `rustup toolchain install nightly --component rust-src llvm-tools llvm-bitcode-linker`";

/// The one-line fix for a missing ptxas or libdevice.
pub const PTXAS_FIX: &str = "run `cargo xtask setup` (it installs PyPI's nvidia-cuda-nvcc into \
     target/sluice-tools), install a CUDA toolkit, or set SLUICE_PTXAS to a ptxas binary";

/// A kernel compiler: a rustc that can build `core` for `nvptx64-nvidia-cuda`.
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
}

impl KernelRustc {
    /// Probes `rustc` and checks that it can build for the NVPTX target with
    /// `-Zbuild-std=core` (its library source is installed).
    pub fn probe(rustc: &Path) -> Result<KernelRustc, BuildError> {
        let unusable = |problem: String| BuildError::ToolUnusable {
            tool: Tool::KernelRustc,
            path: rustc.to_path_buf(),
            problem,
            fix: SETUP_FIX.to_string(),
        };
        let vv = capture(Command::new(rustc).arg("-vV").env("RUSTC_BOOTSTRAP", "1")).map_err(|e| {
            if e.kind() == std::io::ErrorKind::NotFound {
                BuildError::ToolMissing { tool: Tool::KernelRustc, looked: vec![rustc.to_path_buf()], fix: SETUP_FIX.into() }
            } else {
                unusable(format!("`rustc -vV` failed: {e}"))
            }
        })?;
        let field = |name: &str| {
            vv.lines().find_map(|l| l.strip_prefix(name)).map(|v| v.trim().to_string())
        };
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
        if !targets.lines().any(|t| t.trim() == crate::TARGET) {
            return Err(unusable(format!("it does not know the {} target", crate::TARGET)));
        }
        let found = KernelRustc { rustc: rustc.to_path_buf(), sysroot, release, llvm_major };
        let src = found.rust_src();
        if !src.join("core").join("Cargo.toml").is_file() {
            return Err(BuildError::ToolMissing {
                tool: Tool::RustSrc,
                looked: vec![src],
                fix: format!(
                    "{SETUP_FIX} (for this rustc: {})",
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
    pub fn rust_src(&self) -> PathBuf {
        self.sysroot.join("lib/rustlib/src/rust/library")
    }

    fn toolchain_name(&self) -> String {
        self.sysroot.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "nightly".into())
    }
}

/// The kernel toolchain as a whole.
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

/// Where to look for the pieces that `cargo xtask setup` installs locally.
#[derive(Debug, Clone)]
pub struct Locations {
    /// The project-local tools folder (`target/sluice-tools`).
    pub tools_dir: PathBuf,
}

impl Toolchain {
    /// Finds every piece, or says which one is missing and how to install it.
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
/// else rustup's nightly.
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
    // `auto-install`, `rustup which --toolchain nightly` downloads a whole toolchain.
    let rustup = capture(
        Command::new("rustup").args(["which", "rustc", "--toolchain", "nightly"]).env("RUSTUP_AUTO_INSTALL", "0"),
    );
    if let Ok(out) = rustup {
        let nightly = PathBuf::from(out.trim());
        looked.push(nightly.clone());
        if nightly.is_file() {
            if let Some(found) = consider(&nightly) {
                return Ok(found);
            }
        }
    }
    if let Some(found) = usable {
        return Ok(found); // find_llvm_bin then names the missing LLVM tools
    }
    Err(first_err.unwrap_or(BuildError::ToolMissing { tool: Tool::KernelRustc, looked, fix: SETUP_FIX.into() }))
}

/// `llvm-link`, `opt` and `llc` matching the compiler's LLVM.
pub fn find_llvm_bin(rustc: &KernelRustc) -> Result<PathBuf, BuildError> {
    let has_all = |dir: &Path| ["llvm-link", "opt", "llc"].iter().all(|t| dir.join(t).is_file());
    if let Some(explicit) = env_path("SLUICE_LLVM_BIN") {
        return if has_all(&explicit) {
            Ok(explicit)
        } else {
            Err(BuildError::ToolMissing { tool: Tool::LlvmTools, looked: vec![explicit], fix: "SLUICE_LLVM_BIN must name a folder holding llvm-link, opt and llc".into() })
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
            "run `cargo xtask setup`, or install LLVM {m}: `apt-get install llvm-{m}` or \
             `rustup component add llvm-tools --toolchain nightly`",
            m = rustc.llvm_major
        ),
    })
}

fn host_triple(rustc: &Path) -> Option<String> {
    let vv = capture(Command::new(rustc).arg("-vV")).ok()?;
    vv.lines().find_map(|l| l.strip_prefix("host:")).map(|h| h.trim().to_string())
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
    for var in ["CUDA_HOME", "CUDA_PATH"] {
        if let Some(p) = env_path(var) {
            roots.push(p);
        }
    }
    roots.push(PathBuf::from("/usr/local/cuda"));
    roots
}

/// `ptxas`: `SLUICE_PTXAS`, the local venv, a CUDA toolkit, then `PATH`.
pub fn find_ptxas(loc: &Locations) -> Result<PathBuf, BuildError> {
    if let Some(explicit) = env_path("SLUICE_PTXAS") {
        return if explicit.is_file() {
            Ok(explicit)
        } else {
            Err(BuildError::ToolMissing { tool: Tool::Ptxas, looked: vec![explicit], fix: PTXAS_FIX.into() })
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
    Err(BuildError::ToolMissing { tool: Tool::Ptxas, looked, fix: PTXAS_FIX.into() })
}

/// libdevice: `SLUICE_LIBDEVICE`, else beside a CUDA root found as for ptxas.
pub fn find_libdevice(loc: &Locations) -> Result<PathBuf, BuildError> {
    if let Some(explicit) = env_path("SLUICE_LIBDEVICE") {
        return if explicit.is_file() {
            Ok(explicit)
        } else {
            Err(BuildError::ToolMissing { tool: Tool::Libdevice, looked: vec![explicit], fix: PTXAS_FIX.into() })
        };
    }
    let looked: Vec<PathBuf> =
        cuda_roots(loc).into_iter().map(|r| r.join("nvvm/libdevice/libdevice.10.bc")).collect();
    looked.iter().find(|p| p.is_file()).cloned().ok_or(BuildError::ToolMissing {
        tool: Tool::Libdevice,
        looked,
        fix: PTXAS_FIX.into(),
    })
}

/// Environment variables of an outer cargo or build script that must not reach
/// the nested cargo: they describe the *outer* build (its target, flags,
/// compiler wrapper, target dir, package) and would make the kernel build use
/// the host's flags, the wrong rustc, or deadlock on the outer target dir.
pub fn scrubbed_env() -> Vec<(OsString, OsString)> {
    const DROP_EXACT: &[&str] = &[
        "RUSTC", "RUSTDOC", "RUSTC_WRAPPER", "RUSTC_WORKSPACE_WRAPPER", "RUSTFLAGS", "RUSTDOCFLAGS",
        "RUSTC_LINKER", "TARGET", "HOST", "OUT_DIR", "PROFILE", "OPT_LEVEL", "DEBUG", "NUM_JOBS",
        "CARGO_TARGET_DIR", "CARGO_BUILD_TARGET", "CARGO_BUILD_TARGET_DIR", "CARGO_ENCODED_RUSTFLAGS",
        "CARGO_BUILD_RUSTFLAGS", "CARGO_MANIFEST_DIR", "CARGO_MANIFEST_PATH", "CARGO_PRIMARY_PACKAGE",
        "CARGO_CRATE_NAME", "CARGO_BIN_NAME", "RUSTC_BOOTSTRAP", "CARGO_INCREMENTAL",
    ];
    const DROP_PREFIX: &[&str] = &["CARGO_PKG_", "CARGO_CFG_", "CARGO_FEATURE_", "CARGO_TARGET_", "CARGO_PROFILE_", "DEP_"];
    std::env::vars_os()
        .filter(|(k, _)| {
            let k = k.to_string_lossy();
            !DROP_EXACT.contains(&k.as_ref()) && !DROP_PREFIX.iter().any(|p| k.starts_with(p))
        })
        .collect()
}
