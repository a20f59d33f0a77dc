//! `sync` on the CPU: the block's 16 barriers as a rendezvous of the CPU
//! runtime's threads ([`crate::cpu`]); fences are `std::sync::atomic::fence`.
//!
//! A thread arriving at barrier `id` counts itself and its predicate; the one
//! whose arrival completes the barrier (every non-exited thread of the block, or
//! the named count) gives every waiter the reductions, releases them and goes on.
//! A barrier that counts non-exited threads is also completed by the exit of the
//! last thread it waited for ([`Rendezvous::release_after_exits`]).
//!
//! `sync_threads` and its reductions (`sync_threads_count`, `_and`, `_or`) are each a
//! barrier of their own here, as on the GPU, where the reductions use barrier ids of
//! their own: threads that meet at different forms (one branch at `sync_threads`, the
//! other at `sync_threads_count`) never complete together — a deadlock, or in a checked
//! launch a divergent barrier.
//!
//! In a checked launch ([`crate::cpu`]'s checking mode) a block barrier is where the
//! block's next interval begins (`cpu/check.rs`'s clocks), and it is reported as
//! divergent when a thread returned from the kernel before it, or threads reach it
//! from different call sites; a named barrier hands what each arriving thread knows to
//! the threads that wait there.

use core::cell::{Cell, RefCell};
use core::sync::atomic::{fence as host_fence, Ordering};
use std::format;
use std::panic::Location;
use std::string::{String, ToString};
use std::vec::Vec;

use std::boxed::Box;

use sluice_host::{CheckKind, CheckReport};

use crate::cpu::block::{current, suspend, Block, Launch, Local, LocalKey, Rendezvous, Wait};
use crate::cpu::check;
use crate::spec::scope::MemoryScope;
use crate::spec::sync::{AND, BARRIERS, BLOCK, COUNT, OR};

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

/// The block's barriers, as in PTX (`barrier.sync 0..15`).
const SLOTS: usize = BARRIERS as usize;

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
    /// Where the first thread arrived (for the deadlock report), and which it was.
    site: Cell<Option<&'static Location<'static>>>,
    first: Cell<u32>,
}

/// A block's barriers, and what each thread got from the last one it passed.
struct Barriers {
    bars: [Barrier; SLOTS],
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

