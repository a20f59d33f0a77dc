//! The checking mode's engine: happens-before without interleaving, the launch-wide shadow
//! of global memory, and how a report fails a block.
//!
//! The threads of a block run as coroutines that switch only at barriers and warp
//! collectives, so a race between two of them never *shows* on the CPU: the schedule
//! hides it. The checker does not look for an interleaving; it records, for every access,
//! the point of the block's synchronisation it happened at, and compares:
//!
//! * **Block barriers** (barrier 0: `sync_threads` and its count/and/or forms) are
//!   passed by every non-exited thread together, so they cut the block's run into
//!   *intervals*, numbered by a stamp the whole block shares ([`Clocks::stamp`]). An access
//!   of an earlier interval happens before every access of a later one.
//! * **Within an interval**, each thread counts its own synchronisation points (`seg`:
//!   `sync_warp` completions and named-barrier arrivals), and knows, per other thread,
//!   the count it has been ordered after (a vector clock: 32 entries over its warp's
//!   lanes, merged among the lanes at each `sync_warp`; a row over the whole block, made
//!   only when a named barrier completes, merged from every arrival into every waiter).
//!   Access `a` (thread `A`, segment `s`) happens before the current access of thread `C`
//!   iff `A == C`, or `a` is of an earlier interval, or `C` knows `A` past `s`.
//! * **Global memory**: blocks run on several OS threads and are never ordered with each
//!   other, so the shadow of a kernel's written slices ([`Region`]) is launch-wide and
//!   locks each element's record while it compares and updates it; within a block the
//!   same clocks decide.
//!
//! Shared memory's byte shadow is the `shared` family's (`shared/check.rs`); the families
//! call [`Clocks`] at their synchronisation points (`sync/cpu.rs`, `warp/rendezvous.rs`).
//! A report fails the block as a panic does ([`fail`]), with a typed
//! [`CheckReport`] instead of a message.

use core::cell::{Cell, OnceCell, UnsafeCell};
use core::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::alloc::{self, Layout};
use std::boxed::Box;
use std::format;
use std::panic::Location;
use std::string::{String, ToString};
use std::sync::{Arc, RwLock};
use std::vec::Vec;

use sluice_host::{Access, CheckKind, CheckReport};

use super::block::{current, Block, Launch, Local, LocalKey};

/// Checked launches in flight in the process: the hooks that have no thread context at
/// hand (a slice's element access) test it before looking for one.
static CHECKED_LAUNCHES: AtomicUsize = AtomicUsize::new(0);

/// Whether some launch of the process is being checked now (one relaxed load).
#[inline(always)]
pub(crate) fn any_checked() -> bool {
    CHECKED_LAUNCHES.load(Ordering::Relaxed) != 0
}

/// Where an access was made: its caller, as `#[track_caller]` sees it.
pub(crate) type Site = &'static Location<'static>;

/// The launch-wide part of the checking mode: the kernel's name and the shadow of global
/// memory. Made by `cpu::run` for a checked launch; the blocks point to it.
pub(crate) struct Checker {
    kernel: &'static str,
    globals: RwLock<Vec<Arc<Region>>>,
}

impl Checker {
    pub(crate) fn new(kernel: &'static str) -> Checker {
        CHECKED_LAUNCHES.fetch_add(1, Ordering::Relaxed);
        Checker { kernel, globals: RwLock::new(Vec::new()) }
    }
}

impl Drop for Checker {
    fn drop(&mut self) {
        CHECKED_LAUNCHES.fetch_sub(1, Ordering::Relaxed);
    }
}

/// `file:line:column`.
pub(crate) fn site_name(site: Option<Site>) -> String {
    site.map_or_else(String::new, |l| l.to_string())
}

/// Thread `rank` of `block` as a report names it.
pub(crate) fn access(block: &Block, rank: u32, site: Option<Site>, what: String) -> Access {
    let ctx = &block.threads[rank as usize];
    let (t, b) = (ctx.thread_idx, ctx.block_idx);
    Access { block: [b.x, b.y, b.z], thread: [t.x, t.y, t.z], site: site_name(site), what }
}

