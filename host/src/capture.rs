//! Recording a scope into a CUDA graph (stream capture): the state a recording scope's lanes
//! share while [`graph`](crate::graph) runs its closure, and what the recording leaves to the
//! [`Graph`](crate::Graph).
//!
//! The scope's origin stream begins a capture and records a fork event; every lane the
//! scope makes waits on that event before its first work, which draws it into the capture.
//! Launches, copies, fills, fences and fan-ins then become graph nodes and edges exactly as
//! they would run; nothing runs. At the end every lane records a join event the origin
//! waits on, and the origin's capture ends: the graph. Host-side waits (a fence's `wait`, a
//! pending copy's `wait`, timestamps) have nothing to wait for during a recording and are
//! refused with [`Error::Recording`].
//!
//! Host sources of copies to the device are staged: copied, at record time, into pinned
//! buffers the graph owns, which the graph's copies read at every replay and
//! [`Graph::write_input`](crate::Graph::write_input) rewrites between replays. Pinned
//! destinations of copies to the host are the program's own, borrowed for the graph's life,
//! and handed back through a replay's wait ([`Outputs`](crate::Outputs)).

use std::any::{Any, TypeId};
use std::marker::PhantomData;
use std::sync::Mutex;

use crate::error::{Error, Result};
use crate::handle::{Event, FunctionHandle, GraphNode, StreamHandle};

/// A pinned staging buffer of a recording (type-erased: the `PinnedMatrix<T>` that owns it,
/// and what [`Graph::write_input`](crate::Graph::write_input) checks).
pub(crate) struct Staged {
    /// The owner (the pinned buffer), freed with the graph.
    pub(crate) _owner: Box<dyn Any + Send + Sync>,
    pub(crate) ptr: *mut u8,
    pub(crate) len: usize,
    pub(crate) elem: TypeId,
    pub(crate) elem_name: &'static str,
}

// SAFETY: `ptr` points into the pinned memory `owner` owns (sent with it); the graph writes
// through it only from `write_input`, which holds the graph exclusively.
unsafe impl Send for Staged {}
// SAFETY: shared access never writes through `ptr`.
unsafe impl Sync for Staged {}

/// A pinned destination of a recorded copy to the host.
pub(crate) struct Output {
    pub(crate) ptr: *const u8,
    pub(crate) len: usize,
    pub(crate) elem: TypeId,
    pub(crate) elem_name: &'static str,
}

// SAFETY: the destination is borrowed exclusively by the graph for its whole life; it is
// read through `ptr` only after a replay's wait, never written by the host.
unsafe impl Send for Output {}
// SAFETY: as for `Send`.
unsafe impl Sync for Output {}

/// What one declared kernel parameter became: its first lowered slot, and its type if it
/// is a scalar that [`Graph::set_scalar`](crate::Graph::set_scalar) may change. `pub` because
/// the (hidden) `Signature::slots` names it; the module is private, so no one else can.
#[derive(Clone, Copy, Debug)]
pub struct ParamSlot {
    pub(crate) first: usize,
    pub(crate) scalar: Option<(TypeId, &'static str)>,
}

/// A recorded kernel launch: the node, and the launch it was, with its argument values
/// (one byte string per lowered parameter), so that scalars can be changed before a replay.
pub(crate) struct KernelNodeRecord {
    pub(crate) node: GraphNode,
    pub(crate) func: FunctionHandle,
    pub(crate) name: &'static str,
    pub(crate) grid: (u32, u32, u32),
    pub(crate) block: (u32, u32, u32),
    pub(crate) shared_mem_bytes: u32,
    pub(crate) values: Vec<Box<[u8]>>,
    pub(crate) params: Vec<ParamSlot>,
}

// SAFETY: plain values and driver handles (thread-safe); see `Staged`.
unsafe impl Send for KernelNodeRecord {}
// SAFETY: as for `Send`.
unsafe impl Sync for KernelNodeRecord {}

/// What a recording collects besides the graph itself.
#[derive(Default)]
pub(crate) struct Recorded {
    pub(crate) inputs: Vec<Staged>,
    pub(crate) outputs: Vec<Output>,
    pub(crate) nodes: Vec<KernelNodeRecord>,
}

/// A recording in progress: its origin stream (capturing), the fork event lanes wait on to
/// join the capture, and what has been recorded so far.
pub(crate) struct Capture {
    pub(crate) origin: StreamHandle,
    pub(crate) fork: Event,
    /// Which recording this is (nodes of one recording are refused by another's graph).
    pub(crate) id: u64,
    pub(crate) recorded: Mutex<Recorded>,
}

impl Capture {
    /// Starts capturing on `origin` and records the fork event.
    pub(crate) fn begin(origin: StreamHandle, fork: Event) -> Result<Capture> {
        // The CPU backend records without the driver.
        if let (false, Some(symbol)) = (origin.is_cpu(), crate::driver::graph::missing_symbol()) {
            return Err(Error::DriverSymbolMissing { symbol });
        }
        // SAFETY: the graph entry points were checked just above; `origin` is idle.
        unsafe { origin.begin_capture() }.map_err(|error| Error::Stream { call: "cuStreamBeginCapture", error })?;
        fork.record(&origin).map_err(|error| Error::Event { call: "cuEventRecord", error })?;
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        let id = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Ok(Capture { origin, fork, id, recorded: Mutex::new(Recorded::default()) })
    }

    /// Draws `stream` (a new lane) into the capture.
    pub(crate) fn join(&self, stream: &StreamHandle) -> Result<()> {
        stream.wait(&self.fork).map_err(|error| Error::Event { call: "cuStreamWaitEvent", error })
    }

    pub(crate) fn recorded(&self) -> std::sync::MutexGuard<'_, Recorded> {
        self.recorded.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// A kernel launch recorded into a graph, for typed updates of its scalar arguments before
/// a replay ([`Graph::set_scalar`](crate::Graph::set_scalar)); from
/// [`Stream::launch_node`](crate::Stream::launch_node). A plain id: it names the launch in
/// the graph of its recording only (another graph refuses it).
///
/// ```no_run
/// # use sluice_host as sluice;
/// # use sluice::{Kernel, LaunchConfig, Mut};
/// # const FILL: Kernel<(Mut<f32>, f32)> = unsafe { Kernel::new("", "fill_column") };
/// // FILL writes a value into a column: a `#[kernel]` of yours, or `sluice::kernels::fill_column` (feature "kernels")
/// # fn demo(gpu: &sluice::Gpu) -> sluice::Result<()> {
/// let mut out = gpu.alloc_buffer::<f32>(1024)?;
/// let (mut graph, fill) = sluice::graph(gpu, |s| {
///     s.lane()?.enter(|st| {
///         let mut v = st.bind(out.as_columns_mut());
///         st.launch_node(&FILL, LaunchConfig::for_elements(1024, 256), (&mut v, 1.0))
///     })
/// })?;
/// graph.set_scalar(fill, 1, 2.0f32)?;   // the second parameter, the fill value
/// # Ok(()) }
/// ```
pub struct KernelNode<S> {
    pub(crate) capture: u64,
    pub(crate) index: usize,
    pub(crate) _sig: PhantomData<fn() -> S>,
}

impl<S> Clone for KernelNode<S> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<S> Copy for KernelNode<S> {}

impl<S> std::fmt::Debug for KernelNode<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KernelNode").field("index", &self.index).finish_non_exhaustive()
    }
}
