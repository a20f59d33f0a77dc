//! How a [`MatrixMut`](super::MatrixMut) parameter is split between the threads of a launch,
//! fixed by its type: the block tile's shape, the order in which blocks take tiles, and how a
//! block's tile is shared between its threads or its warps.
//!
//! The split is in the parameter's *type* so that every thread of the launch uses the same
//! one: a shape or an order picked at run time (from a thread's index, in one branch but not
//! another) could give two threads overlapping elements. A kernel names it once, in its
//! signature:
//!
//! ```ignore
//! use sluice_device::tile::{ByColumns, MatrixMut, ThreadTiles};
//! // Block tiles of 32 × 32, block (x, y) takes tile (x, y), each tile written by a
//! // (32, 8) block of threads, four elements per thread.
//! #[kernel]
//! pub fn transpose(#[matrix(rows = cols, cols = rows)] out: MatrixMut<f32, ThreadTiles<32, 32, 32, 8, ByColumns>>,
//!                  input: &[f32], rows: u32, cols: u32) { /* ... */ }
//! ```

use core::marker::PhantomData;

use super::global::Raster;

/// The order in which blocks take the tiles of a [`MatrixMut`](super::MatrixMut): one of
/// [`ByRows`], [`ByColumns`], [`Grouped`]. Sealed: each is a bijection from blocks onto
/// tiles ([`Raster::tile`]).
pub trait Order: sealed::Sealed {
    /// The order as a value.
    const RASTER: Raster;
}

/// Blocks take tiles along rows of tiles ([`Raster::RowMajor`]): with a grid of `tiles_n`
/// blocks across, block `(x, y)` takes tile `(y, x)`.
pub struct ByRows;
/// Blocks take tiles down columns of tiles ([`Raster::ColumnMajor`]): with a grid of
/// `tiles_m` blocks across, block `(x, y)` takes tile `(x, y)`.
pub struct ByColumns;
/// Triton's grouped order ([`Raster::Grouped`]): groups of `G` rows of tiles, walked column
/// by column inside a group, so that consecutive blocks share rows of A and columns of B in
/// L2.
pub struct Grouped<const G: u32>;

impl Order for ByRows {
    const RASTER: Raster = Raster::RowMajor;
}
impl Order for ByColumns {
    const RASTER: Raster = Raster::ColumnMajor;
}
impl<const G: u32> Order for Grouped<G> {
    const RASTER: Raster = Raster::Grouped(G);
}

/// A split of a [`MatrixMut`](super::MatrixMut) into block tiles of `BM × BN` taken in the
/// [`Order`] `O`, and of each block tile between the block's threads
/// ([`ThreadTiles`]) or warps ([`WarpTiles`]). Sealed.
pub trait Tiling: sealed::Sealed {
    /// Rows of a block tile.
    const BM: usize;
    /// Columns of a block tile.
    const BN: usize;
    /// The order in which blocks take the tiles.
    const RASTER: Raster;
    /// The block a tile is written by, `(TX, TY)` of a [`ThreadTiles`]; `None` where the
    /// split does not fix it. `#[kernel(block = ..)]` compares it with the block it declares.
    #[doc(hidden)]
    const THREAD_LAYOUT: Option<(usize, usize)> = None;
}

/// What `#[kernel(block = (x, y, z))]` checks at compile time for each `MatrixMut<T, L>`
/// parameter: a [`ThreadTiles`] split's `(TX, TY, 1)` is the declared block (else
/// `BlockTile::partition` would fail every launch).
#[doc(hidden)]
pub const fn __check_block_layout<L: Tiling>(x: u32, y: u32, z: u32) {
    if let Some((tx, ty)) = L::THREAD_LAYOUT {
        if tx != x as usize || ty != y as usize || z != 1 {
            panic!(
                "#[kernel(block = ..)]: this MatrixMut's ThreadTiles<BM, BN, TX, TY> is written by blocks of (TX, TY, 1) \
                 (the note below names them), which is not the block the kernel declares (partition() would fail \
                 every launch): make them the same"
            );
        }
    }
}

/// Block tiles of `BM × BN` in the order `O`, each written by a block of exactly `TX × TY`
/// threads ([`BlockTile::partition`](super::BlockTile::partition)): thread `(x, y)` owns the
/// tile's elements `(y + i * TY, x + j * TX)`. `BM` must be a multiple of `TY` and `BN` of
/// `TX` (checked at compile time).
pub struct ThreadTiles<const BM: usize, const BN: usize, const TX: usize, const TY: usize, O: Order = ByRows>(
    PhantomData<O>,
);

