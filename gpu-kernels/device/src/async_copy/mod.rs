//! Asynchronous copies from global to shared memory (`cp.async`), with their ordering in
//! the types: a tile being filled can be neither read nor written until the group of
//! copies that fills it has been waited for — the kernel-side twin of the host's fences.
//!
//! | sluice | CUDA C++ | PTX |
//! | --- | --- | --- |
//! | [`FillTile::copy_from`], [`Tile::copy_async`](crate::tile::Tile::copy_async) | `cp.async` + `__pipeline_commit` (or CUTLASS `cp_async_zfill`) | `cp.async.cg.shared.global [d], [s], 16, n` + `cp.async.commit_group` |
//! | [`CopyPlan::new`] + [`FillTile::copy_step`] | CUTLASS's precomputed tile iterators (a pointer and a predicate per chunk, advanced per k-tile) | the same `cp.async`s, addresses worked out once |
//! | [`Pipeline::start`] | the prologue of a multistage mainloop | `STAGES - 1` × (copies, `commit_group`) |
//! | [`Pipeline::wait`] | `cp_async_wait<STAGES - 2>(); __syncthreads();` | `cp.async.wait_group STAGES-2; barrier.sync 0;` |
//! | [`Refill::fill`] | the copies of k-tile `k + STAGES - 1`, committed | copies + `cp.async.commit_group` |
//! | [`InFlight::wait`] | `cp_async_wait_all(); __syncthreads();` | `cp.async.wait_all; barrier.sync 0;` |
//!
//! # The rules, and where the compiler enforces them
//!
//! | rule | how |
//! | --- | --- |
//! | a tile being filled is not read | copies are issued through a [`FillTile`], which has no read method and is not a [`Tile`] (the MMA loads take `&Tile`); [`Tile::copy_async`](crate::tile::Tile::copy_async) moves the tile into an [`InFlight`] |
//! | a tile with a copy in flight is not written or refilled | the tile is moved into the [`InFlight`] (or, in a pipeline, is not nameable until [`Pipeline::wait`] hands it out); a `FillTile` lives only inside the closure that fills it |
//! | reads wait for every thread's copies | [`InFlight::wait`] and [`Pipeline::wait`] wait for this thread's group and then pass a block barrier, so every thread's part of the tile has landed and is visible |
//! | a stage is refilled only after every thread has read it | [`Pipeline::wait`] hands out, as a [`Refill`], the stage released one wait earlier, which this wait's barrier put behind every thread's reads; the stage being read stays a [`Ready`] |
//! | a stage is filled once per round | [`Refill::fill`] consumes the `Refill` |
//! | the number of groups in flight is what `wait_group` assumes | the pipeline commits exactly one group per fill: [`Pipeline::start`] `STAGES - 1`, each `Refill` one (an empty one if it is dropped unfilled) |
//!
//! A [`FillTile::copy_from`] checks its source: the global matrix fits its slice
//! ([`Matrix`]), and elements outside it (the ragged last tiles of a matrix whose sizes
//! are not multiples of the tile's) are zero-filled by `cp.async`'s source size, never
//! read. A source that is not 16-byte aligned (a leading dimension that is not a multiple
//! of 16 bytes), or not in global memory (a kernel's local array: `cp.async` reads global
//! memory only, and reads it any time until the wait), is copied element by element with
//! ordinary loads and stores at the call, with the same result.
//!
//! What the types cannot see, as everywhere in shared memory: a second handle to the same
//! bytes (call [`crate::tile::dynamic_tiles`] or [`Pipeline::start`] once per kernel), and
//! threads that do not all run the same sequence of pipeline calls (each `wait` is a block
//! barrier). Neither breaks memory safety: shared accesses are inline PTX on `Pod` data, so
//! the worst is a wrong value or a hang, which the CPU backend reports.
//!
//! # Hardware support
//!
//! `sm_80` and later.
//!
//! # On the CPU
//!
//! Each thread keeps its copies in flight in program order; a commit closes a group, and a
//! wait completes the groups it covers — only then are the bytes written to the block's
//! shared memory, so a destination read too early shows stale bytes (poison in fresh
//! memory), as it may on a GPU. Barriers are the runtime's. Copies still in flight when a
//! thread ends are dropped (on a GPU they land in memory nobody reads).
//!
//! # Example (device code): a pipelined tile loop
//!
//! ```ignore
//! use sluice_device::async_copy::{Pipeline, Threads};
//! use sluice_device::tile::{Matrix, Swizzled, Tile};
//! type A = Tile<bf16, Swizzled<128, 32>>;
//! type B = Tile<bf16, Swizzled<32, 128>>;
//! let threads = Threads::<256>::check();
//! let k_tiles = k.div_ceil(32);
//! let mut pipe = Pipeline::<(A, B), 3>::start(&threads, |s, (mut a, mut b)| {
//!     a.copy_from(&threads, &a_src, row0, 32 * s);
//!     b.copy_from(&threads, &b_src, 32 * s, col0);
//! });
//! for kt in 0..k_tiles {
//!     let (ready, refill) = pipe.wait();       // k-tile kt has landed, in every thread
//!     let next = kt + 2;
//!     refill.fill(|(mut a, mut b)| {           // the stage every thread finished with
//!         a.copy_from(&threads, &a_src, row0, 32 * next);
//!         b.copy_from(&threads, &b_src, 32 * next, col0);
//!     });
//!     let (a, b) = ready.tiles();
//!     // ... warp.load_a(a, ..), warp.load_b_trans(b, ..), warp.mma_grid(..) ...
//! }
//! ```

