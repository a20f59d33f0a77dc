//! Hopper's tensor-memory accelerator (TMA) and its `mbarrier`s, typed: a warp-specialised
//! pipeline in which one thread of a producer warpgroup copies tiles from global into shared
//! memory with `cp.async.bulk.tensor` and consumer warpgroups read them, each stage handed
//! over by a barrier phase — the design of CUTLASS's `KernelTmaWarpSpecializedCooperative`.
//!
//! | sluice | CUDA C++ / CUTLASS | PTX |
//! | --- | --- | --- |
//! | kernel parameter `a: TmaMatrix<E, R, C>` | `const __grid_constant__ CUtensorMap` made by `cuTensorMapEncodeTiled` | `.param .align 64 .b8 a[128]`, its address `cvta.param` |
//! | host: `view.row_major(rows, cols)?` as the argument | `cuTensorMapEncodeTiled(&map, .., SWIZZLE_128B, ..)` | — |
//! | [`WsPipeline::start`] | `PipelineTmaAsync` constructor, `fence_barrier_init`, `__syncthreads` | `mbarrier.init` × 2 per stage, `fence.mbarrier_init`, `bar.sync` |
//! | [`WsPipeline::run`] | the role dispatch, `cutlass::arch::warpgroup_reg_dealloc<40>` / `_alloc<232>` | `setmaxnreg.dec` / `.inc` |
//! | [`Producer::fill`] | `producer_acquire`, `copy(tma_load_a.with(barrier), ..)` | `mbarrier.try_wait.parity` (empty), `mbarrier.arrive.expect_tx` (full), `cp.async.bulk.tensor.2d..mbarrier::complete_tx::bytes` |
//! | [`Consumer::wait`] | `consumer_wait` | `mbarrier.try_wait.parity` (full) |
//! | dropping a [`Full`], or the MMA that read it retiring ([`crate::wgmma::Warpgroup::mma_async_full`]) | `consumer_release` | `mbarrier.arrive` (empty) |
//!
//! # The rules, and where the compiler enforces them
//!
//! | rule | how |
//! | --- | --- |
//! | a tile copied by TMA is not read before its barrier phase completes | the stage's tiles are reachable only through the [`Full`] that [`Consumer::wait`] returns after the phase completed |
//! | a stale phase is never awaited | the phases are not in the API: a [`Consumer`] and the [`Producer`] walk the stages and their parities in order |
//! | a stage is refilled only after every consumer is done with it | [`Producer::fill`] first waits for the stage's `empty` barrier, which every consumer thread arrives at when its [`Full`] is dropped — or, for a [`Full`] given to the warpgroup MMA, when the MMA group reading it has retired (`wgmma.wait_group`); a `Full` given away cannot be read |
//! | a stage's barrier expects exactly the bytes its copies bring | [`Producer::fill`] takes one box per tile of the stage, each the tile's shape and element type ([`TmaBox`], [`TmaLoads`]): the expected bytes are the stage's |
//! | the copies' destinations are swizzled as the tiles say | a box of `R × C` elements of `E` fills only a `Tile<E, Swizzled<R, C>>`, with `C × size_of::<E>() = 128` bytes (the TMA's and the warpgroup MMA's 128-byte swizzle); a box of another shape or element type does not compile |
//! | the tensor map describes memory the launch may read | it is made by the launch from a view bound to the launching lane ([`sluice_host::RowMajor`]); a kernel cannot make one (its constructor is `unsafe`, for `#[kernel]`'s entry) |
//!
//! What the types cannot see:
//!
//! * a [`Full`] forgotten (`mem::forget`), or a consumer that stops waiting while the
//!   producer has stages left to fill, or the reverse: the other side then waits for ever (a
//!   hang, never a wrong value; the CPU backend reports it as a deadlock naming the
//!   barrier). Every consumer thread must wait for, and release, every stage the producer
//!   fills. (Stages filled and never waited for are harmless: before the producer's
//!   warpgroup leaves [`WsPipeline::run`], its thread 0 waits for the copies of its last
//!   fills, so no copy into the block's shared memory outlives the block.)
//! * a second pipeline, or any other handle, on the same dynamic shared memory: call
//!   [`WsPipeline::start`] once per kernel, and beside no other user of the dynamic region
//!   (`async_copy::Pipeline`, `tile::dynamic_tiles`, `shared::dynamic_shared`) — on a GPU,
//!   two sets of handles to one stage, or stores over a live barrier, give wrong values or
//!   a hang. The CPU backend reports both: a barrier's bytes are the barrier's there, and a
//!   plain access to them, a copy landing on them, or a second barrier set up over them
//!   fails the launch with a message.
//!
//! # Hardware support
//!
//! TMA and `mbarrier` transactions: `sm_90` (H100, H200). The register budgets of
//! [`WsPipeline::run`] (`setmaxnreg`): `sm_90a`. A kernel using them is declared
//! `#[kernel(max_threads = N)]` with `N` its block size (so that ptxas knows the register
//! pool the budgets share).
//!
//! # On the CPU
//!
//! The barriers are modelled (arrivals, expected bytes, phases), a TMA copy writes its box,
//! swizzled, into the block's shared memory at the issue, and the checking mode sees the
//! order they give: the producer's copies happen before the reads of consumers that waited
//! for the stage, and the consumers' reads before the producer's next copies into it. A wait
//! that can never complete is a deadlock report.
//!
//! # Example (device code)
//!
//! ```ignore
//! use sluice_device::tma::{TmaMatrix, WsPipeline};
//! // a: TmaMatrix<bf16, 128, 64>, b: TmaMatrix<bf16, 64, 64> (kernel parameters)
//! type TA = Tile<bf16, Swizzled<128, 64>>;
//! type TB = Tile<bf16, Swizzled<64, 64>>;
//! let pipe = WsPipeline::<(TA, TB, TB), 4>::start();
//! pipe.run::<40, 232, _>(
//!     |mut p| {
//!         for kt in 0..k_tiles {
//!             p.fill((a.tile_at(row0, 64 * kt), b.tile_at(64 * kt, col0), b.tile_at(64 * kt, col0 + 64)));
//!         }
//!     },
//!     |mut c| {
//!         let wg = Warpgroup::this();
//!         let mut acc = WgAccum::<128>::zero().in_flight();
//!         for _ in 0..k_tiles {
//!             acc = wg.mma_async_full(acc, c.wait(), |(ta, tb0, tb1)| (ta, 64 * c.index(), [tb0, tb1]));
//!         }
//!         let acc = acc.wait();
//!         // ... wg.store(&mut out, &acc) ...
//!     },
//! );
//! ```

