//! Reading PTX and cargo's outputs: kernel entries, unresolved calls, dep-info,
//! and `ptxas` resource reports.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::arch::Arch;
use crate::error::{io, BuildError};

/// The kernel entry names (`.entry NAME(`) of a PTX module, in file order.
///
/// ```
/// let ptx = ".visible .entry fill(\n.param .u64 p\n)\n{ ret; }\n.func helper() { ret; }";
/// assert_eq!(sluice_builder::ptx::entries(ptx), ["fill"]);
/// ```
pub fn entries(ptx: &str) -> Vec<String> {
    ptx.lines()
        .filter_map(|line| {
            let rest = line.trim_start();
            let rest = rest.strip_prefix(".visible ").or_else(|| rest.strip_prefix(".weak ")).unwrap_or(rest);
            let rest = rest.strip_prefix(".entry")?.trim_start();
            let end = rest.find(|c: char| c == '(' || c.is_whitespace()).unwrap_or(rest.len());
            Some(rest[..end].to_string()).filter(|n| !n.is_empty())
        })
        .collect()
}

/// The libdevice functions (`__nv_*`) that a module declares but does not define.
///
/// ```
/// let ptx = ".extern .func (.param .b32 r) __nv_expf\n(\n.param .b32 x\n);";
/// assert_eq!(sluice_builder::ptx::unresolved_libdevice_calls(ptx), ["__nv_expf"]);
/// ```
pub fn unresolved_libdevice_calls(ptx: &str) -> Vec<String> {
    let mut found: Vec<String> = ptx
        .lines()
        .filter(|l| l.trim_start().starts_with(".extern .func"))
        .filter_map(|l| {
            let at = l.find("__nv_")?;
            let name: String = l[at..].chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
            Some(name)
        })
        .collect();
    found.sort();
    found.dedup();
    found
}

/// The strings inside `"filenames":[...]` of one line of cargo's JSON output.
pub(crate) fn json_strings_in_filenames(line: &str) -> Vec<String> {
    let Some(start) = line.find("\"filenames\":[") else { return Vec::new() };
    let mut out = Vec::new();
    let mut chars = line[start + "\"filenames\":[".len()..].chars();
    loop {
        match chars.next() {
            Some('"') => {
                let mut s = String::new();
                while let Some(c) = chars.next() {
                    match c {
                        '"' => break,
                        '\\' => match chars.next() {
                            Some('n') => s.push('\n'),
                            Some('t') => s.push('\t'),
                            Some(other) => s.push(other),
                            None => break,
                        },
                        c => s.push(c),
                    }
                }
                out.push(s);
            }
            Some(']') | None => return out,
            Some(_) => {}
        }
    }
}

/// The string value of `"field":"…"` in one line of cargo's JSON output, the first one
/// after `after` (e.g. the `"name"` inside `"target":{`).
pub(crate) fn json_string_field(line: &str, after: &str, field: &str) -> Option<String> {
    let from = line.find(after)? + after.len();
    let key = format!("\"{field}\":\"");
    let start = from + line[from..].find(&key)? + key.len();
    let mut out = String::new();
    let mut chars = line[start..].chars();
    while let Some(c) = chars.next() {
        match c {
            '"' => return Some(out),
            '\\' => out.push(chars.next()?),
            c => out.push(c),
        }
    }
    None
}

/// The source files listed in a cargo/rustc dep-info (`.d`) file, skipping the
/// standard library's (they come from the toolchain, not the project).
///
/// ```
/// let d = std::env::temp_dir().join(format!("sluice-doc-{}.d", std::process::id()));
/// std::fs::write(&d, "/t/k.ptx: /p/src/lib.rs /usr/lib/rustlib/src/rust/library/core/src/lib.rs\n").unwrap();
/// assert_eq!(sluice_builder::ptx::dep_info_sources(&d), [std::path::PathBuf::from("/p/src/lib.rs")]);
/// # std::fs::remove_file(&d).unwrap();
/// ```
pub fn dep_info_sources(dep_file: &Path) -> Vec<PathBuf> {
    let Ok(text) = std::fs::read_to_string(dep_file) else { return Vec::new() };
    let mut out = Vec::new();
    for line in text.lines() {
        let Some((_, deps)) = line.split_once(": ") else { continue };
        let mut cur = String::new();
        let mut chars = deps.chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                '\\' if chars.peek() == Some(&' ') => {
                    cur.push(' ');
                    chars.next();
                }
                ' ' => {
                    if !cur.is_empty() {
                        out.push(PathBuf::from(std::mem::take(&mut cur)));
                    }
                }
                c => cur.push(c),
            }
        }
        if !cur.is_empty() {
            out.push(PathBuf::from(cur));
        }
    }
    out.retain(|p| !p.components().any(|c| c.as_os_str() == "rustlib"));
    out.sort();
    out.dedup();
    out
}

