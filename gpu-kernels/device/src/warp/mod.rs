//! Warp-level operations: lane id and masks, shuffles, votes, match, reductions.
//!
//! | sluice | CUDA C++ | PTX |
//! | --- | --- | --- |
//! | [`lane_id`] | `threadIdx.x % 32` (1-D) / `%laneid` | `mov.u32 %r, %laneid` |
//! | [`active_mask`] | `__activemask()` | `activemask.b32` |
//! | [`lane_mask_lt`] | `%lanemask_lt` | `mov.u32 %r, %lanemask_lt` |
//! | [`sync_warp`] | `__syncwarp(mask)` | `bar.warp.sync` |
//! | [`shfl_idx`], [`shfl_up`], [`shfl_down`], [`shfl_xor`] | `__shfl_sync`, `__shfl_up_sync`, `__shfl_down_sync`, `__shfl_xor_sync` | `shfl.sync.{idx,up,down,bfly}.b32` |
//! | [`any`], [`all`], [`ballot`] | `__any_sync`, `__all_sync`, `__ballot_sync` | `vote.sync.{any,all,ballot}` |
//! | [`match_any`], [`match_all`] | `__match_any_sync`, `__match_all_sync` | `match.{any,all}.sync.b32/b64` (sm_70+) |
//! | `reduce_add_u32` and friends (sm_80+ builds) | `__reduce_add_sync` ... | `redux.sync` (sm_80+) |
//! | [`sum_f32`] | (a butterfly of `__shfl_xor_sync`) | 5 × `shfl.sync.bfly` |
//!
//! Shuffles exist for every [`Shuffle`] type: `u8`, `i8`, `u16`, `i16`, `u32`,
//! `i32`, `f32` (one `shfl`), `u64`, `i64`, `f64` (two `shfl`s on the halves) and
//! `u128`, `i128` (four). Which lane a shuffle reads is PTX's rule, in
//! [`crate::spec::warp`] ([`shfl_source`]).
//!
//! # Safety of the `.sync` operations
//!
//! Every `*.sync` instruction takes a `mask` of the lanes that take part. PTX
//! leaves the behaviour undefined if the calling lane is not in `mask`, or if a
//! lane in `mask` does not execute the *same* instruction (it has exited, or
//! is on another branch) — on sm_70+ the warp may hang or read garbage. Rust
//! cannot check convergence, so these functions are `unsafe` with that as
//! their contract. The common correct uses:
//!
//! * `FULL_MASK` in code that every lane of a full warp reaches (no early
//!   `return` before it; blocks whose size is a multiple of 32);
//! * `active_mask()` computed in the same converged region (then only the
//!   active lanes take part, and shuffle sources outside it read garbage).
//!
//! # Hardware support
//!
//! sm_70+ for everything (the `.sync` forms, `match`); `reduce_*` need an sm_80+
//! build (`redux.sync`).
//!
//! # On the CPU
//!
//! The CPU runtime ([`crate::cpu`]) runs each `.sync` operation as a
//! rendezvous of the warp's lanes (`cpu.rs`): a lane waits until every
//! non-exited lane of its mask has arrived at the same operation with the same
//! mask (PTX's rule for sm_70+), then all get their results; divergent groups
//! with disjoint masks complete separately, and a shuffle from a lane outside
//! the group reads all-one bits. A calling lane outside its own mask is a panic,
//! a group that can never complete a reported deadlock. Lanes do not run in
//! lockstep: see [`crate::cpu`] for what that means for warp-synchronous code
//! without `sync_warp`. `reduce_*` exist on the host whatever the architecture.
//!
//! In a checked launch ([`crate::cpu`]'s checking mode) `sync_warp` orders the
//! memory accesses of the lanes that take part, as `bar.warp.sync` does in PTX;
//! the other operations move registers, not memory, and order nothing (PTX gives
//! them no memory ordering): a lane that reads a neighbour's store after a shuffle
//! or a vote, without `sync_warp`, races. A lane outside its own mask, a lane the
//! mask names that has not exited and never takes part (the block is stuck), and a
//! shuffle that reads a lane not taking part (exited, or outside the mask: an
//! undefined value) are reported as divergent warp operations. A lane that exits
//! instead of taking part is allowed, as CUDA's rule names only non-exited lanes.
//!
//! # Example (device code): a warp sum
//!
//! ```ignore
//! use sluice_device::warp::{self, FULL_MASK};
//! let mut v = x;
//! let mut offset = 16;
//! while offset > 0 {
//!     // SAFETY: all 32 lanes run this loop the same number of times.
//!     v += unsafe { warp::shfl_down(FULL_MASK, v, offset) };
//!     offset /= 2;
//! }
//! // lane 0 holds the warp's sum
//! ```

