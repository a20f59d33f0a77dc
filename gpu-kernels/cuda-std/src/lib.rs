//! `cuda_std` for sluice: Rust-CUDA's device crate API, on sluice's device std.
//!
//! A kernel crate written for Rust-CUDA's `cuda_std` ports by changing its
//! dependency line:
//!
//! ```toml
//! [dependencies]
//! cuda_std = { package = "sluice-cuda-std", path = "…/gpu-kernels/cuda-std" }
//! ```
//!
//! (and, when its builder does not inject them, one crate-level line:
//! `#![cfg_attr(target_arch = "nvptx64", no_std, feature(abi_ptx))]`). Every
//! module re-exports [`sluice_device`] under `cuda_std`'s names and signatures;
//! where `cuda_std` diverged from CUDA's semantics, this crate follows CUDA and
//! says so (for example [`thread::grid_fence`] is a device-scope fence).
//!
//! # `cuda_std` → sluice
//!
//! | `cuda_std` | here | sluice-device |
//! | --- | --- | --- |
//! | `#[kernel] pub unsafe fn k(a: &[f32], c: *mut f32)` | [`kernel`] | `#[kernel]` with `&[T]`/`DeviceSliceMut<T>` |
//! | `#[address_space(shared)] static mut S: [MaybeUninit<T>; N]` | [`address_space`], expands to [`sluice_device::shared_static!`] | `shared_array!(S: [T; N])` (safe handle) |
//! | `shared_array![T; N]` (removed from cuda_std, still in its users' code) | [`shared_array!`] | the same macro |
//! | `shared::dynamic_shared_mem::<T>()` | [`shared::dynamic_shared_mem`] | `shared::dynamic_shared_ptr`, `shared::dynamic_shared` |
//! | `thread::{thread_idx_x, …, grid_dim_z}` | [`thread`] | `thread` (same names) |
//! | `thread::{thread_idx, block_idx, block_dim, grid_dim}() -> UVec3` | [`thread`] (glam `UVec3`) | `thread::thread_idx() -> Dim3` … |
//! | `thread::index() -> u32`, `index_1d() -> u32`, `index_2d() -> UVec2`, `index_3d() -> UVec3` | [`thread`] | `thread::global_rank() -> u64`, `index_1d_u32`, `index_2d_u32`, `index_3d_u32` |
//! | `thread::sync_threads{,_count,_and,_or}(u32)` | [`thread`] | `sync::sync_threads{,_count,_and,_or}(bool)` |
//! | `thread::{grid_fence, device_fence, system_fence}` | [`thread`] (`fence.sc.gpu`, `.gpu`, `.sys`) | `sync::fence(MemoryScope::…)` |
//! | `thread::nanosleep(ns)`, `misc::clock()` | [`thread::nanosleep`], [`misc::clock`] (64-bit, as cuda_std) | `thread::nanosleep`, `misc::clock64` |
//! | `warp::warp_shuffle_{idx,up,down,xor}(mask, v, b, width) -> (T, bool)` | [`warp`] | `warp::shfl_*_width` |
//! | `warp::{warp_vote_*, warp_match_*, warp_reduce, sync_warp, lane_id, activemask}` | [`warp`] | `warp::{any, all, ballot, match_any, match_all, reduce_*, sync_warp, lane_id, active_mask}` |
//! | `atomic::{AtomicF32, AtomicF64, BlockAtomicF32, …, SystemAtomicF64}` | [`atomic`] (plus `U32 I32 U64 I64`) | `atomic::{AtomicF32, …}` |
//! | `atomic::mid::*_fence(ordering)` | [`atomic::mid`] | `atomic::fence(order, scope)` |
//! | `GpuFloat` (`x.sqrt()`, `x.fract()`, `x.log(b)`, …) | [`GpuFloat`] | `math::DeviceFloat` |
//! | `FloatExt` (`x.j0()`, `x.inv_norm_cdf()`, …) | [`FloatExt`] | `math::DeviceFloat` (`j0`, `normcdfinv`, …) |
//! | `intrinsics::*` (raw libdevice, `__nv_` stripped) | [`intrinsics`] (the math subset sluice declares) | `math::libdevice` (host: `math::DeviceFloat`) |
//! | `println!`, `print!` (Rust formatting) | [`println!`], [`print!`] | `dprintln!` (C formats, no `core::fmt`) |
//! | `assert_eq!`, `assert_ne!` | `core`'s, re-exported | the panic handler traps |
//! | `mem::{dynamic_smem_size, total_smem_size}` | [`mem`] | `shared::dynamic_shared_bytes`, `shared::total_shared_bytes` |
//! | `ptr::{AddressSpace, is_in_address_space, convert_*}` | [`ptr`] | |
//! | `glam`, `UVec2`, `UVec3` | [`glam`] (0.30, `libm` + `cuda` features) | `thread::Dim2`, `thread::Dim3` |
//!
//! Not provided (`README.md` beside this crate lists every difference): the device heap
//! (`mem::GLOBAL_ALLOCATOR`, `alloc::Vec`/`Box`/`format!` on the device), `half`
//! (`f16`/`bf16` shuffles), `vek`, `cuda_std::rt`, `#[externally_visible]`,
//! `#[gpu_only]`, and the full `intrinsics` list (integer, rounding-mode and
//! conversion intrinsics).
//!
//! # What builds where
//!
//! Everything above exists on both targets. On `nvptx64-nvidia-cuda` each item
//! is the PTX (or libdevice call) the table names. On the host each item has
//! CUDA's meaning on sluice's **CPU backend**: `#[kernel]` compiles every
//! kernel body for the host too, and [`sluice_device::cpu::launch`] runs it
//! (blocks in parallel, the threads of a block as coroutines with real
//! barriers and 32-lane warp collectives, per-block shared memory), so a
//! ported Rust-CUDA kernel runs on a machine without a GPU. The host versions
//! delegate to `sluice_device`'s host implementations, whose [`cpu`
//! module](sluice_device::cpu) says what the CPU models and what it does not
//! (timing, weak memory ordering, lockstep warps). Where the CPU has no
//! counterpart the host version says what it does instead:
//!
//! | item | on the host |
//! | --- | --- |
//! | [`thread`], [`warp`], [`shared`], [`mem`], [`shared_array!`], `#[address_space(shared)]` | the calling GPU thread's indices, its block's barriers, warp and shared memory |
//! | [`atomic`] (types and `mid` fences) | host atomics and `core::sync::atomic::fence` (every scope as strong as `System`) |
//! | [`GpuFloat`], [`FloatExt`], [`intrinsics`] | `sluice_device::math`'s CPU implementations (`libm`, and sluice's own for `erfcx`, `normcdfinv`, `sinpi`, ...); `fast_*` are the exact functions |
//! | [`misc::clock`] | the host's monotonic clock in nanoseconds |
//! | [`misc::breakpoint`] | fails the launch (a panic saying so): no debugger to stop in, as on a GPU without one |
//! | [`misc::profiler_counter`] | nothing (counters outside `0..=7` still fail the launch) |
//! | [`ptr::is_in_address_space`] | `Shared`: inside the block's shared-memory buffer; `Global`: any other address; `Constant`, `Local`: never |
//! | `ptr::convert_*` | the identity (one flat address space) |
//! | [`println!`], [`print!`] | stdout, the device's text (cut at 512 bytes), one `print!` per call |
//!
//! The functions that read the calling GPU thread (indices, barriers, warp
//! operations, shared memory, `clock`, `is_in_address_space`) panic when
//! called outside a launch, with a message saying so; the pure ones (math,
//! the atomic types, fences, the `convert_*` functions, [`println!`]) work in
//! any host code, so a kernel crate's shared types and CPU reference code use
//! them too. (Rust-CUDA's host stubs panicked whenever called, `#[gpu_only]`.)

