//! Branded values: one device's memory and hand-offs carry its brand `'dev`
//! ([`OnDevice`], [`OnDeviceIter`]); what a [`Device`](super::Device) can adopt after a
//! run-time check ([`Adoptable`]) and what a [`DeviceStream`](super::DeviceStream) can
//! await ([`DeviceAwaitable`]).

use std::marker::PhantomData;
use std::ops::Deref;

use bytemuck::Pod;

use super::sealed::{self, RawSpan, Token};
use crate::error::Result;
use crate::fence::{Fence, Fenced};
use crate::lane::Stream;
use crate::matrix::{ColumnChunks, ColumnChunksMut, ColumnsMut, ColumnsRef, DeviceMatrix};
use crate::view::{Brand, ColumnView, ColumnViewMut};

/// Memory without a device brand that a [`Device`](crate::Device) can [`adopt`](crate::Device::adopt) after a run-time
/// check: [`ColumnsMut`], [`ColumnsRef`], `&mut`/`&` [`DeviceMatrix`], and hand-offs
/// ([`Fenced`]) of columns.
///
/// ```
/// # use sluice_host as sluice;
/// # fn main() -> sluice::Result<()> {
/// let gpus = [sluice::Gpu::cpu()];
/// let m = gpus[0].alloc_buffer::<u8>(8)?;
/// sluice::scope_multi(&gpus, |s| s.device(0, |d| { d.adopt(&m)?; d.adopt(m.as_columns())?; Ok(()) }))
/// # }
/// ```
#[diagnostic::on_unimplemented(
    message = "a `Device` cannot adopt `{Self}`",
    label = "not memory a device can adopt",
    note = "`Device::adopt` takes memory of its own `Gpu`: `ColumnsMut`, `ColumnsRef`, `&mut DeviceMatrix`, `&DeviceMatrix`, or a `Fenced` hand-off of columns"
)]
pub trait Adoptable: sealed::Sealed {
    #[doc(hidden)]
    fn span(&self, token: Token) -> RawSpan;
}

impl<T> sealed::Sealed for ColumnsMut<'_, T> {}
impl<T> Adoptable for ColumnsMut<'_, T> {
    fn span(&self, _: Token) -> RawSpan {
        RawSpan(ColumnsMut::span(self))
    }
}
impl<T> sealed::Sealed for ColumnsRef<'_, T> {}
impl<T> Adoptable for ColumnsRef<'_, T> {
    fn span(&self, _: Token) -> RawSpan {
        RawSpan(ColumnsRef::span(self))
    }
}
impl<T> sealed::Sealed for &mut DeviceMatrix<T> {}
impl<T: Pod> Adoptable for &mut DeviceMatrix<T> {
    fn span(&self, _: Token) -> RawSpan {
        RawSpan(self.as_columns().span())
    }
}
impl<T> sealed::Sealed for &DeviceMatrix<T> {}
impl<T: Pod> Adoptable for &DeviceMatrix<T> {
    fn span(&self, _: Token) -> RawSpan {
        RawSpan(self.as_columns().span())
    }
}
impl<T> sealed::Sealed for Fenced<'_, ColumnsMut<'_, T>> {}
impl<T> Adoptable for Fenced<'_, ColumnsMut<'_, T>> {
    fn span(&self, _: Token) -> RawSpan {
        RawSpan(self.value().span())
    }
}
impl<T> sealed::Sealed for Fenced<'_, ColumnsRef<'_, T>> {}
impl<T> Adoptable for Fenced<'_, ColumnsRef<'_, T>> {
    fn span(&self, _: Token) -> RawSpan {
        RawSpan(self.value().span())
    }
}

/// A value of one device, branded `'dev`: its memory ([`DeviceMatrix`], [`ColumnsMut`],
/// [`ColumnsRef`]) or its hand-offs and uploads ([`Fenced`]). Only that device's lanes
/// ([`DeviceStream`](crate::DeviceStream)) take it. Derefs to the value for reading (`rows`, `cols`, `len`);
/// its methods split and convert it, keeping the brand.
///
/// ```
/// # use sluice_host as sluice;
/// # let gpus = [sluice::Gpu::cpu()];
/// sluice::scope_multi(&gpus, |s| s.device(0, |d| {
///     let m = d.alloc_matrix::<f32>(8, 6)?;          // OnDevice<&mut DeviceMatrix<f32>>
///     assert_eq!(m.cols(), 6);                        // through deref
///     let (a, b) = m.split_columns_mut(2).unwrap();  // OnDevice<ColumnsMut>, both
///     assert_eq!((a.cols(), b.cols(), a.device()), (2, 4, 0));
///     Ok(())
/// }))?;
/// # Ok::<(), sluice::Error>(())
/// ```
pub struct OnDevice<'dev, X> {
    pub(super) value: X,
    pub(super) device: usize,
    /// The device brand: what takes an `OnDevice<'dev, _>` checks at compile time that it
    /// is this device's.
    pub(super) _brand: Brand<'dev>,
}

