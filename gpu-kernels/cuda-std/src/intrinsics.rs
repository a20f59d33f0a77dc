//! `cuda_std::intrinsics`: libdevice functions under their names without the
//! `__nv_` prefix, as cuda_std has them. This is the math subset sluice
//! declares ([`sluice_device::math::libdevice`]); for any other libdevice
//! function declare it yourself (`extern "C" { fn __nv_popc(x: u32) -> u32; }`):
//! sluice-builder links libdevice into every kernel crate (such a declaration
//! has no host definition: give it a `#[cfg(target_arch = "nvptx64")]` and a
//! host twin if the kernel runs on the CPU backend too).
//!
//! cuda_std declares these `unsafe`; the functions of value arguments are safe
//! here, so an `unsafe { }` around a call only earns an `unused_unsafe` warning.
//! The functions that write through pointers (`sincos*`, `frexp*`) are `unsafe`.
//!
//! On the host each function is the method of
//! [`DeviceFloat`](sluice_device::math::DeviceFloat) (or, for `fast_*`,
//! [`FastFloat`](sluice_device::math::FastFloat)) that the device's does the
//! same job as: the CPU runtime's implementations (`libm`, and sluice's own for
//! what C lacks), with libdevice's special values. The `fast_*` functions are
//! the exact ones there (the CPU has no special-function unit to imitate) and
//! `rsqrt`/`rsqrtf` are `1 / sqrt`.

#[cfg(target_arch = "nvptx64")]
pub use sluice_device::math::libdevice::{
    __nv_acos as acos, __nv_acosf as acosf, __nv_acosh as acosh, __nv_acoshf as acoshf, __nv_asin as asin,
    __nv_asinf as asinf, __nv_asinh as asinh, __nv_asinhf as asinhf, __nv_atan as atan, __nv_atan2 as atan2,
    __nv_atan2f as atan2f, __nv_atanf as atanf, __nv_atanh as atanh, __nv_atanhf as atanhf, __nv_cbrt as cbrt,
    __nv_cbrtf as cbrtf, __nv_cos as cos, __nv_cosf as cosf, __nv_cosh as cosh, __nv_coshf as coshf,
    __nv_cospi as cospi, __nv_cospif as cospif, __nv_erf as erf, __nv_erfc as erfc, __nv_erfcf as erfcf,
    __nv_erfcinv as erfcinv, __nv_erfcinvf as erfcinvf, __nv_erfcx as erfcx, __nv_erfcxf as erfcxf, __nv_erff as erff,
    __nv_erfinv as erfinv, __nv_erfinvf as erfinvf, __nv_exp as exp, __nv_exp10 as exp10, __nv_exp10f as exp10f,
    __nv_exp2 as exp2, __nv_exp2f as exp2f, __nv_expf as expf, __nv_expm1 as expm1, __nv_expm1f as expm1f,
    __nv_fast_cosf as fast_cosf, __nv_fast_exp10f as fast_exp10f, __nv_fast_expf as fast_expf,
    __nv_fast_fdividef as fast_fdividef, __nv_fast_log10f as fast_log10f, __nv_fast_log2f as fast_log2f,
    __nv_fast_logf as fast_logf, __nv_fast_powf as fast_powf, __nv_fast_sincosf as fast_sincosf,
    __nv_fast_sinf as fast_sinf, __nv_fast_tanf as fast_tanf, __nv_fdim as fdim, __nv_fdimf as fdimf,
    __nv_fmod as fmod, __nv_fmodf as fmodf, __nv_frexp as frexp, __nv_frexpf as frexpf, __nv_hypot as hypot,
    __nv_hypotf as hypotf, __nv_ilogb as ilogb, __nv_ilogbf as ilogbf, __nv_j0 as j0, __nv_j0f as j0f, __nv_j1 as j1,
    __nv_j1f as j1f, __nv_jn as jn, __nv_jnf as jnf, __nv_ldexp as ldexp, __nv_ldexpf as ldexpf, __nv_lgamma as lgamma,
    __nv_lgammaf as lgammaf, __nv_log as log, __nv_log10 as log10, __nv_log10f as log10f, __nv_log1p as log1p,
    __nv_log1pf as log1pf, __nv_log2 as log2, __nv_log2f as log2f, __nv_logf as logf, __nv_normcdf as normcdf,
    __nv_normcdff as normcdff, __nv_normcdfinv as normcdfinv, __nv_normcdfinvf as normcdfinvf, __nv_pow as pow,
    __nv_powf as powf, __nv_powi as powi, __nv_powif as powif, __nv_rcbrt as rcbrt, __nv_rcbrtf as rcbrtf,
    __nv_remainder as remainder, __nv_remainderf as remainderf, __nv_rhypot as rhypot, __nv_rhypotf as rhypotf,
    __nv_rint as rint, __nv_rintf as rintf, __nv_round as round, __nv_roundf as roundf, __nv_rsqrt as rsqrt,
    __nv_rsqrtf as rsqrtf, __nv_saturatef as saturatef, __nv_scalbn as scalbn, __nv_scalbnf as scalbnf,
    __nv_sin as sin, __nv_sincos as sincos, __nv_sincosf as sincosf, __nv_sincospi as sincospi,
    __nv_sincospif as sincospif, __nv_sinf as sinf, __nv_sinh as sinh, __nv_sinhf as sinhf, __nv_sinpi as sinpi,
    __nv_sinpif as sinpif, __nv_tan as tan, __nv_tanf as tanf, __nv_tanh as tanh, __nv_tanhf as tanhf,
    __nv_tgamma as tgamma, __nv_tgammaf as tgammaf, __nv_y0 as y0, __nv_y0f as y0f, __nv_y1 as y1, __nv_y1f as y1f,
    __nv_yn as yn, __nv_ynf as ynf,
};

