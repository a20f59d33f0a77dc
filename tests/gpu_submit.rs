//! Automatic submission (issue 23): a scope's operations are collected and submitted where
//! the host must observe them; adjacent small column copies merge; a scope that repeats an
//! earlier one's shape replays a cached graph. Every test checks that the program means the
//! same: results bit-identical to direct submission, a changed program never replays a stale
//! graph, a column the host awaits on its own is never delayed by a merge, and the counters
//! and the trace say what ran.
//!
//! Runs on the CPU backend always (`on_cpu::*`) and on CUDA device 0 with `--ignored`.

mod common;

use sluice::{
    kernels, scope, traced_scope, DeviceMatrix, Gpu, LaneSet, LaunchConfig, Particle, PinnedMatrix, Result, Scope,
    SpanKind, SubmitConfig, SubmitPath, Trace,
};
use std::time::{Duration, Instant};

const EPS2: f32 = 1e-3;
const TOL: f64 = 1e-4;

/// The README's program, run once: persistent inputs (`gpu.upload`, awaited as the README
/// awaits `s.upload`'s fences: no wait), the output matrix allocated in the scope, one lane
/// per column, each column's copy on its own lane. Traced, so that the test sees how it ran.
fn natural(
    gpu: &Gpu,
    sources: &DeviceMatrix<Particle>,
    targets: &DeviceMatrix<Particle>,
    host: &mut PinnedMatrix<f32>,
    eps2: f32,
) -> Result<Trace> {
    natural_with(gpu, sources, targets, host, eps2, Potential::Plain)
}

/// Which potential kernel [`natural_with`] launches.
#[derive(Clone, Copy)]
enum Potential {
    /// `potential`, blocks of 256.
    Plain,
    /// `potential_tiled` (its threads wait at barriers), blocks of this many threads.
    Tiled(u32),
}

/// [`natural`] with the kernel chosen.
fn natural_with(
    gpu: &Gpu,
    sources: &DeviceMatrix<Particle>,
    targets: &DeviceMatrix<Particle>,
    host: &mut PinnedMatrix<f32>,
    eps2: f32,
    kernel: Potential,
) -> Result<Trace> {
    let (rows, n) = (host.rows(), host.cols());
    let ((), trace) = traced_scope(gpu, |s| {
        let out = s.alloc_matrix::<f32>(rows, n)?;
        for (j, ((lane, col), dst)) in
            s.lanes(n)?.into_iter().zip(out.columns_mut()).zip(host.columns_mut()).enumerate()
        {
            lane.enter(|st| {
                let src = st.await_fence(sources)?; // persistent: nothing to wait for
                let tgt = st.await_fence(targets)?.column(j).expect("column");
                let mut col = st.bind(col);
                match kernel {
                    Potential::Plain => {
                        let cfg = LaunchConfig::for_elements(rows, 256);
                        st.launch(&kernels::potential, cfg, (&mut col, &tgt, &src, eps2))?
                    }
                    Potential::Tiled(block) => {
                        let cfg = LaunchConfig::for_elements(rows, block);
                        st.launch(&kernels::potential_tiled, cfg, (&mut col, &tgt, &src, eps2))?
                    }
                }
                st.copy_to_host(&col, dst)
            })?;
        }
        Ok(())
    })?;
    Ok(trace)
}

/// The path of a traced scope's last submission (its end).
fn last_path(trace: &Trace) -> SubmitPath {
    trace.submissions.last().expect("the scope's end submitted").path
}

fn poison(h: &mut [f32]) {
    h.fill(f32::NAN);
}

/// The README's program's inputs (fresh random, uploaded), its pinned output, and its
/// result submitted directly (checked against the f64 reference), bit for bit.
struct NaturalCase {
    sources: DeviceMatrix<Particle>,
    targets: DeviceMatrix<Particle>,
    host: PinnedMatrix<f32>,
    direct: Vec<u32>,
}

fn natural_case(gpu: &Gpu, rows: usize, n: usize) -> NaturalCase {
    let mut rng = common::rng();
    let src_host = common::particles(&mut rng, 64);
    let tgt_host = common::particles(&mut rng, rows * n);
    let sources = gpu.upload(&src_host).expect("upload");
    let targets = gpu.upload_matrix(&tgt_host, rows, n).expect("upload");
    let mut host = gpu.pinned_matrix::<f32>(rows, n).expect("pinned");
    gpu.set_submit_config(SubmitConfig::direct());
    poison(&mut host);
    let trace = natural(gpu, &sources, &targets, &mut host, EPS2).expect("direct");
    assert!(trace.submissions.is_empty(), "direct submission logs nothing: {:?}", trace.submissions);
    let direct: Vec<u32> = host.iter().map(|v| v.to_bits()).collect();
    common::check_potential(&host, rows, n, &tgt_host, &src_host, EPS2, TOL);
    NaturalCase { sources, targets, host, direct }
}

impl NaturalCase {
    /// Runs the README's program `rounds` times under the device's submit config, the output
    /// poisoned before each and compared bit for bit with direct submission after; `check`
    /// reads each round's trace and returns the path the round ran by.
    fn rounds(
        &mut self,
        gpu: &Gpu,
        rounds: usize,
        mut check: impl FnMut(usize, &Trace) -> SubmitPath,
    ) -> Vec<SubmitPath> {
        (0..rounds)
            .map(|round| {
                poison(&mut self.host);
                let trace = natural(gpu, &self.sources, &self.targets, &mut self.host, EPS2).expect("natural");
                let got: Vec<u32> = self.host.iter().map(|v| v.to_bits()).collect();
                assert!(got == self.direct, "round {round}: results differ from direct submission");
                check(round, &trace)
            })
            .collect()
    }
}

/// Direct the first time a shape is seen, captured the second, replayed after.
fn assert_direct_captured_replayed(paths: &[SubmitPath]) {
    assert_eq!(paths[0], SubmitPath::Direct, "{paths:?}: the first time a shape is seen it runs directly");
    assert_eq!(paths[1], SubmitPath::GraphCaptured, "{paths:?}");
    assert!(paths[2..].iter().all(|p| *p == SubmitPath::GraphReplayed), "{paths:?}");
}

fn the_natural_program_replays_a_graph_with_results_bit_identical_to_direct_submission(gpu: Gpu) {
    let n = 16;
    let mut case = natural_case(&gpu, 1024, n);

    // One submission at the scope's end (16 lanes would make segments of 4, 4 and 8): the counts
    // below are the whole scope's.
    gpu.set_submit_config(unsegmented());
    let before = gpu.submit_stats();
    let paths = case.rounds(&gpu, 5, |_, trace| {
        let end = trace.submissions.last().expect("end");
        // Rule 7 as re-read: every copy's fence was dropped unawaited, so none was recorded;
        // the only events and waits are the fan-ins of merged copies, one per copy absorbed.
        assert_eq!((end.operations, end.fences_elided, end.merged_copies), (3 * n, n, n), "{end:?}");
        assert!(end.events_recorded == end.waits && end.events_recorded < end.merged_copies, "{end:?}");
        if end.path == SubmitPath::GraphReplayed {
            let graphs: Vec<_> = trace.spans.iter().filter(|s| s.kind == SpanKind::Graph).collect();
            assert_eq!(graphs.len(), 1, "the trace shows the one graph launch: {:?}", trace.spans);
            assert!(trace.spans.iter().all(|s| s.kind == SpanKind::Graph), "nothing else was enqueued");
        }
        end.path
    });
    assert_direct_captured_replayed(&paths);
    let after = gpu.submit_stats();
    assert_eq!(after.graphs_captured - before.graphs_captured, 1);
    assert_eq!(after.graphs_replayed - before.graphs_replayed, 3);
    // On a GPU the scope's output comes back at the same address each round (under a new
    // allocation id), so every round after the first reuses the first one's plan; the CPU
    // backend allocates afresh (poisoned memory), so there the addresses differ.
    if gpu.backend() == sluice::Backend::Cuda {
        assert_eq!(after.plans_reused - before.plans_reused, 4, "{after:?}");
    }
}

