//! Kernels that compile every API of the `cuda_std` compatibility crate and the
//! newer parts of the device std (see `tests/ptx.rs`). Written as ported
//! Rust-CUDA code would be: raw-pointer parameters, `unsafe` bodies; vecadd and
//! the tiled gemm through cuda_std's `#[kernel]` and `#[address_space(shared)]`,
//! the API sweeps as raw entries.
//!
//! These kernels are compiled and assembled, never launched, except
//! `selftest`, whose contract is `sluice_device::selftest::run`'s. Each
//! `unsafe` block keeps the shape of the Rust-CUDA original it ports, and its
//! `// SAFETY:` comment names what a launch would have to guarantee (pointers
//! valid for the launch's index range, warps converged at every `.sync` call,
//! block-scope atomics touched by one block only).

#![cfg_attr(target_arch = "nvptx64", no_std, feature(abi_ptx))]
#![allow(clippy::missing_safety_doc)]

#[cfg(target_arch = "nvptx64")]
mod device {
    use core::mem::MaybeUninit;
    use core::sync::atomic::Ordering::*;
    use cuda_std::atomic::{AtomicF32, AtomicF64, AtomicI64, AtomicU32, BlockAtomicF32, SystemAtomicU64};
    use cuda_std::prelude::*;
    use cuda_std::warp::{self as warp, WarpReductionOp};
    use cuda_std::{FloatExt, GpuFloat, glam::Vec3, intrinsics, mem, misc, ptr, shared};

    /// A vecadd in Rust-CUDA's style, through cuda_std's `#[kernel]`: `&[f32]` arrives as
    /// (pointer, length), the output is a raw pointer.
    #[kernel]
    pub unsafe fn vecadd(a: &[f32], b: &[f32], c: *mut f32) {
        let idx = thread::index_1d() as usize;
        if idx < a.len() {
            // SAFETY: `c` holds `a.len()` floats and `idx < a.len()` (the caller's duty for
            // `c`; the test above for `idx`); each thread writes its own element only.
            let elem = unsafe { &mut *c.add(idx) };
            *elem = a[idx] + b[idx]; // a natural bounds check on `b`
        }
    }

    /// The same kernel without the bounds check, for the register comparison.
    #[kernel]
    pub unsafe fn vecadd_unchecked(a: &[f32], b: &[f32], c: *mut f32) {
        let idx = thread::index_1d() as usize;
        if idx < a.len() {
            // SAFETY: `c` and `b` hold `a.len()` floats (the caller's duty) and `idx < a.len()`
            // (the test above); each thread writes its own element only.
            unsafe { *c.add(idx) = a[idx] + *b.get_unchecked(idx) };
        }
    }

    pub const TILE_SIZE: usize = 16;

