//! Scopes and lanes (rule 5: nothing is freed while work may use it).
//!
//! [`scope`] is `std::thread::scope` for streams: it runs a closure that creates lanes and
//! enqueues work, then — in its own frame, not in a `Drop` — joins every lane it created
//! (`cuStreamSynchronize`, one stream at a time, never the whole device), then frees the
//! memory it allocated, then returns or resumes the closure's panic.
//!
//! A scope never returns while a lane may still run: a join that fails is retried, and
//! only a *sticky* error ([`DriverError::is_sticky`](crate::DriverError::is_sticky): the
//! context is lost and runs nothing any more) lets the scope return with the lanes
//! unconfirmed. Any other persistent failure aborts the process — returning would end the
//! borrows of memory (`'env`) that the lane's kernels and copies may still be using.
//!
//! Joined lanes' streams go back to the device's pool for later scopes, so a scope's
//! `lane()` usually costs no `cuStreamCreate`. A [`LaneSet`] keeps them instead — streams,
//! their bookkeeping and the scope's idle events — for the next scope run on it, so that a
//! loop of scopes (a time-stepping simulation) pays neither pool traffic nor allocation.
//!
//! # Rule 5
//!
//! All device and host memory that work may touch is borrowed for `'scope` (binding and
//! copies demand it), and `'scope` ends only after the joins. So memory owned outside the
//! scope cannot be dropped while a lane may use it (the borrow checker rejects the drop),
//! and memory the scope allocated is freed only after the joins. Leaking any guard with
//! `mem::forget` changes nothing: the borrows last for `'scope` whatever happens to the
//! values holding them, and the joins do not depend on any destructor.

use std::marker::PhantomData;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::ptr::NonNull;
use std::sync::{Arc, Mutex};

use bytemuck::Pod;

use crate::capture::{Capture, Recorded};
use crate::device::{lock, Gpu};
use crate::driver::DriverError;
use crate::error::{Error, LaneId, Result};
use crate::fence::{Fenced, Timestamp};
use crate::handle::{GraphExec, StreamHandle};
use crate::lane::{Cover, IdleEvents, Lane, LaneInner, LaneShared, LaneStats, SpareLog, Stream};
use crate::matrix::{ColumnsRef, DeviceMatrix};
use crate::module::SourceSpan;
use crate::pinned::PinnedMatrix;
use crate::plan::{CachedGraph, Submission, SubmitConfig};
use crate::trace::{Recorder, Trace};
use crate::view::Invariant;

/// Runs `f` with a [`Scope`] in which it can create lanes and enqueue work, then joins every
/// lane the scope created and frees the memory it allocated: `std::thread::scope` for GPU
/// streams.
///
/// The join happens here, in `scope`'s own frame, after `f` returns — also when `f`
/// returns an error or panics (the panic is resumed after the join). First what the closure
/// logged is submitted (see [the host crate's docs, "Submission"](crate#submission-when-the-work-reaches-the-gpu): merged copies, or a cached graph if
/// the scope repeats an earlier one's shape); then each lane is joined (`cuStreamSynchronize`,
/// or known idle through the lane that awaited its last fence or ran its graph), never the
/// whole device. A fresh scope starts from the lanes and events the device kept from the
/// last scope that ended, as a [`LaneSet`]'s scope does.
///
/// Returns `f`'s result; if `f` succeeded but a lane failed to join or memory failed to
/// free, that error instead. If `f` returned an error *and* ending the scope failed, both
/// come back as [`Error::Cleanup`] ([`Error::primary`] is `f`'s). Errors that handles of
/// this device recorded while the scope ran (see [`Gpu::take_errors`]) come back the same
/// way. If `f` panicked, errors ending the scope are recorded on the device
/// ([`Gpu::take_errors`]) before the panic resumes.
///
/// # Aborts
///
/// If a lane cannot be joined (its `cuStreamSynchronize` keeps failing) with an error that
/// does not mean the context is lost, the process aborts after printing the error:
/// returning would end the borrows of memory that the lane's work may still be using.
///
/// ```no_run
/// # use sluice_host as sluice;
/// use sluice::{scope, Gpu, Kernel, LaunchConfig, Mut};
/// # const FILL: Kernel<(Mut<f32>, f32)> = unsafe { Kernel::new("", "fill_column") };
/// // FILL writes a value into a column: a `#[kernel]` of yours, or `sluice::kernels::fill_column` (feature "kernels")
/// let gpu = Gpu::new(0)?;
/// let mut host = gpu.pinned_matrix::<f32>(1024, 4)?;
/// scope(&gpu, |s| {
///     let out = s.alloc_matrix::<f32>(1024, 4)?;
///     for ((lane, col), dst) in s.lanes(4)?.into_iter().zip(out.columns_mut()).zip(host.columns_mut()) {
///         lane.enter(|st| {
///             let mut col = st.bind(col);
///             st.launch(&FILL, LaunchConfig::for_elements(1024, 256), (&mut col, 1.0))?;
///             st.copy_to_host(&col, dst)            // same lane: ordered after the kernel
///         })?;
///     }
///     Ok(())
/// })?;                                              // joins the 4 lanes, frees `out`
/// assert!(host.iter().all(|x| *x == 1.0));           // the host may read: every copy is done
/// # Ok::<(), sluice::Error>(())
/// ```
///
/// # Lifetimes
///
/// `'scope` is the lifetime of the scope itself: lanes, scope allocations, fences and every
/// borrow of memory used by work carry it, so none can be used after `scope` returns, and
/// memory borrowed by work stays borrowed until the joins are done. `'env` is anything
/// borrowed from outside, which outlives `'scope`.
///
/// The host cannot touch memory that a lane may still use — here a pinned destination
/// whose copy is pending ([rule 4](crate#safety-model)):
///
/// ```compile_fail,E0502
/// # use sluice_host as sluice;
/// # use sluice::{scope, Gpu};
/// # fn demo(gpu: &Gpu) -> sluice::Result<()> {
/// let mut host = gpu.pinned_matrix::<f32>(16, 1)?;
/// scope(gpu, |s| {
///     let m = s.alloc_matrix::<f32>(16, 1)?;
///     let lane = s.lane()?;
///     let pending = lane.enter(|st| {
///         let v = st.bind(m.as_columns_mut());
///         st.copy_to_host(&v, host.as_pinned_mut())
///     })?;
///     println!("{}", host[0]); // error[E0502]: `host` is mutably borrowed by the pending copy
///     # drop(pending);
///     Ok(())
/// })
/// # }
/// ```
///
/// Read it after awaiting the copy (or after the scope):
///
/// ```no_run
/// # use sluice_host as sluice;
/// # use sluice::{scope, Gpu};
/// # fn demo(gpu: &Gpu) -> sluice::Result<()> {
/// let mut host = gpu.pinned_matrix::<f32>(16, 1)?;
/// scope(gpu, |s| {
///     let m = s.alloc_matrix::<f32>(16, 1)?;
///     let lane = s.lane()?;
///     let pending = lane.enter(|st| {
///         let mut v = st.bind(m.as_columns_mut());
///         st.zero(&mut v)?;
///         st.copy_to_host(&v, host.as_pinned_mut())
///     })?;
///     let done = pending.wait()?;      // host waits for this copy's event only
///     println!("{}", done[0]);
///     Ok(())
/// })?;
/// println!("{}", host[0]);
/// # Ok(()) }
/// ```
pub fn scope<'env, F, R>(gpu: &'env Gpu, f: F) -> Result<R>
where
    F: for<'scope> FnOnce(&'scope Scope<'scope, 'env>) -> Result<R>,
{
    let (result, kept) = run(gpu, LaneCache::pooled(gpu), Mode::Run { traced: false }, f);
    kept.keep(gpu);
    result.map(|(r, _)| r)
}

/// [`scope`], traced: also returns the scope's [`Trace`] — every launch, copy, fill and
/// fence wait of every lane, with its GPU start and end (from timing events around it) and
/// its host enqueue span — for Perfetto ([`Trace::to_chrome_json`]) or as a picture
/// ([`Trace::to_svg`]). Tracing records two timing events per operation; untraced scopes
/// record none.
///
/// ```no_run
/// # use sluice_host as sluice;
/// # fn demo(gpu: &sluice::Gpu) -> sluice::Result<()> {
/// let (sum, trace) = sluice::traced_scope(gpu, |s| {
///     let m = s.alloc_buffer::<u32>(1024)?;
///     s.lane()?.enter(|st| { let mut v = st.bind(m.as_columns_mut()); st.zero(&mut v) })?;
///     Ok(0)
/// })?;
/// assert_eq!(trace.spans.len(), 1);
/// # let _ = sum; Ok(()) }
/// ```
pub fn traced_scope<'env, F, R>(gpu: &'env Gpu, f: F) -> Result<(R, Trace)>
where
    F: for<'scope> FnOnce(&'scope Scope<'scope, 'env>) -> Result<R>,
{
    let (result, kept) = run(gpu, LaneCache::pooled(gpu), Mode::Run { traced: true }, f);
    kept.keep(gpu);
    result.map(|(r, ended)| (r, ended.trace()))
}

