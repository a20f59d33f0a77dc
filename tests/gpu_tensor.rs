//! The tensor-core kernels of `gpu-kernels` (`gemm.rs`) on both backends: the MMA probes
//! (one warp through `cp.async`, `ldmatrix`, `ldmatrix.trans`, `mma.sync` and the
//! accumulator store, bf16, f16 and tf32) and the gemms (and the bf16 design variant,
//! `gemm_bf16_128x256`) at several shapes, ragged edges included, each against an f64 reference of the inputs as the kernel rounds them, with
//! fresh random inputs and a NaN-poisoned output (every element must be written).
//!
//! The warp-specialised gemm fed by TMA (`gemm_ws.rs`) likewise, and the typed refusal of
//! views the TMA cannot read.
//!
//! `cargo test --test gpu_tensor` runs them on the CPU backend; `-- --ignored` on a GPU.

mod common;

use gpu_kernels::{
    GemmShape, GEMM_BF16, GEMM_BF16_128X256, GEMM_TF32, GEMM_WG, GEMM_WG_128X256, GEMM_WS, GEMM_WS_TF32,
    MMA_PROBE_SHARED,
};
use half::{bf16, f16};
use rand::Rng;
use sluice::{kernels, scope, Error, Gpu, LaunchConfig};

/// `x` as the tensor core multiplies it in tf32 (rounded to nearest, ties away).
fn tf32(x: f32) -> f64 {
    sluice_device::spec::mma::to_tf32(x) as f64
}

/// The worst `|c - ref| / Σ|a b|` over every element (an unwritten element is infinite).
fn worst_error(a: &[f64], b: &[f64], c: &[f32], m: usize, n: usize, k: usize) -> f64 {
    // Every element, in f64: B transposed so that both operands are read along rows, the
    // rows of C shared out over the host's cores (the largest shape is 17 G products).
    let mut bt = vec![0f64; n * k];
    for i in 0..k {
        for col in 0..n {
            bt[col * k + i] = b[i * n + col];
        }
    }
    let threads = std::thread::available_parallelism().map_or(1, |t| t.get()).min(m.max(1));
    let rows_per = m.div_ceil(threads.max(1));
    let bt = &bt;
    std::thread::scope(|sc| {
        let parts: Vec<_> = (0..threads)
            .map(|t| {
                sc.spawn(move || {
                    let mut worst = 0f64;
                    for row in (t * rows_per)..((t + 1) * rows_per).min(m) {
                        let ar = &a[row * k..(row + 1) * k];
                        for col in 0..n {
                            let bc = &bt[col * k..(col + 1) * k];
                            let (mut r, mut mag) = (0f64, 0f64);
                            for (x, y) in ar.iter().zip(bc) {
                                let p = x * y;
                                r += p;
                                mag += p.abs();
                            }
                            let e = (c[row * n + col] as f64 - r).abs() / mag.max(1e-30);
                            worst = worst.max(if e.is_finite() { e } else { f64::INFINITY });
                        }
                    }
                    worst
                })
            })
            .collect();
        parts.into_iter().map(|h| h.join().expect("reference thread")).fold(0f64, f64::max)
    })
}

/// Runs `$kernel` over `a` (`m × k`) and `b` (`k × n`) into a NaN-poisoned `c`.
macro_rules! run {
    ($gpu:expr, $kernel:expr, $cfg:expr, $a:expr, $b:expr, $len:expr, ($($extra:expr),*)) => {{
        let poison = vec![f32::NAN; $len];
        let f = $gpu.function(&$kernel).expect("kernel");
        scope(&$gpu, |s| {
            let (a, b) = (s.upload(&$a)?, s.upload(&$b)?);
            let c = s.alloc_buffer::<f32>($len)?;
            let host = s.pinned_buffer::<f32>($len)?;
            let copy = s.lane()?.enter(|st| {
                let (a, b) = (st.await_fence(&a)?, st.await_fence(&b)?);
                let mut c = st.bind(c.as_columns_mut());
                st.copy_to_device(&poison, &mut c)?;
                st.launch(&f, $cfg, (&mut c, &a, &b $(, $extra)*))?;
                st.copy_to_host(&c, host.as_pinned_mut())
            })?;
            Ok(copy.wait()?.to_vec())
        })
        .expect("run")
    }};
}

