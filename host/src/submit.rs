//! Submission: how operations reach the driver — one at a time as they are asked for
//! ([`run`], traced when the scope is), or a deferred scope's whole [`Batch`] at once
//! ([`submit`]): planned (fences no one can await left out, adjacent column copies merged;
//! see [`plan`](crate::plan)), then either one driver call per step on the steps' own lanes,
//! or — for a scope whose shape repeats an earlier one's — one launch of a cached executable
//! graph, its changed values written into its nodes first.
//!
//! # Where the graph runs
//!
//! A graph is launched on the stream of the first lane of its batch, and only for the
//! scope's last submission, and only when none of the batch's lanes has had any work
//! submitted before in the scope and every fence the batch awaits is recorded in it: then
//! nothing outside the graph orders before or after it, the other lanes' streams get no work
//! at all, and the scope's end joins the one stream the graph ran on (the other lanes are
//! idle once it is: [`Submitted::covers`]).
//!
//! # Capture
//!
//! A graph is made the second time a shape is seen (once is not a repetition): the plan's
//! steps run through the same direct path on the lanes' streams while an idle stream of the
//! device captures them (each lane joins the capture by waiting on a fork event and leaves it
//! by an event the origin waits on), so the graph holds exactly what direct submission would
//! have enqueued — kernels, copies, and the fence edges as graph edges. With
//! [`SubmitConfig::chain_launches`] (the default), the kernels that wait for nothing are then
//! chained in capture order by launch-order edges
//! ([`GraphHandle::chain_launches`](crate::handle::GraphHandle::chain_launches)), which changes
//! when the driver launches them, not what they wait for, and makes the graph's launch cheaper
//! on the host. Without it, beyond 64 lanes (with [`SubmitConfig::graph_branches`] `0`; beyond
//! its value otherwise) runs of consecutive lanes are captured on one stream each
//! ([`branches`]): a graph with fewer, longer branches launches in less host time. A graph is
//! cached with the rules it was captured under ([`GraphRules`]) and replayed only under the
//! same.

use std::ffi::c_void;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::device::Gpu;
use crate::driver::mem::{Direction, Span2d};
use crate::error::{Error, LaneId, Result};
use crate::handle::{Event, FunctionHandle, GraphNode, StreamHandle};
use crate::launcher::Launches;
use crate::plan::{
    self, Batch, CachedGraph, GraphRules, Key, OpKind, Plan, PlanMemo, Step, Submission, SubmitConfig, SubmitPath,
    Values,
};
use crate::trace::{Recorder, SpanKind};

/// One operation to hand the driver now.
pub(crate) enum Work<'a> {
    Launch {
        func: FunctionHandle,
        name: &'static str,
        grid: (u32, u32, u32),
        block: (u32, u32, u32),
        shared_mem_bytes: u32,
        ptrs: &'a mut [*mut c_void],
        sizes: &'a [usize],
    },
    Copy {
        dir: Direction,
        device: u64,
        host: usize,
        span: Span2d,
        /// Element size, for the trace's name of the copy.
        elem: usize,
    },
    Zero {
        dst: u64,
        pitch: usize,
        width_bytes: usize,
        height: usize,
    },
    Record(&'a Event),
    Wait(&'a Event),
}

impl Work<'_> {
    /// How a trace shows it (`None`: not traced — event records are not spans).
    fn span(&self, merged: u32) -> Option<(SpanKind, String)> {
        match self {
            Work::Launch { name, .. } => Some((SpanKind::Launch, name.to_string())),
            Work::Copy { dir, span, elem, .. } => {
                let (rows, cols) = (span.width_bytes / (*elem).max(1), span.height);
                let what = match dir {
                    Direction::DeviceToHost => (SpanKind::CopyToHost, "to host"),
                    Direction::HostToDevice => (SpanKind::CopyToDevice, "to device"),
                };
                let merged = if merged > 1 { format!(" (merged from {merged} lanes)") } else { String::new() };
                Some((what.0, format!("{rows} x {cols} {}{merged}", what.1)))
            }
            Work::Zero { width_bytes, height, .. } => {
                Some((SpanKind::Fill, format!("zero {width_bytes} B x {height}")))
            }
            Work::Wait(_) => Some((SpanKind::Wait, "await fence".to_string())),
            Work::Record(_) => None,
        }
    }
}

