//! `warp` on the GPU: `%laneid` and the lane masks, `activemask`, `bar.warp.sync`,
//! `shfl.sync` on 32-bit words (wider values as several words), `vote.sync`,
//! `match.sync` and `redux.sync`.

use crate::spec::warp::ShflMode;
use core::arch::asm;

#[inline(always)]
pub(super) fn lane_id() -> u32 {
    let r: u32;
    // SAFETY: reads a special register.
    unsafe { asm!("mov.u32 {r}, %laneid;", r = out(reg32) r, options(pure, nomem, nostack, preserves_flags)) };
    r
}

#[inline(always)]
pub(super) fn active_mask() -> u32 {
    let r: u32;
    // SAFETY: no operands besides the result. Not `pure`: the answer depends on
    // where the call is, so the compiler must not move or merge it.
    unsafe { asm!("activemask.b32 {r};", r = out(reg32) r, options(nomem, nostack, preserves_flags)) };
    r
}

macro_rules! lanemask {
    ($($name:ident => $reg:literal;)*) => {$(
        #[inline(always)]
        pub(super) fn $name() -> u32 {
            let r: u32;
            // SAFETY: reads a special register.
            unsafe { asm!(concat!("mov.u32 {r}, ", $reg, ";"), r = out(reg32) r, options(pure, nomem, nostack, preserves_flags)) };
            r
        }
    )*};
}

lanemask! {
    lane_mask_lt => "%lanemask_lt";
    lane_mask_le => "%lanemask_le";
    lane_mask_eq => "%lanemask_eq";
    lane_mask_gt => "%lanemask_gt";
}

/// `bar.warp.sync`.
///
/// # Safety
/// The convergence contract of [`super::sync_warp`].
#[inline(always)]
pub(super) unsafe fn sync_warp(mask: u32) {
    // SAFETY: the caller upholds the convergence contract.
    unsafe { asm!("bar.warp.sync {m};", m = in(reg32) mask, options(nostack)) }
}

/// One full-width `shfl.sync` of a 32-bit word.
#[inline(always)]
unsafe fn shfl32(mode: ShflMode, mask: u32, a: u32, b: u32) -> u32 {
    let d: u32;
    // SAFETY: register-only instruction; the convergence contract is the
    // caller's (see the module docs). `c` is the clamp value of a full-width
    // shuffle: 31 for idx/down/bfly, 0 for up. Not `pure`: moving a
    // shuffle into divergent code changes its meaning.
    unsafe {
        match mode {
            ShflMode::Idx => {
                asm!("shfl.sync.idx.b32 {d}, {a}, {b}, 31, {m};", d = out(reg32) d, a = in(reg32) a, b = in(reg32) b, m = in(reg32) mask, options(nomem, nostack, preserves_flags))
            }
            ShflMode::Up => {
                asm!("shfl.sync.up.b32 {d}, {a}, {b}, 0, {m};", d = out(reg32) d, a = in(reg32) a, b = in(reg32) b, m = in(reg32) mask, options(nomem, nostack, preserves_flags))
            }
            ShflMode::Down => {
                asm!("shfl.sync.down.b32 {d}, {a}, {b}, 31, {m};", d = out(reg32) d, a = in(reg32) a, b = in(reg32) b, m = in(reg32) mask, options(nomem, nostack, preserves_flags))
            }
            ShflMode::Xor => {
                asm!("shfl.sync.bfly.b32 {d}, {a}, {b}, 31, {m};", d = out(reg32) d, a = in(reg32) a, b = in(reg32) b, m = in(reg32) mask, options(nomem, nostack, preserves_flags))
            }
        }
    }
    d
}

/// `shfl.sync` of a 32-bit word with a `c` operand (width) and the in-range predicate.
#[inline(always)]
unsafe fn shfl32p(mode: ShflMode, mask: u32, a: u32, b: u32, c: u32) -> (u32, bool) {
    let (d, p): (u32, u32);
    macro_rules! go {
        ($mode:literal) => {
            asm!(
                concat!("{{ .reg .pred q; shfl.sync.", $mode, ".b32 {d}|q, {a}, {b}, {c}, {m}; selp.u32 {p}, 1, 0, q; }}"),
                d = out(reg32) d, p = out(reg32) p, a = in(reg32) a, b = in(reg32) b, c = in(reg32) c, m = in(reg32) mask,
                options(nomem, nostack, preserves_flags)
            )
        };
    }
    // SAFETY: register-only instruction; the convergence contract is the
    // caller's (see the module docs). Not `pure`, as `shfl32`.
    unsafe {
        match mode {
            ShflMode::Idx => go!("idx"),
            ShflMode::Up => go!("up"),
            ShflMode::Down => go!("down"),
            ShflMode::Xor => go!("bfly"),
        }
    }
    (d, p != 0)
}

