//! Hopper's warpgroup MMA (`wgmma.mma_async`), typed: a warpgroup (four warps, 128 threads)
//! multiplies a `64 × 64` slice of an A tile by a `64 × N` B tile in shared memory into
//! `64 × N` f32 accumulators held across its threads' registers.
//!
//! | sluice | CUDA C++ / CUTLASS | PTX |
//! | --- | --- | --- |
//! | [`Warpgroup::this`] | `threadIdx.x / 128`, `cutlass::canonical_warp_group_idx()` | — |
//! | [`Warpgroup::mma`] | `cute::gemm` on an `SM90_64xNx16_F32BF16BF16_SS` atom, `warpgroup_arrive`, `warpgroup_commit_batch`, `warpgroup_wait<0>` | `wgmma.fence`, `wgmma.mma_async.sync.aligned.m64nNk16.f32.bf16.bf16`, `wgmma.commit_group`, `wgmma.wait_group 0` |
//! | [`WgAccum`] | the accumulator fragment (`64 × N / 128` floats per thread) | `.f32` registers |
//! | [`Warpgroup::store`] | the epilogue | `st.global.f32` |
//!
//! # Types and what they rule out
//!
//! * Operands come from typed shared tiles: A from a `Tile<E, Swizzled<R, 64>>` (rows of
//!   64 bf16 or f16 elements, 128 bytes, in the 128-byte swizzle the MMA's K-major layout
//!   uses), B from `P` tiles `Tile<E, Swizzled<64, 64>>` side by side (`N = 64 P`, each a
//!   panel of 64 columns, read transposed — N-major). The layout and the element type are
//!   the tiles' types, so the shared-memory descriptors the instruction takes are built
//!   here from tiles whose layout matches by construction; A and B of different element
//!   types, or tiles of another layout, are compile errors.
//! * [`WgAccum<N>`]: the accumulators, one warpgroup's `64 × N` block; an accumulator
//!   of one `N` cannot be used with B panels of another.
//! * [`Warpgroup::mma`] issues the k-tile's four MMAs (k-steps of 16), commits them and
//!   waits for them before it returns: when it returns, the accumulators hold the result and
//!   the tiles are no longer read.
//! * [`Warpgroup::mma_async`] leaves the group running (so the tensor cores work while the
//!   warpgroup waits for the next stage) and waits only for the group before: the
//!   accumulators move into a [`WgInFlight`] (no accessor: `wait` gives them back), and the
//!   stage must be a [`Behind`] pipeline's, refilled two waits after it was handed out (so
//!   `mma_async` must run in every round: see its docs for what a skipped round risks).
//! * Both take the operands from a pipeline stage ([`Ready`]) through a closure that can
//!   return only that stage's tiles: tiles whose copies a pipeline's wait made visible to
//!   the MMA's async-proxy reads.
//!
//! # The whole warpgroup
//!
//! `wgmma.*.sync.aligned` needs all 128 threads of the warpgroup to execute the same
//! instruction. Each warp checks, once per call, that its 32 lanes are all here
//! (`activemask`, as [`crate::mma::Warp`]'s batches do), and the call ends the kernel
//! otherwise. **Not checked on the GPU**: that the four warps of a warpgroup are at the
//! same call (a kernel whose warps of one warpgroup take different branches around
//! `mma`); the CPU backend runs each thread's MMA on its own and does not see it either.
//!
//! # Shared memory
//!
//! The 128-byte swizzle is on absolute shared-memory addresses: every tile must start at a
//! multiple of 1024 bytes (checked; a [`crate::async_copy::Pipeline`] of such tiles at the
//! start of dynamic shared memory has it). Writes by `cp.async` become visible to the MMA
//! through `fence.proxy.async.shared::cta`, which the pipelines of
//! [`crate::async_copy`] run before their barrier when built for `sm_90a`.
//!
//! # Hardware support
//!
//! `sm_90a` only (H100, H200, GH200). Build the kernel crate for it beside its portable
//! architecture (`Builder::new(dir).specific(Arch::SM_90A)` in the build script) and gate
//! each Hopper kernel with `#[cfg(any(not(target_arch = "nvptx64"), target_feature =
//! "sm_90a"))]`: the host launches the sm_90a PTX on Hopper GPUs. A kernel that calls
//! [`Warpgroup::mma`] in a build for another architecture (the gate forgotten) is a compile
//! error saying so.
//!
//! # On the CPU
//!
//! Each thread computes its own accumulators from the tiles (`Tile::get`, bounds-checked,
//! seen by the race checker as its reads): products exact, sums in f32 in `k` order.
//!
//! # Example (device code)
//!
//! ```ignore
//! use sluice_device::wgmma::{Warpgroup, WgAccum};
//! // TA = Tile<bf16, Swizzled<128, 64>>, TB = Tile<bf16, Swizzled<64, 64>> (one k-tile)
//! let wg = Warpgroup::this();
//! let mut acc = WgAccum::<128>::zero();
//! // (ready, refill) = pipe.wait() of a pipeline of stages (TA, TB, TB)
//! wg.mma(&mut acc, &ready, |(ta, tb0, tb1)| (ta, 64 * wg.index(), [tb0, tb1])); // rows 64 g .. of A
//! ```