/// Hands one operation to the driver on `stream`.
///
/// # Safety
/// - The memory a launch's arguments, a copy or a fill name is valid, and used by no other
///   stream in a conflicting way, until `stream` has passed the operation (the typed calls
///   that made the operation borrowed it for their scope, which joins `stream` first).
/// - A launch's `ptrs[i]` points to `sizes[i]` bytes, one value per parameter of `func`
///   (lowered by the sealed launch traits for the signature `func` was resolved for).
pub(crate) unsafe fn run(stream: &StreamHandle, work: &mut Work<'_>) -> Result<()> {
    match work {
        Work::Launch { func, name, grid, block, shared_mem_bytes, ptrs, sizes } => {
            // SAFETY: the caller's duties are `launch`'s.
            unsafe { stream.launch(*func, *grid, *block, *shared_mem_bytes, ptrs, sizes) }
                .map_err(|error| Error::Launch { kernel: name, error })
        }
        Work::Copy { dir, device, host, span, .. } => {
            let direction = match dir {
                Direction::DeviceToHost => "device to host",
                Direction::HostToDevice => "host to device",
            };
            // SAFETY: the caller's duty is `copy`'s.
            unsafe { stream.copy(*dir, *device, *host as *mut c_void, *span) }
                .map_err(|error| Error::Copy { direction, error })
        }
        Work::Zero { dst, pitch, width_bytes, height } => {
            // SAFETY: the caller's duty is `zero_2d`'s.
            unsafe { stream.zero_2d(*dst, *pitch, *width_bytes, *height) }.map_err(|error| Error::Fill { error })
        }
        Work::Record(e) => e.record(stream).map_err(|error| Error::Event { call: "cuEventRecord", error }),
        Work::Wait(e) => stream.wait(e).map_err(|error| Error::Event { call: "cuStreamWaitEvent", error }),
    }
}

/// [`run`], bracketed in a traced scope by timing events and host instants on `lane`.
///
/// # Safety
/// As [`run`].
pub(crate) unsafe fn run_traced(
    gpu: &Gpu,
    trace: Option<&Recorder>,
    stream: &StreamHandle,
    lane: LaneId,
    work: &mut Work<'_>,
    merged: u32,
) -> Result<()> {
    let span = match trace {
        Some(rec) => work.span(merged).map(|s| (rec, s)),
        None => None,
    };
    let Some((rec, (kind, name))) = span else {
        // SAFETY: the caller's duties.
        return unsafe { run(stream, work) };
    };
    let open = rec.begin(gpu, stream)?;
    // SAFETY: the caller's duties.
    unsafe { run(stream, work) }?;
    rec.end(gpu, stream, open, lane, kind, name)
}

/// What a deferred submission needs of its scope.
pub(crate) struct Flush<'a> {
    pub(crate) gpu: &'a Gpu,
    pub(crate) trace: Option<&'a Recorder>,
    pub(crate) config: SubmitConfig,
    /// The scope's last submission (its end): merges and graphs are allowed.
    pub(crate) last: bool,
    /// A segment ([`SubmitConfig::segment_lanes`]): no fence recorded in the batch can be
    /// awaited any more and no lane of it had work submitted before, so — as at the end —
    /// merges and graphs are allowed; a later operation of a lane the graph ran waits for it
    /// (the caller's bookkeeping).
    pub(crate) segment: bool,
    /// Why it happens (a host wait's reason; the scope's end).
    pub(crate) reason: &'static str,
    /// An idle fence event of the scope (fan-ins of merged copies, a capture's fork and joins).
    pub(crate) take_event: &'a dyn Fn() -> Result<Arc<Event>>,
    /// Where a segment's graph launch is handed to the device's launcher thread
    /// ([`SubmitConfig::background_launches`]); `None`: launched here. The caller finishes
    /// these launches before its scope's next driver call.
    pub(crate) launches: Option<&'a Arc<Launches>>,
}

