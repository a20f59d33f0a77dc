//! The tensor-core families on the CPU runtime (`tile`, `mma`, `async_copy`), each against
//! a scalar reference: every `ldmatrix` form against element-by-element loads (which follow
//! `spec::mma`'s tables), `mma.sync` against the f64 product, the `cp.async` pipeline's
//! stages against the source (zero-filled past its edges), and the convergence check.

use std::sync::Mutex;

use sluice_device::async_copy::{CopyPlan, Pipeline, Threads, Walk};
use sluice_device::half::bf16;
use sluice_device::mma::{Accum, FragA, FragB, Warp, M16N8K16, M16N8K8};
use sluice_device::spec::mma as spec;
use sluice_device::tile::{dynamic_tiles, ColMajor, Matrix, RowMajor, Swizzled, Tile};
use sluice_device::{cpu, sync};

/// Fills a tile with `f(r, c)`, every thread a share, then a barrier.
fn fill<T: bytemuck::Pod, L: sluice_device::tile::Layout>(t: &mut Tile<T, L>, f: impl Fn(usize, usize) -> T) {
    let n = sluice_device::thread::block_size() as usize;
    let mut i = sluice_device::thread::block_rank() as usize;
    while i < L::ROWS * L::COLS {
        t.set(i / L::COLS, i % L::COLS, f(i / L::COLS, i % L::COLS));
        i += n;
    }
    sync::sync_threads();
}

fn b(x: usize) -> bf16 {
    bf16::from_f32(x as f32)
}

#[test]
fn every_ldmatrix_form_matches_element_loads() {
    let failures = Mutex::new(Vec::new());
    cpu::launch([1, 1, 1], [32, 1, 1], 16384, &|| {
        type A = Tile<bf16, Swizzled<32, 32>>;
        type AC = Tile<bf16, ColMajor<32, 32>>;
        type BR = Tile<bf16, Swizzled<32, 64>>;
        type BC = Tile<bf16, ColMajor<32, 64, 8>>;
        let (mut a, mut ac, mut br, mut bc): (A, AC, BR, BC) = dynamic_tiles();
        let val = |r: usize, c: usize| b((r * 64 + c) % 251);
        fill(&mut a, val);
        fill(&mut ac, val);
        fill(&mut br, val);
        fill(&mut bc, val);
        let w = Warp::whole();
        let lane = w.lane();
        let bad = |what: &str, x: bool| {
            if !x {
                failures.lock().unwrap().push(format!("lane {lane}: {what}"));
            }
        };
        let fa: [FragA<bf16, M16N8K16>; 2] = w.load_a(&a, 0, 16);
        let sa: [FragA<bf16, M16N8K16>; 2] = w.load_a_scalar(&a, 0, 16);
        bad("A ldmatrix", fa.map(|f| f.regs()) == sa.map(|f| f.regs()));
        let ft: [FragA<bf16, M16N8K16>; 2] = w.load_a_trans(&ac, 0, 16);
        let st: [FragA<bf16, M16N8K16>; 2] = w.load_a_scalar(&ac, 0, 16);
        bad("A ldmatrix.trans", ft.map(|f| f.regs()) == st.map(|f| f.regs()));
        let fb: [FragB<bf16, M16N8K16>; 3] = w.load_b_trans(&br, 16, 8);
        let sb: [FragB<bf16, M16N8K16>; 3] = w.load_b_scalar(&br, 16, 8);
        bad("B ldmatrix.trans (x4 and x2)", fb.map(|f| f.regs()) == sb.map(|f| f.regs()));
        let fc: [FragB<bf16, M16N8K16>; 4] = w.load_b(&bc, 0, 32);
        let sc: [FragB<bf16, M16N8K16>; 4] = w.load_b_scalar(&bc, 0, 32);
        bad("B ldmatrix", fc.map(|f| f.regs()) == sc.map(|f| f.regs()));
        // And the scalar loads follow the spec's table.
        let (r, c) = spec::a16_elem(lane, 2, 1);
        bad("A table", (sa[1].regs()[2] >> 16) as u16 == val(16 + r as usize, 16 + c as usize).to_bits());
    })
    .unwrap();
    let f = failures.into_inner().unwrap();
    assert!(f.is_empty(), "{f:?}");
}

