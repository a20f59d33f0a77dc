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
//!   A folder module (`multi/`) is one layer, and its files are in an order of their own
//!   ([`HOST_ROOMS`]).
//! * The device std (`gpu-kernels/device/src`) is in rooms, [`DEVICE_LAYERS`]: `spec`
//!   (what PTX specifies) <- `cpu` (the CPU engine, which names no op family) <- the op
//!   families in a fixed order; a room imports only itself and the rooms below it. Each
//!   op family is a folder whose `mod.rs` is the API and whose `gpu.rs`/`cpu.rs` implement
//!   it, chosen once (`device_families_are_rooms`); `spec` has no `cfg`, no `asm!` and no
//!   runtime (`the_device_spec_is_plain_rules`).

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

/// The modules of `host/src`, lowest layer first: each may use only the ones before it.
/// A folder module (`multi/`) is one layer; [`HOST_ROOMS`] orders the files inside it.
const HOST_LAYERS: &[&str] = &[
    "driver", "nccl", "check", "error", "cpu", "handle", "launcher", "ptx", "span", "module", "plan", "device",
    "trace", "capture", "submit", "matrix", "pinned", "view", "kernel", "lane", "launch", "fence", "copy", "scope",
    "graph", "multi", "lib",
];

/// The files of each folder module of `host/src`, lowest first (`mod` is the folder's
/// `mod.rs`, `a/b` the file `a/b.rs`, `a` the folder `a/`'s `mod.rs`): each may use only
/// the ones before it.
const HOST_ROOMS: &[(&str, &[&str])] = &[(
    "multi",
    &[
        "sealed",
        "peer",
        "branded",
        "scope",
        "device",
        "peer_copy",
        "comm",
        "collective/cpu",
        "collective/nccl",
        "collective",
        "mod",
        "tests",
    ],
)];

/// The rooms of the device std (`gpu-kernels/device/src`), lowest first: the `spec` floor,
/// the CPU engine, then the op families in a fixed order (`gpu-kernels/device/src/lib.rs`,
/// # Layers). Each room uses only itself and the rooms before it.
const DEVICE_LAYERS: &[&str] = &[
    "spec",
    "cpu",
    "sync",
    "thread",
    "misc",
    "math",
    "io",
    "shared",
    "atomic",
    "warp",
    "slice",
    "half",
    "tile",
    "async_copy",
    "tma",
    "mma",
    "wgmma",
    "selftest",
    "lib",
];

/// The device std's macros (exported at the crate root) and the room that defines each.
const DEVICE_MACROS: &[(&str, &str)] = &[
    ("dassert", "io"),
    ("dfail", "io"),
    ("dprint", "io"),
    ("dprintln", "io"),
    ("__dprint_impl", "io"),
    ("shared_array", "shared"),
    ("shared_static", "shared"),
    ("unroll", "misc"),
];

/// A crate in rooms: its `src`, the rooms lowest first (a room is a top-level file
/// module or folder, `lib` the crate root), the file order inside the folder rooms that
/// have one, and the macros its files name through `crate::`, with their rooms.
struct Rooms {
    src: &'static str,
    order: &'static [&'static str],
    inner: &'static [(&'static str, &'static [&'static str])],
    macros: &'static [(&'static str, &'static str)],
}

/// The module path of the source file `rel` (relative to `src`): `a/b.rs` → `[a, b]`,
/// `a/mod.rs` → `[a]`, `lib.rs` → `[]`. (A file a module declares with `#[path]`, such
/// as a family's `gpu.rs` loaded as `imp`, is named by its file; for `super::` that is
/// the same parent.)
fn module_of(rel: &Path) -> Vec<String> {
    let mut parts: Vec<String> = rel.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect();
    let last = parts.pop().expect("a file");
    let stem = last.strip_suffix(".rs").unwrap_or(&last).to_string();
    if stem != "mod" && !(parts.is_empty() && stem == "lib") {
        parts.push(stem);
    }
    parts
}