fn a_changed_program_never_replays_a_stale_graph(gpu: Gpu) {
    let mut rng = common::rng();
    let (rows, n) = (512, 8);
    let src_host = common::particles(&mut rng, 32);
    let tgt_host = common::particles(&mut rng, 2 * rows * n);
    let sources = gpu.upload(&src_host).expect("upload");
    let targets = gpu.upload_matrix(&tgt_host[..rows * n], rows, n).expect("upload");
    let mut host = gpu.pinned_matrix::<f32>(rows, n).expect("pinned");
    // One graph for the whole scope (8 lanes would make two segments of 4): the counts below
    // are its nodes.
    gpu.set_submit_config(unsegmented());
    for _ in 0..3 {
        natural(&gpu, &sources, &targets, &mut host, EPS2).expect("warm");
    }
    // A scalar changes: the cached graph replays with the new value written into its nodes.
    poison(&mut host);
    let trace = natural(&gpu, &sources, &targets, &mut host, 0.5).expect("new eps2");
    let end = trace.submissions.last().expect("end");
    assert_eq!(end.path, SubmitPath::GraphReplayed);
    // Every launch node had its scalar changed (and the copy nodes their addresses, where the
    // scope's allocation moved).
    assert!(end.nodes_updated >= n, "{end:?}");
    common::check_potential(&host, rows, n, &tgt_host, &src_host, 0.5, TOL);

    // Another input buffer (other pointers): replayed with the pointers updated.
    let targets2 = gpu.upload_matrix(&tgt_host[rows * n..], rows, n).expect("upload");
    poison(&mut host);
    let trace = natural(&gpu, &sources, &targets2, &mut host, EPS2).expect("other targets");
    assert_eq!(last_path(&trace), SubmitPath::GraphReplayed);
    common::check_potential(&host, rows, n, &tgt_host[rows * n..], &src_host, EPS2, TOL);

    // Another shape (fewer rows): not the cached graph.
    let mut small = gpu.pinned_matrix::<f32>(rows / 2, n).expect("pinned");
    let targets3 = gpu.upload_matrix(&tgt_host[..rows / 2 * n], rows / 2, n).expect("upload");
    let trace = natural(&gpu, &sources, &targets3, &mut small, EPS2).expect("other shape");
    assert_eq!(last_path(&trace), SubmitPath::Direct, "a new shape runs directly the first time");
    common::check_potential(&small, rows / 2, n, &tgt_host[..rows / 2 * n], &src_host, EPS2, TOL);

    // Another lane count.
    let mut fewer = gpu.pinned_matrix::<f32>(rows, n - 1).expect("pinned");
    let targets4 = gpu.upload_matrix(&tgt_host[..rows * (n - 1)], rows, n - 1).expect("upload");
    let trace = natural(&gpu, &sources, &targets4, &mut fewer, EPS2).expect("fewer lanes");
    assert_eq!(last_path(&trace), SubmitPath::Direct);
    common::check_potential(&fewer, rows, n - 1, &tgt_host[..rows * (n - 1)], &src_host, EPS2, TOL);

    // Another kernel with the same arguments' shape: not the cached graph.
    poison(&mut host);
    let ((), trace) = traced_scope(&gpu, |s| {
        let out = s.alloc_matrix::<f32>(rows, n)?;
        for (j, ((lane, col), dst)) in
            s.lanes(n)?.into_iter().zip(out.columns_mut()).zip(host.columns_mut()).enumerate()
        {
            lane.enter(|st| {
                let (src, tgt) = (st.await_fence(&sources)?, st.await_fence(&targets)?.column(j).expect("column"));
                let mut col = st.bind(col);
                st.launch(
                    &kernels::potential_tiled,
                    LaunchConfig::for_elements(rows, 256),
                    (&mut col, &tgt, &src, EPS2),
                )?;
                st.copy_to_host(&col, dst)
            })?;
        }
        Ok(())
    })
    .expect("other kernel");
    assert_eq!(last_path(&trace), SubmitPath::Direct);
    common::check_potential(&host, rows, n, &tgt_host, &src_host, EPS2, TOL);

    // An extra host wait: the awaited copy is submitted at the wait, the rest at the end, and
    // the column is right when the host reads it.
    poison(&mut host);
    let ((), trace) = traced_scope(&gpu, |s| {
        let out = s.alloc_matrix::<f32>(rows, n)?;
        let mut first = None;
        for (j, ((lane, col), dst)) in
            s.lanes(n)?.into_iter().zip(out.columns_mut()).zip(host.columns_mut()).enumerate()
        {
            let pending = lane.enter(|st| {
                let (src, tgt) = (st.await_fence(&sources)?, st.await_fence(&targets)?.column(j).expect("column"));
                let mut col = st.bind(col);
                st.launch(&kernels::potential, LaunchConfig::for_elements(rows, 256), (&mut col, &tgt, &src, EPS2))?;
                st.copy_to_host(&col, dst)
            })?;
            if j == 0 {
                first = Some(pending);
            }
        }
        let column0 = first.expect("lane 0").wait()?;
        common::check_potential(&column0, rows, 1, &tgt_host[..rows], &src_host, EPS2, TOL);
        Ok(())
    })
    .expect("extra wait");
    // Everything was logged before the wait: the wait submitted it all, directly, its copy
    // unmerged and its fence recorded; the scope's end had nothing left.
    assert_eq!(trace.submissions.len(), 1, "{:?}", trace.submissions);
    assert_eq!((trace.submissions[0].reason, trace.submissions[0].events_recorded), ("a host wait", 1));
    assert!(trace.submissions.iter().all(|s| s.path == SubmitPath::Direct), "{:?}", trace.submissions);
    common::check_potential(&host, rows, n, &tgt_host, &src_host, EPS2, TOL);

    // And the original program still replays its own graph, with its own results.
    poison(&mut host);
    let trace = natural(&gpu, &sources, &targets, &mut host, EPS2).expect("again");
    assert_eq!(last_path(&trace), SubmitPath::GraphReplayed);
    common::check_potential(&host, rows, n, &tgt_host, &src_host, EPS2, TOL);
}

/// Without segments (`SubmitConfig::segment_lanes` 0; 4 is the default): a scope's whole log is
/// submitted at its end, one plan, one graph — what the tests of that structure count.
fn unsegmented() -> SubmitConfig {
    SubmitConfig { segment_lanes: 0, ..SubmitConfig::default() }
}

fn merged_copies_deliver_every_column_and_never_delay_one_the_host_awaits(gpu: Gpu) {
    // 64 columns of 4 KiB: small enough to merge, all at the scope's end.
    gpu.set_submit_config(unsegmented());
    let (rows, n) = (1024, 64);
    let mut host = gpu.pinned_matrix::<f32>(rows, n).expect("pinned");
    let fill = |gpu: &Gpu, host: &mut PinnedMatrix<f32>, wait_for: Option<usize>| {
        traced_scope(gpu, |s| {
            let out = s.alloc_matrix::<f32>(rows, n)?;
            let mut awaited = None;
            for (j, ((lane, col), dst)) in
                s.lanes(n)?.into_iter().zip(out.columns_mut()).zip(host.columns_mut()).enumerate()
            {
                let pending = lane.enter(|st| {
                    let mut col = st.bind(col);
                    st.launch(&kernels::fill_column, LaunchConfig::for_elements(rows, 256), (&mut col, j as f32))?;
                    st.copy_to_host(&col, dst)
                })?;
                if Some(j) == wait_for {
                    awaited = Some(pending);
                }
            }
            if let Some(p) = awaited {
                let j = wait_for.expect("awaited");
                let column = p.wait()?;
                assert!(column.iter().all(|v| *v == j as f32), "column {j} is complete when its wait returns");
            }
            Ok(())
        })
    };
    for round in 0..3 {
        poison(&mut host);
        let ((), trace) = fill(&gpu, &mut host, None).expect("fill");
        let end = trace.submissions.last().expect("end");
        assert_eq!(end.merged_copies, n, "round {round}: every column merged: {end:?}");
        assert!(end.copies < n, "{end:?}");
        for j in 0..n {
            assert!(host.column(j).expect("column").iter().all(|v| *v == j as f32), "round {round}, column {j}");
        }
        if end.path == SubmitPath::Direct {
            let merged = trace.spans.iter().filter(|s| s.name.contains("merged from")).count();
            assert!(merged >= 1, "the trace shows the merged copies: {:?}", trace.spans);
        }
    }
    // A column the host awaits inside the scope is submitted at its wait, on its own.
    poison(&mut host);
    let ((), trace) = fill(&gpu, &mut host, Some(5)).expect("fill with a wait");
    let at_wait = &trace.submissions[0];
    assert_eq!(at_wait.merged_copies, 0, "nothing merges at a host wait: {at_wait:?}");
    for j in 0..n {
        assert!(host.column(j).expect("column").iter().all(|v| *v == j as f32), "column {j}");
    }
    // Merging off: one copy per column.
    gpu.set_submit_config(SubmitConfig { merge_copy_bytes: 0, graphs: false, ..SubmitConfig::default() });
    poison(&mut host);
    let ((), trace) = fill(&gpu, &mut host, None).expect("no merge");
    assert_eq!(trace.submissions.last().expect("end").copies, n);
    assert!(host.iter().enumerate().all(|(i, v)| *v == (i / rows) as f32));
    gpu.set_submit_config(SubmitConfig::default());
}

