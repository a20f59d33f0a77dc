//! Shared by `seed_multi` and `bench_multi` (not an example itself): the seed workload split
//! over several devices with `scope_multi`.
//!
//! Column `j` of the `rows x cols` result belongs to device `j % k` (round-robin). Each
//! device holds its own columns' targets and the sources (uploaded once, outside any scope),
//! and computes each of its columns on its own lane, which also copies the column back to
//! the pinned host matrix — as soon as its kernel is done, with no device-wide wait — and
//! sums it (`sum_reduce`) into the device's `1 x cols` vector of column sums (zero where
//! another device owns the column). An all-reduce (NCCL's on GPUs) then gives every device
//! every column's sum, which each device copies back.

// Each program uses a different part of it.
#![allow(dead_code)]

use std::time::Instant;

use rayon::prelude::*;
use sluice::{
    kernels, scope_multi, traced_scope_multi, Communicator, DeviceMatrix, Gpu, Kernel, KernelDecl, LaunchConfig,
    MultiScope, Particle, PinnedMatrix, PinnedMut, ReduceOp, Result, Trace,
};

/// The potential kernels' signature (`potential`, `potential_tiled_rsqrt`).
pub type PotentialSig = <kernels::potential as KernelDecl>::Signature;

/// The softening of every run.
pub const EPS2: f32 = 1e-3;
/// Threads per block of the potential kernels.
pub const BLOCK: u32 = 256;

/// The columns device `d` of `k` owns.
pub fn owned(d: usize, k: usize, cols: usize) -> Vec<usize> {
    (d..cols).step_by(k).collect()
}

/// The sources of a run.
pub fn sources(seed: u64, n: usize) -> Vec<Particle> {
    gpu_kernels::reference::Rng::new(seed).particles(n)
}

/// Column `j`'s targets, from a generator of their own: the data do not depend on how many
/// devices share the work.
pub fn targets(seed: u64, j: usize, rows: usize) -> Vec<Particle> {
    let s = seed ^ 0x9e37_79b9_7f4a_7c15u64.wrapping_mul(j as u64 + 1);
    gpu_kernels::reference::Rng::new(s).particles(rows)
}

/// One device's part, on the device before anything runs: its columns' targets and the
/// sources (persistent, read in every scope), and its columns of the result.
pub struct OnGpu {
    pub cols: Vec<usize>,
    pub src: DeviceMatrix<Particle>,
    pub tgt: DeviceMatrix<Particle>,
    pub out: DeviceMatrix<f32>,
}

/// Uploads every device's inputs (its columns' targets, generated in parallel, and the
/// sources) and allocates its outputs.
pub fn prepare(gpus: &[Gpu], rows: usize, cols: usize, sources: &[Particle], seed: u64) -> Result<Vec<OnGpu>> {
    let k = gpus.len();
    gpus.iter()
        .enumerate()
        .map(|(d, gpu)| {
            let mine = owned(d, k, cols);
            let tgt: Vec<Particle> = mine.par_iter().flat_map_iter(|&j| targets(seed, j, rows)).collect();
            Ok(OnGpu {
                src: gpu.upload(sources)?,
                tgt: gpu.upload_matrix(&tgt, rows, mine.len())?,
                out: gpu.alloc_matrix::<f32>(rows, mine.len())?,
                cols: mine,
            })
        })
        .collect()
}

/// One run of the split workload: `host` gets every column, `sums[d]` the all-reduced column
/// sums as device `d` holds them. Returns one trace per device when `traced`.
pub fn run(
    gpus: &[Gpu],
    comm: &Communicator,
    kernel: &Kernel<PotentialSig>,
    on: &mut [OnGpu],
    host: &mut PinnedMatrix<f32>,
    sums: &mut [PinnedMatrix<f32>],
    traced: bool,
) -> Result<Vec<Trace>> {
    let (rows, cols) = (host.rows(), host.cols());
    let mut on: Vec<Option<&mut OnGpu>> = on.iter_mut().map(Some).collect();
    let mut dsts: Vec<Option<PinnedMut<'_, f32>>> = host.columns_mut().map(Some).collect();
    let mut sum_dsts: Vec<Option<PinnedMut<'_, f32>>> = sums.iter_mut().map(|s| Some(s.as_pinned_mut())).collect();
    if traced {
        traced_scope_multi(gpus, |s| body(s, comm, kernel, &mut on, &mut dsts, &mut sum_dsts, rows, cols))
            .map(|((), traces)| traces)
    } else {
        scope_multi(gpus, |s| body(s, comm, kernel, &mut on, &mut dsts, &mut sum_dsts, rows, cols)).map(|()| Vec::new())
    }
}

