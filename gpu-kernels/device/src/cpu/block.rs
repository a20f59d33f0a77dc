//! One block on one OS thread: its GPU threads as stackful coroutines, the
//! scheduler that runs them, block barriers, and the "current GPU thread"
//! context every device function reads.
//!
//! # How a block runs
//!
//! A *worker* is a coroutine (a pooled stack) that takes the next GPU thread
//! not yet started, runs the kernel body for it, and when the body returns
//! takes the next one. As long as no thread suspends, one worker runs the
//! whole block as a plain loop: a barrier-free kernel costs one coroutine per
//! block. A thread suspends at a barrier, a warp collective, `active_mask`
//! or `nanosleep`; its worker stays with it (its stack holds the thread's
//! frames) and the scheduler starts another worker for the next thread. The
//! thread that completes a barrier or a warp collective (the last to arrive)
//! computes everyone's result, marks the others ready and goes on without
//! switching; the scheduler resumes ready threads in the order they were
//! released. When nothing can run and threads remain, the scheduler resolves
//! what waits on thread exits (barrier 0, warp groups whose other lanes have
//! exited) and `active_mask`; if that changes nothing, the block deadlocked.
//!
//! Everything here is touched by one OS thread only (the block's), so the
//! state is in `Cell`s; it is never shared with another block.

use core::cell::{Cell, RefCell};
use std::boxed::Box;
use std::collections::VecDeque;
use std::format;
use std::panic::{self, AssertUnwindSafe, Location};
use std::string::{String, ToString};
use std::vec::Vec;

use corosensei::stack::DefaultStack;
use corosensei::{Coroutine, CoroutineResult, Yielder};

use super::shared::Arena;
use super::warp::{self as cpu_warp, WarpOp};
use crate::spec::thread::{linear_rank, Dim3};

/// Why a suspended thread is resumed.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Wake {
    /// Go on: what it waited for happened.
    Go,
    /// The block is abandoned (a thread panicked, or a deadlock): unwind.
    Abort,
}

/// The panic payload that unwinds the threads of an abandoned block. Raised
/// with `resume_unwind` (no panic hook, nothing printed) and never reported.
pub(crate) struct Abandoned;

/// Where a GPU thread is.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Wait {
    /// Not started yet.
    NotStarted,
    /// Running now (at most one thread of the block at a time).
    Running,
    /// Released, in the ready queue.
    Ready,
    /// Yielding in `nanosleep`, in the yield queue.
    Yield,
    /// Waiting at barrier `id`.
    Barrier(u8),
    /// In a warp collective (the op is in the thread's slot).
    Warp,
    /// In `active_mask`.
    ActiveMask,
    /// Returned from the kernel body (or panicked).
    Exited,
}

type Worker = Coroutine<Wake, (), (), DefaultStack>;

/// The context of one GPU thread, which the device functions read through
/// [`current`]. Lives in its block's `threads` vector, which is not resized
/// while the block runs, so its address is stable.
pub(crate) struct ThreadCtx {
    /// `threadIdx`.
    pub(crate) thread_idx: Dim3,
    /// `blockIdx`.
    pub(crate) block_idx: Dim3,
    /// `blockDim`.
    pub(crate) block_dim: Dim3,
    /// `gridDim`.
    pub(crate) grid_dim: Dim3,
    /// Linear rank in the block, `(z * blockDim.y + y) * blockDim.x + x`.
    pub(crate) rank: u32,
    /// The block this thread belongs to (set once the block's `threads` are built).
    block: Cell<*const Block>,
    /// The yielder of the worker coroutine whose stack runs this thread.
    yielder: Cell<*const Yielder<Wake, ()>>,
    /// The worker slot running this thread.
    worker: Cell<u32>,
    pub(crate) state: Cell<Wait>,
    /// Where the thread waits (the device function's caller).
    pub(crate) site: Cell<Option<&'static Location<'static>>>,
    /// The warp collective in flight: operation, mask, value and operands.
    pub(crate) op: Cell<WarpOp>,
    pub(crate) mask: Cell<u32>,
    pub(crate) value: Cell<u128>,
    pub(crate) b: Cell<u32>,
    pub(crate) c: Cell<u32>,
    /// The result of the last barrier or warp collective (written by the
    /// thread that completed it).
    pub(crate) out: Cell<u128>,
    pub(crate) out_flag: Cell<bool>,
}

