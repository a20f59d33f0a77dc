//! The math rows of the self-test: the libdevice functions added with the atomic
//! types and the width shuffles, in `f32` (rows 12–32) and `f64` (rows 33–43,
//! two words each), against `f64` references (the `libm` crate) within
//! libdevice's documented error bounds; and the argument each thread computes with
//! (the kernel body is [`super::run`]).

/// The argument of the Bessel and `log` rows for thread `t`.
pub fn bessel_x(t: usize) -> f32 {
    0.125 + t as f32 * 0.15625
}

/// The argument of the `erfcx` and `normcdf` rows.
pub fn erfcx_x(t: usize) -> f32 {
    -2.0 + t as f32 * 0.15
}

/// The argument of the `normcdfinv` rows.
pub fn normcdfinv_p(t: usize) -> f32 {
    (t as f32 + 0.5) / 64.0
}

/// The argument of the `rcbrt` rows.
pub fn rcbrt_x(t: usize) -> f32 {
    (t as f32 - 31.5) * 0.73
}

/// The argument of the `frexp`/`ilogb` rows (0 at t = 20).
pub fn frexp_x(t: usize) -> f32 {
    (t as f32 - 20.0) * 3700.5
}

/// The argument of the `sin_cos_pi` rows.
pub fn sincospi_x(t: usize) -> f32 {
    (t as f32 - 32.0) * 0.37
}

/// The dividend of the `fract`/`div_euclid`/`rem_euclid` rows.
pub fn euclid_x(t: usize) -> f32 {
    (t as f32 - 32.0) * 1.37
}

/// The divisor of the `div_euclid`/`rem_euclid` rows.
pub fn euclid_y(t: usize) -> f32 {
    if t & 1 == 0 {
        2.5
    } else {
        -2.5
    }
}

/// The argument of the `saturate` row (NaN at t = 0).
pub fn saturate_x(t: usize) -> f32 {
    if t == 0 {
        f32::NAN
    } else {
        (t as f32 - 16.0) * 0.05
    }
}

/// The host's side: what the rows must hold.
#[cfg(not(target_arch = "nvptx64"))]
pub(super) mod host {
    use super::super::check::{expect, near};
    use super::super::THREADS;
    use super::*;
    use std::string::{String, ToString};
    use std::vec::Vec;

