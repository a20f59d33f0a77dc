//! `math` on the GPU: [`DeviceFloat`] and [`FastFloat`] over libdevice
//! ([`super::libdevice`]), LLVM's intrinsics (one instruction each) and the
//! `.approx` instructions of the special-function units.

use super::libdevice::*;
use super::{DeviceFloat, FastFloat};
use crate::spec::math as euclid;
use core::arch::asm;
use core::intrinsics;

macro_rules! float_impl {
    ($t:ty, $sqrt:ident, $fma:ident, $floor:ident, $ceil:ident, $trunc:ident, $copysign:ident,
     { $($m:ident($($a:ident: $at:ty),*) => $f:ident;)* }, $sincos:ident, $($extra:tt)*) => {
        impl DeviceFloat for $t {
            $($extra)*
            #[inline(always)]
            fn sqrt(self) -> Self {
                intrinsics::$sqrt(self)
            }
            #[inline(always)]
            fn mul_add(self, a: Self, b: Self) -> Self {
                intrinsics::$fma(self, a, b)
            }
            #[inline(always)]
            fn floor(self) -> Self {
                intrinsics::$floor(self)
            }
            #[inline(always)]
            fn ceil(self) -> Self {
                intrinsics::$ceil(self)
            }
            #[inline(always)]
            fn trunc(self) -> Self {
                intrinsics::$trunc(self)
            }
            #[inline(always)]
            fn abs(self) -> Self {
                <$t>::abs(self)
            }
            #[inline(always)]
            fn copysign(self, sign: Self) -> Self {
                intrinsics::$copysign(self, sign)
            }
            #[inline(always)]
            fn signum(self) -> Self {
                if self.is_nan() {
                    self
                } else {
                    intrinsics::$copysign(1.0, self)
                }
            }
            #[inline(always)]
            fn min(self, other: Self) -> Self {
                <$t>::min(self, other)
            }
            #[inline(always)]
            fn max(self, other: Self) -> Self {
                <$t>::max(self, other)
            }
            #[inline(always)]
            fn sin_cos(self) -> (Self, Self) {
                let (mut s, mut c) = (0.0, 0.0);
                // SAFETY: both pointers are to live locals, written once by libdevice.
                unsafe { $sincos(self, &mut s, &mut c) };
                (s, c)
            }
            $(
                #[inline(always)]
                fn $m(self $(, $a: $at)*) -> Self {
                    $f(self $(, $a)*)
                }
            )*
        }
    };
}

/// The methods beyond libdevice's one-to-one wrappers, as items of the
/// `impl DeviceFloat` block.
macro_rules! float_extra {
    ($t:ty, $m:ident, $trunc:ident, $fmod:ident, $log:ident, $frexp:ident, $sincospi:ident, $jn:ident, $yn:ident,
     { $($name:ident($($a:ident: $at:ty),*) -> $r:ty => $f:ident;)* }, |$x:ident| $saturate:expr,
     { $($conv:tt)* }) => {
        $($conv)*
        #[inline(always)]
        fn fract(self) -> Self {
            self - intrinsics::$trunc(self)
        }
        #[inline(always)]
        fn div_euclid(self, rhs: Self) -> Self {
            euclid::$m::div(intrinsics::$trunc(self / rhs), $fmod(self, rhs), rhs)
        }
        #[inline(always)]
        fn rem_euclid(self, rhs: Self) -> Self {
            euclid::$m::rem($fmod(self, rhs), rhs)
        }
        #[inline(always)]
        fn log(self, base: Self) -> Self {
            $log(self) / $log(base)
        }
        #[inline(always)]
        fn frexp(self) -> (Self, i32) {
            let mut e = 0;
            // SAFETY: `e` is a live local, written once by libdevice.
            let m = unsafe { $frexp(self, &mut e) };
            (m, e)
        }
        #[inline(always)]
        fn sin_cos_pi(self) -> (Self, Self) {
            let (mut s, mut c) = (0.0, 0.0);
            // SAFETY: both pointers are to live locals, written once by libdevice.
            unsafe { $sincospi(self, &mut s, &mut c) };
            (s, c)
        }
        #[inline(always)]
        fn saturate(self) -> Self {
            let $x = self;
            $saturate
        }
        #[inline(always)]
        fn jn(self, n: i32) -> Self {
            $jn(n, self)
        }
        #[inline(always)]
        fn yn(self, n: i32) -> Self {
            $yn(n, self)
        }
        $(
            #[inline(always)]
            fn $name(self $(, $a: $at)*) -> $r {
                $f(self $(, $a)*)
            }
        )*
    };
}

