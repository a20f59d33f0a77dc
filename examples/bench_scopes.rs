//! The cost of a scope: a loop of scopes over persistent inputs, against a raw-driver loop
//! (cudarc's `result`/`sys` calls, as `bench_launch` uses) doing the same launches, copies,
//! event records and waits, and stream synchronizations (`cargo xtask bench seed`).
//!
//! ```text
//! bench_scopes [CONFIG...] [--scopes N] [--rounds R] [--seed S]     (default: many-small many-small-128, 1000, 3)
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

const USAGE: &str = "usage: bench_scopes [CONFIG...] [--scopes N] [--rounds R] [--seed S]";

type Fail = String;

fn fail(what: &'static str) -> impl Fn(result::DriverError) -> Fail {
    move |e| format!("raw {what}: {e:?}")
}

fn main() -> ExitCode {
    let explicit = std::env::args().skip(1).any(|a| bench_common::parse_config(&a).is_some() || a == "all");
    let mut args = match Args::parse(USAGE, &["scopes", "rounds"]) {
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
    let gpu = match Gpu::new(0) {
        Ok(g) => g,
        Err(e) => {
            eprintln!("bench_scopes: no GPU to run on: {e}");
            return ExitCode::FAILURE;
        }
    };
    println!("{}", device_line(&gpu));
    println!("# scopes,config,pattern,lanes,scopes_per_round,raw_us,sluice_us,verified");
    let mut lanes = LaneSet::new(&gpu);
    let mut all_ok = true;
    for c in &args.configs {
        match run_config(&gpu, &mut lanes, c, args.seed, scopes, rounds) {
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
    PerLane,
    FanIn,
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
) -> Result<bool, Fail> {
    let mut b = Bench::new(gpu, c, seed).map_err(|e| e.to_string())?;
    let mut raw = Raw::new(c, &b.inputs)?;
    let mut all_ok = true;
    for (pattern, name, v, scopes_of) in [
        (Pattern::PerLane, "per-lane", Variant::PerLane, Scopes::Kept),
        (Pattern::FanIn, "fan-in", Variant::Chunked(c.cols), Scopes::Kept),
        (Pattern::PerLane, "per-lane-fresh", Variant::PerLane, Scopes::Fresh),
        (Pattern::PerLane, "natural", Variant::Natural(Submit::Auto), Scopes::Fresh),
    ] {
        let scopes_kind = scopes_of;
        let (mut raw_us, mut sluice_us) = (Vec::new(), Vec::new());
        let mut problems = Vec::new();
        gpu.set_submit_config(v.submit_config());
        sluice_loop(gpu, lanes, &mut b, v, scopes_kind, 50)?;
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
                    sluice_us.push(sluice_loop(gpu, lanes, &mut b, v, scopes_kind, scopes)?);
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
            all_ok = false;
        }
    }
    gpu.set_submit_config(SubmitConfig::direct());
    raw.free()?;
    Ok(all_ok)
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
        let events = (0..cols)
            .map(|_| result::event::create(sys::CUevent_flags::CU_EVENT_DISABLE_TIMING))
            .collect::<Result<Vec<_>, _>>()
            .map_err(fail("event"))?;
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
        // SAFETY: `d_out` holds `bytes` bytes; the memset is synchronous and no stream is
        // running (every iteration ends synchronized).
        unsafe { result::memset_d8_sync(self.d_out, 0xff, bytes) }.map_err(fail("memset"))?;
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

    /// `n` iterations of `pattern`; µs per iteration.
    fn iterations(&mut self, pattern: Pattern, n: usize) -> Result<f64, Fail> {
        let last = self.cols - 1;
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
                Pattern::FanIn => {
                    for j in 0..self.cols {
                        self.launch(j, self.streams[j])?;
                        if j < last {
                            // SAFETY: a live event and stream (destroyed only in `free`).
                            unsafe { result::event::record(self.events[j], self.streams[j]) }
                                .map_err(fail("record"))?;
                        }
                    }
                    for i in 0..last {
                        // SAFETY: live stream and event; the event was recorded above.
                        unsafe {
                            result::stream::wait_event(
                                self.streams[last],
                                self.events[i],
                                sys::CUevent_wait_flags::CU_EVENT_WAIT_DEFAULT,
                            )
                        }
                        .map_err(fail("wait event"))?;
                    }
                    self.copy(0, self.cols, self.streams[last])?;
                    // SAFETY: a live stream; it waited for every other stream's kernel.
                    unsafe { result::stream::synchronize(self.streams[last]) }.map_err(fail("synchronize"))?;
                }
            }
        }
        Ok(t0.elapsed().as_secs_f64() * 1e6 / n as f64)
    }

    /// Frees everything, every stream synchronized first.
    fn free(self) -> Result<(), Fail> {
        for &s in &self.streams {
            // SAFETY: a live stream, synchronized then destroyed; nothing uses it after.
            unsafe {
                result::stream::synchronize(s).map_err(fail("synchronize"))?;
                result::stream::destroy(s).map_err(fail("stream destroy"))?;
            }
        }
        for &e in &self.events {
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
