//! Barriers and memory fences.
//!
//! | sluice | CUDA C++ | PTX |
//! | --- | --- | --- |
//! | [`sync_threads`] | `__syncthreads()` | `barrier.sync 0` |
//! | [`sync_threads_count`] | `__syncthreads_count(p)` | `barrier.red.popc.u32` on barrier 1 |
//! | [`sync_threads_and`] | `__syncthreads_and(p)` | `barrier.red.and.pred` on barrier 2 |
//! | [`sync_threads_or`] | `__syncthreads_or(p)` | `barrier.red.or.pred` on barrier 3 |
//! | [`barrier_sync`] | `asm("bar.sync id, n;")` | `barrier.sync id, n` (named barrier) |
//! | [`fence`]`(MemoryScope::Block)` | `__threadfence_block()` | `fence.sc.cta` (= `membar.cta`) |
//! | [`fence`]`(MemoryScope::Device)` | `__threadfence()` | `fence.sc.gpu` (= `membar.gl`) |
//! | [`fence`]`(MemoryScope::System)` | `__threadfence_system()` | `fence.sc.sys` (= `membar.sys`) |
//! | [`fence_acq_rel`]`(scope)` | `cuda::atomic_thread_fence(acq_rel, scope)` | `fence.acq_rel.{cta,gpu,sys}` |
//!
//! Warp-level synchronisation (`__syncwarp`) is [`crate::warp::sync_warp`].
//!
//! # Hardware support
//!
//! Every architecture; `fence.acq_rel` and the `.sc` fences need sm_70+ (every
//! architecture sluice builds for).
//!
//! # On the CPU
//!
//! A barrier suspends the thread until every non-exited thread of the block (or
//! the named count) has arrived (`cpu.rs`, over the CPU runtime's rendezvous,
//! [`crate::cpu`]); a barrier that can never complete is reported as a deadlock,
//! with where each thread waits. Named barriers count threads one by one, not by
//! warps. Fences are `std::sync::atomic::fence` (`SeqCst`, `AcqRel`): the CPU's
//! threads of a block are sequentially consistent anyway. `sync_threads` and its
//! reductions are each a barrier of their own, as on the GPU, so threads that meet
//! at two different forms never complete together.
//!
//! In a checked launch ([`crate::cpu`]'s checking mode) each block barrier begins a
//! new interval of the block (accesses of different intervals are ordered), and a
//! named barrier orders the accesses its threads made before arriving before those
//! its waiters make after it. A block barrier that a thread returned before (an early
//! `return` above it), that threads reach from different call sites, or that some
//! threads wait at while others wait elsewhere is reported as divergent. The checker
//! cannot see an order a kernel gets from a fence and a flag without a barrier: such
//! code is reported as racing.
//!
//! # What the kernel author must still do
//!
//! A block barrier must be reached by *every* thread of the block that has not exited, the
//! same number of times. A thread that skips one while the others wait makes the block hang
//! (on the CPU backend: a deadlock report; in `cargo test`'s checking mode: a divergent
//! barrier report naming the threads). That is a liveness bug, not memory unsafety, so the
//! functions are safe: sluice emits PTX's non-`.aligned` forms (`barrier.sync 0`), which are
//! defined in divergent code — a thread that returned early no longer counts, and threads in
//! different branches meet at the same barrier — and gives each reduction
//! (`sync_threads_count`/`_and`/`_or`) a barrier of its own (PTX leaves `.red` mixed with
//! `.sync` on one barrier unpredictable; on separate barriers such a mix just hangs).
//! CUDA C++'s `__syncthreads()` is `bar.sync 0`, the `.aligned` form, whose use in divergent
//! code is undefined behaviour in PTX; ptxas compiles both forms to the same `BAR.SYNC` where
//! every thread reaches the barrier, as measured on sluice's kernels for sm_90. Threads with
//! no element to work on (the tail of the last block) should still stay in the kernel until
//! the last barrier and only skip their loads and stores: that is what the checking CPU
//! backend accepts without a report. Named barriers ([`barrier_sync`]) keep off barriers
//! 0–3 ([`crate::spec::sync::RESERVED`]).

