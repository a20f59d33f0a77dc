//! `slice` on the CPU: element accesses of the GPU thread the CPU runtime runs
//! ([`crate::cpu`]) — host pointers, accessed as on the GPU. Every element a
//! kernel thread reaches through a slice parameter passes here: in a checked launch
//! each is recorded in the launch's shadow of global memory (`cpu/check.rs`), which
//! reports two threads' unordered accesses to one element.

use crate::cpu::check::{any_checked, global_access, global_region, GlobalAccess};

/// Notes a slice parameter of the launch (`DeviceSliceMut::from_raw_parts`), so that its
/// elements are shadowed in a checked launch.
#[inline(always)]
pub(super) fn adopt<T>(ptr: *mut T, len: usize) {
    if any_checked() {
        global_region(ptr as usize, len, core::mem::size_of::<T>());
    }
}

/// `&mut *ptr.add(i)`, for the current GPU thread.
///
/// # Safety
///
/// `ptr.add(i)` is a valid, aligned `T` that only this thread accesses while the
/// reference lives.
#[inline(always)]
#[track_caller]
pub(super) unsafe fn element<'a, T>(ptr: *mut T, i: usize) -> &'a mut T {
    // SAFETY: forwarded to the caller.
    let p = unsafe { ptr.add(i) };
    if any_checked() {
        global_access(p as usize, GlobalAccess::Write);
    }
    // SAFETY: forwarded to the caller.
    unsafe { &mut *p }
}

/// `ptr.add(i)` and `ptr.add(i + 1)` written with `v`, each as [`write`] (the GPU
/// stores an aligned pair at once).
///
/// # Safety
///
/// As [`write`], for both elements.
#[inline(always)]
#[track_caller]
pub(super) unsafe fn write_pair<T: Copy>(ptr: *mut T, i: usize, v: [T; 2]) {
    // SAFETY: forwarded to the caller.
    unsafe {
        write(ptr, i, v[0]);
        write(ptr, i + 1, v[1]);
    }
}

/// `ptr.add(i).write(v)`, for the current GPU thread.
///
/// # Safety
///
/// `ptr.add(i)` is valid for a write of a `T` and aligned; no other thread
/// accesses it unordered.
#[inline(always)]
#[track_caller]
pub(super) unsafe fn write<T>(ptr: *mut T, i: usize, v: T) {
    // SAFETY: forwarded to the caller.
    let p = unsafe { ptr.add(i) };
    if any_checked() {
        global_access(p as usize, GlobalAccess::Write);
    }
    // SAFETY: forwarded to the caller.
    unsafe { p.write(v) }
}

/// `__check_block`'s failure: a panic naming the declared block and the launched one (the CPU
/// backend reports a GPU thread's panic with the thread and its location).
#[cold]
#[track_caller]
pub(super) fn wrong_block(x: u32, y: u32, z: u32) -> ! {
    use crate::thread::{block_dim_x, block_dim_y, block_dim_z};
    let (bx, by, bz) = (block_dim_x(), block_dim_y(), block_dim_z());
    panic!(
        "a #[kernel(block = ({x}, {y}, {z}))] kernel launched with block ({bx}, {by}, {bz}): launch it with \
         block ({x}, {y}, {z})"
    )
}
