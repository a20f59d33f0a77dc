//! Clocks, timers and other special registers (device only).
//!
//! | sluice | CUDA C++ | PTX | what it counts |
//! | --- | --- | --- | --- |
//! | [`clock`] | `clock()` | `mov.u32 %clock` | SM cycles, 32 bits (wraps in about 2 s) |
//! | [`clock64`] | `clock64()` | `mov.u64 %clock64` | SM cycles, 64 bits |
//! | [`global_timer_ns`] | `%globaltimer` (asm) | `mov.u64 %globaltimer` | nanoseconds, device-wide (updated about every µs) |
//! | [`sm_id`] | `%smid` (asm) | `mov.u32 %smid` | the SM running this thread (for diagnostics only) |
//! | [`crate::thread::nanosleep`] | `__nanosleep(ns)` | `nanosleep.u32` | |
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

#[cfg(target_arch = "nvptx64")]
mod imp {
    use core::arch::asm;

    /// The SM's 32-bit cycle counter (`clock()`).
    #[inline(always)]
    pub fn clock() -> u32 {
        let r: u32;
        // SAFETY: reads a special register. Not `pure`: every call is a new reading.
        unsafe { asm!("mov.u32 {r}, %clock;", r = out(reg32) r, options(nomem, nostack, preserves_flags)) };
        r
    }

    /// The SM's 64-bit cycle counter (`clock64()`).
    #[inline(always)]
    pub fn clock64() -> u64 {
        let r: u64;
        // SAFETY: reads a special register. Not `pure`: every call is a new reading.
        unsafe { asm!("mov.u64 {r}, %clock64;", r = out(reg64) r, options(nomem, nostack, preserves_flags)) };
        r
    }

    /// The device's global nanosecond timer (`%globaltimer`).
    #[inline(always)]
    pub fn global_timer_ns() -> u64 {
        let r: u64;
        // SAFETY: reads a special register. Not `pure`: every call is a new reading.
        unsafe { asm!("mov.u64 {r}, %globaltimer;", r = out(reg64) r, options(nomem, nostack, preserves_flags)) };
        r
    }

    /// The id of the SM this thread runs on (`%smid`); may change during
    /// execution under preemption, so use it for diagnostics only.
    #[inline(always)]
    pub fn sm_id() -> u32 {
        let r: u32;
        // SAFETY: reads a special register.
        unsafe { asm!("mov.u32 {r}, %smid;", r = out(reg32) r, options(nomem, nostack, preserves_flags)) };
        r
    }

    /// Ends the kernel at once (`trap`): the launch fails with
    /// `CUDA_ERROR_ILLEGAL_INSTRUCTION`, as a device panic does.
    #[inline(always)]
    pub fn trap() -> ! {
        // SAFETY: `trap` has no preconditions; it aborts this kernel launch.
        unsafe { core::arch::nvptx::trap() }
    }
}

#[cfg(target_arch = "nvptx64")]
pub use imp::*;
