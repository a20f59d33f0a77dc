//! Faults and recovery on a real GPU, one process of its own (a fault loses the device's
//! context for the whole process until `Gpu::reset`): a kernel that fails on one of four
//! lanes while the others run names its lane and kernel, with the failing thread's message;
//! the same kernel on every lane names the candidates; the device is lost for every later
//! `Gpu` until reset, then works again. A scope that runs out of memory leaves the pool
//! trimmed. On the CPU backend the same failing launch is a `KernelFault` of its lane.
//!
//! CUDA tests need an NVIDIA GPU: `cargo test --test gpu_faults -- --ignored`.

mod common;

use std::sync::Mutex;

use sluice::{kernels, scope, Error, Gpu, LaneId, LaunchConfig, Result};

/// The tests here lose and reset the device: one at a time.
static DEVICE: Mutex<()> = Mutex::new(());

/// Roughly 10 ms of an H200 multiprocessor's clock (1.98 GHz).
const TEN_MS: u64 = 20_000_000;

/// Four lanes, each launching `spin_then_fail` on 256 threads; lane `j` spins `cycles[j]`
/// and thread `fail[j]` of lane `j` fails (`u32::MAX`: none). Lanes with `long[j]` run the
/// `potential_tiled` kernel on a large input instead (about 100 ms on an H200).
fn four_lanes(gpu: &Gpu, cycles: [u64; 4], fail: [u32; 4], long: [bool; 4], rows: usize) -> Result<()> {
    let mut rng = common::rng();
    let (targets, sources) = (common::particles(&mut rng, rows), common::particles(&mut rng, 64 * rows));
    scope(gpu, |s| {
        let (t, src) = (s.upload(&targets)?, s.upload(&sources)?);
        let out = s.alloc_matrix::<u32>(256, 4)?;
        let pot = s.alloc_matrix::<f32>(rows, 4)?;
        for (j, ((lane, col), pcol)) in
            s.lanes(4)?.into_iter().zip(out.columns_mut()).zip(pot.columns_mut()).enumerate()
        {
            lane.enter(|st| {
                if long[j] {
                    let (t, src) = (st.await_fence(&t)?, st.await_fence(&src)?);
                    let mut p = st.bind(pcol);
                    st.launch(
                        &kernels::potential_tiled,
                        LaunchConfig::for_elements(rows, 256),
                        (&mut p, &t, &src, 1e-3),
                    )
                } else {
                    let mut c = st.bind(col);
                    st.launch(
                        &kernels::spin_then_fail,
                        LaunchConfig::for_elements(256, 256),
                        (&mut c, cycles[j], fail[j]),
                    )
                }
            })?;
        }
        Ok(())
    })
}

/// The lost-context error of a scope, whatever else it chains.
fn context_lost(e: &Error) -> &Error {
    match e {
        Error::Cleanup { error, cleanup } if !matches!(**error, Error::ContextLost { .. }) => {
            cleanup.iter().find(|e| matches!(e, Error::ContextLost { .. })).unwrap_or(e)
        }
        Error::Cleanup { error, .. } => error,
        e => e,
    }
}

/// Resets device 0 and checks that it computes again (saxpy against its reference).
fn reset_and_check() {
    Gpu::reset(0).expect("reset the device");
    let gpu = Gpu::cuda(0).expect("a new context after the reset");
    let x: Vec<f32> = (0..4096).map(|i| i as f32 * 0.5).collect();
    let mut host = gpu.pinned_buffer::<f32>(x.len()).expect("pinned");
    host.fill(f32::NAN);
    scope(&gpu, |s| {
        let xs = s.upload(&x)?;
        let y = s.alloc_buffer::<f32>(x.len())?;
        s.lane()?.enter(|st| {
            let x = st.await_fence(&xs)?;
            let mut y = st.bind(y.as_columns_mut());
            st.zero(&mut y)?;
            st.launch(&kernels::saxpy, LaunchConfig::for_elements(x.len(), 256), (&mut y, &x, 2.0))?;
            st.copy_to_host(&y, host.as_pinned_mut())?.wait().map(drop)
        })
    })
    .expect("a scope after the reset");
    assert!(host.iter().zip(&x).all(|(y, x)| *y == 2.0 * x), "saxpy after the reset");
}

