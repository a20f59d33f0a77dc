//! Faults and recovery on a real GPU. A kernel fault loses the device's context for the
//! whole process (CUDA: "to continue using CUDA, the process must be terminated"), so each
//! fault runs in a child process (this same binary, `--child NAME`), and the parent checks
//! what the child reported and then uses the GPU itself:
//!
//! * a kernel failing on one of four lanes while the others run names its lane and kernel,
//!   with the failing thread's block, thread and message; later scopes and new `Gpu`s of
//!   the device say the context is lost; `Gpu::reset` says whether CUDA lets the process
//!   use the device again (`Error::RestartRequired` where it does not);
//! * the same kernel failing on one of four lanes names the kernel and all four lanes;
//! * a scope that runs out of memory leaves the pool trimmed (no fault);
//! * a slice too short for a loop whose bounds checks the range-check pass moved before it
//!   still traps (`column_sums`);
//! * on the CPU backend a failing launch is a `KernelFault` of its lane (always runs), also
//!   when an automatic graph ran it on another lane's stream (the other lanes' work is done),
//!   and a traced scope reports nothing else.
//!
//! A custom harness (`harness = false`): the CUDA tests run with `--ignored` (as the GPU
//! tests of the other files) and fail without a GPU; without `--ignored` they are reported
//! skipped.

mod common;

use std::process::{Command, ExitCode};

use sluice::{kernels, scope, Error, Gpu, LaneId, LaunchConfig, Result};

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

/// A saxpy scope on `gpu`, checked against its reference.
fn saxpy_works(gpu: &Gpu) -> Result<()> {
    let x: Vec<f32> = (0..4096).map(|i| i as f32 * 0.5).collect();
    let mut host = gpu.pinned_buffer::<f32>(x.len())?;
    host.fill(f32::NAN);
    scope(gpu, |s| {
        let xs = s.upload(&x)?;
        let y = s.alloc_buffer::<f32>(x.len())?;
        s.lane()?.enter(|st| {
            let x = st.await_fence(&xs)?;
            let mut y = st.bind(y.as_columns_mut());
            st.zero(&mut y)?;
            st.launch(&kernels::saxpy, LaunchConfig::for_elements(x.len(), 256), (&mut y, &x, 2.0))?;
            st.copy_to_host(&y, host.as_pinned_mut())?.wait().map(drop)
        })
    })?;
    assert!(host.iter().zip(&x).all(|(y, x)| *y == 2.0 * x), "saxpy results");
    Ok(())
}

/// After the fault: the device is lost for later scopes and new `Gpu`s; then the reset,
/// which either gives the device back (checked with a saxpy) or says to restart.
fn after_the_fault(gpu: Gpu) {
    let again = scope(&gpu, |_| Ok(()));
    assert!(matches!(again, Err(Error::ContextLost { lane: None, .. })), "{again:?}");
    assert!(matches!(Gpu::cuda(0), Err(Error::ContextLost { .. })), "a new Gpu says the context is lost");
    drop(gpu);
    match Gpu::reset(0) {
        Ok(()) => {
            saxpy_works(&Gpu::cuda(0).expect("a new context after the reset")).expect("saxpy after the reset");
            println!("child: the reset gave the device back to this process");
        }
        Err(e @ Error::RestartRequired { .. }) => {
            println!("child: {e}");
            assert!(matches!(Gpu::cuda(0), Err(Error::ContextLost { .. })), "still lost after a refused reset");
        }
        Err(e) => panic!("the reset failed otherwise: {e:?}"),
    }
}

/// Child: lanes 0, 1, 3 run a long potential; lane 2 fails (thread 100) after about 10 ms,
/// while they run. The first lane joined is lane 0, not the one that failed.
fn child_one_of_four() {
    let gpu = common::gpu();
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
    after_the_fault(gpu);
}

/// Child: the same kernel on all four lanes, lane 2's fails: the record names the kernel,
/// and all four lanes as the candidates.
fn child_same_kernel() {
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
    assert_eq!(fault.lanes, (0..4).map(LaneId::Lane).collect::<Vec<_>>());
    assert_eq!(fault.thread, [7, 0, 0]);
    after_the_fault(gpu);
}

