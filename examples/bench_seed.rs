//! The seed workload timed end to end, the sluice side of `benches/cuda/seed.cu`
//! (`cargo xtask bench seed`; `benches/run.sh` runs it and `benches/join.py` joins the sides).
//!
//! ```text
//! bench_seed [all | CONFIG...] [--reps R] [--warmup W] [--seed S] [--trace CONFIG]... [--trace-dir DIR]
//! ```
//!
//! For every configuration (`copy-bound`, `balanced`, `compute-bound`, `many-small`,
//! `many-small-128`, or `ROWSxCOLSxSOURCES`): the inputs are uploaded once with
//! `Gpu::upload`/`upload_matrix` (persistent, read in every scope with `bind_ref`: no upload
//! and no wait per repetition), the output matrix and its pinned destination are made once,
//! the kernel (`potential_tiled_rsqrt`, the Rust twin of `seed.cu`'s) is resolved once, and
//! the lanes are kept in one `LaneSet`. One repetition is one `LaneSet::scope` running a
//! variant (`bench_common::Variant`: per-lane copies, the fan-in, chunked fan-ins, kernels
//! only), timed on the host clock from just before the scope to its return — the scope joins
//! its lanes, so that is the C++ side's span from the first launch to the last wait, plus
//! whatever the scope itself costs.
//!
//! Before each repetition, outside the timing, the device output is poisoned with NaN (one
//! `fill_column` launch in its own scope) and so is the pinned host output; after it every
//! host element must have been written; after the last one 1024 sampled elements are checked
//! against the f64 reference. Prints `bench_common::CSV_HEADER`'s CSV, one line per variant.
//!
//! `--trace CONFIG` (repeatable) also runs the configuration's fastest path (by median, this
//! run) once more as a traced scope and writes `trace-CONFIG.json` (Chrome trace: open in
//! ui.perfetto.dev) and `trace-CONFIG.svg` into `--trace-dir` (default `.`).

use std::process::ExitCode;
use std::time::Instant;

use sluice::{Gpu, LaneSet, Result, SubmitConfig};

mod bench_common;
use bench_common::{
    checksum, count_nan, csv_line, device_line, enqueue, ms_since, poison, stats, verify, Args, Bench, Variant,
    CSV_HEADER,
};

const USAGE: &str =
    "usage: bench_seed [all | CONFIG...] [--reps R] [--warmup W] [--seed S] [--trace CONFIG]... [--trace-dir DIR]";

fn main() -> ExitCode {
    let args = match Args::parse(USAGE, &["trace", "trace-dir"]) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    let gpu = match Gpu::new(0) {
        Ok(g) => g,
        Err(e) => {
            eprintln!("bench_seed: no GPU to run on: {e}");
            return ExitCode::FAILURE;
        }
    };
    println!("{}", device_line(&gpu));
    println!("{CSV_HEADER}");
    let mut lanes = LaneSet::new(&gpu);
    let mut all_ok = true;
    for c in &args.configs {
        match run_config(&gpu, &mut lanes, c, &args) {
            Ok(ok) => all_ok &= ok,
            Err(e) => {
                eprintln!("bench_seed: {}: {e}", c.name);
                return ExitCode::FAILURE;
            }
        }
    }
    if all_ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(3)
    }
}

