//! Scopes on a real GPU: leaking guards with `mem::forget` is harmless (rule 5), owned
//! memory outlives scopes, timestamps, pre-resolved kernels, lanes entered from several
//! host threads.
//!
//! Needs an NVIDIA GPU: `cargo test --test gpu_scope -- --ignored`. Without one it fails.

mod common;

use rand::Rng;
use sluice::{kernels, scope, Backend, Checked, Error, Gpu, LaunchConfig, Mut, SubmitConfig};

const N: usize = 1 << 18;

fn cfg() -> LaunchConfig {
    LaunchConfig::for_elements(N, 256)
}

fn forgetting_pending_copies_fences_and_views_is_harmless(gpu: Gpu) {
    let mut host = gpu.pinned_matrix::<f32>(N, 3).expect("pinned");
    host.fill(f32::NAN);
    scope(&gpu, |s| {
        let m = s.alloc_matrix::<f32>(N, 3)?;
        let mut cols = m.columns_mut();
        let mut dsts = host.columns_mut();
        let lane = s.lane()?;
        // A pending copy, forgotten: its destination stays borrowed until the scope has joined.
        let p = lane.enter(|st| {
            let mut v = st.bind(cols.next().expect("3 columns"));
            for _ in 0..20 {
                st.launch(&kernels::fill_column, cfg(), (&mut v, 1.0))?;
            }
            st.copy_to_host(&v, dsts.next().expect("3 columns"))
        })?;
        std::mem::forget(p);
        // A fenced hand-off, forgotten.
        let f = lane.enter(|st| {
            let mut v = st.bind(cols.next().expect("3 columns"));
            st.launch(&kernels::fill_column, cfg(), (&mut v, 2.0))?;
            st.fence(v)
        })?;
        std::mem::forget(f);
        // A pending copy dropped without waiting (views have no destructor to skip at all).
        let p = lane.enter(|st| {
            let mut v = st.bind(cols.next().expect("3 columns"));
            st.launch(&kernels::fill_column, cfg(), (&mut v, 3.0))?;
            // Host column 1 is skipped: the hand-off above copied nothing.
            st.copy_to_host(&v, dsts.nth(1).expect("3 columns"))
        })?;
        drop(p);
        Ok(())
    })
    .expect("scope");
    // The scope joined its lane: both copies are complete.
    assert!(host.column(0).unwrap().iter().all(|v| *v == 1.0));
    assert!(host.column(1).unwrap().iter().all(|v| v.is_nan()), "no copy targeted host column 1");
    assert!(host.column(2).unwrap().iter().all(|v| *v == 3.0));
}

fn owned_device_memory_outlives_scopes(gpu: Gpu) {
    let mut m = gpu.alloc_matrix::<f32>(N, 2).expect("alloc");
    let mut host = gpu.pinned_matrix::<f32>(N, 2).expect("pinned");
    scope(&gpu, |s| {
        let (a, b) = m.split_columns_mut(1).expect("2 columns");
        let (la, lb) = (s.lane()?, s.lane()?);
        la.enter(|st| st.launch(&kernels::fill_column, cfg(), (&mut st.bind(a), 4.0)))?;
        lb.enter(|st| st.launch(&kernels::fill_column, cfg(), (&mut st.bind(b), 5.0)))?;
        Ok(())
    })
    .expect("first scope");
    scope(&gpu, |s| {
        let lane = s.lane()?;
        lane.enter(|st| st.copy_to_host(st.bind_ref(m.as_columns()), host.as_pinned_mut()))?;
        Ok(())
    })
    .expect("second scope");
    assert!(host.column(0).unwrap().iter().all(|v| *v == 4.0));
    assert!(host.column(1).unwrap().iter().all(|v| *v == 5.0));
    m.free().expect("free");
}

fn timestamps_and_resolved_functions(gpu: Gpu) {
    let fill = gpu.function(&kernels::fill_column).expect("resolve");
    let (kernel_ms, total_ms, across_lanes_ms) = scope(&gpu, |s| {
        // On the scope's upload lane: not ordered with the lane below (nothing awaits it),
        // so the time between the two may have either sign; only its being a number is
        // checked. The order asserted below is within one lane, where it holds.
        let scope_start = s.timestamp()?;
        let m = s.alloc_buffer::<f32>(N)?;
        let (start, t0, t1) = s.lane()?.enter(|st| {
            let mut v = st.bind(m.as_columns_mut());
            let start = st.timestamp()?;
            st.launch(&fill, cfg(), (&mut v, 0.0))?;
            let t0 = st.timestamp()?;
            for _ in 0..10 {
                st.launch(&fill, cfg(), (&mut v, 1.0))?;
            }
            Ok::<_, sluice::Error>((start, t0, st.timestamp()?))
        })?;
        Ok((t1.elapsed_ms_since(&t0)?, t1.elapsed_ms_since(&start)?, t1.elapsed_ms_since(&scope_start)?))
    })
    .expect("scope");
    assert!(kernel_ms > 0.0 && kernel_ms <= total_ms, "kernel {kernel_ms} ms, total {total_ms} ms");
    assert!(across_lanes_ms.is_finite(), "{across_lanes_ms}");
}

