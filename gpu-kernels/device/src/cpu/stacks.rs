//! The GPU threads' stacks: how big each is, the pools that reuse them, and the
//! process-wide limits that keep their number below what the OS allows.
//!
//! Every GPU thread that suspends (a barrier, a warp collective) holds a stack
//! of its own until it exits, so a block of 256 threads that meet at a barrier
//! holds 256 stacks. Each stack is a memory mapping with a guard page: two of
//! the process's mappings, of which Linux allows `vm.max_map_count` (65,530 by
//! default). Many blocks at once — many lanes of a scope each running a
//! one-block kernel on its own OS thread, or many rayon threads running
//! 1024-thread blocks — would pass that, and every further stack would fail.
//! So the stacks of the process are bounded three ways:
//!
//! * **In use.** A block's first stack is always granted (a barrier-free
//!   kernel needs no other: one stack per block, one per OS thread running a
//!   block). Before a block takes a second one, it reserves stacks for all its
//!   threads from a process-wide budget ([`Reservation`]: `max_map_count / 6`
//!   stacks, a third of the mappings), waiting until other blocks give theirs
//!   back if the budget is spent — in the order the blocks asked, so a block of
//!   many threads is never passed forever by smaller ones. A block that holds a
//!   reservation never waits for another block, so the blocks that wait always
//!   get one. (So at most about `budget / block size` blocks whose threads wait
//!   run at once: a kernel whose blocks spin-wait for each other may hang here
//!   where the GPU would run them all.)
//! * **Idle.** Stacks are kept for reuse, on the OS thread that used them (the
//!   next block of a rayon thread takes them without a lock) or in a pool all
//!   threads share — at most `max_map_count / 12` stacks (and 8192) in all,
//!   counted exactly: a thread takes the right to keep idle stacks from a global count
//!   in batches of [`BATCH`] ([`Credit`]), and a stack beyond every right is
//!   freed. A thread outside rayon's pool (a lane of the host's CPU backend,
//!   which runs a one-block kernel itself) hands its idle stacks to the shared
//!   pool once its launch is over ([`trim`]): a thousand lanes must not each
//!   keep a block's stacks.
//! * **Size.** `SLUICE_CPU_STACK_KIB` is read once; a value that is not a size
//!   from 16 KiB to 1 GiB fails every launch that needs a stack, saying so,
//!   rather than being ignored.
//!
//! So at most `threads running blocks + max_map_count / 6 + max_map_count / 12`
//! stacks exist, about half of the mappings. A stack the OS still refuses is the launch's error, never a panic.

use core::cell::{Cell, RefCell};
use core::sync::atomic::{AtomicUsize, Ordering};
use std::format;
use std::string::String;
use std::sync::{Condvar, Mutex, MutexGuard, OnceLock};
use std::vec::Vec;

use corosensei::stack::DefaultStack;

/// An OS thread's idle stacks and its rights to keep them: when the thread ends, the
/// stacks are freed and the rights given back to [`IDLE`].
struct Local {
    stacks: RefCell<Vec<DefaultStack>>,
    /// How many idle stacks this thread may keep (taken from [`IDLE`]); at least
    /// `stacks.len()`.
    credit: Cell<usize>,
}

impl Drop for Local {
    fn drop(&mut self) {
        IDLE.fetch_sub(self.credit.get(), Ordering::Relaxed);
    }
}

std::thread_local! {
    /// This thread's idle stacks, at most [`LOCAL`].
    static MINE: Local = const { Local { stacks: RefCell::new(Vec::new()), credit: Cell::new(0) } };
}

/// Idle stacks an OS thread keeps for itself, at most: every thread of a full
/// block (1024) plus the workers that ran threads to completion.
const LOCAL: usize = 1100;

/// How many idle stacks' worth of [`IDLE`] a thread takes at once.
const BATCH: usize = 64;

/// Stacks kept idle in the whole process (on every thread and in the shared
/// pool), plus the unused rights to keep them that threads hold.
static IDLE: AtomicUsize = AtomicUsize::new(0);

/// `SLUICE_CPU_STACK_KIB`'s bounds (KiB).
const MIN_KIB: usize = 16;
const MAX_KIB: usize = 1 << 20;

