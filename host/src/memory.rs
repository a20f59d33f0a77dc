//! Device matrices, their disjoint column borrows (rule 2), and pinned host matrices.
//!
//! # Rule 2: disjoint by construction
//!
//! A [`DeviceMatrix`] is column-major (`rows` x `cols`, leading dimension `ld >= rows`).
//! Column `j` owns the elements `[j * ld, (j + 1) * ld)`, its padding included, so column
//! ranges never overlap. The only ways to get mutable access to device elements are the
//! `&mut self` methods here, which split the matrix into [`ColumnsMut`] values that cover
//! disjoint column ranges — the same way `<[T]>::split_at_mut` and `chunks_mut` split a
//! slice. Two lanes can therefore never hold mutable access to the same element: the
//! borrow checker rejects the second `&mut` borrow.
//!
//! A single column can be split further into row ranges
//! ([`ColumnViewMut::split_rows`](crate::ColumnViewMut::split_rows)). A row range owns its
//! rows only, not the rest of its column nor the column's padding, so it is never joined
//! with its neighbours: a join of row ranges of adjacent columns would span the rows
//! between them, which other views own. Only spans of whole columns join (`Span::join`).
//!
//! # Memory
//!
//! Device memory comes from the driver's stream-ordered allocator, through the
//! [`Gpu`]'s allocator stream (see [`Gpu::trim_memory_pool`]): allocating waits for that
//! internal stream only, and freeing enqueues the free there without waiting at all, so
//! neither synchronizes the device (rule 6) nor waits for any lane.

use std::marker::PhantomData;
use std::ops::{Bound, Deref, DerefMut, RangeBounds};
use std::ptr::NonNull;

use bytemuck::Pod;

use crate::device::Gpu;
use crate::driver::{self, DevicePtr, RawHostPtr};
use crate::error::{Error, Result};

/// A run of whole columns of one device allocation, or a run of rows of one column: the
/// plain data behind every borrow and view (no lifetime, no brand: those live in the types
/// that carry a `Span`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Span {
    /// Address of the first element of the first column.
    pub ptr: DevicePtr,
    pub rows: usize,
    pub cols: usize,
    /// Elements from one column's start to the next's.
    pub ld: usize,
    pub elem_size: usize,
    /// Which allocation this is in (joining views checks it).
    pub alloc: u64,
    /// The context (device) the allocation belongs to, as an address: work on another
    /// device's lane is refused with a typed error.
    pub ctx: usize,
    /// Whether the span covers whole columns: every row of each of its columns, and so the
    /// padding between them. False for a row range of a column (`slice_rows`, `split_rows`),
    /// which owns only its own rows; such spans never [`join`](Span::join), because the
    /// joined span would cover the rows between them, which other views own.
    pub whole_columns: bool,
}

impl Span {
    /// Elements in the span (padding excluded).
    pub fn len(&self) -> usize {
        self.rows * self.cols
    }

    /// Elements from the first to the last, padding between columns included: the
    /// length a kernel sees. The span owns all of them: a span of several columns covers
    /// whole columns (only those join), and a row range is one column, without padding.
    pub fn flat_len(&self) -> usize {
        debug_assert!(self.cols <= 1 || self.whole_columns, "a row range spans one column");
        if self.cols == 0 {
            0
        } else {
            (self.cols - 1) * self.ld + self.rows
        }
    }

    /// Whether the elements are one contiguous run.
    #[cfg(test)]
    pub fn is_contiguous(&self) -> bool {
        self.cols <= 1 || self.ld == self.rows
    }

    /// Columns `[0, at)` and `[at, cols)`; `None` if `at > cols`.
    pub fn split_at(self, at: usize) -> Option<(Span, Span)> {
        if at > self.cols {
            return None;
        }
        let left = Span { cols: at, ..self };
        let right = Span {
            ptr: self.ptr + (at * self.ld * self.elem_size) as DevicePtr,
            cols: self.cols - at,
            ..self
        };
        Some((left, right))
    }

    pub fn range(self, range: impl RangeBounds<usize>) -> Option<Span> {
        let start = match range.start_bound() {
            Bound::Included(&s) => s,
            Bound::Excluded(&s) => s.checked_add(1)?,
            Bound::Unbounded => 0,
        };
        let end = match range.end_bound() {
            Bound::Included(&e) => e.checked_add(1)?,
            Bound::Excluded(&e) => e,
            Bound::Unbounded => self.cols,
        };
        if start > end || end > self.cols {
            return None;
        }
        let (_, rest) = self.split_at(start)?;
        let (mid, _) = rest.split_at(end - start)?;
        Some(mid)
    }

    /// `self` followed directly by `next` as one span, if they are adjacent ranges of whole
    /// columns of one allocation.
    ///
    /// Row ranges never join, not even the same rows of two adjacent columns: their join
    /// would start in one column and end in the next, and its flat extent (what a kernel is
    /// given) would cover the rows in between, which other views own (rule 2).
    pub fn join(self, next: Span) -> Option<Span> {
        let adjacent = self.whole_columns
            && next.whole_columns
            && self.alloc == next.alloc
            && self.rows == next.rows
            && self.ld == next.ld
            && self.elem_size == next.elem_size
            && self.ptr + (self.cols * self.ld * self.elem_size) as DevicePtr == next.ptr;
        adjacent.then_some(Span { cols: self.cols + next.cols, ..self })
    }

    /// Takes the first `k` columns (fewer at the end) off the front.
    pub fn take_front(&mut self, k: usize) -> Option<Span> {
        if self.cols == 0 || k == 0 {
            return None;
        }
        let (head, tail) = self.split_at(k.min(self.cols))?;
        *self = tail;
        Some(head)
    }

    /// Takes the last chunk off the back, keeping the front chunks aligned to `k`.
    pub fn take_back(&mut self, k: usize) -> Option<Span> {
        if self.cols == 0 || k == 0 {
            return None;
        }
        let rem = self.cols % k;
        let last = if rem == 0 { k } else { rem };
        let (head, tail) = self.split_at(self.cols - last)?;
        *self = head;
        Some(tail)
    }
}

/// The alignment every device and pinned allocation is guaranteed to have, in bytes.
///
/// The driver documents 256 bytes for device allocations; pinned allocations are whole
/// pages. Each column starts a multiple of `size_of::<T>()` bytes (itself a multiple of
/// `align_of::<T>()`) from the allocation's start, so every element is aligned when the
/// start is. Both allocators also check the address they get (see [`check_aligned`]).
pub(crate) const ALLOC_ALIGN: usize = 256;

/// Checks a shape and element type and returns the allocation size in bytes.
fn matrix_bytes<T>(rows: usize, cols: usize, ld: usize) -> Result<usize> {
    if rows == 0 || cols == 0 || std::mem::size_of::<T>() == 0 {
        return Err(Error::ZeroSized);
    }
    // A `#[repr(align(8192))]` element would be misaligned in memory only promised 256-byte
    // alignment: references to it (a pinned matrix derefs to `&[T]`, a kernel reads `T`s)
    // would be undefined behaviour. Refuse before allocating.
    if std::mem::align_of::<T>() > ALLOC_ALIGN {
        return Err(Error::OverAligned { align: std::mem::align_of::<T>(), max: ALLOC_ALIGN });
    }
    let too_large = Error::TooLarge { rows, cols, elem_size: std::mem::size_of::<T>() };
    let bytes = ld
        .checked_mul(cols)
        .and_then(|n| n.checked_mul(std::mem::size_of::<T>()))
        .ok_or(too_large.clone())?;
    // Device addresses are u64 and kernel lengths u64: also keep under isize::MAX, as Rust
    // allocations do, so element offsets never overflow.
    if bytes > isize::MAX as usize {
        return Err(too_large);
    }
    Ok(bytes)
}

