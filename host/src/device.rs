//! The device: [`Gpu`] (a device and its retained primary context) and its properties.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use crate::driver::{self, device::Attribute, DriverError, InitError, RawContext, RawEvent};
use crate::error::{Error, Result};
use crate::launch::{LoadedModule, ResolvedFn};

/// One CUDA device, ready for work: the std analogue is a thread pool you hand work to.
///
/// A `Gpu` holds the device's primary context (retained, released when the last clone and
/// the last buffer of this device are gone). Clones are cheap and share the context, the
/// loaded modules and the kernel cache. Work happens in a [`scope`](crate::scope); memory
/// can be allocated here (owned, freed on drop) or in a scope (freed when the scope ends).
///
/// ```no_run
/// # fn main() -> sluice_host::Result<()> {
/// use sluice_host::Gpu;
/// for d in Gpu::devices()? {
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
    dev: i32,
    pub(crate) ctx: RawContext,
    pub(crate) info: DeviceInfo,
    pub(crate) driver_version: u32,
    pub(crate) modules: Mutex<Vec<LoadedModule>>,
    pub(crate) functions: Mutex<Vec<ResolvedFn>>,
    /// Fence events reused across scopes (created without timing). Only events whose
    /// every use is over (their scope joined) come back here.
    pub(crate) event_pool: Mutex<Vec<RawEvent>>,
}

/// A device's properties, as the driver reports them.
///
/// ```no_run
/// # fn main() -> sluice_host::Result<()> {
/// let gpu = sluice_host::Gpu::new(0)?;
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
/// let gpu = sluice_host::Gpu::new(0)?;
/// let sluice_host::MemInfo { free, total } = gpu.mem_info()?;
/// assert!(free <= total);
/// # Ok::<(), sluice_host::Error>(())
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

fn device_info(ordinal: usize, dev: i32) -> Result<DeviceInfo> {
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
    /// Opens device `ordinal` and retains its primary context.
    ///
    /// # Errors
    /// [`Error::NoDriver`] where no CUDA driver is installed (never a panic),
    /// [`Error::DriverTooOld`], [`Error::NoDevice`], or the failing driver call.
    ///
    /// ```
    /// match sluice_host::Gpu::new(0) {
    ///     Ok(gpu) => println!("running on {}", gpu.info().name),
    ///     Err(sluice_host::Error::NoDriver) => println!("no GPU here"),
    ///     Err(e) => println!("{e}"),
    /// }
    /// ```
    pub fn new(ordinal: usize) -> Result<Gpu> {
        let driver_version = init()?;
        let count = Gpu::count()?;
        if ordinal >= count {
            return Err(Error::NoDevice { ordinal, count });
        }
        let dev = query("cuDeviceGet", driver::device::get(ordinal))?;
        let info = device_info(ordinal, dev)?;
        let ctx = query("cuDevicePrimaryCtxRetain", driver::device::retain_primary(dev))?;
        Ok(Gpu {
            inner: Arc::new(GpuInner {
                dev,
                ctx,
                info,
                driver_version,
                modules: Mutex::new(Vec::new()),
                functions: Mutex::new(Vec::new()),
                event_pool: Mutex::new(Vec::new()),
            }),
        })
    }

    /// How many CUDA devices the driver sees.
    ///
    /// ```no_run
    /// println!("{} GPU(s)", sluice_host::Gpu::count()?);
    /// # Ok::<(), sluice_host::Error>(())
    /// ```
    pub fn count() -> Result<usize> {
        init()?;
        match driver::device::count() {
            Ok(n) => Ok(n),
            // No device is an answer (zero), not a failure.
            Err(e) if e.raw() == cudarc::driver::sys::CUresult::CUDA_ERROR_NO_DEVICE => Ok(0),
            Err(error) => Err(Error::Device { call: "cuDeviceGetCount", error }),
        }
    }

    /// The properties of every device, without creating contexts.
    ///
    /// ```no_run
    /// for d in sluice_host::Gpu::devices()? {
    ///     println!("{d:?}");
    /// }
    /// # Ok::<(), sluice_host::Error>(())
    /// ```
    pub fn devices() -> Result<Vec<DeviceInfo>> {
        (0..Gpu::count()?)
            .map(|i| device_info(i, query("cuDeviceGet", driver::device::get(i))?))
            .collect()
    }

    /// This device's properties.
    ///
    /// ```no_run
    /// let gpu = sluice_host::Gpu::new(0)?;
    /// println!("{} SMs", gpu.info().sm_count);
    /// # Ok::<(), sluice_host::Error>(())
    /// ```
    pub fn info(&self) -> &DeviceInfo {
        &self.inner.info
    }

    /// The driver's CUDA version (`cuDriverGetVersion`: 13000 for CUDA 13.0).
    ///
    /// ```no_run
    /// let gpu = sluice_host::Gpu::new(0)?;
    /// assert!(gpu.driver_version() >= 11040);
    /// # Ok::<(), sluice_host::Error>(())
    /// ```
    pub fn driver_version(&self) -> u32 {
        self.inner.driver_version
    }

    /// Free and total device memory now.
    ///
    /// ```no_run
    /// let gpu = sluice_host::Gpu::new(0)?;
    /// let m = gpu.mem_info()?;
    /// assert!(m.free <= m.total);
    /// # Ok::<(), sluice_host::Error>(())
    /// ```
    pub fn mem_info(&self) -> Result<MemInfo> {
        // SAFETY: the context is retained for as long as `self.inner` lives.
        let (free, total) = unsafe { driver::mem::info(self.inner.ctx) }
            .map_err(|error| Error::Device { call: "cuMemGetInfo", error })?;
        Ok(MemInfo { free, total })
    }

    pub(crate) fn ctx(&self) -> RawContext {
        self.inner.ctx
    }

    /// A process-wide unique allocation id (two `Gpu`s of one device share addresses).
    pub(crate) fn next_alloc_id(&self) -> u64 {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        NEXT.fetch_add(1, Ordering::Relaxed)
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

impl Drop for GpuInner {
    fn drop(&mut self) {
        // Errors here cannot be returned; the context is going away with everything in it.
        let ctx = self.ctx;
        for e in lock(&self.event_pool).drain(..) {
            // SAFETY: pooled events come back only from joined scopes: nothing waits on them.
            let _ = unsafe { driver::event::destroy(ctx, e) };
        }
        for m in lock(&self.modules).drain(..) {
            // SAFETY: the last `Gpu` is gone, so no scope (which borrows one) is running and
            // no launch of this module can be pending.
            let _ = unsafe { driver::module::unload(ctx, m.module) };
        }
        // SAFETY: paired with the retain in `Gpu::new`; every user of the context (buffers,
        // scopes, modules) held this `GpuInner` alive until now.
        let _ = unsafe { driver::device::release_primary(self.dev) };
    }
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
            assert_eq!(Gpu::new(0).unwrap_err(), Error::NoDriver);
            assert_eq!(Gpu::count().unwrap_err(), Error::NoDriver);
            assert_eq!(Gpu::devices().unwrap_err(), Error::NoDriver);
        }
    }
}
