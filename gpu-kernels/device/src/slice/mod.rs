//! Kernel slice parameters: a safe per-thread element accessor for the
//! one-thread-one-element case, and `unsafe` for general indexed writes.
//!
//! A kernel receives every slice as a device pointer and an element count
//! (sluice's ABI). Turning that into `&mut [T]` in every thread would be
//! unsound: thousands of threads would each hold a `&mut` to the *same*
//! slice, and `&mut` promises exclusive access. What *is* sound is for each
//! thread to hold `&mut` to elements no other thread touches. So:
//!
//! * [`DeviceSliceMut::for_thread`] hands out `&mut` to the element at this
//!   thread's [`global_rank`](crate::thread::global_rank), a linear id unique
//!   over the whole grid whatever its shape: no two threads can get the same
//!   element, so the `&mut`s never alias. Threads past the end get `None`.
//! * [`DeviceSliceMut::grid_stride`] iterates over the elements
//!   `rank, rank + total_threads, ...` of this thread (a grid-stride loop):
//!   disjoint between threads for the same reason.
//! * Anything else (a thread writing an element chosen by data, a transpose's
//!   scattered writes, several threads updating one element) is, safely, a kernel
//!   parameter of atomics: `bins: &[AtomicU32]` ([`atomics`]; the host passes a
//!   mutable `u32` view, and every access is an atomic instruction, which no other
//!   thread's access can race with); or [`DeviceSliceMut::write`] or a raw pointer:
//!   `unsafe`, with the kernel author proving that no two threads write the same
//!   element.
//! * A read-only slice seen as a matrix ([`tile::Matrix`](crate::tile::Matrix)) hands
//!   out `TR × TC` [`MatrixTile`](crate::tile::MatrixTile)s whose `get(r, c)` checks `r`
//!   and `c` against the tile's extent only: the element's index is in bounds by
//!   construction.
//! * Read-only parameters are plain `&[T]` ([`slice`](fn@slice)): sharing is what `&`
//!   means, as long as nothing writes the memory during the launch — the
//!   host-side guarantee sluice's views give.
//!
//! The constructors are `unsafe`: they trust the (pointer, length) pair and the
//! host's promise that no other work uses the memory during the launch.
//!
//! | sluice | CUDA C++ | PTX |
//! | --- | --- | --- |
//! | [`DeviceSliceMut::for_thread`], [`DeviceSliceMut::grid_stride`] | `p[i]` with `i` this thread's own index | `ld.global`/`st.global` (generic where LLVM cannot tell) |
//! | [`DeviceSliceMut::write`] | `p[i] = v` | `st.global` after a bounds check |
//! | [`slice`](fn@slice), [`slice_mut`] | `const T* p, size_t n` | (none: a pointer and a length) |
//! | [`atomics`] (`x: &[AtomicU32]`) | `unsigned* p` updated with `atomicAdd` | `atom`/`red` (generic) |
//! | [`tile::Matrix::tile`](crate::tile::Matrix::tile), [`MatrixTile::get`](crate::tile::MatrixTile::get) | `p[(r0 + r) * ld + c0 + c]` after `r < rows && c < cols` | two compares, one load |
//!
//! # Hardware support
//!
//! Every architecture.
//!
//! # On the CPU
//!
//! The same pointers, to host memory: every element a thread reaches goes through
//! the backend's `element`/`write` (`cpu.rs`). In a checked launch ([`crate::cpu`]'s
//! checking mode) each is recorded in the launch's shadow of global memory — an element
//! handed out as `&mut T` counts as written — and two threads' accesses to one element
//! that nothing orders (threads of different blocks never are) fail the launch with a
//! report naming both; atomics on the parameter's elements (through `as_mut_ptr`) are
//! recorded as atomic, and never race each other. What it cannot see: what is done
//! through a `&mut T` once handed out (one record per hand-out), plain reads and writes
//! through raw pointers taken with [`DeviceSliceMut::as_mut_ptr`], and parameters of
//! more than [`MAX_SHADOWED_ELEMENTS`](crate::cpu::MAX_SHADOWED_ELEMENTS) elements. Reads
//! through `&[T]` cannot conflict: the host never passes one memory as both a `&[T]` and
//! a written slice of a launch, and no launch runs concurrently with one that writes what
//! it uses (the lane rules). A kernel parameter of atomics ([`atomics`], `x: &[AtomicU32]`)
//! is noted as such a parameter: its accesses pass through `atomic/cpu.rs` and are recorded
//! as atomic, so they never race each other (and nothing else reaches that memory during
//! the launch). [`MatrixTile::get`](crate::tile::MatrixTile::get) reads like any `&[T]` read.
//!
//! # Example (device code)
//!
//! ```ignore
//! use sluice_device::slice::{self, DeviceSliceMut};
//! #[no_mangle]
//! pub unsafe extern "ptx-kernel" fn scale(y: *mut f32, y_len: u64, x: *const f32, x_len: u64, a: f32) {
//!     // SAFETY: sluice passes each slice as (pointer, length) of live device
//!     // memory; `y` is used by this launch only and only through `y`.
//!     let (mut y, x) = unsafe { (DeviceSliceMut::from_raw_parts(y, y_len), slice::slice(x, x_len)) };
//!     for (i, yi) in y.grid_stride() {
//!         if let Some(xi) = x.get(i) {
//!             *yi = a * *xi;
//!         }
//!     }
//! }
//! ```

