//! Row-major matrices in global memory: read-only ([`Matrix`], the source of tile copies)
//! and written ([`MatrixMut`], partitioned into one tile per block and one per warp or
//! thread, so that every element has one writer by construction: the partition is in the
//! parameter's type, see [`MatrixMut`]).

use core::marker::PhantomData;

use super::tiling::{ConsumerTiles, Dim, Order, ThreadTiles, Tiling, WarpTiles, WarpgroupTiles};
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
    // Each at most `u32::MAX` (the constructors check it), so that the geometry is 32-bit
    // arithmetic and an element's index one widening multiply, as in hand-written CUDA.
    rows: u32,
    cols: u32,
    ld: u32,
}

#[cold]
#[track_caller]
fn bad_matrix() -> ! {
    crate::dfail!("matrix shape does not fit its slice (rows, cols, ld)")
}

/// `rows`, `cols` and `ld` as `u32`s if each is at most `u32::MAX`, `ld >= cols`, and
/// `rows × cols` with rows `ld` apart fits `len` elements.
#[inline(always)]
const fn fits(len: usize, rows: usize, cols: usize, ld: usize) -> Option<(u32, u32, u32)> {
    let max = u32::MAX as usize;
    if rows > max || cols > max || ld > max || ld < cols {
        return None;
    }
    // No overflow: `(rows - 1) * ld + cols < 2^64` for values below 2^32. The same as
    // `rows * cols <= len` where `ld == cols`.
    let fit = rows == 0 || cols == 0 || (rows - 1) as u64 * ld as u64 + cols as u64 <= len as u64;
    if fit {
        Some((rows as u32, cols as u32, ld as u32))
    } else {
        None
    }
}

/// [`fits`] for `ld == cols`: `rows * cols <= len` (one widening multiply).
#[inline(always)]
const fn fits_dense(len: usize, rows: usize, cols: usize) -> Option<(u32, u32)> {
    let max = u32::MAX as usize;
    if rows > max || cols > max || rows as u64 * cols as u64 > len as u64 {
        return None;
    }
    Some((rows as u32, cols as u32))
}

