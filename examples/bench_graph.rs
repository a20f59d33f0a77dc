//! Graph replay of the seed workload, the sluice side of `seed.cu --only graph`
//! (`cargo xtask bench graph`; `benches/run.sh` runs it and `benches/join.py` joins the sides).
//!
//! ```text
//! bench_graph [all | CONFIG...] [--reps R] [--warmup W] [--seed S]
//! bench_graph --leak N [CONFIG] [--seed S]
//! ```
//!
//! For every configuration, with the same persistent inputs, output matrix, pinned
//! destination and kernel as `bench_seed`: the per-lane and fan-in variants
//! (`bench_common::Variant`) are each recorded once with `sluice::graph` (nothing runs), then
//! replayed, timed on the host clock two ways:
//!
//! * `graph-per-lane`, `graph-fan-in`: one `LaneSet::scope` per replay, the replay and its
//!   wait inside (`s.lane()?.enter(|st| st.replay(&g))?.wait()`), timed from before the scope
//!   to its return. What a program pays when every step is its own scope; the table's number.
//! * `graph-per-lane-many`, `graph-fan-in-many`: many replays in one scope, each timed from
//!   `replay` to the return of its `wait`: the span `seed.cu` times for its graphs
//!   (`cudaGraphLaunch` to `cudaStreamSynchronize`).
//!
//! Checks: the device and host outputs are poisoned with NaN before recording, and the first
//! replay's outputs must have no NaN left; after the last replay the host output (the graph's
//! pinned destination, readable once the graph is dropped) is checked against the f64
//! reference on 1024 samples. Between replays the outputs cannot be poisoned again: the graph
//! borrows them for its whole life — rule 4 at work. Prints `bench_common::CSV_HEADER`'s CSV.
//!
//! `--leak N` records the fan-in of one configuration (default `many-small`), replays it 100
//! times to settle, then N times, one scope per replay, and prints device free memory (after
//! `trim_memory_pool`) and the process's resident set before and after:
//! `mem,config,variant,replays,device_free_before,device_free_after,rss_kib_before,rss_kib_after,total_ms,verified`.

use std::process::ExitCode;
use std::time::Instant;

use sluice::{graph, Gpu, LaneSet, Outputs, Result};

mod bench_common;
use bench_common::{
    checksum, count_nan, csv_line, device_line, enqueue, ms_since, poison, rss_kib, verify, Args, Bench, Config,
    Variant, CSV_HEADER,
};

const USAGE: &str = "usage: bench_graph [all | CONFIG...] [--reps R] [--warmup W] [--seed S]\n       bench_graph --leak N [CONFIG] [--seed S]";