#[allow(clippy::too_many_arguments)]
fn body<'s, 'e, 'a: 's>(
    s: &'s MultiScope<'s, 'e>,
    comm: &'s Communicator,
    kernel: &Kernel<PotentialSig>,
    on: &mut [Option<&'a mut OnGpu>],
    dsts: &mut [Option<PinnedMut<'a, f32>>],
    sum_dsts: &mut [Option<PinnedMut<'a, f32>>],
    rows: usize,
    cols: usize,
) -> Result<()> {
    let cfg = LaunchConfig::for_elements(rows, BLOCK);
    let ranks = s.each_device(|d| {
        let g = on[d.index()].take().expect("each device once");
        // Persistent inputs and outputs, made outside the scope: branded after a check.
        let src = d.adopt(g.src.as_columns())?;
        let tgt = d.adopt(&g.tgt)?;
        let out = d.adopt(&mut g.out)?;
        // `sum_reduce` wants at most 8 blocks per SM (one atomic per block).
        let blocks = rows.div_ceil(1024).clamp(1, 8 * d.gpu().info().sm_count.max(1) as usize);
        let sum_cfg = LaunchConfig::for_elements(blocks * 256, 256);
        let partial = d.alloc_matrix::<f32>(1, cols)?;
        let mut parts: Vec<Option<_>> = partial.columns_mut().map(Some).collect();
        let mut handed = Vec::with_capacity(cols);
        for (c, ((lane, col), &j)) in d.lanes(g.cols.len())?.into_iter().zip(out.columns_mut()).zip(&g.cols).enumerate()
        {
            let part = parts[j].take().expect("each column once");
            let dst = dsts[j].take().expect("each column once");
            let t = tgt.column(c).expect("a target column per column");
            handed.push(lane.enter(|st| {
                let (x, t) = (st.bind_ref(src), st.bind_ref(t));
                let mut v = st.bind(col);
                st.launch(kernel, cfg, (&mut v, &t, &x, EPS2))?;
                st.copy_to_host(&v, dst)?; // on its own lane, as soon as the kernel is done
                let mut p = st.bind(part);
                st.zero(&mut p)?;
                st.launch(&kernels::sum_reduce, sum_cfg, (&mut p, &v))?;
                st.fence(p)
            })?);
        }
        // The other devices' columns: zero here.
        let rest = d.lane()?;
        for part in parts.into_iter().flatten() {
            handed.push(rest.enter(|st| {
                let mut p = st.bind(part);
                st.zero(&mut p)?;
                st.fence(p)
            })?);
        }
        // Fan-in of the sums on one lane: this device's rank of the all-reduce.
        d.lane()?.enter(|st| st.rank_in_place(st.await_all(handed)?))
    })?;
    let reduced = s.all_reduce(comm, ReduceOp::Sum, ranks)?;
    for (i, r) in reduced.into_iter().enumerate() {
        let dst = sum_dsts[i].take().expect("each device once");
        s.device(i, |d| d.lane()?.enter(|st| st.copy_to_host(&st.await_fence(d.adopt(r)?)?, dst).map(drop)))?;
    }
    Ok(())
}

/// The column sums of the host result, in f64, with the sum of absolute values (for the
/// tolerance of an f32 sum in any order).
pub fn host_sums(host: &PinnedMatrix<f32>) -> Vec<(f64, f64)> {
    (0..host.cols()).into_par_iter().map(|j| gpu_kernels::reference::sum(host.column(j).unwrap())).collect()
}

/// Checks every device's all-reduced sums against `want` (f64 sum, sum of |x|): within
/// `n_terms * f32::EPSILON * abs` (any f32 summation order) plus `rel * abs`. Returns the
/// worst relative error, or what is wrong.
pub fn check_sums(
    sums: &[PinnedMatrix<f32>],
    want: &[(f64, f64)],
    rows: usize,
    rel: f64,
) -> std::result::Result<f64, String> {
    let mut worst = 0.0f64;
    for (d, got) in sums.iter().enumerate() {
        for (j, (&g, &(w, abs))) in got.iter().zip(want).enumerate() {
            if g.is_nan() {
                return Err(format!("device {d}, column {j}: the sum was never written"));
            }
            let tol = (rows as f64 * f32::EPSILON as f64 + rel) * abs;
            let err = (g as f64 - w).abs();
            if err > tol {
                return Err(format!("device {d}, column {j}: sum {g}, want {w} (error {err:e} > {tol:e})"));
            }
            worst = worst.max(err / abs.max(1e-30));
        }
    }
    Ok(worst)
}

/// Milliseconds since `t`.
pub fn ms_since(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}

/// What the devices are, in one line.
pub fn describe(gpus: &[Gpu]) -> String {
    let names: Vec<String> = gpus
        .iter()
        .map(|g| match g.backend() {
            sluice::Backend::Cuda => format!("GPU {} {}", g.info().ordinal, g.info().name),
            sluice::Backend::Cpu => g.info().name.clone(),
        })
        .collect();
    names.join(", ")
}

/// The devices a multi-GPU program runs on: every CUDA device (at most `want`), or, with no
/// GPU, `cpu_devices` CPU backend devices. Says which on stderr-free stdout.
pub fn devices(want: Option<usize>, cpu_devices: usize) -> Result<Vec<Gpu>> {
    let count = Gpu::count().unwrap_or(0);
    if count == 0 || std::env::var("SLUICE_BACKEND").is_ok_and(|b| b == "cpu") {
        return Ok((0..want.unwrap_or(cpu_devices).max(1)).map(|_| Gpu::cpu()).collect());
    }
    let n = want.unwrap_or(count).clamp(1, count);
    (0..n).map(Gpu::cuda).collect()
}