fn mma_probes_match_the_f64_product(gpu: Gpu) {
    let mut rng = common::rng();
    let cfg = LaunchConfig { grid: (1, 1, 1), block: (32, 1, 1), shared_mem_bytes: MMA_PROBE_SHARED as u32 };
    let a: Vec<f32> = (0..256).map(|_| rng.random_range(-1.0..1.0)).collect();
    let b: Vec<f32> = (0..128).map(|_| rng.random_range(-1.0..1.0)).collect();
    let (ab, bb): (Vec<bf16>, Vec<bf16>) =
        (a.iter().map(|&x| bf16::from_f32(x)).collect(), b.iter().map(|&x| bf16::from_f32(x)).collect());
    let c = run!(gpu, kernels::mma_probe_bf16, cfg, ab, bb, 128, ());
    let e = worst_error(
        &ab.iter().map(|x| x.to_f64()).collect::<Vec<_>>(),
        &bb.iter().map(|x| x.to_f64()).collect::<Vec<_>>(),
        &c,
        16,
        8,
        16,
    );
    assert!(e < 1e-6, "bf16 probe: worst error {e:e}");
    let (ah, bh): (Vec<f16>, Vec<f16>) =
        (a.iter().map(|&x| f16::from_f32(x)).collect(), b.iter().map(|&x| f16::from_f32(x)).collect());
    let c = run!(gpu, kernels::mma_probe_f16, cfg, ah, bh, 128, ());
    let e = worst_error(
        &ah.iter().map(|x| x.to_f64()).collect::<Vec<_>>(),
        &bh.iter().map(|x| x.to_f64()).collect::<Vec<_>>(),
        &c,
        16,
        8,
        16,
    );
    assert!(e < 1e-6, "f16 probe: worst error {e:e}");
    let (at, bt) = (a[..128].to_vec(), b[..64].to_vec());
    let c = run!(gpu, kernels::mma_probe_tf32, cfg, at, bt, 128, ());
    let e = worst_error(
        &at.iter().map(|&x| tf32(x)).collect::<Vec<_>>(),
        &bt.iter().map(|&x| tf32(x)).collect::<Vec<_>>(),
        &c,
        16,
        8,
        8,
    );
    assert!(e < 1e-6, "tf32 probe: worst error {e:e}");
}

/// The shapes: on the CPU backend small ones (every MMA is a warp collective there), on a
/// GPU larger ones; both with ragged edges in every dimension and a source that is not
/// 16-byte aligned (k or n odd: the element-by-element copy path).
fn shapes(gpu: &Gpu) -> Vec<(usize, usize, usize)> {
    if gpu.backend() == sluice::Backend::Cpu {
        vec![(128, 256, 64), (96, 200, 72), (33, 17, 9)]
    } else {
        vec![(128, 256, 64), (1024, 1024, 1024), (1000, 1000, 1000), (777, 1301, 515), (4095, 4097, 1029), (64, 48, 33)]
    }
}

