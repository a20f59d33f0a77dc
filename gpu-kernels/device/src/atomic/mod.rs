//! Atomic read-modify-write on global and shared memory, with a [`MemoryScope`].
//!
//! | operation | types | sluice | CUDA C++ | PTX |
//! | --- | --- | --- | --- | --- |
//! | add, result used | `u32 i32 u64 i64 f32 f64` | [`fetch_add`] | `atomicAdd` | `atom.add` |
//! | add, result unused | same | [`add`] | `atomicAdd` (result ignored) | `red.add` |
//! | min, max | `u32 i32 u64 i64` | [`fetch_min`], [`fetch_max`] | `atomicMin`, `atomicMax` | `atom.min`, `atom.max` |
//! | and, or, xor | `u32 i32 u64 i64` | [`fetch_and`], [`fetch_or`], [`fetch_xor`] | `atomicAnd` ... | `atom.and` ... |
//! | exchange | `u32 i32 u64 i64 f32 f64` | [`swap`] | `atomicExch` | `atom.exch` |
//! | compare-and-swap | same | [`compare_exchange`] | `atomicCAS` | `atom.cas` |
//!
//! These functions are *relaxed* (`atom.relaxed.SCOPE`, like CUDA's `atomicAdd`):
//! indivisible, but they order nothing else; pair them with
//! [`crate::sync::fence_acq_rel`] or a barrier to publish other data.
//!
//! # Atomic types, with orderings
//!
//! [`AtomicU32`], [`AtomicI32`], [`AtomicU64`], [`AtomicI64`], [`AtomicF32`],
//! [`AtomicF64`] (device scope), their `Block*` twins (block scope, `unsafe`
//! methods: the caller promises that only the block's threads touch the value)
//! and `System*` twins (system scope) have `core::sync::atomic`'s API with
//! [`Ordering`]s, which map to PTX as [`ordering`] tabulates (sm_70+):
//!
//! | method | ints | floats | PTX |
//! | --- | --- | --- | --- |
//! | `load`, `store` | ✓ | ✓ | `ld/st.{relaxed,acquire,release}.SCOPE` (+ `fence.sc` for `SeqCst`) |
//! | `fetch_add`, `fetch_sub` | ✓ (wrapping) | ✓ (`atom.add.f32/f64`; sub adds `-v`) | `atom.SEM.SCOPE.add` |
//! | `fetch_min`, `fetch_max` | ✓ | | `atom.min/max.{u,s}{32,64}` |
//! | `fetch_and`, `fetch_or`, `fetch_xor` | ✓ | on the bits | `atom.and/or/xor.b{32,64}` |
//! | `swap`, `compare_exchange` | ✓ | ✓ (bitwise compare) | `atom.exch`, `atom.cas` |
//!
//! They live wherever a `T` can: a kernel's global memory (`AtomicU32::from_ptr(p)`),
//! a `static`, or shared memory through a generic pointer. On the host the
//! same types run on `core::sync::atomic` (float arithmetic as compare-exchange
//! loops), so code using them builds and tests on the CPU. [`fence`] is
//! `atomic_thread_fence(order)` at a scope.
//!
//! # Hardware support
//!
//! sm_70+ for the orderings and scopes (`atom.relaxed.gpu` ...); `atom.add.f64`
//! sm_60+. Every architecture sluice builds for has both.
//!
//! # On the CPU
//!
//! The functions below are host atomics too (`cpu.rs`; relaxed; every scope is as
//! strong as `System` there), on the memory pointed to; a
//! [`SharedPtr`](crate::shared::SharedPtr) is resolved in the current block's
//! shared memory of the CPU runtime ([`crate::cpu`]); the atomic types run on
//! `core::sync::atomic` with their orderings. Since the CPU is stronger than
//! PTX's memory model, a missing ordering may pass on the CPU and fail on a GPU.
//! Every atomic passes through `cpu.rs`: in a checked launch ([`crate::cpu`]'s
//! checking mode) an atomic on shared memory (a `SharedPtr`, or a generic pointer
//! into the block's shared memory) or on an element of a slice parameter is recorded
//! as atomic — atomics never race each other, an atomic and a plain access to the
//! same bytes do, and an atomic read-modify-write of shared memory never written is
//! an uninitialised read. Their orderings are not modelled as synchronisation: a
//! release store and an acquire load of a flag do not order the plain accesses around
//! them for the checker (a handshake without a barrier is reported as a race).
//!
//! **The memory scope** says which threads the atomicity is guaranteed against:
//! [`MemoryScope::Block`] (`.cta`, the block's threads — enough for shared memory and
//! cheapest), [`MemoryScope::Device`] (`.gpu`, every thread of the device — what
//! `atomicAdd` gives; use it for global memory written by several blocks), or
//! [`MemoryScope::System`] (`.sys`, also the host and peer GPUs on mapped memory).
//!
//! **Address space.** The functions at the top of this module take a *generic*
//! pointer (`*mut T`), which may point to global or (converted) shared
//! memory. [`global`] has the same functions for pointers known to be in global
//! memory (`.global`, what nvcc emits for kernel parameters), and [`shared`]
//! for [`SharedPtr`](crate::shared::SharedPtr)s (`.shared`, the `ATOMS`
//! instructions of SASS). [`SharedArray`](crate::shared::SharedArray) and
//! [`SharedSlice`](crate::shared::SharedSlice) have safe, bounds-checked
//! methods of the same names (block scope).
//!
//! # Example (device code)
//!
//! ```ignore
//! use sluice_device::{atomic, MemoryScope};
//! // One partial sum per block into out[0] (`out` is a kernel parameter).
//! // SAFETY: `out` points to at least one f32 of global memory that this
//! // launch may update (the host's contract for the kernel).
//! unsafe { atomic::global::add(out, block_sum, MemoryScope::Device) };
//! ```