/// One lane runs `write_at` past the end of its column (a `DeviceSliceMut::write` out of
/// bounds, in a kernel with no `dfail!` of its own).
fn write_past_the_end(gpu: &Gpu) -> Result<()> {
    scope(gpu, |s| {
        let out = s.alloc_matrix::<u32>(256, 2)?;
        for (lane, col) in s.lanes(2)?.into_iter().zip(out.columns_mut()) {
            lane.enter(|st| {
                let mut c = st.bind(col);
                st.launch(&kernels::write_at, LaunchConfig::for_elements(256, 256), (&mut c, 1000))
            })?;
        }
        Ok(())
    })
}

/// Child: a `DeviceSliceMut::write` out of bounds is attributed to its kernel (the fault is
/// located at the kernel's line, not in the device std), and the location is the kernel
/// crate's path, relative (not the build machine's absolute path).
fn child_write_out_of_bounds() {
    let gpu = common::gpu();
    let e = write_past_the_end(&gpu).expect_err("the scope reports the fault");
    println!("the error: {e}");
    let Error::ContextLost { fault: Some(fault), .. } = context_lost(&e) else { panic!("{e:?}") };
    assert_eq!(fault.kernel, Some("write_at"), "{}", fault.message);
    assert!(fault.message.contains("DeviceSliceMut::write out of bounds"), "{}", fault.message);
    assert!(fault.message.starts_with("kernel failed at gpu-kernels/src/probe.rs:"), "{}", fault.message);
    after_the_fault(gpu);
}

/// `column_sums` over a `rows × cols` matrix one element short: the last column's last row
/// is out of bounds. Its thread's test before the loop (the range-check pass) fails, so it
/// runs the checked copy of the loop, which traps at the missing element.
fn short_column_sums(gpu: &Gpu) -> Result<()> {
    let (rows, cols) = (1000usize, 64usize);
    let m = vec![1.0f32; rows * cols - 1];
    scope(gpu, |s| {
        let input = s.upload(&m)?;
        let out = s.alloc_buffer::<f32>(cols)?;
        s.lane()?.enter(|st| {
            let input = st.await_fence(&input)?;
            let mut out = st.bind(out.as_columns_mut());
            st.launch(&kernels::column_sums, LaunchConfig::for_elements(cols, 64), (&mut out, &input, rows, cols))
        })
    })
}

/// Child: a bounds check that the range-check pass moved before its loop still traps when
/// the slice is short.
fn child_short_column_sums() {
    let gpu = common::gpu();
    let e = short_column_sums(&gpu).expect_err("the bounds check traps");
    println!("the error: {e}");
    // The trap records nothing; the one lane, and the kernel it ran, are named.
    let Error::ContextLost { lane, fault: None, kernels, .. } = context_lost(&e) else { panic!("{e:?}") };
    assert_eq!((*lane, &kernels[..]), (Some(LaneId::Lane(0)), &["column_sums"][..]), "{e}");
    assert!(e.to_string().contains("in `column_sums` (the kernel it launched in this scope"), "{e}");
    after_the_fault(gpu);
}

/// Runs `--child name` of this binary; its output is printed; `Err` if it failed.
fn in_child(name: &str) -> std::result::Result<(), String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let out = Command::new(exe).args(["--child", name]).output().map_err(|e| e.to_string())?;
    print!("{}", String::from_utf8_lossy(&out.stdout));
    eprint!("{}", String::from_utf8_lossy(&out.stderr));
    if !out.status.success() {
        return Err(format!("the child `{name}` failed ({})", out.status));
    }
    // This process never faulted: the GPU is there for it, fault or no fault next door.
    saxpy_works(&common::gpu()).map_err(|e| format!("the parent after the child: {e}"))
}

fn a_kernel_failing_on_one_of_four_lanes_is_named() -> std::result::Result<(), String> {
    in_child("one_of_four")
}

fn the_same_kernel_failing_on_four_lanes_names_the_kernel_and_its_lanes() -> std::result::Result<(), String> {
    in_child("same_kernel")
}

fn a_write_out_of_bounds_names_its_kernel_and_a_relative_path() -> std::result::Result<(), String> {
    in_child("write_out_of_bounds")
}

fn a_short_slice_traps_in_a_loop_whose_checks_were_hoisted() -> std::result::Result<(), String> {
    in_child("short_column_sums")
}

fn on_the_cpu_a_short_slice_in_a_strided_loop_is_a_kernel_fault() -> std::result::Result<(), String> {
    let e = short_column_sums(&common::cpu()).expect_err("the bounds check fails");
    let Error::KernelFault { message, .. } = e.primary() else { return Err(format!("{e:?}")) };
    if !message.contains("out of bounds") {
        return Err(message.clone());
    }
    Ok(())
}

