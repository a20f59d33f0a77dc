//! Tensor-core matrix products, written without `unsafe`: `C = A · B` with `A` (`m × k`)
//! and `B` (`k × n`) row-major in bf16, f16 or f32 (multiplied as tf32), `C` (`m × n`)
//! row-major f32, any sizes (the tiles at the edges are zero-filled and clipped).
//!
//! One design, [`GemmShape`]: a block computes a `BM × BN` tile of C (blocks in Triton's
//! grouped order, [`GEMM_GROUP`] rows of tiles per group, for L2 reuse) with one warp per
//! 64 × 64 warp tile (4 × 8 MMAs of 16 × 8); A and B move through a `STAGES`-deep `cp.async`
//! pipeline of swizzled shared tiles (no padding, no bank conflicts), k-tile
//! `kt + STAGES - 1` copied while k-tile `kt` is multiplied, each thread's copies worked out
//! once before the loop ([`CopyPlan`]); in `gemm_bf16_128x256` the k-steps of a k-tile are
//! unrolled (each batch of warp operations — one `load_a`, one `load_b_trans`, one
//! `mma_grid` — is its own block behind its convergence check, see `sluice_device::mma`);
//! the others loop over them (unrolled, the 128 × 128 shape is slower, tf32 spills).
//! Fragments come from
//! `ldmatrix` (`.trans` for B, which is k-major in memory; tf32's B element by element, as
//! `ldmatrix` cannot transpose 32-bit elements). `benches/cuda/tc_gemm.cu` is the same
//! kernel in CUDA C++.

use sluice_device::async_copy::{CopyPlan, Pipeline, Threads, Walk};
use sluice_device::half::{bf16, f16};
use sluice_device::kernel;
use sluice_device::mma::{Accum, Warp, M16N8K16, M16N8K8};
use sluice_device::tile::{ByRows, Grouped, Matrix, MatrixMut, RowMajor, Swizzled, Tile, WarpTiles};

use super::{GemmShape, GEMM_BF16, GEMM_BF16_128X256, GEMM_GROUP, GEMM_TF32};

/// Warp tile: 64 × 64, 4 × 8 MMAs of 16 × 8.
const WM: usize = 64;
const WN: usize = 64;
const MI: usize = WM / 16;
const NI: usize = WN / 8;

/// How C is split: block tiles of the default shape, in groups of [`GEMM_GROUP`] rows of
/// tiles, warp tiles of 64 × 64.
type Tiles128x128 = WarpTiles<128, 128, WM, WN, Grouped<GEMM_GROUP>>;
/// As [`Tiles128x128`], block tiles of 128 × 256.
type Tiles128x256 = WarpTiles<128, 256, WM, WN, Grouped<GEMM_GROUP>>;

