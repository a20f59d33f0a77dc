//! Shared memory: statically sized per-block arrays ([`shared_array!`](crate::shared_array))
//! and the dynamic shared-memory region ([`dynamic_shared`]).
//!
//! Rust has no way to place a `static` in PTX's `.shared` state space
//! (LLVM's `addrspace(3)`), so sluice declares shared memory in PTX itself:
//!
//! * [`shared_array!`](crate::shared_array)`(NAME: [T; N])`,
//!   [`shared_array!`](crate::shared_array)`[T; N]` and
//!   [`shared_static!`](crate::shared_static) declare
//!   `.shared .align A .b8 sluice_shared_HASH[N * size_of::<T>()];` with an `asm!`
//!   statement where the variable is used (`declare::<[T; N], HASH>`, inlined), and
//!   read its address with one `mov.u32` of the symbol; `HASH` hashes the
//!   invocation's module path, file, line, column and name. Because the size is
//!   an `asm!` `const` operand of a generic function, it may name
//!   function-local constants (`const TILE2: usize = TILE * TILE;` inside the
//!   kernel), which a module-scope `global_asm!` cannot see. sluice's bitcode
//!   linker (`sluice-llbc`) then moves every such declaration out of the
//!   functions, once per name, to the PTX module's scope, where CUDA C++ declares
//!   a `__shared__` array: however often LLVM inlines, unrolls or duplicates the
//!   code that used the variable, the PTX declares it once (a PTX function must
//!   not declare a name twice), and ptxas allocates it, once per block, in each
//!   kernel that uses it. A handle costs one `mov`, no call.
//! * [`dynamic_shared`] reads the region sized at launch
//!   (`extern __shared__` in CUDA C++), declared once by this crate as
//!   `.extern .shared .align 16 .b8 sluice_dynamic_shared[]`.
//!
//! Accesses go through `ld.shared`/`st.shared`/`atom.shared` with a 32-bit
//! shared-window address ([`SharedPtr`]), the instructions nvcc emits for
//! `__shared__` data. (A generic pointer obtained with `cvta.shared` also works,
//! see [`SharedArray::as_generic_ptr`]: sluice's bitcode linker rewrites that
//! `cvta.shared` as LLVM's own address-space cast, so LLVM infers that the
//! accesses through the pointer are shared and emits `ld.shared`/`st.shared`
//! for them too, with 32-bit addresses. Such accesses are ordinary Rust
//! reads and writes, though: a race between threads is undefined behaviour
//! there, unlike with the inline PTX of [`SharedArray::get`]/`set`.)
//!
//! # Example (device code)
//!
//! ```ignore
//! use sluice_device::{shared_array, sync, thread};
//! let tile = shared_array!(TILE: [f32; 256]);    // one array per block
//! let t = thread::thread_idx_x() as usize;
//! tile.set(t, input[t]);                         // bounds-checked store
//! sync::sync_threads();                          // every thread reaches it
//! let mirrored = tile.get(255 - t);              // sees the other threads' stores
//! ```
//!
//! # What is safe, and what remains the kernel author's duty
//!
//! [`SharedArray::get`] and [`SharedArray::set`] are safe: the index is
//! checked, the element type is [`bytemuck::Pod`] (so whatever bits the memory
//! holds, uninitialised or half-written, form a valid `T`, and no padding byte
//! is read), and the accesses are inline PTX, which the Rust compiler cannot
//! reason about. PTX's memory model does not make racy programs undefined: a
//! load that races with a store returns some value written to that location
//! (or its initial garbage). So a missing barrier gives **wrong results, never
//! undefined behaviour**. What sluice cannot check, and the kernel author owns:
//!
//! * **Barriers.** A value stored by one thread is visible to another thread of
//!   the block only after a [`crate::sync::sync_threads`] that both pass (or a
//!   fence plus a flag). Put one between the phase that writes a tile and the
//!   phase that reads it, and another before the tile is overwritten.
//! * **Barrier convergence.** Every thread of the block must reach each
//!   `sync_threads` (see [`crate::sync`]); threads without work keep looping
//!   with the others and only skip their loads/stores.
//! * **Who writes what.** Two threads storing to one element in the same phase
//!   race; use the atomics ([`SharedArray::fetch_add`] and
//!   [`crate::atomic::shared`]) for read-modify-write.
//! * **Size.** Static shared memory per block is at most 48 KiB; beyond it
//!   (up to 227 KiB on sm_90) only dynamic shared memory works, and the launch
//!   must opt in (`cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)`).
//!
//! Raw [`SharedPtr`] accesses (`read`, `write`) are `unsafe`: they are not
//! bounds-checked (on the CPU they are checked against the block's shared
//! memory: a panic instead of a wild access).
//!
//! | sluice | CUDA C++ | PTX |
//! | --- | --- | --- |
//! | [`shared_array!`](crate::shared_array), [`shared_static!`](crate::shared_static) | `__shared__ T x[N];` | `.shared .align A .b8 sym[..]` |
//! | [`SharedArray::get`], [`SharedArray::set`], [`SharedPtr::read`] ... | `x[i]`, `x[i] = v` | `ld.shared`, `st.shared` (vector forms where aligned) |
//! | [`dynamic_shared`], [`dynamic_shared_bytes`] | `extern __shared__ T x[];` | `.extern .shared`, `%dynamic_smem_size` |
//! | [`SharedPtr::to_generic`] | `&x[i]` as `T*` | `cvta.shared.u64` |
//!
//! # Hardware support
//!
//! Every architecture (static shared memory at most 48 KiB per block; dynamic
//! above that up to 227 KiB on sm_90, with the launch's opt-in).
//!
//! # On the CPU
//!
//! The CPU runtime ([`crate::cpu`]) gives each block one buffer, the family's
//! per-block state (`cpu.rs`, `arena.rs`): the dynamic region at window address
//! 0, then each static variable at its first use in the block; [`SharedPtr`]
//! addresses are offsets into it, the same for every thread of the block, and
//! every access through a `SharedPtr` or a `SharedArray` is checked against what
//! the block has allocated (a panic, not a wild access). Unwritten bytes read as
//! [`cpu::SHARED_POISON`](crate::cpu::SHARED_POISON) (`0xff`).
//!
//! In a checked launch ([`crate::cpu`]'s checking mode) every access made through
//! `get`/`set`/`read`/`write`, the atomics of this family and of
//! [`crate::atomic`] (on a `SharedPtr`, or on a generic pointer into the block's
//! shared memory) is recorded per byte (`check.rs`, the shadow beside the arena):
//! two threads' accesses to the same bytes in one barrier interval, one of them a
//! write and not both atomic, are a data race; a read of bytes no thread of the
//! block wrote before, an uninitialised read. Both are reported with the two threads
//! and their source lines. It cannot see plain Rust accesses through a generic
//! pointer (`as_generic_ptr`, `to_generic`, a `shared_static!`'s `Deref`,
//! `shared_array![T; N]`, `dynamic_shared_ptr`): a variable such a pointer was
//! made to counts as written, and races through the pointer go unseen.

