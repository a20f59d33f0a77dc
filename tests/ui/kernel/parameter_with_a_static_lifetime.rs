// A kernel parameter cannot name a lifetime: with `'static` the body could send the view
// to a thread that keeps writing after the launch. `#[kernel]` refuses it and says why.
use sluice_device::kernel;
use sluice_device::slice::DeviceSliceMut;

#[kernel]
pub fn forever(out: DeviceSliceMut<'static, f32>) {
    let _ = out;
}

fn main() {}
