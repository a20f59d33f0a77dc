//! `sluice-device`: the device-side standard library of sluice kernels.
//!
//! `cuda_std` (Rust-CUDA) is tied to `rustc_codegen_nvvm` and does not work with
//! rustc's own NVPTX backend, which sluice uses; this crate has the same roles,
//! built on `core::arch::nvptx`, inline PTX (`asm!`) and NVIDIA's libdevice.
//!
//! | module | what it offers |
//! | --- | --- |
//! | [`spec`] | what PTX specifies, as plain data and pure functions below both backends: dimensions, memory scopes, shuffle sources, lane masks, reductions, orderings, shared-memory alignment |
//! | [`cpu`] (host) | the CPU runtime: [`cpu::launch`] runs kernel bodies over a grid with CUDA's semantics |
//! | [`sync`] | `sync_threads` and its count/and/or forms, named barriers, fences at block/device/system scope |
//! | [`thread`] | `threadIdx`/`blockIdx`/`blockDim`/`gridDim` in 1/2/3-D, global indices (64-bit, and 32-bit as [`thread::Dim2`]/[`thread::Dim3`]), linear ranks, `nanosleep` |
//! | [`misc`] | `clock`, `clock64`, the global timer, SM id, `trap` |
//! | [`math`] | `f32`/`f64` math through libdevice (`exp`, `sin_cos`, `erf`, Bessel, `normcdfinv`, `erfcx`, ...), `*_fast` approximations side by side with their exact twins |
//! | [`io`] | [`dprint!`]/[`dprintln!`] through `vprintf` (format checked at compile time), [`dassert!`]/[`dfail!`], the panic handler (trap; messages with `--cfg sluice_panic_messages`) |
//! | [`shared`] | static shared arrays ([`shared_array!`], sized by any constant, also as `*mut T`), `static mut` in shared memory ([`shared_static!`]), the dynamic shared region, `ld/st/atom.shared` access |
//! | [`atomic`] | add/min/max/and/or/xor/exchange/CAS on global and shared memory with a [`MemoryScope`]; atomic types (`AtomicU32` … `AtomicF64`, block/system twins) with acquire/release/seq-cst orderings |
//! | [`warp`] | lane id and masks, shuffles (idx/up/down/xor; 8- to 128-bit values; with a segment width and the in-range flag), votes, match, `redux`, warp sum |
//! | [`slice`](mod@slice) | kernel slice parameters: safe per-thread `&mut` element access, slices of atomics, matrix tiles, `unsafe` general writes |
//! | [`half`] | `f16`, `bf16` (the `half` crate's types) and their conversions with the GPU's `cvt` |
//! | [`tile`] | typed shared tiles with layouts (row/column major, padded, swizzled), global matrices read ([`tile::Matrix`]) and written one block and one warp tile each ([`tile::MatrixMut`]) |
//! | [`async_copy`] | `cp.async` into tiles with type state: a tile is read only after its copies were waited for, a stage refilled only after every thread read it ([`async_copy::Pipeline`]) |
//! | [`tma`] | Hopper's tensor-memory accelerator and `mbarrier`s: a warp-specialised pipeline ([`tma::WsPipeline`]) whose producer copies tiles with TMA and whose consumers read each stage only after its barrier phase, releasing it when done |
//! | [`mma`] | the warp MMA on the tensor cores: `ldmatrix`, `mma.sync` with fragments typed by element, shape and layout, each batch checked once, warp-uniform by construction (see `docs/tensor-cores.md`) |
//! | [`abi`] | the parameter record `#[kernel]` leaves in the PTX, and the `Pod` checks of parameter types |
//! | [`selftest`] | a conformance self-test kernel body of the operations above and its host checker |
//!
//! # Layers
//!
//! The crate is in rooms, each importing only from the rooms above it in this
//! list (the `tidy` test, `tests/tidy.rs`, checks it, and that there is no import
//! cycle):
//!
//! 1. **`spec`**: what PTX specifies, as plain data and pure functions — no `cfg`,
//!    no `asm!`, no runtime. Both backends follow it; a backend never imports an
//!    op family's API to learn a rule.
//! 2. **`cpu`**: the CPU runtime's engine (host only) — launches, the scheduler,
//!    the current thread's context, generic waits (a family's `Rendezvous`) and
//!    per-block family state (`LocalKey`). It names no op family.
//! 3. **The op families**, in this order: `sync`, `thread`, `misc`, `math`, `io`,
//!    `shared`, `atomic`, `warp`, `slice`, the tensor-core families `half`, `tile`,
//!    `async_copy`, `tma`, `mma`, `wgmma`, then `selftest` (which tests the others).
//!    Each is a folder: `mod.rs` is the API, written once with its docs and
//!    `# Safety` (the only other `target_arch` there is
//!    `cfg_attr(not(target_arch = "nvptx64"), track_caller)`, so that a failure on
//!    the CPU names the kernel's line, and the cfg of an item that exists on one
//!    target); `gpu.rs` (PTX) and `cpu.rs` (the CPU runtime) implement it, chosen
//!    once by `#[cfg_attr(target_arch = "nvptx64", path = "gpu.rs")]` on `mod imp`.
//!    Files a backend declares (`atomic/raw.rs`, `shared/arena.rs`,
//!    `warp/rendezvous.rs`, `io/printf.rs`) belong to that backend. A new family
//!    (`cluster`, as `half`, `mma`, `async_copy`, `tma` and `wgmma` were) is a
//!    new folder of the same shape, with a `raw.rs` of one `unsafe fn` per
//!    instruction form where there are many, and types above it.
//!
//! Inside a family, the API and its backends use each other (a backend implements
//! the API's sealed traits); across families only downward. A backend uses
//! another family's backend only on its own side (`atomic/cpu.rs` resolves shared
//! addresses through `shared/cpu.rs`).
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
//!   undefined when the lanes/threads named do not all take part;
//!   [`warp::sum_f32_converged`] is the safe warp sum (it checks that the whole
//!   warp is there).
//! * Atomics on raw pointers, `SharedPtr::read/write`: `unsafe` (the address
//!   must be valid). Atomic types: safe through `&self` (device and system
//!   scope); the block-scope types' methods are `unsafe` (only the block may
//!   touch the value).
//! * [`shared_static!`] variables: every access is an `unsafe` read of a
//!   `static mut`, as in Rust-CUDA; the memory is uninitialised (`MaybeUninit`).
//!   Making a [`shared::SharedStatic`] handle by hand is `unsafe`.
//! * Slices: per-thread `&mut` is safe ([`slice`](mod@slice)); arbitrary indexed writes
//!   are `unsafe`, or safe through a kernel parameter of atomics (`&[AtomicU32]`, every
//!   access atomic); read-only tiles of a matrix ([`tile::Matrix::tile`]) index safely.
//!   `docs/fast-safe-kernels.md` shows how safe kernels compile to nvcc's code.
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

pub mod async_copy;
pub mod atomic;
#[cfg(not(target_arch = "nvptx64"))]
pub mod cpu;
pub mod half;
pub mod io;
pub mod math;
pub mod misc;
pub mod mma;
pub mod selftest;
pub mod shared;
pub mod slice;
pub mod spec;
/// The parameter record `#[kernel]` leaves in the PTX, and the `Pod` checks of parameter
/// types (the rules live in [`spec::abi`]).
pub use spec::abi;
pub mod sync;
pub mod thread;
pub mod tile;
pub mod tma;
pub mod warp;
pub mod wgmma;

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
    pub use sluice_host::{
        Arg, ByValue, Checked, CpuEntry, CpuLaunch, CpuLaunchError, KernelDecl, Mut, Ptr, PtrMut, Ref, Tma, Unchecked,
    };
    /// What a kernel's CPU entry returns (named here so that the expansion in a `#![no_std]`
    /// kernel crate needs no `std` path of its own).
    pub type CpuResult = core::result::Result<(), CpuLaunchError>;
}

pub use spec::scope::MemoryScope;
