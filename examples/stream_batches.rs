//! Streaming beyond one batch: a data set larger than one batch goes through the GPU batch by
//! batch — batch k+1 uploaded while batch k is computed and batch k−1 downloaded — in one
//! scope, every hand-off between the three lanes checked by the types.
//!
//! ```text
//! stream_batches [--batch-mib M] [--batches N] [--slots R] [--reps K]     (default 16 MiB x 128, 4 slots, 5)
//! ```
//!
//! The input and output are pinned host matrices of `N` columns (one per batch). On the
//! device, two rings of `R` slots (input slots, output slots) circulate between three lanes:
//!
//! * the **upload** lane takes an input slot back (awaiting the fence the compute lane
//!   handed it with, once it has read the slot), copies batch k into it, and hands it on;
//! * the **compute** lane awaits it and an output slot (handed back by the download lane once
//!   its copy left), writes `out = a * in` (`zero`, then `saxpy`), and hands both on;
//! * the **download** lane awaits the output slot, copies it into column k of the host output
//!   and hands the slot back.
//!
//! A slot is a `ColumnsMut` of a scope matrix: it moves between lanes only as a `Fenced` value
//! awaited by the next lane (rule 1), and two lanes never hold the same slot (rule 2). Nothing
//! waits on the host inside the stream: the scope's end joins the lanes, then the host checks
//! every element of the first and the last repetition (`out == a * in`, exact). The program is written as it reads, with the
//! default submission (deferred; a long scope is submitted as it grows:
//! `SubmitConfig::max_deferred`).
//!
//! The bound is measured in the same run: one copy of the whole input to the device on one
//! lane while another lane copies as many bytes back (the copy engines of both directions busy
//! at once), timed the same way. Throughput counts the bytes crossing the bus in both
//! directions. Prints what it measured and a CSV line for `benches/join.py`:
//! `stream,batch_mib,batches,slots,gib_each_way,stream_ms_median,stream_ms_min,stream_gbps,bound_ms,bound_gbps,h2d_gbps,d2h_gbps,ratio,verified`.
//!
//! Without a GPU it runs on the CPU backend with smaller sizes (a check of the program; the
//! numbers mean nothing there).

use std::process::ExitCode;
use std::time::Instant;

use sluice::{kernels, scope, Backend, ColumnsMut, Fenced, Gpu, LaunchConfig, PinnedMatrix, Result};

const A: f32 = 0.5;
const USAGE: &str = "usage: stream_batches [--batch-mib M] [--batches N] [--slots R] [--reps K]";

/// A device slot: fresh (never used), or handed back by the lane that used it last.
enum Slot<'s> {
    Fresh(ColumnsMut<'s, f32>),
    Handed(Fenced<'s, ColumnsMut<'s, f32>>),
}

