//! The runner: one rayon job's blocks, one after another on its OS thread, each
//! block's GPU threads as stackful coroutines (pooled stacks), and the scheduler
//! that runs them: ready threads first, then unstarted ones, then what waits on
//! exits or on the block being stuck ([`Block::resolve`]), then spinning threads;
//! a block where nothing can run is a deadlock. Also the panic hook that turns
//! a GPU thread's panic into the launch's error.
//!
//! # How a block runs
//!
//! A *worker* is a coroutine (a pooled stack) that takes the next GPU thread
//! not yet started, runs the kernel body for it, and when the body returns
//! takes the next one. As long as no thread suspends, one worker runs the
//! whole block as a plain loop: a barrier-free kernel costs one coroutine per
//! block. A thread suspends in an op family's rendezvous (a barrier, a warp
//! collective, `active_mask`) or in `nanosleep`; its worker stays with it (its
//! stack holds the thread's frames) and the scheduler starts another worker for
//! the next thread. The thread that completes a rendezvous (the last to arrive)
//! computes everyone's result, marks the others ready and goes on without
//! switching; the scheduler resumes ready threads in the order they were
//! released.

use core::cell::{Cell, RefCell};
use std::boxed::Box;
use std::collections::VecDeque;
use std::format;
use std::panic::{self, AssertUnwindSafe};
use std::string::{String, ToString};
use std::vec::Vec;

use corosensei::stack::DefaultStack;
use corosensei::{Coroutine, CoroutineResult, Yielder};

use sluice_host::CpuLaunchError;

use super::block::{Abandoned, Block, Launch, Locals, ThreadCtx, Wait, Wake, CURRENT};
use super::check::Checker;
use super::stacks::{self, Reservation};
use crate::spec::thread::{linear_rank, Dim3};

type Worker = Coroutine<Wake, (), (), DefaultStack>;

std::thread_local! {
    /// What the panic hook saw of the last panic in a GPU thread: location and message.
    static LAST_PANIC: RefCell<Option<(String, String)>> = const { RefCell::new(None) };
}

/// The worker coroutines of a runner, in slots reused from block to block.
#[derive(Default)]
struct Workers {
    slots: Vec<Option<Worker>>,
    /// Each slot's stack's lowest address (its guard page), for the overflow message.
    limits: Vec<usize>,
    free: Vec<u32>,
}

impl Workers {
    /// Starts a worker coroutine for `block` in a free slot; returns the slot.
    /// `Err`: no stack for it (the message says why).
    fn spawn(&mut self, block: &Block) -> Result<u32, String> {
        let stack = stacks::take()?;
        let slot = match self.free.pop() {
            Some(s) => s,
            None => {
                self.slots.push(None);
                self.limits.push(0);
                (self.slots.len() - 1) as u32
            }
        };
        self.limits[slot as usize] = corosensei::stack::Stack::limit(&stack).get();
        let block: *const Block = block;
        let body = move |yielder: &Yielder<Wake, ()>, _: Wake| {
            // SAFETY: the runner keeps the block alive and in place, and ends
            // every worker before the block is reset or freed (see below).
            let block = unsafe { &*block };
            worker(block, slot, yielder);
        };
        // SAFETY: `with_stack_unchecked` lifts the `'static` bound. The closure
        // borrows only the block (a raw pointer into the runner's `Box`), and
        // the runner resumes each coroutine until it returns (`schedule`,
        // `teardown`), or drops it, before the block is reset for the next
        // one or freed: `Runner::workers` is declared before `Runner::block`,
        // so it drops first.
        let co = unsafe { Coroutine::with_stack_unchecked(stack, body) };
        self.slots[slot as usize] = Some(co);
        Ok(slot)
    }

    /// Workers alive (started and not returned).
    fn live(&self) -> usize {
        self.slots.len() - self.free.len()
    }

    /// Resumes the worker in `slot`; recycles its stack if it returned.
    fn resume(&mut self, slot: u32, wake: Wake) {
        let co = self.slots[slot as usize].as_mut().expect("sluice cpu runtime: resuming a finished worker");
        let r = {
            #[cfg(unix)]
            let _running = super::overflow::Running::new(self.limits[slot as usize]);
            co.resume(wake)
        };
        CURRENT.with(|c| c.set(core::ptr::null()));
        if let CoroutineResult::Return(()) = r {
            if let Some(co) = self.slots[slot as usize].take() {
                stacks::give(co.into_stack());
            }
            self.free.push(slot);
        }
    }

    fn is_live(&self, slot: u32) -> bool {
        self.slots.get(slot as usize).is_some_and(Option::is_some)
    }
}

