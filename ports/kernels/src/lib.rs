//! Kernels in Rust-CUDA's style — `use cuda_std::prelude::*`, `#[kernel] pub unsafe fn`,
//! raw output pointers, `#[address_space(shared)] static mut` tiles — built by sluice.
//!
//! Nothing here is sluice-specific: `cuda_std` is `sluice-cuda-std` under its usual name
//! (see `Cargo.toml`), and the code is what a Rust-CUDA kernel crate holds. The one
//! difference a porter meets is on the crate level: no `#![no_std]`, `#![feature(..)]` or
//! `cuda_builder` attributes are needed (sluice's builder adds them for the device build),
//! and the crate also builds for the host, where each `#[kernel]` becomes a typed handle
//! plus the same body for sluice's CPU backend. `docs/porting-rust-cuda.md` has the diff.
//!
//! | kernel | launch |
//! | --- | --- |
//! | [`vecadd`]`(a, b, c)`: `c[i] = a[i] + b[i]` | 1-D, one thread per element |
//! | [`vecadd_unchecked`]: the same without the bounds check on `b` | as `vecadd` |
//! | [`gemm_naive`]`(a, b, c, m, n, k)`: `C = A·B`, one thread per element of `C` | 2-D, block `(16, 16)` or any, grid covering `(n, m)` |
//! | [`gemm_tiled`]: the same through `TILE × TILE` shared tiles | block `(TILE, TILE)` exactly, grid `(ceil(n / TILE), ceil(m / TILE))` |
//! | [`sha256`]`(data, offsets, digests)`: SHA-256 of message `i` = `data[offsets[i]..offsets[i + 1]]` | 1-D, one thread per message |
//!
//! Matrices are row-major `f32`: `A` is `m × k`, `B` is `k × n`, `C` is `m × n`.

use cuda_std::prelude::*;
// `mul_add` on the GPU (`fma.rn.f32`); the host's `f32` has it as an inherent method.
#[cfg(target_arch = "nvptx64")]
use cuda_std::GpuFloat;
use sha2::{Digest, Sha256};

/// The side of the square shared tiles of [`gemm_tiled`] (its block is `TILE × TILE` threads).
pub const TILE: usize = 32;

/// `c[i] = a[i] + b[i]` for `i < a.len()`, one thread per element.
///
/// # Safety
/// `b` has at least `a.len()` elements (or the GPU traps), `c` points to at least
/// `a.len()` writable `f32`s not read by the launch.
#[kernel]
pub unsafe fn vecadd(a: &[f32], b: &[f32], c: *mut f32) {
    let i = thread::index_1d() as usize;
    if i < a.len() {
        // SAFETY: `i < a.len()`, and the launch's caller vouched that `c` holds `a.len()`
        // elements; thread `i` is the only one writing element `i`.
        unsafe { *c.add(i) = a[i] + b[i] };
    }
}

/// [`vecadd`] without the bounds check on `b` (`get_unchecked`): the pair measures what
/// the check costs.
///
/// # Safety
/// As [`vecadd`], and `b` has at least `a.len()` elements.
#[kernel]
pub unsafe fn vecadd_unchecked(a: &[f32], b: &[f32], c: *mut f32) {
    let i = thread::index_1d() as usize;
    if i < a.len() {
        // SAFETY: `i < a.len() <= b.len()` (the caller's duty) and `c` as in `vecadd`.
        unsafe { *c.add(i) = a[i] + *b.get_unchecked(i) };
    }
}

/// `C = A·B`, one thread per element of `C`: thread `(x, y)` of the grid computes
/// `C[y][x]` (threads outside `n × m` do nothing).
///
/// # Safety
/// `a` holds `m * k` elements, `b` holds `k * n` (shorter slices trap), `c` points to
/// `m * n` writable `f32`s not read by the launch.
#[kernel]
pub unsafe fn gemm_naive(a: &[f32], b: &[f32], c: *mut f32, m: usize, n: usize, k: usize) {
    let idx = thread::index_2d();
    let (row, col) = (idx.y as usize, idx.x as usize);
    if row < m && col < n {
        let mut sum = 0.0f32;
        for i in 0..k {
            // One rounding per step, as nvcc's contracted `sum += a * b`.
            sum = a[row * k + i].mul_add(b[i * n + col], sum);
        }
        // SAFETY: `row < m`, `col < n`: inside `c`'s `m * n` elements (the caller's duty);
        // one thread per element.
        unsafe { *c.add(row * n + col) = sum };
    }
}

