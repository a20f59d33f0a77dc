//! Launch overhead: the host time to enqueue one kernel launch through sluice, next to the
//! raw driver call (`cuLaunchKernel` through cudarc's `result` layer) on the same context,
//! module entry and stream kind.
//!
//! ```text
//! cargo run --release --example bench_launch -- [launches=20000] [rounds=7] [batch=launches]
//! ```
//!
//! Each round enqueues `launches` launches of `fill_column` on 256 elements (one block)
//! per path and times the enqueueing on the host clock, in batches of `batch` launches; the
//! stream is synchronized after each batch, outside the timing, and the paths take turns
//! within each round. A batch of thousands fills the stream's queue, so that the driver call
//! waits for the GPU too; a batch of about a hundred measures the host's work alone. Prints
//! the median over rounds of the time per launch, in ns, for: the raw driver call; the raw
//! call after a `cuCtxGetCurrent` (what sluice's context check costs); the raw call of the same
//! function loaded again and allowed the device's opt-in dynamic shared memory, as sluice
//! allows every entry it loads (what that attribute costs the driver); sluice with a
//! resolved `Function` (`gpu.function(&kernel)`); sluice with the `Kernel` handle (looked up
//! per launch); and with `args` by name. Then the same numbers as
//! `csv-launch,launches,rounds,path,ns,ratio_to_raw` lines (`launches` is `launches/batch`
//! where the batch is smaller) for `benches/join.py`.

use std::ffi::{c_void, CString};
use std::process::ExitCode;
use std::time::Instant;

use cudarc::driver::result;
use sluice::{kernels, scope, Error, Gpu, LaunchConfig, SubmitConfig};

fn main() -> ExitCode {
    let args: Vec<usize> = match std::env::args().skip(1).map(|a| a.parse()).collect() {
        Ok(a) => a,
        Err(_) => {
            eprintln!("usage: bench_launch [launches=20000] [rounds=7] [batch=launches]");
            return ExitCode::from(2);
        }
    };
    let launches = args.first().copied().unwrap_or(20_000).max(1);
    let rounds = args.get(1).copied().unwrap_or(7).max(1);
    let batch = args.get(2).copied().unwrap_or(launches).clamp(1, launches);
    let gpu = match Gpu::new(0) {
        Ok(g) => g,
        Err(e) => {
            eprintln!("bench_launch: no GPU to run on: {e}");
            return ExitCode::FAILURE;
        }
    };
    if gpu.backend() != sluice::Backend::Cuda {
        // The raw side calls the CUDA driver itself.
        eprintln!("bench_launch: needs an NVIDIA GPU; sluice fell back to its {} backend here", gpu.backend());
        return ExitCode::FAILURE;
    }
    match run(&gpu, launches, rounds, batch) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("bench_launch: {e}");
            ExitCode::FAILURE
        }
    }
}