pub use crate::spec::scope::MemoryScope;
pub use core::sync::atomic::Ordering;

pub use crate::spec::ordering;
mod types;
pub use types::*;

/// Address space of an atomic operation (internal).
#[doc(hidden)]
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Space {
    Generic,
    Global,
    Shared,
}

mod sealed {
    pub trait Sealed {}
}

/// Types with an atomic add (`u32 i32 u64 i64 f32 f64`).
#[diagnostic::on_unimplemented(
    message = "`{Self}` has no atomic add on the GPU",
    label = "no atomic add for this type",
    note = "atomic add exists for u32, i32, u64, i64, f32 and f64"
)]
pub trait AtomicAdd: Copy + sealed::Sealed {
    #[doc(hidden)]
    unsafe fn __fetch_add(space: Space, scope: MemoryScope, addr: u64, v: Self) -> Self;
    #[doc(hidden)]
    unsafe fn __add(space: Space, scope: MemoryScope, addr: u64, v: Self);
}

/// Types with atomic min and max (`u32 i32 u64 i64`).
#[diagnostic::on_unimplemented(
    message = "`{Self}` has no atomic min and max on the GPU",
    label = "no atomic min/max for this type",
    note = "atomic min and max exist for u32, i32, u64 and i64 (for floats, compare-and-swap in a loop)"
)]
pub trait AtomicMinMax: Copy + sealed::Sealed {
    #[doc(hidden)]
    unsafe fn __fetch_min(space: Space, scope: MemoryScope, addr: u64, v: Self) -> Self;
    #[doc(hidden)]
    unsafe fn __fetch_max(space: Space, scope: MemoryScope, addr: u64, v: Self) -> Self;
}

/// Types with atomic bitwise and, or, xor (`u32 i32 u64 i64`).
#[diagnostic::on_unimplemented(
    message = "`{Self}` has no atomic bitwise operations on the GPU",
    label = "no atomic and/or/xor for this type",
    note = "atomic and, or and xor exist for u32, i32, u64 and i64"
)]
pub trait AtomicBits: Copy + sealed::Sealed {
    #[doc(hidden)]
    unsafe fn __fetch_and(space: Space, scope: MemoryScope, addr: u64, v: Self) -> Self;
    #[doc(hidden)]
    unsafe fn __fetch_or(space: Space, scope: MemoryScope, addr: u64, v: Self) -> Self;
    #[doc(hidden)]
    unsafe fn __fetch_xor(space: Space, scope: MemoryScope, addr: u64, v: Self) -> Self;
}