/// The size of each GPU thread's stack in bytes: `SLUICE_CPU_STACK_KIB`, or
/// [`DEFAULT_STACK_KIB`](super::DEFAULT_STACK_KIB); `Err` says why the
/// variable's value is not one.
pub(crate) fn stack_bytes() -> Result<usize, &'static str> {
    static SIZE: OnceLock<Result<usize, String>> = OnceLock::new();
    SIZE.get_or_init(|| parse_kib(std::env::var("SLUICE_CPU_STACK_KIB").ok().as_deref()))
        .as_ref()
        .map(|&b| b)
        .map_err(|e| e.as_str())
}

/// A stack size in bytes from the variable's value (`None`: unset).
fn parse_kib(v: Option<&str>) -> Result<usize, String> {
    let Some(v) = v else { return Ok(super::DEFAULT_STACK_KIB * 1024) };
    match v.trim().parse::<usize>() {
        Ok(k) if (MIN_KIB..=MAX_KIB).contains(&k) => Ok(k * 1024),
        _ => Err(format!(
            "SLUICE_CPU_STACK_KIB={v:?} is not a stack size in KiB from {MIN_KIB} to {MAX_KIB} (unset it for the \
             default, {} KiB)",
            super::DEFAULT_STACK_KIB
        )),
    }
}

/// The mappings the OS allows this process (`vm.max_map_count`).
fn mappings() -> usize {
    static MAPS: OnceLock<usize> = OnceLock::new();
    *MAPS.get_or_init(|| {
        std::fs::read_to_string("/proc/sys/vm/max_map_count")
            .ok()
            .and_then(|s| s.trim().parse::<usize>().ok())
            .unwrap_or(65_530)
    })
}

/// Stacks in use at once, at most, beyond each block's first: `max_map_count / 6`
/// (two mappings each: a third of the mappings), and never less than one block
/// of 1024 threads.
fn budget() -> usize {
    (mappings() / 6).max(1024)
}

/// Stacks kept idle at once, at most: `max_map_count / 12` (a sixth of the mappings), and
/// no more than 8192 (2 GiB of address space at the default size) where the OS allows many.
fn idle_cap() -> usize {
    (mappings() / 12).clamp(BATCH, 8192)
}

/// The budget's use, and the queue of blocks waiting for it: first come, first served, so
/// that a block of many threads is not passed forever by smaller ones.
struct Budget {
    reserved: usize,
    next_ticket: u64,
    serving: u64,
}

static BUDGET: Mutex<Budget> = Mutex::new(Budget { reserved: 0, next_ticket: 0, serving: 0 });
static RETURNED: Condvar = Condvar::new();

fn budget_state() -> MutexGuard<'static, Budget> {
    BUDGET.lock().unwrap_or_else(|p| p.into_inner())
}

/// The stacks idle in no thread's hands, for any thread to take.
static POOL: Mutex<Vec<DefaultStack>> = Mutex::new(Vec::new());

fn pool() -> MutexGuard<'static, Vec<DefaultStack>> {
    POOL.lock().unwrap_or_else(|p| p.into_inner())
}

/// A stack: an idle one of this thread or of the process, or a new one. `Err`:
/// the size is set wrong, or the OS refused a new one (the message says what to
/// change).
pub(crate) fn take() -> Result<DefaultStack, String> {
    let got = MINE.try_with(|m| {
        let mut mine = m.stacks.borrow_mut();
        if mine.is_empty() {
            // A batch from the shared pool, with the rights to keep it (one lock, no atomic).
            let mut pool = pool();
            let k = pool.len().min(BATCH);
            let at = pool.len() - k;
            mine.extend(pool.drain(at..));
            m.credit.set(m.credit.get() + k);
        }
        // Its right to be kept stays with this thread, for the next one it gives back.
        mine.pop()
    });
    match got {
        Ok(Some(s)) => Ok(s),
        _ => allocate(stack_bytes().map_err(String::from)?),
    }
}

