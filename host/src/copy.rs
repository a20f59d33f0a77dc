//! Asynchronous copies between host and device, and fills (rule 4: the host keeps its
//! hands off a copy's host side until the copy is awaited).
//!
//! # Rule 4
//!
//! * Device → host: [`Stream::copy_to_host`] *consumes* the destination ([`PinnedMut`]) and
//!   returns a [`Pending`]. Only [`Pending::wait`] (`cuEventSynchronize`) hands the
//!   destination back. The destination borrows its pinned matrix for the whole scope, so
//!   even if the `Pending` is leaked the matrix stays borrowed until the scope has joined.
//! * Host → device: [`Stream::copy_to_device`] takes the source as `&'scope [T]`: the host
//!   may read it, but cannot change or free it until the scope has joined.

use std::sync::atomic::Ordering;

use bytemuck::Pod;

use std::any::TypeId;

use crate::capture::{Output, Staged};
use crate::driver::mem::Direction;
use crate::error::{Error, Result};
use crate::fence::Fence;
use crate::lane::Stream;
use crate::pinned::PinnedMut;
use crate::plan::MergeSide;
use crate::span::Span;
use crate::submit::Work;
use crate::view::{ColumnViewMut, CopySource};

/// A device-to-host copy in flight. Holds the destination until the copy is done:
/// [`wait`](Pending::wait) blocks on this copy's event only and gives the destination back.
///
/// The std analogue is a `JoinHandle<&mut [T]>`.
///
/// ```no_run
/// # use sluice_host as sluice;
/// # fn demo(gpu: &sluice::Gpu) -> sluice::Result<()> {
/// sluice::scope(gpu, |s| {
///     let m = s.alloc_buffer::<u32>(64)?;
///     let host = s.pinned_buffer::<u32>(64)?;
///     let pending = s.lane()?.enter(|st| {
///         let mut v = st.bind(m.as_columns_mut());
///         st.zero(&mut v)?;
///         st.copy_to_host(&v, host.as_pinned_mut())
///     })?;
///     let col = pending.wait()?;         // PinnedMut: derefs to [u32]
///     assert!(col.iter().all(|x| *x == 0));
///     Ok(())
/// })
/// # }
/// ```
///
/// # Rule 4
///
/// The destination cannot be read before the copy is awaited: the copy took it.
///
/// ```compile_fail,E0382
/// # use sluice_host as sluice;
/// # fn demo(gpu: &sluice::Gpu) -> sluice::Result<()> {
/// sluice::scope(gpu, |s| {
///     let m = s.alloc_buffer::<u32>(64)?;
///     let host = s.pinned_buffer::<u32>(64)?;
///     let mut dst = host.as_pinned_mut();
///     let pending = s.lane()?.enter(|st| {
///         let v = st.bind(m.as_columns_mut());
///         st.copy_to_host(&v, dst)
///     })?;
///     println!("{}", dst[0]); // error[E0382]: borrow of moved value: `dst` — the copy has it
///     # drop(pending);
///     Ok(())
/// })
/// # }
/// ```
///
/// Read what `wait` returns:
///
/// ```no_run
/// # use sluice_host as sluice;
/// # fn demo(gpu: &sluice::Gpu) -> sluice::Result<()> {
/// sluice::scope(gpu, |s| {
///     let m = s.alloc_buffer::<u32>(64)?;
///     let host = s.pinned_buffer::<u32>(64)?;
///     let dst = host.as_pinned_mut();
///     let pending = s.lane()?.enter(|st| {
///         let mut v = st.bind(m.as_columns_mut());
///         st.zero(&mut v)?;
///         st.copy_to_host(&v, dst)
///     })?;
///     let dst = pending.wait()?;
///     println!("{}", dst[0]);
///     Ok(())
/// })
/// # }
/// ```
pub struct Pending<'scope, T> {
    dst: PinnedMut<'scope, T>,
    fence: Fence<'scope>,
}

