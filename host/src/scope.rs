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
//! `lane()` usually costs no `cuStreamCreate`.
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
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use bytemuck::Pod;

use crate::device::{lock, Gpu};
use crate::driver::{self, DriverError, RawContext, RawEvent, RawStream};
use crate::error::{Error, Result};
use crate::fence::{Fence, Fenced, Timestamp};
use crate::memory::{ColumnsRef, DeviceMatrix, PinnedMatrix};
use crate::stream::Stream;

/// Runs `f` with a [`Scope`] in which it can create lanes and enqueue work, then joins every
/// lane the scope created and frees the memory it allocated: `std::thread::scope` for GPU
/// streams.
///
/// The join happens here, in `scope`'s own frame, after `f` returns — also when `f`
/// returns an error or panics (the panic is resumed after the join). It waits on each lane
/// (`cuStreamSynchronize`), never on the whole device.
///
/// Returns `f`'s result; if `f` succeeded but a lane failed to join or memory failed to
/// free, that error instead. If `f` returned an error *and* ending the scope failed, both
/// come back as [`Error::Cleanup`] ([`Error::primary`] is `f`'s). If `f` panicked, errors
/// ending the scope are printed to stderr before the panic resumes.
///
/// # Aborts
///
/// If a lane cannot be joined (its `cuStreamSynchronize` keeps failing) with an error that
/// does not mean the context is lost, the process aborts after printing the error:
/// returning would end the borrows of memory that the lane's work may still be using.
///
/// ```no_run
/// use sluice_host::{scope, Gpu, Kernel, LaunchConfig, Mut};
/// # const FILL: Kernel<(Mut<f32>, f32)> = unsafe { Kernel::new("", "fill_column") };
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
/// # Ok::<(), sluice_host::Error>(())
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
/// whose copy is pending (rule 4):
///
/// ```compile_fail,E0502
/// # use sluice_host::{scope, Gpu};
/// # fn demo(gpu: &Gpu) -> sluice_host::Result<()> {
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
/// # use sluice_host::{scope, Gpu};
/// # fn demo(gpu: &Gpu) -> sluice_host::Result<()> {
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
    let scope = Scope { shared: ScopeShared::new(gpu.clone()), _scope: PhantomData, _env: PhantomData };
    let outcome = catch_unwind(AssertUnwindSafe(|| f(&scope)));
    // Every borrow handed to `f` has ended (nothing carrying 'scope can escape `f`), but
    // work may still run on the lanes: join them before anything is freed.
    let end = scope.shared.finish();
    match outcome {
        Err(panic) => {
            if let Err(e) = end {
                // The panic is resumed, so this cannot be returned: do not lose it either.
                crate::error::report_dropped("ending a scope whose closure panicked", &e);
            }
            resume_unwind(panic)
        }
        Ok(Err(e)) => Err(match end {
            Ok(()) => e,
            Err(cleanup) => e.also(cleanup),
        }),
        Ok(Ok(r)) => end.map(|()| r),
    }
}

/// The handle a [`scope`] closure receives: creates lanes, allocates memory that lives
/// until the scope ends, and uploads shared read-only data.
///
/// The std analogue is [`std::thread::Scope`].
///
/// ```no_run
/// # fn demo(gpu: &sluice_host::Gpu, data: &[f32]) -> sluice_host::Result<()> {
/// sluice_host::scope(gpu, |s| {
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
    _scope: PhantomData<&'scope mut &'scope ()>,
    /// Invariant in 'env, as std's `Scope`.
    _env: PhantomData<&'env mut &'env ()>,
}

/// What lanes and fences of one scope share: the device, the lanes to join, the events
/// to reuse, the memory to free.
pub(crate) struct ScopeShared {
    pub(crate) gpu: Gpu,
    state: Mutex<State>,
}

/// An owned heap value the scope frees at its end. A raw pointer (from `Box::into_raw`),
/// not a `Box`: `&'scope` references into it are handed out while it sits here.
struct Owned<T: ?Sized>(NonNull<T>);
// SAFETY: the pointee is `Send` (bounded where `Owned`s are made) and only the scope's
// thread dereferences the pointer itself, at the scope's end.
unsafe impl<T: ?Sized + Send> Send for Owned<T> {}

