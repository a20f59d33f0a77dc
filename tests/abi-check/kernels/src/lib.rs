//! Kernels whose parameter types are chosen per target, as a careless `cfg` does: the
//! lowered parameters (an address and a length, or a value of 8 bytes) have the same sizes
//! on both sides, so only the element types differ.

use sluice_device::kernel;
use sluice_device::slice::DeviceSliceMut;

/// The element type: 8 bytes on the device, 4 on the host.
#[cfg(target_arch = "nvptx64")]
pub type Count = u64;
/// The element type: 8 bytes on the device, 4 on the host.
#[cfg(not(target_arch = "nvptx64"))]
pub type Count = u32;

/// A by-value parameter whose fields depend on the target: 8 bytes on both sides, aligned
/// to 8 on the device and to 4 on the host.
#[cfg(target_arch = "nvptx64")]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Step {
    /// The whole step.
    pub by: f64,
}
/// A by-value parameter whose fields depend on the target: 8 bytes on both sides, aligned
/// to 8 on the device and to 4 on the host.
#[cfg(not(target_arch = "nvptx64"))]
#[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Step {
    /// The step's low half.
    pub lo: f32,
    /// The step's high half.
    pub hi: f32,
}

/// `out[i] = i` over `Count` elements: the device writes 8-byte elements into memory the
/// host sized for 4-byte ones.
#[kernel]
pub fn count_up(mut out: DeviceSliceMut<Count>) {
    for (i, o) in out.grid_stride() {
        *o = i as Count;
    }
}

/// `out[i] = i` as `u32` on both sides: the same module, typed alike, loads and runs.
#[kernel]
pub fn count_up_u32(mut out: DeviceSliceMut<u32>) {
    for (i, o) in out.grid_stride() {
        *o = i as u32;
    }
}

/// Takes a `Step` whose layout differs between the builds.
#[kernel]
pub fn stride(mut out: DeviceSliceMut<u32>, step: Step) {
    let _ = step;
    for (i, o) in out.grid_stride() {
        *o = i as u32;
    }
}
