//! Where the README's natural program spends its time, one scope at a time: the host time of
//! the scope's closure (its allocation and the lanes' logging), the whole scope, and — every
//! tenth scope, traced — when each graph was enqueued and when the GPU ran it.
//!
//! ```text
//! cargo run --release --example bench_timeline --features kernels -- LANES SCOPES ROWS [SEGMENT_LANES=0] [BACKGROUND=1] [POISON=0] [CHURN=0]
//! bench_timeline 64 200 16384 0      # many-small, as shipped (no segments)
//! bench_timeline 64 200 16384 0 1 1  # the host matrix written (NaN) before each scope, as bench_seed does
//! bench_timeline 64 200 16384 0 1 0 1  # device memory freed before each scope
//! bench_timeline 128 200 4096 16     # many-small-128, segments of 16 (the device's thread)
//! bench_timeline 128 200 4096 16 0   # segments of 16, launched by the program's thread
//! ```
//!
//! With `POISON=1` the host matrix is filled with NaN before each scope, outside the timed
//! span, as `bench_seed` does before each repetition (the GPU's copies then write into lines
//! the CPU holds dirty in its caches). With `CHURN=1` a small device matrix is allocated and
//! freed before each scope, outside the timed span: after memory is given back, sluice sets
//! a cached graph's copy nodes again before its next replay (an address may then name
//! another allocation), which this prices.
//! Prints the medians over the untraced scopes: the closure, the whole scope, when each
//! segment left the program (`Submission::submitted_after`, the median of the k-th segments
//! of the scopes that had a k-th, which a scope's segment sizes make the same from scope to
//! scope), when the closure started, allocated its matrix and made its lanes, and when each
//! lane's `enter` returned (a segment's hand-off shows as the wait before the lane that formed
//! it); then how the last untraced scope's submissions went (path, operations, graph nodes
//! set, who launched) and the last two traced scopes' graphs as
//! `[host START+ENQUEUE gpu START-END]` in µs from the scope's start. On the CPU backend (no
//! GPU) the numbers say little: its kernels run on the host's cores.

use sluice::{kernels, scope, traced_scope, DeviceMatrix, Error, Gpu, LaunchConfig, Particle, PinnedMatrix, Scope};
use std::time::Instant;
fn body<'scope, 'env>(
    s: &'scope Scope<'scope, 'env>,
    sources: &'scope DeviceMatrix<Particle>,
    targets: &'scope DeviceMatrix<Particle>,
    host: &'scope mut PinnedMatrix<f32>,
    cfg: LaunchConfig,
    t0: Instant,
    seen: &mut Seen,
) -> sluice::Result<()> {
    let (rows, n) = (host.rows(), host.cols());
    seen.setup[0] = t0.elapsed().as_secs_f64() * 1e6;
    let out = s.alloc_matrix::<f32>(rows, n)?;
    seen.setup[1] = t0.elapsed().as_secs_f64() * 1e6;
    let lanes = s.lanes(n)?;
    seen.setup[2] = t0.elapsed().as_secs_f64() * 1e6;
    for (j, ((lane, col), dst)) in lanes.into_iter().zip(out.columns_mut()).zip(host.columns_mut()).enumerate() {
        lane.enter(|st| {
            let src = st.await_fence(sources)?;
            let tgt = st.await_fence(targets)?.column(j).ok_or(Error::NotAdjacent)?;
            let mut col = st.bind(col);
            st.launch(&kernels::potential_tiled_rsqrt, cfg, (&mut col, &tgt, &src, 1e-3f32))?;
            st.copy_to_host(&col, dst)
        })?;
        seen.lanes[j] = t0.elapsed().as_secs_f64() * 1e6;
    }
    seen.closed = Instant::now();
    // When each segment so far left the program (the scope's end submits after this).
    let subs = s.submissions();
    seen.segments = subs.iter().map(|x| x.submitted_after.as_secs_f64() * 1e6).collect();
    seen.how = subs
        .iter()
        .map(|x| {
            format!(
                "{:?} {} ops, {} nodes set, {}",
                x.path,
                x.operations,
                x.nodes_updated,
                if x.background { "launcher" } else { "inline" }
            )
        })
        .collect();
    Ok(())
}

/// What one scope's closure saw: when it started, allocated its matrix and made its lanes, when
/// each lane's `enter` returned and each segment left the program (µs from before the scope),
/// how each segment was submitted, and when the closure ended.
struct Seen {
    setup: [f64; 3],
    lanes: Vec<f64>,
    segments: Vec<f64>,
    how: Vec<String>,
    closed: Instant,
}

