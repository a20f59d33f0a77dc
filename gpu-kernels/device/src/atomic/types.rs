//! The atomic wrapper types (`AtomicU32`, `AtomicF32`, ... and their block- and
//! system-scope twins): `core::sync::atomic`'s API with CUDA's scopes and
//! hardware float atomics. See the [parent module](super) for the table.

use core::cell::UnsafeCell;
use core::sync::atomic::Ordering;

use super::ordering::{cas_order, load_order, store_order, PtxOrder};
#[cfg(target_arch = "nvptx64")]
use {super::ordering::rmw_order, crate::MemoryScope};

/// Device-side instructions on generic addresses, one `asm!` per
/// (sem, scope) pair so that each arm is a fixed instruction.
#[cfg(target_arch = "nvptx64")]
mod dev {
    use super::super::ordering::Sem;
    use crate::MemoryScope;
    use core::arch::asm;

    macro_rules! arms4 {
        ($sem:expr, $scope:expr, $m:ident!($($args:tt)*)) => {
            match ($sem, $scope) {
                (Sem::Relaxed, MemoryScope::Block) => $m!(".relaxed", ".cta", $($args)*),
                (Sem::Relaxed, MemoryScope::Device) => $m!(".relaxed", ".gpu", $($args)*),
                (Sem::Relaxed, MemoryScope::System) => $m!(".relaxed", ".sys", $($args)*),
                (Sem::Acquire, MemoryScope::Block) => $m!(".acquire", ".cta", $($args)*),
                (Sem::Acquire, MemoryScope::Device) => $m!(".acquire", ".gpu", $($args)*),
                (Sem::Acquire, MemoryScope::System) => $m!(".acquire", ".sys", $($args)*),
                (Sem::Release, MemoryScope::Block) => $m!(".release", ".cta", $($args)*),
                (Sem::Release, MemoryScope::Device) => $m!(".release", ".gpu", $($args)*),
                (Sem::Release, MemoryScope::System) => $m!(".release", ".sys", $($args)*),
                (Sem::AcqRel, MemoryScope::Block) => $m!(".acq_rel", ".cta", $($args)*),
                (Sem::AcqRel, MemoryScope::Device) => $m!(".acq_rel", ".gpu", $($args)*),
                (Sem::AcqRel, MemoryScope::System) => $m!(".acq_rel", ".sys", $($args)*),
            }
        };
    }

    // Loads take relaxed/acquire only, stores relaxed/release only: the other
    // qualifiers are not PTX, so they must not even appear in dead arms.
    macro_rules! arms_ld {
        ($sem:expr, $scope:expr, $m:ident!($($args:tt)*)) => {
            match ($sem, $scope) {
                (Sem::Relaxed, MemoryScope::Block) => $m!(".relaxed", ".cta", $($args)*),
                (Sem::Relaxed, MemoryScope::Device) => $m!(".relaxed", ".gpu", $($args)*),
                (Sem::Relaxed, MemoryScope::System) => $m!(".relaxed", ".sys", $($args)*),
                (_, MemoryScope::Block) => $m!(".acquire", ".cta", $($args)*),
                (_, MemoryScope::Device) => $m!(".acquire", ".gpu", $($args)*),
                (_, MemoryScope::System) => $m!(".acquire", ".sys", $($args)*),
            }
        };
    }
    macro_rules! arms_st {
        ($sem:expr, $scope:expr, $m:ident!($($args:tt)*)) => {
            match ($sem, $scope) {
                (Sem::Relaxed, MemoryScope::Block) => $m!(".relaxed", ".cta", $($args)*),
                (Sem::Relaxed, MemoryScope::Device) => $m!(".relaxed", ".gpu", $($args)*),
                (Sem::Relaxed, MemoryScope::System) => $m!(".relaxed", ".sys", $($args)*),
                (_, MemoryScope::Block) => $m!(".release", ".cta", $($args)*),
                (_, MemoryScope::Device) => $m!(".release", ".gpu", $($args)*),
                (_, MemoryScope::System) => $m!(".release", ".sys", $($args)*),
            }
        };
    }