/// What a submission did, beyond its [`Submission`] record.
pub(crate) struct Submitted {
    pub(crate) submission: Submission,
    /// `(lane, by)`: the batch lane `lane`'s work is done once lane `by`'s is (a merged copy's
    /// fan-in, or a graph run on `by`'s stream).
    pub(crate) covers: Vec<(u32, u32)>,
    /// The graph launched and the batch lane whose stream it ran on; the graph goes back into
    /// the device's cache once no launch of it is pending.
    pub(crate) graph: Option<(CachedGraph, u32)>,
    /// Events the submission used, idle again (waits already enqueued keep their record).
    pub(crate) events: Vec<Arc<Event>>,
    /// When its driver calls had returned, or its graph was handed to the launcher thread
    /// (the scope stamps [`Submission::submitted_after`] from it).
    pub(crate) at: Instant,
}

/// Submits a deferred scope's batch: planned, then direct or as a graph (see the module
/// docs). The batch is cleared whatever happens (operations are not retried); on an error
/// the operations after the failing one were not submitted, which is safe (the scope joins
/// every lane before any memory they name is freed) and reported by the scope.
///
/// # Safety
/// - Every operation of the batch names memory that its scope keeps borrowed, and unused by
///   the host, until the scope has joined the lanes (what the typed calls that logged the
///   operations guarantee: they borrow it for `'scope`); the batch's lanes' streams are alive.
pub(crate) unsafe fn submit(batch: &mut Batch, f: &Flush<'_>) -> (Result<()>, Option<Submitted>) {
    if batch.is_empty() {
        let retired = batch.clear();
        return (finish_launches(f), Some(Submitted::idle(retired)));
    }
    // The segment graphs handed to the launcher thread are launched before any other driver
    // call of the scope. A segment may hand its own graph over after them (the thread keeps
    // the order), so it waits for them only before another call (`as_graph`, `direct`).
    let finished = if f.segment { Ok(()) } else { finish_launches(f) };
    // A segment is planned as the scope's end is: none of its fences can be awaited any more.
    let last = f.last || f.segment;
    let merge = if last { plan::Merge::of(&f.config) } else { plan::Merge::NONE };
    // The plan (and key) of an equal batch among the last few a scope's end or segments
    // submitted (a repeated scope), if there is one.
    let reused = f.gpu.take_plan_memo(|m| m.matches(batch, last, merge));
    let plan_reused = reused.is_some();
    let mut memo = reused.unwrap_or_else(|| PlanMemo::new(batch, last, merge));
    let PlanMemo { plan, keyed, .. } = &mut memo;
    let plan = &*plan;
    let mut sub = Submission {
        path: SubmitPath::Direct,
        reason: f.reason,
        operations: batch.ops.len(),
        launches: 0,
        copies: 0,
        merged_copies: plan.merged_copies,
        merges: 0,
        events_recorded: 0,
        waits: 0,
        fences_elided: plan.elided,
        nodes_updated: 0,
        launch_edges: 0,
        plan_reused,
        background: false,
        segment: f.segment,
        // Set where the scope keeps it (`LaneShared::submit_log`), from `Submitted::at`.
        submitted_after: Duration::ZERO,
    };
    count(batch, plan, &mut sub);
    let mut events = Vec::new();
    let mut graph = None;
    let mut covers = plan.covers.clone();
    // SAFETY: the caller's duties.
    let result = match unsafe { as_graph(batch, plan, f, &mut sub, &mut events, keyed) } {
        Ok(Some((g, on))) => {
            graph = Some((g, on));
            // Every other lane of the batch got no work: idle once the graph's lane is.
            covers = plan.used.iter().filter(|&&l| l != on).map(|&l| (l, on)).collect();
            Ok(())
        }
        Ok(None) => {
            sub.path = SubmitPath::Direct;
            // A segment's driver calls follow its scope's background launches.
            match if f.segment { finish_launches(f) } else { Ok(()) } {
                // SAFETY: the caller's duties.
                Ok(()) => unsafe { direct(batch, plan, f, &mut events) },
                Err(e) => Err(e),
            }
        }
        Err(e) => Err(e),
    };
    let at = Instant::now();
    let result = match (finished, result) {
        (Ok(()), r) => r,
        (Err(e), Ok(())) => Err(e),
        (Err(a), Err(b)) => Err(a.also(b)),
    };
    // Only a scope's last submission and its segments are kept: a repeated scope's end is
    // what recurs (and runs as a graph), and the batches a long scope submits as it grows
    // would push it out.
    if last {
        f.gpu.keep_plan_memo(memo);
    }
    f.gpu.note_submission(&sub);
    events.extend(batch.clear());
    (result, Some(Submitted { submission: sub, covers, graph, events, at }))
}