/// One step of a time-stepping loop: every lane fills its column with `value` and copies it
/// back, in a kept `LaneSet` or a fresh scope.
fn step(gpu: &Gpu, lanes: Option<&mut LaneSet>, out: &mut DeviceMatrix<f32>, host: &mut PinnedMatrix<f32>, value: f32) {
    let rows = out.rows();
    let r = match lanes {
        Some(lanes) => lanes.scope(|s| {
            for ((lane, col), dst) in s.lanes(out.cols())?.into_iter().zip(out.columns_mut()).zip(host.columns_mut()) {
                lane.enter(|st| {
                    let mut v = st.bind(col);
                    st.launch(&kernels::fill_column, LaunchConfig::for_elements(rows, 64), (&mut v, value))?;
                    st.copy_to_host(&v, dst).map(drop)
                })?;
            }
            Ok(())
        }),
        None => scope(gpu, |s| {
            for ((lane, col), dst) in s.lanes(out.cols())?.into_iter().zip(out.columns_mut()).zip(host.columns_mut()) {
                lane.enter(|st| {
                    let mut v = st.bind(col);
                    st.launch(&kernels::fill_column, LaunchConfig::for_elements(rows, 64), (&mut v, value))?;
                    st.copy_to_host(&v, dst).map(drop)
                })?;
            }
            Ok(())
        }),
    };
    r.expect("step");
    assert!(host.iter().all(|v| *v == value), "value {value}");
}

fn a_lane_set_and_fresh_scopes_share_the_cached_graph(gpu: Gpu) {
    let (rows, n) = (256, 4);
    let mut out = gpu.alloc_matrix::<f32>(rows, n).expect("alloc");
    let mut host = gpu.pinned_matrix::<f32>(rows, n).expect("pinned");
    let mut lanes = LaneSet::new(&gpu);
    let before = gpu.submit_stats();
    for k in 0..6 {
        let set = if k % 2 == 0 { Some(&mut lanes) } else { None };
        step(&gpu, set, &mut out, &mut host, k as f32);
    }
    let after = gpu.submit_stats();
    assert_eq!(after.graphs_captured - before.graphs_captured, 1, "{after:?}");
    assert_eq!(after.graphs_replayed - before.graphs_replayed, 4, "{after:?}");
    assert_eq!(lanes.len(), n);
}

/// A repeated scope (the same operations, arguments and addresses) reuses the plan of the
/// earlier one; a changed argument is planned afresh — every result exact either way — and a
/// program that goes back to an earlier scope between others finds its plan again.
fn a_repeated_scope_reuses_its_plan_and_a_changed_one_does_not(gpu: Gpu) {
    let (rows, n) = (256, 4);
    let mut out = gpu.alloc_matrix::<f32>(rows, n).expect("alloc");
    let mut host = gpu.pinned_matrix::<f32>(rows, n).expect("pinned");
    let reused = |gpu: &Gpu| gpu.submit_stats().plans_reused;
    step(&gpu, None, &mut out, &mut host, 1.5);
    let r0 = reused(&gpu);
    step(&gpu, None, &mut out, &mut host, 1.5);
    assert_eq!(reused(&gpu), r0 + 1, "the same scope again: its plan reused");
    step(&gpu, None, &mut out, &mut host, 2.5); // another scalar: planned afresh (and exact)
    assert_eq!(reused(&gpu), r0 + 1, "a changed argument is not the same batch");
    step(&gpu, None, &mut out, &mut host, 1.5); // back to the first: found again
    assert_eq!(reused(&gpu), r0 + 2);
    // Other lanes' work in between (another shape), then the first again.
    let mut other = gpu.alloc_matrix::<f32>(rows, n + 1).expect("alloc");
    let mut other_host = gpu.pinned_matrix::<f32>(rows, n + 1).expect("pinned");
    step(&gpu, None, &mut other, &mut other_host, 3.5);
    step(&gpu, None, &mut out, &mut host, 1.5);
    assert_eq!(reused(&gpu), r0 + 3);
}

fn the_graph_cache_is_bounded_and_graphs_can_be_turned_off(gpu: Gpu) {
    gpu.set_submit_config(SubmitConfig { graph_cache: 2, ..SubmitConfig::default() });
    let rows = 128;
    // Four shapes (1 to 4 lanes), each run three times: more graphs than the cache holds.
    for n in 1..=4 {
        let mut out = gpu.alloc_matrix::<f32>(rows, n).expect("alloc");
        let mut host = gpu.pinned_matrix::<f32>(rows, n).expect("pinned");
        for k in 0..3 {
            step(&gpu, None, &mut out, &mut host, (10 * n + k) as f32);
        }
    }
    let stats = gpu.submit_stats();
    assert!(stats.graphs_evicted >= 2, "{stats:?}");
    // Other graph rules (here: at most 16 branches): a graph captured under the old ones is
    // not replayed; back under the old rules, it is.
    {
        let mut out = gpu.alloc_matrix::<f32>(rows, 2).expect("alloc");
        let mut host = gpu.pinned_matrix::<f32>(rows, 2).expect("pinned");
        let replays = |gpu: &Gpu| gpu.submit_stats().graphs_replayed;
        for k in 0..3 {
            step(&gpu, None, &mut out, &mut host, k as f32);
        }
        let cached = SubmitConfig { graph_cache: 2, ..SubmitConfig::default() };
        gpu.set_submit_config(SubmitConfig { graph_branches: 16, ..cached });
        let before = replays(&gpu);
        step(&gpu, None, &mut out, &mut host, 7.0);
        assert_eq!(replays(&gpu), before, "a graph of other rules was replayed: {:?}", gpu.submit_stats());
        gpu.set_submit_config(cached);
        step(&gpu, None, &mut out, &mut host, 8.0);
        assert_eq!(replays(&gpu), before + 1, "the graph of these rules was not replayed: {:?}", gpu.submit_stats());
    }
    // Off: no graph is captured or replayed, results unchanged.
    gpu.set_submit_config(SubmitConfig::deferred());
    let before = gpu.submit_stats();
    let mut out = gpu.alloc_matrix::<f32>(rows, 3).expect("alloc");
    let mut host = gpu.pinned_matrix::<f32>(rows, 3).expect("pinned");
    for k in 0..4 {
        step(&gpu, None, &mut out, &mut host, k as f32);
    }
    let after = gpu.submit_stats();
    assert_eq!((after.graphs_captured, after.graphs_replayed), (before.graphs_captured, before.graphs_replayed));
    assert_eq!(after.direct - before.direct, 4);
    // The opt-out: nothing deferred, nothing counted.
    gpu.set_submit_config(SubmitConfig::direct());
    for k in 0..2 {
        step(&gpu, None, &mut out, &mut host, k as f32);
    }
    assert_eq!(gpu.submit_stats(), after);
    gpu.set_submit_config(SubmitConfig::default());
}

