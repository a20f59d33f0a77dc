//! Hand-offs between lanes on a real GPU: producer/consumer chains, shared read-only data
//! after a write, host waits, and the counters of rule 7 (awaiting a fence on its own lane
//! enqueues nothing).
//!
//! Needs an NVIDIA GPU: `cargo test --test gpu_handoff -- --ignored`. Without one every
//! test here fails.

mod common;

use rand::Rng;
use sluice::{kernels, scope, Error, Gpu, LaunchConfig};

const N: usize = 1 << 16;

fn cfg(n: usize) -> LaunchConfig {
    LaunchConfig::for_elements(n, 256)
}

fn producer_hands_a_column_to_a_consumer(gpu: Gpu) {
    let mut rng = common::rng();
    let x: Vec<f32> = (0..N).map(|_| rng.random_range(-100i32..100) as f32).collect();
    let (fill, a) = (rng.random_range(-50i32..50) as f32, rng.random_range(-4i32..4) as f32);
    let mut host = gpu.pinned_buffer::<f32>(N).expect("pinned");
    host.fill(f32::NAN);
    scope(&gpu, |s| {
        let xs = s.upload(&x)?;
        let y = s.alloc_buffer::<f32>(N)?;
        let (producer, consumer) = (s.lane()?, s.lane()?);
        // Producer: a long chain of kernels so the consumer would see stale data without the wait.
        let handed = producer.enter(|st| {
            let mut y = st.bind(y.as_columns_mut());
            for _ in 0..50 {
                st.launch(&kernels::fill_column, cfg(N), (&mut y, f32::NAN))?;
            }
            st.launch(&kernels::fill_column, cfg(N), (&mut y, fill))?;
            st.fence(y)
        })?;
        let done = consumer.enter(|st| {
            let x = st.await_fence(&xs)?;
            let mut y = st.await_fence(handed)?;
            st.launch(&kernels::saxpy, cfg(N), (&mut y, &x, a))?;
            st.copy_to_host(&y, host.as_pinned_mut())
        })?;
        assert_eq!(consumer.stats().waits_enqueued, 2); // the upload and the hand-off
        assert_eq!(producer.stats().waits_enqueued, 0);
        done.wait().map(drop)
    })
    .expect("scope");
    for (i, (got, xi)) in host.iter().zip(&x).enumerate() {
        assert_eq!(*got, a * xi + fill, "element {i}");
    }
}

fn a_column_travels_through_a_chain_of_lanes(gpu: Gpu) {
    let lanes = 12;
    let ones = vec![1.0f32; N];
    let mut host = gpu.pinned_buffer::<f32>(N).expect("pinned");
    scope(&gpu, |s| {
        let one = s.upload(&ones)?;
        let col = s.alloc_buffer::<f32>(N)?;
        let lanes = s.lanes(lanes)?;
        let mut token = lanes[0].enter(|st| {
            let mut v = st.bind(col.as_columns_mut());
            st.launch(&kernels::fill_column, cfg(N), (&mut v, 0.0))?;
            st.fence(v)
        })?;
        // Each lane adds its index + 1: the result is 1 + 2 + ... + lanes, exactly.
        for (k, lane) in lanes.iter().enumerate() {
            token = lane.enter(|st| {
                let x = st.await_fence(&one)?;
                let mut v = st.await_fence(token)?;
                st.launch(&kernels::saxpy, cfg(N), (&mut v, &x, (k + 1) as f32))?;
                st.fence(v)
            })?;
        }
        let last = lanes[lanes.len() - 1];
        last.enter(|st| {
            let v = st.await_fence(token)?;
            st.copy_to_host(&v, host.as_pinned_mut())
        })?
        .wait()
        .map(drop)
    })
    .expect("scope");
    let want = (lanes * (lanes + 1) / 2) as f32;
    assert!(host.iter().all(|v| *v == want), "want {want}, got {:?}", &host[..4]);
}

