//! The driver room: the only module that calls the CUDA driver (rule 6 lives here).
//!
//! Everything below goes through `cudarc::driver::{sys, result}`, never cudarc's safe
//! layer: that layer tracks every array with events at run time, which is exactly the
//! hidden synchronization sluice replaces with types. One thin function per driver call,
//! grouped by object (`stream::create`, `event::record`, ...), each turning a `CUresult`
//! into a [`DriverError`]. Raw handles keep a `Raw`/`cu_` prefix so they never look like
//! their safe wrappers.
//!
//! # Rule 6: no device-wide synchronization
//!
//! This module has no binding for the context-wide synchronize call, and the `tidy` test
//! fails the build if one appears in `host/src` or `src`. The only blocking waits are
//! [`stream::synchronize`] (one stream) and [`event::synchronize`] (one event).
//!
//! Nor does it bind the synchronous device allocator: `cuMemFree` waits for the whole
//! device and `cuMemAlloc` can serialise streams. Device memory comes from the
//! stream-ordered allocator instead ([`mem::alloc_async`], [`mem::free_async`], from the
//! device's default [`pool`]); the `tidy` test rejects the synchronous calls too. Pinned
//! host memory (`cuMemHostRegister`/`cuMemHostUnregister`) has no stream-ordered form and may
//! serialise the device: it is meant to be allocated outside hot loops.
//!
//! # Contexts
//!
//! Every call that needs a current context first makes sluice's context current on the
//! calling thread ([`bind`]), so lanes may be entered from any thread. The check is one
//! `cuCtxGetCurrent` (a thread-local read in the driver); the context is switched only
//! when another one is current.

use std::ffi::{c_int, c_uint, c_void, CStr};
use std::fmt;
use std::mem::MaybeUninit;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;

use cudarc::driver::{result, sys};

/// A CUDA driver error code, kept raw; its name and message are looked up when displayed.
///
/// The std analogue is [`std::io::Error::raw_os_error`]: a small `Copy` value that says
/// exactly what the driver said. [`crate::Error`] wraps it with the step that failed.
///
/// ```
/// # use sluice_host as sluice;
/// use sluice::DriverError;
/// let e = DriverError::from_code(2); // CUDA_ERROR_OUT_OF_MEMORY
/// assert_eq!(e.code(), 2);
/// assert_eq!(e.name(), "CUDA_ERROR_OUT_OF_MEMORY");
/// assert!(e.to_string().starts_with("CUDA_ERROR_OUT_OF_MEMORY (2)"));
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct DriverError(sys::CUresult);

impl DriverError {
    /// The raw `CUresult` code.
    ///
    /// ```
    /// # use sluice_host as sluice;
    /// assert_eq!(sluice::DriverError::from_code(700).code(), 700); // CUDA_ERROR_ILLEGAL_ADDRESS
    /// ```
    pub fn code(self) -> u32 {
        self.0 as u32
    }

    /// The error for a raw `CUresult` code; codes this build of sluice does not know become
    /// `CUDA_ERROR_UNKNOWN` (999).
    ///
    /// ```
    /// # use sluice_host as sluice;
    /// use sluice::DriverError;
    /// assert_eq!(DriverError::from_code(1).name(), "CUDA_ERROR_INVALID_VALUE");
    /// assert_eq!(DriverError::from_code(123_456).code(), 999);
    /// ```
    pub fn from_code(code: u32) -> DriverError {
        // Look the code up among the enum's values rather than transmuting: a code this
        // build does not know must not become an invalid enum value.
        const KNOWN: &[sys::CUresult] = &[
            sys::CUresult::CUDA_SUCCESS,
            sys::CUresult::CUDA_ERROR_INVALID_VALUE,
            sys::CUresult::CUDA_ERROR_OUT_OF_MEMORY,
            sys::CUresult::CUDA_ERROR_NOT_INITIALIZED,
            sys::CUresult::CUDA_ERROR_DEINITIALIZED,
            sys::CUresult::CUDA_ERROR_NO_DEVICE,
            sys::CUresult::CUDA_ERROR_INVALID_DEVICE,
            sys::CUresult::CUDA_ERROR_INVALID_PTX,
            sys::CUresult::CUDA_ERROR_UNSUPPORTED_PTX_VERSION,
            sys::CUresult::CUDA_ERROR_INVALID_CONTEXT,
            sys::CUresult::CUDA_ERROR_INVALID_HANDLE,
            sys::CUresult::CUDA_ERROR_NOT_FOUND,
            sys::CUresult::CUDA_ERROR_NOT_READY,
            sys::CUresult::CUDA_ERROR_ILLEGAL_ADDRESS,
            sys::CUresult::CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES,
            sys::CUresult::CUDA_ERROR_LAUNCH_TIMEOUT,
            sys::CUresult::CUDA_ERROR_CONTEXT_IS_DESTROYED,
            sys::CUresult::CUDA_ERROR_ASSERT,
            sys::CUresult::CUDA_ERROR_HARDWARE_STACK_ERROR,
            sys::CUresult::CUDA_ERROR_ILLEGAL_INSTRUCTION,
            sys::CUresult::CUDA_ERROR_MISALIGNED_ADDRESS,
            sys::CUresult::CUDA_ERROR_INVALID_ADDRESS_SPACE,
            sys::CUresult::CUDA_ERROR_INVALID_PC,
            sys::CUresult::CUDA_ERROR_LAUNCH_FAILED,
            sys::CUresult::CUDA_ERROR_TENSOR_MEMORY_LEAK,
            sys::CUresult::CUDA_ERROR_CONTAINED,
            sys::CUresult::CUDA_ERROR_EXTERNAL_DEVICE,
            sys::CUresult::CUDA_ERROR_MPS_CLIENT_TERMINATED,
            sys::CUresult::CUDA_ERROR_ECC_UNCORRECTABLE,
            sys::CUresult::CUDA_ERROR_INVALID_IMAGE,
            sys::CUresult::CUDA_ERROR_NO_BINARY_FOR_GPU,
            sys::CUresult::CUDA_ERROR_NOT_SUPPORTED,
            sys::CUresult::CUDA_ERROR_NOT_PERMITTED,
            sys::CUresult::CUDA_ERROR_UNKNOWN,
        ];
        let found = KNOWN.iter().copied().find(|r| *r as u32 == code);
        DriverError(found.unwrap_or(sys::CUresult::CUDA_ERROR_UNKNOWN))
    }

    /// The code's name, such as `CUDA_ERROR_OUT_OF_MEMORY` (needs no driver).
    ///
    /// ```
    /// # use sluice_host as sluice;
    /// assert_eq!(sluice::DriverError::from_code(600).name(), "CUDA_ERROR_NOT_READY");
    /// ```
    pub fn name(self) -> String {
        format!("{:?}", self.0)
    }

    /// The driver's description of the code, when the driver is loaded.
    ///
    /// ```
    /// # use sluice_host as sluice;
    /// // `None` where no driver is loaded; the driver's sentence otherwise.
    /// let m = sluice::DriverError::from_code(2).message();
    /// # let _ = m;
    /// ```
    pub fn message(self) -> Option<String> {
        if !DRIVER_LOADED.load(Ordering::Acquire) {
            return None;
        }
        let mut s = MaybeUninit::<*const std::ffi::c_char>::uninit();
        // SAFETY: DRIVER_LOADED is set only after `init` checked that libcuda loads and
        // exports `cuGetErrorString`; the out-pointer is valid for one write.
        let r = unsafe { sys::cuGetErrorString(self.0, s.as_mut_ptr()) };
        if r != sys::CUresult::CUDA_SUCCESS {
            return None;
        }
        // SAFETY: on success the driver wrote a pointer to a static NUL-terminated string
        // (or null, checked here).
        let p = unsafe { s.assume_init() };
        if p.is_null() {
            return None;
        }
        // SAFETY: non-null, NUL-terminated, static storage owned by the driver.
        Some(unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
    }

    /// `CUDA_ERROR_NOT_FOUND` (e.g. no such kernel entry in a module).
    pub(crate) fn is_not_found(self) -> bool {
        self.0 == sys::CUresult::CUDA_ERROR_NOT_FOUND
    }

    /// `CUDA_ERROR_UNSUPPORTED_PTX_VERSION`: the PTX is newer than the driver understands.
    pub(crate) fn is_unsupported_ptx_version(self) -> bool {
        self.0 == sys::CUresult::CUDA_ERROR_UNSUPPORTED_PTX_VERSION
    }

    /// `CUDA_ERROR_NO_DEVICE`: a driver, but no CUDA device.
    pub(crate) fn is_no_device(self) -> bool {
        self.0 == sys::CUresult::CUDA_ERROR_NO_DEVICE
    }

    /// Whether the error is *sticky*: the context it came from is lost. After such an error
    /// (a fault in a kernel: an illegal address or instruction, a misaligned access, a trap
    /// or device-side assert, a hardware error the GPU contained, ...) no work runs in the
    /// context any more and every later call returns the same error; CUDA's documentation
    /// says the process must be restarted to use the device again.
    ///
    /// sluice relies on it at the end of a [`scope`](crate::scope): a lane that cannot be
    /// joined may be given up (and the scope return its error) only when nothing can run
    /// on it any more.
    ///
    /// ```
    /// # use sluice_host as sluice;
    /// use sluice::DriverError;
    /// assert!(DriverError::from_code(700).is_sticky()); // CUDA_ERROR_ILLEGAL_ADDRESS
    /// assert!(DriverError::from_code(719).is_sticky()); // CUDA_ERROR_LAUNCH_FAILED
    /// assert!(!DriverError::from_code(2).is_sticky()); // CUDA_ERROR_OUT_OF_MEMORY
    /// assert!(!DriverError::from_code(1).is_sticky()); // CUDA_ERROR_INVALID_VALUE
    /// ```
    pub fn is_sticky(self) -> bool {
        use sys::CUresult::*;
        // Each of these is documented in `cuda.h` as leaving "the process in an inconsistent
        // state" (or the context destroyed / unusable): the context runs nothing any more.
        // Errors whose documentation does not say so (ECC, NVLink, out of resources, ...)
        // are deliberately absent: treating a live context as dead would be unsound.
        matches!(
            self.0,
            CUDA_ERROR_ILLEGAL_ADDRESS
                | CUDA_ERROR_LAUNCH_TIMEOUT
                | CUDA_ERROR_CONTEXT_IS_DESTROYED
                | CUDA_ERROR_ASSERT
                | CUDA_ERROR_HARDWARE_STACK_ERROR
                | CUDA_ERROR_ILLEGAL_INSTRUCTION
                | CUDA_ERROR_MISALIGNED_ADDRESS
                | CUDA_ERROR_INVALID_ADDRESS_SPACE
                | CUDA_ERROR_INVALID_PC
                | CUDA_ERROR_LAUNCH_FAILED
                | CUDA_ERROR_TENSOR_MEMORY_LEAK
                | CUDA_ERROR_CONTAINED
                | CUDA_ERROR_EXTERNAL_DEVICE
                | CUDA_ERROR_MPS_CLIENT_TERMINATED
        )
    }

    /// An error sluice reports itself, with the driver's code for it.
    pub(crate) fn not_supported() -> DriverError {
        DriverError(sys::CUresult::CUDA_ERROR_NOT_SUPPORTED)
    }

    pub(crate) fn is_out_of_memory(self) -> bool {
        self.0 == sys::CUresult::CUDA_ERROR_OUT_OF_MEMORY
    }
}

impl From<result::DriverError> for DriverError {
    fn from(e: result::DriverError) -> Self {
        DriverError(e.0)
    }
}

impl fmt::Display for DriverError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.name(), self.code())?;
        if let Some(m) = self.message() {
            write!(f, ": {m}")?;
        }
        Ok(())
    }
}

