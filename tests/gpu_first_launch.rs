//! No hidden synchronization at a kernel's first launch (rule 6), on a real GPU, in a
//! process of its own so that the kernels here are launched for the first time: while one
//! lane runs a kernel for about 200 ms, another lane launches a kernel that prints
//! (`dprintln!`, which needs the driver's printf machinery) for the first time in the
//! process, and it must start and finish on the GPU before the first one ends — timed by
//! the traced scope's events, not by the host clock.
//!
//! Needs an NVIDIA GPU: `cargo test --test gpu_first_launch -- --ignored`.

mod common;

use sluice::{kernels, traced_scope, LaneId, LaunchConfig, SpanKind};

#[test]
#[ignore = "needs an NVIDIA GPU: run with --ignored on a GPU machine"]
fn a_first_launch_of_a_printing_kernel_overlaps_a_running_kernel_on_another_lane() {
    let gpu = common::gpu();
    // The module is loaded (by the spinning kernel's first use) but `tag_and_print` has never
    // been resolved or launched in this process.
    let ((), trace) = traced_scope(&gpu, |s| {
        let (a, b) = (s.alloc_buffer::<u32>(256)?, s.alloc_buffer::<u32>(1 << 16)?);
        let lanes = s.lanes(2)?;
        lanes[0].enter(|st| {
            let mut a = st.bind(a.as_columns_mut());
            // About 200 ms of an H200 multiprocessor's clock.
            st.launch(
                &kernels::spin_then_fail,
                LaunchConfig::for_elements(256, 256),
                (&mut a, 400_000_000u64, u32::MAX),
            )
        })?;
        lanes[1].enter(|st| {
            let mut b = st.bind(b.as_columns_mut());
            st.launch(&kernels::tag_and_print, LaunchConfig::for_elements(1 << 16, 256), (&mut b, 42))
        })?;
        Ok(())
    })
    .expect("scope");
    let span = |lane: usize| {
        trace
            .spans
            .iter()
            .find(|s| s.lane == LaneId::Lane(lane) && s.kind == SpanKind::Launch)
            .unwrap_or_else(|| panic!("no launch on lane {lane} in the trace"))
            .clone()
    };
    let (long, first) = (span(0), span(1));
    println!(
        "spin_then_fail on lane 0: {:.1} .. {:.1} µs; first tag_and_print on lane 1: {:.1} .. {:.1} µs \
         (host enqueue {:.1} .. {:.1} µs)",
        long.gpu_start_us,
        long.gpu_end_us,
        first.gpu_start_us,
        first.gpu_end_us,
        first.host_start_us,
        first.host_end_us
    );
    assert!(long.gpu_end_us - long.gpu_start_us > 50_000.0, "the spinning kernel ran long enough to overlap");
    assert!(
        first.gpu_end_us < long.gpu_end_us,
        "the first launch of a printing kernel waited for the other lane's kernel: a hidden device-wide \
         synchronization"
    );
    // The host enqueued it while lane 0 still ran: resolving it did not block the host either.
    assert!(first.host_end_us < long.gpu_end_us, "resolving the kernel blocked the host until lane 0 finished");
}
