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
//! use sluice_host::{scope_multi, Communicator, Gpu, ReduceOp};
//! # fn main() -> sluice_host::Result<()> {
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

use std::marker::PhantomData;
use std::ops::Deref;
use std::ops::{Add, Mul};
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

use bytemuck::Pod;

use crate::device::{Backend, Gpu};
use crate::error::{Error, Result};
use crate::fence::{Fence, Fenceable, Fenced};
use crate::handle::PeerAccess;
use crate::lane::{Lane, LaneStats, Stream};
use crate::matrix::{ColumnChunks, ColumnChunksMut, ColumnsMut, ColumnsRef, DeviceMatrix};
use crate::nccl::{self, RawComm};
use crate::scope::Scope;
use crate::span::Span;
use crate::trace::{SpanKind, Trace};
use crate::view::{Brand, ColumnView, ColumnViewMut, Invariant};

mod sealed {
    /// Only sluice can call the hidden trait methods below: they await, wrap or unwrap
    /// values without the brand checks the public methods make.
    pub struct Token(pub(super) ());
    pub trait Sealed {}
    /// A span, handed through the sealed traits' methods (opaque outside sluice).
    pub struct RawSpan(pub(super) crate::span::Span);
}
use sealed::{RawSpan, Token};

// ---------------------------------------------------------------------------------------
// The scope

/// Runs `f` with a [`MultiScope`] over `gpus` — lanes, memory and work on every device of
/// the set — then joins every lane of every device, and only then frees every device's
/// memory: [`scope`](crate::scope) for several GPUs. The single-GPU [`scope`](crate::scope)
/// is unchanged; this is its sibling.
///
/// `gpus` may name one device several times (two [`Gpu`] values of device 0 exercise every
/// code path on one GPU: their memory is one device's, so a "peer" copy between them is a
/// device copy). All must be of one backend.
///
/// # Errors
/// [`Error::Devices`] for an empty set or one that mixes the CPU backend with CUDA devices;
/// [`Error::ContextLost`] if a device's context was lost earlier; otherwise as
/// [`scope`](crate::scope): `f`'s error, then what ending the scope found, chained.
///
/// ```
/// # fn main() -> sluice_host::Result<()> {
/// let gpus = [sluice_host::Gpu::cpu(), sluice_host::Gpu::cpu()];
/// let lanes = sluice_host::scope_multi(&gpus, |s| {
///     let per_device = s.each_device(|dev| Ok(dev.lanes(2)?.len()))?;
///     Ok(per_device.iter().sum::<usize>())
/// })?;                                             // joins 4 lanes on 2 devices
/// assert_eq!(lanes, 4);
/// # Ok(()) }
/// ```
///
/// # Lifetimes
///
/// `'scope` and `'env` as in [`scope`](crate::scope). Each [`MultiScope::device`] entry adds
/// a brand `'dev`, invariant and unrelated to every other entry's, carried by that device's
/// lanes, memory and hand-offs; nothing branded leaves the entry's closure:
///
/// ```compile_fail
/// # fn main() -> sluice_host::Result<()> {
/// # let gpus = [sluice_host::Gpu::cpu(), sluice_host::Gpu::cpu()];
/// sluice_host::scope_multi(&gpus, |s| {
///     let lane = s.device(0, |dev| dev.lane())?; // error: lifetime may not live long enough
///     # let _ = lane;
///     Ok(())
/// })
/// # }
/// ```
pub fn scope_multi<'env, F, R>(gpus: &'env [Gpu], f: F) -> Result<R>
where
    F: for<'scope> FnOnce(&'scope MultiScope<'scope, 'env>) -> Result<R>,
{
    run(gpus, false, f).map(|(r, _)| r)
}

/// [`scope_multi`], traced: also returns one [`Trace`] per device (in the order of `gpus`),
/// with every launch, copy, peer copy (named with its [`PeerPath`]), collective and wait of
/// that device's lanes. Each device's times count from its own start event (CUDA cannot
/// compare events of two devices).
///
/// ```
/// # fn main() -> sluice_host::Result<()> {
/// let gpus = [sluice_host::Gpu::cpu(), sluice_host::Gpu::cpu()];
/// let ((), traces) = sluice_host::traced_scope_multi(&gpus, |s| {
///     s.each_device(|dev| {
///         let m = dev.alloc_buffer::<u8>(64)?;
///         dev.lane()?.enter(|st| { let mut v = st.bind(m.as_columns_mut()); st.zero(&mut v) })
///     })?;
///     Ok(())
/// })?;
/// assert_eq!(traces.len(), 2);
/// assert_eq!(traces[1].spans.len(), 1);
/// # Ok(()) }
/// ```
pub fn traced_scope_multi<'env, F, R>(gpus: &'env [Gpu], f: F) -> Result<(R, Vec<Trace>)>
where
    F: for<'scope> FnOnce(&'scope MultiScope<'scope, 'env>) -> Result<R>,
{
    run(gpus, true, f)
}

/// Checks that `gpus` can share a scope or a communicator: some, all of one backend.
fn check_devices(gpus: &[Gpu]) -> Result<()> {
    let Some(first) = gpus.first() else {
        return Err(Error::Devices { problem: "no device given".into() });
    };
    if gpus.iter().any(|g| g.backend() != first.backend()) {
        return Err(Error::Devices {
            problem: "the CPU backend and CUDA devices cannot share a scope: their memories cannot reach each other"
                .into(),
        });
    }
    Ok(())
}

fn run<'env, F, R>(gpus: &'env [Gpu], traced: bool, f: F) -> Result<(R, Vec<Trace>)>
where
    F: for<'scope> FnOnce(&'scope MultiScope<'scope, 'env>) -> Result<R>,
{
    check_devices(gpus)?;
    for gpu in gpus {
        if let Some(error) = gpu.context().lost() {
            return Err(Error::ContextLost { error, lane: None, fault: None });
        }
    }
    let mut scopes = Vec::with_capacity(gpus.len());
    for gpu in gpus {
        match Scope::start(gpu, traced) {
            Ok(s) => scopes.push(s),
            Err(e) => {
                // The scopes begun so far have no lanes and no memory: ending them only gives
                // their streams back.
                let ended = scopes.iter().flat_map(|s: &Scope<'_, 'env>| s.join().0);
                return Err(Error::chain(std::iter::once(e).chain(ended)).expect("an error"));
            }
        }
    }
    let shared = MultiShared { gpus: gpus.to_vec(), links: Mutex::new(Vec::new()) };
    let multi = MultiScope { scopes, shared, _scope: PhantomData, _env: PhantomData };
    let outcome = catch_unwind(AssertUnwindSafe(|| f(&multi)));
    // Every borrow handed to `f` has ended, but work may still run on any device's lanes,
    // and use any device's memory (peer copies, collectives): join every lane of every
    // device before freeing anything.
    let mut errors = Vec::new();
    let mut traces = Vec::new();
    let mut memories = Vec::new();
    for s in &multi.scopes {
        let (e, trace, memory) = s.join();
        errors.extend(e);
        traces.push(trace.unwrap_or_default());
        memories.push(memory);
    }
    for memory in memories.into_iter().flatten() {
        errors.extend(memory.release());
    }
    // What handles recorded on each device meanwhile (one log per context).
    let mut seen = Vec::new();
    for gpu in gpus {
        if !seen.contains(&gpu.ctx_id()) {
            seen.push(gpu.ctx_id());
            errors.extend(gpu.take_recorded_errors());
        }
    }
    let end = Error::chain(errors);
    let result = match outcome {
        Err(panic) => {
            if let Some(e) = end {
                gpus[0].record_error(e);
            }
            resume_unwind(panic)
        }
        Ok(Err(e)) => Err(match end {
            None => e,
            Some(cleanup) => e.also(cleanup),
        }),
        Ok(Ok(r)) => match end {
            None => Ok((r, traces)),
            Some(e) => Err(e),
        },
    };
    if let Err(e) = &result {
        if e.any(|e| matches!(e, Error::OutOfMemory { .. })) {
            // As `scope`: after running out, the pools give their memory back.
            for gpu in gpus {
                if let Err(trim) = gpu.trim_memory_pool() {
                    gpu.record_error(trim);
                }
            }
        }
    }
    result
}

/// The handle a [`scope_multi`] closure receives: enters its devices
/// ([`device`](MultiScope::device), [`each_device`](MultiScope::each_device)) and runs
/// collectives over their lanes ([`all_reduce`](MultiScope::all_reduce), ...).
///
/// ```
/// # fn main() -> sluice_host::Result<()> {
/// let gpus = [sluice_host::Gpu::cpu(), sluice_host::Gpu::cpu()];
/// sluice_host::scope_multi(&gpus, |s| {
///     assert_eq!(s.len(), 2);
///     s.device(1, |dev| { assert_eq!(dev.index(), 1); Ok(()) })
/// })
/// # }
/// ```
pub struct MultiScope<'scope, 'env: 'scope> {
    /// One scope per device, in the order of the `gpus` given.
    scopes: Vec<Scope<'scope, 'env>>,
    shared: MultiShared,
    /// Invariant in 'scope, as `Scope`: what is lent out for 'scope must not be taken as
    /// living longer or shorter than the scope.
    _scope: Invariant<'scope>,
    /// Invariant in 'env, as `Scope`.
    _env: Invariant<'env>,
}

/// What every device lane of a multi-GPU scope reaches: the devices, and what the peer
/// copies did.
struct MultiShared {
    gpus: Vec<Gpu>,
    links: Mutex<Vec<PeerLink>>,
}

impl MultiShared {
    /// The index of the first device whose memory `span` is (two `Gpu`s of one device share
    /// it: the first is named).
    fn device_of(&self, span: &Span) -> Option<usize> {
        self.gpus.iter().position(|g| g.ctx_id() == span.ctx)
    }

    fn note_copy(&self, from: usize, to: usize, path: PeerPath, bytes: u64) {
        let mut links = self.links.lock().unwrap_or_else(|p| p.into_inner());
        match links.iter_mut().find(|l| l.from == from && l.to == to) {
            Some(l) => {
                l.copies += 1;
                l.bytes += bytes;
            }
            None => links.push(PeerLink { from, to, path, copies: 1, bytes }),
        }
    }
}

impl<'scope, 'env> MultiScope<'scope, 'env> {
    /// How many devices the scope has (the `gpus` given, repeats included).
    ///
    /// ```
    /// # let gpus = [sluice_host::Gpu::cpu()];
    /// sluice_host::scope_multi(&gpus, |s| { assert_eq!(s.len(), 1); Ok(()) })?;
    /// # Ok::<(), sluice_host::Error>(())
    /// ```
    pub fn len(&self) -> usize {
        self.scopes.len()
    }

    /// Always false: a multi-GPU scope has at least one device.
    ///
    /// ```
    /// # let gpus = [sluice_host::Gpu::cpu()];
    /// sluice_host::scope_multi(&gpus, |s| { assert!(!s.is_empty()); Ok(()) })?;
    /// # Ok::<(), sluice_host::Error>(())
    /// ```
    pub fn is_empty(&self) -> bool {
        self.scopes.is_empty()
    }

    /// The devices, in the order given.
    ///
    /// ```
    /// # let gpus = [sluice_host::Gpu::cpu()];
    /// sluice_host::scope_multi(&gpus, |s| { println!("{}", s.gpus()[0].info().name); Ok(()) })?;
    /// # Ok::<(), sluice_host::Error>(())
    /// ```
    pub fn gpus(&self) -> &[Gpu] {
        &self.shared.gpus
    }

