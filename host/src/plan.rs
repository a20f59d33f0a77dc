//! Planning a scope's submission: what a deferred scope collected (a [`Batch`] of
//! operations, each on its lane, in program order), how it will reach the GPU (a [`Plan`]:
//! the operations less the fences no one can await, with adjacent column copies merged),
//! the plan's shape as a graph-cache key, and the device's cache of executable graphs.
//!
//! Plain data: nothing here calls the driver (the [`submit`](crate::submit) room runs a
//! plan, directly or as a graph). What the planner may change, and why each change is
//! invisible to the program:
//!
//! * **A fence record no one can await is not submitted.** A fence's event is recorded only
//!   if a lane of the batch awaits it or its [`Fence`](crate::Fence) may still be awaited
//!   (the host may wait on it later). A dropped [`Pending`](crate::Pending) whose copy no one
//!   awaited needs no event: the scope's end joins its lane anyway.
//! * **Adjacent column copies merge** (the chunked fan-in), only in the scope's last
//!   submission or a segment (so no later operation of the scope can touch the columns
//!   before the copy: after a segment, a lane that logs again waits for the stream that
//!   copied its column first), only for copies
//!   to the host that are the last operation of their lane and whose fences are never
//!   awaited (so no one can observe one column before the others), only between lanes whose
//!   work is the same (the same kernels with the same shapes: they finish together), and only
//!   where the device columns are adjacent columns of one allocation and the host
//!   destinations adjacent parts of one pinned allocation. Each lane of a merged chunk but
//!   the one that copies records a fan-in event that the copying lane waits for, where its
//!   own copy used to be: the copy waits for exactly the work it copies.
//!
//! A plan's [`key`] is its shape — every operation's lane, kind, kernel, launch shape, copy
//! shape and every fence edge — without the values that may change between repetitions of
//! a program (kernel arguments, copy addresses): a scope whose plan has the key of an earlier
//! one replays that one's graph, with the changed values written into its nodes.
//!
//! A batch equal to one of the last few a device planned (the same operations on the same
//! lanes, the same arguments and addresses: a repeated scope, whose scope memory comes back
//! at the same addresses) takes that batch's plan and key ([`PlanMemo`]) instead of working
//! them out again; equal in everything [`plan`] and [`key`] read, it would get the same.

use std::collections::VecDeque;
use std::ops::Range;
use std::ptr::NonNull;
use std::sync::Arc;

use crate::driver::mem::{Direction, Span2d};
use crate::error::LaneId;
use crate::handle::{Event, FunctionHandle, GraphExec, GraphNode, StreamHandle};
use crate::span::Span;

/// How a device submits the work of its scopes ([`Gpu::set_submit_config`](crate::Gpu::set_submit_config)).
///
/// By default a scope *defers*: its lanes' launches, copies, fills, fence records and waits
/// are collected as the closure runs and reach the driver together where the host must
/// observe them — a host wait ([`Pending::wait`](crate::Pending::wait),
/// [`Fenced::wait`](crate::Fenced::wait), ...) or the scope's end. At the scope's end the
/// planner merges adjacent column copies into chunks of about
/// [`merge_copy_bytes`](SubmitConfig::merge_copy_bytes), and a scope whose operations repeat
/// those of an earlier scope (same lanes, kernels, shapes and fence edges; pointers and
/// scalar arguments may differ) replays a cached CUDA graph of it instead of one driver call
/// per operation. Results are the same either way; [`Trace::submissions`](crate::Trace::submissions)
/// and [`Gpu::submit_stats`](crate::Gpu::submit_stats) say which path ran.
///
/// The environment variable `SLUICE_SUBMIT` sets a new device's default: `direct`
/// ([`SubmitConfig::direct`]), `deferred` ([`SubmitConfig::deferred`]: merges, no graphs) or
/// `graphs` (the default).
///
/// ```
/// # use sluice_host as sluice;
/// use sluice::{Gpu, SubmitConfig};
/// let gpu = Gpu::cpu();
/// assert!(gpu.submit_config().graphs);
/// gpu.set_submit_config(SubmitConfig::direct());           // every operation as it is asked for
/// gpu.set_submit_config(SubmitConfig { graph_cache: 8, ..SubmitConfig::default() });
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SubmitConfig {
    /// Collect each scope's operations and submit them where the host must observe them.
    /// `false`: every operation reaches the driver when its call returns, as it is asked for
    /// (then neither merges nor graphs apply).
    pub defer: bool,
    /// Replay a scope that repeats an earlier one as a cached executable graph (from the
    /// second time a scope's shape is seen).
    pub graphs: bool,
    /// Most executable graphs the device keeps (least recently used first out); `0`: none
    /// (every scope is submitted directly, as without [`graphs`](SubmitConfig::graphs)).
    pub graph_cache: usize,
    /// Merge adjacent column copies of lanes with the same work into copies of about this
    /// many bytes (columns larger than half of this are never merged); `0`: never.
    ///
    /// The default, 256 KiB, is where the copies of many small columns ran fastest on an H100
    /// host: a copy costs the copy engine a microsecond or two beside its bytes, and a merged
    /// copy starts only once the kernels of all its columns are done, so smaller chunks start
    /// the copies sooner and larger ones pay fewer copies. The README's program with 64 lanes of
    /// 64 KiB columns ran at 1.04× a hand-written graph of the best chunked fan-in with chunks
    /// of 256 KiB, 1.06× with 512 KiB and 1.56× unmerged; with 128 lanes of 16 KiB columns,
    /// 64 of 32 KiB and 32 of 128 KiB, 256 KiB was as fast as 512 KiB or faster, within the
    /// noise of a run (`BENCHMARKS.md`).
    ///
    /// A merged copy takes only columns submitted together: a segment's
    /// ([`segment_lanes`](SubmitConfig::segment_lanes)) copies merge among its own lanes, so
    /// the first segments' copies may be smaller than this (per submission,
    /// [`Submission::merges`] counts the merged copies and [`Submission::merged_copies`] the
    /// columns in them).
    ///
    /// ```
    /// # use sluice_host as sluice;
    /// use sluice::{Gpu, SubmitConfig};
    /// let gpu = Gpu::cpu();
    /// assert_eq!(gpu.submit_config().merge_copy_bytes, 256 << 10);
    /// gpu.set_submit_config(SubmitConfig { merge_copy_bytes: 1 << 20, ..SubmitConfig::default() });
    /// ```
    pub merge_copy_bytes: usize,
    /// Most columns one merged copy takes, whatever their size (`0`: as many as
    /// [`merge_copy_bytes`](SubmitConfig::merge_copy_bytes) holds; `1`: no merging). Smaller
    /// chunks start their copies sooner, each after fewer kernels.
    ///
    /// ```
    /// # use sluice_host as sluice;
    /// use sluice::{Gpu, SubmitConfig};
    /// let gpu = Gpu::cpu();
    /// gpu.set_submit_config(SubmitConfig { merge_columns: 8, ..SubmitConfig::default() });
    /// ```
    pub merge_columns: usize,
    /// Most operations a scope holds back: once its log reaches this many, it is submitted
    /// (directly) without waiting for a host wait or the scope's end, so that a long scope — a
    /// stream of batches — keeps the GPU busy. A scope with more operations than this never
    /// runs as a graph. `0` and `1` both submit each operation as it is logged.
    pub max_deferred: usize,
    /// Segments of at least this many lanes (`4`, the default; `0`: none; none either where
    /// [`graphs`](SubmitConfig::graphs) or [`defer`](SubmitConfig::defer) is off): when a lane
    /// logs its first launch, copy, fill, fence record or fence wait since the last
    /// submission, and the lanes that logged work since then number at least this many and at
    /// least as many as all earlier segments of the scope took together (4, 4, 8, 16, 32, ...),
    /// but, while a lane the scope made (other than the one about to log) has logged nothing
    /// yet, no more than 32 or a quarter of the lanes it made, whichever is more, and never
    /// fewer than `segment_lanes` (a scope that makes its 128 lanes first: 4, 4, 8, 16, 32,
    /// 32, and the last 32 at its end; 129 lanes end with 32, 32, 33), and none of the fences they recorded can still be awaited (no
    /// [`Pending`](crate::Pending), [`Fence`](crate::Fence), [`Fenced`](crate::Fenced) or
    /// timestamp of theirs held), what they logged is submitted first — merged, and as a graph
    /// if its shape repeats (directly with [`graph_cache`](SubmitConfig::graph_cache) `0`), as
    /// at the scope's end. The GPU starts on the first lanes while the program still logs the
    /// others, and each segment's graph is launched by the device's launcher thread
    /// ([`background_launches`](SubmitConfig::background_launches)). With the default, a
    /// scope of at most 4 lanes forms no segment (with `1`, segments of 1, 1, 2, 4, ... lanes:
    /// a scope of 2 lanes already forms one).
    ///
    /// A lane that logs again after its work went out in a segment first waits for the
    /// stream the segment ran on (one event record and wait, counted in
    /// [`Submission::operations`]). Its batch then holds a lane with work submitted before,
    /// which neither forms a segment nor runs as a graph: the rest of the scope goes to the
    /// driver operation by operation (the trace's reason: "a lane had work submitted earlier
    /// in the scope"). A program that enters each lane once, as the README's does, keeps its
    /// graphs. For one that enters its lanes round after round, the device learns it: where
    /// a scope logged more than 16 operations after a lane came back to log again (after
    /// other lanes had logged), the device's next scope forms no segments, and so runs as one
    /// graph once its shape repeats; the scope after a scope without such rounds forms them
    /// again. A single lane coming back at the end (a reduction, a check) keeps segments on.
    ///
    /// On two H100 hosts the README's program with 64 lanes of small kernels ran at 1.03-1.07×
    /// the best hand-written C++ graph with segments of 4, 1.05-1.08× with 8, 1.09-1.11× with
    /// 16 and 1.21-1.24× without; with 128 lanes at 0.90-0.92×, 0.90-0.91×, 0.88-0.90× and
    /// 1.03-1.06×; with 8 lanes of large columns the same with and without (`BENCHMARKS.md`).
    /// On a third host, 128 lanes ran at 0.82× with segments of 4 that stop growing at 32
    /// lanes, against 0.91× where they grew to 64; 64 lanes, whose segments the cap does not
    /// change, ran at 1.05-1.08× there, and at 1.10× where they stopped at 16.
    /// A segment's submission costs the closure's thread a few microseconds, and more where
    /// its graph is launched by that thread (likely while the launcher thread still wakes: a
    /// scope of 8 lanes of a million rows took 14 µs of closure without segments and 62 with,
    /// the whole scope 1.003 ms against 1.005). Set `0` for one submission
    /// at the scope's end (one plan, one graph).
    ///
    /// ```
    /// # use sluice_host as sluice;
    /// use sluice::{Gpu, SubmitConfig};
    /// let gpu = Gpu::cpu();
    /// assert_eq!(gpu.submit_config().segment_lanes, 4);
    /// gpu.set_submit_config(SubmitConfig { segment_lanes: 16, ..SubmitConfig::default() });
    /// gpu.set_submit_config(SubmitConfig { segment_lanes: 0, ..SubmitConfig::default() }); // none
    /// ```
    pub segment_lanes: usize,
    /// A segment's graph is launched by a thread of the device (started at the first such
    /// launch), while the program's thread goes on logging the scope's other lanes: a
    /// graph's launch costs the host about a microsecond per branch, which otherwise delays
    /// every later lane. The scope waits for those launches before any other driver call it
    /// makes, so the order is the same. On by default; no effect without segments, on the
    /// CPU backend, or in a traced scope (its trace brackets each launch where it is made).
    ///
    /// ```
    /// # use sluice_host as sluice;
    /// use sluice::{Gpu, SubmitConfig};
    /// let gpu = Gpu::cpu();
    /// gpu.set_submit_config(SubmitConfig { segment_lanes: 8, background_launches: false, ..SubmitConfig::default() });
    /// ```
    pub background_launches: bool,
    /// Most branches (concurrent streams) a captured graph has; beyond them, runs of
    /// consecutive lanes share a branch, which adds order between them and nothing else.
    /// `0`, the default: a branch per lane where kernels are chained
    /// ([`chain_launches`](SubmitConfig::chain_launches) on, on a GPU whose driver has
    /// launch-order edges), at most 64 otherwise — an unchained graph's launch costs host
    /// time per branch, and more branches than the GPU runs at once buy nothing.
    /// `usize::MAX`: a branch per lane. A graph captured under other rules than the device's
    /// current ones is not replayed.
    ///
    /// ```
    /// # use sluice_host as sluice;
    /// use sluice::{Gpu, SubmitConfig};
    /// let gpu = Gpu::cpu();
    /// gpu.set_submit_config(SubmitConfig { graph_branches: 16, ..SubmitConfig::default() });
    /// ```
    pub graph_branches: usize,
    /// In a captured graph, chain the kernels that wait for nothing in it — each branch's
    /// first kernel, where it is the branch's first operation: with a branch per lane, each
    /// lane's first kernel — by launch-order edges (CUDA 12.3): each is launched once every
    /// block of the previous one in the chain has begun. This orders launches only (no
    /// memory order, no wait for another kernel's results), so results are unchanged; the
    /// driver launches such a chain from fewer of its streams, which makes a graph of many
    /// lanes cheaper to launch (an H100, the README's program with 128 lanes: 0.222 ms a
    /// scope against 0.264 unchained; `BENCHMARKS.md`). The order is transitive, and CUDA
    /// calls it best effort (a kernel may wait until the previous one is done): a first
    /// kernel of many waves can delay the lanes after it (8 lanes of a million rows ran the
    /// same with and without the chain). No effect on the CPU backend or an older driver.
    /// [`Submission::launch_edges`] counts the edges.
    ///
    /// ```
    /// # use sluice_host as sluice;
    /// use sluice::{Gpu, SubmitConfig};
    /// let gpu = Gpu::cpu();
    /// gpu.set_submit_config(SubmitConfig { chain_launches: false, ..SubmitConfig::default() });
    /// ```
    pub chain_launches: bool,
}

