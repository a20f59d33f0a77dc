//! `shared` on the CPU: the block's shared memory is one buffer ([`arena`]), the
//! family's per-block state in the CPU runtime ([`crate::cpu`]); window
//! addresses are offsets into it, the same for every thread of the block, and
//! every access is checked against what the block has allocated (a panic, not a
//! wild access).

use super::SharedStatic;
use crate::cpu::block::{current, LocalKey};
use crate::spec::shared::array_align;
use core::mem::size_of;

#[path = "arena.rs"]
mod arena;

use arena::Arena;

/// Each block's arena.
static ARENA: LocalKey<Arena> = LocalKey::new();

/// The current GPU thread's block's arena.
#[inline(always)]
#[track_caller]
fn arena(what: &'static str) -> &'static Arena {
    ARENA.get(current(what).block())
}

/// Loads a `T` from shared address `addr` (checked against the block's
/// shared memory: a panic, not a wild read, outside it).
///
/// # Safety
/// The bytes there form a valid `T`.
#[inline(always)]
#[track_caller]
pub(super) unsafe fn load<T: Copy>(addr: u32, _align: usize) -> T {
    let p = arena("shared memory access").checked(addr, size_of::<T>());
    // SAFETY: `checked` proved the bytes inside the block's allocated shared
    // memory; any bits form a valid `T` (caller); only this block's OS
    // thread accesses it.
    unsafe { (p as *const T).read_unaligned() }
}

/// Stores `v` at shared address `addr` (checked as [`load`]).
///
/// # Safety
/// `T` has no padding bytes.
#[inline(always)]
#[track_caller]
pub(super) unsafe fn store<T: Copy>(addr: u32, _align: usize, v: T) {
    let p = arena("shared memory access").checked(addr, size_of::<T>());
    // SAFETY: as in `load`.
    unsafe { (p as *mut T).write_unaligned(v) }
}

/// The host address of shared address `addr`.
#[inline(always)]
#[track_caller]
pub(super) fn generic<T>(addr: u32) -> *mut T {
    arena("shared memory access").generic(addr) as *mut T
}

/// The dynamic region: at window address 0, as many bytes as the launch asked for.
#[inline(always)]
#[track_caller]
pub(super) fn dynamic_region() -> (u32, u32) {
    (0, arena("shared::dynamic_shared").dynamic_bytes())
}

/// Bytes of dynamic shared memory this launch was given.
#[inline(always)]
#[track_caller]
pub(super) fn dynamic_shared_bytes() -> u32 {
    arena("shared::dynamic_shared_bytes").dynamic_bytes()
}

/// Bytes of shared memory per block of this launch, static and dynamic.
/// On the CPU: the dynamic size plus the static variables this block has
/// used so far (they are allocated at their first use).
#[inline(always)]
#[track_caller]
pub(super) fn total_shared_bytes() -> u32 {
    arena("shared::total_shared_bytes").total_bytes()
}

/// A generic `*mut T` to the start of this launch's dynamic shared memory
/// (CUDA's `extern __shared__ T buf[]`; 16-aligned; as many bytes as the
/// launch asked for, see [`dynamic_shared_bytes`]).
#[inline(always)]
#[track_caller]
pub(super) fn dynamic_shared_ptr<T>() -> *mut T {
    generic(0)
}

/// The block's copy of the variable declared at `H` (`bytes` of `T`,
/// aligned as on the device), allocated on its first use in the block.
#[inline(always)]
#[track_caller]
pub(super) fn declare<T, const H: u64>() -> u32 {
    arena("shared_array!/shared_static!").declare(H, core::any::type_name::<T>(), size_of::<T>(), array_align::<T>())
}

/// Allocates an in-kernel [`SharedStatic`] for this block (the device
/// declares it in the kernel's prologue; the host allocates at first use,
/// so this only does that use early).
///
/// # Safety
///
/// None on the host; the device's contract is the kernel attribute's.
#[inline(always)]
#[track_caller]
pub(super) unsafe fn declare_in_kernel<T, const H: u64>(_static: *const SharedStatic<T, H, true>) {
    declare::<T, H>();
}

/// Either form of static is allocated at its first use in the block.
#[inline(always)]
#[track_caller]
pub(super) fn static_addr<T, const H: u64, const IN_KERNEL: bool>() -> u32 {
    declare::<T, H>()
}

#[cold]
pub(super) fn split_at_out_of_bounds() -> ! {
    panic!("SharedSlice::split_at out of bounds")
}

/// The host address of `len` bytes at shared-window address `addr` of the current
/// block (for the atomics' CPU side).
///
/// # Panics
///
/// Outside a launch, or if the bytes are not all inside the block's allocated
/// shared memory (on a GPU such an access reads or writes another variable, or faults).
#[inline(always)]
#[track_caller]
pub(crate) fn checked(what: &'static str, addr: u32, len: usize) -> *mut u8 {
    arena(what).checked(addr, len)
}
