//! The self-test's checker (host, pure): each family's checks of its rows, with
//! the helpers they share.

use super::{atomic, math, warp, LEN, ROWS};
use std::format;
use std::string::String;
use std::vec::Vec;

/// Whether `got` is within `abs + rel·|want|` of `want` (NaN only for NaN, an
/// infinity only for itself).
pub(super) fn close(got: f64, want: f64, rel: f64, abs: f64) -> bool {
    if want.is_nan() {
        return got.is_nan();
    }
    if want.is_infinite() {
        return got == want;
    }
    (got - want).abs() <= abs + rel * want.abs()
}

/// Records `row name (row R), thread T: got G, want W` unless `ok`.
pub(super) fn expect(bad: &mut Vec<String>, row: usize, t: usize, ok: bool, got: String, want: String) {
    if !ok {
        bad.push(format!("{} (row {row}), thread {t}: got {got}, want {want}", ROWS[row]));
    }
}

/// [`expect`] for a value that must be [`close`] to a reference.
pub(super) fn near(bad: &mut Vec<String>, t: usize, row: usize, got: f64, want: f64, rel: f64, abs: f64) {
    expect(bad, row, t, close(got, want, rel, abs), format!("{got:e}"), format!("{want:e}"));
}

/// The output's failures against CUDA semantics and the f64 references, one
/// line each (`row name, thread: got ..., want ...`); empty when every value is right.
///
/// Tolerances are libdevice's documented bounds with margin (CUDA C++
/// Programming Guide, "Mathematical Functions"): `erfcx`, `normcdf`,
/// `normcdfinv` 4–5 ulp, Bessel functions 9 ulp or 2.2e-6 absolute for `f32`
/// (checked as 4e-6 absolute plus 2e-5 relative), `rcbrt`, `sincospi` 1 ulp;
/// `frexp`, `ilogb`, `scalbn`, `fract`, the Euclidean pair and `saturate` are exact.
pub fn check(out: &[u32]) -> Vec<String> {
    let mut bad = Vec::new();
    if out.len() < LEN {
        bad.push(format!("output has {} words, the self-test writes {LEN}", out.len()));
        return bad;
    }
    atomic::host::check(out, &mut bad);
    warp::host::check(out, &mut bad);
    math::host::check(out, &mut bad);
    bad
}

/// What a correct GPU writes, computed on the host from the same
/// definitions (the atomics in one particular order: thread 0 first).
/// For [`check`]'s own tests; a wrong entry must make `check` complain.
pub fn expected() -> Vec<u32> {
    let mut out = std::vec![0u32; LEN];
    atomic::host::expected(&mut out);
    warp::host::expected(&mut out);
    math::host::expected(&mut out);
    out
}
