//! The GPU threads' stacks: how big each is, the pools that reuse them, and the
//! process-wide budget that keeps their number below what the OS allows.
//!
//! Every GPU thread that suspends (a barrier, a warp collective) holds a stack
//! of its own until it exits, so a block of 256 threads that meet at a barrier
//! holds 256 stacks. Each stack is a memory mapping with a guard page: two of
//! the process's mappings, of which Linux allows `vm.max_map_count` (65,530 by
//! default). Many blocks at once — many lanes of a scope each running a
//! one-block kernel on its own OS thread, or many rayon threads running
//! 1024-thread blocks — would pass that, and every further stack would fail.
//! So:
//!
//! * a block's first stack is always granted (a barrier-free kernel needs no
//!   other: one stack per block, no accounting);
//! * before a block takes a second one, it reserves stacks for all its threads
//!   from a process-wide budget ([`Reservation`]), waiting until other blocks
//!   give theirs back if the budget is spent. A block that holds a reservation
//!   never waits for another block, so the blocks that wait always get one;
//! * idle stacks are kept for reuse on the OS thread that used them (up to a
//!   full block's worth: the next block of a rayon thread takes them without a
//!   lock). A thread outside rayon's pool — a lane of the host's CPU backend,
//!   which runs a one-block kernel itself — keeps only a few once its launch is
//!   over ([`trim`]) and hands the rest to a pool shared by all threads, at most
//!   a quarter of the budget: many lanes must not each keep a block's stacks.
//!
//! A stack the OS still refuses is the launch's error, never a panic.

use std::format;
use std::string::String;
use std::sync::{Condvar, Mutex, MutexGuard, OnceLock};
use std::vec::Vec;

use corosensei::stack::DefaultStack;

std::thread_local! {
    /// Idle stacks kept on this OS thread, at most [`LOCAL`].
    static LOCAL_STACKS: core::cell::RefCell<Vec<DefaultStack>> = const { core::cell::RefCell::new(Vec::new()) };
}

/// Idle stacks an OS thread keeps for itself, at most: every thread of a full
/// block (1024) plus the workers that ran threads to completion.
const LOCAL: usize = 1100;

/// What a thread outside rayon's pool keeps after its launch ([`trim`]).
const KEEP: usize = 32;

/// The size of each GPU thread's stack: `SLUICE_CPU_STACK_KIB`, or
/// [`DEFAULT_STACK_KIB`](super::DEFAULT_STACK_KIB).
pub(crate) fn stack_bytes() -> usize {
    static SIZE: OnceLock<usize> = OnceLock::new();
    *SIZE.get_or_init(|| {
        std::env::var("SLUICE_CPU_STACK_KIB")
            .ok()
            .and_then(|v| v.trim().parse::<usize>().ok())
            .filter(|&k| k >= 16)
            .map_or(super::DEFAULT_STACK_KIB * 1024, |k| k.saturating_mul(1024))
    })
}

/// Stacks in use at once, at most, beyond each block's first: a third of the
/// mappings the OS allows (two per stack), leaving the rest to the program, and
/// never less than one block of 1024 threads.
fn budget() -> usize {
    static BUDGET: OnceLock<usize> = OnceLock::new();
    *BUDGET.get_or_init(|| {
        let maps = std::fs::read_to_string("/proc/sys/vm/max_map_count")
            .ok()
            .and_then(|s| s.trim().parse::<usize>().ok())
            .unwrap_or(65_530);
        (maps / 6).max(1024)
    })
}

/// The process's idle stacks and the budget's use.
struct Shared {
    idle: Vec<DefaultStack>,
    reserved: usize,
}

static SHARED: Mutex<Shared> = Mutex::new(Shared { idle: Vec::new(), reserved: 0 });
static RETURNED: Condvar = Condvar::new();

fn shared() -> MutexGuard<'static, Shared> {
    SHARED.lock().unwrap_or_else(|p| p.into_inner())
}

