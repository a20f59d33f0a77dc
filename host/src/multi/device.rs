//! Entering a device: [`MultiScope::device`] and [`MultiScope::each_device`] mint the
//! device brand `'dev`; a [`Device`] hands out its lanes ([`DeviceLane`]) and its memory
//! ([`OnDevice`](super::OnDevice)), and a [`DeviceStream`] binds and awaits only what
//! carries the same brand.

use std::marker::PhantomData;
use std::ops::Deref;

use bytemuck::Pod;

use super::branded::{Adoptable, DeviceAwaitable, OnDevice};
use super::scope::{MultiScope, MultiShared};
use super::sealed::Token;
use crate::device::Gpu;
use crate::error::{Error, Result};
use crate::fence::{Fenceable, Fenced};
use crate::lane::{Lane, LaneStats, Stream};
use crate::matrix::{ColumnsMut, ColumnsRef, DeviceMatrix};
use crate::scope::Scope;
use crate::view::{Brand, ColumnView, ColumnViewMut};

impl<'scope, 'env> MultiScope<'scope, 'env> {
    /// Enters device `index`: runs `f` with the device's [`Device`], branded with a fresh
    /// lifetime `'dev` that only this call's lanes, memory and hand-offs carry. Nothing
    /// branded leaves `f`; data leaves the device through peer copies and collectives.
    ///
    /// # Errors
    /// [`Error::NoDevice`] if `index` is not a device of the scope; otherwise `f`'s result.
    ///
    /// ```
    /// # use sluice_host as sluice;
    /// # fn main() -> sluice::Result<()> {
    /// let gpus = [sluice::Gpu::cpu(), sluice::Gpu::cpu()];
    /// sluice::scope_multi(&gpus, |s| {
    ///     s.device(0, |dev| {
    ///         let m = dev.alloc_buffer::<f32>(256)?;
    ///         dev.lane()?.enter(|st| { let mut v = st.bind(m.as_columns_mut()); st.zero(&mut v) })
    ///     })
    /// })
    /// # }
    /// ```
    ///
    /// # Lifetimes
    ///
    /// `for<'dev>`: the closure works for any brand, so two entries' brands never match.
    /// Memory of one device bound on a lane of another does not compile:
    ///
    /// ```compile_fail
    /// # use sluice_host as sluice;
    /// # fn main() -> sluice::Result<()> {
    /// # let gpus = [sluice::Gpu::cpu(), sluice::Gpu::cpu()];
    /// sluice::scope_multi(&gpus, |s| {
    ///     s.device(0, |d0| {
    ///         let m = d0.alloc_buffer::<f32>(256)?;
    ///         s.device(1, |d1| {
    ///             d1.lane()?.enter(|st| {
    ///                 let mut v = st.bind(m.as_columns_mut()); // error: device 0's memory, device 1's lane
    ///                 st.zero(&mut v)
    ///             })
    ///         })
    ///     })
    /// })
    /// # }
    /// ```
    ///
    /// Copy it to the other device instead ([`DeviceStream::copy_to_peer`]).
    pub fn device<R>(
        &'scope self,
        index: usize,
        f: impl for<'dev> FnOnce(Device<'scope, 'env, 'dev>) -> Result<R>,
    ) -> Result<R> {
        if index >= self.scopes.len() {
            return Err(Error::NoDevice { ordinal: index, count: self.scopes.len() });
        }
        f(Device { multi: self, index, _brand: PhantomData })
    }

    /// Enters every device in turn ([`device`](MultiScope::device) for 0, 1, ...) and
    /// collects what `f` returns for each.
    ///
    /// ```
    /// # use sluice_host as sluice;
    /// # fn main() -> sluice::Result<()> {
    /// let gpus = [sluice::Gpu::cpu(), sluice::Gpu::cpu()];
    /// let names = sluice::scope_multi(&gpus, |s| s.each_device(|dev| Ok(dev.index())))?;
    /// assert_eq!(names, [0, 1]);
    /// # Ok(()) }
    /// ```
    pub fn each_device<R>(
        &'scope self,
        mut f: impl for<'dev> FnMut(Device<'scope, 'env, 'dev>) -> Result<R>,
    ) -> Result<Vec<R>> {
        (0..self.scopes.len()).map(|index| f(Device { multi: self, index, _brand: PhantomData })).collect()
    }
}

