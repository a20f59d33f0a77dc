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
//! # What stays `unsafe`
//!
//! Creating, recording, waiting and destroying are safe: the handle is alive by
//! construction and the context by its `Arc`. Copies, fills, launches and stream-ordered
//! allocation stay `unsafe fn`s: they hand the driver addresses whose validity and
//! exclusivity only the ownership model above can vouch for.

use std::ffi::{c_void, CStr};
use std::sync::Arc;

use crate::driver::{
    self,
    mem::{Direction, Span2d},
    module::FuncAttribute,
    DevicePtr, DriverError, RawContext, RawDevice, RawEvent, RawFunction, RawGraph, RawGraphExec, RawGraphNode,
    RawHostPtr, RawModule, RawPool, RawStream,
};
use crate::error::{Error, ErrorLog, ORPHANED};

/// A device's retained primary context: released when the last handle made in it is gone.
pub(crate) struct Context {
    raw: RawContext,
    dev: RawDevice,
    /// Errors found while dropping handles of this context (and scopes' cleanup errors that
    /// could not be returned), kept for [`Gpu::take_errors`](crate::Gpu::take_errors).
    errors: ErrorLog,
}

impl Context {
    /// Retains `dev`'s primary context.
    pub(crate) fn retain(dev: RawDevice) -> Result<Arc<Context>, DriverError> {
        let raw = driver::device::retain_primary(dev)?;
        Ok(Arc::new(Context { raw, dev, errors: ErrorLog::new() }))
    }

    /// An identity for "which device does this memory belong to" checks: two `Gpu`s of
    /// one device share the primary context, and so the identity.
    pub(crate) fn id(&self) -> usize {
        self.raw.0 as usize
    }

    /// Errors recorded by handles of this context.
    pub(crate) fn errors(&self) -> &ErrorLog {
        &self.errors
    }

    /// Free and total device memory.
    pub(crate) fn mem_info(&self) -> Result<(usize, usize), DriverError> {
        // SAFETY: the context is retained while `self` lives.
        unsafe { driver::mem::info(self.raw) }
    }

    /// The device's default memory pool.
    pub(crate) fn default_pool(&self) -> Result<RawPool, DriverError> {
        // SAFETY: retained, and `dev` is the device this primary context belongs to.
        unsafe { driver::pool::default_pool(self.raw, self.dev) }
    }

    /// Sets `pool`'s release threshold (`CU_MEMPOOL_ATTR_RELEASE_THRESHOLD`).
    pub(crate) fn set_release_threshold(&self, pool: RawPool, bytes: u64) -> Result<(), DriverError> {
        // SAFETY: retained; `pool` came from `default_pool` of this context's device.
        unsafe { driver::pool::set_release_threshold(self.raw, pool, bytes) }
    }

    /// Returns `pool`'s unused reserved memory to the driver, keeping `keep` bytes.
    pub(crate) fn trim_pool(&self, pool: RawPool, keep: usize) -> Result<(), DriverError> {
        // SAFETY: as in `set_release_threshold`.
        unsafe { driver::pool::trim_to(self.raw, pool, keep) }
    }

    /// Page-locked host memory, `bytes` long.
    pub(crate) fn host_alloc(&self, bytes: usize) -> Result<RawHostPtr, DriverError> {
        // SAFETY: the context is retained while `self` lives.
        unsafe { driver::mem::host_alloc(self.raw, bytes) }
    }

    /// Frees page-locked host memory.
    ///
    /// # Safety
    /// - `ptr` came from [`host_alloc`](Context::host_alloc) on this context, is freed once,
    ///   and no copy using it is pending.
    pub(crate) unsafe fn host_free(&self, ptr: RawHostPtr) -> Result<(), DriverError> {
        // SAFETY: the context is retained; the rest is the caller's duty.
        unsafe { driver::mem::host_free(self.raw, ptr) }
    }
}

impl Drop for Context {
    fn drop(&mut self) {
        // SAFETY: paired with the retain in `Context::retain`; every handle made in this
        // context held an `Arc` to it, so none is left.
        if let Err(error) = unsafe { driver::device::release_primary(self.dev) } {
            // The last `Gpu` of the device is gone: keep the error process-wide.
            ORPHANED.record(Error::Free { what: "the primary context", error });
        }
        // What was recorded here and never taken is not lost either.
        for e in self.errors.take() {
            ORPHANED.record(e);
        }
    }
}

/// A CUDA stream (non-blocking: no implicit ordering with the legacy default stream),
/// destroyed on drop.
pub(crate) struct StreamHandle {
    ctx: Arc<Context>,
    raw: RawStream,
}

