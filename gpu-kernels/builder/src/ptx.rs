//! Reading PTX and cargo's outputs: kernel entries, unresolved calls, dep-info,
//! and `ptxas` resource reports.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::error::{io, BuildError};
use crate::Arch;

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

/// The source files listed in a cargo/rustc dep-info (`.d`) file, skipping the
/// standard library's (they come from the toolchain, not the project).
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

/// One kernel's resources as `ptxas -v` reports them.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct KernelResources {
    /// The entry name.
    pub name: String,
    /// Registers per thread.
    pub registers: u32,
    /// Static shared memory per block, bytes.
    pub shared_bytes: u32,
    /// Stack frame per thread, bytes.
    pub stack_frame_bytes: u32,
    /// Bytes spilled to local memory (stores).
    pub spill_store_bytes: u32,
    /// Bytes reloaded from local memory.
    pub spill_load_bytes: u32,
}

impl KernelResources {
    /// Whether the kernel spills registers to local memory.
    pub fn spills(&self) -> bool {
        self.spill_store_bytes > 0 || self.spill_load_bytes > 0
    }
}

/// Assembles `ptx` with `ptxas` for `arch` and returns each kernel's resources.
///
/// Fails with [`BuildError::Ptxas`] (holding ptxas's own message) on any
/// assembler error.
pub fn check_ptx(ptxas: &Path, ptx: &Path, arch: Arch) -> Result<Vec<KernelResources>, BuildError> {
    let out = Command::new(ptxas)
        .arg(format!("-arch={arch}"))
        .args(["-v", "-O3", "-o", "/dev/null"])
        .arg(ptx)
        .output()
        .map_err(io(format!("starting {}", ptxas.display())))?;
    let log = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    if !out.status.success() {
        return Err(BuildError::Ptxas { ptx: ptx.to_path_buf(), arch: arch.to_string(), log });
    }
    Ok(parse_ptxas_report(&log))
}

fn number_before(text: &str, unit: &str) -> Option<u32> {
    let at = text.find(unit)?;
    text[..at].split_whitespace().last()?.parse().ok()
}

/// Parses the `ptxas -v` report.
pub fn parse_ptxas_report(log: &str) -> Vec<KernelResources> {
    let mut out: Vec<KernelResources> = Vec::new();
    // ptxas also prints "Function properties for <callee>" (vprintf, helpers)
    // inside a kernel's section: only the kernel's own block counts.
    let mut properties_of_kernel = false;
    for line in log.lines() {
        if let Some(rest) = line.split("Compiling entry function '").nth(1) {
            let name = rest.split('\'').next().unwrap_or("").to_string();
            out.push(KernelResources { name, ..Default::default() });
            properties_of_kernel = false;
            continue;
        }
        let Some(k) = out.last_mut() else { continue };
        if let Some(rest) = line.split("Function properties for ").nth(1) {
            properties_of_kernel = rest.trim() == k.name;
        } else if line.contains("bytes stack frame") {
            if properties_of_kernel {
                k.stack_frame_bytes = number_before(line, "bytes stack frame").unwrap_or(0);
                k.spill_store_bytes = number_before(line, "bytes spill stores").unwrap_or(0);
                k.spill_load_bytes = number_before(line, "bytes spill loads").unwrap_or(0);
            }
            properties_of_kernel = false;
        } else if line.contains("Used") && line.contains("registers") {
            k.registers = number_before(line, "registers").unwrap_or(0);
            k.shared_bytes = number_before(line, "bytes smem").unwrap_or(0);
        }
    }
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
    fn reads_dep_info_with_escaped_spaces() {
        let dir = std::env::temp_dir().join(format!("sluice-depinfo-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let d = dir.join("k.d");
        std::fs::write(&d, "/t/k.ptx: /src/a\\ b.rs /src/lib.rs /usr/lib/rustlib/src/rust/library/core/src/lib.rs\n\n/src/lib.rs:\n").unwrap();
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
        assert_eq!(r.len(), 2);
        assert_eq!(
            r[0],
            KernelResources { name: "tiled".into(), registers: 40, shared_bytes: 4096, stack_frame_bytes: 8, spill_store_bytes: 4, spill_load_bytes: 12 }
        );
        assert!(r[0].spills());
        assert_eq!((r[1].registers, r[1].shared_bytes, r[1].spills()), (8, 0, false));
    }
}