/// Types with atomic exchange and compare-and-swap (`u32 i32 u64 i64 f32 f64`;
/// floats compare by bits, so `-0.0 != 0.0` and a NaN can match itself).
#[diagnostic::on_unimplemented(
    message = "`{Self}` has no atomic exchange on the GPU",
    label = "no atomic exchange or compare-and-swap for this type",
    note = "atomic exchange and compare-and-swap exist for u32, i32, u64, i64, f32 and f64"
)]
pub trait AtomicSwap: Copy + sealed::Sealed {
    #[doc(hidden)]
    unsafe fn __swap(space: Space, scope: MemoryScope, addr: u64, v: Self) -> Self;
    #[doc(hidden)]
    unsafe fn __cas(space: Space, scope: MemoryScope, addr: u64, current: Self, new: Self) -> Self;
    #[doc(hidden)]
    fn __same_bits(a: Self, b: Self) -> bool;
}

/// The atomic types a kernel may take a slice of: `x: &[AtomicU32]` is a kernel parameter
/// whose elements every thread may update (the host passes a mutable view of `u32`s, so
/// nothing else touches the memory during the launch), the safe way to write an element
/// chosen by data (a histogram's bins, a reduction's total). `Value` is the plain type the
/// host's view holds; the two have the same layout.
///
/// ```
/// use sluice_device::atomic::{AtomicElement, AtomicU32};
/// fn plain<A: AtomicElement>() -> usize { core::mem::size_of::<A::Value>() }
/// assert_eq!(plain::<AtomicU32>(), core::mem::size_of::<AtomicU32>());
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a device-scope atomic type, so `&[{Self}]` is not an atomic kernel parameter",
    label = "not an atomic type a kernel can take a slice of",
    note = "kernel parameters `&[A]` with A one of AtomicU32, AtomicI32, AtomicU64, AtomicI64, AtomicF32, \
            AtomicF64 are written atomically by every thread; the host passes a mutable view of the plain type"
)]
pub trait AtomicElement: Sync + sealed::Sealed {
    /// The plain type of the same layout (`u32` for [`AtomicU32`]).
    type Value: bytemuck::Pod;
}

macro_rules! atomic_elements {
    ($($name:ident: $t:ty;)*) => {$(
        impl sealed::Sealed for $name {}
        impl AtomicElement for $name {
            type Value = $t;
        }
    )*};
}

atomic_elements! {
    AtomicU32: u32;
    AtomicI32: i32;
    AtomicU64: u64;
    AtomicI64: i64;
    AtomicF32: f32;
    AtomicF64: f64;
}

impl sealed::Sealed for u32 {}
impl sealed::Sealed for i32 {}
impl sealed::Sealed for u64 {}
impl sealed::Sealed for i64 {}
impl sealed::Sealed for f32 {}
impl sealed::Sealed for f64 {}

// The backend, chosen once: `atom`/`red`/`ld`/`st` instructions on the GPU, host
// atomics on the CPU.
#[cfg_attr(target_arch = "nvptx64", path = "gpu.rs")]
#[cfg_attr(not(target_arch = "nvptx64"), path = "cpu.rs")]
mod imp;