impl fmt::Debug for DriverError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "DriverError({}, {})", self.name(), self.code())
    }
}

impl std::error::Error for DriverError {}

/// What `init` found wrong before any driver call could fail.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum InitError {
    /// `libcuda` cannot be loaded.
    NoDriver,
    /// `libcuda` lacks a symbol sluice calls.
    MissingSymbol(&'static str),
    /// `cuInit` or `cuDriverGetVersion` failed.
    Driver(DriverError),
    /// The driver is older than sluice's minimum.
    TooOld { found: u32 },
}

/// Set once `init` has verified the library and its symbols: from then on `sys` calls
/// cannot hit cudarc's "library not found" / "missing symbol" panics.
static DRIVER_LOADED: AtomicBool = AtomicBool::new(false);

/// The oldest driver sluice runs on (CUDA 11.4, as cudarc).
pub(crate) const MIN_DRIVER: u32 = 11040;

/// Every driver entry point sluice calls, checked before the first call (cudarc's
/// dynamic loading would panic on a missing one).
const SYMBOLS: &[&str] = &[
    "cuInit",
    "cuDriverGetVersion",
    "cuGetErrorName",
    "cuGetErrorString",
    "cuDeviceGetCount",
    "cuDeviceGet",
    "cuDeviceGetName",
    "cuDeviceGetAttribute",
    "cuDeviceTotalMem_v2",
    "cuDevicePrimaryCtxRetain",
    "cuDevicePrimaryCtxRelease_v2",
    "cuCtxGetCurrent",
    "cuCtxSetCurrent",
    "cuStreamCreate",
    "cuStreamSynchronize",
    "cuStreamDestroy_v2",
    "cuStreamWaitEvent",
    "cuEventCreate",
    "cuEventRecord",
    "cuEventSynchronize",
    "cuEventDestroy_v2",
    "cuDeviceGetDefaultMemPool",
    "cuMemPoolSetAttribute",
    "cuMemPoolTrimTo",
    "cuMemAllocFromPoolAsync",
    "cuMemFreeAsync",
    "cuMemHostRegister_v2",
    "cuMemHostUnregister",
    "cuMemHostGetDevicePointer_v2",
    "cuMemcpyHtoD_v2",
    "cuMemGetInfo_v2",
    "cuMemcpyHtoDAsync_v2",
    "cuMemcpyDtoHAsync_v2",
    "cuMemcpy2DAsync_v2",
    "cuMemsetD2D8Async",
    "cuModuleLoadData",
    "cuModuleGetFunction",
    "cuModuleGetGlobal_v2",
    "cuModuleUnload",
    "cuFuncGetAttribute",
    "cuLaunchKernel",
];

/// Whether the loaded driver exports `symbol` (for entry points only some calls need, so
/// that their absence fails those calls, not `init`).
pub(crate) fn has_symbol(symbol: &str) -> bool {
    if !DRIVER_LOADED.load(Ordering::Acquire) {
        return false;
    }
    // SAFETY: DRIVER_LOADED means `init` opened the library, so `culib` does not panic;
    // `get` only looks the symbol up.
    unsafe { sys::culib().get::<*const c_void>(symbol.as_bytes()) }.is_ok()
}

/// [`has_symbol`] for a literal name, looked up once per call site (each lookup is a
/// `dlsym`, with an allocation for the name: microseconds where a submission asks several
/// times). Before the driver is loaded the answer is `false` and nothing is kept.
macro_rules! has_symbol_once {
    ($name:literal) => {{
        static FOUND: OnceLock<bool> = OnceLock::new();
        match FOUND.get() {
            Some(&found) => found,
            None if DRIVER_LOADED.load(Ordering::Acquire) => *FOUND.get_or_init(|| has_symbol($name)),
            None => false,
        }
    }};
}

/// Loads the driver, checks its symbols and version, runs `cuInit` (once per process;
/// later calls return the first result). Returns the driver version (e.g. 13000).
pub(crate) fn init() -> Result<u32, InitError> {
    static INIT: OnceLock<Result<u32, InitError>> = OnceLock::new();
    *INIT.get_or_init(|| {
        // SAFETY: only probes whether a `libcuda` can be opened; no symbol is called.
        if !unsafe { sys::is_culib_present() } {
            return Err(InitError::NoDriver);
        }
        // SAFETY: `is_culib_present` just opened the library, so `culib` will not panic;
        // `get` only looks symbols up (the pointer type is never called through).
        let lib = unsafe { sys::culib() };
        for name in SYMBOLS {
            // SAFETY: as above, a lookup only.
            if unsafe { lib.get::<*const c_void>(name.as_bytes()) }.is_err() {
                return Err(InitError::MissingSymbol(name));
            }
        }
        DRIVER_LOADED.store(true, Ordering::Release);
        let mut version = 0 as c_int;
        // SAFETY: the symbol exists (checked above); the out-pointer is valid.
        check(unsafe { sys::cuDriverGetVersion(&mut version) }).map_err(InitError::Driver)?;
        let version = version.max(0) as u32;
        if version < MIN_DRIVER {
            return Err(InitError::TooOld { found: version });
        }
        result::init().map_err(|e| InitError::Driver(e.into()))?;
        STREAM_CONTEXT.store(version >= STREAM_CONTEXT_FROM, Ordering::Relaxed);
        Ok(version)
    })
}

fn check(r: sys::CUresult) -> Result<(), DriverError> {
    match r {
        sys::CUresult::CUDA_SUCCESS => Ok(()),
        e => Err(DriverError(e)),
    }
}

