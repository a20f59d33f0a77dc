//! What PTX specifies for the lanes of a warp: the lane a `shfl.sync` reads (and
//! its in-range predicate), the `c` operand of a segment width, the lane masks of
//! `%lanemask_*`, and the reductions of `redux.sync` (public as
//! [`warp::shfl_source`](crate::warp::shfl_source) and friends).
//!
//! | `shfl.sync` mode | CUDA C++ | source lane `j` for lane `l` | in range when |
//! | --- | --- | --- | --- |
//! | `idx` | `__shfl_sync(m, v, b, w)` | `minLane \| (b & ~segMask)` | `j <= maxLane` |
//! | `up` | `__shfl_up_sync(m, v, b, w)` | `l - b` | `j >= maxLane` |
//! | `down` | `__shfl_down_sync(m, v, b, w)` | `l + b` | `j <= maxLane` |
//! | `bfly` | `__shfl_xor_sync(m, v, b, w)` | `l ^ b` | `j <= maxLane` |
//!
//! with `c = segMask << 8 | clamp` ([`shfl_c`]), `minLane = l & segMask` and
//! `maxLane = minLane | (clamp & ~segMask)`; out of range, a lane reads its own
//! value (PTX ISA, `shfl.sync`).

/// All 32 lanes.
pub const FULL_MASK: u32 = 0xffff_ffff;

/// The four shuffle modes of `shfl.sync` (pure data: the host tests and
/// references use it with [`shfl_source`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ShflMode {
    /// `__shfl_sync`: read lane `src` of this lane's segment.
    Idx,
    /// `__shfl_up_sync`: read lane `lane - delta`.
    Up,
    /// `__shfl_down_sync`: read lane `lane + delta`.
    Down,
    /// `__shfl_xor_sync`: read lane `lane ^ mask` (`.bfly`).
    Xor,
}

/// Whether `width` is a valid shuffle segment width: a power of two from 1 to 32.
pub const fn valid_width(width: u32) -> bool {
    width.is_power_of_two() && width <= 32
}

/// The `c` operand of `shfl.sync` for segments of `width` lanes, as nvcc
/// builds it for `__shfl*_sync(..., width)`: the segment mask `32 - width` in
/// bits 8..13, and the clamp lane in bits 0..5 (`0x1f`, except `0` for `up`,
/// whose bound is the segment's first lane). `width` must satisfy [`valid_width`].
pub const fn shfl_c(mode: ShflMode, width: u32) -> u32 {
    let seg = (32 - width) << 8;
    match mode {
        ShflMode::Up => seg,
        _ => seg | 0x1f,
    }
}

/// The lane a `shfl.sync` in `mode` with operands `b` and `c` reads for lane
/// `lane`, and its predicate (whether that lane was in range; out of range, a
/// lane reads its own value): PTX's definition of `shfl.sync`, for host-side
/// references and tests.
pub const fn shfl_source(mode: ShflMode, lane: u32, b: u32, c: u32) -> (u32, bool) {
    let lane = lane & 31;
    let b = b & 31;
    let clamp = c & 31;
    let seg = (c >> 8) & 31;
    let max_lane = (lane & seg) | (clamp & !seg);
    let min_lane = lane & seg;
    let (j, p) = match mode {
        ShflMode::Up => {
            let j = lane as i32 - b as i32;
            (j, j >= max_lane as i32)
        }
        ShflMode::Down => {
            let j = (lane + b) as i32;
            (j, j <= max_lane as i32)
        }
        ShflMode::Xor => {
            let j = (lane ^ b) as i32;
            (j, j <= max_lane as i32)
        }
        ShflMode::Idx => {
            let j = (min_lane | (b & !seg)) as i32;
            (j, j <= max_lane as i32)
        }
    };
    if p {
        (j as u32, true)
    } else {
        (lane, false)
    }
}

/// `%lanemask_lt` of lane `lane` (`0..32`): the lanes below it.
pub const fn lanemask_lt(lane: u32) -> u32 {
    (1u32 << lane) - 1
}

/// `%lanemask_le` of lane `lane`: the lanes up to and including it.
pub const fn lanemask_le(lane: u32) -> u32 {
    ((1u64 << (lane + 1)) - 1) as u32
}

/// `%lanemask_eq` of lane `lane`: its own bit.
pub const fn lanemask_eq(lane: u32) -> u32 {
    1u32 << lane
}

/// `%lanemask_gt` of lane `lane`: the lanes above it.
pub const fn lanemask_gt(lane: u32) -> u32 {
    !lanemask_le(lane)
}

/// A reduction of `redux.sync` (sm_80+) over the 32-bit values of a warp's lanes.
///
/// | variant | PTX | identity |
/// | --- | --- | --- |
/// | `AddU32` | `redux.sync.add.u32` and `.add.s32` (the same bits, wrapping) | 0 |
/// | `MinU32`, `MaxU32` | `redux.sync.min.u32`, `.max.u32` | `u32::MAX`, 0 |
/// | `MinI32`, `MaxI32` | `redux.sync.min.s32`, `.max.s32` | `i32::MAX`, `i32::MIN` |
/// | `And`, `Or`, `Xor` | `redux.sync.and.b32`, `.or.b32`, `.xor.b32` | all ones, 0, 0 |
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Redux {
    /// Wrapping sum (signed and unsigned alike).
    AddU32,
    /// Unsigned minimum.
    MinU32,
    /// Signed minimum.
    MinI32,
    /// Unsigned maximum.
    MaxU32,
    /// Signed maximum.
    MaxI32,
    /// Bitwise and.
    And,
    /// Bitwise or.
    Or,
    /// Bitwise xor.
    Xor,
}