use core::marker::PhantomData;

use bytemuck::Pod;

/// A typed address in the block's shared memory (32-bit, as PTX's `.shared`
/// window). The analogue of `*mut T` for shared memory: copying it copies the
/// address, and accesses through it are `unsafe`.
pub struct SharedPtr<T> {
    addr: u32,
    // `*mut T`: invariant in `T`, and neither `Send` nor `Sync`, as a raw pointer.
    _t: PhantomData<*mut T>,
}

impl<T> Clone for SharedPtr<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for SharedPtr<T> {}

impl<T> core::fmt::Debug for SharedPtr<T> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "SharedPtr({:#x})", self.addr)
    }
}

impl<T> SharedPtr<T> {
    /// The pointer at shared-window byte address `addr`. Creating one is safe;
    /// using it is not.
    #[inline(always)]
    pub const fn from_addr(addr: u32) -> SharedPtr<T> {
        SharedPtr { addr, _t: PhantomData }
    }

    /// The shared-window byte address.
    #[inline(always)]
    pub const fn addr(self) -> u32 {
        self.addr
    }

    /// The pointer `count` elements further (wrapping, like `wrapping_add`).
    #[inline(always)]
    pub const fn add(self, count: u32) -> SharedPtr<T> {
        SharedPtr::from_addr(self.addr.wrapping_add(count.wrapping_mul(core::mem::size_of::<T>() as u32)))
    }

