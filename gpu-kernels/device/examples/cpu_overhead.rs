//! What the CPU runtime costs: kernels run through `sluice_device::cpu::launch`
//! against plain rayon loops over the same computation.
//!
//! ```text
//! cargo run --release -p sluice-device --example cpu_overhead -- [ROWS] [COLUMNS] [SOURCES] [REPS]
//! ```
//!
//! Defaults: the seed workload's column, 262,144 rows × 512 sources, 1 column
//! (the seed workload has 8: pass `262144 8`), best of 3. It measures:
//!
//! * `potential` (barrier-free, one thread per row; the body of
//!   `gpu_kernels::potential`) against `par_iter_mut` over the rows with the same
//!   inner loop: the overhead of the runtime itself (the issue's goal: within
//!   1.5×). The results must be bitwise equal (same operations in the same order).
//! * `potential_tiled` (the body of `gpu_kernels::potential_tiled`: shared
//!   memory and two barriers per tile of 256 sources) against the barrier-free kernel.
//! * `sum_reduce` (the body of `gpu_kernels::sum_reduce`: warp shuffles, a
//!   barrier, a shared array, one atomic per block) against rayon's `sum`.

use std::time::{Duration, Instant};

use gpu_kernels::reference::Rng;
use gpu_kernels::{Particle, POTENTIAL_TILE};
use rayon::prelude::*;
use sluice_device::slice::DeviceSliceMut;
use sluice_device::warp::{self, FULL_MASK};
use sluice_device::{atomic, cpu, shared_array, sync, thread, MemoryScope};

/// The formula of `gpu_kernels`' potential kernels (`sqrt.rn` + `div.rn`, the
/// fused multiply-adds nvcc forms).
#[inline(always)]
fn interaction(t: &Particle, s: &Particle, eps2: f32) -> f32 {
    let (dx, dy, dz) = (t.x - s.x, t.y - s.y, t.z - s.z);
    let r2 = dz.mul_add(dz, dx.mul_add(dx, dy * dy)) + eps2;
    s.q / r2.sqrt()
}

/// One row, as the `potential` kernel's thread computes it (four sources per
/// iteration, then the rest; additions in source order).
#[inline(always)]
fn row(t: &Particle, sources: &[Particle], eps2: f32) -> f32 {
    let mut acc = 0.0f32;
    let mut quads = sources.chunks_exact(4);
    for q in &mut quads {
        for s in q {
            acc += interaction(t, s, eps2);
        }
    }
    for s in quads.remainder() {
        acc += interaction(t, s, eps2);
    }
    acc
}

/// A `Sync` raw pointer for the kernel closures.
#[derive(Clone, Copy)]
struct Ptr<T>(*mut T, usize);
// SAFETY: the kernels write disjoint elements (one per thread) or atomically.
unsafe impl<T> Sync for Ptr<T> {}

impl<T> Ptr<T> {
    /// The kernel's mutable slice parameter.
    ///
    /// # Safety
    /// As `DeviceSliceMut::from_raw_parts`: live for the launch, one view per thread.
    unsafe fn view(&self) -> DeviceSliceMut<'static, T> {
        // SAFETY: forwarded to the caller.
        unsafe { DeviceSliceMut::from_raw_parts(self.0, self.1 as u64) }
    }
}

/// `gpu_kernels::potential`'s body.
fn potential(out: DeviceSliceMut<f32>, targets: &[Particle], sources: &[Particle], eps2: f32) {
    let mut out = out.prefix(targets.len());
    let Some(o) = out.for_thread_1d() else { return };
    // SAFETY: for_thread_1d returned Some, so index_1d() < out.len() <= targets.len().
    let t = unsafe { *targets.get_unchecked(thread::index_1d() as usize) };
    *o = row(&t, sources, eps2);
}

