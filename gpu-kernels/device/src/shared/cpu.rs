//! `shared` on the CPU: the block's shared memory is one buffer ([`arena`]), the
//! family's per-block state in the CPU runtime ([`crate::cpu`]); window
//! addresses are offsets into it, the same for every thread of the block, and
//! every access is checked against what the block has allocated (a panic, not a
//! wild access). In a checked launch every access also passes the shadow
//! ([`check`]): the checking mode's record of who touched which byte when.

use super::SharedStatic;
use crate::cpu::block::{current, LocalKey, ThreadCtx};
use crate::spec::shared::array_align;
use core::mem::size_of;
use std::panic::Location;

#[path = "arena.rs"]
mod arena;
#[path = "check.rs"]
pub(crate) mod check;

use arena::Arena;
use check::{Kind, Shadow};

/// Each block's arena.
static ARENA: LocalKey<Arena> = LocalKey::new();

/// Each block's shadow (checked launches only).
static SHADOW: LocalKey<Shadow> = LocalKey::new();

/// The checking mode's record of an access to the `len` bytes at window address `addr`
/// of the current thread's block, already bounds-checked.
#[inline(never)]
#[track_caller]
fn shadow(ctx: &ThreadCtx, arena: &Arena, addr: u32, len: usize, kind: Kind) {
    let block = ctx.block();
    let clocks = crate::cpu::check::clocks(block);
    SHADOW.get(block).access(block, arena, clocks, ctx.rank, addr, len, kind, Location::caller());
}

/// The checking mode's record of an atomic access of kind `kind` to the `len` bytes at
/// host address `p`, in a checked launch: in the shadow if `p` is in the current block's
/// shared memory (a generic pointer to it), else in the launch's shadow of global memory
/// (if `p` is an element of a slice parameter). Nothing outside a checked launch.
#[inline(always)]
#[track_caller]
pub(crate) fn atomic_at(p: usize, len: usize, kind: Kind) {
    if !crate::cpu::check::any_checked() || !crate::cpu::block::in_launch() {
        return;
    }
    atomic_at_checked(p, len, kind);
}

#[inline(never)]
#[track_caller]
fn atomic_at_checked(p: usize, len: usize, kind: Kind) {
    let ctx = current("atomic");
    let block = ctx.block();
    if block.checker().is_none() {
        return;
    }
    let arena = ARENA.get(block);
    match arena.window_of(p) {
        Some(addr) => shadow(ctx, arena, addr, len, kind),
        None => crate::cpu::check::global_access(p, crate::cpu::check::GlobalAccess::Atomic),
    }
}

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
    let ctx = current("shared memory access");
    let arena = ARENA.get(ctx.block());
    let p = arena.checked(addr, size_of::<T>());
    if ctx.block().checker().is_some() {
        shadow(ctx, arena, addr, size_of::<T>(), Kind::Read);
    }
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
    let ctx = current("shared memory access");
    let arena = ARENA.get(ctx.block());
    let p = arena.checked(addr, size_of::<T>());
    if ctx.block().checker().is_some() {
        shadow(ctx, arena, addr, size_of::<T>(), Kind::Write);
    }
    // SAFETY: as in `load`.
    unsafe { (p as *mut T).write_unaligned(v) }
}

/// The checking mode's record of a write of the `len` bytes at shared address `addr` that
/// lands later (a `cp.async`, at its issue: on a GPU its bytes may land any time until
/// its wait, where [`store`] records them again). Bounds-checked as [`store`]; writes
/// nothing.
#[inline(always)]
#[track_caller]
pub(crate) fn note_pending_write(addr: u32, len: usize) {
    let ctx = current("shared memory access");
    let arena = ARENA.get(ctx.block());
    arena.checked(addr, len);
    if ctx.block().checker().is_some() {
        shadow(ctx, arena, addr, len, Kind::Write);
    }
}

/// Reserves the 8 bytes at shared address `addr` for `what` (an `mbarrier` of another
/// family) until the block ends: a plain access to them panics from then on, and so does a
/// second reservation of them.
#[track_caller]
pub(crate) fn reserve8(addr: u32, what: &'static str) {
    arena("mbarrier.init").reserve8(addr, what);
}

/// The host address of shared address `addr`. In a checked launch the variable there is
/// noted as reachable by plain Rust accesses the checker cannot see ([`Shadow::escape`]).
#[inline(always)]
#[track_caller]
pub(super) fn generic<T>(addr: u32) -> *mut T {
    let ctx = current("shared memory access");
    let block = ctx.block();
    let arena = ARENA.get(block);
    if block.checker().is_some() {
        escape(block, arena, addr);
    }
    arena.generic(addr) as *mut T
}

#[inline(never)]
fn escape(block: &crate::cpu::block::Block, arena: &Arena, addr: u32) {
    if let Some((start, len)) = arena.escape(addr) {
        SHADOW.get(block).escape(crate::cpu::check::clocks(block), start, len);
    }
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
/// block, for an atomic read-modify-write (the atomics' CPU side), recorded in a checked
/// launch.
///
/// # Panics
///
/// Outside a launch, or if the bytes are not all inside the block's allocated
/// shared memory (on a GPU such an access reads or writes another variable, or faults).
#[inline(always)]
#[track_caller]
pub(crate) fn checked_rmw(what: &'static str, addr: u32, len: usize) -> *mut u8 {
    let ctx = current(what);
    let arena = ARENA.get(ctx.block());
    let p = arena.checked(addr, len);
    if ctx.block().checker().is_some() {
        shadow(ctx, arena, addr, len, Kind::AtomicRmw);
    }
    p
}