impl Default for SubmitConfig {
    fn default() -> SubmitConfig {
        SubmitConfig {
            defer: true,
            graphs: true,
            graph_cache: 32,
            merge_copy_bytes: 256 << 10,
            merge_columns: 0,
            max_deferred: 1024,
            segment_lanes: 4,
            background_launches: true,
            graph_branches: 0,
            chain_launches: true,
        }
    }
}

impl SubmitConfig {
    /// Every operation reaches the driver as it is asked for: no deferral, no merged copies,
    /// no graphs (sluice before automatic submission; the opt-out).
    ///
    /// ```
    /// # use sluice_host as sluice;
    /// let cfg = sluice::SubmitConfig::direct();
    /// assert!(!cfg.defer && !cfg.graphs && cfg.merge_copy_bytes == 0);
    /// ```
    pub fn direct() -> SubmitConfig {
        SubmitConfig { defer: false, graphs: false, merge_copy_bytes: 0, ..SubmitConfig::default() }
    }

    /// Deferred submission and merged copies, without graphs.
    ///
    /// ```
    /// # use sluice_host as sluice;
    /// let cfg = sluice::SubmitConfig::deferred();
    /// assert!(cfg.defer && !cfg.graphs);
    /// ```
    pub fn deferred() -> SubmitConfig {
        SubmitConfig { graphs: false, ..SubmitConfig::default() }
    }

    /// The default of a new device: `SLUICE_SUBMIT` (`direct`, `deferred`, `graphs`) or
    /// [`SubmitConfig::default`].
    pub(crate) fn from_env() -> SubmitConfig {
        match std::env::var("SLUICE_SUBMIT").ok().as_deref() {
            Some("direct") => SubmitConfig::direct(),
            Some("deferred") => SubmitConfig::deferred(),
            _ => SubmitConfig::default(),
        }
    }
}

/// How one submission of a scope reached the GPU.
///
/// ```
/// # use sluice_host as sluice;
/// # fn demo() -> sluice::Result<()> {
/// use sluice::{traced_scope, Gpu, SubmitPath};
/// let gpu = Gpu::cpu();
/// # gpu.set_submit_config(sluice::SubmitConfig::default());
/// let mut m = gpu.alloc_matrix::<f32>(256, 2)?;
/// let mut paths = Vec::new();
/// for _ in 0..3 {
///     let ((), trace) = traced_scope(&gpu, |s| {
///         for (lane, col) in s.lanes(2)?.into_iter().zip(m.columns_mut()) {
///             lane.enter(|st| { let mut v = st.bind(col); st.zero(&mut v) })?;
///         }
///         Ok(())
///     })?;
///     paths.push(trace.submissions[0].path);
/// }
/// assert_eq!(paths, [SubmitPath::Direct, SubmitPath::GraphCaptured, SubmitPath::GraphReplayed]);
/// # Ok(()) }
/// # demo().unwrap();
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum SubmitPath {
    /// One driver call per operation, on the operations' own lanes.
    Direct,
    /// Captured into a new executable graph (its shape was seen before), then launched.
    GraphCaptured,
    /// A cached executable graph of the same shape, launched (its changed values written
    /// into its nodes first).
    GraphReplayed,
}

/// One submission of a scope: where the host had to observe pending work (a host wait, or
/// the scope's end), what was submitted and how. [`Trace::submissions`](crate::Trace::submissions)
/// lists a traced scope's, [`Scope::submissions`](crate::Scope::submissions) a running scope's.
///
/// ```
/// # use sluice_host as sluice;
/// # fn demo(gpu: &sluice::Gpu) -> sluice::Result<()> {
/// let ((), trace) = sluice::traced_scope(gpu, |s| {
///     let m = s.alloc_buffer::<u32>(64)?;
///     s.lane()?.enter(|st| { let mut v = st.bind(m.as_columns_mut()); st.zero(&mut v) })
/// })?;
/// let last = trace.submissions.last().expect("the scope's end submitted the fill");
/// assert_eq!(last.copies, 1);
/// println!("the fill left the program {:?} after the scope started", last.submitted_after);
/// # Ok(()) }
/// # demo(&sluice::Gpu::cpu()).unwrap();
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Submission {
    /// How it reached the GPU.
    pub path: SubmitPath,
    /// Why this path (`"first time this shape was seen"`, `"a host wait"`, ...).
    pub reason: &'static str,
    /// Operations in it: those the program asked for (launches, copies, fills, fence
    /// records, fence waits), and, after a segment, the record and wait that order a lane's
    /// next operation after the stream its segment ran on (see
    /// [`SubmitConfig::segment_lanes`]). Uploads (`Scope::upload`) go to the driver at once
    /// and are counted in [`Scope::upload_stats`](crate::Scope::upload_stats), not here.
    pub operations: usize,
    /// Kernel launches submitted.
    pub launches: usize,
    /// Copies and fills submitted (a merged copy counts once).
    pub copies: usize,
    /// Program copies that went into merged ones.
    pub merged_copies: usize,
    /// Merged copies submitted (each counted once in [`copies`](Submission::copies)): the
    /// [`merged_copies`](Submission::merged_copies) program copies went into this many.
    pub merges: usize,
    /// Events recorded (fences someone awaits, and the fan-ins of merged copies).
    pub events_recorded: usize,
    /// Waits for events submitted (fence waits on other lanes, fan-ins of merged copies).
    pub waits: usize,
    /// Fence records not submitted: no one awaited them, and no one could any more.
    pub fences_elided: usize,
    /// Graph nodes whose values were changed before the launch (replays only).
    pub nodes_updated: usize,
    /// Launch-order edges a capture added between its kernel nodes
    /// ([`SubmitConfig::chain_launches`]; captures on a GPU only).
    pub launch_edges: usize,
    /// Whether the plan (and the graph's key) of an earlier, equal batch was used instead of
    /// being worked out again (a repeated scope: the same operations, arguments and
    /// addresses).
    pub plan_reused: bool,
    /// Whether the graph was launched by the device's launcher thread
    /// ([`SubmitConfig::background_launches`]; a segment's, untraced, on a GPU).
    pub background: bool,
    /// Whether this was a segment: lanes submitted while the closure still logged others
    /// ([`SubmitConfig::segment_lanes`]), not at a host wait, a
    /// [`max_deferred`](SubmitConfig::max_deferred) flush or the scope's end.
    pub segment: bool,
    /// Host time from the scope's start (the host start of its trace's spans, if traced)
    /// until this submission's driver calls had returned — the work enqueued, not run — or,
    /// where [`background`](Submission::background), its graph was handed to the device's
    /// launcher thread, which launches it soon after (the trace's graph span says when). It
    /// shows when each part of a scope left the program without tracing's timing events.
    /// Only deferred scopes log submissions ([`SubmitConfig::direct`] logs none). It differs
    /// from run to run, so two submissions of equal work compare equal only with it zeroed.
    pub submitted_after: std::time::Duration,
}