/// Memory a scope frees at its end.
trait ScopeOwned: Send {
    fn release(self: Box<Self>) -> Result<()>;
}

impl<T: Pod> ScopeOwned for DeviceMatrix<T> {
    fn release(self: Box<Self>) -> Result<()> {
        (*self).free()
    }
}

impl<T: Pod + Send> ScopeOwned for PinnedMatrix<T> {
    fn release(self: Box<Self>) -> Result<()> {
        (*self).free()
    }
}

#[derive(Default)]
struct State {
    lanes: Vec<Owned<LaneInner>>,
    upload: Option<Owned<LaneInner>>,
    owned: Vec<Owned<dyn ScopeOwned>>,
    /// Every fence event this scope holds (free or in use).
    events: Vec<RawEvent>,
    free_events: Vec<RawEvent>,
    timing_events: Vec<RawEvent>,
    free_timing_events: Vec<RawEvent>,
}

/// A lane's stream and counters. Lives (boxed) in its scope's state until the scope ends.
pub(crate) struct LaneInner {
    pub(crate) stream: RawStream,
    pub(crate) index: usize,
    pub(crate) events_recorded: AtomicU64,
    pub(crate) waits_enqueued: AtomicU64,
    pub(crate) launches: AtomicU64,
    pub(crate) copies: AtomicU64,
}

impl LaneInner {
    pub(crate) fn stats(&self) -> LaneStats {
        LaneStats {
            index: self.index,
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
    /// The lane's index in its scope (`usize::MAX` for the upload lane).
    pub index: usize,
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
    pub(crate) shared: &'scope ScopeShared,
    pub(crate) inner: &'scope LaneInner,
    /// Invariant in 'scope: a covariant lane could shrink to a shorter `'scope`, and its
    /// stream would then accept borrows that end before the scope joins (rule 5).
    _scope: PhantomData<fn(&'scope ()) -> &'scope ()>,
}

impl Clone for Lane<'_> {
    fn clone(&self) -> Self {
        *self
    }
}
impl Copy for Lane<'_> {}

impl std::fmt::Debug for Lane<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Lane").field("index", &self.inner.index).finish()
    }
}

impl<'scope> Lane<'scope> {
    /// Enters the lane: runs `f` with the lane's [`Stream`], branded with a fresh lifetime
    /// `'id` that only this call's views carry.
    ///
    /// Everything `f` enqueues runs on this lane, in order. Views bound inside cannot
    /// leave `f` (its result type cannot name `'id`) nor be used on another lane; hand
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
    /// `for<'id>`: the closure must work for any brand, so `'id` is unrelated to every
    /// other lifetime, in particular to other entered lanes' brands. This is the branding
    /// trick of `generativity`/`GhostCell`.
    pub fn enter<R>(&self, f: impl for<'id> FnOnce(&Stream<'scope, 'id>) -> R) -> R {
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
        self.inner.index
    }
}

