//! The CPU backend's device: what [`handle`](crate::handle) runs when a [`Gpu`](crate::Gpu)
//! is the CPU (no NVIDIA driver or device, or `SLUICE_BACKEND=cpu`).
//!
//! The same model as CUDA's, in host terms:
//!
//! * **device memory** is host memory from the global allocator (256-byte aligned, filled
//!   with `0xff` bytes so that an element never written reads as NaN or all-ones, where the
//!   GPU would give arbitrary bits); **pinned memory** is host memory too (page-aligned,
//!   zeroed);
//! * a **stream** is a worker thread running its operations in order; work on different
//!   streams runs concurrently;
//! * an **event** record is a one-shot completion signal enqueued on a stream; a wait
//!   enqueued on another stream blocks that stream's worker (not the host) until the signal;
//!   a wait sees the record that was the latest when the wait was enqueued, as in CUDA;
//! * a **kernel launch** calls the kernel's CPU entry (the `#[kernel]` body compiled for the
//!   host, run over the grid by `sluice_device::cpu::launch`: blocks in parallel with rayon,
//!   the threads of a block as cooperating tasks with real barriers);
//! * a **fault** (a kernel that panics, a failed `dassert!`) ends the lane: its later work is
//!   skipped, its joins report the fault with the message, the other lanes go on (on a GPU a
//!   fault loses the whole context);
//! * a **graph** is the recorded operations of each captured stream, replayed in an order that
//!   respects the recorded event waits.
//!
//! Nothing here is `unsafe` to call but the operations that write memory the caller names
//! (copies, fills, launches), whose contracts are the CUDA ones.

use std::alloc::Layout;
use std::collections::HashMap;
use std::ffi::c_void;
use std::sync::mpsc::{channel, Sender};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, Weak};
use std::thread::JoinHandle;
use std::time::Instant;

use crate::check::{CheckReport, CpuCheck, CpuLaunch, CpuLaunchError};
use crate::driver::mem::{Direction, Span2d};
use crate::error::{Error, LaneId};

/// A kernel's CPU entry: the `#[kernel]` body compiled for the host. `params` points to one
/// pointer per lowered kernel parameter (each to a value of that parameter's size, as for
/// `cuLaunchKernel`); `launch` gives the shape and whether to check it ([`CpuLaunch`]). Runs
/// the whole grid and returns when it is done, or how the launch failed: the message of the
/// first thread that panicked, or the checking mode's report ([`CpuLaunchError`]).
///
/// # Safety
/// The caller passes the kernel's parameters in its ABI, valid for the launch, and keeps the
/// memory they point to unshared in conflicting ways until the entry returns.
pub type CpuEntry = unsafe fn(params: *const *mut c_void, launch: &CpuLaunch) -> Result<(), CpuLaunchError>;

/// Why a CPU stream stopped: the message its joins report, and the checking mode's report
/// when that is what failed the launch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CpuFault {
    pub(crate) message: String,
    pub(crate) report: Option<Box<CheckReport>>,
    /// The lane whose operation failed, where that is not the lane of the stream that ran
    /// it: an operation of a graph, captured for that lane ([`CpuStream::set_label`]).
    pub(crate) lane: Option<LaneId>,
}

impl CpuFault {
    /// The error a scope's join reports for a fault on lane `lane`'s stream (naming the lane
    /// a graph's failed operation was captured for instead, if it knows one).
    pub(crate) fn into_error(self, lane: LaneId) -> Error {
        let lane = self.lane.unwrap_or(lane);
        match self.report {
            Some(report) => Error::KernelCheck { lane, report },
            None => Error::KernelFault { lane, message: self.message },
        }
    }
}

impl From<String> for CpuFault {
    fn from(message: String) -> CpuFault {
        CpuFault { message, report: None, lane: None }
    }
}

impl From<&str> for CpuFault {
    fn from(message: &str) -> CpuFault {
        CpuFault::from(message.to_string())
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// The CPU "device": its allocations (for frees and `mem_info`).
pub(crate) struct CpuDevice {
    allocations: Mutex<HashMap<u64, Layout>>,
    total: usize,
    /// Whether its launches are checked: [`CHECK_AUTO`] ([`CpuCheck::auto`]), or a
    /// [`CpuCheck`] set for this device (`1` on, `2` off).
    check: std::sync::atomic::AtomicU8,
}

/// [`CpuDevice::check`]'s value before [`CpuDevice::set_check`].
const CHECK_AUTO: u8 = 0;

/// The bytes `/proc/meminfo` reports, or 16 GiB.
fn system_memory() -> usize {
    std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|m| {
            let line = m.lines().find(|l| l.starts_with("MemTotal:"))?;
            let kb: usize = line.split_whitespace().nth(1)?.parse().ok()?;
            kb.checked_mul(1024)
        })
        .unwrap_or(16 << 30)
}

impl CpuDevice {
    pub(crate) fn new() -> CpuDevice {
        CpuDevice {
            allocations: Mutex::new(HashMap::new()),
            total: system_memory(),
            check: std::sync::atomic::AtomicU8::new(CHECK_AUTO),
        }
    }

