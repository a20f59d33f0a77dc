//! [`DeviceFloat`] and [`FastFloat`] on the host (the CPU runtime), from the
//! `libm` crate (musl's functions: within 1 ulp, most correctly rounded, the
//! same on every host) and, for what libdevice has and C lacks (`erfcx`,
//! `normcdf`, `normcdfinv`, `erfinv`, `erfcinv`, `sinpi`, `cospi`, `rcbrt`,
//! `rhypot`), implementations below. Where libdevice's semantics differ from
//! a naive formula they are kept: `sin_pi(1.0)` is exactly `+0`, `cos_pi(0.5)`
//! is `+0`, `erfcx` does not overflow where `erfc` underflows, `min`/`max`
//! ignore a NaN operand, `saturate` maps NaN to 0.
//!
//! `f32` functions that libm has in `f32` use them; the others are computed
//! in `f64` and rounded once, which is more accurate than libdevice's `f32`
//! bounds. The `*_fast` methods are the exact functions (the CPU has no
//! special-function unit to imitate); `rsqrt` is `1 / sqrt`.
//!
//! On the host, a method call such as `x.exp()` on an `f32` finds std's
//! inherent method first (same name, same meaning); these impls serve the
//! names std lacks (`x.erfcx()`, `x.sin_pi()`, ...) and calls through the
//! trait (`DeviceFloat::exp(x)`).

use super::{DeviceFloat, FastFloat};
use crate::spec::math as euclid;
use core::f64::consts::{FRAC_1_SQRT_2, PI};

/// The low part of 1/√2 (`FRAC_1_SQRT_2` + this is 1/√2 to about 2^-106).
const FRAC_1_SQRT_2_LO: f64 = -4.833_646_656_726_457e-17;
/// 2/√π.
const TWO_OVER_SQRT_PI: f64 = core::f64::consts::FRAC_2_SQRT_PI;

/// exp(x²)·erfc(x), without overflow for large x and with x² kept exact.
pub(crate) fn erfcx(x: f64) -> f64 {
    if x.is_nan() {
        return x;
    }
    if x > 25.0 {
        // Asymptotic series 1/(x√π) · Σ (-1)^n (2n-1)!! / (2x²)^n; at x > 25
        // its terms fall by at least 1/400 each, 10 terms are plenty.
        let t = 1.0 / (2.0 * x * x);
        let (mut term, mut sum) = (1.0, 1.0);
        for n in 1..10 {
            term *= -((2 * n - 1) as f64) * t;
            sum += term;
        }
        return sum / (x * core::f64::consts::PI.sqrt());
    }
    // x² = hi + lo exactly; exp(x²) = exp(hi)·(1 + lo) to well below an ulp.
    let hi = x * x;
    let lo = libm::fma(x, x, -hi);
    libm::exp(hi) * (1.0 + lo) * libm::erfc(x)
}

/// Φ(x) = erfc(-x/√2)/2, with the argument's rounding error corrected.
pub(crate) fn normcdf(x: f64) -> f64 {
    if x.is_nan() {
        return x;
    }
    let z = -x * FRAC_1_SQRT_2;
    let z_lo = libm::fma(-x, FRAC_1_SQRT_2, -z) + -x * FRAC_1_SQRT_2_LO;
    let e = libm::erfc(z);
    // erfc(z + δ) ≈ erfc(z) - δ·(2/√π)·exp(-z²).
    let d = z_lo * TWO_OVER_SQRT_PI * libm::exp(-z * z);
    0.5 * (e - d)
}

