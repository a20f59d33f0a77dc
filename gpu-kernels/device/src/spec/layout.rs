//! Shared-tile layouts: where element `(row, col)` of an `R × C` tile lives, in elements
//! from the tile's start.
//!
//! | layout | offset of `(r, c)` | for |
//! | --- | --- | --- |
//! | [`RowMajor<R, C, PAD>`] | `r * (C + PAD) + c` | tiles read by rows; `PAD` spreads columns over banks |
//! | [`ColMajor<R, C, PAD>`] | `c * (R + PAD) + r` | tiles read by columns |
//! | [`Swizzled<R, C>`] | row-major, the 16-byte chunks of each row XOR-permuted ([`swizzle`]) | `cp.async` destinations read by `ldmatrix`: no bank conflict on either side, no padding |
//!
//! The swizzle is CuTe's `Swizzle<3, 4, S>` on byte offsets: bits `4..7` of the byte offset
//! (the 16-byte chunk within a 128-byte line) are XORed with bits `S + 4..S + 7`, where
//! `2^(S + 4)` is the row length in bytes (at least 128). Eight consecutive rows read at the
//! same column land in eight different 16-byte bank groups, so an 8 × 16-byte `ldmatrix`
//! phase touches all 32 banks once, and a 16-byte chunk stays whole (a `cp.async` of 16 bytes
//! and an `ldmatrix` row are one chunk).
//!
//! A layout is a type (`Tile<E, Swizzled<128, 32>>`), so an operation that needs a property
//! of the layout (a contiguous axis, 16-byte rows) asks for it with a trait bound, and a tile
//! of another layout is a compile error, not a run-time check.

/// The axis along which a tile's elements are contiguous, or a fragment's register pairs
/// run: [`Row`] (along a row: consecutive columns) or [`Col`] (consecutive rows). Sealed.
pub trait Axis: sealed::Sealed + Copy + 'static {
    /// Whether this is [`Row`].
    const IS_ROW: bool;
    /// The other axis.
    type Other: Axis;
}

/// Along a row: consecutive columns are adjacent (`RowMajor`, `Swizzled` tiles; an MMA A
/// operand's `.row` fragment).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Row;

/// Along a column: consecutive rows are adjacent (`ColMajor` tiles; an MMA B operand's
/// `.col` fragment).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Col;

impl sealed::Sealed for Row {}
impl sealed::Sealed for Col {}
impl Axis for Row {
    const IS_ROW: bool = true;
    type Other = Col;
}
impl Axis for Col {
    const IS_ROW: bool = false;
    type Other = Row;
}

/// A tile layout: its shape, its contiguous axis, and where each element lives.
///
/// Implemented by the layout markers of this module; sealed, so that the offsets the
/// tiles trust without a check are the ones pinned by this module's tests.
///
/// ```
/// use sluice_device::spec::layout::{Layout, RowMajor, Swizzled};
/// assert_eq!(<RowMajor<4, 8, 2> as Layout>::offset(1, 3, 2), 13);
/// assert_eq!(<RowMajor<4, 8, 2> as Layout>::SPAN, 38); // the last row needs no padding
/// // The swizzle keeps 16-byte chunks whole and moves them within their row.
/// let o = <Swizzled<8, 64> as Layout>::offset(3, 9, 2);
/// assert_eq!(o / 64, 3);
/// assert_eq!(o % 8, 1);
/// ```
pub trait Layout: sealed::Sealed + Copy + 'static {
    /// Rows of the tile.
    const ROWS: usize;
    /// Columns of the tile.
    const COLS: usize;
    /// The contiguous axis ([`Row`] or [`Col`]).
    type Major: Axis;
    /// Elements the tile spans in memory (padding included).
    const SPAN: usize;
    /// Elements between the starts of consecutive rows (`Row` major) or columns (`Col`
    /// major), padding included.
    const STRIDE: usize;
    /// Whether the layout is [`Swizzled`] (its well-formedness depends on the element size:
    /// [`swizzle_fits`]).
    const SWIZZLED: bool = false;
    /// The offset of element `(r, c)` in elements, for elements of `elem_bytes` bytes
    /// (the swizzle works on bytes). `r < ROWS`, `c < COLS`.
    fn offset(r: usize, c: usize, elem_bytes: usize) -> usize;
}

