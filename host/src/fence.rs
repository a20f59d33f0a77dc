//! Fences: how data moves between lanes (rule 1), how shared data is read by many (rule 3),
//! and why no wait is hidden (rule 7).
//!
//! A [`Fence`] is a CUDA event recorded on a lane after some work. [`Stream::fence`] takes a
//! view, records a fence, and returns the columns *unbranded* inside a [`Fenced`]: the only
//! way a view's columns leave its lane. Another lane gets them back only through
//! [`Stream::await_fence`], which enqueues `cuStreamWaitEvent` (the GPU waits, the host goes
//! on) and returns a view bound to the awaiting lane; the host gets them back only through
//! [`Fenced::wait`] (`cuEventSynchronize` on that event).
//!
//! # Rule 7
//!
//! The program asks for one event per fence, pending copy or timestamp, and one
//! `cuStreamWaitEvent` per await on another lane than the fence's — none when a lane awaits
//! its own fence (stream order already covers it). [`LaneStats`](crate::LaneStats) counts what
//! it asked for, per lane, as it asks.
//!
//! What reaches the GPU is no more than that, and derived from it alone, never from tracking
//! memory: a scope that submits as asked ([`SubmitConfig::direct`](crate::SubmitConfig::direct))
//! enqueues exactly these; a deferred scope ([`plan`](crate::plan)) leaves out the records of
//! fences no one can await any more (dropped unawaited, or at the scope's end), adds for a
//! merged copy one fan-in event and one wait per copy it absorbed (the copying lane waits
//! for the lanes whose copies it does — the edges the copies had to their kernels), and in a
//! graph the same records and waits are the graph's edges. Each
//! [`Submission`](crate::Submission) counts what it submitted (`events_recorded`, `waits`,
//! `fences_elided`, `merged_copies`, `merges`).

use std::sync::atomic::Ordering;
use std::sync::Arc;

use bytemuck::Pod;

use crate::error::{Error, Result};
use crate::handle::Event;
use crate::lane::{Cover, LaneInner, LaneShared, Stream};
use crate::matrix::{ColumnsMut, ColumnsRef, DeviceMatrix};
use crate::pinned::PendingUpload;
use crate::plan::MergeSide;
use crate::span::Span;
use crate::submit::Work;
use crate::trace::SpanKind;
use crate::view::{ColumnView, ColumnViewMut};

/// A point on one lane's timeline (a CUDA event): the std analogue is a
/// `JoinHandle` that can be joined by the host or by another lane, any number of times.
///
/// ```no_run
/// # use sluice_host as sluice;
/// # fn demo(gpu: &sluice::Gpu) -> sluice::Result<()> {
/// sluice::scope(gpu, |s| {
///     let (a, b) = (s.lane()?, s.lane()?);
///     let f = a.enter(|st| st.record())?;
///     b.enter(|st| st.await_fence(&f))?;   // GPU-side: b waits for a's work so far
///     f.wait()?;                            // host-side: this thread waits
///     Ok(())
/// })
/// # }
/// ```
pub struct Fence<'scope> {
    shared: &'scope LaneShared,
    /// Always `Some` until the fence is dropped, which gives the event back to its scope.
    event: Option<Arc<Event>>,
    /// In a deferred scope: where the record is in the scope's log (its generation and
    /// index) until it is submitted.
    rec: Option<(u64, u32)>,
    /// The stream that recorded it: awaiting on that lane needs no wait.
    stream: usize,
    /// The lane that recorded it and how many operations it had enqueued then: awaiting it
    /// tells that lane's join who finishes it (see `LaneInner::covered_by`).
    origin: Option<(&'scope LaneInner, u64)>,
}

impl<'scope> Fence<'scope> {
    fn event(&self) -> &Event {
        self.event.as_ref().expect("a fence holds its event until it is dropped")
    }

    /// Blocks this host thread until the work before the fence is done
    /// (`cuEventSynchronize` on this event only).
    ///
    /// ```no_run
    /// # use sluice_host as sluice;
    /// # fn demo(gpu: &sluice::Gpu) -> sluice::Result<()> {
    /// sluice::scope(gpu, |s| {
    ///     let f = s.lane()?.enter(|st| st.record())?;
    ///     f.wait()
    /// })
    /// # }
    /// ```
    pub fn wait(&self) -> Result<()> {
        self.wait_for("Fence::wait")
    }

    /// [`wait`](Fence::wait), refused while the scope is being recorded (`what` says who asked).
    pub(crate) fn wait_for(&self, what: &'static str) -> Result<()> {
        self.shared.refuse_while_recording(what)?;
        if self.shared.is_pending(self.rec) {
            // The host needs the record: what the scope has logged goes to the GPU now.
            self.shared.flush(false, "a host wait")?;
        }
        if let Err(error) = self.event().synchronize() {
            // On the CPU backend a lane whose kernel failed (a panic, a failed check) reaches no
            // later record: the wait fails because of that fault, so report the fault itself.
            if let Some((lane, _)) = self.origin {
                if let Some(fault) = lane.stream.fault() {
                    return Err(fault.into_error(lane.id));
                }
            }
            return Err(Error::Event { call: "cuEventSynchronize", error });
        }
        if let Some((lane, at)) = self.origin {
            lane.note_awaited(at, Cover::Host);
        }
        Ok(())
    }