use crate::async_copy::{Behind, Mode, Ready};
use crate::half::{bf16, f16};
use crate::spec::layout::Swizzled;
use crate::tile::{Tile, TileSet, WarpgroupTile};
use crate::tma::{Full, Release};

#[cfg_attr(target_arch = "nvptx64", path = "gpu.rs")]
#[cfg_attr(not(target_arch = "nvptx64"), path = "cpu.rs")]
mod imp;

mod sealed {
    pub trait Sealed {}
    impl Sealed for super::bf16 {}
    impl Sealed for super::f16 {}
}

/// An element type of the warpgroup MMA's operands: [`bf16`], [`f16`]. Sealed.
#[diagnostic::on_unimplemented(
    message = "the warpgroup MMA has no `{Self}` operands here",
    label = "not a wgmma operand type",
    note = "Warpgroup::mma takes bf16 or f16 tiles (f32 accumulators)"
)]
pub trait WgElem: sealed::Sealed + bytemuck::Pod {
    /// `true` for bf16, `false` for f16.
    #[doc(hidden)]
    const BF16: bool;
    /// The value as f32 (exact).
    #[doc(hidden)]
    fn __to_f32(self) -> f32;
}
impl WgElem for bf16 {
    const BF16: bool = true;
    #[inline(always)]
    fn __to_f32(self) -> f32 {
        self.to_f32()
    }
}
impl WgElem for f16 {
    const BF16: bool = false;
    #[inline(always)]
    fn __to_f32(self) -> f32 {
        self.to_f32()
    }
}

/// A warpgroup's `64 × N` f32 accumulators: this thread's `N / 2` of them. Element `(row,
/// col)` of the block is in thread `t` of the warpgroup (warp `w = t / 32`, lane `l`) for
/// `row = 16 w + l / 4 + 8 h` and `col = 8 j + 2 (l % 4) + e`, register `4 j + 2 h + e`
/// (`h, e` in `0..2`, `j` in `0..N / 8`) — the PTX ISA's `wgmma` D fragment.
#[derive(Clone, Copy)]
pub struct WgAccum<const N: usize> {
    // `[f32; N / 2]` is not expressible yet: N / 2 registers of 128 used.
    regs: [f32; 128],
}

impl<const N: usize> WgAccum<N> {
    const SHAPE: () = assert!(N == 64 || N == 128 || N == 256, "WgAccum<N>: N is 64, 128 or 256");

    /// All zeros.
    #[inline(always)]
    pub fn zero() -> Self {
        let () = Self::SHAPE;
        WgAccum { regs: [0.0; 128] }
    }

