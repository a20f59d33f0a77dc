//! Pinned (page-locked) host matrices: the destinations of copies back, and the host side
//! of rule 4 (a copy owns its host memory until it is awaited; see [`copy`](crate::copy)).

use std::marker::PhantomData;
use std::ops::{Deref, DerefMut, RangeBounds};
use std::ptr::NonNull;

use bytemuck::Pod;

use crate::device::Gpu;
use crate::driver::{mem::Direction, RawHostPtr};
use crate::error::{Error, Result, ORPHANED};
use crate::handle::{Event, StreamHandle};
use crate::matrix::DeviceMatrix;
use crate::span::{bounds, check_aligned, matrix_bytes};

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
/// where sluice cannot keep [rule 6](crate#safety-model) by itself. Allocate pinned matrices once, outside the
/// hot path — before a loop of scopes, not in every scope — and reuse them:
/// [`Gpu::pinned_matrix`] outside scopes, passed into each scope by `&mut`, dropped when
/// no lane is running.
///
/// ```no_run
/// # use sluice_host as sluice;
/// # fn demo(gpu: &sluice::Gpu) -> sluice::Result<()> {
/// let mut host = gpu.pinned_matrix::<f32>(1024, 8)?;
/// host[0] = 1.0;                       // a plain slice on the host
/// for dst in host.columns_mut() {      // one PinnedMut per column: copy destinations
///     assert_eq!(dst.len(), 1024);
/// }
/// assert_eq!(host.column(0).unwrap()[0], 1.0);
/// # Ok(()) }
/// ```
pub struct PinnedMatrix<T> {
    /// Keeps the context the memory was allocated in; errors found dropping are recorded here.
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
        let raw = gpu.context().host_alloc(bytes).map_err(|error| Error::Alloc { bytes, error })?;
        let Some(ptr) = NonNull::new(raw.0.cast::<T>()) else {
            return Err(Error::Alloc { bytes, error: crate::driver::DriverError::from_code(2) });
        };
        if let Err(e) = check_aligned::<T>(ptr.as_ptr() as u64) {
            // SAFETY: just allocated by `host_alloc` in this context, never handed out.
            return Err(match unsafe { gpu.context().host_free(raw) } {
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
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Columns.
    pub fn cols(&self) -> usize {
        self.cols
    }

    /// The columns as slices, in order (to read results back; [`columns_mut`](PinnedMatrix::columns_mut)
    /// gives them as copy destinations).
    ///
    /// ```no_run
    /// # use sluice_host as sluice;
    /// # fn demo(gpu: &sluice::Gpu) -> sluice::Result<()> {
    /// let h = gpu.pinned_matrix::<f32>(4, 3)?;
    /// for (j, col) in h.columns().enumerate() {
    ///     assert_eq!(col.len(), 4, "column {j}");
    /// }
    /// assert_eq!(h.columns().len(), 3);
    /// # Ok(()) }
    /// ```
    pub fn columns(&self) -> impl ExactSizeIterator<Item = &[T]> + '_ {
        let rows = self.rows;
        (0..self.cols).map(move |j| &self[j * rows..(j + 1) * rows])
    }

    /// Column `j` as a slice; `None` if `j >= cols`.
    ///
    /// ```no_run
    /// # use sluice_host as sluice;
    /// # fn demo(gpu: &sluice::Gpu) -> sluice::Result<()> {
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
    /// # use sluice_host as sluice;
    /// # fn demo(gpu: &sluice::Gpu) -> sluice::Result<()> {
    /// let mut h = gpu.pinned_matrix::<f32>(4, 2)?;
    /// assert_eq!(h.as_pinned_mut().len(), 8);
    /// # Ok(()) }
    /// ```
    pub fn as_pinned_mut(&mut self) -> PinnedMut<'_, T> {
        PinnedMut::new(self.ptr, self.rows * self.cols, self.ptr.as_ptr() as usize)
    }

    /// Column `j` as a copy destination; `None` if `j >= cols`.
    ///
    /// ```no_run
    /// # use sluice_host as sluice;
    /// # fn demo(gpu: &sluice::Gpu) -> sluice::Result<()> {
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
    /// # use sluice_host as sluice;
    /// # fn demo(gpu: &sluice::Gpu) -> sluice::Result<()> {
    /// let mut h = gpu.pinned_matrix::<f32>(4, 6)?;
    /// assert_eq!(h.column_range_mut(2..).unwrap().len(), 16);
    /// # Ok(()) }
    /// ```
    pub fn column_range_mut(&mut self, range: impl RangeBounds<usize>) -> Option<PinnedMut<'_, T>> {
        let (start, end) = bounds(range, self.cols)?;
        let rows = self.rows;
        let (_, rest) = self.as_pinned_mut().split_at(start * rows)?;
        rest.split_at((end - start) * rows).map(|(mid, _)| mid)
    }

