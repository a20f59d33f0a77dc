//! The Rust side of `cargo xtask bench kernels`: times sluice's kernels exactly as
//! `benches/cuda/bench.cu` times their CUDA C++ versions, and prints the same CSV, so that
//! `benches/run.sh` can join the two runs line by line.
//!
//! ```text
//! bench_kernels all [--warmup W] [--reps R]
//! bench_kernels <kernel> <sizes...> [--warmup W] [--reps R] [--seed S]
//!   fill_column N | saxpy N | potential ROWS SOURCES | potential_tiled ROWS SOURCES
//!   potential_tiled_rsqrt ROWS SOURCES (the seed kernel)
//!   sum_reduce N | transpose ROWS COLS | histogram N BINS
//! ```
//!
//! Same as `bench.cu` (see `benches/cuda/README.md`): the default sizes of `all`, the launch
//! configurations, the parameters, the inputs (xorshift64 from seed `0x5eed`, the same
//! floats in the same order), 5 warm-up and 50 timed launches by default, and the `check`
//! column (the f64 sum of the output; `out[0]` for `sum_reduce`; the number of counted
//! values for `histogram`). Each launch is timed on one lane by two timestamps (CUDA events)
//! around it, and the host waits for the second before the next launch, as `bench.cu`
//! synchronises each launch; resetting an output the kernel adds to (`sum_reduce`'s
//! `out[0]`, `histogram`'s bins) is enqueued before the first timestamp, outside the span.
//!
//! Output: `# impl,kernel,sizes,block,grid,median_ms,min_ms,max_ms,reps,check,registers`, then one
//! line per kernel with `impl` = `rust`, formatted as `bench.cu`'s `printf` formats it.
//! Exit status: 1 for bad arguments, 2 for a CUDA error or no GPU (with a message on
//! stderr), 3 if `transpose`'s sampled elements are wrong.

use std::process::ExitCode;

use sluice::{kernels, scope, Error, Gpu, LaunchConfig, Particle, Result, Stream};

const USAGE: &str = "usage: bench_kernels <kernel> <sizes...> [--warmup W] [--reps R] [--seed S]\n  \
    fill_column N | saxpy N | potential ROWS SOURCES | potential_tiled ROWS SOURCES\n  \
    potential_tiled_rsqrt ROWS SOURCES\n  \
    sum_reduce N | transpose ROWS COLS | histogram N BINS | all (default sizes)\n";

/// Command-line options, with `bench.cu`'s defaults.
struct Options {
    warmup: usize,
    reps: usize,
    seed: u64,
}

mod common;
use common::Rng;

/// One CSV line.
struct Line {
    kernel: &'static str,
    sizes: String,
    cfg: LaunchConfig,
    /// The timed launches, in ms.
    ms: Vec<f32>,
    check: f64,
    /// Registers per thread, as the driver compiled the kernel.
    registers: u32,
}

/// Why a benchmark stopped.
enum Failure {
    /// A CUDA (sluice) error: exit status 2, as `bench.cu`'s `CHECK`.
    Cuda(Error),
    /// A wrong result: exit status 3, as `bench.cu`'s transpose check.
    Wrong(String),
}