    macro_rules! ld_asm {
        ($s:literal, $sc:literal, $w:literal, $cls:ident, $d:ident, $a:expr) => {
            asm!(concat!("ld", $s, $sc, ".b", $w, " {d}, [{a}];"), d = out($cls) $d, a = in(reg64) $a, options(nostack, preserves_flags))
        };
    }
    macro_rules! st_asm {
        ($s:literal, $sc:literal, $w:literal, $cls:ident, $a:expr, $v:expr) => {
            asm!(concat!("st", $s, $sc, ".b", $w, " [{a}], {v};"), a = in(reg64) $a, v = in($cls) $v, options(nostack, preserves_flags))
        };
    }
    macro_rules! atom_asm {
        ($s:literal, $sc:literal, $op:literal, $cls:ident, $d:ident, $a:expr, $v:expr) => {
            asm!(concat!("atom", $s, $sc, ".", $op, " {d}, [{a}], {v};"), d = out($cls) $d, a = in(reg64) $a, v = in($cls) $v, options(nostack, preserves_flags))
        };
    }
    macro_rules! cas_asm {
        ($s:literal, $sc:literal, $op:literal, $cls:ident, $d:ident, $a:expr, $b:expr, $c:expr) => {
            asm!(concat!("atom", $s, $sc, ".", $op, " {d}, [{a}], {b}, {c};"), d = out($cls) $d, a = in(reg64) $a, b = in($cls) $b, c = in($cls) $c, options(nostack, preserves_flags))
        };
    }

    macro_rules! ld_st {
        ($($ld:ident, $st:ident, $t:ty, $w:literal, $cls:ident;)*) => {$(
            /// # Safety
            /// `addr` is a valid, aligned generic address of a `$t`; `sem` is relaxed or acquire.
            #[inline(always)]
            pub unsafe fn $ld(addr: u64, sem: Sem, scope: MemoryScope) -> $t {
                let d: $t;
                // SAFETY: the caller passes a valid, aligned address.
                unsafe { arms_ld!(sem, scope, ld_asm!($w, $cls, d, addr)) };
                d
            }
            /// # Safety
            /// `addr` is a valid, aligned generic address of a `$t`; `sem` is relaxed or release.
            #[inline(always)]
            pub unsafe fn $st(addr: u64, v: $t, sem: Sem, scope: MemoryScope) {
                // SAFETY: the caller passes a valid, aligned address.
                unsafe { arms_st!(sem, scope, st_asm!($w, $cls, addr, v)) }
            }
        )*};
    }
    ld_st! {
        ld32, st32, u32, "32", reg32;
        ld64, st64, u64, "64", reg64;
    }

    macro_rules! rmw {
        ($($name:ident, $t:ty, $op:literal, $cls:ident;)*) => {$(
            /// # Safety
            /// `addr` is a valid, aligned generic address of the operand type.
            #[inline(always)]
            pub unsafe fn $name(addr: u64, v: $t, sem: Sem, scope: MemoryScope) -> $t {
                let d: $t;
                // SAFETY: the caller passes a valid, aligned address.
                unsafe { arms4!(sem, scope, atom_asm!($op, $cls, d, addr, v)) };
                d
            }
        )*};
    }
    rmw! {
        add_u32, u32, "add.u32", reg32;
        add_u64, u64, "add.u64", reg64;
        add_f32, f32, "add.f32", reg32;
        add_f64, f64, "add.f64", reg64;
        min_u32, u32, "min.u32", reg32;
        max_u32, u32, "max.u32", reg32;
        min_s32, i32, "min.s32", reg32;
        max_s32, i32, "max.s32", reg32;
        min_u64, u64, "min.u64", reg64;
        max_u64, u64, "max.u64", reg64;
        min_s64, i64, "min.s64", reg64;
        max_s64, i64, "max.s64", reg64;
        and_32, u32, "and.b32", reg32;
        or_32, u32, "or.b32", reg32;
        xor_32, u32, "xor.b32", reg32;
        exch_32, u32, "exch.b32", reg32;
        and_64, u64, "and.b64", reg64;
        or_64, u64, "or.b64", reg64;
        xor_64, u64, "xor.b64", reg64;
        exch_64, u64, "exch.b64", reg64;
    }

    /// # Safety
    /// `addr` is a valid, aligned generic address of a `u32`.
    #[inline(always)]
    pub unsafe fn cas_32(addr: u64, current: u32, new: u32, sem: Sem, scope: MemoryScope) -> u32 {
        let d: u32;
        // SAFETY: the caller passes a valid, aligned address.
        unsafe { arms4!(sem, scope, cas_asm!("cas.b32", reg32, d, addr, current, new)) };
        d
    }

