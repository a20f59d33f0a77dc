//! A tiled, pipelined tensor-core gemm written in safe Rust (`gpu-kernels/src/gemm.rs`):
//! `C = A · B` with bf16, f16 or f32 (tf32) inputs and f32 accumulation, checked against an
//! f64 reference on random inputs, then timed.
//!
//! ```text
//! cargo run --release --example gemm [SIZE...] [--dtype bf16,f16,tf32,bf16_128x256,bf16_wg,f16_wg,bf16_wg_128x256,f16_wg_128x256,bf16_ws,f16_ws,tf32_ws] [--warmup W] [--reps R]
//!   SIZE: N (N × N × N) or MxNxK; default: on a GPU 4096 8192 and two ragged shapes,
//!   on the CPU backend 96x200x72 and 128 (slow: every MMA is a warp collective there)
//! ```
//!
//! Every run poisons C with NaN, launches once, and checks that every element was written
//! and that 64 sampled elements (the last row and column among them) are within
//! `1e-4 · Σ_k |a_ik b_kj|` of the f64 product of the inputs as the kernel rounds them
//! (bf16 and f16 exactly, tf32 to nearest): only the f32 accumulation differs. Then
//! `--warmup` untimed and `--reps` timed launches, each between two CUDA events; the median
//! is printed as `rust,DTYPE,M,N,K,MEDIAN_MS,TFLOPS,ERR` (the CSV of
//! `benches/cuda/tc_gemm.cu`). Exit status 3 if a check fails.
//!
//! The `_wg` dtypes run the Hopper gemms (`gpu-kernels/src/gemm_wg.rs`: the warpgroup MMA,
//! sm_90a): on an H100/H200 the host launches the kernel crate's sm_90a PTX; on another GPU
//! they report `Error::KernelNeedsArch`. The `_ws` dtypes are the warp-specialised Hopper
//! gemm fed by the tensor-memory accelerator (`gpu-kernels/src/gemm_ws.rs`): A and B passed
//! as `row_major` views, which the launch turns into tensor maps (sizes whose rows the TMA
//! cannot read, `k` or `n` not a multiple of 8, are skipped with the reason); `tf32_ws` is
//! its tf32 form, which takes B transposed (`n × k`: the warpgroup MMA reads tf32 only
//! K-major; the example transposes B on the host before the upload, and the reference rounds
//! the inputs as the tensor core reads them, the low 13 mantissa bits dropped). The default
//! list adds all of them on a GPU of compute capability 9.0.

use std::process::ExitCode;

use half::{bf16, f16};
use sluice::{kernels, scope, Error, Gpu, LaunchConfig, Result, Stream};

use gpu_kernels::{
    GemmShape, GEMM_BF16, GEMM_BF16_128X256, GEMM_TF32, GEMM_WG, GEMM_WG_128X256, GEMM_WS, GEMM_WS_TF32,
};

/// xorshift64, uniform in [-1, 1) (`benches/cuda/common.cuh`'s `Rng`).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> f32 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        -1.0 + 2.0 * (self.0 >> 40) as f32 / (1u64 << 24) as f32
    }
}

/// `x` rounded to tf32 as `cvt.rna.tf32.f32` (`spec::mma::to_tf32`).
fn tf32(x: f32) -> f64 {
    sluice_device::spec::mma::to_tf32(x) as f64
}

/// The worst sampled `|c - ref| / Σ|a b|`, and whether every element of `c` was written.
fn check(a: &[f64], b: &[f64], c: &[f32], m: usize, n: usize, k: usize, seed: u64) -> (f64, bool) {
    let written = c.iter().all(|x| x.is_finite());
    let mut rng = Rng(seed ^ 0x1234);
    let mut worst = 0f64;
    for s in 0..64 {
        let (row, col) = if s == 0 {
            (m - 1, n - 1)
        } else {
            (((rng.next() + 1.0) / 2.0 * m as f32) as usize % m, ((rng.next() + 1.0) / 2.0 * n as f32) as usize % n)
        };
        let (mut r, mut mag) = (0f64, 0f64);
        for i in 0..k {
            let p = a[row * k + i] * b[i * n + col];
            r += p;
            mag += p.abs();
        }
        let e = (c[row * n + col] as f64 - r).abs() / mag.max(f64::MIN_POSITIVE);
        worst = worst.max(if e.is_nan() { f64::INFINITY } else { e });
    }
    (worst, written)
}