impl From<Error> for Failure {
    fn from(e: Error) -> Self {
        Failure::Cuda(e)
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some((o, pos)) = parse(&args) else {
        eprint!("{USAGE}");
        return ExitCode::from(1);
    };
    let mut sizes = Vec::new();
    for p in &pos[1..] {
        match number(p) {
            Some(v) => sizes.push(v),
            None => {
                eprintln!("not a number: {p}");
                return ExitCode::from(1);
            }
        }
    }
    let kernel = pos[0].as_str();
    let arity = match kernel {
        "fill_column" | "saxpy" | "sum_reduce" => 1,
        "potential" | "potential_tiled" | "potential_tiled_rsqrt" | "transpose" | "histogram" => 2,
        "all" => 0,
        _ => usize::MAX,
    };
    if arity != sizes.len() {
        eprint!("{USAGE}");
        return ExitCode::from(1);
    }

    let gpu = match Gpu::new(0) {
        Ok(gpu) => gpu,
        Err(e) => {
            eprintln!("bench_kernels: no usable NVIDIA GPU, nothing measured: {e}");
            return ExitCode::from(2);
        }
    };
    let info = gpu.info();
    // stderr: stdout carries only the CSV that benches/run.sh parses.
    eprintln!(
        "bench_kernels: {} (sm_{}{}, {} SMs); {} warm-up and {} timed launches per kernel, seed {:#x}",
        info.name, info.compute_capability.0, info.compute_capability.1, info.sm_count, o.warmup, o.reps, o.seed
    );
    println!("# impl,kernel,sizes,block,grid,median_ms,min_ms,max_ms,reps,check,registers");
    let runs: Vec<(&str, Vec<u64>)> = if kernel == "all" {
        vec![
            ("fill_column", vec![1 << 26]),
            ("saxpy", vec![1 << 26]),
            ("potential", vec![1 << 16, 1 << 14]),
            ("potential_tiled", vec![1 << 16, 1 << 14]),
            // The seed workload's kernel at its compute-bound and copy-bound sizes.
            ("potential_tiled_rsqrt", vec![262_144, 8192]),
            ("potential_tiled_rsqrt", vec![4_194_304, 16]),
            ("sum_reduce", vec![1 << 26]),
            ("transpose", vec![8192, 8192]),
            ("histogram", vec![1 << 26, 256]),
        ]
    } else {
        vec![(kernel, sizes)]
    };
    for (kernel, sizes) in runs {
        let outcome = match (kernel, sizes.as_slice()) {
            ("fill_column", &[n]) => bench_fill_column(&gpu, &o, n as usize),
            ("saxpy", &[n]) => bench_saxpy(&gpu, &o, n as usize),
            ("potential", &[rows, sources]) => bench_potential(&gpu, &o, "potential", rows as usize, sources as usize),
            ("potential_tiled", &[rows, sources]) => {
                bench_potential(&gpu, &o, "potential_tiled", rows as usize, sources as usize)
            }
            ("potential_tiled_rsqrt", &[rows, sources]) => {
                bench_potential(&gpu, &o, "potential_tiled_rsqrt", rows as usize, sources as usize)
            }
            ("sum_reduce", &[n]) => bench_sum_reduce(&gpu, &o, n as usize),
            // bench.cu takes them as `unsigned`.
            ("transpose", &[rows, cols]) => bench_transpose(&gpu, &o, rows as u32, cols as u32),
            ("histogram", &[n, bins]) => bench_histogram(&gpu, &o, n as usize, bins as usize),
            _ => unreachable!("kernel names and arities are checked above"),
        };
        match outcome {
            Ok(line) => report(&line),
            Err(Failure::Cuda(e)) => {
                eprintln!("bench_kernels: {kernel}: {e}");
                return ExitCode::from(2);
            }
            Err(Failure::Wrong(msg)) => {
                eprintln!("{msg}");
                return ExitCode::from(3);
            }
        }
    }
    ExitCode::SUCCESS
}

/// Options anywhere on the line, as `bench.cu` reads them; `None` for a usage error.
fn parse(args: &[String]) -> Option<(Options, Vec<String>)> {
    let mut o = Options { warmup: 5, reps: 50, seed: 0x5eed };
    let mut pos = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let a = args[i].as_str();
        let has_value = i + 1 < args.len();
        match a {
            "--warmup" if has_value => o.warmup = usize::try_from(number(&args[i + 1])?).ok()?,
            "--reps" if has_value => o.reps = usize::try_from(number(&args[i + 1])?).ok()?,
            "--seed" if has_value => o.seed = number(&args[i + 1])?,
            _ => {
                pos.push(args[i].clone());
                i += 1;
                continue;
            }
        }
        i += 2;
    }
    if pos.is_empty() || o.reps < 1 {
        return None;
    }
    Some((o, pos))
}

