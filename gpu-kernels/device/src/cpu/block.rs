//! One block of the CPU runtime: its GPU threads and the context every device
//! function reads ([`current`]), how a thread waits for others (it parks in a
//! [`Rendezvous`] until another thread releases it), and the per-block state the
//! op families keep ([`LocalKey`]).
//!
//! The engine knows no op family. A family's CPU side (`sync/cpu.rs` for
//! barriers, `warp/cpu.rs` for warp collectives and `active_mask`,
//! `shared/cpu.rs` for shared memory) keeps its own per-block state behind a
//! `static` [`LocalKey`], parks threads with [`suspend`] in its own
//! [`Rendezvous`], and releases them with [`Block::make_ready`]. A new family
//! (`mbarrier`, `cp.async` groups, clusters) adds a `Rendezvous` and a `LocalKey`
//! of its own, and no line here. What the engine does know is CUDA's execution
//! model: threads, their linear ranks, blocks, warps of 32 consecutive ranks and
//! which of their lanes have exited.
//!
//! Everything here is touched by one OS thread only (the block's), so the
//! state is in `Cell`s; it is never shared with another block.

use core::any::Any;
use core::cell::{Cell, RefCell};
use core::marker::PhantomData;
use core::sync::atomic::{AtomicUsize, Ordering};
use std::boxed::Box;
use std::collections::VecDeque;
use std::format;
use std::panic::{self, Location};
use std::string::String;
use std::vec::Vec;

use corosensei::Yielder;
use sluice_host::{CheckReport, CpuLaunchError};

use super::check::Checker;
use crate::spec::thread::Dim3;

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
#[derive(Clone, Copy)]
pub(crate) enum Wait {
    /// Not started yet.
    NotStarted,
    /// Running now (at most one thread of the block at a time).
    Running,
    /// Released, in the ready queue.
    Ready,
    /// Yielding in `nanosleep`, in the yield queue.
    Yield,
    /// Parked in an op family's rendezvous; the `u32` is the family's own tag
    /// (a barrier's id, say).
    Parked(&'static dyn Rendezvous, u32),
    /// Returned from the kernel body (or panicked).
    Exited,
}

impl Wait {
    /// The tag of a thread parked in `at`, if it is.
    #[inline(always)]
    pub(crate) fn parked_in(self, at: &'static dyn Rendezvous) -> Option<u32> {
        match self {
            Wait::Parked(r, tag) if same(r, at) => Some(tag),
            _ => None,
        }
    }
}

/// Whether two rendezvous are the same `static` (their data pointers; every
/// rendezvous type has a field, so two statics never share an address).
#[inline(always)]
fn same(a: &'static dyn Rendezvous, b: &'static dyn Rendezvous) -> bool {
    core::ptr::addr_eq(a as *const dyn Rendezvous, b as *const dyn Rendezvous)
}

impl core::fmt::Debug for Wait {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Wait::NotStarted => f.write_str("NotStarted"),
            Wait::Running => f.write_str("Running"),
            Wait::Ready => f.write_str("Ready"),
            Wait::Yield => f.write_str("Yield"),
            Wait::Parked(r, tag) => write!(f, "Parked({}, {tag})", r.name()),
            Wait::Exited => f.write_str("Exited"),
        }
    }
}

/// A kind of wait an op family defines: what its parked threads wait for, and
/// what the scheduler can release when no thread of the block can run.
///
/// A family parks a thread with [`suspend`]`(ctx, Wait::Parked(&KIND, tag), site)`
/// and releases it with [`Block::make_ready`], usually from the thread whose
/// arrival completes the wait (the last to arrive). The scheduler calls the
/// `release_*` methods only when nothing can run: those are for waits that
/// other threads' exits complete, and for waits that complete when the block is
/// stuck. Implementations are `static`s with at least one field (see [`same`]).
pub(crate) trait Rendezvous: Sync {
    /// The kind's name, for debugging output.
    fn name(&self) -> &'static str;

