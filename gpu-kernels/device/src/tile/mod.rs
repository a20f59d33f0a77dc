//! Typed 2-D tiles of shared memory, and typed 2-D views of global memory: what the tensor
//! cores ([`crate::mma`]) read and what asynchronous copies ([`crate::async_copy`]) fill.
//!
//! | sluice | CUDA C++ / CuTe | PTX |
//! | --- | --- | --- |
//! | [`Tile<T, L>`] | a `__shared__ T[R][C]` (padded) or CuTe `Tensor<smem_ptr, Layout<Swizzle>>` | `ld.shared`, `st.shared` |
//! | [`dynamic_tiles`], [`TileSet`] | carving `extern __shared__` by hand | `.extern .shared` |
//! | [`Matrix`] | `const T* + rows, cols, ld` | — |
//! | [`MatrixMut::block_tile`], [`BlockTile::warp_tile`], [`BlockTile::partition`] (split by [`ThreadTiles`] / [`WarpTiles`]) | `blockIdx`/`warpId` tile arithmetic, block swizzling | — |
//!
//! A tile's layout ([`spec::layout`](crate::spec::layout): [`RowMajor`], [`ColMajor`],
//! [`Swizzled`]) is part of its type, so the operations that depend on it — `ldmatrix` with
//! or without `.trans`, 16-byte `cp.async` chunks — pick their form at compile time, and a
//! tile of a layout an operation cannot read is a compile error. The shape is in the type
//! too: an index is checked against constants, which the optimiser folds away when the
//! index is (as in a kernel's inner loop) a constant plus a warp's offset of a known range.
//!
//! # Ownership
//!
//! A `Tile` handle is not `Copy`: who holds it may read and write the tile; giving it to an
//! asynchronous copy ([`crate::async_copy`]) moves it, so it can be neither read nor
//! written until the copy is waited for. Every thread of the block holds its own handle to
//! the same memory, as with [`crate::shared`]'s arrays, and the same rules hold between
//! threads: accesses are inline PTX on `Pod` elements (a race gives a wrong value, never
//! undefined behaviour), and a block barrier orders one phase's writes before the next
//! phase's reads — the pipelines of [`crate::async_copy`] place those barriers themselves.
//!
//! # Hardware support
//!
//! Every GPU (shared memory); the 16-byte alignment `ldmatrix` and `cp.async` need is
//! checked at compile time from the layout.
//!
//! # On the CPU
//!
//! Tiles live in the block's shared memory of the CPU runtime ([`crate::cpu`]), addressed
//! exactly as on the GPU (same offsets, same swizzle); reads and writes go through
//! [`crate::shared::SharedPtr`], which the runtime bounds-checks.
//!
//! # Example (device code)
//!
//! ```ignore
//! use sluice_device::tile::{dynamic_tiles, Tile};
//! use sluice_device::spec::layout::RowMajor;
//! // 16 × 16 f32, rows padded by 4 (launch with at least 128 + 16 * 20 * 4 bytes of dynamic shared memory)
//! let mut t: Tile<f32, RowMajor<16, 16, 4>> = dynamic_tiles();
//! let (r, c) = (thread::thread_idx_y() as usize, thread::thread_idx_x() as usize);
//! t.set(r, c, input[r * 16 + c]);
//! sync::sync_threads();
//! let transposed = t.get(c, r);
//! ```

use core::marker::PhantomData;

use bytemuck::Pod;

use crate::shared::SharedPtr;
use crate::spec::layout::swizzle_fits;
pub use crate::spec::layout::{Axis, Col, ColMajor, Layout, Row, RowMajor, Swizzled};

mod global;
mod tiling;
#[doc(hidden)]
pub use global::__matrix_from_launch;
pub use global::{BlockTile, Matrix, MatrixMut, MatrixTile, Raster, ThreadPart, TilePart, WarpTile, WarpgroupTile};
pub use tiling::__check_block_layout;
pub use tiling::{
    ByColumns, ByRows, ConsumerTiles, Dim, Grouped, Order, ThreadTiles, Tiling, WarpTiles, WarpgroupTiles,
};

/// A tile of `L::ROWS × L::COLS` elements of `T` in the block's shared memory, laid out as
/// `L`. See the [module docs](self).
pub struct Tile<T, L> {
    base: SharedPtr<T>,
    // `L` is a marker; the tile owns no `L`.
    _layout: PhantomData<fn() -> L>,
}

impl<T: Pod, L: Layout> Tile<T, L> {
    /// Bytes the tile spans.
    pub const BYTES: usize = L::SPAN * core::mem::size_of::<T>();

    /// The compile-time checks of a layout: a swizzled tile must be whole swizzle blocks.
    const WELL_FORMED: () = {
        assert!(
            !L::SWIZZLED || swizzle_fits(L::ROWS, L::COLS, core::mem::size_of::<T>()),
            "a Swizzled tile's rows must be a power of two of at least 32 bytes, and the tile whole 8-row blocks"
        );
    };

