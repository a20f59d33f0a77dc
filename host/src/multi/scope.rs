//! The multi-GPU scope: [`scope_multi`] runs one [`Scope`] per device and ends them
//! together — every lane of every device joined before any device's memory is freed.

use std::marker::PhantomData;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::Mutex;

use super::peer::{PeerLink, PeerPath};
use crate::device::Gpu;
use crate::error::{Error, Result};
use crate::scope::Scope;
use crate::span::Span;
use crate::trace::Trace;
use crate::view::Invariant;

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
/// # use sluice_host as sluice;
/// # fn main() -> sluice::Result<()> {
/// let gpus = [sluice::Gpu::cpu(), sluice::Gpu::cpu()];
/// let lanes = sluice::scope_multi(&gpus, |s| {
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
/// # use sluice_host as sluice;
/// # fn main() -> sluice::Result<()> {
/// # let gpus = [sluice::Gpu::cpu(), sluice::Gpu::cpu()];
/// sluice::scope_multi(&gpus, |s| {
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
/// # use sluice_host as sluice;
/// # fn main() -> sluice::Result<()> {
/// let gpus = [sluice::Gpu::cpu(), sluice::Gpu::cpu()];
/// let ((), traces) = sluice::traced_scope_multi(&gpus, |s| {
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
pub(super) fn check_devices(gpus: &[Gpu]) -> Result<()> {
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
            return Err(Error::ContextLost { error, lane: None, fault: None, kernels: Vec::new() });
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
/// # use sluice_host as sluice;
/// # fn main() -> sluice::Result<()> {
/// let gpus = [sluice::Gpu::cpu(), sluice::Gpu::cpu()];
/// sluice::scope_multi(&gpus, |s| {
///     assert_eq!(s.len(), 2);
///     s.device(1, |dev| { assert_eq!(dev.index(), 1); Ok(()) })
/// })
/// # }
/// ```
pub struct MultiScope<'scope, 'env: 'scope> {
    /// One scope per device, in the order of the `gpus` given.
    pub(super) scopes: Vec<Scope<'scope, 'env>>,
    pub(super) shared: MultiShared,
    /// Invariant in 'scope, as `Scope`: what is lent out for 'scope must not be taken as
    /// living longer or shorter than the scope.
    _scope: Invariant<'scope>,
    /// Invariant in 'env, as `Scope`.
    _env: Invariant<'env>,
}

/// What every device lane of a multi-GPU scope reaches: the devices, and what the peer
/// copies did.
pub(super) struct MultiShared {
    pub(super) gpus: Vec<Gpu>,
    links: Mutex<Vec<PeerLink>>,
}

impl MultiShared {
    /// The index of the first device whose memory `span` is (two `Gpu`s of one device share
    /// it: the first is named).
    pub(super) fn device_of(&self, span: &Span) -> Option<usize> {
        self.gpus.iter().position(|g| g.ctx_id() == span.ctx)
    }

    pub(super) fn note_copy(&self, from: usize, to: usize, path: PeerPath, bytes: u64) {
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
    /// # use sluice_host as sluice;
    /// # let gpus = [sluice::Gpu::cpu()];
    /// sluice::scope_multi(&gpus, |s| { assert_eq!(s.len(), 1); Ok(()) })?;
    /// # Ok::<(), sluice::Error>(())
    /// ```
    pub fn len(&self) -> usize {
        self.scopes.len()
    }

    /// Always false: a multi-GPU scope has at least one device.
    ///
    /// ```
    /// # use sluice_host as sluice;
    /// # let gpus = [sluice::Gpu::cpu()];
    /// sluice::scope_multi(&gpus, |s| { assert!(!s.is_empty()); Ok(()) })?;
    /// # Ok::<(), sluice::Error>(())
    /// ```
    pub fn is_empty(&self) -> bool {
        self.scopes.is_empty()
    }

    /// The devices, in the order given.
    ///
    /// ```
    /// # use sluice_host as sluice;
    /// # let gpus = [sluice::Gpu::cpu()];
    /// sluice::scope_multi(&gpus, |s| { println!("{}", s.gpus()[0].info().name); Ok(()) })?;
    /// # Ok::<(), sluice::Error>(())
    /// ```
    pub fn gpus(&self) -> &[Gpu] {
        &self.shared.gpus
    }

    /// Which way copies between device `from` and device `to` go (see [`Gpu::peer_path`]).
    ///
    /// # Errors
    /// [`Error::NoDevice`] for an index out of range; the driver's error.
    ///
    /// ```
    /// # use sluice_host as sluice;
    /// # let gpus = [sluice::Gpu::cpu(), sluice::Gpu::cpu()];
    /// sluice::scope_multi(&gpus, |s| {
    ///     assert_eq!(s.peer_path(0, 1)?, sluice::PeerPath::SameDevice); // the CPU backend
    ///     Ok(())
    /// })?;
    /// # Ok::<(), sluice::Error>(())
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
    /// # use sluice_host as sluice;
    /// # fn main() -> sluice::Result<()> {
    /// let gpus = [sluice::Gpu::cpu(), sluice::Gpu::cpu()];
    /// sluice::scope_multi(&gpus, |s| s.device(0, |d0| s.device(1, |d1| {
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
