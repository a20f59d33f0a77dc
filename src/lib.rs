//! sluice: CUDA kernels in Rust, run on many streams at once; the borrow checker orders
//! the streams.
//!
//! This facade re-exports the host library ([`sluice_host`]) at the top and adds the
//! kernels of `gpu-kernels`, compiled to PTX at build time, as typed handles in
//! [`kernels`]. See [`sluice_host`]'s docs for the model (scopes, lanes, views, fences) and
//! its safety rules.
//!
//! ```no_run
//! use sluice::{kernels, scope, Gpu, LaunchConfig};
//! let gpu = Gpu::new(0)?;
//! let mut host = gpu.pinned_matrix::<f32>(4096, 8)?;
//! scope(&gpu, |s| {
//!     let out = s.alloc_matrix::<f32>(4096, 8)?;
//!     for (i, ((lane, col), dst)) in s.lanes(8)?.into_iter().zip(out.columns_mut()).zip(host.columns_mut()).enumerate() {
//!         lane.enter(|st| {
//!             let mut col = st.bind(col);
//!             st.launch(&kernels::fill_column, LaunchConfig::for_elements(4096, 256), (&mut col, i as f32))?;
//!             st.copy_to_host(&col, dst)
//!         })?;
//!     }
//!     Ok(())
//! })?;
//! assert_eq!(host.column(3).unwrap()[0], 3.0);
//! # Ok::<(), sluice::Error>(())
//! ```

pub use gpu_kernels::Particle;
pub use sluice_host as host;
pub use sluice_host::*;

/// The kernels of `gpu-kernels`, compiled to PTX at build time and embedded, with a typed
/// handle per kernel.
///
/// Each handle is a plain `const` [`Kernel`]: the entry's name and its
/// parameter tuple. (A `#[kernel]` macro will emit these from the kernel's signature; for
/// now they are written by hand, and checked against the PTX when the module loads.)
///
/// ```
/// use sluice::kernels;
/// assert_eq!(kernels::potential.name(), "potential");
/// assert!(kernels::ENTRIES.split(',').any(|e| e == "saxpy"));
/// ```
pub mod kernels {
    use crate::{Kernel, Mut, Particle, Ref};

    /// The PTX module (text), built for [`ARCH`].
    pub const PTX: &str = include_str!(env!("SLUICE_KERNELS_PTX"));
    /// The architecture the PTX was built for (`SLUICE_ARCH` at build time, default `sm_90`).
    pub const ARCH: &str = env!("SLUICE_KERNELS_ARCH");
    /// The kernel entry names in the PTX.
    pub const ENTRIES: &str = env!("SLUICE_KERNELS_ENTRIES");

    /// `fill_column(out: &mut [f32], value: f32)`: `out[i] = value`. Any 1-D grid.
    ///
    /// ```no_run
    /// # use sluice::{kernels, LaunchConfig};
    /// # fn demo(gpu: &sluice::Gpu) -> sluice::Result<()> {
    /// sluice::scope(gpu, |s| {
    ///     let m = s.alloc_buffer::<f32>(1000)?;
    ///     s.lane()?.enter(|st| {
    ///         let mut v = st.bind(m.as_columns_mut());
    ///         st.launch(&kernels::fill_column, LaunchConfig::for_elements(1000, 256), (&mut v, 7.0))
    ///     })
    /// })
    /// # }
    /// ```
    #[allow(non_upper_case_globals)]
    // SAFETY: `fill_column` (gpu-kernels) writes `out[i]` for `i < len` only, through its
    // one slice, which is `Mut`; its PTX parameters are (u64, u64, f32).
    pub const fill_column: Kernel<(Mut<f32>, f32)> = unsafe { Kernel::new(PTX, "fill_column") };

    /// `saxpy(y: &mut [f32], x: &[f32], a: f32)`: `y[i] = a * x[i] + y[i]` for
    /// `i < min(len y, len x)`. Any 1-D grid.
    ///
    /// ```no_run
    /// # use sluice::{kernels, LaunchConfig};
    /// # fn demo(gpu: &sluice::Gpu, x: &[f32]) -> sluice::Result<()> {
    /// sluice::scope(gpu, |s| {
    ///     let xs = s.upload(x)?;
    ///     let y = s.alloc_buffer::<f32>(x.len())?;
    ///     s.lane()?.enter(|st| {
    ///         let x = st.await_fence(&xs)?;
    ///         let mut y = st.bind(y.as_columns_mut());
    ///         st.zero(&mut y)?;
    ///         st.launch(&kernels::saxpy, LaunchConfig::for_elements(y.len(), 256), (&mut y, &x, 2.0))
    ///     })
    /// })
    /// # }
    /// ```
    #[allow(non_upper_case_globals)]
    // SAFETY: `saxpy` writes only `y`, reads `x`, both below the smaller length; its PTX
    // parameters are (u64, u64, u64, u64, f32).
    pub const saxpy: Kernel<(Mut<f32>, Ref<f32>, f32)> = unsafe { Kernel::new(PTX, "saxpy") };

