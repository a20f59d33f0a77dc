//! `io` on the GPU: the driver's `vprintf`, the fault record a failing thread
//! leaves for the host, and the panic handler (trap; messages with
//! `--cfg sluice_panic_messages`).

use super::FAULT_RECORD_BYTES;
use core::arch::asm;

unsafe extern "C" {
    /// The driver's device-side printf: `format` is a NUL-terminated C
    /// format string, `args` the packed arguments (or null).
    pub(super) fn vprintf(format: *const u8, args: *const u8) -> i32;
}

/// Where a failing kernel leaves its message for the host: the device address of a
/// [`FAULT_RECORD_BYTES`](super::FAULT_RECORD_BYTES)-byte record in host memory mapped for the device, written by
/// the host library when it loads the module (0 before that, or when the host does not
/// ask). Host memory outlives the context a fault destroys, so the host reads the
/// record after the fault. Not an API.
#[doc(hidden)]
#[unsafe(no_mangle)]
pub static mut __sluice_fault_record: u64 = 0;

/// Records a failing thread (its block and thread index and `message`, NUL-less,
/// truncated to fit) in the fault record, if the host set one and no other thread
/// got there first. The layout, in `u32` words: state (0 empty, 1 being written, 2
/// written), block x y z, thread x y z, the message's length in bytes, then the
/// message from byte 32. Cold and out of line: only a failing thread runs it.
///
/// In a build for `sm_90a` the fault path is inlined instead, down to a leaf: `ptxas`
/// serializes every warpgroup MMA of a module in which a function (not a kernel entry)
/// calls another (`C7510`, "wgmma pipeline crossing function boundary"), so there no
/// function of the fault path calls one (and no `vprintf`: the host prints the record).
#[cold]
#[cfg_attr(not(target_feature = "sm_90a"), inline(never))]
#[cfg_attr(target_feature = "sm_90a", inline(always))]
pub(crate) fn record_fault(message: &[u8]) {
    // Without the NUL (by hand: a slice comparison would call `memcmp`).
    let n = message.len();
    let text = if n > 0 && message[n - 1] == 0 { &message[..n - 1] } else { message };
    record_fault_parts(&[Part::Text(text)]);
}

/// A piece of a fault message: text, or a number written in decimal.
#[derive(Clone, Copy)]
pub(crate) enum Part<'a> {
    Text(&'a [u8]),
    Number(u32),
}