    /// Enqueues on `st` a wait for this fence, unless `st` recorded it.
    ///
    /// In a deferred scope a wait for a fence of the same scope is logged like any operation
    /// (submitted in program order, after the record it waits for). A wait for another
    /// scope's fence goes to the driver at once, after both scopes have submitted what they
    /// logged (the record first): the other scope may reuse the event once it is submitted.
    fn enqueue_wait(&self, st: &Stream<'scope, '_>) -> Result<()> {
        if st.handle().id() == self.stream {
            return Ok(()); // rule 7: stream order already puts later work after the fence
        }
        let same_scope = std::ptr::eq(self.shared, st.lane.shared);
        let event = self.event.as_ref().expect("a fence holds its event until it is dropped");
        if same_scope && st.defers() {
            st.log_wait(event.clone(), self.rec)?;
        } else {
            if !same_scope {
                self.shared.flush(false, "another scope awaits a fence")?;
            }
            st.traced(
                SpanKind::Wait,
                || "await fence".to_string(),
                || st.handle().wait(event).map_err(|error| Error::Event { call: "cuStreamWaitEvent", error }),
            )?;
        }
        st.lane.inner.waits_enqueued.fetch_add(1, Ordering::Relaxed);
        // A cover names a lane of this scope, which this scope joins; a fence awaited in
        // another (nested) scope or in a recording (whose wait never runs) covers nothing.
        if let (Some((lane, at)), false) = (self.origin, st.lane.shared.capture().is_some()) {
            if std::ptr::eq(self.shared, st.lane.shared) {
                lane.note_awaited(at, Cover::Lane(st.lane.inner.id));
            }
        }
        Ok(())
    }
}

impl Drop for Fence<'_> {
    fn drop(&mut self) {
        if let Some(e) = self.event.take() {
            // No one can await the record any more; the event is idle once it is submitted.
            self.shared.retire_fence(self.rec, e);
        }
    }
}

impl std::fmt::Debug for Fence<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Fence").finish_non_exhaustive()
    }
}

/// Data behind a fence: columns written (or read) on one lane, not usable anywhere until
/// the fence is awaited — on a lane ([`Stream::await_fence`]) or on the host ([`Fenced::wait`]).
///
/// `Fenced<ColumnsMut>` is a hand-off (awaited once, by value); `Fenced<ColumnsRef>` is shared
/// read-only data, such as an upload (awaited by reference, by any number of lanes).
///
/// ```no_run
/// # use sluice_host as sluice;
/// # fn demo(gpu: &sluice::Gpu) -> sluice::Result<()> {
/// sluice::scope(gpu, |s| {
///     let m = s.alloc_buffer::<f32>(256)?;
///     let (a, b, c) = (s.lane()?, s.lane()?, s.lane()?);
///     let written = a.enter(|st| {
///         let mut v = st.bind(m.as_columns_mut());
///         st.zero(&mut v)?;
///         st.fence(v)
///     })?;
///     let shared = written.into_shared();                     // now read-only, for many
///     b.enter(|st| st.await_fence(&shared).map(drop))?;
///     c.enter(|st| st.await_fence(&shared).map(drop))?;
///     Ok(())
/// })
/// # }
/// ```
///
/// # Rule 1 and rule 3
///
/// The fenced data itself is not a view: it cannot be passed to a launch before it is
/// awaited.
///
/// ```compile_fail,E0277
/// # use sluice_host as sluice;
/// # use sluice::{Kernel, LaunchConfig, Mut, Ref};
/// # const SAXPY: Kernel<(Mut<f32>, Ref<f32>, f32)> = unsafe { Kernel::new("", "saxpy") };
/// // SAXPY: y = a·x + y, a `#[kernel]` of yours, or `sluice::kernels::saxpy` (feature "kernels")
/// # fn demo(gpu: &sluice::Gpu, x: &[f32]) -> sluice::Result<()> {
/// sluice::scope(gpu, |s| {
///     let xs = s.upload(x)?;
///     let y = s.alloc_buffer::<f32>(x.len())?;
///     s.lane()?.enter(|st| {
///         let mut y = st.bind(y.as_columns_mut());
///         // error[E0277]: `&Fenced<'_, ColumnsRef<'_, f32>>` cannot be passed for a kernel parameter `Ref<f32>`
///         st.launch(&SAXPY, LaunchConfig::for_elements(x.len(), 256), (&mut y, &xs, 2.0))
///     })
/// })
/// # }
/// ```
///
/// Await it first: `let x = st.await_fence(&xs)?;` then pass `&x`.
pub struct Fenced<'scope, V> {
    value: V,
    fence: Fence<'scope>,
}