fn main() -> ExitCode {
    let gpu = match Gpu::new(0) {
        Ok(g) => g,
        Err(e) => {
            eprintln!("stream_batches: cannot open the GPU: {e}");
            return ExitCode::FAILURE;
        }
    };
    let cpu = gpu.backend() == Backend::Cpu;
    let (mut mib, mut batches, mut slots, mut reps) = if cpu { (1, 16, 3, 2) } else { (16, 128, 4, 5) };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let v = args.next().and_then(|v| v.parse::<usize>().ok());
        match (a.as_str(), v) {
            ("--batch-mib", Some(v)) if v > 0 => mib = v,
            ("--batches", Some(v)) if v > 0 => batches = v,
            ("--slots", Some(v)) if v >= 2 => slots = v,
            ("--reps", Some(v)) if v > 0 => reps = v,
            _ => {
                eprintln!("{USAGE}");
                return ExitCode::from(2);
            }
        }
    }
    match run(&gpu, mib, batches, slots, reps) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(3),
        Err(e) => {
            eprintln!("stream_batches: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(gpu: &Gpu, mib: usize, batches: usize, slots: usize, reps: usize) -> Result<bool> {
    let rows = mib << 18; // f32 elements per batch
    let mut input = gpu.pinned_matrix::<f32>(rows, batches)?;
    for (i, x) in input.iter_mut().enumerate() {
        *x = (i % 4093) as f32 * 0.25 - 500.0;
    }
    let mut output = gpu.pinned_matrix::<f32>(rows, batches)?;
    let bytes = rows * batches * 4;

    // The bound: the whole input up on one lane while as many bytes go down on another.
    let (mut bound, mut h2d, mut d2h) = (Vec::new(), Vec::new(), Vec::new());
    let mut up = gpu.alloc_matrix::<f32>(rows, batches)?;
    let mut down = gpu.alloc_matrix::<f32>(rows, batches)?;
    for r in 0..reps + 1 {
        let both = copies(gpu, &input, &mut output, &mut up, &mut down, true, true)?;
        let only_up = copies(gpu, &input, &mut output, &mut up, &mut down, true, false)?;
        let only_down = copies(gpu, &input, &mut output, &mut up, &mut down, false, true)?;
        if r > 0 {
            bound.push(both);
            h2d.push(only_up);
            d2h.push(only_down);
        }
    }
    drop((up, down));

    // The stream.
    let mut times = Vec::new();
    let mut verified = Ok(());
    for r in 0..reps + 1 {
        output.fill(f32::NAN);
        let t0 = Instant::now();
        stream(gpu, &input, &mut output, slots)?;
        let ms = t0.elapsed().as_secs_f64() * 1e3;
        if r > 0 {
            times.push(ms);
        }
        // Every element of the first and the last repetition (each one's output was poisoned).
        if verified.is_ok() && (r == 0 || r == reps) {
            verified = check(&input, &output);
        }
    }
    let med = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let gbps = |bytes: usize, ms: f64| bytes as f64 / (ms * 1e6);
    let (stream_ms, stream_min) = (med(&mut times), times[0]);
    let (bound_ms, h2d_ms, d2h_ms) = (med(&mut bound), med(&mut h2d), med(&mut d2h));
    let (stream_gbps, bound_gbps) = (gbps(2 * bytes, stream_ms), gbps(2 * bytes, bound_ms));
    let verdict = verified.as_ref().map_or_else(|e| format!("FAIL:{e}"), |()| "ok".into());
    println!(
        "stream: {batches} batches of {mib} MiB ({:.2} GiB each way), {slots} slots: median {stream_ms:.2} ms = \
         {stream_gbps:.1} GB/s both ways; bound (one copy each way at once) {bound_ms:.2} ms = {bound_gbps:.1} GB/s \
         (alone: up {:.1}, down {:.1} GB/s); stream/bound {:.3}; check {verdict}",
        bytes as f64 / (1u64 << 30) as f64,
        gbps(bytes, h2d_ms),
        gbps(bytes, d2h_ms),
        stream_gbps / bound_gbps
    );
    println!(
        "stream,{mib},{batches},{slots},{:.3},{stream_ms:.4},{stream_min:.4},{stream_gbps:.3},{bound_ms:.4},{bound_gbps:.3},{:.3},{:.3},{:.4},{verdict}",
        bytes as f64 / (1u64 << 30) as f64,
        gbps(bytes, h2d_ms),
        gbps(bytes, d2h_ms),
        stream_gbps / bound_gbps
    );
    Ok(verified.is_ok())
}

/// One timed scope of the bound: the input up (`up`) and/or as many bytes down (`down`),
/// each one copy on its own lane. Milliseconds.
fn copies(
    gpu: &Gpu,
    input: &PinnedMatrix<f32>,
    output: &mut PinnedMatrix<f32>,
    dev_up: &mut sluice::DeviceMatrix<f32>,
    dev_down: &mut sluice::DeviceMatrix<f32>,
    up: bool,
    down: bool,
) -> Result<f64> {
    let t0 = Instant::now();
    scope(gpu, |s| {
        let (a, b) = (s.lane()?, s.lane()?);
        if up {
            a.enter(|st| {
                let mut v = st.bind(dev_up.as_columns_mut());
                st.copy_to_device(input, &mut v)
            })?;
        }
        if down {
            b.enter(|st| st.copy_to_host(st.bind_ref(dev_down.as_columns()), output.as_pinned_mut()).map(drop))?;
        }
        Ok(())
    })?;
    Ok(t0.elapsed().as_secs_f64() * 1e3)
}

/// The stream: every batch through the three lanes (see the module docs).
fn stream(gpu: &Gpu, input: &PinnedMatrix<f32>, output: &mut PinnedMatrix<f32>, n_slots: usize) -> Result<()> {
    let rows = input.rows();
    let cfg = LaunchConfig::for_elements(rows, 256);
    scope(gpu, |s| {
        let (upload, compute, download) = (s.lane()?, s.lane()?, s.lane()?);
        let ins = s.alloc_matrix::<f32>(rows, n_slots)?;
        let outs = s.alloc_matrix::<f32>(rows, n_slots)?;
        let mut in_slots: Vec<Option<Slot>> = ins.columns_mut().map(|c| Some(Slot::Fresh(c))).collect();
        let mut out_slots: Vec<Option<Slot>> = outs.columns_mut().map(|c| Some(Slot::Fresh(c))).collect();
        for (k, dst) in output.columns_mut().enumerate() {
            let r = k % n_slots;
            let src = input.column(k).expect("a column per batch");
            // Upload batch k into input slot r.
            let slot = in_slots[r].take().expect("the slot came back");
            let uploaded = upload.enter(|st| {
                let mut v = match slot {
                    Slot::Fresh(c) => st.bind(c),
                    Slot::Handed(f) => st.await_fence(f)?, // the compute lane has read it
                };
                st.copy_to_device(src, &mut v)?;
                st.fence(v)
            })?;
            // Compute out = a * in into output slot r; hand both slots on.
            let slot = out_slots[r].take().expect("the slot came back");
            let (read, written) = compute.enter(|st| {
                let x = st.await_fence(uploaded)?;
                let mut y = match slot {
                    Slot::Fresh(c) => st.bind(c),
                    Slot::Handed(f) => st.await_fence(f)?, // the download lane has copied it
                };
                st.zero(&mut y)?;
                st.launch(&kernels::saxpy, cfg, (&mut y, &x, A))?;
                Ok::<_, sluice::Error>((st.fence(x)?, st.fence(y)?))
            })?;
            in_slots[r] = Some(Slot::Handed(read));
            // Download it into column k of the host output; hand the slot back.
            let copied = download.enter(|st| {
                let y = st.await_fence(written)?;
                st.copy_to_host(&y, dst)?; // the host reads it after the scope
                st.fence(y)
            })?;
            out_slots[r] = Some(Slot::Handed(copied));
        }
        Ok(())
    })
}

/// Every element: `out == a * in`, exactly.
fn check(input: &[f32], output: &[f32]) -> std::result::Result<(), String> {
    match input.iter().zip(output).position(|(x, y)| A * x != *y) {
        None => Ok(()),
        Some(i) => Err(format!("element_{i}_got_{}_want_{}", output[i], A * input[i])),
    }
}