impl<'a, T: Copy> Matrix<'a, T> {
    /// The matrix whose rows are `cols` elements apart. Panics if `rows * cols` elements do
    /// not fit in `data`, or a dimension exceeds `u32::MAX` (cuBLAS's limit is `i32::MAX`).
    #[inline(always)]
    #[track_caller]
    pub fn new(data: &'a [T], rows: usize, cols: usize) -> Matrix<'a, T> {
        Self::with_ld(data, rows, cols, cols)
    }

    /// The matrix whose rows are `ld` elements apart (`ld >= cols`). Panics if it does not
    /// fit in `data`, or a dimension or `ld` exceeds `u32::MAX`.
    #[inline(always)]
    #[track_caller]
    pub fn with_ld(data: &'a [T], rows: usize, cols: usize, ld: usize) -> Matrix<'a, T> {
        let Some((rows, cols, ld)) = fits(data.len(), rows, cols, ld) else { bad_matrix() };
        Matrix { data, rows, cols, ld }
    }

    /// Rows.
    #[inline(always)]
    pub fn rows(&self) -> usize {
        self.rows as usize
    }

    /// Columns.
    #[inline(always)]
    pub fn cols(&self) -> usize {
        self.cols as usize
    }

    /// Elements between the starts of consecutive rows.
    #[inline(always)]
    pub fn ld(&self) -> usize {
        self.ld as usize
    }

    /// Element `(r, c)`, or `None` outside the matrix.
    #[inline(always)]
    pub fn get(&self, r: usize, c: usize) -> Option<T> {
        if r < self.rows() && c < self.cols() {
            // SAFETY: r < rows, c < cols and `fits` give r * ld + c < len.
            Some(unsafe { *self.data.get_unchecked(r * self.ld() + c) })
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
    /// `data.len()` or a dimension exceeds `u32::MAX` (where [`Matrix::new`] fails the
    /// launch).
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
        let (rows, cols) = fits_dense(data.len(), rows, cols)?;
        Some(Matrix { data, rows, cols, ld: cols })
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
        // The rows and columns of the matrix from the tile's first on (none past the edge),
        // at most TR and TC: 32-bit compares where the matrix's dimensions are.
        let extent = |first: usize, dim: u32, t: usize| match u32::try_from(first) {
            Ok(first) if first < dim => ((dim - first) as usize).min(t),
            _ => 0,
        };
        let (row0, col0) = (tile_row.saturating_mul(TR), tile_col.saturating_mul(TC));
        let (rows, cols) = (extent(row0, self.rows, TR), extent(col0, self.cols, TC));
        // Inside the matrix (`row0 < rows`, `col0 < cols`, both below 2^32) the first
        // element's index, below `(rows - 1) * ld + cols <= len`; an empty tile starts at 0.
        let (r0, c0) = if rows > 0 && cols > 0 { (row0 as u32, col0 as u32) } else { (0, 0) };
        let base = r0 as usize * self.ld as usize + c0 as usize;
        // SAFETY: `base <= len` (above). The tile's slice starts at its first element, so an
        // element's index is `r * ld + c`: one widening multiply-add, as in CUDA C++.
        let data = unsafe { self.data.get_unchecked(base..) };
        MatrixTile { data, ld: self.ld, rows: rows as u32, cols: cols as u32 }
    }
}

/// A read-only `TR × TC` tile of a [`Matrix`], clipped at the matrix's edge: `get(r, c)`
/// checks `r` and `c` against the tile's extent only (two compares, which a kernel
/// writes anyway at a matrix's edge); the element's index is in bounds by construction.
#[derive(Debug, Clone, Copy)]
pub struct MatrixTile<'a, T, const TR: usize, const TC: usize> {
    // From the tile's first element on.
    data: &'a [T],
    ld: u32,
    // At most TR and TC.
    rows: u32,
    cols: u32,
}

impl<'a, T, const TR: usize, const TC: usize> MatrixTile<'a, T, TR, TC> {
    /// Element `(r, c)` of the tile, or `None` outside the matrix (or `r >= TR`,
    /// `c >= TC`).
    #[inline(always)]
    pub fn get(&self, r: usize, c: usize) -> Option<&'a T> {
        if r < self.rows() && c < self.cols() {
            // SAFETY: r < rows and c < cols of the clipped tile: the element is inside the
            // matrix, whose rows (`ld` apart, `ld >= cols`) fit the slice (`Matrix`'s
            // constructors checked it), at `r * ld + c` from the tile's first element, where
            // `data` starts. `r` is below 2^32 (below the tile's extent).
            Some(unsafe { self.data.get_unchecked((r as u32 as usize) * self.ld as usize + c) })
        } else {
            None
        }
    }

    /// Rows of the tile inside the matrix.
    #[inline(always)]
    pub fn rows(&self) -> usize {
        self.rows as usize
    }

    /// Columns of the tile inside the matrix.
    #[inline(always)]
    pub fn cols(&self) -> usize {
        self.cols as usize
    }
}

impl<'a, T, const TR: usize, const TC: usize> MatrixTile<'a, T, TR, TC> {
    /// This thread's share of the tile for reading, laid out as [`BlockTile::partition`]'s
    /// share of an output tile: thread `(x, y)` reads element `(y + i * TY, x + j * TX)` of
    /// the tile as `get(i, j)`, for `i < TR / TY`, `j < TC / TX`; elements outside the tile's
    /// part of the matrix are `None`. Reading is shared, so no block shape is required: with a
    /// block of `(TX, TY, 1)` each element of the tile is one thread's, and in a larger block
    /// the threads past `(TX, TY)` read other threads' elements (or `None`); `thread_idx_z` is
    /// not used (the threads of every z read the same elements). Each element's index is an
    /// add from the thread's first (the rows `TY * ld` apart), where `get(r, c)` multiplies its
    /// row by `ld`.
    ///
    /// `TX` and `TY` are at least 1 and divide `TC` and `TR`, and `TR` and `TC` are below 2^31
    /// (checked when the kernel is built — `cargo build`, not `cargo check`).
    ///
    /// ```
    /// use sluice_device::{cpu, thread, tile::Matrix};
    /// // A 6 × 10 matrix; its 8 × 8 tile (0, 1) is clipped to 6 × 2 (columns 8 and 9).
    /// let data: Vec<f32> = (0..60).map(|v| v as f32).collect();
    /// cpu::launch([1, 1, 1], [4, 2, 1], 0, &|| {
    ///     let (x, y) = (thread::thread_idx_x() as usize, thread::thread_idx_y() as usize);
    ///     let share = Matrix::new(&data, 6, 10).tile::<8, 8>(0, 1).partition::<4, 2>();
    ///     assert_eq!((share.rows(), share.cols()), (4, 2));
    ///     for i in 0..share.rows() {
    ///         for j in 0..share.cols() {
    ///             // Element (y + 2i, x + 4j) of the tile: row y + 2i, column 8 + x + 4j.
    ///             let (r, c) = (y + 2 * i, 8 + x + 4 * j);
    ///             let want = if r < 6 && c < 10 { Some(&data[r * 10 + c]) } else { None };
    ///             assert_eq!(share.get(i, j), want);
    ///         }
    ///     }
    ///     assert_eq!(share.get(4, 0), None); // past the share
    /// })
    /// .unwrap();
    /// ```
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub fn partition<const TX: usize, const TY: usize>(&self) -> TilePart<'a, T, TX, TY> {
        let () = const {
            assert!(
                TX > 0 && TY > 0 && TR.is_multiple_of(TY) && TC.is_multiple_of(TX) && TR < 1 << 31 && TC < 1 << 31,
                "MatrixTile<TR, TC>::partition::<TX, TY>: TX and TY must be at least 1 and divide TC and TR, \
                 and TR and TC be below 2^31"
            )
        };
        let (x, y) = (crate::thread::thread_idx_x(), crate::thread::thread_idx_y());
        let ld = self.ld as usize;
        TilePart {
            data: self.data,
            at: (y as usize).wrapping_mul(ld).wrapping_add(x as usize),
            row_step: TY.wrapping_mul(ld),
            rows: self.rows,
            cols: self.cols,
            x,
            y,
            share_rows: TR / TY,
            share_cols: TC / TX,
        }
    }
}