    /// Whether launches on this device are checked now.
    pub(crate) fn check(&self) -> CpuCheck {
        match self.check.load(std::sync::atomic::Ordering::Relaxed) {
            1 => CpuCheck::On,
            2 => CpuCheck::Off,
            _ => CpuCheck::auto(),
        }
    }

    /// Checks (or not) the launches enqueued from now on.
    pub(crate) fn set_check(&self, check: CpuCheck) {
        let v = match check {
            CpuCheck::On => 1,
            CpuCheck::Off => 2,
        };
        self.check.store(v, std::sync::atomic::Ordering::Relaxed);
    }

    /// `bytes` of memory aligned to `align`, every byte `fill`; `None` if the allocator
    /// refuses (out of memory) or the layout is impossible.
    pub(crate) fn alloc(&self, bytes: usize, align: usize, fill: u8) -> Option<u64> {
        let layout = Layout::from_size_align(bytes.max(1), align).ok()?;
        // SAFETY: the layout has a non-zero size.
        let p = unsafe { std::alloc::alloc(layout) };
        if p.is_null() {
            return None;
        }
        // SAFETY: `p` is valid for `layout.size()` writable bytes, just allocated.
        unsafe { std::ptr::write_bytes(p, fill, layout.size()) };
        lock(&self.allocations).insert(p as u64, layout);
        Some(p as u64)
    }

    /// Fills an allocation of [`alloc`](CpuDevice::alloc) with `fill` again (memory kept for
    /// a later scope, poisoned as a fresh allocation is); `false` if `ptr` is not one.
    ///
    /// # Safety
    /// - Nothing uses the memory any more.
    pub(crate) unsafe fn refill(&self, ptr: u64, fill: u8) -> bool {
        let Some(layout) = lock(&self.allocations).get(&ptr).copied() else { return false };
        // SAFETY: allocated by `alloc` with this layout (the map says so) and not freed (still
        // in the map); unused (caller's duty).
        unsafe { std::ptr::write_bytes(ptr as *mut u8, fill, layout.size()) };
        true
    }

    /// Frees an allocation of [`alloc`](CpuDevice::alloc); `false` if `ptr` is not one.
    ///
    /// # Safety
    /// - Nothing uses the memory any more.
    pub(crate) unsafe fn free(&self, ptr: u64) -> bool {
        let Some(layout) = lock(&self.allocations).remove(&ptr) else { return false };
        // SAFETY: allocated by `alloc` with this layout (the map says so), freed once (removed
        // from the map), unused (caller's duty).
        unsafe { std::alloc::dealloc(ptr as *mut u8, layout) };
        true
    }

    /// Free and total bytes: the system's memory less what this device holds.
    pub(crate) fn mem_info(&self) -> (usize, usize) {
        let used: usize = lock(&self.allocations).values().map(|l| l.size()).sum();
        (self.total.saturating_sub(used), self.total)
    }
}

impl Drop for CpuDevice {
    fn drop(&mut self) {
        // Allocations still held when the last handle goes (leaked matrices, lost scopes):
        // nothing can use them any more.
        for (ptr, layout) in lock(&self.allocations).drain() {
            // SAFETY: allocated with this layout by `alloc`; the device (and every stream
            // that could use the memory) is gone.
            unsafe { std::alloc::dealloc(ptr as *mut u8, layout) };
        }
    }
}

/// A one-shot completion: one record of an event (with the fault of the lane that reached
/// it, if that lane had faulted: whoever waits for it learns of the fault).
pub(crate) struct Completion {
    done: Mutex<Option<(Instant, Option<String>)>>,
    cv: Condvar,
    /// The recording this record belongs to, if it was captured.
    recording: Option<Weak<Recording>>,
}

impl Completion {
    fn new(recording: Option<Weak<Recording>>) -> Arc<Completion> {
        Arc::new(Completion { done: Mutex::new(None), cv: Condvar::new(), recording })
    }

