//! sluice-ports: Rust-CUDA (`cuda_std`) kernels ported to sluice by renaming imports
//! (`kernels/`), run through sluice's host API, checked and timed.
//!
//! ```text
//! sluice-ports [check] [--seed S]          every kernel once, fresh random inputs, against a CPU reference
//! sluice-ports bench [--warmup W] [--reps R] [--seed S]   (GPU only) CSV timings
//! ```
//!
//! `check` runs on `Gpu::new(0)`: CUDA device 0, or sluice's CPU backend where there is no
//! GPU (`SLUICE_BACKEND=cuda|cpu` insists on one). Outputs are poisoned before each launch
//! (NaN for floats, `0xff` bytes for digests), so an element the kernel never wrote fails.
//! References: vecadd exact (one f32 rounding of the f64 sum), gemm in f64 with the
//! forward-error bound of an f32 dot product of length `k` (`γ_k Σ|a||b|`, `γ_k = k u / (1 − k u)`,
//! `u = 2⁻²⁴`), sha256 exact against the `sha2` crate on the host. Exit status 1 on any
//! mismatch.
//!
//! `bench` prints `# impl,kernel,sizes,block,grid,median_ms,min_ms,max_ms,reps,check` and
//! one line per measurement, the format of `benches/cuda/gemm.cu` (which times the same
//! tiled gemm written in CUDA C++): inputs uploaded before timing, `W` warm-up launches
//! (default 5), then `R` timed launches (default 30), each bracketed by two CUDA events on
//! its lane and waited for; `check` is the f64 sum of the output. Inputs are the xorshift64
//! floats of `benches/cuda/common.cuh` from the same seed (`0x5eed`), so the `check`
//! columns of the two programs agree.

use std::process::ExitCode;

use ports_kernels::TILE;
use rand::{Rng as _, SeedableRng};
use sha2::{Digest, Sha256};
use sluice::{Backend, Gpu, Kernel, LaunchConfig, PtrMut, Ref, Result, Stream, Unchecked};

/// Typed handles of the kernels (`kernels::vecadd`, `kernels::gemm_tiled`, …), generated
/// by build.rs from the PTX and the kernel crate's `#[kernel]`s.
mod kernels {
    sluice::include_kernels!(ports_kernels);
}

const USAGE: &str = "usage: sluice-ports [check|bench] [--seed S] [--warmup W] [--reps R]\n  \
    check   run every kernel once on Gpu::new(0) (CUDA, else the CPU backend) against a CPU reference\n  \
    bench   (GPU only) time vecadd, vecadd_unchecked, gemm_naive, gemm_tiled, gemm_tiled_unchecked, sha256; CSV on stdout\n";

/// `vecadd` and `vecadd_unchecked`: `(a, b, c)`.
type VecaddKernel = Kernel<(Ref<f32>, Ref<f32>, PtrMut<f32>), Unchecked>;
/// `gemm_naive` and `gemm_tiled`: `(a, b, c, m, n, k)`.
type GemmKernel = Kernel<(Ref<f32>, Ref<f32>, PtrMut<f32>, usize, usize, usize), Unchecked>;

/// Command-line options.
struct Options {
    mode: Mode,
    seed: Option<u64>,
    warmup: usize,
    reps: usize,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Check,
    Bench,
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(o) = parse(&args) else {
        eprint!("{USAGE}");
        return ExitCode::from(2);
    };
    // From the PTX text alone: every handle's entry exists with the parameters its
    // `#[kernel]` declares (loading the module checks it again).
    if let Err(e) = kernels::check_signatures() {
        eprintln!("sluice-ports: the embedded PTX does not match the kernel crate: {e}");
        return ExitCode::from(2);
    }
    let outcome = match o.mode {
        Mode::Check => check(&o),
        Mode::Bench => bench(&o),
    };
    match outcome {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("sluice-ports: {e}");
            ExitCode::from(2)
        }
    }
}