    /// Columns `[0, at)` and `[at, cols)` as two destinations; `None` if `at > cols`.
    ///
    /// ```no_run
    /// # use sluice_host as sluice;
    /// # fn demo(gpu: &sluice::Gpu) -> sluice::Result<()> {
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
    /// # use sluice_host as sluice;
    /// # fn demo(gpu: &sluice::Gpu) -> sluice::Result<()> {
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
    /// # use sluice_host as sluice;
    /// # fn demo(gpu: &sluice::Gpu) -> sluice::Result<()> {
    /// let mut h = gpu.pinned_matrix::<f32>(4, 6)?;
    /// assert_eq!(h.column_chunks_mut(4).map(|c| c.len()).collect::<Vec<_>>(), [16, 8]);
    /// # Ok(()) }
    /// ```
    pub fn column_chunks_mut(&mut self, k: usize) -> PinnedChunksMut<'_, T> {
        let chunk = if k == 0 { 0 } else { k.saturating_mul(self.rows) };
        PinnedChunksMut { rest: Some(self.as_pinned_mut()), chunk }
    }

    /// Frees the memory now, returning a driver error instead of recording it on the device
    /// as `drop` does ([`Gpu::take_errors`]).
    ///
    /// ```no_run
    /// # use sluice_host as sluice;
    /// # fn demo(gpu: &sluice::Gpu) -> sluice::Result<()> {
    /// let h = gpu.pinned_matrix::<f32>(4, 6)?;
    /// h.free()?;
    /// # Ok(()) }
    /// ```
    pub fn free(self) -> Result<()> {
        let this = std::mem::ManuallyDrop::new(self);
        let r = this.release();
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

impl<T> PinnedMatrix<T> {
    fn release(&self) -> Result<()> {
        // SAFETY: allocated by `host_alloc` in this context and freed once (only `drop` and
        // `free` call this, each consuming the matrix); no copy can use it: copies borrow it
        // for their scope, which joined.
        unsafe { self.gpu.context().host_free(RawHostPtr(self.ptr.as_ptr().cast())) }
            .map_err(|error| Error::Free { what: "pinned memory", error })
    }
}

impl<T> Drop for PinnedMatrix<T> {
    fn drop(&mut self) {
        if let Err(e) = self.release() {
            // `drop` cannot return it: record it on the device (`Gpu::take_errors`).
            self.gpu.record_error(e);
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
/// copy's `wait` gives it back ([rule 4](crate#safety-model)).
///
/// ```no_run
/// # use sluice_host as sluice;
/// # fn demo(gpu: &sluice::Gpu) -> sluice::Result<()> {
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
    /// The address of the pinned allocation this lies in (copies into adjacent parts of one
    /// allocation may merge into one copy).
    base: usize,
    /// Exclusive, covariant borrow of the elements, as `&'a mut [T]`.
    _borrow: PhantomData<&'a mut [T]>,
}

// SAFETY: behaves as `&'a mut [T]`, which is Send when T is.
unsafe impl<T: Send> Send for PinnedMut<'_, T> {}
// SAFETY: behaves as `&'a mut [T]`, which is Sync when T is.
unsafe impl<T: Sync> Sync for PinnedMut<'_, T> {}

impl<'a, T> PinnedMut<'a, T> {
    fn new(ptr: NonNull<T>, len: usize, base: usize) -> Self {
        PinnedMut { ptr, len, base, _borrow: PhantomData }
    }

    pub(crate) fn raw(&self) -> (NonNull<T>, usize) {
        (self.ptr, self.len)
    }

    /// The address of the pinned allocation the elements lie in.
    pub(crate) fn allocation(&self) -> usize {
        self.base
    }

    /// Elements `[0, mid)` and `[mid, len)`; `None` if `mid > len`.
    ///
    /// ```no_run
    /// # use sluice_host as sluice;
    /// # fn demo(gpu: &sluice::Gpu) -> sluice::Result<()> {
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
        Some((PinnedMut::new(self.ptr, mid, self.base), PinnedMut::new(right, self.len - mid, self.base)))
    }

    /// The elements as a plain slice, for the rest of `'a`.
    ///
    /// ```no_run
    /// # use sluice_host as sluice;
    /// # fn demo(gpu: &sluice::Gpu) -> sluice::Result<()> {
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
/// # use sluice_host as sluice;
/// # fn demo(gpu: &sluice::Gpu) -> sluice::Result<()> {
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
    /// An owned, zeroed, page-locked host matrix, freed on drop.
    ///
    /// Pinned allocations are slow and may serialize the device: make them outside the hot
    /// path and reuse them (see [`PinnedMatrix`'s costs](PinnedMatrix#cost)).
    ///
    /// # Errors
    /// [`Error::ZeroSized`], [`Error::TooLarge`], [`Error::OverAligned`], [`Error::Alloc`].
    ///
    /// ```no_run
    /// # use sluice_host as sluice;
    /// # fn demo(gpu: &sluice::Gpu) -> sluice::Result<()> {
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
    /// # use sluice_host as sluice;
    /// # fn demo(gpu: &sluice::Gpu) -> sluice::Result<()> {
    /// let mut h = gpu.pinned_buffer::<f32>(16)?;
    /// h.copy_from_slice(&[1.0; 16]);
    /// # Ok(()) }
    /// ```
    pub fn pinned_buffer<T: Pod>(&self, len: usize) -> Result<PinnedMatrix<T>> {
        PinnedMatrix::alloc(self, len, 1)
    }
}

/// A host-to-device upload in flight, outside any scope ([`Gpu::upload_async`]): it owns
/// both sides until the copy is done — the pinned source (so the host cannot change or free
/// it, [rule 4](crate#safety-model)) and the device matrix (so no lane reads it early). [`wait`](PendingUpload::wait)
/// gives both back; a lane can instead wait on the GPU
/// ([`Stream::await_upload`](crate::Stream::await_upload)).
///
/// Dropping it waits for the copy (this upload's event only) before freeing anything;
/// leaking it (`mem::forget`) leaks both sides, which is sound.
///
/// ```no_run
/// # use sluice_host as sluice;
/// # fn demo(gpu: &sluice::Gpu) -> sluice::Result<()> {
/// let mut staging = gpu.pinned_buffer::<f32>(1 << 20)?;
/// staging.fill(1.0);
/// let pending = gpu.upload_async(staging)?;      // returns at once
/// // ... other host work, other scopes ...
/// let (on_device, staging) = pending.wait()?;    // this copy's event only
/// # let _ = (on_device, staging);
/// # Ok(()) }
/// ```
pub struct PendingUpload<T> {
    // `Option`s so that `wait` can move them out (they are `Some` until then).
    dst: Option<DeviceMatrix<T>>,
    src: Option<PinnedMatrix<T>>,
    done: Event,
    stream: Option<StreamHandle>,
}

impl<T: Pod> PendingUpload<T> {
    /// Blocks until the copy is done (`cuEventSynchronize` on its event only) and returns the
    /// device matrix and the pinned source.
    pub fn wait(mut self) -> Result<(DeviceMatrix<T>, PinnedMatrix<T>)> {
        self.done.synchronize().map_err(|error| Error::Event { call: "cuEventSynchronize", error })?;
        let gpu = self.dst.as_ref().map(|m| m.gpu().clone());
        if let (Some(gpu), Some(stream)) = (gpu, self.stream.take()) {
            // The event after the copy completed, and the copy was the stream's only work.
            gpu.recycle_stream(stream);
        }
        let (dst, src) = (self.dst.take(), self.src.take());
        Ok((dst.expect("a pending upload holds its matrix until waited"), src.expect("and its source")))
    }

    /// The device matrix, for a lane to await ([`Stream::await_upload`](crate::Stream::await_upload)).
    pub(crate) fn parts(&self) -> (&DeviceMatrix<T>, &Event) {
        (self.dst.as_ref().expect("a pending upload holds its matrix until waited"), &self.done)
    }
}

impl<T> Drop for PendingUpload<T> {
    fn drop(&mut self) {
        if self.dst.is_none() {
            return; // waited
        }
        if let Err(error) = self.done.synchronize() {
            // The copy cannot be confirmed done: keep both sides alive forever (sound).
            std::mem::forget(self.dst.take());
            std::mem::forget(self.src.take());
            std::mem::forget(self.stream.take());
            ORPHANED.record(Error::Event { call: "cuEventSynchronize", error });
        }
    }
}

impl<T> std::fmt::Debug for PendingUpload<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PendingUpload").finish_non_exhaustive()
    }
}