    /// # Safety
    /// `addr` is a valid, aligned generic address of a `u64`.
    #[inline(always)]
    pub unsafe fn cas_64(addr: u64, current: u64, new: u64, sem: Sem, scope: MemoryScope) -> u64 {
        let d: u64;
        // SAFETY: the caller passes a valid, aligned address.
        unsafe { arms4!(sem, scope, cas_asm!("cas.b64", reg64, d, addr, current, new)) };
        d
    }
}

#[cold]
#[inline(never)]
fn invalid_ordering() -> ! {
    #[cfg(target_arch = "nvptx64")]
    crate::dfail!("atomic: invalid ordering (a Release/AcqRel load, an Acquire/AcqRel store, or a Release/AcqRel compare_exchange failure)");
    #[cfg(not(target_arch = "nvptx64"))]
    panic!("atomic: invalid ordering (a Release/AcqRel load, an Acquire/AcqRel store, or a Release/AcqRel compare_exchange failure)")
}

#[cfg(target_arch = "nvptx64")]
#[inline(always)]
fn fence_if(o: PtxOrder, scope: MemoryScope) {
    if o.fence_sc {
        crate::sync::fence(scope);
    }
}

#[inline(always)]
fn valid(o: Option<PtxOrder>) -> PtxOrder {
    match o {
        Some(o) => o,
        None => invalid_ordering(),
    }
}

/// Bit-level access shared by every atomic type: how a value is stored (as
/// `u32` or `u64` bits) and which instructions move it.
trait Bits: Copy {
    type B: Copy + Eq;
    fn to_b(self) -> Self::B;
    fn from_b(b: Self::B) -> Self;
}

macro_rules! bits {
    ($($t:ty => $b:ty, |$x:ident| $to:expr, |$y:ident| $from:expr;)*) => {$(
        impl Bits for $t {
            type B = $b;
            #[inline(always)]
            fn to_b(self) -> $b {
                let $x = self;
                $to
            }
            #[inline(always)]
            fn from_b(b: $b) -> $t {
                let $y = b;
                $from
            }
        }
    )*};
}
bits! {
    u32 => u32, |x| x, |y| y;
    i32 => u32, |x| x as u32, |y| y as i32;
    f32 => u32, |x| x.to_bits(), |y| f32::from_bits(y);
    u64 => u64, |x| x, |y| y;
    i64 => u64, |x| x as u64, |y| y as i64;
    f64 => u64, |x| x.to_bits(), |y| f64::from_bits(y);
}

macro_rules! scope_doc {
    (Block) => {
        "the threads of **one block** (`.cta`): every thread that accesses it concurrently must be in the same block (shared memory, or global memory owned by one block)"
    };
    (Device) => {
        "**every thread of the device** (`.gpu`), what CUDA's `atomicAdd` and `cuda::atomic<T, thread_scope_device>` give"
    };
    (System) => {
        "**the whole system** (`.sys`): the host and other GPUs too, for mapped or managed memory"
    };
}

macro_rules! safety_doc {
    () => {
        ""
    };
    (unsafe) => {
        "\n\n# Safety\n\nBlock scope: every thread that accesses this value while the call runs is in the calling thread's block. A block-scope atomic is not atomic with respect to other blocks (their accesses would race)."
    };
}