/// Runs the blocks a rayon job is given, one after another, reusing the
/// block state, the op families' per-block state and the worker stacks.
pub(crate) struct Runner<'a> {
    // Declared (so dropped) first: a worker still alive here (only after a
    // bug) is unwound while the block it borrows is still there.
    workers: Workers,
    block: Box<Block>,
    /// Stacks reserved for the block now running, beyond its first (see `stacks`).
    reserved: Reservation,
    _body: core::marker::PhantomData<&'a (dyn Fn() + Sync)>,
}

impl<'a> Runner<'a> {
    pub(crate) fn new(
        grid: Dim3,
        dims: Dim3,
        dynamic_shared: u32,
        body: &'a (dyn Fn() + Sync),
        checker: Option<&'a Checker>,
    ) -> Runner<'a> {
        let size = (dims.x * dims.y * dims.z) as usize;
        let body: *const (dyn Fn() + Sync + 'a) = body;
        // SAFETY: only the trait object's lifetime bound changes (same fat
        // pointer layout). `body` lives for 'a; the pointer is used only by
        // this runner's workers, which end before the runner, whose type
        // carries 'a (`_body`).
        let body: *const (dyn Fn() + Sync + 'static) = unsafe { core::mem::transmute(body) };
        Runner {
            workers: Workers::default(),
            reserved: Reservation::default(),
            block: Box::new(Block {
                threads: Vec::with_capacity(size),
                size: size as u32,
                launch: Launch { grid, block: dims, dynamic_shared_bytes: dynamic_shared },
                next: Cell::new(0),
                exited: Cell::new(0),
                ready: RefCell::new(VecDeque::new()),
                yielded: RefCell::new(VecDeque::new()),
                warp_exited: (0..size.div_ceil(32)).map(|_| Cell::new(0)).collect(),
                locals: Locals::new(),
                abort: Cell::new(false),
                error: RefCell::new(None),
                body,
                checker: checker.map_or(core::ptr::null(), |c| c as *const Checker),
            }),
            _body: core::marker::PhantomData,
        }
    }

    /// Runs block number `linear` (x fastest) to its end. `Err` if a thread
    /// panicked or the block deadlocked.
    pub(crate) fn run(&mut self, linear: u64) -> Result<(), CpuLaunchError> {
        let g = self.block.launch.grid;
        let block_idx = Dim3 {
            x: (linear % g.x as u64) as u32,
            y: (linear / g.x as u64 % g.y as u64) as u32,
            z: (linear / (g.x as u64 * g.y as u64)) as u32,
        };
        self.reset(block_idx);
        let saved = CURRENT.with(Cell::get);
        self.schedule();
        self.reserved.release();
        CURRENT.with(|c| c.set(saved));
        if self.block.checker().is_some() {
            // The block's last interval is over: what the checker held until then.
            if let Some(report) = super::check::clocks(&self.block).take_deferred() {
                self.block.fail_check(report);
            }
        }
        match self.block.error.borrow_mut().take() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    fn reset(&mut self, block_idx: Dim3) {
        let b = &mut *self.block;
        let (grid, d) = (b.launch.grid, b.launch.block);
        b.threads.clear();
        for z in 0..d.z {
            for y in 0..d.y {
                for x in 0..d.x {
                    b.threads.push(ThreadCtx {
                        thread_idx: Dim3 { x, y, z },
                        block_idx,
                        block_dim: d,
                        grid_dim: grid,
                        rank: linear_rank(Dim3 { x, y, z }, d),
                        block: Cell::new(core::ptr::null()),
                        yielder: Cell::new(core::ptr::null()),
                        worker: Cell::new(u32::MAX),
                        state: Cell::new(Wait::NotStarted),
                        site: Cell::new(None),
                    });
                }
            }
        }
        b.next.set(0);
        b.exited.set(0);
        for (w, exited) in b.warp_exited.iter().enumerate() {
            // Lanes past the block's end never run: as exited.
            let live = (b.size - 32 * w as u32).min(32);
            exited.set(if live == 32 { 0 } else { !((1u32 << live) - 1) });
        }
        b.ready.get_mut().clear();
        b.yielded.get_mut().clear();
        b.abort.set(false);
        *b.error.get_mut() = None;
        b.locals.reset();
        // Last: from here on the block is only read through shared references.
        let block: *const Block = &*self.block;
        for t in &self.block.threads {
            t.block.set(block);
        }
    }

    fn schedule(&mut self) {
        let (block, workers, reserved) = (&*self.block, &mut self.workers, &mut self.reserved);
        loop {
            if block.abort.get() {
                teardown(block, workers);
                return;
            }
            let ready = block.ready.borrow_mut().pop_front();
            if let Some(t) = ready {
                workers.resume(block.threads[t as usize].worker.get(), Wake::Go);
                continue;
            }
            if block.next.get() < block.size {
                if workers.live() > 0 {
                    // A thread waits: the block may need a stack per thread from here on.
                    reserved.reserve(block.size as usize - 1);
                }
                match workers.spawn(block) {
                    Ok(w) => workers.resume(w, Wake::Go),
                    Err(why) => block.fail(format!("{}: {why}", block.name())),
                }
                continue;
            }
            if block.exited.get() == block.size {
                return;
            }
            if block.resolve() {
                continue;
            }
            let yielder = block.yielded.borrow_mut().pop_front();
            if let Some(t) = yielder {
                // Only spinning threads can run: let the OS run others meanwhile
                // (the thread may wait for another block).
                std::thread::yield_now();
                workers.resume(block.threads[t as usize].worker.get(), Wake::Go);
                continue;
            }
            match block.diagnose() {
                Some(report) => block.fail_check(report),
                None => block.fail(super::deadlock_report(block)),
            }
        }
    }
}

/// Abandons the block: every suspended thread is resumed with `Abort` and
/// unwinds; threads not started never start.
fn teardown(block: &Block, workers: &mut Workers) {
    while let Some(t) = (0..block.size).find(|&t| {
        let ctx = &block.threads[t as usize];
        !matches!(ctx.state.get(), Wait::NotStarted | Wait::Exited) && workers.is_live(ctx.worker.get())
    }) {
        workers.resume(block.threads[t as usize].worker.get(), Wake::Abort);
    }
    // Every worker has returned now (a worker whose thread unwound finds no
    // thread to start in an abandoned block); one that has not (none is
    // expected) is unwound by its `Drop` here.
    for (slot, w) in workers.slots.iter_mut().enumerate() {
        if let Some(co) = w.take() {
            if co.done() {
                stacks::give(co.into_stack());
            }
            workers.free.push(slot as u32);
        }
    }
    block.ready.borrow_mut().clear();
    block.yielded.borrow_mut().clear();
}

/// The body of a worker coroutine: runs unstarted threads until none is left.
fn worker(block: &Block, slot: u32, yielder: &Yielder<Wake, ()>) {
    while let Some(t) = block.take_unstarted() {
        let ctx = &block.threads[t as usize];
        ctx.yielder.set(yielder);
        ctx.worker.set(slot);
        ctx.state.set(Wait::Running);
        CURRENT.with(|c| c.set(ctx));
        // SAFETY: `body` points to the launch's closure, alive for the whole
        // launch (see `Runner::new`).
        let body = unsafe { &*block.body };
        let r = panic::catch_unwind(AssertUnwindSafe(body));
        let hooked = LAST_PANIC.with(|l| l.borrow_mut().take());
        CURRENT.with(|c| c.set(core::ptr::null()));
        ctx.state.set(Wait::Exited);
        block.exited.set(block.exited.get() + 1);
        let w = &block.warp_exited[(t / 32) as usize];
        w.set(w.get() | 1 << (t % 32));
        if let Err(payload) = r {
            if payload.is::<Abandoned>() {
                continue;
            }
            if block.aborted() {
                // Not a thread's own panic: the coroutine is being unwound from
                // outside (dropped while suspended); let that unwinding go on.
                panic::resume_unwind(payload);
            }
            block.fail(panic_report(block, ctx, hooked, &*payload));
        }
    }
}

/// `block (..), thread (..): panicked at FILE:LINE:COL: MESSAGE`.
fn panic_report(
    block: &Block,
    ctx: &ThreadCtx,
    hooked: Option<(String, String)>,
    payload: &(dyn core::any::Any + Send),
) -> String {
    let t = ctx.thread_idx;
    let who = format!("{}, thread ({}, {}, {})", block.name(), t.x, t.y, t.z);
    let (loc, msg) = hooked.unwrap_or_else(|| {
        let msg = payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "(a panic payload that is not a string)".to_string());
        ("<location unknown: another panic hook replaced sluice's>".to_string(), msg)
    });
    if msg.starts_with("kernel failed at ") {
        // `dassert!`/`dfail!`: the message names its location already.
        format!("{who}: {msg}")
    } else {
        format!("{who}: panicked at {loc}: {msg}")
    }
}

/// Installs (once) the panic hook that records the location and message of
/// a panic in a GPU thread, and stays silent for it (the launch's error
/// carries both); other panics go to the hook that was there before.
pub(crate) fn install_panic_hook() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let previous = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            if super::block::in_launch() {
                let loc = info.location().map_or_else(|| "<unknown>".to_string(), |l| l.to_string());
                let msg = info.payload_as_str().unwrap_or("(a panic payload that is not a string)").to_string();
                LAST_PANIC.with(|l| *l.borrow_mut() = Some((loc, msg)));
            } else {
                previous(info);
            }
        }));
    });
}