/// The lines of `text` as code: comments and the insides of string and char literals
/// blanked, each with the inline modules (`mod name { ... }`) it is in.
fn code_lines(text: &str) -> Vec<(String, Vec<String>)> {
    let mut out = Vec::new();
    let mut depth = 0usize;
    let mut inline: Vec<(String, usize)> = Vec::new();
    let mut block_comment = 0usize;
    // The number of `#` of the raw string we are in.
    let mut raw_string: Option<usize> = None;
    let mut string = false;
    for line in text.lines() {
        let chars: Vec<char> = line.chars().collect();
        let mut code = String::with_capacity(line.len());
        let mods_here: Vec<String> = inline.iter().map(|(m, _)| m.clone()).collect();
        let mut i = 0;
        while i < chars.len() {
            let c = chars[i];
            let next = chars.get(i + 1).copied();
            if block_comment > 0 {
                if c == '*' && next == Some('/') {
                    block_comment -= 1;
                    i += 2;
                } else if c == '/' && next == Some('*') {
                    block_comment += 1;
                    i += 2;
                } else {
                    i += 1;
                }
                code.push(' ');
                continue;
            }
            if let Some(h) = raw_string {
                if c == '"' && chars[i + 1..].iter().take(h).filter(|&&x| x == '#').count() == h {
                    raw_string = None;
                    code.push('"');
                    i += 1 + h;
                } else {
                    code.push(' ');
                    i += 1;
                }
                continue;
            }
            if string {
                if c == '\\' {
                    code.push_str("  ");
                    i += 2;
                } else {
                    string = c != '"';
                    code.push(if c == '"' { '"' } else { ' ' });
                    i += 1;
                }
                continue;
            }
            match c {
                '/' if next == Some('/') => break,
                '/' if next == Some('*') => {
                    block_comment += 1;
                    i += 2;
                }
                '"' => {
                    string = true;
                    code.push('"');
                    i += 1;
                }
                'r' if matches!(next, Some('"') | Some('#'))
                    && !code.ends_with(|x: char| x.is_alphanumeric() || x == '_') =>
                {
                    let hashes = chars[i + 1..].iter().take_while(|&&x| x == '#').count();
                    if chars.get(i + 1 + hashes) == Some(&'"') {
                        raw_string = Some(hashes);
                        code.push('"');
                        i += 2 + hashes;
                    } else {
                        code.push(c);
                        i += 1;
                    }
                }
                '\'' => {
                    // A char literal ('x', '\n', '\''), not a lifetime ('a).
                    if next == Some('\\') {
                        let end = chars[i + 3..].iter().position(|&x| x == '\'').map_or(chars.len(), |p| i + 4 + p);
                        code.push_str("' '");
                        i = end;
                    } else if chars.get(i + 2) == Some(&'\'') {
                        code.push_str("' '");
                        i += 3;
                    } else {
                        code.push(c);
                        i += 1;
                    }
                }
                '{' => {
                    let words: Vec<&str> = code.split_whitespace().collect();
                    if words.len() >= 2 && words[words.len() - 2] == "mod" {
                        inline.push((words[words.len() - 1].to_string(), depth));
                    }
                    depth += 1;
                    code.push(c);
                    i += 1;
                }
                '}' => {
                    depth = depth.saturating_sub(1);
                    if inline.last().is_some_and(|(_, d)| *d == depth) {
                        inline.pop();
                    }
                    code.push(c);
                    i += 1;
                }
                _ => {
                    code.push(c);
                    i += 1;
                }
            }
        }
        out.push((code, mods_here));
    }
    out
}

