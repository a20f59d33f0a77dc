//! Floating-point math in `f32` and `f64`, as methods named like std's:
//! `x.exp()`, `x.sin_cos()`, `x.powf(y)`. On the host (the CPU runtime) the
//! same traits are implemented with the `libm` crate and the functions C
//! lacks (`erfcx`, `normcdfinv`, `sin_pi`, ...) are computed in `f64`; the
//! `*_fast` methods are the exact ones there. On the host a method call such
//! as `x.erf()` may also name an unstable std method of the same name: rustc
//! then picks this trait's and warns (`unstable_name_collisions`).
//!
//! `core` has no transcendental functions, and on the GPU they come from
//! NVIDIA's **libdevice** (`nvvm/libdevice/libdevice.10.bc` in the CUDA
//! toolkit), the bitcode library nvcc uses for the same functions: each method
//! calls `__nv_*` (declared in [`libdevice`]), and `sluice-builder` links the
//! file into the kernels' bitcode (then the optimiser inlines what is used and
//! drops the rest). A kernel that calls a libdevice function in a build without
//! libdevice fails with a `LibdeviceMissing` error naming the functions (set
//! `SLUICE_LIBDEVICE` to the file).
//!
//! Methods that compile to one PTX instruction (`sqrt`, `mul_add`, `floor`,
//! `ceil`, `trunc`, `abs`, `copysign`, `min`, `max`) use LLVM intrinsics and
//! need no libdevice.
//!
//! Accuracy is libdevice's (CUDA Programming Guide, "Mathematical Functions"):
//! e.g. `exp`, `sin`, `cos` within 2 ulp in `f32`, 1 ulp in `f64`; `sqrt` is
//! correctly rounded (`sqrt.rn`), as `sqrtf` in nvcc's default mode. Results are
//! the same as those of nvcc's `expf`, `sinf`, ... with default flags (no
//! `-use_fast_math`, no flush-to-zero).
//!
//! # Fast approximate variants
//!
//! [`FastFloat`] (for `f32`) adds the `*_fast` methods: the functions nvcc
//! uses for `__expf`, `__sinf`, `__fdividef`, ... or under `-use_fast_math`
//! (`ex2.approx`, `sin.approx`, `lg2.approx`, `rcp.approx`, `tanh.approx`).
//! They are several times faster and much less accurate (absolute errors around
//! 2^-21 for `sin_fast` in [-π, π], relative errors of a few ulp for
//! `exp_fast` that grow with |x|), and no subnormal support. Use them
//! knowingly; the name says so at every call site.
//!
//! # Names
//!
//! | C / CUDA | sluice (std name) | | C / CUDA | sluice |
//! | --- | --- | --- | --- | --- |
//! | `sqrtf` | `sqrt` | | `rsqrtf` | `rsqrt` |
//! | `fmaf` | `mul_add` | | `cbrtf` | `cbrt` |
//! | `expf`, `exp2f`, `exp10f`, `expm1f` | `exp`, `exp2`, `exp10`, `exp_m1` | | `logf`, `log2f`, `log10f`, `log1pf` | `ln`, `log2`, `log10`, `ln_1p` |
//! | `sinf`, `cosf`, `tanf`, `sincosf` | `sin`, `cos`, `tan`, `sin_cos` | | `sinpif`, `cospif` | `sin_pi`, `cos_pi` |
//! | `asinf`, `acosf`, `atanf`, `atan2f` | `asin`, `acos`, `atan`, `atan2` | | `sinhf`, `coshf`, `tanhf` | `sinh`, `cosh`, `tanh` |
//! | `asinhf`, `acoshf`, `atanhf` | `asinh`, `acosh`, `atanh` | | `powf`, `powif` | `powf`, `powi` |
//! | `erff`, `erfcf`, `erfinvf`, `erfcinvf` | `erf`, `erfc`, `erf_inv`, `erfc_inv` | | `tgammaf`, `lgammaf` | `gamma`, `ln_gamma` |
//! | `floorf`, `ceilf`, `truncf`, `roundf`, `rintf` | `floor`, `ceil`, `trunc`, `round`, `round_ties_even` | | `fabsf`, `copysignf` | `abs`, `copysign` |
//! | `fminf`, `fmaxf` | `min`, `max` | | `fmodf`, `remainderf`, `fdimf` | `fmod`, `remainder`, `fdim` |
//! | `hypotf`, `rhypotf` | `hypot`, `rhypot` | | `ldexpf` | `ldexp` |
//! | `__expf`, `__exp10f` | `exp_fast`, `exp10_fast` | | `exp2f` (approx) | `exp2_fast` |
//! | `__logf`, `__log2f`, `__log10f` | `ln_fast`, `log2_fast`, `log10_fast` | | `__sinf`, `__cosf`, `__tanf`, `__sincosf` | `sin_fast`, `cos_fast`, `tan_fast`, `sin_cos_fast` |
//! | `__powf` | `powf_fast` | | `__fdividef` | `div_fast` |
//! | `tanhf` (approx, `-use_fast_math`) | `tanh_fast` | | `__fsqrt_rn` vs approx | `sqrt_fast` |
//! | `erfcxf` | `erfcx` | | `frexpf`, `ilogbf`, `scalbnf` | `frexp`, `ilogb`, `scalbn` |
//! | `j0f`, `j1f`, `jnf(n, x)` | `j0`, `j1`, `jn(n)` | | `y0f`, `y1f`, `ynf(n, x)` | `y0`, `y1`, `yn(n)` |
//! | `normcdff`, `normcdfinvf` | `normcdf`, `normcdfinv` | | `rcbrtf` | `rcbrt` |
//! | `__saturatef` | `saturate` | | `sincospif` | `sin_cos_pi` |
//! | `x - truncf(x)` | `fract` | | `logf(x) / logf(b)` | `log(b)` |
//! | (Rust) | `div_euclid`, `rem_euclid` | | `__float2uint_rz`, `__float2int_rz` (as Rust's `as`, for `f32`) | `to_u32_sat`, `to_i32_sat` |
//!
//! # Exact and approximate, side by side
//!
//! CUDA C++ code ported to Rust often uses the intrinsics on the right; each has
//! an exact twin on the left. Error bounds are those of the CUDA C++ Programming
//! Guide ("Mathematical Functions", standard and intrinsic functions), for
//! `f32`, in ulp unless stated:
//!
//! | exact (sluice) | bound | approximate (sluice) | CUDA | bound |
//! | --- | --- | --- | --- | --- |
//! | `x / y` | 0 (`div.rn`) | `x.div_fast(y)` | `__fdividef` | 2 for 2^-126 ≤ \|y\| ≤ 2^126; 0 returned for larger \|y\| |
//! | `1.0 / x.sqrt()` | ≤ 1 (two correctly rounded steps) | `x.rsqrt()` | `rsqrtf` | 2 (one `MUFU.RSQ`: the usual choice for inverse-square-root kernels) |
//! | `x.sqrt()` | 0 (`sqrt.rn`) | `x.sqrt_fast()` | `sqrtf` with `-prec-sqrt=false` | 1 on sm_52+ |
//! | `x.exp()` | 2 | `x.exp_fast()` | `__expf` | 2 + floor(\|1.173·x\|) |
//! | `x.exp10()` | 2 | `x.exp10_fast()` | `__exp10f` | 2 + floor(\|2.97·x\|) |
//! | `x.ln()` | 1 | `x.ln_fast()` | `__logf` | 2^-21.41 absolute in [0.5, 2], else 3 |
//! | `x.log2()` | 1 | `x.log2_fast()` | `__log2f` | 2^-22 absolute in [0.5, 2], else 2 |
//! | `x.log10()` | 2 | `x.log10_fast()` | `__log10f` | 2^-24 absolute in [0.5, 2], else 3 |
//! | `x.sin()`, `x.cos()` | 2 | `x.sin_fast()`, `x.cos_fast()` | `__sinf`, `__cosf` | 2^-21.41 / 2^-19.19 absolute in [-π, π], larger outside |
//! | `x.sin_cos()` | 2 | `x.sin_cos_fast()` | `__sincosf` | as `__sinf`, `__cosf` |
//! | `x.tan()` | 4 | `x.tan_fast()` | `__tanf` | from `__sinf`/`__cosf`: large near poles |
//! | `x.powf(y)` | 4 | `x.powf_fast(y)` | `__powf` | from `exp2(y·__log2f(x))`: grows with \|y·log2 x\| |
//! | `x.tanh()` | 2 | `x.tanh_fast()` | `tanh.approx.f32` (sm_75+) | about 2^-11 relative |
//! | `x.exp2()` | 2 | `x.exp2_fast()` | `ex2.approx.ftz.f32` | about 2; subnormal results flushed to 0 |
//!
//! The approximate forms are one or two special-function-unit instructions; the
//! exact ones are short instruction sequences (division and square root about
//! ten times longer). A benchmark comparing Rust with CUDA C++ must use the same
//! column on both sides. `f64` has no approximate forms (except `rsqrt`, which is
//! libdevice's correctly rounded-within-1-ulp `rsqrt` for `f64`).
//!
//! Float `%` in Rust is *not* used by these methods: `fmod`, `rem_euclid` and
//! `div_euclid` call libdevice's exact `fmod`.
//!
//! # Hardware support
//!
//! Every architecture (`tanh_fast`: sm_75+, below every architecture sluice builds for).
//!
//! # On the CPU
//!
//! The same traits from the `libm` crate (`cpu.rs`; musl's functions, within 1 ulp),
//! with what C lacks (`erfcx`, `normcdfinv`, `sin_pi`, ...) computed in `f64`; the
//! `*_fast` methods are the exact functions there, so a CPU result is not bitwise
//! the GPU's for them (within the documented bounds). Math touches no memory: the
//! race checker has nothing to see.
//!
//! # Example (device code)
//!
//! ```ignore
//! use sluice_device::math::DeviceFloat;
//! let (s, c) = theta.sin_cos();
//! let g = (-0.5 * r * r).exp() * inv_sqrt_2pi;
//! ```

