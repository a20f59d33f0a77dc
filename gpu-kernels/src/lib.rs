//! sluice's kernels, written in `#![no_std]` Rust.
//!
//! # What builds where
//!
//! * For `nvptx64-nvidia-cuda` (through `sluice-builder`) each `#[kernel]`
//!   function below becomes an `extern "ptx-kernel"` PTX `.entry`; the root
//!   `build.rs` embeds that PTX into every host binary as `sluice::kernels::PTX`.
//! * For the host the same crate builds (with `std`) without the kernel bodies:
//!   `#[kernel]` turns each kernel into a typed descriptor of the same name
//!   (`sluice_host::KernelDecl`, the facade's `sluice::kernels::<name>`), and
//!   the crate provides the parameter types the host and device share ([`Particle`]), the launch
//!   constants ([`POTENTIAL_TILE`], [`TRANSPOSE_TILE`], ...), the binning rule the
//!   histogram kernel and its reference share ([`histogram_bin`]), and the CPU
//!   references the tests check the GPU against (`reference`, f64 or exact).
//!
//! # Kernels
//!
//! Signatures are the kernels' own: `&[T]` is read-only, `DeviceSliceMut<T>` (written
//! `Mut<T>` below for short) is the per-thread mutable slice, `&[AtomicU32]` a slice every
//! thread updates atomically (on the host, `Mut<u32>`); on the wire each slice is
//! two parameters (see ABI below). "any grid" kernels use grid-stride loops and are
//! correct for every grid size; the recommended sizes are those of the
//! benchmarks (H200, 132 SMs).
//!
//! | entry | what it does | launch |
//! | --- | --- | --- |
//! | `fill_column(out: Mut<f32>, value: f32)` | `out[i] = value` | 1-D, any grid; block 256 |
//! | `saxpy(y: Mut<f32>, x: &[f32], a: f32)` | `y[i] = a * x[i] + y[i]` for `i < min(len)` | 1-D only (`#[kernel(dims = 1)]`: a 2-D or 3-D launch is refused), any grid; block 256, grid `ceil(n / 256)` |
//! | `column_sums(out: Mut<f32>, m: &[f32], rows: usize, cols: usize)` | `out[j] = Σ_i m[i * cols + j]`: column sums of a row-major matrix, bounds-checked `m[..]` with a stride (the range-check pass's example); traps if `m` is shorter than the loop reads | 1-D, any grid; one thread per column |
//! | `potential(out: Mut<f32>, targets: &[Particle], sources: &[Particle], eps2: f32)` | `out[i] = Σ_k q_k / sqrt(\|t_i − s_k\|² + eps2)`, every thread reads every source from global memory | 1-D, one thread per row: block 256, grid `ceil(rows / 256)` |
//! | `potential_tiled(` same `)` | the same sum; each block stages [`POTENTIAL_TILE`] (256) sources at a time in shared memory (4 KiB) | 1-D, one thread per row: block 256 (any size up to 1024 works), grid `ceil(rows / block)` |
//! | `sum_reduce(out: &[AtomicF32], x: &[f32])` | `out[0] += Σ x` in one launch: grid-stride partial sums (4 loads in flight per thread), warp shuffles (`warp::sum_f32_converged`), one shared-memory step, **one atomic add per block**. `out[0]` must be zeroed first; the order of the additions varies from run to run | 1-D; block 256 (a multiple of 32, up to 1024; else it traps), grid `min(ceil(n / 1024), 1056)` (8 blocks per SM) |
//! | `transpose(#[matrix(rows = cols, cols = rows)] out: Option<MatrixMut<f32, TransposeTiles>>, input: &[f32], rows: u32, cols: u32)` | `out[c * rows + r] = input[r * cols + c]`: `input` is `rows × cols` row-major, `out` is `cols × rows`, split by its type into one 32×32 tile per block and four elements of it per thread (plain stores, one writer each by construction); the tiles go through shared memory padded to 33 columns (no bank conflicts). Does nothing if a slice is shorter than `rows * cols` | block **(32, 8)** (`#[kernel(block = (32, 8))]`: another block is refused at launch, `Error::LaunchBlockShape`), grid `(ceil(cols / 32), ceil(rows / 32))` |
//! | `histogram(bins: &[AtomicU32], x: &[f32], lo: f32, hi: f32)` | `bins[histogram_bin(v)] += 1` for each `v` in `[lo, hi)` (others ignored), `bins.len()` bins of equal width; per-block sub-histograms in shared memory (`red.shared.add.u32`), then one global atomic per non-empty bin per block. Adds to `bins` (zero it first). Up to [`HISTOGRAM_SHARED_BINS`] (4096) bins in shared memory; more bins fall back to global atomics | 1-D; block 256, grid `min(ceil(n / 256), 264)` (2 blocks per SM) |
//! | `spin_then_fail(out: Mut<u32>, cycles: u64, fail_at: u32)` | spins `cycles` clock cycles, then `out[i] = 1`; thread `fail_at` fails with `dfail!` instead (`u32::MAX`: none). For the fault and overlap tests | 1-D, any |
//! | `tag_and_print(out: Mut<u32>, tag: u32)` | `out[i] = tag`; thread 0 prints the tag (`dprintln!`). For the first-launch overlap test | 1-D, any grid |
//! | `device_selftest(out: Mut<u32>)` | exercises the device std (shuffles, votes, match, `redux`, predicate barriers, shared/global atomics of every kind, dynamic shared memory, libdevice math, `dprintln!`) and records the results; `reference::check_selftest` (host) says which operation is wrong, if any | grid 1, block [`SELFTEST_THREADS`] (64), dynamic shared memory [`SELFTEST_DYNAMIC_SHARED`] (256 B), `out.len() >= SELFTEST_LEN` |
//! | `device_selftest_convert(out: Mut<u32>, x: &[f32], y: &[f64])` | `out[4i..4i+4]` = `x[i].to_u32_sat()`, `x[i].to_i32_sat()`, `y[i].to_u32_sat()`, `y[i].to_i32_sat()`: the device std's conversions (one instruction from `f32`), which must equal Rust's `as` | 1-D, any grid |
//!
//! # ABI
//!
//! Every slice parameter is passed as two parameters: the device address
//! (`u64`) and the element count (`u64`); scalars and `Pod` structs are passed
//! by value. The host library lowers views the same way.
//!
//! # Writing style
//!
//! The kernels use the device std (`sluice_device`) the way a user would:
//! every kernel is a `#[kernel]` function, read-only slices are `&[T]`,
//! one-thread-one-element outputs go through
//! [`DeviceSliceMut`](sluice_device::slice::DeviceSliceMut), outputs whose element a
//! thread picks by data or index arithmetic are slices of atomics, and no kernel
//! measured against nvcc holds `unsafe` or `get_unchecked` (issue 22; the Rust-CUDA
//! style `vecadd` pair is the one `#[kernel(unchecked)]` comparison).
//! `docs/fast-safe-kernels.md` shows the forms that let LLVM remove the bounds checks.
//! `benches/cuda/` holds the same kernels in CUDA C++ for the speed comparison.