/// The paths a line of code names through `crate::`, `super::` or `self::`, resolved
/// from module `me` to paths from the crate root, each with whether it is a macro
/// (`crate::dassert!`). A `use ...::{a, b::C}` group gives each of its paths.
fn paths_named(code: &str, me: &[String]) -> Vec<(Vec<String>, bool)> {
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    let chars: Vec<char> = code.chars().collect();
    let tail = |j: usize| -> String { chars[j.min(chars.len())..].iter().collect() };
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let rest = tail(i);
        let before = if i == 0 { None } else { Some(chars[i - 1]) };
        let start = ["crate::", "super::", "self::"]
            .into_iter()
            .find(|p| rest.starts_with(p))
            .filter(|_| !before.is_some_and(|b| ident(b) || b == '$' || b == ':'));
        let Some(start) = start else {
            i += 1;
            continue;
        };
        let mut path: Vec<String> = match start {
            "crate::" => Vec::new(),
            "self::" => me.to_vec(),
            _ => me[..me.len().saturating_sub(1)].to_vec(),
        };
        let mut j = i + start.len();
        while tail(j).starts_with("super::") {
            path.pop();
            j += "super::".len();
        }
        loop {
            let seg: String = chars[j..].iter().take_while(|&&c| ident(c)).collect();
            if seg.is_empty() {
                break;
            }
            j += seg.chars().count();
            path.push(seg);
            if tail(j).starts_with("::") && !tail(j + 2).starts_with('<') {
                j += 2;
                continue;
            }
            break;
        }
        if chars.get(j) == Some(&'{') {
            // A group: each top-level item.
            let (mut level, mut item, mut items) = (0, String::new(), Vec::new());
            for &c in &chars[j + 1..] {
                match c {
                    '{' => level += 1,
                    '}' if level == 0 => break,
                    '}' => level -= 1,
                    ',' if level == 0 => {
                        items.push(std::mem::take(&mut item));
                        continue;
                    }
                    _ => {}
                }
                item.push(c);
            }
            items.push(item);
            for item in items {
                let segs: Vec<String> = item
                    .trim()
                    .split("::")
                    .map(|s| s.trim().chars().take_while(|&c| ident(c)).collect::<String>())
                    .take_while(|s| !s.is_empty())
                    .collect();
                let mut p = path.clone();
                p.extend(segs.into_iter().filter(|s| s != "self"));
                out.push((p, false));
            }
        } else {
            out.push((path, chars.get(j) == Some(&'!')));
        }
        i = j.max(i + 1);
    }
    out
}

/// Every place a file of the crate uses a room above its own, or (inside a folder room
/// with a file order) a file after its own; also `crate::Item` paths through the crate
/// root from anywhere but `lib.rs`, and files in no room.
fn layer_violations(rooms: &Rooms) -> Vec<String> {
    let src = root().join(rooms.src);
    let files = files(&[rooms.src]);
    let modules: Vec<Vec<String>> =
        files.iter().map(|f| module_of(f.strip_prefix(&src).expect("a file under src"))).collect();
    let room_of = |m: &[String]| m.first().cloned().unwrap_or_else(|| "lib".to_string());
    // A file's key inside its room: its module path after the room (`mod` for the room's own file).
    let key_of = |m: &[String]| if m.len() <= 1 { "mod".to_string() } else { m[1..].join("/") };
    let rank = |room: &str| rooms.order.iter().position(|r| *r == room);
    let inner = |room: &str| rooms.inner.iter().find(|(r, _)| *r == room).map(|(_, o)| *o);
    let mut wrong = Vec::new();
    for (f, me) in files.iter().zip(&modules) {
        let room = room_of(me);
        let Some(mine) = rank(&room) else {
            wrong.push(format!("{}: room `{room}` is not in the layer list (add it where it belongs)", f.display()));
            continue;
        };
        let order = inner(&room);
        if order.is_some_and(|o| !o.contains(&key_of(me).as_str())) {
            wrong.push(format!(
                "{}: `{}` is not in {room}'s file order (add it where it belongs)",
                f.display(),
                key_of(me)
            ));
        }
        let text = std::fs::read_to_string(f).expect("readable source");
        for (i, (code, inline)) in code_lines(&text).iter().enumerate() {
            // Unit tests may use anything of their module.
            if inline.iter().any(|m| m == "tests") {
                continue;
            }
            let mut here = me.clone();
            here.extend(inline.iter().cloned());
            for (path, is_macro) in paths_named(code, &here) {
                let at = format!("{}:{}", f.display(), i + 1);
                let shown = if path.is_empty() { "crate".to_string() } else { path.join("::") };
                if is_macro && path.len() == 1 {
                    match rooms.macros.iter().find(|(m, _)| *m == path[0]) {
                        Some((_, theirs)) if rank(theirs).is_some_and(|t| t <= mine) => {}
                        Some((_, theirs)) => {
                            wrong.push(format!("{at}: `{room}` uses `{shown}!` of `{theirs}`, which is not below it"))
                        }
                        None => wrong.push(format!("{at}: `{shown}!` is not a macro in the layer list")),
                    }
                    continue;
                }
                // The file that defines the path: its longest prefix that is a file's module.
                let Some(target) = (0..=path.len()).rev().map(|n| &path[..n]).find(|p| modules.iter().any(|m| m == p))
                else {
                    continue;
                };
                if target.is_empty() {
                    // The crate root: fine from `lib.rs`; elsewhere only to reach a module.
                    if room != "lib" && !path.is_empty() {
                        wrong.push(format!("{at}: `{shown}` goes through the crate root: name its module"));
                    }
                    continue;
                }
                let theirs = room_of(target);
                match rank(&theirs) {
                    Some(t) if t < mine => {}
                    Some(_) if theirs == room => {
                        if let Some(order) = order {
                            let (a, b) = (key_of(me), key_of(target));
                            let pos = |k: &str| order.iter().position(|x| *x == k);
                            if a != b && !matches!((pos(&b), pos(&a)), (Some(t), Some(m)) if t < m) {
                                wrong.push(format!(
                                    "{at}: `{room}/{a}` uses `{room}/{b}`, which is not before it in {room}'s file order"
                                ));
                            }
                        }
                    }
                    Some(_) => wrong.push(format!("{at}: `{room}` uses `{theirs}` (`{shown}`), which is not below it")),
                    None => wrong.push(format!("{at}: `{shown}` is in no room of the layer list")),
                }
            }
        }
    }
    wrong
}