use core::marker::PhantomData;

use bytemuck::Pod;

use crate::shared::SharedPtr;
pub use crate::tile::FillTile;
use crate::tile::{Layout, Matrix, Row, Tile, TileSet};

#[cfg_attr(target_arch = "nvptx64", path = "gpu.rs")]
#[cfg_attr(not(target_arch = "nvptx64"), path = "cpu.rs")]
mod imp;
mod plan;

pub use plan::{CopyPlan, Walk};

/// The block has `N` threads: the cooperative copies split a tile's chunks among them,
/// `N` at a time, unrolled. Made by [`Threads::check`].
pub struct Threads<const N: u32> {
    rank: u32,
    // Not Send: it stands for the calling thread's block.
    _here: PhantomData<*const ()>,
}

#[cold]
#[track_caller]
fn wrong_block_size() -> ! {
    crate::dfail!("Threads::<N>::check: the block does not have N threads")
}

impl<const N: u32> Threads<N> {
    /// Checks that the block has `N` threads (panics otherwise).
    #[inline(always)]
    #[track_caller]
    pub fn check() -> Threads<N> {
        if crate::thread::block_size() != N {
            wrong_block_size();
        }
        Threads { rank: crate::thread::block_rank(), _here: PhantomData }
    }

    /// This thread's rank in the block, `0..N`.
    #[inline(always)]
    pub fn rank(&self) -> u32 {
        self.rank
    }
}

impl<'a, T: Pod, L: Layout<Major = Row>> FillTile<'a, T, L> {
    /// Copies the `L::ROWS × L::COLS` block of `src` at `(row0, col0)` into the tile, the
    /// block's `N` threads sharing the 16-byte chunks (call it from every thread, with the
    /// same arguments). Elements outside `src` become zero. The copies join this thread's
    /// open group (the pipeline commits it).
    #[inline(always)]
    #[track_caller]
    pub fn copy_from<const N: u32>(&mut self, threads: &Threads<N>, src: &Matrix<'_, T>, row0: usize, col0: usize) {
        let size = core::mem::size_of::<T>();
        let () = const {
            assert!(
                core::mem::size_of::<T>() <= 16 && 16 % core::mem::size_of::<T>() == 0,
                "cp.async copies 16-byte chunks of whole elements"
            );
            assert!(
                (L::COLS * core::mem::size_of::<T>()).is_multiple_of(16)
                    && (L::STRIDE * core::mem::size_of::<T>()).is_multiple_of(16),
                "cp.async fills whole 16-byte chunks: a tile row must be a multiple of 16 bytes"
            );
        };
        let v = 16 / size;
        let per_row = L::COLS / v;
        let chunks = L::ROWS * per_row;
        let data = src.data();
        let (rows, cols, ld) = (src.rows(), src.cols(), src.ld());
        let base = data.as_ptr();
        // `cp.async` reads global memory, later: a source elsewhere (a kernel's local array)
        // is copied now, element by element, as an unaligned one is.
        let fast = !data.is_empty()
            && (base as usize).is_multiple_of(16)
            && (ld * size).is_multiple_of(16)
            && col0.is_multiple_of(v)
            && imp::is_global(base as *const u8);
        let rank = threads.rank() as usize;
        let n = N as usize;
        // The chunk `i` of this thread's `it`-th turn: its tile position, its source
        // position and how many of its elements are inside the source.
        let chunk = |it: usize| {
            let i = rank + it * n;
            let (r, cc) = (i / per_row, i % per_row);
            // Saturating: a tile far past the source's edge is all outside it (zeros).
            let (gr, gc) = (row0.saturating_add(r), col0.saturating_add(cc * v));
            let valid = if gr < rows && gc < cols {
                if cols - gc < v {
                    cols - gc
                } else {
                    v
                }
            } else {
                0
            };
            (i < chunks, self.addr_of(r, cc * v), gr, gc, valid)
        };
        if fast {
            crate::unroll!(it in 0..(L::ROWS * (L::COLS / (16 / core::mem::size_of::<T>()))).div_ceil(N as usize); max 32 => {
                let (inside, dst, gr, gc, valid) = chunk(it);
                if chunks.is_multiple_of(n) || inside {
                    // In bounds: gr < rows, gc + valid <= cols, so the elements read are
                    // inside the slice (`Matrix` checked `(rows - 1) * ld + cols <= len`).
                    let p = if valid > 0 { base.wrapping_add(gr * ld + gc) } else { base };
                    // SAFETY: `dst` is this chunk of the tile (16-aligned: whole chunks of
                    // a tile whose rows are whole chunks), which only copies write while it
                    // is filled; `p .. p + valid * size` is inside `src`'s slice (above),
                    // which the launch keeps alive and unwritten, 16-aligned (`fast`).
                    unsafe { imp::copy16(dst, p as *const u8, (valid * size) as u32) };
                }
            });
        } else {
            for it in 0..chunks.div_ceil(n) {
                let (inside, dst, gr, gc, valid) = chunk(it);
                if !inside {
                    break;
                }
                for e in 0..v {
                    let x = if e < valid { src.get(gr, gc + e).unwrap_or(T::zeroed()) } else { T::zeroed() };
                    // SAFETY: inside the tile (element `e` of this chunk), aligned for `T`.
                    unsafe { SharedPtr::<T>::from_addr(dst + (e * size) as u32).write(x) };
                }
            }
        }
    }

