//! Speed at every grain, checked for correctness on a real GPU: persistent device data read by
//! many scopes without another upload, lanes kept across scopes in a `LaneSet`, the fan-in of
//! many small columns, and traces of a scope exported as Chrome trace JSON and SVG.
//!
//! Needs an NVIDIA GPU: `cargo test --test gpu_speed -- --ignored`. Without one it fails.

mod common;

use sluice::{kernels, scope, traced_scope, Gpu, LaneId, LaneSet, LaunchConfig, SpanKind};

const EPS2: f32 = 1e-3;
const TOL: f64 = 1e-4;

fn persistent_inputs_are_uploaded_once_and_read_by_a_thousand_scopes(gpu: Gpu) {
    let mut rng = common::rng();
    let (rows, cols) = (2048, 4);
    let sources = common::particles(&mut rng, 128);
    let targets = common::particles(&mut rng, rows * cols);
    // Once, outside any scope.
    let src = gpu.upload(&sources).expect("upload sources");
    let tgt = gpu.upload_matrix(&targets, rows, cols).expect("upload targets");
    let mut host = gpu.pinned_matrix::<f32>(rows, cols).expect("pinned");
    let mut lanes = LaneSet::new(&gpu);
    let cfg = LaunchConfig::for_elements(rows, 256);
    for step in 0..1000 {
        host.fill(f32::NAN);
        lanes
            .scope(|s| {
                let out = s.alloc_matrix::<f32>(rows, cols)?;
                for (j, ((lane, col), dst)) in
                    s.lanes(cols)?.into_iter().zip(out.columns_mut()).zip(host.columns_mut()).enumerate()
                {
                    lane.enter(|st| {
                        // Bound, not awaited: the data was complete before the scope began.
                        let (s_view, t_view) =
                            (st.bind_ref(src.as_columns()), st.bind_ref(tgt.column(j).expect("column")));
                        let mut col = st.bind(col);
                        st.launch(&kernels::potential, cfg, (&mut col, &t_view, &s_view, EPS2))?;
                        assert_eq!(st.stats().waits_enqueued, 0, "persistent data needs no wait");
                        st.copy_to_host(&col, dst).map(drop)
                    })?;
                }
                assert_eq!(s.upload_stats().copies, 0, "no upload per scope");
                Ok(())
            })
            .expect("scope");
        if step % 100 == 0 || step == 999 {
            let worst = common::check_potential(&host, rows, cols, &targets, &sources, EPS2, TOL);
            println!("step {step}: worst relative error {worst:.2e}");
        }
    }
    assert_eq!(lanes.len(), cols, "the set kept one lane per column, no more");
}

fn a_lane_set_reuses_its_lanes_and_counts_each_scope_afresh(gpu: Gpu) {
    let mut lanes = LaneSet::new(&gpu);
    let mut m = gpu.alloc_matrix::<f32>(4096, 8).expect("alloc");
    for round in 0..50 {
        lanes
            .scope(|s| {
                let ls = s.lanes(8)?;
                for (i, (lane, col)) in ls.iter().zip(m.columns_mut()).enumerate() {
                    assert_eq!(lane.id(), LaneId::Lane(i));
                    assert_eq!(lane.stats().launches, 0, "round {round}: counters start at zero");
                    lane.enter(|st| {
                        let mut v = st.bind(col);
                        st.launch(&kernels::fill_column, LaunchConfig::for_elements(4096, 256), (&mut v, i as f32))
                    })?;
                    assert_eq!(lane.stats().launches, 1);
                }
                Ok(())
            })
            .expect("scope");
        assert_eq!(lanes.len(), 8);
    }
    // A scope wanting more lanes than kept grows the set.
    lanes.scope(|s| s.lanes(12).map(drop)).expect("scope");
    assert_eq!(lanes.len(), 12);
    let mut host = gpu.pinned_matrix::<f32>(4096, 8).expect("pinned");
    scope(&gpu, |s| s.lane()?.enter(|st| st.copy_to_host(st.bind_ref(m.as_columns()), host.as_pinned_mut())).map(drop))
        .expect("copy back");
    for j in 0..8 {
        assert!(host.column(j).expect("column").iter().all(|v| *v == j as f32));
    }
}

