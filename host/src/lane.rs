//! Lanes: [`Lane`] (a CUDA stream owned by a scope), [`Stream`] (that lane while entered,
//! branded `'lane`: where work is enqueued and views are bound), and [`LaneStats`] (rule 7:
//! what was enqueued, counted).
//!
//! # Rule 1 starts here
//!
//! [`Lane::enter`] is a `for<'lane>` closure: each entry mints a fresh, invariant brand that
//! only this entry's views carry ([`Stream::bind`] stamps it), so a view cannot be used
//! on another lane nor leave the closure. How views leave a lane — fences — is
//! [`fence`](crate::fence)'s business.

use std::marker::PhantomData;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use bytemuck::Pod;

use crate::capture::Capture;
use crate::device::Gpu;
use crate::error::{Error, LaneId, Result};
use crate::handle::{Event, StreamHandle};
use crate::matrix::{ColumnsMut, ColumnsRef};
use crate::module::{LaunchTarget, SourceSpan};
use crate::trace::{Recorder, SpanKind};
use crate::view::{Brand, ColumnView, ColumnViewMut, Invariant};

/// What the lanes of one scope share: the device, the scope's idle events (fences dropped
/// in this scope are reused by its later fences before the device's pool is asked), and the
/// trace recorder when the scope is traced.
pub(crate) struct LaneShared {
    pub(crate) gpu: Gpu,
    /// Idle events: `[fence events, timing events]`.
    idle: Mutex<[Vec<Event>; 2]>,
    trace: Option<Recorder>,
    capture: Option<Capture>,
}

impl LaneShared {
    /// Lanes' shared state, starting with `idle` events (kept from earlier scopes).
    pub(crate) fn new(gpu: Gpu, idle: Vec<Event>, trace: Option<Recorder>, capture: Option<Capture>) -> LaneShared {
        let (timing, fences): (Vec<Event>, Vec<Event>) = idle.into_iter().partition(|e| e.timing());
        LaneShared { gpu, idle: Mutex::new([fences, timing]), trace, capture }
    }

    /// The recording in progress, if this scope is being recorded into a graph.
    pub(crate) fn capture(&self) -> Option<&Capture> {
        self.capture.as_ref()
    }

    /// `Err(Error::Recording)` if this scope is being recorded: `what` needs work to run.
    pub(crate) fn refuse_while_recording(&self, what: &'static str) -> Result<()> {
        match self.capture {
            Some(_) => Err(Error::Recording { what }),
            None => Ok(()),
        }
    }

    /// The idle events, for the next scope once this one has joined.
    pub(crate) fn take_idle_events(&self) -> Vec<Event> {
        let mut idle = self.idle.lock().unwrap_or_else(|p| p.into_inner());
        let [fences, timing] = &mut *idle;
        let mut all = std::mem::take(fences);
        all.append(timing);
        all
    }

    /// The trace recorder, if the scope is traced.
    pub(crate) fn recorder(&self) -> Option<&Recorder> {
        self.trace.as_ref()
    }

    /// An event for a fence or (`timing`) a timestamp: an idle one of this scope, of the
    /// device's pool, or a new one.
    pub(crate) fn take_event(&self, timing: bool) -> Result<Event> {
        if let Some(e) = self.idle.lock().unwrap_or_else(|p| p.into_inner())[timing as usize].pop() {
            return Ok(e);
        }
        self.gpu.take_event(timing)
    }

    /// Gives an event back once no one can wait on it through sluice any more. Waits
    /// already enqueued keep waiting on the record they saw, so re-recording is safe.
    pub(crate) fn recycle_event(&self, e: Event) {
        self.idle.lock().unwrap_or_else(|p| p.into_inner())[e.timing() as usize].push(e);
    }
}

/// A lane's stream and counters. Lives (boxed) in its scope's state until the scope ends.
pub(crate) struct LaneInner {
    pub(crate) stream: StreamHandle,
    pub(crate) id: LaneId,
    pub(crate) events_recorded: AtomicU64,
    pub(crate) waits_enqueued: AtomicU64,
    pub(crate) launches: AtomicU64,
    pub(crate) copies: AtomicU64,
    /// The kernels launched on this lane in this scope (each once), for fault attribution.
    pub(crate) kernels: Mutex<Vec<(&'static str, Option<SourceSpan>)>>,
    /// Stream-ordered operations enqueued on this lane so far (every launch, copy, fill,
    /// wait and replay goes through `Stream::traced`, which counts it).
    pub(crate) enqueued: AtomicU64,
    /// The latest of this lane's fences that was awaited elsewhere: how many operations
    /// came before it, and who awaited it. While no operation follows it, the lane is done
    /// once its awaiter is (see [`LaneInner::covered_by`]).
    covered: Mutex<Option<(u64, Cover)>>,
}

/// Who awaited a lane's fence: another lane (GPU-side), or the host.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Cover {
    Lane(LaneId),
    Host,
}