/// Φ⁻¹(p): Acklam's rational approximation (relative error 1.2e-9), then
/// two Halley steps on [`normcdf`]; the upper half by symmetry, so that the
/// tails keep their relative accuracy.
pub(crate) fn normcdfinv(p: f64) -> f64 {
    if p.is_nan() || !(0.0..=1.0).contains(&p) {
        return f64::NAN;
    }
    if p == 0.0 {
        return f64::NEG_INFINITY;
    }
    if p == 1.0 {
        return f64::INFINITY;
    }
    if p > 0.5 {
        // 1 - p is exact for p in [0.5, 1].
        return -normcdfinv(1.0 - p);
    }
    const A: [f64; 6] = [
        -3.969683028665376e1,
        2.209460984245205e2,
        -2.759285104469687e2,
        1.383_577_518_672_69e2,
        -3.066479806614716e1,
        2.506628277459239,
    ];
    const B: [f64; 5] =
        [-5.447609879822406e1, 1.615858368580409e2, -1.556989798598866e2, 6.680131188771972e1, -1.328068155288572e1];
    const C: [f64; 6] = [
        -7.784894002430293e-3,
        -3.223964580411365e-1,
        -2.400758277161838,
        -2.549732539343734,
        4.374664141464968,
        2.938163982698783,
    ];
    const D: [f64; 4] = [7.784695709041462e-3, 3.224671290700398e-1, 2.445134137142996, 3.754408661907416];
    let mut x = if p < 0.02425 {
        let q = libm::sqrt(-2.0 * libm::log(p));
        (((((C[0] * q + C[1]) * q + C[2]) * q + C[3]) * q + C[4]) * q + C[5])
            / ((((D[0] * q + D[1]) * q + D[2]) * q + D[3]) * q + 1.0)
    } else {
        let q = p - 0.5;
        let r = q * q;
        (((((A[0] * r + A[1]) * r + A[2]) * r + A[3]) * r + A[4]) * r + A[5]) * q
            / (((((B[0] * r + B[1]) * r + B[2]) * r + B[3]) * r + B[4]) * r + 1.0)
    };
    for _ in 0..2 {
        let e = normcdf(x) - p;
        let u = e * (2.0 * PI).sqrt() * libm::exp(0.5 * x * x);
        x -= u / (1.0 + 0.5 * x * u);
    }
    x
}

/// erf⁻¹(x): from Φ⁻¹, then Newton steps on `erf` (|x| <= 0.5, where `erf`
/// keeps relative accuracy) or `erfc` (the tails, where `1 - |x|` is exact).
pub(crate) fn erfinv(x: f64) -> f64 {
    if x.is_nan() || !(-1.0..=1.0).contains(&x) {
        return f64::NAN;
    }
    if x == 1.0 || x == -1.0 {
        return x * f64::INFINITY;
    }
    if x < 0.0 {
        return -erfinv(-x);
    }
    if x == 0.0 {
        return x;
    }
    let small = x <= 0.5;
    let c = 1.0 - x; // exact for x >= 0.5
    let mut y = if small { -normcdfinv(0.5 - 0.5 * x) * FRAC_1_SQRT_2 } else { -normcdfinv(0.5 * c) * FRAC_1_SQRT_2 };
    for _ in 0..2 {
        let r = if small { libm::erf(y) - x } else { c - libm::erfc(y) };
        y -= r / (TWO_OVER_SQRT_PI * libm::exp(-y * y));
    }
    y
}

/// erfc⁻¹(y) for y in [0, 2].
pub(crate) fn erfcinv(y: f64) -> f64 {
    if y.is_nan() || !(0.0..=2.0).contains(&y) {
        return f64::NAN;
    }
    if y == 0.0 {
        return f64::INFINITY;
    }
    if y == 2.0 {
        return f64::NEG_INFINITY;
    }
    if y > 1.0 {
        // 2 - y is exact for y in [1, 2].
        return -erfcinv(2.0 - y);
    }
    if y > 0.5 {
        // 1 - y is exact for y in [0.5, 1].
        return erfinv(1.0 - y);
    }
    let mut z = -normcdfinv(0.5 * y) * FRAC_1_SQRT_2;
    for _ in 0..2 {
        let r = libm::erfc(z) - y;
        z += r / (TWO_OVER_SQRT_PI * libm::exp(-z * z));
    }
    z
}

/// `(n, f)` with `|x| mod 2 = n/2 + f`, `f` in [-1/4, 1/4] (exact).
fn pi_reduce(ax: f64) -> (u32, f64) {
    let r = ax % 2.0;
    let n = libm::round(2.0 * r);
    (n as u32 % 4, r - 0.5 * n)
}

/// sin(πx), exactly 0 at the integers (with the sign of x) and ±1 at the half-integers.
pub(crate) fn sinpi(x: f64) -> f64 {
    if !x.is_finite() {
        return f64::NAN;
    }
    let (n, f) = pi_reduce(x.abs());
    let t = PI * f;
    let s = match n {
        0 => libm::sin(t),
        1 => libm::cos(t),
        2 => -libm::sin(t),
        _ => -libm::cos(t),
    };
    let s = if s == 0.0 { 0.0 } else { s };
    if x.is_sign_negative() {
        -s
    } else {
        s
    }
}

/// cos(πx), exactly +0 at the half-integers and ±1 at the integers.
pub(crate) fn cospi(x: f64) -> f64 {
    if !x.is_finite() {
        return f64::NAN;
    }
    let (n, f) = pi_reduce(x.abs());
    let t = PI * f;
    let c = match n {
        0 => libm::cos(t),
        1 => -libm::sin(t),
        2 => -libm::cos(t),
        _ => libm::sin(t),
    };
    if c == 0.0 {
        0.0
    } else {
        c
    }
}

