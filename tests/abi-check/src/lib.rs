//! A project whose kernel crate picks a type per target: the device build compiles one
//! element type, the host declares another of the same lowered size. sluice's load-time
//! check (the parameter record `#[kernel]` leaves in the PTX) refuses such a kernel with
//! `Error::KernelParamType`, on a GPU and on the CPU backend alike, and launches nothing.
//! `tests/gpu_abi_check.rs` shows it.

/// The kernels of `./kernels`, embedded by this package's build script.
pub mod kernels {
    sluice::include_kernels!(abi_check_kernels);
}