impl<X: Copy> Clone for OnDevice<'_, X> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<X: Copy> Copy for OnDevice<'_, X> {}

impl<X> Deref for OnDevice<'_, X> {
    type Target = X;
    fn deref(&self) -> &X {
        &self.value
    }
}

impl<X: std::fmt::Debug> std::fmt::Debug for OnDevice<'_, X> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OnDevice").field("device", &self.device).field("value", &self.value).finish()
    }
}

impl<'dev, X> OnDevice<'dev, X> {
    fn map<Y>(self, f: impl FnOnce(X) -> Y) -> OnDevice<'dev, Y> {
        OnDevice { value: f(self.value), device: self.device, _brand: PhantomData }
    }

    /// The index of the value's device in its scope.
    ///
    /// ```
    /// # use sluice_host as sluice;
    /// # let gpus = [sluice::Gpu::cpu(), sluice::Gpu::cpu()];
    /// sluice::scope_multi(&gpus, |s| s.device(1, |d| { assert_eq!(d.alloc_buffer::<u8>(1)?.device(), 1); Ok(()) }))?;
    /// # Ok::<(), sluice::Error>(())
    /// ```
    pub fn device(&self) -> usize {
        self.device
    }

    /// The value without its brand: it may then leave its device's closure and be used
    /// anywhere a plain value is (a plain [`Stream`], a collective), with the device checked
    /// at run time instead ([`Error::WrongDevice`](crate::Error::WrongDevice)). [`Device::adopt`](crate::Device::adopt) brands it again.
    ///
    /// ```
    /// # use sluice_host as sluice;
    /// # let gpus = [sluice::Gpu::cpu()];
    /// sluice::scope_multi(&gpus, |s| {
    ///     let cols = s.device(0, |d| Ok(d.alloc_buffer::<f32>(4)?.into_unbranded().as_columns_mut()))?;
    ///     s.device(0, |d| { let again = d.adopt(cols)?; assert_eq!(again.len(), 4); Ok(()) })
    /// })?;
    /// # Ok::<(), sluice::Error>(())
    /// ```
    pub fn into_unbranded(self) -> X {
        self.value
    }
}

impl<'scope, 'dev, T: Pod> OnDevice<'dev, &'scope mut DeviceMatrix<T>> {
    /// The whole matrix, mutably ([`DeviceMatrix::as_columns_mut`]), for the scope.
    ///
    /// ```
    /// # use sluice_host as sluice;
    /// # let gpus = [sluice::Gpu::cpu()];
    /// sluice::scope_multi(&gpus, |s| s.device(0, |d| { assert_eq!(d.alloc_matrix::<f32>(4, 2)?.as_columns_mut().cols(), 2); Ok(()) }))?;
    /// # Ok::<(), sluice::Error>(())
    /// ```
    pub fn as_columns_mut(self) -> OnDevice<'dev, ColumnsMut<'scope, T>> {
        self.map(|m| m.as_columns_mut())
    }

    /// Every column on its own, mutably, in order ([`DeviceMatrix::columns_mut`]).
    ///
    /// ```
    /// # use sluice_host as sluice;
    /// # let gpus = [sluice::Gpu::cpu()];
    /// sluice::scope_multi(&gpus, |s| s.device(0, |d| { assert_eq!(d.alloc_matrix::<f32>(4, 6)?.columns_mut().len(), 6); Ok(()) }))?;
    /// # Ok::<(), sluice::Error>(())
    /// ```
    pub fn columns_mut(self) -> OnDeviceIter<'dev, ColumnChunksMut<'scope, T>> {
        let device = self.device;
        OnDeviceIter { inner: self.value.columns_mut(), device, _brand: PhantomData }
    }

