//! `sluice-llbc`: the bitcode linker rustc calls for `nvptx64-nvidia-cuda`.
//!
//! rustc's NVPTX target links with linker flavour `llbc`: every crate is LLVM
//! bitcode, and the "linker" merges it and lowers it to PTX. rustup ships
//! `llvm-bitcode-linker` for this; Debian's rustc does not, so sluice carries
//! this small, dependency-free equivalent and passes it with `-C linker=`. It
//! runs the same three LLVM steps:
//!
//! 1. `llvm-link` all bitcode inputs (the kernel crate, `core`, libdevice);
//! 2. `opt`: internalize everything but the exported kernels, drop dead code,
//!    then optimise (this also inlines the few libdevice functions used and
//!    drops the rest). Before that, every `cvta.shared.u64` that the device std
//!    writes as inline assembly (the generic address of a shared variable) is
//!    rewritten as LLVM's own `addrspacecast` from `addrspace(3)`, so that LLVM's
//!    address-space inference sees where the pointer points and emits
//!    `ld.shared`/`st.shared` for the loads and stores through it (a
//!    `#[address_space(shared)]` static indexed as an array), as nvcc does for
//!    `__shared__` ([`shared_addrspace_casts`]); and every shared-variable
//!    declaration of the device std moves from the functions that made it to the
//!    module's scope, once per name ([`hoist_shared_declarations`]). With
//!    `--pass-plugin=<so>` (the builder's range-check pass), `opt` first versions
//!    each loop whose bounds checks one test before it decides: a copy without
//!    them runs when the test passes. `opt` also gets `--unroll-runtime-multi-exit`
//!    (a loop whose other exits are bounds checks, branches to a trap, is unrolled
//!    as nvcc unrolls the same loop without them) and `--unroll-max-count=4`
//!    (nvcc's factor for a loop of unknown trip count). A kernel's launch bounds reach LLVM the same way:
//!    `#[kernel]` leaves a marker static beside the entry
//!    (`__sluice_nvvm_<kernel>`), which becomes `!nvvm.annotations`
//!    ([`kernel_attributes`]), and which names the tensor-map parameters whose
//!    PTX declaration step 3's output gets 64-byte aligned ([`align_tma_params`]);
//! 3. `llc --mcpu=sm_XX --disable-lsr`: bitcode to PTX, without LLVM's loop
//!    strength reduction, which ptxas does itself (LLVM's kept a 64-bit pointer
//!    beside every index a bounds check compares: 40 registers for Rust-CUDA's
//!    bounds-checked tiled gemm, 32 — nvcc's count — without it).
//!
//! `SLUICE_KEEP_IR=1` keeps the linked IR and the optimised bitcode beside the
//! PTX, for reading what LLVM made of a kernel.
//!
//! The LLVM tools are taken from `SLUICE_LLVM_BIN` (set by the builder).
//! This file is a standalone program: the builder compiles it with the host
//! rustc on first use (a build script cannot run a binary of its own build
//! dependency), and the crate also builds it as a `[[bin]]` so that it is
//! type-checked with the rest of the workspace.

#![forbid(unsafe_code)]

use std::path::{Path, PathBuf};
use std::process::{exit, Command};

struct Args {
    cpu: Option<String>,
    features: Option<String>,
    output: Option<PathBuf>,
    opt_level: String,
    exports: Vec<String>,
    inputs: Vec<PathBuf>,
    plugin: Option<PathBuf>,
}