impl LaneInner {
    pub(crate) fn new(stream: StreamHandle, id: LaneId) -> LaneInner {
        LaneInner {
            stream,
            id,
            events_recorded: AtomicU64::new(0),
            waits_enqueued: AtomicU64::new(0),
            launches: AtomicU64::new(0),
            copies: AtomicU64::new(0),
            kernels: Mutex::new(Vec::new()),
            enqueued: AtomicU64::new(0),
            covered: Mutex::new(None),
        }
    }

    /// Notes that a fence recorded after `at` operations of this lane was awaited by `by`
    /// (and completed for the host, or is waited for by a lane).
    pub(crate) fn note_awaited(&self, at: u64, by: Cover) {
        let mut covered = self.covered.lock().unwrap_or_else(|p| p.into_inner());
        if covered.is_none_or(|(seen, _)| at >= seen) {
            *covered = Some((at, by));
        }
    }

    /// Who this lane's last operation was awaited by: `Some` when a fence recorded after the
    /// lane's last operation was awaited by the host (then the lane is idle) or by another
    /// lane (then the lane is idle once that lane is). The scope's end joins such a lane
    /// through its awaiter instead of synchronizing its stream.
    pub(crate) fn covered_by(&self) -> Option<Cover> {
        let covered = *self.covered.lock().unwrap_or_else(|p| p.into_inner());
        covered.filter(|(at, _)| *at == self.enqueued.load(Ordering::Acquire)).map(|(_, by)| by)
    }

    /// Notes a launch of `f` on this lane (once per kernel per scope).
    pub(crate) fn note_launch(&self, f: &LaunchTarget) {
        self.launches.fetch_add(1, Ordering::Relaxed);
        let mut kernels = self.kernels.lock().unwrap_or_else(|p| p.into_inner());
        if !kernels.iter().any(|(name, _)| std::ptr::eq(*name, f.name) || *name == f.name) {
            kernels.push((f.name, f.source));
        }
    }

    /// This (joined, idle) lane again, as lane `id` of a new scope, its counters at zero.
    pub(crate) fn reused(mut self: Box<Self>, id: LaneId) -> Box<Self> {
        self.id = id;
        for c in [&self.events_recorded, &self.waits_enqueued, &self.launches, &self.copies] {
            c.store(0, Ordering::Relaxed);
        }
        self.kernels.get_mut().unwrap_or_else(|p| p.into_inner()).clear();
        self.enqueued.store(0, Ordering::Relaxed);
        *self.covered.get_mut().unwrap_or_else(|p| p.into_inner()) = None;
        self
    }

    pub(crate) fn stats(&self) -> LaneStats {
        LaneStats {
            lane: self.id,
            events_recorded: self.events_recorded.load(Ordering::Relaxed),
            waits_enqueued: self.waits_enqueued.load(Ordering::Relaxed),
            launches: self.launches.load(Ordering::Relaxed),
            copies: self.copies.load(Ordering::Relaxed),
        }
    }
}

/// What sluice enqueued on one lane so far (rule 7: no hidden work). Every event and
/// every wait counted here was asked for by the program: a fence, a pending copy, a
/// timestamp, an await of another lane's fence. Awaiting a fence on the lane that
/// recorded it enqueues nothing and counts nothing.
///
/// ```no_run
/// # fn demo(gpu: &sluice_host::Gpu) -> sluice_host::Result<()> {
/// sluice_host::scope(gpu, |s| {
///     let lane = s.lane()?;
///     let fence = lane.enter(|st| st.record())?;
///     lane.enter(|st| st.await_fence(&fence))?;     // same lane: nothing enqueued
///     assert_eq!(lane.stats().waits_enqueued, 0);
///     assert_eq!(lane.stats().events_recorded, 1);
///     Ok(())
/// })
/// # }
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LaneStats {
    /// Which lane of its scope.
    pub lane: LaneId,
    /// Events recorded on this lane (fences, pending copies, timestamps).
    pub events_recorded: u64,
    /// `cuStreamWaitEvent` calls enqueued on this lane.
    pub waits_enqueued: u64,
    /// Kernel launches enqueued.
    pub launches: u64,
    /// Copies and fills enqueued.
    pub copies: u64,
}