fn parse(args: &[String]) -> Option<Options> {
    let mut o = Options { mode: Mode::Check, seed: None, warmup: 5, reps: 30 };
    let mut it = args.iter();
    let mut mode_seen = false;
    while let Some(a) = it.next() {
        match a.as_str() {
            "check" | "bench" if !mode_seen => {
                o.mode = if a == "check" { Mode::Check } else { Mode::Bench };
                mode_seen = true;
            }
            "--seed" => o.seed = Some(number(it.next()?)?),
            "--warmup" => o.warmup = usize::try_from(number(it.next()?)?).ok()?,
            "--reps" => o.reps = usize::try_from(number(it.next()?)?).ok().filter(|&r| r > 0)?,
            _ => return None,
        }
    }
    Some(o)
}

/// A decimal or `0x` hexadecimal number.
fn number(s: &str) -> Option<u64> {
    match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16).ok(),
        None => s.parse().ok(),
    }
}

// ---------------------------------------------------------------------------------------
// Launches: one scope each, inputs uploaded, the output poisoned, one kernel, one copy back.

/// `c = a + b` through `kernel` (`vecadd` or `vecadd_unchecked`), `c` poisoned with NaN.
fn run_vecadd(gpu: &Gpu, kernel: &VecaddKernel, a: &[f32], b: &[f32]) -> Result<Vec<f32>> {
    let n = a.len();
    assert_eq!(b.len(), n, "vecadd: a and b differ in length");
    let poison = vec![f32::NAN; n];
    let mut out = gpu.pinned_buffer::<f32>(n)?;
    sluice::scope(gpu, |s| {
        let (a, b) = (s.upload(a)?, s.upload(b)?);
        let c = s.alloc_buffer::<f32>(n)?;
        s.lane()?.enter(|st| {
            let (a, b) = (st.await_fence(&a)?, st.await_fence(&b)?);
            let mut c = st.bind(c.as_columns_mut());
            st.copy_to_device(&poison, &mut c)?;
            // SAFETY: the kernel reads a[i] and b[i] and writes c[i] for i < a.len() only, one
            // thread per i; a, b and c each hold n elements, bound to this lane.
            unsafe { st.launch_unchecked(kernel, vecadd_config(n), (&a, &b, &mut c))? };
            st.copy_to_host(&c, out.as_pinned_mut()).map(drop)
        })
    })?;
    Ok(out.to_vec())
}

/// `C = A·B` through `kernel` (`gemm_naive` or `gemm_tiled`), `C` poisoned with NaN.
fn run_gemm(gpu: &Gpu, kernel: &GemmKernel, cfg: LaunchConfig, g: &Gemm) -> Result<Vec<f32>> {
    let poison = vec![f32::NAN; g.m * g.n];
    let mut out = gpu.pinned_buffer::<f32>(g.m * g.n)?;
    sluice::scope(gpu, |s| {
        let (a, b) = (s.upload(&g.a)?, s.upload(&g.b)?);
        let c = s.alloc_buffer::<f32>(g.m * g.n)?;
        s.lane()?.enter(|st| {
            let (a, b) = (st.await_fence(&a)?, st.await_fence(&b)?);
            let mut c = st.bind(c.as_columns_mut());
            st.copy_to_device(&poison, &mut c)?;
            // SAFETY: a holds m·k and b k·n elements (`Gemm::random`), c holds m·n; the kernel
            // writes c[row·n + col] for row < m, col < n only, one thread per element.
            unsafe { st.launch_unchecked(kernel, cfg, (&a, &b, &mut c, g.m, g.n, g.k))? };
            st.copy_to_host(&c, out.as_pinned_mut()).map(drop)
        })
    })?;
    Ok(out.to_vec())
}