/// One thread's share of a [`MatrixTile`] for reading, from [`MatrixTile::partition`]:
/// element `(i, j)` of the share is element `(y + i * TY, x + j * TX)` of the tile.
#[derive(Debug, Clone, Copy)]
pub struct TilePart<'a, T, const TX: usize, const TY: usize> {
    // The tile's slice, from its first element on.
    data: &'a [T],
    // The index of the share's element (0, 0) in `data`, `y * ld + x`, and the distance
    // between its rows, `TY * ld`, both wrapping: exact for every element inside the tile.
    at: usize,
    row_step: usize,
    // The tile's extent inside the matrix (at most TR and TC).
    rows: u32,
    cols: u32,
    // This thread's place in the block.
    x: u32,
    y: u32,
    // `TR / TY` and `TC / TX`.
    share_rows: usize,
    share_cols: usize,
}

impl<'a, T, const TX: usize, const TY: usize> TilePart<'a, T, TX, TY> {
    /// Element `(i, j)` of the share, or `None` where it lies outside the tile's part of
    /// the matrix (always for `i >= rows()` or `j >= cols()`: past the tile).
    #[inline(always)]
    pub fn get(&self, i: usize, j: usize) -> Option<&'a T> {
        if i >= self.share_rows || j >= self.share_cols {
            return None;
        }
        // `i * TY < TR` and `j * TX < TC`, both below 2^31 (`partition` asserts it), and `x`,
        // `y` below 1024: 32-bit sums and compares.
        let (r, c) = (self.y + (i * TY) as u32, self.x + (j * TX) as u32);
        if r < self.rows && c < self.cols {
            let k = self.at.wrapping_add(i.wrapping_mul(self.row_step)).wrapping_add(j.wrapping_mul(TX));
            // SAFETY: `r` and `c` are inside the tile's part of the matrix, so `r * ld + c`
            // is inside `data` (as for `MatrixTile::get`), below its length; `k` is `(y + i TY)
            // * ld + x + j TX` modulo `usize::MAX + 1`, which is that index.
            Some(unsafe { self.data.get_unchecked(k) })
        } else {
            None
        }
    }

    /// Rows of the share, `TR / TY`.
    #[inline(always)]
    pub fn rows(&self) -> usize {
        self.share_rows
    }

    /// Columns of the share, `TC / TX`.
    #[inline(always)]
    pub fn cols(&self) -> usize {
        self.share_cols
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
    /// division or a 64-bit product where the grid is shaped like the tiles: a row-major
    /// raster on a grid of `tiles_n` blocks across (block `(x, y)` takes tile `(y, x)`), a
    /// column-major one on a grid of `tiles_m` across (tile `(x, y)`); otherwise 32-bit
    /// divisions where the numbers fit, 64-bit ones where they do not. The same tile as
    /// `tile` in every case. Ends the launch with a message if the grid has fewer blocks than
    /// there are tiles (some tiles would go unwritten).
    #[inline(always)]
    fn tile_of_this_block(self, tiles_m: u32, tiles_n: u32) -> Option<(u32, u32)> {
        use crate::thread::{block_idx_x, block_idx_y, grid_dim_x, grid_dim_y, grid_dim_z};
        let (x, y) = (block_idx_x(), block_idx_y());
        let flat = grid_dim_z() == 1;
        // On a flat grid `across` blocks wide, where `across` is the tiles' count one way,
        // the grid has as many blocks as tiles iff it is at least `down` (the other count)
        // blocks high.
        let shaped = |across: u32, down: u32| {
            let fits = flat && grid_dim_x() == across;
            if fits && grid_dim_y() < down {
                too_few_blocks();
            }
            fits
        };
        match self {
            Raster::RowMajor if shaped(tiles_n, tiles_m) => (y < tiles_m).then_some((y, x)),
            Raster::ColumnMajor if shaped(tiles_m, tiles_n) => (y < tiles_n).then_some((x, y)),
            _ => {
                // No overflow: both counts are below 2^32.
                let tiles = tiles_m as u64 * tiles_n as u64;
                if crate::thread::grid_blocks() < tiles {
                    too_few_blocks();
                }
                let rank = crate::thread::grid_block_rank();
                let small = u32::MAX as u64;
                // A tile's coordinates are below the counts, so they fit `u32`.
                let (r, c) = if rank <= small && tiles <= small {
                    // The same arithmetic in 32 bits (a 64-bit division is a software routine).
                    self.tile32(rank as u32, tiles_m, tiles_n)?
                } else {
                    let (r, c) = self.tile(rank, tiles_m as u64, tiles_n as u64)?;
                    (r as u32, c as u32)
                };
                Some((r, c))
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

/// A row-major `rows × cols` matrix in a kernel's written slice parameter, split between the
/// launch's threads as the [`Tiling`] `L` says: writes go only through [`BlockTile`],
/// [`WarpTile`] and [`ThreadPart`], whose elements are disjoint between blocks, warps and
/// threads, so a safe kernel writes each element from one thread at most.
///
/// A `MatrixMut` is a kernel parameter, made by `#[kernel]` from the launch's mutable view
/// and its shape, given by the kernel's own parameters (or literals) in `#[matrix(..)]`:
///
/// ```ignore
/// use sluice_device::tile::{ByRows, MatrixMut, ThreadTiles};
/// #[kernel]
/// pub fn fill(#[matrix(rows = m, cols = n)] out: MatrixMut<f32, ThreadTiles<32, 32, 32, 8, ByRows>>, m: u32, n: u32) {
///     let Some(tile) = out.block_tile() else { return };   // this block's 32 × 32 tile
///     let mut mine = tile.partition();                      // this thread's 4 elements of it
///     for i in 0..mine.rows() {
///         let (r, c) = mine.position(i, 0);
///         mine.set(i, 0, (r * 32 + c) as f32);
///     }
/// }
/// ```
///
/// `#[matrix(rows = .., cols = .., ld = ..)]` (`ld`, the distance between rows, defaults to
/// `cols`) names integer parameters of the kernel or integer literals — values every thread
/// of the launch sees alike — and the split is in the type: so every thread agrees on which
/// elements are whose. If the view is too short for the shape (or a dimension is negative, or
/// above `u32::MAX`: the geometry is 32-bit, as cuBLAS's is `i32`)
/// the launch fails with a message; declare the parameter `Option<MatrixMut<..>>` to get
/// `None` instead.
///
/// What does not compile, and why:
///
/// * `MatrixMut::new(out, rows, cols)` in a kernel's body — there is no such function: a shape
///   computed in the body could differ between threads, and threads that disagree on the
///   shape would be handed the same elements. Declare the parameter as above.
/// * a tile shape chosen in the body (`block_tile::<64, 64>()`): the shape, the order of the
///   blocks and the threads' or warps' share are the type's `L`, the same in every thread.
pub struct MatrixMut<'a, T, L: Tiling> {
    // Every write goes through the slice's element access (on the CPU, where the race
    // checker records it).
    slice: DeviceSliceMut<'a, T>,
    // Each at most `u32::MAX` (`__matrix_from_launch` checks it): 32-bit geometry.
    rows: u32,
    cols: u32,
    ld: u32,
    _tiling: PhantomData<fn() -> L>,
}

/// What a `MatrixMut` is made from: nothing a kernel's body has. See [`MatrixMut::new`].
#[diagnostic::on_unimplemented(
    message = "a `MatrixMut` is not made in a kernel's body: `#[kernel]` makes it from a parameter declared `#[matrix(rows = .., cols = ..)] out: MatrixMut<T, L>`",
    label = "a shape computed in the body could differ between threads, and threads that split the matrix differently would write the same elements",
    note = "declare the parameter `#[matrix(rows = m, cols = n)] out: MatrixMut<f32, ThreadTiles<32, 32, 32, 8>>` with `m`, `n` integer parameters of the kernel (docs/compile-errors.md, kernel 21)"
)]
pub trait MadeByKernel<'a, T, L: Tiling>: made::Sealed {
    /// Never called: no type implements the trait.
    #[doc(hidden)]
    fn __make(self) -> MatrixMut<'a, T, L>;
}