/// Generates the public functions of one address space. `$ptr` is the
/// pointer type, `$addr` turns it into the `u64` operand.
macro_rules! api {
    ($space:expr, $ptr:ident, $addr:expr, $what:literal) => {
        /// Atomically adds `val` to `*ptr` and returns the old value (`atomicAdd`).
        ///
        /// # Safety
        #[doc = $what]
        #[inline(always)]
        #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
        pub unsafe fn fetch_add<T: AtomicAdd>(ptr: $ptr<T>, val: T, scope: MemoryScope) -> T {
            // SAFETY: forwarded to the caller.
            unsafe { T::__fetch_add($space, scope, ($addr)(ptr), val) }
        }

        /// Atomically adds `val` to `*ptr`, without returning the old value
        /// (`red`: the instruction nvcc emits when `atomicAdd`'s result is unused).
        ///
        /// # Safety
        #[doc = $what]
        #[inline(always)]
        #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
        pub unsafe fn add<T: AtomicAdd>(ptr: $ptr<T>, val: T, scope: MemoryScope) {
            // SAFETY: forwarded to the caller.
            unsafe { T::__add($space, scope, ($addr)(ptr), val) }
        }

        /// Atomically stores `min(*ptr, val)`; returns the old value (`atomicMin`).
        ///
        /// # Safety
        #[doc = $what]
        #[inline(always)]
        #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
        pub unsafe fn fetch_min<T: AtomicMinMax>(ptr: $ptr<T>, val: T, scope: MemoryScope) -> T {
            // SAFETY: forwarded to the caller.
            unsafe { T::__fetch_min($space, scope, ($addr)(ptr), val) }
        }

        /// Atomically stores `max(*ptr, val)`; returns the old value (`atomicMax`).
        ///
        /// # Safety
        #[doc = $what]
        #[inline(always)]
        #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
        pub unsafe fn fetch_max<T: AtomicMinMax>(ptr: $ptr<T>, val: T, scope: MemoryScope) -> T {
            // SAFETY: forwarded to the caller.
            unsafe { T::__fetch_max($space, scope, ($addr)(ptr), val) }
        }

        /// Atomically stores `*ptr & val`; returns the old value (`atomicAnd`).
        ///
        /// # Safety
        #[doc = $what]
        #[inline(always)]
        #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
        pub unsafe fn fetch_and<T: AtomicBits>(ptr: $ptr<T>, val: T, scope: MemoryScope) -> T {
            // SAFETY: forwarded to the caller.
            unsafe { T::__fetch_and($space, scope, ($addr)(ptr), val) }
        }

        /// Atomically stores `*ptr | val`; returns the old value (`atomicOr`).
        ///
        /// # Safety
        #[doc = $what]
        #[inline(always)]
        #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
        pub unsafe fn fetch_or<T: AtomicBits>(ptr: $ptr<T>, val: T, scope: MemoryScope) -> T {
            // SAFETY: forwarded to the caller.
            unsafe { T::__fetch_or($space, scope, ($addr)(ptr), val) }
        }

        /// Atomically stores `*ptr ^ val`; returns the old value (`atomicXor`).
        ///
        /// # Safety
        #[doc = $what]
        #[inline(always)]
        #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
        pub unsafe fn fetch_xor<T: AtomicBits>(ptr: $ptr<T>, val: T, scope: MemoryScope) -> T {
            // SAFETY: forwarded to the caller.
            unsafe { T::__fetch_xor($space, scope, ($addr)(ptr), val) }
        }

        /// Atomically stores `val`; returns the old value (`atomicExch`).
        ///
        /// # Safety
        #[doc = $what]
        #[inline(always)]
        #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
        pub unsafe fn swap<T: AtomicSwap>(ptr: $ptr<T>, val: T, scope: MemoryScope) -> T {
            // SAFETY: forwarded to the caller.
            unsafe { T::__swap($space, scope, ($addr)(ptr), val) }
        }

        /// If `*ptr` holds `current` (bitwise), atomically stores `new`.
        /// `Ok(old)` if it did, `Err(old)` if not (`atomicCAS`).
        ///
        /// # Safety
        #[doc = $what]
        #[inline(always)]
        #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
        pub unsafe fn compare_exchange<T: AtomicSwap>(
            ptr: $ptr<T>,
            current: T,
            new: T,
            scope: MemoryScope,
        ) -> Result<T, T> {
            // SAFETY: forwarded to the caller.
            let old = unsafe { T::__cas($space, scope, ($addr)(ptr), current, new) };
            if T::__same_bits(old, current) {
                Ok(old)
            } else {
                Err(old)
            }
        }
    };
}

type MutPtr<T> = *mut T;

api!(
    Space::Generic,
    MutPtr,
    |p: *mut _| p as u64,
    "`ptr` is valid for reads and writes of a `T` (global memory, or shared memory \
     through a generic pointer), aligned for `T`; other threads access it only atomically \
     or after synchronising with this operation."
);

/// The same operations on pointers known to be in **global** memory
/// (`atom.global`): a kernel's pointer parameters, device allocations.
pub mod global {
    use super::*;
    api!(
        Space::Global,
        MutPtr,
        |p: *mut _| p as u64,
        "`ptr` points into global memory (not shared, local or constant), is valid for reads \
         and writes of a `T` and aligned for it; other threads access it only atomically or \
         after synchronising with this operation."
    );
}

