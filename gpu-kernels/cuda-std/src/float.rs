//! `cuda_std::float::GpuFloat`: std's float methods for `no_std` kernels.
//!
//! Every method is [`sluice_device::math::DeviceFloat`]'s: on the device
//! libdevice's, or one PTX instruction; on the host (the CPU runtime, and any
//! host code) the CPU implementations of the same functions (`libm`, musl's
//! functions), so a kernel computes the same things on both backends. The trait has
//! exactly cuda_std's method set, so `use cuda_std::*;` (which also brings
//! [`FloatExt`](crate::FloatExt)) never makes a call ambiguous.

mod sealed {
    pub trait Sealed {}
    impl Sealed for f32 {}
    impl Sealed for f64 {}
}

macro_rules! gpu_float {
    ($(#[$doc:meta] fn $name:ident(self $(, $a:ident: $at:ty)*) -> $r:ty;)*) => {
        /// std's float methods on `f32` and `f64`, usable in `no_std` kernels
        /// (Rust-CUDA's `GpuFloat`). Accuracy: [`sluice_device::math`].
        pub trait GpuFloat: Copy + PartialOrd + sealed::Sealed {
            $(
                #[$doc]
                #[must_use = "method returns a new number and does not mutate the original value"]
                fn $name(self $(, $a: $at)*) -> $r;
            )*
        }

        macro_rules! float_impl {
            ($t:ty) => {
                impl GpuFloat for $t {
                    $(
                        #[inline(always)]
                        fn $name(self $(, $a: $at)*) -> $r {
                            <$t as sluice_device::math::DeviceFloat>::$name(self $(, $a)*)
                        }
                    )*
                }
            };
        }
    };
}

gpu_float! {
    /// Largest integer <= x.
    fn floor(self) -> Self;
    /// Smallest integer >= x.
    fn ceil(self) -> Self;
    /// Nearest integer, halves away from zero.
    fn round(self) -> Self;
    /// Integer part (towards zero).
    fn trunc(self) -> Self;
    /// `x - x.trunc()`.
    fn fract(self) -> Self;
    /// |x|.
    fn abs(self) -> Self;
    /// 1.0 with the sign of x; NaN for NaN.
    fn signum(self) -> Self;
    /// |x| with the sign of `sign`.
    fn copysign(self, sign: Self) -> Self;
    /// `self * a + b`, one rounding.
    fn mul_add(self, a: Self, b: Self) -> Self;
    /// Euclidean quotient.
    fn div_euclid(self, rhs: Self) -> Self;
    /// Least non-negative remainder.
    fn rem_euclid(self, rhs: Self) -> Self;
    /// x^n.
    fn powi(self, n: i32) -> Self;
    /// x^y.
    fn powf(self, n: Self) -> Self;
    /// Square root, correctly rounded.
    fn sqrt(self) -> Self;
    /// e^x.
    fn exp(self) -> Self;
    /// 2^x.
    fn exp2(self) -> Self;
    /// Natural logarithm.
    fn ln(self) -> Self;
    /// Logarithm in base `base`.
    fn log(self, base: Self) -> Self;
    /// Base-2 logarithm.
    fn log2(self) -> Self;
    /// Base-10 logarithm.
    fn log10(self) -> Self;
    /// Cube root.
    fn cbrt(self) -> Self;
    /// sqrt(x² + y²).
    fn hypot(self, other: Self) -> Self;
    /// Sine.
    fn sin(self) -> Self;
    /// Cosine.
    fn cos(self) -> Self;
    /// Tangent.
    fn tan(self) -> Self;
    /// Arcsine.
    fn asin(self) -> Self;
    /// Arccosine.
    fn acos(self) -> Self;
    /// Arctangent.
    fn atan(self) -> Self;
    /// Four-quadrant arctangent of `self / other`.
    fn atan2(self, other: Self) -> Self;
    /// `(sin x, cos x)`.
    fn sin_cos(self) -> (Self, Self);
    /// e^x - 1.
    fn exp_m1(self) -> Self;
    /// ln(1 + x).
    fn ln_1p(self) -> Self;
    /// Hyperbolic sine.
    fn sinh(self) -> Self;
    /// Hyperbolic cosine.
    fn cosh(self) -> Self;
    /// Hyperbolic tangent.
    fn tanh(self) -> Self;
    /// Inverse hyperbolic sine.
    fn asinh(self) -> Self;
    /// Inverse hyperbolic cosine.
    fn acosh(self) -> Self;
    /// Inverse hyperbolic tangent.
    fn atanh(self) -> Self;
}

float_impl!(f32);
float_impl!(f64);

#[cfg(all(test, not(target_arch = "nvptx64")))]
mod tests {
    use super::GpuFloat;

    #[test]
    fn host_methods_are_device_floats() {
        assert_eq!(GpuFloat::fract(-2.75f32), -0.75);
        assert_eq!(GpuFloat::div_euclid(-7.0f64, 2.0), -4.0);
        assert_eq!(GpuFloat::rem_euclid(-7.0f32, 2.0), 1.0);
        assert!((GpuFloat::log(8.0f64, 2.0) - 3.0).abs() < 1e-15);
        let (s, c) = GpuFloat::sin_cos(0.0f32);
        assert_eq!((s, c), (0.0, 1.0));
    }
}