pub use crate::spec::warp::{shfl_c, shfl_source, valid_width, ShflMode, FULL_MASK};

// The backend, chosen once: `shfl`/`vote`/`match`/`redux` instructions on the
// GPU, the CPU runtime's warp rendezvous on the host. `pub(crate)`: later
// warp-level families (`mma`, `ldmatrix`) run their CPU side on the same
// rendezvous.
#[cfg_attr(target_arch = "nvptx64", path = "gpu.rs")]
#[cfg_attr(not(target_arch = "nvptx64"), path = "cpu.rs")]
pub(crate) mod imp;

/// This thread's lane in its warp, `0..32`.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub fn lane_id() -> u32 {
    imp::lane_id()
}

/// The lanes of this warp executing this instruction now (`__activemask()`).
/// Not a synchronisation: lanes may be active without being converged.
///
/// On the CPU: waits until no thread of the block can run, then returns
/// the lanes of this warp that wait here, at the same call site (see
/// [`crate::cpu`]).
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub fn active_mask() -> u32 {
    imp::active_mask()
}

macro_rules! lanemask {
    ($($(#[$doc:meta])* $name:ident;)*) => {$(
        $(#[$doc])*
        #[inline(always)]
        #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
        pub fn $name() -> u32 {
            imp::$name()
        }
    )*};
}

lanemask! {
    /// Bits of the lanes below this one (`%lanemask_lt`).
    lane_mask_lt;
    /// Bits of the lanes up to and including this one (`%lanemask_le`).
    lane_mask_le;
    /// Bit of this lane (`%lanemask_eq`).
    lane_mask_eq;
    /// Bits of the lanes above this one (`%lanemask_gt`).
    lane_mask_gt;
}

/// Waits until every lane in `mask` has reached a `sync_warp` and orders
/// their memory accesses (`__syncwarp(mask)`).
///
/// # Safety
/// The calling lane is in `mask`, and every lane in `mask` reaches a
/// `sync_warp` with the same mask (see the module docs).
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn sync_warp(mask: u32) {
    // SAFETY: forwarded to the caller.
    unsafe { imp::sync_warp(mask) }
}

mod sealed {
    pub trait Sealed {}
}

/// Types that can be exchanged between lanes with `shfl.sync`.
/// Implemented for `u8 i8 u16 i16 u32 i32 f32` (one 32-bit shuffle), `u64 i64 f64`
/// (two) and `u128 i128` (four).
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be shuffled between the lanes of a warp",
    label = "not a shuffle type",
    note = "shuffles take u8, i8, u16, i16, u32, i32, f32, u64, i64, f64, u128 and i128; shuffle a struct field by field"
)]
pub trait Shuffle: Copy + sealed::Sealed {
    /// The shuffle of `self`'s bits: `b` is the lane operand, `c` the full-width clamp.
    #[doc(hidden)]
    unsafe fn __shfl(self, what: &'static str, mode: ShflMode, mask: u32, b: u32) -> Self;
    /// The shuffle with a `c` operand (segment width) and the in-range predicate.
    #[doc(hidden)]
    unsafe fn __shfl_p(self, what: &'static str, mode: ShflMode, mask: u32, b: u32, c: u32) -> (Self, bool);
}

/// `Shuffle` for each type, through the backend's shuffle of its width: `$w` (32,
/// 64 or 128 bits), `$to` and `$from` convert the value to those bits and back.
macro_rules! shuffle {
    ($($t:ty => $w:ident, $wp:ident, |$x:ident| $to:expr, |$b:ident| $from:expr;)*) => {$(
        impl sealed::Sealed for $t {}
        impl Shuffle for $t {
            #[inline(always)]
            #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
            unsafe fn __shfl(self, what: &'static str, mode: ShflMode, mask: u32, b: u32) -> Self {
                let $x = self;
                // SAFETY: forwarded to the caller of the public shuffle.
                let $b = unsafe { imp::$w(what, mode, mask, $to, b) };
                $from
            }
            #[inline(always)]
            #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
            unsafe fn __shfl_p(self, what: &'static str, mode: ShflMode, mask: u32, b: u32, c: u32) -> (Self, bool) {
                let $x = self;
                // SAFETY: forwarded to the caller of the public shuffle.
                let ($b, p) = unsafe { imp::$wp(what, mode, mask, $to, b, c) };
                ($from, p)
            }
        }
    )*};
}

shuffle! {
    u8 => shfl_b32, shfl_p_b32, |x| x as u32, |b| b as u8;
    i8 => shfl_b32, shfl_p_b32, |x| x as u32, |b| b as i8;
    u16 => shfl_b32, shfl_p_b32, |x| x as u32, |b| b as u16;
    i16 => shfl_b32, shfl_p_b32, |x| x as u32, |b| b as i16;
    u32 => shfl_b32, shfl_p_b32, |x| x, |b| b;
    i32 => shfl_b32, shfl_p_b32, |x| x as u32, |b| b as i32;
    f32 => shfl_b32, shfl_p_b32, |x| x.to_bits(), |b| f32::from_bits(b);
    u64 => shfl_b64, shfl_p_b64, |x| x, |b| b;
    i64 => shfl_b64, shfl_p_b64, |x| x as u64, |b| b as i64;
    f64 => shfl_b64, shfl_p_b64, |x| x.to_bits(), |b| f64::from_bits(b);
    u128 => shfl_b128, shfl_p_b128, |x| x, |b| b;
    i128 => shfl_b128, shfl_p_b128, |x| x as u128, |b| b as i128;
}

/// `value` of lane `src_lane` (`__shfl_sync(mask, value, src_lane)`).
///
/// # Safety
/// Convergence contract of the module docs: this lane is in `mask`, and
/// every lane in `mask` executes this call.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn shfl_idx<T: Shuffle>(mask: u32, value: T, src_lane: u32) -> T {
    // SAFETY: forwarded to the caller.
    unsafe { value.__shfl("warp::shfl_idx", ShflMode::Idx, mask, src_lane) }
}

/// `value` of lane `lane_id() - delta`; lanes below `delta` keep their own
/// (`__shfl_up_sync`).
///
/// # Safety
/// As [`shfl_idx`].
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn shfl_up<T: Shuffle>(mask: u32, value: T, delta: u32) -> T {
    // SAFETY: forwarded to the caller.
    unsafe { value.__shfl("warp::shfl_up", ShflMode::Up, mask, delta) }
}

/// `value` of lane `lane_id() + delta`; lanes with `lane_id() + delta >= 32`
/// keep their own (`__shfl_down_sync`).
///
/// # Safety
/// As [`shfl_idx`].
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn shfl_down<T: Shuffle>(mask: u32, value: T, delta: u32) -> T {
    // SAFETY: forwarded to the caller.
    unsafe { value.__shfl("warp::shfl_down", ShflMode::Down, mask, delta) }
}

/// `value` of lane `lane_id() ^ lane_mask` (`__shfl_xor_sync`, a butterfly).
///
/// # Safety
/// As [`shfl_idx`].
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn shfl_xor<T: Shuffle>(mask: u32, value: T, lane_mask: u32) -> T {
    // SAFETY: forwarded to the caller.
    unsafe { value.__shfl("warp::shfl_xor", ShflMode::Xor, mask, lane_mask) }
}

#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
unsafe fn shfl_width<T: Shuffle>(
    what: &'static str,
    mode: ShflMode,
    mask: u32,
    value: T,
    b: u32,
    width: u32,
) -> (T, bool) {
    crate::dassert!(valid_width(width), "warp shuffle: width must be a power of two from 1 to 32");
    // SAFETY: forwarded to the caller; `c` is well formed for a valid width.
    unsafe { value.__shfl_p(what, mode, mask, b, shfl_c(mode, width)) }
}

/// `value` of lane `src_lane % width` of this lane's segment of `width`
/// lanes (`__shfl_sync(mask, value, src_lane, width)`), and whether the source
/// was in range (`shfl.sync.idx` with its predicate; always `true` for a
/// valid width). `width` is a power of two from 1 to 32 (else the kernel traps).
///
/// # Safety
/// As [`shfl_idx`].
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn shfl_idx_width<T: Shuffle>(mask: u32, value: T, src_lane: u32, width: u32) -> (T, bool) {
    // SAFETY: forwarded to the caller.
    unsafe { shfl_width("warp::shfl_idx_width", ShflMode::Idx, mask, value, src_lane, width) }
}

/// `value` of lane `lane_id() - delta` within this lane's segment of
/// `width` lanes (`__shfl_up_sync(..., width)`); lanes whose source would
/// fall below the segment keep their own value and get `false`.
///
/// # Safety
/// As [`shfl_idx`].
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn shfl_up_width<T: Shuffle>(mask: u32, value: T, delta: u32, width: u32) -> (T, bool) {
    // SAFETY: forwarded to the caller.
    unsafe { shfl_width("warp::shfl_up_width", ShflMode::Up, mask, value, delta, width) }
}

/// `value` of lane `lane_id() + delta` within this lane's segment of
/// `width` lanes (`__shfl_down_sync(..., width)`); lanes whose source would
/// pass the segment's end keep their own value and get `false`.
///
/// # Safety
/// As [`shfl_idx`].
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn shfl_down_width<T: Shuffle>(mask: u32, value: T, delta: u32, width: u32) -> (T, bool) {
    // SAFETY: forwarded to the caller.
    unsafe { shfl_width("warp::shfl_down_width", ShflMode::Down, mask, value, delta, width) }
}

/// `value` of lane `lane_id() ^ lane_mask` within this lane's segment of
/// `width` lanes (`__shfl_xor_sync(..., width)`); as in CUDA, a source in a
/// *later* segment leaves the lane's own value and `false`, while one in an
/// earlier segment is read.
///
/// # Safety
/// As [`shfl_idx`].
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn shfl_xor_width<T: Shuffle>(mask: u32, value: T, lane_mask: u32, width: u32) -> (T, bool) {
    // SAFETY: forwarded to the caller.
    unsafe { shfl_width("warp::shfl_xor_width", ShflMode::Xor, mask, value, lane_mask, width) }
}

/// Whether `predicate` is true on any lane of `mask` (`__any_sync`).
///
/// # Safety
/// As [`shfl_idx`].
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn any(mask: u32, predicate: bool) -> bool {
    // SAFETY: forwarded to the caller.
    unsafe { imp::any(mask, predicate) }
}

/// Whether `predicate` is true on every lane of `mask` (`__all_sync`).
///
/// # Safety
/// As [`shfl_idx`].
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn all(mask: u32, predicate: bool) -> bool {
    // SAFETY: forwarded to the caller.
    unsafe { imp::all(mask, predicate) }
}

/// Bit `i` set iff lane `i` of `mask` passed `true` (`__ballot_sync`).
///
/// # Safety
/// As [`shfl_idx`].
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn ballot(mask: u32, predicate: bool) -> u32 {
    // SAFETY: forwarded to the caller.
    unsafe { imp::ballot(mask, predicate) }
}

/// The lanes of `mask` whose `value` equals this lane's (`__match_any_sync`, sm_70+).
///
/// # Safety
/// As [`shfl_idx`].
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn match_any(mask: u32, value: u32) -> u32 {
    // SAFETY: forwarded to the caller.
    unsafe { imp::match_any(mask, value) }
}

/// [`match_any`] for 64-bit values.
///
/// # Safety
/// As [`shfl_idx`].
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn match_any_u64(mask: u32, value: u64) -> u32 {
    // SAFETY: forwarded to the caller.
    unsafe { imp::match_any_u64(mask, value) }
}

/// `Some(mask)` if every lane of `mask` holds the same `value`, else `None`
/// (`__match_all_sync`, sm_70+).
///
/// # Safety
/// As [`shfl_idx`].
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn match_all(mask: u32, value: u32) -> Option<u32> {
    // SAFETY: forwarded to the caller.
    unsafe { imp::match_all(mask, value) }
}

/// [`match_all`] for 64-bit values.
///
/// # Safety
/// As [`shfl_idx`].
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn match_all_u64(mask: u32, value: u64) -> Option<u32> {
    // SAFETY: forwarded to the caller.
    unsafe { imp::match_all_u64(mask, value) }
}

macro_rules! redux {
    ($($(#[$doc:meta])* $name:ident, $t:ty;)*) => {$(
        $(#[$doc])*
        ///
        /// On the device these need an sm_80+ build; on the CPU they always exist.
        ///
        /// # Safety
        /// As [`shfl_idx`].
        #[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_80"))]
        #[inline(always)]
        #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
        pub unsafe fn $name(mask: u32, value: $t) -> $t {
            // SAFETY: forwarded to the caller.
            unsafe { imp::$name(mask, value) }
        }
    )*};
}

redux! {
    /// The sum over the lanes of `mask` (`__reduce_add_sync`, sm_80+), in every lane.
    reduce_add_u32, u32;
    /// The sum over the lanes of `mask` (`__reduce_add_sync`, sm_80+), in every lane.
    reduce_add_i32, i32;
    /// The minimum over the lanes of `mask` (`__reduce_min_sync`, sm_80+).
    reduce_min_u32, u32;
    /// The minimum over the lanes of `mask` (`__reduce_min_sync`, sm_80+).
    reduce_min_i32, i32;
    /// The maximum over the lanes of `mask` (`__reduce_max_sync`, sm_80+).
    reduce_max_u32, u32;
    /// The maximum over the lanes of `mask` (`__reduce_max_sync`, sm_80+).
    reduce_max_i32, i32;
    /// Bitwise and over the lanes of `mask` (`__reduce_and_sync`, sm_80+).
    reduce_and_u32, u32;
    /// Bitwise or over the lanes of `mask` (`__reduce_or_sync`, sm_80+).
    reduce_or_u32, u32;
    /// Bitwise xor over the lanes of `mask` (`__reduce_xor_sync`, sm_80+).
    reduce_xor_u32, u32;
}

/// [`sum_f32`] without `unsafe`: the sum of `value` over all 32 lanes, in every lane, after
/// checking that all 32 lanes execute this call together (`active_mask() == FULL_MASK`);
/// if not (a partial last warp, a lane that left early, a call inside a branch that split
/// the warp) the kernel fails with a message instead of shuffling with absent lanes. The
/// check is one `activemask`, a compare and a predicated trap, beside the five shuffles.
///
/// On the CPU: the same check, with the CPU runtime's [`active_mask`].
///
/// ```ignore
/// // Every lane of a full warp reaches this line.
/// let warp_total = sluice_device::warp::sum_f32_converged(partial);
/// ```
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub fn sum_f32_converged(value: f32) -> f32 {
    if active_mask() != FULL_MASK {
        not_converged();
    }
    // SAFETY: every lane of the warp is executing this instruction now (checked above), and
    // the butterfly below is straight-line code that each of them runs.
    unsafe { sum_f32(value) }
}

#[cold]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
fn not_converged() -> ! {
    crate::dfail!("warp::sum_f32_converged: not every lane of the warp is here")
}

/// The sum of `value` over all 32 lanes, in every lane (a butterfly of
/// five `shfl.sync.bfly`; the order of the additions is fixed, so the
/// result is the same in every lane and from run to run, and on the CPU
/// bitwise the GPU's).
///
/// # Safety
/// All 32 lanes of the warp execute this call (convergence contract with
/// `FULL_MASK`).
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn sum_f32(value: f32) -> f32 {
    let mut v = value;
    let mut offset = 16;
    while offset > 0 {
        // SAFETY: the caller guarantees the full warp is converged here.
        v += unsafe { shfl_xor(FULL_MASK, v, offset) };
        offset >>= 1;
    }
    v
}