fn lane_counters_count_what_the_program_asked_for_and_submissions_what_ran(gpu: Gpu) {
    let rows = 256;
    let mut host = gpu.pinned_matrix::<f32>(rows, 2).expect("pinned");
    for round in 0..3 {
        let ((), trace) = traced_scope(&gpu, |s| {
            let m = s.alloc_matrix::<f32>(rows, 2)?;
            let (a, b) = m.split_columns_mut(1).expect("split");
            let (la, lb) = (s.lane()?, s.lane()?);
            let handed = la.enter(|st| {
                let mut v = st.bind(a);
                st.launch(&kernels::fill_column, LaunchConfig::for_elements(rows, 64), (&mut v, 2.0))?;
                st.fence(v)
            })?;
            let (c0, c1) = host.split_columns_mut(1).expect("split");
            lb.enter(|st| {
                let x = st.await_fence(handed)?;
                let mut y = st.bind(b);
                st.launch(&kernels::fill_column, LaunchConfig::for_elements(rows, 64), (&mut y, 1.0))?;
                st.launch(&kernels::saxpy, LaunchConfig::for_elements(rows, 64), (&mut y, &x, 0.5))?;
                st.copy_to_host(&x, c0)?;
                st.copy_to_host(&y, c1).map(drop)
            })?;
            // Asked for: lane a recorded one fence; lane b waited once and recorded two (its
            // pending copies), whatever the submission then did with them.
            assert_eq!((la.stats().events_recorded, la.stats().waits_enqueued, la.stats().launches), (1, 0, 1));
            assert_eq!((lb.stats().events_recorded, lb.stats().waits_enqueued, lb.stats().copies), (2, 1, 2));
            Ok(())
        })
        .expect("scope");
        let end = trace.submissions.last().expect("end");
        // Submitted: the awaited fence's event and its wait (an event record and a wait, or a
        // graph edge); the two copies' fences, never awaited, are not recorded.
        assert_eq!((end.events_recorded, end.waits, end.fences_elided), (1, 1, 2), "round {round}: {end:?}");
        assert!(host.column(0).expect("column").iter().all(|v| *v == 2.0));
        assert!(host.column(1).expect("column").iter().all(|v| *v == 2.0), "0.5 * 2 + 1");
    }
}

/// A slot of the stream below: fresh, or handed back by the lane that used it last.
enum Slot<'s> {
    Fresh(sluice::ColumnsMut<'s, f32>),
    Handed(sluice::Fenced<'s, sluice::ColumnsMut<'s, f32>>),
}

fn a_long_scope_is_submitted_as_it_grows_and_streams_batches_exactly(gpu: Gpu) {
    gpu.set_submit_config(SubmitConfig { max_deferred: 32, ..SubmitConfig::default() });
    let (rows, batches, n_slots) = (4096, 24, 3);
    let mut input = gpu.pinned_matrix::<f32>(rows, batches).expect("pinned");
    for (i, x) in input.iter_mut().enumerate() {
        *x = i as f32 * 0.5;
    }
    let mut output = gpu.pinned_matrix::<f32>(rows, batches).expect("pinned");
    poison(&mut output);
    let cfg = LaunchConfig::for_elements(rows, 256);
    let ((), trace) = traced_scope(&gpu, |s| {
        let (up, compute, down) = (s.lane()?, s.lane()?, s.lane()?);
        let (ins, outs) = (s.alloc_matrix::<f32>(rows, n_slots)?, s.alloc_matrix::<f32>(rows, n_slots)?);
        let mut in_slots: Vec<Option<Slot>> = ins.columns_mut().map(|c| Some(Slot::Fresh(c))).collect();
        let mut out_slots: Vec<Option<Slot>> = outs.columns_mut().map(|c| Some(Slot::Fresh(c))).collect();
        for (k, dst) in output.columns_mut().enumerate() {
            let r = k % n_slots;
            let src = input.column(k).expect("column");
            let slot = in_slots[r].take().expect("back");
            let uploaded = up.enter(|st| {
                let mut v = match slot {
                    Slot::Fresh(c) => st.bind(c),
                    Slot::Handed(f) => st.await_fence(f)?,
                };
                st.copy_to_device(src, &mut v)?;
                st.fence(v)
            })?;
            let slot = out_slots[r].take().expect("back");
            let (read, written) = compute.enter(|st| {
                let x = st.await_fence(uploaded)?;
                let mut y = match slot {
                    Slot::Fresh(c) => st.bind(c),
                    Slot::Handed(f) => st.await_fence(f)?,
                };
                st.zero(&mut y)?;
                st.launch(&kernels::saxpy, cfg, (&mut y, &x, 2.0))?;
                Ok::<_, sluice::Error>((st.fence(x)?, st.fence(y)?))
            })?;
            in_slots[r] = Some(Slot::Handed(read));
            let copied = down.enter(|st| {
                let y = st.await_fence(written)?;
                st.copy_to_host(&y, dst)?;
                st.fence(y)
            })?;
            out_slots[r] = Some(Slot::Handed(copied));
        }
        Ok(())
    })
    .expect("stream");
    gpu.set_submit_config(SubmitConfig::default());
    let grown = trace.submissions.iter().filter(|s| s.reason == "the log reached SubmitConfig::max_deferred").count();
    assert!(grown >= 4, "the scope was submitted as it grew: {:?}", trace.submissions);
    assert!(trace.submissions.iter().all(|s| s.path == SubmitPath::Direct));
    for (i, (x, y)) in input.iter().zip(output.iter()).enumerate() {
        assert_eq!(*y, 2.0 * x, "element {i}");
    }
}