#[test]
#[ignore = "needs an NVIDIA GPU: run with --ignored on a GPU machine"]
fn a_kernel_failing_on_one_of_four_lanes_is_named_and_the_device_recovers_after_a_reset() {
    let _device = DEVICE.lock().unwrap_or_else(|p| p.into_inner());
    let gpu = common::gpu();
    // Lanes 0, 1, 3 run a long potential; lane 2 fails (thread 100) after about 10 ms,
    // while they run. The first lane to be joined is lane 0, not the one that failed.
    let e = four_lanes(&gpu, [0, 0, TEN_MS, 0], [u32::MAX, u32::MAX, 100, u32::MAX], [true, true, false, true], 65_536)
        .expect_err("the scope reports the fault");
    println!("the error: {e}");
    let Error::ContextLost { lane, fault: Some(fault), .. } = context_lost(&e) else {
        panic!("expected ContextLost with the device's fault record, got {e:?}")
    };
    assert_eq!(*lane, Some(LaneId::Lane(2)), "the lane whose kernel failed");
    assert_eq!(fault.kernel, Some("spin_then_fail"));
    assert_eq!(fault.lanes, vec![LaneId::Lane(2)]);
    assert_eq!((fault.block, fault.thread), ([0, 0, 0], [100, 0, 0]));
    assert!(fault.message.contains("spin_then_fail: failing as asked"), "{}", fault.message);
    assert!(fault.message.contains("gpu-kernels/src/probe.rs:"), "the location: {}", fault.message);

    // Lost for every later user of the device, with the original fault, until reset.
    let again = scope(&gpu, |_| Ok(()));
    assert!(matches!(again, Err(Error::ContextLost { lane: None, .. })), "{again:?}");
    assert!(matches!(Gpu::cuda(0), Err(Error::ContextLost { .. })), "a new Gpu says the context is lost");
    drop(gpu);
    reset_and_check();
}

#[test]
#[ignore = "needs an NVIDIA GPU: run with --ignored on a GPU machine"]
fn the_same_kernel_failing_on_one_of_four_lanes_names_the_kernel_and_its_lanes() {
    let _device = DEVICE.lock().unwrap_or_else(|p| p.into_inner());
    let gpu = common::gpu();
    let e = four_lanes(
        &gpu,
        [5 * TEN_MS, 5 * TEN_MS, TEN_MS, 5 * TEN_MS],
        [u32::MAX, u32::MAX, 7, u32::MAX],
        [false; 4],
        256,
    )
    .expect_err("the scope reports the fault");
    println!("the error: {e}");
    let Error::ContextLost { fault: Some(fault), .. } = context_lost(&e) else { panic!("{e:?}") };
    assert_eq!(fault.kernel, Some("spin_then_fail"));
    // The record cannot tell four launches of one kernel apart: all four are named.
    assert_eq!(fault.lanes, (0..4).map(LaneId::Lane).collect::<Vec<_>>());
    assert_eq!(fault.thread, [7, 0, 0]);
    drop(gpu);
    reset_and_check();
}

#[test]
#[ignore = "needs an NVIDIA GPU: run with --ignored on a GPU machine"]
fn a_scope_that_runs_out_of_memory_leaves_the_pool_trimmed() {
    let _device = DEVICE.lock().unwrap_or_else(|p| p.into_inner());
    let gpu = common::gpu();
    let free_before = common::free_device_memory(&gpu);
    let r = scope(&gpu, |s| {
        let _most = s.alloc_matrix::<u8>(free_before / 2, 1)?;
        s.alloc_matrix::<u8>(free_before, 1).map(drop) // does not fit
    });
    assert!(matches!(r, Err(Error::OutOfMemory { .. })), "{r:?}");
    // No trim_memory_pool here: the scope did it.
    let free_after = gpu.mem_info().expect("mem info").free;
    println!("free before {free_before}, after the scope {free_after}");
    assert!(free_after + (64 << 20) >= free_before, "the pool kept {} bytes", free_before - free_after);
}

#[test]
fn on_the_cpu_a_failing_kernel_is_a_fault_of_its_lane_and_the_others_finish() {
    let gpu = common::cpu();
    let e = four_lanes(&gpu, [0; 4], [u32::MAX, u32::MAX, 100, u32::MAX], [true, true, false, true], 512)
        .expect_err("the scope reports the fault");
    let Error::KernelFault { lane, message } = e.primary() else { panic!("{e:?}") };
    assert_eq!(*lane, LaneId::Lane(2));
    assert!(
        message.contains("spin_then_fail: failing as asked") && message.contains("thread (100, 0, 0)"),
        "{message}"
    );
    // The CPU backend keeps working: no context to lose.
    four_lanes(&gpu, [0; 4], [u32::MAX; 4], [false, true, false, true], 512).expect("the next scope runs");
}
