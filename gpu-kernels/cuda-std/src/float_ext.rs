//! `cuda_std::FloatExt`: the libdevice functions std does not have, under
//! cuda_std's method names. Each forwards to
//! [`sluice_device::math::DeviceFloat`], whose names follow C's (the table
//! below maps them): libdevice on the device, its CPU implementations on the
//! host (`libm`, and for what C lacks, `erfcx`, `normcdfinv`, `sinpi`, ...,
//! sluice's own, computed in `f64`).
//!
//! | `FloatExt` | `DeviceFloat` | libdevice |
//! | --- | --- | --- |
//! | `cospi`, `sinpi`, `sincospi` | `cos_pi`, `sin_pi`, `sin_cos_pi` | `cospi`, `sinpi`, `sincospi` |
//! | `error_function`, `complementary_error_function` | `erf`, `erfc` | `erf`, `erfc` |
//! | `inv_complementary_error_function`, `scaled_complementary_error_function` | `erfc_inv`, `erfcx` | `erfcinv`, `erfcx` |
//! | `frexp`, `unbiased_exp`, `ldexp`, `scale_by_n` | `frexp`, `ilogb`, `ldexp`, `scalbn` | same |
//! | `j0`, `j1`, `jn(n)`, `y0`, `y1`, `yn(n)` | same | `j0` … `yn` |
//! | `log_gamma`, `gamma`, `log1p` | `ln_gamma`, `gamma`, `ln_1p` | `lgamma`, `tgamma`, `log1p` |
//! | `norm_cdf`, `inv_norm_cdf` | `normcdf`, `normcdfinv` | same |
//! | `rcbrt`, `saturate` | same | `rcbrt`, `saturatef` (f64: `fmin(fmax(x, 0), 1)`, NaN → 0) |

mod sealed {
    pub trait Sealed {}
    impl Sealed for f32 {}
    impl Sealed for f64 {}
}

macro_rules! float_ext {
    ($(#[$doc:meta] fn $name:ident(self $(, $a:ident: $at:ty)*) -> $r:ty => $dev:ident;)*) => {
        /// Special functions of libdevice on `f32`/`f64` (Rust-CUDA's `FloatExt`).
        pub trait FloatExt: Sized + sealed::Sealed {
            $(
                #[$doc]
                fn $name(self $(, $a: $at)*) -> $r;
            )*
        }

        macro_rules! float_impl {
            ($t:ty) => {
                impl FloatExt for $t {
                    $(
                        #[inline(always)]
                        fn $name(self $(, $a: $at)*) -> $r {
                            <$t as sluice_device::math::DeviceFloat>::$dev(self $(, $a)*)
                        }
                    )*
                }
            };
        }
    };
}

float_ext! {
    /// cos(πx).
    fn cospi(self) -> Self => cos_pi;
    /// erf(x).
    fn error_function(self) -> Self => erf;
    /// erfc(x) = 1 - erf(x).
    fn complementary_error_function(self) -> Self => erfc;
    /// erfc⁻¹(x).
    fn inv_complementary_error_function(self) -> Self => erfc_inv;
    /// exp(x²)·erfc(x).
    fn scaled_complementary_error_function(self) -> Self => erfcx;
    /// `(m, e)` with `x = m·2^e`, `0.5 <= |m| < 1`.
    fn frexp(self) -> (Self, i32) => frexp;
    /// The unbiased exponent (`ilogb`).
    fn unbiased_exp(self) -> i32 => ilogb;
    /// Bessel J0.
    fn j0(self) -> Self => j0;
    /// Bessel J1.
    fn j1(self) -> Self => j1;
    /// Bessel Jn of order `order`.
    fn jn(self, order: i32) -> Self => jn;
    /// x·2^exp.
    fn ldexp(self, exp: i32) -> Self => ldexp;
    /// ln|Γ(x)|.
    fn log_gamma(self) -> Self => ln_gamma;
    /// ln(1 + x).
    fn log1p(self) -> Self => ln_1p;
    /// Φ(x), the standard normal CDF.
    fn norm_cdf(self) -> Self => normcdf;
    /// Φ⁻¹(x).
    fn inv_norm_cdf(self) -> Self => normcdfinv;
    /// 1/cbrt(x).
    fn rcbrt(self) -> Self => rcbrt;
    /// x clamped to [0, 1], NaN to 0.
    fn saturate(self) -> Self => saturate;
    /// x·2^exp (`scalbn`).
    fn scale_by_n(self, exp: i32) -> Self => scalbn;
    /// `(sin(πx), cos(πx))`.
    fn sincospi(self) -> (Self, Self) => sin_cos_pi;
    /// sin(πx).
    fn sinpi(self) -> Self => sin_pi;
    /// Γ(x).
    fn gamma(self) -> Self => gamma;
    /// Bessel Y0.
    fn y0(self) -> Self => y0;
    /// Bessel Y1.
    fn y1(self) -> Self => y1;
    /// Bessel Yn of order `order`.
    fn yn(self, order: i32) -> Self => yn;
}

float_impl!(f32);
float_impl!(f64);
