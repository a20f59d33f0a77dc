// A `#[kernel]` body is the body of a safe function, whatever the edition and the crate's
// lints: a raw write past the end of a view needs the author's own `unsafe` block, exactly
// as in any Rust function (the kernel's launches are safe, so its body may not rely on
// anything its caller does not check).
use sluice_device::kernel;
use sluice_device::slice::DeviceSliceMut;

#[kernel]
pub fn oob(out: DeviceSliceMut<f32>) {
    *out.as_mut_ptr().add(out.len() + 1000) = 1.0;
}

fn main() {}