fn the_fan_in_of_many_small_columns_is_exact(gpu: Gpu) {
    let mut rng = common::rng();
    let (rows, cols) = (4096, 128);
    let sources = common::particles(&mut rng, 64);
    let targets = common::particles(&mut rng, rows * cols);
    let (src, tgt) = (gpu.upload(&sources).expect("upload"), gpu.upload_matrix(&targets, rows, cols).expect("upload"));
    let mut host = gpu.pinned_matrix::<f32>(rows, cols).expect("pinned");
    host.fill(f32::NAN);
    let mut lanes = LaneSet::new(&gpu);
    lanes
        .scope(|s| {
            let out = s.alloc_matrix::<f32>(rows, cols)?;
            let mut handed = Vec::new();
            for (j, (lane, col)) in s.lanes(cols)?.into_iter().zip(out.columns_mut()).enumerate() {
                handed.push(lane.enter(|st| {
                    let mut col = st.bind(col);
                    let (sv, tv) = (st.bind_ref(src.as_columns()), st.bind_ref(tgt.column(j).expect("column")));
                    st.launch(&kernels::potential, LaunchConfig::for_elements(rows, 256), (&mut col, &tv, &sv, EPS2))?;
                    st.fence(col)
                })?);
            }
            let collector = s.lane()?;
            let done = collector.enter(|st| {
                let all = st.await_all(handed)?;
                assert_eq!(st.stats().waits_enqueued, cols as u64, "one wait per column");
                st.copy_to_host(&all, host.as_pinned_mut())
            })?;
            done.wait().map(drop)
        })
        .expect("scope");
    common::check_potential(&host, rows, cols, &targets, &sources, EPS2, TOL);
}

fn a_traced_scope_exports_one_track_per_lane_with_its_spans(gpu: Gpu) {
    let (rows, lanes) = (1 << 16, 4);
    let sources = common::particles(&mut common::rng(), 256);
    let targets = common::particles(&mut common::rng(), rows * lanes);
    let mut host = gpu.pinned_matrix::<f32>(rows, lanes).expect("pinned");
    let ((), trace) = traced_scope(&gpu, |s| {
        let src = s.upload(&sources)?;
        let tgt = s.upload_matrix(&targets, rows, lanes)?;
        let out = s.alloc_matrix::<f32>(rows, lanes)?;
        for (j, ((lane, col), dst)) in
            s.lanes(lanes)?.into_iter().zip(out.columns_mut()).zip(host.columns_mut()).enumerate()
        {
            lane.enter(|st| {
                let sv = st.await_fence(&src)?;
                let tv = st.await_fence(&tgt)?.column(j).expect("column");
                let mut col = st.bind(col);
                st.launch(&kernels::potential, LaunchConfig::for_elements(rows, 256), (&mut col, &tv, &sv, EPS2))?;
                st.copy_to_host(&col, dst).map(drop)
            })?;
        }
        Ok(())
    })
    .expect("traced scope");
    let lanes_seen = trace.lanes();
    assert_eq!(lanes_seen.len(), lanes + 1, "{lanes_seen:?}: every lane and the upload lane");
    for j in 0..lanes {
        let mine: Vec<_> = trace.spans.iter().filter(|s| s.lane == LaneId::Lane(j)).collect();
        let kinds: Vec<SpanKind> = mine.iter().map(|s| s.kind).collect();
        assert_eq!(kinds, [SpanKind::Wait, SpanKind::Wait, SpanKind::Launch, SpanKind::CopyToHost], "lane {j}");
        // The copy starts after the kernel ends (same lane), and everything is in order.
        assert!(mine[3].gpu_start_us >= mine[2].gpu_end_us - 1.0, "{mine:?}");
        assert!(mine.iter().all(|s| s.gpu_end_us >= s.gpu_start_us && s.host_end_us >= s.host_start_us));
        assert_eq!(mine[2].name, "potential");
    }
    let json: serde_json::Value = serde_json::from_str(&trace.to_chrome_json()).expect("the trace is JSON");
    let events = json["traceEvents"].as_array().expect("traceEvents");
    let tracks: std::collections::BTreeSet<_> =
        events.iter().filter(|e| e["ph"] == "X" && e["pid"] == 1).map(|e| e["tid"].as_u64().expect("tid")).collect();
    assert_eq!(tracks.len(), lanes + 1, "one GPU track per lane");
    assert_eq!(events.iter().filter(|e| e["ph"] == "X").count(), 2 * trace.spans.len());
    let svg = trace.to_svg();
    assert!(svg.starts_with("<svg") && svg.matches("<title>").count() == trace.spans.len());
    println!("traced {} spans over {:.3} ms", trace.spans.len(), trace.gpu_end_us() / 1000.0);
}

on_every_backend!(
    persistent_inputs_are_uploaded_once_and_read_by_a_thousand_scopes,
    a_lane_set_reuses_its_lanes_and_counts_each_scope_afresh,
    the_fan_in_of_many_small_columns_is_exact,
    a_traced_scope_exports_one_track_per_lane_with_its_spans,
);