/// One device of a [`MultiScope`], entered: where its lanes and memory come from, all
/// branded `'dev`. `Copy`; only [`MultiScope::device`] and [`MultiScope::each_device`] make
/// one, for the duration of their closure.
///
/// ```
/// # use sluice_host as sluice;
/// # fn main() -> sluice::Result<()> {
/// let gpus = [sluice::Gpu::cpu(), sluice::Gpu::cpu()];
/// sluice::scope_multi(&gpus, |s| {
///     s.device(1, |dev| {
///         let lanes = dev.lanes(2)?;                 // on device 1
///         let m = dev.alloc_matrix::<f32>(64, 2)?;   // on device 1
///         for (lane, col) in lanes.into_iter().zip(m.columns_mut()) {
///             lane.enter(|st| { let mut v = st.bind(col); st.zero(&mut v) })?;
///         }
///         Ok(())
///     })
/// })
/// # }
/// ```
pub struct Device<'scope, 'env, 'dev> {
    pub(super) multi: &'scope MultiScope<'scope, 'env>,
    pub(super) index: usize,
    /// The device brand: without it, this device's memory would bind on any device's lanes.
    pub(super) _brand: Brand<'dev>,
}

impl Clone for Device<'_, '_, '_> {
    fn clone(&self) -> Self {
        *self
    }
}
impl Copy for Device<'_, '_, '_> {}

impl std::fmt::Debug for Device<'_, '_, '_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Device").field("index", &self.index).field("gpu", self.gpu()).finish()
    }
}