    /// Enters device `index`: runs `f` with the device's [`Device`], branded with a fresh
    /// lifetime `'dev` that only this call's lanes, memory and hand-offs carry. Nothing
    /// branded leaves `f`; data leaves the device through peer copies and collectives.
    ///
    /// # Errors
    /// [`Error::NoDevice`] if `index` is not a device of the scope; otherwise `f`'s result.
    ///
    /// ```
    /// # fn main() -> sluice_host::Result<()> {
    /// let gpus = [sluice_host::Gpu::cpu(), sluice_host::Gpu::cpu()];
    /// sluice_host::scope_multi(&gpus, |s| {
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
    /// # fn main() -> sluice_host::Result<()> {
    /// # let gpus = [sluice_host::Gpu::cpu(), sluice_host::Gpu::cpu()];
    /// sluice_host::scope_multi(&gpus, |s| {
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
    /// # fn main() -> sluice_host::Result<()> {
    /// let gpus = [sluice_host::Gpu::cpu(), sluice_host::Gpu::cpu()];
    /// let names = sluice_host::scope_multi(&gpus, |s| s.each_device(|dev| Ok(dev.index())))?;
    /// assert_eq!(names, [0, 1]);
    /// # Ok(()) }
    /// ```
    pub fn each_device<R>(
        &'scope self,
        mut f: impl for<'dev> FnMut(Device<'scope, 'env, 'dev>) -> Result<R>,
    ) -> Result<Vec<R>> {
        (0..self.scopes.len()).map(|index| f(Device { multi: self, index, _brand: PhantomData })).collect()
    }

    /// Which way copies between device `from` and device `to` go (see [`Gpu::peer_path`]).
    ///
    /// # Errors
    /// [`Error::NoDevice`] for an index out of range; the driver's error.
    ///
    /// ```
    /// # let gpus = [sluice_host::Gpu::cpu(), sluice_host::Gpu::cpu()];
    /// sluice_host::scope_multi(&gpus, |s| {
    ///     assert_eq!(s.peer_path(0, 1)?, sluice_host::PeerPath::SameDevice); // the CPU backend
    ///     Ok(())
    /// })?;
    /// # Ok::<(), sluice_host::Error>(())
    /// ```
    pub fn peer_path(&self, from: usize, to: usize) -> Result<PeerPath> {
        let n = self.shared.gpus.len();
        let gpu = |i: usize| self.shared.gpus.get(i).ok_or(Error::NoDevice { ordinal: i, count: n });
        gpu(from)?.peer_path(gpu(to)?)
    }

    /// The peer copies so far, one entry per (source, destination) pair of devices, in the
    /// order first used: how many, how many bytes, and which [`PeerPath`] they took.
    ///
    /// ```
    /// # fn main() -> sluice_host::Result<()> {
    /// let gpus = [sluice_host::Gpu::cpu(), sluice_host::Gpu::cpu()];
    /// sluice_host::scope_multi(&gpus, |s| s.device(0, |d0| s.device(1, |d1| {
    ///     let (src, dst) = (d0.alloc_buffer::<u32>(16)?, d1.alloc_buffer::<u32>(16)?);
    ///     d0.lane()?.enter(|st| {
    ///         let mut v = st.bind(src.as_columns_mut());
    ///         st.zero(&mut v)?;
    ///         st.copy_to_peer(&v, dst.as_columns_mut()).map(drop)
    ///     })?;
    ///     let links = s.peer_links();
    ///     assert_eq!((links[0].from, links[0].to, links[0].copies, links[0].bytes), (0, 1, 1, 64));
    ///     Ok(())
    /// })))
    /// # }
    /// ```
    pub fn peer_links(&self) -> Vec<PeerLink> {
        self.shared.links.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
}

impl std::fmt::Debug for MultiScope<'_, '_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MultiScope").field("gpus", &self.shared.gpus).finish_non_exhaustive()
    }
}

// ---------------------------------------------------------------------------------------
// Devices, lanes, branded values