    /// Runs of `k` columns, mutably ([`DeviceMatrix::column_chunks_mut`]).
    ///
    /// ```
    /// # use sluice_host as sluice;
    /// # let gpus = [sluice::Gpu::cpu()];
    /// sluice::scope_multi(&gpus, |s| s.device(0, |d| { assert_eq!(d.alloc_matrix::<f32>(4, 6)?.column_chunks_mut(4).len(), 2); Ok(()) }))?;
    /// # Ok::<(), sluice::Error>(())
    /// ```
    pub fn column_chunks_mut(self, k: usize) -> OnDeviceIter<'dev, ColumnChunksMut<'scope, T>> {
        let device = self.device;
        OnDeviceIter { inner: self.value.column_chunks_mut(k), device, _brand: PhantomData }
    }

    /// Column `j`, mutably; `None` if out of range.
    ///
    /// ```
    /// # use sluice_host as sluice;
    /// # let gpus = [sluice::Gpu::cpu()];
    /// sluice::scope_multi(&gpus, |s| s.device(0, |d| { assert!(d.alloc_matrix::<f32>(4, 2)?.column_mut(1).is_some()); Ok(()) }))?;
    /// # Ok::<(), sluice::Error>(())
    /// ```
    pub fn column_mut(self, j: usize) -> Option<OnDevice<'dev, ColumnsMut<'scope, T>>> {
        let device = self.device;
        self.value.column_mut(j).map(|value| OnDevice { value, device, _brand: PhantomData })
    }

    /// Columns `[0, at)` and `[at, cols)`, both mutably; `None` if `at > cols`.
    ///
    /// ```
    /// # use sluice_host as sluice;
    /// # let gpus = [sluice::Gpu::cpu()];
    /// sluice::scope_multi(&gpus, |s| s.device(0, |d| { assert!(d.alloc_matrix::<f32>(4, 2)?.split_columns_mut(1).is_some()); Ok(()) }))?;
    /// # Ok::<(), sluice::Error>(())
    /// ```
    #[allow(clippy::type_complexity)]
    pub fn split_columns_mut(
        self,
        at: usize,
    ) -> Option<(OnDevice<'dev, ColumnsMut<'scope, T>>, OnDevice<'dev, ColumnsMut<'scope, T>>)> {
        self.as_columns_mut().split_columns(at)
    }

    /// The matrix read-only, for the scope (many lanes of the device may then read it).
    ///
    /// ```
    /// # use sluice_host as sluice;
    /// # let gpus = [sluice::Gpu::cpu()];
    /// sluice::scope_multi(&gpus, |s| s.device(0, |d| { let m = d.alloc_matrix::<f32>(4, 2)?.into_ref(); assert_eq!(m.as_columns().len(), 8); Ok(()) }))?;
    /// # Ok::<(), sluice::Error>(())
    /// ```
    pub fn into_ref(self) -> OnDevice<'dev, &'scope DeviceMatrix<T>> {
        self.map(|m| &*m)
    }
}

impl<'scope, 'dev, T: Pod> OnDevice<'dev, &'scope DeviceMatrix<T>> {
    /// The whole matrix, read-only ([`DeviceMatrix::as_columns`]).
    ///
    /// ```
    /// # use sluice_host as sluice;
    /// # let gpus = [sluice::Gpu::cpu()];
    /// sluice::scope_multi(&gpus, |s| s.device(0, |d| { let m = d.alloc_matrix::<f32>(4, 2)?.into_ref(); assert_eq!(m.as_columns().cols(), 2); Ok(()) }))?;
    /// # Ok::<(), sluice::Error>(())
    /// ```
    pub fn as_columns(self) -> OnDevice<'dev, ColumnsRef<'scope, T>> {
        self.map(|m| m.as_columns())
    }

    /// Every column on its own, read-only ([`DeviceMatrix::columns`]).
    ///
    /// ```
    /// # use sluice_host as sluice;
    /// # let gpus = [sluice::Gpu::cpu()];
    /// sluice::scope_multi(&gpus, |s| s.device(0, |d| { let m = d.alloc_matrix::<f32>(4, 3)?.into_ref(); assert_eq!(m.columns().len(), 3); Ok(()) }))?;
    /// # Ok::<(), sluice::Error>(())
    /// ```
    pub fn columns(self) -> OnDeviceIter<'dev, ColumnChunks<'scope, T>> {
        let device = self.device;
        OnDeviceIter { inner: self.value.columns(), device, _brand: PhantomData }
    }