#[cfg(not(target_arch = "nvptx64"))]
pub use host::*;

/// The host: libdevice's functions as `DeviceFloat`/`FastFloat` methods.
#[cfg(not(target_arch = "nvptx64"))]
mod host {
    use sluice_device::math::{DeviceFloat, FastFloat};

    /// Value functions: `name(args) -> ret = host expression;`.
    macro_rules! host {
        ($($name:ident($($a:ident: $t:ty),*) -> $r:ty = $e:expr;)*) => {$(
            #[doc = concat!("libdevice's `__nv_", stringify!($name), "`; on the host `", stringify!($e), "`.")]
            #[inline(always)]
            pub fn $name($($a: $t),*) -> $r {
                $e
            }
        )*};
    }

    /// `f32` (name ending in `f`) and `f64` twins of one method: `f64_name, f32_name(args) = method(rest);`.
    macro_rules! twins {
        ($($d:ident, $f:ident($x:ident $(, $a:ident)*) = $m:ident;)*) => {
            host! {$(
                $d($x: f64 $(, $a: f64)*) -> f64 = DeviceFloat::$m($x $(, $a)*);
                $f($x: f32 $(, $a: f32)*) -> f32 = DeviceFloat::$m($x $(, $a)*);
            )*}
        };
    }

    twins! {
        acos, acosf(x) = acos;
        acosh, acoshf(x) = acosh;
        asin, asinf(x) = asin;
        asinh, asinhf(x) = asinh;
        atan, atanf(x) = atan;
        atan2, atan2f(y, x) = atan2;
        atanh, atanhf(x) = atanh;
        cbrt, cbrtf(x) = cbrt;
        cos, cosf(x) = cos;
        cosh, coshf(x) = cosh;
        cospi, cospif(x) = cos_pi;
        erf, erff(x) = erf;
        erfc, erfcf(x) = erfc;
        erfcinv, erfcinvf(x) = erfc_inv;
        erfcx, erfcxf(x) = erfcx;
        erfinv, erfinvf(x) = erf_inv;
        exp, expf(x) = exp;
        exp10, exp10f(x) = exp10;
        exp2, exp2f(x) = exp2;
        expm1, expm1f(x) = exp_m1;
        fdim, fdimf(x, y) = fdim;
        fmod, fmodf(x, y) = fmod;
        hypot, hypotf(x, y) = hypot;
        j0, j0f(x) = j0;
        j1, j1f(x) = j1;
        lgamma, lgammaf(x) = ln_gamma;
        log, logf(x) = ln;
        log10, log10f(x) = log10;
        log1p, log1pf(x) = ln_1p;
        log2, log2f(x) = log2;
        normcdf, normcdff(x) = normcdf;
        normcdfinv, normcdfinvf(x) = normcdfinv;
        pow, powf(x, y) = powf;
        rcbrt, rcbrtf(x) = rcbrt;
        remainder, remainderf(x, y) = remainder;
        rhypot, rhypotf(x, y) = rhypot;
        rint, rintf(x) = round_ties_even;
        round, roundf(x) = round;
        rsqrt, rsqrtf(x) = rsqrt;
        sin, sinf(x) = sin;
        sinh, sinhf(x) = sinh;
        sinpi, sinpif(x) = sin_pi;
        tan, tanf(x) = tan;
        tanh, tanhf(x) = tanh;
        tgamma, tgammaf(x) = gamma;
        y0, y0f(x) = y0;
        y1, y1f(x) = y1;
    }

