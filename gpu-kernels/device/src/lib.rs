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
//! | [`abi`] | the parameter record `#[kernel]` leaves in the PTX, and the `Pod` checks of parameter types |
//! | [`selftest`] | a conformance self-test kernel body of the operations above and its host checker |
//! | [`cpu`] (host) | the CPU runtime: [`cpu::launch`] runs kernel bodies over a grid with CUDA's semantics |
//!
//! # What builds where
//!
//! * On `nvptx64-nvidia-cuda` (the kernels' target) everything above exists,
//!   and this crate provides the `#[panic_handler]`: it ends the kernel with
//!   `trap` (the launch fails with `CUDA_ERROR_LAUNCH_FAILED` on the host),
//!   without formatting anything, so a bounds check costs a compare and a
//!   predicated call; built with `--cfg sluice_panic_messages` it first prints
//!   the location (and a plain-string message) with `vprintf` ([`io`]).
//! * On the host everything above exists too, implemented by the **CPU
//!   runtime** ([`cpu`]): [`cpu::launch`] runs a kernel body once per thread
//!   of a launch with CUDA's semantics — blocks in parallel on rayon, the
//!   threads of a block as coroutines with real barriers, warp collectives with
//!   32-lane semantics, per-block shared memory, host atomics, `dprint!` on
//!   stdout, device panics as the launch's error. The device functions read the
//!   GPU thread the runtime is running, and panic when called outside a launch
//!   (the pure ones — math, atomics on pointers, the atomic types, fences,
//!   [`thread::Dim3`], [`warp::shfl_source`] — work anywhere). Inline PTX and
//!   `core::arch::nvptx` stay device-only; the `cpu` module says what the CPU
//!   does not model (timing, weak memory ordering, lockstep warps, hardware).
//!   So the same kernel code runs on both, and a kernel crate also compiles for
//!   the host for its shared parameter types and CPU reference code. The
//!   examples in these docs are device code, marked `ignore` (they need a
//!   launch); every one of them has a counterpart in the kernels of
//!   `gpu-kernels` (compiled for the device and assembled with `ptxas` in CI)
//!   or in this crate's CPU tests (`tests/cpu.rs`).
//!
//! # Safety at a glance
//!
//! A `#[kernel]` body is safe code (the macro compiles it as an ordinary safe function): it
//! can use everything safe below without `unsafe`, and cannot break memory safety. The
//! contract, point by point with the file that enforces it, is in the host crate's docs
//! (`sluice_host`, "Kernel-side contract").
//!
//! * Indices, barriers, fences, lane queries, math: safe. Block barriers are PTX's
//!   non-`.aligned` `barrier.sync`, defined in divergent code ([`sync`]).
//! * Shared arrays: `get`/`set`/atomics are safe (bounds-checked, `Pod`
//!   elements, PTX defines racy accesses); barriers are the author's duty
//!   ([`shared`] explains; the CPU backend's checking mode reports races).
//! * Warp `.sync` operations and named barriers: `unsafe` — PTX leaves them
//!   undefined when the lanes/threads named do not all take part.
//! * Atomics on raw pointers, `SharedPtr::read/write`: `unsafe` (the address
//!   must be valid). Atomic types: safe through `&self` (device and system
//!   scope); the block-scope types' methods are `unsafe` (only the block may
//!   touch the value).
//! * [`shared_static!`] variables: every access is an `unsafe` read of a
//!   `static mut`, as in Rust-CUDA; the memory is uninitialised (`MaybeUninit`).
//!   Making a [`shared::SharedStatic`] handle by hand is `unsafe`.
//! * Slices: per-thread `&mut` is safe ([`slice`](mod@slice)); arbitrary indexed writes
//!   are `unsafe`.
//! * `dprint!`: the format is checked against the arguments at compile time.