/// The sizes of the batches `launches` launches go in.
fn batches(launches: usize, batch: usize) -> impl Iterator<Item = usize> {
    (0..launches).step_by(batch).map(move |i| batch.min(launches - i))
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn run(gpu: &Gpu, launches: usize, rounds: usize, batch: usize) -> Result<(), String> {
    // Launches are timed as they are handed to the driver: one driver call each, as asked
    // (a deferred scope would only log them here and submit them at its end).
    gpu.set_submit_config(SubmitConfig::direct());
    const N: usize = 256;
    let cfg = LaunchConfig::for_elements(N, 256);
    let resolved = gpu.function(&kernels::fill_column).map_err(|e| e.to_string())?;

    // The raw driver path: the same primary context (sluice retains the primary context of
    // device 0, which is current on this thread after `gpu.function`), its own module load of
    // the same PTX, its own non-blocking stream and buffer.
    let fail = |what: &str, e: result::DriverError| format!("raw {what}: {e:?}");
    let dev = result::device::get(0).map_err(|e| fail("device", e))?;
    // SAFETY: device 0 exists (sluice opened it); the retained primary context is kept
    // for the process's life.
    let ctx = unsafe { result::primary_ctx::retain(dev) }.map_err(|e| fail("retain", e))?;
    // SAFETY: `ctx` was just retained.
    unsafe { result::ctx::set_current(ctx) }.map_err(|e| fail("set current", e))?;
    let ptx = CString::new(kernels::PTX).expect("PTX has no NUL byte");
    // SAFETY: a NUL-terminated PTX image alive across the call.
    let module =
        unsafe { result::module::load_data(ptx.as_ptr() as *const c_void) }.map_err(|e| fail("module load", e))?;
    // SAFETY: the module is loaded and never unloaded here.
    let f = unsafe { result::module::get_function(module, CString::new("fill_column").unwrap()) }
        .map_err(|e| fail("get function", e))?;
    // The same function from a second load of the module, allowed the device's opt-in dynamic
    // shared memory as sluice allows each entry it loads: what that attribute costs a launch.
    // SAFETY: as the load above.
    let module_optin =
        unsafe { result::module::load_data(ptx.as_ptr() as *const c_void) }.map_err(|e| fail("module load", e))?;
    // SAFETY: the module is loaded and never unloaded here.
    let f_optin = unsafe { result::module::get_function(module_optin, CString::new("fill_column").unwrap()) }
        .map_err(|e| fail("get function", e))?;
    {
        use cudarc::driver::sys::{CUdevice_attribute as D, CUfunction_attribute as F};
        // SAFETY: `dev` is a valid device; `f_optin` a loaded function.
        unsafe {
            let optin = result::device::get_attribute(dev, D::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)
                .map_err(|e| fail("attribute", e))?;
            let fixed = result::function::get_function_attribute(f_optin, F::CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES)
                .map_err(|e| fail("function attribute", e))?;
            result::function::set_function_attribute(
                f_optin,
                F::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                optin - fixed,
            )
            .map_err(|e| fail("set function attribute", e))?;
        }
    }
    let stream = result::stream::create(result::stream::StreamKind::NonBlocking).map_err(|e| fail("stream", e))?;
    // SAFETY: a fresh allocation of N floats, freed below after the stream is synchronized.
    let buf = unsafe { result::malloc_sync(N * 4) }.map_err(|e| fail("alloc", e))?;
    // One round of the raw driver path (`check`: each launch after a `cuCtxGetCurrent`, as
    // sluice's launches are): ns per launch.
    let raw_round = |check: bool, f: cudarc::driver::sys::CUfunction| -> Result<f64, String> {
        let (mut p, mut len, mut v) = (buf, N as u64, 1.0f32);
        let mut secs = 0.0;
        for n in batches(launches, batch) {
            let t0 = Instant::now();
            for _ in 0..n {
                if check {
                    result::ctx::get_current().map_err(|e| fail("current context", e))?;
                }
                let mut params: [*mut c_void; 3] = [
                    &mut p as *mut _ as *mut c_void,
                    &mut len as *mut _ as *mut c_void,
                    &mut v as *mut _ as *mut c_void,
                ];
                // SAFETY: `fill_column(ptr, len, value)` with a buffer of `len` floats, alive
                // until the stream is synchronized (below, and before `buf` is freed).
                unsafe { result::launch_kernel(f, cfg.grid, cfg.block, 0, stream, &mut params) }
                    .map_err(|e| fail("launch", e))?;
            }
            secs += t0.elapsed().as_secs_f64();
            // SAFETY: the stream is alive.
            unsafe { result::stream::synchronize(stream) }.map_err(|e| fail("synchronize", e))?;
        }
        Ok(secs * 1e9 / launches as f64)
    };

    // The rounds interleave the paths (the raw one first in even rounds, last in odd ones),
    // so that a drift of the machine's speed touches all of them alike.
    let (mut raw_ns, mut checked_ns, mut optin_ns) = (Vec::new(), Vec::new(), Vec::new());
    let (mut function_ns, mut kernel_ns, mut named_ns) = (Vec::new(), Vec::new(), Vec::new());
    scope(gpu, |s| {
        let m = s.alloc_buffer::<f32>(N)?;
        let lane = s.lane()?;
        lane.enter(|st| {
            let mut v = st.bind(m.as_columns_mut());
            for round in 0..rounds {
                for side in [round % 2, 1 - round % 2] {
                    if side == 0 {
                        let raws =
                            [(false, f, &mut raw_ns), (true, f, &mut checked_ns), (false, f_optin, &mut optin_ns)];
                        for (check, f, out) in raws {
                            match raw_round(check, f) {
                                Ok(ns) => out.push(ns),
                                Err(e) => return Ok(Err(e)),
                            }
                        }
                        continue;
                    }
                    for (which, out) in [(0, &mut function_ns), (1, &mut kernel_ns), (2, &mut named_ns)] {
                        let mut secs = 0.0;
                        for n in batches(launches, batch) {
                            let t0 = Instant::now();
                            for _ in 0..n {
                                match which {
                                    0 => st.launch(&resolved, cfg, (&mut v, 1.0f32))?,
                                    1 => st.launch(&kernels::fill_column, cfg, (&mut v, 1.0f32))?,
                                    _ => {
                                        st.launch(&kernels::fill_column, cfg, kernels::fill_column::args(&mut v, 1.0))?
                                    }
                                }
                            }
                            secs += t0.elapsed().as_secs_f64();
                            st.record()?.wait()?;
                        }
                        out.push(secs * 1e9 / launches as f64);
                    }
                }
            }
            Ok::<_, Error>(Ok(()))
        })
    })
    .map_err(|e| e.to_string())??;
    // SAFETY: every raw round synchronized the stream: nothing uses `buf` any more.
    unsafe { result::free_sync(buf) }.map_err(|e| fail("free", e))?;
    let raw_ns = median(raw_ns);
    let rows = [
        ("raw", "raw cuLaunchKernel (cudarc result)", raw_ns),
        ("raw-ctx", "raw, after a cuCtxGetCurrent", median(checked_ns)),
        ("raw-optin", "raw, function allowed opt-in shared", median(optin_ns)),
        ("function", "sluice, resolved Function", median(function_ns)),
        ("kernel", "sluice, Kernel handle", median(kernel_ns)),
        ("kernel-args", "sluice, Kernel handle + args by name", median(named_ns)),
    ];
    let per = if batch < launches { format!(" in batches of {batch}") } else { String::new() };
    println!("launch overhead, {launches} launches{per} x {rounds} rounds (median ns per launch, host enqueue time):");
    let launches = if batch < launches { format!("{launches}/{batch}") } else { launches.to_string() };
    for (_, what, ns) in rows {
        println!("  {what:<40} {ns:8.0} ns   ({:.2}x raw)", ns / raw_ns);
    }
    // For benches/join.py: csv-launch,launches,rounds,path,ns,ratio_to_raw
    for (key, _, ns) in rows {
        println!("csv-launch,{launches},{rounds},{key},{ns:.1},{:.4}", ns / raw_ns);
    }
    Ok(())
}
