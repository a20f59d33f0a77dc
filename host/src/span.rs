//! Spans: the plain data behind every borrow and view of device memory (where it is, its
//! shape, which allocation and device), the arithmetic that splits and joins them, and the
//! layout checks every allocation passes (rule 2's "disjoint by construction" is this
//! arithmetic; the types that carry spans add the lifetimes and brands).

use std::ops::{Bound, RangeBounds};

use crate::driver::{mem::Span2d, DevicePtr};
use crate::error::{Error, Result};

/// A run of whole columns of one device allocation, or a run of rows of one column.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Span {
    /// Address of the first element of the first column.
    pub ptr: DevicePtr,
    pub rows: usize,
    pub cols: usize,
    /// Elements from one column's start to the next's.
    pub ld: usize,
    pub elem_size: usize,
    /// Which allocation this is in (joining views checks it).
    pub alloc: u64,
    /// The context (device) the allocation belongs to ([`Context::id`](crate::handle::Context::id)):
    /// work on another device's lane is refused with a typed error.
    pub ctx: usize,
    /// Whether the span covers whole columns: every row of each of its columns, and so the
    /// padding between them. False for a row range of a column (`slice_rows`, `split_rows`),
    /// which owns only its own rows; such spans never [`join`](Span::join), because the
    /// joined span would cover the rows between them, which other views own.
    pub whole_columns: bool,
}

/// `range` over `0..len` as `(start, end)`, or `None` if it is out of bounds or reversed:
/// the one range-bounds helper of the crate.
pub(crate) fn bounds(range: impl RangeBounds<usize>, len: usize) -> Option<(usize, usize)> {
    let start = match range.start_bound() {
        Bound::Included(&s) => s,
        Bound::Excluded(&s) => s.checked_add(1)?,
        Bound::Unbounded => 0,
    };
    let end = match range.end_bound() {
        Bound::Included(&e) => e.checked_add(1)?,
        Bound::Excluded(&e) => e,
        Bound::Unbounded => len,
    };
    (start <= end && end <= len).then_some((start, end))
}

impl Span {
    /// Elements in the span (padding excluded).
    pub fn len(&self) -> usize {
        self.rows * self.cols
    }

    /// Elements from the first to the last, padding between columns included: the
    /// length a kernel sees. The span owns all of them: a span of several columns covers
    /// whole columns (only those join), and a row range is one column, without padding.
    pub fn flat_len(&self) -> usize {
        debug_assert!(self.cols <= 1 || self.whole_columns, "a row range spans one column");
        if self.cols == 0 {
            0
        } else {
            (self.cols - 1) * self.ld + self.rows
        }
    }

    /// Whether the elements are one contiguous run.
    #[cfg(test)]
    pub fn is_contiguous(&self) -> bool {
        self.cols <= 1 || self.ld == self.rows
    }

    /// Columns `[0, at)` and `[at, cols)`; `None` if `at > cols`.
    pub fn split_at(self, at: usize) -> Option<(Span, Span)> {
        if at > self.cols {
            return None;
        }
        let left = Span { cols: at, ..self };
        let right = Span { ptr: self.ptr + (at * self.ld * self.elem_size) as DevicePtr, cols: self.cols - at, ..self };
        Some((left, right))
    }

    /// The columns in `range`; `None` if out of bounds.
    pub fn range(self, range: impl RangeBounds<usize>) -> Option<Span> {
        let (start, end) = bounds(range, self.cols)?;
        let (_, rest) = self.split_at(start)?;
        let (mid, _) = rest.split_at(end - start)?;
        Some(mid)
    }

    /// Column `j`; `None` if out of bounds.
    pub fn column(self, j: usize) -> Option<Span> {
        self.range(j..j.checked_add(1)?)
    }

    /// The rows in `range` of a single-column span; `None` if out of bounds or if the span
    /// has several columns (a row range of several columns would interleave with the rows
    /// other views own).
    pub fn rows_range(self, range: impl RangeBounds<usize>) -> Option<Span> {
        if self.cols != 1 {
            return None;
        }
        let (start, end) = bounds(range, self.rows)?;
        // Fewer rows than the column has: the slice owns only its rows, not the column's
        // other rows nor its padding, so it must never join a neighbour (`Span::join`).
        let whole_columns = self.whole_columns && start == 0 && end == self.rows;
        Some(Span {
            ptr: self.ptr + (start * self.elem_size) as DevicePtr,
            rows: end - start,
            cols: 1,
            whole_columns,
            ..self
        })
    }