    /// The same address as another element type.
    #[inline(always)]
    pub const fn cast<U>(self) -> SharedPtr<U> {
        SharedPtr::from_addr(self.addr)
    }
}

use crate::spec::shared::element_align;
#[doc(hidden)]
pub use crate::spec::shared::{array_align as __array_align, symbol_hash as __symbol_hash};

/// A statically sized array in the block's shared memory, made by
/// [`shared_array!`](crate::shared_array). A `Copy` handle (an address): every
/// copy names the same memory, which every thread of the block shares.
///
/// See the [module docs](self) for what is safe and what is the kernel
/// author's duty (barriers).
pub struct SharedArray<T, const N: usize> {
    base: SharedPtr<T>,
}

impl<T, const N: usize> Clone for SharedArray<T, N> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T, const N: usize> Copy for SharedArray<T, N> {}

/// A type a [`shared_array!`](crate::shared_array) can hold: plain bits
/// (`bytemuck::Pod`), so that whatever the memory holds — uninitialised, or half
/// written by another thread — reads as a valid value. Every `Pod` type is one: the
/// numbers, arrays of them of any length (rows of a 2-D tile), `#[repr(C)]` structs
/// deriving `Pod` and `Zeroable`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be an element of a shared array",
    label = "not plain data (`bytemuck::Pod`)",
    note = "shared memory starts uninitialised and other threads write it: its elements must be \
            `bytemuck::Pod` (numbers, arrays of them, `#[repr(C)]` structs deriving `Pod` and `Zeroable` \
            with no padding); a 2-D tile is `shared_array!(TILE: [[f32; COLS]; ROWS])`, read and written \
            per element with `at(r, c)` and `set_at(r, c, v)`"
)]
pub trait SharedElement: Pod {}
impl<T: Pod> SharedElement for T {}

/// Checks at compile time that `T` can be a shared array's element (what
/// `shared_array!` calls first, for a clear error).
#[doc(hidden)]
#[inline(always)]
pub const fn __element<T: SharedElement>() {}

/// A `static mut` in the block's shared memory, made by
/// [`shared_static!`](crate::shared_static) (the expansion of `cuda_std`'s
/// `#[address_space(shared)] static mut NAME: T = ...;`). A zero-sized handle:
/// the variable itself is a `.shared` declaration named after `H`, a hash of
/// the declaration site. On the device it dereferences to the per-block `T`
/// ([`Deref`](core::ops::Deref)/[`DerefMut`](core::ops::DerefMut)), so
/// `NAME[i].write(v)` and `NAME[i].assume_init()` read as they did with a real
/// `static mut` array; on the host it dereferences to the current block's
/// variable in the CPU runtime (and panics outside a launch).
///
/// `&raw mut NAME` / `addr_of_mut!(NAME)` give the address of this handle, not
/// of the shared memory: use `NAME.as_mut_ptr()` (or index it).
pub struct SharedStatic<T, const H: u64, const IN_KERNEL: bool = false> {
    // Only names `T`: no value of it lives here. `fn() -> T` keeps the handle
    // `Send + Sync` whatever `T` is, which a `static` requires; every access to
    // the memory goes through the `unsafe` read of the `static mut`.
    _t: PhantomData<fn() -> T>,
}

impl<T, const H: u64, const IN_KERNEL: bool> SharedStatic<T, H, IN_KERNEL> {
    /// The handle (used by `shared_static!`; creating one allocates nothing).
    ///
    /// # Safety
    ///
    /// The handle dereferences (`&T`, `&mut T`) to the block's shared variable named `H`,
    /// which every thread of the block shares and which starts uninitialised. The caller
    /// keeps every handle where each use is `unsafe` (`shared_static!` declares it as a
    /// `static mut`), so that whoever dereferences it vouches that no other thread accesses
    /// the bytes concurrently and that they hold a valid `T`; and `H` names one declaration
    /// (`shared_static!` hashes the declaration's site).
    #[doc(hidden)]
    pub const unsafe fn __new() -> Self {
        SharedStatic { _t: PhantomData }
    }
}

/// A runtime-sized view of shared memory (the dynamic region, or part of an
/// array). Same rules as [`SharedArray`].
pub struct SharedSlice<T> {
    base: SharedPtr<T>,
    len: u32,
}