impl<'scope, 'env, 'dev> Device<'scope, 'env, 'dev> {
    fn brand<X>(&self, value: X) -> OnDevice<'dev, X> {
        OnDevice { value, device: self.index, _brand: PhantomData }
    }

    /// The device's index in its scope (the position in the `gpus` given).
    ///
    /// ```
    /// # use sluice_host as sluice;
    /// # let gpus = [sluice::Gpu::cpu(), sluice::Gpu::cpu()];
    /// sluice::scope_multi(&gpus, |s| s.device(1, |d| { assert_eq!(d.index(), 1); Ok(()) }))?;
    /// # Ok::<(), sluice::Error>(())
    /// ```
    pub fn index(&self) -> usize {
        self.index
    }

    /// The device.
    ///
    /// ```
    /// # use sluice_host as sluice;
    /// # let gpus = [sluice::Gpu::cpu()];
    /// sluice::scope_multi(&gpus, |s| s.device(0, |d| { println!("{}", d.gpu().info().name); Ok(()) }))?;
    /// # Ok::<(), sluice::Error>(())
    /// ```
    pub fn gpu(&self) -> &'scope Gpu {
        &self.multi.shared.gpus[self.index]
    }

    /// The device's own [`Scope`], unbranded: everything a single-GPU scope offers
    /// (pinned memory, timestamps, plain lanes). What it hands out carries no device brand,
    /// so its misuse across devices is caught at run time ([`Error::WrongDevice`]).
    ///
    /// ```
    /// # use sluice_host as sluice;
    /// # let gpus = [sluice::Gpu::cpu()];
    /// sluice::scope_multi(&gpus, |s| s.device(0, |d| {
    ///     let host = d.scope().pinned_buffer::<f32>(16)?;
    ///     let t0 = d.scope().timestamp()?;
    ///     # let _ = (host, t0);
    ///     Ok(())
    /// }))?;
    /// # Ok::<(), sluice::Error>(())
    /// ```
    pub fn scope(&self) -> &'scope Scope<'scope, 'env> {
        &self.multi.scopes[self.index]
    }

    /// A new lane on this device, joined when the multi-GPU scope ends.
    ///
    /// ```
    /// # use sluice_host as sluice;
    /// # let gpus = [sluice::Gpu::cpu()];
    /// sluice::scope_multi(&gpus, |s| s.device(0, |d| { assert_eq!(d.lane()?.index(), 0); Ok(()) }))?;
    /// # Ok::<(), sluice::Error>(())
    /// ```
    pub fn lane(&self) -> Result<DeviceLane<'scope, 'dev>> {
        let lane = self.scope().lane()?;
        Ok(DeviceLane { lane, shared: &self.multi.shared, device: self.index, _brand: PhantomData })
    }

    /// `n` new lanes on this device.
    ///
    /// ```
    /// # use sluice_host as sluice;
    /// # let gpus = [sluice::Gpu::cpu()];
    /// sluice::scope_multi(&gpus, |s| s.device(0, |d| { assert_eq!(d.lanes(4)?.len(), 4); Ok(()) }))?;
    /// # Ok::<(), sluice::Error>(())
    /// ```
    pub fn lanes(&self, n: usize) -> Result<Vec<DeviceLane<'scope, 'dev>>> {
        (0..n).map(|_| self.lane()).collect()
    }

    /// A `rows` x `cols` matrix in this device's memory, freed when the multi-GPU scope ends
    /// (after every device's lanes have joined). Holds arbitrary bits until written.
    ///
    /// # Errors
    /// As [`Gpu::alloc_matrix`].
    ///
    /// ```
    /// # use sluice_host as sluice;
    /// # let gpus = [sluice::Gpu::cpu()];
    /// sluice::scope_multi(&gpus, |s| s.device(0, |d| {
    ///     let m = d.alloc_matrix::<f32>(1024, 8)?;
    ///     assert_eq!((m.rows(), m.cols()), (1024, 8));
    ///     Ok(())
    /// }))?;
    /// # Ok::<(), sluice::Error>(())
    /// ```
    pub fn alloc_matrix<T: Pod>(
        &self,
        rows: usize,
        cols: usize,
    ) -> Result<OnDevice<'dev, &'scope mut DeviceMatrix<T>>> {
        Ok(self.brand(self.scope().alloc_matrix(rows, cols)?))
    }

    /// As [`alloc_matrix`](Device::alloc_matrix) with a leading dimension `ld >= rows`.
    ///
    /// ```
    /// # use sluice_host as sluice;
    /// # let gpus = [sluice::Gpu::cpu()];
    /// sluice::scope_multi(&gpus, |s| s.device(0, |d| {
    ///     assert_eq!(d.alloc_matrix_padded::<f32>(1000, 4, 1024)?.ld(), 1024);
    ///     Ok(())
    /// }))?;
    /// # Ok::<(), sluice::Error>(())
    /// ```
    pub fn alloc_matrix_padded<T: Pod>(
        &self,
        rows: usize,
        cols: usize,
        ld: usize,
    ) -> Result<OnDevice<'dev, &'scope mut DeviceMatrix<T>>> {
        Ok(self.brand(self.scope().alloc_matrix_padded(rows, cols, ld)?))
    }

    /// A device buffer of `len` elements (one column) on this device.
    ///
    /// ```
    /// # use sluice_host as sluice;
    /// # let gpus = [sluice::Gpu::cpu()];
    /// sluice::scope_multi(&gpus, |s| s.device(0, |d| { assert_eq!(d.alloc_buffer::<u8>(7)?.len(), 7); Ok(()) }))?;
    /// # Ok::<(), sluice::Error>(())
    /// ```
    pub fn alloc_buffer<T: Pod>(&self, len: usize) -> Result<OnDevice<'dev, &'scope mut DeviceMatrix<T>>> {
        self.alloc_matrix(len, 1)
    }

    /// Uploads `data` once to this device, for any number of this device's lanes to read
    /// (each awaits the returned fence: [`DeviceStream::await_fence`]). `data` is borrowed
    /// for this call only, as by [`Scope::upload`](crate::Scope::upload).
    ///
    /// ```
    /// # use sluice_host as sluice;
    /// # let gpus = [sluice::Gpu::cpu(), sluice::Gpu::cpu()];
    /// let data = [1.0f32; 64];
    /// sluice::scope_multi(&gpus, |s| s.each_device(|d| {
    ///     let shared = d.upload(&data)?;            // one upload per device
    ///     for lane in d.lanes(2)? {
    ///         lane.enter(|st| st.await_fence(&shared).map(drop))?;
    ///     }
    ///     Ok(())
    /// }).map(drop))?;
    /// # Ok::<(), sluice::Error>(())
    /// ```
    pub fn upload<T: Pod>(&self, data: &[T]) -> Result<OnDevice<'dev, Fenced<'scope, ColumnsRef<'scope, T>>>> {
        Ok(self.brand(self.scope().upload(data)?))
    }

    /// Uploads `data` as a `rows` x `cols` column-major matrix to this device.
    ///
    /// ```
    /// # use sluice_host as sluice;
    /// # let gpus = [sluice::Gpu::cpu()];
    /// let data = [0u32; 12];
    /// sluice::scope_multi(&gpus, |s| s.device(0, |d| {
    ///     let t = d.upload_matrix(&data, 4, 3)?;
    ///     assert_eq!((t.rows(), t.cols()), (4, 3));
    ///     Ok(())
    /// }))?;
    /// # Ok::<(), sluice::Error>(())
    /// ```
    pub fn upload_matrix<T: Pod>(
        &self,
        data: &[T],
        rows: usize,
        cols: usize,
    ) -> Result<OnDevice<'dev, Fenced<'scope, ColumnsRef<'scope, T>>>> {
        Ok(self.brand(self.scope().upload_matrix(data, rows, cols)?))
    }

    /// Brands memory that came without a brand — an owned matrix's columns, a collective's
    /// output, a value [`into_unbranded`](OnDevice::into_unbranded) — with this device,
    /// after checking at run time that it is this device's memory.
    ///
    /// # Errors
    /// [`Error::WrongDevice`] (`what: "adopt"`) if the memory belongs to another device.
    ///
    /// ```
    /// # use sluice_host as sluice;
    /// # fn main() -> sluice::Result<()> {
    /// let gpus = [sluice::Gpu::cpu()];
    /// let mut owned = gpus[0].alloc_buffer::<f32>(32)?;   // outside the scope: no brand
    /// sluice::scope_multi(&gpus, |s| s.device(0, |d| {
    ///     let cols = d.adopt(owned.as_columns_mut())?;     // checked: device 0's memory
    ///     d.lane()?.enter(|st| { let mut v = st.bind(cols); st.zero(&mut v) })
    /// }))
    /// # }
    /// ```
    pub fn adopt<X: Adoptable>(&self, value: X) -> Result<OnDevice<'dev, X>> {
        if value.span(Token(())).0.ctx != self.gpu().ctx_id() {
            return Err(Error::WrongDevice { what: "adopt" });
        }
        Ok(self.brand(value))
    }
}

