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
use crate::cpu::check::{self, Clocks, Site, Stamp};

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

/// One recorded access (16 bytes; `stamp == 0`: none).
#[derive(Clone, Copy, Default, PartialEq, Eq)]
struct Rec {
    stamp: u64,
    seg: u32,
    rank: u16,
    atomic: bool,
}

impl Rec {
    fn of(now: Stamp, atomic: bool) -> Rec {
        Rec { stamp: now.stamp, seg: now.seg, rank: now.rank as u16, atomic }
    }

    fn stamp(self) -> Stamp {
        Stamp { stamp: self.stamp, seg: self.seg, rank: self.rank as u32 }
    }
}

/// One byte's records: the last write, two reads, and their sites.
struct Byte {
    w: Cell<Rec>,
    r: [Cell<Rec>; 2],
    sites: [Cell<Option<Site>>; 3],
}

/// A block's shadow: one [`Byte`] per byte of the arena's capacity. Zeroed memory is
/// "never accessed"; it is never cleared (stamps tell blocks apart).
pub(crate) struct Shadow {
    bytes: *mut Byte,
    len: usize,
}

impl Shadow {
    fn layout(len: usize) -> Layout {
        Layout::array::<Byte>(len.max(1)).expect("a shadow of at most the arena's size")
    }
}

impl Local for Shadow {
    fn new(launch: &Launch) -> Shadow {
        let len = Arena::capacity_for(launch.dynamic_shared_bytes);
        let layout = Shadow::layout(len);
        // SAFETY: a non-zero size. Zeroed memory is a valid `Byte`: `Rec`s of zeros, `None`
        // sites (null references).
        let bytes = unsafe { alloc::alloc_zeroed(layout) } as *mut Byte;
        if bytes.is_null() {
            alloc::handle_alloc_error(layout);
        }
        Shadow { bytes, len }
    }

    /// Nothing: a record of an earlier block has a stamp below the block's base.
    fn reset(&mut self) {}
}

impl Drop for Shadow {
    fn drop(&mut self) {
        // SAFETY: allocated in `new` with this layout, freed once.
        unsafe { alloc::dealloc(self.bytes as *mut u8, Shadow::layout(self.len)) };
    }
}

/// The thread of a byte's write record when a generic pointer was made to its variable
/// before any visible write ([`Shadow::escape`]): a write the checker cannot see, which
/// races with nothing.
const UNSEEN: u16 = u16::MAX;

impl Shadow {
    /// Marks the bytes at `addr..addr + len` that no visible access has written in this
    /// block as written by an [`UNSEEN`] thread: a generic pointer was made to them, and
    /// plain Rust writes through it are invisible here (no read of them is reported as
    /// uninitialised then).
    pub(super) fn escape(&self, clocks: &Clocks, addr: u32, len: u32) {
        let base = clocks.base();
        let end = (addr as usize + len as usize).min(self.len);
        for i in addr as usize..end {
            // SAFETY: `i < len`: inside the shadow.
            let b = unsafe { &*self.bytes.add(i) };
            if b.w.get().stamp < base {
                b.w.set(Rec { stamp: base, seg: 0, rank: UNSEEN, atomic: true });
                b.sites[0].set(None);
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
        clocks.saw(rank, site);
        let now = clocks.now(rank);
        let base = clocks.base();
        let atomic = kind.atomic();
        let me = Rec::of(now, atomic);
        let end = (addr as usize + len).min(self.len);
        let mut uninit = false;
        for i in addr as usize..end {
            // SAFETY: `i < len`: inside the shadow.
            let b = unsafe { &*self.bytes.add(i) };
            let w = b.w.get();
            let written = w.stamp >= base;
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
            if written && w.rank != UNSEEN && !(w.atomic && atomic) && !clocks.ordered(w.stamp(), rank) {
                let what = if w.atomic { "updates it atomically" } else { "writes it" };
                return self.race(block, arena, (w, what, b.sites[0].get()), (rank, kind, site), addr, len);
            }
            if kind.writes() {
                for (slot, s) in b.r.iter().zip(&b.sites[1..]) {
                    let r = slot.get();
                    if r.stamp >= base && !(r.atomic && atomic) && !clocks.ordered(r.stamp(), rank) {
                        let what = if r.atomic { "reads it atomically" } else { "reads it" };
                        return self.race(block, arena, (r, what, s.get()), (rank, kind, site), addr, len);
                    }
                }
                b.w.set(me);
                b.sites[0].set(Some(site));
                b.r[0].set(Rec::default());
                b.r[1].set(Rec::default());
            } else {
                // A read: refresh this thread's slot, or take a free one, or one of an
                // earlier interval; else keep the two there.
                let mine = b.r.iter().position(|s| {
                    let s = s.get();
                    s.stamp == me.stamp && s.rank == me.rank
                });
                let slot = mine.or_else(|| b.r.iter().position(|s| s.get().stamp < me.stamp));
                if let Some(k) = slot.filter(|&k| b.r[k].get() != me) {
                    b.r[k].set(me);
                    b.sites[1 + k].set(Some(site));
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
        let first = check::access(block, prev.rank as u32, prev_site, what.into());
        let second = check::access(block, rank, Some(site), kind.what().into());
        let location: String = arena.describe(addr, len);
        check::fail(block, check::report(block, CheckKind::SharedRace, location, first, Some(second)));
    }
}