/// A report about `block` of the current launch.
pub(crate) fn report(
    block: &Block,
    kind: CheckKind,
    location: String,
    first: Access,
    second: Option<Access>,
) -> Box<CheckReport> {
    let b = block.threads[0].block_idx;
    let kernel = block.checker().map_or("", |c| c.kernel).to_string();
    Box::new(CheckReport { kind, kernel, block: [b.x, b.y, b.z], location, first, second })
}

/// Fails `block` with `report` (the first failure of a block wins) and, when called from
/// one of its GPU threads, unwinds that thread as the block is abandoned (the scheduler
/// unwinds the others). From the scheduler (a rendezvous completed by an exit) it returns.
pub(crate) fn fail(block: &Block, report: Box<CheckReport>) {
    block.fail_check(report);
    if super::block::in_launch() {
        super::block::abandon();
    }
}

/// The block's synchronisation clocks (see the module docs): per block, reset for each.
pub(crate) struct Clocks {
    /// The current interval's stamp, shared by the whole block (monotone over the blocks a
    /// runner runs, so that a stamp below [`Clocks::base`] is another block's).
    stamp: Cell<u64>,
    /// The stamp of this block's first interval.
    base: Cell<u64>,
    /// Block barriers completed in this block.
    barriers: Cell<u32>,
    size: u32,
    /// Per thread: its synchronisation points in this interval.
    seg: Box<[Cell<u32>]>,
    /// Per thread, 32 entries: what it knows of each lane of its warp (a segment count).
    warp: Box<[Cell<u32>]>,
    /// Per thread, `size` entries: what it knows of each thread of the block through named
    /// barriers (made at the first named barrier a runner's blocks complete).
    named: OnceCell<Box<[Cell<u32>]>>,
    /// Per named barrier (16), `size` entries: the knowledge its arrivals bring.
    pending: OnceCell<Box<[Cell<u32>]>>,
    /// Whether `seg`, `warp`, `named` or `pending` changed in this interval.
    dirty: Cell<bool>,
    /// Per thread: the site of the last operation the checker saw it make.
    last: Box<[Cell<Option<Site>>]>,
    /// A report held until the interval ends (the first read of memory never written:
    /// a write of another thread later in the interval makes it a race, reported instead).
    deferred: core::cell::RefCell<Option<Box<CheckReport>>>,
}

/// Named barriers per block (`bar.sync 0..15`).
const NAMED: usize = 16;

/// The most synchronisation points a thread counts in one interval (what a shadow record
/// keeps: 20 bits). A thread reaching it starts a new interval for the whole block, as a
/// block barrier would: the checker may then miss a race, never report one that is not.
pub(crate) const MAX_SEG: u32 = (1 << 20) - 1;

fn cells(n: usize) -> Box<[Cell<u32>]> {
    (0..n).map(|_| Cell::new(0)).collect()
}

impl Local for Clocks {
    fn new(launch: &Launch) -> Clocks {
        let size = launch.block.volume() as usize;
        Clocks {
            stamp: Cell::new(0),
            base: Cell::new(1),
            barriers: Cell::new(0),
            size: size as u32,
            seg: cells(size),
            warp: cells(size * 32),
            named: OnceCell::new(),
            pending: OnceCell::new(),
            dirty: Cell::new(false),
            last: (0..size).map(|_| Cell::new(None)).collect(),
            deferred: core::cell::RefCell::new(None),
        }
    }

    fn reset(&mut self) {
        let base = self.stamp.get() + 1;
        self.base.set(base);
        self.stamp.set(base);
        self.barriers.set(0);
        self.clear();
        for l in self.last.iter() {
            l.set(None);
        }
        *self.deferred.get_mut() = None;
    }
}

static CLOCKS: LocalKey<Clocks> = LocalKey::new();

/// The clocks of `block` (check mode only: made at the first use).
#[inline(always)]
pub(crate) fn clocks(block: &Block) -> &Clocks {
    CLOCKS.get(block)
}

/// One access as a shadow keeps it: the interval, the thread's segment, the thread.
#[derive(Clone, Copy, Default, PartialEq, Eq, Debug)]
pub(crate) struct Stamp {
    /// The interval's stamp; 0: no access.
    pub(crate) stamp: u64,
    pub(crate) seg: u32,
    pub(crate) rank: u32,
}