impl<T> Clone for SharedSlice<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for SharedSlice<T> {}

impl<T: Pod, const N: usize> SharedArray<T, N> {
    /// Number of elements.
    pub const LEN: usize = N;

    /// Declares this call site's `.shared` array (see the module docs) and
    /// returns its handle. Used by `shared_array!` only: `H` is the call site's
    /// hash, which names the PTX symbol.
    ///
    /// # Safety
    ///
    /// `H` is unique to one `shared_array!` invocation (the macro hashes its
    /// module, file, line, column and name), so that no other declaration of a
    /// different size or type shares the symbol.
    #[doc(hidden)]
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub unsafe fn __declare<const H: u64>() -> Self {
        SharedArray { base: SharedPtr::from_addr(imp::declare::<[T; N], H>()) }
    }

    /// Number of elements, `N`.
    #[inline(always)]
    pub const fn len(&self) -> usize {
        N
    }

    /// Whether `N == 0`.
    #[inline(always)]
    pub const fn is_empty(&self) -> bool {
        N == 0
    }

    /// The address of element 0.
    #[inline(always)]
    pub const fn as_ptr(&self) -> SharedPtr<T> {
        self.base
    }

    /// The whole array as a [`SharedSlice`].
    #[inline(always)]
    pub const fn as_slice(&self) -> SharedSlice<T> {
        SharedSlice { base: self.base, len: N as u32 }
    }
}

impl<T: Pod> SharedSlice<T> {
    /// Number of elements.
    #[inline(always)]
    pub const fn len(&self) -> usize {
        self.len as usize
    }

    /// Whether it has no element.
    #[inline(always)]
    pub const fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The address of element 0.
    #[inline(always)]
    pub const fn as_ptr(&self) -> SharedPtr<T> {
        self.base
    }

    /// Splits at `mid` (panics if `mid > len`).
    #[inline(always)]
    pub fn split_at(self, mid: usize) -> (SharedSlice<T>, SharedSlice<T>) {
        if mid > self.len as usize {
            imp::split_at_out_of_bounds();
        }
        let mid = mid as u32;
        (SharedSlice { base: self.base, len: mid }, SharedSlice { base: self.base.add(mid), len: self.len - mid })
    }
}

// The backend, chosen once: `ld/st.shared` and `.shared` declarations on the GPU,
// the CPU runtime's per-block memory on the host. `pub(crate)`: the atomics' CPU
// side resolves shared addresses through it.
#[cfg_attr(target_arch = "nvptx64", path = "gpu.rs")]
#[cfg_attr(not(target_arch = "nvptx64"), path = "cpu.rs")]
pub(crate) mod imp;

/// The dynamic shared-memory region of this launch (CUDA's
/// `extern __shared__ T buf[]`), viewed as `T`s: as many whole `T` as fit
/// in the size given at launch (`%dynamic_smem_size`), starting 16-aligned.
/// Empty if the launch asked for none.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub fn dynamic_shared<T: Pod>() -> SharedSlice<T> {
    let (addr, bytes) = imp::dynamic_region();
    let size = core::mem::size_of::<T>() as u32;
    // Not `checked_div`: this form is the one the GPU's PTX has always had.
    #[allow(clippy::manual_checked_ops)]
    let len = if size == 0 { 0 } else { bytes / size };
    SharedSlice { base: SharedPtr::from_addr(addr), len }
}

/// Bytes of dynamic shared memory this launch was given.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub fn dynamic_shared_bytes() -> u32 {
    imp::dynamic_shared_bytes()
}

/// Bytes of shared memory per block of this launch, static and dynamic
/// (`%total_smem_size`, rounded up to the allocation unit). On the CPU: the
/// dynamic size plus the static variables this block has used so far (they are
/// allocated at their first use).
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub fn total_shared_bytes() -> u32 {
    imp::total_shared_bytes()
}

/// A generic `*mut T` to the start of this launch's dynamic shared memory
/// (CUDA's `extern __shared__ T buf[]`; 16-aligned; as many bytes as the
/// launch asked for, see [`dynamic_shared_bytes`]). Accesses through it compile
/// to generic loads and stores; [`dynamic_shared`] gives checked `ld/st.shared`.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub fn dynamic_shared_ptr<T>() -> *mut T {
    imp::dynamic_shared_ptr()
}

