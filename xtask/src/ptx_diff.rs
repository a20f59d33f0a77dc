//! `cargo xtask ptx-snapshot DIR` and `cargo xtask ptx-diff BEFORE AFTER`: the PTX of every
//! kernel module of the workspace, and a diff of two such snapshots that proves a refactoring
//! of the device std left every kernel's instructions alone.
//!
//! The snapshot builds, for sm_90 and sm_80: `gpu-kernels` (sluice's own kernels), `ports`'
//! kernel crate (Rust-CUDA kernels on `cuda_std`), `cuda-std`'s test kernels (every API of
//! `cuda_std` and the newer device std) and the kernels of the `cargo sluice new` template.
//!
//! The diff compares the files of the same name line by line, after one normalisation of
//! names that a move of device-std code changes without changing any instruction. Each is
//! renamed consistently through the whole file (the first name seen becomes `#0`, the next
//! `#1`, ...), so two files that differ only in them are the same program:
//!
//! * `sluice_shared_<hash>` (a `shared_array!`/`shared_static!` variable) and the `_Ky<hash>_`
//!   const argument of the mangled `shared::imp::declare::<T, HASH>` that declares it: the
//!   hash is of the macro's module path, file, line and column;
//! * `anon_$_<hash>_$_<n>`, the private string constants, whose hash names the codegen unit;
//! * inside those string constants, `FILE:LINE:COL` of a `dassert!`/`dfail!` message
//!   (`kernel failed at FILE:LINE:COL: ...`), and with it the array's length — also
//!   where the code passes that length as an immediate (`dfail!` hands its message to
//!   the fault record as a slice): an integer operand may differ only as the length of
//!   a string constant whose site changed, the k-th such string before against the
//!   k-th after.
//!
//! Comments (`// ...`, LLVM's block labels with mangled names, `// begin inline asm`) are
//! dropped. Every renaming is listed (`before -> after`) so that the report says exactly
//! which names changed.
//!
//! The files are then compared function by function. One function may differ beyond
//! names: `sluice_device::io::imp::record_fault`, the cold path that copies a failing
//! kernel's `dfail!` message into the fault record. LLVM specialises its byte-copy loop
//! to the lengths of the messages it can receive, and a message names its site, whose
//! path a move changes (`shared.rs` → `shared/mod.rs`): its unrolled loop and constants
//! follow. The report says so and prints the lines; any other difference fails the diff.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use sluice_builder::toolchain::Toolchain;
use sluice_builder::{Arch, Builder};

use crate::{locations, root, target_dir, Result};

/// The kernel modules of the workspace: (snapshot name, kernel crate folder).
fn modules() -> Result<Vec<(&'static str, PathBuf)>> {
    Ok(vec![
        ("gpu-kernels", root().join("gpu-kernels")),
        ("ports-kernels", root().join("ports/kernels")),
        ("cuda-std-compat", cuda_std_compat_crate()?),
        ("template", template_crate()?),
    ])
}

/// `cuda-std`'s test kernels, as `tests/ptx.rs` builds them: a standalone crate with
/// absolute path dependencies and the workspace's lockfile.
fn cuda_std_compat_crate() -> Result<PathBuf> {
    let dir = target_dir().join("ptx-snapshot/crates/cuda_std_compat_kernels");
    let ws = root();
    let manifest = format!(
        "[package]\nname = \"cuda_std_compat_kernels\"\nversion = \"0.0.0\"\nedition = \"2024\"\n\n\
         [dependencies]\ncuda_std = {{ package = \"sluice-cuda-std\", path = {compat:?} }}\n\
         sluice-device = {{ path = {device:?} }}\n\
         glam = {{ version = \"0.30\", default-features = false, features = [\"libm\", \"cuda\"] }}\n\n\
         [workspace]\n\n[profile.release]\npanic = \"abort\"\n[profile.dev]\npanic = \"abort\"\n",
        compat = ws.join("gpu-kernels/cuda-std"),
        device = ws.join("gpu-kernels/device"),
    );
    let lib = read(&ws.join("gpu-kernels/cuda-std/tests/kernels/src/lib.rs"))?;
    write_crate(&dir, &manifest, &lib)?;
    std::fs::copy(ws.join("Cargo.lock"), dir.join("Cargo.lock")).map_err(|e| format!("copying Cargo.lock: {e}"))?;
    Ok(dir)
}

/// The kernel crate of `cargo sluice new demo`, depending on this checkout's device std.
fn template_crate() -> Result<PathBuf> {
    let dir = target_dir().join("ptx-snapshot/crates/demo_kernels");
    let manifest = format!(
        "[package]\nname = \"demo_kernels\"\nversion = \"0.1.0\"\nedition = \"2021\"\npublish = false\n\n\
         [dependencies]\nsluice-device = {{ path = {device:?} }}\n\n[workspace]\n",
        device = root().join("gpu-kernels/device"),
    );
    let lib = read(&root().join("cargo-sluice/template/kernels/src/lib.rs.tmpl"))?.replace("{{name}}", "demo");
    write_crate(&dir, &manifest, &lib)?;
    Ok(dir)
}