fn gemms_match_the_f64_product_at_every_shape(gpu: Gpu) {
    let mut rng = common::rng();
    for (m, n, k) in shapes(&gpu) {
        let cfg = |g: GemmShape| LaunchConfig {
            grid: (g.grid(m, n), 1, 1),
            block: (g.threads, 1, 1),
            shared_mem_bytes: g.shared_bytes() as u32,
        };
        let a: Vec<f32> = (0..m * k).map(|_| rng.random_range(-1.0..1.0)).collect();
        let b: Vec<f32> = (0..k * n).map(|_| rng.random_range(-1.0..1.0)).collect();
        let (ab, bb): (Vec<bf16>, Vec<bf16>) =
            (a.iter().map(|&x| bf16::from_f32(x)).collect(), b.iter().map(|&x| bf16::from_f32(x)).collect());
        let c = run!(gpu, kernels::gemm_bf16, cfg(GEMM_BF16), ab, bb, m * n, (m as u32, n as u32, k as u32));
        let e = worst_error(
            &ab.iter().map(|x| x.to_f64()).collect::<Vec<_>>(),
            &bb.iter().map(|x| x.to_f64()).collect::<Vec<_>>(),
            &c,
            m,
            n,
            k,
        );
        assert!(e < 1e-5, "bf16 {m}x{n}x{k}: worst error {e:e}");
        // The design variant: the same inputs, the same result (the same k order per
        // element, so the same rounding up to the MMA's own).
        let c = run!(
            gpu,
            kernels::gemm_bf16_128x256,
            cfg(GEMM_BF16_128X256),
            ab,
            bb,
            m * n,
            (m as u32, n as u32, k as u32)
        );
        let e = worst_error(
            &ab.iter().map(|x| x.to_f64()).collect::<Vec<_>>(),
            &bb.iter().map(|x| x.to_f64()).collect::<Vec<_>>(),
            &c,
            m,
            n,
            k,
        );
        assert!(e < 1e-5, "bf16 128x256 {m}x{n}x{k}: worst error {e:e}");
        let (ah, bh): (Vec<f16>, Vec<f16>) =
            (a.iter().map(|&x| f16::from_f32(x)).collect(), b.iter().map(|&x| f16::from_f32(x)).collect());
        let c = run!(gpu, kernels::gemm_f16, cfg(GEMM_BF16), ah, bh, m * n, (m as u32, n as u32, k as u32));
        let e = worst_error(
            &ah.iter().map(|x| x.to_f64()).collect::<Vec<_>>(),
            &bh.iter().map(|x| x.to_f64()).collect::<Vec<_>>(),
            &c,
            m,
            n,
            k,
        );
        assert!(e < 1e-5, "f16 {m}x{n}x{k}: worst error {e:e}");
        let c = run!(gpu, kernels::gemm_tf32, cfg(GEMM_TF32), a, b, m * n, (m as u32, n as u32, k as u32));
        let e = worst_error(
            &a.iter().map(|&x| tf32(x)).collect::<Vec<_>>(),
            &b.iter().map(|&x| tf32(x)).collect::<Vec<_>>(),
            &c,
            m,
            n,
            k,
        );
        assert!(e < 1e-5, "tf32 {m}x{n}x{k}: worst error {e:e}");
    }
}

/// The warpgroup MMA gemms (sm_90a: Hopper's `wgmma`; the CPU backend models it), bf16 and
/// f16, both tile shapes.
fn warpgroup_gemms_match_the_f64_product_at_every_shape(gpu: Gpu) {
    let mut rng = common::rng();
    for (m, n, k) in shapes(&gpu) {
        let cfg = |g: GemmShape| LaunchConfig {
            grid: (g.grid(m, n), 1, 1),
            block: (g.threads, 1, 1),
            shared_mem_bytes: g.shared_bytes() as u32,
        };
        let a: Vec<f32> = (0..m * k).map(|_| rng.random_range(-1.0..1.0)).collect();
        let b: Vec<f32> = (0..k * n).map(|_| rng.random_range(-1.0..1.0)).collect();
        let (ab, bb): (Vec<bf16>, Vec<bf16>) =
            (a.iter().map(|&x| bf16::from_f32(x)).collect(), b.iter().map(|&x| bf16::from_f32(x)).collect());
        let (a64, b64): (Vec<f64>, Vec<f64>) =
            (ab.iter().map(|x| x.to_f64()).collect(), bb.iter().map(|x| x.to_f64()).collect());
        let dims = (m as u32, n as u32, k as u32);
        let c = run!(gpu, kernels::gemm_wg_bf16, cfg(GEMM_WG), ab, bb, m * n, (dims.0, dims.1, dims.2));
        let e = worst_error(&a64, &b64, &c, m, n, k);
        assert!(e < 1e-5, "wgmma bf16 {m}x{n}x{k}: worst error {e:e}");
        let c = run!(gpu, kernels::gemm_wg_bf16_128x256, cfg(GEMM_WG_128X256), ab, bb, m * n, (dims.0, dims.1, dims.2));
        let e = worst_error(&a64, &b64, &c, m, n, k);
        assert!(e < 1e-5, "wgmma bf16 128x256 {m}x{n}x{k}: worst error {e:e}");
        let (ah, bh): (Vec<f16>, Vec<f16>) =
            (a.iter().map(|&x| f16::from_f32(x)).collect(), b.iter().map(|&x| f16::from_f32(x)).collect());
        let c = run!(gpu, kernels::gemm_wg_f16, cfg(GEMM_WG), ah, bh, m * n, (dims.0, dims.1, dims.2));
        let (ah64, bh64): (Vec<f64>, Vec<f64>) =
            (ah.iter().map(|x| x.to_f64()).collect(), bh.iter().map(|x| x.to_f64()).collect());
        let e = worst_error(&ah64, &bh64, &c, m, n, k);
        assert!(e < 1e-5, "wgmma f16 {m}x{n}x{k}: worst error {e:e}");
        let c = run!(gpu, kernels::gemm_wg_f16_128x256, cfg(GEMM_WG_128X256), ah, bh, m * n, (dims.0, dims.1, dims.2));
        let e = worst_error(&ah64, &bh64, &c, m, n, k);
        assert!(e < 1e-5, "wgmma f16 128x256 {m}x{n}x{k}: worst error {e:e}");
    }
}