/// Lanes kept across scopes: the streams, their bookkeeping and the idle fence events of
/// the scopes run on the set ([`LaneSet::scope`]). The std analogue is a thread pool kept
/// between `scope`s, where [`scope`] makes (well: borrows from the device's pool) its lanes
/// afresh.
///
/// A scope on a set hands out the set's lanes first (lane `i` is the same stream in every
/// scope), and adds the lanes it makes beyond them to the set when it ends; only then, after
/// joining each lane, does the set get its lanes back, so two scopes never share a lane
/// (a scope borrows the set mutably). Every ownership rule holds as in [`scope`].
///
/// ```no_run
/// # use sluice_host as sluice;
/// # fn demo(gpu: &sluice::Gpu, inputs: &[f32]) -> sluice::Result<()> {
/// let x = gpu.upload(inputs)?;                 // on the device once, outside any scope
/// let mut lanes = sluice::LaneSet::new(gpu);
/// for _step in 0..1000 {
///     lanes.scope(|s| {
///         for lane in s.lanes(8)? {               // the same 8 streams every step
///             lane.enter(|st| st.bind_ref(x.as_columns()).len());
///         }
///         Ok(())
///     })?;
/// }
/// assert_eq!(lanes.len(), 8);
/// # Ok(()) }
/// ```
pub struct LaneSet {
    gpu: Gpu,
    kept: LaneCache,
}

impl LaneSet {
    /// An empty set of lanes on `gpu`: its first scope makes the lanes, later ones reuse them.
    pub fn new(gpu: &Gpu) -> LaneSet {
        LaneSet { gpu: gpu.clone(), kept: LaneCache::default() }
    }

    /// Lanes kept (the upload lane not counted).
    pub fn len(&self) -> usize {
        self.kept.lanes.len()
    }

    /// Whether no lane is kept yet.
    pub fn is_empty(&self) -> bool {
        self.kept.lanes.is_empty()
    }

    /// The device.
    pub fn gpu(&self) -> &Gpu {
        &self.gpu
    }

    /// [`scope`] on these lanes: lane `i` of the scope is the set's lane `i` (made by the
    /// first scope that needs it, kept after), and the idle events of one scope serve the
    /// next. Joins every lane it used before returning, as [`scope`] does.
    pub fn scope<'env, F, R>(&'env mut self, f: F) -> Result<R>
    where
        F: for<'scope> FnOnce(&'scope Scope<'scope, 'env>) -> Result<R>,
    {
        let LaneSet { gpu, kept } = self;
        let (result, back) = run(gpu, std::mem::take(kept), Mode::Run { traced: false }, f);
        *kept = back;
        result.map(|(r, _)| r)
    }

    /// [`LaneSet::scope`], traced (see [`traced_scope`]).
    pub fn traced_scope<'env, F, R>(&'env mut self, f: F) -> Result<(R, Trace)>
    where
        F: for<'scope> FnOnce(&'scope Scope<'scope, 'env>) -> Result<R>,
    {
        let LaneSet { gpu, kept } = self;
        let (result, back) = run(gpu, std::mem::take(kept), Mode::Run { traced: true }, f);
        *kept = back;
        result.map(|(r, ended)| (r, ended.trace()))
    }
}

impl Drop for LaneSet {
    fn drop(&mut self) {
        std::mem::take(&mut self.kept).release(&self.gpu);
    }
}

impl std::fmt::Debug for LaneSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LaneSet").field("lanes", &self.kept.lanes.len()).finish_non_exhaustive()
    }
}

/// Joined, idle lanes and events a scope starts from and gives back.
#[derive(Default)]
// Boxed: each lane's bookkeeping is handed out by address (`&'scope LaneInner`) and must not
// move when the vector grows.
#[allow(clippy::vec_box)]
pub(crate) struct LaneCache {
    /// Idle lanes, the one to hand out first last (`pop`).
    lanes: Vec<Box<LaneInner>>,
    upload: Option<Box<LaneInner>>,
    events: IdleEvents,
    /// The last scope's log, emptied (its vectors' capacity, for the next scope's).
    log: SpareLog,
}

impl LaneCache {
    /// Gives streams and events to the device's pools.
    pub(crate) fn release(self, gpu: &Gpu) {
        for lane in self.lanes.into_iter().chain(self.upload) {
            gpu.recycle_stream(lane.stream);
        }
        // Every event is idle (its scope joined): no one else holds it.
        gpu.recycle_events(self.events.into_iter().flatten().filter_map(|e| Arc::try_unwrap(e).ok()));
    }

    /// The idle lanes and events the device kept from the last scope that ended (so that a
    /// fresh [`scope`] starts as a [`LaneSet`]'s does), or none.
    fn pooled(gpu: &Gpu) -> LaneCache {
        match gpu.take_kept_lanes().map(|b| b.downcast::<LaneCache>()) {
            Some(Ok(kept)) => *kept,
            _ => LaneCache::default(),
        }
    }

    /// Leaves the lanes and events with the device for the next scope (or, if another scope
    /// left some first, gives them to the device's pools).
    fn keep(self, gpu: &Gpu) {
        if let Some(extra) = gpu.keep_lanes(Box::new(self)) {
            if let Ok(extra) = extra.downcast::<LaneCache>() {
                extra.release(gpu);
            }
        }
    }
}

/// How a scope runs its work.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// Enqueue it (and trace it, if asked).
    Run { traced: bool },
    /// Record it into a graph; nothing runs.
    Record,
}

/// What a scope leaves besides its closure's result.
pub(crate) enum Ended {
    /// A scope that ran: its trace, if traced.
    Ran(Option<Trace>),
    /// A recorded scope: the graph and what it needs kept.
    Recorded(RecordedScope),
}

impl Ended {
    fn trace(self) -> Trace {
        match self {
            Ended::Ran(trace) => trace.unwrap_or_default(),
            Ended::Recorded(_) => Trace::default(),
        }
    }
}

/// A recorded scope: the executable graph, what the recording collected, and the memory the
/// scope allocated, which the graph's replays use (freed with the graph).
pub(crate) struct RecordedScope {
    pub(crate) exec: GraphExec,
    pub(crate) recorded: Recorded,
    pub(crate) capture_id: u64,
    pub(crate) memory: ScopeMemory,
}

/// Memory a scope allocated, owned by whoever outlives the scope's work (the scope itself,
/// or the graph recorded from it).
pub(crate) struct ScopeMemory(Vec<Box<dyn ScopeOwned>>);

impl ScopeMemory {
    /// Frees it all; errors are collected, none dropped. Only once no work can use it.
    pub(crate) fn release(self) -> Vec<Error> {
        self.0.into_iter().filter_map(|b| b.release().err()).collect()
    }
}

/// Runs a scope on `kept` lanes: the closure, then — in this frame, not in a `Drop` — the
/// joins (or, recording, the end of the capture). Returns the result with what the scope
/// left, and the lanes to keep.
pub(crate) fn run<'env, F, R>(gpu: &'env Gpu, kept: LaneCache, mode: Mode, f: F) -> (Result<(R, Ended)>, LaneCache)
where
    F: for<'scope> FnOnce(&'scope Scope<'scope, 'env>) -> Result<R>,
{
    if let Some(error) = gpu.context().lost() {
        // Lost by an earlier fault: nothing can run; say so before touching the driver.
        return (Err(Error::ContextLost { error, lane: None, fault: None, kernels: Vec::new() }), kept);
    }
    let shared = match ScopeShared::new(gpu.clone(), kept, mode, None) {
        Ok(shared) => shared,
        Err(failed) => {
            let (e, kept) = *failed;
            return (Err(e), kept);
        }
    };
    let scope = Scope { shared, _scope: PhantomData, _env: PhantomData };
    let outcome = catch_unwind(AssertUnwindSafe(|| f(&scope)));
    // Every borrow handed to `f` has ended (nothing carrying 'scope can escape `f`), but
    // work may still run on the lanes: join them before anything is freed.
    let (end, kept, ended) = scope.shared.finish();
    // What handles of this device recorded meanwhile (a matrix whose free failed, ...).
    let end = match (end, Error::chain(gpu.take_recorded_errors())) {
        (end, None) => end,
        (Ok(()), Some(e)) => Err(e),
        (Err(e), Some(later)) => Err(e.also(later)),
    };
    let result = match outcome {
        Err(panic) => {
            if let Err(e) = end {
                // The panic is resumed, so this cannot be returned: record it on the device.
                gpu.record_error(e);
            }
            kept.release(gpu);
            resume_unwind(panic)
        }
        Ok(Err(e)) => Err(match end.map_err(|cleanup| cleanup.without(&e)) {
            Ok(()) | Err(None) => e,
            Err(Some(cleanup)) => e.also(cleanup),
        }),
        Ok(Ok(r)) => end.map(|()| (r, ended)),
    };
    // The pool policy after running out of memory: the scope's memory went back to the
    // pool when it ended, and the pool would keep all of it (as much as the device had) for
    // later scopes; a scope that ran out hands it back to the driver instead, so that what
    // comes next (another allocator, another process, a smaller retry) finds it free.
    if let Err(e) = &result {
        if e.any(|e| matches!(e, Error::OutOfMemory { .. })) {
            if let Err(trim) = gpu.trim_memory_pool() {
                gpu.record_error(trim);
            }
        }
    }
    (result, kept)
}

