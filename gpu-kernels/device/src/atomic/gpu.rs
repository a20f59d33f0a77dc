//! `atomic` on the GPU: the free functions' `atom`/`red` instructions (relaxed, one
//! fixed instruction per address space and scope), and the atomic types' accesses
//! over [`raw`]'s instruction forms, with the `fence.sc` a sequentially consistent
//! ordering adds.

use super::{AtomicAdd, AtomicBits, AtomicMinMax, AtomicSwap, Space};
use crate::spec::ordering::{rmw_order, PtxOrder};
use crate::spec::scope::MemoryScope;
use core::arch::asm;
use core::sync::atomic::Ordering;

#[path = "raw.rs"]
mod raw;

/// Expands `$m!(addr_class, addr_type, ".space", ".scope", args...)` for the
/// (space, scope) pair, so that each arm is one fixed instruction.
macro_rules! dispatch {
    ($space:expr, $scope:expr, $m:ident!($($args:tt)*)) => {
        match ($space, $scope) {
            (Space::Generic, MemoryScope::Block) => $m!(reg64, u64, "", ".cta", $($args)*),
            (Space::Generic, MemoryScope::Device) => $m!(reg64, u64, "", ".gpu", $($args)*),
            (Space::Generic, MemoryScope::System) => $m!(reg64, u64, "", ".sys", $($args)*),
            (Space::Global, MemoryScope::Block) => $m!(reg64, u64, ".global", ".cta", $($args)*),
            (Space::Global, MemoryScope::Device) => $m!(reg64, u64, ".global", ".gpu", $($args)*),
            (Space::Global, MemoryScope::System) => $m!(reg64, u64, ".global", ".sys", $($args)*),
            (Space::Shared, MemoryScope::Block) => $m!(reg32, u32, ".shared", ".cta", $($args)*),
            (Space::Shared, MemoryScope::Device) => $m!(reg32, u32, ".shared", ".gpu", $($args)*),
            (Space::Shared, MemoryScope::System) => $m!(reg32, u32, ".shared", ".sys", $($args)*),
        }
    };
}

// `d = atom.OP [a], v`
macro_rules! atom2 {
    ($acls:ident, $aty:ty, $sp:literal, $sc:literal, $op:expr, $vcls:ident, $d:ident, $a:expr, $v:expr) => {
        asm!(concat!("atom.relaxed", $sc, $sp, ".", $op, " {d}, [{a}], {v};"),
             d = out($vcls) $d, a = in($acls) $a as $aty, v = in($vcls) $v, options(nostack, preserves_flags))
    };
}
// `red.OP [a], v`
macro_rules! red2 {
    ($acls:ident, $aty:ty, $sp:literal, $sc:literal, $op:expr, $vcls:ident, $a:expr, $v:expr) => {
        asm!(concat!("red.relaxed", $sc, $sp, ".", $op, " [{a}], {v};"),
             a = in($acls) $a as $aty, v = in($vcls) $v, options(nostack, preserves_flags))
    };
}
// `d = atom.cas [a], b, c`
macro_rules! cas3 {
    ($acls:ident, $aty:ty, $sp:literal, $sc:literal, $op:expr, $vcls:ident, $d:ident, $a:expr, $b:expr, $c:expr) => {
        asm!(concat!("atom.relaxed", $sc, $sp, ".", $op, " {d}, [{a}], {b}, {c};"),
             d = out($vcls) $d, a = in($acls) $a as $aty, b = in($vcls) $b, c = in($vcls) $c, options(nostack, preserves_flags))
    };
}

macro_rules! fetch_op {
    ($fname:ident, $t:ty, $vcls:ident, $op:expr) => {
        #[inline(always)]
        unsafe fn $fname(space: Space, scope: MemoryScope, addr: u64, v: Self) -> Self {
            let d: $t;
            // SAFETY: the public wrappers require `addr` to be a valid, aligned
            // address of a `$t` in `space`.
            unsafe { dispatch!(space, scope, atom2!($op, $vcls, d, addr, v)) };
            d
        }
    };
}

macro_rules! impl_add {
    ($($t:ty, $vcls:ident, $op:literal;)*) => {$(
        impl AtomicAdd for $t {
            fetch_op!(__fetch_add, $t, $vcls, $op);
            #[inline(always)]
            unsafe fn __add(space: Space, scope: MemoryScope, addr: u64, v: Self) {
                // SAFETY: as in `__fetch_add`.
                unsafe { dispatch!(space, scope, red2!($op, $vcls, addr, v)) }
            }
        }
    )*};
}
impl_add! {
    u32, reg32, "add.u32";
    i32, reg32, "add.s32";
    u64, reg64, "add.u64";
    i64, reg64, "add.u64";
    f32, reg32, "add.f32";
    f64, reg64, "add.f64";
}

macro_rules! impl_minmax {
    ($($t:ty, $vcls:ident, $min:literal, $max:literal;)*) => {$(
        impl AtomicMinMax for $t {
            fetch_op!(__fetch_min, $t, $vcls, $min);
            fetch_op!(__fetch_max, $t, $vcls, $max);
        }
    )*};
}
impl_minmax! {
    u32, reg32, "min.u32", "max.u32";
    i32, reg32, "min.s32", "max.s32";
    u64, reg64, "min.u64", "max.u64";
    i64, reg64, "min.s64", "max.s64";
}

