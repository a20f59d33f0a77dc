//! Row-major matrices in global memory: read-only ([`Matrix`], the source of tile copies)
//! and written ([`MatrixMut`], partitioned into one tile per block and one per warp or
//! thread, so that every element has one writer by construction — **if every thread agrees
//! on the partition**, see [`MatrixMut`]).

use crate::slice::DeviceSliceMut;

/// A row-major `rows × cols` matrix in a kernel's read-only slice parameter, row `r`
/// starting at element `r * ld`. The analogue of `(const T*, rows, cols, ld)`.
///
/// ```
/// use sluice_device::tile::Matrix;
/// let data = [1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0];
/// let m = Matrix::new(&data, 2, 3);
/// assert_eq!(m.get(1, 2), Some(6.0));
/// assert_eq!(m.get(2, 0), None);
/// ```
#[derive(Clone, Copy, Debug)]
pub struct Matrix<'a, T> {
    data: &'a [T],
    rows: usize,
    cols: usize,
    ld: usize,
}

#[cold]
#[track_caller]
fn bad_matrix() -> ! {
    crate::dfail!("matrix shape does not fit its slice (rows, cols, ld)")
}

/// Whether `rows × cols` with leading dimension `ld` fits `len` elements.
#[inline(always)]
const fn fits(len: usize, rows: usize, cols: usize, ld: usize) -> bool {
    if ld < cols {
        return false;
    }
    if rows == 0 || cols == 0 {
        return true;
    }
    match (rows - 1).checked_mul(ld) {
        Some(x) => x <= len && cols <= len - x,
        None => false,
    }
}

impl<'a, T: Copy> Matrix<'a, T> {
    /// The matrix whose rows are `cols` elements apart. Panics if `rows * cols` elements do
    /// not fit in `data`.
    #[inline(always)]
    #[track_caller]
    pub fn new(data: &'a [T], rows: usize, cols: usize) -> Matrix<'a, T> {
        Self::with_ld(data, rows, cols, cols)
    }

    /// The matrix whose rows are `ld` elements apart (`ld >= cols`). Panics if it does not
    /// fit in `data`.
    #[inline(always)]
    #[track_caller]
    pub fn with_ld(data: &'a [T], rows: usize, cols: usize, ld: usize) -> Matrix<'a, T> {
        if !fits(data.len(), rows, cols, ld) {
            bad_matrix();
        }
        Matrix { data, rows, cols, ld }
    }

    /// Rows.
    #[inline(always)]
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Columns.
    #[inline(always)]
    pub fn cols(&self) -> usize {
        self.cols
    }

    /// Elements between the starts of consecutive rows.
    #[inline(always)]
    pub fn ld(&self) -> usize {
        self.ld
    }

    /// Element `(r, c)`, or `None` outside the matrix.
    #[inline(always)]
    pub fn get(&self, r: usize, c: usize) -> Option<T> {
        if r < self.rows && c < self.cols {
            // SAFETY: r < rows, c < cols and `fits` give r * ld + c < len.
            Some(unsafe { *self.data.get_unchecked(r * self.ld + c) })
        } else {
            None
        }
    }

    /// The slice.
    #[inline(always)]
    pub fn data(&self) -> &'a [T] {
        self.data
    }
}

impl<'a, T> Matrix<'a, T> {
    /// The matrix whose rows are `cols` elements apart, or `None` if `rows * cols` exceeds
    /// `data.len()` (where [`Matrix::new`] fails the launch).
    ///
    /// ```
    /// use sluice_device::tile::Matrix;
    /// let data: Vec<f32> = (0..12).map(|v| v as f32).collect(); // 3 × 4
    /// let m = Matrix::try_new(&data, 3, 4).unwrap();
    /// let t = m.tile::<2, 2>(1, 1); // rows 2..4, columns 2..4, clipped to row 2
    /// assert_eq!((t.rows(), t.cols()), (1, 2));
    /// assert_eq!(t.get(0, 1), Some(&11.0));
    /// assert_eq!(t.get(1, 0), None); // past the matrix's last row
    /// assert!(Matrix::try_new(&data, 4, 4).is_none()); // 16 > 12 elements
    /// ```
    #[inline(always)]
    pub fn try_new(data: &'a [T], rows: usize, cols: usize) -> Option<Matrix<'a, T>> {
        let fits = rows.checked_mul(cols).is_some_and(|n| n <= data.len());
        fits.then_some(Matrix { data, rows, cols, ld: cols })
    }

    /// The `TR × TC` tile at tile coordinates `(tile_row, tile_col)`, clipped at the
    /// matrix's edge (possibly to nothing). Reading is shared, so any thread may take any
    /// tile.
    #[inline(always)]
    pub fn tile<const TR: usize, const TC: usize>(
        &self,
        tile_row: usize,
        tile_col: usize,
    ) -> MatrixTile<'a, T, TR, TC> {
        let (row0, col0) = (tile_row.saturating_mul(TR), tile_col.saturating_mul(TC));
        let rows = self.rows.saturating_sub(row0).min(TR);
        let cols = self.cols.saturating_sub(col0).min(TC);
        // Inside the matrix (`row0 < rows`, `col0 < cols`) the first element's index is
        // below `(rows - 1) * ld + cols <= len`: no overflow. An empty tile never reads it.
        let base = if rows > 0 && cols > 0 { row0 * self.ld + col0 } else { 0 };
        MatrixTile { data: self.data, ld: self.ld, base, rows, cols }
    }
}

/// A read-only `TR × TC` tile of a [`Matrix`], clipped at the matrix's edge: `get(r, c)`
/// checks `r` and `c` against the tile's extent only (two compares, which a kernel
/// writes anyway at a matrix's edge); the element's index is in bounds by construction.
#[derive(Debug, Clone, Copy)]
pub struct MatrixTile<'a, T, const TR: usize, const TC: usize> {
    data: &'a [T],
    ld: usize,
    base: usize,
    rows: usize,
    cols: usize,
}

