// A kernel's parameters are lent for one launch: the body cannot keep them. On the CPU
// backend a kernel is host code with `std`, and a slice stashed in a static would be read
// after the scope freed its memory. The body's elided lifetimes are its own, so this does
// not compile.
use sluice_device::kernel;
use sluice_device::slice::DeviceSliceMut;

pub static STASH: std::sync::Mutex<Option<&'static [f32]>> = std::sync::Mutex::new(None);

#[kernel]
pub fn keep(mut out: DeviceSliceMut<f32>, input: &[f32]) {
    *STASH.lock().unwrap() = Some(input);
    for (i, o) in out.grid_stride() {
        *o = input[i];
    }
}

fn main() {}