fn on_the_cpu_a_write_out_of_bounds_is_located_in_the_kernel() -> std::result::Result<(), String> {
    let e = write_past_the_end(&common::cpu()).expect_err("the scope reports the fault");
    let Error::KernelFault { message, .. } = e.primary() else { return Err(format!("{e:?}")) };
    if !message.contains("DeviceSliceMut::write out of bounds") || !message.contains("gpu-kernels/src/probe.rs:") {
        return Err(message.clone());
    }
    Ok(())
}

fn a_scope_that_runs_out_of_memory_leaves_the_pool_trimmed() -> std::result::Result<(), String> {
    let gpu = common::gpu();
    let free_before = common::free_device_memory(&gpu);
    let r = scope(&gpu, |s| {
        let _most = s.alloc_matrix::<u8>(free_before / 2, 1)?;
        s.alloc_matrix::<u8>(free_before, 1).map(drop) // does not fit
    });
    if !matches!(r, Err(Error::OutOfMemory { .. })) {
        return Err(format!("expected OutOfMemory, got {r:?}"));
    }
    // No trim_memory_pool here: the scope did it.
    let free_after = gpu.mem_info().map_err(|e| e.to_string())?.free;
    println!("free before {free_before}, after the scope {free_after}");
    if free_after + (64 << 20) < free_before {
        return Err(format!("the pool kept {} bytes", free_before - free_after));
    }
    Ok(())
}

fn on_the_cpu_a_failing_kernel_is_a_fault_of_its_lane_and_the_others_finish() -> std::result::Result<(), String> {
    let gpu = common::cpu();
    let e = four_lanes(&gpu, [0; 4], [u32::MAX, u32::MAX, 100, u32::MAX], [true, true, false, true], 512)
        .expect_err("the scope reports the fault");
    let Error::KernelFault { lane, message } = e.primary() else { return Err(format!("{e:?}")) };
    if *lane != LaneId::Lane(2)
        || !message.contains("spin_then_fail: failing as asked")
        || !message.contains("thread (100, 0, 0)")
    {
        return Err(format!("{lane}: {message}"));
    }
    // The CPU backend keeps working: no context to lose.
    four_lanes(&gpu, [0; 4], [u32::MAX; 4], [false, true, false, true], 512).map_err(|e| e.to_string())
}

/// On the CPU, a host wait for a copy after a failing kernel of its lane reports the kernel's
/// fault (not the event's wait failing), and the scope's end adds nothing else to it.
fn on_the_cpu_a_host_wait_after_a_failing_kernel_reports_the_fault() -> std::result::Result<(), String> {
    let gpu = common::cpu();
    let mut host = gpu.pinned_matrix::<u32>(256, 1).map_err(|e| e.to_string())?;
    let e = scope(&gpu, |s| {
        let out = s.alloc_matrix::<u32>(256, 1)?;
        let col = out.columns_mut().next().expect("one column");
        let dst = host.columns_mut().next().expect("one column");
        let pending = s.lane()?.enter(|st| {
            let mut c = st.bind(col);
            st.launch(&kernels::spin_then_fail, LaunchConfig::for_elements(256, 256), (&mut c, 0u64, 7u32))?;
            st.copy_to_host(&c, dst)
        })?;
        pending.wait().map(drop)
    })
    .expect_err("the wait reports the fault");
    let Error::KernelFault { lane, message } = e.primary() else { return Err(format!("{e:?}")) };
    if *lane != LaneId::Lane(0) || !message.contains("spin_then_fail: failing as asked") {
        return Err(format!("{lane}: {message}"));
    }
    let text = e.to_string();
    if text.contains("cuEventSynchronize") || text.contains("NOT_SUPPORTED") {
        return Err(text);
    }
    Ok(())
}

