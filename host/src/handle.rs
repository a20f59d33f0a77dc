//! The handle room: owned driver objects, each freed by its own `Drop` (the role cudarc's
//! `safe` layer plays over its `result` layer).
//!
//! [`driver`](crate::driver) is one thin function per driver call over raw `Copy` handles;
//! this module wraps the handles sluice keeps — the retained primary [`Context`], streams
//! ([`StreamHandle`]), events ([`Event`]), loaded modules ([`Module`]) and their
//! functions ([`FunctionHandle`]) — so that the layers above never hold a raw handle, and
//! every driver call but the device queries and the allocator's pool settings goes
//! through a method here.
//!
//! Each owned handle holds an `Arc<Context>`: the context outlives every stream, event and
//! module made in it, whatever order they are dropped in. A handle whose destruction
//! fails records the error on its context ([`Context::errors`]), where
//! [`Gpu::take_errors`](crate::Gpu::take_errors) and the next scope find it: library code
//! never prints.
//!
//! # Two backends
//!
//! Each handle is a CUDA object or its CPU twin ([`cpu`](crate::cpu)): the layers above
//! never ask which. A CPU handle's "driver error" is one of CUDA's codes with the same
//! meaning (a lane whose kernel panicked reports `CUDA_ERROR_LAUNCH_FAILED` and keeps the
//! message, [`StreamHandle::fault`]).
//!
//! # What stays `unsafe`
//!
//! Creating, recording, waiting and destroying are safe: the handle is alive by
//! construction and the context by its `Arc`. Copies, fills, launches and stream-ordered
//! allocation stay `unsafe fn`s: they hand the driver addresses whose validity and
//! exclusivity only the ownership model above can vouch for.

use std::alloc::Layout;
use std::collections::HashMap;
use std::ffi::{c_void, CStr};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};

use crate::cpu::{
    self, CpuDevice, CpuEntry, CpuEvent, CpuGraph, CpuNode, CpuStream, KernelOp, MemOp, MemParams, Recording,
};
use crate::driver::{
    self,
    mem::{Direction, Span2d},
    module::FuncAttribute,
    DevicePtr, DriverError, RawContext, RawDevice, RawEvent, RawFunction, RawGraph, RawGraphExec, RawGraphNode,
    RawHostPtr, RawModule, RawPool, RawStream,
};
use crate::error::{DeviceFault, Error, ErrorLog, ORPHANED};

/// A device's context: CUDA's retained primary context (released when the last handle made
/// in it is gone), or the CPU backend's device.
pub(crate) struct Context {
    kind: ContextKind,
    /// Errors found while dropping handles of this context (and scopes' cleanup errors that
    /// could not be returned), kept for [`Gpu::take_errors`](crate::Gpu::take_errors).
    errors: ErrorLog,
    /// Pinned host memory: ours (the Rust allocator's), registered with the driver, so that a
    /// lost or reset context can never free memory the host still reads.
    pinned: Mutex<HashMap<usize, Layout>>,
    /// Where a failing kernel of this context records itself (CUDA; `None` where the page
    /// could not be mapped).
    fault: Option<FaultPage>,
    /// The peers whose access this context settled ([`Context::peer_access`]), by their
    /// identities: kept here, so that a released and retained again context settles anew.
    peers: Mutex<Vec<(usize, PeerAccess)>>,
    /// How many times memory of this context was given back (pinned memory unregistered,
    /// device memory freed to the pool): a cached graph whose copy nodes were set under an
    /// older count may name a freed allocation at an address that now holds another one
    /// ([`memory_epoch`](Context::memory_epoch)).
    memory_epoch: AtomicU64,
}

/// One page of host memory mapped for the device, holding the fault record that the device
/// std's `dfail!`/`dassert!` (and its debug panic handler) write before they trap: the
/// failing thread's block, thread and message. Host memory survives the fault that loses
/// the context, so the host reads it afterwards.
struct FaultPage {
    host: std::ptr::NonNull<u8>,
    device: driver::DevicePtr,
}

// SAFETY: the page is written by the device and read by the host with volatile accesses
// only; the pointer itself is never shared mutably.
unsafe impl Send for FaultPage {}
// SAFETY: as for `Send`.
unsafe impl Sync for FaultPage {}

/// The size of the page (the record is its first `FAULT_RECORD_BYTES`).
const FAULT_PAGE: usize = 4096;
/// The record's size, as the device std writes it (`sluice_device::io::FAULT_RECORD_BYTES`).
pub(crate) const FAULT_RECORD_BYTES: usize = 256;
/// The device std's global that holds the record's device address.
pub(crate) const FAULT_RECORD_SYMBOL: &std::ffi::CStr = c"__sluice_fault_record";

impl FaultPage {
    fn layout() -> Layout {
        Layout::from_size_align(FAULT_PAGE, FAULT_PAGE).expect("a page")
    }

    /// A zeroed page, mapped for `raw`'s device; `None` if the driver refuses.
    fn new(raw: RawContext) -> Option<FaultPage> {
        // SAFETY: a non-zero size.
        let host = std::ptr::NonNull::new(unsafe { std::alloc::alloc_zeroed(FaultPage::layout()) })?;
        // SAFETY: `raw` was just retained; the page is ours and lives until `release`.
        match unsafe { driver::mem::host_register_mapped(raw, host.as_ptr().cast(), FAULT_PAGE) } {
            Ok(device) => Some(FaultPage { host, device }),
            Err(_) => {
                // SAFETY: allocated above with this layout, never registered.
                unsafe { std::alloc::dealloc(host.as_ptr(), FaultPage::layout()) };
                None
            }
        }
    }

    /// The record, if a kernel wrote one.
    fn read(&self) -> Option<DeviceFault> {
        let words = self.host.as_ptr().cast::<u32>();
        // SAFETY: the page is live (owned by `self`) and 4096-aligned; the device writes it
        // only through the record's protocol (state last), read here volatile.
        unsafe {
            if words.read_volatile() != 2 {
                return None;
            }
            let w = |i: usize| words.add(i).read_volatile();
            let len = (w(7) as usize).min(FAULT_RECORD_BYTES - 32);
            let bytes: Vec<u8> = (0..len).map(|i| self.host.as_ptr().add(32 + i).read_volatile()).collect();
            Some(DeviceFault {
                block: [w(1), w(2), w(3)],
                thread: [w(4), w(5), w(6)],
                message: String::from_utf8_lossy(&bytes).trim_end().to_string(),
                kernel: None,
                lanes: Vec::new(),
            })
        }
    }

    /// Unpins and frees the page; leaks it where the context cannot unpin it any more.
    fn release(self, raw: RawContext) {
        // SAFETY: registered in `new` in this context, unregistered once; no kernel of the
        // context runs any more (its last handle is being dropped).
        if unsafe { driver::mem::host_unregister(raw, self.host.as_ptr().cast()) }.is_ok() {
            // SAFETY: allocated in `new` with this layout; the device no longer maps it.
            unsafe { std::alloc::dealloc(self.host.as_ptr(), FaultPage::layout()) };
        }
    }
}

enum ContextKind {
    /// `epoch`: the device's reset count when the context was retained; `resets`: the
    /// device's reset count now (its [`DeviceState::epoch`], shared), read without a lock by
    /// every driver call ([`Context::is_dead`]).
    Cuda {
        raw: RawContext,
        dev: RawDevice,
        epoch: u64,
        resets: Arc<AtomicU64>,
    },
    Cpu(CpuDevice),
}