impl<'scope, 'env> Scope<'scope, 'env> {
    /// A new lane: an idle non-blocking CUDA stream from the device's pool (or a new one),
    /// joined when the scope ends.
    ///
    /// ```no_run
    /// # fn demo(gpu: &sluice_host::Gpu) -> sluice_host::Result<()> {
    /// sluice_host::scope(gpu, |s| {
    ///     let lane = s.lane()?;
    ///     assert_eq!(lane.index(), 0);
    ///     Ok(())
    /// })
    /// # }
    /// ```
    pub fn lane(&'scope self) -> Result<Lane<'scope>> {
        let mut st = lock(&self.shared.state);
        let inner = self.shared.new_lane(st.lanes.len())?;
        let ptr = inner.0;
        st.lanes.push(inner);
        // SAFETY: the box stays allocated until `finish`, which runs after every
        // `'scope` borrow has ended; it is only read (atomics) meanwhile.
        Ok(Lane { shared: &self.shared, inner: unsafe { ptr.as_ref() }, _scope: PhantomData })
    }

    /// Creates `n` lanes.
    ///
    /// ```no_run
    /// # fn demo(gpu: &sluice_host::Gpu) -> sluice_host::Result<()> {
    /// sluice_host::scope(gpu, |s| {
    ///     assert_eq!(s.lanes(8)?.len(), 8);
    ///     Ok(())
    /// })
    /// # }
    /// ```
    pub fn lanes(&'scope self, n: usize) -> Result<Vec<Lane<'scope>>> {
        (0..n).map(|_| self.lane()).collect()
    }

    /// A `rows` x `cols` device matrix that lives until the scope ends (and is freed then,
    /// after the joins). Holds arbitrary bits until written.
    ///
    /// # Errors
    /// As [`Gpu::alloc_matrix`].
    ///
    /// ```no_run
    /// # fn demo(gpu: &sluice_host::Gpu) -> sluice_host::Result<()> {
    /// sluice_host::scope(gpu, |s| {
    ///     let m = s.alloc_matrix::<f32>(1024, 8)?;
    ///     assert_eq!(m.columns_mut().len(), 8);
    ///     Ok(())
    /// })
    /// # }
    /// ```
    pub fn alloc_matrix<T: Pod>(&'scope self, rows: usize, cols: usize) -> Result<&'scope mut DeviceMatrix<T>> {
        Ok(self.shared.keep(DeviceMatrix::alloc(&self.shared.gpu, rows, cols, rows)?))
    }

    /// As [`alloc_matrix`](Scope::alloc_matrix) with leading dimension `ld >= rows`.
    ///
    /// ```no_run
    /// # fn demo(gpu: &sluice_host::Gpu) -> sluice_host::Result<()> {
    /// sluice_host::scope(gpu, |s| {
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
        Ok(self.shared.keep(DeviceMatrix::alloc(&self.shared.gpu, rows, cols, ld)?))
    }

    /// A device buffer of `len` elements (one column) that lives until the scope ends.
    ///
    /// ```no_run
    /// # fn demo(gpu: &sluice_host::Gpu) -> sluice_host::Result<()> {
    /// sluice_host::scope(gpu, |s| {
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
    /// # fn demo(gpu: &sluice_host::Gpu) -> sluice_host::Result<()> {
    /// sluice_host::scope(gpu, |s| {
    ///     let h = s.pinned_matrix::<f32>(256, 2)?;
    ///     assert_eq!(h.len(), 512);
    ///     Ok(())
    /// })
    /// # }
    /// ```
    pub fn pinned_matrix<T: Pod + Send>(&'scope self, rows: usize, cols: usize) -> Result<&'scope mut PinnedMatrix<T>> {
        Ok(self.shared.keep(PinnedMatrix::alloc(&self.shared.gpu, rows, cols)?))
    }

    /// A zeroed pinned host buffer of `len` elements (one column) that lives until the
    /// scope ends.
    ///
    /// ```no_run
    /// # fn demo(gpu: &sluice_host::Gpu) -> sluice_host::Result<()> {
    /// sluice_host::scope(gpu, |s| {
    ///     let h = s.pinned_buffer::<u8>(4096)?;
    ///     assert_eq!(h.cols(), 1);
    ///     Ok(())
    /// })
    /// # }
    /// ```
    pub fn pinned_buffer<T: Pod + Send>(&'scope self, len: usize) -> Result<&'scope mut PinnedMatrix<T>> {
        self.pinned_matrix(len, 1)
    }

    /// Uploads `data` once into a new device buffer, for any number of lanes to read
    /// (rule 3). The copy runs on the scope's upload lane; each reader awaits the returned
    /// fence with [`Stream::await_fence`] (a GPU-side wait — the host never blocks) and
    /// gets a read-only [`ColumnView`](crate::ColumnView) on its own lane.
    ///
    /// `data` stays borrowed until the scope ends, so the host cannot change or free it
    /// while the copy may still read it (rule 4). Pinned `data` copies fastest; pageable
    /// data is staged by the driver.
    ///
    /// # Errors
    /// [`Error::ZeroSized`] for empty `data`; allocation and copy errors.
    ///
    /// ```no_run
    /// # fn demo(gpu: &sluice_host::Gpu, sources: &[[f32; 4]]) -> sluice_host::Result<()> {
    /// sluice_host::scope(gpu, |s| {
    ///     let shared = s.upload(sources)?;
    ///     for lane in s.lanes(4)? {
    ///         lane.enter(|st| {
    ///             let src = st.await_fence(&shared)?;
    ///             assert_eq!(src.len(), sources.len());
    ///             Ok::<_, sluice_host::Error>(())
    ///         })?;
    ///     }
    ///     Ok(())
    /// })
    /// # }
    /// ```
    ///
    /// Changing uploaded data inside the scope does not compile:
    ///
    /// ```compile_fail,E0502
    /// # fn demo(gpu: &sluice_host::Gpu) -> sluice_host::Result<()> {
    /// let mut data = vec![1.0f32; 1024];
    /// sluice_host::scope(gpu, |s| {
    ///     let shared = s.upload(&data)?;
    ///     data[0] = 2.0; // error[E0502]: `data` is borrowed by the upload until the scope ends
    ///     # drop(shared);
    ///     Ok(())
    /// })
    /// # }
    /// ```
    ///
    /// Change it before the scope, or after it.
    ///
    /// ```no_run
    /// # fn demo(gpu: &sluice_host::Gpu) -> sluice_host::Result<()> {
    /// let mut data = vec![1.0f32; 1024];
    /// data[0] = 2.0;
    /// sluice_host::scope(gpu, |s| s.upload(&data).map(drop))?;
    /// data[0] = 3.0;
    /// # Ok(()) }
    /// ```
    pub fn upload<T: Pod>(&'scope self, data: &'scope [T]) -> Result<Fenced<'scope, ColumnsRef<'scope, T>>> {
        self.upload_matrix(data, data.len(), 1)
    }

    /// Uploads `data` as a `rows` x `cols` column-major matrix (`data.len()` must be
    /// `rows * cols`), for lanes to read whole or by column.
    ///
    /// ```no_run
    /// # fn demo(gpu: &sluice_host::Gpu, targets: &[f32]) -> sluice_host::Result<()> {
    /// sluice_host::scope(gpu, |s| {
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
        data: &'scope [T],
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
        st.copy_to_device(data, &mut view)?;
        st.fence(view.into_view())
    }

    /// A timestamp on the scope's upload lane (e.g. a common start for profiles).
    ///
    /// ```no_run
    /// # fn demo(gpu: &sluice_host::Gpu) -> sluice_host::Result<()> {
    /// sluice_host::scope(gpu, |s| {
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
    /// # fn demo(gpu: &sluice_host::Gpu) -> sluice_host::Result<()> {
    /// sluice_host::scope(gpu, |s| {
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
            None => LaneStats { index: usize::MAX, ..LaneStats::default() },
        }
    }

    /// The device this scope runs on.
    ///
    /// ```no_run
    /// # fn demo(gpu: &sluice_host::Gpu) -> sluice_host::Result<()> {
    /// sluice_host::scope(gpu, |s| {
    ///     println!("{}", s.gpu().info().name);
    ///     Ok(())
    /// })
    /// # }
    /// ```
    pub fn gpu(&self) -> &Gpu {
        &self.shared.gpu
    }

    fn upload_lane(&'scope self) -> Result<Lane<'scope>> {
        let mut st = lock(&self.shared.state);
        let ptr = match &st.upload {
            Some(l) => l.0,
            None => {
                let l = self.shared.new_lane(usize::MAX)?;
                let ptr = l.0;
                st.upload = Some(l);
                ptr
            }
        };
        // SAFETY: as in `lane`.
        Ok(Lane { shared: &self.shared, inner: unsafe { ptr.as_ref() }, _scope: PhantomData })
    }
}

impl std::fmt::Debug for Scope<'_, '_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Scope").field("gpu", &self.shared.gpu).finish_non_exhaustive()
    }
}