/// [`record_fault`] of the concatenation of `parts` (numbers in decimal), without a
/// buffer of its own: the bytes go straight into the record. (A leaf: it calls nothing.)
#[cold]
#[cfg_attr(not(target_feature = "sm_90a"), inline(never))]
#[cfg_attr(target_feature = "sm_90a", inline(always))]
pub(crate) fn record_fault_parts(parts: &[Part<'_>]) {
    use crate::spec::scope::MemoryScope;
    use crate::thread;
    // SAFETY: a plain 8-byte global the host writes before launching anything of this
    // module; read volatile, as the host changes it behind the compiler's back.
    let record = unsafe { core::ptr::addr_of!(__sluice_fault_record).read_volatile() } as *mut u32;
    if record.is_null() {
        return;
    }
    let old: u32;
    // SAFETY: the host set `record` to a live, 4-aligned, device-mapped record of
    // FAULT_RECORD_BYTES bytes; its first word is only accessed atomically. (The
    // instruction `atomic::global::compare_exchange(record, 0, 1, MemoryScope::System)`
    // emits, written here so that `io`, which every family's checks use, sits
    // below `atomic`.)
    unsafe {
        asm!("atom.relaxed.sys.global.cas.b32 {d}, [{a}], {b}, {c};",
             d = out(reg32) old, a = in(reg64) record as u64, b = in(reg32) 0u32, c = in(reg32) 1u32,
             options(nostack, preserves_flags))
    };
    if old != 0 {
        return; // another thread's fault is recorded
    }
    let words = [
        thread::block_idx_x(),
        thread::block_idx_y(),
        thread::block_idx_z(),
        thread::thread_idx_x(),
        thread::thread_idx_y(),
        thread::thread_idx_z(),
    ];
    let room = FAULT_RECORD_BYTES - 32;
    // SAFETY: this thread claimed the record (state 1): no one else writes it; every
    // offset is inside its FAULT_RECORD_BYTES bytes (`n < room` before each byte).
    unsafe {
        let mut i = 0;
        while i < 6 {
            record.add(1 + i).write_volatile(words[i]);
            i += 1;
        }
        let bytes = record.add(8) as *mut u8;
        let mut n = 0usize;
        let mut p = 0;
        while p < parts.len() {
            match parts[p] {
                Part::Text(text) => {
                    let mut i = 0;
                    while i < text.len() && n < room {
                        bytes.add(n).write_volatile(text[i]);
                        n += 1;
                        i += 1;
                    }
                }
                Part::Number(v) => {
                    let mut digits = 1;
                    let mut rest = v / 10;
                    while rest > 0 {
                        digits += 1;
                        rest /= 10;
                    }
                    let mut rest = v;
                    let mut d = digits;
                    while d > 0 {
                        d -= 1;
                        if n + d < room {
                            bytes.add(n + d).write_volatile(b'0' + (rest % 10) as u8);
                        }
                        rest /= 10;
                    }
                    n = if n + digits < room { n + digits } else { room };
                }
            }
            p += 1;
        }
        record.add(7).write_volatile(n as u32);
    }
    // The record's contents before its state, for the host (system scope).
    crate::sync::fence(MemoryScope::System);
    // SAFETY: as above; the state word is published last.
    unsafe { record.write_volatile(2) };
    crate::sync::fence(MemoryScope::System);
}

/// `__fail_at` on the GPU: the fault record at the caller's location, the message on
/// stdout, then `trap`.
#[cold]
#[cfg_attr(not(target_feature = "sm_90a"), inline(never))]
#[cfg_attr(target_feature = "sm_90a", inline(always))]
#[track_caller]
pub(super) fn fail_at(message: &'static core::ffi::CStr) -> ! {
    let at = core::panic::Location::caller();
    record_fault_parts(&[
        Part::Text(b"kernel failed at "),
        Part::Text(at.file().as_bytes()),
        Part::Text(b":"),
        Part::Number(at.line()),
        Part::Text(b":"),
        Part::Number(at.column()),
        Part::Text(b": "),
        Part::Text(message.to_bytes()),
    ]);
    #[cfg(not(target_feature = "sm_90a"))]
    {
        static FORMAT: &core::ffi::CStr = c"kernel failed (the launch's error says where): %s\n";
        let args = message.as_ptr();
        // SAFETY: a constant NUL-terminated format whose only conversion, `%s`, reads the
        // one argument passed: a pointer to a NUL-terminated string (`message`).
        unsafe { vprintf(FORMAT.as_ptr().cast(), (&args as *const *const core::ffi::c_char).cast()) };
    }
    // SAFETY: `trap` has no preconditions; it aborts this kernel launch.
    unsafe { core::arch::nvptx::trap() }
}

/// Records the fault, prints `format` and ends the kernel with `trap`.
#[inline(always)]
#[cold]
pub(super) fn fail(format: &'static [u8]) -> ! {
    record_fault(format);
    // SAFETY: made by `__escape`: NUL-terminated, every `%` doubled, so
    // vprintf reads no argument (and none is passed).
    #[cfg(not(target_feature = "sm_90a"))]
    unsafe {
        vprintf(format.as_ptr(), core::ptr::null())
    };
    // SAFETY: `trap` has no preconditions; it aborts this kernel launch.
    unsafe { core::arch::nvptx::trap() }
}

/// Copies `s` into `buf` with a NUL, truncated to fit.
#[cfg(sluice_panic_messages)]
fn to_c<const N: usize>(s: &str, buf: &mut [u8; N]) {
    let n = if s.len() < N - 1 { s.len() } else { N - 1 };
    let src = s.as_bytes();
    let mut i = 0;
    while i < n {
        // Replace interior NULs so the C string is not cut short silently.
        buf[i] = if src[i] == 0 { b'?' } else { src[i] };
        i += 1;
    }
    buf[n] = 0;
}

// The default handler: trap, and read nothing from `PanicInfo`. Because the
// argument is unused, the optimiser drops every panic site's message and
// location, and `core::fmt` never reaches the PTX (see the module docs).
// Inlinable, so that core's `panic_fmt` becomes a leaf (`trap`) with no frame.
#[cfg(not(sluice_panic_messages))]
#[panic_handler]
#[cold]
fn panic(_info: &core::panic::PanicInfo<'_>) -> ! {
    // SAFETY: `trap` has no preconditions; it aborts this kernel launch.
    unsafe { core::arch::nvptx::trap() }
}

// The debug handler (`--cfg sluice_panic_messages`): prints the location and
// a plain-string message, then traps. Not inlined, and cold: the message
// buffer then lives in this function's frame, not in every kernel's.
#[cfg(sluice_panic_messages)]
#[panic_handler]
#[inline(never)]
#[cold]
fn panic(info: &core::panic::PanicInfo<'_>) -> ! {
    let mut msg = [0u8; 128];
    let (file, line, col) = match info.location() {
        Some(l) => (l.file_as_c_str(), l.line(), l.column()),
        None => (c"<unknown>", 0, 0),
    };
    match info.message().as_str() {
        Some(m) => to_c(m, &mut msg),
        None => to_c("(formatted message not shown)", &mut msg),
    }
    record_fault(&msg[..msg.iter().position(|&b| b == 0).unwrap_or(msg.len())]);
    #[repr(C)]
    struct Args(*const u8, u32, u32, *const u8);
    let args = Args(file.as_ptr() as *const u8, line, col, msg.as_ptr());
    // SAFETY: the format is NUL-terminated and matches `Args` (`%s` at 0: a
    // `CStr`; `%u` at 8 and 12; `%s` at 16: the NUL-terminated local buffer
    // written by `to_c`).
    unsafe {
        vprintf("panicked at %s:%u:%u: %s\n\0".as_ptr(), &args as *const Args as *const u8);
    }
    // SAFETY: `trap` has no preconditions; it aborts this kernel launch.
    unsafe { core::arch::nvptx::trap() }
}
