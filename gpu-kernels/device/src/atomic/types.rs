//! The atomic wrapper types (`AtomicU32`, `AtomicF32`, ... and their block- and
//! system-scope twins): `core::sync::atomic`'s API with CUDA's scopes and
//! hardware float atomics. See the [parent module](super) for the table.

use core::cell::UnsafeCell;
use core::sync::atomic::Ordering;

use super::imp;
use crate::spec::ordering::{cas_order, load_order, store_order, PtxOrder};
use crate::spec::scope::MemoryScope;

#[cold]
#[inline(never)]
fn invalid_ordering() -> ! {
    crate::dfail!("atomic: invalid ordering (a Release/AcqRel load, an Acquire/AcqRel store, or a Release/AcqRel compare_exchange failure)")
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

/// The body of one atomic type; `$w`: the width of the bits (`32`/`64`); the
/// other names are the backend's functions for the type's width.
macro_rules! atomic_common {
    ($name:ident, $t:ty, $w:literal, $ld:ident, $st:ident, $exch:ident, $cas:ident,
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

            /// The value's bits, for the backend.
            #[inline(always)]
            fn bits(&self) -> *mut <$t as Bits>::B {
                self.v.get().cast()
            }

            /// Atomically reads the value (`ld.relaxed/acquire.SCOPE`; `SeqCst`
            /// adds a `fence.sc` before it). `Release` and `AcqRel` are invalid
            /// for loads: the kernel traps.
            #[doc = safety_doc!($($unsafety)?)]
            #[inline(always)]
            #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
            pub $($unsafety)? fn load(&self, order: Ordering) -> $t {
                let o = valid(load_order(order));
                // SAFETY: `self` is a live, aligned `T`, accessed only atomically.
                <$t>::from_b(unsafe { imp::$ld(self.bits(), order, o, MemoryScope::$scope) })            }

            /// Atomically writes `val` (`st.relaxed/release.SCOPE`; `SeqCst` adds a
            /// `fence.sc` before it). `Acquire` and `AcqRel` are invalid for
            /// stores: the kernel traps.
            #[doc = safety_doc!($($unsafety)?)]
            #[inline(always)]
            #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
            pub $($unsafety)? fn store(&self, val: $t, order: Ordering) {
                let o = valid(store_order(order));
                // SAFETY: as in `load`.
                unsafe { imp::$st(self.bits(), val.to_b(), order, o, MemoryScope::$scope) }            }

            /// Atomically replaces the value with `val`, returning the old one (`atom.exch`).
            #[doc = safety_doc!($($unsafety)?)]
            #[inline(always)]
            #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
            pub $($unsafety)? fn swap(&self, val: $t, order: Ordering) -> $t {
                // SAFETY: as in `load`.
                <$t>::from_b(unsafe { imp::$exch(self.bits(), val.to_b(), order, MemoryScope::$scope) })            }

            /// If the value is `current` (compared bit for bit: for floats `-0.0`
            /// and `0.0` differ, and a NaN matches itself), replaces it with `new`.
            /// `Ok(previous)` if it did, `Err(previous)` if not (`atom.cas`; one
            /// instruction for both outcomes, so it is ordered by the stronger of
            /// `success` and `failure`).
            #[doc = safety_doc!($($unsafety)?)]
            #[inline(always)]
            #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
            pub $($unsafety)? fn compare_exchange(&self, current: $t, new: $t, success: Ordering, failure: Ordering) -> Result<$t, $t> {
                let o = valid(cas_order(success, failure));
                // SAFETY: as in `load`.
                let old = unsafe { imp::$cas(self.bits(), current.to_b(), new.to_b(), success, failure, o, MemoryScope::$scope) };
                if old == current.to_b() {
                    Ok(<$t>::from_b(old))
                } else {
                    Err(<$t>::from_b(old))
                }            }

            /// Bitwise and with `val` (on the bits, for floats); returns the old value.
            #[doc = safety_doc!($($unsafety)?)]
            #[inline(always)]
            #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
            pub $($unsafety)? fn fetch_and(&self, val: $t, order: Ordering) -> $t {
                // SAFETY: as in `load`.
                <$t>::from_b(unsafe { imp::$and(self.bits(), val.to_b(), order, MemoryScope::$scope) })            }

            /// Bitwise or with `val` (on the bits, for floats); returns the old value.
            #[doc = safety_doc!($($unsafety)?)]
            #[inline(always)]
            #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
            pub $($unsafety)? fn fetch_or(&self, val: $t, order: Ordering) -> $t {
                // SAFETY: as in `load`.
                <$t>::from_b(unsafe { imp::$or(self.bits(), val.to_b(), order, MemoryScope::$scope) })            }

            /// Bitwise xor with `val` (on the bits, for floats); returns the old value.
            #[doc = safety_doc!($($unsafety)?)]
            #[inline(always)]
            #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
            pub $($unsafety)? fn fetch_xor(&self, val: $t, order: Ordering) -> $t {
                // SAFETY: as in `load`.
                <$t>::from_b(unsafe { imp::$xor(self.bits(), val.to_b(), order, MemoryScope::$scope) })            }
        }
    };
}

