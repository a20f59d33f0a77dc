//! Views: device columns bound to one lane, branded with that lane's `'lane`.
//!
//! A view is what kernels and copies take. It exists only inside
//! [`Lane::enter`](crate::Lane::enter)'s closure, carries the closure's brand `'lane`, and can
//! therefore be used only with that lane's [`Stream`](crate::Stream): every launch or copy
//! on another lane, and every attempt to let the view escape the closure, fails to compile.
//! The way out is a fence ([`Stream::fence`](crate::Stream::fence)).

use std::marker::PhantomData;
use std::ops::RangeBounds;

use crate::error::{Error, Result};
use crate::span::{chunks_iter, span_accessors, Span};

/// The one invariance marker of the crate: `fn(&'a ()) -> &'a ()` is invariant in `'a` (it
/// appears in argument and return position), and fn pointers are
/// `Send + Sync + Unpin + Copy`, so the marker leaves the auto traits alone. Lanes, scopes
/// and brands use it; each field that holds one says what would break without it.
pub(crate) type Invariant<'a> = PhantomData<fn(&'a ()) -> &'a ()>;

/// The brand: an invariant lifetime that names one entered lane. Without the invariance,
/// `'lane` could shrink or grow to match another lane's brand and views would move between
/// lanes unfenced.
pub(crate) type Brand<'lane> = Invariant<'lane>;

/// A read-only view of device columns, bound to one lane: the lane's `&'scope [T]`.
///
/// `Copy`; pass it (or `&view`) for a [`Ref<T>`](crate::Ref) kernel parameter, or as the
/// source of [`Stream::copy_to_host`](crate::Stream::copy_to_host). It comes from awaiting a
/// shared fence ([`Stream::await_fence`](crate::Stream::await_fence) on `&Fenced<ColumnsRef>`,
/// e.g. an upload), from [`Stream::bind_ref`](crate::Stream::bind_ref), or from a mutable view.
///
/// ```no_run
/// # use sluice_host as sluice;
/// # fn demo(gpu: &sluice::Gpu, data: &[f32]) -> sluice::Result<()> {
/// sluice::scope(gpu, |s| {
///     let shared = s.upload_matrix(data, 256, 4)?;   // 4 columns of 256, uploaded once
///     for lane in s.lanes(4)? {
///         lane.enter(|st| {
///             let all = st.await_fence(&shared)?;      // GPU-side wait; the host goes on
///             let col = all.column(0).unwrap();        // still bound to this lane
///             assert_eq!(col.rows(), 256);
///             Ok::<_, sluice::Error>(())
///         })?;
///     }
///     Ok(())
/// })
/// # }
/// ```
///
/// # Lifetimes
///
/// `'scope` is how long the memory is borrowed (at least until the scope joins); `'lane` is
/// the brand of the lane it is bound to, valid only inside that lane's `enter` closure.
/// A view cannot leave the closure:
///
/// ```compile_fail
/// # use sluice_host as sluice;
/// # fn demo(gpu: &sluice::Gpu, data: &[f32]) -> sluice::Result<()> {
/// sluice::scope(gpu, |s| {
///     let shared = s.upload(data)?;
///     let lane = s.lane()?;
///     let escaped = lane.enter(|st| st.await_fence(&shared))?;
///     // error: lifetime may not live long enough — the view would outlive its lane's closure
///     # let _ = escaped;
///     Ok(())
/// })
/// # }
/// ```
///
/// Fence it to hand it on, or await the shared fence again where it is needed:
///
/// ```no_run
/// # use sluice_host as sluice;
/// # fn demo(gpu: &sluice::Gpu, data: &[f32]) -> sluice::Result<()> {
/// sluice::scope(gpu, |s| {
///     let shared = s.upload(data)?;
///     let (a, b) = (s.lane()?, s.lane()?);
///     a.enter(|st| st.await_fence(&shared).map(drop))?;
///     b.enter(|st| st.await_fence(&shared).map(drop))?;
///     Ok(())
/// })
/// # }
/// ```
pub struct ColumnView<'scope, 'lane, T> {
    span: Span,
    /// Shared borrow of the elements for `'scope`, as `&'scope [T]`.
    _borrow: PhantomData<&'scope [T]>,
    /// The lane this view is bound to; without it, views could be used on any lane.
    _brand: Brand<'lane>,
}