/// A number as `strtoull(s, .., 0)` reads it: decimal, `0x` hexadecimal or `0` octal.
fn number(s: &str) -> Option<u64> {
    if let Some(hex) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        u64::from_str_radix(hex, 16).ok()
    } else if s.len() > 1 && s.starts_with('0') {
        u64::from_str_radix(&s[1..], 8).ok()
    } else {
        s.parse().ok()
    }
}

/// Prints one CSV line as `bench.cu`'s `report` does
/// (`%s,%s,%s,%ux%ux%u,%ux%ux%u,%.6f,%.6f,%.6f,%zu,%.9g,%d`; the last column the kernel's
/// registers per thread).
fn report(line: &Line) {
    let mut ms = line.ms.clone();
    ms.sort_by(f32::total_cmp);
    let n = ms.len();
    // In f32, as bench.cu computes it.
    let median = if n % 2 == 1 { ms[n / 2] } else { 0.5f32 * (ms[n / 2 - 1] + ms[n / 2]) };
    let (b, g) = (line.cfg.block, line.cfg.grid);
    println!(
        "rust,{},{},{}x{}x{},{}x{}x{},{:.6},{:.6},{:.6},{},{},{}",
        line.kernel,
        line.sizes,
        b.0,
        b.1,
        b.2,
        g.0,
        g.1,
        g.2,
        median as f64,
        ms[0] as f64,
        ms[n - 1] as f64,
        n,
        format_g(line.check, 9),
        line.registers
    );
}

/// C's `%.{precision}g`: the shorter of fixed and exponent notation for `precision`
/// significant digits, trailing zeros removed.
fn format_g(v: f64, precision: usize) -> String {
    if v.is_nan() {
        return if v.is_sign_negative() { "-nan" } else { "nan" }.to_string();
    }
    if v.is_infinite() {
        return if v < 0.0 { "-inf" } else { "inf" }.to_string();
    }
    if v == 0.0 {
        return if v.is_sign_negative() { "-0" } else { "0" }.to_string();
    }
    let p = precision.max(1);
    // The exponent C would print in %e style with p - 1 decimals (after rounding).
    let e_style = format!("{:.*e}", p - 1, v);
    let (mantissa, exp) = e_style.split_once('e').expect("`{:e}` always has an exponent");
    let x: i32 = exp.parse().expect("`{:e}`'s exponent is an integer");
    if x < -4 || x >= p as i32 {
        let sign = if x < 0 { '-' } else { '+' };
        format!("{}e{sign}{:02}", strip_zeros(mantissa), x.unsigned_abs())
    } else {
        let decimals = (p as i32 - 1 - x) as usize;
        strip_zeros(&format!("{v:.decimals$}")).to_string()
    }
}

/// Drops trailing zeros after a decimal point, and the point if nothing follows it.
fn strip_zeros(s: &str) -> &str {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.')
    } else {
        s
    }
}

/// The elapsed time of one launch: a timestamp (CUDA event) on this lane, the launch, a
/// timestamp; then the host waits for the second (`cuEventSynchronize`), as `bench.cu`
/// does after each launch.
fn timed(st: &Stream<'_, '_>, launch: impl FnOnce() -> Result<()>) -> Result<f32> {
    let start = st.timestamp()?;
    launch()?;
    let stop = st.timestamp()?;
    stop.elapsed_ms_since(&start)
}

/// Runs `rep` (a reset outside the timed span, then [`timed`]) for the warm-up and the
/// timed launches; returns the times of the timed ones.
fn repeat(o: &Options, mut rep: impl FnMut() -> Result<f32>) -> Result<Vec<f32>> {
    let mut ms = Vec::with_capacity(o.reps);
    for r in 0..o.warmup + o.reps {
        let t = rep()?;
        if r >= o.warmup {
            ms.push(t);
        }
    }
    Ok(ms)
}

/// `bench.cu`'s `ceil_div`, truncated to `unsigned` as there.
fn ceil_div(a: usize, b: usize) -> u32 {
    a.div_ceil(b) as u32
}