impl Clocks {
    /// The stamp of this block's first interval: a record below it is of another block.
    #[inline(always)]
    pub(crate) fn base(&self) -> u64 {
        self.base.get()
    }

    /// Block barriers completed so far in this block.
    pub(crate) fn barriers(&self) -> u32 {
        self.barriers.get()
    }

    /// The current access of thread `rank`.
    #[inline(always)]
    pub(crate) fn now(&self, rank: u32) -> Stamp {
        Stamp { stamp: self.stamp.get(), seg: self.seg[rank as usize].get(), rank }
    }

    /// Notes that `rank` is at `site` (what an exit report names as its last place).
    #[inline(always)]
    pub(crate) fn saw(&self, rank: u32, site: Site) {
        self.last[rank as usize].set(Some(site));
    }

    /// The site of the last operation the checker saw thread `rank` make.
    pub(crate) fn last_site(&self, rank: u32) -> Option<Site> {
        self.last[rank as usize].get()
    }

    /// How far thread `c` knows thread `a`'s segments in this interval.
    #[inline(always)]
    fn knows(&self, c: u32, a: u32) -> u32 {
        let mut k = 0;
        if c / 32 == a / 32 {
            k = self.warp[(c * 32 + a % 32) as usize].get();
        }
        if let Some(named) = self.named.get() {
            k = k.max(named[(c * self.size + a) as usize].get());
        }
        k
    }

    /// Whether access `prev` (of this block) happens before the current access of thread
    /// `rank`.
    #[inline(always)]
    pub(crate) fn ordered(&self, prev: Stamp, rank: u32) -> bool {
        prev.rank == rank || prev.stamp < self.stamp.get() || self.knows(rank, prev.rank) > prev.seg
    }

    /// Whether access `prev`, made in interval `epoch` of this block (counted from 0),
    /// happens before the current access of thread `rank` (the global shadow keeps the
    /// interval relative to the block).
    #[inline(always)]
    pub(crate) fn ordered_in_block(&self, epoch: u32, seg: u32, prev_rank: u32, rank: u32) -> bool {
        prev_rank == rank || epoch < self.barriers.get() || self.knows(rank, prev_rank) > seg
    }

    /// Every thread's segments and knowledge back to zero (a new interval or block).
    fn clear(&self) {
        if !self.dirty.replace(false) {
            return;
        }
        for c in self.seg.iter().chain(self.warp.iter()) {
            c.set(0);
        }
        for c in self.named.get().iter().flat_map(|n| n.iter()).chain(self.pending.get().iter().flat_map(|p| p.iter()))
        {
            c.set(0);
        }
    }

    /// Holds `report` until the interval ends (the first one only): a report that a race
    /// found later in the interval explains better.
    pub(crate) fn defer(&self, report: Box<CheckReport>) {
        self.deferred.borrow_mut().get_or_insert(report);
    }

    /// The report held since the interval began, if any: the caller reports it, now that
    /// the interval is over.
    pub(crate) fn take_deferred(&self) -> Option<Box<CheckReport>> {
        self.deferred.borrow_mut().take()
    }

    /// Thread `t` passes a synchronisation point of its own: its segment grows (and at
    /// [`MAX_SEG`] the block's interval ends).
    fn bump(&self, t: u32) {
        let seg = &self.seg[t as usize];
        if seg.get() + 1 >= MAX_SEG {
            self.block_barrier();
        }
        seg.set(seg.get() + 1);
    }

    /// A block barrier completed: a new interval.
    pub(crate) fn block_barrier(&self) {
        self.stamp.set(self.stamp.get() + 1);
        self.barriers.set(self.barriers.get() + 1);
        self.clear();
    }