/// What sluice knows of each CUDA device's primary context in this process: how many times
/// it was reset (`epoch`: contexts of an older epoch are dead, their handles leak rather than
/// call the driver), and the sticky error that lost it, if any.
///
/// The epoch is an atomic shared with every context retained on the device, so that the
/// check each driver call makes ([`Context::is_dead`]) is one load, not a lock of
/// [`DEVICES`]; it changes only under that lock (in [`reset_device`]).
#[derive(Default)]
struct DeviceState {
    epoch: Arc<AtomicU64>,
    lost: Option<DriverError>,
}

static DEVICES: Mutex<Vec<(RawDevice, DeviceState)>> = Mutex::new(Vec::new());

/// `f` of `dev`'s state, made (never reset, never lost) if sluice has not seen the device yet.
fn with_device<R>(dev: RawDevice, f: impl FnOnce(&mut DeviceState) -> R) -> R {
    let mut devices = DEVICES.lock().unwrap_or_else(|p| p.into_inner());
    match devices.iter_mut().find(|(d, _)| *d == dev) {
        Some((_, s)) => f(s),
        None => {
            let mut s = DeviceState::default();
            let r = f(&mut s);
            devices.push((dev, s));
            r
        }
    }
}

/// The sticky error that lost `dev`'s primary context, if one did (and it was not reset).
pub(crate) fn device_lost(dev: RawDevice) -> Option<DriverError> {
    with_device(dev, |s| s.lost)
}

/// Resets `dev`'s primary context after it was lost: every handle of the old one becomes
/// dead (it leaks instead of calling the driver), the driver destroys what the context held,
/// and the next retain makes a new one.
///
/// `Err` with the sticky error when the driver still refuses the device after the reset:
/// CUDA documents kernel faults (`CUDA_ERROR_LAUNCH_FAILED`, illegal addresses) as leaving
/// the *process* unable to use the device, and the H200's driver keeps that promise (a
/// reset succeeds, the next retain fails again). The device stays marked lost then.
pub(crate) fn reset_device(dev: RawDevice) -> Result<(), DriverError> {
    // Release: a context that sees the new epoch (`is_dead`) sees it before the reset below.
    with_device(dev, |s| s.epoch.fetch_add(1, Ordering::Release));
    // SAFETY: every handle of the old context is dead (its epoch is older): none calls the
    // driver with it any more. Pinned memory is the Rust allocator's (registered only), so the
    // reset cannot free memory the host reads.
    if let Err(e) = unsafe { driver::device::reset_primary(dev) } {
        // Not reset: the old context's handles are its own again (a dead handle would free
        // a fault page that is still registered).
        with_device(dev, |s| s.epoch.fetch_sub(1, Ordering::Release));
        return Err(e);
    }
    // Whether a context can be made again, in this process.
    let raw = driver::device::retain_primary(dev)?;
    // SAFETY: paired with the retain just above; nothing was made in it.
    let _ = unsafe { driver::device::release_primary(dev) };
    let _ = raw;
    with_device(dev, |s| s.lost = None);
    Ok(())
}

/// How copies between two contexts' memory go (see [`Context::peer_access`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PeerAccess {
    /// One context (two `Gpu`s of one device, or the CPU backend): a plain device copy.
    Same,
    /// Peer access is enabled both ways: the copy engines move the data directly.
    Direct,
    /// The devices cannot map each other's memory: the driver stages copies through host
    /// memory.
    Staged,
}

/// The CPU backend's one context, shared by every `Gpu` of it while any lives (as the
/// primary context of a CUDA device is).
static CPU_CONTEXT: Mutex<Weak<Context>> = Mutex::new(Weak::new());

impl Context {
    /// Retains `dev`'s primary context.
    pub(crate) fn retain(dev: RawDevice) -> Result<Arc<Context>, DriverError> {
        let raw = driver::device::retain_primary(dev)?;
        let (epoch, resets) = with_device(dev, |s| (s.epoch.load(Ordering::Acquire), s.epoch.clone()));
        Ok(Arc::new(Context {
            kind: ContextKind::Cuda { raw, dev, epoch, resets },
            errors: ErrorLog::new(),
            pinned: Default::default(),
            fault: FaultPage::new(raw),
            peers: Default::default(),
            memory_epoch: Default::default(),
        }))
    }

    /// Whether the device was reset since this context was retained: its handles are dead.
    /// One atomic load (every driver call asks): no lock.
    pub(crate) fn is_dead(&self) -> bool {
        match &self.kind {
            // Acquire: pairs with the Release of `reset_device`'s change of the epoch.
            ContextKind::Cuda { epoch, resets, .. } => resets.load(Ordering::Acquire) != *epoch,
            ContextKind::Cpu(_) => false,
        }
    }

    /// The sticky error that lost this context, if one did.
    pub(crate) fn lost(&self) -> Option<DriverError> {
        match self.kind {
            ContextKind::Cuda { dev, .. } if self.is_dead() => device_lost(dev).or(Some(DriverError::from_code(709))),
            ContextKind::Cuda { dev, .. } => device_lost(dev),
            ContextKind::Cpu(_) => None,
        }
    }

    /// Remembers a sticky error: the context is lost from now on (every later scope on it
    /// says so at once, and the device must be reset).
    pub(crate) fn note(&self, e: DriverError) -> DriverError {
        if let ContextKind::Cuda { dev, .. } = self.kind {
            if e.is_sticky() {
                with_device(dev, |s| {
                    s.lost.get_or_insert(e);
                });
            }
        }
        e
    }

    /// How many times memory of this context was given back so far. An executable graph's
    /// copy node is bound to the allocation its addresses named when the node was set
    /// (instantiated, or `cuGraphExecMemcpyNodeSetParams`: "the memory operands'
    /// mappings"), not to the addresses alone: pinned memory unregistered and registered
    /// again at the same address is another mapping, which only setting the node again
    /// makes the node use. A graph cached under an older epoch has its copy nodes set again
    /// before its next launch, even where the addresses are the same (`submit::update`).
    pub(crate) fn memory_epoch(&self) -> u64 {
        self.memory_epoch.load(Ordering::Acquire)
    }

    /// Notes that memory of this context was given back ([`memory_epoch`](Context::memory_epoch)).
    /// Not on the CPU backend, whose copies read their addresses when they run.
    pub(crate) fn note_memory_freed(&self) {
        if !self.is_cpu() {
            self.memory_epoch.fetch_add(1, Ordering::AcqRel);
        }
    }

    /// The fault record a failing kernel of this context wrote, if one did.
    pub(crate) fn device_fault(&self) -> Option<DeviceFault> {
        self.fault.as_ref().and_then(FaultPage::read)
    }

    /// The CPU backend's context.
    pub(crate) fn cpu() -> Arc<Context> {
        let mut shared = CPU_CONTEXT.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(ctx) = shared.upgrade() {
            return ctx;
        }
        let ctx = Arc::new(Context {
            kind: ContextKind::Cpu(CpuDevice::new()),
            errors: ErrorLog::new(),
            pinned: Default::default(),
            fault: None,
            peers: Default::default(),
            memory_epoch: Default::default(),
        });
        *shared = Arc::downgrade(&ctx);
        ctx
    }

    /// Whether this is the CPU backend.
    pub(crate) fn is_cpu(&self) -> bool {
        matches!(self.kind, ContextKind::Cpu(_))
    }

