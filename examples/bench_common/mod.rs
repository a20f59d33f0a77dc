//! Shared by the seed and graph benchmarks (`bench_seed`, `bench_graph`, `bench_scopes`; not
//! an example itself: Cargo builds only `examples/*.rs` and `examples/*/main.rs`): the
//! configurations, the inputs, the ways the seed workload is written with sluice, the result
//! checks, the statistics and the CSV line `benches/join.py` reads. The CUDA C++ side of every
//! piece is in `benches/cuda/seed.cu`; keep the two in step.

// Each benchmark program compiles this module and uses a different part of it.
#![allow(dead_code)]

use std::time::Instant;

pub use gpu_kernels::reference::{potential_at, Rng};
use sluice::{
    kernels, DeviceMatrix, Error, Function, Gpu, KernelDecl, LaneSet, LaunchConfig, Particle, PinnedMatrix, Result,
    Scope, SubmitConfig,
};

/// The softening of every run (`eps2`), as `seed.cu`'s `EPS2`.
pub const EPS2: f32 = 1e-3;
/// Threads per block; the grid is `ceil(rows / BLOCK)`.
pub const BLOCK: u32 = 256;
/// The inputs' seed, as `seed.cu`'s default.
pub const SEED: u64 = 0x5eed;
/// Relative error allowed against the f64 reference (the kernel's `rsqrt` is within 1e-5).
pub const TOL: f64 = 1e-4;

/// The kernel of every seed and graph benchmark, resolved once outside the timing: the Rust
/// twin of `potential_tiled_rsqrt` in `benches/cuda/kernels.cuh`.
pub type Potential = Function<<kernels::potential_tiled_rsqrt as KernelDecl>::Signature>;

/// One configuration of the seed workload: `cols` columns of `rows` targets, `sources`
/// sources, and how many repetitions to time.
#[derive(Debug, Clone)]
pub struct Config {
    pub name: String,
    pub rows: usize,
    pub cols: usize,
    pub sources: usize,
    pub warmup: usize,
    pub reps: usize,
}

/// The configurations of issue 10, with `seed.cu`'s warm-ups and repetitions (benches/join.py
/// checks that both sides ran the same sizes).
pub fn configs() -> Vec<Config> {
    let c = |name: &str, rows, cols, sources, warmup, reps| Config {
        name: name.to_string(),
        rows,
        cols,
        sources,
        warmup,
        reps,
    };
    vec![
        c("copy-bound", 4_194_304, 8, 16, 3, 40),
        c("balanced", 1_048_576, 8, 256, 5, 60),
        c("compute-bound", 262_144, 8, 8192, 3, 40),
        c("many-small", 16_384, 64, 256, 20, 200),
        c("many-small-128", 4096, 128, 256, 20, 200),
    ]
}

/// A configuration by name, or `ROWSxCOLSxSOURCES` (5 warm-ups, 40 repetitions).
pub fn parse_config(s: &str) -> Option<Config> {
    if let Some(c) = configs().into_iter().find(|c| c.name == s) {
        return Some(c);
    }
    let parts: Vec<usize> = s.split('x').map(|p| p.parse().ok()).collect::<Option<_>>()?;
    match parts[..] {
        [rows, cols, sources] if rows > 0 && (1..=128).contains(&cols) && sources > 0 => {
            Some(Config { name: s.to_string(), rows, cols, sources, warmup: 5, reps: 40 })
        }
        _ => None,
    }
}

/// Command line: configurations (`all`, names, `ROWSxCOLSxSOURCES`; none means all) and
/// `--flag value` pairs, of which `--reps`, `--warmup` and `--seed` are common to all.
pub struct Args {
    pub configs: Vec<Config>,
    pub seed: u64,
    flags: Vec<(String, String)>,
}

