// A warp shuffle whose mask names lanes that do not all take part is undefined in PTX:
// the `*.sync` warp operations are `unsafe fn`s, and a safe kernel body must say `unsafe`.
use sluice_device::kernel;
use sluice_device::slice::DeviceSliceMut;
use sluice_device::warp;

#[kernel]
pub fn gossip(mut out: DeviceSliceMut<f32>, mask: u32) {
    if let Some(o) = out.for_thread() {
        *o = warp::shfl_xor(mask, *o, 1);
    }
}

fn main() {}