    /// `Φ⁻¹(p)` by bisection on `Φ(x) = erfc(-x/√2)/2` (monotone), in f64.
    fn normcdfinv_ref(p: f64) -> f64 {
        let (mut lo, mut hi) = (-40.0f64, 40.0f64);
        for _ in 0..200 {
            let mid = 0.5 * (lo + hi);
            if 0.5 * libm::erfc(-mid / core::f64::consts::SQRT_2) < p {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        0.5 * (lo + hi)
    }

    fn erfcx_ref(x: f64) -> f64 {
        libm::exp(x * x) * libm::erfc(x)
    }

    /// Rows 12–43 against the `f64` references.
    pub(in super::super) fn check(out: &[u32], bad: &mut Vec<String>) {
        let at = |row: usize, t: usize| out[row * THREADS + t];
        for t in 0..THREADS {
            let f = |row: usize| f32::from_bits(at(row, t)) as f64;
            let x = bessel_x(t) as f64;
            let xe = erfcx_x(t) as f64;
            let p = normcdfinv_p(t) as f64;
            let xr = rcbrt_x(t) as f64;
            let xf = frexp_x(t);
            let ulp = f32::EPSILON as f64;
            near(bad, t, 12, f(12), erfcx_ref(xe), 5.0 * ulp, 0.0);
            near(bad, t, 13, f(13), libm::j0(x), 2e-5, 4e-6);
            near(bad, t, 14, f(14), libm::j1(x), 2e-5, 4e-6);
            near(bad, t, 15, f(15), libm::jn(3, x), 2e-5, 4e-6);
            near(bad, t, 16, f(16), libm::y0(x), 2e-5, 4e-6);
            near(bad, t, 17, f(17), libm::y1(x), 2e-5, 4e-6);
            near(bad, t, 18, f(18), libm::yn(2, x), 2e-5, 4e-6);
            near(bad, t, 19, f(19), 0.5 * libm::erfc(-xe / core::f64::consts::SQRT_2), 6.0 * ulp, 1e-44);
            near(bad, t, 20, f(20), normcdfinv_ref(p), 6.0 * ulp, 0.0);
            near(bad, t, 21, f(21), 1.0 / libm::cbrt(xr), 2.0 * ulp, 0.0);
            let (m, e) = libm::frexpf(xf);
            near(bad, t, 22, f(22), m as f64, 0.0, 0.0);
            expect(bad, 23, t, at(23, t) as i32 == e, (at(23, t) as i32).to_string(), e.to_string());
            let il = libm::ilogbf(xf);
            expect(bad, 24, t, at(24, t) as i32 == il, (at(24, t) as i32).to_string(), il.to_string());
            near(bad, t, 25, f(25), libm::scalbnf(bessel_x(t), t as i32 - 32) as f64, 0.0, 0.0);
            let xs = sincospi_x(t) as f64;
            let pi = core::f64::consts::PI;
            near(bad, t, 26, f(26), libm::sin(pi * xs), 2.0 * ulp, 2.0 * ulp);
            near(bad, t, 27, f(27), libm::cos(pi * xs), 2.0 * ulp, 2.0 * ulp);
            let (ex, ey) = (euclid_x(t), euclid_y(t));
            let fract = ex - libm::truncf(ex);
            near(bad, t, 28, f(28), fract as f64, 0.0, 0.0);
            let r = libm::fmodf(ex, ey);
            let q = crate::math::euclid::f32::div(libm::truncf(ex / ey), r, ey);
            near(bad, t, 29, f(29), q as f64, 0.0, 0.0);
            near(bad, t, 30, f(30), crate::math::euclid::f32::rem(r, ey) as f64, 0.0, 0.0);
            near(bad, t, 31, f(31), libm::log(x) / libm::log(3.0), 4.0 * ulp, 1e-7);
            near(bad, t, 32, f(32), crate::math::euclid::f32::saturate(saturate_x(t)) as f64, 0.0, 0.0);
            let d = |row: usize| f64::from_bits(at(row, t) as u64 | (at(row + 1, t) as u64) << 32);
            let eps = f64::EPSILON;
            near(bad, t, 33, d(33), libm::j1(x), 1e-12, 1e-14);
            near(bad, t, 35, d(35), libm::yn(3, x), 1e-12, 1e-14);
            near(bad, t, 37, d(37), erfcx_ref(xe), 16.0 * eps + 4.0 * eps * xe * xe, 0.0);
            near(bad, t, 39, d(39), normcdfinv_ref(p), 16.0 * eps, 1e-15);
            near(bad, t, 41, d(41), 1.0 / libm::cbrt(xr), 4.0 * eps, 0.0);
        }
    }

    /// Rows 12–43 from the references, rounded as a correct GPU rounds them.
    pub(in super::super) fn expected(out: &mut [u32]) {
        let mut put = |row: usize, t: usize, v: u32| out[row * THREADS + t] = v;
        for t in 0..THREADS {
            let x = bessel_x(t) as f64;
            let xe = erfcx_x(t) as f64;
            let p = normcdfinv_p(t) as f64;
            let xr = rcbrt_x(t) as f64;
            let xf = frexp_x(t);
            let (m, e) = libm::frexpf(xf);
            let (ex, ey) = (euclid_x(t), euclid_y(t));
            let r = libm::fmodf(ex, ey);
            let pi = core::f64::consts::PI;
            let f32s = [
                erfcx_ref(xe) as f32,
                libm::j0(x) as f32,
                libm::j1(x) as f32,
                libm::jn(3, x) as f32,
                libm::y0(x) as f32,
                libm::y1(x) as f32,
                libm::yn(2, x) as f32,
                (0.5 * libm::erfc(-xe / core::f64::consts::SQRT_2)) as f32,
                normcdfinv_ref(p) as f32,
                (1.0 / libm::cbrt(xr)) as f32,
                m,
                f32::from_bits(e as u32),
                f32::from_bits(libm::ilogbf(xf) as u32),
                libm::scalbnf(bessel_x(t), t as i32 - 32),
                libm::sin(pi * sincospi_x(t) as f64) as f32,
                libm::cos(pi * sincospi_x(t) as f64) as f32,
                ex - libm::truncf(ex),
                crate::math::euclid::f32::div(libm::truncf(ex / ey), r, ey),
                crate::math::euclid::f32::rem(r, ey),
                (libm::log(x) / libm::log(3.0)) as f32,
                crate::math::euclid::f32::saturate(saturate_x(t)),
            ];
            for (k, v) in f32s.iter().enumerate() {
                put(12 + k, t, v.to_bits());
            }
            let f64s = [libm::j1(x), libm::yn(3, x), erfcx_ref(xe), normcdfinv_ref(p), 1.0 / libm::cbrt(xr)];
            for (k, v) in f64s.iter().enumerate() {
                put(33 + 2 * k, t, v.to_bits() as u32);
                put(34 + 2 * k, t, (v.to_bits() >> 32) as u32);
            }
        }
    }
}