/// libdevice's functions, as `extern "C"` declarations (device only). Prefer
/// the methods of [`DeviceFloat`] and [`FastFloat`]; these are here for the
/// rest of libdevice's ~500 functions, which a kernel may declare the same way.
#[cfg(target_arch = "nvptx64")]
pub mod libdevice;

// The backend, chosen once: libdevice and PTX on the GPU, the `libm` crate on the CPU.
#[cfg_attr(target_arch = "nvptx64", path = "gpu.rs")]
#[cfg_attr(not(target_arch = "nvptx64"), path = "cpu.rs")]
mod imp;

/// Math methods for `f32` and `f64` on the device, named as std's.
/// See the [module docs](super) for accuracy and the C names.
pub trait DeviceFloat: Copy {
    /// Square root, correctly rounded (`sqrt.rn`).
    fn sqrt(self) -> Self;
    /// `1 / sqrt(x)` (`rsqrt.approx` for f32, as CUDA's `rsqrtf`; 1 ulp for f64).
    fn rsqrt(self) -> Self;
    /// Cube root.
    fn cbrt(self) -> Self;
    /// `self * a + b` with one rounding (`fma.rn`).
    fn mul_add(self, a: Self, b: Self) -> Self;
    /// e^x.
    fn exp(self) -> Self;
    /// 2^x.
    fn exp2(self) -> Self;
    /// 10^x.
    fn exp10(self) -> Self;
    /// e^x - 1, accurate near 0.
    fn exp_m1(self) -> Self;
    /// Natural logarithm.
    fn ln(self) -> Self;
    /// Base-2 logarithm.
    fn log2(self) -> Self;
    /// Base-10 logarithm.
    fn log10(self) -> Self;
    /// ln(1 + x), accurate near 0.
    fn ln_1p(self) -> Self;
    /// Sine (radians).
    fn sin(self) -> Self;
    /// Cosine (radians).
    fn cos(self) -> Self;
    /// Tangent (radians).
    fn tan(self) -> Self;
    /// `(sin x, cos x)`, computed together.
    fn sin_cos(self) -> (Self, Self);
    /// sin(πx).
    fn sin_pi(self) -> Self;
    /// cos(πx).
    fn cos_pi(self) -> Self;
    /// Arcsine.
    fn asin(self) -> Self;
    /// Arccosine.
    fn acos(self) -> Self;
    /// Arctangent.
    fn atan(self) -> Self;
    /// Four-quadrant arctangent of `self / x` (`atan2(self, x)`).
    fn atan2(self, x: Self) -> Self;
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
    /// x^y.
    fn powf(self, y: Self) -> Self;
    /// x^n.
    fn powi(self, n: i32) -> Self;
    /// Error function.
    fn erf(self) -> Self;
    /// Complementary error function, 1 - erf(x).
    fn erfc(self) -> Self;
    /// Inverse error function.
    fn erf_inv(self) -> Self;
    /// Inverse complementary error function.
    fn erfc_inv(self) -> Self;
    /// Gamma function.
    fn gamma(self) -> Self;
    /// ln |Γ(x)|.
    fn ln_gamma(self) -> Self;
    /// Largest integer <= x.
    fn floor(self) -> Self;
    /// Smallest integer >= x.
    fn ceil(self) -> Self;
    /// Integer part (towards zero).
    fn trunc(self) -> Self;
    /// Nearest integer, halves away from zero.
    fn round(self) -> Self;
    /// Nearest integer, halves to even.
    fn round_ties_even(self) -> Self;
    /// |x|.
    fn abs(self) -> Self;
    /// |x| with the sign of `sign`.
    fn copysign(self, sign: Self) -> Self;
    /// `1.0` with the sign of `x` (`-1.0` for `-0.0`); NaN for NaN (std's `signum`).
    fn signum(self) -> Self;
    /// Minimum; a NaN operand is ignored (`fminf`).
    fn min(self, other: Self) -> Self;
    /// Maximum; a NaN operand is ignored (`fmaxf`).
    fn max(self, other: Self) -> Self;
    /// C's `fmod`: x - trunc(x / y) * y (Rust's `%`).
    fn fmod(self, y: Self) -> Self;
    /// IEEE remainder: x - round_ties_even(x / y) * y.
    fn remainder(self, y: Self) -> Self;
    /// `max(x - y, 0)`.
    fn fdim(self, y: Self) -> Self;
    /// sqrt(x² + y²) without undue overflow.
    fn hypot(self, y: Self) -> Self;
    /// 1 / sqrt(x² + y²).
    fn rhypot(self, y: Self) -> Self;
    /// x · 2^e.
    fn ldexp(self, e: i32) -> Self;
    /// x · 2^n (`scalbn`; the same as [`ldexp`](Self::ldexp) in base 2).
    fn scalbn(self, n: i32) -> Self;
    /// The fractional part, `x - x.trunc()` (sign of `x`; as std's `fract`).
    fn fract(self) -> Self;
    /// Euclidean division: the `q` with `self = q·rhs + r`, `0 <= r < |rhs|`
    /// (std's `div_euclid`; the remainder is libdevice's exact `fmod`).
    fn div_euclid(self, rhs: Self) -> Self;
    /// The least non-negative remainder of `self / rhs` (std's `rem_euclid`).
    fn rem_euclid(self, rhs: Self) -> Self;
    /// Logarithm in base `base`, `ln(x) / ln(base)` (std's `log`; not
    /// correctly rounded).
    fn log(self, base: Self) -> Self;
    /// The scaled complementary error function, `exp(x²)·erfc(x)` (`erfcx`),
    /// accurate where `erfc` underflows.
    fn erfcx(self) -> Self;
    /// `(m, e)` with `x = m · 2^e`, `0.5 <= |m| < 1` (`frexp`; `(x, 0)` for 0, ∞, NaN).
    fn frexp(self) -> (Self, i32);
    /// The unbiased exponent as an integer (`ilogb`): `floor(log2 |x|)`;
    /// `i32::MIN` for 0 and NaN (CUDA's `FP_ILOGB0`/`FP_ILOGBNAN`), `i32::MAX` for ∞.
    fn ilogb(self) -> i32;
    /// Bessel function of the first kind, order 0.
    fn j0(self) -> Self;
    /// Bessel function of the first kind, order 1.
    fn j1(self) -> Self;
    /// Bessel function of the first kind, order `n` (`jn(n, x)`).
    fn jn(self, n: i32) -> Self;
    /// Bessel function of the second kind, order 0 (NaN for x < 0, -∞ at 0).
    fn y0(self) -> Self;
    /// Bessel function of the second kind, order 1.
    fn y1(self) -> Self;
    /// Bessel function of the second kind, order `n` (`yn(n, x)`).
    fn yn(self, n: i32) -> Self;
    /// The standard normal cumulative distribution function, `Φ(x)` (`normcdf`).
    fn normcdf(self) -> Self;
    /// Its inverse, `Φ⁻¹(p)` for `p` in (0, 1) (`normcdfinv`).
    fn normcdfinv(self) -> Self;
    /// `1 / cbrt(x)` (`rcbrt`).
    fn rcbrt(self) -> Self;
    /// `x` clamped to [0, 1]; NaN gives 0 (`__saturatef`).
    fn saturate(self) -> Self;
    /// `(sin(πx), cos(πx))`, computed together (`sincospi`).
    fn sin_cos_pi(self) -> (Self, Self);
    /// `self as u32`: truncated towards zero, saturating at `0` and `u32::MAX`, NaN to `0`
    /// (Rust's `as`). For `f32` it is one `cvt.rzi.u32.f32`, the instruction nvcc emits for
    /// `__float2uint_rz(x)` and `(unsigned)x`: PTX's float-to-integer `cvt` clamps to the
    /// destination's range, and from an `f32` turns NaN into 0 (PTX ISA, `cvt`, "Integer
    /// Notes"). LLVM does not rely on that: it lowers `as u32` to the same instruction plus
    /// two compares and two selects (four instructions more per element in the histogram's
    /// loop). For `f64` it is `as u32`, which LLVM clamps with `max`/`min` first: from an
    /// `f64`, `cvt` turns NaN into `1 << 31`, where Rust (unlike CUDA's `__double2uint_rz`)
    /// wants 0. Same result as `as u32` on both backends.
    ///
    /// Not `num_traits::ToPrimitive::to_u32`, which returns an `Option` (`None` for NaN or
    /// out of range): hence the `_sat` in the name.
    ///
    /// ```
    /// use sluice_device::math::DeviceFloat;
    /// let sat = (2.9f32.to_u32_sat(), (-1.5f32).to_u32_sat(), f32::NAN.to_u32_sat(), 1e10f32.to_u32_sat());
    /// assert_eq!(sat, (2, 0, 0, u32::MAX));
    /// assert_eq!((7.5f64.to_u32_sat(), f64::NAN.to_u32_sat()), (7, 0));
    /// ```
    fn to_u32_sat(self) -> u32;
    /// `self as i32`: truncated towards zero, saturating at `i32::MIN` and `i32::MAX`, NaN
    /// to `0` (Rust's `as`). For `f32` one `cvt.rzi.s32.f32` (nvcc's `__float2int_rz(x)` and
    /// `(int)x`), where LLVM adds three compares and three selects to `as i32`; for `f64`,
    /// `as i32`, which LLVM clamps and tests for NaN (see [`to_u32_sat`](Self::to_u32_sat)).
    ///
    /// ```
    /// use sluice_device::math::DeviceFloat;
    /// assert_eq!(((-2.9f32).to_i32_sat(), f32::NAN.to_i32_sat(), f32::INFINITY.to_i32_sat()), (-2, 0, i32::MAX));
    /// assert_eq!(((-1e300f64).to_i32_sat(), f64::NAN.to_i32_sat()), (i32::MIN, 0));
    /// ```
    fn to_i32_sat(self) -> i32;
}