/// Checks that an allocation's address suits `T` (the driver promises [`ALLOC_ALIGN`];
/// this makes the promise a checked one, for one comparison per allocation).
fn check_aligned<T>(addr: u64) -> Result<()> {
    let align = std::mem::align_of::<T>() as u64;
    if addr.is_multiple_of(align) {
        Ok(())
    } else {
        let got = 1usize.checked_shl(addr.trailing_zeros()).unwrap_or(0);
        Err(Error::OverAligned { align: std::mem::align_of::<T>(), max: got })
    }
}

/// A column-major matrix in device memory: the GPU's `Vec<T>` (a buffer is a matrix with
/// one column). Owned: dropping it frees the memory.
///
/// Elements are any [`Pod`] type. Freshly allocated memory holds arbitrary bits, which are
/// valid values of a `Pod` type; write every element (a kernel, a copy or
/// [`Stream::zero`](crate::Stream::zero)) before reading it.
///
/// The memory comes from the driver's stream-ordered allocator (`cuMemAllocFromPoolAsync`
/// on the [`Gpu`]'s internal allocator stream, which is then synchronized: it holds only
/// allocations and frees, never a lane's work, so allocating waits for no lane and never
/// for the device). Dropping the matrix enqueues `cuMemFreeAsync` there and returns at once;
/// the memory stays in the device's pool for the next allocation (see
/// [`Gpu::trim_memory_pool`]). Neither synchronizes the device, so matrices may come and go
/// while other lanes run.
///
/// Work reaches the memory only through column borrows ([`ColumnsMut`], [`ColumnsRef`])
/// bound to a lane inside a [`scope`](crate::scope), and binding requires the borrow to
/// last as long as the scope. So while any lane may still use the matrix it stays
/// borrowed: it cannot be dropped, moved or split again until the scope has joined its
/// lanes (rule 5).
///
/// ```
/// # fn demo(gpu: &sluice_host::Gpu) -> sluice_host::Result<()> {
/// let mut m = gpu.alloc_matrix::<f32>(1024, 8)?;        // 1024 rows, 8 columns
/// let (left, right) = m.split_columns_mut(4).unwrap();  // columns 0..4 and 4..8
/// assert_eq!((left.cols(), right.cols()), (4, 4));
/// for col in m.columns_mut() {                          // one ColumnsMut per column
///     assert_eq!(col.rows(), 1024);
/// }
/// # Ok(()) }
/// ```
///
/// # Lifetimes
///
/// Every borrow method ties its result to `&self` / `&mut self`, as slice methods do. A
/// view of the matrix can therefore not outlive it:
///
/// ```compile_fail,E0597
/// # fn demo(gpu: &sluice_host::Gpu) -> sluice_host::Result<()> {
/// let col = {
///     let mut m = gpu.alloc_matrix::<f32>(16, 2)?;
///     m.column_mut(0).unwrap()
/// }; // error[E0597]: `m` does not live long enough — the column would dangle
/// # let _ = col; Ok(()) }
/// ```
///
/// Keep the matrix alive as long as its columns are used:
///
/// ```no_run
/// # fn demo(gpu: &sluice_host::Gpu) -> sluice_host::Result<()> {
/// let mut m = gpu.alloc_matrix::<f32>(16, 2)?;
/// let col = m.column_mut(0).unwrap();
/// # let _ = col; Ok(()) }
/// ```
///
/// # Rule 5
///
/// A matrix a lane may still be using cannot be dropped (freed) before the scope has
/// joined that lane:
///
/// ```compile_fail,E0505
/// # fn demo(gpu: &sluice_host::Gpu) -> sluice_host::Result<()> {
/// let mut m = gpu.alloc_buffer::<f32>(256)?;
/// sluice_host::scope(gpu, |s| {
///     s.lane()?.enter(|st| { let mut v = st.bind(m.as_columns_mut()); st.zero(&mut v) })?;
///     drop(m); // error[E0505]: cannot move out of `m` because it is borrowed (until the scope joins)
///     Ok(())
/// })
/// # }
/// ```
///
/// Drop it after the scope (or allocate it from the scope, which frees it after the join):
///
/// ```no_run
/// # fn demo(gpu: &sluice_host::Gpu) -> sluice_host::Result<()> {
/// let mut m = gpu.alloc_buffer::<f32>(256)?;
/// sluice_host::scope(gpu, |s| {
///     s.lane()?.enter(|st| { let mut v = st.bind(m.as_columns_mut()); st.zero(&mut v) })
/// })?;
/// drop(m);
/// # Ok(()) }
/// ```
pub struct DeviceMatrix<T> {
    gpu: Gpu,
    span: Span,
    /// The element type. `fn() -> T`: the elements live on the device, never in this
    /// handle, so moving the handle between threads moves no `T`.
    _elems: PhantomData<fn() -> T>,
}

impl<T: Pod> DeviceMatrix<T> {
    pub(crate) fn alloc(gpu: &Gpu, rows: usize, cols: usize, ld: usize) -> Result<DeviceMatrix<T>> {
        if ld < rows {
            return Err(Error::LengthMismatch { expected: rows, got: ld });
        }
        let bytes = matrix_bytes::<T>(rows, cols, ld)?;
        let ptr = gpu.alloc_device(bytes)?;
        if let Err(e) = check_aligned::<T>(ptr) {
            // SAFETY: just allocated by `alloc_device` and never handed out: nothing uses it.
            return Err(match unsafe { gpu.free_device(ptr) } {
                Ok(()) => e,
                Err(error) => e.also(Error::Free { what: "device memory", error }),
            });
        }
        let span = Span {
            ptr,
            rows,
            cols,
            ld,
            elem_size: std::mem::size_of::<T>(),
            alloc: gpu.next_alloc_id(),
            ctx: gpu.ctx().0 as usize,
            whole_columns: true,
        };
        Ok(DeviceMatrix { gpu: gpu.clone(), span, _elems: PhantomData })
    }

    /// Rows (elements per column).
    ///
    /// ```no_run
    /// # fn demo(gpu: &sluice_host::Gpu) -> sluice_host::Result<()> {
    /// let m = gpu.alloc_matrix::<f32>(4, 2)?;
    /// assert_eq!(m.rows(), 4);
    /// # Ok(()) }
    /// ```
    pub fn rows(&self) -> usize {
        self.span.rows
    }

    /// Columns.
    ///
    /// ```no_run
    /// # fn demo(gpu: &sluice_host::Gpu) -> sluice_host::Result<()> {
    /// let m = gpu.alloc_matrix::<f32>(4, 2)?;
    /// assert_eq!(m.cols(), 2);
    /// # Ok(()) }
    /// ```
    pub fn cols(&self) -> usize {
        self.span.cols
    }

    /// Leading dimension: elements from one column's start to the next's (`>= rows`).
    ///
    /// ```no_run
    /// # fn demo(gpu: &sluice_host::Gpu) -> sluice_host::Result<()> {
    /// let m = gpu.alloc_matrix_padded::<f32>(4, 2, 8)?;
    /// assert_eq!(m.ld(), 8);
    /// # Ok(()) }
    /// ```
    pub fn ld(&self) -> usize {
        self.span.ld
    }

