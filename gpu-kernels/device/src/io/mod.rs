//! Device-side output: [`dprint!`](crate::dprint) and [`dprintln!`](crate::dprintln)
//! through the CUDA driver's `vprintf`, and the panic handler (device only).
//!
//! | sluice | CUDA C++ | PTX |
//! | --- | --- | --- |
//! | [`dprint!`](crate::dprint), [`dprintln!`](crate::dprintln) | `printf(fmt, ...)` | `call vprintf` |
//! | [`dassert!`](crate::dassert), [`dfail!`](crate::dfail) | `assert(c)` (with a message) | `vprintf`, then `trap` |
//! | (the panic handler) | (a device-side `assert` failing) | `trap` |
//!
//! # Hardware support
//!
//! Every architecture.
//!
//! # On the CPU
//!
//! `dprint!` formats the same C format string as C's `printf` does (`cpu.rs`,
//! `printf.rs`) and prints it at once (one `print!` per call, so lines of
//! different threads never interleave, and the test harness captures them);
//! `dassert!`/`dfail!` and panics fail the launch with the thread, the location
//! and the message (the CPU runtime, [`crate::cpu`]). Nothing here touches kernel
//! memory: a race checker has nothing to see.
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
//! `*` widths and precisions are not accepted, nor a width or precision over
//! [`MAX_FIELD`] (1024); at most 12 arguments (CUDA allows 32; more tuple impls
//! would lift the limit).
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

// The backend, chosen once: the driver's `vprintf`, the fault record and the panic
// handler on the GPU; C-style formatting on stdout and panics on the CPU.
#[cfg_attr(target_arch = "nvptx64", path = "gpu.rs")]
#[cfg_attr(not(target_arch = "nvptx64"), path = "cpu.rs")]
mod imp;

/// The size of the fault record a failing kernel writes for the host (see `dfail!`): the
/// host library allocates it and reads the block, thread and message of the first thread
/// that failed after the fault.
pub const FAULT_RECORD_BYTES: usize = 256;

use core::ffi::CStr;

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

/// Seals [`PrintfArg`] and [`PrintfArgs`]: what `vprintf` reads is decided by the impls
/// of this module alone (an impl elsewhere could pass a `%s` argument that points to
/// anything).
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
/// Length modifiers go with integer conversions only, as `h`, `hh`, `l`, `ll`, `z`, `j`
/// or `t` (`%ld`, `%llu`, `%zu`, `%hd`), and `l` with floats (`%lf`): a wide `%ls`/`%lc`,
/// a `long double` `%Lf` or an `%Ld` would read other than the argument passed. A width
/// or precision is at most [`MAX_FIELD`].
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
        // flags, then a width and a `.precision`, each at most MAX_FIELD
        while i < b.len() && matches!(b[i], b'-' | b'+' | b' ' | b'#' | b'0') {
            i += 1;
        }
        let mut field = 0;
        while i < b.len() && b[i].is_ascii_digit() {
            field = field * 10 + (b[i] - b'0') as usize;
            if field > MAX_FIELD {
                return false;
            }
            i += 1;
        }
        if i < b.len() && b[i] == b'.' {
            i += 1;
            let mut precision = 0;
            while i < b.len() && b[i].is_ascii_digit() {
                precision = precision * 10 + (b[i] - b'0') as usize;
                if precision > MAX_FIELD {
                    return false;
                }
                i += 1;
            }
        }
        // length: one of h, hh, l, ll, z, j, t (L, for long double, is refused)
        let start = i;
        while i < b.len() && matches!(b[i], b'h' | b'l' | b'z' | b'j' | b't' | b'L') {
            i += 1;
        }
        let modifier = b.split_at(i).0.split_at(start).1;
        let (int_ok, long) = match modifier {
            [] | [b'h'] | [b'h', b'h'] => (true, false),
            [b'l'] | [b'l', b'l'] | [b'z'] | [b'j'] | [b't'] => (true, true),
            _ => return false,
        };
        if i >= b.len() {
            return false;
        }
        let want = match b[i] {
            b'd' | b'i' | b'u' | b'x' | b'X' | b'o' if int_ok => {
                if long {
                    ArgKind::Int64
                } else {
                    ArgKind::Int32
                }
            }
            b'c' if modifier.is_empty() => ArgKind::Int32,
            b'f' | b'F' | b'e' | b'E' | b'g' | b'G' | b'a' | b'A' if matches!(modifier, [] | [b'l']) => ArgKind::Float,
            b's' if modifier.is_empty() => ArgKind::Str,
            b'p' if modifier.is_empty() => ArgKind::Ptr,
            _ => return false, // `*`, `%n`, wide or long-double conversions and unknown ones are refused
        };
        i += 1;
        if k >= kinds.len() || !kind_eq(kinds[k], want) {
            return false;
        }
        k += 1;
    }
    k == kinds.len()
}