macro_rules! impls {
    ($t:ident, $sqrt:ident, $cbrt:ident, $fma:ident, $exp:ident, $exp2:ident, $exp10:ident, $expm1:ident,
     $log:ident, $log2:ident, $log10:ident, $log1p:ident, $sin:ident, $cos:ident, $tan:ident, $sincos:ident,
     $asin:ident, $acos:ident, $atan:ident, $atan2:ident, $sinh:ident, $cosh:ident, $tanh:ident,
     $asinh:ident, $acosh:ident, $atanh:ident, $pow:ident, $erf:ident, $erfc:ident, $tgamma:ident, $lgamma:ident,
     $floor:ident, $ceil:ident, $trunc:ident, $round:ident, $rint:ident, $fabs:ident, $copysign:ident,
     $fmin:ident, $fmax:ident, $fmod:ident, $remainder:ident, $fdim:ident, $hypot:ident, $ldexp:ident,
     $scalbn:ident, $frexp:ident, $ilogb:ident, $j0:ident, $j1:ident, $jn:ident, $y0:ident, $y1:ident, $yn:ident) => {
        impl DeviceFloat for $t {
            fn sqrt(self) -> Self {
                libm::$sqrt(self)
            }
            fn rsqrt(self) -> Self {
                1.0 / libm::$sqrt(self)
            }
            fn cbrt(self) -> Self {
                libm::$cbrt(self)
            }
            fn mul_add(self, a: Self, b: Self) -> Self {
                libm::$fma(self, a, b)
            }
            fn exp(self) -> Self {
                libm::$exp(self)
            }
            fn exp2(self) -> Self {
                libm::$exp2(self)
            }
            fn exp10(self) -> Self {
                libm::$exp10(self)
            }
            fn exp_m1(self) -> Self {
                libm::$expm1(self)
            }
            fn ln(self) -> Self {
                libm::$log(self)
            }
            fn log2(self) -> Self {
                libm::$log2(self)
            }
            fn log10(self) -> Self {
                libm::$log10(self)
            }
            fn ln_1p(self) -> Self {
                libm::$log1p(self)
            }
            fn sin(self) -> Self {
                libm::$sin(self)
            }
            fn cos(self) -> Self {
                libm::$cos(self)
            }
            fn tan(self) -> Self {
                libm::$tan(self)
            }
            fn sin_cos(self) -> (Self, Self) {
                libm::$sincos(self)
            }
            fn sin_pi(self) -> Self {
                sinpi(self as f64) as $t
            }
            fn cos_pi(self) -> Self {
                cospi(self as f64) as $t
            }
            fn asin(self) -> Self {
                libm::$asin(self)
            }
            fn acos(self) -> Self {
                libm::$acos(self)
            }
            fn atan(self) -> Self {
                libm::$atan(self)
            }
            fn atan2(self, x: Self) -> Self {
                libm::$atan2(self, x)
            }
            fn sinh(self) -> Self {
                libm::$sinh(self)
            }
            fn cosh(self) -> Self {
                libm::$cosh(self)
            }
            fn tanh(self) -> Self {
                libm::$tanh(self)
            }
            fn asinh(self) -> Self {
                libm::$asinh(self)
            }
            fn acosh(self) -> Self {
                libm::$acosh(self)
            }
            fn atanh(self) -> Self {
                libm::$atanh(self)
            }
            fn powf(self, y: Self) -> Self {
                libm::$pow(self, y)
            }
            fn powi(self, n: i32) -> Self {
                libm::pow(self as f64, n as f64) as $t
            }
            fn erf(self) -> Self {
                libm::$erf(self)
            }
            fn erfc(self) -> Self {
                libm::$erfc(self)
            }
            fn erf_inv(self) -> Self {
                erfinv(self as f64) as $t
            }
            fn erfc_inv(self) -> Self {
                erfcinv(self as f64) as $t
            }
            fn gamma(self) -> Self {
                libm::$tgamma(self)
            }
            fn ln_gamma(self) -> Self {
                libm::$lgamma(self)
            }
            fn floor(self) -> Self {
                libm::$floor(self)
            }
            fn ceil(self) -> Self {
                libm::$ceil(self)
            }
            fn trunc(self) -> Self {
                libm::$trunc(self)
            }
            fn round(self) -> Self {
                libm::$round(self)
            }
            fn round_ties_even(self) -> Self {
                libm::$rint(self)
            }
            fn abs(self) -> Self {
                libm::$fabs(self)
            }
            fn copysign(self, sign: Self) -> Self {
                libm::$copysign(self, sign)
            }
            fn signum(self) -> Self {
                if self.is_nan() {
                    self
                } else {
                    libm::$copysign(1.0, self)
                }
            }
            fn min(self, other: Self) -> Self {
                libm::$fmin(self, other)
            }
            fn max(self, other: Self) -> Self {
                libm::$fmax(self, other)
            }
            fn fmod(self, y: Self) -> Self {
                libm::$fmod(self, y)
            }
            fn remainder(self, y: Self) -> Self {
                libm::$remainder(self, y)
            }
            fn fdim(self, y: Self) -> Self {
                libm::$fdim(self, y)
            }
            fn hypot(self, y: Self) -> Self {
                libm::$hypot(self, y)
            }
            fn rhypot(self, y: Self) -> Self {
                (1.0 / libm::hypot(self as f64, y as f64)) as $t
            }
            fn ldexp(self, e: i32) -> Self {
                libm::$ldexp(self, e)
            }
            fn scalbn(self, n: i32) -> Self {
                libm::$scalbn(self, n)
            }
            fn fract(self) -> Self {
                self - libm::$trunc(self)
            }
            fn div_euclid(self, rhs: Self) -> Self {
                euclid::$t::div(libm::$trunc(self / rhs), libm::$fmod(self, rhs), rhs)
            }
            fn rem_euclid(self, rhs: Self) -> Self {
                euclid::$t::rem(libm::$fmod(self, rhs), rhs)
            }
            fn log(self, base: Self) -> Self {
                libm::$log(self) / libm::$log(base)
            }
            fn erfcx(self) -> Self {
                erfcx(self as f64) as $t
            }
            fn frexp(self) -> (Self, i32) {
                libm::$frexp(self)
            }
            fn ilogb(self) -> i32 {
                libm::$ilogb(self)
            }
            fn j0(self) -> Self {
                libm::$j0(self)
            }
            fn j1(self) -> Self {
                libm::$j1(self)
            }
            fn jn(self, n: i32) -> Self {
                libm::$jn(n, self)
            }
            fn y0(self) -> Self {
                libm::$y0(self)
            }
            fn y1(self) -> Self {
                libm::$y1(self)
            }
            fn yn(self, n: i32) -> Self {
                libm::$yn(n, self)
            }
            fn normcdf(self) -> Self {
                normcdf(self as f64) as $t
            }
            fn normcdfinv(self) -> Self {
                normcdfinv(self as f64) as $t
            }
            fn rcbrt(self) -> Self {
                1.0 / libm::$cbrt(self)
            }
            fn saturate(self) -> Self {
                euclid::$t::saturate(self)
            }
            fn sin_cos_pi(self) -> (Self, Self) {
                (sinpi(self as f64) as $t, cospi(self as f64) as $t)
            }
            fn to_u32_sat(self) -> u32 {
                self as u32
            }
            fn to_i32_sat(self) -> i32 {
                self as i32
            }
        }
    };
}

