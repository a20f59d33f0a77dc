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
//!
//! # Per family
//!
//! One file per op family under test, with what its rows hold and their checks
//! (called by [`check`] and [`expected`], in `check.rs`): `atomic.rs` (rows 0–5
//! and the [`FINALS`] row), `warp.rs` (rows 6–11), `math.rs` (rows 12–43, and the
//! arguments each thread computes with). The kernel body, [`run`] (`device.rs`),
//! is one function that writes the rows in order: its PTX is pinned, and split
//! into a function per family the compiler schedules it differently. A new family
//! adds a file with its checks, its rows at the end of [`ROWS`], its part of
//! `run`, and one call in each of `check` and `expected`.

mod atomic;
#[cfg(not(target_arch = "nvptx64"))]
mod check;
mod device;
mod math;
mod warp;

#[cfg(not(target_arch = "nvptx64"))]
pub use check::{check, expected};
pub use device::run;
pub use math::{bessel_x, erfcx_x, euclid_x, euclid_y, frexp_x, normcdfinv_p, rcbrt_x, saturate_x, sincospi_x};

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

/// Traps (on the CPU: panics) unless the launch is the one the self-test needs:
/// one block of [`THREADS`] threads and `len >= LEN` outputs. (Here, in
/// `selftest.rs` and at a line of three digits, because the message names its site
/// and is in the PTX, where its length shapes the fault record's copy loop: at the
/// length it has always had, the move into rooms left that loop alone.)
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
fn check_launch(len: usize) {
    crate::dassert!(
        len >= LEN && crate::thread::block_dim_x() as usize == THREADS && crate::thread::grid_dim_x() == 1,
        "selftest::run: one block of 64 threads and selftest::LEN outputs"
    );
}

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
