//! The warp's rendezvous on the CPU (the CPU side of `warp`, and of every later
//! warp-level family): a `*.sync` operation, with PTX's rules for the member
//! mask, and `__activemask`.
//!
//! A lane calling a collective with `mask` deposits, in its slot of the block's
//! [`Warps`], the operation, its mask and pointers to its input and its output
//! (both on its own stack, which stays put while it waits), and waits until
//! every **non-exited** lane of `mask` has arrived at the same operation with the
//! same mask (PTX, sm_70+: "wait until all non-exited threads corresponding to
//! membermask have executed" it); lanes of a partial last warp that do not
//! exist count as exited. The last lane to arrive computes every lane's output
//! ([`Collective::complete`]). Groups with different masks (divergent branches)
//! complete independently. A lane whose group can never complete (a lane of the
//! mask waits at a block barrier or in another collective) is reported as a
//! deadlock; a calling lane that is not in its own mask is a panic (undefined in
//! PTX).
//!
//! A collective is any type implementing [`Collective`], with inputs and outputs
//! of any size: the warp's shuffles, votes, `match`, `redux` and `__syncwarp`
//! ([`WarpOp`]) are one; `mma.sync` (4 + 2 + 4 registers in, 4 out per lane) and
//! `ldmatrix` will be others, with no change here.

use core::any::TypeId;
use core::cell::Cell;
use core::mem::MaybeUninit;
use std::format;
use std::panic::Location;
use std::string::{String, ToString};
use std::vec::Vec;

use std::boxed::Box;

use sluice_host::{CheckKind, CheckReport};

use crate::cpu::block::{current, suspend, Block, Launch, Local, LocalKey, Rendezvous, Wait};
use crate::cpu::check;
use crate::spec::warp::{shfl_source, Redux, ShflMode};

/// A warp-synchronous operation on the CPU: the lanes of a group each bring an
/// [`In`](Collective::In) and get an [`Out`](Collective::Out).
pub(crate) trait Collective: Copy + 'static {
    /// What each lane brings.
    type In;
    /// What each lane gets.
    type Out;

    /// The operation, as a number: lanes complete a group only with the same
    /// type, key and mask.
    fn key(self) -> u64;

    /// The operation of `key`.
    fn from_key(key: u64) -> Self;

    /// How reports name the operation.
    fn name(self) -> &'static str;

    /// Every member's output: `members` are the lanes of the group (the
    /// non-exited lanes of `mask`), `input(l)` is lane `l`'s input, and
    /// `output(l, v)` gives lane `l` its output (once per member).
    fn complete(
        self,
        mask: u32,
        members: u32,
        input: &dyn Fn(u32) -> *const Self::In,
        output: &mut dyn FnMut(u32, Self::Out),
    );

    /// Whether completing it orders memory among its members, as `bar.warp.sync` does
    /// (PTX gives shuffles, votes, `match` and `redux` no memory ordering).
    fn orders_memory(self) -> bool {
        false
    }

    /// A member whose output PTX leaves undefined because it reads a lane outside the
    /// group (a shuffle's source that has exited or is not in the mask): `(member,
    /// source)`. The checking mode reports it.
    fn undefined_read(self, members: u32, input: &dyn Fn(u32) -> *const Self::In) -> Option<(u32, u32)> {
        let _ = (members, input);
        None
    }
}

/// `complete_group::<C>` for the collective type in a slot: computes a group's outputs,
/// and returns what [`Collective::undefined_read`] found.
type CompleteFn = unsafe fn(&Warps, u32, u32) -> Option<(u32, u32)>;

/// One lane's part in a collective in flight (meaningful while its bit in
/// [`Warps::waiting`] is set).
struct Slot {
    ty: Cell<TypeId>,
    key: Cell<u64>,
    mask: Cell<u32>,
    name: Cell<&'static str>,
    /// The lane's `C::In` and `MaybeUninit<C::Out>`, on its stack.
    input: Cell<*const ()>,
    output: Cell<*mut ()>,
    /// `complete_group::<C>`.
    complete: Cell<CompleteFn>,
    /// Where the lane called it.
    site: Cell<Option<&'static Location<'static>>>,
    /// `C::orders_memory`.
    orders: Cell<bool>,
}