/// A lane of one device of a multi-GPU scope, branded with its device: enter it to enqueue
/// work there. `Copy`; the device's [`Lane`], plus the brand.
///
/// ```
/// # use sluice_host as sluice;
/// # let gpus = [sluice::Gpu::cpu()];
/// sluice::scope_multi(&gpus, |s| s.device(0, |d| {
///     let lane = d.lane()?;
///     let m = d.alloc_buffer::<u32>(64)?;
///     lane.enter(|st| { let mut v = st.bind(m.as_columns_mut()); st.zero(&mut v) })?;
///     assert_eq!(lane.stats().copies, 1);
///     Ok(())
/// }))?;
/// # Ok::<(), sluice::Error>(())
/// ```
pub struct DeviceLane<'scope, 'dev> {
    pub(super) lane: Lane<'scope>,
    pub(super) shared: &'scope MultiShared,
    pub(super) device: usize,
    /// The device brand: without it, views of this device's memory would bind here from any
    /// device.
    pub(super) _brand: Brand<'dev>,
}

impl Clone for DeviceLane<'_, '_> {
    fn clone(&self) -> Self {
        *self
    }
}
impl Copy for DeviceLane<'_, '_> {}

impl std::fmt::Debug for DeviceLane<'_, '_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeviceLane").field("device", &self.device).field("id", &self.lane.id()).finish()
    }
}

