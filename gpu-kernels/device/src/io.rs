//! Device-side output: [`dprint!`](crate::dprint) and [`dprintln!`](crate::dprintln)
//! through the CUDA driver's `vprintf`, and the panic handler (device only).
//!
//! **On the host** (the CPU runtime, [`crate::cpu`]) `dprint!` formats the
//! same C format string as C's `printf` does and prints it at once (one
//! `print!` per call, so lines of different threads never interleave, and
//! the test harness captures them); `dassert!`/`dfail!` and panics fail the
//! launch with the thread, the location and the message.
//!
//! # `dprintln!`
//!
//! ```ignore
//! use sluice_device::{dprintln, thread};
//! dprintln!("block %u thread %u: x = %f, n = %lld", thread::block_idx_x(), thread::thread_idx_x(), x, n);
//! dprintln!("name: %s", c"potential");
//! ```
//!
//! The format string is C's (CUDA's `printf`), not Rust's `{}`: the text is
//! handed to the driver as is, and the driver formats it on the host when the
//! kernel ends (the output appears at the next synchronisation with the
//! launching stream, not immediately; the buffer is 1 MiB by default,
//! `cuCtxSetLimit(CU_LIMIT_PRINTF_FIFO_SIZE)` resizes it).
//!
//! Arguments are packed as nvcc packs them: each promoted as C varargs are
//! (`f32` → `f64`, 8/16-bit integers and `bool` → 32-bit), laid out in a
//! `#[repr(C)]` struct (each aligned to its size) whose address is passed to
//! `vprintf(format, args)`.
//!
//! **Checked at compile time:** every conversion of the format must match its
//! argument's type, so that a `%s` can only read a `&CStr` and `%lld` only a
//! 64-bit integer. A mismatch is a compile error ("dprint!: the format string
//! does not match the arguments"). The table:
//!
//! | conversion | argument types |
//! | --- | --- |
//! | `%d %i %u %x %X %o %c` (also `h`, `hh`) | `i32 u32 i16 u16 i8 u8 bool` |
//! | `%ld %lld %lu %llu %lx %zu` ... (`l`, `ll`, `z`, `j`, `t`) | `i64 u64 isize usize` |
//! | `%f %F %e %E %g %G %a %A` | `f32 f64` |
//! | `%s` | `&CStr` (`c"..."` literals, `CStr::from_bytes_with_nul`) |
//! | `%p` | `*const T`, `*mut T` |
//! | `%%` | none |
//!
//! `*` widths and precisions are not accepted; at most 12 arguments (CUDA
//! allows 32; more tuple impls would lift the limit).
//!
//! # `dassert!` and `dfail!`
//!
//! [`dassert!`](crate::dassert)`(cond, "message")` and
//! [`dfail!`](crate::dfail)`("message")` print
//! `kernel failed at FILE:LINE:COL: message` and `trap`. The whole line is one
//! constant string built at compile time, so, unlike a panic, they cost the
//! kernel no stack frame; the device std's own checks (shared-memory bounds,
//! `DeviceSliceMut::write`) use them.
//!
//! # Panics
//!
//! A panic on the device (a failed `assert!`, an index out of bounds, an
//! explicit `panic!`, an arithmetic overflow check) ends the kernel with `trap`:
//! the launch (and every later operation on the context) reports
//! `CUDA_ERROR_LAUNCH_FAILED` (719, "unspecified launch failure", as measured on
//! an H200 with driver 580; not `CUDA_ERROR_ILLEGAL_INSTRUCTION`), which the host
//! library reports as a lost context (`Error::ContextLost`).
//!
//! **By default the handler traps and does nothing else.** It never reads its
//! `PanicInfo`, so after the bitcode link (`opt` internalizes everything and
//! removes unused arguments) nothing formats the message: core's panic entry
//! points (`panic_bounds_check`, `panic_fmt`, ...) shrink to parameterless
//! `.func`s whose body is `trap`, no `core::fmt` function reaches the PTX, and a
//! bounds check costs the kernel one compare and a predicated call, not a stack
//! frame. (Measured on `x[i]` in a vecadd-shaped kernel: the same registers as
//! without the check, no stack.)
//!
//! **With `--cfg sluice_panic_messages`** (the builder's debug mode passes it)
//! the handler first prints `panicked at FILE:LINE:COLUMN: MESSAGE` through
//! `vprintf`. The message is printed when it is a plain string
//! (`panic!("text")`, `assert!(c, "text")`); a formatted message (`{}`
//! arguments, such as the index of an out-of-bounds access) is not formatted on
//! the device and prints as `(formatted message not shown)`. Inspecting the
//! message keeps every panic site's `fmt::Arguments` alive, so this mode costs
//! what the default avoids: core's argument structures and the `Display`
//! functions they point to reach the PTX (never called for a plain string), and
//! a kernel with a bounds check gets a stack frame (216 bytes for vecadd's `x[i]`
//! on sm_90, against none by default). Use it to find a panic, not to measure. The output
//! is only seen if the host synchronises with the context after the error, and
//! only if the printf buffer is flushed; on a `trap` it usually is, but do not
//! rely on it.
//!
//! [`dassert!`](crate::dassert) and [`dfail!`](crate::dfail) always print their
//! (constant) message: use them where a kernel's precondition deserves a message
//! in release builds too.