/// The largest width or precision a format may give (`%1024d`, `%.1024f`): a field is
/// printed into the device's printf buffer (1 MiB by default, shared by every thread), so
/// a wider one would only fill it; `dprint!` refuses a larger one at compile time.
pub const MAX_FIELD: usize = 1024;

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
    unsafe { imp::vprintf(F::FMT.as_ptr(), p) };
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

/// Prints `format` (NUL-terminated, no conversions) and ends the kernel with
/// `trap`; on the CPU, panics with the message (internal; use `dassert!`/`dfail!`).
///
/// # Safety
/// `format` is what `__escape` made: NUL-terminated, every `%` doubled (`vprintf` then
/// reads no argument).
#[doc(hidden)]
#[inline(always)]
#[cold]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn __fail(format: &'static [u8]) -> ! {
    imp::fail(format)
}

/// Ends the kernel with `message`, located at the caller (through `#[track_caller]`
/// device functions: the kernel's own line, so the host names the kernel that failed,
/// and the path is the kernel crate's, not the device std's). The fault record gets
/// `kernel failed at FILE:LINE:COL: MESSAGE`; on the CPU, a panic with the message at
/// that location. Internal: the device std's own checks (`DeviceSliceMut::write`) use it.
#[doc(hidden)]
#[cold]
#[cfg_attr(not(target_feature = "sm_90a"), inline(never))]
#[cfg_attr(target_feature = "sm_90a", inline(always))]
#[track_caller]
pub fn __fail_at(message: &'static CStr) -> ! {
    imp::fail_at(message)
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
    use super::{__short_path, format_matches, ArgKind};

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

    #[test]
    fn formats_are_c_strings_whose_conversions_read_what_is_passed() {
        use ArgKind::*;
        let ok = |f: &str, k: &[ArgKind]| assert!(format_matches(f, k), "{f:?} should match {k:?}");
        let no = |f: &str, k: &[ArgKind]| assert!(!format_matches(f, k), "{f:?} should not match {k:?}");
        ok("x = %d, %u, %x\0", &[Int32, Int32, Int32]);
        ok("%ld %llu %zu %hd %hhx\0", &[Int64, Int64, Int64, Int32, Int32]);
        ok("%f %lf %e %s %p %c %%\0", &[Float, Float, Float, Str, Ptr, Int32]);
        ok("%-8.3f|%08x\0", &[Float, Int32]);
        no("%d", &[Int32]); // no NUL
        no("a\0%d\0", &[Int32]); // a NUL before the end: vprintf stops there
        no("%Ld\0", &[Int32]); // long long on the host's C library
        no("%Lf\0", &[Float]); // long double
        no("%lld\0", &[Int32]);
        no("%ls\0", &[Str]); // wide string
        no("%lc\0", &[Int32]);
        no("%hhhd\0", &[Int32]);
        no("%lllu\0", &[Int64]);
        no("%hf\0", &[Float]);
        no("%n\0", &[Ptr]);
        no("%*d\0", &[Int32, Int32]);
        no("%d %d\0", &[Int32]);
        no("%s\0", &[Int32]);
        // Widths and precisions up to MAX_FIELD; larger ones (which overflowed the CPU's
        // printf, or printed gigabytes of spaces) are refused.
        ok("%1024d|%.1024f|%1024.1024e\0", &[Int32, Float, Float]);
        no("%1025d\0", &[Int32]);
        no("%.1025f\0", &[Float]);
        no("%4294967297d\0", &[Int32]);
        no("%99999999999999999999d\0", &[Int32]);
        no("%.99999999999999999999f\0", &[Float]);
    }
}
