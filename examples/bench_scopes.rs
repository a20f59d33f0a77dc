//! The cost of a scope: a loop of scopes over persistent inputs, against a raw-driver loop
//! (cudarc's `result`/`sys` calls, as `bench_launch` uses) doing the same launches, copies,
//! event records and waits, and stream synchronizations (`cargo xtask bench seed`).
//!
//! ```text
//! bench_scopes [CONFIG...] [--scopes N] [--rounds R] [--seed S] [--natural VARIANT]...
//!                                               (default: many-small many-small-128, 1000, 3)
//! ```
//!
//! Per configuration and pattern, one iteration is:
//!
//! * `per-lane` — sluice: one `LaneSet::scope` running `Variant::PerLane` (per lane: bind the
//!   persistent inputs, launch, copy the column to pinned memory; the scope joins each lane).
//!   Raw: per stream `cuLaunchKernel` and `cuMemcpyDtoHAsync` of the column, then
//!   `cuStreamSynchronize` on each stream.
//! * `fan-in` — sluice: `Variant::Chunked(cols)` (every lane fences its column, the last lane
//!   awaits them all and copies the matrix; the scope joins each lane). Raw: per stream the
//!   launch and a `cuEventRecord` (none on the last), then the last stream waits for each
//!   event (`cuStreamWaitEvent`), copies the whole matrix, and only it is synchronized.
//!
//! * `per-lane-fresh` — `per-lane` in a fresh `sluice::scope` per iteration (its lanes and
//!   events from what the device kept of the last scope): what a fresh scope costs over a
//!   kept `LaneSet`.
//! * `natural` — the README's program (`bench_common::natural`: a fresh scope, the output
//!   matrix allocated in it, per-lane copies) with the default submission (deferred, merged
//!   copies, a cached graph from the second scope on), against the raw per-lane loop: what the
//!   natural program costs, or saves, beyond the calls a hand-written per-stream program makes.
//!
//! * `natural-vs-graph-kK` — the natural program as above, against a raw CUDA graph of the
//!   chunked fan-in in chunks of K columns (K = all columns, a half, a quarter, an eighth and
//!   a sixteenth of them: `seed.cu`'s `graph-fan-in` and `graph-chunked-kK`, among which is the best
//!   hand-written schedule at these sizes): captured once from the raw streams (they fork
//!   from an origin stream and join it again), instantiated, and replayed with
//!   `cuGraphLaunch` and one `cuStreamSynchronize` per iteration. The same comparison as
//!   `benches/join.py`'s natural-program table, in one process and with one kernel: two
//!   processes of the same program can differ by 10-25% on a shared host, which no ratio
//!   across processes can tell from the programs' own difference.
//! * `VARIANT-vs-graph-kK` (with `--natural VARIANT`, repeatable: one of `bench_seed`'s
//!   natural variants, such as `natural-seg8`) — that variant against the fastest raw graph
//!   of the rows above whose checks passed.
//!
//! The first three run with `SubmitConfig::direct()`: one driver call per operation, as the
//! raw loop makes them, so the difference is what sluice adds around each call.
//!
//! Each round times `--scopes` iterations of the raw loop and of the sluice loop (the order
//! alternating between rounds, after 50 untimed iterations each) on the host clock and
//! reports µs per iteration. The difference, divided by the number of lanes, is sluice's
//! per-scope cost per lane beyond the driver calls a hand-written program makes (goal:
//! ≤ 2 µs). Both loops run the same kernel (`potential_tiled_rsqrt` from the same PTX) on
//! their own buffers and streams in the same context. Both outputs are poisoned with NaN
//! (device and host) before each timed loop and checked after it (no NaN left, 1024 samples
//! against the f64 reference).
//!
//! Prints one line per configuration and pattern:
//! `scopes,config,pattern,lanes,scopes_per_round,raw_us;...,sluice_us;...,verified`.

use std::ffi::{c_void, CString};
use std::process::ExitCode;
use std::time::Instant;

use cudarc::driver::{result, sys};
use sluice::{kernels, Gpu, LaneSet, LaunchConfig, Particle, SubmitConfig};