/// Whether a PTX function is a kernel entry (`.entry`) or a device function (`.func`).
///
/// ```
/// use sluice_builder::{FunctionKind, FunctionResources};
/// assert_eq!(FunctionResources::default().kind, FunctionKind::Entry);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FunctionKind {
    /// A kernel: `.entry`, launched from the host.
    #[default]
    Entry,
    /// A device function (`.func`) that was not inlined, called from kernels: a panic
    /// path, a libdevice slow path, a recursive helper.
    Function,
}

/// One function's resources as `ptxas -v` reports them: every kernel entry and every
/// device function left in the PTX (a spill in a `.func` costs as much as one in a kernel).
///
/// ```no_run
/// use sluice_builder::{check_ptx, toolchain, Arch, FunctionKind};
/// let ptxas = toolchain::find_ptxas(&toolchain::Locations::default())?;
/// for f in check_ptx(&ptxas, "target/ptx/k.sm_90.ptx".as_ref(), Arch::SM_90)? {
///     let kind = if f.kind == FunctionKind::Entry { "kernel" } else { "device function" };
///     println!("{kind} {}: {} registers, {} B spilled", f.name, f.registers, f.spill_store_bytes);
/// }
/// # Ok::<(), sluice_builder::BuildError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FunctionResources {
    /// The function's name (a kernel's entry name, a `.func`'s mangled symbol).
    pub name: String,
    /// Entry or device function.
    pub kind: FunctionKind,
    /// Registers per thread. ptxas reports them for entries only (a device function's
    /// registers count in the kernels calling it); 0 for device functions.
    pub registers: u32,
    /// Static shared memory per block, bytes (entries only).
    pub shared_bytes: u32,
    /// Stack frame per thread, bytes.
    pub stack_frame_bytes: u32,
    /// Bytes spilled to local memory (stores).
    pub spill_store_bytes: u32,
    /// Bytes reloaded from local memory.
    pub spill_load_bytes: u32,
}

impl FunctionResources {
    /// Whether the function spills registers to local memory.
    ///
    /// ```
    /// let mut f = sluice_builder::FunctionResources::default();
    /// assert!(!f.spills());
    /// f.spill_load_bytes = 4;
    /// assert!(f.spills());
    /// ```
    pub fn spills(&self) -> bool {
        self.spill_store_bytes > 0 || self.spill_load_bytes > 0
    }
}

/// The name [`FunctionResources`] had when the report covered kernel entries only
/// (prefer the new name: the report has device functions too).
///
/// ```
/// let k: sluice_builder::KernelResources = sluice_builder::FunctionResources::default();
/// # let _ = k;
/// ```
pub type KernelResources = FunctionResources;

/// `ptxas -arch=ARCH -v -O3` of `ptx` (output discarded): whether it succeeded, and its
/// report (stdout and stderr).
fn run_ptxas(ptxas: &Path, ptx: &Path, arch: Arch) -> Result<(bool, String), BuildError> {
    let out = Command::new(ptxas)
        .arg(format!("-arch={arch}"))
        .args(["-v", "-O3", "-o", "/dev/null"])
        .arg(ptx)
        .output()
        .map_err(io(format!("starting {}", ptxas.display())))?;
    Ok((
        out.status.success(),
        format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr)),
    ))
}