mod made {
    pub trait Sealed {}
}

impl<'a, T, L: Tiling> MatrixMut<'a, T, L> {
    /// Not a constructor: it does not compile, and its error says what to write instead. A
    /// `MatrixMut` is a kernel parameter, made by `#[kernel]` from `#[matrix(rows = ..,
    /// cols = ..)]` (see the type's docs): a shape computed in a kernel's body could differ
    /// between threads.
    ///
    /// ```compile_fail
    /// # use sluice_device::tile::{MatrixMut, ThreadTiles};
    /// # fn body(out: sluice_device::slice::DeviceSliceMut<'_, f32>, n: usize) {
    /// let m: MatrixMut<f32, ThreadTiles<32, 32, 32, 8>> = MatrixMut::new(out, n, n); // error[E0277]
    /// # }
    /// ```
    pub fn new<S, R, C>(slice: S, rows: R, cols: C) -> Self
    where
        (S, R, C): MadeByKernel<'a, T, L>,
    {
        (slice, rows, cols).__make()
    }

    /// Rows.
    #[inline(always)]
    pub fn rows(&self) -> usize {
        self.rows as usize
    }

    /// Columns.
    #[inline(always)]
    pub fn cols(&self) -> usize {
        self.cols as usize
    }

    /// This block's `L::BM × L::BN` tile, in `L`'s order over the tiles covering the matrix
    /// (the last row and column of tiles may hang over its edges); `None` for a block past
    /// the last tile. Every thread of a block gets the same tile, no two blocks the same.
    /// Launch at least `ceil(rows / BM) * ceil(cols / BN)` blocks, in any grid shape (a
    /// grid of `(ceil(cols / BN), ceil(rows / BM))` for [`ByRows`](super::ByRows), the
    /// transpose for [`ByColumns`](super::ByColumns), takes the division-free path): with
    /// fewer, the launch fails with a message rather than leave tiles unwritten.
    #[inline(always)]
    pub fn block_tile(self) -> Option<BlockTile<'a, T, L>> {
        let () = const {
            assert!(L::BM > 0 && L::BN > 0, "a block tile has at least one row and one column");
            // Every share of a tile (a thread's, a warp's, a warpgroup's) works out its
            // positions inside the tile in 32 bits, as the matrix's dimensions are.
            assert!(
                L::BM <= u32::MAX as usize && L::BN <= u32::MAX as usize,
                "a block tile has at most u32::MAX rows and columns (BM, BN), as a matrix has"
            );
        };
        // 32-bit tile counts (a dimension is below 2^32; BM, BN from 1 to u32::MAX).
        let tiles = |dim: u32, t: usize| dim.div_ceil(t as u32);
        let (tiles_m, tiles_n) = (tiles(self.rows, L::BM), tiles(self.cols, L::BN));
        let (tm, tn) = L::RASTER.tile_of_this_block(tiles_m, tiles_n)?;
        // Tile (tm, tn) is inside the matrix, so its first row and column are below 2^32.
        let (row0, col0) = ((tm as usize * L::BM) as u32, (tn as usize * L::BN) as u32);
        Some(BlockTile { row0, col0, m: self })
    }
}

