//! `atomic` on the CPU: host atomics on the memory pointed to (every scope acts as
//! `System`; the free functions are relaxed, as PTX's `atom.relaxed`, the types
//! take their ordering); float adds, and min/max of the types, are
//! compare-exchange loops. A shared-memory address is resolved in the current
//! block's shared memory (checked: a panic outside it).

use super::{AtomicAdd, AtomicBits, AtomicMinMax, AtomicSwap, Space};
use crate::spec::ordering::{failure_for, PtxOrder};
use crate::spec::scope::MemoryScope;
use core::sync::atomic::Ordering::{self, Relaxed};
use core::sync::atomic::{AtomicI32, AtomicI64, AtomicU32, AtomicU64};

use crate::shared::imp::check::Kind;

/// The host address of `addr` in `space`, the access recorded in a checked launch (every
/// operation here reads and writes: a read-modify-write).
#[inline(always)]
#[track_caller]
fn host<T>(space: Space, addr: u64) -> *mut T {
    match space {
        Space::Shared => {
            crate::shared::imp::checked_rmw("atomic::shared", addr as u32, core::mem::size_of::<T>()) as *mut T
        }
        Space::Generic | Space::Global => {
            crate::shared::imp::atomic_at(addr as usize, core::mem::size_of::<T>(), Kind::AtomicRmw);
            addr as usize as *mut T
        }
    }
}

macro_rules! int_impls {
    ($($t:ty => $a:ident;)*) => {$(
        impl AtomicAdd for $t {
            #[inline(always)]
            #[track_caller]
            unsafe fn __fetch_add(space: Space, _scope: MemoryScope, addr: u64, v: Self) -> Self {
                // SAFETY: the public wrappers require `addr` to be a valid, aligned
                // address of a `$t` in `space`, accessed only atomically meanwhile.
                unsafe { $a::from_ptr(host(space, addr)) }.fetch_add(v, Relaxed)
            }
            #[inline(always)]
            #[track_caller]
            unsafe fn __add(space: Space, scope: MemoryScope, addr: u64, v: Self) {
                // SAFETY: forwarded (the same contract).
                unsafe { Self::__fetch_add(space, scope, addr, v) };
            }
        }
        impl AtomicMinMax for $t {
            #[inline(always)]
            #[track_caller]
            unsafe fn __fetch_min(space: Space, _scope: MemoryScope, addr: u64, v: Self) -> Self {
                // SAFETY: as in `__fetch_add`.
                unsafe { $a::from_ptr(host(space, addr)) }.fetch_min(v, Relaxed)
            }
            #[inline(always)]
            #[track_caller]
            unsafe fn __fetch_max(space: Space, _scope: MemoryScope, addr: u64, v: Self) -> Self {
                // SAFETY: as in `__fetch_add`.
                unsafe { $a::from_ptr(host(space, addr)) }.fetch_max(v, Relaxed)
            }
        }
        impl AtomicBits for $t {
            #[inline(always)]
            #[track_caller]
            unsafe fn __fetch_and(space: Space, _scope: MemoryScope, addr: u64, v: Self) -> Self {
                // SAFETY: as in `__fetch_add`.
                unsafe { $a::from_ptr(host(space, addr)) }.fetch_and(v, Relaxed)
            }
            #[inline(always)]
            #[track_caller]
            unsafe fn __fetch_or(space: Space, _scope: MemoryScope, addr: u64, v: Self) -> Self {
                // SAFETY: as in `__fetch_add`.
                unsafe { $a::from_ptr(host(space, addr)) }.fetch_or(v, Relaxed)
            }
            #[inline(always)]
            #[track_caller]
            unsafe fn __fetch_xor(space: Space, _scope: MemoryScope, addr: u64, v: Self) -> Self {
                // SAFETY: as in `__fetch_add`.
                unsafe { $a::from_ptr(host(space, addr)) }.fetch_xor(v, Relaxed)
            }
        }
        impl AtomicSwap for $t {
            #[inline(always)]
            #[track_caller]
            unsafe fn __swap(space: Space, _scope: MemoryScope, addr: u64, v: Self) -> Self {
                // SAFETY: as in `__fetch_add`.
                unsafe { $a::from_ptr(host(space, addr)) }.swap(v, Relaxed)
            }
            #[inline(always)]
            #[track_caller]
            unsafe fn __cas(space: Space, _scope: MemoryScope, addr: u64, current: Self, new: Self) -> Self {
                // SAFETY: as in `__fetch_add`.
                let a = unsafe { $a::from_ptr(host(space, addr)) };
                match a.compare_exchange(current, new, Relaxed, Relaxed) {
                    Ok(v) | Err(v) => v,
                }
            }
            #[inline(always)]
            fn __same_bits(a: Self, b: Self) -> bool {
                a == b
            }
        }
    )*};
}
int_impls! {
    u32 => AtomicU32;
    i32 => AtomicI32;
    u64 => AtomicU64;
    i64 => AtomicI64;
}

