// A kernel's parameters must fit CUDA's parameter space (4352 bytes): a larger value runs on
// the CPU backend but never assembles for the GPU, so both builds refuse it.
use sluice_device::kernel;
use sluice_device::slice::DeviceSliceMut;

#[kernel]
pub fn table_lookup(mut out: DeviceSliceMut<u32>, table: [u32; 2048]) {
    for (i, o) in out.grid_stride() {
        *o = table[i % 2048];
    }
}

fn main() {}