/// Runs the warp-specialised TMA gemm `$kernel` (shape `$g`) over `a` (`m × k`) and `b`,
/// passed as `row_major` views (`b` as `$b_rows × $b_cols`: `k × n`, or `n × k` for the tf32
/// kernel, which takes B transposed), into a NaN-poisoned `c`.
macro_rules! run_ws {
    ($gpu:expr, $kernel:expr, $a:expr, $b:expr, ($m:expr, $n:expr, $k:expr)) => {{
        let (k, n): (usize, usize) = ($k, $n);
        run_ws!($gpu, $kernel, GEMM_WS, $a, $b, ($m, n, k), (k, n))
    }};
    ($gpu:expr, $kernel:expr, $g:expr, $a:expr, $b:expr, ($m:expr, $n:expr, $k:expr), ($b_rows:expr, $b_cols:expr)) => {{
        let (m, n, k, g): (usize, usize, usize, GemmShape) = ($m, $n, $k, $g);
        let cfg = LaunchConfig {
            grid: (g.grid(m, n), 1, 1),
            block: (g.threads, 1, 1),
            shared_mem_bytes: g.ws_shared_bytes() as u32,
        };
        let poison = vec![f32::NAN; m * n];
        let f = $gpu.function(&$kernel).expect("kernel");
        scope(&$gpu, |s| {
            let (a, b) = (s.upload(&$a)?, s.upload(&$b)?);
            let c = s.alloc_buffer::<f32>(m * n)?;
            let host = s.pinned_buffer::<f32>(m * n)?;
            let copy = s.lane()?.enter(|st| {
                let (a, b) = (st.await_fence(&a)?.row_major(m, k)?, st.await_fence(&b)?.row_major($b_rows, $b_cols)?);
                let mut c = st.bind(c.as_columns_mut());
                st.copy_to_device(&poison, &mut c)?;
                st.launch(&f, cfg, (&mut c, &a, &b, m as u32, n as u32, k as u32))?;
                st.copy_to_host(&c, host.as_pinned_mut())
            })?;
            Ok(copy.wait()?.to_vec())
        })
        .expect("run")
    }};
}