/// `fetch_add`/`fetch_sub` (and for integers `fetch_min`/`fetch_max`).
macro_rules! atomic_arith {
    (int $name:ident, $t:ty, $add:ident, $min:ident, $max:ident, $scope:ident, [$($unsafety:ident)?]) => {
        impl $name {
            /// Adds `val` (wrapping), returning the old value (`atom.add`).
            #[doc = safety_doc!($($unsafety)?)]
            #[inline(always)]
            #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
            pub $($unsafety)? fn fetch_add(&self, val: $t, order: Ordering) -> $t {
                // SAFETY: as in `load`.
                <$t>::from_b(unsafe { imp::$add(self.bits(), val.to_b(), order, MemoryScope::$scope) })            }

            /// Subtracts `val` (wrapping), returning the old value (`atom.add` of `-val`).
            #[doc = safety_doc!($($unsafety)?)]
            #[inline(always)]
            #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
            pub $($unsafety)? fn fetch_sub(&self, val: $t, order: Ordering) -> $t {
                // SAFETY: forwarded (same contract as `fetch_add`).
                #[allow(unused_unsafe)]
                unsafe { self.fetch_add(val.wrapping_neg(), order) }
            }

            /// Stores the minimum of the value and `val`, returning the old value (`atom.min`).
            #[doc = safety_doc!($($unsafety)?)]
            #[inline(always)]
            #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
            pub $($unsafety)? fn fetch_min(&self, val: $t, order: Ordering) -> $t {
                // SAFETY: as in `load`.
                unsafe { imp::$min(self.v.get(), val, order, MemoryScope::$scope) }            }

            /// Stores the maximum of the value and `val`, returning the old value (`atom.max`).
            #[doc = safety_doc!($($unsafety)?)]
            #[inline(always)]
            #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
            pub $($unsafety)? fn fetch_max(&self, val: $t, order: Ordering) -> $t {
                // SAFETY: as in `load`.
                unsafe { imp::$max(self.v.get(), val, order, MemoryScope::$scope) }            }
        }
    };
    (float $name:ident, $t:ty, $add:ident, $scope:ident, [$($unsafety:ident)?]) => {
        impl $name {
            /// Adds `val` (IEEE addition, round to nearest), returning the old value
            /// (`atom.add.f32/f64`, the hardware float atomic).
            #[doc = safety_doc!($($unsafety)?)]
            #[inline(always)]
            #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
            pub $($unsafety)? fn fetch_add(&self, val: $t, order: Ordering) -> $t {
                // SAFETY: as in `load`.
                unsafe { imp::$add(self.v.get(), val, order, MemoryScope::$scope) }            }

            /// Subtracts `val`, returning the old value: `atom.add` of `-val`, which
            /// IEEE arithmetic makes exactly `old - val` (signed zeros and NaNs included).
            #[doc = safety_doc!($($unsafety)?)]
            #[inline(always)]
            #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
            pub $($unsafety)? fn fetch_sub(&self, val: $t, order: Ordering) -> $t {
                // SAFETY: forwarded (same contract as `fetch_add`).
                #[allow(unused_unsafe)]
                unsafe { self.fetch_add(-val, order) }
            }
        }
    };
}

