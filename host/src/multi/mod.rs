//! Several GPUs in one scope: lanes on every device of a set of [`Gpu`]s, peer copies and
//! cross-device fences under the same rules as one device's, and collectives (NCCL's
//! all-reduce, all-gather, broadcast, reduce-scatter) ordered by fences like any other work.
//!
//! [`scope_multi`] runs one [`Scope`] per device and ends them together: it joins every lane
//! of every device first, then frees every device's memory — a peer copy or a collective on
//! one device's lane may use another device's memory, so no device frees before all have
//! joined. Inside, [`MultiScope::device`] enters a device: a `for<'dev>` closure, as
//! [`Lane::enter`] is a `for<'lane>` one, so each entry mints a brand `'dev` that the
//! device's lanes ([`DeviceLane`]), its memory ([`OnDevice`]) and its hand-offs carry.
//!
//! # What is checked when
//!
//! | misuse | caught |
//! | --- | --- |
//! | a view used on another lane (of any device) | compile time: the lane brand `'lane` |
//! | a column of device A bound on a lane of device B (both branded) | compile time: the device brand `'dev` |
//! | a hand-off of device A's memory awaited on a lane of device B (branded) | compile time: `'dev` |
//! | a device lane, its memory or hand-off leaving its device's closure | compile time: `'dev` |
//! | unbranded memory (an owned [`DeviceMatrix`](crate::DeviceMatrix), a collective's output, [`OnDevice::into_unbranded`]) on the wrong device | run time: [`Error::WrongDevice`] ([`Device::adopt`], launches, copies, ranks, peer copies), nothing enqueued |
//! | ranks that do not fit a collective (count, lengths, devices, padded columns) | run time: [`Error::Collective`], nothing enqueued |
//!
//! Moving data between devices is a peer copy ([`DeviceStream::copy_to_peer`]): its
//! destination comes back as a hand-off branded with the destination device, awaited there
//! like any hand-off (`cuStreamWaitEvent` on the source lane's event: CUDA orders streams
//! across devices with events). Ordering alone across devices is a plain [`Fence`], which a
//! lane of any device may await.
//!
//! ```
//! # use sluice_host as sluice;
//! use sluice::{scope_multi, Communicator, Gpu, ReduceOp};
//! # fn main() -> sluice::Result<()> {
//! let gpus = [Gpu::cpu(), Gpu::cpu()];            // or [Gpu::cuda(0)?, Gpu::cuda(1)?]
//! let comm = Communicator::new(&gpus)?;           // NCCL on GPUs; host loops on the CPU backend
//! let data = [vec![1u32; 4], vec![2u32; 4]];      // one input per device
//! let mut host = gpus[0].pinned_matrix::<u32>(4, 1)?;
//! scope_multi(&gpus, |s| {
//!     let ranks = s.each_device(|dev| {
//!         let buf = dev.alloc_buffer::<u32>(4)?;   // this device's memory, branded 'dev
//!         dev.lane()?.enter(|st| {
//!             let mut v = st.bind(buf.as_columns_mut());
//!             st.copy_to_device(&data[dev.index()], &mut v)?;
//!             st.rank_in_place(v)                  // this lane's part of a collective
//!         })
//!     })?;
//!     let mut sums = s.all_reduce(&comm, ReduceOp::Sum, ranks)?; // one hand-off per device
//!     s.device(0, |dev| {
//!         let sum = dev.adopt(sums.remove(0))?;    // checked: device 0's memory
//!         dev.lane()?.enter(|st| {
//!             let v = st.await_fence(sum)?;
//!             st.copy_to_host(&v, host.as_pinned_mut())
//!         })?;
//!         Ok(())
//!     })
//! })?;
//! assert_eq!(&host[..], &[3, 3, 3, 3]);
//! # Ok(()) }
//! ```

mod branded;
mod collective;
mod comm;
mod device;
mod peer;
mod peer_copy;
mod scope;
mod sealed;
#[cfg(test)]
mod tests;

pub use branded::{Adoptable, DeviceAwaitable, OnDevice, OnDeviceIter};
pub use comm::{Communicator, Rank, ReduceOp, Reducible};
pub use device::{Device, DeviceLane, DeviceStream};
pub use peer::{PeerLink, PeerPath};
pub use peer_copy::PeerDestination;
pub use scope::{scope_multi, traced_scope_multi, MultiScope};