//! # Example (device code)
//!
//! ```ignore
//! use sluice_device::sync;
//! // How many threads of the block saw a negative value?
//! let negatives = sync::sync_threads_count(x < 0.0);
//! ```

pub use crate::spec::scope::MemoryScope;

// The backend, chosen once: `bar`/`fence` instructions on the GPU, the CPU
// runtime's rendezvous on the host.
#[cfg_attr(target_arch = "nvptx64", path = "gpu.rs")]
#[cfg_attr(not(target_arch = "nvptx64"), path = "cpu.rs")]
mod imp;

/// Waits until every thread of the block reaches this point (`__syncthreads()`),
/// and makes the shared- and global-memory writes made before it by the
/// block's threads visible to the block's threads after it.
///
/// Every non-exited thread of the block must call it; see the module docs.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub fn sync_threads() {
    imp::sync_threads()
}

/// [`sync_threads`], and returns how many threads of the block passed `true`
/// (`__syncthreads_count`).
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub fn sync_threads_count(predicate: bool) -> u32 {
    imp::sync_threads_count(predicate)
}

/// [`sync_threads`], and returns whether every thread of the block passed
/// `true` (`__syncthreads_and`).
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub fn sync_threads_and(predicate: bool) -> bool {
    imp::sync_threads_and(predicate)
}

/// [`sync_threads`], and returns whether any thread of the block passed
/// `true` (`__syncthreads_or`).
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub fn sync_threads_or(predicate: bool) -> bool {
    imp::sync_threads_or(predicate)
}

/// Named barrier `id` (0..16) for `threads` threads (a multiple of 32):
/// waits until that many threads have arrived at barrier `id`.
/// Barrier 0 with all the block's threads is [`sync_threads`].
///
/// On the CPU threads are counted one by one (not by warps), and a
/// barrier that can never be completed is reported as a deadlock.
///
/// # Safety
///
/// * `id < 16` and `threads` is a non-zero multiple of 32 no larger than the block;
/// * `id` is not one of the barriers `sync_threads` and its reductions use (0–3,
///   [`crate::spec::sync::RESERVED`]) while they may be in use;
/// * exactly `threads` threads (whole warps) use barrier `id` between two of
///   its completions, and no other code uses `id` concurrently — a mismatch
///   is undefined behaviour in PTX, not just a hang.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn barrier_sync(id: u32, threads: u32) {
    // SAFETY: the caller upholds the barrier contract above.
    unsafe { imp::barrier_sync(id, threads) }
}

/// Arrives at named barrier `id` without waiting (producer side of a
/// producer/consumer pair with [`barrier_sync`]).
///
/// # Safety
///
/// As [`barrier_sync`].
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn barrier_arrive(id: u32, threads: u32) {
    // SAFETY: the caller upholds the barrier contract of `barrier_sync`.
    unsafe { imp::barrier_arrive(id, threads) }
}

/// A sequentially consistent fence at `scope`: CUDA's `__threadfence_block()`
/// (`Block`), `__threadfence()` (`Device`), `__threadfence_system()` (`System`).
///
/// Memory operations of this thread before the fence are observed by the
/// threads of `scope` before those after it. A fence orders; it does not wait
/// for other threads (that is a barrier's job). On the CPU every scope is a
/// `SeqCst` fence.
#[inline(always)]
pub fn fence(scope: MemoryScope) {
    imp::fence(scope)
}

/// An acquire-release fence at `scope` (`fence.acq_rel.*`, sm_70+): lighter
/// than [`fence`], enough for the release/acquire patterns of message
/// passing through a flag written with a relaxed atomic. On the CPU, an
/// `AcqRel` fence.
#[inline(always)]
pub fn fence_acq_rel(scope: MemoryScope) {
    imp::fence_acq_rel(scope)
}