#![cfg_attr(target_arch = "nvptx64", no_std)]
#![cfg_attr(target_arch = "nvptx64", feature(abi_ptx))]
#![cfg_attr(target_arch = "nvptx64", allow(internal_features))]

use bytemuck::{Pod, Zeroable};
use sluice_device::math::DeviceFloat;

/// A point charge: position and charge, 16 bytes, the same layout on host and device.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Pod, Zeroable)]
pub struct Particle {
    /// x position.
    pub x: f32,
    /// y position.
    pub y: f32,
    /// z position.
    pub z: f32,
    /// Charge (for targets: unused).
    pub q: f32,
}

/// The launch shape of a tensor-core gemm kernel (`gemm_bf16`, `gemm_f16`, `gemm_tf32` and
/// the variants): the block's tile of C (`bm × bn`), the k extent of a pipeline stage, the
/// stages, the threads (one warp per 64 × 64 warp tile) and the operand size in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GemmShape {
    /// Rows of C per block.
    pub bm: usize,
    /// Columns of C per block.
    pub bn: usize,
    /// The k extent of a pipeline stage.
    pub bk: usize,
    /// Pipeline stages.
    pub stages: usize,
    /// Threads per block: `(bm / 64) * (bn / 64) * 32` (one warp per 64 × 64 warp tile), or
    /// `(bm / 64) * 128` for the warpgroup MMA gemms (one warpgroup per 64 rows).
    pub threads: u32,
    /// Bytes per operand element (2: bf16, f16; 4: f32 as tf32).
    pub elem_bytes: usize,
}

