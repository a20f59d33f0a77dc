// A kernel's `&[T]` parameter is read by other lanes at the same time (an upload awaited
// by many lanes): writing through it is not possible in a kernel body without `unsafe`,
// and with `unsafe` it is the author's broken promise, not sluice's.
use sluice_device::kernel;
use sluice_device::slice::DeviceSliceMut;

#[kernel]
pub fn scribble(out: DeviceSliceMut<f32>, shared: &[f32]) {
    let _ = out;
    *(shared.as_ptr() as *mut f32) = 0.0;
}

fn main() {}