    /// `rows * cols`.
    ///
    /// ```no_run
    /// # fn demo(gpu: &sluice_host::Gpu) -> sluice_host::Result<()> {
    /// let m = gpu.alloc_matrix::<f32>(4, 2)?;
    /// assert_eq!(m.len(), 8);
    /// # Ok(()) }
    /// ```
    pub fn len(&self) -> usize {
        self.span.len()
    }

    /// Always false: zero-sized matrices cannot be allocated.
    ///
    /// ```no_run
    /// # fn demo(gpu: &sluice_host::Gpu) -> sluice_host::Result<()> {
    /// assert!(!gpu.alloc_buffer::<u8>(1)?.is_empty());
    /// # Ok(()) }
    /// ```
    pub fn is_empty(&self) -> bool {
        self.span.len() == 0
    }

    /// The whole matrix, mutably.
    ///
    /// ```no_run
    /// # fn demo(gpu: &sluice_host::Gpu) -> sluice_host::Result<()> {
    /// let mut m = gpu.alloc_matrix::<f32>(4, 2)?;
    /// assert_eq!(m.as_columns_mut().cols(), 2);
    /// # Ok(()) }
    /// ```
    pub fn as_columns_mut(&mut self) -> ColumnsMut<'_, T> {
        ColumnsMut::new(self.span)
    }

    /// The whole matrix, read-only.
    ///
    /// ```no_run
    /// # fn demo(gpu: &sluice_host::Gpu) -> sluice_host::Result<()> {
    /// let m = gpu.alloc_matrix::<f32>(4, 2)?;
    /// assert_eq!(m.as_columns().len(), 8);
    /// # Ok(()) }
    /// ```
    pub fn as_columns(&self) -> ColumnsRef<'_, T> {
        ColumnsRef::new(self.span)
    }

    /// Column `j`, mutably; `None` if `j >= cols`.
    ///
    /// ```no_run
    /// # fn demo(gpu: &sluice_host::Gpu) -> sluice_host::Result<()> {
    /// let mut m = gpu.alloc_matrix::<f32>(4, 2)?;
    /// assert!(m.column_mut(1).is_some() && m.column_mut(2).is_none());
    /// # Ok(()) }
    /// ```
    pub fn column_mut(&mut self, j: usize) -> Option<ColumnsMut<'_, T>> {
        self.span.range(j..j.checked_add(1)?).map(ColumnsMut::new)
    }

    /// Column `j`, read-only; `None` if `j >= cols`.
    ///
    /// ```no_run
    /// # fn demo(gpu: &sluice_host::Gpu) -> sluice_host::Result<()> {
    /// let m = gpu.alloc_matrix::<f32>(4, 2)?;
    /// assert_eq!(m.column(0).unwrap().rows(), 4);
    /// # Ok(()) }
    /// ```
    pub fn column(&self, j: usize) -> Option<ColumnsRef<'_, T>> {
        self.span.range(j..j.checked_add(1)?).map(ColumnsRef::new)
    }

    /// A range of columns, mutably; `None` if it is out of bounds.
    ///
    /// ```no_run
    /// # fn demo(gpu: &sluice_host::Gpu) -> sluice_host::Result<()> {
    /// let mut m = gpu.alloc_matrix::<f32>(4, 6)?;
    /// assert_eq!(m.column_range_mut(1..4).unwrap().cols(), 3);
    /// # Ok(()) }
    /// ```
    pub fn column_range_mut(&mut self, range: impl RangeBounds<usize>) -> Option<ColumnsMut<'_, T>> {
        self.span.range(range).map(ColumnsMut::new)
    }

    /// Columns `[0, at)` and `[at, cols)`, both mutably; `None` if `at > cols`.
    ///
    /// ```no_run
    /// # fn demo(gpu: &sluice_host::Gpu) -> sluice_host::Result<()> {
    /// let mut m = gpu.alloc_matrix::<f32>(4, 6)?;
    /// let (a, b) = m.split_columns_mut(1).unwrap();
    /// assert_eq!((a.cols(), b.cols()), (1, 5));
    /// # Ok(()) }
    /// ```
    pub fn split_columns_mut(&mut self, at: usize) -> Option<(ColumnsMut<'_, T>, ColumnsMut<'_, T>)> {
        self.as_columns_mut().split_columns(at)
    }

    /// Every column on its own, mutably, in order.
    ///
    /// ```no_run
    /// # fn demo(gpu: &sluice_host::Gpu) -> sluice_host::Result<()> {
    /// let mut m = gpu.alloc_matrix::<f32>(4, 6)?;
    /// assert_eq!(m.columns_mut().len(), 6);
    /// # Ok(()) }
    /// ```
    pub fn columns_mut(&mut self) -> ColumnChunksMut<'_, T> {
        self.as_columns_mut().into_columns()
    }

    /// Every column on its own, read-only, in order.
    ///
    /// ```no_run
    /// # fn demo(gpu: &sluice_host::Gpu) -> sluice_host::Result<()> {
    /// let m = gpu.alloc_matrix::<f32>(4, 6)?;
    /// assert!(m.columns().all(|c| c.cols() == 1));
    /// # Ok(()) }
    /// ```
    pub fn columns(&self) -> ColumnChunks<'_, T> {
        self.as_columns().column_chunks(1)
    }

    /// Runs of `k` columns (the last may be shorter), mutably; none if `k == 0`.
    ///
    /// ```no_run
    /// # fn demo(gpu: &sluice_host::Gpu) -> sluice_host::Result<()> {
    /// let mut m = gpu.alloc_matrix::<f32>(4, 6)?;
    /// assert_eq!(m.column_chunks_mut(4).len(), 2);
    /// # Ok(()) }
    /// ```
    pub fn column_chunks_mut(&mut self, k: usize) -> ColumnChunksMut<'_, T> {
        self.as_columns_mut().column_chunks(k)
    }

    /// Frees the memory now, returning a driver error instead of printing it as `drop` does.
    /// Like `drop`, it only enqueues the free (`cuMemFreeAsync`) and does not wait.
    ///
    /// ```no_run
    /// # fn demo(gpu: &sluice_host::Gpu) -> sluice_host::Result<()> {
    /// let m = gpu.alloc_matrix::<f32>(4, 6)?;
    /// m.free()?; // returns a driver error; `drop(m)` would print it
    /// # Ok(()) }
    /// ```
    pub fn free(self) -> Result<()> {
        let this = std::mem::ManuallyDrop::new(self);
        let r = this.release();
        // SAFETY: `this` is never used again and its memory was released above: only the
        // `Gpu` handle still needs dropping.
        drop(unsafe { std::ptr::read(&this.gpu) });
        r
    }
}

impl<T> DeviceMatrix<T> {
    fn release(&self) -> Result<()> {
        // SAFETY: the pointer came from `alloc_device` on this `Gpu` and is freed once (only
        // `drop`/`free` call this, each consuming the matrix). No work can use it any more:
        // work reaches it only through borrows bound in a scope, which last until that scope
        // has joined its lanes (confirmed by `cuStreamSynchronize`, or the context is lost
        // and runs nothing) — so every lane that could use it has finished.
        unsafe { self.gpu.free_device(self.span.ptr) }.map_err(|error| Error::Free { what: "device memory", error })
    }
}

impl<T> Drop for DeviceMatrix<T> {
    fn drop(&mut self) {
        if let Err(e) = self.release() {
            // `drop` cannot return it; do not lose it (STYLE: errors found while dropping).
            crate::error::report_dropped("dropping a DeviceMatrix", &e);
        }
    }
}

