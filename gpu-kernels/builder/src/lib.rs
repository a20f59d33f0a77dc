//! `sluice-builder`: compiles a Rust kernel crate to PTX.
//!
//! This is the role `cuda_builder` plays in Rust-CUDA, for rustc's own LLVM
//! NVPTX backend (`nvptx64-nvidia-cuda`). A project's `build.rs` is one call:
//!
//! ```no_run
//! // build.rs of the host crate; the kernel crate is in ./kernels
//! fn main() {
//!     sluice_builder::embed("kernels");
//! }
//! ```
//!
//! and its host code one line (`sluice::include_kernels!(my_kernels)`, which
//! declares a typed handle per `#[kernel]`; see [`embed`]). Tools call the
//! [`Builder`] directly:
//!
//! ```no_run
//! # fn main() -> Result<(), sluice_builder::BuildError> {
//! use sluice_builder::{Arch, Builder};
//! let out = Builder::new("gpu-kernels").arch(Arch::SM_90).build()?;
//! println!("{} ({} kernels)", out.ptx.display(), out.kernels.len());
//! # Ok(()) }
//! ```
//!
//! and get one PTX file and the names of its kernel entries. Under the hood:
//!
//! 1. the toolchain is found ([`toolchain`]: Debian's `rustc-web` route or
//!    rustup's nightly route; ptxas and libdevice in the per-user tools folder that
//!    [`setup`] installs), or a [`BuildError`] names the missing piece and
//!    the command that installs it (`cargo sluice setup`, or `cargo xtask setup` inside
//!    sluice's own workspace);
//! 2. a nested `cargo rustc --crate-type cdylib --target nvptx64-nvidia-cuda
//!    -Zbuild-std=core` builds the kernel crate in a target folder of its own, one per
//!    kernel crate and architecture (sharing the outer one would deadlock on cargo's
//!    lock), with the outer build's environment scrubbed ([`toolchain::scrubbed_env`]).
//!    Inside a build script that folder is in the *calling* build's target folder, never
//!    in a dependency's source folder;
//! 3. the kernel crate gets `#![no_std]` and the features `#[kernel]` needs
//!    (`abi_ptx`, `asm_experimental_arch`, `stdarch_nvptx`) as crate attributes from
//!    the command line, so its `lib.rs` needs no boilerplate and still builds for the
//!    host (with std) for CPU tests;
//! 4. `core` is built with `-Cpanic=immediate-abort`: a failed bounds check is a
//!    compare and a `trap`, and no `core::fmt` lands in the PTX
//!    ([`Builder::panic_messages`] turns the messages back on);
//! 5. rustc hands the bitcode to `sluice-llbc` (`-C linker=`), which links it
//!    with libdevice, optimises it and lowers it to PTX with `llc`. Before the
//!    optimiser, the [range-check pass](range_checks) gives each loop whose bounds
//!    checks one test can decide a copy without them (built once with LLVM's C++
//!    headers where they are installed; without them the build says what it misses);
//! 6. the PTX is checked for unresolved libdevice calls and its `.entry`
//!    names are listed.
//!
//! [`check_ptx`] assembles PTX with `ptxas` and returns the resource report of every
//! function in it (registers, shared memory, stack, spills), kernels and device
//! functions alike.

#![warn(missing_docs)]
#![forbid(unsafe_code)]
// The examples are build scripts: their `fn main` is what they show.
#![allow(clippy::needless_doctest_main)]

mod arch;
mod builder;
mod embed;
mod error;
pub mod pins;
pub mod ptx;
pub mod range_checks;
pub mod setup;
pub mod toolchain;

pub use arch::{Arch, TARGET};
pub use builder::{
    install_linker, target_root_of, workspace_root, write_if_changed, Builder, Profile, PtxOutput, KERNEL_FEATURES,
};
pub use embed::{embed, embed_specific, kernel_handles_source, try_embed, Embedded, ENV_VARS};
pub use error::{BuildError, Tool};
pub use ptx::{check_ptx, deny_spills, deny_wgmma_serialization, FunctionKind, FunctionResources, KernelResources};