/// One `shfl`.
///
/// # Safety
/// The convergence contract of [`super::shfl_idx`].
#[inline(always)]
pub(super) unsafe fn shfl_b32(_what: &'static str, mode: ShflMode, mask: u32, v: u32, b: u32) -> u32 {
    // SAFETY: forwarded to the caller.
    unsafe { shfl32(mode, mask, v, b) }
}

/// One `shfl` with its predicate.
///
/// # Safety
/// As [`shfl_b32`].
#[inline(always)]
pub(super) unsafe fn shfl_p_b32(_what: &'static str, mode: ShflMode, mask: u32, v: u32, b: u32, c: u32) -> (u32, bool) {
    // SAFETY: forwarded to the caller.
    unsafe { shfl32p(mode, mask, v, b, c) }
}

/// Two `shfl`s, on the halves.
///
/// # Safety
/// As [`shfl_b32`].
#[inline(always)]
pub(super) unsafe fn shfl_b64(_what: &'static str, mode: ShflMode, mask: u32, bits: u64, b: u32) -> u64 {
    // SAFETY: forwarded to the caller of the public shuffle; both halves
    // are shuffled by the same lanes with the same source lane.
    let (lo, hi) = unsafe { (shfl32(mode, mask, bits as u32, b), shfl32(mode, mask, (bits >> 32) as u32, b)) };
    lo as u64 | (hi as u64) << 32
}

/// Two `shfl`s with their predicate (the same for both halves).
///
/// # Safety
/// As [`shfl_b32`].
#[inline(always)]
pub(super) unsafe fn shfl_p_b64(
    _what: &'static str,
    mode: ShflMode,
    mask: u32,
    bits: u64,
    b: u32,
    c: u32,
) -> (u64, bool) {
    // SAFETY: as in `shfl_b64`; both halves get the same predicate.
    let ((lo, p), (hi, _)) =
        unsafe { (shfl32p(mode, mask, bits as u32, b, c), shfl32p(mode, mask, (bits >> 32) as u32, b, c)) };
    (lo as u64 | (hi as u64) << 32, p)
}

/// Four `shfl`s, one per word.
///
/// # Safety
/// As [`shfl_b32`].
#[inline(always)]
pub(super) unsafe fn shfl_b128(_what: &'static str, mode: ShflMode, mask: u32, v: u128, b: u32) -> u128 {
    // SAFETY: forwarded; the four words are shuffled by the same lanes from the same source.
    let w = unsafe { [0, 1, 2, 3].map(|k| shfl32(mode, mask, (v >> (32 * k)) as u32, b)) };
    w[0] as u128 | (w[1] as u128) << 32 | (w[2] as u128) << 64 | (w[3] as u128) << 96
}

/// Four `shfl`s with their predicate (the same for every word).
///
/// # Safety
/// As [`shfl_b32`].
#[inline(always)]
pub(super) unsafe fn shfl_p_b128(
    _what: &'static str,
    mode: ShflMode,
    mask: u32,
    v: u128,
    b: u32,
    c: u32,
) -> (u128, bool) {
    // SAFETY: as in `shfl_b128`; the predicate is the same for every word.
    let w = unsafe { [0, 1, 2, 3].map(|k| shfl32p(mode, mask, (v >> (32 * k)) as u32, b, c)) };
    (w[0].0 as u128 | (w[1].0 as u128) << 32 | (w[2].0 as u128) << 64 | (w[3].0 as u128) << 96, w[0].1)
}

/// `vote.sync.any.pred`.
///
/// # Safety
/// The convergence contract of [`super::shfl_idx`].
#[inline(always)]
pub(super) unsafe fn any(mask: u32, predicate: bool) -> bool {
    let r: u32;
    // SAFETY: register-only; convergence is the caller's contract.
    unsafe {
        asm!("{{ .reg .pred p, q; setp.ne.u32 p, {v}, 0; vote.sync.any.pred q, p, {m}; selp.u32 {r}, 1, 0, q; }}",
             v = in(reg32) predicate as u32, m = in(reg32) mask, r = out(reg32) r, options(nomem, nostack))
    };
    r != 0
}

