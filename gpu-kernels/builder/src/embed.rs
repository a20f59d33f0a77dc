//! The builder as one call in a build script: [`embed`].

use std::path::{Path, PathBuf};

use crate::arch::Arch;
use crate::builder::{write_if_changed, Builder};
use crate::error::{self, BuildError};

/// The environment variables a kernel build depends on; [`embed`] emits a
/// `cargo:rerun-if-env-changed` for each.
///
/// ```
/// assert!(sluice_builder::ENV_VARS.contains(&"SLUICE_TOOLS_DIR"));
/// assert!(sluice_builder::ENV_VARS.contains(&"CUDA_HOME"));
/// ```
pub const ENV_VARS: &[&str] = &[
    "SLUICE_ARCH",
    "SLUICE_PANIC_MESSAGES",
    "SLUICE_TOOLS_DIR",
    "SLUICE_KERNEL_RUSTC",
    "SLUICE_LLVM_BIN",
    "SLUICE_LIBDEVICE",
    "SLUICE_PTXAS",
    "CUDA_HOME",
    "CUDA_PATH",
    "XDG_CACHE_HOME",
    // The C++ compiler the range-check pass is built with (`range_checks`).
    "CXX",
];

/// What [`embed`] wrote into `OUT_DIR`.
///
/// ```no_run
/// // build.rs
/// let e = sluice_builder::embed("kernels");
/// println!("cargo:warning={} kernels for {}", e.kernels.len(), e.arch);
/// ```
#[derive(Debug, Clone)]
pub struct Embedded {
    /// `$OUT_DIR/sluice-kernels/<lib_name>.<arch>.ptx`.
    pub ptx: PathBuf,
    /// `$OUT_DIR/sluice-kernels/<lib_name>.rs`, the file `sluice::include_kernels!` includes.
    pub rust: PathBuf,
    /// The kernel crate's library name (`my_kernels`).
    pub lib_name: String,
    /// The kernel entries.
    pub kernels: Vec<String>,
    /// The architecture.
    pub arch: Arch,
}

/// Builds the kernel crate at `kernel_crate` (relative to the calling package's folder)
/// for the architecture in `SLUICE_ARCH` (default `sm_90`) and embeds it; on failure
/// prints the error (which names its fix) and ends the build script with status 1.
///
/// In the host crate's `build.rs`:
///
/// ```no_run
/// fn main() {
///     sluice_builder::embed("kernels");
/// }
/// ```
///
/// and in its code (the kernel crate `my-kernels` is also a normal dependency, for the
/// kernels' host-side declarations):
///
/// ```ignore
/// mod kernels {
///     sluice::include_kernels!(my_kernels);
/// }
/// // kernels::saxpy is a typed `sluice::Kernel`, kernels::PTX the module.
/// ```
///
/// What it does: the nested kernel build (in the calling build's target folder, one
/// folder per kernel crate), then it
/// * copies the PTX to `$OUT_DIR/sluice-kernels/<lib_name>.<arch>.ptx`;
/// * writes `$OUT_DIR/sluice-kernels/<lib_name>.rs` ([`kernel_handles_source`]);
/// * emits `cargo:rerun-if-changed` for every source file of the kernel build (cargo's
///   dep-info) and the kernel crate's `Cargo.toml`, and `cargo:rerun-if-env-changed` for
///   each of [`ENV_VARS`].
///
/// Use [`try_embed`] to handle the error yourself, or [`Builder::embed`] for other
/// options.
pub fn embed(kernel_crate: impl AsRef<Path>) -> Embedded {
    match try_embed(kernel_crate) {
        Ok(e) => e,
        Err(e) => {
            // One clear message (cargo shows a failed build script's stderr), not a
            // panic with a backtrace.
            eprintln!("{e}");
            std::process::exit(1)
        }
    }
}