/// One device of a [`MultiScope`], entered: where its lanes and memory come from, all
/// branded `'dev`. `Copy`; only [`MultiScope::device`] and [`MultiScope::each_device`] make
/// one, for the duration of their closure.
///
/// ```
/// # fn main() -> sluice_host::Result<()> {
/// let gpus = [sluice_host::Gpu::cpu(), sluice_host::Gpu::cpu()];
/// sluice_host::scope_multi(&gpus, |s| {
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
    multi: &'scope MultiScope<'scope, 'env>,
    index: usize,
    /// The device brand: without it, this device's memory would bind on any device's lanes.
    _brand: Brand<'dev>,
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
    /// # let gpus = [sluice_host::Gpu::cpu(), sluice_host::Gpu::cpu()];
    /// sluice_host::scope_multi(&gpus, |s| s.device(1, |d| { assert_eq!(d.index(), 1); Ok(()) }))?;
    /// # Ok::<(), sluice_host::Error>(())
    /// ```
    pub fn index(&self) -> usize {
        self.index
    }

    /// The device.
    ///
    /// ```
    /// # let gpus = [sluice_host::Gpu::cpu()];
    /// sluice_host::scope_multi(&gpus, |s| s.device(0, |d| { println!("{}", d.gpu().info().name); Ok(()) }))?;
    /// # Ok::<(), sluice_host::Error>(())
    /// ```
    pub fn gpu(&self) -> &'scope Gpu {
        &self.multi.shared.gpus[self.index]
    }

    /// The device's own [`Scope`], unbranded: everything a single-GPU scope offers
    /// (pinned memory, timestamps, plain lanes). What it hands out carries no device brand,
    /// so its misuse across devices is caught at run time ([`Error::WrongDevice`]).
    ///
    /// ```
    /// # let gpus = [sluice_host::Gpu::cpu()];
    /// sluice_host::scope_multi(&gpus, |s| s.device(0, |d| {
    ///     let host = d.scope().pinned_buffer::<f32>(16)?;
    ///     let t0 = d.scope().timestamp()?;
    ///     # let _ = (host, t0);
    ///     Ok(())
    /// }))?;
    /// # Ok::<(), sluice_host::Error>(())
    /// ```
    pub fn scope(&self) -> &'scope Scope<'scope, 'env> {
        &self.multi.scopes[self.index]
    }

    /// A new lane on this device, joined when the multi-GPU scope ends.
    ///
    /// ```
    /// # let gpus = [sluice_host::Gpu::cpu()];
    /// sluice_host::scope_multi(&gpus, |s| s.device(0, |d| { assert_eq!(d.lane()?.index(), 0); Ok(()) }))?;
    /// # Ok::<(), sluice_host::Error>(())
    /// ```
    pub fn lane(&self) -> Result<DeviceLane<'scope, 'dev>> {
        let lane = self.scope().lane()?;
        Ok(DeviceLane { lane, shared: &self.multi.shared, device: self.index, _brand: PhantomData })
    }

    /// `n` new lanes on this device.
    ///
    /// ```
    /// # let gpus = [sluice_host::Gpu::cpu()];
    /// sluice_host::scope_multi(&gpus, |s| s.device(0, |d| { assert_eq!(d.lanes(4)?.len(), 4); Ok(()) }))?;
    /// # Ok::<(), sluice_host::Error>(())
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
    /// # let gpus = [sluice_host::Gpu::cpu()];
    /// sluice_host::scope_multi(&gpus, |s| s.device(0, |d| {
    ///     let m = d.alloc_matrix::<f32>(1024, 8)?;
    ///     assert_eq!((m.rows(), m.cols()), (1024, 8));
    ///     Ok(())
    /// }))?;
    /// # Ok::<(), sluice_host::Error>(())
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
    /// # let gpus = [sluice_host::Gpu::cpu()];
    /// sluice_host::scope_multi(&gpus, |s| s.device(0, |d| {
    ///     assert_eq!(d.alloc_matrix_padded::<f32>(1000, 4, 1024)?.ld(), 1024);
    ///     Ok(())
    /// }))?;
    /// # Ok::<(), sluice_host::Error>(())
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
    /// # let gpus = [sluice_host::Gpu::cpu()];
    /// sluice_host::scope_multi(&gpus, |s| s.device(0, |d| { assert_eq!(d.alloc_buffer::<u8>(7)?.len(), 7); Ok(()) }))?;
    /// # Ok::<(), sluice_host::Error>(())
    /// ```
    pub fn alloc_buffer<T: Pod>(&self, len: usize) -> Result<OnDevice<'dev, &'scope mut DeviceMatrix<T>>> {
        self.alloc_matrix(len, 1)
    }

    /// Uploads `data` once to this device, for any number of this device's lanes to read
    /// (each awaits the returned fence: [`DeviceStream::await_fence`]).
    ///
    /// ```
    /// # let gpus = [sluice_host::Gpu::cpu(), sluice_host::Gpu::cpu()];
    /// let data = [1.0f32; 64];
    /// sluice_host::scope_multi(&gpus, |s| s.each_device(|d| {
    ///     let shared = d.upload(&data)?;            // one upload per device
    ///     for lane in d.lanes(2)? {
    ///         lane.enter(|st| st.await_fence(&shared).map(drop))?;
    ///     }
    ///     Ok(())
    /// }).map(drop))?;
    /// # Ok::<(), sluice_host::Error>(())
    /// ```
    pub fn upload<T: Pod>(&self, data: &'scope [T]) -> Result<OnDevice<'dev, Fenced<'scope, ColumnsRef<'scope, T>>>> {
        Ok(self.brand(self.scope().upload(data)?))
    }

    /// Uploads `data` as a `rows` x `cols` column-major matrix to this device.
    ///
    /// ```
    /// # let gpus = [sluice_host::Gpu::cpu()];
    /// let data = [0u32; 12];
    /// sluice_host::scope_multi(&gpus, |s| s.device(0, |d| {
    ///     let t = d.upload_matrix(&data, 4, 3)?;
    ///     assert_eq!((t.rows(), t.cols()), (4, 3));
    ///     Ok(())
    /// }))?;
    /// # Ok::<(), sluice_host::Error>(())
    /// ```
    pub fn upload_matrix<T: Pod>(
        &self,
        data: &'scope [T],
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
    /// # fn main() -> sluice_host::Result<()> {
    /// let gpus = [sluice_host::Gpu::cpu()];
    /// let mut owned = gpus[0].alloc_buffer::<f32>(32)?;   // outside the scope: no brand
    /// sluice_host::scope_multi(&gpus, |s| s.device(0, |d| {
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

/// Memory without a device brand that a [`Device`] can [`adopt`](Device::adopt) after a run-time
/// check: [`ColumnsMut`], [`ColumnsRef`], `&mut`/`&` [`DeviceMatrix`], and hand-offs
/// ([`Fenced`]) of columns.
///
/// ```
/// # fn main() -> sluice_host::Result<()> {
/// let gpus = [sluice_host::Gpu::cpu()];
/// let m = gpus[0].alloc_buffer::<u8>(8)?;
/// sluice_host::scope_multi(&gpus, |s| s.device(0, |d| { d.adopt(&m)?; d.adopt(m.as_columns())?; Ok(()) }))
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

/// A lane of one device of a multi-GPU scope, branded with its device: enter it to enqueue
/// work there. `Copy`; the device's [`Lane`], plus the brand.
///
/// ```
/// # let gpus = [sluice_host::Gpu::cpu()];
/// sluice_host::scope_multi(&gpus, |s| s.device(0, |d| {
///     let lane = d.lane()?;
///     let m = d.alloc_buffer::<u32>(64)?;
///     lane.enter(|st| { let mut v = st.bind(m.as_columns_mut()); st.zero(&mut v) })?;
///     assert_eq!(lane.stats().copies, 1);
///     Ok(())
/// }))?;
/// # Ok::<(), sluice_host::Error>(())
/// ```
pub struct DeviceLane<'scope, 'dev> {
    lane: Lane<'scope>,
    shared: &'scope MultiShared,
    device: usize,
    /// The device brand: without it, views of this device's memory would bind here from any
    /// device.
    _brand: Brand<'dev>,
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
    /// # let gpus = [sluice_host::Gpu::cpu()];
    /// sluice_host::scope_multi(&gpus, |s| s.device(0, |d| {
    ///     let m = d.alloc_buffer::<f32>(8)?;
    ///     let handed = d.lane()?.enter(|st| {
    ///         let mut v = st.bind(m.as_columns_mut());
    ///         st.zero(&mut v)?;
    ///         st.fence(v)                       // a hand-off branded with this device
    ///     })?;
    ///     d.lane()?.enter(|st| st.await_fence(handed).map(drop))
    /// }))?;
    /// # Ok::<(), sluice_host::Error>(())
    /// ```
    ///
    /// # Lifetimes
    ///
    /// As [`Lane::enter`], and the device brand: a hand-off of another device's memory does
    /// not await here.
    ///
    /// ```compile_fail
    /// # fn main() -> sluice_host::Result<()> {
    /// # let gpus = [sluice_host::Gpu::cpu(), sluice_host::Gpu::cpu()];
    /// sluice_host::scope_multi(&gpus, |s| s.device(0, |d0| {
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
    /// # let gpus = [sluice_host::Gpu::cpu()];
    /// sluice_host::scope_multi(&gpus, |s| s.device(0, |d| { assert_eq!(d.lane()?.lane().index(), 0); Ok(()) }))?;
    /// # Ok::<(), sluice_host::Error>(())
    /// ```
    pub fn lane(&self) -> Lane<'scope> {
        self.lane
    }

    /// The index of the lane's device in its scope.
    ///
    /// ```
    /// # let gpus = [sluice_host::Gpu::cpu(), sluice_host::Gpu::cpu()];
    /// sluice_host::scope_multi(&gpus, |s| s.device(1, |d| { assert_eq!(d.lane()?.device(), 1); Ok(()) }))?;
    /// # Ok::<(), sluice_host::Error>(())
    /// ```
    pub fn device(&self) -> usize {
        self.device
    }

    /// The lane's index among its device's lanes (creation order, from 0).
    ///
    /// ```
    /// # let gpus = [sluice_host::Gpu::cpu()];
    /// sluice_host::scope_multi(&gpus, |s| s.device(0, |d| { assert_eq!(d.lanes(2)?[1].index(), 1); Ok(()) }))?;
    /// # Ok::<(), sluice_host::Error>(())
    /// ```
    pub fn index(&self) -> usize {
        self.lane.index()
    }

    /// What sluice has enqueued on this lane so far.
    ///
    /// ```
    /// # let gpus = [sluice_host::Gpu::cpu()];
    /// sluice_host::scope_multi(&gpus, |s| s.device(0, |d| { assert_eq!(d.lane()?.stats().launches, 0); Ok(()) }))?;
    /// # Ok::<(), sluice_host::Error>(())
    /// ```
    pub fn stats(&self) -> LaneStats {
        self.lane.stats()
    }
}

/// An entered [`DeviceLane`]: the device's [`Stream`] (every method of it works here: it
/// derefs to it), branded with the lane `'lane` and the device `'dev`. Its own methods take and
/// give branded values: [`bind`](DeviceStream::bind) takes only this device's columns,
/// [`await_fence`](DeviceStream::await_fence) only this device's hand-offs (or any device's
/// plain [`Fence`]), [`fence`](DeviceStream::fence) brands its hand-off with this device, and
/// [`copy_to_peer`](DeviceStream::copy_to_peer) moves data to another device.
///
/// ```
/// # let gpus = [sluice_host::Gpu::cpu()];
/// let x = [1.0f32; 256];
/// sluice_host::scope_multi(&gpus, |s| s.device(0, |d| {
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
/// # Ok::<(), sluice_host::Error>(())
/// ```
pub struct DeviceStream<'scope, 'lane, 'dev> {
    stream: Stream<'scope, 'lane>,
    shared: &'scope MultiShared,
    device: usize,
    /// The device brand: what this stream binds and awaits must carry the same.
    _brand: Brand<'dev>,
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
    /// # let gpus = [sluice_host::Gpu::cpu(), sluice_host::Gpu::cpu()];
    /// sluice_host::scope_multi(&gpus, |s| s.device(1, |d| d.lane()?.enter(|st| { assert_eq!(st.device(), 1); Ok(()) })))?;
    /// # Ok::<(), sluice_host::Error>(())
    /// ```
    pub fn device(&self) -> usize {
        self.device
    }

    /// Binds this device's columns to this lane ([`Stream::bind`], with the device brand
    /// checked at compile time).
    ///
    /// ```
    /// # let gpus = [sluice_host::Gpu::cpu()];
    /// sluice_host::scope_multi(&gpus, |s| s.device(0, |d| {
    ///     let m = d.alloc_matrix::<f32>(16, 2)?;
    ///     let (a, b) = m.split_columns_mut(1).unwrap();
    ///     let (la, lb) = (d.lane()?, d.lane()?);
    ///     la.enter(|st| { let mut v = st.bind(a); st.zero(&mut v) })?;
    ///     lb.enter(|st| { let mut v = st.bind(b); st.zero(&mut v) })
    /// }))?;
    /// # Ok::<(), sluice_host::Error>(())
    /// ```
    pub fn bind<T: Pod>(&self, cols: OnDevice<'dev, ColumnsMut<'scope, T>>) -> ColumnViewMut<'scope, 'lane, T> {
        self.stream.bind(cols.value)
    }

    /// Binds this device's read-only columns to this lane.
    ///
    /// ```
    /// # let gpus = [sluice_host::Gpu::cpu()];
    /// sluice_host::scope_multi(&gpus, |s| s.device(0, |d| {
    ///     let m = d.alloc_matrix::<f32>(16, 2)?.into_ref();
    ///     for lane in d.lanes(2)? {
    ///         lane.enter(|st| assert_eq!(st.bind_ref(m.as_columns()).len(), 32));
    ///     }
    ///     Ok(())
    /// }))?;
    /// # Ok::<(), sluice_host::Error>(())
    /// ```
    pub fn bind_ref<T: Pod>(&self, cols: OnDevice<'dev, ColumnsRef<'scope, T>>) -> ColumnView<'scope, 'lane, T> {
        self.stream.bind_ref(cols.value)
    }

    /// Records a fence after everything enqueued on this lane so far and returns the view's
    /// columns behind it, branded with this device: a hand-off that only this device's lanes
    /// (or the host) can await.
    ///
    /// ```
    /// # let gpus = [sluice_host::Gpu::cpu()];
    /// sluice_host::scope_multi(&gpus, |s| s.device(0, |d| {
    ///     let m = d.alloc_buffer::<u8>(8)?;
    ///     let handed = d.lane()?.enter(|st| { let mut v = st.bind(m.as_columns_mut()); st.zero(&mut v)?; st.fence(v) })?;
    ///     let cols = handed.wait()?;               // or await it on another lane of device 0
    ///     # let _ = cols;
    ///     Ok(())
    /// }))?;
    /// # Ok::<(), sluice_host::Error>(())
    /// ```
    pub fn fence<V: Fenceable<'scope, 'lane>>(&self, view: V) -> Result<OnDevice<'dev, Fenced<'scope, V::Unbranded>>> {
        let fenced = self.stream.fence(view)?;
        Ok(OnDevice { value: fenced, device: self.device, _brand: PhantomData })
    }

    /// Awaits a hand-off or upload of this device ([`OnDevice`] of a [`Fenced`]), or a plain
    /// [`Fence`] of any device (ordering only: `cuStreamWaitEvent` works across devices), and
    /// returns what it guards bound to this lane.
    ///
    /// ```
    /// # let gpus = [sluice_host::Gpu::cpu(), sluice_host::Gpu::cpu()];
    /// sluice_host::scope_multi(&gpus, |s| {
    ///     let done = s.device(0, |d0| d0.lane()?.enter(|st| st.record()))?; // a fence on device 0
    ///     s.device(1, |d1| d1.lane()?.enter(|st| st.await_fence(&done)))   // device 1 waits for it
    /// })?;
    /// # Ok::<(), sluice_host::Error>(())
    /// ```
    pub fn await_fence<A: DeviceAwaitable<'scope, 'dev>>(&self, a: A) -> Result<A::Output<'lane>> {
        a.await_on(&self.stream, Token(()))
    }

    /// Fan-in of this device's hand-offs: awaits every one and joins them into one view
    /// ([`Stream::await_all`]).
    ///
    /// ```
    /// # let gpus = [sluice_host::Gpu::cpu()];
    /// sluice_host::scope_multi(&gpus, |s| s.device(0, |d| {
    ///     let m = d.alloc_matrix::<f32>(8, 4)?;
    ///     let mut handed = Vec::new();
    ///     for (lane, col) in d.lanes(4)?.into_iter().zip(m.columns_mut()) {
    ///         handed.push(lane.enter(|st| { let mut v = st.bind(col); st.zero(&mut v)?; st.fence(v) })?);
    ///     }
    ///     d.lane()?.enter(|st| { assert_eq!(st.await_all(handed)?.cols(), 4); Ok(()) })
    /// }))?;
    /// # Ok::<(), sluice_host::Error>(())
    /// ```
    pub fn await_all<T>(
        &self,
        handed: impl IntoIterator<Item = OnDevice<'dev, Fenced<'scope, ColumnsMut<'scope, T>>>>,
    ) -> Result<ColumnViewMut<'scope, 'lane, T>> {
        self.stream.await_all(handed.into_iter().map(|h| h.value))
    }

    /// Copies `src` (a view on this lane) into `dst`, columns of another device — or of this
    /// one — on this lane, and returns `dst` behind a fence recorded after the copy: a
    /// hand-off awaited on the destination device like any other, ordered exactly as a
    /// same-device hand-off (the destination's lane waits for this lane's event).
    ///
    /// `dst` branded ([`OnDevice`]) gives a hand-off branded with its device; unbranded
    /// [`ColumnsMut`] gives an unbranded one (its device is found at run time among the
    /// scope's: the first whose memory it is — two [`Gpu`] values of one device, or the CPU
    /// backend's, share their memory). The copy takes the [`PeerPath`] between the two devices: peer access is
    /// enabled the first time a pair needs it, where the hardware allows it (NVLink, PCIe
    /// peer-to-peer); otherwise the driver stages the copy through host memory. The trace
    /// names the path; [`MultiScope::peer_links`] counts copies and bytes per pair.
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
    /// # fn main() -> sluice_host::Result<()> {
    /// let gpus = [sluice_host::Gpu::cpu(), sluice_host::Gpu::cpu()];
    /// let mut host = gpus[1].pinned_buffer::<u32>(64)?;
    /// let ones = vec![1u32; 64];
    /// sluice_host::scope_multi(&gpus, |s| s.device(0, |d0| {
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
        src: impl Into<ColumnView<'v, 'lane, T>>,
        dst: D,
    ) -> Result<D::Handed> {
        let s = src.into().span();
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

/// A value of one device, branded `'dev`: its memory ([`DeviceMatrix`], [`ColumnsMut`],
/// [`ColumnsRef`]) or its hand-offs and uploads ([`Fenced`]). Only that device's lanes
/// ([`DeviceStream`]) take it. Derefs to the value for reading (`rows`, `cols`, `len`);
/// its methods split and convert it, keeping the brand.
///
/// ```
/// # let gpus = [sluice_host::Gpu::cpu()];
/// sluice_host::scope_multi(&gpus, |s| s.device(0, |d| {
///     let m = d.alloc_matrix::<f32>(8, 6)?;          // OnDevice<&mut DeviceMatrix<f32>>
///     assert_eq!(m.cols(), 6);                        // through deref
///     let (a, b) = m.split_columns_mut(2).unwrap();  // OnDevice<ColumnsMut>, both
///     assert_eq!((a.cols(), b.cols(), a.device()), (2, 4, 0));
///     Ok(())
/// }))?;
/// # Ok::<(), sluice_host::Error>(())
/// ```
pub struct OnDevice<'dev, X> {
    value: X,
    device: usize,
    /// The device brand: what takes an `OnDevice<'dev, _>` checks at compile time that it
    /// is this device's.
    _brand: Brand<'dev>,
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
    /// # let gpus = [sluice_host::Gpu::cpu(), sluice_host::Gpu::cpu()];
    /// sluice_host::scope_multi(&gpus, |s| s.device(1, |d| { assert_eq!(d.alloc_buffer::<u8>(1)?.device(), 1); Ok(()) }))?;
    /// # Ok::<(), sluice_host::Error>(())
    /// ```
    pub fn device(&self) -> usize {
        self.device
    }

    /// The value without its brand: it may then leave its device's closure and be used
    /// anywhere a plain value is (a plain [`Stream`], a collective), with the device checked
    /// at run time instead ([`Error::WrongDevice`]). [`Device::adopt`] brands it again.
    ///
    /// ```
    /// # let gpus = [sluice_host::Gpu::cpu()];
    /// sluice_host::scope_multi(&gpus, |s| {
    ///     let cols = s.device(0, |d| Ok(d.alloc_buffer::<f32>(4)?.into_unbranded().as_columns_mut()))?;
    ///     s.device(0, |d| { let again = d.adopt(cols)?; assert_eq!(again.len(), 4); Ok(()) })
    /// })?;
    /// # Ok::<(), sluice_host::Error>(())
    /// ```
    pub fn into_unbranded(self) -> X {
        self.value
    }
}