    fn signal(&self, fault: Option<String>) {
        let mut done = lock(&self.done);
        done.get_or_insert_with(|| (Instant::now(), fault));
        self.cv.notify_all();
    }

    /// When it completed, or the fault of the lane that reached it.
    fn wait(&self) -> Result<Instant, String> {
        let mut done = lock(&self.done);
        loop {
            if let Some((at, fault)) = &*done {
                return match fault {
                    None => Ok(*at),
                    Some(m) => Err(m.clone()),
                };
            }
            done = self.cv.wait(done).unwrap_or_else(|p| p.into_inner());
        }
    }
}

/// An event: its latest record (`None`: never recorded).
pub(crate) struct CpuEvent {
    latest: Mutex<Option<Arc<Completion>>>,
}

impl CpuEvent {
    pub(crate) fn new() -> CpuEvent {
        CpuEvent { latest: Mutex::new(None) }
    }

    /// Records the event on `stream`: a new completion, signalled when the stream reaches it.
    pub(crate) fn record(&self, stream: &CpuStream) {
        let recording = stream.recording();
        let c = Completion::new(recording.as_ref().map(Arc::downgrade));
        *lock(&self.latest) = Some(c.clone());
        match recording {
            Some(r) => {
                r.push(stream.id, None, RecOp::Signal(c));
            }
            None => stream.send(Op::Signal(c)),
        }
    }

    /// Blocks until the latest record has completed (at once if never recorded).
    pub(crate) fn synchronize(&self) -> Result<(), String> {
        let latest = lock(&self.latest).clone();
        if let Some(c) = latest {
            if c.recording.is_some() {
                return Err("the event was recorded in a graph being recorded".into());
            }
            c.wait()?;
        }
        Ok(())
    }