/// The matrix `rows × cols` with rows `ld` apart (`cols` if `None`) over `slice`, or `None`
/// if it does not fit (a dimension negative or above `u32::MAX`, or the slice too short). What `#[kernel]` calls
/// for a `#[matrix(..)]` parameter; not a method of `MatrixMut`, so that no error message
/// offers it as a constructor.
///
/// # Safety
///
/// Every thread of the launch that makes a `MatrixMut` from the same slice parameter makes
/// it with the same `rows`, `cols`, `ld` and `L` (`#[kernel]` passes the launch's own
/// parameters, and the type is the parameter's), and nothing else in the launch writes the
/// slice.
#[doc(hidden)]
#[inline(always)]
pub unsafe fn __matrix_from_launch<'a, T, L: Tiling, R: Dim, C: Dim, D: Dim>(
    slice: DeviceSliceMut<'a, T>,
    rows: R,
    cols: C,
    ld: Option<D>,
) -> Option<MatrixMut<'a, T, L>> {
    let (rows, cols) = (rows.dim()?, cols.dim()?);
    let (rows, cols, ld) = match ld {
        Some(ld) => fits(slice.len(), rows, cols, ld.dim()?)?,
        None => fits_dense(slice.len(), rows, cols).map(|(rows, cols)| (rows, cols, cols))?,
    };
    Some(MatrixMut { slice, rows, cols, ld, _tiling: PhantomData })
}

#[cold]
#[track_caller]
fn too_few_warpgroups() -> ! {
    crate::dfail!("BlockTile::warpgroup_tile: the block has fewer warpgroups (128 threads each) than WarpgroupTiles<BM, BN> has 64-row parts (BM / 64), so some rows would go unwritten")
}

#[cold]
#[track_caller]
fn too_few_blocks() -> ! {
    crate::dfail!("MatrixMut::block_tile: the grid has fewer blocks than the matrix has tiles (ceil(rows / BM) * ceil(cols / BN)), so some tiles would go unwritten")
}

/// The `BM × BN` tile of a [`MatrixMut`] that belongs to this block.
pub struct BlockTile<'a, T, L: Tiling> {
    m: MatrixMut<'a, T, L>,
    // Inside the matrix: below `rows` and `cols`.
    row0: u32,
    col0: u32,
}

impl<'a, T, L: Tiling> BlockTile<'a, T, L> {
    /// The matrix row of the tile's first row.
    #[inline(always)]
    pub fn row0(&self) -> usize {
        self.row0 as usize
    }

    /// The matrix column of the tile's first column.
    #[inline(always)]
    pub fn col0(&self) -> usize {
        self.col0 as usize
    }
}

