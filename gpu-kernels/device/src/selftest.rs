//! A conformance self-test of this crate's newer device operations: the atomic
//! types with orderings (global and shared memory, every kind of operation),
//! shuffles with a width and the in-range predicate (8-, 16-, 64- and 128-bit
//! values), and the libdevice math functions added with them.
//!
//! * [`run`] (device, or the CPU runtime on the host: [`crate::cpu::launch`])
//!   is the body of a kernel: each thread writes its results
//!   in `out[row * THREADS + tid]`, and thread 0 writes the atomics' final
//!   values in the [`FINALS`] row.
//! * [`check`] (host, pure) compares such an output with CUDA's semantics: the
//!   lanes `shfl.sync` reads by PTX's definition ([`crate::warp::shfl_source`]),
//!   the values every interleaving of the atomics must end with, and `f64`
//!   references (the `libm` crate) for the math, within libdevice's documented
//!   error bounds. It returns one line per wrong value.
//!
//! # Launch
//!
//! One block of [`THREADS`] (64, two full warps) threads, grid 1, no dynamic
//! shared memory, `out` a zeroed or uninitialised device buffer of [`LEN`]
//! `u32`s, 8-byte aligned (any device allocation is). For example, as a
//! sluice kernel:
//!
//! ```ignore
//! #[kernel]
//! pub fn device_selftest_v2(out: DeviceSliceMut<u32>) {
//!     // SAFETY: launched as `selftest` says (grid 1, block 64, LEN words).
//!     unsafe { sluice_device::selftest::run(out.as_mut_ptr(), out.len()) }
//! }
//! ```
//!
//! then copy `out` back and assert `sluice_device::selftest::check(&host).is_empty()`.

/// Threads of the one block the self-test runs as (two warps).
pub const THREADS: usize = 64;

/// What each result row holds (`out[row * THREADS + tid]`), in order.
pub const ROWS: &[&str] = &[
    "shared AtomicU32::fetch_add(1, AcqRel) old",
    "shared AtomicU32::load(Acquire) after the barrier",
    "global AtomicF32::fetch_add(0.5, Relaxed) old, bits",
    "global AtomicF64::fetch_sub(1.0, SeqCst) old, as u32",
    "global AtomicI64::swap(tid, AcqRel) old, low word",
    "global AtomicU32::compare_exchange(0, tid + 1, AcqRel, Acquire) is Ok",
    "shfl_idx_width(tid * 3, lane + 1, 8): value << 1 | in_range",
    "shfl_up_width(u16: tid * 1000, 3, 8): value << 1 | in_range",
    "shfl_down_width(u8: tid * 7, 5, 16): value << 1 | in_range",
    "shfl_xor_width(u128: tid << 100 | tid * 3, 4, 8): low word",
    "shfl_xor_width(u128: tid << 100 | tid * 3, 4, 8): value >> 100 << 1 | in_range",
    "shfl_idx_width(f64: tid + 0.5, 33, 32): 2 * value",
    "f32 erfcx(-2 + 0.15 t)",
    "f32 j0(x)",
    "f32 j1(x)",
    "f32 jn(x, 3)",
    "f32 y0(x)",
    "f32 y1(x)",
    "f32 yn(x, 2)",
    "f32 normcdf(-2 + 0.15 t)",
    "f32 normcdfinv((t + 0.5) / 64)",
    "f32 rcbrt((t - 31.5) * 0.73)",
    "f32 frexp((t - 20) * 3700.5).0",
    "f32 frexp((t - 20) * 3700.5).1",
    "f32 ilogb((t - 20) * 3700.5)",
    "f32 scalbn(x, t - 32)",
    "f32 sin_cos_pi((t - 32) * 0.37).0",
    "f32 sin_cos_pi((t - 32) * 0.37).1",
    "f32 fract((t - 32) * 1.37)",
    "f32 div_euclid((t - 32) * 1.37, ±2.5)",
    "f32 rem_euclid((t - 32) * 1.37, ±2.5)",
    "f32 log(x, 3)",
    "f32 saturate((t - 16) * 0.05), NaN at t = 0",
    "f64 j1(x), low word",
    "f64 j1(x), high word",
    "f64 yn(x, 3), low word",
    "f64 yn(x, 3), high word",
    "f64 erfcx(-2 + 0.15 t), low word",
    "f64 erfcx(-2 + 0.15 t), high word",
    "f64 normcdfinv((t + 0.5) / 64), low word",
    "f64 normcdfinv((t + 0.5) / 64), high word",
    "f64 rcbrt((t - 31.5) * 0.73), low word",
    "f64 rcbrt((t - 31.5) * 0.73), high word",
    "finals (thread 0): see FINAL_NAMES",
];

