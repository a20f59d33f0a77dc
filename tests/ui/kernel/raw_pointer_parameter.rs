// A raw pointer carries no length and no access rule: a checked `#[kernel]` asks for a
// slice, and the message names `#[kernel(unchecked)]` for kernels that need the pointer.
use sluice_macros::kernel;

#[kernel]
pub fn fill(out: *mut f32, len: u64, value: f32) {
    let _ = (out, len, value);
}

fn main() {}