impl<'scope, V> Fenced<'scope, V> {
    /// Blocks this host thread until the fence is reached, then returns the value free of
    /// pending work (it can then be bound to any lane without a wait).
    ///
    /// ```no_run
    /// # use sluice_host as sluice;
    /// # fn demo(gpu: &sluice::Gpu) -> sluice::Result<()> {
    /// sluice::scope(gpu, |s| {
    ///     let m = s.alloc_buffer::<f32>(16)?;
    ///     let f = s.lane()?.enter(|st| {
    ///         let mut v = st.bind(m.as_columns_mut());
    ///         st.zero(&mut v)?;
    ///         st.fence(v)
    ///     })?;
    ///     let cols = f.wait()?;                       // ColumnsMut, no pending work
    ///     s.lane()?.enter(|st| { let mut v = st.bind(cols); st.zero(&mut v) })
    /// })
    /// # }
    /// ```
    pub fn wait(self) -> Result<V> {
        self.fence.wait_for("Fenced::wait")?;
        Ok(self.value)
    }

    /// The fence alone (e.g. to order other work after it as well).
    ///
    /// ```no_run
    /// # use sluice_host as sluice;
    /// # fn demo(gpu: &sluice::Gpu) -> sluice::Result<()> {
    /// sluice::scope(gpu, |s| {
    ///     let up = s.upload(&[1u8; 16])?;
    ///     s.lane()?.enter(|st| st.await_fence(up.fence()))?; // order only, no view
    ///     Ok(())
    /// })
    /// # }
    /// ```
    pub fn fence(&self) -> &Fence<'scope> {
        &self.fence
    }

    /// The fenced value, for checks that read its shape or device without awaiting it.
    pub(crate) fn value(&self) -> &V {
        &self.value
    }
}

impl<'scope, T> Fenced<'scope, ColumnsMut<'scope, T>> {
    /// Turns a hand-off into shared read-only data that any number of lanes may await.
    ///
    /// ```no_run
    /// # use sluice_host as sluice;
    /// # fn demo(gpu: &sluice::Gpu) -> sluice::Result<()> {
    /// sluice::scope(gpu, |s| {
    ///     let m = s.alloc_buffer::<f32>(8)?;
    ///     let f = s.lane()?.enter(|st| { let mut v = st.bind(m.as_columns_mut()); st.zero(&mut v)?; st.fence(v) })?;
    ///     let shared = f.into_shared();
    ///     for lane in s.lanes(3)? { lane.enter(|st| st.await_fence(&shared).map(drop))?; }
    ///     Ok(())
    /// })
    /// # }
    /// ```
    pub fn into_shared(self) -> Fenced<'scope, ColumnsRef<'scope, T>> {
        Fenced { value: self.value.into_ref(), fence: self.fence }
    }
}

impl<V: sealed::Columns> Fenced<'_, V> {
    /// Rows of the fenced columns.
    ///
    /// ```no_run
    /// # use sluice_host as sluice;
    /// # fn demo(gpu: &sluice::Gpu) -> sluice::Result<()> {
    /// sluice::scope(gpu, |s| {
    ///     let up = s.upload_matrix(&[0u32; 12], 4, 3)?;
    ///     assert_eq!((up.rows(), up.cols()), (4, 3));
    ///     Ok(())
    /// })
    /// # }
    /// ```
    pub fn rows(&self) -> usize {
        self.value.shape().0
    }

    /// Number of fenced columns.
    pub fn cols(&self) -> usize {
        self.value.shape().1
    }
}

impl<V: std::fmt::Debug> std::fmt::Debug for Fenced<'_, V> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Fenced").field("value", &self.value).finish_non_exhaustive()
    }
}

mod sealed {
    /// Only sluice can call the trait methods below: they hand out views without a wait.
    pub struct Token(pub(super) ());
    pub trait Sealed {}

    /// Implemented for no type: the bound of the `Awaitable` impls of `Result`, whose only
    /// use is this message.
    #[diagnostic::on_unimplemented(
        message = "`{Self}` is a `Result`, not a hand-off: a `?` is missing where the fence was made",
        label = "a `Result` holding a hand-off, not the hand-off",
        note = "a lane's `enter` returned `Ok(st.fence(view))`: write `Ok(st.fence(view)?)` there, or return `st.fence(view)` itself, and `enter(..)?` gives the hand-off; see docs/compile-errors.md"
    )]
    pub trait MissingQuestionMark<'scope> {
        /// Left unknown, so that the awaited value's later uses raise no second error.
        type Output<'lane>;
        /// Cannot be called: no type implements the trait.
        fn unmet_fence(&self) -> &super::Fence<'scope>;
        /// Cannot be called: no type implements the trait.
        fn unmet_output<'lane>(self, token: Token) -> Self::Output<'lane>;
    }

    /// Unbranded columns ([`ColumnsMut`](crate::ColumnsMut), [`ColumnsRef`](crate::ColumnsRef)):
    /// what [`Fenced::rows`](super::Fenced::rows) reads.
    pub trait Columns {
        /// `(rows, cols)`.
        fn shape(&self) -> (usize, usize);
    }
    impl<T> Columns for crate::matrix::ColumnsMut<'_, T> {
        fn shape(&self) -> (usize, usize) {
            (self.rows(), self.cols())
        }
    }
    impl<T> Columns for crate::matrix::ColumnsRef<'_, T> {
        fn shape(&self) -> (usize, usize) {
            (self.rows(), self.cols())
        }
    }
}
use sealed::Token;