impl ThreadCtx {
    /// The block of this thread.
    #[inline(always)]
    pub(crate) fn block(&self) -> &Block {
        // SAFETY: a `ThreadCtx` exists only inside its block's `threads`, so
        // the block outlives it; the pointer is set by `Runner::reset` after
        // the last mutable access to the block (see `Runner`).
        unsafe { &*self.block.get() }
    }
}

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

/// Named barriers per block, as in PTX (`bar.sync 0..15`).
pub(crate) const BARRIERS: usize = 16;

/// One block's state. Reused for the blocks a rayon job runs one after
/// another (see [`Runner`]).
pub(crate) struct Block {
    pub(crate) threads: Vec<ThreadCtx>,
    pub(crate) size: u32,
    pub(crate) shared: Arena,
    next: Cell<u32>,
    exited: Cell<u32>,
    ready: RefCell<VecDeque<u32>>,
    yielded: RefCell<VecDeque<u32>>,
    barriers: [Barrier; BARRIERS],
    /// Per warp: the lanes waiting in a warp collective, and the lanes that
    /// exited (or do not exist: the tail of a partial last warp).
    pub(crate) warp_waiting: Vec<Cell<u32>>,
    pub(crate) warp_exited: Vec<Cell<u32>>,
    abort: Cell<bool>,
    error: RefCell<Option<String>>,
    body: *const (dyn Fn() + Sync),
}

impl Block {
    /// Non-exited threads (started or not).
    #[inline(always)]
    pub(crate) fn live(&self) -> u32 {
        self.size - self.exited.get()
    }

    /// Marks thread `t` released: it will be resumed by the scheduler.
    pub(crate) fn make_ready(&self, t: u32) {
        self.threads[t as usize].state.set(Wait::Ready);
        self.ready.borrow_mut().push_back(t);
    }

    /// Whether the block has been abandoned.
    #[inline(always)]
    pub(crate) fn aborted(&self) -> bool {
        self.abort.get()
    }

    /// Records the block's error (the first one wins) and abandons the block.
    pub(crate) fn fail(&self, message: String) {
        let mut e = self.error.borrow_mut();
        if e.is_none() {
            *e = Some(message);
        }
        self.abort.set(true);
    }

    /// `block (x, y, z)`.
    pub(crate) fn name(&self) -> String {
        let b = self.threads[0].block_idx;
        format!("block ({}, {}, {})", b.x, b.y, b.z)
    }

    fn take_unstarted(&self) -> Option<u32> {
        let t = self.next.get();
        if t < self.size && !self.abort.get() {
            self.next.set(t + 1);
            Some(t)
        } else {
            None
        }
    }

    fn barrier(&self, id: u32) -> &Barrier {
        &self.barriers[id as usize]
    }

    fn barrier_complete(&self, b: &Barrier) -> bool {
        let n = b.arrived.get();
        n > 0 && if b.expected.get() == 0 { n >= self.live() } else { n >= b.expected.get() }
    }