impl<'a, T, const BM: usize, const BN: usize, const TX: usize, const TY: usize, O: Order>
    BlockTile<'a, T, ThreadTiles<BM, BN, TX, TY, O>>
{
    /// This thread's share of the tile, for a block of exactly `TX × TY` threads (`(TX, TY,
    /// 1)`; otherwise the launch fails with a message): thread `(x, y)` owns the elements
    /// `(y + i * TY, x + j * TX)` for `i < BM / TY`, `j < BN / TX` — consecutive threads of
    /// a warp write consecutive columns (coalesced), and no two threads share an element,
    /// so the writes need neither atomics nor `unsafe`. CuTe's `local_partition` of a block
    /// tile by a row-major thread layout.
    ///
    /// ```ignore
    /// // out: MatrixMut<f32, ThreadTiles<32, 32, 32, 8>>, launched with blocks of (32, 8)
    /// if let Some(tile) = out.block_tile() {
    ///     let mut mine = tile.partition(); // 4 × 1 elements: rows y, y + 8, y + 16, y + 24
    ///     for i in 0..mine.rows() {
    ///         let (r, c) = mine.position(i, 0);
    ///         mine.set(i, 0, (r * 32 + c) as f32);
    ///     }
    /// }
    /// ```
    #[inline(always)]
    #[track_caller]
    pub fn partition(self) -> ThreadPart<'a, T, TX, TY> {
        let () = const {
            assert!(
                TX > 0 && TY > 0 && BM.is_multiple_of(TY) && BN.is_multiple_of(TX),
                "ThreadTiles<BM, BN, TX, TY>: the thread layout TX × TY must divide the block tile BM × BN"
            )
        };
        let (x, y) = (crate::thread::thread_idx_x(), crate::thread::thread_idx_y());
        if crate::thread::block_dim_x() as usize != TX
            || crate::thread::block_dim_y() as usize != TY
            || crate::thread::block_dim_z() != 1
        {
            wrong_thread_layout();
        }
        // The index of the thread's element (0, 0) and the distance between its rows, in
        // wrapping arithmetic: `set` uses them only for an element inside the matrix, whose
        // true index (below the slice's length) they then give exactly.
        let ld = self.m.ld as usize;
        let (row, col) = ((self.row0 as usize).wrapping_add(y as usize), (self.col0 as usize).wrapping_add(x as usize));
        let at = row.wrapping_mul(ld).wrapping_add(col);
        ThreadPart {
            at,
            row_step: TY.wrapping_mul(ld),
            // The tile's first row and column are inside the matrix.
            rows_left: self.m.rows - self.row0,
            cols_left: self.m.cols - self.col0,
            x,
            y,
            rows: BM / TY,
            cols: BN / TX,
            m: self.m.erase(),
        }
    }
}

impl<'a, T, const BM: usize, const BN: usize, const WM: usize, const WN: usize, O: Order>
    BlockTile<'a, T, WarpTiles<BM, BN, WM, WN, O>>
{
    /// This warp's `WM × WN` part of the tile: warp `w` (`block_rank() / 32`) of the
    /// `(BM / WM) × (BN / WN)` grid of warp tiles takes row `w / (BN / WN)` and column
    /// `w % (BN / WN)` of it; `None` for warps past the last.
    #[inline(always)]
    pub fn warp_tile(self) -> Option<WarpTile<'a, T, WM, WN>> {
        let () = const {
            assert!(
                WM > 0 && WN > 0 && BM.is_multiple_of(WM) && BN.is_multiple_of(WN),
                "WarpTiles<BM, BN, WM, WN>: warp tiles WM × WN must divide the block tile BM × BN"
            )
        };
        let w = (crate::thread::block_rank() / 32) as usize;
        let per_row = BN / WN;
        if w >= (BM / WM) * per_row {
            return None;
        }
        Some(WarpTile {
            row0: self.row0() + (w / per_row) * WM,
            col0: self.col0() + (w % per_row) * WN,
            m: self.m.erase(),
        })
    }
}

impl<'a, T, const BM: usize, const BN: usize, O: Order> BlockTile<'a, T, WarpgroupTiles<BM, BN, O>> {
    /// This warpgroup's rows of the tile: warpgroup `g` (`block_rank() / 128`) takes rows
    /// `64 g .. 64 g + 64`, all `BN` columns; `None` for warpgroups past `BM / 64`.
    #[inline(always)]
    pub fn warpgroup_tile(self) -> Option<WarpgroupTile<'a, T, BN>> {
        let () =
            const { assert!(BM.is_multiple_of(64) && BM > 0, "WarpgroupTiles<BM, BN>: BM must be a multiple of 64") };
        if (crate::thread::block_size() / 128) < (BM / 64) as u32 {
            too_few_warpgroups();
        }
        let g = (crate::thread::block_rank() / 128) as usize;
        if g >= BM / 64 {
            return None;
        }
        Some(WarpgroupTile { row0: self.row0() + 64 * g, col0: self.col0(), m: self.m.erase() })
    }
}

