//! Every missing piece of the kernel toolchain is reported as one clear
//! message that names the piece and the command that installs it.
//!
//! These tests change environment variables, so they live in one test
//! function (one process, no other test thread reading the environment).

use std::path::Path;

use sluice_builder::toolchain::{self, KernelRustc, Locations};
use sluice_builder::{BuildError, Builder, Tool};

fn set(var: &str, value: &str) {
    std::env::set_var(var, value);
}

#[test]
fn each_missing_piece_names_itself_and_its_fix() {
    // A compiler that does not exist.
    let err = KernelRustc::probe(Path::new("/nonexistent/bin/rustc")).unwrap_err();
    assert!(matches!(err, BuildError::ToolMissing { tool: Tool::KernelRustc, .. }), "{err:?}");
    let msg = err.to_string();
    assert!(msg.contains("kernel compiler"), "{msg}");
    assert!(msg.contains("/nonexistent/bin/rustc"), "{msg}");
    assert!(msg.contains("cargo xtask setup"), "{msg}");
    assert!(msg.contains("apt-get install rustc-web=1.96.0+dfsg1-1~deb12u2 rust-web-src="), "{msg}");
    assert!(msg.contains("rustup toolchain install 1.96.0 --component rust-src llvm-tools"), "{msg}");

    // A "compiler" that is not a rustc at all: unusable, not a raw error.
    let err = KernelRustc::probe(Path::new("/bin/false")).unwrap_err();
    assert!(matches!(err, BuildError::ToolUnusable { tool: Tool::KernelRustc, .. }), "{err:?}");
    assert!(err.to_string().contains("cargo xtask setup"), "{err}");

    // In a user's project (a build script or a shell outside sluice's workspace) the same
    // fix names `cargo sluice setup`, the command that exists there.
    let manifest_dir = std::env::var_os("CARGO_MANIFEST_DIR").unwrap();
    set("CARGO_MANIFEST_DIR", std::env::temp_dir().to_str().unwrap());
    let msg = KernelRustc::probe(Path::new("/nonexistent/bin/rustc")).unwrap_err().to_string();
    assert!(msg.contains("run `cargo sluice setup`") && !msg.contains("xtask"), "{msg}");
    let msg = toolchain::find_ptxas(&Locations { tools_dir: std::env::temp_dir().join("no-such-tools") })
        .map(|p| format!("found {}", p.display()))
        .unwrap_or_else(|e| e.to_string());
    assert!(msg.starts_with("found") || msg.contains("run `cargo sluice setup`"), "{msg}");
    std::env::set_var("CARGO_MANIFEST_DIR", manifest_dir);

    // The builder, pointed at a missing compiler, fails before running cargo.
    set("SLUICE_KERNEL_RUSTC", "/nonexistent/bin/rustc");
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../gpu-kernels");
    let err = Builder::new(&crate_dir).build().unwrap_err();
    assert!(matches!(err, BuildError::ToolMissing { tool: Tool::KernelRustc, .. }), "{err:?}");
    std::env::remove_var("SLUICE_KERNEL_RUSTC");

    // LLVM tools pointed at an empty folder.
    let empty = std::env::temp_dir().join(format!("sluice-empty-{}", std::process::id()));
    std::fs::create_dir_all(&empty).unwrap();
    set("SLUICE_LLVM_BIN", empty.to_str().unwrap());
    if let Ok(rustc) = toolchain::find_kernel_rustc() {
        let err = toolchain::find_llvm_bin(&rustc).unwrap_err();
        assert!(matches!(err, BuildError::ToolMissing { tool: Tool::LlvmTools, .. }), "{err:?}");
        assert!(err.to_string().contains("llvm-link, opt and llc"), "{err}");
    }
    std::env::remove_var("SLUICE_LLVM_BIN");

    // ptxas and libdevice pointed at files that do not exist.
    let loc = Locations { tools_dir: empty.clone() };
    set("SLUICE_PTXAS", "/nonexistent/ptxas");
    let err = toolchain::find_ptxas(&loc).unwrap_err();
    assert!(matches!(err, BuildError::ToolMissing { tool: Tool::Ptxas, .. }), "{err:?}");
    let msg = err.to_string();
    assert!(msg.contains("ptxas") && msg.contains("cargo xtask setup") && msg.contains("nvidia-cuda-nvcc"), "{msg}");
    std::env::remove_var("SLUICE_PTXAS");
    set("SLUICE_LIBDEVICE", "/nonexistent/libdevice.10.bc");
    let err = toolchain::find_libdevice(&loc).unwrap_err();
    assert!(matches!(err, BuildError::ToolMissing { tool: Tool::Libdevice, .. }), "{err:?}");
    std::env::remove_var("SLUICE_LIBDEVICE");
    std::fs::remove_dir_all(&empty).unwrap();
}
