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
/// Each handle is a plain `const` [`Kernel`]: the entry's name and its parameter tuple,
/// both emitted by `#[kernel]` from the kernel's own Rust signature (and checked against
/// the PTX again when the module loads).
///
/// ```
/// use sluice::kernels;
/// assert_eq!(kernels::potential.name(), "potential");
/// assert!(kernels::ENTRIES.split(',').any(|e| e == "saxpy"));
/// ```
pub mod kernels {
    use crate::Kernel;

    /// The PTX module (text), built for [`ARCH`].
    pub const PTX: &str = include_str!(env!("SLUICE_KERNELS_PTX"));
    /// The architecture the PTX was built for (`SLUICE_ARCH` at build time, default `sm_90`).
    pub const ARCH: &str = env!("SLUICE_KERNELS_ARCH");
    /// The kernel entry names in the PTX.
    pub const ENTRIES: &str = env!("SLUICE_KERNELS_ENTRIES");

    /// One typed handle per `#[kernel]` of `gpu-kernels`, named as the kernel: the
    /// signature comes from the kernel's own Rust parameters (`KernelDecl`), the entry
    /// from the embedded [`PTX`]. Beside each handle (a `const`, in the value namespace)
    /// the kernel's declaration type of the same name offers `args`, the arguments by
    /// name: `st.launch(&kernels::saxpy, cfg, kernels::saxpy::args(&mut y, &x, 2.0))`.
    macro_rules! handles {
        ($($(#[$doc:meta])* $name:ident;)*) => {$(
            $(#[$doc])*
            #[allow(non_upper_case_globals)]
            pub const $name: Kernel<<gpu_kernels::$name as crate::KernelDecl>::Signature> =
                // SAFETY: `PTX` is `gpu-kernels` compiled for the device by this crate's
                // build.rs, and `gpu_kernels::$name` is declared by `#[kernel]` in that same
                // crate: the entry is the kernel the declaration describes.
                unsafe { Kernel::of::<gpu_kernels::$name>(PTX) };
            // The declaration (type namespace only): `kernels::$name::args(..)` names the
            // arguments, so a wrong one is reported against the kernel's own parameter.
            pub use gpu_kernels::$name;
        )*};
    }

    handles! {
        /// `fill_column(out: DeviceSliceMut<f32>, value: f32)`: `out[i] = value`. Any 1-D grid.
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
        fill_column;
        /// `saxpy(y: DeviceSliceMut<f32>, x: &[f32], a: f32)`: `y[i] = a * x[i] + y[i]` for
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
        ///         let cfg = LaunchConfig::for_elements(y.len(), 256);
        ///         st.launch(&kernels::saxpy, cfg, (&mut y, &x, 2.0))?;
        ///         // The same launch with the arguments by name (errors name `saxpy`'s parameters):
        ///         st.launch(&kernels::saxpy, cfg, kernels::saxpy::args(&mut y, &x, 2.0))
        ///     })
        /// })
        /// # }
        /// ```
        saxpy;
        /// `potential(out, targets: &[Particle], sources: &[Particle], eps2: f32)`:
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
        potential;
        /// `potential_tiled(out, targets, sources, eps2)`: as [`const@potential`], with the sources
        /// staged through shared memory 256 at a time. Block size up to 1024 (256
        /// recommended), grid `ceil(rows / block)`.
        potential_tiled;
        /// `potential_tiled_rsqrt(out, targets, sources, eps2)`: as [`const@potential_tiled`] with
        /// `q * rsqrt(r2)` and the inner loop unrolled 8 times, the form of CUDA C++'s
        /// `rsqrtf` kernel (`benches/cuda/kernels.cuh`). Relative error ≤ 1e-5.
        potential_tiled_rsqrt;
        /// `sum_reduce(out, x)`: `out[0] += Σ x` (warp shuffles, one atomic add per block).
        /// `out[0]` must be zeroed first. Block a multiple of 32 (256 recommended), grid
        /// `min(ceil(n / 1024), 8 × SMs)`.
        sum_reduce;
        /// `transpose(out, input, rows: u32, cols: u32)`: `out[c * rows + r] = input[r * cols + c]`
        /// through 32×33 shared tiles. Block `(32, 8)`, grid `(ceil(cols / 32), ceil(rows / 32))`.
        transpose;
        /// `histogram(bins: DeviceSliceMut<u32>, x: &[f32], lo: f32, hi: f32)`: counts `x` into
        /// `bins.len()` equal bins over `[lo, hi)` (values outside are not counted),
        /// shared-memory sub-histograms for up to 4096 bins. `bins` must be zeroed first.
        /// Block 256, grid `min(ceil(n / 256), 2 × SMs)`.
        histogram;
        /// `device_selftest(out: DeviceSliceMut<u32>)`: exercises the device std (shuffles,
        /// votes, barriers, atomics, shared memory, libdevice math, printf) and records the
        /// results for `gpu_kernels::reference::check_selftest`. Grid 1, block 64, 256 bytes
        /// of dynamic shared memory, `out` of `gpu_kernels::SELFTEST_LEN` elements.
        device_selftest;
    }
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