impl<'scope, 'dev, T: Pod> OnDevice<'dev, &'scope mut DeviceMatrix<T>> {
    /// The whole matrix, mutably ([`DeviceMatrix::as_columns_mut`]), for the scope.
    ///
    /// ```
    /// # let gpus = [sluice_host::Gpu::cpu()];
    /// sluice_host::scope_multi(&gpus, |s| s.device(0, |d| { assert_eq!(d.alloc_matrix::<f32>(4, 2)?.as_columns_mut().cols(), 2); Ok(()) }))?;
    /// # Ok::<(), sluice_host::Error>(())
    /// ```
    pub fn as_columns_mut(self) -> OnDevice<'dev, ColumnsMut<'scope, T>> {
        self.map(|m| m.as_columns_mut())
    }

    /// Every column on its own, mutably, in order ([`DeviceMatrix::columns_mut`]).
    ///
    /// ```
    /// # let gpus = [sluice_host::Gpu::cpu()];
    /// sluice_host::scope_multi(&gpus, |s| s.device(0, |d| { assert_eq!(d.alloc_matrix::<f32>(4, 6)?.columns_mut().len(), 6); Ok(()) }))?;
    /// # Ok::<(), sluice_host::Error>(())
    /// ```
    pub fn columns_mut(self) -> OnDeviceIter<'dev, ColumnChunksMut<'scope, T>> {
        let device = self.device;
        OnDeviceIter { inner: self.value.columns_mut(), device, _brand: PhantomData }
    }

    /// Runs of `k` columns, mutably ([`DeviceMatrix::column_chunks_mut`]).
    ///
    /// ```
    /// # let gpus = [sluice_host::Gpu::cpu()];
    /// sluice_host::scope_multi(&gpus, |s| s.device(0, |d| { assert_eq!(d.alloc_matrix::<f32>(4, 6)?.column_chunks_mut(4).len(), 2); Ok(()) }))?;
    /// # Ok::<(), sluice_host::Error>(())
    /// ```
    pub fn column_chunks_mut(self, k: usize) -> OnDeviceIter<'dev, ColumnChunksMut<'scope, T>> {
        let device = self.device;
        OnDeviceIter { inner: self.value.column_chunks_mut(k), device, _brand: PhantomData }
    }

    /// Column `j`, mutably; `None` if out of range.
    ///
    /// ```
    /// # let gpus = [sluice_host::Gpu::cpu()];
    /// sluice_host::scope_multi(&gpus, |s| s.device(0, |d| { assert!(d.alloc_matrix::<f32>(4, 2)?.column_mut(1).is_some()); Ok(()) }))?;
    /// # Ok::<(), sluice_host::Error>(())
    /// ```
    pub fn column_mut(self, j: usize) -> Option<OnDevice<'dev, ColumnsMut<'scope, T>>> {
        let device = self.device;
        self.value.column_mut(j).map(|value| OnDevice { value, device, _brand: PhantomData })
    }

    /// Columns `[0, at)` and `[at, cols)`, both mutably; `None` if `at > cols`.
    ///
    /// ```
    /// # let gpus = [sluice_host::Gpu::cpu()];
    /// sluice_host::scope_multi(&gpus, |s| s.device(0, |d| { assert!(d.alloc_matrix::<f32>(4, 2)?.split_columns_mut(1).is_some()); Ok(()) }))?;
    /// # Ok::<(), sluice_host::Error>(())
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
    /// # let gpus = [sluice_host::Gpu::cpu()];
    /// sluice_host::scope_multi(&gpus, |s| s.device(0, |d| { let m = d.alloc_matrix::<f32>(4, 2)?.into_ref(); assert_eq!(m.as_columns().len(), 8); Ok(()) }))?;
    /// # Ok::<(), sluice_host::Error>(())
    /// ```
    pub fn into_ref(self) -> OnDevice<'dev, &'scope DeviceMatrix<T>> {
        self.map(|m| &*m)
    }
}

impl<'scope, 'dev, T: Pod> OnDevice<'dev, &'scope DeviceMatrix<T>> {
    /// The whole matrix, read-only ([`DeviceMatrix::as_columns`]).
    ///
    /// ```
    /// # let gpus = [sluice_host::Gpu::cpu()];
    /// sluice_host::scope_multi(&gpus, |s| s.device(0, |d| { let m = d.alloc_matrix::<f32>(4, 2)?.into_ref(); assert_eq!(m.as_columns().cols(), 2); Ok(()) }))?;
    /// # Ok::<(), sluice_host::Error>(())
    /// ```
    pub fn as_columns(self) -> OnDevice<'dev, ColumnsRef<'scope, T>> {
        self.map(|m| m.as_columns())
    }

    /// Every column on its own, read-only ([`DeviceMatrix::columns`]).
    ///
    /// ```
    /// # let gpus = [sluice_host::Gpu::cpu()];
    /// sluice_host::scope_multi(&gpus, |s| s.device(0, |d| { let m = d.alloc_matrix::<f32>(4, 3)?.into_ref(); assert_eq!(m.columns().len(), 3); Ok(()) }))?;
    /// # Ok::<(), sluice_host::Error>(())
    /// ```
    pub fn columns(self) -> OnDeviceIter<'dev, ColumnChunks<'scope, T>> {
        let device = self.device;
        OnDeviceIter { inner: self.value.columns(), device, _brand: PhantomData }
    }

    /// Column `j`, read-only; `None` if out of range.
    ///
    /// ```
    /// # let gpus = [sluice_host::Gpu::cpu()];
    /// sluice_host::scope_multi(&gpus, |s| s.device(0, |d| { let m = d.alloc_matrix::<f32>(4, 3)?.into_ref(); assert!(m.column(3).is_none()); Ok(()) }))?;
    /// # Ok::<(), sluice_host::Error>(())
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
            /// # let gpus = [sluice_host::Gpu::cpu()];
            /// sluice_host::scope_multi(&gpus, |s| s.device(0, |d| {
            ///     let all = d.alloc_matrix::<f32>(4, 3)?.as_columns_mut();
            ///     let (a, b) = all.split_columns(1).unwrap();
            ///     assert_eq!((a.cols(), b.cols()), (1, 2));
            ///     Ok(())
            /// }))?;
            /// # Ok::<(), sluice_host::Error>(())
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
            /// # let gpus = [sluice_host::Gpu::cpu()];
            /// sluice_host::scope_multi(&gpus, |s| s.device(0, |d| {
            ///     let all = d.alloc_matrix::<f32>(4, 5)?.as_columns_mut();
            ///     assert_eq!(all.column_chunks(2).len(), 3);
            ///     Ok(())
            /// }))?;
            /// # Ok::<(), sluice_host::Error>(())
            /// ```
            pub fn column_chunks(self, k: usize) -> OnDeviceIter<'dev, $chunks<'scope, T>> {
                let device = self.device;
                OnDeviceIter { inner: self.value.column_chunks(k), device, _brand: PhantomData }
            }

            /// Each column on its own, of this device.
            ///
            /// ```
            /// # let gpus = [sluice_host::Gpu::cpu()];
            /// sluice_host::scope_multi(&gpus, |s| s.device(0, |d| {
            ///     let all = d.alloc_matrix::<f32>(4, 5)?.as_columns_mut();
            ///     assert_eq!(all.into_columns().len(), 5);
            ///     Ok(())
            /// }))?;
            /// # Ok::<(), sluice_host::Error>(())
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
    /// # let gpus = [sluice_host::Gpu::cpu()];
    /// sluice_host::scope_multi(&gpus, |s| s.device(0, |d| {
    ///     let r = d.alloc_matrix::<f32>(4, 2)?.as_columns_mut().into_ref();
    ///     let copy = r;                                // Copy
    ///     assert_eq!(copy.len(), r.len());
    ///     Ok(())
    /// }))?;
    /// # Ok::<(), sluice_host::Error>(())
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
    /// # let gpus = [sluice_host::Gpu::cpu()];
    /// sluice_host::scope_multi(&gpus, |s| s.device(0, |d| {
    ///     let m = d.alloc_buffer::<u8>(8)?;
    ///     let handed = d.lane()?.enter(|st| { let mut v = st.bind(m.as_columns_mut()); st.zero(&mut v)?; st.fence(v) })?;
    ///     let cols = handed.wait()?;
    ///     d.lane()?.enter(|st| { let mut v = st.bind(cols); st.zero(&mut v) })
    /// }))?;
    /// # Ok::<(), sluice_host::Error>(())
    /// ```
    pub fn wait(self) -> Result<OnDevice<'dev, ColumnsMut<'scope, T>>> {
        let device = self.device;
        Ok(OnDevice { value: self.value.wait()?, device, _brand: PhantomData })
    }