    /// `self` followed directly by `next` as one span, if they are adjacent ranges of whole
    /// columns of one allocation.
    ///
    /// Row ranges never join, not even the same rows of two adjacent columns: their join
    /// would start in one column and end in the next, and its flat extent (what a kernel is
    /// given) would cover the rows in between, which other views own ([rule 2](crate#safety-model)).
    pub fn join(self, next: Span) -> Option<Span> {
        let adjacent = self.whole_columns
            && next.whole_columns
            && self.alloc == next.alloc
            && self.rows == next.rows
            && self.ld == next.ld
            && self.elem_size == next.elem_size
            && self.ptr + (self.cols * self.ld * self.elem_size) as DevicePtr == next.ptr;
        adjacent.then_some(Span { cols: self.cols + next.cols, ..self })
    }

    /// Takes the first `k` columns (fewer at the end) off the front.
    pub fn take_front(&mut self, k: usize) -> Option<Span> {
        if self.cols == 0 || k == 0 {
            return None;
        }
        let (head, tail) = self.split_at(k.min(self.cols))?;
        *self = tail;
        Some(head)
    }

    /// Takes the last chunk off the back, keeping the front chunks aligned to `k`.
    pub fn take_back(&mut self, k: usize) -> Option<Span> {
        if self.cols == 0 || k == 0 {
            return None;
        }
        let rem = self.cols % k;
        let last = if rem == 0 { k } else { rem };
        let (head, tail) = self.split_at(self.cols - last)?;
        *self = head;
        Some(tail)
    }

    /// The span as a copy between the device (pitch `ld`) and contiguous host memory
    /// (`rows * cols` elements, no padding).
    pub fn to_2d(self) -> Span2d {
        Span2d {
            width_bytes: self.rows * self.elem_size,
            height: self.cols,
            device_pitch: self.ld * self.elem_size,
            host_pitch: self.rows * self.elem_size,
        }
    }

    /// Chunks of `k` columns left in the span (what a chunk iterator reports as its length).
    pub fn chunks_left(&self, k: usize) -> usize {
        if k == 0 {
            0
        } else {
            self.cols.div_ceil(k)
        }
    }
}

/// The alignment every device and pinned allocation is guaranteed to have, in bytes.
///
/// The driver documents 256 bytes for device allocations; pinned allocations are whole
/// pages. Each column starts a multiple of `size_of::<T>()` bytes (itself a multiple of
/// `align_of::<T>()`) from the allocation's start, so every element is aligned when the
/// start is. Both allocators also check the address they get (see [`check_aligned`]).
pub(crate) const ALLOC_ALIGN: usize = 256;

/// Checks a shape and element type and returns the allocation size in bytes.
pub(crate) fn matrix_bytes<T>(rows: usize, cols: usize, ld: usize) -> Result<usize> {
    if rows == 0 || cols == 0 || std::mem::size_of::<T>() == 0 {
        return Err(Error::ZeroSized);
    }
    if ld < rows {
        return Err(Error::LengthMismatch { expected: rows, got: ld });
    }
    // A `#[repr(align(8192))]` element would be misaligned in memory only promised 256-byte
    // alignment: references to it (a pinned matrix derefs to `&[T]`, a kernel reads `T`s)
    // would be undefined behaviour. Refuse before allocating.
    if std::mem::align_of::<T>() > ALLOC_ALIGN {
        return Err(Error::OverAligned { align: std::mem::align_of::<T>(), max: ALLOC_ALIGN });
    }
    let too_large = Error::TooLarge { rows, cols, elem_size: std::mem::size_of::<T>() };
    let bytes = ld.checked_mul(cols).and_then(|n| n.checked_mul(std::mem::size_of::<T>())).ok_or(too_large.clone())?;
    // Device addresses are u64 and kernel lengths u64: also keep under isize::MAX, as Rust
    // allocations do, so element offsets never overflow.
    if bytes > isize::MAX as usize {
        return Err(too_large);
    }
    Ok(bytes)
}