/// More lanes than a graph has branches (64 by default: lanes then share branches, in order
/// of their first step), with fences between lanes of the same branch and of others, in both
/// directions, under each graph shape: every replay computes exactly what direct submission
/// does.
fn a_graph_of_more_lanes_than_branches_means_the_same(gpu: Gpu) {
    let (rows, n) = (256, 130);
    let cfg = LaunchConfig::for_elements(rows, 64);
    // Lane `to(k)` reads the column lane `k` wrote: a permutation (37 and 130 are coprime)
    // that sends columns to lanes before and after their writer's, near and far.
    let to = |k: usize| (k * 37 + 5) % n;
    let mut host = gpu.pinned_matrix::<f32>(rows, n).expect("pinned");
    let run = |gpu: &Gpu, host: &mut PinnedMatrix<f32>| {
        traced_scope(gpu, |s| {
            let a = s.alloc_matrix::<f32>(rows, n)?;
            let b = s.alloc_matrix::<f32>(rows, n)?;
            let lanes = s.lanes(n)?;
            let mut written = Vec::with_capacity(n);
            for (k, (lane, col)) in lanes.iter().zip(a.columns_mut()).enumerate() {
                written.push(lane.enter(|st| {
                    let mut v = st.bind(col);
                    st.launch(&kernels::fill_column, cfg, (&mut v, (k + 1) as f32))?;
                    st.fence(v)
                })?);
            }
            let mut outs: Vec<_> = b.columns_mut().zip(host.columns_mut()).map(Some).collect();
            for (k, x) in written.into_iter().enumerate() {
                let j = to(k);
                let (col, dst) = outs[j].take().expect("each lane reads once");
                lanes[j].enter(|st| {
                    let x = st.await_fence(x)?;
                    let mut y = st.bind(col);
                    st.launch(&kernels::fill_column, cfg, (&mut y, j as f32))?;
                    st.launch(&kernels::saxpy, cfg, (&mut y, &x, 2.0))?;
                    st.copy_to_host(&y, dst).map(drop)
                })?;
            }
            Ok(())
        })
    };
    let expect = |host: &PinnedMatrix<f32>, what: &str| {
        for k in 0..n {
            let j = to(k);
            let want = 2.0 * (k + 1) as f32 + j as f32;
            let col = &host[j * rows..(j + 1) * rows];
            assert!(col.iter().all(|v| *v == want), "{what}: column {j} (from lane {k}) is not {want}");
        }
    };
    gpu.set_submit_config(SubmitConfig::direct());
    poison(&mut host);
    run(&gpu, &mut host).expect("direct");
    expect(&host, "direct");
    // Every graph shape: the default (a branch per lane, each lane's first kernel chained by
    // launch-order edges), 16 branches chained (the first kernel of each), 64 branches
    // unchained (the default without a chain), and a branch per lane unchained.
    let d = unsegmented();
    for (branches, chain) in [(d.graph_branches, d.chain_launches), (16, true), (0, false), (usize::MAX, false)] {
        gpu.set_submit_config(SubmitConfig { graph_branches: branches, chain_launches: chain, ..d });
        let before = gpu.submit_stats().launch_edges;
        let mut paths = Vec::new();
        for round in 0..6 {
            poison(&mut host);
            let ((), trace) = run(&gpu, &mut host).expect("deferred");
            expect(&host, &format!("{branches} branches, chain {chain}, round {round}"));
            paths.push(last_path(&trace));
        }
        // A graph by the second round (the first, where the shape was seen under other rules
        // already; replayed at once where a graph of these rules is cached), then replayed. A
        // scope whose allocations come back elsewhere is captured again (a GPU's pool may
        // alternate between two buffer sets; the CPU backend's come from the process's
        // allocator, which the harness's other test threads use at the same time): what is
        // checked is that the graph is used, and above, that every round means the same.
        let graph = paths[..2].iter().any(|p| *p != SubmitPath::Direct);
        assert!(graph, "{branches} branches, chain {chain}: {paths:?}");
        let replays = paths[2..].iter().filter(|p| **p == SubmitPath::GraphReplayed).count();
        assert!(replays >= 2, "{branches} branches, chain {chain}: {paths:?}");
        // The chain is made on a GPU (CUDA 12.3 and later), of the roots: with a branch per
        // lane, the 130 lanes' first kernels (129 edges); with 16 branches, runs of 9 lanes,
        // the first kernel of each of 15 branches (14 edges). The first capture makes it; a
        // second (a scope whose memory came back elsewhere) makes it again.
        let edges = gpu.submit_stats().launch_edges - before;
        let per_capture = match (chain && gpu.backend() == sluice::Backend::Cuda, branches) {
            (false, _) => 0,
            (true, 16) => 14,
            (true, _) => 129,
        };
        let captures = paths.iter().filter(|p| **p == SubmitPath::GraphCaptured).count() as u64;
        assert_eq!(edges, per_capture * captures, "{branches} branches, chain {chain}: {paths:?}");
    }
}

/// The README's program with a kernel whose threads wait at barriers, one block per lane:
/// 160 lanes of 256 threads, then 1024 lanes of 64. On the CPU backend every lane runs its
/// block on its own OS thread, each waiting thread holding a stack (more mappings than Linux
/// allows a process: 128 lanes once failed to allocate one and panicked, and 1024 small
/// blocks failed while each lane kept its idle stacks). Every column is checked against the
/// f64 reference.
fn many_lanes_of_kernels_with_barriers_run_at_once(gpu: Gpu) {
    let mut rng = common::rng();
    let m = 300;
    let sources_host = common::particles(&mut rng, m);
    let sources = gpu.upload(&sources_host).expect("sources");
    for (rows, n, block) in [(256, 160, 256), (64, 1024, 64)] {
        let targets_host = common::particles(&mut rng, rows * n);
        let targets = gpu.upload_matrix(&targets_host, rows, n).expect("targets");
        let mut host = gpu.pinned_matrix::<f32>(rows, n).expect("pinned");
        for round in 0..2 {
            poison(&mut host);
            natural_with(&gpu, &sources, &targets, &mut host, EPS2, Potential::Tiled(block))
                .unwrap_or_else(|e| panic!("{n} lanes of {block} threads, round {round}: {e}"));
            common::check_potential(&host, rows, n, &targets_host, &sources_host, EPS2, TOL);
        }
    }
}

/// A program that pins a fresh host matrix for every scope, freeing the last one: the
/// allocator often hands the same address out again, registered anew, and a cached graph
/// whose copy nodes were set for the old registration must not copy through it (an H100 lost
/// its context that way, or left the columns unwritten: `Context::memory_epoch`). 16 lanes,
/// 30 rounds, with and without segments of 4; every column exact in every round.
fn a_host_matrix_pinned_again_at_the_same_address_gets_every_column(gpu: Gpu) {
    let (rows, n) = (1024, 16);
    for config in [unsegmented(), with_segments(4)] {
        gpu.set_submit_config(config);
        let mut out = gpu.alloc_matrix::<f32>(rows, n).expect("alloc");
        let mut addresses = Vec::new();
        for round in 0..30 {
            let mut host = gpu.pinned_matrix::<f32>(rows, n).expect("pinned");
            poison(&mut host);
            addresses.push(host.column(0).expect("column").as_ptr() as usize);
            let value = 1.0 + round as f32;
            step(&gpu, None, &mut out, &mut host, value);
            drop(host);
        }
        let reused = addresses.windows(2).filter(|w| w[0] == w[1]).count();
        println!(
            "segments {}: the host matrix came back at the same address {reused} times in 29",
            config.segment_lanes
        );
    }
    gpu.set_submit_config(SubmitConfig::default());
}

/// The program the docs-only attack lost an H100's context with (4 runs in 5), as it ran: 40
/// lanes, each filling its column, adding `a * x` to it and copying it back, in fresh scopes
/// under one configuration after another — direct, segments of 16, segments of 1, segments
/// of 16 again — with its device and pinned host matrices allocated afresh for each
/// configuration (so that the allocator may hand the last one's addresses out again). The
/// scopes that replayed graphs cached under the earlier configuration faulted, or left their
/// columns unwritten (`Context::memory_epoch` is the fix). Every column checked against the
/// f64 reference in every scope.
fn switching_segment_sizes_with_memory_allocated_afresh_keeps_every_column(gpu: Gpu) {
    use rand::Rng;
    let (rows, n) = (256, 40);
    let mut rng = common::rng();
    let x_host: Vec<f32> = (0..rows).map(|_| rng.random_range(-4.0f32..4.0)).collect();
    let x = gpu.upload(&x_host).expect("upload");
    for config in [SubmitConfig::direct(), with_segments(16), with_segments(1), with_segments(16)] {
        gpu.set_submit_config(config);
        let mut dm = gpu.alloc_matrix::<f32>(rows, n).expect("alloc");
        let mut host = gpu.pinned_matrix::<f32>(rows, n).expect("pinned");
        for rep in 0..6 {
            let (v, a) = (rng.random_range(-8.0f32..8.0), rng.random_range(-2.0f32..2.0));
            poison(&mut host);
            scope(&gpu, |s| {
                for ((lane, col), dst) in s.lanes(n)?.into_iter().zip(dm.columns_mut()).zip(host.columns_mut()) {
                    lane.enter(|st| {
                        let mut cv = st.bind(col);
                        st.launch(&kernels::fill_column, LaunchConfig::for_elements(rows, 64), (&mut cv, v))?;
                        let xv = st.await_fence(&x)?;
                        st.launch(&kernels::saxpy, LaunchConfig::for_elements(rows, 64), (&mut cv, &xv, a))?;
                        st.copy_to_host(&cv, dst).map(drop)
                    })?;
                }
                Ok(())
            })
            .unwrap_or_else(|e| panic!("segments {}, scope {rep}: {e}", config.segment_lanes));
            let want = gpu_kernels::reference::saxpy(&vec![v; rows], &x_host, a);
            for (j, column) in host.chunks(rows).enumerate() {
                for (i, (&got, &want)) in column.iter().zip(&want).enumerate() {
                    assert!(
                        (got as f64 - want).abs() <= 1e-6 * want.abs().max(1.0),
                        "segments {}, scope {rep}, column {j}, row {i}: {got} against {want}",
                        config.segment_lanes
                    );
                }
            }
        }
    }
    gpu.set_submit_config(SubmitConfig::default());
}

