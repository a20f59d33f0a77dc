//! `cuda_std::warp`: shuffles (with `width` and the in-range flag), votes,
//! matches, reductions, lane queries. All `.sync` operations are `unsafe`
//! with cuda_std's (and PTX's) convergence contract: the calling lane is in
//! `mask` and every lane of `mask` executes the same call.

use sluice_device::warp as w;

/// Values that can be shuffled: `u8 i8 u16 i16 u32 i32 f32 u64 i64 f64 u128 i128`.
pub use sluice_device::warp::Shuffle as WarpShuffleValue;
pub use sluice_device::warp::{lane_id, sync_warp};

/// The lanes executing this instruction now (`__activemask()`).
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub fn activemask() -> u32 {
    w::active_mask()
}

/// `__shfl_down_sync(mask, value, delta, width)`, and whether the source lane was in range.
///
/// # Safety
/// The convergence contract (module docs); `width` is a power of two up to 32 (else the kernel traps).
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn warp_shuffle_down<T: WarpShuffleValue>(mask: u32, value: T, delta: u32, width: u32) -> (T, bool) {
    // SAFETY: forwarded to the caller.
    unsafe { w::shfl_down_width(mask, value, delta, width) }
}

/// `__shfl_up_sync(mask, value, delta, width)`, and whether the source lane was in range.
///
/// # Safety
/// As [`warp_shuffle_down`].
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn warp_shuffle_up<T: WarpShuffleValue>(mask: u32, value: T, delta: u32, width: u32) -> (T, bool) {
    // SAFETY: forwarded to the caller.
    unsafe { w::shfl_up_width(mask, value, delta, width) }
}

/// `__shfl_sync(mask, value, idx, width)`, and whether the source lane was in range.
///
/// # Safety
/// As [`warp_shuffle_down`].
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn warp_shuffle_idx<T: WarpShuffleValue>(mask: u32, value: T, idx: u32, width: u32) -> (T, bool) {
    // SAFETY: forwarded to the caller.
    unsafe { w::shfl_idx_width(mask, value, idx, width) }
}

/// `__shfl_xor_sync(mask, value, lane_mask, width)`, and whether the source lane was in range.
///
/// # Safety
/// As [`warp_shuffle_down`].
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn warp_shuffle_xor<T: WarpShuffleValue>(mask: u32, value: T, lane_mask: u32, width: u32) -> (T, bool) {
    // SAFETY: forwarded to the caller.
    unsafe { w::shfl_xor_width(mask, value, lane_mask, width) }
}

/// `__all_sync(mask, predicate)`.
///
/// # Safety
/// The convergence contract (module docs).
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn warp_vote_all(mask: u32, predicate: bool) -> bool {
    // SAFETY: forwarded to the caller.
    unsafe { w::all(mask, predicate) }
}

/// `__any_sync(mask, predicate)`.
///
/// # Safety
/// The convergence contract (module docs).
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn warp_vote_any(mask: u32, predicate: bool) -> bool {
    // SAFETY: forwarded to the caller.
    unsafe { w::any(mask, predicate) }
}

/// `__ballot_sync(mask, predicate)`.
///
/// # Safety
/// The convergence contract (module docs).
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn warp_vote_ballot(mask: u32, predicate: bool) -> u32 {
    // SAFETY: forwarded to the caller.
    unsafe { w::ballot(mask, predicate) }
}

mod sealed {
    pub trait Sealed {}
}

/// Values `warp_match_*` compares: `i32 u32 f32` (32-bit) and `i64 u64 f64` (64-bit), by bits.
pub trait WarpMatchValue: Copy + sealed::Sealed {
    #[doc(hidden)]
    fn bits(self) -> u64;
    #[doc(hidden)]
    const WIDE: bool;
}

