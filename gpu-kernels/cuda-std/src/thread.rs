//! `cuda_std::thread`: indices, sizes, barriers and fences, with `cuda_std`'s
//! signatures (32-bit indices, glam vectors, `u32` predicates).
//!
//! Semantics are CUDA's: [`grid_fence`] and [`device_fence`] are
//! `__threadfence()` (`fence.sc.gpu`), [`system_fence`] is
//! `__threadfence_system()` (`fence.sc.sys`). (Rust-CUDA's `grid_fence` emitted
//! `membar.cta`, a block-scope fence, which does not order anything for
//! threads of other blocks.)

use glam::{UVec2, UVec3};
use sluice_device::{sync, thread as t, MemoryScope};

pub use sluice_device::thread::{
    block_dim_x, block_dim_y, block_dim_z, block_idx_x, block_idx_y, block_idx_z, grid_dim_x, grid_dim_y, grid_dim_z,
    nanosleep, thread_idx_x, thread_idx_y, thread_idx_z, warp_size,
};

fn uvec3(d: t::Dim3) -> UVec3 {
    UVec3::new(d.x, d.y, d.z)
}

/// `threadIdx` as a `UVec3`.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub fn thread_idx() -> UVec3 {
    uvec3(t::thread_idx())
}

/// `blockIdx` as a `UVec3`.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub fn block_idx() -> UVec3 {
    uvec3(t::block_idx())
}

/// `blockDim` as a `UVec3`.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub fn block_dim() -> UVec3 {
    uvec3(t::block_dim())
}

/// `gridDim` as a `UVec3`.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub fn grid_dim() -> UVec3 {
    uvec3(t::grid_dim())
}

/// A linear index unique to this thread whatever the launch shape, in 32
/// bits (cuda_std's `index`; sluice's [`global_rank`](sluice_device::thread::global_rank)
/// is the 64-bit form). Wraps for grids of 2^32 threads or more.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub fn index() -> u32 {
    let (g, b, d, i) = (grid_dim(), block_idx(), block_dim(), thread_idx());
    let block_id = b.x.wrapping_add(b.y.wrapping_mul(g.x)).wrapping_add(g.x.wrapping_mul(g.y).wrapping_mul(b.z));
    block_id
        .wrapping_mul(d.x.wrapping_mul(d.y).wrapping_mul(d.z))
        .wrapping_add(i.z.wrapping_mul(d.x * d.y))
        .wrapping_add(i.y * d.x)
        .wrapping_add(i.x)
}

/// `blockIdx.x * blockDim.x + threadIdx.x` in 32 bits.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub fn index_1d() -> u32 {
    t::index_1d_u32()
}

/// The global `(x, y)` index in 32 bits.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub fn index_2d() -> UVec2 {
    let d = t::index_2d_u32();
    UVec2::new(d.x, d.y)
}

/// The global `(x, y, z)` index in 32 bits.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub fn index_3d() -> UVec3 {
    uvec3(t::index_3d_u32())
}

/// Whether this is thread (0, 0, 0) of block (0, 0, 0): true in exactly one thread.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub fn first() -> bool {
    block_idx() == UVec3::ZERO && thread_idx() == UVec3::ZERO
}

/// `__syncthreads()`; every thread of the block must reach it.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub fn sync_threads() {
    sync::sync_threads()
}

/// `__syncthreads_count(predicate)`: how many threads passed a non-zero value.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub fn sync_threads_count(predicate: u32) -> u32 {
    sync::sync_threads_count(predicate != 0)
}

/// `__syncthreads_and(predicate)`: non-zero iff every thread passed non-zero.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub fn sync_threads_and(predicate: u32) -> u32 {
    sync::sync_threads_and(predicate != 0) as u32
}

/// `__syncthreads_or(predicate)`: non-zero iff some thread passed non-zero.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub fn sync_threads_or(predicate: u32) -> u32 {
    sync::sync_threads_or(predicate != 0) as u32
}

/// A memory fence for every thread of the launch: `__threadfence()`
/// (`fence.sc.gpu`). Not a barrier: it orders, it does not wait.
#[inline(always)]
pub fn grid_fence() {
    sync::fence(MemoryScope::Device)
}

/// `__threadfence()` (`fence.sc.gpu`).
#[inline(always)]
pub fn device_fence() {
    sync::fence(MemoryScope::Device)
}

/// `__threadfence_system()` (`fence.sc.sys`).
#[inline(always)]
pub fn system_fence() {
    sync::fence(MemoryScope::System)
}