/// On the CPU, a kernel failing on lane 5 of 16 in a repeated scope — submitted directly the
/// first time, then captured into a graph and replayed on lane 0's stream (automatic graphs,
/// `SubmitConfig`), also in segments of 8 lanes — is a fault of lane 5 every time. Without
/// merged copies every other lane's column is complete: inside a graph's replay only the
/// failing lane's work stops. (The stream the graph ran on stops at the fault, as any stream
/// does: a lane whose work a segment's graph ran and that logs again after it waits for that
/// stream, and stops too.) What a deferred scope shares between lanes stops as a fence would
/// (`Error::KernelFault`'s docs): with lanes folded 4 to a graph branch, the lanes after lane 5
/// on its branch (6 and 7) lose their work, the others do not; with merged copies, the lane
/// that copies a chunk waits for every lane of it, and the error it adds says through what.
fn on_the_cpu_a_kernel_failing_in_a_graph_is_a_fault_of_its_lane() -> std::result::Result<(), String> {
    let gpu = common::cpu();
    let (rows, n) = (256, 16);
    let mut host = gpu.pinned_matrix::<f32>(rows, n).map_err(|e| e.to_string())?;
    let unmerged = sluice::SubmitConfig { merge_copy_bytes: 0, ..Default::default() };
    let configs = [
        unmerged,
        sluice::SubmitConfig { segment_lanes: 8, ..unmerged },
        sluice::SubmitConfig { graph_branches: 4, ..unmerged },
        sluice::SubmitConfig::deferred(),
        sluice::SubmitConfig::default(),
    ];
    let mut explained = 0;
    for (c, config) in configs.into_iter().enumerate() {
        // Lanes 6 and 7 share lane 5's branch, after it, where lanes are folded 4 to a branch.
        let lost = |j: usize| j == 5 || (config.graph_branches == 4 && (j == 6 || j == 7));
        gpu.set_submit_config(config);
        for round in 0..3 {
            host.fill(f32::NAN);
            let e = scope(&gpu, |s| {
                let out = s.alloc_matrix::<f32>(rows, n)?;
                let spin = s.alloc_matrix::<u32>(256, n)?;
                let lanes = s.lanes(n)?;
                for (j, ((col, sp), dst)) in
                    out.columns_mut().zip(spin.columns_mut()).zip(host.columns_mut()).enumerate()
                {
                    lanes[j].enter(|st| {
                        let mut sp = st.bind(sp);
                        let fail = if j == 5 { 3 } else { u32::MAX };
                        st.launch(
                            &kernels::spin_then_fail,
                            LaunchConfig::for_elements(256, 256),
                            (&mut sp, 0u64, fail),
                        )?;
                        let mut c = st.bind(col);
                        st.launch(&kernels::fill_column, LaunchConfig::for_elements(rows, 256), (&mut c, j as f32))?;
                        st.copy_to_host(&c, dst).map(drop)
                    })?;
                }
                Ok(())
            })
            .expect_err("the scope reports the fault");
            let Error::KernelFault { lane, message } = e.primary() else { return Err(format!("{e:?}")) };
            if *lane != LaneId::Lane(5) || !message.contains("spin_then_fail: failing as asked") {
                return Err(format!("config {c}, round {round}: {lane}: {message}"));
            }
            if config.merge_copy_bytes > 0 {
                if let Error::Cleanup { cleanup, .. } = &e {
                    if let Some(c) = cleanup.iter().find(|c| !c.to_string().contains("a copy or a graph branch")) {
                        return Err(format!("round {round}: a cleanup error that does not say why: {c}"));
                    }
                    explained += 1;
                }
                continue;
            }
            for j in (0..n).filter(|&j| !lost(j)) {
                let col = host.column(j).ok_or("a column")?;
                if !col.iter().all(|v| *v == j as f32) {
                    return Err(format!("config {c}, round {round}: column {j} is not complete: {e}"));
                }
            }
        }
    }
    if explained == 0 {
        return Err("no merged copy's lane reported waiting for the faulted lane".into());
    }
    gpu.set_submit_config(sluice::SubmitConfig::default());
    let stats = gpu.submit_stats();
    if stats.graphs_replayed == 0 {
        return Err(format!("no graph ran: {stats:?}"));
    }
    // Traced, the spans the failed lane never reached are left out of the trace: the fault
    // is the scope's only error.
    let e = sluice::traced_scope(&gpu, |s| {
        let spin = s.alloc_matrix::<u32>(256, 2)?;
        for (j, (lane, sp)) in s.lanes(2)?.into_iter().zip(spin.columns_mut()).enumerate() {
            lane.enter(|st| {
                let mut sp = st.bind(sp);
                let fail = if j == 1 { 3 } else { u32::MAX };
                st.launch(&kernels::spin_then_fail, LaunchConfig::for_elements(256, 256), (&mut sp, 0u64, fail))?;
                st.launch(&kernels::spin_then_fail, LaunchConfig::for_elements(256, 256), (&mut sp, 0u64, u32::MAX))
            })?;
        }
        Ok(())
    })
    .expect_err("the traced scope reports the fault");
    if !matches!(e.primary(), Error::KernelFault { lane: LaneId::Lane(1), .. }) || e.to_string().contains("cleaning up")
    {
        return Err(format!("traced: {e}"));
    }
    Ok(())
}