/// What a device's scopes submitted so far, counted ([`Gpu::submit_stats`](crate::Gpu::submit_stats)).
/// Deferred scopes' submissions only: a scope under [`SubmitConfig::direct`] hands each
/// operation to the driver as it is asked for and counts nothing here (its lanes'
/// [`LaneStats`](crate::LaneStats) count what it enqueued).
///
/// ```
/// # use sluice_host as sluice;
/// let gpu = sluice::Gpu::cpu();
/// assert_eq!(gpu.submit_stats(), sluice::SubmitStats::default());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
#[non_exhaustive]
pub struct SubmitStats {
    /// Submissions made one driver call per operation.
    pub direct: u64,
    /// Graphs captured (and launched).
    pub graphs_captured: u64,
    /// Cached graphs launched again.
    pub graphs_replayed: u64,
    /// Graph nodes updated before a replay.
    pub nodes_updated: u64,
    /// Graphs dropped from the cache (least recently used, or a failed update).
    pub graphs_evicted: u64,
    /// Program copies merged into fewer copies.
    pub copies_merged: u64,
    /// Fence records not submitted because no one could await them.
    pub fences_elided: u64,
    /// Submissions whose plan was an earlier, equal batch's ([`Submission::plan_reused`]).
    pub plans_reused: u64,
    /// Launch-order edges added to captured graphs ([`Submission::launch_edges`]).
    pub launch_edges: u64,
    /// Graphs launched by the device's launcher thread ([`Submission::background`]).
    pub background_launches: u64,
}

impl SubmitStats {
    /// Adds one submission.
    pub(crate) fn add(&mut self, s: &Submission) {
        match s.path {
            SubmitPath::Direct => self.direct += 1,
            SubmitPath::GraphCaptured => self.graphs_captured += 1,
            SubmitPath::GraphReplayed => self.graphs_replayed += 1,
        }
        self.nodes_updated += s.nodes_updated as u64;
        self.copies_merged += s.merged_copies as u64;
        self.fences_elided += s.fences_elided as u64;
        self.plans_reused += s.plan_reused as u64;
        self.launch_edges += s.launch_edges as u64;
        self.background_launches += s.background as u64;
    }
}

/// A lane of a batch: its stream (in the lane's bookkeeping, which the scope frees only
/// after its last submission and its joins), its id, and whether any of its work reached
/// the driver before (then a graph of a later batch would not be ordered after it).
pub(crate) struct BatchLane {
    pub(crate) stream: NonNull<StreamHandle>,
    pub(crate) id: LaneId,
    pub(crate) submitted: bool,
}

// SAFETY: `stream` points to a `StreamHandle` (which is `Send + Sync`) that outlives every use
// of the batch (see the type's docs); the pointer is only read.
unsafe impl Send for BatchLane {}
// SAFETY: as for `Send`.
unsafe impl Sync for BatchLane {}

impl BatchLane {
    /// The lane's stream.
    pub(crate) fn stream(&self) -> &StreamHandle {
        // SAFETY: see the type's docs: the lane's bookkeeping outlives the batch's use of it.
        unsafe { self.stream.as_ref() }
    }
}

/// One operation of a batch, on the lane at `lane` (an index into [`Batch::lanes`]).
pub(crate) struct Op {
    pub(crate) lane: u32,
    pub(crate) kind: OpKind,
}

/// What an operation does, with everything needed to submit it later.
pub(crate) enum OpKind {
    /// A kernel launch; its lowered argument values are `Batch::words[words]` (each value
    /// padded to whole words), their sizes `Batch::sizes[sizes]`.
    Launch {
        func: FunctionHandle,
        name: &'static str,
        grid: (u32, u32, u32),
        block: (u32, u32, u32),
        shared_mem_bytes: u32,
        words: Range<u32>,
        sizes: Range<u32>,
    },
    /// A copy between device memory and host memory; `merge` for a copy to the host of whole
    /// columns that may merge with its neighbours.
    Copy { dir: Direction, device: u64, host: usize, span: Span2d, elem: usize, merge: Option<MergeSide> },
    /// A zero fill.
    Zero { dst: u64, pitch: usize, width_bytes: usize, height: usize },
    /// A fence's event record. `live` until the fence is dropped; `awaited` once a lane of the
    /// batch awaits it.
    Record { event: Arc<Event>, live: bool, awaited: bool },
    /// A wait for a fence's event; `record` is the batch's record of it, `None` when it was
    /// recorded before the batch (or in another scope).
    Wait { event: Arc<Event>, record: Option<u32> },
}

/// What a copy to the host needs to merge: the device columns, and the pinned allocation its
/// destination lies in.
#[derive(Clone, Copy, Debug)]
pub(crate) struct MergeSide {
    pub(crate) src: Span,
    pub(crate) host_alloc: usize,
}

/// What a deferred scope has collected and not yet submitted.
#[derive(Default)]
pub(crate) struct Batch {
    /// Every lane that enqueued in the scope, in order of its first operation (kept across
    /// submissions: a lane's index never changes within its scope).
    pub(crate) lanes: Vec<BatchLane>,
    pub(crate) ops: Vec<Op>,
    pub(crate) words: Vec<u64>,
    pub(crate) sizes: Vec<u32>,
    /// Counts submissions: a fence's record index is valid in its generation only.
    pub(crate) generation: u64,
    /// Events of fences dropped while an operation of the batch still named them: idle again
    /// once the batch is submitted (so that no event is recorded twice in one batch).
    pub(crate) retired: Vec<Arc<Event>>,
}

impl Batch {
    /// Appends `kind` on lane `lane`; returns its index.
    pub(crate) fn push(&mut self, lane: u32, kind: OpKind) -> u32 {
        self.ops.push(Op { lane, kind });
        (self.ops.len() - 1) as u32
    }

    /// Stores lowered kernel arguments (`values[i]`: `sizes[i]` bytes each), one value per
    /// run of words; returns their ranges for [`OpKind::Launch`].
    #[cfg(test)]
    pub(crate) fn store_args(&mut self, values: &[&[u8]]) -> (Range<u32>, Range<u32>) {
        let (w0, s0) = (self.words.len() as u32, self.sizes.len() as u32);
        for v in values {
            let at = self.words.len();
            self.words.resize(at + v.len().div_ceil(8).max(1), 0);
            bytemuck::cast_slice_mut::<u64, u8>(&mut self.words[at..])[..v.len()].copy_from_slice(v);
            self.sizes.push(v.len() as u32);
        }
        (w0..self.words.len() as u32, s0..self.sizes.len() as u32)
    }

    /// Stores lowered kernel arguments given as pointers to their values (`ptrs[i]` to
    /// `sizes[i]` bytes), as [`store_args`](Batch::store_args).
    ///
    /// # Safety
    /// - `ptrs[i]` points to `sizes[i]` readable bytes, for every `i < sizes.len()`.
    pub(crate) unsafe fn store_raw(
        &mut self,
        ptrs: &[*mut std::ffi::c_void],
        sizes: &[usize],
    ) -> (Range<u32>, Range<u32>) {
        let (w0, s0) = (self.words.len() as u32, self.sizes.len() as u32);
        self.sizes.reserve(sizes.len());
        for (p, &n) in ptrs.iter().zip(sizes) {
            // The common sizes (a view's address or length, a scalar) without a copy loop:
            // a scope of many lanes logs several per launch.
            match n {
                // SAFETY: the caller's duty: `p` points to `n` readable bytes (any alignment).
                8 => self.words.push(unsafe { p.cast::<u64>().read_unaligned() }),
                4 => {
                    // SAFETY: as above.
                    let v = unsafe { p.cast::<[u8; 4]>().read_unaligned() };
                    let mut w = [0u8; 8];
                    w[..4].copy_from_slice(&v);
                    self.words.push(u64::from_ne_bytes(w));
                }
                _ => {
                    let at = self.words.len();
                    self.words.resize(at + n.div_ceil(8).max(1), 0);
                    // SAFETY: the caller's duty: `p` points to `n` readable bytes.
                    let v = unsafe { std::slice::from_raw_parts(p.cast::<u8>(), n) };
                    bytemuck::cast_slice_mut::<u64, u8>(&mut self.words[at..])[..n].copy_from_slice(v);
                }
            }
            self.sizes.push(n as u32);
        }
        (w0..self.words.len() as u32, s0..self.sizes.len() as u32)
    }