/// Declares `.shared .align A .b8 sluice_shared_H[size_of::<T>()]` and returns its
/// shared-window address (on the CPU: allocates the block's copy at its first
/// use). Used by `shared_array!` and `shared_static!`; see the module docs for how
/// the bitcode linker moves the declaration to the module's scope.
#[doc(hidden)]
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub fn __declare<T, const H: u64>() -> u32 {
    imp::declare::<T, H>()
}

/// Declares the `.shared` variable of an in-kernel [`SharedStatic`] (one made
/// by `shared_static!(@kernel ...)`) in the calling function. The kernel
/// attribute calls it once, as the entry's first statement, for every such
/// static in the kernel's body. (Every declaration now reaches the module's
/// scope through the linker, so the plain form costs the same one `mov`; this
/// form stays for the `cuda_std` attribute. On the CPU, which allocates every
/// static at its first use in a block, it does that use early.)
///
/// # Safety
///
/// Called exactly once per static, in the body of the kernel entry that
/// declares the static, before any use (a second call is a ptxas
/// "duplicate definition" error; a missing one an undefined symbol).
#[doc(hidden)]
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn __declare_in_kernel<T, const H: u64>(static_: *const SharedStatic<T, H, true>) {
    // SAFETY: forwarded to the caller.
    unsafe { imp::declare_in_kernel::<T, H>(static_) }
}

impl<T> SharedPtr<T> {
    /// The generic address of this shared location (`cvta.shared.u64`), for
    /// code that takes `*mut T`. Accesses through it work but compile to
    /// generic loads and stores.
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub fn to_generic(self) -> *mut T {
        imp::generic(self.addr)
    }

    /// Reads the `T` at this address.
    ///
    /// # Safety
    /// * the address is inside shared memory allocated to this kernel
    ///   (a `shared_array!` or the launch's dynamic region);
    /// * aligned for `T`;
    /// * the bytes there form a valid `T` (always true for `Pod` types).
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub unsafe fn read(self) -> T
    where
        T: Copy,
    {
        // SAFETY: forwarded to the caller.
        unsafe { imp::load::<T>(self.addr, core::mem::align_of::<T>()) }
    }

    /// Writes `v` at this address.
    ///
    /// # Safety
    /// * the address is inside shared memory allocated to this kernel;
    /// * aligned for `T`;
    /// * `T` has no padding bytes (true for `Pod` types).
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub unsafe fn write(self, v: T)
    where
        T: Copy,
    {
        // SAFETY: forwarded to the caller.
        unsafe { imp::store::<T>(self.addr, core::mem::align_of::<T>(), v) }
    }
}

macro_rules! accessors {
    () => {
        /// Element `i`. Panics if `i >= len`.
        #[inline(always)]
        #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
        pub fn get(&self, i: usize) -> T {
            crate::dassert!(i < self.len(), "shared memory index out of bounds");
            // SAFETY: i < len (checked above).
            unsafe { self.get_unchecked(i) }
        }

        /// Stores `v` in element `i`. Panics if `i >= len`. Other threads
        /// see it after the next barrier (see the module docs).
        #[inline(always)]
        #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
        pub fn set(&self, i: usize, v: T) {
            crate::dassert!(i < self.len(), "shared memory index out of bounds");
            // SAFETY: i < len (checked above).
            unsafe { self.set_unchecked(i, v) }
        }

        /// Element `i` without a bounds check.
        ///
        /// # Safety
        /// `i < self.len()`.
        #[inline(always)]
        #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
        pub unsafe fn get_unchecked(&self, i: usize) -> T {
            // SAFETY: in bounds (caller), aligned to `element_align` (the
            // declaration is 16-aligned, the stride is `size_of::<T>()`),
            // and `T: Pod` accepts any bits.
            unsafe { imp::load::<T>(self.base.add(i as u32).addr, element_align::<T>()) }
        }

        /// Stores `v` in element `i` without a bounds check.
        ///
        /// # Safety
        /// `i < self.len()`.
        #[inline(always)]
        #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
        pub unsafe fn set_unchecked(&self, i: usize, v: T) {
            // SAFETY: in bounds (caller), aligned as in `get_unchecked`,
            // and `T: Pod` has no padding.
            unsafe { imp::store::<T>(self.base.add(i as u32).addr, element_align::<T>(), v) }
        }

        /// The address of element `i`. Panics if `i >= len`.
        #[inline(always)]
        #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
        pub fn ptr(&self, i: usize) -> SharedPtr<T> {
            crate::dassert!(i < self.len(), "shared memory index out of bounds");
            self.base.add(i as u32)
        }

        /// The generic address of element 0 (see [`SharedPtr::to_generic`]).
        #[inline(always)]
        #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
        pub fn as_generic_ptr(&self) -> *mut T {
            self.base.to_generic()
        }

        /// Stores `v` in every element, the block's threads sharing the work
        /// (thread `block_rank()` stores elements `rank, rank + block_size, ...`).
        /// Call it from every thread of the block, then [`crate::sync::sync_threads`]
        /// before reading.
        #[inline(always)]
        #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
        pub fn fill_cooperative(&self, v: T) {
            let step = crate::thread::block_size() as usize;
            let mut i = crate::thread::block_rank() as usize;
            while i < self.len() {
                // SAFETY: i < len (loop condition).
                unsafe { self.set_unchecked(i, v) };
                i += step;
            }
        }
    };
}

