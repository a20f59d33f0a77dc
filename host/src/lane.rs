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
use std::ptr::NonNull;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use bytemuck::Pod;

use crate::capture::Capture;
use crate::device::{lock, Gpu};
use crate::error::{Error, LaneId, Result};
use crate::handle::{Event, StreamHandle};
use crate::launcher::Launches;
use crate::matrix::{ColumnsMut, ColumnsRef};
use crate::module::{LaunchTarget, SourceSpan};
use crate::plan::{Batch, BatchLane, CachedGraph, MergeSide, OpKind, Submission, SubmitConfig};
use crate::submit::{self, Flush, Work};
use crate::trace::{Recorder, SpanKind};
use crate::view::{Brand, ColumnView, ColumnViewMut, Invariant};

/// Most operations a scope may log after a lane came back to log again (after other lanes
/// had logged) for the next scope to still form segments: beyond them, what a segment before
/// that point would leave to go direct costs more host time than segments save (see
/// [`SubmitConfig::segment_lanes`]).
const ROUNDS_DIRECT: u32 = 16;

/// Segments stop growing at this many lanes, or at a quarter of the lanes the scope made if
/// that is more, while some of those have not logged yet ([`Deferred::segment_due`]). On an
/// H100, 128 lanes of small kernels ran 10% faster with segments of at most 32 (16 ran as
/// fast), 64 lanes 5% slower with at most 16 than without a cap.
const SEGMENT_CAP: usize = 32;

/// Why a segment is submitted (see [`SubmitConfig::segment_lanes`]).
const SEGMENT: &str = "a segment of lanes (SubmitConfig::segment_lanes)";

/// Idle events by kind, `[fence events, timing events]` (`Event::timing` as the index): kept
/// so from scope to scope, so that a scope's start sorts none.
pub(crate) type IdleEvents = [Vec<Arc<Event>>; 2];

/// What the lanes of one scope share: the device, the scope's idle events (fences dropped
/// in this scope are reused by its later fences before the device's pool is asked), the
/// trace recorder when the scope is traced, and — in a deferred scope — the operations not
/// yet submitted.
pub(crate) struct LaneShared {
    pub(crate) gpu: Gpu,
    /// Idle events: `[fence events, timing events]`.
    idle: Mutex<IdleEvents>,
    trace: Option<Recorder>,
    capture: Option<Capture>,
    /// How this scope submits (fixed when it starts).
    config: SubmitConfig,
    /// `Some` in a deferred scope: what its lanes logged and what it submitted.
    deferred: Option<Mutex<Deferred>>,
    /// A submission failed part way: some logged waits may never have been submitted, so the
    /// scope's end trusts no lane's cover and synchronizes every lane.
    failed: AtomicBool,
    /// Lanes the scope has made so far ([`Scope::lane`](crate::Scope::lane)), for
    /// [`SEGMENT_CAP`].
    pub(crate) made: AtomicU32,
    /// When the scope started (its trace's host start, if traced):
    /// [`Submission::submitted_after`] counts from here.
    started: Instant,
}

/// A deferred scope's log: the batch not yet submitted, the lanes it names (a batch lane's
/// bookkeeping, by the lane's index in the batch), the submissions so far and the graph the
/// last one launched.
#[derive(Default)]
pub(crate) struct Deferred {
    batch: Batch,
    owners: Vec<NonNull<LaneInner>>,
    pub(crate) submissions: Vec<Submission>,
    /// The graphs the scope's submissions launched (a segment's and the end's).
    pub(crate) graphs: Vec<CachedGraph>,
    /// What decides when the log is due as a segment ([`SubmitConfig::segment_lanes`]).
    tally: Tally,
    /// Per batch lane: the segment whose graph or merged copy ran the lane's work on another
    /// lane's stream, until the lane logs again (its next operation then waits for that
    /// stream first).
    behind: Vec<Option<u32>>,
    /// Where segments ran lanes' work on other lanes' streams.
    segments: Vec<Segment>,
    /// This scope may submit segments: the tally is kept (otherwise logging skips it).
    segmenting: bool,
    /// The batch lane that logged last (`u32::MAX`: none yet).
    last_slot: u32,
    /// Per batch lane: whether it logged an operation in this scope.
    logged: Vec<bool>,
    /// Operations logged since a lane first logged again after other lanes had logged since
    /// its last one (`None`: none has): what a segment before it would have left to go
    /// direct ([`Gpu::note_rounds`]).
    after_rounds: Option<u32>,
    /// The segment graphs handed to the device's launcher thread and maybe not launched yet
    /// ([`SubmitConfig::background_launches`]): finished before any other driver call of
    /// the scope (`submit::submit`, [`LaneShared::finish_launches`]).
    launches: Arc<Launches>,
}

/// A stream a segment ran other lanes' work on: its graph's, or a merged copy's (see
/// [`Deferred::touch`]).
#[derive(Clone)]
struct Segment {
    /// The batch lane whose stream it is.
    on: u32,
    /// Recorded on that stream when a lane whose work ran there logs again.
    done: Arc<Event>,
    /// Where `done`'s record is, in which batch (it is logged once per batch).
    record: Option<(u64, u32)>,
}