fn a_program_alternating_between_buffers_keeps_a_graph_for_each(gpu: Gpu) {
    // One graph a scope (24 lanes would form a segment).
    gpu.set_submit_config(unsegmented());
    let (rows, n) = (128, 24);
    let mut outs = [gpu.alloc_matrix::<f32>(rows, n).expect("alloc"), gpu.alloc_matrix::<f32>(rows, n).expect("alloc")];
    let mut hosts =
        [gpu.pinned_matrix::<f32>(rows, n).expect("pinned"), gpu.pinned_matrix::<f32>(rows, n).expect("pinned")];
    let before = gpu.submit_stats();
    for k in 0..10 {
        let (out, host) = (&mut outs[k % 2], &mut hosts[k % 2]);
        step(&gpu, None, out, host, (k % 2) as f32);
    }
    let after = gpu.submit_stats();
    // Buffers A: seen once (direct); B: captured; A again (a buffer set the shape used
    // before): captured for A; from then on each scope replays the graph of its buffers,
    // nothing rewritten.
    assert_eq!(after.graphs_captured - before.graphs_captured, 2, "{after:?}");
    assert_eq!(after.graphs_replayed - before.graphs_replayed, 7, "{after:?}");
    assert_eq!(after.nodes_updated, before.nodes_updated, "{after:?}");
    // Scalars that change every step are written into the graph's nodes instead.
    for k in 10..14 {
        let (out, host) = (&mut outs[k % 2], &mut hosts[k % 2]);
        step(&gpu, None, out, host, k as f32);
    }
    let last = gpu.submit_stats();
    assert_eq!((last.graphs_captured, last.graphs_replayed - after.graphs_replayed), (after.graphs_captured, 4));
    assert_eq!(last.nodes_updated - after.nodes_updated, 4 * n as u64, "{last:?}");
}

/// `SubmitConfig::segment_lanes` (4 by default) set to `lanes`.
fn with_segments(lanes: usize) -> SubmitConfig {
    SubmitConfig { segment_lanes: lanes, ..SubmitConfig::default() }
}

/// Segments: the README's program with 16 lanes submits the first 8 (merged, and from the
/// second round as a graph) when the ninth logs its launch, and the other 8 at the scope's
/// end; results bit-identical to direct submission in every round, and each half's graph
/// captured once and replayed.
fn segments_mean_what_the_whole_scope_means(gpu: Gpu) {
    let n = 16;
    let mut case = natural_case(&gpu, 1024, n);

    gpu.set_submit_config(with_segments(8));
    let before = gpu.submit_stats();
    let paths = case.rounds(&gpu, 5, |_, trace| {
        let subs = &trace.submissions;
        assert_eq!(subs.len(), 2, "{subs:?}");
        assert!(subs.iter().all(|s| s.path == subs[0].path), "{subs:?}");
        let half = n / 2;
        for sub in subs {
            assert_eq!((sub.operations, sub.fences_elided, sub.merged_copies), (3 * half, half, half), "{sub:?}");
        }
        if subs[0].path == SubmitPath::GraphReplayed {
            let graphs = trace.spans.iter().filter(|s| s.kind == SpanKind::Graph).count();
            assert_eq!(graphs, 2, "the trace shows the two graph launches: {:?}", trace.spans);
        }
        subs[0].path
    });
    assert_direct_captured_replayed(&paths);
    let after = gpu.submit_stats();
    assert_eq!(after.graphs_captured - before.graphs_captured, 2);
    assert_eq!(after.graphs_replayed - before.graphs_replayed, 6);
    gpu.set_submit_config(SubmitConfig::default());
}

/// Segments grow: 64 lanes with segments of 8 go as 8, 8, 16 and 32 lanes (each at least
/// as many as all earlier ones together); 128 lanes as 8, 8, 16, 32, 32 and 32 (growth
/// stops at 32 lanes or a quarter of the lanes made, whichever is more). Every segment's
/// columns merged, every column exact; the submissions left the program in order, within the
/// scope's time (`Submission::submitted_after`).
fn segments_grow_and_each_merges_its_copies(gpu: Gpu) {
    let rows = 1024;
    gpu.set_submit_config(with_segments(8));
    for (n, expected) in [(64, &[8, 8, 16, 32][..]), (128, &[8, 8, 16, 32, 32, 32][..])] {
        let mut host = gpu.pinned_matrix::<f32>(rows, n).expect("pinned");
        for round in 0..3 {
            poison(&mut host);
            let started = Instant::now();
            let ((), trace) = traced_scope(&gpu, |s| fill_columns(s, &mut host)).expect("scope");
            let took = started.elapsed();
            let subs = &trace.submissions;
            let lanes: Vec<usize> = subs.iter().map(|s| s.launches).collect();
            assert_eq!(lanes, expected, "{n} lanes, round {round}: {subs:?}");
            let at: Vec<Duration> = subs.iter().map(|s| s.submitted_after).collect();
            assert_stamped(&at, took, &format!("{n} lanes, round {round}"));
            let segments: Vec<bool> = subs.iter().map(|s| s.segment).collect();
            assert!(
                !segments[segments.len() - 1] && segments[..segments.len() - 1].iter().all(|s| *s),
                "the scope's end is no segment: {subs:?}"
            );
            let (merged, copies) = subs.iter().fold((0, 0), |(m, c), s| (m + s.merged_copies, c + s.copies));
            assert_eq!(merged, n, "{n} lanes, round {round}: every column merged: {subs:?}");
            assert!(copies < n, "{subs:?}");
            for j in 0..n {
                assert!(
                    host.column(j).expect("column").iter().all(|v| *v == j as f32),
                    "{n} lanes, round {round}, column {j}"
                );
            }
        }
        // Untraced, on kept lanes: each scope's segments are stamped from that scope's start.
        let mut kept = LaneSet::new(&gpu);
        for round in 0..2 {
            let started = Instant::now();
            let (at, took) = kept
                .scope(|s| {
                    fill_columns(s, &mut host)?;
                    Ok((s.submissions().iter().map(|x| x.submitted_after).collect::<Vec<_>>(), started.elapsed()))
                })
                .expect("scope");
            assert_eq!(at.len(), expected.len() - 1, "{n} lanes, kept round {round}: the segments so far: {at:?}");
            assert_stamped(&at, took, &format!("{n} lanes, kept round {round}"));
        }
    }
    gpu.set_submit_config(SubmitConfig::default());
}

/// A scope's body: lane `j` fills column `j` of a scope matrix with `j` and copies it to
/// `host`'s column `j`.
fn fill_columns<'scope, 'env>(s: &'scope Scope<'scope, 'env>, host: &'scope mut PinnedMatrix<f32>) -> Result<()> {
    let (rows, n) = (host.rows(), host.cols());
    let out = s.alloc_matrix::<f32>(rows, n)?;
    for (j, ((lane, col), dst)) in s.lanes(n)?.into_iter().zip(out.columns_mut()).zip(host.columns_mut()).enumerate() {
        lane.enter(|st| {
            let mut col = st.bind(col);
            st.launch(&kernels::fill_column, LaunchConfig::for_elements(rows, 256), (&mut col, j as f32))?;
            st.copy_to_host(&col, dst).map(drop)
        })?;
    }
    Ok(())
}

/// Submission times (`Submission::submitted_after`) are set, in order, and within `took`, the
/// host time the scope had run when they were read.
fn assert_stamped(at: &[Duration], took: Duration, what: &str) {
    assert!(
        at[0] > Duration::ZERO && at.windows(2).all(|w| w[0] <= w[1]) && at[at.len() - 1] <= took,
        "{what}: submitted after {at:?}, the scope had run {took:?}"
    );
}