/// The same operations on [`SharedPtr`](crate::shared::SharedPtr)s
/// (`atom.shared`). [`SharedArray`](crate::shared::SharedArray) has safe,
/// bounds-checked versions.
pub mod shared {
    use super::*;
    use crate::shared::SharedPtr;
    api!(
        Space::Shared,
        SharedPtr,
        |p: SharedPtr<_>| p.addr() as u64,
        "`ptr` is inside shared memory allocated to this kernel and aligned for `T`; other \
         threads access it only atomically or after synchronising with this operation."
    );
}

macro_rules! shared_methods {
    () => {
        /// Atomically adds `v` to element `i` (block scope) and returns the old
        /// value. Panics if `i >= len`.
        #[inline(always)]
        #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
        pub fn fetch_add(&self, i: usize, v: T) -> T
        where
            T: AtomicAdd,
        {
            let p = self.ptr(i);
            // SAFETY: `ptr` checked `i`; the element is allocated, aligned for
            // `T` and `Pod`; shared memory is only reachable by this block.
            unsafe { shared::fetch_add(p, v, MemoryScope::Block) }
        }

        /// Atomically adds `v` to element `i` (block scope, `red.shared`).
        /// Panics if `i >= len`.
        #[inline(always)]
        #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
        pub fn add(&self, i: usize, v: T)
        where
            T: AtomicAdd,
        {
            let p = self.ptr(i);
            // SAFETY: as in `fetch_add`.
            unsafe { shared::add(p, v, MemoryScope::Block) }
        }

        /// Atomic min on element `i` (block scope); returns the old value.
        #[inline(always)]
        #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
        pub fn fetch_min(&self, i: usize, v: T) -> T
        where
            T: AtomicMinMax,
        {
            let p = self.ptr(i);
            // SAFETY: as in `fetch_add`.
            unsafe { shared::fetch_min(p, v, MemoryScope::Block) }
        }

        /// Atomic max on element `i` (block scope); returns the old value.
        #[inline(always)]
        #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
        pub fn fetch_max(&self, i: usize, v: T) -> T
        where
            T: AtomicMinMax,
        {
            let p = self.ptr(i);
            // SAFETY: as in `fetch_add`.
            unsafe { shared::fetch_max(p, v, MemoryScope::Block) }
        }

        /// Atomic or on element `i` (block scope); returns the old value.
        #[inline(always)]
        #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
        pub fn fetch_or(&self, i: usize, v: T) -> T
        where
            T: AtomicBits,
        {
            let p = self.ptr(i);
            // SAFETY: as in `fetch_add`.
            unsafe { shared::fetch_or(p, v, MemoryScope::Block) }
        }

        /// Atomic and on element `i` (block scope); returns the old value.
        #[inline(always)]
        #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
        pub fn fetch_and(&self, i: usize, v: T) -> T
        where
            T: AtomicBits,
        {
            let p = self.ptr(i);
            // SAFETY: as in `fetch_add`.
            unsafe { shared::fetch_and(p, v, MemoryScope::Block) }
        }

        /// Atomic exchange of element `i` (block scope); returns the old value.
        #[inline(always)]
        #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
        pub fn swap(&self, i: usize, v: T) -> T
        where
            T: AtomicSwap,
        {
            let p = self.ptr(i);
            // SAFETY: as in `fetch_add`.
            unsafe { shared::swap(p, v, MemoryScope::Block) }
        }

        /// Compare-and-swap of element `i` (block scope); see [`compare_exchange`].
        #[inline(always)]
        #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
        pub fn compare_exchange(&self, i: usize, current: T, new: T) -> Result<T, T>
        where
            T: AtomicSwap,
        {
            let p = self.ptr(i);
            // SAFETY: as in `fetch_add`.
            unsafe { shared::compare_exchange(p, current, new, MemoryScope::Block) }
        }
    };
}

impl<T: bytemuck::Pod, const N: usize> crate::shared::SharedArray<T, N> {
    shared_methods!();
}

impl<T: bytemuck::Pod> crate::shared::SharedSlice<T> {
    shared_methods!();
}