use core::marker::PhantomData;

use bytemuck::Pod;

use crate::spec::layout::Swizzled;
use crate::tile::{Tile, TileSet};

#[cfg_attr(target_arch = "nvptx64", path = "gpu.rs")]
#[cfg_attr(not(target_arch = "nvptx64"), path = "cpu.rs")]
mod imp;

/// A row-major matrix of `E` in global memory that the TMA reads in boxes of `R` rows of
/// `C` elements: a kernel parameter `a: TmaMatrix<E, R, C>`, made by the launch from a view
/// ([`sluice_host::RowMajor`]). The box is a tile's shape: `C × size_of::<E>()` is 128 bytes
/// (the 128-byte swizzle), `R` a multiple of 8 up to 256 (checked at compile time).
///
/// The tensor map (`CUtensorMap`) stays in the kernel's parameter memory, where the copies
/// read it (a grid constant); this names it. A kernel cannot make one.
pub struct TmaMatrix<E, const R: usize, const C: usize> {
    map: imp::MapRef,
    _elem: PhantomData<fn() -> E>,
}

/// The 128 bytes of a tensor map as a kernel's entry receives them (16-byte aligned: what
/// rustc passes; the linker aligns the PTX parameter to 64 bytes, as the TMA needs). Not an
/// API: `#[kernel]` lowers a [`TmaMatrix`] parameter to it.
#[doc(hidden)]
#[derive(Clone, Copy)]
#[repr(C, align(16))]
pub struct __TmaParam {
    /// The map's words (the CPU backend's description of the matrix on the host).
    pub words: [u64; 16],
}

