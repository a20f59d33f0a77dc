//! Compiles `gpu-kernels` to PTX and embeds it (see `sluice-builder`).
use std::path::PathBuf;

fn main() {
    let root = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    println!("cargo:rerun-if-env-changed=SLUICE_ARCH");
    for var in ["SLUICE_KERNEL_RUSTC", "SLUICE_LLVM_BIN", "SLUICE_LIBDEVICE"] {
        println!("cargo:rerun-if-env-changed={var}");
    }
    let arch = match std::env::var("SLUICE_ARCH").ok().filter(|a| !a.is_empty()) {
        Some(a) => a.parse().unwrap_or_else(|e| fail(e)),
        None => sluice_builder::Arch::SM_90,
    };
    let out_dir = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let built = sluice_builder::Builder::new(root.join("gpu-kernels"))
        .arch(arch)
        .copy_to(out_dir.join("gpu_kernels.ptx"))
        .build()
        .unwrap_or_else(|e| fail(e));
    for src in built.sources.iter().filter(|s| s.starts_with(&root)) {
        println!("cargo:rerun-if-changed={}", src.display());
    }
    println!("cargo:rerun-if-changed=gpu-kernels/Cargo.toml");
    println!("cargo:rustc-env=SLUICE_KERNELS_PTX={}", built.ptx.display());
    println!("cargo:rustc-env=SLUICE_KERNELS_ARCH={arch}");
    println!("cargo:rustc-env=SLUICE_KERNELS_ENTRIES={}", built.kernels.join(","));
}

fn fail(e: impl std::fmt::Display) -> ! {
    // One clear message (cargo shows build-script stderr on failure), not a panic backtrace.
    eprintln!("{e}");
    std::process::exit(1)
}