    /// The tile at shared-window address `addr`.
    ///
    /// # Safety
    ///
    /// `addr .. addr + BYTES` is inside this block's shared memory, aligned to 16 bytes
    /// (128 for a swizzled tile to be free of bank conflicts), and no other tile handle
    /// of this thread names those bytes while this one lives (the type-state of
    /// [`crate::async_copy`] relies on it).
    #[inline(always)]
    pub unsafe fn from_addr(addr: u32) -> Tile<T, L> {
        let () = Self::WELL_FORMED;
        Tile { base: SharedPtr::from_addr(addr), _layout: PhantomData }
    }

    /// Rows.
    #[inline(always)]
    pub const fn rows(&self) -> usize {
        L::ROWS
    }

    /// Columns.
    #[inline(always)]
    pub const fn cols(&self) -> usize {
        L::COLS
    }

    /// The shared-window address of the tile's first byte.
    #[inline(always)]
    pub fn addr(&self) -> u32 {
        self.base.addr()
    }

    /// The shared-window address of element `(r, c)`, unchecked (in bounds is the
    /// caller's concern: out of bounds it is some other address, which `ld.shared` on the
    /// GPU and the CPU runtime's arena bound to the block's shared memory).
    #[inline(always)]
    pub(crate) fn addr_of(&self, r: usize, c: usize) -> u32 {
        self.base.addr() + (L::offset(r, c, core::mem::size_of::<T>()) * core::mem::size_of::<T>()) as u32
    }

    /// Element `(r, c)`. Panics if `r >= rows` or `c >= cols`.
    #[inline(always)]
    #[track_caller]
    pub fn get(&self, r: usize, c: usize) -> T {
        crate::dassert!(r < L::ROWS && c < L::COLS, "tile index out of bounds");
        // SAFETY: in bounds (checked), so inside the tile's bytes (`from_addr`'s contract);
        // aligned for `T` (the tile is 16-aligned, offsets are whole elements); `T: Pod`
        // takes any bits.
        unsafe { SharedPtr::<T>::from_addr(self.addr_of(r, c)).read() }
    }

    /// Element `(r, c)`, unchecked: for reads whose region the caller checked once (the
    /// fragment loads of [`crate::mma`], which fold the check into their batch's check).
    ///
    /// # Safety
    ///
    /// `r < rows` and `c < cols`.
    #[inline(always)]
    #[track_caller]
    pub(crate) unsafe fn read_unchecked(&self, r: usize, c: usize) -> T {
        // SAFETY: in bounds (the caller's duty), so inside the tile's bytes; aligned and
        // `Pod` as in `get`.
        unsafe { SharedPtr::<T>::from_addr(self.addr_of(r, c)).read() }
    }

    /// Stores `v` at `(r, c)`. Panics if out of bounds. Other threads see it after the
    /// next block barrier.
    #[inline(always)]
    #[track_caller]
    pub fn set(&mut self, r: usize, c: usize, v: T) {
        crate::dassert!(r < L::ROWS && c < L::COLS, "tile index out of bounds");
        // SAFETY: as in `get`; `T: Pod` has no padding.
        unsafe { SharedPtr::<T>::from_addr(self.addr_of(r, c)).write(v) }
    }

    /// Stores `v` in every element, the block's threads sharing the work (thread
    /// `block_rank()` takes elements `rank, rank + block_size, ...` in row-major order).
    /// Call it from every thread, then a block barrier before reading.
    #[inline(always)]
    #[track_caller]
    pub fn fill_cooperative(&mut self, v: T) {
        let step = crate::thread::block_size() as usize;
        let mut i = crate::thread::block_rank() as usize;
        while i < L::ROWS * L::COLS {
            self.set(i / L::COLS, i % L::COLS, v);
            i += step;
        }
    }
}

/// A tile being filled by asynchronous copies: it can be written by copies, not read.
/// Handed out by [`crate::async_copy::Pipeline`]s and [`Tile::copy_async`] (whose copy
/// methods, `copy_from` and `zero`, are `async_copy`'s); it has no method that reads.
///
/// It lives here, beside [`Tile`], so that [`TileSet`] can name it; `async_copy`, the
/// room above, gives it its methods.
pub struct FillTile<'a, T, L> {
    tile: &'a mut Tile<T, L>,
}

impl<'a, T: Pod, L: Layout> FillTile<'a, T, L> {
    /// Wraps a tile (the tile set's `fill`).
    #[inline(always)]
    pub(crate) fn new(tile: &'a mut Tile<T, L>) -> Self {
        FillTile { tile }
    }

    /// The shared-window address of element `(r, c)`, unchecked (see [`Tile::addr_of`]).
    #[inline(always)]
    pub(crate) fn addr_of(&self, r: usize, c: usize) -> u32 {
        self.tile.addr_of(r, c)
    }