/// Block tiles of `BM × BN` in the order `O`, each split into warp tiles of `WM × WN`
/// ([`BlockTile::warp_tile`](super::BlockTile::warp_tile)), which a warp writes from its
/// MMA accumulators ([`crate::mma::Warp::store`]). `BM` must be a multiple of `WM` and `BN`
/// of `WN` (checked at compile time).
pub struct WarpTiles<const BM: usize, const BN: usize, const WM: usize, const WN: usize, O: Order = ByRows>(
    PhantomData<O>,
);

/// Block tiles of `BM × BN` in the order `O`, each split by rows between the block's
/// warpgroups (128 threads each): warpgroup `g` takes rows `64 g .. 64 g + 64`
/// ([`BlockTile::warpgroup_tile`](super::BlockTile::warpgroup_tile)), which it writes from its
/// warpgroup MMA accumulators ([`crate::wgmma::Warpgroup::store`]). `BM` must be a multiple
/// of 64 (checked at compile time).
pub struct WarpgroupTiles<const BM: usize, const BN: usize, O: Order = ByRows>(PhantomData<O>);

impl<const BM: usize, const BN: usize, O: Order> Tiling for WarpgroupTiles<BM, BN, O> {
    const BM: usize = BM;
    const BN: usize = BN;
    const RASTER: Raster = O::RASTER;
}

/// Block tiles of `BM × BN` in the order `O` for a warp-specialised block
/// ([`crate::tma::WsPipeline`]): warpgroup 0 only copies and owns no rows; consumer
/// warpgroup `g ≥ 1` takes rows `64 (g - 1) .. 64 g`
/// ([`BlockTile::consumer_tile`](super::BlockTile::consumer_tile)), which it writes from its
/// warpgroup MMA accumulators ([`crate::wgmma::Warpgroup::store`]). `BM` must be a multiple
/// of 64 (checked at compile time).
pub struct ConsumerTiles<const BM: usize, const BN: usize, O: Order = ByRows>(PhantomData<O>);

impl<const BM: usize, const BN: usize, O: Order> Tiling for ConsumerTiles<BM, BN, O> {
    const BM: usize = BM;
    const BN: usize = BN;
    const RASTER: Raster = O::RASTER;
}

impl<const BM: usize, const BN: usize, const TX: usize, const TY: usize, O: Order> Tiling
    for ThreadTiles<BM, BN, TX, TY, O>
{
    const BM: usize = BM;
    const BN: usize = BN;
    const RASTER: Raster = O::RASTER;
    const THREAD_LAYOUT: Option<(usize, usize)> = Some((TX, TY));
}

impl<const BM: usize, const BN: usize, const WM: usize, const WN: usize, O: Order> Tiling
    for WarpTiles<BM, BN, WM, WN, O>
{
    const BM: usize = BM;
    const BN: usize = BN;
    const RASTER: Raster = O::RASTER;
}

/// A matrix dimension as a kernel parameter gives it (`#[matrix(rows = n, ...)]`): an
/// integer of 8 to 64 bits or `usize`/`isize`; `None` for a negative one (the matrix then
/// does not fit). A literal past `i32` needs its suffix (`rows = 3_000_000_000u64`).
pub trait Dim: Copy + sealed::Sealed {
    /// The dimension, or `None` if negative or past `usize`.
    fn dim(self) -> Option<usize>;
}

macro_rules! dims {
    ($($t:ty),*) => {$(
        impl sealed::Sealed for $t {}
        impl Dim for $t {
            #[inline(always)]
            fn dim(self) -> Option<usize> {
                usize::try_from(self).ok()
            }
        }
    )*};
}
dims!(u8, u16, u32, u64, usize, i8, i16, i32, i64, isize);

mod sealed {
    pub trait Sealed {}
    impl Sealed for super::ByRows {}
    impl Sealed for super::ByColumns {}
    impl<const G: u32> Sealed for super::Grouped<G> {}
    impl<const BM: usize, const BN: usize, const TX: usize, const TY: usize, O: super::Order> Sealed
        for super::ThreadTiles<BM, BN, TX, TY, O>
    {
    }
    impl<const BM: usize, const BN: usize, const WM: usize, const WN: usize, O: super::Order> Sealed
        for super::WarpTiles<BM, BN, WM, WN, O>
    {
    }
    impl<const BM: usize, const BN: usize, O: super::Order> Sealed for super::WarpgroupTiles<BM, BN, O> {}
    impl<const BM: usize, const BN: usize, O: super::Order> Sealed for super::ConsumerTiles<BM, BN, O> {}
}
