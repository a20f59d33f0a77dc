//! The half-precision conversions on the device: one `cvt` each.

use core::arch::asm;

#[inline(always)]
pub(super) fn bf16_from_f32(x: f32) -> u16 {
    let r: u16;
    // SAFETY: a register-only conversion (sm_80+, which sluice's targets are).
    unsafe {
        asm!("cvt.rn.bf16.f32 {r}, {x};", r = out(reg16) r, x = in(reg32) x, options(pure, nomem, nostack, preserves_flags))
    };
    r
}

#[inline(always)]
pub(super) fn f16_from_f32(x: f32) -> u16 {
    let r: u16;
    // SAFETY: a register-only conversion.
    unsafe {
        asm!("cvt.rn.f16.f32 {r}, {x};", r = out(reg16) r, x = in(reg32) x, options(pure, nomem, nostack, preserves_flags))
    };
    r
}

#[inline(always)]
pub(super) fn f16_to_f32(bits: u16) -> f32 {
    let r: f32;
    // SAFETY: a register-only conversion.
    unsafe {
        asm!("cvt.f32.f16 {r}, {x};", r = out(reg32) r, x = in(reg16) bits, options(pure, nomem, nostack, preserves_flags))
    };
    r
}

#[inline(always)]
pub(super) fn bf16x2_from_f32(lo: f32, hi: f32) -> u32 {
    let r: u32;
    // SAFETY: a register-only conversion; PTX's operand order is (high, low).
    unsafe {
        asm!("cvt.rn.bf16x2.f32 {r}, {hi}, {lo};", r = out(reg32) r, hi = in(reg32) hi, lo = in(reg32) lo, options(pure, nomem, nostack, preserves_flags))
    };
    r
}

#[inline(always)]
pub(super) fn f16x2_from_f32(lo: f32, hi: f32) -> u32 {
    let r: u32;
    // SAFETY: a register-only conversion; PTX's operand order is (high, low).
    unsafe {
        asm!("cvt.rn.f16x2.f32 {r}, {hi}, {lo};", r = out(reg32) r, hi = in(reg32) hi, lo = in(reg32) lo, options(pure, nomem, nostack, preserves_flags))
    };
    r
}