/// Something a lane can await: a hand-off `Fenced<ColumnsMut>` (by value), shared data
/// `&Fenced<ColumnsRef>` (by reference), a plain `&Fence`, or persistent device memory
/// `&DeviceMatrix` (an upload made once outside the scope: nothing to wait for, bound
/// read-only).
///
/// ```no_run
/// # use sluice_host as sluice;
/// # fn demo(gpu: &sluice::Gpu) -> sluice::Result<()> {
/// sluice::scope(gpu, |s| {
///     let up = s.upload(&[1.0f32; 4])?;                    // &Fenced<ColumnsRef>: shared
///     let m = s.alloc_buffer::<f32>(4)?;
///     let (a, b) = (s.lane()?, s.lane()?);
///     let f = a.enter(|st| st.fence(st.bind(m.as_columns_mut())))?; // Fenced<ColumnsMut>: hand-off
///     b.enter(|st| {
///         let _x = st.await_fence(&up)?;
///         let _y = st.await_fence(f)?;
///         Ok(())
///     })
/// })
/// # }
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be awaited by a lane",
    label = "not a hand-off, an upload or a fence",
    note = "`await_fence` takes a hand-off by value (`await_fence(handed)`, not `&handed`), an upload by reference (`&Fenced<ColumnsRef>` from `Scope::upload`) or a `&Fence`; a `Result` of one means a missing `?`; see docs/compile-errors.md"
)]
pub trait Awaitable<'scope>: sealed::Sealed {
    /// What the awaiting lane gets: a view branded with its `'lane`, or `()`.
    type Output<'lane>;
    #[doc(hidden)]
    fn fence_ref(&self) -> Option<&Fence<'scope>>;
    #[doc(hidden)]
    fn into_output<'lane>(self, token: Token) -> Self::Output<'lane>;
}

impl<T> sealed::Sealed for Fenced<'_, ColumnsMut<'_, T>> {}
impl<'scope, T> Awaitable<'scope> for Fenced<'scope, ColumnsMut<'scope, T>> {
    type Output<'lane> = ColumnViewMut<'scope, 'lane, T>;
    fn fence_ref(&self) -> Option<&Fence<'scope>> {
        Some(&self.fence)
    }
    fn into_output<'lane>(self, _: Token) -> Self::Output<'lane> {
        ColumnViewMut::new(self.value.span())
    }
}

impl<T> sealed::Sealed for &Fenced<'_, ColumnsRef<'_, T>> {}
impl<'scope, T> Awaitable<'scope> for &Fenced<'scope, ColumnsRef<'scope, T>> {
    type Output<'lane> = ColumnView<'scope, 'lane, T>;
    fn fence_ref(&self) -> Option<&Fence<'scope>> {
        Some(&self.fence)
    }
    fn into_output<'lane>(self, _: Token) -> Self::Output<'lane> {
        ColumnView::new(self.value.span())
    }
}

impl<T> sealed::Sealed for Fenced<'_, ColumnsRef<'_, T>> {}
impl<'scope, T> Awaitable<'scope> for Fenced<'scope, ColumnsRef<'scope, T>> {
    type Output<'lane> = ColumnView<'scope, 'lane, T>;
    fn fence_ref(&self) -> Option<&Fence<'scope>> {
        Some(&self.fence)
    }
    fn into_output<'lane>(self, _: Token) -> Self::Output<'lane> {
        ColumnView::new(self.value.span())
    }
}

impl sealed::Sealed for &Fence<'_> {}
impl<'scope> Awaitable<'scope> for &Fence<'scope> {
    type Output<'lane> = ();
    fn fence_ref(&self) -> Option<&Fence<'scope>> {
        Some(self)
    }
    fn into_output<'lane>(self, _: Token) -> Self::Output<'lane> {}
}