/// The body of one atomic type; `$w`: the width of the bits (`32`/`64`),
/// `$host`: `core`'s atomic of those bits (for the host build).
macro_rules! atomic_common {
    ($name:ident, $t:ty, $w:literal, $host:ident, $ld:ident, $st:ident, $exch:ident, $cas:ident,
     $and:ident, $or:ident, $xor:ident, $scope:ident, [$($unsafety:ident)?]) => {
        impl $name {
            /// A new atomic holding `v`.
            #[inline(always)]
            pub const fn new(v: $t) -> $name {
                $name { v: UnsafeCell::new(v) }
            }

            /// The value, consuming the atomic.
            #[inline(always)]
            pub fn into_inner(self) -> $t {
                self.v.into_inner()
            }

            /// A mutable reference to the value (no other thread can access it meanwhile).
            #[inline(always)]
            pub fn get_mut(&mut self) -> &mut $t {
                self.v.get_mut()
            }

            /// The address of the value.
            #[inline(always)]
            pub const fn as_ptr(&self) -> *mut $t {
                self.v.get()
            }

            /// Views a `*mut T` (global memory, or generic shared memory) as an atomic.
            ///
            /// # Safety
            ///
            /// * `ptr` is valid for reads and writes of a `T` for `'a` and aligned to
            ///   `align_of::<Self>()` (the size of `T`);
            /// * during `'a` every access to it is atomic (through this type or
            ///   [`crate::atomic`]'s functions), as `core`'s `from_ptr` requires.
            #[inline(always)]
            pub unsafe fn from_ptr<'a>(ptr: *mut $t) -> &'a $name {
                // SAFETY: `$name` is `repr(C)` around `UnsafeCell<T>` (same layout
                // as `T`); validity, alignment and atomic-only access are the caller's.
                unsafe { &*(ptr as *const $name) }
            }

            #[cfg(not(target_arch = "nvptx64"))]
            #[inline(always)]
            fn host(&self) -> &core::sync::atomic::$host {
                // SAFETY: `core`'s atomic of the same width has the layout of its
                // integer, and this type's cell is `T` with the same size and an
                // alignment at least the atomic's (`repr(align)` above); every access
                // goes through atomics.
                unsafe { core::sync::atomic::$host::from_ptr(self.v.get() as *mut _) }
            }

            /// Atomically reads the value (`ld.relaxed/acquire.SCOPE`; `SeqCst`
            /// adds a `fence.sc` before it). `Release` and `AcqRel` are invalid
            /// for loads: the kernel traps.
            #[doc = safety_doc!($($unsafety)?)]
            #[inline(always)]
            pub $($unsafety)? fn load(&self, order: Ordering) -> $t {
                let o = valid(load_order(order));
                #[cfg(target_arch = "nvptx64")]
                {
                    fence_if(o, MemoryScope::$scope);
                    // SAFETY: `self` is a live, aligned `T`, accessed only atomically.
                    <$t>::from_b(unsafe { dev::$ld(self.v.get() as u64, o.sem, MemoryScope::$scope) })
                }
                #[cfg(not(target_arch = "nvptx64"))]
                {
                    let _ = o;
                    <$t>::from_b(self.host().load(order))
                }
            }

            /// Atomically writes `val` (`st.relaxed/release.SCOPE`; `SeqCst` adds a
            /// `fence.sc` before it). `Acquire` and `AcqRel` are invalid for
            /// stores: the kernel traps.
            #[doc = safety_doc!($($unsafety)?)]
            #[inline(always)]
            pub $($unsafety)? fn store(&self, val: $t, order: Ordering) {
                let o = valid(store_order(order));
                #[cfg(target_arch = "nvptx64")]
                {
                    fence_if(o, MemoryScope::$scope);
                    // SAFETY: as in `load`.
                    unsafe { dev::$st(self.v.get() as u64, val.to_b(), o.sem, MemoryScope::$scope) }
                }
                #[cfg(not(target_arch = "nvptx64"))]
                {
                    let _ = o;
                    self.host().store(val.to_b(), order)
                }
            }

            /// Atomically replaces the value with `val`, returning the old one (`atom.exch`).
            #[doc = safety_doc!($($unsafety)?)]
            #[inline(always)]
            pub $($unsafety)? fn swap(&self, val: $t, order: Ordering) -> $t {
                #[cfg(target_arch = "nvptx64")]
                {
                    let o = rmw_order(order);
                    fence_if(o, MemoryScope::$scope);
                    // SAFETY: as in `load`.
                    <$t>::from_b(unsafe { dev::$exch(self.v.get() as u64, val.to_b(), o.sem, MemoryScope::$scope) })
                }
                #[cfg(not(target_arch = "nvptx64"))]
                {
                    <$t>::from_b(self.host().swap(val.to_b(), order))
                }
            }

            /// If the value is `current` (compared bit for bit: for floats `-0.0`
            /// and `0.0` differ, and a NaN matches itself), replaces it with `new`.
            /// `Ok(previous)` if it did, `Err(previous)` if not (`atom.cas`; one
            /// instruction for both outcomes, so it is ordered by the stronger of
            /// `success` and `failure`).
            #[doc = safety_doc!($($unsafety)?)]
            #[inline(always)]
            pub $($unsafety)? fn compare_exchange(&self, current: $t, new: $t, success: Ordering, failure: Ordering) -> Result<$t, $t> {
                let o = valid(cas_order(success, failure));
                #[cfg(target_arch = "nvptx64")]
                let old = {
                    fence_if(o, MemoryScope::$scope);
                    // SAFETY: as in `load`.
                    unsafe { dev::$cas(self.v.get() as u64, current.to_b(), new.to_b(), o.sem, MemoryScope::$scope) }
                };
                #[cfg(not(target_arch = "nvptx64"))]
                let old = {
                    let _ = o;
                    match self.host().compare_exchange(current.to_b(), new.to_b(), success, failure) {
                        Ok(v) | Err(v) => v,
                    }
                };
                if old == current.to_b() {
                    Ok(<$t>::from_b(old))
                } else {
                    Err(<$t>::from_b(old))
                }
            }

            /// Bitwise and with `val` (on the bits, for floats); returns the old value.
            #[doc = safety_doc!($($unsafety)?)]
            #[inline(always)]
            pub $($unsafety)? fn fetch_and(&self, val: $t, order: Ordering) -> $t {
                #[cfg(target_arch = "nvptx64")]
                {
                    let o = rmw_order(order);
                    fence_if(o, MemoryScope::$scope);
                    // SAFETY: as in `load`.
                    <$t>::from_b(unsafe { dev::$and(self.v.get() as u64, val.to_b(), o.sem, MemoryScope::$scope) })
                }
                #[cfg(not(target_arch = "nvptx64"))]
                {
                    <$t>::from_b(self.host().fetch_and(val.to_b(), order))
                }
            }

            /// Bitwise or with `val` (on the bits, for floats); returns the old value.
            #[doc = safety_doc!($($unsafety)?)]
            #[inline(always)]
            pub $($unsafety)? fn fetch_or(&self, val: $t, order: Ordering) -> $t {
                #[cfg(target_arch = "nvptx64")]
                {
                    let o = rmw_order(order);
                    fence_if(o, MemoryScope::$scope);
                    // SAFETY: as in `load`.
                    <$t>::from_b(unsafe { dev::$or(self.v.get() as u64, val.to_b(), o.sem, MemoryScope::$scope) })
                }
                #[cfg(not(target_arch = "nvptx64"))]
                {
                    <$t>::from_b(self.host().fetch_or(val.to_b(), order))
                }
            }

            /// Bitwise xor with `val` (on the bits, for floats); returns the old value.
            #[doc = safety_doc!($($unsafety)?)]
            #[inline(always)]
            pub $($unsafety)? fn fetch_xor(&self, val: $t, order: Ordering) -> $t {
                #[cfg(target_arch = "nvptx64")]
                {
                    let o = rmw_order(order);
                    fence_if(o, MemoryScope::$scope);
                    // SAFETY: as in `load`.
                    <$t>::from_b(unsafe { dev::$xor(self.v.get() as u64, val.to_b(), o.sem, MemoryScope::$scope) })
                }
                #[cfg(not(target_arch = "nvptx64"))]
                {
                    <$t>::from_b(self.host().fetch_xor(val.to_b(), order))
                }
            }
        }
    };
}

