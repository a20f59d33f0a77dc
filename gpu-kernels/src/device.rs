//! The kernels, each one `#[kernel]` function. See the crate docs for the
//! table of signatures and launch configurations.
//!
//! On the device each becomes a `#[no_mangle] extern "ptx-kernel"` entry whose
//! slices arrive as (pointer, length) pairs, rebuilt as `&[T]` and
//! `DeviceSliceMut<T>` before the body runs. On the host each becomes a typed
//! descriptor (`sluice::kernels::<name>`). What the entries rely on, and
//! sluice's bound views guarantee: each (pointer, length) pair describes live,
//! aligned device memory of that many elements; a mutable slice is accessed by
//! this launch only (no other stream, copy or host code touches it until the
//! launch's fence); read-only slices are not written during the launch.

use super::{histogram_bin, Particle, HISTOGRAM_SHARED_BINS, POTENTIAL_TILE, TRANSPOSE_BLOCK_ROWS, TRANSPOSE_TILE};
use sluice_device::kernel;
use sluice_device::slice::DeviceSliceMut;
use sluice_device::{
    atomic,
    math::DeviceFloat,
    shared_array, sync, thread,
    warp::{self, FULL_MASK},
    MemoryScope,
};

/// `out[i] = value` for every `i`. Any 1-D grid (grid-stride loop).
#[kernel]
pub fn fill_column(mut out: DeviceSliceMut<f32>, value: f32) {
    for (_, o) in out.grid_stride() {
        *o = value;
    }
}

/// `y[i] = a * x[i] + y[i]` for `i < min(y.len(), x.len())`. Any 1-D grid.
#[kernel]
pub fn saxpy(y: DeviceSliceMut<f32>, x: &[f32], a: f32) {
    let mut y = y.prefix(x.len());
    for (i, yi) in y.grid_stride() {
        // SAFETY: i < y.len() <= x.len().
        let xi = unsafe { *x.get_unchecked(i) };
        // One `fma.rn`, what nvcc makes of `a * x[i] + y[i]`.
        *yi = a.mul_add(xi, *yi);
    }
}

/// Rust-CUDA's `vecadd` example, verbatim but for the attribute: `c[i] = a[i] + b[i]` for
/// `i < a.len()`, writing through a raw pointer, so it is an unchecked kernel (launched with
/// `unsafe { st.launch_unchecked(..) }`, the caller vouching that `b` and `c` hold at least
/// `a.len()` elements). `b[idx]` keeps its bounds check: this is the "natural" form whose
/// cost [`vecadd_unchecked_index`] measures.
///
/// # Safety
/// `c` points to at least `a.len()` writable `f32`s, one thread per element.
#[kernel(unchecked)]
pub unsafe fn vecadd(a: &[f32], b: &[f32], c: *mut f32) {
    let idx = sluice_device::thread::index_1d() as usize;
    if idx < a.len() {
        // SAFETY: the launch's caller vouched that `c` holds `a.len()` elements.
        let elem = unsafe { &mut *c.add(idx) };
        *elem = a[idx] + b[idx];
    }
}

/// [`vecadd`] without the bounds check on `b` (`get_unchecked`), for the cost of a bounds
/// check: compare registers, stack and time of the two.
///
/// # Safety
/// As [`vecadd`], and `b` holds at least `a.len()` elements.
#[kernel(unchecked)]
pub unsafe fn vecadd_unchecked_index(a: &[f32], b: &[f32], c: *mut f32) {
    let idx = sluice_device::thread::index_1d() as usize;
    if idx < a.len() {
        // SAFETY: the launch's caller vouched for `c` and `b` holding `a.len()` elements.
        unsafe { *c.add(idx) = a[idx] + *b.get_unchecked(idx) };
    }
}

/// The softened Coulomb potential of the sources at each target:
/// `out[i] = Σ_k q_k / sqrt(|t_i − s_k|² + eps2)` for `i < min(out.len(), targets.len())`.
/// 1-D, one thread per row.
#[kernel]
pub fn potential(out: DeviceSliceMut<f32>, targets: &[Particle], sources: &[Particle], eps2: f32) {
    let mut out = out.prefix(targets.len());
    let Some(o) = out.for_thread_1d() else { return };
    // SAFETY: for_thread_1d returned Some, so index_1d() < out.len() <= targets.len().
    let t = unsafe { *targets.get_unchecked(thread::index_1d() as usize) };
    // Four sources per iteration, the unrolling nvcc applies to the same loop.
    let mut acc = 0.0f32;
    let mut quads = sources.chunks_exact(4);
    for q in &mut quads {
        for s in q {
            acc += interaction(&t, s, eps2);
        }
    }
    for s in quads.remainder() {
        acc += interaction(&t, s, eps2);
    }
    *o = acc;
}