fn write_crate(dir: &Path, manifest: &str, lib: &str) -> Result {
    std::fs::create_dir_all(dir.join("src")).map_err(|e| format!("creating {}: {e}", dir.display()))?;
    for (path, text) in [(dir.join("Cargo.toml"), manifest), (dir.join("src/lib.rs"), lib)] {
        if std::fs::read_to_string(&path).ok().as_deref() != Some(text) {
            std::fs::write(&path, text).map_err(|e| format!("writing {}: {e}", path.display()))?;
        }
    }
    Ok(())
}

fn read(path: &Path) -> Result<String> {
    std::fs::read_to_string(path).map_err(|e| format!("reading {}: {e}", path.display()))
}

/// `ptx-snapshot DIR`: writes `DIR/<module>.<arch>.ptx` for every kernel module and arch.
pub fn snapshot(args: &[String]) -> Result {
    let [dir] = args else { return Err("usage: cargo xtask ptx-snapshot DIR".into()) };
    let dir = PathBuf::from(dir);
    std::fs::create_dir_all(&dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
    let tc = Toolchain::discover(&locations()).map_err(|e| e.to_string())?;
    for (name, crate_dir) in modules()? {
        for arch in [Arch::SM_90, Arch::SM_80] {
            let out = Builder::new(&crate_dir)
                .arch(arch)
                .target_dir(target_dir().join("ptx-snapshot/build").join(format!("{name}-{arch}")))
                .build_with(&tc)
                .map_err(|e| format!("{name} for {arch}: {e}"))?;
            let dest = dir.join(format!("{name}.{arch}.ptx"));
            std::fs::copy(&out.ptx, &dest).map_err(|e| format!("copying to {}: {e}", dest.display()))?;
            println!("{} ({} kernels)", dest.display(), out.kernels.len());
        }
    }
    Ok(())
}

/// `ptx-diff BEFORE AFTER`: the normalised diff of two snapshots; fails on any difference.
pub fn diff(args: &[String]) -> Result {
    let [before, after] = args else { return Err("usage: cargo xtask ptx-diff BEFORE AFTER".into()) };
    let (before, after) = (PathBuf::from(before), PathBuf::from(after));
    let mut names: Vec<String> = std::fs::read_dir(&before)
        .map_err(|e| format!("reading {}: {e}", before.display()))?
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".ptx"))
        .collect();
    names.sort();
    if names.is_empty() {
        return Err(format!("no .ptx file in {}", before.display()));
    }
    let mut failed = Vec::new();
    for name in &names {
        let a = read(&before.join(name))?;
        let b = read(&after.join(name))?;
        if a == b {
            println!("{name}: identical");
            continue;
        }
        let (na, ra, lens_a) = normalise(&a);
        let (nb, rb, lens_b) = normalise(&b);
        let lengths: Vec<(u64, u64)> =
            lens_a.iter().zip(&lens_b).filter(|(x, y)| x != y).map(|(&x, &y)| (x, y)).collect();
        let renamed: Vec<String> = ra
            .iter()
            .zip(&rb)
            .filter(|(x, y)| x != y)
            .map(|(x, y)| format!("    {x}\n    -> {y}"))
            .chain((ra.len() != rb.len()).then(|| format!("    {} names before, {} after", ra.len(), rb.len())))
            .collect();
        let (fa, fb) = (functions(&na), functions(&nb));
        if fa.len() != fb.len() {
            println!("{name}: DIFFERENT: {} functions before, {} after", fa.len(), fb.len());
            failed.push(name.clone());
            continue;
        }
        let mut immediates = 0;
        let mut specialised = Vec::new();
        let mut different = Vec::new();
        for ((title, a), (_, b)) in fa.iter().zip(&fb) {
            let (la, lb): (Vec<&str>, Vec<&str>) = (a.lines().collect(), b.lines().collect());
            let mut lines: Vec<usize> = Vec::new();
            for i in 0..la.len().max(lb.len()) {
                match (la.get(i), lb.get(i)) {
                    (Some(x), Some(y)) if x != y && differ_by_lengths(x, y, &lengths) => immediates += 1,
                    (x, y) if x != y => lines.push(i),
                    _ => {}
                }
            }
            if lines.is_empty() {
                continue;
            }
            let shown: Vec<String> = lines
                .iter()
                .take(12)
                .map(|&i| {
                    format!("    - {}\n    + {}", la.get(i).unwrap_or(&"").trim(), lb.get(i).unwrap_or(&"").trim())
                })
                .collect();
            let report = format!("  in {title} ({} lines):\n{}", lines.len(), shown.join("\n"));
            if title.contains("record_fault") {
                specialised.push(report);
            } else {
                different.push(report);
            }
        }
        let names = if immediates > 0 {
            format!(
                "{} names differ (and {immediates} operands that are those strings' lengths, {lengths:?})",
                renamed.len()
            )
        } else {
            format!("{} names differ", renamed.len())
        };
        if !different.is_empty() {
            println!("{name}: DIFFERENT:\n{}", different.join("\n"));
            failed.push(name.clone());
        } else if specialised.is_empty() {
            println!("{name}: same instructions; {names}:\n{}", renamed.join("\n"));
        } else {
            println!(
                "{name}: same instructions but in record_fault, whose copy loop LLVM specialises to the \
                 messages' lengths, which changed with their sites; {names}:\n{}\n{}",
                renamed.join("\n"),
                specialised.join("\n")
            );
        }
    }
    if failed.is_empty() {
        println!("\nevery kernel's PTX is the same ({} files)", names.len());
        Ok(())
    } else {
        Err(format!("the PTX differs in {}", failed.join(", ")))
    }
}