/// A new stack of `bytes`.
fn allocate(bytes: usize) -> Result<DefaultStack, String> {
    #[cfg(unix)]
    super::overflow::install(stack_bytes().unwrap_or(bytes));
    let refused = |why: String| {
        format!(
            "the CPU backend cannot allocate a {} KiB stack for a GPU thread ({why}): fewer threads per block \
             that wait at barriers, fewer lanes running such kernels at once, or a smaller \
             SLUICE_CPU_STACK_KIB",
            bytes / 1024
        )
    };
    // The stack's own arithmetic (its size plus a guard page) may panic for sizes near
    // `usize::MAX`; that is a refusal too.
    match std::panic::catch_unwind(|| DefaultStack::new(bytes)) {
        Ok(Ok(s)) => Ok(s),
        Ok(Err(e)) => Err(refused(format!("{e}"))),
        Err(_) => Err(refused("the size overflows".into())),
    }
}

/// Gives a stack back for reuse: kept on this thread or in the shared pool if
/// the idle limit allows, freed otherwise.
pub(crate) fn give(s: DefaultStack) {
    let kept = MINE.try_with(|m| {
        let mine = m.stacks.borrow_mut();
        if mine.len() >= LOCAL {
            return false;
        }
        if mine.len() >= m.credit.get() {
            // More rights to keep stacks, a batch at a time (one atomic per batch).
            if IDLE.load(Ordering::Relaxed) + BATCH > idle_cap() {
                return false;
            }
            let had = IDLE.fetch_add(BATCH, Ordering::Relaxed);
            if had + BATCH > idle_cap() {
                IDLE.fetch_sub(BATCH, Ordering::Relaxed);
                return false;
            }
            m.credit.set(m.credit.get() + BATCH);
        }
        true
    });
    match kept {
        Ok(true) => {
            let _ = MINE.try_with(|m| m.stacks.borrow_mut().push(s));
        }
        // No right left here (or the thread is ending): the stack is freed.
        _ => drop(s),
    }
}

/// After a launch on this thread: if it is not one of rayon's (whose number is
/// bounded by its pool), its idle stacks go to the shared pool with their rights,
/// and its unused rights back to the process.
pub(crate) fn trim() {
    if rayon::current_thread_index().is_some() {
        return;
    }
    let _ = MINE.try_with(|m| {
        let mine = core::mem::take(&mut *m.stacks.borrow_mut());
        let credit = m.credit.replace(0);
        // `mine.len() <= credit`: the rights of the stacks that move stay counted (now for
        // the shared pool), the unused ones go back.
        IDLE.fetch_sub(credit - mine.len(), Ordering::Relaxed);
        if !mine.is_empty() {
            pool().extend(mine);
        }
    });
}

/// A place in the queue for the budget: blocks are served in the order they took these.
fn take_ticket() -> u64 {
    let mut b = budget_state();
    let ticket = b.next_ticket;
    b.next_ticket += 1;
    ticket
}

/// Stacks a block reserved from the budget; given back on drop.
#[derive(Default)]
pub(crate) struct Reservation(usize);

impl Reservation {
    /// Reserves `n` stacks (at most the budget), waiting while other blocks hold
    /// what is left, in the order blocks asked. Nothing to do if this reservation
    /// holds some already.
    pub(crate) fn reserve(&mut self, n: usize) {
        if self.0 > 0 {
            return;
        }
        self.reserve_in_turn(take_ticket(), n);
    }

    /// [`reserve`](Reservation::reserve) for the block that took `ticket` ([`take_ticket`]):
    /// waits until every earlier ticket has been served and `n` stacks are free.
    fn reserve_in_turn(&mut self, ticket: u64, n: usize) {
        let n = n.min(budget());
        let mut b = budget_state();
        while b.serving != ticket || b.reserved + n > budget() {
            b = RETURNED.wait(b).unwrap_or_else(|p| p.into_inner());
        }
        b.reserved += n;
        b.serving += 1;
        let queued = b.next_ticket > b.serving;
        drop(b);
        if queued {
            // The next in line may fit too.
            RETURNED.notify_all();
        }
        self.0 = n;
    }

    /// Gives the reserved stacks back to the budget (the block is over).
    pub(crate) fn release(&mut self) {
        if self.0 == 0 {
            return;
        }
        let mut b = budget_state();
        b.reserved -= self.0;
        self.0 = 0;
        let queued = b.next_ticket > b.serving;
        drop(b);
        if queued {
            RETURNED.notify_all();
        }
    }
}

