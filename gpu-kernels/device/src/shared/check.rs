//! The checking mode's shadow of a block's shared memory (the `shared` family's CPU side,
//! beside the arena): per byte, the last write and up to two reads by the block's threads,
//! each with the interval and segment it was made in (`cpu/check.rs`'s clocks) and its
//! source line.
//!
//! An access is checked against what the byte's record holds:
//!
//! * a read, or an atomic read-modify-write, of a byte no thread of the block has written
//!   yet: a read of uninitialised shared memory (on the CPU the byte holds
//!   [`SHARED_POISON`](crate::cpu::SHARED_POISON); on a GPU, what the previous block left),
//!   reported when the interval ends (the next block barrier, or the block's end) unless
//!   a write of another thread in the same interval makes it a race first;
//! * a read of a byte whose last write is by another thread and not ordered before it,
//!   a write of a byte with such a write or such a read: a data race, unless both are
//!   atomic.
//!
//! Plain Rust accesses through a generic pointer (`as_generic_ptr`, `to_generic`, a
//! `shared_static!`'s `Deref`, `shared_array![T; N]`, `dynamic_shared_ptr`) are invisible
//! here; once such a pointer is made to a variable, its bytes no visible access wrote
//! count as written (by an unseen thread), so that no read of them is reported as
//! uninitialised.
//!
//! A write replaces the byte's records (a later access that races with an earlier one
//! ordered before this write races with this write too). A read fills a free slot, or one
//! of an earlier interval; when both slots hold reads of other threads in this interval it
//! is not recorded (a write later in the interval races with at least one of them, unless
//! a `sync_warp` ordered them: the one race that may then go unseen). Records of another
//! block are told apart by their interval's stamp, so nothing is cleared between blocks.

use core::cell::Cell;
use std::alloc::{self, Layout};
use std::string::String;

use sluice_host::CheckKind;

use super::arena::Arena;
use crate::cpu::block::{Block, Launch, Local};
use crate::cpu::check::{self, Clocks, Site, Stamp, MAX_SEG};

/// What an access does to the bytes.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Kind {
    Read,
    Write,
    /// An atomic read-modify-write (`atom`, `red`).
    AtomicRmw,
    /// An atomic load.
    AtomicRead,
    /// An atomic store.
    AtomicWrite,
}

impl Kind {
    fn reads(self) -> bool {
        matches!(self, Kind::Read | Kind::AtomicRmw | Kind::AtomicRead)
    }

    fn writes(self) -> bool {
        matches!(self, Kind::Write | Kind::AtomicRmw | Kind::AtomicWrite)
    }

    fn atomic(self) -> bool {
        matches!(self, Kind::AtomicRmw | Kind::AtomicRead | Kind::AtomicWrite)
    }

    /// How a report says it.
    fn what(self) -> &'static str {
        match self {
            Kind::Read => "reads it",
            Kind::Write => "writes it",
            Kind::AtomicRmw => "updates it atomically",
            Kind::AtomicRead => "reads it atomically",
            Kind::AtomicWrite => "writes it atomically",
        }
    }
}

/// One recorded access in 8 bytes: the interval's stamp relative to the shadow's
/// `offset` (high 32 bits; 0: no access), the thread's segment (20 bits), the thread (11
/// bits) and whether it was atomic (the low bit).
#[derive(Clone, Copy, Default, PartialEq, Eq)]
struct Rec(u64);

impl Rec {
    fn new(stamp: u32, seg: u32, rank: u32, atomic: bool) -> Rec {
        debug_assert!(seg <= MAX_SEG && rank <= UNSEEN);
        Rec((stamp as u64) << 32 | (seg as u64) << 12 | (rank as u64) << 1 | atomic as u64)
    }

    fn stamp(self) -> u32 {
        (self.0 >> 32) as u32
    }

    fn seg(self) -> u32 {
        (self.0 >> 12) as u32 & MAX_SEG
    }

    fn rank(self) -> u32 {
        (self.0 >> 1) as u32 & UNSEEN
    }

    fn atomic(self) -> bool {
        self.0 & 1 != 0
    }
}

/// One byte's records: the last write and two reads (24 bytes).
struct Byte {
    w: Cell<Rec>,
    r: [Cell<Rec>; 2],
}

/// Where each of a [`Byte`]'s records was made (apart: only reports read them).
type Sites = [Cell<Option<Site>>; 3];