mod bench_common;
use bench_common::{device_line, enqueue, poison, verify, Args, Bench, Config, Inputs, Submit, Variant, BLOCK, EPS2};

const USAGE: &str = "usage: bench_scopes [CONFIG...] [--scopes N] [--rounds R] [--seed S] [--natural VARIANT]...";

type Fail = String;

fn fail(what: &'static str) -> impl Fn(result::DriverError) -> Fail {
    move |e| format!("raw {what}: {e:?}")
}

fn main() -> ExitCode {
    let explicit = std::env::args().skip(1).any(|a| bench_common::parse_config(&a).is_some() || a == "all");
    let mut args = match Args::parse(USAGE, &["scopes", "rounds", "natural"]) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    if !explicit {
        args.configs = ["many-small", "many-small-128"].iter().filter_map(|n| bench_common::parse_config(n)).collect();
    }
    let (scopes, rounds) = match (args.number("scopes"), args.number("rounds")) {
        (Ok(s), Ok(r)) => (s.unwrap_or(1000).max(1), r.unwrap_or(3).max(1)),
        (Err(e), _) | (_, Err(e)) => {
            eprintln!("{e}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    // `--natural NAME` (repeatable): more of bench_seed's natural variants against the
    // fastest raw graph.
    let mut extra = Vec::new();
    for name in args.flags("natural") {
        let mut known =
            args.configs.iter().flat_map(|c| Variant::naturals(c.rows).into_iter().map(|v| (v, v.name(c.cols))));
        match known.find(|(_, n)| n == name).map(|(v, _)| v) {
            // The default is measured against every graph already.
            Some(Variant::Natural(Submit::Auto)) => {}
            Some(v) if !extra.contains(&v) => extra.push(v),
            Some(_) => {}
            None => {
                let names: Vec<String> =
                    Variant::naturals(args.configs[0].rows).iter().map(|v| v.name(args.configs[0].cols)).collect();
                eprintln!("--natural {name}: not one of bench_seed's natural variants ({})\n{USAGE}", names.join(", "));
                return ExitCode::from(2);
            }
        }
    }
    let gpu = match Gpu::new(0) {
        Ok(g) => g,
        Err(e) => {
            eprintln!("bench_scopes: no GPU to run on: {e}");
            return ExitCode::FAILURE;
        }
    };
    if gpu.backend() != sluice::Backend::Cuda {
        // The raw side calls the CUDA driver itself.
        eprintln!("bench_scopes: needs an NVIDIA GPU; sluice fell back to its {} backend here", gpu.backend());
        return ExitCode::FAILURE;
    }
    println!("{}", device_line(&gpu));
    println!("# scopes,config,pattern,lanes,scopes_per_round,raw_us,sluice_us,verified");
    let mut lanes = LaneSet::new(&gpu);
    let mut all_ok = true;
    for c in &args.configs {
        match run_config(&gpu, &mut lanes, c, args.seed, scopes, rounds, &extra) {
            Ok(ok) => all_ok &= ok,
            Err(e) => {
                eprintln!("bench_scopes: {}: {e}", c.name);
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

#[derive(Clone, Copy, PartialEq, Eq)]
enum Pattern {
    /// Per stream the launch and the copy of its column; every stream synchronized.
    PerLane,
    /// The chunked fan-in in chunks of this many columns (the fan-in where it is every
    /// column): the chunk's last stream waits for the others' kernels and copies the chunk;
    /// the chunks' last streams are synchronized.
    Chunked(usize),
    /// `Chunked(k)` captured once into a graph, replayed from the origin stream.
    Graph(usize),
}

/// The chunk sizes of the raw graphs the natural program is measured against: `seed.cu`'s
/// graphs of the chunked fan-in (`graph-fan-in`, and `graph-chunked-kK` for a half, a
/// quarter, an eighth and a sixteenth of the columns), as `Variant::all` names their plain forms.
fn graph_chunks(cols: usize) -> impl Iterator<Item = usize> {
    Variant::all(cols).into_iter().filter_map(|v| match v {
        Variant::Chunked(k) => Some(k),
        _ => None,
    })
}

/// Where a sluice pattern's scopes come from.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Scopes {
    /// One `LaneSet`, kept across the loop.
    Kept,
    /// A fresh `sluice::scope` per iteration (lanes and events from the device's pool).
    Fresh,
}

fn run_config(
    gpu: &Gpu,
    lanes: &mut LaneSet,
    c: &Config,
    seed: u64,
    scopes: usize,
    rounds: usize,
    extra: &[Variant],
) -> Result<bool, Fail> {
    let mut b = Bench::new(gpu, c, seed).map_err(|e| e.to_string())?;
    let mut raw = Raw::new(c, &b.inputs)?;
    let mut all_ok = true;
    let natural = Variant::Natural(Submit::Auto);
    let mut patterns = vec![
        (Pattern::PerLane, "per-lane".to_string(), Variant::PerLane, Scopes::Kept),
        (Pattern::Chunked(c.cols), "fan-in".to_string(), Variant::Chunked(c.cols), Scopes::Kept),
        (Pattern::PerLane, "per-lane-fresh".to_string(), Variant::PerLane, Scopes::Fresh),
        (Pattern::PerLane, "natural".to_string(), natural, Scopes::Fresh),
    ];
    for k in graph_chunks(c.cols) {
        patterns.push((Pattern::Graph(k), format!("natural-vs-graph-k{k}"), natural, Scopes::Fresh));
    }
    // The fastest raw graph whose checks passed (median of its rounds, as `join.py` takes
    // it): the one the `--natural` variants meet.
    let mut fastest: Option<(f64, usize)> = None;
    for (pattern, name, v, scopes_of) in patterns {
        let (raw_us, ok) = row(gpu, lanes, &mut b, &mut raw, c, (pattern, &name, v, scopes_of), scopes, rounds)?;
        all_ok &= ok;
        if let (Pattern::Graph(k), true) = (pattern, ok) {
            let med = median(raw_us);
            if fastest.is_none_or(|(f, _)| med < f) {
                fastest = Some((med, k));
            }
        }
    }
    if let Some((_, k)) = fastest {
        for &x in extra {
            let name = format!("{}-vs-graph-k{k}", x.name(c.cols));
            all_ok &=
                row(gpu, lanes, &mut b, &mut raw, c, (Pattern::Graph(k), &name, x, Scopes::Fresh), scopes, rounds)?.1;
        }
    }
    gpu.set_submit_config(SubmitConfig::direct());
    raw.free()?;
    Ok(all_ok)
}

/// One row: `rounds` rounds of `scopes` iterations of the raw `pattern` and of the sluice
/// variant, the order alternating, both outputs poisoned before and checked after each loop;
/// prints the row's line and returns the raw side's µs per iteration and whether every check
/// passed.
#[allow(clippy::too_many_arguments)]
fn row(
    gpu: &Gpu,
    lanes: &mut LaneSet,
    b: &mut Bench,
    raw: &mut Raw,
    c: &Config,
    (pattern, name, v, scopes_kind): (Pattern, &str, Variant, Scopes),
    scopes: usize,
    rounds: usize,
) -> Result<(Vec<f64>, bool), Fail> {
    let (mut raw_us, mut sluice_us) = (Vec::new(), Vec::new());
    let mut problems = Vec::new();
    gpu.set_submit_config(v.submit_config());
    sluice_loop(gpu, lanes, b, v, scopes_kind, 50)?;
    raw.iterations(pattern, 50)?;
    for round in 0..rounds {
        for side in [round % 2, 1 - round % 2] {
            if side == 0 {
                raw.poison()?;
                raw_us.push(raw.iterations(pattern, scopes)?);
                if let Err(e) = verify(raw.host(), &b.inputs) {
                    problems.push(format!("raw_round_{round}_{e}"));
                }
            } else {
                b.poison_device(lanes).map_err(|e| e.to_string())?;
                poison(&mut b.host);
                sluice_us.push(sluice_loop(gpu, lanes, b, v, scopes_kind, scopes)?);
                if let Err(e) = verify(&b.host, &b.inputs) {
                    problems.push(format!("sluice_round_{round}_{e}"));
                }
            }
        }
    }
    let list = |v: &[f64]| v.iter().map(|x| format!("{x:.2}")).collect::<Vec<_>>().join(";");
    let verdict = if problems.is_empty() { "ok".to_string() } else { format!("FAIL:{}", problems.join("+")) };
    println!("scopes,{},{name},{},{scopes},{},{},{verdict}", c.name, c.cols, list(&raw_us), list(&sluice_us));
    if !problems.is_empty() {
        eprintln!("bench_scopes: {} {name}: {}", c.name, problems.join(", "));
    }
    Ok((raw_us, problems.is_empty()))
}

/// The median, the mean of the middle two for an even count (as Python's `statistics.median`,
/// which `join.py` uses).
fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// `n` scopes of `v` (on `lanes`, or fresh); µs per scope.
fn sluice_loop(
    gpu: &Gpu,
    lanes: &mut LaneSet,
    b: &mut Bench,
    v: Variant,
    scopes: Scopes,
    n: usize,
) -> Result<f64, Fail> {
    let Bench { src, tgt, out, host, f, cfg, .. } = b;
    let t0 = Instant::now();
    for _ in 0..n {
        match scopes {
            Scopes::Kept => lanes.scope(|s| enqueue(s, v, src, tgt, out, host, f, *cfg)),
            Scopes::Fresh => sluice::scope(gpu, |s| enqueue(s, v, src, tgt, out, host, f, *cfg)),
        }
        .map_err(|e| e.to_string())?;
    }
    Ok(t0.elapsed().as_secs_f64() * 1e6 / n as f64)
}

/// The kernel's parameters for one column, as `cuLaunchKernel` reads them: out (pointer,
/// length), targets (pointer, length), sources (pointer, length), eps2.
#[repr(C)]
struct Params {
    words: [u64; 6],
    eps2: f32,
}

/// The hand-written driver-API version: its own module load of the same PTX, streams,
/// events, device buffers and pinned output, in the primary context sluice also uses.
struct Raw {
    rows: usize,
    cols: usize,
    f: sys::CUfunction,
    module: sys::CUmodule,
    streams: Vec<sys::CUstream>,
    events: Vec<sys::CUevent>,
    /// The stream a captured graph forks from and joins again, and its events.
    origin: sys::CUstream,
    fork: sys::CUevent,
    joins: Vec<sys::CUevent>,
    /// Instantiated graphs of `Pattern::Graph(k)`, by k, captured at first use.
    graphs: Vec<(usize, sys::CUgraphExec)>,
    d_src: sys::CUdeviceptr,
    d_tgt: sys::CUdeviceptr,
    d_out: sys::CUdeviceptr,
    host: *mut f32,
    params: Vec<Params>,
    grid: (u32, u32, u32),
    block: (u32, u32, u32),
}

impl Raw {
    fn new(c: &Config, inputs: &Inputs) -> Result<Raw, Fail> {
        let (rows, cols) = (c.rows, c.cols);
        let total = rows * cols;
        let dev = result::device::get(0).map_err(fail("device"))?;
        // SAFETY: device 0 exists (sluice opened it); the retained primary context is kept for
        // the process's life (it is sluice's context as well).
        let ctx = unsafe { result::primary_ctx::retain(dev) }.map_err(fail("retain"))?;
        // SAFETY: `ctx` was just retained.
        unsafe { result::ctx::set_current(ctx) }.map_err(fail("set current"))?;
        let ptx = CString::new(kernels::PTX).expect("PTX has no NUL byte");
        // SAFETY: a NUL-terminated PTX image alive across the call.
        let module =
            unsafe { result::module::load_data(ptx.as_ptr() as *const c_void) }.map_err(fail("module load"))?;
        // SAFETY: the module is loaded; it is unloaded in `free`, after every stream is idle.
        let f = unsafe { result::module::get_function(module, CString::new("potential_tiled_rsqrt").unwrap()) }
            .map_err(fail("get function"))?;
        let streams = (0..cols)
            .map(|_| result::stream::create(result::stream::StreamKind::NonBlocking))
            .collect::<Result<Vec<_>, _>>()
            .map_err(fail("stream"))?;
        let event = || result::event::create(sys::CUevent_flags::CU_EVENT_DISABLE_TIMING);
        let events = (0..cols).map(|_| event()).collect::<Result<Vec<_>, _>>().map_err(fail("event"))?;
        let joins = (0..cols).map(|_| event()).collect::<Result<Vec<_>, _>>().map_err(fail("event"))?;
        let fork = event().map_err(fail("event"))?;
        let origin = result::stream::create(result::stream::StreamKind::NonBlocking).map_err(fail("stream"))?;
        let psize = std::mem::size_of::<Particle>();
        // SAFETY: fresh allocations of the sizes used below, freed in `free` after every stream
        // is idle; each upload is synchronous and reads a live slice of exactly that size.
        let (d_src, d_tgt, d_out, host) = unsafe {
            let d_src = result::malloc_sync(c.sources * psize).map_err(fail("alloc"))?;
            let d_tgt = result::malloc_sync(total * psize).map_err(fail("alloc"))?;
            let d_out = result::malloc_sync(total * 4).map_err(fail("alloc"))?;
            let host = result::malloc_host(total * 4, 0).map_err(fail("pinned alloc"))? as *mut f32;
            result::memcpy_htod_sync(d_src, &inputs.sources).map_err(fail("upload"))?;
            result::memcpy_htod_sync(d_tgt, &inputs.targets).map_err(fail("upload"))?;
            (d_src, d_tgt, d_out, host)
        };
        let params = (0..cols)
            .map(|j| Params {
                words: [
                    d_out + (j * rows * 4) as u64,
                    rows as u64,
                    d_tgt + (j * rows * psize) as u64,
                    rows as u64,
                    d_src,
                    c.sources as u64,
                ],
                eps2: EPS2,
            })
            .collect();
        let cfg = LaunchConfig::for_elements(rows, BLOCK);
        Ok(Raw {
            rows,
            cols,
            f,
            module,
            streams,
            events,
            origin,
            fork,
            joins,
            graphs: Vec::new(),
            d_src,
            d_tgt,
            d_out,
            host,
            params,
            grid: cfg.grid,
            block: cfg.block,
        })
    }

    /// The pinned output, read only between iterations (every stream synchronized).
    fn host(&self) -> &[f32] {
        // SAFETY: `host` is a live pinned allocation of rows * cols floats (made in `new`,
        // freed only in `free`, which takes `self`); every copy into it has completed
        // (`iterations` synchronizes before returning) and `&self` excludes a new one.
        unsafe { std::slice::from_raw_parts(self.host, self.rows * self.cols) }
    }

    /// NaN in the device and host outputs.
    fn poison(&mut self) -> Result<(), Fail> {
        let bytes = self.rows * self.cols * 4;
        // SAFETY: `d_out` holds `bytes` bytes and no stream is running (every iteration ends
        // synchronized); the memset runs on `origin` (not the legacy stream, which the
        // non-blocking streams would not wait for) and is finished before this returns.
        unsafe {
            result::memset_d8_async(self.d_out, 0xff, bytes, self.origin).map_err(fail("memset"))?;
            result::stream::synchronize(self.origin).map_err(fail("synchronize"))?;
        }
        // SAFETY: as in `host`, mutably: no copy is pending and `&mut self` is exclusive.
        poison(unsafe { std::slice::from_raw_parts_mut(self.host, self.rows * self.cols) });
        Ok(())
    }

    fn launch(&mut self, j: usize, stream: sys::CUstream) -> Result<(), Fail> {
        let p = &mut self.params[j];
        let w = p.words.as_mut_ptr();
        let mut ptrs: [*mut c_void; 7] = [
            w.cast(),
            w.wrapping_add(1).cast(),
            w.wrapping_add(2).cast(),
            w.wrapping_add(3).cast(),
            w.wrapping_add(4).cast(),
            w.wrapping_add(5).cast(),
            (&mut p.eps2 as *mut f32).cast(),
        ];
        // SAFETY: `potential_tiled_rsqrt(out, out_len, targets, targets_len, sources, n_sources,
        // eps2)` with one pointer per parameter to a value of its type and size; column j's
        // output and targets are `rows` elements of live allocations (freed only in `free`,
        // after the streams are synchronized), the sources `n_sources`.
        unsafe { result::launch_kernel(self.f, self.grid, self.block, 0, stream, &mut ptrs) }.map_err(fail("launch"))
    }

    fn copy(&self, j0: usize, cols: usize, stream: sys::CUstream) -> Result<(), Fail> {
        let off = j0 * self.rows;
        // SAFETY: columns j0..j0+cols of the device output and of the pinned output, both live
        // until `free`; the host reads the pinned side only after the stream is synchronized.
        unsafe {
            sys::cuMemcpyDtoHAsync_v2(
                self.host.add(off).cast(),
                self.d_out + (off * 4) as u64,
                cols * self.rows * 4,
                stream,
            )
            .result()
        }
        .map_err(fail("copy"))
    }

    /// Enqueues the chunked fan-in in chunks of `k` columns (what `Pattern::Chunked` runs and
    /// `Pattern::Graph` captures); waits for nothing.
    fn enqueue_chunked(&mut self, k: usize) -> Result<(), Fail> {
        for j in 0..self.cols {
            self.launch(j, self.streams[j])?;
            let first = j / k * k;
            let last = (first + k).min(self.cols) - 1;
            if j != last {
                // SAFETY: a live event and stream (destroyed only in `free`).
                unsafe { result::event::record(self.events[j], self.streams[j]) }.map_err(fail("record"))?;
                continue;
            }
            for i in first..last {
                // SAFETY: live stream and event; the event was recorded above.
                unsafe {
                    result::stream::wait_event(
                        self.streams[j],
                        self.events[i],
                        sys::CUevent_wait_flags::CU_EVENT_WAIT_DEFAULT,
                    )
                }
                .map_err(fail("wait event"))?;
            }
            self.copy(first, last + 1 - first, self.streams[j])?;
        }
        Ok(())
    }

    /// Between `begin_capture` and `end_capture` on `origin`: the streams fork from it, run
    /// the chunked fan-in in chunks of `k`, and join it again.
    fn capture_chunked(&mut self, k: usize) -> Result<(), Fail> {
        // SAFETY: live events and streams (destroyed only in `free`); `origin` is capturing.
        unsafe {
            result::event::record(self.fork, self.origin).map_err(fail("record"))?;
            for &s in &self.streams {
                result::stream::wait_event(s, self.fork, sys::CUevent_wait_flags::CU_EVENT_WAIT_DEFAULT)
                    .map_err(fail("wait event"))?;
            }
        }
        self.enqueue_chunked(k)?;
        // SAFETY: as above.
        unsafe {
            for (&s, &e) in self.streams.iter().zip(&self.joins) {
                result::event::record(e, s).map_err(fail("record"))?;
                result::stream::wait_event(self.origin, e, sys::CUevent_wait_flags::CU_EVENT_WAIT_DEFAULT)
                    .map_err(fail("wait event"))?;
            }
        }
        Ok(())
    }

    /// The instantiated graph of the chunked fan-in in chunks of `k`, captured at first use:
    /// every stream forks from `origin` and joins it again, as `seed.cu` captures its graphs.
    fn graph(&mut self, k: usize) -> Result<sys::CUgraphExec, Fail> {
        if let Some(&(_, exec)) = self.graphs.iter().find(|g| g.0 == k) {
            return Ok(exec);
        }
        let mode = sys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL;
        // SAFETY: a live stream, not capturing; the capture is ended below, on every path,
        // before this returns.
        unsafe { result::stream::begin_capture(self.origin, mode) }.map_err(fail("begin capture"))?;
        let captured = self.capture_chunked(k);
        // SAFETY: `origin` is capturing (begun above); ending it ends the streams' part too
        // (they joined it through the fork event and left it through their join events). A
        // failed capture's graph, if any, is destroyed unused.
        let graph = unsafe {
            let ended = result::stream::end_capture(self.origin).map_err(fail("end capture"));
            match (captured, ended) {
                (Ok(()), ended) => ended?,
                (Err(e), ended) => {
                    if let Ok(g) = ended {
                        let _ = result::graph::destroy(g);
                    }
                    return Err(e);
                }
            }
        };
        // SAFETY: `graph` was just captured; the executable graph is its own copy, so the
        // graph is destroyed right after. Its nodes read the buffers freed only in `free`,
        // after the graph's execs are destroyed and every stream is synchronized.
        let exec = unsafe {
            let exec = result::graph::instantiate(graph, sys::CUgraphInstantiate_flags(0)).map_err(fail("instantiate"));
            result::graph::destroy(graph).map_err(fail("graph destroy"))?;
            exec?
        };
        self.graphs.push((k, exec));
        Ok(exec)
    }

    /// `n` iterations of `pattern`; µs per iteration.
    fn iterations(&mut self, pattern: Pattern, n: usize) -> Result<f64, Fail> {
        let exec = match pattern {
            Pattern::Graph(k) => Some(self.graph(k)?),
            _ => None,
        };
        let t0 = Instant::now();
        for _ in 0..n {
            match pattern {
                Pattern::PerLane => {
                    for j in 0..self.cols {
                        self.launch(j, self.streams[j])?;
                        self.copy(j, 1, self.streams[j])?;
                    }
                    for &s in &self.streams {
                        // SAFETY: a live stream (destroyed only in `free`).
                        unsafe { result::stream::synchronize(s) }.map_err(fail("synchronize"))?;
                    }
                }
                Pattern::Chunked(k) => {
                    self.enqueue_chunked(k)?;
                    for j in
                        (k - 1..self.cols).step_by(k).chain((!self.cols.is_multiple_of(k)).then_some(self.cols - 1))
                    {
                        // SAFETY: a live stream: a chunk's last, which waited for the chunk's kernels.
                        unsafe { result::stream::synchronize(self.streams[j]) }.map_err(fail("synchronize"))?;
                    }
                }
                Pattern::Graph(_) => {
                    let exec = exec.expect("made above for a graph pattern");
                    // SAFETY: a live executable graph and stream (destroyed only in `free`);
                    // the origin stream is synchronized before the next launch.
                    unsafe {
                        result::graph::launch(exec, self.origin).map_err(fail("graph launch"))?;
                        result::stream::synchronize(self.origin).map_err(fail("synchronize"))?;
                    }
                }
            }
        }
        Ok(t0.elapsed().as_secs_f64() * 1e6 / n as f64)
    }

    /// Frees everything, every stream synchronized first.
    fn free(self) -> Result<(), Fail> {
        for &s in self.streams.iter().chain([&self.origin]) {
            // SAFETY: a live stream, synchronized then destroyed; nothing uses it after.
            unsafe {
                result::stream::synchronize(s).map_err(fail("synchronize"))?;
                result::stream::destroy(s).map_err(fail("stream destroy"))?;
            }
        }
        for &(_, exec) in &self.graphs {
            // SAFETY: every stream is synchronized above: no launch of it is pending.
            unsafe { result::graph::exec_destroy(exec) }.map_err(fail("graph exec destroy"))?;
        }
        for &e in self.events.iter().chain(&self.joins).chain([&self.fork]) {
            // SAFETY: no stream is left to wait on it.
            unsafe { result::event::destroy(e) }.map_err(fail("event destroy"))?;
        }
        // SAFETY: every stream that used these buffers and the module is synchronized and
        // destroyed above; `self` is consumed, so nothing reads them after.
        unsafe {
            result::free_sync(self.d_src).map_err(fail("free"))?;
            result::free_sync(self.d_tgt).map_err(fail("free"))?;
            result::free_sync(self.d_out).map_err(fail("free"))?;
            result::free_host(self.host.cast()).map_err(fail("free pinned"))?;
            result::module::unload(self.module).map_err(fail("module unload"))?;
        }
        Ok(())
    }
}