#[cold]
#[track_caller]
fn too_few_consumers() -> ! {
    crate::dfail!("BlockTile::consumer_tile: the block has fewer consumer warpgroups (128 threads each, after the producer's warpgroup 0) than ConsumerTiles<BM, BN> has 64-row parts (BM / 64), so some rows would go unwritten")
}

impl<'a, T, const BM: usize, const BN: usize, O: Order> BlockTile<'a, T, ConsumerTiles<BM, BN, O>> {
    /// This consumer warpgroup's rows of the tile: warpgroup `g ≥ 1` (`block_rank() / 128`)
    /// takes rows `64 (g - 1) .. 64 g`, all `BN` columns; `None` for warpgroup 0 (the
    /// producer) and warpgroups past `BM / 64 + 1`. Ends the kernel with a message if the
    /// block has fewer than `BM / 64` consumer warpgroups.
    #[inline(always)]
    #[track_caller]
    pub fn consumer_tile(self) -> Option<WarpgroupTile<'a, T, BN>> {
        let () =
            const { assert!(BM.is_multiple_of(64) && BM > 0, "ConsumerTiles<BM, BN>: BM must be a multiple of 64") };
        if (crate::thread::block_size() / 128) < (BM / 64) as u32 + 1 {
            too_few_consumers();
        }
        let g = (crate::thread::block_rank() / 128) as usize;
        if g == 0 || g > BM / 64 {
            return None;
        }
        Some(WarpgroupTile { row0: self.row0() + 64 * (g - 1), col0: self.col0(), m: self.m.erase() })
    }
}

/// The `64 × N` rows of a [`BlockTile`] that belong to this warpgroup
/// ([`BlockTile::warpgroup_tile`]); each thread writes the elements its warpgroup MMA
/// accumulators hold ([`crate::wgmma::Warpgroup::store`]).
pub struct WarpgroupTile<'a, T, const N: usize> {
    m: Shape<'a, T>,
    row0: usize,
    col0: usize,
}

impl<'a, T, const N: usize> WarpgroupTile<'a, T, N> {
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

impl<'a, const N: usize> WarpgroupTile<'a, f32, N> {
    /// Writes `v0` at `(r, c)` and `v1` at `(r, c + 1)` of the tile, each if inside the
    /// matrix.
    ///
    /// # Safety
    ///
    /// No other thread of the launch accesses these elements unordered (the caller gives
    /// each element of the tile to one thread of the warpgroup).
    #[inline(always)]
    #[track_caller]
    pub(crate) unsafe fn write2(&mut self, r: usize, c: usize, v0: f32, v1: f32) {
        // SAFETY: forwarded (one writer per element is the caller's duty).
        unsafe { self.m.write2(self.row0 + r, self.col0 + c, v0, v1) }
    }
}

impl<'a> Shape<'a, f32> {
    /// Writes `v0` at matrix element `(row, col)` and `v1` at `(row, col + 1)`, each if
    /// inside the matrix (one 8-byte store where both are and aligned).
    ///
    /// # Safety
    ///
    /// No other thread of the launch accesses these elements unordered.
    #[inline(always)]
    #[track_caller]
    unsafe fn write2(&mut self, row: usize, col: usize, v0: f32, v1: f32) {
        if row >= self.rows as usize {
            return;
        }
        let i = row * self.ld as usize + col;
        // SAFETY: `row < rows` and `col (+ 1) < cols` with `fits(len, rows, cols, ld)`
        // (checked by `__matrix_from_launch`) put `i` (and `i + 1`) inside the slice; one
        // writer per element is the caller's duty.
        unsafe {
            if col + 1 < self.cols as usize {
                self.slice.write_pair_unchecked(i, [v0, v1]);
            } else if col < self.cols as usize {
                *self.slice.get_unchecked_mut(i) = v0;
            }
        }
    }
}

impl<'a, T, L: Tiling> MatrixMut<'a, T, L> {
    /// The matrix without its tiling, for the shares that no longer need it.
    #[inline(always)]
    fn erase(self) -> Shape<'a, T> {
        Shape { slice: self.slice, rows: self.rows, cols: self.cols, ld: self.ld }
    }
}

/// A [`MatrixMut`]'s slice and shape, inside a share of it.
struct Shape<'a, T> {
    slice: DeviceSliceMut<'a, T>,
    rows: u32,
    cols: u32,
    ld: u32,
}

#[cold]
#[track_caller]
fn wrong_thread_layout() -> ! {
    crate::dfail!("BlockTile::partition: the block's shape is not the (TX, TY, 1) of its ThreadTiles<BM, BN, TX, TY>")
}

