//! Graphs: a scope recorded once ([`graph`]) and replayed with one launch on a lane of later
//! scopes ([`Stream::replay`]), with the borrow checker guarding everything it touches.
//!
//! Where work is fine-grained the host's enqueue time is the bound, not the GPU; a graph
//! replays a whole scope — its lanes' launches, copies, fences and fan-ins — with one driver
//! call. But a graph bakes in device and host addresses, so a buffer freed or reallocated
//! before a replay is a use-after-free, and a host read of a replay's destination before it
//! finishes is a torn read. sluice rules both out at compile time:
//!
//! * **The recording borrows what it touches for the graph's life.** [`graph`]'s closure is
//!   an ordinary scope closure whose `'env` is the graph's lifetime `'g`: everything it binds,
//!   uploads or copies into is borrowed for `'g`, so while the [`Graph<'g>`](Graph) lives
//!   nothing captured can be dropped, freed, or borrowed mutably — by the host or by another
//!   scope. Memory the recording allocated (`s.alloc_matrix`, uploads) belongs to the graph.
//! * **Replays run only on lanes of scopes**, which borrow the graph for the scope and join
//!   their lanes before it ends: a replay never outlives what it uses, whatever is leaked.
//! * **Pinned destinations come back only through a replay's wait** ([`Replay::wait`] →
//!   [`Outputs`]), as a pending copy's do; one replay of a graph is in flight at a time (a
//!   second is refused with [`Error::ReplayInUse`] until the first is waited and its outputs
//!   dropped).
//!
//! Between replays, [`Graph::write_input`] changes the data the recorded host-to-device
//! copies read (they read pinned staging buffers the graph owns, filled at record time), and
//! [`Graph::set_scalar`] changes scalar kernel arguments. A changed shape or a different
//! buffer is a new recording.
//!
//! # What a graph cannot capture
//!
//! Host-side waits (a fence's, a pending copy's, a timestamp's `wait`: [`Error::Recording`]),
//! uploads started outside the recording ([`Stream::await_upload`]), traces, and host code:
//! the closure runs once, at record time. Allocation happens at record time, not in replays.
//!
//! # When a graph pays off
//!
//! When the host's enqueue is the bound: many small columns, many small launches. Measured
//! on the H200 with hand-written CUDA C++ (`BENCHMARKS.md`): 16,384 rows × 64 columns went
//! from 0.48 ms with per-stream copies to 0.24 ms replayed, 4,096 × 128 from 1.45 ms to
//! 0.23 ms with a fan-in; large columns (4,194,304 × 8) do not change.

use std::any::TypeId;
use std::marker::PhantomData;
use std::sync::atomic::{AtomicBool, Ordering};

use bytemuck::Pod;

use crate::capture::{KernelNode, Output, Recorded};
use crate::device::Gpu;
use crate::error::{Error, Result};
use crate::handle::{GraphExec, StreamHandle};
use crate::lane::Stream;
use crate::scope::{run, Ended, LaneCache, Mode, RecordedScope, Scope, ScopeMemory};
use crate::trace::SpanKind;
use crate::view::Invariant;