    /// This thread's accumulator `i` (`i < N / 2`), at `(row, col)` of the warpgroup's
    /// block as [`WgAccum::position`] says.
    #[inline(always)]
    pub fn get(&self, i: usize) -> f32 {
        self.regs[i]
    }

    /// Where this thread's accumulator `i` lies in the warpgroup's `64 × N` block.
    #[inline(always)]
    pub fn position(i: usize) -> (usize, usize) {
        let t = (crate::thread::block_rank() % 128) as usize;
        frag_position(t, i)
    }
}

impl<const N: usize> WgAccum<N> {
    /// The accumulators as the start of a chain of [`Warpgroup::mma_async`] (nothing in
    /// flight yet).
    #[inline(always)]
    pub fn in_flight(self) -> WgInFlight<N> {
        WgInFlight { regs: self.regs, held: None }
    }
}

/// Accumulators with a group of warpgroup MMAs in flight ([`Warpgroup::mma_async`]): they
/// cannot be read (PTX leaves reading them before `wgmma.wait_group` undefined), only given
/// to the next `mma_async` or waited for ([`WgInFlight::wait`]). Dropped, it waits.
#[must_use = "the accumulators come back only from `wait`"]
pub struct WgInFlight<const N: usize> {
    regs: [f32; 128],
    // The TMA stage the group in flight reads ([`Warpgroup::mma_async_full`]), released
    // once the group has retired.
    held: Option<Release>,
}

impl<const N: usize> WgInFlight<N> {
    /// Waits for every warpgroup MMA this thread issued (`wgmma.wait_group 0`) and gives
    /// the accumulators back (and the TMA stage the last group read, if any, to its
    /// producer).
    #[inline(always)]
    pub fn wait(self) -> WgAccum<N> {
        let mut me = core::mem::ManuallyDrop::new(self);
        imp::wait_all::<N>(&mut me.regs);
        if let Some(r) = me.held.take() {
            r.now();
        }
        WgAccum { regs: me.regs }
    }
}

impl<const N: usize> WgInFlight<N> {
    /// The next link of a chain of `mma_async*`: `issue` issues this k-tile's group and waits
    /// for the group before (`wgmma.wait_group 1`), so the TMA stage that group read (if any)
    /// is released here; the new group holds `stage`, released when it retires in turn.
    #[inline(always)]
    fn then(self, stage: Option<Release>, issue: impl FnOnce(&mut [f32; 128])) -> WgInFlight<N> {
        let mut acc = core::mem::ManuallyDrop::new(self);
        issue(&mut acc.regs);
        if let Some(r) = acc.held.take() {
            r.now();
        }
        WgInFlight { regs: acc.regs, held: stage }
    }
}

impl<const N: usize> Drop for WgInFlight<N> {
    #[inline(always)]
    fn drop(&mut self) {
        imp::wait_all::<N>(&mut self.regs);
        if let Some(r) = self.held.take() {
            r.now();
        }
    }
}

/// Where accumulator `i` of thread `t` (of a warpgroup) lies in its `64 × N` block.
#[inline(always)]
pub(crate) fn frag_position(t: usize, i: usize) -> (usize, usize) {
    let (w, l) = (t / 32, t % 32);
    let (j, h, e) = (i / 4, (i / 2) % 2, i % 2);
    (16 * w + l / 4 + 8 * h, 8 * j + 2 * (l % 4) + e)
}

/// A warpgroup of the block: 128 consecutive threads (`block_rank() / 128`), every warp of
/// it whole. See the [module docs](self).
pub struct Warpgroup {
    index: u32,
}

#[cold]
#[track_caller]
fn not_whole() -> ! {
    crate::dfail!("wgmma: a warp of the warpgroup is not whole here (a divergent branch around Warpgroup::mma), or the block is not whole warpgroups")
}

