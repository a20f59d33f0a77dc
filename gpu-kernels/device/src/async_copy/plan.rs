//! Copy plans: the tile-filling copies of a loop, worked out once.
//!
//! A k-loop copies the same tile shape from the same matrix at a position that moves by one
//! tile per step: A's tiles along the columns, B's along the rows. [`FillTile::copy_from`]
//! works out each copy from scratch (this thread's chunks, their source addresses, which
//! lie inside the matrix); a [`CopyPlan`] does that once, before the loop, and each
//! [`FillTile::copy_step`] then costs a pointer, a compare and the `cp.async` per chunk —
//! CUTLASS's precomputed tile iterators. The result is the same as `copy_from` at the
//! step's position, zero-filling included; so are the checks (a chunk is read only where it
//! lies inside the source).

use bytemuck::Pod;

use super::{imp, Threads};
use crate::tile::{FillTile, Layout, Matrix, Row};

/// Which way a [`CopyPlan`]'s tile moves, one tile per step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Walk {
    /// Step `s` copies the tile at `(row0, col0 + s * COLS)`: the k-tiles of a row-major A.
    Cols,
    /// Step `s` copies the tile at `(row0 + s * ROWS, col0)`: the k-tiles of a row-major B.
    Rows,
}

/// The most 16-byte chunks one thread copies per step on the fast path (a `128 × 64` bf16
/// tile over 128 threads is 8); a plan with more copies through [`FillTile::copy_from`].
const MAX_CHUNKS: usize = 16;

/// This thread's share of the copies of an `L`-shaped tile from `src`, for every step of a
/// walk ([`Walk`]): made once by [`CopyPlan::new`], used by [`FillTile::copy_step`].
///
/// ```ignore
/// let plan_a = CopyPlan::<bf16, Swizzled<128, 32>, 256>::new(&threads, &a, row0, 0, Walk::Cols);
/// let plan_b = CopyPlan::<bf16, Swizzled<32, 256>, 256>::new(&threads, &b, 0, col0, Walk::Rows);
/// // ... in the pipeline's fills, for k-tile `kt`:
/// ta.copy_step(&plan_a, kt);
/// tb.copy_step(&plan_b, kt);
/// ```
#[derive(Clone, Copy, Debug)]
pub struct CopyPlan<'s, T, L, const N: u32> {
    src: Matrix<'s, T>,
    row0: usize,
    col0: usize,
    walk: Walk,
    rank: u32,
    /// The fast path's facts; `None`: every step goes through `copy_from`.
    fast: Option<Fast>,
    _layout: core::marker::PhantomData<fn() -> L>,
}

/// What a fast plan keeps: this thread's chunk 0 (its tile column is every chunk's, its
/// rows `R` apart, `R = N / chunks per tile row`), where it starts in the source, and how
/// far the source reaches past it.
#[derive(Clone, Copy, Debug)]
struct Fast {
    /// Row of chunk 0 in the tile, and its first column.
    r0: u32,
    c0: u32,
    /// Element offset of chunk 0 at step 0 (`(row0 + r0) * ld + col0 + c0`; wrapping: only
    /// used where the chunk lies inside the source).
    off0: usize,
    /// Rows and columns of the source from chunk 0's first element at step 0 to the
    /// source's edge (negative past it).
    rows_left: i64,
    cols_left: i64,
}

impl<'s, T: Pod, L: Layout<Major = Row>, const N: u32> CopyPlan<'s, T, L, N> {
    /// Elements per chunk.
    const V: usize = 16 / core::mem::size_of::<T>();
    /// Chunks per tile row.
    const PER_ROW: usize = L::COLS / Self::V;
    /// Chunks of the tile, and this thread's share of them.
    const CHUNKS: usize = L::ROWS * Self::PER_ROW;
    const MINE: usize = Self::CHUNKS.div_ceil(N as usize);
    /// Whether a thread's chunks share a tile column, `N / PER_ROW` rows apart, and every
    /// thread has as many: the shape the fast path assumes.
    const REGULAR: bool = Self::PER_ROW > 0
        && (N as usize).is_multiple_of(Self::PER_ROW)
        && Self::CHUNKS.is_multiple_of(N as usize)
        && Self::MINE <= MAX_CHUNKS;
    /// The chunks the fast path copies (none where it is never taken).
    const FAST_CHUNKS: usize = if Self::REGULAR { Self::MINE } else { 0 };

    /// The plan for the tile at `(row0, col0)` at step 0, moving as `walk` says. Call it
    /// from every thread with the same arguments (as `copy_from`).
    #[inline(always)]
    pub fn new(threads: &Threads<N>, src: &Matrix<'s, T>, row0: usize, col0: usize, walk: Walk) -> Self {
        let rank = threads.rank();
        let data = src.data();
        let size = core::mem::size_of::<T>();
        let aligned = !data.is_empty()
            && (data.as_ptr() as usize).is_multiple_of(16)
            && (src.ld() * size).is_multiple_of(16)
            && col0.is_multiple_of(Self::V)
            && imp::is_global(data.as_ptr() as *const u8);
        let fast = (Self::REGULAR && aligned).then(|| {
            let r0 = rank as usize / Self::PER_ROW;
            let c0 = (rank as usize % Self::PER_ROW) * Self::V;
            let (gr, gc) = (row0.saturating_add(r0), col0.saturating_add(c0));
            Fast {
                r0: r0 as u32,
                c0: c0 as u32,
                off0: gr.wrapping_mul(src.ld()).wrapping_add(gc),
                rows_left: left(src.rows(), gr),
                cols_left: left(src.cols(), gc),
            }
        });
        CopyPlan { src: *src, row0, col0, walk, rank, fast, _layout: core::marker::PhantomData }
    }

