//! libdevice's functions, as `extern "C"` declarations (device only): the GPU side
//! of [`DeviceFloat`](super::DeviceFloat) and [`FastFloat`](super::FastFloat) calls
//! them, and a kernel may declare the rest of libdevice's ~500 functions the same way.

#![allow(missing_docs)]

macro_rules! decl {
    ($($name:ident($($a:ident: $t:ty),*) -> $r:ty;)*) => {
        unsafe extern "C" {
            $(pub safe fn $name($($a: $t),*) -> $r;)*
        }
    };
}
decl! {
    __nv_rsqrtf(x: f32) -> f32; __nv_rsqrt(x: f64) -> f64;
    __nv_cbrtf(x: f32) -> f32; __nv_cbrt(x: f64) -> f64;
    __nv_expf(x: f32) -> f32; __nv_exp(x: f64) -> f64;
    __nv_exp2f(x: f32) -> f32; __nv_exp2(x: f64) -> f64;
    __nv_exp10f(x: f32) -> f32; __nv_exp10(x: f64) -> f64;
    __nv_expm1f(x: f32) -> f32; __nv_expm1(x: f64) -> f64;
    __nv_logf(x: f32) -> f32; __nv_log(x: f64) -> f64;
    __nv_log2f(x: f32) -> f32; __nv_log2(x: f64) -> f64;
    __nv_log10f(x: f32) -> f32; __nv_log10(x: f64) -> f64;
    __nv_log1pf(x: f32) -> f32; __nv_log1p(x: f64) -> f64;
    __nv_sinf(x: f32) -> f32; __nv_sin(x: f64) -> f64;
    __nv_cosf(x: f32) -> f32; __nv_cos(x: f64) -> f64;
    __nv_tanf(x: f32) -> f32; __nv_tan(x: f64) -> f64;
    __nv_sinpif(x: f32) -> f32; __nv_sinpi(x: f64) -> f64;
    __nv_cospif(x: f32) -> f32; __nv_cospi(x: f64) -> f64;
    __nv_asinf(x: f32) -> f32; __nv_asin(x: f64) -> f64;
    __nv_acosf(x: f32) -> f32; __nv_acos(x: f64) -> f64;
    __nv_atanf(x: f32) -> f32; __nv_atan(x: f64) -> f64;
    __nv_atan2f(y: f32, x: f32) -> f32; __nv_atan2(y: f64, x: f64) -> f64;
    __nv_sinhf(x: f32) -> f32; __nv_sinh(x: f64) -> f64;
    __nv_coshf(x: f32) -> f32; __nv_cosh(x: f64) -> f64;
    __nv_tanhf(x: f32) -> f32; __nv_tanh(x: f64) -> f64;
    __nv_asinhf(x: f32) -> f32; __nv_asinh(x: f64) -> f64;
    __nv_acoshf(x: f32) -> f32; __nv_acosh(x: f64) -> f64;
    __nv_atanhf(x: f32) -> f32; __nv_atanh(x: f64) -> f64;
    __nv_powf(x: f32, y: f32) -> f32; __nv_pow(x: f64, y: f64) -> f64;
    __nv_powif(x: f32, n: i32) -> f32; __nv_powi(x: f64, n: i32) -> f64;
    __nv_erff(x: f32) -> f32; __nv_erf(x: f64) -> f64;
    __nv_erfcf(x: f32) -> f32; __nv_erfc(x: f64) -> f64;
    __nv_erfinvf(x: f32) -> f32; __nv_erfinv(x: f64) -> f64;
    __nv_erfcinvf(x: f32) -> f32; __nv_erfcinv(x: f64) -> f64;
    __nv_tgammaf(x: f32) -> f32; __nv_tgamma(x: f64) -> f64;
    __nv_lgammaf(x: f32) -> f32; __nv_lgamma(x: f64) -> f64;
    __nv_roundf(x: f32) -> f32; __nv_round(x: f64) -> f64;
    __nv_rintf(x: f32) -> f32; __nv_rint(x: f64) -> f64;
    __nv_fmodf(x: f32, y: f32) -> f32; __nv_fmod(x: f64, y: f64) -> f64;
    __nv_remainderf(x: f32, y: f32) -> f32; __nv_remainder(x: f64, y: f64) -> f64;
    __nv_fdimf(x: f32, y: f32) -> f32; __nv_fdim(x: f64, y: f64) -> f64;
    __nv_hypotf(x: f32, y: f32) -> f32; __nv_hypot(x: f64, y: f64) -> f64;
    __nv_rhypotf(x: f32, y: f32) -> f32; __nv_rhypot(x: f64, y: f64) -> f64;
    __nv_ldexpf(x: f32, e: i32) -> f32; __nv_ldexp(x: f64, e: i32) -> f64;
    __nv_erfcxf(x: f32) -> f32; __nv_erfcx(x: f64) -> f64;
    __nv_ilogbf(x: f32) -> i32; __nv_ilogb(x: f64) -> i32;
    __nv_j0f(x: f32) -> f32; __nv_j0(x: f64) -> f64;
    __nv_j1f(x: f32) -> f32; __nv_j1(x: f64) -> f64;
    __nv_jnf(n: i32, x: f32) -> f32; __nv_jn(n: i32, x: f64) -> f64;
    __nv_y0f(x: f32) -> f32; __nv_y0(x: f64) -> f64;
    __nv_y1f(x: f32) -> f32; __nv_y1(x: f64) -> f64;
    __nv_ynf(n: i32, x: f32) -> f32; __nv_yn(n: i32, x: f64) -> f64;
    __nv_normcdff(x: f32) -> f32; __nv_normcdf(x: f64) -> f64;
    __nv_normcdfinvf(x: f32) -> f32; __nv_normcdfinv(x: f64) -> f64;
    __nv_rcbrtf(x: f32) -> f32; __nv_rcbrt(x: f64) -> f64;
    __nv_saturatef(x: f32) -> f32;
    __nv_scalbnf(x: f32, n: i32) -> f32; __nv_scalbn(x: f64, n: i32) -> f64;
    __nv_fast_expf(x: f32) -> f32;
    __nv_fast_exp10f(x: f32) -> f32;
    __nv_fast_logf(x: f32) -> f32;
    __nv_fast_log2f(x: f32) -> f32;
    __nv_fast_log10f(x: f32) -> f32;
    __nv_fast_sinf(x: f32) -> f32;
    __nv_fast_cosf(x: f32) -> f32;
    __nv_fast_tanf(x: f32) -> f32;
    __nv_fast_powf(x: f32, y: f32) -> f32;
    __nv_fast_fdividef(x: f32, y: f32) -> f32;
}
unsafe extern "C" {
    /// `sincosf`: writes `sin(x)` to `*s` and `cos(x)` to `*c`.
    pub fn __nv_sincosf(x: f32, s: *mut f32, c: *mut f32);
    /// `sincos`: writes `sin(x)` to `*s` and `cos(x)` to `*c`.
    pub fn __nv_sincos(x: f64, s: *mut f64, c: *mut f64);
    /// `__sincosf`: approximate `sincosf`.
    pub fn __nv_fast_sincosf(x: f32, s: *mut f32, c: *mut f32);
    /// `sincospif`: writes `sin(πx)` to `*s` and `cos(πx)` to `*c`.
    pub fn __nv_sincospif(x: f32, s: *mut f32, c: *mut f32);
    /// `sincospi`: writes `sin(πx)` to `*s` and `cos(πx)` to `*c`.
    pub fn __nv_sincospi(x: f64, s: *mut f64, c: *mut f64);
    /// `frexpf`: returns the mantissa in [0.5, 1) and writes the exponent to `*e`.
    pub fn __nv_frexpf(x: f32, e: *mut i32) -> f32;
    /// `frexp`: returns the mantissa in [0.5, 1) and writes the exponent to `*e`.
    pub fn __nv_frexp(x: f64, e: *mut i32) -> f64;
}