impl Args {
    /// Parses `std::env::args`, accepting `--reps`, `--warmup`, `--seed` and `extra` flags.
    pub fn parse(usage: &str, extra: &[&str]) -> std::result::Result<Args, String> {
        let argv: Vec<String> = std::env::args().skip(1).collect();
        let mut args = Args { configs: Vec::new(), seed: SEED, flags: Vec::new() };
        let mut it = argv.into_iter();
        while let Some(a) = it.next() {
            if let Some(flag) = a.strip_prefix("--") {
                let known = ["reps", "warmup", "seed"].contains(&flag) || extra.contains(&flag);
                let value = it.next().filter(|_| known).ok_or_else(|| usage.to_string())?;
                args.flags.push((flag.to_string(), value));
            } else if a == "all" {
                args.configs.extend(configs());
            } else {
                args.configs.push(parse_config(&a).ok_or_else(|| format!("unknown configuration `{a}`\n{usage}"))?);
            }
        }
        if args.configs.is_empty() {
            args.configs = configs();
        }
        if let Some(seed) = args.flag("seed") {
            args.seed = parse_u64(seed).ok_or_else(|| usage.to_string())?;
        }
        let (reps, warmup) = (args.number("reps")?, args.number("warmup")?);
        for c in &mut args.configs {
            c.reps = reps.unwrap_or(c.reps).max(1);
            c.warmup = warmup.unwrap_or(c.warmup);
        }
        Ok(args)
    }

    /// The last value given for `--name`.
    pub fn flag(&self, name: &str) -> Option<&str> {
        self.flags.iter().rev().find(|(f, _)| f == name).map(|(_, v)| v.as_str())
    }

    /// Every value given for `--name`, in order.
    pub fn flags(&self, name: &str) -> Vec<&str> {
        self.flags.iter().filter(|(f, _)| f == name).map(|(_, v)| v.as_str()).collect()
    }

    /// `--name` as a number, if given.
    pub fn number(&self, name: &str) -> std::result::Result<Option<usize>, String> {
        self.flag(name)
            .map(|v| parse_u64(v).map(|n| n as usize).ok_or_else(|| format!("--{name}: not a number: {v}")))
            .transpose()
    }
}

fn parse_u64(s: &str) -> Option<u64> {
    match s.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16).ok(),
        None => s.parse().ok(),
    }
}

/// The inputs of a configuration: sources first, then targets (column `j` holds targets
/// `j * rows..`), from one generator seeded with `seed`: what `seed.cu` draws.
pub struct Inputs {
    pub sources: Vec<Particle>,
    pub targets: Vec<Particle>,
}

pub fn inputs(c: &Config, seed: u64) -> Inputs {
    let mut rng = Rng(seed);
    let sources = rng.particles(c.sources);
    let targets = rng.particles(c.rows * c.cols);
    Inputs { sources, targets }
}

/// Everything one configuration's runs share, on the device before anything is timed:
/// the inputs (`Gpu::upload`, persistent), the output matrix, its pinned host destination,
/// the resolved kernel.
pub struct Bench {
    pub c: Config,
    pub inputs: Inputs,
    pub src: DeviceMatrix<Particle>,
    pub tgt: DeviceMatrix<Particle>,
    pub out: DeviceMatrix<f32>,
    pub host: PinnedMatrix<f32>,
    pub f: Potential,
    pub cfg: LaunchConfig,
}

impl Bench {
    pub fn new(gpu: &Gpu, c: &Config, seed: u64) -> Result<Bench> {
        let inputs = inputs(c, seed);
        let src = gpu.upload(&inputs.sources)?;
        let tgt = gpu.upload_matrix(&inputs.targets, c.rows, c.cols)?;
        let out = gpu.alloc_matrix::<f32>(c.rows, c.cols)?;
        let host = gpu.pinned_matrix::<f32>(c.rows, c.cols)?;
        let f = gpu.function(&kernels::potential_tiled_rsqrt)?;
        let cfg = LaunchConfig::for_elements(c.rows, BLOCK);
        Ok(Bench { c: c.clone(), inputs, src, tgt, out, host, f, cfg })
    }

    /// Poisons the device output with NaN (one `fill_column` over the whole matrix, joined),
    /// so that a repetition whose kernels did not run shows.
    pub fn poison_device(&mut self, lanes: &mut LaneSet) -> Result<()> {
        let (out, n) = (&mut self.out, self.c.rows * self.c.cols);
        lanes.scope(|s| {
            s.lane()?.enter(|st| {
                let mut v = st.bind(out.as_columns_mut());
                st.launch(&kernels::fill_column, LaunchConfig::for_elements(n, BLOCK), (&mut v, f32::NAN))
            })
        })
    }