/// `q_s / sqrt(|t − s|² + eps2)` — the one formula both potential kernels and
/// the CUDA C++ versions use: `sqrt.rn` + `div.rn` (nvcc's `sqrtf` and `/`
/// without fast math), and the fused multiply-adds nvcc forms by default
/// (`-fmad=true`) from `dx*dx + dy*dy + dz*dz + eps2` — `fma(dz, dz,
/// fma(dx, dx, dy*dy)) + eps2`, as read off nvcc 13.5's SASS — written out
/// because LLVM never contracts without fast-math flags. Same operations in
/// the same order: the two compilers' results are bitwise equal.
#[inline(always)]
fn interaction(t: &Particle, s: &Particle, eps2: f32) -> f32 {
    let (dx, dy, dz) = (t.x - s.x, t.y - s.y, t.z - s.z);
    let r2 = dz.mul_add(dz, dx.mul_add(dx, dy * dy)) + eps2;
    s.q / r2.sqrt()
}

/// As [`potential`], with the sources staged through shared memory
/// [`POTENTIAL_TILE`] at a time: each block loads a tile cooperatively (one
/// coalesced load per thread), then every thread of the block reads it from
/// shared memory (a broadcast, one `ld.shared.v4` per source).
///
/// Launch: 1-D, one thread per row; any block size up to 1024 (256
/// recommended), grid `ceil(rows / block)`.
///
#[kernel]
pub fn potential_tiled(out: DeviceSliceMut<f32>, targets: &[Particle], sources: &[Particle], eps2: f32) {
    let tile = shared_array!(SOURCES: [Particle; POTENTIAL_TILE]);
    let mut out = out.prefix(targets.len());
    let i = thread::index_1d() as usize;
    // Threads past the last row stay for the barriers and only skip their store.
    let t = targets.get(i).copied().unwrap_or(Particle { x: 0.0, y: 0.0, z: 0.0, q: 0.0 });
    let (tid, step) = (thread::thread_idx_x() as usize, thread::block_dim_x() as usize);

    let mut acc = 0.0f32;
    let mut base = 0usize;
    while base < sources.len() {
        let m = if sources.len() - base < POTENTIAL_TILE { sources.len() - base } else { POTENTIAL_TILE };
        // The previous tile has been read by every thread before it is overwritten.
        sync::sync_threads();
        let mut j = tid;
        while j < m {
            // SAFETY: j < m <= POTENTIAL_TILE (tile), base + j < sources.len().
            unsafe { tile.set_unchecked(j, *sources.get_unchecked(base + j)) };
            j += step;
        }
        sync::sync_threads();
        // Four sources per iteration (the unrolling nvcc applies to this loop),
        // then the rest; the additions stay in source order.
        let mut k = 0;
        while k + 4 <= m {
            for u in 0..4 {
                // SAFETY: k + u < m <= POTENTIAL_TILE, written before the barrier above.
                let s = unsafe { tile.get_unchecked(k + u) };
                acc += interaction(&t, &s, eps2);
            }
            k += 4;
        }
        while k < m {
            // SAFETY: k < m <= POTENTIAL_TILE, written before the barrier above.
            let s = unsafe { tile.get_unchecked(k) };
            acc += interaction(&t, &s, eps2);
            k += 1;
        }
        base += POTENTIAL_TILE;
    }
    if let Some(o) = out.for_thread_1d() {
        *o = acc;
    }
}

/// `acc + q_s * rsqrt(|t − s|² + eps2)`: the interaction the way a CUDA programmer writes
/// it for speed, `acc += s.q * rsqrtf(r2)` (`rsqrt.approx.f32`, ≤ 2 ulp; see
/// `sluice_device::math` for the error bounds of the approximate functions), with the
/// contractions nvcc makes by default (`-fmad=true`): `dx*dx + dy*dy + dz*dz + eps2` as two
/// fused multiply-adds, and the accumulation as one (`fma(q, rsqrt(r2), acc)`) — written
/// out, because LLVM never contracts without fast-math flags.
#[inline(always)]
fn accumulate_rsqrt(acc: f32, t: &Particle, s: &Particle, eps2: f32) -> f32 {
    let (dx, dy, dz) = (t.x - s.x, t.y - s.y, t.z - s.z);
    let r2 = dz.mul_add(dz, dx.mul_add(dx, dy * dy)) + eps2;
    s.q.mul_add(r2.rsqrt(), acc)
}