#[test]
fn host_modules_import_only_lower_layers() {
    let wrong = layer_violations(&Rooms { src: "host/src", order: HOST_LAYERS, inner: HOST_ROOMS, macros: &[] });
    assert!(
        wrong.is_empty(),
        "the host crate is in layers (host/src/lib.rs, # Layers): a file uses only files below it, so that \
         there is no import cycle; inside a folder module (multi/) its files are ordered too (HOST_ROOMS). \
         Found:\n{}\nfix: move the code to the layer it belongs to, or the shared piece down to a lower file",
        wrong.join("\n")
    );
}

#[test]
fn device_std_rooms_import_only_lower_rooms() {
    let wrong = layer_violations(&Rooms {
        src: "gpu-kernels/device/src",
        order: DEVICE_LAYERS,
        inner: &[],
        macros: DEVICE_MACROS,
    });
    assert!(
        wrong.is_empty(),
        "the device std is in rooms (gpu-kernels/device/src/lib.rs, # Layers): spec <- cpu <- sync <- thread <- \
         misc <- math <- io <- shared <- atomic <- warp <- slice <- half <- tile <- async_copy <- mma <- \
         selftest; a room uses only itself and the \
         rooms before it, so that there is no import cycle. Found:\n{}\nfix: move a rule down to spec/ (what \
         PTX specifies), a mechanism to cpu/ if it names no op family, the rest to the family it belongs to",
        wrong.join("\n")
    );
}