impl<T> std::fmt::Debug for DeviceMatrix<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeviceMatrix")
            .field("rows", &self.span.rows)
            .field("cols", &self.span.cols)
            .field("ld", &self.span.ld)
            .finish()
    }
}

macro_rules! columns_common {
    ($name:ident, $make:literal) => {
        impl<'a, T> $name<'a, T> {
            pub(crate) fn new(span: Span) -> Self {
                $name { span, _borrow: PhantomData }
            }

            pub(crate) fn span(&self) -> Span {
                self.span
            }

            /// Rows (elements per column).
            #[doc = ""]
            #[doc = "```no_run"]
            #[doc = "# fn demo(gpu: &sluice_host::Gpu) -> sluice_host::Result<()> {"]
            #[doc = "let mut m = gpu.alloc_matrix::<f32>(4, 6)?;"]
            #[doc = concat!("let c = m.", $make, "();")]
            #[doc = "assert_eq!(c.rows(), 4);"]
            #[doc = "# Ok(()) }"]
            #[doc = "```"]
            pub fn rows(&self) -> usize {
                self.span.rows
            }

            /// Columns in this range.
            #[doc = ""]
            #[doc = "```no_run"]
            #[doc = "# fn demo(gpu: &sluice_host::Gpu) -> sluice_host::Result<()> {"]
            #[doc = "let mut m = gpu.alloc_matrix::<f32>(4, 6)?;"]
            #[doc = concat!("let c = m.", $make, "();")]
            #[doc = "assert_eq!(c.cols(), 6);"]
            #[doc = "# Ok(()) }"]
            #[doc = "```"]
            pub fn cols(&self) -> usize {
                self.span.cols
            }

            /// The matrix's leading dimension.
            #[doc = ""]
            #[doc = "```no_run"]
            #[doc = "# fn demo(gpu: &sluice_host::Gpu) -> sluice_host::Result<()> {"]
            #[doc = "let mut m = gpu.alloc_matrix::<f32>(4, 6)?;"]
            #[doc = concat!("let c = m.", $make, "();")]
            #[doc = "assert_eq!(c.ld(), 4);"]
            #[doc = "# Ok(()) }"]
            #[doc = "```"]
            pub fn ld(&self) -> usize {
                self.span.ld
            }

            /// `rows * cols`.
            #[doc = ""]
            #[doc = "```no_run"]
            #[doc = "# fn demo(gpu: &sluice_host::Gpu) -> sluice_host::Result<()> {"]
            #[doc = "let mut m = gpu.alloc_matrix::<f32>(4, 6)?;"]
            #[doc = concat!("let c = m.", $make, "();")]
            #[doc = "assert_eq!(c.len(), 24);"]
            #[doc = "# Ok(()) }"]
            #[doc = "```"]
            pub fn len(&self) -> usize {
                self.span.len()
            }

            /// Whether the range has no columns.
            #[doc = ""]
            #[doc = "```no_run"]
            #[doc = "# fn demo(gpu: &sluice_host::Gpu) -> sluice_host::Result<()> {"]
            #[doc = "let mut m = gpu.alloc_matrix::<f32>(4, 6)?;"]
            #[doc = concat!("let c = m.", $make, "();")]
            #[doc = "assert!(!c.is_empty());"]
            #[doc = "# Ok(()) }"]
            #[doc = "```"]
            pub fn is_empty(&self) -> bool {
                self.span.len() == 0
            }

            /// Columns `[0, at)` and `[at, cols)` of this range; `None` if `at > cols`.
            #[doc = ""]
            #[doc = "```no_run"]
            #[doc = "# fn demo(gpu: &sluice_host::Gpu) -> sluice_host::Result<()> {"]
            #[doc = "let mut m = gpu.alloc_matrix::<f32>(4, 6)?;"]
            #[doc = concat!("let c = m.", $make, "();")]
            #[doc = "let (a, b) = c.split_columns(2).unwrap();"]
            #[doc = "assert_eq!((a.cols(), b.cols()), (2, 4));"]
            #[doc = "# Ok(()) }"]
            #[doc = "```"]
            pub fn split_columns(self, at: usize) -> Option<(Self, Self)> {
                let (l, r) = self.span.split_at(at)?;
                Some(($name::new(l), $name::new(r)))
            }

            /// Each column of this range on its own.
            #[doc = ""]
            #[doc = "```no_run"]
            #[doc = "# fn demo(gpu: &sluice_host::Gpu) -> sluice_host::Result<()> {"]
            #[doc = "let mut m = gpu.alloc_matrix::<f32>(4, 6)?;"]
            #[doc = concat!("let c = m.", $make, "();")]
            #[doc = "assert_eq!(c.into_columns().count(), 6);"]
            #[doc = "# Ok(()) }"]
            #[doc = "```"]
            pub fn into_columns(self) -> concat_idents_chunks!($name, 'a, T) {
                self.column_chunks(1)
            }

            /// Runs of `k` columns of this range (the last may be shorter); none if `k == 0`.
            #[doc = ""]
            #[doc = "```no_run"]
            #[doc = "# fn demo(gpu: &sluice_host::Gpu) -> sluice_host::Result<()> {"]
            #[doc = "let mut m = gpu.alloc_matrix::<f32>(4, 6)?;"]
            #[doc = concat!("let c = m.", $make, "();")]
            #[doc = "assert_eq!(c.column_chunks(4).map(|r| r.cols()).collect::<Vec<_>>(), [4, 2]);"]
            #[doc = "# Ok(()) }"]
            #[doc = "```"]
            pub fn column_chunks(self, k: usize) -> concat_idents_chunks!($name, 'a, T) {
                <concat_idents_chunks!($name, 'a, T)>::new(self.span, k)
            }
        }

        impl<T> std::fmt::Debug for $name<'_, T> {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.debug_struct(stringify!($name))
                    .field("rows", &self.span.rows)
                    .field("cols", &self.span.cols)
                    .field("ld", &self.span.ld)
                    .finish()
            }
        }
    };
}

macro_rules! concat_idents_chunks {
    (ColumnsMut, $a:lifetime, $t:ident) => { ColumnChunksMut<$a, $t> };
    (ColumnsRef, $a:lifetime, $t:ident) => { ColumnChunks<$a, $t> };
}

/// Exclusive access to a range of whole columns of a [`DeviceMatrix`] (or, handed on
/// through a fence, to rows of one column), not yet bound to a lane: the device's
/// `&'a mut [T]`.
///
/// It carries no pending work: it comes from the matrix, or from a fence that was awaited
/// by the host ([`Fenced::wait`](crate::Fenced::wait)). To use it, bind it to a lane with
/// [`Stream::bind`](crate::Stream::bind).
///
/// ```
/// # fn demo(gpu: &sluice_host::Gpu) -> sluice_host::Result<()> {
/// let mut m = gpu.alloc_matrix::<f32>(8, 6)?;
/// let all = m.as_columns_mut();
/// let (a, b) = all.split_columns(2).unwrap();
/// assert_eq!((a.cols(), b.cols()), (2, 4));
/// let pairs: Vec<_> = b.column_chunks(2).collect();
/// assert_eq!(pairs.len(), 2);
/// # Ok(()) }
/// ```
///
/// # Rule 2
///
/// Two mutable borrows of the same column cannot coexist:
///
/// ```compile_fail,E0499
/// # fn demo(gpu: &sluice_host::Gpu) -> sluice_host::Result<()> {
/// let mut m = gpu.alloc_matrix::<f32>(8, 2)?;
/// let a = m.column_mut(0).unwrap();
/// let b = m.column_mut(0).unwrap(); // error[E0499]: `m` is already borrowed mutably by `a`
/// # drop((a, b)); Ok(()) }
/// ```
///
/// Split instead: the halves are disjoint by construction.
///
/// ```no_run
/// # fn demo(gpu: &sluice_host::Gpu) -> sluice_host::Result<()> {
/// let mut m = gpu.alloc_matrix::<f32>(8, 2)?;
/// let (a, b) = m.split_columns_mut(1).unwrap();
/// # drop((a, b)); Ok(()) }
/// ```
pub struct ColumnsMut<'a, T> {
    span: Span,
    /// Exclusive, covariant borrow of the elements, as `&'a mut [T]`.
    _borrow: PhantomData<&'a mut [T]>,
}