impl<E: Pod, const R: usize, const C: usize> TmaMatrix<E, R, C> {
    const BOX: () = assert!(
        R >= 8 && R <= 256 && R.is_multiple_of(8) && C * core::mem::size_of::<E>() == 128,
        "TmaMatrix<E, R, C>: a box is R rows (a multiple of 8, up to 256) of C elements making 128 bytes (C = 64 for 16-bit elements)"
    );

    /// Bytes one box (one tile) brings.
    pub const BOX_BYTES: u32 = (R * C * core::mem::size_of::<E>()) as u32;

    /// The kernel's parameter: on the GPU the generic address of its tensor map in
    /// parameter memory, on the CPU the host's description. Not an API: `#[kernel]`'s
    /// entry makes it.
    ///
    /// # Safety
    ///
    /// `map` is the launch's own parameter of this type (its address, or its words), which
    /// the host made from a view the launch may read.
    #[doc(hidden)]
    #[inline(always)]
    pub unsafe fn __from_launch(map: imp::MapRef) -> Self {
        let () = Self::BOX;
        TmaMatrix { map, _elem: PhantomData }
    }

    /// The box of `R × C` elements whose first element is at `(row0, col0)`, for
    /// [`Producer::fill`]: elements outside the matrix arrive as zeros.
    #[inline(always)]
    pub fn tile_at(&self, row0: usize, col0: usize) -> TmaBox<'_, E, R, C> {
        TmaBox { map: self, x: coord(col0), y: coord(row0) }
    }
}

/// A coordinate as the TMA takes it (a signed 32-bit one): past `2^30` (beyond every matrix
/// the host lets a map describe) it stays `2^30`, wholly outside, so the box is zeros.
#[inline(always)]
fn coord(x: usize) -> i32 {
    if x > 1 << 30 {
        1 << 30
    } else {
        x as i32
    }
}

/// One box of a [`TmaMatrix`] ([`TmaMatrix::tile_at`]): what [`Producer::fill`] copies into
/// one `Tile<E, Swizzled<R, C>>` of a stage.
pub struct TmaBox<'m, E, const R: usize, const C: usize> {
    map: &'m TmaMatrix<E, R, C>,
    x: i32,
    y: i32,
}

mod sealed {
    /// Seals [`TmaLoad`](super::TmaLoad).
    pub trait Sealed<T> {}
    /// Seals [`TmaLoads`](super::TmaLoads): an impl elsewhere could claim any byte count,
    /// complete on any barrier, or read the stage while its copy is in flight.
    pub trait SealedLoads<S> {}
}

/// A box that fills tile `T` (its shape and element type). Sealed.
#[diagnostic::on_unimplemented(
    message = "a TMA box does not fill the stage's tile `{T}`",
    label = "a box of another shape or element type than the tile it would fill",
    note = "a box of a `TmaMatrix<E, R, C>` fills a `Tile<E, Swizzled<R, C>>`: give `fill` one `tile_at` box per tile of the stage, in the stage's order"
)]
pub trait TmaLoad<T>: sealed::Sealed<T> {
    /// Bytes it brings.
    #[doc(hidden)]
    const BYTES: u32;
    /// Issues the copy into `dst`, completing on `bar`.
    #[doc(hidden)]
    fn __issue(self, dst: &T, bar: u32, token: Token);
}

/// What only this module makes: the argument that keeps [`TmaLoad::__issue`] and
/// [`TmaLoads::__issue`] from being called outside [`Producer::fill`].
#[derive(Clone, Copy)]
pub struct Token(());

impl<E: Pod, const R: usize, const C: usize> sealed::Sealed<Tile<E, Swizzled<R, C>>> for TmaBox<'_, E, R, C> {}
impl<E: Pod, const R: usize, const C: usize> TmaLoad<Tile<E, Swizzled<R, C>>> for TmaBox<'_, E, R, C> {
    const BYTES: u32 = TmaMatrix::<E, R, C>::BOX_BYTES;
    #[inline(always)]
    #[track_caller]
    fn __issue(self, dst: &Tile<E, Swizzled<R, C>>, bar: u32, _token: Token) {
        // SAFETY: the map is a launch's tensor map (a kernel parameter, made by the host from
        // a view the launch reads); `dst` is a tile of a stage the producer owns (its `empty`
        // phase completed, no one reads it until the `full` phase this copy completes), 1024-
        // byte aligned (`WsPipeline::start`), of exactly the box's bytes; `bar` is the stage's
        // `full` barrier, which expects them (`Producer::fill`).
        unsafe { imp::load_2d(dst.addr(), &self.map.map, self.x, self.y, bar, (R, C)) }
    }
}

