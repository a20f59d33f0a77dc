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
//!    drops the rest);
//! 3. `llc --mcpu=sm_XX`: bitcode to PTX.
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
}

fn parse(mut argv: impl Iterator<Item = String>) -> Result<Args, String> {
    let mut args = Args {
        cpu: None,
        features: None,
        output: None,
        opt_level: "3".into(),
        exports: Vec::new(),
        inputs: Vec::new(),
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
    let linked = out.with_extension("linked.bc");
    let optimized = out.with_extension("opt.bc");
    let symbols = out.with_extension("exports.txt");

    let mut cmd = tool(&bin, "llvm-link");
    cmd.arg("--ignore-non-bitcode").args(&args.inputs).arg("-o").arg(&linked);
    run(cmd, "llvm-link")?;

    let mut list = args.exports.join("\n");
    list.push('\n');
    std::fs::write(&symbols, list).map_err(|e| format!("writing {}: {e}", symbols.display()))?;

    let level = match args.opt_level.as_str() {
        "0" | "1" | "2" | "3" | "s" | "z" => args.opt_level.clone(),
        other => return Err(format!("unknown optimisation level -O{other}")),
    };
    // Internalize first so that the optimiser sees every non-kernel function as
    // private: it can then inline libdevice and drop what is unused.
    let passes = format!("internalize,globaldce,default<O{}>", if level == "0" { "1" } else { &level });
    let mut cmd = tool(&bin, "opt");
    cmd.arg(&linked)
        .arg("-o")
        .arg(&optimized)
        .arg("-mtriple=nvptx64-nvidia-cuda")
        .arg(format!("--internalize-public-api-file={}", symbols.display()))
        .arg(format!("--passes={passes}"))
        .arg("--strip-debug");
    if let Some(cpu) = &args.cpu {
        cmd.arg(format!("-mcpu={cpu}"));
    }
    run(cmd, "opt")?;

    let mut cmd = tool(&bin, "llc");
    cmd.arg(&optimized).arg("-o").arg(&out).arg("-O3");
    if let Some(cpu) = &args.cpu {
        cmd.arg(format!("--mcpu={cpu}"));
    }
    if let Some(features) = &args.features {
        cmd.arg(format!("--mattr={features}"));
    }
    run(cmd, "llc")?;
    for tmp in [&linked, &optimized, &symbols] {
        let _ = std::fs::remove_file(tmp);
    }
    Ok(())
}

fn main() {
    let result = parse(std::env::args().skip(1)).and_then(link);
    if let Err(e) = result {
        eprintln!("sluice-llbc: {e}");
        exit(1);
    }
}
