// A `#[kernel]` is launched safely, so its body cannot have preconditions: an `unsafe fn`
// (whose body would be an unsafe context in edition 2021) is refused, with the two ways on.
use sluice_device::kernel;
use sluice_device::slice::DeviceSliceMut;

#[kernel]
pub unsafe fn trusting(out: DeviceSliceMut<f32>) {
    let _ = out;
}

fn main() {}
