//! `sync` on the CPU: block barriers as rendezvous of the CPU runtime's threads
//! ([`crate::cpu`]); fences are `std::sync::atomic::fence`.

use super::MemoryScope;
use crate::cpu::block::barrier;
use core::sync::atomic::{fence as host_fence, Ordering};

#[track_caller]
pub(super) fn sync_threads() {
    barrier("sync::sync_threads", 0, 0, false, true);
}

#[track_caller]
pub(super) fn sync_threads_count(predicate: bool) -> u32 {
    barrier("sync::sync_threads_count", 0, 0, predicate, true).0
}

#[track_caller]
pub(super) fn sync_threads_and(predicate: bool) -> bool {
    barrier("sync::sync_threads_and", 0, 0, predicate, true).1
}

#[track_caller]
pub(super) fn sync_threads_or(predicate: bool) -> bool {
    barrier("sync::sync_threads_or", 0, 0, predicate, true).2
}

/// # Safety
///
/// None on the CPU (a misuse panics or is reported as a deadlock); the device's
/// contract is [`super::barrier_sync`]'s.
#[track_caller]
pub(super) unsafe fn barrier_sync(id: u32, threads: u32) {
    barrier("sync::barrier_sync", id, threads.max(1), false, true);
}

/// # Safety
///
/// As [`barrier_sync`].
#[track_caller]
pub(super) unsafe fn barrier_arrive(id: u32, threads: u32) {
    barrier("sync::barrier_arrive", id, threads.max(1), false, false);
}

/// Every scope: a `SeqCst` fence.
#[inline(always)]
pub(super) fn fence(scope: MemoryScope) {
    let _ = scope;
    host_fence(Ordering::SeqCst);
}

/// Every scope: an `AcqRel` fence.
#[inline(always)]
pub(super) fn fence_acq_rel(scope: MemoryScope) {
    let _ = scope;
    host_fence(Ordering::AcqRel);
}
