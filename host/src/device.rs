//! The device room: [`Gpu`] (a device, its retained primary context, and what sluice keeps
//! per device: the stream-ordered allocator, the pools of idle streams and events, the
//! module cache, the log of errors found while dropping) and its properties.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use crate::check::CpuCheck;
use crate::driver::{self, device::Attribute, DevicePtr, DriverError, InitError, RawDevice, RawPool};
use crate::error::{Error, Result, ORPHANED};
use crate::handle::{Context, Event, StreamHandle};
use crate::launcher::Launcher;
use crate::module::ModuleCache;
use crate::plan::{CachedGraph, GraphCache, GraphRules, Key, PlanMemo, Submission, SubmitConfig, SubmitStats, Values};

/// One CUDA device, ready for work: the std analogue is a thread pool you hand work to.
///
/// A `Gpu` holds the device's primary context (retained, released when the last clone and
/// the last buffer of this device are gone). Clones are cheap and share the context, the
/// loaded modules and the kernel cache. Work happens in a [`scope`](crate::scope); memory
/// can be allocated here (owned, freed on drop) or in a scope (freed when the scope ends).
///
/// ```no_run
/// # use sluice_host as sluice;
/// # fn main() -> sluice::Result<()> {
/// use sluice::Gpu;
/// // Without a CUDA driver there are none to list, and `Gpu::new` runs on the CPU backend.
/// for d in Gpu::devices().unwrap_or_default() {
///     println!("{}: {} (sm_{}{}), {} SMs, {} GiB",
///         d.ordinal, d.name, d.compute_capability.0, d.compute_capability.1,
///         d.sm_count, d.total_memory >> 30);
/// }
/// let gpu = Gpu::new(0)?;
/// println!("{} bytes free", gpu.mem_info()?.free);
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct Gpu {
    pub(crate) inner: Arc<GpuInner>,
}

pub(crate) struct GpuInner {
    // Fields drop in this order; every handle holds the context (`ctx`) alive itself.
    /// The thread that launches scopes' segment graphs (started at its first launch; no
    /// launch is pending once every scope of the device has ended).
    launcher: Launcher,
    /// Idle streams reused as lanes by later scopes (creating a stream costs several
    /// microseconds). Only streams whose `cuStreamSynchronize` succeeded after their last
    /// work come back here: they are empty.
    stream_pool: Mutex<Vec<StreamHandle>>,
    /// Fence events reused across scopes (created without timing). Only events whose every
    /// use is over (their scope joined) come back here.
    event_pool: Mutex<Vec<Event>>,
    /// Timing events (timestamps), reused the same way.
    timing_pool: Mutex<Vec<Event>>,
    /// Device memory scopes allocated, given back when they ended (their lanes joined), for
    /// a later scope's allocation of the same size: `(bytes, address)`, most recent last.
    reuse: Mutex<Vec<(usize, DevicePtr)>>,
    /// Idle lanes and events of the last scope that ended (type-erased: the scope room's
    /// `LaneCache`), so that a fresh `scope` starts from them as a `LaneSet`'s does.
    kept_lanes: Mutex<Option<Box<dyn std::any::Any + Send>>>,
    /// Executable graphs of repeated scopes, by shape (none while a scope runs it).
    graphs: Mutex<GraphCache>,
    /// The plans (and keys) of the last batches submitted, most recent last, for a later
    /// batch that is the same (a program repeating its scopes, maybe between others).
    plan_memos: Mutex<Vec<PlanMemo>>,
    /// How scopes submit their work, and what they submitted.
    submit: Mutex<(SubmitConfig, SubmitStats)>,
    /// The last deferred scope that ended logged many operations after a lane came back to
    /// log again after other lanes had (its lanes work in rounds): the next scope forms no
    /// segments ([`SubmitConfig::segment_lanes`]).
    rounds: std::sync::atomic::AtomicBool,
    /// Loaded modules and resolved kernel functions.
    pub(crate) modules: ModuleCache,
    /// The stream-ordered allocator behind every device allocation.
    allocator: Allocator,
    pub(crate) info: DeviceInfo,
    pub(crate) driver_version: u32,
    pub(crate) ctx: Arc<Context>,
}

/// How many batches' plans a device keeps (`PlanMemo`): a repeated scope and the few scopes a
/// program runs between its repetitions (a benchmark's poisoning, a host-side check), and
/// each repeated scope's segments (`SubmitConfig::segment_lanes`).
const PLAN_MEMOS: usize = 16;

/// Device memory, stream-ordered, without device-wide synchronization ([rule 6](crate#safety-model)).
///
/// `cuMemFree` waits for the whole device and `cuMemAlloc` can serialise streams, so
/// sluice uses neither. Every device allocation is `cuMemAllocFromPoolAsync` from the
/// device's default memory pool, enqueued on `stream` — a stream of this `Gpu` that only
/// ever holds allocations and frees — followed by `cuStreamSynchronize(stream)`. Once that
/// returns the allocation is complete, so any lane may use the memory with no further
/// ordering. Freeing is `cuMemFreeAsync` on the same stream, enqueued only when no work
/// can use the memory any more (a scope frees after joining its lanes; an owned matrix is
/// dropped only when no scope borrows it), and it does not wait.
///
/// # Why the allocation's wait is not a hidden synchronization (rules 6 and 7)
///
/// It waits for one stream, and that stream carries no user work: only earlier
/// allocations and frees, which the driver completes without waiting for kernels or
/// copies. (The pool could make an allocation wait for another stream only to reuse memory
/// freed on that stream; sluice frees on allocator streams only. Code outside sluice that
/// frees into the same default pool on its own streams could add such a dependency.)
///
/// # The pool keeps freed memory
///
/// The pool's release threshold is raised to `u64::MAX`, so freed memory stays reserved
/// for the next allocation instead of going back to the driver at each synchronization:
/// repeated scopes allocate from the pool in microseconds. [`Gpu::trim_memory_pool`] gives
/// it back; an allocation that finds the device full trims the pool and retries once.
/// The threshold is a property of the device's default pool, so it also applies to other
/// users of that pool in this process.
enum Allocator {
    Cuda {
        pool: RawPool,
        stream: StreamHandle,
    },
    /// The CPU backend allocates from the host's allocator, synchronously.
    Cpu,
}

