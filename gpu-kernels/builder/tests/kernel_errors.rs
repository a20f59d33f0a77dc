//! What the builder makes of kernel crates, broken and whole: its error messages, the
//! crate attributes it adds, cheap panics, one nested target folder per crate. These
//! need the kernel toolchain (`cargo xtask setup` installs it; CI runs setup first).

use std::path::{Path, PathBuf};

use sluice_builder::toolchain::{Locations, Toolchain};
use sluice_builder::{BuildError, Builder};

/// Writes a standalone kernel crate (its own workspace) with `body` as lib.rs.
fn kernel_crate(name: &str, body: &str) -> PathBuf {
    let prelude = "#![no_std]\n#![feature(abi_ptx)]\n\
                   #[panic_handler]\nfn panic(_: &core::panic::PanicInfo) -> ! { loop {} }\n";
    kernel_crate_in(&PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name), name, &format!("{prelude}{body}"))
}

/// Writes a standalone kernel crate named `name` into `dir`, `lib` its whole lib.rs.
fn kernel_crate_in(dir: &Path, name: &str, lib: &str) -> PathBuf {
    let dir = dir.to_path_buf();
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::write(
        dir.join("Cargo.toml"),
        format!("[package]\nname = \"{name}\"\nversion = \"0.0.0\"\nedition = \"2021\"\n\n[workspace]\n"),
    )
    .unwrap();
    std::fs::write(dir.join("src/lib.rs"), lib).unwrap();
    dir
}

/// A panic handler that formats nothing (what a crate without sluice-device needs).
const PANIC_HANDLER: &str = "#[panic_handler]\nfn panic(_: &core::panic::PanicInfo) -> ! { loop {} }\n";

fn toolchain() -> Toolchain {
    // The per-user tools folder that `cargo xtask setup` installs into.
    Toolchain::discover(&Locations::default()).unwrap_or_else(|e| panic!("these tests need the kernel toolchain: {e}"))
}

fn shared_target() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("kernels")
}

#[test]
fn a_type_error_in_a_kernel_is_reported_with_rustcs_message() {
    let dir = kernel_crate(
        "sluice_broken_kernel",
        "#[unsafe(no_mangle)]\npub unsafe extern \"ptx-kernel\" fn k(out: *mut f32) { let x: u32 = 1.5f32; *out = x as f32; }\n",
    );
    let err = Builder::new(&dir).target_dir(shared_target()).build_with(&toolchain()).unwrap_err();
    let BuildError::KernelCompile { log, log_file, .. } = &err else { panic!("expected KernelCompile, got {err:?}") };
    assert!(log.contains("mismatched types"), "{log}");
    assert!(err.to_string().contains("did not compile for nvptx64-nvidia-cuda"), "{err}");
    // The whole log, uncut, and the same in a file the message names.
    assert!(log.contains("Compiling sluice_broken_kernel") && log.contains("could not compile"), "{log}");
    let file = log_file.as_ref().expect("the log is written to a file");
    assert_eq!(&std::fs::read_to_string(file).unwrap().trim_end(), log);
    assert!(err.to_string().contains(&file.display().to_string()), "{err}");
}

#[test]
fn a_crate_without_boilerplate_gets_no_std_and_the_features_from_the_builder() {
    // No `#![no_std]`, no `#![feature(abi_ptx)]`: the builder adds both for the device build.
    let dir = kernel_crate_in(
        &PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("sluice_plain_kernel"),
        "sluice_plain_kernel",
        &format!(
            "#[cfg(target_arch = \"nvptx64\")]\n{PANIC_HANDLER}\
             #[cfg(target_arch = \"nvptx64\")]\n#[unsafe(no_mangle)]\n\
             pub unsafe extern \"ptx-kernel\" fn plain(out: *mut f32) {{ unsafe {{ *out = 1.0 }} }}\n"
        ),
    );
    let out = Builder::new(&dir).target_dir(shared_target()).build_with(&toolchain()).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(out.kernels, ["plain"]);
    assert_eq!((out.package.as_str(), out.lib_name.as_str()), ("sluice_plain_kernel", "sluice_plain_kernel"));
}