impl<'scope, T> Pending<'scope, T> {
    /// Blocks this host thread until the copy is done, then returns its destination.
    ///
    /// ```no_run
    /// # use sluice_host as sluice;
    /// # fn demo(gpu: &sluice::Gpu) -> sluice::Result<()> {
    /// sluice::scope(gpu, |s| {
    ///     let m = s.alloc_buffer::<f32>(8)?;
    ///     let h = s.pinned_buffer::<f32>(8)?;
    ///     let p = s.lane()?.enter(|st| { let mut v = st.bind(m.as_columns_mut()); st.zero(&mut v)?; st.copy_to_host(&v, h.as_pinned_mut()) })?;
    ///     assert_eq!(p.wait()?.len(), 8);
    ///     Ok(())
    /// })
    /// # }
    /// ```
    pub fn wait(self) -> Result<PinnedMut<'scope, T>> {
        self.fence.wait_for("Pending::wait")?;
        Ok(self.dst)
    }

    /// The copy's fence (e.g. for another lane to await before reusing the source).
    ///
    /// ```no_run
    /// # use sluice_host as sluice;
    /// # fn demo(gpu: &sluice::Gpu) -> sluice::Result<()> {
    /// sluice::scope(gpu, |s| {
    ///     let m = s.alloc_buffer::<f32>(8)?;
    ///     let h = s.pinned_buffer::<f32>(8)?;
    ///     let p = s.lane()?.enter(|st| { let v = st.bind(m.as_columns_mut()); st.copy_to_host(&v, h.as_pinned_mut()) })?;
    ///     s.lane()?.enter(|st| st.await_fence(p.fence()))?; // ordered after the copy
    ///     Ok(())
    /// })
    /// # }
    /// ```
    pub fn fence(&self) -> &Fence<'scope> {
        &self.fence
    }
}

impl<T> std::fmt::Debug for Pending<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pending").field("len", &self.dst.len()).finish_non_exhaustive()
    }
}

/// The one check before a copy or fill is enqueued: not empty, the source's length
/// (`expected`) is the destination's (`got`), and the device memory `s` is this lane's
/// device's. Nothing is enqueued when it fails.
fn check_enqueue(st: &Stream<'_, '_>, s: &Span, expected: usize, got: usize, what: &'static str) -> Result<()> {
    if expected == 0 || got == 0 {
        return Err(Error::ZeroSized);
    }
    if expected != got {
        return Err(Error::LengthMismatch { expected, got });
    }
    if s.ctx != st.gpu().ctx_id() {
        return Err(Error::WrongDevice { what });
    }
    Ok(())
}