impl<'scope, 'dev> DeviceLane<'scope, 'dev> {
    /// Enters the lane: runs `f` with the lane's [`DeviceStream`], branded with a fresh lane
    /// brand `'lane` as [`Lane::enter`] does, and with the device brand `'dev`.
    ///
    /// ```
    /// # use sluice_host as sluice;
    /// # let gpus = [sluice::Gpu::cpu()];
    /// sluice::scope_multi(&gpus, |s| s.device(0, |d| {
    ///     let m = d.alloc_buffer::<f32>(8)?;
    ///     let handed = d.lane()?.enter(|st| {
    ///         let mut v = st.bind(m.as_columns_mut());
    ///         st.zero(&mut v)?;
    ///         st.fence(v)                       // a hand-off branded with this device
    ///     })?;
    ///     d.lane()?.enter(|st| st.await_fence(handed).map(drop))
    /// }))?;
    /// # Ok::<(), sluice::Error>(())
    /// ```
    ///
    /// # Lifetimes
    ///
    /// As [`Lane::enter`], and the device brand: a hand-off of another device's memory does
    /// not await here.
    ///
    /// ```compile_fail
    /// # use sluice_host as sluice;
    /// # fn main() -> sluice::Result<()> {
    /// # let gpus = [sluice::Gpu::cpu(), sluice::Gpu::cpu()];
    /// sluice::scope_multi(&gpus, |s| s.device(0, |d0| {
    ///     let m = d0.alloc_buffer::<f32>(8)?;
    ///     let handed = d0.lane()?.enter(|st| { let v = st.bind(m.as_columns_mut()); st.fence(v) })?;
    ///     s.device(1, |d1| d1.lane()?.enter(|st| st.await_fence(handed).map(drop))) // error: device 0's hand-off
    /// }))
    /// # }
    /// ```
    pub fn enter<R>(&self, f: impl for<'lane> FnOnce(&DeviceStream<'scope, 'lane, 'dev>) -> R) -> R {
        f(&DeviceStream {
            stream: Stream::new(self.lane),
            shared: self.shared,
            device: self.device,
            _brand: PhantomData,
        })
    }

    /// The lane without its device brand: a plain [`Lane`] of the device's scope.
    ///
    /// ```
    /// # use sluice_host as sluice;
    /// # let gpus = [sluice::Gpu::cpu()];
    /// sluice::scope_multi(&gpus, |s| s.device(0, |d| { assert_eq!(d.lane()?.lane().index(), 0); Ok(()) }))?;
    /// # Ok::<(), sluice::Error>(())
    /// ```
    pub fn lane(&self) -> Lane<'scope> {
        self.lane
    }

    /// The index of the lane's device in its scope.
    ///
    /// ```
    /// # use sluice_host as sluice;
    /// # let gpus = [sluice::Gpu::cpu(), sluice::Gpu::cpu()];
    /// sluice::scope_multi(&gpus, |s| s.device(1, |d| { assert_eq!(d.lane()?.device(), 1); Ok(()) }))?;
    /// # Ok::<(), sluice::Error>(())
    /// ```
    pub fn device(&self) -> usize {
        self.device
    }

    /// The lane's index among its device's lanes (creation order, from 0).
    ///
    /// ```
    /// # use sluice_host as sluice;
    /// # let gpus = [sluice::Gpu::cpu()];
    /// sluice::scope_multi(&gpus, |s| s.device(0, |d| { assert_eq!(d.lanes(2)?[1].index(), 1); Ok(()) }))?;
    /// # Ok::<(), sluice::Error>(())
    /// ```
    pub fn index(&self) -> usize {
        self.lane.index()
    }

    /// What sluice has enqueued on this lane so far.
    ///
    /// ```
    /// # use sluice_host as sluice;
    /// # let gpus = [sluice::Gpu::cpu()];
    /// sluice::scope_multi(&gpus, |s| s.device(0, |d| { assert_eq!(d.lane()?.stats().launches, 0); Ok(()) }))?;
    /// # Ok::<(), sluice::Error>(())
    /// ```
    pub fn stats(&self) -> LaneStats {
        self.lane.stats()
    }
}