#[test]
fn the_layer_check_reads_paths() {
    let me: Vec<String> = ["multi", "collective", "nccl"].map(String::from).to_vec();
    let p = |v: &[&str], m: bool| (v.iter().map(|x| x.to_string()).collect::<Vec<_>>(), m);
    assert_eq!(
        paths_named("use crate::device::{lock, Gpu};", &me),
        [p(&["device", "lock"], false), p(&["device", "Gpu"], false)]
    );
    assert_eq!(
        paths_named("use crate::{error::Error, span::Span};", &me),
        [p(&["error", "Error"], false), p(&["span", "Span"], false)]
    );
    assert_eq!(paths_named("    x: crate::Gpu,", &me), [p(&["Gpu"], false)]);
    assert_eq!(
        paths_named("use super::super::comm::{Kind, Rank};", &me),
        [p(&["multi", "comm", "Kind"], false), p(&["multi", "comm", "Rank"], false)]
    );
    assert_eq!(paths_named("use super::sealed::{self, Token};", &me)[0], p(&["multi", "collective", "sealed"], false));
    assert_eq!(paths_named("    crate::dassert!(x < 3);", &me), [p(&["dassert"], true)]);
    assert!(paths_named("    pub(crate) fn span(&self) -> $crate::span::Span {", &me).is_empty());
    let code = code_lines("/// see [`Gpu`](crate::Gpu)\nlet s = \"crate::Gpu\"; // crate::Gpu\nlet c = '{';\nmod tests {\n    use super::*;\n}\nfn f() {}\n");
    assert!(code.iter().all(|(c, _)| !c.contains("crate::Gpu")), "{code:?}");
    assert_eq!(code[4].1, ["tests"]);
    assert!(code[6].1.is_empty(), "{code:?}");
    assert_eq!(module_of(Path::new("multi/collective/mod.rs")), ["multi", "collective"]);
    assert_eq!(module_of(Path::new("shared/gpu.rs")), ["shared", "gpu"]);
    assert!(module_of(Path::new("lib.rs")).is_empty());
}

/// The device std's op families with a GPU and a CPU backend.
const DEVICE_FAMILIES: &[&str] = &["sync", "thread", "misc", "math", "io", "shared", "atomic", "warp", "slice"];

/// The lines of an op family's API files that may name `target_arch` besides the backend
/// choice and `cfg_attr(not(target_arch = "nvptx64"), track_caller)`: items that exist on
/// one target only (file, the line trimmed).
const ONE_TARGET_ITEMS: &[(&str, &str)] = &[
    // libdevice's declarations: device only.
    ("math/mod.rs", "#[cfg(target_arch = \"nvptx64\")]"),
    // `redux.sync`: sm_80+ builds on the device, always on the CPU.
    ("warp/mod.rs", "#[cfg(any(not(target_arch = \"nvptx64\"), target_feature = \"sm_80\"))]"),
];

/// The files a backend file declares with `#[path = "..."]` (they belong to its side).
fn declared_files(dir: &Path, file: &str) -> Vec<String> {
    let text = std::fs::read_to_string(dir.join(file)).unwrap_or_default();
    text.lines()
        .filter_map(|l| l.trim().strip_prefix("#[path = \"").and_then(|r| r.strip_suffix("\"]")))
        .filter(|f| *f != "gpu.rs" && *f != "cpu.rs")
        .map(String::from)
        .collect()
}