/// A mutable view of device columns, bound to one lane: the lane's `&'scope mut [T]`.
///
/// Pass `&mut view` for a [`Mut<T>`](crate::Mut) kernel parameter (or `&view` for a
/// [`Ref<T>`](crate::Ref) one), copy into it with
/// [`Stream::copy_to_device`](crate::Stream::copy_to_device), out of it with
/// [`Stream::copy_to_host`](crate::Stream::copy_to_host). It comes from
/// [`Stream::bind`](crate::Stream::bind) or from awaiting a hand-off
/// ([`Stream::await_fence`](crate::Stream::await_fence) on a `Fenced<ColumnsMut>`).
///
/// Work on one lane runs in order, so a view may be written and read by many launches and
/// copies on its lane with no fence at all. To hand it to another lane, fence it:
/// [`Stream::fence`](crate::Stream::fence) records an event and returns the columns
/// unbranded, wrapped in a [`Fenced`](crate::Fenced) that the other lane awaits.
///
/// ```no_run
/// # use sluice_host as sluice;
/// # use sluice::{Kernel, LaunchConfig, Mut};
/// # const FILL: Kernel<(Mut<f32>, f32)> = unsafe { Kernel::new("", "fill_column") };
/// // FILL writes a value into a column: a `#[kernel]` of yours, or `sluice::kernels::fill_column` (feature "kernels")
/// # fn demo(gpu: &sluice::Gpu) -> sluice::Result<()> {
/// sluice::scope(gpu, |s| {
///     let m = s.alloc_matrix::<f32>(1024, 2)?;
///     let (producer, consumer) = (s.lane()?, s.lane()?);
///     let handed = producer.enter(|st| {
///         let mut v = st.bind(m.as_columns_mut());
///         st.launch(&FILL, LaunchConfig::for_elements(2048, 256), (&mut v, 1.0))?;
///         st.fence(v)                                 // event after the write
///     })?;
///     consumer.enter(|st| {
///         let mut v = st.await_fence(handed)?;         // cuStreamWaitEvent; now bound here
///         st.zero(&mut v)
///     })
/// })
/// # }
/// ```
///
/// # Rule 1: no use on another lane before a fence
///
/// ```compile_fail
/// # use sluice_host as sluice;
/// # use sluice::{Kernel, LaunchConfig, Mut};
/// # const FILL: Kernel<(Mut<f32>, f32)> = unsafe { Kernel::new("", "fill_column") };
/// // FILL writes a value into a column: a `#[kernel]` of yours, or `sluice::kernels::fill_column` (feature "kernels")
/// # fn demo(gpu: &sluice::Gpu) -> sluice::Result<()> {
/// sluice::scope(gpu, |s| {
///     let m = s.alloc_matrix::<f32>(1024, 1)?;
///     let (a, b) = (s.lane()?, s.lane()?);
///     a.enter(|sa| {
///         let mut v = sa.bind(m.as_columns_mut());
///         b.enter(|sb| {
///             // error: lifetime may not live long enough — `v` is branded with lane a
///             sb.launch(&FILL, LaunchConfig::for_elements(1024, 256), (&mut v, 1.0))
///         })
///     })
/// })
/// # }
/// ```
///
/// The fix is the fence-then-await shown above.
///
/// # Lifetimes
///
/// As [`ColumnView`]: `'scope` for the memory, `'lane` for the lane. Methods taking `&mut self`
/// reborrow for a shorter lifetime: such sub-views can be launched and copied on the lane
/// but not fenced (a fence needs the `'scope` borrow), which keeps hand-offs whole.
pub struct ColumnViewMut<'scope, 'lane, T> {
    span: Span,
    /// Exclusive borrow of the elements for `'scope`, as `&'scope mut [T]`.
    _borrow: PhantomData<&'scope mut [T]>,
    /// The lane this view is bound to; without it, views could be used on any lane.
    _brand: Brand<'lane>,
}

impl<T> Clone for ColumnView<'_, '_, T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for ColumnView<'_, '_, T> {}

span_accessors!(ColumnView<'scope, 'lane>, ViewChunks<'scope, 'lane, T>);
span_accessors!(ColumnViewMut<'scope, 'lane>, ViewChunksMut<'scope, 'lane, T>);

chunks_iter!(
    /// Runs of columns of a [`ColumnView`], still bound to its lane.
    pub ViewChunks<'scope, 'lane> => ColumnView
);
chunks_iter!(
    /// Disjoint runs of columns of a [`ColumnViewMut`], still bound to its lane.
    pub ViewChunksMut<'scope, 'lane> => ColumnViewMut
);