/// The tiles of `mma_matches_the_f64_product`: bf16 A and k-major B, tf32 A and K-contiguous B.
type MmaTiles =
    (Tile<bf16, RowMajor<16, 16>>, Tile<bf16, RowMajor<16, 8>>, Tile<f32, RowMajor<16, 8>>, Tile<f32, ColMajor<8, 8>>);

#[test]
fn mma_matches_the_f64_product() {
    let out = Mutex::new(vec![0f32; 2 * 128]);
    cpu::launch([1, 1, 1], [32, 1, 1], 8192, &|| {
        let (mut a, mut bt, mut af, mut bf): MmaTiles = dynamic_tiles();
        fill(&mut a, |r, c| bf16::from_f32(((r * 7 + c * 3) % 11) as f32 - 5.0));
        fill(&mut bt, |r, c| bf16::from_f32(((r * 5 + c) % 7) as f32 * 0.25));
        fill(&mut af, |r, c| ((r * 7 + c * 3) % 11) as f32 / 3.0);
        fill(&mut bf, |r, c| ((r * 5 + c) % 7) as f32 * 1.1);
        let w = Warp::whole();
        let mut acc = Accum::<M16N8K16>::from_regs([1.0; 4]);
        let fa: [FragA<bf16, M16N8K16>; 1] = w.load_a(&a, 0, 0);
        let fb: [FragB<bf16, M16N8K16>; 1] = w.load_b_trans(&bt, 0, 0);
        w.mma(&mut acc, &fa[0], &fb[0]);
        let mut acc8 = Accum::<M16N8K8>::zero();
        let ga = w.load_a::<_, _, M16N8K8, 1>(&af, 0, 0);
        let gb = w.load_b::<_, _, M16N8K8, 1>(&bf, 0, 0);
        w.mma(&mut acc8, &ga[0], &gb[0]);
        let lane = w.lane();
        let mut o = out.lock().unwrap();
        for i in 0..4 {
            let (r, c) = spec::c_elem(lane, i);
            o[(r * 8 + c) as usize] = acc.regs()[i as usize];
            o[128 + (r * 8 + c) as usize] = acc8.regs()[i as usize];
        }
    })
    .unwrap();
    let o = out.into_inner().unwrap();
    for m in 0..16 {
        for n in 0..8 {
            let want: f64 = 1.0
                + (0..16)
                    .map(|k| (((m * 7 + k * 3) % 11) as f64 - 5.0) * (((k * 5 + n) % 7) as f64 * 0.25))
                    .sum::<f64>();
            assert_eq!(o[m * 8 + n] as f64, want, "bf16 ({m}, {n})");
            let want8: f64 = (0..8)
                .map(|k| {
                    spec::to_tf32(((m * 7 + k * 3) % 11) as f32 / 3.0) as f64
                        * spec::to_tf32(((k * 5 + n) % 7) as f32 * 1.1) as f64
                })
                .sum();
            assert!((o[128 + m * 8 + n] as f64 - want8).abs() < 1e-4 * want8.abs().max(1.0), "tf32 ({m}, {n})");
        }
    }
}

