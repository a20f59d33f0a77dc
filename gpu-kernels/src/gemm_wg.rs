//! Hopper's tensor cores from safe kernels: `C = A · B` (A `m × k`, B `k × n` row-major
//! bf16 or f16, C `m × n` row-major f32, any sizes) with the warpgroup MMA
//! (`sluice_device::wgmma`).
//!
//! A block computes a `128 × BN` tile of C (blocks in the grouped order of [`GEMM_GROUP`])
//! with two warpgroups, each `64 × BN` with `wgmma.m64n{BN}k16`; A and B move through a
//! 4-deep `cp.async` pipeline of 128-byte-swizzled tiles, k-tiles of 64 (A's tile K-major,
//! B's in panels of 64 columns, read transposed), each thread's copies worked out once
//! ([`CopyPlan`]). Each k-tile's four MMAs run as one group while the warpgroups go on to
//! the next k-tile (`Warpgroup::mma_async` on a `Behind` pipeline: a stage is refilled two
//! waits after it was read, copies run two k-tiles ahead). `benches/cuda/wg_gemm.cu` is the
//! same kernel in CUDA C++ (`-DWG_INFLIGHT=1`).

use sluice_device::async_copy::{Behind, CopyPlan, Pipeline, Threads, Walk};
use sluice_device::half::{bf16, f16};
use sluice_device::kernel;
use sluice_device::tile::{Grouped, Matrix, MatrixMut, Swizzled, Tile, WarpgroupTiles};
use sluice_device::wgmma::{Warpgroup, WgAccum};

use super::{GemmShape, GEMM_GROUP, GEMM_WG, GEMM_WG_128X256};

/// C split between blocks (128 × 128 tiles, grouped) and warpgroups (64 rows each).
type WgTiles128 = WarpgroupTiles<128, 128, Grouped<GEMM_GROUP>>;
/// As [`WgTiles128`], 128 × 256 tiles.
type WgTiles256 = WarpgroupTiles<128, 256, Grouped<GEMM_GROUP>>;

macro_rules! wg_gemm_body {
    ($t:ty, $g:expr, $n:literal, [$($p:ident: $pt:ident),+], $c:ident, $a:ident, $b:ident, $m:ident, $nn:ident, $k:ident) => {{
        const G: GemmShape = $g;
        const BM: usize = G.bm;
        const BK: usize = G.bk;
        const STAGES: usize = G.stages;
        const THREADS: u32 = G.threads;
        let () = const { assert!(BM == 128 && BK == 64 && G.bn == $n && THREADS == 256, "the shape's") };
        type TA = Tile<$t, Swizzled<BM, BK>>;
        type TB = Tile<$t, Swizzled<BK, 64>>;
        let () = const {
            assert!(Pipeline::<(TA, $($pt,)+), STAGES, Behind>::SHARED_BYTES == G.shared_bytes(), "GemmShape::shared_bytes")
        };
        let (m, n, k) = ($m as usize, $nn as usize, $k as usize);
        let threads = Threads::<THREADS>::check();
        let a = Matrix::new($a, m, k);
        let b = Matrix::new($b, k, n);
        let Some(block) = $c.block_tile() else {
            return;
        };
        let (row0, col0) = (block.row0(), block.col0());
        let wg = Warpgroup::this();
        // At least one k-tile (k = 0 multiplies one zero-filled tile): the main loop then
        // always runs, and the accumulators pass from the zeros to the MMAs to the last wait
        // without a path around the loop, on which `ptxas` would see them set while a group
        // is in flight and serialize every MMA (C7515).
        let k_tiles = k.div_ceil(BK).max(1);
        // Each thread's copies of every k-tile, worked out once: A's tiles walk along its
        // columns; B's panels (64 columns each) along its rows.
        let plan_a = CopyPlan::<_, _, THREADS>::new(&threads, &a, row0, 0, Walk::Cols);
        let plan_b: [CopyPlan<_, _, THREADS>; $n / 64] =
            core::array::from_fn(|p| CopyPlan::new(&threads, &b, 0, col0 + 64 * p, Walk::Rows));
        let mut pipe = Pipeline::<(TA, $($pt,)+), STAGES, Behind>::start(&threads, |s, (mut ta, $(mut $p,)+)| {
            if s < k_tiles {
                ta.copy_step(&plan_a, s);
                let mut i = 0;
                $( $p.copy_step(&plan_b[i], s); i += 1; )+
                let _ = i;
            }
        });
        let mut acc = WgAccum::<$n>::zero().in_flight();
        for _kt in 0..k_tiles {
            // k-tile kt landed; the stage of k-tile kt - 2 is free (its group was retired
            // by every thread's last `mma_async`).
            let (ready, refill) = pipe.wait();
            let next = refill.step(); // kt + STAGES - 2
            refill.fill(|(mut ta, $(mut $p,)+)| {
                if next < k_tiles {
                    ta.copy_step(&plan_a, next);
                    let mut i = 0;
                    $( $p.copy_step(&plan_b[i], next); i += 1; )+
                    let _ = i;
                }
            });
            // This k-tile's MMAs left running while the warpgroup goes on to the next wait.
            acc = wg.mma_async(acc, &ready, |(ta, $($p,)+)| (ta, 64 * wg.index(), [$($p),+]));
        }
        let acc = acc.wait();
        pipe.finish();
        if let Some(mut out) = block.warpgroup_tile() {
            wg.store(&mut out, &acc);
        }
    }};
}