pub use imp::*;

/// The size of the fault record a failing kernel writes for the host (see `dfail!`): the
/// host library allocates it and reads the block, thread and message of the first thread
/// that failed after the fault.
pub const FAULT_RECORD_BYTES: usize = 256;

mod imp {
    #[cfg(target_arch = "nvptx64")]
    use super::FAULT_RECORD_BYTES;
    use core::ffi::CStr;

    #[cfg(target_arch = "nvptx64")]
    unsafe extern "C" {
        /// The driver's device-side printf: `format` is a NUL-terminated C
        /// format string, `args` the packed arguments (or null).
        fn vprintf(format: *const u8, args: *const u8) -> i32;
    }

    /// The host's `vprintf`: formats as C's `printf` (`cpu::printf`) and
    /// writes the line to stdout at once (the GPU's output appears at the next
    /// synchronisation; the CPU's immediately). Only inside a CPU launch.
    ///
    /// # Safety
    ///
    /// As the driver's: `format` is NUL-terminated and `args` holds the
    /// arguments its conversions read, packed as `__print` packs them.
    #[cfg(not(target_arch = "nvptx64"))]
    #[track_caller]
    unsafe fn vprintf(format: *const u8, args: *const u8) -> i32 {
        crate::cpu::block::current("dprint!");
        // SAFETY: forwarded to the caller.
        let text = unsafe { crate::cpu::printf::format(format, args) };
        // One `print!` per call: a line is never interleaved with another
        // thread's (and the test harness captures it).
        std::print!("{text}");
        text.len() as i32
    }

    /// What a conversion consumes (internal).
    #[doc(hidden)]
    #[derive(Clone, Copy, PartialEq, Eq, Debug)]
    pub enum ArgKind {
        Int32,
        Int64,
        Float,
        Str,
        Ptr,
    }

    /// Seals [`PrintfArg`] and [`PrintfArgs`]: what `vprintf` reads is decided by the
    /// impls of this module alone (an impl elsewhere could pass a `%s` argument that points
    /// to anything).
    mod sealed {
        pub trait Sealed {}
    }

    /// A type `dprint!` accepts as an argument; see the module docs. Sealed: the integers,
    /// floats, `bool`, `&CStr` and raw pointers (`%p`).
    pub trait PrintfArg: Copy + sealed::Sealed {
        /// The C type it is promoted to (its size is its alignment).
        #[doc(hidden)]
        type Promoted: Copy;
        #[doc(hidden)]
        const KIND: ArgKind;
        #[doc(hidden)]
        fn promote(self) -> Self::Promoted;
    }

    macro_rules! arg {
        ($($t:ty => $p:ty, $k:ident, |$x:ident| $e:expr;)*) => {$(
            impl sealed::Sealed for $t {}
            impl PrintfArg for $t {
                type Promoted = $p;
                const KIND: ArgKind = ArgKind::$k;
                #[inline(always)]
                fn promote(self) -> $p {
                    let $x = self;
                    $e
                }
            }
        )*};
    }