mod sealed {
    pub trait Sealed {}
}

/// Row-major `R × C`, each row padded by `PAD` elements.
#[derive(Debug, Clone, Copy)]
pub struct RowMajor<const R: usize, const C: usize, const PAD: usize = 0>;

/// Column-major `R × C`, each column padded by `PAD` elements.
#[derive(Debug, Clone, Copy)]
pub struct ColMajor<const R: usize, const C: usize, const PAD: usize = 0>;

/// Row-major `R × C` with the 16-byte chunks of each row XOR-swizzled ([`swizzle`]).
/// A row must be a whole number of 16-byte chunks, at least two, and the tile a whole
/// number of 128-byte lines (checked when a tile of this layout is made).
#[derive(Debug, Clone, Copy)]
pub struct Swizzled<const R: usize, const C: usize>;

impl<const R: usize, const C: usize, const PAD: usize> sealed::Sealed for RowMajor<R, C, PAD> {}
impl<const R: usize, const C: usize, const PAD: usize> sealed::Sealed for ColMajor<R, C, PAD> {}
impl<const R: usize, const C: usize> sealed::Sealed for Swizzled<R, C> {}

impl<const R: usize, const C: usize, const PAD: usize> Layout for RowMajor<R, C, PAD> {
    const ROWS: usize = R;
    const COLS: usize = C;
    type Major = Row;
    const SPAN: usize = if R == 0 { 0 } else { (R - 1) * (C + PAD) + C };
    const STRIDE: usize = C + PAD;
    #[inline(always)]
    fn offset(r: usize, c: usize, _elem_bytes: usize) -> usize {
        r * (C + PAD) + c
    }
}

impl<const R: usize, const C: usize, const PAD: usize> Layout for ColMajor<R, C, PAD> {
    const ROWS: usize = R;
    const COLS: usize = C;
    type Major = Col;
    const SPAN: usize = if C == 0 { 0 } else { (C - 1) * (R + PAD) + R };
    const STRIDE: usize = R + PAD;
    #[inline(always)]
    fn offset(r: usize, c: usize, _elem_bytes: usize) -> usize {
        c * (R + PAD) + r
    }
}

impl<const R: usize, const C: usize> Layout for Swizzled<R, C> {
    const ROWS: usize = R;
    const COLS: usize = C;
    type Major = Row;
    const SPAN: usize = R * C;
    const STRIDE: usize = C;
    const SWIZZLED: bool = true;
    #[inline(always)]
    fn offset(r: usize, c: usize, elem_bytes: usize) -> usize {
        swizzle((r * C + c) * elem_bytes, C * elem_bytes) / elem_bytes
    }
}

/// The shift `S` of the swizzle for rows of `row_bytes` bytes: `log2(max(row_bytes, 128)) - 4`.
#[inline(always)]
pub const fn swizzle_shift(row_bytes: usize) -> u32 {
    let line = if row_bytes > 128 { row_bytes } else { 128 };
    line.trailing_zeros() - 4
}

/// CuTe's `Swizzle<3, 4, S>` on a byte offset into a tile whose rows are `row_bytes` long
/// (a power of two, at least 32): bits `4..7` XOR bits `S + 4..S + 7`, `S` from
/// [`swizzle_shift`]. A bijection on every aligned `2^(S + 7)`-byte block, identity on the
/// low 4 bits (16-byte chunks stay whole).
#[inline(always)]
pub const fn swizzle(byte_offset: usize, row_bytes: usize) -> usize {
    let s = swizzle_shift(row_bytes);
    byte_offset ^ (((byte_offset >> (s + 4)) & 7) << 4)
}

