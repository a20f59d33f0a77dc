//! `cuda_std::io`: [`print!`](crate::print) and [`println!`](crate::println)
//! with Rust's `{}` formatting.
//!
//! On the device the message is formatted with `core::fmt` into a 512-byte
//! buffer (longer output is cut, ending in `...`) in the frame of one
//! non-inlined function, then handed to the driver's `vprintf` as `"%s"`. That
//! costs what `core::fmt` costs: its code is pulled into the PTX only by
//! kernels that print, but there it adds the formatting machinery (integer
//! and, for `{}` of a float, float-to-decimal conversion: several KiB of PTX
//! and a stack frame of about 600 bytes in the printing function). Kernels that
//! print in hot paths, or want no `core::fmt` at all, use
//! [`sluice_device::dprintln!`] (C formats checked at compile time, formatted by
//! the driver on the host). cuda_std formatted into a heap `String`; sluice
//! kernels have no device heap, hence the fixed buffer.
//!
//! On the host (a kernel on the CPU runtime) `cuda_std::print!` and
//! `cuda_std::println!` print the device's text, byte for byte (the same
//! buffer, cut at [`PRINT_BUFFER`] bytes the same way), to stdout at once with
//! one std `print!` per call, as [`sluice_device::dprint!`] writes on the
//! host: lines of different GPU threads never interleave. Unlike `dprint!`
//! they also work outside a launch (they read nothing of the GPU thread). The
//! [prelude](crate::prelude) brings std's `print!`/`println!` on the host
//! instead (a glob import of these would be ambiguous with std's prelude), so a
//! kernel's plain `println!` prints there through std, the whole line at once.

/// The size of the buffer one `print!` formats into: at most
/// `PRINT_BUFFER - 5` bytes of text are printed (room for `...`, the newline
/// and the NUL); longer text is cut there and ends in `...`.
pub const PRINT_BUFFER: usize = 512;

mod imp {
    use super::PRINT_BUFFER;
    use core::fmt::{self, Write};

    #[cfg(target_arch = "nvptx64")]
    unsafe extern "C" {
        fn vprintf(format: *const u8, args: *const u8) -> i32;
    }

    struct Buf {
        bytes: [u8; PRINT_BUFFER],
        len: usize,
        cut: bool,
    }

    impl Write for Buf {
        fn write_str(&mut self, s: &str) -> fmt::Result {
            for &b in s.as_bytes() {
                // Keep room for "...", the newline and the NUL: at most
                // PRINT_BUFFER - 5 bytes of text.
                if self.len + 5 >= PRINT_BUFFER {
                    self.cut = true;
                    return Ok(());
                }
                self.bytes[self.len] = if b == 0 { b'?' } else { b };
                self.len += 1;
            }
            Ok(())
        }
    }

    /// Formats `args` and prints them with `vprintf` (on the host: std's
    /// `print!`) (internal; use `print!`).
    #[doc(hidden)]
    #[inline(never)]
    pub fn __print(args: fmt::Arguments<'_>, newline: bool) {
        let mut buf = Buf { bytes: [0; PRINT_BUFFER], len: 0, cut: false };
        let _ = buf.write_fmt(args);
        if buf.cut {
            buf.bytes[buf.len..buf.len + 3].copy_from_slice(b"...");
            buf.len += 3;
        }
        if newline {
            // `write_str` kept 5 bytes free, "..." took at most 3: this byte and
            // the NUL fit.
            buf.bytes[buf.len] = b'\n';
            buf.len += 1;
        }
        buf.bytes[buf.len] = 0;
        #[cfg(target_arch = "nvptx64")]
        {
            #[repr(C)]
            struct Arg(*const u8);
            let arg = Arg(buf.bytes.as_ptr());
            // SAFETY: the format is NUL-terminated and has one `%s`, matched by `arg`:
            // a pointer to `buf`, NUL-terminated above (`len < PRINT_BUFFER`), alive
            // for the call.
            unsafe { vprintf(c"%s".as_ptr() as *const u8, &arg as *const Arg as *const u8) };
        }
        // What `vprintf("%s", buf)` prints: the bytes before the NUL (a multi-byte
        // character cut at the end of the buffer shows as U+FFFD), in one `print!`.
        #[cfg(not(target_arch = "nvptx64"))]
        crate::__std::print!("{}", crate::__std::string::String::from_utf8_lossy(&buf.bytes[..buf.len]));
    }
}

#[doc(hidden)]
pub use imp::__print;

/// `print!` for kernels: Rust formatting (inline `{x}` arguments too), printed
/// through `vprintf` (see [`io`](crate::io)).
#[macro_export]
macro_rules! print {
    ($($arg:tt)*) => {
        $crate::io::__print(::core::format_args!($($arg)*), false)
    };
}

/// `println!` for kernels: Rust formatting and a newline, printed through
/// `vprintf` (see [`io`](crate::io)).
#[macro_export]
macro_rules! println {
    () => {
        $crate::io::__print(::core::format_args!(""), true)
    };
    ($($arg:tt)*) => {
        $crate::io::__print(::core::format_args!($($arg)*), true)
    };
}