    /// Copies the device output to the host (poisoned first), for the variants that do not.
    pub fn download(&mut self, lanes: &mut LaneSet) -> Result<()> {
        poison(&mut self.host);
        let (out, host) = (&self.out, &mut self.host);
        lanes.scope(|s| {
            s.lane()?.enter(|st| st.copy_to_host(st.bind_ref(out.as_columns()), host.as_pinned_mut())?.wait().map(drop))
        })
    }
}

/// How the natural program's scopes are submitted (`SubmitConfig`): the levers of issue 23,
/// for attributing what moved which row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Submit {
    /// The default: deferred, copies merged, repeated scopes replayed as graphs.
    Auto,
    /// Deferred and merged, no graphs.
    NoGraph,
    /// One driver call per operation as it is asked for (sluice before issue 23).
    Direct,
    /// The default with another merged-copy size (`SubmitConfig::merge_copy_bytes`; 0: no
    /// merging): where the default's size stands among its neighbours.
    Merge(usize),
    /// The default with segments of this many lanes (`SubmitConfig::segment_lanes`; the
    /// default's are 4; 0: none).
    Segments(usize),
    /// The default with merged copies of `columns` columns (`SubmitConfig::merge_columns`,
    /// with `merge_copy_bytes` at 4 MiB so that the bytes do not cut them shorter), and
    /// segments of `segments` lanes (0: none; a segment's copies merge only among its lanes).
    Columns { segments: usize, columns: usize },
    /// Segments of this many lanes, each graph launched by the program's thread
    /// (`SubmitConfig::background_launches` off).
    SegmentsInline(usize),
    /// The default with another graph shape: most branches (`SubmitConfig::graph_branches`;
    /// 0: automatic, `usize::MAX`: one per lane) and whether the kernels that wait for
    /// nothing are chained by launch-order edges (`SubmitConfig::chain_launches`).
    Shape { branches: usize, chain: bool },
}

impl Submit {
    pub fn config(self) -> SubmitConfig {
        match self {
            Submit::Auto => SubmitConfig::default(),
            Submit::NoGraph => SubmitConfig::deferred(),
            Submit::Direct => SubmitConfig::direct(),
            Submit::Merge(bytes) => SubmitConfig { merge_copy_bytes: bytes, ..SubmitConfig::default() },
            Submit::Segments(lanes) => SubmitConfig { segment_lanes: lanes, ..SubmitConfig::default() },
            Submit::Columns { segments, columns } => SubmitConfig {
                segment_lanes: segments,
                merge_columns: columns,
                merge_copy_bytes: 4 << 20,
                ..SubmitConfig::default()
            },
            Submit::SegmentsInline(lanes) => {
                SubmitConfig { segment_lanes: lanes, background_launches: false, ..SubmitConfig::default() }
            }
            Submit::Shape { branches, chain } => {
                SubmitConfig { graph_branches: branches, chain_launches: chain, ..SubmitConfig::default() }
            }
        }
    }
}

/// How the seed workload is written with sluice. Lane `j` runs column `j`; the inputs are
/// persistent (`bind_ref`, no wait), the output matrix and its pinned destination are bound
/// per scope. The hand-written variants run with `SubmitConfig::direct()` (each schedule as
/// written); `Natural` is the README's program, run as a user runs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Variant {
    /// The README's program, unchanged but for the inputs uploaded once (`gpu.upload`,
    /// awaited as the README awaits `s.upload`'s fences): one fresh `sluice::scope` per
    /// repetition, the output matrix allocated in it, one lane per column, each column copied
    /// on its own lane ([`natural`]).
    Natural(Submit),
    /// Per lane: the kernel, then the copy of its column on the same lane.
    PerLane,
    /// Per chunk of `k` adjacent columns: every lane fences its column; the chunk's last lane
    /// awaits the others (`await_all`), joins its own column and copies the chunk with one
    /// copy. `k = cols` is the fan-in: one copy of the whole matrix.
    Chunked(usize),
    /// Kernels only, one per lane, no copy (for the kernel comparison).
    KernelsOnly,
}