macro_rules! atomic_types {
    ($($(#[$doc:meta])* $name:ident: $t:ty, $w:tt, $align:literal, $scope:ident, [$($unsafety:ident)?],
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

        atomic_types!(@common $kind $name, $t, $w, $scope, [$($unsafety)?]);
        atomic_arith!($kind $name, $t, $($arith)*, $scope, [$($unsafety)?]);
    )*};
    (@common $kind:ident $name:ident, $t:ty, 32, $scope:ident, [$($u:ident)?]) => {
        atomic_common!($name, $t, 32, ld32, st32, exch_32, cas_32, and_32, or_32, xor_32, $scope, [$($u)?]);
    };
    (@common $kind:ident $name:ident, $t:ty, 64, $scope:ident, [$($u:ident)?]) => {
        atomic_common!($name, $t, 64, ld64, st64, exch_64, cas_64, and_64, or_64, xor_64, $scope, [$($u)?]);
    };
}

atomic_types! {
    /// `cuda::atomic<unsigned, thread_scope_device>`.
    AtomicU32: u32, 32, 4, Device, [], int(add_u32, min_u32, max_u32);
    /// `cuda::atomic<int, thread_scope_device>`.
    AtomicI32: i32, 32, 4, Device, [], int(add_u32, min_s32, max_s32);
    /// `cuda::atomic<unsigned long long, thread_scope_device>`.
    AtomicU64: u64, 64, 8, Device, [], int(add_u64, min_u64, max_u64);
    /// `cuda::atomic<long long, thread_scope_device>`.
    AtomicI64: i64, 64, 8, Device, [], int(add_u64, min_s64, max_s64);
    /// `cuda::atomic<float, thread_scope_device>` (Rust-CUDA's `AtomicF32`).
    AtomicF32: f32, 32, 4, Device, [], float(add_f32);
    /// `cuda::atomic<double, thread_scope_device>` (Rust-CUDA's `AtomicF64`).
    AtomicF64: f64, 64, 8, Device, [], float(add_f64);

    /// Block-scope `u32` (`cuda::atomic<unsigned, thread_scope_block>`); methods are `unsafe`.
    BlockAtomicU32: u32, 32, 4, Block, [unsafe], int(add_u32, min_u32, max_u32);
    /// Block-scope `i32`; methods are `unsafe`.
    BlockAtomicI32: i32, 32, 4, Block, [unsafe], int(add_u32, min_s32, max_s32);
    /// Block-scope `u64`; methods are `unsafe`.
    BlockAtomicU64: u64, 64, 8, Block, [unsafe], int(add_u64, min_u64, max_u64);
    /// Block-scope `i64`; methods are `unsafe`.
    BlockAtomicI64: i64, 64, 8, Block, [unsafe], int(add_u64, min_s64, max_s64);
    /// Block-scope `f32` (Rust-CUDA's `BlockAtomicF32`); methods are `unsafe`.
    BlockAtomicF32: f32, 32, 4, Block, [unsafe], float(add_f32);
    /// Block-scope `f64` (Rust-CUDA's `BlockAtomicF64`); methods are `unsafe`.
    BlockAtomicF64: f64, 64, 8, Block, [unsafe], float(add_f64);

    /// System-scope `u32` (`cuda::atomic<unsigned, thread_scope_system>`).
    SystemAtomicU32: u32, 32, 4, System, [], int(add_u32, min_u32, max_u32);
    /// System-scope `i32`.
    SystemAtomicI32: i32, 32, 4, System, [], int(add_u32, min_s32, max_s32);
    /// System-scope `u64`.
    SystemAtomicU64: u64, 64, 8, System, [], int(add_u64, min_u64, max_u64);
    /// System-scope `i64`.
    SystemAtomicI64: i64, 64, 8, System, [], int(add_u64, min_s64, max_s64);
    /// System-scope `f32` (Rust-CUDA's `SystemAtomicF32`).
    SystemAtomicF32: f32, 32, 4, System, [], float(add_f32);
    /// System-scope `f64` (Rust-CUDA's `SystemAtomicF64`).
    SystemAtomicF64: f64, 64, 8, System, [], float(add_f64);
}

/// A memory fence with a `core` ordering at `scope` (`cuda::atomic_thread_fence`):
/// nothing for `Relaxed`, `fence.acq_rel.SCOPE` for `Acquire`/`Release`/`AcqRel`,
/// `fence.sc.SCOPE` for `SeqCst` (on the host: `core::sync::atomic::fence`
/// with `AcqRel` or `SeqCst`).
#[inline(always)]
pub fn fence(order: Ordering, scope: MemoryScope) {
    match crate::spec::ordering::fence_order(order) {
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
