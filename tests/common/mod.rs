//! Helpers shared by the GPU tests: the device, random inputs, the f64 reference.
#![allow(dead_code)]

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use sluice::{Gpu, Particle};

/// CUDA device 0. Without a GPU this fails the test (with the reason): a GPU test never
/// passes without checking anything, so every CUDA test is `#[ignore]`d and run with
/// `--ignored` on a GPU machine.
pub fn gpu() -> Gpu {
    match Gpu::cuda(0) {
        Ok(gpu) => gpu,
        Err(e) => panic!("this test needs an NVIDIA GPU (run it with --ignored on a GPU machine): {e}"),
    }
}

/// The CPU backend: the same kernels, compiled for the host and run by
/// `sluice_device::cpu`, behind the same streams, fences and scopes.
pub fn cpu() -> Gpu {
    Gpu::cpu()
}

/// Runs each named test, a `fn(Gpu)`, on both backends: `on_cpu::<name>` always (so CI,
/// without a GPU, checks every rule and every kernel through the CPU backend), and
/// `on_cuda::<name>` on CUDA device 0, ignored unless run with `--ignored` (a GPU machine).
/// The names after `cuda_only:` test what only a GPU has (the driver's memory pool, a
/// full device, timing between streams) and run on CUDA alone.
#[macro_export]
macro_rules! on_every_backend {
    ($($name:ident),* $(,)? $(; cuda_only: $($cuda:ident),* $(,)?)?) => {
        mod on_cpu {
            $(#[test]
            fn $name() {
                super::$name($crate::common::cpu())
            })*
        }
        mod on_cuda {
            $(#[test]
            #[ignore = "needs an NVIDIA GPU: run with --ignored on a GPU machine"]
            fn $name() {
                super::$name($crate::common::gpu())
            })*
            $($(#[test]
            #[ignore = "needs an NVIDIA GPU: run with --ignored on a GPU machine"]
            fn $cuda() {
                super::$cuda($crate::common::gpu())
            })*)?
        }
    };
}

/// Free device memory as the driver sees it, after handing the memory that sluice freed
/// (and its pool keeps for reuse) back to the driver: without the trim, freed memory still
/// counts as used and a leak check would compare the pool's size, not what is in use.
pub fn free_device_memory(gpu: &Gpu) -> usize {
    gpu.trim_memory_pool().expect("trim the memory pool");
    gpu.mem_info().expect("mem info").free
}

/// A fresh generator; the seed is printed so a failure can be replayed.
pub fn rng() -> StdRng {
    let seed: u64 = std::env::var("SLUICE_TEST_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or_else(rand::random);
    println!("seed {seed} (replay with SLUICE_TEST_SEED={seed})");
    StdRng::seed_from_u64(seed)
}

/// Random particles in the cube `[-1, 1)^3` with positive charges, from the generator
/// every test and benchmark shares (`gpu_kernels::reference::Rng`), freshly seeded by `rng`.
pub fn particles(rng: &mut StdRng, n: usize) -> Vec<Particle> {
    gpu_kernels::reference::Rng::new(rng.random()).particles(n)
}

/// Checks every element of a column-major `rows` x `cols` result of the potential kernel
/// against the f64 reference (`gpu_kernels::reference::check_potential`). Returns the
/// largest relative error; panics with the element on a NaN (never written) or an error
/// over `tol`.
pub fn check_potential(
    out: &[f32],
    rows: usize,
    cols: usize,
    targets: &[Particle],
    sources: &[Particle],
    eps2: f32,
    tol: f64,
) -> f64 {
    gpu_kernels::reference::check_potential(out, rows, cols, targets, sources, eps2, tol)
        .unwrap_or_else(|e| panic!("{e}"))
}
