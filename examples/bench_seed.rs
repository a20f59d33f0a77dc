//! The seed workload timed end to end, the sluice side of `benches/cuda/seed.cu`.
//!
//! ```text
//! cargo run --release --example bench_seed -- LANES ROWS SOURCES [--warmup W] [--reps R] [--seed S]
//! ```
//!
//! One repetition is one `sluice::scope`: upload the sources and targets once, then per
//! lane await the uploads, run `potential` on the lane's column and copy that column to
//! pinned host memory on the same lane; the scope joins each lane. It is timed on the host
//! clock from entering the scope to its return, the same span `seed.cu` times (its streams
//! and buffers are made once; sluice's scope creates its lanes and upload buffers itself,
//! and that cost is in the number). The inputs come from the same xorshift64 generator
//! and seed as `seed.cu`, so the `check` column (the sum of the result) must agree.
//!
//! Prints `seed.cu`'s CSV: `impl,kernel,sizes,block,grid,median_ms,min_ms,max_ms,reps,check`.

use std::process::ExitCode;
use std::time::Instant;

use sluice::{kernels, scope, Error, Gpu, LaunchConfig, Result};

mod common;
use common::Rng;

struct Options {
    lanes: usize,
    rows: usize,
    sources: usize,
    warmup: usize,
    reps: usize,
    seed: u64,
}

fn parse() -> std::result::Result<Options, String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = || "usage: bench_seed LANES ROWS SOURCES [--warmup W] [--reps R] [--seed S]".to_string();
    let num = |s: &str| -> std::result::Result<u64, String> {
        let parsed = match s.strip_prefix("0x") {
            Some(hex) => u64::from_str_radix(hex, 16),
            None => s.parse(),
        };
        parsed.map_err(|_| format!("not a number: {s}\n{}", usage()))
    };
    if args.len() < 3 {
        return Err(usage());
    }
    let mut o = Options {
        lanes: num(&args[0])? as usize,
        rows: num(&args[1])? as usize,
        sources: num(&args[2])? as usize,
        warmup: 3,
        reps: 20,
        seed: 0x5eed,
    };
    let mut it = args[3..].iter();
    while let Some(flag) = it.next() {
        let v = num(it.next().ok_or_else(usage)?)?;
        match flag.as_str() {
            "--warmup" => o.warmup = v as usize,
            "--reps" => o.reps = v as usize,
            "--seed" => o.seed = v,
            _ => return Err(usage()),
        }
    }
    if o.lanes == 0 || o.rows == 0 || o.sources == 0 || o.reps == 0 {
        return Err(format!("LANES, ROWS, SOURCES and --reps must be positive\n{}", usage()));
    }
    Ok(o)
}

fn main() -> ExitCode {
    let o = match parse() {
        Ok(o) => o,
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
    match run(&gpu, &o) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("bench_seed: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(gpu: &Gpu, o: &Options) -> Result<bool> {
    let mut rng = Rng(o.seed);
    let sources = rng.particles(o.sources);
    let targets = rng.particles(o.rows * o.lanes);
    let potential = gpu.function(&kernels::potential)?; // load the module outside the timing
    let mut host = gpu.pinned_matrix::<f32>(o.rows, o.lanes)?;
    let cfg = LaunchConfig::for_elements(o.rows, 256);
    let (rows, lanes) = (o.rows, o.lanes);

    let mut ms = Vec::with_capacity(o.reps);
    // Where the host time goes (ms): uploads enqueued, all lanes enqueued, scope returned.
    let mut phases = Vec::with_capacity(o.reps);
    for r in 0..o.warmup + o.reps {
        host.fill(f32::NAN);
        let t0 = Instant::now();
        let (mut t_up, mut t_enq) = (0.0, 0.0);
        scope(gpu, |s| {
            let src = s.upload(&sources)?;
            let tgt = s.upload_matrix(&targets, rows, lanes)?;
            let out = s.alloc_matrix::<f32>(rows, lanes)?;
            t_up = t0.elapsed().as_secs_f64() * 1e3;
            for (j, ((lane, col), dst)) in s.lanes(lanes)?.into_iter().zip(out.columns_mut()).zip(host.columns_mut()).enumerate() {
                lane.enter(|st| {
                    let src = st.await_fence(&src)?;
                    let tgt = st.await_fence(&tgt)?.column(j).ok_or(Error::NotAdjacent)?;
                    let mut col = st.bind(col);
                    st.launch(&potential, cfg, (&mut col, &tgt, &src, 1e-3f32))?;
                    st.copy_to_host(&col, dst)
                })?;
            }
            t_enq = t0.elapsed().as_secs_f64() * 1e3;
            Ok(())
        })?;
        if r >= o.warmup {
            let total = t0.elapsed().as_secs_f64() * 1e3;
            ms.push(total);
            phases.push((t_up, t_enq, total));
        }
    }
    phases.sort_by(|a, b| a.2.total_cmp(&b.2));
    let (up, enq, total) = phases[phases.len() / 2];
    eprintln!("bench_seed {lanes}x{rows}x{}: median rep {total:.3} ms = uploads+allocs enqueued {up:.3} + lanes enqueued {:.3} + join and free {:.3}", o.sources, enq - up, total - enq);
    if let Some((i, _)) = host.iter().enumerate().find(|(_, v)| v.is_nan()) {
        eprintln!("bench_seed: element {i} was never written");
        return Ok(false);
    }
    let check: f64 = host.iter().map(|&v| v as f64).sum();
    ms.sort_by(f64::total_cmp);
    let median = if ms.len() % 2 == 1 { ms[ms.len() / 2] } else { 0.5 * (ms[ms.len() / 2 - 1] + ms[ms.len() / 2]) };
    println!("# impl,kernel,sizes,block,grid,median_ms,min_ms,max_ms,reps,check");
    println!(
        "rust,seed,{lanes}x{rows}x{},{}x1x1,{}x1x1,{median:.6},{:.6},{:.6},{},{check:.9}",
        o.sources,
        cfg.block.0,
        cfg.grid.0,
        ms[0],
        ms[ms.len() - 1],
        ms.len()
    );
    Ok(true)
}
