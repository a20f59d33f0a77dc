//! Clocks, timers and other special registers (on the host: the host's clocks, see [`crate::cpu`]).
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
    /// `CUDA_ERROR_LAUNCH_FAILED` (719, the context is lost), as a device panic does.
    #[inline(always)]
    pub fn trap() -> ! {
        // SAFETY: `trap` has no preconditions; it aborts this kernel launch.
        unsafe { core::arch::nvptx::trap() }
    }
}

#[cfg(target_arch = "nvptx64")]
pub use imp::*;

/// The host: the host's clocks, for the GPU thread the CPU runtime runs.
#[cfg(not(target_arch = "nvptx64"))]
mod imp {
    use crate::cpu::block::current;
    use std::sync::OnceLock;
    use std::time::{Instant, SystemTime, UNIX_EPOCH};

    fn epoch() -> Instant {
        static EPOCH: OnceLock<Instant> = OnceLock::new();
        *EPOCH.get_or_init(Instant::now)
    }

    /// The SM's 32-bit cycle counter (`clock()`). On the CPU: nanoseconds of
    /// the host's monotonic clock (a 1 GHz "cycle"), low 32 bits.
    #[track_caller]
    pub fn clock() -> u32 {
        current("misc::clock");
        epoch().elapsed().as_nanos() as u32
    }

    /// The SM's 64-bit cycle counter (`clock64()`). On the CPU: nanoseconds of
    /// the host's monotonic clock since the first reading in the process.
    #[track_caller]
    pub fn clock64() -> u64 {
        current("misc::clock64");
        epoch().elapsed().as_nanos() as u64
    }

    /// The device's global nanosecond timer (`%globaltimer`). On the CPU:
    /// nanoseconds since the Unix epoch, from the host's wall clock.
    #[track_caller]
    pub fn global_timer_ns() -> u64 {
        current("misc::global_timer_ns");
        SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64)
    }

    /// The id of the SM this thread runs on (`%smid`); on the CPU the index of
    /// the rayon thread running the block. For diagnostics only.
    #[track_caller]
    pub fn sm_id() -> u32 {
        current("misc::sm_id");
        rayon::current_thread_index().unwrap_or(0) as u32
    }

    /// Ends the kernel at once (`trap`). On the CPU: a panic with the message
    /// `trap`, which the launch reports as the thread's error.
    #[track_caller]
    pub fn trap() -> ! {
        current("misc::trap");
        panic!("trap")
    }
}

#[cfg(not(target_arch = "nvptx64"))]
pub use imp::*;
