//! `sync` on the GPU: `barrier.sync`, `barrier.red`, `barrier.arrive` and `fence`, all in
//! PTX's non-`.aligned` forms (defined when reached in divergent code), each block-wide
//! form on its own barrier ([`crate::spec::sync`]).

use crate::spec::scope::MemoryScope;
use crate::spec::sync::{AND, BLOCK, COUNT, OR};
use core::arch::asm;

/// `barrier.sync 0` (`__syncthreads()`, which is `bar.sync 0`, the `.aligned` form).
#[inline(always)]
pub(super) fn sync_threads() {
    // SAFETY: `barrier.sync` (the non-`.aligned` form) is defined when reached in divergent
    // code (it waits for every non-exited thread of the block), so it has no precondition.
    // Not `nomem`: it orders memory like `__syncthreads()`.
    unsafe { asm!("barrier.sync {id};", id = const BLOCK, options(nostack)) }
}

/// `barrier.red.popc.u32` on its own barrier.
#[inline(always)]
pub(super) fn sync_threads_count(predicate: bool) -> u32 {
    let n: u32;
    // SAFETY: a block barrier with a population count, the non-`.aligned` form (defined
    // in divergent code), on a barrier no other form uses (mixing `.red` with `.sync` on
    // one barrier is unpredictable in PTX); no memory is accessed through operands. Not
    // `nomem`: it orders memory like `barrier.sync`.
    unsafe {
        asm!(
            "{{ .reg .pred p; setp.ne.u32 p, {v}, 0; barrier.red.popc.u32 {n}, {id}, p; }}",
            v = in(reg32) predicate as u32,
            n = out(reg32) n,
            id = const COUNT,
            options(nostack),
        );
    }
    n
}

/// `barrier.red.and.pred` on its own barrier.
#[inline(always)]
pub(super) fn sync_threads_and(predicate: bool) -> bool {
    let r: u32;
    // SAFETY: as in `sync_threads_count`.
    unsafe {
        asm!(
            "{{ .reg .pred p, q; setp.ne.u32 p, {v}, 0; barrier.red.and.pred q, {id}, p; selp.u32 {r}, 1, 0, q; }}",
            v = in(reg32) predicate as u32,
            r = out(reg32) r,
            id = const AND,
            options(nostack),
        );
    }
    r != 0
}

/// `barrier.red.or.pred` on its own barrier.
#[inline(always)]
pub(super) fn sync_threads_or(predicate: bool) -> bool {
    let r: u32;
    // SAFETY: as in `sync_threads_count`.
    unsafe {
        asm!(
            "{{ .reg .pred p, q; setp.ne.u32 p, {v}, 0; barrier.red.or.pred q, {id}, p; selp.u32 {r}, 1, 0, q; }}",
            v = in(reg32) predicate as u32,
            r = out(reg32) r,
            id = const OR,
            options(nostack),
        );
    }
    r != 0
}

/// `barrier.sync id, n`.
///
/// # Safety
///
/// The barrier contract of [`super::barrier_sync`].
#[inline(always)]
pub(super) unsafe fn barrier_sync(id: u32, threads: u32) {
    // SAFETY: the caller upholds the barrier contract.
    unsafe { asm!("barrier.sync {id}, {n};", id = in(reg32) id, n = in(reg32) threads, options(nostack)) }
}

/// `barrier.arrive id, n`.
///
/// # Safety
///
/// The barrier contract of [`super::barrier_sync`].
#[inline(always)]
pub(super) unsafe fn barrier_arrive(id: u32, threads: u32) {
    // SAFETY: the caller upholds the barrier contract of `barrier_sync`.
    unsafe { asm!("barrier.arrive {id}, {n};", id = in(reg32) id, n = in(reg32) threads, options(nostack)) }
}

/// `fence.sc.{cta,gpu,sys}`.
#[inline(always)]
pub(super) fn fence(scope: MemoryScope) {
    // SAFETY: fences have no operands and no preconditions; not `nomem`,
    // so the compiler does not move memory accesses across them either.
    unsafe {
        match scope {
            MemoryScope::Block => asm!("fence.sc.cta;", options(nostack)),
            MemoryScope::Device => asm!("fence.sc.gpu;", options(nostack)),
            MemoryScope::System => asm!("fence.sc.sys;", options(nostack)),
        }
    }
}

/// `fence.acq_rel.{cta,gpu,sys}`.
#[inline(always)]
pub(super) fn fence_acq_rel(scope: MemoryScope) {
    // SAFETY: as in `fence`.
    unsafe {
        match scope {
            MemoryScope::Block => asm!("fence.acq_rel.cta;", options(nostack)),
            MemoryScope::Device => asm!("fence.acq_rel.gpu;", options(nostack)),
            MemoryScope::System => asm!("fence.acq_rel.sys;", options(nostack)),
        }
    }
}
