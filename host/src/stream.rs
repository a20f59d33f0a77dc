//! [`Stream`]: a lane while it is entered — where work is enqueued and views are bound.

use std::sync::atomic::Ordering;

use bytemuck::Pod;

use crate::driver;
use crate::error::{Error, Result};
use crate::launch::{launch_raw, LaunchArgs, LaunchConfig, Launchable};
use crate::memory::{ColumnsMut, ColumnsRef};
use crate::scope::{Lane, LaneStats};
use crate::view::{Brand, ColumnView, ColumnViewMut};

/// An entered lane: the CUDA stream work is enqueued on, branded `'id`.
///
/// Only [`Lane::enter`] makes one, and only for the duration of its closure. Views bound
/// here carry the same `'id`, so they work with this `Stream` and no other.
///
/// ```no_run
/// # use sluice_host::{Kernel, LaunchConfig, Mut, Ref};
/// # const SAXPY: Kernel<(Mut<f32>, Ref<f32>, f32)> = unsafe { Kernel::new("", "saxpy") };
/// # fn demo(gpu: &sluice_host::Gpu, x: &[f32]) -> sluice_host::Result<()> {
/// sluice_host::scope(gpu, |s| {
///     let xs = s.upload(x)?;
///     let y = s.alloc_buffer::<f32>(x.len())?;
///     s.lane()?.enter(|st| {
///         let x = st.await_fence(&xs)?;
///         let mut y = st.bind(y.as_columns_mut());
///         st.zero(&mut y)?;
///         st.launch(&SAXPY, LaunchConfig::for_elements(x.len(), 256), (&mut y, &x, 2.0))
///     })
/// })
/// # }
/// ```
pub struct Stream<'scope, 'id> {
    pub(crate) lane: Lane<'scope>,
    /// This entry's brand; without it, views of one lane would fit another's launches.
    _brand: Brand<'id>,
}

impl<'scope, 'id> Stream<'scope, 'id> {
    pub(crate) fn new(lane: Lane<'scope>) -> Self {
        Stream { lane, _brand: std::marker::PhantomData }
    }

