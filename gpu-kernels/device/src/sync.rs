//! Barriers and memory fences.
//!
//! | sluice | CUDA C++ | PTX |
//! | --- | --- | --- |
//! | [`sync_threads`] | `__syncthreads()` | `barrier.sync 0` |
//! | [`sync_threads_count`] | `__syncthreads_count(p)` | `barrier.red.popc.u32` |
//! | [`sync_threads_and`] | `__syncthreads_and(p)` | `barrier.red.and.pred` |
//! | [`sync_threads_or`] | `__syncthreads_or(p)` | `barrier.red.or.pred` |
//! | [`barrier_sync`] | `asm("bar.sync id, n;")` | `barrier.sync id, n` (named barrier) |
//! | [`fence`]`(MemoryScope::Block)` | `__threadfence_block()` | `fence.sc.cta` (= `membar.cta`) |
//! | [`fence`]`(MemoryScope::Device)` | `__threadfence()` | `fence.sc.gpu` (= `membar.gl`) |
//! | [`fence`]`(MemoryScope::System)` | `__threadfence_system()` | `fence.sc.sys` (= `membar.sys`) |
//! | [`fence_acq_rel`]`(scope)` | `cuda::atomic_thread_fence(acq_rel, scope)` | `fence.acq_rel.{cta,gpu,sys}` |
//!
//! Warp-level synchronisation (`__syncwarp`) is [`crate::warp::sync_warp`].
//!
//! On the host (the CPU runtime, [`crate::cpu`]) a barrier suspends the thread
//! until every non-exited thread of the block (or the named count) has
//! arrived; a barrier that can never complete is reported as a deadlock, with
//! where each thread waits.
//!
//! # What the kernel author must still do
//!
//! A block barrier must be reached by *every* thread of the block that has not exited, the
//! same number of times. A thread that skips one while the others wait makes the block hang
//! (on the CPU backend: a deadlock report; in `cargo test`'s checking mode: a divergent
//! barrier report naming the threads). That is a liveness bug, not memory unsafety, so the
//! functions are safe: sluice emits PTX's non-`.aligned` forms (`barrier.sync 0`), which are
//! defined in divergent code — a thread that returned early no longer counts, and threads in
//! different branches meet at the same barrier. (CUDA C++'s `__syncthreads()` is
//! `bar.sync 0`, the `.aligned` form, whose use in divergent code is undefined behaviour in
//! PTX. ptxas compiles both to the same `BAR.SYNC` for code where every thread reaches the
//! barrier, as measured on sluice's kernels for sm_90.) Threads with no element to work on
//! (the tail of the last block) should still stay in the kernel until the last barrier and
//! only skip their loads and stores: that is what the checking CPU backend accepts without
//! a report.

//! # Example (device code)
//!
//! ```ignore
//! use sluice_device::sync;
//! // How many threads of the block saw a negative value?
//! let negatives = sync::sync_threads_count(x < 0.0);
//! ```

pub use crate::MemoryScope;

#[cfg(target_arch = "nvptx64")]
mod imp {
    use super::MemoryScope;
    use core::arch::asm;

    /// Waits until every thread of the block reaches this point (`__syncthreads()`),
    /// and makes the shared- and global-memory writes made before it by the
    /// block's threads visible to the block's threads after it.
    ///
    /// Every non-exited thread of the block must call it; see the module docs.
    #[inline(always)]
    pub fn sync_threads() {
        // SAFETY: `barrier.sync 0` (the non-`.aligned` form) is defined when reached in
        // divergent code (it waits for every non-exited thread of the block), so it has
        // no precondition. Not `nomem`: it orders memory like `__syncthreads()`.
        unsafe { asm!("barrier.sync 0;", options(nostack)) }
    }

    /// [`sync_threads`], and returns how many threads of the block passed `true`
    /// (`__syncthreads_count`).
    #[inline(always)]
    pub fn sync_threads_count(predicate: bool) -> u32 {
        let n: u32;
        // SAFETY: a block barrier with a population count, the non-`.aligned` form (defined
        // in divergent code); no memory is accessed through operands. Not `nomem`: it
        // orders memory like `barrier.sync`.
        unsafe {
            asm!(
                "{{ .reg .pred p; setp.ne.u32 p, {v}, 0; barrier.red.popc.u32 {n}, 0, p; }}",
                v = in(reg32) predicate as u32,
                n = out(reg32) n,
                options(nostack),
            );
        }
        n
    }

    /// [`sync_threads`], and returns whether every thread of the block passed
    /// `true` (`__syncthreads_and`).
    #[inline(always)]
    pub fn sync_threads_and(predicate: bool) -> bool {
        let r: u32;
        // SAFETY: as in `sync_threads_count`.
        unsafe {
            asm!(
                "{{ .reg .pred p, q; setp.ne.u32 p, {v}, 0; barrier.red.and.pred q, 0, p; selp.u32 {r}, 1, 0, q; }}",
                v = in(reg32) predicate as u32,
                r = out(reg32) r,
                options(nostack),
            );
        }
        r != 0
    }

    /// [`sync_threads`], and returns whether any thread of the block passed
    /// `true` (`__syncthreads_or`).
    #[inline(always)]
    pub fn sync_threads_or(predicate: bool) -> bool {
        let r: u32;
        // SAFETY: as in `sync_threads_count`.
        unsafe {
            asm!(
                "{{ .reg .pred p, q; setp.ne.u32 p, {v}, 0; barrier.red.or.pred q, 0, p; selp.u32 {r}, 1, 0, q; }}",
                v = in(reg32) predicate as u32,
                r = out(reg32) r,
                options(nostack),
            );
        }
        r != 0
    }