/// A block's shadow: one [`Byte`] and its [`Sites`] per byte of the arena's capacity.
/// Zeroed memory is "never accessed"; it is never cleared (stamps tell blocks apart).
pub(crate) struct Shadow {
    bytes: *mut Byte,
    sites: *mut Sites,
    len: usize,
    /// What the clocks' stamps are stored relative to (so that they fit 32 bits).
    offset: Cell<u64>,
    /// The base stamp of the block last seen (a new one may move `offset`).
    seen: Cell<u64>,
}

/// Zeroed memory for `len` values of `T`, which must be valid as all zeros.
fn zeroed<T>(len: usize) -> *mut T {
    let layout = Layout::array::<T>(len.max(1)).expect("a shadow of at most the arena's size");
    // SAFETY: a non-zero size.
    let p = unsafe { alloc::alloc_zeroed(layout) } as *mut T;
    if p.is_null() {
        alloc::handle_alloc_error(layout);
    }
    p
}

/// Frees what [`zeroed`] gave.
///
/// # Safety
/// `p` came from `zeroed::<T>(len)` and is freed once.
unsafe fn free<T>(p: *mut T, len: usize) {
    let layout = Layout::array::<T>(len.max(1)).expect("a shadow of at most the arena's size");
    // SAFETY: allocated with this layout (the caller's duty).
    unsafe { alloc::dealloc(p as *mut u8, layout) };
}

impl Shadow {
    /// A block's first access: if its stamps no longer fit 32 bits past `offset`, every
    /// record goes (none is of this block yet) and stamps restart.
    #[inline(always)]
    fn enter(&self, clocks: &Clocks) {
        let base = clocks.base();
        if base == self.seen.replace(base) {
            return;
        }
        if base - self.offset.get() > (u32::MAX / 2) as u64 {
            // SAFETY: both arrays hold `len` elements; all-zero bytes are valid (see `new`),
            // and no reference into them is held across this call.
            unsafe {
                core::ptr::write_bytes(self.bytes, 0, self.len);
                core::ptr::write_bytes(self.sites, 0, self.len);
            }
            self.offset.set(base - 1);
        }
    }

    /// Stamp `stamp` of the clocks as stored in a [`Rec`] (at least 1 for this block's).
    #[inline(always)]
    fn rel(&self, stamp: u64) -> u32 {
        (stamp - self.offset.get()) as u32
    }

    /// A record as the clocks compare it.
    #[inline(always)]
    fn stamp_of(&self, r: Rec) -> Stamp {
        Stamp { stamp: r.stamp() as u64 + self.offset.get(), seg: r.seg(), rank: r.rank() }
    }

    /// Byte `i`'s records and their sites.
    #[inline(always)]
    fn at(&self, i: usize) -> (&Byte, &Sites) {
        debug_assert!(i < self.len);
        // SAFETY: `i < len` (every caller clamps to it): inside both arrays, which live as
        // long as `self`.
        unsafe { (&*self.bytes.add(i), &*self.sites.add(i)) }
    }
}

impl Local for Shadow {
    fn new(launch: &Launch) -> Shadow {
        let len = Arena::capacity_for(launch.dynamic_shared_bytes);
        // Zeroed memory is a valid `Byte` (`Rec`s of zeros) and valid `Sites` (`None`: null
        // references).
        Shadow { bytes: zeroed(len), sites: zeroed(len), len, offset: Cell::new(0), seen: Cell::new(0) }
    }

    /// Nothing: a record of an earlier block has a stamp below the block's base.
    fn reset(&mut self) {}
}

impl Drop for Shadow {
    fn drop(&mut self) {
        // SAFETY: allocated in `new` by `zeroed` with this length, freed once.
        unsafe {
            free(self.bytes, self.len);
            free(self.sites, self.len);
        }
    }
}

/// The thread of a byte's write record when a generic pointer was made to its variable
/// before any visible write ([`Shadow::escape`]): a write the checker cannot see, which
/// races with nothing. (Threads' linear ranks are below 1024.)
const UNSEEN: u32 = (1 << 11) - 1;

impl Shadow {
    /// Marks the bytes at `addr..addr + len` that no visible access has written in this
    /// block as written by an [`UNSEEN`] thread: a generic pointer was made to them, and
    /// plain Rust writes through it are invisible here (no read of them is reported as
    /// uninitialised then).
    pub(super) fn escape(&self, clocks: &Clocks, addr: u32, len: u32) {
        self.enter(clocks);
        let base = self.rel(clocks.base());
        let end = (addr as usize + len as usize).min(self.len);
        for i in addr as usize..end {
            let (b, sites) = self.at(i);
            if b.w.get().stamp() < base {
                b.w.set(Rec::new(base, 0, UNSEEN, true));
                sites[0].set(None);
            }
        }
    }