/// `vote.sync.all.pred`.
///
/// # Safety
/// As [`any`].
#[inline(always)]
pub(super) unsafe fn all(mask: u32, predicate: bool) -> bool {
    let r: u32;
    // SAFETY: register-only; convergence is the caller's contract.
    unsafe {
        asm!("{{ .reg .pred p, q; setp.ne.u32 p, {v}, 0; vote.sync.all.pred q, p, {m}; selp.u32 {r}, 1, 0, q; }}",
             v = in(reg32) predicate as u32, m = in(reg32) mask, r = out(reg32) r, options(nomem, nostack))
    };
    r != 0
}

/// `vote.sync.ballot.b32`.
///
/// # Safety
/// As [`any`].
#[inline(always)]
pub(super) unsafe fn ballot(mask: u32, predicate: bool) -> u32 {
    let r: u32;
    // SAFETY: register-only; convergence is the caller's contract.
    unsafe {
        asm!("{{ .reg .pred p; setp.ne.u32 p, {v}, 0; vote.sync.ballot.b32 {r}, p, {m}; }}",
             v = in(reg32) predicate as u32, m = in(reg32) mask, r = out(reg32) r, options(nomem, nostack))
    };
    r
}

/// `match.any.sync.b32`.
///
/// # Safety
/// As [`any`].
#[inline(always)]
pub(super) unsafe fn match_any(mask: u32, value: u32) -> u32 {
    let r: u32;
    // SAFETY: register-only; convergence is the caller's contract.
    unsafe {
        asm!("match.any.sync.b32 {r}, {v}, {m};", r = out(reg32) r, v = in(reg32) value, m = in(reg32) mask, options(nomem, nostack))
    };
    r
}

/// `match.any.sync.b64`.
///
/// # Safety
/// As [`any`].
#[inline(always)]
pub(super) unsafe fn match_any_u64(mask: u32, value: u64) -> u32 {
    let r: u32;
    // SAFETY: register-only; convergence is the caller's contract.
    unsafe {
        asm!("match.any.sync.b64 {r}, {v}, {m};", r = out(reg32) r, v = in(reg64) value, m = in(reg32) mask, options(nomem, nostack))
    };
    r
}

/// `match.all.sync.b32` with its predicate.
///
/// # Safety
/// As [`any`].
#[inline(always)]
pub(super) unsafe fn match_all(mask: u32, value: u32) -> Option<u32> {
    let (r, p): (u32, u32);
    // SAFETY: register-only; convergence is the caller's contract.
    unsafe {
        asm!("{{ .reg .pred q; match.all.sync.b32 {r}|q, {v}, {m}; selp.u32 {p}, 1, 0, q; }}",
             r = out(reg32) r, p = out(reg32) p, v = in(reg32) value, m = in(reg32) mask, options(nomem, nostack))
    };
    if p != 0 {
        Some(r)
    } else {
        None
    }
}

/// `match.all.sync.b64` with its predicate.
///
/// # Safety
/// As [`any`].
#[inline(always)]
pub(super) unsafe fn match_all_u64(mask: u32, value: u64) -> Option<u32> {
    let (r, p): (u32, u32);
    // SAFETY: register-only; convergence is the caller's contract.
    unsafe {
        asm!("{{ .reg .pred q; match.all.sync.b64 {r}|q, {v}, {m}; selp.u32 {p}, 1, 0, q; }}",
             r = out(reg32) r, p = out(reg32) p, v = in(reg64) value, m = in(reg32) mask, options(nomem, nostack))
    };
    if p != 0 {
        Some(r)
    } else {
        None
    }
}

macro_rules! redux {
    ($($name:ident, $t:ty, $op:literal;)*) => {$(
        /// `redux.sync` (sm_80+ builds).
        ///
        /// # Safety
        /// As [`any`].
        #[cfg(target_feature = "sm_80")]
        #[inline(always)]
        pub(super) unsafe fn $name(mask: u32, value: $t) -> $t {
            let r: $t;
            // SAFETY: register-only; convergence is the caller's contract.
            unsafe { asm!(concat!("redux.sync.", $op, " {r}, {v}, {m};"), r = out(reg32) r, v = in(reg32) value, m = in(reg32) mask, options(nomem, nostack)) };
            r
        }
    )*};
}

redux! {
    reduce_add_u32, u32, "add.u32";
    reduce_add_i32, i32, "add.s32";
    reduce_min_u32, u32, "min.u32";
    reduce_min_i32, i32, "min.s32";
    reduce_max_u32, u32, "max.u32";
    reduce_max_i32, i32, "max.s32";
    reduce_and_u32, u32, "and.b32";
    reduce_or_u32, u32, "or.b32";
    reduce_xor_u32, u32, "xor.b32";
}
