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

/// `ptr.add(i)` and `ptr.add(i + 1)` written with `v`: one 8-byte store
/// (`st.global.v2.b32`) where the pair is 8-byte aligned, two stores otherwise.
///
/// # Safety
///
/// As [`write`], for both elements.
#[inline(always)]
pub(super) unsafe fn write_pair<T: Copy>(ptr: *mut T, i: usize, v: [T; 2]) {
    // SAFETY: forwarded to the caller; the pair store only where it is aligned for it.
    unsafe {
        let p = ptr.add(i);
        if core::mem::size_of::<T>() == 4 && (p as usize).is_multiple_of(8) {
            (p as *mut [T; 2]).cast::<u64>().write(core::mem::transmute_copy::<[T; 2], u64>(&v));
        } else {
            p.write(v[0]);
            p.add(1).write(v[1]);
        }
    }
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

/// `__check_block`'s failure (never reached in practice: `#[kernel(block = ..)]` checks on
/// the CPU only; the GPU build assumes the block instead).
#[cold]
pub(super) fn wrong_block(_x: u32, _y: u32, _z: u32) -> ! {
    crate::dfail!("a #[kernel(block = ..)] kernel launched with another block shape than the one it declares")
}