    arg! {
        i8 => i32, Int32, |x| x as i32;
        u8 => u32, Int32, |x| x as u32;
        i16 => i32, Int32, |x| x as i32;
        u16 => u32, Int32, |x| x as u32;
        i32 => i32, Int32, |x| x;
        u32 => u32, Int32, |x| x;
        bool => u32, Int32, |x| x as u32;
        i64 => i64, Int64, |x| x;
        u64 => u64, Int64, |x| x;
        isize => i64, Int64, |x| x as i64;
        usize => u64, Int64, |x| x as u64;
        f32 => f64, Float, |x| x as f64;
        f64 => f64, Float, |x| x;
        &CStr => *const u8, Str, |x| x.as_ptr() as *const u8;
    }

    impl<T> sealed::Sealed for *const T {}
    impl<T> sealed::Sealed for *mut T {}
    impl<T> PrintfArg for *const T {
        type Promoted = *const u8;
        const KIND: ArgKind = ArgKind::Ptr;
        #[inline(always)]
        fn promote(self) -> *const u8 {
            self as *const u8
        }
    }

    impl<T> PrintfArg for *mut T {
        type Promoted = *const u8;
        const KIND: ArgKind = ArgKind::Ptr;
        #[inline(always)]
        fn promote(self) -> *const u8 {
            self as *const u8
        }
    }

    /// A tuple of [`PrintfArg`]s, packed as one `#[repr(C)]` struct (internal; sealed).
    #[doc(hidden)]
    pub trait PrintfArgs: sealed::Sealed {
        const KINDS: &'static [ArgKind];
        type Packed;
        fn pack(self) -> Self::Packed;
    }

    macro_rules! tuples {
        ($($s:ident($($a:ident $f:ident),*);)*) => {$(
            #[doc(hidden)]
            #[repr(C)]
            pub struct $s<$($a),*> { $($f: $a),* }

            impl<$($a: PrintfArg),*> sealed::Sealed for ($($a,)*) {}
            impl<$($a: PrintfArg),*> PrintfArgs for ($($a,)*) {
                const KINDS: &'static [ArgKind] = &[$($a::KIND),*];
                type Packed = $s<$($a::Promoted),*>;
                #[inline(always)]
                #[allow(non_snake_case)]
                fn pack(self) -> Self::Packed {
                    let ($($f,)*) = self;
                    $s { $($f: $f.promote()),* }
                }
            }
        )*};
    }

    impl sealed::Sealed for () {}
    impl PrintfArgs for () {
        const KINDS: &'static [ArgKind] = &[];
        type Packed = ();
        fn pack(self) {}
    }

    tuples! {
        P1(A a);
        P2(A a, B b);
        P3(A a, B b, C c);
        P4(A a, B b, C c, D d);
        P5(A a, B b, C c, D d, E e);
        P6(A a, B b, C c, D d, E e, F f);
        P7(A a, B b, C c, D d, E e, F f, G g);
        P8(A a, B b, C c, D d, E e, F f, G g, H h);
        P9(A a, B b, C c, D d, E e, F f, G g, H h, I i);
        P10(A a, B b, C c, D d, E e, F f, G g, H h, I i, J j);
        P11(A a, B b, C c, D d, E e, F f, G g, H h, I i, J j, K k);
        P12(A a, B b, C c, D d, E e, F f, G g, H h, I i, J j, K k, L l);
    }

    /// The format string of one `dprint!` call (internal).
    #[doc(hidden)]
    pub trait Format {
        /// NUL-terminated.
        const FMT: &'static str;
    }

