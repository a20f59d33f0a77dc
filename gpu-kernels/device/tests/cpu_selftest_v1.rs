//! `gpu_kernels::device_selftest` (the older self-test: shuffles, votes, match,
//! `redux`, predicate barriers, shared and global atomics, dynamic shared
//! memory, math, `dprintln!`) run on the CPU runtime and checked with the
//! checker its GPU run uses, `gpu_kernels::reference::check_selftest`.
//!
//! The body below is `device_selftest`'s, copied from `gpu-kernels/src/selftest.rs`
//! (on the host `#[kernel]` does not compile kernel bodies yet); the only change
//! is row 9, which calls `reduce_add_u32` unconditionally (the device needs an
//! sm_80 build for it). Once `#[kernel]` runs bodies on the CPU, this test
//! becomes a launch of `gpu_kernels::device_selftest` itself.

// On the host `x.erf()` also names std's unstable inherent `f32::erf`; rustc
// picks `DeviceFloat::erf` and warns that the name may collide some day.
// Kernel bodies compiled for the host need the same allow.
#![allow(unstable_name_collisions)]
// The body is kept as `gpu-kernels` has it.
#![allow(clippy::manual_is_multiple_of)]

use gpu_kernels::{SELFTEST_DYNAMIC_SHARED, SELFTEST_LEN, SELFTEST_ROWS, SELFTEST_THREADS};
use sluice_device::math::{DeviceFloat, FastFloat};
use sluice_device::slice::DeviceSliceMut;
use sluice_device::warp::{self, FULL_MASK};
use sluice_device::{atomic, cpu, dassert, dprintln, shared, shared_array, sync, thread, MemoryScope};

#[derive(Clone, Copy)]
struct Out(*mut u32, usize);

impl Out {
    /// The view (a method, so that a closure captures the whole `Sync` wrapper).
    ///
    /// # Safety
    /// As `DeviceSliceMut::from_raw_parts`.
    unsafe fn view(&self) -> DeviceSliceMut<'static, u32> {
        // SAFETY: forwarded to the caller.
        unsafe { DeviceSliceMut::from_raw_parts(self.0, self.1 as u64) }
    }
}
// SAFETY: a pointer to the output, which each thread writes at its own
// indices (and the scratch only atomically), as on the GPU.
unsafe impl Sync for Out {}

/// `device_selftest(out: DeviceSliceMut<u32>)`'s body.
fn device_selftest(out: DeviceSliceMut<u32>) {
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
        put(6, warp::ballot(FULL_MASK, lane % 3 == 0));
        put(7, warp::any(FULL_MASK, lane == 7) as u32 + 2 * warp::all(FULL_MASK, lane < 31) as u32);
        put(8, warp::match_any(FULL_MASK, lane / 4));
        // (The device needs an sm_80 build for `redux`; the CPU always has it.)
        put(9, warp::reduce_add_u32(FULL_MASK, lane));
        put(10, warp::sum_f32(lane as f32) as u32);
        put(11, warp::shfl_down(FULL_MASK, -(tid as f64), 2) as i32 as u32);
        put(12, warp::active_mask());
    }
    put(13, sync::sync_threads_count(tid % 3 == 0));
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
        dprintln!("sluice device_selftest: %u threads, dynamic shared %u bytes, pi ~ %.5f, %s",
                  thread::block_dim_x(), shared::dynamic_shared_bytes(), 4.0f64 * 1.0f64.atan(), c"ok");
    }
    const _: () = assert!(SELFTEST_DYNAMIC_SHARED == 4 * SELFTEST_THREADS as usize);
}

#[test]
fn the_older_device_self_test_passes_on_the_cpu() {
    let mut out = vec![0u32; SELFTEST_LEN];
    let o = Out(out.as_mut_ptr(), out.len());
    cpu::launch([1, 1, 1], [SELFTEST_THREADS, 1, 1], SELFTEST_DYNAMIC_SHARED as u32, &|| {
        // SAFETY: `out` lives for the launch; each thread writes its own elements
        // through the view (`put`), and the scratch words only atomically.
        device_selftest(unsafe { o.view() })
    })
    .unwrap();
    if let Err(e) = gpu_kernels::reference::check_selftest(&out) {
        panic!("device_selftest on the CPU:\n{e}");
    }
}