macro_rules! view_join {
    ($name:ident, $bind:literal) => {
        impl<'scope, 'lane, T> $name<'scope, 'lane, T> {
            pub(crate) fn new(span: Span) -> Self {
                $name { span, _borrow: PhantomData, _brand: PhantomData }
            }

            /// Joins `self` with `next` when `next` starts at the column after `self`'s last
            /// in the same matrix; otherwise gives both back. Only views of whole columns
            /// join: row ranges (`split_rows`, `slice_rows`) never do, since a join of row
            /// ranges of two columns would also cover the rows between them.
            #[doc = ""]
            #[doc = "```no_run"]
            #[doc = "# use sluice_host as sluice;"]
            #[doc = "# fn demo(gpu: &sluice::Gpu) -> sluice::Result<()> {"]
            #[doc = "sluice::scope(gpu, |s| {"]
            #[doc = "    let m = s.alloc_matrix::<f32>(4, 6)?;"]
            #[doc = "    s.lane()?.enter(|st| {"]
            #[doc = concat!("        let v = ", $bind, ";")]
            #[doc = "        let (a, b) = v.split_columns(2).unwrap();"]
            #[doc = "        let whole = a.join(b).ok().unwrap();"]
            #[doc = "        assert_eq!(whole.cols(), 6);"]
            #[doc = "    });"]
            #[doc = "    Ok(())"]
            #[doc = "})"]
            #[doc = "# }"]
            #[doc = "```"]
            // The error gives both views back (128 bytes, moved only when a join fails):
            // boxing them would allocate for no gain.
            #[allow(clippy::result_large_err)]
            pub fn join(self, next: Self) -> std::result::Result<Self, (Self, Self)> {
                match self.span.join(next.span) {
                    Some(span) => Ok($name::new(span)),
                    None => Err((self, next)),
                }
            }

            /// The device address of the first element: for by-value structs of unchecked
            /// kernels that carry pointers ([`ByValue`](crate::ByValue)). A number only;
            /// using it is the `unsafe` launch's contract
            /// ([`Stream::launch_unchecked`](crate::Stream::launch_unchecked)).
            pub fn device_address(&self) -> u64 {
                self.span.ptr
            }
        }
    };
}

view_join!(ColumnView, "st.bind_ref(m.as_columns())");
view_join!(ColumnViewMut, "st.bind(m.as_columns_mut())");

/// A read-only view seen as a row-major matrix of `rows` rows of `cols` elements (element
/// `(r, c)` at position `r * cols + c` of the view), bound to the view's lane: what a kernel's
/// `TmaMatrix<T, R, C>` parameter ([`Tma`](crate::Tma)) takes. Made by
/// [`ColumnView::row_major`] or [`ColumnViewMut::row_major`], which check that the view
/// holds the matrix and that Hopper's tensor-memory accelerator can read it.
///
/// ```no_run
/// # use sluice_host as sluice;
/// # fn demo(gpu: &sluice::Gpu, a: &[u16]) -> sluice::Result<()> {
/// sluice::scope(gpu, |s| {
///     let a = s.upload(a)?;                       // 256 x 64, row-major
///     s.lane()?.enter(|st| {
///         let a = st.await_fence(&a)?.row_major(256, 64)?;
///         assert_eq!((a.rows(), a.cols()), (256, 64));
///         Ok::<_, sluice::Error>(())
///     })
/// })
/// # }
/// ```
pub struct RowMajor<'scope, 'lane, T> {
    span: Span,
    rows: usize,
    cols: usize,
    _borrow: PhantomData<&'scope [T]>,
    _brand: Brand<'lane>,
}

impl<T> Clone for RowMajor<'_, '_, T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for RowMajor<'_, '_, T> {}

impl<T> RowMajor<'_, '_, T> {
    /// Rows of the matrix.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Elements per row.
    pub fn cols(&self) -> usize {
        self.cols
    }

    /// Where the matrix is: its first element's address, rows, columns, bytes per element.
    pub(crate) fn layout(&self) -> (u64, usize, usize, usize) {
        (self.span.ptr, self.rows, self.cols, self.span.elem_size)
    }

    /// The view's memory, for the launch's checks (its context).
    pub(crate) fn span(&self) -> &Span {
        &self.span
    }
}