impl StreamHandle {
    pub(crate) fn create(ctx: &Arc<Context>) -> Result<StreamHandle, DriverError> {
        // SAFETY: the context is retained (the `Arc`).
        let raw = unsafe { driver::stream::create(ctx.raw) }?;
        Ok(StreamHandle { ctx: ctx.clone(), raw })
    }

    /// An identity for "was this fence recorded on this stream" checks.
    pub(crate) fn id(&self) -> usize {
        self.raw.0 as usize
    }

    /// Blocks this thread until the stream has run everything enqueued on it.
    pub(crate) fn synchronize(&self) -> Result<(), DriverError> {
        // SAFETY: the stream is alive and its context retained while `self` lives.
        unsafe { driver::stream::synchronize(self.ctx.raw, self.raw) }
    }

    /// Makes later work on this stream wait for `event`'s latest record (GPU-side).
    pub(crate) fn wait(&self, event: &Event) -> Result<(), DriverError> {
        // SAFETY: both are alive in the same context (callers only pair handles of one `Gpu`).
        unsafe { driver::stream::wait_event(self.ctx.raw, self.raw, event.raw) }
    }

    /// Copies between device memory and host memory on this stream.
    ///
    /// # Safety
    /// - `device` is memory of this context valid for `span` on the device, and `host` is
    ///   valid for `span` on the host, until the stream has passed the copy; nothing else
    ///   writes the destination, nor the source, meanwhile.
    pub(crate) unsafe fn copy(&self, dir: Direction, device: DevicePtr, host: *mut c_void, span: Span2d) -> Result<(), DriverError> {
        // SAFETY: stream alive, context retained; the memory is the caller's duty.
        unsafe { driver::mem::copy(self.ctx.raw, self.raw, dir, device, host, span) }
    }

    /// Sets `height` rows of `width_bytes` bytes, `pitch` bytes apart, to zero.
    ///
    /// # Safety
    /// - The rows are device memory of this context that this stream may write until it
    ///   has passed the fill.
    pub(crate) unsafe fn zero_2d(&self, dst: DevicePtr, pitch: usize, width_bytes: usize, height: usize) -> Result<(), DriverError> {
        // SAFETY: stream alive, context retained; the memory is the caller's duty.
        unsafe { driver::mem::zero_2d(self.ctx.raw, self.raw, dst, pitch, width_bytes, height) }
    }

    /// Launches `f` on this stream.
    ///
    /// # Safety
    /// - `f` belongs to a module of this context that stays loaded until the stream has
    ///   passed the launch.
    /// - `params` points to one value per kernel parameter, each of exactly its size.
    /// - Every device address among them stays valid, and unshared in conflicting ways,
    ///   until the stream has passed the launch.
    pub(crate) unsafe fn launch(
        &self,
        f: FunctionHandle,
        grid: (u32, u32, u32),
        block: (u32, u32, u32),
        shared_mem_bytes: u32,
        params: &mut [*mut c_void],
    ) -> Result<(), DriverError> {
        // SAFETY: stream alive, context retained; the rest is the caller's duty.
        unsafe { driver::launch(self.ctx.raw, f.0, self.raw, grid, block, shared_mem_bytes, params) }
    }

    /// Starts capturing this stream into a graph (nothing enqueued on it runs until the
    /// capture ends; see [`graph`](crate::graph)).
    ///
    /// # Safety
    /// - The driver has the graph entry points (`driver::graph::missing_symbol()` is `None`).
    pub(crate) unsafe fn begin_capture(&self) -> Result<(), DriverError> {
        // SAFETY: stream alive, context retained; symbols the caller's duty.
        unsafe { driver::graph::begin_capture(self.ctx.raw, self.raw) }
    }

    /// Ends the capture begun with [`begin_capture`](StreamHandle::begin_capture).
    ///
    /// # Safety
    /// - This stream is capturing (begun with `begin_capture`).
    pub(crate) unsafe fn end_capture(&self) -> Result<GraphHandle, DriverError> {
        // SAFETY: stream alive, context retained; the capture is the caller's duty.
        let raw = unsafe { driver::graph::end_capture(self.ctx.raw, self.raw) }?;
        Ok(GraphHandle { ctx: self.ctx.clone(), raw })
    }

    /// The graph node the last operation captured on this stream became.
    ///
    /// # Safety
    /// - This stream is capturing.
    pub(crate) unsafe fn last_captured_node(&self) -> Result<Option<GraphNode>, DriverError> {
        // SAFETY: stream alive, context retained; the capture is the caller's duty.
        unsafe { driver::graph::last_node(self.ctx.raw, self.raw) }.map(|n| n.map(GraphNode))
    }

