//! The warpgroup MMA on the CPU runtime: each thread computes its own accumulators from
//! the tiles (`Tile::get`: bounds-checked, seen by the race checker as its reads), products
//! exact, sums in f32 in `k` order.

use super::{frag_position, WgElem};
use crate::spec::layout::Swizzled;
use crate::tile::Tile;

/// Whether all 32 lanes of this warp execute this together (the runtime's `active_mask`).
#[track_caller]
pub(super) fn whole_warp_here() -> bool {
    crate::warp::active_mask() == u32::MAX
}

pub(super) fn mma_k_tile<E: WgElem, const R: usize, const P: usize, const N: usize>(
    acc: &mut [f32; 128],
    a: &Tile<E, Swizzled<R, 64>>,
    row0: usize,
    b: [&Tile<E, Swizzled<64, 64>>; P],
) {
    let t = (crate::thread::block_rank() % 128) as usize;
    for (i, d) in acc.iter_mut().enumerate().take(N / 2) {
        let (r, c) = frag_position(t, i);
        let mut sum = *d;
        for k in 0..64 {
            sum += a.get(row0 + r, k).__to_f32() * b[c / 64].get(k, c % 64).__to_f32();
        }
        *d = sum;
    }
}

/// As [`mma_k_tile`]: on the CPU the product is computed at the call (the `Behind`
/// pipeline keeps the stage unwritten until the GPU's group would have retired).
pub(super) fn mma_k_tile_async<E: WgElem, const R: usize, const P: usize, const N: usize>(
    acc: &mut [f32; 128],
    a: &Tile<E, Swizzled<R, 64>>,
    row0: usize,
    b: [&Tile<E, Swizzled<64, 64>>; P],
) {
    mma_k_tile::<E, R, P, N>(acc, a, row0, b);
}

/// A tf32 operand as the tensor core reads an f32 in shared memory: the low 13 mantissa
/// bits ignored.
fn tf32_bits(x: f32) -> f32 {
    f32::from_bits(x.to_bits() & 0xffff_e000)
}

/// The tf32 k-tile (32 deep), A and B both K-major (`b` holds Bᵀ: row `c` is column `c` of B).
pub(super) fn mma_k_tile_async_tf32<const R: usize, const N: usize>(
    acc: &mut [f32; 128],
    a: &Tile<f32, Swizzled<R, 32>>,
    row0: usize,
    b: &Tile<f32, Swizzled<N, 32>>,
) {
    let t = (crate::thread::block_rank() % 128) as usize;
    for (i, d) in acc.iter_mut().enumerate().take(N / 2) {
        let (r, c) = frag_position(t, i);
        let mut sum = *d;
        for k in 0..32 {
            sum += tf32_bits(a.get(row0 + r, k)) * tf32_bits(b.get(c, k));
        }
        *d = sum;
    }
}

/// Nothing in flight on the CPU.
pub(super) fn wait_all<const N: usize>(_acc: &mut [f32; 128]) {}