/// The SHA-256 of every message, `digests` poisoned with `0xff` bytes.
fn run_sha256(gpu: &Gpu, msgs: &Messages) -> Result<Vec<[u8; 32]>> {
    let count = msgs.count();
    let poison = vec![[0xffu8; 32]; count];
    let mut out = gpu.pinned_buffer::<[u8; 32]>(count)?;
    sluice::scope(gpu, |s| {
        let (data, offsets) = (s.upload(&msgs.data)?, s.upload(&msgs.offsets)?);
        let digests = s.alloc_buffer::<[u8; 32]>(count)?;
        s.lane()?.enter(|st| {
            let (data, offsets) = (st.await_fence(&data)?, st.await_fence(&offsets)?);
            let mut digests = st.bind(digests.as_columns_mut());
            st.copy_to_device(&poison, &mut digests)?;
            // SAFETY: `digests` holds offsets.len() - 1 digests, thread i writes digest i only;
            // the offsets are non-decreasing and end at data.len() (`Messages::random`).
            unsafe { st.launch_unchecked(&kernels::sha256, sha256_config(count), (&data, &offsets, &mut digests))? };
            st.copy_to_host(&digests, out.as_pinned_mut()).map(drop)
        })
    })?;
    Ok(out.to_vec())
}

fn vecadd_config(n: usize) -> LaunchConfig {
    LaunchConfig::for_elements(n, 256)
}

fn sha256_config(count: usize) -> LaunchConfig {
    LaunchConfig::for_elements(count, 128)
}

/// One thread per element of `C`, blocks of 16 × 16.
fn gemm_naive_config(m: usize, n: usize) -> LaunchConfig {
    LaunchConfig::for_elements_2d((n, m), (16, 16))
}

/// One block of TILE × TILE threads per tile of `C` (what `gemm_tiled` requires).
fn gemm_tiled_config(m: usize, n: usize) -> LaunchConfig {
    let t = TILE as u32;
    LaunchConfig::for_elements_2d((n, m), (t, t))
}

// ---------------------------------------------------------------------------------------
// Inputs and references

/// A gemm problem: `A` is `m × k`, `B` is `k × n`, row-major.
struct Gemm {
    m: usize,
    n: usize,
    k: usize,
    a: Vec<f32>,
    b: Vec<f32>,
}

impl Gemm {
    fn new(m: usize, n: usize, k: usize, mut next: impl FnMut() -> f32) -> Gemm {
        let a = (0..m * k).map(|_| next()).collect();
        let b = (0..k * n).map(|_| next()).collect();
        Gemm { m, n, k, a, b }
    }

    /// `C = A·B` in f64, and for each element the bound on an f32 dot product's error:
    /// `γ_k Σ_p |a_ip b_pj|` (`γ_k = k u / (1 − k u)`, `u = 2⁻²⁴`; each fused step rounds once).
    fn reference(&self) -> (Vec<f64>, Vec<f64>) {
        // f32's unit roundoff, 2^-24.
        let u = f64::from(f32::EPSILON) / 2.0;
        let ku = self.k as f64 * u;
        let gamma = ku / (1.0 - ku);
        let (mut c, mut bound) = (vec![0.0f64; self.m * self.n], vec![0.0f64; self.m * self.n]);
        for row in 0..self.m {
            let a_row = &self.a[row * self.k..(row + 1) * self.k];
            let (c_row, bound_row) =
                (&mut c[row * self.n..(row + 1) * self.n], &mut bound[row * self.n..(row + 1) * self.n]);
            for (p, &a) in a_row.iter().enumerate() {
                let b_row = &self.b[p * self.n..(p + 1) * self.n];
                for ((c, abs), &b) in c_row.iter_mut().zip(bound_row.iter_mut()).zip(b_row) {
                    let prod = a as f64 * b as f64;
                    *c += prod;
                    *abs += prod.abs();
                }
            }
        }
        bound.iter_mut().for_each(|b| *b *= gamma);
        (c, bound)
    }
}

/// Many messages in one byte buffer: message `i` is `data[offsets[i]..offsets[i + 1]]`.
struct Messages {
    data: Vec<u8>,
    offsets: Vec<u32>,
}

impl Messages {
    /// `lengths.len()` messages of those lengths, random bytes.
    fn random(lengths: &[usize], rng: &mut impl rand::Rng) -> Messages {
        let mut offsets = Vec::with_capacity(lengths.len() + 1);
        offsets.push(0u32);
        let mut data = Vec::new();
        for &len in lengths {
            data.extend((0..len).map(|_| rng.random::<u8>()));
            offsets.push(u32::try_from(data.len()).expect("messages under 4 GiB in all"));
        }
        Messages { data, offsets }
    }

