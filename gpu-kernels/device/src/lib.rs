//! `sluice-device`: the device-side standard library of sluice kernels.
//!
//! `cuda_std` (Rust-CUDA) is tied to `rustc_codegen_nvvm` and does not work with
//! rustc's own NVPTX backend, which sluice uses; this crate has the same roles,
//! built on `core::arch::nvptx`, inline PTX (`asm!`) and NVIDIA's libdevice.
//!
//! | module | what it offers |
//! | --- | --- |
//! | [`thread`] | `threadIdx`/`blockIdx`/`blockDim`/`gridDim` in 1/2/3-D, global indices (64-bit, and 32-bit as [`thread::Dim2`]/[`thread::Dim3`]), linear ranks, `nanosleep` |
//! | [`sync`] | `sync_threads` and its count/and/or forms, named barriers, fences at block/device/system scope |
//! | [`shared`] | static shared arrays ([`shared_array!`], sized by any constant, also as `*mut T`), `static mut` in shared memory ([`shared_static!`]), the dynamic shared region, `ld/st/atom.shared` access |
//! | [`warp`] | lane id and masks, shuffles (idx/up/down/xor; 8- to 128-bit values; with a segment width and the in-range flag), votes, match, `redux`, warp sum |
//! | [`atomic`] | add/min/max/and/or/xor/exchange/CAS on global and shared memory with a [`MemoryScope`]; atomic types (`AtomicU32` … `AtomicF64`, block/system twins) with acquire/release/seq-cst orderings |
//! | [`math`] | `f32`/`f64` math through libdevice (`exp`, `sin_cos`, `erf`, Bessel, `normcdfinv`, `erfcx`, ...), `*_fast` approximations side by side with their exact twins |
//! | [`misc`] | `clock`, `clock64`, the global timer, SM id, `trap` |
//! | [`io`] | [`dprint!`]/[`dprintln!`] through `vprintf` (format checked at compile time), the panic handler (trap; messages with `--cfg sluice_panic_messages`) |
//! | [`slice`](mod@slice) | kernel slice parameters: safe per-thread `&mut` element access, `unsafe` general writes |
//! | [`selftest`] | a conformance self-test kernel body of the operations above and its host checker |
//!
//! # What builds where
//!
//! * On `nvptx64-nvidia-cuda` (the kernels' target) everything above exists,
//!   and this crate provides the `#[panic_handler]`: it ends the kernel with
//!   `trap` (the launch fails with an illegal-instruction error on the host),
//!   without formatting anything, so a bounds check costs a compare and a
//!   predicated call; built with `--cfg sluice_panic_messages` it first prints
//!   the location (and a plain-string message) with `vprintf` ([`io`]).
//! * On the host the crate compiles to its plain-Rust parts only ([`MemoryScope`],
//!   [`thread::Dim3`], [`thread::Dim2`], [`thread::WARP_SIZE`], [`warp::FULL_MASK`],
//!   the pure rules of [`warp::shfl_source`] and [`atomic::ordering`], the
//!   atomic types (on `core::sync::atomic`), the [`shared::SharedPtr`] and
//!   [`slice::DeviceSliceMut`] types, and [`selftest::check`]), so that a
//!   kernel crate depending on it also compiles for the host (for its shared
//!   parameter types and CPU reference code). The device functions are absent
//!   there, so the examples in these docs are device code, marked `ignore`;
//!   every one of them has a counterpart in the kernels of `gpu-kernels`,
//!   which are compiled for the device and assembled with `ptxas` in CI.
//!
//! # Safety at a glance
//!
//! * Indices, barriers, fences, lane queries, math: safe.
//! * Shared arrays: `get`/`set`/atomics are safe (bounds-checked, `Pod`
//!   elements, PTX defines racy accesses); barriers are the author's duty
//!   ([`shared`] explains).
//! * Warp `.sync` operations and named barriers: `unsafe` — PTX leaves them
//!   undefined when the lanes/threads named do not all take part.
//! * Atomics on raw pointers, `SharedPtr::read/write`: `unsafe` (the address
//!   must be valid). Atomic types: safe through `&self` (device and system
//!   scope); the block-scope types' methods are `unsafe` (only the block may
//!   touch the value).
//! * [`shared_static!`] variables: every access is an `unsafe` read of a
//!   `static mut`, as in Rust-CUDA; the memory is uninitialised (`MaybeUninit`).
//! * Slices: per-thread `&mut` is safe ([`slice`](mod@slice)); arbitrary indexed writes
//!   are `unsafe`.
//!
//! # Parity with Rust-CUDA's `cuda_std`
//!
//! `gpu-kernels/cuda-std` (package `sluice-cuda-std`, library `cuda_std`) puts
//! this crate under `cuda_std`'s module names and signatures, so that a
//! Rust-CUDA kernel crate ports by changing its dependency line; its crate docs
//! have the table from `cuda_std` names to the items here. What this crate
//! has no counterpart for: a device heap (`cuda_std::mem`'s allocator, `alloc`
//! on the device) and `f16`/`bf16` (`half`).

#![no_std]
// The device API exists only for nvptx64, so the host build of these docs
// cannot resolve links to it; the complete docs are built for the device:
// `cargo doc --target nvptx64-nvidia-cuda -Zbuild-std=core` (with the kernel
// toolchain, as sluice-builder uses it).
#![cfg_attr(not(target_arch = "nvptx64"), allow(rustdoc::broken_intra_doc_links))]
#![cfg_attr(
    target_arch = "nvptx64",
    feature(stdarch_nvptx, asm_experimental_arch, core_intrinsics)
)]
#![cfg_attr(target_arch = "nvptx64", allow(internal_features))]

pub mod atomic;

/// `#[kernel]`: see `sluice-macros`. Re-exported so that a kernel crate needs only this crate.
pub use sluice_macros::kernel;

/// Called by every `#[kernel]` entry: it makes the kernel crate link this crate, and with
/// it the `#[panic_handler]`, even when the kernel names nothing else of it. Not an API.
#[doc(hidden)]
#[inline(always)]
pub fn __linked() {}

/// What `#[kernel]`'s host expansion names (the launch descriptor traits of the host
/// library). Not an API: a kernel crate depends on `sluice-device` alone, and the macro
/// reaches the host library through here.
#[cfg(not(target_arch = "nvptx64"))]
#[doc(hidden)]
pub mod __host {
    pub use sluice_host::{Arg, ByValue, Checked, KernelDecl, Mut, Ptr, PtrMut, Ref, Unchecked};
}
pub mod io;
pub mod misc;
pub mod selftest;
pub mod math;
pub mod shared;
pub mod slice;
pub mod sync;
pub mod thread;
pub mod warp;

/// Which threads an atomic operation or a fence is guaranteed against,
/// from the cheapest to the widest (PTX's `.cta`, `.gpu`, `.sys`).
///
/// Named `MemoryScope`, not `Scope`, so that it is never confused with the host's
/// `sluice::Scope` (a `scope` of lanes): this one is a memory-model term.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MemoryScope {
    /// The threads of this block (`.cta`). Enough for shared memory, and for
    /// global memory that only this block touches.
    Block,
    /// Every thread on this device (`.gpu`): what CUDA's `atomicAdd` and
    /// `__threadfence()` give. Use it for global memory shared between blocks.
    Device,
    /// Also the host and other devices (`.sys`), for mapped or managed memory.
    System,
}
