//! TMA copies and `mbarrier`s on the CPU runtime.
//!
//! A barrier is the block's own record (the family's per-block state, keyed by the
//! barrier's shared address): the arrivals it expects, those still missing in the current
//! phase, the bytes of copies still to land, the phase. A copy reads its box from the
//! matrix the host's description names (address, rows, columns, element size: what the
//! CPU backend's launch writes in place of a `CUtensorMap`), writes it swizzled into shared
//! memory at the issue, through [`SharedPtr`] (bounds-checked, seen by the checking mode as
//! the issuing thread's writes), and completes its bytes on the barrier. A waiter parks (a
//! [`Rendezvous`] of its own) until the phase it waits for completes; one that would wait
//! for ever (a consumer left waiting for a stage no one fills) is the runtime's deadlock
//! report, naming the barrier.
//!
//! In the checking mode, each barrier hands on knowledge as a named barrier does: an
//! arrival (and a copy's completion, after its writes) carries what the thread knows into
//! the phase, and a thread whose wait sees the phase complete learns it.

use core::cell::{Cell, RefCell};
use std::boxed::Box;
use std::vec::Vec;

use std::format;
use std::panic::Location;
use std::string::String;

use crate::cpu::block::{current, suspend, Block, Launch, Local, LocalKey, Rendezvous, Wait};
use crate::cpu::check;
use crate::shared::SharedPtr;
use crate::spec::layout::swizzle;

/// A knowledge row of the checking mode, tagged with the interval it belongs to.
type Row = RefCell<Option<(u64, Box<[Cell<u32>]>)>>;

/// One barrier.
struct Bar {
    addr: u32,
    expected: u32,
    missing: Cell<u32>,
    tx: Cell<i64>,
    /// Completed phases so far.
    phase: Cell<u32>,
    /// Checking mode: what this phase's arrivals carry, and what the completed phases
    /// carried (each tagged with the interval it belongs to).
    carried: Row,
    done: Row,
}

/// The block's barriers.
struct Bars(RefCell<Vec<Bar>>);

impl Local for Bars {
    fn new(_launch: &Launch) -> Bars {
        Bars(RefCell::new(Vec::new()))
    }

    fn reset(&mut self) {
        self.0.get_mut().clear();
    }
}

static BARS: LocalKey<Bars> = LocalKey::new();

/// Threads parked in `mbarrier.try_wait.parity`: tag `2 i + parity`, `i` the barrier's
/// index in the block's table.
struct MbarrierWait {
    _kind: u8,
}

static WAITING: MbarrierWait = MbarrierWait { _kind: 0 };

impl Rendezvous for MbarrierWait {
    fn name(&self) -> &'static str {
        "mbarrier"
    }

    fn describe(&self, block: &Block, _rank: u32, tag: u32) -> String {
        let bars = BARS.get(block).0.borrow();
        match bars.get((tag / 2) as usize) {
            Some(b) => format!(
                "mbarrier at shared address {:#x}, for the phase of parity {} ({} of {} arrivals and {} bytes missing; \
                 every consumer must wait for and release each stage the producer fills, and the producer fill each \
                 stage the consumers wait for)",
                b.addr,
                tag % 2,
                b.missing.get(),
                b.expected,
                b.tx.get()
            ),
            None => String::from("an mbarrier"),
        }
    }

    fn label(&self, block: &Block, _rank: u32, tag: u32) -> String {
        let bars = BARS.get(block).0.borrow();
        bars.get((tag / 2) as usize)
            .map_or_else(|| String::from("at an mbarrier"), |b| format!("at the mbarrier at {:#x}", b.addr))
    }
}

#[track_caller]
fn with_bar<R>(what: &'static str, bar: u32, f: impl FnOnce(&Bar, usize, u32, &Block) -> R) -> R {
    let ctx = current(what);
    let block = ctx.block();
    let bars = BARS.get(block).0.borrow();
    let Some(index) = bars.iter().position(|b| b.addr == bar) else {
        panic!("{what}: no mbarrier was initialised at shared address {bar:#x}");
    };
    f(&bars[index], index, ctx.rank, block)
}

/// The checking mode's row of `slot` for the current interval (fresh if it is stale).
fn row_of<'a>(slot: &'a Row, clocks: &check::Clocks) -> core::cell::RefMut<'a, Box<[Cell<u32>]>> {
    let mut s = slot.borrow_mut();
    let stamp = clocks.stamp();
    if s.as_ref().is_none_or(|(t, _)| *t != stamp) {
        *s = Some((stamp, clocks.row()));
    }
    core::cell::RefMut::map(s, |s| &mut s.as_mut().expect("set above").1)
}

/// The phase completes if nothing is missing: its carried knowledge joins what the
/// completed phases carried, and the threads waiting for it go on.
fn maybe_complete(b: &Bar, index: usize, block: &Block) {
    if b.missing.get() != 0 || b.tx.get() != 0 {
        return;
    }
    b.phase.set(b.phase.get() + 1);
    b.missing.set(b.expected);
    if block.checker().is_some() {
        let clocks = check::clocks(block);
        let carried = row_of(&b.carried, clocks);
        let done = row_of(&b.done, clocks);
        for (d, c) in done.iter().zip(carried.iter()) {
            d.set(d.get().max(c.get()));
            c.set(0);
        }
    }
    // The phase that completed has the parity the waiters for it named.
    let tag = 2 * index as u32 + ((b.phase.get() - 1) & 1);
    for t in 0..block.size {
        if block.threads[t as usize].state.get().parked_in(&WAITING) == Some(tag) {
            block.make_ready(t);
        }
    }
}