impl<'scope, 'lane> Stream<'scope, 'lane> {
    /// Copies a view (one column, a column range, a whole matrix; `&view` of either kind, or
    /// a [`ColumnView`](crate::ColumnView)) to pinned host memory, on
    /// this lane: ordered after everything enqueued here before, so no fence is needed
    /// between a kernel and the copy of its output on the same lane. Columns land
    /// contiguously (`rows * cols` elements); a padded view is copied with one 2-D copy.
    ///
    /// Records an event after the copy for the returned [`Pending`].
    ///
    /// # Errors
    /// [`Error::LengthMismatch`] if `dst` has not exactly `src.len()` elements,
    /// [`Error::ZeroSized`] for empty views; [`Error::Copy`] from the driver (in a deferred
    /// scope, where the copy is submitted: the host wait that needs it, or the scope's end).
    /// Nothing is enqueued on a length error.
    ///
    /// ```no_run
    /// # use sluice_host as sluice;
    /// # fn demo(gpu: &sluice::Gpu) -> sluice::Result<()> {
    /// let mut host = gpu.pinned_matrix::<f32>(256, 4)?;
    /// sluice::scope(gpu, |s| {
    ///     let m = s.alloc_matrix::<f32>(256, 4)?;
    ///     let lane = s.lane()?;
    ///     let (first, rest) = host.split_columns_mut(1).unwrap();
    ///     lane.enter(|st| {
    ///         let mut v = st.bind(m.as_columns_mut());
    ///         st.zero(&mut v)?;
    ///         let (c0, others) = v.split_columns(1).unwrap();
    ///         let p0 = st.copy_to_host(&c0, first)?;      // one column
    ///         let p1 = st.copy_to_host(&others, rest)?;   // a column range, one copy
    ///         Ok::<_, sluice::Error>((p0, p1))
    ///     })?;
    ///     Ok(())
    /// })?;
    /// # Ok(()) }
    /// ```
    pub fn copy_to_host<'v, T: Pod>(
        &self,
        src: impl CopySource<'v, 'lane, T>,
        dst: PinnedMut<'scope, T>,
    ) -> Result<Pending<'scope, T>> {
        let s = src.view().span();
        let (ptr, len) = dst.raw();
        check_enqueue(self, &s, s.len(), len, "copy")?;
        let work = Work::Copy {
            dir: Direction::DeviceToHost,
            device: s.ptr,
            host: ptr.as_ptr() as usize,
            span: s.to_2d(),
            elem: s.elem_size,
        };
        // Whole columns may merge with the neighbours' copies at the scope's end (`plan`).
        let merge = s.whole_columns.then_some(MergeSide { src: s, host_alloc: dst.allocation() });
        // SAFETY: device side: the span is bound to this lane (brand 'lane) and borrowed for at
        // least the scope, which submits and joins this stream before the memory can be freed.
        // Host side: `dst` is pinned memory of exactly `len` elements, borrowed exclusively for
        // 'scope and moved into the `Pending`, so the host cannot touch it before `wait` (which
        // submits the copy first) or before the scope has joined, if the `Pending` is leaked.
        let fence = unsafe { self.submit_fenced(work, merge) }?;
        self.lane.inner.copies.fetch_add(1, Ordering::Relaxed);
        if let Some(capture) = self.lane.shared.capture() {
            // Recorded: the graph writes `dst` at every replay and hands it to the host through
            // the replay's wait (`Outputs`); the borrow of it lasts the graph's life ('scope is
            // the graph's lifetime in a recording).
            capture.recorded().outputs.push(Output {
                ptr: ptr.as_ptr().cast::<u8>(),
                len,
                elem: TypeId::of::<T>(),
                elem_name: std::any::type_name::<T>(),
            });
        }
        Ok(Pending { dst, fence })
    }

    /// Sets every element of `dst` to zero bits, on this lane (`cuMemsetD2D8Async`).
    ///
    /// ```no_run
    /// # use sluice_host as sluice;
    /// # fn demo(gpu: &sluice::Gpu) -> sluice::Result<()> {
    /// sluice::scope(gpu, |s| {
    ///     let m = s.alloc_matrix_padded::<f32>(100, 3, 128)?;
    ///     s.lane()?.enter(|st| {
    ///         let mut v = st.bind(m.as_columns_mut());
    ///         st.zero(&mut v)                  // 3 columns of 100, padding untouched
    ///     })
    /// })
    /// # }
    /// ```
    pub fn zero<T: Pod>(&self, dst: &mut ColumnViewMut<'_, 'lane, T>) -> Result<()> {
        let s = dst.span();
        check_enqueue(self, &s, s.len(), s.len(), "zero")?;
        let work =
            Work::Zero { dst: s.ptr, pitch: s.ld * s.elem_size, width_bytes: s.rows * s.elem_size, height: s.cols };
        // SAFETY: the span is device memory bound to this stream (brand 'lane) and borrowed
        // exclusively for at least as long as the stream may run (the scope submits and joins it).
        unsafe { self.submit(work, None) }?;
        self.lane.inner.copies.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }

    /// Copies host memory into a view, on this lane: later work on this lane sees the data.
    ///
    /// `src` stays borrowed (shared) until the scope ends, so the host cannot change or free
    /// it while the copy may still read it ([rule 4](crate#safety-model)). Pinned sources copy asynchronously;
    /// pageable ones are staged by the driver.
    ///
    /// # Errors
    /// [`Error::LengthMismatch`], [`Error::ZeroSized`], [`Error::Copy`].
    ///
    /// ```no_run
    /// # use sluice_host as sluice;
    /// # fn demo(gpu: &sluice::Gpu) -> sluice::Result<()> {
    /// let input = gpu.pinned_buffer::<f32>(1024)?;
    /// sluice::scope(gpu, |s| {
    ///     let m = s.alloc_buffer::<f32>(1024)?;
    ///     s.lane()?.enter(|st| {
    ///         let mut v = st.bind(m.as_columns_mut());
    ///         st.copy_to_device(&input, &mut v)
    ///     })
    /// })?;
    /// # Ok(()) }
    /// ```
    ///
    /// The source cannot change while the scope may still copy from it:
    ///
    /// ```compile_fail,E0502
    /// # use sluice_host as sluice;
    /// # fn demo(gpu: &sluice::Gpu) -> sluice::Result<()> {
    /// let mut input = gpu.pinned_buffer::<f32>(1024)?;
    /// sluice::scope(gpu, |s| {
    ///     let m = s.alloc_buffer::<f32>(1024)?;
    ///     s.lane()?.enter(|st| {
    ///         let mut v = st.bind(m.as_columns_mut());
    ///         st.copy_to_device(&input, &mut v)
    ///     })?;
    ///     input[0] = 1.0; // error[E0502]: `input` is borrowed by the copy until the scope ends
    ///     Ok(())
    /// })
    /// # }
    /// ```
    ///
    /// Fill the source before the scope (or use another buffer per step).
    pub fn copy_to_device<T: Pod>(&self, src: &'scope [T], dst: &mut ColumnViewMut<'_, 'lane, T>) -> Result<()> {
        let s = dst.span();
        check_enqueue(self, &s, src.len(), s.len(), "copy")?;
        let src: &[T] = match self.stage_for_recording(src)? {
            Some(staged) => staged,
            None => src,
        };
        // SAFETY: `src` is `src.len()` elements borrowed (shared) for 'scope (or staged into
        // the recording's own buffer), so nothing writes or frees it before the scope has
        // submitted and joined the copy.
        unsafe { self.submit_copy_to_device(src, &s) }
    }

    /// A copy to the device whose source is borrowed for this call only (`Scope::upload`):
    /// when the copy could read `src` after the call returns — a recording (staged into the
    /// graph's own buffer here), page-locked memory (copied asynchronously), the CPU
    /// backend (its streams copy on worker threads) — `src` is first copied into a buffer
    /// `stage` gives, owned for `'scope`; pageable memory on CUDA goes to the driver as is,
    /// which stages it into its own buffer before `cuMemcpyHtoDAsync` returns.
    pub(crate) fn copy_to_device_now<T: Pod>(
        &self,
        src: &[T],
        dst: &mut ColumnViewMut<'_, 'lane, T>,
        stage: impl FnOnce(&[u8]) -> Result<&'scope [u8]>,
    ) -> Result<()> {
        let s = dst.span();
        check_enqueue(self, &s, src.len(), s.len(), "copy")?;
        if let Some(staged) = self.stage_for_recording(src)? {
            // SAFETY: staged into the recording's own buffer, which lives as long as the graph.
            return unsafe { self.submit_copy_to_device(staged, &s) };
        }
        let later = self
            .gpu()
            .context()
            .copy_reads_host_later(src.as_ptr().cast())
            .map_err(|error| Error::Copy { direction: "host to device", error })?;
        if !later {
            // SAFETY: pageable host memory on CUDA, and this lane submits at once (the upload
            // lane is never deferred): the driver copies `src` into its own staging buffer
            // before the call returns, and never reads `src` after it.
            return unsafe { self.submit_copy_to_device(src, &s) };
        }
        let bytes: &'scope [u8] = stage(bytemuck::cast_slice(src))?;
        // Page-aligned (a pinned allocation) and `src.len() * size_of::<T>()` bytes long.
        let staged: &'scope [T] = bytemuck::cast_slice(bytes);
        // SAFETY: `staged` is owned by the scope for 'scope, and nothing writes it after
        // `stage` filled it, so it outlives every use of the copy (the scope joins it first).
        unsafe { self.submit_copy_to_device(staged, &s) }
    }

    /// In a recording: `src` copied into a pinned staging buffer the graph owns (filled now,
    /// rewritten by `Graph::write_input`), which the recorded copy reads at every replay,
    /// never the program's `src`. `None` when the stream is not recorded.
    fn stage_for_recording<T: Pod>(&self, src: &[T]) -> Result<Option<&'scope [T]>> {
        let Some(capture) = self.lane.shared.capture() else { return Ok(None) };
        // Bytes: pinned allocations are page-aligned, so any `T` fits them.
        let bytes: &[u8] = bytemuck::cast_slice(src);
        let mut buf = self.gpu().pinned_matrix::<u8>(bytes.len(), 1)?;
        buf.copy_from_slice(bytes);
        let ptr = buf.as_mut_ptr();
        capture.recorded().inputs.push(Staged {
            ptr,
            len: src.len(),
            elem: TypeId::of::<T>(),
            elem_name: std::any::type_name::<T>(),
            _owner: Box::new(buf),
        });
        // SAFETY: `ptr` is `src.len()` `T`s (their bytes, copied just above) of pinned,
        // page-aligned memory owned by the recording (moved into its inputs, never moved or
        // freed before the graph, which outlives 'scope, is dropped); nothing writes it
        // while this is used.
        Ok(Some(unsafe { std::slice::from_raw_parts(ptr.cast::<T>(), src.len()) }))
    }

    /// Submits the copy of `src` into the device span `s` (checked by the caller).
    ///
    /// # Safety
    /// `src` is neither written nor freed until the copy has run: the caller says why.
    unsafe fn submit_copy_to_device<T: Pod>(&self, src: &[T], s: &Span) -> Result<()> {
        let host = src.as_ptr() as usize;
        let work = Work::Copy { dir: Direction::HostToDevice, device: s.ptr, host, span: s.to_2d(), elem: s.elem_size };
        // SAFETY: device side: bound to this lane and borrowed exclusively for at least as long
        // as the lane may run. Host side: the caller's duty.
        unsafe { self.submit(work, None) }?;
        self.lane.inner.copies.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn padded_spans_copy_row_blocks_with_pitch() {
        let s = Span { ptr: 0, rows: 100, cols: 3, ld: 128, elem_size: 4, alloc: 1, ctx: 0, whole_columns: true };
        let d = s.to_2d();
        assert_eq!((d.width_bytes, d.height, d.device_pitch, d.host_pitch), (400, 3, 512, 400));
    }

    #[test]
    fn pending_is_send() {
        fn assert<T: Send + Sync>() {}
        assert::<Pending<'static, f32>>();
    }
}
