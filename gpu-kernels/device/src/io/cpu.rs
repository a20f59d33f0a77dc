//! `io` on the CPU: `dprint!` formats its C format string as C's `printf` does
//! ([`printf`]) and prints the line at once; `dassert!`/`dfail!` panic with their
//! message, which the CPU runtime reports with the thread and the location.

#[path = "printf.rs"]
mod printf;

/// The host's `vprintf`: formats as C's `printf` ([`printf`]) and
/// writes the line to stdout at once (the GPU's output appears at the next
/// synchronisation; the CPU's immediately). Only inside a CPU launch.
///
/// # Safety
///
/// As the driver's: `format` is NUL-terminated and `args` holds the
/// arguments its conversions read, packed as `__print` packs them.
#[track_caller]
pub(super) unsafe fn vprintf(format: *const u8, args: *const u8) -> i32 {
    crate::cpu::block::current("dprint!");
    // SAFETY: forwarded to the caller.
    let text = unsafe { printf::format(format, args) };
    // One `print!` per call: a line is never interleaved with another
    // thread's (and the test harness captures it).
    std::print!("{text}");
    text.len() as i32
}

/// The host's `dfail!`: panics with the message (the CPU runtime reports
/// it with the thread and the location, that of the `dassert!`/`dfail!`,
/// or of the caller of a `#[track_caller]` device function that failed).
#[cold]
#[track_caller]
pub(super) fn fail(format: &'static [u8]) -> ! {
    let text = std::string::String::from_utf8_lossy(format.strip_suffix(b"\0").unwrap_or(format)).replace("%%", "%");
    let text = text.trim_end_matches('\n');
    // `kernel failed at FILE:LINE:COL: MESSAGE`: the panic has the location.
    let message = text.strip_prefix("kernel failed at ").and_then(|t| t.split_once(": ")).map_or(text, |(_, m)| m);
    panic!("{message}")
}

/// The host's `__fail_at`: a panic with the message at the caller's location (the CPU
/// runtime reports it with the thread and that location).
#[cold]
#[track_caller]
pub(super) fn fail_at(message: &'static core::ffi::CStr) -> ! {
    panic!("{}", message.to_str().unwrap_or("a device check failed"))
}
