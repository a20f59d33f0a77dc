//! Warp collectives on the CPU: shuffles, votes, match, `redux`, `__syncwarp`
//! and `__activemask`, with PTX's rules for the member mask.
//!
//! A lane calling a `*.sync` operation with `mask` deposits its value and
//! operands in its slot and waits until every **non-exited** lane of `mask`
//! has arrived at an operation of the same kind with the same mask (PTX, sm_70+:
//! "wait until all non-exited threads corresponding to membermask have
//! executed" it); lanes of a partial last warp that do not exist count as
//! exited. The last lane to arrive computes every lane's result. Groups with
//! different masks (divergent branches) complete independently. A lane whose
//! group can never complete (a lane of the mask waits at a block barrier or
//! in another collective) is reported as a deadlock; a calling lane that is
//! not in its own mask is a panic (undefined in PTX).
//!
//! What PTX leaves undefined and the CPU fixes: a shuffle whose source lane is
//! not in the group reads all-one bits ([`UNDEFINED_BITS`], NaN for floats),
//! so that the mistake shows.

use std::format;
use std::panic::Location;
use std::string::String;

use super::block::{self, Block, ThreadCtx, Wait};
use crate::spec::warp::{shfl_source, Redux, ShflMode};

/// What a shuffle from a lane outside the group reads on the CPU (PTX: undefined).
pub(crate) const UNDEFINED_BITS: u128 = u128::MAX;

/// The kind of a warp collective; lanes complete a group only with the same kind.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum WarpOp {
    Shfl(ShflMode),
    Any,
    All,
    Ballot,
    /// `match.any`, 32- or 64-bit.
    MatchAny(bool),
    /// `match.all`, 32- or 64-bit.
    MatchAll(bool),
    Redux(Redux),
    /// `bar.warp.sync`.
    Sync,
}

impl WarpOp {
    fn name(self) -> &'static str {
        match self {
            WarpOp::Shfl(ShflMode::Idx) => "shfl_idx",
            WarpOp::Shfl(ShflMode::Up) => "shfl_up",
            WarpOp::Shfl(ShflMode::Down) => "shfl_down",
            WarpOp::Shfl(ShflMode::Xor) => "shfl_xor",
            WarpOp::Any => "any",
            WarpOp::All => "all",
            WarpOp::Ballot => "ballot",
            WarpOp::MatchAny(_) => "match_any",
            WarpOp::MatchAll(_) => "match_all",
            WarpOp::Redux(_) => "reduce",
            WarpOp::Sync => "sync_warp",
        }
    }
}

/// Runs one warp collective for the calling lane: `value` (up to 128 bits),
/// operands `b` and `c` (shuffles). Returns the lane's result and flag (the
/// shuffle's in-range predicate, `match_all`'s success).
#[track_caller]
pub(crate) fn collective(what: &'static str, op: WarpOp, mask: u32, value: u128, b: u32, c: u32) -> (u128, bool) {
    let site = Location::caller();
    let ctx = block::current(what);
    let lane = ctx.rank % 32;
    if mask & (1 << lane) == 0 {
        panic!("{what}: lane {lane} is not in its own mask {mask:#010x} (undefined in PTX)");
    }
    ctx.op.set(op);
    ctx.mask.set(mask);
    ctx.value.set(value);
    ctx.b.set(b);
    ctx.c.set(c);
    ctx.state.set(Wait::Warp);
    let block = ctx.block();
    let waiting = &block.warp_waiting[(ctx.rank / 32) as usize];
    waiting.set(waiting.get() | 1 << lane);
    if try_complete(block, ctx.rank, Some(ctx.rank)) {
        ctx.state.set(Wait::Running);
    } else {
        block::suspend(ctx, Wait::Warp, site);
    }
    (ctx.out.get(), ctx.out_flag.get())
}