/// The view's first `rows * cols` elements as a row-major `rows x cols` matrix that the
/// tensor-memory accelerator can read: or why not.
fn row_major_span(span: Span, rows: usize, cols: usize) -> Result<Span> {
    let fail = |reason: String| Err(Error::TensorMap { reason });
    let elem = span.elem_size;
    if rows == 0 || cols == 0 {
        return fail(format!("a {rows} x {cols} matrix is empty"));
    }
    let len = span.flat_len();
    match rows.checked_mul(cols) {
        Some(n) if n <= len => {}
        _ => return fail(format!("{rows} x {cols} elements do not fit in the view's {len}")),
    }
    if ![1, 2, 4, 8].contains(&elem) {
        return fail(format!("{elem}-byte elements: TMA moves elements of 1, 2, 4 or 8 bytes"));
    }
    if !span.ptr.is_multiple_of(16) {
        return fail(format!(
            "the view starts at device address {:#x}: TMA reads from 16-byte aligned addresses (start the view \
             at a multiple of {} elements)",
            span.ptr,
            16 / elem
        ));
    }
    let pitch = cols as u64 * elem as u64;
    if !pitch.is_multiple_of(16) {
        return fail(format!(
            "rows of {cols} x {elem} bytes: TMA needs rows whose length in bytes is a multiple of 16 (cols a \
             multiple of {})",
            16 / elem
        ));
    }
    // The TMA's coordinates are signed 32-bit; the device clamps any past 2^30 to 2^30 (a
    // box wholly outside), which must then be outside every matrix.
    if rows as u64 > 1 << 30 || cols as u64 > 1 << 30 || pitch >= 1 << 40 {
        return fail(format!("{rows} x {cols}: a TMA matrix has at most 2^30 rows and columns"));
    }
    Ok(span)
}

/// The errors and example of `row_major`, for both views.
macro_rules! row_major_docs {
    ($bind:literal, $item:item) => {
        /// The view's first `rows * cols` elements seen as a row-major `rows x cols` matrix,
        /// for a kernel's `TmaMatrix` parameter ([`Tma`](crate::Tma)).
        ///
        /// # Errors
        /// [`Error::TensorMap`](crate::Error::TensorMap) if `rows` or `cols` is 0, the
        /// view holds fewer than `rows * cols` elements (as a kernel's `&[T]` sees it), or
        /// the tensor-memory accelerator cannot read it: an element of other than 1, 2, 4 or
        /// 8 bytes, a start address that is not a multiple of 16 bytes, a row whose bytes are
        /// not a multiple of 16, more than 2^30 rows or columns.
        #[doc = ""]
        #[doc = "```no_run"]
        #[doc = "# use sluice_host as sluice;"]
        #[doc = "# fn demo(gpu: &sluice::Gpu) -> sluice::Result<()> {"]
        #[doc = "sluice::scope(gpu, |s| {"]
        #[doc = "    let m = s.alloc_buffer::<u16>(128 * 64)?;"]
        #[doc = "    s.lane()?.enter(|st| {"]
        #[doc = concat!("        let v = ", $bind, ";")]
        #[doc = "        let a = v.row_major(128, 64)?;"]
        #[doc = "        assert_eq!(a.rows(), 128);"]
        #[doc = "        assert!(v.row_major(128, 65).is_err()); // more than the view holds"]
        #[doc = "        Ok::<_, sluice::Error>(())"]
        #[doc = "    })"]
        #[doc = "})"]
        #[doc = "# }"]
        #[doc = "```"]
        $item
    };
}

impl<'scope, 'lane, T> ColumnView<'scope, 'lane, T> {
    row_major_docs!(
        "st.bind_ref(m.as_columns())",
        pub fn row_major(self, rows: usize, cols: usize) -> Result<RowMajor<'scope, 'lane, T>> {
            let span = row_major_span(self.span, rows, cols)?;
            Ok(RowMajor { span, rows, cols, _borrow: PhantomData, _brand: PhantomData })
        }
    );
}

impl<'scope, 'lane, T> ColumnViewMut<'scope, 'lane, T> {
    row_major_docs!(
        "st.bind(m.as_columns_mut())",
        pub fn row_major(&self, rows: usize, cols: usize) -> Result<RowMajor<'_, 'lane, T>> {
            let span = row_major_span(self.span, rows, cols)?;
            Ok(RowMajor { span, rows, cols, _borrow: PhantomData, _brand: PhantomData })
        }
    );
}