#[test]
fn device_families_are_rooms() {
    let src = root().join("gpu-kernels/device/src");
    let mut wrong = Vec::new();
    for family in DEVICE_FAMILIES {
        let dir = src.join(family);
        let api = std::fs::read_to_string(dir.join("mod.rs")).unwrap_or_default();
        if api.is_empty() {
            wrong.push(format!("{family}/: no mod.rs (an op family is a folder whose mod.rs is its API)"));
            continue;
        }
        for choice in [
            "#[cfg_attr(target_arch = \"nvptx64\", path = \"gpu.rs\")]",
            "#[cfg_attr(not(target_arch = \"nvptx64\"), path = \"cpu.rs\")]",
        ] {
            if !api.lines().any(|l| l.trim() == choice) {
                wrong.push(format!("{family}/mod.rs: the backend is chosen once, with `{choice}` on `mod imp`"));
            }
        }
        let gpu_side: Vec<String> =
            std::iter::once("gpu.rs".to_string()).chain(declared_files(&dir, "gpu.rs")).collect();
        let cpu_side: Vec<String> =
            std::iter::once("cpu.rs".to_string()).chain(declared_files(&dir, "cpu.rs")).collect();
        let mut names: Vec<String> = std::fs::read_dir(&dir)
            .expect("a family folder")
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".rs"))
            .collect();
        names.sort();
        for side in [&gpu_side, &cpu_side] {
            for f in side.iter() {
                if !names.contains(f) {
                    wrong.push(format!("{family}/{f}: missing (each family has gpu.rs and cpu.rs)"));
                }
            }
        }
        for name in &names {
            let text = std::fs::read_to_string(dir.join(name)).expect("readable source");
            let at = |i: usize| format!("{family}/{name}:{}", i + 1);
            let (gpu, cpu) = (gpu_side.contains(name), cpu_side.contains(name));
            let lines: Vec<&str> = text.lines().collect();
            for (i, (code, inline)) in code_lines(&text).iter().enumerate() {
                if inline.iter().any(|m| m == "tests") {
                    continue;
                }
                let code = code.trim();
                if (code.contains("asm!") || code.contains("core::arch::")) && !gpu {
                    wrong.push(format!("{}: PTX (`asm!`, `core::arch`) belongs in the GPU side (gpu.rs)", at(i)));
                }
                if code.contains("crate::cpu::") && !cpu {
                    wrong.push(format!("{}: the CPU runtime (`crate::cpu`) belongs in the CPU side (cpu.rs)", at(i)));
                }
                if !gpu && !cpu && code.contains("target_arch") {
                    // Compared as written (the code line has its strings blanked).
                    let raw = lines[i].trim();
                    let allowed = raw.ends_with("path = \"gpu.rs\")]")
                        || raw.ends_with("path = \"cpu.rs\")]")
                        || raw == "#[cfg_attr(not(target_arch = \"nvptx64\"), track_caller)]"
                        || ONE_TARGET_ITEMS.contains(&(format!("{family}/{name}").as_str(), raw));
                    if !allowed {
                        wrong.push(format!(
                            "{}: an API file names `target_arch` only to choose `imp`, for `track_caller` on the CPU, \
                             or for an item of one target (ONE_TARGET_ITEMS): `{raw}`",
                            at(i)
                        ));
                    }
                }
                // The API is written once, in the API files: a backend's items are
                // `pub(super)`/`pub(crate)`, or hidden plumbing (`#[doc(hidden)]`).
                let public_item = [
                    "pub fn ",
                    "pub unsafe fn ",
                    "pub struct ",
                    "pub trait ",
                    "pub enum ",
                    "pub const ",
                    "pub static ",
                    "pub mod ",
                    "pub type ",
                ]
                .iter()
                .any(|k| code.starts_with(k));
                if (gpu || cpu) && public_item {
                    let hidden = lines[..i]
                        .iter()
                        .rev()
                        .map(|l| l.trim())
                        .take_while(|l| l.starts_with("#[") || l.starts_with("///"))
                        .any(|l| l == "#[doc(hidden)]");
                    if !hidden {
                        wrong.push(format!(
                            "{}: a backend declares no public API (write it once in mod.rs): `{code}`",
                            at(i)
                        ));
                    }
                }
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "each device op family is a folder: mod.rs is its API, written once with its docs and # Safety, and \
         chooses its backend once (`mod imp` from gpu.rs or cpu.rs); PTX lives on the GPU side, the CPU runtime on \
         the CPU side (gpu-kernels/device/src/lib.rs, # Layers). Found:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn the_device_spec_is_plain_rules() {
    let mut wrong = Vec::new();
    for f in files(&["gpu-kernels/device/src/spec"]) {
        let text = std::fs::read_to_string(&f).expect("readable source");
        for (i, (code, inline)) in code_lines(&text).iter().enumerate() {
            if inline.iter().any(|m| m == "tests") {
                continue;
            }
            let code = code.trim();
            let cfg = code.contains("cfg(") && !code.starts_with("#[cfg(test)]");
            let runtime = ["asm!", "core::arch", "std::", "thread_local", "static mut", "crate::cpu", "unsafe"]
                .iter()
                .find(|w| code.contains(*w));
            if cfg || runtime.is_some() {
                wrong.push(format!("{}:{}: `{code}`", f.display(), i + 1));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "spec/ holds what PTX specifies as plain data and pure functions: no `cfg` (but `#[cfg(test)]`), no \
         `asm!`, no `std`, no runtime, no `unsafe`, below both backends. Found:\n{}\nfix: keep the rule here and \
         move what runs it into the family's gpu.rs or cpu.rs",
        wrong.join("\n")
    );
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
