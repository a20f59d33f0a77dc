//! Thread, block and grid indices and sizes (CUDA's `threadIdx`, `blockIdx`,
//! `blockDim`, `gridDim`) in 1, 2 and 3 dimensions, and global-index helpers.
//!
//! Each function reads one or a few special registers (`%tid`, `%ctaid`,
//! `%ntid`, `%nctaid`); they cost a cycle or two and need no `unsafe`.
//! [`Dim3`] and [`WARP_SIZE`] are plain data (launch configurations use
//! them; they live in [`crate::spec::thread`]).
//!
//! | sluice | CUDA C++ | PTX |
//! | --- | --- | --- |
//! | [`thread_idx`], [`thread_idx_x`] ... | `threadIdx`, `threadIdx.x` ... | `mov.u32 %r, %tid.x` ... |
//! | [`block_idx`], [`block_dim`], [`grid_dim`] ... | `blockIdx`, `blockDim`, `gridDim` | `%ctaid`, `%ntid`, `%nctaid` |
//! | [`warp_size`] | `warpSize` | `mov.u32 %r, WARP_SZ` |
//! | [`nanosleep`] | `__nanosleep(ns)` | `nanosleep.u32` (sm_70+) |
//! | [`index_1d`], [`global_rank`] ... | (arithmetic on the above) | |
//!
//! # Hardware support
//!
//! Every architecture (`nanosleep`: sm_70+, which is every architecture sluice builds for).
//!
//! # On the CPU
//!
//! The functions read the GPU thread the CPU runtime ([`crate::cpu`]) runs
//! (`gpu.rs` reads special registers, `cpu.rs` the runtime's current thread), and
//! panic outside a launch. `nanosleep` lets the other threads of the block run and
//! sleeps not at all. Nothing here touches memory, so the race checker has nothing
//! to see.
//!
//! # Which index to use
//!
//! | helper | value | unique per thread? |
//! | --- | --- | --- |
//! | [`index_1d`] | `blockIdx.x * blockDim.x + threadIdx.x` | only in a 1-D launch |
//! | [`index_2d`] | `(x, y)` global coordinates | only in a launch with `z == 1` |
//! | [`index_3d`] | `(x, y, z)` global coordinates | always |
//! | [`global_rank`] | linear id over the whole grid, any shape | always |
//! | [`index_1d_u32`], [`index_2d_u32`], [`index_3d_u32`] | the same in 32 bits (as CUDA C++'s `unsigned` arithmetic; wraps past 2^32 threads), 2-D/3-D as [`Dim2`]/[`Dim3`] | as their 64-bit twins |
//!
//! # Example (device code)
//!
//! A grid-stride loop, the shape of `gpu_kernels::saxpy`:
//!
//! ```ignore
//! use sluice_device::thread;
//! let mut i = thread::index_1d();
//! while i < len {
//!     // ... one element ...
//!     i += thread::grid_size_1d();
//! }
//! ```

pub use crate::spec::thread::{global_coord_u32, Dim2, Dim3, WARP_SIZE};

// The backend, chosen once: special registers on the GPU, the CPU runtime's
// current thread on the host.
#[cfg_attr(target_arch = "nvptx64", path = "gpu.rs")]
#[cfg_attr(not(target_arch = "nvptx64"), path = "cpu.rs")]
mod imp;

macro_rules! special {
    ($(#[$doc:meta] $name:ident;)*) => {$(
        #[$doc]
        #[inline(always)]
        #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
        pub fn $name() -> Dim3 {
            imp::$name()
        }
    )*};
}

special! {
    /// This thread's index within its block (`threadIdx`).
    thread_idx;
    /// This block's index within the grid (`blockIdx`).
    block_idx;
    /// The block's size in threads (`blockDim`).
    block_dim;
    /// The grid's size in blocks (`gridDim`).
    grid_dim;
}

macro_rules! component {
    ($(#[$doc:meta] $name:ident;)*) => {$(
        #[$doc]
        #[inline(always)]
        #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
        pub fn $name() -> u32 {
            imp::$name()
        }
    )*};
}