impl<'a, T, const TR: usize, const TC: usize> MatrixTile<'a, T, TR, TC> {
    /// Element `(r, c)` of the tile, or `None` outside the matrix (or `r >= TR`,
    /// `c >= TC`).
    #[inline(always)]
    pub fn get(&self, r: usize, c: usize) -> Option<&'a T> {
        if r < self.rows && c < self.cols {
            // SAFETY: r < rows and c < cols of the clipped tile: the element is inside the
            // matrix, whose rows (`ld` apart, `ld >= cols`) fit the slice (`Matrix`'s
            // constructors checked it).
            Some(unsafe { self.data.get_unchecked(self.base + r * self.ld + c) })
        } else {
            None
        }
    }

    /// Rows of the tile inside the matrix.
    #[inline(always)]
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Columns of the tile inside the matrix.
    #[inline(always)]
    pub fn cols(&self) -> usize {
        self.cols
    }
}

/// How blocks are assigned to the tiles of a [`MatrixMut`]: a bijection from the block's
/// linear rank ([`crate::thread::grid_block_rank`]) onto the tiles, so that no two blocks
/// get the same tile, whatever the grid's shape (blocks past the last tile get none).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Raster {
    /// Tile `(rank / tiles_n, rank % tiles_n)`: along rows of tiles.
    RowMajor,
    /// Tile `(rank % tiles_m, rank / tiles_m)`: down columns of tiles. With a grid of
    /// `(tiles_m, tiles_n)` blocks, block `(x, y)` gets tile `(x, y)` — the output tile of a
    /// transpose whose input tile is `(y, x)`.
    ColumnMajor,
    /// Triton's grouped order: groups of `g` rows of tiles, walked column by column inside
    /// a group, so that consecutive blocks share rows of A and columns of B in L2.
    Grouped(u32),
}