    /// Turns the hand-off into shared read-only data that any number of this device's
    /// lanes may await ([`Fenced::into_shared`]).
    ///
    /// ```
    /// # let gpus = [sluice_host::Gpu::cpu()];
    /// sluice_host::scope_multi(&gpus, |s| s.device(0, |d| {
    ///     let m = d.alloc_buffer::<u8>(8)?;
    ///     let shared = d.lane()?.enter(|st| { let mut v = st.bind(m.as_columns_mut()); st.zero(&mut v)?; st.fence(v) })?.into_shared();
    ///     for lane in d.lanes(2)? { lane.enter(|st| st.await_fence(&shared).map(drop))?; }
    ///     Ok(())
    /// }))?;
    /// # Ok::<(), sluice_host::Error>(())
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
    /// # let gpus = [sluice_host::Gpu::cpu()];
    /// let data = [7u32; 4];
    /// sluice_host::scope_multi(&gpus, |s| s.device(0, |d| {
    ///     let cols = d.upload(&data)?.wait()?;
    ///     d.lane()?.enter(|st| assert_eq!(st.bind_ref(cols).len(), 4));
    ///     Ok(())
    /// }))?;
    /// # Ok::<(), sluice_host::Error>(())
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
/// # let gpus = [sluice_host::Gpu::cpu()];
/// sluice_host::scope_multi(&gpus, |s| s.device(0, |d| {
///     let cols: Vec<_> = d.alloc_matrix::<f32>(4, 3)?.columns_mut().rev().collect();
///     assert_eq!(cols.len(), 3);
///     Ok(())
/// }))?;
/// # Ok::<(), sluice_host::Error>(())
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

/// What a [`DeviceStream`] can await: this device's hand-off `OnDevice<Fenced<ColumnsMut>>`
/// (by value), its shared data `&OnDevice<Fenced<ColumnsRef>>` (by reference, or by value),
/// or a plain `&Fence` of any device (ordering only).
///
/// ```
/// # let gpus = [sluice_host::Gpu::cpu()];
/// let data = [1.0f32; 4];
/// sluice_host::scope_multi(&gpus, |s| s.device(0, |d| {
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
/// # Ok::<(), sluice_host::Error>(())
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

/// Where a peer copy ([`DeviceStream::copy_to_peer`]) may write: branded columns of a
/// device (the hand-off comes back with the same brand) or unbranded [`ColumnsMut`] (the
/// hand-off comes back unbranded; the device is found at run time).
///
/// ```
/// # let gpus = [sluice_host::Gpu::cpu(), sluice_host::Gpu::cpu()];
/// sluice_host::scope_multi(&gpus, |s| s.device(0, |d0| s.device(1, |d1| {
///     let (a, b) = (d0.alloc_buffer::<u8>(4)?, d1.alloc_buffer::<u8>(4)?);
///     let handed = d0.lane()?.enter(|st| {
///         let mut v = st.bind(a.as_columns_mut());
///         st.zero(&mut v)?;
///         st.copy_to_peer(&v, b.as_columns_mut())     // OnDevice<'d1, ColumnsMut>
///     })?;                                            // OnDevice<'d1, Fenced<ColumnsMut>>
///     assert_eq!(handed.device(), 1);
///     Ok(())
/// })))?;
/// # Ok::<(), sluice_host::Error>(())
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

// ---------------------------------------------------------------------------------------
// Peer paths

/// Which way a copy between two devices' memory goes ([`Gpu::peer_path`]), as the trace and
/// [`MultiScope::peer_links`] report it.
///
/// ```
/// use sluice_host::{Gpu, PeerPath};
/// assert_eq!(Gpu::cpu().peer_path(&Gpu::cpu())?, PeerPath::SameDevice);
/// assert_eq!(PeerPath::Direct.to_string(), "direct");
/// # Ok::<(), sluice_host::Error>(())
/// ```
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PeerPath {
    /// One device's memory on both sides (two [`Gpu`] values of one device, or the CPU
    /// backend): a plain device copy.
    SameDevice,
    /// Peer access is enabled between the two GPUs (NVLink, or PCIe peer-to-peer): the copy
    /// engines move the data directly, at the link's bandwidth.
    Direct,
    /// The two GPUs cannot reach each other's memory (`cuDeviceCanAccessPeer` says no): the
    /// driver stages the copy through host memory (`cuMemcpyPeerAsync`), at a fraction of
    /// the speed.
    Staged,
}

impl std::fmt::Display for PeerPath {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            PeerPath::SameDevice => "same device",
            PeerPath::Direct => "direct",
            PeerPath::Staged => "staged through the host",
        })
    }
}

impl Gpu {
    /// Which way copies between this device's memory and `other`'s go. The first time a
    /// pair of CUDA devices asks, peer access is enabled both ways if
    /// `cuDeviceCanAccessPeer` allows it (`cuCtxEnablePeerAccess`, once per pair per
    /// process): then [`PeerPath::Direct`]; otherwise [`PeerPath::Staged`].
    ///
    /// # Errors
    /// [`Error::Device`] with the failing driver call.
    ///
    /// ```no_run
    /// # fn main() -> sluice_host::Result<()> {
    /// let (g0, g1) = (sluice_host::Gpu::cuda(0)?, sluice_host::Gpu::cuda(1)?);
    /// println!("device 0 to 1: {}", g0.peer_path(&g1)?);   // "direct" on NVLink machines
    /// # Ok(()) }
    /// ```
    pub fn peer_path(&self, other: &Gpu) -> Result<PeerPath> {
        let access = self
            .context()
            .peer_access(other.context())
            .map_err(|error| Error::Device { call: "cuCtxEnablePeerAccess", error })?;
        Ok(match access {
            PeerAccess::Same => PeerPath::SameDevice,
            PeerAccess::Direct => PeerPath::Direct,
            PeerAccess::Staged => PeerPath::Staged,
        })
    }
}

/// What the peer copies between one pair of devices of a [`MultiScope`] did
/// ([`MultiScope::peer_links`]).
///
/// ```
/// let l = sluice_host::PeerLink { from: 0, to: 1, path: sluice_host::PeerPath::Direct, copies: 2, bytes: 1 << 20 };
/// assert_eq!(l.bytes / l.copies, 1 << 19);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PeerLink {
    /// The source device (its index in the scope).
    pub from: usize,
    /// The destination device.
    pub to: usize,
    /// The way the copies went.
    pub path: PeerPath,
    /// How many copies.
    pub copies: u64,
    /// How many bytes, all copies together.
    pub bytes: u64,
}

// ---------------------------------------------------------------------------------------
// Collectives

/// A reduction of a collective ([`MultiScope::all_reduce`], [`MultiScope::reduce_scatter`]),
/// element by element over the ranks.
///
/// ```
/// assert_eq!(sluice_host::ReduceOp::Max.to_string(), "max");
/// ```
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ReduceOp {
    /// The sum (integers wrap, as NCCL's).
    Sum,
    /// The product (integers wrap).
    Prod,
    /// The largest.
    Max,
    /// The smallest.
    Min,
}

impl ReduceOp {
    fn nccl(self) -> i32 {
        match self {
            ReduceOp::Sum => nccl::op::SUM,
            ReduceOp::Prod => nccl::op::PROD,
            ReduceOp::Max => nccl::op::MAX,
            ReduceOp::Min => nccl::op::MIN,
        }
    }
}

impl std::fmt::Display for ReduceOp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            ReduceOp::Sum => "sum",
            ReduceOp::Prod => "prod",
            ReduceOp::Max => "max",
            ReduceOp::Min => "min",
        })
    }
}

/// Element types the reducing collectives take: those NCCL reduces (`i8`, `u8`, `i32`,
/// `u32`, `i64`, `u64`, `f32`, `f64`). Broadcast and all-gather take any [`Pod`] type
/// (they move bytes).
///
/// ```
/// fn sums<T: sluice_host::Reducible>() {}
/// sums::<f32>();
/// sums::<u64>();
/// ```
#[diagnostic::on_unimplemented(
    message = "NCCL cannot reduce `{Self}`",
    label = "not an element type NCCL reduces",
    note = "the reducing collectives (all-reduce, reduce-scatter) take i8, u8, i32, u32, i64, u64, f32 and f64; broadcast and all-gather take any `Pod` type"
)]
pub trait Reducible: Pod + sealed::Sealed {
    #[doc(hidden)]
    const NCCL_TYPE: i32;
    #[doc(hidden)]
    fn combine(op: ReduceOp, a: Self, b: Self) -> Self;
}

/// `Reducible` for NCCL's element types; `add` and `mul` as NCCL computes them (integers
/// wrap, floats round), for the CPU backend's host loops.
macro_rules! reducible {
    ($add:ident, $mul:ident: $($t:ty => $code:ident),*) => {$(
        impl sealed::Sealed for $t {}
        impl Reducible for $t {
            const NCCL_TYPE: i32 = nccl::dtype::$code;
            fn combine(op: ReduceOp, a: Self, b: Self) -> Self {
                match op {
                    ReduceOp::Sum => a.$add(b),
                    ReduceOp::Prod => a.$mul(b),
                    ReduceOp::Max => a.max(b),
                    ReduceOp::Min => a.min(b),
                }
            }
        }
    )*};
}
reducible!(wrapping_add, wrapping_mul: i8 => INT8, u8 => UINT8, i32 => INT32, u32 => UINT32, i64 => INT64, u64 => UINT64);
reducible!(add, mul: f32 => FLOAT32, f64 => FLOAT64);

/// A group of NCCL communicators, one rank per device, in one process: what the
/// collectives of a [`MultiScope`] run through. On the CPU backend, the same collectives
/// run as host loops on the lanes (no NCCL).
///
/// Making one is slow (NCCL connects every pair of GPUs and allocates its buffers on each:
/// hundreds of milliseconds): make it once, outside the scopes, and use it in many. It must
/// outlive the scopes that use it (collectives borrow it for the scope). Dropping it
/// destroys the communicators (`ncclCommDestroy`).
///
/// NCCL is loaded at the first `Communicator::new` (see [`Communicator::nccl_version`] for
/// where it is looked for); `NCCL_NVLS_ENABLE=0` is set first unless the environment
/// sets it.
///
/// ```
/// # fn main() -> sluice_host::Result<()> {
/// let gpus = [sluice_host::Gpu::cpu(), sluice_host::Gpu::cpu()];
/// let comm = sluice_host::Communicator::new(&gpus)?;
/// assert_eq!(comm.ranks(), 2);
/// # Ok(()) }
/// ```
pub struct Communicator {
    gpus: Vec<Gpu>,
    kind: CommKind,
}