    /// What thread `rank`, parked here with `tag`, waits for, as a deadlock
    /// report shows it (`barrier 0 (1 of 32 non-exited threads arrived)`).
    fn describe(&self, block: &Block, rank: u32, tag: u32) -> String;

    /// How another family's report names a thread parked here (`at barrier 0`).
    fn label(&self, block: &Block, rank: u32, tag: u32) -> String;

    /// Releases the waits that other threads' exits have completed (a barrier
    /// that counts non-exited threads, a warp group whose other lanes exited);
    /// `true` if a thread was released. Called when no thread can run.
    fn release_after_exits(&self, block: &Block) -> bool {
        let _ = block;
        false
    }

    /// Releases the waits that complete when no thread of the block can run
    /// (`active_mask`); `true` if a thread was released. Called when no thread
    /// can run and no [`release_after_exits`](Rendezvous::release_after_exits)
    /// released one.
    fn release_when_stuck(&self, block: &Block) -> bool {
        let _ = block;
        false
    }

    /// In a checked launch whose block is stuck (a deadlock), what the checking mode
    /// reports about the threads parked here: a barrier or a warp collective that some
    /// threads it names never reach. `None`: the plain deadlock report.
    fn diagnose(&self, block: &Block) -> Option<Box<CheckReport>> {
        let _ = block;
        None
    }
}

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
    pub(super) block: Cell<*const Block>,
    /// The yielder of the worker coroutine whose stack runs this thread.
    pub(super) yielder: Cell<*const Yielder<Wake, ()>>,
    /// The worker slot running this thread.
    pub(super) worker: Cell<u32>,
    pub(crate) state: Cell<Wait>,
    /// Where the thread waits (the device function's caller).
    pub(crate) site: Cell<Option<&'static Location<'static>>>,
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

/// The launch a block belongs to: what an op family needs to size its
/// per-block state.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Launch {
    /// `gridDim`.
    pub(crate) grid: Dim3,
    /// `blockDim`.
    pub(crate) block: Dim3,
    /// Dynamic shared memory per block, in bytes.
    pub(crate) dynamic_shared_bytes: u32,
}

/// Most op families with per-block state on the CPU.
const MAX_LOCALS: usize = 16;

/// The op families' per-block state: each [`LocalKey`]'s slot points to its state in
/// `owned` (null until the family's first use by the runner). `ptrs` has twice the
/// slots, the upper half always null, so that a key's lookup is a mask, a load and a
/// compare (a key without a slot yet holds `MAX_LOCALS`).
pub(super) struct Locals {
    ptrs: [Cell<*const ()>; 2 * MAX_LOCALS],
    owned: RefCell<Vec<Box<dyn AnyLocal>>>,
}

impl Locals {
    pub(super) fn new() -> Locals {
        Locals { ptrs: core::array::from_fn(|_| Cell::new(core::ptr::null())), owned: RefCell::new(Vec::new()) }
    }

    /// Every family's state back to a fresh block's.
    pub(super) fn reset(&mut self) {
        for local in self.owned.get_mut() {
            local.reset();
        }
    }
}

/// One block's state. Reused for the blocks a rayon job runs one after
/// another (see [`Runner`](super::runner::Runner)).
pub(crate) struct Block {
    pub(crate) threads: Vec<ThreadCtx>,
    pub(crate) size: u32,
    pub(crate) launch: Launch,
    pub(super) next: Cell<u32>,
    pub(super) exited: Cell<u32>,
    pub(super) ready: RefCell<VecDeque<u32>>,
    pub(super) yielded: RefCell<VecDeque<u32>>,
    /// Per warp: the lanes that exited (or do not exist: the tail of a partial
    /// last warp).
    pub(super) warp_exited: Vec<Cell<u32>>,
    /// The op families' per-block state, by [`LocalKey`] slot.
    pub(super) locals: Locals,
    pub(super) abort: Cell<bool>,
    pub(super) error: RefCell<Option<CpuLaunchError>>,
    pub(super) body: *const (dyn Fn() + Sync),
    /// The launch's checking mode, or null when it is not checked.
    pub(super) checker: *const Checker,
}

