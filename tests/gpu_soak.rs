//! Soak: many scopes, many lanes, many host threads, with every result checked and device
//! memory flat from start to end. On CUDA (`--ignored` on a GPU machine, part of
//! `cargo xtask soak`): 10,000 scopes of 8 lanes, and 8 host threads running 500 scopes
//! each; on the CPU backend (always) the same programs, shorter.

mod common;

use sluice::{kernels, scope, Backend, Gpu, LaunchConfig};

/// Free device memory may move by the driver's granularity as streams come and go.
const SLACK: usize = 16 << 20;

/// `scopes` scopes of 8 lanes; lane j fills its column with `step + j` and copies it back.
fn scopes_of_eight_lanes(gpu: &Gpu, scopes: usize) {
    let rows = 4096;
    let mut host = gpu.pinned_matrix::<f32>(rows, 8).expect("pinned");
    for step in 0..scopes {
        host.fill(f32::NAN);
        scope(gpu, |s| {
            let out = s.alloc_matrix::<f32>(rows, 8)?;
            for (j, ((lane, col), dst)) in
                s.lanes(8)?.into_iter().zip(out.columns_mut()).zip(host.columns_mut()).enumerate()
            {
                lane.enter(|st| {
                    let mut c = st.bind(col);
                    st.launch(
                        &kernels::fill_column,
                        LaunchConfig::for_elements(rows, 256),
                        (&mut c, (step + j) as f32),
                    )?;
                    st.copy_to_host(&c, dst).map(drop)
                })?;
            }
            Ok(())
        })
        .expect("scope");
        for j in 0..8 {
            let want = (step + j) as f32;
            assert!(host.column(j).unwrap().iter().all(|v| *v == want), "scope {step}, column {j}");
        }
    }
}

fn ten_thousand_scopes_of_eight_lanes_keep_memory_flat(gpu: Gpu) {
    let scopes = if gpu.backend() == Backend::Cpu { 300 } else { 10_000 };
    scopes_of_eight_lanes(&gpu, 10); // warm up: module, pools
    let before = common::free_device_memory(&gpu);
    let t = std::time::Instant::now();
    scopes_of_eight_lanes(&gpu, scopes);
    let after = common::free_device_memory(&gpu);
    println!(
        "{scopes} scopes x 8 lanes in {:.2} s ({:.1} µs per scope); free memory before {before}, after {after}",
        t.elapsed().as_secs_f64(),
        t.elapsed().as_secs_f64() * 1e6 / scopes as f64
    );
    assert!(after + SLACK >= before, "{} bytes leaked over {scopes} scopes", before.saturating_sub(after));
}

fn eight_host_threads_run_scopes_at_once(gpu: Gpu) {
    let per_thread = if gpu.backend() == Backend::Cpu { 40 } else { 500 };
    let eight_threads = |scopes: usize| {
        std::thread::scope(|t| {
            for _ in 0..8 {
                let gpu = gpu.clone();
                t.spawn(move || scopes_of_eight_lanes(&gpu, scopes));
            }
        })
    };
    // Warm up at the same parallelism: the module, and the stream and event pools grown to
    // 64 lanes at once (kept for reuse, not leaked).
    eight_threads(5);
    let before = common::free_device_memory(&gpu);
    eight_threads(per_thread);
    let after = common::free_device_memory(&gpu);
    println!("8 threads x {per_thread} scopes x 8 lanes; free memory before {before}, after {after}");
    assert!(after + SLACK >= before, "{} bytes leaked", before.saturating_sub(after));
}

on_every_backend!(ten_thousand_scopes_of_eight_lanes_keep_memory_flat, eight_host_threads_run_scopes_at_once);