    /// The CPU device, on the CPU backend.
    pub(crate) fn cpu_device(&self) -> Option<&CpuDevice> {
        match &self.kind {
            ContextKind::Cpu(d) => Some(d),
            ContextKind::Cuda { .. } => None,
        }
    }

    /// The raw context, for a driver call; `Err` on the CPU backend, and for a dead context
    /// (the device was reset: its handles must not reach the driver).
    fn cuda(&self) -> Result<RawContext, DriverError> {
        match self.kind {
            ContextKind::Cuda { .. } if self.is_dead() => Err(DriverError::from_code(709)), // CONTEXT_IS_DESTROYED
            ContextKind::Cuda { raw, .. } => Ok(raw),
            ContextKind::Cpu(_) => Err(DriverError::not_supported()),
        }
    }

    /// An identity for "which device does this memory belong to" checks: two `Gpu`s of
    /// one device share the primary context, and so the identity; a reset device's new
    /// context has a new one (memory of the old context is refused).
    pub(crate) fn id(&self) -> usize {
        match &self.kind {
            ContextKind::Cuda { raw, epoch, .. } => (raw.0 as usize) ^ ((*epoch as usize) << 48),
            ContextKind::Cpu(d) => d as *const CpuDevice as usize,
        }
    }

    /// Errors recorded by handles of this context.
    pub(crate) fn errors(&self) -> &ErrorLog {
        &self.errors
    }

    /// How copies between this context's memory and `peer`'s go, with peer access enabled
    /// (both ways: the contexts and their default memory pools) the first time this context
    /// asks for that peer, when the driver allows it. Enabling again is harmless.
    pub(crate) fn peer_access(&self, peer: &Context) -> Result<PeerAccess, DriverError> {
        let (ContextKind::Cuda { dev: da, .. }, ContextKind::Cuda { dev: db, .. }) = (&self.kind, &peer.kind) else {
            return Ok(PeerAccess::Same); // the CPU backend: one memory
        };
        if self.id() == peer.id() {
            return Ok(PeerAccess::Same);
        }
        let (a, b) = (self.cuda()?, peer.cuda()?);
        let mut known = self.peers.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((_, access)) = known.iter().find(|(k, _)| *k == peer.id()) {
            return Ok(*access);
        }
        // What the hardware or driver may refuse even when `cuDeviceCanAccessPeer` said yes:
        // peer access unsupported (217), the peer mappings used up (711), a call this driver
        // lacks (801). The driver can still copy, through host memory.
        let refused = |e: &DriverError| matches!(e.code(), 217 | 711 | 801);
        let access = if driver::peer::can_access(*da, *db)? && driver::peer::can_access(*db, *da)? {
            // SAFETY: both contexts are retained (the `Context`s are alive) and belong to two
            // different devices (their identities differ and neither is the CPU backend), which
            // can access each other (checked above).
            let contexts = unsafe { driver::peer::enable(a, b).and_then(|()| driver::peer::enable(b, a)) };
            // The default pools too (sluice's allocations come from them; `cuCtxEnablePeerAccess`
            // does not cover the stream-ordered allocator), both ways.
            let pools = contexts.and_then(|()| {
                let (pool_a, pool_b) = (self.default_pool()?, peer.default_pool()?);
                // SAFETY: as above; each pool is its own context's device's default pool.
                unsafe {
                    driver::pool::set_peer_access(b, pool_b, *da)
                        .and_then(|()| driver::pool::set_peer_access(a, pool_a, *db))
                }
            });
            match pools {
                Ok(()) => PeerAccess::Direct,
                Err(e) if refused(&e) => PeerAccess::Staged,
                Err(e) => return Err(e),
            }
        } else {
            PeerAccess::Staged
        };
        known.push((peer.id(), access));
        Ok(access)
    }

    /// Whether a copy from host address `ptr` to the device may read it after the call that
    /// enqueues it: page-locked or managed memory on CUDA (the copy is asynchronous), every
    /// address on the CPU backend (its streams copy on their worker threads). `false` only
    /// for CUDA and pageable memory, which the driver stages before the call returns.
    pub(crate) fn copy_reads_host_later(&self, ptr: *const u8) -> Result<bool, DriverError> {
        match &self.kind {
            // SAFETY: the context is retained while `self` lives.
            ContextKind::Cuda { raw, .. } => unsafe { driver::mem::host_is_driver_memory(*raw, ptr.cast()) },
            ContextKind::Cpu(_) => Ok(true),
        }
    }

    /// Free and total device memory.
    pub(crate) fn mem_info(&self) -> Result<(usize, usize), DriverError> {
        match &self.kind {
            // SAFETY: the context is retained while `self` lives.
            ContextKind::Cuda { raw, .. } => unsafe { driver::mem::info(*raw) },
            ContextKind::Cpu(d) => Ok(d.mem_info()),
        }
    }

    /// The device's default memory pool (CUDA only).
    pub(crate) fn default_pool(&self) -> Result<RawPool, DriverError> {
        let ContextKind::Cuda { raw, dev, .. } = self.kind else { return Err(DriverError::not_supported()) };
        // SAFETY: retained, and `dev` is the device this primary context belongs to.
        unsafe { driver::pool::default_pool(raw, dev) }
    }

    /// Sets `pool`'s release threshold (`CU_MEMPOOL_ATTR_RELEASE_THRESHOLD`).
    pub(crate) fn set_release_threshold(&self, pool: RawPool, bytes: u64) -> Result<(), DriverError> {
        // SAFETY: retained; `pool` came from `default_pool` of this context's device.
        unsafe { driver::pool::set_release_threshold(self.cuda()?, pool, bytes) }
    }

    /// Returns `pool`'s unused reserved memory to the driver, keeping `keep` bytes.
    pub(crate) fn trim_pool(&self, pool: RawPool, keep: usize) -> Result<(), DriverError> {
        // SAFETY: as in `set_release_threshold`.
        unsafe { driver::pool::trim_to(self.cuda()?, pool, keep) }
    }

    /// Pinned host memory, `bytes` long, zeroed: page-aligned memory from the Rust allocator,
    /// registered with the driver (on the CPU backend, not registered).
    pub(crate) fn host_alloc(&self, bytes: usize) -> Result<RawHostPtr, DriverError> {
        let layout = Layout::from_size_align(bytes.max(1), 4096).map_err(|_| DriverError::from_code(1))?;
        // SAFETY: the layout has a non-zero size.
        let p = unsafe { std::alloc::alloc_zeroed(layout) };
        if p.is_null() {
            return Err(DriverError::from_code(2)); // CUDA_ERROR_OUT_OF_MEMORY
        }
        if let Ok(raw) = self.cuda() {
            // SAFETY: the context is retained; `p` is valid for `layout.size()` bytes until it
            // is unregistered and freed in `host_free`.
            if let Err(e) = unsafe { driver::mem::host_register(raw, p.cast(), layout.size()) } {
                // SAFETY: allocated just above with this layout, never handed out.
                unsafe { std::alloc::dealloc(p, layout) };
                return Err(self.note(e));
            }
        }
        self.pinned.lock().unwrap_or_else(|e| e.into_inner()).insert(p as usize, layout);
        Ok(RawHostPtr(p.cast()))
    }