    /// Whether the C format `fmt` consumes exactly `kinds`, in order, and is a C string:
    /// NUL-terminated, with no NUL before its end (`vprintf` reads up to the first NUL).
    /// Length modifiers go with integer conversions only (`%ld`, `%llu`, `%zu`, `%hd`),
    /// and `l` with floats (`%lf`): a wide `%ls`/`%lc` or a `long double` `%Lf` would read
    /// other than the argument passed.
    #[doc(hidden)]
    pub const fn format_matches(fmt: &str, kinds: &[ArgKind]) -> bool {
        let b = fmt.as_bytes();
        if b.is_empty() || b[b.len() - 1] != 0 {
            return false;
        }
        let b = b.split_at(b.len() - 1).0;
        let mut i = 0;
        let mut k = 0;
        while i < b.len() {
            if b[i] == 0 {
                return false;
            }
            if b[i] != b'%' {
                i += 1;
                continue;
            }
            i += 1;
            if i < b.len() && b[i] == b'%' {
                i += 1;
                continue;
            }
            // flags, width, precision
            while i < b.len() && matches!(b[i], b'-' | b'+' | b' ' | b'#' | b'0'..=b'9' | b'.') {
                i += 1;
            }
            // length
            let mut long = false;
            let mut modifiers = 0;
            let mut only_l = true;
            while i < b.len() && matches!(b[i], b'h' | b'l' | b'z' | b'j' | b't' | b'L') {
                if matches!(b[i], b'l' | b'z' | b'j' | b't') {
                    long = true;
                }
                if b[i] != b'l' {
                    only_l = false;
                }
                modifiers += 1;
                i += 1;
            }
            let modified = modifiers > 0;
            let only_l = only_l && modifiers == 1;
            if i >= b.len() {
                return false;
            }
            let want = match b[i] {
                b'c' | b's' | b'p' if modified => return false,
                b'f' | b'F' | b'e' | b'E' | b'g' | b'G' | b'a' | b'A' if modified && !only_l => return false,
                b'd' | b'i' | b'u' | b'x' | b'X' | b'o' | b'c' => {
                    if long {
                        ArgKind::Int64
                    } else {
                        ArgKind::Int32
                    }
                }
                b'f' | b'F' | b'e' | b'E' | b'g' | b'G' | b'a' | b'A' => ArgKind::Float,
                b's' => ArgKind::Str,
                b'p' => ArgKind::Ptr,
                _ => return false, // `*`, `%n` and unknown conversions are refused
            };
            i += 1;
            if k >= kinds.len() || !kind_eq(kinds[k], want) {
                return false;
            }
            k += 1;
        }
        k == kinds.len()
    }

    const fn kind_eq(a: ArgKind, b: ArgKind) -> bool {
        a as u8 == b as u8
    }

    /// Checks `F::FMT` against `A` at compile time, packs and prints (internal;
    /// use `dprint!`).
    #[doc(hidden)]
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub fn __print<F: Format, A: PrintfArgs>(args: A) {
        const {
            assert!(
                format_matches(F::FMT, A::KINDS),
                "dprint!: the format string does not match the arguments (see sluice_device::io)"
            )
        };
        let packed = args.pack();
        let p = if core::mem::size_of::<A::Packed>() == 0 {
            core::ptr::null()
        } else {
            &packed as *const A::Packed as *const u8
        };
        // SAFETY: `F::FMT` is NUL-terminated (the macro appends the NUL); every
        // conversion in it matches the promoted type at the same position of the
        // `#[repr(C)]` `packed` (checked above at compile time), so `vprintf`
        // reads only these live bytes and, for `%s`, NUL-terminated `CStr`s that
        // outlive the call.
        unsafe { vprintf(F::FMT.as_ptr(), p) };
    }