    /// Launches an executable graph on this stream.
    ///
    /// # Safety
    /// - Every address the graph uses stays valid, and unshared in conflicting ways, until
    ///   this stream has passed the launch.
    pub(crate) unsafe fn launch_graph(&self, exec: &GraphExec) -> Result<(), DriverError> {
        // SAFETY: both alive in one context; the memory is the caller's duty.
        unsafe { driver::graph::launch(self.ctx.raw, exec.raw, self.raw) }
    }

    /// Enqueues an allocation of `bytes` from `pool` on this stream.
    ///
    /// # Safety
    /// - `pool` is a pool of this context's device.
    pub(crate) unsafe fn alloc_async(&self, pool: RawPool, bytes: usize) -> Result<DevicePtr, DriverError> {
        // SAFETY: stream alive, context retained; the pool is the caller's duty.
        unsafe { driver::mem::alloc_async(self.ctx.raw, pool, self.raw, bytes) }
    }

    /// Enqueues the return of `ptr` to its pool on this stream.
    ///
    /// # Safety
    /// - As [`driver::mem::free_async`]: `ptr` came from `alloc_async` in this context, is
    ///   freed once, and no work may use it after this point of the stream.
    pub(crate) unsafe fn free_async(&self, ptr: DevicePtr) -> Result<(), DriverError> {
        // SAFETY: stream alive, context retained; the rest is the caller's duty.
        unsafe { driver::mem::free_async(self.ctx.raw, self.raw, ptr) }
    }
}

impl Drop for StreamHandle {
    fn drop(&mut self) {
        // SAFETY: the stream is alive and used by no one after this (it is being dropped);
        // work still queued on it completes first (destroying a stream lets it drain).
        if let Err(error) = unsafe { driver::stream::destroy(self.ctx.raw, self.raw) } {
            self.ctx.errors.record(Error::Free { what: "stream", error });
        }
    }
}

/// A CUDA event (a fence's marker, or with timing a timestamp), destroyed on drop.
pub(crate) struct Event {
    ctx: Arc<Context>,
    raw: RawEvent,
    timing: bool,
}

impl Event {
    /// A new event; `timing` selects whether it records a timestamp (slower to record).
    pub(crate) fn create(ctx: &Arc<Context>, timing: bool) -> Result<Event, DriverError> {
        // SAFETY: the context is retained (the `Arc`).
        let raw = unsafe { driver::event::create(ctx.raw, timing) }?;
        Ok(Event { ctx: ctx.clone(), raw, timing })
    }

    /// Whether the event records timestamps.
    pub(crate) fn timing(&self) -> bool {
        self.timing
    }

    /// Records the event on `stream` (after everything enqueued there so far).
    pub(crate) fn record(&self, stream: &StreamHandle) -> Result<(), DriverError> {
        // SAFETY: both alive, in one context.
        unsafe { driver::event::record(self.ctx.raw, self.raw, stream.raw) }
    }

    /// Blocks this thread until the event's latest record has completed.
    pub(crate) fn synchronize(&self) -> Result<(), DriverError> {
        // SAFETY: alive while `self` lives.
        unsafe { driver::event::synchronize(self.ctx.raw, self.raw) }
    }

    /// Milliseconds from `earlier` to `self` (both timing events, both completed).
    pub(crate) fn elapsed_ms_since(&self, earlier: &Event) -> Result<f32, DriverError> {
        // SAFETY: both alive while borrowed.
        unsafe { driver::event::elapsed_ms(self.ctx.raw, earlier.raw, self.raw) }
    }
}

impl Drop for Event {
    fn drop(&mut self) {
        // SAFETY: the event is alive and no one records or synchronizes it after this;
        // waits already enqueued on it keep the record they saw.
        if let Err(error) = unsafe { driver::event::destroy(self.ctx.raw, self.raw) } {
            self.ctx.errors.record(Error::Free { what: "event", error });
        }
    }
}

/// A loaded module (PTX JIT-compiled by the driver), unloaded on drop.
pub(crate) struct Module {
    ctx: Arc<Context>,
    raw: RawModule,
}

impl Module {
    /// Loads a NUL-terminated PTX (or cubin) image.
    pub(crate) fn load(ctx: &Arc<Context>, image: &CStr) -> Result<Module, DriverError> {
        // SAFETY: the context is retained (the `Arc`); `image` outlives the call.
        let raw = unsafe { driver::module::load_data(ctx.raw, image) }?;
        Ok(Module { ctx: ctx.clone(), raw })
    }