struct Options {
    warmup: usize,
    reps: usize,
    dtypes: Vec<String>,
}

/// One line of output, and whether its check passed.
fn report(dtype: &str, (m, n, k): (usize, usize, usize), ms: &mut [f32], err: f64, written: bool) -> bool {
    ms.sort_by(|x, y| x.total_cmp(y));
    let med = if ms.is_empty() { 0.0 } else { ms[ms.len() / 2] as f64 };
    let tflops = if med > 0.0 { 2.0 * (m * n * k) as f64 / (med * 1e-3) / 1e12 } else { 0.0 };
    let ok = written && err < 1e-4;
    println!("rust,{dtype},{m},{n},{k},{med:.4},{tflops:.1},{err:.2e}{}", if ok { "" } else { ",FAILED" });
    ok
}

fn timed(st: &Stream<'_, '_>, launch: impl FnOnce() -> Result<()>) -> Result<f32> {
    let start = st.timestamp()?;
    launch()?;
    let stop = st.timestamp()?;
    stop.elapsed_ms_since(&start)
}

/// Uploads `a` and `b`, runs `kernel` once on NaN-poisoned C (checked), then times it. The
/// optional last argument says how A and B are passed: as the views (the default), or `tma`:
/// as `row_major` views the launch makes tensor maps of (sizes the TMA cannot read are
/// skipped, with the reason).
macro_rules! run_gemm {
    ($gpu:expr, $o:expr, $kernel:expr, $t:ty, $g:expr, $conv:expr, $round:expr, $name:expr, $shape:expr, $seed:expr) => {
        run_gemm!($gpu, $o, $kernel, $t, $g, $conv, $round, $name, $shape, $seed, views)
    };
    (@args views, $a:ident, $b:ident, $m:ident, $n:ident, $k:ident) => {
        Ok::<_, Error>(($a, $b))
    };
    (@args tma, $a:ident, $b:ident, $m:ident, $n:ident, $k:ident) => {
        $a.row_major($m, $k).and_then(|a| Ok((a, $b.row_major($k, $n)?)))
    };
    (@smem views, $g:ident) => {
        $g.shared_bytes()
    };
    (@smem tma, $g:ident) => {
        $g.ws_shared_bytes()
    };
    (@args tma_nt, $a:ident, $b:ident, $m:ident, $n:ident, $k:ident) => {
        $a.row_major($m, $k).and_then(|a| Ok((a, $b.row_major($n, $k)?)))
    };
    (@smem tma_nt, $g:ident) => {
        $g.ws_shared_bytes()
    };
    // B as the device gets it: as it is, or (`tma_nt`) transposed, `n × k`.
    (@b_dev tma_nt, $b:ident, $k:ident, $n:ident) => {
        (0..$n * $k).map(|i| $b[(i % $k) * $n + i / $k]).collect::<Vec<_>>()
    };
    (@b_dev $other:ident, $b:ident, $k:ident, $n:ident) => {
        $b.clone()
    };
    ($gpu:expr, $o:expr, $kernel:expr, $t:ty, $g:expr, $conv:expr, $round:expr, $name:expr, $shape:expr, $seed:expr, $pass:ident) => {{
        let (m, n, k) = $shape;
        let mut rng = Rng($seed);
        let a: Vec<$t> = (0..m * k).map(|_| $conv(rng.next())).collect();
        let b: Vec<$t> = (0..k * n).map(|_| $conv(rng.next())).collect();
        let a64: Vec<f64> = a.iter().map(|&x| $round(x)).collect();
        let b64: Vec<f64> = b.iter().map(|&x| $round(x)).collect();
        let f = $gpu.function(&$kernel)?;
        let g: GemmShape = $g;
        let cfg = LaunchConfig {
            grid: (g.grid(m, n), 1, 1),
            block: (g.threads, 1, 1),
            shared_mem_bytes: run_gemm!(@smem $pass, g) as u32,
        };
        let poison = vec![f32::NAN; m * n];
        let b_dev = run_gemm!(@b_dev $pass, b, k, n);
        let ran = scope($gpu, |s| {
            let (a, b) = (s.upload(&a)?, s.upload(&b_dev)?);
            let c = s.alloc_buffer::<f32>(m * n)?;
            let host = s.pinned_buffer::<f32>(m * n)?;
            let ran = s.lane()?.enter(|st| {
                let (a, b) = (st.await_fence(&a)?, st.await_fence(&b)?);
                let (a, b) = match run_gemm!(@args $pass, a, b, m, n, k) {
                    Ok(ab) => ab,
                    Err(Error::TensorMap { reason }) => return Ok(Err(reason)),
                    Err(e) => return Err(e),
                };
                let mut c = st.bind(c.as_columns_mut());
                st.copy_to_device(&poison, &mut c)?;
                st.launch(&f, cfg, (&mut c, &a, &b, m as u32, n as u32, k as u32))?;
                let copy = st.copy_to_host(&c, host.as_pinned_mut())?;
                let mut ms = Vec::new();
                for r in 0..$o.warmup + $o.reps {
                    let t = timed(st, || st.launch(&f, cfg, (&mut c, &a, &b, m as u32, n as u32, k as u32)))?;
                    if r >= $o.warmup {
                        ms.push(t);
                    }
                }
                Ok::<_, Error>(Ok((ms, copy)))
            })?;
            Ok(match ran {
                Ok((ms, copy)) => Ok((ms, copy.wait()?.to_vec())),
                Err(reason) => Err(reason),
            })
        })?;
        match ran {
            Ok((mut ms, c)) => {
                let (err, written) = check(&a64, &b64, &c, m, n, k, $seed);
                report($name, (m, n, k), &mut ms, err, written)
            }
            Err(reason) => {
                println!("# {} {m}x{n}x{k}: skipped: {reason}", $name);
                true
            }
        }
    }};
}