/// Checks that an allocation's address suits `T` (the driver promises [`ALLOC_ALIGN`];
/// this makes the promise a checked one, for one comparison per allocation).
pub(crate) fn check_aligned<T>(addr: u64) -> Result<()> {
    let align = std::mem::align_of::<T>() as u64;
    if addr.is_multiple_of(align) {
        Ok(())
    } else {
        let got = 1usize.checked_shl(addr.trailing_zeros()).unwrap_or(0);
        Err(Error::OverAligned { align: std::mem::align_of::<T>(), max: got })
    }
}

/// The accessors every type that carries a [`Span`] of columns shares — [`ColumnsMut`],
/// [`ColumnsRef`], [`ColumnView`], [`ColumnViewMut`] — written once. Each type has a
/// `span: Span` field and a `pub(crate) fn new(Span) -> Self`; `$chunks` is the type its
/// `into_columns`/`column_chunks` return.
///
/// [`ColumnsMut`]: crate::ColumnsMut
/// [`ColumnsRef`]: crate::ColumnsRef
/// [`ColumnView`]: crate::ColumnView
/// [`ColumnViewMut`]: crate::ColumnViewMut
macro_rules! span_accessors {
    ($name:ident <$($lt:lifetime),*>, $chunks:ty) => {
        impl<$($lt,)* T> $name<$($lt,)* T> {
            pub(crate) fn span(&self) -> $crate::span::Span {
                self.span
            }

            /// Rows (elements per column).
            pub fn rows(&self) -> usize {
                self.span.rows
            }

            /// Columns.
            pub fn cols(&self) -> usize {
                self.span.cols
            }

            /// The matrix's leading dimension: elements from one column's start to the
            /// next's (pass it to kernels that walk columns).
            pub fn ld(&self) -> usize {
                self.span.ld
            }

            /// `rows * cols`.
            pub fn len(&self) -> usize {
                self.span.len()
            }

            /// Whether there are no elements.
            pub fn is_empty(&self) -> bool {
                self.span.len() == 0
            }

            /// Columns `[0, at)` and `[at, cols)`; `None` if `at > cols`. Both keep what
            /// `self` had (its borrow, its lane).
            pub fn split_columns(self, at: usize) -> Option<(Self, Self)> {
                let (l, r) = self.span.split_at(at)?;
                Some((Self::new(l), Self::new(r)))
            }

            /// [`split_columns`](Self::split_columns), giving `self` back when `at > cols`,
            /// so that "split, or else use it whole" can be written:
            /// `match v.try_split_columns(k) { Ok((a, b)) => .., Err(whole) => .. }`.
            pub fn try_split_columns(self, at: usize) -> std::result::Result<(Self, Self), Self> {
                match self.span.split_at(at) {
                    Some((l, r)) => Ok((Self::new(l), Self::new(r))),
                    None => Err(self),
                }
            }

            /// Runs of `k` columns (the last may be shorter); none if `k == 0`.
            pub fn column_chunks(self, k: usize) -> $chunks {
                <$chunks>::new(self.span, k)
            }

            /// Each column on its own, in order.
            pub fn into_columns(self) -> $chunks {
                self.column_chunks(1)
            }
        }

        impl<$($lt,)* T> std::fmt::Debug for $name<$($lt,)* T> {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.debug_struct(stringify!($name))
                    .field("rows", &self.span.rows)
                    .field("cols", &self.span.cols)
                    .field("ld", &self.span.ld)
                    .finish()
            }
        }
    };
}
pub(crate) use span_accessors;