enum CommKind {
    Cuda { lib: &'static nccl::Lib, comms: Vec<RawComm> },
    Cpu,
}

impl Communicator {
    /// One rank per device of `gpus`, rank `i` on `gpus[i]` (`ncclCommInitAll`; on the CPU
    /// backend, host loops).
    ///
    /// # Errors
    /// [`Error::Devices`] for no device, mixed backends, or a CUDA device given twice (NCCL
    /// runs one rank per GPU); [`Error::NcclUnavailable`] (naming where it looked) if NCCL
    /// cannot be loaded; [`Error::Nccl`] if NCCL fails; [`Error::ContextLost`].
    ///
    /// ```no_run
    /// # fn main() -> sluice_host::Result<()> {
    /// let gpus: Vec<_> = (0..sluice_host::Gpu::count()?).map(sluice_host::Gpu::cuda).collect::<Result<_, _>>()?;
    /// let comm = sluice_host::Communicator::new(&gpus)?;
    /// println!("{} ranks, NCCL {}", comm.ranks(), sluice_host::Communicator::nccl_version()?);
    /// # Ok(()) }
    /// ```
    pub fn new(gpus: &[Gpu]) -> Result<Communicator> {
        check_devices(gpus)?;
        if gpus[0].backend() == Backend::Cpu {
            return Ok(Communicator { gpus: gpus.to_vec(), kind: CommKind::Cpu });
        }
        let mut ordinals: Vec<i32> = Vec::with_capacity(gpus.len());
        for gpu in gpus {
            if let Some(error) = gpu.context().lost() {
                return Err(Error::ContextLost { error, lane: None, fault: None });
            }
            let o = gpu.info().ordinal as i32;
            if ordinals.contains(&o) {
                return Err(Error::Devices {
                    problem: format!("CUDA device {o} is given twice: NCCL runs one rank per GPU"),
                });
            }
            ordinals.push(o);
        }
        let lib = nccl::lib().map_err(|e| Error::NcclUnavailable { searched: e.searched, reason: e.reason })?;
        let comms = lib.init_all(&ordinals).map_err(nccl_error)?;
        Ok(Communicator { gpus: gpus.to_vec(), kind: CommKind::Cuda { lib, comms } })
    }

    /// How many ranks (devices).
    ///
    /// ```
    /// # let comm = sluice_host::Communicator::new(&[sluice_host::Gpu::cpu()])?;
    /// assert_eq!(comm.ranks(), 1);
    /// # Ok::<(), sluice_host::Error>(())
    /// ```
    pub fn ranks(&self) -> usize {
        self.gpus.len()
    }

    /// The devices, rank order.
    ///
    /// ```
    /// # let comm = sluice_host::Communicator::new(&[sluice_host::Gpu::cpu()])?;
    /// assert_eq!(comm.gpus().len(), 1);
    /// # Ok::<(), sluice_host::Error>(())
    /// ```
    pub fn gpus(&self) -> &[Gpu] {
        &self.gpus
    }

    /// Whether the collectives run through NCCL (CUDA devices) or as host loops (the CPU
    /// backend).
    ///
    /// ```
    /// # let comm = sluice_host::Communicator::new(&[sluice_host::Gpu::cpu()])?;
    /// assert!(!comm.uses_nccl());
    /// # Ok::<(), sluice_host::Error>(())
    /// ```
    pub fn uses_nccl(&self) -> bool {
        matches!(self.kind, CommKind::Cuda { .. })
    }

    /// Loads NCCL if it is not yet, and returns its version (`major * 10000 + minor * 100 +
    /// patch`: 22105 for 2.21.5). NCCL is looked for, in order: in `SLUICE_NCCL` (a path; if
    /// set, nowhere else), as `libnccl.so.2` and `libnccl.so` through the dynamic loader
    /// (`LD_LIBRARY_PATH`, `ld.so.cache`), then as `nvidia/nccl/lib/libnccl.so.2` in every
    /// Python `site-packages` folder found (`python3`'s, `/usr/lib`, `/usr/local/lib`,
    /// `~/.local/lib`, `$VIRTUAL_ENV`, `$CONDA_PREFIX`, `/opt/conda`) — where PyTorch's pip
    /// package puts it.
    ///
    /// # Errors
    /// [`Error::NcclUnavailable`] with every place tried.
    ///
    /// ```
    /// match sluice_host::Communicator::nccl_version() {
    ///     Ok(v) => println!("NCCL {}.{}.{}", v / 10000, v / 100 % 100, v % 100),
    ///     Err(e) => println!("{e}"), // says where it looked
    /// }
    /// ```
    pub fn nccl_version() -> Result<u32> {
        let lib = nccl::lib().map_err(|e| Error::NcclUnavailable { searched: e.searched, reason: e.reason })?;
        lib.version().map_err(nccl_error)
    }

    /// Where NCCL was loaded from (loading it if it is not yet).
    ///
    /// # Errors
    /// [`Error::NcclUnavailable`] with every place tried.
    ///
    /// ```
    /// if let Ok(path) = sluice_host::Communicator::nccl_path() {
    ///     println!("NCCL from {path}");
    /// }
    /// ```
    pub fn nccl_path() -> Result<String> {
        let lib = nccl::lib().map_err(|e| Error::NcclUnavailable { searched: e.searched, reason: e.reason })?;
        Ok(lib.path().to_string())
    }
}

impl Drop for Communicator {
    fn drop(&mut self) {
        if let CommKind::Cuda { lib, comms } = &self.kind {
            for (gpu, comm) in self.gpus.iter().zip(comms) {
                if gpu.context().is_dead() {
                    continue; // the device was reset: NCCL's resources went with its context
                }
                // SAFETY: made by `init_all`, destroyed once (here); collectives borrow the
                // communicator for their scope, which joined every lane that used it.
                if let Err(e) = unsafe { lib.destroy(*comm) } {
                    gpu.record_error(nccl_error(e));
                }
            }
        }
    }
}

impl std::fmt::Debug for Communicator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Communicator").field("ranks", &self.gpus.len()).field("nccl", &self.uses_nccl()).finish()
    }
}

fn nccl_error(e: nccl::NcclError) -> Error {
    Error::Nccl { call: e.call, code: e.code, message: e.message }
}

/// One lane's part of a collective: its input and output, bound on that lane. Made on the
/// lane ([`Stream::rank`], [`Stream::rank_in_place`], [`Stream::rank_receive`]), given to a
/// collective of the [`MultiScope`], which enqueues the lane's NCCL call there and hands the
/// output back behind a fence recorded after it.
///
/// ```
/// # let gpus = [sluice_host::Gpu::cpu()];
/// sluice_host::scope_multi(&gpus, |s| s.device(0, |d| {
///     let m = d.alloc_buffer::<f32>(16)?;
///     let rank = d.lane()?.enter(|st| {
///         let mut v = st.bind(m.as_columns_mut());
///         st.zero(&mut v)?;
///         st.rank_in_place(v)
///     })?;
///     assert_eq!(rank.len(), 16);
///     Ok(())
/// }))?;
/// # Ok::<(), sluice_host::Error>(())
/// ```
pub struct Rank<'scope, T> {
    lane: Lane<'scope>,
    /// The input (`None`: a receiving rank of a broadcast).
    send: Option<Span>,
    /// The output.
    recv: Span,
    /// The input and output are one buffer.
    in_place: bool,
    /// The input read and the output written for the scope, as the views they came from.
    _borrow: PhantomData<(&'scope [T], &'scope mut [T])>,
}

impl<T> Rank<'_, T> {
    /// Elements of the output.
    ///
    /// ```
    /// # let gpus = [sluice_host::Gpu::cpu()];
    /// # sluice_host::scope_multi(&gpus, |s| s.device(0, |d| {
    /// # let m = d.alloc_buffer::<u8>(3)?;
    /// let rank = d.lane()?.enter(|st| st.rank_receive(st.bind(m.as_columns_mut())))?;
    /// assert_eq!(rank.len(), 3);
    /// # Ok(()) }))?;
    /// # Ok::<(), sluice_host::Error>(())
    /// ```
    pub fn len(&self) -> usize {
        self.recv.len()
    }

    /// Always false: ranks of zero elements are refused.
    ///
    /// ```
    /// # let gpus = [sluice_host::Gpu::cpu()];
    /// # sluice_host::scope_multi(&gpus, |s| s.device(0, |d| {
    /// # let m = d.alloc_buffer::<u8>(3)?;
    /// let rank = d.lane()?.enter(|st| st.rank_receive(st.bind(m.as_columns_mut())))?;
    /// assert!(!rank.is_empty());
    /// # Ok(()) }))?;
    /// # Ok::<(), sluice_host::Error>(())
    /// ```
    pub fn is_empty(&self) -> bool {
        self.recv.len() == 0
    }
}

impl<T> std::fmt::Debug for Rank<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Rank")
            .field("lane", &self.lane.id())
            .field("send", &self.send.map(|s| s.len()))
            .field("recv", &self.recv.len())
            .field("in_place", &self.in_place)
            .finish()
    }
}

/// Checks a rank's buffer: not empty, contiguous (NCCL takes flat buffers), this lane's
/// device's memory.
fn check_rank_span(st: &Stream<'_, '_>, s: &Span) -> Result<()> {
    if s.len() == 0 {
        return Err(Error::ZeroSized);
    }
    if s.cols > 1 && s.ld != s.rows {
        return Err(Error::Collective {
            op: "rank",
            problem: format!(
                "the view's {} columns are padded (ld {} > rows {}): a collective needs one contiguous buffer",
                s.cols, s.ld, s.rows
            ),
        });
    }
    if s.ctx != st.gpu().ctx_id() {
        return Err(Error::WrongDevice { what: "rank" });
    }
    Ok(())
}

impl<'scope, 'lane> Stream<'scope, 'lane> {
    /// This lane's part of a collective: it reads `send` and writes `recv`, both views on
    /// this lane (so their earlier work on the lane comes first, and any other lane's is
    /// awaited already). `recv` is handed back by the collective, behind a fence.
    ///
    /// # Errors
    /// [`Error::ZeroSized`]; [`Error::Collective`] for padded (non-contiguous) columns;
    /// [`Error::WrongDevice`] for memory of another device than this lane's.
    ///
    /// ```
    /// # fn main() -> sluice_host::Result<()> {
    /// let gpus = [sluice_host::Gpu::cpu(), sluice_host::Gpu::cpu()];
    /// let comm = sluice_host::Communicator::new(&gpus)?;
    /// let x = [1.5f32; 8];
    /// sluice_host::scope_multi(&gpus, |s| {
    ///     let ranks = s.each_device(|d| {
    ///         let (input, out) = (d.upload(&x)?, d.alloc_buffer::<f32>(8)?);
    ///         d.lane()?.enter(|st| {
    ///             let send = st.await_fence(&input)?;
    ///             st.rank(send, st.bind(out.as_columns_mut()))
    ///         })
    ///     })?;
    ///     let _sums = s.all_reduce(&comm, sluice_host::ReduceOp::Sum, ranks)?; // 3.0 everywhere
    ///     Ok(())
    /// })
    /// # }
    /// ```
    pub fn rank<T: Pod>(
        &self,
        send: ColumnView<'scope, 'lane, T>,
        recv: ColumnViewMut<'scope, 'lane, T>,
    ) -> Result<Rank<'scope, T>> {
        let (s, r) = (send.span(), recv.span());
        check_rank_span(self, &s)?;
        check_rank_span(self, &r)?;
        Ok(Rank { lane: self.lane(), send: Some(s), recv: r, in_place: false, _borrow: PhantomData })
    }

    /// This lane's part of a collective that reads and writes `data` (an in-place
    /// all-reduce, or the root of an in-place broadcast).
    ///
    /// # Errors
    /// As [`rank`](Stream::rank).
    ///
    /// ```
    /// # let gpus = [sluice_host::Gpu::cpu()];
    /// sluice_host::scope_multi(&gpus, |s| s.device(0, |d| {
    ///     let m = d.alloc_buffer::<u32>(4)?;
    ///     let rank = d.lane()?.enter(|st| st.rank_in_place(st.bind(m.as_columns_mut())))?;
    ///     assert_eq!(rank.len(), 4);
    ///     Ok(())
    /// }))?;
    /// # Ok::<(), sluice_host::Error>(())
    /// ```
    pub fn rank_in_place<T: Pod>(&self, data: ColumnViewMut<'scope, 'lane, T>) -> Result<Rank<'scope, T>> {
        let d = data.span();
        check_rank_span(self, &d)?;
        Ok(Rank { lane: self.lane(), send: Some(d), recv: d, in_place: true, _borrow: PhantomData })
    }

    /// This lane's part of a broadcast on a rank other than the root: it only receives.
    ///
    /// # Errors
    /// As [`rank`](Stream::rank).
    ///
    /// ```
    /// # let gpus = [sluice_host::Gpu::cpu()];
    /// sluice_host::scope_multi(&gpus, |s| s.device(0, |d| {
    ///     let m = d.alloc_buffer::<u32>(4)?;
    ///     d.lane()?.enter(|st| st.rank_receive(st.bind(m.as_columns_mut())))?;
    ///     Ok(())
    /// }))?;
    /// # Ok::<(), sluice_host::Error>(())
    /// ```
    pub fn rank_receive<T: Pod>(&self, recv: ColumnViewMut<'scope, 'lane, T>) -> Result<Rank<'scope, T>> {
        let r = recv.span();
        check_rank_span(self, &r)?;
        Ok(Rank { lane: self.lane(), send: None, recv: r, in_place: false, _borrow: PhantomData })
    }
}

