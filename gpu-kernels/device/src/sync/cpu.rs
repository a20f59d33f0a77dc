//! `sync` on the CPU: the block's 16 barriers as a rendezvous of the CPU
//! runtime's threads ([`crate::cpu`]); fences are `std::sync::atomic::fence`.
//!
//! A thread arriving at barrier `id` counts itself and its predicate; the one
//! whose arrival completes the barrier (every non-exited thread of the block, or
//! the named count) gives every waiter the reductions, releases them and goes on.
//! A barrier that counts non-exited threads is also completed by the exit of the
//! last thread it waited for ([`Rendezvous::release_after_exits`]).

use core::cell::{Cell, RefCell};
use core::sync::atomic::{fence as host_fence, Ordering};
use std::format;
use std::panic::Location;
use std::string::{String, ToString};
use std::vec::Vec;

use crate::cpu::block::{current, suspend, Block, Launch, Local, LocalKey, Rendezvous, Wait};
use crate::spec::scope::MemoryScope;
use crate::spec::sync::{AND, BLOCK, COUNT, OR};

// The same barrier ids as the GPU's (`spec::sync`): a kernel that mixes the forms in
// divergent branches waits at two barriers here too, and is reported.
#[track_caller]
pub(super) fn sync_threads() {
    barrier("sync::sync_threads", BLOCK, 0, false, true);
}

#[track_caller]
pub(super) fn sync_threads_count(predicate: bool) -> u32 {
    barrier("sync::sync_threads_count", COUNT, 0, predicate, true).0
}

#[track_caller]
pub(super) fn sync_threads_and(predicate: bool) -> bool {
    barrier("sync::sync_threads_and", AND, 0, predicate, true).1
}

#[track_caller]
pub(super) fn sync_threads_or(predicate: bool) -> bool {
    barrier("sync::sync_threads_or", OR, 0, predicate, true).2
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

/// Named barriers per block, as in PTX (`bar.sync 0..15`).
const BARRIERS: usize = 16;

/// A block barrier (`bar.sync id`): arrivals, reductions, and who waits.
#[derive(Default)]
struct Barrier {
    arrived: Cell<u32>,
    /// Threads it waits for; 0: every non-exited thread of the block.
    expected: Cell<u32>,
    popc: Cell<u32>,
    all: Cell<bool>,
    any: Cell<bool>,
    waiters: RefCell<Vec<u32>>,
    /// Where the first thread arrived (for the deadlock report).
    site: Cell<Option<&'static Location<'static>>>,
}

/// A block's barriers, and what each thread got from the last one it passed.
struct Barriers {
    bars: [Barrier; BARRIERS],
    /// Per thread: `popc | all << 32 | any << 33` of the barrier that released it.
    out: Vec<Cell<u64>>,
}

impl Local for Barriers {
    fn new(launch: &Launch) -> Barriers {
        Barriers { bars: Default::default(), out: (0..launch.block.volume()).map(|_| Cell::new(0)).collect() }
    }

    fn reset(&mut self) {
        for bar in &mut self.bars {
            bar.arrived.set(0);
            bar.expected.set(0);
            bar.waiters.get_mut().clear();
        }
    }
}

static STATE: LocalKey<Barriers> = LocalKey::new();

impl Barriers {
    fn complete(&self, block: &Block, b: &Barrier) -> bool {
        let n = b.arrived.get();
        n > 0 && if b.expected.get() == 0 { n >= block.live() } else { n >= b.expected.get() }
    }

    /// Completes barrier `b`: every waiter gets the reductions and, except
    /// `current` (the thread completing it, which goes on), is released.
    fn release(&self, block: &Block, b: &Barrier, current: Option<u32>) -> u64 {
        let out = b.popc.get() as u64 | (b.all.get() as u64) << 32 | (b.any.get() as u64) << 33;
        for &w in b.waiters.borrow().iter() {
            self.out[w as usize].set(out);
            if Some(w) != current {
                block.make_ready(w);
            }
        }
        b.waiters.borrow_mut().clear();
        b.arrived.set(0);
        b.expected.set(0);
        b.popc.set(0);
        b.all.set(true);
        b.any.set(false);
        b.site.set(None);
        out
    }
}

/// Threads waiting at a barrier (tag: the barrier's id).
struct BarrierWait {
    name: &'static str,
}

static BARRIER: BarrierWait = BarrierWait { name: "barrier" };

impl Rendezvous for BarrierWait {
    fn name(&self) -> &'static str {
        self.name
    }

    fn describe(&self, block: &Block, _rank: u32, id: u32) -> String {
        let b = &STATE.get(block).bars[id as usize];
        let want = if b.expected.get() == 0 {
            format!("{} non-exited threads", block.live())
        } else {
            format!("{} threads", b.expected.get())
        };
        format!("barrier {id} ({} of {want} arrived)", b.arrived.get())
    }

    fn label(&self, _block: &Block, _rank: u32, id: u32) -> String {
        format!("at barrier {id}")
    }

    fn release_after_exits(&self, block: &Block) -> bool {
        let state = STATE.get(block);
        let mut progressed = false;
        for b in &state.bars {
            if b.arrived.get() > 0 && b.expected.get() == 0 && state.complete(block, b) {
                state.release(block, b, None);
                progressed = true;
            }
        }
        progressed
    }
}

/// Arrives at block barrier `id`. `expected`: the thread count of a named
/// barrier, 0 for every non-exited thread (`bar.sync id` without a count).
/// `wait`: `bar.sync`/`bar.red` (true) or `bar.arrive` (false). Returns
/// `(popc, and, or)` of the predicates of the threads that arrived.
#[track_caller]
fn barrier(what: &'static str, id: u32, expected: u32, pred: bool, wait: bool) -> (u32, bool, bool) {
    let site = Location::caller();
    let ctx = current(what);
    let block = ctx.block();
    if id as usize >= BARRIERS {
        panic!("{what}: barrier id {id} out of range (0..16)");
    }
    if expected != 0 && expected > block.size {
        panic!("{what}: barrier {id} for {expected} threads in a block of {} (PTX leaves this undefined)", block.size);
    }
    let state = STATE.get(block);
    let b = &state.bars[id as usize];
    if b.arrived.get() == 0 {
        b.expected.set(expected);
        b.all.set(true);
        b.any.set(false);
        b.popc.set(0);
        b.site.set(Some(site));
    } else if b.expected.get() != expected {
        let count = |e: u32| if e == 0 { "all threads".to_string() } else { format!("{e} threads") };
        panic!(
            "{what}: barrier {id} used for {} here and for {} by threads already waiting at {} (PTX leaves this undefined)",
            count(expected),
            count(b.expected.get()),
            b.site.get().map_or_else(|| "?".to_string(), |l| l.to_string())
        );
    }
    b.arrived.set(b.arrived.get() + 1);
    b.popc.set(b.popc.get() + pred as u32);
    b.all.set(b.all.get() && pred);
    b.any.set(b.any.get() || pred);
    if wait {
        b.waiters.borrow_mut().push(ctx.rank);
    }
    let out = if state.complete(block, b) {
        state.release(block, b, Some(ctx.rank))
    } else if wait {
        suspend(ctx, Wait::Parked(&BARRIER, id), site);
        state.out[ctx.rank as usize].get()
    } else {
        0
    };
    (out as u32, out >> 32 & 1 != 0, out >> 33 & 1 != 0)
}