/// One box per tile of the stage `S`, in its order: a box, or a tuple of boxes for a
/// tuple of tiles. Sealed.
#[diagnostic::on_unimplemented(
    message = "these boxes do not fill the stage `{S}`",
    label = "one `TmaMatrix::tile_at` box per tile of the stage, each of the tile's shape and element type",
    note = "a box of a `TmaMatrix<E, R, C>` fills a `Tile<E, Swizzled<R, C>>`"
)]
pub trait TmaLoads<S>: sealed::SealedLoads<S> {
    /// Bytes the boxes bring: the stage's.
    #[doc(hidden)]
    const BYTES: u32;
    /// Issues every copy into the stage, completing on `bar`.
    #[doc(hidden)]
    fn __issue(self, stage: &S, bar: u32, token: Token);
}

impl<E: Pod, const R: usize, const C: usize> sealed::SealedLoads<Tile<E, Swizzled<R, C>>> for TmaBox<'_, E, R, C> {}
impl<E: Pod, const R: usize, const C: usize> TmaLoads<Tile<E, Swizzled<R, C>>> for TmaBox<'_, E, R, C> {
    const BYTES: u32 = TmaMatrix::<E, R, C>::BOX_BYTES;
    #[inline(always)]
    #[track_caller]
    fn __issue(self, stage: &Tile<E, Swizzled<R, C>>, bar: u32, token: Token) {
        TmaLoad::__issue(self, stage, bar, token);
    }
}

macro_rules! tuple_loads {
    ($(($($l:ident $t:ident $i:tt),+))*) => {$(
        impl<$($t, $l: TmaLoad<$t>),+> sealed::SealedLoads<($($t,)+)> for ($($l,)+) {}
        impl<$($t, $l: TmaLoad<$t>),+> TmaLoads<($($t,)+)> for ($($l,)+) {
            const BYTES: u32 = 0 $(+ $l::BYTES)+;
            #[inline(always)]
            #[track_caller]
            fn __issue(self, stage: &($($t,)+), bar: u32, token: Token) {
                $(self.$i.__issue(&stage.$i, bar, token);)+
            }
        }
    )*};
}
tuple_loads! {
    (L0 T0 0, L1 T1 1)
    (L0 T0 0, L1 T1 1, L2 T2 2)
    (L0 T0 0, L1 T1 1, L2 T2 2, L3 T3 3)
    (L0 T0 0, L1 T1 1, L2 T2 2, L3 T3 3, L4 T4 4)
    (L0 T0 0, L1 T1 1, L2 T2 2, L3 T3 3, L4 T4 4, L5 T5 5)
}

/// A ring of `STAGES` stages (2 to 8) of the tile set `S` in dynamic shared memory, each with a
/// `full` barrier (the producer's copies landed) and an `empty` one (every consumer thread
/// is done with it), for a warp-specialised block: warpgroup 0 produces, the others
/// consume. See the [module docs](self).
pub struct WsPipeline<S: TileSet, const STAGES: usize> {
    base: u32,
    bars: u32,
    _set: PhantomData<fn() -> S>,
}

#[cold]
#[track_caller]
fn wrong_block() -> ! {
    crate::dfail!("WsPipeline::start: the block is not whole warpgroups (128 threads), or has fewer than two (a producer and a consumer)")
}

#[cold]
#[track_caller]
fn too_many_registers() -> ! {
    crate::dfail!("WsPipeline::run: the register budgets ask for more registers than the block has (PRODUCER x 128 + CONSUMER x 128 x consumer warpgroups > the block's share of 65536): setmaxnreg would wait for ever")
}

impl<S: TileSet, const STAGES: usize> WsPipeline<S, STAGES> {
    /// The dynamic shared memory (bytes) a launch must give for this pipeline: the stages
    /// (1024-byte aligned, for the 128-byte swizzle) and their barriers.
    pub const SHARED_BYTES: usize = STAGES * S::BYTES + 1024 + 16 * STAGES;

