//! `cuda_std::intrinsics`: libdevice functions under their names without the
//! `__nv_` prefix, as cuda_std has them (device only). This is the math subset
//! sluice declares ([`sluice_device::math::libdevice`]); for any other libdevice
//! function declare it yourself (`extern "C" { fn __nv_popc(x: u32) -> u32; }`):
//! sluice-builder links libdevice into every kernel crate.
//!
//! cuda_std declares these `unsafe`; the functions of value arguments are safe
//! here, so an `unsafe { }` around a call only earns an `unused_unsafe` warning.

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