/// The warps of one block: each lane's slot, and per warp the lanes waiting in a
/// collective; each lane's last `active_mask`.
pub(crate) struct Warps {
    slots: Vec<Slot>,
    waiting: Vec<Cell<u32>>,
    active: Vec<Cell<u32>>,
}

/// A slot's `complete` before its first collective (never called: a slot is
/// read only while its lane waits, after it wrote its slot).
unsafe fn no_collective(_: &Warps, _: u32, _: u32) -> Option<(u32, u32)> {
    None
}

impl Local for Warps {
    fn new(launch: &Launch) -> Warps {
        let size = launch.block.volume() as usize;
        Warps {
            slots: (0..size)
                .map(|_| Slot {
                    ty: Cell::new(TypeId::of::<()>()),
                    key: Cell::new(0),
                    mask: Cell::new(0),
                    name: Cell::new(""),
                    input: Cell::new(core::ptr::null()),
                    output: Cell::new(core::ptr::null_mut()),
                    complete: Cell::new(no_collective),
                    site: Cell::new(None),
                    orders: Cell::new(false),
                })
                .collect(),
            waiting: (0..size.div_ceil(32)).map(|_| Cell::new(0)).collect(),
            active: (0..size).map(|_| Cell::new(0)).collect(),
        }
    }

    fn reset(&mut self) {
        for w in &self.waiting {
            w.set(0);
        }
    }
}

static WARPS: LocalKey<Warps> = LocalKey::new();

/// Lanes parked in a collective (tag unused).
struct CollectiveWait {
    name: &'static str,
}

static COLLECTIVE: CollectiveWait = CollectiveWait { name: "warp collective" };

/// Lanes parked in `active_mask` (tag unused).
struct ActiveMaskWait {
    name: &'static str,
}

static ACTIVE_MASK: ActiveMaskWait = ActiveMaskWait { name: "active_mask" };

/// Runs collective `op` for the calling lane with `input`; returns its output.
#[track_caller]
pub(crate) fn collective<C: Collective>(what: &'static str, op: C, mask: u32, input: C::In) -> C::Out {
    let site = Location::caller();
    let ctx = current(what);
    let lane = ctx.rank % 32;
    let block = ctx.block();
    if mask & (1 << lane) == 0 {
        if block.checker().is_some() {
            let me = check::access(
                block,
                ctx.rank,
                Some(site),
                format!("calls {} with mask {mask:#010x}, which does not name its own lane {lane}", op.name()),
            );
            let location = format!("warp {} {} (mask {mask:#010x})", ctx.rank / 32, op.name());
            check::fail(block, check::report(block, CheckKind::DivergentWarp, location, me, None));
        }
        panic!("{what}: lane {lane} is not in its own mask {mask:#010x} (undefined in PTX)");
    }
    if block.checker().is_some() {
        check::clocks(block).saw(ctx.rank, site);
    }
    let warps = WARPS.get(block);
    let mut output = MaybeUninit::<C::Out>::uninit();
    let slot = &warps.slots[ctx.rank as usize];
    slot.ty.set(TypeId::of::<C>());
    slot.key.set(op.key());
    slot.mask.set(mask);
    slot.name.set(op.name());
    slot.input.set(&input as *const C::In as *const ());
    slot.output.set(output.as_mut_ptr() as *mut ());
    slot.complete.set(complete_group::<C>);
    slot.site.set(Some(site));
    slot.orders.set(op.orders_memory());
    let waiting = &warps.waiting[(ctx.rank / 32) as usize];
    if block.checker().is_some() {
        mixed(block, warps, ctx.rank, waiting.get());
    }
    waiting.set(waiting.get() | 1 << lane);
    if !try_complete(block, warps, ctx.rank, Some(ctx.rank)) {
        suspend(ctx, Wait::Parked(&COLLECTIVE, 0), site);
    }
    // SAFETY: the group completed (by this lane above, or by the lane or the
    // scheduler that released it: a lane waiting here is resumed only after its
    // group's `complete_group` wrote every member's output), so `output` holds
    // this lane's `C::Out`. (An abandoned block unwinds out of `suspend` instead.)
    unsafe { output.assume_init() }
}