#![cfg_attr(target_arch = "nvptx64", no_std)]
#![cfg_attr(target_arch = "nvptx64", feature(asm_experimental_arch))]
// `sluice_device::math::libdevice` exists only for nvptx64, `sluice_device::cpu` only
// on the host: each build of these docs has links it cannot resolve.
#![allow(rustdoc::broken_intra_doc_links)]

pub mod atomic;
pub mod float;
mod float_ext;
pub mod intrinsics;
pub mod io;
pub mod mem;
pub mod misc;
pub mod ptr;
pub mod shared;
pub mod thread;
pub mod warp;

pub use float::GpuFloat;
pub use float_ext::FloatExt;
pub use glam;

/// The static shared arrays of `cuda_std` 0.2 (`shared_array![T; N]` → `*mut T`)
/// and sluice's checked form; see [`sluice_device::shared_array!`].
pub use sluice_device::shared_array;

/// `#[address_space(shared)]` (and `global`, `constant`) on a `static mut`.
pub use sluice_macros::address_space;
/// `#[kernel]`: cuda_std's kernel attribute. An `unsafe fn` becomes a PTX entry (`&[T]` as
/// pointer + length, raw pointers, `&T` and `Copy` structs by value) and, on the host, an
/// unchecked kernel handle, launched only through `unsafe { st.launch_unchecked(..) }`, whose
/// CPU entry runs the same body on the CPU backend.
/// `#[address_space(shared)] static mut`s in its body become shared memory.
pub use sluice_macros::cuda_std_kernel as kernel;

