//! Several GPUs, measured: the seed workload split over 1 and over all GPUs (scaling), peer
//! copies between two GPUs (bandwidth, against NVLink's figure), and NCCL's all-reduce (bus
//! bandwidth). `benches/run.sh BUNDLE multi` runs it with the `gpu_multi` tests.
//!
//! ```text
//! bench_multi [--gpus N] [--rows R] [--cols C] [--sources S] [--reps N] [--warmup W]
//!             [--peer-mib M] [--allreduce-mib M] [--seed S]
//! ```
//!
//! * **Seed workload** (`multi_common`): `R x C` potentials over `S` sources (default
//!   16,777,216 x 16 x 256: 4 GiB of targets and 1 GiB of results, about 69 G interactions —
//!   compute-bound, one H200 busy for a fraction of a second per run), column `j` on GPU
//!   `j % k`, each column copied back on its own lane, the column sums all-reduced through
//!   NCCL. Inputs are uploaded before timing (persistent, `Gpu::upload`); the host output is
//!   poisoned before every run and checked after it (no element left unwritten); after the
//!   last run, 256 sampled elements per column against the f64 reference and every device's
//!   sums against the host result's. One run is one `scope_multi`, timed on the host clock
//!   from before the scope to its return (it joins every lane): warm-ups, then the median
//!   and minimum of the timed runs, on 1 GPU and on all. Scaling = time on 1 / time on k
//!   (the goal on 2 GPUs: at least 1.9x).
//! * **Peer copies**: `M` MiB (default 1024) from GPU 0 to GPU 1, from 1 to 0, and both at
//!   once, timed by CUDA events on the copying lane (timestamps around `copy_to_peer`), in
//!   GB/s (10^9 bytes/s), against NVLink 4's 450 GB/s per direction between two H200s
//!   through NVSwitch (18 links x 25 GB/s: NVIDIA's figure, not a measurement).
//! * **All-reduce**: `M` MiB of f32 per GPU (default 1024), in place, summed over all GPUs
//!   through NCCL; timed by events on each rank's lane around NCCL's kernel (what NCCL's own
//!   `nccl-tests` time: its figure for this size, on this machine), the slowest rank per run;
//!   bus bandwidth = size / time x 2(k-1)/k (`nccl-tests`' definition), against the same
//!   450 GB/s ceiling. Also the host time of `MultiScope::all_reduce` (sluice's checks, the
//!   `ncclGroupStart`/`End` enqueue), which is what sluice adds.
//!
//! Prints `csv-multi,WHAT,GPUS,SIZE,MEDIAN_MS,MIN_MS,VALUE,UNIT` lines, then a short table.
//! Without a GPU it runs on the CPU backend at small sizes (and says so). Exit status 3 if a
//! check failed.

use std::process::ExitCode;
use std::time::Instant;

use rayon::prelude::*;
use sluice::{kernels, scope_multi, Backend, Communicator, Error, Gpu, Lane, PeerPath, PinnedMatrix, ReduceOp, Result};

mod multi_common;
use multi_common::{check_sums, describe, devices, host_sums, ms_since, prepare, run, sources, targets, EPS2};

const USAGE: &str = "usage: bench_multi [--gpus N] [--rows R] [--cols C] [--sources S] [--reps N] [--warmup W] \
                     [--peer-mib M] [--allreduce-mib M] [--seed S]";

/// NVLink 4 between two H200s through NVSwitch: 18 links of 25 GB/s each way.
const NVLINK_GB_S: f64 = 450.0;
/// The scaling goal on two GPUs, when compute-bound.
const GOAL_SPEEDUP_2: f64 = 1.9;
/// Relative error allowed against the f64 reference (`potential_tiled_rsqrt`'s `rsqrt`).
const TOL: f64 = 1e-4;

struct Args {
    gpus: Option<usize>,
    rows: usize,
    cols: usize,
    sources: usize,
    reps: usize,
    warmup: usize,
    peer_mib: usize,
    allreduce_mib: usize,
    seed: u64,
}

