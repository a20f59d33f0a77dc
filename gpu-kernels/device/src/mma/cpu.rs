//! The warp MMA on the CPU runtime, as a warp collective over the public warp operations:
//! `active_mask` for the convergence check, then shuffles that gather the lanes' row
//! addresses (`ldmatrix`) or fragments (`mma`); shared memory is read through
//! [`SharedPtr`] (bounds-checked, seen by a race checker), the product is
//! [`spec::mma::mma_f32`](crate::spec::mma::mma_f32).

use crate::shared::SharedPtr;
use crate::spec::mma as spec;
use crate::warp::{self, FULL_MASK};

use super::{bf16, f16, MmaOp, Tf32, M16N8K16, M16N8K8};

/// Whether all 32 lanes arrived here together (the runtime's `active_mask`).
#[track_caller]
pub(super) fn converged() -> bool {
    warp::active_mask() == FULL_MASK
}

#[track_caller]
fn shfl<T: warp::Shuffle>(v: T, src: u32) -> T {
    // SAFETY: every caller runs after `converged()` said all 32 lanes are here, and every
    // lane runs the same sequence of shuffles.
    unsafe { warp::shfl_idx(FULL_MASK, v, src) }
}

/// `d += a · b` for the operation `E`/`S`: every lane gathers all fragments and computes
/// its own four outputs from the whole matrices.
#[track_caller]
fn mma<E: MmaOp<S>, S: super::Shape, const K: usize>(d: &mut [f32; 4], a: [u32; 4], b: [u32; 2]) {
    let mut am = [[0f32; K]; 16];
    let mut bm = [[0f32; 8]; K];
    let mine = a[0] as u128 | (a[1] as u128) << 32 | (a[2] as u128) << 64 | (a[3] as u128) << 96;
    let mine_b = b[0] as u64 | (b[1] as u64) << 32;
    for lane in 0..32u32 {
        let ra = shfl(mine, lane);
        let rb = shfl(mine_b, lane);
        for i in 0..4u32 {
            let reg = (ra >> (32 * i)) as u32;
            for h in 0..E::PER_REG as u32 {
                let (r, c) = E::__a_pos(lane, i, h);
                am[r as usize][c as usize] = E::__value(reg, h as usize);
            }
        }
        for i in 0..2u32 {
            let reg = (rb >> (32 * i)) as u32;
            for h in 0..E::PER_REG as u32 {
                let (k, n) = E::__b_pos(lane, i, h);
                bm[k as usize][n as usize] = E::__value(reg, h as usize);
            }
        }
    }
    let me = warp_lane();
    let mut c = [[0f32; 8]; 16];
    for (i, v) in d.iter().enumerate() {
        let (r, col) = spec::c_elem(me, i as u32);
        c[r as usize][col as usize] = *v;
    }
    let out = spec::mma_f32::<K>(&am, &bm, &c);
    for (i, v) in d.iter_mut().enumerate() {
        let (r, col) = spec::c_elem(me, i as u32);
        *v = out[r as usize][col as usize];
    }
}

#[track_caller]
fn warp_lane() -> u32 {
    crate::thread::block_rank() % 32
}

#[track_caller]
pub(super) fn mma_bf16(d: &mut [f32; 4], a: [u32; 4], b: [u32; 2]) {
    mma::<bf16, M16N8K16, 16>(d, a, b)
}

#[track_caller]
pub(super) fn mma_f16(d: &mut [f32; 4], a: [u32; 4], b: [u32; 2]) {
    mma::<f16, M16N8K16, 16>(d, a, b)
}

#[track_caller]
pub(super) fn mma_tf32(d: &mut [f32; 4], a: [u32; 4], b: [u32; 2]) {
    mma::<Tf32, M16N8K8, 8>(d, a, b)
}

pub(super) fn to_tf32(x: f32) -> u32 {
    spec::to_tf32(x).to_bits()
}

/// `ldmatrix`: lane `(g, t)` reads, for matrix `j`, the 32-bit word `t` of row `g` (the
/// address lane `8j + g` gave), or with `.trans` the 16-bit element `g` of rows `2t` and
/// `2t + 1`.
#[track_caller]
pub(super) fn ldmatrix<const X: usize, const TRANS: bool>(addr: u32) -> [u32; X] {
    let lane = warp_lane();
    let (g, t) = spec::group(lane);
    core::array::from_fn(|j| {
        let j = j as u32;
        if TRANS {
            let r0 = shfl(addr, 8 * j + 2 * t);
            let r1 = shfl(addr, 8 * j + 2 * t + 1);
            // SAFETY: each address is a 16-byte row of a tile (`Warp::ldsm` checked it);
            // the runtime bounds-checks every shared access anyway.
            let (lo, hi) = unsafe {
                (SharedPtr::<u16>::from_addr(r0 + 2 * g).read(), SharedPtr::<u16>::from_addr(r1 + 2 * g).read())
            };
            lo as u32 | (hi as u32) << 16
        } else {
            let r = shfl(addr, 8 * j + g);
            // SAFETY: as above.
            unsafe { SharedPtr::<u32>::from_addr(r + 4 * t).read() }
        }
    })
}
