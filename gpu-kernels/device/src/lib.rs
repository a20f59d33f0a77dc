//! `sluice-device`: the device-side standard library of sluice kernels.
//!
//! `cuda_std` (Rust-CUDA) is tied to `rustc_codegen_nvvm` and does not work with
//! rustc's own NVPTX backend, which sluice uses; this crate has the same roles,
//! built on `core::arch::nvptx`, inline PTX (`asm!`) and NVIDIA's libdevice.
//!
//! | module | what it offers |
//! | --- | --- |
//! | [`thread`] | `threadIdx`/`blockIdx`/`blockDim`/`gridDim` in 1/2/3-D, global indices, linear ranks |
//! | [`sync`] | `sync_threads` and its count/and/or forms, named barriers, fences at block/device/system scope |
//! | [`shared`] | static shared arrays ([`shared_array!`]), the dynamic shared region, `ld/st/atom.shared` access |
//! | [`warp`] | lane id and masks, shuffles (idx/up/down/xor, 32- and 64-bit), votes, match, `redux`, warp sum |
//! | [`atomic`] | add/min/max/and/or/xor/exchange/CAS on global and shared memory, with [`MemoryScope`] |
//! | [`math`] | `f32`/`f64` math through libdevice (`exp`, `sin_cos`, `erf`, ...), `*_fast` approximations |
//! | [`io`] | [`dprint!`]/[`dprintln!`] through `vprintf` (format checked at compile time), the panic handler |
//! | [`slice`](mod@slice) | kernel slice parameters: safe per-thread `&mut` element access, `unsafe` general writes |
//!
//! # What builds where
//!
//! * On `nvptx64-nvidia-cuda` (the kernels' target) everything above exists,
//!   and this crate provides the `#[panic_handler]`: it prints the panic's
//!   location (and message, when it is a plain string) with `vprintf`, then
//!   ends the kernel with `trap` (the launch fails with an illegal-instruction
//!   error on the host).
//! * On the host the crate compiles to its plain-Rust parts only ([`MemoryScope`],
//!   [`thread::Dim3`], [`thread::WARP_SIZE`], [`warp::FULL_MASK`], the
//!   [`shared::SharedPtr`] and [`slice::DeviceSliceMut`] types), so that a
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
//!   must be valid).
//! * Slices: per-thread `&mut` is safe ([`slice`](mod@slice)); arbitrary indexed writes
//!   are `unsafe`.
//!
//! # Parity with Rust-CUDA's `cuda_std`
//!
//! | `cuda_std` | what it has | sluice-device |
//! | --- | --- | --- |
//! | `thread` | `thread_idx_x..z`, `block_idx_*`, `block_dim_*`, `grid_dim_*`, `thread_idx()` etc. as `UVec3`, `index_1d/2d/3d`, `sync_threads`, `sync_threads_count/and/or`, `nanosleep` | [`thread`]: all, `Dim3` instead of `glam::UVec3`, plus `global_rank`, `block_rank`, `total_threads`; barriers in [`sync`]. Missing: `nanosleep` |
//! | `shared` | `#[address_space(shared)] static mut`, `shared_array!`, `dynamic_shared_mem` | [`shared_array!`] and [`shared::dynamic_shared`] (typed handles with safe `get`/`set` instead of `static mut`) |
//! | `warp` | `sync_warp`, `warp_shuffle_{idx,up,down,xor}`, `warp_vote_{any,all,ballot}`, `match_any/all`, `activemask`, lane masks | [`warp`]: all, plus `redux.sync` reductions and `sum_f32` |
//! | `atomic` | `AtomicF32/F64` wrapper types with `fetch_add` etc. at device/block/system scope, low-level `atomic::intrinsics` | [`atomic`]: the same operations as functions on pointers with a [`MemoryScope`] argument (relaxed order), and safe methods on shared arrays. Missing: the `Atomic*` wrapper types and acquire/release orderings on the RMW itself (use [`sync::fence_acq_rel`]) |
//! | `mem` / memory fences (`cuda_std::mem`, `atomic::fence_*`) | `__threadfence*` equivalents | [`sync::fence`] (sc, = `__threadfence*`) and [`sync::fence_acq_rel`] at block/device/system scope |
//! | `float` (`GpuFloat`) / `intrinsics` | float methods through libdevice, fast intrinsics | [`math::DeviceFloat`] (std names, ~50 functions) and [`math::FastFloat`] (`*_fast`); raw [`math::libdevice`] declarations |
//! | `io` | `print!`/`println!` (Rust `{}` formatting, via `vprintf`) | [`dprint!`]/[`dprintln!`]: C formats, checked against the argument types at compile time; no `core::fmt` on the device |
//! | `mem` (`malloc`/`free`, `GpuBox`) | device-side heap | missing (no device heap in sluice) |
//! | `cfg`, `ptr` (address-space queries), `misc` (clock, `trap`) | | partly: `core::arch::nvptx::trap`, `_syncthreads`, `vprintf` via [`io`]; no `clock64` wrapper yet |
//! | `#[kernel]` macro | entry points with checked parameters | in `sluice-macros`: the PTX entry on the device (slices as pointer + length, rebuilt as `&[T]` and [`slice::DeviceSliceMut`]), a typed launch descriptor and `args` by name on the host; every kernel in `gpu-kernels` uses it |

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

/// What `#[kernel]`'s host expansion names (the launch descriptor traits of the host
/// library). Not an API: a kernel crate depends on `sluice-device` alone, and the macro
/// reaches the host library through here.
#[cfg(not(target_arch = "nvptx64"))]
#[doc(hidden)]
pub mod __host {
    pub use sluice_host::{Arg, KernelDecl, Mut, Ref};
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