    /// Stores `v` at `(r, c)` (bounds-checked, as [`Tile::set`]).
    #[inline(always)]
    #[track_caller]
    pub(crate) fn set(&mut self, r: usize, c: usize, v: T) {
        self.tile.set(r, c, v)
    }
}

impl<T, L> core::fmt::Debug for Tile<T, L> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "Tile({:#x})", self.base.addr())
    }
}

/// One tile, or a tuple of tiles, placed side by side in shared memory: a stage of a
/// pipeline ([`crate::async_copy::Pipeline`]), or what [`dynamic_tiles`] carves.
/// Implemented for [`Tile`] and tuples of up to four tiles.
pub trait TileSet: Sized {
    /// Bytes the set spans, each tile's start rounded up to 128 bytes.
    const BYTES: usize;

    /// The set seen by asynchronous copies that fill it ([`FillTile`]s: written, not read).
    type Fill<'a>
    where
        Self: 'a;

    /// The set as its copies see it. Only the pipelines of [`crate::async_copy`] call it
    /// (the token cannot be made outside the device std): a `FillTile` made outside a
    /// pipeline would let a tile be read while copies into it are in flight.
    fn fill(&mut self, token: seal::FillToken) -> Self::Fill<'_>;

    /// The set whose first tile starts at `addr`.
    ///
    /// # Safety
    ///
    /// As [`Tile::from_addr`], for `addr .. addr + BYTES`; `addr` is 128-byte aligned.
    unsafe fn at(addr: u32) -> Self;
}

/// The seal of [`TileSet::fill`].
pub(crate) mod seal {
    /// A token only the device std can make: the argument of [`super::TileSet::fill`].
    #[derive(Clone, Copy, Debug)]
    pub struct FillToken(pub(crate) ());
}

const fn round128(x: usize) -> usize {
    (x + 127) & !127
}

impl<T: Pod, L: Layout> TileSet for Tile<T, L> {
    const BYTES: usize = round128(Tile::<T, L>::BYTES);
    type Fill<'a>
        = FillTile<'a, T, L>
    where
        Self: 'a;
    #[inline(always)]
    fn fill(&mut self, _token: seal::FillToken) -> FillTile<'_, T, L> {
        FillTile::new(self)
    }
    #[inline(always)]
    unsafe fn at(addr: u32) -> Self {
        // SAFETY: forwarded (the caller's contract is `from_addr`'s).
        unsafe { Tile::from_addr(addr) }
    }
}

macro_rules! tuple_sets {
    ($(($($t:ident),+))*) => {$(
        impl<$($t: TileSet),+> TileSet for ($($t,)+) {
            const BYTES: usize = 0 $(+ $t::BYTES)+;
            type Fill<'a> = ($($t::Fill<'a>,)+) where Self: 'a;
            #[inline(always)]
            #[allow(non_snake_case)]
            fn fill(&mut self, token: seal::FillToken) -> Self::Fill<'_> {
                let ($($t,)+) = self;
                ($($t.fill(token),)+)
            }
            #[inline(always)]
            #[allow(unused_assignments)]
            unsafe fn at(addr: u32) -> Self {
                let mut a = addr;
                ($({
                    // SAFETY: each member gets its own 128-aligned bytes inside the set's.
                    let t = unsafe { $t::at(a) };
                    a += $t::BYTES as u32;
                    t
                },)+)
            }
        }
    )*};
}
tuple_sets! { (A, B) (A, B, C) (A, B, C, D) (A, B, C, D, E) (A, B, C, D, E, F) }

/// The tile set `S` at the start of the launch's dynamic shared memory (rounded up to 128
/// bytes). Panics if the launch gave less dynamic shared memory than
/// [`dynamic_tiles_bytes::<S>()`](dynamic_tiles_bytes).
///
/// Each call returns handles to the same memory: call it once per kernel (a second set of
/// handles would let one thread hold two views of one tile, which the type-state of
/// [`crate::async_copy`] cannot see).
#[inline(always)]
#[track_caller]
pub fn dynamic_tiles<S: TileSet>() -> S {
    let base = crate::shared::dynamic_shared::<u8>().as_ptr().addr();
    let start = (base + 127) & !127;
    let have = crate::shared::dynamic_shared_bytes() as u64;
    crate::dassert!(
        (start - base) as u64 + S::BYTES as u64 <= have,
        "dynamic_tiles: the launch's dynamic shared memory is smaller than the tiles (dynamic_tiles_bytes)"
    );
    // SAFETY: `start .. start + BYTES` is inside the dynamic region (checked), 128-aligned.
    unsafe { S::at(start) }
}

/// The dynamic shared memory (bytes) a launch must give for [`dynamic_tiles::<S>`]: the
/// set's bytes plus 112 for the alignment of its start.
pub const fn dynamic_tiles_bytes<S: TileSet>() -> usize {
    S::BYTES + 112
}