    /// The kernel entry `name`. The handle is valid as long as this module is loaded.
    pub(crate) fn function(&self, name: &str) -> Result<FunctionHandle, DriverError> {
        // SAFETY: the module is loaded while `self` lives.
        unsafe { driver::module::function(self.ctx.raw, self.raw, name) }.map(FunctionHandle)
    }

    /// An attribute of `f`, a function of this module.
    pub(crate) fn attribute(&self, f: FunctionHandle, attr: FuncAttribute) -> Result<i32, DriverError> {
        // SAFETY: `f` came from `self.function` (callers pair them), loaded while `self` lives.
        unsafe { driver::module::attribute(self.ctx.raw, f.0, attr) }
    }
}

impl Drop for Module {
    fn drop(&mut self) {
        // SAFETY: modules are dropped only with their `Gpu` (the module cache lives in it):
        // no scope runs then (a scope holds a `Gpu` until it has joined its lanes), and
        // launches happen only in scopes, so no launch of this module is pending.
        if let Err(error) = unsafe { driver::module::unload(self.ctx.raw, self.raw) } {
            self.ctx.errors.record(Error::Free { what: "module", error });
        }
    }
}

/// A kernel entry of a loaded [`Module`]: valid while that module stays loaded, which the
/// module cache of its `Gpu` guarantees for as long as the `Gpu` (or a [`Function`](crate::Function)
/// holding one) lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct FunctionHandle(RawFunction);

/// A recorded CUDA graph, destroyed on drop (after its executable instance, which holds it
/// so that its kernel nodes stay valid for parameter updates).
pub(crate) struct GraphHandle {
    ctx: Arc<Context>,
    raw: RawGraph,
}

impl GraphHandle {
    /// Instantiates the graph for launching; the instance keeps the graph.
    pub(crate) fn instantiate(self) -> Result<GraphExec, DriverError> {
        // SAFETY: the graph is alive (owned here) in a retained context.
        let raw = unsafe { driver::graph::instantiate(self.ctx.raw, self.raw) }?;
        Ok(GraphExec { ctx: self.ctx.clone(), raw, graph: self })
    }
}

impl Drop for GraphHandle {
    fn drop(&mut self) {
        // SAFETY: owned, destroyed once; its instance (if any) was destroyed first (a
        // `GraphExec` holds its `GraphHandle` and drops it after its own `Drop`).
        if let Err(error) = unsafe { driver::graph::destroy(self.ctx.raw, self.raw) } {
            self.ctx.errors.record(Error::Free { what: "graph", error });
        }
    }
}

/// An executable graph, destroyed on drop.
pub(crate) struct GraphExec {
    ctx: Arc<Context>,
    raw: RawGraphExec,
    /// The recording it was instantiated from: its nodes name the kernels to update.
    graph: GraphHandle,
}

impl GraphExec {
    /// Sets the parameter values of kernel node `node` (same function and shape).
    ///
    /// # Safety
    /// - `node` is a kernel node of this graph running `f` with this shape; `params` holds
    ///   one value per parameter of `f`, each of its size.
    /// - No launch of this graph is pending (callers hold it exclusively).
    #[allow(clippy::too_many_arguments)]
    pub(crate) unsafe fn set_kernel_params(
        &self,
        node: GraphNode,
        f: FunctionHandle,
        grid: (u32, u32, u32),
        block: (u32, u32, u32),
        shared_mem_bytes: u32,
        params: &mut [*mut c_void],
    ) -> Result<(), DriverError> {
        let _ = &self.graph;
        // SAFETY: both alive; the rest is the caller's duty.
        unsafe { driver::graph::set_kernel_params(self.ctx.raw, self.raw, node.0, f.0, grid, block, shared_mem_bytes, params) }
    }
}

impl Drop for GraphExec {
    fn drop(&mut self) {
        // SAFETY: owned, destroyed once; executable graphs are dropped only with their
        // `Graph`, which no scope borrows any more, and scopes join the lanes they replayed it
        // on: no launch is pending.
        if let Err(error) = unsafe { driver::graph::destroy_exec(self.ctx.raw, self.raw) } {
            self.ctx.errors.record(Error::Free { what: "executable graph", error });
        }
    }
}

/// A node of a recorded graph (valid while the graph lives).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct GraphNode(RawGraphNode);

impl std::fmt::Debug for StreamHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("StreamHandle").field(&self.raw.0).finish()
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
}