macro_rules! float_impls {
    ($($t:ty => $a:ident;)*) => {$(
        impl AtomicAdd for $t {
            #[inline(always)]
            #[track_caller]
            unsafe fn __fetch_add(space: Space, _scope: MemoryScope, addr: u64, v: Self) -> Self {
                // SAFETY: as for the integers: a valid, aligned `$t`, accessed
                // only atomically meanwhile; its bits are an integer of its size.
                let a = unsafe { $a::from_ptr(host(space, addr)) };
                let mut old = a.load(Relaxed);
                loop {
                    let new = (<$t>::from_bits(old) + v).to_bits();
                    match a.compare_exchange_weak(old, new, Relaxed, Relaxed) {
                        Ok(_) => return <$t>::from_bits(old),
                        Err(seen) => old = seen,
                    }
                }
            }
            #[inline(always)]
            #[track_caller]
            unsafe fn __add(space: Space, scope: MemoryScope, addr: u64, v: Self) {
                // SAFETY: forwarded (the same contract).
                unsafe { Self::__fetch_add(space, scope, addr, v) };
            }
        }
        impl AtomicSwap for $t {
            #[inline(always)]
            #[track_caller]
            unsafe fn __swap(space: Space, _scope: MemoryScope, addr: u64, v: Self) -> Self {
                // SAFETY: as in `__fetch_add`.
                <$t>::from_bits(unsafe { $a::from_ptr(host(space, addr)) }.swap(v.to_bits(), Relaxed))
            }
            #[inline(always)]
            #[track_caller]
            unsafe fn __cas(space: Space, _scope: MemoryScope, addr: u64, current: Self, new: Self) -> Self {
                // SAFETY: as in `__fetch_add`.
                let a = unsafe { $a::from_ptr(host(space, addr)) };
                match a.compare_exchange(current.to_bits(), new.to_bits(), Relaxed, Relaxed) {
                    Ok(v) | Err(v) => <$t>::from_bits(v),
                }
            }
            #[inline(always)]
            fn __same_bits(a: Self, b: Self) -> bool {
                a.to_bits() == b.to_bits()
            }
        }
    )*};
}
float_impls! {
    f32 => AtomicU32;
    f64 => AtomicU64;
}

macro_rules! ld_st {
    ($($ld:ident, $st:ident, $t:ty => $a:ident;)*) => {$(
        /// # Safety
        /// `p` is a live, aligned value accessed only atomically.
        #[inline(always)]
        #[track_caller]
        pub(super) unsafe fn $ld(p: *mut $t, order: Ordering, o: PtxOrder, scope: MemoryScope) -> $t {
            let _ = (o, scope);
            crate::shared::imp::atomic_at(p as usize, core::mem::size_of::<$t>(), Kind::AtomicRead);
            // SAFETY: forwarded to the caller.
            unsafe { $a::from_ptr(p) }.load(order)
        }

        /// # Safety
        /// As the load.
        #[inline(always)]
        #[track_caller]
        pub(super) unsafe fn $st(p: *mut $t, v: $t, order: Ordering, o: PtxOrder, scope: MemoryScope) {
            let _ = (o, scope);
            crate::shared::imp::atomic_at(p as usize, core::mem::size_of::<$t>(), Kind::AtomicWrite);
            // SAFETY: forwarded to the caller.
            unsafe { $a::from_ptr(p) }.store(v, order)
        }
    )*};
}
ld_st! {
    ld32, st32, u32 => AtomicU32;
    ld64, st64, u64 => AtomicU64;
}