impl Raster {
    /// The tile `(tile_row, tile_col)` of block `rank` among `tiles_m × tiles_n`, or `None`
    /// past the last.
    ///
    /// ```
    /// use sluice_device::tile::Raster;
    /// assert_eq!(Raster::RowMajor.tile(5, 3, 4), Some((1, 1)));
    /// assert_eq!(Raster::ColumnMajor.tile(5, 3, 4), Some((2, 1)));
    /// assert_eq!(Raster::Grouped(2).tile(1, 3, 4), Some((1, 0)));
    /// assert_eq!(Raster::Grouped(2).tile(12, 3, 4), None);
    /// ```
    #[inline(always)]
    pub fn tile(self, rank: u64, tiles_m: u64, tiles_n: u64) -> Option<(u64, u64)> {
        if rank >= tiles_m.saturating_mul(tiles_n) {
            return None;
        }
        match self {
            Raster::RowMajor => Some((rank / tiles_n, rank % tiles_n)),
            Raster::ColumnMajor => Some((rank % tiles_m, rank / tiles_m)),
            Raster::Grouped(g) => {
                // Clamped to tiles_m (the same groups): `g * tiles_n` stays below
                // `tiles_m * tiles_n`, which the rank check above bounds.
                let g = if g == 0 { 1 } else { (g as u64).min(tiles_m) };
                let per_group = g.saturating_mul(tiles_n);
                let first = (rank / per_group) * g;
                let size = if tiles_m - first < g { tiles_m - first } else { g };
                let in_group = rank % per_group;
                Some((first + in_group % size, in_group / size))
            }
        }
    }
}

impl Raster {
    /// [`Raster::tile`] of this block ([`crate::thread::grid_block_rank`]), without a
    /// division where the grid is shaped like the tiles: a row-major raster on a grid of
    /// `tiles_n` blocks across (block `(x, y)` takes tile `(y, x)`), a column-major one on
    /// a grid of `tiles_m` across (tile `(x, y)`); otherwise 32-bit divisions where the
    /// numbers fit, 64-bit ones where they do not. The same tile as `tile` in every case.
    #[inline(always)]
    fn tile_of_this_block(self, tiles_m: u64, tiles_n: u64) -> Option<(u64, u64)> {
        use crate::thread::{block_idx_x, block_idx_y, grid_dim_x, grid_dim_z};
        let (x, y) = (block_idx_x() as u64, block_idx_y() as u64);
        let flat = grid_dim_z() == 1;
        match self {
            Raster::RowMajor if flat && grid_dim_x() as u64 == tiles_n => (y < tiles_m).then_some((y, x)),
            Raster::ColumnMajor if flat && grid_dim_x() as u64 == tiles_m => (y < tiles_n).then_some((x, y)),
            _ => {
                let rank = crate::thread::grid_block_rank();
                let small = u32::MAX as u64;
                if rank <= small && tiles_m <= small && tiles_n <= small && tiles_m * tiles_n <= small {
                    // The same arithmetic in 32 bits (a 64-bit division is a software routine).
                    self.tile32(rank as u32, tiles_m as u32, tiles_n as u32).map(|(r, c)| (r as u64, c as u64))
                } else {
                    self.tile(rank, tiles_m, tiles_n)
                }
            }
        }
    }

    /// [`Raster::tile`] in 32-bit arithmetic (`tiles_m * tiles_n` fits in `u32`).
    #[inline(always)]
    fn tile32(self, rank: u32, tiles_m: u32, tiles_n: u32) -> Option<(u32, u32)> {
        if rank >= tiles_m * tiles_n {
            return None;
        }
        match self {
            Raster::RowMajor => Some((rank / tiles_n, rank % tiles_n)),
            Raster::ColumnMajor => Some((rank % tiles_m, rank / tiles_m)),
            Raster::Grouped(g) => {
                let g = if g == 0 { 1 } else { g };
                // `g * tiles_n` may pass u32: clamp g to tiles_m first (the same groups).
                let g = g.min(tiles_m);
                let per_group = g * tiles_n;
                let first = (rank / per_group) * g;
                let size = if tiles_m - first < g { tiles_m - first } else { g };
                let in_group = rank % per_group;
                Some((first + in_group % size, in_group / size))
            }
        }
    }
}