    /// Zeros the tile, the block's `N` threads sharing the work (ordinary stores: visible
    /// after the same wait as the copies).
    #[inline(always)]
    #[track_caller]
    pub fn zero<const N: u32>(&mut self, threads: &Threads<N>) {
        let total = L::ROWS * L::COLS;
        let mut i = threads.rank() as usize;
        while i < total {
            self.set(i / L::COLS, i % L::COLS, T::zeroed());
            i += N as usize;
        }
    }
}

impl<T: Pod, L: Layout<Major = Row>> Tile<T, L> {
    /// Starts filling the tile from `src` at `(row0, col0)` (as [`FillTile::copy_from`])
    /// and commits the group; the tile comes back from [`InFlight::wait`]. Until then it
    /// can be neither read nor written: it is moved.
    ///
    /// ```compile_fail
    /// # use sluice_device::{async_copy::Threads, tile::{Matrix, RowMajor, Tile}};
    /// # fn k(tile: Tile<f32, RowMajor<8, 8>>, src: Matrix<'_, f32>, threads: Threads<64>) {
    /// let copying = tile.copy_async(&threads, &src, 0, 0);
    /// let x = tile.get(0, 0); // error[E0382]: borrow of moved value: `tile`
    /// # }
    /// ```
    ///
    /// Fixed: read what [`InFlight::wait`] gives back.
    ///
    /// ```
    /// # use sluice_device::{async_copy::Threads, tile::{Matrix, RowMajor, Tile}};
    /// # fn k(tile: Tile<f32, RowMajor<8, 8>>, src: Matrix<'_, f32>, threads: Threads<64>) {
    /// let tile = tile.copy_async(&threads, &src, 0, 0).wait();
    /// let x = tile.get(0, 0);
    /// # }
    /// ```
    #[inline(always)]
    #[track_caller]
    pub fn copy_async<const N: u32>(
        mut self,
        threads: &Threads<N>,
        src: &Matrix<'_, T>,
        row0: usize,
        col0: usize,
    ) -> InFlight<Self> {
        FillTile::new(&mut self).copy_from(threads, src, row0, col0);
        imp::commit();
        InFlight { set: self }
    }
}

/// Tiles with asynchronous copies in flight; [`wait`](InFlight::wait) gives them back.
#[must_use = "the tiles come back only from `wait`"]
pub struct InFlight<S> {
    set: S,
}

impl<S> InFlight<S> {
    /// Waits for every copy this thread issued (`cp.async.wait_all`), then for the block
    /// (a barrier: every thread must call it), and gives the tiles back, filled.
    #[inline(always)]
    #[track_caller]
    pub fn wait(self) -> S {
        imp::wait_all();
        imp::publish_for_async_proxy();
        crate::sync::sync_threads();
        self.set
    }
}

