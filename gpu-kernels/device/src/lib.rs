//! `sluice-device`: the device-side standard library of sluice kernels.
//!
//! `cuda_std` (Rust-CUDA) is tied to `rustc_codegen_nvvm` and does not work with
//! rustc's own NVPTX backend, which sluice uses; this crate has the same roles.
//!
//! # What builds where
//!
//! * On `nvptx64-nvidia-cuda` (the kernels' target) everything is here: thread
//!   and block indices ([`thread`]), and the panic handler, which ends the
//!   kernel with a `trap` (the launch then fails with an illegal-instruction
//!   error on the host).
//! * On the host the crate compiles to the plain-Rust parts only, so that a
//!   kernel crate that depends on it can also be compiled for the host (for its
//!   shared parameter types and CPU reference code).

#![no_std]
#![cfg_attr(target_arch = "nvptx64", feature(stdarch_nvptx))]

pub mod thread;

#[cfg(target_arch = "nvptx64")]
#[panic_handler]
fn panic(_info: &core::panic::PanicInfo<'_>) -> ! {
    // SAFETY: `trap` has no preconditions; it aborts this kernel launch.
    unsafe { core::arch::nvptx::trap() }
}