/// Declares a `Copy` raw-handle newtype that may cross threads.
macro_rules! raw_handle {
    ($(#[$doc:meta])* $name:ident($ty:ty)) => {
        $(#[$doc])*
        #[derive(Clone, Copy, PartialEq, Eq, Debug)]
        pub(crate) struct $name(pub(crate) $ty);
        // SAFETY: the CUDA driver API is thread-safe: its handles may be used from any
        // thread (the driver serialises what needs it). sluice's own rules decide *when*
        // a handle may be used; which thread uses it does not matter.
        unsafe impl Send for $name {}
        // SAFETY: as for `Send`: a shared handle only allows driver calls, which are thread-safe.
        unsafe impl Sync for $name {}
    };
}

raw_handle!(
    /// A retained primary context.
    RawContext(sys::CUcontext)
);
raw_handle!(
    /// A stream (a lane's queue).
    RawStream(sys::CUstream)
);
raw_handle!(
    /// An event (a fence's marker).
    RawEvent(sys::CUevent)
);
raw_handle!(
    /// A loaded module.
    RawModule(sys::CUmodule)
);
raw_handle!(
    /// A kernel entry in a loaded module.
    RawFunction(sys::CUfunction)
);
raw_handle!(
    /// Page-locked host memory (host memory registered with `cuMemHostRegister`).
    RawHostPtr(*mut c_void)
);
raw_handle!(
    /// A memory pool of the stream-ordered allocator (`cuMemAllocFromPoolAsync`).
    RawPool(sys::CUmemoryPool)
);
raw_handle!(
    /// A CUDA graph (the recording).
    RawGraph(sys::CUgraph)
);
raw_handle!(
    /// An instantiated (executable) graph.
    RawGraphExec(sys::CUgraphExec)
);
raw_handle!(
    /// A node of a graph.
    RawGraphNode(sys::CUgraphNode)
);

/// A device address (`CUdeviceptr`).
pub(crate) type DevicePtr = sys::CUdeviceptr;

/// A device ordinal handle (`CUdevice`).
pub(crate) type RawDevice = sys::CUdevice;

/// Whether a call on a stream may skip making the stream's context current: the driver
/// takes the context from the stream (set by `init`, from [`STREAM_CONTEXT_FROM`] on).
static STREAM_CONTEXT: AtomicBool = AtomicBool::new(false);

/// The first driver version known to run a launch, an event record and a stream's wait for
/// an event in the stream's own context whatever context is current on the thread (another
/// context of the same device, or none): `benches/cuda/ctx_probe.cu` on driver 580 (CUDA
/// 13.0) — every call succeeded and every launch wrote the stream's context's buffer.
/// Older drivers make the context current first, as every other call does.
const STREAM_CONTEXT_FROM: u32 = 13000;

/// Runs `call`, a call on a stream of `ctx` (a launch, an event record, a wait), without the
/// `cuCtxGetCurrent` that [`bind`] costs where the driver takes the context from the stream
/// (see [`STREAM_CONTEXT_FROM`]). Should it fail with an invalid context or handle, `ctx` is
/// made current and, if it was not already, `call` runs again: a failed call enqueued
/// nothing, and a driver that wanted the context current gets it — the same result as
/// binding first. Any other error is the call's.
///
/// # Safety
/// - `ctx` is a retained context that has not been released, and the stream `call` names is
///   one of its streams.
#[inline]
unsafe fn on_stream(ctx: RawContext, mut call: impl FnMut() -> sys::CUresult) -> Result<(), DriverError> {
    if STREAM_CONTEXT.load(Ordering::Relaxed) {
        let first = call();
        if first == sys::CUresult::CUDA_SUCCESS {
            return Ok(());
        }
        // SAFETY: the caller's duties, passed on.
        return unsafe { retry_bound(ctx, first, call) };
    }
    // SAFETY: caller's duty.
    unsafe { bind(ctx) }?;
    check(call())
}

/// [`on_stream`]'s call failed with `first`: if that may be the context's doing (an invalid
/// context or handle), makes `ctx` current and calls again, unless it was current; else
/// `first` is the answer.
///
/// # Safety
/// - As [`on_stream`]: `ctx` is retained and not released, `call` names one of its streams.
#[cold]
#[inline(never)]
unsafe fn retry_bound(
    ctx: RawContext,
    first: sys::CUresult,
    mut call: impl FnMut() -> sys::CUresult,
) -> Result<(), DriverError> {
    use sys::CUresult::{CUDA_ERROR_CONTEXT_IS_DESTROYED, CUDA_ERROR_INVALID_CONTEXT, CUDA_ERROR_INVALID_HANDLE};
    if !matches!(first, CUDA_ERROR_INVALID_CONTEXT | CUDA_ERROR_INVALID_HANDLE | CUDA_ERROR_CONTEXT_IS_DESTROYED) {
        return Err(DriverError(first));
    }
    let mut cur = MaybeUninit::<sys::CUcontext>::uninit();
    // SAFETY: `init` verified the symbol; the out-pointer is valid for one write.
    check(unsafe { sys::cuCtxGetCurrent(cur.as_mut_ptr()) })?;
    // SAFETY: written by the successful call above.
    if unsafe { cur.assume_init() } == ctx.0 {
        return Err(DriverError(first));
    }
    // SAFETY: `ctx` is retained (this function's caller's duty).
    check(unsafe { sys::cuCtxSetCurrent(ctx.0) })?;
    check(call())
}

/// Makes `ctx` current on this thread unless it already is.
///
/// # Safety
/// - `ctx` is a retained context that has not been released.
pub(crate) unsafe fn bind(ctx: RawContext) -> Result<(), DriverError> {
    let mut cur = MaybeUninit::<sys::CUcontext>::uninit();
    // SAFETY: `init` verified the symbol; the out-pointer is valid for one write.
    check(unsafe { sys::cuCtxGetCurrent(cur.as_mut_ptr()) })?;
    // SAFETY: written by the successful call above.
    if unsafe { cur.assume_init() } == ctx.0 {
        return Ok(());
    }
    // SAFETY: `ctx` is retained (caller's duty).
    check(unsafe { sys::cuCtxSetCurrent(ctx.0) })
}

pub(crate) mod device {
    //! `cuDevice*` and the primary context.
    use super::*;

    pub(crate) use sys::CUdevice_attribute as Attribute;

    pub(crate) fn count() -> Result<usize, DriverError> {
        let mut n = 0 as c_int;
        // SAFETY: callers ran `init` (the only way to reach this module); valid out-pointer.
        check(unsafe { sys::cuDeviceGetCount(&mut n) })?;
        Ok(n.max(0) as usize)
    }

    pub(crate) fn get(ordinal: usize) -> Result<RawDevice, DriverError> {
        let mut d = MaybeUninit::uninit();
        let ordinal = c_int::try_from(ordinal).map_err(|_| DriverError(sys::CUresult::CUDA_ERROR_INVALID_DEVICE))?;
        // SAFETY: valid out-pointer; the driver checks the ordinal.
        check(unsafe { sys::cuDeviceGet(d.as_mut_ptr(), ordinal) })?;
        // SAFETY: written by the successful call.
        Ok(unsafe { d.assume_init() })
    }

    pub(crate) fn name(dev: RawDevice) -> Result<String, DriverError> {
        let mut buf = [0u8; 256];
        // SAFETY: `buf` holds `len` writable bytes; the driver NUL-terminates within them.
        check(unsafe { sys::cuDeviceGetName(buf.as_mut_ptr().cast(), buf.len() as c_int, dev) })?;
        let end = buf.iter().position(|b| *b == 0).unwrap_or(buf.len());
        Ok(String::from_utf8_lossy(&buf[..end]).into_owned())
    }

    pub(crate) fn attribute(dev: RawDevice, attr: Attribute) -> Result<i32, DriverError> {
        let mut v = 0 as c_int;
        // SAFETY: valid out-pointer; `dev` came from `get`.
        check(unsafe { sys::cuDeviceGetAttribute(&mut v, attr, dev) })?;
        Ok(v)
    }

    pub(crate) fn total_mem(dev: RawDevice) -> Result<usize, DriverError> {
        let mut v = 0usize;
        // SAFETY: valid out-pointer; `dev` came from `get`.
        check(unsafe { sys::cuDeviceTotalMem_v2(&mut v, dev) })?;
        Ok(v)
    }

    pub(crate) fn retain_primary(dev: RawDevice) -> Result<RawContext, DriverError> {
        let mut c = MaybeUninit::uninit();
        // SAFETY: valid out-pointer; `dev` came from `get`.
        check(unsafe { sys::cuDevicePrimaryCtxRetain(c.as_mut_ptr(), dev) })?;
        // SAFETY: written by the successful call.
        Ok(RawContext(unsafe { c.assume_init() }))
    }

    /// Destroys every allocation, module and stream of `dev`'s primary context and resets it:
    /// the way back after a sticky error. `Err(not supported)` where the driver lacks it.
    ///
    /// # Safety
    /// - Nothing of the context is used after this (its handles are dead).
    pub(crate) unsafe fn reset_primary(dev: RawDevice) -> Result<(), DriverError> {
        if !has_symbol_once!("cuDevicePrimaryCtxReset_v2") {
            return Err(DriverError::not_supported());
        }
        // SAFETY: the caller's duty; the symbol exists (checked above).
        check(unsafe { sys::cuDevicePrimaryCtxReset_v2(dev) })
    }

    /// # Safety
    /// - One release per successful `retain_primary`, after every use of the context.
    pub(crate) unsafe fn release_primary(dev: RawDevice) -> Result<(), DriverError> {
        // SAFETY: the caller pairs it with a retain.
        check(unsafe { sys::cuDevicePrimaryCtxRelease_v2(dev) })
    }
}

pub(crate) mod mem {
    //! Allocation and copies (`cuMem*`).
    use super::*;

    /// # Safety
    /// - `ctx` is retained.
    pub(crate) unsafe fn info(ctx: RawContext) -> Result<(usize, usize), DriverError> {
        // SAFETY: caller's duty.
        unsafe { bind(ctx) }?;
        let (mut free, mut total) = (0usize, 0usize);
        // SAFETY: valid out-pointers, context current.
        check(unsafe { sys::cuMemGetInfo_v2(&mut free, &mut total) })?;
        Ok((free, total))
    }

    /// Enqueues an allocation of `bytes` from `pool` on `stream` (stream-ordered: the memory
    /// may be used by other streams only once `stream` has passed the allocation).
    ///
    /// Device memory is allocated and freed only this way, never with the synchronous
    /// allocator, whose free waits for the whole device ([rule 6](crate#safety-model)).
    ///
    /// # Safety
    /// - `ctx` is retained, `pool` is one of its device's pools, `stream` alive in `ctx`.
    pub(crate) unsafe fn alloc_async(
        ctx: RawContext,
        pool: RawPool,
        stream: RawStream,
        bytes: usize,
    ) -> Result<DevicePtr, DriverError> {
        // SAFETY: caller's duty.
        unsafe { bind(ctx) }?;
        let mut p = 0 as DevicePtr;
        // SAFETY: valid out-pointer, context current, pool and stream alive (caller's duty).
        check(unsafe { sys::cuMemAllocFromPoolAsync(&mut p, bytes, pool.0, stream.0) })?;
        Ok(p)
    }

    /// Enqueues the return of `ptr` to its pool on `stream`: once `stream` reaches the free,
    /// the pool may hand the memory out again. Does not block, waits for no other stream.
    ///
    /// # Safety
    /// - `ptr` came from `alloc_async` in `ctx`, is freed once, and `stream` is alive.
    /// - Every access to the memory, on any stream, has completed (or is ordered before this
    ///   point of `stream`): nothing may use it after the free.
    pub(crate) unsafe fn free_async(ctx: RawContext, stream: RawStream, ptr: DevicePtr) -> Result<(), DriverError> {
        // SAFETY: caller's duty.
        unsafe { bind(ctx) }?;
        // SAFETY: caller's duty.
        check(unsafe { sys::cuMemFreeAsync(ptr, stream.0) })
    }

    /// Page-locks `bytes` of host memory at `ptr` (portable across contexts), so that copies
    /// to and from it run asynchronously at full speed. The memory stays the caller's: a lost
    /// or reset context unpins it but never frees it.
    ///
    /// # Safety
    /// - `ctx` is retained; `ptr` is valid for `bytes` bytes until unregistered.
    pub(crate) unsafe fn host_register(ctx: RawContext, ptr: *mut c_void, bytes: usize) -> Result<(), DriverError> {
        // SAFETY: caller's duty.
        unsafe { bind(ctx) }?;
        // SAFETY: caller's duty.
        check(unsafe { sys::cuMemHostRegister_v2(ptr, bytes, sys::CU_MEMHOSTREGISTER_PORTABLE) })
    }

    /// Whether the driver knows host address `ptr`: page-locked (`cuMemHostAlloc`,
    /// `cuMemHostRegister`) or managed memory, from which a copy to the device runs
    /// asynchronously and reads the source later. `false` for pageable memory, which an
    /// asynchronous copy to the device stages into the driver's own buffer before it returns
    /// (CUDA's documented behaviour for `cuMemcpyHtoDAsync` from pageable memory).
    ///
    /// # Safety
    /// - `ctx` is retained.
    pub(crate) unsafe fn host_is_driver_memory(ctx: RawContext, ptr: *const c_void) -> Result<bool, DriverError> {
        // SAFETY: caller's duty.
        unsafe { bind(ctx) }?;
        let mut kind: u32 = 0;
        // SAFETY: `kind` is a valid out-pointer of the attribute's size (an `unsigned int`);
        // the address is only looked up, never accessed.
        let r = unsafe {
            sys::cuPointerGetAttribute(
                (&mut kind as *mut u32).cast(),
                sys::CUpointer_attribute::CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                ptr as sys::CUdeviceptr,
            )
        };
        match r {
            sys::CUresult::CUDA_SUCCESS => Ok(true),
            // An address the driver does not know: pageable host memory.
            sys::CUresult::CUDA_ERROR_INVALID_VALUE => Ok(false),
            other => Err(DriverError::from_code(other as u32)),
        }
    }

    /// Page-locks `bytes` at `ptr` and maps them into the device's address space: kernels
    /// can then write this host memory directly, and what they wrote stays readable by the
    /// host after the context is lost. Returns the device address of `ptr`.
    ///
    /// # Safety
    /// - `ctx` is retained; `ptr` is valid for `bytes` bytes until unregistered.
    pub(crate) unsafe fn host_register_mapped(
        ctx: RawContext,
        ptr: *mut c_void,
        bytes: usize,
    ) -> Result<DevicePtr, DriverError> {
        // SAFETY: caller's duty.
        unsafe { bind(ctx) }?;
        let flags = sys::CU_MEMHOSTREGISTER_PORTABLE | sys::CU_MEMHOSTREGISTER_DEVICEMAP;
        // SAFETY: caller's duty.
        check(unsafe { sys::cuMemHostRegister_v2(ptr, bytes, flags) })?;
        let mut d = MaybeUninit::uninit();
        // SAFETY: `ptr` was just registered with DEVICEMAP; valid out-pointer.
        match check(unsafe { sys::cuMemHostGetDevicePointer_v2(d.as_mut_ptr(), ptr, 0) }) {
            // SAFETY: written by the successful call.
            Ok(()) => Ok(unsafe { d.assume_init() }),
            Err(e) => {
                // SAFETY: registered just above, unregistered once.
                let _ = unsafe { sys::cuMemHostUnregister(ptr) };
                Err(e)
            }
        }
    }

    /// Copies `src` to device address `dst` synchronously (through the legacy default
    /// stream, which sluice's non-blocking lanes never wait for).
    ///
    /// # Safety
    /// - `ctx` is retained; `dst` is device memory of `ctx` valid for `src.len()` bytes that no
    ///   running work reads or writes.
    pub(crate) unsafe fn copy_to_device_sync(ctx: RawContext, dst: DevicePtr, src: &[u8]) -> Result<(), DriverError> {
        // SAFETY: caller's duty.
        unsafe { bind(ctx) }?;
        // SAFETY: `src` is valid for its length; `dst` the caller's duty.
        check(unsafe { sys::cuMemcpyHtoD_v2(dst, src.as_ptr().cast(), src.len()) })
    }

    /// Unpins memory pinned by [`host_register`].
    ///
    /// # Safety
    /// - `ptr` was registered in `ctx` and is unregistered once; no copy using it is pending.
    pub(crate) unsafe fn host_unregister(ctx: RawContext, ptr: *mut c_void) -> Result<(), DriverError> {
        // SAFETY: caller's duty.
        unsafe { bind(ctx) }?;
        // SAFETY: caller's duty.
        check(unsafe { sys::cuMemHostUnregister(ptr) })
    }

    /// One description of a (possibly pitched) copy: `height` rows of `width_bytes`,
    /// `pitch` bytes apart on each side.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub(crate) struct Span2d {
        pub width_bytes: usize,
        pub height: usize,
        pub device_pitch: usize,
        pub host_pitch: usize,
    }

    /// Which way a copy goes.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub(crate) enum Direction {
        /// Device memory to (pinned) host memory.
        DeviceToHost,
        /// Host memory to device memory.
        HostToDevice,
    }

    /// The one 2-D copy descriptor: `span.height` rows of `span.width_bytes` between a
    /// device address and a host pointer, each side with its own pitch.
    pub(super) fn memcpy2d(dir: Direction, device: DevicePtr, host: *mut c_void, span: Span2d) -> sys::CUDA_MEMCPY2D {
        let (host_type, device_type) = (sys::CUmemorytype::CU_MEMORYTYPE_HOST, sys::CUmemorytype::CU_MEMORYTYPE_DEVICE);
        let mut p = sys::CUDA_MEMCPY2D {
            srcXInBytes: 0,
            srcY: 0,
            srcMemoryType: device_type,
            srcHost: std::ptr::null(),
            srcDevice: 0,
            srcArray: std::ptr::null_mut(),
            srcPitch: 0,
            dstXInBytes: 0,
            dstY: 0,
            dstMemoryType: host_type,
            dstHost: std::ptr::null_mut(),
            dstDevice: 0,
            dstArray: std::ptr::null_mut(),
            dstPitch: 0,
            WidthInBytes: span.width_bytes,
            Height: span.height,
        };
        match dir {
            Direction::DeviceToHost => {
                (p.srcDevice, p.srcPitch) = (device, span.device_pitch);
                (p.dstHost, p.dstPitch) = (host, span.host_pitch);
            }
            Direction::HostToDevice => {
                (p.srcMemoryType, p.dstMemoryType) = (host_type, device_type);
                (p.srcHost, p.srcPitch) = (host.cast_const(), span.host_pitch);
                (p.dstDevice, p.dstPitch) = (device, span.device_pitch);
            }
        }
        p
    }

    /// The length of the one contiguous copy `span` is, if both sides are contiguous.
    pub(super) fn contiguous_bytes(span: Span2d) -> Option<usize> {
        let contiguous =
            span.height == 1 || (span.device_pitch == span.width_bytes && span.host_pitch == span.width_bytes);
        contiguous.then_some(span.width_bytes * span.height)
    }

    /// Copies between `device` and `host` in direction `dir`, asynchronously on `stream`:
    /// one contiguous copy when both sides are contiguous, else one 2-D copy.
    ///
    /// # Safety
    /// - `ctx` retained, `stream` alive and in `ctx`.
    /// - `device` is valid for the span on the device, `host` for the span on the host, until
    ///   the stream has passed this copy; nothing else writes the destination, nor the source,
    ///   meanwhile.
    pub(crate) unsafe fn copy(
        ctx: RawContext,
        stream: RawStream,
        dir: Direction,
        device: DevicePtr,
        host: *mut c_void,
        span: Span2d,
    ) -> Result<(), DriverError> {
        // SAFETY: caller's duty.
        unsafe { bind(ctx) }?;
        if let Some(bytes) = contiguous_bytes(span) {
            // SAFETY: caller's duty (the contiguous span is `bytes` long on both sides).
            return check(unsafe {
                match dir {
                    Direction::DeviceToHost => sys::cuMemcpyDtoHAsync_v2(host, device, bytes, stream.0),
                    Direction::HostToDevice => sys::cuMemcpyHtoDAsync_v2(device, host, bytes, stream.0),
                }
            });
        }
        let p = memcpy2d(dir, device, host, span);
        // SAFETY: the descriptor lives across the call (the driver reads it before
        // returning); memory validity is the caller's duty.
        check(unsafe { sys::cuMemcpy2DAsync_v2(&p, stream.0) })
    }

    /// Sets `height` rows of `width_bytes` bytes, `pitch` apart, to zero, on `stream`.
    ///
    /// # Safety
    /// - `ctx` retained, `stream` alive; the span is device memory this stream may write.
    pub(crate) unsafe fn zero_2d(
        ctx: RawContext,
        stream: RawStream,
        dst: DevicePtr,
        pitch: usize,
        width_bytes: usize,
        height: usize,
    ) -> Result<(), DriverError> {
        // SAFETY: caller's duty.
        unsafe { bind(ctx) }?;
        // SAFETY: caller's duty.
        check(unsafe { sys::cuMemsetD2D8Async(dst, pitch, 0, width_bytes, height, stream.0) })
    }
}