    /// The argument values of a launch: `(pointer to each value, its size)`, valid while the
    /// batch is neither changed nor dropped.
    pub(crate) fn args(&self, words: &Range<u32>, sizes: &Range<u32>) -> (Vec<*mut std::ffi::c_void>, Vec<usize>) {
        let mut ptrs = Vec::with_capacity(sizes.len());
        let mut at = words.start as usize;
        let sizes: Vec<usize> =
            self.sizes[sizes.start as usize..sizes.end as usize].iter().map(|&s| s as usize).collect();
        for &size in &sizes {
            ptrs.push(self.words[at..].as_ptr().cast_mut().cast());
            at += size.div_ceil(8).max(1);
        }
        (ptrs, sizes)
    }

    /// Whether there is nothing to submit.
    pub(crate) fn is_empty(&self) -> bool {
        self.ops.is_empty()
    }

    /// Clears the submitted operations for the next batch; returns the retired events.
    pub(crate) fn clear(&mut self) -> Vec<Arc<Event>> {
        self.ops.clear();
        self.words.clear();
        self.sizes.clear();
        self.generation += 1;
        std::mem::take(&mut self.retired)
    }
}

/// One step of a plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Step {
    /// The batch's operation at this index, as asked for.
    Op(u32),
    /// A fan-in event record on a lane whose copy went into a merged one.
    FanInRecord { lane: u32, slot: u32 },
    /// The copying lane's wait for a fan-in event.
    FanInWait { lane: u32, slot: u32 },
    /// A merged copy to the host of `parts` adjacent column copies (of `elem`-byte elements).
    Merged { lane: u32, device: u64, host: usize, span: Span2d, elem: usize, parts: u32 },
}

/// How a batch will be submitted: its steps in order, the fan-in events it needs, and which
/// lanes a merged copy's lane covers (each is done once that lane has passed its copy).
#[derive(Debug, Default)]
pub(crate) struct Plan {
    pub(crate) steps: Vec<Step>,
    pub(crate) fan_ins: u32,
    pub(crate) merged_copies: usize,
    pub(crate) elided: usize,
    /// `(lane, by)`: `lane`'s last operation came before a fan-in that lane `by` waited for.
    pub(crate) covers: Vec<(u32, u32)>,
    /// The batch lanes the steps run on, in order of their first step.
    pub(crate) used: Vec<u32>,
}

/// Whether a fence record needs to be submitted: someone in the batch awaits it, or its fence
/// may still be awaited (a later submission's wait, or the host) — never after the scope's
/// last submission.
fn keeps(kind: &OpKind, last: bool) -> bool {
    match kind {
        OpKind::Record { live, awaited, .. } => *awaited || (*live && !last),
        _ => true,
    }
}

/// A word for a kernel: the function's address (one per loaded function or CPU entry).
fn func_word(f: &FunctionHandle) -> u64 {
    match f {
        FunctionHandle::Cuda(raw) => raw.0 as usize as u64,
        FunctionHandle::Cpu(entry, _) => *entry as usize as u64,
    }
}

fn lane_word(id: LaneId) -> u64 {
    match id {
        LaneId::Lane(n) => n as u64,
        LaneId::Upload => u64::MAX,
    }
}

/// A fast word hash (FxHash's step): keys and lane shapes are hashed at every scope's end,
/// where SipHash would cost microseconds.
#[derive(Default, Clone, Copy)]
struct Fx(u64);

impl Fx {
    fn add(&mut self, w: u64) {
        self.0 = (self.0.rotate_left(5) ^ w).wrapping_mul(0x517c_c1b7_2722_0a95);
    }
}

/// One operation's part of its lane's shape, for "lanes whose work is the same".
fn op_shape(h: &mut Fx, kind: &OpKind) {
    match kind {
        OpKind::Launch { func, grid, block, shared_mem_bytes, .. } => {
            for w in [1, func_word(func), grid.0 as u64, grid.1 as u64, grid.2 as u64, block.0 as u64] {
                h.add(w);
            }
            h.add(block.1 as u64 | (block.2 as u64) << 32);
            h.add(*shared_mem_bytes as u64);
        }
        OpKind::Copy { dir, span, .. } => {
            h.add(2 + (*dir == Direction::DeviceToHost) as u64);
            h.add(span.width_bytes as u64);
            h.add(span.height as u64);
        }
        OpKind::Zero { width_bytes, height, .. } => {
            h.add(4);
            h.add(*width_bytes as u64);
            h.add(*height as u64);
        }
        OpKind::Wait { .. } => h.add(5),
        OpKind::Record { .. } => h.add(6),
    }
}

/// Columns merge only where at least this many fit a merged copy (columns larger than half of
/// [`SubmitConfig::merge_copy_bytes`] are copied one by one). Two already pay: on an H100 host,
/// 32 lanes of 128 KiB columns ran at 143 µs a scope merged in pairs (chunks of 256 KiB),
/// 147 in fours (512 KiB) and 165 unmerged, each copy costing the copy engine about a
/// microsecond and a half beside its bytes (`BENCHMARKS.md`).
const MIN_PARTS: usize = 2;

/// A copy that may merge: its op, lane, columns, destination and the shape of its lane's work.
#[derive(Clone, Copy)]
struct Candidate {
    op: u32,
    lane: u32,
    src: Span,
    host: usize,
    host_alloc: usize,
    bytes: usize,
    shape: u64,
}

impl Candidate {
    /// Whether `next` continues `self` on both sides.
    fn precedes(&self, next: &Candidate) -> bool {
        self.src.join(next.src).is_some()
            && self.host_alloc == next.host_alloc
            && self.host + self.bytes == next.host
            && self.bytes == next.bytes
            && self.shape == next.shape
    }
}

/// Plans a batch: fence records no one can await are left out, and — in the scope's `last`
/// submission, with `merge_bytes > 0` — adjacent column copies merge (see the module docs).
pub(crate) fn plan(batch: &Batch, last: bool, merge: Merge) -> Plan {
    let merge_bytes = merge.bytes;
    let mut plan = Plan::default();
    // Each lane's last kept operation, and the shape of its kept operations before it.
    let lanes = batch.lanes.len();
    let (mut last_op, mut shape) = (vec![u32::MAX; lanes], vec![Fx::default(); lanes]);
    for (i, op) in batch.ops.iter().enumerate() {
        if !keeps(&op.kind, last) {
            plan.elided += 1;
            continue;
        }
        let l = op.lane as usize;
        if let Some(prev) = batch.ops.get(last_op[l] as usize) {
            op_shape(&mut shape[l], &prev.kind);
        }
        last_op[l] = i as u32;
    }
    // What replaces a merged copy: its fan-in slot, or (the collector) the merged copy, by
    // operation (`replacements[mark[op]]`; `u32::MAX`: none).
    let (mut mark, mut replacements): (Vec<u32>, Vec<Option<Replace>>) = (Vec::new(), Vec::new());
    if last && merge_bytes > 0 {
        let mut candidates: Vec<Candidate> = (0..lanes)
            .filter_map(|lane| {
                let at = last_op[lane];
                let OpKind::Copy { dir: Direction::DeviceToHost, host, span, merge: Some(m), .. } =
                    batch.ops.get(at as usize)?.kind
                else {
                    return None;
                };
                let bytes = span.width_bytes * span.height;
                (bytes * MIN_PARTS <= merge_bytes).then(|| Candidate {
                    op: at,
                    lane: lane as u32,
                    src: m.src,
                    host,
                    host_alloc: m.host_alloc,
                    bytes,
                    shape: shape[lane].0,
                })
            })
            .collect();
        candidates.sort_unstable_by_key(|c| c.src.ptr);
        let mut run: Vec<Candidate> = Vec::new();
        let mut groups: Vec<Vec<Candidate>> = Vec::new();
        for c in candidates {
            match run.last() {
                Some(prev) if prev.precedes(&c) => run.push(c),
                _ => {
                    split_run(&mut groups, std::mem::take(&mut run), merge);
                    run.push(c);
                }
            }
        }
        split_run(&mut groups, run, merge);
        if !groups.is_empty() {
            mark = vec![u32::MAX; batch.ops.len()];
        }
        let mut replace = |op: u32, r: Replace| {
            mark[op as usize] = replacements.len() as u32;
            replacements.push(Some(r));
        };
        for g in groups {
            let collector = g.iter().max_by_key(|c| c.op).copied().expect("a group has members");
            let mut slots = Vec::with_capacity(g.len() - 1);
            for c in &g {
                if c.op != collector.op {
                    replace(c.op, Replace::FanIn(plan.fan_ins));
                    slots.push(plan.fan_ins);
                    plan.covers.push((c.lane, collector.lane));
                    plan.fan_ins += 1;
                }
            }
            let first = g[0];
            let cols = g.iter().map(|c| c.src.cols).sum();
            let span = Span { cols, ..first.src }.to_2d();
            plan.merged_copies += g.len();
            let elem = first.src.elem_size;
            replace(
                collector.op,
                Replace::Collect { slots, device: first.src.ptr, host: first.host, span, elem, parts: g.len() as u32 },
            );
        }
    }
    plan.steps.reserve(batch.ops.len() - plan.elided + plan.fan_ins as usize);
    let mut used = vec![false; lanes];
    for (i, op) in batch.ops.iter().enumerate() {
        if !keeps(&op.kind, last) {
            continue;
        }
        // Every step made of this operation runs on its lane.
        if !std::mem::replace(&mut used[op.lane as usize], true) {
            plan.used.push(op.lane);
        }
        let r = mark.get(i).filter(|&&m| m != u32::MAX).and_then(|&m| replacements[m as usize].take());
        match r {
            None => plan.steps.push(Step::Op(i as u32)),
            Some(Replace::FanIn(slot)) => plan.steps.push(Step::FanInRecord { lane: op.lane, slot }),
            Some(Replace::Collect { slots, device, host, span, elem, parts }) => {
                plan.steps.extend(slots.iter().map(|&slot| Step::FanInWait { lane: op.lane, slot }));
                plan.steps.push(Step::Merged { lane: op.lane, device, host, span, elem, parts });
            }
        }
    }
    plan
}

