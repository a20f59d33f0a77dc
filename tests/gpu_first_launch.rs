//! No hidden synchronization at a kernel's first launch (rule 6), on a real GPU, in a
//! process of its own so that the kernels here are launched for the first time: while one
//! lane runs a kernel for about 200 ms, another lane launches a kernel for the first time
//! in the process, and it must run on the GPU before the first one ends — timed by the
//! traced scope's events, not by the host clock. Three first launches:
//!
//! * `tag_and_print`, which prints (`dprintln!`: the driver's printf machinery);
//! * `fill_column`, which does not;
//! * `fill_column` of a second module, loaded (JIT-compiled) in the middle of the scope:
//!   reported, not asserted (loading a module is not a launch; the docs say to load
//!   modules before the lanes start, as the first resolution of a kernel does).
//!
//! Needs an NVIDIA GPU: `cargo test --test gpu_first_launch -- --ignored`.

mod common;

use sluice::{
    kernels, traced_scope, Checked, ColumnViewMut, Gpu, LaneId, LaunchConfig, Mut, Result, SpanKind, Stream, TraceSpan,
};

/// About 200 ms of an H200 multiprocessor's clock.
const SPIN: u64 = 400_000_000;

/// One scope: lane 0 spins, then lane 1 runs `second` (its first launch). Returns the two
/// launches' spans.
fn spin_and<F>(gpu: &Gpu, second: F) -> (TraceSpan, TraceSpan)
where
    F: for<'s, 'lane> Fn(
        &Stream<'s, 'lane>,
        &mut ColumnViewMut<'s, 'lane, f32>,
        &mut ColumnViewMut<'s, 'lane, u32>,
    ) -> Result<()>,
{
    let ((), trace) = traced_scope(gpu, |s| {
        let (a, b, c) = (s.alloc_buffer::<u32>(256)?, s.alloc_buffer::<f32>(1 << 16)?, s.alloc_buffer::<u32>(1 << 16)?);
        let lanes = s.lanes(2)?;
        lanes[0].enter(|st| {
            let mut a = st.bind(a.as_columns_mut());
            st.launch(&kernels::spin_then_fail, LaunchConfig::for_elements(256, 256), (&mut a, SPIN, u32::MAX))
        })?;
        lanes[1].enter(|st| {
            let (mut b, mut c) = (st.bind(b.as_columns_mut()), st.bind(c.as_columns_mut()));
            second(st, &mut b, &mut c)
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
    (span(0), span(1))
}

fn report(what: &str, (long, first): &(TraceSpan, TraceSpan)) -> bool {
    let overlaps = first.gpu_end_us < long.gpu_end_us;
    println!(
        "{what:<44} lane 0 spin {:>9.1} .. {:>9.1} µs | lane 1 first launch {:>9.1} .. {:>9.1} µs \
         (enqueued {:>9.1} .. {:>9.1}) | {}",
        long.gpu_start_us,
        long.gpu_end_us,
        first.gpu_start_us,
        first.gpu_end_us,
        first.host_start_us,
        first.host_end_us,
        if overlaps { "overlaps" } else { "WAITED for lane 0" }
    );
    assert!(long.gpu_end_us - long.gpu_start_us > 50_000.0, "the spinning kernel ran long enough to overlap");
    overlaps
}

#[test]
#[ignore = "needs an NVIDIA GPU: run with --ignored on a GPU machine"]
fn first_launches_overlap_a_running_kernel_on_another_lane() {
    let gpu = common::gpu();
    let printing = spin_and(&gpu, |st, _, c| {
        st.launch(&kernels::tag_and_print, LaunchConfig::for_elements(1 << 16, 256), (c, 42))
    });
    let plain =
        spin_and(&gpu, |st, b, _| st.launch(&kernels::fill_column, LaunchConfig::for_elements(1 << 16, 256), (b, 1.5)));
    let g = gpu.clone();
    let other_module = spin_and(&gpu, move |st, b, _| {
        // Another text (the same kernels, one comment more): a module of its own.
        let ptx = format!("{}\n// a second module\n", kernels::PTX);
        // SAFETY: sluice's own `fill_column`: writes out[i] for i < out.len() only.
        let fill = unsafe { g.function_from_ptx::<(Mut<f32>, f32), Checked>(ptx, "fill_column") }?;
        st.launch(&fill, LaunchConfig::for_elements(1 << 16, 256), (b, 2.5))
    });
    let (p, f) =
        (report("tag_and_print (prints), first launch", &printing), report("fill_column, first launch", &plain));
    report("fill_column of a module loaded mid-scope", &other_module);
    assert!(p, "the first launch of a printing kernel waited for the other lane's kernel: a hidden synchronization");
    assert!(f, "the first launch of a kernel waited for the other lane's kernel: a hidden synchronization");
}