/// Persistent device memory ([`Gpu::upload`](crate::Gpu::upload), a matrix owned outside the
/// scope) has no pending work: awaiting it enqueues nothing and binds it read-only, as
/// [`Stream::bind_ref`] does. So a program written with `s.upload(&data)` inside a loop of
/// scopes keeps its lanes unchanged when the upload moves out of the loop (`gpu.upload`).
impl<T> sealed::Sealed for &DeviceMatrix<T> {}
impl<'scope, T: Pod> Awaitable<'scope> for &'scope DeviceMatrix<T> {
    type Output<'lane> = ColumnView<'scope, 'lane, T>;
    fn fence_ref(&self) -> Option<&Fence<'scope>> {
        None
    }
    fn into_output<'lane>(self, _: Token) -> Self::Output<'lane> {
        ColumnView::new(self.as_columns().span())
    }
}

// A `Result` awaited in place of what it holds: the `?` is missing where the hand-off was
// made (`Ok(st.fence(v))` returns `Result<Result<Fenced, _>, _>` from `enter`). These impls
// exist only to say so: their bound is never met, so rustc reports `MissingQuestionMark`'s
// message instead of `Awaitable`'s, which would speak of references and values.
impl<T, E> sealed::Sealed for Result<T, E> {}
impl<T, E> sealed::Sealed for &Result<T, E> {}

#[doc(hidden)]
impl<'scope, T, E> Awaitable<'scope> for Result<T, E>
where
    Self: sealed::MissingQuestionMark<'scope>,
{
    type Output<'lane> = <Self as sealed::MissingQuestionMark<'scope>>::Output<'lane>;
    fn fence_ref(&self) -> Option<&Fence<'scope>> {
        Some(sealed::MissingQuestionMark::unmet_fence(self))
    }
    fn into_output<'lane>(self, token: Token) -> Self::Output<'lane> {
        sealed::MissingQuestionMark::unmet_output(self, token)
    }
}

#[doc(hidden)]
impl<'scope, T, E> Awaitable<'scope> for &Result<T, E>
where
    Self: sealed::MissingQuestionMark<'scope>,
{
    type Output<'lane> = <Self as sealed::MissingQuestionMark<'scope>>::Output<'lane>;
    fn fence_ref(&self) -> Option<&Fence<'scope>> {
        Some(sealed::MissingQuestionMark::unmet_fence(self))
    }
    fn into_output<'lane>(self, token: Token) -> Self::Output<'lane> {
        sealed::MissingQuestionMark::unmet_output(self, token)
    }
}

/// A view a lane can fence: its columns leave the lane unbranded, behind the fence.
///
/// ```no_run
/// # use sluice_host as sluice;
/// # fn demo(gpu: &sluice::Gpu) -> sluice::Result<()> {
/// sluice::scope(gpu, |s| {
///     let m = s.alloc_matrix::<f32>(4, 2)?;
///     let (a, b) = m.split_columns_mut(1).unwrap();
///     s.lane()?.enter(|st| {
///         let _mutable = st.fence(st.bind(a))?;               // Fenced<ColumnsMut>
///         let _shared = st.fence(st.bind(b).into_view())?;    // Fenced<ColumnsRef>
///         Ok(())
///     })
/// })
/// # }
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be fenced",
    label = "not a view bound on this lane",
    note = "`fence` takes a view that `bind` or `bind_ref` returned in this `enter` (`st.fence(st.bind(columns))`); to mark a point of the lane without a view, use `record`"
)]
pub trait Fenceable<'scope, 'lane>: sealed::Sealed {
    /// The unbranded columns: [`ColumnsMut`] for a mutable view, [`ColumnsRef`] for a read-only one.
    type Unbranded;
    #[doc(hidden)]
    fn unbrand(self, token: Token) -> Self::Unbranded;
}

impl<T> sealed::Sealed for ColumnViewMut<'_, '_, T> {}
impl<'scope, 'lane, T> Fenceable<'scope, 'lane> for ColumnViewMut<'scope, 'lane, T> {
    type Unbranded = ColumnsMut<'scope, T>;
    fn unbrand(self, _: Token) -> ColumnsMut<'scope, T> {
        ColumnsMut::new(self.span())
    }
}

impl<T> sealed::Sealed for ColumnView<'_, '_, T> {}
impl<'scope, 'lane, T> Fenceable<'scope, 'lane> for ColumnView<'scope, 'lane, T> {
    type Unbranded = ColumnsRef<'scope, T>;
    fn unbrand(self, _: Token) -> ColumnsRef<'scope, T> {
        ColumnsRef::new(self.span())
    }
}