/// Records a scope into a [`Graph`] instead of running it: the same [`Scope`], lanes,
/// views, launches, copies, fences and fan-ins, captured as graph nodes and edges; nothing
/// runs (and no device-wide synchronization happens). Returns the graph and the closure's
/// result (e.g. [`KernelNode`]s of [`Stream::launch_node`] for later updates).
///
/// Everything the closure borrows from outside is borrowed for the graph's lifetime `'g`
/// (see the module docs): the graph may replay it any time while it lives.
///
/// # Errors
/// The closure's error; [`Error::Recording`] for host-side waits inside it;
/// [`Error::DriverSymbolMissing`] where the driver has no graph API; driver errors of the
/// capture or the instantiation.
///
/// ```no_run
/// # use sluice_host as sluice;
/// use sluice::{graph, scope, Gpu, Kernel, LaunchConfig, Mut};
/// # const FILL: Kernel<(Mut<f32>, f32)> = unsafe { Kernel::new("", "fill_column") };
/// // FILL writes a value into a column: a `#[kernel]` of yours, or `sluice::kernels::fill_column` (feature "kernels")
/// let gpu = Gpu::new(0)?;
/// let mut host = gpu.pinned_matrix::<f32>(4096, 8)?;
/// let (g, ()) = graph(&gpu, |s| {
///     let out = s.alloc_matrix::<f32>(4096, 8)?;            // owned by the graph
///     for ((lane, col), dst) in s.lanes(8)?.into_iter().zip(out.columns_mut()).zip(host.columns_mut()) {
///         lane.enter(|st| {
///             let mut col = st.bind(col);
///             st.launch(&FILL, LaunchConfig::for_elements(4096, 256), (&mut col, 1.0))?;
///             st.copy_to_host(&col, dst).map(drop)             // recorded, not run
///         })?;
///     }
///     Ok(())
/// })?;
/// scope(&gpu, |s| {
///     let lane = s.lane()?;
///     for _ in 0..100 {
///         let outputs = lane.enter(|st| st.replay(&g))?.wait()?;  // one launch per replay
///         assert_eq!(outputs.get::<f32>(3)?[0], 1.0);             // column 3, after the replay
///     }
///     Ok(())
/// })?;
/// drop(g);
/// host[0] = 0.0;                                                  // the graph let go of `host`
/// # Ok::<(), sluice::Error>(())
/// ```
///
/// # Lifetimes
///
/// A buffer the graph captured cannot be dropped while the graph lives:
///
/// ```compile_fail,E0505
/// # use sluice_host as sluice;
/// # use sluice::{graph, Gpu};
/// # fn demo(gpu: &Gpu) -> sluice::Result<()> {
/// let mut m = gpu.alloc_buffer::<f32>(256)?;
/// let (g, ()) = graph(gpu, |s| {
///     s.lane()?.enter(|st| { let mut v = st.bind(m.as_columns_mut()); st.zero(&mut v) })
/// })?;
/// drop(m); // error[E0505]: cannot move out of `m` because it is borrowed — by the graph
/// # drop(g); Ok(()) }
/// ```
///
/// Drop the graph first (or keep the buffer for as long as the graph).
pub fn graph<'g, F, R>(gpu: &'g Gpu, f: F) -> Result<(Graph<'g>, R)>
where
    F: for<'scope> FnOnce(&'scope Scope<'scope, 'g>) -> Result<R>,
{
    let (result, kept) = run(gpu, LaneCache::default(), Mode::Record, f);
    kept.release(gpu);
    let (r, ended) = result?;
    let Ended::Recorded(RecordedScope { exec, recorded, capture_id, memory }) = ended else {
        return Err(Error::NotRecording { what: "graph" });
    };
    let graph = Graph {
        gpu: gpu.clone(),
        exec: Some(exec),
        recorded,
        capture_id,
        memory: Some(memory),
        in_use: AtomicBool::new(false),
        _g: PhantomData,
    };
    Ok((graph, r))
}

/// A recorded scope, replayable with one launch ([`Stream::replay`]); it borrows everything
/// the recording touched for `'g`. See [`graph`].
pub struct Graph<'g> {
    gpu: Gpu,
    /// `Some` until dropped (destroyed before the memory it uses is freed).
    exec: Option<GraphExec>,
    recorded: Recorded,
    capture_id: u64,
    /// Memory the recording allocated; its replays use it.
    memory: Option<ScopeMemory>,
    /// A replay is in flight, or its outputs are being read.
    in_use: AtomicBool,
    /// Invariant in 'g: the recording's borrows last exactly the graph's life.
    _g: Invariant<'g>,
}

impl<'g> Graph<'g> {
    /// How many host-to-device copies the recording staged (inputs for
    /// [`write_input`](Graph::write_input), in recording order).
    pub fn inputs(&self) -> usize {
        self.recorded.inputs.len()
    }

    /// How many copies to the host the recording holds (outputs of [`Outputs::get`], in
    /// recording order).
    pub fn outputs(&self) -> usize {
        self.recorded.outputs.len()
    }

    /// How many kernel launches the recording holds.
    pub fn launches(&self) -> usize {
        self.recorded.nodes.len()
    }