    /// Frees pinned host memory (unpins it first; the memory is freed even if the driver
    /// cannot unpin it any more, e.g. after the context was lost).
    ///
    /// # Safety
    /// - `ptr` came from [`host_alloc`](Context::host_alloc) on this context, is freed once,
    ///   and no copy using it is pending.
    pub(crate) unsafe fn host_free(&self, ptr: RawHostPtr) -> Result<(), DriverError> {
        let layout = self.pinned.lock().unwrap_or_else(|e| e.into_inner()).remove(&(ptr.0 as usize));
        let Some(layout) = layout else { return Err(DriverError::from_code(1)) };
        // A cached graph's copy node may name this registration; the allocator may hand the
        // same address out again, registered anew.
        self.note_memory_freed();
        let unpinned = match (&self.kind, self.cuda()) {
            // SAFETY: registered by `host_alloc` in this context, unregistered once (removed from
            // the map above); no copy uses it (caller's duty).
            (ContextKind::Cuda { .. }, Ok(raw)) => unsafe { driver::mem::host_unregister(raw, ptr.0) },
            _ => Ok(()),
        };
        // SAFETY: allocated with this layout by `host_alloc`, freed once, unused (caller's duty).
        unsafe { std::alloc::dealloc(ptr.0.cast(), layout) };
        unpinned
    }
}

impl Drop for Context {
    fn drop(&mut self) {
        if let ContextKind::Cuda { dev, .. } = self.kind {
            if self.is_dead() {
                // The device was reset: this retain belongs to the destroyed context, which
                // unmapped the fault page with everything else; the page is free to go.
                if let Some(page) = self.fault.take() {
                    // SAFETY: allocated in `FaultPage::new` with this layout; the context that
                    // mapped it is destroyed.
                    unsafe { std::alloc::dealloc(page.host.as_ptr(), FaultPage::layout()) };
                }
                return;
            }
            if let (Some(page), ContextKind::Cuda { raw, .. }) = (self.fault.take(), &self.kind) {
                page.release(*raw);
            }
            // SAFETY: paired with the retain in `Context::retain`; every handle made in this
            // context held an `Arc` to it, so none is left.
            if let Err(error) = unsafe { driver::device::release_primary(dev) } {
                // The last `Gpu` of the device is gone: keep the error process-wide.
                ORPHANED.record(Error::Free { what: "the primary context", error });
            }
        }
        // What was recorded here and never taken is not lost either.
        for e in self.errors.take() {
            ORPHANED.record(e);
        }
    }
}

/// A CPU fault's driver code: what a GPU reports for a kernel that trapped.
fn cpu_fault() -> DriverError {
    DriverError::from_code(719)
}

/// A stream (a lane's queue): a non-blocking CUDA stream, or a CPU worker; destroyed on drop.
pub(crate) struct StreamHandle {
    ctx: Arc<Context>,
    kind: StreamKind,
}

enum StreamKind {
    Cuda(RawStream),
    Cpu(CpuStream),
}

/// Raw pointers moved into a CPU operation (which runs on the stream's worker thread).
struct Ptrs(u64, *mut c_void);

impl Ptrs {
    fn get(&self) -> (u64, *mut c_void) {
        (self.0, self.1)
    }
}
// SAFETY: addresses only; the operations that use them are the `unsafe` copies whose callers
// vouch for the memory until the stream has passed them (the CUDA contract).
unsafe impl Send for Ptrs {}
// SAFETY: as for `Send`.
unsafe impl Sync for Ptrs {}

impl StreamHandle {
    pub(crate) fn create(ctx: &Arc<Context>) -> Result<StreamHandle, DriverError> {
        let kind = match ctx.kind {
            // SAFETY: the context is retained (the `Arc`).
            ContextKind::Cuda { raw, .. } => StreamKind::Cuda(unsafe { driver::stream::create(raw) }?),
            ContextKind::Cpu(_) => StreamKind::Cpu(CpuStream::new().map_err(|_| DriverError::from_code(2))?),
        };
        Ok(StreamHandle { ctx: ctx.clone(), kind })
    }

    /// Whether this stream is the CPU backend's.
    pub(crate) fn is_cpu(&self) -> bool {
        matches!(self.kind, StreamKind::Cpu(_))
    }

    /// On the CPU backend, names the lane the operations this stream captures from now on
    /// are for (`None`: the stream's own), so that a fault in a replay of the graph names that
    /// lane. Nothing on CUDA, where a fault is found from the device's record instead.
    pub(crate) fn set_capture_label(&self, lane: Option<crate::error::LaneId>) {
        if let StreamKind::Cpu(s) = &self.kind {
            s.set_label(lane);
        }
    }

    /// An identity for "was this fence recorded on this stream" checks.
    pub(crate) fn id(&self) -> usize {
        match &self.kind {
            StreamKind::Cuda(raw) => raw.0 as usize,
            StreamKind::Cpu(s) => s.id(),
        }
    }

    /// Blocks this thread until the stream has run everything enqueued on it. On the CPU
    /// backend a launch that failed ends the stream's work: `Err` (`CUDA_ERROR_LAUNCH_FAILED`)
    /// once the stream has stopped, with the message in [`fault`](StreamHandle::fault).
    pub(crate) fn synchronize(&self) -> Result<(), DriverError> {
        match &self.kind {
            StreamKind::Cuda(raw) => {
                // SAFETY: the stream is alive and its context retained while `self` lives.
                unsafe { driver::stream::synchronize(self.ctx.cuda()?, *raw) }.map_err(|e| self.ctx.note(e))
            }
            StreamKind::Cpu(s) => s.synchronize().map_err(|_| cpu_fault()),
        }
    }

    /// The fault that ended this stream's work (CPU backend: its message, and the checking
    /// mode's report if that failed the launch; CUDA faults have no message here).
    pub(crate) fn fault(&self) -> Option<cpu::CpuFault> {
        match &self.kind {
            StreamKind::Cuda(_) => None,
            StreamKind::Cpu(s) => s.fault(),
        }
    }

    /// Makes later work on this stream wait for `event`'s latest record (GPU-side). The event
    /// may belong to another device's context (a cross-device fence): CUDA orders streams
    /// across devices with events the same way.
    pub(crate) fn wait(&self, event: &Event) -> Result<(), DriverError> {
        match (&self.kind, &event.kind) {
            // SAFETY: both are alive (owned by their handles, each holding its context);
            // `cuStreamWaitEvent` accepts an event of another context or device.
            (StreamKind::Cuda(raw), EventKind::Cuda(e)) => unsafe {
                driver::stream::wait_event(self.ctx.cuda()?, *raw, *e)
            },
            (StreamKind::Cpu(s), EventKind::Cpu(e)) => s.wait(e).map_err(|_| DriverError::not_supported()),
            _ => Err(DriverError::from_code(400)), // CUDA_ERROR_INVALID_HANDLE
        }
    }

    /// The raw CUDA stream, for a call of another library that enqueues on it (NCCL's
    /// collectives); `None` on the CPU backend. Valid while `self` lives.
    pub(crate) fn raw_cuda(&self) -> Option<RawStream> {
        match &self.kind {
            StreamKind::Cuda(raw) => Some(*raw),
            StreamKind::Cpu(_) => None,
        }
    }

    /// Enqueues host work on a CPU stream (the CPU backend's collectives): it runs on the
    /// stream's worker, in order with the stream's other work. `Err` on a CUDA stream.
    pub(crate) fn enqueue_host(&self, work: cpu::Work) -> Result<(), DriverError> {
        match &self.kind {
            StreamKind::Cpu(s) => {
                s.enqueue(work);
                Ok(())
            }
            StreamKind::Cuda(_) => Err(DriverError::not_supported()),
        }
    }

