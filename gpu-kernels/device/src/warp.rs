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
//! Shuffles exist for every [`Shuffle`] type: `u32`, `i32`, `f32` (one `shfl`)
//! and `u64`, `i64`, `f64` (two `shfl`s on the halves).
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
//! # On the host
//!
//! The CPU runtime ([`crate::cpu`]) runs each `.sync` operation as a
//! rendezvous of the warp's lanes: a lane waits until every non-exited lane of
//! its mask has arrived at the same operation with the same mask (PTX's rule
//! for sm_70+), then all get their results; divergent groups with disjoint
//! masks complete separately, and a shuffle from a lane outside the group reads
//! all-one bits. Lanes do not run in lockstep: see [`crate::cpu`] for what that
//! means for warp-synchronous code without `sync_warp`. `reduce_*` exist on the
//! host whatever the architecture.
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

#[cfg(target_arch = "nvptx64")]
mod imp {
    use core::arch::asm;

    /// This thread's lane in its warp, `0..32`.
    #[inline(always)]
    pub fn lane_id() -> u32 {
        let r: u32;
        // SAFETY: reads a special register.
        unsafe { asm!("mov.u32 {r}, %laneid;", r = out(reg32) r, options(pure, nomem, nostack, preserves_flags)) };
        r
    }

    /// The lanes of this warp executing this instruction now (`__activemask()`).
    /// Not a synchronisation: lanes may be active without being converged.
    #[inline(always)]
    pub fn active_mask() -> u32 {
        let r: u32;
        // SAFETY: no operands besides the result. Not `pure`: the answer depends on
        // where the call is, so the compiler must not move or merge it.
        unsafe { asm!("activemask.b32 {r};", r = out(reg32) r, options(nomem, nostack, preserves_flags)) };
        r
    }