impl Gpu {
    /// Starts copying a pinned matrix to a new device matrix, outside any scope, and returns
    /// at once: the copy runs on a stream of its own (one of the device's idle streams) while
    /// the host goes on. The [`PendingUpload`] owns both sides until it is awaited.
    ///
    /// # Errors
    /// Allocation errors, [`Error::Copy`], [`Error::Event`].
    ///
    /// ```no_run
    /// # use sluice_host as sluice;
    /// # fn demo(gpu: &sluice::Gpu) -> sluice::Result<()> {
    /// let src = gpu.pinned_matrix::<f32>(4096, 8)?;
    /// let up = gpu.upload_async(src)?;
    /// sluice::scope(gpu, |s| {
    ///     s.lane()?.enter(|st| {
    ///         let x = st.await_upload(&up)?;   // GPU-side wait; the host never blocks
    ///         assert_eq!(x.cols(), 8);
    ///         Ok(())
    ///     })
    /// })?;
    /// let (on_device, _src) = up.wait()?;
    /// # let _ = on_device;
    /// # Ok(()) }
    /// ```
    pub fn upload_async<T: Pod>(&self, src: PinnedMatrix<T>) -> Result<PendingUpload<T>> {
        let dst = self.alloc_matrix::<T>(src.rows, src.cols)?;
        let stream = self.take_stream()?;
        let done = self.take_event(false)?;
        let s = dst.as_columns().span();
        // SAFETY: device side: `dst` is a fresh allocation of exactly `s`, moved into the
        // `PendingUpload` below, which hands it out only after this copy's event (`wait`) or
        // behind a GPU-side wait on it (`await_upload`). Host side: `src` holds `rows * cols`
        // elements and is moved into the `PendingUpload` too, which neither gives it back nor
        // frees it before the event has completed (`wait`, `drop`), and leaks it if forgotten.
        let copied = unsafe { stream.copy(Direction::HostToDevice, s.ptr, src.ptr.as_ptr().cast(), s.to_2d()) }
            .map_err(|error| Error::Copy { direction: "host to device", error })
            .and_then(|()| done.record(&stream).map_err(|error| Error::Event { call: "cuEventRecord", error }));
        let pending = PendingUpload { dst: Some(dst), src: Some(src), done, stream: Some(stream) };
        match copied {
            Ok(()) => Ok(pending),
            Err(e) => {
                // Whatever was enqueued is waited for by the drop (on the stream this time:
                // the event may not have been recorded).
                let mut pending = pending;
                if let Some(stream) = pending.stream.take() {
                    if stream.synchronize().is_err() {
                        std::mem::forget((stream, pending));
                        return Err(e);
                    }
                }
                pending.dst.take();
                pending.src.take();
                Err(e)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pinned_memory_is_send_and_sync() {
        fn assert<T: Send + Sync>() {}
        assert::<PinnedMut<'static, f32>>();
        assert::<PinnedMatrix<f32>>();
    }
}
