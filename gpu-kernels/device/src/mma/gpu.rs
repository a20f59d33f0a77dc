//! The warp MMA on the GPU: one instruction per operation (`raw.rs`), a batch of them run
//! inside one branch on the batch's check (`activemask` all ones), taken by every lane or
//! by none.

use super::{Accum, Col, FragA, FragB, MmaKind, MmaOp, Row, Shape};

#[path = "raw.rs"]
mod raw;

/// Whether all 32 lanes execute this together (`Warp::whole`'s check, and each batch's).
/// The same answer in every lane that runs it (`activemask` names the lanes executing it
/// together), so a branch on it is warp-uniform.
#[inline(always)]
pub(super) fn whole_warp_here() -> bool {
    raw::active_mask() == u32::MAX
}

/// A batch's check: whether all 32 lanes execute it together (as [`whole_warp_here`]).
#[inline(always)]
pub(super) fn batch_whole() -> bool {
    whole_warp_here()
}

/// Nothing on the GPU: `Warp::enter` ends the kernel on a region outside its tile.
#[inline(always)]
pub(super) fn require_inside(_inside: bool) {}

#[inline(always)]
pub(super) fn to_tf32(x: f32) -> u32 {
    raw::cvt_tf32(x)
}

/// The first `count` of `N` `ldmatrix` of `X` matrices, lane row addresses `addrs`, run
/// only if `run` (zeros otherwise): one branch around the batch, not a predicate per
/// instruction.
#[inline(always)]
pub(super) fn ldmatrix<const X: usize, const TRANS: bool, const N: usize>(
    addrs: [u32; N],
    count: usize,
    run: bool,
) -> [[u32; X]; N] {
    let mut out = [[0u32; X]; N];
    if run {
        crate::unroll!(n in 0..N; max 16 => {
            if n < count {
                let a = addrs[n];
                // SAFETY: `run` is true only if all 32 lanes execute this batch together
                // (`Warp::enter`: `activemask`, read after the lanes whose region is outside
                // their tile turned away, and no branch since but this one, on that same
                // warp-uniform answer) and every lane's address is a 16-byte row inside a
                // tile of this block's shared memory (`Warp::load_*` checked the region in
                // each lane; a lane outside ended the kernel, so the others are not whole).
                unsafe {
                    match (X, TRANS) {
                        (1, false) => out[n][0] = raw::ldmatrix_x1(a)[0],
                        (1, true) => out[n][0] = raw::ldmatrix_x1_trans(a)[0],
                        (2, false) => out[n][..2].copy_from_slice(&raw::ldmatrix_x2(a)),
                        (2, true) => out[n][..2].copy_from_slice(&raw::ldmatrix_x2_trans(a)),
                        (_, false) => out[n][..4].copy_from_slice(&raw::ldmatrix_x4(a)),
                        (_, true) => out[n][..4].copy_from_slice(&raw::ldmatrix_x4_trans(a)),
                    }
                }
            }
        });
    }
    out
}

/// `acc[i][j] += a[i] · b[j]`, one `mma.sync` each, run only if `run` (one branch around
/// the batch).
#[inline(always)]
pub(super) fn mma_grid<E: MmaOp<S>, S: Shape, const MI: usize, const NI: usize>(
    acc: &mut [[Accum<S>; NI]; MI],
    a: &[FragA<E, S, Row>; MI],
    b: &[FragB<E, S, Col>; NI],
    run: bool,
) {
    if run {
        crate::unroll!(i in 0..MI; max 8 => {
            crate::unroll!(j in 0..NI; max 16 => {
                let (d, x, y) = (&mut acc[i][j].regs, a[i].regs, b[j].regs);
                // SAFETY: as in `ldmatrix`: `run` is true only with all 32 lanes here; the
                // fragments are registers (their layout is the types' business).
                unsafe {
                    match E::KIND {
                        MmaKind::Bf16 => raw::mma_m16n8k16_bf16(d, x, y),
                        MmaKind::F16 => raw::mma_m16n8k16_f16(d, x, y),
                        MmaKind::Tf32 => raw::mma_m16n8k8_tf32(d, x, y),
                    }
                }
            });
        });
    }
}
