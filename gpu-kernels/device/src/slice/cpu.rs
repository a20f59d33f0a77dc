//! `slice` on the CPU: element accesses of the GPU thread the CPU runtime runs
//! ([`crate::cpu`]) — host pointers, accessed as on the GPU. Every element a
//! kernel thread reaches through a slice parameter passes here: where a race
//! checker records which thread took which element.

/// `&mut *ptr.add(i)`, for the current GPU thread.
///
/// # Safety
///
/// `ptr.add(i)` is a valid, aligned `T` that only this thread accesses while the
/// reference lives.
#[inline(always)]
pub(super) unsafe fn element<'a, T>(ptr: *mut T, i: usize) -> &'a mut T {
    // SAFETY: forwarded to the caller.
    unsafe { &mut *ptr.add(i) }
}

/// `ptr.add(i).write(v)`, for the current GPU thread.
///
/// # Safety
///
/// `ptr.add(i)` is valid for a write of a `T` and aligned; no other thread
/// accesses it unordered.
#[inline(always)]
pub(super) unsafe fn write<T>(ptr: *mut T, i: usize, v: T) {
    // SAFETY: forwarded to the caller.
    unsafe { ptr.add(i).write(v) }
}