pub(crate) mod pool {
    //! `cuMemPool*`: the stream-ordered allocator's memory pool.
    use super::*;

    /// The device's default memory pool (the one `cuMemAllocAsync` uses unless another
    /// was made current).
    ///
    /// # Safety
    /// - `ctx` is retained and is `dev`'s primary context.
    pub(crate) unsafe fn default_pool(ctx: RawContext, dev: RawDevice) -> Result<RawPool, DriverError> {
        // SAFETY: caller's duty.
        unsafe { bind(ctx) }?;
        let mut p = MaybeUninit::uninit();
        // SAFETY: valid out-pointer; `dev` came from `device::get`.
        check(unsafe { sys::cuDeviceGetDefaultMemPool(p.as_mut_ptr(), dev) })?;
        // SAFETY: written by the successful call.
        Ok(RawPool(unsafe { p.assume_init() }))
    }

    /// How much unused memory the pool keeps reserved at a synchronization before it returns
    /// the rest to the driver (`CU_MEMPOOL_ATTR_RELEASE_THRESHOLD`).
    ///
    /// # Safety
    /// - `ctx` is retained; `pool` is one of its device's pools.
    pub(crate) unsafe fn set_release_threshold(ctx: RawContext, pool: RawPool, bytes: u64) -> Result<(), DriverError> {
        // SAFETY: caller's duty.
        unsafe { bind(ctx) }?;
        let mut value: sys::cuuint64_t = bytes;
        // SAFETY: this attribute's value is a `cuuint64_t`, read through the pointer during
        // the call only.
        check(unsafe {
            sys::cuMemPoolSetAttribute(
                pool.0,
                sys::CUmemPool_attribute::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
                (&mut value as *mut sys::cuuint64_t).cast(),
            )
        })
    }

