//! `slice` on the GPU: element accesses are plain pointer accesses.

/// Nothing on the GPU (the CPU's checking mode notes the parameter here).
#[inline(always)]
pub(super) fn adopt<T>(ptr: *mut T, len: usize) {
    let _ = (ptr, len);
}

/// `&mut *ptr.add(i)`.
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

/// `ptr.add(i).write(v)`.
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