impl<T: Pod, const N: usize> SharedArray<T, N> {
    accessors!();
}

/// A 2-D tile, `shared_array!(TILE: [[T; C]; R])`: `R` rows of `C` elements, row-major
/// (CUDA C++'s `__shared__ T tile[R][C]`). `get(r)`/`set(r, row)` move a whole row;
/// `at(r, c)`/`set_at(r, c, v)` one element — the form for a tile that many threads
/// write, each its own elements (a whole-row `set` by several threads at once races).
///
/// ```ignore
/// let tile = shared_array!(TILE: [[f32; 33]; 32]); // 32 × 32 plus a column of padding
/// let (tx, ty) = (thread::thread_idx_x() as usize, thread::thread_idx_y() as usize);
/// tile.set_at(ty, tx, input[..]);                  // tile[ty][tx] = ...
/// sync::sync_threads();
/// let v = tile.at(tx, ty);                         // ... = tile[tx][ty]
/// ```
impl<T: Pod, const C: usize, const R: usize> SharedArray<[T; C], R> {
    /// Rows, `R`.
    #[inline(always)]
    pub const fn rows(&self) -> usize {
        R
    }

    /// Columns, `C`.
    #[inline(always)]
    pub const fn cols(&self) -> usize {
        C
    }

    /// Element `(r, c)` (`tile[r][c]`). Panics if `r >= R` or `c >= C`.
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub fn at(&self, r: usize, c: usize) -> T {
        crate::dassert!(r < R && c < C, "shared tile index out of bounds");
        // SAFETY: r < R and c < C, so the element lies inside the array; a row is `C`
        // elements of `T` with no padding between them (`[T; C]`), every element aligned
        // as `T` at least (the declaration is 16-aligned), and `T: Pod` accepts any bits.
        unsafe { imp::load::<T>(self.element_addr(r, c), element_align::<T>()) }
    }

    /// Stores `v` in element `(r, c)` (`tile[r][c] = v`). Panics if `r >= R` or
    /// `c >= C`. Other threads see it after the next barrier.
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub fn set_at(&self, r: usize, c: usize, v: T) {
        crate::dassert!(r < R && c < C, "shared tile index out of bounds");
        // SAFETY: in bounds and aligned as in `at`; `T: Pod` has no padding.
        unsafe { imp::store::<T>(self.element_addr(r, c), element_align::<T>(), v) }
    }

    /// The shared-window address of element `(r, c)` (in bounds: the callers check).
    #[inline(always)]
    fn element_addr(&self, r: usize, c: usize) -> u32 {
        self.base.cast::<T>().add((r * C + c) as u32).addr
    }
}

impl<T: Pod> SharedSlice<T> {
    accessors!();
}

impl<T, const H: u64, const IN_KERNEL: bool> SharedStatic<T, H, IN_KERNEL> {
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    fn addr(&self) -> u32 {
        imp::static_addr::<T, H, IN_KERNEL>()
    }