/// A scope's body: lane `j` fills column `j` of a scope matrix with `first + j` and copies it
/// to `host`'s column `j` (the pending copy dropped); then lane `again` logs again — a fill of
/// another column with `then`, copied to `extra` — and the host awaits that copy mid-scope.
fn fill_then_log_again<'scope, 'env>(
    s: &'scope Scope<'scope, 'env>,
    host: &'scope mut PinnedMatrix<f32>,
    extra: &'scope mut PinnedMatrix<f32>,
    first: f32,
    again: usize,
    then: f32,
) -> Result<()> {
    let (rows, n) = (host.rows(), host.cols());
    let cfg = LaunchConfig::for_elements(rows, 256);
    let out = s.alloc_matrix::<f32>(rows, n)?;
    let more = s.alloc_matrix::<f32>(rows, 1)?;
    let lanes = s.lanes(n)?;
    for (j, ((lane, col), dst)) in lanes.iter().zip(out.columns_mut()).zip(host.columns_mut()).enumerate() {
        lane.enter(|st| {
            let mut col = st.bind(col);
            st.launch(&kernels::fill_column, cfg, (&mut col, first + j as f32))?;
            st.copy_to_host(&col, dst).map(drop)
        })?;
    }
    let (Some(col), Some(dst)) = (more.columns_mut().next(), extra.columns_mut().next()) else { panic!("one column") };
    let pending = lanes[again].enter(|st| {
        let mut col = st.bind(col);
        st.launch(&kernels::fill_column, cfg, (&mut col, then))?;
        st.copy_to_host(&col, dst)
    })?;
    let got = pending.wait()?;
    assert!(got.iter().all(|v| *v == then), "the column awaited mid-scope");
    Ok(())
}

/// A lane whose work a segment ran on another lane's stream — a graph's, or a merged copy's
/// — logs again: the first 8 of 16 lanes go as a segment when the ninth logs, the other 8
/// when lane 2 logs again (a fill of another column and its copy, which the host awaits in
/// the scope). Lane 2's next submission orders it after the stream its earlier work ran on
/// (an event recorded there, and lane 2's wait for it), with graphs (the first round direct,
/// then captured and replayed) and without (`graph_cache: 0`: merged copies submitted
/// directly on the chunk's last lane); every column exact in every round.
fn a_lane_that_logs_again_after_its_segment_is_ordered_after_it(gpu: Gpu) {
    let (rows, n) = (1024, 16);
    let mut host = gpu.pinned_matrix::<f32>(rows, n).expect("pinned");
    let mut extra = gpu.pinned_matrix::<f32>(rows, 1).expect("pinned");
    for config in [with_segments(8), SubmitConfig { graph_cache: 0, ..with_segments(8) }] {
        gpu.set_submit_config(config);
        let mut paths = Vec::new();
        for round in 0..4 {
            poison(&mut host);
            poison(&mut extra);
            let value = 100.0 + round as f32;
            let ((), trace) =
                traced_scope(&gpu, |s| fill_then_log_again(s, &mut host, &mut extra, 0.0, 2, value)).expect("scope");
            let subs = &trace.submissions;
            assert_eq!(subs.iter().map(|s| s.launches).collect::<Vec<_>>(), [8, 8, 1], "round {round}: {subs:?}");
            paths.push(subs[0].path);
            // Lane 2's copy went into a merged copy of lanes 0..8 (on lane 7's stream), or
            // into the graph (on lane 0's): its fill waits for that stream's event.
            let at_wait = &subs[2];
            assert!(at_wait.waits >= 1 && at_wait.events_recorded >= 1, "round {round}: {at_wait:?}");
            for j in 0..n {
                assert!(host.column(j).expect("column").iter().all(|v| *v == j as f32), "round {round}, column {j}");
            }
            assert!(extra.iter().all(|v| *v == value), "round {round}");
        }
        if config.graph_cache == 0 {
            assert!(paths.iter().all(|p| *p == SubmitPath::Direct), "{paths:?}");
        } else {
            assert_eq!(paths[..2], [SubmitPath::Direct, SubmitPath::GraphCaptured], "{paths:?}");
            assert!(paths[2..].iter().all(|p| *p == SubmitPath::GraphReplayed), "{paths:?}");
        }
    }
    gpu.set_submit_config(SubmitConfig::default());
}

/// Segments of 16, untraced (a traced scope launches its segments' graphs itself): 64
/// lanes go as 16, 16 and 32, and lane 3 then logs again (a fill of another column, copied and
/// awaited mid-scope), so its work waits for the stream its first segment ran on. 24 rounds,
/// every column exact in each; on a GPU the device's launcher thread launched segment graphs
/// (counted in `SubmitStats::background_launches`), and the same rounds with the thread off
/// give the same columns.
fn segments_launched_by_the_device_thread_keep_every_result(gpu: Gpu) {
    let (rows, n) = (2048, 64);
    let mut host = gpu.pinned_matrix::<f32>(rows, n).expect("pinned");
    let mut extra = gpu.pinned_matrix::<f32>(rows, 1).expect("pinned");
    for background in [true, false] {
        gpu.set_submit_config(SubmitConfig { background_launches: background, ..with_segments(16) });
        let before = gpu.submit_stats();
        for round in 0..24 {
            poison(&mut host);
            poison(&mut extra);
            let value = 0.5 + round as f32;
            scope(&gpu, |s| fill_then_log_again(s, &mut host, &mut extra, value, 3, -value))
                .unwrap_or_else(|e| panic!("background {background}, round {round}: {e}"));
            for j in 0..n {
                let want = value + j as f32;
                let col = host.column(j).expect("column");
                assert!(col.iter().all(|v| *v == want), "background {background}, round {round}, column {j}");
            }
        }
        let handed = gpu.submit_stats().background_launches - before.background_launches;
        match (gpu.backend(), background) {
            (sluice::Backend::Cuda, true) => {
                assert!(handed > 0, "no segment graph was launched by the launcher thread")
            }
            _ => assert_eq!(handed, 0, "background {background} on {:?}", gpu.backend()),
        }
    }
    gpu.set_submit_config(SubmitConfig::default());
}

/// Segments form where each lane first awaits an upload of the scope (the README's program
/// as printed: its lanes' first operations are waits): 16 lanes go as two segments of 8,
/// submitted directly (a wait for a copy submitted before the batch is no graph), every
/// column against the f64 reference.
fn segments_form_in_a_scope_that_uploads_its_inputs(gpu: Gpu) {
    let mut rng = common::rng();
    let (rows, n) = (512, 16);
    let src_host = common::particles(&mut rng, 64);
    let tgt_host = common::particles(&mut rng, rows * n);
    let mut host = gpu.pinned_matrix::<f32>(rows, n).expect("pinned");
    gpu.set_submit_config(with_segments(8));
    for round in 0..3 {
        poison(&mut host);
        let ((), trace) = traced_scope(&gpu, |s| {
            let (sources, targets) = (s.upload(&src_host)?, s.upload_matrix(&tgt_host, rows, n)?);
            let out = s.alloc_matrix::<f32>(rows, n)?;
            for (j, ((lane, col), dst)) in
                s.lanes(n)?.into_iter().zip(out.columns_mut()).zip(host.columns_mut()).enumerate()
            {
                lane.enter(|st| {
                    let src = st.await_fence(&sources)?;
                    let tgt = st.await_fence(&targets)?.column(j).ok_or(sluice::Error::NotAdjacent)?;
                    let mut col = st.bind(col);
                    let cfg = LaunchConfig::for_elements(rows, 256);
                    st.launch(&kernels::potential, cfg, (&mut col, &tgt, &src, EPS2))?;
                    st.copy_to_host(&col, dst).map(drop)
                })?;
            }
            Ok(())
        })
        .expect("scope");
        let subs = &trace.submissions;
        assert_eq!(subs.iter().map(|s| s.launches).collect::<Vec<_>>(), [8, 8], "round {round}: {subs:?}");
        assert!(subs.iter().all(|s| s.path == SubmitPath::Direct && s.merged_copies == 8), "{subs:?}");
        common::check_potential(&host, rows, n, &tgt_host, &src_host, EPS2, TOL);
    }
    gpu.set_submit_config(SubmitConfig::default());
}

