//! A block's shared memory on the CPU (the `shared` family's per-block state in
//! the CPU runtime): one buffer per block, addressed like PTX's `.shared` window
//! (a 32-bit offset, [`SharedPtr`](crate::shared::SharedPtr)'s `addr`), the same
//! for every thread of the block.
//!
//! Layout: the dynamic region at window address 0 (16-aligned, the size given
//! at launch), then the static variables (`shared_array!`, `shared_static!`)
//! in the order the block first uses them, each aligned as on the device. A
//! static variable is allocated by the first thread of the block that reaches
//! it, keyed by its declaration's hash, and keeps its address for the rest of
//! the block. Every byte starts as [`SHARED_POISON`](crate::cpu::SHARED_POISON): on a GPU
//! shared memory starts with whatever the previous block left, and a read of
//! an unwritten element must not look plausible.

use core::cell::{Cell, RefCell};
use std::alloc::{self, Layout};
use std::format;
use std::panic::Location;
use std::string::String;
use std::vec::Vec;

use crate::cpu::block::{Launch, Local};
use crate::cpu::SHARED_POISON;

/// Static shared memory per block, at most (as ptxas: 48 KiB).
const STATIC_LIMIT: usize = 48 * 1024;

/// Alignment of the buffer (the largest a variable may ask for on the CPU).
const BASE_ALIGN: usize = 4096;