impl Variant {
    /// The variants for `cols` columns: per-lane, fan-in, chunks of cols/2, cols/4, cols/8
    /// and cols/16 columns (where at least 2; a sixteenth is 4 columns of many-small's 64,
    /// the 256 KiB sluice's default merges), kernels-only.
    pub fn all(cols: usize) -> Vec<Variant> {
        let mut v = vec![Variant::PerLane, Variant::Chunked(cols)];
        for parts in [2, 4, 8, 16] {
            let k = cols / parts;
            if k >= 2 && cols.is_multiple_of(parts) {
                v.push(Variant::Chunked(k));
            }
        }
        v.push(Variant::KernelsOnly);
        v
    }

    /// The natural program, submitted each way; for columns small enough to merge (`rows`
    /// `f32`s), also with other merged-copy sizes.
    pub fn naturals(rows: usize) -> Vec<Variant> {
        let mut v =
            vec![Variant::Natural(Submit::Auto), Variant::Natural(Submit::NoGraph), Variant::Natural(Submit::Direct)];
        let default = SubmitConfig::default().merge_copy_bytes;
        // Columns that merge (at most half a merged copy): with none, 128 KiB (as none where
        // the columns are over 64 KiB), the earlier default's 512 KiB and 4 MiB chunks.
        let merges = rows * 4 * 2 <= default;
        if merges {
            v.extend([0, 128 << 10, 512 << 10, 4 << 20].map(|b| Variant::Natural(Submit::Merge(b))));
        }
        // Around the default's segments of 4: none, 1, 2, 8 and 16.
        v.extend([0, 1, 2, 8, 16].map(|n| Variant::Natural(Submit::Segments(n))));
        if merges {
            // Chunks of 8 columns (the best C++ chunking at 64 lanes of 64 KiB columns), with
            // and without segments.
            v.extend([0, 4, 8].map(|segments| Variant::Natural(Submit::Columns { segments, columns: 8 })));
        }
        v.push(Variant::Natural(Submit::SegmentsInline(SubmitConfig::default().segment_lanes)));
        let d = SubmitConfig::default();
        for (branches, chain) in [(d.graph_branches, !d.chain_launches), (usize::MAX, false), (64, true)] {
            v.push(Variant::Natural(Submit::Shape { branches, chain }));
        }
        v
    }

    /// How the variant's scopes are submitted.
    pub fn submit_config(self) -> SubmitConfig {
        match self {
            Variant::Natural(s) => s.config(),
            _ => SubmitConfig::direct(),
        }
    }

    /// The name in the CSV (`seed.cu`'s names where the program is the same).
    pub fn name(self, cols: usize) -> String {
        match self {
            Variant::Natural(Submit::Auto) => "natural".into(),
            Variant::Natural(Submit::NoGraph) => "natural-nograph".into(),
            Variant::Natural(Submit::Direct) => "natural-direct".into(),
            Variant::Natural(Submit::Merge(0)) => "natural-merge-none".into(),
            Variant::Natural(Submit::Merge(b)) => format!("natural-merge-{}k", b >> 10),
            Variant::Natural(Submit::Segments(n)) => format!("natural-seg{n}"),
            Variant::Natural(Submit::Columns { segments: 0, columns }) => format!("natural-c{columns}"),
            Variant::Natural(Submit::Columns { segments, columns }) => format!("natural-seg{segments}-c{columns}"),
            Variant::Natural(Submit::SegmentsInline(n)) => format!("natural-seg{n}-inline"),
            Variant::Natural(Submit::Shape { branches, chain }) => {
                let b = match branches {
                    0 => "auto".to_string(),
                    usize::MAX => "all".to_string(),
                    n => n.to_string(),
                };
                format!("natural-b{b}-{}", if chain { "chain" } else { "nochain" })
            }
            Variant::PerLane => "per-lane".into(),
            Variant::Chunked(k) if k == cols => "fan-in".into(),
            Variant::Chunked(k) => format!("chunked-k{k}"),
            Variant::KernelsOnly => "kernels-n".into(),
        }
    }

