//! sluice: CUDA kernels in Rust, run on many streams at once.
pub use sluice_host as host;

/// The kernels of `gpu-kernels`, compiled to PTX at build time and embedded.
pub mod kernels {
    /// The PTX module (text), built for [`ARCH`].
    pub const PTX: &str = include_str!(env!("SLUICE_KERNELS_PTX"));
    /// The architecture the PTX was built for (`SLUICE_ARCH` at build time, default `sm_90`).
    pub const ARCH: &str = env!("SLUICE_KERNELS_ARCH");
    /// The kernel entry names in the PTX.
    pub const ENTRIES: &str = env!("SLUICE_KERNELS_ENTRIES");
}