    fn count(&self) -> usize {
        self.offsets.len() - 1
    }

    fn message(&self, i: usize) -> &[u8] {
        &self.data[self.offsets[i] as usize..self.offsets[i + 1] as usize]
    }
}

// ---------------------------------------------------------------------------------------
// check

/// One row of the check table.
struct Verdict {
    kernel: &'static str,
    sizes: String,
    against: &'static str,
    error: String,
    ok: bool,
}

fn check(o: &Options) -> Result<bool> {
    let gpu = Gpu::new(0)?;
    check_on(&gpu, o.seed.unwrap_or_else(rand::random))
}

/// Every kernel once on `gpu`, against its reference; prints the table.
fn check_on(gpu: &Gpu, seed: u64) -> Result<bool> {
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    match gpu.backend() {
        Backend::Cpu => println!(
            "No GPU here: the kernels {:?} run on sluice's CPU backend ({}); seed {seed:#x}",
            kernels::ENTRIES,
            gpu.info().name
        ),
        _ => println!(
            "Running on {} ({} backend, PTX for {}); seed {seed:#x}",
            gpu.info().name,
            gpu.backend(),
            kernels::ARCH
        ),
    }
    let mut rows = Vec::new();

    // vecadd and vecadd_unchecked: exact (the f64 sum of two f32s is exact; one rounding).
    let n = 1_000_003;
    let a: Vec<f32> = (0..n).map(|_| rng.random_range(-1.0f32..1.0)).collect();
    let b: Vec<f32> = (0..n).map(|_| rng.random_range(-1.0f32..1.0)).collect();
    let expected: Vec<f32> = a.iter().zip(&b).map(|(&x, &y)| (x as f64 + y as f64) as f32).collect();
    for (name, kernel) in [("vecadd", &kernels::vecadd), ("vecadd_unchecked", &kernels::vecadd_unchecked)] {
        let c = run_vecadd(gpu, kernel, &a, &b)?;
        let wrong = c.iter().zip(&expected).filter(|(g, r)| g.to_bits() != r.to_bits()).count();
        rows.push(Verdict {
            kernel: name,
            sizes: n.to_string(),
            against: "f64, exact",
            error: format!("{wrong} of {n} differ"),
            ok: wrong == 0,
        });
    }

    // gemm: sizes that are not multiples of the tile (edges padded), and on a GPU a large one.
    let mut shapes = vec![(200, 175, 300), (33, 31, 65)];
    if gpu.backend() != Backend::Cpu {
        shapes.push((1024, 768, 1000));
    }
    for (m, n, k) in shapes {
        let g = Gemm::new(m, n, k, || rng.random_range(-1.0f32..1.0));
        let (reference, bound) = g.reference();
        for (name, kernel, cfg) in [
            ("gemm_naive", &kernels::gemm_naive, gemm_naive_config(m, n)),
            ("gemm_tiled", &kernels::gemm_tiled, gemm_tiled_config(m, n)),
            ("gemm_tiled_unchecked", &kernels::gemm_tiled_unchecked, gemm_tiled_config(m, n)),
        ] {
            let c = run_gemm(gpu, kernel, cfg, &g)?;
            // The largest error as a fraction of its bound (NaN, an element never written, fails).
            let worst = c
                .iter()
                .zip(reference.iter().zip(&bound))
                .map(|(&g, (&r, &b))| (g as f64 - r).abs() / b.max(f64::MIN_POSITIVE))
                .fold(0.0f64, |w, e| if e.is_nan() || w.is_nan() { f64::NAN } else { w.max(e) });
            rows.push(Verdict {
                kernel: name,
                sizes: format!("{m}x{n}x{k}"),
                against: "f64, γ_k Σ|a||b|",
                error: format!("{worst:.3} of the bound"),
                ok: worst <= 1.0,
            });
        }
    }

    // sha256: the block-boundary lengths first (55/56: the length field's block; 64: a full
    // block), then random lengths.
    let mut lengths = vec![0, 1, 3, 55, 56, 57, 63, 64, 65, 119, 120, 128, 1000];
    lengths.extend((0..3000).map(|_| rng.random_range(0..=300)));
    let msgs = Messages::random(&lengths, &mut rng);
    let digests = run_sha256(gpu, &msgs)?;
    let wrong = (0..msgs.count()).filter(|&i| digests[i][..] != Sha256::digest(msgs.message(i))[..]).count();
    rows.push(Verdict {
        kernel: "sha256",
        sizes: format!("{} msgs, {} B", msgs.count(), msgs.data.len()),
        against: "sha2 crate, exact",
        error: format!("{wrong} of {} differ", msgs.count()),
        ok: wrong == 0,
    });

    let table: Vec<[String; 5]> = rows
        .iter()
        .map(|r| {
            let verdict = if r.ok { "ok" } else { "MISMATCH" };
            [r.kernel.to_string(), r.sizes.clone(), r.against.to_string(), r.error.clone(), verdict.to_string()]
        })
        .collect();
    print_table(&["kernel", "size", "reference", "error", "result"], &table);
    let ok = rows.iter().all(|r| r.ok);
    if ok {
        println!("every kernel matches its reference on {} ({} backend)", gpu.info().name, gpu.backend());
    } else {
        println!("MISMATCH: a kernel differs from its reference (seed {seed:#x})");
    }
    Ok(ok)
}