    /// Copies `height` runs of `width_bytes` bytes from `src` (memory of `src_ctx`, runs
    /// `src_pitch` bytes apart) to `dst` (memory of `dst_ctx`, `dst_pitch` apart), on this
    /// stream: a device copy within one context, a peer copy between two (direct when
    /// [`Context::peer_access`] enabled it, staged through host memory by the driver
    /// otherwise). One call when both sides are contiguous, one per run otherwise.
    ///
    /// # Safety
    /// - `src` is `src_ctx`'s memory, valid for the runs, and `dst` is `dst_ctx`'s, valid
    ///   for the runs, until the stream has passed the copy; nothing writes `dst`, nor `src`,
    ///   meanwhile; the two do not overlap.
    #[allow(clippy::too_many_arguments)]
    pub(crate) unsafe fn copy_device(
        &self,
        dst_ctx: &Context,
        dst: DevicePtr,
        dst_pitch: usize,
        src_ctx: &Context,
        src: DevicePtr,
        src_pitch: usize,
        width_bytes: usize,
        height: usize,
    ) -> Result<(), DriverError> {
        let contiguous = height <= 1 || (dst_pitch == width_bytes && src_pitch == width_bytes);
        let (runs, run_bytes) = if contiguous { (1, width_bytes * height) } else { (height, width_bytes) };
        match &self.kind {
            StreamKind::Cuda(raw) => {
                let (ctx, d, s) = (self.ctx.cuda()?, dst_ctx.cuda()?, src_ctx.cuda()?);
                for run in 0..runs {
                    let (dst, src) = ((dst as usize + run * dst_pitch) as u64, (src as usize + run * src_pitch) as u64);
                    // SAFETY: the stream is alive in `ctx`, both contexts retained (their
                    // `Context`s are borrowed); each run lies inside the ranges the caller
                    // vouches for.
                    unsafe { driver::peer::copy_async(ctx, *raw, d, dst, s, src, run_bytes) }
                        .map_err(|e| self.ctx.note(e))?;
                }
                Ok(())
            }
            StreamKind::Cpu(s) => {
                let p = Ptrs(dst, src as usize as *mut c_void);
                s.enqueue(Arc::new(move || {
                    let (dst, src) = p.get();
                    for run in 0..runs {
                        let d = (dst as usize + run * dst_pitch) as *mut u8;
                        let from = (src as usize + run * src_pitch) as *const u8;
                        // SAFETY: the caller's duty (see above) holds until the stream has
                        // passed this operation, which is now; the ranges do not overlap.
                        unsafe { std::ptr::copy_nonoverlapping(from, d, run_bytes) };
                    }
                    Ok(())
                }));
                Ok(())
            }
        }
    }

    /// Copies between device memory and host memory on this stream.
    ///
    /// # Safety
    /// - `device` is memory of this context valid for `span` on the device, and `host` is
    ///   valid for `span` on the host, until the stream has passed the copy; nothing else
    ///   writes the destination, nor the source, meanwhile.
    pub(crate) unsafe fn copy(
        &self,
        dir: Direction,
        device: DevicePtr,
        host: *mut c_void,
        span: Span2d,
    ) -> Result<(), DriverError> {
        match &self.kind {
            // SAFETY: stream alive, context retained; the memory is the caller's duty.
            StreamKind::Cuda(raw) => unsafe { driver::mem::copy(self.ctx.cuda()?, *raw, dir, device, host, span) },
            StreamKind::Cpu(s) => {
                let params = MemParams::Copy { dir, device, host: host as usize, span };
                // SAFETY: the caller's duty (see above) is `MemOp::new`'s.
                s.enqueue_mem(unsafe { MemOp::new(params) });
                Ok(())
            }
        }
    }

    /// Sets `height` rows of `width_bytes` bytes, `pitch` bytes apart, to zero.
    ///
    /// # Safety
    /// - The rows are device memory of this context that this stream may write until it
    ///   has passed the fill.
    pub(crate) unsafe fn zero_2d(
        &self,
        dst: DevicePtr,
        pitch: usize,
        width_bytes: usize,
        height: usize,
    ) -> Result<(), DriverError> {
        match &self.kind {
            // SAFETY: stream alive, context retained; the memory is the caller's duty.
            StreamKind::Cuda(raw) => unsafe {
                driver::mem::zero_2d(self.ctx.cuda()?, *raw, dst, pitch, width_bytes, height)
            },
            StreamKind::Cpu(s) => {
                let params = MemParams::Zero { dst, pitch, width_bytes, height };
                // SAFETY: the caller's duty is `MemOp::new`'s.
                s.enqueue_mem(unsafe { MemOp::new(params) });
                Ok(())
            }
        }
    }

    /// Launches `f` on this stream. `params` points to one value per kernel parameter, of
    /// the sizes in `sizes` (the CPU backend copies them; CUDA's driver does too).
    ///
    /// # Safety
    /// - `f` belongs to a module of this context that stays loaded until the stream has
    ///   passed the launch (CUDA), or is the kernel's CPU entry (CPU).
    /// - `params[i]` points to a value of `sizes[i]` bytes, one per kernel parameter.
    /// - Every device address among them stays valid, and unshared in conflicting ways,
    ///   until the stream has passed the launch.
    #[allow(clippy::too_many_arguments)]
    pub(crate) unsafe fn launch(
        &self,
        f: FunctionHandle,
        grid: (u32, u32, u32),
        block: (u32, u32, u32),
        shared_mem_bytes: u32,
        params: &mut [*mut c_void],
        sizes: &[usize],
    ) -> Result<(), DriverError> {
        match (&self.kind, f) {
            (StreamKind::Cuda(raw), FunctionHandle::Cuda(func)) => {
                // SAFETY: stream alive, context retained; the rest is the caller's duty.
                unsafe { driver::launch(self.ctx.cuda()?, func, *raw, grid, block, shared_mem_bytes, params) }
                    .map_err(|e| self.ctx.note(e))
            }
            (StreamKind::Cpu(s), FunctionHandle::Cpu(entry, name)) => {
                // SAFETY: `params[i]` points to `sizes[i]` bytes (the caller's duty).
                let values = unsafe { copy_values(params, sizes) };
                let op = Arc::new(KernelOp {
                    entry,
                    name,
                    grid: [grid.0, grid.1, grid.2],
                    block: [block.0, block.1, block.2],
                    shared_mem_bytes,
                    check: self.ctx.cpu_device().map_or_else(crate::check::CpuCheck::auto, CpuDevice::check),
                    values: Mutex::new(values),
                });
                s.enqueue_kernel(op);
                Ok(())
            }
            _ => Err(DriverError::from_code(400)),
        }
    }

    /// Starts capturing this stream into a graph (nothing enqueued on it runs until the
    /// capture ends; see [`graph`](crate::graph)).
    ///
    /// # Safety
    /// - The driver has the graph entry points (`driver::graph::missing_symbol()` is `None`).
    pub(crate) unsafe fn begin_capture(&self) -> Result<(), DriverError> {
        match &self.kind {
            // SAFETY: stream alive, context retained; symbols the caller's duty.
            StreamKind::Cuda(raw) => unsafe { driver::graph::begin_capture(self.ctx.cuda()?, *raw) },
            StreamKind::Cpu(s) => s.begin_capture().map_err(|_| DriverError::not_supported()),
        }
    }