/// Which collective, with its parameter.
#[derive(Clone, Copy, Debug)]
enum Kind {
    AllReduce(ReduceOp),
    Broadcast(usize),
    AllGather,
    ReduceScatter(ReduceOp),
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::AllReduce(_) => "all_reduce",
            Kind::Broadcast(_) => "broadcast",
            Kind::AllGather => "all_gather",
            Kind::ReduceScatter(_) => "reduce_scatter",
        }
    }
}

impl<'scope, 'env> MultiScope<'scope, 'env> {
    /// All-reduce: every rank's output gets the element-wise `op` of every rank's input
    /// (`ncclAllReduce`). One rank per device of `comm`, in its order; inputs and outputs of
    /// one length. Returns each rank's output as a hand-off on its lane (rank order), to be
    /// awaited on its device (unbranded: [`Device::adopt`] brands it, checked).
    ///
    /// Each rank's NCCL call is enqueued on its lane — after everything enqueued there
    /// before, so the input's earlier writes and awaited fences come first — and all ranks'
    /// calls are issued in one `ncclGroupStart`/`ncclGroupEnd` from this thread.
    ///
    /// # Errors
    /// [`Error::Collective`] if the ranks do not fit (count, devices, lengths; nothing is
    /// enqueued); [`Error::Nccl`].
    ///
    /// ```
    /// # fn main() -> sluice_host::Result<()> {
    /// let gpus = [sluice_host::Gpu::cpu(), sluice_host::Gpu::cpu()];
    /// let comm = sluice_host::Communicator::new(&gpus)?;
    /// let data = [vec![1i64, 5], vec![4, -2]];
    /// let mut host = gpus[1].pinned_buffer::<i64>(2)?;
    /// sluice_host::scope_multi(&gpus, |s| {
    ///     let ranks = s.each_device(|d| {
    ///         let m = d.alloc_buffer::<i64>(2)?;
    ///         d.lane()?.enter(|st| {
    ///             let mut v = st.bind(m.as_columns_mut());
    ///             st.copy_to_device(&data[d.index()], &mut v)?;
    ///             st.rank_in_place(v)
    ///         })
    ///     })?;
    ///     let mut out = s.all_reduce(&comm, sluice_host::ReduceOp::Max, ranks)?;
    ///     let last = out.pop().unwrap();
    ///     s.device(1, |d| {
    ///         let v = d.adopt(last)?;
    ///         d.lane()?.enter(|st| st.copy_to_host(&st.await_fence(v)?, host.as_pinned_mut())).map(drop)
    ///     })
    /// })?;
    /// assert_eq!(&host[..], &[4, 5]);
    /// # Ok(()) }
    /// ```
    pub fn all_reduce<T: Reducible>(
        &'scope self,
        comm: &'scope Communicator,
        op: ReduceOp,
        ranks: Vec<Rank<'scope, T>>,
    ) -> Result<Vec<Fenced<'scope, ColumnsMut<'scope, T>>>> {
        self.collective(comm, Kind::AllReduce(op), Some(T::NCCL_TYPE), Some(combiner::<T>(op)), ranks)
    }

    /// Broadcast: every rank's output gets the input of rank `root` (`ncclBroadcast`). The
    /// root gives an input ([`Stream::rank`] or [`Stream::rank_in_place`]); the others may
    /// only receive ([`Stream::rank_receive`]). Any [`Pod`] element type.
    ///
    /// # Errors
    /// As [`all_reduce`](MultiScope::all_reduce); a root out of range or without an input.
    ///
    /// ```
    /// # fn main() -> sluice_host::Result<()> {
    /// let gpus = [sluice_host::Gpu::cpu(), sluice_host::Gpu::cpu()];
    /// let comm = sluice_host::Communicator::new(&gpus)?;
    /// let data = [9u16; 8];
    /// sluice_host::scope_multi(&gpus, |s| {
    ///     let ranks = s.each_device(|d| {
    ///         let m = d.alloc_buffer::<u16>(8)?;
    ///         d.lane()?.enter(|st| {
    ///             let mut v = st.bind(m.as_columns_mut());
    ///             if d.index() == 0 {
    ///                 st.copy_to_device(&data, &mut v)?;
    ///                 st.rank_in_place(v)
    ///             } else {
    ///                 st.rank_receive(v)
    ///             }
    ///         })
    ///     })?;
    ///     let copies = s.broadcast(&comm, 0, ranks)?;    // device 1 gets device 0's data
    ///     assert_eq!(copies.len(), 2);
    ///     Ok(())
    /// })
    /// # }
    /// ```
    pub fn broadcast<T: Pod>(
        &'scope self,
        comm: &'scope Communicator,
        root: usize,
        ranks: Vec<Rank<'scope, T>>,
    ) -> Result<Vec<Fenced<'scope, ColumnsMut<'scope, T>>>> {
        self.collective(comm, Kind::Broadcast(root), None, None, ranks)
    }

    /// All-gather: every rank's output (`n * ranks` elements) gets every rank's input (`n`
    /// elements), in rank order (`ncclAllGather`). Inputs and outputs are separate buffers.
    /// Any [`Pod`] element type.
    ///
    /// # Errors
    /// As [`all_reduce`](MultiScope::all_reduce).
    ///
    /// ```
    /// # fn main() -> sluice_host::Result<()> {
    /// let gpus = [sluice_host::Gpu::cpu(), sluice_host::Gpu::cpu()];
    /// let comm = sluice_host::Communicator::new(&gpus)?;
    /// let parts = [[1u8, 2], [3, 4]];
    /// let mut host = gpus[0].pinned_buffer::<u8>(4)?;
    /// sluice_host::scope_multi(&gpus, |s| {
    ///     let ranks = s.each_device(|d| {
    ///         let (input, out) = (d.upload(&parts[d.index()])?, d.alloc_buffer::<u8>(4)?);
    ///         d.lane()?.enter(|st| st.rank(st.await_fence(&input)?, st.bind(out.as_columns_mut())))
    ///     })?;
    ///     let mut all = s.all_gather(&comm, ranks)?;
    ///     let first = all.remove(0);
    ///     s.device(0, |d| d.lane()?.enter(|st| {
    ///         st.copy_to_host(&st.await_fence(d.adopt(first)?)?, host.as_pinned_mut()).map(drop)
    ///     }))
    /// })?;
    /// assert_eq!(&host[..], &[1, 2, 3, 4]);
    /// # Ok(()) }
    /// ```
    pub fn all_gather<T: Pod>(
        &'scope self,
        comm: &'scope Communicator,
        ranks: Vec<Rank<'scope, T>>,
    ) -> Result<Vec<Fenced<'scope, ColumnsMut<'scope, T>>>> {
        self.collective(comm, Kind::AllGather, None, None, ranks)
    }

    /// Reduce-scatter: the inputs (`n * ranks` elements each) are reduced element-wise with
    /// `op`, and rank `r`'s output (`n` elements) gets block `r` of the result
    /// (`ncclReduceScatter`). Inputs and outputs are separate buffers.
    ///
    /// # Errors
    /// As [`all_reduce`](MultiScope::all_reduce).
    ///
    /// ```
    /// # fn main() -> sluice_host::Result<()> {
    /// let gpus = [sluice_host::Gpu::cpu(), sluice_host::Gpu::cpu()];
    /// let comm = sluice_host::Communicator::new(&gpus)?;
    /// let inputs = [[1u32, 2, 3, 4], [10, 20, 30, 40]];
    /// let mut host = gpus[1].pinned_buffer::<u32>(2)?;
    /// sluice_host::scope_multi(&gpus, |s| {
    ///     let ranks = s.each_device(|d| {
    ///         let (input, out) = (d.upload(&inputs[d.index()])?, d.alloc_buffer::<u32>(2)?);
    ///         d.lane()?.enter(|st| st.rank(st.await_fence(&input)?, st.bind(out.as_columns_mut())))
    ///     })?;
    ///     let mut blocks = s.reduce_scatter(&comm, sluice_host::ReduceOp::Sum, ranks)?;
    ///     let second = blocks.pop().unwrap();
    ///     s.device(1, |d| d.lane()?.enter(|st| {
    ///         st.copy_to_host(&st.await_fence(d.adopt(second)?)?, host.as_pinned_mut()).map(drop)
    ///     }))
    /// })?;
    /// assert_eq!(&host[..], &[33, 44]);
    /// # Ok(()) }
    /// ```
    pub fn reduce_scatter<T: Reducible>(
        &'scope self,
        comm: &'scope Communicator,
        op: ReduceOp,
        ranks: Vec<Rank<'scope, T>>,
    ) -> Result<Vec<Fenced<'scope, ColumnsMut<'scope, T>>>> {
        self.collective(comm, Kind::ReduceScatter(op), Some(T::NCCL_TYPE), Some(combiner::<T>(op)), ranks)
    }

    /// Checks the ranks against `kind` and `comm`, enqueues every rank's part, and fences each
    /// output on its lane. `dtype`: NCCL's element type (`None`: bytes, for the
    /// non-reducing collectives).
    fn collective<T: Pod>(
        &'scope self,
        comm: &'scope Communicator,
        kind: Kind,
        dtype: Option<i32>,
        combine: Option<fn(T, T) -> T>,
        ranks: Vec<Rank<'scope, T>>,
    ) -> Result<Vec<Fenced<'scope, ColumnsMut<'scope, T>>>> {
        let n = check_collective(comm, kind, &ranks)?;
        // In a traced scope, each rank's part is bracketed by timing events on its lane.
        let mut opens = Vec::with_capacity(ranks.len());
        for r in &ranks {
            let shared = r.lane.shared;
            opens.push(match shared.recorder() {
                Some(rec) => Some(rec.begin(&shared.gpu, &r.lane.inner.stream)?),
                None => None,
            });
        }
        let enqueued = match &comm.kind {
            CommKind::Cuda { lib, comms } => enqueue_nccl(lib, comms, kind, dtype, n, &ranks),
            CommKind::Cpu => enqueue_cpu(kind, combine, n, &ranks),
        };
        // One operation on every rank's lane, counted as `Stream::traced` counts its own, failed
        // or not (a fence recorded before it must not make a join think the lane idle).
        for r in &ranks {
            r.lane.inner.enqueued.fetch_add(1, Ordering::AcqRel);
        }
        enqueued?;
        for (r, open) in ranks.iter().zip(opens) {
            if let (Some(open), Some(rec)) = (open, r.lane.shared.recorder()) {
                let name = collective_name(kind, n, std::any::type_name::<T>(), r, ranks.len());
                rec.end(&r.lane.shared.gpu, &r.lane.inner.stream, open, r.lane.id(), SpanKind::Collective, name)?;
            }
        }
        ranks
            .iter()
            .map(|r| {
                r.lane.inner.launches.fetch_add(1, Ordering::Relaxed);
                // The output, behind a fence after the collective: the only way out.
                Stream::new(r.lane).fence(ColumnViewMut::<T>::new(r.recv))
            })
            .collect()
    }
}