/// An iterator of disjoint runs of columns, each wrapped as `$item` (one macro for the
/// column chunks of matrices and of views, like `<[T]>::chunks`).
macro_rules! chunks_iter {
    ($(#[$doc:meta])* $vis:vis $name:ident <$($lt:lifetime),*> => $item:ident) => {
        $(#[$doc])*
        $vis struct $name<$($lt,)* T> {
            rest: $crate::span::Span,
            k: usize,
            _item: std::marker::PhantomData<$item<$($lt,)* T>>,
        }

        impl<$($lt,)* T> $name<$($lt,)* T> {
            pub(crate) fn new(rest: $crate::span::Span, k: usize) -> Self {
                $name { rest, k, _item: std::marker::PhantomData }
            }
        }

        impl<$($lt,)* T> Iterator for $name<$($lt,)* T> {
            type Item = $item<$($lt,)* T>;
            fn next(&mut self) -> Option<Self::Item> {
                self.rest.take_front(self.k).map($item::new)
            }
            fn size_hint(&self) -> (usize, Option<usize>) {
                let n = self.rest.chunks_left(self.k);
                (n, Some(n))
            }
        }

        impl<$($lt,)* T> ExactSizeIterator for $name<$($lt,)* T> {}

        impl<$($lt,)* T> DoubleEndedIterator for $name<$($lt,)* T> {
            fn next_back(&mut self) -> Option<Self::Item> {
                self.rest.take_back(self.k).map($item::new)
            }
        }

        impl<$($lt,)* T> std::fmt::Debug for $name<$($lt,)* T> {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.debug_struct(stringify!($name)).field("cols_left", &self.rest.cols).field("k", &self.k).finish()
            }
        }
    };
}
pub(crate) use chunks_iter;

#[cfg(test)]
mod tests {
    use super::*;

    fn span(rows: usize, cols: usize, ld: usize) -> Span {
        Span { ptr: 0x1000, rows, cols, ld, elem_size: 4, alloc: 1, ctx: 0, whole_columns: true }
    }

    #[test]
    fn splitting_gives_disjoint_adjacent_ranges() {
        let s = span(10, 5, 16);
        let (a, b) = s.split_at(2).unwrap();
        assert_eq!((a.cols, b.cols), (2, 3));
        assert_eq!(b.ptr, 0x1000 + 2 * 16 * 4);
        assert_eq!(a.join(b), Some(s));
        assert_eq!(b.join(a), None);
        assert!(s.split_at(6).is_none());
    }

    #[test]
    fn flat_len_covers_padding_between_columns_only() {
        assert_eq!(span(10, 3, 16).flat_len(), 2 * 16 + 10);
        assert_eq!(span(10, 1, 16).flat_len(), 10);
        assert_eq!(span(10, 0, 16).flat_len(), 0);
        assert!(span(10, 3, 10).is_contiguous());
        assert!(!span(10, 3, 16).is_contiguous());
    }

    #[test]
    fn ranges_and_chunks() {
        let s = span(4, 7, 4);
        assert_eq!(s.range(2..5).unwrap().cols, 3);
        assert_eq!(s.range(..).unwrap(), s);
        assert_eq!(s.range(2..=4).unwrap().cols, 3);
        assert!(s.range(3..9).is_none());
        #[allow(clippy::reversed_empty_ranges)]
        let reversed = s.range(5..2);
        assert!(reversed.is_none());
        assert!(s.range((Bound::Excluded(usize::MAX), Bound::Unbounded)).is_none());
        let mut rest = s;
        let widths: Vec<_> = std::iter::from_fn(|| rest.take_front(3)).map(|c| c.cols).collect();
        assert_eq!(widths, [3, 3, 1]);
        let mut rest = s;
        let back: Vec<_> = std::iter::from_fn(|| rest.take_back(3)).map(|c| c.cols).collect();
        assert_eq!(back, [1, 3, 3]);
        let mut rest = s;
        assert!(rest.take_front(0).is_none());
        assert_eq!((s.chunks_left(3), s.chunks_left(0), s.chunks_left(7)), (3, 0, 1));
    }

    #[test]
    fn bounds_is_the_one_range_helper() {
        assert_eq!(bounds(.., 5), Some((0, 5)));
        assert_eq!(bounds(1..3, 5), Some((1, 3)));
        assert_eq!(bounds(1..=3, 5), Some((1, 4)));
        assert_eq!(bounds(..=usize::MAX, 5), None);
        assert_eq!(bounds(0..6, 5), None);
        assert_eq!(bounds(5.., 5), Some((5, 5)));
    }

    #[test]
    fn zero_sized_and_overflowing_shapes_are_typed_errors() {
        assert_eq!(matrix_bytes::<f32>(0, 4, 0), Err(Error::ZeroSized));
        assert_eq!(matrix_bytes::<f32>(4, 0, 4), Err(Error::ZeroSized));
        assert_eq!(matrix_bytes::<f32>(4, 2, 3), Err(Error::LengthMismatch { expected: 4, got: 3 }));
        assert!(matches!(matrix_bytes::<f32>(usize::MAX, 2, usize::MAX), Err(Error::TooLarge { .. })));
        assert_eq!(matrix_bytes::<f32>(4, 2, 8), Ok(64));
    }

    #[test]
    fn only_whole_columns_join() {
        let s = span(10, 4, 16);
        let (a, b) = s.split_at(1).unwrap();
        assert_eq!(a.join(b), Some(s));
        // The same addresses, but `b` a row range (one column, all of whose rows are not
        // owned by it): refused on either side, or a kernel would get rows other views own.
        let rows = |x: Span| Span { whole_columns: false, ..x };
        let (a1, b1) = (rows(a), b.range(..1).map(rows).unwrap());
        assert_eq!(a1.join(b.range(..1).unwrap()), None);
        assert_eq!(a.join(b1), None);
        assert_eq!(a1.join(b1), None);
        // Splits keep the flag.
        assert!(!rows(s).split_at(2).unwrap().1.whole_columns);
        assert!(s.range(1..3).unwrap().whole_columns);
    }

    #[test]
    fn row_ranges_only_of_single_columns() {
        let one = span(10, 1, 10);
        let s = one.rows_range(2..5).unwrap();
        assert_eq!((s.ptr, s.rows, s.cols, s.flat_len()), (0x1008, 3, 1, 3));
        assert!(!s.whole_columns);
        assert!(span(10, 2, 10).rows_range(2..5).is_none());
        assert!(one.rows_range(5..11).is_none());
        // All the rows: still the whole column.
        assert_eq!(one.rows_range(..), Some(one));
    }

    /// Column `j` of a 10 x 4 matrix with `ld` 16 (4-byte elements at 0x1000).
    fn column(j: usize) -> Span {
        Span { alloc: 7, ..span(10, 4, 16) }.column(j).unwrap()
    }

    #[test]
    fn row_ranges_of_adjacent_columns_do_not_join() {
        // Rows 2..5 of columns 0 and 1 pass the address check (col 0's start + ld elements
        // is col 1's start, and both slices start 2 rows in), but a join would lower to a
        // kernel slice from (2, 0) to (4, 1): rows 5..16 of column 0 and 0..2 of column 1,
        // which other views own.
        let a = column(0).rows_range(2..5).unwrap();
        let b = column(1).rows_range(2..5).unwrap();
        assert_eq!(a.ptr + (a.cols * a.ld * a.elem_size) as u64, b.ptr);
        assert_eq!(a.join(b), None);
        // Nor a row range with a whole column, on either side.
        let top = column(1).rows_range(..10).unwrap();
        assert!(top.whole_columns, "all rows of a column are the whole column");
        let (upper, lower) = (column(1).rows_range(..5).unwrap(), column(1).rows_range(5..).unwrap());
        assert_eq!(column(0).join(upper), None);
        assert_eq!(lower.join(column(2)), None);
        assert_eq!(upper.join(lower), None, "the two halves of one column do not join either");
        // Whole columns still do.
        assert_eq!(column(0).join(column(1)).map(|s| s.cols), Some(2));
        assert_eq!(column(0).join(top).map(|s| s.cols), Some(2));
    }

    #[test]
    fn over_aligned_elements_are_refused_before_allocating() {
        #[derive(Clone, Copy)]
        #[repr(C, align(8192))]
        struct Page([u8; 8192]);
        #[derive(Clone, Copy)]
        #[repr(C, align(256))]
        struct Line([u8; 256]);
        assert_eq!(matrix_bytes::<Page>(4, 2, 4), Err(Error::OverAligned { align: 8192, max: ALLOC_ALIGN }));
        assert_eq!(matrix_bytes::<Line>(4, 2, 4), Ok(4 * 2 * 256));
        assert_eq!(matrix_bytes::<u64>(4, 2, 4), Ok(64));
        // The address check after allocating: a misaligned address is an error, not UB.
        assert_eq!(check_aligned::<Line>(0x7f00_0000_0100), Ok(()));
        assert_eq!(check_aligned::<Line>(0x7f00_0000_0080), Err(Error::OverAligned { align: 256, max: 128 }));
        assert_eq!(check_aligned::<u8>(0x7f00_0000_0001), Ok(()));
    }

    mod properties {
        use super::*;
        use proptest::prelude::*;

        /// A matrix span: up to 64 rows (ld at least rows), up to 16 columns.
        fn matrix() -> impl Strategy<Value = Span> {
            (1usize..64, 0usize..8, 1usize..16, prop::sample::select(vec![1usize, 2, 4, 8, 16]))
                .prop_map(|(rows, pad, cols, elem)| Span { elem_size: elem, ..span(rows, cols, rows + pad) })
        }

        /// The flat element indices a span covers (its own elements, not the padding).
        fn cells(s: &Span) -> Vec<usize> {
            let base = (s.ptr - 0x1000) as usize / s.elem_size;
            (0..s.cols).flat_map(|c| (0..s.rows).map(move |r| base + c * s.ld + r)).collect()
        }

        proptest! {
            /// Splitting gives two disjoint spans that cover exactly the original, and
            /// joining them back gives the original ([rule 2](crate#safety-model)'s arithmetic).
            #[test]
            fn split_then_join_is_identity(s in matrix(), at in 0usize..20) {
                match s.split_at(at) {
                    None => prop_assert!(at > s.cols),
                    Some((l, r)) => {
                        prop_assert_eq!(l.cols + r.cols, s.cols);
                        let (cl, cr) = (cells(&l), cells(&r));
                        prop_assert!(cl.iter().all(|c| !cr.contains(c)), "the halves overlap");
                        let mut both = [cl, cr].concat();
                        both.sort_unstable();
                        prop_assert_eq!(both, cells(&s));
                        if l.cols > 0 && r.cols > 0 {
                            prop_assert_eq!(l.join(r), Some(s));
                            prop_assert_eq!(r.join(l), None, "joins only in address order");
                        }
                    }
                }
            }

            /// Row ranges stay inside their column and never join anything.
            #[test]
            fn row_ranges_stay_inside_and_never_join(s in matrix(), j in 0usize..16, a in 0usize..70, b in 0usize..70) {
                let Some(col) = s.column(j) else { return Ok(()) };
                let (lo, hi) = (a.min(b), a.max(b));
                match col.rows_range(lo..hi) {
                    None => prop_assert!(hi > col.rows),
                    Some(r) => {
                        prop_assert_eq!(r.len(), hi - lo);
                        let inside = cells(&col);
                        prop_assert!(cells(&r).iter().all(|c| inside.contains(c)));
                        prop_assert_eq!(r.flat_len(), r.rows);
                        if hi - lo < col.rows {
                            if let Some(next) = s.column(j + 1).and_then(|n| n.rows_range(lo..hi)) {
                                prop_assert_eq!(r.join(next), None);
                            }
                        }
                    }
                }
            }

            /// `bounds` accepts exactly the in-range, non-reversed ranges.
            #[test]
            fn bounds_is_exact(start in 0usize..40, end in 0usize..40, len in 0usize..40) {
                let got = bounds(start..end, len);
                prop_assert_eq!(got.is_some(), start <= end && end <= len);
                prop_assert_eq!(bounds(..=end, len).is_some(), end < len);
            }

            /// Taking chunks off the front visits every column once, in order.
            #[test]
            fn chunks_cover_every_column_once(s in matrix(), k in 1usize..6) {
                let mut rest = s;
                let mut seen = Vec::new();
                while let Some(head) = rest.take_front(k) {
                    prop_assert!(head.cols <= k);
                    seen.extend(cells(&head));
                }
                prop_assert_eq!(seen, cells(&s));
            }
        }
    }
}
