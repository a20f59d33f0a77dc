// A kernel's body is safe code: an item in it cannot export a symbol without `unsafe` (here
// the host's `malloc`, which every allocation of the program would then call), even behind a
// `cfg_attr` that only one of the two builds sees, and in edition 2021 too.
use sluice_device::kernel;
use sluice_device::slice::DeviceSliceMut;

#[kernel]
pub fn evil(out: DeviceSliceMut<u8>) {
    let _ = out;
    #[cfg_attr(not(target_arch = "nvptx64"), export_name = "malloc")]
    pub extern "C" fn my_malloc(_n: usize) -> usize {
        64
    }
}

fn main() {}