/// A row-major `rows × cols` matrix in a kernel's written slice parameter. It hands out
/// writes only through [`BlockTile`], [`WarpTile`] and [`ThreadPart`], whose elements are
/// disjoint between blocks, warps and threads, so a safe kernel writes each element from
/// one thread at most.
///
/// **Known gap** (an adversarial review, 2026-12-01): that holds when every thread of the
/// launch builds its `MatrixMut` from the same slice with the same `rows`, `cols` and `ld`
/// and takes its tiles with the same tile shapes and [`Raster`] — as every kernel written
/// from the launch's parameters does. Threads that disagree (a shape computed from the
/// thread's index, a block that takes `block_tile::<64, 64>` where another takes
/// `::<32, 32>`) can be handed overlapping elements: a data race that the types do not rule
/// out. The CPU backend's checking mode reports it (`Error::KernelCheck`); the GPU does not.
/// The planned fix puts the shape into the parameter's type, so that it is the launch's.
pub struct MatrixMut<'a, T> {
    // Every write goes through the slice's element access (on the CPU, where the race
    // checker records it).
    slice: DeviceSliceMut<'a, T>,
    rows: usize,
    cols: usize,
    ld: usize,
}

impl<'a, T> MatrixMut<'a, T> {
    /// The matrix whose rows are `cols` apart, over `slice` (consumed). Panics if it does
    /// not fit.
    #[inline(always)]
    #[track_caller]
    pub fn new(slice: DeviceSliceMut<'a, T>, rows: usize, cols: usize) -> MatrixMut<'a, T> {
        Self::with_ld(slice, rows, cols, cols)
    }

    /// The matrix whose rows are `cols` apart, over `slice` (consumed), or `None` if it
    /// does not fit (where [`MatrixMut::new`] fails the launch).
    ///
    /// ```
    /// # use sluice_device::tile::MatrixMut;
    /// # use sluice_device::slice::DeviceSliceMut;
    /// # fn body(out: DeviceSliceMut<f32>, rows: usize, cols: usize) {
    /// let Some(m) = MatrixMut::try_new(out, rows, cols) else {
    ///     return; // `out` is shorter than rows × cols: nothing to write
    /// };
    /// # let _ = m;
    /// # }
    /// ```
    #[inline(always)]
    pub fn try_new(slice: DeviceSliceMut<'a, T>, rows: usize, cols: usize) -> Option<MatrixMut<'a, T>> {
        fits(slice.len(), rows, cols, cols).then_some(MatrixMut { slice, rows, cols, ld: cols })
    }

    /// The matrix whose rows are `ld` apart. Panics if it does not fit.
    #[inline(always)]
    #[track_caller]
    pub fn with_ld(slice: DeviceSliceMut<'a, T>, rows: usize, cols: usize, ld: usize) -> MatrixMut<'a, T> {
        if !fits(slice.len(), rows, cols, ld) {
            bad_matrix();
        }
        MatrixMut { slice, rows, cols, ld }
    }

    /// This block's `BM × BN` tile, by `raster` over the tiles covering the matrix (the
    /// last row and column of tiles may hang over its edges); `None` for a block past the
    /// last tile. Every thread of a block gets the same tile, no two blocks the same.
    #[inline(always)]
    pub fn block_tile<const BM: usize, const BN: usize>(self, raster: Raster) -> Option<BlockTile<'a, T, BM, BN>> {
        let () = const { assert!(BM > 0 && BN > 0, "a block tile has at least one row and one column") };
        let tiles_m = self.rows.div_ceil(BM) as u64;
        let tiles_n = self.cols.div_ceil(BN) as u64;
        let (tm, tn) = raster.tile_of_this_block(tiles_m, tiles_n)?;
        Some(BlockTile { m: self, row0: tm as usize * BM, col0: tn as usize * BN })
    }
}

/// The `BM × BN` tile of a [`MatrixMut`] that belongs to this block.
pub struct BlockTile<'a, T, const BM: usize, const BN: usize> {
    m: MatrixMut<'a, T>,
    row0: usize,
    col0: usize,
}

impl<'a, T, const BM: usize, const BN: usize> BlockTile<'a, T, BM, BN> {
    /// The matrix row of the tile's first row.
    #[inline(always)]
    pub fn row0(&self) -> usize {
        self.row0
    }

    /// The matrix column of the tile's first column.
    #[inline(always)]
    pub fn col0(&self) -> usize {
        self.col0
    }

