//! The builder's errors: each one says which knob to turn.
//!
//! This module imports no other module of the crate: every error carries its fix as text,
//! written by the module that found the problem (which knows the frontend and the paths).

use std::fmt;
use std::path::PathBuf;

/// Everything that can go wrong while building or checking PTX.
///
/// The messages are meant to be read by a person at a terminal: a missing tool
/// names the tool, where it was looked for, and the command that installs it.
///
/// ```
/// use sluice_builder::{BuildError, Tool};
/// let err = BuildError::ToolMissing {
///     tool: Tool::Ptxas,
///     looked: vec![],
///     fix: "run `cargo sluice setup`".into(),
/// };
/// assert!(err.to_string().contains("ptxas"));
/// assert!(err.to_string().contains("cargo sluice setup"));
/// ```
#[derive(Debug)]
#[non_exhaustive]
pub enum BuildError {
    /// A tool of the kernel toolchain was not found.
    ToolMissing {
        /// Which tool.
        tool: Tool,
        /// Where it was looked for.
        looked: Vec<PathBuf>,
        /// The command (or action) that installs it.
        fix: String,
    },
    /// A tool was found but is unusable (wrong version, no NVPTX target...).
    ToolUnusable {
        /// Which tool.
        tool: Tool,
        /// Its path.
        path: PathBuf,
        /// What is wrong with it.
        problem: String,
        /// What to do about it.
        fix: String,
    },
    /// An architecture name that is not `sm_XY` (or `sm_XYa`) with XY >= 70.
    BadArch {
        /// What was given.
        given: String,
    },
    /// The nested `cargo build` of the kernel crate failed: the compiler's own
    /// messages are in `log`, whole, and in the file `log_file`.
    KernelCompile {
        /// The kernel crate's manifest.
        manifest: PathBuf,
        /// Everything the nested cargo and rustc printed (rendered diagnostics), uncut.
        log: String,
        /// The same log, written to a file (`None` if it could not be written).
        log_file: Option<PathBuf>,
        /// A hint for the most common causes (std used in a kernel crate), if one applies.
        hint: Option<String>,
    },
    /// The kernel crate built, but cargo reported no `.ptx` file, or more than one.
    PtxArtifact {
        /// The `.ptx` files cargo reported.
        found: Vec<PathBuf>,
    },
    /// The PTX calls a libdevice function (`__nv_*`) but no libdevice was linked.
    LibdeviceMissing {
        /// The unresolved functions.
        functions: Vec<String>,
        /// What installs libdevice (the setup command of the frontend in use).
        fix: String,
    },
    /// `ptxas` rejected a PTX file.
    Ptxas {
        /// The PTX file.
        ptx: PathBuf,
        /// The architecture it was assembled for.
        arch: String,
        /// What ptxas said.
        log: String,
    },
    /// `ptxas` spilled registers to local memory in some functions, and spills were not
    /// allowed (`--allow-spills`).
    Spills {
        /// The PTX file.
        ptx: PathBuf,
        /// The architecture it was assembled for.
        arch: String,
        /// `(function, spill stores, spill loads)` in bytes.
        functions: Vec<(String, u32, u32)>,
        /// The command line that allows them.
        fix: String,
    },
    /// `ptxas` serialized warpgroup MMAs (`wgmma`) in a kernel: `C7510` (a function other
    /// than a kernel entry calls another in the module) or `C7515` (an accumulator set while
    /// a group is in flight) — a loss of about half the MMA's speed, with no other error.
    SerializedWgmma {
        /// The PTX file.
        ptx: PathBuf,
        /// The architecture it was assembled for.
        arch: String,
        /// `ptxas`'s lines saying so.
        lines: Vec<String>,
    },
    /// An install step of setup failed, or no install route is available.
    Install {
        /// The step (a command or a piece).
        what: String,
        /// What went wrong.
        problem: String,
        /// What to do about it.
        fix: String,
    },
    /// A build-script-only call (`sluice_builder::embed`) ran outside a build script.
    NotInBuildScript {
        /// The variable cargo sets for build scripts that was missing.
        missing: &'static str,
    },
    /// A file could not be read or written, or a program could not be started.
    Io {
        /// What was being done.
        what: String,
        /// The underlying error.
        source: std::io::Error,
    },
}

/// The pieces of the kernel toolchain.
///
/// ```
/// assert!(sluice_builder::Tool::Ptxas.to_string().contains("ptxas"));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Tool {
    /// A `rustc` that can build `core` for `nvptx64-nvidia-cuda` (nightly, or a
    /// stable one with `RUSTC_BOOTSTRAP=1`), with its library source (`rust-src`).
    KernelRustc,
    /// The library source of that rustc (`rust-src`), needed by `-Zbuild-std=core`.
    RustSrc,
    /// `llvm-link`, `opt` and `llc` of the same LLVM major version as that rustc.
    LlvmTools,
    /// `cargo`.
    Cargo,
    /// NVIDIA's PTX assembler.
    Ptxas,
    /// NVIDIA's libdevice bitcode (math functions).
    Libdevice,
    /// A C compiler driver (`cc`), which rustc links host programs with (the builder's
    /// bitcode linker is one).
    CLinker,
    /// What sluice's range-check pass is built with ([`range_checks`](crate::range_checks)):
    /// LLVM's C++ headers of the kernel compiler's LLVM and a C++ compiler. Optional:
    /// kernels build without it, slower in loops that index a slice by a stride.
    RangeCheckPass,
}

