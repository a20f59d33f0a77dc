//! The PTX pipeline end to end on a real GPU: the PTX that `build.rs` embedded
//! (`sluice::kernels::PTX`) is loaded with the raw CUDA driver API and every
//! kernel in it is run and checked against an f64 CPU reference.
//!
//! This test deliberately talks to the driver through `cudarc::driver::result`
//! rather than sluice's host crate: it checks the *build pipeline* (Rust →
//! bitcode → PTX → driver JIT → correct results) independently of the host
//! library built on top of it.
//!
//! It needs an NVIDIA GPU, so it is `#[ignore]`d; run it with
//! `cargo test --test kernels_smoke -- --ignored` (or `bundle/run.sh`) on a GPU
//! machine. Without a GPU it fails: it never passes without checking.

use std::ffi::{c_void, CString};

use cudarc::driver::{result, sys};
use gpu_kernels::{reference, Particle};

/// A small deterministic-per-seed generator (fresh seed per run from the clock).
struct Rng(u64);

impl Rng {
    fn fresh() -> Rng {
        let t = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos() as u64;
        println!("seed {t}");
        Rng(t | 1)
    }
    fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    /// Uniform in [lo, hi).
    fn f32(&mut self, lo: f32, hi: f32) -> f32 {
        lo + (hi - lo) * ((self.next_u64() >> 40) as f32 / (1u64 << 24) as f32)
    }
}

struct Gpu {
    stream: sys::CUstream,
    module: sys::CUmodule,
}

impl Gpu {
    fn new() -> Gpu {
        // SAFETY: dynamic loading only probes for libcuda.
        assert!(unsafe { sys::is_culib_present() }, "no CUDA driver (libcuda) on this machine: this test needs a GPU");
        result::init().expect("cuInit");
        let dev = result::device::get(0).expect("no CUDA device 0");
        println!("device: {}", result::device::get_name(dev).unwrap());
        // SAFETY: `dev` is a valid device; the primary context is retained for the process's life.
        let ctx = unsafe { result::primary_ctx::retain(dev) }.expect("retain primary context");
        // SAFETY: `ctx` was just retained and is never released.
        unsafe { result::ctx::set_current(ctx) }.expect("set context");
        let ptx = CString::new(sluice::kernels::PTX).expect("PTX has no NUL byte");
        // SAFETY: `ptx` is a NUL-terminated PTX image that lives across the call.
        let module =
            unsafe { result::module::load_data(ptx.as_ptr() as *const c_void) }.expect("load the embedded PTX");
        let stream = result::stream::create(result::stream::StreamKind::NonBlocking).expect("stream");
        Gpu { stream, module }
    }

    fn function(&self, name: &str) -> sys::CUfunction {
        // SAFETY: the module is loaded and never unloaded in this test.
        unsafe { result::module::get_function(self.module, CString::new(name).unwrap()) }
            .unwrap_or_else(|e| panic!("kernel {name} not in the PTX: {e:?}"))
    }

    fn upload<T: bytemuck::Pod>(&self, host: &[T]) -> sys::CUdeviceptr {
        // SAFETY: a fresh allocation of exactly the bytes copied into it.
        unsafe {
            let d = result::malloc_sync(std::mem::size_of_val(host)).unwrap();
            result::memcpy_htod_sync(d, host).unwrap();
            d
        }
    }

    fn download<T: bytemuck::Pod>(&self, d: sys::CUdeviceptr, host: &mut [T]) {
        // SAFETY: `d` holds `host.len()` elements (allocated by `upload` from a slice that long);
        // the stream was synchronized by the caller, so no kernel is writing it.
        unsafe { result::memcpy_dtoh_sync(host, d) }.unwrap();
    }

    /// Launches `name` with 1-D `grid`×`block` and the given parameter values, then waits for it.
    fn launch(&self, name: &str, grid: u32, block: u32, params: &mut [*mut c_void]) {
        let f = self.function(name);
        // SAFETY: `params` point to values matching the kernel's PTX signature (see each call);
        // the buffers they name are live until `synchronize` below returns.
        unsafe {
            result::launch_kernel(f, (grid, 1, 1), (block, 1, 1), 0, self.stream, params).expect("launch");
            result::stream::synchronize(self.stream).expect("kernel execution");
        }
    }
}

fn arg<T>(v: &mut T) -> *mut c_void {
    v as *mut T as *mut c_void
}

fn max_rel_err(got: &[f32], want: &[f64]) -> f64 {
    assert_eq!(got.len(), want.len());
    got.iter()
        .zip(want)
        .map(|(&g, &w)| {
            assert!(g.is_finite(), "unwritten (NaN-poisoned) or non-finite output: {g}");
            (g as f64 - w).abs() / w.abs().max(1e-30)
        })
        .fold(0.0, f64::max)
}