    /// Lets device `peer` read and write every allocation of `pool`, present and future
    /// (`cuMemPoolSetAccess`): peer access of the stream-ordered allocator's memory, which
    /// `cuCtxEnablePeerAccess` does not cover.
    ///
    /// # Safety
    /// - `ctx` is retained; `pool` is one of its device's pools; `peer` is another device
    ///   that can access this one (`peer::can_access`).
    pub(crate) unsafe fn set_peer_access(ctx: RawContext, pool: RawPool, peer: RawDevice) -> Result<(), DriverError> {
        if !has_symbol_once!("cuMemPoolSetAccess") {
            return Err(DriverError::not_supported());
        }
        // SAFETY: caller's duty.
        unsafe { bind(ctx) }?;
        let desc = sys::CUmemAccessDesc {
            location: sys::CUmemLocation { type_: sys::CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE, id: peer },
            flags: sys::CUmemAccess_flags::CU_MEM_ACCESS_FLAGS_PROT_READWRITE,
        };
        // SAFETY: one descriptor, read during the call; the pool alive (caller's duty); the
        // symbol exists (checked above).
        check(unsafe { sys::cuMemPoolSetAccess(pool.0, &desc, 1) })
    }

    /// Returns unused reserved memory of `pool` to the driver, keeping at least `keep` bytes.
    /// Memory whose free has not been observed by the host (a synchronize of the freeing
    /// stream) may stay reserved.
    ///
    /// # Safety
    /// - `ctx` is retained; `pool` is one of its device's pools.
    pub(crate) unsafe fn trim_to(ctx: RawContext, pool: RawPool, keep: usize) -> Result<(), DriverError> {
        // SAFETY: caller's duty.
        unsafe { bind(ctx) }?;
        // SAFETY: caller's duty; the driver releases only memory no allocation uses.
        check(unsafe { sys::cuMemPoolTrimTo(pool.0, keep) })
    }
}

pub(crate) mod peer {
    //! Several GPUs: peer access between two devices' contexts and copies between them
    //! (`cuDeviceCanAccessPeer`, `cuCtxEnablePeerAccess`, `cuMemcpyPeerAsync`). Each entry
    //! point is checked when called (they are not needed by single-GPU programs): a driver
    //! without one gives `CUDA_ERROR_NOT_SUPPORTED`, never cudarc's missing-symbol panic.
    use super::*;

    /// `CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED`: enabling twice is not a failure.
    const ALREADY_ENABLED: u32 = 704;

    fn require(symbol: &str) -> Result<(), DriverError> {
        if has_symbol(symbol) {
            Ok(())
        } else {
            Err(DriverError::not_supported())
        }
    }

    /// Whether `dev`'s contexts can map `peer`'s memory (NVLink or PCIe peer-to-peer).
    pub(crate) fn can_access(dev: RawDevice, peer: RawDevice) -> Result<bool, DriverError> {
        require("cuDeviceCanAccessPeer")?;
        let mut can = 0 as c_int;
        // SAFETY: valid out-pointer; both devices came from `device::get`; the symbol exists.
        check(unsafe { sys::cuDeviceCanAccessPeer(&mut can, dev, peer) })?;
        Ok(can != 0)
    }

    /// Lets `ctx` (its kernels and copies) reach `peer`'s memory directly. Enabling a pair
    /// that is already enabled succeeds.
    ///
    /// # Safety
    /// - `ctx` and `peer` are retained contexts of two different devices.
    pub(crate) unsafe fn enable(ctx: RawContext, peer: RawContext) -> Result<(), DriverError> {
        require("cuCtxEnablePeerAccess")?;
        // SAFETY: caller's duty.
        unsafe { bind(ctx) }?;
        // SAFETY: `peer` retained (caller's duty); flags must be 0.
        match check(unsafe { sys::cuCtxEnablePeerAccess(peer.0, 0) }) {
            Err(e) if e.code() == ALREADY_ENABLED => Ok(()),
            other => other,
        }
    }

    /// Copies `bytes` from `src` (memory of `src_ctx`) to `dst` (memory of `dst_ctx`) on
    /// `stream`, a stream of `ctx`: ordered with that stream only, asynchronous to the host
    /// and to every other stream of either device. Within one context it is a device copy;
    /// between two, the copy engines move the data directly when peer access is enabled, and
    /// the driver stages it through host memory otherwise.
    ///
    /// # Safety
    /// - `ctx`, `src_ctx`, `dst_ctx` retained; `stream` alive in `ctx`.
    /// - `src` is valid for `bytes` bytes in `src_ctx`, `dst` in `dst_ctx`, until the stream has
    ///   passed the copy; nothing writes `dst`, nor `src`, meanwhile.
    #[allow(clippy::too_many_arguments)]
    pub(crate) unsafe fn copy_async(
        ctx: RawContext,
        stream: RawStream,
        dst_ctx: RawContext,
        dst: DevicePtr,
        src_ctx: RawContext,
        src: DevicePtr,
        bytes: usize,
    ) -> Result<(), DriverError> {
        // SAFETY: caller's duty.
        unsafe { bind(ctx) }?;
        if src_ctx == dst_ctx {
            require("cuMemcpyDtoDAsync_v2")?;
            // SAFETY: caller's duty (both ranges valid, the stream alive); the symbol exists.
            return check(unsafe { sys::cuMemcpyDtoDAsync_v2(dst, src, bytes, stream.0) });
        }
        require("cuMemcpyPeerAsync")?;
        // SAFETY: caller's duty (both ranges valid in their contexts, the stream alive); the
        // symbol exists.
        check(unsafe { sys::cuMemcpyPeerAsync(dst, dst_ctx.0, src, src_ctx.0, bytes, stream.0) })
    }
}

pub(crate) mod stream {
    //! `cuStream*`: lanes.
    use super::*;

    /// A non-blocking stream: no implicit ordering with the legacy default stream.
    ///
    /// # Safety
    /// - `ctx` is retained.
    pub(crate) unsafe fn create(ctx: RawContext) -> Result<RawStream, DriverError> {
        // SAFETY: caller's duty.
        unsafe { bind(ctx) }?;
        let mut s = MaybeUninit::uninit();
        let flags = sys::CUstream_flags::CU_STREAM_NON_BLOCKING as c_uint;
        // SAFETY: valid out-pointer, context current.
        check(unsafe { sys::cuStreamCreate(s.as_mut_ptr(), flags) })?;
        // SAFETY: written by the successful call.
        Ok(RawStream(unsafe { s.assume_init() }))
    }

    /// Blocks the calling thread until `stream` has run everything enqueued on it.
    ///
    /// # Safety
    /// - `stream` is alive, its context retained.
    pub(crate) unsafe fn synchronize(ctx: RawContext, stream: RawStream) -> Result<(), DriverError> {
        // SAFETY: caller's duty.
        unsafe { bind(ctx) }?;
        // SAFETY: caller's duty.
        check(unsafe { sys::cuStreamSynchronize(stream.0) })
    }