/// Waits for the launches the scope handed to the launcher thread ([`Flush::launches`]); a
/// failed one is the scope's error.
fn finish_launches(f: &Flush<'_>) -> Result<()> {
    f.launches.map_or(Ok(()), |l| finish(l))
}

/// [`Launches::finish`], a failed launch as the scope's error ([`Error::Launch`], naming the
/// segment's graph).
pub(crate) fn finish(launches: &Launches) -> Result<()> {
    launches.finish().map_err(|error| Error::Launch {
        kernel: "a segment's graph (launched by the device's launcher thread)",
        error,
    })
}

impl Submitted {
    fn idle(events: Vec<Arc<Event>>) -> Submitted {
        let submission = Submission {
            path: SubmitPath::Direct,
            reason: "nothing to submit",
            operations: 0,
            launches: 0,
            copies: 0,
            merged_copies: 0,
            merges: 0,
            events_recorded: 0,
            waits: 0,
            fences_elided: 0,
            nodes_updated: 0,
            launch_edges: 0,
            plan_reused: false,
            segment: false,
            submitted_after: Duration::ZERO,
            background: false,
        };
        Submitted { submission, covers: Vec::new(), graph: None, events, at: Instant::now() }
    }

    /// Whether anything was submitted.
    pub(crate) fn is_empty(&self) -> bool {
        self.submission.operations == 0
    }
}

/// Counts what the plan submits.
fn count(batch: &Batch, plan: &Plan, sub: &mut Submission) {
    for step in &plan.steps {
        match *step {
            Step::Op(i) => match &batch.ops[i as usize].kind {
                OpKind::Launch { .. } => sub.launches += 1,
                OpKind::Copy { .. } | OpKind::Zero { .. } => sub.copies += 1,
                OpKind::Record { .. } => sub.events_recorded += 1,
                OpKind::Wait { .. } => sub.waits += 1,
            },
            Step::FanInRecord { .. } => sub.events_recorded += 1,
            Step::FanInWait { .. } => sub.waits += 1,
            Step::Merged { .. } => {
                sub.copies += 1;
                sub.merges += 1;
            }
        }
    }
}

/// The lane (batch index) a step runs on.
fn step_lane(batch: &Batch, step: &Step) -> u32 {
    match *step {
        Step::Op(i) => batch.ops[i as usize].lane,
        Step::FanInRecord { lane, .. } | Step::FanInWait { lane, .. } | Step::Merged { lane, .. } => lane,
    }
}

/// The branch of a graph each batch lane's steps are captured on — the batch index of the
/// branch's first lane — and the branches, in order. A graph of many independent lanes costs
/// its launch about a microsecond of host time per branch (the driver's streams and
/// cross-stream waits), and more branches than the GPU can run at once buy nothing: beyond
/// the most `rules` allow ([`SubmitConfig::graph_branches`]), runs of consecutive lanes (in
/// order of their first step) share one branch, their steps in plan order. That only adds order between lanes: the plan's order
/// has every record before its waits, so no branch waits for a later step of its own, and
/// what each lane computes is unchanged. (H200, 128 lanes of 16-block kernels with merged
/// copies: two lanes per branch took launch and run from 180 to 135 µs, and the launch's
/// host time from 127 to 67 µs; 64 lanes ran fastest with a branch each.) Chained launches
/// ([`SubmitConfig::chain_launches`]) cost little per branch, and a lane that shares a branch
/// is no root to chain: then every lane has its own.
fn branches(batch: &Batch, plan: &Plan, rules: GraphRules) -> (Vec<u32>, Vec<u32>) {
    let most = rules.most_branches.max(1);
    let used = &plan.used;
    let per = used.len().div_ceil(most).max(1);
    let mut branch: Vec<u32> = (0..batch.lanes.len() as u32).collect();
    let mut firsts = Vec::with_capacity(used.len().div_ceil(per));
    for run in used.chunks(per) {
        firsts.push(run[0]);
        for &l in run {
            branch[l as usize] = run[0];
        }
    }
    (branch, firsts)
}