/// Every rank's NCCL call, in one group from this thread.
fn enqueue_nccl<T: Pod>(
    lib: &nccl::Lib,
    comms: &[RawComm],
    kind: Kind,
    dtype: Option<i32>,
    n: usize,
    ranks: &[Rank<'_, T>],
) -> Result<()> {
    let es = std::mem::size_of::<T>();
    // NCCL's element type, and the count in its elements: bytes for the collectives that
    // only move data.
    let (dtype, unit) = match dtype {
        Some(d) => (d, 1),
        None => (nccl::dtype::UINT8, es),
    };
    lib.group_start().map_err(nccl_error)?;
    let mut issued = Ok(());
    for (r, comm) in ranks.iter().zip(comms) {
        let Some(stream) = r.lane.inner.stream.raw_cuda() else {
            issued = Err(Error::Collective { op: kind.name(), problem: "a rank's lane is not a CUDA lane".into() });
            break;
        };
        let send = r.send.map_or(r.recv.ptr, |s| s.ptr);
        // SAFETY: each rank's communicator is of the device its lane runs on (checked in
        // `check_collective`), and the stream is alive (the lane is the scope's until it
        // joins). Both buffers are that device's memory (checked when the rank was made),
        // contiguous, of the lengths the operation reads and writes (checked in
        // `check_collective`); they were views bound to this lane, borrowed for the scope,
        // which joins every device's lanes before any memory is freed. The output is held
        // exclusively by the rank (then by the hand-off fenced after this call); the input
        // is only read.
        let r = unsafe {
            match kind {
                Kind::AllReduce(op) => lib.all_reduce(send, r.recv.ptr, n * unit, dtype, op.nccl(), *comm, stream),
                Kind::Broadcast(root) => lib.broadcast(send, r.recv.ptr, n * unit, dtype, root as i32, *comm, stream),
                Kind::AllGather => lib.all_gather(send, r.recv.ptr, n * unit, dtype, *comm, stream),
                Kind::ReduceScatter(op) => {
                    lib.reduce_scatter(send, r.recv.ptr, n * unit, dtype, op.nccl(), *comm, stream)
                }
            }
        };
        if let Err(e) = r {
            issued = Err(nccl_error(e));
            break;
        }
    }
    // The group is ended whatever happened: NCCL's group state is per thread.
    let ended = lib.group_end().map_err(nccl_error);
    issued?;
    ended?;
    Ok(())
}

fn collective_name<T>(kind: Kind, n: usize, elem: &str, r: &Rank<'_, T>, k: usize) -> String {
    let what = match kind {
        Kind::AllReduce(op) => format!("all_reduce {op}"),
        Kind::Broadcast(root) => format!("broadcast from rank {root}"),
        Kind::AllGather => "all_gather".to_string(),
        Kind::ReduceScatter(op) => format!("reduce_scatter {op}"),
    };
    format!("{what}, {n} x {elem}, {} of {k} ranks", r.lane.id())
}

/// The element-wise reduction of `op` for `T`.
fn combiner<T: Reducible>(op: ReduceOp) -> fn(T, T) -> T {
    match op {
        ReduceOp::Sum => |a, b| T::combine(ReduceOp::Sum, a, b),
        ReduceOp::Prod => |a, b| T::combine(ReduceOp::Prod, a, b),
        ReduceOp::Max => |a, b| T::combine(ReduceOp::Max, a, b),
        ReduceOp::Min => |a, b| T::combine(ReduceOp::Min, a, b),
    }
}

/// Checks `ranks` against `kind` and `comm` before anything is enqueued; returns `n`, the
/// count NCCL is given (the per-rank block for all-gather and reduce-scatter).
fn check_collective<T>(comm: &Communicator, kind: Kind, ranks: &[Rank<'_, T>]) -> Result<usize> {
    let op = kind.name();
    let bad = |problem: String| Err(Error::Collective { op, problem });
    let k = comm.ranks();
    if ranks.len() != k {
        return bad(format!("{} ranks given for a communicator of {k}", ranks.len()));
    }
    for (i, (r, gpu)) in ranks.iter().zip(&comm.gpus).enumerate() {
        let lane_gpu = &r.lane.shared.gpu;
        if lane_gpu.backend() != gpu.backend() || (comm.uses_nccl() && lane_gpu.ctx_id() != gpu.ctx_id()) {
            return bad(format!(
                "rank {i} runs on a lane of {} (device {}), but the communicator's rank {i} is {} (device {})",
                lane_gpu.info().name,
                lane_gpu.info().ordinal,
                gpu.info().name,
                gpu.info().ordinal
            ));
        }
    }
    let recv = ranks[0].recv.len();
    if ranks.iter().any(|r| r.recv.len() != recv) {
        return bad("the outputs have different lengths".into());
    }
    let needs_input = |r: &Rank<'_, T>| -> Result<usize> {
        r.send.map(|s| s.len()).ok_or(Error::Collective { op, problem: "a rank without an input".into() })
    };
    match kind {
        Kind::AllReduce(_) => {
            for r in ranks {
                if needs_input(r)? != recv {
                    return bad("input and output lengths differ".into());
                }
            }
            Ok(recv)
        }
        Kind::Broadcast(root) => {
            let Some(r) = ranks.get(root) else { return bad(format!("root {root} of {k} ranks")) };
            if needs_input(r)? != recv {
                return bad("the root's input and the outputs have different lengths".into());
            }
            Ok(recv)
        }
        Kind::AllGather | Kind::ReduceScatter(_) => {
            let gather = matches!(kind, Kind::AllGather);
            let (per_in, per_out) = if gather { (recv / k, recv) } else { (recv * k, recv) };
            if gather && !recv.is_multiple_of(k) {
                return bad(format!("outputs of {recv} elements are not {k} equal blocks"));
            }
            for r in ranks {
                if r.in_place {
                    return bad("in place: give the input and the output as separate buffers".into());
                }
                if needs_input(r)? != per_in {
                    return bad(format!(
                        "inputs of {} elements for outputs of {per_out} over {k} ranks (want {per_in})",
                        r.send.map_or(0, |s| s.len())
                    ));
                }
            }
            Ok(if gather { per_in } else { per_out })
        }
    }
}

/// An address moved into a CPU operation (it runs on a lane's worker thread).
#[derive(Clone, Copy)]
struct Addr(u64);

/// The CPU backend's collective: rank 0's lane waits for every other rank's lane (a fence
/// each), runs the whole collective as one host operation, and every other lane waits for
/// it (a fence). The same order as NCCL's: each rank's inputs before, its outputs after.
fn enqueue_cpu<T: Pod>(kind: Kind, combine: Option<fn(T, T) -> T>, n: usize, ranks: &[Rank<'_, T>]) -> Result<()> {
    let first = Stream::new(ranks[0].lane);
    for r in &ranks[1..] {
        let ready = Stream::new(r.lane).record()?;
        first.await_fence(&ready)?;
    }
    let parts: Vec<(Option<Addr>, Addr, usize, usize)> = ranks
        .iter()
        .map(|r| (r.send.map(|s| Addr(s.ptr)), Addr(r.recv.ptr), r.send.map_or(0, |s| s.len()), r.recv.len()))
        .collect();
    let work: crate::cpu::Work = Arc::new(move || {
        // SAFETY: every address is a rank's buffer of the length given, alive for the scope
        // (the views it came from borrowed it for 'scope); every rank's lane has reached this
        // point (rank 0's lane waited for each) and waits for this operation before its later
        // work, so no lane touches them meanwhile; inputs are read into copies first, so an
        // in-place rank's output may alias its input.
        let read = |a: Addr, len: usize| unsafe { std::slice::from_raw_parts(a.0 as usize as *const T, len) }.to_vec();
        let inputs: Vec<Vec<T>> =
            parts.iter().map(|(s, _, len, _)| s.map(|s| read(s, *len)).unwrap_or_default()).collect();
        let reduce = |block: usize| -> Vec<T> {
            let f = combine.expect("a reducing collective has a combiner");
            (0..n)
                .map(|i| inputs[1..].iter().fold(inputs[0][block * n + i], |acc, x| f(acc, x[block * n + i])))
                .collect()
        };
        for (r, (_, recv, _, len)) in parts.iter().enumerate() {
            let out: Vec<T> = match kind {
                Kind::AllReduce(_) => reduce(0),
                Kind::Broadcast(root) => inputs[root].clone(),
                Kind::AllGather => inputs.iter().flatten().copied().collect(),
                Kind::ReduceScatter(_) => reduce(r),
            };
            debug_assert_eq!(out.len(), *len);
            // SAFETY: `recv` is rank r's output, `len` elements, held by the collective (see
            // above); `out` holds exactly `len` (checked before anything was enqueued).
            unsafe { std::ptr::copy_nonoverlapping(out.as_ptr(), recv.0 as usize as *mut T, out.len().min(*len)) };
        }
        Ok(())
    });
    first.handle().enqueue_host(work).map_err(|error| Error::Stream { call: "enqueue (CPU collective)", error })?;
    let done = first.record()?;
    for r in &ranks[1..] {
        Stream::new(r.lane).await_fence(&done)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn multi_types_cross_threads() {
        fn assert<T: Send + Sync>() {}
        assert::<MultiScope<'static, 'static>>();
        assert::<Device<'static, 'static, 'static>>();
        assert::<DeviceLane<'static, 'static>>();
        assert::<DeviceStream<'static, 'static, 'static>>();
        assert::<OnDevice<'static, ColumnsMut<'static, f32>>>();
        assert::<Rank<'static, f32>>();
        assert::<Communicator>();
    }

    #[test]
    fn combiners_reduce_like_nccl() {
        assert_eq!(combiner::<u8>(ReduceOp::Sum)(250, 10), 4); // wraps
        assert_eq!(combiner::<i32>(ReduceOp::Min)(-3, 2), -3);
        assert_eq!(combiner::<f64>(ReduceOp::Prod)(1.5, 4.0), 6.0);
        assert_eq!(combiner::<f32>(ReduceOp::Max)(1.5, 4.0), 4.0);
    }

    #[test]
    fn empty_and_mixed_device_sets_are_refused() {
        assert!(matches!(scope_multi(&[], |_| Ok(())), Err(Error::Devices { .. })));
        assert!(matches!(Communicator::new(&[]), Err(Error::Devices { .. })));
    }
}