fn parse(cpu: bool) -> std::result::Result<Args, String> {
    // On the CPU backend the defaults are small: the same program, a smoke test.
    let mut a = if cpu {
        Args {
            gpus: None,
            rows: 16384,
            cols: 4,
            sources: 64,
            reps: 2,
            warmup: 1,
            peer_mib: 16,
            allreduce_mib: 16,
            seed: 0x5eed,
        }
    } else {
        Args {
            gpus: None,
            rows: 16_777_216,
            cols: 16,
            sources: 256,
            reps: 5,
            warmup: 2,
            peer_mib: 1024,
            allreduce_mib: 1024,
            seed: 0x5eed,
        }
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let value = it.next().ok_or_else(|| format!("{flag} needs a value\n{USAGE}"))?;
        let n: u64 = value.parse().map_err(|_| format!("{flag} {value}: not a number\n{USAGE}"))?;
        let n_usize = n as usize;
        match flag.as_str() {
            "--gpus" => a.gpus = Some(n_usize.max(1)),
            "--rows" => a.rows = n_usize.max(1),
            "--cols" => a.cols = n_usize.max(1),
            "--sources" => a.sources = n_usize.max(1),
            "--reps" => a.reps = n_usize.max(1),
            "--warmup" => a.warmup = n_usize,
            "--peer-mib" => a.peer_mib = n_usize.max(1),
            "--allreduce-mib" => a.allreduce_mib = n_usize.max(1),
            "--seed" => a.seed = n,
            _ => return Err(format!("unknown flag {flag}\n{USAGE}")),
        }
    }
    Ok(a)
}