/// What the current batch holds, counted as it is logged: the lanes with operations in it,
/// the fence records in it that may still be awaited, and whether a lane of it had work
/// submitted before; and how many lanes earlier segments took.
#[derive(Default)]
struct Tally {
    /// The batch generation the counts are of.
    generation: u64,
    /// Per batch lane: the generation of its last logged operation.
    seen: Vec<u64>,
    lanes: u32,
    live: u32,
    stale: bool,
    segmented: u32,
}

// SAFETY: `owners` point to lanes' bookkeeping boxes (`LaneInner` is `Sync`), which the scope
// frees only after its last submission and its joins; they are only read.
unsafe impl Send for Deferred {}

/// A deferred scope's log, emptied, for the next scope (its vectors keep their capacity: a
/// scope of many lanes would otherwise grow them again, a fifth of its logging time).
#[derive(Default)]
pub(crate) struct SpareLog(Option<Box<Deferred>>);

impl Deferred {
    /// The batch index of `lane`, which is added to the batch if new, about to log an
    /// operation: counted in the batch's tally, and — if a segment graph ran its earlier work
    /// on another lane's stream — made to wait for that graph first.
    fn slot(&mut self, lane: &LaneInner) -> u32 {
        let slot = self.slot_of(lane);
        let known = std::mem::replace(&mut self.logged[slot as usize], true);
        // A lane back after others logged: the scope works in rounds; count what follows.
        match &mut self.after_rounds {
            Some(n) => *n += 1,
            None if known && slot != self.last_slot => self.after_rounds = Some(1),
            None => {}
        }
        self.last_slot = slot;
        if self.segmenting {
            self.touch(slot);
        }
        slot
    }

    /// The batch index of `lane` (added to the batch if new), nothing logged.
    fn slot_of(&mut self, lane: &LaneInner) -> u32 {
        let slot = lane.slot.load(Ordering::Relaxed);
        if slot != u32::MAX {
            return slot;
        }
        let slot = self.batch.lanes.len() as u32;
        self.batch.lanes.push(BatchLane { stream: NonNull::from(&lane.stream), id: lane.id, submitted: false });
        self.owners.push(NonNull::from(lane));
        self.behind.push(None);
        self.logged.push(false);
        lane.slot.store(slot, Ordering::Relaxed);
        slot
    }

    /// The tally, reset if the batch was submitted since it was counted.
    fn tally(&mut self) -> &mut Tally {
        let t = &mut self.tally;
        if t.generation != self.batch.generation {
            *t = Tally {
                generation: self.batch.generation,
                seen: std::mem::take(&mut t.seen),
                segmented: t.segmented,
                ..Tally::default()
            };
        }
        t.seen.resize(self.batch.lanes.len(), u64::MAX);
        t
    }

    /// Whether `slot` has an operation in the current batch.
    fn in_batch(&mut self, slot: u32) -> bool {
        let generation = self.batch.generation;
        self.tally().seen[slot as usize] == generation
    }

    /// Notes that `slot` logs an operation now (see [`slot`](Deferred::slot)).
    fn touch(&mut self, slot: u32) {
        if self.in_batch(slot) {
            return;
        }
        let (generation, submitted) = (self.batch.generation, self.batch.lanes[slot as usize].submitted);
        let t = self.tally();
        t.seen[slot as usize] = generation;
        t.lanes += 1;
        t.stale |= submitted;
        let Some(segment) = self.behind[slot as usize].take() else { return };
        // Ordered after the stream that ran its earlier work (a segment's graph or merged
        // copy): a record of that stream's event (once per batch; any later point of that
        // stream is after the work), and this lane's wait for it.
        let Segment { on, done, record } = self.segments[segment as usize].clone();
        let at = match record.filter(|(g, _)| *g == generation) {
            Some((_, at)) => at,
            None => {
                self.touch(on);
                let at = self.batch.push(on, OpKind::Record { event: done.clone(), live: false, awaited: true });
                self.segments[segment as usize].record = Some((generation, at));
                at
            }
        };
        self.batch.push(slot, OpKind::Wait { event: done, record: Some(at) });
    }

    /// Whether the batch is due as a segment before `lane` logs its first operation in it
    /// (see [`SubmitConfig::segment_lanes`]): graphs are on, the batch holds at least as many
    /// lanes as the segment size and as earlier segments took, none of them had work
    /// submitted before, no fence recorded in it can be awaited any more, and `lane` has
    /// nothing in it yet. The growth stops at [`SEGMENT_CAP`] while lanes the scope made
    /// (`made`) have not logged yet, so that they do not all end up in the last submission,
    /// which starts on the GPU only after the closure ends.
    fn segment_due(&mut self, lane: &LaneInner, config: &SubmitConfig, made: usize) -> bool {
        if !self.segmenting || self.batch.is_empty() {
            return false;
        }
        let slot = self.slot_of(lane);
        if self.in_batch(slot) {
            return false;
        }
        let ahead = made > self.batch.lanes.len();
        let t = self.tally();
        let mut need = config.segment_lanes.max(t.segmented as usize);
        if ahead {
            need = need.min(config.segment_lanes.max(made / 4).max(SEGMENT_CAP));
        }
        !t.stale && t.live == 0 && t.lanes as usize >= need
    }

