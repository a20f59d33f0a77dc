//! Device matrices and their disjoint column borrows (rule 2: no two lanes hold mutable
//! access to the same elements).
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
//! with its neighbours (the arithmetic is in [`span`](crate::span)).
//!
//! # Memory
//!
//! Device memory comes from the driver's stream-ordered allocator, through the
//! [`Gpu`]'s allocator stream (see [`Gpu::trim_memory_pool`]): allocating waits for that
//! internal stream only, and freeing enqueues the free there without waiting at all, so
//! neither synchronizes the device (rule 6) nor waits for any lane.

use std::ffi::c_void;
use std::marker::PhantomData;
use std::ops::RangeBounds;

use bytemuck::Pod;

use crate::device::Gpu;
use crate::driver::mem::Direction;
use crate::error::{Error, Result};
use crate::span::{check_aligned, chunks_iter, matrix_bytes, span_accessors, Span};

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
/// lanes ([rule 5](crate#safety-model)).
///
/// ```
/// # use sluice_host as sluice;
/// # fn demo(gpu: &sluice::Gpu) -> sluice::Result<()> {
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
/// # use sluice_host as sluice;
/// # fn demo(gpu: &sluice::Gpu) -> sluice::Result<()> {
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
/// # use sluice_host as sluice;
/// # fn demo(gpu: &sluice::Gpu) -> sluice::Result<()> {
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
/// # use sluice_host as sluice;
/// # fn demo(gpu: &sluice::Gpu) -> sluice::Result<()> {
/// let mut m = gpu.alloc_buffer::<f32>(256)?;
/// sluice::scope(gpu, |s| {
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
/// # use sluice_host as sluice;
/// # fn demo(gpu: &sluice::Gpu) -> sluice::Result<()> {
/// let mut m = gpu.alloc_buffer::<f32>(256)?;
/// sluice::scope(gpu, |s| {
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
        Self::alloc_with(gpu, rows, cols, ld, false)
    }

    /// A scope's matrix: memory an ended scope gave back, of exactly this size, if any
    /// ([`Gpu::alloc_device_for_scope`]); given back the same way ([`recycle`](Self::recycle)).
    pub(crate) fn alloc_for_scope(gpu: &Gpu, rows: usize, cols: usize, ld: usize) -> Result<DeviceMatrix<T>> {
        Self::alloc_with(gpu, rows, cols, ld, true)
    }

    fn alloc_with(gpu: &Gpu, rows: usize, cols: usize, ld: usize, scope: bool) -> Result<DeviceMatrix<T>> {
        let bytes = matrix_bytes::<T>(rows, cols, ld)?;
        let ptr = if scope { gpu.alloc_device_for_scope(bytes)? } else { gpu.alloc_device(bytes)? };
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
            ctx: gpu.ctx_id(),
            whole_columns: true,
        };
        Ok(DeviceMatrix { gpu: gpu.clone(), span, _elems: PhantomData })
    }

    /// Rows (elements per column).
    pub fn rows(&self) -> usize {
        self.span.rows
    }

    /// Columns.
    pub fn cols(&self) -> usize {
        self.span.cols
    }

    /// Leading dimension: elements from one column's start to the next's (`>= rows`).
    pub fn ld(&self) -> usize {
        self.span.ld
    }

    /// `rows * cols`.
    pub fn len(&self) -> usize {
        self.span.len()
    }

    /// Always false: zero-sized matrices cannot be allocated.
    pub fn is_empty(&self) -> bool {
        self.span.len() == 0
    }

    /// The whole matrix, mutably.
    ///
    /// ```no_run
    /// # use sluice_host as sluice;
    /// # fn demo(gpu: &sluice::Gpu) -> sluice::Result<()> {
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
    /// # use sluice_host as sluice;
    /// # fn demo(gpu: &sluice::Gpu) -> sluice::Result<()> {
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
    /// # use sluice_host as sluice;
    /// # fn demo(gpu: &sluice::Gpu) -> sluice::Result<()> {
    /// let mut m = gpu.alloc_matrix::<f32>(4, 2)?;
    /// assert!(m.column_mut(1).is_some() && m.column_mut(2).is_none());
    /// # Ok(()) }
    /// ```
    pub fn column_mut(&mut self, j: usize) -> Option<ColumnsMut<'_, T>> {
        self.span.column(j).map(ColumnsMut::new)
    }

    /// Column `j`, read-only; `None` if `j >= cols`.
    ///
    /// ```no_run
    /// # use sluice_host as sluice;
    /// # fn demo(gpu: &sluice::Gpu) -> sluice::Result<()> {
    /// let m = gpu.alloc_matrix::<f32>(4, 2)?;
    /// assert_eq!(m.column(0).unwrap().rows(), 4);
    /// # Ok(()) }
    /// ```
    pub fn column(&self, j: usize) -> Option<ColumnsRef<'_, T>> {
        self.span.column(j).map(ColumnsRef::new)
    }

    /// A range of columns, mutably; `None` if it is out of bounds.
    ///
    /// ```no_run
    /// # use sluice_host as sluice;
    /// # fn demo(gpu: &sluice::Gpu) -> sluice::Result<()> {
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
    /// # use sluice_host as sluice;
    /// # fn demo(gpu: &sluice::Gpu) -> sluice::Result<()> {
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
    /// # use sluice_host as sluice;
    /// # fn demo(gpu: &sluice::Gpu) -> sluice::Result<()> {
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
    /// # use sluice_host as sluice;
    /// # fn demo(gpu: &sluice::Gpu) -> sluice::Result<()> {
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
    /// # use sluice_host as sluice;
    /// # fn demo(gpu: &sluice::Gpu) -> sluice::Result<()> {
    /// let mut m = gpu.alloc_matrix::<f32>(4, 6)?;
    /// assert_eq!(m.column_chunks_mut(4).len(), 2);
    /// # Ok(()) }
    /// ```
    pub fn column_chunks_mut(&mut self, k: usize) -> ColumnChunksMut<'_, T> {
        self.as_columns_mut().column_chunks(k)
    }

    /// Frees the memory now, returning a driver error instead of recording it on the device
    /// as `drop` does ([`Gpu::take_errors`]).
    /// Like `drop`, it only enqueues the free (`cuMemFreeAsync`) and does not wait.
    ///
    /// ```no_run
    /// # use sluice_host as sluice;
    /// # fn demo(gpu: &sluice::Gpu) -> sluice::Result<()> {
    /// let m = gpu.alloc_matrix::<f32>(4, 6)?;
    /// m.free()?; // returns a driver error; `drop(m)` would record it on the device
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
    /// The device the matrix lives on.
    pub(crate) fn gpu(&self) -> &Gpu {
        &self.gpu
    }

    /// Gives the memory back to the device for a later scope's matrix of the same size (a
    /// scope's matrix, at the scope's end, after its joins), or frees it.
    pub(crate) fn recycle(self) -> Result<()> {
        let this = std::mem::ManuallyDrop::new(self);
        let s = this.span;
        // What `matrix_bytes` asked for when this matrix was allocated.
        let bytes = s.ld * s.cols * s.elem_size;
        // SAFETY: as in `release`: allocated on this `Gpu` (of `bytes`: `matrix_bytes` of this
        // shape), given back once (`this` is never used again), and no work can use it any more
        // (the scope that owned it has joined its lanes).
        let r = unsafe { this.gpu.recycle_device(s.ptr, bytes) }
            .map_err(|error| Error::Free { what: "device memory", error });
        // SAFETY: `this` is never used again and its memory was given back above: only the
        // `Gpu` handle still needs dropping.
        drop(unsafe { std::ptr::read(&this.gpu) });
        r
    }

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
            // `drop` cannot return it: record it on the device (`Gpu::take_errors`).
            self.gpu.record_error(e);
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

