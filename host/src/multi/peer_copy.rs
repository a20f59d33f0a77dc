//! Peer copies: [`DeviceStream::copy_to_peer`] moves a view's data into another
//! device's columns on this lane, and hands the destination back branded with its device
//! ([`PeerDestination`]).

use std::marker::PhantomData;
use std::sync::atomic::Ordering;

use bytemuck::Pod;

use super::branded::OnDevice;
use super::device::DeviceStream;
use super::sealed::{self, RawSpan, Token};
use crate::error::{Error, Result};
use crate::fence::Fenced;
use crate::matrix::ColumnsMut;
use crate::span::Span;
use crate::trace::SpanKind;
use crate::view::{ColumnViewMut, CopySource};

impl<'scope, 'lane, 'dev> DeviceStream<'scope, 'lane, 'dev> {
    /// Copies `src` (a view on this lane) into `dst`, columns of another device — or of this
    /// one — on this lane, and returns `dst` behind a fence recorded after the copy: a
    /// hand-off awaited on the destination device like any other, ordered exactly as a
    /// same-device hand-off (the destination's lane waits for this lane's event).
    ///
    /// `dst` branded ([`OnDevice`]) gives a hand-off branded with its device; unbranded
    /// [`ColumnsMut`] gives an unbranded one (its device is found at run time among the
    /// scope's: the first whose memory it is — two [`Gpu`](crate::Gpu) values of one device, or the CPU
    /// backend's, share their memory). The copy takes the [`PeerPath`](crate::PeerPath) between the two devices: peer access is
    /// enabled the first time a pair needs it, where the hardware allows it (NVLink, PCIe
    /// peer-to-peer); otherwise the driver stages the copy through host memory. The trace
    /// names the path; [`MultiScope::peer_links`](crate::MultiScope::peer_links) counts copies and bytes per pair.
    ///
    /// `src` and `dst` have the same shape (padded columns are copied column by column), or
    /// are both contiguous with the same length.
    ///
    /// # Errors
    /// [`Error::LengthMismatch`], [`Error::ZeroSized`]; [`Error::WrongDevice`] if `src` is not
    /// this lane's device's memory or `dst` is no device's of this scope; [`Error::Copy`].
    /// Nothing is enqueued on a check's error.
    ///
    /// ```
    /// # use sluice_host as sluice;
    /// # fn main() -> sluice::Result<()> {
    /// let gpus = [sluice::Gpu::cpu(), sluice::Gpu::cpu()];
    /// let mut host = gpus[1].pinned_buffer::<u32>(64)?;
    /// let ones = vec![1u32; 64];
    /// sluice::scope_multi(&gpus, |s| s.device(0, |d0| {
    ///     let src = d0.alloc_buffer::<u32>(64)?;
    ///     s.device(1, |d1| {
    ///         let dst = d1.alloc_buffer::<u32>(64)?;
    ///         let handed = d0.lane()?.enter(|st| {
    ///             let mut v = st.bind(src.as_columns_mut());
    ///             st.copy_to_device(&ones, &mut v)?;
    ///             st.copy_to_peer(&v, dst.as_columns_mut())   // device 0 -> device 1
    ///         })?;
    ///         d1.lane()?.enter(|st| {
    ///             let v = st.await_fence(handed)?;             // a hand-off of device 1
    ///             st.copy_to_host(&v, host.as_pinned_mut())
    ///         })?;
    ///         Ok(())
    ///     })
    /// }))?;
    /// assert!(host.iter().all(|x| *x == 1));
    /// # Ok(()) }
    /// ```
    pub fn copy_to_peer<'v, T: Pod, D: PeerDestination<'scope, T>>(
        &self,
        src: impl CopySource<'v, 'lane, T>,
        dst: D,
    ) -> Result<D::Handed> {
        let s = src.view().span();
        let d = dst.span(Token(())).0;
        if s.len() == 0 || d.len() == 0 {
            return Err(Error::ZeroSized);
        }
        let flat = |x: &Span| x.cols <= 1 || x.ld == x.rows;
        let same_shape = s.rows == d.rows && s.cols == d.cols;
        if s.len() != d.len() || !(same_shape || (flat(&s) && flat(&d))) {
            return Err(Error::LengthMismatch { expected: s.len(), got: d.len() });
        }
        let here = self.stream.gpu();
        if s.ctx != here.ctx_id() {
            return Err(Error::WrongDevice { what: "copy_to_peer (source)" });
        }
        let to = match dst.device(Token(())) {
            Some(i) => i,
            None => self.shared.device_of(&d).ok_or(Error::WrongDevice { what: "copy_to_peer (destination)" })?,
        };
        let there = &self.shared.gpus[to];
        if there.ctx_id() != d.ctx {
            return Err(Error::WrongDevice { what: "copy_to_peer (destination)" });
        }
        let path = here.peer_path(there)?;
        let es = s.elem_size;
        let (width, height, src_pitch, dst_pitch) = if same_shape && !(flat(&s) && flat(&d)) {
            (s.rows * es, s.cols, s.ld * es, d.ld * es)
        } else {
            (s.len() * es, 1, 0, 0)
        };
        let from = self.device;
        self.stream.traced(
            SpanKind::PeerCopy,
            || format!("{} x {} device {from} to {to} ({path})", s.rows, s.cols),
            || {
                // SAFETY: source: the view is bound to this lane (brand 'lane) and borrows its
                // memory (this device's: checked above) for at least the scope, which joins
                // every device's lanes before any memory is freed. Destination: `dst` is
                // columns of device `to` (checked above) held exclusively for 'scope, with no
                // pending work (its type's contract), moved into the hand-off returned below:
                // nothing else touches it until the hand-off is awaited after this copy. The
                // two are different memory: one is borrowed shared, the other exclusively.
                unsafe {
                    self.stream.handle().copy_device(
                        there.context(),
                        d.ptr,
                        dst_pitch,
                        here.context(),
                        s.ptr,
                        src_pitch,
                        width,
                        height,
                    )
                }
                .map_err(|error| Error::Copy { direction: "device to device", error })
            },
        )?;
        self.stream.lane().inner.copies.fetch_add(1, Ordering::Relaxed);
        self.shared.note_copy(from, to, path, (s.len() * es) as u64);
        let fenced = self.stream.fence(ColumnViewMut::<T>::new(d))?;
        Ok(D::wrap(fenced, to, Token(())))
    }
}