    /// This thread's share of the tile for a block of exactly `TX × TY` threads (`(TX,
    /// TY, 1)`; otherwise the launch fails with a message): thread `(x, y)` owns the
    /// elements `(y + i * TY, x + j * TX)` for `i < BM / TY`, `j < BN / TX` — consecutive
    /// threads of a warp write consecutive columns (coalesced), and no two threads share
    /// an element, so the writes need neither atomics nor `unsafe`. CuTe's
    /// `local_partition` of a block tile by a row-major thread layout. `BM` must be a
    /// multiple of `TY` and `BN` of `TX` (checked at compile time).
    ///
    /// ```
    /// # use sluice_device::tile::{MatrixMut, Raster};
    /// # use sluice_device::slice::DeviceSliceMut;
    /// # fn body(out: DeviceSliceMut<f32>, n: usize) {
    /// // A (32, 8) block writes its 32 × 32 tile, four rows per thread.
    /// if let Some(tile) = MatrixMut::new(out, n, n).block_tile::<32, 32>(Raster::RowMajor) {
    ///     let mut mine = tile.partition::<32, 8>();
    ///     for i in 0..mine.rows() {
    ///         let (r, c) = mine.position(i, 0); // (y + 8 i, x) inside the tile
    ///         mine.set(i, 0, (r * 32 + c) as f32);
    ///     }
    /// }
    /// # }
    /// ```
    #[inline(always)]
    #[track_caller]
    pub fn partition<const TX: usize, const TY: usize>(self) -> ThreadPart<'a, T, TX, TY> {
        let () = const {
            assert!(
                TX > 0 && TY > 0 && BM.is_multiple_of(TY) && BN.is_multiple_of(TX),
                "the thread layout must divide the block tile"
            )
        };
        let (x, y) = (crate::thread::thread_idx_x(), crate::thread::thread_idx_y());
        if crate::thread::block_dim_x() as usize != TX
            || crate::thread::block_dim_y() as usize != TY
            || crate::thread::block_dim_z() != 1
        {
            wrong_thread_layout();
        }
        ThreadPart {
            row0: self.row0 + y as usize,
            col0: self.col0 + x as usize,
            rows: BM / TY,
            cols: BN / TX,
            m: self.m,
        }
    }

    /// This warp's `WM × WN` part of the tile: warp `w` (`block_rank() / 32`) of the
    /// `(BM / WM) × (BN / WN)` grid of warp tiles takes row `w / (BN / WN)` and column
    /// `w % (BN / WN)` of it; `None` for warps past the last. `BM` must be a multiple of
    /// `WM`, `BN` of `WN` (checked at compile time).
    #[inline(always)]
    pub fn warp_tile<const WM: usize, const WN: usize>(self) -> Option<WarpTile<'a, T, WM, WN>> {
        let () = const {
            assert!(
                WM > 0 && WN > 0 && BM.is_multiple_of(WM) && BN.is_multiple_of(WN),
                "warp tiles must divide the block tile"
            )
        };
        let w = (crate::thread::block_rank() / 32) as usize;
        let per_row = BN / WN;
        if w >= (BM / WM) * per_row {
            return None;
        }
        Some(WarpTile { m: self.m, row0: self.row0 + (w / per_row) * WM, col0: self.col0 + (w % per_row) * WN })
    }
}

#[cold]
#[track_caller]
fn wrong_thread_layout() -> ! {
    crate::dfail!("BlockTile::partition::<TX, TY>: the block is not (TX, TY, 1) threads")
}

/// One thread's elements of a [`BlockTile`], from [`BlockTile::partition`]: element `(i,
/// j)` of the share is element `(y + i * TY, x + j * TX)` of the tile, for the thread at
/// `(x, y)` of a `(TX, TY, 1)` block. Writes outside the matrix (a tile hanging over its
/// edge) are dropped.
pub struct ThreadPart<'a, T, const TX: usize, const TY: usize> {
    m: MatrixMut<'a, T>,
    // The matrix coordinates of the share's element (0, 0).
    row0: usize,
    col0: usize,
    rows: usize,
    cols: usize,
}