/// `gpu_kernels::potential_tiled`'s body.
fn potential_tiled(out: DeviceSliceMut<f32>, targets: &[Particle], sources: &[Particle], eps2: f32) {
    let tile = shared_array!(SOURCES: [Particle; POTENTIAL_TILE]);
    let mut out = out.prefix(targets.len());
    let i = thread::index_1d() as usize;
    let t = targets.get(i).copied().unwrap_or(Particle { x: 0.0, y: 0.0, z: 0.0, q: 0.0 });
    let (tid, step) = (thread::thread_idx_x() as usize, thread::block_dim_x() as usize);
    let mut acc = 0.0f32;
    let mut base = 0usize;
    while base < sources.len() {
        let m = if sources.len() - base < POTENTIAL_TILE { sources.len() - base } else { POTENTIAL_TILE };
        sync::sync_threads();
        let mut j = tid;
        while j < m {
            // SAFETY: j < m <= POTENTIAL_TILE (tile), base + j < sources.len().
            unsafe { tile.set_unchecked(j, *sources.get_unchecked(base + j)) };
            j += step;
        }
        sync::sync_threads();
        let mut k = 0;
        while k + 4 <= m {
            for u in 0..4 {
                // SAFETY: k + u < m <= POTENTIAL_TILE, written before the barrier above.
                let s = unsafe { tile.get_unchecked(k + u) };
                acc += interaction(&t, &s, eps2);
            }
            k += 4;
        }
        while k < m {
            // SAFETY: k < m <= POTENTIAL_TILE, written before the barrier above.
            let s = unsafe { tile.get_unchecked(k) };
            acc += interaction(&t, &s, eps2);
            k += 1;
        }
        base += POTENTIAL_TILE;
    }
    if let Some(o) = out.for_thread_1d() {
        *o = acc;
    }
}

/// `gpu_kernels::sum_reduce`'s body.
fn sum_reduce(out: DeviceSliceMut<f32>, x: &[f32]) {
    let out = out.as_mut_ptr();
    let warp_sums = shared_array!(WARP_SUMS: [f32; 32]);
    let bdim = thread::block_dim_x();
    let n = x.len();
    let stride = thread::grid_size_1d() as usize;
    let mut i = thread::index_1d() as usize;
    let (mut a0, mut a1, mut a2, mut a3) = (0.0f32, 0.0f32, 0.0f32, 0.0f32);
    while i + 3 * stride < n {
        a0 += x[i];
        a1 += x[i + stride];
        a2 += x[i + 2 * stride];
        a3 += x[i + 3 * stride];
        i += 4 * stride;
    }
    while i < n {
        a0 += x[i];
        i += stride;
    }
    let mut v = (a0 + a1) + (a2 + a3);
    let tid = thread::thread_idx_x();
    let (lane, w) = (tid % 32, tid / 32);
    // SAFETY: every lane of every (full) warp runs this code.
    v = unsafe { warp_sum_down(v) };
    if lane == 0 {
        warp_sums.set(w as usize, v);
    }
    sync::sync_threads();
    if w == 0 {
        let n_warps = bdim / 32;
        let mut s = if lane < n_warps { warp_sums.get(lane as usize) } else { 0.0 };
        // SAFETY: warp 0 is a full warp and all its lanes take this branch.
        s = unsafe { warp_sum_down(s) };
        if lane == 0 {
            // SAFETY: `out` is the one f32 this launch updates, atomically.
            unsafe { atomic::global::add(out, s, MemoryScope::Device) };
        }
    }
}

/// # Safety
/// All 32 lanes of the warp call it together.
unsafe fn warp_sum_down(mut v: f32) -> f32 {
    let mut offset = 16;
    while offset > 0 {
        // SAFETY: the caller guarantees the full warp is converged here.
        v += unsafe { warp::shfl_down(FULL_MASK, v, offset) };
        offset /= 2;
    }
    v
}

fn best(reps: usize, mut f: impl FnMut()) -> Duration {
    (0..reps)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed()
        })
        .min()
        .unwrap_or_default()
}

fn arg(i: usize, default: usize) -> usize {
    std::env::args().nth(i).and_then(|a| a.parse().ok()).unwrap_or(default)
}