/// [`potential_tiled`] with `rsqrt` instead of `sqrt` and a division: the form of the seed
/// workload's kernel in CUDA C++ (`rsqrtf`, tiled through shared memory, inner loop
/// unrolled 8 times — `#pragma unroll 8`), which `benches/cuda/kernels.cuh` has as
/// `potential_tiled_rsqrt`. Relative error against the f64 reference ≤ 1e-5 (the
/// approximation, summed).
///
/// Launch: 1-D, one thread per row; block up to 1024 (256 recommended), grid
/// `ceil(rows / block)`.
#[kernel]
pub fn potential_tiled_rsqrt(out: DeviceSliceMut<f32>, targets: &[Particle], sources: &[Particle], eps2: f32) {
    let tile = shared_array!(SOURCES: [Particle; POTENTIAL_TILE]);
    let mut out = out.prefix(targets.len());
    let i = thread::index_1d() as usize;
    // Threads past the last row stay for the barriers and only skip their store.
    let t = targets.get(i).copied().unwrap_or(Particle { x: 0.0, y: 0.0, z: 0.0, q: 0.0 });
    let (tid, step) = (thread::thread_idx_x() as usize, thread::block_dim_x() as usize);
    let mut acc = 0.0f32;
    let mut base = 0usize;
    while base < sources.len() {
        let m = if sources.len() - base < POTENTIAL_TILE { sources.len() - base } else { POTENTIAL_TILE };
        sync::sync_threads();
        let mut j = tid;
        while j < m {
            // SAFETY: j < m <= POTENTIAL_TILE (tile), base + j < sources.len().
            unsafe { tile.set_unchecked(j, *sources.get_unchecked(base + j)) };
            j += step;
        }
        sync::sync_threads();
        let mut k = 0;
        while k + 8 <= m {
            for u in 0..8 {
                // SAFETY: k + u < m <= POTENTIAL_TILE, written before the barrier above.
                let s = unsafe { tile.get_unchecked(k + u) };
                acc = accumulate_rsqrt(acc, &t, &s, eps2);
            }
            k += 8;
        }
        while k < m {
            // SAFETY: k < m <= POTENTIAL_TILE, written before the barrier above.
            let s = unsafe { tile.get_unchecked(k) };
            acc = accumulate_rsqrt(acc, &t, &s, eps2);
            k += 1;
        }
        base += POTENTIAL_TILE;
    }
    if let Some(o) = out.for_thread_1d() {
        *o = acc;
    }
}

