//! Graphs on a real GPU: the seed workload recorded once and replayed a thousand times with
//! new inputs, scalar arguments changed between replays, hand-offs and fan-ins inside a
//! graph, replays interleaved with ordinary scopes.
//!
//! Needs an NVIDIA GPU: `cargo test --test gpu_graph -- --ignored`. Without one it fails.

mod common;

use sluice::{graph, kernels, scope, Error, Gpu, LaneSet, LaunchConfig};

const EPS2: f32 = 1e-3;
const TOL: f64 = 1e-4;

fn the_seed_workload_recorded_once_replays_a_thousand_times_with_new_inputs(gpu: Gpu) {
    let mut rng = common::rng();
    let (rows, cols, n_sources) = (4096, 8, 256);
    let mut host = gpu.pinned_matrix::<f32>(rows, cols).expect("pinned");
    let first_sources = common::particles(&mut rng, n_sources);
    let first_targets = common::particles(&mut rng, rows * cols);
    let (mut g, ()) = graph(&gpu, |s| {
        let sources = s.upload(&first_sources)?; // input 0
        let targets = s.upload_matrix(&first_targets, rows, cols)?; // input 1
        let out = s.alloc_matrix::<f32>(rows, cols)?;
        for (j, ((lane, col), dst)) in
            s.lanes(cols)?.into_iter().zip(out.columns_mut()).zip(host.columns_mut()).enumerate()
        {
            lane.enter(|st| {
                let src = st.await_fence(&sources)?;
                let tgt = st.await_fence(&targets)?.column(j).expect("column");
                let mut col = st.bind(col);
                st.launch(&kernels::potential, LaunchConfig::for_elements(rows, 256), (&mut col, &tgt, &src, EPS2))?;
                st.copy_to_host(&col, dst).map(drop) // output j
            })?;
        }
        Ok(())
    })
    .expect("record");
    assert_eq!((g.inputs(), g.outputs(), g.launches()), (2, cols, cols));
    let mut lanes = LaneSet::new(&gpu);
    for replay in 0..1000 {
        let sources = common::particles(&mut rng, n_sources);
        let targets = common::particles(&mut rng, rows * cols);
        g.write_input(0, &sources).expect("new sources");
        g.write_input(1, &targets).expect("new targets");
        let check = replay % 100 == 0 || replay == 999;
        lanes
            .scope(|s| {
                let outputs = s.lane()?.enter(|st| st.replay(&g))?.wait()?;
                if check {
                    let mut result = Vec::with_capacity(rows * cols);
                    for j in 0..cols {
                        result.extend_from_slice(outputs.get::<f32>(j)?);
                    }
                    let worst = common::check_potential(&result, rows, cols, &targets, &sources, EPS2, TOL);
                    println!("replay {replay}: worst relative error {worst:.2e}");
                }
                Ok(())
            })
            .expect("replay");
    }
    drop(g);
    assert!(host.iter().all(|v| v.is_finite()), "the graph wrote the host matrix");
}

fn scalar_arguments_change_between_replays(gpu: Gpu) {
    let n = 1 << 16;
    let mut out = gpu.alloc_buffer::<f32>(n).expect("alloc");
    let mut host = gpu.pinned_buffer::<f32>(n).expect("pinned");
    let (mut g, fill) = graph(&gpu, |s| {
        s.lane()?.enter(|st| {
            let mut v = st.bind(out.as_columns_mut());
            let node = st.launch_node(&kernels::fill_column, LaunchConfig::for_elements(n, 256), (&mut v, 1.5))?;
            st.copy_to_host(&v, host.as_pinned_mut())?;
            Ok(node)
        })
    })
    .expect("record");
    for value in [1.5f32, -3.0, 42.0, 0.25] {
        if value != 1.5 {
            g.set_scalar(fill, 1, value).expect("set");
        }
        scope(&gpu, |s| {
            let outputs = s.lane()?.enter(|st| st.replay(&g))?.wait()?;
            assert!(outputs.get::<f32>(0)?.iter().all(|v| *v == value), "replay with {value}");
            Ok(())
        })
        .expect("replay");
    }
    // Typed: the wrong type or a view is refused, with nothing changed.
    assert!(matches!(g.set_scalar(fill, 1, 2.0f64), Err(Error::GraphMismatch { .. })));
    assert!(matches!(g.set_scalar(fill, 0, 2.0f32), Err(Error::GraphMismatch { .. })));
    assert!(matches!(g.set_scalar(fill, 5, 2.0f32), Err(Error::GraphMismatch { .. })));
}