    /// Milliseconds from `earlier`'s latest record to this one's (both completed).
    pub(crate) fn elapsed_ms_since(&self, earlier: &CpuEvent) -> Result<f32, String> {
        let (a, b) = (lock(&earlier.latest).clone(), lock(&self.latest).clone());
        match (a, b) {
            (Some(a), Some(b)) => {
                let (ta, tb) = (a.wait()?, b.wait()?);
                let ms =
                    if tb >= ta { tb.duration_since(ta).as_secs_f64() } else { -ta.duration_since(tb).as_secs_f64() };
                Ok((ms * 1e3) as f32)
            }
            _ => Err("an event that was never recorded".into()),
        }
    }
}

/// Work on a CPU stream: re-runnable, so that a graph can replay it.
pub(crate) type Work = Arc<dyn Fn() -> Result<(), CpuFault> + Send + Sync>;

/// What a stream's worker runs.
enum Op {
    /// Skipped once the stream has faulted.
    Work(Work),
    /// Always runs: signals a record (waiters must not hang on a faulted lane).
    Signal(Arc<Completion>),
    /// Always runs: waits for another stream's record.
    Wait(Arc<Completion>),
    /// Wakes `synchronize` (always runs).
    Marker,
}

/// A stream's progress, shared with its worker.
struct Progress {
    state: Mutex<ProgressState>,
    cv: Condvar,
}

#[derive(Default)]
struct ProgressState {
    sent: u64,
    done: u64,
    fault: Option<CpuFault>,
}

/// A CPU stream: a worker thread running its operations in order.
pub(crate) struct CpuStream {
    id: usize,
    sender: Mutex<Option<Sender<Op>>>,
    progress: Arc<Progress>,
    worker: Option<JoinHandle<()>>,
    /// The recording this stream takes part in, while it is captured.
    capture: Mutex<Option<Arc<Recording>>>,
    /// The lane the operations it records now are for (see [`CpuFault::lane`]).
    label: Mutex<Option<LaneId>>,
}

impl CpuStream {
    pub(crate) fn new() -> std::io::Result<CpuStream> {
        static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(1);
        let id = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let (tx, rx) = channel::<Op>();
        let progress = Arc::new(Progress { state: Mutex::new(ProgressState::default()), cv: Condvar::new() });
        let p = progress.clone();
        let worker = std::thread::Builder::new().name(format!("sluice-cpu-lane-{id}")).spawn(move || {
            for op in rx {
                let fault = lock(&p.state).fault.clone();
                let outcome = match op {
                    // A panic here is sluice's bug, never the program's (a kernel's own
                    // panics are its launch's error): the lane faults with it rather than
                    // dying with its work unfinished, which would hang every wait for it.
                    Op::Work(w) if fault.is_none() => std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| w()))
                        .unwrap_or_else(|p| {
                            let what = p
                                .downcast_ref::<&str>()
                                .map(|s| s.to_string())
                                .or_else(|| p.downcast_ref::<String>().cloned())
                                .unwrap_or_else(|| "a panic".into());
                            Err(CpuFault::from(format!(
                                "the CPU backend failed running this lane's work: {what} (a bug in sluice: \
                                 please report it)"
                            )))
                        }),
                    Op::Work(_) | Op::Marker => Ok(()),
                    Op::Signal(c) => {
                        c.signal(fault.map(|f| f.message));
                        Ok(())
                    }
                    // A lane that waits for a faulted lane faults too (on a GPU the whole
                    // context would be lost): its work would read what was never written.
                    Op::Wait(c) => c.wait().map(drop).map_err(|m| {
                        CpuFault::from(format!(
                            "waited for a lane that faulted ({m}): through a fence, or through a copy or a graph \
                                 branch a deferred scope shares between the two lanes"
                        ))
                    }),
                };
                let mut st = lock(&p.state);
                if let Err(message) = outcome {
                    st.fault.get_or_insert(message);
                }
                st.done += 1;
                p.cv.notify_all();
            }
        })?;
        Ok(CpuStream {
            id,
            sender: Mutex::new(Some(tx)),
            progress,
            worker: Some(worker),
            capture: Mutex::new(None),
            label: Mutex::new(None),
        })
    }

    pub(crate) fn id(&self) -> usize {
        self.id
    }

    fn send(&self, op: Op) {
        let sender = lock(&self.sender);
        if let Some(tx) = sender.as_ref() {
            lock(&self.progress.state).sent += 1;
            // The worker lives as long as the sender: the send cannot fail.
            let _ = tx.send(op);
        }
    }

    /// The recording this stream is captured into, if any (ended recordings let go).
    fn recording(&self) -> Option<Arc<Recording>> {
        let mut cap = lock(&self.capture);
        if cap.as_ref().is_some_and(|r| r.ended()) {
            *cap = None;
        }
        cap.clone()
    }

    /// Names the lane the operations this stream records from now on are for (`None`: its
    /// own), so that a replay's fault names it ([`CpuFault::lane`]).
    pub(crate) fn set_label(&self, lane: Option<LaneId>) {
        *lock(&self.label) = lane;
    }

    fn label(&self) -> Option<LaneId> {
        *lock(&self.label)
    }

    /// Enqueues work (or records it, while captured).
    pub(crate) fn enqueue(&self, work: Work) {
        match self.recording() {
            Some(r) => {
                r.push(self.id, self.label(), RecOp::Work(work));
            }
            None => self.send(Op::Work(work)),
        }
    }

    /// Enqueues a kernel launch (recorded as a node while captured).
    pub(crate) fn enqueue_kernel(&self, k: Arc<KernelOp>) {
        match self.recording() {
            Some(r) => {
                r.push(self.id, self.label(), RecOp::Kernel(k));
            }
            None => self.send(Op::Work(Arc::new(move || k.run()))),
        }
    }

    /// Makes later work wait for `event`'s latest record. Waiting on a record of a
    /// recording draws this stream into it (as CUDA's stream capture does).
    pub(crate) fn wait(&self, event: &CpuEvent) -> Result<(), String> {
        let Some(c) = lock(&event.latest).clone() else { return Ok(()) };
        let theirs = c.recording.as_ref().and_then(Weak::upgrade).filter(|r| !r.ended());
        match (self.recording(), theirs) {
            (None, None) => self.send(Op::Wait(c)),
            (Some(mine), Some(theirs)) if Arc::ptr_eq(&mine, &theirs) => {
                mine.push(self.id, None, RecOp::Wait(c));
            }
            (None, Some(theirs)) => {
                *lock(&self.capture) = Some(theirs.clone());
                theirs.push(self.id, None, RecOp::Wait(c));
            }
            (Some(_), _) => return Err("a captured stream waited for an event recorded outside its recording".into()),
        }
        Ok(())
    }

    /// Blocks until everything enqueued so far has run; `Err` with the fault's message if a
    /// launch on this stream failed (its later work was skipped).
    pub(crate) fn synchronize(&self) -> Result<(), String> {
        self.send(Op::Marker);
        let target = lock(&self.progress.state).sent;
        let mut st = lock(&self.progress.state);
        while st.done < target {
            st = self.progress.cv.wait(st).unwrap_or_else(|p| p.into_inner());
        }
        match &st.fault {
            Some(f) => Err(f.message.clone()),
            None => Ok(()),
        }
    }

    /// The fault that ended this stream's work, if any.
    pub(crate) fn fault(&self) -> Option<CpuFault> {
        lock(&self.progress.state).fault.clone()
    }

    /// Starts a recording on this stream.
    pub(crate) fn begin_capture(&self) -> Result<(), String> {
        let mut cap = lock(&self.capture);
        if cap.as_ref().is_some_and(|r| !r.ended()) {
            return Err("the stream is already being recorded".into());
        }
        *cap = Some(Arc::new(Recording::default()));
        Ok(())
    }

    /// Ends the recording begun on this stream and returns it.
    pub(crate) fn end_capture(&self) -> Result<Arc<Recording>, String> {
        let r = lock(&self.capture).take().ok_or("the stream is not being recorded")?;
        lock(&r.state).ended = true;
        Ok(r)
    }

    /// Enqueues a copy or fill (recorded as a node whose addresses can change, while captured).
    pub(crate) fn enqueue_mem(&self, m: Arc<MemOp>) {
        match self.recording() {
            Some(r) => {
                r.push(self.id, self.label(), RecOp::Mem(m));
            }
            None => self.send(Op::Work(Arc::new(move || m.run().map_err(CpuFault::from)))),
        }
    }

    /// The last kernel launch, copy or fill this stream recorded.
    pub(crate) fn last_node(&self) -> Option<CpuNode> {
        let r = self.recording()?;
        let st = lock(&r.state);
        st.ops.iter().rev().find_map(|(s, _, op)| match op {
            RecOp::Kernel(k) if *s == self.id => Some(CpuNode::Kernel(k.clone())),
            RecOp::Mem(m) if *s == self.id => Some(CpuNode::Mem(m.clone())),
            _ => None,
        })
    }

    /// Enqueues a replay of `graph`: it runs as one operation of this stream.
    pub(crate) fn enqueue_graph(&self, graph: Arc<CpuGraph>) -> Result<(), String> {
        if self.recording().is_some() {
            return Err("a graph cannot be replayed inside a recording".into());
        }
        self.send(Op::Work(Arc::new(move || graph.replay())));
        Ok(())
    }
}