    /// Completes barrier `b`: every waiter gets the reductions and, except
    /// `current` (the thread completing it, which goes on), is released.
    fn complete_barrier(&self, b: &Barrier, current: Option<u32>) -> u128 {
        let out = b.popc.get() as u128 | (b.all.get() as u128) << 32 | (b.any.get() as u128) << 33;
        for &w in b.waiters.borrow().iter() {
            self.threads[w as usize].out.set(out);
            if Some(w) != current {
                self.make_ready(w);
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

    /// Resolves what waits on thread exits or on quiescence; `true` if some
    /// thread was released. Called when no thread can run.
    fn resolve(&self) -> bool {
        let mut progressed = false;
        for b in &self.barriers {
            if b.arrived.get() > 0 && b.expected.get() == 0 && self.barrier_complete(b) {
                self.complete_barrier(b, None);
                progressed = true;
            }
        }
        for t in 0..self.size {
            let ctx = &self.threads[t as usize];
            if ctx.state.get() == Wait::Warp && cpu_warp::try_complete(self, t, None) {
                progressed = true;
            }
        }
        if !progressed {
            progressed = cpu_warp::resolve_active_masks(self);
        }
        progressed
    }
}

std::thread_local! {
    /// The GPU thread running on this OS thread, or null outside a CPU launch.
    static CURRENT: Cell<*const ThreadCtx> = const { Cell::new(core::ptr::null()) };
    /// What the panic hook saw of the last panic in a GPU thread: location and message.
    static LAST_PANIC: RefCell<Option<(String, String)>> = const { RefCell::new(None) };
    /// Worker stacks kept for reuse on this OS thread.
    static STACKS: RefCell<Vec<DefaultStack>> = const { RefCell::new(Vec::new()) };
}

/// The context of the GPU thread running on this OS thread.
///
/// # Panics
///
/// Outside a CPU launch (`what` names the device function called), with a
/// message saying so: device functions have no meaning there.
#[inline(always)]
#[track_caller]
pub(crate) fn current(what: &'static str) -> &'static ThreadCtx {
    let p = CURRENT.with(Cell::get);
    if p.is_null() {
        outside_launch(what);
    }
    // SAFETY: `CURRENT` is set by the runtime to the context of the GPU thread
    // running on this OS thread and cleared before that thread's block ends;
    // the context lives in its block's `threads`, which outlive every thread
    // of the block. The `'static` is internal: callers (device functions) use
    // it only while the GPU thread runs, and never hand it out.
    unsafe { &*p }
}

/// Whether this OS thread is running a GPU thread of a CPU launch.
pub(crate) fn in_launch() -> bool {
    !CURRENT.with(Cell::get).is_null()
}

#[cold]
#[inline(never)]
#[track_caller]
fn outside_launch(what: &'static str) -> ! {
    panic!(
        "sluice_device::{what} called outside a kernel launch: on the host, device functions run only \
         inside a kernel executed by the CPU runtime (sluice_device::cpu::launch, which the CPU backend's \
         launches use)"
    )
}

/// Suspends the calling GPU thread in state `wait` until the scheduler
/// resumes it; unwinds it (with [`Abandoned`]) if the block is abandoned.
pub(crate) fn suspend(ctx: &ThreadCtx, wait: Wait, site: &'static Location<'static>) {
    if ctx.block().aborted() {
        abandon();
    }
    ctx.state.set(wait);
    ctx.site.set(Some(site));
    let y = ctx.yielder.get();
    // SAFETY: the yielder of the worker coroutine that runs this thread, set
    // when the worker started it; we are on that coroutine's stack, so it is
    // live and `suspend` switches back to the scheduler that resumed it.
    let wake = unsafe { &*y }.suspend(());
    CURRENT.with(|c| c.set(ctx));
    ctx.state.set(Wait::Running);
    ctx.site.set(None);
    if wake == Wake::Abort {
        abandon();
    }
}

/// Unwinds the calling GPU thread of an abandoned block. During another
/// unwinding (a destructor that waits at a barrier) it returns instead: a
/// second panic would abort the process.
fn abandon() {
    if !std::thread::panicking() {
        panic::resume_unwind(Box::new(Abandoned));
    }
}

/// Arrives at block barrier `id`. `expected`: the thread count of a named
/// barrier, 0 for every non-exited thread (`bar.sync id` without a count).
/// `wait`: `bar.sync`/`bar.red` (true) or `bar.arrive` (false). Returns
/// `(popc, and, or)` of the predicates of the threads that arrived.
#[track_caller]
pub(crate) fn barrier(what: &'static str, id: u32, expected: u32, pred: bool, wait: bool) -> (u32, bool, bool) {
    let site = Location::caller();
    let ctx = current(what);
    let block = ctx.block();
    if id as usize >= BARRIERS {
        panic!("{what}: barrier id {id} out of range (0..16)");
    }
    if expected != 0 && expected > block.size {
        panic!("{what}: barrier {id} for {expected} threads in a block of {} (PTX leaves this undefined)", block.size);
    }
    let b = block.barrier(id);
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
    let out = if block.barrier_complete(b) {
        block.complete_barrier(b, Some(ctx.rank))
    } else if wait {
        suspend(ctx, Wait::Barrier(id as u8), site);
        ctx.out.get()
    } else {
        0
    };
    (out as u32, out >> 32 & 1 != 0, out >> 33 & 1 != 0)
}

/// `nanosleep`: lets the other threads of the block run (a spin loop waiting
/// for another thread of its block must contain a suspension point).
#[track_caller]
pub(crate) fn yield_now(what: &'static str) {
    let site = Location::caller();
    let ctx = current(what);
    ctx.block().yielded.borrow_mut().push_back(ctx.rank);
    suspend(ctx, Wait::Yield, site);
}

fn stack_bytes() -> usize {
    static SIZE: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *SIZE.get_or_init(|| {
        std::env::var("SLUICE_CPU_STACK_KIB")
            .ok()
            .and_then(|v| v.trim().parse::<usize>().ok())
            .filter(|&k| k >= 16)
            .map_or(super::DEFAULT_STACK_KIB * 1024, |k| k * 1024)
    })
}

fn take_stack() -> DefaultStack {
    STACKS.with(|s| s.borrow_mut().pop()).unwrap_or_else(|| {
        DefaultStack::new(stack_bytes())
            .unwrap_or_else(|e| panic!("sluice cpu runtime: cannot allocate a {} KiB stack: {e}", stack_bytes() / 1024))
    })
}

fn give_stack(s: DefaultStack) {
    STACKS.with(|p| {
        let mut p = p.borrow_mut();
        // Enough for every thread of a full block (1024) plus the workers that
        // ran threads to completion; more would only hold memory.
        if p.len() < 1100 {
            p.push(s);
        }
    });
}

/// The worker coroutines of a runner, in slots reused from block to block.
#[derive(Default)]
struct Workers {
    slots: Vec<Option<Worker>>,
    free: Vec<u32>,
}

impl Workers {
    /// Starts a worker coroutine for `block` in a free slot; returns the slot.
    fn spawn(&mut self, block: &Block) -> u32 {
        let slot = match self.free.pop() {
            Some(s) => s,
            None => {
                self.slots.push(None);
                (self.slots.len() - 1) as u32
            }
        };
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
        let co = unsafe { Coroutine::with_stack_unchecked(take_stack(), body) };
        self.slots[slot as usize] = Some(co);
        slot
    }

    /// Resumes the worker in `slot`; recycles its stack if it returned.
    fn resume(&mut self, slot: u32, wake: Wake) {
        let co = self.slots[slot as usize].as_mut().expect("sluice cpu runtime: resuming a finished worker");
        let r = co.resume(wake);
        CURRENT.with(|c| c.set(core::ptr::null()));
        if let CoroutineResult::Return(()) = r {
            if let Some(co) = self.slots[slot as usize].take() {
                give_stack(co.into_stack());
            }
            self.free.push(slot);
        }
    }

    fn is_live(&self, slot: u32) -> bool {
        self.slots.get(slot as usize).is_some_and(Option::is_some)
    }
}

/// Runs the blocks a rayon job is given, one after another, reusing the
/// block state, the shared-memory arena and the worker stacks.
pub(crate) struct Runner<'a> {
    // Declared (so dropped) first: a worker still alive here (only after a
    // bug) is unwound while the block it borrows is still there.
    workers: Workers,
    block: Box<Block>,
    grid: Dim3,
    dims: Dim3,
    _body: core::marker::PhantomData<&'a (dyn Fn() + Sync)>,
}

impl<'a> Runner<'a> {
    pub(crate) fn new(grid: Dim3, dims: Dim3, dynamic_shared: u32, body: &'a (dyn Fn() + Sync)) -> Runner<'a> {
        let size = (dims.x * dims.y * dims.z) as usize;
        let body: *const (dyn Fn() + Sync + 'a) = body;
        // SAFETY: only the trait object's lifetime bound changes (same fat
        // pointer layout). `body` lives for 'a; the pointer is used only by
        // this runner's workers, which end before the runner, whose type
        // carries 'a (`_body`).
        let body: *const (dyn Fn() + Sync + 'static) = unsafe { core::mem::transmute(body) };
        Runner {
            workers: Workers::default(),
            block: Box::new(Block {
                threads: Vec::with_capacity(size),
                size: size as u32,
                shared: Arena::new(dynamic_shared),
                next: Cell::new(0),
                exited: Cell::new(0),
                ready: RefCell::new(VecDeque::new()),
                yielded: RefCell::new(VecDeque::new()),
                barriers: Default::default(),
                warp_waiting: (0..size.div_ceil(32)).map(|_| Cell::new(0)).collect(),
                warp_exited: (0..size.div_ceil(32)).map(|_| Cell::new(0)).collect(),
                abort: Cell::new(false),
                error: RefCell::new(None),
                body,
            }),
            grid,
            dims,
            _body: core::marker::PhantomData,
        }
    }

    /// Runs block number `linear` (x fastest) to its end. `Err` if a thread
    /// panicked or the block deadlocked.
    pub(crate) fn run(&mut self, linear: u64) -> Result<(), String> {
        let g = self.grid;
        let block_idx = Dim3 {
            x: (linear % g.x as u64) as u32,
            y: (linear / g.x as u64 % g.y as u64) as u32,
            z: (linear / (g.x as u64 * g.y as u64)) as u32,
        };
        self.reset(block_idx);
        let saved = CURRENT.with(Cell::get);
        self.schedule();
        CURRENT.with(|c| c.set(saved));
        match self.block.error.borrow_mut().take() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    fn reset(&mut self, block_idx: Dim3) {
        let d = self.dims;
        let b = &mut *self.block;
        b.threads.clear();
        for z in 0..d.z {
            for y in 0..d.y {
                for x in 0..d.x {
                    b.threads.push(ThreadCtx {
                        thread_idx: Dim3 { x, y, z },
                        block_idx,
                        block_dim: d,
                        grid_dim: self.grid,
                        rank: linear_rank(Dim3 { x, y, z }, d),
                        block: Cell::new(core::ptr::null()),
                        yielder: Cell::new(core::ptr::null()),
                        worker: Cell::new(u32::MAX),
                        state: Cell::new(Wait::NotStarted),
                        site: Cell::new(None),
                        op: Cell::new(WarpOp::Sync),
                        mask: Cell::new(0),
                        value: Cell::new(0),
                        b: Cell::new(0),
                        c: Cell::new(0),
                        out: Cell::new(0),
                        out_flag: Cell::new(false),
                    });
                }
            }
        }
        b.next.set(0);
        b.exited.set(0);
        for (w, (waiting, exited)) in b.warp_waiting.iter().zip(&b.warp_exited).enumerate() {
            waiting.set(0);
            // Lanes past the block's end never run: as exited.
            let live = (b.size - 32 * w as u32).min(32);
            exited.set(if live == 32 { 0 } else { !((1u32 << live) - 1) });
        }
        b.ready.get_mut().clear();
        b.yielded.get_mut().clear();
        b.abort.set(false);
        *b.error.get_mut() = None;
        for bar in &mut b.barriers {
            bar.arrived.set(0);
            bar.expected.set(0);
            bar.waiters.get_mut().clear();
        }
        b.shared.reset();
        // Last: from here on the block is only read through shared references.
        let block: *const Block = &*self.block;
        for t in &self.block.threads {
            t.block.set(block);
        }
    }

    fn schedule(&mut self) {
        let (block, workers) = (&*self.block, &mut self.workers);
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
                let w = workers.spawn(block);
                workers.resume(w, Wake::Go);
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
            block.fail(super::deadlock_report(block));
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
                give_stack(co.into_stack());
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
            if in_launch() {
                let loc = info.location().map_or_else(|| "<unknown>".to_string(), |l| l.to_string());
                let msg = info.payload_as_str().unwrap_or("(a panic payload that is not a string)").to_string();
                LAST_PANIC.with(|l| *l.borrow_mut() = Some((loc, msg)));
            } else {
                previous(info);
            }
        }));
    });
}

/// A description of where each waiting thread of a deadlocked block waits.
pub(crate) fn wait_groups(block: &Block) -> Vec<String> {
    // (what, site) -> ranks, in first-seen order.
    let mut groups: Vec<(String, Vec<u32>)> = Vec::new();
    for ctx in &block.threads {
        let what = match ctx.state.get() {
            Wait::Barrier(id) => {
                let b = block.barrier(id as u32);
                let want = if b.expected.get() == 0 {
                    format!("{} non-exited threads", block.live())
                } else {
                    format!("{} threads", b.expected.get())
                };
                format!("barrier {id} ({} of {want} arrived)", b.arrived.get())
            }
            Wait::Warp => cpu_warp::describe(block, ctx),
            Wait::ActiveMask => "active_mask".to_string(),
            _ => continue,
        };
        let site = ctx.site.get().map_or_else(String::new, |l| format!(" at {l}"));
        let key = format!("{what}{site}");
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, v)) => v.push(ctx.rank),
            None => groups.push((key, std::vec![ctx.rank])),
        }
    }
    groups.into_iter().map(|(k, ranks)| format!("{}: {k}", super::ranks(&ranks))).collect()
}