/// The handle a [`scope`] closure receives: creates lanes, allocates memory that lives
/// until the scope ends, and uploads shared read-only data.
///
/// The std analogue is [`std::thread::Scope`].
///
/// ```no_run
/// # use sluice_host as sluice;
/// # fn demo(gpu: &sluice::Gpu, data: &[f32]) -> sluice::Result<()> {
/// sluice::scope(gpu, |s| {
///     let lanes = s.lanes(8)?;                 // 8 streams, joined when the scope ends
///     let m = s.alloc_matrix::<f32>(512, 8)?;  // freed when the scope ends
///     let shared = s.upload(data)?;            // one upload, awaited by each lane
///     # let _ = (lanes, m, shared);
///     Ok(())
/// })
/// # }
/// ```
pub struct Scope<'scope, 'env: 'scope> {
    shared: ScopeShared,
    /// Invariant in 'scope, as std's `Scope`: allocations handed out as `&'scope mut` must
    /// not be reborrowed as living longer or shorter than the scope.
    _scope: Invariant<'scope>,
    /// Invariant in 'env, as std's `Scope`.
    _env: Invariant<'env>,
}

/// A scope's state: what its lanes share (the device, idle events), the lanes to join,
/// the memory to free.
struct ScopeShared {
    lanes: LaneShared,
    state: Mutex<State>,
}

/// An owned heap value the scope frees at its end. A raw pointer (from `Box::into_raw`),
/// not a `Box`: `&'scope` references into it are handed out while it sits here.
struct Owned<T: ?Sized>(NonNull<T>);
// SAFETY: the pointee is `Send` (bounded where `Owned`s are made) and only the scope's
// thread dereferences the pointer itself, at the scope's end.
unsafe impl<T: ?Sized + Send> Send for Owned<T> {}
// SAFETY: as for `Send`: shared access never dereferences the pointer.
unsafe impl<T: ?Sized + Sync> Sync for Owned<T> {}

/// Memory a scope frees at its end.
pub(crate) trait ScopeOwned: Send + Sync {
    fn release(self: Box<Self>) -> Result<()>;
}

impl<T: Pod> ScopeOwned for DeviceMatrix<T> {
    fn release(self: Box<Self>) -> Result<()> {
        // Kept for the next scope's matrix of the same size: a loop of scopes finds its
        // memory at the same address (and a cached graph of it needs no new addresses).
        (*self).recycle()
    }
}

impl<T: Pod + Send + Sync> ScopeOwned for PinnedMatrix<T> {
    fn release(self: Box<Self>) -> Result<()> {
        (*self).free()
    }
}

#[derive(Default)]
struct State {
    lanes: Vec<Owned<LaneInner>>,
    upload: Option<Owned<LaneInner>>,
    owned: Vec<Owned<dyn ScopeOwned>>,
    /// Idle lanes of earlier scopes (a [`LaneSet`]'s, or none), handed out first; boxed as
    /// in [`LaneCache`].
    #[allow(clippy::vec_box)]
    kept: Vec<Box<LaneInner>>,
    kept_upload: Option<Box<LaneInner>>,
}

