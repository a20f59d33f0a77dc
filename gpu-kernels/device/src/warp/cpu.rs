//! `warp` on the CPU: every `.sync` operation is a rendezvous of the warp's lanes
//! ([`rendezvous`], over the CPU runtime, [`crate::cpu`]); lane ids and masks come
//! from the current thread's rank.

use crate::cpu::block::current;
use crate::spec::warp::{lanemask_eq, lanemask_gt, lanemask_le, lanemask_lt, shfl_c, Redux, ShflMode};

#[path = "rendezvous.rs"]
pub(crate) mod rendezvous;

use rendezvous::{Operands, WarpOp};

/// One of the warp family's collectives for the calling lane: its value, a
/// shuffle's operands `b` and `c`; the lane's result and flag.
#[inline(always)]
#[track_caller]
fn collective(what: &'static str, op: WarpOp, mask: u32, value: u128, b: u32, c: u32) -> (u128, bool) {
    rendezvous::collective(what, op, mask, Operands { value, b, c })
}

#[inline(always)]
#[track_caller]
pub(super) fn lane_id() -> u32 {
    current("warp::lane_id").rank % 32
}

#[track_caller]
pub(super) fn active_mask() -> u32 {
    rendezvous::active_mask("warp::active_mask")
}

macro_rules! lanemask {
    ($($name:ident => $f:ident;)*) => {$(
        #[inline(always)]
        #[track_caller]
        pub(super) fn $name() -> u32 {
            $f(current(concat!("warp::", stringify!($name))).rank % 32)
        }
    )*};
}

lanemask! {
    lane_mask_lt => lanemask_lt;
    lane_mask_le => lanemask_le;
    lane_mask_eq => lanemask_eq;
    lane_mask_gt => lanemask_gt;
}

/// # Safety
///
/// None on the CPU (a misuse panics or is reported as a deadlock); the device's
/// contract is [`super::sync_warp`]'s.
#[track_caller]
pub(super) unsafe fn sync_warp(mask: u32) {
    collective("warp::sync_warp", WarpOp::Sync, mask, 0, 0, 0);
}

/// A full-width shuffle of `bits` (up to 128 of them, in one rendezvous).
#[inline(always)]
#[track_caller]
fn shfl(what: &'static str, mode: ShflMode, mask: u32, bits: u128, b: u32) -> u128 {
    collective(what, WarpOp::Shfl(mode), mask, bits, b, shfl_c(mode, 32)).0
}

/// A shuffle with a `c` operand, and its in-range predicate.
#[inline(always)]
#[track_caller]
fn shfl_p(what: &'static str, mode: ShflMode, mask: u32, bits: u128, b: u32, c: u32) -> (u128, bool) {
    collective(what, WarpOp::Shfl(mode), mask, bits, b, c)
}

macro_rules! widths {
    ($($w:ident, $wp:ident, $t:ty;)*) => {$(
        /// # Safety
        ///
        /// None on the CPU; the device's contract is [`super::shfl_idx`]'s.
        #[inline(always)]
        #[track_caller]
        pub(super) unsafe fn $w(what: &'static str, mode: ShflMode, mask: u32, v: $t, b: u32) -> $t {
            shfl(what, mode, mask, v as u128, b) as $t
        }

        /// # Safety
        ///
        /// As the shuffle without a predicate.
        #[inline(always)]
        #[track_caller]
        pub(super) unsafe fn $wp(what: &'static str, mode: ShflMode, mask: u32, v: $t, b: u32, c: u32) -> ($t, bool) {
            let (r, p) = shfl_p(what, mode, mask, v as u128, b, c);
            (r as $t, p)
        }
    )*};
}

widths! {
    shfl_b32, shfl_p_b32, u32;
    shfl_b64, shfl_p_b64, u64;
    shfl_b128, shfl_p_b128, u128;
}

/// # Safety
///
/// None on the CPU; the device's contract is [`super::shfl_idx`]'s.
#[track_caller]
pub(super) unsafe fn any(mask: u32, predicate: bool) -> bool {
    collective("warp::any", WarpOp::Any, mask, predicate as u128, 0, 0).0 != 0
}

/// # Safety
///
/// As [`any`].
#[track_caller]
pub(super) unsafe fn all(mask: u32, predicate: bool) -> bool {
    collective("warp::all", WarpOp::All, mask, predicate as u128, 0, 0).0 != 0
}

/// # Safety
///
/// As [`any`].
#[track_caller]
pub(super) unsafe fn ballot(mask: u32, predicate: bool) -> u32 {
    collective("warp::ballot", WarpOp::Ballot, mask, predicate as u128, 0, 0).0 as u32
}

/// # Safety
///
/// As [`any`].
#[track_caller]
pub(super) unsafe fn match_any(mask: u32, value: u32) -> u32 {
    collective("warp::match_any", WarpOp::MatchAny(false), mask, value as u128, 0, 0).0 as u32
}

/// # Safety
///
/// As [`any`].
#[track_caller]
pub(super) unsafe fn match_any_u64(mask: u32, value: u64) -> u32 {
    collective("warp::match_any_u64", WarpOp::MatchAny(true), mask, value as u128, 0, 0).0 as u32
}

/// # Safety
///
/// As [`any`].
#[track_caller]
pub(super) unsafe fn match_all(mask: u32, value: u32) -> Option<u32> {
    let (m, ok) = collective("warp::match_all", WarpOp::MatchAll(false), mask, value as u128, 0, 0);
    ok.then_some(m as u32)
}

/// # Safety
///
/// As [`any`].
#[track_caller]
pub(super) unsafe fn match_all_u64(mask: u32, value: u64) -> Option<u32> {
    let (m, ok) = collective("warp::match_all_u64", WarpOp::MatchAll(true), mask, value as u128, 0, 0);
    ok.then_some(m as u32)
}

macro_rules! redux {
    ($($name:ident, $t:ty, $op:ident;)*) => {$(
        /// # Safety
        ///
        /// As [`any`].
        #[track_caller]
        pub(super) unsafe fn $name(mask: u32, value: $t) -> $t {
            collective(concat!("warp::", stringify!($name)), WarpOp::Redux(Redux::$op), mask, value as u32 as u128, 0, 0).0
                as u32 as $t
        }
    )*};
}

redux! {
    reduce_add_u32, u32, AddU32;
    reduce_add_i32, i32, AddU32;
    reduce_min_u32, u32, MinU32;
    reduce_min_i32, i32, MinI32;
    reduce_max_u32, u32, MaxU32;
    reduce_max_i32, i32, MaxI32;
    reduce_and_u32, u32, And;
    reduce_or_u32, u32, Or;
    reduce_xor_u32, u32, Xor;
}