    /// Column `j`, read-only; `None` if out of range.
    ///
    /// ```
    /// # use sluice_host as sluice;
    /// # let gpus = [sluice::Gpu::cpu()];
    /// sluice::scope_multi(&gpus, |s| s.device(0, |d| { let m = d.alloc_matrix::<f32>(4, 3)?.into_ref(); assert!(m.column(3).is_none()); Ok(()) }))?;
    /// # Ok::<(), sluice::Error>(())
    /// ```
    pub fn column(self, j: usize) -> Option<OnDevice<'dev, ColumnsRef<'scope, T>>> {
        let device = self.device;
        self.value.column(j).map(|value| OnDevice { value, device, _brand: PhantomData })
    }
}

/// Splitting branded columns keeps their brand (`ColumnsMut` and `ColumnsRef` alike).
macro_rules! branded_columns {
    ($cols:ident, $chunks:ident) => {
        impl<'scope, 'dev, T> OnDevice<'dev, $cols<'scope, T>> {
            /// Columns `[0, at)` and `[at, cols)`, both of this device; `None` if `at > cols`.
            ///
            /// ```
            /// # use sluice_host as sluice;
            /// # let gpus = [sluice::Gpu::cpu()];
            /// sluice::scope_multi(&gpus, |s| s.device(0, |d| {
            ///     let all = d.alloc_matrix::<f32>(4, 3)?.as_columns_mut();
            ///     let (a, b) = all.split_columns(1).unwrap();
            ///     assert_eq!((a.cols(), b.cols()), (1, 2));
            ///     Ok(())
            /// }))?;
            /// # Ok::<(), sluice::Error>(())
            /// ```
            #[allow(clippy::type_complexity)]
            pub fn split_columns(
                self,
                at: usize,
            ) -> Option<(OnDevice<'dev, $cols<'scope, T>>, OnDevice<'dev, $cols<'scope, T>>)> {
                let device = self.device;
                let (a, b) = self.value.split_columns(at)?;
                Some((
                    OnDevice { value: a, device, _brand: PhantomData },
                    OnDevice { value: b, device, _brand: PhantomData },
                ))
            }

            /// Runs of `k` columns (the last may be shorter), of this device.
            ///
            /// ```
            /// # use sluice_host as sluice;
            /// # let gpus = [sluice::Gpu::cpu()];
            /// sluice::scope_multi(&gpus, |s| s.device(0, |d| {
            ///     let all = d.alloc_matrix::<f32>(4, 5)?.as_columns_mut();
            ///     assert_eq!(all.column_chunks(2).len(), 3);
            ///     Ok(())
            /// }))?;
            /// # Ok::<(), sluice::Error>(())
            /// ```
            pub fn column_chunks(self, k: usize) -> OnDeviceIter<'dev, $chunks<'scope, T>> {
                let device = self.device;
                OnDeviceIter { inner: self.value.column_chunks(k), device, _brand: PhantomData }
            }

            /// Each column on its own, of this device.
            ///
            /// ```
            /// # use sluice_host as sluice;
            /// # let gpus = [sluice::Gpu::cpu()];
            /// sluice::scope_multi(&gpus, |s| s.device(0, |d| {
            ///     let all = d.alloc_matrix::<f32>(4, 5)?.as_columns_mut();
            ///     assert_eq!(all.into_columns().len(), 5);
            ///     Ok(())
            /// }))?;
            /// # Ok::<(), sluice::Error>(())
            /// ```
            pub fn into_columns(self) -> OnDeviceIter<'dev, $chunks<'scope, T>> {
                self.column_chunks(1)
            }
        }
    };
}
branded_columns!(ColumnsMut, ColumnChunksMut);
branded_columns!(ColumnsRef, ColumnChunks);

impl<'scope, 'dev, T> OnDevice<'dev, ColumnsMut<'scope, T>> {
    /// Gives up write access: the same columns, read-only, still of this device.
    ///
    /// ```
    /// # use sluice_host as sluice;
    /// # let gpus = [sluice::Gpu::cpu()];
    /// sluice::scope_multi(&gpus, |s| s.device(0, |d| {
    ///     let r = d.alloc_matrix::<f32>(4, 2)?.as_columns_mut().into_ref();
    ///     let copy = r;                                // Copy
    ///     assert_eq!(copy.len(), r.len());
    ///     Ok(())
    /// }))?;
    /// # Ok::<(), sluice::Error>(())
    /// ```
    pub fn into_ref(self) -> OnDevice<'dev, ColumnsRef<'scope, T>> {
        self.map(ColumnsMut::into_ref)
    }
}