fn print_table<const N: usize>(header: &[&str; N], rows: &[[String; N]]) {
    let width = |i: usize| rows.iter().map(|r| r[i].chars().count()).chain([header[i].len()]).max().unwrap_or(0);
    let widths: Vec<usize> = (0..N).map(width).collect();
    let line = |cells: Vec<&str>| {
        let padded: Vec<String> = cells.iter().zip(&widths).map(|(c, &w)| format!("{c:<w$}")).collect();
        println!("{}", padded.join("  ").trim_end());
    };
    line(header.to_vec());
    line(widths.iter().map(|&w| "-".repeat(w)).collect::<Vec<_>>().iter().map(String::as_str).collect());
    for r in rows {
        line(r.iter().map(String::as_str).collect());
    }
}

// ---------------------------------------------------------------------------------------
// bench

/// `benches/cuda/common.cuh`'s xorshift64: the same floats from the same seed.
struct XorShift(u64);

impl XorShift {
    fn next(&mut self, lo: f32, hi: f32) -> f32 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        lo + (hi - lo) * (self.0 >> 40) as f32 / (1u64 << 24) as f32
    }
}

/// One CSV line: `impl,kernel,sizes,block,grid,median_ms,min_ms,max_ms,reps,check,registers`.
fn report(kernel: &str, sizes: &str, cfg: LaunchConfig, mut ms: Vec<f32>, check: f64, registers: u32) {
    ms.sort_by(f32::total_cmp);
    let n = ms.len();
    let median = if n % 2 == 1 { ms[n / 2] } else { 0.5 * (ms[n / 2 - 1] + ms[n / 2]) };
    let (b, g) = (cfg.block, cfg.grid);
    println!(
        "rust,{kernel},{sizes},{}x{}x{},{}x{}x{},{:.6},{:.6},{:.6},{n},{check:.9e},{registers}",
        b.0,
        b.1,
        b.2,
        g.0,
        g.1,
        g.2,
        median,
        ms[0],
        ms[n - 1]
    );
}

/// The times of `o.reps` launches after `o.warmup` untimed ones: each launch between two
/// timestamps (CUDA events) on the lane, the host waiting for the second before the next.
fn time_launches(st: &Stream<'_, '_>, o: &Options, mut launch: impl FnMut() -> Result<()>) -> Result<Vec<f32>> {
    let mut ms = Vec::with_capacity(o.reps);
    for r in 0..o.warmup + o.reps {
        let start = st.timestamp()?;
        launch()?;
        let stop = st.timestamp()?;
        let t = stop.elapsed_ms_since(&start)?;
        if r >= o.warmup {
            ms.push(t);
        }
    }
    Ok(ms)
}