/// How a scope's last submission merges adjacent column copies
/// ([`SubmitConfig::merge_copy_bytes`], [`SubmitConfig::merge_columns`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Merge {
    /// About this many bytes a merged copy (0: no merging).
    pub(crate) bytes: usize,
    /// At most this many columns a merged copy (0: no limit).
    pub(crate) columns: usize,
}

impl Merge {
    /// No merging (a submission that is not the scope's last).
    pub(crate) const NONE: Merge = Merge { bytes: 0, columns: 0 };

    /// What `config` asks for.
    pub(crate) fn of(config: &SubmitConfig) -> Merge {
        Merge { bytes: config.merge_copy_bytes, columns: config.merge_columns }
    }

    /// Chunks of about `bytes`, however many columns.
    #[cfg(test)]
    pub(crate) fn bytes(bytes: usize) -> Merge {
        Merge { bytes, columns: 0 }
    }
}

/// What a merged copy's members become.
#[derive(Clone)]
enum Replace {
    FanIn(u32),
    Collect { slots: Vec<u32>, device: u64, host: usize, span: Span2d, elem: usize, parts: u32 },
}

/// Cuts a run of adjacent copies into groups of about `merge.bytes`, and of at most
/// `merge.columns` copies where that is set (at least two copies each; a copy left alone is
/// not merged).
fn split_run(groups: &mut Vec<Vec<Candidate>>, run: Vec<Candidate>, merge: Merge) {
    let Some(first) = run.first() else { return };
    let k = merge.bytes / first.bytes.max(1);
    if k < MIN_PARTS {
        return;
    }
    let k = if merge.columns > 0 { k.min(merge.columns) } else { k };
    for chunk in run.chunks(k) {
        if chunk.len() >= 2 {
            groups.push(chunk.to_vec());
        }
    }
}

/// A plan's shape: what must be equal for a cached graph to run it. (The hash first: the
/// derived comparison compares fields in order, and two keys mostly differ in it.)
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Key {
    hash: u64,
    words: Vec<u64>,
}

/// Why a plan cannot run as a graph (or `Ok` with its key and its values): an operation a
/// graph cannot hold, or a wait for a record outside the batch.
pub(crate) fn key(batch: &Batch, plan: &Plan) -> Result<(Key, Values), &'static str> {
    let mut words = Vec::with_capacity(plan.steps.len() * 10);
    let mut values = Values {
        nodes: Vec::with_capacity(plan.steps.len()),
        words: Vec::with_capacity(batch.words.len() + 2 * plan.steps.len()),
        buffers: 0,
    };
    // Where each kept record of the batch is among the steps.
    let mut record_step = vec![u32::MAX; batch.ops.len()];
    for (n, step) in plan.steps.iter().enumerate() {
        match *step {
            Step::Op(i) => {
                let op = &batch.ops[i as usize];
                let lane = lane_word(batch.lanes[op.lane as usize].id);
                match &op.kind {
                    OpKind::Launch { func, grid, block, shared_mem_bytes, words: w, sizes, .. } => {
                        words.extend([1, lane, func_word(func), grid.0 as u64, grid.1 as u64, grid.2 as u64]);
                        words.extend([block.0 as u64, block.1 as u64, block.2 as u64, *shared_mem_bytes as u64]);
                        words.push(sizes.len() as u64);
                        words.extend(batch.sizes[sizes.start as usize..sizes.end as usize].iter().map(|&s| s as u64));
                        values.push(n, &batch.words[w.start as usize..w.end as usize]);
                    }
                    OpKind::Copy { dir: Direction::HostToDevice, .. } => {
                        return Err("a copy from host memory (which may be pageable)");
                    }
                    OpKind::Copy { device, host, span, .. } => {
                        words.extend([2, lane, span.width_bytes as u64, span.height as u64]);
                        words.extend([span.device_pitch as u64, span.host_pitch as u64]);
                        values.push_copy(n, *device, *host as u64);
                    }
                    OpKind::Zero { dst, pitch, width_bytes, height } => {
                        words.extend([3, lane, *dst, *pitch as u64, *width_bytes as u64, *height as u64]);
                    }
                    OpKind::Record { .. } => {
                        record_step[i as usize] = n as u32;
                        words.extend([4, lane]);
                    }
                    OpKind::Wait { record, .. } => {
                        let at = record.map(|r| record_step[r as usize]).filter(|&s| s != u32::MAX);
                        let Some(at) = at else {
                            return Err(
                                "a wait for a fence recorded before the submission (e.g. an upload in the scope: \
                                        upload inputs before it with `Gpu::upload` to replay graphs)",
                            );
                        };
                        words.extend([5, lane, at as u64]);
                    }
                }
            }
            Step::FanInRecord { lane, slot } => {
                words.extend([6, lane_word(batch.lanes[lane as usize].id), slot as u64])
            }
            Step::FanInWait { lane, slot } => words.extend([7, lane_word(batch.lanes[lane as usize].id), slot as u64]),
            Step::Merged { lane, device, host, span, parts, .. } => {
                words.extend([
                    8,
                    lane_word(batch.lanes[lane as usize].id),
                    span.width_bytes as u64,
                    span.height as u64,
                ]);
                words.extend([span.device_pitch as u64, span.host_pitch as u64, parts as u64]);
                values.push_copy(n, device, host as u64);
            }
        }
    }
    // Four interleaved hashes: one chain of dependent multiplies over every word would be
    // the key's slowest part.
    let mut h = [Fx::default(); 4];
    let chunks = words.chunks_exact(4);
    for &w in chunks.remainder() {
        h[0].add(w);
    }
    for c in chunks {
        for (h, &w) in h.iter_mut().zip(c) {
            h.add(w);
        }
    }
    let mut all = Fx(words.len() as u64);
    for h in h {
        all.add(h.0);
    }
    Ok((Key { hash: all.0, words }, values))
}

/// The values of a plan that a cached graph's nodes may need changed: for each launch its
/// argument words, for each copy its device and host addresses, in step order; and a hash of
/// the copies' addresses alone (which buffers the plan copies: a program that alternates
/// between buffer sets alternates it, one whose scalars change does not).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Values {
    /// Compared first (the derived comparison goes in field order): values that differ
    /// mostly differ in it.
    pub(crate) buffers: u64,
    /// `(step, range in words)` per node.
    pub(crate) nodes: Vec<(u32, Range<u32>)>,
    pub(crate) words: Vec<u64>,
}

impl Values {
    fn push(&mut self, step: usize, w: &[u64]) {
        let at = self.words.len() as u32;
        self.words.extend_from_slice(w);
        self.nodes.push((step as u32, at..self.words.len() as u32));
    }

    /// A copy's addresses: a node's values, and part of the buffer hash.
    fn push_copy(&mut self, step: usize, device: u64, host: u64) {
        self.push(step, &[device, host]);
        let mut h = Fx(self.buffers);
        h.add(device);
        h.add(host);
        self.buffers = h.0;
    }

    /// Node `i`'s values.
    pub(crate) fn of(&self, i: usize) -> &[u64] {
        let r = &self.nodes[i].1;
        &self.words[r.start as usize..r.end as usize]
    }
}

/// An executable graph of a plan, with one node per value-carrying step (in the order of
/// [`Values::nodes`]) and the values its nodes hold now.
pub(crate) struct CachedGraph {
    pub(crate) key: Key,
    /// The rules it was captured under: a graph is replayed only under the same.
    pub(crate) rules: GraphRules,
    pub(crate) exec: GraphExec,
    pub(crate) nodes: Vec<GraphNode>,
    pub(crate) values: Values,
    /// The context's [`memory_epoch`](crate::handle::Context::memory_epoch) when its copy
    /// nodes were last set (captured, or updated): under a later one they are set again.
    pub(crate) epoch: u64,
    last_used: u64,
}

impl CachedGraph {
    pub(crate) fn new(
        key: Key,
        rules: GraphRules,
        exec: GraphExec,
        nodes: Vec<GraphNode>,
        values: Values,
        epoch: u64,
    ) -> CachedGraph {
        CachedGraph { key, rules, exec, nodes, values, epoch, last_used: 0 }
    }
}

/// How a plan becomes a graph's topology, from [`SubmitConfig::graph_branches`] and
/// [`SubmitConfig::chain_launches`] as they apply on a device: a graph captured under other
/// rules is never replayed (the same plan, another topology).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct GraphRules {
    /// Most branches: beyond them, consecutive lanes share one.
    pub(crate) most_branches: usize,
    /// Whether the roots among the kernels are chained by launch-order edges.
    pub(crate) chained: bool,
}

/// Most branches of a graph whose kernels are not chained ([`SubmitConfig::graph_branches`]
/// `0`).
const UNCHAINED_BRANCHES: usize = 64;