    /// Whether the variant copies results to the host.
    pub fn writes_host(self) -> bool {
        self != Variant::KernelsOnly
    }
}

/// The README's program (`README.md`, "What it looks like"), the inputs uploaded once: one
/// repetition, in the fresh scope `s` of `sluice::scope`.
pub fn natural<'scope, 'env>(
    s: &'scope Scope<'scope, 'env>,
    sources: &'scope DeviceMatrix<Particle>,
    targets: &'scope DeviceMatrix<Particle>,
    host: &'scope mut PinnedMatrix<f32>,
    cfg: LaunchConfig,
) -> Result<()> {
    let (rows, n) = (host.rows(), host.cols());
    let out = s.alloc_matrix::<f32>(rows, n)?;
    for (j, ((lane, col), dst)) in s.lanes(n)?.into_iter().zip(out.columns_mut()).zip(host.columns_mut()).enumerate() {
        lane.enter(|st| {
            let src = st.await_fence(sources)?; // persistent: nothing to wait for
            let tgt = st.await_fence(targets)?.column(j).ok_or(Error::NotAdjacent)?;
            let mut col = st.bind(col);
            st.launch(&kernels::potential_tiled_rsqrt, cfg, (&mut col, &tgt, &src, EPS2))?;
            st.copy_to_host(&col, dst)
        })?;
    }
    Ok(())
}

/// Enqueues one repetition of `v` in scope `s` (or records it, in a graph's scope). The host
/// waits for nothing here: the scope's end joins the lanes (or a replay's wait does).
#[allow(clippy::too_many_arguments)]
pub fn enqueue<'scope, 'env>(
    s: &'scope Scope<'scope, 'env>,
    v: Variant,
    src: &'scope DeviceMatrix<Particle>,
    tgt: &'scope DeviceMatrix<Particle>,
    out: &'scope mut DeviceMatrix<f32>,
    host: &'scope mut PinnedMatrix<f32>,
    f: &Potential,
    cfg: LaunchConfig,
) -> Result<()> {
    if let Variant::Natural(_) = v {
        // Its own output matrix, allocated in the scope, as the README's program does.
        return natural(s, src, tgt, host, cfg);
    }
    let cols = out.cols();
    let lanes = s.lanes(cols)?;
    match v {
        Variant::PerLane => {
            for (j, ((lane, col), dst)) in lanes.iter().zip(out.columns_mut()).zip(host.columns_mut()).enumerate() {
                lane.enter(|st| {
                    let (sv, tv) =
                        (st.bind_ref(src.as_columns()), st.bind_ref(tgt.column(j).ok_or(Error::NotAdjacent)?));
                    let mut cv = st.bind(col);
                    st.launch(f, cfg, (&mut cv, &tv, &sv, EPS2))?;
                    st.copy_to_host(&cv, dst).map(drop)
                })?;
            }
        }
        Variant::Chunked(k) => {
            let mut dsts = host.column_chunks_mut(k);
            let mut handed = Vec::with_capacity(k);
            for (j, (lane, col)) in lanes.iter().zip(out.columns_mut()).enumerate() {
                lane.enter(|st| {
                    let (sv, tv) =
                        (st.bind_ref(src.as_columns()), st.bind_ref(tgt.column(j).ok_or(Error::NotAdjacent)?));
                    let mut cv = st.bind(col);
                    st.launch(f, cfg, (&mut cv, &tv, &sv, EPS2))?;
                    if j % k + 1 < k && j + 1 < cols {
                        handed.push(st.fence(cv)?);
                        return Ok(());
                    }
                    // The chunk's last lane: the others' columns (one wait each), then its own.
                    let chunk = if handed.is_empty() {
                        cv
                    } else {
                        st.await_all(handed.drain(..))?.join(cv).map_err(|_| Error::NotAdjacent)?
                    };
                    let dst = dsts.next().ok_or(Error::NotAdjacent)?;
                    st.copy_to_host(&chunk, dst).map(drop)
                })?;
            }
        }
        Variant::Natural(_) => {}
        Variant::KernelsOnly => {
            for (j, (lane, col)) in lanes.iter().zip(out.columns_mut()).enumerate() {
                lane.enter(|st| {
                    let (sv, tv) =
                        (st.bind_ref(src.as_columns()), st.bind_ref(tgt.column(j).ok_or(Error::NotAdjacent)?));
                    let mut cv = st.bind(col);
                    st.launch(f, cfg, (&mut cv, &tv, &sv, EPS2))
                })?;
            }
        }
    }
    Ok(())
}