fn lanes_entered_from_several_host_threads(gpu: Gpu) {
    let n = 8;
    let mut host = gpu.pinned_matrix::<f32>(N, n).expect("pinned");
    scope(&gpu, |s| {
        let m = s.alloc_matrix::<f32>(N, n)?;
        let lanes = s.lanes(n)?;
        std::thread::scope(|ts| {
            let handles: Vec<_> = lanes
                .into_iter()
                .zip(m.columns_mut())
                .zip(host.columns_mut())
                .enumerate()
                .map(|(j, ((lane, col), dst))| {
                    ts.spawn(move || {
                        lane.enter(|st| {
                            let mut v = st.bind(col);
                            st.launch(&kernels::fill_column, cfg(), (&mut v, j as f32))?;
                            st.copy_to_host(&v, dst)?.wait().map(drop)
                        })
                    })
                })
                .collect();
            handles.into_iter().try_for_each(|h| h.join().expect("thread"))
        })
    })
    .expect("scope");
    for j in 0..n {
        assert!(host.column(j).unwrap().iter().all(|v| *v == j as f32));
    }
}

/// PTX that exists only at run time (here: a copy of the embedded module in a `String`)
/// loads and launches without being leaked, and twice the same text is one module.
fn kernels_from_ptx_made_at_run_time(gpu: Gpu) {
    let ptx: String = kernels::PTX.to_owned();
    // SAFETY: `fill_column` of sluice's own kernels writes out[i] for i < out.len() only.
    let made = unsafe { gpu.function_from_ptx::<(Mut<f32>, f32), Checked>(ptx.clone(), "fill_column") };
    if gpu.backend() == Backend::Cpu {
        assert_eq!(made.err(), Some(Error::NoCpuEntry { name: "fill_column" }), "PTX alone cannot run on the CPU");
        return;
    }
    let fill = made.expect("the run-time PTX loads");
    // SAFETY: as above; a wrong name is an error, not a launch.
    let missing = unsafe { gpu.function_from_ptx::<(Mut<f32>, f32), Checked>(ptx, "no_such_kernel") };
    assert_eq!(missing.err(), Some(Error::KernelNotFound { name: "no_such_kernel" }));
    let mut host = gpu.pinned_buffer::<f32>(1000).expect("pinned");
    host.fill(f32::NAN);
    scope(&gpu, |s| {
        let m = s.alloc_buffer::<f32>(1000)?;
        s.lane()?.enter(|st| {
            let mut v = st.bind(m.as_columns_mut());
            st.launch(&fill, LaunchConfig::for_elements(1000, 256), (&mut v, 4.5))?;
            st.copy_to_host(&v, host.as_pinned_mut())?.wait().map(drop)
        })
    })
    .expect("scope");
    assert!(host.iter().all(|v| *v == 4.5));
}

/// A resolved function launches only on lanes of the `Gpu` value (or a clone) that
/// resolved it: another `Gpu::cuda` value of the same device has modules of its own, which
/// the launch must not outlive. (The CPU backend has one context for every `Gpu`.)
fn functions_stay_with_the_gpu_that_resolved_them(gpu: Gpu) {
    let other = match gpu.backend() {
        Backend::Cpu => Gpu::cpu(),
        _ => Gpu::cuda(0).expect("a second Gpu of device 0"),
    };
    let fill = other.function(&kernels::fill_column).expect("resolve");
    let r = scope(&gpu, |s| {
        let m = s.alloc_buffer::<f32>(256)?;
        s.lane()?.enter(|st| {
            let mut v = st.bind(m.as_columns_mut());
            st.launch(&fill, LaunchConfig::for_elements(256, 256), (&mut v, 1.0))
        })
    });
    match gpu.backend() {
        Backend::Cpu => assert_eq!(r, Ok(())),
        _ => assert_eq!(r, Err(Error::WrongDevice { what: "fill_column" })),
    }
    // A clone of the resolving Gpu is the same Gpu.
    let same = other.clone();
    scope(&same, |s| {
        let m = s.alloc_buffer::<f32>(256)?;
        s.lane()?.enter(|st| {
            let mut v = st.bind(m.as_columns_mut());
            st.launch(&fill, LaunchConfig::for_elements(256, 256), (&mut v, 1.0))
        })
    })
    .expect("a clone launches it");
}