/// `fetch_add`/`fetch_sub` (and for integers `fetch_min`/`fetch_max`).
macro_rules! atomic_arith {
    (int $name:ident, $t:ty, $add:ident, $add_t:ty, $min:ident, $max:ident, $scope:ident, [$($unsafety:ident)?]) => {
        impl $name {
            /// Adds `val` (wrapping), returning the old value (`atom.add`).
            #[doc = safety_doc!($($unsafety)?)]
            #[inline(always)]
            pub $($unsafety)? fn fetch_add(&self, val: $t, order: Ordering) -> $t {
                #[cfg(target_arch = "nvptx64")]
                {
                    let o = rmw_order(order);
                    fence_if(o, MemoryScope::$scope);
                    // SAFETY: as in `load`.
                    unsafe { dev::$add(self.v.get() as u64, val as $add_t, o.sem, MemoryScope::$scope) as $t }
                }
                #[cfg(not(target_arch = "nvptx64"))]
                {
                    <$t>::from_b(self.host().fetch_add(val.to_b(), order))
                }
            }

            /// Subtracts `val` (wrapping), returning the old value (`atom.add` of `-val`).
            #[doc = safety_doc!($($unsafety)?)]
            #[inline(always)]
            pub $($unsafety)? fn fetch_sub(&self, val: $t, order: Ordering) -> $t {
                // SAFETY: forwarded (same contract as `fetch_add`).
                #[allow(unused_unsafe)]
                unsafe { self.fetch_add(val.wrapping_neg(), order) }
            }

            /// Stores the minimum of the value and `val`, returning the old value (`atom.min`).
            #[doc = safety_doc!($($unsafety)?)]
            #[inline(always)]
            pub $($unsafety)? fn fetch_min(&self, val: $t, order: Ordering) -> $t {
                #[cfg(target_arch = "nvptx64")]
                {
                    let o = rmw_order(order);
                    fence_if(o, MemoryScope::$scope);
                    // SAFETY: as in `load`.
                    unsafe { dev::$min(self.v.get() as u64, val, o.sem, MemoryScope::$scope) }
                }
                #[cfg(not(target_arch = "nvptx64"))]
                {
                    let old = self.host().fetch_update(order, super::ordering::failure_for(order), |b| Some(<$t>::from_b(b).min(val).to_b()));
                    match old {
                        Ok(b) | Err(b) => <$t>::from_b(b),
                    }
                }
            }

            /// Stores the maximum of the value and `val`, returning the old value (`atom.max`).
            #[doc = safety_doc!($($unsafety)?)]
            #[inline(always)]
            pub $($unsafety)? fn fetch_max(&self, val: $t, order: Ordering) -> $t {
                #[cfg(target_arch = "nvptx64")]
                {
                    let o = rmw_order(order);
                    fence_if(o, MemoryScope::$scope);
                    // SAFETY: as in `load`.
                    unsafe { dev::$max(self.v.get() as u64, val, o.sem, MemoryScope::$scope) }
                }
                #[cfg(not(target_arch = "nvptx64"))]
                {
                    let old = self.host().fetch_update(order, super::ordering::failure_for(order), |b| Some(<$t>::from_b(b).max(val).to_b()));
                    match old {
                        Ok(b) | Err(b) => <$t>::from_b(b),
                    }
                }
            }
        }
    };
    (float $name:ident, $t:ty, $add:ident, $scope:ident, [$($unsafety:ident)?]) => {
        impl $name {
            /// Adds `val` (IEEE addition, round to nearest), returning the old value
            /// (`atom.add.f32/f64`, the hardware float atomic).
            #[doc = safety_doc!($($unsafety)?)]
            #[inline(always)]
            pub $($unsafety)? fn fetch_add(&self, val: $t, order: Ordering) -> $t {
                #[cfg(target_arch = "nvptx64")]
                {
                    let o = rmw_order(order);
                    fence_if(o, MemoryScope::$scope);
                    // SAFETY: as in `load`.
                    unsafe { dev::$add(self.v.get() as u64, val, o.sem, MemoryScope::$scope) }
                }
                #[cfg(not(target_arch = "nvptx64"))]
                {
                    let old = self.host().fetch_update(order, super::ordering::failure_for(order), |b| Some((<$t>::from_b(b) + val).to_b()));
                    match old {
                        Ok(b) | Err(b) => <$t>::from_b(b),
                    }
                }
            }

            /// Subtracts `val`, returning the old value: `atom.add` of `-val`, which
            /// IEEE arithmetic makes exactly `old - val` (signed zeros and NaNs included).
            #[doc = safety_doc!($($unsafety)?)]
            #[inline(always)]
            pub $($unsafety)? fn fetch_sub(&self, val: $t, order: Ordering) -> $t {
                // SAFETY: forwarded (same contract as `fetch_add`).
                #[allow(unused_unsafe)]
                unsafe { self.fetch_add(-val, order) }
            }
        }
    };
}