#[test]
fn a_pipeline_hands_out_each_stage_as_copied_and_zero_fills_past_the_edges() {
    // A 40 × 20 source (ragged: tiles of 16 × 16), four k-tiles of 16 columns, 3 stages.
    let (rows, cols) = (40usize, 50usize);
    let src: Vec<f32> = (0..rows * cols).map(|i| i as f32).collect();
    let failures = Mutex::new(Vec::new());
    cpu::launch([1, 1, 1], [64, 1, 1], Pipeline::<Tile<f32, Swizzled<16, 16>>, 3>::SHARED_BYTES as u32, &|| {
        let m = Matrix::new(&src, rows, cols);
        let threads = Threads::<64>::check();
        let row0 = 32; // the last, ragged row of tiles
        let k_tiles = cols.div_ceil(16);
        let mut pipe = Pipeline::<Tile<f32, Swizzled<16, 16>>, 3>::start(&threads, |s, mut t| {
            t.copy_from(&threads, &m, row0, 16 * s);
        });
        for kt in 0..k_tiles {
            let (ready, refill) = pipe.wait();
            let next = kt + 2;
            refill.fill(|mut t| {
                if next < k_tiles {
                    t.copy_from(&threads, &m, row0, 16 * next);
                }
            });
            let t = ready.tiles();
            if threads.rank() == 0 {
                for r in 0..16 {
                    for c in 0..16 {
                        let want = m.get(row0 + r, 16 * kt + c).unwrap_or(0.0);
                        if t.get(r, c) != want {
                            failures.lock().unwrap().push(format!("k-tile {kt} ({r}, {c}): {} != {want}", t.get(r, c)));
                        }
                    }
                }
            }
        }
        pipe.finish();
    })
    .unwrap();
    let f = failures.into_inner().unwrap();
    assert!(f.is_empty(), "{:?}", &f[..f.len().min(5)]);
}

#[test]
fn a_warp_operation_in_a_divergent_branch_fails_the_launch() {
    let r = cpu::launch([1, 1, 1], [32, 1, 1], 0, &|| {
        if sluice_device::thread::block_rank() < 16 {
            let _ = Warp::whole();
        }
    });
    let e = r.expect_err("a warp operation without the whole warp must fail");
    assert!(e.contains("all 32 lanes"), "{e}");
}

#[test]
fn a_copy_from_a_source_that_ends_before_the_wait_lands_what_it_held() {
    // A source that is not a kernel parameter (here a local array, dropped before the
    // wait): on the GPU it is not global memory and is copied at the call; on the CPU every
    // copy reads its source at the issue. Either way the tile gets what the source held.
    #[repr(C, align(16))]
    struct Local([f32; 64]);
    let failures = Mutex::new(Vec::new());
    cpu::launch([1, 1, 1], [32, 1, 1], 4096, &|| {
        let threads = Threads::<32>::check();
        let t: Tile<f32, RowMajor<8, 8>> = dynamic_tiles();
        let copying = {
            let src = Local(core::array::from_fn(|i| i as f32 + 0.5));
            t.copy_async(&threads, &Matrix::new(&src.0, 8, 8), 0, 0)
        };
        let _reuse = vec![-1.0f32; 64]; // memory that may take the dropped source's place
        let t = copying.wait();
        if threads.rank() == 0 {
            for i in 0..64 {
                if t.get(i / 8, i % 8) != i as f32 + 0.5 {
                    failures.lock().unwrap().push(format!("({}, {}): {}", i / 8, i % 8, t.get(i / 8, i % 8)));
                }
            }
        }
    })
    .unwrap();
    let f = failures.into_inner().unwrap();
    assert!(f.is_empty(), "{f:?}");
}

#[test]
fn a_tile_far_past_the_source_is_zeros_at_any_position() {
    // Positions whose sums would overflow `usize` are outside the source like any other:
    // zeros, never wrapped around onto its rows (a copy, and a copy plan's step).
    let src: Vec<f32> = (1..=256).map(|i| i as f32).collect();
    type T8 = Tile<f32, RowMajor<8, 8>>;
    let failures = Mutex::new(Vec::new());
    let check = |what: &str, t: &T8| {
        if sluice_device::thread::block_rank() == 0 {
            for i in 0..64 {
                if t.get(i / 8, i % 8) != 0.0 {
                    failures.lock().unwrap().push(format!("{what}: element {i} = {}", t.get(i / 8, i % 8)));
                }
            }
        }
    };
    for (row0, col0) in [(usize::MAX - 3, 0), (0, usize::MAX - 3), (usize::MAX, usize::MAX)] {
        cpu::launch([1, 1, 1], [32, 1, 1], 4096, &|| {
            let threads = Threads::<32>::check();
            let t: T8 = dynamic_tiles();
            let t = t.copy_async(&threads, &Matrix::new(&src, 16, 16), row0, col0).wait();
            check(&format!("copy at ({row0}, {col0})"), &t);
        })
        .unwrap();
    }
    for walk in [Walk::Rows, Walk::Cols] {
        cpu::launch([1, 1, 1], [32, 1, 1], Pipeline::<T8, 2>::SHARED_BYTES as u32, &|| {
            let threads = Threads::<32>::check();
            let m = Matrix::new(&src, 16, 16);
            let plan = CopyPlan::<f32, RowMajor<8, 8>, 32>::new(&threads, &m, 8, 8, walk);
            let mut pipe = Pipeline::<T8, 2>::start(&threads, |_, mut t| t.copy_step(&plan, usize::MAX));
            let (ready, _refill) = pipe.wait();
            check(&format!("{walk:?} step usize::MAX"), ready.tiles());
        })
        .unwrap();
    }
    let f = failures.into_inner().unwrap();
    assert!(f.is_empty(), "{f:?}");
}