/// Where a peer copy ([`DeviceStream::copy_to_peer`]) may write: branded columns of a
/// device (the hand-off comes back with the same brand) or unbranded [`ColumnsMut`] (the
/// hand-off comes back unbranded; the device is found at run time).
///
/// ```
/// # use sluice_host as sluice;
/// # let gpus = [sluice::Gpu::cpu(), sluice::Gpu::cpu()];
/// sluice::scope_multi(&gpus, |s| s.device(0, |d0| s.device(1, |d1| {
///     let (a, b) = (d0.alloc_buffer::<u8>(4)?, d1.alloc_buffer::<u8>(4)?);
///     let handed = d0.lane()?.enter(|st| {
///         let mut v = st.bind(a.as_columns_mut());
///         st.zero(&mut v)?;
///         st.copy_to_peer(&v, b.as_columns_mut())     // OnDevice<'d1, ColumnsMut>
///     })?;                                            // OnDevice<'d1, Fenced<ColumnsMut>>
///     assert_eq!(handed.device(), 1);
///     Ok(())
/// })))?;
/// # Ok::<(), sluice::Error>(())
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a destination for `copy_to_peer`",
    label = "not columns of a device",
    note = "the destination is columns of the peer device's memory: `OnDevice<ColumnsMut>` (from the peer's `alloc_*` or `adopt`), or plain `ColumnsMut` (its device checked at run time)"
)]
pub trait PeerDestination<'scope, T>: sealed::Sealed {
    /// The hand-off the copy returns.
    type Handed;
    #[doc(hidden)]
    fn span(&self, token: Token) -> RawSpan;
    #[doc(hidden)]
    fn device(&self, token: Token) -> Option<usize>;
    #[doc(hidden)]
    fn wrap(fenced: Fenced<'scope, ColumnsMut<'scope, T>>, device: usize, token: Token) -> Self::Handed;
}

impl<T> sealed::Sealed for OnDevice<'_, ColumnsMut<'_, T>> {}
impl<'scope, 'peer, T> PeerDestination<'scope, T> for OnDevice<'peer, ColumnsMut<'scope, T>> {
    type Handed = OnDevice<'peer, Fenced<'scope, ColumnsMut<'scope, T>>>;
    fn span(&self, _: Token) -> RawSpan {
        RawSpan(self.value.span())
    }
    fn device(&self, _: Token) -> Option<usize> {
        Some(self.device)
    }
    fn wrap(value: Fenced<'scope, ColumnsMut<'scope, T>>, device: usize, _: Token) -> Self::Handed {
        OnDevice { value, device, _brand: PhantomData }
    }
}

impl<'scope, T> PeerDestination<'scope, T> for ColumnsMut<'scope, T> {
    type Handed = Fenced<'scope, ColumnsMut<'scope, T>>;
    fn span(&self, _: Token) -> RawSpan {
        RawSpan(ColumnsMut::span(self))
    }
    fn device(&self, _: Token) -> Option<usize> {
        None
    }
    fn wrap(fenced: Fenced<'scope, ColumnsMut<'scope, T>>, _: usize, _: Token) -> Self::Handed {
        fenced
    }
}