    /// Notes a fence record logged (`live`: its fence may be awaited) or one no longer live.
    fn count_live(&mut self, more: bool) {
        if !self.segmenting {
            return;
        }
        let t = self.tally();
        if more {
            t.live += 1;
        } else {
            debug_assert!(t.live > 0, "a live record left the batch uncounted");
            t.live = t.live.saturating_sub(1);
        }
    }
}

impl LaneShared {
    /// Lanes' shared state, starting with `idle` events (kept from earlier scopes); a deferred
    /// scope if `config.defer` (recordings and multi-GPU scopes submit as asked).
    pub(crate) fn new(
        gpu: Gpu,
        idle: IdleEvents,
        trace: Option<Recorder>,
        capture: Option<Capture>,
        config: SubmitConfig,
        spare: SpareLog,
    ) -> LaneShared {
        let started = trace.as_ref().map_or_else(Instant::now, Recorder::host_start);
        let deferred = (config.defer && capture.is_none()).then(|| {
            let mut d = spare.0.map_or_else(Deferred::default, |d| *d);
            // Not after a scope that worked in rounds: a lane logging again after its segment
            // makes the rest of its scope direct, where one graph would have run it all.
            d.segmenting = config.graphs && config.segment_lanes > 0 && !gpu.last_scope_in_rounds();
            (d.last_slot, d.after_rounds) = (u32::MAX, None);
            if d.segmenting && config.background_launches && !gpu.context().is_cpu() {
                // The launcher thread wakes while the first lanes log, if segments are likely.
                gpu.launcher().wake_for_scope();
            }
            Mutex::new(d)
        });
        LaneShared {
            gpu,
            idle: Mutex::new(idle),
            trace,
            capture,
            config,
            deferred,
            failed: AtomicBool::new(false),
            made: AtomicU32::new(0),
            started,
        }
    }

    /// Whether this scope collects its operations and submits them later.
    pub(crate) fn defers(&self) -> bool {
        self.deferred.is_some()
    }

