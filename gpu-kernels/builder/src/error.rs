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
                write!(f, "sluice: the kernel crate {} did not compile for nvptx64-nvidia-cuda:", manifest.display())?;
                // Each error's headline, place and help, not rustc's whole rendering: an error
                // in code that both builds compile is shown in full by cargo for the host
                // build as well, and the whole log is in the file. Unparsed: the whole log.
                match (compile_summary(log), log_file) {
                    (Some(summary), Some(_)) => write!(f, "\n{summary}")?,
                    _ => write!(f, "\n{log}")?,
                }
                if let Some(h) = hint {
                    write!(f, "\n  hint: {h}")?;
                }
                if let Some(file) = log_file {
                    write!(f, "\n  (each error in full, with rustc's notes, is in {})", file.display())?;
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

/// The errors of a failed kernel build, a few lines each: rustc's headline
/// (`error[E0308]: mismatched types`), its `-->` place, its first label (`expected `u32`,
/// found `&str``), and its help (`help:` and `= help:` lines); at most [`SUMMARY_ERRORS`] of
/// them, then how many more. `None` if the log holds no error this recognises (it is then
/// shown whole).
fn compile_summary(log: &str) -> Option<String> {
    let mut errors: Vec<Vec<String>> = Vec::new();
    let mut current: Option<(Vec<String>, bool)> = None;
    for line in log.lines() {
        let headline = line.starts_with("error")
            && !line.starts_with("error: could not compile")
            && !line.starts_with("error: aborting");
        if headline {
            errors.extend(current.take().map(|c| c.0));
            current = Some((vec![line.trim_end().to_string()], false));
            continue;
        }
        let Some((c, labelled)) = current.as_mut() else { continue };
        let t = line.trim_start();
        if (t.starts_with("--> ") && c.len() == 1) || t.starts_with("= help:") || line.starts_with("help:") {
            c.push(format!("  {}", t.trim_end()));
        } else if let Some(label) = primary_label(line).filter(|_| !*labelled) {
            c.push(format!("  {label}"));
            *labelled = true;
        } else if line.starts_with(|ch: char| ch.is_ascii_alphabetic()) && !line.starts_with("note:") {
            // The next diagnostic (a warning, `For more information ...`): this one ended.
            // (Its own lines are indented, a line number and `|`, or `note:`/`help:`.)
            errors.extend(current.take().map(|c| c.0));
        }
    }
    errors.extend(current.map(|c| c.0));
    if errors.is_empty() {
        return None;
    }
    let mut out = String::new();
    for e in errors.iter().take(SUMMARY_ERRORS) {
        for line in e {
            out.push_str("  ");
            out.push_str(line);
            out.push('\n');
        }
    }
    if errors.len() > SUMMARY_ERRORS {
        out.push_str(&format!("  ... and {} more errors\n", errors.len() - SUMMARY_ERRORS));
    }
    Some(out.trim_end().to_string())
}

/// The text of a rendered primary label (`   |     ^^^^ expected `u32`, found `&str``), if
/// the line is one.
fn primary_label(line: &str) -> Option<&str> {
    let (_, rest) = line.split_once('|')?;
    // The carets may follow a secondary label's dashes (`---   ^^^^ expected ...`).
    let text = rest[rest.find('^')?..].trim_start_matches('^').trim();
    (!text.is_empty()).then_some(text)
}

/// Most errors [`compile_summary`] lists.
const SUMMARY_ERRORS: usize = 8;

#[cfg(test)]
mod tests {
    use super::*;

    const LOG: &str = "   Compiling k v0.1.0 (/p/kernels)
warning: unused variable: `y`
 --> kernels/src/lib.rs:3:9
  |
3 |     let y = 1;
  |         ^ help: if this is intentional, prefix it with an underscore: `_y`

error[E0308]: mismatched types
  --> kernels/src/lib.rs:29:21
   |
29 |     let oops: u32 = \"not a number\";
   |               ---   ^^^^^^^^^^^^^^ expected `u32`, found `&str`
   |               |
   |               expected due to this

error[E0425]: cannot find value `z` in this scope
  --> kernels/src/lib.rs:31:5
   |
31 |     z
   |     ^ not found in this scope
   |
   = help: consider importing this function

error[E0599]: no method `f`
  --> kernels/src/lib.rs:40:7
   |
40 |     x.f()
   |       ^
   |
help: there is a method `g` with a similar name
   |
40 |     x.g()
   |       ~

For more information about this error, try `rustc --explain E0308`.
error: could not compile `k` (lib) due to 3 previous errors
";

    #[test]
    fn a_failed_kernel_build_is_summed_up_one_error_at_a_time() {
        let summary = compile_summary(LOG).expect("two errors");
        assert_eq!(
            summary,
            "  error[E0308]: mismatched types\n    --> kernels/src/lib.rs:29:21\n    expected `u32`, found `&str`\n  \
             error[E0425]: cannot find value `z` in this scope\n    --> kernels/src/lib.rs:31:5\n    not found in \
             this scope\n    = help: consider importing this function\n  error[E0599]: no method `f`\n    --> \
             kernels/src/lib.rs:40:7\n    help: there is a method `g` with a similar name"
        );
        assert_eq!(compile_summary("   Compiling k\nsomething else went wrong\n"), None);
        let many: String = (0..12).map(|i| format!("error: e{i}\n  --> a.rs:{i}:1\n")).collect();
        assert!(compile_summary(&many).unwrap().ends_with("  ... and 4 more errors"));
        // In the message: the summary, not the whole log, with the log's file.
        let e = BuildError::KernelCompile {
            manifest: PathBuf::from("/p/kernels/Cargo.toml"),
            log: LOG.trim_end().to_string(),
            log_file: Some(PathBuf::from("/t/sluice-build.log")),
            hint: None,
        };
        let text = e.to_string();
        assert!(text.contains("error[E0308]: mismatched types") && text.contains("kernels/src/lib.rs:31:5"), "{text}");
        assert!(!text.contains("expected due to this") && !text.contains("unused variable"), "{text}");
        assert!(text.contains("is in /t/sluice-build.log"), "{text}");
    }
}