impl Drop for CpuStream {
    fn drop(&mut self) {
        // Closing the channel lets the worker finish what was sent, then end.
        drop(lock(&self.sender).take());
        if let Some(w) = self.worker.take() {
            let _ = w.join();
        }
    }
}

/// A kernel launch on the CPU: the entry, the shape, and a copy of every argument value
/// (a recorded launch's scalars can be changed before a replay).
pub(crate) struct KernelOp {
    pub(crate) entry: CpuEntry,
    pub(crate) name: &'static str,
    pub(crate) grid: [u32; 3],
    pub(crate) block: [u32; 3],
    pub(crate) shared_mem_bytes: u32,
    /// Whether the launch is checked (the device's [`CpuCheck`] when it was enqueued).
    pub(crate) check: CpuCheck,
    pub(crate) values: Mutex<Vec<Vec<u8>>>,
}

impl KernelOp {
    fn run(&self) -> Result<(), CpuFault> {
        let mut values = lock(&self.values).clone();
        // 16-byte aligned copies: a parameter's value is read through a typed pointer.
        let mut aligned: Vec<Vec<u128>> = values.iter_mut().map(|v| vec![0u128; v.len().div_ceil(16).max(1)]).collect();
        for (a, v) in aligned.iter_mut().zip(&values) {
            // SAFETY: `a` holds at least `v.len()` bytes; the two do not overlap.
            unsafe { std::ptr::copy_nonoverlapping(v.as_ptr(), a.as_mut_ptr().cast::<u8>(), v.len()) };
        }
        let ptrs: Vec<*mut c_void> = aligned.iter_mut().map(|a| a.as_mut_ptr().cast()).collect();
        let launch = CpuLaunch {
            kernel: self.name,
            grid: self.grid,
            block: self.block,
            dynamic_shared_bytes: self.shared_mem_bytes,
            check: self.check,
        };
        // SAFETY: one pointer per lowered parameter, each to a value of its size (copied at
        // enqueue time from the launch's arguments, in the kernel's ABI); the memory the
        // arguments name is the launch's caller's duty (the same as a GPU launch's).
        unsafe { (self.entry)(ptrs.as_ptr(), &launch) }.map_err(|e| match e {
            CpuLaunchError::Fault(m) => CpuFault::from(format!("kernel `{}` failed on the CPU: {m}", self.name)),
            CpuLaunchError::Check(report) => CpuFault { message: report.to_string(), report: Some(report), lane: None },
        })
    }

