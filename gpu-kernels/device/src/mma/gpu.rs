//! The warp MMA on the GPU: one instruction per operation (`raw.rs`), each predicated on
//! the batch's check (`activemask` all ones, the region inside its tile), so that a batch
//! is straight-line code whether or not it runs.

use super::{Accum, Col, FragA, FragB, MmaKind, MmaOp, Row, Shape};

#[path = "raw.rs"]
mod raw;

/// Whether all 32 lanes execute this together (`Warp::whole`'s check).
#[inline(always)]
pub(super) fn whole_warp_here() -> bool {
    raw::active_mask() == u32::MAX
}

/// A batch's check: `(whole, inside)`, whether all 32 lanes execute it together and, if
/// so, whether `inside` holds in every lane. Warp-uniform (one `activemask` and one
/// `vote.sync.all` over the active lanes), so the batch's predicate `whole && inside` is
/// the same in every lane that runs it: a region that is inside in some lanes and not in
/// others skips the batch in all of them.
#[inline(always)]
pub(super) fn batch_check(inside: bool) -> (bool, bool) {
    let r = raw::batch_check(inside as u32);
    (r & 1 != 0, r & 2 != 0)
}

/// Nothing on the GPU: a region outside its tile is a recorded fault (the batch is skipped).
#[inline(always)]
pub(super) fn require_inside(_inside: bool) {}

#[inline(always)]
pub(super) fn to_tf32(x: f32) -> u32 {
    raw::cvt_tf32(x)
}

/// The first `count` of `N` `ldmatrix` of `X` matrices, lane row addresses `addrs`, run
/// only if `run`.
#[inline(always)]
pub(super) fn ldmatrix<const X: usize, const TRANS: bool, const N: usize>(
    addrs: [u32; N],
    count: usize,
    run: bool,
) -> [[u32; X]; N] {
    let p = run as u32;
    let mut out = [[0u32; X]; N];
    crate::unroll!(n in 0..N; max 16 => {
        if n < count {
            let a = addrs[n];
            // SAFETY: `p` is non-zero only if all 32 lanes execute this batch together
            // (`activemask`, read at the batch's start, with no branch since) and every
            // lane's address is a 16-byte row inside a tile of this block's shared memory
            // (`Warp::load_*` checked the region in each lane, `batch_check` voted on it);
            // `p` is the same in every lane, so with `p` zero no lane runs it.
            unsafe {
                match (X, TRANS) {
                    (1, false) => out[n][0] = raw::ldmatrix_x1(a, p)[0],
                    (1, true) => out[n][0] = raw::ldmatrix_x1_trans(a, p)[0],
                    (2, false) => out[n][..2].copy_from_slice(&raw::ldmatrix_x2(a, p)),
                    (2, true) => out[n][..2].copy_from_slice(&raw::ldmatrix_x2_trans(a, p)),
                    (_, false) => out[n][..4].copy_from_slice(&raw::ldmatrix_x4(a, p)),
                    (_, true) => out[n][..4].copy_from_slice(&raw::ldmatrix_x4_trans(a, p)),
                }
            }
        }
    });
    out
}

/// `acc[i][j] += a[i] · b[j]`, one `mma.sync` each, run only if `run`.
#[inline(always)]
pub(super) fn mma_grid<E: MmaOp<S>, S: Shape, const MI: usize, const NI: usize>(
    acc: &mut [[Accum<S>; NI]; MI],
    a: &[FragA<E, S, Row>; MI],
    b: &[FragB<E, S, Col>; NI],
    run: bool,
) {
    let p = run as u32;
    crate::unroll!(i in 0..MI; max 8 => {
        crate::unroll!(j in 0..NI; max 16 => {
            let (d, x, y) = (&mut acc[i][j].regs, a[i].regs, b[j].regs);
            // SAFETY: as in `ldmatrix`: `p` non-zero only with all 32 lanes here; the
            // fragments are registers (their layout is the types' business).
            unsafe {
                match E::KIND {
                    MmaKind::Bf16 => raw::mma_m16n8k16_bf16(d, x, y, p),
                    MmaKind::F16 => raw::mma_m16n8k16_f16(d, x, y, p),
                    MmaKind::Tf32 => raw::mma_m16n8k8_tf32(d, x, y, p),
                }
            }
        });
    });
}