/// Exclusive access to a range of whole columns of a [`DeviceMatrix`] (or, handed on
/// through a fence, to rows of one column), not yet bound to a lane: the device's
/// `&'a mut [T]`.
///
/// It carries no pending work: it comes from the matrix, or from a fence that was awaited
/// by the host ([`Fenced::wait`](crate::Fenced::wait)). To use it, bind it to a lane with
/// [`Stream::bind`](crate::Stream::bind).
///
/// ```
/// # use sluice_host as sluice;
/// # fn demo(gpu: &sluice::Gpu) -> sluice::Result<()> {
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
/// # use sluice_host as sluice;
/// # fn demo(gpu: &sluice::Gpu) -> sluice::Result<()> {
/// let mut m = gpu.alloc_matrix::<f32>(8, 2)?;
/// let a = m.column_mut(0).unwrap();
/// let b = m.column_mut(0).unwrap(); // error[E0499]: `m` is already borrowed mutably by `a`
/// # drop((a, b)); Ok(()) }
/// ```
///
/// Split instead: the halves are disjoint by construction.
///
/// ```no_run
/// # use sluice_host as sluice;
/// # fn demo(gpu: &sluice::Gpu) -> sluice::Result<()> {
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
/// # use sluice_host as sluice;
/// # fn demo(gpu: &sluice::Gpu) -> sluice::Result<()> {
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