    /// A tiled gemm in Rust-CUDA's style: shared tiles as `#[address_space(shared)]` statics
    /// sized by a function-local constant, which cuda_std's `#[kernel]` declares in the
    /// kernel's prologue (one `mov` per access).
    #[kernel]
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn gemm_tiled(mat_a: &[f32], mat_b: &[f32], mat_c: *mut f32, m: usize, n: usize, k: usize, alpha: f32, beta: f32) {
        const TILE_SIZE_2D: usize = TILE_SIZE * TILE_SIZE;
        #[address_space(shared)]
        static mut TILE_A: [MaybeUninit<f32>; TILE_SIZE_2D] = [MaybeUninit::uninit(); TILE_SIZE_2D];
        #[address_space(shared)]
        static mut TILE_B: [MaybeUninit<f32>; TILE_SIZE_2D] = [MaybeUninit::uninit(); TILE_SIZE_2D];
        let tx = thread::thread_idx_x() as usize;
        let ty = thread::thread_idx_y() as usize;
        let row = thread::block_idx_x() as usize * TILE_SIZE + ty;
        let col = thread::block_idx_y() as usize * TILE_SIZE + tx;
        let mut sum = 0.0f32;
        for kk in (0..k).step_by(TILE_SIZE) {
            // The four tile writes: a block of 16 x 16 threads (the caller's duty) gives each
            // thread its own slot `ty * 16 + tx` of each shared tile, indexed in bounds, and the
            // barriers below keep these writes apart from the reads.
            if row < m && (kk + tx) < k {
                // SAFETY: this thread's own slot of TILE_A, in bounds (above).
                unsafe { TILE_A[ty * TILE_SIZE + tx].write(mat_a[row * k + (kk + tx)]) };
            } else {
                // SAFETY: as above.
                unsafe { TILE_A[ty * TILE_SIZE + tx].write(0.0f32) };
            }
            if col < n && (kk + ty) < k {
                // SAFETY: this thread's own slot of TILE_B, in bounds (above).
                unsafe { TILE_B[ty * TILE_SIZE + tx].write(mat_b[(kk + ty) * n + col]) };
            } else {
                // SAFETY: as above.
                unsafe { TILE_B[ty * TILE_SIZE + tx].write(0.0f32) };
            }
            thread::sync_threads();
            for i in 0..TILE_SIZE {
                // SAFETY: every slot was written above by its thread before the barrier, and
                // none is written again before the next one.
                sum += unsafe { TILE_A[ty * TILE_SIZE + i].assume_init() * TILE_B[i * TILE_SIZE + tx].assume_init() };
            }
            thread::sync_threads();
        }
        if row < m && col < n {
            // SAFETY: `mat_c` holds `m * n` floats (the caller's duty), `row < m` and
            // `col < n` (the test above); each thread reads and writes its own element only.
            let c = unsafe { mat_c.add(row * n + col) };
            // SAFETY: as above.
            unsafe { *c = alpha * sum + beta * *c };
        }
    }