    /// Completes barrier `b` (slot `slot`): every waiter gets the reductions and, except
    /// `current` (the thread completing it, which goes on), is released. In a checked
    /// launch, first the checks of a completion (a block barrier that a thread returned
    /// before) and the clocks: on a report it releases nobody (the block is abandoned).
    fn release(&self, block: &Block, slot: u32, b: &Barrier, current: Option<u32>) -> u64 {
        if block.checker().is_some() && !self.check_release(block, slot, b) {
            return 0;
        }
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

    fn describe(&self, block: &Block, _rank: u32, slot: u32) -> String {
        let b = &STATE.get(block).bars[slot as usize];
        let want = if b.expected.get() == 0 {
            format!("{} non-exited threads", block.live())
        } else {
            format!("{} threads", b.expected.get())
        };
        format!("{} ({} of {want} arrived)", barrier_name(slot, b.expected.get()), b.arrived.get())
    }

    fn label(&self, block: &Block, _rank: u32, slot: u32) -> String {
        format!("at {}", barrier_name(slot, STATE.get(block).bars[slot as usize].expected.get()))
    }

    fn release_after_exits(&self, block: &Block) -> bool {
        let state = STATE.get(block);
        let mut progressed = false;
        for (slot, b) in state.bars.iter().enumerate() {
            if b.arrived.get() > 0 && b.expected.get() == 0 && state.complete(block, b) {
                state.release(block, slot as u32, b, None);
                progressed = true;
            }
        }
        progressed
    }

    /// A barrier some of whose threads never come: they wait elsewhere (another barrier,
    /// another form of barrier 0, a warp collective).
    fn diagnose(&self, block: &Block) -> Option<Box<CheckReport>> {
        let state = STATE.get(block);
        let (slot, b) = state.bars.iter().enumerate().find(|(_, b)| b.arrived.get() > 0)?;
        let slot = slot as u32;
        let waiter = check::access(
            block,
            b.first.get(),
            b.site.get(),
            format!("waits at {}", barrier_name(slot, b.expected.get())),
        );
        let here = |t: &crate::cpu::block::ThreadCtx| t.state.get().parked_in(&BARRIER) == Some(slot);
        let missing = block.threads.iter().find(|t| !here(t) && !matches!(t.state.get(), Wait::Exited));
        let location = format!(
            "{} ({} of {} threads arrived)",
            barrier_name(slot, b.expected.get()),
            b.arrived.get(),
            match b.expected.get() {
                0 => block.live(),
                n => n,
            }
        );
        let second = missing.map(|t| {
            let what = match t.state.get() {
                Wait::Parked(at, tag) => format!("never arrives: it waits {}", at.label(block, t.rank, tag)),
                _ => "never arrives".to_string(),
            };
            check::access(block, t.rank, t.site.get(), what)
        });
        Some(check::report(block, CheckKind::DivergentBarrier, location, waiter, second))
    }
}

/// `barrier 3`, `barrier 0`, or for the reductions (barrier `id` used for every thread)
/// `barrier 1 (sync_threads_count)`.
fn barrier_name(id: u32, expected: u32) -> String {
    let form = match (id, expected) {
        (COUNT, 0) => " (sync_threads_count)",
        (AND, 0) => " (sync_threads_and)",
        (OR, 0) => " (sync_threads_or)",
        _ => "",
    };
    format!("barrier {id}{form}")
}

impl Barriers {
    /// The checks of a completion in a checked launch, and the clocks; `false` if it
    /// reported (and so failed the block).
    fn check_release(&self, block: &Block, slot: u32, b: &Barrier) -> bool {
        let clocks = check::clocks(block);
        if b.expected.get() != 0 {
            let waiters = b.waiters.borrow();
            clocks.named_release(slot, &waiters);
            return true;
        }
        // Every non-exited thread is here: one that has exited returned before this
        // barrier (an early `return` above it).
        if block.live() < block.size {
            if let Some(gone) = block.threads.iter().find(|t| matches!(t.state.get(), Wait::Exited)) {
                let waiter = check::access(
                    block,
                    b.first.get(),
                    b.site.get(),
                    format!("waits at {}", barrier_name(slot, b.expected.get())),
                );
                let last = clocks.last_site(gone.rank);
                let what = if last.is_some() {
                    "returned from the kernel before reaching it, after its last operation the checker saw"
                } else {
                    "returned from the kernel before reaching it"
                };
                let location = format!(
                    "{}, the block's barrier number {}",
                    barrier_name(slot, b.expected.get()),
                    clocks.barriers() + 1
                );
                let gone = check::access(block, gone.rank, last, what.into());
                check::fail(block, check::report(block, CheckKind::DivergentBarrier, location, waiter, Some(gone)));
                return false;
            }
        }
        // The interval is over: what the checker held until its end (a read of shared
        // memory never written, which no write of the interval turned into a race).
        if let Some(report) = clocks.take_deferred() {
            check::fail(block, report);
            return false;
        }
        clocks.block_barrier();
        true
    }
}

/// Arrives at block barrier slot `slot` (a named barrier's id, or a reduction's slot).
/// `expected`: the thread count of a named barrier, 0 for every non-exited thread
/// (`bar.sync id` without a count). `wait`: `bar.sync`/`bar.red` (true) or `bar.arrive`
/// (false). Returns `(popc, and, or)` of the predicates of the threads that arrived.
#[track_caller]
fn barrier(what: &'static str, slot: u32, expected: u32, pred: bool, wait: bool) -> (u32, bool, bool) {
    let site = Location::caller();
    let ctx = current(what);
    let block = ctx.block();
    if slot >= BARRIERS {
        panic!("{what}: barrier id {slot} out of range (0..16)");
    }
    let id = slot;
    if expected != 0 && expected > block.size {
        panic!("{what}: barrier {id} for {expected} threads in a block of {} (PTX leaves this undefined)", block.size);
    }
    let state = STATE.get(block);
    let b = &state.bars[slot as usize];
    let checked = block.checker().is_some();
    if b.arrived.get() == 0 {
        b.expected.set(expected);
        b.all.set(true);
        b.any.set(false);
        b.popc.set(0);
        b.site.set(Some(site));
        b.first.set(ctx.rank);
    } else if b.expected.get() != expected {
        let count = |e: u32| if e == 0 { "all threads".to_string() } else { format!("{e} threads") };
        if checked {
            let first = check::access(
                block,
                b.first.get(),
                b.site.get(),
                format!("waits at barrier {id} for {}", count(b.expected.get())),
            );
            let second = check::access(block, ctx.rank, Some(site), format!("arrives for {}", count(expected)));
            let location = format!("barrier {id}, used with two thread counts (PTX leaves this undefined)");
            check::fail(block, check::report(block, CheckKind::DivergentBarrier, location, first, Some(second)));
        }
        panic!(
            "{what}: barrier {id} used for {} here and for {} by threads already waiting at {} (PTX leaves this undefined)",
            count(expected),
            count(b.expected.get()),
            b.site.get().map_or_else(|| "?".to_string(), |l| l.to_string())
        );
    } else if checked && expected == 0 && b.site.get() != Some(site) {
        // One barrier instance reached from two call sites: the threads took different
        // paths to it (divergent control flow, which CUDA's rules forbid).
        let name = barrier_name(slot, b.expected.get());
        let first = check::access(block, b.first.get(), b.site.get(), format!("waits at {name}"));
        let second = check::access(block, ctx.rank, Some(site), format!("reaches the same {name} from another call"));
        let location = format!("{name}, the block's barrier number {}", check::clocks(block).barriers() + 1);
        check::fail(block, check::report(block, CheckKind::DivergentBarrier, location, first, Some(second)));
    }
    if checked {
        let clocks = check::clocks(block);
        clocks.saw(ctx.rank, site);
        if expected != 0 {
            clocks.named_arrive(id, ctx.rank);
        }
    }
    b.arrived.set(b.arrived.get() + 1);
    b.popc.set(b.popc.get() + pred as u32);
    b.all.set(b.all.get() && pred);
    b.any.set(b.any.get() || pred);
    if wait {
        b.waiters.borrow_mut().push(ctx.rank);
    }
    let out = if state.complete(block, b) {
        state.release(block, slot, b, Some(ctx.rank))
    } else if wait {
        suspend(ctx, Wait::Parked(&BARRIER, slot), site);
        state.out[ctx.rank as usize].get()
    } else {
        0
    };
    (out as u32, out >> 32 & 1 != 0, out >> 33 & 1 != 0)
}