/// A stack: an idle one of this thread or of the process, or a new one. `Err`:
/// the OS refused a new one (the message says what to change).
pub(crate) fn take() -> Result<DefaultStack, String> {
    if let Some(s) = LOCAL_STACKS.with(|l| l.borrow_mut().pop()) {
        return Ok(s);
    }
    if let Some(s) = shared().idle.pop() {
        return Ok(s);
    }
    allocate(stack_bytes())
}

/// A new stack of `bytes`.
fn allocate(bytes: usize) -> Result<DefaultStack, String> {
    DefaultStack::new(bytes).map_err(|e| {
        format!(
            "the CPU backend cannot allocate a {} KiB stack for a GPU thread ({e}): fewer threads per block \
             that wait at barriers, fewer lanes running such kernels at once, or a smaller \
             SLUICE_CPU_STACK_KIB",
            bytes / 1024
        )
    })
}

/// Gives a stack back for reuse (or frees it, if enough are idle).
pub(crate) fn give(s: DefaultStack) {
    let s = match LOCAL_STACKS.with(|l| {
        let mut l = l.borrow_mut();
        if l.len() < LOCAL {
            l.push(s);
            None
        } else {
            Some(s)
        }
    }) {
        None => return,
        Some(s) => s,
    };
    let mut sh = shared();
    if sh.idle.len() < budget() / 4 {
        sh.idle.push(s);
    }
}

/// After a launch on this thread: if it is not one of rayon's (whose number is
/// bounded by its pool), keeps [`KEEP`] idle stacks and gives the others to the
/// shared pool (or frees them).
pub(crate) fn trim() {
    if rayon::current_thread_index().is_some() {
        return;
    }
    let extra: Vec<DefaultStack> = LOCAL_STACKS.with(|l| {
        let mut l = l.borrow_mut();
        let keep = l.len().min(KEEP);
        l.split_off(keep)
    });
    if extra.is_empty() {
        return;
    }
    let mut sh = shared();
    let room = (budget() / 4).saturating_sub(sh.idle.len());
    sh.idle.extend(extra.into_iter().take(room));
}

/// Stacks a block reserved from the budget; given back on drop.
#[derive(Default)]
pub(crate) struct Reservation(usize);

impl Reservation {
    /// Reserves `n` stacks (at most the budget), waiting while other blocks hold
    /// what is left. Nothing to do if this reservation holds some already.
    pub(crate) fn reserve(&mut self, n: usize) {
        if self.0 > 0 {
            return;
        }
        let n = n.min(budget());
        let mut sh = shared();
        while sh.reserved + n > budget() {
            sh = RETURNED.wait(sh).unwrap_or_else(|p| p.into_inner());
        }
        sh.reserved += n;
        self.0 = n;
    }

    /// Gives the reserved stacks back to the budget (the block is over).
    pub(crate) fn release(&mut self) {
        if self.0 == 0 {
            return;
        }
        let mut sh = shared();
        sh.reserved -= self.0;
        self.0 = 0;
        drop(sh);
        RETURNED.notify_all();
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
    fn a_stack_the_os_refuses_is_an_error_that_says_what_to_change() {
        let e = allocate(1 << 60).err().expect("no 2^60-byte stack");
        assert!(e.contains("cannot allocate a 1125899906842624 KiB stack"), "{e}");
        assert!(e.contains("SLUICE_CPU_STACK_KIB"), "{e}");
    }

    #[test]
    fn a_thread_outside_rayon_keeps_a_few_stacks() {
        std::thread::spawn(|| {
            let stacks: Vec<_> = (0..KEEP + 40).map(|_| take().unwrap()).collect();
            for s in stacks {
                give(s);
            }
            assert_eq!(LOCAL_STACKS.with(|l| l.borrow().len()), KEEP + 40);
            trim();
            assert_eq!(LOCAL_STACKS.with(|l| l.borrow().len()), KEEP);
            assert!(shared().idle.len() <= budget() / 4);
        })
        .join()
        .unwrap();
    }
}