/// `out[0] += Σ x` in one launch. Each thread sums a grid-stride share of `x`
/// (four independent loads per iteration), each warp reduces with shuffles,
/// warp 0 reduces the warps' sums from shared memory, and thread 0 adds the
/// block's sum to `out[0]` with one `red.global.add.f32` (device scope).
/// `out[0]` must hold 0 (or a value to add to) before the launch; the order of
/// the per-block additions is unspecified, so the result may differ in the
/// last bits between runs.
///
/// Launch: 1-D; block a multiple of 32 up to 1024 (256 recommended; other
/// shapes trap with a message); grid `min(ceil(n / 1024), 8 × SMs)`.
///
/// `out[0]` is updated with one atomic per block: a general write, so the body
/// takes the raw pointer (`out.as_mut_ptr()`) under `unsafe`.
#[kernel]
pub fn sum_reduce(out: DeviceSliceMut<f32>, x: &[f32]) {
    let out_len = out.len();
    let out = out.as_mut_ptr();
    let warp_sums = shared_array!(WARP_SUMS: [f32; 32]);
    let bdim = thread::block_dim_x();
    // Full warps are what makes the FULL_MASK shuffles below defined.
    sluice_device::dassert!(
        bdim.is_multiple_of(32) && thread::block_dim_y() == 1 && thread::block_dim_z() == 1,
        "sum_reduce: the block must be 1-D with a multiple of 32 threads"
    );
    if out_len == 0 {
        return; // uniform over the grid: no thread reaches a barrier
    }
    let n = x.len();
    let stride = thread::grid_size_1d() as usize;
    let mut i = thread::index_1d() as usize;
    let (mut a0, mut a1, mut a2, mut a3) = (0.0f32, 0.0f32, 0.0f32, 0.0f32);
    while i + 3 * stride < n {
        // SAFETY: i + 3 * stride < n, and the smaller offsets too.
        unsafe {
            a0 += *x.get_unchecked(i);
            a1 += *x.get_unchecked(i + stride);
            a2 += *x.get_unchecked(i + 2 * stride);
            a3 += *x.get_unchecked(i + 3 * stride);
        }
        i += 4 * stride;
    }
    while i < n {
        // SAFETY: i < n.
        a0 += unsafe { *x.get_unchecked(i) };
        i += stride;
    }
    let mut v = (a0 + a1) + (a2 + a3);

    let tid = thread::thread_idx_x();
    let (lane, w) = (tid % 32, tid / 32);
    // SAFETY: every lane of every (full) warp runs this code: no thread has left.
    v = unsafe { warp_sum_down(v) };
    if lane == 0 {
        warp_sums.set(w as usize, v);
    }
    sync::sync_threads();
    if w == 0 {
        let n_warps = bdim / 32;
        let mut s = if lane < n_warps { warp_sums.get(lane as usize) } else { 0.0 };
        // SAFETY: warp 0 is a full warp and all its lanes take this branch.
        s = unsafe { warp_sum_down(s) };
        if lane == 0 {
            // SAFETY: out_len >= 1, so `out` points to at least one f32 of global
            // memory that this launch alone updates (the host's bound view).
            unsafe { atomic::global::add(out, s, MemoryScope::Device) };
        }
    }
}

/// Tree reduction within a warp with `shfl.down`; lane 0 gets the sum.
///
/// # Safety
/// All 32 lanes of the warp call it together.
#[inline(always)]
unsafe fn warp_sum_down(mut v: f32) -> f32 {
    let mut offset = 16;
    while offset > 0 {
        // SAFETY: the caller guarantees the full warp is converged here.
        v += unsafe { warp::shfl_down(FULL_MASK, v, offset) };
        offset /= 2;
    }
    v
}

/// `out[c * rows + r] = input[r * cols + c]` (`input`: `rows × cols`
/// row-major; `out`: `cols × rows` row-major). Each block moves one 32×32 tile
/// through shared memory: reads rows of the tile (coalesced), writes rows of
/// the transposed tile (coalesced). The tile is 32×33 so that reading a column
/// touches 32 different banks.
///
/// Launch: block `(32, 8)` (other shapes trap with a message); grid
/// `(ceil(cols / 32), ceil(rows / 32))`. If `rows * cols` exceeds either
/// slice's length, it does nothing.
///
/// Each thread writes the elements its tile position maps to: a general
/// indexed write, done through `out.as_mut_ptr()` under `unsafe`.
#[kernel]
pub fn transpose(out: DeviceSliceMut<f32>, input: &[f32], rows: u32, cols: u32) {
    let (out_len, input_len) = (out.len() as u64, input.len() as u64);
    let out = out.as_mut_ptr();
    const T: u32 = TRANSPOSE_TILE;
    const PITCH: u32 = TRANSPOSE_TILE + 1;
    let tile = shared_array!(TILE: [f32; (TRANSPOSE_TILE * (TRANSPOSE_TILE + 1)) as usize]);
    sluice_device::dassert!(
        thread::block_dim_x() == T && thread::block_dim_y() == TRANSPOSE_BLOCK_ROWS && thread::block_dim_z() == 1,
        "transpose: the block must be (32, 8, 1)"
    );
    let n = rows as u64 * cols as u64;
    if n > out_len || n > input_len {
        return; // uniform over the grid
    }
    let (tx, ty) = (thread::thread_idx_x(), thread::thread_idx_y());
    let (c0, r0) = (thread::block_idx_x() * T, thread::block_idx_y() * T);

    let c = c0 + tx;
    let mut j = 0;
    while j < T {
        let r = r0 + ty + j;
        if r < rows && c < cols {
            // SAFETY: r < rows, c < cols, so r * cols + c < n <= input_len;
            // the tile index (ty + j) * 33 + tx < 32 * 33.
            unsafe {
                let v = *input.get_unchecked(r as usize * cols as usize + c as usize);
                tile.set_unchecked(((ty + j) * PITCH + tx) as usize, v);
            }
        }
        j += TRANSPOSE_BLOCK_ROWS;
    }
    sync::sync_threads();
    let r = r0 + tx; // a row of `input` = a column of `out`
    let mut j = 0;
    while j < T {
        let c = c0 + ty + j; // a column of `input` = a row of `out`
        if r < rows && c < cols {
            // SAFETY: c * rows + r < n <= out_len. Each (r, c) of the grid is
            // written by exactly one thread (one tile per block, one (tx, ty + j)
            // per thread), and no thread reads `out`. The tile index
            // tx * 33 + ty + j < 32 * 33, written before the barrier.
            unsafe {
                let v = tile.get_unchecked((tx * PITCH + ty + j) as usize);
                *out.add(c as usize * rows as usize + r as usize) = v;
            }
        }
        j += TRANSPOSE_BLOCK_ROWS;
    }
}