macro_rules! matchable {
    ($($t:ty, $wide:literal, |$x:ident| $e:expr;)*) => {$(
        impl sealed::Sealed for $t {}
        impl WarpMatchValue for $t {
            #[inline(always)]
            fn bits(self) -> u64 {
                let $x = self;
                $e
            }
            const WIDE: bool = $wide;
        }
    )*};
}
matchable! {
    i32, false, |x| x as u32 as u64;
    u32, false, |x| x as u64;
    f32, false, |x| x.to_bits() as u64;
    i64, true, |x| x as u64;
    u64, true, |x| x;
    f64, true, |x| x.to_bits();
}

/// The lanes of `mask` holding the same `value` as this one (`__match_any_sync`).
///
/// # Safety
/// The convergence contract (module docs).
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn warp_match_any<T: WarpMatchValue>(mask: u32, value: T) -> u32 {
    // SAFETY: forwarded to the caller.
    unsafe {
        if T::WIDE {
            w::match_any_u64(mask, value.bits())
        } else {
            w::match_any(mask, value.bits() as u32)
        }
    }
}

/// `Some(mask)` if every lane of `mask` holds the same `value` (`__match_all_sync`).
///
/// # Safety
/// The convergence contract (module docs).
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn warp_match_all<T: WarpMatchValue>(mask: u32, value: T) -> Option<u32> {
    // SAFETY: forwarded to the caller.
    unsafe {
        if T::WIDE {
            w::match_all_u64(mask, value.bits())
        } else {
            w::match_all(mask, value.bits() as u32)
        }
    }
}

/// The reduction of [`warp_reduce`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WarpReductionOp {
    /// Sum (wrapping).
    Add,
    /// Minimum.
    Min,
    /// Maximum.
    Max,
    /// Bitwise and.
    And,
    /// Bitwise or.
    Or,
    /// Bitwise xor.
    Xor,
}

/// Values [`warp_reduce`] takes: `u32`, `i32` (sm_80+, `redux.sync`).
pub trait WarpReduceValue: Copy + sealed::Sealed {
    #[doc(hidden)]
    unsafe fn reduce(mask: u32, value: Self, op: WarpReductionOp) -> Self;
}

#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_80"))]
impl WarpReduceValue for u32 {
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    unsafe fn reduce(mask: u32, v: u32, op: WarpReductionOp) -> u32 {
        // SAFETY: forwarded to the caller of `warp_reduce`.
        unsafe {
            match op {
                WarpReductionOp::Add => w::reduce_add_u32(mask, v),
                WarpReductionOp::Min => w::reduce_min_u32(mask, v),
                WarpReductionOp::Max => w::reduce_max_u32(mask, v),
                WarpReductionOp::And => w::reduce_and_u32(mask, v),
                WarpReductionOp::Or => w::reduce_or_u32(mask, v),
                WarpReductionOp::Xor => w::reduce_xor_u32(mask, v),
            }
        }
    }
}

#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_80"))]
impl WarpReduceValue for i32 {
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    unsafe fn reduce(mask: u32, v: i32, op: WarpReductionOp) -> i32 {
        // SAFETY: forwarded to the caller of `warp_reduce`; the bitwise
        // reductions are the same on the bits of an `i32`.
        unsafe {
            match op {
                WarpReductionOp::Add => w::reduce_add_i32(mask, v),
                WarpReductionOp::Min => w::reduce_min_i32(mask, v),
                WarpReductionOp::Max => w::reduce_max_i32(mask, v),
                WarpReductionOp::And => w::reduce_and_u32(mask, v as u32) as i32,
                WarpReductionOp::Or => w::reduce_or_u32(mask, v as u32) as i32,
                WarpReductionOp::Xor => w::reduce_xor_u32(mask, v as u32) as i32,
            }
        }
    }
}

/// `op` over the `value`s of the lanes of `mask`, in every lane
/// (`__reduce_*_sync`, `redux.sync`, sm_80+).
///
/// # Safety
/// The convergence contract (module docs).
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn warp_reduce<T: WarpReduceValue>(mask: u32, value: T, op: WarpReductionOp) -> T {
    // SAFETY: forwarded to the caller.
    unsafe { T::reduce(mask, value, op) }
}