span_accessors!(ColumnsMut<'a>, ColumnChunksMut<'a, T>);
span_accessors!(ColumnsRef<'a>, ColumnChunks<'a, T>);

impl<T> ColumnsMut<'_, T> {
    pub(crate) fn new(span: Span) -> Self {
        ColumnsMut { span, _borrow: PhantomData }
    }
}

impl<T> ColumnsRef<'_, T> {
    pub(crate) fn new(span: Span) -> Self {
        ColumnsRef { span, _borrow: PhantomData }
    }
}

impl<'a, T> ColumnsMut<'a, T> {
    /// Gives up write access: the same columns, read-only.
    ///
    /// ```no_run
    /// # use sluice_host as sluice;
    /// # fn demo(gpu: &sluice::Gpu) -> sluice::Result<()> {
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

chunks_iter!(
    /// Disjoint mutable runs of columns, from [`DeviceMatrix::columns_mut`] and
    /// [`DeviceMatrix::column_chunks_mut`]; like `<[T]>::chunks_mut`.
    ///
    /// ```
    /// # use sluice_host as sluice;
    /// # fn demo(gpu: &sluice::Gpu) -> sluice::Result<()> {
    /// let mut m = gpu.alloc_matrix::<f32>(4, 5)?;
    /// let widths: Vec<usize> = m.column_chunks_mut(2).map(|c| c.cols()).collect();
    /// assert_eq!(widths, [2, 2, 1]);
    /// # Ok(()) }
    /// ```
    pub ColumnChunksMut<'a> => ColumnsMut
);
chunks_iter!(
    /// Read-only runs of columns, from [`DeviceMatrix::columns`]; like `<[T]>::chunks`.
    ///
    /// ```
    /// # use sluice_host as sluice;
    /// # fn demo(gpu: &sluice::Gpu) -> sluice::Result<()> {
    /// let m = gpu.alloc_matrix::<f32>(4, 3)?;
    /// assert_eq!(m.columns().len(), 3);
    /// # Ok(()) }
    /// ```
    pub ColumnChunks<'a> => ColumnsRef
);

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
    /// # use sluice_host as sluice;
    /// # fn demo(gpu: &sluice::Gpu) -> sluice::Result<()> {
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
    /// # use sluice_host as sluice;
    /// # fn demo(gpu: &sluice::Gpu) -> sluice::Result<()> {
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
    /// # use sluice_host as sluice;
    /// # fn demo(gpu: &sluice::Gpu) -> sluice::Result<()> {
    /// let b = gpu.alloc_buffer::<u32>(4096)?;
    /// assert_eq!((b.rows(), b.cols()), (4096, 1));
    /// # Ok(()) }
    /// ```
    pub fn alloc_buffer<T: Pod>(&self, len: usize) -> Result<DeviceMatrix<T>> {
        DeviceMatrix::alloc(self, len, 1, len)
    }

