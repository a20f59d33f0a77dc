//! Repository policy, checked as ordinary tests (they run everywhere, no GPU needed).
//!
//! * Rule 6: no device-wide synchronization — the context/device synchronize calls must
//!   not appear in the library (`host/src`, `src`), nor the synchronous device allocator
//!   (`cuMemFree` waits for the whole device; `cuMemAlloc` can serialise streams): device
//!   memory is stream-ordered (`cuMemAllocFromPoolAsync` / `cuMemFreeAsync`).
//! * Every `unsafe { ... }` block in the library, the kernels, the examples and `ports/` carries its
//!   proof: a `// SAFETY:` comment just above it (the comment block ending on the line
//!   before, or on the same line).
//! * The host crate is in layers: each file of `host/src` imports only from the files
//!   below it in [`HOST_LAYERS`] (no import cycle), and names the crate's items through
//!   their module, not through the crate root's re-exports (which would hide the layer).

use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

fn files(dirs: &[&str]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for d in dirs {
        rust_files(&root().join(d), &mut out);
    }
    assert!(!out.is_empty(), "no sources found under {dirs:?}");
    out
}

/// The spellings of a device- or context-wide synchronize, in the driver API, the runtime
/// API and cudarc's wrappers.
const FORBIDDEN: &[&str] = &[
    "cuCtxSynchronize",
    "cudaDeviceSynchronize",
    "cudaThreadSynchronize",
    "ctx::synchronize",
    "ctx_synchronize",
    "device_synchronize",
    "synchronize_device",
    "synchronize_context",
];

#[test]
fn no_device_wide_synchronization_in_the_library() {
    let mut hits = Vec::new();
    for f in files(&["host/src", "src"]) {
        let text = std::fs::read_to_string(&f).expect("readable source");
        for (i, line) in text.lines().enumerate() {
            for word in FORBIDDEN {
                if line.contains(word) {
                    hits.push(format!("{}:{}: `{word}`", f.display(), i + 1));
                }
            }
        }
    }
    assert!(
        hits.is_empty(),
        "rule 6 (DESIGN.md): no device-wide synchronization in the library. Found:\n{}\n\
         fix: wait on one lane (cuStreamSynchronize) or one fence (cuEventSynchronize / cuStreamWaitEvent) instead",
        hits.join("\n")
    );
}

/// The spellings of the synchronous device allocator, in the driver API, the runtime API
/// and cudarc's wrappers. (The stream-ordered calls — `cuMemAllocAsync`,
/// `cuMemAllocFromPoolAsync`, `cuMemFreeAsync` — and pinned host memory's `cuMemFreeHost`
/// do not match.)
const FORBIDDEN_ALLOCATOR: &[&str] = &[
    "cuMemAlloc(",
    "cuMemAlloc_v2",
    "cuMemAllocPitch",
    "cuMemAllocManaged",
    "cuMemFree(",
    "cuMemFree_v2",
    "cudaMalloc(",
    "cudaFree(",
    "malloc_sync",
    "free_sync",
];

#[test]
fn no_device_synchronizing_allocation_in_the_library() {
    let mut hits = Vec::new();
    for f in files(&["host/src", "src"]) {
        let text = std::fs::read_to_string(&f).expect("readable source");
        for (i, line) in text.lines().enumerate() {
            for word in FORBIDDEN_ALLOCATOR {
                if line.contains(word) {
                    hits.push(format!("{}:{}: `{word}`", f.display(), i + 1));
                }
            }
        }
    }
    assert!(
        hits.is_empty(),
        "rule 6 (DESIGN.md): `cuMemFree` synchronizes the whole device and `cuMemAlloc` can serialise \
         streams. Found:\n{}\n\
         fix: allocate with the Gpu's stream-ordered allocator (`Gpu::alloc_device`: cuMemAllocFromPoolAsync \
         on the allocator stream) and free with `Gpu::free_device` (cuMemFreeAsync)",
        hits.join("\n")
    );
}

#[test]
fn the_allocator_check_lets_stream_ordered_calls_through() {
    let hit = |line: &str| FORBIDDEN_ALLOCATOR.iter().any(|w| line.contains(w));
    assert!(hit("check(unsafe { sys::cuMemFree_v2(ptr) })"));
    assert!(hit("sys::cuMemAlloc_v2(&mut p, bytes)"));
    assert!(hit("result::free_sync(ptr)"));
    assert!(!hit("sys::cuMemFreeAsync(ptr, stream.0)"));
    assert!(!hit("sys::cuMemAllocFromPoolAsync(&mut p, bytes, pool.0, stream.0)"));
    assert!(!hit("sys::cuMemFreeHost(ptr.0)"));
}