impl Block {
    /// Non-exited threads (started or not).
    #[inline(always)]
    pub(crate) fn live(&self) -> u32 {
        self.size - self.exited.get()
    }

    /// The lanes of warp `warp` (ranks `32 * warp ..`) that have exited, or do
    /// not exist (past the end of the block).
    #[inline(always)]
    pub(crate) fn exited_lanes(&self, warp: u32) -> u32 {
        self.warp_exited[warp as usize].get()
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
        self.fail_with(CpuLaunchError::Fault(message));
    }

    /// Records the checking mode's report as the block's error (the first one wins) and
    /// abandons the block.
    pub(crate) fn fail_check(&self, report: Box<CheckReport>) {
        self.fail_with(CpuLaunchError::Check(report));
    }

    fn fail_with(&self, error: CpuLaunchError) {
        let mut e = self.error.borrow_mut();
        if e.is_none() {
            *e = Some(error);
        }
        self.abort.set(true);
    }

    /// The launch's checking mode, if it is checked.
    #[inline(always)]
    pub(crate) fn checker(&self) -> Option<&Checker> {
        // SAFETY: null, or the launch's `Checker`, which `cpu::run` keeps alive until every
        // block has ended (the runners borrow it).
        unsafe { self.checker.as_ref() }
    }

    /// In a checked launch, what the parked threads' rendezvous report about a stuck block.
    pub(super) fn diagnose(&self) -> Option<Box<CheckReport>> {
        self.checker()?;
        self.parked_kinds().iter().find_map(|k| k.diagnose(self))
    }

    /// `block (x, y, z)`.
    pub(crate) fn name(&self) -> String {
        let b = self.threads[0].block_idx;
        format!("block ({}, {}, {})", b.x, b.y, b.z)
    }

    pub(super) fn take_unstarted(&self) -> Option<u32> {
        let t = self.next.get();
        if t < self.size && !self.abort.get() {
            self.next.set(t + 1);
            Some(t)
        } else {
            None
        }
    }

    /// The rendezvous threads are parked in, in the order of the lowest rank
    /// parked in each.
    fn parked_kinds(&self) -> Vec<&'static dyn Rendezvous> {
        let mut kinds: Vec<&'static dyn Rendezvous> = Vec::new();
        for ctx in &self.threads {
            if let Wait::Parked(r, _) = ctx.state.get() {
                if !kinds.iter().any(|k| same(*k, r)) {
                    kinds.push(r);
                }
            }
        }
        kinds
    }

    /// Resolves what waits on thread exits or on the block being stuck; `true`
    /// if some thread was released. Called when no thread can run: first every
    /// parked-in rendezvous's [`release_after_exits`](Rendezvous::release_after_exits),
    /// then, if that released nothing, their
    /// [`release_when_stuck`](Rendezvous::release_when_stuck).
    pub(super) fn resolve(&self) -> bool {
        let kinds = self.parked_kinds();
        let mut progressed = false;
        for k in &kinds {
            progressed |= k.release_after_exits(self);
        }
        if !progressed {
            for k in &kinds {
                progressed |= k.release_when_stuck(self);
            }
        }
        progressed
    }
}

/// An op family's per-block state on the CPU (a block's shared memory, its
/// named barriers, its warps' collectives in flight): made for a runner at the
/// family's first use, reset when the runner starts its next block.
pub(crate) trait Local: 'static {
    /// The state of a fresh block of `launch`.
    fn new(launch: &Launch) -> Self
    where
        Self: Sized;

    /// Back to a fresh block's state.
    fn reset(&mut self);
}

/// A [`Local`], type-erased in a block's slots.
pub(super) trait AnyLocal: Any {
    fn reset(&mut self);
}

impl<T: Local> AnyLocal for T {
    fn reset(&mut self) {
        Local::reset(self)
    }
}

/// Slots handed out to [`LocalKey`]s so far (process-wide).
static NEXT_SLOT: AtomicUsize = AtomicUsize::new(0);