    /// # Safety
    /// - `stream` is alive and never used again.
    pub(crate) unsafe fn destroy(ctx: RawContext, stream: RawStream) -> Result<(), DriverError> {
        // SAFETY: caller's duty.
        unsafe { bind(ctx) }?;
        // SAFETY: caller's duty.
        check(unsafe { sys::cuStreamDestroy_v2(stream.0) })
    }

    /// Makes later work on `stream` wait for `event`'s latest record (GPU-side; the host
    /// does not block).
    ///
    /// # Safety
    /// - `stream` and `event` are alive, in `ctx`.
    pub(crate) unsafe fn wait_event(ctx: RawContext, stream: RawStream, event: RawEvent) -> Result<(), DriverError> {
        let flags = sys::CUevent_wait_flags::CU_EVENT_WAIT_DEFAULT as c_uint;
        // SAFETY: caller's duty (`ctx` retained, `stream` and `event` alive, in `ctx`).
        unsafe { on_stream(ctx, || sys::cuStreamWaitEvent(stream.0, event.0, flags)) }
    }
}

pub(crate) mod event {
    //! `cuEvent*`: fences and timestamps.
    use super::*;

    /// An event; `timing` selects whether it records a timestamp (slower to record).
    ///
    /// # Safety
    /// - `ctx` is retained.
    pub(crate) unsafe fn create(ctx: RawContext, timing: bool) -> Result<RawEvent, DriverError> {
        // SAFETY: caller's duty.
        unsafe { bind(ctx) }?;
        let flags =
            if timing { sys::CUevent_flags::CU_EVENT_DEFAULT } else { sys::CUevent_flags::CU_EVENT_DISABLE_TIMING };
        let mut e = MaybeUninit::uninit();
        // SAFETY: valid out-pointer, context current.
        check(unsafe { sys::cuEventCreate(e.as_mut_ptr(), flags as c_uint) })?;
        // SAFETY: written by the successful call.
        Ok(RawEvent(unsafe { e.assume_init() }))
    }

    /// # Safety
    /// - `event` and `stream` are alive, in `ctx`.
    pub(crate) unsafe fn record(ctx: RawContext, event: RawEvent, stream: RawStream) -> Result<(), DriverError> {
        // SAFETY: caller's duty (`ctx` retained, `event` and `stream` alive, in `ctx`).
        unsafe { on_stream(ctx, || sys::cuEventRecord(event.0, stream.0)) }
    }

    /// Blocks the calling thread until `event`'s latest record has completed.
    ///
    /// # Safety
    /// - `event` is alive.
    pub(crate) unsafe fn synchronize(ctx: RawContext, event: RawEvent) -> Result<(), DriverError> {
        // SAFETY: caller's duty.
        unsafe { bind(ctx) }?;
        // SAFETY: caller's duty.
        check(unsafe { sys::cuEventSynchronize(event.0) })
    }

    /// Milliseconds from `start` to `end` (both timing events, both completed).
    ///
    /// # Safety
    /// - Both events are alive.
    pub(crate) unsafe fn elapsed_ms(ctx: RawContext, start: RawEvent, end: RawEvent) -> Result<f32, DriverError> {
        // cudarc would panic on a missing symbol: refuse instead (timestamps are optional).
        if !has_symbol_once!("cuEventElapsedTime") {
            return Err(DriverError(sys::CUresult::CUDA_ERROR_NOT_SUPPORTED));
        }
        // SAFETY: caller's duty.
        unsafe { bind(ctx) }?;
        // SAFETY: caller's duty; `result::event::elapsed` is the thin call.
        unsafe { result::event::elapsed(start.0, end.0) }.map_err(Into::into)
    }

    /// # Safety
    /// - `event` is alive and never used again (waits already enqueued on it are fine).
    pub(crate) unsafe fn destroy(ctx: RawContext, event: RawEvent) -> Result<(), DriverError> {
        // SAFETY: caller's duty.
        unsafe { bind(ctx) }?;
        // SAFETY: caller's duty.
        check(unsafe { sys::cuEventDestroy_v2(event.0) })
    }
}

pub(crate) mod module {
    //! `cuModule*` and `cuFunc*`.
    use super::*;
    use std::ffi::CString;

    pub(crate) use sys::CUfunction_attribute as FuncAttribute;

    /// Loads a NUL-terminated PTX (or cubin) image; the driver JIT-compiles PTX here.
    ///
    /// # Safety
    /// - `ctx` is retained.
    pub(crate) unsafe fn load_data(ctx: RawContext, image: &CStr) -> Result<RawModule, DriverError> {
        // SAFETY: caller's duty.
        unsafe { bind(ctx) }?;
        let mut m = MaybeUninit::uninit();
        // SAFETY: `image` is NUL-terminated and outlives the call; valid out-pointer.
        check(unsafe { sys::cuModuleLoadData(m.as_mut_ptr(), image.as_ptr().cast()) })?;
        // SAFETY: written by the successful call.
        Ok(RawModule(unsafe { m.assume_init() }))
    }

    /// # Safety
    /// - `module` is loaded.
    pub(crate) unsafe fn function(ctx: RawContext, module: RawModule, name: &str) -> Result<RawFunction, DriverError> {
        // SAFETY: caller's duty.
        unsafe { bind(ctx) }?;
        let name = CString::new(name).map_err(|_| DriverError(sys::CUresult::CUDA_ERROR_NOT_FOUND))?;
        let mut f = MaybeUninit::uninit();
        // SAFETY: `name` is NUL-terminated and outlives the call; valid out-pointer.
        check(unsafe { sys::cuModuleGetFunction(f.as_mut_ptr(), module.0, name.as_ptr()) })?;
        // SAFETY: written by the successful call.
        Ok(RawFunction(unsafe { f.assume_init() }))
    }

    /// Loads `f`'s code now (`cuFuncLoad`, CUDA 12.4+), so that its first launch does not:
    /// under CUDA's default lazy loading a function is loaded at its first launch, and that
    /// load waits for the work running on every stream. `Ok(false)` where the driver has no
    /// `cuFuncLoad` (its loading is eager then, or `CUDA_MODULE_LOADING=EAGER` makes it so).
    ///
    /// # Safety
    /// - `f` belongs to a loaded module of `ctx`.
    pub(crate) unsafe fn load_function(ctx: RawContext, f: RawFunction) -> Result<bool, DriverError> {
        if !has_symbol_once!("cuFuncLoad") {
            return Ok(false);
        }
        // SAFETY: caller's duty.
        unsafe { bind(ctx) }?;
        // SAFETY: `f` alive (caller's duty); the symbol exists (checked above).
        check(unsafe { sys::cuFuncLoad(f.0) }).map(|()| true)
    }

    /// Sets an attribute of `f` (e.g. the largest dynamic shared memory it may be launched
    /// with, `CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES`).
    ///
    /// # Safety
    /// - `f` belongs to a loaded module of `ctx`.
    pub(crate) unsafe fn set_attribute(
        ctx: RawContext,
        f: RawFunction,
        attr: FuncAttribute,
        value: i32,
    ) -> Result<(), DriverError> {
        if !has_symbol_once!("cuFuncSetAttribute") {
            return Err(DriverError::not_supported());
        }
        // SAFETY: caller's duty.
        unsafe { bind(ctx) }?;
        // SAFETY: `f` alive (caller's duty); the symbol exists (checked above).
        check(unsafe { sys::cuFuncSetAttribute(f.0, attr, value as c_int) })
    }

    /// # Safety
    /// - `f` belongs to a loaded module.
    pub(crate) unsafe fn attribute(ctx: RawContext, f: RawFunction, attr: FuncAttribute) -> Result<i32, DriverError> {
        // SAFETY: caller's duty.
        unsafe { bind(ctx) }?;
        let mut v = 0 as c_int;
        // SAFETY: valid out-pointer; `f` alive (caller's duty).
        check(unsafe { sys::cuFuncGetAttribute(&mut v, attr, f.0) })?;
        Ok(v)
    }