    /// Lanes `members` of the warp at rank `base` completed a collective that orders
    /// memory among them (`bar.warp.sync`): each learns what the others know, and that
    /// their accesses so far happen before its next ones.
    pub(crate) fn warp_sync(&self, base: u32, members: u32) {
        self.dirty.set(true);
        let lanes = || (0..32u32).filter(move |l| members & (1 << l) != 0);
        let mut k = [0u32; 32];
        for p in lanes() {
            let row = ((base + p) * 32) as usize;
            for (l, kl) in k.iter_mut().enumerate() {
                *kl = (*kl).max(self.warp[row + l].get());
            }
        }
        for p in lanes() {
            k[p as usize] = k[p as usize].max(self.seg[(base + p) as usize].get() + 1);
        }
        let named = self.named.get();
        let mut row_k: Vec<u32> = Vec::new();
        if let Some(named) = named {
            // Knowledge of other warps' threads, got through named barriers, travels too.
            row_k = std::vec![0; self.size as usize];
            for p in lanes() {
                let row = &named[((base + p) * self.size) as usize..][..self.size as usize];
                for (x, c) in row_k.iter_mut().zip(row) {
                    *x = (*x).max(c.get());
                }
            }
        }
        for p in lanes() {
            let t = base + p;
            let row = (t * 32) as usize;
            for (l, kl) in k.iter().enumerate() {
                self.warp[row + l].set(*kl);
            }
            if let Some(named) = named {
                let row = &named[(t * self.size) as usize..][..self.size as usize];
                for (c, x) in row.iter().zip(&row_k) {
                    c.set(c.get().max(*x));
                }
            }
            self.bump(t);
        }
    }

    fn named_rows(&self) -> &[Cell<u32>] {
        self.named.get_or_init(|| cells((self.size * self.size) as usize))
    }

    fn pending_rows(&self) -> &[Cell<u32>] {
        self.pending.get_or_init(|| cells(NAMED * self.size as usize))
    }

    /// Thread `rank` arrives at named barrier `id` (with a thread count): what it knows,
    /// and its accesses so far, go to the threads that wait there.
    pub(crate) fn named_arrive(&self, id: u32, rank: u32) {
        self.dirty.set(true);
        let n = self.size as usize;
        let named = self.named_rows();
        let pending = &self.pending_rows()[id as usize * n..][..n];
        let mine = &named[rank as usize * n..][..n];
        let base = rank - rank % 32;
        for (a, (p, m)) in pending.iter().zip(mine).enumerate() {
            let mut k = m.get();
            if a as u32 / 32 == rank / 32 {
                k = k.max(self.warp[(rank * 32 + a as u32 - base) as usize].get());
            }
            p.set(p.get().max(k));
        }
        let own = &pending[rank as usize];
        own.set(own.get().max(self.seg[rank as usize].get() + 1));
        self.bump(rank);
    }

    /// The current interval's stamp (what an op family's own knowledge rows are tagged with:
    /// a row of an earlier interval is stale, everything in it already ordered).
    pub(crate) fn stamp(&self) -> u64 {
        self.stamp.get()
    }

    /// A row of `size` knowledge entries, for an op family that hands knowledge from some
    /// threads to others outside barriers (an `mbarrier`'s arrivals and waiters).
    pub(crate) fn row(&self) -> Box<[Cell<u32>]> {
        cells(self.size as usize)
    }

    /// Thread `rank` hands on what it knows and its accesses so far to `row` (an arrival at
    /// an `mbarrier`, or a TMA copy's completion): whoever later learns the row
    /// ([`learn`](Self::learn)) is ordered after them.
    pub(crate) fn carry(&self, row: &[Cell<u32>], rank: u32) {
        self.dirty.set(true);
        let n = self.size as usize;
        let base = rank - rank % 32;
        if let Some(named) = self.named.get() {
            for (r, m) in row.iter().zip(&named[rank as usize * n..][..n]) {
                r.set(r.get().max(m.get()));
            }
        }
        for l in 0..32u32 {
            let a = base + l;
            if a < self.size {
                let k = self.warp[(rank * 32 + l) as usize].get();
                let r = &row[a as usize];
                r.set(r.get().max(k));
            }
        }
        let own = &row[rank as usize];
        own.set(own.get().max(self.seg[rank as usize].get() + 1));
        self.bump(rank);
    }

    /// Thread `rank` learns `row` (it observed the completion that the row's arrivals
    /// made): their accesses happen before its next ones.
    pub(crate) fn learn(&self, row: &[Cell<u32>], rank: u32) {
        self.dirty.set(true);
        let n = self.size as usize;
        let named = self.named_rows();
        for (c, r) in named[rank as usize * n..][..n].iter().zip(row) {
            c.set(c.get().max(r.get()));
        }
    }