impl SubmitConfig {
    /// The rules a graph is captured under on a device that can (`chainable`: CUDA 12.3's
    /// launch-order edges) or cannot chain launches.
    pub(crate) fn graph_rules(&self, chainable: bool) -> GraphRules {
        let chained = self.chain_launches && chainable;
        let most_branches = match self.graph_branches {
            0 if chained => usize::MAX,
            0 => UNCHAINED_BRANCHES,
            n => n,
        };
        GraphRules { most_branches, chained }
    }
}

/// How many shapes a device remembers having seen once (a shape's graph is made the second
/// time it is seen).
const SEEN: usize = 256;

/// A device's executable graphs, by plan shape. A scope takes a graph out while it runs it
/// and puts it back after joining its lanes, so a graph is never updated while a launch of
/// it may be pending, nor launched by two scopes at once.
#[derive(Default)]
pub(crate) struct GraphCache {
    graphs: Vec<CachedGraph>,
    seen: VecDeque<u64>,
    /// Shapes with the buffers their copies used, recently.
    buffers: VecDeque<(u64, u64)>,
    tick: u64,
}

impl GraphCache {
    /// A graph of `key` captured under `rules`, taken out of the cache: the one whose nodes hold `values` already,
    /// else one that copies the same buffers, else the most recently used; and how many other
    /// graphs of `key` stay cached.
    pub(crate) fn take(&mut self, key: &Key, rules: GraphRules, values: &Values) -> Option<(CachedGraph, usize)> {
        let mut same_key = 0;
        let mut pick: Option<(usize, (bool, bool, u64))> = None;
        for (i, g) in self.graphs.iter().enumerate() {
            if g.key != *key || g.rules != rules {
                continue;
            }
            same_key += 1;
            let rank = (g.values == *values, g.values.buffers == values.buffers, g.last_used);
            if pick.is_none_or(|(_, best)| rank > best) {
                pick = Some((i, rank));
            }
        }
        pick.map(|(i, _)| (self.graphs.swap_remove(i), same_key - 1))
    }

    /// Whether a plan of this shape copied these buffers before (and notes that it has now):
    /// a program that comes back to a buffer set gets a graph of its own for it.
    pub(crate) fn buffers_seen_before(&mut self, key: &Key, values: &Values) -> bool {
        let seen = (key.hash, values.buffers);
        if self.buffers.contains(&seen) {
            return true;
        }
        if self.buffers.len() == SEEN {
            self.buffers.pop_front();
        }
        self.buffers.push_back(seen);
        false
    }

    /// Whether a plan of this shape was seen before (and notes that it has been now).
    pub(crate) fn seen_before(&mut self, key: &Key) -> bool {
        if self.seen.contains(&key.hash) {
            return true;
        }
        if self.seen.len() == SEEN {
            self.seen.pop_front();
        }
        self.seen.push_back(key.hash);
        false
    }

    /// Puts a graph back (or in); drops the least recently used beyond `capacity`. Returns
    /// how many were dropped.
    pub(crate) fn put(&mut self, mut g: CachedGraph, capacity: usize) -> usize {
        self.tick += 1;
        g.last_used = self.tick;
        self.graphs.push(g);
        let mut dropped = 0;
        while self.graphs.len() > capacity {
            let oldest = (0..self.graphs.len()).min_by_key(|&i| self.graphs[i].last_used).expect("not empty");
            drop(self.graphs.swap_remove(oldest));
            dropped += 1;
        }
        dropped
    }

    /// Every graph, for the device to drop (or leak, with a lost context).
    pub(crate) fn drain(&mut self) -> Vec<CachedGraph> {
        self.seen.clear();
        self.buffers.clear();
        std::mem::take(&mut self.graphs)
    }
}

/// Allocation ids by first appearance in a batch: a repeated scope's scope memory comes back
/// at the same addresses under a new allocation id, and what the plan reads of an id is only
/// which spans share one (whether columns are adjacent in one allocation).
#[derive(Default)]
struct Allocs(Vec<u64>);

impl Allocs {
    fn ordinal(&mut self, id: u64) -> u64 {
        // Consecutive copies are usually columns of one allocation: the last id first.
        if self.0.last() == Some(&id) {
            return (self.0.len() - 1) as u64;
        }
        match self.0.iter().position(|&a| a == id) {
            Some(i) => i as u64,
            None => {
                self.0.push(id);
                (self.0.len() - 1) as u64
            }
        }
    }
}

/// A batch's operations as the plan and the key read them, flat, to tell a batch equal to an
/// earlier one: everything but a fence's event (whose place in the batch is what they use)
/// and an allocation's id (of which they use only which spans share one: [`Allocs`]). Each
/// operation is a header word (its kind in the low byte, its flags in the next, its lane in
/// the high half), then a number of words fixed by its kind and flags: two batches have
/// equal images exactly when their operations are equal in all that.
struct Image(Vec<u64>);

impl Image {
    /// The image of `batch`'s operations.
    fn of(batch: &Batch) -> Image {
        // 17 words at most an operation (a copy that may merge): never grown.
        let mut w = Write(Vec::with_capacity(batch.ops.len() * 17));
        encode(batch, &mut w);
        Image(w.0)
    }

    /// Whether this is the image of `batch`'s operations: compared as they are encoded, up to
    /// the first difference, with nothing stored.
    fn is_of(&self, batch: &Batch) -> bool {
        let mut check = Check { image: &self.0, at: 0 };
        encode(batch, &mut check) && check.at == self.0.len()
    }
}

/// Where [`encode`] puts an operation's words; `false`: stop.
trait Put {
    fn put<const N: usize>(&mut self, words: [u64; N]) -> bool;
}

/// Stores the words ([`Image::of`]).
struct Write(Vec<u64>);

impl Put for Write {
    fn put<const N: usize>(&mut self, words: [u64; N]) -> bool {
        self.0.extend_from_slice(&words);
        true
    }
}

/// Compares the words with an image's, from `at` on ([`Image::is_of`]).
struct Check<'a> {
    image: &'a [u64],
    at: usize,
}

impl Put for Check<'_> {
    #[inline(always)]
    fn put<const N: usize>(&mut self, words: [u64; N]) -> bool {
        let Some(Ok(stored)) =
            self.image.get(self.at..).map(|rest| <&[u64; N]>::try_from(rest.get(..N).unwrap_or(&[])))
        else {
            return false;
        };
        self.at += N;
        // Word by word without a branch; `N` is fixed, so the loop unrolls.
        let mut d = 0;
        for i in 0..N {
            d |= stored[i] ^ words[i];
        }
        d == 0
    }
}

/// Hands `batch`'s [`Image`] to `out`, one operation's words at a time, until it says stop;
/// returns whether it never did.
#[inline(always)]
fn encode(batch: &Batch, out: &mut impl Put) -> bool {
    let mut allocs = Allocs::default();
    let head = |kind: u64, flags: u64, lane: u32| kind | flags << 8 | (lane as u64) << 32;
    let pair = |a: u32, b: u32| a as u64 | (b as u64) << 32;
    batch.ops.iter().all(|op| match &op.kind {
        OpKind::Launch { func, grid, block, shared_mem_bytes, words, sizes, .. } => out.put([
            head(1, 0, op.lane),
            func_word(func),
            pair(grid.0, grid.1),
            pair(grid.2, block.0),
            pair(block.1, block.2),
            *shared_mem_bytes as u64,
            pair(words.start, words.end),
            pair(sizes.start, sizes.end),
        ]),
        OpKind::Copy { dir, device, host, span, elem, merge } => {
            let flags = matches!(dir, Direction::HostToDevice) as u64 | (merge.is_some() as u64) << 1;
            out.put([
                head(2, flags, op.lane),
                *device,
                *host as u64,
                span.width_bytes as u64,
                span.height as u64,
                span.device_pitch as u64,
                span.host_pitch as u64,
                *elem as u64,
            ]) && merge.is_none_or(|m| {
                let s = m.src;
                out.put([
                    s.ptr,
                    s.rows as u64,
                    s.cols as u64,
                    s.ld as u64,
                    s.elem_size as u64,
                    allocs.ordinal(s.alloc),
                    s.ctx as u64,
                    s.whole_columns as u64,
                    m.host_alloc as u64,
                ])
            })
        }
        OpKind::Zero { dst, pitch, width_bytes, height } => {
            out.put([head(3, 0, op.lane), *dst, *pitch as u64, *width_bytes as u64, *height as u64])
        }
        OpKind::Record { live, awaited, .. } => out.put([head(4, *live as u64 | (*awaited as u64) << 1, op.lane)]),
        OpKind::Wait { record, .. } => out.put([head(5, record.is_some() as u64, op.lane), record.unwrap_or(0) as u64]),
    })
}

/// The plan of a batch, and its key once worked out, kept with what they were made from: a
/// program that repeats its scope submits the same batch (the same operations on the same
/// lanes, the same arguments and addresses) scope after scope, and then both are reused
/// instead of worked out again (about a third of a repeated scope's host work per lane). Used
/// only where the batch is equal in everything [`plan`] and [`key`] read.
pub(crate) struct PlanMemo {
    image: Image,
    lanes: Vec<LaneId>,
    words: Vec<u64>,
    sizes: Vec<u32>,
    last: bool,
    merge: Merge,
    pub(crate) plan: Plan,
    /// [`key`] of the batch and the plan, once asked for.
    pub(crate) keyed: Option<Result<(Key, Values), &'static str>>,
}

impl PlanMemo {
    /// Plans `batch` ([`plan`]) and keeps what the plan was made from.
    pub(crate) fn new(batch: &Batch, last: bool, merge: Merge) -> PlanMemo {
        PlanMemo {
            image: Image::of(batch),
            lanes: batch.lanes.iter().map(|l| l.id).collect(),
            words: batch.words.clone(),
            sizes: batch.sizes.clone(),
            last,
            merge,
            plan: plan(batch, last, merge),
            keyed: None,
        }
    }