impl Redux {
    /// The reduction of `values` (the members' values, in any order: every
    /// reduction here is commutative and associative).
    pub fn reduce(self, values: impl Iterator<Item = u32>) -> u32 {
        match self {
            Redux::AddU32 => values.fold(0u32, u32::wrapping_add),
            Redux::MinU32 => values.fold(u32::MAX, u32::min),
            Redux::MaxU32 => values.fold(0, u32::max),
            Redux::MinI32 => values.map(|v| v as i32).fold(i32::MAX, i32::min) as u32,
            Redux::MaxI32 => values.map(|v| v as i32).fold(i32::MIN, i32::max) as u32,
            Redux::And => values.fold(u32::MAX, |a, v| a & v),
            Redux::Or => values.fold(0, |a, v| a | v),
            Redux::Xor => values.fold(0, |a, v| a ^ v),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn full_width_shuffles_read_the_documented_lanes() {
        let c = |m| shfl_c(m, 32);
        assert_eq!(shfl_source(ShflMode::Idx, 3, 17, c(ShflMode::Idx)), (17, true));
        assert_eq!(shfl_source(ShflMode::Up, 3, 1, c(ShflMode::Up)), (2, true));
        assert_eq!(shfl_source(ShflMode::Up, 0, 1, c(ShflMode::Up)), (0, false));
        assert_eq!(shfl_source(ShflMode::Down, 30, 1, c(ShflMode::Down)), (31, true));
        assert_eq!(shfl_source(ShflMode::Down, 31, 1, c(ShflMode::Down)), (31, false));
        assert_eq!(shfl_source(ShflMode::Xor, 5, 1, c(ShflMode::Xor)), (4, true));
    }

    #[test]
    fn segments_bound_every_mode() {
        // width 8: lanes 8..16 form one segment.
        assert_eq!(shfl_c(ShflMode::Idx, 8), 0x181f);
        assert_eq!(shfl_c(ShflMode::Up, 8), 0x1800);
        assert_eq!(shfl_source(ShflMode::Idx, 12, 3, shfl_c(ShflMode::Idx, 8)), (11, true));
        assert_eq!(shfl_source(ShflMode::Idx, 12, 11, shfl_c(ShflMode::Idx, 8)), (11, true)); // 11 % 8 = 3
        assert_eq!(shfl_source(ShflMode::Up, 9, 2, shfl_c(ShflMode::Up, 8)), (9, false));
        assert_eq!(shfl_source(ShflMode::Up, 10, 2, shfl_c(ShflMode::Up, 8)), (8, true));
        assert_eq!(shfl_source(ShflMode::Down, 14, 1, shfl_c(ShflMode::Down, 8)), (15, true));
        assert_eq!(shfl_source(ShflMode::Down, 15, 1, shfl_c(ShflMode::Down, 8)), (15, false));
        assert_eq!(shfl_source(ShflMode::Xor, 13, 4, shfl_c(ShflMode::Xor, 8)), (9, true));
        // CUDA: an xor may read an *earlier* segment, never a later one.
        assert_eq!(shfl_source(ShflMode::Xor, 13, 8, shfl_c(ShflMode::Xor, 8)), (5, true));
        assert_eq!(shfl_source(ShflMode::Xor, 5, 8, shfl_c(ShflMode::Xor, 8)), (5, false));
    }

    #[test]
    fn widths_are_powers_of_two_up_to_32() {
        assert!(valid_width(1) && valid_width(16) && valid_width(32));
        assert!(!valid_width(0) && !valid_width(12) && !valid_width(64));
    }

    #[test]
    fn lane_masks_of_the_first_a_middle_and_the_last_lane() {
        assert_eq!((lanemask_lt(0), lanemask_le(0), lanemask_eq(0), lanemask_gt(0)), (0, 1, 1, !1));
        assert_eq!((lanemask_lt(5), lanemask_le(5), lanemask_eq(5), lanemask_gt(5)), (0x1f, 0x3f, 0x20, !0x3f));
        assert_eq!((lanemask_lt(31), lanemask_le(31), lanemask_eq(31), lanemask_gt(31)), (0x7fff_ffff, !0, 1 << 31, 0));
    }

    #[test]
    fn each_reduction_and_its_identity() {
        let v = [3u32, (-7i32) as u32, 12, 0x8000_0000];
        let r = |op: Redux| op.reduce(v.iter().copied());
        assert_eq!(r(Redux::AddU32), 3u32.wrapping_sub(7).wrapping_add(12).wrapping_add(0x8000_0000));
        assert_eq!(r(Redux::MinU32), 3);
        assert_eq!(r(Redux::MaxU32), (-7i32) as u32);
        assert_eq!(r(Redux::MinI32), i32::MIN as u32);
        assert_eq!(r(Redux::MaxI32), 12);
        assert_eq!(r(Redux::And), 0);
        assert_eq!(r(Redux::Or), 3 | (-7i32) as u32 | 12 | 0x8000_0000);
        assert_eq!(r(Redux::Xor), 3 ^ (-7i32) as u32 ^ 12 ^ 0x8000_0000);
        let none = core::iter::empty;
        assert_eq!(
            [
                Redux::AddU32,
                Redux::MinU32,
                Redux::MaxU32,
                Redux::MinI32,
                Redux::MaxI32,
                Redux::And,
                Redux::Or,
                Redux::Xor
            ]
            .map(|op| op.reduce(none())),
            [0, u32::MAX, 0, i32::MAX as u32, i32::MIN as u32, u32::MAX, 0, 0]
        );
    }
}
