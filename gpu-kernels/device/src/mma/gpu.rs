//! The warp MMA on the GPU: one instruction per operation ([`super::raw`]).

use super::raw;

/// Whether all 32 lanes execute this together.
#[inline(always)]
pub(super) fn converged() -> bool {
    raw::active_mask() == u32::MAX
}

#[inline(always)]
pub(super) fn mma_bf16(d: &mut [f32; 4], a: [u32; 4], b: [u32; 2]) {
    // SAFETY: the caller (`Warp`) checked that the whole warp runs this together.
    unsafe { raw::mma_m16n8k16_bf16(d, a, b) }
}

#[inline(always)]
pub(super) fn mma_f16(d: &mut [f32; 4], a: [u32; 4], b: [u32; 2]) {
    // SAFETY: as `mma_bf16`.
    unsafe { raw::mma_m16n8k16_f16(d, a, b) }
}

#[inline(always)]
pub(super) fn mma_tf32(d: &mut [f32; 4], a: [u32; 4], b: [u32; 2]) {
    // SAFETY: as `mma_bf16`.
    unsafe { raw::mma_m16n8k8_tf32(d, a, b) }
}

#[inline(always)]
pub(super) fn to_tf32(x: f32) -> u32 {
    raw::cvt_tf32(x)
}

/// `ldmatrix` of `X` matrices at this lane's row address `addr`.
#[inline(always)]
pub(super) fn ldmatrix<const X: usize, const TRANS: bool>(addr: u32) -> [u32; X] {
    let mut out = [0u32; X];
    // SAFETY: the caller (`Warp::ldsm`) checked convergence and that the address is a
    // 16-byte-aligned row inside a tile of this block's shared memory.
    unsafe {
        match (X, TRANS) {
            (1, false) => out[0] = raw::ldmatrix_x1(addr)[0],
            (1, true) => out[0] = raw::ldmatrix_x1_trans(addr)[0],
            (2, false) => out.copy_from_slice(&raw::ldmatrix_x2(addr)),
            (2, true) => out.copy_from_slice(&raw::ldmatrix_x2_trans(addr)),
            (_, false) => out.copy_from_slice(&raw::ldmatrix_x4(addr)),
            (_, true) => out.copy_from_slice(&raw::ldmatrix_x4_trans(addr)),
        }
    }
    out
}