/// NaN in every element (all bits set: `seed.cu` memsets 0xff too).
pub fn poison(h: &mut [f32]) {
    bytemuck::cast_slice_mut::<f32, u8>(h).fill(0xff);
}

/// How many elements are NaN (never written since the poison).
pub fn count_nan(h: &[f32]) -> usize {
    h.iter().map(|v| v.is_nan() as usize).sum()
}

/// The result check: no element left unwritten, and 1024 sampled elements (or all, if fewer;
/// the indices `seed.cu` samples) within [`TOL`] of the f64 reference. `Ok` or why not.
pub fn verify(out: &[f32], inputs: &Inputs) -> std::result::Result<(), String> {
    let nan = count_nan(out);
    if nan > 0 {
        return Err(format!("{nan}_unwritten"));
    }
    let samples = out.len().min(1024);
    if samples == 0 || inputs.targets.len() < out.len() {
        return Err("no_output".into());
    }
    let stride = out.len() / samples;
    for k in 0..samples {
        let idx = k * stride + (k * 7919) % stride;
        let want = potential_at(&inputs.targets[idx], &inputs.sources, EPS2);
        let got = out[idx] as f64;
        let rel = (got - want).abs() / want.abs().max(1e-30);
        if rel.is_nan() || rel > TOL {
            return Err(format!("element_{idx}_got_{got:.7e}_want_{want:.7e}"));
        }
    }
    Ok(())
}

/// The f64 sum of the output (the `check` column; both sides' must agree closely).
pub fn checksum(out: &[f32]) -> f64 {
    out.iter().map(|&v| v as f64).sum()
}

/// Milliseconds since `t0`.
pub fn ms_since(t0: Instant) -> f64 {
    t0.elapsed().as_secs_f64() * 1e3
}

/// `(median, min, max)` of `samples`.
pub fn stats(samples: &[f64]) -> (f64, f64, f64) {
    let mut s = samples.to_vec();
    s.sort_by(f64::total_cmp);
    let n = s.len();
    if n == 0 {
        return (f64::NAN, f64::NAN, f64::NAN);
    }
    let median = if n % 2 == 1 { s[n / 2] } else { 0.5 * (s[n / 2 - 1] + s[n / 2]) };
    (median, s[0], s[n - 1])
}

/// The CSV header of `seed.cu` and of every sluice seed and graph benchmark.
pub const CSV_HEADER: &str =
    "# impl,variant,config,rows,cols,sources,median_ms,min_ms,max_ms,reps,check,verified,samples";

/// One CSV line: the statistics, the checksum, the verdict of the checks and every sample.
pub fn csv_line(imp: &str, variant: &str, c: &Config, samples: &[f64], check: f64, verified: &str) -> String {
    let (median, min, max) = stats(samples);
    let list: Vec<String> = samples.iter().map(|v| format!("{v:.4}")).collect();
    format!(
        "{imp},{variant},{},{},{},{},{median:.6},{min:.6},{max:.6},{},{check:.9e},{verified},{}",
        c.name,
        c.rows,
        c.cols,
        c.sources,
        samples.len(),
        list.join(";")
    )
}

/// `# device,...`: what the joiner puts in the table's header.
pub fn device_line(gpu: &Gpu) -> String {
    let i = gpu.info();
    format!(
        "# device,{},cc,{}.{},sms,{},driver,{}",
        i.name.replace(',', " "),
        i.compute_capability.0,
        i.compute_capability.1,
        i.sm_count,
        gpu.driver_version()
    )
}

/// The resident set of this process in KiB (`VmRSS`), where `/proc` has it.
pub fn rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}