macro_rules! impl_bits {
    ($($t:ty, $vcls:ident, $w:literal;)*) => {$(
        impl AtomicBits for $t {
            fetch_op!(__fetch_and, $t, $vcls, concat!("and.b", $w));
            fetch_op!(__fetch_or, $t, $vcls, concat!("or.b", $w));
            fetch_op!(__fetch_xor, $t, $vcls, concat!("xor.b", $w));
        }
    )*};
}
impl_bits! {
    u32, reg32, "32";
    i32, reg32, "32";
    u64, reg64, "64";
    i64, reg64, "64";
}

macro_rules! impl_swap {
    ($($t:ty, $vcls:ident, $w:literal, $bits:ident;)*) => {$(
        impl AtomicSwap for $t {
            fetch_op!(__swap, $t, $vcls, concat!("exch.b", $w));
            #[inline(always)]
            unsafe fn __cas(space: Space, scope: MemoryScope, addr: u64, current: Self, new: Self) -> Self {
                let d: $t;
                // SAFETY: as in `__fetch_add`.
                unsafe { dispatch!(space, scope, cas3!(concat!("cas.b", $w), $vcls, d, addr, current, new)) };
                d
            }
            #[inline(always)]
            fn __same_bits(a: Self, b: Self) -> bool {
                $bits(a) == $bits(b)
            }
        }
    )*};
}
#[inline(always)]
fn id<T>(x: T) -> T {
    x
}
#[inline(always)]
fn f32_bits(x: f32) -> u32 {
    x.to_bits()
}
#[inline(always)]
fn f64_bits(x: f64) -> u64 {
    x.to_bits()
}
impl_swap! {
    u32, reg32, "32", id;
    i32, reg32, "32", id;
    u64, reg64, "64", id;
    i64, reg64, "64", id;
    f32, reg32, "32", f32_bits;
    f64, reg64, "64", f64_bits;
}

/// `fence.sc.SCOPE` where the ordering asks for sequential consistency.
#[inline(always)]
fn fence_if(o: PtxOrder, scope: MemoryScope) {
    if o.fence_sc {
        crate::sync::fence(scope);
    }
}

macro_rules! ld_st {
    ($($ld:ident, $st:ident, $t:ty;)*) => {$(
        /// # Safety
        /// `p` is a live, aligned value accessed only atomically; `o` is a load's ordering.
        #[inline(always)]
        pub(super) unsafe fn $ld(p: *mut $t, order: Ordering, o: PtxOrder, scope: MemoryScope) -> $t {
            let _ = order;
            fence_if(o, scope);
            // SAFETY: forwarded to the caller.
            unsafe { raw::$ld(p as u64, o.sem, scope) }
        }

        /// # Safety
        /// As the load; `o` is a store's ordering.
        #[inline(always)]
        pub(super) unsafe fn $st(p: *mut $t, v: $t, order: Ordering, o: PtxOrder, scope: MemoryScope) {
            let _ = order;
            fence_if(o, scope);
            // SAFETY: forwarded to the caller.
            unsafe { raw::$st(p as u64, v, o.sem, scope) }
        }
    )*};
}
ld_st! {
    ld32, st32, u32;
    ld64, st64, u64;
}

macro_rules! rmw {
    ($($name:ident, $t:ty;)*) => {$(
        /// # Safety
        /// `p` is a live, aligned value accessed only atomically.
        #[inline(always)]
        pub(super) unsafe fn $name(p: *mut $t, v: $t, order: Ordering, scope: MemoryScope) -> $t {
            let o = rmw_order(order);
            fence_if(o, scope);
            // SAFETY: forwarded to the caller.
            unsafe { raw::$name(p as u64, v, o.sem, scope) }
        }
    )*};
}
rmw! {
    add_u32, u32;
    add_u64, u64;
    add_f32, f32;
    add_f64, f64;
    min_u32, u32;
    max_u32, u32;
    min_s32, i32;
    max_s32, i32;
    min_u64, u64;
    max_u64, u64;
    min_s64, i64;
    max_s64, i64;
    and_32, u32;
    or_32, u32;
    xor_32, u32;
    exch_32, u32;
    and_64, u64;
    or_64, u64;
    xor_64, u64;
    exch_64, u64;
}

macro_rules! cas {
    ($($name:ident, $t:ty;)*) => {$(
        /// # Safety
        /// `p` is a live, aligned value accessed only atomically; `o` is the
        /// compare-exchange's ordering.
        #[inline(always)]
        pub(super) unsafe fn $name(
            p: *mut $t,
            current: $t,
            new: $t,
            success: Ordering,
            failure: Ordering,
            o: PtxOrder,
            scope: MemoryScope,
        ) -> $t {
            let _ = (success, failure);
            fence_if(o, scope);
            // SAFETY: forwarded to the caller.
            unsafe { raw::$name(p as u64, current, new, o.sem, scope) }
        }
    )*};
}
cas! {
    cas_32, u32;
    cas_64, u64;
}