macro_rules! gemm_body {
    // The k-steps of a k-tile: unrolled (the loop's count and addresses folded, at the cost
    // of registers), or a loop (where unrolled they spill: ptxas's report in `cargo xtask
    // check-ptx`).
    (@ks unrolled, $n:expr, $ks:ident => $body:block) => {
        sluice_device::unroll!($ks in 0..$n; max 8 => $body)
    };
    (@ks looped, $n:expr, $ks:ident => $body:block) => {
        for $ks in 0..$n $body
    };
    ($t:ty, $shape:ty, $g:expr, $tiles:ty, $load_b:ident, $unroll:tt, $c:ident, $a:ident, $b:ident, $m:ident, $n:ident, $k:ident) => {{
        const G: GemmShape = $g;
        const BM: usize = G.bm;
        const BN: usize = G.bn;
        const BK: usize = G.bk;
        const STAGES: usize = G.stages;
        const THREADS: u32 = G.threads;
        const KS: usize = <$shape as sluice_device::mma::Shape>::K;
        let () = const { assert!(THREADS as usize == (BM / WM) * (BN / WN) * 32, "one warp per warp tile") };
        let () = const { assert!(G.elem_bytes == core::mem::size_of::<$t>(), "the shape's element size") };
        type TA = Tile<$t, Swizzled<BM, BK>>;
        type TB = Tile<$t, Swizzled<BK, BN>>;
        // What the host gives (`GemmShape::shared_bytes`) is what the pipeline takes.
        let () = const {
            assert!(Pipeline::<(TA, TB), STAGES>::SHARED_BYTES == G.shared_bytes(), "GemmShape::shared_bytes")
        };
        let (m, n, k) = ($m as usize, $n as usize, $k as usize);
        let threads = Threads::<THREADS>::check();
        let a = Matrix::new($a, m, k);
        let b = Matrix::new($b, k, n);
        let () = const { assert!(<$tiles as sluice_device::tile::Tiling>::BM == BM && <$tiles as sluice_device::tile::Tiling>::BN == BN, "the parameter's tiling is the shape's") };
        let Some(block) = $c.block_tile() else {
            return;
        };
        let (row0, col0) = (block.row0(), block.col0());
        let warp = Warp::whole();
        // The warp's tile inside the block's, as `warp_tile` assigns it.
        let w = (threads.rank() / 32) as usize;
        let (wr, wc) = ((w / (BN / WN)) * WM, (w % (BN / WN)) * WN);
        let k_tiles = k.div_ceil(BK);
        // Each thread's copies of every k-tile, worked out once: A's tiles walk along its
        // columns, B's along its rows.
        let plan_a = CopyPlan::<_, _, THREADS>::new(&threads, &a, row0, 0, Walk::Cols);
        let plan_b = CopyPlan::<_, _, THREADS>::new(&threads, &b, 0, col0, Walk::Rows);
        let mut pipe = Pipeline::<(TA, TB), STAGES>::start(&threads, |s, (mut ta, mut tb)| {
            if s < k_tiles {
                ta.copy_step(&plan_a, s);
                tb.copy_step(&plan_b, s);
            }
        });
        let mut acc = [[Accum::<$shape>::zero(); NI]; MI];
        for kt in 0..k_tiles {
            let (ready, refill) = pipe.wait();
            let next = kt + STAGES - 1;
            refill.fill(|(mut ta, mut tb)| {
                if next < k_tiles {
                    ta.copy_step(&plan_a, next);
                    tb.copy_step(&plan_b, next);
                }
            });
            let (ta, tb) = ready.tiles();
            gemm_body!(@ks $unroll, BK / KS, ks => {
                let fa = warp.load_a::<_, _, $shape, MI>(ta, wr, ks * KS);
                let fb = warp.$load_b::<_, _, $shape, NI>(tb, ks * KS, wc);
                warp.mma_grid(&mut acc, &fa, &fb);
            });
        }
        pipe.finish();
        if let Some(mut out) = block.warp_tile() {
            warp.store(&mut out, &acc);
        }
    }};
}

/// `c = a · b`: `a` `m × k`, `b` `k × n` bf16, `c` `m × n` f32, all row-major; launch as
/// [`GEMM_BF16`] says ([`GemmShape::grid`], `threads`, [`GemmShape::shared_bytes`]).
#[kernel]
pub fn gemm_bf16(
    #[matrix(rows = m, cols = n)] c: MatrixMut<f32, Tiles128x128>,
    a: &[bf16],
    b: &[bf16],
    m: u32,
    n: u32,
    k: u32,
) {
    gemm_body!(bf16, M16N8K16, GEMM_BF16, Tiles128x128, load_b_trans, looped, c, a, b, m, n, k)
}

/// As [`gemm_bf16`], f16 operands (the same [`GEMM_BF16`] shape).
#[kernel]
pub fn gemm_f16(
    #[matrix(rows = m, cols = n)] c: MatrixMut<f32, Tiles128x128>,
    a: &[f16],
    b: &[f16],
    m: u32,
    n: u32,
    k: u32,
) {
    gemm_body!(f16, M16N8K16, GEMM_BF16, Tiles128x128, load_b_trans, looped, c, a, b, m, n, k)
}