/// A ring of `STAGES` copies of the tile set `S` in dynamic shared memory, filled by
/// asynchronous copies `STAGES - 1` ahead of the stage being read (`STAGES - 2` in the
/// [`Behind`] mode). See the [module docs](self) for the rules it keeps.
pub struct Pipeline<S: TileSet, const STAGES: usize, M: Mode = Now> {
    base: u32,
    head: usize,
    // Waits so far: the step of the stage the next wait hands out.
    round: usize,
    _set: PhantomData<fn() -> (S, M)>,
}

/// How long a [`Pipeline`]'s stage stays read after the next `wait`: [`Now`] or [`Behind`].
/// Sealed.
pub trait Mode: mode::Sealed + 'static {
    /// Waits after which a stage that was handed out is refilled.
    #[doc(hidden)]
    const LAG: usize;
    /// [`LAG`](Mode::LAG): 1 for [`Now`], 2 for [`Behind`]; a pipeline's copies run
    /// `STAGES - lag()` steps ahead.
    fn lag() -> usize {
        Self::LAG
    }
}

/// The reads of a stage end before the next [`Pipeline::wait`] (synchronous readers:
/// `ld.shared`, `ldmatrix`): the stage read before this wait is refilled after it. The
/// default.
pub struct Now;

/// The reads of a stage may still be in flight after the next [`Pipeline::wait`] — one
/// asynchronous reader's group left running, Hopper's warpgroup MMA
/// (`sluice_device::wgmma::Warpgroup::mma_async`) — and end before the one after: the
/// stage refilled after a wait is the one handed out two waits earlier, and copies run one
/// stage less ahead (`STAGES - 2`; at least 3 stages).
pub struct Behind;

impl Mode for Now {
    const LAG: usize = 1;
}
impl Mode for Behind {
    const LAG: usize = 2;
}

mod mode {
    pub trait Sealed {}
    impl Sealed for super::Now {}
    impl Sealed for super::Behind {}
}

/// `cp.async.wait_group pending`.
#[inline(always)]
#[track_caller]
fn wait_pending(pending: usize) {
    // `cp.async.wait_group` takes an immediate: one arm per depth, folded at compile time.
    match pending {
        0 => imp::wait_group::<0>(),
        1 => imp::wait_group::<1>(),
        2 => imp::wait_group::<2>(),
        3 => imp::wait_group::<3>(),
        4 => imp::wait_group::<4>(),
        5 => imp::wait_group::<5>(),
        _ => imp::wait_group::<6>(),
    }
}

impl<S: TileSet, const STAGES: usize, M: Mode> Pipeline<S, STAGES, M> {
    /// The dynamic shared memory (bytes) a launch must give for this pipeline.
    pub const SHARED_BYTES: usize = STAGES * S::BYTES + 112;

    #[inline(always)]
    fn stage(&self, i: usize) -> S {
        // SAFETY: stage `i < STAGES` of the ring, inside the dynamic region (checked by
        // `start`), 128-aligned (S::BYTES is a multiple of 128).
        unsafe { S::at(self.base + (i * S::BYTES) as u32) }
    }

