// A TMA matrix parameter names the tensor map the launch leaves in the kernel's parameter
// memory, where the copies read it: it is taken by value, not as a reference.
use sluice_device::half::bf16;
use sluice_device::kernel;
use sluice_device::slice::DeviceSliceMut;
use sluice_device::tma::TmaMatrix;

#[kernel]
pub fn copies(out: DeviceSliceMut<f32>, a: &TmaMatrix<bf16, 64, 64>) {
    let _ = (out, a);
}

fn main() {}