fn bench(o: &Options) -> Result<bool> {
    let gpu = Gpu::new(0)?;
    if gpu.backend() == Backend::Cpu {
        eprintln!("sluice-ports bench: no GPU here (it times CUDA launches); `sluice-ports check` runs on the CPU");
        return Ok(false);
    }
    let info = gpu.info();
    eprintln!(
        "sluice-ports bench: {} (sm_{}{}), {} warm-up and {} timed launches per kernel",
        info.name, info.compute_capability.0, info.compute_capability.1, o.warmup, o.reps
    );
    let seed = o.seed.unwrap_or(0x5eed);
    println!("# impl,kernel,sizes,block,grid,median_ms,min_ms,max_ms,reps,check,registers");

    // vecadd, with and without the bounds check on b: the check's cost.
    let n = 1usize << 26;
    let mut rng = XorShift(seed);
    let a: Vec<f32> = (0..n).map(|_| rng.next(-1.0, 1.0)).collect();
    let b: Vec<f32> = (0..n).map(|_| rng.next(-1.0, 1.0)).collect();
    for (name, kernel) in [("vecadd", &kernels::vecadd), ("vecadd_unchecked", &kernels::vecadd_unchecked)] {
        let cfg = vecadd_config(n);
        let mut host = gpu.pinned_buffer::<f32>(n)?;
        let ms = sluice::scope(&gpu, |s| {
            let (a, b) = (s.upload(&a)?, s.upload(&b)?);
            let c = s.alloc_buffer::<f32>(n)?;
            s.lane()?.enter(|st| {
                let (a, b) = (st.await_fence(&a)?, st.await_fence(&b)?);
                let mut c = st.bind(c.as_columns_mut());
                let ms = time_launches(st, o, || {
                    // SAFETY: as in `run_vecadd`: a, b, c hold n elements, one thread per element.
                    unsafe { st.launch_unchecked(kernel, cfg, (&a, &b, &mut c)) }
                })?;
                st.copy_to_host(&c, host.as_pinned_mut())?;
                Ok(ms)
            })
        })?;
        let registers = gpu.function(kernel)?.registers();
        report(name, &n.to_string(), cfg, ms, host.iter().map(|&x| x as f64).sum(), registers);
    }

    // gemm, naive and tiled, square sizes.
    for size in [1024usize, 2048, 4096] {
        let mut rng = XorShift(seed);
        let g = Gemm::new(size, size, size, || rng.next(-1.0, 1.0));
        for (name, kernel, cfg) in [
            ("gemm_naive", &kernels::gemm_naive, gemm_naive_config(size, size)),
            ("gemm_tiled", &kernels::gemm_tiled, gemm_tiled_config(size, size)),
            ("gemm_tiled_unchecked", &kernels::gemm_tiled_unchecked, gemm_tiled_config(size, size)),
        ] {
            let mut host = gpu.pinned_buffer::<f32>(size * size)?;
            let ms = sluice::scope(&gpu, |s| {
                let (a, b) = (s.upload(&g.a)?, s.upload(&g.b)?);
                let c = s.alloc_buffer::<f32>(size * size)?;
                s.lane()?.enter(|st| {
                    let (a, b) = (st.await_fence(&a)?, st.await_fence(&b)?);
                    let mut c = st.bind(c.as_columns_mut());
                    let ms = time_launches(st, o, || {
                        // SAFETY: as in `run_gemm`: a, b, c hold size² elements each.
                        unsafe { st.launch_unchecked(kernel, cfg, (&a, &b, &mut c, size, size, size)) }
                    })?;
                    st.copy_to_host(&c, host.as_pinned_mut())?;
                    Ok(ms)
                })
            })?;
            let registers = gpu.function(kernel)?.registers();
            report(name, &format!("{size}x{size}x{size}"), cfg, ms, host.iter().map(|&x| x as f64).sum(), registers);
        }
    }

    // sha256: 2^20 messages of 64..=128 bytes (one or two blocks each, plus padding).
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let lengths: Vec<usize> = (0..1 << 20).map(|_| rng.random_range(64..=128)).collect();
    let msgs = Messages::random(&lengths, &mut rng);
    let count = msgs.count();
    let cfg = sha256_config(count);
    let mut host = gpu.pinned_buffer::<[u8; 32]>(count)?;
    let ms = sluice::scope(&gpu, |s| {
        let (data, offsets) = (s.upload(&msgs.data)?, s.upload(&msgs.offsets)?);
        let digests = s.alloc_buffer::<[u8; 32]>(count)?;
        s.lane()?.enter(|st| {
            let (data, offsets) = (st.await_fence(&data)?, st.await_fence(&offsets)?);
            let mut digests = st.bind(digests.as_columns_mut());
            let ms = time_launches(st, o, || {
                // SAFETY: as in `run_sha256`: one digest per message, offsets within data.
                unsafe { st.launch_unchecked(&kernels::sha256, cfg, (&data, &offsets, &mut digests)) }
            })?;
            st.copy_to_host(&digests, host.as_pinned_mut())?;
            Ok(ms)
        })
    })?;
    let wrong = (0..count).filter(|&i| host[i][..] != Sha256::digest(msgs.message(i))[..]).count();
    let registers = gpu.function(&kernels::sha256)?.registers();
    report("sha256", &format!("{count}x{}", msgs.data.len()), cfg, ms, wrong as f64, registers);
    if wrong != 0 {
        eprintln!("sluice-ports bench: sha256: {wrong} of {count} digests differ from the sha2 crate's");
        return Ok(false);
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The whole check on sluice's CPU backend: the kernel bodies, as the GPU runs them,
    /// against the references (what `sluice-ports check` does without a GPU).
    #[test]
    fn every_kernel_matches_its_reference_on_the_cpu_backend() {
        assert_eq!(kernels::check_signatures(), Ok(()));
        assert!(check_on(&Gpu::cpu(), 0x5eed).expect("the CPU backend runs every kernel"));
    }

    /// What `cargo sluice check --kernels kernels` checks, on the PTX this binary embeds:
    /// ptxas assembles every kernel, and no function spills registers to local memory.
    #[test]
    fn ptxas_accepts_every_kernel_without_spills() {
        use sluice_builder::toolchain::{find_ptxas, Locations};
        let ptxas = find_ptxas(&Locations::default()).unwrap_or_else(|e| panic!("this test needs ptxas: {e}"));
        let path = std::env::temp_dir().join(format!("sluice-ports-{}.{}.ptx", std::process::id(), kernels::ARCH));
        std::fs::write(&path, kernels::PTX).expect("a writable temp folder");
        let arch = kernels::ARCH.parse().expect("the embedded architecture");
        let report = sluice_builder::check_ptx(&ptxas, &path, arch).unwrap_or_else(|e| panic!("{e}"));
        let spills =
            sluice_builder::deny_spills(&path, arch, &report, "cargo sluice check --kernels kernels --allow-spills");
        std::fs::remove_file(&path).ok();
        spills.unwrap_or_else(|e| panic!("{e}"));
        for name in kernels::ENTRIES {
            assert!(report.iter().any(|f| f.name == *name), "ptxas did not report {name}");
        }
        // The two 32 x 32 f32 tiles of gemm_tiled.
        let tiled = report.iter().find(|f| f.name == "gemm_tiled").expect("gemm_tiled");
        assert_eq!(tiled.shared_bytes as usize, 2 * TILE * TILE * 4);
    }

    #[test]
    fn the_gemm_bound_catches_a_wrong_element() {
        let g = Gemm::new(3, 2, 4, || 0.5);
        let (c, bound) = g.reference();
        assert_eq!(c, vec![1.0; 6]);
        assert!(bound.iter().all(|&b| b > 0.0 && b < 1e-5));
    }

    #[test]
    fn arguments_parse() {
        let args = |s: &str| s.split_whitespace().map(String::from).collect::<Vec<_>>();
        let o = parse(&args("bench --reps 7 --seed 0x10")).expect("valid");
        assert!(o.mode == Mode::Bench && o.reps == 7 && o.seed == Some(16));
        assert!(parse(&[]).is_some_and(|o| o.mode == Mode::Check));
        assert!(parse(&args("check bench")).is_none());
        assert!(parse(&args("--reps 0")).is_none());
    }
}