/// One lane of a scope: a CUDA stream (non-blocking). `Copy`; enter it to enqueue work.
///
/// The std analogue is a thread of a [`std::thread::scope`]: work on one lane runs in
/// order, work on different lanes runs concurrently, and the scope joins every lane.
///
/// A lane belongs to its scope and cannot outlive it (the scope has joined its stream and
/// returned it to the device's pool):
///
/// ```compile_fail
/// # fn demo(gpu: &sluice_host::Gpu) -> sluice_host::Result<()> {
/// let lane = sluice_host::scope(gpu, |s| s.lane())?; // error: lifetime may not live long enough
/// # let _ = lane; Ok(()) }
/// ```
///
/// Create lanes inside the scope, for the work of that scope.
///
/// ```no_run
/// # fn demo(gpu: &sluice_host::Gpu) -> sluice_host::Result<()> {
/// sluice_host::scope(gpu, |s| {
///     let lane = s.lane()?;
///     let m = s.alloc_buffer::<u32>(64)?;
///     lane.enter(|st| {
///         let mut v = st.bind(m.as_columns_mut());
///         st.zero(&mut v)
///     })?;
///     assert_eq!(lane.stats().copies, 1);
///     Ok(())
/// })
/// # }
/// ```
pub struct Lane<'scope> {
    pub(crate) shared: &'scope LaneShared,
    pub(crate) inner: &'scope LaneInner,
    /// Invariant in 'scope: a covariant lane could shrink to a shorter `'scope`, and its
    /// stream would then accept borrows that end before the scope joins (rule 5).
    _scope: Invariant<'scope>,
}

impl Clone for Lane<'_> {
    fn clone(&self) -> Self {
        *self
    }
}
impl Copy for Lane<'_> {}

impl std::fmt::Debug for Lane<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Lane").field("id", &self.inner.id).finish()
    }
}

impl<'scope> Lane<'scope> {
    /// A lane of the scope whose lanes share `shared` (only `Scope` makes them).
    pub(crate) fn new(shared: &'scope LaneShared, inner: &'scope LaneInner) -> Self {
        Lane { shared, inner, _scope: PhantomData }
    }

    /// Enters the lane: runs `f` with the lane's [`Stream`], branded with a fresh lifetime
    /// `'lane` that only this call's views carry.
    ///
    /// Everything `f` enqueues runs on this lane, in order. Views bound inside cannot
    /// leave `f` (its result type cannot name `'lane`) nor be used on another lane; hand
    /// data on with a fence. Entering does not block and enqueues nothing by itself.
    ///
    /// ```no_run
    /// # fn demo(gpu: &sluice_host::Gpu) -> sluice_host::Result<()> {
    /// sluice_host::scope(gpu, |s| {
    ///     let m = s.alloc_buffer::<f32>(256)?;
    ///     let lane = s.lane()?;
    ///     let fenced = lane.enter(|st| {
    ///         let mut v = st.bind(m.as_columns_mut());
    ///         st.zero(&mut v)?;
    ///         st.fence(v)          // unbranded, fenced: may leave the closure
    ///     })?;
    ///     let _cols = fenced.wait()?;   // or await it on another lane
    ///     Ok(())
    /// })
    /// # }
    /// ```
    ///
    /// # Lifetimes
    ///
    /// `for<'lane>`: the closure must work for any brand, so `'lane` is unrelated to every
    /// other lifetime, in particular to other entered lanes' brands. This is the branding
    /// trick of `generativity`/`GhostCell`.
    pub fn enter<R>(&self, f: impl for<'lane> FnOnce(&Stream<'scope, 'lane>) -> R) -> R {
        f(&Stream::new(*self))
    }

    /// What sluice has enqueued on this lane so far.
    ///
    /// ```no_run
    /// # fn demo(gpu: &sluice_host::Gpu) -> sluice_host::Result<()> {
    /// sluice_host::scope(gpu, |s| {
    ///     let lane = s.lane()?;
    ///     assert_eq!(lane.stats().events_recorded, 0);
    ///     Ok(())
    /// })
    /// # }
    /// ```
    pub fn stats(&self) -> LaneStats {
        self.inner.stats()
    }

    /// The lane's index in its scope (creation order, from 0).
    ///
    /// ```no_run
    /// # fn demo(gpu: &sluice_host::Gpu) -> sluice_host::Result<()> {
    /// sluice_host::scope(gpu, |s| {
    ///     let lanes = s.lanes(3)?;
    ///     assert_eq!(lanes[2].index(), 2);
    ///     Ok(())
    /// })
    /// # }
    /// ```
    pub fn index(&self) -> usize {
        match self.inner.id {
            LaneId::Lane(n) => n,
            // Only sluice itself enters the upload lane; no `Lane` of it reaches a program.
            LaneId::Upload => usize::MAX,
        }
    }