/// Shared access to a range of whole columns of a [`DeviceMatrix`], not bound to a lane:
/// the device's `&'a [T]`. `Copy`; many lanes may read it.
///
/// ```
/// # fn demo(gpu: &sluice_host::Gpu) -> sluice_host::Result<()> {
/// let m = gpu.alloc_matrix::<f32>(8, 3)?;
/// let c = m.column(1).unwrap();
/// let again = c; // Copy
/// assert_eq!(c.rows() + again.rows(), 16);
/// # Ok(()) }
/// ```
pub struct ColumnsRef<'a, T> {
    span: Span,
    /// Shared, covariant borrow of the elements, as `&'a [T]`.
    _borrow: PhantomData<&'a [T]>,
}

impl<T> Clone for ColumnsRef<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for ColumnsRef<'_, T> {}

columns_common!(ColumnsMut, "as_columns_mut");
columns_common!(ColumnsRef, "as_columns");

impl<'a, T> ColumnsMut<'a, T> {
    /// Gives up write access: the same columns, read-only.
    ///
    /// ```no_run
    /// # fn demo(gpu: &sluice_host::Gpu) -> sluice_host::Result<()> {
    /// let mut m = gpu.alloc_matrix::<f32>(4, 6)?;
    /// let read_only = m.as_columns_mut().into_ref();
    /// let copy = read_only; // ColumnsRef is Copy
    /// assert_eq!(copy.len(), read_only.len());
    /// # Ok(()) }
    /// ```
    pub fn into_ref(self) -> ColumnsRef<'a, T> {
        ColumnsRef::new(self.span)
    }
}

impl<'a, T> From<ColumnsMut<'a, T>> for ColumnsRef<'a, T> {
    fn from(c: ColumnsMut<'a, T>) -> Self {
        c.into_ref()
    }
}

macro_rules! chunks_iter {
    ($(#[$doc:meta])* $name:ident, $item:ident) => {
        $(#[$doc])*
        pub struct $name<'a, T> {
            rest: Span,
            k: usize,
            _borrow: PhantomData<$item<'a, T>>,
        }

        impl<'a, T> $name<'a, T> {
            fn new(rest: Span, k: usize) -> Self {
                $name { rest, k, _borrow: PhantomData }
            }
        }

        impl<'a, T> Iterator for $name<'a, T> {
            type Item = $item<'a, T>;
            fn next(&mut self) -> Option<Self::Item> {
                self.rest.take_front(self.k).map($item::new)
            }
            fn size_hint(&self) -> (usize, Option<usize>) {
                let n = if self.k == 0 { 0 } else { self.rest.cols.div_ceil(self.k) };
                (n, Some(n))
            }
        }

        impl<T> ExactSizeIterator for $name<'_, T> {}

        impl<T> DoubleEndedIterator for $name<'_, T> {
            fn next_back(&mut self) -> Option<Self::Item> {
                self.rest.take_back(self.k).map($item::new)
            }
        }

        impl<T> std::fmt::Debug for $name<'_, T> {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.debug_struct(stringify!($name)).field("cols_left", &self.rest.cols).field("k", &self.k).finish()
            }
        }
    };
}

chunks_iter!(
    /// Disjoint mutable runs of columns, from [`DeviceMatrix::columns_mut`] and
    /// [`DeviceMatrix::column_chunks_mut`]; like `<[T]>::chunks_mut`.
    ///
    /// ```
    /// # fn demo(gpu: &sluice_host::Gpu) -> sluice_host::Result<()> {
    /// let mut m = gpu.alloc_matrix::<f32>(4, 5)?;
    /// let widths: Vec<usize> = m.column_chunks_mut(2).map(|c| c.cols()).collect();
    /// assert_eq!(widths, [2, 2, 1]);
    /// # Ok(()) }
    /// ```
    ColumnChunksMut,
    ColumnsMut
);
chunks_iter!(
    /// Read-only runs of columns, from [`DeviceMatrix::columns`]; like `<[T]>::chunks`.
    ///
    /// ```
    /// # fn demo(gpu: &sluice_host::Gpu) -> sluice_host::Result<()> {
    /// let m = gpu.alloc_matrix::<f32>(4, 3)?;
    /// assert_eq!(m.columns().len(), 3);
    /// # Ok(()) }
    /// ```
    ColumnChunks,
    ColumnsRef
);

/// A column-major matrix in page-locked ("pinned") host memory: `Vec<T>` that the GPU's
/// copy engines can reach directly. Derefs to `[T]`; freed on drop.
///
/// Device-to-host copies need a pinned destination: from pageable memory an "async"
/// copy is staged and synchronous, and the lanes would stop overlapping. The memory is
/// zeroed when allocated. Unlike [`DeviceMatrix`] it has no padding (`ld == rows`).
///
/// # Cost
///
/// Allocating and freeing pinned memory (`cuMemHostAlloc`, `cuMemFreeHost`) are slow driver
/// calls that page-lock (or unlock) and map host memory, and the driver may serialize them
/// with the device: freeing in particular can wait for work running on any stream, like a
/// device-wide synchronization. There is no stream-ordered form, so this is the one place
/// where sluice cannot keep rule 6 by itself. Allocate pinned matrices once, outside the
/// hot path — before a loop of scopes, not in every scope — and reuse them:
/// [`Gpu::pinned_matrix`] outside scopes, passed into each scope by `&mut`, dropped when
/// no lane is running.
///
/// ```no_run
/// # fn demo(gpu: &sluice_host::Gpu) -> sluice_host::Result<()> {
/// let mut host = gpu.pinned_matrix::<f32>(1024, 8)?;
/// host[0] = 1.0;                       // a plain slice on the host
/// for dst in host.columns_mut() {      // one PinnedMut per column: copy destinations
///     assert_eq!(dst.len(), 1024);
/// }
/// assert_eq!(host.column(0).unwrap()[0], 1.0);
/// # Ok(()) }
/// ```
pub struct PinnedMatrix<T> {
    gpu: Gpu,
    ptr: NonNull<T>,
    rows: usize,
    cols: usize,
}

// SAFETY: a PinnedMatrix owns its elements as `Vec<T>` does; the raw pointer is only an
// address of memory no one else references.
unsafe impl<T: Send> Send for PinnedMatrix<T> {}
// SAFETY: as for `Send`: `&PinnedMatrix` only gives `&[T]`.
unsafe impl<T: Sync> Sync for PinnedMatrix<T> {}

