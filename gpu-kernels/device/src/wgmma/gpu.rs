//! The warpgroup MMA on the GPU: descriptors from the tiles' addresses, the k-tile's four
//! `wgmma.mma_async` (`raw.rs`) in one group, waited for before returning.

use super::WgElem;
use crate::spec::layout::Swizzled;
use crate::tile::Tile;

#[path = "raw.rs"]
mod raw;

/// Whether all 32 lanes of this warp execute this together (`activemask`, the same answer
/// in every lane that reads it).
#[inline(always)]
pub(super) fn whole_warp_here() -> bool {
    crate::warp::active_mask() == u32::MAX
}

/// A shared-memory matrix descriptor for the 128-byte swizzle: start address, leading and
/// stride byte offsets (each `>> 4` in 14 bits), swizzle mode 1 (bits 62-63).
#[inline(always)]
const fn desc_sw128(addr: u32, lbo: u32, sbo: u32) -> u64 {
    ((addr as u64 >> 4) & 0x3fff)
        | (((lbo as u64 >> 4) & 0x3fff) << 16)
        | (((sbo as u64 >> 4) & 0x3fff) << 32)
        | (1u64 << 62)
}

/// A K-major (A): 8-row groups of 128-byte rows are 1024 bytes apart (SBO); LBO unused.
const A_LBO: u32 = 16;
const A_SBO: u32 = 1024;
/// B N-major (transposed), panels of 64 columns: 8-row (k) groups 1024 bytes apart, panels
/// one panel apart.
const B_SBO: u32 = 1024;

/// The k-tile's four MMAs, issued and committed as one group.
///
/// # Safety
///
/// As the raw forms': every thread of the warpgroup here (its warp checked whole), the
/// descriptors' tiles placed (checked) and filled, the accumulators not read until a wait.
#[inline(always)]
unsafe fn issue<E: WgElem, const R: usize, const P: usize, const N: usize>(
    acc: &mut [f32; 128],
    a: &Tile<E, Swizzled<R, 64>>,
    row0: usize,
    b: [&Tile<E, Swizzled<64, 64>>; P],
) {
    let () = const {
        assert!(
            cfg!(target_feature = "sm_90a"),
            "the warpgroup MMA (Warpgroup::mma) needs sm_90a, and this is a build for another architecture: gate the kernel with #[cfg(any(not(target_arch = \"nvptx64\"), target_feature = \"sm_90a\"))] and build the crate for sm_90a too (Builder::new(dir).specific(Arch::SM_90A) in build.rs)"
        )
    };
    let panel = Tile::<E, Swizzled<64, 64>>::BYTES as u32;
    let da = desc_sw128(a.addr() + (row0 * 128) as u32, A_LBO, A_SBO);
    let db = desc_sw128(b[0].addr(), panel, B_SBO);
    // SAFETY: the caller's (above).
    unsafe {
        raw::fence();
        crate::unroll!(ks in 0..4; max 4 => {
            // k-step ks: A 32 bytes further along its rows, B 16 rows (2048 bytes) down.
            let (a_ks, b_ks) = (da + (ks as u64 * 32 >> 4), db + (ks as u64 * 2048 >> 4));
            match (N, E::BF16) {
                (64, true) => raw::mma_m64n64k16_bf16(sub(acc), a_ks, b_ks, true),
                (64, false) => raw::mma_m64n64k16_f16(sub(acc), a_ks, b_ks, true),
                (128, true) => raw::mma_m64n128k16_bf16(sub(acc), a_ks, b_ks, true),
                (128, false) => raw::mma_m64n128k16_f16(sub(acc), a_ks, b_ks, true),
                (_, true) => raw::mma_m64n256k16_bf16(acc, a_ks, b_ks, true),
                (_, false) => raw::mma_m64n256k16_f16(acc, a_ks, b_ks, true),
            }
        });
        raw::commit_group();
    }
}

#[inline(always)]
pub(super) fn mma_k_tile<E: WgElem, const R: usize, const P: usize, const N: usize>(
    acc: &mut [f32; 128],
    a: &Tile<E, Swizzled<R, 64>>,
    row0: usize,
    b: [&Tile<E, Swizzled<64, 64>>; P],
) {
    // SAFETY: every lane of this warp is here (`Warpgroup::mma` checked `activemask`; the
    // warpgroup's four warps at one call is the documented gap); the descriptors name
    // 64 × 64 of A (rows row0.., 1024-aligned, inside the tile: checked) and 64 × N of B
    // (P consecutive 1024-aligned panels: checked) in this block's shared memory, filled and
    // fenced for the async proxy by the pipeline's wait; the accumulators are waited for
    // right after, before anything reads them.
    unsafe { issue::<E, R, P, N>(acc, a, row0, b) };
    wait_all::<N>(acc);
}