/// What a capture collects of its steps (see [`steps`]).
struct Capturing<'a> {
    /// The node each value-carrying step (launch, copy, merged copy) became, in plan order.
    nodes: &'a mut Vec<GraphNode>,
    /// The kernel nodes among them, in plan order.
    kernels: &'a mut Vec<GraphNode>,
    /// Each batch lane's branch ([`branches`]).
    branch: &'a [u32],
}

/// Runs the plan's steps one driver call each on their lanes (traced if the scope is), or,
/// `capturing`, each on its branch's stream (see [`branches`]), collecting the node each
/// value-carrying step became.
///
/// # Safety
/// As [`submit`]; while capturing, the stream of every branch of the plan is drawn into the
/// capture.
unsafe fn steps(
    batch: &Batch,
    plan: &Plan,
    f: &Flush<'_>,
    events: &mut Vec<Arc<Event>>,
    mut capturing: Option<Capturing<'_>>,
) -> Result<()> {
    let trace = if capturing.is_some() { None } else { f.trace };
    let mut fan_ins: Vec<Option<Arc<Event>>> = vec![None; plan.fan_ins as usize];
    for step in &plan.steps {
        let lane_at = step_lane(batch, step) as usize;
        // Captured, a step runs on its lane's branch (see `branches`).
        let on = capturing.as_ref().map_or(lane_at, |c| c.branch[lane_at] as usize);
        let (stream, lane) = (batch.lanes[on].stream(), batch.lanes[lane_at].id);
        if capturing.is_some() {
            // The CPU backend names this lane in a fault of the step's replay.
            stream.set_capture_label(Some(lane));
        }
        let (mut value_step, mut launch) = (false, false);
        match *step {
            Step::Op(i) => match &batch.ops[i as usize].kind {
                OpKind::Launch { func, name, grid, block, shared_mem_bytes, words, sizes } => {
                    let (mut ptrs, sizes) = batch.args(words, sizes);
                    let mut w = Work::Launch {
                        func: *func,
                        name,
                        grid: *grid,
                        block: *block,
                        shared_mem_bytes: *shared_mem_bytes,
                        ptrs: &mut ptrs,
                        sizes: &sizes,
                    };
                    // SAFETY: the arguments were lowered for `func` by the sealed launch traits
                    // when the launch was logged (`Batch::store_args` keeps their bytes); memory:
                    // the caller's duty.
                    unsafe { run_traced(f.gpu, trace, stream, lane, &mut w, 1) }?;
                    (value_step, launch) = (true, true);
                }
                OpKind::Copy { dir, device, host, span, elem, .. } => {
                    let mut w = Work::Copy { dir: *dir, device: *device, host: *host, span: *span, elem: *elem };
                    // SAFETY: the caller's duty.
                    unsafe { run_traced(f.gpu, trace, stream, lane, &mut w, 1) }?;
                    value_step = true;
                }
                OpKind::Zero { dst, pitch, width_bytes, height } => {
                    let mut w = Work::Zero { dst: *dst, pitch: *pitch, width_bytes: *width_bytes, height: *height };
                    // SAFETY: the caller's duty.
                    unsafe { run_traced(f.gpu, trace, stream, lane, &mut w, 1) }?;
                }
                OpKind::Record { event, .. } => {
                    // SAFETY: an event record touches no memory.
                    unsafe { run(stream, &mut Work::Record(event)) }?;
                }
                OpKind::Wait { event, .. } => {
                    // SAFETY: a wait touches no memory.
                    unsafe { run_traced(f.gpu, trace, stream, lane, &mut Work::Wait(event), 1) }?;
                }
            },
            Step::FanInRecord { slot, .. } => {
                let e = (f.take_event)()?;
                // SAFETY: an event record touches no memory.
                unsafe { run(stream, &mut Work::Record(&e)) }?;
                fan_ins[slot as usize] = Some(e);
            }
            Step::FanInWait { slot, .. } => {
                let e = fan_ins[slot as usize].take().expect("a fan-in's record comes before its wait");
                // SAFETY: a wait touches no memory.
                let waited = unsafe { run_traced(f.gpu, trace, stream, lane, &mut Work::Wait(&e), 1) };
                events.push(e);
                waited?;
            }
            Step::Merged { device, host, span, parts, elem, .. } => {
                let mut w = Work::Copy { dir: Direction::DeviceToHost, device, host, span, elem };
                // SAFETY: the merged copy covers exactly the columns and destinations of the
                // copies it replaces (adjacent in one device allocation and in one pinned
                // allocation: `plan`), each borrowed as the caller's duty says; it runs after
                // every lane of the chunk reached its copy (the fan-in waits above).
                unsafe { run_traced(f.gpu, trace, stream, lane, &mut w, parts) }?;
                value_step = true;
            }
        }
        if let (true, Some(c)) = (value_step, capturing.as_mut()) {
            // SAFETY: the stream is capturing (it joined the capture before its first step).
            let node = unsafe { stream.last_captured_node() }
                .map_err(|error| Error::Stream { call: "cuStreamGetCaptureInfo", error })?
                .ok_or(Error::Recording { what: "finding the node of a captured operation" })?;
            if launch {
                c.kernels.push(node.clone());
            }
            c.nodes.push(node);
        }
    }
    events.extend(fan_ins.into_iter().flatten());
    Ok(())
}