/// Assembles `ptx` with `ptxas` for `arch` and returns the resources of every function
/// in it: the kernel entries in ptxas's order, then the device functions.
///
/// Fails with [`BuildError::Ptxas`] (holding ptxas's own message) on any
/// assembler error. Spills are reported, not refused: see [`deny_spills`].
///
/// ```no_run
/// use sluice_builder::{check_ptx, toolchain, Arch};
/// let ptxas = toolchain::find_ptxas(&toolchain::Locations::default())?;
/// let report = check_ptx(&ptxas, "target/ptx/k.sm_90.ptx".as_ref(), Arch::SM_90)?;
/// assert!(report.iter().all(|f| !f.spills()));
/// # Ok::<(), sluice_builder::BuildError>(())
/// ```
///
/// # Errors
/// [`BuildError::Ptxas`], or [`BuildError::Io`] when ptxas does not start.
pub fn check_ptx(ptxas: &Path, ptx: &Path, arch: Arch) -> Result<Vec<FunctionResources>, BuildError> {
    let (ok, log) = run_ptxas(ptxas, ptx, arch)?;
    if !ok {
        return Err(BuildError::Ptxas { ptx: ptx.to_path_buf(), arch: arch.to_string(), log });
    }
    Ok(parse_ptxas_report(&log))
}

/// `Ok` unless `ptxas`, assembling `ptx` for `arch`, says it serialized warpgroup MMAs
/// (`C7510`, `C7515`): then [`BuildError::SerializedWgmma`] with its lines. A PTX without
/// `wgmma` never has them.
///
/// # Errors
/// [`BuildError::SerializedWgmma`], or [`BuildError::Io`] if `ptxas` does not start.
pub fn deny_wgmma_serialization(ptxas: &Path, ptx: &Path, arch: Arch) -> Result<(), BuildError> {
    let (_, log) = run_ptxas(ptxas, ptx, arch)?;
    let lines: Vec<String> =
        log.lines().filter(|l| l.contains("(C7510)") || l.contains("(C7515)")).map(str::to_string).collect();
    if lines.is_empty() {
        Ok(())
    } else {
        Err(BuildError::SerializedWgmma { ptx: ptx.to_path_buf(), arch: arch.to_string(), lines })
    }
}

/// `Ok` if no function of `report` spills, else [`BuildError::Spills`] naming each one and
/// `allow_command`, the command line that accepts them.
///
/// ```
/// use sluice_builder::{ptx::deny_spills, Arch, FunctionResources};
/// let fine = FunctionResources { name: "k".into(), registers: 12, ..Default::default() };
/// assert!(deny_spills("k.ptx".as_ref(), Arch::SM_90, &[fine.clone()], "--allow-spills").is_ok());
/// let spilling = FunctionResources { spill_store_bytes: 8, ..fine };
/// let err = deny_spills("k.ptx".as_ref(), Arch::SM_90, &[spilling], "cargo sluice check --allow-spills");
/// assert!(err.unwrap_err().to_string().contains("--allow-spills"));
/// ```
pub fn deny_spills(
    ptx: &Path,
    arch: Arch,
    report: &[FunctionResources],
    allow_command: &str,
) -> Result<(), BuildError> {
    let functions: Vec<(String, u32, u32)> = report
        .iter()
        .filter(|f| f.spills())
        .map(|f| (f.name.clone(), f.spill_store_bytes, f.spill_load_bytes))
        .collect();
    if functions.is_empty() {
        return Ok(());
    }
    Err(BuildError::Spills {
        ptx: ptx.to_path_buf(),
        arch: arch.to_string(),
        functions,
        fix: allow_command.to_string(),
    })
}

fn number_before(text: &str, unit: &str) -> Option<u32> {
    let at = text.find(unit)?;
    text[..at].split_whitespace().last()?.parse().ok()
}