/// Thread `rank`'s arrival (and what it carries, in the checking mode).
fn arrival(b: &Bar, rank: u32, block: &Block) {
    if block.checker().is_some() {
        let clocks = check::clocks(block);
        clocks.carry(&row_of(&b.carried, clocks), rank);
    }
    match b.missing.get() {
        0 => panic!("mbarrier.arrive: more arrivals than the barrier at {:#x} expects in one phase", b.addr),
        n => b.missing.set(n - 1),
    }
}

/// A kernel's tensor-map parameter on the CPU: the host's description of the matrix (its
/// address, rows, columns, element size, then zeros).
pub type MapRef = [u64; 16];

/// # Safety
///
/// None beyond the GPU's (kept for the same signature): the runtime checks the address.
#[track_caller]
#[allow(clippy::extra_unused_type_parameters)] // the GPU side checks its architecture per `S`
pub(super) unsafe fn init<S>(bar: u32, count: u32) {
    let ctx = current("mbarrier.init");
    // Its bytes are the barrier's from now on: a plain access, a TMA copy landing on them or
    // a second barrier set up over this one (a second pipeline) is a panic.
    crate::shared::imp::reserve8(bar, "mbarrier");
    let mut bars = BARS.get(ctx.block()).0.borrow_mut();
    bars.push(Bar {
        addr: bar,
        expected: count,
        missing: Cell::new(count),
        tx: Cell::new(0),
        phase: Cell::new(0),
        carried: RefCell::new(None),
        done: RefCell::new(None),
    });
}

/// Nothing on the CPU: the block barrier that follows orders the inits.
pub(super) fn fence_init() {}

/// # Safety
///
/// None beyond the GPU's: the runtime checks the address.
#[track_caller]
pub(super) unsafe fn arrive(bar: u32) {
    with_bar("mbarrier.arrive", bar, |b, index, rank, block| {
        arrival(b, rank, block);
        maybe_complete(b, index, block);
    });
}

/// # Safety
///
/// None beyond the GPU's: the runtime checks the address.
#[track_caller]
pub(super) unsafe fn arrive_expect_tx(bar: u32, bytes: u32) {
    with_bar("mbarrier.arrive.expect_tx", bar, |b, index, rank, block| {
        b.tx.set(b.tx.get() + bytes as i64);
        arrival(b, rank, block);
        maybe_complete(b, index, block);
    });
}

/// # Safety
///
/// None beyond the GPU's: the runtime checks the address.
#[track_caller]
pub(super) unsafe fn wait_parity(bar: u32, parity: u32) {
    let site = Location::caller();
    loop {
        let parked = with_bar("mbarrier.try_wait.parity", bar, |b, index, rank, block| {
            // The phase of parity `parity` is complete when the current one's differs.
            if b.phase.get() & 1 != parity {
                if block.checker().is_some() {
                    let clocks = check::clocks(block);
                    clocks.learn(&row_of(&b.done, clocks), rank);
                }
                return None;
            }
            Some(2 * index as u32 + parity)
        });
        let Some(tag) = parked else { return };
        let ctx = current("mbarrier.try_wait.parity");
        suspend(ctx, Wait::Parked(&WAITING, tag), site);
    }
}

/// The box of `box_rows × box_cols` elements at column `x`, row `y` of the matrix the
/// host's description `words` names (address, rows, columns, element size), written into
/// the 128-byte-swizzled tile at `dst` (zeros outside the matrix); its bytes complete on
/// `bar`.
///
/// # Safety
///
/// `words` is a description the CPU backend's launch wrote for a view the launch may read.
#[track_caller]
pub(super) unsafe fn load_2d(dst: u32, words: &MapRef, x: i32, y: i32, bar: u32, (box_rows, box_cols): (usize, usize)) {
    let (base, rows, cols, elem) = (words[0] as usize, words[1] as usize, words[2] as usize, words[3] as usize);
    let row_bytes = box_cols * elem;
    let (x, y) = (x as usize, y as usize);
    for r in 0..box_rows {
        for c in 0..box_cols {
            let (gr, gc) = (y + r, x + c);
            let at = swizzle((r * box_cols + c) * elem, row_bytes) as u32;
            for e in 0..elem {
                let v = if gr < rows && gc < cols {
                    // SAFETY: inside the `rows x cols` matrix of `elem`-byte elements at
                    // `base`, which the launch may read (the caller's contract).
                    unsafe { ((base + (gr * cols + gc) * elem + e) as *const u8).read() }
                } else {
                    0
                };
                // SAFETY: inside the destination tile (the runtime bounds-checks the block's
                // shared memory).
                unsafe { SharedPtr::<u8>::from_addr(dst + at + e as u32).write(v) };
            }
        }
    }
    with_bar("cp.async.bulk.tensor", bar, |b, index, rank, block| {
        if block.checker().is_some() {
            // The copy's writes, carried into the phase its bytes complete.
            let clocks = check::clocks(block);
            clocks.carry(&row_of(&b.carried, clocks), rank);
        }
        b.tx.set(b.tx.get() - (box_rows * box_cols * elem) as i64);
        maybe_complete(b, index, block);
    });
}

/// Nothing on the CPU: one register file.
pub(super) fn set_max_registers_dec<const N: u32>() {}

/// Nothing on the CPU: one register file.
pub(super) fn set_max_registers_inc<const N: u32>() {}