fn a_written_column_becomes_shared_read_only_data(gpu: Gpu) {
    let readers = 6;
    let mut host = gpu.pinned_matrix::<f32>(N, readers).expect("pinned");
    host.fill(f32::NAN);
    scope(&gpu, |s| {
        let src = s.alloc_buffer::<f32>(N)?;
        let out = s.alloc_matrix::<f32>(N, readers)?;
        let writer = s.lane()?;
        let shared = writer
            .enter(|st| {
                let mut v = st.bind(src.as_columns_mut());
                for _ in 0..20 {
                    st.launch(&kernels::fill_column, cfg(N), (&mut v, -1.0))?;
                }
                st.launch(&kernels::fill_column, cfg(N), (&mut v, 3.0))?;
                st.fence(v)
            })?
            .into_shared();
        for (r, ((lane, col), dst)) in
            s.lanes(readers)?.into_iter().zip(out.columns_mut()).zip(host.columns_mut()).enumerate()
        {
            lane.enter(|st| {
                let x = st.await_fence(&shared)?;
                let mut y = st.bind(col);
                st.launch(&kernels::fill_column, cfg(N), (&mut y, r as f32))?;
                st.launch(&kernels::saxpy, cfg(N), (&mut y, &x, 2.0))?;
                st.copy_to_host(&y, dst)
            })?;
        }
        Ok(())
    })
    .expect("scope");
    for r in 0..readers {
        assert!(host.column(r).unwrap().iter().all(|v| *v == r as f32 + 6.0), "reader {r}");
    }
}

fn the_host_awaits_a_hand_off_then_any_lane_binds_it_without_a_wait(gpu: Gpu) {
    let mut host = gpu.pinned_buffer::<f32>(N).expect("pinned");
    scope(&gpu, |s| {
        let col = s.alloc_buffer::<f32>(N)?;
        let (a, b) = (s.lane()?, s.lane()?);
        let fenced = a.enter(|st| {
            let mut v = st.bind(col.as_columns_mut());
            st.launch(&kernels::fill_column, cfg(N), (&mut v, 9.0))?;
            st.fence(v)
        })?;
        let cols = fenced.wait()?; // host-side event wait
        let done = b.enter(|st| {
            let v = st.bind(cols);
            st.copy_to_host(&v, host.as_pinned_mut())
        })?;
        assert_eq!(b.stats().waits_enqueued, 0);
        done.wait().map(drop)
    })
    .expect("scope");
    assert!(host.iter().all(|v| *v == 9.0));
}

fn awaiting_a_fence_on_its_own_lane_enqueues_nothing(gpu: Gpu) {
    let mut host = gpu.pinned_buffer::<f32>(N).expect("pinned");
    scope(&gpu, |s| {
        let col = s.alloc_buffer::<f32>(N)?;
        let (a, b) = (s.lane()?, s.lane()?);
        let fenced = a.enter(|st| {
            let mut v = st.bind(col.as_columns_mut());
            st.launch(&kernels::fill_column, cfg(N), (&mut v, 5.0))?;
            st.fence(v)
        })?;
        assert_eq!(a.stats().events_recorded, 1);
        // Same lane, another entry: stream order covers it, no wait.
        let fenced = a.enter(|st| {
            let mut v = st.await_fence(fenced)?;
            st.launch(&kernels::fill_column, cfg(N), (&mut v, 6.0))?;
            st.fence(v)
        })?;
        let a_stats = a.stats();
        assert_eq!((a_stats.waits_enqueued, a_stats.events_recorded, a_stats.launches), (0, 2, 2));
        // Another lane: exactly one wait.
        let done = b.enter(|st| {
            let v = st.await_fence(fenced)?;
            st.copy_to_host(&v, host.as_pinned_mut())
        })?;
        let b_stats = b.stats();
        assert_eq!((b_stats.waits_enqueued, b_stats.events_recorded, b_stats.copies), (1, 1, 1));
        // A plain fence awaited on its own lane: nothing either.
        let f = b.enter(|st| st.record())?;
        b.enter(|st| st.await_fence(&f))?;
        assert_eq!(b.stats().waits_enqueued, 1);
        a.enter(|st| st.await_fence(&f))?;
        assert_eq!(a.stats().waits_enqueued, 1);
        done.wait().map(drop)
    })
    .expect("scope");
    assert!(host.iter().all(|v| *v == 6.0));
}