    /// Named barrier `id` completed: `waiters` learn what its arrivals brought.
    pub(crate) fn named_release(&self, id: u32, waiters: &[u32]) {
        let n = self.size as usize;
        let named = self.named_rows();
        let pending = &self.pending_rows()[id as usize * n..][..n];
        for &w in waiters {
            let row = &named[w as usize * n..][..n];
            for (c, p) in row.iter().zip(pending) {
                c.set(c.get().max(p.get()));
            }
        }
        for p in pending {
            p.set(0);
        }
    }
}

// ---------------------------------------------------------------------------------------
// Global memory.

/// Slice parameters longer than this are not shadowed (32 bytes of shadow per element).
pub const MAX_SHADOWED_ELEMENTS: usize = 1 << 22;

/// The last access to one element of a region, behind the element's lock.
#[derive(Clone, Copy)]
struct GlobalRec {
    /// Interval of its block, counted from 0.
    epoch: u32,
    seg: u32,
    rank: u32,
    atomic: bool,
    site: Option<Site>,
}

/// One element's shadow. `state`: 0 before any access; else the accessing block's linear
/// index + 1, with [`LOCKED`] while a thread compares and updates `rec`.
struct GlobalCell {
    state: AtomicU64,
    rec: UnsafeCell<GlobalRec>,
}

const LOCKED: u64 = 1 << 63;

/// The shadow of one slice parameter of a launch: an element's last access.
pub(crate) struct Region {
    base: usize,
    len: usize,
    elem: usize,
    cells: *mut GlobalCell,
}

// SAFETY: `cells` is owned by the region (freed in `Drop`); every cell's `rec` is read and
// written only under its `state` lock (acquired with a compare-exchange, released with a
// `Release` store), so the region may be shared by the runners of a launch.
unsafe impl Send for Region {}
// SAFETY: as for `Send`.
unsafe impl Sync for Region {}

impl Region {
    fn layout(len: usize) -> Layout {
        Layout::array::<GlobalCell>(len.max(1)).expect("a shadow of at most 2^22 elements")
    }

    fn new(base: usize, len: usize, elem: usize) -> Region {
        let shadowed = len <= MAX_SHADOWED_ELEMENTS && elem != 0;
        let n = if shadowed { len } else { 0 };
        let layout = Region::layout(n);
        // SAFETY: a non-zero size (at least one cell). Zeroed memory is a valid `GlobalCell`:
        // state 0, epoch/seg/rank 0, `false`, `None` (a null reference).
        let cells = unsafe { alloc::alloc_zeroed(layout) } as *mut GlobalCell;
        if cells.is_null() {
            alloc::handle_alloc_error(layout);
        }
        Region { base, len: n, elem, cells }
    }

    fn contains(&self, addr: usize) -> bool {
        addr >= self.base && addr < self.base + self.len * self.elem
    }
}

impl Drop for Region {
    fn drop(&mut self) {
        // SAFETY: allocated in `new` with this layout, freed once.
        unsafe { alloc::dealloc(self.cells as *mut u8, Region::layout(self.len)) };
    }
}

/// A runner's regions, looked up without the launch's lock (a runner's blocks run one
/// after another on one OS thread).
#[derive(Default)]
pub(crate) struct GlobalCache {
    regions: core::cell::RefCell<Vec<Arc<Region>>>,
}

impl Local for GlobalCache {
    fn new(_launch: &Launch) -> GlobalCache {
        GlobalCache::default()
    }

    /// Regions are the launch's: they stay from block to block.
    fn reset(&mut self) {}
}

static GLOBALS: LocalKey<GlobalCache> = LocalKey::new();

/// Notes a slice parameter of `len` elements of `elem` bytes at `base`, so that its
/// element accesses (and atomics on it) are checked. Cheap after the first call of a
/// launch's runner.
pub(crate) fn global_region(base: usize, len: usize, elem: usize) {
    if len == 0 || !super::block::in_launch() {
        return;
    }
    let block = current("slice").block();
    let Some(checker) = block.checker() else { return };
    let cache = GLOBALS.get(block);
    if cache.regions.borrow().iter().any(|r| r.base == base) {
        return;
    }
    let region = {
        let mut all = checker.globals.write().unwrap_or_else(|p| p.into_inner());
        match all.iter().find(|r| r.base == base) {
            Some(r) => r.clone(),
            None => {
                let r = Arc::new(Region::new(base, len, elem));
                all.push(r.clone());
                r
            }
        }
    };
    cache.regions.borrow_mut().push(region);
}