#[test]
fn a_kernel_crate_that_uses_std_is_told_it_is_no_std_on_the_gpu() {
    let dir = kernel_crate_in(
        &PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("sluice_std_kernel"),
        "sluice_std_kernel",
        &format!(
            "#[cfg(target_arch = \"nvptx64\")]\n{PANIC_HANDLER}\
             #[unsafe(no_mangle)]\npub extern \"ptx-kernel\" fn k() {{ let v: std::vec::Vec<u32> = std::vec::Vec::new(); \
             core::hint::black_box(v); }}\n"
        ),
    );
    let err = Builder::new(&dir).target_dir(shared_target()).build_with(&toolchain()).unwrap_err();
    let BuildError::KernelCompile { hint, .. } = &err else { panic!("expected KernelCompile, got {err:?}") };
    let hint = hint.as_deref().unwrap_or_else(|| panic!("no hint in {err}"));
    assert!(hint.contains("no_std") && hint.contains("core::"), "{hint}");
    assert!(err.to_string().contains("hint: kernel crates are `no_std` on the GPU"), "{err}");
}

const BOUNDS_CHECKED: &str =
    "#[unsafe(no_mangle)]\npub unsafe extern \"ptx-kernel\" fn pick(out: *mut f32, x: *const f32, n: usize, i: usize) {\n\
    let x = unsafe { core::slice::from_raw_parts(x, n) };\n    unsafe { *out = x[i] * 2.0 };\n}\n";

#[test]
fn a_bounds_check_costs_a_compare_and_a_trap_by_default() {
    let dir = kernel_crate("sluice_bounds_kernel", BOUNDS_CHECKED);
    let out = Builder::new(&dir).target_dir(shared_target()).build_with(&toolchain()).unwrap();
    let ptx = std::fs::read_to_string(&out.ptx).unwrap();
    assert!(ptx.contains("trap;"), "{ptx}");
    // No panic machinery left: no device function at all, so no `core::fmt`.
    assert!(!ptx.contains(".func"), "a device function is left:\n{ptx}");
    assert!(!ptx.contains("panicking"), "{ptx}");
}

#[test]
fn panic_messages_keep_the_panic_path() {
    let dir = kernel_crate("sluice_bounds_messages", BOUNDS_CHECKED);
    let target = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("kernels-panic-messages");
    let out = Builder::new(&dir).target_dir(target).panic_messages(true).build_with(&toolchain()).unwrap();
    let ptx = std::fs::read_to_string(&out.ptx).unwrap();
    assert!(ptx.contains("panic_bounds_check"), "{ptx}");
}

#[test]
fn two_kernel_crates_of_the_same_name_build_in_two_folders() {
    let base = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("same-name");
    let (a, b) = (base.join("a").join("kernels"), base.join("b").join("kernels"));
    assert_ne!(Builder::new(&a).nested_target_dir(), Builder::new(&b).nested_target_dir());
    let nested = Builder::new(&a).nested_target_dir();
    assert!(
        nested.ends_with("sm_90")
            && nested.parent().unwrap().file_name().unwrap().to_string_lossy().starts_with("kernels-"),
        "{}",
        nested.display()
    );
    assert_ne!(Builder::new(&a).nested_target_dir(), Builder::new(&a).panic_messages(true).nested_target_dir());
}

#[test]
fn embed_outside_a_build_script_says_where_it_runs() {
    // Tests run with CARGO_MANIFEST_DIR but without OUT_DIR.
    let err = sluice_builder::try_embed("kernels").unwrap_err();
    assert!(matches!(err, BuildError::NotInBuildScript { .. }), "{err:?}");
    assert!(err.to_string().contains("build script"), "{err}");
}

#[test]
fn a_libdevice_call_without_libdevice_is_named() {
    let dir = kernel_crate(
        "sluice_needs_libdevice",
        "extern \"C\" { fn __nv_expf(x: f32) -> f32; }\n\
         #[unsafe(no_mangle)]\npub unsafe extern \"ptx-kernel\" fn k(out: *mut f32) { unsafe { *out = __nv_expf(*out) } }\n",
    );
    let mut tc = toolchain();
    tc.libdevice = None;
    let err = Builder::new(&dir).target_dir(shared_target()).build_with(&tc).unwrap_err();
    let BuildError::LibdeviceMissing { functions, .. } = &err else { panic!("expected LibdeviceMissing, got {err:?}") };
    assert_eq!(functions, &["__nv_expf"]);
    assert!(err.to_string().contains("cargo xtask setup"), "{err}");
}

#[test]
fn a_good_crate_lists_its_entries() {
    let dir = kernel_crate(
        "sluice_good_kernel",
        "#[unsafe(no_mangle)]\npub unsafe extern \"ptx-kernel\" fn twice(out: *mut f32) { unsafe { *out *= 2.0 } }\n\
         #[unsafe(no_mangle)]\npub unsafe extern \"ptx-kernel\" fn zero(out: *mut f32) { unsafe { *out = 0.0 } }\n",
    );
    let out = Builder::new(&dir).target_dir(shared_target()).build_with(&toolchain()).unwrap();
    assert_eq!(out.kernels, ["twice", "zero"]);
    let ptx = std::fs::read_to_string(&out.ptx).unwrap();
    assert!(ptx.contains(".target sm_90"), "{ptx}");
    assert!(out.sources.iter().any(|s| s.ends_with("src/lib.rs")), "{:?}", out.sources);
}