/// The warp-specialised TMA gemms (sm_90a: TMA, `mbarrier`, `setmaxnreg`, `wgmma`; the CPU
/// backend models the barriers and the copies), bf16 and f16, at shapes whose rows the TMA
/// can read (`k`, `n` multiples of 8), ragged against the 128 × 256 × 64 tiles.
fn warp_specialised_tma_gemms_match_the_f64_product(gpu: Gpu) {
    let mut rng = common::rng();
    let shapes: Vec<(usize, usize, usize)> = if gpu.backend() == sluice::Backend::Cpu {
        vec![(128, 256, 64), (200, 264, 72), (40, 8, 8)]
    } else {
        vec![(128, 256, 64), (1024, 1024, 1024), (1000, 1000, 1000), (777, 1304, 520), (4095, 4096, 1032), (64, 48, 8)]
    };
    for (m, n, k) in shapes {
        let a: Vec<f32> = (0..m * k).map(|_| rng.random_range(-1.0..1.0)).collect();
        let b: Vec<f32> = (0..k * n).map(|_| rng.random_range(-1.0..1.0)).collect();
        let (ab, bb): (Vec<bf16>, Vec<bf16>) =
            (a.iter().map(|&x| bf16::from_f32(x)).collect(), b.iter().map(|&x| bf16::from_f32(x)).collect());
        let (a64, b64): (Vec<f64>, Vec<f64>) =
            (ab.iter().map(|x| x.to_f64()).collect(), bb.iter().map(|x| x.to_f64()).collect());
        let c = run_ws!(gpu, kernels::gemm_ws_bf16, ab, bb, (m, n, k));
        let e = worst_error(&a64, &b64, &c, m, n, k);
        assert!(e < 1e-5, "TMA gemm bf16 {m}x{n}x{k}: worst error {e:e}");
        let (ah, bh): (Vec<f16>, Vec<f16>) =
            (a.iter().map(|&x| f16::from_f32(x)).collect(), b.iter().map(|&x| f16::from_f32(x)).collect());
        let (ah64, bh64): (Vec<f64>, Vec<f64>) =
            (ah.iter().map(|x| x.to_f64()).collect(), bh.iter().map(|x| x.to_f64()).collect());
        let c = run_ws!(gpu, kernels::gemm_ws_f16, ah, bh, (m, n, k));
        let e = worst_error(&ah64, &bh64, &c, m, n, k);
        assert!(e < 1e-5, "TMA gemm f16 {m}x{n}x{k}: worst error {e:e}");
    }
}

/// The tf32 form of the TMA gemm (`gemm_ws_tf32`: B passed transposed, the operands read as
/// tf32 — the low 13 mantissa bits dropped — as the reference rounds them).
fn warp_specialised_tf32_gemm_matches_the_f64_product(gpu: Gpu) {
    let mut rng = common::rng();
    let shapes: Vec<(usize, usize, usize)> = if gpu.backend() == sluice::Backend::Cpu {
        vec![(128, 256, 32), (200, 264, 72)]
    } else {
        vec![(128, 256, 32), (1024, 1024, 1024), (1000, 1000, 1000), (777, 1301, 516)]
    };
    let trunc = |x: f32| f32::from_bits(x.to_bits() & 0xffff_e000) as f64;
    for (m, n, k) in shapes {
        let a: Vec<f32> = (0..m * k).map(|_| rng.random_range(-1.0..1.0)).collect();
        let b: Vec<f32> = (0..k * n).map(|_| rng.random_range(-1.0..1.0)).collect();
        let bt: Vec<f32> = (0..n * k).map(|i| b[(i % k) * n + i / k]).collect();
        let c = run_ws!(gpu, kernels::gemm_ws_tf32, GEMM_WS_TF32, a, bt, (m, n, k), (n, k));
        let (a64, b64): (Vec<f64>, Vec<f64>) =
            (a.iter().map(|&x| trunc(x)).collect(), b.iter().map(|&x| trunc(x)).collect());
        let e = worst_error(&a64, &b64, &c, m, n, k);
        assert!(e < 1e-5, "TMA gemm tf32 {m}x{n}x{k}: worst error {e:e}");
    }
}

/// A view the TMA cannot read is a typed error before anything is launched: rows whose bytes
/// are not a multiple of 16, a view too short, a start not 16-byte aligned, an empty shape.
fn views_the_tma_cannot_read_are_refused(gpu: Gpu) {
    let data = vec![bf16::from_f32(1.0); 64 * 72 + 8];
    scope(&gpu, |s| {
        let a = s.upload(&data)?;
        s.lane()?.enter(|st| {
            let a = st.await_fence(&a)?;
            let why = |r: sluice::Result<sluice::RowMajor<'_, '_, bf16>>| match r {
                Err(Error::TensorMap { reason }) => reason,
                Err(e) => panic!("another error: {e}"),
                Ok(_) => panic!("accepted"),
            };
            assert!(why(a.row_major(64, 71)).contains("multiple of 16"));
            assert!(why(a.row_major(65, 72)).contains("do not fit"));
            assert!(why(a.row_major(0, 72)).contains("empty"));
            let shifted = a.slice_rows(1..).expect("one column");
            assert!(why(shifted.row_major(8, 8)).contains("16-byte aligned"));
            let ok = a.row_major(64, 72)?;
            assert_eq!((ok.rows(), ok.cols()), (64, 72));
            Ok::<_, Error>(())
        })
    })
    .expect("scope");
}