impl Drop for Reservation {
    fn drop(&mut self) {
        self.release();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reservation_waits_for_the_budget_and_is_given_back() {
        let b = budget();
        let mut first = Reservation::default();
        first.reserve(b);
        let waited = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let w = waited.clone();
        let other = std::thread::spawn(move || {
            let mut r = Reservation::default();
            r.reserve(1);
            w.store(true, std::sync::atomic::Ordering::SeqCst);
        });
        std::thread::sleep(std::time::Duration::from_millis(50));
        assert!(!waited.load(std::sync::atomic::Ordering::SeqCst), "the second block must wait for the budget");
        drop(first);
        other.join().unwrap();
        assert!(waited.load(std::sync::atomic::Ordering::SeqCst));
    }

    #[test]
    fn blocks_get_the_budget_in_the_order_they_asked() {
        use std::sync::atomic::{AtomicU32, Ordering::SeqCst};
        use std::sync::Arc;
        let b = budget();
        let mut first = Reservation::default();
        first.reserve(b - 10);
        let order = Arc::new(AtomicU32::new(0));
        let (o1, o2) = (order.clone(), order.clone());
        // A large block that does not fit now asks first, then a small one that would (6 of
        // the 10 free stacks) but does not fit beside the large one: so it is served only once
        // the large block has counted itself and given its stacks back. Their tickets are taken
        // here, in that order, whenever their threads get to run (on a loaded machine a thread
        // can take longer than any sleep to start).
        let (large_turn, small_turn) = (take_ticket(), take_ticket());
        let large = std::thread::spawn(move || {
            let mut r = Reservation::default();
            r.reserve_in_turn(large_turn, b - 5);
            o1.fetch_add(1, SeqCst) // 0 if first
        });
        let small = std::thread::spawn(move || {
            let mut r = Reservation::default();
            r.reserve_in_turn(small_turn, 6);
            o2.fetch_add(1, SeqCst)
        });
        std::thread::sleep(std::time::Duration::from_millis(50));
        assert_eq!(order.load(SeqCst), 0, "the small block waits behind the large one, which waits");
        drop(first);
        assert_eq!(large.join().unwrap(), 0, "the large block is served first");
        assert_eq!(small.join().unwrap(), 1);
    }

    #[test]
    fn a_stack_the_os_refuses_is_an_error_that_says_what_to_change() {
        let e = allocate(1 << 60).err().expect("no 2^60-byte stack");
        assert!(e.contains("cannot allocate a 1125899906842624 KiB stack"), "{e}");
        assert!(e.contains("SLUICE_CPU_STACK_KIB"), "{e}");
        // Sizes whose guard page overflows the arithmetic: refused, not a panic.
        let e = allocate(usize::MAX - 100).err().expect("no such stack");
        assert!(e.contains("the size overflows"), "{e}");
    }

    #[test]
    fn stack_sizes_out_of_range_or_not_numbers_are_errors() {
        assert_eq!(parse_kib(None), Ok(super::super::DEFAULT_STACK_KIB * 1024));
        assert_eq!(parse_kib(Some(" 64 ")), Ok(64 * 1024));
        assert_eq!(parse_kib(Some("1048576")), Ok(1 << 30));
        for bad in ["15", "0", "abc", "-5", "1e9", "1048577", "18446744073709551615", "99999999999999999999"] {
            let e = parse_kib(Some(bad)).expect_err(bad);
            assert!(e.contains("is not a stack size in KiB from 16 to 1048576"), "{bad}: {e}");
        }
    }

    /// Many threads outside rayon, each with a block's worth of idle stacks: each
    /// keeps no more than its rights, and gives every one back after its launch.
    #[test]
    fn idle_stacks_are_accounted_across_threads() {
        let threads: Vec<_> = (0..8)
            .map(|_| {
                std::thread::spawn(|| {
                    let stacks: Vec<_> = (0..300).map(|_| take().unwrap()).collect();
                    for s in stacks {
                        give(s);
                    }
                    MINE.with(|m| assert!(m.stacks.borrow().len() <= m.credit.get()));
                    trim();
                    MINE.with(|m| assert_eq!((m.stacks.borrow().len(), m.credit.get()), (0, 0)));
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        // Every stack in the shared pool was counted before it went in.
        assert!(pool().len() <= IDLE.load(Ordering::Relaxed));
    }
}