/// `fn $name(self) -> $t` of `f32` as the one instruction `$insn` (`cvt.rzi` to a 32-bit
/// integer), which is Rust's `as`: see the SAFETY comment.
macro_rules! f32_to_int {
    ($name:ident, $t:ty, $insn:literal) => {
        #[inline(always)]
        fn $name(self) -> $t {
            let r: $t;
            // SAFETY: a conversion between registers: no memory, no precondition. From an
            // `f32` to a 32-bit integer the instruction clamps and gives 0 for NaN (PTX ISA
            // 9.0+, `cvt`, "Integer Notes"; older texts said 0 for every NaN): Rust's `as`.
            // A 64-bit destination or an `f64` source must not use this: NaN gives
            // `1 << (bits - 1)` there.
            unsafe {
                asm!(concat!($insn, " {r}, {x};"), r = out(reg32) r, x = in(reg32) self,
                     options(pure, nomem, nostack, preserves_flags))
            };
            r
        }
    };
}

float_impl!(f32, sqrtf32, fmaf32, floorf32, ceilf32, truncf32, copysignf32, {
    rsqrt() => __nv_rsqrtf; cbrt() => __nv_cbrtf;
    exp() => __nv_expf; exp2() => __nv_exp2f; exp10() => __nv_exp10f; exp_m1() => __nv_expm1f;
    ln() => __nv_logf; log2() => __nv_log2f; log10() => __nv_log10f; ln_1p() => __nv_log1pf;
    sin() => __nv_sinf; cos() => __nv_cosf; tan() => __nv_tanf; sin_pi() => __nv_sinpif; cos_pi() => __nv_cospif;
    asin() => __nv_asinf; acos() => __nv_acosf; atan() => __nv_atanf; atan2(x: f32) => __nv_atan2f;
    sinh() => __nv_sinhf; cosh() => __nv_coshf; tanh() => __nv_tanhf;
    asinh() => __nv_asinhf; acosh() => __nv_acoshf; atanh() => __nv_atanhf;
    powf(y: f32) => __nv_powf; powi(n: i32) => __nv_powif;
    erf() => __nv_erff; erfc() => __nv_erfcf; erf_inv() => __nv_erfinvf; erfc_inv() => __nv_erfcinvf;
    gamma() => __nv_tgammaf; ln_gamma() => __nv_lgammaf;
    round() => __nv_roundf; round_ties_even() => __nv_rintf;
    fmod(y: f32) => __nv_fmodf; remainder(y: f32) => __nv_remainderf; fdim(y: f32) => __nv_fdimf;
    hypot(y: f32) => __nv_hypotf; rhypot(y: f32) => __nv_rhypotf; ldexp(e: i32) => __nv_ldexpf;
}, __nv_sincosf, float_extra!(f32, f32, truncf32, __nv_fmodf, __nv_logf, __nv_frexpf, __nv_sincospif, __nv_jnf, __nv_ynf, {
    scalbn(n: i32) -> f32 => __nv_scalbnf; erfcx() -> f32 => __nv_erfcxf; ilogb() -> i32 => __nv_ilogbf;
    j0() -> f32 => __nv_j0f; j1() -> f32 => __nv_j1f; y0() -> f32 => __nv_y0f; y1() -> f32 => __nv_y1f;
    normcdf() -> f32 => __nv_normcdff; normcdfinv() -> f32 => __nv_normcdfinvf; rcbrt() -> f32 => __nv_rcbrtf;
}, |x| __nv_saturatef(x), {
    f32_to_int!(to_u32_sat, u32, "cvt.rzi.u32.f32");
    f32_to_int!(to_i32_sat, i32, "cvt.rzi.s32.f32");
}););

