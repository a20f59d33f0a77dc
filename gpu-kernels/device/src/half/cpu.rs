//! The half-precision conversions on the host: the `half` crate's (round to nearest, ties
//! to even, as the GPU's `cvt.rn`).

use ::half::{bf16, f16};

#[inline(always)]
pub(super) fn bf16_from_f32(x: f32) -> u16 {
    bf16::from_f32(x).to_bits()
}

#[inline(always)]
pub(super) fn f16_from_f32(x: f32) -> u16 {
    f16::from_f32(x).to_bits()
}

#[inline(always)]
pub(super) fn f16_to_f32(bits: u16) -> f32 {
    f16::from_bits(bits).to_f32()
}

#[inline(always)]
pub(super) fn bf16x2_from_f32(lo: f32, hi: f32) -> u32 {
    bf16_from_f32(lo) as u32 | (bf16_from_f32(hi) as u32) << 16
}

#[inline(always)]
pub(super) fn f16x2_from_f32(lo: f32, hi: f32) -> u32 {
    f16_from_f32(lo) as u32 | (f16_from_f32(hi) as u32) << 16
}