fn main() {
    let (rows, cols, n_sources, reps) = (arg(1, 262_144), arg(2, 1), arg(3, 512), arg(4, 3));
    let mut rng = Rng::new(7);
    let targets = rng.particles(rows * cols);
    let sources = rng.particles(n_sources);
    let eps2 = 1e-3f32;
    let block = 256u32;
    let grid = (rows as u32).div_ceil(block);
    println!(
        "{} rayon threads; {rows} rows x {cols} column(s) x {n_sources} sources, best of {reps}",
        rayon::current_num_threads()
    );

    let mut plain = vec![0.0f32; rows * cols];
    let t_plain = best(reps, || {
        for (col, tg) in plain.chunks_mut(rows).zip(targets.chunks(rows)) {
            col.par_iter_mut().zip(tg.par_iter()).for_each(|(o, t)| *o = row(t, &sources, eps2));
        }
    });

    let run = |kernel: fn(DeviceSliceMut<f32>, &[Particle], &[Particle], f32), out: &mut Vec<f32>| {
        for (col, tg) in out.chunks_mut(rows).zip(targets.chunks(rows)) {
            let p = Ptr(col.as_mut_ptr(), col.len());
            cpu::launch([grid, 1, 1], [block, 1, 1], 0, &|| {
                // SAFETY: `col` outlives the launch; each thread takes only its element.
                kernel(unsafe { p.view() }, tg, &sources, eps2)
            })
            .unwrap();
        }
    };
    let mut flat = vec![0.0f32; rows * cols];
    let t_flat = best(reps, || run(potential, &mut flat));
    let mut tiled = vec![0.0f32; rows * cols];
    let t_tiled = best(reps, || run(potential_tiled, &mut tiled));
    assert!(flat.iter().zip(&plain).all(|(a, b)| a.to_bits() == b.to_bits()), "potential: bitwise the plain loop's");
    assert!(tiled.iter().zip(&plain).all(|(a, b)| a.to_bits() == b.to_bits()), "potential_tiled: bitwise the plain loop's");

    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    println!("  plain rayon loop            {:9.1} ms", ms(t_plain));
    println!("  cpu::launch potential       {:9.1} ms  {:.3}x the plain loop", ms(t_flat), ms(t_flat) / ms(t_plain));
    println!(
        "  cpu::launch potential_tiled {:9.1} ms  {:.3}x the plain loop, {:.3}x the barrier-free kernel",
        ms(t_tiled),
        ms(t_tiled) / ms(t_plain),
        ms(t_tiled) / ms(t_flat)
    );

    let n = 1 << 24;
    let x: Vec<f32> = (0..n).map(|i| (i % 1000) as f32 * 0.001).collect();
    let mut s_plain = 0.0;
    let t_sum_plain = best(reps, || s_plain = x.par_iter().sum::<f32>());
    let want: f64 = x.iter().map(|&v| v as f64).sum();
    assert!(((s_plain as f64 - want) / want).abs() < 1e-3);
    println!("  sum of 2^24 f32: rayon sum   {:9.1} ms", ms(t_sum_plain));
    // The GPU's launch shape (8 blocks per SM of an H200), then one for the CPU:
    // a grid-stride kernel does the same work with fewer, longer threads.
    for sum_grid in [(n as u32).div_ceil(4 * block).min(1056), 4 * rayon::current_num_threads() as u32] {
        let mut total = [0.0f32];
        let t_sum = best(reps, || {
            total[0] = 0.0;
            let p = Ptr(total.as_mut_ptr(), 1);
            cpu::launch([sum_grid, 1, 1], [block, 1, 1], 0, &|| {
                // SAFETY: `total` outlives the launch; the body only adds to it atomically.
                sum_reduce(unsafe { p.view() }, &x)
            })
            .unwrap();
        });
        assert!(((total[0] as f64 - want) / want).abs() < 1e-4);
        println!(
            "  cpu::launch sum_reduce, {sum_grid:4} blocks {:9.1} ms  {:.2}x rayon's sum (warp shuffles, a barrier)",
            ms(t_sum),
            ms(t_sum) / ms(t_sum_plain)
        );
    }
}