float_impl!(f64, sqrtf64, fmaf64, floorf64, ceilf64, truncf64, copysignf64, {
    rsqrt() => __nv_rsqrt; cbrt() => __nv_cbrt;
    exp() => __nv_exp; exp2() => __nv_exp2; exp10() => __nv_exp10; exp_m1() => __nv_expm1;
    ln() => __nv_log; log2() => __nv_log2; log10() => __nv_log10; ln_1p() => __nv_log1p;
    sin() => __nv_sin; cos() => __nv_cos; tan() => __nv_tan; sin_pi() => __nv_sinpi; cos_pi() => __nv_cospi;
    asin() => __nv_asin; acos() => __nv_acos; atan() => __nv_atan; atan2(x: f64) => __nv_atan2;
    sinh() => __nv_sinh; cosh() => __nv_cosh; tanh() => __nv_tanh;
    asinh() => __nv_asinh; acosh() => __nv_acosh; atanh() => __nv_atanh;
    powf(y: f64) => __nv_pow; powi(n: i32) => __nv_powi;
    erf() => __nv_erf; erfc() => __nv_erfc; erf_inv() => __nv_erfinv; erfc_inv() => __nv_erfcinv;
    gamma() => __nv_tgamma; ln_gamma() => __nv_lgamma;
    round() => __nv_round; round_ties_even() => __nv_rint;
    fmod(y: f64) => __nv_fmod; remainder(y: f64) => __nv_remainder; fdim(y: f64) => __nv_fdim;
    hypot(y: f64) => __nv_hypot; rhypot(y: f64) => __nv_rhypot; ldexp(e: i32) => __nv_ldexp;
}, __nv_sincos, float_extra!(f64, f64, truncf64, __nv_fmod, __nv_log, __nv_frexp, __nv_sincospi, __nv_jn, __nv_yn, {
    scalbn(n: i32) -> f64 => __nv_scalbn; erfcx() -> f64 => __nv_erfcx; ilogb() -> i32 => __nv_ilogb;
    j0() -> f64 => __nv_j0; j1() -> f64 => __nv_j1; y0() -> f64 => __nv_y0; y1() -> f64 => __nv_y1;
    normcdf() -> f64 => __nv_normcdf; normcdfinv() -> f64 => __nv_normcdfinv; rcbrt() -> f64 => __nv_rcbrt;
}, |x| euclid::f64::saturate(x), {
    // From an `f64`, `cvt` gives `1 << 31` (u32) or `i32::MIN` for NaN (PTX ISA, `cvt`), not
    // Rust's 0: `as`, which LLVM clamps with `max`/`min` first (and for `i32` tests for NaN),
    // is right where the bare instruction is not.
    #[inline(always)]
    fn to_u32_sat(self) -> u32 {
        self as u32
    }
    #[inline(always)]
    fn to_i32_sat(self) -> i32 {
        self as i32
    }
}););

impl FastFloat for f32 {
    #[inline(always)]
    fn exp_fast(self) -> f32 {
        __nv_fast_expf(self)
    }
    #[inline(always)]
    fn exp2_fast(self) -> f32 {
        let r: f32;
        // SAFETY: register-only arithmetic.
        unsafe {
            asm!("ex2.approx.ftz.f32 {r}, {x};", r = out(reg32) r, x = in(reg32) self, options(pure, nomem, nostack, preserves_flags))
        };
        r
    }
    #[inline(always)]
    fn exp10_fast(self) -> f32 {
        __nv_fast_exp10f(self)
    }
    #[inline(always)]
    fn ln_fast(self) -> f32 {
        __nv_fast_logf(self)
    }
    #[inline(always)]
    fn log2_fast(self) -> f32 {
        __nv_fast_log2f(self)
    }
    #[inline(always)]
    fn log10_fast(self) -> f32 {
        __nv_fast_log10f(self)
    }
    #[inline(always)]
    fn sin_fast(self) -> f32 {
        __nv_fast_sinf(self)
    }
    #[inline(always)]
    fn cos_fast(self) -> f32 {
        __nv_fast_cosf(self)
    }
    #[inline(always)]
    fn tan_fast(self) -> f32 {
        __nv_fast_tanf(self)
    }
    #[inline(always)]
    fn sin_cos_fast(self) -> (f32, f32) {
        let (mut s, mut c) = (0.0, 0.0);
        // SAFETY: both pointers are to live locals, written once by libdevice.
        unsafe { __nv_fast_sincosf(self, &mut s, &mut c) };
        (s, c)
    }
    #[inline(always)]
    fn powf_fast(self, y: f32) -> f32 {
        __nv_fast_powf(self, y)
    }
    #[inline(always)]
    fn div_fast(self, y: f32) -> f32 {
        __nv_fast_fdividef(self, y)
    }
    #[inline(always)]
    fn sqrt_fast(self) -> f32 {
        let r: f32;
        // SAFETY: register-only arithmetic.
        unsafe {
            asm!("sqrt.approx.f32 {r}, {x};", r = out(reg32) r, x = in(reg32) self, options(pure, nomem, nostack, preserves_flags))
        };
        r
    }
    #[inline(always)]
    fn tanh_fast(self) -> f32 {
        let r: f32;
        // SAFETY: register-only arithmetic (sm_75+, below every arch sluice builds for).
        unsafe {
            asm!("tanh.approx.f32 {r}, {x};", r = out(reg32) r, x = in(reg32) self, options(pure, nomem, nostack, preserves_flags))
        };
        r
    }
}