    /// Which lane of its scope this is.
    ///
    /// ```no_run
    /// # fn demo(gpu: &sluice_host::Gpu) -> sluice_host::Result<()> {
    /// sluice_host::scope(gpu, |s| {
    ///     let lanes = s.lanes(2)?;
    ///     assert_eq!(lanes[1].id(), sluice_host::LaneId::Lane(1));
    ///     Ok(())
    /// })
    /// # }
    /// ```
    pub fn id(&self) -> LaneId {
        self.inner.id
    }
}

/// An entered lane: the CUDA stream work is enqueued on, branded `'lane`.
///
/// Only [`Lane::enter`] makes one, and only for the duration of its closure. Views bound
/// here carry the same `'lane`, so they work with this `Stream` and no other.
///
/// Why two types for one CUDA stream: a [`Lane`] is the stream as the scope owns it —
/// `Copy`, nameable outside any closure, but with no way to enqueue work. A `Stream` is the
/// same stream *while entered*, carrying the brand `'lane` that its views share; the name says
/// what it is on the device (a `cudaStream_t`), and every enqueuing method lives here
/// ([`launch`](Stream::launch), [`copy_to_host`](Stream::copy_to_host),
/// [`fence`](Stream::fence), [`await_fence`](Stream::await_fence), ...).
///
/// ```no_run
/// # use sluice_host::{Kernel, LaunchConfig, Mut, Ref};
/// # const SAXPY: Kernel<(Mut<f32>, Ref<f32>, f32)> = unsafe { Kernel::new("", "saxpy") };
/// # fn demo(gpu: &sluice_host::Gpu, x: &[f32]) -> sluice_host::Result<()> {
/// sluice_host::scope(gpu, |s| {
///     let xs = s.upload(x)?;
///     let y = s.alloc_buffer::<f32>(x.len())?;
///     s.lane()?.enter(|st| {
///         let x = st.await_fence(&xs)?;
///         let mut y = st.bind(y.as_columns_mut());
///         st.zero(&mut y)?;
///         st.launch(&SAXPY, LaunchConfig::for_elements(x.len(), 256), (&mut y, &x, 2.0))
///     })
/// })
/// # }
/// ```
pub struct Stream<'scope, 'lane> {
    pub(crate) lane: Lane<'scope>,
    /// This entry's brand; without it, views of one lane would fit another's launches.
    _brand: Brand<'lane>,
}

impl<'scope, 'lane> Stream<'scope, 'lane> {
    pub(crate) fn new(lane: Lane<'scope>) -> Self {
        Stream { lane, _brand: PhantomData }
    }