/// The PTX with the names listed in the module docs renamed by order of first appearance,
/// the original of each renamed name or string, in that order, and the array length of
/// every string constant, in order.
fn normalise(ptx: &str) -> (String, Vec<String>, Vec<u64>) {
    let mut seen: BTreeMap<String, String> = BTreeMap::new();
    let mut order: Vec<String> = Vec::new();
    let mut lengths = Vec::new();
    let mut out = String::with_capacity(ptx.len());
    for line in ptx.lines() {
        let line = strip_comment(line);
        let line = match string_constant(line) {
            Some((head, text, len)) => {
                lengths.push(len);
                let site = site_free(&text);
                if site != text {
                    order.push(text.escape_debug().to_string());
                }
                format!("{head}[] = {:?};", site)
            }
            None => line.to_string(),
        };
        out.push_str(&rename(&line, &mut seen, &mut order));
        out.push('\n');
    }
    (out, order, lengths)
}

/// The PTX split into functions and what lies between them: `(title, text)`, a function
/// from its opening brace to its closing one, titled by its `.func`/`.entry` line.
fn functions(ptx: &str) -> Vec<(String, String)> {
    let outside = || ("(outside functions)".to_string(), String::new());
    let mut out = vec![outside()];
    let mut header = String::new();
    let mut inside = false;
    for line in ptx.lines() {
        let head = line.trim_start_matches(".visible ").trim_start_matches(".weak ");
        if head.starts_with(".func") || head.starts_with(".entry") {
            header = line.to_string();
        }
        if !inside && line == "{" {
            out.push((header.clone(), String::new()));
            inside = true;
        }
        let last = out.last_mut().expect("a chunk");
        last.1.push_str(line);
        last.1.push('\n');
        if inside && line == "}" {
            inside = false;
            out.push(outside());
        }
    }
    out
}

/// `line` without its `//` comment.
fn strip_comment(line: &str) -> &str {
    match line.find("//") {
        Some(i) => line[..i].trim_end(),
        None => line,
    }
}

/// `(".global .align 1 .b8 NAME", text, array length)` of a byte-string constant line.
fn string_constant(line: &str) -> Option<(String, String, u64)> {
    let rest = line.strip_prefix(".global .align 1 .b8 ")?;
    let (name, rest) = rest.split_once('[')?;
    let (len, bytes) = rest.split_once("] = {")?;
    let bytes = bytes.strip_suffix("};")?;
    let b: Option<Vec<u8>> = bytes.split(',').map(|x| x.trim().parse().ok()).collect();
    Some((format!(".global .align 1 .b8 {name}"), String::from_utf8_lossy(&b?).into_owned(), len.parse().ok()?))
}

/// Whether lines `a` and `b` differ only in integer operands, each pair of which is
/// the (before, after) length of a string constant whose site changed.
fn differ_by_lengths(a: &str, b: &str, lengths: &[(u64, u64)]) -> bool {
    let tokens = |s: &str| -> Vec<String> {
        let mut out = Vec::new();
        let mut cur = String::new();
        for ch in s.chars() {
            if ch.is_ascii_alphanumeric() || ch == '_' || ch == '%' || ch == '$' || ch == '.' {
                cur.push(ch);
            } else {
                if !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
                out.push(ch.to_string());
            }
        }
        if !cur.is_empty() {
            out.push(cur);
        }
        out
    };
    let (ta, tb) = (tokens(a), tokens(b));
    ta.len() == tb.len()
        && ta.iter().zip(&tb).all(|(x, y)| {
            x == y
                || match (x.parse::<u64>(), y.parse::<u64>()) {
                    (Ok(x), Ok(y)) => lengths.contains(&(x, y)),
                    _ => false,
                }
        })
}