    /// New argument values (same count and sizes) for later runs.
    pub(crate) fn set_values(&self, values: Vec<Vec<u8>>) {
        *lock(&self.values) = values;
    }
}

/// A copy or fill, as the CPU stream runs it: its addresses behind a lock, so that a
/// recorded one can be pointed elsewhere before a replay (what `cuGraphExecMemcpyNodeSetParams`
/// does on a GPU).
pub(crate) struct MemOp {
    params: Mutex<MemParams>,
}

/// What a [`MemOp`] does.
#[derive(Clone, Copy, Debug)]
pub(crate) enum MemParams {
    /// A 2-D copy between device memory (a host address here) and host memory.
    Copy { dir: Direction, device: u64, host: usize, span: Span2d },
    /// `height` rows of `width_bytes` zero bytes, `pitch` apart.
    Zero { dst: u64, pitch: usize, width_bytes: usize, height: usize },
}

impl MemOp {
    /// A copy or fill of the memory `params` names.
    ///
    /// # Safety
    /// - The memory is valid, and used by nothing else in a conflicting way, until the stream
    ///   (or every replay of the graph) that runs it has passed it: `copy_2d`'s and `zero_2d`'s
    ///   duties, for every run.
    pub(crate) unsafe fn new(params: MemParams) -> Arc<MemOp> {
        Arc::new(MemOp { params: Mutex::new(params) })
    }

    /// New addresses for later runs (same kind of operation).
    ///
    /// # Safety
    /// - As [`MemOp::new`], for the new addresses.
    pub(crate) unsafe fn set(&self, params: MemParams) {
        *lock(&self.params) = params;
    }

    fn run(&self) -> Result<(), String> {
        match *lock(&self.params) {
            // SAFETY: the duties of `new`/`set` (whoever made or changed this operation
            // vouched for its memory for every run) hold while the stream passes it, now.
            MemParams::Copy { dir, device, host, span } => unsafe { copy_2d(dir, device, host as *mut c_void, span) },
            // SAFETY: as above.
            MemParams::Zero { dst, pitch, width_bytes, height } => unsafe { zero_2d(dst, pitch, width_bytes, height) },
        }
        Ok(())
    }
}

/// A node of a CPU recording that can change between replays.
pub(crate) enum CpuNode {
    Kernel(Arc<KernelOp>),
    Mem(Arc<MemOp>),
}

/// A recorded operation of one stream.
pub(crate) enum RecOp {
    Work(Work),
    Kernel(Arc<KernelOp>),
    Mem(Arc<MemOp>),
    Signal(Arc<Completion>),
    Wait(Arc<Completion>),
}

#[derive(Default)]
struct RecState {
    /// `(stream, the lane it recorded for, operation)`.
    ops: Vec<(usize, Option<LaneId>, RecOp)>,
    ended: bool,
}

/// A recording in progress (stream capture on the CPU).
#[derive(Default)]
pub(crate) struct Recording {
    state: Mutex<RecState>,
}

impl Recording {
    fn ended(&self) -> bool {
        lock(&self.state).ended
    }

    fn push(&self, stream: usize, label: Option<LaneId>, op: RecOp) -> usize {
        let mut st = lock(&self.state);
        st.ops.push((stream, label, op));
        st.ops.len() - 1
    }

    /// The replayable graph: each stream's operations in order, the records and waits
    /// between them by index.
    pub(crate) fn to_graph(&self) -> CpuGraph {
        let ops = std::mem::take(&mut lock(&self.state).ops);
        let mut streams: Vec<usize> = Vec::new();
        let mut records: Vec<*const Completion> = Vec::new();
        let mut lanes: Vec<Vec<GraphOp>> = Vec::new();
        for (stream, label, op) in ops {
            let lane = match streams.iter().position(|s| *s == stream) {
                Some(i) => i,
                None => {
                    streams.push(stream);
                    lanes.push(Vec::new());
                    streams.len() - 1
                }
            };
            let slot = |c: &Arc<Completion>, records: &mut Vec<*const Completion>| {
                let p = Arc::as_ptr(c);
                records.iter().position(|r| *r == p).unwrap_or_else(|| {
                    records.push(p);
                    records.len() - 1
                })
            };
            let g = match op {
                RecOp::Work(w) => GraphOp::Work(w, label),
                RecOp::Kernel(k) => GraphOp::Work(Arc::new(move || k.run()), label),
                RecOp::Mem(m) => GraphOp::Work(Arc::new(move || m.run().map_err(CpuFault::from)), label),
                RecOp::Signal(c) => GraphOp::Signal(slot(&c, &mut records)),
                RecOp::Wait(c) => GraphOp::Wait(slot(&c, &mut records)),
            };
            lanes[lane].push(g);
        }
        CpuGraph { lanes, records: records.len() }
    }
}

