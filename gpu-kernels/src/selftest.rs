//! `device_selftest`: one launch that exercises the device std's asm-backed
//! operations (shuffles, votes, match, barriers with predicates, shared and
//! global atomics of every kind, dynamic shared memory, libdevice math,
//! `dprintln!`) and records what each returned, for
//! `gpu_kernels::reference::check_selftest` to compare with the values CUDA's
//! semantics prescribe. Launch: grid 1, block [`SELFTEST_THREADS`] (64, two
//! warps), dynamic shared memory [`SELFTEST_DYNAMIC_SHARED`] bytes, `out` of
//! [`SELFTEST_LEN`] `u32`.

use sluice_device::kernel;
use sluice_device::slice::DeviceSliceMut;
use {
    super::{SELFTEST_DYNAMIC_SHARED, SELFTEST_LEN, SELFTEST_ROWS, SELFTEST_THREADS},
    sluice_device::math::{DeviceFloat, FastFloat},
    sluice_device::warp::{self, FULL_MASK},
    sluice_device::{atomic, dassert, dprintln, shared, shared_array, sync, thread, MemoryScope},
};

/// See the module docs. Each thread writes its own column of rows through
/// `out.as_mut_ptr()` (a general indexed write, under `unsafe`).
#[kernel]
pub fn device_selftest(out: DeviceSliceMut<u32>) {
    let len = out.len() as u64;
    let out = out.as_mut_ptr();
    let tid = thread::thread_idx_x();
    dassert!(
        len >= SELFTEST_LEN as u64 && thread::block_dim_x() == SELFTEST_THREADS && thread::grid_dim_x() == 1,
        "device_selftest: one block of 64 threads and SELFTEST_LEN outputs"
    );
    let n = SELFTEST_THREADS as usize;
    let put = |row: usize, v: u32| {
        // SAFETY: row < SELFTEST_ROWS and tid < 64, so the index is below
        // SELFTEST_ROWS * 64 <= SELFTEST_LEN <= len; each (row, tid) is
        // written by thread `tid` only.
        unsafe { *out.add(row * n + tid as usize) = v };
    };
    let lane = warp::lane_id();
    put(0, lane);
    // SAFETY: (all warp operations below) the block is two full warps and
    // every lane executes every call (no thread leaves before the end).
    unsafe {
        put(1, warp::shfl_idx(FULL_MASK, tid * 3, 5));
        put(2, warp::shfl_up(FULL_MASK, tid, 1));
        put(3, warp::shfl_down(FULL_MASK, tid, 1));
        put(4, warp::shfl_xor(FULL_MASK, tid, 1));
        let wide = warp::shfl_xor(FULL_MASK, (tid as u64) << 33 | tid as u64, 2);
        put(5, (wide >> 33) as u32 + wide as u32);
        put(6, warp::ballot(FULL_MASK, lane.is_multiple_of(3)));
        put(7, warp::any(FULL_MASK, lane == 7) as u32 + 2 * warp::all(FULL_MASK, lane < 31) as u32);
        put(8, warp::match_any(FULL_MASK, lane / 4));
        #[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_80"))]
        put(9, warp::reduce_add_u32(FULL_MASK, lane));
        #[cfg(all(target_arch = "nvptx64", not(target_feature = "sm_80")))]
        put(9, 496);
        put(10, warp::sum_f32(lane as f32) as u32);
        put(11, warp::shfl_down(FULL_MASK, -(tid as f64), 2) as i32 as u32);
        put(12, warp::active_mask());
    }
    put(13, sync::sync_threads_count(tid.is_multiple_of(3)));
    put(14, sync::sync_threads_and(tid < 64) as u32 + 2 * sync::sync_threads_and(tid < 63) as u32);
    put(15, sync::sync_threads_or(tid == 63) as u32 + 2 * sync::sync_threads_or(tid == 99) as u32);

    // Shared atomics: every thread updates slots 0..4 of one array.
    let s = shared_array!(COUNTERS: [u32; 8]);
    if tid == 0 {
        s.set(0, 0);
        s.set(1, 0);
        s.set(2, u32::MAX);
        s.set(3, 0);
        s.set(4, 0);
    }
    sync::sync_threads();
    let old = s.fetch_add(0, 1);
    s.fetch_max(1, tid);
    s.fetch_min(2, tid);
    s.fetch_or(4, 1 << (tid % 32));
    // A CAS loop that increments slot 3.
    let mut cur = 0;
    loop {
        match s.compare_exchange(3, cur, cur + 1) {
            Ok(_) => break,
            Err(seen) => cur = seen,
        }
    }
    sync::sync_threads();
    put(16, s.get(0) * 1000 + (old < 64) as u32);
    put(17, s.get(1));
    put(18, s.get(2));
    put(19, s.get(3));
    put(20, s.get(4));

    // Global atomics on the scratch words after the rows.
    // SAFETY: SELFTEST_ROWS * 64 + 8 <= SELFTEST_LEN <= len; the scratch words
    // are touched only here, by this launch.
    let scratch = unsafe { out.add(SELFTEST_ROWS * n) };
    if tid == 0 {
        for k in 0..8 {
            // SAFETY: k < 8 scratch words (above).
            unsafe { *scratch.add(k) = 0 };
        }
        // SAFETY: as above; slot 2 starts at MAX for the min.
        unsafe { *scratch.add(2) = u32::MAX };
    }
    // A block barrier also orders this block's global-memory accesses.
    sync::sync_threads();
    // SAFETY: every pointer below is one of the 8 scratch words, aligned for
    // u32 (and f32, whose bits it holds); only atomics touch them until the
    // next barrier.
    unsafe {
        atomic::global::add(scratch, 1u32, MemoryScope::Device);
        atomic::fetch_max(scratch.add(1), tid, MemoryScope::Device);
        atomic::fetch_min(scratch.add(2), tid, MemoryScope::Device);
        atomic::global::fetch_add(scratch.add(3) as *mut f32, 0.5f32, MemoryScope::Device);
        atomic::fetch_xor(scratch.add(4), 1 << (tid % 32), MemoryScope::Block);
        let mut cur = 0u32;
        while let Err(seen) = atomic::compare_exchange(scratch.add(5), cur, cur + 2, MemoryScope::Device) {
            cur = seen;
        }
        atomic::swap(scratch.add(6), 7, MemoryScope::System);
        atomic::fetch_add(scratch.add(7) as *mut i32, -1, MemoryScope::Device);
    }
    sync::sync_threads();

    // Dynamic shared memory: its length, and a round trip through it.
    let dynamic = shared::dynamic_shared::<u32>();
    if (tid as usize) < dynamic.len() {
        dynamic.set(tid as usize, tid * 7);
    }
    sync::sync_threads();
    let back = if dynamic.len() == n { dynamic.get(n - 1 - tid as usize) } else { u32::MAX };
    put(21, dynamic.len() as u32 * 1000 + (back == (63 - tid) * 7) as u32);

    // Math: f32 bits of a few functions at x = tid / 8 + 0.25 (checked on the
    // host with a tolerance), and exact cases.
    let x = tid as f32 / 8.0 + 0.25;
    put(22, x.exp().to_bits());
    put(23, x.sin().to_bits());
    put(24, (tid as f32 / 32.0).erf().to_bits());
    put(25, x.ln().to_bits());
    put(26, x.powf(1.5).to_bits());
    put(27, x.sqrt().to_bits());
    put(28, ((x as f64).cos() as f32).to_bits());
    put(29, x.exp_fast().to_bits());
    put(30, 2.0f32.powi(tid as i32 % 20) as u32 + x.floor() as u32);
    put(31, ((x as f64).sqrt() as f32).to_bits());

    if tid == 0 {
        dprintln!(
            "sluice device_selftest: %u threads, dynamic shared %u bytes, pi ~ %.5f, %s",
            thread::block_dim_x(),
            shared::dynamic_shared_bytes(),
            4.0f64 * 1.0f64.atan(),
            c"ok"
        );
    }
    const _: () = assert!(SELFTEST_DYNAMIC_SHARED == 4 * SELFTEST_THREADS as usize);
}

