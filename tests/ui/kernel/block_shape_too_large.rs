// `#[kernel(block = ..)]` declares the one block shape every launch has, which the host
// checks and the compiler may assume; a shape no GPU can launch (more than 1024 threads, or
// a side of 0) is refused where it is written, and the message says what a shape may be.
use sluice_macros::kernel;

#[kernel(block = (64, 32))]
pub fn total(x: &[f32], scale: f32) {
    let _ = (x, scale);
}

fn main() {}