/// An operation of a replayed graph (work: with the lane it was captured for, if named).
enum GraphOp {
    Work(Work, Option<LaneId>),
    Signal(usize),
    Wait(usize),
}

/// A recorded graph: replayed as one operation of the replaying stream.
pub(crate) struct CpuGraph {
    lanes: Vec<Vec<GraphOp>>,
    records: usize,
}

impl CpuGraph {
    /// Runs every recorded lane's operations in order, switching lanes at a wait whose
    /// record has not been reached yet (the records and waits of the recording are its only
    /// cross-lane order, as in the CUDA graph). A failed operation stops its recorded lane
    /// (and whatever waits for it), as it would have stopped that lane's stream; the others
    /// run to their end, then the first fault is returned, naming the lane the operation was
    /// captured for (the replaying stream stops at it, as at any fault).
    fn replay(&self) -> Result<(), CpuFault> {
        let mut signalled = vec![false; self.records];
        let mut next = vec![0usize; self.lanes.len()];
        let mut stopped = vec![false; self.lanes.len()];
        let mut fault: Option<CpuFault> = None;
        loop {
            let mut progress = false;
            for (lane, ops) in self.lanes.iter().enumerate() {
                while let Some(op) = ops.get(next[lane]).filter(|_| !stopped[lane]) {
                    match op {
                        GraphOp::Work(w, label) => {
                            if let Err(mut e) = w() {
                                e.lane = e.lane.or(*label);
                                fault.get_or_insert(e);
                                stopped[lane] = true;
                                break;
                            }
                        }
                        GraphOp::Signal(s) => signalled[*s] = true,
                        GraphOp::Wait(s) if signalled[*s] => {}
                        GraphOp::Wait(_) => break,
                    }
                    next[lane] += 1;
                    progress = true;
                }
            }
            if next.iter().zip(&self.lanes).all(|(n, ops)| *n == ops.len()) {
                return Ok(());
            }
            if !progress {
                return Err(fault.unwrap_or_else(|| {
                    "the graph's lanes wait for each other (a wait with no record before it)".into()
                }));
            }
        }
    }
}

// SAFETY: the raw completion pointers are only compared (identities while recording), never
// dereferenced; everything else is `Send + Sync`.
unsafe impl Send for CpuGraph {}
// SAFETY: as for `Send`.
unsafe impl Sync for CpuGraph {}

/// Copies between device memory (a host address on the CPU backend) and host memory, row by
/// row with each side's pitch.
///
/// # Safety
/// - `device` and `host` are valid for `span` on their sides; nothing else writes the
///   destination, nor the source, meanwhile.
pub(crate) unsafe fn copy_2d(dir: Direction, device: u64, host: *mut c_void, span: Span2d) {
    for row in 0..span.height {
        let d = (device as usize + row * span.device_pitch) as *mut u8;
        let h = (host as usize + row * span.host_pitch) as *mut u8;
        let (src, dst) = match dir {
            Direction::DeviceToHost => (d.cast_const(), h),
            Direction::HostToDevice => (h.cast_const(), d),
        };
        // SAFETY: the caller's duty covers every row of the span; rows do not overlap.
        unsafe { std::ptr::copy_nonoverlapping(src, dst, span.width_bytes) };
    }
}