    const SHAPE: () = {
        assert!(STAGES >= 2 && STAGES <= 8, "a WsPipeline has 2 to 8 stages");
        assert!(
            S::BYTES.is_multiple_of(1024),
            "a WsPipeline stage is whole 1024-byte blocks (tiles of 8-row multiples)"
        );
    };

    /// Places the ring at the start of the launch's dynamic shared memory (ends the kernel
    /// with a message if the launch gave less than [`SHARED_BYTES`](Self::SHARED_BYTES), or
    /// the block is not two or more whole warpgroups), sets up its barriers and passes a
    /// block barrier. Call it once, from every thread of the block.
    #[inline(always)]
    #[track_caller]
    pub fn start() -> Self {
        let () = Self::SHAPE;
        let threads = crate::thread::block_size();
        if !threads.is_multiple_of(128) || threads < 256 {
            wrong_block();
        }
        let region = crate::shared::dynamic_shared::<u8>().as_ptr().addr();
        let base = (region + 1023) & !1023;
        let bars = base + (STAGES * S::BYTES) as u32;
        crate::dassert!(
            (bars - region) as u64 + 16 * STAGES as u64 <= crate::shared::dynamic_shared_bytes() as u64,
            "WsPipeline::start: the launch's dynamic shared memory is smaller than WsPipeline::SHARED_BYTES"
        );
        if crate::thread::block_rank() == 0 {
            for s in 0..STAGES as u32 {
                // SAFETY: the barriers' 16 * STAGES bytes after the stages, inside the
                // dynamic region (checked above), 8-byte aligned, used by no one before the
                // block barrier below.
                unsafe {
                    imp::init::<S>(bars + 8 * s, 1);
                    imp::init::<S>(bars + 8 * (STAGES as u32 + s), threads - 128);
                }
            }
            imp::fence_init();
        }
        crate::sync::sync_threads();
        WsPipeline { base, bars, _set: PhantomData }
    }