impl<T: Pod> PinnedMatrix<T> {
    pub(crate) fn alloc(gpu: &Gpu, rows: usize, cols: usize) -> Result<PinnedMatrix<T>> {
        let bytes = matrix_bytes::<T>(rows, cols, rows)?;
        // SAFETY: the context is retained while `gpu` lives.
        let raw = unsafe { driver::mem::host_alloc(gpu.ctx(), bytes) }.map_err(|error| Error::Alloc { bytes, error })?;
        let Some(ptr) = NonNull::new(raw.0.cast::<T>()) else {
            return Err(Error::Alloc { bytes, error: crate::DriverError::from_code(2) });
        };
        if let Err(e) = check_aligned::<T>(ptr.as_ptr() as u64) {
            // SAFETY: just allocated by `host_alloc` in this context, never handed out.
            return Err(match unsafe { driver::mem::host_free(gpu.ctx(), raw) } {
                Ok(()) => e,
                Err(error) => e.also(Error::Free { what: "pinned memory", error }),
            });
        }
        // SAFETY: the driver returned `bytes` writable bytes at `ptr`, aligned for `T`
        // (checked above); zeroing them makes every element a valid `T` (T: Pod).
        unsafe { std::ptr::write_bytes(ptr.as_ptr().cast::<u8>(), 0, bytes) };
        Ok(PinnedMatrix { gpu: gpu.clone(), ptr, rows, cols })
    }
}

impl<T> PinnedMatrix<T> {
    /// Rows.
    ///
    /// ```no_run
    /// # fn demo(gpu: &sluice_host::Gpu) -> sluice_host::Result<()> {
    /// let h = gpu.pinned_matrix::<f32>(4, 2)?;
    /// assert_eq!(h.rows(), 4);
    /// # Ok(()) }
    /// ```
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Columns.
    ///
    /// ```no_run
    /// # fn demo(gpu: &sluice_host::Gpu) -> sluice_host::Result<()> {
    /// let h = gpu.pinned_matrix::<f32>(4, 2)?;
    /// assert_eq!(h.cols(), 2);
    /// # Ok(()) }
    /// ```
    pub fn cols(&self) -> usize {
        self.cols
    }

    /// Column `j` as a slice; `None` if `j >= cols`.
    ///
    /// ```no_run
    /// # fn demo(gpu: &sluice_host::Gpu) -> sluice_host::Result<()> {
    /// let h = gpu.pinned_matrix::<f32>(4, 2)?;
    /// assert_eq!(h.column(1).unwrap(), &[0.0; 4]);
    /// # Ok(()) }
    /// ```
    pub fn column(&self, j: usize) -> Option<&[T]> {
        (j < self.cols).then(|| &self[j * self.rows..(j + 1) * self.rows])
    }

    /// The whole matrix as one copy destination.
    ///
    /// ```no_run
    /// # fn demo(gpu: &sluice_host::Gpu) -> sluice_host::Result<()> {
    /// let mut h = gpu.pinned_matrix::<f32>(4, 2)?;
    /// assert_eq!(h.as_pinned_mut().len(), 8);
    /// # Ok(()) }
    /// ```
    pub fn as_pinned_mut(&mut self) -> PinnedMut<'_, T> {
        PinnedMut::new(self.ptr, self.rows * self.cols)
    }

    /// Column `j` as a copy destination; `None` if `j >= cols`.
    ///
    /// ```no_run
    /// # fn demo(gpu: &sluice_host::Gpu) -> sluice_host::Result<()> {
    /// let mut h = gpu.pinned_matrix::<f32>(4, 2)?;
    /// h.column_mut(1).unwrap()[0] = 5.0;
    /// assert_eq!(h[4], 5.0);
    /// # Ok(()) }
    /// ```
    pub fn column_mut(&mut self, j: usize) -> Option<PinnedMut<'_, T>> {
        self.column_range_mut(j..j.checked_add(1)?)
    }

    /// A range of columns as one copy destination; `None` if out of bounds.
    ///
    /// ```no_run
    /// # fn demo(gpu: &sluice_host::Gpu) -> sluice_host::Result<()> {
    /// let mut h = gpu.pinned_matrix::<f32>(4, 6)?;
    /// assert_eq!(h.column_range_mut(2..).unwrap().len(), 16);
    /// # Ok(()) }
    /// ```
    pub fn column_range_mut(&mut self, range: impl RangeBounds<usize>) -> Option<PinnedMut<'_, T>> {
        let rows = self.rows;
        self.as_pinned_mut().column_range(rows, range)
    }

    /// Columns `[0, at)` and `[at, cols)` as two destinations; `None` if `at > cols`.
    ///
    /// ```no_run
    /// # fn demo(gpu: &sluice_host::Gpu) -> sluice_host::Result<()> {
    /// let mut h = gpu.pinned_matrix::<f32>(4, 6)?;
    /// let (a, b) = h.split_columns_mut(2).unwrap();
    /// assert_eq!((a.len(), b.len()), (8, 16));
    /// # Ok(()) }
    /// ```
    pub fn split_columns_mut(&mut self, at: usize) -> Option<(PinnedMut<'_, T>, PinnedMut<'_, T>)> {
        let rows = self.rows;
        self.as_pinned_mut().split_at(at.checked_mul(rows)?)
    }

    /// Every column as its own destination, in order.
    ///
    /// ```no_run
    /// # fn demo(gpu: &sluice_host::Gpu) -> sluice_host::Result<()> {
    /// let mut h = gpu.pinned_matrix::<f32>(4, 6)?;
    /// assert_eq!(h.columns_mut().len(), 6);
    /// # Ok(()) }
    /// ```
    pub fn columns_mut(&mut self) -> PinnedChunksMut<'_, T> {
        self.column_chunks_mut(1)
    }

    /// Runs of `k` columns as destinations (the last may be shorter); none if `k == 0`.
    ///
    /// ```no_run
    /// # fn demo(gpu: &sluice_host::Gpu) -> sluice_host::Result<()> {
    /// let mut h = gpu.pinned_matrix::<f32>(4, 6)?;
    /// assert_eq!(h.column_chunks_mut(4).map(|c| c.len()).collect::<Vec<_>>(), [16, 8]);
    /// # Ok(()) }
    /// ```
    pub fn column_chunks_mut(&mut self, k: usize) -> PinnedChunksMut<'_, T> {
        let chunk = if k == 0 { 0 } else { k.saturating_mul(self.rows) };
        PinnedChunksMut { rest: Some(self.as_pinned_mut()), chunk }
    }

    /// Frees the memory now, returning a driver error instead of printing it as `drop` does.
    ///
    /// ```no_run
    /// # fn demo(gpu: &sluice_host::Gpu) -> sluice_host::Result<()> {
    /// let h = gpu.pinned_matrix::<f32>(4, 6)?;
    /// h.free()?;
    /// # Ok(()) }
    /// ```
    pub fn free(self) -> Result<()> {
        let this = std::mem::ManuallyDrop::new(self);
        // SAFETY: allocated by `host_alloc` in this context, freed once (the matrix is
        // consumed); no copy can use it: copies borrow it for their scope, which joined.
        let r = unsafe { driver::mem::host_free(this.gpu.ctx(), RawHostPtr(this.ptr.as_ptr().cast())) }
            .map_err(|error| Error::Free { what: "pinned memory", error });
        // SAFETY: `this` is never used again; only the `Gpu` handle still needs dropping.
        drop(unsafe { std::ptr::read(&this.gpu) });
        r
    }
}

impl<T> Deref for PinnedMatrix<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        // SAFETY: `ptr` holds rows * cols initialised elements (zeroed at allocation) that
        // live as long as `self`; no copy writes them while `&self` exists, since copies
        // take a borrow of the matrix that lasts until their scope joins.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.rows * self.cols) }
    }
}

impl<T> DerefMut for PinnedMatrix<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        // SAFETY: as in `deref`, and `&mut self` is exclusive.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.rows * self.cols) }
    }
}