    /// The tile's position at step `step`.
    #[inline(always)]
    pub fn position(&self, step: usize) -> (usize, usize) {
        match self.walk {
            Walk::Cols => (self.row0, self.col0.saturating_add(step.saturating_mul(L::COLS))),
            Walk::Rows => (self.row0.saturating_add(step.saturating_mul(L::ROWS)), self.col0),
        }
    }
}

/// `edge - at` as an `i64`, saturated.
#[inline(always)]
fn left(edge: usize, at: usize) -> i64 {
    if at <= edge {
        (edge - at).min(i64::MAX as usize) as i64
    } else {
        -((at - edge).min(i64::MAX as usize) as i64)
    }
}

impl<'a, T: Pod, L: Layout<Major = Row>> FillTile<'a, T, L> {
    /// Copies step `step` of `plan`'s walk into the tile: the same copies as
    /// [`copy_from`](FillTile::copy_from) at [`CopyPlan::position`]`(step)`, with the
    /// per-thread work done once in the plan. Call it from every thread with the same
    /// arguments; the copies join this thread's open group.
    #[inline(always)]
    #[track_caller]
    pub fn copy_step<const N: u32>(&mut self, plan: &CopyPlan<'_, T, L, N>, step: usize) {
        let Some(f) = plan.fast else {
            return self.copy_step_slow(plan, step);
        };
        let size = core::mem::size_of::<T>();
        let v = CopyPlan::<T, L, N>::V;
        // Chunk `it` lies `it * R` rows below chunk 0, in its column.
        let rows_apart = N as usize / CopyPlan::<T, L, N>::PER_ROW;
        let ld = plan.src.ld();
        // This step's chunk 0: where it starts, how far the source reaches past it.
        let (advance, rows_left, cols_left) = match plan.walk {
            Walk::Cols => {
                let by = step.saturating_mul(L::COLS);
                (by, f.rows_left, f.cols_left.saturating_sub(by.min(i64::MAX as usize) as i64))
            }
            Walk::Rows => {
                let by = step.saturating_mul(L::ROWS);
                (by.wrapping_mul(ld), f.rows_left.saturating_sub(by.min(i64::MAX as usize) as i64), f.cols_left)
            }
        };
        // How many of this thread's chunk rows lie inside the source (chunk `it` is
        // `it * R` rows below chunk 0), and how many elements of each chunk along its row
        // (every chunk's column is chunk 0's): `v`, fewer at the right edge, none past it.
        let rows_in = rows_left.clamp(0, i32::MAX as i64) as u32;
        let in_row = cols_left.clamp(0, v as i64) as u32;
        let base = plan.src.data().as_ptr().wrapping_add(f.off0).wrapping_add(advance);
        if in_row == v as u32 {
            // Whole chunks (all but a tile at the right edge): each one read or zeroed.
            crate::unroll!(it in 0..CopyPlan::<T, L, N>::FAST_CHUNKS; max 16 => {
                let dst = self.addr_of(f.r0 as usize + it * rows_apart, f.c0 as usize);
                let read = rows_in > (it * rows_apart) as u32;
                // SAFETY: `dst` is this thread's chunk `it` of the tile (16-aligned, inside
                // it: the plan's shape is whole chunks, `MINE` of them per thread), which only
                // copies write while it is filled. With `read`, the chunk's row `row0' + r0 +
                // it R` is below the source's `rows` and its columns `col0' + c0 ..+ v`
                // inside `cols`, so the 16 bytes lie in the matrix, which fits its slice
                // (`Matrix` checked `(rows - 1) * ld + cols <= len`), 16-aligned (the plan
                // checked the slice, `ld` and `col0`; steps move by whole chunks); without,
                // nothing is read. The launch keeps the slice alive and unwritten.
                unsafe { imp::copy16_or_zero(dst, base.wrapping_add(it * rows_apart * ld) as *const u8, read) };
            });
        } else {
            // The right edge: `in_row < v` elements of each chunk inside (possibly none).
            crate::unroll!(it in 0..CopyPlan::<T, L, N>::FAST_CHUNKS; max 16 => {
                let dst = self.addr_of(f.r0 as usize + it * rows_apart, f.c0 as usize);
                let valid = if rows_in > (it * rows_apart) as u32 { in_row } else { 0 };
                let p = if valid > 0 { base.wrapping_add(it * rows_apart * ld) } else { plan.src.data().as_ptr() };
                // SAFETY: as above, for the `valid` elements from `p` (none when 0).
                unsafe { imp::copy16(dst, p as *const u8, valid * size as u32) };
            });
        }
    }

    /// [`copy_step`](Self::copy_step) for a plan off the fast path (an unaligned source, a
    /// tile shape whose chunks do not fall evenly on the threads): `copy_from` at the
    /// step's position. Out of line, so that the fast path's loop stays small.
    #[cold]
    #[inline(never)]
    #[track_caller]
    fn copy_step_slow<const N: u32>(&mut self, plan: &CopyPlan<'_, T, L, N>, step: usize) {
        let (row0, col0) = plan.position(step);
        let threads = Threads::<N> { rank: plan.rank, _here: core::marker::PhantomData };
        self.copy_from(&threads, &plan.src, row0, col0)
    }
}
