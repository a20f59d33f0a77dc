//! `cp.async`'s instruction forms on the GPU, one `unsafe fn` each, its PTX in its doc.
//!
//! Not an API: the GPU backend (`gpu.rs`) calls these for the typed layer
//! ([`crate::async_copy`]), which checks what they leave to the caller — the source inside
//! a live global allocation, the destination inside a tile nobody reads until the copy's
//! group has been waited for.

use core::arch::asm;

/// `fence.proxy.async.shared::cta;` — makes this thread's generic-proxy writes to shared
/// memory (`st.shared`, landed `cp.async`) visible to the async proxy, whose readers are the
/// warpgroup MMA (`wgmma`) and TMA stores (sm_90).
#[cfg(target_feature = "sm_90a")]
#[inline(always)]
pub(super) fn fence_proxy_async_shared() {
    // SAFETY: a fence, no operands.
    unsafe { asm!("fence.proxy.async.shared::cta;", options(nostack, preserves_flags)) }
}

/// `cp.async.cg.shared.global [dst], [src], 16, src_bytes;` — copies `src_bytes` (0 to 16)
/// bytes from global `src` to shared `dst` and zero-fills the rest of the 16, bypassing L1
/// (sm_80+). The copy lands asynchronously: it belongs to the next
/// [`commit_group`], and is visible to this thread after a [`wait_group`] that covers it.
///
/// # Safety
///
/// * `dst` is a 16-byte-aligned shared address of this block with 16 bytes inside its
///   shared memory, not read or written by anyone until the copy is waited for;
/// * `src` is 16-byte aligned, and `src .. src + src_bytes` is readable global memory.
#[inline(always)]
pub(super) unsafe fn cp_async_cg16(dst: u32, src: *const u8, src_bytes: u32) {
    // SAFETY: the caller's contract above.
    unsafe {
        asm!(
            "cp.async.cg.shared.global [{d}], [{s}], 16, {n};",
            d = in(reg32) dst,
            s = in(reg64) src,
            n = in(reg32) src_bytes,
            options(nostack, preserves_flags),
        );
    }
}

/// `cp.async.cg.shared.global [dst], [src], 16, !read;` — copies 16 bytes from global `src`
/// to shared `dst` if `read`, else writes 16 zeros there without reading `src` (the
/// `ignore-src` predicate form: no source size to adjust, one predicated `LDGSTS`).
///
/// # Safety
///
/// * `dst` as in [`cp_async_cg16`];
/// * if `read`: `src` is 16-byte aligned and `src .. src + 16` is readable global memory
///   (if not, `src` is not accessed and may be any value).
#[inline(always)]
pub(super) unsafe fn cp_async_cg16_or_zero(dst: u32, src: *const u8, read: bool) {
    // SAFETY: the caller's contract above.
    unsafe {
        asm!(
            "{{ .reg .pred %ignore; setp.eq.u32 %ignore, {r}, 0; cp.async.cg.shared.global [{d}], [{s}], 16, %ignore; }}",
            d = in(reg32) dst,
            s = in(reg64) src,
            r = in(reg32) read as u32,
            options(nostack, preserves_flags),
        );
    }
}

/// `isspacep.global p, ptr;` — whether `ptr` (a generic address) points into global memory.
#[inline(always)]
pub(super) fn is_global(ptr: *const u8) -> bool {
    let r: u32;
    // SAFETY: a test of an address's window; no memory is touched.
    unsafe {
        asm!(
            "{{ .reg .pred %g; isspacep.global %g, {p}; selp.u32 {r}, 1, 0, %g; }}",
            p = in(reg64) ptr,
            r = out(reg32) r,
            options(pure, nomem, nostack, preserves_flags),
        );
    }
    r != 0
}

/// `cp.async.commit_group;` — closes this thread's group of the `cp.async`s issued since
/// the last commit (an empty group if none).
///
/// # Safety
///
/// None beyond the instruction's; `unsafe` for symmetry with the waits, whose meaning
/// depends on how many groups were committed.
#[inline(always)]
pub(super) unsafe fn commit_group() {
    // SAFETY: no operands.
    unsafe { asm!("cp.async.commit_group;", options(nostack, preserves_flags)) }
}

/// `cp.async.wait_group N;` — waits until at most `N` of this thread's committed groups
/// are pending (the oldest ones complete first).
///
/// # Safety
///
/// None (a wait); `unsafe` because reading a destination after it is only sound in the
/// sense of "not racing" if the caller counted groups right.
#[inline(always)]
pub(super) unsafe fn wait_group<const N: u32>() {
    // SAFETY: a wait, no memory of its own (it is a compiler barrier for memory: the
    // asm! has no `nomem`).
    unsafe { asm!("cp.async.wait_group {n};", n = const N, options(nostack, preserves_flags)) }
}

/// `cp.async.wait_all;` — commits the open group and waits for every group of this thread.
///
/// # Safety
///
/// As [`wait_group`].
#[inline(always)]
pub(super) unsafe fn wait_all() {
    // SAFETY: as `wait_group`.
    unsafe { asm!("cp.async.wait_all;", options(nostack, preserves_flags)) }
}