/// [`embed`], and the kernel crate built for the architecture-specific target `specific`
/// too (`Arch::SM_90A`: Hopper's warpgroup MMA) when `SLUICE_ARCH` (default `sm_90`) is
/// of its compute capability ([`Builder::specific`]): both PTX texts are embedded, and the
/// host launches the specific one on such GPUs. For another `SLUICE_ARCH` (`sm_80`) only
/// the portable build is made, and the kernels only the specific build has report
/// `Error::KernelNeedsArch` when launched.
///
/// ```no_run
/// // build.rs of a crate whose kernel crate has Hopper kernels, gated with
/// // #[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
/// fn main() {
///     sluice_builder::embed_specific("kernels", sluice_builder::Arch::SM_90A);
/// }
/// ```
pub fn embed_specific(kernel_crate: impl AsRef<Path>, specific: Arch) -> Embedded {
    let built = (|| {
        print_env_dependencies();
        let manifest_dir = std::env::var_os("CARGO_MANIFEST_DIR")
            .map(PathBuf::from)
            .ok_or(BuildError::NotInBuildScript { missing: "CARGO_MANIFEST_DIR" })?;
        let arch = match std::env::var("SLUICE_ARCH").ok().filter(|a| !a.is_empty()) {
            Some(a) => a.parse()?,
            None => Arch::default(),
        };
        let mut b = Builder::new(manifest_dir.join(kernel_crate)).arch(arch);
        if arch.compute_capability() == specific.compute_capability() && arch != specific {
            b = b.specific(specific);
        }
        b.embed_quietly()
    })();
    match built {
        Ok(e) => e,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1)
        }
    }
}

/// [`embed`], returning the error instead of ending the build script.
///
/// # Errors
/// [`BuildError::NotInBuildScript`] outside a build script, [`BuildError::BadArch`] for
/// a malformed `SLUICE_ARCH`, and every error of [`Builder::build`].
///
/// ```no_run
/// // build.rs
/// fn main() {
///     if let Err(e) = sluice_builder::try_embed("kernels") {
///         eprintln!("{e}\n(or build without the GPU part: see the README)");
///         std::process::exit(1);
///     }
/// }
/// ```
pub fn try_embed(kernel_crate: impl AsRef<Path>) -> Result<Embedded, BuildError> {
    print_env_dependencies();
    let manifest_dir = std::env::var_os("CARGO_MANIFEST_DIR")
        .map(PathBuf::from)
        .ok_or(BuildError::NotInBuildScript { missing: "CARGO_MANIFEST_DIR" })?;
    let arch = match std::env::var("SLUICE_ARCH").ok().filter(|a| !a.is_empty()) {
        Some(a) => a.parse()?,
        None => Arch::default(),
    };
    Builder::new(manifest_dir.join(kernel_crate)).arch(arch).embed_quietly()
}

fn print_env_dependencies() {
    for var in ENV_VARS {
        println!("cargo:rerun-if-env-changed={var}");
    }
}

impl Builder {
    /// Builds and embeds the kernel crate as [`embed`] does, with this builder's options
    /// (its architecture, not `SLUICE_ARCH`). Run it from a build script.
    ///
    /// ```no_run
    /// // build.rs
    /// fn main() {
    ///     let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("kernels");
    ///     let built = sluice_builder::Builder::new(dir).arch(sluice_builder::Arch::SM_80).embed();
    ///     if let Err(e) = built {
    ///         eprintln!("{e}");
    ///         std::process::exit(1);
    ///     }
    /// }
    /// ```
    ///
    /// # Errors
    /// [`BuildError::NotInBuildScript`] outside a build script, and every error of
    /// [`Builder::build`].
    pub fn embed(&self) -> Result<Embedded, BuildError> {
        print_env_dependencies();
        self.embed_quietly()
    }

    /// [`Builder::embed`] without the `rerun-if-env-changed` lines (already printed).
    fn embed_quietly(&self) -> Result<Embedded, BuildError> {
        let out_dir = std::env::var_os("OUT_DIR")
            .map(PathBuf::from)
            .ok_or(BuildError::NotInBuildScript { missing: "OUT_DIR" })?;
        println!("cargo:rerun-if-changed={}", self.crate_dir.join("Cargo.toml").display());
        let built = self.build()?;
        let dir = out_dir.join("sluice-kernels");
        let copy = |built: &crate::builder::PtxOutput| -> Result<PathBuf, BuildError> {
            let ptx = dir.join(format!("{}.{}.ptx", built.lib_name, built.arch));
            let text =
                std::fs::read_to_string(&built.ptx).map_err(error::io(format!("reading {}", built.ptx.display())))?;
            write_if_changed(&ptx, &text)?;
            Ok(ptx)
        };
        let ptx = copy(&built)?;
        // The architecture-specific build, if asked for: its own PTX, and its entries (a
        // superset: kernels gated on the target's features) named for the handles.
        let specific = match self.specific_arch() {
            Some(arch) => {
                let s = self.clone().arch(arch).build()?;
                let path = copy(&s)?;
                Some((s, path))
            }
            None => None,
        };
        let mut kernels = built.kernels.clone();
        if let Some((s, _)) = &specific {
            kernels.extend(s.kernels.iter().filter(|k| !built.kernels.contains(k)).cloned());
        }
        let rust = dir.join(format!("{}.rs", built.lib_name));
        let mut source = kernel_handles_source(&built.package, &built.lib_name, &ptx, built.arch, &kernels)?;
        if let Some((s, path)) = &specific {
            let only: Vec<&str> = s.kernels.iter().filter(|k| !built.kernels.contains(k)).map(String::as_str).collect();
            source = with_specific(&source, s.arch, path, &only)?;
        }
        write_if_changed(&rust, &source)?;
        let builds = std::iter::once(&built).chain(specific.as_ref().map(|(s, _)| s));
        for b in builds {
            for src in &b.sources {
                println!("cargo:rerun-if-changed={}", src.display());
            }
            // Kernel bodies are compiled for the device only: its warnings are the only ones.
            for n in &b.notes {
                println!("cargo:warning=sluice: {n}");
            }
            for w in &b.warnings {
                println!("cargo:warning=device build of {} ({}): {w}", b.package, b.arch);
            }
        }
        Ok(Embedded { ptx, rust, lib_name: built.lib_name, kernels, arch: built.arch })
    }
}