/// An entered [`DeviceLane`]: the device's [`Stream`] (every method of it works here: it
/// derefs to it), branded with the lane `'lane` and the device `'dev`. Its own methods take and
/// give branded values: [`bind`](DeviceStream::bind) takes only this device's columns,
/// [`await_fence`](DeviceStream::await_fence) only this device's hand-offs (or any device's
/// plain [`Fence`](crate::Fence)), [`fence`](DeviceStream::fence) brands its hand-off with this device, and
/// [`copy_to_peer`](DeviceStream::copy_to_peer) moves data to another device.
///
/// ```
/// # use sluice_host as sluice;
/// # let gpus = [sluice::Gpu::cpu()];
/// let x = [1.0f32; 256];
/// sluice::scope_multi(&gpus, |s| s.device(0, |d| {
///     let xs = d.upload(&x)?;
///     let y = d.alloc_buffer::<f32>(256)?;
///     d.lane()?.enter(|st| {
///         let x = st.await_fence(&xs)?;            // this device's upload
///         let mut y = st.bind(y.as_columns_mut()); // this device's memory
///         st.zero(&mut y)?;                        // a `Stream` method, through deref
///         # let _ = x;
///         Ok(())
///     })
/// }))?;
/// # Ok::<(), sluice::Error>(())
/// ```
pub struct DeviceStream<'scope, 'lane, 'dev> {
    pub(super) stream: Stream<'scope, 'lane>,
    pub(super) shared: &'scope MultiShared,
    pub(super) device: usize,
    /// The device brand: what this stream binds and awaits must carry the same.
    pub(super) _brand: Brand<'dev>,
}

impl<'scope, 'lane> Deref for DeviceStream<'scope, 'lane, '_> {
    type Target = Stream<'scope, 'lane>;
    fn deref(&self) -> &Stream<'scope, 'lane> {
        &self.stream
    }
}

impl std::fmt::Debug for DeviceStream<'_, '_, '_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeviceStream").field("device", &self.device).field("lane", &self.stream.lane().id()).finish()
    }
}

impl<'scope, 'lane, 'dev> DeviceStream<'scope, 'lane, 'dev> {
    /// The index of this lane's device in its scope.
    ///
    /// ```
    /// # use sluice_host as sluice;
    /// # let gpus = [sluice::Gpu::cpu(), sluice::Gpu::cpu()];
    /// sluice::scope_multi(&gpus, |s| s.device(1, |d| d.lane()?.enter(|st| { assert_eq!(st.device(), 1); Ok(()) })))?;
    /// # Ok::<(), sluice::Error>(())
    /// ```
    pub fn device(&self) -> usize {
        self.device
    }

    /// Binds this device's columns to this lane ([`Stream::bind`], with the device brand
    /// checked at compile time).
    ///
    /// ```
    /// # use sluice_host as sluice;
    /// # let gpus = [sluice::Gpu::cpu()];
    /// sluice::scope_multi(&gpus, |s| s.device(0, |d| {
    ///     let m = d.alloc_matrix::<f32>(16, 2)?;
    ///     let (a, b) = m.split_columns_mut(1).unwrap();
    ///     let (la, lb) = (d.lane()?, d.lane()?);
    ///     la.enter(|st| { let mut v = st.bind(a); st.zero(&mut v) })?;
    ///     lb.enter(|st| { let mut v = st.bind(b); st.zero(&mut v) })
    /// }))?;
    /// # Ok::<(), sluice::Error>(())
    /// ```
    pub fn bind<T: Pod>(&self, cols: OnDevice<'dev, ColumnsMut<'scope, T>>) -> ColumnViewMut<'scope, 'lane, T> {
        self.stream.bind(cols.value)
    }