fn parse(mut argv: impl Iterator<Item = String>) -> Result<Args, String> {
    let mut args = Args {
        cpu: None,
        features: None,
        output: None,
        opt_level: "3".into(),
        exports: Vec::new(),
        inputs: Vec::new(),
        plugin: None,
    };
    while let Some(arg) = argv.next() {
        let mut value = |name: &str| argv.next().ok_or_else(|| format!("{name} needs a value"));
        match arg.as_str() {
            "--target" => {
                value("--target")?;
            }
            "--target-cpu" => args.cpu = Some(value("--target-cpu")?),
            "-o" | "--output" => args.output = Some(value("-o")?.into()),
            "--export-symbol" => args.exports.push(value("--export-symbol")?),
            "-L" => {
                value("-L")?;
            }
            "--debug" | "--lto" => {}
            _ if arg.starts_with("--pass-plugin=") => args.plugin = Some(arg["--pass-plugin=".len()..].into()),
            _ if arg.starts_with("--target-feature=") => {
                args.features = Some(arg["--target-feature=".len()..].to_string())
            }
            _ if arg.starts_with("-O") => {
                let level = &arg[2..];
                // rustc's `-Os`/`-Oz` map to LLVM's `Os`/`Oz`; `-O0` keeps
                // the pipeline but we still inline: kernels must not call
                // unresolved functions.
                args.opt_level = level.to_string();
            }
            _ if arg.starts_with("-L") => {}
            _ if arg.starts_with('-') => return Err(format!("unknown option `{arg}`")),
            _ => args.inputs.push(arg.into()),
        }
    }
    Ok(args)
}

fn tool(bin: &Path, name: &str) -> Command {
    Command::new(bin.join(name))
}