    /// Checks and records thread `rank`'s access of kind `kind` to the `len` bytes at
    /// window address `addr` (inside the arena: the caller checked it); on a bug, fails
    /// the block with its report (and unwinds the calling thread).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn access(
        &self,
        block: &Block,
        arena: &Arena,
        clocks: &Clocks,
        rank: u32,
        addr: u32,
        len: usize,
        kind: Kind,
        site: Site,
    ) {
        self.enter(clocks);
        clocks.saw(rank, site);
        let now = clocks.now(rank);
        let base = self.rel(clocks.base());
        let atomic = kind.atomic();
        let me = Rec::new(self.rel(now.stamp), now.seg, rank, atomic);
        let (start, end) = (addr as usize, (addr as usize + len).min(self.len));
        // The common case: every byte of the access holds the same records (an element
        // written and read whole). Then the first byte is checked and its new records
        // copied to the others: three loads and compares per byte instead of the checks.
        let records = |i: usize| {
            let (b, _) = self.at(i);
            (b.w.get(), b.r[0].get(), b.r[1].get())
        };
        let before = records(start);
        let uniform = (start + 1..end).all(|i| records(i) == before);
        let checked_end = if uniform { (start + 1).min(end) } else { end };
        let mut uninit = false;
        for i in start..checked_end {
            let (b, sites) = self.at(i);
            let w = b.w.get();
            let written = w.stamp() >= base;
            if kind.reads() && !written && !uninit {
                // Reported when the interval ends, unless a write of another thread in the
                // interval turns it into a race first (the read came before the write).
                uninit = true;
                let location = arena.describe(addr, len);
                let first = check::access(block, rank, Some(site), kind.what().into());
                let r = check::report(
                    block,
                    CheckKind::UninitShared,
                    location + ", never written in this block",
                    first,
                    None,
                );
                clocks.defer(r);
            }
            if written && w.rank() != UNSEEN && !(w.atomic() && atomic) && !clocks.ordered(self.stamp_of(w), rank) {
                let what = if w.atomic() { "updates it atomically" } else { "writes it" };
                return self.race(block, arena, (w, what, sites[0].get()), (rank, kind, site), addr, len);
            }
            if kind.writes() {
                for (slot, s) in b.r.iter().zip(&sites[1..]) {
                    let r = slot.get();
                    if r.stamp() >= base && !(r.atomic() && atomic) && !clocks.ordered(self.stamp_of(r), rank) {
                        let what = if r.atomic() { "reads it atomically" } else { "reads it" };
                        return self.race(block, arena, (r, what, s.get()), (rank, kind, site), addr, len);
                    }
                }
                b.w.set(me);
                sites[0].set(Some(site));
                b.r[0].set(Rec::default());
                b.r[1].set(Rec::default());
            } else {
                // A read: refresh this thread's slot, or take a free one, or one of an
                // earlier interval; else keep the two there.
                let mine = b.r.iter().position(|s| {
                    let s = s.get();
                    s.stamp() == me.stamp() && s.rank() == rank
                });
                let slot = mine.or_else(|| b.r.iter().position(|s| s.get().stamp() < me.stamp()));
                if let Some(k) = slot.filter(|&k| b.r[k].get() != me) {
                    b.r[k].set(me);
                    sites[1 + k].set(Some(site));
                }
            }
        }
        if uniform && records(start) != before {
            let (b0, s0) = self.at(start);
            for i in start + 1..end {
                let (b, sites) = self.at(i);
                b.w.set(b0.w.get());
                b.r[0].set(b0.r[0].get());
                b.r[1].set(b0.r[1].get());
                for (s, s0) in sites.iter().zip(s0) {
                    s.set(s0.get());
                }
            }
        }
    }

    #[cold]
    #[inline(never)]
    fn race(
        &self,
        block: &Block,
        arena: &Arena,
        (prev, what, prev_site): (Rec, &'static str, Option<Site>),
        (rank, kind, site): (u32, Kind, Site),
        addr: u32,
        len: usize,
    ) {
        let first = check::access(block, prev.rank(), prev_site, what.into());
        let second = check::access(block, rank, Some(site), kind.what().into());
        let location: String = arena.describe(addr, len);
        check::fail(block, check::report(block, CheckKind::SharedRace, location, first, Some(second)));
    }
}