impl<'scope, 'lane, T> ColumnView<'scope, 'lane, T> {
    /// Column `j`; `None` if out of range.
    ///
    /// ```no_run
    /// # use sluice_host as sluice;
    /// # fn demo(gpu: &sluice::Gpu) -> sluice::Result<()> {
    /// sluice::scope(gpu, |s| {
    ///     let m = s.alloc_matrix::<f32>(4, 6)?;
    ///     s.lane()?.enter(|st| {
    ///         let v = st.bind_ref(m.as_columns());
    ///         assert_eq!(v.column(5).unwrap().cols(), 1);
    ///     });
    ///     Ok(())
    /// })
    /// # }
    /// ```
    pub fn column(&self, j: usize) -> Option<Self> {
        self.span.column(j).map(ColumnView::new)
    }

    /// A range of columns; `None` if out of range.
    ///
    /// ```no_run
    /// # use sluice_host as sluice;
    /// # fn demo(gpu: &sluice::Gpu) -> sluice::Result<()> {
    /// sluice::scope(gpu, |s| {
    ///     let m = s.alloc_matrix::<f32>(4, 6)?;
    ///     s.lane()?.enter(|st| {
    ///         let v = st.bind_ref(m.as_columns());
    ///         assert_eq!(v.column_range(1..3).unwrap().cols(), 2);
    ///     });
    ///     Ok(())
    /// })
    /// # }
    /// ```
    pub fn column_range(&self, range: impl RangeBounds<usize>) -> Option<Self> {
        self.span.range(range).map(ColumnView::new)
    }

    /// A range of rows of a single-column view (e.g. part of an uploaded 1-D buffer);
    /// `None` if out of range or if the view has more than one column.
    ///
    /// ```no_run
    /// # use sluice_host as sluice;
    /// # fn demo(gpu: &sluice::Gpu) -> sluice::Result<()> {
    /// sluice::scope(gpu, |s| {
    ///     let m = s.alloc_matrix::<f32>(4, 6)?;
    ///     s.lane()?.enter(|st| {
    ///         let v = st.bind_ref(m.as_columns());
    ///         let c = v.column(0).unwrap();
    ///         assert_eq!(c.slice_rows(1..3).unwrap().len(), 2);
    ///         assert!(v.slice_rows(1..3).is_none()); // several columns
    ///     });
    ///     Ok(())
    /// })
    /// # }
    /// ```
    pub fn slice_rows(&self, range: impl RangeBounds<usize>) -> Option<Self> {
        self.span.rows_range(range).map(ColumnView::new)
    }
}

impl<'scope, 'lane, T> ColumnViewMut<'scope, 'lane, T> {
    /// The same columns, read-only, for as long as `self` is borrowed.
    ///
    /// ```no_run
    /// # use sluice_host as sluice;
    /// # fn demo(gpu: &sluice::Gpu) -> sluice::Result<()> {
    /// sluice::scope(gpu, |s| {
    ///     let m = s.alloc_matrix::<f32>(4, 6)?;
    ///     s.lane()?.enter(|st| {
    ///         let v = st.bind(m.as_columns_mut());
    ///         let r = v.as_view();
    ///         assert_eq!(r.len(), v.len());
    ///     });
    ///     Ok(())
    /// })
    /// # }
    /// ```
    pub fn as_view(&self) -> ColumnView<'_, 'lane, T> {
        ColumnView::new(self.span)
    }

    /// Gives up write access: the same columns, read-only, still bound to this lane.
    ///
    /// ```no_run
    /// # use sluice_host as sluice;
    /// # fn demo(gpu: &sluice::Gpu) -> sluice::Result<()> {
    /// sluice::scope(gpu, |s| {
    ///     let m = s.alloc_matrix::<f32>(4, 6)?;
    ///     s.lane()?.enter(|st| {
    ///         let v = st.bind(m.as_columns_mut());
    ///         let r = v.into_view(); // can now be fenced as shared data
    ///         assert_eq!(r.cols(), 6);
    ///     });
    ///     Ok(())
    /// })
    /// # }
    /// ```
    pub fn into_view(self) -> ColumnView<'scope, 'lane, T> {
        ColumnView::new(self.span)
    }