impl Allocator {
    fn new(ctx: &Arc<Context>, dev: RawDevice) -> Result<Allocator> {
        let supported = query(
            "cuDeviceGetAttribute(MEMORY_POOLS_SUPPORTED)",
            driver::device::attribute(dev, Attribute::CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED),
        )?;
        if supported == 0 {
            // sluice allocates only stream-ordered (rule 6); this device cannot.
            let call = "the stream-ordered allocator (cuMemAllocAsync)";
            return Err(Error::Device { call, error: DriverError::not_supported() });
        }
        let pool = query("cuDeviceGetDefaultMemPool", ctx.default_pool())?;
        query("cuMemPoolSetAttribute(RELEASE_THRESHOLD)", ctx.set_release_threshold(pool, u64::MAX))?;
        let stream = StreamHandle::create(ctx).map_err(|error| Error::Stream { call: "cuStreamCreate", error })?;
        crate::module::warm_up(ctx, &stream)?;
        Ok(Allocator::Cuda { pool, stream })
    }
}

/// Which machine a [`Gpu`] runs on: an NVIDIA GPU through the CUDA driver, or the CPU (the
/// same kernels compiled for the host, run over the grid by a rayon thread pool with CUDA's
/// execution model; see [`Gpu::cpu`]).
///
/// ```
/// # use sluice_host as sluice;
/// let gpu = sluice::Gpu::cpu();
/// assert_eq!(gpu.backend(), sluice::Backend::Cpu);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Backend {
    /// An NVIDIA GPU, through the CUDA driver.
    Cuda,
    /// The CPU.
    Cpu,
}

impl std::fmt::Display for Backend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Backend::Cuda => "cuda",
            Backend::Cpu => "cpu",
        })
    }
}

/// Most idle streams a device keeps for later scopes.
const STREAM_POOL_LIMIT: usize = 1024;

/// Most scope allocations a device keeps for later scopes, and their most bytes.
const REUSE_ENTRIES: usize = 64;
const REUSE_BYTES: usize = 1 << 30;

/// Most idle events (of each kind) a device keeps for later scopes.
const EVENT_POOL_LIMIT: usize = 4096;

/// A device's properties, as the driver reports them.
///
/// ```no_run
/// # use sluice_host as sluice;
/// # fn main() -> sluice::Result<()> {
/// let gpu = sluice::Gpu::new(0)?;
/// let info = gpu.info();
/// assert!(info.max_threads_per_block >= 1024);
/// # Ok(()) }
/// ```
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceInfo {
    /// The device's ordinal (`Gpu::new(ordinal)`).
    pub ordinal: usize,
    /// The device's name, such as `NVIDIA H200`.
    pub name: String,
    /// Compute capability (major, minor): (9, 0) for Hopper.
    pub compute_capability: (u32, u32),
    /// Streaming multiprocessors.
    pub sm_count: u32,
    /// Device memory in bytes.
    pub total_memory: usize,
    /// Most threads in one block.
    pub max_threads_per_block: u32,
    /// Most threads per block along x, y, z.
    pub max_block_dims: [u32; 3],
    /// Most blocks per grid along x, y, z.
    pub max_grid_dims: [u32; 3],
    /// Shared memory one block may use without opting in (bytes).
    pub max_shared_memory_per_block: u32,
    /// Shared memory one block may use after opting in (bytes).
    pub max_shared_memory_per_block_optin: u32,
    /// Threads per warp.
    pub warp_size: u32,
    /// Copy engines that can run concurrently with kernels.
    pub async_engines: u32,
}

/// Free and total device memory (`cuMemGetInfo`).
///
/// ```no_run
/// # use sluice_host as sluice;
/// let gpu = sluice::Gpu::new(0)?;
/// let sluice::MemInfo { free, total } = gpu.mem_info()?;
/// assert!(free <= total);
/// # Ok::<(), sluice::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemInfo {
    /// Free bytes.
    pub free: usize,
    /// Total bytes.
    pub total: usize,
}

fn init() -> Result<u32> {
    driver::init().map_err(|e| match e {
        InitError::NoDriver => Error::NoDriver,
        InitError::MissingSymbol(symbol) => Error::DriverSymbolMissing { symbol },
        InitError::Driver(e) => Error::Init(e),
        InitError::TooOld { found } => Error::DriverTooOld { found, needed: driver::MIN_DRIVER },
    })
}

fn query<T>(call: &'static str, r: std::result::Result<T, DriverError>) -> Result<T> {
    r.map_err(|error| Error::Device { call, error })
}

