//! `misc` on the GPU: `%clock`, `%clock64`, `%globaltimer`, `%smid` and `trap`.

use core::arch::asm;

#[inline(always)]
pub(super) fn clock() -> u32 {
    let r: u32;
    // SAFETY: reads a special register. Not `pure`: every call is a new reading.
    unsafe { asm!("mov.u32 {r}, %clock;", r = out(reg32) r, options(nomem, nostack, preserves_flags)) };
    r
}

#[inline(always)]
pub(super) fn clock64() -> u64 {
    let r: u64;
    // SAFETY: reads a special register. Not `pure`: every call is a new reading.
    unsafe { asm!("mov.u64 {r}, %clock64;", r = out(reg64) r, options(nomem, nostack, preserves_flags)) };
    r
}

#[inline(always)]
pub(super) fn global_timer_ns() -> u64 {
    let r: u64;
    // SAFETY: reads a special register. Not `pure`: every call is a new reading.
    unsafe { asm!("mov.u64 {r}, %globaltimer;", r = out(reg64) r, options(nomem, nostack, preserves_flags)) };
    r
}

#[inline(always)]
pub(super) fn sm_id() -> u32 {
    let r: u32;
    // SAFETY: reads a special register.
    unsafe { asm!("mov.u32 {r}, %smid;", r = out(reg32) r, options(nomem, nostack, preserves_flags)) };
    r
}

#[inline(always)]
pub(super) fn trap() -> ! {
    // SAFETY: `trap` has no preconditions; it aborts this kernel launch.
    unsafe { core::arch::nvptx::trap() }
}