/// `Scope::upload` borrows its source for the call only: the host changes the data right
/// after the upload, and the lanes still read what it held at the call — from pageable
/// memory (the driver's staging) and from pinned memory (the scope's own staging copy).
fn an_upload_takes_its_copy_before_it_returns(gpu: Gpu) {
    let first: Vec<f32> = (0..N).map(|i| (i % 1000) as f32 * 0.5).collect();
    let mut pageable = first.clone();
    let mut pinned = gpu.pinned_buffer::<f32>(N).expect("pinned");
    pinned.copy_from_slice(&first);
    let mut out = gpu.pinned_matrix::<f32>(N, 2).expect("pinned");
    scope(&gpu, |s| {
        let a = s.upload(&pageable)?;
        pageable.iter_mut().for_each(|v| *v = f32::NAN); // after the call: the upload's copy is taken
        let b = s.upload(&pinned)?;
        pinned.iter_mut().for_each(|v| *v = f32::NAN);
        let y = s.alloc_matrix::<f32>(N, 2)?;
        for ((lane, (col, dst)), x) in s.lanes(2)?.into_iter().zip(y.columns_mut().zip(out.columns_mut())).zip([&a, &b])
        {
            lane.enter(|st| {
                let x = st.await_fence(x)?;
                let mut col = st.bind(col);
                st.zero(&mut col)?;
                st.launch(&kernels::saxpy, cfg(), (&mut col, &x, 2.0))?;
                st.copy_to_host(&col, dst).map(drop)
            })?;
        }
        Ok(())
    })
    .expect("scope");
    for j in 0..2 {
        for (i, (y, x)) in out.column(j).unwrap().iter().zip(&first).enumerate() {
            assert_eq!(*y, 2.0 * x, "column {j}, element {i}");
        }
    }
}

/// Launches, fence records and fence waits made while the thread has another context
/// current (a second context of the same device), or none, run in the lanes' own context:
/// the driver layer skips making the context current for them where the driver takes it from
/// the stream (CUDA 13.0 on, `benches/cuda/ctx_probe.cu`), and makes it current on older
/// drivers or after a refused call. Directly submitted and deferred alike, the results are
/// exact.
fn launches_and_fences_whatever_context_is_current(gpu: Gpu) {
    use cudarc::driver::{result, sys};
    let dev = result::device::get(0).expect("device 0");
    let mut other: sys::CUcontext = std::ptr::null_mut();
    // SAFETY: a valid out-pointer; the context is destroyed below, after every scope joined.
    let made = unsafe { sys::cuCtxCreate_v2(&mut other, 0, dev) };
    assert_eq!(made, sys::CUresult::CUDA_SUCCESS, "a second context of device 0");
    let mut rng = common::rng();
    let mut host = gpu.pinned_matrix::<f32>(N, 1).expect("pinned");
    for (what, current) in [("another context", other), ("no context", std::ptr::null_mut())] {
        for (path, config) in [("direct", SubmitConfig::direct()), ("deferred", SubmitConfig::default())] {
            gpu.set_submit_config(config);
            let x: Vec<f32> = (0..N).map(|_| rng.random_range(-100i32..100) as f32).collect();
            let (fill, a) = (rng.random_range(-50i32..50) as f32, rng.random_range(-4i32..4) as f32);
            host.fill(f32::NAN);
            // SAFETY: `current` is the live second context or null; sluice's calls do not
            // depend on which context the thread has current.
            let leave = || unsafe { result::ctx::set_current(current) }.expect("set the current context");
            scope(&gpu, |s| {
                let xs = s.upload(&x)?;
                let y = s.alloc_buffer::<f32>(N)?;
                let lanes = s.lanes(2)?;
                let handed = lanes[0].enter(|st| {
                    let mut y = st.bind(y.as_columns_mut());
                    leave();
                    st.launch(&kernels::fill_column, cfg(), (&mut y, fill))?;
                    leave();
                    st.fence(y)
                })?;
                lanes[1].enter(|st| {
                    let x = st.await_fence(&xs)?;
                    leave();
                    let mut y = st.await_fence(handed)?;
                    leave();
                    st.launch(&kernels::saxpy, cfg(), (&mut y, &x, a))?;
                    leave();
                    st.copy_to_host(&y, host.column_mut(0).expect("one column"))
                })?;
                Ok(())
            })
            .unwrap_or_else(|e| panic!("{what} current, {path}: {e}"));
            for (i, (y, x)) in host.column(0).unwrap().iter().zip(&x).enumerate() {
                assert_eq!(*y, a * x + fill, "{what} current, {path}: element {i}");
            }
        }
    }
    gpu.set_submit_config(SubmitConfig::default());
    // SAFETY: the context was made above; nothing of it is in use (no work was made in it).
    assert_eq!(unsafe { sys::cuCtxDestroy_v2(other) }, sys::CUresult::CUDA_SUCCESS);
}

on_every_backend!(
    an_upload_takes_its_copy_before_it_returns,
    functions_stay_with_the_gpu_that_resolved_them,
    kernels_from_ptx_made_at_run_time,
    forgetting_pending_copies_fences_and_views_is_harmless,
    owned_device_memory_outlives_scopes,
    timestamps_and_resolved_functions,
    lanes_entered_from_several_host_threads;
    cuda_only: launches_and_fences_whatever_context_is_current,
);
