//! The CPU backend against plain rayon loops: sluice's own kernels (`sluice::kernels`),
//! launched through a scope on `Gpu::cpu()` exactly as on a GPU, against a rayon loop over
//! the same computation written for the CPU.
//!
//! ```text
//! cargo run --release --example bench_cpu -- [ROWS] [COLUMNS] [SOURCES] [REPS]
//! ```
//!
//! Defaults: the seed workload (262,144 rows × 8 columns × 512 sources), best of 3.
//! Inputs are uploaded before timing; the timed span is one scope (launches, copies back,
//! the join) on the sluice side, the loop on the other. It measures:
//!
//! * `potential` (barrier-free, one thread per row) against `par_iter_mut` over the rows
//!   with the same inner loop: the CPU backend's whole cost (the issue's goal: within
//!   1.5×). The results must be bitwise equal (the same operations in the same order).
//! * `potential_tiled` (shared memory, two barriers per tile of 256 sources).
//! * `sum_reduce` (warp shuffles, a barrier, one atomic per block) against rayon's `sum`,
//!   with the GPU's grid and with a grid for the CPU (few blocks, long grid-stride loops).

use std::time::{Duration, Instant};

use gpu_kernels::reference::Rng;
use rayon::prelude::*;
use sluice::{kernels, Gpu, LaneSet, LaunchConfig, Particle};

const EPS2: f32 = 1e-3;

/// One row as the `potential` kernel's thread computes it (four sources per
/// iteration, then the rest, additions in source order; `sqrt` and a division, and
/// `|t - s|² + eps2` as the kernel's three fused multiply-adds, `eps2` folded into the first).
fn row(t: &Particle, sources: &[Particle]) -> f32 {
    let f = |s: &Particle| {
        let (dx, dy, dz) = (t.x - s.x, t.y - s.y, t.z - s.z);
        let r2 = dz.mul_add(dz, dy.mul_add(dy, dx.mul_add(dx, EPS2)));
        s.q / r2.sqrt()
    };
    let mut acc = 0.0f32;
    let mut quads = sources.chunks_exact(4);
    for q in &mut quads {
        for s in q {
            acc += f(s);
        }
    }
    for s in quads.remainder() {
        acc += f(s);
    }
    acc
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

fn main() -> sluice::Result<()> {
    let (rows, cols, n_sources, reps) = (arg(1, 262_144), arg(2, 8), arg(3, 512), arg(4, 3));
    let mut rng = Rng::new(7);
    let targets = rng.particles(rows * cols);
    let sources = rng.particles(n_sources);
    let gpu = Gpu::cpu();
    println!(
        "CPU backend, {} threads; {rows} rows x {cols} columns x {n_sources} sources, best of {reps}",
        rayon::current_num_threads()
    );

    let mut plain = vec![0.0f32; rows * cols];
    let t_plain = best(reps, || {
        plain.par_chunks_mut(rows).zip(targets.par_chunks(rows)).for_each(|(col, tg)| {
            col.par_iter_mut().zip(tg.par_iter()).for_each(|(o, t)| *o = row(t, &sources));
        })
    });

    // Uploaded once, before timing; one lane per column, kept across the repetitions.
    let (src, tgt) = (gpu.upload(&sources)?, gpu.upload_matrix(&targets, rows, cols)?);
    let mut host = gpu.pinned_matrix::<f32>(rows, cols)?;
    let mut lanes = LaneSet::new(&gpu);
    let mut run = |kernel: &sluice::Kernel<_>, host: &mut sluice::PinnedMatrix<f32>| {
        best(reps, || {
            host.fill(f32::NAN);
            lanes
                .scope(|s| {
                    let out = s.alloc_matrix::<f32>(rows, cols)?;
                    for (j, ((lane, col), dst)) in
                        s.lanes(cols)?.into_iter().zip(out.columns_mut()).zip(host.columns_mut()).enumerate()
                    {
                        lane.enter(|st| {
                            let (s_view, t_view) =
                                (st.bind_ref(src.as_columns()), st.bind_ref(tgt.column(j).expect("column j < cols")));
                            let mut col = st.bind(col);
                            st.launch(
                                kernel,
                                LaunchConfig::for_elements(rows, 256),
                                (&mut col, &t_view, &s_view, EPS2),
                            )?;
                            st.copy_to_host(&col, dst).map(drop)
                        })?;
                    }
                    Ok(())
                })
                .expect("scope");
        })
    };
    let t_flat = run(&kernels::potential, &mut host);
    let same = |h: &[f32]| h.iter().zip(&plain).all(|(a, b)| a.to_bits() == b.to_bits());
    assert!(same(&host), "potential on the CPU backend: bitwise the plain loop's");
    let t_tiled = run(&kernels::potential_tiled, &mut host);
    assert!(same(&host), "potential_tiled on the CPU backend: bitwise the plain loop's");

    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    println!("  plain rayon loop                 {:9.1} ms", ms(t_plain));
    println!(
        "  sluice CPU backend, potential    {:9.1} ms  {:.3}x the plain loop",
        ms(t_flat),
        ms(t_flat) / ms(t_plain)
    );
    println!(
        "  sluice CPU backend, potential_tiled {:6.1} ms  {:.3}x the plain loop",
        ms(t_tiled),
        ms(t_tiled) / ms(t_plain)
    );

    let n = 1 << 24;
    let x: Vec<f32> = (0..n).map(|i| (i % 1000) as f32 * 0.001).collect();
    let want: f64 = x.iter().map(|&v| v as f64).sum();
    let mut s_plain = 0.0f32;
    let t_sum_plain = best(reps, || s_plain = x.par_iter().sum::<f32>());
    assert!(((s_plain as f64 - want) / want).abs() < 1e-3);
    println!("  sum of 2^24 f32: rayon sum       {:9.1} ms", ms(t_sum_plain));
    let xs = gpu.upload(&x)?;
    let mut total = gpu.pinned_buffer::<f32>(1)?;
    // The GPU's launch shape (8 blocks per SM of an H200), then one for the CPU.
    for grid in [(n as u32).div_ceil(1024).min(1056), 4 * rayon::current_num_threads() as u32] {
        let t_sum = best(reps, || {
            lanes
                .scope(|s| {
                    let out = s.alloc_buffer::<f32>(1)?;
                    s.lane()?.enter(|st| {
                        let mut out = st.bind(out.as_columns_mut());
                        st.zero(&mut out)?;
                        let cfg = LaunchConfig { grid: (grid, 1, 1), block: (256, 1, 1), shared_mem_bytes: 0 };
                        st.launch(&kernels::sum_reduce, cfg, (&mut out, &st.bind_ref(xs.as_columns())))?;
                        st.copy_to_host(&out, total.as_pinned_mut()).map(drop)
                    })
                })
                .expect("scope");
        });
        assert!(((total[0] as f64 - want) / want).abs() < 1e-4, "sum_reduce: {} against {want}", total[0]);
        println!(
            "  sluice CPU backend, sum_reduce, {grid:4} blocks {:7.1} ms  {:.2}x rayon's sum",
            ms(t_sum),
            ms(t_sum) / ms(t_sum_plain)
        );
    }
    Ok(())
}