    /// The stream this lane enqueues on.
    pub(crate) fn handle(&self) -> &'scope StreamHandle {
        &self.lane.inner.stream
    }

    /// The device this lane runs on.
    pub(crate) fn gpu(&self) -> &'scope Gpu {
        &self.lane.shared.gpu
    }

    /// Runs `enqueue` (one operation enqueued on this lane); in a traced scope, brackets it
    /// with timing events and host instants, named by `name`. One branch otherwise.
    pub(crate) fn traced<R>(
        &self,
        kind: SpanKind,
        name: impl FnOnce() -> String,
        enqueue: impl FnOnce() -> Result<R>,
    ) -> Result<R> {
        // Counted once it is enqueued, failed or not (a fence reads the count *before* it
        // records its event, so an operation that another thread enqueues after the event can
        // never be counted as before it: the count only ever makes a join more careful).
        struct Count<'a>(&'a AtomicU64);
        impl Drop for Count<'_> {
            fn drop(&mut self) {
                self.0.fetch_add(1, Ordering::AcqRel);
            }
        }
        let _count = Count(&self.lane.inner.enqueued);
        let Some(rec) = &self.lane.shared.trace else { return enqueue() };
        let (gpu, stream) = (self.gpu(), self.handle());
        let open = rec.begin(gpu, stream)?;
        let r = enqueue()?;
        rec.end(gpu, stream, open, self.lane.inner.id, kind, name())?;
        Ok(r)
    }

    /// The lane this stream belongs to.
    ///
    /// ```no_run
    /// # fn demo(gpu: &sluice_host::Gpu) -> sluice_host::Result<()> {
    /// sluice_host::scope(gpu, |s| {
    ///     let lane = s.lane()?;
    ///     lane.enter(|st| assert_eq!(st.lane().index(), lane.index()));
    ///     Ok(())
    /// })
    /// # }
    /// ```
    pub fn lane(&self) -> Lane<'scope> {
        self.lane
    }

    /// What sluice has enqueued on this lane so far.
    ///
    /// ```no_run
    /// # fn demo(gpu: &sluice_host::Gpu) -> sluice_host::Result<()> {
    /// sluice_host::scope(gpu, |s| {
    ///     s.lane()?.enter(|st| assert_eq!(st.stats().launches, 0));
    ///     Ok(())
    /// })
    /// # }
    /// ```
    pub fn stats(&self) -> LaneStats {
        self.lane.inner.stats()
    }

    /// Binds columns to this lane: the device's `&mut [T]` becomes a view that this lane's
    /// launches and copies accept.
    ///
    /// The columns carry no pending work (they come straight from a matrix, or from a fence
    /// the host awaited), so no wait is needed. They must be borrowed for the whole scope,
    /// because work enqueued with the view may run until the scope joins.
    ///
    /// ```no_run
    /// # fn demo(gpu: &sluice_host::Gpu) -> sluice_host::Result<()> {
    /// sluice_host::scope(gpu, |s| {
    ///     let m = s.alloc_matrix::<f32>(64, 4)?;
    ///     let (a, b) = m.split_columns_mut(2).unwrap();
    ///     let (la, lb) = (s.lane()?, s.lane()?);
    ///     la.enter(|st| { let mut v = st.bind(a); st.zero(&mut v) })?;
    ///     lb.enter(|st| { let mut v = st.bind(b); st.zero(&mut v) })?;   // disjoint: concurrent
    ///     Ok(())
    /// })
    /// # }
    /// ```
    ///
    /// # Lifetimes
    ///
    /// The columns must live for `'scope`; a matrix owned inside the closure does not:
    ///
    /// ```compile_fail,E0597
    /// # fn demo(gpu: &sluice_host::Gpu) -> sluice_host::Result<()> {
    /// sluice_host::scope(gpu, |s| {
    ///     let mut m = gpu.alloc_matrix::<f32>(64, 1)?; // owned by the closure
    ///     s.lane()?.enter(|st| {
    ///         let mut v = st.bind(m.as_columns_mut()); // error[E0597]: `m` does not live long enough
    ///         st.zero(&mut v)
    ///     })
    /// })
    /// # }
    /// ```
    ///
    /// Allocate from the scope (`s.alloc_matrix`) or outside it.
    ///
    /// A column can be bound only once — binding takes it by value:
    ///
    /// ```compile_fail,E0382
    /// # fn demo(gpu: &sluice_host::Gpu) -> sluice_host::Result<()> {
    /// sluice_host::scope(gpu, |s| {
    ///     let m = s.alloc_matrix::<f32>(64, 1)?;
    ///     let col = m.column_mut(0).unwrap();
    ///     let (a, b) = (s.lane()?, s.lane()?);
    ///     a.enter(|st| { let mut v = st.bind(col); st.zero(&mut v) })?;
    ///     b.enter(|st| { let mut v = st.bind(col); st.zero(&mut v) })?; // error[E0382]: use of moved value: `col`
    ///     Ok(())
    /// })
    /// # }
    /// ```
    ///
    /// To use it on `b` after `a`, fence it on `a` and await the fence on `b`.
    pub fn bind<T: Pod>(&self, cols: ColumnsMut<'scope, T>) -> ColumnViewMut<'scope, 'lane, T> {
        ColumnViewMut::new(cols.span())
    }

    /// Binds read-only columns to this lane (columns borrowed shared for the scope, with
    /// no pending work).
    ///
    /// ```no_run
    /// # fn demo(gpu: &sluice_host::Gpu, m: &sluice_host::DeviceMatrix<f32>) -> sluice_host::Result<()> {
    /// sluice_host::scope(gpu, |s| {
    ///     for lane in s.lanes(2)? {
    ///         lane.enter(|st| assert_eq!(st.bind_ref(m.as_columns()).len(), m.len()));
    ///     }
    ///     Ok(())
    /// })
    /// # }
    /// ```
    pub fn bind_ref<T: Pod>(&self, cols: ColumnsRef<'scope, T>) -> ColumnView<'scope, 'lane, T> {
        ColumnView::new(cols.span())
    }
}

impl std::fmt::Debug for Stream<'_, '_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Stream").field("lane", &self.lane.inner.id).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lanes_and_streams_are_send_and_sync() {
        fn assert<T: Send + Sync>() {}
        assert::<Lane<'static>>();
        assert::<Stream<'static, 'static>>();
    }
}