/// What a global access does.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum GlobalAccess {
    /// A write, or a `&mut` handed out (a read and a write).
    Write,
    /// An atomic operation.
    Atomic,
}

/// Records the current thread's access to the element at `addr` of a noted slice
/// parameter (nothing if `addr` is in none, or the launch is not checked); reports a race
/// with the element's last access if the two are unordered and not both atomic.
#[track_caller]
pub(crate) fn global_access(addr: usize, kind: GlobalAccess) {
    let site = Location::caller();
    if !super::block::in_launch() {
        return;
    }
    let ctx = current("slice");
    let block = ctx.block();
    if block.checker().is_none() {
        return;
    }
    // Borrowed, not cloned: the cache keeps the region for the runner's life (a clone's
    // count would be one cache line every runner of the launch writes).
    let cache = GLOBALS.get(block).regions.borrow();
    let Some(region) = cache.iter().find(|r| r.contains(addr)) else { return };
    let i = (addr - region.base) / region.elem;
    // SAFETY: `i < len` (`contains`), inside the region's cells.
    let cell = unsafe { &*region.cells.add(i) };
    let clocks = clocks(block);
    clocks.saw(ctx.rank, site);
    let me = block_linear(block) + 1;
    let mut state = cell.state.load(Ordering::Relaxed);
    loop {
        if state & LOCKED != 0 {
            core::hint::spin_loop();
            state = cell.state.load(Ordering::Relaxed);
            continue;
        }
        match cell.state.compare_exchange_weak(state, state | LOCKED, Ordering::Acquire, Ordering::Relaxed) {
            Ok(_) => break,
            Err(s) => state = s,
        }
    }
    // SAFETY: the lock is ours (acquired above, released below): no other thread reads or
    // writes `rec` meanwhile.
    let prev = unsafe { *cell.rec.get() };
    let atomic = kind == GlobalAccess::Atomic;
    let race = state != 0
        && !(prev.atomic && atomic)
        && (state != me || !clocks.ordered_in_block(prev.epoch, prev.seg, prev.rank, ctx.rank));
    let now = clocks.now(ctx.rank);
    // SAFETY: as above.
    unsafe {
        *cell.rec.get() =
            GlobalRec { epoch: clocks.barriers(), seg: now.seg, rank: ctx.rank, atomic, site: Some(site) };
    }
    cell.state.store(me, Ordering::Release);
    if race {
        let what = |atomic: bool| if atomic { "updates it atomically" } else { "writes it" };
        let first = if state == me {
            access(block, prev.rank, prev.site, what(prev.atomic).into())
        } else {
            let b = block_index(block, state - 1);
            let t = thread_index(block, prev.rank);
            Access { block: b, thread: t, site: site_name(prev.site), what: what(prev.atomic).into() }
        };
        let second = access(block, ctx.rank, Some(site), what(atomic).into());
        let location = format!("element {i} of a slice parameter ({} bytes each, at {:#x})", region.elem, region.base);
        drop(cache);
        fail(block, report(block, CheckKind::GlobalRace, location, first, Some(second)));
    }
}

/// The block's linear index in the grid.
fn block_linear(block: &Block) -> u64 {
    let (b, g) = (block.threads[0].block_idx, block.launch.grid);
    (b.z as u64 * g.y as u64 + b.y as u64) * g.x as u64 + b.x as u64
}

/// The index of block number `linear` of the launch.
fn block_index(block: &Block, linear: u64) -> [u32; 3] {
    let g = block.launch.grid;
    [
        (linear % g.x as u64) as u32,
        (linear / g.x as u64 % g.y as u64) as u32,
        (linear / (g.x as u64 * g.y as u64)) as u32,
    ]
}

/// The thread index of linear rank `rank` in a block of the launch.
fn thread_index(block: &Block, rank: u32) -> [u32; 3] {
    let d = block.launch.block;
    [rank % d.x, rank / d.x % d.y, rank / (d.x * d.y)]
}