impl<'scope, 'lane> Stream<'scope, 'lane> {
    /// Awaits a fence on this lane and returns what it guards, bound to this lane.
    ///
    /// Enqueues one `cuStreamWaitEvent` if the fence was recorded on another lane — the GPU
    /// waits, this host thread does not — and nothing if it was recorded on this lane, or if
    /// it is persistent memory uploaded before the scope:
    ///
    /// ```no_run
    /// # use sluice_host as sluice;
    /// # fn demo(gpu: &sluice::Gpu, data: &[f32]) -> sluice::Result<()> {
    /// let shared = gpu.upload(data)?;                   // once, before a loop of scopes
    /// for _step in 0..100 {
    ///     sluice::scope(gpu, |s| {
    ///         s.lane()?.enter(|st| {
    ///             let view = st.await_fence(&shared)?;  // as for `s.upload`: no wait needed
    ///             assert_eq!(st.stats().waits_enqueued, 0);
    ///             # let _ = view;
    ///             Ok(())
    ///         })
    ///     })?;
    /// }
    /// # Ok(()) }
    /// ```
    ///
    /// ```no_run
    /// # use sluice_host as sluice;
    /// # fn demo(gpu: &sluice::Gpu, data: &[f32]) -> sluice::Result<()> {
    /// sluice::scope(gpu, |s| {
    ///     let shared = s.upload(data)?;                 // Fenced<ColumnsRef>
    ///     s.lane()?.enter(|st| {
    ///         let view = st.await_fence(&shared)?;      // ColumnView on this lane
    ///         assert_eq!(st.stats().waits_enqueued, 1); // the upload ran on another lane
    ///         # let _ = view;
    ///         Ok(())
    ///     })
    /// })
    /// # }
    /// ```
    pub fn await_fence<A: Awaitable<'scope>>(&self, a: A) -> Result<A::Output<'lane>> {
        if let Some(fence) = a.fence_ref() {
            fence.enqueue_wait(self)?;
        }
        Ok(a.into_output(Token(())))
    }

    /// Awaits an upload started outside the scope ([`Gpu::upload_async`](crate::Gpu::upload_async))
    /// on this lane — a GPU-side wait for that copy's event, the host goes on — and returns
    /// the uploaded matrix read-only, bound to this lane. The upload stays borrowed for the
    /// scope, so it cannot be awaited on the host (and its matrix freed) meanwhile.
    ///
    /// ```no_run
    /// # use sluice_host as sluice;
    /// # fn demo(gpu: &sluice::Gpu) -> sluice::Result<()> {
    /// let up = gpu.upload_async(gpu.pinned_buffer::<f32>(256)?)?;
    /// sluice::scope(gpu, |s| {
    ///     for lane in s.lanes(2)? {
    ///         lane.enter(|st| st.await_upload(&up).map(drop))?;   // each lane waits on the GPU
    ///     }
    ///     Ok(())
    /// })?;
    /// # Ok(()) }
    /// ```
    pub fn await_upload<T: Pod>(&self, up: &'scope PendingUpload<T>) -> Result<ColumnView<'scope, 'lane, T>> {
        // A recording cannot wait for work outside it; await the upload before recording.
        self.lane.shared.refuse_while_recording("Stream::await_upload")?;
        let (m, done) = up.parts();
        if m.as_columns().span().ctx != self.gpu().ctx_id() {
            return Err(Error::WrongDevice { what: "await_upload" });
        }
        self.traced(
            SpanKind::Wait,
            || "await upload".to_string(),
            || self.handle().wait(done).map_err(|error| Error::Event { call: "cuStreamWaitEvent", error }),
        )?;
        self.lane.inner.waits_enqueued.fetch_add(1, Ordering::Relaxed);
        Ok(ColumnView::new(m.as_columns().span()))
    }