/// A traced scope in which every lane fills its column with `value` (after recording a
/// fence it drops, with `record_first`) and copies it back; the host matrix, poisoned before,
/// must hold `value` everywhere after.
fn fill_traced(
    gpu: &Gpu,
    out: &mut DeviceMatrix<f32>,
    host: &mut PinnedMatrix<f32>,
    value: f32,
    record_first: bool,
) -> Trace {
    let rows = out.rows();
    poison(host);
    let ((), trace) = traced_scope(gpu, |s| {
        for ((lane, col), dst) in s.lanes(out.cols())?.into_iter().zip(out.columns_mut()).zip(host.columns_mut()) {
            lane.enter(|st| {
                if record_first {
                    drop(st.record()?);
                }
                let mut v = st.bind(col);
                st.launch(&kernels::fill_column, LaunchConfig::for_elements(rows, 64), (&mut v, value))?;
                st.copy_to_host(&v, dst).map(drop)
            })?;
        }
        Ok(())
    })
    .expect("scope");
    assert!(host.iter().all(|v| *v == value), "value {value}");
    trace
}

/// A program whose 16 lanes work in two rounds (a fill and its copy each, then an add and its
/// copy each): with segments (the default's 4), the first scope sends its first lanes as
/// segments and the rest directly (each lane of the second round had work submitted), and
/// the device learns it — later scopes form no segments, so the whole scope is captured once
/// and replayed after. A scope of the README's shape that follows forms no segments either
/// (it follows a scope in rounds), and the one after it does again. Every column exact.
fn a_scope_in_rounds_makes_the_next_one_unsegmented(gpu: Gpu) {
    let (rows, n) = (256, 16);
    let (mut a, mut b) =
        (gpu.alloc_matrix::<f32>(rows, n).expect("alloc"), gpu.alloc_matrix::<f32>(rows, n).expect("alloc"));
    let mut host = gpu.pinned_matrix::<f32>(rows, n).expect("pinned");
    let mut again = gpu.pinned_matrix::<f32>(rows, n).expect("pinned");
    gpu.set_submit_config(SubmitConfig::default());
    let cfg = LaunchConfig::for_elements(rows, 64);
    let mut rounds = |value: f32| {
        poison(&mut host);
        poison(&mut again);
        let ((), trace) = traced_scope(&gpu, |s| {
            let lanes = s.lanes(n)?;
            for (round, (m, h)) in [(&mut a, &mut host), (&mut b, &mut again)].into_iter().enumerate() {
                for ((lane, col), dst) in lanes.iter().zip(m.columns_mut()).zip(h.columns_mut()) {
                    lane.enter(|st| {
                        let mut v = st.bind(col);
                        st.launch(&kernels::fill_column, cfg, (&mut v, value + round as f32))?;
                        st.copy_to_host(&v, dst).map(drop)
                    })?;
                }
            }
            Ok(())
        })
        .expect("scope");
        assert!(host.iter().all(|v| *v == value) && again.iter().all(|v| *v == value + 1.0), "value {value}");
        trace.submissions
    };
    let first = rounds(1.0);
    assert_eq!(first.iter().map(|s| s.launches).collect::<Vec<_>>(), [4, 4, 8, 16], "{first:?}");
    assert!(first.iter().any(|s| s.reason.contains("had work submitted earlier")), "{first:?}");
    let later: Vec<_> = (0..3).map(|r| rounds(2.0 + r as f32)).collect();
    for subs in &later {
        assert_eq!(subs.len(), 1, "no segments after a scope in rounds: {subs:?}");
    }
    let paths: Vec<_> = later.iter().map(|subs| subs[0].path).collect();
    assert_eq!(paths[1..], [SubmitPath::GraphCaptured, SubmitPath::GraphReplayed], "{paths:?}");
    // The README's shape after it: one scope without segments, then segments again.
    let mut out = gpu.alloc_matrix::<f32>(rows, n).expect("alloc");
    let launches = |trace: &Trace| trace.submissions.iter().map(|s| s.launches).collect::<Vec<_>>();
    let next = fill_traced(&gpu, &mut out, &mut host, 7.0, false);
    assert_eq!(launches(&next), [16], "{:?}", next.submissions);
    let after = fill_traced(&gpu, &mut out, &mut host, 8.0, false);
    assert_eq!(launches(&after), [4, 4, 8], "{:?}", after.submissions);
}

/// Segments form where each lane's first operation is a fence record that nobody awaits
/// (recorded and dropped): 16 lanes go as two segments of 8, every column exact. (The record
/// was logged without the segment test that a launch or a wait makes, so such a scope formed
/// none.)
fn segments_form_where_each_lane_first_records_a_fence(gpu: Gpu) {
    let (rows, n) = (256, 16);
    let mut out = gpu.alloc_matrix::<f32>(rows, n).expect("alloc");
    let mut host = gpu.pinned_matrix::<f32>(rows, n).expect("pinned");
    gpu.set_submit_config(with_segments(8));
    for round in 0..3 {
        let trace = fill_traced(&gpu, &mut out, &mut host, 3.0 + round as f32, true);
        let subs = &trace.submissions;
        assert_eq!(subs.iter().map(|s| s.launches).collect::<Vec<_>>(), [8, 8], "round {round}: {subs:?}");
    }
    gpu.set_submit_config(SubmitConfig::default());
}

/// `SubmitConfig::merge_columns`: 32 adjacent columns of 1 KiB, which `merge_copy_bytes`
/// alone would copy as one, go as copies of at most 8 columns (`Submission::merges` counts
/// them); every column exact.
fn merged_copies_take_at_most_merge_columns_columns(gpu: Gpu) {
    let (rows, n) = (256, 32);
    let mut out = gpu.alloc_matrix::<f32>(rows, n).expect("alloc");
    let mut host = gpu.pinned_matrix::<f32>(rows, n).expect("pinned");
    for (columns, copies) in [(0, 1), (8, 4), (5, 7)] {
        gpu.set_submit_config(SubmitConfig { merge_columns: columns, ..unsegmented() });
        let trace = fill_traced(&gpu, &mut out, &mut host, 2.0 + columns as f32, false);
        let sub = trace.submissions.last().expect("a submission");
        // Every column merged: each copy submitted is a merged one.
        assert_eq!(
            (sub.merged_copies, sub.copies, sub.merges),
            (n, copies, copies),
            "merge_columns {columns}: {sub:?}"
        );
    }
    gpu.set_submit_config(SubmitConfig::default());
}

on_every_backend!(
    a_scope_in_rounds_makes_the_next_one_unsegmented,
    a_host_matrix_pinned_again_at_the_same_address_gets_every_column,
    merged_copies_take_at_most_merge_columns_columns,
    segments_form_where_each_lane_first_records_a_fence,
    switching_segment_sizes_with_memory_allocated_afresh_keeps_every_column,
    segments_launched_by_the_device_thread_keep_every_result,
    segments_form_in_a_scope_that_uploads_its_inputs,
    segments_mean_what_the_whole_scope_means,
    segments_grow_and_each_merges_its_copies,
    a_lane_that_logs_again_after_its_segment_is_ordered_after_it,
    a_graph_of_more_lanes_than_branches_means_the_same,
    many_lanes_of_kernels_with_barriers_run_at_once,
    a_program_alternating_between_buffers_keeps_a_graph_for_each,
    a_long_scope_is_submitted_as_it_grows_and_streams_batches_exactly,
    the_natural_program_replays_a_graph_with_results_bit_identical_to_direct_submission,
    a_changed_program_never_replays_a_stale_graph,
    merged_copies_deliver_every_column_and_never_delay_one_the_host_awaits,
    a_lane_set_and_fresh_scopes_share_the_cached_graph,
    the_graph_cache_is_bounded_and_graphs_can_be_turned_off,
    lane_counters_count_what_the_program_asked_for_and_submissions_what_ran,
    a_repeated_scope_reuses_its_plan_and_a_changed_one_does_not,
);