    /// Replaces the data the recording's `index`th host-to-device copy reads at each replay
    /// (uploads and `copy_to_device`s, in recording order), with `data` of the same element
    /// type and length. Takes the graph exclusively: no replay of it can be in flight (every
    /// scope that replayed it has joined).
    ///
    /// # Errors
    /// [`Error::GraphMismatch`] for an index, type or length the recording does not have.
    ///
    /// ```no_run
    /// # use sluice_host as sluice;
    /// # fn demo(gpu: &sluice::Gpu) -> sluice::Result<()> {
    /// let (mut g, ()) = sluice::graph(gpu, |s| s.upload(&[0.0f32; 64]).map(drop))?;
    /// g.write_input(0, &[1.0f32; 64])?;     // the next replay uploads ones
    /// # Ok(()) }
    /// ```
    pub fn write_input<T: Pod>(&mut self, index: usize, data: &[T]) -> Result<()> {
        let what = || format!("input {index}");
        let Some(input) = self.recorded.inputs.get(index) else {
            let problem = format!("the recording has {} inputs", self.recorded.inputs.len());
            return Err(Error::GraphMismatch { what: what(), problem });
        };
        if input.elem != TypeId::of::<T>() {
            let problem = format!("it holds {}, not {}", input.elem_name, std::any::type_name::<T>());
            return Err(Error::GraphMismatch { what: what(), problem });
        }
        if input.len != data.len() {
            let problem = format!("it holds {} elements, not {}", input.len, data.len());
            return Err(Error::GraphMismatch { what: what(), problem });
        }
        // `&mut self`: no scope borrows the graph, so every replay has been joined.
        self.in_use.store(false, Ordering::Release);
        // SAFETY: the staging buffer holds `len` elements of `T` (checked above), pinned memory
        // the graph owns; no replay reads it now (every replaying scope joined, see above) and
        // `&mut self` excludes every other access.
        unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), input.ptr.cast::<T>(), data.len()) };
        Ok(())
    }

    /// Changes scalar parameter `param` (its position among the kernel's parameters, from 0)
    /// of a recorded launch to `value`, for the following replays. Views cannot change (a
    /// different buffer is a new recording).
    ///
    /// # Errors
    /// [`Error::GraphMismatch`] if the node is of another recording, or the parameter is not
    /// a scalar of type `T`; [`Error::Launch`] from the driver.
    ///
    /// ```no_run
    /// # use sluice_host as sluice;
    /// # use sluice::{Kernel, LaunchConfig, Mut};
    /// # const FILL: Kernel<(Mut<f32>, f32)> = unsafe { Kernel::new("", "fill_column") };
    /// // FILL writes a value into a column: a `#[kernel]` of yours, or `sluice::kernels::fill_column` (feature "kernels")
    /// # fn demo(gpu: &sluice::Gpu) -> sluice::Result<()> {
    /// let mut out = gpu.alloc_buffer::<f32>(256)?;
    /// let (mut g, fill) = sluice::graph(gpu, |s| {
    ///     s.lane()?.enter(|st| {
    ///         let mut v = st.bind(out.as_columns_mut());
    ///         st.launch_node(&FILL, LaunchConfig::for_elements(256, 256), (&mut v, 0.5))
    ///     })
    /// })?;
    /// g.set_scalar(fill, 1, 7.0f32)?;
    /// assert!(g.set_scalar(fill, 1, 7.0f64).is_err());   // the parameter is an f32
    /// # Ok(()) }
    /// ```
    pub fn set_scalar<S, T: Pod>(&mut self, node: KernelNode<S>, param: usize, value: T) -> Result<()> {
        let what = || format!("launch {} parameter {param}", node.index);
        if node.capture != self.capture_id {
            return Err(Error::GraphMismatch { what: what(), problem: "the node is of another recording".into() });
        }
        let Some(rec) = self.recorded.nodes.get_mut(node.index) else {
            return Err(Error::GraphMismatch { what: what(), problem: "no such launch".into() });
        };
        let Some(slot) = rec.params.get(param) else {
            let problem = format!("`{}` has {} parameters", rec.name, rec.params.len());
            return Err(Error::GraphMismatch { what: what(), problem });
        };
        match slot.scalar {
            Some((ty, _)) if ty == TypeId::of::<T>() => {}
            Some((_, name)) => {
                let problem = format!("it is a {name}, not a {}", std::any::type_name::<T>());
                return Err(Error::GraphMismatch { what: what(), problem });
            }
            None => {
                let problem = "it is a view: a different buffer needs a new recording".to_string();
                return Err(Error::GraphMismatch { what: what(), problem });
            }
        }
        let old = rec.values[slot.first].clone();
        rec.values[slot.first] = bytemuck::bytes_of(&value).into();
        let mut ptrs: Vec<*mut std::ffi::c_void> = rec.values.iter_mut().map(|v| v.as_mut_ptr().cast()).collect();
        let exec = self.exec.as_ref().expect("a graph holds its executable until dropped");
        // `&mut self`: no scope borrows the graph, so no replay of it is pending.
        self.in_use.store(false, Ordering::Release);
        let sizes: Vec<usize> = rec.values.iter().map(|v| v.len()).collect();
        // SAFETY: the node is a kernel node of this graph running `rec.func` with this shape
        // (recorded at its launch); `ptrs[i]` points to `sizes[i]` bytes, one value per
        // parameter of that kernel (the recorded values, the changed one of the same type);
        // no launch of the graph is pending (see above).
        let set = unsafe {
            exec.set_kernel_params(&rec.node, rec.func, rec.grid, rec.block, rec.shared_mem_bytes, &mut ptrs, &sizes)
        };
        if let Err(error) = set {
            rec.values[slot.first] = old;
            return Err(Error::Launch { kernel: rec.name, error });
        }
        Ok(())
    }

    /// The device the graph runs on.
    pub fn gpu(&self) -> &Gpu {
        &self.gpu
    }
}