    /// The device address and size of the module's global variable `name`, `None` if it
    /// has none of that name.
    ///
    /// # Safety
    /// - `module` is loaded.
    pub(crate) unsafe fn global(
        ctx: RawContext,
        module: RawModule,
        name: &CStr,
    ) -> Result<Option<(DevicePtr, usize)>, DriverError> {
        // SAFETY: caller's duty.
        unsafe { bind(ctx) }?;
        let (mut ptr, mut size) = (MaybeUninit::uninit(), MaybeUninit::uninit());
        // SAFETY: `name` is NUL-terminated; valid out-pointers.
        match check(unsafe { sys::cuModuleGetGlobal_v2(ptr.as_mut_ptr(), size.as_mut_ptr(), module.0, name.as_ptr()) })
        {
            // SAFETY: both written by the successful call.
            Ok(()) => Ok(Some(unsafe { (ptr.assume_init(), size.assume_init()) })),
            Err(e) if e.is_not_found() => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// # Safety
    /// - `module` is loaded, unloaded once, and no launch of its functions is pending.
    pub(crate) unsafe fn unload(ctx: RawContext, module: RawModule) -> Result<(), DriverError> {
        // SAFETY: caller's duty.
        unsafe { bind(ctx) }?;
        // SAFETY: caller's duty.
        check(unsafe { sys::cuModuleUnload(module.0) })
    }
}

pub(crate) mod tensor_map {
    //! `cuTensorMapEncodeTiled`: the descriptors Hopper's tensor-memory accelerator (TMA)
    //! copies through. Pure host work: no context, no stream.
    use super::*;

    /// A 2-D tiled tensor map of a row-major matrix: `rows` rows of `cols` elements of
    /// `elem_size` bytes, row `r` at `addr + r * pitch`; copies move boxes of `box_rows` x
    /// `box_cols` elements, in the shared-memory swizzle of `swizzle_bytes` (0, 32, 64 or
    /// 128); elements outside the matrix read as zero bits. The element is named by its size
    /// alone (`UINT8` .. `UINT64`): a copy moves bits, and zero bits are zero in every type.
    /// The caller checked the driver's rules (`addr` and `pitch` multiples of 16, the sizes'
    /// ranges); the driver checks them again.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn encode_tiled_2d(
        addr: DevicePtr,
        elem_size: usize,
        rows: u64,
        cols: u64,
        pitch: u64,
        box_rows: u32,
        box_cols: u32,
        swizzle_bytes: u32,
    ) -> Result<[u64; 16], DriverError> {
        use sys::{
            CUtensorMapDataType as D, CUtensorMapFloatOOBfill as O, CUtensorMapInterleave as I,
            CUtensorMapL2promotion as L, CUtensorMapSwizzle as S,
        };
        if !has_symbol_once!("cuTensorMapEncodeTiled") {
            return Err(DriverError::not_supported());
        }
        let ty = match elem_size {
            1 => D::CU_TENSOR_MAP_DATA_TYPE_UINT8,
            2 => D::CU_TENSOR_MAP_DATA_TYPE_UINT16,
            4 => D::CU_TENSOR_MAP_DATA_TYPE_UINT32,
            8 => D::CU_TENSOR_MAP_DATA_TYPE_UINT64,
            _ => return Err(DriverError::not_supported()),
        };
        let swizzle = match swizzle_bytes {
            0 => S::CU_TENSOR_MAP_SWIZZLE_NONE,
            32 => S::CU_TENSOR_MAP_SWIZZLE_32B,
            64 => S::CU_TENSOR_MAP_SWIZZLE_64B,
            128 => S::CU_TENSOR_MAP_SWIZZLE_128B,
            _ => return Err(DriverError::not_supported()),
        };
        let dims = [cols, rows];
        let strides = [pitch];
        let boxes = [box_cols, box_rows];
        let element_strides = [1u32, 1];
        let mut map = MaybeUninit::<sys::CUtensorMap>::uninit();
        // SAFETY: the symbol is present (checked above); every pointer names a live array of
        // the rank (2, one stride: the driver reads `rank - 1` strides); `map` is written by
        // the call on success and read only then.
        check(unsafe {
            sys::cuTensorMapEncodeTiled(
                map.as_mut_ptr(),
                ty,
                2,
                addr as *mut c_void,
                dims.as_ptr(),
                strides.as_ptr(),
                boxes.as_ptr(),
                element_strides.as_ptr(),
                I::CU_TENSOR_MAP_INTERLEAVE_NONE,
                swizzle,
                L::CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                O::CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE,
            )
        })?;
        // SAFETY: written by the successful call.
        Ok(unsafe { map.assume_init() }.opaque)
    }
}

pub(crate) mod graph {
    //! Stream capture and `cuGraph*`: recorded scopes, replayed.
    use super::*;

    /// The entry points graphs need beyond [`SYMBOLS`]: checked when a recording starts, so
    /// that an old driver is a typed error there, not a panic in cudarc's loader.
    pub(crate) const SYMBOLS: &[&str] = &[
        "cuStreamBeginCapture_v2",
        "cuStreamEndCapture",
        "cuGraphInstantiateWithFlags",
        "cuGraphLaunch",
        "cuGraphExecDestroy",
        "cuGraphDestroy",
        "cuGraphExecKernelNodeSetParams_v2",
    ];

    /// Whether the driver has everything graphs need (and which capture-info call to use).
    pub(crate) fn missing_symbol() -> Option<&'static str> {
        static MISSING: OnceLock<Option<&'static str>> = OnceLock::new();
        let probe = || {
            if !has_symbol_once!("cuStreamGetCaptureInfo_v3") && !has_symbol_once!("cuStreamGetCaptureInfo_v2") {
                return Some("cuStreamGetCaptureInfo_v2");
            }
            SYMBOLS.iter().copied().find(|s| !has_symbol(s))
        };
        match MISSING.get() {
            Some(&missing) => missing,
            // Looked up once the driver is loaded (before, every symbol is missing).
            None if DRIVER_LOADED.load(Ordering::Acquire) => *MISSING.get_or_init(probe),
            None => probe(),
        }
    }

    /// Starts capturing `stream` (relaxed mode: other threads and other streams of this
    /// thread go on working normally; only this stream's work is recorded, not run).
    ///
    /// # Safety
    /// - `ctx` retained, `stream` alive and not capturing; `missing_symbol()` is `None`.
    pub(crate) unsafe fn begin_capture(ctx: RawContext, stream: RawStream) -> Result<(), DriverError> {
        // SAFETY: caller's duty.
        unsafe { bind(ctx) }?;
        let mode = sys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_RELAXED;
        // SAFETY: caller's duty.
        check(unsafe { sys::cuStreamBeginCapture_v2(stream.0, mode) })
    }

    /// Ends the capture begun on `stream` and returns the recorded graph.
    ///
    /// # Safety
    /// - `ctx` retained, `stream` alive and capturing (begun with `begin_capture`).
    pub(crate) unsafe fn end_capture(ctx: RawContext, stream: RawStream) -> Result<RawGraph, DriverError> {
        // SAFETY: caller's duty.
        unsafe { bind(ctx) }?;
        let mut g = MaybeUninit::uninit();
        // SAFETY: caller's duty; valid out-pointer.
        check(unsafe { sys::cuStreamEndCapture(stream.0, g.as_mut_ptr()) })?;
        // SAFETY: written by the successful call.
        Ok(RawGraph(unsafe { g.assume_init() }))
    }

    /// The node the last operation captured on `stream` became (its only dependency for the
    /// next one), if exactly one.
    ///
    /// # Safety
    /// - `ctx` retained, `stream` alive and capturing; `missing_symbol()` is `None`.
    pub(crate) unsafe fn last_node(ctx: RawContext, stream: RawStream) -> Result<Option<RawGraphNode>, DriverError> {
        // SAFETY: caller's duty.
        unsafe { bind(ctx) }?;
        let mut status = MaybeUninit::uninit();
        let mut deps: *const sys::CUgraphNode = std::ptr::null();
        let mut n = 0usize;
        let (id, graph) = (std::ptr::null_mut(), std::ptr::null_mut());
        // SAFETY: valid out-pointers (the driver accepts null for the ones not wanted); the
        // dependency array it returns stays valid until the next call on this stream.
        check(unsafe {
            if has_symbol_once!("cuStreamGetCaptureInfo_v3") {
                sys::cuStreamGetCaptureInfo_v3(
                    stream.0,
                    status.as_mut_ptr(),
                    id,
                    graph,
                    &mut deps,
                    std::ptr::null_mut(),
                    &mut n,
                )
            } else {
                sys::cuStreamGetCaptureInfo_v2(stream.0, status.as_mut_ptr(), id, graph, &mut deps, &mut n)
            }
        })?;
        if n != 1 || deps.is_null() {
            return Ok(None);
        }
        // SAFETY: `deps` points to `n` (= 1) nodes, read before any other call.
        Ok(Some(RawGraphNode(unsafe { *deps })))
    }

    /// Whether the driver can add edges that leave a kernel node's launch-order port
    /// (`cuGraphAddDependencies_v2`, CUDA 12.3).
    pub(crate) fn launch_order_supported() -> bool {
        has_symbol_once!("cuGraphAddDependencies_v2") && has_symbol_once!("cuGraphNodeGetDependencies_v2")
    }

    /// How many nodes `node` depends on directly.
    ///
    /// # Safety
    /// - `ctx` retained, `node` a node of a live graph; [`launch_order_supported`].
    pub(crate) unsafe fn dependency_count(ctx: RawContext, node: RawGraphNode) -> Result<usize, DriverError> {
        // SAFETY: caller's duty.
        unsafe { bind(ctx) }?;
        let mut n = 0usize;
        // SAFETY: `node` is a node of a live graph (caller's duty); null arrays ask for the
        // count (an array of none is refused as an invalid value).
        check(unsafe {
            sys::cuGraphNodeGetDependencies_v2(node.0, std::ptr::null_mut(), std::ptr::null_mut(), &mut n)
        })?;
        Ok(n)
    }

    /// Adds an edge from the launch-order port of kernel node `from` to kernel node `to`:
    /// `to` is launched once every block of `from` has begun (best effort: CUDA may wait for
    /// `from` to finish), with no memory ordering between the two. The driver refuses a
    /// second edge between two nodes (an error, not a fault).
    ///
    /// # Safety
    /// - `ctx` retained, `graph` alive, `from` and `to` kernel nodes of it; `to` does not
    ///   reach `from` (the edge closes no cycle); [`launch_order_supported`].
    pub(crate) unsafe fn add_launch_order_edge(
        ctx: RawContext,
        graph: RawGraph,
        from: RawGraphNode,
        to: RawGraphNode,
    ) -> Result<(), DriverError> {
        // SAFETY: caller's duty.
        unsafe { bind(ctx) }?;
        let edge = sys::CUgraphEdgeData {
            from_port: sys::CU_GRAPH_KERNEL_NODE_PORT_LAUNCH_ORDER as u8,
            to_port: 0,
            type_: sys::CUgraphDependencyType::CU_GRAPH_DEPENDENCY_TYPE_DEFAULT as u8,
            reserved: [0; 5],
        };
        // SAFETY: caller's duty; one node and one edge datum each, read during the call.
        check(unsafe { sys::cuGraphAddDependencies_v2(graph.0, &from.0, &to.0, &edge, 1) })
    }