/// Runs every variant of one configuration; `Ok(false)` if a result check failed.
fn run_config(gpu: &Gpu, lanes: &mut LaneSet, c: &bench_common::Config, args: &Args) -> Result<bool> {
    let mut b = Bench::new(gpu, c, args.seed)?;
    let mut all_ok = true;
    let mut medians = Vec::new();
    for v in Variant::all(c.cols).into_iter().chain(Variant::naturals(c.rows)) {
        let name = v.name(c.cols);
        let mut samples = Vec::with_capacity(c.reps);
        let mut verified = Ok(());
        gpu.set_submit_config(v.submit_config());
        for r in 0..c.warmup + c.reps {
            b.poison_device(lanes)?;
            poison(&mut b.host);
            let Bench { src, tgt, out, host, f, cfg, .. } = &mut b;
            let t0 = Instant::now();
            match v {
                // The README's program: a fresh scope per repetition.
                Variant::Natural(_) => sluice::scope(gpu, |s| enqueue(s, v, src, tgt, out, host, f, *cfg))?,
                _ => lanes.scope(|s| enqueue(s, v, src, tgt, out, host, f, *cfg))?,
            }
            let ms = ms_since(t0);
            if r >= c.warmup {
                samples.push(ms);
            }
            if v.writes_host() && verified.is_ok() {
                let nan = count_nan(&b.host);
                if nan > 0 {
                    verified = Err(format!("rep_{r}_left_{nan}_unwritten"));
                }
            }
        }
        if !v.writes_host() {
            b.download(lanes)?;
        }
        let verified = verified.and_then(|()| verify(&b.host, &b.inputs));
        let verdict = verified.as_ref().map_or_else(|e| format!("FAIL:{e}"), |()| "ok".to_string());
        println!("{}", csv_line("rust", &name, c, &samples, checksum(&b.host), &verdict));
        if let Err(e) = &verified {
            eprintln!("bench_seed: {} {name}: {e}", c.name);
            all_ok = false;
        }
        if v.writes_host() && !matches!(v, Variant::Natural(_)) {
            medians.push((stats(&samples).0, v));
        }
        if v == Variant::Natural(bench_common::Submit::Auto) {
            let s = gpu.submit_stats();
            eprintln!(
                "bench_seed: {} natural: submissions so far on this device: {} direct, {} graphs captured, {} replayed ({} nodes updated, {} evicted), {} copies merged, {} fence records left out, {} plans reused",
                c.name, s.direct, s.graphs_captured, s.graphs_replayed, s.nodes_updated, s.graphs_evicted, s.copies_merged, s.fences_elided, s.plans_reused
            );
        }
    }
    if args.flags("trace").contains(&c.name.as_str()) {
        let best = medians.iter().min_by(|a, b| a.0.total_cmp(&b.0)).map(|m| m.1).unwrap_or(Variant::PerLane);
        let dir = args.flag("trace-dir").unwrap_or(".");
        trace(gpu, lanes, &mut b, best, dir)?;
        trace(gpu, lanes, &mut b, Variant::Natural(bench_common::Submit::Auto), dir)?;
    }
    gpu.set_submit_config(SubmitConfig::direct());
    Ok(all_ok)
}

/// A path once more, traced (three times: the first traced scope makes its timing events, and
/// a traced natural program's shape runs directly, then is captured, then replayed); writes
/// the last one's Chrome trace JSON and SVG (`trace-CONFIG.*` for the fastest hand-written
/// path, `trace-CONFIG-natural.*` for the natural program, which shows how it was submitted:
/// one graph launch when its shape repeats).
fn trace(gpu: &Gpu, lanes: &mut LaneSet, b: &mut Bench, v: Variant, dir: &str) -> Result<()> {
    let c = b.c.clone();
    let mut wall = 0.0;
    let mut last = None;
    gpu.set_submit_config(v.submit_config());
    for _ in 0..3 {
        b.poison_device(lanes)?;
        poison(&mut b.host);
        let Bench { src, tgt, out, host, f, cfg, .. } = &mut *b;
        let t0 = Instant::now();
        let ((), trace) = match v {
            Variant::Natural(_) => sluice::traced_scope(gpu, |s| enqueue(s, v, src, tgt, out, host, f, *cfg))?,
            _ => lanes.traced_scope(|s| enqueue(s, v, src, tgt, out, host, f, *cfg))?,
        };
        wall = ms_since(t0);
        last = Some(trace);
    }
    let trace = last.unwrap_or_default();
    let verified = verify(&b.host, &b.inputs);
    let name = v.name(c.cols);
    let base = match v {
        Variant::Natural(_) => format!("{dir}/trace-{}-natural", c.name),
        _ => format!("{dir}/trace-{}", c.name),
    };
    for sub in &trace.submissions {
        eprintln!("bench_seed: traced {} {name}: submitted {:?} ({}): {sub:?}", c.name, sub.path, sub.reason);
    }
    let written = std::fs::write(format!("{base}.json"), trace.to_chrome_json())
        .and_then(|()| std::fs::write(format!("{base}.svg"), trace.to_svg()));
    if let Err(e) = written {
        eprintln!("bench_seed: cannot write {base}.json/.svg: {e}");
    }
    eprintln!(
        "bench_seed: traced {} {name}: {} spans, GPU busy until {:.3} ms, host {wall:.3} ms (traced: two timing events per operation), check {}; wrote {base}.json and {base}.svg",
        c.name,
        trace.spans.len(),
        trace.gpu_end_us() / 1e3,
        verified.map_or_else(|e| format!("FAIL: {e}"), |()| "ok".into())
    );
    Ok(())
}