use core::marker::PhantomData;

// The backend, chosen once: plain pointer accesses on the GPU; on the CPU the same,
// at the point where a race checker records them.
#[cfg_attr(target_arch = "nvptx64", path = "gpu.rs")]
#[cfg_attr(not(target_arch = "nvptx64"), path = "cpu.rs")]
mod imp;

/// A kernel's mutable slice parameter, seen from one thread: it can only
/// reach the elements that belong to this thread (see the module docs).
pub struct DeviceSliceMut<'a, T> {
    ptr: *mut T,
    len: usize,
    // Borrows the memory mutably for 'a, as `&'a mut [T]` would (invariant in T).
    _borrow: PhantomData<&'a mut [T]>,
}

/// A `&[T]` from a kernel's read-only (pointer, length) parameter.
///
/// # Safety
///
/// * `ptr` is valid for reads of `len` elements of `T` and aligned (or
///   `len == 0`), and `len * size_of::<T>() <= isize::MAX`;
/// * nothing writes that memory during `'a` (the launch): the host keeps
///   writers off it (sluice: the view is shared, and its writer's fence was awaited).
#[inline(always)]
pub unsafe fn slice<'a, T>(ptr: *const T, len: u64) -> &'a [T] {
    if len == 0 {
        return &[];
    }
    // SAFETY: the caller's contract above is `from_raw_parts`'s; for a `T` of non-zero size
    // it bounds `len` as the assumption says, which tells LLVM that index arithmetic below
    // `len` cannot wrap.
    unsafe {
        if size_of::<T>() > 0 {
            core::hint::assert_unchecked(len as usize <= isize::MAX as usize / size_of::<T>());
        }
        core::slice::from_raw_parts(ptr, len as usize)
    }
}

/// A `&[T]` from a checked kernel's read-only parameter as sluice's host lowers it: [`slice`]
/// without its test of `len == 0`, because the pointer of a view is never null, even of an
/// empty one (a view is part of an allocation, and allocations are never empty:
/// `Error::ZeroSized`). What `#[kernel]` calls for a `&[T]` parameter; one select fewer
/// before the first load than [`slice`].
///
/// # Safety
///
/// * `ptr` is non-null and aligned, also when `len == 0`;
/// * as [`slice`]: valid for reads of `len` elements, `len * size_of::<T>() <= isize::MAX`,
///   and nothing writes the memory during `'a`.
#[doc(hidden)]
#[inline(always)]
pub unsafe fn launch_slice<'a, T>(ptr: *const T, len: u64) -> &'a [T] {
    // SAFETY: the caller's contract is `from_raw_parts`'s (non-null and aligned whatever
    // `len`); for a `T` of non-zero size it bounds `len` as the assumption says.
    unsafe {
        if size_of::<T>() > 0 {
            core::hint::assert_unchecked(len as usize <= isize::MAX as usize / size_of::<T>());
        }
        core::slice::from_raw_parts(ptr, len as usize)
    }
}

