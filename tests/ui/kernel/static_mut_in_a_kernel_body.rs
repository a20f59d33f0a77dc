// Every thread of every block runs a kernel's body at once: a `static mut` is shared by
// all of them, and touching it needs `unsafe`, in a kernel body as anywhere.
use sluice_device::kernel;
use sluice_device::slice::DeviceSliceMut;

static mut COUNT: u32 = 0;

#[kernel]
pub fn count(out: DeviceSliceMut<f32>) {
    let _ = out;
    COUNT += 1;
}

fn main() {}