impl<'scope, 'dev, T> OnDevice<'dev, Fenced<'scope, ColumnsMut<'scope, T>>> {
    /// Blocks this host thread until the hand-off's fence is reached, then returns the
    /// columns, still of this device ([`Fenced::wait`]).
    ///
    /// ```
    /// # use sluice_host as sluice;
    /// # let gpus = [sluice::Gpu::cpu()];
    /// sluice::scope_multi(&gpus, |s| s.device(0, |d| {
    ///     let m = d.alloc_buffer::<u8>(8)?;
    ///     let handed = d.lane()?.enter(|st| { let mut v = st.bind(m.as_columns_mut()); st.zero(&mut v)?; st.fence(v) })?;
    ///     let cols = handed.wait()?;
    ///     d.lane()?.enter(|st| { let mut v = st.bind(cols); st.zero(&mut v) })
    /// }))?;
    /// # Ok::<(), sluice::Error>(())
    /// ```
    pub fn wait(self) -> Result<OnDevice<'dev, ColumnsMut<'scope, T>>> {
        let device = self.device;
        Ok(OnDevice { value: self.value.wait()?, device, _brand: PhantomData })
    }

    /// Turns the hand-off into shared read-only data that any number of this device's
    /// lanes may await ([`Fenced::into_shared`]).
    ///
    /// ```
    /// # use sluice_host as sluice;
    /// # let gpus = [sluice::Gpu::cpu()];
    /// sluice::scope_multi(&gpus, |s| s.device(0, |d| {
    ///     let m = d.alloc_buffer::<u8>(8)?;
    ///     let shared = d.lane()?.enter(|st| { let mut v = st.bind(m.as_columns_mut()); st.zero(&mut v)?; st.fence(v) })?.into_shared();
    ///     for lane in d.lanes(2)? { lane.enter(|st| st.await_fence(&shared).map(drop))?; }
    ///     Ok(())
    /// }))?;
    /// # Ok::<(), sluice::Error>(())
    /// ```
    pub fn into_shared(self) -> OnDevice<'dev, Fenced<'scope, ColumnsRef<'scope, T>>> {
        self.map(Fenced::into_shared)
    }
}

impl<'scope, 'dev, T> OnDevice<'dev, Fenced<'scope, ColumnsRef<'scope, T>>> {
    /// Blocks this host thread until the fence is reached, then returns the read-only
    /// columns, still of this device.
    ///
    /// ```
    /// # use sluice_host as sluice;
    /// # let gpus = [sluice::Gpu::cpu()];
    /// let data = [7u32; 4];
    /// sluice::scope_multi(&gpus, |s| s.device(0, |d| {
    ///     let cols = d.upload(&data)?.wait()?;
    ///     d.lane()?.enter(|st| assert_eq!(st.bind_ref(cols).len(), 4));
    ///     Ok(())
    /// }))?;
    /// # Ok::<(), sluice::Error>(())
    /// ```
    pub fn wait(self) -> Result<OnDevice<'dev, ColumnsRef<'scope, T>>> {
        let device = self.device;
        Ok(OnDevice { value: self.value.wait()?, device, _brand: PhantomData })
    }
}

/// Branded runs of columns: an iterator over [`OnDevice`] items, from the splitting methods
/// of branded matrices and columns.
///
/// ```
/// # use sluice_host as sluice;
/// # let gpus = [sluice::Gpu::cpu()];
/// sluice::scope_multi(&gpus, |s| s.device(0, |d| {
///     let cols: Vec<_> = d.alloc_matrix::<f32>(4, 3)?.columns_mut().rev().collect();
///     assert_eq!(cols.len(), 3);
///     Ok(())
/// }))?;
/// # Ok::<(), sluice::Error>(())
/// ```
pub struct OnDeviceIter<'dev, I> {
    inner: I,
    device: usize,
    /// The device brand every item gets.
    _brand: Brand<'dev>,
}

impl<'dev, I: Iterator> Iterator for OnDeviceIter<'dev, I> {
    type Item = OnDevice<'dev, I::Item>;
    fn next(&mut self) -> Option<Self::Item> {
        let device = self.device;
        self.inner.next().map(|value| OnDevice { value, device, _brand: PhantomData })
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.inner.size_hint()
    }
}

impl<I: ExactSizeIterator> ExactSizeIterator for OnDeviceIter<'_, I> {}