/// The key of an op family's per-block state: a `static` in the family's
/// `cpu.rs` (`static BARRIERS: LocalKey<Barriers> = LocalKey::new();`), which
/// owns one slot of every block. [`LocalKey::get`] is a load and a compare.
pub(crate) struct LocalKey<T> {
    /// The slot, `MAX_LOCALS` until the key's first use.
    slot: AtomicUsize,
    _t: PhantomData<fn() -> T>,
}

impl<T: Local> LocalKey<T> {
    /// A key with no slot yet.
    pub(crate) const fn new() -> LocalKey<T> {
        LocalKey { slot: AtomicUsize::new(MAX_LOCALS), _t: PhantomData }
    }

    /// This family's state in `block`, made (fresh) at its first use by the
    /// block's runner.
    #[inline(always)]
    pub(crate) fn get<'b>(&'static self, block: &'b Block) -> &'b T {
        let slot = self.slot.load(Ordering::Relaxed) & (2 * MAX_LOCALS - 1);
        let p = block.locals.ptrs[slot].get();
        if p.is_null() {
            return self.init(block);
        }
        // SAFETY: a non-null slot of this key's was set by `init` to this key's
        // state, a `T` (slots are handed to one key each, `slot_index`), boxed in
        // `owned`, which lives as long as the block and never drops an entry.
        unsafe { &*(p as *const T) }
    }

    #[cold]
    #[inline(never)]
    fn init<'b>(&'static self, block: &'b Block) -> &'b T {
        let slot = self.slot_index();
        let mut state = Box::new(T::new(&block.launch));
        state.reset();
        let p: *const T = &*state;
        block.locals.owned.borrow_mut().push(state);
        block.locals.ptrs[slot].set(p as *const ());
        // SAFETY: `p` points into the box just moved into `owned` (moving a box
        // leaves its contents in place), which keeps it for the block's life.
        unsafe { &*p }
    }

    /// This key's slot, taken from [`NEXT_SLOT`] at its first use.
    fn slot_index(&'static self) -> usize {
        let slot = self.slot.load(Ordering::Relaxed);
        if slot != MAX_LOCALS {
            return slot;
        }
        let fresh = NEXT_SLOT.fetch_add(1, Ordering::Relaxed);
        assert!(
            fresh < MAX_LOCALS,
            "sluice cpu runtime: more than {MAX_LOCALS} op families keep per-block state (raise MAX_LOCALS)"
        );
        // Another OS thread may have given this key a slot meanwhile: keep the
        // first (the fresh one is wasted, which only MAX_LOCALS notices).
        match self.slot.compare_exchange(MAX_LOCALS, fresh, Ordering::Relaxed, Ordering::Relaxed) {
            Ok(_) => fresh,
            Err(first) => first,
        }
    }
}

std::thread_local! {
    /// The GPU thread running on this OS thread, or null outside a CPU launch.
    pub(super) static CURRENT: Cell<*const ThreadCtx> = const { Cell::new(core::ptr::null()) };
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
pub(crate) fn abandon() {
    if !std::thread::panicking() {
        panic::resume_unwind(Box::new(Abandoned));
    }
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

/// A description of where each waiting thread of a deadlocked block waits.
pub(crate) fn wait_groups(block: &Block) -> Vec<String> {
    // (what, site) -> ranks, in first-seen order.
    let mut groups: Vec<(String, Vec<u32>)> = Vec::new();
    for ctx in &block.threads {
        let Wait::Parked(at, tag) = ctx.state.get() else { continue };
        let what = at.describe(block, ctx.rank, tag);
        let site = ctx.site.get().map_or_else(String::new, |l| format!(" at {l}"));
        let key = format!("{what}{site}");
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, v)) => v.push(ctx.rank),
            None => groups.push((key, std::vec![ctx.rank])),
        }
    }
    groups.into_iter().map(|(k, ranks)| format!("{}: {k}", super::ranks(&ranks))).collect()
}