    /// Whether this memo's plan and key are `batch`'s, submitted as `last` with `merge`.
    pub(crate) fn matches(&self, batch: &Batch, last: bool, merge: Merge) -> bool {
        self.last == last
            && self.merge == merge
            && self.lanes.len() == batch.lanes.len()
            && self.words == batch.words
            && self.sizes == batch.sizes
            && self.lanes.iter().zip(&batch.lanes).all(|(&id, l)| id == l.id)
            && self.image.is_of(batch)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::handle::Context;

    /// A kernel entry for shapes (never run).
    unsafe fn entry(
        _: *const *mut std::ffi::c_void,
        _: &crate::check::CpuLaunch,
    ) -> Result<(), crate::check::CpuLaunchError> {
        Ok(())
    }

    /// A batch of `n` lanes, each: launch, copy of its column of one matrix to its part of
    /// one pinned allocation, the copy's (dropped) fence record.
    fn seed(n: usize, rows: usize, alive: &[usize]) -> Batch {
        let ctx = Context::cpu();
        let stream = StreamHandle::create(&ctx).expect("stream");
        let ptr = NonNull::from(Box::leak(Box::new(stream)));
        let mut b = Batch::default();
        for j in 0..n {
            b.lanes.push(BatchLane { stream: ptr, id: LaneId::Lane(j), submitted: false });
        }
        let matrix =
            Span { ptr: 0x10_0000, rows, cols: n, ld: rows, elem_size: 4, alloc: 7, ctx: 0, whole_columns: true };
        for j in 0..n {
            let (words, sizes) = b.store_args(&[&(j as u64).to_ne_bytes(), &1.5f32.to_ne_bytes()]);
            let func = FunctionHandle::Cpu(entry, "k");
            let launch = OpKind::Launch {
                func,
                name: "k",
                grid: (4, 1, 1),
                block: (256, 1, 1),
                shared_mem_bytes: 0,
                words,
                sizes,
            };
            b.push(j as u32, launch);
            let col = matrix.column(j).expect("column");
            let host = 0x9000_0000 + j * rows * 4;
            let merge = Some(MergeSide { src: col, host_alloc: 0x9000_0000 });
            let copy =
                OpKind::Copy { dir: Direction::DeviceToHost, device: col.ptr, host, span: col.to_2d(), elem: 4, merge };
            b.push(j as u32, copy);
            let event = Arc::new(Event::create(&ctx, false).expect("event"));
            b.push(j as u32, OpKind::Record { event, live: alive.contains(&j), awaited: false });
        }
        b
    }

    fn merged(p: &Plan) -> Vec<(u32, u32)> {
        p.steps
            .iter()
            .filter_map(|s| if let Step::Merged { lane, parts, .. } = s { Some((*lane, *parts)) } else { None })
            .collect()
    }

    /// The merged copy collected by `lane`: (bytes a column, columns, device address, host
    /// address), and how many fan-in waits that lane makes.
    fn merged_on(p: &Plan, lane: u32) -> ((usize, usize, u64, usize), usize) {
        let waits = p.steps.iter().filter(|s| matches!(s, Step::FanInWait { lane: l, .. } if *l == lane)).count();
        let copy = p.steps.iter().find_map(|s| match s {
            Step::Merged { lane: l, span, device, host, .. } if *l == lane => {
                Some((span.width_bytes, span.height, *device, *host))
            }
            _ => None,
        });
        (copy.expect("no merged copy on the lane"), waits)
    }

    #[test]
    fn a_plan_names_the_lanes_its_steps_run_on_in_order() {
        for (merge, alive) in [(0, &[][..]), (1 << 20, &[][..]), (1 << 20, &[2usize][..])] {
            let b = seed(6, 256, alive);
            let p = plan(&b, true, Merge::bytes(merge));
            let mut expect = Vec::new();
            for s in &p.steps {
                let lane = match *s {
                    Step::Op(i) => b.ops[i as usize].lane,
                    Step::FanInRecord { lane, .. } | Step::FanInWait { lane, .. } | Step::Merged { lane, .. } => lane,
                };
                if !expect.contains(&lane) {
                    expect.push(lane);
                }
            }
            assert_eq!(p.used, expect, "merge {merge}, alive {alive:?}");
        }
    }

    #[test]
    fn dead_fences_are_elided_and_small_adjacent_copies_merge_in_the_last_submission() {
        let b = seed(8, 1024, &[]); // 4 KiB columns
                                    // Not the last submission: nothing merges; dead records are left out.
        let p = plan(&b, false, Merge::bytes(16 << 10));
        assert_eq!((p.elided, p.merged_copies, p.steps.len()), (8, 0, 16));
        // The last: chunks of 16 KiB = 4 columns, collected by the chunk's last lane.
        let p = plan(&b, true, Merge::bytes(16 << 10));
        assert_eq!(merged(&p), [(3, 4), (7, 4)]);
        assert_eq!((p.merged_copies, p.fan_ins), (8, 6));
        assert_eq!(p.covers, [(0, 3), (1, 3), (2, 3), (4, 7), (5, 7), (6, 7)]);
        // The collector waits for every fan-in of its chunk, after its own launch.
        assert_eq!(merged_on(&p, 3), ((4096, 4, 0x10_0000, 0x9000_0000), 3));
        // Columns too large for a chunk of two, or merging off: per-column copies.
        assert_eq!(plan(&b, true, Merge::bytes(4096)).merged_copies, 0);
        assert_eq!(plan(&b, true, Merge::bytes(0)).merged_copies, 0);
        // At most two columns a copy (`merge_columns`) where the bytes would allow four; a
        // limit above what the bytes allow changes nothing.
        assert_eq!(merged(&plan(&b, true, Merge { bytes: 16 << 10, columns: 2 })), [(1, 2), (3, 2), (5, 2), (7, 2)]);
        assert_eq!(merged(&plan(&b, true, Merge { bytes: 16 << 10, columns: 8 })), [(3, 4), (7, 4)]);
    }

    /// `MIN_PARTS` is 2: columns up to half of `merge_copy_bytes` merge, in chunks of two
    /// (or three) where that is all a chunk holds; a run of three splits 2 + 1, the last
    /// column copied alone; a column one byte over half never merges.
    #[test]
    fn columns_up_to_half_a_merged_copy_merge_in_pairs() {
        let b = seed(8, 1024, &[]); // 4 KiB columns
        let p = plan(&b, true, Merge::bytes(8 << 10));
        assert_eq!(merged(&p), [(1, 2), (3, 2), (5, 2), (7, 2)]);
        assert_eq!((p.merged_copies, p.fan_ins), (8, 4));
        assert_eq!(p.covers, [(0, 1), (2, 3), (4, 5), (6, 7)]);
        assert_eq!(merged_on(&p, 1), ((4096, 2, 0x10_0000, 0x9000_0000), 1));
        assert_eq!(merged_on(&p, 3), ((4096, 2, 0x10_0000 + 2 * 4096, 0x9000_0000 + 2 * 4096), 1));
        assert!(key(&b, &p).is_ok());
        assert_eq!(plan(&b, true, Merge::bytes((8 << 10) - 1)).merged_copies, 0);
        assert_eq!(merged(&plan(&b, true, Merge::bytes(12 << 10))), [(2, 3), (5, 3), (7, 2)]);
        let b3 = seed(3, 1024, &[]);
        let p = plan(&b3, true, Merge::bytes(8 << 10));
        assert_eq!(merged(&p), [(1, 2)]);
        assert_eq!((p.merged_copies, p.fan_ins, p.covers.as_slice()), (2, 1, &[(0u32, 1u32)][..]));
        assert!(p.steps.iter().any(|s| matches!(s, Step::Op(i) if b3.ops[*i as usize].lane == 2
            && matches!(b3.ops[*i as usize].kind, OpKind::Copy { .. }))));
        assert_eq!(plan(&b, true, Merge { bytes: 8 << 10, columns: 1 }).merged_copies, 0);
    }

    #[test]
    fn a_copy_whose_fence_someone_may_await_never_merges() {
        // Lane 1's fence is alive at a host wait's submission: kept, and no merge there.
        let b = seed(4, 256, &[1]);
        let p = plan(&b, false, Merge::bytes(1 << 20));
        assert_eq!((p.elided, p.merged_copies), (3, 0));
        // Awaited by a lane: its copy is not the lane's last kept operation.
        let mut b = seed(4, 256, &[]);
        if let OpKind::Record { awaited, .. } = &mut b.ops[5].kind {
            *awaited = true;
        }
        let p = plan(&b, true, Merge::bytes(1 << 20));
        assert_eq!(merged(&p), [(3, 2)], "lanes 2 and 3; lane 0 has no neighbour left");
        let merged_lanes: Vec<u32> = p.covers.iter().map(|c| c.0).collect();
        assert!(!merged_lanes.contains(&1), "{:?}", p.covers);
    }

    #[test]
    fn lanes_with_different_work_or_gaps_do_not_merge() {
        let mut b = seed(4, 256, &[]);
        // Lane 2 launches another shape: it does not finish with the others.
        if let OpKind::Launch { grid, .. } = &mut b.ops[6].kind {
            *grid = (8, 1, 1);
        }
        assert_eq!(merged(&plan(&b, true, Merge::bytes(1 << 20))), [(1, 2)]);
        // Lane 3's destination is elsewhere: lanes 0-2 still merge.
        let mut b = seed(4, 256, &[]);
        if let OpKind::Copy { host, .. } = &mut b.ops[10].kind {
            *host += 4096;
        }
        assert_eq!(merged(&plan(&b, true, Merge::bytes(1 << 20))), [(2, 3)]);
    }

    /// The image tells zero fills and waits apart in each field, and a wait for the batch's
    /// first record from a wait for one outside it (`Some(0)` against `None`).
    #[test]
    fn a_plan_memo_tells_fills_and_waits_apart() {
        let with = |dst: u64, height: usize, record: Option<u32>| {
            let mut b = seed(2, 256, &[]);
            b.push(1, OpKind::Zero { dst, pitch: 1024, width_bytes: 1024, height });
            let ctx = Context::cpu();
            let event = Arc::new(Event::create(&ctx, false).expect("event"));
            b.push(1, OpKind::Wait { event, record });
            b
        };
        let memo = PlanMemo::new(&with(0x4000, 8, Some(0)), true, Merge::NONE);
        assert!(memo.matches(&with(0x4000, 8, Some(0)), true, Merge::NONE), "the same batch");
        assert!(!memo.matches(&with(0x8000, 8, Some(0)), true, Merge::NONE), "another fill address");
        assert!(!memo.matches(&with(0x4000, 9, Some(0)), true, Merge::NONE), "another fill height");
        assert!(!memo.matches(&with(0x4000, 8, None), true, Merge::NONE), "a wait for a record outside");
        assert!(!memo.matches(&with(0x4000, 8, Some(2)), true, Merge::NONE), "a wait for another record");
    }

    /// A memo is reused only for a batch equal in everything the plan and the key read; the
    /// reused plan is the one a fresh plan would be.
    #[test]
    fn a_plan_memo_is_reused_only_for_the_same_batch() {
        let a = seed(6, 256, &[]);
        let memo = PlanMemo::new(&a, true, Merge::bytes(1 << 20));
        let matches = |b: &Batch, last, merge| memo.matches(b, last, merge);
        assert_eq!(memo.plan.steps, plan(&a, true, Merge::bytes(1 << 20)).steps);
        // Another scope's batch of the same program (its own events, the same everything else).
        let b = seed(6, 256, &[]);
        assert!(matches(&b, true, Merge::bytes(1 << 20)));
        assert!(!matches(&b, false, Merge::bytes(1 << 20)), "not the last submission");
        assert!(!matches(&b, true, Merge::NONE), "another merge size");
        // Each change a plan or a key reads: not the memo's batch.
        type Change = fn(&mut Batch);
        let changes: [(&str, Change); 12] = [
            ("a scalar", |b| b.words[1] ^= 1),
            ("an argument's size", |b| b.sizes[0] = 4),
            ("a launch's grid", |b| {
                if let OpKind::Launch { grid, .. } = &mut b.ops[3].kind {
                    grid.0 += 1;
                }
            }),
            ("a copy's destination", |b| {
                if let OpKind::Copy { host, .. } = &mut b.ops[4].kind {
                    *host += 4096;
                }
            }),
            ("a copy's source", |b| {
                if let OpKind::Copy { device, .. } = &mut b.ops[1].kind {
                    *device += 1024;
                }
            }),
            ("a fence alive", |b| {
                if let OpKind::Record { live, .. } = &mut b.ops[2].kind {
                    *live = true;
                }
            }),
            ("a fence awaited", |b| {
                if let OpKind::Record { awaited, .. } = &mut b.ops[5].kind {
                    *awaited = true;
                }
            }),
            ("a copy's direction", |b| {
                if let OpKind::Copy { dir, .. } = &mut b.ops[4].kind {
                    *dir = Direction::HostToDevice;
                }
            }),
            ("a copy that may not merge", |b| {
                if let OpKind::Copy { merge, .. } = &mut b.ops[4].kind {
                    *merge = None;
                }
            }),
            ("an operation on another lane", |b| b.ops[0].lane = 1),
            ("another lane's id", |b| b.lanes[2].id = LaneId::Lane(9)),
            ("one operation more", |b| b.ops.truncate(b.ops.len() - 1)),
        ];
        for (what, change) in changes {
            let mut c = seed(6, 256, &[]);
            change(&mut c);
            assert!(!matches(&c, true, Merge::bytes(1 << 20)), "{what}");
        }
        // The same memory under a new allocation id (a repeated scope's scope memory): the
        // same batch; one column in another allocation than its neighbours: not.
        let realloc = |b: &mut Batch, only: Option<usize>| {
            for (i, op) in b.ops.iter_mut().enumerate() {
                if let OpKind::Copy { merge: Some(m), .. } = &mut op.kind {
                    if only.is_none_or(|o| o == i) {
                        m.src.alloc = 99;
                    }
                }
            }
        };
        let mut c = seed(6, 256, &[]);
        realloc(&mut c, None);
        assert!(matches(&c, true, Merge::bytes(1 << 20)), "the same allocation under another id");
        let mut c = seed(6, 256, &[]);
        realloc(&mut c, Some(4));
        assert!(!matches(&c, true, Merge::bytes(1 << 20)), "one column in another allocation");
        assert_ne!(plan(&c, true, Merge::bytes(1 << 20)).steps, memo.plan.steps, "and its plan differs");
    }

    #[test]
    fn keys_hold_the_shape_and_values_the_addresses_and_arguments() {
        let (a, b) = (seed(4, 256, &[]), seed(4, 256, &[]));
        let (pa, pb) = (plan(&a, true, Merge::bytes(0)), plan(&b, true, Merge::bytes(0)));
        let (ka, va) = key(&a, &pa).expect("graphable");
        let (kb, _) = key(&b, &pb).expect("graphable");
        assert_eq!(ka, kb);
        assert_eq!(va.nodes.len(), 8, "a node per launch and per copy");
        assert_eq!(va.of(0)[0], 0, "lane 0's first argument");
        // Another launch shape: another key.
        let mut c = seed(4, 256, &[]);
        if let OpKind::Launch { block, .. } = &mut c.ops[0].kind {
            *block = (128, 1, 1);
        }
        assert_ne!(key(&c, &plan(&c, true, Merge::bytes(0))).expect("graphable").0, ka);
        // Merged copies are another shape than per-column copies.
        assert_ne!(key(&a, &plan(&a, true, Merge::bytes(1 << 20))).expect("graphable").0, ka);
        // A copy from host memory cannot be a graph's.
        let mut d = seed(1, 256, &[]);
        if let OpKind::Copy { dir, .. } = &mut d.ops[1].kind {
            *dir = Direction::HostToDevice;
        }
        assert!(key(&d, &plan(&d, true, Merge::bytes(0))).is_err());
    }

    #[test]
    fn arguments_keep_their_bytes() {
        let mut b = Batch::default();
        let (w, s) = b.store_args(&[&[1u8, 2, 3], &7u64.to_ne_bytes(), &[0u8; 12]]);
        let (ptrs, sizes) = b.args(&w, &s);
        assert_eq!(sizes, [3, 8, 12]);
        // SAFETY: each pointer points to its value's bytes inside `b.words`, alive here.
        unsafe {
            assert_eq!(std::slice::from_raw_parts(ptrs[0].cast::<u8>(), 3), [1, 2, 3]);
            assert_eq!(*(ptrs[1] as *const u64), 7);
        }
    }

    #[test]
    fn raw_arguments_are_stored_as_their_bytes_are() {
        // Sizes with a path of their own (8, 4) and without (3, 12, 16), unaligned sources.
        let bytes: Vec<u8> = (1..=64).collect();
        let sizes = [3usize, 8, 4, 12, 8, 16, 4];
        let mut at = 1; // odd: every value unaligned
        let mut values: Vec<&[u8]> = Vec::new();
        let mut ptrs = Vec::new();
        for &n in &sizes {
            values.push(&bytes[at..at + n]);
            ptrs.push(bytes[at..].as_ptr().cast_mut().cast::<std::ffi::c_void>());
            at += n;
        }
        let (mut a, mut b) = (Batch::default(), Batch::default());
        let (wa, sa) = a.store_args(&values);
        // SAFETY: each pointer points to `sizes[i]` bytes of `bytes`, alive here.
        let (wb, sb) = unsafe { b.store_raw(&ptrs, &sizes) };
        assert_eq!((wa.clone(), sa), (wb, sb));
        assert_eq!(a.words, b.words);
        let (got, got_sizes) = b.args(&wa, &(0..sizes.len() as u32));
        assert_eq!(got_sizes, sizes);
        for ((p, &n), v) in got.iter().zip(&sizes).zip(&values) {
            // SAFETY: each pointer points to its value's bytes inside `b.words`, alive here.
            assert_eq!(unsafe { std::slice::from_raw_parts(p.cast::<u8>(), n) }, *v);
        }
    }

    #[test]
    fn the_cache_is_bounded_and_remembers_shapes_seen_once() {
        let mut c = GraphCache::default();
        let k = Key { words: vec![1, 2], hash: 9 };
        assert!(!c.seen_before(&k));
        assert!(c.seen_before(&k));
        assert!(c.take(&k, SubmitConfig::default().graph_rules(true), &Values::default()).is_none());
    }

    #[test]
    fn graph_rules_follow_the_config_and_the_device() {
        let d = SubmitConfig::default();
        let rules = |c: SubmitConfig, chainable| {
            let r = c.graph_rules(chainable);
            (r.most_branches, r.chained)
        };
        // Automatic: a branch per lane where launches are chained, 64 where they cannot be.
        assert_eq!(rules(d, true), (usize::MAX, true));
        assert_eq!(rules(d, false), (64, false));
        assert_eq!(rules(SubmitConfig { chain_launches: false, ..d }, true), (64, false));
        // An explicit limit holds either way.
        assert_eq!(rules(SubmitConfig { graph_branches: 16, ..d }, true), (16, true));
        assert_eq!(rules(SubmitConfig { graph_branches: 16, ..d }, false), (16, false));
    }
}