/// Direct submission: one driver call per step.
///
/// # Safety
/// As [`submit`].
unsafe fn direct(batch: &mut Batch, plan: &Plan, f: &Flush<'_>, events: &mut Vec<Arc<Event>>) -> Result<()> {
    // Every lane of the plan gets work (also when a step fails part way: conservative).
    for &l in &plan.used {
        batch.lanes[l as usize].submitted = true;
    }
    // SAFETY: the caller's duties.
    unsafe { steps(batch, plan, f, events, None) }
}

/// Why the plan cannot be a graph, or `None` if it can.
fn not_a_graph(batch: &Batch, plan: &Plan, f: &Flush<'_>) -> Option<&'static str> {
    if !f.last && !f.segment {
        return Some(f.reason);
    }
    if !f.config.graphs {
        return Some("graphs are off (SubmitConfig::graphs)");
    }
    if f.config.graph_cache == 0 {
        return Some("no graph is cached (SubmitConfig::graph_cache is 0)");
    }
    if plan.steps.len() < 2 {
        return Some("a single operation");
    }
    if f.gpu.backend() == crate::device::Backend::Cuda && !crate::driver::graph::auto_graphs_supported() {
        return Some("the driver lacks the graph entry points");
    }
    if plan.used.iter().any(|&l| batch.lanes[l as usize].submitted) {
        return Some("a lane had work submitted earlier in the scope");
    }
    None
}

/// Runs the plan as a graph when it can: a cached one of its shape (updated), or one
/// captured now if the shape was seen before. `Ok(None)`: submit it directly instead
/// (`sub.reason` says why). `Ok(Some((graph, lane)))`: launched on batch lane `lane`.
///
/// # Safety
/// As [`submit`].
unsafe fn as_graph(
    batch: &mut Batch,
    plan: &Plan,
    f: &Flush<'_>,
    sub: &mut Submission,
    events: &mut Vec<Arc<Event>>,
    keyed: &mut Option<std::result::Result<(Key, Values), &'static str>>,
) -> Result<Option<(CachedGraph, u32)>> {
    if let Some(why) = not_a_graph(batch, plan, f) {
        sub.reason = why;
        return Ok(None);
    }
    // Worked out once per distinct batch (`PlanMemo`).
    let (key, values) = match keyed.get_or_insert_with(|| plan::key(batch, plan)) {
        Ok((key, values)) => (&*key, &*values),
        Err(why) => {
            sub.reason = why;
            return Ok(None);
        }
    };
    let on = step_lane(batch, &plan.steps[0]);
    let rules = f.gpu.graph_rules(&f.config);
    // Read before the nodes are set (a later free only makes the next replay set them again).
    let epoch = f.gpu.context().memory_epoch();
    let recurring = f.gpu.buffers_seen_before(key, values);
    let taken = match f.gpu.take_graph(key, rules, values) {
        // The program came back to buffers no cached graph copies (it alternates between buffer
        // sets): keep that graph for its buffers and capture one for these, a few per shape.
        Ok((g, others)) if recurring && g.values.buffers != values.buffers && others + 1 < GRAPHS_PER_SHAPE => {
            f.gpu.put_graph(g);
            Err(true)
        }
        other => other,
    };
    let mut g = match taken {
        Ok((g, _)) => g,
        Err(false) => {
            sub.reason = "the first time this shape was seen";
            return Ok(None);
        }
        Err(true) => {
            // A capture's calls on the lanes' streams follow the background launches.
            if f.segment {
                finish_launches(f)?;
            }
            // SAFETY: the caller's duties.
            match unsafe { capture(batch, plan, f, rules, events) } {
                Ok((exec, nodes, edges)) => {
                    sub.path = SubmitPath::GraphCaptured;
                    sub.launch_edges = edges;
                    sub.reason = "the shape was seen before: captured";
                    CachedGraph::new(key.clone(), rules, exec, nodes, values.clone(), epoch)
                }
                Err(_) => {
                    sub.reason = "capturing the graph failed";
                    return Ok(None);
                }
            }
        }
    };
    if sub.path == SubmitPath::Direct {
        // A cached graph: write what changed into its nodes.
        // SAFETY: the caller's duties cover the new values' memory; the graph was taken out of
        // the cache, which holds only graphs with no launch pending.
        match unsafe { update(batch, plan, &mut g, values, epoch) } {
            Ok(n) => {
                sub.path = SubmitPath::GraphReplayed;
                sub.reason = "the same shape as a cached graph";
                sub.nodes_updated = n;
            }
            Err(_) => {
                drop(g);
                f.gpu.note_evicted();
                sub.reason = "updating the cached graph failed: dropped";
                return Ok(None);
            }
        }
    }
    let lane = &batch.lanes[on as usize];
    let (stream, id) = (lane.stream(), lane.id);
    let name = || format!("graph of the scope: {} launches, {} copies ({:?})", sub.launches, sub.copies, sub.path);
    let open = match f.trace {
        Some(rec) => Some(rec.begin(f.gpu, stream)?),
        None => None,
    };
    // A segment's launch goes to the launcher thread if it is awake (else it is made here,
    // sooner than the thread would wake), untraced (a trace brackets the launch with records
    // on the stream, here).
    let launcher = f.gpu.launcher();
    let handed = match (f.segment, open.is_none(), f.launches, stream.graph_launch(&g.exec)) {
        (true, true, Some(launches), Some(launch)) if launcher.awake() => {
            // SAFETY: as for the launch below; and the caller finishes `launches` before its
            // scope's next driver call (`Flush::launches`), and keeps the graph (in the scope's
            // list) until its lanes have joined.
            unsafe { launcher.launch(launch, launches) }.is_ok()
        }
        (true, true, Some(_), Some(_)) => {
            // Woken for the scope's next segments.
            launcher.rouse();
            false
        }
        _ => false,
    };
    sub.background = handed;
    if !handed {
        if f.segment {
            finish_launches(f)?;
        }
        // SAFETY: every address the graph's nodes name is the batch's (just written into
        // them), which the caller's duty keeps valid until the scope joins this stream.
        unsafe { stream.launch_graph(&g.exec) }.map_err(|error| Error::Launch { kernel: "graph", error })?;
    }
    if let (Some(rec), Some(open)) = (f.trace, open) {
        rec.end(f.gpu, stream, open, id, SpanKind::Graph, name())?;
    }
    batch.lanes[on as usize].submitted = true;
    Ok(Some((g, on)))
}

/// Most graphs of one shape the cache makes, each for the buffers of a program that
/// alternates between buffer sets (beyond it, a cached graph's copies are pointed elsewhere).
const GRAPHS_PER_SHAPE: usize = 4;

/// Writes the values that differ from the graph's into its nodes; returns how many nodes.
/// Where memory was given back since the graph's copy nodes were set (`epoch`, the
/// context's [`memory_epoch`](crate::handle::Context::memory_epoch) now, differs from
/// `g.epoch`), every copy node is set again, equal addresses or not: a node is bound to the
/// allocation it was set for, and an address equal to the cached one may now be another
/// allocation (pinned memory freed and registered again where it was).
///
/// # Safety
/// - As [`submit`] for the batch's memory; no launch of `g` is pending.
unsafe fn update(batch: &Batch, plan: &Plan, g: &mut CachedGraph, values: &plan::Values, epoch: u64) -> Result<usize> {
    let remap = g.epoch != epoch;
    let mut changed = 0;
    for (i, node) in g.nodes.iter().enumerate() {
        let step = plan.steps[values.nodes[i].0 as usize];
        let copy = match step {
            Step::Merged { .. } => true,
            Step::Op(op) => matches!(batch.ops[op as usize].kind, OpKind::Copy { .. }),
            _ => false,
        };
        if values.of(i) == g.values.of(i) && !(remap && copy) {
            continue;
        }
        let set = match step {
            Step::Op(op) => match &batch.ops[op as usize].kind {
                OpKind::Launch { func, grid, block, shared_mem_bytes, words, sizes, .. } => {
                    let (mut ptrs, sizes) = batch.args(words, sizes);
                    // SAFETY: the node is this step's launch node (same shape: the key), the
                    // arguments lowered for `func`; no launch pending (the caller's duty).
                    unsafe {
                        g.exec.set_kernel_params(node, *func, *grid, *block, *shared_mem_bytes, &mut ptrs, &sizes)
                    }
                }
                OpKind::Copy { dir, device, host, span, .. } => {
                    // SAFETY: the node is this step's copy node (same shape); the memory is the
                    // caller's duty.
                    unsafe { g.exec.set_copy_params(node, *dir, *device, *host as *mut c_void, *span) }
                }
                _ => continue,
            },
            Step::Merged { device, host, span, .. } => {
                // SAFETY: as for a copy.
                unsafe { g.exec.set_copy_params(node, Direction::DeviceToHost, device, host as *mut c_void, span) }
            }
            _ => continue,
        };
        set.map_err(|error| Error::Launch { kernel: "graph update", error })?;
        changed += 1;
    }
    g.values = values.clone();
    g.epoch = epoch;
    Ok(changed)
}

/// Captures the plan into an executable graph (see the module docs); nothing runs.
///
/// # Safety
/// As [`submit`].
unsafe fn capture(
    batch: &mut Batch,
    plan: &Plan,
    f: &Flush<'_>,
    rules: GraphRules,
    events: &mut Vec<Arc<Event>>,
) -> Result<(crate::handle::GraphExec, Vec<GraphNode>, usize)> {
    let origin = f.gpu.take_stream()?;
    let fork = (f.take_event)()?;
    // SAFETY: the graph entry points were checked (`not_a_graph`); `origin` is idle.
    if let Err(error) = unsafe { origin.begin_capture() } {
        f.gpu.recycle_stream(origin);
        events.push(fork);
        return Err(Error::Stream { call: "cuStreamBeginCapture", error });
    }
    let (branch, lanes) = branches(batch, plan, rules);
    let (mut nodes, mut kernels) = (Vec::new(), Vec::new());
    let captured = (|| {
        fork.record(&origin).map_err(|error| Error::Event { call: "cuEventRecord", error })?;
        for &l in &lanes {
            batch.lanes[l as usize]
                .stream()
                .wait(&fork)
                .map_err(|error| Error::Event { call: "cuStreamWaitEvent", error })?;
        }
        let c = Capturing { nodes: &mut nodes, kernels: &mut kernels, branch: &branch };
        // SAFETY: the caller's duties; the branches' streams joined the capture just above.
        unsafe { steps(batch, plan, f, events, Some(c)) }
    })();
    // Every branch leaves the capture through an event the origin waits on, whatever happened.
    let mut joined = Ok(());
    for &l in &lanes {
        batch.lanes[l as usize].stream().set_capture_label(None);
        let done = (f.take_event)().and_then(|e| {
            e.record(batch.lanes[l as usize].stream())
                .map_err(|error| Error::Event { call: "cuEventRecord", error })?;
            origin.wait(&e).map_err(|error| Error::Event { call: "cuStreamWaitEvent", error })?;
            events.push(e);
            Ok(())
        });
        if joined.is_ok() {
            joined = done;
        }
    }
    // SAFETY: the origin began this capture above.
    let ended = unsafe { origin.end_capture() }.map_err(|error| Error::Stream { call: "cuStreamEndCapture", error });
    events.push(fork);
    // Only captured, never run: the origin is idle.
    f.gpu.recycle_stream(origin);
    captured?;
    joined?;
    let mut graph = ended?;
    let edges = if rules.chained {
        // SAFETY: `kernels` holds the kernel nodes `steps` collected from this capture, in
        // plan order, which is the order they were captured in.
        unsafe { graph.chain_launches(&kernels) }
    } else {
        0
    };
    let exec = graph.instantiate().map_err(|error| Error::Device { call: "cuGraphInstantiate", error })?;
    Ok((exec, nodes, edges))
}