    /// Runs this thread's role: `produce` in warpgroup 0 (the [`Producer`]), `consume` in
    /// the others (each a [`Consumer`]), with register budgets (sm_90a, `setmaxnreg`, as
    /// CUTLASS's `warpgroup_reg_dealloc` / `_alloc`): the producer's warpgroup keeps
    /// `PRODUCER` registers per thread, each consumer's gets `CONSUMER` (24 to 256, multiples
    /// of 8; the kernel ends with a message if they ask for more than the block has). The
    /// kernel is `#[kernel(max_threads = N)]`, `N` its block size, so that ptxas knows the
    /// register pool the budgets share; the host then launches it only with blocks of
    /// exactly `N` threads (`Error::LaunchBlockFixed` otherwise: another block size has
    /// another pool, in which an increase could wait for ever). Call it from every thread,
    /// right after [`start`](Self::start).
    #[inline(always)]
    #[track_caller]
    pub fn run<const PRODUCER: u32, const CONSUMER: u32, T>(
        self,
        produce: impl for<'r> FnOnce(Producer<'r, S, STAGES>) -> T,
        consume: impl FnOnce(Consumer<S, STAGES>) -> T,
    ) -> T {
        let () = const {
            assert!(
                PRODUCER >= 24 && PRODUCER <= 256 && PRODUCER.is_multiple_of(8),
                "WsPipeline::run: PRODUCER registers are 24 to 256, a multiple of 8"
            );
            assert!(
                CONSUMER >= 24 && CONSUMER <= 256 && CONSUMER.is_multiple_of(8),
                "WsPipeline::run: CONSUMER registers are 24 to 256, a multiple of 8"
            );
        };
        let threads = crate::thread::block_size();
        let consumers = threads / 128 - 1;
        // The block's registers: ptxas gives a kernel with setmaxnreg the most its
        // `max_threads` allow (a multiple of 8 per thread).
        let pool = (65536 / threads) / 8 * 8 * threads;
        if 128 * (PRODUCER + CONSUMER * consumers) > pool {
            too_many_registers();
        }
        // Each budget is set inside its own branch, which runs to the role's end: ptxas
        // ignores a `setmaxnreg` after which the two roles' code joins again.
        if crate::thread::block_rank() < 128 {
            imp::set_max_registers_dec::<PRODUCER>();
            let fills = core::cell::Cell::new(0);
            let out = produce(self.producer(&fills));
            self.producer_tail(fills.get());
            out
        } else {
            imp::set_max_registers_inc::<CONSUMER>();
            consume(self.consumer())
        }
    }

    /// As [`run`](Self::run), without register budgets (every thread keeps what ptxas gave
    /// it; any sm_90 build).
    #[inline(always)]
    pub fn run_keeping_registers<T>(
        self,
        produce: impl for<'r> FnOnce(Producer<'r, S, STAGES>) -> T,
        consume: impl FnOnce(Consumer<S, STAGES>) -> T,
    ) -> T {
        if crate::thread::block_rank() < 128 {
            let fills = core::cell::Cell::new(0);
            let out = produce(self.producer(&fills));
            self.producer_tail(fills.get());
            out
        } else {
            consume(self.consumer())
        }
    }

    #[inline(always)]
    fn ring(&self) -> Ring<S, STAGES> {
        Ring { base: self.base, bars: self.bars, stage: 0, phase: 0, _set: PhantomData }
    }

    #[inline(always)]
    fn producer<'r>(&self, fills: &'r core::cell::Cell<u32>) -> Producer<'r, S, STAGES> {
        Producer { ring: self.ring(), leader: crate::thread::block_rank() == 0, fills }
    }

    /// The producer's last act: its thread 0 waits until the copies of its last `fills`
    /// have landed (each stage's `full` phase of its last fill), so that the block never
    /// leaves with a TMA copy into its shared memory in flight — which consumers that stop
    /// waiting early would otherwise allow.
    #[inline(always)]
    fn producer_tail(&self, fills: u32) {
        if crate::thread::block_rank() != 0 {
            return;
        }
        let stages = STAGES as u32;
        let first = fills.saturating_sub(stages);
        for i in first..fills {
            let ring = Ring::<S, STAGES> {
                base: self.base,
                bars: self.bars,
                stage: i % stages,
                phase: (i / stages) & 1,
                _set: PhantomData,
            };
            // SAFETY: the ring's barriers (initialised by `start`); the phase is that of fill
            // `i`, the last of its stage, whose arrival and bytes the producer made.
            unsafe { imp::wait_parity(ring.full(), ring.phase) };
        }
    }

    #[inline(always)]
    fn consumer(&self) -> Consumer<S, STAGES> {
        Consumer { ring: self.ring(), index: (crate::thread::block_rank() / 128 - 1) as usize }
    }
}

/// The walk over the ring's stages and their phases that each side keeps.
struct Ring<S, const STAGES: usize> {
    base: u32,
    bars: u32,
    stage: u32,
    phase: u32,
    _set: PhantomData<fn() -> S>,
}

impl<S: TileSet, const STAGES: usize> Ring<S, STAGES> {
    #[inline(always)]
    fn full(&self) -> u32 {
        self.bars + 8 * self.stage
    }

    #[inline(always)]
    fn empty(&self) -> u32 {
        self.bars + 8 * (STAGES as u32 + self.stage)
    }

    #[inline(always)]
    fn tiles(&self) -> S {
        // SAFETY: stage `stage < STAGES` of the ring, inside the dynamic region (checked by
        // `start`), 1024-aligned (S::BYTES is a multiple of 1024).
        unsafe { S::at(self.base + self.stage * S::BYTES as u32) }
    }

    #[inline(always)]
    fn advance(&mut self) {
        self.stage += 1;
        if self.stage == STAGES as u32 {
            self.stage = 0;
            self.phase ^= 1;
        }
    }
}

/// The producer's side of a [`WsPipeline`]: every thread of warpgroup 0 holds one, and one
/// of them (the block's thread 0) issues the copies.
pub struct Producer<'r, S: TileSet, const STAGES: usize> {
    ring: Ring<S, STAGES>,
    leader: bool,
    // Fills so far, kept in `run`'s frame: after the producer's closure returns (or forgets
    // its `Producer`), `run` waits for the copies of the last fills to land.
    fills: &'r core::cell::Cell<u32>,
}

