//! The builder's errors: each one says which knob to turn.

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
///     fix: "cargo xtask setup".into(),
/// };
/// assert!(err.to_string().contains("ptxas"));
/// assert!(err.to_string().contains("cargo xtask setup"));
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
    /// messages are in `log`.
    KernelCompile {
        /// The kernel crate's manifest.
        manifest: PathBuf,
        /// The compiler's diagnostics (rendered), most relevant last.
        log: String,
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
    /// A file could not be read or written, or a program could not be started.
    Io {
        /// What was being done.
        what: String,
        /// The underlying error.
        source: std::io::Error,
    },
}

/// The pieces of the kernel toolchain.
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
            BuildError::KernelCompile { manifest, log } => write!(
                f,
                "sluice: the kernel crate {} did not compile for nvptx64-nvidia-cuda:\n{log}",
                manifest.display()
            ),
            BuildError::PtxArtifact { found } => write!(
                f,
                "sluice: expected exactly one .ptx file from the kernel crate, cargo reported {}: {:?}; \
                 the kernel crate must have `crate-type = [\"cdylib\"]` or be built by the builder \
                 (which asks for a cdylib)",
                found.len(),
                found
            ),
            BuildError::LibdeviceMissing { functions } => write!(
                f,
                "sluice: the kernels call libdevice functions ({}) but no libdevice.10.bc was found \
                 to link them.\n  fix: run `cargo xtask setup` (it installs nvidia-cuda-nvcc, which \
                 ships libdevice), or set SLUICE_LIBDEVICE to the file's path",
                functions.join(", ")
            ),
            BuildError::Ptxas { ptx, arch, log } => {
                write!(f, "sluice: ptxas rejected {} for {arch}:\n{log}", ptx.display())
            }
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