/// A `&mut [T]` from an unchecked kernel's (pointer, length) parameter (`#[kernel(unchecked)]`,
/// as Rust-CUDA kernels take `&mut [T]`).
///
/// # Safety
///
/// * as [`slice`], for reads and writes;
/// * every thread of the launch holds this `&mut` at once: the threads' accesses must not
///   conflict (each writes elements no other thread reads or writes), which the `unsafe`
///   launch's caller vouches for.
#[inline(always)]
pub unsafe fn slice_mut<'a, T>(ptr: *mut T, len: u64) -> &'a mut [T] {
    if len == 0 {
        return &mut [];
    }
    // SAFETY: the caller's contract above is `from_raw_parts_mut`'s.
    unsafe { core::slice::from_raw_parts_mut(ptr, len as usize) }
}

/// A `&[A]` of atomics from a kernel's mutable (pointer, length) parameter of their plain
/// type (`&[AtomicU32]` from a `u32` view): every thread may update any element, each
/// update an atomic instruction (`atom`/`red`, or `core::sync::atomic` on the CPU).
///
/// # Safety
///
/// * `ptr` is valid for reads and writes of `len` elements of `A::Value` and aligned
///   (or `len == 0`), and `len * size_of::<A::Value>() <= isize::MAX`;
/// * during `'a` (the launch) the memory is accessed only through such slices: no other
///   work touches it, and this launch makes no other reference to it (sluice's host side
///   hands the launch a `&mut` view).
///
/// `#[kernel]` calls it for a parameter `x: &[AtomicU32]` (any device-scope atomic type);
/// by hand:
///
/// ```ignore
/// // SAFETY: (ptr, len) is the launch's mutable u32 view, reached only through `bins`.
/// let bins: &[AtomicU32] = unsafe { slice::atomics::<AtomicU32>(ptr, len) };
/// bins[3].fetch_add(1, Ordering::Relaxed);
/// ```
#[inline(always)]
pub unsafe fn atomics<'a, A: crate::atomic::AtomicElement>(ptr: *mut A::Value, len: u64) -> &'a [A] {
    if len == 0 {
        return &[];
    }
    // The CPU's checking mode shadows the parameter like a `DeviceSliceMut`'s: the atomics'
    // accesses (`atomic/cpu.rs`) are recorded on its elements as atomic (nothing on the GPU).
    imp::adopt(ptr, len as usize);
    // SAFETY: `A` has `A::Value`'s size and alignment (`repr(C)` around an `UnsafeCell`
    // of it); the pointer, length and exclusivity are the caller's contract, and every
    // access through `&A` is atomic.
    unsafe { core::slice::from_raw_parts(ptr.cast::<A>(), len as usize) }
}