impl GemmShape {
    /// The dynamic shared memory (bytes) a launch must give: the pipeline's stages of an
    /// A and a B tile, each 128-aligned, plus 112 for the alignment of the region's start
    /// (`Pipeline::SHARED_BYTES`).
    pub const fn shared_bytes(&self) -> usize {
        let a = (self.bm * self.bk * self.elem_bytes).next_multiple_of(128);
        let b = (self.bk * self.bn * self.elem_bytes).next_multiple_of(128);
        self.stages * (a + b) + 112
    }

    /// The dynamic shared memory (bytes) of the warp-specialised TMA gemms: the stages of an
    /// A and a B tile (1024-byte aligned, for the 128-byte swizzle), their alignment, and a
    /// `full` and an `empty` barrier per stage (`tma::WsPipeline::SHARED_BYTES`).
    pub const fn ws_shared_bytes(&self) -> usize {
        self.stages * (self.bm + self.bn) * self.bk * self.elem_bytes + 1024 + 16 * self.stages
    }

    /// Blocks for an `m × n` C (a 1-D grid).
    pub const fn grid(&self, m: usize, n: usize) -> u32 {
        (m.div_ceil(self.bm) * n.div_ceil(self.bn)) as u32
    }
}

/// `gemm_bf16` and `gemm_f16`: 128 × 128 tiles of C, k-tiles of 32 in 4 stages (64 KiB),
/// 4 warps, the k-steps a loop (unrolled: 3-4% slower); two blocks per SM (the fastest shape measured on the
/// H200, docs/tensor-cores.md).
pub const GEMM_BF16: GemmShape = GemmShape { bm: 128, bn: 128, bk: 32, stages: 4, threads: 128, elem_bytes: 2 };
/// `gemm_tf32`: 128 × 128 tiles, k-tiles of 16 f32 in 4 stages (64 KiB), 4 warps, the
/// k-steps a loop (unrolled, ptxas spills).
pub const GEMM_TF32: GemmShape = GemmShape { bm: 128, bn: 128, bk: 16, stages: 4, threads: 128, elem_bytes: 4 };
/// `gemm_bf16_128x256`: 128 × 256 tiles, k-tiles of 32 in 4 stages (96 KiB), 8 warps, the
/// k-steps unrolled; one block per SM (the default before, timed beside it).
pub const GEMM_BF16_128X256: GemmShape = GemmShape { bm: 128, bn: 256, bk: 32, stages: 4, threads: 256, elem_bytes: 2 };
/// `gemm_wg_bf16` and `gemm_wg_f16` (Hopper, sm_90a): 128 × 128 tiles of C, k-tiles of 64 in
/// 4 stages (128 KiB), 2 warpgroups of `wgmma.m64n128k16`.
pub const GEMM_WG: GemmShape = GemmShape { bm: 128, bn: 128, bk: 64, stages: 4, threads: 256, elem_bytes: 2 };
/// `gemm_wg_bf16_128x256`: 128 × 256 tiles, k-tiles of 64 in 4 stages (192 KiB), 2
/// warpgroups of `wgmma.m64n256k16`; one block per SM.
pub const GEMM_WG_128X256: GemmShape = GemmShape { bm: 128, bn: 256, bk: 64, stages: 4, threads: 256, elem_bytes: 2 };
/// `gemm_ws_bf16` and `gemm_ws_f16` (Hopper, sm_90a): 128 × 256 tiles, k-tiles of 64 in 4
/// stages (192 KiB) filled by TMA, warp-specialised: 384 threads, warpgroup 0 copies (40
/// registers), warpgroups 1 and 2 multiply (`wgmma.m64n256k16`, 232 registers); one block
/// per SM. Needs `k` and `n` multiples of 8 and A, B 16-byte aligned (the TMA's rows).
pub const GEMM_WS: GemmShape = GemmShape { bm: 128, bn: 256, bk: 64, stages: 4, threads: 384, elem_bytes: 2 };
/// `gemm_ws_tf32` (Hopper, sm_90a): as [`GEMM_WS`] with f32 operands read as tf32, k-tiles
/// of 32 (`wgmma.m64n256k8`, both operands K-major: B passed as its `n × k` transpose).
pub const GEMM_WS_TF32: GemmShape = GemmShape { bm: 128, bn: 256, bk: 32, stages: 4, threads: 384, elem_bytes: 4 };
/// Rows of tiles per group of the blocks' grouped order (L2 reuse).
pub const GEMM_GROUP: u32 = 8;