    /// Instantiates `graph`.
    ///
    /// # Safety
    /// - `ctx` retained, `graph` alive.
    pub(crate) unsafe fn instantiate(ctx: RawContext, graph: RawGraph) -> Result<RawGraphExec, DriverError> {
        // SAFETY: caller's duty.
        unsafe { bind(ctx) }?;
        let mut e = MaybeUninit::uninit();
        // SAFETY: caller's duty; valid out-pointer.
        check(unsafe { sys::cuGraphInstantiateWithFlags(e.as_mut_ptr(), graph.0, 0) })?;
        // SAFETY: written by the successful call.
        Ok(RawGraphExec(unsafe { e.assume_init() }))
    }

    /// Launches an executable graph on `stream` (ordered after the stream's earlier work and
    /// after any earlier launch of the same graph).
    ///
    /// # Safety
    /// - `ctx` retained, `exec` and `stream` alive; every address the graph uses stays valid
    ///   and unshared in conflicting ways until the stream has passed the launch.
    pub(crate) unsafe fn launch(ctx: RawContext, exec: RawGraphExec, stream: RawStream) -> Result<(), DriverError> {
        // SAFETY: caller's duty.
        unsafe { bind(ctx) }?;
        // SAFETY: caller's duty.
        check(unsafe { sys::cuGraphLaunch(exec.0, stream.0) })
    }

    /// Sets the parameters of kernel node `node` of `exec` (the same function and shape,
    /// new argument values).
    ///
    /// # Safety
    /// - `ctx` retained; `exec` was instantiated from the graph holding `node`, both alive.
    /// - `params` points to one value per kernel parameter, each of its size (read during
    ///   the call); no launch of `exec` is pending that must still see the old values.
    #[allow(clippy::too_many_arguments)]
    pub(crate) unsafe fn set_kernel_params(
        ctx: RawContext,
        exec: RawGraphExec,
        node: RawGraphNode,
        f: RawFunction,
        grid: (u32, u32, u32),
        block: (u32, u32, u32),
        shared_mem_bytes: u32,
        params: &mut [*mut c_void],
    ) -> Result<(), DriverError> {
        // SAFETY: caller's duty.
        unsafe { bind(ctx) }?;
        let p = sys::CUDA_KERNEL_NODE_PARAMS {
            func: f.0,
            gridDimX: grid.0,
            gridDimY: grid.1,
            gridDimZ: grid.2,
            blockDimX: block.0,
            blockDimY: block.1,
            blockDimZ: block.2,
            sharedMemBytes: shared_mem_bytes,
            kernelParams: params.as_mut_ptr(),
            extra: std::ptr::null_mut(),
            kern: std::ptr::null_mut(),
            ctx: std::ptr::null_mut(),
        };
        // SAFETY: caller's duty; the descriptor and `params` outlive the call.
        check(unsafe { sys::cuGraphExecKernelNodeSetParams_v2(exec.0, node.0, &p) })
    }

    /// The entry points automatic graphs need beyond [`missing_symbol`]'s: changing a copy
    /// node's addresses in an instantiated graph. Without them a scope that repeats an earlier
    /// one is submitted directly.
    pub(crate) fn auto_graphs_supported() -> bool {
        missing_symbol().is_none() && has_symbol_once!("cuGraphExecMemcpyNodeSetParams")
    }

    /// Sets the addresses of copy node `node` of `exec` (the same direction and shape, new
    /// device and host addresses, each in the context and of the memory type of the old).
    ///
    /// # Safety
    /// - `ctx` retained; `exec` was instantiated from the graph holding `node`, both alive;
    ///   `node` is a copy node between device memory and host memory in direction `dir`.
    /// - `device` is valid for `span` on the device and `host` for `span` on the host until
    ///   every later launch of `exec` has finished; no launch of `exec` is pending that must
    ///   still see the old addresses (launches already enqueued keep them, the driver says).
    pub(crate) unsafe fn set_memcpy_params(
        ctx: RawContext,
        exec: RawGraphExec,
        node: RawGraphNode,
        dir: mem::Direction,
        device: DevicePtr,
        host: *mut c_void,
        span: mem::Span2d,
    ) -> Result<(), DriverError> {
        // SAFETY: caller's duty.
        unsafe { bind(ctx) }?;
        // The shape the copy was captured with: one row when both sides are contiguous.
        let span = match mem::contiguous_bytes(span) {
            Some(bytes) => mem::Span2d { width_bytes: bytes, height: 1, device_pitch: bytes, host_pitch: bytes },
            None => span,
        };
        let p2 = mem::memcpy2d(dir, device, host, span);
        let p = sys::CUDA_MEMCPY3D {
            srcXInBytes: 0,
            srcY: 0,
            srcZ: 0,
            srcLOD: 0,
            srcMemoryType: p2.srcMemoryType,
            srcHost: p2.srcHost,
            srcDevice: p2.srcDevice,
            srcArray: std::ptr::null_mut(),
            reserved0: std::ptr::null_mut(),
            srcPitch: p2.srcPitch,
            srcHeight: span.height,
            dstXInBytes: 0,
            dstY: 0,
            dstZ: 0,
            dstLOD: 0,
            dstMemoryType: p2.dstMemoryType,
            dstHost: p2.dstHost,
            dstDevice: p2.dstDevice,
            dstArray: std::ptr::null_mut(),
            reserved1: std::ptr::null_mut(),
            dstPitch: p2.dstPitch,
            dstHeight: span.height,
            WidthInBytes: span.width_bytes,
            Height: span.height,
            Depth: 1,
        };
        // SAFETY: caller's duty; the descriptor outlives the call (the driver reads it before
        // returning).
        check(unsafe { sys::cuGraphExecMemcpyNodeSetParams(exec.0, node.0, &p, ctx.0) })
    }

    /// # Safety
    /// - `exec` alive, destroyed once, no launch of it pending.
    pub(crate) unsafe fn destroy_exec(ctx: RawContext, exec: RawGraphExec) -> Result<(), DriverError> {
        // SAFETY: caller's duty.
        unsafe { bind(ctx) }?;
        // SAFETY: caller's duty.
        check(unsafe { sys::cuGraphExecDestroy(exec.0) })
    }

    /// # Safety
    /// - `graph` alive, destroyed once (its executable instances may outlive it only when no
    ///   node of it is used any more).
    pub(crate) unsafe fn destroy(ctx: RawContext, graph: RawGraph) -> Result<(), DriverError> {
        // SAFETY: caller's duty.
        unsafe { bind(ctx) }?;
        // SAFETY: caller's duty.
        check(unsafe { sys::cuGraphDestroy(graph.0) })
    }
}

/// Launches `f` on `stream`.
///
/// # Safety
/// - `f` belongs to a loaded module of `ctx`; `stream` is alive.
/// - `params` points to one pointer per kernel parameter, each to a value of exactly
///   that parameter's size; the driver copies them before returning.
/// - Every device address among the parameters stays valid, and is accessed by no other
///   stream in a conflicting way, until `stream` has passed this launch.
pub(crate) unsafe fn launch(
    ctx: RawContext,
    f: RawFunction,
    stream: RawStream,
    grid: (u32, u32, u32),
    block: (u32, u32, u32),
    shared_mem_bytes: u32,
    params: &mut [*mut c_void],
) -> Result<(), DriverError> {
    let params = params.as_mut_ptr();
    // SAFETY: caller's duty (`ctx` retained, `f` and `stream` of it, the parameters alive and
    // of the right sizes); `params` outlives the call. A launch that failed enqueued nothing,
    // so `on_stream` may call again.
    unsafe {
        on_stream(ctx, || {
            sys::cuLaunchKernel(
                f.0,
                grid.0,
                grid.1,
                grid.2,
                block.0,
                block.1,
                block.2,
                shared_mem_bytes,
                stream.0,
                params,
                std::ptr::null_mut(),
            )
        })
    }
}

/// Whether the driver library can be loaded on this machine (no driver call is made).
///
/// ```
/// # use sluice_host as sluice;
/// if !sluice::driver_present() {
///     println!("no CUDA driver: GPU work will report Error::NoDriver");
/// }
/// ```
pub fn driver_present() -> bool {
    // SAFETY: only probes whether a `libcuda` can be opened.
    unsafe { sys::is_culib_present() }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn driver_error_displays_name_and_code_without_a_driver() {
        let e = DriverError::from_code(2);
        let s = e.to_string();
        assert!(s.starts_with("CUDA_ERROR_OUT_OF_MEMORY (2)"), "{s}");
        assert_eq!(format!("{e:?}"), "DriverError(CUDA_ERROR_OUT_OF_MEMORY, 2)");
    }

    #[test]
    fn unknown_codes_do_not_become_invalid_enum_values() {
        assert_eq!(DriverError::from_code(0xdead).name(), "CUDA_ERROR_UNKNOWN");
    }

    #[test]
    fn init_without_a_driver_is_a_typed_error() {
        if !driver_present() {
            assert_eq!(init(), Err(InitError::NoDriver));
        }
    }
}