/// The device std's second self-test (`sluice_device::selftest`: the atomic types with
/// orderings, shuffles with a width and the in-range predicate, the newer libdevice
/// functions), as a kernel; `sluice_device::selftest::check` reads its output on the host.
///
/// Launch: grid 1, block `sluice_device::selftest::THREADS` (64), no dynamic shared memory,
/// `out` of at least `sluice_device::selftest::LEN` elements (it does nothing otherwise).
#[kernel]
pub fn device_selftest_v2(out: DeviceSliceMut<u32>) {
    use sluice_device::selftest::{LEN, THREADS};
    if out.len() < LEN || thread::block_dim_x() as usize != THREADS || thread::grid_dim_x() != 1 {
        return;
    }
    // SAFETY: one block of THREADS threads, grid 1, `out` holds at least LEN elements (all
    // checked above), this launch's alone; `run` writes each element from one thread.
    unsafe { sluice_device::selftest::run(out.as_mut_ptr(), out.len()) }
}

/// The device std's float-to-integer conversions (`DeviceFloat::to_u32_sat`, `to_i32_sat`: one
/// `cvt.rzi` each from `f32`, Rust's `as` from `f64`): for `i < min(x.len(), y.len())`, `out[4 i ..][..4]` =
/// `x[i].to_u32_sat()`, `x[i].to_i32_sat()`, `y[i].to_u32_sat()`, `y[i].to_i32_sat()` (the `i32`s as their
/// bits). The host compares them with Rust's `as`, which they must equal for every input
/// (NaN, infinities, out of range, negative, subnormal). Any 1-D launch.
#[kernel]
pub fn device_selftest_convert(mut out: DeviceSliceMut<u32>, x: &[f32], y: &[f64]) {
    for (j, o) in out.grid_stride() {
        if let (Some(&a), Some(&b)) = (x.get(j / 4), y.get(j / 4)) {
            *o = match j % 4 {
                0 => a.to_u32_sat(),
                1 => a.to_i32_sat() as u32,
                2 => b.to_u32_sat(),
                _ => b.to_i32_sat() as u32,
            };
        }
    }
}