    /// Every other `cuda_std` API once; `out` receives values so that nothing is
    /// optimised away.
    #[unsafe(no_mangle)]
    pub unsafe extern "ptx-kernel" fn compat_api(out: *mut u32, f: *mut f32, d: *mut f64, cells: *mut u64) {
        // SAFETY: `out` holds 64 words per thread of the launch (the caller's duty); each
        // thread writes its own 64.
        let put = |i: usize, v: u32| unsafe { *out.add(thread::index() as usize * 64 + i) = v };
        let (ti, bi, bd, gd) = (thread::thread_idx(), thread::block_idx(), thread::block_dim(), thread::grid_dim());
        put(0, ti.x + bi.y + bd.z + gd.x + thread::index_2d().y + thread::index_3d().z + thread::warp_size());
        put(1, thread::thread_idx_y() + thread::thread_idx_z() + thread::block_idx_x() + thread::block_idx_z());
        put(2, thread::block_dim_x() + thread::block_dim_y() + thread::grid_dim_y() + thread::grid_dim_z() + thread::first() as u32);
        put(3, thread::sync_threads_count(thread::thread_idx_x() & 1) + thread::sync_threads_and(1) + thread::sync_threads_or(0));
        thread::grid_fence();
        thread::device_fence();
        thread::system_fence();
        thread::nanosleep(100);
        put(4, misc::clock() as u32 ^ mem::dynamic_smem_size() ^ mem::total_smem_size());
        misc::profiler_counter(3);

        const N: usize = 32;
        let s: *mut u32 = cuda_std::shared_array![u32; N];
        let dynamic: *mut f32 = shared::dynamic_shared_mem();
        let lane = warp::lane_id();
        // SAFETY: `s` is this block's 32 shared words and `lane < 32`, each lane writing its
        // own; the address-space conversions take and give back a shared pointer.
        unsafe {
            *s.add(lane as usize) = lane;
            put(5, ptr::is_in_address_space(s, ptr::AddressSpace::Shared) as u32
                + ptr::is_in_address_space(dynamic, ptr::AddressSpace::Global) as u32);
            let spec = ptr::convert_generic_to_specific_address_space(s, ptr::AddressSpace::Shared);
            let back = ptr::convert_specific_address_space_to_generic(spec, ptr::AddressSpace::Shared);
            put(6, (back == s as *const u32) as u32);
        }

        // Warp operations (blocks of whole warps).
        // SAFETY: every lane of each warp reaches these calls together with the full mask
        // (whole warps, no divergence before them: the caller's duty for the block shape).
        unsafe {
            warp::sync_warp(u32::MAX);
            let (v, p) = warp::warp_shuffle_down(u32::MAX, 3.5f32, 1, 32);
            let (w, q) = warp::warp_shuffle_up(u32::MAX, 7u8, 2, 16);
            let (x, r) = warp::warp_shuffle_idx(u32::MAX, -3i16, 4, 8);
            let (y, t) = warp::warp_shuffle_xor(u32::MAX, u128::MAX - lane as u128, 1, 32);
            let (z, _) = warp::warp_shuffle_xor(u32::MAX, 2.0f64, 2, 4);
            put(7, v as u32 + w as u32 + x as u32 + y as u32 + z as u32 + (p & q & r & t) as u32);
            put(8, warp::warp_vote_all(u32::MAX, lane < 40) as u32 + warp::warp_vote_any(u32::MAX, lane == 3) as u32
                + warp::warp_vote_ballot(u32::MAX, lane % 2 == 0) + warp::activemask());
            put(9, warp::warp_match_any(u32::MAX, lane / 4) + warp::warp_match_any(u32::MAX, 1.5f64)
                + warp::warp_match_all(u32::MAX, 7i64).unwrap_or(0) + warp::warp_match_all(u32::MAX, lane as f32).unwrap_or(1));
            #[cfg(target_feature = "sm_80")]
            put(10, warp::warp_reduce(u32::MAX, lane, WarpReductionOp::Add)
                + warp::warp_reduce(u32::MAX, lane as i32, WarpReductionOp::Xor) as u32);
            #[cfg(not(target_feature = "sm_80"))]
            let _ = WarpReductionOp::Add;
        }

        // Atomics (device, block, system scope; every method of one type).
        // SAFETY: for this atomic and those below: `f` holds 4 floats, `d` one double,
        // `cells` 2 words, and `out` is aligned (the caller's duty); those words are accessed
        // only atomically here until the reads of `f[2]` and `*d`, and the block-scope one by
        // one block only.
        let af = unsafe { AtomicF32::from_ptr(f) };
        let old = af.fetch_add(1.0, Relaxed) + af.fetch_sub(0.5, AcqRel) + af.load(SeqCst);
        af.store(old, Release);
        // SAFETY: as above.
        let ad = unsafe { AtomicF64::from_ptr(d) };
        let _ = ad.fetch_add(1.0, SeqCst) + ad.swap(2.0, Acquire);
        let _ = ad.compare_exchange(2.0, 3.0, AcqRel, Relaxed);
        let _ = ad.fetch_and(-1.0, Relaxed) + ad.fetch_or(0.0, Relaxed) + ad.fetch_xor(0.0, Relaxed);
        // SAFETY: as above.
        let au = unsafe { AtomicU32::from_ptr(out) };
        let _ = au.fetch_min(3, Relaxed) + au.fetch_max(4, Acquire) + au.fetch_and(7, Release) + au.fetch_or(1, AcqRel);
        // SAFETY: as above.
        let ai = unsafe { AtomicI64::from_ptr(cells as *mut i64) };
        let _ = ai.fetch_add(-1, SeqCst) + ai.fetch_min(-5, Relaxed) + ai.fetch_sub(2, Relaxed);
        // SAFETY: as above.
        let sys = unsafe { SystemAtomicU64::from_ptr(cells.add(1)) };
        let _ = sys.compare_exchange(0, 1, SeqCst, SeqCst);
        // SAFETY: as above.
        let blk = unsafe { BlockAtomicF32::from_ptr(f.add(1)) };
        // SAFETY: `f[1]` is used by this block only (the caller's duty), as block scope needs.
        let _ = unsafe { blk.fetch_add(1.0, Relaxed) + blk.load(Acquire) };
        cuda_std::atomic::mid::device_thread_fence(SeqCst);
        cuda_std::atomic::mid::block_thread_fence(Acquire);
        cuda_std::atomic::mid::system_thread_fence(Relaxed);

        // Float traits and raw intrinsics.
        // SAFETY: `f` holds 4 floats (the caller's duty); `f[2]` is only read.
        let x = unsafe { *f.add(2) };
        let g = x.floor() + x.ceil() + x.round() + x.trunc() + x.fract() + GpuFloat::abs(x) + GpuFloat::signum(x)
            + GpuFloat::copysign(x, -1.0) + GpuFloat::mul_add(x, 2.0, 1.0) + GpuFloat::div_euclid(x, 3.0)
            + GpuFloat::rem_euclid(x, 3.0) + x.powi(3) + x.powf(1.5) + x.sqrt() + x.exp() + x.exp2() + x.ln()
            + x.log(7.0) + x.log2() + x.log10() + x.cbrt() + x.hypot(2.0) + x.sin() + x.cos() + x.tan() + x.asin()
            + x.acos() + x.atan() + x.atan2(1.0) + x.sin_cos().0 + x.exp_m1() + x.ln_1p() + x.sinh() + x.cosh()
            + x.tanh() + x.asinh() + x.acosh() + x.atanh();
        let h = x.cospi() + x.error_function() + x.complementary_error_function()
            + x.inv_complementary_error_function() + x.scaled_complementary_error_function() + x.frexp().0
            + x.unbiased_exp() as f32 + x.j0() + x.j1() + x.jn(2) + FloatExt::ldexp(x, 2) + x.log_gamma()
            + x.log1p() + x.norm_cdf() + x.inv_norm_cdf() + x.rcbrt() + x.saturate() + x.scale_by_n(3)
            + x.sincospi().1 + x.sinpi() + FloatExt::gamma(x) + x.y0() + x.y1() + x.yn(2);
        // SAFETY: `d` points to a double (the caller's duty), read after the atomics above.
        let y = unsafe { *d };
        let k = y.j0() + y.yn(3) + y.saturate() + y.sincospi().0 + y.fract() + GpuFloat::signum(y) + y.log(2.0);
        let r = intrinsics::erfcxf(x) + intrinsics::fast_expf(x) + intrinsics::normcdfinvf(x) + intrinsics::jnf(3, x);
        let v = Vec3::new(g, h, r).normalize_or_zero();
        // SAFETY: `f` holds 4 floats; every thread stores the same value to `f[3]`, which
        // nothing reads in this launch.
        unsafe { *f.add(3) = v.x + v.y + v.z + k as f32 };

        if thread::first() {
            println!("compat_api: x = {}, clock = {}", x, misc::clock());
            let n = thread::index();
            println!("inline argument: {n}");
            print!("no newline {}", 3u8);
            println!();
        }
        assert_eq!(thread::block_dim_x() % 32, 0);
        assert_ne!(thread::block_dim_x(), 0);
    }

}