fn main() -> ExitCode {
    let cpu = Gpu::count().unwrap_or(0) == 0;
    let args = match parse(cpu) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    match bench(&args) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(3),
        Err(e) => {
            eprintln!("bench_multi: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Median and minimum.
fn stats(mut xs: Vec<f64>) -> (f64, f64) {
    xs.sort_by(f64::total_cmp);
    let n = xs.len();
    let median = if n % 2 == 1 { xs[n / 2] } else { (xs[n / 2 - 1] + xs[n / 2]) / 2.0 };
    (median, xs[0])
}

fn gb_s(bytes: usize, ms: f64) -> f64 {
    bytes as f64 / (ms / 1e3) / 1e9
}

fn bench(a: &Args) -> Result<bool> {
    let gpus = devices(a.gpus, 2)?;
    let n = gpus.len();
    match gpus[0].backend() {
        Backend::Cpu => println!("# no GPU: the CPU backend ({n} devices) at small sizes; the figures mean nothing"),
        Backend::Cuda if n == 1 => println!("# one GPU: the 2-GPU parts are skipped ({})", describe(&gpus)),
        Backend::Cuda => println!("# {n} GPUs: {}", describe(&gpus)),
    }
    if gpus[0].backend() == Backend::Cuda {
        match Communicator::nccl_version() {
            Ok(v) => println!(
                "# NCCL {}.{}.{} from {} (NCCL_NVLS_ENABLE={})",
                v / 10000,
                v / 100 % 100,
                v % 100,
                Communicator::nccl_path()?,
                std::env::var("NCCL_NVLS_ENABLE").unwrap_or_default()
            ),
            Err(e) => println!("# {e}"),
        }
    }
    let mut paths = Vec::new();
    for i in 0..n {
        for j in (i + 1)..n {
            let p = gpus[i].peer_path(&gpus[j])?;
            println!("# device {i} <-> {j}: {p}");
            paths.push(p);
        }
    }
    println!("csv-multi,what,gpus,size,median_ms,min_ms,value,unit");
    let mut ok = true;
    let mut table = Vec::new();

    // ---- the seed workload on 1 GPU, then on all ----
    let mut host = gpus[0].pinned_matrix::<f32>(a.rows, a.cols)?;
    let src = sources(a.seed, a.sources);
    let mut medians = Vec::new();
    let sets: Vec<usize> = if n > 1 { vec![1, n] } else { vec![1] };
    for &k in &sets {
        let set = &gpus[..k];
        let comm = Communicator::new(set)?;
        let t = Instant::now();
        let mut on = prepare(set, a.rows, a.cols, &src, a.seed)?;
        eprintln!("bench_multi: {k} GPU(s): inputs generated and uploaded in {:.1} s (not timed)", ms_since(t) / 1e3);
        let mut sums = set.iter().map(|g| g.pinned_buffer::<f32>(a.cols)).collect::<Result<Vec<_>>>()?;
        let mut times = Vec::new();
        for rep in 0..(a.warmup + a.reps) {
            host.par_iter_mut().for_each(|x| *x = f32::NAN);
            for s in &mut sums {
                s.fill(f32::NAN);
            }
            let t = Instant::now();
            run(set, &comm, &kernels::potential_tiled_rsqrt, &mut on, &mut host, &mut sums, false)?;
            let ms = ms_since(t);
            let unwritten = host.par_iter().filter(|x| x.is_nan()).count();
            if unwritten > 0 {
                println!("# FAILED: {k} GPU(s), run {rep}: {unwritten} elements never written");
                ok = false;
            }
            if rep >= a.warmup {
                times.push(ms);
            }
        }
        let checked = check(&host, &sums, &src, a);
        let verdict = match &checked {
            Ok(msg) => msg.clone(),
            Err(msg) => {
                ok = false;
                format!("FAILED: {msg}")
            }
        };
        let (median, min) = stats(times);
        let interactions = (a.rows * a.cols * a.sources) as f64;
        let rate = interactions / (median / 1e3) / 1e9;
        println!(
            "csv-multi,seed,{k},{}x{}x{},{median:.3},{min:.3},{rate:.1},G interactions/s",
            a.rows, a.cols, a.sources
        );
        println!("# {k} GPU(s): {verdict}");
        medians.push((k, median, min));
        drop(on); // frees this set's device memory before the next
    }
    if let [(1, one, _), (k, many, _)] = medians[..] {
        let speedup = one / many;
        let efficiency = speedup / k as f64;
        println!("csv-multi,seed-scaling,{k},{}x{}x{},{many:.3},{one:.3},{speedup:.3},x", a.rows, a.cols, a.sources);
        let goal = if k == 2 {
            let met = speedup >= GOAL_SPEEDUP_2;
            format!(" (goal on 2 GPUs: >= {GOAL_SPEEDUP_2}x, {})", if met { "met" } else { "NOT met" })
        } else {
            String::new()
        };
        table.push(format!(
            "seed workload {}x{}x{}: 1 GPU {one:.1} ms, {k} GPUs {many:.1} ms (medians): speedup {speedup:.2}x, \
             efficiency {:.0}%{goal}",
            a.rows,
            a.cols,
            a.sources,
            efficiency * 100.0
        ));
    } else if let Some((_, one, _)) = medians.first() {
        table.push(format!(
            "seed workload {}x{}x{}: 1 GPU {one:.1} ms (median); no second GPU",
            a.rows, a.cols, a.sources
        ));
    }

    // ---- peer copies between GPU 0 and GPU 1 ----
    if n >= 2 {
        let bytes = a.peer_mib << 20;
        let (there, back, both) = peer_bandwidth(&gpus[..2], bytes / 4, a)?;
        let path = paths.first().copied().unwrap_or(PeerPath::SameDevice);
        let line = |what: &str, ms: (f64, f64), gbs: f64| {
            println!("csv-multi,{what},2,{}MiB,{:.4},{:.4},{gbs:.1},GB/s", a.peer_mib, ms.0, ms.1);
        };
        let (g01, g10) = (gb_s(bytes, there.0), gb_s(bytes, back.0));
        line("peer-0to1", there, g01);
        line("peer-1to0", back, g10);
        let (b01, b10) = (gb_s(bytes, both.0 .0), gb_s(bytes, both.1 .0));
        line("peer-both-0to1", both.0, b01);
        line("peer-both-1to0", both.1, b10);
        table.push(format!(
            "peer copy {} MiB ({path}): 0->1 {g01:.0} GB/s, 1->0 {g10:.0} GB/s, both at once {b01:.0} + {b10:.0} GB/s; \
             NVLink 4 (H200 pair through NVSwitch): {NVLINK_GB_S:.0} GB/s per direction (NVIDIA's figure): \
             {:.0}% / {:.0}%",
            a.peer_mib,
            100.0 * g01 / NVLINK_GB_S,
            100.0 * g10 / NVLINK_GB_S
        ));
    }

    // ---- all-reduce through NCCL over every GPU ----
    let comm = Communicator::new(&gpus)?;
    let count = (a.allreduce_mib << 20) / 4;
    let (kernel_ms, host_us) = all_reduce_time(&gpus, &comm, count, a)?;
    let algbw = gb_s(count * 4, kernel_ms.0);
    let busbw = algbw * 2.0 * (n as f64 - 1.0) / n as f64;
    println!(
        "csv-multi,allreduce-busbw,{n},{}MiB,{:.4},{:.4},{busbw:.1},GB/s",
        a.allreduce_mib, kernel_ms.0, kernel_ms.1
    );
    println!(
        "csv-multi,allreduce-algbw,{n},{}MiB,{:.4},{:.4},{algbw:.1},GB/s",
        a.allreduce_mib, kernel_ms.0, kernel_ms.1
    );
    println!(
        "csv-multi,allreduce-host-enqueue,{n},{}MiB,{:.4},{:.4},{:.1},us",
        a.allreduce_mib,
        host_us.0 / 1e3,
        host_us.1 / 1e3,
        host_us.0
    );
    table.push(if n > 1 {
        format!(
            "all-reduce {} MiB f32 over {n} GPUs ({}): bus bandwidth {busbw:.0} GB/s (algorithm {algbw:.0} GB/s; NCCL's \
             kernel time from events on each lane, as nccl-tests measure it: NCCL's figure on this machine), {:.0}% of \
             {NVLINK_GB_S:.0} GB/s; sluice's host side per call {:.0} us",
            a.allreduce_mib,
            if comm.uses_nccl() { "NCCL" } else { "host loops" },
            100.0 * busbw / NVLINK_GB_S,
            host_us.0
        )
    } else {
        format!(
            "all-reduce {} MiB f32 on one GPU (a local copy: no bus bandwidth): {:.3} ms; sluice's host side per call \
             {:.0} us",
            a.allreduce_mib, kernel_ms.0, host_us.0
        )
    });

    println!("\n== bench_multi ({n} device(s): {}) ==", describe(&gpus));
    for line in &table {
        println!("{line}");
    }
    println!("checks: {}", if ok { "all passed" } else { "FAILED (see above)" });
    Ok(ok)
}

/// Sampled potentials against the f64 reference (256 rows of every column), and every
/// device's all-reduced sums against the host result's column sums.
fn check(
    host: &PinnedMatrix<f32>,
    sums: &[PinnedMatrix<f32>],
    src: &[sluice::Particle],
    a: &Args,
) -> std::result::Result<String, String> {
    let (rows, cols) = (a.rows, a.cols);
    let worst = (0..cols)
        .into_par_iter()
        .map(|j| {
            let t = targets(a.seed, j, rows);
            let col = host.column(j).unwrap();
            let mut worst = 0.0f64;
            for s in 0..256usize.min(rows) {
                let i = (s * 2_654_435_761usize) % rows;
                let want = gpu_kernels::reference::potential_at(&t[i], src, EPS2);
                let rel = (col[i] as f64 - want).abs() / want.abs().max(1e-30);
                if rel.is_nan() || rel > TOL {
                    return Err(format!("element ({i}, {j}): {} vs {want} (relative error {rel:e})", col[i]));
                }
                worst = worst.max(rel);
            }
            Ok(worst)
        })
        .try_reduce(|| 0.0, |x, y| Ok(x.max(y)))?;
    let want = host_sums(host);
    let worst_sum = check_sums(sums, &want, rows, 0.0)?;
    Ok(format!(
        "{} sampled elements within {TOL:e} of the f64 reference (worst {worst:.1e}); every device's {cols} column sums \
         match the host result's (worst {worst_sum:.1e})",
        256usize.min(rows) * cols
    ))
}

/// Peer copies of `len` f32 between the two devices of `gpus`: 0 to 1, 1 to 0, then both at
/// once; each (median ms, min ms) from timestamps around the copy on the copying lane.
#[allow(clippy::type_complexity)]
fn peer_bandwidth(gpus: &[Gpu], len: usize, a: &Args) -> Result<((f64, f64), (f64, f64), ((f64, f64), (f64, f64)))> {
    let mut bufs: Vec<_> = (0..4).map(|i| gpus[i % 2].alloc_buffer::<f32>(len)).collect::<Result<_>>()?;
    let [b0, b1, c0, c1] = &mut bufs[..] else { unreachable!() };
    let reps = a.warmup + a.reps.max(5);
    let mut times: [Vec<f64>; 4] = Default::default(); // 0->1, 1->0, both: 0->1, both: 1->0
    scope_multi(gpus, |s| {
        s.device(0, |d0| {
            s.device(1, |d1| {
                let (l0, l1) = (d0.lane()?, d1.lane()?);
                // Sources and destinations, adopted (checked) once; each copy's destination and
                // source come back to the host (outside the timed span) for the next copy.
                let (mut src0, mut src1) = (Some(d0.adopt(b0.as_columns_mut())?), Some(d1.adopt(b1.as_columns_mut())?));
                let (mut dst1, mut dst0) = (Some(d1.adopt(c1.as_columns_mut())?), Some(d0.adopt(c0.as_columns_mut())?));
                for mode in 0..3 {
                    for rep in 0..reps {
                        let forward = if mode != 1 {
                            let (src, dst) = (src0.take().expect("back"), dst1.take().expect("back"));
                            Some(l0.enter(|st| {
                                let v = st.bind(src);
                                let t0 = st.timestamp()?;
                                let handed = st.copy_to_peer(&v, dst)?;
                                let t1 = st.timestamp()?;
                                Ok::<_, Error>((t0, t1, handed, st.fence(v)?))
                            })?)
                        } else {
                            None
                        };
                        let backward = if mode != 0 {
                            let (src, dst) = (src1.take().expect("back"), dst0.take().expect("back"));
                            Some(l1.enter(|st| {
                                let v = st.bind(src);
                                let t0 = st.timestamp()?;
                                let handed = st.copy_to_peer(&v, dst)?;
                                let t1 = st.timestamp()?;
                                Ok::<_, Error>((t0, t1, handed, st.fence(v)?))
                            })?)
                        } else {
                            None
                        };
                        if let Some((t0, t1, handed, back)) = forward {
                            let ms = t1.elapsed_ms_since(&t0)? as f64;
                            if rep >= a.warmup {
                                times[if mode == 0 { 0 } else { 2 }].push(ms);
                            }
                            (dst1, src0) = (Some(handed.wait()?), Some(back.wait()?));
                        }
                        if let Some((t0, t1, handed, back)) = backward {
                            let ms = t1.elapsed_ms_since(&t0)? as f64;
                            if rep >= a.warmup {
                                times[if mode == 1 { 1 } else { 3 }].push(ms);
                            }
                            (dst0, src1) = (Some(handed.wait()?), Some(back.wait()?));
                        }
                    }
                }
                Ok(())
            })
        })
    })?;
    let [a01, a10, b01, b10] = times;
    Ok((stats(a01), stats(a10), (stats(b01), stats(b10))))
}

/// Times an in-place all-reduce (sum) of `count` f32 per device over all of `gpus`: (median,
/// min) of the slowest rank's time in ms (timestamps around the collective on each rank's
/// lane), and (median, min) of the host time of the `all_reduce` call in µs.
fn all_reduce_time(gpus: &[Gpu], comm: &Communicator, count: usize, a: &Args) -> Result<((f64, f64), (f64, f64))> {
    let mut bufs: Vec<_> = gpus.iter().map(|g| g.alloc_buffer::<f32>(count)).collect::<Result<_>>()?;
    let mut cols: Vec<Option<_>> = bufs.iter_mut().map(|b| Some(b.as_columns_mut())).collect();
    let reps = a.warmup + a.reps.max(5);
    let (mut kernel, mut host) = (Vec::new(), Vec::new());
    scope_multi(gpus, |s| {
        // One plain lane per device (plain lanes may leave the device closures), used by every
        // run: each run's input is the previous run's output, awaited on its own lane (no wait).
        let lanes: Vec<Lane<'_>> = s.each_device(|d| Ok(d.lane()?.lane()))?;
        let mut outs: Vec<Option<sluice::Fenced<'_, sluice::ColumnsMut<'_, f32>>>> =
            (0..gpus.len()).map(|_| None).collect();
        for rep in 0..reps {
            let mut ranks = Vec::with_capacity(lanes.len());
            let mut starts = Vec::with_capacity(lanes.len());
            for (d, lane) in lanes.iter().enumerate() {
                let (t0, rank) = lane.enter(|st| {
                    let v = match outs[d].take() {
                        Some(previous) => st.await_fence(previous)?,
                        None => {
                            let mut v = st.bind(cols[d].take().expect("bound once"));
                            st.zero(&mut v)?;
                            v
                        }
                    };
                    let t0 = st.timestamp()?;
                    Ok::<_, Error>((t0, st.rank_in_place(v)?))
                })?;
                starts.push(t0);
                ranks.push(rank);
            }
            let t = Instant::now();
            let reduced = s.all_reduce(comm, ReduceOp::Sum, ranks)?;
            let enqueue_us = t.elapsed().as_secs_f64() * 1e6;
            let mut slowest = 0.0f64;
            for (d, ((lane, t0), out)) in lanes.iter().zip(&starts).zip(reduced).enumerate() {
                let t1 = lane.enter(|st| st.timestamp())?;
                slowest = slowest.max(t1.elapsed_ms_since(t0)? as f64);
                outs[d] = Some(out);
            }
            if rep >= a.warmup {
                kernel.push(slowest);
                host.push(enqueue_us);
            }
        }
        Ok(())
    })?;
    Ok((stats(kernel), stats(host)))
}