/// In a checked launch: lane `rank` (its slot written) names in its mask a lane that
/// waits in another operation, or with another mask, whose own mask names `rank`: each
/// waits for the other to take part in its own operation (CUDA's rule: every non-exited
/// lane of the mask executes the same operation with the same mask). Reported as a
/// divergent warp operation.
fn mixed(block: &Block, warps: &Warps, rank: u32, waiting: u32) {
    let me = &warps.slots[rank as usize];
    let (ty, key, mask) = (me.ty.get(), me.key.get(), me.mask.get());
    let base = rank - rank % 32;
    let lane = rank % 32;
    let other = (0..32).filter(|&l| waiting & mask & (1 << l) != 0).find(|&l| {
        let t = &warps.slots[(base + l) as usize];
        t.mask.get() & (1 << lane) != 0 && (t.ty.get() != ty || t.key.get() != key || t.mask.get() != mask)
    });
    if let Some(l) = other {
        let t = &warps.slots[(base + l) as usize];
        let first = check::access(
            block,
            base + l,
            t.site.get(),
            format!("waits in {} with mask {:#010x}", t.name.get(), t.mask.get()),
        );
        let second =
            check::access(block, rank, me.site.get(), format!("calls {} with mask {mask:#010x}", me.name.get()));
        let location = format!("warp {}: two operations or masks name each other's lanes", rank / 32);
        check::fail(block, check::report(block, CheckKind::DivergentWarp, location, first, Some(second)));
    }
}

/// Computes the outputs of the group of lanes `members` of the warp at rank
/// `base`, whose slots all hold a `C` (same type, key and mask).
///
/// Returns what [`Collective::undefined_read`] found.
///
/// # Safety
///
/// Every member's slot was written by `collective::<C>` and the member still
/// waits in it (its input and output live on its suspended, or running, stack).
unsafe fn complete_group<C: Collective>(warps: &Warps, base: u32, members: u32) -> Option<(u32, u32)> {
    let first = &warps.slots[(base + members.trailing_zeros()) as usize];
    let (op, mask) = (C::from_key(first.key.get()), first.mask.get());
    let input = |l: u32| warps.slots[(base + l) as usize].input.get() as *const C::In;
    let mut output = |l: u32, v: C::Out| {
        // SAFETY: lane `l` is a member (the collective's contract), so its slot's
        // output points to its live `MaybeUninit<C::Out>`; written once.
        unsafe { (warps.slots[(base + l) as usize].output.get() as *mut C::Out).write(v) }
    };
    op.complete(mask, members, &input, &mut output);
    op.undefined_read(members, &input)
}

/// Completes the group of the waiting lane `rank` if every non-exited lane
/// of its mask has arrived with the same operation and mask: computes every
/// member's result and releases them (except `current`, which goes on).
fn try_complete(block: &Block, warps: &Warps, rank: u32, current: Option<u32>) -> bool {
    let me = &warps.slots[rank as usize];
    let (ty, key, mask) = (me.ty.get(), me.key.get(), me.mask.get());
    let base = rank - rank % 32;
    let waiting = &warps.waiting[(rank / 32) as usize];
    // The non-exited lanes of the mask must all be waiting in a collective
    // (a bit test, so that an arrival costs O(1) until the last one) ...
    let members = mask & !block.exited_lanes(rank / 32);
    if waiting.get() & members != members {
        return false;
    }
    // ... and in this one, with this mask.
    for l in 0..32 {
        if members & (1 << l) != 0 {
            let t = &warps.slots[(base + l) as usize];
            if t.ty.get() != ty || t.key.get() != key || t.mask.get() != mask {
                return false;
            }
        }
    }
    waiting.set(waiting.get() & !members);
    // SAFETY: every member waits in a collective of the same type, key and mask
    // (checked above), whose slot it wrote; `complete` is that type's.
    let undefined = unsafe { (me.complete.get())(warps, base, members) };
    if block.checker().is_some() {
        if let Some((reader, source)) = undefined {
            let op = me.name.get();
            let r = &warps.slots[(base + reader) as usize];
            let first = check::access(
                block,
                base + reader,
                r.site.get(),
                format!("reads lane {source} in {op} with mask {mask:#010x}"),
            );
            let name = format!("warp {} {op} (mask {mask:#010x})", rank / 32);
            let (location, second) = if base + source >= block.size {
                (format!("{name}: lane {source} does not exist (the block has {} threads)", block.size), None)
            } else {
                let t = &block.threads[(base + source) as usize];
                let (what, site) = if block.exited_lanes(rank / 32) & (1 << source) != 0 {
                    ("had returned from the kernel: the value read is undefined", None)
                } else {
                    ("does not take part (not in the mask): the value read is undefined", t.site.get())
                };
                (name, Some(check::access(block, base + source, site, what.to_string())))
            };
            check::fail(block, check::report(block, CheckKind::DivergentWarp, location, first, second));
            return true;
        }
        if me.orders.get() {
            check::clocks(block).warp_sync(base, members);
        }
    }
    for l in 0..32 {
        if members & (1 << l) != 0 && Some(base + l) != current {
            block.make_ready(base + l);
        }
    }
    true
}