impl Tool {
    /// Whether the kernel build works without this piece ([`Tool::RangeCheckPass`]: it
    /// only makes some loops faster). Setup installs it where it can; doctor reports it.
    ///
    /// ```
    /// use sluice_builder::Tool;
    /// assert!(Tool::RangeCheckPass.is_optional() && !Tool::Ptxas.is_optional());
    /// ```
    pub fn is_optional(self) -> bool {
        matches!(self, Tool::RangeCheckPass)
    }
}

impl fmt::Display for Tool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Tool::KernelRustc => "the kernel compiler (a rustc able to build for nvptx64-nvidia-cuda)",
            Tool::RustSrc => "the Rust library source (rust-src) of the kernel compiler",
            Tool::LlvmTools => "LLVM's llvm-link, opt and llc (matching the kernel compiler's LLVM)",
            Tool::Cargo => "cargo",
            Tool::Ptxas => "ptxas (NVIDIA's PTX assembler)",
            Tool::Libdevice => "libdevice.10.bc (NVIDIA's device math library)",
            Tool::CLinker => "a C linker (cc), needed to build host programs",
            Tool::RangeCheckPass => "LLVM's C++ headers and a C++ compiler, for sluice's range-check pass",
        })
    }
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BuildError::ToolMissing { tool, looked, fix } => {
                write!(f, "sluice: {tool} was not found")?;
                if !looked.is_empty() {
                    write!(f, " (looked in: ")?;
                    for (i, p) in looked.iter().enumerate() {
                        write!(f, "{}{}", if i > 0 { ", " } else { "" }, p.display())?;
                    }
                    write!(f, ")")?;
                }
                write!(f, ".\n  fix: {fix}")
            }
            BuildError::ToolUnusable { tool, path, problem, fix } => {
                write!(f, "sluice: {tool} at {} cannot be used: {problem}.\n  fix: {fix}", path.display())
            }
            BuildError::BadArch { given } => write!(
                f,
                "sluice: `{given}` is not a GPU architecture; write it as ptxas does, e.g. sm_90 \
                 (H100/H200), sm_90a, sm_89, sm_80 (sm_70 or newer)"
            ),
            BuildError::KernelCompile { manifest, log, log_file, hint } => {
                write!(
                    f,
                    "sluice: the kernel crate {} did not compile for nvptx64-nvidia-cuda:\n{log}",
                    manifest.display()
                )?;
                if let Some(h) = hint {
                    write!(f, "\n  hint: {h}")?;
                }
                if let Some(file) = log_file {
                    write!(f, "\n  (the whole log is also in {})", file.display())?;
                }
                Ok(())
            }
            BuildError::PtxArtifact { found } => write!(
                f,
                "sluice: expected exactly one .ptx file from the kernel crate, cargo reported {}: {:?}; \
                 the kernel crate must have `crate-type = [\"cdylib\"]` or be built by the builder \
                 (which asks for a cdylib)",
                found.len(),
                found
            ),
            BuildError::LibdeviceMissing { functions, fix } => write!(
                f,
                "sluice: the kernels call libdevice functions ({}) but no libdevice.10.bc was found \
                 to link them.\n  fix: {fix}",
                functions.join(", "),
            ),
            BuildError::Ptxas { ptx, arch, log } => {
                write!(f, "sluice: ptxas rejected {} for {arch}:\n{log}", ptx.display())
            }
            BuildError::Spills { ptx, arch, functions, fix } => {
                write!(f, "sluice: ptxas spilled registers to local memory in {} for {arch}:", ptx.display())?;
                for (name, stores, loads) in functions {
                    write!(f, "\n  {name}: {stores} bytes spill stores, {loads} bytes spill loads")?;
                }
                write!(
                    f,
                    "\n  fix: use fewer live values in these functions (a panic path pulling in `core::fmt` is a \
                     common cause: build without panic messages), or accept the spills with `{fix}`"
                )
            }
            BuildError::SerializedWgmma { ptx, arch, lines } => {
                write!(f, "sluice: ptxas serialized warpgroup MMAs in {} for {arch}:", ptx.display())?;
                for l in lines {
                    write!(f, "\n  {l}")?;
                }
                write!(
                    f,
                    "\n  fix: in an sm_90a build no function but a kernel entry may call another (inline the callee), and \
                     nothing may set an accumulator between a wgmma and its wait (a path around the main loop: make \
                     the loop run at least once, as `k_tiles.max(1)`)"
                )
            }
            BuildError::Install { what, problem, fix } => {
                write!(f, "sluice: setup could not install {what}: {problem}.\n  fix: {fix}")
            }
            BuildError::NotInBuildScript { missing } => write!(
                f,
                "sluice: `sluice_builder::embed` runs in a build script (build.rs), where cargo sets {missing}; \
                 elsewhere use `Builder::build`"
            ),
            BuildError::Io { what, source } => write!(f, "sluice: {what}: {source}"),
        }
    }
}

impl std::error::Error for BuildError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            BuildError::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

pub(crate) fn io(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> BuildError {
    let what = what.into();
    move |source| BuildError::Io { what, source }
}