    /// Column `j`, mutably, for as long as `self` is borrowed; `None` if out of range.
    ///
    /// ```no_run
    /// # use sluice_host as sluice;
    /// # fn demo(gpu: &sluice::Gpu) -> sluice::Result<()> {
    /// sluice::scope(gpu, |s| {
    ///     let m = s.alloc_matrix::<f32>(4, 6)?;
    ///     s.lane()?.enter(|st| {
    ///         let mut v = st.bind(m.as_columns_mut());
    ///         let mut c = v.column_mut(2).unwrap();
    ///         st.zero(&mut c).unwrap();
    ///     });
    ///     Ok(())
    /// })
    /// # }
    /// ```
    pub fn column_mut(&mut self, j: usize) -> Option<ColumnViewMut<'_, 'lane, T>> {
        self.span.column(j).map(ColumnViewMut::new)
    }

    /// A range of columns, mutably, for as long as `self` is borrowed.
    ///
    /// ```no_run
    /// # use sluice_host as sluice;
    /// # fn demo(gpu: &sluice::Gpu) -> sluice::Result<()> {
    /// sluice::scope(gpu, |s| {
    ///     let m = s.alloc_matrix::<f32>(4, 6)?;
    ///     s.lane()?.enter(|st| {
    ///         let mut v = st.bind(m.as_columns_mut());
    ///         assert_eq!(v.column_range_mut(..2).unwrap().cols(), 2);
    ///     });
    ///     Ok(())
    /// })
    /// # }
    /// ```
    pub fn column_range_mut(&mut self, range: impl RangeBounds<usize>) -> Option<ColumnViewMut<'_, 'lane, T>> {
        self.span.range(range).map(ColumnViewMut::new)
    }

    /// Rows `[0, at)` and `[at, rows)` of a single-column view; `None` if `at > rows` or the
    /// view has more than one column (a row split of several columns would interleave).
    ///
    /// ```no_run
    /// # use sluice_host as sluice;
    /// # fn demo(gpu: &sluice::Gpu) -> sluice::Result<()> {
    /// sluice::scope(gpu, |s| {
    ///     let m = s.alloc_matrix::<f32>(4, 6)?;
    ///     s.lane()?.enter(|st| {
    ///         let v = st.bind(m.as_columns_mut());
    ///         let (c0, _rest) = v.split_columns(1).unwrap();
    ///         let (top, bottom) = c0.split_rows(1).unwrap();
    ///         assert_eq!((top.rows(), bottom.rows()), (1, 3));
    ///     });
    ///     Ok(())
    /// })
    /// # }
    /// ```
    pub fn split_rows(self, at: usize) -> Option<(Self, Self)> {
        let top = self.span.rows_range(..at)?;
        let bottom = self.span.rows_range(at..)?;
        Some((ColumnViewMut::new(top), ColumnViewMut::new(bottom)))
    }

    /// [`split_rows`](Self::split_rows), giving `self` back when `at > rows`.
    ///
    /// ```no_run
    /// # use sluice_host as sluice;
    /// # fn demo(gpu: &sluice::Gpu, k: usize) -> sluice::Result<()> {
    /// sluice::scope(gpu, |s| {
    ///     let m = s.alloc_matrix::<f32>(4, 1)?;
    ///     s.lane()?.enter(|st| {
    ///         let v = st.bind(m.as_columns_mut());
    ///         match v.try_split_rows(k) {
    ///             Ok((mut top, _bottom)) => st.zero(&mut top),
    ///             Err(mut whole) => st.zero(&mut whole), // k > 4: the whole column
    ///         }
    ///     })
    /// })
    /// # }
    /// ```
    pub fn try_split_rows(self, at: usize) -> std::result::Result<(Self, Self), Self> {
        match (self.span.rows_range(..at), self.span.rows_range(at..)) {
            (Some(top), Some(bottom)) => Ok((ColumnViewMut::new(top), ColumnViewMut::new(bottom))),
            _ => Err(self),
        }
    }
}