fn run(gpu: &Gpu, o: &Options, shape: (usize, usize, usize)) -> Result<bool> {
    let seed = 0x5eed ^ ((shape.0 as u64) << 20) ^ ((shape.1 as u64) << 40) ^ shape.2 as u64;
    let mut ok = true;
    for d in &o.dtypes {
        ok &= match d.as_str() {
            "bf16" => {
                run_gemm!(
                    gpu,
                    o,
                    kernels::gemm_bf16,
                    bf16,
                    GEMM_BF16,
                    bf16::from_f32,
                    |x: bf16| x.to_f64(),
                    "bf16",
                    shape,
                    seed
                )
            }
            "f16" => run_gemm!(
                gpu,
                o,
                kernels::gemm_f16,
                f16,
                GEMM_BF16,
                f16::from_f32,
                |x: f16| x.to_f64(),
                "f16",
                shape,
                seed
            ),
            "tf32" => run_gemm!(gpu, o, kernels::gemm_tf32, f32, GEMM_TF32, |x: f32| x, tf32, "tf32", shape, seed),
            "bf16_128x256" => run_gemm!(
                gpu,
                o,
                kernels::gemm_bf16_128x256,
                bf16,
                GEMM_BF16_128X256,
                bf16::from_f32,
                |x: bf16| x.to_f64(),
                "bf16_128x256",
                shape,
                seed
            ),
            "bf16_wg" => run_gemm!(
                gpu,
                o,
                kernels::gemm_wg_bf16,
                bf16,
                GEMM_WG,
                bf16::from_f32,
                |x: bf16| x.to_f64(),
                "bf16_wg",
                shape,
                seed
            ),
            "f16_wg" => run_gemm!(
                gpu,
                o,
                kernels::gemm_wg_f16,
                f16,
                GEMM_WG,
                f16::from_f32,
                |x: f16| x.to_f64(),
                "f16_wg",
                shape,
                seed
            ),
            "bf16_wg_128x256" => run_gemm!(
                gpu,
                o,
                kernels::gemm_wg_bf16_128x256,
                bf16,
                GEMM_WG_128X256,
                bf16::from_f32,
                |x: bf16| x.to_f64(),
                "bf16_wg_128x256",
                shape,
                seed
            ),
            "f16_wg_128x256" => run_gemm!(
                gpu,
                o,
                kernels::gemm_wg_f16_128x256,
                f16,
                GEMM_WG_128X256,
                f16::from_f32,
                |x: f16| x.to_f64(),
                "f16_wg_128x256",
                shape,
                seed
            ),
            "bf16_ws" => run_gemm!(
                gpu,
                o,
                kernels::gemm_ws_bf16,
                bf16,
                GEMM_WS,
                bf16::from_f32,
                |x: bf16| x.to_f64(),
                "bf16_ws",
                shape,
                seed,
                tma
            ),
            "tf32_ws" => run_gemm!(
                gpu,
                o,
                kernels::gemm_ws_tf32,
                f32,
                GEMM_WS_TF32,
                |x: f32| x,
                |x: f32| f32::from_bits(x.to_bits() & 0xffff_e000) as f64,
                "tf32_ws",
                shape,
                seed,
                tma_nt
            ),
            "f16_ws" => run_gemm!(
                gpu,
                o,
                kernels::gemm_ws_f16,
                f16,
                GEMM_WS,
                f16::from_f32,
                |x: f16| x.to_f64(),
                "f16_ws",
                shape,
                seed,
                tma
            ),
            other => {
                eprintln!(
                    "unknown dtype {other} (bf16, f16, tf32, bf16_128x256, bf16_wg, f16_wg, bf16_wg_128x256, \
                     f16_wg_128x256, bf16_ws, f16_ws, tf32_ws)"
                );
                false
            }
        };
    }
    Ok(ok)
}