    /// Ends the capture begun with [`begin_capture`](StreamHandle::begin_capture).
    ///
    /// # Safety
    /// - This stream is capturing (begun with `begin_capture`).
    pub(crate) unsafe fn end_capture(&self) -> Result<GraphHandle, DriverError> {
        let kind = match &self.kind {
            // SAFETY: stream alive, context retained; the capture is the caller's duty.
            StreamKind::Cuda(raw) => GraphKind::Cuda(unsafe { driver::graph::end_capture(self.ctx.cuda()?, *raw) }?),
            StreamKind::Cpu(s) => GraphKind::Cpu(s.end_capture().map_err(|_| DriverError::not_supported())?),
        };
        Ok(GraphHandle { ctx: self.ctx.clone(), kind })
    }

    /// The graph node the last launch, copy or fill captured on this stream became.
    ///
    /// # Safety
    /// - This stream is capturing.
    pub(crate) unsafe fn last_captured_node(&self) -> Result<Option<GraphNode>, DriverError> {
        match &self.kind {
            StreamKind::Cuda(raw) => {
                // SAFETY: stream alive, context retained; the capture is the caller's duty.
                unsafe { driver::graph::last_node(self.ctx.cuda()?, *raw) }.map(|n| n.map(GraphNode::Cuda))
            }
            StreamKind::Cpu(s) => Ok(s.last_node().map(|n| match n {
                CpuNode::Kernel(k) => GraphNode::Cpu(k),
                CpuNode::Mem(m) => GraphNode::CpuMem(m),
            })),
        }
    }

    /// Launches an executable graph on this stream.
    ///
    /// # Safety
    /// - Every address the graph uses stays valid, and unshared in conflicting ways, until
    ///   this stream has passed the launch.
    pub(crate) unsafe fn launch_graph(&self, exec: &GraphExec) -> Result<(), DriverError> {
        match (&self.kind, &exec.kind) {
            // SAFETY: both alive in one context; the memory is the caller's duty.
            (StreamKind::Cuda(raw), ExecKind::Cuda { raw: e, .. }) => unsafe {
                driver::graph::launch(self.ctx.cuda()?, *e, *raw)
            },
            (StreamKind::Cpu(s), ExecKind::Cpu(g)) => {
                s.enqueue_graph(g.clone()).map_err(|_| DriverError::not_supported())
            }
            _ => Err(DriverError::from_code(400)),
        }
    }

    /// The launch of `exec` on this stream, to be made on another thread (the device's
    /// launcher); `None` on the CPU backend, whose graphs run on its own workers.
    pub(crate) fn graph_launch(&self, exec: &GraphExec) -> Option<GraphLaunch> {
        match (&self.kind, &exec.kind) {
            (StreamKind::Cuda(stream), ExecKind::Cuda { raw: exec, .. }) => {
                Some(GraphLaunch { ctx: self.ctx.cuda().ok()?, exec: *exec, stream: *stream })
            }
            _ => None,
        }
    }

    /// Enqueues an allocation of `bytes` from `pool` on this stream (CUDA only).
    ///
    /// # Safety
    /// - `pool` is a pool of this context's device.
    pub(crate) unsafe fn alloc_async(&self, pool: RawPool, bytes: usize) -> Result<DevicePtr, DriverError> {
        let StreamKind::Cuda(raw) = &self.kind else { return Err(DriverError::not_supported()) };
        // SAFETY: stream alive, context retained; the pool is the caller's duty.
        unsafe { driver::mem::alloc_async(self.ctx.cuda()?, pool, *raw, bytes) }
    }

    /// Enqueues the return of `ptr` to its pool on this stream (CUDA only).
    ///
    /// # Safety
    /// - As [`driver::mem::free_async`]: `ptr` came from `alloc_async` in this context, is
    ///   freed once, and no work may use it after this point of the stream.
    pub(crate) unsafe fn free_async(&self, ptr: DevicePtr) -> Result<(), DriverError> {
        let StreamKind::Cuda(raw) = &self.kind else { return Err(DriverError::not_supported()) };
        // SAFETY: stream alive, context retained; the rest is the caller's duty.
        unsafe { driver::mem::free_async(self.ctx.cuda()?, *raw, ptr) }
    }
}

/// Copies the values `params` point to (`sizes[i]` bytes each).
///
/// # Safety
/// - `params[i]` points to `sizes[i]` readable bytes, for every `i < sizes.len()`.
unsafe fn copy_values(params: &[*mut c_void], sizes: &[usize]) -> Vec<Vec<u8>> {
    params
        .iter()
        .zip(sizes)
        // SAFETY: the caller's duty.
        .map(|(p, &n)| unsafe { std::slice::from_raw_parts(p.cast::<u8>(), n) }.to_vec())
        .collect()
}

impl Drop for StreamHandle {
    fn drop(&mut self) {
        if self.ctx.is_dead() {
            return; // the device was reset: the driver object is gone with the old context
        }
        if let StreamKind::Cuda(raw) = self.kind {
            let destroyed = self.ctx.cuda().and_then(|ctx| {
                // SAFETY: the stream is alive and used by no one after this (it is being
                // dropped); work still queued on it completes first (destroying a stream lets
                // it drain).
                unsafe { driver::stream::destroy(ctx, raw) }
            });
            if let Err(error) = destroyed {
                self.ctx.errors.record(Error::Free { what: "stream", error });
            }
        }
        // A CPU stream's worker finishes what was sent and ends (`CpuStream`'s drop).
    }
}

/// An event (a fence's marker, or with timing a timestamp), destroyed on drop.
pub(crate) struct Event {
    ctx: Arc<Context>,
    kind: EventKind,
    timing: bool,
}

enum EventKind {
    Cuda(RawEvent),
    Cpu(CpuEvent),
}

impl Event {
    /// A new event; `timing` selects whether it records a timestamp (slower to record).
    pub(crate) fn create(ctx: &Arc<Context>, timing: bool) -> Result<Event, DriverError> {
        let kind = match ctx.kind {
            // SAFETY: the context is retained (the `Arc`).
            ContextKind::Cuda { raw, .. } => EventKind::Cuda(unsafe { driver::event::create(raw, timing) }?),
            ContextKind::Cpu(_) => EventKind::Cpu(CpuEvent::new()),
        };
        Ok(Event { ctx: ctx.clone(), kind, timing })
    }

    /// Whether the event records timestamps.
    pub(crate) fn timing(&self) -> bool {
        self.timing
    }

    /// Records the event on `stream` (after everything enqueued there so far).
    pub(crate) fn record(&self, stream: &StreamHandle) -> Result<(), DriverError> {
        match (&self.kind, &stream.kind) {
            // SAFETY: both alive, in one context.
            (EventKind::Cuda(e), StreamKind::Cuda(s)) => unsafe { driver::event::record(self.ctx.cuda()?, *e, *s) },
            (EventKind::Cpu(e), StreamKind::Cpu(s)) => {
                e.record(s);
                Ok(())
            }
            _ => Err(DriverError::from_code(400)),
        }
    }

    /// Blocks this thread until the event's latest record has completed.
    pub(crate) fn synchronize(&self) -> Result<(), DriverError> {
        match &self.kind {
            EventKind::Cuda(e) => {
                // SAFETY: alive while `self` lives.
                unsafe { driver::event::synchronize(self.ctx.cuda()?, *e) }.map_err(|e| self.ctx.note(e))
            }
            EventKind::Cpu(e) => e.synchronize().map_err(|_| DriverError::not_supported()),
        }
    }