#[cold]
#[track_caller]
fn misplaced() -> ! {
    crate::dfail!("the warpgroup MMA (Warpgroup::mma, mma_async, mma_async_full): A's rows row0 .. row0 + 64 are not inside its tile at a multiple of 64 (with a TMA pipeline, row0 is 64 * the consumer's index, Consumer::index), or a tile is not 1024-byte aligned, or B's panels are not consecutive")
}

impl Warpgroup {
    /// This thread's warpgroup. Ends the kernel with a message unless the block is a whole
    /// number of warpgroups (`block_size() % 128 == 0`) and this warp is whole here.
    #[inline(always)]
    #[track_caller]
    pub fn this() -> Warpgroup {
        if !crate::thread::block_size().is_multiple_of(128) || !imp::whole_warp_here() {
            not_whole();
        }
        Warpgroup { index: crate::thread::block_rank() / 128 }
    }

    /// The warpgroup's index in the block, `block_rank() / 128`.
    #[inline(always)]
    pub fn index(&self) -> usize {
        self.index as usize
    }

    /// `acc += a[row0 .. row0 + 64, 0 .. 64] · b`, `b` the `64 × N` matrix of the `P`
    /// panels `b[0] | b[1] | …` (`N = 64 P`): four `wgmma.mma_async` of `k = 16`, committed
    /// and waited for before it returns. `pick` chooses the operands among the tiles of a
    /// pipeline's stage (`|(ta, tb0, tb1)| (ta, row0, [tb0, tb1])`): tiles a pipeline's wait
    /// made visible to the MMA (which reads shared memory through the async proxy: tiles
    /// written by ordinary stores would need `fence.proxy.async` first). `row0` is a
    /// multiple of 64 with `row0 + 64 <= R`; every tile starts at a multiple of 1024 bytes
    /// and the panels of B follow one another in shared memory (checked: the kernel ends
    /// with a message otherwise).
    #[inline(always)]
    #[track_caller]
    pub fn mma<E: WgElem, S: TileSet, M: Mode, const R: usize, const P: usize, const N: usize>(
        &self,
        acc: &mut WgAccum<N>,
        stage: &Ready<'_, S, M>,
        pick: impl for<'x> FnOnce(&'x S) -> (&'x Tile<E, Swizzled<R, 64>>, usize, [&'x Tile<E, Swizzled<64, 64>>; P]),
    ) {
        let (a, row0, b) = pick(stage.tiles());
        let () = const { assert!(P * 64 == N, "Warpgroup::mma: B's panels (64 columns each) must make WgAccum's N") };
        let () = WgAccum::<N>::SHAPE;
        if !imp::whole_warp_here() {
            not_whole();
        }
        self.check_placement(a, row0, &b);
        imp::mma_k_tile::<E, R, P, N>(&mut acc.regs, a, row0, b);
    }

    /// `acc + a[row0 .. row0 + 64, 0 .. 64] · b`, as [`Warpgroup::mma`], left in flight:
    /// the k-tile's four MMAs are issued and committed as a group, and only the group
    /// before it is waited for (`wgmma.wait_group 1`), so the tensor cores run this group
    /// while the warpgroup goes on to the next [`Pipeline::wait`](crate::async_copy::Pipeline::wait).
    /// `pick` chooses the operands among the stage's tiles (`|(ta, tb0, tb1)| (ta, row0,
    /// [tb0, tb1])`); it can return only tiles of that stage.
    ///
    /// The stage must come from a [`Behind`] pipeline: the group reads it after this call
    /// returns, until the next `mma_async` (or `wait`) retires it, and a `Behind` pipeline
    /// refills a stage only two waits after handing it out — by then the next round's
    /// `mma_async` has retired this group. Call it once in every round (every `wait`) until
    /// the last: a round without it (a split-k loop that skips stages, a `WgInFlight`
    /// forgotten) lets the stage be refilled while the group may still read it — a race on
    /// shared memory that gives wrong values (as a race through `Tile::get` does), which
    /// neither the types nor the CPU backend catch. A stage of an ordinary
    /// ([`Now`](crate::async_copy::Now)) pipeline is refilled one wait later, while the
    /// group could still read it: it does not type-check.
    #[inline(always)]
    #[track_caller]
    pub fn mma_async<E: WgElem, S: TileSet, const R: usize, const P: usize, const N: usize>(
        &self,
        acc: WgInFlight<N>,
        stage: &Ready<'_, S, Behind>,
        pick: impl for<'x> FnOnce(&'x S) -> (&'x Tile<E, Swizzled<R, 64>>, usize, [&'x Tile<E, Swizzled<64, 64>>; P]),
    ) -> WgInFlight<N> {
        let () = const { assert!(P * 64 == N, "Warpgroup::mma_async: B's panels (64 columns each) must make N") };
        let () = WgAccum::<N>::SHAPE;
        let (a, row0, b) = pick(stage.tiles());
        if !imp::whole_warp_here() {
            not_whole();
        }
        self.check_placement(a, row0, &b);
        acc.then(None, |regs| imp::mma_k_tile_async::<E, R, P, N>(regs, a, row0, b))
    }

    /// `acc + a[row0 .. row0 + 64, 0 .. 64] · b` on a stage of a warp-specialised TMA
    /// pipeline ([`crate::tma::Consumer::wait`]), as [`Warpgroup::mma_async`]: the k-tile's
    /// four MMAs are issued and committed as a group and left in flight, and the group before
    /// is waited for (`wgmma.wait_group 1`). The stage is taken: it goes back to the producer
    /// when its group has retired — at the next `mma_async_full` (or `mma_async`), at
    /// [`WgInFlight::wait`], or when the `WgInFlight` is dropped — and it cannot be read
    /// meanwhile. `pick` chooses the operands among the stage's tiles (`|(ta, tb0, tb1)|
    /// (ta, row0, [tb0, tb1])`); it can return only tiles of that stage.
    ///
    /// ```ignore
    /// let mut acc = WgAccum::<128>::zero().in_flight();
    /// for _ in 0..k_tiles {
    ///     acc = wg.mma_async_full(acc, consumer.wait(), |(ta, tb0, tb1)| (ta, 64 * consumer.index(), [tb0, tb1]));
    /// }
    /// let acc = acc.wait(); // the last stage released
    /// ```
    #[inline(always)]
    #[track_caller]
    pub fn mma_async_full<E: WgElem, S: TileSet, const R: usize, const P: usize, const N: usize>(
        &self,
        acc: WgInFlight<N>,
        stage: Full<S>,
        pick: impl for<'x> FnOnce(&'x S) -> (&'x Tile<E, Swizzled<R, 64>>, usize, [&'x Tile<E, Swizzled<64, 64>>; P]),
    ) -> WgInFlight<N> {
        let () = const { assert!(P * 64 == N, "Warpgroup::mma_async_full: B's panels (64 columns each) must make N") };
        let () = WgAccum::<N>::SHAPE;
        let (tiles, release) = stage.into_parts();
        let (a, row0, b) = pick(&tiles);
        if !imp::whole_warp_here() {
            not_whole();
        }
        self.check_placement(a, row0, &b);
        acc.then(Some(release), |regs| imp::mma_k_tile_async::<E, R, P, N>(regs, a, row0, b))
    }

    /// `acc + a[row0 .. row0 + 64, 0 .. 32] · bᵀ` in tf32 on a stage of a warp-specialised
    /// TMA pipeline, as [`Warpgroup::mma_async_full`]: `b` holds **Bᵀ**, `N` rows of 32 K
    /// elements (tf32 has no transposed form: both operands are K-major, 32 f32 = the 128-byte
    /// swizzle's rows), so a gemm `C = A · B` takes B as its `n × k` transpose. The f32
    /// elements are read as tf32 (the low 13 mantissa bits ignored); accumulation in f32. The
    /// stage is released once its group retired, as for `mma_async_full`.
    ///
    /// ```ignore
    /// // stage (Tile<f32, Swizzled<128, 32>>, Tile<f32, Swizzled<256, 32>>): A, and Bᵀ
    /// acc = wg.mma_async_full_tf32(acc, consumer.wait(), |(ta, tbt)| (ta, 64 * consumer.index(), tbt));
    /// ```
    #[inline(always)]
    #[track_caller]
    pub fn mma_async_full_tf32<S: TileSet, const R: usize, const N: usize>(
        &self,
        acc: WgInFlight<N>,
        stage: Full<S>,
        pick: impl for<'x> FnOnce(&'x S) -> (&'x Tile<f32, Swizzled<R, 32>>, usize, &'x Tile<f32, Swizzled<N, 32>>),
    ) -> WgInFlight<N> {
        let () = WgAccum::<N>::SHAPE;
        let (tiles, release) = stage.into_parts();
        let (a, row0, b) = pick(&tiles);
        if !imp::whole_warp_here() {
            not_whole();
        }
        let placed =
            a.addr().is_multiple_of(1024) && b.addr().is_multiple_of(1024) && row0.is_multiple_of(64) && row0 + 64 <= R;
        if !placed {
            misplaced();
        }
        acc.then(Some(release), |regs| imp::mma_k_tile_async_tf32::<R, N>(regs, a, row0, b))
    }

    /// Ends the kernel with a message unless the tiles are where the descriptors need them.
    #[inline(always)]
    #[track_caller]
    fn check_placement<E: WgElem, const R: usize, const P: usize>(
        &self,
        a: &Tile<E, Swizzled<R, 64>>,
        row0: usize,
        b: &[&Tile<E, Swizzled<64, 64>>; P],
    ) {
        let panel = Tile::<E, Swizzled<64, 64>>::BYTES as u32;
        let mut placed = a.addr().is_multiple_of(1024) && row0.is_multiple_of(64) && row0 + 64 <= R;
        let b0 = b[0].addr();
        crate::unroll!(p in 0..P; max 4 => {
            placed &= b[p].addr() == b0 + p as u32 * panel;
        });
        if !placed || !b0.is_multiple_of(1024) {
            misplaced();
        }
    }

    /// Writes the accumulators to this warpgroup's tile of the output (each thread its own
    /// elements, those outside the matrix dropped).
    #[inline(always)]
    pub fn store<const N: usize>(&self, out: &mut WarpgroupTile<'_, f32, N>, acc: &WgAccum<N>) {
        let t = (crate::thread::block_rank() % 128) as usize;
        crate::unroll!(j in 0..32; max 32 => {
            if j < N / 8 {
                crate::unroll!(h in 0..2; max 2 => {
                    let (r, c) = frag_position(t, 4 * j + 2 * h);
                    // SAFETY: `frag_position` gives each thread of the warpgroup its own
                    // elements of the 64 × N block (a bijection, `frag_positions_cover_the_block`),
                    // and the warpgroup tile is this warpgroup's alone (`warpgroup_tile`).
                    unsafe { out.write2(r, c, acc.regs[4 * j + 2 * h], acc.regs[4 * j + 2 * h + 1]) };
                });
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::frag_position;

    #[test]
    fn frag_positions_cover_the_block() {
        for n in [64usize, 128, 256] {
            let mut seen = std::vec![false; 64 * n];
            for t in 0..128 {
                for i in 0..n / 2 {
                    let (r, c) = frag_position(t, i);
                    assert!(r < 64 && c < n);
                    assert!(!seen[r * n + c], "({r}, {c}) twice");
                    seen[r * n + c] = true;
                }
            }
            assert!(seen.iter().all(|&s| s));
        }
    }
}