    /// The deferred log (`None`: the scope submits as asked).
    pub(crate) fn log(&self) -> Option<MutexGuard<'_, Deferred>> {
        self.deferred.as_ref().map(lock)
    }

    /// Waits until the segment graphs this scope handed to the device's launcher thread are
    /// launched: before its lanes are joined (the scope's end submits its log first, which
    /// does the same; this covers an end that did not).
    pub(crate) fn finish_launches(&self) -> Result<()> {
        let finished = self.log().map_or(Ok(()), |d| submit::finish(&d.launches));
        if finished.is_err() {
            self.failed.store(true, Ordering::Release);
        }
        finished
    }

    /// Submits every operation logged and not yet submitted: at a host wait that needs one of
    /// them, before an operation that goes to the driver at once, and (`last`) at the scope's
    /// end — then copies may merge and a repeated shape may run as a graph. Nothing to do in a
    /// scope that submits as asked.
    pub(crate) fn flush(&self, last: bool, reason: &'static str) -> Result<()> {
        let Some(mut d) = self.log() else { return Ok(()) };
        self.submit_log(&mut d, last, false, reason)
    }

    /// Before `lane` logs an operation: the lanes logged so far go to the GPU as a segment
    /// while this one logs, if one is due ([`Deferred::segment_due`]).
    fn segment_if_due(&self, d: &mut Deferred, lane: &LaneInner) -> Result<()> {
        if d.segment_due(lane, &self.config, self.made.load(Ordering::Relaxed) as usize) {
            self.submit_log(d, false, true, SEGMENT)?;
        }
        Ok(())
    }

    /// Submits the log `d` — `last`: at the scope's end; `segment`: as a segment (see
    /// [`SubmitConfig::segment_lanes`]), merged and as a graph if its shape repeats, like the
    /// scope's end, while the program goes on logging.
    fn submit_log(&self, d: &mut Deferred, last: bool, segment: bool, reason: &'static str) -> Result<()> {
        if d.batch.is_empty() && !last {
            let finished = submit::finish(&d.launches);
            if finished.is_err() {
                self.failed.store(true, Ordering::Release);
            }
            return finished;
        }
        let lanes = if segment { d.tally().lanes } else { 0 };
        let take_event = || self.take_event(false);
        let f = Flush {
            gpu: &self.gpu,
            trace: self.trace.as_ref(),
            config: self.config,
            last,
            segment,
            reason,
            take_event: &take_event,
            launches: self.config.background_launches.then_some(&d.launches),
        };
        // SAFETY: every operation was logged by a typed call that borrowed its memory for
        // 'scope (views bound to the lane, pinned destinations moved into `Pending`s, sources
        // borrowed for 'scope), and the scope submits its log before it joins its lanes,
        // which it does before 'scope ends; the lanes' bookkeeping (their streams) lives until
        // then too.
        let (mut result, submitted) = unsafe { submit::submit(&mut d.batch, &f) };
        if let Some(s) = submitted {
            for (lane, by) in &s.covers {
                // SAFETY: the owners live until the scope's end (see `Deferred`).
                let (lane, by) = unsafe { (d.owners[*lane as usize].as_ref(), d.owners[*by as usize].as_ref()) };
                lane.note_awaited(lane.enqueued.load(Ordering::Acquire), Cover::Lane(by.id));
            }
            let empty = s.is_empty();
            self.recycle_events(s.events);
            if !empty {
                let submitted_after = s.at.saturating_duration_since(self.started);
                d.submissions.push(Submission { submitted_after, ..s.submission });
            }
            if let Some((g, _)) = s.graph {
                d.graphs.push(g);
            }
            if segment {
                // A lane whose work ran, or was copied, on another lane's stream (the
                // segment's graph, a merged copy) is not done when its own stream is: a later
                // operation of it waits for that stream first (`Deferred::touch`).
                if let Err(e) = self.order_after_covers(d, &s.covers) {
                    let mut errors: Vec<Error> = result.err().into_iter().collect();
                    errors.push(e);
                    result = Error::chain(errors).map_or(Ok(()), Err);
                }
            }
        }
        if segment {
            d.tally.segmented += lanes;
        }
        if last {
            self.gpu.note_rounds(d.after_rounds.is_some_and(|n| n > ROUNDS_DIRECT));
        }
        if last && d.segmenting && self.config.background_launches {
            // Whether the next scope will likely want the launcher thread awake.
            self.gpu.launcher().note_scope(d.tally.segmented > 0);
        }
        if result.is_err() {
            self.failed.store(true, Ordering::Release);
        }
        result
    }

    /// After a segment: each lane of `covers` (`(lane, by)`: its work is done once `by`'s
    /// is) is marked to wait, when it logs again, for an event recorded on `by`'s stream
    /// ([`Deferred::touch`]). Without an event for `by`, its stream is joined now instead
    /// (then the lanes it covers are idle) and the error is returned.
    fn order_after_covers(&self, d: &mut Deferred, covers: &[(u32, u32)]) -> Result<()> {
        let mut errors = Vec::new();
        let mut segment_of: Vec<(u32, Option<u32>)> = Vec::new();
        for &(lane, by) in covers {
            let at = match segment_of.iter().find(|(b, _)| *b == by) {
                Some(&(_, at)) => at,
                None => {
                    let at = match self.take_event(false) {
                        Ok(done) => {
                            d.segments.push(Segment { on: by, done, record: None });
                            Some(d.segments.len() as u32 - 1)
                        }
                        Err(e) => {
                            errors.push(e);
                            // The segment's graph may still be the launcher's to launch.
                            errors.extend(submit::finish(&d.launches).err());
                            let joined = d.batch.lanes[by as usize].stream().synchronize();
                            errors
                                .extend(joined.err().map(|error| Error::Stream { call: "cuStreamSynchronize", error }));
                            None
                        }
                    };
                    segment_of.push((by, at));
                    at
                }
            };
            d.batch.lanes[lane as usize].submitted = true;
            d.behind[lane as usize] = at;
        }
        Error::chain(errors).map_or(Ok(()), Err)
    }

    /// The log, emptied, for the next scope to reuse (`SpareLog`), and the idle events it
    /// still held; call once the scope's last submission is made (nothing is logged after
    /// it), the graphs taken and the submissions read. Its lanes may still run: it only
    /// empties host vectors, and the events go back only with the scope's lanes.
    pub(crate) fn spare_log(&self) -> (SpareLog, Vec<Arc<Event>>) {
        let Some(mut d) = self.log() else { return (SpareLog::default(), Vec::new()) };
        let d = &mut *d;
        // The scope's end submitted what was logged: nothing left names a lane or an event
        // that outlives the scope.
        let mut retired = d.batch.clear();
        d.batch.lanes.clear();
        d.owners.clear();
        d.submissions.clear();
        d.behind.clear();
        d.logged.clear();
        retired.extend(d.segments.drain(..).map(|s| s.done));
        d.tally = Tally::default();
        (SpareLog(Some(Box::new(std::mem::take(d)))), retired)
    }

    /// Whether a submission failed part way (then no cover is trusted: see `failed`).
    pub(crate) fn submission_failed(&self) -> bool {
        self.failed.load(Ordering::Acquire)
    }

    /// Before an operation that goes to the driver at once on `lane` (a replay, a peer copy,
    /// a wait for another scope's fence...): submits what is logged, so that everything the
    /// program asked for before it is ahead of it, and notes that the lane has submitted work.
    pub(crate) fn before_direct(&self, lane: &LaneInner, why: &'static str) -> Result<()> {
        self.flush(false, why)?;
        if let Some(mut d) = self.log() {
            let slot = d.slot_of(lane);
            d.batch.lanes[slot as usize].submitted = true;
            // Work of this lane that a segment ran on another lane's stream comes first: the
            // operation goes to the driver now, so its wait does too (the log is empty).
            if let Some(segment) = d.behind[slot as usize].take() {
                let Segment { on, done, .. } = d.segments[segment as usize].clone();
                done.record(d.batch.lanes[on as usize].stream())
                    .map_err(|error| Error::Event { call: "cuEventRecord", error })?;
                lane.stream.wait(&done).map_err(|error| Error::Event { call: "cuStreamWaitEvent", error })?;
            }
        }
        Ok(())
    }

    /// The submissions so far.
    pub(crate) fn submissions(&self) -> Vec<Submission> {
        self.log().map(|d| d.submissions.clone()).unwrap_or_default()
    }

    /// The graphs the scope's submissions launched, to put back into the device's cache
    /// (after the joins: no launch of them may be pending there).
    pub(crate) fn take_graphs(&self) -> Vec<CachedGraph> {
        self.log().map(|mut d| std::mem::take(&mut d.graphs)).unwrap_or_default()
    }

    /// A fence of this scope was dropped: its record (at `rec`, if still logged) can no longer
    /// be awaited, and its event is idle again — once the log no longer names it.
    pub(crate) fn retire_fence(&self, rec: Option<(u64, u32)>, event: Arc<Event>) {
        if let Some(mut d) = self.log() {
            if let Some((generation, at)) = rec {
                if generation == d.batch.generation {
                    if let Some(OpKind::Record { live, .. }) = d.batch.ops.get_mut(at as usize).map(|o| &mut o.kind) {
                        if std::mem::replace(live, false) {
                            d.count_live(false);
                        }
                    }
                }
            }
            if Arc::strong_count(&event) > 1 {
                d.batch.retired.push(event);
                return;
            }
        }
        self.recycle_event(event);
    }

    /// Whether a fence's record at `rec` is logged and not yet submitted.
    pub(crate) fn is_pending(&self, rec: Option<(u64, u32)>) -> bool {
        match (rec, self.log()) {
            (Some((generation, _)), Some(d)) => generation == d.batch.generation,
            _ => false,
        }
    }

    /// Logs a record of `event` on `lane`; returns where it is, for the fence (`None`: the
    /// scope submits as asked). The log may go as a segment first, as before a launch
    /// ([`Stream::submit`]): a lane's first operation may be a record.
    pub(crate) fn log_record(&self, lane: &LaneInner, event: Arc<Event>) -> Result<Option<(u64, u32)>> {
        let Some(mut d) = self.log() else { return Ok(None) };
        self.segment_if_due(&mut d, lane)?;
        let slot = d.slot(lane);
        let at = d.batch.push(slot, OpKind::Record { event, live: true, awaited: false });
        d.count_live(true);
        Ok(Some((d.batch.generation, at)))
    }

    /// Logs a wait of `lane` for `event`, recorded at `rec` if that record is in the batch
    /// (then it is marked awaited: it will be submitted). The log may go as a segment first,
    /// as before a launch ([`Stream::submit`]).
    pub(crate) fn log_wait(&self, lane: &LaneInner, event: Arc<Event>, rec: Option<(u64, u32)>) -> Result<()> {
        let Some(mut d) = self.log() else { return Ok(()) };
        self.segment_if_due(&mut d, lane)?;
        let record = rec.filter(|(generation, _)| *generation == d.batch.generation).map(|(_, at)| at);
        if let Some(at) = record {
            if let Some(OpKind::Record { awaited, .. }) = d.batch.ops.get_mut(at as usize).map(|o| &mut o.kind) {
                *awaited = true;
            }
        }
        let slot = d.slot(lane);
        d.batch.push(slot, OpKind::Wait { event, record });
        Ok(())
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

    /// The idle events, taken out for the next scope (given to it only once this one has
    /// joined).
    pub(crate) fn take_idle_events(&self) -> IdleEvents {
        std::mem::take(&mut *self.idle.lock().unwrap_or_else(|p| p.into_inner()))
    }

    /// The trace recorder, if the scope is traced.
    pub(crate) fn recorder(&self) -> Option<&Recorder> {
        self.trace.as_ref()
    }

    /// An event for a fence or (`timing`) a timestamp: an idle one of this scope, of the
    /// device's pool, or a new one.
    pub(crate) fn take_event(&self, timing: bool) -> Result<Arc<Event>> {
        if let Some(e) = self.idle.lock().unwrap_or_else(|p| p.into_inner())[timing as usize].pop() {
            return Ok(e);
        }
        self.gpu.take_event(timing).map(Arc::new)
    }

    /// Gives an event back once no one can wait on it through sluice any more. Waits
    /// already enqueued keep waiting on the record they saw, so re-recording is safe.
    pub(crate) fn recycle_event(&self, e: Arc<Event>) {
        self.idle.lock().unwrap_or_else(|p| p.into_inner())[e.timing() as usize].push(e);
    }

    /// [`recycle_event`](LaneShared::recycle_event) for many (one lock).
    fn recycle_events(&self, events: Vec<Arc<Event>>) {
        let mut idle = self.idle.lock().unwrap_or_else(|p| p.into_inner());
        for e in events {
            idle[e.timing() as usize].push(e);
        }
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
    kernels: Mutex<Vec<(&'static str, Option<SourceSpan>)>>,
    /// The name of the kernel this lane launched last, packed ([`name_key`]; 0: none, or a
    /// name that does not pack): that name is in `kernels`, so a launch of it again takes
    /// no lock. Set only with `kernels` locked, after the name is in it; cleared with it.
    last_kernel: AtomicU64,
    /// Stream-ordered operations enqueued on this lane so far (every launch, copy, fill,
    /// wait and replay goes through `Stream::traced`, which counts it).
    pub(crate) enqueued: AtomicU64,
    /// The latest of this lane's fences that was awaited elsewhere: how many operations
    /// came before it, and who awaited it. While no operation follows it, the lane is done
    /// once its awaiter is (see [`LaneInner::covered_by`]).
    covered: Mutex<Option<(u64, Cover)>>,
    /// This lane's index in its scope's deferred batch (`u32::MAX`: none yet).
    slot: AtomicU32,
}

/// A kernel name's identity in one word: its address (below 2^48, as user-space addresses
/// are on the 64-bit targets CUDA runs on) and its length (below 2^16), so that two keys are
/// equal exactly when the names are the same `&'static str` (`std::ptr::eq`). 0 when the name
/// does not pack (then every launch of it takes the lock, as before).
fn name_key(name: &'static str) -> u64 {
    let (addr, len) = (name.as_ptr() as usize as u64, name.len() as u64);
    if addr == 0 || addr >> 48 != 0 || len >> 16 != 0 {
        return 0;
    }
    (addr << 16) | len
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
            last_kernel: AtomicU64::new(0),
            enqueued: AtomicU64::new(0),
            covered: Mutex::new(None),
            slot: AtomicU32::new(u32::MAX),
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

    /// Notes a launch of `f` on this lane (once per kernel per scope). A lane usually
    /// launches the same kernel again: then this is two atomic operations, no lock.
    pub(crate) fn note_launch(&self, f: &LaunchTarget) {
        self.launches.fetch_add(1, Ordering::Relaxed);
        let key = name_key(f.name);
        // Acquire: pairs with the Release below; a key seen here was stored after its name
        // went into `kernels`.
        if key != 0 && self.last_kernel.load(Ordering::Acquire) == key {
            return;
        }
        self.note_kernel(f, key);
    }

    /// `note_launch` for a kernel other than the last one: into `kernels` (if new), and it
    /// becomes the last one.
    #[cold]
    fn note_kernel(&self, f: &LaunchTarget, key: u64) {
        let mut kernels = self.kernels.lock().unwrap_or_else(|p| p.into_inner());
        // The last kernel first: a lane usually launches the same kernel again.
        if !kernels.iter().rev().any(|(name, _)| std::ptr::eq(*name, f.name) || *name == f.name) {
            kernels.push((f.name, f.source));
        }
        // Stored with the lock held, so that a clear (`take_kernels`, `reused`) cannot come
        // between the push and the store.
        self.last_kernel.store(key, Ordering::Release);
    }

    /// The kernels launched on this lane in this scope (each once), taken for fault
    /// attribution once the lane has stopped.
    pub(crate) fn take_kernels(&self) -> Vec<(&'static str, Option<SourceSpan>)> {
        let mut kernels = self.kernels.lock().unwrap_or_else(|p| p.into_inner());
        self.last_kernel.store(0, Ordering::Release);
        std::mem::take(&mut *kernels)
    }

    /// This (joined, idle) lane again, as lane `id` of a new scope, its counters at zero.
    pub(crate) fn reused(mut self: Box<Self>, id: LaneId) -> Box<Self> {
        self.id = id;
        for c in [&self.events_recorded, &self.waits_enqueued, &self.launches, &self.copies] {
            c.store(0, Ordering::Relaxed);
        }
        self.kernels.get_mut().unwrap_or_else(|p| p.into_inner()).clear();
        *self.last_kernel.get_mut() = 0;
        self.enqueued.store(0, Ordering::Relaxed);
        *self.covered.get_mut().unwrap_or_else(|p| p.into_inner()) = None;
        self.slot.store(u32::MAX, Ordering::Relaxed);
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

/// What the program asked this lane to enqueue so far ([rule 7](crate#safety-model): no hidden work). Every event
/// and every wait counted here was asked for by the program: a fence, a pending copy, a
/// timestamp, an await of another lane's fence. Awaiting a fence on the lane that recorded
/// it enqueues nothing and counts nothing. They are counted as they are asked for; a deferred
/// scope submits them later, and may leave out a fence's record no one can await (what it
/// submitted: [`Submission`]).
///
/// ```no_run
/// # use sluice_host as sluice;
/// # fn demo(gpu: &sluice::Gpu) -> sluice::Result<()> {
/// sluice::scope(gpu, |s| {
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
/// # use sluice_host as sluice;
/// # fn demo(gpu: &sluice::Gpu) -> sluice::Result<()> {
/// let lane = sluice::scope(gpu, |s| s.lane())?; // error: lifetime may not live long enough
/// # let _ = lane; Ok(()) }
/// ```
///
/// Create lanes inside the scope, for the work of that scope.
///
/// ```no_run
/// # use sluice_host as sluice;
/// # fn demo(gpu: &sluice::Gpu) -> sluice::Result<()> {
/// sluice::scope(gpu, |s| {
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
    /// stream would then accept borrows that end before the scope joins ([rule 5](crate#safety-model)).
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
    /// # use sluice_host as sluice;
    /// # fn demo(gpu: &sluice::Gpu) -> sluice::Result<()> {
    /// sluice::scope(gpu, |s| {
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
    /// # use sluice_host as sluice;
    /// # fn demo(gpu: &sluice::Gpu) -> sluice::Result<()> {
    /// sluice::scope(gpu, |s| {
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
    /// # use sluice_host as sluice;
    /// # fn demo(gpu: &sluice::Gpu) -> sluice::Result<()> {
    /// sluice::scope(gpu, |s| {
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
    /// # use sluice_host as sluice;
    /// # fn demo(gpu: &sluice::Gpu) -> sluice::Result<()> {
    /// sluice::scope(gpu, |s| {
    ///     let lanes = s.lanes(2)?;
    ///     assert_eq!(lanes[1].id(), sluice::LaneId::Lane(1));
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
/// # use sluice_host as sluice;
/// # use sluice::{Kernel, LaunchConfig, Mut, Ref};
/// # const SAXPY: Kernel<(Mut<f32>, Ref<f32>, f32)> = unsafe { Kernel::new("", "saxpy") };
/// // SAXPY: y = a·x + y, a `#[kernel]` of yours, or `sluice::kernels::saxpy` (feature "kernels")
/// # fn demo(gpu: &sluice::Gpu, x: &[f32]) -> sluice::Result<()> {
/// sluice::scope(gpu, |s| {
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

    /// Whether this lane's operations are logged for later submission (a lane of a
    /// deferred scope; the upload lane submits as asked, see [`Stream::submit`]).
    pub(crate) fn defers(&self) -> bool {
        self.lane.shared.defers() && self.lane.inner.id != LaneId::Upload
    }

    /// Submits one launch, copy or fill of this lane: logged in a deferred scope (submitted
    /// at the next host wait that needs it, or at the scope's end), handed to the driver now
    /// otherwise (traced, if the scope is). `merge`: a copy to the host that may merge with
    /// its neighbours. The scope's upload lane submits as asked: it awaits nothing, so its
    /// uploads may start at once.
    ///
    /// # Safety
    /// - As [`submit::run`]: the memory the operation names stays valid, and unused by other
    ///   lanes in a conflicting way, until the lane has passed it (the typed callers borrow it
    ///   for `'scope`, and the scope submits its log before it joins); a launch's arguments
    ///   are lowered for its function.
    pub(crate) unsafe fn submit(&self, work: Work<'_>, merge: Option<MergeSide>) -> Result<()> {
        // SAFETY: the caller's duties.
        unsafe { self.submit_then_record(work, merge, None) }.map(drop)
    }

    /// [`submit`](Stream::submit) of one launch of `f`, where the lane neither logs nor traces
    /// (a direct, untraced scope: the path the launch overhead is measured on), handed to the
    /// driver here without the [`Work`] the other paths pass along. `None`: the lane logs or
    /// traces; the caller submits the launch.
    ///
    /// # Safety
    /// As [`submit`](Stream::submit), for this launch of `f` with `ptrs` and `sizes`.
    #[inline]
    pub(crate) unsafe fn launch_now(
        &self,
        f: &LaunchTarget,
        (grid, block, shared_mem_bytes): ((u32, u32, u32), (u32, u32, u32), u32),
        ptrs: &mut [*mut std::ffi::c_void],
        sizes: &[usize],
    ) -> Option<Result<()>> {
        if self.defers() || self.lane.shared.trace.is_some() {
            return None;
        }
        let _count = Count(&self.lane.inner.enqueued);
        // SAFETY: the caller's duties are `launch`'s.
        let launched = unsafe { self.handle().launch(f.func, grid, block, shared_mem_bytes, ptrs, sizes) };
        Some(launched.map_err(|error| Error::Launch { kernel: f.name, error }))
    }

    /// [`submit`](Stream::submit), then (with `event`) a record of `event` after it — both
    /// logged together in a deferred scope (one lock), or both handed to the driver now.
    /// Returns where the record is in the log (`None`: submitted already).
    ///
    /// # Safety
    /// As [`submit`](Stream::submit).
    pub(crate) unsafe fn submit_then_record(
        &self,
        mut work: Work<'_>,
        merge: Option<MergeSide>,
        event: Option<&Arc<Event>>,
    ) -> Result<Option<(u64, u32)>> {
        let _count = Count(&self.lane.inner.enqueued);
        if self.defers() {
            if let Some(mut d) = self.lane.shared.log() {
                self.lane.shared.segment_if_due(&mut d, self.lane.inner)?;
                let slot = d.slot(self.lane.inner);
                let kind = match work {
                    Work::Launch { func, name, grid, block, shared_mem_bytes, ptrs, sizes } => {
                        // SAFETY: `ptrs[i]` points to `sizes[i]` bytes (the caller's duty).
                        let (words, sizes) = unsafe { d.batch.store_raw(ptrs, sizes) };
                        OpKind::Launch { func, name, grid, block, shared_mem_bytes, words, sizes }
                    }
                    Work::Copy { dir, device, host, span, elem } => {
                        OpKind::Copy { dir, device, host, span, elem, merge }
                    }
                    Work::Zero { dst, pitch, width_bytes, height } => OpKind::Zero { dst, pitch, width_bytes, height },
                    Work::Record(_) | Work::Wait(_) => unreachable!("fences log their own records and waits"),
                };
                d.batch.push(slot, kind);
                let rec = event.map(|e| {
                    let at = d.batch.push(slot, OpKind::Record { event: e.clone(), live: true, awaited: false });
                    (d.batch.generation, at)
                });
                if rec.is_some() {
                    d.count_live(true);
                }
                let full = d.batch.ops.len() >= self.lane.shared.config.max_deferred;
                drop(d);
                if full {
                    // A long scope: what it holds goes to the GPU now, which would idle otherwise.
                    self.lane.shared.flush(false, "the log reached SubmitConfig::max_deferred")?;
                }
                return Ok(rec);
            }
        }
        let (gpu, trace, stream, id) = (self.gpu(), self.lane.shared.trace.as_ref(), self.handle(), self.lane.inner.id);
        // SAFETY: the caller's duties.
        unsafe { submit::run_traced(gpu, trace, stream, id, &mut work, 1) }?;
        if let Some(e) = event {
            e.record(stream).map_err(|error| Error::Event { call: "cuEventRecord", error })?;
        }
        Ok(None)
    }

    /// Logs a wait of this lane for `event` (recorded at `rec` in this scope's log, if it
    /// still is there), counted as an operation of the lane.
    pub(crate) fn log_wait(&self, event: Arc<Event>, rec: Option<(u64, u32)>) -> Result<()> {
        let _count = Count(&self.lane.inner.enqueued);
        self.lane.shared.log_wait(self.lane.inner, event, rec)
    }

    /// Runs `enqueue` (one operation handed to the driver now, on this lane); in a traced
    /// scope, brackets it with timing events and host instants, named by `name`. One branch
    /// otherwise. In a deferred scope, what is logged is submitted first, so that everything
    /// the program asked for before is ahead of it.
    pub(crate) fn traced<R>(
        &self,
        kind: SpanKind,
        name: impl FnOnce() -> String,
        enqueue: impl FnOnce() -> Result<R>,
    ) -> Result<R> {
        let _count = Count(&self.lane.inner.enqueued);
        self.lane.shared.before_direct(self.lane.inner, "an operation that goes to the driver at once")?;
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
    /// # use sluice_host as sluice;
    /// # fn demo(gpu: &sluice::Gpu) -> sluice::Result<()> {
    /// sluice::scope(gpu, |s| {
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
    /// # use sluice_host as sluice;
    /// # fn demo(gpu: &sluice::Gpu) -> sluice::Result<()> {
    /// sluice::scope(gpu, |s| {
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
    /// # use sluice_host as sluice;
    /// # fn demo(gpu: &sluice::Gpu) -> sluice::Result<()> {
    /// sluice::scope(gpu, |s| {
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
    /// # use sluice_host as sluice;
    /// # fn demo(gpu: &sluice::Gpu) -> sluice::Result<()> {
    /// sluice::scope(gpu, |s| {
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
    /// # use sluice_host as sluice;
    /// # fn demo(gpu: &sluice::Gpu) -> sluice::Result<()> {
    /// sluice::scope(gpu, |s| {
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
    /// # use sluice_host as sluice;
    /// # fn demo(gpu: &sluice::Gpu, m: &sluice::DeviceMatrix<f32>) -> sluice::Result<()> {
    /// sluice::scope(gpu, |s| {
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

/// Counts an operation of a lane once it is enqueued (or logged), failed or not (a fence
/// reads the count *before* it records its event, so an operation that another thread
/// enqueues after the event can never be counted as before it: the count only ever makes a
/// join more careful).
struct Count<'a>(&'a AtomicU64);

impl Drop for Count<'_> {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::AcqRel);
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
    fn each_kernel_is_noted_once_whatever_order_it_comes_in() {
        // SAFETY: never called.
        unsafe fn never(
            _: *const *mut std::ffi::c_void,
            _: &crate::check::CpuLaunch,
        ) -> std::result::Result<(), crate::check::CpuLaunchError> {
            unreachable!()
        }
        let target = |name: &'static str| LaunchTarget {
            name,
            func: crate::handle::FunctionHandle::Cpu(never, name),
            max_threads_per_block: 1024,
            registers: 0,
            dynamic_shared_limit: 0,
            source: None,
            exact_threads: 0,
            one_d: false,
            block: (0, 0, 0),
            declared_threads: 0,
        };
        let stream = StreamHandle::create(&crate::handle::Context::cpu()).unwrap();
        let lane = LaneInner::new(stream, LaneId::Lane(0));
        // The same text at another address is the same kernel.
        let copy: &'static str = Box::leak(String::from("a").into_boxed_str());
        for name in ["a", "a", "b", "a", copy, "b", "b"] {
            lane.note_launch(&target(name));
        }
        assert_eq!(lane.stats().launches, 7);
        assert_eq!(lane.take_kernels().iter().map(|(n, _)| *n).collect::<Vec<_>>(), ["a", "b"]);
        // Taken: the last kernel is noted again.
        lane.note_launch(&target("b"));
        assert_eq!(lane.take_kernels().iter().map(|(n, _)| *n).collect::<Vec<_>>(), ["b"]);
        assert_ne!(name_key("a"), 0);
        assert_ne!(name_key("a"), name_key(copy));
        assert_ne!(name_key("ab"), name_key(&"ab"[..1]), "a prefix at the same address is another name");
    }

    #[test]
    fn lanes_and_streams_are_send_and_sync() {
        fn assert<T: Send + Sync>() {}
        assert::<Lane<'static>>();
        assert::<Stream<'static, 'static>>();
    }
}