/// `source` ([`kernel_handles_source`]'s) with the specific build's PTX `ptx` for `arch`
/// added, and the entries only it has.
fn with_specific(source: &str, arch: Arch, ptx: &Path, only: &[&str]) -> Result<String, BuildError> {
    let path = ptx.to_str().ok_or_else(|| BuildError::Io {
        what: format!("naming {} in Rust source", ptx.display()),
        source: std::io::Error::new(std::io::ErrorKind::InvalidData, "the path is not valid UTF-8"),
    })?;
    let (major, minor) = arch.compute_capability();
    let line = format!(
        "        specific: [\"{arch}\" ({major}, {minor}): {path:?}, only: [{}]],\n    }}\n}}\n",
        only.join(", ")
    );
    let end = source.rfind("    }\n}\n").expect("kernel_handles_source ends with the macro's braces");
    Ok(format!("{}{line}", &source[..end]))
}

/// The Rust file [`embed`] writes: one `sluice::kernel_handles!` call naming the kernel
/// crate, the PTX file, the architecture and every entry.
///
/// ```
/// # use std::path::Path;
/// let src = sluice_builder::kernel_handles_source(
///     "my-kernels", "my_kernels", Path::new("/out/sluice-kernels/my_kernels.sm_90.ptx"),
///     sluice_builder::Arch::SM_90, &["saxpy".to_string(), "tiled_sum".to_string()],
/// ).unwrap();
/// assert_eq!(src, "\
/// // Generated by sluice-builder: the PTX of `my-kernels` for sm_90. Do not edit.
/// ::sluice::kernel_handles! {
///     // SAFETY: sluice-builder compiled the kernel crate `my_kernels` into this PTX file.
///     unsafe {
///         krate: my_kernels,
///         ptx: \"/out/sluice-kernels/my_kernels.sm_90.ptx\",
///         arch: \"sm_90\",
///         entries: [saxpy = __sluice_kernel_saxpy, tiled_sum = __sluice_kernel_tiled_sum],
///     }
/// }
/// ");
/// ```
///
/// # Errors
/// [`BuildError::Io`] when the PTX path is not valid UTF-8 (`include_str!` needs a string).
pub fn kernel_handles_source(
    package: &str,
    lib_name: &str,
    ptx: &Path,
    arch: Arch,
    entries: &[String],
) -> Result<String, BuildError> {
    let path = ptx.to_str().ok_or_else(|| BuildError::Io {
        what: format!("naming {} in Rust source", ptx.display()),
        source: std::io::Error::new(std::io::ErrorKind::InvalidData, "the path is not valid UTF-8"),
    })?;
    let entries: Vec<String> = entries.iter().map(|e| format!("{e} = __sluice_kernel_{e}")).collect();
    Ok(format!(
        "// Generated by sluice-builder: the PTX of `{package}` for {arch}. Do not edit.\n\
         ::sluice::kernel_handles! {{\n    \
         // SAFETY: sluice-builder compiled the kernel crate `{lib_name}` into this PTX file.\n    \
         unsafe {{\n        krate: {lib_name},\n        ptx: {path:?},\n        arch: \"{arch}\",\n        \
         entries: [{}],\n    }}\n}}\n",
        entries.join(", ")
    ))
}