impl Drop for Graph<'_> {
    fn drop(&mut self) {
        // The executable first: no replay is pending (replays run only on lanes of scopes,
        // which borrowed the graph and joined), then the memory its replays used.
        drop(self.exec.take());
        if let Some(memory) = self.memory.take() {
            for e in memory.release() {
                self.gpu.record_error(e);
            }
        }
    }
}

impl std::fmt::Debug for Graph<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Graph")
            .field("launches", &self.launches())
            .field("inputs", &self.inputs())
            .field("outputs", &self.outputs())
            .finish_non_exhaustive()
    }
}

/// A replay in flight on a lane ([`Stream::replay`]). [`wait`](Replay::wait) blocks until the
/// lane has run it and hands the host the graph's pinned destinations.
#[must_use = "a replay's outputs come back only through `wait`"]
pub struct Replay<'scope> {
    /// The graph's in-use flag and recorded destinations (what a replay needs of it).
    in_use: &'scope AtomicBool,
    outputs: &'scope [Output],
    stream: &'scope StreamHandle,
    waited: bool,
}

impl<'scope> Replay<'scope> {
    /// Blocks until the lane has run the replay (`cuStreamSynchronize` on that lane only)
    /// and returns the graph's pinned destinations, readable until the [`Outputs`] are
    /// dropped (no replay of the graph starts meanwhile).
    pub fn wait(mut self) -> Result<Outputs<'scope>> {
        self.stream.synchronize().map_err(|error| Error::Stream { call: "cuStreamSynchronize", error })?;
        self.waited = true;
        Ok(Outputs { in_use: self.in_use, outputs: self.outputs })
    }
}

impl Drop for Replay<'_> {
    fn drop(&mut self) {
        if self.waited {
            return; // the outputs carry on; they free the graph when dropped
        }
        // Not waited: the graph stays in use until the lane has run the replay.
        if self.stream.synchronize().is_ok() {
            self.in_use.store(false, Ordering::Release);
        }
    }
}

impl std::fmt::Debug for Replay<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Replay").finish_non_exhaustive()
    }
}

/// The pinned destinations of a finished replay, in recording order
/// ([`Replay::wait`]). While they are borrowed no replay of the graph starts.
pub struct Outputs<'r> {
    in_use: &'r AtomicBool,
    outputs: &'r [Output],
}