impl<'a, T> DeviceSliceMut<'a, T> {
    /// Wraps a kernel's mutable (pointer, length) parameter.
    ///
    /// # Safety
    ///
    /// * `ptr` is valid for reads and writes of `len` elements of `T` and
    ///   aligned (or `len == 0`), for all of `'a`;
    /// * during `'a` nothing else accesses the memory: no other launch, copy or
    ///   host code (sluice's host side guarantees it for a bound view), and in
    ///   this launch only through `DeviceSliceMut`s made from this same
    ///   parameter, at most one per thread.
    #[inline(always)]
    pub unsafe fn from_raw_parts(ptr: *mut T, len: u64) -> DeviceSliceMut<'a, T> {
        imp::adopt(ptr, len as usize);
        DeviceSliceMut { ptr, len: len as usize, _borrow: PhantomData }
    }

    /// Number of elements.
    #[inline(always)]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the slice is empty.
    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The first `len` elements (all of them if `len >= self.len()`): the
    /// way to make a mutable slice as long as an input it is paired with.
    ///
    /// ```ignore
    /// #[kernel]
    /// pub fn saxpy(y: DeviceSliceMut<f32>, x: &[f32], a: f32) {
    ///     let mut y = y.prefix(x.len()); // y.len() <= x.len() from here on
    ///     # let _ = (y, a);
    /// }
    /// ```
    #[inline(always)]
    pub fn prefix(self, len: usize) -> DeviceSliceMut<'a, T> {
        DeviceSliceMut { ptr: self.ptr, len: if len < self.len { len } else { self.len }, _borrow: PhantomData }
    }

    /// The raw pointer (for `unsafe` code and atomics).
    #[inline(always)]
    pub fn as_mut_ptr(&self) -> *mut T {
        self.ptr
    }

    /// A mutable reference to element `i`.
    ///
    /// # Safety
    ///
    /// * `i < self.len()`;
    /// * no other thread reads or writes element `i` while the reference is
    ///   live (the kernel's indexing must make `i` this thread's own).
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub unsafe fn get_unchecked_mut(&mut self, i: usize) -> &mut T {
        // SAFETY: in bounds and exclusive to this thread (caller); valid memory
        // (constructor's contract).
        unsafe { imp::element(self.ptr, i) }
    }

    /// Writes `v[0]` to element `i` and `v[1]` to element `i + 1`, unchecked: one 8-byte
    /// store on the GPU where the pair is 8-byte aligned (a 4-byte `T`).
    ///
    /// # Safety
    ///
    /// `i + 1 < self.len()`, and no other thread accesses the two elements unordered.
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub(crate) unsafe fn write_pair_unchecked(&mut self, i: usize, v: [T; 2])
    where
        T: Copy,
    {
        // SAFETY: in bounds and exclusive (caller); valid memory (constructor's contract).
        unsafe { imp::write_pair(self.ptr, i, v) }
    }

    /// Writes `v` to element `i` (panics if `i >= len`): the general indexed
    /// write, for kernels whose threads do not own contiguous elements.
    ///
    /// # Safety
    ///
    /// No other thread of the launch reads or writes element `i` (except with
    /// atomics) unless ordered by a barrier or fence: the kernel's indexing
    /// must give each element one writer.
    ///
    /// An index out of bounds ends the launch with a fault located at the caller's line
    /// (the kernel's), so the host names the kernel and the lane that failed.
    #[inline(always)]
    #[track_caller]
    pub unsafe fn write(&self, i: usize, v: T) {
        if i >= self.len {
            write_out_of_bounds();
        }
        // SAFETY: in bounds (checked); one writer per element (caller);
        // valid memory (constructor's contract).
        unsafe { imp::write(self.ptr, i, v) }
    }
}

impl<'a, T> DeviceSliceMut<'a, T> {
    /// The element of this thread, `self[global_rank()]`, or `None` past the
    /// end. Safe: `global_rank` differs between any two threads of the grid,
    /// so the references handed out never alias.
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub fn for_thread(&mut self) -> Option<&mut T> {
        let i = crate::thread::global_rank();
        if i < self.len as u64 {
            // SAFETY: i < len, and element i belongs to this thread only
            // (global ranks are unique), borrowed through `&mut self`.
            Some(unsafe { imp::element(self.ptr, i as usize) })
        } else {
            None
        }
    }

    /// As [`for_thread`](Self::for_thread), indexing by the 1-D index
    /// `blockIdx.x * blockDim.x + threadIdx.x` — cheaper, and the same in a
    /// 1-D launch. In a launch with `gridDim.y/z` or `blockDim.y/z` above 1
    /// (where that index is shared by several threads) it returns `None` in
    /// every thread.
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub fn for_thread_1d(&mut self) -> Option<&mut T> {
        use crate::thread::*;
        let one_d = (grid_dim_y() | grid_dim_z() | block_dim_y() | block_dim_z()) == 1;
        let i = index_1d();
        if one_d && i < self.len as u64 {
            // SAFETY: in a 1-D launch `index_1d` is unique per thread; i < len.
            Some(unsafe { imp::element(self.ptr, i as usize) })
        } else {
            None
        }
    }

