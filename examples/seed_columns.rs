//! The seed workload (DESIGN.md's north star): particle potentials, one column per lane.
//!
//! The sources are uploaded once and read by every lane; each lane computes one column of
//! an `rows x lanes` device matrix with the `potential` kernel and copies that column back
//! to a pinned host matrix on the same lane, as soon as its kernel is done — no device-wide
//! synchronization, no redundant uploads. Every element is then checked against the f64
//! CPU reference, and the timeline of each lane (kernel span, copy span, from the traced
//! scope's timing events) is printed so the overlap between lanes is visible, and written as
//! a picture (`seed-timeline.svg`) and a Chrome trace (`seed-timeline.json`, for
//! ui.perfetto.dev) into the trace folder.
//!
//! ```text
//! cargo run --release --example seed_columns -- [lanes=8] [rows=262144] [sources=512] [--trace DIR]
//! ```
//!
//! The trace folder defaults to `target/sluice-demo`. Without a GPU the same program runs on
//! the CPU backend (`Gpu::new` picks it; `SLUICE_BACKEND=cuda` insists on a GPU).

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use sluice::{kernels, traced_scope, Error, Gpu, LaneId, LaunchConfig, Result, SpanKind};

const EPS2: f32 = 1e-3;
const TOLERANCE: f64 = 1e-4;

/// One lane's timeline, in ms from the start of the trace.
struct Span {
    kernel: (f64, f64),
    copy: (f64, f64),
}

fn main() -> ExitCode {
    let mut numbers = Vec::new();
    let mut trace_dir = PathBuf::from("target/sluice-demo");
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match (a.as_str(), a.parse::<usize>()) {
            ("--trace", _) => match args.next() {
                Some(dir) => trace_dir = dir.into(),
                None => return usage(),
            },
            (_, Ok(n)) => numbers.push(n),
            _ => return usage(),
        }
    }
    let lanes = numbers.first().copied().unwrap_or(8).max(1);
    let rows = numbers.get(1).copied().unwrap_or(1 << 18).max(1);
    let n_sources = numbers.get(2).copied().unwrap_or(512).max(1);

    let gpu = match Gpu::new(0) {
        Ok(gpu) => gpu,
        Err(e) => {
            eprintln!("seed_columns: cannot open the GPU: {e}");
            return ExitCode::FAILURE;
        }
    };
    match run(&gpu, lanes, rows, n_sources, &trace_dir) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("seed_columns: {e}");
            ExitCode::FAILURE
        }
    }
}

fn usage() -> ExitCode {
    eprintln!("usage: seed_columns [lanes=8] [rows=262144] [sources=512] [--trace DIR]");
    ExitCode::from(2)
}

fn run(gpu: &Gpu, lanes: usize, rows: usize, n_sources: usize, trace_dir: &std::path::Path) -> Result<bool> {
    let info = gpu.info();
    let device = match gpu.backend() {
        sluice::Backend::Cuda => format!(
            "{} (sm_{}{}, {} SMs), driver {}.{}",
            info.name,
            info.compute_capability.0,
            info.compute_capability.1,
            info.sm_count,
            gpu.driver_version() / 1000,
            gpu.driver_version() % 1000 / 10
        ),
        _ => format!("no GPU: the CPU backend, {}", info.name),
    };
    println!("{device}: {lanes} lanes x {rows} targets x {n_sources} sources");
    let seed: u64 = rand::random();
    let mut rng = gpu_kernels::reference::Rng::new(seed);
    let sources = rng.particles(n_sources);
    let targets = rng.particles(rows * lanes);

    // Warm-up: load (JIT-compile) the module before timing.
    let potential = gpu.function(&kernels::potential)?;

    let mut host = gpu.pinned_matrix::<f32>(rows, lanes)?;
    host.fill(f32::NAN); // poison: every element must be written

    let wall = Instant::now();
    let ((), trace) = traced_scope(gpu, |s| {
        let sources = s.upload(&sources)?; // one upload, read by every lane
        let targets = s.upload_matrix(&targets, rows, lanes)?; // column j: lane j's targets
        let out = s.alloc_matrix::<f32>(rows, lanes)?; // the shared rows x lanes matrix
        let cfg = LaunchConfig::for_elements(rows, 256);
        let mut copies = Vec::new();
        for (j, ((lane, col), dst)) in
            s.lanes(lanes)?.into_iter().zip(out.columns_mut()).zip(host.columns_mut()).enumerate()
        {
            copies.push(lane.enter(|st| {
                let src = st.await_fence(&sources)?; // GPU-side wait: the host never blocks
                let tgt = st.await_fence(&targets)?.column(j).ok_or(Error::NotAdjacent)?;
                let mut col = st.bind(col); // this column, this lane only
                                            // The arguments by name: a wrong one is reported against `potential`'s parameter.
                st.launch(&potential, cfg, kernels::potential::args(&mut col, &tgt, &src, EPS2))?;
                st.copy_to_host(&col, dst) // same lane: after the kernel, no sync
            })?);
        }
        for copy in copies {
            copy.wait()?;
        }
        Ok(())
    })?; // joins each lane; never the device
    let wall_ms = wall.elapsed().as_secs_f64() * 1e3;

    // Each lane's kernel and copy back, from the trace (µs → ms).
    let span = |lane: usize, kind: SpanKind| {
        trace
            .spans
            .iter()
            .find(|sp| sp.lane == LaneId::Lane(lane) && sp.kind == kind)
            .map_or((f64::NAN, f64::NAN), |sp| (sp.gpu_start_us / 1e3, sp.gpu_end_us / 1e3))
    };
    let spans: Vec<Span> =
        (0..lanes).map(|j| Span { kernel: span(j, SpanKind::Launch), copy: span(j, SpanKind::CopyToHost) }).collect();
    println!("\nlane  kernel start..end (ms)   copy start..end (ms)   [from the start of the trace]");
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
    let first = spans.iter().map(|s| s.kernel.0).fold(f64::INFINITY, f64::min);
    let last = spans.iter().map(|s| s.copy.1).fold(0.0, f64::max);
    let kernel_sum: f64 = spans.iter().map(|s| s.kernel.1 - s.kernel.0).sum();
    let copy_sum: f64 = spans.iter().map(|s| s.copy.1 - s.copy.0).sum();
    println!(
        "\ncopies overlapping another lane's kernel: {overlapping} of {lanes}\n\
         GPU time (first kernel to last copy): {:.3} ms; sum of kernel spans {kernel_sum:.3} ms, of copy spans {copy_sum:.3} ms\n\
         host wall time of the scope (traced): {wall_ms:.3} ms",
        last - first
    );
    let written = std::fs::create_dir_all(trace_dir)
        .and_then(|()| std::fs::write(trace_dir.join("seed-timeline.svg"), trace.to_svg()))
        .and_then(|()| std::fs::write(trace_dir.join("seed-timeline.json"), trace.to_chrome_json()));
    match written {
        Ok(()) => {
            println!("timeline: {0}/seed-timeline.svg, {0}/seed-timeline.json (ui.perfetto.dev)", trace_dir.display())
        }
        Err(e) => println!("timeline not written to {}: {e}", trace_dir.display()),
    }

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
