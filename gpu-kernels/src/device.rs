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
use sluice_device::tile::{ByColumns, Matrix, MatrixMut, ThreadTiles};
use sluice_device::{
    atomic::{AtomicF32, AtomicU32, Ordering},
    math::DeviceFloat,
    shared_array, sync, thread, warp,
};

/// `out[i] = value` for every `i`. Any 1-D grid (grid-stride loop).
#[kernel]
pub fn fill_column(mut out: DeviceSliceMut<f32>, value: f32) {
    for (_, o) in out.grid_stride() {
        *o = value;
    }
}

/// `y[i] = a * x[i] + y[i]` for `i < min(y.len(), x.len())`. Any 1-D grid (`dims = 1`: the
/// host refuses a 2-D or 3-D launch, and the grid-stride loop needs no test of the shape).
#[kernel(dims = 1)]
pub fn saxpy(y: DeviceSliceMut<f32>, x: &[f32], a: f32) {
    let mut y = y.prefix(x.len());
    for (i, yi) in y.grid_stride() {
        // `x[i]` is checked against `x.len()`, which `prefix` made at least `y.len() > i`:
        // LLVM removes the check.
        *yi = a.mul_add(x[i], *yi);
    }
}

/// `out[j] = Σ_i m[i * cols + j]` for `i < rows`, `j < out.len()`: the sums of the columns of
/// a row-major `rows × cols` matrix, one thread per column. Any 1-D grid.
///
/// Written the natural safe way, with a bounds check of stride `cols` in the loop. sluice's
/// range-check pass tests once, before the loop, that the last row's index is in bounds and
/// then runs a copy of the loop without the checks (`docs/fast-safe-kernels.md`); an `m`
/// shorter than the loop reads still traps, at its first missing element.
#[kernel]
pub fn column_sums(mut out: DeviceSliceMut<f32>, m: &[f32], rows: usize, cols: usize) {
    for (j, s) in out.grid_stride() {
        let mut sum = 0.0f32;
        for i in 0..rows {
            sum += m[i * cols + j];
        }
        *s = sum;
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
    let i = thread::index_1d() as usize;
    let Some(o) = out.for_thread_1d() else { return };
    // i < out.len() <= targets.len(): the check folds away.
    let t = targets[i];
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

/// `q_s / sqrt(|t − s|² + eps2)` — the one formula both potential kernels use: `sqrt.rn` +
/// `div.rn` (CUDA C++'s `sqrtf` and `/` without fast math), and `|t − s|² + eps2` as three
/// fused multiply-adds with `eps2` folded into the first, `fma(dz, dz, fma(dy, dy, fma(dx,
/// dx, eps2)))`, the form a CUDA programmer writes for speed (one instruction fewer than
/// `dx*dx + dy*dy + dz*dz + eps2` contracted). Written out because LLVM never contracts
/// without fast-math flags; `benches/cuda/kernels.cuh` writes the same `fmaf`s, so the two
/// compilers' results are bitwise equal.
#[inline(always)]
fn interaction(t: &Particle, s: &Particle, eps2: f32) -> f32 {
    s.q / r2(t, s, eps2).sqrt()
}

/// `|t − s|² + eps2` as three fused multiply-adds, `eps2` folded into the first: three
/// subtractions and three `fma.rn` per interaction.
#[inline(always)]
fn r2(t: &Particle, s: &Particle, eps2: f32) -> f32 {
    let (dx, dy, dz) = (t.x - s.x, t.y - s.y, t.z - s.z);
    dz.mul_add(dz, dy.mul_add(dy, dx.mul_add(dx, eps2)))
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
    // One tile of sources per step: `chunk` is a slice of at most POTENTIAL_TILE sources, so
    // every index below is checked against a length LLVM knows (`j < chunk.len()`,
    // `k < chunk.len() <= POTENTIAL_TILE`) and the checks fold away.
    let mut base = 0;
    while base < sources.len() {
        let rest = &sources[base..];
        let chunk = &rest[..rest.len().min(POTENTIAL_TILE)];
        // The previous tile has been read by every thread before it is overwritten.
        sync::sync_threads();
        let mut j = tid;
        while j < chunk.len() {
            tile.set(j, chunk[j]);
            j += step;
        }
        sync::sync_threads();
        // Four sources per iteration (the unrolling nvcc applies to this loop),
        // then the rest; the additions stay in source order.
        // 32-bit counters (`m <= POTENTIAL_TILE`), as CUDA's `unsigned k`: a `usize`
        // counter is a 64-bit add and compare per step, and stays out of the uniform
        // registers that ptxas gives a loop counter the whole warp shares.
        let m = chunk.len() as u32;
        // The unrolled loop runs while `k < full`, a bound fixed before it: `k + 4 <= m`
        // kept `k + 4` alive across trips (two moves each, 2-3 registers more) and ran
        // 3-5% slower on the H200.
        let full = m & !3;
        let mut k = 0u32;
        while k < full {
            for u in 0..4 {
                let s = tile.get((k + u) as usize);
                acc += interaction(&t, &s, eps2);
            }
            k += 4;
        }
        while k < m {
            let s = tile.get(k as usize);
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
/// `sluice_device::math` for the error bounds of the approximate functions), `r2` as three
/// fused multiply-adds with `eps2` folded in ([`r2`]) and the accumulation as one
/// (`fma(q, rsqrt(r2), acc)`): eight floating-point instructions per interaction.
#[inline(always)]
fn accumulate_rsqrt(acc: f32, t: &Particle, s: &Particle, eps2: f32) -> f32 {
    s.q.mul_add(r2(t, s, eps2).rsqrt(), acc)
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
    // One tile of sources per step: `chunk` is a slice of at most POTENTIAL_TILE sources, so
    // every index below is checked against a length LLVM knows (`j < chunk.len()`,
    // `k < chunk.len() <= POTENTIAL_TILE`) and the checks fold away.
    let mut base = 0;
    while base < sources.len() {
        let rest = &sources[base..];
        let chunk = &rest[..rest.len().min(POTENTIAL_TILE)];
        // The previous tile has been read by every thread before it is overwritten.
        sync::sync_threads();
        let mut j = tid;
        while j < chunk.len() {
            tile.set(j, chunk[j]);
            j += step;
        }
        sync::sync_threads();
        // 32-bit counters (`m <= POTENTIAL_TILE`), as CUDA's `unsigned k`: a `usize`
        // counter is a 64-bit add and compare per step, and stays out of the uniform
        // registers that ptxas gives a loop counter the whole warp shares.
        let m = chunk.len() as u32;
        // The unrolled loop runs while `k < full`, a bound fixed before it: `k + 8 <= m`
        // kept `k + 8` alive across trips (two moves each, 2-3 registers more) and ran
        // 3-5% slower on the H200.
        let full = m & !7;
        let mut k = 0u32;
        while k < full {
            for u in 0..8 {
                let s = tile.get((k + u) as usize);
                acc = accumulate_rsqrt(acc, &t, &s, eps2);
            }
            k += 8;
        }
        while k < m {
            let s = tile.get(k as usize);
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
/// block's sum to `out[0]` with one atomic add (device scope).
/// `out[0]` must hold 0 (or a value to add to) before the launch; the order of
/// the per-block additions is unspecified, so the result may differ in the
/// last bits between runs.
///
/// Launch: 1-D; block a multiple of 32 up to 1024 (256 recommended; other
/// shapes trap with a message); grid `min(ceil(n / 1024), 8 × SMs)`.
///
/// `out` is a slice of atomics: every block adds to `out[0]`, and an atomic
/// add is what makes that safe (the host passes a mutable `f32` view).
#[kernel]
pub fn sum_reduce(out: &[AtomicF32], x: &[f32]) {
    let warp_sums = shared_array!(WARP_SUMS: [f32; 32]);
    let bdim = thread::block_dim_x();
    // Full warps are what the warp sums below need (they check it too, per warp).
    sluice_device::dassert!(
        bdim.is_multiple_of(32) && thread::block_dim_y() == 1 && thread::block_dim_z() == 1,
        "sum_reduce: the block must be 1-D with a multiple of 32 threads"
    );
    let Some(total) = out.first() else {
        return; // uniform over the grid: no thread reaches a barrier
    };
    let n = x.len();
    let stride = thread::grid_size_1d() as usize;
    let mut i = thread::index_1d() as usize;
    let (mut a0, mut a1, mut a2, mut a3) = (0.0f32, 0.0f32, 0.0f32, 0.0f32);
    while i + 3 * stride < n {
        a0 += x[i];
        a1 += x[i + stride];
        a2 += x[i + 2 * stride];
        a3 += x[i + 3 * stride];
        i += 4 * stride;
    }
    while i < n {
        a0 += x[i];
        i += stride;
    }
    let v = (a0 + a1) + (a2 + a3);

    let tid = thread::thread_idx_x();
    let (lane, w) = (tid % 32, tid / 32);
    let v = warp::sum_f32_converged(v);
    if lane == 0 {
        warp_sums.set(w as usize, v);
    }
    sync::sync_threads();
    if w == 0 {
        let n_warps = bdim / 32;
        let s = if lane < n_warps { warp_sums.get(lane as usize) } else { 0.0 };
        let s = warp::sum_f32_converged(s);
        if lane == 0 {
            total.fetch_add(s, Ordering::Relaxed);
        }
    }
}

/// How [`transpose`] splits its output: tiles of 32 × 32, block `(x, y)` takes tile `(x,
/// y)`, blocks of `(32, 8)` threads, four elements each.
pub type TransposeTiles = ThreadTiles<
    { TRANSPOSE_TILE as usize },
    { TRANSPOSE_TILE as usize },
    { TRANSPOSE_TILE as usize },
    { TRANSPOSE_BLOCK_ROWS as usize },
    ByColumns,
>;

/// `out[c * rows + r] = input[r * cols + c]` (`input`: `rows × cols`
/// row-major; `out`: `cols × rows` row-major). Each block moves one 32×32 tile
/// through shared memory: reads rows of the tile (coalesced), writes rows of
/// the transposed tile (coalesced). The shared tile is 32 rows of 33 (a 2-D
/// `shared_array!`, indexed `at(r, c)`/`set_at(r, c, v)`) so that reading a
/// column touches 32 different banks.
///
/// Launch: block `(32, 8)` (`#[kernel(block = (32, 8))]`: the host refuses other shapes,
/// `Error::LaunchBlockShape`); grid `(ceil(cols / 32), ceil(rows / 32))`. If `rows * cols` exceeds either
/// slice's length, it does nothing.
///
/// The output is written through this block's tile of a [`MatrixMut`]
/// (`block_tile`, [`ByColumns`]: block `(x, y)` owns output tile
/// `(x, y)`), split among the block's threads by `partition()` ([`TransposeTiles`]): each
/// thread owns four elements of a column of the tile, so every store is a plain
/// `st.global` with one writer by construction. The input is read through a
/// [`MatrixTile`](sluice_device::tile::MatrixTile) of a [`Matrix`], in bounds by
/// construction.
#[kernel(block = (32, 8))]
pub fn transpose(
    #[matrix(rows = cols, cols = rows)] out: Option<MatrixMut<f32, TransposeTiles>>,
    input: &[f32],
    rows: u32,
    cols: u32,
) {
    const T: usize = TRANSPOSE_TILE as usize;
    // 32 rows of 33: a column of padding, so that reading a column touches 32 banks.
    let tile = shared_array!(TILE: [[f32; TRANSPOSE_TILE as usize + 1]; TRANSPOSE_TILE as usize]);
    let (rows, cols) = (rows as usize, cols as usize);
    let (Some(src), Some(dst)) = (Matrix::try_new(input, rows, cols), out) else {
        return; // uniform over the grid
    };
    // This block's tile of `out` (`cols × rows`): tile (x, y) for block (x, y).
    let Some(dst) = dst.block_tile() else {
        return;
    };
    // The input tile: its tile row is the output tile's tile column, and the reverse. This
    // thread reads its elements with the same layout as it writes the output's.
    let src = src.tile::<T, T>(dst.col0() / T, dst.row0() / T).partition::<T, { TRANSPOSE_BLOCK_ROWS as usize }>();
    // This thread's elements of the output tile (the block is (32, 8, 1)).
    let mut mine = dst.partition();
    // Stage the input tile in shared memory, rows of it as the output's columns.
    for i in 0..mine.rows() {
        if let Some(&v) = src.get(i, 0) {
            let (r, c) = mine.position(i, 0);
            tile.set_at(r, c, v);
        }
    }
    sync::sync_threads();
    // Row r of the output tile is column r of the input tile (staged only where it exists).
    for i in 0..mine.rows() {
        if mine.contains(i, 0) {
            let (r, c) = mine.position(i, 0);
            mine.set(i, 0, tile.at(c, r));
        }
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
/// `bins` is a slice of atomics: the bin a value falls in is chosen by the data,
/// so any thread may update any bin, atomically.
#[kernel]
pub fn histogram(bins: &[AtomicU32], x: &[f32], lo: f32, hi: f32) {
    let local = shared_array!(BINS: [u32; HISTOGRAM_SHARED_BINS]);
    let (tid, bdim) = (thread::thread_idx_x() as usize, thread::block_dim_x() as usize);
    let stride = thread::grid_size_1d() as usize;
    let Ok(nb) = u32::try_from(bins.len()) else {
        return; // uniform over the grid
    };
    if nb == 0 {
        return;
    }
    if bins.len() > HISTOGRAM_SHARED_BINS {
        let mut i = thread::index_1d() as usize;
        while i < x.len() {
            if let Some(b) = histogram_bin(x[i], lo, hi, nb) {
                bins[b as usize].fetch_add(1, Ordering::Relaxed);
            }
            i += stride;
        }
        return;
    }
    let mut j = tid;
    while j < bins.len() {
        local.set(j, 0);
        j += bdim;
    }
    sync::sync_threads();
    let mut i = thread::index_1d() as usize;
    while i < x.len() {
        if let Some(b) = histogram_bin(x[i], lo, hi, nb) {
            local.add(b as usize, 1);
        }
        i += stride;
    }
    sync::sync_threads();
    let mut j = tid;
    while j < bins.len() {
        let count = local.get(j);
        if count != 0 {
            bins[j].fetch_add(count, Ordering::Relaxed);
        }
        j += bdim;
    }
}