type Test = (&'static str, fn() -> std::result::Result<(), String>);

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let Some(i) = args.iter().position(|a| a == "--child") {
        match args.get(i + 1).map(String::as_str) {
            Some("one_of_four") => child_one_of_four(),
            Some("same_kernel") => child_same_kernel(),
            Some("write_out_of_bounds") => child_write_out_of_bounds(),
            Some("short_column_sums") => child_short_column_sums(),
            other => panic!("unknown child {other:?}"),
        }
        return ExitCode::SUCCESS;
    }
    let gpu_tests = args.iter().any(|a| a == "--ignored" || a == "--include-ignored");
    let cpu_tests = !args.iter().any(|a| a == "--ignored");
    let filter: Vec<&String> = args.iter().filter(|a| !a.starts_with("--")).collect();
    let cpu: &[Test] = &[
        (
            "on_the_cpu_a_failing_kernel_is_a_fault_of_its_lane_and_the_others_finish",
            on_the_cpu_a_failing_kernel_is_a_fault_of_its_lane_and_the_others_finish,
        ),
        (
            "on_the_cpu_a_kernel_failing_in_a_graph_is_a_fault_of_its_lane",
            on_the_cpu_a_kernel_failing_in_a_graph_is_a_fault_of_its_lane,
        ),
        (
            "on_the_cpu_a_write_out_of_bounds_is_located_in_the_kernel",
            on_the_cpu_a_write_out_of_bounds_is_located_in_the_kernel,
        ),
        (
            "on_the_cpu_a_host_wait_after_a_failing_kernel_reports_the_fault",
            on_the_cpu_a_host_wait_after_a_failing_kernel_reports_the_fault,
        ),
        (
            "on_the_cpu_a_short_slice_in_a_strided_loop_is_a_kernel_fault",
            on_the_cpu_a_short_slice_in_a_strided_loop_is_a_kernel_fault,
        ),
    ];
    let cuda: &[Test] = &[
        ("a_kernel_failing_on_one_of_four_lanes_is_named", a_kernel_failing_on_one_of_four_lanes_is_named),
        (
            "the_same_kernel_failing_on_four_lanes_names_the_kernel_and_its_lanes",
            the_same_kernel_failing_on_four_lanes_names_the_kernel_and_its_lanes,
        ),
        (
            "a_write_out_of_bounds_names_its_kernel_and_a_relative_path",
            a_write_out_of_bounds_names_its_kernel_and_a_relative_path,
        ),
        (
            "a_scope_that_runs_out_of_memory_leaves_the_pool_trimmed",
            a_scope_that_runs_out_of_memory_leaves_the_pool_trimmed,
        ),
        (
            "a_short_slice_traps_in_a_loop_whose_checks_were_hoisted",
            a_short_slice_traps_in_a_loop_whose_checks_were_hoisted,
        ),
    ];
    let (mut passed, mut failed, mut ignored, mut filtered) = (0, 0, 0, 0);
    // A test that does not run is `ignored` (with the reason) where it needs a GPU, and
    // filtered out where `--ignored` asked for the ignored tests alone, as libtest does.
    let mut run = |tests: &[Test], enabled: bool, ignored_because: Option<&str>| {
        for (name, test) in tests {
            if !filter.is_empty() && !filter.iter().any(|f| name.contains(f.as_str())) {
                filtered += 1;
                continue;
            }
            if !enabled {
                match ignored_because {
                    Some(why) => {
                        println!("test {name} ... ignored, {why}");
                        ignored += 1;
                    }
                    None => filtered += 1,
                }
                continue;
            }
            match std::panic::catch_unwind(test) {
                Ok(Ok(())) => {
                    println!("test {name} ... ok");
                    passed += 1;
                }
                Ok(Err(e)) => {
                    println!("test {name} ... FAILED: {e}");
                    failed += 1;
                }
                Err(_) => {
                    println!("test {name} ... FAILED (panicked)");
                    failed += 1;
                }
            }
        }
    };
    run(cpu, cpu_tests, None);
    run(cuda, gpu_tests, Some("needs an NVIDIA GPU: run with --ignored on a GPU machine"));
    let verdict = if failed == 0 { "ok" } else { "FAILED" };
    println!(
        "\ntest result: {verdict}. {passed} passed; {failed} failed; {ignored} ignored; 0 measured; {filtered} filtered out"
    );
    if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