/// Parses the `ptxas -v` report into one record per function (entries first, in
/// ptxas's order, then device functions in order of first appearance).
///
/// ptxas prints, per kernel, `Compiling entry function 'k'`, the kernel's `Function
/// properties` (stack frame, spills) and its `Used N registers` line; and, anywhere in the
/// log, once each, `Function properties for f` of every device function (`.func`) left in
/// the module.
///
/// ```
/// let log = "ptxas info    : Compiling entry function 'k' for 'sm_90'\n\
///            ptxas info    : Function properties for k\n\
///                0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n\
///            ptxas info    : Used 12 registers, used 0 barriers\n";
/// let r = sluice_builder::ptx::parse_ptxas_report(log);
/// assert_eq!((r[0].name.as_str(), r[0].registers), ("k", 12));
/// ```
pub fn parse_ptxas_report(log: &str) -> Vec<FunctionResources> {
    let mut out: Vec<FunctionResources> = Vec::new();
    let mut entry: Option<usize> = None; // the kernel whose section this is
    let mut pending: Option<usize> = None; // whose "bytes stack frame" line comes next
    for line in log.lines() {
        if let Some(rest) = line.split("Compiling entry function '").nth(1) {
            let name = rest.split('\'').next().unwrap_or("").to_string();
            out.push(FunctionResources { name, kind: FunctionKind::Entry, ..Default::default() });
            entry = Some(out.len() - 1);
            pending = None;
        } else if let Some(rest) = line.split("Function properties for ").nth(1) {
            let name = rest.trim();
            pending = match entry.filter(|&i| out[i].name == name) {
                Some(i) => Some(i),
                None => Some(match out.iter().position(|f| f.kind == FunctionKind::Function && f.name == name) {
                    Some(i) => i,
                    None => {
                        let kind = FunctionKind::Function;
                        out.push(FunctionResources { name: name.to_string(), kind, ..Default::default() });
                        out.len() - 1
                    }
                }),
            };
        } else if line.contains("bytes stack frame") {
            if let Some(f) = pending.map(|i| &mut out[i]) {
                f.stack_frame_bytes = f.stack_frame_bytes.max(number_before(line, "bytes stack frame").unwrap_or(0));
                f.spill_store_bytes = f.spill_store_bytes.max(number_before(line, "bytes spill stores").unwrap_or(0));
                f.spill_load_bytes = f.spill_load_bytes.max(number_before(line, "bytes spill loads").unwrap_or(0));
            }
            pending = None;
        } else if line.contains("Used") && line.contains("registers") {
            if let Some(k) = entry.map(|i| &mut out[i]) {
                k.registers = number_before(line, "registers").unwrap_or(0);
                k.shared_bytes = number_before(line, "bytes smem").unwrap_or(0);
            }
        }
    }
    // Entries first (ptxas's order), then device functions (order of first appearance).
    out.sort_by_key(|f| f.kind == FunctionKind::Function);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_entries_but_not_device_functions() {
        let ptx = "//\n.version 7.8\n.target sm_90\n.visible .entry a(\n\t.param .u64 a_param_0\n)\n{\n}\n\
                   .func (.param .b32 r) helper()\n{\n}\n.entry b()\n{\n}\n";
        assert_eq!(entries(ptx), ["a", "b"]);
    }

    #[test]
    fn lists_unresolved_libdevice_functions_once() {
        let ptx = ".extern .func  (.param .b32 func_retval0) __nv_expf\n(\n.param .b32 x\n);\n\
                   .extern .func  (.param .b32 func_retval0) __nv_expf\n.extern .func vprintf\n";
        assert_eq!(unresolved_libdevice_calls(ptx), ["__nv_expf"]);
        assert!(unresolved_libdevice_calls(".visible .func __nv_expf()").is_empty());
    }

    #[test]
    fn reads_filenames_from_cargo_json() {
        let line = r#"{"reason":"compiler-artifact","filenames":["/t/a b.ptx","/t/x\\y.rlib"],"fresh":true}"#;
        assert_eq!(json_strings_in_filenames(line), ["/t/a b.ptx", "/t/x\\y.rlib"]);
        assert!(json_strings_in_filenames(r#"{"reason":"build-finished"}"#).is_empty());
    }

    #[test]
    fn reads_string_fields_from_cargo_json() {
        let line = r#"{"reason":"compiler-artifact","package_id":"path+file:///p/k#my-k@0.1.0","target":{"kind":["cdylib"],"name":"my_k","src_path":"/p/k/src/lib.rs"}}"#;
        assert_eq!(json_string_field(line, "\"target\":{", "name").as_deref(), Some("my_k"));
        assert_eq!(json_string_field(line, "", "package_id").as_deref(), Some("path+file:///p/k#my-k@0.1.0"));
        assert_eq!(json_string_field(line, "", "missing"), None);
    }

    #[test]
    fn reads_dep_info_with_escaped_spaces() {
        let dir = std::env::temp_dir().join(format!("sluice-depinfo-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let d = dir.join("k.d");
        std::fs::write(
            &d,
            "/t/k.ptx: /src/a\\ b.rs /src/lib.rs /usr/lib/rustlib/src/rust/library/core/src/lib.rs\n\n/src/lib.rs:\n",
        )
        .unwrap();
        assert_eq!(dep_info_sources(&d), [PathBuf::from("/src/a b.rs"), PathBuf::from("/src/lib.rs")]);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn parses_a_ptxas_report() {
        let log = "ptxas info    : 0 bytes gmem\n\
ptxas info    : Compiling entry function 'tiled' for 'sm_90'\n\
ptxas info    : Function properties for tiled\n\
    8 bytes stack frame, 4 bytes spill stores, 12 bytes spill loads\n\
ptxas info    : Function properties for vprintf\n\
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n\
ptxas info    : Used 40 registers, used 1 barriers, 4096 bytes smem, 388 bytes cmem[0]\n\
ptxas info    : Compiling entry function 'fill' for 'sm_90'\n\
ptxas info    : Function properties for vprintf\n\
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n\
ptxas info    : Function properties for fill\n\
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n\
ptxas info    : Used 8 registers, used 0 barriers, 372 bytes cmem[0]\n";
        let r = parse_ptxas_report(log);
        assert_eq!(r.len(), 3, "{r:?}");
        assert_eq!(
            r[0],
            FunctionResources {
                name: "tiled".into(),
                kind: FunctionKind::Entry,
                registers: 40,
                shared_bytes: 4096,
                stack_frame_bytes: 8,
                spill_store_bytes: 4,
                spill_load_bytes: 12
            }
        );
        assert!(r[0].spills());
        assert_eq!((r[1].name.as_str(), r[1].registers, r[1].shared_bytes, r[1].spills()), ("fill", 8, 0, false));
        assert_eq!((r[2].name.as_str(), r[2].kind, r[2].spills()), ("vprintf", FunctionKind::Function, false));
    }

    /// The report of a kernel with a formatting panic path (ptxas 13, sm_90): the spills
    /// are in `core::fmt`'s device functions, printed after the kernel's own section.
    #[test]
    fn reports_spills_in_device_functions() {
        let log = "ptxas info    : 1098 bytes gmem\n\
ptxas info    : Compiling entry function 'vecadd' for 'sm_90'\n\
ptxas info    : Function properties for vecadd\n\
    216 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n\
ptxas info    : Used 56 registers, used 0 barriers, 216 bytes cumulative stack size\n\
ptxas info    : Compile time = 34.081 ms\n\
ptxas info    : Function properties for _RNvNvMsa_NtCs_4core3fmtNtB7_9Formatter12pad_integral12write_prefix\n\
    56 bytes stack frame, 52 bytes spill stores, 52 bytes spill loads\n\
ptxas info    : Function properties for _RNvNtCs_4core9panicking9panic_fmt\n\
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n\
ptxas info    : Compiling entry function 'saxpy' for 'sm_90'\n\
ptxas info    : Function properties for saxpy\n\
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n\
ptxas info    : Used 20 registers, used 0 barriers\n";
        let r = parse_ptxas_report(log);
        let names: Vec<(&str, FunctionKind)> = r.iter().map(|f| (f.name.as_str(), f.kind)).collect();
        assert_eq!(names[0], ("vecadd", FunctionKind::Entry));
        assert_eq!(names[1], ("saxpy", FunctionKind::Entry));
        assert_eq!(names.len(), 4);
        assert!(r[2].spills() && r[2].kind == FunctionKind::Function, "{:?}", r[2]);
        assert_eq!((r[0].registers, r[0].stack_frame_bytes, r[0].spills()), (56, 216, false));
        let err = deny_spills(Path::new("k.ptx"), Arch::SM_90, &r, "cargo xtask check-ptx --allow-spills").unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains("write_prefix: 52 bytes spill stores") && msg.contains("--allow-spills"), "{msg}");
    }
}