/// Fast, approximate `f32` math (the `__expf` family of CUDA, and what
/// `-use_fast_math` substitutes). See the [module docs](super) for accuracy.
pub trait FastFloat: Copy {
    /// Approximate e^x (`__expf`: `ex2.approx` of `x·log2(e)`).
    fn exp_fast(self) -> Self;
    /// Approximate 2^x (`ex2.approx.ftz.f32`).
    fn exp2_fast(self) -> Self;
    /// Approximate 10^x (`__exp10f`).
    fn exp10_fast(self) -> Self;
    /// Approximate ln x (`__logf`).
    fn ln_fast(self) -> Self;
    /// Approximate log2 x (`__log2f`, `lg2.approx`).
    fn log2_fast(self) -> Self;
    /// Approximate log10 x (`__log10f`).
    fn log10_fast(self) -> Self;
    /// Approximate sine (`__sinf`, `sin.approx`); accurate only for |x| up to a few π.
    fn sin_fast(self) -> Self;
    /// Approximate cosine (`__cosf`, `cos.approx`).
    fn cos_fast(self) -> Self;
    /// Approximate tangent (`__tanf`).
    fn tan_fast(self) -> Self;
    /// Approximate `(sin x, cos x)` (`__sincosf`).
    fn sin_cos_fast(self) -> (Self, Self);
    /// Approximate x^y (`__powf`: `exp2(y·log2 x)` with approximate parts).
    fn powf_fast(self, y: Self) -> Self;
    /// Approximate x / y (`__fdividef`); wrong for |y| > 2^126.
    fn div_fast(self, y: Self) -> Self;
    /// Approximate square root (`sqrt.approx.f32`).
    fn sqrt_fast(self) -> Self;
    /// Approximate hyperbolic tangent (`tanh.approx.f32`, sm_75+).
    fn tanh_fast(self) -> Self;
}

/// The pure parts of [`DeviceFloat`]'s Euclidean division and `saturate`,
/// shared with the host tests (which check them against std).
pub use crate::spec::math as euclid;