    /// Named barrier `id` (0..16) for `threads` threads (a multiple of 32):
    /// waits until that many threads have arrived at barrier `id`.
    /// Barrier 0 with all the block's threads is [`sync_threads`].
    ///
    /// # Safety
    ///
    /// * `id < 16` and `threads` is a non-zero multiple of 32 no larger than the block;
    /// * exactly `threads` threads (whole warps) use barrier `id` between two of
    ///   its completions, and no other code uses `id` concurrently — a mismatch
    ///   is undefined behaviour in PTX, not just a hang.
    #[inline(always)]
    pub unsafe fn barrier_sync(id: u32, threads: u32) {
        // SAFETY: the caller upholds the barrier contract above.
        unsafe { asm!("barrier.sync {id}, {n};", id = in(reg32) id, n = in(reg32) threads, options(nostack)) }
    }

    /// Arrives at named barrier `id` without waiting (producer side of a
    /// producer/consumer pair with [`barrier_sync`]).
    ///
    /// # Safety
    ///
    /// As [`barrier_sync`].
    #[inline(always)]
    pub unsafe fn barrier_arrive(id: u32, threads: u32) {
        // SAFETY: the caller upholds the barrier contract of `barrier_sync`.
        unsafe { asm!("barrier.arrive {id}, {n};", id = in(reg32) id, n = in(reg32) threads, options(nostack)) }
    }

    /// A sequentially consistent fence at `scope`: CUDA's `__threadfence_block()`
    /// (`Block`), `__threadfence()` (`Device`), `__threadfence_system()` (`System`).
    ///
    /// Memory operations of this thread before the fence are observed by the
    /// threads of `scope` before those after it. A fence orders; it does not wait
    /// for other threads (that is a barrier's job).
    #[inline(always)]
    pub fn fence(scope: MemoryScope) {
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

    /// An acquire-release fence at `scope` (`fence.acq_rel.*`, sm_70+): lighter
    /// than [`fence`], enough for the release/acquire patterns of message
    /// passing through a flag written with a relaxed atomic.
    #[inline(always)]
    pub fn fence_acq_rel(scope: MemoryScope) {
        // SAFETY: as in `fence`.
        unsafe {
            match scope {
                MemoryScope::Block => asm!("fence.acq_rel.cta;", options(nostack)),
                MemoryScope::Device => asm!("fence.acq_rel.gpu;", options(nostack)),
                MemoryScope::System => asm!("fence.acq_rel.sys;", options(nostack)),
            }
        }
    }
}

#[cfg(target_arch = "nvptx64")]
pub use imp::*;

/// The host: the CPU runtime's block barriers ([`crate::cpu`]); fences are
/// `std::sync::atomic::fence`.
#[cfg(not(target_arch = "nvptx64"))]
mod imp {
    use super::MemoryScope;
    use crate::cpu::block::barrier;
    use core::sync::atomic::{fence as host_fence, Ordering};

    /// Waits until every thread of the block reaches this point (`__syncthreads()`),
    /// and makes the shared- and global-memory writes made before it by the
    /// block's threads visible to the block's threads after it.
    ///
    /// Every non-exited thread of the block must call it; see the module docs.
    #[track_caller]
    pub fn sync_threads() {
        barrier("sync::sync_threads", 0, 0, false, true);
    }

    /// [`sync_threads`], and returns how many threads of the block passed `true`
    /// (`__syncthreads_count`).
    #[track_caller]
    pub fn sync_threads_count(predicate: bool) -> u32 {
        barrier("sync::sync_threads_count", 0, 0, predicate, true).0
    }

    /// [`sync_threads`], and returns whether every thread of the block passed
    /// `true` (`__syncthreads_and`).
    #[track_caller]
    pub fn sync_threads_and(predicate: bool) -> bool {
        barrier("sync::sync_threads_and", 0, 0, predicate, true).1
    }

    /// [`sync_threads`], and returns whether any thread of the block passed
    /// `true` (`__syncthreads_or`).
    #[track_caller]
    pub fn sync_threads_or(predicate: bool) -> bool {
        barrier("sync::sync_threads_or", 0, 0, predicate, true).2
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
    /// * exactly `threads` threads (whole warps) use barrier `id` between two of
    ///   its completions, and no other code uses `id` concurrently — a mismatch
    ///   is undefined behaviour in PTX, not just a hang.
    #[track_caller]
    pub unsafe fn barrier_sync(id: u32, threads: u32) {
        barrier("sync::barrier_sync", id, threads.max(1), false, true);
    }

    /// Arrives at named barrier `id` without waiting (producer side of a
    /// producer/consumer pair with [`barrier_sync`]).
    ///
    /// # Safety
    ///
    /// As [`barrier_sync`].
    #[track_caller]
    pub unsafe fn barrier_arrive(id: u32, threads: u32) {
        barrier("sync::barrier_arrive", id, threads.max(1), false, false);
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
        let _ = scope;
        host_fence(Ordering::SeqCst);
    }

    /// An acquire-release fence at `scope` (`fence.acq_rel.*`, sm_70+): lighter
    /// than [`fence`], enough for the release/acquire patterns of message
    /// passing through a flag written with a relaxed atomic. On the CPU, an
    /// `AcqRel` fence.
    #[inline(always)]
    pub fn fence_acq_rel(scope: MemoryScope) {
        let _ = scope;
        host_fence(Ordering::AcqRel);
    }
}

#[cfg(not(target_arch = "nvptx64"))]
pub use imp::*;