    /// Records a fence after everything enqueued on this lane so far and returns the view's
    /// columns unbranded behind it: the hand-off to another lane or to the host.
    ///
    /// ```no_run
    /// # use sluice_host as sluice;
    /// # fn demo(gpu: &sluice::Gpu) -> sluice::Result<()> {
    /// sluice::scope(gpu, |s| {
    ///     let m = s.alloc_buffer::<f32>(64)?;
    ///     let (a, b) = (s.lane()?, s.lane()?);
    ///     let handed = a.enter(|st| {
    ///         let mut v = st.bind(m.as_columns_mut());
    ///         st.zero(&mut v)?;
    ///         st.fence(v)
    ///     })?;
    ///     b.enter(|st| { let mut v = st.await_fence(handed)?; st.zero(&mut v) })
    /// })
    /// # }
    /// ```
    pub fn fence<V: Fenceable<'scope, 'lane>>(&self, view: V) -> Result<Fenced<'scope, V::Unbranded>> {
        let fence = self.record()?;
        Ok(Fenced { value: view.unbrand(Token(())), fence })
    }

    /// Fan-in: awaits every hand-off and joins them into one view of contiguous columns,
    /// e.g. to copy a whole matrix (or a column range) back with one copy.
    ///
    /// # Errors
    /// [`Error::NotAdjacent`] if the columns do not form one contiguous range of whole
    /// columns of one matrix — row ranges (`split_rows`) never join, even the same rows of
    /// adjacent columns, since the joined view would cover the rows between them (checked
    /// before any wait is enqueued); [`Error::ZeroSized`] if there are none.
    ///
    /// ```no_run
    /// # use sluice_host as sluice;
    /// # fn demo(gpu: &sluice::Gpu) -> sluice::Result<()> {
    /// let mut host = gpu.pinned_matrix::<f32>(1024, 8)?;
    /// sluice::scope(gpu, |s| {
    ///     let out = s.alloc_matrix::<f32>(1024, 8)?;
    ///     let mut handed = Vec::new();
    ///     for (lane, col) in s.lanes(8)?.into_iter().zip(out.columns_mut()) {
    ///         handed.push(lane.enter(|st| {
    ///             let mut v = st.bind(col);
    ///             st.zero(&mut v)?;
    ///             st.fence(v)
    ///         })?);
    ///     }
    ///     let collector = s.lane()?;
    ///     let done = collector.enter(|st| {
    ///         let all = st.await_all(handed)?;                // 8 waits, one view
    ///         st.copy_to_host(&all, host.as_pinned_mut())    // one copy of the whole matrix
    ///     })?;
    ///     done.wait().map(drop)
    /// })?;
    /// # Ok(()) }
    /// ```
    pub fn await_all<T>(
        &self,
        handed: impl IntoIterator<Item = Fenced<'scope, ColumnsMut<'scope, T>>>,
    ) -> Result<ColumnViewMut<'scope, 'lane, T>> {
        self.try_await_all(handed).map_err(|(e, _)| e)
    }

    /// [`await_all`](Self::await_all), giving the hand-offs back (sorted by address) when
    /// they cannot be joined, so that they can be awaited one by one instead. On
    /// [`Error::NotAdjacent`] or [`Error::ZeroSized`] no wait was enqueued; on a driver error
    /// some waits may have been.
    ///
    /// ```no_run
    /// # use sluice_host as sluice;
    /// # use sluice::{ColumnsMut, Fenced};
    /// # fn demo<'s>(st: &sluice::Stream<'s, '_>, handed: Vec<Fenced<'s, ColumnsMut<'s, f32>>>) -> sluice::Result<()> {
    /// match st.try_await_all(handed) {
    ///     Ok(mut all) => st.zero(&mut all),               // one view, one operation
    ///     Err((_, parts)) => {
    ///         for part in parts {                           // not adjacent: each on its own
    ///             let mut v = st.await_fence(part)?;
    ///             st.zero(&mut v)?;
    ///         }
    ///         Ok(())
    ///     }
    /// }
    /// # }
    /// ```
    #[allow(clippy::type_complexity)]
    pub fn try_await_all<T>(
        &self,
        handed: impl IntoIterator<Item = Fenced<'scope, ColumnsMut<'scope, T>>>,
    ) -> std::result::Result<ColumnViewMut<'scope, 'lane, T>, (Error, Vec<Fenced<'scope, ColumnsMut<'scope, T>>>)> {
        let mut handed: Vec<_> = handed.into_iter().collect();
        handed.sort_by_key(|f| f.value.span().ptr);
        let mut joined: Option<Span> = None;
        for f in &handed {
            let s = f.value.span();
            joined = Some(match joined {
                None => s,
                Some(j) => match j.join(s) {
                    Some(j) => j,
                    None => return Err((Error::NotAdjacent, handed)),
                },
            });
        }
        let Some(joined) = joined else { return Err((Error::ZeroSized, handed)) };
        for f in &handed {
            if let Err(e) = f.fence.enqueue_wait(self) {
                return Err((e, handed));
            }
        }
        Ok(ColumnViewMut::new(joined))
    }

    /// A timestamp: a timing event recorded on this lane now, for profiling.
    ///
    /// ```no_run
    /// # use sluice_host as sluice;
    /// # fn demo(gpu: &sluice::Gpu) -> sluice::Result<()> {
    /// sluice::scope(gpu, |s| {
    ///     let (t0, t1) = s.lane()?.enter(|st| Ok::<_, sluice::Error>((st.timestamp()?, st.timestamp()?)))?;
    ///     assert!(t1.elapsed_ms_since(&t0)? >= 0.0);
    ///     Ok(())
    /// })
    /// # }
    /// ```
    pub fn timestamp(&self) -> Result<Timestamp<'scope>> {
        Ok(Timestamp { fence: self.record_fence(true)? })
    }

    /// A plain fence recorded on this lane now (no data attached): awaiting it orders
    /// later work after everything enqueued here so far.
    ///
    /// ```no_run
    /// # use sluice_host as sluice;
    /// # fn demo(gpu: &sluice::Gpu) -> sluice::Result<()> {
    /// sluice::scope(gpu, |s| {
    ///     let (a, b) = (s.lane()?, s.lane()?);
    ///     let f = a.enter(|st| st.record())?;
    ///     b.enter(|st| st.await_fence(&f))?;   // b's later work runs after a's so far
    ///     Ok(())
    /// })
    /// # }
    /// ```
    pub fn record(&self) -> Result<Fence<'scope>> {
        self.record_fence(false)
    }

    /// Submits `work` ([`Stream::submit`]) and records a fence after it: what a copy to the
    /// host does for its [`Pending`](crate::Pending), logged together in a deferred scope.
    ///
    /// # Safety
    /// As [`Stream::submit`].
    pub(crate) unsafe fn submit_fenced(&self, work: Work<'_>, merge: Option<MergeSide>) -> Result<Fence<'scope>> {
        let shared = self.lane.shared;
        let e = shared.take_event(false)?;
        // Read before the work is counted: the fence follows the work, so it covers the count
        // read now plus the work itself (another thread's operation can only make it smaller
        // than the lane's count, which makes a join more careful, never less).
        let before = self.lane.inner.enqueued.load(Ordering::Acquire);
        // SAFETY: the caller's duties.
        let rec = match unsafe { self.submit_then_record(work, merge, Some(&e)) } {
            Ok(rec) => rec,
            Err(error) => {
                shared.recycle_event(e);
                return Err(error);
            }
        };
        self.lane.inner.events_recorded.fetch_add(1, Ordering::Relaxed);
        let origin = Some((self.lane.inner, before + 1));
        Ok(Fence { shared, event: Some(e), rec, stream: self.handle().id(), origin })
    }

    /// A fence of a fresh (or, `timing`, timestamping) event recorded on this lane now (in
    /// a deferred scope: logged, and submitted only if someone may await it).
    fn record_fence(&self, timing: bool) -> Result<Fence<'scope>> {
        let shared = self.lane.shared;
        let e = shared.take_event(timing)?;
        // Read before the record: whatever is counted now was enqueued before the event.
        let at = self.lane.inner.enqueued.load(Ordering::Acquire);
        let rec = match self.defers() {
            true => match shared.log_record(self.lane.inner, e.clone()) {
                Ok(rec) => rec,
                Err(error) => {
                    shared.recycle_event(e);
                    return Err(error);
                }
            },
            false => None,
        };
        if rec.is_none() {
            if let Err(error) = e.record(self.handle()) {
                shared.recycle_event(e);
                return Err(Error::Event { call: "cuEventRecord", error });
            }
        }
        self.lane.inner.events_recorded.fetch_add(1, Ordering::Relaxed);
        let origin = Some((self.lane.inner, at));
        Ok(Fence { shared, event: Some(e), rec, stream: self.handle().id(), origin })
    }
}