/// sluice-device's own names, without cuda_std's traits in scope.
#[cfg(target_arch = "nvptx64")]
mod native {
    /// The device std's newer API once each (sluice's own names).
    #[unsafe(no_mangle)]
    pub unsafe extern "ptx-kernel" fn device_api(out: *mut u32, x: f32) {
        use sluice_device::{atomic, misc, shared, thread as t, warp as w, MemoryScope};
        use sluice_device::math::DeviceFloat;
        let i = t::index_1d_u32() as usize;
        // SAFETY: `out` holds 16 words per thread of a 1-D launch (the caller's duty); each
        // thread writes its own 16.
        let put = |k: usize, v: u32| unsafe { *out.add(i * 16 + k) = v };
        let _ = MemoryScope::Device;
        let d2 = t::index_2d_u32();
        let d3 = t::index_3d_u32();
        put(0, d2.x + d2.y + d3.z + misc::clock() + misc::global_timer_ns() as u32 + misc::sm_id()
            + shared::total_shared_bytes());
        const LOCAL: usize = 48;
        let tile = sluice_device::shared_array!(TILE: [f32; LOCAL]);
        tile.set(i % LOCAL, x);
        sluice_device::sync::sync_threads();
        let raw: *mut f64 = sluice_device::shared_array![f64; LOCAL / 2];
        // SAFETY: `raw` is this block's 24 shared doubles, indexed below 24. Threads of a
        // block may store to the same slot, and any of their values is read: this kernel is
        // only assembled, never launched (see the crate's doc).
        unsafe { *raw.add(i % (LOCAL / 2)) = x as f64 };
        // SAFETY: as above.
        put(1, tile.get((i + 1) % LOCAL).to_bits() ^ unsafe { *raw } as u32);
        atomic::fence(core::sync::atomic::Ordering::AcqRel, MemoryScope::Block);
        let (m, e) = x.frexp();
        let (s, c) = x.sin_cos_pi();
        put(2, (m + e as f32 + x.ilogb() as f32 + x.erfcx() + x.normcdf() + x.normcdfinv() + x.j0() + x.yn(4)
            + x.rcbrt() + x.saturate() + x.scalbn(2) + s + c + x.fract() + x.div_euclid(2.0) + x.rem_euclid(2.0)
            + x.log(3.0) + x.signum()).to_bits());
        let y = x as f64;
        let (m, e) = y.frexp();
        let (s, c) = y.sin_cos_pi();
        let z = m + e as f64 + y.ilogb() as f64 + y.scalbn(3) + y.j0() + y.j1() + y.jn(2) + y.y0() + y.y1() + y.yn(2)
            + y.erfcx() + y.normcdf() + y.normcdfinv() + y.rcbrt() + y.saturate() + s + c + y.fract()
            + y.div_euclid(-2.0) + y.rem_euclid(-2.0) + y.log(10.0) + y.signum();
        put(4, z as u32);
        crate::__touch(&z);
        cuda_std::__sluice::shared_static! {
            static mut FLAG: u32 = 0;
        }
        #[allow(static_mut_refs)]
        // SAFETY: one thread writes the word through `ld/st.shared`; read after the barrier.
        let flag = unsafe { FLAG.as_shared_ptr() };
        if i == 0 {
            // SAFETY: the shared word exists for the launch and is aligned for u32.
            unsafe { flag.write(7) };
        }
        sluice_device::sync::sync_threads();
        // SAFETY: as above; the barrier orders thread 0's write before this read.
        if unsafe { flag.read() } != 7 {
            misc::trap();
        }
        // SAFETY: whole warps reach the shuffles and the match together with the full mask
        // (the caller's duty for the block shape; no divergence before them).
        unsafe {
            let (a, p) = w::shfl_idx_width(w::FULL_MASK, i as u64, 3, 16);
            let (b, q) = w::shfl_up_width(w::FULL_MASK, i as i8, 1, 32);
            put(3, a as u32 + b as u32 + (p & q) as u32 + w::match_all_u64(w::FULL_MASK, 9).unwrap_or(0));
        }
    }

    /// sluice-device's self-test as a kernel (grid 1, block 64, LEN words).
    #[unsafe(no_mangle)]
    pub unsafe extern "ptx-kernel" fn selftest(out: *mut u32, len: usize) {
        // SAFETY: `run`'s contract, passed to the launch's caller: `out` valid for `len >= LEN`
        // words, 8-byte aligned and unshared, one block of `THREADS` threads, each calling it.
        unsafe { sluice_device::selftest::run(out, len) }
    }
}

/// Keeps a value observable (no-op on the host).
#[inline(always)]
pub fn __touch<T>(v: &T) {
    core::hint::black_box(v);
}