fn cfg_1d(grid: u32, block: u32) -> LaunchConfig {
    LaunchConfig { grid: (grid, 1, 1), block: (block, 1, 1), shared_mem_bytes: 0 }
}

/// `double s = 0; for (float x : v) s += x;`
fn sum_f32(v: &[f32]) -> f64 {
    v.iter().fold(0.0f64, |s, &x| s + x as f64)
}

fn bench_fill_column(gpu: &Gpu, o: &Options, n: usize) -> std::result::Result<Line, Failure> {
    let f = gpu.function(&kernels::fill_column)?;
    let cfg = cfg_1d(ceil_div(n, 256), 256);
    let (ms, check) = scope(gpu, |s| {
        let out = s.alloc_buffer::<f32>(n)?;
        let host = s.pinned_buffer::<f32>(n)?;
        let (ms, copy) = s.lane()?.enter(|st| {
            let mut out = st.bind(out.as_columns_mut());
            let ms = repeat(o, || timed(st, || st.launch(&f, cfg, (&mut out, 1.5f32))))?;
            Ok::<_, Error>((ms, st.copy_to_host(&out, host.as_pinned_mut())?))
        })?;
        Ok((ms, sum_f32(&copy.wait()?)))
    })?;
    Ok(Line { kernel: "fill_column", sizes: n.to_string(), cfg, ms, check, registers: f.registers() })
}

fn bench_saxpy(gpu: &Gpu, o: &Options, n: usize) -> std::result::Result<Line, Failure> {
    let mut rng = Rng(o.seed);
    let x: Vec<f32> = (0..n).map(|_| rng.next(-1.0, 1.0)).collect();
    let y: Vec<f32> = (0..n).map(|_| rng.next(-1.0, 1.0)).collect();
    let f = gpu.function(&kernels::saxpy)?;
    let cfg = cfg_1d(ceil_div(n, 256), 256);
    let (ms, check) = scope(gpu, |s| {
        let xs = s.upload(&x)?;
        let dy = s.alloc_buffer::<f32>(n)?;
        let host = s.pinned_buffer::<f32>(n)?;
        let (ms, copy) = s.lane()?.enter(|st| {
            let x = st.await_fence(&xs)?;
            let mut y_dev = st.bind(dy.as_columns_mut());
            st.copy_to_device(&y, &mut y_dev)?;
            // y changes at each launch (y = a x + y); the time does not depend on the values.
            let ms = repeat(o, || timed(st, || st.launch(&f, cfg, (&mut y_dev, &x, 0.5f32))))?;
            // The check: one launch from the original y.
            st.copy_to_device(&y, &mut y_dev)?;
            st.launch(&f, cfg, (&mut y_dev, &x, 0.5f32))?;
            Ok::<_, Error>((ms, st.copy_to_host(&y_dev, host.as_pinned_mut())?))
        })?;
        Ok((ms, sum_f32(&copy.wait()?)))
    })?;
    Ok(Line { kernel: "saxpy", sizes: n.to_string(), cfg, ms, check, registers: f.registers() })
}

fn bench_potential(
    gpu: &Gpu,
    o: &Options,
    kernel: &'static str,
    rows: usize,
    n_sources: usize,
) -> std::result::Result<Line, Failure> {
    let mut rng = Rng(o.seed);
    let targets: Vec<Particle> = (0..rows)
        .map(|_| Particle { x: rng.next(-1.0, 1.0), y: rng.next(-1.0, 1.0), z: rng.next(-1.0, 1.0), q: 0.0 })
        .collect();
    let sources: Vec<Particle> = (0..n_sources)
        .map(|_| Particle {
            x: rng.next(-1.0, 1.0),
            y: rng.next(-1.0, 1.0),
            z: rng.next(-1.0, 1.0),
            q: rng.next(-1.0, 1.0),
        })
        .collect();
    let f = gpu.function(match kernel {
        "potential" => &kernels::potential,
        "potential_tiled" => &kernels::potential_tiled,
        _ => &kernels::potential_tiled_rsqrt,
    })?;
    let cfg = cfg_1d(ceil_div(rows, 256), 256);
    const EPS2: f32 = 1e-3;
    let (ms, check) = scope(gpu, |s| {
        let (ts, ss) = (s.upload(&targets)?, s.upload(&sources)?);
        let out = s.alloc_buffer::<f32>(rows)?;
        let host = s.pinned_buffer::<f32>(rows)?;
        let (ms, copy) = s.lane()?.enter(|st| {
            let (t, src) = (st.await_fence(&ts)?, st.await_fence(&ss)?);
            let mut out = st.bind(out.as_columns_mut());
            let ms = repeat(o, || timed(st, || st.launch(&f, cfg, (&mut out, &t, &src, EPS2))))?;
            Ok::<_, Error>((ms, st.copy_to_host(&out, host.as_pinned_mut())?))
        })?;
        Ok((ms, sum_f32(&copy.wait()?)))
    })?;
    Ok(Line { kernel, sizes: format!("{rows}x{n_sources}"), cfg, ms, check, registers: f.registers() })
}