/// The row of final values, written by thread 0 after the last barrier.
pub const FINALS: usize = ROWS.len() - 1;

/// The slots of the [`FINALS`] row.
pub const FINAL_NAMES: &[&str] = &[
    "shared AtomicU32 after 64 fetch_add(1)",
    "global AtomicF32 after 64 fetch_add(0.5), bits",
    "global AtomicF64 after 64 fetch_sub(1.0) from 100, as u32",
    "global AtomicI32 after fetch_min(tid - 10) from 1000, as u32",
    "global AtomicU64 after fetch_max(tid * 3) from 0, low word",
    "global AtomicU32 after fetch_and(!(1 << tid % 32)) from !0",
    "global SystemAtomicU32 after fetch_or(1 << tid % 32) from 0",
    "shared BlockAtomicU32 after fetch_xor(1 << tid % 32) from 0",
    "global AtomicI64 after the swaps, low word",
    "global AtomicU32 after the compare_exchange race",
    "global AtomicU32 written with store(Release), read with load(Acquire)",
];

/// Words of global scratch after the rows (the atomics under test).
pub const SCRATCH: usize = 16;

/// Length of the output buffer in `u32`s: the rows, then the scratch.
pub const LEN: usize = ROWS.len() * THREADS + SCRATCH;

/// The argument of the Bessel and `log` rows for thread `t`.
pub fn bessel_x(t: usize) -> f32 {
    0.125 + t as f32 * 0.15625
}

/// The argument of the `erfcx` and `normcdf` rows.
pub fn erfcx_x(t: usize) -> f32 {
    -2.0 + t as f32 * 0.15
}

/// The argument of the `normcdfinv` rows.
pub fn normcdfinv_p(t: usize) -> f32 {
    (t as f32 + 0.5) / 64.0
}

/// The argument of the `rcbrt` rows.
pub fn rcbrt_x(t: usize) -> f32 {
    (t as f32 - 31.5) * 0.73
}

/// The argument of the `frexp`/`ilogb` rows (0 at t = 20).
pub fn frexp_x(t: usize) -> f32 {
    (t as f32 - 20.0) * 3700.5
}

/// The argument of the `sin_cos_pi` rows.
pub fn sincospi_x(t: usize) -> f32 {
    (t as f32 - 32.0) * 0.37
}

/// The dividend of the `fract`/`div_euclid`/`rem_euclid` rows.
pub fn euclid_x(t: usize) -> f32 {
    (t as f32 - 32.0) * 1.37
}

/// The divisor of the `div_euclid`/`rem_euclid` rows.
pub fn euclid_y(t: usize) -> f32 {
    if t & 1 == 0 {
        2.5
    } else {
        -2.5
    }
}

/// The argument of the `saturate` row (NaN at t = 0).
pub fn saturate_x(t: usize) -> f32 {
    if t == 0 {
        f32::NAN
    } else {
        (t as f32 - 16.0) * 0.05
    }
}

/// The kernel body: device code, which on the host runs on the CPU runtime.
mod device {
    use super::*;
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
    pub unsafe fn run(out: *mut u32, len: usize) {
        crate::dassert!(
            len >= LEN && thread::block_dim_x() as usize == THREADS && thread::grid_dim_x() == 1,
            "selftest::run: one block of 64 threads and selftest::LEN outputs"
        );
        let tid = thread::thread_idx_x();
        let t = tid as usize;
        let put = |row: usize, v: u32| {
            // SAFETY: row < ROWS.len() and t < THREADS, so the index is below LEN <= len;
            // each (row, t) is written by thread t only.
            unsafe { *out.add(row * THREADS + t) = v };
        };
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

        // Shuffles: both warps are full and every lane runs every call.
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

        // Message passing through a release store and an acquire load.
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
}

pub use device::run;

#[cfg(not(target_arch = "nvptx64"))]
mod host {
    extern crate alloc;
    use super::*;
    use crate::warp::{shfl_c, shfl_source, ShflMode};
    use alloc::format;
    use alloc::string::{String, ToString};
    use alloc::vec::Vec;