fn hand_offs_and_fan_ins_inside_a_graph_and_replays_between_scopes(gpu: Gpu) {
    let (n, cols) = (1 << 14, 16);
    let mut x = gpu.alloc_buffer::<f32>(n).expect("alloc");
    let mut host = gpu.pinned_matrix::<f32>(n, cols).expect("pinned");
    let (g, ()) = graph(&gpu, |s| {
        let out = s.alloc_matrix::<f32>(n, cols)?;
        let xs = s.lane()?.enter(|st| {
            let mut v = st.bind(x.as_columns_mut());
            st.launch(&kernels::fill_column, LaunchConfig::for_elements(n, 256), (&mut v, 2.0))?;
            Ok::<_, Error>(st.fence(v)?.into_shared())
        })?;
        let mut handed = Vec::new();
        for (j, (lane, col)) in s.lanes(cols)?.into_iter().zip(out.columns_mut()).enumerate() {
            handed.push(lane.enter(|st| {
                let xv = st.await_fence(&xs)?; // a hand-off between lanes, inside the graph
                let mut y = st.bind(col);
                st.launch(&kernels::fill_column, LaunchConfig::for_elements(n, 256), (&mut y, j as f32))?;
                st.launch(&kernels::saxpy, LaunchConfig::for_elements(n, 256), (&mut y, &xv, 3.0))?;
                st.fence(y)
            })?);
        }
        s.lane()?.enter(|st| {
            let all = st.await_all(handed)?; // the fan-in
            st.copy_to_host(&all, host.as_pinned_mut()).map(drop)
        })
    })
    .expect("record");
    let mut lanes = LaneSet::new(&gpu);
    for round in 0..20 {
        // An ordinary scope between replays, on the same lanes.
        lanes.scope(|s| s.lanes(4).map(drop)).expect("ordinary scope");
        lanes
            .scope(|s| {
                let lane = s.lane()?;
                let outputs = lane.enter(|st| st.replay(&g))?.wait()?;
                let all = outputs.get::<f32>(0)?;
                for j in 0..cols {
                    let want = j as f32 + 6.0;
                    assert!(all[j * n..(j + 1) * n].iter().all(|v| *v == want), "round {round}, column {j}");
                }
                // The outputs are out: a second replay would overwrite them, and is refused.
                assert!(matches!(lane.enter(|st| st.replay(&g).map(drop)), Err(Error::ReplayInUse)));
                Ok(())
            })
            .expect("replay");
    }
}

fn host_waits_are_refused_while_recording(gpu: Gpu) {
    let mut m = gpu.alloc_buffer::<f32>(256).expect("alloc");
    let mut host = gpu.pinned_buffer::<f32>(256).expect("pinned");
    let err = graph(&gpu, |s| {
        s.lane()?.enter(|st| {
            let v = st.bind(m.as_columns_mut());
            st.copy_to_host(&v, host.as_pinned_mut())?.wait().map(drop)
        })
    })
    .map(drop)
    .unwrap_err();
    assert_eq!(err.primary(), &Error::Recording { what: "Pending::wait" });
}

/// The program issue 19 found refused: a graph that recorded `s.upload(&data)` does not keep
/// `data` borrowed (the upload was staged into the graph's own buffer), so the host changes
/// `data` after recording and hands it to `write_input`; the replay computes with the new
/// values, checked against a reference.
fn data_uploaded_in_a_recording_is_the_hosts_again_after_it(gpu: Gpu) {
    const N: usize = 4096;
    let mut data: Vec<f32> = (0..N).map(|i| i as f32 * 0.25 - 7.0).collect();
    let mut host = gpu.pinned_buffer::<f32>(N).expect("pinned");
    let (mut g, ()) = graph(&gpu, |s| {
        let x = s.upload(&data)?; // input 0, staged now
        let y = s.alloc_buffer::<f32>(N)?;
        s.lane()?.enter(|st| {
            let x = st.await_fence(&x)?;
            let mut y = st.bind(y.as_columns_mut());
            st.zero(&mut y)?;
            st.launch(&kernels::saxpy, LaunchConfig::for_elements(N, 256), (&mut y, &x, 2.0))?;
            st.copy_to_host(&y, host.as_pinned_mut()).map(drop) // output 0
        })
    })
    .expect("record");
    // The recording let go of `data`: change it and give it to the graph.
    for (i, v) in data.iter_mut().enumerate() {
        *v = (i % 97) as f32 - 48.5;
    }
    g.write_input(0, &data).expect("new input");
    scope(&gpu, |s| {
        let outputs = s.lane()?.enter(|st| st.replay(&g))?.wait()?;
        let y = outputs.get::<f32>(0)?;
        for (i, (y, x)) in y.iter().zip(&data).enumerate() {
            assert_eq!(*y, 2.0 * x, "element {i}");
        }
        Ok(())
    })
    .expect("replay");
}

on_every_backend!(
    data_uploaded_in_a_recording_is_the_hosts_again_after_it,
    the_seed_workload_recorded_once_replays_a_thousand_times_with_new_inputs,
    scalar_arguments_change_between_replays,
    hand_offs_and_fan_ins_inside_a_graph_and_replays_between_scopes,
    host_waits_are_refused_while_recording,
);