fn bench_sum_reduce(gpu: &Gpu, o: &Options, n: usize) -> std::result::Result<Line, Failure> {
    let mut rng = Rng(o.seed);
    let x: Vec<f32> = (0..n).map(|_| rng.next(-1.0, 1.0)).collect();
    let f = gpu.function(&kernels::sum_reduce)?;
    let cfg = cfg_1d(ceil_div(n, 1024).min(8 * gpu.info().sm_count), 256);
    let (ms, check) = scope(gpu, |s| {
        let xs = s.upload(&x)?;
        let out = s.alloc_buffer::<f32>(1)?;
        let host = s.pinned_buffer::<f32>(1)?;
        let (ms, copy) = s.lane()?.enter(|st| {
            let x = st.await_fence(&xs)?;
            let mut out = st.bind(out.as_columns_mut());
            let ms = repeat(o, || {
                st.zero(&mut out)?; // out[0] = 0 before each launch, outside the timed span
                timed(st, || st.launch(&f, cfg, (&mut out, &x)))
            })?;
            Ok::<_, Error>((ms, st.copy_to_host(&out, host.as_pinned_mut())?))
        })?;
        Ok((ms, copy.wait()?[0] as f64))
    })?;
    Ok(Line { kernel: "sum_reduce", sizes: n.to_string(), cfg, ms, check, registers: f.registers() })
}

fn bench_transpose(gpu: &Gpu, o: &Options, rows: u32, cols: u32) -> std::result::Result<Line, Failure> {
    let n = rows as usize * cols as usize;
    let mut rng = Rng(o.seed);
    let input: Vec<f32> = (0..n).map(|_| rng.next(-1.0, 1.0)).collect();
    let f = gpu.function(&kernels::transpose)?;
    let (tile, block_rows) = (gpu_kernels::TRANSPOSE_TILE, gpu_kernels::TRANSPOSE_BLOCK_ROWS);
    let cfg = LaunchConfig {
        grid: (cols.div_ceil(tile), rows.div_ceil(tile), 1),
        block: (tile, block_rows, 1),
        shared_mem_bytes: 0,
    };
    let (ms, check, mismatch) = scope(gpu, |s| {
        let ins = s.upload(&input)?;
        let out = s.alloc_buffer::<f32>(n)?;
        let host = s.pinned_buffer::<f32>(n)?;
        let (ms, copy) = s.lane()?.enter(|st| {
            let input = st.await_fence(&ins)?;
            let mut out = st.bind(out.as_columns_mut());
            let ms = repeat(o, || timed(st, || st.launch(&f, cfg, (&mut out, &input, rows, cols))))?;
            Ok::<_, Error>((ms, st.copy_to_host(&out, host.as_pinned_mut())?))
        })?;
        let h = copy.wait()?;
        // Check a few elements exactly (bench.cu's sample), then report the sum.
        let (rows, cols) = (rows as usize, cols as usize);
        let mismatch =
            (0..n).step_by(n / 97 + 1).map(|k| (k / cols, k % cols, k)).find(|&(r, c, k)| h[c * rows + r] != input[k]);
        Ok((ms, sum_f32(&h), mismatch.map(|(r, c, _)| (r, c))))
    })?;
    if let Some((r, c)) = mismatch {
        return Err(Failure::Wrong(format!("transpose mismatch at ({r}, {c})")));
    }
    Ok(Line { kernel: "transpose", sizes: format!("{rows}x{cols}"), cfg, ms, check, registers: f.registers() })
}