    fn close(got: f64, want: f64, rel: f64, abs: f64) -> bool {
        if want.is_nan() {
            return got.is_nan();
        }
        if want.is_infinite() {
            return got == want;
        }
        (got - want).abs() <= abs + rel * want.abs()
    }

    /// `Φ⁻¹(p)` by bisection on `Φ(x) = erfc(-x/√2)/2` (monotone), in f64.
    fn normcdfinv_ref(p: f64) -> f64 {
        let (mut lo, mut hi) = (-40.0f64, 40.0f64);
        for _ in 0..200 {
            let mid = 0.5 * (lo + hi);
            if 0.5 * libm::erfc(-mid / core::f64::consts::SQRT_2) < p {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        0.5 * (lo + hi)
    }

    fn expect(bad: &mut Vec<String>, row: usize, t: usize, ok: bool, got: String, want: String) {
        if !ok {
            bad.push(format!("{} (row {row}), thread {t}: got {got}, want {want}", ROWS[row]));
        }
    }

    fn near(bad: &mut Vec<String>, t: usize, row: usize, got: f64, want: f64, rel: f64, abs: f64) {
        expect(bad, row, t, close(got, want, rel, abs), format!("{got:e}"), format!("{want:e}"));
    }

    fn erfcx_ref(x: f64) -> f64 {
        libm::exp(x * x) * libm::erfc(x)
    }

    /// The output's failures against CUDA semantics and the f64 references, one
    /// line each (`row name, thread: got ..., want ...`); empty when every value is right.
    ///
    /// Tolerances are libdevice's documented bounds with margin (CUDA C++
    /// Programming Guide, "Mathematical Functions"): `erfcx`, `normcdf`,
    /// `normcdfinv` 4–5 ulp, Bessel functions 9 ulp or 2.2e-6 absolute for `f32`
    /// (checked as 4e-6 absolute plus 2e-5 relative), `rcbrt`, `sincospi` 1 ulp;
    /// `frexp`, `ilogb`, `scalbn`, `fract`, the Euclidean pair and `saturate` are exact.
    pub fn check(out: &[u32]) -> Vec<String> {
        let mut bad = Vec::new();
        if out.len() < LEN {
            bad.push(format!("output has {} words, the self-test writes {LEN}", out.len()));
            return bad;
        }
        let at = |row: usize, t: usize| out[row * THREADS + t];

        // Atomics: old values are a permutation of what some interleaving gives.
        let mut olds: Vec<u32> = (0..THREADS).map(|t| at(0, t)).collect();
        olds.sort_unstable();
        expect(
            &mut bad,
            0,
            0,
            olds == (0..THREADS as u32).collect::<Vec<_>>(),
            format!("{olds:?}"),
            "0..64 once each".into(),
        );
        for t in 0..THREADS {
            expect(&mut bad, 1, t, at(1, t) == 64, at(1, t).to_string(), "64".into());
        }
        let mut halves: Vec<f32> = (0..THREADS).map(|t| f32::from_bits(at(2, t))).collect();
        halves.sort_by(f32::total_cmp);
        let want: Vec<f32> = (0..THREADS).map(|k| k as f32 * 0.5).collect();
        expect(&mut bad, 2, 0, halves == want, format!("{halves:?}"), "0, 0.5, ..., 31.5 once each".into());
        let mut subs: Vec<u32> = (0..THREADS).map(|t| at(3, t)).collect();
        subs.sort_unstable();
        expect(
            &mut bad,
            3,
            0,
            subs == (37..=100).collect::<Vec<_>>(),
            format!("{subs:?}"),
            "37..=100 once each".into(),
        );
        let finals: Vec<u32> = (0..FINAL_NAMES.len()).map(|k| at(FINALS, k)).collect();
        let mut swapped: Vec<i64> = (0..THREADS).map(|t| at(4, t) as i32 as i64).collect();
        swapped.push(finals[8] as i32 as i64);
        swapped.sort_unstable();
        expect(
            &mut bad,
            4,
            0,
            swapped == (-1..64).collect::<Vec<_>>(),
            format!("{swapped:?}"),
            "-1..64 once each (olds and final)".into(),
        );
        let winners: Vec<usize> = (0..THREADS).filter(|&t| at(5, t) == 1).collect();
        let one_winner = winners.len() == 1 && (0..THREADS).all(|t| at(5, t) <= 1);
        expect(&mut bad, 5, 0, one_winner, format!("winners {winners:?}"), "exactly one".into());
        let want_finals = [
            64,
            32.0f32.to_bits(),
            36,
            -10i32 as u32,
            189,
            0,
            !0,
            0,
            finals[8],
            winners.first().map_or(u32::MAX, |&w| w as u32 + 1),
            0xC0FFEE,
        ];
        for (k, (&g, &w)) in finals.iter().zip(&want_finals).enumerate() {
            if g != w {
                bad.push(format!("{} (finals slot {k}): got {g:#x}, want {w:#x}", FINAL_NAMES[k]));
            }
        }
        if finals[8] as i32 >= 64 || (finals[8] as i32) < 0 {
            bad.push(format!("{}: got {}, want a thread id", FINAL_NAMES[8], finals[8] as i32));
        }

        // Shuffles: the lane PTX's definition selects, in each warp.
        for t in 0..THREADS {
            let (base, lane) = ((t / 32) * 32, (t % 32) as u32);
            let pick = |mode, b, width| {
                let (src, p) = shfl_source(mode, lane, b, shfl_c(mode, width));
                (base + src as usize, p)
            };
            let (s, p) = pick(ShflMode::Idx, lane + 1, 8);
            let want = (s as u32 * 3) << 1 | p as u32;
            expect(&mut bad, 6, t, at(6, t) == want, at(6, t).to_string(), want.to_string());
            let (s, p) = pick(ShflMode::Up, 3, 8);
            let want = ((s as u32 * 1000) as u16 as u32) << 1 | p as u32;
            expect(&mut bad, 7, t, at(7, t) == want, at(7, t).to_string(), want.to_string());
            let (s, p) = pick(ShflMode::Down, 5, 16);
            let want = ((s as u32 * 7) as u8 as u32) << 1 | p as u32;
            expect(&mut bad, 8, t, at(8, t) == want, at(8, t).to_string(), want.to_string());
            let (s, p) = pick(ShflMode::Xor, 4, 8);
            expect(&mut bad, 9, t, at(9, t) == s as u32 * 3, at(9, t).to_string(), (s * 3).to_string());
            let want = (s as u32) << 1 | p as u32;
            expect(&mut bad, 10, t, at(10, t) == want, at(10, t).to_string(), want.to_string());
            let (s, _) = pick(ShflMode::Idx, 33, 32);
            let want = 2 * s as u32 + 1;
            expect(&mut bad, 11, t, at(11, t) == want, at(11, t).to_string(), want.to_string());
        }

        // Math against f64 references.
        for t in 0..THREADS {
            let f = |row: usize| f32::from_bits(at(row, t)) as f64;
            let x = bessel_x(t) as f64;
            let xe = erfcx_x(t) as f64;
            let p = normcdfinv_p(t) as f64;
            let xr = rcbrt_x(t) as f64;
            let xf = frexp_x(t);
            let ulp = f32::EPSILON as f64;
            near(&mut bad, t, 12, f(12), erfcx_ref(xe), 5.0 * ulp, 0.0);
            near(&mut bad, t, 13, f(13), libm::j0(x), 2e-5, 4e-6);
            near(&mut bad, t, 14, f(14), libm::j1(x), 2e-5, 4e-6);
            near(&mut bad, t, 15, f(15), libm::jn(3, x), 2e-5, 4e-6);
            near(&mut bad, t, 16, f(16), libm::y0(x), 2e-5, 4e-6);
            near(&mut bad, t, 17, f(17), libm::y1(x), 2e-5, 4e-6);
            near(&mut bad, t, 18, f(18), libm::yn(2, x), 2e-5, 4e-6);
            near(&mut bad, t, 19, f(19), 0.5 * libm::erfc(-xe / core::f64::consts::SQRT_2), 6.0 * ulp, 1e-44);
            near(&mut bad, t, 20, f(20), normcdfinv_ref(p), 6.0 * ulp, 0.0);
            near(&mut bad, t, 21, f(21), 1.0 / libm::cbrt(xr), 2.0 * ulp, 0.0);
            let (m, e) = libm::frexpf(xf);
            near(&mut bad, t, 22, f(22), m as f64, 0.0, 0.0);
            expect(&mut bad, 23, t, at(23, t) as i32 == e, (at(23, t) as i32).to_string(), e.to_string());
            let il = libm::ilogbf(xf);
            expect(&mut bad, 24, t, at(24, t) as i32 == il, (at(24, t) as i32).to_string(), il.to_string());
            near(&mut bad, t, 25, f(25), libm::scalbnf(bessel_x(t), t as i32 - 32) as f64, 0.0, 0.0);
            let xs = sincospi_x(t) as f64;
            let pi = core::f64::consts::PI;
            near(&mut bad, t, 26, f(26), libm::sin(pi * xs), 2.0 * ulp, 2.0 * ulp);
            near(&mut bad, t, 27, f(27), libm::cos(pi * xs), 2.0 * ulp, 2.0 * ulp);
            let (ex, ey) = (euclid_x(t), euclid_y(t));
            let fract = ex - libm::truncf(ex);
            near(&mut bad, t, 28, f(28), fract as f64, 0.0, 0.0);
            let r = libm::fmodf(ex, ey);
            let q = crate::math::euclid::f32::div(libm::truncf(ex / ey), r, ey);
            near(&mut bad, t, 29, f(29), q as f64, 0.0, 0.0);
            near(&mut bad, t, 30, f(30), crate::math::euclid::f32::rem(r, ey) as f64, 0.0, 0.0);
            near(&mut bad, t, 31, f(31), libm::log(x) / libm::log(3.0), 4.0 * ulp, 1e-7);
            near(&mut bad, t, 32, f(32), crate::math::euclid::f32::saturate(saturate_x(t)) as f64, 0.0, 0.0);
            let d = |row: usize| f64::from_bits(at(row, t) as u64 | (at(row + 1, t) as u64) << 32);
            let eps = f64::EPSILON;
            near(&mut bad, t, 33, d(33), libm::j1(x), 1e-12, 1e-14);
            near(&mut bad, t, 35, d(35), libm::yn(3, x), 1e-12, 1e-14);
            near(&mut bad, t, 37, d(37), erfcx_ref(xe), 16.0 * eps + 4.0 * eps * xe * xe, 0.0);
            near(&mut bad, t, 39, d(39), normcdfinv_ref(p), 16.0 * eps, 1e-15);
            near(&mut bad, t, 41, d(41), 1.0 / libm::cbrt(xr), 4.0 * eps, 0.0);
        }
        bad
    }

    /// What a correct GPU writes, computed on the host from the same
    /// definitions (the atomics in one particular order: thread 0 first).
    /// For [`check`]'s own tests; a wrong entry must make `check` complain.
    pub fn expected() -> Vec<u32> {
        let mut out = alloc::vec![0u32; LEN];
        let mut put = |row: usize, t: usize, v: u32| out[row * THREADS + t] = v;
        for t in 0..THREADS {
            put(0, t, t as u32);
            put(1, t, 64);
            put(2, t, (t as f32 * 0.5).to_bits());
            put(3, t, 100 - t as u32);
            put(4, t, (t as i64 - 1) as u32);
            put(5, t, (t == 0) as u32);
            let (base, lane) = ((t / 32) * 32, (t % 32) as u32);
            let pick = |mode, b, width| {
                let (src, p) = shfl_source(mode, lane, b, shfl_c(mode, width));
                (base as u32 + src, p as u32)
            };
            let (s, p) = pick(ShflMode::Idx, lane + 1, 8);
            put(6, t, (s * 3) << 1 | p);
            let (s, p) = pick(ShflMode::Up, 3, 8);
            put(7, t, ((s * 1000) as u16 as u32) << 1 | p);
            let (s, p) = pick(ShflMode::Down, 5, 16);
            put(8, t, ((s * 7) as u8 as u32) << 1 | p);
            let (s, p) = pick(ShflMode::Xor, 4, 8);
            put(9, t, s * 3);
            put(10, t, s << 1 | p);
            let (s, _) = pick(ShflMode::Idx, 33, 32);
            put(11, t, 2 * s + 1);
            let x = bessel_x(t) as f64;
            let xe = erfcx_x(t) as f64;
            let p = normcdfinv_p(t) as f64;
            let xr = rcbrt_x(t) as f64;
            let xf = frexp_x(t);
            let (m, e) = libm::frexpf(xf);
            let (ex, ey) = (euclid_x(t), euclid_y(t));
            let r = libm::fmodf(ex, ey);
            let pi = core::f64::consts::PI;
            let f32s = [
                erfcx_ref(xe) as f32,
                libm::j0(x) as f32,
                libm::j1(x) as f32,
                libm::jn(3, x) as f32,
                libm::y0(x) as f32,
                libm::y1(x) as f32,
                libm::yn(2, x) as f32,
                (0.5 * libm::erfc(-xe / core::f64::consts::SQRT_2)) as f32,
                normcdfinv_ref(p) as f32,
                (1.0 / libm::cbrt(xr)) as f32,
                m,
                f32::from_bits(e as u32),
                f32::from_bits(libm::ilogbf(xf) as u32),
                libm::scalbnf(bessel_x(t), t as i32 - 32),
                libm::sin(pi * sincospi_x(t) as f64) as f32,
                libm::cos(pi * sincospi_x(t) as f64) as f32,
                ex - libm::truncf(ex),
                crate::math::euclid::f32::div(libm::truncf(ex / ey), r, ey),
                crate::math::euclid::f32::rem(r, ey),
                (libm::log(x) / libm::log(3.0)) as f32,
                crate::math::euclid::f32::saturate(saturate_x(t)),
            ];
            for (k, v) in f32s.iter().enumerate() {
                put(12 + k, t, v.to_bits());
            }
            let f64s = [libm::j1(x), libm::yn(3, x), erfcx_ref(xe), normcdfinv_ref(p), 1.0 / libm::cbrt(xr)];
            for (k, v) in f64s.iter().enumerate() {
                put(33 + 2 * k, t, v.to_bits() as u32);
                put(34 + 2 * k, t, (v.to_bits() >> 32) as u32);
            }
        }
        let finals = [64, 32.0f32.to_bits(), 36, -10i32 as u32, 189, 0, !0, 0, 63, 1, 0xC0FFEE];
        for (k, v) in finals.iter().enumerate() {
            out[FINALS * THREADS + k] = *v;
        }
        out
    }
}

#[cfg(not(target_arch = "nvptx64"))]
pub use host::{check, expected};

#[cfg(all(test, not(target_arch = "nvptx64")))]
mod tests {
    use super::*;

    #[test]
    fn the_layout_is_consistent() {
        assert_eq!(ROWS.len(), 44);
        assert!(FINAL_NAMES.len() <= THREADS);
        assert_eq!((LEN - SCRATCH) % 2, 0, "the scratch must stay 8-byte aligned");
    }

    #[test]
    fn a_correct_output_passes() {
        let bad = check(&expected());
        assert!(bad.is_empty(), "{bad:#?}");
    }

    #[test]
    fn each_kind_of_error_is_named() {
        let good = expected();
        let cases: &[(usize, u32, &str)] = &[
            (THREADS + 5, 63, "load(Acquire)"),
            (6 * THREADS + 9, 0, "shfl_idx_width"),
            (8 * THREADS + 31, 7 << 1 | 1, "shfl_down_width"),
            (13 * THREADS + 3, 0.5f32.to_bits(), "j0"),
            (20 * THREADS + 10, 1.0f32.to_bits(), "normcdfinv"),
            (24 * THREADS + 2, 5, "ilogb"),
            (39 * THREADS + 7, 0, "f64 normcdfinv"),
            (FINALS * THREADS + 3, 0, "fetch_min"),
            (FINALS * THREADS + 10, 0, "store(Release)"),
        ];
        for &(i, v, name) in cases {
            let mut out = good.clone();
            out[i] = if good[i] == v { v ^ 0x8000_0000 } else { v };
            let bad = check(&out);
            assert!(bad.iter().any(|l| l.contains(name)), "corrupting word {i} should name {name}: {bad:#?}");
        }
        assert!(!check(&good[..LEN - 1]).is_empty());
    }

    #[test]
    fn duplicated_atomic_results_fail() {
        let mut out = expected();
        out[1] = 0; // two threads saw counter value 0
        assert!(check(&out).iter().any(|l| l.contains("fetch_add(1, AcqRel)")));
        let mut out = expected();
        out[5 * THREADS + 7] = 1; // a second compare_exchange winner
        assert!(check(&out).iter().any(|l| l.contains("compare_exchange")));
    }
}