/// One thread's elements of a [`BlockTile`], from [`BlockTile::partition`]: element `(i,
/// j)` of the share is element `(y + i * TY, x + j * TX)` of the tile, for the thread at
/// `(x, y)` of a `(TX, TY, 1)` block. Writes outside the matrix (a tile hanging over its
/// edge) are dropped.
pub struct ThreadPart<'a, T, const TX: usize, const TY: usize> {
    m: Shape<'a, T>,
    // The slice index of element (0, 0) of the share, `(row0 + y) * ld + col0 + x`, and of
    // element (i, j) `at + i * row_step + j * TX` (`row_step = TY * ld`), both wrapping:
    // exact for every element inside the matrix. Worked out once, so that each element's
    // address is an add (the unrolled loop's multiples of `row_step` reduce to adds) rather
    // than a 64-bit multiply of its row.
    at: usize,
    row_step: usize,
    // The matrix's rows and columns from the block tile's first row and column on: element
    // `(i, j)` of the share is inside the matrix if `y + i TY < rows_left` and `x + j TX <
    // cols_left` (32-bit compares).
    rows_left: u32,
    cols_left: u32,
    // This thread's place in the block, `(x, y)` below `(TX, TY)`.
    x: u32,
    y: u32,
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
        if i < self.rows && j < self.cols {
            // Inside the tile: below `BM` and `BN`, so the sums are 32-bit (`block_tile`, the
            // only way to a share, asserts `BM`, `BN <= u32::MAX` at compile time) and the compiler sees positions
            // below 2^32 (one widening multiply per index, as in CUDA C++).
            ((self.y + (i * TY) as u32) as usize, (self.x + (j * TX) as u32) as usize)
        } else {
            let (x, y) = (self.x as usize, self.y as usize);
            (y.saturating_add(i.saturating_mul(TY)), x.saturating_add(j.saturating_mul(TX)))
        }
    }

    /// Where element `(i, j)` (inside the share) lies inside the block's tile, if it lies
    /// inside the matrix: below `BM` and `BN`, so 32-bit.
    #[inline(always)]
    fn inside(&self, i: usize, j: usize) -> Option<(u32, u32)> {
        if i >= self.rows || j >= self.cols {
            return None;
        }
        // `i < BM / TY`, `j < BN / TX`: the sums are below `BM` and `BN`, which are at most
        // `u32::MAX` (`block_tile`, the only way to a share, asserts it at compile time).
        let (r, c) = (self.y + (i * TY) as u32, self.x + (j * TX) as u32);
        (r < self.rows_left && c < self.cols_left).then_some((r, c))
    }

    /// Whether element `(i, j)` of the share lies inside the matrix (a tile hanging over the
    /// matrix's edge has elements outside it, which [`set`](Self::set) drops): test it
    /// before computing a value that reads memory only the inside elements have.
    #[inline(always)]
    pub fn contains(&self, i: usize, j: usize) -> bool {
        self.inside(i, j).is_some()
    }

    /// Writes `v` to element `(i, j)` of the share if it lies inside the matrix. Panics if
    /// `i >= rows()` or `j >= cols()`.
    #[inline(always)]
    #[track_caller]
    pub fn set(&mut self, i: usize, j: usize, v: T) {
        crate::dassert!(i < self.rows && j < self.cols, "ThreadPart::set: index outside the thread's share");
        if self.inside(i, j).is_some() {
            // `at + i * row_step + j * TX` is `(row0 + y + i TY) * ld + col0 + x + j TX`
            // modulo `usize::MAX + 1`, and that true index is below the slice's length (below).
            let k = self.at.wrapping_add(i.wrapping_mul(self.row_step)).wrapping_add(j.wrapping_mul(TX));
            // SAFETY: inside the matrix, `row = row0 + y + i TY < rows` and `col = col0 + x + j
            // TX < cols`, with `fits(len, rows, cols, ld)` (checked by `__matrix_from_launch`):
            // `row * ld + col` is inside the slice, below its length (at most `usize::MAX`), and
            // `k`, equal to it modulo `usize::MAX + 1`, is that index. One writer per element:
            // every thread of the launch has the same shape and tiling (the parameter's
            // `#[matrix]` values and type, `__matrix_from_launch`'s contract), the block owns its
            // tile (the order is a bijection from blocks onto tiles) and inside it
            // `(y + i TY, x + j TX)` with `x < TX`, `y < TY` (the block is `(TX, TY, 1)`,
            // checked by `partition`) names each element for one thread.
            unsafe { *self.m.slice.get_unchecked_mut(k) = v };
        }
    }
}

/// The `WM × WN` tile of a [`MatrixMut`] that belongs to this warp; each lane writes the
/// elements its MMA accumulators hold ([`crate::mma::Accum`]), or its own share.
pub struct WarpTile<'a, T, const WM: usize, const WN: usize> {
    m: Shape<'a, T>,
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
        // SAFETY: forwarded (one writer per element is the caller's duty).
        unsafe { self.m.write2(self.row0 + r, self.col0 + c, v0, v1) }
    }
}