/// `C = A·B` through shared memory: each block computes one `TILE × TILE` tile of `C`,
/// walking `k` one tile of `A` and one of `B` at a time (zero-padded at the edges).
///
/// # Safety
/// As [`gemm_naive`], and the block is exactly `(TILE, TILE, 1)` threads.
#[kernel]
pub unsafe fn gemm_tiled(a: &[f32], b: &[f32], c: *mut f32, m: usize, n: usize, k: usize) {
    #[address_space(shared)]
    static mut TILE_A: [[f32; TILE]; TILE] = [[0.0; TILE]; TILE];
    #[address_space(shared)]
    static mut TILE_B: [[f32; TILE]; TILE] = [[0.0; TILE]; TILE];

    let (tx, ty) = (thread::thread_idx_x() as usize, thread::thread_idx_y() as usize);
    let row = thread::block_idx_y() as usize * TILE + ty;
    let col = thread::block_idx_x() as usize * TILE + tx;
    let mut sum = 0.0f32;
    let mut t = 0;
    while t < k {
        let a_val = if row < m && t + tx < k { a[row * k + t + tx] } else { 0.0 };
        let b_val = if t + ty < k && col < n { b[(t + ty) * n + col] } else { 0.0 };
        // SAFETY: each thread writes its own element (ty, tx) of each tile; the barrier
        // above the loop's end orders these writes after every read of the previous step.
        unsafe {
            TILE_A[ty][tx] = a_val;
            TILE_B[ty][tx] = b_val;
        }
        thread::sync_threads();
        for i in 0..TILE {
            // SAFETY: every element was written before the barrier above, and none is
            // written again before the barrier below.
            sum = unsafe { TILE_A[ty][i].mul_add(TILE_B[i][tx], sum) };
        }
        thread::sync_threads();
        t += TILE;
    }
    if row < m && col < n {
        // SAFETY: `row < m`, `col < n`: inside `c`'s `m * n` elements (the caller's duty);
        // one thread per element.
        unsafe { *c.add(row * n + col) = sum };
    }
}

/// [`gemm_tiled`] without bounds checks (`get_unchecked` for `a` and `b`, and the block shape
/// stated once with `assert_unchecked` for the tiles), as CUDA C++ writes it: what the checks
/// cost. They keep the slices' lengths and the tile indices' limits alive through
/// the loop: 40 registers against 32 on sm_90, so one 1024-thread block per SM instead of
/// two.
///
/// # Safety
/// As [`gemm_tiled`]; here a slice shorter than `m * k` (`a`) or `k * n` (`b`) is read out
/// of bounds instead of trapping.
#[kernel]
pub unsafe fn gemm_tiled_unchecked(a: &[f32], b: &[f32], c: *mut f32, m: usize, n: usize, k: usize) {
    #[address_space(shared)]
    static mut TILE_A: [[f32; TILE]; TILE] = [[0.0; TILE]; TILE];
    #[address_space(shared)]
    static mut TILE_B: [[f32; TILE]; TILE] = [[0.0; TILE]; TILE];

    let (tx, ty) = (thread::thread_idx_x() as usize, thread::thread_idx_y() as usize);
    // SAFETY: the block is TILE × TILE threads (the caller's duty), so `tx, ty < TILE`:
    // said once, it removes the tile indices' checks below.
    unsafe { core::hint::assert_unchecked(tx < TILE && ty < TILE) };
    let row = thread::block_idx_y() as usize * TILE + ty;
    let col = thread::block_idx_x() as usize * TILE + tx;
    let mut sum = 0.0f32;
    let mut t = 0;
    while t < k {
        // SAFETY: `row < m`, `t + tx < k`: inside `a`'s `m * k` elements (the caller's duty).
        let a_val = if row < m && t + tx < k { unsafe { *a.get_unchecked(row * k + t + tx) } } else { 0.0 };
        // SAFETY: `t + ty < k`, `col < n`: inside `b`'s `k * n` elements (the caller's duty).
        let b_val = if t + ty < k && col < n { unsafe { *b.get_unchecked((t + ty) * n + col) } } else { 0.0 };
        // SAFETY: each thread writes its own element of each tile, ordered as in `gemm_tiled`.
        unsafe {
            TILE_A[ty][tx] = a_val;
            TILE_B[ty][tx] = b_val;
        }
        thread::sync_threads();
        for i in 0..TILE {
            // SAFETY: every element was written before the barrier above, and none is
            // written again before the barrier below.
            sum = unsafe { TILE_A[ty][i].mul_add(TILE_B[i][tx], sum) };
        }
        thread::sync_threads();
        t += TILE;
    }
    if row < m && col < n {
        // SAFETY: `row < m`, `col < n`: inside `c`'s `m * n` elements (the caller's duty);
        // one thread per element.
        unsafe { *c.add(row * n + col) = sum };
    }
}

/// SHA-256 of many independent messages, one thread per message (the `sha2` crate's
/// `Sha256`, compiled for the GPU): `digests[i]` = SHA-256 of
/// `data[offsets[i]..offsets[i + 1]]` for `i + 1 < offsets.len()`.
///
/// # Safety
/// `digests` points to `offsets.len() - 1` writable digests not read by the launch;
/// the offsets are non-decreasing and within `data` (else the GPU traps).
#[kernel]
pub unsafe fn sha256(data: &[u8], offsets: &[u32], digests: *mut [u8; 32]) {
    let i = thread::index_1d() as usize;
    if i + 1 < offsets.len() {
        let message = &data[offsets[i] as usize..offsets[i + 1] as usize];
        let digest: [u8; 32] = Sha256::digest(message).into();
        // SAFETY: `i < offsets.len() - 1`, the number of digests `digests` holds (the
        // caller's duty); one thread per digest.
        unsafe { digests.add(i).write(digest) };
    }
}