/// Counts `x` into `bins.len()` equal bins over `[lo, hi)` (see
/// [`histogram_bin`]); values outside are ignored. Adds to `bins`.
///
/// Each block keeps a sub-histogram in shared memory (zeroed cooperatively,
/// incremented with `red.shared.add.u32`), then adds its non-zero bins to
/// `bins` with one global atomic each. With more than
/// [`HISTOGRAM_SHARED_BINS`] bins it increments `bins` directly.
///
/// Launch: 1-D, any grid (grid-stride); block 256, grid about 2 blocks per SM.
///
/// Bins are updated with atomics at data-dependent indices: the body takes
/// `bins.as_mut_ptr()` under `unsafe`.
#[kernel]
pub fn histogram(bins: DeviceSliceMut<u32>, x: &[f32], lo: f32, hi: f32) {
    let local = shared_array!(BINS: [u32; HISTOGRAM_SHARED_BINS]);
    let n_bins = bins.len() as u64;
    let bins = bins.as_mut_ptr();
    let (tid, bdim) = (thread::thread_idx_x() as usize, thread::block_dim_x() as usize);
    let stride = thread::grid_size_1d() as usize;
    let nb = n_bins as u32;
    if n_bins == 0 || n_bins > u32::MAX as u64 {
        return; // uniform over the grid
    }
    if n_bins > HISTOGRAM_SHARED_BINS as u64 {
        let mut i = thread::index_1d() as usize;
        while i < x.len() {
            // SAFETY: i < x.len().
            let v = unsafe { *x.get_unchecked(i) };
            if let Some(b) = histogram_bin(v, lo, hi, nb) {
                // SAFETY: b < n_bins, the length of `bins`; global memory this
                // launch alone updates, only atomically.
                unsafe { atomic::global::add(bins.add(b as usize), 1u32, MemoryScope::Device) };
            }
            i += stride;
        }
        return;
    }
    let nb_us = nb as usize;
    let mut j = tid;
    while j < nb_us {
        // SAFETY: j < n_bins <= HISTOGRAM_SHARED_BINS.
        unsafe { local.set_unchecked(j, 0) };
        j += bdim;
    }
    sync::sync_threads();
    let mut i = thread::index_1d() as usize;
    while i < x.len() {
        // SAFETY: i < x.len().
        let v = unsafe { *x.get_unchecked(i) };
        if let Some(b) = histogram_bin(v, lo, hi, nb) {
            // SAFETY: b < n_bins <= HISTOGRAM_SHARED_BINS (histogram_bin's
            // contract and the branch above), so the address is inside `local`,
            // aligned for u32; shared memory is only this block's, and its
            // threads update this array only atomically until the barrier.
            // (The bounds-checked `local.add(b, 1)` costs a compare per value
            // here: LLVM does not see that b < 4096.)
            unsafe { atomic::shared::add(local.as_ptr().add(b), 1u32, MemoryScope::Block) };
        }
        i += stride;
    }
    sync::sync_threads();
    let mut j = tid;
    while j < nb_us {
        // SAFETY: j < n_bins <= HISTOGRAM_SHARED_BINS, counted before the barrier.
        let count = unsafe { local.get_unchecked(j) };
        if count != 0 {
            // SAFETY: j < n_bins, the length of `bins`; updated only atomically.
            unsafe { atomic::global::add(bins.add(j), count, MemoryScope::Device) };
        }
        j += bdim;
    }
}