component! {
    /// `threadIdx.x`.
    thread_idx_x;
    /// `threadIdx.y`.
    thread_idx_y;
    /// `threadIdx.z`.
    thread_idx_z;
    /// `blockIdx.x`.
    block_idx_x;
    /// `blockIdx.y`.
    block_idx_y;
    /// `blockIdx.z`.
    block_idx_z;
    /// `blockDim.x`.
    block_dim_x;
    /// `blockDim.y`.
    block_dim_y;
    /// `blockDim.z`.
    block_dim_z;
    /// `gridDim.x`.
    grid_dim_x;
    /// `gridDim.y`.
    grid_dim_y;
    /// `gridDim.z`.
    grid_dim_z;
}

/// The global 1-D index of this thread: `blockIdx.x * blockDim.x + threadIdx.x`,
/// computed in 64 bits so that it cannot wrap. Unique per thread only in a
/// 1-D launch (use [`global_rank`] when the launch shape is not known).
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub fn index_1d() -> u64 {
    block_idx_x() as u64 * block_dim_x() as u64 + thread_idx_x() as u64
}

/// The global `(x, y)` coordinates of this thread (64-bit).
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub fn index_2d() -> (u64, u64) {
    (index_1d(), block_idx_y() as u64 * block_dim_y() as u64 + thread_idx_y() as u64)
}

/// The global `(x, y, z)` coordinates of this thread (64-bit).
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub fn index_3d() -> (u64, u64, u64) {
    let (x, y) = index_2d();
    (x, y, block_idx_z() as u64 * block_dim_z() as u64 + thread_idx_z() as u64)
}

/// The global 1-D index in 32 bits, `blockIdx.x * blockDim.x + threadIdx.x`
/// as CUDA C++ computes it (`unsigned`, wrapping past 2^32 threads; Rust-CUDA's
/// `index_1d`). Equal to [`index_1d`] while the grid has fewer than 2^32 threads
/// along x (`gridDim.x * blockDim.x < 2^32`), and cheaper (32-bit arithmetic).
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub fn index_1d_u32() -> u32 {
    global_coord_u32(block_idx_x(), block_dim_x(), thread_idx_x())
}

/// The global `(x, y)` index in 32 bits (see [`index_1d_u32`]).
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub fn index_2d_u32() -> Dim2 {
    Dim2 { x: index_1d_u32(), y: global_coord_u32(block_idx_y(), block_dim_y(), thread_idx_y()) }
}

/// The global `(x, y, z)` index in 32 bits (see [`index_1d_u32`]).
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub fn index_3d_u32() -> Dim3 {
    let Dim2 { x, y } = index_2d_u32();
    Dim3 { x, y, z: global_coord_u32(block_idx_z(), block_dim_z(), thread_idx_z()) }
}

/// Threads per warp, read from `%warpsize` (32 on every NVIDIA GPU so far;
/// [`WARP_SIZE`] is the constant; 32 on the CPU).
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub fn warp_size() -> u32 {
    imp::warp_size()
}

/// Suspends the calling thread for about `ns` nanoseconds (`nanosleep.u32`,
/// sm_70+; the hardware picks a delay in `[0, 2 * ns]`, at most about 1 ms).
/// For back-off in spin loops; it orders nothing.
///
/// On the CPU it lets the other threads of the block run (and sleeps not at
/// all): a loop waiting for another thread of its block must call it (see
/// [`crate::cpu`], "Spinning").
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub fn nanosleep(ns: u32) {
    imp::nanosleep(ns)
}

/// Whether the launch is 1-D: grid `(n, 1, 1)` and blocks `(m, 1, 1)`.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub(crate) fn launch_is_1d() -> bool {
    (grid_dim_y() == 1) & (grid_dim_z() == 1) & (block_dim_y() == 1) & (block_dim_z() == 1)
}

