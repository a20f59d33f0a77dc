// `block = ..` fixes every block, which bounds it as `max_threads` would (PTX's `.reqntid`
// and `.maxntid` exclude each other: ptxas refuses a module with both); the two together are
// refused where they are written, and the message says which to drop.
use sluice_macros::kernel;

#[kernel(max_threads = 256, block = (16, 16))]
pub fn total(x: &[f32], scale: f32) {
    let _ = (x, scale);
}

fn main() {}