/// Sets `height` rows of `width_bytes` bytes, `pitch` apart, to zero.
///
/// # Safety
/// - The rows are valid for writes; nothing else uses them meanwhile.
pub(crate) unsafe fn zero_2d(dst: u64, pitch: usize, width_bytes: usize, height: usize) {
    for row in 0..height {
        // SAFETY: the caller's duty.
        unsafe { std::ptr::write_bytes((dst as usize + row * pitch) as *mut u8, 0, width_bytes) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_run_in_order_and_events_order_streams() {
        let (a, b) = (CpuStream::new().unwrap(), CpuStream::new().unwrap());
        let log = Arc::new(Mutex::new(Vec::new()));
        let e = CpuEvent::new();
        let l = log.clone();
        a.enqueue(Arc::new(move || {
            std::thread::sleep(std::time::Duration::from_millis(20));
            lock(&l).push("a1");
            Ok(())
        }));
        e.record(&a);
        b.wait(&e).unwrap();
        let l = log.clone();
        b.enqueue(Arc::new(move || {
            lock(&l).push("b1");
            Ok(())
        }));
        b.synchronize().unwrap();
        assert_eq!(*lock(&log), ["a1", "b1"], "b waited for a's record");
        a.synchronize().unwrap();
    }

    #[test]
    fn a_wait_sees_the_record_that_was_latest_when_it_was_enqueued() {
        let (a, b, c) = (CpuStream::new().unwrap(), CpuStream::new().unwrap(), CpuStream::new().unwrap());
        let e = CpuEvent::new();
        let flag = Arc::new(Mutex::new(false));
        let f = flag.clone();
        a.enqueue(Arc::new(move || {
            std::thread::sleep(std::time::Duration::from_millis(30));
            *lock(&f) = true;
            Ok(())
        }));
        e.record(&a);
        c.wait(&e).unwrap(); // waits for a's record
        e.record(&b); // re-recorded on an idle stream: completes at once
        let f = flag.clone();
        let seen = Arc::new(Mutex::new(None));
        let s = seen.clone();
        c.enqueue(Arc::new(move || {
            *lock(&s) = Some(*lock(&f));
            Ok(())
        }));
        c.synchronize().unwrap();
        assert_eq!(*lock(&seen), Some(true));
        e.synchronize().unwrap();
    }

    #[test]
    fn a_fault_ends_the_lane_and_its_waiters_but_never_hangs() {
        let (a, b) = (CpuStream::new().unwrap(), CpuStream::new().unwrap());
        a.enqueue(Arc::new(|| Err("boom".into())));
        let ran = Arc::new(Mutex::new(false));
        let r = ran.clone();
        a.enqueue(Arc::new(move || {
            *lock(&r) = true;
            Ok(())
        }));
        let e = CpuEvent::new();
        e.record(&a);
        b.wait(&e).unwrap();
        // Does not hang on the faulted lane, and learns of the fault.
        assert!(b.synchronize().unwrap_err().starts_with("waited for a lane that faulted (boom)"));
        assert_eq!(a.synchronize().unwrap_err(), "boom");
        assert_eq!(e.synchronize().unwrap_err(), "boom");
        assert!(!*lock(&ran), "work after the fault was skipped");
    }

    #[test]
    fn a_recording_replays_across_lanes_in_record_order() {
        let (origin, lane) = (CpuStream::new().unwrap(), CpuStream::new().unwrap());
        origin.begin_capture().unwrap();
        let fork = CpuEvent::new();
        fork.record(&origin);
        lane.wait(&fork).unwrap(); // draws `lane` into the recording
        let log = Arc::new(Mutex::new(Vec::new()));
        let l = log.clone();
        lane.enqueue(Arc::new(move || {
            lock(&l).push(1);
            Ok(())
        }));
        let join = CpuEvent::new();
        join.record(&lane);
        origin.wait(&join).unwrap();
        let l = log.clone();
        origin.enqueue(Arc::new(move || {
            lock(&l).push(2);
            Ok(())
        }));
        let rec = origin.end_capture().unwrap();
        assert!(lock(&log).is_empty(), "recording runs nothing");
        let graph = Arc::new(rec.to_graph());
        let player = CpuStream::new().unwrap();
        for _ in 0..3 {
            player.enqueue_graph(graph.clone()).unwrap();
        }
        player.synchronize().unwrap();
        assert_eq!(*lock(&log), [1, 2, 1, 2, 1, 2]);
        // The lane left the recording when it ended: its work runs again.
        let l = log.clone();
        lane.enqueue(Arc::new(move || {
            lock(&l).push(3);
            Ok(())
        }));
        lane.synchronize().unwrap();
        assert_eq!(lock(&log).last(), Some(&3));
    }

    #[test]
    fn device_memory_is_poisoned_and_accounted() {
        let d = CpuDevice::new();
        let (free0, total) = d.mem_info();
        let p = d.alloc(1000, 256, 0xff).unwrap();
        assert_eq!(p % 256, 0);
        // SAFETY: 1000 bytes just allocated.
        assert!(unsafe { std::slice::from_raw_parts(p as *const u8, 1000) }.iter().all(|b| *b == 0xff));
        assert_eq!(d.mem_info(), (free0 - 1000, total));
        // SAFETY: unused.
        assert!(unsafe { d.free(p) });
        // SAFETY: not an allocation: refused.
        assert!(!unsafe { d.free(p) });
        assert!(d.alloc(usize::MAX / 2, 256, 0).is_none());
    }
}