    /// The generic address of the shared variable (what `&raw mut` would give
    /// for a `static mut` in `.shared`): a `*mut T` to **uninitialised**
    /// per-block memory. Reading and writing through it is `unsafe` (see
    /// [`shared_static!`](crate::shared_static)).
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub fn as_mut_ptr(&self) -> *mut T {
        imp::generic(self.addr())
    }

    /// The shared-window address of the variable (`ld/st.shared` access,
    /// [`SharedPtr::read`]/[`SharedPtr::write`]).
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub fn as_shared_ptr(&self) -> SharedPtr<T> {
        SharedPtr::from_addr(self.addr())
    }
}

impl<T, const H: u64, const IN_KERNEL: bool> core::ops::Deref for SharedStatic<T, H, IN_KERNEL> {
    type Target = T;
    #[inline(always)]
    fn deref(&self) -> &T {
        // SAFETY: the address is this block's `.shared` variable, allocated for
        // the whole launch and aligned for `T` (`__array_align`). Reaching a
        // `SharedStatic` means reading a `static mut`, which is `unsafe`: the
        // caller vouches that no other thread writes the variable while this
        // reference lives (a barrier orders them) and that `T` is valid for the
        // memory's contents (`MaybeUninit` elements until written, see
        // `shared_static!`).
        unsafe { &*imp::generic::<T>(self.addr()) }
    }
}

impl<T, const H: u64, const IN_KERNEL: bool> core::ops::DerefMut for SharedStatic<T, H, IN_KERNEL> {
    #[inline(always)]
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: as in `deref`; `&mut self` came from `&mut` of a `static mut`
        // (an `unsafe` access whose caller rules out other threads' accesses
        // to the elements it touches until the next barrier).
        unsafe { &mut *imp::generic::<T>(self.addr()) }
    }
}

/// Declares a statically sized array in the block's shared memory (on the
/// host: the CPU runtime's per-block memory, allocated at the block's first use).
///
/// Two forms:
///
/// * `shared_array!(NAME: [T; N])` returns a [`SharedArray<T, N>`] handle with
///   safe, bounds-checked `get`/`set`/atomics (`T:`
///   [`SharedElement`](crate::shared::SharedElement), i.e. `bytemuck::Pod`). `NAME` is any
///   identifier (it is hashed into the PTX symbol with the call site, so it
///   need not be unique across the crate). `shared_array!(NAME: [[T; C]; R])` is a
///   2-D tile: `at(r, c)`/`set_at(r, c, v)` read and write one element
///   (`tile[r][c]`), `get(r)`/`set(r, row)` a whole row.
/// * `shared_array![T; N]` returns a `*mut T` to the first of `N` uninitialised
///   `T`s (the form Rust-CUDA's `cuda_std` had): a generic pointer, so every
///   access is `unsafe` and compiles to a generic load or store.
///
/// `N` is a constant expression; it may name constants local to the function
/// (`const TILE2: usize = TILE * TILE;` just above), but not the function's
/// generic parameters. Like a CUDA `__shared__` variable, one array exists per
/// block per call site: calling the function holding it twice, or in a loop,
/// names the same per-block array (and two kernels that use the same helper
/// each get their own).
///
/// ```ignore
/// let tile = sluice_device::shared_array!(TILE: [[f32; 33]; 32]);
/// const N: usize = 64;
/// let raw: *mut u32 = sluice_device::shared_array![u32; N];
/// ```
#[macro_export]
macro_rules! shared_array {
    ($name:ident : [$t:ty; $n:expr]) => {{
        const __SLUICE_SHARED_HASH: u64 = $crate::shared::__symbol_hash(concat!(
            module_path!(),
            "|",
            file!(),
            "|",
            line!(),
            "|",
            column!(),
            "|",
            stringify!($name)
        ));
        $crate::shared::__element::<$t>();
        // SAFETY: the hash is this invocation's own (module, file, line, column, name).
        unsafe { $crate::shared::SharedArray::<$t, { $n }>::__declare::<__SLUICE_SHARED_HASH>() }
    }};
    ($t:ty; $n:expr) => {{
        const __SLUICE_SHARED_HASH: u64 =
            $crate::shared::__symbol_hash(concat!(module_path!(), "|", file!(), "|", line!(), "|", column!(), "|[]"));
        // SAFETY: the handle is used once, for its address only (a raw pointer, whose every
        // access is `unsafe`); the hash is this invocation's own.
        unsafe { $crate::shared::SharedStatic::<[$t; $n], __SLUICE_SHARED_HASH>::__new() }.as_mut_ptr() as *mut $t
    }};
}