/// What `#[kernel(dims = 1)]` tells the compiler of the GPU build: the launch is 1-D, so the
/// 1-D fast paths (a grid-stride loop's, `index_1d`'s uniqueness) need no test of the shape.
///
/// # Safety
///
/// The launch is 1-D. `#[kernel(dims = 1)]` calls it where the host checks every launch of
/// the entry (its `__sluice_launch_*` record).
#[doc(hidden)]
#[inline(always)]
pub unsafe fn __assume_1d_launch() {
    let one_d = launch_is_1d();
    // SAFETY: the caller's contract.
    unsafe { core::hint::assert_unchecked(one_d) }
}

/// Whether every block of the launch is `(x, y, z)`.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub(crate) fn block_is(x: u32, y: u32, z: u32) -> bool {
    (block_dim_x() == x) & (block_dim_y() == y) & (block_dim_z() == z)
}

/// What `#[kernel(block = (x, y, z))]` tells the compiler of the GPU build: every block is
/// `(x, y, z)`, so `block_dim_*()` are constants, `thread_idx_*()` are below them, and a
/// check of the block's shape (`BlockTile::partition`'s) folds away.
///
/// # Safety
///
/// Every block of the launch is `(x, y, z)`. `#[kernel(block = ..)]` calls it where the
/// host checks every launch of the entry (its `__sluice_launch_*` record).
#[doc(hidden)]
#[inline(always)]
pub unsafe fn __assume_block(x: u32, y: u32, z: u32) {
    let fixed = block_is(x, y, z);
    // SAFETY: the caller's contract.
    unsafe { core::hint::assert_unchecked(fixed) }
}

/// The total number of threads in the grid along x (the stride of a 1-D grid-stride loop).
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub fn grid_size_1d() -> u64 {
    grid_dim_x() as u64 * block_dim_x() as u64
}

/// The grid's extent in threads along x and y.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub fn grid_size_2d() -> (u64, u64) {
    (grid_size_1d(), grid_dim_y() as u64 * block_dim_y() as u64)
}

/// The grid's extent in threads along x, y and z.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub fn grid_size_3d() -> (u64, u64, u64) {
    let (x, y) = grid_size_2d();
    (x, y, grid_dim_z() as u64 * block_dim_z() as u64)
}

/// Threads per block, `blockDim.x * blockDim.y * blockDim.z` (at most 1024).
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub fn block_size() -> u32 {
    block_dim_x() * block_dim_y() * block_dim_z()
}

/// This thread's linear rank inside its block, `0..block_size()`
/// (`(z * blockDim.y + y) * blockDim.x + x`, the order warps are formed in).
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub fn block_rank() -> u32 {
    (thread_idx_z() * block_dim_y() + thread_idx_y()) * block_dim_x() + thread_idx_x()
}

/// This block's linear rank inside the grid (64-bit).
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub fn grid_block_rank() -> u64 {
    (block_idx_z() as u64 * grid_dim_y() as u64 + block_idx_y() as u64) * grid_dim_x() as u64 + block_idx_x() as u64
}

/// Number of blocks in the grid (64-bit).
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub fn grid_blocks() -> u64 {
    grid_dim_x() as u64 * grid_dim_y() as u64 * grid_dim_z() as u64
}

/// A linear id of this thread that is unique over the whole grid whatever
/// the launch shape: `grid_block_rank() * block_size() + block_rank()`.
/// Equal to [`index_1d`] in a 1-D launch.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub fn global_rank() -> u64 {
    grid_block_rank() * block_size() as u64 + block_rank() as u64
}

/// Total threads in the grid, `grid_blocks() * block_size()`; with
/// [`global_rank`] it forms a grid-stride loop that is correct for any shape.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub fn total_threads() -> u64 {
    grid_blocks() * block_size() as u64
}

/// The warp of this thread inside its block, `block_rank() / 32`.
/// (Not `%warpid`, which names a hardware slot and may change during execution.)
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub fn warp_idx() -> u32 {
    block_rank() / WARP_SIZE
}

/// Waits until every thread of the block reaches this point; see
/// [`crate::sync::sync_threads`] (kept here for existing callers).
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub fn sync_threads() {
    crate::sync::sync_threads()
}
