//! Half-precision floats: [`f16`] (IEEE binary16) and [`bf16`] (bfloat16), the element
//! types of the tensor cores ([`crate::mma`]).
//!
//! They are the [`half`](https://docs.rs/half) crate's types, re-exported, in the kernels
//! and on the host alike: a `DeviceBuffer<bf16>` uploaded from a `Vec<half::bf16>` is read
//! by a kernel's `&[bf16]` parameter with the same bits, and both are `bytemuck::Pod`
//! (kernel parameters, views, copies and shared tiles take them as any other element).
//! `half`'s own conversions work everywhere (in software); the functions here convert with
//! the GPU's instructions on the device and with `half` on the host, with the same result
//! (round to nearest, ties to even).
//!
//! | sluice | CUDA C++ | PTX |
//! | --- | --- | --- |
//! | [`to_f32`]`(bf16)`, [`to_f32`]`(f16)` | `__bfloat162float`, `__half2float` | `cvt.f32.bf16`, `cvt.f32.f16` |
//! | [`Half::from_f32`] | `__float2bfloat16_rn`, `__float2half_rn` | `cvt.rn.bf16.f32`, `cvt.rn.f16.f32` |
//! | [`pack2`] | `__floats2bfloat162_rn`, `__floats2half2_rn` | `cvt.rn.bf16x2.f32`, `cvt.rn.f16x2.f32` |
//!
//! # Hardware support
//!
//! `f16` conversions: every GPU sluice builds for; `bf16` conversions: `sm_80` and later
//! (the `bf16x2` form and `cvt.f32.bf16` need PTX 7.8 on `sm_90`; older targets use a
//! shift).
//!
//! # On the CPU
//!
//! The same functions through `half` (round to nearest even, as the GPU's `.rn`); NaN
//! payloads may differ (the GPU returns the canonical NaN).
//!
//! # Example (device code)
//!
//! ```
//! use sluice_device::half::{bf16, pack2, to_f32, Half};
//! let x = bf16::from_f32_rn(1.5);
//! assert_eq!(to_f32(x), 1.5);
//! let pair = pack2::<bf16>(1.0, -2.0);   // low half: 1.0, high half: -2.0
//! assert_eq!(pair & 0xffff, 0x3f80);
//! ```

pub use ::half::{bf16, f16};

#[cfg_attr(target_arch = "nvptx64", path = "gpu.rs")]
#[cfg_attr(not(target_arch = "nvptx64"), path = "cpu.rs")]
mod imp;

/// The two 16-bit float types, with conversions from and to `f32` that use the GPU's
/// instructions on the device. Sealed: implemented for [`f16`] and [`bf16`].
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a half-precision float",
    label = "not f16 or bf16",
    note = "the half-precision types are sluice_device::half::f16 and bf16 (the `half` crate's)"
)]
pub trait Half: Copy + bytemuck::Pod + sealed::Sealed {
    /// `x` rounded to the nearest value of this type (ties to even).
    fn from_f32_rn(x: f32) -> Self;
    /// The value as an `f32` (exact).
    fn to_f32(self) -> f32;
    /// The bits.
    fn to_bits16(self) -> u16;
    /// The value of these bits.
    fn from_bits16(bits: u16) -> Self;
    #[doc(hidden)]
    fn __pack2(lo: f32, hi: f32) -> u32;
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for super::f16 {}
    impl Sealed for super::bf16 {}
}

impl Half for bf16 {
    #[inline(always)]
    fn from_f32_rn(x: f32) -> bf16 {
        bf16::from_bits(imp::bf16_from_f32(x))
    }
    #[inline(always)]
    fn to_f32(self) -> f32 {
        // Exact: a bf16 is the high half of an f32.
        f32::from_bits((self.to_bits() as u32) << 16)
    }
    #[inline(always)]
    fn to_bits16(self) -> u16 {
        self.to_bits()
    }
    #[inline(always)]
    fn from_bits16(bits: u16) -> bf16 {
        bf16::from_bits(bits)
    }
    #[inline(always)]
    fn __pack2(lo: f32, hi: f32) -> u32 {
        imp::bf16x2_from_f32(lo, hi)
    }
}

impl Half for f16 {
    #[inline(always)]
    fn from_f32_rn(x: f32) -> f16 {
        f16::from_bits(imp::f16_from_f32(x))
    }
    #[inline(always)]
    fn to_f32(self) -> f32 {
        imp::f16_to_f32(self.to_bits())
    }
    #[inline(always)]
    fn to_bits16(self) -> u16 {
        self.to_bits()
    }
    #[inline(always)]
    fn from_bits16(bits: u16) -> f16 {
        f16::from_bits(bits)
    }
    #[inline(always)]
    fn __pack2(lo: f32, hi: f32) -> u32 {
        imp::f16x2_from_f32(lo, hi)
    }
}

/// `x` as an `f32` (exact).
///
/// ```
/// use sluice_device::half::{f16, to_f32};
/// assert_eq!(to_f32(f16::from_f32(0.25)), 0.25);
/// ```
#[inline(always)]
pub fn to_f32<H: Half>(x: H) -> f32 {
    x.to_f32()
}

/// Two `f32`s rounded to `H` and packed into one 32-bit register, `lo` in the low half:
/// the layout of a pair in an MMA fragment.
///
/// ```
/// use sluice_device::half::{f16, pack2};
/// assert_eq!(pack2::<f16>(1.0, 2.0), 0x4000_3c00);
/// ```
#[inline(always)]
pub fn pack2<H: Half>(lo: f32, hi: f32) -> u32 {
    H::__pack2(lo, hi)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conversions_match_half() {
        for x in [0.0f32, -0.0, 1.0, 1.0 + 1.0 / 256.0, 2.71, -65504.0, 1e-8, 70000.0, f32::INFINITY] {
            assert_eq!(bf16::from_f32_rn(x), bf16::from_f32(x), "{x}");
            assert_eq!(f16::from_f32_rn(x), f16::from_f32(x), "{x}");
            assert_eq!(bf16::from_f32(x).to_f32(), Half::to_f32(bf16::from_f32(x)));
            assert_eq!(f16::from_f32(x).to_f32(), Half::to_f32(f16::from_f32(x)));
        }
        assert_eq!(pack2::<bf16>(1.0, -2.0), 0xc000_3f80);
    }

    #[test]
    fn half_types_are_pod() {
        let v = [bf16::from_f32(1.0), bf16::from_f32(2.0)];
        let bytes: &[u8] = bytemuck::cast_slice(&v);
        assert_eq!(bytes, &[0x80, 0x3f, 0x00, 0x40]);
    }
}