macro_rules! atomic_types {
    ($($(#[$doc:meta])* $name:ident: $t:ty, $w:tt, $align:literal, $host:ident, $scope:ident, [$($unsafety:ident)?],
       $kind:ident($($arith:tt)*);)*) => {$(
        $(#[$doc])*
        #[doc = concat!("\n\nA `", stringify!($t), "` updated atomically by ", scope_doc!($scope), ". Same layout as `", stringify!($t), "`; `Sync`: share `&", stringify!($name), "` between threads.")]
        #[doc = "\n\nOn the host (tests, CPU references) the same methods run on `core::sync::atomic`, with compare-exchange loops for the float arithmetic."]
        #[repr(C, align($align))]
        pub struct $name {
            v: UnsafeCell<$t>,
        }

        // SAFETY: every access to the cell goes through an atomic instruction
        // (or `core::sync::atomic` on the host), or through `&mut self`/`self`.
        unsafe impl Sync for $name {}

        impl Default for $name {
            fn default() -> $name {
                $name::new(<$t>::default())
            }
        }

        impl core::fmt::Debug for $name {
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                f.write_str(stringify!($name))
            }
        }

        atomic_types!(@common $kind $name, $t, $w, $host, $scope, [$($unsafety)?]);
        atomic_arith!($kind $name, $t, $($arith)*, $scope, [$($unsafety)?]);
    )*};
    (@common $kind:ident $name:ident, $t:ty, 32, $host:ident, $scope:ident, [$($u:ident)?]) => {
        atomic_common!($name, $t, 32, $host, ld32, st32, exch_32, cas_32, and_32, or_32, xor_32, $scope, [$($u)?]);
    };
    (@common $kind:ident $name:ident, $t:ty, 64, $host:ident, $scope:ident, [$($u:ident)?]) => {
        atomic_common!($name, $t, 64, $host, ld64, st64, exch_64, cas_64, and_64, or_64, xor_64, $scope, [$($u)?]);
    };
}

atomic_types! {
    /// `cuda::atomic<unsigned, thread_scope_device>`.
    AtomicU32: u32, 32, 4, AtomicU32, Device, [], int(add_u32, u32, min_u32, max_u32);
    /// `cuda::atomic<int, thread_scope_device>`.
    AtomicI32: i32, 32, 4, AtomicU32, Device, [], int(add_u32, u32, min_s32, max_s32);
    /// `cuda::atomic<unsigned long long, thread_scope_device>`.
    AtomicU64: u64, 64, 8, AtomicU64, Device, [], int(add_u64, u64, min_u64, max_u64);
    /// `cuda::atomic<long long, thread_scope_device>`.
    AtomicI64: i64, 64, 8, AtomicU64, Device, [], int(add_u64, u64, min_s64, max_s64);
    /// `cuda::atomic<float, thread_scope_device>` (Rust-CUDA's `AtomicF32`).
    AtomicF32: f32, 32, 4, AtomicU32, Device, [], float(add_f32);
    /// `cuda::atomic<double, thread_scope_device>` (Rust-CUDA's `AtomicF64`).
    AtomicF64: f64, 64, 8, AtomicU64, Device, [], float(add_f64);

    /// Block-scope `u32` (`cuda::atomic<unsigned, thread_scope_block>`); methods are `unsafe`.
    BlockAtomicU32: u32, 32, 4, AtomicU32, Block, [unsafe], int(add_u32, u32, min_u32, max_u32);
    /// Block-scope `i32`; methods are `unsafe`.
    BlockAtomicI32: i32, 32, 4, AtomicU32, Block, [unsafe], int(add_u32, u32, min_s32, max_s32);
    /// Block-scope `u64`; methods are `unsafe`.
    BlockAtomicU64: u64, 64, 8, AtomicU64, Block, [unsafe], int(add_u64, u64, min_u64, max_u64);
    /// Block-scope `i64`; methods are `unsafe`.
    BlockAtomicI64: i64, 64, 8, AtomicU64, Block, [unsafe], int(add_u64, u64, min_s64, max_s64);
    /// Block-scope `f32` (Rust-CUDA's `BlockAtomicF32`); methods are `unsafe`.
    BlockAtomicF32: f32, 32, 4, AtomicU32, Block, [unsafe], float(add_f32);
    /// Block-scope `f64` (Rust-CUDA's `BlockAtomicF64`); methods are `unsafe`.
    BlockAtomicF64: f64, 64, 8, AtomicU64, Block, [unsafe], float(add_f64);

    /// System-scope `u32` (`cuda::atomic<unsigned, thread_scope_system>`).
    SystemAtomicU32: u32, 32, 4, AtomicU32, System, [], int(add_u32, u32, min_u32, max_u32);
    /// System-scope `i32`.
    SystemAtomicI32: i32, 32, 4, AtomicU32, System, [], int(add_u32, u32, min_s32, max_s32);
    /// System-scope `u64`.
    SystemAtomicU64: u64, 64, 8, AtomicU64, System, [], int(add_u64, u64, min_u64, max_u64);
    /// System-scope `i64`.
    SystemAtomicI64: i64, 64, 8, AtomicU64, System, [], int(add_u64, u64, min_s64, max_s64);
    /// System-scope `f32` (Rust-CUDA's `SystemAtomicF32`).
    SystemAtomicF32: f32, 32, 4, AtomicU32, System, [], float(add_f32);
    /// System-scope `f64` (Rust-CUDA's `SystemAtomicF64`).
    SystemAtomicF64: f64, 64, 8, AtomicU64, System, [], float(add_f64);
}

/// A memory fence with a `core` ordering at `scope` (`cuda::atomic_thread_fence`):
/// nothing for `Relaxed`, `fence.acq_rel.SCOPE` for `Acquire`/`Release`/`AcqRel`,
/// `fence.sc.SCOPE` for `SeqCst` (device only).
#[cfg(target_arch = "nvptx64")]
#[inline(always)]
pub fn fence(order: Ordering, scope: MemoryScope) {
    match super::ordering::fence_order(order) {
        None => {}
        Some(false) => crate::sync::fence_acq_rel(scope),
        Some(true) => crate::sync::fence(scope),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Ordering::*;

    #[test]
    fn host_emulation_matches_cuda_semantics() {
        let a = AtomicF32::new(1.5);
        assert_eq!(a.fetch_add(2.0, Relaxed), 1.5);
        assert_eq!(a.fetch_sub(0.5, AcqRel), 3.5);
        assert_eq!(a.load(SeqCst), 3.0);
        assert_eq!(a.fetch_xor(-0.0, Relaxed), 3.0);
        assert_eq!(a.load(Acquire), -3.0);
        assert_eq!(a.compare_exchange(-3.0, 7.0, AcqRel, Acquire), Ok(-3.0));
        assert_eq!(a.compare_exchange(-3.0, 8.0, Release, Relaxed), Err(7.0));
        let z = AtomicF64::new(0.0);
        assert_eq!(z.compare_exchange(-0.0, 1.0, SeqCst, SeqCst), Err(0.0));
        assert_eq!(z.swap(2.5, Relaxed), 0.0);
        assert_eq!(z.into_inner(), 2.5);

        let i = AtomicI32::new(-5);
        assert_eq!(i.fetch_min(-7, Relaxed), -5);
        assert_eq!(i.fetch_max(3, Relaxed), -7);
        assert_eq!(i.fetch_sub(4, Relaxed), 3);
        assert_eq!(i.fetch_and(0b1100, Relaxed), -1);
        assert_eq!(i.load(Relaxed), 0b1100);
        let u = AtomicU64::new(u64::MAX);
        assert_eq!(u.fetch_add(2, Relaxed), u64::MAX);
        assert_eq!(u.load(Relaxed), 1);
        // SAFETY: one host thread: every access is from "the same block".
        unsafe {
            let b = BlockAtomicU32::new(4);
            assert_eq!(b.fetch_or(1, Relaxed), 4);
            assert_eq!(b.fetch_max(2, Relaxed), 5);
        }
        let s = SystemAtomicI64::new(i64::MIN);
        assert_eq!(s.fetch_sub(1, Relaxed), i64::MIN);
        assert_eq!(s.load(Relaxed), i64::MAX);
    }

    #[test]
    fn layouts_match_the_plain_types() {
        assert_eq!(core::mem::size_of::<AtomicF64>(), 8);
        assert_eq!(core::mem::align_of::<AtomicU64>(), 8);
        assert_eq!(core::mem::align_of::<AtomicF32>(), 4);
        let mut x = 3u32;
        // SAFETY: `x` is a live, aligned u32 used only through the atomic below.
        let a = unsafe { AtomicU32::from_ptr(&mut x) };
        a.fetch_add(1, Relaxed);
        assert_eq!(x, 4);
    }

    #[test]
    #[should_panic(expected = "invalid ordering")]
    fn a_release_load_is_refused() {
        AtomicU32::new(0).load(Release);
    }

    fn assert_sync<T: Sync + Send>() {}

    #[test]
    fn atomics_are_sync() {
        assert_sync::<AtomicF32>();
        assert_sync::<BlockAtomicF64>();
        assert_sync::<SystemAtomicU32>();
    }
}
