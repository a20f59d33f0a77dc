//! `shared` on the GPU: `.shared` declarations (one small never-inlined function per
//! variable), `ld.shared`/`st.shared` with the widest accesses an alignment allows,
//! `cvta.shared`, and the dynamic region's symbol and size.

use super::SharedStatic;
use crate::spec::shared::array_align;
use core::arch::asm;
use core::mem::{size_of, MaybeUninit};

macro_rules! chunk_io {
    ($($load:ident, $store:ident, $ty:ty, $width:literal, $n:literal: $($r:ident)*;)*) => {$(
        #[inline(always)]
        unsafe fn $load(addr: u32) -> [$ty; $n] {
            $(let $r: u32;)*
            // SAFETY: the caller passes a valid, suitably aligned shared address.
            unsafe {
                asm!(
                    concat!("ld.shared", $width, " ", chunk_io!(@regs $($r)*), ", [{a}];"),
                    a = in(reg32) addr,
                    $($r = out(reg32) $r,)*
                    options(pure, readonly, nostack, preserves_flags),
                );
            }
            [$($r as $ty),*]
        }
        #[inline(always)]
        unsafe fn $store(addr: u32, v: [$ty; $n]) {
            let [$($r),*] = v;
            // SAFETY: the caller passes a valid, suitably aligned shared address.
            unsafe {
                asm!(
                    concat!("st.shared", $width, " [{a}], ", chunk_io!(@regs $($r)*), ";"),
                    a = in(reg32) addr,
                    $($r = in(reg32) $r as u32,)*
                    options(nostack, preserves_flags),
                );
            }
        }
    )*};
    (@regs $r:ident) => { concat!("{", stringify!($r), "}") };
    (@regs $($r:ident)*) => { concat!("{{", chunk_io!(@list $($r)*), "}}") };
    (@list $r:ident) => { concat!("{", stringify!($r), "}") };
    (@list $r:ident $($rest:ident)+) => { concat!("{", stringify!($r), "}, ", chunk_io!(@list $($rest)+)) };
}

chunk_io! {
    ld_v4, st_v4, u32, ".v4.b32", 4: r0 r1 r2 r3;
    ld_v2, st_v2, u32, ".v2.b32", 2: r0 r1;
    ld_b32, st_b32, u32, ".b32", 1: r0;
    ld_b16, st_b16, u16, ".u16", 1: r0;
    ld_b8, st_b8, u8, ".u8", 1: r0;
}

/// Loads a `T` from shared address `addr`, known to be `align`-aligned,
/// with the widest instructions the alignment allows (the branches fold
/// away: `size` and `align` are constants after inlining).
///
/// # Safety
/// `addr..addr + size_of::<T>()` is allocated shared memory, `addr` is
/// `align`-aligned and `align >= align_of::<T>()`; any bits form a valid `T`.
#[inline(always)]
pub(super) unsafe fn load<T: Copy>(addr: u32, align: usize) -> T {
    let size = size_of::<T>();
    let mut out = MaybeUninit::<T>::uninit();
    let p = out.as_mut_ptr() as *mut u8;
    let mut off = 0usize;
    // SAFETY: (whole block) every chunk lies inside `T` (the loops stop at
    // `size`) and inside the caller's allocated, aligned range; the local
    // writes are unaligned-tolerant.
    unsafe {
        macro_rules! go {
            ($w:literal, $ld:ident) => {
                while off + $w <= size {
                    let v = $ld(addr + off as u32);
                    core::ptr::write_unaligned(p.add(off) as *mut _, v);
                    off += $w;
                }
            };
        }
        if align >= 16 {
            go!(16, ld_v4);
        }
        if align >= 8 {
            go!(8, ld_v2);
        }
        if align >= 4 {
            go!(4, ld_b32);
        }
        if align >= 2 {
            go!(2, ld_b16);
        }
        go!(1, ld_b8);
        out.assume_init()
    }
}

/// Stores `v` at shared address `addr`; see [`load`].
///
/// # Safety
/// As [`load`]; `T` has no padding (its bytes are all initialised).
#[inline(always)]
pub(super) unsafe fn store<T: Copy>(addr: u32, align: usize, v: T) {
    let size = size_of::<T>();
    let p = &v as *const T as *const u8;
    let mut off = 0usize;
    // SAFETY: as in `load`; reads of `v`'s bytes are in bounds and
    // initialised because `T` has no padding (caller's duty).
    unsafe {
        macro_rules! go {
            ($w:literal, $st:ident) => {
                while off + $w <= size {
                    $st(addr + off as u32, core::ptr::read_unaligned(p.add(off) as *const _));
                    off += $w;
                }
            };
        }
        if align >= 16 {
            go!(16, st_v4);
        }
        if align >= 8 {
            go!(8, st_v2);
        }
        if align >= 4 {
            go!(4, st_b32);
        }
        if align >= 2 {
            go!(2, st_b16);
        }
        go!(1, st_b8);
    }
}

/// The address and size in bytes of the dynamic shared-memory region
/// (`sluice_dynamic_shared`, `%dynamic_smem_size`).
#[inline(always)]
pub(super) fn dynamic_region() -> (u32, u32) {
    let (addr, bytes): (u32, u32);
    // SAFETY: reads the address of the region declared in this crate's
    // `global_asm!` and a special register; no memory is accessed.
    unsafe {
        asm!(
            "mov.u32 {a}, sluice_dynamic_shared;",
            "mov.u32 {n}, %dynamic_smem_size;",
            a = out(reg32) addr,
            n = out(reg32) bytes,
            options(pure, nomem, nostack, preserves_flags),
        );
    }
    (addr, bytes)
}