impl<'a, T, const TX: usize, const TY: usize> ThreadPart<'a, T, TX, TY> {
    /// Rows of the share, `BM / TY`.
    #[inline(always)]
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Columns of the share, `BN / TX`.
    #[inline(always)]
    pub fn cols(&self) -> usize {
        self.cols
    }

    /// Where element `(i, j)` of the share lies inside the block's tile: `(y + i * TY, x +
    /// j * TX)`.
    #[inline(always)]
    pub fn position(&self, i: usize, j: usize) -> (usize, usize) {
        let (x, y) = (crate::thread::thread_idx_x() as usize, crate::thread::thread_idx_y() as usize);
        (y.saturating_add(i.saturating_mul(TY)), x.saturating_add(j.saturating_mul(TX)))
    }

    /// Whether element `(i, j)` of the share lies inside the matrix (a tile hanging over the
    /// matrix's edge has elements outside it, which [`set`](Self::set) drops): test it
    /// before computing a value that reads memory only the inside elements have.
    #[inline(always)]
    pub fn contains(&self, i: usize, j: usize) -> bool {
        i < self.rows && j < self.cols && self.row0 + i * TY < self.m.rows && self.col0 + j * TX < self.m.cols
    }

    /// Writes `v` to element `(i, j)` of the share if it lies inside the matrix. Panics if
    /// `i >= rows()` or `j >= cols()`.
    #[inline(always)]
    #[track_caller]
    pub fn set(&mut self, i: usize, j: usize, v: T) {
        crate::dassert!(i < self.rows && j < self.cols, "ThreadPart::set: index outside the thread's share");
        let (row, col) = (self.row0 + i * TY, self.col0 + j * TX);
        if row < self.m.rows && col < self.m.cols {
            // SAFETY: `row < rows` and `col < cols` with `fits(len, rows, cols, ld)` (checked by
            // `MatrixMut::with_ld`) put the index inside the slice. One writer per element:
            // the block owns its tile (`block_tile`'s raster is a bijection from blocks onto
            // tiles) and inside it `(y + i TY, x + j TX)` with `x < TX`, `y < TY` (the block
            // is `(TX, TY, 1)`, checked by `partition`) names each element for one thread.
            unsafe { *self.m.slice.get_unchecked_mut(row * self.m.ld + col) = v };
        }
    }
}

/// The `WM × WN` tile of a [`MatrixMut`] that belongs to this warp; each lane writes the
/// elements its MMA accumulators hold ([`crate::mma::Accum`]), or its own share.
pub struct WarpTile<'a, T, const WM: usize, const WN: usize> {
    m: MatrixMut<'a, T>,
    row0: usize,
    col0: usize,
}

impl<'a, T, const WM: usize, const WN: usize> WarpTile<'a, T, WM, WN> {
    /// The matrix row of the tile's first row.
    #[inline(always)]
    pub fn row0(&self) -> usize {
        self.row0
    }

    /// The matrix column of the tile's first column.
    #[inline(always)]
    pub fn col0(&self) -> usize {
        self.col0
    }
}

impl<'a, const WM: usize, const WN: usize> WarpTile<'a, f32, WM, WN> {
    /// Writes `v0` at `(r, c)` and `v1` at `(r, c + 1)` of the warp tile, each if inside
    /// the matrix.
    ///
    /// # Safety
    ///
    /// No other thread of the launch accesses these elements unordered (the caller gives
    /// each element of the warp tile to one lane).
    #[inline(always)]
    #[track_caller]
    pub(crate) unsafe fn write2(&mut self, r: usize, c: usize, v0: f32, v1: f32) {
        let (row, col) = (self.row0 + r, self.col0 + c);
        if row >= self.m.rows {
            return;
        }
        let i = row * self.m.ld + col;
        // SAFETY: `row < rows` and `col (+ 1) < cols` with `fits(len, rows, cols, ld)`
        // (checked by `MatrixMut::with_ld`) put `i` (and `i + 1`) inside the slice; one
        // writer per element is the caller's duty.
        unsafe {
            if col < self.m.cols {
                *self.m.slice.get_unchecked_mut(i) = v0;
            }
            if col + 1 < self.m.cols {
                *self.m.slice.get_unchecked_mut(i + 1) = v1;
            }
        }
    }
}