impl Rendezvous for CollectiveWait {
    fn name(&self) -> &'static str {
        self.name
    }

    /// `warp W OP (mask M, waiting for lane L (at barrier 0), ...)`.
    fn describe(&self, block: &Block, rank: u32, _tag: u32) -> String {
        let warps = WARPS.get(block);
        let me = &warps.slots[rank as usize];
        let (ty, key, mask) = (me.ty.get(), me.key.get(), me.mask.get());
        let base = rank - rank % 32;
        let missing: Vec<String> = (0..32)
            .filter(|&l| mask & (1 << l) != 0 && base + l < block.size)
            .filter_map(|l| {
                let t = &block.threads[(base + l) as usize];
                let slot = &warps.slots[(base + l) as usize];
                match t.state.get() {
                    Wait::Exited => None,
                    s if s.parked_in(&COLLECTIVE).is_some()
                        && slot.ty.get() == ty
                        && slot.key.get() == key
                        && slot.mask.get() == mask =>
                    {
                        None
                    }
                    Wait::Parked(at, tag) => Some(format!("lane {l} ({})", at.label(block, base + l, tag))),
                    s => Some(format!("lane {l} ({s:?})")),
                }
            })
            .collect();
        let waits = match missing.len() {
            0 => String::new(),
            n if n <= 4 => format!(", waiting for {}", missing.join(", ")),
            n => format!(", waiting for {} and {} more lanes", missing[..3].join(", "), n - 3),
        };
        format!("warp {} {} (mask {mask:#010x}{waits})", rank / 32, me.name.get())
    }

    fn label(&self, block: &Block, rank: u32, _tag: u32) -> String {
        let slot = &WARPS.get(block).slots[rank as usize];
        format!("in {} with mask {:#010x}", slot.name.get(), slot.mask.get())
    }

    /// A group that cannot complete: a lane its mask names has not exited and waits
    /// elsewhere (a barrier, another operation or mask).
    fn diagnose(&self, block: &Block) -> Option<Box<CheckReport>> {
        let warps = WARPS.get(block);
        let parked = |t: u32| block.threads[t as usize].state.get().parked_in(&COLLECTIVE).is_some();
        let rank = (0..block.size).find(|&t| parked(t))?;
        let me = &warps.slots[rank as usize];
        let (ty, key, mask) = (me.ty.get(), me.key.get(), me.mask.get());
        let base = rank - rank % 32;
        let op = me.name.get();
        let missing = (0..32).filter(|&l| mask & (1 << l) != 0 && base + l < block.size).find(|&l| {
            let t = &block.threads[(base + l) as usize];
            let slot = &warps.slots[(base + l) as usize];
            let here = parked(base + l) && slot.ty.get() == ty && slot.key.get() == key && slot.mask.get() == mask;
            !(matches!(t.state.get(), Wait::Exited) || here)
        })?;
        let first = check::access(block, rank, me.site.get(), format!("waits in {op} with mask {mask:#010x}"));
        let t = &block.threads[(base + missing) as usize];
        let what = match t.state.get() {
            Wait::Parked(at, tag) => format!("never takes part: it waits {}", at.label(block, t.rank, tag)),
            _ => "never takes part".to_string(),
        };
        let second = check::access(block, t.rank, t.site.get(), what);
        let location = format!("warp {} {op} (mask {mask:#010x}), lane {missing} missing", rank / 32);
        Some(check::report(block, CheckKind::DivergentWarp, location, first, Some(second)))
    }

    fn release_after_exits(&self, block: &Block) -> bool {
        let warps = WARPS.get(block);
        let mut progressed = false;
        for t in 0..block.size {
            if block.threads[t as usize].state.get().parked_in(&COLLECTIVE).is_some()
                && try_complete(block, warps, t, None)
            {
                progressed = true;
            }
        }
        progressed
    }
}