impl<'r> Outputs<'r> {
    /// How many destinations.
    pub fn len(&self) -> usize {
        self.outputs.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The `index`th recorded copy's destination, as the replay left it.
    ///
    /// # Errors
    /// [`Error::GraphMismatch`] for an index or element type the recording does not have.
    pub fn get<T: Pod>(&self, index: usize) -> Result<&[T]> {
        let what = || format!("output {index}");
        let Some(out) = self.outputs.get(index) else {
            let problem = format!("the recording has {} outputs", self.len());
            return Err(Error::GraphMismatch { what: what(), problem });
        };
        if out.elem != TypeId::of::<T>() {
            let problem = format!("it holds {}, not {}", out.elem_name, std::any::type_name::<T>());
            return Err(Error::GraphMismatch { what: what(), problem });
        }
        // SAFETY: the destination is `len` `T`s of pinned memory the graph borrows exclusively
        // for its life (moved into the recording's copy); the replay that wrote it has
        // finished (`wait` synchronized its lane) and no other starts while `self` lives.
        Ok(unsafe { std::slice::from_raw_parts(out.ptr.cast::<T>(), out.len) })
    }
}

impl Drop for Outputs<'_> {
    fn drop(&mut self) {
        self.in_use.store(false, Ordering::Release);
    }
}

impl std::fmt::Debug for Outputs<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Outputs").field("len", &self.len()).finish()
    }
}

impl<'scope, 'lane> Stream<'scope, 'lane> {
    /// Replays `graph` on this lane: one launch (`cuGraphLaunch`), ordered after the lane's
    /// earlier work; the scope's later work on this lane runs after it. The graph stays
    /// borrowed for the scope, which joins this lane before it ends.
    ///
    /// # Errors
    /// [`Error::ReplayInUse`] while an earlier replay of the graph is in flight or its
    /// outputs are borrowed; [`Error::WrongDevice`]; [`Error::Recording`] inside a recording;
    /// [`Error::Launch`] from the driver.
    ///
    /// ```no_run
    /// # use sluice_host as sluice;
    /// # fn demo(gpu: &sluice::Gpu, g: &sluice::Graph<'_>) -> sluice::Result<()> {
    /// let mut lanes = sluice::LaneSet::new(gpu);
    /// for _ in 0..1000 {
    ///     lanes.scope(|s| {
    ///         let replay = s.lane()?.enter(|st| st.replay(g))?;
    ///         let out = replay.wait()?;
    ///         # let _ = out;
    ///         Ok(())
    ///     })?;
    /// }
    /// # Ok(()) }
    /// ```
    pub fn replay<'g: 'scope>(&self, graph: &'scope Graph<'g>) -> Result<Replay<'scope>> {
        self.lane.shared.refuse_while_recording("Stream::replay")?;
        if let Some(error) = self.gpu().context().lost() {
            return Err(Error::ContextLost { error, lane: None, fault: None, kernels: Vec::new() });
        }
        if graph.gpu.ctx_id() != self.gpu().ctx_id() {
            return Err(Error::WrongDevice { what: "graph" });
        }
        if graph.in_use.swap(true, Ordering::AcqRel) {
            return Err(Error::ReplayInUse);
        }
        let exec = graph.exec.as_ref().expect("a graph holds its executable until dropped");
        let launched = self.traced(
            SpanKind::Graph,
            || "graph".to_string(),
            || {
                // SAFETY: every address the graph uses is memory it owns or borrows for 'g, and 'g
                // outlives 'scope (the graph is borrowed for the scope); the scope joins this lane
                // before 'scope ends, so the replay finishes before any of it can be freed.
                unsafe { self.handle().launch_graph(exec) }.map_err(|error| Error::Launch { kernel: "graph", error })
            },
        );
        if let Err(e) = launched {
            graph.in_use.store(false, Ordering::Release);
            return Err(e);
        }
        self.lane.inner.launches.fetch_add(1, Ordering::Relaxed);
        Ok(Replay { in_use: &graph.in_use, outputs: &graph.recorded.outputs, stream: self.handle(), waited: false })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn graphs_cross_threads() {
        fn assert<T: Send + Sync>() {}
        assert::<Graph<'static>>();
        assert::<Replay<'static>>();
        assert::<Outputs<'static>>();
    }
}
