//! Euclidean division and `__saturatef` from `trunc` and `fmod`: std's and CUDA's
//! definitions, which the GPU code (over libdevice's exact `fmod`) and the CPU
//! runtime both compute with (public as [`math::euclid`](crate::math::euclid)).

macro_rules! euclid {
    ($t:ident) => {
        /// Helpers for this float type.
        pub mod $t {
            /// `div_euclid` from `trunc_q = trunc(x / rhs)` and `r = fmod(x, rhs)`:
            /// std's definition.
            #[inline(always)]
            pub fn div(trunc_q: $t, r: $t, rhs: $t) -> $t {
                if r < 0.0 {
                    if rhs > 0.0 {
                        trunc_q - 1.0
                    } else {
                        trunc_q + 1.0
                    }
                } else {
                    trunc_q
                }
            }

            /// `rem_euclid` from `r = fmod(x, rhs)`: std's definition.
            #[inline(always)]
            pub fn rem(r: $t, rhs: $t) -> $t {
                if r < 0.0 {
                    r + rhs.abs()
                } else {
                    r
                }
            }

            /// `x` clamped to [0, 1], NaN to 0 (CUDA's `__saturatef`).
            #[inline(always)]
            pub fn saturate(x: $t) -> $t {
                if x > 0.0 {
                    if x < 1.0 {
                        x
                    } else {
                        1.0
                    }
                } else {
                    0.0
                }
            }
        }
    };
}
euclid!(f32);
euclid!(f64);

#[cfg(test)]
mod tests {
    #[test]
    fn euclid_matches_std() {
        for &(x, y) in
            &[(7.5f64, 2.0), (-7.5, 2.0), (7.5, -2.0), (-7.5, -2.0), (-0.0, 3.0), (1e300, 3.0), (-1e-300, 1.0)]
        {
            let (q, r) = ((x / y).trunc(), x % y);
            assert_eq!(super::f64::div(q, r, y), x.div_euclid(y), "div_euclid({x}, {y})");
            assert_eq!(super::f64::rem(r, y), x.rem_euclid(y), "rem_euclid({x}, {y})");
            let (xf, yf) = (x as f32, y as f32);
            let (qf, rf) = ((xf / yf).trunc(), xf % yf);
            let same = |a: f32, b: f32| a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan());
            assert!(same(super::f32::div(qf, rf, yf), xf.div_euclid(yf)), "div_euclid({xf}, {yf})");
            assert!(same(super::f32::rem(rf, yf), xf.rem_euclid(yf)), "rem_euclid({xf}, {yf})");
        }
    }

    #[test]
    fn saturate_clamps_and_maps_nan_to_zero() {
        assert_eq!(super::f32::saturate(f32::NAN), 0.0);
        assert_eq!(super::f32::saturate(-3.0), 0.0);
        assert_eq!(super::f32::saturate(0.25), 0.25);
        assert_eq!(super::f64::saturate(7.0), 1.0);
        assert_eq!(super::f64::saturate(f64::INFINITY), 1.0);
    }
}
