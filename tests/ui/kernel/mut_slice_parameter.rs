// A kernel cannot take `&mut [T]`: every thread of the grid would hold a mutable reference
// to the whole slice at once. `#[kernel]` refuses it and names the kernel, the parameter
// and the fix (`DeviceSliceMut<T>`).
use sluice_macros::kernel;

#[kernel]
pub fn scale(out: &mut [f32], a: f32) {
    let _ = (out, a);
}

fn main() {}