impl<I: DoubleEndedIterator> DoubleEndedIterator for OnDeviceIter<'_, I> {
    fn next_back(&mut self) -> Option<Self::Item> {
        let device = self.device;
        self.inner.next_back().map(|value| OnDevice { value, device, _brand: PhantomData })
    }
}

impl<I: std::fmt::Debug> std::fmt::Debug for OnDeviceIter<'_, I> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OnDeviceIter").field("device", &self.device).field("inner", &self.inner).finish()
    }
}

/// What a [`DeviceStream`](crate::DeviceStream) can await: this device's hand-off `OnDevice<Fenced<ColumnsMut>>`
/// (by value), its shared data `&OnDevice<Fenced<ColumnsRef>>` (by reference, or by value),
/// or a plain `&Fence` of any device (ordering only).
///
/// ```
/// # use sluice_host as sluice;
/// # let gpus = [sluice::Gpu::cpu()];
/// let data = [1.0f32; 4];
/// sluice::scope_multi(&gpus, |s| s.device(0, |d| {
///     let up = d.upload(&data)?;                       // &OnDevice<Fenced<ColumnsRef>>: shared
///     let m = d.alloc_buffer::<f32>(4)?;
///     let f = d.lane()?.enter(|st| st.fence(st.bind(m.as_columns_mut())))?; // a hand-off
///     let t = d.scope().timestamp()?;                  // its fence: any device's
///     d.lane()?.enter(|st| {
///         let _x = st.await_fence(&up)?;
///         let _y = st.await_fence(f)?;
///         st.await_fence(t.fence())
///     })
/// }))?;
/// # Ok::<(), sluice::Error>(())
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be awaited by this device's lane",
    label = "not a hand-off, an upload or a fence of this scope",
    note = "`await_fence` on a device's lane takes that device's hand-off by value (`OnDevice<Fenced<..>>`), its upload by reference, or a `&Fence` of any device; to use another device's data, copy it with `copy_to_peer`"
)]
pub trait DeviceAwaitable<'scope, 'dev>: sealed::Sealed {
    /// What the awaiting lane gets: a view branded with its `'lane`, or `()`.
    type Output<'lane>;
    #[doc(hidden)]
    fn await_on<'lane>(self, st: &Stream<'scope, 'lane>, token: Token) -> Result<Self::Output<'lane>>;
}

impl<T> sealed::Sealed for OnDevice<'_, Fenced<'_, ColumnsMut<'_, T>>> {}
impl<'scope, 'dev, T> DeviceAwaitable<'scope, 'dev> for OnDevice<'dev, Fenced<'scope, ColumnsMut<'scope, T>>> {
    type Output<'lane> = ColumnViewMut<'scope, 'lane, T>;
    fn await_on<'lane>(self, st: &Stream<'scope, 'lane>, _: Token) -> Result<Self::Output<'lane>> {
        st.await_fence(self.value)
    }
}

impl<T> sealed::Sealed for OnDevice<'_, Fenced<'_, ColumnsRef<'_, T>>> {}
impl<'scope, 'dev, T> DeviceAwaitable<'scope, 'dev> for OnDevice<'dev, Fenced<'scope, ColumnsRef<'scope, T>>> {
    type Output<'lane> = ColumnView<'scope, 'lane, T>;
    fn await_on<'lane>(self, st: &Stream<'scope, 'lane>, _: Token) -> Result<Self::Output<'lane>> {
        st.await_fence(self.value)
    }
}

impl<T> sealed::Sealed for &OnDevice<'_, Fenced<'_, ColumnsRef<'_, T>>> {}
impl<'scope, 'dev, T> DeviceAwaitable<'scope, 'dev> for &OnDevice<'dev, Fenced<'scope, ColumnsRef<'scope, T>>> {
    type Output<'lane> = ColumnView<'scope, 'lane, T>;
    fn await_on<'lane>(self, st: &Stream<'scope, 'lane>, _: Token) -> Result<Self::Output<'lane>> {
        st.await_fence(&self.value)
    }
}

impl sealed::Sealed for &Fence<'_> {}
impl<'scope, 'dev> DeviceAwaitable<'scope, 'dev> for &Fence<'scope> {
    type Output<'lane> = ();
    fn await_on<'lane>(self, st: &Stream<'scope, 'lane>, _: Token) -> Result<()> {
        st.await_fence(self)
    }
}