macro_rules! rmw {
    ($($name:ident, $t:ty => $a:ident . $op:ident;)*) => {$(
        /// # Safety
        /// `p` is a live, aligned value accessed only atomically.
        #[inline(always)]
        #[track_caller]
        pub(super) unsafe fn $name(p: *mut $t, v: $t, order: Ordering, scope: MemoryScope) -> $t {
            let _ = scope;
            crate::shared::imp::atomic_at(p as usize, core::mem::size_of::<$t>(), Kind::AtomicRmw);
            // SAFETY: forwarded to the caller.
            unsafe { $a::from_ptr(p) }.$op(v, order)
        }
    )*};
}
rmw! {
    add_u32, u32 => AtomicU32.fetch_add;
    add_u64, u64 => AtomicU64.fetch_add;
    and_32, u32 => AtomicU32.fetch_and;
    or_32, u32 => AtomicU32.fetch_or;
    xor_32, u32 => AtomicU32.fetch_xor;
    exch_32, u32 => AtomicU32.swap;
    and_64, u64 => AtomicU64.fetch_and;
    or_64, u64 => AtomicU64.fetch_or;
    xor_64, u64 => AtomicU64.fetch_xor;
    exch_64, u64 => AtomicU64.swap;
}

/// Read-modify-writes without a host instruction of their own: a
/// compare-exchange loop on the bits (`fetch_update`).
macro_rules! rmw_loop {
    ($($name:ident, $t:ty => $a:ident, |$old:ident, $v:ident| $new:expr, |$x:ident| $to:expr, |$b:ident| $from:expr;)*) => {$(
        /// # Safety
        /// `p` is a live, aligned value accessed only atomically.
        #[inline(always)]
        #[track_caller]
        pub(super) unsafe fn $name(p: *mut $t, v: $t, order: Ordering, scope: MemoryScope) -> $t {
            let _ = scope;
            crate::shared::imp::atomic_at(p as usize, core::mem::size_of::<$t>(), Kind::AtomicRmw);
            // SAFETY: forwarded to the caller; the value's bits are an integer of its size.
            let a = unsafe { $a::from_ptr(p.cast()) };
            let to = |$x: $t| $to;
            let from = |$b| -> $t { $from };
            let old = a.fetch_update(order, failure_for(order), |b| {
                let ($old, $v) = (from(b), v);
                Some(to($new))
            });
            match old {
                Ok(b) | Err(b) => from(b),
            }
        }
    )*};
}
rmw_loop! {
    add_f32, f32 => AtomicU32, |old, v| old + v, |x| x.to_bits(), |b| f32::from_bits(b);
    add_f64, f64 => AtomicU64, |old, v| old + v, |x| x.to_bits(), |b| f64::from_bits(b);
    min_u32, u32 => AtomicU32, |old, v| old.min(v), |x| x, |b| b;
    max_u32, u32 => AtomicU32, |old, v| old.max(v), |x| x, |b| b;
    min_s32, i32 => AtomicU32, |old, v| old.min(v), |x| x as u32, |b| b as i32;
    max_s32, i32 => AtomicU32, |old, v| old.max(v), |x| x as u32, |b| b as i32;
    min_u64, u64 => AtomicU64, |old, v| old.min(v), |x| x, |b| b;
    max_u64, u64 => AtomicU64, |old, v| old.max(v), |x| x, |b| b;
    min_s64, i64 => AtomicU64, |old, v| old.min(v), |x| x as u64, |b| b as i64;
    max_s64, i64 => AtomicU64, |old, v| old.max(v), |x| x as u64, |b| b as i64;
}

macro_rules! cas {
    ($($name:ident, $t:ty => $a:ident;)*) => {$(
        /// # Safety
        /// `p` is a live, aligned value accessed only atomically.
        #[inline(always)]
        #[track_caller]
        pub(super) unsafe fn $name(
            p: *mut $t,
            current: $t,
            new: $t,
            success: Ordering,
            failure: Ordering,
            o: PtxOrder,
            scope: MemoryScope,
        ) -> $t {
            let _ = (o, scope);
            crate::shared::imp::atomic_at(p as usize, core::mem::size_of::<$t>(), Kind::AtomicRmw);
            // SAFETY: forwarded to the caller.
            match unsafe { $a::from_ptr(p) }.compare_exchange(current, new, success, failure) {
                Ok(v) | Err(v) => v,
            }
        }
    )*};
}
cas! {
    cas_32, u32 => AtomicU32;
    cas_64, u64 => AtomicU64;
}
