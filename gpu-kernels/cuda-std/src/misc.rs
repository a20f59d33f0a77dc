//! `cuda_std::misc`: clock, breakpoint, profiler counters.

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
