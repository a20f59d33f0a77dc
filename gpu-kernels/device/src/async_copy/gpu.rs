//! Asynchronous copies on the GPU: `cp.async`, one instruction per operation (`raw.rs`).

#[path = "raw.rs"]
mod raw;

/// One 16-byte chunk from `src` (`src_bytes` of it, the rest zero) to shared `dst`.
///
/// # Safety
///
/// `raw::cp_async_cg16`'s contract.
#[inline(always)]
pub(super) unsafe fn copy16(dst: u32, src: *const u8, src_bytes: u32) {
    // SAFETY: forwarded.
    unsafe { raw::cp_async_cg16(dst, src, src_bytes) }
}

/// 16 bytes from `src` to shared `dst` if `read`, else 16 zeros (`src` not read).
///
/// # Safety
///
/// `raw::cp_async_cg16_or_zero`'s contract.
#[inline(always)]
pub(super) unsafe fn copy16_or_zero(dst: u32, src: *const u8, read: bool) {
    // SAFETY: forwarded.
    unsafe { raw::cp_async_cg16_or_zero(dst, src, read) }
}

/// Whether `ptr` points into global memory (what `cp.async` reads).
#[inline(always)]
pub(super) fn is_global(ptr: *const u8) -> bool {
    raw::is_global(ptr)
}

#[inline(always)]
pub(super) fn commit() {
    // SAFETY: commits this thread's open group; no memory is touched.
    unsafe { raw::commit_group() }
}

#[inline(always)]
pub(super) fn wait_group<const N: u32>() {
    // SAFETY: a wait.
    unsafe { raw::wait_group::<N>() }
}

/// Makes the shared-memory writes of this thread's landed copies visible to the async
/// proxy (the warpgroup MMA's reads): the pipelines call it before their barrier. Only in a
/// build for sm_90a, the one that has the warpgroup MMA.
#[inline(always)]
pub(super) fn publish_for_async_proxy() {
    #[cfg(target_feature = "sm_90a")]
    raw::fence_proxy_async_shared();
}

#[inline(always)]
pub(super) fn wait_all() {
    // SAFETY: a wait.
    unsafe { raw::wait_all() }
}