    /// Binds this device's read-only columns to this lane.
    ///
    /// ```
    /// # use sluice_host as sluice;
    /// # let gpus = [sluice::Gpu::cpu()];
    /// sluice::scope_multi(&gpus, |s| s.device(0, |d| {
    ///     let m = d.alloc_matrix::<f32>(16, 2)?.into_ref();
    ///     for lane in d.lanes(2)? {
    ///         lane.enter(|st| assert_eq!(st.bind_ref(m.as_columns()).len(), 32));
    ///     }
    ///     Ok(())
    /// }))?;
    /// # Ok::<(), sluice::Error>(())
    /// ```
    pub fn bind_ref<T: Pod>(&self, cols: OnDevice<'dev, ColumnsRef<'scope, T>>) -> ColumnView<'scope, 'lane, T> {
        self.stream.bind_ref(cols.value)
    }

    /// Records a fence after everything enqueued on this lane so far and returns the view's
    /// columns behind it, branded with this device: a hand-off that only this device's lanes
    /// (or the host) can await.
    ///
    /// ```
    /// # use sluice_host as sluice;
    /// # let gpus = [sluice::Gpu::cpu()];
    /// sluice::scope_multi(&gpus, |s| s.device(0, |d| {
    ///     let m = d.alloc_buffer::<u8>(8)?;
    ///     let handed = d.lane()?.enter(|st| { let mut v = st.bind(m.as_columns_mut()); st.zero(&mut v)?; st.fence(v) })?;
    ///     let cols = handed.wait()?;               // or await it on another lane of device 0
    ///     # let _ = cols;
    ///     Ok(())
    /// }))?;
    /// # Ok::<(), sluice::Error>(())
    /// ```
    pub fn fence<V: Fenceable<'scope, 'lane>>(&self, view: V) -> Result<OnDevice<'dev, Fenced<'scope, V::Unbranded>>> {
        let fenced = self.stream.fence(view)?;
        Ok(OnDevice { value: fenced, device: self.device, _brand: PhantomData })
    }

    /// Awaits a hand-off or upload of this device ([`OnDevice`] of a [`Fenced`]), or a plain
    /// [`Fence`](crate::Fence) of any device (ordering only: `cuStreamWaitEvent` works across devices), and
    /// returns what it guards bound to this lane.
    ///
    /// ```
    /// # use sluice_host as sluice;
    /// # let gpus = [sluice::Gpu::cpu(), sluice::Gpu::cpu()];
    /// sluice::scope_multi(&gpus, |s| {
    ///     let done = s.device(0, |d0| d0.lane()?.enter(|st| st.record()))?; // a fence on device 0
    ///     s.device(1, |d1| d1.lane()?.enter(|st| st.await_fence(&done)))   // device 1 waits for it
    /// })?;
    /// # Ok::<(), sluice::Error>(())
    /// ```
    pub fn await_fence<A: DeviceAwaitable<'scope, 'dev>>(&self, a: A) -> Result<A::Output<'lane>> {
        a.await_on(&self.stream, Token(()))
    }

    /// Fan-in of this device's hand-offs: awaits every one and joins them into one view
    /// ([`Stream::await_all`]).
    ///
    /// ```
    /// # use sluice_host as sluice;
    /// # let gpus = [sluice::Gpu::cpu()];
    /// sluice::scope_multi(&gpus, |s| s.device(0, |d| {
    ///     let m = d.alloc_matrix::<f32>(8, 4)?;
    ///     let mut handed = Vec::new();
    ///     for (lane, col) in d.lanes(4)?.into_iter().zip(m.columns_mut()) {
    ///         handed.push(lane.enter(|st| { let mut v = st.bind(col); st.zero(&mut v)?; st.fence(v) })?);
    ///     }
    ///     d.lane()?.enter(|st| { assert_eq!(st.await_all(handed)?.cols(), 4); Ok(()) })
    /// }))?;
    /// # Ok::<(), sluice::Error>(())
    /// ```
    pub fn await_all<T>(
        &self,
        handed: impl IntoIterator<Item = OnDevice<'dev, Fenced<'scope, ColumnsMut<'scope, T>>>>,
    ) -> Result<ColumnViewMut<'scope, 'lane, T>> {
        self.stream.await_all(handed.into_iter().map(|h| h.value))
    }
}