impl<'scope, 'env> Scope<'scope, 'env> {
    /// A new lane: an idle non-blocking CUDA stream from the device's pool (or a new one),
    /// joined when the scope ends.
    ///
    /// ```no_run
    /// # use sluice_host as sluice;
    /// # fn demo(gpu: &sluice::Gpu) -> sluice::Result<()> {
    /// sluice::scope(gpu, |s| {
    ///     let lane = s.lane()?;
    ///     assert_eq!(lane.index(), 0);
    ///     Ok(())
    /// })
    /// # }
    /// ```
    pub fn lane(&'scope self) -> Result<Lane<'scope>> {
        let mut st = lock(&self.shared.state);
        let id = LaneId::Lane(st.lanes.len());
        let inner = match st.kept.pop() {
            Some(kept) => Owned(NonNull::from(Box::leak(kept.reused(id)))),
            None => self.shared.new_lane(id)?,
        };
        // SAFETY: just made or reused, owned by the state (the box is not yet shared).
        self.shared.join_capture(unsafe { inner.0.as_ref() })?;
        let ptr = inner.0;
        st.lanes.push(inner);
        self.shared.lanes.made.store(st.lanes.len() as u32, std::sync::atomic::Ordering::Relaxed);
        // SAFETY: the box stays allocated until `finish`, which runs after every
        // `'scope` borrow has ended; it is only read (atomics) meanwhile.
        Ok(Lane::new(&self.shared.lanes, unsafe { ptr.as_ref() }))
    }

    /// Creates `n` lanes.
    ///
    /// ```no_run
    /// # use sluice_host as sluice;
    /// # fn demo(gpu: &sluice::Gpu) -> sluice::Result<()> {
    /// sluice::scope(gpu, |s| {
    ///     assert_eq!(s.lanes(8)?.len(), 8);
    ///     Ok(())
    /// })
    /// # }
    /// ```
    pub fn lanes(&'scope self, n: usize) -> Result<Vec<Lane<'scope>>> {
        lock(&self.shared.state).lanes.reserve(n);
        (0..n).map(|_| self.lane()).collect()
    }

    /// A `rows` x `cols` device matrix that lives until the scope ends (and is freed then,
    /// after the joins). Holds arbitrary bits until written.
    ///
    /// # Errors
    /// As [`Gpu::alloc_matrix`].
    ///
    /// ```no_run
    /// # use sluice_host as sluice;
    /// # fn demo(gpu: &sluice::Gpu) -> sluice::Result<()> {
    /// sluice::scope(gpu, |s| {
    ///     let m = s.alloc_matrix::<f32>(1024, 8)?;
    ///     assert_eq!(m.columns_mut().len(), 8);
    ///     Ok(())
    /// })
    /// # }
    /// ```
    pub fn alloc_matrix<T: Pod>(&'scope self, rows: usize, cols: usize) -> Result<&'scope mut DeviceMatrix<T>> {
        Ok(self.shared.keep(DeviceMatrix::alloc_for_scope(&self.shared.lanes.gpu, rows, cols, rows)?))
    }

    /// As [`alloc_matrix`](Scope::alloc_matrix) with leading dimension `ld >= rows`.
    ///
    /// ```no_run
    /// # use sluice_host as sluice;
    /// # fn demo(gpu: &sluice::Gpu) -> sluice::Result<()> {
    /// sluice::scope(gpu, |s| {
    ///     let m = s.alloc_matrix_padded::<f32>(1000, 8, 1024)?;
    ///     assert_eq!(m.ld(), 1024);
    ///     Ok(())
    /// })
    /// # }
    /// ```
    pub fn alloc_matrix_padded<T: Pod>(
        &'scope self,
        rows: usize,
        cols: usize,
        ld: usize,
    ) -> Result<&'scope mut DeviceMatrix<T>> {
        Ok(self.shared.keep(DeviceMatrix::alloc_for_scope(&self.shared.lanes.gpu, rows, cols, ld)?))
    }

    /// A device buffer of `len` elements (one column) that lives until the scope ends.
    ///
    /// ```no_run
    /// # use sluice_host as sluice;
    /// # fn demo(gpu: &sluice::Gpu) -> sluice::Result<()> {
    /// sluice::scope(gpu, |s| {
    ///     let b = s.alloc_buffer::<u64>(100)?;
    ///     assert_eq!(b.len(), 100);
    ///     Ok(())
    /// })
    /// # }
    /// ```
    pub fn alloc_buffer<T: Pod>(&'scope self, len: usize) -> Result<&'scope mut DeviceMatrix<T>> {
        self.alloc_matrix(len, 1)
    }

    /// A zeroed pinned host matrix that lives until the scope ends. Read its columns
    /// inside the scope through [`Pending::wait`](crate::Pending::wait); to read it after
    /// the scope, allocate it outside with [`Gpu::pinned_matrix`] instead.
    ///
    /// Pinned allocations are slow and may serialize the device (see
    /// [`PinnedMatrix`'s costs](PinnedMatrix#cost)): in a loop of scopes, allocate the pinned
    /// matrix once outside and reuse it.
    ///
    /// ```no_run
    /// # use sluice_host as sluice;
    /// # fn demo(gpu: &sluice::Gpu) -> sluice::Result<()> {
    /// sluice::scope(gpu, |s| {
    ///     let h = s.pinned_matrix::<f32>(256, 2)?;
    ///     assert_eq!(h.len(), 512);
    ///     Ok(())
    /// })
    /// # }
    /// ```
    pub fn pinned_matrix<T: Pod + Send + Sync>(
        &'scope self,
        rows: usize,
        cols: usize,
    ) -> Result<&'scope mut PinnedMatrix<T>> {
        Ok(self.shared.keep(PinnedMatrix::alloc(&self.shared.lanes.gpu, rows, cols)?))
    }

    /// A zeroed pinned host buffer of `len` elements (one column) that lives until the
    /// scope ends.
    ///
    /// ```no_run
    /// # use sluice_host as sluice;
    /// # fn demo(gpu: &sluice::Gpu) -> sluice::Result<()> {
    /// sluice::scope(gpu, |s| {
    ///     let h = s.pinned_buffer::<u8>(4096)?;
    ///     assert_eq!(h.cols(), 1);
    ///     Ok(())
    /// })
    /// # }
    /// ```
    pub fn pinned_buffer<T: Pod + Send + Sync>(&'scope self, len: usize) -> Result<&'scope mut PinnedMatrix<T>> {
        self.pinned_matrix(len, 1)
    }

    /// Uploads `data` once into a new device buffer, for any number of lanes to read
    /// ([rule 3](crate#safety-model)). The copy runs on the scope's upload lane; each reader awaits the returned
    /// fence with [`Stream::await_fence`] (a GPU-side wait — the host never blocks) and
    /// gets a read-only [`ColumnView`](crate::ColumnView) on its own lane.
    ///
    /// `data` is borrowed for this call only: the upload never reads it after returning.
    /// Pageable memory (a `Vec`, a slice of one) goes to the driver, which copies it into its
    /// own staging buffer before the call returns; page-locked memory (a [`PinnedMatrix`]),
    /// and every source on the CPU backend, is first copied into a pinned buffer the scope
    /// owns, since a copy from it would run later. In a recorded [`graph`](crate::graph) the
    /// data is staged into the graph's own buffer, which [`Graph::write_input`](crate::Graph::write_input)
    /// rewrites between replays, so the recording does not keep `data` borrowed either. (A
    /// lane's own [`Stream::copy_to_device`] borrows its source until the scope ends, [rule 4](crate#safety-model).)
    ///
    /// # Errors
    /// [`Error::ZeroSized`] for empty `data`; allocation and copy errors.
    ///
    /// ```no_run
    /// # use sluice_host as sluice;
    /// # fn demo(gpu: &sluice::Gpu, sources: &[[f32; 4]]) -> sluice::Result<()> {
    /// sluice::scope(gpu, |s| {
    ///     let shared = s.upload(sources)?;
    ///     for lane in s.lanes(4)? {
    ///         lane.enter(|st| {
    ///             let src = st.await_fence(&shared)?;
    ///             assert_eq!(src.len(), sources.len());
    ///             Ok::<_, sluice::Error>(())
    ///         })?;
    ///     }
    ///     Ok(())
    /// })
    /// # }
    /// ```
    ///
    /// The host may change `data` as soon as `upload` returns: the lanes read the copy.
    ///
    /// ```no_run
    /// # use sluice_host as sluice;
    /// # fn demo(gpu: &sluice::Gpu) -> sluice::Result<()> {
    /// let mut data = vec![1.0f32; 1024];
    /// sluice::scope(gpu, |s| {
    ///     let first = s.upload(&data)?;
    ///     data[0] = 2.0;                  // the upload took its copy already
    ///     let second = s.upload(&data)?;  // another buffer, with the new value
    ///     drop((first, second));
    ///     Ok(())
    /// })
    /// # }
    /// ```
    pub fn upload<T: Pod>(&'scope self, data: &[T]) -> Result<Fenced<'scope, ColumnsRef<'scope, T>>> {
        self.upload_matrix(data, data.len(), 1)
    }

    /// Uploads `data` as a `rows` x `cols` column-major matrix (`data.len()` must be
    /// `rows * cols`), for lanes to read whole or by column. `data` is borrowed for this
    /// call only, as by [`upload`](Scope::upload).
    ///
    /// ```no_run
    /// # use sluice_host as sluice;
    /// # fn demo(gpu: &sluice::Gpu, targets: &[f32]) -> sluice::Result<()> {
    /// sluice::scope(gpu, |s| {
    ///     let t = s.upload_matrix(targets, 1024, 8)?;
    ///     s.lane()?.enter(|st| {
    ///         let all = st.await_fence(&t)?;
    ///         assert_eq!(all.column(7).unwrap().rows(), 1024);
    ///         Ok(())
    ///     })
    /// })
    /// # }
    /// ```
    pub fn upload_matrix<T: Pod>(
        &'scope self,
        data: &[T],
        rows: usize,
        cols: usize,
    ) -> Result<Fenced<'scope, ColumnsRef<'scope, T>>> {
        if rows.checked_mul(cols) != Some(data.len()) {
            return Err(Error::LengthMismatch { expected: data.len(), got: rows.saturating_mul(cols) });
        }
        let m: &'scope mut DeviceMatrix<T> = self.alloc_matrix(rows, cols)?;
        let lane = self.upload_lane()?;
        let st = Stream::new(lane);
        let mut view = st.bind(m.as_columns_mut());
        // A pinned buffer the scope owns until its end, for a source the copy would read
        // after this call (see `copy_to_device_now`).
        let stage = |bytes: &[u8]| -> Result<&'scope [u8]> {
            let buf: &'scope mut PinnedMatrix<u8> =
                self.shared.keep(self.shared.lanes.gpu.pinned_matrix(bytes.len(), 1)?);
            buf.copy_from_slice(bytes);
            Ok(&buf[..])
        };
        st.copy_to_device_now(data, &mut view, stage)?;
        st.fence(view.into_view())
    }

    /// A timestamp on the scope's upload lane. It is ordered with the scope's uploads, not
    /// with the work of other lanes: the time from it to a lane's timestamp is the time
    /// between two unordered points (the lane may already have run), and may be negative.
    /// For a start that precedes a lane's work, take the timestamp on that lane.
    ///
    /// ```no_run
    /// # use sluice_host as sluice;
    /// # fn demo(gpu: &sluice::Gpu) -> sluice::Result<()> {
    /// sluice::scope(gpu, |s| {
    ///     let start = s.timestamp()?;
    ///     let end = s.lane()?.enter(|st| st.timestamp())?;
    ///     println!("{} ms", end.elapsed_ms_since(&start)?);
    ///     Ok(())
    /// })
    /// # }
    /// ```
    pub fn timestamp(&'scope self) -> Result<Timestamp<'scope>> {
        Stream::new(self.upload_lane()?).timestamp()
    }

    /// What the scope's upload lane has enqueued (uploads and their fences).
    ///
    /// ```no_run
    /// # use sluice_host as sluice;
    /// # fn demo(gpu: &sluice::Gpu) -> sluice::Result<()> {
    /// sluice::scope(gpu, |s| {
    ///     let _ = s.upload(&[1u32, 2, 3])?;
    ///     assert_eq!(s.upload_stats().copies, 1);
    ///     Ok(())
    /// })
    /// # }
    /// ```
    pub fn upload_stats(&self) -> LaneStats {
        let st = lock(&self.shared.state);
        match &st.upload {
            // SAFETY: the box lives until `finish`; only atomics are read.
            Some(l) => unsafe { l.0.as_ref() }.stats(),
            None => LaneStats { lane: LaneId::Upload, ..LaneStats::default() },
        }
    }

    /// How this scope's work has reached the GPU so far: one [`Submission`] per host wait
    /// that needed pending work, per segment ([`SubmitConfig::segment_lanes`]) and per
    /// [`SubmitConfig::max_deferred`] operations (the scope's end adds the last one after the closure, which
    /// [`traced_scope`]'s [`Trace::submissions`] shows). Empty in a scope that submits every
    /// operation as it is asked for ([`SubmitConfig::direct`]).
    ///
    /// ```
    /// # use sluice_host as sluice;
    /// # fn demo(gpu: &sluice::Gpu) -> sluice::Result<()> {
    /// sluice::scope(gpu, |s| {
    ///     let m = s.alloc_buffer::<f32>(256)?;
    ///     let h = s.pinned_buffer::<f32>(256)?;
    ///     let pending = s.lane()?.enter(|st| {
    ///         let mut v = st.bind(m.as_columns_mut());
    ///         st.zero(&mut v)?;
    ///         st.copy_to_host(&v, h.as_pinned_mut())
    ///     })?;
    ///     assert!(s.submissions().is_empty());     // logged, not submitted yet
    ///     pending.wait()?;                          // the host needs the copy: submitted now
    ///     assert_eq!(s.submissions().len(), 1);
    ///     Ok(())
    /// })
    /// # }
    /// # demo(&sluice::Gpu::cpu()).unwrap();
    /// ```
    pub fn submissions(&self) -> Vec<Submission> {
        self.shared.lanes.submissions()
    }

    /// The device this scope runs on.
    ///
    /// ```no_run
    /// # use sluice_host as sluice;
    /// # fn demo(gpu: &sluice::Gpu) -> sluice::Result<()> {
    /// sluice::scope(gpu, |s| {
    ///     println!("{}", s.gpu().info().name);
    ///     Ok(())
    /// })
    /// # }
    /// ```
    pub fn gpu(&self) -> &Gpu {
        &self.shared.lanes.gpu
    }

    fn upload_lane(&'scope self) -> Result<Lane<'scope>> {
        let mut st = lock(&self.shared.state);
        let ptr = match &st.upload {
            Some(l) => l.0,
            None => {
                let l = match st.kept_upload.take() {
                    Some(kept) => Owned(NonNull::from(Box::leak(kept.reused(LaneId::Upload)))),
                    None => self.shared.new_lane(LaneId::Upload)?,
                };
                // SAFETY: as in `lane`.
                self.shared.join_capture(unsafe { l.0.as_ref() })?;
                let ptr = l.0;
                st.upload = Some(l);
                ptr
            }
        };
        // SAFETY: as in `lane`.
        Ok(Lane::new(&self.shared.lanes, unsafe { ptr.as_ref() }))
    }
}

/// What the multi-GPU layer needs to run one scope per device and end them together: every
/// device's lanes are joined before any device's memory is freed, since a peer copy or a
/// collective on one device's lane may use another device's memory.
impl<'scope, 'env> Scope<'scope, 'env> {
    /// A scope on `gpu` (fresh lanes from its pool), ended by [`Scope::join`]; the caller
    /// keeps every borrow of `'scope` alive until it has joined this scope and frees the
    /// memory `join` returns only after every scope whose lanes may use it has joined too.
    pub(crate) fn start(gpu: &Gpu, traced: bool) -> Result<Scope<'scope, 'env>> {
        match ScopeShared::new(gpu.clone(), LaneCache::default(), Mode::Run { traced }, Some(SubmitConfig::direct())) {
            Ok(shared) => Ok(Scope { shared, _scope: PhantomData, _env: PhantomData }),
            Err(failed) => {
                let (e, kept) = *failed;
                kept.release(gpu);
                Err(e)
            }
        }
    }

    /// Joins every lane of the scope (one stream at a time, as [`scope`] does), gives the
    /// streams and events back to the device's pools, and returns the errors, the trace (if
    /// traced) and the memory to free — `None` when the context is lost (leaked).
    pub(crate) fn join(&self) -> (Vec<Error>, Option<Trace>, Option<ScopeMemory>) {
        let (errors, kept, trace, memory) = self.shared.join_lanes();
        kept.release(&self.shared.lanes.gpu);
        (errors, trace, memory)
    }
}

impl std::fmt::Debug for Scope<'_, '_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Scope").field("gpu", &self.shared.lanes.gpu).finish_non_exhaustive()
    }
}

impl ScopeShared {
    /// A scope's state starting from `kept` lanes; traced if asked (the trace's reference
    /// event is recorded on an idle kept stream, or one from the pool).
    fn new(
        gpu: Gpu,
        kept: LaneCache,
        mode: Mode,
        config: Option<SubmitConfig>,
    ) -> std::result::Result<ScopeShared, Box<(Error, LaneCache)>> {
        let LaneCache { mut lanes, upload, mut events, log } = kept;
        let mut trace = None;
        let mut capture = None;
        let started = match mode {
            Mode::Run { traced: false } => Ok(()),
            Mode::Run { traced: true } => {
                let started = match lanes.last() {
                    Some(idle) => Recorder::start(&gpu, &idle.stream),
                    None => gpu.take_stream().and_then(|idle| {
                        let r = Recorder::start(&gpu, &idle);
                        lanes.push(Box::new(LaneInner::new(idle, LaneId::Lane(0))));
                        r
                    }),
                };
                started.map(|rec| trace = Some(rec))
            }
            Mode::Record => gpu.take_stream().and_then(|origin| {
                let pooled = events[0].pop();
                let fork = match pooled.map(Arc::try_unwrap) {
                    Some(Ok(e)) => e,
                    _ => gpu.take_event(false)?,
                };
                Capture::begin(origin, fork).map(|c| capture = Some(c))
            }),
        };
        if let Err(e) = started {
            return Err(Box::new((e, LaneCache { lanes, upload, events, log })));
        }
        // Recordings capture as they go; multi-GPU scopes (`Scope::start`) submit as asked too.
        let config = match mode {
            Mode::Run { .. } => config.unwrap_or_else(|| gpu.submit_config()),
            Mode::Record => SubmitConfig::direct(),
        };
        let state = State { kept: lanes, kept_upload: upload, ..State::default() };
        Ok(ScopeShared { lanes: LaneShared::new(gpu, events, trace, capture, config, log), state: Mutex::new(state) })
    }

    /// Draws a new lane into the recording, if this scope is recorded.
    fn join_capture(&self, lane: &LaneInner) -> Result<()> {
        match self.lanes.capture() {
            Some(c) => c.join(&lane.stream),
            None => Ok(()),
        }
    }

    fn new_lane(&self, id: LaneId) -> Result<Owned<LaneInner>> {
        // An idle stream of an earlier scope, or a new one; `finish` gives it back.
        let stream = self.lanes.gpu.take_stream()?;
        Ok(Owned(NonNull::from(Box::leak(Box::new(LaneInner::new(stream, id))))))
    }

    /// Keeps `value` until the scope ends and lends it out for the scope.
    // An arena: every call lends a fresh allocation, so the `&mut` is never aliased.
    #[allow(clippy::mut_from_ref)]
    fn keep<T: ScopeOwned + 'static>(&self, value: T) -> &mut T {
        let ptr = NonNull::from(Box::leak(Box::new(value)));
        lock(&self.state).owned.push(Owned(ptr as NonNull<dyn ScopeOwned>));
        // SAFETY: freshly leaked, so this is the only reference; the scope reads the
        // pointer again only in `finish`, after every 'scope borrow has ended.
        unsafe { &mut *ptr.as_ptr() }
    }

    /// Joins every lane, then releases streams, events and memory. Runs once, in `scope`'s
    /// frame, after the closure.
    ///
    /// Returns only when every lane is joined or the context is lost (see [`join_stream`]);
    /// errors are chained, none dropped.
    fn finish(&self) -> (Result<()>, LaneCache, Ended) {
        if let Some(capture) = self.lanes.capture() {
            return self.finish_recording(capture);
        }
        // What the closure logged reaches the GPU now (merged, or as a graph if repeated),
        // before any lane is joined.
        let submitted = self.lanes.flush(true, "the scope's end");
        let (mut errors, kept, trace, memory) = self.join_lanes();
        if let Err(e) = submitted {
            errors.insert(0, e);
        }
        if let Some(memory) = memory {
            // Every lane that could use the memory has been joined.
            errors.extend(memory.release());
        }
        (Error::chain(errors).map_or(Ok(()), Err), kept, Ended::Ran(trace))
    }

    /// The joins of [`finish`](ScopeShared::finish), run-mode: every lane joined (or the
    /// context lost), the trace read. Returns the errors, the idle lanes, the trace, and the
    /// scope's memory for the caller to free — `None` when the context is lost (the memory is
    /// leaked then, with the streams and events).
    fn join_lanes(&self) -> (Vec<Error>, LaneCache, Option<Trace>, Option<ScopeMemory>) {
        let shared = &self.lanes;
        let st = std::mem::take(&mut *lock(&self.state));
        // No lane is joined, and no graph goes back to the cache, before the graphs handed to
        // the launcher thread are launched.
        let mut errors: Vec<Error> = shared.finish_launches().err().into_iter().collect();
        // Join: one stream at a time, the host blocks on each in turn (rule 6: never the device).
        // With their ids, read while each box is at hand (sorting by them then reads no box).
        let mut joined: Vec<(LaneId, Box<LaneInner>)> = Vec::with_capacity(st.lanes.len());
        let mut joined_upload = None;
        let mut lost: Option<DriverError> = None;
        // What each lane launched, for naming the lane of a fault.
        let mut launched: Vec<(LaneId, LaunchedKernels)> = Vec::new();
        let all: Vec<Box<LaneInner>> = st
            .upload
            .into_iter()
            .chain(st.lanes)
            // SAFETY: `lane` came from `Box::leak` (in `new_lane` or from a kept box); every
            // `&'scope LaneInner` is gone (the closure returned), so this is the only owner.
            // The box is host memory the GPU never touches.
            .map(|lane| unsafe { Box::from_raw(lane.0.as_ptr()) })
            .collect();
        // A lane is joined through a fence's awaiter only if every wait the scope logged was
        // submitted (a submission that failed part way may have left some out).
        let sync_all = shared.gpu.context().is_cpu() || shared.submission_failed();
        let order = join_order(all, sync_all);
        // The end's host-only bookkeeping (idle events, the graphs to put back, the log kept for
        // the next scope) is done before the last join that blocks, while the GPU still runs:
        // once it is done, the scope returns sooner. Nothing is given back before the joins.
        let last_block = order.iter().rposition(|(_, through)| through.is_none());
        let mut books = None;
        for (i, (inner, through)) in order.into_iter().enumerate() {
            if Some(i) == last_block {
                books = Some(EndBooks::take(shared));
            }
            // A lane whose last operation was awaited by the host, or by a lane joined before
            // it, is idle: no need to synchronize its stream (one call per lane saved).
            let result = match through {
                Some(_) => Ok(()),
                None => join_stream(&inner.stream, inner.id),
            };
            match result {
                Ok(()) if inner.id == LaneId::Upload => joined_upload = Some(inner),
                Ok(()) => joined.push((inner.id, inner)),
                // The CPU backend: a kernel of this lane panicked or failed the checking
                // mode ([`Error::KernelCheck`]); the lane has stopped (its
                // later work was skipped), the other lanes are fine. The faulted stream is
                // destroyed, not reused.
                Err(_) if inner.stream.fault().is_some() => {
                    if let Some(fault) = inner.stream.fault() {
                        errors.push(fault.into_error(inner.id));
                    }
                }
                Err(error) => {
                    // Once the context is lost every lane fails the same way: report the first,
                    // naming the faulting lane below where the device's record shows it.
                    if lost.is_none() {
                        errors.push(Error::ContextLost {
                            lane: Some(inner.id),
                            error,
                            fault: None,
                            kernels: Vec::new(),
                        });
                    }
                    lost.get_or_insert(error);
                    let kernels = inner.take_kernels();
                    launched.push((inner.id, kernels));
                    // Leaked: destroying a stream of a lost context only fails again.
                    std::mem::forget(inner);
                }
            }
        }
        let gpu = &shared.gpu;
        let EndBooks { events, graphs, log, submissions } = books.unwrap_or_else(|| EndBooks::take(shared));
        if lost.is_some() {
            // The graphs' executables go with the context (destroying them would only fail).
            std::mem::forget(graphs);
            attribute_fault(&mut errors, gpu.context().device_fault(), &launched);
            // The context is lost: nothing runs in it any more, every driver call would fail
            // with the same error, and the memory goes when the context does. Leak the
            // streams, events and memory (leaking is always sound); the caller gets the error.
            std::mem::forget((joined, joined_upload, events, st.kept, st.kept_upload));
            // The emptied log holds no event any more (they are in `events`): dropped as before.
            drop(log);
            std::mem::forget(st.owned);
            return (errors, LaneCache::default(), None, None);
        }
        // Every lane is joined: no launch of the scope's graphs is pending any more.
        gpu.put_graphs(graphs);
        let faulted = errors.iter().any(|e| matches!(e, Error::KernelFault { .. } | Error::KernelCheck { .. }));
        let trace = shared.recorder().map(|r| r.finish(gpu, faulted)).transpose().unwrap_or_else(|e| {
            errors.push(e);
            None
        });
        let trace = trace.map(|t| Trace { submissions: submissions.unwrap_or_default(), ..t });
        let memory = ScopeMemory(
            st.owned
                .into_iter()
                // SAFETY: `owned` came from `Box::leak` in `keep`; the `&'scope mut` lent out
                // is gone (the closure returned). The caller frees it only after every lane
                // that could use the memory has been joined (above — synchronized, or known
                // idle through the fence that ended its work: `join_order` — and, for a
                // multi-GPU scope, every other device's lanes too).
                .map(|owned| unsafe { Box::from_raw(owned.0.as_ptr()) })
                .collect(),
        );
        // Each joined stream is idle (its `cuStreamSynchronize` succeeded after all of its
        // work, or its last operation was awaited by the host or by an idle lane) and nothing
        // uses it any more: kept for the next scope, in lane order. Lane 0 is handed out first.
        let mut lanes = st.kept;
        joined.sort_unstable_by_key(|&(id, _)| id);
        lanes.extend(joined.into_iter().rev().map(|(_, lane)| lane));
        let kept = LaneCache { lanes, upload: joined_upload.or(st.kept_upload), events, log };
        (errors, kept, trace, Some(memory))
    }

    /// Ends a recording: every lane joins the origin (a join event each), the capture ends,
    /// the graph is instantiated. Nothing ran, so no lane is synchronized; the scope's memory
    /// goes to the graph, whose replays use it.
    fn finish_recording(&self, capture: &Capture) -> (Result<()>, LaneCache, Ended) {
        let shared = &self.lanes;
        let gpu = &shared.gpu;
        let st = std::mem::take(&mut *lock(&self.state));
        let mut errors: Vec<Error> = Vec::new();
        let mut lanes: Vec<Box<LaneInner>> = Vec::new();
        let mut upload = None;
        let mut events = shared.take_idle_events();
        for lane in st.upload.into_iter().chain(st.lanes) {
            // SAFETY: as in `finish`: the closure returned, so this is the only owner.
            let inner = unsafe { Box::from_raw(lane.0.as_ptr()) };
            let joined = gpu.take_event(false).and_then(|e| {
                e.record(&inner.stream).map_err(|error| Error::Event { call: "cuEventRecord", error })?;
                capture.origin.wait(&e).map_err(|error| Error::Event { call: "cuStreamWaitEvent", error })?;
                events[0].push(Arc::new(e));
                Ok(())
            });
            if let Err(e) = joined {
                errors.push(e);
            }
            if inner.id == LaneId::Upload {
                upload = Some(inner);
            } else {
                lanes.push(inner);
            }
        }
        // SAFETY: the origin began this capture in `Capture::begin`.
        let ended = unsafe { capture.origin.end_capture() }
            .map_err(|error| Error::Stream { call: "cuStreamEndCapture", error });
        let exec =
            ended.and_then(|g| g.instantiate().map_err(|error| Error::Device { call: "cuGraphInstantiate", error }));
        // Nothing was enqueued to run on these streams (a capture only records), so they are
        // idle: kept for the next scope, the upload lane and the unused kept lanes too.
        let mut kept_lanes = st.kept;
        kept_lanes.extend(lanes.into_iter().rev());
        let kept = LaneCache { lanes: kept_lanes, upload: upload.or(st.kept_upload), events, log: SpareLog::default() };
        let memory = ScopeMemory(
            st.owned
                .into_iter()
                // SAFETY: as in `finish`: leaked in `keep`, every `&'scope mut` lent out is gone.
                .map(|o| unsafe { Box::from_raw(o.0.as_ptr()) })
                .collect(),
        );
        let recorded = std::mem::take(&mut *capture.recorded());
        match (exec, Error::chain(errors)) {
            (Ok(exec), None) => {
                (Ok(()), kept, Ended::Recorded(RecordedScope { exec, recorded, capture_id: capture.id, memory }))
            }
            (exec, later) => {
                // No graph: nothing can replay the recording, so its memory is unused.
                let mut errors: Vec<Error> = exec.err().into_iter().chain(later).collect();
                errors.extend(memory.release());
                (Err(Error::chain(errors).expect("an error")), kept, Ended::Ran(None))
            }
        }
    }
}

/// What a scope's end takes from its shared state before the last join that blocks (see
/// [`ScopeShared::join_lanes`]): host bookkeeping only, given back after the joins.
struct EndBooks {
    /// The scope's idle events, with those its log held.
    events: IdleEvents,
    /// The graphs its submissions launched, for the device's cache.
    graphs: Vec<CachedGraph>,
    /// Its log, emptied, for the next scope.
    log: SpareLog,
    /// Its submissions, for the trace (traced scopes only).
    submissions: Option<Vec<Submission>>,
}

impl EndBooks {
    /// Takes them once the scope's last submission is made (nothing is logged after it).
    fn take(shared: &LaneShared) -> EndBooks {
        // Read before the log is emptied.
        let submissions = shared.recorder().map(|_| shared.submissions());
        let graphs = shared.take_graphs();
        let (log, retired) = shared.spare_log();
        let mut events = shared.take_idle_events();
        for e in retired {
            events[e.timing() as usize].push(e);
        }
        EndBooks { events, graphs, log, submissions }
    }
}

/// The lanes in the order the scope joins them, each with how it is known idle without
/// synchronizing its stream (`Some`: its last operation was awaited by the host, or by a
/// lane that comes earlier in the order and is synchronized or known idle itself), or
/// `None` (its stream is synchronized). With `sync_all` every lane is synchronized: on the
/// CPU backend (a faulted lane is found by its own stream there), and after a submission that
/// failed part way (a cover may name a wait that was never submitted).
// Boxed: the boxes are the lanes' homes (leaked during the scope, kept for the next one).
#[allow(clippy::vec_box)]
fn join_order(lanes: Vec<Box<LaneInner>>, sync_all: bool) -> Vec<(Box<LaneInner>, Option<Cover>)> {
    let (mut pending, mut order): (Vec<_>, Vec<_>) =
        lanes.into_iter().map(|l| (l.covered_by().filter(|_| !sync_all), l)).partition(|(c, _)| c.is_some());
    let mut order: Vec<(Box<LaneInner>, Option<Cover>)> = order.drain(..).map(|(_, l)| (l, None)).collect();
    // Which lanes are in the order so far, by index (lanes are numbered from 0 in a scope; the
    // upload lane last): one flag each, no hashing — this runs after the GPU is done, where
    // every instruction is the scope's time.
    let top = order.iter().map(|(l, _)| l.id).chain(pending.iter().map(|(_, l)| l.id)).fold(0, |top, id| match id {
        LaneId::Lane(n) => top.max(n + 1),
        LaneId::Upload => top,
    });
    let slot = |id: LaneId| match id {
        LaneId::Lane(n) => n,
        LaneId::Upload => top,
    };
    let mut ordered = vec![false; top + 1];
    for (l, _) in &order {
        ordered[slot(l.id)] = true;
    }
    // Lanes covered by the host, or by a lane already in the order, follow it; repeat until
    // nothing moves (covers form no cycle: awaiting a fence is an operation of the awaiter,
    // after which its own earlier fences no longer cover it).
    loop {
        let before = pending.len();
        let mut rest = Vec::new();
        for (cover, lane) in pending {
            let known = match cover {
                Some(Cover::Host) => true,
                // A cover names a lane of this scope; one outside the flags counts as not
                // known idle (the lane is then synchronized).
                Some(Cover::Lane(id)) => ordered.get(slot(id)).copied().unwrap_or(false),
                None => false,
            };
            if known {
                ordered[slot(lane.id)] = true;
                order.push((lane, cover));
            } else {
                rest.push((cover, lane));
            }
        }
        pending = rest;
        if pending.is_empty() || pending.len() == before {
            break;
        }
    }
    order.extend(pending.into_iter().map(|(_, l)| (l, None)));
    order
}

/// How many times a lane's join is tried before the scope gives up on it.
const JOIN_ATTEMPTS: u32 = 5;

/// Names the lane and kernel of a lost context's fault in the scope's `ContextLost` error:
/// the device's fault record (if the failing thread wrote one) gives the message and its
/// source location; the kernel declared around that location, launched on one lane of the
/// scope, is the one that failed. Without a location in a kernel, one lane that launched
/// anything at all is the lane; otherwise the lane stays the first whose join saw the loss.
fn attribute_fault(
    errors: &mut [Error],
    fault: Option<crate::error::DeviceFault>,
    launched: &[(LaneId, LaunchedKernels)],
) {
    let Some(Error::ContextLost { lane, fault: slot, kernels: suspects, .. }) =
        errors.iter_mut().find(|e| matches!(e, Error::ContextLost { .. }))
    else {
        return;
    };
    let mut fault = fault;
    let location = fault.as_ref().and_then(|f| fault_location(&f.message));
    // The kernels whose declaration holds the location, and the lanes that launched them.
    let kernel = location.and_then(|(file, line)| {
        let mut names = launched.iter().flat_map(|(_, ks)| ks).filter_map(|(name, src)| {
            let (f, first, last) = (*src)?;
            (same_file(f, file) && (first..=last).contains(&line)).then_some(*name)
        });
        let first = names.next()?;
        names.all(|n| n == first).then_some(first)
    });
    let lanes: Vec<LaneId> = match kernel {
        Some(k) => launched.iter().filter(|(_, ks)| ks.iter().any(|(n, _)| *n == k)).map(|(l, _)| *l).collect(),
        None => Vec::new(),
    };
    let busy: Vec<LaneId> = launched.iter().filter(|(_, ks)| !ks.is_empty()).map(|(l, _)| *l).collect();
    // The one lane that can have faulted, where there is one.
    let culprit = match (&lanes[..], &busy[..]) {
        ([one], _) | ([], [one]) => Some(*one),
        _ => None,
    };
    if let Some(one) = culprit {
        *lane = Some(one);
    }
    match (fault.as_mut(), culprit) {
        (Some(f), _) => {
            f.kernel = kernel;
            // The candidates: the lanes that ran the kernel, else the one busy lane.
            f.lanes = if lanes.is_empty() { culprit.into_iter().collect() } else { lanes };
        }
        // Nothing recorded: what that lane launched is all there is to suspect.
        (None, Some(one)) => {
            if let Some((_, ks)) = launched.iter().find(|(l, _)| *l == one) {
                *suspects = ks.iter().map(|(name, _)| *name).collect();
            }
        }
        (None, None) => {}
    }
    *slot = fault.map(Box::new);
}

/// The kernels a lane launched in a scope, each once, with their source lines.
type LaunchedKernels = Vec<(&'static str, Option<SourceSpan>)>;

/// `FILE:LINE` of a `dfail!`/`dassert!` record (`kernel failed at FILE:LINE:COL: ...`).
fn fault_location(message: &str) -> Option<(&str, u32)> {
    let rest = message.strip_prefix("kernel failed at ")?;
    let (place, _) = rest.split_once(": ")?;
    let mut parts = place.rsplitn(3, ':');
    let (_col, line, file) = (parts.next()?, parts.next()?, parts.next()?);
    Some((file, line.parse().ok()?))
}

/// Whether two `file!()` paths name the same file: the device and host builds of a kernel
/// crate may run from different folders, so one path may be a suffix of the other.
fn same_file(a: &str, b: &str) -> bool {
    let (a, b) = (a.replace('\\', "/"), b.replace('\\', "/"));
    a == b || a.ends_with(&format!("/{b}")) || b.ends_with(&format!("/{a}"))
}

/// Blocks until `stream` has run everything enqueued on it (`cuStreamSynchronize`, this
/// stream only). Returns `Ok` once that is confirmed, and `Err` only for a sticky error:
/// the context is lost and runs nothing any more, so nothing can still use the scope's
/// memory. Any other failure is retried a few times; if the join still cannot be confirmed
/// the process aborts, because returning would end borrows (of memory the caller owns,
/// `'env`) that the lane's kernels and copies may still be using — a use-after-free the
/// borrow checker was promised cannot happen ([rule 5](crate#safety-model)).
fn join_stream(stream: &StreamHandle, lane: LaneId) -> std::result::Result<(), DriverError> {
    let mut last = None;
    for attempt in 0..JOIN_ATTEMPTS {
        match stream.synchronize() {
            Ok(()) => return Ok(()),
            Err(e) if e.is_sticky() => return Err(e),
            Err(e) => {
                last = Some(e);
                if attempt + 1 < JOIN_ATTEMPTS {
                    // 1, 4, 16, 64 ms: room for a transient failure to clear.
                    std::thread::sleep(std::time::Duration::from_millis(1 << (2 * attempt)));
                }
            }
        }
    }
    let last = last.map_or_else(String::new, |e| e.to_string());
    // The one message library code prints: the process is about to abort, and nothing
    // else could say why.
    eprintln!(
        "sluice: cannot join {lane} at the end of a scope: cuStreamSynchronize failed {JOIN_ATTEMPTS} times \
         (last: {last}). Its work may still be using memory whose borrows end when the scope \
         returns, so sluice aborts the process instead of returning."
    );
    std::process::abort()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The idle events a scope leaves stay split by kind (`[fences, timestamps]`), so that the
    /// next scope's start sorts none: the segments' `done` events, which come back through the
    /// log at the scope's end, land among the fences, and the timestamps among their own.
    #[test]
    fn idle_events_stay_split_by_kind_across_scopes() {
        let gpu = Gpu::cpu();
        let mut set = LaneSet::new(&gpu);
        let mut host = gpu.pinned_matrix::<u32>(64, 8).unwrap();
        for round in 0..3 {
            set.scope(|s| {
                let m = s.alloc_matrix::<u32>(64, 8)?;
                // 8 lanes form segments (of 4 by default): their `done` events come back
                // through the log at the scope's end.
                for ((lane, col), dst) in s.lanes(8)?.into_iter().zip(m.columns_mut()).zip(host.columns_mut()) {
                    lane.enter(|st| {
                        let t0 = st.timestamp()?;
                        let mut v = st.bind(col);
                        st.zero(&mut v)?;
                        drop((st.copy_to_host(&v, dst)?, t0));
                        Ok(())
                    })?;
                }
                Ok(())
            })
            .unwrap();
            let [fences, timing] = &set.kept.events;
            assert!(
                !fences.is_empty() && !timing.is_empty(),
                "round {round}: {} fences, {} timing",
                fences.len(),
                timing.len()
            );
            assert!(fences.iter().all(|e| !e.timing()), "round {round}: a timing event among the fences");
            assert!(timing.iter().all(|e| e.timing()), "round {round}: a fence among the timing events");
        }
    }

    #[test]
    fn scopes_are_send_and_sync() {
        fn assert<T: Send + Sync>() {}
        assert::<Scope<'static, 'static>>();
    }

    fn lost(lane: usize) -> Error {
        Error::ContextLost {
            error: DriverError::from_code(719),
            lane: Some(LaneId::Lane(lane)),
            fault: None,
            kernels: Vec::new(),
        }
    }

    /// Lane 4 launched kernel `a` (at `src`); lane 0 nothing.
    fn one_busy(src: Option<SourceSpan>) -> Vec<(LaneId, LaunchedKernels)> {
        vec![(LaneId::Lane(0), vec![]), (LaneId::Lane(4), vec![("a", src)])]
    }

    fn record(message: &str) -> crate::error::DeviceFault {
        crate::error::DeviceFault {
            block: [1, 0, 0],
            thread: [5, 0, 0],
            message: message.into(),
            kernel: None,
            lanes: Vec::new(),
        }
    }

    #[test]
    fn a_recorded_fault_names_the_kernel_around_its_location_and_the_lane_that_ran_it() {
        let src_a = Some(("gpu-kernels/src/device.rs", 10, 20));
        let src_b = Some(("gpu-kernels/src/device.rs", 30, 40));
        let launched = vec![
            (LaneId::Lane(0), vec![("a", src_a)]),
            (LaneId::Lane(1), vec![("a", src_a)]),
            (LaneId::Lane(2), vec![("b", src_b)]),
            (LaneId::Lane(3), vec![]),
        ];
        // The join of lane 0 saw the loss first; the record's location is in `b`, on lane 2.
        let mut errors = vec![lost(0)];
        attribute_fault(&mut errors, Some(record("kernel failed at src/device.rs:35:9: boom")), &launched);
        let Error::ContextLost { lane, fault: Some(f), .. } = &errors[0] else { panic!("{errors:?}") };
        assert_eq!((*lane, f.kernel, &f.lanes[..]), (Some(LaneId::Lane(2)), Some("b"), &[LaneId::Lane(2)][..]));
        assert!(errors[0].to_string().contains("kernel `b`, block (1, 0, 0), thread (5, 0, 0)"), "{}", errors[0]);

        // In `a`, which two lanes ran: both are named, the lane stays the first join's.
        let mut errors = vec![lost(0)];
        attribute_fault(&mut errors, Some(record("kernel failed at gpu-kernels/src/device.rs:12:1: x")), &launched);
        let Error::ContextLost { lane, fault: Some(f), .. } = &errors[0] else { panic!() };
        assert_eq!((*lane, f.kernel, f.lanes.len()), (Some(LaneId::Lane(0)), Some("a"), 2));
        assert!(errors[0].to_string().contains("on one of lane 0, lane 1"), "{}", errors[0]);

        // ...and the message does not say lane 0 faulted.
        let shown = errors[0].to_string();
        assert!(shown.contains("first seen by lane 0's join; which lane's work faulted is not known"), "{shown}");

        // A location outside every kernel (a helper function): no kernel, lane unchanged, and
        // not blamed.
        let mut errors = vec![lost(1)];
        attribute_fault(&mut errors, Some(record("kernel failed at src/lib.rs:3:1: x")), &launched);
        let Error::ContextLost { lane, fault: Some(f), .. } = &errors[0] else { panic!() };
        assert_eq!((*lane, f.kernel, f.lanes.len()), (Some(LaneId::Lane(1)), None, 0));
        assert!(!errors[0].to_string().contains("lane 1 faulted"), "{}", errors[0]);
        // The same with one busy lane: that lane, named.
        let mut errors = vec![lost(0)];
        attribute_fault(&mut errors, Some(record("kernel failed at src/lib.rs:3:1: x")), &one_busy(src_a));
        let Error::ContextLost { lane, fault: Some(f), .. } = &errors[0] else { panic!() };
        assert_eq!((*lane, &f.lanes[..]), (Some(LaneId::Lane(4)), &[LaneId::Lane(4)][..]));
        assert!(errors[0].to_string().starts_with("lane 4 faulted: "), "{}", errors[0]);

        // No record, one busy lane: that lane.
        let one = one_busy(src_a);
        let mut errors = vec![lost(0)];
        attribute_fault(&mut errors, None, &one);
        let Error::ContextLost { lane: Some(LaneId::Lane(4)), fault: None, kernels, .. } = &errors[0] else {
            panic!("{errors:?}")
        };
        assert_eq!(kernels, &["a"]);
        let shown = errors[0].to_string();
        assert!(shown.starts_with("lane 4 faulted: "), "{shown}");
        assert!(
            shown.contains(", in `a` (the kernel it launched in this scope; the device recorded nothing"),
            "{shown}"
        );

        // No record, several busy lanes: no lane to blame, no kernels named.
        let mut errors = vec![lost(0)];
        attribute_fault(&mut errors, None, &launched);
        assert!(
            matches!(&errors[0], Error::ContextLost { lane: Some(LaneId::Lane(0)), kernels, .. } if kernels.is_empty())
        );
        // ...and the message does not blame the lane whose join saw it first.
        let shown = errors[0].to_string();
        assert!(shown.contains("first seen by lane 0's join; which lane's work faulted is not known"), "{shown}");
        assert!(!shown.contains("lane 0 faulted"), "{shown}");
    }

    #[test]
    fn fault_locations_parse_and_paths_match_by_suffix() {
        assert_eq!(fault_location("kernel failed at a/b.rs:12:5: msg: with colons"), Some(("a/b.rs", 12)));
        assert_eq!(fault_location("panicked elsewhere"), None);
        assert!(same_file("gpu-kernels/src/device.rs", "src/device.rs"));
        assert!(same_file("src/device.rs", "/abs/gpu-kernels/src/device.rs"));
        assert!(!same_file("src/device.rs", "src/xdevice.rs"));
    }

    #[test]
    fn lanes_whose_last_work_was_awaited_join_through_their_awaiter() {
        use std::sync::atomic::Ordering;
        let ctx = crate::handle::Context::cpu();
        let lane = |i: usize| {
            Box::new(LaneInner::new(crate::handle::StreamHandle::create(&ctx).expect("stream"), LaneId::Lane(i)))
        };
        let (a, b, c, d, e) = (lane(0), lane(1), lane(2), lane(3), lane(4));
        // a: 2 operations, then a fence awaited by b (b has nothing after the wait: b's own
        // last fence is awaited by the host).
        a.enqueued.store(2, Ordering::Relaxed);
        a.note_awaited(2, Cover::Lane(LaneId::Lane(1)));
        b.enqueued.store(3, Ordering::Relaxed);
        b.note_awaited(3, Cover::Host);
        // c: its fence was awaited, but it did more afterwards: synchronized.
        c.enqueued.store(5, Ordering::Relaxed);
        c.note_awaited(4, Cover::Lane(LaneId::Lane(3)));
        // d: awaited by e, which is synchronized (e's work is not covered).
        d.enqueued.store(1, Ordering::Relaxed);
        d.note_awaited(1, Cover::Lane(LaneId::Lane(4)));
        e.enqueued.store(2, Ordering::Relaxed);
        let order = join_order(vec![a, b, c, d, e], false);
        let got: Vec<(LaneId, Option<Cover>)> = order.iter().map(|(l, c)| (l.id, *c)).collect();
        let synced: Vec<LaneId> = got.iter().filter(|(_, c)| c.is_none()).map(|(l, _)| *l).collect();
        assert_eq!(synced, [LaneId::Lane(2), LaneId::Lane(4)], "{got:?}");
        // Every lane joined through another comes after it.
        for (i, (l, c)) in got.iter().enumerate() {
            if let Some(Cover::Lane(by)) = c {
                let at = got.iter().position(|(x, _)| x == by).expect("the awaiter is joined");
                assert!(at < i, "{l} is joined through {by}, which comes later: {got:?}");
            }
        }
        assert!(
            got.contains(&(LaneId::Lane(1), Some(Cover::Host)))
                && got.contains(&(LaneId::Lane(0), Some(Cover::Lane(LaneId::Lane(1)))))
        );
        // The CPU backend synchronizes every lane.
        let all: Vec<_> = order.into_iter().map(|(l, _)| l).collect();
        assert!(join_order(all, true).iter().all(|(_, c)| c.is_none()));
    }
}