fn parse_size(s: &str) -> Option<(usize, usize, usize)> {
    let v: Vec<usize> = s.split('x').map(|p| p.parse().ok()).collect::<Option<_>>()?;
    match v[..] {
        [n] if n > 0 => Some((n, n, n)),
        [m, n, k] if m > 0 && n > 0 && k > 0 => Some((m, n, k)),
        _ => None,
    }
}

fn main() -> ExitCode {
    let mut o = Options { warmup: 5, reps: 20, dtypes: vec!["bf16".into(), "f16".into(), "tf32".into()] };
    let mut sizes = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--warmup" => o.warmup = args.next().and_then(|v| v.parse().ok()).unwrap_or(o.warmup),
            "--reps" => o.reps = args.next().and_then(|v| v.parse().ok()).unwrap_or(o.reps),
            "--dtype" => o.dtypes = args.next().unwrap_or_default().split(',').map(String::from).collect(),
            s => match parse_size(s) {
                Some(v) => sizes.push(v),
                None => {
                    eprintln!("not a size: {s} (N or MxNxK)");
                    return ExitCode::from(1);
                }
            },
        }
    }
    let gpu = match Gpu::new(0) {
        Ok(g) => g,
        Err(e) => {
            eprintln!("gemm: {e}");
            return ExitCode::from(2);
        }
    };
    let on_cpu = gpu.backend() == sluice::Backend::Cpu;
    let dtype_given = std::env::args().any(|a| a == "--dtype");
    if !dtype_given && gpu.info().compute_capability == (9, 0) {
        // Hopper: the warpgroup MMA gemms too (the kernel crate's sm_90a build).
        o.dtypes.extend([
            "bf16_ws".into(),
            "f16_ws".into(),
            "tf32_ws".into(),
            "bf16_wg_128x256".into(),
            "f16_wg_128x256".into(),
            "bf16_wg".into(),
            "f16_wg".into(),
        ]);
    }
    if sizes.is_empty() {
        sizes = if on_cpu {
            vec![(96, 200, 72), (128, 128, 128)]
        } else {
            vec![(4096, 4096, 4096), (8192, 8192, 8192), (1000, 1000, 1000), (4095, 4097, 1029)]
        };
    }
    if on_cpu {
        o.warmup = 0;
        o.reps = o.reps.min(1);
    }
    println!("# gemm on {} ({}); {} warm-up and {} timed launches", gpu.info().name, gpu.backend(), o.warmup, o.reps);
    println!("# impl,dtype,m,n,k,median_ms,tflops,err");
    let mut ok = true;
    for s in sizes {
        match run(&gpu, &o, s) {
            Ok(pass) => ok &= pass,
            Err(e) => {
                eprintln!("gemm: {e}");
                return ExitCode::from(2);
            }
        }
    }
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(3)
    }
}