impls!(
    f32, sqrtf, cbrtf, fmaf, expf, exp2f, exp10f, expm1f, logf, log2f, log10f, log1pf, sinf, cosf, tanf, sincosf,
    asinf, acosf, atanf, atan2f, sinhf, coshf, tanhf, asinhf, acoshf, atanhf, powf, erff, erfcf, tgammaf, lgammaf,
    floorf, ceilf, truncf, roundf, rintf, fabsf, copysignf, fminf, fmaxf, fmodf, remainderf, fdimf, hypotf, ldexpf,
    scalbnf, frexpf, ilogbf, j0f, j1f, jnf, y0f, y1f, ynf
);

impls!(
    f64, sqrt, cbrt, fma, exp, exp2, exp10, expm1, log, log2, log10, log1p, sin, cos, tan, sincos, asin, acos, atan,
    atan2, sinh, cosh, tanh, asinh, acosh, atanh, pow, erf, erfc, tgamma, lgamma, floor, ceil, trunc, round, rint,
    fabs, copysign, fmin, fmax, fmod, remainder, fdim, hypot, ldexp, scalbn, frexp, ilogb, j0, j1, jn, y0, y1, yn
);

/// The `*_fast` methods on the CPU: the exact functions.
impl FastFloat for f32 {
    fn exp_fast(self) -> f32 {
        libm::expf(self)
    }
    fn exp2_fast(self) -> f32 {
        libm::exp2f(self)
    }
    fn exp10_fast(self) -> f32 {
        libm::exp10f(self)
    }
    fn ln_fast(self) -> f32 {
        libm::logf(self)
    }
    fn log2_fast(self) -> f32 {
        libm::log2f(self)
    }
    fn log10_fast(self) -> f32 {
        libm::log10f(self)
    }
    fn sin_fast(self) -> f32 {
        libm::sinf(self)
    }
    fn cos_fast(self) -> f32 {
        libm::cosf(self)
    }
    fn tan_fast(self) -> f32 {
        libm::tanf(self)
    }
    fn sin_cos_fast(self) -> (f32, f32) {
        libm::sincosf(self)
    }
    fn powf_fast(self, y: f32) -> f32 {
        libm::powf(self, y)
    }
    fn div_fast(self, y: f32) -> f32 {
        self / y
    }
    fn sqrt_fast(self) -> f32 {
        libm::sqrtf(self)
    }
    fn tanh_fast(self) -> f32 {
        libm::tanhf(self)
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;

    fn ulps(got: f64, want: f64) -> f64 {
        (got - want).abs() / (want.abs() * f64::EPSILON).max(f64::MIN_POSITIVE)
    }

    #[test]
    fn pi_functions_are_exact_where_libdevice_is() {
        assert_eq!(sinpi(1.0).to_bits(), 0.0f64.to_bits());
        assert_eq!(sinpi(-2.0).to_bits(), (-0.0f64).to_bits());
        assert_eq!(sinpi(0.5), 1.0);
        assert_eq!(sinpi(-1.5), 1.0);
        assert_eq!(cospi(0.5).to_bits(), 0.0f64.to_bits());
        assert_eq!(cospi(1.0), -1.0);
        assert_eq!(cospi(-3.0), -1.0);
        assert!(sinpi(f64::INFINITY).is_nan());
        for k in 0..100 {
            let x = -7.3 + 0.1537 * k as f64;
            assert!((sinpi(x) - libm::sin(PI * x)).abs() < 1e-14, "sinpi({x})");
            assert!((cospi(x) - libm::cos(PI * x)).abs() < 1e-14, "cospi({x})");
        }
    }

    #[test]
    fn inverses_invert() {
        for k in 1..200 {
            let p = k as f64 / 200.0;
            let x = normcdfinv(p);
            assert!(ulps(normcdf(x), p) < 4.0, "normcdf(normcdfinv({p}))");
            let y = 2.0 * p - 1.0;
            let z = erfinv(y);
            assert!((libm::erf(z) - y).abs() <= 4.0 * f64::EPSILON, "erf(erfinv({y}))");
            let w = erfcinv(2.0 * p);
            assert!(ulps(libm::erfc(w), 2.0 * p) < 8.0, "erfc(erfcinv({}))", 2.0 * p);
        }
        // In the tails Φ is ill-conditioned (relative error x² times x's), so
        // check that x is within 4 ulp of the crossing instead of a round trip.
        let k = 4.0 * f64::EPSILON;
        for e in [1e-300, 1e-100, 1e-20, 1e-5] {
            let x = normcdfinv(e);
            assert!(normcdf(x * (1.0 + k)) < e && e < normcdf(x * (1.0 - k)), "normcdfinv tail {e}: {x}");
            let z = erfcinv(e);
            assert!(libm::erfc(z * (1.0 + k)) < e && e < libm::erfc(z * (1.0 - k)), "erfcinv tail {e}: {z}");
        }
        assert!((erfinv(1e-10) - 1e-10 * PI.sqrt() / 2.0).abs() < 1e-25);
        assert_eq!(normcdfinv(0.0), f64::NEG_INFINITY);
        assert_eq!(erfcinv(2.0), f64::NEG_INFINITY);
        assert!(erfinv(1.5).is_nan());
    }

    #[test]
    fn erfcx_is_smooth_across_the_asymptotic_switch() {
        // Just above the switch, the series against the direct formula.
        let x = 25.0 + 1e-9;
        let (hi, lo) = (x * x, libm::fma(x, x, -(x * x)));
        let direct = libm::exp(hi) * (1.0 + lo) * libm::erfc(x);
        assert!(ulps(erfcx(x), direct) < 8.0, "{} {direct}", erfcx(x));
        assert!((erfcx(0.0) - 1.0).abs() < 1e-16);
        assert!(ulps(erfcx(1e5), (1.0 - 0.5e-10) / (1e5 * PI.sqrt())) < 2.0);
        assert_eq!(erfcx(-30.0), f64::INFINITY);
    }
}