    /// Milliseconds from `earlier` to `self` (both timing events, both completed).
    pub(crate) fn elapsed_ms_since(&self, earlier: &Event) -> Result<f32, DriverError> {
        match (&self.kind, &earlier.kind) {
            // SAFETY: both alive while borrowed.
            (EventKind::Cuda(e), EventKind::Cuda(b)) => unsafe { driver::event::elapsed_ms(self.ctx.cuda()?, *b, *e) },
            (EventKind::Cpu(e), EventKind::Cpu(b)) => e.elapsed_ms_since(b).map_err(|_| DriverError::from_code(600)),
            _ => Err(DriverError::from_code(400)),
        }
    }
}

impl Drop for Event {
    fn drop(&mut self) {
        if self.ctx.is_dead() {
            return; // the device was reset: the driver object is gone with the old context
        }
        if let EventKind::Cuda(raw) = self.kind {
            // SAFETY: the event is alive and no one records or synchronizes it after this;
            // waits already enqueued on it keep the record they saw.
            let destroyed = self.ctx.cuda().and_then(|ctx| unsafe { driver::event::destroy(ctx, raw) });
            if let Err(error) = destroyed {
                self.ctx.errors.record(Error::Free { what: "event", error });
            }
        }
    }
}

/// A loaded module (PTX JIT-compiled by the driver), unloaded on drop. CUDA only: the CPU
/// backend runs kernels' CPU entries, which need no module.
pub(crate) struct Module {
    ctx: Arc<Context>,
    raw: RawModule,
}

impl Module {
    /// Loads a NUL-terminated PTX (or cubin) image.
    pub(crate) fn load(ctx: &Arc<Context>, image: &CStr) -> Result<Module, DriverError> {
        // SAFETY: the context is retained (the `Arc`); `image` outlives the call.
        let raw = unsafe { driver::module::load_data(ctx.cuda()?, image) }?;
        Ok(Module { ctx: ctx.clone(), raw })
    }

    /// The kernel entry `name`. The handle is valid as long as this module is loaded.
    pub(crate) fn function(&self, name: &str) -> Result<FunctionHandle, DriverError> {
        // SAFETY: the module is loaded while `self` lives.
        unsafe { driver::module::function(self.ctx.cuda()?, self.raw, name) }.map(FunctionHandle::Cuda)
    }

    /// Loads `f`'s code now rather than at its first launch (see `driver::module::load_function`).
    pub(crate) fn load_function(&self, f: FunctionHandle) -> Result<bool, DriverError> {
        let FunctionHandle::Cuda(f) = f else { return Ok(false) };
        // SAFETY: `f` came from `self.function`, loaded while `self` lives.
        unsafe { driver::module::load_function(self.ctx.cuda()?, f) }
    }

    /// Points the module's fault-record global (if the device std is in it) at this
    /// context's fault page, so that a failing kernel of the module records itself.
    pub(crate) fn set_fault_record(&self) -> Result<(), DriverError> {
        let Some(page) = &self.ctx.fault else { return Ok(()) };
        let ctx = self.ctx.cuda()?;
        // SAFETY: the module is loaded while `self` lives.
        let Some((global, size)) = (unsafe { driver::module::global(ctx, self.raw, FAULT_RECORD_SYMBOL) })? else {
            return Ok(());
        };
        if size != 8 {
            return Ok(()); // not the device std's record pointer
        }
        // SAFETY: `global` is the module's 8-byte global, which no kernel runs yet (the module
        // was just loaded: nothing of it is launched before this returns).
        unsafe { driver::mem::copy_to_device_sync(ctx, global, &page.device.to_le_bytes()) }
    }

    /// Sets an attribute of `f`, a function of this module.
    pub(crate) fn set_attribute(&self, f: FunctionHandle, attr: FuncAttribute, value: i32) -> Result<(), DriverError> {
        let FunctionHandle::Cuda(f) = f else { return Err(DriverError::not_supported()) };
        // SAFETY: `f` came from `self.function`, loaded while `self` lives.
        unsafe { driver::module::set_attribute(self.ctx.cuda()?, f, attr, value) }
    }

    /// An attribute of `f`, a function of this module.
    pub(crate) fn attribute(&self, f: FunctionHandle, attr: FuncAttribute) -> Result<i32, DriverError> {
        let FunctionHandle::Cuda(f) = f else { return Err(DriverError::not_supported()) };
        // SAFETY: `f` came from `self.function` (callers pair them), loaded while `self` lives.
        unsafe { driver::module::attribute(self.ctx.cuda()?, f, attr) }
    }
}

impl Drop for Module {
    fn drop(&mut self) {
        if self.ctx.is_dead() {
            return; // the device was reset: the driver object is gone with the old context
        }
        // SAFETY: modules are dropped only with their `Gpu` (the module cache lives in it):
        // no scope runs then (a scope holds a `Gpu` until it has joined its lanes), and
        // launches happen only in scopes, so no launch of this module is pending.
        let unloaded = self.ctx.cuda().and_then(|ctx| unsafe { driver::module::unload(ctx, self.raw) });
        if let Err(error) = unloaded {
            self.ctx.errors.record(Error::Free { what: "module", error });
        }
    }
}

/// A kernel to launch: an entry of a loaded [`Module`] (valid while that module stays
/// loaded, which the module cache of its `Gpu` guarantees for as long as the `Gpu`, or a
/// [`Function`](crate::Function) holding one, lives), or a kernel's CPU entry.
#[derive(Clone, Copy, Debug)]
pub(crate) enum FunctionHandle {
    Cuda(RawFunction),
    Cpu(CpuEntry, &'static str),
}

/// A recorded graph, destroyed on drop (after its executable instance, which holds it so
/// that its kernel nodes stay valid for parameter updates).
pub(crate) struct GraphHandle {
    ctx: Arc<Context>,
    kind: GraphKind,
}

enum GraphKind {
    Cuda(RawGraph),
    Cpu(Arc<Recording>),
}

impl GraphHandle {
    /// Chains the root nodes among `kernels` by launch-order edges: each root kernel is
    /// launched once every block of the previous one has begun. That orders launches only —
    /// no memory order, and no wait for anything a root did not wait for already (it waits for
    /// nothing in the graph) — so what the graph computes is unchanged; the driver launches a
    /// chain from fewer of its internal streams, which makes a graph of many lanes cheaper to
    /// launch. The order is transitive (a root launches after every earlier root has begun),
    /// and CUDA documents it as best effort: a root may wait until the one before it is done.
    /// Only roots: a kernel that waits for another's results would hold back every kernel after
    /// it in the chain. No edge where the driver lacks them (before CUDA 12.3), and none on the
    /// CPU backend (whose replay is serial). A query or an edge the driver refuses ends the
    /// chain (a part of it means the same). Returns how many edges it added
    /// ([`Submission::launch_edges`](crate::Submission::launch_edges)).
    ///
    /// # Safety
    /// - Every CUDA node in `kernels` is a kernel node of this graph, and they are in the order
    ///   they were captured in.
    pub(crate) unsafe fn chain_launches(&mut self, kernels: &[GraphNode]) -> usize {
        let GraphKind::Cuda(raw) = self.kind else { return 0 };
        // A dead context: nothing to chain (instantiating will say why).
        let Ok(ctx) = self.ctx.cuda() else { return 0 };
        if !driver::graph::launch_order_supported() {
            return 0;
        }
        let (mut added, mut last) = (0, None);
        for node in kernels {
            let GraphNode::Cuda(node) = *node else { continue };
            // SAFETY: the graph is alive (owned here) and holds `node` (the caller's duty).
            match unsafe { driver::graph::dependency_count(ctx, node) } {
                Ok(0) => {}
                Ok(_) => continue,
                Err(_) => break,
            }
            if let Some(from) = last.replace(node) {
                // SAFETY: the graph is alive (owned here) and not instantiated (`instantiate`
                // consumes it); `from` and `node` are its kernel nodes (the caller's duty) with
                // no edge between them (`node` has none coming in). No cycle: capture order is
                // a topological order of the captured edges (a node depends only on nodes
                // captured before it), and every chain edge goes forward in it (`from` was
                // captured before `node`), so it stays one.
                match unsafe { driver::graph::add_launch_order_edge(ctx, raw, from, node) } {
                    Ok(()) => added += 1,
                    Err(_) => break,
                }
            }
        }
        added
    }