//! # Parity with Rust-CUDA's `cuda_std`
//!
//! `gpu-kernels/cuda-std` (package `sluice-cuda-std`, library `cuda_std`) puts
//! this crate under `cuda_std`'s module names and signatures, so that a
//! Rust-CUDA kernel crate ports by changing its dependency line; its crate docs
//! have the table from `cuda_std` names to the items here. What this crate
//! has no counterpart for: a device heap (`cuda_std::mem`'s allocator, `alloc`
//! on the device) and `f16`/`bf16` (`half`).

#![no_std]
// A few items exist on one target only (`math::libdevice` on the device, `cpu`
// on the host), so each build of these docs has links it cannot resolve: the
// host build (`cargo doc`) has everything else; the device build is
// `cargo doc --target nvptx64-nvidia-cuda -Zbuild-std=core` (with the kernel
// toolchain, as sluice-builder uses it).
#![allow(rustdoc::broken_intra_doc_links)]
#![cfg_attr(target_arch = "nvptx64", feature(stdarch_nvptx, asm_experimental_arch, core_intrinsics))]
#![cfg_attr(target_arch = "nvptx64", allow(internal_features))]

// The host build runs kernels on the CPU runtime (`cpu`), which needs std.
#[cfg(not(target_arch = "nvptx64"))]
extern crate std;

/// `unroll!(i in 0..N; max M => { body })`: `body` once for each `i` in `0..N`, each time
/// with `i` a constant — CUDA C++'s `#pragma unroll`, which the optimiser cannot decline.
/// `N` is a constant expression (it may name const generics), at most `M`, which is 2, 4,
/// 8, 16 or 32 (checked at compile time). Arrays indexed by `i` (MMA fragments and
/// accumulators) stay in registers, and independent iterations can be scheduled together.
///
/// ```
/// let mut acc = [0u32; 4];
/// sluice_device::unroll!(i in 0..4; max 4 => {
///     acc[i] = i as u32 * 10;
/// });
/// assert_eq!(acc, [0, 10, 20, 30]);
/// ```
#[macro_export]
macro_rules! unroll {
    ($i:ident in 0..$n:expr; max 2 => $body:block) => { $crate::unroll!(@go $i, $n, 2, $body, [0 1]) };
    ($i:ident in 0..$n:expr; max 4 => $body:block) => { $crate::unroll!(@go $i, $n, 4, $body, [0 1 2 3]) };
    ($i:ident in 0..$n:expr; max 8 => $body:block) => { $crate::unroll!(@go $i, $n, 8, $body, [0 1 2 3 4 5 6 7]) };
    ($i:ident in 0..$n:expr; max 16 => $body:block) => {
        $crate::unroll!(@go $i, $n, 16, $body, [0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15])
    };
    ($i:ident in 0..$n:expr; max 32 => $body:block) => {
        $crate::unroll!(@go $i, $n, 32, $body, [0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31])
    };
    (@go $i:ident, $n:expr, $max:literal, $body:block, [$($k:literal)*]) => {{
        let () = const { assert!($n <= $max, "unroll!: more iterations than its maximum") };
        $(
            if $k < $n {
                #[allow(clippy::identity_op, clippy::erasing_op)]
                let $i: usize = $k;
                $body
            }
        )*
    }};
}

pub mod abi;
pub mod async_copy;
pub mod atomic;
#[cfg(not(target_arch = "nvptx64"))]
pub mod cpu;

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
    pub use sluice_host::{Arg, ByValue, Checked, CpuEntry, KernelDecl, Mut, Ptr, PtrMut, Ref, Unchecked};
    /// What a kernel's CPU entry returns (named here so that the expansion in a `#![no_std]`
    /// kernel crate needs no `std` path of its own).
    pub type CpuResult = core::result::Result<(), std::string::String>;
}
pub mod half;
pub mod io;
pub mod math;
pub mod misc;
pub mod mma;
pub mod selftest;
pub mod shared;
pub mod slice;
pub mod spec;
pub mod sync;
pub mod thread;
pub mod tile;
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