    macro_rules! lanemask {
        ($($(#[$doc:meta])* $name:ident => $reg:literal;)*) => {$(
            $(#[$doc])*
            #[inline(always)]
            pub fn $name() -> u32 {
                let r: u32;
                // SAFETY: reads a special register.
                unsafe { asm!(concat!("mov.u32 {r}, ", $reg, ";"), r = out(reg32) r, options(pure, nomem, nostack, preserves_flags)) };
                r
            }
        )*};
    }

    lanemask! {
        /// Bits of the lanes below this one (`%lanemask_lt`).
        lane_mask_lt => "%lanemask_lt";
        /// Bits of the lanes up to and including this one (`%lanemask_le`).
        lane_mask_le => "%lanemask_le";
        /// Bit of this lane (`%lanemask_eq`).
        lane_mask_eq => "%lanemask_eq";
        /// Bits of the lanes above this one (`%lanemask_gt`).
        lane_mask_gt => "%lanemask_gt";
    }

    /// Waits until every lane in `mask` has reached a `sync_warp` and orders
    /// their memory accesses (`__syncwarp(mask)`).
    ///
    /// # Safety
    /// The calling lane is in `mask`, and every lane in `mask` reaches a
    /// `sync_warp` with the same mask (see the module docs).
    #[inline(always)]
    pub unsafe fn sync_warp(mask: u32) {
        // SAFETY: the caller upholds the convergence contract.
        unsafe { asm!("bar.warp.sync {m};", m = in(reg32) mask, options(nostack)) }
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
        #[doc(hidden)]
        unsafe fn shfl(self, kind: Kind, mask: u32, b: u32) -> Self;
        #[doc(hidden)]
        unsafe fn shfl_p(self, kind: Kind, mask: u32, b: u32, c: u32) -> (Self, bool);
    }

    mod sealed {
        pub trait Sealed {}
    }

    #[doc(hidden)]
    #[derive(Clone, Copy, PartialEq, Eq)]
    pub enum Kind {
        Idx,
        Up,
        Down,
        Xor,
    }

    #[inline(always)]
    unsafe fn shfl32(kind: Kind, mask: u32, a: u32, b: u32) -> u32 {
        let d: u32;
        // SAFETY: register-only instruction; the convergence contract is the
        // caller's (see the module docs). `c` is the clamp value of a full-width
        // shuffle: 31 for idx/down/bfly, 0 for up. Not `pure`: moving a
        // shuffle into divergent code changes its meaning.
        unsafe {
            match kind {
                Kind::Idx => {
                    asm!("shfl.sync.idx.b32 {d}, {a}, {b}, 31, {m};", d = out(reg32) d, a = in(reg32) a, b = in(reg32) b, m = in(reg32) mask, options(nomem, nostack, preserves_flags))
                }
                Kind::Up => {
                    asm!("shfl.sync.up.b32 {d}, {a}, {b}, 0, {m};", d = out(reg32) d, a = in(reg32) a, b = in(reg32) b, m = in(reg32) mask, options(nomem, nostack, preserves_flags))
                }
                Kind::Down => {
                    asm!("shfl.sync.down.b32 {d}, {a}, {b}, 31, {m};", d = out(reg32) d, a = in(reg32) a, b = in(reg32) b, m = in(reg32) mask, options(nomem, nostack, preserves_flags))
                }
                Kind::Xor => {
                    asm!("shfl.sync.bfly.b32 {d}, {a}, {b}, 31, {m};", d = out(reg32) d, a = in(reg32) a, b = in(reg32) b, m = in(reg32) mask, options(nomem, nostack, preserves_flags))
                }
            }
        }
        d
    }

    /// `shfl.sync` with a width operand and the in-range predicate.
    #[inline(always)]
    unsafe fn shfl32p(kind: Kind, mask: u32, a: u32, b: u32, c: u32) -> (u32, bool) {
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
            match kind {
                Kind::Idx => go!("idx"),
                Kind::Up => go!("up"),
                Kind::Down => go!("down"),
                Kind::Xor => go!("bfly"),
            }
        }
        (d, p != 0)
    }

    macro_rules! shuffle_small {
        ($($t:ty),*) => {$(
            impl sealed::Sealed for $t {}
            impl Shuffle for $t {
                #[inline(always)]
                unsafe fn shfl(self, kind: Kind, mask: u32, b: u32) -> Self {
                    // SAFETY: forwarded to the caller of the public shuffle.
                    unsafe { shfl32(kind, mask, self as u32, b) as $t }
                }
                #[inline(always)]
                unsafe fn shfl_p(self, kind: Kind, mask: u32, b: u32, c: u32) -> (Self, bool) {
                    // SAFETY: forwarded to the caller of the public shuffle.
                    let (d, p) = unsafe { shfl32p(kind, mask, self as u32, b, c) };
                    (d as $t, p)
                }
            }
        )*};
    }
    shuffle_small!(u8, i8, u16, i16);

    macro_rules! shuffle128 {
        ($($t:ty),*) => {$(
            impl sealed::Sealed for $t {}
            impl Shuffle for $t {
                #[inline(always)]
                unsafe fn shfl(self, kind: Kind, mask: u32, b: u32) -> Self {
                    let v = self as u128;
                    // SAFETY: forwarded; the four words are shuffled by the same lanes from the same source.
                    let w = unsafe { [0, 1, 2, 3].map(|k| shfl32(kind, mask, (v >> (32 * k)) as u32, b)) };
                    (w[0] as u128 | (w[1] as u128) << 32 | (w[2] as u128) << 64 | (w[3] as u128) << 96) as $t
                }
                #[inline(always)]
                unsafe fn shfl_p(self, kind: Kind, mask: u32, b: u32, c: u32) -> (Self, bool) {
                    let v = self as u128;
                    // SAFETY: as in `shfl`; the predicate is the same for every word.
                    let w = unsafe { [0, 1, 2, 3].map(|k| shfl32p(kind, mask, (v >> (32 * k)) as u32, b, c)) };
                    ((w[0].0 as u128 | (w[1].0 as u128) << 32 | (w[2].0 as u128) << 64 | (w[3].0 as u128) << 96) as $t, w[0].1)
                }
            }
        )*};
    }
    shuffle128!(u128, i128);

    macro_rules! shuffle32 {
        ($($t:ty),*) => {$(
            impl sealed::Sealed for $t {}
            impl Shuffle for $t {
                #[inline(always)]
                unsafe fn shfl(self, kind: Kind, mask: u32, b: u32) -> Self {
                    // SAFETY: forwarded to the caller of the public shuffle.
                    <$t>::from_bits_or_cast(unsafe { shfl32(kind, mask, self.to_bits_or_cast(), b) })
                }
                #[inline(always)]
                unsafe fn shfl_p(self, kind: Kind, mask: u32, b: u32, c: u32) -> (Self, bool) {
                    // SAFETY: forwarded to the caller of the public shuffle.
                    let (d, p) = unsafe { shfl32p(kind, mask, self.to_bits_or_cast(), b, c) };
                    (<$t>::from_bits_or_cast(d), p)
                }
            }
        )*};
    }
    macro_rules! shuffle64 {
        ($($t:ty),*) => {$(
            impl sealed::Sealed for $t {}
            impl Shuffle for $t {
                #[inline(always)]
                unsafe fn shfl(self, kind: Kind, mask: u32, b: u32) -> Self {
                    let bits = self.to_bits_or_cast();
                    // SAFETY: forwarded to the caller of the public shuffle; both halves
                    // are shuffled by the same lanes with the same source lane.
                    let (lo, hi) = unsafe { (shfl32(kind, mask, bits as u32, b), shfl32(kind, mask, (bits >> 32) as u32, b)) };
                    <$t>::from_bits_or_cast(lo as u64 | (hi as u64) << 32)
                }
                #[inline(always)]
                unsafe fn shfl_p(self, kind: Kind, mask: u32, b: u32, c: u32) -> (Self, bool) {
                    let bits = self.to_bits_or_cast();
                    // SAFETY: as in `shfl`; both halves get the same predicate.
                    let ((lo, p), (hi, _)) = unsafe { (shfl32p(kind, mask, bits as u32, b, c), shfl32p(kind, mask, (bits >> 32) as u32, b, c)) };
                    (<$t>::from_bits_or_cast(lo as u64 | (hi as u64) << 32), p)
                }
            }
        )*};
    }

    trait Bits<B> {
        fn to_bits_or_cast(self) -> B;
        fn from_bits_or_cast(b: B) -> Self;
    }
    impl Bits<u32> for u32 {
        fn to_bits_or_cast(self) -> u32 {
            self
        }
        fn from_bits_or_cast(b: u32) -> Self {
            b
        }
    }
    impl Bits<u32> for i32 {
        fn to_bits_or_cast(self) -> u32 {
            self as u32
        }
        fn from_bits_or_cast(b: u32) -> Self {
            b as i32
        }
    }
    impl Bits<u32> for f32 {
        fn to_bits_or_cast(self) -> u32 {
            self.to_bits()
        }
        fn from_bits_or_cast(b: u32) -> Self {
            f32::from_bits(b)
        }
    }
    impl Bits<u64> for u64 {
        fn to_bits_or_cast(self) -> u64 {
            self
        }
        fn from_bits_or_cast(b: u64) -> Self {
            b
        }
    }
    impl Bits<u64> for i64 {
        fn to_bits_or_cast(self) -> u64 {
            self as u64
        }
        fn from_bits_or_cast(b: u64) -> Self {
            b as i64
        }
    }
    impl Bits<u64> for f64 {
        fn to_bits_or_cast(self) -> u64 {
            self.to_bits()
        }
        fn from_bits_or_cast(b: u64) -> Self {
            f64::from_bits(b)
        }
    }

    shuffle32!(u32, i32, f32);
    shuffle64!(u64, i64, f64);

    /// `value` of lane `src_lane` (`__shfl_sync(mask, value, src_lane)`).
    ///
    /// # Safety
    /// Convergence contract of the module docs: this lane is in `mask`, and
    /// every lane in `mask` executes this call.
    #[inline(always)]
    pub unsafe fn shfl_idx<T: Shuffle>(mask: u32, value: T, src_lane: u32) -> T {
        // SAFETY: forwarded to the caller.
        unsafe { value.shfl(Kind::Idx, mask, src_lane) }
    }

    /// `value` of lane `lane_id() - delta`; lanes below `delta` keep their own
    /// (`__shfl_up_sync`).
    ///
    /// # Safety
    /// As [`shfl_idx`].
    #[inline(always)]
    pub unsafe fn shfl_up<T: Shuffle>(mask: u32, value: T, delta: u32) -> T {
        // SAFETY: forwarded to the caller.
        unsafe { value.shfl(Kind::Up, mask, delta) }
    }

    /// `value` of lane `lane_id() + delta`; lanes with `lane_id() + delta >= 32`
    /// keep their own (`__shfl_down_sync`).
    ///
    /// # Safety
    /// As [`shfl_idx`].
    #[inline(always)]
    pub unsafe fn shfl_down<T: Shuffle>(mask: u32, value: T, delta: u32) -> T {
        // SAFETY: forwarded to the caller.
        unsafe { value.shfl(Kind::Down, mask, delta) }
    }

    /// `value` of lane `lane_id() ^ lane_mask` (`__shfl_xor_sync`, a butterfly).
    ///
    /// # Safety
    /// As [`shfl_idx`].
    #[inline(always)]
    pub unsafe fn shfl_xor<T: Shuffle>(mask: u32, value: T, lane_mask: u32) -> T {
        // SAFETY: forwarded to the caller.
        unsafe { value.shfl(Kind::Xor, mask, lane_mask) }
    }

    #[inline(always)]
    unsafe fn shfl_width<T: Shuffle>(
        kind: Kind,
        mode: super::ShflMode,
        mask: u32,
        value: T,
        b: u32,
        width: u32,
    ) -> (T, bool) {
        crate::dassert!(super::valid_width(width), "warp shuffle: width must be a power of two from 1 to 32");
        // SAFETY: forwarded to the caller; `c` is well formed for a valid width.
        unsafe { value.shfl_p(kind, mask, b, super::shfl_c(mode, width)) }
    }

    /// `value` of lane `src_lane % width` of this lane's segment of `width`
    /// lanes (`__shfl_sync(mask, value, src_lane, width)`), and whether the source
    /// was in range (`shfl.sync.idx` with its predicate; always `true` for a
    /// valid width). `width` is a power of two from 1 to 32 (else the kernel traps).
    ///
    /// # Safety
    /// As [`shfl_idx`].
    #[inline(always)]
    pub unsafe fn shfl_idx_width<T: Shuffle>(mask: u32, value: T, src_lane: u32, width: u32) -> (T, bool) {
        // SAFETY: forwarded to the caller.
        unsafe { shfl_width(Kind::Idx, super::ShflMode::Idx, mask, value, src_lane, width) }
    }

    /// `value` of lane `lane_id() - delta` within this lane's segment of
    /// `width` lanes (`__shfl_up_sync(..., width)`); lanes whose source would
    /// fall below the segment keep their own value and get `false`.
    ///
    /// # Safety
    /// As [`shfl_idx`].
    #[inline(always)]
    pub unsafe fn shfl_up_width<T: Shuffle>(mask: u32, value: T, delta: u32, width: u32) -> (T, bool) {
        // SAFETY: forwarded to the caller.
        unsafe { shfl_width(Kind::Up, super::ShflMode::Up, mask, value, delta, width) }
    }

    /// `value` of lane `lane_id() + delta` within this lane's segment of
    /// `width` lanes (`__shfl_down_sync(..., width)`); lanes whose source would
    /// pass the segment's end keep their own value and get `false`.
    ///
    /// # Safety
    /// As [`shfl_idx`].
    #[inline(always)]
    pub unsafe fn shfl_down_width<T: Shuffle>(mask: u32, value: T, delta: u32, width: u32) -> (T, bool) {
        // SAFETY: forwarded to the caller.
        unsafe { shfl_width(Kind::Down, super::ShflMode::Down, mask, value, delta, width) }
    }

    /// `value` of lane `lane_id() ^ lane_mask` within this lane's segment of
    /// `width` lanes (`__shfl_xor_sync(..., width)`); as in CUDA, a source in a
    /// *later* segment leaves the lane's own value and `false`, while one in an
    /// earlier segment is read.
    ///
    /// # Safety
    /// As [`shfl_idx`].
    #[inline(always)]
    pub unsafe fn shfl_xor_width<T: Shuffle>(mask: u32, value: T, lane_mask: u32, width: u32) -> (T, bool) {
        // SAFETY: forwarded to the caller.
        unsafe { shfl_width(Kind::Xor, super::ShflMode::Xor, mask, value, lane_mask, width) }
    }

    /// Whether `predicate` is true on any lane of `mask` (`__any_sync`).
    ///
    /// # Safety
    /// As [`shfl_idx`].
    #[inline(always)]
    pub unsafe fn any(mask: u32, predicate: bool) -> bool {
        let r: u32;
        // SAFETY: register-only; convergence is the caller's contract.
        unsafe {
            asm!("{{ .reg .pred p, q; setp.ne.u32 p, {v}, 0; vote.sync.any.pred q, p, {m}; selp.u32 {r}, 1, 0, q; }}",
                 v = in(reg32) predicate as u32, m = in(reg32) mask, r = out(reg32) r, options(nomem, nostack))
        };
        r != 0
    }

    /// Whether `predicate` is true on every lane of `mask` (`__all_sync`).
    ///
    /// # Safety
    /// As [`shfl_idx`].
    #[inline(always)]
    pub unsafe fn all(mask: u32, predicate: bool) -> bool {
        let r: u32;
        // SAFETY: register-only; convergence is the caller's contract.
        unsafe {
            asm!("{{ .reg .pred p, q; setp.ne.u32 p, {v}, 0; vote.sync.all.pred q, p, {m}; selp.u32 {r}, 1, 0, q; }}",
                 v = in(reg32) predicate as u32, m = in(reg32) mask, r = out(reg32) r, options(nomem, nostack))
        };
        r != 0
    }

    /// Bit `i` set iff lane `i` of `mask` passed `true` (`__ballot_sync`).
    ///
    /// # Safety
    /// As [`shfl_idx`].
    #[inline(always)]
    pub unsafe fn ballot(mask: u32, predicate: bool) -> u32 {
        let r: u32;
        // SAFETY: register-only; convergence is the caller's contract.
        unsafe {
            asm!("{{ .reg .pred p; setp.ne.u32 p, {v}, 0; vote.sync.ballot.b32 {r}, p, {m}; }}",
                 v = in(reg32) predicate as u32, m = in(reg32) mask, r = out(reg32) r, options(nomem, nostack))
        };
        r
    }

    /// The lanes of `mask` whose `value` equals this lane's (`__match_any_sync`, sm_70+).
    ///
    /// # Safety
    /// As [`shfl_idx`].
    #[inline(always)]
    pub unsafe fn match_any(mask: u32, value: u32) -> u32 {
        let r: u32;
        // SAFETY: register-only; convergence is the caller's contract.
        unsafe {
            asm!("match.any.sync.b32 {r}, {v}, {m};", r = out(reg32) r, v = in(reg32) value, m = in(reg32) mask, options(nomem, nostack))
        };
        r
    }

    /// [`match_any`] for 64-bit values.
    ///
    /// # Safety
    /// As [`shfl_idx`].
    #[inline(always)]
    pub unsafe fn match_any_u64(mask: u32, value: u64) -> u32 {
        let r: u32;
        // SAFETY: register-only; convergence is the caller's contract.
        unsafe {
            asm!("match.any.sync.b64 {r}, {v}, {m};", r = out(reg32) r, v = in(reg64) value, m = in(reg32) mask, options(nomem, nostack))
        };
        r
    }

    /// `Some(mask)` if every lane of `mask` holds the same `value`, else `None`
    /// (`__match_all_sync`, sm_70+).
    ///
    /// # Safety
    /// As [`shfl_idx`].
    #[inline(always)]
    pub unsafe fn match_all(mask: u32, value: u32) -> Option<u32> {
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

    /// [`match_all`] for 64-bit values.
    ///
    /// # Safety
    /// As [`shfl_idx`].
    #[inline(always)]
    pub unsafe fn match_all_u64(mask: u32, value: u64) -> Option<u32> {
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
        ($($(#[$doc:meta])* $name:ident, $t:ty, $op:literal;)*) => {$(
            $(#[$doc])*
            ///
            /// # Safety
            /// As [`shfl_idx`].
            #[cfg(target_feature = "sm_80")]
            #[inline(always)]
            pub unsafe fn $name(mask: u32, value: $t) -> $t {
                let r: $t;
                // SAFETY: register-only; convergence is the caller's contract.
                unsafe { asm!(concat!("redux.sync.", $op, " {r}, {v}, {m};"), r = out(reg32) r, v = in(reg32) value, m = in(reg32) mask, options(nomem, nostack)) };
                r
            }
        )*};
    }

    redux! {
        /// The sum over the lanes of `mask` (`__reduce_add_sync`, sm_80+), in every lane.
        reduce_add_u32, u32, "add.u32";
        /// The sum over the lanes of `mask` (`__reduce_add_sync`, sm_80+), in every lane.
        reduce_add_i32, i32, "add.s32";
        /// The minimum over the lanes of `mask` (`__reduce_min_sync`, sm_80+).
        reduce_min_u32, u32, "min.u32";
        /// The minimum over the lanes of `mask` (`__reduce_min_sync`, sm_80+).
        reduce_min_i32, i32, "min.s32";
        /// The maximum over the lanes of `mask` (`__reduce_max_sync`, sm_80+).
        reduce_max_u32, u32, "max.u32";
        /// The maximum over the lanes of `mask` (`__reduce_max_sync`, sm_80+).
        reduce_max_i32, i32, "max.s32";
        /// Bitwise and over the lanes of `mask` (`__reduce_and_sync`, sm_80+).
        reduce_and_u32, u32, "and.b32";
        /// Bitwise or over the lanes of `mask` (`__reduce_or_sync`, sm_80+).
        reduce_or_u32, u32, "or.b32";
        /// Bitwise xor over the lanes of `mask` (`__reduce_xor_sync`, sm_80+).
        reduce_xor_u32, u32, "xor.b32";
    }

    /// The sum of `value` over all 32 lanes, in every lane (a butterfly of
    /// five `shfl.sync.bfly`; the order of the additions is fixed, so the
    /// result is the same in every lane and from run to run).
    ///
    /// # Safety
    /// All 32 lanes of the warp execute this call (convergence contract with
    /// `FULL_MASK`).
    #[inline(always)]
    pub unsafe fn sum_f32(value: f32) -> f32 {
        let mut v = value;
        let mut offset = 16;
        while offset > 0 {
            // SAFETY: the caller guarantees the full warp is converged here.
            v += unsafe { shfl_xor(super::FULL_MASK, v, offset) };
            offset >>= 1;
        }
        v
    }
}

#[cfg(target_arch = "nvptx64")]
pub use imp::*;

/// The host: warp collectives of the CPU runtime ([`crate::cpu`]), with the
/// same signatures and contracts as on the device.
#[cfg(not(target_arch = "nvptx64"))]
mod imp {
    use super::{shfl_c, valid_width, ShflMode, FULL_MASK};
    use crate::cpu::block::current;
    use crate::cpu::warp::{active_mask as cpu_active_mask, collective, WarpOp};
    use crate::spec::warp::{lanemask_eq, lanemask_gt, lanemask_le, lanemask_lt, Redux};

    /// This thread's lane in its warp, `0..32`.
    #[inline(always)]
    #[track_caller]
    pub fn lane_id() -> u32 {
        current("warp::lane_id").rank % 32
    }

    /// The lanes of this warp executing this instruction now (`__activemask()`).
    /// Not a synchronisation: lanes may be active without being converged.
    ///
    /// On the CPU: waits until no thread of the block can run, then returns
    /// the lanes of this warp that wait here, at the same call site (see
    /// [`crate::cpu`]).
    #[track_caller]
    pub fn active_mask() -> u32 {
        cpu_active_mask("warp::active_mask")
    }

    macro_rules! lanemask {
        ($($(#[$doc:meta])* $name:ident => |$l:ident| $e:expr;)*) => {$(
            $(#[$doc])*
            #[inline(always)]
            #[track_caller]
            pub fn $name() -> u32 {
                let $l = current(concat!("warp::", stringify!($name))).rank % 32;
                $e
            }
        )*};
    }

    lanemask! {
        /// Bits of the lanes below this one (`%lanemask_lt`).
        lane_mask_lt => |l| lanemask_lt(l);
        /// Bits of the lanes up to and including this one (`%lanemask_le`).
        lane_mask_le => |l| lanemask_le(l);
        /// Bit of this lane (`%lanemask_eq`).
        lane_mask_eq => |l| lanemask_eq(l);
        /// Bits of the lanes above this one (`%lanemask_gt`).
        lane_mask_gt => |l| lanemask_gt(l);
    }

    /// Waits until every lane in `mask` has reached a `sync_warp` and orders
    /// their memory accesses (`__syncwarp(mask)`).
    ///
    /// # Safety
    /// The calling lane is in `mask`, and every lane in `mask` reaches a
    /// `sync_warp` with the same mask (see the module docs).
    #[track_caller]
    pub unsafe fn sync_warp(mask: u32) {
        collective("warp::sync_warp", WarpOp::Sync, mask, 0, 0, 0);
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
        #[doc(hidden)]
        fn __to_bits(self) -> u128;
        #[doc(hidden)]
        fn __from_bits(b: u128) -> Self;
    }

    macro_rules! shuffle {
        ($($t:ty => $u:ty, |$x:ident| $to:expr, |$b:ident| $from:expr;)*) => {$(
            impl sealed::Sealed for $t {}
            impl Shuffle for $t {
                #[inline(always)]
                fn __to_bits(self) -> u128 {
                    let $x = self;
                    $to as $u as u128
                }
                #[inline(always)]
                fn __from_bits(b: u128) -> Self {
                    let $b = b as $u;
                    $from
                }
            }
        )*};
    }
    shuffle! {
        u8 => u8, |x| x, |b| b;
        i8 => u8, |x| x, |b| b as i8;
        u16 => u16, |x| x, |b| b;
        i16 => u16, |x| x, |b| b as i16;
        u32 => u32, |x| x, |b| b;
        i32 => u32, |x| x, |b| b as i32;
        f32 => u32, |x| x.to_bits(), |b| f32::from_bits(b);
        u64 => u64, |x| x, |b| b;
        i64 => u64, |x| x, |b| b as i64;
        f64 => u64, |x| x.to_bits(), |b| f64::from_bits(b);
        u128 => u128, |x| x, |b| b;
        i128 => u128, |x| x, |b| b as i128;
    }

    #[inline(always)]
    #[track_caller]
    fn shfl<T: Shuffle>(what: &'static str, mode: ShflMode, mask: u32, value: T, b: u32, width: u32) -> (T, bool) {
        crate::dassert!(valid_width(width), "warp shuffle: width must be a power of two from 1 to 32");
        let (v, p) = collective(what, WarpOp::Shfl(mode), mask, value.__to_bits(), b, shfl_c(mode, width));
        (T::__from_bits(v), p)
    }

    /// `value` of lane `src_lane` (`__shfl_sync(mask, value, src_lane)`).
    ///
    /// # Safety
    /// Convergence contract of the module docs: this lane is in `mask`, and
    /// every lane in `mask` executes this call.
    #[track_caller]
    pub unsafe fn shfl_idx<T: Shuffle>(mask: u32, value: T, src_lane: u32) -> T {
        shfl("warp::shfl_idx", ShflMode::Idx, mask, value, src_lane, 32).0
    }

    /// `value` of lane `lane_id() - delta`; lanes below `delta` keep their own
    /// (`__shfl_up_sync`).
    ///
    /// # Safety
    /// As [`shfl_idx`].
    #[track_caller]
    pub unsafe fn shfl_up<T: Shuffle>(mask: u32, value: T, delta: u32) -> T {
        shfl("warp::shfl_up", ShflMode::Up, mask, value, delta, 32).0
    }

    /// `value` of lane `lane_id() + delta`; lanes with `lane_id() + delta >= 32`
    /// keep their own (`__shfl_down_sync`).
    ///
    /// # Safety
    /// As [`shfl_idx`].
    #[track_caller]
    pub unsafe fn shfl_down<T: Shuffle>(mask: u32, value: T, delta: u32) -> T {
        shfl("warp::shfl_down", ShflMode::Down, mask, value, delta, 32).0
    }

    /// `value` of lane `lane_id() ^ lane_mask` (`__shfl_xor_sync`, a butterfly).
    ///
    /// # Safety
    /// As [`shfl_idx`].
    #[track_caller]
    pub unsafe fn shfl_xor<T: Shuffle>(mask: u32, value: T, lane_mask: u32) -> T {
        shfl("warp::shfl_xor", ShflMode::Xor, mask, value, lane_mask, 32).0
    }

    /// `value` of lane `src_lane % width` of this lane's segment of `width`
    /// lanes (`__shfl_sync(mask, value, src_lane, width)`), and whether the source
    /// was in range (`shfl.sync.idx` with its predicate; always `true` for a
    /// valid width). `width` is a power of two from 1 to 32 (else the kernel traps).
    ///
    /// # Safety
    /// As [`shfl_idx`].
    #[track_caller]
    pub unsafe fn shfl_idx_width<T: Shuffle>(mask: u32, value: T, src_lane: u32, width: u32) -> (T, bool) {
        shfl("warp::shfl_idx_width", ShflMode::Idx, mask, value, src_lane, width)
    }

    /// `value` of lane `lane_id() - delta` within this lane's segment of
    /// `width` lanes (`__shfl_up_sync(..., width)`); lanes whose source would
    /// fall below the segment keep their own value and get `false`.
    ///
    /// # Safety
    /// As [`shfl_idx`].
    #[track_caller]
    pub unsafe fn shfl_up_width<T: Shuffle>(mask: u32, value: T, delta: u32, width: u32) -> (T, bool) {
        shfl("warp::shfl_up_width", ShflMode::Up, mask, value, delta, width)
    }

    /// `value` of lane `lane_id() + delta` within this lane's segment of
    /// `width` lanes (`__shfl_down_sync(..., width)`); lanes whose source would
    /// pass the segment's end keep their own value and get `false`.
    ///
    /// # Safety
    /// As [`shfl_idx`].
    #[track_caller]
    pub unsafe fn shfl_down_width<T: Shuffle>(mask: u32, value: T, delta: u32, width: u32) -> (T, bool) {
        shfl("warp::shfl_down_width", ShflMode::Down, mask, value, delta, width)
    }

    /// `value` of lane `lane_id() ^ lane_mask` within this lane's segment of
    /// `width` lanes (`__shfl_xor_sync(..., width)`); as in CUDA, a source in a
    /// *later* segment leaves the lane's own value and `false`, while one in an
    /// earlier segment is read.
    ///
    /// # Safety
    /// As [`shfl_idx`].
    #[track_caller]
    pub unsafe fn shfl_xor_width<T: Shuffle>(mask: u32, value: T, lane_mask: u32, width: u32) -> (T, bool) {
        shfl("warp::shfl_xor_width", ShflMode::Xor, mask, value, lane_mask, width)
    }

    /// Whether `predicate` is true on any lane of `mask` (`__any_sync`).
    ///
    /// # Safety
    /// As [`shfl_idx`].
    #[track_caller]
    pub unsafe fn any(mask: u32, predicate: bool) -> bool {
        collective("warp::any", WarpOp::Any, mask, predicate as u128, 0, 0).0 != 0
    }

    /// Whether `predicate` is true on every lane of `mask` (`__all_sync`).
    ///
    /// # Safety
    /// As [`shfl_idx`].
    #[track_caller]
    pub unsafe fn all(mask: u32, predicate: bool) -> bool {
        collective("warp::all", WarpOp::All, mask, predicate as u128, 0, 0).0 != 0
    }

    /// Bit `i` set iff lane `i` of `mask` passed `true` (`__ballot_sync`).
    ///
    /// # Safety
    /// As [`shfl_idx`].
    #[track_caller]
    pub unsafe fn ballot(mask: u32, predicate: bool) -> u32 {
        collective("warp::ballot", WarpOp::Ballot, mask, predicate as u128, 0, 0).0 as u32
    }

    /// The lanes of `mask` whose `value` equals this lane's (`__match_any_sync`, sm_70+).
    ///
    /// # Safety
    /// As [`shfl_idx`].
    #[track_caller]
    pub unsafe fn match_any(mask: u32, value: u32) -> u32 {
        collective("warp::match_any", WarpOp::MatchAny(false), mask, value as u128, 0, 0).0 as u32
    }

    /// [`match_any`] for 64-bit values.
    ///
    /// # Safety
    /// As [`shfl_idx`].
    #[track_caller]
    pub unsafe fn match_any_u64(mask: u32, value: u64) -> u32 {
        collective("warp::match_any_u64", WarpOp::MatchAny(true), mask, value as u128, 0, 0).0 as u32
    }

    /// `Some(mask)` if every lane of `mask` holds the same `value`, else `None`
    /// (`__match_all_sync`, sm_70+).
    ///
    /// # Safety
    /// As [`shfl_idx`].
    #[track_caller]
    pub unsafe fn match_all(mask: u32, value: u32) -> Option<u32> {
        let (m, ok) = collective("warp::match_all", WarpOp::MatchAll(false), mask, value as u128, 0, 0);
        ok.then_some(m as u32)
    }

    /// [`match_all`] for 64-bit values.
    ///
    /// # Safety
    /// As [`shfl_idx`].
    #[track_caller]
    pub unsafe fn match_all_u64(mask: u32, value: u64) -> Option<u32> {
        let (m, ok) = collective("warp::match_all_u64", WarpOp::MatchAll(true), mask, value as u128, 0, 0);
        ok.then_some(m as u32)
    }

    macro_rules! redux {
        ($($(#[$doc:meta])* $name:ident, $t:ty, $op:ident;)*) => {$(
            $(#[$doc])*
            ///
            /// On the device these need an sm_80+ build; on the CPU they always exist.
            ///
            /// # Safety
            /// As [`shfl_idx`].
            #[track_caller]
            pub unsafe fn $name(mask: u32, value: $t) -> $t {
                collective(concat!("warp::", stringify!($name)), WarpOp::Redux(Redux::$op), mask, value as u32 as u128, 0, 0).0
                    as u32 as $t
            }
        )*};
    }

    redux! {
        /// The sum over the lanes of `mask` (`__reduce_add_sync`, sm_80+), in every lane.
        reduce_add_u32, u32, AddU32;
        /// The sum over the lanes of `mask` (`__reduce_add_sync`, sm_80+), in every lane.
        reduce_add_i32, i32, AddU32;
        /// The minimum over the lanes of `mask` (`__reduce_min_sync`, sm_80+).
        reduce_min_u32, u32, MinU32;
        /// The minimum over the lanes of `mask` (`__reduce_min_sync`, sm_80+).
        reduce_min_i32, i32, MinI32;
        /// The maximum over the lanes of `mask` (`__reduce_max_sync`, sm_80+).
        reduce_max_u32, u32, MaxU32;
        /// The maximum over the lanes of `mask` (`__reduce_max_sync`, sm_80+).
        reduce_max_i32, i32, MaxI32;
        /// Bitwise and over the lanes of `mask` (`__reduce_and_sync`, sm_80+).
        reduce_and_u32, u32, And;
        /// Bitwise or over the lanes of `mask` (`__reduce_or_sync`, sm_80+).
        reduce_or_u32, u32, Or;
        /// Bitwise xor over the lanes of `mask` (`__reduce_xor_sync`, sm_80+).
        reduce_xor_u32, u32, Xor;
    }

    /// The sum of `value` over all 32 lanes, in every lane (a butterfly of
    /// five `shfl.sync.bfly`; the order of the additions is fixed, so the
    /// result is the same in every lane and from run to run, and on the CPU
    /// bitwise the GPU's).
    ///
    /// # Safety
    /// All 32 lanes of the warp execute this call (convergence contract with
    /// `FULL_MASK`).
    #[track_caller]
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
}

#[cfg(not(target_arch = "nvptx64"))]
pub use imp::*;