/// Whether `line` opens an unsafe block (not `unsafe fn`, `unsafe impl`, or a doc/comment).
fn opens_unsafe_block(line: &str) -> bool {
    let code = line.trim_start();
    if code.starts_with("//") {
        return false;
    }
    let code = code.split("//").next().unwrap_or("");
    let Some(at) = code.find("unsafe {") else { return false };
    // Inside a string literal (kernel sources in tests, format strings in macros): an odd
    // number of quotes before it, or the escapes only strings hold.
    let quotes = code[..at].matches('"').count() - code[..at].matches("\\\"").count();
    quotes.is_multiple_of(2) && !code.contains("\\n") && !code.contains("{{")
}

#[test]
fn every_unsafe_block_has_a_safety_comment() {
    let mut missing = Vec::new();
    for f in files(&["host/src", "src", "examples", "gpu-kernels", "ports"]) {
        if f.components().any(|c| c.as_os_str() == "target") {
            continue;
        }
        let text = std::fs::read_to_string(&f).expect("readable source");
        // Kernel crates that are only compiled and assembled, never launched (API sweeps),
        // may give one crate-level proof for all their blocks.
        if text.contains("//! SAFETY (every `unsafe` block below):") {
            continue;
        }
        let lines: Vec<&str> = text.lines().collect();
        for (i, line) in lines.iter().enumerate() {
            if !opens_unsafe_block(line) || line.contains("// SAFETY:") {
                continue;
            }
            // Walk up over the comment block (and attributes) directly above.
            let mut j = i;
            let mut found = false;
            while j > 0 {
                j -= 1;
                let above = lines[j].trim_start();
                if above.starts_with("// ") || above == "//" || above.starts_with("#[") {
                    if above.starts_with("// SAFETY:") {
                        found = true;
                        break;
                    }
                    continue;
                }
                // The block continues a statement begun above (`let x =`, `f(`, `a,`):
                // the comment belongs above the statement's first line.
                if above.ends_with('=') || above.ends_with('(') || above.ends_with(',') {
                    continue;
                }
                break;
            }
            if !found {
                missing.push(format!("{}:{}: {}", f.display(), i + 1, line.trim()));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "every `unsafe {{}}` block needs a `// SAFETY:` comment just above it naming the invariant it \
         relies on and who upholds it (STYLE.md). Missing:\n{}",
        missing.join("\n")
    );
}

#[test]
fn the_checker_recognises_blocks_and_skips_docs() {
    assert!(opens_unsafe_block("    let x = unsafe { f() };"));
    assert!(!opens_unsafe_block("/// let x = unsafe { f() };"));
    assert!(!opens_unsafe_block("unsafe impl Send for X {}"));
    assert!(!opens_unsafe_block("pub unsafe fn f() {"));
    assert!(!opens_unsafe_block(r#"  "fn k(out: *mut f32) { unsafe { *out = 0.0 } }\n""#));
    assert!(!opens_unsafe_block(r#"  through `unsafe {{ Kernel::of::<{kernel}>(ptx) }}`"#));
}

/// The files of `host/src`, lowest layer first: each may use only the ones before it.
const HOST_LAYERS: &[&str] = &[
    "driver", "nccl", "error", "cpu", "handle", "ptx", "span", "module", "plan", "device", "trace", "capture",
    "submit", "matrix", "pinned", "view", "kernel", "lane", "launch", "fence", "copy", "scope", "graph", "multi",
    "lib",
];

/// The `crate::` paths a line of code names: `(module or item, is_module)`.
fn crate_paths(line: &str) -> Vec<(String, bool)> {
    let code = line.trim_start();
    if code.starts_with("//") {
        return Vec::new();
    }
    let code = code.split(" //").next().unwrap_or("");
    let mut out = Vec::new();
    let mut rest = code;
    while let Some(at) = rest.find("crate::") {
        let before = rest[..at].chars().next_back();
        rest = &rest[at + "crate::".len()..];
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '$') {
            continue; // `$crate::` in a macro, or part of a longer word
        }
        if let Some(group) = rest.strip_prefix('{') {
            // `use crate::{a, b::C}`: every first segment in the group.
            let inner = &group[..group.find('}').unwrap_or(group.len())];
            for item in inner.split(',') {
                let name: String = item.trim().chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
                if !name.is_empty() {
                    let is_module = name.starts_with(|c: char| c.is_lowercase());
                    out.push((name, is_module));
                }
            }
            continue;
        }
        let name: String = rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
        if !name.is_empty() {
            let is_module = name.starts_with(|c: char| c.is_lowercase());
            out.push((name, is_module));
        }
    }
    out
}

#[test]
fn host_modules_import_only_lower_layers() {
    let mut wrong = Vec::new();
    for f in files(&["host/src"]) {
        let module = f.file_stem().and_then(|s| s.to_str()).expect("a file name").to_string();
        let Some(mine) = HOST_LAYERS.iter().position(|m| *m == module) else {
            wrong.push(format!("{}: not in HOST_LAYERS (add it where it belongs)", f.display()));
            continue;
        };
        let text = std::fs::read_to_string(&f).expect("readable source");
        for (i, line) in text.lines().enumerate() {
            for (name, is_module) in crate_paths(line) {
                let at = format!("{}:{}", f.display(), i + 1);
                if !is_module {
                    if module != "lib" {
                        wrong.push(format!("{at}: `crate::{name}` goes through the crate root: name its module"));
                    }
                    continue;
                }
                match HOST_LAYERS.iter().position(|m| *m == name) {
                    Some(theirs) if theirs < mine => {}
                    Some(_) => wrong.push(format!("{at}: `{module}` uses `{name}`, which is not below it")),
                    None => wrong.push(format!("{at}: `crate::{name}` is not a module in HOST_LAYERS")),
                }
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "the host crate is in layers (host/src/lib.rs, # Layers): a file uses only files below it, so that \
         there is no import cycle. Found:\n{}\nfix: move the code to the layer it belongs to, or the shared \
         piece down to a lower file",
        wrong.join("\n")
    );
}

#[test]
fn the_layer_check_reads_paths() {
    assert_eq!(crate_paths("use crate::device::{lock, Gpu};"), [("device".to_string(), true)]);
    assert_eq!(
        crate_paths("use crate::{error::Error, span::Span};"),
        [("error".to_string(), true), ("span".to_string(), true)]
    );
    assert_eq!(crate_paths("    x: crate::Gpu,"), [("Gpu".to_string(), false)]);
    assert!(crate_paths("/// see [`Gpu`](crate::Gpu)").is_empty());
    assert!(crate_paths("    pub(crate) fn span(&self) -> $crate::span::Span {").is_empty());
}

/// `docs/compile-errors.md` shows every compile-fail case next to its fix: each case of
/// `tests/ui/<area>/<case>.rs` is named there by its path, and every case the page names
/// still exists (the page's snippets themselves are doctests of the `sluice` crate).
#[test]
fn every_compile_fail_case_is_on_the_compile_errors_page() {
    let page_path = root().join("docs/compile-errors.md");
    let page = std::fs::read_to_string(&page_path).expect("docs/compile-errors.md is readable");
    let cases: Vec<String> = files(&["tests/ui"])
        .iter()
        .map(|f| {
            let rel = f.strip_prefix(root()).expect("a case under the repository");
            rel.components().map(|c| c.as_os_str().to_string_lossy()).collect::<Vec<_>>().join("/")
        })
        .collect();
    let missing: Vec<&String> = cases.iter().filter(|c| !page.contains(c.as_str())).collect();
    let named: std::collections::BTreeSet<&str> = page
        .split(|c: char| c.is_whitespace() || "`()[]:,".contains(c))
        .filter(|w| w.starts_with("tests/ui/") && w.ends_with(".rs"))
        .filter(|w| w.chars().all(|c| c.is_ascii_alphanumeric() || "_-./".contains(c))) // not `<area>/<case>.rs`
        .collect();
    let gone: Vec<&&str> = named.iter().filter(|w| !cases.iter().any(|c| c == *w)).collect();
    assert!(
        missing.is_empty() && gone.is_empty(),
        "docs/compile-errors.md shows every compile-fail case of tests/ui next to its fix.\n\
         cases not on the page: {missing:?}\ncases on the page that no longer exist: {gone:?}\n\
         fix: add a section for each new case (what was tried, the failing code as a \
         `rust,compile_fail,E….` block, the error from its .stderr, why sluice refuses it, the fix \
         as a `rust` block, and a row in the table at the top); remove or rename the sections of \
         cases that were removed or renamed"
    );
}

/// The messages quoted on `docs/compile-errors.md` are rustc's words: every line of a
/// section's `text` block is a line of its case's blessed `.stderr` (trimmed quotes may
/// leave lines out, never change one), so a re-bless that changes a message shows here.
#[test]
fn the_compile_errors_page_quotes_the_blessed_messages() {
    let page =
        std::fs::read_to_string(root().join("docs/compile-errors.md")).expect("docs/compile-errors.md is readable");
    let mut stale = Vec::new();
    for section in page.split("\n### ").skip(1) {
        let Some(case) = section.split("Case `").nth(1).and_then(|rest| rest.split('`').next()) else {
            continue;
        };
        let stderr_path = root().join(case.replace(".rs", ".stderr"));
        let stderr = std::fs::read_to_string(&stderr_path).unwrap_or_default();
        let blessed: std::collections::HashSet<&str> = stderr.lines().map(str::trim_end).collect();
        for block in section.split("```text\n").skip(1) {
            let quoted = block.split("```").next().unwrap_or_default();
            for line in quoted.lines().map(str::trim_end) {
                if !line.trim().is_empty() && line.trim() != "..." && !blessed.contains(line) {
                    stale.push(format!("{case}: {line}"));
                }
            }
        }
    }
    assert!(
        stale.is_empty(),
        "lines quoted on docs/compile-errors.md that are not in their case's .stderr:\n{}\n\
         fix: copy the lines from the blessed .stderr (after `cargo xtask bless`)",
        stale.join("\n")
    );
}