/// A pipeline whose refills are sometimes dropped unfilled (which commits an empty group):
/// every stage handed out after a filled refill holds its step, and the checking mode sees
/// no read of a stage its copies still write. Both modes; `Refill::step` names each stage's
/// step. (A `Refill` forgotten with `mem::forget` commits no group: the next waits then
/// hand out stages whose copies may be in flight — a race the checking mode reports.)
fn dropped_refills_keep_the_count<M: sluice_device::async_copy::Mode>() {
    use sluice_device::cpu::{CpuCheck, CpuLaunch};
    type T8 = Tile<f32, Swizzled<8, 32>>;
    const STAGES: usize = 4;
    let (rows, cols) = (8usize, 32 * 12);
    let src: Vec<f32> = (0..rows * cols).map(|i| i as f32).collect();
    let failures = Mutex::new(Vec::new());
    let launch = CpuLaunch {
        kernel: "dropped_refills",
        grid: [1, 1, 1],
        block: [32, 1, 1],
        dynamic_shared_bytes: Pipeline::<T8, STAGES, M>::SHARED_BYTES as u32,
        check: CpuCheck::On,
    };
    let steps = cols / 32;
    cpu::run(&launch, &|| {
        let m = Matrix::new(&src, rows, cols);
        let threads = Threads::<32>::check();
        let mut pipe = Pipeline::<T8, STAGES, M>::start(&threads, |s, mut t| t.copy_from(&threads, &m, 0, 32 * s));
        // Which step each stage handed out holds (None: its refill was skipped).
        let mut holds: std::collections::VecDeque<Option<usize>> = (0..STAGES - M::lag()).map(Some).collect();
        for round in 0..steps {
            let (ready, refill) = pipe.wait();
            let next = refill.step();
            assert_eq!(next, round + STAGES - M::lag(), "Refill::step");
            let skipped = round % 3 == 1;
            if skipped {
                drop(refill);
            } else {
                refill.fill(|mut t| {
                    if next < steps {
                        t.copy_from(&threads, &m, 0, 32 * next)
                    }
                });
            }
            holds.push_back((!skipped && next < steps).then_some(next));
            let held = holds.pop_front().flatten();
            if let (Some(step), 0) = (held, threads.rank()) {
                let t = ready.tiles();
                for r in 0..8 {
                    for c in 0..32 {
                        let want = m.get(r, 32 * step + c).unwrap_or(0.0);
                        if t.get(r, c) != want {
                            failures.lock().unwrap().push(format!("round {round}, step {step} ({r}, {c})"));
                        }
                    }
                }
            }
        }
        pipe.finish();
    })
    .expect("no race: every stage read had landed");
    let f = failures.into_inner().unwrap();
    assert!(f.is_empty(), "{:?}", &f[..f.len().min(5)]);
}

#[test]
fn dropped_refills_keep_the_group_count_and_steps_in_both_modes() {
    dropped_refills_keep_the_count::<sluice_device::async_copy::Now>();
    dropped_refills_keep_the_count::<sluice_device::async_copy::Behind>();
}