fn main() -> ExitCode {
    let args = match Args::parse(USAGE, &["leak"]) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    let leak = match args.number("leak") {
        Ok(l) => l,
        Err(e) => {
            eprintln!("{e}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    let gpu = match Gpu::new(0) {
        Ok(g) => g,
        Err(e) => {
            eprintln!("bench_graph: no GPU to run on: {e}");
            return ExitCode::FAILURE;
        }
    };
    let mut lanes = LaneSet::new(&gpu);
    let result = match leak {
        Some(n) => {
            let explicit = std::env::args().skip(1).any(|a| bench_common::parse_config(&a).is_some());
            let c = if explicit {
                args.configs[0].clone()
            } else {
                bench_common::parse_config("many-small").expect("a known configuration")
            };
            leak_loop(&gpu, &mut lanes, &c, args.seed, n)
        }
        None => {
            println!("{}", device_line(&gpu));
            println!("{CSV_HEADER}");
            args.configs.iter().try_fold(true, |ok, c| Ok(run_config(&gpu, &mut lanes, c, args.seed)? && ok))
        }
    };
    match result {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(3),
        Err(e) => {
            eprintln!("bench_graph: {e}");
            ExitCode::FAILURE
        }
    }
}

/// NaN left in a replay's outputs (every destination of the recording).
fn nan_in(outputs: &Outputs<'_>) -> Result<usize> {
    (0..outputs.len()).try_fold(0, |n, i| Ok(n + count_nan(outputs.get::<f32>(i)?)))
}

/// Every graph variant of one configuration; `Ok(false)` if a result check failed.
fn run_config(gpu: &Gpu, lanes: &mut LaneSet, c: &Config, seed: u64) -> Result<bool> {
    let mut b = Bench::new(gpu, c, seed)?;
    let mut all_ok = true;
    let warmup = c.warmup.max(1); // the first replay is checked for unwritten elements
    for v in [Variant::PerLane, Variant::Chunked(c.cols)] {
        let name = format!("graph-{}", v.name(c.cols));
        let mut per_scope = Vec::with_capacity(c.reps);
        let mut many = Vec::with_capacity(c.reps);
        let mut first_nan = 0;
        {
            let Bench { src, tgt, out, host, f, cfg, .. } = &mut b;
            b_poison(lanes, out, host)?;
            let (g, ()) = graph(gpu, |s| enqueue(s, v, src, tgt, out, host, f, *cfg))?;
            for r in 0..warmup + c.reps {
                let t0 = Instant::now();
                lanes.scope(|s| {
                    let outputs = s.lane()?.enter(|st| st.replay(&g))?.wait()?;
                    if r == 0 {
                        first_nan = nan_in(&outputs)?; // a warm-up replay: not timed
                    }
                    Ok(())
                })?;
                if r >= warmup {
                    per_scope.push(ms_since(t0));
                }
            }
            lanes.scope(|s| {
                let lane = s.lane()?;
                for r in 0..warmup + c.reps {
                    let t0 = Instant::now();
                    let outputs = lane.enter(|st| st.replay(&g))?.wait()?;
                    let ms = ms_since(t0);
                    drop(outputs);
                    if r >= warmup {
                        many.push(ms);
                    }
                }
                Ok(())
            })?;
        }
        // The graph is gone: the host output is the last replay's.
        let verified = if first_nan > 0 {
            Err(format!("first_replay_left_{first_nan}_unwritten"))
        } else {
            verify(&b.host, &b.inputs)
        };
        let verdict = verified.as_ref().map_or_else(|e| format!("FAIL:{e}"), |()| "ok".to_string());
        let check = checksum(&b.host);
        println!("{}", csv_line("rust", &name, c, &per_scope, check, &verdict));
        println!("{}", csv_line("rust", &format!("{name}-many"), c, &many, check, &verdict));
        if let Err(e) = verified {
            eprintln!("bench_graph: {} {name}: {e}", c.name);
            all_ok = false;
        }
    }
    Ok(all_ok)
}

/// Poisons the device and host outputs (NaN) before a recording.
fn b_poison(
    lanes: &mut LaneSet,
    out: &mut sluice::DeviceMatrix<f32>,
    host: &mut sluice::PinnedMatrix<f32>,
) -> Result<()> {
    let n = out.rows() * out.cols();
    lanes.scope(|s| {
        s.lane()?.enter(|st| {
            let mut v = st.bind(out.as_columns_mut());
            st.launch(
                &sluice::kernels::fill_column,
                sluice::LaunchConfig::for_elements(n, bench_common::BLOCK),
                (&mut v, f32::NAN),
            )
        })
    })?;
    poison(host);
    Ok(())
}

/// `n` replays of the fan-in graph, one scope each, with device and host memory before and
/// after.
fn leak_loop(gpu: &Gpu, lanes: &mut LaneSet, c: &Config, seed: u64, n: usize) -> Result<bool> {
    let mut b = Bench::new(gpu, c, seed)?;
    let v = Variant::Chunked(c.cols);
    let (before, after, total) = {
        let Bench { src, tgt, out, host, f, cfg, .. } = &mut b;
        b_poison(lanes, out, host)?;
        let (g, ()) = graph(gpu, |s| enqueue(s, v, src, tgt, out, host, f, *cfg))?;
        let replay = |lanes: &mut LaneSet| lanes.scope(|s| s.lane()?.enter(|st| st.replay(&g))?.wait().map(drop));
        for _ in 0..100 {
            replay(lanes)?;
        }
        gpu.trim_memory_pool()?;
        let before = (gpu.mem_info()?.free, rss_kib().unwrap_or(0));
        let t0 = Instant::now();
        for _ in 0..n {
            replay(lanes)?;
        }
        let total = ms_since(t0);
        gpu.trim_memory_pool()?;
        let after = (gpu.mem_info()?.free, rss_kib().unwrap_or(0));
        (before, after, total)
    };
    let verified = verify(&b.host, &b.inputs);
    let verdict = verified.as_ref().map_or_else(|e| format!("FAIL:{e}"), |()| "ok".to_string());
    println!(
        "mem,{},graph-{},{n},{},{},{},{},{total:.3},{verdict}",
        c.name,
        v.name(c.cols),
        before.0,
        after.0,
        before.1,
        after.1
    );
    eprintln!(
        "bench_graph: {n} replays of {} graph-{} ({:.1} µs each, one scope per replay): device free {} -> {} bytes, resident set {} -> {} KiB",
        c.name,
        v.name(c.cols),
        total * 1e3 / n.max(1) as f64,
        before.0,
        after.0,
        before.1,
        after.1
    );
    Ok(verified.is_ok())
}
