//! Hopper's gemm the way cuBLAS-class kernels are built, from safe Rust: `C = A · B` (A
//! `m × k`, B `k × n` row-major bf16 or f16, C `m × n` row-major f32) on a warp-specialised
//! block fed by the tensor-memory accelerator (`sluice_device::tma`).
//!
//! A block computes a `128 × 256` tile of C (blocks in the grouped order of
//! [`GEMM_GROUP`]) with 384 threads: warpgroup 0 is the producer — its thread 0 copies each
//! k-tile of 64 (A's `128 × 64` box, B's four `64 × 64` panels, 128-byte swizzled) into a
//! 4-stage ring with TMA, each stage's copies completing on its `full` barrier — and keeps
//! 40 registers; warpgroups 1 and 2 are the consumers, 232 registers each, rows 0..63 and
//! 64..127 of the tile: each waits for a stage, issues its four `wgmma.m64n256k16` as one
//! group, and hands the stage back to the producer when the group has retired (one group in
//! flight). `benches/cuda/wg_gemm.cu`'s `ws_gemm` is the same kernel in CUDA C++.

use sluice_device::half::{bf16, f16};
use sluice_device::kernel;
use sluice_device::tile::{ConsumerTiles, Grouped, MatrixMut, Swizzled, Tile};
use sluice_device::tma::{TmaMatrix, WsPipeline};
use sluice_device::wgmma::{Warpgroup, WgAccum};

use super::{GemmShape, GEMM_GROUP, GEMM_WS, GEMM_WS_TF32};

/// C split between blocks (128 × 256 tiles, grouped) and consumer warpgroups (64 rows each).
type WsTiles = ConsumerTiles<128, 256, Grouped<GEMM_GROUP>>;

macro_rules! ws_gemm_body {
    ($t:ty, $c:ident, $a:ident, $b:ident, $k:ident) => {{
        const G: GemmShape = GEMM_WS;
        const BK: usize = G.bk;
        type TA = Tile<$t, Swizzled<128, 64>>;
        type TB = Tile<$t, Swizzled<64, 64>>;
        type Stage = (TA, TB, TB, TB, TB);
        let () = const {
            assert!(G.bm == 128 && G.bn == 256 && BK == 64 && G.threads == 384, "the shape's");
            assert!(
                WsPipeline::<Stage, { G.stages }>::SHARED_BYTES == G.ws_shared_bytes(),
                "GemmShape::ws_shared_bytes"
            )
        };
        let Some(block) = $c.block_tile() else {
            return;
        };
        let (row0, col0) = (block.row0(), block.col0());
        // At least one k-tile (k = 0 multiplies one zero-filled tile), so that the main loop
        // always runs (as in the cp.async gemms: ptxas would otherwise serialize the MMAs).
        let k_tiles = ($k as usize).div_ceil(BK).max(1);
        let pipe = WsPipeline::<Stage, { G.stages }>::start();
        pipe.run::<40, 232, _>(
            |mut p| {
                for kt in 0..k_tiles {
                    let k0 = BK * kt;
                    p.fill((
                        $a.tile_at(row0, k0),
                        $b.tile_at(k0, col0),
                        $b.tile_at(k0, col0 + 64),
                        $b.tile_at(k0, col0 + 128),
                        $b.tile_at(k0, col0 + 192),
                    ));
                }
            },
            |mut c| {
                let wg = Warpgroup::this();
                let mut acc = WgAccum::<256>::zero().in_flight();
                for _ in 0..k_tiles {
                    acc = wg.mma_async_full(acc, c.wait(), |(ta, tb0, tb1, tb2, tb3)| {
                        (ta, 64 * c.index(), [tb0, tb1, tb2, tb3])
                    });
                }
                let acc = acc.wait();
                if let Some(mut out) = block.consumer_tile() {
                    wg.store(&mut out, &acc);
                }
            },
        );
    }};
}

/// `c = a · b` on Hopper's warpgroup MMA fed by TMA, warp-specialised: `a` `m × k`, `b` `k ×
/// n` bf16 (`row_major` views; `k` and `n` multiples of 8), `c` `m × n` f32, all row-major;
/// launch as [`GEMM_WS`] says ([`GemmShape::grid`], 384 threads,
/// [`GemmShape::ws_shared_bytes`]). sm_90a only (elsewhere `Error::KernelNeedsArch`).
#[kernel(max_threads = 384)]
pub fn gemm_ws_bf16(
    #[matrix(rows = m, cols = n)] c: MatrixMut<f32, WsTiles>,
    a: TmaMatrix<bf16, 128, 64>,
    b: TmaMatrix<bf16, 64, 64>,
    m: u32,
    n: u32,
    k: u32,
) {
    ws_gemm_body!(bf16, c, a, b, k)
}

/// As [`gemm_ws_bf16`], f16 operands.
#[kernel(max_threads = 384)]
pub fn gemm_ws_f16(
    #[matrix(rows = m, cols = n)] c: MatrixMut<f32, WsTiles>,
    a: TmaMatrix<f16, 128, 64>,
    b: TmaMatrix<f16, 64, 64>,
    m: u32,
    n: u32,
    k: u32,
) {
    ws_gemm_body!(f16, c, a, b, k)
}

/// `c = a · bᵀ` in tf32 (f32 operands read as tf32, f32 accumulation): `a` `m × k` and `bt`
/// `n × k` f32 (`row_major` views: `bt` is B transposed, as the warpgroup MMA reads tf32 only
/// K-major; `k` a multiple of 4), `c` `m × n` f32; launch as [`GEMM_WS_TF32`] says
/// ([`GemmShape::grid`], 384 threads, [`GemmShape::ws_shared_bytes`]). sm_90a only.
#[kernel(max_threads = 384)]
pub fn gemm_ws_tf32(
    #[matrix(rows = m, cols = n)] c: MatrixMut<f32, WsTiles>,
    a: TmaMatrix<f32, 128, 32>,
    bt: TmaMatrix<f32, 256, 32>,
    m: u32,
    n: u32,
    k: u32,
) {
    const G: GemmShape = GEMM_WS_TF32;
    const BK: usize = G.bk;
    type TA = Tile<f32, Swizzled<128, 32>>;
    type TB = Tile<f32, Swizzled<256, 32>>;
    let () = const {
        assert!(G.bm == 128 && G.bn == 256 && BK == 32 && G.threads == 384, "the shape's");
        assert!(WsPipeline::<(TA, TB), { G.stages }>::SHARED_BYTES == G.ws_shared_bytes(), "GemmShape::ws_shared_bytes")
    };
    let Some(block) = c.block_tile() else {
        return;
    };
    let (row0, col0) = (block.row0(), block.col0());
    let k_tiles = (k as usize).div_ceil(BK).max(1);
    let pipe = WsPipeline::<(TA, TB), { G.stages }>::start();
    pipe.run::<40, 232, _>(
        |mut p| {
            for kt in 0..k_tiles {
                p.fill((a.tile_at(row0, BK * kt), bt.tile_at(col0, BK * kt)));
            }
        },
        |mut c| {
            let wg = Warpgroup::this();
            let mut acc = WgAccum::<256>::zero().in_flight();
            for _ in 0..k_tiles {
                acc = wg.mma_async_full_tf32(acc, c.wait(), |(ta, tb)| (ta, 64 * c.index(), tb));
            }
            let acc = acc.wait();
            if let Some(mut out) = block.consumer_tile() {
                wg.store(&mut out, &acc);
            }
        },
    );
}