/// What the `kernel` and `address_space` macros' expansions name (sluice's
/// device std). Not an API.
#[doc(hidden)]
pub use sluice_device as __sluice;

/// `std` on the host, for [`println!`]'s host expansion. Not an API.
#[cfg(not(target_arch = "nvptx64"))]
#[doc(hidden)]
pub extern crate std as __std;

/// What `use cuda_std::prelude::*;` brings in: `thread`, the printing macros
/// and `core`'s asserts (cuda_std's prelude also has `alloc`'s `Vec`, `Box`,
/// `String`, `format!`, which need a device heap: not provided).
///
/// On the host the printing macros it brings are std's own `print!` and
/// `println!`: a glob import of any other macro of those names is ambiguous
/// with std's prelude (error E0659 at every `println!` of the crate), so a
/// kernel's `println!` prints through std there, the whole line at once.
/// [`cuda_std::println!`](crate::println) named by its path prints on the host
/// exactly the device's text (cut at [`io::PRINT_BUFFER`] bytes).
pub mod prelude {
    pub use crate::thread;
    pub use crate::{address_space, kernel};
    #[cfg(target_arch = "nvptx64")]
    pub use crate::{print, println};
    pub use core::{assert_eq, assert_ne};
    #[cfg(not(target_arch = "nvptx64"))]
    pub use std::{print, println};
}

#[cfg(all(test, not(target_arch = "nvptx64")))]
mod tests {
    use crate::atomic::{AtomicF32, BlockAtomicF64, Ordering::*};
    use crate::GpuFloat;

    #[test]
    fn cuda_std_names_resolve_on_the_host() {
        // Rust-CUDA's float atomics, under their cuda_std paths, emulated on the host.
        let a = AtomicF32::new(2.0);
        assert_eq!(a.fetch_sub(0.5, SeqCst), 2.0);
        assert_eq!(a.load(Relaxed), 1.5);
        // SAFETY: one host thread: every access is from "the same block".
        let b = unsafe {
            let b = BlockAtomicF64::new(1.0);
            b.fetch_add(1.0, Relaxed);
            b.load(Relaxed)
        };
        assert_eq!(b, 2.0);
        assert_eq!(GpuFloat::signum(-0.0f64), -1.0);
        let x = 3;
        crate::println!("host println: x = {x}");
        crate::print!("{}", "");
        crate::println!();
    }

    #[test]
    fn glam_is_cuda_stds() {
        // `cuda` feature: Vec2 is 8-aligned, as CUDA's float2.
        assert_eq!(core::mem::align_of::<crate::glam::Vec2>(), 8);
        assert_eq!(crate::glam::UVec3::new(1, 2, 3).element_product(), 6);
    }
}