fn host_to_device_copies_on_a_lane(gpu: Gpu) {
    let mut rng = common::rng();
    let mut input = gpu.pinned_matrix::<f32>(1000, 3).expect("pinned");
    for v in input.iter_mut() {
        *v = rng.random_range(-1000i32..1000) as f32;
    }
    let mut back = gpu.pinned_matrix::<f32>(1000, 3).expect("pinned");
    scope(&gpu, |s| {
        let m = s.alloc_matrix_padded::<f32>(1000, 3, 1024)?;
        s.lane()?.enter(|st| {
            let mut v = st.bind(m.as_columns_mut());
            st.zero(&mut v)?;
            st.copy_to_device(&input, &mut v)?; // a pitched 2-D copy
            st.copy_to_host(&v, back.as_pinned_mut())
        })?;
        Ok(())
    })
    .expect("scope");
    assert_eq!(&input[..], &back[..]);
}

/// "Split, or else use it whole": the `try_` forms give their input back on failure, and
/// hand-offs that cannot be joined come back to be awaited one by one.
fn failed_splits_and_joins_give_their_input_back(gpu: Gpu) {
    let mut host = gpu.pinned_matrix::<f32>(64, 4).expect("pinned");
    host.fill(f32::NAN);
    scope(&gpu, |s| {
        let m = s.alloc_matrix::<f32>(64, 4)?;
        let mut cols = m.columns_mut();
        let (c0, c1, c2, c3) = (cols.next(), cols.next(), cols.next(), cols.next());
        let (c0, c1, c2, c3) = (c0.unwrap(), c1.unwrap(), c2.unwrap(), c3.unwrap());
        let lanes = s.lanes(2)?;
        // Columns 0 and 2 are handed off: not adjacent, so not one view.
        let handed = lanes[0].enter(|st| {
            let mut out = Vec::new();
            for (c, v) in [(c0, 1.0), (c2, 3.0)] {
                let mut c = st.bind(c);
                st.launch(&kernels::fill_column, LaunchConfig::for_elements(64, 64), (&mut c, v))?;
                out.push(st.fence(c)?);
            }
            Ok::<_, Error>(out)
        })?;
        lanes[1].enter(|st| {
            let parts = match st.try_await_all(handed) {
                Ok(_) => panic!("columns 0 and 2 are not adjacent"),
                Err((e, parts)) => {
                    assert_eq!(e, Error::NotAdjacent);
                    parts
                }
            };
            assert_eq!(parts.len(), 2, "both hand-offs came back");
            let mut dst = host.columns_mut();
            let (d0, d1, d2, d3) = (dst.next().unwrap(), dst.next().unwrap(), dst.next().unwrap(), dst.next().unwrap());
            for (part, d) in parts.into_iter().zip([d0, d2]) {
                let v = st.await_fence(part)?;
                st.copy_to_host(&v, d)?;
            }
            // A split past the end gives the view back whole.
            let v = st.bind(c1);
            let mut whole = match v.try_split_rows(65) {
                Ok(_) => panic!("64 rows cannot split at 65"),
                Err(whole) => whole,
            };
            st.launch(&kernels::fill_column, LaunchConfig::for_elements(64, 64), (&mut whole, 2.0))?;
            let whole = match whole.try_split_columns(2) {
                Ok(_) => panic!("one column cannot split at 2"),
                Err(whole) => whole,
            };
            st.copy_to_host(&whole, d1)?;
            let (mut top, mut bottom) = st.bind(c3).try_split_rows(32).map_err(|_| Error::NotAdjacent)?;
            st.launch(&kernels::fill_column, LaunchConfig::for_elements(32, 32), (&mut top, 4.0))?;
            st.launch(&kernels::fill_column, LaunchConfig::for_elements(32, 32), (&mut bottom, 4.0))?;
            let (d_top, d_bottom) = d3.split_at(32).expect("64 rows");
            st.copy_to_host(&top, d_top)?;
            st.copy_to_host(&bottom, d_bottom)?.wait().map(drop)
        })
    })
    .expect("scope");
    for (j, want) in [1.0, 2.0, 3.0, 4.0].into_iter().enumerate() {
        assert!(host.column(j).unwrap().iter().all(|v| *v == want), "column {j}");
    }
}

on_every_backend!(
    failed_splits_and_joins_give_their_input_back,
    producer_hands_a_column_to_a_consumer,
    a_column_travels_through_a_chain_of_lanes,
    a_written_column_becomes_shared_read_only_data,
    the_host_awaits_a_hand_off_then_any_lane_binds_it_without_a_wait,
    awaiting_a_fence_on_its_own_lane_enqueues_nothing,
    host_to_device_copies_on_a_lane,
);