    /// The lane this stream belongs to.
    ///
    /// ```no_run
    /// # fn demo(gpu: &sluice_host::Gpu) -> sluice_host::Result<()> {
    /// sluice_host::scope(gpu, |s| {
    ///     let lane = s.lane()?;
    ///     lane.enter(|st| assert_eq!(st.lane().index(), lane.index()));
    ///     Ok(())
    /// })
    /// # }
    /// ```
    pub fn lane(&self) -> Lane<'scope> {
        self.lane
    }

    /// What sluice has enqueued on this lane so far.
    ///
    /// ```no_run
    /// # fn demo(gpu: &sluice_host::Gpu) -> sluice_host::Result<()> {
    /// sluice_host::scope(gpu, |s| {
    ///     s.lane()?.enter(|st| assert_eq!(st.stats().launches, 0));
    ///     Ok(())
    /// })
    /// # }
    /// ```
    pub fn stats(&self) -> LaneStats {
        self.lane.inner.stats()
    }

    /// Binds columns to this lane: the device's `&mut [T]` becomes a view that this lane's
    /// launches and copies accept.
    ///
    /// The columns carry no pending work (they come straight from a matrix, or from a fence
    /// the host awaited), so no wait is needed. They must be borrowed for the whole scope,
    /// because work enqueued with the view may run until the scope joins.
    ///
    /// ```no_run
    /// # fn demo(gpu: &sluice_host::Gpu) -> sluice_host::Result<()> {
    /// sluice_host::scope(gpu, |s| {
    ///     let m = s.alloc_matrix::<f32>(64, 4)?;
    ///     let (a, b) = m.split_columns_mut(2).unwrap();
    ///     let (la, lb) = (s.lane()?, s.lane()?);
    ///     la.enter(|st| { let mut v = st.bind(a); st.zero(&mut v) })?;
    ///     lb.enter(|st| { let mut v = st.bind(b); st.zero(&mut v) })?;   // disjoint: concurrent
    ///     Ok(())
    /// })
    /// # }
    /// ```
    ///
    /// # Lifetimes
    ///
    /// The columns must live for `'scope`; a matrix owned inside the closure does not:
    ///
    /// ```compile_fail,E0597
    /// # fn demo(gpu: &sluice_host::Gpu) -> sluice_host::Result<()> {
    /// sluice_host::scope(gpu, |s| {
    ///     let mut m = gpu.alloc_matrix::<f32>(64, 1)?; // owned by the closure
    ///     s.lane()?.enter(|st| {
    ///         let mut v = st.bind(m.as_columns_mut()); // error[E0597]: `m` does not live long enough
    ///         st.zero(&mut v)
    ///     })
    /// })
    /// # }
    /// ```
    ///
    /// Allocate from the scope (`s.alloc_matrix`) or outside it.
    ///
    /// A column can be bound only once — binding takes it by value:
    ///
    /// ```compile_fail,E0382
    /// # fn demo(gpu: &sluice_host::Gpu) -> sluice_host::Result<()> {
    /// sluice_host::scope(gpu, |s| {
    ///     let m = s.alloc_matrix::<f32>(64, 1)?;
    ///     let col = m.column_mut(0).unwrap();
    ///     let (a, b) = (s.lane()?, s.lane()?);
    ///     a.enter(|st| { let mut v = st.bind(col); st.zero(&mut v) })?;
    ///     b.enter(|st| { let mut v = st.bind(col); st.zero(&mut v) })?; // error[E0382]: use of moved value: `col`
    ///     Ok(())
    /// })
    /// # }
    /// ```
    ///
    /// To use it on `b` after `a`, fence it on `a` and await the fence on `b`.
    pub fn bind<T: Pod>(&self, cols: ColumnsMut<'scope, T>) -> ColumnViewMut<'scope, 'id, T> {
        ColumnViewMut::new(cols.span())
    }

    /// Binds read-only columns to this lane (columns borrowed shared for the scope, with
    /// no pending work).
    ///
    /// ```no_run
    /// # fn demo(gpu: &sluice_host::Gpu, m: &sluice_host::DeviceMatrix<f32>) -> sluice_host::Result<()> {
    /// sluice_host::scope(gpu, |s| {
    ///     for lane in s.lanes(2)? {
    ///         lane.enter(|st| assert_eq!(st.bind_ref(m.as_columns()).len(), m.len()));
    ///     }
    ///     Ok(())
    /// })
    /// # }
    /// ```
    pub fn bind_ref<T: Pod>(&self, cols: ColumnsRef<'scope, T>) -> ColumnView<'scope, 'id, T> {
        ColumnView::new(cols.span())
    }

    /// Launches `kernel` on this lane with `args`, one per parameter: `&mut view` for a
    /// [`Mut<T>`](crate::Mut), `&view`/`view` for a [`Ref<T>`](crate::Ref), the value for a
    /// scalar. Every view must be bound to this lane (compile-time).
    ///
    /// # Errors
    /// [`Error::LaunchConfig`]/[`Error::EmptyLaunch`] when `cfg` exceeds the device's or the
    /// kernel's limits (checked before calling the driver); module and lookup errors on
    /// first use of the kernel on this device; [`Error::Launch`].
    ///
    /// ```no_run
    /// # use sluice_host::{Kernel, LaunchConfig, Mut};
    /// # const FILL: Kernel<(Mut<f32>, f32)> = unsafe { Kernel::new("", "fill_column") };
    /// # fn demo(gpu: &sluice_host::Gpu) -> sluice_host::Result<()> {
    /// sluice_host::scope(gpu, |s| {
    ///     let m = s.alloc_buffer::<f32>(1000)?;
    ///     s.lane()?.enter(|st| {
    ///         let mut v = st.bind(m.as_columns_mut());
    ///         st.launch(&FILL, LaunchConfig::for_elements(v.len(), 128), (&mut v, 3.0))
    ///     })
    /// })
    /// # }
    /// ```
    pub fn launch<K, A>(&self, kernel: &K, cfg: LaunchConfig, args: A) -> Result<()>
    where
        K: Launchable,
        A: LaunchArgs<'id, K::Sig>,
    {
        let gpu = &self.lane.shared.gpu;
        let f = kernel.resolve(gpu)?;
        // SAFETY: `A: LaunchArgs<'id, K::Sig>` lowers to the kernel's parameters (the
        // `Kernel::new` contract, checked against the PTX on load); every view in `args`
        // carries this lane's brand 'id, so it is bound to this stream, and borrows its
        // memory for 'scope — which ends after the scope joins this stream.
        unsafe { launch_raw(gpu, self.lane.inner.stream, &f, cfg, &args) }?;
        self.lane.inner.launches.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }

    /// Sets every element of `dst` to zero bits, on this lane (`cuMemsetD2D8Async`).
    ///
    /// ```no_run
    /// # fn demo(gpu: &sluice_host::Gpu) -> sluice_host::Result<()> {
    /// sluice_host::scope(gpu, |s| {
    ///     let m = s.alloc_matrix_padded::<f32>(100, 3, 128)?;
    ///     s.lane()?.enter(|st| {
    ///         let mut v = st.bind(m.as_columns_mut());
    ///         st.zero(&mut v)                  // 3 columns of 100, padding untouched
    ///     })
    /// })
    /// # }
    /// ```
    pub fn zero<T: Pod>(&self, dst: &mut ColumnViewMut<'_, 'id, T>) -> Result<()> {
        let s = dst.span();
        if s.len() == 0 {
            return Err(Error::ZeroSized);
        }
        if s.ctx != self.lane.shared.gpu.ctx().0 as usize {
            return Err(Error::WrongDevice { what: "zero" });
        }
        // SAFETY: the span is device memory bound to this stream (brand 'id) and borrowed
        // exclusively for at least as long as the stream may run (the scope joins it).
        unsafe {
            driver::mem::zero_2d(
                self.lane.shared.gpu.ctx(),
                self.lane.inner.stream,
                s.ptr,
                s.ld * s.elem_size,
                s.rows * s.elem_size,
                s.cols,
            )
        }
        .map_err(|error| Error::Copy { direction: "zero", error })?;
        self.lane.inner.copies.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }
}

impl std::fmt::Debug for Stream<'_, '_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Stream").field("lane", &self.lane.inner.index).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_are_send_and_sync() {
        fn assert<T: Send + Sync>() {}
        assert::<Stream<'static, 'static>>();
    }
}
