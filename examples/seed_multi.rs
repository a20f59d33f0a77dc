//! The seed workload split over every GPU of the machine, in one multi-GPU scope
//! (`sluice::scope_multi`): columns round-robin over the devices, each computed and copied
//! back on its own lane; each device sums its columns, and an all-reduce through NCCL gives
//! every device every column's sum. Every element and every sum is checked against the f64
//! reference (`gpu_kernels::reference`). With one GPU it runs on one, and says so; without a
//! GPU, on the CPU backend (two CPU devices, the all-reduce as a host loop).
//!
//! ```text
//! cargo run --release --example seed_multi -- [--gpus N] [rows=65536] [cols=16] [sources=256] [--trace DIR]
//! ```
//!
//! Each device's timeline goes to `DIR/seed-multi-gpuN.svg` and `.json` (default
//! `target/sluice-demo`).

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use sluice::{kernels, Communicator, Result, SpanKind};

mod multi_common;
use multi_common::{check_sums, describe, devices, ms_since, owned, prepare, run, sources, targets, EPS2};

const TOLERANCE: f64 = 1e-4;
const USAGE: &str = "usage: seed_multi [--gpus N] [rows=65536] [cols=16] [sources=256] [--trace DIR]";

fn main() -> ExitCode {
    let mut numbers = Vec::new();
    let mut want_gpus = None;
    let mut trace_dir = PathBuf::from("target/sluice-demo");
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--gpus" => match args.next().and_then(|n| n.parse().ok()) {
                Some(n) => want_gpus = Some(n),
                None => return usage(),
            },
            "--trace" => match args.next() {
                Some(d) => trace_dir = d.into(),
                None => return usage(),
            },
            n => match n.parse::<usize>() {
                Ok(n) => numbers.push(n.max(1)),
                Err(_) => return usage(),
            },
        }
    }
    let rows = numbers.first().copied().unwrap_or(1 << 16);
    let cols = numbers.get(1).copied().unwrap_or(16);
    let n_sources = numbers.get(2).copied().unwrap_or(256);
    match demo(want_gpus, rows, cols, n_sources, &trace_dir) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("seed_multi: {e}");
            ExitCode::FAILURE
        }
    }
}

fn usage() -> ExitCode {
    eprintln!("{USAGE}");
    ExitCode::from(2)
}

fn demo(
    want_gpus: Option<usize>,
    rows: usize,
    cols: usize,
    n_sources: usize,
    trace_dir: &std::path::Path,
) -> Result<bool> {
    let gpus = devices(want_gpus, 2)?;
    let k = gpus.len();
    let cols = cols.max(k);
    match (gpus[0].backend(), k) {
        (sluice::Backend::Cpu, _) => println!("no GPU: the CPU backend, {k} device(s) ({})", describe(&gpus)),
        (_, 1) => println!("one GPU: the workload runs on it alone ({})", describe(&gpus)),
        _ => println!("{k} GPUs: {}", describe(&gpus)),
    }
    let comm = Communicator::new(&gpus)?;
    if comm.uses_nccl() {
        let v = Communicator::nccl_version()?;
        println!("NCCL {}.{}.{} from {}", v / 10000, v / 100 % 100, v % 100, Communicator::nccl_path()?);
    }
    for a in 0..k {
        for b in (a + 1)..k {
            println!("device {a} <-> {b}: {}", gpus[a].peer_path(&gpus[b])?);
        }
    }
    println!("{rows} targets x {cols} columns x {n_sources} sources; column j on device j % {k}");

    let seed: u64 = rand::random();
    let src = sources(seed, n_sources);
    let mut on = prepare(&gpus, rows, cols, &src, seed)?;
    let mut host = gpus[0].pinned_matrix::<f32>(rows, cols)?;
    host.fill(f32::NAN); // poison: every element must be written
    let mut sums = gpus.iter().map(|g| g.pinned_buffer::<f32>(cols)).collect::<Result<Vec<_>>>()?;
    for s in &mut sums {
        s.fill(f32::NAN);
    }

    let wall = Instant::now();
    let traces = run(&gpus, &comm, &kernels::potential, &mut on, &mut host, &mut sums, true)?;
    let wall_ms = ms_since(wall);

    println!(
        "\ndevice  lanes  kernels (ms, sum)  copies back (ms, sum)  all-reduce (ms)  [traced, each device's own clock]"
    );
    for (d, trace) in traces.iter().enumerate() {
        let sum = |kind: SpanKind| -> f64 {
            trace.spans.iter().filter(|s| s.kind == kind).map(|s| (s.gpu_end_us - s.gpu_start_us) / 1e3).sum()
        };
        let launches = sum(SpanKind::Launch);
        println!(
            "{d:6}  {:5}  {launches:17.3}  {:21.3}  {:15.3}",
            owned(d, k, cols).len(),
            sum(SpanKind::CopyToHost),
            sum(SpanKind::Collective)
        );
        let written = std::fs::create_dir_all(trace_dir)
            .and_then(|()| std::fs::write(trace_dir.join(format!("seed-multi-gpu{d}.svg")), trace.to_svg()))
            .and_then(|()| std::fs::write(trace_dir.join(format!("seed-multi-gpu{d}.json")), trace.to_chrome_json()));
        if let Err(e) = written {
            println!("trace of device {d} not written to {}: {e}", trace_dir.display());
        }
    }
    println!("host wall time of the multi-GPU scope (traced): {wall_ms:.3} ms");
    println!("timelines: {}/seed-multi-gpu*.svg and .json (ui.perfetto.dev)", trace_dir.display());

    // Every element against the f64 reference, then every device's sums against the f64
    // reference's column sums.
    let all_targets: Vec<_> = (0..cols).flat_map(|j| targets(seed, j, rows)).collect();
    let worst = match gpu_kernels::reference::check_potential(&host, rows, cols, &all_targets, &src, EPS2, TOLERANCE) {
        Ok(w) => w,
        Err(msg) => {
            println!("check FAILED (seed {seed}): {msg}");
            return Ok(false);
        }
    };
    let reference: Vec<(f64, f64)> = (0..cols)
        .map(|j| {
            let column = gpu_kernels::reference::potential(&all_targets[j * rows..(j + 1) * rows], &src, EPS2);
            column.iter().fold((0.0, 0.0), |(s, a), v| (s + v, a + v.abs()))
        })
        .collect();
    match check_sums(&sums, &reference, rows, TOLERANCE) {
        Ok(w) => {
            println!(
                "check: all {} elements within {TOLERANCE:e} of the f64 reference (worst {worst:.2e}); every device's \
                 {cols} all-reduced column sums match the reference's (worst {w:.2e}); seed {seed}",
                rows * cols
            );
            Ok(true)
        }
        Err(msg) => {
            println!("check FAILED (seed {seed}): {msg}");
            Ok(false)
        }
    }
}
