// `dims = 1` promises 1-D blocks `(m, 1, 1)`; a `block = ..` of two or three dimensions
// beside it contradicts it, and the message says which to write.
use sluice_macros::kernel;

#[kernel(dims = 1, block = (32, 8))]
pub fn total(x: &[f32], scale: f32) {
    let _ = (x, scale);
}

fn main() {}