/// A `static mut` in the block's shared memory: what Rust-CUDA writes as
/// `#[address_space(shared)] static mut NAME: T = INIT;` (on the host: the CPU
/// runtime's per-block memory; accessing it outside a launch panics).
///
/// ```ignore
/// use core::mem::MaybeUninit;
/// sluice_device::shared_static! {
///     static mut TILE: [MaybeUninit<f32>; TILE2] = [MaybeUninit::uninit(); TILE2];
/// }
/// // SAFETY: each thread writes its own element; the barrier below orders the
/// // writes before the other threads' reads.
/// unsafe { TILE[t].write(x) };
/// sync::sync_threads();
/// let y = unsafe { TILE[(t + 1) % TILE2].assume_init() };
/// ```
///
/// `NAME` becomes a [`SharedStatic<T, HASH>`](shared::SharedStatic): a zero-sized
/// `static mut` handle that dereferences to the per-block variable. `INIT` is
/// discarded (shared memory starts uninitialised, as in CUDA: `T` should hold
/// `MaybeUninit` values, written before they are read). The type may name
/// constants local to the function. Everything a `static mut` requires stays:
/// each access is `unsafe`, and the caller rules out concurrent conflicting
/// accesses (barriers between the phases that write and read). One variable
/// exists per block per declaration (per kernel that uses it).
///
/// **Cost, and the in-kernel form.** An access costs one `mov` of the
/// variable's symbol (the bitcode linker moves its declaration to the PTX
/// module's scope, see the [module docs](shared)). The in-kernel form,
/// `shared_static! { @kernel static mut NAME: T = INIT; }`, which `cuda_std`'s
/// kernel attribute writes, also declares the variable once as the entry's first
/// statement, with
/// `unsafe { sluice_device::shared::__declare_in_kernel(&raw const NAME) }`.
#[macro_export]
macro_rules! shared_static {
    (@kernel $(#[$meta:meta])* $vis:vis static mut $name:ident : $t:ty = $init:expr ;) => {
        $(#[$meta])*
        #[allow(non_upper_case_globals)]
        $vis static mut $name: $crate::shared::SharedStatic<
            $t,
            {
                $crate::shared::__symbol_hash(concat!(
                    module_path!(), "|", file!(), "|", line!(), "|", column!(), "|", stringify!($name)
                ))
            },
            true,
        > = {
            let _ = || -> $t { $init };
            // SAFETY: the handle is a `static mut`: every use of it is `unsafe`, and vouches
            // for the accesses it makes; the hash is this declaration's own.
            unsafe { $crate::shared::SharedStatic::__new() }
        };
    };
    ($(#[$meta:meta])* $vis:vis static mut $name:ident : $t:ty = $init:expr ;) => {
        $(#[$meta])*
        #[allow(non_upper_case_globals)]
        $vis static mut $name: $crate::shared::SharedStatic<
            $t,
            {
                $crate::shared::__symbol_hash(concat!(
                    module_path!(), "|", file!(), "|", line!(), "|", column!(), "|", stringify!($name)
                ))
            },
        > = {
            // The initializer of a shared variable is discarded (as nvcc and
            // Rust-CUDA discard it); it is still type-checked.
            let _ = || -> $t { $init };
            // SAFETY: the handle is a `static mut`: every use of it is `unsafe`, and vouches
            // for the accesses it makes; the hash is this declaration's own.
            unsafe { $crate::shared::SharedStatic::__new() }
        };
    };
}

#[cfg(test)]
mod tests {
    use core::mem::MaybeUninit;

    const N: usize = 8;
    crate::shared_static! {
        /// A module-scope shared variable must build on the host too (kernel
        /// crates compile for the host for their shared types).
        static mut HOST_VISIBLE: [MaybeUninit<u32>; N] = [MaybeUninit::uninit(); N];
    }

    #[test]
    fn shared_statics_are_zero_sized() {
        #[allow(static_mut_refs)]
        // SAFETY: only the handle's size is read; no shared memory is touched.
        let size = core::mem::size_of_val(unsafe { &HOST_VISIBLE });
        assert_eq!(size, 0);
    }
}