/// Completes the group of the waiting lane `rank` if every non-exited lane
/// of its mask has arrived with the same operation and mask: computes every
/// member's result and releases them (except `current`, which goes on).
pub(crate) fn try_complete(block: &Block, rank: u32, current: Option<u32>) -> bool {
    let me = &block.threads[rank as usize];
    let (op, mask) = (me.op.get(), me.mask.get());
    let base = rank - rank % 32;
    let (waiting, exited) = (&block.warp_waiting[(rank / 32) as usize], block.warp_exited[(rank / 32) as usize].get());
    // The non-exited lanes of the mask must all be waiting in a collective
    // (a bit test, so that an arrival costs O(1) until the last one) ...
    let members = mask & !exited;
    if waiting.get() & members != members {
        return false;
    }
    // ... and in this one, with this mask.
    for l in 0..32 {
        if members & (1 << l) != 0 {
            let t = &block.threads[(base + l) as usize];
            if t.op.get() != op || t.mask.get() != mask {
                return false;
            }
        }
    }
    waiting.set(waiting.get() & !members);
    let lane = |l: u32| &block.threads[(base + l) as usize];
    let each = |f: &dyn Fn(u32, &ThreadCtx) -> (u128, bool)| {
        for l in 0..32 {
            if members & (1 << l) != 0 {
                let t = lane(l);
                let (out, flag) = f(l, t);
                t.out.set(out);
                t.out_flag.set(flag);
            }
        }
    };
    let votes = (0..32).filter(|&l| members & (1 << l) != 0 && lane(l).value.get() != 0).fold(0u32, |m, l| m | 1 << l);
    match op {
        WarpOp::Shfl(mode) => each(&|l, t| {
            let (src, in_range) = shfl_source(mode, l, t.b.get(), t.c.get());
            let v = if members & (1 << src) != 0 { lane(src).value.get() } else { UNDEFINED_BITS };
            (v, in_range)
        }),
        WarpOp::Any => each(&|_, _| ((votes != 0) as u128, false)),
        WarpOp::All => each(&|_, _| ((votes == members) as u128, false)),
        WarpOp::Ballot => each(&|_, _| (votes as u128, false)),
        WarpOp::MatchAny(_) => each(&|_, t| {
            let same = (0..32)
                .filter(|&k| members & (1 << k) != 0 && lane(k).value.get() == t.value.get())
                .fold(0u32, |m, k| m | 1 << k);
            (same as u128, false)
        }),
        WarpOp::MatchAll(_) => {
            let first = lane(members.trailing_zeros()).value.get();
            let all = (0..32).all(|k| members & (1 << k) == 0 || lane(k).value.get() == first);
            each(&|_, _| if all { (mask as u128, true) } else { (0, false) })
        }
        WarpOp::Redux(r) => {
            let v = r.reduce((0..32).filter(|&k| members & (1 << k) != 0).map(|k| lane(k).value.get() as u32));
            each(&|_, _| (v as u128, false))
        }
        WarpOp::Sync => each(&|_, _| (0, false)),
    }
    for l in 0..32 {
        if members & (1 << l) != 0 && Some(base + l) != current {
            block.make_ready(base + l);
        }
    }
    true
}

/// Resolves `active_mask` when no thread of the block can run: in each warp,
/// the lanes waiting in `active_mask` at the same call site form the active
/// set each of them gets (the lanes that reached that point together before
/// everything else blocked). `true` if some lane was released.
pub(crate) fn resolve_active_masks(block: &Block) -> bool {
    let mut progressed = false;
    for t in 0..block.size {
        let me = &block.threads[t as usize];
        if me.state.get() != Wait::ActiveMask {
            continue;
        }
        let base = t - t % 32;
        let site = me.site.get();
        let group: u32 = (0..32)
            .filter(|&l| {
                let k = base + l;
                k < block.size && {
                    let o = &block.threads[k as usize];
                    o.state.get() == Wait::ActiveMask && o.site.get() == site
                }
            })
            .fold(0, |m, l| m | 1 << l);
        for l in 0..32 {
            if group & (1 << l) != 0 {
                let o = &block.threads[(base + l) as usize];
                o.out.set(group as u128);
                block.make_ready(base + l);
            }
        }
        progressed = true;
    }
    progressed
}

/// `__activemask()`: waits until no thread of the block can run, then
/// returns the lanes of this warp waiting here at the same call site.
#[track_caller]
pub(crate) fn active_mask(what: &'static str) -> u32 {
    let site = Location::caller();
    let ctx = block::current(what);
    block::suspend(ctx, Wait::ActiveMask, site);
    ctx.out.get() as u32
}

/// How a lane waiting in a warp collective is described in a deadlock report.
pub(crate) fn describe(block: &Block, ctx: &ThreadCtx) -> String {
    let (op, mask) = (ctx.op.get(), ctx.mask.get());
    let base = ctx.rank - ctx.rank % 32;
    let missing: std::vec::Vec<String> = (0..32)
        .filter(|&l| mask & (1 << l) != 0 && base + l < block.size)
        .filter_map(|l| {
            let t = &block.threads[(base + l) as usize];
            match t.state.get() {
                Wait::Exited => None,
                Wait::Warp if t.op.get() == op && t.mask.get() == mask => None,
                Wait::Warp => Some(format!("lane {l} (in {} with mask {:#010x})", t.op.get().name(), t.mask.get())),
                Wait::Barrier(id) => Some(format!("lane {l} (at barrier {id})")),
                Wait::ActiveMask => Some(format!("lane {l} (in active_mask)")),
                s => Some(format!("lane {l} ({s:?})")),
            }
        })
        .collect();
    let waits = match missing.len() {
        0 => String::new(),
        n if n <= 4 => format!(", waiting for {}", missing.join(", ")),
        n => format!(", waiting for {} and {} more lanes", missing[..3].join(", "), n - 3),
    };
    format!("warp {} {} (mask {mask:#010x}{waits})", ctx.rank / 32, op.name())
}