    /// This thread's elements `(i, &mut self[i])` for
    /// `i = global_rank() + k * total_threads()`: a grid-stride loop that is
    /// correct for any launch shape and any length.
    #[inline(always)]
    pub fn grid_stride(&mut self) -> GridStride<'_, T> {
        let (next, step) = rank_and_threads();
        GridStride { ptr: self.ptr, len: self.len as u64, next, step, _borrow: PhantomData }
    }
}

/// `(global_rank(), total_threads())`, the start and step of a grid-stride loop, with a
/// fast path for a 1-D launch (`gridDim.y/z` and `blockDim.y/z` all 1, four constant
/// loads and a compare), where they are `index_1d()` and `grid_size_1d()`: the two
/// multiplications and additions CUDA C++'s `blockIdx.x * blockDim.x + threadIdx.x`
/// costs, rather than the 3-D rank's dozen. Both give every thread its own disjoint
/// sequence of indices; in a 1-D launch they are the same numbers.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
fn rank_and_threads() -> (u64, u64) {
    use crate::thread::*;
    if (grid_dim_y() | grid_dim_z() | block_dim_y() | block_dim_z()) == 1 {
        (index_1d(), grid_size_1d())
    } else {
        rank_and_threads_3d()
    }
}

/// `#[kernel(dims = 1)]` on the CPU backend: a launch that is not 1-D fails with a message
/// (the host checks it too where it has the kernel's PTX; a build without the kernel
/// toolchain has none, and then this is the check).
#[doc(hidden)]
#[inline(always)]
#[track_caller]
pub fn __check_1d_launch() {
    if !crate::thread::launch_is_1d() {
        not_1d();
    }
}

#[cold]
#[track_caller]
fn not_1d() -> ! {
    crate::dfail!("a #[kernel(dims = 1)] kernel launched with a grid or blocks that are not 1-D: (n, 1, 1) each")
}

/// What `#[kernel(block = (x, y, z))]` does on the CPU backend, where the host may have no
/// PTX to read the promise from: checks that every block is `(x, y, z)`, failing the launch
/// with a message that names both shapes (the GPU build assumes it instead).
#[doc(hidden)]
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub fn __check_block(x: u32, y: u32, z: u32) {
    if !crate::thread::block_is(x, y, z) {
        imp::wrong_block(x, y, z);
    }
}

/// The general case of [`rank_and_threads`], out of line so that a 1-D launch does not
/// compute it.
#[cold]
#[inline(never)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
fn rank_and_threads_3d() -> (u64, u64) {
    (crate::thread::global_rank(), crate::thread::total_threads())
}

// Here, not in a backend: its path (`sluice_device::slice::write_out_of_bounds`) is
// in the PTX when LLVM keeps it out of line. The fault is located at the caller's
// caller (`#[track_caller]`): the kernel's own line, so the host names the kernel.
#[cold]
#[track_caller]
fn write_out_of_bounds() -> ! {
    crate::io::__fail_at(c"DeviceSliceMut::write out of bounds")
}

/// The iterator of [`DeviceSliceMut::grid_stride`].
pub struct GridStride<'s, T> {
    ptr: *mut T,
    len: u64,
    next: u64,
    step: u64,
    // Holds the `&mut DeviceSliceMut` borrow.
    _borrow: PhantomData<&'s mut [T]>,
}

impl<'s, T> Iterator for GridStride<'s, T> {
    type Item = (usize, &'s mut T);

    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    fn next(&mut self) -> Option<Self::Item> {
        if self.next >= self.len {
            return None;
        }
        let i = self.next;
        self.next += self.step;
        // SAFETY: i < len; the indices `rank + k * total_threads` of distinct
        // threads are disjoint, and this iterator yields each of its own once,
        // while it holds the slice's unique borrow.
        Some((i as usize, unsafe { imp::element(self.ptr, i as usize) }))
    }
}
