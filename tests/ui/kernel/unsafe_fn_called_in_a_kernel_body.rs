// `DeviceSliceMut::write` lets a thread write any element: an `unsafe fn` (no two threads
// may write one element). Called from every thread of a safe kernel without `unsafe`, it
// does not compile.
use sluice_device::kernel;
use sluice_device::slice::DeviceSliceMut;

#[kernel]
pub fn everyone_writes_zero(out: DeviceSliceMut<f32>) {
    out.write(0, 2.0);
}

fn main() {}