/// `text` with the `FILE:LINE:COL` of `kernel failed at FILE:LINE:COL: ` replaced by `<site>`.
fn site_free(text: &str) -> String {
    const AT: &str = "kernel failed at ";
    match text.find(AT) {
        Some(i) => {
            let rest = &text[i + AT.len()..];
            match rest.find(": ") {
                Some(j) => format!("{}{AT}<site>{}", &text[..i], &rest[j..]),
                None => text.to_string(),
            }
        }
        None => text.to_string(),
    }
}

/// Replaces the hashed names of `line` by `#k`, in order of first appearance in the file.
fn rename(line: &str, seen: &mut BTreeMap<String, String>, order: &mut Vec<String>) -> String {
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    loop {
        let hit = [("sluice_shared_", Shape::Digits), ("anon_$_", Shape::Anon), ("_Ky", Shape::HexThen('_'))]
            .iter()
            .filter_map(|&(prefix, shape)| {
                let i = rest.find(prefix)?;
                let len = shape.len(&rest[i + prefix.len()..])?;
                Some((i, prefix, len))
            })
            .min_by_key(|h| h.0);
        let Some((i, prefix, len)) = hit else {
            out.push_str(rest);
            return out;
        };
        let name = &rest[i..i + prefix.len() + len];
        let n = seen.len();
        let id = seen
            .entry(name.to_string())
            .or_insert_with(|| {
                order.push(name.to_string());
                format!("{prefix}#{n}")
            })
            .clone();
        out.push_str(&rest[..i]);
        out.push_str(&id);
        rest = &rest[i + name.len()..];
    }
}

/// What follows a hashed name's prefix.
#[derive(Clone, Copy)]
enum Shape {
    /// Decimal digits (`sluice_shared_1234`).
    Digits,
    /// `<32 hex>_$_<digits>` (`anon_$_…_$_3`).
    Anon,
    /// Hex digits, then this character (kept outside the name).
    HexThen(char),
}

impl Shape {
    /// The length of the name's tail at the start of `s`, if `s` has this shape.
    fn len(self, s: &str) -> Option<usize> {
        match self {
            Shape::Digits => Some(s.bytes().take_while(u8::is_ascii_digit).count()).filter(|&n| n > 0),
            Shape::Anon => {
                let hex = s.bytes().take_while(u8::is_ascii_hexdigit).count();
                let tail = s[hex..].strip_prefix("_$_")?;
                let digits = tail.bytes().take_while(u8::is_ascii_digit).count();
                (hex == 32 && digits > 0).then_some(hex + 3 + digits)
            }
            Shape::HexThen(end) => {
                let hex = s.bytes().take_while(u8::is_ascii_hexdigit).count();
                (hex >= 8 && s[hex..].starts_with(end)).then_some(hex)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashed_names_and_sites_are_renamed_consistently() {
        let a = ".global .align 1 .b8 anon_$_0123456789abcdef0123456789abcdef_$_0[5] = {107, 101, 114, 110, 0};\n\
                 mov.u32 %r1, sluice_shared_42; call _RINvNtNtCsx_13sluice_device6shared3imp7declareAmj2_Ky896d2926e3c70e4f_EB6_;\n\
                 mov.u32 %r2, sluice_shared_42;";
        let b = a.replace("42", "77").replace("896d2926e3c70e4f", "0011223344556677");
        let (na, ra, _) = normalise(a);
        let (nb, rb, _) = normalise(&b);
        assert_eq!(na, nb);
        assert_eq!(ra.len(), 3);
        assert_ne!(ra, rb);
        assert!(!normalise(&a.replace("%r2", "%r3")).0.eq(&na));
    }

    #[test]
    fn only_the_lengths_of_moved_strings_may_differ_as_operands() {
        let lengths = [(92, 96)];
        assert!(differ_by_lengths("\tst.param.b64 \t[param1], 92;", "\tst.param.b64 \t[param1], 96;", &lengths));
        assert!(!differ_by_lengths("\tst.param.b64 \t[param1], 92;", "\tst.param.b64 \t[param1], 97;", &lengths));
        assert!(!differ_by_lengths("\tst.param.b64 \t[param2], 92;", "\tst.param.b64 \t[param1], 96;", &lengths));
        assert!(!differ_by_lengths("\tadd.s32 \t%r1, %r2, 92;", "\tadd.s32 \t%r1, %r2, 96, 1;", &lengths));
    }

    #[test]
    fn assertion_sites_are_ignored_in_strings() {
        assert_eq!(
            site_free("kernel failed at gpu-kernels/device/src/shared.rs:838:5: shared memory index out of bounds\n"),
            "kernel failed at <site>: shared memory index out of bounds\n"
        );
        assert_eq!(site_free("tag %u\n"), "tag %u\n");
    }
}