#[test]
#[ignore = "needs an NVIDIA GPU: run with --ignored on a GPU machine"]
fn every_embedded_kernel_runs_and_matches_the_f64_reference() {
    let gpu = Gpu::new();
    let mut rng = Rng::fresh();
    let entries: Vec<&str> = sluice::kernels::ENTRIES.to_vec();
    println!("PTX built for {}: {entries:?}", sluice::kernels::ARCH);
    for k in ["fill_column", "saxpy", "potential"] {
        assert!(entries.contains(&k), "the embedded PTX has no entry {k}");
    }
    let mut checked = Vec::new();

    // fill_column(out: &mut [f32], value: f32), with a grid smaller than the data (grid-stride loop).
    {
        let n = 1_000_003usize;
        let value = rng.f32(-10.0, 10.0);
        let d = gpu.upload(&vec![f32::NAN; n]);
        let (mut p, mut len, mut v) = (d, n as u64, value);
        gpu.launch("fill_column", 120, 256, &mut [arg(&mut p), arg(&mut len), arg(&mut v)]);
        let mut out = vec![0f32; n];
        gpu.download(d, &mut out);
        assert!(out.iter().all(|&x| x == value), "fill_column wrote something other than {value}");
        checked.push(("fill_column", 0.0));
    }

    // saxpy(y: &mut [f32], x: &[f32], a: f32).
    {
        let n = 1 << 20;
        let x: Vec<f32> = (0..n).map(|_| rng.f32(-1.0, 1.0)).collect();
        let y0: Vec<f32> = (0..n).map(|_| rng.f32(-1.0, 1.0)).collect();
        let a = rng.f32(0.5, 2.0);
        let (dy, dx) = (gpu.upload(&y0), gpu.upload(&x));
        let (mut py, mut ny, mut px, mut nx, mut pa) = (dy, n as u64, dx, n as u64, a);
        gpu.launch(
            "saxpy",
            (n as u32).div_ceil(256),
            256,
            &mut [arg(&mut py), arg(&mut ny), arg(&mut px), arg(&mut nx), arg(&mut pa)],
        );
        let mut y = vec![0f32; n];
        gpu.download(dy, &mut y);
        let want: Vec<f64> = x.iter().zip(&y0).map(|(&x, &y)| a as f64 * x as f64 + y as f64).collect();
        let err = max_rel_err(&y, &want);
        // One f32 rounding of a product and a sum (or an FMA): a few ulps at most, relative to |y|,
        // except under cancellation: compare absolutely there.
        let abs = y.iter().zip(&want).map(|(&g, &w)| (g as f64 - w).abs()).fold(0.0, f64::max);
        assert!(abs < 1e-6 * 4.0, "saxpy max abs error {abs}");
        checked.push(("saxpy", err.min(abs)));
    }

    // potential(out: &mut [f32], targets: &[Particle], sources: &[Particle], eps2: f32).
    {
        let (rows, n_src) = (4096usize, 2048usize);
        let mut particle = |q: bool| Particle {
            x: rng.f32(-1.0, 1.0),
            y: rng.f32(-1.0, 1.0),
            z: rng.f32(-1.0, 1.0),
            q: if q { rng.f32(0.1, 1.0) } else { 0.0 },
        };
        let targets: Vec<Particle> = (0..rows).map(|_| particle(false)).collect();
        let sources: Vec<Particle> = (0..n_src).map(|_| particle(true)).collect();
        let eps2 = 1e-3f32;
        let (dout, dt, ds) = (gpu.upload(&vec![f32::NAN; rows]), gpu.upload(&targets), gpu.upload(&sources));
        let (mut po, mut no, mut pt, mut nt, mut ps, mut ns, mut e) =
            (dout, rows as u64, dt, rows as u64, ds, n_src as u64, eps2);
        gpu.launch(
            "potential",
            (rows as u32).div_ceil(128),
            128,
            &mut [arg(&mut po), arg(&mut no), arg(&mut pt), arg(&mut nt), arg(&mut ps), arg(&mut ns), arg(&mut e)],
        );
        let mut out = vec![0f32; rows];
        gpu.download(dout, &mut out);
        let want: Vec<f64> = targets.iter().map(|t| reference::potential_at(t, &sources, eps2)).collect();
        let err = max_rel_err(&out, &want);
        // 2048 positive terms summed in f32: relative error well under 1e-4.
        assert!(err < 1e-4, "potential max relative error {err}");
        checked.push(("potential", err));
    }

    println!("\n{:<14} {:>14}", "kernel", "max rel error");
    for (k, e) in &checked {
        println!("{k:<14} {e:>14.3e}");
    }
}