fn run(mut cmd: Command, what: &str) -> Result<(), String> {
    let out = cmd.output().map_err(|e| format!("could not start {what} ({:?}): {e}", cmd.get_program()))?;
    if !out.status.success() {
        return Err(format!(
            "{what} failed ({}):\n{}{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(())
}

fn link(args: Args) -> Result<(), String> {
    let bin: PathBuf = std::env::var_os("SLUICE_LLVM_BIN")
        .ok_or("SLUICE_LLVM_BIN is not set: sluice-llbc is started by sluice-builder, which sets it")?
        .into();
    let out = args.output.ok_or("no output file (-o)")?;
    let linked = out.with_extension("linked.ll");
    let optimized = out.with_extension("opt.bc");
    let symbols = out.with_extension("exports.txt");

    let mut cmd = tool(&bin, "llvm-link");
    cmd.arg("--ignore-non-bitcode").arg("-S").args(&args.inputs).arg("-o").arg(&linked);
    run(cmd, "llvm-link")?;
    let text = std::fs::read_to_string(&linked).map_err(|e| format!("reading {}: {e}", linked.display()))?;
    refuse_asm_entries(&text)?;
    let text = shared_addrspace_casts(&text).unwrap_or(text);
    let text = hoist_shared_declarations(&text).unwrap_or(text);
    let text = short_shared_pointers(&text);
    let attributes = kernel_attributes(&text)?;
    let text = add_annotations(&text, &attributes.annotations)?.unwrap_or(text);
    std::fs::write(&linked, text).map_err(|e| format!("writing {}: {e}", linked.display()))?;

    let mut list = args.exports.join("\n");
    list.push('\n');
    std::fs::write(&symbols, list).map_err(|e| format!("writing {}: {e}", symbols.display()))?;

    let level = match args.opt_level.as_str() {
        "0" | "1" | "2" | "3" | "s" | "z" => args.opt_level.clone(),
        other => return Err(format!("unknown optimisation level -O{other}")),
    };
    // Internalize first so that the optimiser sees every non-kernel function as
    // private: it can then inline libdevice and drop what is unused.
    // The range-check pass (the builder's `range_checks`, `--pass-plugin=`) versions each
    // loop whose bounds checks one test before it can decide, on rustc's IR before the
    // optimiser unrolls anything.
    let hoist = if args.plugin.is_some() { "function(loop-simplify,lcssa,sluice-range-checks)," } else { "" };
    let passes = format!("internalize,globaldce,{hoist}default<O{}>", if level == "0" { "1" } else { &level });
    let mut cmd = tool(&bin, "opt");
    if let Some(plugin) = &args.plugin {
        cmd.arg(format!("-load-pass-plugin={}", plugin.display()));
    }
    cmd.arg(&linked)
        .arg("-o")
        .arg(&optimized)
        .arg("-mtriple=nvptx64-nvidia-cuda")
        .arg(format!("--internalize-public-api-file={}", symbols.display()))
        .arg(format!("--passes={passes}"))
        .arg("--nvptx-short-ptr")
        .arg("--strip-debug")
        // A loop whose only other exits are bounds checks (a branch to a trap) is unrolled
        // like one without them: `for i in 0..k { sum = a[r + i].mul_add(b[i * n + c], sum) }`
        // runs four iterations (eight checks, then eight loads in flight) per trip, as nvcc
        // unrolls the same loop without checks. Off by default in LLVM because the extra
        // exits usually cost more than the unrolling saves; here they are cold traps.
        .arg("--unroll-runtime-multi-exit")
        // A loop of unknown trip count is unrolled four times, as nvcc does. LLVM's own
        // choice is eight, and ptxas unrolls such a loop again: Rust-CUDA's naive gemm
        // without its checks then ran 32 steps per trip, 1.32x nvcc's time at 4096^3
        // (0.99x at four).
        .arg("--unroll-max-count=4");
    if let Some(cpu) = &args.cpu {
        cmd.arg(format!("-mcpu={cpu}"));
    }
    run(cmd, "opt")?;

    let mut cmd = tool(&bin, "llc");
    // `--disable-lsr`: no loop strength reduction before instruction selection. ptxas
    // strength-reduces address arithmetic itself; LLVM's LSR, run first, keeps a 64-bit
    // pointer induction variable beside every index that a bounds check still compares,
    // two registers each (the bounds-checked tiled gemm: 40 registers with it, 32 — nvcc's
    // count — without; every kernel of the workspace has as few or fewer SASS instructions
    // without it).
    cmd.arg(&optimized).arg("-o").arg(&out).arg("-O3").arg("--nvptx-short-ptr").arg("--disable-lsr");
    if let Some(cpu) = &args.cpu {
        cmd.arg(format!("--mcpu={cpu}"));
    }
    if let Some(features) = &args.features {
        cmd.arg(format!("--mattr={features}"));
    }
    run(cmd, "llc")?;
    if !attributes.tma_params.is_empty() {
        let ptx = std::fs::read_to_string(&out).map_err(|e| format!("reading {}: {e}", out.display()))?;
        let ptx = align_tma_params(&ptx, &attributes.tma_params)?;
        std::fs::write(&out, ptx).map_err(|e| format!("writing {}: {e}", out.display()))?;
    }
    // `SLUICE_KEEP_IR=1` keeps the linked IR and the optimised bitcode beside the PTX
    // (`<crate>.linked.ll`, `<crate>.opt.bc`), for reading what LLVM made of a kernel.
    let keep = std::env::var_os("SLUICE_KEEP_IR").is_some_and(|v| v != "0");
    for tmp in [&linked, &optimized, &symbols] {
        if !keep {
            let _ = std::fs::remove_file(tmp);
        }
    }
    Ok(())
}

/// The inline assembly the device std emits for the generic address of a shared-window
/// address (`sluice_device::shared`, `cuda_std::ptr`): `cvta.shared.u64 $0, $1;`.
const CVTA_SHARED: &str = r#"asm "cvta.shared.u64 ${0}, ${1};", "#;

/// Rewrites each `%v = call i64 asm "cvta.shared.u64 ${0}, ${1};", "=l,l"(i64 ADDR)` of
/// textual LLVM IR as
///
/// ```text
/// %sluice.as3.v = inttoptr i64 ADDR to ptr addrspace(3)
/// %sluice.gen.v = addrspacecast ptr addrspace(3) %sluice.as3.v to ptr
/// %v = ptrtoint ptr %sluice.gen.v to i64
/// ```
///
/// the same conversion (`addrspacecast` from `addrspace(3)` lowers to `cvta.shared`), which
/// LLVM can see through: the `inttoptr (ptrtoint p)` that follows folds to `p`, and
/// address-space inference turns the generic loads and stores through it into shared ones.
/// `None` when there is nothing to rewrite; a line it does not recognise is left as it was.
fn shared_addrspace_casts(ir: &str) -> Option<String> {
    if !ir.contains(CVTA_SHARED) {
        return None;
    }
    let mut out = String::with_capacity(ir.len() + 1024);
    for line in ir.split_inclusive('\n') {
        match rewrite_cvta_shared(line) {
            Some(new) => out.push_str(&new),
            None => out.push_str(line),
        }
    }
    Some(out)
}

/// One line of [`shared_addrspace_casts`].
fn rewrite_cvta_shared(line: &str) -> Option<String> {
    let at = line.find(CVTA_SHARED)?;
    let head = &line[..at];
    let indent = &line[..line.len() - line.trim_start().len()];
    let (value, call) = head.trim_start().split_once(" = ")?;
    let call = call.trim_end();
    if !value.starts_with('%') || !(call == "call i64" || call == "tail call i64" || call == "notail call i64") {
        return None;
    }
    // After the asm string: the constraints, then `(i64 ADDR)`.
    let rest = &line[at + CVTA_SHARED.len()..];
    let constraints_end = rest.strip_prefix('"')?.find('"')? + 2;
    let (constraints, args) = rest.split_at(constraints_end);
    if !matches!(constraints, r#""=l,l""# | r#""=&l,l""#) {
        return None;
    }
    let addr = args.strip_prefix("(i64 ")?.split(')').next()?;
    if addr.is_empty() || addr.contains([',', ' ']) {
        return None;
    }
    let name = &value[1..];
    let nl = if line.ends_with('\n') { "\n" } else { "" };
    Some(format!(
        "{indent}%sluice.as3.{name} = inttoptr i64 {addr} to ptr addrspace(3)\n\
         {indent}%sluice.gen.{name} = addrspacecast ptr addrspace(3) %sluice.as3.{name} to ptr\n\
         {indent}{value} = ptrtoint ptr %sluice.gen.{name} to i64{nl}"
    ))
}

/// The inline assembly that declares a shared variable of the device std (`shared_array!`,
/// `shared_static!`): `.shared .align A .b8 sluice_shared_H[BYTES];`, no operands.
const SHARED_DECLARATION: &str = r#"asm sideeffect ".shared .align "#;

/// Moves every shared-variable declaration of the device std out of the functions that
/// make it and into the module's scope, once per name, as `module asm` (PTX's module-scope
/// `.shared`, where CUDA C++ declares a `__shared__` array): each
/// `call void asm sideeffect ".shared .align A .b8 sluice_shared_H[BYTES];", ""()` line is
/// dropped, and one `module asm ".shared .align A .b8 sluice_shared_H[BYTES];"` per distinct
/// declaration is added. A function then names the variable with one `mov.u32` of its
/// symbol, however often LLVM inlines, unrolls or duplicates the code that declared it
/// (a PTX function must not declare a name twice), and ptxas allocates it, once per
/// block, in each kernel that uses it. Two declarations of one name that differ are
/// left in place, for ptxas to report. `None` when there is nothing to move.
fn hoist_shared_declarations(ir: &str) -> Option<String> {
    if !ir.contains(SHARED_DECLARATION) {
        return None;
    }
    let mut decls: Vec<&str> = Vec::new();
    let mut body = String::with_capacity(ir.len());
    for line in ir.split_inclusive('\n') {
        match shared_declaration(line) {
            Some(decl) => {
                if !decls.contains(&decl) {
                    decls.push(decl);
                }
            }
            None => body.push_str(line),
        }
    }
    // A name declared with two sizes or alignments is a ptxas error, not ours to pick.
    let name = |d: &str| d.split(" .b8 ").nth(1).and_then(|r| r.split('[').next()).map(str::to_owned);
    let clash = decls.iter().enumerate().any(|(i, a)| decls[..i].iter().any(|b| name(a) == name(b)));
    if decls.is_empty() || clash {
        return None;
    }
    let mut out = String::with_capacity(body.len() + decls.len() * 64);
    let mut placed = false;
    for line in body.split_inclusive('\n') {
        out.push_str(line);
        if !placed && line.starts_with("target triple = ") {
            for d in &decls {
                out.push_str(&format!("module asm \"{d}\"\n"));
            }
            placed = true;
        }
    }
    placed.then_some(out)
}

/// The declaration of one line of [`hoist_shared_declarations`]:
/// `.shared .align A .b8 sluice_shared_H[BYTES];` from
/// `  [tail ]call void asm sideeffect "<it>", ""()<anything>`.
fn shared_declaration(line: &str) -> Option<&str> {
    let call = line.trim_start();
    let call = call.strip_prefix("tail ").or_else(|| call.strip_prefix("notail ")).unwrap_or(call);
    let rest = call.strip_prefix("call void asm sideeffect \"")?;
    let (decl, args) = rest.split_once('"')?;
    if !args.starts_with(r#", ""()"#) {
        return None;
    }
    let tail = decl.strip_prefix(".shared .align ")?;
    let (align, tail) = tail.split_once(" .b8 sluice_shared_")?;
    let (hash, tail) = tail.split_once('[')?;
    let bytes = tail.strip_suffix("];")?;
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    (digits(align) && digits(hash) && digits(bytes)).then_some(decl)
}

/// Declares 32-bit pointers for the shared, constant and local address spaces in the
/// module's data layout (`p3:32:32-p4:32:32-p5:32:32`), as `--nvptx-short-ptr` (passed to
/// `opt` and `llc` too) makes NVPTX's own: shared memory is at most 228 KiB, so its
/// addresses are 32-bit, and offsets added to them fold into the `ld.shared` /
/// `st.shared` as nvcc's do. Rust itself never makes such pointers (only
/// [`shared_addrspace_casts`] does), so nothing else changes.
fn short_shared_pointers(ir: &str) -> String {
    const SHORT: &str = "-p3:32:32-p4:32:32-p5:32:32";
    let mut out = String::with_capacity(ir.len() + SHORT.len());
    for line in ir.split_inclusive('\n') {
        match line.strip_prefix("target datalayout = \"e") {
            Some(rest) if !line.contains("-p3:") => {
                out.push_str("target datalayout = \"e");
                out.push_str(SHORT);
                out.push_str(rest);
            }
            _ => out.push_str(line),
        }
    }
    out
}

/// Refuses module-level assembly (`global_asm!`, safe in Rust) that declares a kernel entry
/// or a `#[kernel]` parameter record: the host pairs every entry with a `#[kernel]`
/// declaration and checks it against the record beside it, so an entry written in assembly,
/// with a record of its own making, would be launched safely under a declaration that says
/// nothing true of it (a "read-only" parameter it writes). `#[kernel]` entries are Rust
/// functions, never module assembly; the device std's own module assembly declares the
/// dynamic shared region only.
fn refuse_asm_entries(ir: &str) -> Result<(), String> {
    for line in ir.lines().filter(|l| l.starts_with("module asm ")) {
        if line.contains(".entry") || line.contains("__sluice_abi_") {
            return Err(format!(
                "module-level assembly (`global_asm!`) in the kernel crate or a dependency declares a kernel entry \
                 or a parameter record: `{}`. sluice cannot check what such an entry does with its parameters, \
                 so it is not linked; write the kernel as a `#[kernel]` fn (or `#[kernel(unchecked)]`, launched \
                 only through `unsafe`)",
                line.trim_start_matches("module asm ").trim_matches('"')
            ));
        }
    }
    Ok(())
}

/// The prefix of the marker statics `#[kernel]` leaves for [`kernel_attributes`].
const NVVM_MARKER: &str = "@__sluice_nvvm_";

/// What `#[kernel]`'s markers ask of the kernels: `!nvvm.annotations` for the IR, and the
/// parameters whose PTX declaration must be 64-byte aligned (kernel, index).
#[derive(Debug, Default, PartialEq, Eq)]
struct KernelAttributes {
    annotations: Vec<String>,
    tma_params: Vec<(String, u32)>,
}

/// Reads each marker static `@__sluice_nvvm_<kernel> = ... c"<attrs>"` of the linked IR:
/// `<attrs>` is `;`-separated `maxntid=N` (`.maxntid N`, CUDA C++'s `__launch_bounds__`: at
/// most N threads per block, so ptxas may give each thread `65536 / N` registers),
/// `minctasm=N` (`.minnctapersm N`), `reqntidx=X`, `reqntidy=Y`, `reqntidz=Z` (`.reqntid X,
/// Y, Z`, `#[kernel(block = ..)]`: every block is exactly that), and `tma_param=I` (the kernel's parameter `I`, counted
/// from 0, is a tensor map, which the TMA reads in place and needs 64-byte aligned: rustc
/// declares it 16-byte aligned, the most its PTX kernel ABI has, so the PTX declaration is
/// rewritten, [`align_tma_params`]). The marker itself is dropped by
/// `internalize`/`globaldce`. An attribute it does not know is an error (a `#[kernel]` of
/// another version than this linker's).
fn kernel_attributes(ir: &str) -> Result<KernelAttributes, String> {
    let mut out = KernelAttributes::default();
    for line in ir.lines().filter(|l| l.starts_with(NVVM_MARKER)) {
        let Some((name, rest)) = line[NVVM_MARKER.len()..].split_once(' ') else { continue };
        let Some(text) = rest.split_once("c\"").and_then(|(_, t)| t.split_once('"')).map(|(t, _)| t) else {
            return Err(format!("unreadable kernel marker: `{line}`"));
        };
        for attr in text.split(';').filter(|a| !a.is_empty()) {
            let (key, value) = attr.split_once('=').ok_or_else(|| format!("kernel `{name}`: attribute `{attr}`"))?;
            let value: u32 = value.parse().map_err(|_| format!("kernel `{name}`: attribute `{attr}`"))?;
            match key {
                "maxntid" => out.annotations.push(format!("!{{ptr @{name}, !\"maxntidx\", i32 {value}}}")),
                "minctasm" => out.annotations.push(format!("!{{ptr @{name}, !\"minctasm\", i32 {value}}}")),
                "reqntidx" | "reqntidy" | "reqntidz" => {
                    out.annotations.push(format!("!{{ptr @{name}, !\"{key}\", i32 {value}}}"))
                }
                "tma_param" => out.tma_params.push((name.to_string(), value)),
                _ => {
                    return Err(format!(
                        "kernel `{name}`: unknown attribute `{attr}` (sluice-llbc is older than #[kernel])"
                    ))
                }
            }
        }
    }
    Ok(out)
}

/// The linked IR with `annotations` as `!nvvm.annotations`; `Ok(None)` when there are none.
fn add_annotations(ir: &str, annotations: &[String]) -> Result<Option<String>, String> {
    if annotations.is_empty() {
        return Ok(None);
    }
    if ir.lines().any(|l| l.starts_with("!nvvm.annotations")) {
        return Err("the linked module already has !nvvm.annotations: sluice-llbc cannot add its own".into());
    }
    // Metadata numbers after every number the module uses.
    let mut next = 0u64;
    for line in ir.lines().filter(|l| l.starts_with('!')) {
        if let Some(n) = line[1..].split(' ').next().and_then(|n| n.parse::<u64>().ok()) {
            next = next.max(n + 1);
        }
    }
    let mut out = String::with_capacity(ir.len() + 128 * annotations.len());
    out.push_str(ir);
    if !out.ends_with('\n') {
        out.push('\n');
    }
    let refs: Vec<String> = (0..annotations.len()).map(|i| format!("!{}", next + i as u64)).collect();
    out.push_str(&format!("!nvvm.annotations = !{{{}}}\n", refs.join(", ")));
    for (r, a) in refs.iter().zip(annotations) {
        out.push_str(&format!("{r} = {a}\n"));
    }
    Ok(Some(out))
}

/// Declares each tensor-map parameter of the PTX `.param .align 64` (from rustc's 16): the
/// TMA reads a map in parameter memory only at a 64-byte aligned address. A parameter not
/// found as `.param .align 16 .b8 <kernel>_param_<i>[128]` is an error (the kernel would
/// fault at its first copy).
fn align_tma_params(ptx: &str, params: &[(String, u32)]) -> Result<String, String> {
    let mut out = ptx.to_string();
    for (kernel, i) in params {
        let from = format!(".param .align 16 .b8 {kernel}_param_{i}[128]");
        let to = format!(".param .align 64 .b8 {kernel}_param_{i}[128]");
        if !out.contains(&from) {
            return Err(format!(
                "kernel `{kernel}`: its TMA parameter {i} is not declared `{from}` in the PTX (a rustc whose PTX \
                 kernel ABI differs from the one sluice-llbc knows)"
            ));
        }
        out = out.replace(&from, &to);
    }
    Ok(out)
}

fn main() {
    let result = parse(std::env::args().skip(1)).and_then(link);
    if let Err(e) = result {
        eprintln!("sluice-llbc: {e}");
        exit(1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn assembly_entries_and_records_are_refused() {
        let ours = "module asm \".extern .shared .align 16 .b8 sluice_dynamic_shared[];\"\ndefine void @k() {\n  ret void\n}\n";
        assert_eq!(refuse_asm_entries(ours), Ok(()));
        let entry = "module asm \".visible .entry smash(.param .u64 p)\"\n";
        assert!(refuse_asm_entries(entry).unwrap_err().contains("kernel entry"));
        let record = "module asm \".visible .global .align 1 .b8 __sluice_abi_smash[3] = {1, 2, 3};\"\n";
        assert!(refuse_asm_entries(record).is_err());
        // Text in a function is not module assembly.
        assert_eq!(
            refuse_asm_entries("define void @f() {\n  call void asm \".entry\", \"\"()\n  ret void\n}\n"),
            Ok(())
        );
    }

    #[test]
    fn a_cvta_shared_becomes_an_addrspacecast() {
        let ir = "define void @k() {\n  %65 = tail call i64 asm \"cvta.shared.u64 ${0}, ${1};\", \"=&l,l\"(i64 %64) #81, !srcloc !7\n  %66 = inttoptr i64 %65 to ptr\n}\n";
        let out = shared_addrspace_casts(ir).expect("one to rewrite");
        assert_eq!(
            out,
            "define void @k() {\n  %sluice.as3.65 = inttoptr i64 %64 to ptr addrspace(3)\n  \
             %sluice.gen.65 = addrspacecast ptr addrspace(3) %sluice.as3.65 to ptr\n  \
             %65 = ptrtoint ptr %sluice.gen.65 to i64\n  %66 = inttoptr i64 %65 to ptr\n}\n"
        );
    }

    #[test]
    fn named_values_and_constants_are_rewritten_too() {
        let line = "  %p.i = call i64 asm \"cvta.shared.u64 ${0}, ${1};\", \"=l,l\"(i64 0)\n";
        let out = rewrite_cvta_shared(line).expect("rewritten");
        assert!(out.contains("%sluice.as3.p.i = inttoptr i64 0 to ptr addrspace(3)"), "{out}");
        assert!(out.ends_with("%p.i = ptrtoint ptr %sluice.gen.p.i to i64\n"), "{out}");
    }

    #[test]
    fn shared_declarations_move_to_the_module_once() {
        let ir = "target datalayout = \"e\"\ntarget triple = \"nvptx64-nvidia-cuda\"\n\
                  define void @k() {\n  \
                  tail call void asm sideeffect \".shared .align 16 .b8 sluice_shared_42[4096];\", \"\"() #3, !srcloc !5\n  \
                  call void asm sideeffect \".shared .align 16 .b8 sluice_shared_42[4096];\", \"\"()\n  \
                  %1 = tail call i32 asm \"mov.u32 ${0}, sluice_shared_42;\", \"=r\"()\n  ret void\n}\n";
        let out = hoist_shared_declarations(ir).expect("two to move");
        assert_eq!(
            out,
            "target datalayout = \"e\"\ntarget triple = \"nvptx64-nvidia-cuda\"\n\
             module asm \".shared .align 16 .b8 sluice_shared_42[4096];\"\n\
             define void @k() {\n  \
             %1 = tail call i32 asm \"mov.u32 ${0}, sluice_shared_42;\", \"=r\"()\n  ret void\n}\n"
        );
    }

    #[test]
    fn a_name_declared_two_ways_is_left_for_ptxas() {
        let ir = "target triple = \"nvptx64-nvidia-cuda\"\n\
                  call void asm sideeffect \".shared .align 16 .b8 sluice_shared_1[4];\", \"\"()\n\
                  call void asm sideeffect \".shared .align 16 .b8 sluice_shared_1[8];\", \"\"()\n";
        assert_eq!(hoist_shared_declarations(ir), None);
        // Not a declaration of the device std's: other text, operands, or a result.
        for line in [
            "  call void asm sideeffect \".shared .align 16 .b8 other[4];\", \"\"()\n",
            "  call void asm sideeffect \".shared .align 16 .b8 sluice_shared_1[4];\", \"r\"(i32 1)\n",
            "  %1 = call i32 asm sideeffect \".shared .align 16 .b8 sluice_shared_1[4];\", \"=r\"()\n",
        ] {
            assert_eq!(shared_declaration(line), None, "{line}");
        }
    }

    #[test]
    fn the_data_layout_gets_short_shared_pointers() {
        let ir = "target datalayout = \"e-p6:32:32-i64:64-i128:128-i256:256-v16:16-v32:32-n16:32:64\"\ntarget triple = \"nvptx64-nvidia-cuda\"\n";
        let out = short_shared_pointers(ir);
        assert!(out.starts_with("target datalayout = \"e-p3:32:32-p4:32:32-p5:32:32-p6:32:32-i64:64"), "{out}");
        assert_eq!(short_shared_pointers(&out), out, "once only");
    }

    #[test]
    fn other_lines_are_left_alone() {
        assert_eq!(shared_addrspace_casts("define void @k() {\n  ret void\n}\n"), None);
        // Another conversion, other constraints, a vector operand: not touched.
        for line in [
            "  %1 = tail call i64 asm \"cvta.global.u64 ${0}, ${1};\", \"=l,l\"(i64 %0)\n",
            "  %1 = tail call i64 asm \"cvta.shared.u64 ${0}, ${1};\", \"=r,l\"(i64 %0)\n",
            "  tail call void asm sideeffect \"cvta.shared.u64 ${0}, ${1};\", \"=l,l\"(i64 %0)\n",
        ] {
            assert_eq!(rewrite_cvta_shared(line), None, "{line}");
        }
    }

    #[test]
    fn kernel_markers_become_annotations_and_aligned_params() {
        let ir = "define ptx_kernel void @ws([8 x i128] %0, i64 %1) {\n  ret void\n}\n\
                  @__sluice_nvvm_ws = local_unnamed_addr constant <{ [27 x i8] }> <{ [27 x i8] c\"maxntid=384;tma_param=0;\" }>, align 1\n\
                  !7 = !{i32 1}\n";
        let attrs = kernel_attributes(ir).unwrap();
        assert_eq!(attrs.tma_params, vec![("ws".to_string(), 0)]);
        let out = add_annotations(ir, &attrs.annotations).unwrap().expect("one annotation");
        assert!(out.ends_with("!nvvm.annotations = !{!8}\n!8 = !{ptr @ws, !\"maxntidx\", i32 384}\n"), "{out}");
        assert_eq!(kernel_attributes("define void @k() {\n  ret void\n}\n").unwrap(), KernelAttributes::default());
        let fixed = "@__sluice_nvvm_t = constant [36 x i8] c\"reqntidx=32;reqntidy=8;reqntidz=1;\"\n";
        assert_eq!(
            kernel_attributes(fixed).unwrap().annotations,
            ["!{ptr @t, !\"reqntidx\", i32 32}", "!{ptr @t, !\"reqntidy\", i32 8}", "!{ptr @t, !\"reqntidz\", i32 1}"]
        );
        let odd = "@__sluice_nvvm_k = constant [9 x i8] c\"shiny=1;\"\n";
        assert!(kernel_attributes(odd).unwrap_err().contains("unknown attribute"));
        let ptx = ".entry ws(\n\t.param .align 16 .b8 ws_param_0[128],\n\t.param .u64 ws_param_1\n)";
        let fixed = align_tma_params(ptx, &attrs.tma_params).unwrap();
        assert!(fixed.contains(".param .align 64 .b8 ws_param_0[128]"), "{fixed}");
        assert!(align_tma_params(ptx, &[("ws".into(), 1)]).is_err());
    }
}