/// A point in time on a lane's timeline (a timing-enabled event), for profiling.
///
/// ```no_run
/// # use sluice_host as sluice;
/// # fn demo(gpu: &sluice::Gpu) -> sluice::Result<()> {
/// sluice::scope(gpu, |s| {
///     let start = s.timestamp()?;
///     let end = s.lane()?.enter(|st| st.timestamp())?;
///     println!("{:.3} ms", end.elapsed_ms_since(&start)?);
///     Ok(())
/// })
/// # }
/// ```
pub struct Timestamp<'scope> {
    fence: Fence<'scope>,
}

impl<'scope> Timestamp<'scope> {
    /// Milliseconds from `earlier` to `self` (negative if `self` came first). Blocks this
    /// host thread until both have been reached.
    ///
    /// ```no_run
    /// # use sluice_host as sluice;
    /// # fn demo(gpu: &sluice::Gpu) -> sluice::Result<()> {
    /// sluice::scope(gpu, |s| {
    ///     let (t0, t1) = s.lane()?.enter(|st| Ok::<_, sluice::Error>((st.timestamp()?, st.timestamp()?)))?;
    ///     println!("{} ms", t1.elapsed_ms_since(&t0)?);
    ///     Ok(())
    /// })
    /// # }
    /// ```
    pub fn elapsed_ms_since(&self, earlier: &Timestamp<'scope>) -> Result<f32> {
        earlier.fence.wait_for("Timestamp::elapsed_ms_since")?;
        self.fence.wait_for("Timestamp::elapsed_ms_since")?;
        self.fence
            .event()
            .elapsed_ms_since(earlier.fence.event())
            .map_err(|error| Error::Event { call: "cuEventElapsedTime", error })
    }

    /// The timestamp as a fence (a timestamp orders work like any fence).
    ///
    /// ```no_run
    /// # use sluice_host as sluice;
    /// # fn demo(gpu: &sluice::Gpu) -> sluice::Result<()> {
    /// sluice::scope(gpu, |s| {
    ///     let t = s.timestamp()?;
    ///     s.lane()?.enter(|st| st.await_fence(t.fence()))?;
    ///     Ok(())
    /// })
    /// # }
    /// ```
    pub fn fence(&self) -> &Fence<'scope> {
        &self.fence
    }
}

impl std::fmt::Debug for Timestamp<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Timestamp").finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fences_are_send_and_sync() {
        fn assert<T: Send + Sync>() {}
        assert::<Fence<'static>>();
        assert::<Fenced<'static, ColumnsMut<'static, f32>>>();
        assert::<Timestamp<'static>>();
    }
}