#[test]
fn a_dependency_that_uses_only_core_gets_no_std_when_listed() {
    let base = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("sluice_no_std_dep");
    // A dependency that uses only `core` but never says `no_std`.
    std::fs::create_dir_all(base.join("tiny/src")).unwrap();
    std::fs::write(
        base.join("tiny/Cargo.toml"),
        "[package]\nname = \"tiny\"\nversion = \"0.0.0\"\nedition = \"2021\"\n",
    )
    .unwrap();
    std::fs::write(base.join("tiny/src/lib.rs"), "pub fn twice(x: f32) -> f32 { x * 2.0 }\n").unwrap();
    let lib = format!(
        "#[cfg(target_arch = \"nvptx64\")]\n{PANIC_HANDLER}#[unsafe(no_mangle)]\n\
         pub unsafe extern \"ptx-kernel\" fn k(out: *mut f32) {{ unsafe {{ *out = tiny::twice(*out) }} }}\n"
    );
    let dir = kernel_crate_in(&base.join("kernels"), "sluice_no_std_dep", &lib);
    let manifest = |extra: &str| {
        format!(
            "[package]\nname = \"sluice_no_std_dep\"\nversion = \"0.0.0\"\nedition = \"2021\"\n\n\
             [dependencies]\ntiny = {{ path = \"../tiny\" }}\n{extra}\n[workspace]\n"
        )
    };
    std::fs::write(dir.join("Cargo.toml"), manifest("")).unwrap();
    let err = Builder::new(&dir).target_dir(shared_target()).build_with(&toolchain()).unwrap_err();
    assert!(err.to_string().contains("no-std-dependencies"), "{err}");
    std::fs::write(dir.join("Cargo.toml"), manifest("\n[package.metadata.sluice]\nno-std-dependencies = [\"tiny\"]\n"))
        .unwrap();
    let out = Builder::new(&dir).target_dir(shared_target()).build_with(&toolchain()).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(out.kernels, ["k"]);
}

/// A kernel entry written in module assembly (`global_asm!`, a safe macro), with a parameter
/// record of its own making, would be launched safely under a `#[kernel]` declaration of the
/// same name that says nothing true of it: the linker refuses it (issue 19's review).
#[test]
fn an_entry_written_in_global_asm_is_not_linked() {
    let dir = kernel_crate_in(
        &PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("sluice_asm_entry_kernel"),
        "sluice_asm_entry_kernel",
        &format!(
            "#[cfg(target_arch = \"nvptx64\")]\n{PANIC_HANDLER}\
             #[cfg(target_arch = \"nvptx64\")]\n\
             core::arch::global_asm!(\".visible .entry smash(.param .u64 p)\\n{{{{ ret; }}}}\");\n"
        ),
    );
    let err = Builder::new(&dir).target_dir(shared_target()).build_with(&toolchain()).unwrap_err();
    let text = err.to_string();
    let BuildError::KernelCompile { log, .. } = &err else { panic!("expected KernelCompile, got {err:?}") };
    assert!(log.contains("module-level assembly") && log.contains("declares a kernel entry"), "{text}\n{log}");
}

/// A hand-written `#[unsafe(no_mangle)] extern "ptx-kernel"` entry needs `unsafe(no_mangle)` in every
/// edition (edition 2021 here): the builder denies `unsafe_attr_outside_unsafe` for kernel
/// crates, so such an entry, which the host would launch safely, carries its author's `unsafe`.
#[test]
fn a_hand_written_entry_needs_an_unsafe_attribute_in_edition_2021() {
    let dir = kernel_crate_in(
        &PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("sluice_no_mangle_kernel"),
        "sluice_no_mangle_kernel",
        &format!(
            "#[cfg(target_arch = \"nvptx64\")]\n{PANIC_HANDLER}\
             #[cfg(target_arch = \"nvptx64\")]\n#[no_mangle]\n\
             pub extern \"ptx-kernel\" fn smash(victim: &mut f32) {{ *victim = 666.0; }}\n"
        ),
    );
    let err = Builder::new(&dir).target_dir(shared_target()).build_with(&toolchain()).unwrap_err();
    let BuildError::KernelCompile { log, .. } = &err else { panic!("expected KernelCompile, got {err:?}") };
    assert!(log.contains("unsafe attribute used without unsafe"), "{log}");
}
