//! Clocks, timers and other special registers (on the host: the host's clocks, see [`crate::cpu`]).
//!
//! | sluice | CUDA C++ | PTX | what it counts |
//! | --- | --- | --- | --- |
//! | [`clock`] | `clock()` | `mov.u32 %clock` | SM cycles, 32 bits (wraps in about 2 s) |
//! | [`clock64`] | `clock64()` | `mov.u64 %clock64` | SM cycles, 64 bits |
//! | [`global_timer_ns`] | `%globaltimer` (asm) | `mov.u64 %globaltimer` | nanoseconds, device-wide (updated about every µs) |
//! | [`sm_id`] | `%smid` (asm) | `mov.u32 %smid` | the SM running this thread (for diagnostics only) |
//! | [`crate::thread::nanosleep`] | `__nanosleep(ns)` | `nanosleep.u32` | |
//! | [`unroll!`](crate::unroll) | `#pragma unroll` | (the body `N` times) | |
//!
//! The cycle counters are per SM: compare two readings of the same thread, never
//! of threads on different SMs. They are not `pure`: each call reads the
//! counter anew and the compiler keeps the calls in order relative to each other.
//!
//! ```ignore
//! let t0 = sluice_device::misc::clock64();
//! // ... work ...
//! let cycles = sluice_device::misc::clock64() - t0;
//! ```
//!
//! # Hardware support
//!
//! Every architecture.
//!
//! # On the CPU
//!
//! The host's clocks (`cpu.rs`): `clock`/`clock64` count nanoseconds of the
//! monotonic clock (a 1 GHz "cycle"), the global timer is the wall clock, `sm_id`
//! is the index of the rayon thread running the block, and `trap` is a panic that
//! fails the launch. Timing on the CPU says nothing about timing on a GPU.

// The backend, chosen once: special registers on the GPU, the host's clocks on the CPU.
#[cfg_attr(target_arch = "nvptx64", path = "gpu.rs")]
#[cfg_attr(not(target_arch = "nvptx64"), path = "cpu.rs")]
mod imp;

/// The SM's 32-bit cycle counter (`clock()`). On the CPU: nanoseconds of the
/// host's monotonic clock (a 1 GHz "cycle"), low 32 bits.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub fn clock() -> u32 {
    imp::clock()
}

/// The SM's 64-bit cycle counter (`clock64()`). On the CPU: nanoseconds of the
/// host's monotonic clock since the first reading in the process.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub fn clock64() -> u64 {
    imp::clock64()
}

/// The device's global nanosecond timer (`%globaltimer`). On the CPU:
/// nanoseconds since the Unix epoch, from the host's wall clock.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub fn global_timer_ns() -> u64 {
    imp::global_timer_ns()
}

/// The id of the SM this thread runs on (`%smid`); may change during
/// execution under preemption, so use it for diagnostics only. On the CPU the
/// index of the rayon thread running the block.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub fn sm_id() -> u32 {
    imp::sm_id()
}

/// Ends the kernel at once (`trap`): the launch fails with
/// `CUDA_ERROR_LAUNCH_FAILED` (719, the context is lost), as a device panic does.
/// On the CPU: a panic with the message `trap`, which the launch reports as the
/// thread's error.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub fn trap() -> ! {
    imp::trap()
}

/// `unroll!(i in 0..N; max M => { body })`: `body` once for each `i` in `0..N`, each time
/// with `i` a constant — CUDA C++'s `#pragma unroll`, which the optimiser cannot decline.
/// `N` is a constant expression (it may name const generics), at most `M`, which is 2, 4,
/// 8, 16 or 32 (checked at compile time). Arrays indexed by `i` (MMA fragments and
/// accumulators) stay in registers, and independent iterations can be scheduled together.
///
/// ```
/// let mut acc = [0u32; 4];
/// sluice_device::unroll!(i in 0..4; max 4 => {
///     acc[i] = i as u32 * 10;
/// });
/// assert_eq!(acc, [0, 10, 20, 30]);
/// ```
#[macro_export]
macro_rules! unroll {
    ($i:ident in 0..$n:expr; max 2 => $body:block) => { $crate::unroll!(@go $i, $n, 2, $body, [0 1]) };
    ($i:ident in 0..$n:expr; max 4 => $body:block) => { $crate::unroll!(@go $i, $n, 4, $body, [0 1 2 3]) };
    ($i:ident in 0..$n:expr; max 8 => $body:block) => { $crate::unroll!(@go $i, $n, 8, $body, [0 1 2 3 4 5 6 7]) };
    ($i:ident in 0..$n:expr; max 16 => $body:block) => {
        $crate::unroll!(@go $i, $n, 16, $body, [0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15])
    };
    ($i:ident in 0..$n:expr; max 32 => $body:block) => {
        $crate::unroll!(@go $i, $n, 32, $body, [0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31])
    };
    (@go $i:ident, $n:expr, $max:literal, $body:block, [$($k:literal)*]) => {{
        let () = const { assert!($n <= $max, "unroll!: more iterations than its maximum") };
        $(
            if $k < $n {
                #[allow(clippy::identity_op, clippy::erasing_op)]
                let $i: usize = $k;
                $body
            }
        )*
    }};
}