fn bench_histogram(gpu: &Gpu, o: &Options, n: usize, n_bins: usize) -> std::result::Result<Line, Failure> {
    let mut rng = Rng(o.seed);
    let x: Vec<f32> = (0..n).map(|_| rng.next(-1.1, 1.1)).collect();
    let f = gpu.function(&kernels::histogram)?;
    let cfg = cfg_1d(ceil_div(n, 256).min(2 * gpu.info().sm_count), 256);
    let (ms, check) = scope(gpu, |s| {
        let xs = s.upload(&x)?;
        let bins = s.alloc_buffer::<u32>(n_bins)?;
        let host = s.pinned_buffer::<u32>(n_bins)?;
        let (ms, copy) = s.lane()?.enter(|st| {
            let x = st.await_fence(&xs)?;
            let mut bins = st.bind(bins.as_columns_mut());
            let ms = repeat(o, || {
                st.zero(&mut bins)?; // the kernel adds to the bins: zero them outside the timed span
                timed(st, || st.launch(&f, cfg, (&mut bins, &x, -1.0f32, 1.0f32)))
            })?;
            Ok::<_, Error>((ms, st.copy_to_host(&bins, host.as_pinned_mut())?))
        })?;
        Ok((ms, copy.wait()?.iter().map(|&c| c as f64).sum::<f64>()))
    })?;
    Ok(Line { kernel: "histogram", sizes: format!("{n}x{n_bins}"), cfg, ms, check, registers: f.registers() })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn format_g_matches_printf() {
        // printf("%.9g") of each value, from glibc.
        for (v, want) in [
            (0.0, "0"),
            (-0.0, "-0"),
            (1.0, "1"),
            (123.456, "123.456"),
            (67108864.0, "67108864"),
            (-4688.53125, "-4688.53125"),
            (1234567890.0, "1.23456789e+09"),
            (0.0001234, "0.0001234"),
            (0.00001234, "1.234e-05"),
            (5e-5, "5e-05"),
            (999999999.5, "1e+09"),
            (61021114.0, "61021114"),
            (123456789.49, "123456789"),
            (99999.99999999, "100000"),
            (3.141592653589793, "3.14159265"),
            (1e-300, "1e-300"),
            (1e100, "1e+100"),
        ] {
            assert_eq!(format_g(v, 9), want, "{v:e}");
        }
    }

    #[test]
    fn rng_matches_bench_cu() {
        // bench.cu's Rng{0x5eed}: four next(-1, 1), then two next(-1.1f, 1.1f), printed by
        // the same C code compiled with gcc (`%.9g` round-trips an f32).
        let mut rng = Rng(0x5eed);
        let mut got: Vec<f32> = (0..4).map(|_| rng.next(-1.0, 1.0)).collect();
        got.extend((0..2).map(|_| rng.next(-1.1, 1.1)));
        assert_eq!(got, [-0.999997258, 0.560374141, 0.116086483, 0.642488837, 1.06111515, -0.271731079]);
    }

    #[test]
    fn options_parse_anywhere() {
        let args: Vec<String> =
            ["histogram", "--reps", "7", "1000", "0x10", "--seed", "010"].map(String::from).to_vec();
        let (o, pos) = parse(&args).unwrap();
        assert_eq!((o.warmup, o.reps, o.seed), (5, 7, 8));
        assert_eq!(pos, ["histogram", "1000", "0x10"]);
        assert_eq!(number("0x10"), Some(16));
        assert!(parse(&["all".to_string(), "--reps".to_string(), "0".to_string()]).is_none());
    }
}