/// `__activemask()`: waits until no thread of the block can run, then
/// returns the lanes of this warp waiting here at the same call site.
#[track_caller]
pub(crate) fn active_mask(what: &'static str) -> u32 {
    let site = Location::caller();
    let ctx = current(what);
    suspend(ctx, Wait::Parked(&ACTIVE_MASK, 0), site);
    WARPS.get(ctx.block()).active[ctx.rank as usize].get()
}

impl Rendezvous for ActiveMaskWait {
    fn name(&self) -> &'static str {
        self.name
    }

    fn describe(&self, _block: &Block, _rank: u32, _tag: u32) -> String {
        "active_mask".into()
    }

    fn label(&self, _block: &Block, _rank: u32, _tag: u32) -> String {
        "in active_mask".into()
    }

    /// In each warp, the lanes waiting in `active_mask` at the same call site
    /// form the active set each of them gets (the lanes that reached that
    /// point together before everything else blocked).
    fn release_when_stuck(&self, block: &Block) -> bool {
        let warps = WARPS.get(block);
        let here = |t: u32| block.threads[t as usize].state.get().parked_in(&ACTIVE_MASK).is_some();
        let mut progressed = false;
        for t in 0..block.size {
            if !here(t) {
                continue;
            }
            let base = t - t % 32;
            let site = block.threads[t as usize].site.get();
            let group: u32 = (0..32)
                .filter(|&l| {
                    let k = base + l;
                    k < block.size && here(k) && block.threads[k as usize].site.get() == site
                })
                .fold(0, |m, l| m | 1 << l);
            for l in 0..32 {
                if group & (1 << l) != 0 {
                    warps.active[(base + l) as usize].set(group);
                    block.make_ready(base + l);
                }
            }
            progressed = true;
        }
        progressed
    }
}

/// What a shuffle from a lane outside the group reads on the CPU (PTX: undefined).
pub(crate) const UNDEFINED_BITS: u128 = u128::MAX;

/// The warp family's collectives; lanes complete a group only with the same one.
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

/// What a lane brings to a [`WarpOp`]: its value (up to 128 bits) and a
/// shuffle's operands `b` and `c`.
pub(crate) struct Operands {
    pub(crate) value: u128,
    pub(crate) b: u32,
    pub(crate) c: u32,
}

/// The operations in the order of their keys (`key` and `from_key`).
const SHFL_MODES: [ShflMode; 4] = [ShflMode::Idx, ShflMode::Up, ShflMode::Down, ShflMode::Xor];
const REDUX_OPS: [Redux; 8] =
    [Redux::AddU32, Redux::MinU32, Redux::MinI32, Redux::MaxU32, Redux::MaxI32, Redux::And, Redux::Or, Redux::Xor];

impl Collective for WarpOp {
    type In = Operands;
    /// The lane's result and flag (the shuffle's in-range predicate,
    /// `match_all`'s success).
    type Out = (u128, bool);

    fn key(self) -> u64 {
        match self {
            WarpOp::Shfl(ShflMode::Idx) => 0,
            WarpOp::Shfl(ShflMode::Up) => 1,
            WarpOp::Shfl(ShflMode::Down) => 2,
            WarpOp::Shfl(ShflMode::Xor) => 3,
            WarpOp::Any => 4,
            WarpOp::All => 5,
            WarpOp::Ballot => 6,
            WarpOp::MatchAny(wide) => 7 + wide as u64,
            WarpOp::MatchAll(wide) => 9 + wide as u64,
            WarpOp::Redux(Redux::AddU32) => 11,
            WarpOp::Redux(Redux::MinU32) => 12,
            WarpOp::Redux(Redux::MinI32) => 13,
            WarpOp::Redux(Redux::MaxU32) => 14,
            WarpOp::Redux(Redux::MaxI32) => 15,
            WarpOp::Redux(Redux::And) => 16,
            WarpOp::Redux(Redux::Or) => 17,
            WarpOp::Redux(Redux::Xor) => 18,
            WarpOp::Sync => 19,
        }
    }