impl<S: TileSet, const STAGES: usize> Producer<'_, S, STAGES> {
    /// Fills the next stage with `boxes` (one per tile, [`TmaMatrix::tile_at`]): waits until
    /// every consumer released the stage (its previous round), tells its `full` barrier how
    /// many bytes to expect, and starts the copies, which complete on it. Only the block's
    /// thread 0 waits and copies; the producer warpgroup's other threads only step along.
    /// Call it once per stage the consumers will wait for, in every producer thread.
    #[inline(always)]
    #[track_caller]
    pub fn fill<L: TmaLoads<S>>(&mut self, boxes: L) {
        if self.leader {
            let r = &self.ring;
            // SAFETY: the ring's barriers, initialised by `start` before its block barrier;
            // the empty phase waited for is the one of the previous round of this stage (a
            // fresh barrier's "previous" phase counts as complete), the full barrier's
            // arrival and bytes are this round's.
            unsafe {
                imp::wait_parity(r.empty(), r.phase ^ 1);
                imp::arrive_expect_tx(r.full(), L::BYTES);
            }
            boxes.__issue(&r.tiles(), r.full(), Token(()));
        }
        self.ring.advance();
        self.fills.set(self.fills.get().wrapping_add(1));
    }
}

/// A consumer's side of a [`WsPipeline`]: every thread of warpgroups 1.. holds one.
pub struct Consumer<S: TileSet, const STAGES: usize> {
    ring: Ring<S, STAGES>,
    index: usize,
}

impl<S: TileSet, const STAGES: usize> Consumer<S, STAGES> {
    /// This consumer warpgroup's index among the consumers: `block_rank() / 128 - 1`.
    #[inline(always)]
    pub fn index(&self) -> usize {
        self.index
    }

    /// Waits until the next stage's copies have landed and hands it out: its tiles are
    /// readable through the [`Full`] until it is dropped (or given to the warpgroup MMA,
    /// which releases it when the MMA has read it).
    #[inline(always)]
    #[track_caller]
    pub fn wait(&mut self) -> Full<S> {
        let r = &self.ring;
        // SAFETY: the ring's barriers (initialised before `start`'s block barrier); the phase
        // is this round's.
        unsafe { imp::wait_parity(r.full(), r.phase) };
        let full = Full { tiles: r.tiles(), empty: r.empty() };
        self.ring.advance();
        full
    }
}

/// A stage whose copies have landed ([`Consumer::wait`]): its tiles are readable through
/// [`tiles`](Full::tiles). Dropping it releases the stage to the producer (this thread is
/// done with it); [`crate::wgmma::Warpgroup::mma_async_full`] takes it and releases it once
/// the MMA reading it has retired.
#[must_use = "the stage goes back to the producer when this is dropped"]
pub struct Full<S> {
    tiles: S,
    empty: u32,
}

impl<S> Full<S> {
    /// The stage's tiles, for reading.
    #[inline(always)]
    pub fn tiles(&self) -> &S {
        &self.tiles
    }

    /// The stage's tiles and its release, for an asynchronous reader that releases it when
    /// its reads have retired ([`Release::now`]).
    #[inline(always)]
    pub(crate) fn into_parts(self) -> (S, Release) {
        let me = core::mem::ManuallyDrop::new(self);
        // SAFETY: `me` is not dropped; its fields are read once each.
        let tiles = unsafe { core::ptr::read(&me.tiles) };
        (tiles, Release { empty: me.empty })
    }
}

impl<S> Drop for Full<S> {
    #[inline(always)]
    fn drop(&mut self) {
        Release { empty: self.empty }.now();
    }
}

/// A consumer thread's arrival at a stage's `empty` barrier, held until the reads of the
/// stage have retired.
pub(crate) struct Release {
    empty: u32,
}

impl Release {
    /// This thread is done with the stage.
    #[inline(always)]
    pub(crate) fn now(self) {
        // SAFETY: the stage's `empty` barrier (initialised by `start`); one arrival per
        // consumer thread per round, which `Consumer::wait` handed out once.
        unsafe { imp::arrive(self.empty) }
    }
}