/// One block's shared memory. Reused for the blocks one runner executes.
pub(super) struct Arena {
    base: *mut u8,
    cap: usize,
    /// End of the allocated part (dynamic region + statics so far).
    used: Cell<usize>,
    dynamic: u32,
    static_bytes: Cell<usize>,
    /// (declaration hash, type name, window address, bytes, where first used) of the
    /// statics allocated so far.
    symbols: RefCell<Vec<Symbol>>,
    /// The checking mode's: the statics (by index in `symbols`) and whether the dynamic
    /// region a generic pointer was made to in this block (see [`Arena::escape`]).
    escaped: RefCell<Vec<bool>>,
    dynamic_escaped: Cell<bool>,
    /// Bytes another family owns for the block's lifetime, which plain accesses must not
    /// touch (an `mbarrier`'s 8 bytes: `(address, what)`), sorted by address.
    reserved: RefCell<Vec<(u32, &'static str)>>,
}

/// A static variable of a block: (declaration hash, type name, window address, bytes,
/// where first used).
type Symbol = (u64, &'static str, u32, u32, &'static Location<'static>);

const fn round_up(x: usize, a: usize) -> usize {
    (x + a - 1) & !(a - 1)
}

impl Local for Arena {
    fn new(launch: &Launch) -> Arena {
        Arena::with_dynamic(launch.dynamic_shared_bytes)
    }

    /// Starts a block: the dynamic region poisoned, no static variable yet.
    fn reset(&mut self) {
        let d = self.dynamic as usize;
        // SAFETY: `d <= cap`, inside the allocation.
        unsafe { self.base.write_bytes(SHARED_POISON, d) };
        self.used.set(round_up(d, 16));
        self.static_bytes.set(0);
        self.symbols.get_mut().clear();
        self.escaped.get_mut().clear();
        self.dynamic_escaped.set(false);
        self.reserved.get_mut().clear();
    }
}

impl Arena {
    /// Bytes the buffer of a block with `dynamic` bytes of dynamic shared memory holds:
    /// every window address is below it.
    pub(super) fn capacity_for(dynamic: u32) -> usize {
        round_up(dynamic as usize, 16) + STATIC_LIMIT + BASE_ALIGN
    }

    fn with_dynamic(dynamic: u32) -> Arena {
        let cap = Arena::capacity_for(dynamic);
        let layout = Layout::from_size_align(cap, BASE_ALIGN).expect("shared memory layout");
        // SAFETY: `layout` has a non-zero size (at least STATIC_LIMIT).
        let base = unsafe { alloc::alloc(layout) };
        if base.is_null() {
            alloc::handle_alloc_error(layout);
        }
        Arena {
            base,
            cap,
            used: Cell::new(0),
            dynamic,
            static_bytes: Cell::new(0),
            symbols: RefCell::new(Vec::new()),
            escaped: RefCell::new(Vec::new()),
            dynamic_escaped: Cell::new(false),
            reserved: RefCell::new(Vec::new()),
        }
    }

    /// Bytes of dynamic shared memory of the launch.
    pub(super) fn dynamic_bytes(&self) -> u32 {
        self.dynamic
    }

    /// Dynamic plus the static variables allocated so far.
    pub(super) fn total_bytes(&self) -> u32 {
        self.dynamic + self.static_bytes.get() as u32
    }

    /// The window address of static variable `hash` (`bytes` long, aligned to
    /// `align`), allocated and poisoned on the block's first use.
    ///
    /// # Panics
    ///
    /// If the block's static shared memory would pass 48 KiB, or the hash was
    /// declared with another size.
    ///
    /// A variable is its hash *and* its type (`ty`, the type's name), as on the GPU, where
    /// `declare::<T, H>` is a function of its own per `T`: two declarations that share a
    /// hash (one macro expanding `shared_array!` twice) get one variable each when their
    /// types differ.
    #[track_caller]
    pub(super) fn declare(&self, hash: u64, ty: &'static str, bytes: usize, align: usize) -> u32 {
        let bytes = bytes.max(1);
        let same = |s: &&Symbol| s.0 == hash && (core::ptr::eq(s.1, ty) || s.1 == ty);
        if let Some(&(_, _, addr, n, _)) = self.symbols.borrow().iter().find(same) {
            assert_eq!(n as usize, bytes, "shared memory: one declaration used with two sizes");
            return addr;
        }
        let align = align.clamp(1, BASE_ALIGN);
        let addr = round_up(self.used.get(), align);
        let total = self.static_bytes.get() + bytes;
        if total > STATIC_LIMIT || addr + bytes > self.cap {
            panic!(
                "shared memory: this block's static shared variables need {total} bytes, more than the \
                 {STATIC_LIMIT} a kernel may declare (ptxas refuses it on the GPU; use dynamic shared memory)"
            );
        }
        // SAFETY: `addr + bytes <= cap` (checked above), inside the allocation.
        unsafe { self.base.add(addr).write_bytes(SHARED_POISON, bytes) };
        self.used.set(addr + bytes);
        self.static_bytes.set(total);
        self.symbols.borrow_mut().push((hash, ty, addr as u32, bytes as u32, Location::caller()));
        addr as u32
    }

    /// The window address of host address `p`, if it is inside this block's allocated
    /// shared memory (a generic pointer to shared memory).
    #[inline(always)]
    pub(super) fn window_of(&self, p: usize) -> Option<u32> {
        let base = self.base as usize;
        (p >= base && p < base + self.used.get()).then(|| (p - base) as u32)
    }

    /// Notes that a generic pointer was made to window address `addr`: the variable
    /// holding it (or the dynamic region) may be written through plain Rust accesses,
    /// which the checking mode cannot see. Returns that variable's (address, bytes) the
    /// first time in the block, `None` after (or outside every variable).
    pub(super) fn escape(&self, addr: u32) -> Option<(u32, u32)> {
        if addr < self.dynamic {
            return (!self.dynamic_escaped.replace(true)).then_some((0, self.dynamic));
        }
        let symbols = self.symbols.borrow();
        let i = symbols.iter().position(|s| addr >= s.2 && addr < s.2 + s.3)?;
        let mut escaped = self.escaped.borrow_mut();
        if escaped.len() < symbols.len() {
            escaped.resize(symbols.len(), false);
        }
        (!std::mem::replace(&mut escaped[i], true)).then_some((symbols[i].2, symbols[i].3))
    }

    /// `bytes 8..12 of the shared variable declared at src/lib.rs:12:16`: where the `len`
    /// bytes at window address `addr` are, for a report.
    pub(super) fn describe(&self, addr: u32, len: usize) -> String {
        let end = addr as usize + len;
        if addr < self.dynamic {
            return format!("bytes {addr}..{end} of the dynamic shared memory");
        }
        match self.symbols.borrow().iter().find(|s| addr >= s.2 && addr < s.2 + s.3) {
            Some(&(_, _, start, _, site)) => {
                format!("bytes {}..{} of the shared variable declared at {site}", addr - start, end - start as usize)
            }
            None => format!("bytes {addr:#x}..{end:#x} of shared memory"),
        }
    }

    /// The host address of window address `addr` (no check: making a pointer
    /// is safe, using it is the caller's business, as on the device).
    #[inline(always)]
    pub(super) fn generic(&self, addr: u32) -> *mut u8 {
        self.base.wrapping_add(addr as usize)
    }

    /// The host address of `len` bytes at window address `addr`.
    ///
    /// # Panics
    ///
    /// If they are not all inside this block's allocated shared memory (on a
    /// GPU such an access reads or writes another variable, or faults).
    #[inline(always)]
    #[track_caller]
    pub(super) fn checked(&self, addr: u32, len: usize) -> *mut u8 {
        let end = addr as usize + len;
        if end > self.used.get() {
            out_of_bounds(addr, len, self.used.get());
        }
        if !self.reserved.borrow().is_empty() {
            self.not_reserved(addr, len);
        }
        // `end <= used <= cap`: in bounds of the allocation.
        self.base.wrapping_add(addr as usize)
    }
}

impl Arena {
    /// Reserves the 8 bytes at `addr` for `what` (an `mbarrier`) until the block ends: a
    /// plain access to them is then a panic. Reserving bytes already reserved is one too
    /// (a second barrier set up over a live one).
    #[track_caller]
    pub(super) fn reserve8(&self, addr: u32, what: &'static str) {
        if addr as usize + 8 > self.used.get() {
            out_of_bounds(addr, 8, self.used.get());
        }
        let mut r = self.reserved.borrow_mut();
        if let Some((_, other)) = r.iter().find(|(a, _)| *a == addr) {
            panic!(
                "{what} at shared address {addr:#x}: that address already holds a live {other}: a second pipeline (a \
                 second WsPipeline::start) or other handles on shared memory a pipeline owns"
            );
        }
        r.push((addr, what));
    }

    /// Panics if `addr .. addr + len` touches reserved bytes.
    #[cold]
    #[inline(never)]
    #[track_caller]
    fn not_reserved(&self, addr: u32, len: usize) {
        let end = addr as u64 + len as u64;
        if let Some((at, what)) =
            self.reserved.borrow().iter().find(|(a, _)| (*a as u64) < end && addr as u64 <= *a as u64 + 7)
        {
            panic!(
                "shared memory access of {len} bytes at address {addr:#x} touches the {what} at {at:#x}: its bytes \
                 belong to the barrier (mbarrier instructions only) — another handle on the pipeline's shared \
                 memory (`dynamic_shared`, `dynamic_tiles`, a second pipeline)"
            );
        }
    }
}

#[cold]
#[inline(never)]
#[track_caller]
fn out_of_bounds(addr: u32, len: usize, used: usize) -> ! {
    panic!("shared memory access out of bounds: {len} bytes at address {addr:#x}, the block has {used} bytes")
}

impl Drop for Arena {
    fn drop(&mut self) {
        let layout = Layout::from_size_align(self.cap, BASE_ALIGN).expect("shared memory layout");
        // SAFETY: allocated in `new` with this layout, freed once.
        unsafe { alloc::dealloc(self.base, layout) };
    }
}