impl ScopeShared {
    fn new(gpu: Gpu) -> ScopeShared {
        ScopeShared { gpu, state: Mutex::new(State::default()) }
    }

    fn new_lane(&self, index: usize) -> Result<Owned<LaneInner>> {
        // An idle stream of an earlier scope, or a new one; `finish` gives it back.
        let stream = self.gpu.take_stream()?;
        let inner = Box::new(LaneInner {
            stream,
            index,
            events_recorded: AtomicU64::new(0),
            waits_enqueued: AtomicU64::new(0),
            launches: AtomicU64::new(0),
            copies: AtomicU64::new(0),
        });
        Ok(Owned(NonNull::from(Box::leak(inner))))
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

    /// An event for a fence: reused from this scope or the device's pool, or new.
    pub(crate) fn take_event(&self, timing: bool) -> Result<RawEvent> {
        {
            let mut st = lock(&self.state);
            let free = if timing { &mut st.free_timing_events } else { &mut st.free_events };
            if let Some(e) = free.pop() {
                return Ok(e);
            }
        }
        let pooled = if timing { None } else { lock(&self.gpu.inner.event_pool).pop() };
        let e = match pooled {
            Some(e) => e,
            // SAFETY: the context is retained while `self.gpu` lives.
            None => unsafe { driver::event::create(self.gpu.ctx(), timing) }
                .map_err(|error| Error::Event { call: "cuEventCreate", error })?,
        };
        let mut st = lock(&self.state);
        if timing { &mut st.timing_events } else { &mut st.events }.push(e);
        Ok(e)
    }

    /// Gives an event back once no one can wait on it through sluice any more. Waits
    /// already enqueued keep waiting on the record they saw, so re-recording is safe.
    pub(crate) fn recycle_event(&self, e: RawEvent, timing: bool) {
        let mut st = lock(&self.state);
        if timing { &mut st.free_timing_events } else { &mut st.free_events }.push(e);
    }

    /// Joins every lane, then releases streams, events and memory. Runs once, in `scope`'s
    /// frame, after the closure.
    ///
    /// Returns only when every lane is joined or the context is lost (see [`join_stream`]);
    /// errors are chained, none dropped.
    fn finish(&self) -> Result<()> {
        let ctx = self.gpu.ctx();
        let st = std::mem::take(&mut *lock(&self.state));
        let mut errors: Vec<Error> = Vec::new();
        let lanes: Vec<Owned<LaneInner>> = st.upload.into_iter().chain(st.lanes).collect();
        // Join: one stream at a time, the host blocks on each in turn (rule 6: never the device).
        let mut joined = Vec::with_capacity(lanes.len());
        let mut lost: Option<DriverError> = None;
        for lane in lanes {
            // SAFETY: `lane` came from `Box::leak` in `new_lane`; every `&'scope LaneInner`
            // is gone (the closure returned), so this is the only owner. The box is host
            // memory the GPU never touches: freeing it before the join is fine.
            let inner = unsafe { Box::from_raw(lane.0.as_ptr()) };
            match join_stream(ctx, inner.stream, inner.index) {
                Ok(()) => joined.push(inner.stream),
                Err(error) => {
                    // Once the context is lost every lane fails the same way: report the first.
                    if lost.is_none() {
                        errors.push(Error::Join { lane: inner.index, error });
                    }
                    lost.get_or_insert(error);
                }
            }
        }
        if lost.is_some() {
            // The context is lost: nothing runs in it any more, every driver call would fail
            // with the same error, and the memory goes when the context does. Leak the
            // streams, events and memory (leaking is always sound); the caller gets the error.
            return Error::chain(errors).map_or(Ok(()), Err);
        }
        for stream in joined {
            // SAFETY: the stream came from `take_stream` on this scope's `Gpu`, its
            // `cuStreamSynchronize` just succeeded after all of its work, and no lane uses it
            // any more (the `LaneInner` holding it is gone).
            if let Err(error) = unsafe { self.gpu.recycle_stream(stream) } {
                errors.push(Error::Free { what: "stream", error });
            }
        }
        // Every wait on these events has been passed: they can serve other scopes.
        let mut pool = lock(&self.gpu.inner.event_pool);
        for e in st.events {
            if pool.len() < EVENT_POOL_LIMIT {
                pool.push(e);
            } else {
                // SAFETY: the event is alive and no longer used.
                if let Err(error) = unsafe { driver::event::destroy(ctx, e) } {
                    errors.push(Error::Free { what: "event", error });
                }
            }
        }
        drop(pool);
        for e in st.timing_events {
            // SAFETY: as above.
            if let Err(error) = unsafe { driver::event::destroy(ctx, e) } {
                errors.push(Error::Free { what: "event", error });
            }
        }
        for owned in st.owned {
            // SAFETY: `owned` came from `Box::leak` in `keep`; the `&'scope mut` lent out
            // is gone (the closure returned) and every lane that could use the memory
            // has been joined above.
            let b = unsafe { Box::from_raw(owned.0.as_ptr()) };
            if let Err(e) = b.release() {
                errors.push(e);
            }
        }
        Error::chain(errors).map_or(Ok(()), Err)
    }
}

/// How many times a lane's join is tried before the scope gives up on it.
const JOIN_ATTEMPTS: u32 = 5;

/// Blocks until `stream` has run everything enqueued on it (`cuStreamSynchronize`, this
/// stream only). Returns `Ok` once that is confirmed, and `Err` only for a sticky error:
/// the context is lost and runs nothing any more, so nothing can still use the scope's
/// memory. Any other failure is retried a few times; if the join still cannot be confirmed
/// the process aborts, because returning would end borrows (of memory the caller owns,
/// `'env`) that the lane's kernels and copies may still be using — a use-after-free the
/// borrow checker was promised cannot happen (rule 5).
fn join_stream(ctx: RawContext, stream: RawStream, lane: usize) -> std::result::Result<(), DriverError> {
    let mut last = None;
    for attempt in 0..JOIN_ATTEMPTS {
        // SAFETY: the stream is alive (it is pooled or destroyed only after this) and the
        // context retained while the scope's `Gpu` lives.
        match unsafe { driver::stream::synchronize(ctx, stream) } {
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
    let which = if lane == usize::MAX { "the scope's upload lane".to_string() } else { format!("lane {lane}") };
    let last = last.map_or_else(String::new, |e| e.to_string());
    eprintln!(
        "sluice: cannot join {which} at the end of a scope: cuStreamSynchronize failed {JOIN_ATTEMPTS} times \
         (last: {last}). Its work may still be using memory whose borrows end when the scope \
         returns, so sluice aborts the process instead of returning."
    );
    std::process::abort()
}

/// Most idle fence events a device keeps for later scopes.
const EVENT_POOL_LIMIT: usize = 4096;

impl<'scope, 'id> Stream<'scope, 'id> {
    /// The fence of a fresh event recorded on this lane now.
    pub(crate) fn record_event(&self, timing: bool) -> Result<(RawEvent, &'scope ScopeShared)> {
        let shared = self.lane.shared;
        let e = shared.take_event(timing)?;
        // SAFETY: the event and stream are alive until the scope ends; context retained.
        if let Err(error) = unsafe { driver::event::record(shared.gpu.ctx(), e, self.lane.inner.stream) } {
            shared.recycle_event(e, timing);
            return Err(Error::Event { call: "cuEventRecord", error });
        }
        self.lane.inner.events_recorded.fetch_add(1, Ordering::Relaxed);
        Ok((e, shared))
    }

    /// A plain fence recorded on this lane now (no data attached): awaiting it orders
    /// later work after everything enqueued here so far.
    ///
    /// ```no_run
    /// # fn demo(gpu: &sluice_host::Gpu) -> sluice_host::Result<()> {
    /// sluice_host::scope(gpu, |s| {
    ///     let (a, b) = (s.lane()?, s.lane()?);
    ///     let f = a.enter(|st| st.record())?;
    ///     b.enter(|st| st.await_fence(&f))?;   // b's later work runs after a's so far
    ///     Ok(())
    /// })
    /// # }
    /// ```
    pub fn record(&self) -> Result<Fence<'scope>> {
        let (event, shared) = self.record_event(false)?;
        Ok(Fence::new(shared, event, self.lane.inner.stream, false))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lanes_are_send_and_sync() {
        fn assert<T: Send + Sync>() {}
        assert::<Lane<'static>>();
        assert::<Scope<'static, 'static>>();
    }
}