    fn from_key(key: u64) -> WarpOp {
        match key {
            0..=3 => WarpOp::Shfl(SHFL_MODES[key as usize]),
            4 => WarpOp::Any,
            5 => WarpOp::All,
            6 => WarpOp::Ballot,
            7 | 8 => WarpOp::MatchAny(key == 8),
            9 | 10 => WarpOp::MatchAll(key == 10),
            11..=18 => WarpOp::Redux(REDUX_OPS[key as usize - 11]),
            _ => WarpOp::Sync,
        }
    }

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

    fn complete(
        self,
        mask: u32,
        members: u32,
        input: &dyn Fn(u32) -> *const Operands,
        output: &mut dyn FnMut(u32, (u128, bool)),
    ) {
        // SAFETY: `complete` is called with the inputs of the members only,
        // each live on its lane's stack until the lane is released.
        let lane = |l: u32| unsafe { &*input(l) };
        let mut each = |f: &dyn Fn(u32, &Operands) -> (u128, bool)| {
            for l in 0..32 {
                if members & (1 << l) != 0 {
                    output(l, f(l, lane(l)));
                }
            }
        };
        let votes = (0..32).filter(|&l| members & (1 << l) != 0 && lane(l).value != 0).fold(0u32, |m, l| m | 1 << l);
        match self {
            WarpOp::Shfl(mode) => each(&|l, t| {
                let (src, in_range) = shfl_source(mode, l, t.b, t.c);
                let v = if members & (1 << src) != 0 { lane(src).value } else { UNDEFINED_BITS };
                (v, in_range)
            }),
            WarpOp::Any => each(&|_, _| ((votes != 0) as u128, false)),
            WarpOp::All => each(&|_, _| ((votes == members) as u128, false)),
            WarpOp::Ballot => each(&|_, _| (votes as u128, false)),
            WarpOp::MatchAny(_) => each(&|_, t| {
                let same = (0..32)
                    .filter(|&k| members & (1 << k) != 0 && lane(k).value == t.value)
                    .fold(0u32, |m, k| m | 1 << k);
                (same as u128, false)
            }),
            WarpOp::MatchAll(_) => {
                let first = lane(members.trailing_zeros()).value;
                let all = (0..32).all(|k| members & (1 << k) == 0 || lane(k).value == first);
                each(&|_, _| if all { (mask as u128, true) } else { (0, false) })
            }
            WarpOp::Redux(r) => {
                let v = r.reduce((0..32).filter(|&k| members & (1 << k) != 0).map(|k| lane(k).value as u32));
                each(&|_, _| (v as u128, false))
            }
            WarpOp::Sync => each(&|_, _| (0, false)),
        }
    }

    fn orders_memory(self) -> bool {
        self == WarpOp::Sync
    }

    fn undefined_read(self, members: u32, input: &dyn Fn(u32) -> *const Operands) -> Option<(u32, u32)> {
        let WarpOp::Shfl(mode) = self else { return None };
        (0..32).filter(|&l| members & (1 << l) != 0).find_map(|l| {
            // SAFETY: `l` is a member: its input lives on its stack until it is released.
            let t = unsafe { &*input(l) };
            let (src, _) = shfl_source(mode, l, t.b, t.c);
            (members & (1 << src) == 0).then_some((l, src))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_warp_op_has_its_own_key() {
        let mut ops: Vec<WarpOp> = SHFL_MODES.iter().map(|&m| WarpOp::Shfl(m)).collect();
        ops.extend([WarpOp::Any, WarpOp::All, WarpOp::Ballot, WarpOp::Sync]);
        ops.extend([false, true].iter().flat_map(|&w| [WarpOp::MatchAny(w), WarpOp::MatchAll(w)]));
        ops.extend(REDUX_OPS.iter().map(|&r| WarpOp::Redux(r)));
        let mut keys: Vec<u64> = ops.iter().map(|op| op.key()).collect();
        for op in &ops {
            assert_eq!(WarpOp::from_key(op.key()), *op);
        }
        keys.sort_unstable();
        keys.dedup();
        assert_eq!(keys.len(), ops.len());
    }
}