/// As [`mma_k_tile`], leaving this group in flight: waits only for the one before.
#[inline(always)]
pub(super) fn mma_k_tile_async<E: WgElem, const R: usize, const P: usize, const N: usize>(
    acc: &mut [f32; 128],
    a: &Tile<E, Swizzled<R, 64>>,
    row0: usize,
    b: [&Tile<E, Swizzled<64, 64>>; P],
) {
    // SAFETY: as in `mma_k_tile`; the accumulators stay in `WgInFlight`, which gives them
    // only to the next MMA or a wait; the stage is a `Behind` pipeline's, refilled only
    // after the next call's wait retired this group (`Warpgroup::mma_async`).
    unsafe {
        issue::<E, R, P, N>(acc, a, row0, b);
        match N {
            64 => raw::wait_group_1_64(sub(acc)),
            128 => raw::wait_group_1_128(sub(acc)),
            _ => raw::wait_group_1_256(acc),
        }
    }
}

/// The k-tile's four tf32 MMAs (k-steps of 8: 32 bytes along both operands' K-major rows),
/// issued and committed as one group, left in flight; the group before is waited for.
#[inline(always)]
pub(super) fn mma_k_tile_async_tf32<const R: usize, const N: usize>(
    acc: &mut [f32; 128],
    a: &Tile<f32, Swizzled<R, 32>>,
    row0: usize,
    b: &Tile<f32, Swizzled<N, 32>>,
) {
    let () = const {
        assert!(
            cfg!(target_feature = "sm_90a"),
            "the warpgroup MMA (Warpgroup::mma_async_full_tf32) needs sm_90a, and this is a build for another architecture: gate the kernel with #[cfg(any(not(target_arch = \"nvptx64\"), target_feature = \"sm_90a\"))] and build the crate for sm_90a too (Builder::new(dir).specific(Arch::SM_90A) in build.rs)"
        )
    };
    // Both K-major: 8-row groups of 128-byte rows 1024 bytes apart (SBO), LBO unused.
    let da = desc_sw128(a.addr() + (row0 * 128) as u32, A_LBO, A_SBO);
    let db = desc_sw128(b.addr(), A_LBO, A_SBO);
    // SAFETY: as in `mma_k_tile_async`: every lane of this warp here (checked), the
    // descriptors name rows row0.. of A and all N rows of B, 1024-aligned tiles of a stage
    // whose TMA copies completed (its barrier phase), the accumulators passed only to the
    // next MMA or a wait; the stage is released only after this group retired.
    unsafe {
        raw::fence();
        crate::unroll!(ks in 0..4; max 4 => {
            let (a_ks, b_ks) = (da + (ks as u64 * 32 >> 4), db + (ks as u64 * 32 >> 4));
            match N {
                64 => raw::mma_m64n64k8_tf32(sub(acc), a_ks, b_ks, true),
                128 => raw::mma_m64n128k8_tf32(sub(acc), a_ks, b_ks, true),
                _ => raw::mma_m64n256k8_tf32(acc, a_ks, b_ks, true),
            }
        });
        raw::commit_group();
        match N {
            64 => raw::wait_group_1_64(sub(acc)),
            128 => raw::wait_group_1_128(sub(acc)),
            _ => raw::wait_group_1_256(acc),
        }
    }
}

/// `wgmma.wait_group 0` with the accumulators passing through.
#[inline(always)]
pub(super) fn wait_all<const N: usize>(acc: &mut [f32; 128]) {
    // SAFETY: a wait; every thread of the warpgroup runs it where it runs the MMAs before
    // it (`mma_k_tile`, `WgInFlight::wait`/drop after `mma_async`), converged as they were.
    unsafe {
        match N {
            64 => raw::wait_group_64(sub(acc)),
            128 => raw::wait_group_128(sub(acc)),
            _ => raw::wait_group_256(acc),
        }
    }
}

/// The first `K` accumulators.
#[inline(always)]
fn sub<const K: usize>(acc: &mut [f32; 128]) -> &mut [f32; K] {
    (&mut acc[..K]).try_into().expect("K <= 128")
}