/// As [`gemm_bf16`], f32 operands multiplied as tf32 (rounded to nearest as they are loaded
/// into fragments), launched as [`GEMM_TF32`] says.
#[kernel]
pub fn gemm_tf32(
    #[matrix(rows = m, cols = n)] c: MatrixMut<f32, Tiles128x128>,
    a: &[f32],
    b: &[f32],
    m: u32,
    n: u32,
    k: u32,
) {
    gemm_body!(f32, M16N8K8, GEMM_TF32, Tiles128x128, load_b_scalar, looped, c, a, b, m, n, k)
}

/// As [`gemm_bf16`] in the [`GEMM_BF16_128X256`] shape (8 warps, one block per SM): a
/// design variant timed beside it.
#[kernel]
pub fn gemm_bf16_128x256(
    #[matrix(rows = m, cols = n)] c: MatrixMut<f32, Tiles128x256>,
    a: &[bf16],
    b: &[bf16],
    m: u32,
    n: u32,
    k: u32,
) {
    gemm_body!(bf16, M16N8K16, GEMM_BF16_128X256, Tiles128x256, load_b_trans, unrolled, c, a, b, m, n, k)
}

macro_rules! mma_probe {
    ($(#[$doc:meta])* $name:ident, $t:ty, $shape:ty, $ta:ty, $tb:ty, $load_b:ident) => {
        $(#[$doc])*
        #[kernel]
        pub fn $name(
            #[matrix(rows = 16, cols = 8)] d: MatrixMut<f32, WarpTiles<16, 8, 16, 8, ByRows>>,
            a: &[$t],
            b: &[$t],
        ) {
            use sluice_device::tile::dynamic_tiles;
            const M: usize = <$shape as sluice_device::mma::Shape>::M;
            const N: usize = <$shape as sluice_device::mma::Shape>::N;
            const K: usize = <$shape as sluice_device::mma::Shape>::K;
            let threads = Threads::<32>::check();
            let (ta, tb): ($ta, $tb) = dynamic_tiles();
            // cp.async into both tiles, one group each; then wait (and the block barrier).
            let ta = ta.copy_async(&threads, &Matrix::new(a, M, K), 0, 0).wait();
            let tb = tb.copy_async(&threads, &Matrix::new(b, K, N), 0, 0).wait();
            let warp = Warp::whole();
            let fa = warp.load_a::<_, _, $shape, 1>(&ta, 0, 0);
            let fb = warp.$load_b::<_, _, $shape, 1>(&tb, 0, 0);
            let mut acc = [[Accum::<$shape>::zero(); 1]; 1];
            warp.mma(&mut acc[0][0], &fa[0], &fb[0]);
            let () = const { assert!(M == 16 && N == 8, "d's shape") };
            if let Some(block) = d.block_tile() {
                if let Some(mut out) = block.warp_tile() {
                    warp.store(&mut out, &acc);
                }
            }
        }
    };
}

mma_probe! {
    /// One warp: `d = a · b` for one `m16n8k16` bf16 MMA, through every tensor-core
    /// operation (`cp.async` into row-major tiles, `ldmatrix`, `ldmatrix.trans`, `mma.sync`,
    /// the accumulator store): `a` 16 × 16, `b` 16 × 8, `d` 16 × 8, row-major. Block 32,
    /// grid 1, dynamic shared memory [`MMA_PROBE_SHARED`].
    mma_probe_bf16, bf16, M16N8K16, Tile<bf16, RowMajor<16, 16>>, Tile<bf16, RowMajor<16, 8>>, load_b_trans
}
mma_probe! {
    /// As [`mma_probe_bf16`], f16.
    mma_probe_f16, f16, M16N8K16, Tile<f16, RowMajor<16, 16>>, Tile<f16, RowMajor<16, 8>>, load_b_trans
}
mma_probe! {
    /// As [`mma_probe_bf16`] for one `m16n8k8` tf32 MMA: `a` 16 × 8, `b` 8 × 8 f32 (B read
    /// element by element).
    mma_probe_tf32, f32, M16N8K8, Tile<f32, RowMajor<16, 8>>, Tile<f32, RowMajor<8, 8>>, load_b_scalar
}

/// The dynamic shared memory (bytes) the MMA probes need (two tiles, aligned).
pub const MMA_PROBE_SHARED: usize = 1024;
