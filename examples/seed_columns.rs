//! The seed workload (DESIGN.md's north star): particle potentials, one column per lane.
//!
//! The sources are uploaded once and read by every lane; each lane computes one column of
//! an `rows x lanes` device matrix with the `potential` kernel and copies that column back
//! to a pinned host matrix on the same lane, as soon as its kernel is done — no device-wide
//! synchronization, no redundant uploads. Every element is then checked against the f64
//! CPU reference, and the timeline of each lane (kernel span, copy span, from timing events)
//! is printed so the overlap between lanes is visible.
//!
//! ```text
//! cargo run --release --example seed_columns -- [lanes=8] [rows=262144] [sources=512]
//! ```
//!
//! Without a GPU it says so and exits 0.

use std::process::ExitCode;
use std::time::Instant;

use sluice::{kernels, scope, Error, Gpu, LaunchConfig, Result};

const EPS2: f32 = 1e-3;
const TOLERANCE: f64 = 1e-4;

/// One lane's timeline, in ms from the common start.
struct Span {
    kernel: (f32, f32),
    copy: (f32, f32),
}

fn main() -> ExitCode {
    let args: Vec<usize> = match std::env::args().skip(1).map(|a| a.parse()).collect() {
        Ok(a) => a,
        Err(_) => {
            eprintln!("usage: seed_columns [lanes=8] [rows=262144] [sources=512]");
            return ExitCode::from(2);
        }
    };
    let lanes = args.first().copied().unwrap_or(8).max(1);
    let rows = args.get(1).copied().unwrap_or(1 << 18).max(1);
    let n_sources = args.get(2).copied().unwrap_or(512).max(1);

    let gpu = match Gpu::new(0) {
        Ok(gpu) => gpu,
        Err(e @ (Error::NoDriver | Error::NoDevice { .. })) => {
            println!("seed_columns: no GPU to run on ({e}); nothing to do.");
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            eprintln!("seed_columns: cannot open the GPU: {e}");
            return ExitCode::FAILURE;
        }
    };
    match run(&gpu, lanes, rows, n_sources) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("seed_columns: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(gpu: &Gpu, lanes: usize, rows: usize, n_sources: usize) -> Result<bool> {
    let info = gpu.info();
    println!(
        "{} (sm_{}{}, {} SMs), driver {}.{}: {lanes} lanes x {rows} targets x {n_sources} sources",
        info.name,
        info.compute_capability.0,
        info.compute_capability.1,
        info.sm_count,
        gpu.driver_version() / 1000,
        gpu.driver_version() % 1000 / 10
    );
    let seed: u64 = rand::random();
    let mut rng = gpu_kernels::reference::Rng::new(seed);
    let sources = rng.particles(n_sources);
    let targets = rng.particles(rows * lanes);

    // Warm-up: load (JIT-compile) the module before timing.
    let potential = gpu.function(&kernels::potential)?;

    let mut host = gpu.pinned_matrix::<f32>(rows, lanes)?;
    host.fill(f32::NAN); // poison: every element must be written

    let wall = Instant::now();
    let spans = scope(gpu, |s| {
        let start = s.timestamp()?;
        let sources = s.upload(&sources)?; // one upload, read by every lane
        let targets = s.upload_matrix(&targets, rows, lanes)?; // column j: lane j's targets
        let out = s.alloc_matrix::<f32>(rows, lanes)?; // the shared rows x lanes matrix
        let cfg = LaunchConfig::for_elements(rows, 256);
        let mut marks = Vec::new();
        for (j, ((lane, col), dst)) in
            s.lanes(lanes)?.into_iter().zip(out.columns_mut()).zip(host.columns_mut()).enumerate()
        {
            marks.push(lane.enter(|st| {
                let src = st.await_fence(&sources)?; // GPU-side wait: the host never blocks
                let tgt = st.await_fence(&targets)?.column(j).ok_or(Error::NotAdjacent)?;
                let mut col = st.bind(col); // this column, this lane only
                let t0 = st.timestamp()?;
                // The arguments by name: a wrong one is reported against `potential`'s parameter.
                st.launch(&potential, cfg, kernels::potential::args(&mut col, &tgt, &src, EPS2))?;
                let t1 = st.timestamp()?;
                let copy = st.copy_to_host(&col, dst)?; // same lane: after the kernel, no sync
                let t2 = st.timestamp()?;
                Ok::<_, Error>((t0, t1, t2, copy))
            })?);
        }
        let mut spans = Vec::new();
        for (t0, t1, t2, copy) in marks {
            copy.wait()?;
            spans.push(Span {
                kernel: (t0.elapsed_ms_since(&start)?, t1.elapsed_ms_since(&start)?),
                copy: (t1.elapsed_ms_since(&start)?, t2.elapsed_ms_since(&start)?),
            });
        }
        Ok(spans)
    })?; // joins each lane; never the device
    let wall_ms = wall.elapsed().as_secs_f64() * 1e3;

    println!("\nlane  kernel start..end (ms)   copy start..end (ms)   [from the scope's first event]");
    for (j, sp) in spans.iter().enumerate() {
        println!("{j:4}  {:9.3} .. {:9.3}     {:9.3} .. {:9.3}", sp.kernel.0, sp.kernel.1, sp.copy.0, sp.copy.1);
    }
    let overlapping = spans
        .iter()
        .enumerate()
        .filter(|(i, a)| {
            spans.iter().enumerate().any(|(j, b)| *i != j && a.copy.0 < b.kernel.1 && b.kernel.0 < a.copy.1)
        })
        .count();
    let gpu_ms = spans.iter().map(|s| s.copy.1).fold(0.0f32, f32::max);
    let kernel_sum: f32 = spans.iter().map(|s| s.kernel.1 - s.kernel.0).sum();
    let copy_sum: f32 = spans.iter().map(|s| s.copy.1 - s.copy.0).sum();
    println!(
        "\ncopies overlapping another lane's kernel: {overlapping} of {lanes}\n\
         GPU time (first event to last copy): {gpu_ms:.3} ms; sum of kernel spans {kernel_sum:.3} ms, of copy spans {copy_sum:.3} ms\n\
         host wall time of the scope: {wall_ms:.3} ms"
    );

    // Check every element against the f64 reference, in parallel over columns.
    let worst = gpu_kernels::reference::check_potential(&host, rows, lanes, &targets, &sources, EPS2, TOLERANCE);
    match worst {
        Ok(w) => {
            println!(
                "check: all {} elements within {TOLERANCE:e} of the f64 reference (worst {w:.2e}); seed {seed}",
                rows * lanes
            );
            Ok(true)
        }
        Err(msg) => {
            println!("check FAILED (seed {seed}): {msg}");
            Ok(false)
        }
    }
}