/// Sources staged in shared memory per step by `potential_tiled` (4 KiB per block).
pub const POTENTIAL_TILE: usize = 256;

/// Side of the square tiles of `transpose`; blocks are `(TRANSPOSE_TILE, TRANSPOSE_BLOCK_ROWS)`.
pub const TRANSPOSE_TILE: u32 = 32;

/// Rows of a tile each thread of `transpose` moves (`TRANSPOSE_TILE / TRANSPOSE_BLOCK_ROWS` = 4 each).
pub const TRANSPOSE_BLOCK_ROWS: u32 = 8;

// `transpose`'s `#[kernel(block = (32, 8))]` spells these out (the macro takes literals).
const _: () = assert!(TRANSPOSE_TILE == 32 && TRANSPOSE_BLOCK_ROWS == 8);

/// Bins `histogram` keeps per block in shared memory (16 KiB); above it, it
/// counts straight into global memory.
pub const HISTOGRAM_SHARED_BINS: usize = 4096;

/// Threads of the one block `device_selftest` runs as (two warps).
pub const SELFTEST_THREADS: u32 = 64;
/// Result rows of `device_selftest`: `out[row * 64 + tid]`.
pub const SELFTEST_ROWS: usize = 32;
/// Length of `device_selftest`'s output: the rows, then 8 words of global-atomic scratch.
pub const SELFTEST_LEN: usize = SELFTEST_ROWS * SELFTEST_THREADS as usize + 8;
/// Dynamic shared memory `device_selftest` must be launched with (bytes).
pub const SELFTEST_DYNAMIC_SHARED: usize = 4 * SELFTEST_THREADS as usize;

/// The bin of `v` among `n_bins` equal bins over `[lo, hi)`, or `None` if `v`
/// is outside (or NaN, or `n_bins == 0`).
///
/// The histogram kernel and `reference::histogram` both call this function,
/// so the GPU and the CPU bin with the same `f32` operations and the
/// comparison can be exact: `t = (v - lo) * (n_bins / (hi - lo))`, truncated,
/// clamped to `n_bins - 1` (rounding may push a `v` just below `hi` to `n_bins`).
///
/// ```
/// use gpu_kernels::histogram_bin;
/// assert_eq!(histogram_bin(0.5, 0.0, 1.0, 4), Some(2));
/// assert_eq!(histogram_bin(1.0, 0.0, 1.0, 4), None);
/// assert_eq!(histogram_bin(f32::NAN, 0.0, 1.0, 4), None);
/// ```
#[inline(always)]
pub fn histogram_bin(v: f32, lo: f32, hi: f32, n_bins: u32) -> Option<u32> {
    // `!(a && b)` rather than `v < lo || v >= hi`: NaN fails both tests and is dropped.
    if n_bins == 0 || !(v >= lo && v < hi) {
        return None;
    }
    let scale = n_bins as f32 / (hi - lo);
    // `to_u32_sat` is `as u32` in one `cvt.rzi.u32.f32`, without the clamps LLVM adds to `as`.
    let b = ((v - lo) * scale).to_u32_sat();
    // `min`, not `if b < n_bins { b } else { n_bins - 1 }` (the same value): with `n_bins >= 1`
    // known from above, LLVM sees that the bin is below `n_bins`, and a caller's bounds
    // check against it folds away.
    Some(b.min(n_bins - 1))
}

mod device;
mod gemm;
// Hopper's warpgroup MMA: in the device build for sm_90a only (the builder builds this crate
// for sm_90 and sm_90a; the host launches the sm_90a PTX on Hopper), always on the host.
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
mod gemm_wg;
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
mod gemm_ws;
mod probe;
#[cfg(not(target_arch = "nvptx64"))]
pub mod reference;
mod selftest;
pub use device::*;
pub use gemm::*;
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
pub use gemm_wg::*;
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
pub use gemm_ws::*;
pub use probe::*;
pub use selftest::*;