/// Whether a [`Swizzled`] tile of `rows × cols` elements of `elem_bytes` bytes is well
/// formed: rows of a power-of-two number of bytes, at least 32, and the tile a whole number
/// of the swizzle's blocks (so the permutation stays inside the tile).
pub const fn swizzle_fits(rows: usize, cols: usize, elem_bytes: usize) -> bool {
    let row_bytes = cols * elem_bytes;
    if !row_bytes.is_power_of_two() || row_bytes < 32 {
        return false;
    }
    let block = 1usize << (swizzle_shift(row_bytes) + 7);
    (rows * row_bytes).is_multiple_of(block)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn offsets<L: Layout>(elem: usize) -> std::vec::Vec<usize> {
        let mut v = std::vec::Vec::new();
        for r in 0..L::ROWS {
            for c in 0..L::COLS {
                v.push(L::offset(r, c, elem));
            }
        }
        v
    }

    /// Every layout is a bijection from the tile onto offsets below `SPAN`.
    fn is_injective_below_span<L: Layout>(elem: usize) {
        let mut o = offsets::<L>(elem);
        assert!(o.iter().all(|&x| x < L::SPAN), "offset past SPAN");
        o.sort_unstable();
        o.dedup();
        assert_eq!(o.len(), L::ROWS * L::COLS, "two elements share an offset");
    }

    #[test]
    fn layouts_are_injective() {
        is_injective_below_span::<RowMajor<16, 8>>(4);
        is_injective_below_span::<RowMajor<16, 8, 4>>(4);
        is_injective_below_span::<ColMajor<16, 8, 8>>(2);
        is_injective_below_span::<Swizzled<128, 32>>(2);
        is_injective_below_span::<Swizzled<32, 256>>(2);
        is_injective_below_span::<Swizzled<64, 64>>(2);
        is_injective_below_span::<Swizzled<16, 32>>(4);
        is_injective_below_span::<Swizzled<64, 16>>(2);
    }

    #[test]
    fn row_and_col_major_rows() {
        assert_eq!(<RowMajor<4, 8, 2>>::offset(2, 5, 2), 25);
        assert_eq!(<ColMajor<4, 8, 4>>::offset(2, 5, 2), 42);
        assert_eq!(<ColMajor<4, 8, 4> as Layout>::SPAN, 7 * 8 + 4);
        assert_eq!(<RowMajor<4, 8> as Layout>::STRIDE, 8);
    }

    #[test]
    fn swizzle_keeps_chunks_whole_and_in_their_row() {
        for (rows, cols, elem) in [(128, 32, 2), (32, 256, 2), (64, 64, 2), (32, 32, 4), (64, 16, 2)] {
            let rb = cols * elem;
            for r in 0..rows {
                for c in 0..cols {
                    let b = swizzle((r * cols + c) * elem, rb);
                    // same byte within its 16-byte chunk
                    assert_eq!(b % 16, ((r * cols + c) * elem) % 16);
                    if rb >= 128 {
                        assert_eq!(b / rb, r, "a chunk left its row");
                    }
                }
            }
        }
    }

    /// The property the swizzle exists for: eight consecutive rows (from a multiple of 8)
    /// read at one 16-byte column chunk touch eight different bank groups (all 32 banks),
    /// for ldmatrix's eight row addresses.
    #[test]
    fn eight_rows_of_one_chunk_hit_every_bank_group() {
        for (rows, cols, elem) in [(128, 32, 2), (32, 256, 2), (64, 64, 2), (16, 128, 2), (64, 16, 2), (32, 32, 4)] {
            let rb = cols * elem;
            for r0 in (0..rows).step_by(8) {
                for chunk in 0..rb / 16 {
                    let mut groups: std::vec::Vec<usize> =
                        (r0..r0 + 8).map(|r| (swizzle(r * rb + chunk * 16, rb) / 16) % 8).collect();
                    groups.sort_unstable();
                    groups.dedup();
                    assert_eq!(groups.len(), 8, "{rows}x{cols}x{elem}: rows {r0}.. chunk {chunk}");
                }
            }
        }
    }

    #[test]
    fn swizzle_fits_only_whole_blocks() {
        assert!(swizzle_fits(128, 32, 2));
        assert!(swizzle_fits(32, 256, 2));
        assert!(!swizzle_fits(4, 32, 2)); // 256 bytes: less than one 1024-byte block
        assert!(!swizzle_fits(16, 24, 2)); // 48-byte rows
        assert!(!swizzle_fits(16, 8, 2)); // 16-byte rows: nothing to permute
        assert_eq!(swizzle_shift(64), 3);
        assert_eq!(swizzle_shift(512), 5);
    }
}
