//! The tensor-memory accelerator's and `mbarrier`'s instruction forms on the GPU, one
//! `unsafe fn` each, its PTX in its doc (sm_90).
//!
//! Not an API: the GPU backend (`gpu.rs`) calls these for the typed layer
//! ([`crate::tma`]), which checks what they leave to the caller — a barrier initialised once
//! before any use, a copy's destination a whole tile no one reads until its barrier phase
//! completes, the phases waited for in order.

use core::arch::asm;

/// `mbarrier.init.shared::cta.b64 [bar], count;` — a fresh barrier in phase 0 expecting
/// `count` arrivals.
///
/// # Safety
///
/// `bar` is an 8-byte aligned shared address of this block, not in use as a barrier or read
/// as data by anyone until the block passes a barrier after this init.
#[inline(always)]
pub(super) unsafe fn mbarrier_init(bar: u32, count: u32) {
    // SAFETY: the caller's contract above.
    unsafe {
        asm!("mbarrier.init.shared::cta.b64 [{b}], {n};", b = in(reg32) bar, n = in(reg32) count, options(nostack, preserves_flags));
    }
}

/// `fence.mbarrier_init.release.cluster;` — orders this thread's barrier inits before
/// other threads' (and the TMA unit's) uses of them, with the block barrier that follows.
#[inline(always)]
pub(super) fn fence_mbarrier_init() {
    // SAFETY: a fence, no operands.
    unsafe { asm!("fence.mbarrier_init.release.cluster;", options(nostack, preserves_flags)) }
}

/// `mbarrier.arrive.shared::cta.b64 _, [bar];` — this thread's arrival, release semantics:
/// its earlier memory accesses happen before the completion of the phase.
///
/// # Safety
///
/// `bar` is an initialised barrier of this block.
#[inline(always)]
pub(super) unsafe fn mbarrier_arrive(bar: u32) {
    // SAFETY: the caller's contract above.
    unsafe {
        asm!("mbarrier.arrive.shared::cta.b64 _, [{b}];", b = in(reg32) bar, options(nostack, preserves_flags));
    }
}

/// `mbarrier.arrive.expect_tx.shared::cta.b64 _, [bar], bytes;` — this thread's arrival,
/// and `bytes` more bytes of asynchronous copies the phase waits for.
///
/// # Safety
///
/// `bar` is an initialised barrier of this block.
#[inline(always)]
pub(super) unsafe fn mbarrier_arrive_expect_tx(bar: u32, bytes: u32) {
    // SAFETY: the caller's contract above.
    unsafe {
        asm!(
            "mbarrier.arrive.expect_tx.shared::cta.b64 _, [{b}], {n};",
            b = in(reg32) bar,
            n = in(reg32) bytes,
            options(nostack, preserves_flags)
        );
    }
}

/// `mbarrier.try_wait.parity.shared::cta.b64 p, [bar], parity;` — whether the phase of
/// parity `parity` has completed (the current phase's parity differs from `parity`), waiting
/// a while (a time the hardware chooses) before answering no; acquire semantics when yes.
///
/// # Safety
///
/// `bar` is an initialised barrier of this block.
#[inline(always)]
pub(super) unsafe fn mbarrier_try_wait_parity(bar: u32, parity: u32) -> bool {
    let done: u32;
    // SAFETY: the caller's contract above.
    unsafe {
        asm!(
            "{{ .reg .pred %done; mbarrier.try_wait.parity.shared::cta.b64 %done, [{b}], {p}; selp.u32 {r}, 1, 0, %done; }}",
            b = in(reg32) bar,
            p = in(reg32) parity,
            r = out(reg32) done,
            options(nostack, preserves_flags)
        );
    }
    done != 0
}

/// `cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [dst],
/// [map, {x, y}], [bar];` — the TMA unit copies the box of the tensor map `map` whose first
/// element is at column `x`, row `y` into shared `dst` (zeros outside the matrix), and
/// completes its bytes on `bar`.
///
/// # Safety
///
/// * `map` is the generic address of a valid tensor map (a kernel's grid-constant
///   parameter) describing memory the launch may read and no one writes during it;
/// * `dst` is a shared address of this block, aligned as the map's swizzle needs (1024 bytes
///   for the 128-byte swizzle), with the box's bytes inside the block's shared memory, not
///   read or written by anyone until `bar`'s phase completes;
/// * `bar` is an initialised barrier of this block expecting these bytes.
#[inline(always)]
pub(super) unsafe fn tma_load_2d(dst: u32, map: u64, x: i32, y: i32, bar: u32) {
    // SAFETY: the caller's contract above.
    unsafe {
        asm!(
            "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [{d}], [{m}, {{{x}, {y}}}], [{b}];",
            d = in(reg32) dst,
            m = in(reg64) map,
            x = in(reg32) x,
            y = in(reg32) y,
            b = in(reg32) bar,
            options(nostack, preserves_flags)
        );
    }
}

/// `setmaxnreg.dec.sync.aligned.u32 N;` — this warpgroup gives registers back, keeping `N`
/// per thread (24 to 256, a multiple of 8). Every thread of the warpgroup executes it.
///
/// # Safety
///
/// All 128 threads of the warpgroup execute it together, and the kernel was compiled for
/// at most `N` registers after this point (ptxas sees the instruction).
#[inline(always)]
pub(super) unsafe fn setmaxnreg_dec<const N: u32>() {
    // SAFETY: the caller's contract above.
    unsafe { asm!("setmaxnreg.dec.sync.aligned.u32 {n};", n = const N, options(nostack, preserves_flags)) }
}

/// `setmaxnreg.inc.sync.aligned.u32 N;` — this warpgroup takes registers from the block's
/// pool (waiting until another warpgroup gave them back), `N` per thread.
///
/// # Safety
///
/// As [`setmaxnreg_dec`].
#[inline(always)]
pub(super) unsafe fn setmaxnreg_inc<const N: u32>() {
    // SAFETY: the caller's contract above.
    unsafe { asm!("setmaxnreg.inc.sync.aligned.u32 {n};", n = const N, options(nostack, preserves_flags)) }
}