/// `c = a · b` on Hopper's warpgroup MMA: `a` `m × k`, `b` `k × n` bf16, `c` `m × n` f32,
/// all row-major; launch as [`GEMM_WG`] says ([`GemmShape::grid`], `threads`,
/// [`GemmShape::shared_bytes`]). sm_90a only (elsewhere `Error::KernelNeedsArch`).
#[kernel]
pub fn gemm_wg_bf16(
    #[matrix(rows = m, cols = n)] c: MatrixMut<f32, WgTiles128>,
    a: &[bf16],
    b: &[bf16],
    m: u32,
    n: u32,
    k: u32,
) {
    wg_gemm_body!(bf16, GEMM_WG, 128, [tb0: TB, tb1: TB], c, a, b, m, n, k)
}

/// As [`gemm_wg_bf16`], f16 operands.
#[kernel]
pub fn gemm_wg_f16(
    #[matrix(rows = m, cols = n)] c: MatrixMut<f32, WgTiles128>,
    a: &[f16],
    b: &[f16],
    m: u32,
    n: u32,
    k: u32,
) {
    wg_gemm_body!(f16, GEMM_WG, 128, [tb0: TB, tb1: TB], c, a, b, m, n, k)
}

/// As [`gemm_wg_bf16`] in the [`GEMM_WG_128X256`] shape (`wgmma.m64n256k16`).
#[kernel]
pub fn gemm_wg_bf16_128x256(
    #[matrix(rows = m, cols = n)] c: MatrixMut<f32, WgTiles256>,
    a: &[bf16],
    b: &[bf16],
    m: u32,
    n: u32,
    k: u32,
) {
    wg_gemm_body!(bf16, GEMM_WG_128X256, 256, [tb0: TB, tb1: TB, tb2: TB, tb3: TB], c, a, b, m, n, k)
}

/// As [`gemm_wg_f16`] in the [`GEMM_WG_128X256`] shape.
#[kernel]
pub fn gemm_wg_f16_128x256(
    #[matrix(rows = m, cols = n)] c: MatrixMut<f32, WgTiles256>,
    a: &[f16],
    b: &[f16],
    m: u32,
    n: u32,
    k: u32,
) {
    wg_gemm_body!(f16, GEMM_WG_128X256, 256, [tb0: TB, tb1: TB, tb2: TB, tb3: TB], c, a, b, m, n, k)
}