/// `%dynamic_smem_size`.
#[inline(always)]
pub(super) fn dynamic_shared_bytes() -> u32 {
    let n: u32;
    // SAFETY: reads a special register.
    unsafe {
        asm!("mov.u32 {n}, %dynamic_smem_size;", n = out(reg32) n, options(pure, nomem, nostack, preserves_flags))
    };
    n
}

/// Declares `.shared .align A .b8 sluice_shared_H[size_of::<T>()]` and
/// returns its shared-window address: one `mov` of the symbol. The declaration
/// is an `asm!` statement of its own, which sluice's bitcode linker moves to
/// the PTX module's scope, once per name, before optimising (see the module
/// docs): however often this is inlined, unrolled or duplicated, the PTX
/// declares the variable once.
#[inline(always)]
pub(super) fn declare<T, const H: u64>() -> u32 {
    // SAFETY: declares a variable; no memory is accessed. The linker removes
    // the statement from the function and declares the variable at module scope.
    unsafe {
        asm!(
            ".shared .align {align} .b8 sluice_shared_{h}[{bytes}];",
            align = const array_align::<T>(),
            h = const H,
            bytes = const if size_of::<T>() == 0 { 1 } else { size_of::<T>() },
            options(nomem, nostack, preserves_flags),
        );
    }
    symbol::<H>()
}

/// The generic address (`cvta.shared.u64`) of shared-window address `addr`.
#[inline(always)]
pub(super) fn generic<T>(addr: u32) -> *mut T {
    let p: u64;
    // SAFETY: an address conversion; no memory is accessed.
    unsafe {
        asm!("cvta.shared.u64 {p}, {a};", p = out(reg64) p, a = in(reg64) addr as u64,
             options(pure, nomem, nostack, preserves_flags))
    };
    p as *mut T
}

/// The shared-window address of `sluice_shared_H`, declared at the PTX module's
/// scope (by [`declare`] or [`declare_in_kernel`], through the linker): one `mov`.
#[inline(always)]
pub(super) fn symbol<const H: u64>() -> u32 {
    let addr: u32;
    // SAFETY: reads a symbol's address; no memory is accessed. The symbol is
    // declared by the kernel's prologue (`declare_in_kernel`), else ptxas
    // stops with an undefined-symbol error.
    unsafe {
        asm!("mov.u32 {a}, sluice_shared_{h};", h = const H, a = out(reg32) addr,
             options(pure, nomem, nostack, preserves_flags))
    };
    addr
}

/// Declares the `.shared` variable of an in-kernel [`SharedStatic`] (one made
/// by `shared_static!(@kernel ...)`) in the calling function. The kernel
/// attribute calls it once, as the entry's first statement, for every such
/// static in the kernel's body; the static's accesses then cost one `mov`
/// each instead of a call.
///
/// # Safety
///
/// Called exactly once per static, in the body of the kernel entry that
/// declares the static, before any use (a second call is a ptxas
/// "duplicate definition" error; a missing one an undefined symbol).
#[inline(always)]
pub(super) unsafe fn declare_in_kernel<T, const H: u64>(_static: *const SharedStatic<T, H, true>) {
    // SAFETY: a declaration; no memory is accessed. Not `pure`: it has no
    // output and must stay.
    unsafe {
        asm!(
            ".shared .align {align} .b8 sluice_shared_{h}[{bytes}];",
            align = const array_align::<T>(),
            h = const H,
            bytes = const if size_of::<T>() == 0 { 1 } else { size_of::<T>() },
            options(nomem, nostack, preserves_flags),
        );
    }
}

/// Bytes of shared memory per block of this launch, static and dynamic
/// (`%total_smem_size`, rounded up to the allocation unit).
#[inline(always)]
pub(super) fn total_shared_bytes() -> u32 {
    let n: u32;
    // SAFETY: reads a special register.
    unsafe { asm!("mov.u32 {n}, %total_smem_size;", n = out(reg32) n, options(pure, nomem, nostack, preserves_flags)) };
    n
}

/// A generic `*mut T` to the start of this launch's dynamic shared memory
/// (CUDA's `extern __shared__ T buf[]`; 16-aligned; as many bytes as the
/// launch asked for, see [`dynamic_shared_bytes`]). Accesses through it compile
/// to generic loads and stores; [`dynamic_shared`] gives checked `ld/st.shared`.
#[inline(always)]
pub(super) fn dynamic_shared_ptr<T>() -> *mut T {
    let addr: u32;
    // SAFETY: reads the address of the region declared below; no memory is accessed.
    unsafe {
        asm!("mov.u32 {a}, sluice_dynamic_shared;", a = out(reg32) addr,
             options(pure, nomem, nostack, preserves_flags))
    };
    generic(addr)
}

// The one declaration of the dynamic region, at module scope.
core::arch::global_asm!(".extern .shared .align 16 .b8 sluice_dynamic_shared[];");

/// The variable's shared-window address: one `mov` of its symbol for an
/// in-kernel static (declared by the kernel's prologue), a call of [`declare`]
/// otherwise.
#[inline(always)]
pub(super) fn static_addr<T, const H: u64, const IN_KERNEL: bool>() -> u32 {
    if IN_KERNEL {
        symbol::<H>()
    } else {
        declare::<T, H>()
    }
}

#[cold]
pub(super) fn split_at_out_of_bounds() -> ! {
    crate::dfail!("SharedSlice::split_at out of bounds")
}
