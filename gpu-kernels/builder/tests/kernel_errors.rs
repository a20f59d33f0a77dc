//! What the builder says about broken kernel crates. These need the kernel
//! toolchain (`cargo xtask setup` installs it; CI runs setup first).

use std::path::PathBuf;

use sluice_builder::toolchain::{Locations, Toolchain};
use sluice_builder::{BuildError, Builder};

/// Writes a standalone kernel crate (its own workspace) with `body` as lib.rs.
fn kernel_crate(name: &str, body: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::write(
        dir.join("Cargo.toml"),
        format!("[package]\nname = \"{name}\"\nversion = \"0.0.0\"\nedition = \"2021\"\n\n[workspace]\n"),
    )
    .unwrap();
    let prelude = "#![no_std]\n#![feature(abi_ptx)]\n\
                   #[panic_handler]\nfn panic(_: &core::panic::PanicInfo) -> ! { loop {} }\n";
    std::fs::write(dir.join("src/lib.rs"), format!("{prelude}{body}")).unwrap();
    dir
}

fn toolchain() -> Toolchain {
    let tools = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/sluice-tools");
    Toolchain::discover(&Locations { tools_dir: tools })
        .unwrap_or_else(|e| panic!("these tests need the kernel toolchain: {e}"))
}

fn shared_target() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("kernels")
}

#[test]
fn a_type_error_in_a_kernel_is_reported_with_rustcs_message() {
    let dir = kernel_crate(
        "sluice_broken_kernel",
        "#[no_mangle]\npub unsafe extern \"ptx-kernel\" fn k(out: *mut f32) { let x: u32 = 1.5f32; *out = x as f32; }\n",
    );
    let err = Builder::new(&dir).target_dir(shared_target()).build_with(&toolchain()).unwrap_err();
    let BuildError::KernelCompile { log, .. } = &err else { panic!("expected KernelCompile, got {err:?}") };
    assert!(log.contains("mismatched types"), "{log}");
    assert!(err.to_string().contains("did not compile for nvptx64-nvidia-cuda"), "{err}");
}

#[test]
fn a_libdevice_call_without_libdevice_is_named() {
    let dir = kernel_crate(
        "sluice_needs_libdevice",
        "extern \"C\" { fn __nv_expf(x: f32) -> f32; }\n\
         #[no_mangle]\npub unsafe extern \"ptx-kernel\" fn k(out: *mut f32) { unsafe { *out = __nv_expf(*out) } }\n",
    );
    let mut tc = toolchain();
    tc.libdevice = None;
    let err = Builder::new(&dir).target_dir(shared_target()).build_with(&tc).unwrap_err();
    let BuildError::LibdeviceMissing { functions } = &err else { panic!("expected LibdeviceMissing, got {err:?}") };
    assert_eq!(functions, &["__nv_expf"]);
    assert!(err.to_string().contains("cargo xtask setup"), "{err}");
}

#[test]
fn a_good_crate_lists_its_entries() {
    let dir = kernel_crate(
        "sluice_good_kernel",
        "#[no_mangle]\npub unsafe extern \"ptx-kernel\" fn twice(out: *mut f32) { unsafe { *out *= 2.0 } }\n\
         #[no_mangle]\npub unsafe extern \"ptx-kernel\" fn zero(out: *mut f32) { unsafe { *out = 0.0 } }\n",
    );
    let out = Builder::new(&dir).target_dir(shared_target()).build_with(&toolchain()).unwrap();
    assert_eq!(out.kernels, ["twice", "zero"]);
    let ptx = std::fs::read_to_string(&out.ptx).unwrap();
    assert!(ptx.contains(".target sm_90"), "{ptx}");
    assert!(out.sources.iter().any(|s| s.ends_with("src/lib.rs")), "{:?}", out.sources);
}