/// The checking mode of the CPU backend finds no race in the TMA gemm: the `full`
/// barriers order the producer's copies before the consumers' reads, the `empty` ones those
/// reads before the copies that refill the stage (five k-tiles through four stages).
#[test]
fn the_tma_gemm_passes_the_race_checker() {
    let gpu = Gpu::cpu_checked();
    let mut rng = common::rng();
    let (m, n, k) = (128, 256, 320);
    let a: Vec<bf16> = (0..m * k).map(|_| bf16::from_f32(rng.random_range(-1.0..1.0))).collect();
    let b: Vec<bf16> = (0..k * n).map(|_| bf16::from_f32(rng.random_range(-1.0..1.0))).collect();
    let c = run_ws!(gpu, kernels::gemm_ws_bf16, a, b, (m, n, k));
    let (a64, b64): (Vec<f64>, Vec<f64>) =
        (a.iter().map(|x| x.to_f64()).collect(), b.iter().map(|x| x.to_f64()).collect());
    let e = worst_error(&a64, &b64, &c, m, n, k);
    assert!(e < 1e-5, "checked TMA gemm: worst error {e:e}");
}

/// A launch with more threads per block than the kernel's `#[kernel(max_threads = 384)]`
/// is refused before anything runs, on the CPU backend as on a GPU.
fn a_launch_past_the_kernels_launch_bounds_is_refused(gpu: Gpu) {
    let e = launch_ws_with_threads(&gpu, 512).expect_err("512 threads past the kernel's 384");
    assert!(matches!(e, Error::KernelLimit { what: "threads per block", requested: 512, limit: 384, .. }), "{e}");
    assert!(e.to_string().contains("kernel `gemm_ws_bf16`"), "{e}");
}

/// One 128 × 128 × 64 `gemm_ws_bf16` launch with blocks of `threads` threads.
fn launch_ws_with_threads(gpu: &Gpu, threads: u32) -> sluice::Result<()> {
    let cfg =
        LaunchConfig { grid: (1, 1, 1), block: (threads, 1, 1), shared_mem_bytes: GEMM_WS.ws_shared_bytes() as u32 };
    let f = gpu.function(&kernels::gemm_ws_bf16).expect("kernel");
    let data = vec![bf16::from_f32(0.5); 128 * 64];
    scope(gpu, |s| {
        let (a, b) = (s.upload(&data)?, s.upload(&data)?);
        let c = s.alloc_buffer::<f32>(128 * 64)?;
        s.lane()?.enter(|st| {
            let (a, b) = (st.await_fence(&a)?.row_major(128, 64)?, st.await_fence(&b)?.row_major(64, 128)?);
            let mut c = st.bind(c.as_columns_mut());
            st.launch(&f, cfg, (&mut c, &a, &b, 128u32, 64u32, 64u32))
        })
    })
}

/// A kernel that sets register budgets (`WsPipeline::run`) runs with exactly its
/// `max_threads`: a smaller block would give `setmaxnreg` another register pool than ptxas
/// sized, in which a consumer's increase could wait for ever. Refused before anything runs.
fn a_kernel_with_register_budgets_runs_with_exactly_its_block(gpu: Gpu) {
    let e = launch_ws_with_threads(&gpu, 256).expect_err("256 threads for a kernel of exactly 384");
    assert!(matches!(e, Error::LaunchBlockFixed { requested: 256, required: 384, .. }), "{e}");
}

on_every_backend!(
    mma_probes_match_the_f64_product,
    gemms_match_the_f64_product_at_every_shape,
    warpgroup_gemms_match_the_f64_product_at_every_shape,
    warp_specialised_tma_gemms_match_the_f64_product,
    warp_specialised_tf32_gemm_matches_the_f64_product,
    views_the_tma_cannot_read_are_refused,
    a_launch_past_the_kernels_launch_bounds_is_refused,
    a_kernel_with_register_budgets_runs_with_exactly_its_block
);