impl<T> Drop for PinnedMatrix<T> {
    fn drop(&mut self) {
        // SAFETY: as in `free`.
        if let Err(error) = unsafe { driver::mem::host_free(self.gpu.ctx(), RawHostPtr(self.ptr.as_ptr().cast())) } {
            crate::error::report_dropped("dropping a PinnedMatrix", &Error::Free { what: "pinned memory", error });
        }
    }
}

impl<T> std::fmt::Debug for PinnedMatrix<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PinnedMatrix").field("rows", &self.rows).field("cols", &self.cols).finish()
    }
}

/// Exclusive access to a contiguous run of a [`PinnedMatrix`]: the destination of a
/// device-to-host copy. The pinned `&'a mut [T]`; derefs to `[T]`.
///
/// A copy consumes it and hands back a [`Pending`](crate::Pending); only the pending
/// copy's `wait` gives it back (rule 4).
///
/// ```no_run
/// # fn demo(gpu: &sluice_host::Gpu) -> sluice_host::Result<()> {
/// let mut host = gpu.pinned_matrix::<u32>(4, 2)?;
/// let mut col = host.column_mut(1).unwrap();
/// col[0] = 7;
/// assert_eq!(host.column(1).unwrap()[0], 7);
/// # Ok(()) }
/// ```
pub struct PinnedMut<'a, T> {
    // A raw pointer, not `&'a mut [T]`: while a copy is pending the DMA engine writes
    // these bytes, and a live `&mut` moved around meanwhile would assert exclusive access
    // to memory being written by someone else.
    ptr: NonNull<T>,
    len: usize,
    /// Exclusive, covariant borrow of the elements, as `&'a mut [T]`.
    _borrow: PhantomData<&'a mut [T]>,
}

// SAFETY: behaves as `&'a mut [T]`, which is Send when T is.
unsafe impl<T: Send> Send for PinnedMut<'_, T> {}
// SAFETY: behaves as `&'a mut [T]`, which is Sync when T is.
unsafe impl<T: Sync> Sync for PinnedMut<'_, T> {}

impl<'a, T> PinnedMut<'a, T> {
    fn new(ptr: NonNull<T>, len: usize) -> Self {
        PinnedMut { ptr, len, _borrow: PhantomData }
    }

    pub(crate) fn raw(&self) -> (NonNull<T>, usize) {
        (self.ptr, self.len)
    }

    /// Elements `[0, mid)` and `[mid, len)`; `None` if `mid > len`.
    ///
    /// ```no_run
    /// # fn demo(gpu: &sluice_host::Gpu) -> sluice_host::Result<()> {
    /// let mut h = gpu.pinned_buffer::<u8>(10)?;
    /// let (a, b) = h.as_pinned_mut().split_at(3).unwrap();
    /// assert_eq!((a.len(), b.len()), (3, 7));
    /// # Ok(()) }
    /// ```
    pub fn split_at(self, mid: usize) -> Option<(PinnedMut<'a, T>, PinnedMut<'a, T>)> {
        if mid > self.len {
            return None;
        }
        // SAFETY: mid <= len, so the offset stays inside (or one past) the allocation.
        let right = unsafe { NonNull::new_unchecked(self.ptr.as_ptr().add(mid)) };
        Some((PinnedMut::new(self.ptr, mid), PinnedMut::new(right, self.len - mid)))
    }

    fn column_range(self, rows: usize, range: impl RangeBounds<usize>) -> Option<PinnedMut<'a, T>> {
        let cols = self.len.checked_div(rows).unwrap_or(0);
        let start = match range.start_bound() {
            Bound::Included(&s) => s,
            Bound::Excluded(&s) => s.checked_add(1)?,
            Bound::Unbounded => 0,
        };
        let end = match range.end_bound() {
            Bound::Included(&e) => e.checked_add(1)?,
            Bound::Excluded(&e) => e,
            Bound::Unbounded => cols,
        };
        if start > end || end > cols {
            return None;
        }
        let (_, rest) = self.split_at(start * rows)?;
        let (mid, _) = rest.split_at((end - start) * rows)?;
        Some(mid)
    }

    /// The elements as a plain slice, for the rest of `'a`.
    ///
    /// ```no_run
    /// # fn demo(gpu: &sluice_host::Gpu) -> sluice_host::Result<()> {
    /// let mut h = gpu.pinned_buffer::<u8>(10)?;
    /// let s: &mut [u8] = h.as_pinned_mut().into_slice();
    /// s[0] = 1;
    /// # Ok(()) }
    /// ```
    pub fn into_slice(self) -> &'a mut [T] {
        // SAFETY: `ptr` holds `len` initialised elements borrowed exclusively for 'a, and
        // no copy is pending on them (a pending copy owns this value until it is awaited).
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

impl<T> Deref for PinnedMut<'_, T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        // SAFETY: as in `into_slice`.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl<T> DerefMut for PinnedMut<'_, T> {
    fn deref_mut(&mut self) -> &mut [T] {
        // SAFETY: as in `into_slice`.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

impl<T> std::fmt::Debug for PinnedMut<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PinnedMut").field("len", &self.len).finish()
    }
}

/// Disjoint runs of columns of a [`PinnedMatrix`], as copy destinations.
///
/// ```no_run
/// # fn demo(gpu: &sluice_host::Gpu) -> sluice_host::Result<()> {
/// let mut host = gpu.pinned_matrix::<f32>(4, 3)?;
/// assert_eq!(host.columns_mut().count(), 3);
/// # Ok(()) }
/// ```
pub struct PinnedChunksMut<'a, T> {
    rest: Option<PinnedMut<'a, T>>,
    /// Elements per chunk (0: none).
    chunk: usize,
}

impl<'a, T> Iterator for PinnedChunksMut<'a, T> {
    type Item = PinnedMut<'a, T>;
    fn next(&mut self) -> Option<Self::Item> {
        let rest = self.rest.take()?;
        if self.chunk == 0 || rest.len == 0 {
            return None;
        }
        let at = self.chunk.min(rest.len);
        let (head, tail) = rest.split_at(at)?;
        self.rest = Some(tail);
        Some(head)
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = match &self.rest {
            Some(r) if self.chunk > 0 => r.len.div_ceil(self.chunk),
            _ => 0,
        };
        (n, Some(n))
    }
}

impl<T> ExactSizeIterator for PinnedChunksMut<'_, T> {}

impl<T> std::fmt::Debug for PinnedChunksMut<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PinnedChunksMut").field("chunk", &self.chunk).finish()
    }
}

impl Gpu {
    /// An owned `rows` x `cols` device matrix (`ld == rows`), freed on drop.
    ///
    /// Allocation is stream-ordered and waits only for this `Gpu`'s internal allocator
    /// stream, never for a lane or the device (see [`DeviceMatrix`]).
    ///
    /// # Errors
    /// [`Error::ZeroSized`], [`Error::TooLarge`], [`Error::OverAligned`] (an element type
    /// aligned to more than 256 bytes), [`Error::OutOfMemory`] (with the free memory, after
    /// returning the pool's unused memory to the driver and trying again), or
    /// [`Error::Alloc`].
    ///
    /// ```no_run
    /// # fn demo(gpu: &sluice_host::Gpu) -> sluice_host::Result<()> {
    /// let m = gpu.alloc_matrix::<f32>(1 << 20, 8)?;
    /// assert_eq!(m.len(), 8 << 20);
    /// # Ok(()) }
    /// ```
    pub fn alloc_matrix<T: Pod>(&self, rows: usize, cols: usize) -> Result<DeviceMatrix<T>> {
        DeviceMatrix::alloc(self, rows, cols, rows)
    }