fn device_info(ordinal: usize, dev: RawDevice) -> Result<DeviceInfo> {
    let attr = |a: Attribute| -> Result<u32> {
        query("cuDeviceGetAttribute", driver::device::attribute(dev, a)).map(|v| v.max(0) as u32)
    };
    Ok(DeviceInfo {
        ordinal,
        name: query("cuDeviceGetName", driver::device::name(dev))?,
        compute_capability: (
            attr(Attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)?,
            attr(Attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)?,
        ),
        sm_count: attr(Attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?,
        total_memory: query("cuDeviceTotalMem", driver::device::total_mem(dev))?,
        max_threads_per_block: attr(Attribute::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK)?,
        max_block_dims: [
            attr(Attribute::CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X)?,
            attr(Attribute::CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y)?,
            attr(Attribute::CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z)?,
        ],
        max_grid_dims: [
            attr(Attribute::CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X)?,
            attr(Attribute::CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y)?,
            attr(Attribute::CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z)?,
        ],
        max_shared_memory_per_block: attr(Attribute::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK)?,
        max_shared_memory_per_block_optin: attr(Attribute::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)?,
        warp_size: attr(Attribute::CU_DEVICE_ATTRIBUTE_WARP_SIZE)?,
        async_engines: attr(Attribute::CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT)?,
    })
}

impl Gpu {
    /// Device `ordinal` on the backend the environment asks for: CUDA when a driver and a
    /// device are present, the CPU otherwise ([`Gpu::cpu`]); `SLUICE_BACKEND=cuda` or `cpu`
    /// forces one (`auto` or unset: the default). [`Gpu::backend`] says which it is.
    ///
    /// # Errors
    /// With `SLUICE_BACKEND=cuda`: [`Error::BackendUnavailable`] with the reason (no driver,
    /// no device, a driver too old); an unknown value: [`Error::UnknownBackend`]. Without it,
    /// a CUDA device that is present but fails (a driver too old, a failing driver call) is
    /// an error too, not a silent fall-back to the CPU.
    ///
    /// ```
    /// # use sluice_host as sluice;
    /// let gpu = sluice::Gpu::new(0)?;
    /// println!("running on {} ({} backend)", gpu.info().name, gpu.backend());
    /// # Ok::<(), sluice::Error>(())
    /// ```
    pub fn new(ordinal: usize) -> Result<Gpu> {
        match std::env::var("SLUICE_BACKEND").ok().filter(|v| !v.is_empty()).as_deref() {
            None | Some("auto") => match Gpu::cuda(ordinal) {
                Err(Error::NoDriver) | Err(Error::NoDevice { count: 0, .. }) => Ok(Gpu::cpu()),
                other => other,
            },
            Some("cuda") => {
                Gpu::cuda(ordinal).map_err(|e| Error::BackendUnavailable { asked: "cuda", why: Box::new(e) })
            }
            Some("cpu") => Ok(Gpu::cpu()),
            Some(other) => Err(Error::UnknownBackend { given: other.to_string() }),
        }
    }

    /// Opens CUDA device `ordinal` (never the CPU backend) and retains its primary context.
    ///
    /// # Errors
    /// [`Error::NoDriver`] where no CUDA driver is installed (never a panic),
    /// [`Error::DriverTooOld`], [`Error::NoDevice`], or the failing driver call.
    ///
    /// ```
    /// # use sluice_host as sluice;
    /// match sluice::Gpu::cuda(0) {
    ///     Ok(gpu) => println!("running on {}", gpu.info().name),
    ///     Err(sluice::Error::NoDriver) => println!("no NVIDIA driver here"),
    ///     Err(e) => println!("{e}"),
    /// }
    /// ```
    pub fn cuda(ordinal: usize) -> Result<Gpu> {
        let driver_version = init()?;
        let count = Gpu::count()?;
        if ordinal >= count {
            return Err(Error::NoDevice { ordinal, count });
        }
        let dev = query("cuDeviceGet", driver::device::get(ordinal))?;
        if let Some(error) = crate::handle::device_lost(dev) {
            return Err(Error::ContextLost { error, lane: None, fault: None, kernels: Vec::new() });
        }
        let info = device_info(ordinal, dev)?;
        let ctx = Context::retain(dev).map_err(|error| Error::Device { call: "cuDevicePrimaryCtxRetain", error })?;
        // On failure `ctx` is dropped here, which releases the context (nothing else uses it).
        let allocator = Allocator::new(&ctx, dev)?;
        Ok(Gpu::from_parts(ctx, allocator, info, driver_version))
    }

    /// The CPU backend: the same host API (scopes, lanes, fences, views, copies, graphs), the
    /// same kernels compiled for the host and run over the launch grid — blocks in parallel
    /// on a rayon thread pool, the threads of a block as cooperating tasks with real barriers
    /// and warp operations. Needs no driver and never fails. Lanes run concurrently (one
    /// worker thread each); fences are real completion signals between them.
    ///
    /// ```
    /// # use sluice_host as sluice;
    /// let gpu = sluice::Gpu::cpu();
    /// assert!(gpu.info().name.starts_with("CPU"));
    /// ```
    pub fn cpu() -> Gpu {
        let threads = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1) as u32;
        let ctx = Context::cpu();
        let (_, total) = ctx.mem_info().unwrap_or((0, 0));
        let info = DeviceInfo {
            ordinal: 0,
            name: format!("CPU ({threads} threads)"),
            compute_capability: (0, 0),
            sm_count: threads,
            total_memory: total,
            max_threads_per_block: 1024,
            max_block_dims: [1024, 1024, 64],
            max_grid_dims: [i32::MAX as u32, 65535, 65535],
            max_shared_memory_per_block: 48 << 10,
            max_shared_memory_per_block_optin: 227 << 10,
            warp_size: 32,
            async_engines: 0,
        };
        Gpu::from_parts(ctx, Allocator::Cpu, info, 0)
    }

    fn from_parts(ctx: Arc<Context>, allocator: Allocator, info: DeviceInfo, driver_version: u32) -> Gpu {
        Gpu {
            inner: Arc::new(GpuInner {
                launcher: Launcher::default(),
                stream_pool: Mutex::new(Vec::new()),
                event_pool: Mutex::new(Vec::new()),
                timing_pool: Mutex::new(Vec::new()),
                reuse: Mutex::new(Vec::new()),
                kept_lanes: Mutex::new(None),
                graphs: Mutex::new(GraphCache::default()),
                plan_memos: Mutex::new(Vec::new()),
                rounds: std::sync::atomic::AtomicBool::new(false),
                submit: Mutex::new((SubmitConfig::from_env(), SubmitStats::default())),
                modules: ModuleCache::new(),
                allocator,
                info,
                driver_version,
                ctx,
            }),
        }
    }

    /// Resets CUDA device `ordinal` after its context was lost ([`Error::ContextLost`]): the
    /// driver destroys everything the dead context held, and the next [`Gpu::cuda`] makes a
    /// new one. Does nothing (`Ok`) when the device's context is not lost.
    ///
    /// **A kernel fault cannot be reset within the process on current drivers**: CUDA
    /// documents `CUDA_ERROR_LAUNCH_FAILED` (a trap, a failed `dassert!`) and illegal
    /// addresses as leaving the process unable to use the device, and on the H200 (driver
    /// 580) the reset succeeds but the device stays refused; this returns
    /// [`Error::RestartRequired`] then. The GPU itself is fine: a new process uses it at
    /// once. Programs that must survive kernel faults run the risky work in a child process
    /// (as `tests/gpu_faults.rs` does) and read the fault from its error.
    ///
    /// # What CUDA makes sticky, and what survives
    ///
    /// A kernel fault (an illegal address or instruction, a trap, a failed device assert)
    /// loses the whole context: every stream, event, module and device allocation of it, in
    /// every `Gpu` of the device, is gone, and every call on them fails. sluice remembers the
    /// loss: scopes and graphs on the device return [`Error::ContextLost`] at once. After the
    /// reset, the old handles are dead: dropping them calls nothing (their driver objects are
    /// gone) and their memory cannot be used on the new context (it is another device to the
    /// checks: [`Error::WrongDevice`]). Host memory survives: pinned matrices are the Rust
    /// allocator's memory, registered with the driver, so they stay readable (the data a
    /// faulted scope was copying into them may be incomplete). The CPU backend has no sticky
    /// errors: a faulted lane ends alone ([`Error::KernelFault`]).
    ///
    /// ```no_run
    /// # use sluice_host as sluice;
    /// use sluice::{Error, Gpu};
    /// # fn work(gpu: &Gpu) -> sluice::Result<()> { Ok(()) }
    /// let gpu = Gpu::cuda(0)?;
    /// if let Err(Error::ContextLost { .. }) = work(&gpu) {
    ///     drop(gpu);
    ///     match Gpu::reset(0) {
    ///         Ok(()) => work(&Gpu::cuda(0)?)?,             // a fresh context
    ///         Err(Error::RestartRequired { .. }) => std::process::exit(75), // a new process
    ///         Err(e) => return Err(e),
    ///     }
    /// }
    /// # Ok::<(), Error>(())
    /// ```
    ///
    /// # Errors
    /// [`Error::RestartRequired`] (the driver still refuses the device), [`Error::NoDriver`],
    /// [`Error::NoDevice`], or the failing driver call.
    pub fn reset(ordinal: usize) -> Result<()> {
        init()?;
        let dev = query("cuDeviceGet", driver::device::get(ordinal))?;
        if crate::handle::device_lost(dev).is_none() {
            return Ok(());
        }
        crate::handle::reset_device(dev).map_err(|error| {
            if error.is_sticky() {
                Error::RestartRequired { error }
            } else {
                Error::Device { call: "cuDevicePrimaryCtxReset", error }
            }
        })
    }

    /// Which machine this runs on.
    ///
    /// ```
    /// # use sluice_host as sluice;
    /// let gpu = sluice::Gpu::new(0)?;   // CUDA when a GPU is present, else the CPU
    /// println!("sluice: running on {} ({})", gpu.info().name, gpu.backend());
    /// # Ok::<(), sluice::Error>(())
    /// ```
    pub fn backend(&self) -> Backend {
        if self.inner.ctx.is_cpu() {
            Backend::Cpu
        } else {
            Backend::Cuda
        }
    }

    /// The CPU backend ([`Gpu::cpu`]) with every launch checked ([`CpuCheck::On`]), whatever
    /// the build and `SLUICE_CPU_CHECK` say (the device's mode: every [`Gpu::cpu`] handle of
    /// the process is checked from now on, see [`Gpu::set_cpu_check`]): data races on shared and global memory,
    /// divergent barriers and warp operations, reads of uninitialised shared memory fail the
    /// launch with [`Error::KernelCheck`], which names the kernel, the block, both threads and
    /// both source lines. Checked launches are slower (`sluice_device::cpu` says how much).
    ///
    /// ```
    /// # use sluice_host as sluice;
    /// use sluice::{CpuCheck, Gpu};
    /// let gpu = Gpu::cpu_checked();
    /// assert_eq!(gpu.cpu_check(), CpuCheck::On);
    /// ```
    pub fn cpu_checked() -> Gpu {
        let gpu = Gpu::cpu();
        gpu.set_cpu_check(CpuCheck::On);
        gpu
    }

    /// Checks ([`CpuCheck::On`]) or does not check ([`CpuCheck::Off`]) the launches enqueued
    /// from now on, on this device; on a CUDA device it does nothing (compute-sanitizer
    /// checks there). The CPU backend is one device per process, shared by every
    /// [`Gpu::cpu`] handle while any lives (as a CUDA device's primary context is), so the
    /// mode is the device's: it applies to every such handle, in every thread — tests that
    /// want different modes at once belong in different test binaries (each its own
    /// process). The default is [`CpuCheck::auto`]: on in
    /// builds with debug assertions, off in release builds, `SLUICE_CPU_CHECK=1|0` deciding
    /// instead where it is set.
    ///
    /// ```
    /// # use sluice_host as sluice;
    /// use sluice::{CpuCheck, Gpu};
    /// let gpu = Gpu::new(0)?;
    /// gpu.set_cpu_check(CpuCheck::Off); // a benchmark: unchecked even in a debug build
    /// # Ok::<(), sluice::Error>(())
    /// ```
    pub fn set_cpu_check(&self, check: CpuCheck) {
        if let Some(d) = self.inner.ctx.cpu_device() {
            d.set_check(check);
        }
    }

    /// Whether this device's launches are checked now ([`Gpu::set_cpu_check`]); always
    /// [`CpuCheck::Off`] on a CUDA device.
    ///
    /// ```
    /// # use sluice_host as sluice;
    /// let gpu = sluice::Gpu::cpu();
    /// assert_eq!(gpu.cpu_check(), sluice::CpuCheck::auto());
    /// ```
    pub fn cpu_check(&self) -> CpuCheck {
        self.inner.ctx.cpu_device().map_or(CpuCheck::Off, |d| d.check())
    }

    /// How many CUDA devices the driver sees: 0 where a driver is installed and sees none.
    ///
    /// # Errors
    /// [`Error::NoDriver`] where no CUDA driver is installed (this machine has no NVIDIA
    /// GPU to use; [`Gpu::new`] then runs on the CPU backend); [`Error::Device`] if the
    /// driver fails.
    ///
    /// ```no_run
    /// # use sluice_host as sluice;
    /// println!("{} GPU(s)", sluice::Gpu::count()?);
    /// # Ok::<(), sluice::Error>(())
    /// ```
    pub fn count() -> Result<usize> {
        init()?;
        match driver::device::count() {
            Ok(n) => Ok(n),
            // No device is an answer (zero), not a failure.
            Err(e) if e.is_no_device() => Ok(0),
            Err(error) => Err(Error::Device { call: "cuDeviceGetCount", error }),
        }
    }

    /// The properties of every device, without creating contexts.
    ///
    /// # Errors
    /// As [`Gpu::count`]: [`Error::NoDriver`] without a CUDA driver.
    ///
    /// ```no_run
    /// # use sluice_host as sluice;
    /// for d in sluice::Gpu::devices()? {
    ///     println!("{d:?}");
    /// }
    /// # Ok::<(), sluice::Error>(())
    /// ```
    pub fn devices() -> Result<Vec<DeviceInfo>> {
        (0..Gpu::count()?).map(|i| device_info(i, query("cuDeviceGet", driver::device::get(i))?)).collect()
    }

    /// This device's properties.
    ///
    /// ```no_run
    /// # use sluice_host as sluice;
    /// let gpu = sluice::Gpu::new(0)?;
    /// println!("{} SMs", gpu.info().sm_count);
    /// # Ok::<(), sluice::Error>(())
    /// ```
    pub fn info(&self) -> &DeviceInfo {
        &self.inner.info
    }

    /// The driver's CUDA version (`cuDriverGetVersion`: 13000 for CUDA 13.0); 0 on the CPU
    /// backend, which has no driver.
    ///
    /// ```no_run
    /// # use sluice_host as sluice;
    /// let gpu = sluice::Gpu::new(0)?;
    /// if gpu.backend() == sluice::Backend::Cuda {
    ///     assert!(gpu.driver_version() >= 11040);
    /// }
    /// # Ok::<(), sluice::Error>(())
    /// ```
    pub fn driver_version(&self) -> u32 {
        self.inner.driver_version
    }

    /// Free and total device memory now.
    ///
    /// Memory freed by sluice stays reserved in the device's memory pool for reuse and
    /// counts as used here, and so does the memory of ended scopes that the device keeps for
    /// later scopes' allocations of the same size (at most 64 allocations, 1 GiB); call
    /// [`trim_memory_pool`](Gpu::trim_memory_pool) first to see it as free.
    ///
    /// ```no_run
    /// # use sluice_host as sluice;
    /// let gpu = sluice::Gpu::new(0)?;
    /// let m = gpu.mem_info()?;
    /// assert!(m.free <= m.total);
    /// # Ok::<(), sluice::Error>(())
    /// ```
    pub fn mem_info(&self) -> Result<MemInfo> {
        let (free, total) = self.inner.ctx.mem_info().map_err(|error| Error::Device { call: "cuMemGetInfo", error })?;
        Ok(MemInfo { free, total })
    }

    /// Returns the device memory that sluice has freed but the device's memory pool keeps
    /// for reuse to the driver, so that it shows as free in [`mem_info`](Gpu::mem_info) and
    /// other processes (or allocators) can have it — with the memory of ended scopes kept for
    /// later scopes' allocations of the same size (which keeps a loop of scopes at the same
    /// addresses, and its cached graph unchanged).
    ///
    /// sluice frees device memory into a pool (stream-ordered, so freeing never waits for the
    /// device) and keeps it there: the next allocation, e.g. by the next scope, reuses it
    /// without a driver allocation. Memory in use (matrices alive, scopes running) stays
    /// allocated. An allocation that finds the device full trims the pool itself before it
    /// reports [`Error::OutOfMemory`], and a scope that ends with that error (anywhere in
    /// its chain) trims it again once its own memory is back: after running out, the pool
    /// keeps nothing. Otherwise, call this when the memory should go back to the driver. Trimming waits for this `Gpu`'s internal allocator
    /// stream (frees count as in use until the host has seen them complete), never for a
    /// lane; returning memory to the driver may be slow, so call it outside hot loops.
    ///
    /// # Errors
    /// [`Error::Stream`] or [`Error::Device`] with the failing driver call.
    ///
    /// ```no_run
    /// # use sluice_host as sluice;
    /// let gpu = sluice::Gpu::new(0)?;
    /// drop(gpu.alloc_matrix::<f32>(1 << 20, 64)?);  // 256 MiB back in the pool
    /// gpu.trim_memory_pool()?;                      // and back to the driver
    /// println!("{} bytes free", gpu.mem_info()?.free);
    /// # Ok::<(), sluice::Error>(())
    /// ```
    pub fn trim_memory_pool(&self) -> Result<()> {
        // What ended scopes kept for later ones goes back to the pool first (on the CPU
        // backend, to the system).
        self.inner.release_reused().map_err(|error| Error::Free { what: "device memory", error })?;
        let Allocator::Cuda { pool, stream } = &self.inner.allocator else { return Ok(()) };
        stream.synchronize().map_err(|error| Error::Stream { call: "cuStreamSynchronize", error })?;
        self.inner.ctx.trim_pool(*pool, 0).map_err(|error| Error::Device { call: "cuMemPoolTrimTo", error })
    }

    /// How this device's scopes submit their work: deferred, with merged copies and cached
    /// graphs, by default (see [`SubmitConfig`]).
    ///
    /// ```
    /// # use sluice_host as sluice;
    /// let gpu = sluice::Gpu::cpu();
    /// # gpu.set_submit_config(sluice::SubmitConfig::default());
    /// assert!(gpu.submit_config().defer);
    /// ```
    pub fn submit_config(&self) -> SubmitConfig {
        lock(&self.inner.submit).0
    }

    /// Changes how this device's scopes submit their work, from the next scope on (a scope
    /// running now keeps the configuration it started with). Turning graphs off drops the
    /// cached ones; a cached graph captured under other graph rules
    /// ([`SubmitConfig::graph_branches`], [`SubmitConfig::chain_launches`]) is not replayed
    /// again, and is dropped once its scope gives it back.
    ///
    /// ```
    /// # use sluice_host as sluice;
    /// use sluice::{Gpu, SubmitConfig};
    /// let gpu = Gpu::cpu();
    /// gpu.set_submit_config(SubmitConfig::direct());   // one driver call per operation, as asked
    /// assert!(!gpu.submit_config().defer);
    /// ```
    pub fn set_submit_config(&self, config: SubmitConfig) {
        lock(&self.inner.submit).0 = config;
        if !config.graphs || config.graph_cache == 0 {
            drop(lock(&self.inner.graphs).drain());
        }
    }

    /// What this device's scopes have submitted so far, and how (direct, graphs captured,
    /// graphs replayed, copies merged, fence records left out).
    ///
    /// ```
    /// # use sluice_host as sluice;
    /// # fn demo() -> sluice::Result<()> {
    /// let gpu = sluice::Gpu::cpu();
    /// # gpu.set_submit_config(sluice::SubmitConfig::default());
    /// let mut m = gpu.alloc_matrix::<u32>(64, 2)?;
    /// for _ in 0..3 {
    ///     sluice::scope(&gpu, |s| {
    ///         for (lane, col) in s.lanes(2)?.into_iter().zip(m.columns_mut()) {
    ///             lane.enter(|st| { let mut v = st.bind(col); st.zero(&mut v) })?;
    ///         }
    ///         Ok(())
    ///     })?;
    /// }
    /// let stats = gpu.submit_stats();
    /// // The first scope ran directly, the second captured its shape, the third replayed it.
    /// assert_eq!((stats.direct, stats.graphs_captured, stats.graphs_replayed), (1, 1, 1));
    /// # Ok(()) }
    /// # demo().unwrap();
    /// ```
    pub fn submit_stats(&self) -> SubmitStats {
        lock(&self.inner.submit).1
    }

    /// Counts a submission.
    pub(crate) fn note_submission(&self, s: &Submission) {
        lock(&self.inner.submit).1.add(s);
    }

    /// A cached graph of `key`, one holding `values` if there is one (taken out: the caller
    /// puts it back once no launch of it is pending), with how many other graphs of `key` are
    /// cached; or whether the shape was seen before (`Err(true)`: make its graph now).
    pub(crate) fn take_graph(
        &self,
        key: &Key,
        rules: GraphRules,
        values: &Values,
    ) -> std::result::Result<(CachedGraph, usize), bool> {
        let mut cache = lock(&self.inner.graphs);
        cache.take(key, rules, values).ok_or_else(|| cache.seen_before(key))
    }

    /// The rules this device's graphs are captured under with `config`
    /// ([`SubmitConfig::graph_rules`]): launches are chained only on a GPU whose driver has
    /// launch-order edges.
    pub(crate) fn graph_rules(&self, config: &SubmitConfig) -> GraphRules {
        config.graph_rules(self.backend() == Backend::Cuda && driver::graph::launch_order_supported())
    }

    /// Whether a plan of `key`'s shape copied these buffers before (noting that it has now).
    pub(crate) fn buffers_seen_before(&self, key: &Key, values: &Values) -> bool {
        lock(&self.inner.graphs).buffers_seen_before(key, values)
    }

    /// Puts a graph back into the cache once no launch of it is pending (or drops it when
    /// graphs were turned off meanwhile).
    pub(crate) fn put_graph(&self, g: CachedGraph) {
        self.put_graphs(vec![g]);
    }

    /// Puts a scope's graphs back, as [`put_graph`](Gpu::put_graph) each, under one lock of
    /// the cache (a lock per graph cost a scope's end 0.6 µs for 5 graphs on an H100 host).
    pub(crate) fn put_graphs(&self, graphs: Vec<CachedGraph>) {
        if graphs.is_empty() {
            return;
        }
        let config = self.submit_config();
        // Graphs off, or captured under rules the device no longer uses: not kept.
        if !config.graphs || config.graph_cache == 0 {
            return;
        }
        let rules = self.graph_rules(&config);
        let (fresh, stale): (Vec<_>, Vec<_>) = graphs.into_iter().partition(|g| g.rules == rules);
        let dropped: usize = {
            let mut cache = lock(&self.inner.graphs);
            fresh.into_iter().map(|g| cache.put(g, config.graph_cache)).sum()
        };
        if dropped > 0 {
            lock(&self.inner.submit).1.graphs_evicted += dropped as u64;
        }
        // Stale ones are destroyed (`cuGraphExecDestroy`) only now, with no lock held.
        drop(stale);
    }

    /// A kept plan for which `matches` holds, taken out (the caller keeps one again).
    pub(crate) fn take_plan_memo(&self, matches: impl Fn(&PlanMemo) -> bool) -> Option<PlanMemo> {
        let mut memos = lock(&self.inner.plan_memos);
        let at = memos.iter().rposition(matches)?;
        Some(memos.remove(at))
    }

    /// Whether the last deferred scope that ended worked in rounds (many operations logged
    /// after a lane came back after other lanes had logged): the next one then forms no
    /// segments.
    pub(crate) fn last_scope_in_rounds(&self) -> bool {
        self.inner.rounds.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Notes whether a deferred scope that ended worked in rounds (see `last_scope_in_rounds`).
    pub(crate) fn note_rounds(&self, rounds: bool) {
        self.inner.rounds.store(rounds, std::sync::atomic::Ordering::Relaxed);
    }

    /// Keeps a batch's plan for later batches: the last [`PLAN_MEMOS`] kept.
    pub(crate) fn keep_plan_memo(&self, memo: PlanMemo) {
        let mut memos = lock(&self.inner.plan_memos);
        if memos.len() >= PLAN_MEMOS {
            memos.remove(0);
        }
        memos.push(memo);
    }

    /// Counts a graph dropped because its update failed.
    pub(crate) fn note_evicted(&self) {
        lock(&self.inner.submit).1.graphs_evicted += 1;
    }

    /// The idle lanes the last scope left, if no other scope took them.
    pub(crate) fn take_kept_lanes(&self) -> Option<Box<dyn std::any::Any + Send>> {
        lock(&self.inner.kept_lanes).take()
    }

    /// Keeps a scope's idle lanes for the next scope; gives them back if some are kept
    /// already (another scope ended first).
    pub(crate) fn keep_lanes(&self, kept: Box<dyn std::any::Any + Send>) -> Option<Box<dyn std::any::Any + Send>> {
        let mut slot = lock(&self.inner.kept_lanes);
        match *slot {
            Some(_) => Some(kept),
            None => {
                *slot = Some(kept);
                None
            }
        }
    }

    /// The errors sluice found where it could not return them, oldest first: releasing a
    /// handle while dropping it (a [`DeviceMatrix`](crate::DeviceMatrix), a
    /// [`PinnedMatrix`](crate::PinnedMatrix), a stream or event of the pools), and ending a
    /// scope whose closure panicked. Library code never prints them; a [`scope`](crate::scope)
    /// returns those recorded on its device while it ran, and this returns the rest (also
    /// those of devices whose last `Gpu` handle is already gone).
    ///
    /// ```no_run
    /// # use sluice_host as sluice;
    /// let gpu = sluice::Gpu::new(0)?;
    /// drop(gpu.alloc_buffer::<f32>(16)?);   // a failed free would be recorded, not printed
    /// for e in gpu.take_errors() {
    ///     eprintln!("sluice: {e}");
    /// }
    /// # Ok::<(), sluice::Error>(())
    /// ```
    pub fn take_errors(&self) -> Vec<Error> {
        let mut errors = ORPHANED.take();
        errors.extend(self.inner.ctx.errors().take());
        errors
    }

    /// The errors recorded on this device only (not the orphaned ones).
    pub(crate) fn take_recorded_errors(&self) -> Vec<Error> {
        self.inner.ctx.errors().take()
    }

    /// Records an error that cannot be returned (see [`take_errors`](Gpu::take_errors)).
    pub(crate) fn record_error(&self, e: Error) {
        self.inner.ctx.errors().record(e);
    }

    /// Allocates `bytes` of device memory, usable by every stream when this returns (see
    /// [`Allocator`]).
    ///
    /// # Errors
    /// [`Error::OutOfMemory`] (after trimming the pool and retrying once), [`Error::Alloc`].
    pub(crate) fn alloc_device(&self, bytes: usize) -> Result<DevicePtr> {
        let (pool, stream) = match &self.inner.allocator {
            Allocator::Cuda { pool, stream } => (*pool, stream),
            Allocator::Cpu => {
                let cpu = self.inner.ctx.cpu_device().expect("the CPU allocator belongs to the CPU context");
                let alloc = || cpu.alloc(bytes, crate::span::ALLOC_ALIGN, 0xff);
                // As on a GPU: what ended scopes kept goes back before the device is full.
                let ptr = alloc().or_else(|| self.inner.release_reused().ok().and_then(|()| alloc()));
                return ptr.ok_or_else(|| {
                    let free = self.mem_info().map(|m| m.free).unwrap_or(0);
                    Error::OutOfMemory { requested: bytes, free }
                });
            }
        };
        // SAFETY: the pool is this context's device's default pool (`Allocator::new`).
        let alloc = || unsafe { stream.alloc_async(pool, bytes) };
        let ptr = match alloc() {
            Ok(p) => p,
            Err(e) if e.is_out_of_memory() => {
                // The pool may hold freed memory in blocks that do not fit this request, or
                // frees not yet completed: give it all back to the driver, then try again.
                self.trim_memory_pool()?;
                match alloc() {
                    Ok(p) => p,
                    Err(e) if e.is_out_of_memory() => {
                        let free = self.mem_info().map(|m| m.free).unwrap_or(0);
                        return Err(Error::OutOfMemory { requested: bytes, free });
                    }
                    Err(error) => return Err(Error::Alloc { bytes, error }),
                }
            }
            Err(error) => return Err(Error::Alloc { bytes, error }),
        };
        // The allocation is stream-ordered: complete it before any lane may use the memory.
        // This waits for the allocator stream only, which holds no user work.
        if let Err(error) = stream.synchronize() {
            let e = Error::Alloc { bytes, error };
            // SAFETY: never handed out; the free is ordered after the allocation on the
            // same stream.
            return Err(match unsafe { stream.free_async(ptr) } {
                Ok(()) => e,
                Err(error) => e.also(Error::Free { what: "device memory", error }),
            });
        }
        Ok(ptr)
    }

    /// [`alloc_device`](Gpu::alloc_device) for a scope: the most recent allocation of exactly
    /// `bytes` an ended scope gave back ([`recycle_device`](Gpu::recycle_device)), if any —
    /// so that a loop of scopes finds its memory at the same address every time (and a
    /// repeated scope's cached graph needs no new addresses), without a driver call.
    pub(crate) fn alloc_device_for_scope(&self, bytes: usize) -> Result<DevicePtr> {
        let kept = {
            let mut reuse = lock(&self.inner.reuse);
            reuse.iter().rposition(|(b, _)| *b == bytes).map(|i| reuse.remove(i).1)
        };
        let Some(ptr) = kept else { return self.alloc_device(bytes) };
        if let Allocator::Cpu = &self.inner.allocator {
            // Poisoned again, as a fresh allocation of the CPU backend is (its tests of
            // unwritten memory rely on it).
            let cpu = self.inner.ctx.cpu_device().expect("the CPU allocator belongs to the CPU context");
            // SAFETY: given back by an ended scope whose lanes had joined (`recycle_device`'s
            // duty), and out of the list now: nothing uses it.
            if !unsafe { cpu.refill(ptr, 0xff) } {
                return self.alloc_device(bytes);
            }
        }
        Ok(ptr)
    }

    /// Gives a scope's allocation of `bytes` back for a later scope's (up to a bound), or
    /// frees it ([`free_device`](Gpu::free_device)). The CPU backend keeps it the same way
    /// (poisoned again when it is reused), so that its scopes, too, find their memory at the
    /// same addresses as the last one's.
    ///
    /// # Safety
    /// As [`free_device`](Gpu::free_device): `ptr` came from an allocation of `bytes` on a `Gpu`
    /// of this context, is given back once, and no work that may use it is pending.
    pub(crate) unsafe fn recycle_device(&self, ptr: DevicePtr, bytes: usize) -> std::result::Result<(), DriverError> {
        {
            let mut reuse = lock(&self.inner.reuse);
            let held: usize = reuse.iter().map(|(b, _)| b).sum();
            if reuse.len() < REUSE_ENTRIES && held + bytes <= REUSE_BYTES {
                reuse.push((bytes, ptr));
                return Ok(());
            }
        }
        // SAFETY: the caller's duties are `free_device`'s.
        unsafe { self.free_device(ptr) }
    }

    /// Returns device memory to the pool (stream-ordered on the allocator stream; does not
    /// wait).
    ///
    /// # Safety
    /// - `ptr` came from [`alloc_device`](Gpu::alloc_device) on a `Gpu` of this context and
    ///   is freed once.
    /// - No work that may use the memory is pending on any stream (its lanes were joined),
    ///   and none is enqueued after this call.
    pub(crate) unsafe fn free_device(&self, ptr: DevicePtr) -> std::result::Result<(), DriverError> {
        // A cached graph's copy node may name this allocation (see `Context::memory_epoch`).
        self.inner.ctx.note_memory_freed();
        match &self.inner.allocator {
            // SAFETY: the caller's duties are `free_async`'s.
            Allocator::Cuda { stream, .. } => unsafe { stream.free_async(ptr) },
            Allocator::Cpu => {
                let cpu = self.inner.ctx.cpu_device().expect("the CPU allocator belongs to the CPU context");
                // SAFETY: the caller's duty: no work uses the memory any more.
                match unsafe { cpu.free(ptr) } {
                    true => Ok(()),
                    false => Err(DriverError::from_code(1)),
                }
            }
        }
    }

    /// A stream for a lane: an idle one from this device's pool, or a new one.
    pub(crate) fn take_stream(&self) -> Result<StreamHandle> {
        if let Some(s) = lock(&self.inner.stream_pool).pop() {
            return Ok(s);
        }
        StreamHandle::create(&self.inner.ctx).map_err(|error| Error::Stream { call: "cuStreamCreate", error })
    }

    /// Gives a lane's stream back for later scopes (or destroys it if the pool is full).
    /// Only an idle stream may come back: `cuStreamSynchronize` on it succeeded after
    /// everything enqueued on it.
    pub(crate) fn recycle_stream(&self, stream: StreamHandle) {
        let mut pool = lock(&self.inner.stream_pool);
        if pool.len() < STREAM_POOL_LIMIT {
            pool.push(stream);
        }
        // Else dropped here: destroyed, any error recorded on the context.
    }

    /// An event for a fence (`timing == false`) or a timestamp: an idle one from this
    /// device's pool, or a new one.
    pub(crate) fn take_event(&self, timing: bool) -> Result<Event> {
        let pool = if timing { &self.inner.timing_pool } else { &self.inner.event_pool };
        if let Some(e) = lock(pool).pop() {
            return Ok(e);
        }
        Event::create(&self.inner.ctx, timing).map_err(|error| Error::Event { call: "cuEventCreate", error })
    }

    /// Gives events back for later scopes. Only events no sluice wait can reach any more
    /// may come back (their scope joined); waits already enqueued on them keep the record
    /// they saw, so re-recording is safe anyway.
    pub(crate) fn recycle_events(&self, events: impl IntoIterator<Item = Event>) {
        let (mut fences, mut timings) = (lock(&self.inner.event_pool), lock(&self.inner.timing_pool));
        for e in events {
            let pool = if e.timing() { &mut timings } else { &mut fences };
            if pool.len() < EVENT_POOL_LIMIT {
                pool.push(e);
            }
        }
    }

    /// The context's identity (which device memory and functions belong to).
    pub(crate) fn ctx_id(&self) -> usize {
        self.inner.ctx.id()
    }

    /// The thread that launches scopes' segment graphs.
    pub(crate) fn launcher(&self) -> &Launcher {
        &self.inner.launcher
    }

    /// The retained context, for handles made in it.
    pub(crate) fn context(&self) -> &Arc<Context> {
        &self.inner.ctx
    }

    /// A process-wide unique allocation id (two `Gpu`s of one device share addresses).
    pub(crate) fn next_alloc_id(&self) -> u64 {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        NEXT.fetch_add(1, Ordering::Relaxed)
    }
}

impl GpuInner {
    /// Frees the scope allocations kept for later scopes (stream-ordered, on the allocator
    /// stream). The first error is returned; the rest of the memory is freed anyway.
    fn release_reused(&self) -> std::result::Result<(), DriverError> {
        let kept = std::mem::take(&mut *lock(&self.reuse));
        if !kept.is_empty() {
            self.ctx.note_memory_freed();
        }
        let mut first = Ok(());
        for (_, ptr) in kept {
            let freed = match &self.allocator {
                // SAFETY: each came from `alloc_device` in this context and was given back by a
                // scope whose lanes had joined (`recycle_device`'s duty); it leaves the list
                // here, so it is freed once, and no work can use it any more.
                Allocator::Cuda { stream, .. } => unsafe { stream.free_async(ptr) },
                Allocator::Cpu => {
                    let cpu = self.ctx.cpu_device().expect("the CPU allocator belongs to the CPU context");
                    // SAFETY: as above.
                    match unsafe { cpu.free(ptr) } {
                        true => Ok(()),
                        false => Err(DriverError::from_code(1)),
                    }
                }
            };
            if first.is_ok() {
                first = freed;
            }
        }
        first
    }
}

impl Drop for GpuInner {
    fn drop(&mut self) {
        if self.ctx.lost().is_none() {
            if let Err(error) = self.release_reused() {
                self.ctx.errors().record(Error::Free { what: "device memory", error });
            }
        }
    }
}

impl std::fmt::Debug for Gpu {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gpu")
            .field("ordinal", &self.inner.info.ordinal)
            .field("name", &self.inner.info.name)
            .finish_non_exhaustive()
    }
}

/// Locks a mutex, taking the data even if a panicking thread poisoned it: every
/// structure sluice keeps behind a mutex stays consistent between statements.
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

#[cfg(test)]
pub(crate) fn test_info() -> DeviceInfo {
    // The H200's limits.
    DeviceInfo {
        ordinal: 0,
        name: "test device".into(),
        compute_capability: (9, 0),
        sm_count: 132,
        total_memory: 140 << 30,
        max_threads_per_block: 1024,
        max_block_dims: [1024, 1024, 64],
        max_grid_dims: [i32::MAX as u32, 65535, 65535],
        max_shared_memory_per_block: 48 << 10,
        max_shared_memory_per_block_optin: 227 << 10,
        warp_size: 32,
        async_engines: 3,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gpu_is_send_and_sync() {
        fn assert<T: Send + Sync>() {}
        assert::<Gpu>();
    }

    #[test]
    fn no_driver_is_a_typed_error_not_a_panic() {
        if !driver::driver_present() {
            assert_eq!(Gpu::cuda(0).unwrap_err(), Error::NoDriver);
            assert_eq!(Gpu::count().unwrap_err(), Error::NoDriver);
            assert_eq!(Gpu::devices().unwrap_err(), Error::NoDriver);
        }
    }
}