/// The median of each position over the scopes that had it.
fn medians(rows: &[Vec<f64>]) -> Vec<String> {
    let width = rows.iter().map(Vec::len).max().unwrap_or(0);
    (0..width)
        .map(|i| {
            let mut v: Vec<f64> = rows.iter().filter_map(|r| r.get(i).copied()).collect();
            v.sort_by(f64::total_cmp);
            format!("{:.1}", v[v.len() / 2])
        })
        .collect()
}
fn main() {
    let a: Vec<usize> = std::env::args().skip(1).filter_map(|a| a.parse().ok()).collect();
    let [n, reps, rows, ..] = a[..] else {
        eprintln!("usage: bench_timeline LANES SCOPES ROWS [SEGMENT_LANES=0] [BACKGROUND=1] [POISON=0] [CHURN=0]");
        std::process::exit(2);
    };
    let reps = reps.max(10);
    let gpu = Gpu::new(0).unwrap_or_else(|_| Gpu::cpu());
    let seg = a.get(3).copied().unwrap_or(0);
    let background = a.get(4).copied().unwrap_or(1) != 0;
    let poison = a.get(5).copied().unwrap_or(0) != 0;
    let churn = a.get(6).copied().unwrap_or(0) != 0;
    gpu.set_submit_config(sluice::SubmitConfig {
        segment_lanes: seg,
        background_launches: background,
        ..Default::default()
    });
    // Not zeros: particles spread over a box (the result is not checked here; bench_seed does).
    let p: Vec<Particle> =
        (0..(rows * n).max(256)).map(|i| Particle { x: (i % 97) as f32, y: (i % 13) as f32, z: 2.0, q: 0.5 }).collect();
    let sources = gpu.upload(&p[..256]).unwrap();
    let targets = gpu.upload_matrix(&p, rows, n).unwrap();
    let mut host = gpu.pinned_matrix::<f32>(rows, n).unwrap();
    let cfg = LaunchConfig::for_elements(rows, 256);
    let (mut log, mut total, mut launch_at) = (Vec::new(), Vec::new(), Vec::new());
    let mut seen =
        Seen { setup: [0.0; 3], lanes: vec![0.0; n], segments: Vec::new(), how: Vec::new(), closed: Instant::now() };
    let (mut handed, mut lanes, mut how, mut setups) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for r in 0..reps {
        if poison {
            host.fill(f32::NAN);
        }
        if churn {
            drop(gpu.alloc_matrix::<f32>(256, 1).unwrap());
        }
        let t0 = Instant::now();
        if r % 10 == 9 {
            let ((), tr) = traced_scope(&gpu, |s| body(s, &sources, &targets, &mut host, cfg, t0, &mut seen)).unwrap();
            let g: Vec<String> = tr
                .spans
                .iter()
                .filter(|s| s.kind == sluice::SpanKind::Graph)
                .map(|g| {
                    format!(
                        "[host {:.1}+{:.1} gpu {:.1}-{:.1}]",
                        g.host_start_us,
                        g.host_end_us - g.host_start_us,
                        g.gpu_start_us,
                        g.gpu_end_us
                    )
                })
                .collect();
            launch_at.push(((seen.closed - t0).as_secs_f64() * 1e6, tr.spans.len(), g.join(" ")));
            continue;
        }
        scope(&gpu, |s| body(s, &sources, &targets, &mut host, cfg, t0, &mut seen)).unwrap();
        handed.push(seen.segments.clone());
        lanes.push(seen.lanes.clone());
        setups.push(seen.setup.to_vec());
        how = seen.how.clone();
        log.push((seen.closed - t0).as_secs_f64() * 1e6);
        total.push(t0.elapsed().as_secs_f64() * 1e6);
    }
    log.sort_by(f64::total_cmp);
    total.sort_by(f64::total_cmp);
    println!("{n} lanes x {rows} rows, segments {seg} (background {background}, poison {poison}, churn {churn}): closure (alloc + logging) {:.1} us ({:.2} us/lane), whole scope {:.1} us", log[log.len() / 2], log[log.len() / 2] / n as f64, total[total.len() / 2]);
    println!("   untraced: segments left the program at [{}] us (medians)", medians(&handed).join(", "));
    println!(
        "   untraced: closure started, matrix allocated, lanes made at [{}] us (medians)",
        medians(&setups).join(", ")
    );
    println!("   untraced: lanes' enter returned at [{}] us (medians)", medians(&lanes).join(", "));
    println!("   last untraced scope's submissions: [{}]", how.join("; "));
    for (closure, spans, g) in launch_at.iter().rev().take(2) {
        println!("   traced: closure ends {closure:.1} us, {spans} spans, graphs {g}");
    }
}