    /// `potential(out: &mut [f32], targets: &[Particle], sources: &[Particle], eps2: f32)`:
    /// `out[i] = Σ_k q_k / sqrt(|t_i − s_k|² + eps2)` for `i < min(len out, len targets)`.
    /// One thread per row (`LaunchConfig::for_elements(rows, 256)`).
    ///
    /// ```no_run
    /// # use sluice::{kernels, LaunchConfig, Particle};
    /// # fn demo(gpu: &sluice::Gpu, t: &[Particle], src: &[Particle]) -> sluice::Result<()> {
    /// sluice::scope(gpu, |s| {
    ///     let (targets, sources) = (s.upload(t)?, s.upload(src)?);
    ///     let out = s.alloc_buffer::<f32>(t.len())?;
    ///     s.lane()?.enter(|st| {
    ///         let (t, src) = (st.await_fence(&targets)?, st.await_fence(&sources)?);
    ///         let mut out = st.bind(out.as_columns_mut());
    ///         st.launch(&kernels::potential, LaunchConfig::for_elements(t.len(), 256), (&mut out, &t, &src, 1e-4))
    ///     })
    /// })
    /// # }
    /// ```
    #[allow(non_upper_case_globals)]
    // The signature is the kernel's parameter list, spelled out as a macro would emit it.
    #[allow(clippy::type_complexity)]
    // SAFETY: `potential` writes `out[i]` for `i < min(out_len, targets_len)` only and reads
    // `targets`/`sources` below their lengths; its PTX parameters are
    // (u64, u64, u64, u64, u64, u64, f32).
    pub const potential: Kernel<(Mut<f32>, Ref<Particle>, Ref<Particle>, f32)> =
        unsafe { Kernel::new(PTX, "potential") };
    /// `potential_tiled(out, targets, sources, eps2)`: as [`potential`], with the sources
    /// staged through shared memory 256 at a time. Block size up to 1024 (256 recommended),
    /// grid `ceil(rows / block)`.
    #[allow(non_upper_case_globals)]
    #[allow(clippy::type_complexity)]
    // SAFETY: writes `out[i]` for `i < min(out_len, targets_len)` only, reads `targets` and
    // `sources` below their lengths; PTX parameters (u64, u64, u64, u64, u64, u64, f32).
    pub const potential_tiled: Kernel<(Mut<f32>, Ref<Particle>, Ref<Particle>, f32)> =
        unsafe { Kernel::new(PTX, "potential_tiled") };

    /// `sum_reduce(out, x)`: `out[0] += Σ x` (warp shuffles, one atomic add per block).
    /// `out[0]` must be zeroed first. Block a multiple of 32 (256 recommended), grid
    /// `min(ceil(n / 1024), 8 × SMs)`.
    #[allow(non_upper_case_globals)]
    // SAFETY: writes only `out[0]` (atomically), reads `x` below its length; PTX
    // parameters (u64, u64, u64, u64).
    pub const sum_reduce: Kernel<(Mut<f32>, Ref<f32>)> = unsafe { Kernel::new(PTX, "sum_reduce") };

    /// `transpose(out, input, rows, cols)`: `out[c * rows + r] = input[r * cols + c]`
    /// through 32×33 shared tiles. Block `(32, 8)`, grid `(ceil(cols / 32), ceil(rows / 32))`.
    #[allow(non_upper_case_globals)]
    // SAFETY: writes `out` and reads `input` below `rows * cols`, and does nothing when
    // that exceeds either length; PTX parameters (u64, u64, u64, u64, u32, u32).
    pub const transpose: Kernel<(Mut<f32>, Ref<f32>, u32, u32)> = unsafe { Kernel::new(PTX, "transpose") };

    /// `histogram(bins, x, lo, hi)`: counts `x` into `bins.len()` equal bins over `[lo, hi)`
    /// (values outside are not counted), shared-memory sub-histograms for up to 4096 bins.
    /// `bins` must be zeroed first. Block 256, grid `min(ceil(n / 256), 2 × SMs)`.
    #[allow(non_upper_case_globals)]
    // SAFETY: writes `bins` (atomically) below its length, reads `x` below its length;
    // PTX parameters (u64, u64, u64, u64, f32, f32).
    pub const histogram: Kernel<(Mut<u32>, Ref<f32>, f32, f32)> = unsafe { Kernel::new(PTX, "histogram") };

    /// `device_selftest(out)`: exercises the device std (shuffles, votes, barriers, atomics,
    /// shared memory, libdevice math, printf) and records the results for
    /// `gpu_kernels::reference::check_selftest`. Grid 1, block 64, 256 bytes of dynamic
    /// shared memory, `out` of `gpu_kernels::SELFTEST_LEN` elements.
    #[allow(non_upper_case_globals)]
    // SAFETY: writes `out` below `SELFTEST_LEN <= out_len` only; PTX parameters (u64, u64).
    pub const device_selftest: Kernel<(Mut<u32>,)> = unsafe { Kernel::new(PTX, "device_selftest") };
}

#[cfg(test)]
mod tests {
    use super::kernels;

    /// The hand-written descriptors match the embedded PTX (what loading checks again).
    #[test]
    fn kernel_handles_match_the_ptx() {
        for (name, check) in [
            (kernels::fill_column.name(), kernels::fill_column.check_signature()),
            (kernels::saxpy.name(), kernels::saxpy.check_signature()),
            (kernels::potential.name(), kernels::potential.check_signature()),
            (kernels::potential_tiled.name(), kernels::potential_tiled.check_signature()),
            (kernels::sum_reduce.name(), kernels::sum_reduce.check_signature()),
            (kernels::transpose.name(), kernels::transpose.check_signature()),
            (kernels::histogram.name(), kernels::histogram.check_signature()),
            (kernels::device_selftest.name(), kernels::device_selftest.check_signature()),
        ] {
            assert!(kernels::ENTRIES.split(',').any(|e| e == name), "{name} not in {}", kernels::ENTRIES);
            assert_eq!(check, Ok(()), "{name}");
        }
    }
}