    /// Places the ring at the start of the launch's dynamic shared memory (panics if the
    /// launch gave less than [`SHARED_BYTES`](Self::SHARED_BYTES)), and fills stages
    /// `0..STAGES - 1` (`0..STAGES - 2` in the [`Behind`] mode) with `fill(stage, tiles)`,
    /// one commit group each. Call it from every thread of the block.
    #[inline(always)]
    #[track_caller]
    pub fn start<const N: u32>(threads: &Threads<N>, mut fill: impl for<'f> FnMut(usize, S::Fill<'f>)) -> Self {
        let () = const { assert!(STAGES >= 2 && STAGES <= 8, "a pipeline has 2 to 8 stages") };
        let () = const { assert!(STAGES > M::LAG, "a Behind pipeline has at least 3 stages") };
        let _ = threads;
        let region = crate::shared::dynamic_shared::<u8>().as_ptr().addr();
        let base = (region + 127) & !127;
        crate::dassert!(
            (base - region) as u64 + (STAGES * S::BYTES) as u64 <= crate::shared::dynamic_shared_bytes() as u64,
            "Pipeline::start: the launch's dynamic shared memory is smaller than Pipeline::SHARED_BYTES"
        );
        let pipe = Pipeline { base, head: 0, round: 0, _set: PhantomData };
        for i in 0..STAGES - M::LAG {
            let mut st = pipe.stage(i);
            fill(i, S::fill(&mut st, crate::tile::seal::FillToken(())));
            imp::commit();
        }
        pipe
    }

    /// Waits until the oldest stage has landed, in this thread (`cp.async.wait_group
    /// STAGES - 2`; `STAGES - 3` in the [`Behind`] mode) and in every thread of the block (a
    /// barrier: every thread must call it), and hands it out for reading ([`Ready`]), with
    /// the stage every thread has finished reading for the next copies ([`Refill`]): the
    /// one handed out by the wait before ([`Now`]) or the one before that ([`Behind`]).
    #[inline(always)]
    #[track_caller]
    pub fn wait(&mut self) -> (Ready<'_, S, M>, Refill<'_, S>) {
        wait_pending(STAGES - M::LAG - 1);
        // This thread's landed copies, made visible to the warpgroup MMA's reads (sm_90a).
        imp::publish_for_async_proxy();
        crate::sync::sync_threads();
        let ready = self.stage(self.head);
        let free = self.stage((self.head + STAGES - M::LAG) % STAGES);
        self.head = (self.head + 1) % STAGES;
        let step = self.round + STAGES - M::LAG;
        self.round += 1;
        (
            Ready { tiles: ready, _mode: PhantomData, _pipe: PhantomData },
            Refill { stage: free, step, done: false, _pipe: PhantomData },
        )
    }

    /// Waits for every copy still in flight (`cp.async.wait_all`): the end of the ring.
    /// (Dropping the pipeline does the same.)
    #[inline(always)]
    #[track_caller]
    pub fn finish(self) {}
}

impl<S: TileSet, const STAGES: usize, M: Mode> Drop for Pipeline<S, STAGES, M> {
    #[inline(always)]
    fn drop(&mut self) {
        imp::wait_all();
    }
}

/// The stage of a [`Pipeline`] every thread's copies have landed in, readable through
/// [`tiles`](Ready::tiles) until the next [`Pipeline::wait`].
pub struct Ready<'p, S, M = Now> {
    tiles: S,
    // The pipeline's mode: `Behind` lets an asynchronous reader keep reading past the
    // next wait (`wgmma::Warpgroup::mma_async` takes only such a stage).
    _mode: PhantomData<fn() -> M>,
    // Holds the pipeline's `&mut` borrow (with `Refill`), so `wait` cannot run again
    // while the stage is being read.
    _pipe: PhantomData<&'p mut ()>,
}

impl<'p, S, M> Ready<'p, S, M> {
    /// The stage's tiles, for reading.
    #[inline(always)]
    pub fn tiles(&self) -> &S {
        &self.tiles
    }
}

/// The stage of a [`Pipeline`] released one wait earlier — every thread passed this wait's
/// barrier after reading it — to be filled with the next copies: [`fill`](Refill::fill)
/// fills and commits it (once: it is consumed); dropped unfilled, it commits an empty
/// group, so that the count of groups in flight stays what `wait` assumes.
#[must_use = "fill the free stage, or drop it to commit an empty group"]
pub struct Refill<'p, S: TileSet> {
    stage: S,
    // The step whose copies belong in this stage.
    step: usize,
    done: bool,
    // Holds the pipeline's `&mut` borrow, as `Ready`.
    _pipe: PhantomData<&'p mut ()>,
}

impl<'p, S: TileSet> Refill<'p, S> {
    /// Fills the stage with `fill(tiles)` (copies only: the [`FillTile`]s cannot be read)
    /// and commits them as one group. Call it from every thread.
    #[inline(always)]
    #[track_caller]
    pub fn fill(mut self, fill: impl for<'f> FnOnce(S::Fill<'f>)) {
        fill(S::fill(&mut self.stage, crate::tile::seal::FillToken(())));
        imp::commit();
        self.done = true;
    }

    /// The step whose data belongs in this stage: `STAGES - 1` steps ahead of the stage the
    /// same wait handed out (`STAGES - 2` for a [`Behind`] pipeline), counting the stages
    /// [`Pipeline::start`] filled as steps `0, 1, …` — the k-tile of a gemm's main loop:
    /// `let next = refill.step(); refill.fill(|t| if next < k_tiles { t.copy_step(&plan, next) })`.
    #[inline(always)]
    pub fn step(&self) -> usize {
        self.step
    }
}

impl<'p, S: TileSet> Drop for Refill<'p, S> {
    #[inline(always)]
    fn drop(&mut self) {
        if !self.done {
            imp::commit();
        }
    }
}