    host! {
        ilogb(x: f64) -> i32 = DeviceFloat::ilogb(x);
        ilogbf(x: f32) -> i32 = DeviceFloat::ilogb(x);
        ldexp(x: f64, e: i32) -> f64 = DeviceFloat::ldexp(x, e);
        ldexpf(x: f32, e: i32) -> f32 = DeviceFloat::ldexp(x, e);
        scalbn(x: f64, n: i32) -> f64 = DeviceFloat::scalbn(x, n);
        scalbnf(x: f32, n: i32) -> f32 = DeviceFloat::scalbn(x, n);
        powi(x: f64, n: i32) -> f64 = DeviceFloat::powi(x, n);
        powif(x: f32, n: i32) -> f32 = DeviceFloat::powi(x, n);
        jn(n: i32, x: f64) -> f64 = DeviceFloat::jn(x, n);
        jnf(n: i32, x: f32) -> f32 = DeviceFloat::jn(x, n);
        yn(n: i32, x: f64) -> f64 = DeviceFloat::yn(x, n);
        ynf(n: i32, x: f32) -> f32 = DeviceFloat::yn(x, n);
        saturatef(x: f32) -> f32 = DeviceFloat::saturate(x);
        fast_cosf(x: f32) -> f32 = FastFloat::cos_fast(x);
        fast_exp10f(x: f32) -> f32 = FastFloat::exp10_fast(x);
        fast_expf(x: f32) -> f32 = FastFloat::exp_fast(x);
        fast_fdividef(x: f32, y: f32) -> f32 = FastFloat::div_fast(x, y);
        fast_log10f(x: f32) -> f32 = FastFloat::log10_fast(x);
        fast_log2f(x: f32) -> f32 = FastFloat::log2_fast(x);
        fast_logf(x: f32) -> f32 = FastFloat::ln_fast(x);
        fast_powf(x: f32, y: f32) -> f32 = FastFloat::powf_fast(x, y);
        fast_sinf(x: f32) -> f32 = FastFloat::sin_fast(x);
        fast_tanf(x: f32) -> f32 = FastFloat::tan_fast(x);
    }

    /// Functions that write a pair through pointers: `name(x: T, s, c) = method;`.
    macro_rules! pairs {
        ($($name:ident($t:ty) = $tr:ident::$m:ident;)*) => {$(
            #[doc = concat!("libdevice's `__nv_", stringify!($name), "`: writes the pair to `*s` and `*c`; on the host `", stringify!($tr), "::", stringify!($m), "`.")]
            ///
            /// # Safety
            /// `s` and `c` are valid for writes of one aligned value each.
            #[inline(always)]
            pub unsafe fn $name(x: $t, s: *mut $t, c: *mut $t) {
                let (a, b) = $tr::$m(x);
                // SAFETY: the caller's contract.
                unsafe {
                    s.write(a);
                    c.write(b);
                }
            }
        )*};
    }

    pairs! {
        sincos(f64) = DeviceFloat::sin_cos;
        sincosf(f32) = DeviceFloat::sin_cos;
        sincospi(f64) = DeviceFloat::sin_cos_pi;
        sincospif(f32) = DeviceFloat::sin_cos_pi;
        fast_sincosf(f32) = FastFloat::sin_cos_fast;
    }

    /// libdevice's `__nv_frexp`: returns the mantissa in [0.5, 1) and writes the
    /// exponent to `*e`; on the host `DeviceFloat::frexp`.
    ///
    /// # Safety
    /// `e` is valid for a write of one aligned `i32`.
    #[inline(always)]
    pub unsafe fn frexp(x: f64, e: *mut i32) -> f64 {
        let (m, n) = DeviceFloat::frexp(x);
        // SAFETY: the caller's contract.
        unsafe { e.write(n) };
        m
    }

    /// libdevice's `__nv_frexpf`: returns the mantissa in [0.5, 1) and writes
    /// the exponent to `*e`; on the host `DeviceFloat::frexp`.
    ///
    /// # Safety
    /// `e` is valid for a write of one aligned `i32`.
    #[inline(always)]
    pub unsafe fn frexpf(x: f32, e: *mut i32) -> f32 {
        let (m, n) = DeviceFloat::frexp(x);
        // SAFETY: the caller's contract.
        unsafe { e.write(n) };
        m
    }
}