    /// As [`alloc_matrix`](Gpu::alloc_matrix) with a leading dimension `ld >= rows`
    /// (columns start `ld` elements apart, e.g. to align them).
    ///
    /// ```no_run
    /// # fn demo(gpu: &sluice_host::Gpu) -> sluice_host::Result<()> {
    /// let m = gpu.alloc_matrix_padded::<f32>(1000, 4, 1024)?;
    /// assert_eq!(m.ld(), 1024);
    /// # Ok(()) }
    /// ```
    pub fn alloc_matrix_padded<T: Pod>(&self, rows: usize, cols: usize, ld: usize) -> Result<DeviceMatrix<T>> {
        DeviceMatrix::alloc(self, rows, cols, ld)
    }

    /// An owned device buffer of `len` elements: a one-column matrix.
    ///
    /// ```no_run
    /// # fn demo(gpu: &sluice_host::Gpu) -> sluice_host::Result<()> {
    /// let b = gpu.alloc_buffer::<u32>(4096)?;
    /// assert_eq!((b.rows(), b.cols()), (4096, 1));
    /// # Ok(()) }
    /// ```
    pub fn alloc_buffer<T: Pod>(&self, len: usize) -> Result<DeviceMatrix<T>> {
        DeviceMatrix::alloc(self, len, 1, len)
    }

    /// An owned, zeroed, page-locked host matrix, freed on drop.
    ///
    /// Pinned allocations are slow and may serialize the device: make them outside the hot
    /// path and reuse them (see [`PinnedMatrix`'s costs](PinnedMatrix#cost)).
    ///
    /// # Errors
    /// [`Error::ZeroSized`], [`Error::TooLarge`], [`Error::OverAligned`], [`Error::Alloc`].
    ///
    /// ```no_run
    /// # fn demo(gpu: &sluice_host::Gpu) -> sluice_host::Result<()> {
    /// let h = gpu.pinned_matrix::<f64>(256, 4)?;
    /// assert!(h.iter().all(|x| *x == 0.0));
    /// # Ok(()) }
    /// ```
    pub fn pinned_matrix<T: Pod>(&self, rows: usize, cols: usize) -> Result<PinnedMatrix<T>> {
        PinnedMatrix::alloc(self, rows, cols)
    }

    /// An owned, zeroed, page-locked host buffer of `len` elements (one column).
    ///
    /// ```no_run
    /// # fn demo(gpu: &sluice_host::Gpu) -> sluice_host::Result<()> {
    /// let mut h = gpu.pinned_buffer::<f32>(16)?;
    /// h.copy_from_slice(&[1.0; 16]);
    /// # Ok(()) }
    /// ```
    pub fn pinned_buffer<T: Pod>(&self, len: usize) -> Result<PinnedMatrix<T>> {
        PinnedMatrix::alloc(self, len, 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn span(rows: usize, cols: usize, ld: usize) -> Span {
        Span { ptr: 0x1000, rows, cols, ld, elem_size: 4, alloc: 1, ctx: 0, whole_columns: true }
    }

    #[test]
    fn splitting_gives_disjoint_adjacent_ranges() {
        let s = span(10, 5, 16);
        let (a, b) = s.split_at(2).unwrap();
        assert_eq!((a.cols, b.cols), (2, 3));
        assert_eq!(b.ptr, 0x1000 + 2 * 16 * 4);
        assert_eq!(a.join(b), Some(s));
        assert_eq!(b.join(a), None);
        assert!(s.split_at(6).is_none());
    }

    #[test]
    fn flat_len_covers_padding_between_columns_only() {
        assert_eq!(span(10, 3, 16).flat_len(), 2 * 16 + 10);
        assert_eq!(span(10, 1, 16).flat_len(), 10);
        assert_eq!(span(10, 0, 16).flat_len(), 0);
        assert!(span(10, 3, 10).is_contiguous());
        assert!(!span(10, 3, 16).is_contiguous());
    }

    #[test]
    fn ranges_and_chunks() {
        let s = span(4, 7, 4);
        assert_eq!(s.range(2..5).unwrap().cols, 3);
        assert_eq!(s.range(..).unwrap(), s);
        assert!(s.range(3..9).is_none());
        let mut rest = s;
        let widths: Vec<_> = std::iter::from_fn(|| rest.take_front(3)).map(|c| c.cols).collect();
        assert_eq!(widths, [3, 3, 1]);
        let mut rest = s;
        let back: Vec<_> = std::iter::from_fn(|| rest.take_back(3)).map(|c| c.cols).collect();
        assert_eq!(back, [1, 3, 3]);
        let mut rest = s;
        assert!(rest.take_front(0).is_none());
    }

    #[test]
    fn zero_sized_and_overflowing_shapes_are_typed_errors() {
        assert_eq!(matrix_bytes::<f32>(0, 4, 0), Err(Error::ZeroSized));
        assert_eq!(matrix_bytes::<f32>(4, 0, 4), Err(Error::ZeroSized));
        assert!(matches!(matrix_bytes::<f32>(usize::MAX, 2, usize::MAX), Err(Error::TooLarge { .. })));
        assert_eq!(matrix_bytes::<f32>(4, 2, 8), Ok(64));
    }

    #[test]
    fn only_whole_columns_join() {
        let s = span(10, 4, 16);
        let (a, b) = s.split_at(1).unwrap();
        assert_eq!(a.join(b), Some(s));
        // The same addresses, but `b` a row range (one column, all of whose rows are not
        // owned by it): refused on either side, or a kernel would get rows other views own.
        let rows = |x: Span| Span { whole_columns: false, ..x };
        let (a1, b1) = (rows(a), b.range(..1).map(rows).unwrap());
        assert_eq!(a1.join(b.range(..1).unwrap()), None);
        assert_eq!(a.join(b1), None);
        assert_eq!(a1.join(b1), None);
        // Splits keep the flag.
        assert!(!rows(s).split_at(2).unwrap().1.whole_columns);
        assert!(s.range(1..3).unwrap().whole_columns);
    }

    #[test]
    fn over_aligned_elements_are_refused_before_allocating() {
        #[derive(Clone, Copy)]
        #[repr(C, align(8192))]
        struct Page([u8; 8192]);
        #[derive(Clone, Copy)]
        #[repr(C, align(256))]
        struct Line([u8; 256]);
        assert_eq!(matrix_bytes::<Page>(4, 2, 4), Err(Error::OverAligned { align: 8192, max: ALLOC_ALIGN }));
        assert_eq!(matrix_bytes::<Line>(4, 2, 4), Ok(4 * 2 * 256));
        assert_eq!(matrix_bytes::<u64>(4, 2, 4), Ok(64));
        // The address check after allocating: a misaligned address is an error, not UB.
        assert_eq!(check_aligned::<Line>(0x7f00_0000_0100), Ok(()));
        assert_eq!(check_aligned::<Line>(0x7f00_0000_0080), Err(Error::OverAligned { align: 256, max: 128 }));
        assert_eq!(check_aligned::<u8>(0x7f00_0000_0001), Ok(()));
    }

    #[test]
    fn borrows_are_send_and_sync() {
        fn assert<T: Send + Sync>() {}
        assert::<ColumnsMut<'static, f32>>();
        assert::<ColumnsRef<'static, f32>>();
        assert::<PinnedMut<'static, f32>>();
        assert::<PinnedMatrix<f32>>();
        assert::<DeviceMatrix<f32>>();
    }
}
