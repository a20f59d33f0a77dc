//! `sync` on the GPU: `bar.sync`, `bar.red`, `bar.arrive` and `fence`.

use crate::spec::scope::MemoryScope;
use core::arch::asm;

/// `bar.sync 0` (`__syncthreads()`).
#[inline(always)]
pub(super) fn sync_threads() {
    // SAFETY: `bar.sync 0` has no memory-safety preconditions; reaching it
    // from all threads is the liveness rule documented in the module docs.
    unsafe { core::arch::nvptx::_syncthreads() }
}

/// `bar.red.popc.u32`.
#[inline(always)]
pub(super) fn sync_threads_count(predicate: bool) -> u32 {
    let n: u32;
    // SAFETY: a block barrier with a population count; no memory is accessed
    // through operands. Not `nomem`: it orders memory like `bar.sync`.
    unsafe {
        asm!(
            "{{ .reg .pred p; setp.ne.u32 p, {v}, 0; bar.red.popc.u32 {n}, 0, p; }}",
            v = in(reg32) predicate as u32,
            n = out(reg32) n,
            options(nostack),
        );
    }
    n
}

/// `bar.red.and.pred`.
#[inline(always)]
pub(super) fn sync_threads_and(predicate: bool) -> bool {
    let r: u32;
    // SAFETY: as in `sync_threads_count`.
    unsafe {
        asm!(
            "{{ .reg .pred p, q; setp.ne.u32 p, {v}, 0; bar.red.and.pred q, 0, p; selp.u32 {r}, 1, 0, q; }}",
            v = in(reg32) predicate as u32,
            r = out(reg32) r,
            options(nostack),
        );
    }
    r != 0
}

/// `bar.red.or.pred`.
#[inline(always)]
pub(super) fn sync_threads_or(predicate: bool) -> bool {
    let r: u32;
    // SAFETY: as in `sync_threads_count`.
    unsafe {
        asm!(
            "{{ .reg .pred p, q; setp.ne.u32 p, {v}, 0; bar.red.or.pred q, 0, p; selp.u32 {r}, 1, 0, q; }}",
            v = in(reg32) predicate as u32,
            r = out(reg32) r,
            options(nostack),
        );
    }
    r != 0
}

/// `bar.sync id, n`.
///
/// # Safety
///
/// The barrier contract of [`super::barrier_sync`].
#[inline(always)]
pub(super) unsafe fn barrier_sync(id: u32, threads: u32) {
    // SAFETY: the caller upholds the barrier contract.
    unsafe { asm!("bar.sync {id}, {n};", id = in(reg32) id, n = in(reg32) threads, options(nostack)) }
}

/// `bar.arrive id, n`.
///
/// # Safety
///
/// The barrier contract of [`super::barrier_sync`].
#[inline(always)]
pub(super) unsafe fn barrier_arrive(id: u32, threads: u32) {
    // SAFETY: the caller upholds the barrier contract of `barrier_sync`.
    unsafe { asm!("bar.arrive {id}, {n};", id = in(reg32) id, n = in(reg32) threads, options(nostack)) }
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
