//! Helpers shared by the GPU tests: the device, random inputs, the f64 reference.
#![allow(dead_code)]

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use sluice::{Gpu, Particle};

/// The device every GPU test runs on. Without a GPU this fails the test (with the reason):
/// a GPU test never passes without checking anything.
pub fn gpu() -> Gpu {
    match Gpu::new(0) {
        Ok(gpu) => gpu,
        Err(e) => panic!("this test needs an NVIDIA GPU (run it with --ignored on a GPU machine): {e}"),
    }
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

/// Random particles in the unit cube with positive charges (no cancellation in the sums,
/// so relative errors stay meaningful).
pub fn particles(rng: &mut StdRng, n: usize) -> Vec<Particle> {
    (0..n)
        .map(|_| Particle {
            x: rng.random_range(-1.0..1.0),
            y: rng.random_range(-1.0..1.0),
            z: rng.random_range(-1.0..1.0),
            q: rng.random_range(0.5..1.5),
        })
        .collect()
}

/// Checks every element of a column-major `rows` x `cols` result of the potential kernel,
/// column `j` computed for `targets[j * rows..(j + 1) * rows]`, against the f64 reference.
/// Returns the largest relative error; panics on a NaN (an element never written) or an
/// error over `tol`.
pub fn check_potential(out: &[f32], rows: usize, cols: usize, targets: &[Particle], sources: &[Particle], eps2: f32, tol: f64) -> f64 {
    assert_eq!(out.len(), rows * cols);
    let threads = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1).min(cols.max(1));
    let per = cols.div_ceil(threads);
    let worst = std::thread::scope(|sc| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                sc.spawn(move || {
                    let mut worst = 0.0f64;
                    for j in (t * per)..((t + 1) * per).min(cols) {
                        for i in 0..rows {
                            let got = out[j * rows + i];
                            assert!(!got.is_nan(), "element ({i}, {j}) was never written (still NaN)");
                            let want = gpu_kernels::reference::potential_at(&targets[j * rows + i], sources, eps2);
                            let rel = (got as f64 - want).abs() / want.abs().max(1e-30);
                            assert!(rel <= tol, "element ({i}, {j}): got {got}, want {want}, relative error {rel:e} > {tol:e}");
                            worst = worst.max(rel);
                        }
                    }
                    worst
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().expect("checker thread")).fold(0.0, f64::max)
    });
    worst
}
