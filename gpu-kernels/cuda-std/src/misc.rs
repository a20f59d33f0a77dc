//! `cuda_std::misc`: clock, breakpoint, profiler counters.
//!
//! On the host (the CPU runtime) [`clock`] reads the host's monotonic clock
//! in nanoseconds ([`sluice_device::misc::clock64`]); [`breakpoint`] fails the
//! launch (there is no debugger to stop in); [`profiler_counter`] does nothing
//! (no profiler counts it) but checks its counter as the device does.

#[cfg(target_arch = "nvptx64")]
pub use imp::*;

#[cfg(target_arch = "nvptx64")]
mod imp {
    use core::arch::asm;

    /// The SM's 64-bit cycle counter (`%clock64`; cuda_std's `clock` is the
    /// 64-bit one). [`sluice_device::misc::clock`] is the 32-bit `clock()`.
    #[inline(always)]
    pub fn clock() -> u64 {
        sluice_device::misc::clock64()
    }

    /// Stops at a debugger breakpoint (`brkpt`). Without a debugger attached
    /// the launch fails (a breakpoint exception), as in CUDA C++.
    #[inline(always)]
    pub fn breakpoint() {
        // SAFETY: no operands; its effect is on the launch, not on memory.
        unsafe { asm!("brkpt;", options(nostack)) }
    }

    /// Increments profiler counter `counter` (0..=7) once per warp (`pmevent`).
    /// Any other counter ends the kernel with a trap (cuda_std panicked).
    #[inline(always)]
    pub fn profiler_counter(counter: u32) {
        macro_rules! ev {
            ($($n:literal)*) => {
                match counter {
                    // SAFETY: `pmevent` with an immediate in 0..=7 only signals the profiler.
                    $($n => unsafe { asm!(concat!("pmevent ", $n, ";"), options(nomem, nostack)) },)*
                    _ => sluice_device::dfail!("profiler_counter: the counter must be in 0..=7"),
                }
            };
        }
        ev!(0 1 2 3 4 5 6 7)
    }
}

/// The host: the CPU runtime's clock; no debugger, no profiler.
#[cfg(not(target_arch = "nvptx64"))]
pub use host::*;

#[cfg(not(target_arch = "nvptx64"))]
mod host {
    /// The SM's 64-bit cycle counter (`%clock64`; cuda_std's `clock` is the
    /// 64-bit one). On the host: nanoseconds of the host's monotonic clock (a
    /// 1 GHz "cycle"), as [`sluice_device::misc::clock64`].
    #[inline(always)]
    #[track_caller]
    pub fn clock() -> u64 {
        sluice_device::misc::clock64()
    }

    /// Stops at a debugger breakpoint (`brkpt` on the device). The CPU backend
    /// has no debugger to stop in, so it does what a GPU does without one: the
    /// launch fails, here with a panic of this thread whose message says so
    /// (the launch's error names the thread and the call site).
    #[inline(always)]
    #[track_caller]
    pub fn breakpoint() {
        panic!(
            "misc::breakpoint: a breakpoint (`brkpt`) with no debugger attached ends the launch, on the CPU \
             backend as on a GPU"
        )
    }

    /// Increments profiler counter `counter` (0..=7) once per warp (`pmevent`
    /// on the device). On the host no profiler counts anything: a no-op for
    /// 0..=7; any other counter fails the launch, with the device's message.
    #[inline(always)]
    #[track_caller]
    pub fn profiler_counter(counter: u32) {
        if counter > 7 {
            sluice_device::dfail!("profiler_counter: the counter must be in 0..=7")
        }
    }
}
