//! The self-test's kernel body: device code, which on the host runs on the CPU
//! runtime. Its rows are the families' (each family's file says what they hold
//! and checks them); the body stays one function, written in row order, because
//! its PTX is pinned: its path (`sluice_device::selftest::device::run`) is in the
//! PTX of the kernels that call it, and split into one function per family the
//! compiler schedules the body differently.

use super::math::{bessel_x, erfcx_x, euclid_x, euclid_y, frexp_x, normcdfinv_p, rcbrt_x, saturate_x, sincospi_x};
use super::{check_launch, FINALS, ROWS, THREADS};
use crate::atomic::{
    AtomicF32, AtomicF64, AtomicI32, AtomicI64, AtomicU32, AtomicU64, BlockAtomicU32, Ordering::*, SystemAtomicU32,
};
use crate::math::DeviceFloat;
use crate::warp::{self, FULL_MASK};
use crate::{sync, thread};

/// The self-test's kernel body; see the [module docs](super) for the launch.
///
/// # Safety
///
/// * `out` is valid for reads and writes of `len >= LEN` `u32`s, 8-byte
///   aligned, and nothing else uses it during the launch;
/// * the launch is one block of [`THREADS`] threads (checked: the kernel
///   traps otherwise), and every thread calls `run` (it has barriers and
///   full-warp shuffles).
#[cfg_attr(target_feature = "sm_90a", inline(always))]
pub unsafe fn run(out: *mut u32, len: usize) {
    check_launch(len);
    let tid = thread::thread_idx_x();
    let t = tid as usize;
    let put = |row: usize, v: u32| {
        // SAFETY: row < ROWS.len() and t < THREADS, so the index is below LEN <= len;
        // each (row, t) is written by thread t only.
        unsafe { *out.add(row * THREADS + t) = v };
    };
    // atomic (rows 0-5).
    // SAFETY: the scratch words lie after the rows, inside `len`, 8-aligned
    // (LEN - SCRATCH is even and `out` is 8-aligned); they are accessed only
    // through the atomics below, after thread 0's initialisation is ordered
    // before them by a barrier.
    let word = |i: usize| unsafe { out.add(ROWS.len() * THREADS + i) };
    // SAFETY: (these views) each scratch slot is used as one type only.
    let (f32_sum, f64_sub, i32_min, u64_max, and_bits, or_bits, i64_swap, cas, flag) = unsafe {
        (
            AtomicF32::from_ptr(word(0) as *mut f32),
            AtomicF64::from_ptr(word(2) as *mut f64),
            AtomicI32::from_ptr(word(4) as *mut i32),
            AtomicU64::from_ptr(word(6) as *mut u64),
            AtomicU32::from_ptr(word(8)),
            SystemAtomicU32::from_ptr(word(9)),
            AtomicI64::from_ptr(word(10) as *mut i64),
            AtomicU32::from_ptr(word(12)),
            AtomicU32::from_ptr(word(13)),
        )
    };
    let shared: *mut u32 = crate::shared_array![u32; 2];
    // SAFETY: two shared words of this block, used only as atomics.
    let (counter, xor_bits) = unsafe { (AtomicU32::from_ptr(shared), BlockAtomicU32::from_ptr(shared.add(1))) };
    if tid == 0 {
        counter.store(0, Relaxed);
        // SAFETY: block scope: only this block's threads touch the shared word.
        unsafe { xor_bits.store(0, Relaxed) };
        f32_sum.store(0.0, Relaxed);
        f64_sub.store(100.0, Relaxed);
        i32_min.store(1000, Relaxed);
        u64_max.store(0, Relaxed);
        and_bits.store(!0, Relaxed);
        or_bits.store(0, Relaxed);
        i64_swap.store(-1, Relaxed);
        cas.store(0, Relaxed);
        flag.store(0, Relaxed);
    }
    sync::sync_threads();

    put(0, counter.fetch_add(1, AcqRel));
    put(2, f32_sum.fetch_add(0.5, Relaxed).to_bits());
    put(3, f64_sub.fetch_sub(1.0, SeqCst) as u32);
    i32_min.fetch_min(tid as i32 - 10, Relaxed);
    u64_max.fetch_max(tid as u64 * 3, Release);
    and_bits.fetch_and(!(1 << (tid % 32)), Relaxed);
    or_bits.fetch_or(1 << (tid % 32), AcqRel);
    // SAFETY: block scope: only this block's threads touch the shared word.
    unsafe { xor_bits.fetch_xor(1 << (tid % 32), Relaxed) };
    put(4, i64_swap.swap(tid as i64, AcqRel) as u32);
    put(5, cas.compare_exchange(0, tid + 1, AcqRel, Acquire).is_ok() as u32);
    sync::sync_threads();
    put(1, counter.load(Acquire));

    // warp (rows 6-11). Shuffles: both warps are full and every lane runs every call.
    let lane = warp::lane_id();
    // SAFETY: (all shuffles) the block is two full warps, converged here.
    unsafe {
        let (v, p) = warp::shfl_idx_width(FULL_MASK, tid * 3, lane + 1, 8);
        put(6, v << 1 | p as u32);
        let (v, p) = warp::shfl_up_width(FULL_MASK, (tid * 1000) as u16, 3, 8);
        put(7, (v as u32) << 1 | p as u32);
        let (v, p) = warp::shfl_down_width(FULL_MASK, (tid * 7) as u8, 5, 16);
        put(8, (v as u32) << 1 | p as u32);
        let (v, p) = warp::shfl_xor_width(FULL_MASK, (tid as u128) << 100 | (tid as u128 * 3), 4, 8);
        put(9, v as u32);
        put(10, ((v >> 100) as u32) << 1 | p as u32);
        let (v, _) = warp::shfl_idx_width(FULL_MASK, tid as f64 + 0.5, 33, 32);
        put(11, (2.0 * v) as u32);
    }

    // math (rows 12-43).
    let x = bessel_x(t);
    let xe = erfcx_x(t);
    let p = normcdfinv_p(t);
    let xr = rcbrt_x(t);
    let xf = frexp_x(t);
    let (m, e) = xf.frexp();
    let (s, c) = sincospi_x(t).sin_cos_pi();
    let f32_rows = [
        xe.erfcx(),
        x.j0(),
        x.j1(),
        x.jn(3),
        x.y0(),
        x.y1(),
        x.yn(2),
        xe.normcdf(),
        p.normcdfinv(),
        xr.rcbrt(),
        m,
        f32::from_bits(e as u32),
        f32::from_bits(xf.ilogb() as u32),
        x.scalbn(tid as i32 - 32),
        s,
        c,
        euclid_x(t).fract(),
        euclid_x(t).div_euclid(euclid_y(t)),
        euclid_x(t).rem_euclid(euclid_y(t)),
        x.log(3.0),
        saturate_x(t).saturate(),
    ];
    for (k, v) in f32_rows.iter().enumerate() {
        put(12 + k, v.to_bits());
    }
    let f64_rows =
        [(x as f64).j1(), (x as f64).yn(3), (xe as f64).erfcx(), (p as f64).normcdfinv(), (xr as f64).rcbrt()];
    for (k, v) in f64_rows.iter().enumerate() {
        put(33 + 2 * k, v.to_bits() as u32);
        put(34 + 2 * k, (v.to_bits() >> 32) as u32);
    }

    // atomic (the FINALS row). Message passing through a release store and an acquire load.
    if tid == 1 {
        flag.store(0xC0FFEE, Release);
    }
    sync::sync_threads();
    if tid == 0 {
        let finals = [
            counter.load(Relaxed),
            f32_sum.load(SeqCst).to_bits(),
            f64_sub.load(Acquire) as u32,
            i32_min.load(Relaxed) as u32,
            u64_max.load(Relaxed) as u32,
            and_bits.load(Relaxed),
            or_bits.load(Relaxed),
            // SAFETY: block scope: only this block's threads touch the shared word.
            unsafe { xor_bits.load(Relaxed) },
            i64_swap.load(Relaxed) as u32,
            cas.load(Relaxed),
            flag.load(Acquire),
        ];
        for (k, v) in finals.iter().enumerate() {
            // SAFETY: k < FINAL_NAMES.len() <= THREADS, inside the FINALS row;
            // only thread 0 writes this row.
            unsafe { *out.add(FINALS * THREADS + k) = *v };
        }
    }
}
