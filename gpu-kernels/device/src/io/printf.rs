//! `vprintf` on the CPU: the C format string of a `dprint!`, applied to the
//! arguments packed as the device packs them (each promoted C argument at an
//! offset aligned to its size: 4 bytes for `%d %u %x %c`..., 8 for the `l`
//! forms, `%f`-family doubles, `%s` and `%p` pointers), formatted as C's
//! `printf` formats them.
//!
//! Supported: the conversions `dprint!` accepts (`d i u x X o c f F e E g G a A s p %`),
//! the flags `- + space # 0`, a decimal width and precision, the length
//! modifiers `hh h l ll z j t L`.

use std::format;
use std::string::{String, ToString};
use std::vec::Vec;

/// Formats the NUL-terminated C format `fmt` with the packed arguments at `args`.
///
/// # Safety
///
/// `fmt` is NUL-terminated; `args` holds one promoted argument per
/// conversion of `fmt`, of the type the conversion reads, laid out as a
/// `#[repr(C)]` struct (checked at compile time by `dprint!`); every `%s`
/// argument is null or a NUL-terminated string.
pub(crate) unsafe fn format(fmt: *const u8, args: *const u8) -> String {
    // SAFETY: NUL-terminated (caller).
    let fmt = unsafe { core::ffi::CStr::from_ptr(fmt.cast()) }.to_bytes();
    let mut offset = 0usize;
    let mut next = |size: usize| -> u64 {
        offset = (offset + size - 1) & !(size - 1);
        // SAFETY: the argument at `offset` is `size` bytes of the packed struct (caller).
        let v = unsafe {
            if size == 4 {
                (args.add(offset) as *const u32).read_unaligned() as u64
            } else {
                (args.add(offset) as *const u64).read_unaligned()
            }
        };
        offset += size;
        v
    };
    let mut out = Vec::<u8>::new();
    let mut i = 0;
    while i < fmt.len() {
        if fmt[i] != b'%' {
            out.push(fmt[i]);
            i += 1;
            continue;
        }
        i += 1;
        let mut spec = Spec::default();
        while i < fmt.len() {
            match fmt[i] {
                b'-' => spec.left = true,
                b'+' => spec.plus = true,
                b' ' => spec.space = true,
                b'#' => spec.alt = true,
                b'0' => spec.zero = true,
                _ => break,
            }
            i += 1;
        }
        while i < fmt.len() && fmt[i].is_ascii_digit() {
            // At most MAX_FIELD in a checked format; saturating for any other.
            spec.width = (spec.width * 10 + (fmt[i] - b'0') as usize).min(crate::io::MAX_FIELD);
            i += 1;
        }
        if i < fmt.len() && fmt[i] == b'.' {
            i += 1;
            let mut p = 0;
            while i < fmt.len() && fmt[i].is_ascii_digit() {
                p = (p * 10 + (fmt[i] - b'0') as usize).min(crate::io::MAX_FIELD);
                i += 1;
            }
            spec.precision = Some(p);
        }
        let mut long = false;
        let mut half = 0;
        while i < fmt.len() && matches!(fmt[i], b'h' | b'l' | b'z' | b'j' | b't' | b'L') {
            match fmt[i] {
                b'h' => half += 1,
                b'L' => {}
                _ => long = true,
            }
            i += 1;
        }
        let Some(&conv) = fmt.get(i) else { break };
        i += 1;
        let int_size = if long { 8 } else { 4 };
        let body: Vec<u8> = match conv {
            b'%' => {
                out.push(b'%');
                continue;
            }
            b'd' | b'i' => {
                let raw = next(int_size);
                let v: i64 = match (long, half) {
                    (true, _) => raw as i64,
                    (false, 0) => raw as u32 as i32 as i64,
                    (false, 1) => raw as u16 as i16 as i64,
                    _ => raw as u8 as i8 as i64,
                };
                spec.integer(v < 0, v.unsigned_abs(), 10, false, b"")
            }
            b'u' | b'x' | b'X' | b'o' => {
                let raw = next(int_size);
                let v: u64 = match (long, half) {
                    (true, _) => raw,
                    (false, 0) => raw as u32 as u64,
                    (false, 1) => raw as u16 as u64,
                    _ => raw as u8 as u64,
                };
                let (base, upper) = match conv {
                    b'x' => (16, false),
                    b'X' => (16, true),
                    b'o' => (8, false),
                    _ => (10, false),
                };
                let prefix: &[u8] = match conv {
                    b'x' if spec.alt && v != 0 => b"0x",
                    b'X' if spec.alt && v != 0 => b"0X",
                    _ => b"",
                };
                spec.integer(false, v, base, upper, prefix)
            }
            b'c' => {
                let c = next(int_size) as u8;
                spec.pad(&[], &[c], false)
            }
            b'f' | b'F' | b'e' | b'E' | b'g' | b'G' | b'a' | b'A' => spec.float(f64::from_bits(next(8)), conv),
            b's' => {
                let p = next(8) as usize as *const core::ffi::c_char;
                let s: &[u8] = if p.is_null() {
                    b"(null)"
                } else {
                    // SAFETY: a `%s` argument is a NUL-terminated string (`&CStr`, caller).
                    unsafe { core::ffi::CStr::from_ptr(p) }.to_bytes()
                };
                let s = match spec.precision {
                    Some(n) if n < s.len() => &s[..n],
                    _ => s,
                };
                spec.pad(&[], s, false)
            }
            b'p' => {
                let p = next(8);
                let s = if p == 0 { String::from("(nil)") } else { format!("{p:#x}") };
                spec.pad(&[], s.as_bytes(), false)
            }
            other => {
                // `dprint!` refuses any other conversion at compile time.
                out.push(b'%');
                out.push(other);
                continue;
            }
        };
        out.extend_from_slice(&body);
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[derive(Default)]
struct Spec {
    left: bool,
    plus: bool,
    space: bool,
    alt: bool,
    zero: bool,
    width: usize,
    precision: Option<usize>,
}

impl Spec {
    /// `sign`, `prefix`, then `digits`, padded to the width: with zeros after
    /// the prefix if `zeros` (the `0` flag, for numbers), else with spaces.
    fn pad(&self, prefix: &[u8], digits: &[u8], zeros: bool) -> Vec<u8> {
        let len = prefix.len() + digits.len();
        let fill = self.width.saturating_sub(len);
        let mut v = Vec::with_capacity(len + fill);
        if self.left {
            v.extend_from_slice(prefix);
            v.extend_from_slice(digits);
            v.resize(len + fill, b' ');
        } else if zeros && self.zero {
            v.extend_from_slice(prefix);
            v.resize(prefix.len() + fill, b'0');
            v.extend_from_slice(digits);
        } else {
            v.resize(fill, b' ');
            v.extend_from_slice(prefix);
            v.extend_from_slice(digits);
        }
        v
    }

    fn sign(&self, negative: bool) -> &'static [u8] {
        if negative {
            b"-"
        } else if self.plus {
            b"+"
        } else if self.space {
            b" "
        } else {
            b""
        }
    }

    fn integer(&self, negative: bool, v: u64, base: u64, upper: bool, prefix: &[u8]) -> Vec<u8> {
        let mut digits = Vec::new();
        let mut x = v;
        while x > 0 {
            let d = (x % base) as u8;
            digits.push(match d {
                0..=9 => b'0' + d,
                _ if upper => b'A' + d - 10,
                _ => b'a' + d - 10,
            });
            x /= base;
        }
        let min = self.precision.unwrap_or(1);
        while digits.len() < min {
            digits.push(b'0');
        }
        if base == 8 && self.alt && digits.last() != Some(&b'0') {
            digits.push(b'0');
        }
        digits.reverse();
        let mut pre = self.sign(negative).to_vec();
        pre.extend_from_slice(prefix);
        // The `0` flag is ignored when a precision is given (C).
        self.pad(&pre, &digits, self.precision.is_none())
    }

    fn float(&self, v: f64, conv: u8) -> Vec<u8> {
        let upper = conv.is_ascii_uppercase();
        let sign = self.sign(v.is_sign_negative() && !v.is_nan());
        if !v.is_finite() {
            let s = match (v.is_nan(), upper) {
                (true, false) => "nan",
                (true, true) => "NAN",
                (false, false) => "inf",
                (false, true) => "INF",
            };
            return self.pad(sign, s.as_bytes(), false);
        }
        let a = v.abs();
        let mut body = match conv.to_ascii_lowercase() {
            b'f' => fixed(a, self.precision.unwrap_or(6), self.alt),
            b'e' => exponent(a, self.precision.unwrap_or(6), self.alt),
            b'g' => general(a, self.precision.unwrap_or(6), self.alt),
            _ => hex(a, self.precision, self.alt),
        };
        if upper {
            body.make_ascii_uppercase();
        }
        let (prefix, digits) = if conv.eq_ignore_ascii_case(&b'a') {
            let mut p = sign.to_vec();
            p.extend_from_slice(if upper { b"0X" } else { b"0x" });
            (p, body.into_bytes()[2..].to_vec())
        } else {
            (sign.to_vec(), body.into_bytes())
        };
        self.pad(&prefix, &digits, true)
    }
}

/// `%f` of `a >= 0`.
fn fixed(a: f64, p: usize, alt: bool) -> String {
    let mut s = format!("{a:.p$}");
    if alt && p == 0 {
        s.push('.');
    }
    s
}

/// `%e` of `a >= 0`: `d.ddde±XX`.
fn exponent(a: f64, p: usize, alt: bool) -> String {
    let s = format!("{a:.p$e}");
    let (mantissa, exp) = s.split_once('e').unwrap_or((&s, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let dot = if alt && p == 0 { "." } else { "" };
    format!("{mantissa}{dot}e{}{:02}", if exp < 0 { '-' } else { '+' }, exp.unsigned_abs())
}

/// `%g` of `a >= 0`.
fn general(a: f64, p: usize, alt: bool) -> String {
    let p = p.max(1);
    // The exponent `%e` would print at precision p - 1 (after rounding).
    let e = format!("{a:.*e}", p - 1);
    let x: i32 = e.split_once('e').map_or(0, |(_, x)| x.parse().unwrap_or(0));
    let mut s =
        if (-4..p as i32).contains(&x) { fixed(a, (p as i32 - 1 - x) as usize, alt) } else { exponent(a, p - 1, alt) };
    if !alt {
        // Trailing zeros of the fraction go, and the point if nothing follows it.
        let (num, exp) = match s.find('e') {
            Some(k) => (s[..k].to_string(), s[k..].to_string()),
            None => (s.clone(), String::new()),
        };
        let num = if num.contains('.') { num.trim_end_matches('0').trim_end_matches('.').to_string() } else { num };
        s = num + &exp;
    }
    s
}

/// `%a` of `a >= 0`: `0x1.hhhp±d` (normal), `0x0.hhhp-1022` (subnormal),
/// rounded to `precision` hex digits (ties to even) if given, else exact.
fn hex(a: f64, precision: Option<usize>, alt: bool) -> String {
    let bits = a.to_bits();
    let raw_exp = (bits >> 52) as i32;
    let mut mant = bits & ((1u64 << 52) - 1);
    let (mut lead, exp) = match (raw_exp, mant) {
        (0, 0) => (0u64, 0),
        (0, _) => (0, -1022),
        _ => (1, raw_exp - 1023),
    };
    let digits = match precision {
        Some(p) if p < 13 => {
            let drop = 52 - 4 * p as u32;
            let rem = mant & ((1u64 << drop) - 1);
            let half = 1u64 << (drop - 1);
            mant >>= drop;
            if rem > half || (rem == half && mant & 1 == 1) {
                mant += 1;
                if mant >> (4 * p) != 0 {
                    mant &= (1u64 << (4 * p)) - 1;
                    lead += 1;
                }
            }
            p
        }
        Some(p) => {
            // More digits than the mantissa has: zeros below it.
            return hex_text(lead, mant, 13, p - 13, exp, alt);
        }
        None => {
            let mut n = 13;
            while n > 0 && mant & 0xf == 0 {
                mant >>= 4;
                n -= 1;
            }
            n
        }
    };
    hex_text(lead, mant, digits, 0, exp, alt)
}

fn hex_text(lead: u64, mant: u64, digits: usize, zeros: usize, exp: i32, alt: bool) -> String {
    let mut frac = if digits == 0 { String::new() } else { format!("{mant:0digits$x}") };
    frac.push_str(&"0".repeat(zeros));
    let dot = if !frac.is_empty() || alt { "." } else { "" };
    format!("0x{lead}{dot}{frac}p{}{}", if exp < 0 { '-' } else { '+' }, exp.unsigned_abs())
}

#[cfg(test)]
mod tests {
    use super::format;
    use std::string::String;

    /// Packs arguments as `dprint!` does: 4-byte `u32`s, 8-byte `u64`s, each aligned to its size.
    enum A {
        W(u32),
        D(u64),
        F(f64),
        S(&'static core::ffi::CStr),
    }

    fn fmt(f: &str, args: &[A]) -> String {
        let mut buf = std::vec![0u64; 16];
        let bytes = buf.as_mut_ptr() as *mut u8;
        let mut off = 0usize;
        for a in args {
            let (size, v) = match a {
                A::W(w) => (4, *w as u64),
                A::D(d) => (8, *d),
                A::F(x) => (8, x.to_bits()),
                A::S(s) => (8, s.as_ptr() as u64),
            };
            off = off.div_ceil(size) * size;
            // SAFETY: `off + size <= 128` bytes of `buf` (at most 16 arguments of 8 bytes).
            unsafe {
                if size == 4 {
                    (bytes.add(off) as *mut u32).write_unaligned(v as u32)
                } else {
                    (bytes.add(off) as *mut u64).write_unaligned(v)
                }
            }
            off += size;
        }
        let f = std::format!("{f}\0");
        // SAFETY: NUL-terminated; the arguments are packed as the conversions read them.
        unsafe { format(f.as_ptr(), bytes) }
    }

    #[test]
    fn integers_as_c_prints_them() {
        use A::*;
        assert_eq!(fmt("%d|%i|%u", &[W(-5i32 as u32), W(42), W(u32::MAX)]), "-5|42|4294967295");
        assert_eq!(
            fmt("[%5d][%-5d][%05d][%+d][% d]", &[W(42), W(42), W(-42i32 as u32), W(7), W(7)]),
            "[   42][42   ][-0042][+7][ 7]"
        );
        assert_eq!(fmt("%x %X %#x %o %#o %#x", &[W(255), W(255), W(255), W(8), W(8), W(0)]), "ff FF 0xff 10 010 0");
        assert_eq!(fmt("%.3d|%.0d|%8.3x", &[W(7), W(0), W(10)]), "007||     00a");
        assert_eq!(
            fmt("%lld %llu %lx %zu", &[D(-1i64 as u64), D(u64::MAX), D(0xdead_beef_cafe), D(12)]),
            "-1 18446744073709551615 deadbeefcafe 12"
        );
        assert_eq!(fmt("%hhu %hd %c%c", &[W(300), W(70000), W(b'o' as u32), W(b'k' as u32)]), "44 4464 ok");
        assert_eq!(fmt("100%% of %d", &[W(3)]), "100% of 3");
    }

    #[test]
    fn floats_as_c_prints_them() {
        use A::*;
        assert_eq!(
            fmt("%f %.2f %8.3f %-8.1f| %08.2f %+.1f", &[F(1.5), F(1.23456), F(2.0), F(-0.25), F(-3.5), F(2.0)]),
            "1.500000 1.23    2.000 -0.2    | -0003.50 +2.0"
        );
        assert_eq!(
            fmt("%e %.2E %.0e %e", &[F(12345.678), F(0.000123), F(5e10), F(0.0)]),
            "1.234568e+04 1.23E-04 5e+10 0.000000e+00"
        );
        assert_eq!(
            fmt("%g %g %g %g %g %G", &[F(100000.0), F(1e6), F(0.0001), F(0.00001234), F(3.0), F(1e-10)]),
            "100000 1e+06 0.0001 1.234e-05 3 1E-10"
        );
        assert_eq!(fmt("%.3g %#g %.10g", &[F(1.23456), F(3.0), F(0.1)]), "1.23 3.00000 0.1");
        assert_eq!(
            fmt(
                "%f %F %e %g %5.1f",
                &[F(f64::INFINITY), F(f64::NEG_INFINITY), F(f64::NAN), F(-f64::NAN), F(f64::INFINITY)]
            ),
            "inf -INF nan nan   inf"
        );
        assert_eq!(
            fmt("%a %a %A %.1a %a", &[F(1.0), F(-0.5), F(255.0), F(1.96875), F(0.0)]),
            "0x1p+0 -0x1p-1 0X1.FEP+7 0x2.0p+0 0x0p+0"
        );
        assert_eq!(fmt("%.5f", &[F(4.0 * 1.0f64.atan())]), "3.14159");
    }

    #[test]
    fn strings_and_pointers() {
        use A::*;
        assert_eq!(
            fmt("%s, %.3s, [%6s] [%-4s]", &[S(c"potential"), S(c"abcdef"), S(c"ok"), S(c"x")]),
            "potential, abc, [    ok] [x   ]"
        );
        assert_eq!(fmt("%p %p", &[D(0x1000), D(0)]), "0x1000 (nil)");
        assert_eq!(fmt("%u %lld %f %s", &[W(1), D(2), F(3.0), S(c"four")]), "1 2 3.000000 four");
    }
}