    /// Puts `data` on the device, outside any scope: an owned one-column matrix that every
    /// later scope can read with [`Stream::bind_ref`](crate::Stream::bind_ref) — no upload
    /// per scope and no wait — for as long as it lives. Persistent inputs of a loop of
    /// scopes (a time-stepping simulation) are uploaded once this way.
    ///
    /// Blocks until the copy is done. It runs on a stream of its own (one of the device's
    /// idle streams) and waits for that stream only, never for a lane or the device. Pinned
    /// `data` ([`PinnedMatrix`](crate::PinnedMatrix) derefs to a slice) copies at full speed;
    /// pageable data is staged by the driver. To overlap the upload with other work, see
    /// [`Gpu::upload_async`].
    ///
    /// # Errors
    /// [`Error::ZeroSized`], allocation errors, [`Error::Copy`] / [`Error::Stream`].
    ///
    /// ```no_run
    /// # use sluice_host as sluice;
    /// # fn demo(gpu: &sluice::Gpu, sources: &[[f32; 4]]) -> sluice::Result<()> {
    /// let sources = gpu.upload(sources)?;               // once
    /// for _step in 0..1000 {
    ///     sluice::scope(gpu, |s| {
    ///         s.lane()?.enter(|st| {
    ///             let src = st.bind_ref(sources.as_columns());  // no upload, no wait
    ///             # let _ = src;
    ///             Ok(())
    ///         })
    ///     })?;
    /// }
    /// # Ok(()) }
    /// ```
    pub fn upload<T: Pod>(&self, data: &[T]) -> Result<DeviceMatrix<T>> {
        self.upload_matrix(data, data.len(), 1)
    }

    /// As [`upload`](Gpu::upload), as a `rows` x `cols` column-major matrix (`data.len()`
    /// must be `rows * cols`).
    ///
    /// ```no_run
    /// # use sluice_host as sluice;
    /// # fn demo(gpu: &sluice::Gpu, targets: &[f32]) -> sluice::Result<()> {
    /// let t = gpu.upload_matrix(targets, 1024, 8)?;
    /// assert_eq!((t.rows(), t.cols()), (1024, 8));
    /// # Ok(()) }
    /// ```
    pub fn upload_matrix<T: Pod>(&self, data: &[T], rows: usize, cols: usize) -> Result<DeviceMatrix<T>> {
        if rows.checked_mul(cols) != Some(data.len()) {
            return Err(Error::LengthMismatch { expected: data.len(), got: rows.saturating_mul(cols) });
        }
        let m = DeviceMatrix::<T>::alloc(self, rows, cols, rows)?;
        let stream = self.take_stream()?;
        let s = m.span;
        // SAFETY: device side: `m` is a fresh allocation of exactly `s`, owned here and not yet
        // handed out, so nothing else uses it. Host side: `data` holds `rows * cols` elements
        // (checked above) and stays borrowed until this function returns, after the
        // synchronize below has seen the copy complete.
        let copied = unsafe {
            stream.copy(Direction::HostToDevice, s.ptr, data.as_ptr().cast_mut().cast::<c_void>(), s.to_2d())
        }
        .map_err(|error| Error::Copy { direction: "host to device", error });
        let synced = stream.synchronize().map_err(|error| Error::Stream { call: "cuStreamSynchronize", error });
        match (copied, synced) {
            (Ok(()), Ok(())) => {
                self.recycle_stream(stream);
                Ok(m)
            }
            // The stream did not confirm it is done: neither it nor the memory may be
            // reused, so both are leaked rather than freed (leaking is sound).
            (_, Err(e)) => {
                std::mem::forget((stream, m));
                Err(e)
            }
            (Err(e), Ok(())) => {
                self.recycle_stream(stream);
                Err(e)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn borrows_are_send_and_sync() {
        fn assert<T: Send + Sync>() {}
        assert::<ColumnsMut<'static, f32>>();
        assert::<ColumnsRef<'static, f32>>();
        assert::<DeviceMatrix<f32>>();
    }
}