    /// `file` (a `file!()`) relative to the folder that holds the crate's own folder
    /// (`manifest_dir`'s parent): `/home/me/.cargo/git/checkouts/sluice-1/abc/gpu-kernels/device/src/shared.rs`
    /// becomes `device/src/shared.rs`, so a fault message carries no build machine's absolute
    /// path. A path that is already relative (a workspace member's) stays as it is.
    #[doc(hidden)]
    pub const fn __short_path<'a>(file: &'a str, manifest_dir: &str) -> &'a str {
        let (f, m) = (file.as_bytes(), manifest_dir.as_bytes());
        // The manifest dir's parent: up to its last `/` or `\`.
        let mut cut = m.len();
        while cut > 0 && m[cut - 1] != b'/' && m[cut - 1] != b'\\' {
            cut -= 1;
        }
        if cut == 0 || f.len() <= cut {
            return file;
        }
        let mut i = 0;
        while i < cut {
            if f[i] != m[i] {
                return file;
            }
            i += 1;
        }
        let (_, rest) = f.split_at(cut);
        match core::str::from_utf8(rest) {
            Ok(s) => s,
            Err(_) => file,
        }
    }

    /// Length of the `%`-escaped concatenation of `parts`, plus the NUL.
    #[doc(hidden)]
    pub const fn __escaped_len(parts: &[&str]) -> usize {
        let mut n = 1;
        let mut p = 0;
        while p < parts.len() {
            let b = parts[p].as_bytes();
            let mut i = 0;
            while i < b.len() {
                n += if b[i] == b'%' { 2 } else { 1 };
                i += 1;
            }
            p += 1;
        }
        n
    }

    /// The concatenation of `parts` with `%` doubled (so it prints literally
    /// as a format) and NUL-terminated; interior NULs become `?`.
    #[doc(hidden)]
    pub const fn __escape<const N: usize>(parts: &[&str]) -> [u8; N] {
        let mut out = [0u8; N];
        let mut n = 0;
        let mut p = 0;
        while p < parts.len() {
            let b = parts[p].as_bytes();
            let mut i = 0;
            while i < b.len() {
                if b[i] == b'%' {
                    out[n] = b'%';
                    n += 1;
                }
                out[n] = if b[i] == 0 { b'?' } else { b[i] };
                n += 1;
                i += 1;
            }
            p += 1;
        }
        out
    }

    /// Where a failing kernel leaves its message for the host: the device address of a
    /// [`FAULT_RECORD_BYTES`]-byte record in host memory mapped for the device, written by
    /// the host library when it loads the module (0 before that, or when the host does not
    /// ask). Host memory outlives the context a fault destroys, so the host reads the
    /// record after the fault. Not an API.
    #[cfg(target_arch = "nvptx64")]
    #[doc(hidden)]
    #[unsafe(no_mangle)]
    pub static mut __sluice_fault_record: u64 = 0;

    /// Records a failing thread (its block and thread index and `message`, NUL-less,
    /// truncated to fit) in the fault record, if the host set one and no other thread
    /// got there first. The layout, in `u32` words: state (0 empty, 1 being written, 2
    /// written), block x y z, thread x y z, the message's length in bytes, then the
    /// message from byte 32. Cold and out of line: only a failing thread runs it.
    #[cfg(target_arch = "nvptx64")]
    #[cold]
    #[inline(never)]
    pub(crate) fn record_fault(message: &[u8]) {
        record_fault_parts(&[Part::Text(message.strip_suffix(b"\0").unwrap_or(message))]);
    }

    /// A piece of a fault message: text, or a number written in decimal.
    #[cfg(target_arch = "nvptx64")]
    #[derive(Clone, Copy)]
    pub(crate) enum Part<'a> {
        Text(&'a [u8]),
        Number(u32),
    }

    /// [`record_fault`] of the concatenation of `parts` (numbers in decimal), without a
    /// buffer of its own: the bytes go straight into the record.
    #[cfg(target_arch = "nvptx64")]
    #[cold]
    #[inline(never)]
    pub(crate) fn record_fault_parts(parts: &[Part<'_>]) {
        use crate::{atomic, thread, MemoryScope};
        // SAFETY: a plain 8-byte global the host writes before launching anything of this
        // module; read volatile, as the host changes it behind the compiler's back.
        let record = unsafe { core::ptr::addr_of!(__sluice_fault_record).read_volatile() } as *mut u32;
        if record.is_null() {
            return;
        }
        // SAFETY: the host set `record` to a live, 4-aligned, device-mapped record of
        // FAULT_RECORD_BYTES bytes; its first word is only accessed atomically.
        if unsafe { atomic::global::compare_exchange(record, 0u32, 1, MemoryScope::System) }.is_err() {
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

    /// Ends the kernel with `message`, located at the caller (through `#[track_caller]`
    /// device functions: the kernel's own line, so the host names the kernel that failed,
    /// and the path is the kernel crate's, not the device std's). The fault record gets
    /// `kernel failed at FILE:LINE:COL: MESSAGE`; stdout gets the message (the launch's
    /// error carries the location). Internal: the device std's own checks
    /// (`DeviceSliceMut::write`, shared-memory bounds) use it.
    #[doc(hidden)]
    #[cold]
    #[inline(never)]
    #[track_caller]
    #[cfg(target_arch = "nvptx64")]
    pub fn __fail_at(message: &'static CStr) -> ! {
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
        static FORMAT: &CStr = c"kernel failed (the launch's error says where): %s\n";
        let args = message.as_ptr();
        // SAFETY: a constant NUL-terminated format whose only conversion, `%s`, reads the
        // one argument passed: a pointer to a NUL-terminated string (`message`).
        unsafe { vprintf(FORMAT.as_ptr().cast(), (&args as *const *const core::ffi::c_char).cast()) };
        // SAFETY: `trap` has no preconditions; it aborts this kernel launch.
        unsafe { core::arch::nvptx::trap() }
    }

    /// The host's `__fail_at`: a panic with the message at the caller's location (the CPU
    /// runtime reports it with the thread and that location).
    #[doc(hidden)]
    #[cold]
    #[track_caller]
    #[cfg(not(target_arch = "nvptx64"))]
    pub fn __fail_at(message: &'static CStr) -> ! {
        panic!("{}", message.to_str().unwrap_or("a device check failed"))
    }

    /// Prints `format` (NUL-terminated, no conversions) and ends the kernel
    /// with `trap` (internal; use `dassert!`/`dfail!`).
    ///
    /// # Safety
    /// `format` is what `__escape` made: NUL-terminated, every `%` doubled (`vprintf`
    /// then reads no argument).
    #[doc(hidden)]
    #[inline(always)]
    #[cold]
    #[cfg(target_arch = "nvptx64")]
    pub unsafe fn __fail(format: &'static [u8]) -> ! {
        record_fault(format);
        // SAFETY: made by `__escape`: NUL-terminated, every `%` doubled, so
        // vprintf reads no argument (and none is passed).
        unsafe { vprintf(format.as_ptr(), core::ptr::null()) };
        // SAFETY: `trap` has no preconditions; it aborts this kernel launch.
        unsafe { core::arch::nvptx::trap() }
    }

    /// The host's `dfail!`: panics with the message (the CPU runtime reports
    /// it with the thread and the location, that of the `dassert!`/`dfail!`,
    /// or of the caller of a `#[track_caller]` device function that failed).
    ///
    /// # Safety
    /// None on the host (the device's contract is kept for one signature on both).
    #[doc(hidden)]
    #[cold]
    #[cfg(not(target_arch = "nvptx64"))]
    #[track_caller]
    pub unsafe fn __fail(format: &'static [u8]) -> ! {
        let text =
            std::string::String::from_utf8_lossy(format.strip_suffix(b"\0").unwrap_or(format)).replace("%%", "%");
        let text = text.trim_end_matches('\n');
        // `kernel failed at FILE:LINE:COL: MESSAGE`: the panic has the location.
        let message = text.strip_prefix("kernel failed at ").and_then(|t| t.split_once(": ")).map_or(text, |(_, m)| m);
        panic!("{message}")
    }

    /// Copies `s` into `buf` with a NUL, truncated to fit.
    #[cfg(all(target_arch = "nvptx64", sluice_panic_messages))]
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
    #[cfg(all(target_arch = "nvptx64", not(sluice_panic_messages)))]
    #[panic_handler]
    #[cold]
    fn panic(_info: &core::panic::PanicInfo<'_>) -> ! {
        // SAFETY: `trap` has no preconditions; it aborts this kernel launch.
        unsafe { core::arch::nvptx::trap() }
    }

    // The debug handler (`--cfg sluice_panic_messages`): prints the location and
    // a plain-string message, then traps. Not inlined, and cold: the message
    // buffer then lives in this function's frame, not in every kernel's.
    #[cfg(all(target_arch = "nvptx64", sluice_panic_messages))]
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
}

/// Prints from the device with a C format string, through `vprintf` (on the
/// host, the CPU runtime formats it as C does). The format is checked against
/// the argument types at compile time; see [`io`](crate::io).
///
/// ```ignore
/// sluice_device::dprint!("x = %f, ", x);
/// ```
#[macro_export]
macro_rules! dprint {
    ($fmt:literal $(, $arg:expr)* $(,)?) => {
        $crate::__dprint_impl!(concat!($fmt, "\0") $(, $arg)*)
    };
}

/// [`dprint!`](crate::dprint) with a newline appended.
///
/// ```ignore
/// sluice_device::dprintln!("thread %u of %u", tid, n);
/// ```
#[macro_export]
macro_rules! dprintln {
    ($fmt:literal $(, $arg:expr)* $(,)?) => {
        $crate::__dprint_impl!(concat!($fmt, "\n\0") $(, $arg)*)
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __dprint_impl {
    ($fmt:expr $(, $arg:expr)*) => {{
        struct __SluiceFmt;
        impl $crate::io::Format for __SluiceFmt {
            const FMT: &'static str = $fmt;
        }
        $crate::io::__print::<__SluiceFmt, _>(($($arg,)*));
    }};
}

/// Ends the kernel with a message: prints `kernel failed at FILE:LINE:COL: MESSAGE`
/// through `vprintf` and executes `trap` (on the host: a panic with the message
/// at the call site, which fails the CPU launch).
///
/// Unlike `panic!`, it needs no buffer and no `core::panicking` call: the
/// whole line is one constant format string (built at compile time, `%`
/// escaped), so the kernel gets no stack frame for it. `MESSAGE` is any
/// constant `&str` expression.
///
/// ```ignore
/// sluice_device::dfail!("the block must be (32, 8, 1)");
/// ```
#[macro_export]
macro_rules! dfail {
    ($msg:expr) => {{
        const __SLUICE_PARTS: &[&str] = &[
            "kernel failed at ",
            $crate::io::__short_path(file!(), env!("CARGO_MANIFEST_DIR")),
            concat!(":", line!(), ":", column!(), ": "),
            $msg,
            "\n",
        ];
        const __SLUICE_LEN: usize = $crate::io::__escaped_len(__SLUICE_PARTS);
        const __SLUICE_FMT: [u8; __SLUICE_LEN] = $crate::io::__escape::<__SLUICE_LEN>(__SLUICE_PARTS);
        // SAFETY: `__escape` made the format: NUL-terminated, every `%` doubled.
        unsafe { $crate::io::__fail(&__SLUICE_FMT) }
    }};
}

/// `assert!` for kernels: if `cond` is false, [`dfail!`](crate::dfail) with
/// the message (or the condition's text). Cheaper than `assert!`, whose panic
/// path copies its message into a local buffer (see [`io`](crate::io)).
///
/// ```ignore
/// sluice_device::dassert!(thread::block_dim_x() % 32 == 0, "sum_reduce: block of whole warps");
/// ```
#[macro_export]
macro_rules! dassert {
    ($cond:expr $(,)?) => {
        if !$cond {
            $crate::dfail!(concat!("assertion failed: ", stringify!($cond)))
        }
    };
    ($cond:expr, $msg:expr $(,)?) => {
        if !$cond {
            $crate::dfail!($msg)
        }
    };
}

#[cfg(test)]
mod tests {
    use super::__short_path;

    #[test]
    fn fault_paths_are_relative_to_the_crates_folder() {
        let dir = "/home/me/.cargo/git/checkouts/sluice-1/abc/gpu-kernels/device";
        assert_eq!(
            __short_path("/home/me/.cargo/git/checkouts/sluice-1/abc/gpu-kernels/device/src/shared.rs", dir),
            "device/src/shared.rs"
        );
        // A workspace member's path is relative already; another folder's stays whole.
        assert_eq!(__short_path("kernels/src/lib.rs", "/work/app/kernels"), "kernels/src/lib.rs");
        assert_eq!(__short_path("/elsewhere/src/lib.rs", dir), "/elsewhere/src/lib.rs");
        assert_eq!(__short_path("C:\\app\\kernels\\src\\lib.rs", "C:\\app\\kernels"), "kernels\\src\\lib.rs");
        assert_eq!(__short_path("x", ""), "x");
    }
}
