//! A GPU thread that overflows its stack on the CPU backend ends the process with a message
//! saying so, instead of a bare "Segmentation fault".
//!
//! Each GPU thread runs on a stack of [`stacks`](super::stacks) with a guard page at its
//! lowest address (`Stack::limit`). A frame that runs into it faults there (Rust probes a
//! large frame page by page, so the first fault of an overflow lands in the guard page).
//! [`install`] puts a `SIGSEGV`/`SIGBUS` handler in front of the one already there (Rust's
//! own, which reports overflows of an OS thread's stack); the runtime marks the stack of the
//! GPU thread it resumes ([`Running`]), and a fault in that stack's guard page writes the
//! message and aborts. Any other fault goes to the previous handler, as if this one were
//! not there.
//!
//! The handler runs on the OS thread's alternate signal stack, which Rust's runtime gives
//! every thread it starts (rayon's workers, which run the GPU threads, among them); in a
//! process whose Rust runtime did not set those up (a `cdylib` loaded by another language),
//! an overflow still ends the process, without the message.

use core::cell::Cell;
use core::ffi::c_void;
use core::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Once, OnceLock};
use std::vec::Vec;

std::thread_local! {
    /// The lowest address (the guard page's) of the stack of the GPU thread this OS thread
    /// runs now, 0 when none.
    static GUARD: Cell<usize> = const { Cell::new(0) };
}

/// The page size, read when the handler is installed (the handler calls nothing it need not).
static PAGE: AtomicUsize = AtomicUsize::new(4096);

/// The handlers that were installed before this one, per signal (`SIGSEGV`, `SIGBUS`).
static PREVIOUS: OnceLock<[libc::sigaction; 2]> = OnceLock::new();
/// The message, made before any fault (a handler may not allocate or format).
static MESSAGE: OnceLock<Vec<u8>> = OnceLock::new();

/// Marks, while it lives, the stack whose lowest address is `limit` as the one this OS
/// thread runs a GPU thread on.
pub(crate) struct Running(usize);

impl Running {
    pub(crate) fn new(limit: usize) -> Running {
        Running(GUARD.with(|g| g.replace(limit)))
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        GUARD.with(|g| g.set(self.0));
    }
}

/// Installs the handler once per process; `stack_bytes`: each GPU thread's stack, for the
/// message.
pub(crate) fn install(stack_bytes: usize) {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let _ = MESSAGE.set(
            std::format!(
                "\nsluice (CPU backend): a GPU thread overflowed its stack of {} KiB (a deep recursion, or large \
                 local arrays, in the kernel). Set SLUICE_CPU_STACK_KIB to a larger size in KiB (up to 1 GiB), or \
                 move large arrays to shared memory or a device buffer. Aborting.\n",
                stack_bytes / 1024
            )
            .into_bytes(),
        );
        // SAFETY: `sysconf` has no preconditions.
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
        if page > 0 {
            PAGE.store(page as usize, Ordering::Relaxed);
        }
        // The handlers there now, kept before ours can run (it chains to them).
        let mut previous = [empty_action(), empty_action()];
        for (sig, prev) in [libc::SIGSEGV, libc::SIGBUS].into_iter().zip(previous.iter_mut()) {
            // SAFETY: a query: `prev` is a valid `sigaction` to write the current one to.
            unsafe { libc::sigaction(sig, core::ptr::null(), prev) };
        }
        let _ = PREVIOUS.set(previous);
        for sig in [libc::SIGSEGV, libc::SIGBUS] {
            let mut action = empty_action();
            action.sa_sigaction = on_fault as *const () as usize;
            // SA_ONSTACK: the faulting stack has no room; Rust gives every thread it starts
            // an alternate signal stack.
            action.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
            // SAFETY: `action` is a valid `sigaction`; `sigemptyset` initialises the mask it
            // is given. The handler is async-signal-safe (below).
            unsafe {
                libc::sigemptyset(&mut action.sa_mask);
                libc::sigaction(sig, &action, core::ptr::null_mut());
            }
        }
    });
}

fn empty_action() -> libc::sigaction {
    // SAFETY: `sigaction` is plain data, for which all zeroes is `SIG_DFL` with no flags.
    unsafe { core::mem::zeroed() }
}

/// The handler: only loads, `write` and `abort` (async-signal-safe), or the previous handler.
extern "C" fn on_fault(sig: libc::c_int, info: *mut libc::siginfo_t, ctx: *mut c_void) {
    // SAFETY: the kernel passes a valid `siginfo_t` to an SA_SIGINFO handler.
    let (code, addr) = unsafe { ((*info).si_code, (*info).si_addr() as usize) };
    let limit = GUARD.try_with(Cell::get).unwrap_or(0);
    // A fault (not a signal sent by `kill`) in the guard page itself: Rust probes a large
    // frame page by page, so an overflow's first fault lands there.
    if code > 0 && limit != 0 && addr >= limit && addr < limit + PAGE.load(Ordering::Relaxed) {
        if let Some(m) = MESSAGE.get() {
            // SAFETY: `m` is a live buffer of `m.len()` bytes; `write` is async-signal-safe.
            unsafe { libc::write(2, m.as_ptr().cast(), m.len()) };
        }
        // SAFETY: `abort` is async-signal-safe and does not return.
        unsafe { libc::abort() };
    }
    let Some(previous) = PREVIOUS.get() else { return };
    let prev = &previous[usize::from(sig != libc::SIGSEGV)];
    match prev.sa_sigaction {
        // SAFETY: putting the previous disposition back; returning re-runs the faulting
        // instruction, which then gets it (the default: the process ends with the signal).
        // A signal sent by `kill` (`si_code <= 0`) re-runs nothing: raised again, it meets the
        // default when this handler returns (blocked until then), as if this one were not
        // there. `sigaction` and `raise` are async-signal-safe.
        libc::SIG_DFL => unsafe {
            libc::sigaction(sig, prev, core::ptr::null_mut());
            if code <= 0 {
                libc::raise(sig);
            }
        },
        // SAFETY: as above; an ignored signal sent by `kill` stays ignored.
        libc::SIG_IGN => unsafe {
            libc::sigaction(sig, prev, core::ptr::null_mut());
        },
        f if prev.sa_flags & libc::SA_SIGINFO != 0 => {
            // SAFETY: an SA_SIGINFO handler has this signature; it was installed for `sig`.
            let f: extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut c_void) = unsafe { core::mem::transmute(f) };
            f(sig, info, ctx)
        }
        f => {
            // SAFETY: a handler without SA_SIGINFO has this signature; it was installed for `sig`.
            let f: extern "C" fn(libc::c_int) = unsafe { core::mem::transmute(f) };
            f(sig)
        }
    }
}