/// What a copy to the host (or to another device) reads: `&ColumnView`, `ColumnView` or
/// `&ColumnViewMut` of the lane the copy is enqueued on. A hand-off ([`Fenced`](crate::Fenced))
/// or an upload is awaited on the lane first, which gives such a view. Sealed.
///
/// ```
/// # use sluice_host as sluice;
/// # fn demo(gpu: &sluice::Gpu) -> sluice::Result<()> {
/// let mut host = gpu.pinned_buffer::<f32>(4)?;
/// sluice::scope(gpu, |s| {
///     let x = s.upload(&[1.0f32, 2.0, 3.0, 4.0])?;
///     s.lane()?.enter(|st| {
///         let x = st.await_fence(&x)?; // a view of this lane
///         st.copy_to_host(&x, host.as_pinned_mut()).map(drop)
///     })
/// })?;
/// assert_eq!(host[..], [1.0, 2.0, 3.0, 4.0]);
/// # Ok(()) }
/// # demo(&sluice::Gpu::cpu()).unwrap();
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be copied from on this lane",
    label = "not a view bound to this lane",
    note = "a copy reads `&ColumnView`, `ColumnView` or `&ColumnViewMut` of the lane it is enqueued on",
    note = "a hand-off (`Fenced`) or an upload is awaited on the lane first: `let v = st.await_fence(&x)?;`, then copy from `&v`"
)]
pub trait CopySource<'v, 'lane, T>: copy_source::Sealed {
    /// The view the copy reads.
    #[doc(hidden)]
    fn view(self) -> ColumnView<'v, 'lane, T>;
}

mod copy_source {
    pub trait Sealed {}
    impl<T> Sealed for super::ColumnView<'_, '_, T> {}
    impl<T> Sealed for &super::ColumnView<'_, '_, T> {}
    impl<T> Sealed for &super::ColumnViewMut<'_, '_, T> {}
}

impl<'v, 'lane, T> CopySource<'v, 'lane, T> for ColumnView<'v, 'lane, T> {
    fn view(self) -> ColumnView<'v, 'lane, T> {
        self
    }
}

impl<'v, 'lane, T> CopySource<'v, 'lane, T> for &ColumnView<'v, 'lane, T> {
    fn view(self) -> ColumnView<'v, 'lane, T> {
        *self
    }
}

impl<'v, 'lane, T> CopySource<'v, 'lane, T> for &'v ColumnViewMut<'_, 'lane, T> {
    fn view(self) -> ColumnView<'v, 'lane, T> {
        self.as_view()
    }
}

impl<'a, 'lane, T> From<&'a ColumnViewMut<'_, 'lane, T>> for ColumnView<'a, 'lane, T> {
    fn from(v: &'a ColumnViewMut<'_, 'lane, T>) -> Self {
        v.as_view()
    }
}

impl<'a, 'lane, T> From<&ColumnView<'a, 'lane, T>> for ColumnView<'a, 'lane, T> {
    fn from(v: &ColumnView<'a, 'lane, T>) -> Self {
        *v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn views_are_send_and_sync() {
        fn assert<T: Send + Sync>() {}
        assert::<ColumnView<'static, 'static, f32>>();
        assert::<ColumnViewMut<'static, 'static, f32>>();
    }

    /// Column `j` of a 10 x 4 matrix with `ld` 16 (4-byte elements at 0x1000).
    fn column(j: usize) -> Span {
        let m = Span { ptr: 0x1000, rows: 10, cols: 4, ld: 16, elem_size: 4, alloc: 7, ctx: 0, whole_columns: true };
        m.column(j).unwrap()
    }

    #[test]
    fn split_rows_views_cannot_be_joined_across_columns() {
        let (c0, c1) = (ColumnViewMut::<'_, '_, f32>::new(column(0)), ColumnViewMut::<'_, '_, f32>::new(column(1)));
        let (_top0, bottom0) = c0.split_rows(2).unwrap();
        let (_top1, bottom1) = c1.split_rows(2).unwrap();
        let (bottom0, rest0) = bottom0.split_rows(3).unwrap();
        let (bottom1, _rest1) = bottom1.split_rows(3).unwrap();
        let (bottom0, bottom1) = match bottom0.join(bottom1) {
            Ok(joined) => panic!("row slices of two columns joined into {joined:?}"),
            Err(both) => both,
        };
        assert_eq!((bottom0.rows(), bottom1.rows()), (3, 3));
        // A row slice keeps being a single column: splitting and iterating it stays inside it.
        assert_eq!(rest0.span().flat_len(), 5);
        assert_eq!(rest0.into_columns().count(), 1);
        let (empty, same) = bottom1.split_columns(0).unwrap();
        assert_eq!((empty.cols(), same.cols()), (0, 1));
        assert!(empty.join(same).is_err());
    }
}