    /// Instantiates the graph for launching; the instance keeps the graph.
    pub(crate) fn instantiate(self) -> Result<GraphExec, DriverError> {
        let kind = match &self.kind {
            GraphKind::Cuda(raw) => {
                // SAFETY: the graph is alive (owned here) in a retained context.
                let e = unsafe { driver::graph::instantiate(self.ctx.cuda()?, *raw) }?;
                ExecKind::Cuda { raw: e }
            }
            GraphKind::Cpu(rec) => ExecKind::Cpu(Arc::new(rec.to_graph())),
        };
        Ok(GraphExec { ctx: self.ctx.clone(), kind, _graph: self })
    }
}

impl Drop for GraphHandle {
    fn drop(&mut self) {
        if self.ctx.is_dead() {
            return; // the device was reset: the driver object is gone with the old context
        }
        if let GraphKind::Cuda(raw) = self.kind {
            // SAFETY: owned, destroyed once; its instance (if any) was destroyed first (a
            // `GraphExec` holds its `GraphHandle` and drops it after its own `Drop`).
            let destroyed = self.ctx.cuda().and_then(|ctx| unsafe { driver::graph::destroy(ctx, raw) });
            if let Err(error) = destroyed {
                self.ctx.errors.record(Error::Free { what: "graph", error });
            }
        }
    }
}

/// An executable graph, destroyed on drop.
/// A launch of an executable graph on a stream, as raw handles, made later and maybe on
/// another thread ([`StreamHandle::graph_launch`]; the launcher room).
pub(crate) struct GraphLaunch {
    ctx: RawContext,
    exec: RawGraphExec,
    stream: RawStream,
}

impl GraphLaunch {
    /// Makes the launch.
    ///
    /// # Safety
    /// - The context is still retained, the graph and the stream alive; every address the
    ///   graph uses stays valid, and unshared in conflicting ways, until the stream has
    ///   passed the launch.
    pub(crate) unsafe fn run(self) -> Result<(), DriverError> {
        // SAFETY: the caller's duties.
        unsafe { driver::graph::launch(self.ctx, self.exec, self.stream) }
    }
}

pub(crate) struct GraphExec {
    ctx: Arc<Context>,
    kind: ExecKind,
    /// The recording it was instantiated from: its nodes name the kernels to update.
    _graph: GraphHandle,
}

enum ExecKind {
    Cuda { raw: RawGraphExec },
    Cpu(Arc<CpuGraph>),
}

impl GraphExec {
    /// Sets the parameter values of kernel node `node` (same function and shape).
    ///
    /// # Safety
    /// - `node` is a kernel node of this graph running `f` with this shape; `params[i]`
    ///   points to `sizes[i]` bytes, one value per parameter of `f`.
    /// - No launch of this graph is pending (callers hold it exclusively).
    #[allow(clippy::too_many_arguments)]
    pub(crate) unsafe fn set_kernel_params(
        &self,
        node: &GraphNode,
        f: FunctionHandle,
        grid: (u32, u32, u32),
        block: (u32, u32, u32),
        shared_mem_bytes: u32,
        params: &mut [*mut c_void],
        sizes: &[usize],
    ) -> Result<(), DriverError> {
        match (&self.kind, node, f) {
            (ExecKind::Cuda { raw }, GraphNode::Cuda(n), FunctionHandle::Cuda(func)) => {
                // SAFETY: both alive; the rest is the caller's duty.
                unsafe {
                    driver::graph::set_kernel_params(
                        self.ctx.cuda()?,
                        *raw,
                        *n,
                        func,
                        grid,
                        block,
                        shared_mem_bytes,
                        params,
                    )
                }
            }
            (ExecKind::Cpu(_), GraphNode::Cpu(op), _) => {
                // SAFETY: the caller's duty.
                op.set_values(unsafe { copy_values(params, sizes) });
                Ok(())
            }
            _ => Err(DriverError::from_code(400)),
        }
    }
}

impl GraphExec {
    /// Points copy node `node` at new addresses (same direction and shape).
    ///
    /// # Safety
    /// - `node` is a copy node of this graph between device memory of this context and host
    ///   memory in direction `dir`, with this shape.
    /// - `device` and `host` are valid for `span` (each on its side), and used by nothing
    ///   else in a conflicting way, until every later launch of the graph has finished.
    /// - No launch of this graph is pending (callers hold it exclusively).
    pub(crate) unsafe fn set_copy_params(
        &self,
        node: &GraphNode,
        dir: Direction,
        device: DevicePtr,
        host: *mut c_void,
        span: Span2d,
    ) -> Result<(), DriverError> {
        match (&self.kind, node) {
            (ExecKind::Cuda { raw }, GraphNode::Cuda(n)) => {
                // SAFETY: both alive; the rest is the caller's duty.
                unsafe { driver::graph::set_memcpy_params(self.ctx.cuda()?, *raw, *n, dir, device, host, span) }
            }
            (ExecKind::Cpu(_), GraphNode::CpuMem(op)) => {
                // SAFETY: the caller's duty is `MemOp::set`'s.
                unsafe { op.set(MemParams::Copy { dir, device, host: host as usize, span }) };
                Ok(())
            }
            _ => Err(DriverError::from_code(400)),
        }
    }
}

impl Drop for GraphExec {
    fn drop(&mut self) {
        if self.ctx.is_dead() {
            return; // the device was reset: the driver object is gone with the old context
        }
        if let ExecKind::Cuda { raw } = self.kind {
            // SAFETY: owned, destroyed once; executable graphs are dropped only with their
            // `Graph`, which no scope borrows any more, and scopes join the lanes they
            // replayed it on: no launch is pending.
            let destroyed = self.ctx.cuda().and_then(|ctx| unsafe { driver::graph::destroy_exec(ctx, raw) });
            if let Err(error) = destroyed {
                self.ctx.errors.record(Error::Free { what: "executable graph", error });
            }
        }
    }
}

/// A kernel, copy or fill node of a recorded graph (valid while the graph lives).
#[derive(Clone)]
pub(crate) enum GraphNode {
    Cuda(RawGraphNode),
    Cpu(Arc<KernelOp>),
    CpuMem(Arc<MemOp>),
}

impl std::fmt::Debug for StreamHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("StreamHandle").field(&self.id()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handles_cross_threads() {
        fn assert<T: Send + Sync>() {}
        assert::<Context>();
        assert::<StreamHandle>();
        assert::<Event>();
        assert::<Module>();
        assert::<FunctionHandle>();
        assert::<GraphExec>();
        assert::<GraphNode>();
    }

    #[test]
    fn the_cpu_context_is_shared_while_alive() {
        let (a, b) = (Context::cpu(), Context::cpu());
        assert_eq!(a.id(), b.id());
        assert!(a.is_cpu());
    }
}
